/*
 * test_nn.c — every kernel of paralab/nn.h against its plain C reference
 * (nn_ref.c, double accumulation), element by element, over shapes that
 * include 1x1, primes and sizes that are not multiples of the tile.
 * Tolerances are stated where they are used.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_ref.h"
#include "paralab/nn.h"
#include "suites.h"

static float *to_dev(const float *h, long n)
{
    float *d = NULL;
    if (cudaMalloc((void **)&d, (size_t)(n > 0 ? n : 1) * sizeof(float))) return NULL;
    if (n > 0) cudaMemcpy(d, h, (size_t)n * sizeof(float), cudaMemcpyHostToDevice);
    return d;
}

static int *to_dev_int(const int *h, long n)
{
    int *d = NULL;
    if (cudaMalloc((void **)&d, (size_t)(n > 0 ? n : 1) * sizeof(int))) return NULL;
    if (n > 0) cudaMemcpy(d, h, (size_t)n * sizeof(int), cudaMemcpyHostToDevice);
    return d;
}

static void to_host(float *h, const float *d, long n)
{
    if (n > 0) cudaMemcpy(h, d, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost);
}

/* Counts the elements of got that differ from want by more than
 * abs + rel * scale[i] (scale NULL: |want[i]|); prints the first. */
static long mismatches(const char *what, const float *got, const float *want, const double *scale,
                       long n, double abs_tol, double rel)
{
    long bad = 0;
    for (long i = 0; i < n; i++) {
        double s = scale ? scale[i] : fabs(want[i]);
        double err = fabs((double)got[i] - want[i]);
        if (!(err <= abs_tol + rel * s)) {
            if (!bad)
                fprintf(stderr, "  %s: [%ld] = %.9g, reference %.9g (tolerance %.3g)\n", what, i,
                        got[i], want[i], abs_tol + rel * s);
            bad++;
        }
    }
    return bad;
}

/* ---- matrix multiply ------------------------------------------------------------------ */

/* One case: every element of C within 1e-6 + 1e-5 * sum_k |a b| of the
 * double reference (a float sum of K products errs by at most about
 * K * 2^-24 of that sum; K <= 300 here). */
static void check_matmul(int M, int N, int K, pl_mm_form form, int accumulate, unsigned seed)
{
    ref_rng rng = {0x9E3779B97F4A7C15ull ^ seed};
    long na = (long)M * K, nb = (long)K * N, nc = (long)M * N;
    float *A = malloc((size_t)(na + 1) * sizeof *A), *B = malloc((size_t)(nb + 1) * sizeof *B);
    float *C = malloc((size_t)(nc + 1) * sizeof *C), *R = malloc((size_t)(nc + 1) * sizeof *R);
    double *mag = malloc((size_t)(nc + 1) * sizeof *mag);
    ref_fill(&rng, A, na, -1, 1);
    ref_fill(&rng, B, nb, -1, 1);
    ref_fill(&rng, C, nc, -1, 1);
    memcpy(R, C, (size_t)nc * sizeof *R);
    float *dA = to_dev(A, na), *dB = to_dev(B, nb), *dC = to_dev(C, nc);
    CU_ASSERT_OK(pl_k_matmul(dC, dA, dB, M, N, K, form, accumulate, 0));
    CU_ASSERT_OK(cudaDeviceSynchronize());
    to_host(C, dC, nc);
    ref_matmul(R, mag, A, B, M, N, K, form, accumulate);
    for (long i = 0; i < nc; i++) mag[i] += accumulate ? fabs(R[i]) : 0;
    char what[96];
    snprintf(what, sizeof what, "matmul %s M=%d N=%d K=%d%s",
             form == PL_NN   ? "A.B"
             : form == PL_NT ? "A.Bt"
                             : "At.B",
             M, N, K, accumulate ? " +=" : "");
    CU_ASSERT_EQUAL(mismatches(what, C, R, mag, nc, 1e-6, 1e-5), 0);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    free(A);
    free(B);
    free(C);
    free(R);
    free(mag);
}

static void test_matmul_shapes(void)
{
    static const int shapes[][3] = {
        {1, 1, 1},    {1, 7, 1},     {7, 1, 13},     {13, 17, 19}, {31, 37, 41},  {64, 64, 16},
        {65, 63, 17}, {64, 128, 64}, {130, 70, 129}, {3, 200, 5},  {97, 10, 300}, {5, 5, 0},
    };
    unsigned seed = 1;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int form = PL_NN; form <= PL_TN; form++)
            for (int acc = 0; acc <= 1; acc++)
                check_matmul(shapes[s][0], shapes[s][1], shapes[s][2], (pl_mm_form)form, acc,
                             seed++);
}

static void test_matmul_random_shapes(void)
{
    ref_rng rng = {12345};
    for (int i = 0; i < 12; i++) {
        int M = 1 + (int)ref_uniform(&rng, 0, 150), N = 1 + (int)ref_uniform(&rng, 0, 150);
        int K = 1 + (int)ref_uniform(&rng, 0, 150);
        check_matmul(M, N, K, (pl_mm_form)(i % 3), i % 2, 100u + (unsigned)i);
    }
}

static void test_bad_arguments(void)
{
    float *d;
    CU_ASSERT_OK(cudaMalloc((void **)&d, 64));
    CU_ASSERT_CUDA(pl_k_matmul(d, d, d, -1, 1, 1, PL_NN, 0, 0), cudaErrorInvalidValue);
    CU_ASSERT_CUDA(pl_k_matmul(d, d, d, 1, 1, 1, (pl_mm_form)3, 0, 0), cudaErrorInvalidValue);
    CU_ASSERT_CUDA(pl_k_matmul(d, NULL, d, 1, 1, 1, PL_NN, 0, 0), cudaErrorInvalidValue);
    CU_ASSERT_OK(pl_k_matmul(NULL, NULL, NULL, 0, 5, 5, PL_NN, 0, 0)); /* nothing to do */
    CU_ASSERT_CUDA(pl_k_gelu(d, NULL, 4, 0), cudaErrorInvalidValue);
    CU_ASSERT_CUDA(pl_k_softmax_xent(d, d, d, NULL, 1, 4, 0), cudaErrorInvalidValue);
    CU_ASSERT_CUDA(pl_k_softmax_xent(d, d, d, (int *)d, 1, 0, 0), cudaErrorInvalidValue);
    CU_ASSERT_CUDA(pl_k_adamw(d, d, d, d, 4, 1e-3f, 0.9f, 0.999f, 1e-8f, 0, 0, 0),
                   cudaErrorInvalidValue); /* t starts at 1 */
    CU_ASSERT_CUDA(pl_k_sum(NULL, d, 4, 0), cudaErrorInvalidValue);
    CU_ASSERT_CUDA(pl_k_fill(d, -1, 0, 0), cudaErrorInvalidValue);
    cudaFree(d);
}

/* ---- element-wise ---------------------------------------------------------------------- */

static const long lengths[] = {1, 17, 4095, 4096, 4097, 100003};
enum { NLEN = sizeof lengths / sizeof *lengths };

/* GELU and ReLU, forward and backward: within 1e-6 + 1e-5 relative of the
 * double formula (tanhf and the float arithmetic). */
