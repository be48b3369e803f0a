/*
 * paralab/mlp.h — the multilayer perceptron the parallelism labs train:
 * linear layers with an activation between them and softmax cross-entropy
 * at the end, with a forward and a backward written out layer by layer.
 *
 *   layer l (0 <= l < L):  z[l] = a[l] · W[l] + b[l]      W[l]: [in_l, out_l]
 *                          a[l+1] = act(z[l])   (l < L-1; z[L-1] are the logits)
 *   backward, l = L-1 .. 0: dz[l] = dlogits (l = L-1) or da[l+1] * act'(z[l])
 *                          dW[l] = a[l]ᵀ · dz[l],  db[l] = sum over rows of dz[l]
 *                          da[l] = dz[l] · W[l]ᵀ   (l > 0)
 *
 * All parameters sit in one contiguous device buffer (W[0], b[0], W[1],
 * b[1], ...) and all gradients in another of the same layout, so data
 * parallelism all-reduces one buffer (or slices of it, as buckets) and ZeRO
 * can shard it. Initialisation is PyTorch's nn.Linear default (W and b
 * uniform in ±1/sqrt(in)), drawn on the host from the seed alone: the same
 * on any device and any number of devices.
 *
 * The loss of a batch is the sum of its per-sample losses times `scale`;
 * training uses scale = 1 / (global batch size), so the gradient is the
 * mean's and the gradients of shards add up to the whole batch's. A mean
 * loss over many batches is their summed losses over the number of samples
 * (never a mean of means).
 *
 * Errors: functions return the first failing CUDA call's error, or
 * cudaErrorInvalidValue for a bad configuration or a batch larger than
 * max_batch.
 */
#ifndef PARALAB_MLP_H
#define PARALAB_MLP_H

#include <cuda_runtime.h>

#include "paralab/tensor.h"

#define PL_MLP_MAX_LAYERS 8

typedef enum { PL_ACT_GELU, PL_ACT_RELU } pl_activation;

typedef struct pl_mlp_config {
    int layers;                       /* linear layers, 1..PL_MLP_MAX_LAYERS */
    int width[PL_MLP_MAX_LAYERS + 1]; /* width[0]: inputs; width[layers]: classes */
    pl_activation act;                /* between layers */
} pl_mlp_config;

/* 64 -> 128 -> 128 -> 10 with GELU: the digits model. */
pl_mlp_config pl_mlp_default(void);

typedef struct pl_mlp {
    pl_mlp_config cfg;
    int max_batch;
    long nparams;
    long w_off[PL_MLP_MAX_LAYERS], b_off[PL_MLP_MAX_LAYERS]; /* offsets in params, grads */
    pl_tensor params, grads;                                 /* 1 x nparams each */
    pl_tensor opt_m, opt_v; /* optimizer state: momentum (SGD) or moments (AdamW) */
    int step;               /* optimizer steps taken */
    /* for max_batch rows: z[l] [B, out_l]; act[l] [B, out_l] = act(z[l]) (l < L-1) */
    pl_tensor z[PL_MLP_MAX_LAYERS], act[PL_MLP_MAX_LAYERS];
    pl_tensor dz, da;        /* [B, widest]: the gradient flowing back */
    pl_tensor probs, losses; /* [B, classes], [B] */
    float *loss_sum;         /* device: one float, sum of the last batch's losses */
    int *correct;            /* device: rows predicted right since pl_mlp_reset_correct */
} pl_mlp;

/* Allocates on the current device and initialises from seed. */
cudaError_t pl_mlp_create(pl_mlp *m, const pl_mlp_config *cfg, int max_batch,
                          unsigned long long seed);
void pl_mlp_destroy(pl_mlp *m);
/* The initial parameters for seed, on the host (nparams floats): what
 * pl_mlp_create copies to the device. */
void pl_mlp_init_params(const pl_mlp *m, unsigned long long seed, float *host);

/* Logits of a batch x[B, inputs] (device) into z[L-1]. */
cudaError_t pl_mlp_forward(pl_mlp *m, const float *x, int B, cudaStream_t stream);
/* After forward: probs, per-sample losses, *loss_sum = their sum, the rows
 * predicted right added to *correct, and dz = the gradient of
 * scale * sum(losses) with respect to the logits. labels: device, B ints. */
cudaError_t pl_mlp_loss(pl_mlp *m, const int *labels, int B, float scale, cudaStream_t stream);
/* After loss: the parameter gradients into grads (+= with accumulate).
 * It consumes the logits' gradient that loss left in dz (dz then carries
 * the gradient back through the layers): call loss again before another
 * backward. */
cudaError_t pl_mlp_backward(pl_mlp *m, const float *x, int B, int accumulate, cudaStream_t stream);
/* One layer of it, for l = layers-1 down to 0 in turn: layer l's
 * gradients (grads at w_off[l] .. b_off[l] + width[l+1]) are final when it
 * returns, so a data-parallel rank can start reducing them while the
 * layers below run (gradient buckets). */
cudaError_t pl_mlp_backward_layer(pl_mlp *m, const float *x, int B, int l, int accumulate,
                                  cudaStream_t stream);

/* One optimizer step on params from grads. */
cudaError_t pl_mlp_sgd(pl_mlp *m, float lr, float momentum, float weight_decay,
                       cudaStream_t stream);
cudaError_t pl_mlp_adamw(pl_mlp *m, float lr, float beta1, float beta2, float eps,
                         float weight_decay, cudaStream_t stream);

cudaError_t pl_mlp_reset_correct(pl_mlp *m, cudaStream_t stream);

#endif
