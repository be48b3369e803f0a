/*
 * train_bench.c — paralab-bench train: the digits MLP's training step
 * (forward, loss, backward, AdamW; batch 64) on one device, in samples per
 * second, against the same step in plain C on this CPU (float loops in
 * cache-friendly order: the practical CPU limit for this work), measured in
 * the same run; then the tiled matmul kernel against a plain C triple loop
 * for 256x256x256. Goal: one epoch (1,438 samples) on one simulated device
 * in under 2 s. The data is random: the time does not depend on it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "bench.h"
#include "paralab/cuda_check.h"
#include "paralab/clock.h"
#include "paralab/data.h"
#include "paralab/mlp.h"
#include "paralab/nn.h"

enum { BATCH = 64, EPOCH = 1438 };

static float frand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / 16777216.0f;
}

/* ---- the same step in plain C ------------------------------------------------------ */

typedef struct {
    pl_mlp_config cfg;
    long nparams, w_off[PL_MLP_MAX_LAYERS], b_off[PL_MLP_MAX_LAYERS];
    float *p, *g, *m, *v, *z[PL_MLP_MAX_LAYERS], *a[PL_MLP_MAX_LAYERS], *dz, *da;
    int step;
} cpu_mlp;

static void cpu_init(cpu_mlp *c, const pl_mlp *ref)
{
    memset(c, 0, sizeof *c);
    c->cfg = ref->cfg;
    c->nparams = ref->nparams;
    memcpy(c->w_off, ref->w_off, sizeof c->w_off);
    memcpy(c->b_off, ref->b_off, sizeof c->b_off);
    c->p = malloc((size_t)c->nparams * sizeof(float));
    c->g = calloc((size_t)c->nparams, sizeof(float));
    c->m = calloc((size_t)c->nparams, sizeof(float));
    c->v = calloc((size_t)c->nparams, sizeof(float));
    pl_mlp_init_params(ref, 0, c->p);
    for (int l = 0; l < c->cfg.layers; l++) {
        c->z[l] = malloc((size_t)BATCH * c->cfg.width[l + 1] * sizeof(float));
        c->a[l] = malloc((size_t)BATCH * c->cfg.width[l + 1] * sizeof(float));
    }
    c->dz = malloc((size_t)BATCH * 128 * sizeof(float) * 2);
    c->da = malloc((size_t)BATCH * 128 * sizeof(float) * 2);
}

static void cpu_free(cpu_mlp *c)
{
    free(c->p);
    free(c->g);
    free(c->m);
    free(c->v);
    for (int l = 0; l < c->cfg.layers; l++) {
        free(c->z[l]);
        free(c->a[l]);
    }
    free(c->dz);
    free(c->da);
}

