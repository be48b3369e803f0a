/*
 * test_nn.c — every kernel of paralab/nn.h against its plain C reference
 * (nn_ref.c, double accumulation), element by element, over shapes that
 * include 1x1, primes and sizes that are not multiples of the tile.
 * Tolerances are stated where they are used.
 */
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
        {"SGD with momentum and AdamW, three steps", test_optimizers},
        {"fill, scale, axpy", test_vectors},
    };
    return UNIT_SUITE("nn kernels", t);
}