static void test_activations(void)
{
    ref_rng rng = {777};
    for (int li = 0; li < NLEN; li++) {
        long n = lengths[li];
        float *x = malloc((size_t)n * sizeof *x), *dy = malloc((size_t)n * sizeof *dy);
        float *got = malloc((size_t)n * sizeof *got), *want = malloc((size_t)n * sizeof *want);
        ref_fill(&rng, x, n, -6, 6);
        ref_fill(&rng, dy, n, -1, 1);
        if (n > 2) x[1] = 0.0f; /* ReLU's edge: the gradient at 0 is 0 */
        float *dx = to_dev(x, n), *ddy = to_dev(dy, n), *dout;
        CU_ASSERT_OK(cudaMalloc((void **)&dout, (size_t)n * sizeof(float)));
        for (int kind = 0; kind < 4; kind++) {
            cudaError_t e = kind == 0   ? pl_k_gelu(dout, dx, n, 0)
                            : kind == 1 ? pl_k_gelu_backward(dout, ddy, dx, n, 0)
                            : kind == 2 ? pl_k_relu(dout, dx, n, 0)
                                        : pl_k_relu_backward(dout, ddy, dx, n, 0);
            CU_ASSERT_OK(e);
            to_host(got, dout, n);
            for (long i = 0; i < n; i++)
                want[i] = kind == 0   ? (float)ref_gelu(x[i])
                          : kind == 1 ? (float)(dy[i] * ref_gelu_grad(x[i]))
                          : kind == 2 ? (x[i] > 0 ? x[i] : 0.0f)
                                      : (x[i] > 0 ? dy[i] : 0.0f);
            static const char *names[] = {"gelu", "gelu_backward", "relu", "relu_backward"};
            CU_ASSERT_EQUAL(mismatches(names[kind], got, want, NULL, n, 1e-6, 1e-5), 0);
        }
        /* in place: y = gelu(y) */
        CU_ASSERT_OK(pl_k_gelu(dx, dx, n, 0));
        to_host(got, dx, n);
        for (long i = 0; i < n; i++) want[i] = (float)ref_gelu(x[i]);
        CU_ASSERT_EQUAL(mismatches("gelu in place", got, want, NULL, n, 1e-6, 1e-5), 0);
        cudaFree(dx);
        cudaFree(ddy);
        cudaFree(dout);
        free(x);
        free(dy);
        free(got);
        free(want);
    }
}

/* Bias add and bias gradient: exact for the add (one float addition);
 * the gradient within 1e-6 + 1e-6 * M of the double sum of |dY|. */
static void test_bias(void)
{
    static const int shapes[][2] = {{1, 1}, {1, 300}, {64, 10}, {67, 129}, {300, 7}};
    ref_rng rng = {4242};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int M = shapes[s][0], N = shapes[s][1];
        long n = (long)M * N;
        float *Y = malloc((size_t)n * sizeof *Y), *b = malloc((size_t)N * sizeof *b);
        float *got = malloc((size_t)n * sizeof *got), *db = malloc((size_t)N * sizeof *db);
        float *dbw = malloc((size_t)N * sizeof *dbw);
        double *scale = malloc((size_t)N * sizeof *scale);
        ref_fill(&rng, Y, n, -1, 1);
        ref_fill(&rng, b, N, -1, 1);
        float *dY = to_dev(Y, n), *dbias = to_dev(b, N), *dgrad = to_dev(b, N);
        CU_ASSERT_OK(pl_k_bias_add(dY, dbias, M, N, 0));
        to_host(got, dY, n);
        ref_bias_add(Y, b, M, N);
        CU_ASSERT_EQUAL(mismatches("bias_add", got, Y, NULL, n, 0, 0), 0);
        for (int acc = 0; acc <= 1; acc++) {
            memcpy(dbw, b, (size_t)N * sizeof *dbw);
            cudaMemcpy(dgrad, b, (size_t)N * sizeof(float), cudaMemcpyHostToDevice);
            CU_ASSERT_OK(pl_k_bias_grad(dgrad, dY, M, N, acc, 0));
            to_host(db, dgrad, N);
            ref_bias_grad(dbw, Y, M, N, acc);
            for (int j = 0; j < N; j++) {
                scale[j] = acc ? fabs(b[j]) : 0;
                for (int m = 0; m < M; m++) scale[j] += fabs(Y[(long)m * N + j]);
            }
            CU_ASSERT_EQUAL(mismatches("bias_grad", db, dbw, scale, N, 1e-6, 1e-6 * M), 0);
        }
        cudaFree(dY);
        cudaFree(dbias);
        cudaFree(dgrad);
        free(Y);
        free(b);
        free(got);
        free(db);
        free(dbw);
        free(scale);
    }
}

/* Softmax + cross-entropy: probabilities within 1e-6 + 1e-5 relative,
 * losses within 1e-5 + 1e-5 relative; a bad label gives NaN; the backward
 * is (p - onehot) * scale exactly as float computes it. */
static void test_softmax_xent(void)
{
    static const int shapes[][2] = {{1, 1}, {1, 10}, {7, 2}, {64, 10}, {300, 33}};
    ref_rng rng = {99};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int M = shapes[s][0], C = shapes[s][1];
        long n = (long)M * C;
        float *z = malloc((size_t)n * sizeof *z), *p = malloc((size_t)n * sizeof *p);
        float *pr = malloc((size_t)n * sizeof *pr), *l = malloc((size_t)M * sizeof *l);
        float *lr = malloc((size_t)M * sizeof *lr), *d = malloc((size_t)n * sizeof *d);
        int *y = malloc((size_t)M * sizeof *y);
        ref_fill(&rng, z, n, -20, 20); /* large logits: the max must be subtracted */
        for (int r = 0; r < M; r++) y[r] = (int)ref_uniform(&rng, 0, C);
        if (M > 3) y[3] = C; /* out of range */
        float *dz = to_dev(z, n), *dp, *dl;
        int *dy = to_dev_int(y, M);
        CU_ASSERT_OK(cudaMalloc((void **)&dp, (size_t)n * sizeof(float)));
        CU_ASSERT_OK(cudaMalloc((void **)&dl, (size_t)M * sizeof(float)));
        CU_ASSERT_OK(pl_k_softmax_xent(dp, dl, dz, dy, M, C, 0));
        to_host(p, dp, n);
        to_host(l, dl, M);
        ref_softmax_xent(pr, lr, z, y, M, C);
        CU_ASSERT_EQUAL(mismatches("softmax probs", p, pr, NULL, n, 1e-6, 1e-5), 0);
        for (int r = 0; r < M; r++) {
            if (M > 3 && r == 3) {
                CU_ASSERT(isnan(l[r]));
                continue;
            }
            CU_ASSERT(fabs(l[r] - lr[r]) <= 1e-5 + 1e-5 * fabs(lr[r]));
        }
        float scale = 1.0f / 64;
        CU_ASSERT_OK(pl_k_softmax_xent_backward(dp, dp, dy, M, C, scale, 0)); /* in place */
        to_host(d, dp, n);
        for (long i = 0; i < n; i++)
            pr[i] = (p[i] - (y[i / C] == (int)(i % C) ? 1.0f : 0.0f)) * scale;
        CU_ASSERT_EQUAL(mismatches("softmax_xent_backward", d, pr, NULL, n, 0, 0), 0);
        cudaFree(dz);
        cudaFree(dp);
        cudaFree(dl);
        cudaFree(dy);
        free(z);
        free(p);
        free(pr);
        free(l);
        free(lr);
        free(d);
        free(y);
    }
}