static float gelu(float x)
{
    return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

static float gelu_grad(float x)
{
    float th = tanhf(0.7978845608f * (x + 0.044715f * x * x * x));
    return 0.5f * (1.0f + th) +
           0.5f * x * (1.0f - th * th) * 0.7978845608f * (1.0f + 3.0f * 0.044715f * x * x);
}

static void cpu_step(cpu_mlp *c, const float *x, const int *y, int B)
{
    int L = c->cfg.layers;
    const float *in = x;
    for (int l = 0; l < L; l++) { /* z = in . W + b, row by row, k outer */
        int K = c->cfg.width[l], N = c->cfg.width[l + 1];
        const float *W = c->p + c->w_off[l], *b = c->p + c->b_off[l];
        for (int r = 0; r < B; r++) {
            float *z = c->z[l] + (long)r * N;
            memcpy(z, b, (size_t)N * sizeof *z);
            for (int k = 0; k < K; k++) {
                float s = in[(long)r * K + k];
                for (int n = 0; n < N; n++) z[n] += s * W[(long)k * N + n];
            }
            if (l < L - 1)
                for (int n = 0; n < N; n++) c->a[l][(long)r * N + n] = gelu(z[n]);
        }
        in = c->a[l];
    }
    int C = c->cfg.width[L];
    for (int r = 0; r < B; r++) { /* softmax + cross-entropy backward */
        const float *z = c->z[L - 1] + (long)r * C;
        float mx = z[0], sum = 0;
        for (int k = 1; k < C; k++) mx = z[k] > mx ? z[k] : mx;
        for (int k = 0; k < C; k++) sum += expf(z[k] - mx);
        for (int k = 0; k < C; k++)
            c->dz[(long)r * C + k] = (expf(z[k] - mx) / sum - (k == y[r])) / (float)B;
    }
    for (int l = L - 1; l >= 0; l--) {
        int K = c->cfg.width[l], N = c->cfg.width[l + 1];
        const float *act = l == 0 ? x : c->a[l - 1], *W = c->p + c->w_off[l];
        float *gW = c->g + c->w_off[l], *gb = c->g + c->b_off[l];
        memset(gW, 0, (size_t)K * N * sizeof *gW);
        memset(gb, 0, (size_t)N * sizeof *gb);
        for (int r = 0; r < B; r++) {
            const float *d = c->dz + (long)r * N;
            for (int k = 0; k < K; k++) {
                float s = act[(long)r * K + k];
                for (int n = 0; n < N; n++) gW[(long)k * N + n] += s * d[n];
            }
            for (int n = 0; n < N; n++) gb[n] += d[n];
        }
        if (l == 0) break;
        for (int r = 0; r < B; r++)
            for (int k = 0; k < K; k++) {
                float s = 0;
                for (int n = 0; n < N; n++) s += c->dz[(long)r * N + n] * W[(long)k * N + n];
                c->da[(long)r * K + k] = s * gelu_grad(c->z[l - 1][(long)r * K + k]);
            }
        float *t = c->dz;
        c->dz = c->da;
        c->da = t;
    }
    c->step++;
    float c1 = 1.0f - powf(0.9f, (float)c->step), c2 = 1.0f - powf(0.999f, (float)c->step);
    for (long i = 0; i < c->nparams; i++) {
        float g = c->g[i];
        c->m[i] = 0.9f * c->m[i] + 0.1f * g;
        c->v[i] = 0.999f * c->v[i] + 0.001f * g * g;
        c->p[i] -= 5e-3f * ((c->m[i] / c1) / (sqrtf(c->v[i] / c2) + 1e-8f) + 0.01f * c->p[i]);
    }
}

/* ---- the benchmark -------------------------------------------------------------------- */

#define CK(call) cudaCheck(call) /* paralab/cuda_check.h: print, exit 1 */

int bench_train(int repeat)
{
    pl_mlp_config cfg = pl_mlp_default();
    pl_mlp m;
    CK(pl_mlp_create(&m, &cfg, BATCH, 0));
    unsigned s = 1;
    float *hx = malloc((size_t)EPOCH * PL_DIGITS_FEATURES * sizeof *hx), *dx;
    int *hy = malloc(EPOCH * sizeof *hy), *dy;
    for (long i = 0; i < (long)EPOCH * PL_DIGITS_FEATURES; i++) hx[i] = frand(&s);
    for (int i = 0; i < EPOCH; i++) hy[i] = (int)(frand(&s) * 10) % 10;
    CK(cudaMalloc((void **)&dx, (size_t)EPOCH * PL_DIGITS_FEATURES * sizeof(float)));
    CK(cudaMalloc((void **)&dy, EPOCH * sizeof(int)));
    CK(cudaMemcpy(dx, hx, (size_t)EPOCH * PL_DIGITS_FEATURES * sizeof(float),
                  cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dy, hy, EPOCH * sizeof(int), cudaMemcpyHostToDevice));
    int nb = pl_batch_count(EPOCH, BATCH);
    double dev_best = 1e30, cpu_best = 1e30;
    for (int rep = 0; rep < repeat; rep++) {
        double t0 = pl_now();
        for (int k = 0; k < nb; k++) {
            int b = pl_batch_size(EPOCH, BATCH, k);
            const float *x = dx + (long)k * BATCH * PL_DIGITS_FEATURES;
            CK(pl_mlp_forward(&m, x, b, 0));
            CK(pl_mlp_loss(&m, dy + (long)k * BATCH, b, 1.0f / (float)b, 0));
            CK(pl_mlp_backward(&m, x, b, 0, 0));
            CK(pl_mlp_adamw(&m, 5e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 0));
            float loss;
            CK(cudaMemcpy(&loss, m.loss_sum, sizeof loss, cudaMemcpyDeviceToHost));
        }
        double t = pl_now() - t0;
        dev_best = t < dev_best ? t : dev_best;
        cpu_mlp c;
        cpu_init(&c, &m);
        t0 = pl_now();
        for (int k = 0; k < nb; k++) {
            int b = pl_batch_size(EPOCH, BATCH, k);
            cpu_step(&c, hx + (long)k * BATCH * PL_DIGITS_FEATURES, hy + (long)k * BATCH, b);
        }
        t = pl_now() - t0;
        cpu_best = t < cpu_best ? t : cpu_best;
        cpu_free(&c);
    }
    int dev = 0;
    cudaGetDevice(&dev);
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, dev);
    printf("paralab-bench train: the digits MLP (%ld parameters), batch %d, AdamW; one epoch = "
           "%d samples; best of %d\n",
           m.nparams, BATCH, EPOCH, repeat);
    printf("  %-34s %10.3f s per epoch %10.0f samples/s\n", prop.name, dev_best, EPOCH / dev_best);
    printf("  %-34s %10.3f s per epoch %10.0f samples/s   (reference, same run)\n",
           "plain C on this CPU", cpu_best, EPOCH / cpu_best);
    printf("  device / plain C: %.2f of the CPU's samples/s\n", cpu_best / dev_best);
    printf("  goal (an epoch in under 2 s): %.2f s: %s\n", dev_best,
           dev_best < 2.0 ? "met" : "not met");

    /* the tiled matmul against a triple loop, 256 x 256 x 256 */
    enum { S = 256 };
    float *A = malloc(S * S * sizeof *A), *B = malloc(S * S * sizeof *B);
    float *C = malloc(S * S * sizeof *C), *R = malloc(S * S * sizeof *R), *dA, *dB, *dC;
    for (int i = 0; i < S * S; i++) {
        A[i] = frand(&s) - 0.5f;
        B[i] = frand(&s) - 0.5f;
    }
    CK(cudaMalloc((void **)&dA, S * S * sizeof(float)));
    CK(cudaMalloc((void **)&dB, S * S * sizeof(float)));
    CK(cudaMalloc((void **)&dC, S * S * sizeof(float)));
    CK(cudaMemcpy(dA, A, S * S * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, B, S * S * sizeof(float), cudaMemcpyHostToDevice));
    double kbest = 1e30, lbest = 1e30;
    for (int rep = 0; rep < repeat; rep++) {
        double t0 = pl_now();
        CK(pl_k_matmul(dC, dA, dB, S, S, S, PL_NN, 0, 0));
        CK(cudaDeviceSynchronize());
        double t = pl_now() - t0;
        kbest = t < kbest ? t : kbest;
        t0 = pl_now();
        for (int i = 0; i < S; i++) /* the textbook i-j-k loop */
            for (int j = 0; j < S; j++) {
                float acc = 0;
                for (int k = 0; k < S; k++) acc += A[i * S + k] * B[k * S + j];
                R[i * S + j] = acc;
            }
        t = pl_now() - t0;
        lbest = t < lbest ? t : lbest;
    }
    CK(cudaMemcpy(C, dC, S * S * sizeof(float), cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int i = 0; i < S * S; i++) worst = fmax(worst, fabs(C[i] - R[i]));
    double flop = 2.0 * S * S * S;
    printf("\n  matmul 256x256x256, tiled kernel: %8.2f ms (%.2f GFLOP/s)\n", kbest * 1e3,
           flop / kbest / 1e9);
    printf("  matmul 256x256x256, C triple loop: %7.2f ms (%.2f GFLOP/s)   (reference, same "
           "run)\n",
           lbest * 1e3, flop / lbest / 1e9);
    printf("  kernel / loop time: %.2f; largest difference %.2g\n", kbest / lbest, worst);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    cudaFree(dx);
    cudaFree(dy);
    free(A);
    free(B);
    free(C);
    free(R);
    free(hx);
    free(hy);
    pl_mlp_destroy(&m);
    return 0;
}
