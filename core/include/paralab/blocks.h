/*
 * paralab/blocks.h — the block model Labs 08-11 train (core/model/blocks.c):
 * residual MLP blocks in the shape of a transformer's feed-forward half,
 * between an input layer and a classifier,
 *
 *   input:    x = X · W0 + b0                    X: [B, inputs], W0: [inputs, h]
 *   block j:  x = x + W2 · GELU(W1 · LN(x) + b1) + b2     (row-vector form:
 *             x + GELU(LN(x) · W1 + b1) · W2 + b2), W1: [h, f], W2: [f, h]
 *   head:     logits = LNf(x) · Wc + bc          Wc: [h, classes]
 *   loss:     softmax cross-entropy of the logits, summed over the rows
 *             times `scale` (1 / the global batch: the mean's gradient)
 *
 * with LN a LayerNorm (gain and bias per unit, eps 1e-5: paralab/nn.h), f
 * = 4h the feed-forward width (the transformer's, Vaswani et al. 2017,
 * section 3.3), GELU in its tanh form. The sources of the parts:
 * Megatron-LM's ParallelMLP (Shoeybi et al. 2019, section 3), the pre-LN
 * residual of GPT-2 (Radford et al. 2019, section 2.3).
 *
 * A part: what one rank runs and holds. Blocks [first, last) of the model,
 * with the input layer (input = 1, on the first stage of a pipeline) and
 * the head (head = 1, on the last), each block sharded over `tp` ranks as
 * Megatron does (paralab/tp.h): W1 and b1 column-parallel (rank i: the
 * columns [i f/t, (i+1) f/t)), W2 row-parallel (its rows [i f/t, (i+1)
 * f/t)); LayerNorm, b2, the input layer and LNf replicated; the classifier
 * column-parallel over the classes rounded up to a multiple of t (rank i:
 * classes [i Cp/t, (i+1) Cp/t); the padding's weights are zero and stay
 * zero, and never change a loss: vocabulary-parallel cross-entropy,
 * paralab/nn.h). The whole model is the part {0, L, input, head, tp 1}.
 *
 * A part's parameters are one contiguous buffer (and its gradients and
 * AdamW moments three more of the same layout), in the order they run:
 *
 *   [input: W0 [inputs, h], b0 [h]]
 *   [block j: ln_g [h], ln_b [h], b2 [h]  | W1 [h, f/t], b1 [f/t], W2 [f/t, h]]  j = first..last-1
 *   [head:    lnf_g [h], lnf_b [h]        | Wc [h, Cp/t], bc [Cp/t]]
 *
 * (replicated | sharded), so a bucket of data parallelism, a ZeRO shard, a
 * stage's blocks and the gradients TP must sum (the replicated ones, under
 * sequence parallelism) are each one range of it.
 *
 * Initialisation (pl_blocks_init): the whole model drawn on the host from
 * the seed alone, tensor by tensor in the order above, as PyTorch's
 * defaults: a linear layer's W and b uniform in ±1/sqrt(its inputs)
 * (nn.Linear), a LayerNorm's gain 1 and bias 0 (nn.LayerNorm); a part
 * takes its slice of it, so the gathered weights are the same bits for
 * every t and every split into stages (torchtitan docs/debugging.md;
 * picotron).
 *
 * Errors: functions return 0 / cudaSuccess, or -1 / the first failing
 * call's error, with a message in err or in tp->error that names the bad
 * value and what is allowed.
 */
#ifndef PARALAB_BLOCKS_H
#define PARALAB_BLOCKS_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "paralab/tensor.h"
#include "paralab/tp.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PL_BLOCKS_MAX 64 /* blocks in a model */

typedef struct pl_blocks_config {
    int inputs;  /* features of a sample (64 for the digits) */
    int hidden;  /* h, the width of the residual stream */
    int ffn;     /* f, the feed-forward width: 4h */
    int layers;  /* L, the blocks */
    int classes; /* 10 for the digits */
} pl_blocks_config;

/* The digits' model: 64 inputs, h = 64, f = 256, L = 2 blocks, 10
 * classes; 71,370 parameters. AdamW at lr 5e-3 and a batch of 64 reach
 * >= 95 % test accuracy in 20 epochs (Lab 08's check trains it on 1, 2, 4
 * and 8 TP ranks: labs/08_tensor_parallel/check.c). */
pl_blocks_config pl_blocks_default(void);
/* The same with hidden h (f = 4h) and L blocks. */
pl_blocks_config pl_blocks_config_make(int hidden, int layers);