/* ---- LayerNorm ------------------------------------------------------------------------------ */

/* One shape: every element of y, mean, rstd, dx, dgamma and dbeta against
 * the double reference. Tolerances: mean within 1e-6 (1 + |mean|); rstd
 * within 4e-6 |rstd|; y, dx, dgamma and dbeta within 4e-6 of their scale
 * (for y, 1 + |y|; for dx, rstd (|dy gamma| + mean |dy gamma| + |norm|
 * mean |dy gamma norm|), the size of its three terms; for dgamma and
 * dbeta, the sum over rows of |each term| plus |the value accumulated
 * into|). The errors seen are about 1e-7 of the scale: float sums of up
 * to 300 terms, in a tree or down the rows. const_row >= 0: that row is
 * the constant 2.5 (exact sum and mean), variance 0, so rstd =
 * 1/sqrt(1e-5) and y = beta exactly. dgamma and dbeta start random and
 * accumulate. */
static void check_layernorm(int rows, int h, int const_row, unsigned seed)
{
    ref_rng rng = {0xD1B54A32D192ED03ull ^ seed};
    long n = (long)rows * h;
    size_t fn = (size_t)n * sizeof(float), fh = (size_t)h * sizeof(float);
    size_t fr = (size_t)rows * sizeof(float);
    float *x = malloc(fn), *dy = malloc(fn), *y = malloc(fn), *yr = malloc(fn);
    float *dx = malloc(fn), *dxr = malloc(fn), *gam = malloc(fh), *bet = malloc(fh);
    float *dg = malloc(fh), *dgr = malloc(fh), *db = malloc(fh), *dbr = malloc(fh);
    float *mu = malloc(fr), *mur = malloc(fr), *rs = malloc(fr), *rsr = malloc(fr);
    double *ys = malloc((size_t)n * sizeof(double)), *dxs = malloc((size_t)n * sizeof(double));
    double *dgs = calloc((size_t)h, sizeof(double)), *dbs = calloc((size_t)h, sizeof(double));
    ref_fill(&rng, x, n, -2, 3);
    ref_fill(&rng, dy, n, -1, 1);
    ref_fill(&rng, gam, h, 0.5, 1.5);
    ref_fill(&rng, bet, h, -1, 1);
    ref_fill(&rng, dg, h, -1, 1);
    ref_fill(&rng, db, h, -1, 1);
    if (const_row >= 0)
        for (int i = 0; i < h; i++) x[(long)const_row * h + i] = 2.5f;
    memcpy(dgr, dg, fh);
    memcpy(dbr, db, fh);
    float *d_x = to_dev(x, n), *d_dy = to_dev(dy, n), *d_y = to_dev(y, n), *d_dx = to_dev(dx, n);
    float *d_g = to_dev(gam, h), *d_b = to_dev(bet, h), *d_dg = to_dev(dg, h),
          *d_db = to_dev(db, h);
    float *d_mu = to_dev(mu, rows), *d_rs = to_dev(rs, rows);
    CU_ASSERT_OK(pl_k_layernorm(d_y, d_mu, d_rs, d_x, d_g, d_b, rows, h, 0));
    CU_ASSERT_OK(
        pl_k_layernorm_backward(d_dx, d_dg, d_db, d_dy, d_x, d_mu, d_rs, d_g, rows, h, 1, 0));
    CU_ASSERT_OK(cudaDeviceSynchronize());
    to_host(y, d_y, n);
    to_host(mu, d_mu, rows);
    to_host(rs, d_rs, rows);
    to_host(dx, d_dx, n);
    to_host(dg, d_dg, h);
    to_host(db, d_db, h);
    ref_layernorm(yr, mur, rsr, x, gam, bet, rows, h);
    ref_layernorm_backward(dxr, dgr, dbr, dy, x, mur, rsr, gam, rows, h, 1);
    for (int r = 0; r < rows; r++) {
        double ag = 0, agn = 0;
        for (int i = 0; i < h; i++) {
            long at = (long)r * h + i;
            double nrm = fabs((x[at] - mur[r]) * (double)rsr[r]), g = fabs((double)dy[at] * gam[i]);
            ag += g / h;
            agn += g * nrm / h;
            dgs[i] += fabs(dy[at]) * nrm;
            dbs[i] += fabs(dy[at]);
            ys[at] = 1 + fabs(yr[at]);
        }
        for (int i = 0; i < h; i++) {
            long at = (long)r * h + i;
            double nrm = fabs((x[at] - mur[r]) * (double)rsr[r]);
            dxs[at] = rsr[r] * (fabs((double)dy[at] * gam[i]) + ag + nrm * agn);
        }
    }
    for (int i = 0; i < h; i++) {
        dgs[i] += fabs(dgr[i]);
        dbs[i] += fabs(dbr[i]);
    }
    char what[80];
#define LN_CHECK(name, got, want, scale, cnt, abs_tol, rel)                                        \
    do {                                                                                           \
        snprintf(what, sizeof what, "layernorm %dx%d %s", rows, h, name);                          \
        CU_ASSERT_EQUAL(mismatches(what, got, want, scale, cnt, abs_tol, rel), 0);                 \
    } while (0)
    LN_CHECK("mean", mu, mur, NULL, rows, 1e-6, 1e-6);
    LN_CHECK("rstd", rs, rsr, NULL, rows, 0, 4e-6);
    LN_CHECK("y", y, yr, ys, n, 0, 4e-6);
    LN_CHECK("dx", dx, dxr, dxs, n, 0, 4e-6);
    LN_CHECK("dgamma +=", dg, dgr, dgs, h, 0, 4e-6);
    LN_CHECK("dbeta +=", db, dbr, dbs, h, 0, 4e-6);
#undef LN_CHECK
    if (const_row >= 0) {
        CU_ASSERT(fabs(rs[const_row] - 1.0 / sqrt(1e-5)) <= 1e-6 / sqrt(1e-5));
        CU_ASSERT_EQUAL(memcmp(y + (long)const_row * h, bet, fh), 0); /* y = 0 + beta */
    }
    float *all[] = {d_x, d_dy, d_y, d_dx, d_g, d_b, d_dg, d_db, d_mu, d_rs};
    for (int i = 0; i < 10; i++) cudaFree(all[i]);
    float *host[] = {x, dy, y, yr, dx, dxr, gam, bet, dg, dgr, db, dbr, mu, mur, rs, rsr};
    for (int i = 0; i < 16; i++) free(host[i]);
    free(ys);
    free(dxs);
    free(dgs);
    free(dbs);
}

