/*
 * test_mlp.c — the model: finite-difference gradient checks for every
 * layer type (linear, GELU, ReLU, softmax + cross-entropy, LayerNorm) and
 * for the whole MLP, deterministic initialisation, and the tensor helpers.
 *
 * Finite differences run the device's own forward kernels in float at
 * x +- h; the tolerance, |fd - analytic| <= 1e-3 + 2e-2 |analytic|, covers
 * the float rounding of the loss divided by 2h and the O(h^2) truncation.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_ref.h"
#include "paralab/mlp.h"
#include "paralab/nn.h"
#include "paralab/tensor.h"
#include "suites.h"

#define FD_ABS 1e-3
#define FD_REL 2e-2

static int close_enough(double fd, double an)
{
    return fabs(fd - an) <= FD_ABS + FD_REL * fabs(an);
}

static float *dev_copy(const float *h, long n)
{
    float *d = NULL;
    cudaMalloc((void **)&d, (size_t)n * sizeof(float));
    cudaMemcpy(d, h, (size_t)n * sizeof(float), cudaMemcpyHostToDevice);
    return d;
}

static void host_copy(float *h, const float *d, long n)
{
    cudaMemcpy(h, d, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost);
}

/* ---- layer by layer ------------------------------------------------------------------ */

/* Linear: loss = sum(R * (X.W + b)); dW = Xt.R, db = colsum R, dX = R.Wt.
 * The loss is linear in each parameter, so the difference is exact up to
 * rounding. */
static void test_gradcheck_linear(void)
{
    enum { B = 3, IN = 5, OUT = 4 };
    ref_rng rng = {11};
    float X[B * IN], Wt[IN * OUT], b[OUT], R[B * OUT], Y[B * OUT];
    ref_fill(&rng, X, B * IN, -1, 1);
    ref_fill(&rng, Wt, IN * OUT, -1, 1);
    ref_fill(&rng, b, OUT, -1, 1);
    ref_fill(&rng, R, B * OUT, -1, 1);
    float *dX = dev_copy(X, B * IN), *dW = dev_copy(Wt, IN * OUT), *db = dev_copy(b, OUT);
    float *dR = dev_copy(R, B * OUT), *dY = dev_copy(Y, B * OUT);
    float *gW = dev_copy(Wt, IN * OUT), *gb = dev_copy(b, OUT), *gX = dev_copy(X, B * IN);
    CU_ASSERT_OK(pl_k_matmul(gW, dX, dR, IN, OUT, B, PL_TN, 0, 0));
    CU_ASSERT_OK(pl_k_bias_grad(gb, dR, B, OUT, 0, 0));
    CU_ASSERT_OK(pl_k_matmul(gX, dR, dW, B, IN, OUT, PL_NT, 0, 0));
    float aW[IN * OUT], ab[OUT], aX[B * IN];
    host_copy(aW, gW, IN * OUT);
    host_copy(ab, gb, OUT);
    host_copy(aX, gX, B * IN);
    const float h = 1e-2f;
    /* loss(params) on the device: forward, then sum(R * Y) on the host in double */
#define LOSS(out)                                                                                  \
    do {                                                                                           \
        CU_ASSERT_OK(pl_k_matmul(dY, dX, dW, B, OUT, IN, PL_NN, 0, 0));                            \
        CU_ASSERT_OK(pl_k_bias_add(dY, db, B, OUT, 0));                                            \
        host_copy(Y, dY, B *OUT);                                                                  \
        double s_ = 0;                                                                             \
        for (int i_ = 0; i_ < B * OUT; i_++) s_ += (double)R[i_] * Y[i_];                          \
        (out) = s_;                                                                                \
    } while (0)
    struct {
        float *host, *dev, *grad;
        int n;
        const char *name;
    } p[] = {{Wt, dW, aW, IN * OUT, "W"}, {b, db, ab, OUT, "b"}, {X, dX, aX, B * IN, "X"}};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < p[k].n; i++) {
            double lp, lm;
            float keep = p[k].host[i];
            p[k].host[i] = keep + h;
            cudaMemcpy(p[k].dev, p[k].host, (size_t)p[k].n * sizeof(float), cudaMemcpyHostToDevice);
            LOSS(lp);
            p[k].host[i] = keep - h;
            cudaMemcpy(p[k].dev, p[k].host, (size_t)p[k].n * sizeof(float), cudaMemcpyHostToDevice);
            LOSS(lm);
            p[k].host[i] = keep;
            cudaMemcpy(p[k].dev, p[k].host, (size_t)p[k].n * sizeof(float), cudaMemcpyHostToDevice);
            double fd = (lp - lm) / (2 * h);
            if (!close_enough(fd, p[k].grad[i]))
                fprintf(stderr, "  linear d%s[%d]: finite difference %.6f, backward %.6f\n",
                        p[k].name, i, fd, p[k].grad[i]);
            CU_ASSERT(close_enough(fd, p[k].grad[i]));
        }