/* 0 when t ranks can share the model's blocks (t divides h and f; 1..64);
 * else -1 and a message naming t and listing the degrees that work, e.g.
 * "--devices 3: the hidden width 64 does not divide by 3; tensor
 * parallelism over 1, 2, 4, 8, 16, 32 or 64 ranks can split it". Also
 * checks the config itself (1 <= h, inputs, classes <= 4096; 1 <= L <=
 * PL_BLOCKS_MAX). `what` names t in the message ("--devices"). */
int pl_blocks_check(const pl_blocks_config *c, int t, const char *what, char *err, size_t cap);

/* What one rank runs and holds. */
typedef struct pl_blocks_part {
    int first, last;   /* blocks [first, last) */
    int input, head;   /* holds the input layer / the head */
    int tp, tp_rank;   /* its shard: rank tp_rank of tp */
} pl_blocks_part;

/* The whole model, unsharded. */
pl_blocks_part pl_blocks_whole(const pl_blocks_config *c);

/* Where each tensor of a block lies in its part's buffer (floats from the
 * start). begin..end is the block's range; begin..shard the replicated
 * ln_g, ln_b, b2. */
typedef struct pl_block_offsets {
    long begin, ln_g, ln_b, b2, shard, w1, b1, w2, end;
} pl_block_offsets;

typedef struct pl_blocks_layout {
    pl_blocks_config cfg;
    pl_blocks_part part;
    int ffn_local;      /* f / t */
    int classes_padded; /* Cp: classes rounded up to a multiple of t */
    int classes_local;  /* Cp / t: this rank's logits */
    int class0;         /* its first class: tp_rank * Cp / t */
    int classes_valid;  /* of its classes, the real ones (0..classes_local) */
    long in_w, in_b, in_end;               /* the input layer (-1 without it) */
    pl_block_offsets block[PL_BLOCKS_MAX]; /* for first <= j < last */
    long head_begin, lnf_g, lnf_b, head_shard, wc, bc, head_end; /* -1 without the head */
    long nparams; /* floats in the buffer */
} pl_blocks_layout;

/* The layout of a part (checked: pl_blocks_check, 0 <= first < last <= L
 * unless an input- or head-only part has first == last, 0 <= tp_rank <
 * tp). 0, or -1 with the reason. */
int pl_blocks_layout_make(pl_blocks_layout *l, const pl_blocks_config *c, pl_blocks_part part,
                          char *err, size_t cap);
/* The whole model's parameter count. */
long pl_blocks_count(const pl_blocks_config *c);

/* The whole model's initial parameters for seed (pl_blocks_count floats,
 * the whole part's layout). */
void pl_blocks_init_whole(const pl_blocks_config *c, unsigned long long seed, float *whole);
/* A part's slice of the whole model's parameters (part: l->nparams floats;
 * the classifier's padding zero). */
void pl_blocks_slice(const pl_blocks_layout *l, const float *whole, float *part);
/* The inverse for the values a part holds: writes them into their places
 * in whole (which it leaves alone elsewhere). Gathering every rank's part
 * this way rebuilds the whole model. */
void pl_blocks_unslice(const pl_blocks_layout *l, const float *part, float *whole);
/* FNV-1a of n floats' bytes: the hash a lab prints. */
unsigned pl_blocks_hash(const float *x, long n);

/* What a forward keeps for its backward: one micro-batch in flight on one
 * part (a pipeline keeps several). For `rows` rows (local_rows =
 * rows / t under sequence parallelism). */
typedef struct pl_blocks_acts {
    int rows, local_rows;
    float *input;                  /* the part's input: X [local, inputs] or x [local, h] */
    float *x[PL_BLOCKS_MAX + 1];   /* the residual stream entering block j (x[last]: the head's) */
    float *ln[PL_BLOCKS_MAX + 1];  /* LN(x) [local, h] (ln[last]: LNf) */
    float *mean[PL_BLOCKS_MAX + 1], *rstd[PL_BLOCKS_MAX + 1]; /* [local] */
    float *xfull[PL_BLOCKS_MAX + 1]; /* f(LN(x)) [rows, h]: the column-parallel input */
    float *z1[PL_BLOCKS_MAX], *a[PL_BLOCKS_MAX]; /* W1's output, GELU of it [rows, f/t] */
    float *logits;                 /* [rows, Cp/t] */
    float *rowmax, *sumexp, *target, *losses; /* [rows] */
    int *pred;                     /* [rows] */
} pl_blocks_acts;