static void test_layernorm(void)
{
    static const int shapes[][3] = {/* rows, h, the constant row or -1 */
                                    {1, 1, -1},   {1, 1, 0},   {3, 7, -1},    {3, 7, 1},
                                    {2, 256, -1}, {5, 300, 4}, {64, 257, 17}, {257, 64, -1}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        check_layernorm(shapes[s][0], shapes[s][1], shapes[s][2], 40u + (unsigned)s);
}

/* accumulate = 0 writes dgamma and dbeta, accumulate = 1 adds: the same
 * backward twice gives exactly twice (a + a is exact in float); and two
 * runs of forward and backward give the same bits in every output. */
static void test_layernorm_accumulate_deterministic(void)
{
    enum { R = 64, H = 257, N = R * H };
    ref_rng rng = {77};
    static float x[N], dy[N], gam[H], bet[H], out[2][2 * N + 2 * R + 4 * H];
    ref_fill(&rng, x, N, -2, 3);
    ref_fill(&rng, dy, N, -1, 1);
    ref_fill(&rng, gam, H, 0.5, 1.5);
    ref_fill(&rng, bet, H, -1, 1);
    float *d_x = to_dev(x, N), *d_dy = to_dev(dy, N), *d_g = to_dev(gam, H), *d_b = to_dev(bet, H);
    float *d_y, *d_dx, *d_mu, *d_rs, *d_dg, *d_db;
    CU_ASSERT_OK(cudaMalloc((void **)&d_y, N * sizeof(float)));
    CU_ASSERT_OK(cudaMalloc((void **)&d_dx, N * sizeof(float)));
    CU_ASSERT_OK(cudaMalloc((void **)&d_mu, R * sizeof(float)));
    CU_ASSERT_OK(cudaMalloc((void **)&d_rs, R * sizeof(float)));
    CU_ASSERT_OK(cudaMalloc((void **)&d_dg, H * sizeof(float)));
    CU_ASSERT_OK(cudaMalloc((void **)&d_db, H * sizeof(float)));
    for (int run = 0; run < 2; run++) {
        float *o = out[run];
        CU_ASSERT_OK(pl_k_fill(d_dg, H, 7.0f, 0)); /* accumulate = 0 overwrites this */
        CU_ASSERT_OK(pl_k_fill(d_db, H, 7.0f, 0));
        CU_ASSERT_OK(pl_k_layernorm(d_y, d_mu, d_rs, d_x, d_g, d_b, R, H, 0));
        CU_ASSERT_OK(
            pl_k_layernorm_backward(d_dx, d_dg, d_db, d_dy, d_x, d_mu, d_rs, d_g, R, H, 0, 0));
        to_host(o, d_y, N);
        to_host(o + N, d_dx, N);
        to_host(o + 2 * N, d_mu, R);
        to_host(o + 2 * N + R, d_rs, R);
        to_host(o + 2 * N + 2 * R, d_dg, H);
        to_host(o + 2 * N + 2 * R + H, d_db, H);
        CU_ASSERT_OK(
            pl_k_layernorm_backward(d_dx, d_dg, d_db, d_dy, d_x, d_mu, d_rs, d_g, R, H, 1, 0));
        to_host(o + 2 * N + 2 * R + 2 * H, d_dg, H);
        to_host(o + 2 * N + 2 * R + 3 * H, d_db, H);
        long twice = 0;
        for (int i = 0; i < 2 * H; i++)
            twice += o[2 * N + 2 * R + 2 * H + i] == 2.0f * o[2 * N + 2 * R + i];
        CU_ASSERT_EQUAL(twice, 2 * H);
    }
    CU_ASSERT_EQUAL(memcmp(out[0], out[1], sizeof out[0]), 0);
    float *all[] = {d_x, d_dy, d_g, d_b, d_y, d_dx, d_mu, d_rs, d_dg, d_db};
    for (int i = 0; i < 10; i++) cudaFree(all[i]);
}

/* rows or h < 1, or any NULL pointer: cudaErrorInvalidValue. */
static void test_layernorm_bad_arguments(void)
{
    float *d;
    CU_ASSERT_OK(cudaMalloc((void **)&d, 64 * sizeof(float)));
    static const int sizes[][2] = {{0, 4}, {4, 0}, {-1, 4}, {4, -1}};
    for (int k = 0; k < 4; k++) {
        int r = sizes[k][0], h = sizes[k][1];
        CU_ASSERT_CUDA(pl_k_layernorm(d, d, d, d, d, d, r, h, 0), cudaErrorInvalidValue);
        CU_ASSERT_CUDA(pl_k_layernorm_backward(d, d, d, d, d, d, d, d, r, h, 0, 0),
                       cudaErrorInvalidValue);
    }
    for (int k = 0; k < 6; k++) {
        float *p[6] = {d, d, d, d, d, d};
        p[k] = NULL;
        CU_ASSERT_CUDA(pl_k_layernorm(p[0], p[1], p[2], p[3], p[4], p[5], 2, 4, 0),
                       cudaErrorInvalidValue);
    }
    for (int k = 0; k < 8; k++) {
        float *p[8] = {d, d, d, d, d, d, d, d};
        p[k] = NULL;
        CU_ASSERT_CUDA(
            pl_k_layernorm_backward(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], 2, 4, 0, 0),
            cudaErrorInvalidValue);
    }
    CU_ASSERT_OK(pl_k_fill(d, 64, 1.0f, 0));
    CU_ASSERT_OK(pl_k_layernorm(d, d + 8, d + 12, d + 16, d + 24, d + 32, 2, 4, 0)); /* good */
    CU_ASSERT_OK(cudaDeviceSynchronize());
    cudaFree(d);
}

/* The sum: within 1e-6 of the sum of |x| (relative), and the same bits on
 * a second run (the loss curve of a parallel run must match, bit for bit). */
static void test_sum(void)
{
    static const long ns[] = {0, 1, 255, 256, 257, 100003};
    ref_rng rng = {5};
    for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
        long n = ns[k];
        float *x = malloc((size_t)(n + 1) * sizeof *x), got[2];
        ref_fill(&rng, x, n, -1, 1);
        double want = 0, mag = 0;
        for (long i = 0; i < n; i++) {
            want += x[i];
            mag += fabs(x[i]);
        }
        float *dx = to_dev(x, n), *dout;
        CU_ASSERT_OK(cudaMalloc((void **)&dout, 2 * sizeof(float)));
        CU_ASSERT_OK(pl_k_sum(dout, dx, n, 0));
        CU_ASSERT_OK(pl_k_sum(dout + 1, dx, n, 0));
        to_host(got, dout, 2);
        CU_ASSERT(fabs(got[0] - want) <= 1e-6 * mag + 1e-7);
        CU_ASSERT_EQUAL(memcmp(&got[0], &got[1], sizeof(float)), 0);
        cudaFree(dx);
        cudaFree(dout);
        free(x);
    }
}

/* Accuracy: the exact count; ties go to the first largest logit. */
static void test_count_correct(void)
{
    enum { M = 1000, C = 10 };
    ref_rng rng = {31337};
    float *z = malloc(M * C * sizeof *z);
    int *y = malloc(M * sizeof *y), got = -1;
    for (long i = 0; i < M * C; i++) z[i] = (float)(int)ref_uniform(&rng, 0, 4); /* many ties */
    for (int r = 0; r < M; r++) y[r] = (int)ref_uniform(&rng, 0, C);
    float *dz = to_dev(z, M * C);
    int *dy = to_dev_int(y, M), *dc;
    CU_ASSERT_OK(cudaMalloc((void **)&dc, sizeof(int)));
    CU_ASSERT_OK(cudaMemset(dc, 0, sizeof(int)));
    CU_ASSERT_OK(pl_k_count_correct(dc, dz, dy, M, C, 0));
    CU_ASSERT_OK(pl_k_count_correct(dc, dz, dy, M, C, 0)); /* it adds */
    cudaMemcpy(&got, dc, sizeof got, cudaMemcpyDeviceToHost);
    CU_ASSERT_EQUAL(got, 2 * ref_count_correct(z, y, M, C));
    cudaFree(dz);
    cudaFree(dy);
    cudaFree(dc);
    free(z);
    free(y);
}

/* ---- vocabulary-parallel softmax cross-entropy ------------------------------------------- */