#undef LOSS
    float *all[] = {dX, dW, db, dR, dY, gW, gb, gX};
    for (int i = 0; i < 8; i++) cudaFree(all[i]);
}

/* GELU and ReLU: loss = sum(r * act(x)) is a sum of one-variable terms, so
 * one forward at x + h and one at x - h give every partial derivative. */
static void gradcheck_activation(int relu)
{
    enum { N = 200 };
    ref_rng rng = {relu ? 21u : 22u};
    float x[N], r[N], xp[N], xm[N], yp[N], ym[N], an[N];
    ref_fill(&rng, x, N, -4, 4);
    ref_fill(&rng, r, N, -1, 1);
    const float h = 1e-2f;
    for (int i = 0; i < N; i++) {
        if (relu && fabsf(x[i]) < 2 * h) x[i] = x[i] < 0 ? -0.5f : 0.5f; /* away from the kink */
        xp[i] = x[i] + h;
        xm[i] = x[i] - h;
    }
    float *dx = dev_copy(x, N), *dr = dev_copy(r, N), *dp = dev_copy(xp, N), *dm = dev_copy(xm, N),
          *dout = dev_copy(x, N);
    if (relu) {
        CU_ASSERT_OK(pl_k_relu_backward(dout, dr, dx, N, 0));
        CU_ASSERT_OK(pl_k_relu(dp, dp, N, 0));
        CU_ASSERT_OK(pl_k_relu(dm, dm, N, 0));
    } else {
        CU_ASSERT_OK(pl_k_gelu_backward(dout, dr, dx, N, 0));
        CU_ASSERT_OK(pl_k_gelu(dp, dp, N, 0));
        CU_ASSERT_OK(pl_k_gelu(dm, dm, N, 0));
    }
    host_copy(an, dout, N);
    host_copy(yp, dp, N);
    host_copy(ym, dm, N);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        double fd = (double)r[i] * ((double)yp[i] - ym[i]) / (2 * h);
        if (!close_enough(fd, an[i]) && bad++ == 0)
            fprintf(stderr, "  %s at x = %g: finite difference %.6f, backward %.6f\n",
                    relu ? "relu" : "gelu", x[i], fd, an[i]);
    }
    CU_ASSERT_EQUAL(bad, 0);
    float *all[] = {dx, dr, dp, dm, dout};
    for (int i = 0; i < 5; i++) cudaFree(all[i]);
}

static void test_gradcheck_gelu(void) { gradcheck_activation(0); }
static void test_gradcheck_relu(void) { gradcheck_activation(1); }

/* Softmax + cross-entropy: loss = scale * sum(losses), one logit at a time. */
static void test_gradcheck_softmax_xent(void)
{
    enum { M = 4, C = 6 };
    ref_rng rng = {31};
    float z[M * C], an[M * C], l[M];
    int y[M] = {0, 5, 2, 2};
    ref_fill(&rng, z, M * C, -3, 3);
    const float scale = 0.25f, h = 1e-2f;
    float *dz = dev_copy(z, M * C), *dp, *dl;
    int *dy;
    cudaMalloc((void **)&dp, sizeof z);
    cudaMalloc((void **)&dl, sizeof l);
    cudaMalloc((void **)&dy, sizeof y);
    cudaMemcpy(dy, y, sizeof y, cudaMemcpyHostToDevice);
    CU_ASSERT_OK(pl_k_softmax_xent(dp, dl, dz, dy, M, C, 0));
    CU_ASSERT_OK(pl_k_softmax_xent_backward(dp, dp, dy, M, C, scale, 0));
    host_copy(an, dp, M * C);
    for (int i = 0; i < M * C; i++) {
        double loss[2];
        for (int sgn = 0; sgn < 2; sgn++) {
            float keep = z[i];
            z[i] = keep + (sgn ? -h : h);
            cudaMemcpy(dz, z, sizeof z, cudaMemcpyHostToDevice);
            z[i] = keep;
            CU_ASSERT_OK(pl_k_softmax_xent(dp, dl, dz, dy, M, C, 0));
            host_copy(l, dl, M);
            loss[sgn] = 0;
            for (int r = 0; r < M; r++) loss[sgn] += (double)scale * l[r];
        }
        double fd = (loss[0] - loss[1]) / (2 * h);
        if (!close_enough(fd, an[i]))
            fprintf(stderr, "  softmax_xent dz[%d]: finite difference %.6f, backward %.6f\n", i, fd,
                    an[i]);
        CU_ASSERT(close_enough(fd, an[i]));
    }
    cudaFree(dz);
    cudaFree(dp);
    cudaFree(dl);
    cudaFree(dy);
}