/* A part on the current device: parameters, gradients, AdamW moments,
 * scratch, and one set of activations (acts) for micro-batches of up to
 * max_rows rows. */
typedef struct pl_blocks {
    pl_blocks_layout lay;
    int max_rows;
    pl_tensor params, grads, opt_m, opt_v; /* 1 x nparams each */
    int step;                              /* optimizer steps taken */
    pl_blocks_acts acts;
    float *d_x, *d_ln, *d_full, *d_ffn, *d_out; /* scratch for backward */
    float *loss_sum; /* device: one float, the sum of the last loss's per-row losses */
    int *correct;    /* device: rows predicted right since pl_blocks_reset_correct */
} pl_blocks;

/* Allocates a part for micro-batches of up to max_rows rows, local_rows of
 * them on this rank outside the parallel region (max_rows / t under
 * sequence parallelism, else max_rows), and loads its slice of the initial
 * parameters for seed. */
cudaError_t pl_blocks_create(pl_blocks *m, const pl_blocks_layout *lay, int max_rows,
                             int local_rows, unsigned long long seed);
void pl_blocks_destroy(pl_blocks *m);
/* Another set of activations for a part (a pipeline's micro-batches in
 * flight); freed by pl_blocks_acts_free. */
cudaError_t pl_blocks_acts_alloc(pl_blocks_acts *a, const pl_blocks_layout *lay, int max_rows,
                                 int local_rows);
void pl_blocks_acts_free(pl_blocks_acts *a);

/* The pieces, for a lab that shows them one by one. Every function runs on
 * tp->stream for tp->rows rows with the linear layers of ops (NULL: the
 * reference, pl_tp_reference_ops), and returns 0 or an error in tp->error.
 *
 * The input layer: acts->x[first] = X · W0 + b0, X [local_rows, inputs]. */
int pl_blocks_input_forward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const float *X);
/* Block j: acts->x[j + 1] = the block of acts->x[j]. */
int pl_blocks_block_forward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp,
                            const pl_tp_linear_ops *ops, int j);
/* The head: LNf, f, the column-parallel classifier: acts->logits. */
int pl_blocks_head_forward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const pl_tp_linear_ops *ops);
/* The vocabulary-parallel loss of the logits for labels [rows] (device;
 * the same on every TP rank): acts->losses, *loss_sum (their sum), the
 * rows predicted right added to *correct, and d_out = the gradient of
 * scale * sum(losses) with respect to this rank's logits. Three
 * all-reduces over the TP group (max, target logit, sum of exp) and one
 * for the predictions. */
int pl_blocks_loss(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const int *labels, float scale);
/* Backward of the head from the loss's gradient: d_x = the gradient of
 * the residual stream entering it [local_rows, h]. */
int pl_blocks_head_backward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp,
                            const pl_tp_linear_ops *ops);
/* Backward of block j: d_x (the gradient of its output) becomes the
 * gradient of its input; its parameters' gradients are written (added with
 * tp->accumulate). */
int pl_blocks_block_backward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp,
                             const pl_tp_linear_ops *ops, int j);
/* Backward of the input layer from d_x. */
int pl_blocks_input_backward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const float *X);

/* The whole part, in that order. forward: X is the samples (the part has
 * the input layer) or the residual stream [local_rows, h] (it does not);
 * without the head, out receives the residual stream leaving the last
 * block ([local_rows, h], may be NULL). backward: without the head, dout is
 * the gradient of out; without the input layer, dx receives the gradient
 * of X (may be NULL). */
int pl_blocks_forward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const pl_tp_linear_ops *ops,
                      const float *X, float *out);
int pl_blocks_backward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const pl_tp_linear_ops *ops,
                       const float *X, const float *dout, float *dx);

/* Once per optimizer step, after every micro-batch's backward: under
 * sequence parallelism, the gradients of the replicated parameters (LN's,
 * b2, the input layer, LNf) summed over the TP group — each rank saw only
 * its rows (Megatron's finalize_model_grads). Nothing otherwise: under
 * plain TP those gradients are already the same bits on every rank. One
 * all-reduce per block and one each for the input layer and the head. */
int pl_blocks_finish_grads(pl_blocks *m, pl_tp *tp);

/* AdamW (beta 0.9, 0.999, eps 1e-8, weight decay 0.01) on the part's
 * parameters from its gradients; the classifier's padding stays zero. */
cudaError_t pl_blocks_adamw(pl_blocks *m, float lr, cudaStream_t stream);
cudaError_t pl_blocks_reset_correct(pl_blocks *m, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
