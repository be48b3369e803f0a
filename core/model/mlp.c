/* mlp.c — see paralab/mlp.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/mlp.h"
#include "paralab/nn.h"

#define TRY(call)                                                                                  \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) return e_;                                                          \
    } while (0)

pl_mlp_config pl_mlp_default(void)
{
    pl_mlp_config c;
    memset(&c, 0, sizeof c);
    c.layers = 3;
    c.width[0] = 64;
    c.width[1] = 128;
    c.width[2] = 128;
    c.width[3] = 10;
    c.act = PL_ACT_GELU;
    return c;
}

/* splitmix64: the parameters depend on the seed and their index only. */
static unsigned long long splitmix64(unsigned long long *s)
{
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void pl_mlp_init_params(const pl_mlp *m, unsigned long long seed, float *host)
{
    unsigned long long s = seed;
    for (int l = 0; l < m->cfg.layers; l++) {
        int in = m->cfg.width[l], out = m->cfg.width[l + 1];
        double bound = 1.0 / sqrt((double)in);
        long n = (long)in * out + out; /* W[l] then b[l]: contiguous */
        for (long i = 0; i < n; i++) {
            double u = (double)(splitmix64(&s) >> 11) / 9007199254740992.0; /* [0, 1) */
            host[m->w_off[l] + i] = (float)((2.0 * u - 1.0) * bound);
        }
    }
}

static int config_ok(const pl_mlp_config *c)
{
    if (c->layers < 1 || c->layers > PL_MLP_MAX_LAYERS) return 0;
    if (c->act != PL_ACT_GELU && c->act != PL_ACT_RELU) return 0;
    for (int l = 0; l <= c->layers; l++)
        if (c->width[l] < 1 || c->width[l] > 65536) return 0;
    return 1;
}

cudaError_t pl_mlp_create(pl_mlp *m, const pl_mlp_config *cfg, int max_batch,
                          unsigned long long seed)
{
    memset(m, 0, sizeof *m);
    if (!cfg || !config_ok(cfg) || max_batch < 1) return cudaErrorInvalidValue;
    m->cfg = *cfg;
    m->max_batch = max_batch;
    int L = cfg->layers, widest = 0;
    for (int l = 0; l < L; l++) {
        m->w_off[l] = m->nparams;
        m->nparams += (long)cfg->width[l] * cfg->width[l + 1];
        m->b_off[l] = m->nparams;
        m->nparams += cfg->width[l + 1];
    }
    for (int l = 0; l <= L; l++) widest = cfg->width[l] > widest ? cfg->width[l] : widest;
    cudaError_t e = pl_tensor_alloc(&m->params, 1, (int)m->nparams);
    if (!e) e = pl_tensor_alloc(&m->grads, 1, (int)m->nparams);
    if (!e) e = pl_tensor_alloc(&m->opt_m, 1, (int)m->nparams);
    if (!e) e = pl_tensor_alloc(&m->opt_v, 1, (int)m->nparams);
    for (int l = 0; !e && l < L; l++) {
        e = pl_tensor_alloc(&m->z[l], max_batch, cfg->width[l + 1]);
        if (!e && l < L - 1) e = pl_tensor_alloc(&m->act[l], max_batch, cfg->width[l + 1]);
    }
    if (!e) e = pl_tensor_alloc(&m->dz, max_batch, widest);
    if (!e) e = pl_tensor_alloc(&m->da, max_batch, widest);
    if (!e) e = pl_tensor_alloc(&m->probs, max_batch, cfg->width[L]);
    if (!e) e = pl_tensor_alloc(&m->losses, 1, max_batch);
    if (!e) e = cudaMalloc((void **)&m->loss_sum, sizeof(float));
    if (!e) e = cudaMalloc((void **)&m->correct, sizeof(int));
    if (!e) e = cudaMemset(m->correct, 0, sizeof(int));
    if (!e) {
        float *host = malloc((size_t)m->nparams * sizeof *host);
        if (!host) e = cudaErrorMemoryAllocation;
        if (host) {
            pl_mlp_init_params(m, seed, host);
            e = pl_tensor_from_host(&m->params, host, 0);
            if (!e) e = cudaStreamSynchronize(0);
            free(host);
        }
    }
    if (e) pl_mlp_destroy(m);
    return e;
}

void pl_mlp_destroy(pl_mlp *m)
{
    pl_tensor_free(&m->params);
    pl_tensor_free(&m->grads);
    pl_tensor_free(&m->opt_m);
    pl_tensor_free(&m->opt_v);
    for (int l = 0; l < PL_MLP_MAX_LAYERS; l++) {
        pl_tensor_free(&m->z[l]);
        pl_tensor_free(&m->act[l]);
    }
    pl_tensor_free(&m->dz);
    pl_tensor_free(&m->da);
    pl_tensor_free(&m->probs);
    pl_tensor_free(&m->losses);
    cudaFree(m->loss_sum);
    cudaFree(m->correct);
    memset(m, 0, sizeof *m);
}

static float *W(pl_mlp *m, int l) { return m->params.data + m->w_off[l]; }
static float *bias(pl_mlp *m, int l) { return m->params.data + m->b_off[l]; }

cudaError_t pl_mlp_forward(pl_mlp *m, const float *x, int B, cudaStream_t s)
{
    if (B < 1 || B > m->max_batch || !x) return cudaErrorInvalidValue;
    const float *in = x;
    for (int l = 0; l < m->cfg.layers; l++) {
        int k = m->cfg.width[l], n = m->cfg.width[l + 1];
        float *z = m->z[l].data;
        TRY(pl_k_matmul(z, in, W(m, l), B, n, k, PL_NN, 0, s));
        TRY(pl_k_bias_add(z, bias(m, l), B, n, s));
        if (l == m->cfg.layers - 1) break; /* the logits */
        float *a = m->act[l].data;
        long count = (long)B * n;
        TRY(m->cfg.act == PL_ACT_GELU ? pl_k_gelu(a, z, count, s) : pl_k_relu(a, z, count, s));
        in = a;
    }
    return cudaSuccess;
}

cudaError_t pl_mlp_loss(pl_mlp *m, const int *labels, int B, float scale, cudaStream_t s)
{
    if (B < 1 || B > m->max_batch || !labels) return cudaErrorInvalidValue;
    int L = m->cfg.layers, C = m->cfg.width[L];
    const float *logits = m->z[L - 1].data;
    TRY(pl_k_softmax_xent(m->probs.data, m->losses.data, logits, labels, B, C, s));
    TRY(pl_k_sum(m->loss_sum, m->losses.data, B, s));
    TRY(pl_k_count_correct(m->correct, logits, labels, B, C, s));
    return pl_k_softmax_xent_backward(m->dz.data, m->probs.data, labels, B, C, scale, s);
}

cudaError_t pl_mlp_backward_layer(pl_mlp *m, const float *x, int B, int l, int accumulate,
                                  cudaStream_t s)
{
    if (B < 1 || B > m->max_batch || !x || l < 0 || l >= m->cfg.layers)
        return cudaErrorInvalidValue;
    float *dz = m->dz.data, *da = m->da.data;
    int k = m->cfg.width[l], n = m->cfg.width[l + 1];
    const float *in = l == 0 ? x : m->act[l - 1].data;
    /* dz holds this layer's output gradient here */
    TRY(pl_k_matmul(m->grads.data + m->w_off[l], in, dz, k, n, B, PL_TN, accumulate, s));
    TRY(pl_k_bias_grad(m->grads.data + m->b_off[l], dz, B, n, accumulate, s));
    if (l == 0) return cudaSuccess;
    TRY(pl_k_matmul(da, dz, W(m, l), B, k, n, PL_NT, 0, s)); /* da[l] = dz · Wᵀ */
    /* through the activation: dz of layer l-1 */
    long count = (long)B * k;
    const float *zprev = m->z[l - 1].data;
    return m->cfg.act == PL_ACT_GELU ? pl_k_gelu_backward(dz, da, zprev, count, s)
                                     : pl_k_relu_backward(dz, da, zprev, count, s);
}

cudaError_t pl_mlp_backward(pl_mlp *m, const float *x, int B, int accumulate, cudaStream_t s)
{
    for (int l = m->cfg.layers - 1; l >= 0; l--)
        TRY(pl_mlp_backward_layer(m, x, B, l, accumulate, s));
    return cudaSuccess;
}

cudaError_t pl_mlp_sgd(pl_mlp *m, float lr, float momentum, float weight_decay, cudaStream_t s)
{
    m->step++;
    return pl_k_sgd(m->params.data, m->opt_m.data, m->grads.data, m->nparams, lr, momentum,
                    weight_decay, s);
}

cudaError_t pl_mlp_adamw(pl_mlp *m, float lr, float beta1, float beta2, float eps,
                         float weight_decay, cudaStream_t s)
{
    m->step++;
    return pl_k_adamw(m->params.data, m->opt_m.data, m->opt_v.data, m->grads.data, m->nparams, lr,
                      beta1, beta2, eps, weight_decay, m->step, s);
}

cudaError_t pl_mlp_reset_correct(pl_mlp *m, cudaStream_t s)
{
    return cudaMemsetAsync(m->correct, 0, sizeof(int), s);
}