/* LayerNorm: loss = sum(R * LayerNorm(X; gamma, beta)) over 3 rows of 7;
 * dX, dgamma and dbeta from the backward (dy = R) against the difference
 * of the device's forward, one element at a time. The loss is linear in
 * gamma and beta, not in X (the mean and rstd move with it). */
static void test_gradcheck_layernorm(void)
{
    enum { B = 3, H = 7 };
    ref_rng rng = {41};
    float X[B * H], g[H], b[H], R[B * H], Y[B * H];
    ref_fill(&rng, X, B * H, -2, 3);
    ref_fill(&rng, g, H, 0.5, 1.5);
    ref_fill(&rng, b, H, -1, 1);
    ref_fill(&rng, R, B * H, -1, 1);
    float *dX = dev_copy(X, B * H), *dg = dev_copy(g, H), *db = dev_copy(b, H);
    float *dR = dev_copy(R, B * H), *dY = dev_copy(Y, B * H), *dmu = dev_copy(X, B);
    float *drs = dev_copy(X, B), *gX = dev_copy(X, B * H), *gg = dev_copy(g, H);
    float *gb = dev_copy(b, H);
    CU_ASSERT_OK(pl_k_layernorm(dY, dmu, drs, dX, dg, db, B, H, 0));
    CU_ASSERT_OK(pl_k_layernorm_backward(gX, gg, gb, dR, dX, dmu, drs, dg, B, H, 0, 0));
    float aX[B * H], ag[H], ab[H];
    host_copy(aX, gX, B * H);
    host_copy(ag, gg, H);
    host_copy(ab, gb, H);
    const float h = 1e-2f;
    struct {
        float *host, *dev, *grad;
        int n;
        const char *name;
    } p[] = {{X, dX, aX, B * H, "X"}, {g, dg, ag, H, "gamma"}, {b, db, ab, H, "beta"}};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < p[k].n; i++) {
            double loss[2];
            float keep = p[k].host[i];
            for (int sgn = 0; sgn < 2; sgn++) {
                p[k].host[i] = keep + (sgn ? -h : h);
                cudaMemcpy(p[k].dev, p[k].host, (size_t)p[k].n * sizeof(float),
                           cudaMemcpyHostToDevice);
                CU_ASSERT_OK(pl_k_layernorm(dY, dmu, drs, dX, dg, db, B, H, 0));
                host_copy(Y, dY, B * H);
                loss[sgn] = 0;
                for (int j = 0; j < B * H; j++) loss[sgn] += (double)R[j] * Y[j];
            }
            p[k].host[i] = keep;
            cudaMemcpy(p[k].dev, p[k].host, (size_t)p[k].n * sizeof(float), cudaMemcpyHostToDevice);
            double fd = (loss[0] - loss[1]) / (2 * h);
            if (!close_enough(fd, p[k].grad[i]))
                fprintf(stderr, "  layernorm d%s[%d]: finite difference %.6f, backward %.6f\n",
                        p[k].name, i, fd, p[k].grad[i]);
            CU_ASSERT(close_enough(fd, p[k].grad[i]));
        }
    float *all[] = {dX, dg, db, dR, dY, dmu, drs, gX, gg, gb};
    for (int i = 0; i < 10; i++) cudaFree(all[i]);
}

/* ---- the whole model ----------------------------------------------------------------- */

/* Every parameter of a 5 -> 6 -> 4 -> 3 MLP on a batch of 4: the backward's
 * gradient against (L(p + h) - L(p - h)) / 2h of the model's own forward
 * and loss, L = sum of losses / 4. */
