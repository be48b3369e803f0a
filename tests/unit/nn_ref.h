/*
 * nn_ref.h — plain C references for the kernels of paralab/nn.h, on the
 * host, accumulating in double. The kernel tests compare every element of
 * every kernel with these; the model tests use them for a whole step.
 */
#ifndef TEST_NN_REF_H
#define TEST_NN_REF_H

#include "paralab/nn.h"

/* C[M,N] (=|+=) op(A)·op(B), shapes as pl_k_matmul; also returns, in
 * mag[M,N] (if not NULL), the sum of |a·b| over k: the scale of the
 * rounding error a float accumulation may make. */
void ref_matmul(float *C, double *mag, const float *A, const float *B, int M, int N, int K,
                pl_mm_form form, int accumulate);
void ref_bias_add(float *Y, const float *b, int M, int N);
void ref_bias_grad(float *db, const float *dY, int M, int N, int accumulate);
double ref_gelu(double x);
double ref_gelu_grad(double x);
void ref_softmax_xent(float *probs, float *losses, const float *logits, const int *labels, int M,
                      int C);
/* LayerNorm over the rows of x[rows,h], in double, eps = 1e-5 (as
 * pl_k_layernorm): mean, rstd (rows each) and y. The backward from dy and
 * the forward's x, mean, rstd and gamma: dx, and dgamma, dbeta (+= with
 * accumulate). */
void ref_layernorm(float *y, float *mean, float *rstd, const float *x, const float *gamma,
                   const float *beta, int rows, int h);
void ref_layernorm_backward(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x,
                            const float *mean, const float *rstd, const float *gamma, int rows,
                            int h, int accumulate);
void ref_sgd(float *w, float *v, const float *g, long n, float lr, float mu, float wd);
void ref_adamw(float *w, float *m, float *v, const float *g, long n, float lr, float b1, float b2,
               float eps, float wd, int t);
int ref_count_correct(const float *logits, const int *labels, int M, int C);

/* Deterministic test data: xorshift64*, uniform in [lo, hi). */
typedef struct {
    unsigned long long s;
} ref_rng;
double ref_uniform(ref_rng *r, double lo, double hi);
void ref_fill(ref_rng *r, float *x, long n, double lo, double hi);

#endif