enum { VP_MAXT = 8 };

/* What a split run gives, put back together on the host. */
typedef struct {
    float *mx;          /* [M]: the group's row max (after the PL_MAX all-reduce) */
    float *loss;        /* [M] */
    float *dz;          /* [M, C]: each rank's valid columns of dlogits, in class order */
    int *pred;          /* [M]: after the PL_MIN all-reduce */
    int correct;        /* pl_k_count_equal(pred), called twice: twice the count */
    long pad_nonzero;   /* padded elements of dlogits that are not exactly 0 */
    long rank_pred_bad; /* rank rows whose pl_k_vp_argmax is not the first of its valid
                         * columns equal to the max (as a class), or INT_MAX */
    int empty_ranks;    /* ranks whose classes are all padding (valid = 0) */
} vp_result;

static void vp_result_alloc(vp_result *o, int M, int C)
{
    memset(o, 0, sizeof *o);
    o->mx = malloc((size_t)M * sizeof(float));
    o->loss = malloc((size_t)M * sizeof(float));
    o->dz = malloc((size_t)M * C * sizeof(float));
    o->pred = malloc((size_t)M * sizeof(int));
}

static void vp_result_free(vp_result *o)
{
    free(o->mx);
    free(o->loss);
    free(o->dz);
    free(o->pred);
}

/* The six kernels over logits[M,C] split over t ranks as Lab 08 splits
 * them: the classes padded to Cp = the next multiple of t, rank i holding
 * Cl = Cp / t columns from col0 = i Cl, of which valid = min(Cl, max(0, C
 * - col0)) are real; each padded column holds `pad`. The all-reduces are
 * done here on the host, as a group would: PL_MAX of the row maxima,
 * PL_SUM (float, rank order) of sumexp and target, PL_MIN of the
 * predictions. The backward writes into each rank's logits (in_place) or
 * into a buffer filled with NaN first (so a padded element left unwritten
 * shows). t = 1 is the unsplit run: col0 = 0, valid = Cl = C. */
static void vp_split(vp_result *o, const float *z, const int *y, int M, int C, int t, float pad,
                     float scale, int in_place)
{
    CU_ASSERT_FATAL(t >= 1 && t <= VP_MAXT);
    int Cl = (C + t - 1) / t;
    long nl = (long)M * Cl;
    size_t fm = (size_t)M * sizeof(float), im = (size_t)M * sizeof(int);
    /* zeroed: the device buffers below start as copies of them */
    float *zl = calloc((size_t)nl, sizeof(float)), *a = calloc((size_t)M, sizeof(float));
    float *b = malloc(fm), *se = malloc(fm), *tg = malloc(fm);
    int *pi = calloc((size_t)M, sizeof(int));
    float *d_z[VP_MAXT], *d_mx = to_dev(a, M), *d_se = to_dev(a, M), *d_tg = to_dev(a, M);
    float *d_loss = to_dev(a, M), *d_dz = to_dev(zl, nl);
    int *d_y = to_dev_int(y, M), *d_pred = to_dev_int(pi, M), *d_c = to_dev_int(pi, 1);
    int col0[VP_MAXT], valid[VP_MAXT];
    o->empty_ranks = 0;
    for (int i = 0; i < t; i++) {
        col0[i] = i * Cl;
        valid[i] = C - col0[i] < 0 ? 0 : C - col0[i] > Cl ? Cl : C - col0[i];
        o->empty_ranks += valid[i] == 0;
        for (int r = 0; r < M; r++)
            for (int c = 0; c < Cl; c++)
                zl[(long)r * Cl + c] = c < valid[i] ? z[(long)r * C + col0[i] + c] : pad;
        d_z[i] = to_dev(zl, nl);
    }
    /* 1. the row max, all-reduce PL_MAX */
    for (int i = 0; i < t; i++) {
        CU_ASSERT_OK(pl_k_vp_max(d_mx, d_z[i], M, Cl, valid[i], 0));
        to_host(a, d_mx, M);
        for (int r = 0; r < M; r++) o->mx[r] = i == 0 || a[r] > o->mx[r] ? a[r] : o->mx[r];
    }
    cudaMemcpy(d_mx, o->mx, fm, cudaMemcpyHostToDevice);
    /* 2. sumexp and target, all-reduce PL_SUM */
    for (int i = 0; i < t; i++) {
        CU_ASSERT_OK(pl_k_vp_partials(d_se, d_tg, d_z[i], d_y, d_mx, M, Cl, valid[i], col0[i], 0));
        to_host(a, d_se, M);
        to_host(b, d_tg, M);
        for (int r = 0; r < M; r++) {
            se[r] = i == 0 ? a[r] : se[r] + a[r];
            tg[r] = i == 0 ? b[r] : tg[r] + b[r];
        }
    }
    cudaMemcpy(d_se, se, fm, cudaMemcpyHostToDevice);
    cudaMemcpy(d_tg, tg, fm, cudaMemcpyHostToDevice);
    /* 3. the loss (every rank computes the same) */
    CU_ASSERT_OK(pl_k_vp_loss(d_loss, d_se, d_tg, M, 0));
    to_host(o->loss, d_loss, M);
    /* 5. predictions, all-reduce PL_MIN (before the backward, which may
     * overwrite the logits) */
    o->rank_pred_bad = 0;
    for (int i = 0; i < t; i++) {
        CU_ASSERT_OK(pl_k_vp_argmax(d_pred, d_z[i], d_mx, M, Cl, valid[i], col0[i], 0));
        cudaMemcpy(pi, d_pred, im, cudaMemcpyDeviceToHost);
        for (int r = 0; r < M; r++) {
            int want = INT_MAX;
            for (int c = 0; c < valid[i] && want == INT_MAX; c++)
                if (z[(long)r * C + col0[i] + c] == o->mx[r]) want = col0[i] + c;
            o->rank_pred_bad += pi[r] != want;
            o->pred[r] = i == 0 || pi[r] < o->pred[r] ? pi[r] : o->pred[r];
        }
    }
    cudaMemcpy(d_pred, o->pred, im, cudaMemcpyHostToDevice);
    CU_ASSERT_OK(cudaMemset(d_c, 0, sizeof(int)));
    CU_ASSERT_OK(pl_k_count_equal(d_c, d_pred, d_y, M, 0));
    CU_ASSERT_OK(pl_k_count_equal(d_c, d_pred, d_y, M, 0)); /* it adds */
    cudaMemcpy(&o->correct, d_c, sizeof(int), cudaMemcpyDeviceToHost);
    /* 4. the backward, each rank its columns */
    o->pad_nonzero = 0;
    for (int i = 0; i < t; i++) {
        float *out = in_place ? d_z[i] : d_dz;
        if (!in_place) CU_ASSERT_OK(pl_k_fill(d_dz, nl, NAN, 0));
        CU_ASSERT_OK(
            pl_k_vp_backward(out, d_z[i], d_y, d_mx, d_se, M, Cl, valid[i], col0[i], scale, 0));
        to_host(zl, out, nl);
        for (int r = 0; r < M; r++)
            for (int c = 0; c < Cl; c++) {
                float g = zl[(long)r * Cl + c];
                if (c < valid[i])
                    o->dz[(long)r * C + col0[i] + c] = g;
                else
                    o->pad_nonzero += !(g == 0.0f);
            }
    }
    CU_ASSERT_OK(cudaDeviceSynchronize());
    for (int i = 0; i < t; i++) cudaFree(d_z[i]);
    void *dev[] = {d_mx, d_se, d_tg, d_loss, d_dz, d_y, d_pred, d_c};
    for (int i = 0; i < 8; i++) cudaFree(dev[i]);
    free(zl);
    free(a);
    free(b);
    free(se);
    free(tg);
    free(pi);
}