static void gradcheck_model(pl_activation act)
{
    enum { B = 4 };
    pl_mlp_config cfg = {.layers = 3, .width = {5, 6, 4, 3}, .act = act};
    pl_mlp m;
    cudaError_t e = pl_mlp_create(&m, &cfg, B, 7);
    CU_ASSERT_EQUAL_FATAL(e, cudaSuccess);
    CU_ASSERT_EQUAL(m.nparams, 5 * 6 + 6 + 6 * 4 + 4 + 4 * 3 + 3);
    ref_rng rng = {act == PL_ACT_RELU ? 41u : 42u};
    float x[B * 5];
    int y[B] = {0, 2, 1, 2};
    ref_fill(&rng, x, B * 5, 0, 1);
    float *dx = dev_copy(x, B * 5);
    int *dy;
    cudaMalloc((void **)&dy, sizeof y);
    cudaMemcpy(dy, y, sizeof y, cudaMemcpyHostToDevice);
    /* ReLU: a smaller step, so that no pre-activation crosses its kink */
    const float scale = 1.0f / B, h = act == PL_ACT_RELU ? 1e-3f : 1e-2f;
    CU_ASSERT_OK(pl_mlp_forward(&m, dx, B, 0));
    CU_ASSERT_OK(pl_mlp_loss(&m, dy, B, scale, 0));
    CU_ASSERT_OK(pl_mlp_backward(&m, dx, B, 0, 0));
    long n = m.nparams;
    float *p = malloc((size_t)n * sizeof *p), *g = malloc((size_t)n * sizeof *g);
    host_copy(p, m.params.data, n);
    host_copy(g, m.grads.data, n);
    int bad = 0;
    for (long i = 0; i < n; i++) {
        double loss[2];
        for (int sgn = 0; sgn < 2; sgn++) {
            float keep = p[i];
            p[i] = keep + (sgn ? -h : h);
            cudaMemcpy(m.params.data, p, (size_t)n * sizeof(float), cudaMemcpyHostToDevice);
            p[i] = keep;
            CU_ASSERT_OK(pl_mlp_forward(&m, dx, B, 0));
            CU_ASSERT_OK(pl_mlp_loss(&m, dy, B, scale, 0));
            float s;
            cudaMemcpy(&s, m.loss_sum, sizeof s, cudaMemcpyDeviceToHost);
            loss[sgn] = (double)s * scale;
        }
        double fd = (loss[0] - loss[1]) / (2 * h);
        if (!close_enough(fd, g[i]) && bad++ < 3)
            fprintf(stderr, "  %s model: parameter %ld: finite difference %.6f, backward %.6f\n",
                    act == PL_ACT_RELU ? "relu" : "gelu", i, fd, g[i]);
    }
    CU_ASSERT_EQUAL(bad, 0);
    /* accumulate = 1 adds: the same batch twice gives twice the gradient */
    cudaMemcpy(m.params.data, p, (size_t)n * sizeof(float), cudaMemcpyHostToDevice);
    CU_ASSERT_OK(pl_mlp_forward(&m, dx, B, 0));
    CU_ASSERT_OK(pl_mlp_loss(&m, dy, B, scale, 0));
    CU_ASSERT_OK(pl_mlp_backward(&m, dx, B, 0, 0));
    CU_ASSERT_OK(pl_mlp_loss(&m, dy, B, scale, 0)); /* backward consumed its gradient */
    CU_ASSERT_OK(pl_mlp_backward(&m, dx, B, 1, 0));
    float *g2 = malloc((size_t)n * sizeof *g2);
    host_copy(g2, m.grads.data, n);
    int twice = 1;
    for (long i = 0; i < n; i++) twice &= g2[i] == 2 * g[i];
    CU_ASSERT(twice);
    free(g2);
    free(p);
    free(g);
    cudaFree(dx);
    cudaFree(dy);
    pl_mlp_destroy(&m);
}

static void test_gradcheck_model_gelu(void) { gradcheck_model(PL_ACT_GELU); }
static void test_gradcheck_model_relu(void) { gradcheck_model(PL_ACT_RELU); }

/* The initial parameters depend on the seed only: the same on two devices
 * (one, on a machine with a single GPU), different for another seed, and
 * within PyTorch's nn.Linear bounds. */
static void test_init_deterministic(void)
{
    pl_mlp_config cfg = pl_mlp_default();
    pl_mlp a, b, c;
    int ndev = 0, second;
    CU_ASSERT_OK(cudaGetDeviceCount(&ndev));
    second = ndev > 1 ? 1 : 0;
    CU_ASSERT_OK(cudaSetDevice(0));
    CU_ASSERT_EQUAL_FATAL(pl_mlp_create(&a, &cfg, 8, 123), cudaSuccess);
    CU_ASSERT_OK(cudaSetDevice(second));
    CU_ASSERT_EQUAL_FATAL(pl_mlp_create(&b, &cfg, 8, 123), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(pl_mlp_create(&c, &cfg, 8, 124), cudaSuccess);
    CU_ASSERT_OK(cudaSetDevice(0));
    CU_ASSERT_EQUAL(a.nparams, 64 * 128 + 128 + 128 * 128 + 128 + 128 * 10 + 10);
    CU_ASSERT_EQUAL(a.params.device, 0);
    CU_ASSERT_EQUAL(b.params.device, second);
    long n = a.nparams;
    float *pa = malloc((size_t)n * sizeof *pa), *pb = malloc((size_t)n * sizeof *pb);
    float *pc = malloc((size_t)n * sizeof *pc);
    host_copy(pa, a.params.data, n);
    host_copy(pb, b.params.data, n);
    host_copy(pc, c.params.data, n);
    CU_ASSERT_EQUAL(memcmp(pa, pb, (size_t)n * sizeof *pa), 0);
    CU_ASSERT_NOT_EQUAL(memcmp(pa, pc, (size_t)n * sizeof *pa), 0);
    int in_bounds = 1;
    for (int l = 0; l < cfg.layers; l++) {
        float bound = 1.0f / sqrtf((float)cfg.width[l]);
        for (long i = a.w_off[l]; i < a.b_off[l] + cfg.width[l + 1]; i++)
            in_bounds &= fabsf(pa[i]) <= bound;
    }
    CU_ASSERT(in_bounds);
    free(pa);
    free(pb);
    free(pc);
    pl_mlp_destroy(&a);
    pl_mlp_destroy(&b);
    pl_mlp_destroy(&c);
    pl_mlp_config bad = cfg;
    bad.layers = 0;
    CU_ASSERT_CUDA(pl_mlp_create(&a, &bad, 8, 0), cudaErrorInvalidValue);
    CU_ASSERT_CUDA(pl_mlp_create(&a, &cfg, 0, 0), cudaErrorInvalidValue);
}

/* Tensors: shape, zeroed allocation, host round trip, copy, views. */
static void test_tensor(void)
{
    pl_tensor t, u;
    CU_ASSERT_OK(pl_tensor_alloc(&t, 3, 5));
    CU_ASSERT_EQUAL(pl_tensor_count(&t), 15);
    CU_ASSERT_EQUAL(pl_tensor_bytes(&t), 60);
    float h[15], back[15];
    CU_ASSERT_OK(pl_tensor_to_host(back, &t, 0));
    CU_ASSERT_OK(cudaStreamSynchronize(0));
    int zero = 1;
    for (int i = 0; i < 15; i++) zero &= back[i] == 0.0f;
    CU_ASSERT(zero);
    for (int i = 0; i < 15; i++) h[i] = (float)i * 0.5f;
    CU_ASSERT_OK(pl_tensor_from_host(&t, h, 0));
    CU_ASSERT_OK(pl_tensor_alloc(&u, 3, 5));
    CU_ASSERT_OK(pl_tensor_copy(&u, &t, 0));
    CU_ASSERT_OK(pl_tensor_to_host(back, &u, 0));
    CU_ASSERT_OK(cudaStreamSynchronize(0));
    CU_ASSERT_EQUAL(memcmp(h, back, sizeof h), 0);
    pl_tensor v = pl_tensor_view(u.data + 5, 2, 5, u.device);
    CU_ASSERT_OK(pl_tensor_to_host(back, &v, 0));
    CU_ASSERT_OK(cudaStreamSynchronize(0));
    CU_ASSERT_EQUAL(back[0], 2.5f);
    pl_tensor_free(&v); /* a view: frees nothing */
    pl_tensor w = pl_tensor_view(u.data, 5, 3, u.device);
    CU_ASSERT_CUDA(pl_tensor_copy(&w, &t, 0), cudaErrorInvalidValue); /* 5x3 is not 3x5 */
    CU_ASSERT_CUDA(pl_tensor_alloc(&w, -1, 3), cudaErrorInvalidValue);
    CU_ASSERT_PTR_NULL(w.data);
    pl_tensor_free(&t);
    pl_tensor_free(&u);
    CU_ASSERT_PTR_NULL(u.data);
}

int register_mlp_suite(void)
{
    static const unit_test t[] = {
        {"gradient check: linear layer (W, b, X)", test_gradcheck_linear},
        {"gradient check: GELU", test_gradcheck_gelu},
        {"gradient check: ReLU", test_gradcheck_relu},
        {"gradient check: softmax + cross-entropy", test_gradcheck_softmax_xent},
        {"gradient check: LayerNorm (X, gamma, beta)", test_gradcheck_layernorm},
        {"gradient check: the whole MLP, GELU; accumulate adds", test_gradcheck_model_gelu},
        {"gradient check: the whole MLP, ReLU", test_gradcheck_model_relu},
        {"initialisation: the seed alone decides", test_init_deterministic},
        {"tensors", test_tensor},
    };
    return UNIT_SUITE("mlp", t);
}