/* The unsplit run: pl_k_softmax_xent, its backward, pl_k_count_correct
 * (called twice: it adds) and the first largest logit of each row. */
typedef struct {
    float *p, *loss, *dz;
    int *best, correct;
} vp_ref;

static void vp_reference(vp_ref *o, const float *z, const int *y, int M, int C, float scale)
{
    long n = (long)M * C;
    o->p = malloc((size_t)n * sizeof(float));
    o->dz = malloc((size_t)n * sizeof(float));
    o->loss = malloc((size_t)M * sizeof(float));
    o->best = malloc((size_t)M * sizeof(int));
    float *d_z = to_dev(z, n), *d_p = to_dev(z, n), *d_l = to_dev(z, M);
    int *d_y = to_dev_int(y, M), *d_c = to_dev_int(y, 1);
    CU_ASSERT_OK(pl_k_softmax_xent(d_p, d_l, d_z, d_y, M, C, 0));
    to_host(o->p, d_p, n);
    to_host(o->loss, d_l, M);
    CU_ASSERT_OK(pl_k_softmax_xent_backward(d_p, d_p, d_y, M, C, scale, 0));
    to_host(o->dz, d_p, n);
    CU_ASSERT_OK(cudaMemset(d_c, 0, sizeof(int)));
    CU_ASSERT_OK(pl_k_count_correct(d_c, d_z, d_y, M, C, 0));
    CU_ASSERT_OK(pl_k_count_correct(d_c, d_z, d_y, M, C, 0));
    cudaMemcpy(&o->correct, d_c, sizeof(int), cudaMemcpyDeviceToHost);
    for (int r = 0; r < M; r++) {
        int best = 0;
        for (int c = 1; c < C; c++)
            if (z[(long)r * C + c] > z[(long)r * C + best]) best = c;
        o->best[r] = best;
    }
    cudaFree(d_z);
    cudaFree(d_p);
    cudaFree(d_l);
    cudaFree(d_y);
    cudaFree(d_c);
}

static void vp_ref_free(vp_ref *o)
{
    free(o->p);
    free(o->loss);
    free(o->dz);
    free(o->best);
}

/* Logits for the vocabulary-parallel tests: even rows uniform in
 * [-20, 20) (the max must be subtracted), odd rows small integers 0..3
 * (ties, within a rank and across ranks); labels in 0..C-1. */
static void vp_data(float *z, int *y, int M, int C, unsigned seed)
{
    ref_rng rng = {0xA0761D6478BD642Full ^ seed};
    for (int r = 0; r < M; r++) {
        for (int c = 0; c < C; c++)
            z[(long)r * C + c] =
                r % 2 ? (float)(int)ref_uniform(&rng, 0, 4) : (float)ref_uniform(&rng, -20, 20);
        y[r] = (int)ref_uniform(&rng, 0, C);
    }
}

/* The rows whose prediction is not want[r]; prints the first. */
static int int_mismatches(const char *what, const int *got, const int *want, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) {
            if (!bad) fprintf(stderr, "  %s: [%d] = %d, expected %d\n", what, i, got[i], want[i]);
            bad++;
        }
    return bad;
}

/* t = 1 (col0 = 0, valid = Cl = C): max -> partials -> loss gives
 * pl_k_softmax_xent's losses and pl_k_vp_backward its backward's dlogits,
 * bit for bit (tolerance 0: the same float operations in the same order);
 * the predictions are the first largest logit of every row and
 * count_equal of them is pl_k_count_correct's count. Random logits and
 * ties; the backward out of place and in place. */
static void test_vp_unsplit(void)
{
    static const int shapes[][2] = {{1, 1}, {1, 10}, {7, 2}, {64, 10}, {37, 33}, {3, 2000}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int M = shapes[s][0], C = shapes[s][1];
        long n = (long)M * C;
        float *z = malloc((size_t)n * sizeof *z), scale = 1.0f / 64;
        int *y = malloc((size_t)M * sizeof *y);
        vp_data(z, y, M, C, 500u + (unsigned)s);
        vp_ref ref;
        vp_reference(&ref, z, y, M, C, scale);
        for (int in_place = 0; in_place <= 1; in_place++) {
            vp_result o;
            vp_result_alloc(&o, M, C);
            vp_split(&o, z, y, M, C, 1, 0.0f, scale, in_place);
            char what[80];
            snprintf(what, sizeof what, "vp t=1 %dx%d loss", M, C);
            CU_ASSERT_EQUAL(mismatches(what, o.loss, ref.loss, NULL, M, 0, 0), 0);
            snprintf(what, sizeof what, "vp t=1 %dx%d dlogits%s", M, C,
                     in_place ? " in place" : "");
            CU_ASSERT_EQUAL(mismatches(what, o.dz, ref.dz, NULL, n, 0, 0), 0);
            snprintf(what, sizeof what, "vp t=1 %dx%d pred", M, C);
            CU_ASSERT_EQUAL(int_mismatches(what, o.pred, ref.best, M), 0);
            CU_ASSERT_EQUAL(o.correct, ref.correct);
            CU_ASSERT_EQUAL(o.pad_nonzero, 0);
            CU_ASSERT_EQUAL(o.rank_pred_bad, 0);
            CU_ASSERT_EQUAL(o.empty_ranks, 0);
            vp_result_free(&o);
        }
        vp_ref_free(&ref);
        free(z);
        free(y);
    }
}

/* Split over t = 2, 3, 4, 8 ranks (C = 10 padded to 10, 12, 12, 16: with
 * t = 8 ranks 5..7 are all padding; C = 1 with t = 8: seven of them; C =
 * 7 and 33 for uneven remainders): against the unsplit pl_k_softmax_xent
 * and its backward. The row max and the predictions exactly (a max and a
 * first index do not round; each rank's pl_k_vp_argmax as the contract
 * says, the group's after PL_MIN), and the count; every padded element of
 * dlogits exactly 0; the loss within (C + 2) 2^-23 (1 + |loss|) and each
 * dlogit within (C + 2) 2^-23 (p |scale| + |dlogit|): the t partial sums
 * of exponentials add in another order than one row's sum, each float
 * sum of C terms within C 2^-24 of the exact sum (the errors seen are a
 * few 1e-8). */
static void test_vp_split(void)
{
    static const int Cs[] = {10, 1, 7, 33}, ts[] = {2, 3, 4, 8};
    int M = 29, empty = 0;
    for (size_t ci = 0; ci < sizeof Cs / sizeof *Cs; ci++) {
        int C = Cs[ci];
        long n = (long)M * C;
        float *z = malloc((size_t)n * sizeof *z), scale = -0.25f, *mxr = malloc((size_t)M * 4);
        int *y = malloc((size_t)M * sizeof *y);
        double *ls = malloc((size_t)M * sizeof *ls), *ds = malloc((size_t)n * sizeof *ds);
        vp_data(z, y, M, C, 600u + (unsigned)ci);
        vp_ref ref;
        vp_reference(&ref, z, y, M, C, scale);
        double tol = (C + 2) * ldexp(1.0, -23);
        for (int r = 0; r < M; r++) {
            ls[r] = 1 + fabs(ref.loss[r]);
            mxr[r] = z[(long)r * C + ref.best[r]];
        }
        for (long i = 0; i < n; i++) ds[i] = fabs(ref.p[i] * scale) + fabs(ref.dz[i]);
        for (size_t ti = 0; ti < sizeof ts / sizeof *ts; ti++) {
            int t = ts[ti];
            vp_result o;
            vp_result_alloc(&o, M, C);
            vp_split(&o, z, y, M, C, t, 0.0f, scale, (int)ti % 2);
            char what[80];
#define VP_WHAT(name) snprintf(what, sizeof what, "vp C=%d t=%d %s", C, t, name)
            VP_WHAT("row max");
            CU_ASSERT_EQUAL(mismatches(what, o.mx, mxr, NULL, M, 0, 0), 0);
            VP_WHAT("loss");
            CU_ASSERT_EQUAL(mismatches(what, o.loss, ref.loss, ls, M, 0, tol), 0);
            VP_WHAT("dlogits");
            CU_ASSERT_EQUAL(mismatches(what, o.dz, ref.dz, ds, n, 0, tol), 0);
            VP_WHAT("pred");
            CU_ASSERT_EQUAL(int_mismatches(what, o.pred, ref.best, M), 0);
#undef VP_WHAT
            CU_ASSERT_EQUAL(o.correct, ref.correct);
            CU_ASSERT_EQUAL(o.pad_nonzero, 0);
            CU_ASSERT_EQUAL(o.rank_pred_bad, 0);
            if (C == 10 && t == 8) CU_ASSERT_EQUAL(o.empty_ranks, 3); /* ranks 5, 6, 7 */
            if (C == 1 && t == 8) CU_ASSERT_EQUAL(o.empty_ranks, 7);
            empty += o.empty_ranks;
            vp_result_free(&o);
        }
        vp_ref_free(&ref);
        free(z);
        free(y);
        free(mxr);
        free(ls);
        free(ds);
    }
    CU_ASSERT(empty > 0); /* the all-padding rank was exercised */
}

/* Padding never counts: with 1e30, -1e30, +inf, -inf, NaN or 3 (the max
 * of the rows of ties) in every padded column, the same split gives the
 * same bits in the row max, the loss, dlogits and the predictions as with
 * 0 there, padded dlogits stay exactly 0 and each rank's prediction is
 * one of its valid classes or INT_MAX. */
static void test_vp_padding_ignored(void)
{
    static const int ts[] = {3, 4, 8};
    /* 3: the largest logit of the rows of small integers, so a padded
     * column would tie with their max */
    static const float pads[] = {1e30f, -1e30f, INFINITY, -INFINITY, NAN, 3.0f};
    enum { M = 17, C = 10 };
    float z[M * C], scale = 1.0f / M;
    int y[M];
    vp_data(z, y, M, C, 77);
    for (size_t ti = 0; ti < sizeof ts / sizeof *ts; ti++) {
        vp_result base;
        vp_result_alloc(&base, M, C);
        vp_split(&base, z, y, M, C, ts[ti], 0.0f, scale, 0);
        for (size_t pi = 0; pi < sizeof pads / sizeof *pads; pi++) {
            vp_result o;
            vp_result_alloc(&o, M, C);
            vp_split(&o, z, y, M, C, ts[ti], pads[pi], scale, (int)pi % 2);
            CU_ASSERT_EQUAL(memcmp(o.mx, base.mx, M * sizeof(float)), 0);
            CU_ASSERT_EQUAL(memcmp(o.loss, base.loss, M * sizeof(float)), 0);
            CU_ASSERT_EQUAL(memcmp(o.dz, base.dz, M * C * sizeof(float)), 0);
            CU_ASSERT_EQUAL(memcmp(o.pred, base.pred, M * sizeof(int)), 0);
            CU_ASSERT_EQUAL(o.correct, base.correct);
            CU_ASSERT_EQUAL(o.pad_nonzero, 0);
            CU_ASSERT_EQUAL(o.rank_pred_bad, 0);
            if (o.pad_nonzero || memcmp(o.loss, base.loss, M * sizeof(float)))
                fprintf(stderr, "  vp padding %g, t=%d: changed the result\n", pads[pi], ts[ti]);
            vp_result_free(&o);
        }
        vp_result_free(&base);
    }
}

/* M < 1, Cl < 1, valid outside 0..Cl, col0 < 0 or a NULL pointer:
 * cudaErrorInvalidValue, for each of the six; the same calls with good
 * arguments succeed. */
static void test_vp_bad_arguments(void)
{
    float *f;
    int *i;
    CU_ASSERT_OK(cudaMalloc((void **)&f, 64 * sizeof(float)));
    CU_ASSERT_OK(cudaMalloc((void **)&i, 64 * sizeof(int)));
    CU_ASSERT_OK(cudaMemset(i, 0, 64 * sizeof(int)));
    CU_ASSERT_OK(pl_k_fill(f, 64, 1.0f, 0));
    const cudaError_t bad = cudaErrorInvalidValue;
    /* M, Cl, valid, col0 */
    static const int shapes[][4] = {{0, 4, 2, 0},  {-1, 4, 2, 0}, {2, 0, 0, 0}, {2, -1, 0, 0},
                                    {2, 4, -1, 0}, {2, 4, 5, 0},  {2, 4, 2, -1}};
    for (int k = 0; k < 7; k++) {
        int M = shapes[k][0], Cl = shapes[k][1], v = shapes[k][2], c0 = shapes[k][3];
        if (c0 == 0) CU_ASSERT_CUDA(pl_k_vp_max(f, f, M, Cl, v, 0), bad); /* no col0 */
        CU_ASSERT_CUDA(pl_k_vp_partials(f, f + 8, f + 16, i, f + 24, M, Cl, v, c0, 0), bad);
        CU_ASSERT_CUDA(pl_k_vp_backward(f, f + 16, i, f + 24, f + 32, M, Cl, v, c0, 1.0f, 0), bad);
        CU_ASSERT_CUDA(pl_k_vp_argmax(i, f, f + 24, M, Cl, v, c0, 0), bad);
    }
    for (int M = -1; M <= 0; M++) {
        CU_ASSERT_CUDA(pl_k_vp_loss(f, f + 8, f + 16, M, 0), bad);
        CU_ASSERT_CUDA(pl_k_count_equal(i, i + 8, i + 16, M, 0), bad);
    }
    for (int k = 0; k < 2; k++) {
        float *p[2] = {f, f + 16};
        p[k] = NULL;
        CU_ASSERT_CUDA(pl_k_vp_max(p[0], p[1], 2, 4, 2, 0), bad);
    }
    for (int k = 0; k < 5; k++) {
        float *p[4] = {f, f + 8, f + 16, f + 24};
        int *yl = k == 4 ? NULL : i;
        if (k < 4) p[k] = NULL;
        CU_ASSERT_CUDA(pl_k_vp_partials(p[0], p[1], p[2], yl, p[3], 2, 4, 2, 0, 0), bad);
        CU_ASSERT_CUDA(pl_k_vp_backward(p[0], p[2], yl, p[3], p[1], 2, 4, 2, 0, 1.0f, 0), bad);
    }
    for (int k = 0; k < 3; k++) {
        float *p[3] = {f, f + 8, f + 16};
        p[k] = NULL;
        CU_ASSERT_CUDA(pl_k_vp_loss(p[0], p[1], p[2], 2, 0), bad);
    }
    for (int k = 0; k < 3; k++) {
        int *p[3] = {i, i + 8, i + 16};
        p[k] = NULL;
        CU_ASSERT_CUDA(pl_k_count_equal(p[0], p[1], p[2], 2, 0), bad);
        CU_ASSERT_CUDA(pl_k_vp_argmax(k == 0 ? NULL : i, k == 1 ? NULL : f, k == 2 ? NULL : f + 24,
                                      2, 4, 2, 0, 0),
                       bad);
    }
    /* good: the edges of the ranges (valid = 0 and valid = Cl) */
    CU_ASSERT_OK(pl_k_vp_max(f, f + 16, 2, 4, 0, 0));
    CU_ASSERT_OK(pl_k_vp_max(f, f + 16, 2, 4, 4, 0));
    CU_ASSERT_OK(pl_k_vp_partials(f, f + 8, f + 16, i, f, 2, 4, 4, 0, 0));
    CU_ASSERT_OK(pl_k_vp_loss(f + 24, f, f + 8, 2, 0));
    CU_ASSERT_OK(pl_k_vp_backward(f + 32, f + 16, i, f, f + 8, 2, 4, 0, 4, 1.0f, 0));
    CU_ASSERT_OK(pl_k_vp_argmax(i + 8, f + 16, f, 2, 4, 4, 0, 0));
    CU_ASSERT_OK(pl_k_count_equal(i + 32, i + 8, i, 2, 0));
    CU_ASSERT_OK(cudaDeviceSynchronize());
    cudaFree(f);
    cudaFree(i);
}

/* SGD and AdamW, three steps: within 1e-6 + 1e-5 relative of the double
 * reference fed the same float state at each step. */
static void test_optimizers(void)
{
    for (int li = 0; li < NLEN; li++) {
        long n = lengths[li];
        ref_rng rng = {(unsigned long long)n};
        size_t bytes = (size_t)n * sizeof(float);
        float *w = malloc(bytes), *m = calloc((size_t)n, sizeof(float));
        float *v = calloc((size_t)n, sizeof(float)), *g = malloc(bytes), *got = malloc(bytes);
        ref_fill(&rng, w, n, -1, 1);
        float *dw = to_dev(w, n), *dm = to_dev(m, n), *dv = to_dev(v, n), *dg = to_dev(g, n);
        for (int t = 1; t <= 3; t++) {
            ref_fill(&rng, g, n, -1, 1);
            cudaMemcpy(dg, g, bytes, cudaMemcpyHostToDevice);
            CU_ASSERT_OK(pl_k_adamw(dw, dm, dv, dg, n, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.01f, t, 0));
            ref_adamw(w, m, v, g, n, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.01f, t);
            to_host(got, dw, n);
            CU_ASSERT_EQUAL(mismatches("adamw w", got, w, NULL, n, 1e-6, 1e-5), 0);
            memcpy(w, got, bytes); /* the next step from the same state */
            to_host(m, dm, n);
            to_host(v, dv, n);
        }
        memset(v, 0, bytes);
        cudaMemcpy(dv, v, bytes, cudaMemcpyHostToDevice);
        for (int t = 1; t <= 3; t++) {
            ref_fill(&rng, g, n, -1, 1);
            cudaMemcpy(dg, g, bytes, cudaMemcpyHostToDevice);
            CU_ASSERT_OK(pl_k_sgd(dw, dv, dg, n, 0.1f, 0.9f, 1e-4f, 0));
            ref_sgd(w, v, g, n, 0.1f, 0.9f, 1e-4f);
            to_host(got, dw, n);
            CU_ASSERT_EQUAL(mismatches("sgd w", got, w, NULL, n, 1e-6, 1e-5), 0);
            memcpy(w, got, bytes);
            to_host(v, dv, n);
        }
        cudaFree(dw);
        cudaFree(dm);
        cudaFree(dv);
        cudaFree(dg);
        free(w);
        free(m);
        free(v);
        free(g);
        free(got);
    }
}

/* fill, scale, axpy: one float operation each, so exact. */
static void test_vectors(void)
{
    for (int li = 0; li < NLEN; li++) {
        long n = lengths[li];
        ref_rng rng = {(unsigned long long)n * 7};
        size_t bytes = (size_t)n * sizeof(float);
        float *x = malloc(bytes), *y = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
        ref_fill(&rng, x, n, -1, 1);
        ref_fill(&rng, y, n, -1, 1);
        float *dx = to_dev(x, n), *dy = to_dev(y, n);
        CU_ASSERT_OK(pl_k_axpy(dy, dx, n, -0.5f, 0));
        to_host(got, dy, n);
        for (long i = 0; i < n; i++) want[i] = y[i] + -0.5f * x[i];
        CU_ASSERT_EQUAL(mismatches("axpy", got, want, NULL, n, 0, 0), 0);
        CU_ASSERT_OK(pl_k_scale(dx, n, 3.0f, 0));
        to_host(got, dx, n);
        for (long i = 0; i < n; i++) want[i] = x[i] * 3.0f;
        CU_ASSERT_EQUAL(mismatches("scale", got, want, NULL, n, 0, 0), 0);
        CU_ASSERT_OK(pl_k_fill(dx, n, 2.5f, 0));
        to_host(got, dx, n);
        for (long i = 0; i < n; i++) want[i] = 2.5f;
        CU_ASSERT_EQUAL(mismatches("fill", got, want, NULL, n, 0, 0), 0);
        cudaFree(dx);
        cudaFree(dy);
        free(x);
        free(y);
        free(got);
        free(want);
    }
}

int register_nn_suite(void)
{
    static const unit_test t[] = {
        {"matmul: A.B, A.Bt, At.B, = and +=, 1x1, primes, non-multiples of the tile",
         test_matmul_shapes},
        {"matmul: random shapes", test_matmul_random_shapes},
        {"bad arguments: cudaErrorInvalidValue", test_bad_arguments},
        {"GELU and ReLU, forward and backward", test_activations},
        {"bias add and bias gradient", test_bias},
        {"fused softmax + cross-entropy, forward and backward", test_softmax_xent},
        {"LayerNorm forward and backward (dgamma, dbeta +=), 1x1, 3x7, 64x257, variance 0",
         test_layernorm},
        {"LayerNorm: accumulate adds (twice = 2x), the same bits twice",
         test_layernorm_accumulate_deterministic},
        {"LayerNorm: bad arguments", test_layernorm_bad_arguments},
        {"sum: right and the same bits twice", test_sum},
        {"accuracy count: ties go to the first", test_count_correct},
        {"vocabulary-parallel xent, t = 1: softmax_xent's loss and dlogits, count_correct's count",
         test_vp_unsplit},
        {"vocabulary-parallel xent split over t = 2, 3, 4, 8 (padding, all-padding ranks)",
         test_vp_split},
        {"vocabulary-parallel xent: 1e30, inf, NaN in the padding change nothing",
         test_vp_padding_ignored},
        {"vocabulary-parallel xent: bad arguments", test_vp_bad_arguments},
        {"SGD with momentum and AdamW, three steps", test_optimizers},
        {"fill, scale, axpy", test_vectors},
    };
    return UNIT_SUITE("nn kernels", t);
}
