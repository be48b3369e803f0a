/*
 * blocks_ref.c — the block model (paralab/blocks.h) on the host, in double:
 * a whole model's forward, loss and backward, written straight from the
 * formulas with no code shared with core/model/blocks.c but the layout.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blocks_ref.h"
#include "nn_ref.h"

/* Y[M,N] = X[M,K] W[K,N] + b[N] */
static void linear(double *Y, const double *X, const float *W, const float *b, int M, int N, int K)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = b ? b[j] : 0;
            for (int k = 0; k < K; k++) s += X[(long)i * K + k] * W[(long)k * N + j];
            Y[(long)i * N + j] = s;
        }
}

/* dW += Xᵀ dY, db += colsum dY, dX = dY Wᵀ (dX may be NULL) */
static void linear_back(double *dX, double *dW, double *db, const double *X, const double *dY,
                        const float *W, int M, int N, int K)
{
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int i = 0; i < M; i++) s += X[(long)i * K + k] * dY[(long)i * N + j];
            dW[(long)k * N + j] += s;
        }
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++) db[j] += dY[(long)i * N + j];
    if (dX)
        for (int i = 0; i < M; i++)
            for (int k = 0; k < K; k++) {
                double s = 0;
                for (int j = 0; j < N; j++) s += dY[(long)i * N + j] * W[(long)k * N + j];
                dX[(long)i * K + k] = s;
            }
}

static void ln_fwd(double *y, double *xhat, double *rstd, const double *x, const float *g,
                   const float *b, int M, int h)
{
    for (int i = 0; i < M; i++) {
        double mu = 0, var = 0;
        for (int k = 0; k < h; k++) mu += x[(long)i * h + k];
        mu /= h;
        for (int k = 0; k < h; k++) var += (x[(long)i * h + k] - mu) * (x[(long)i * h + k] - mu);
        var /= h;
        rstd[i] = 1.0 / sqrt(var + 1e-5);
        for (int k = 0; k < h; k++) {
            xhat[(long)i * h + k] = (x[(long)i * h + k] - mu) * rstd[i];
            y[(long)i * h + k] = xhat[(long)i * h + k] * g[k] + b[k];
        }
    }
}

/* dx (+=) from dy; dg, db += */
static void ln_back(double *dx, double *dg, double *db, const double *dy, const double *xhat,
                    const double *rstd, const float *g, int M, int h)
{
    for (int i = 0; i < M; i++) {
        double m1 = 0, m2 = 0;
        for (int k = 0; k < h; k++) {
            double dn = dy[(long)i * h + k] * g[k];
            m1 += dn;
            m2 += dn * xhat[(long)i * h + k];
            dg[k] += dy[(long)i * h + k] * xhat[(long)i * h + k];
            db[k] += dy[(long)i * h + k];
        }
        m1 /= h;
        m2 /= h;
        for (int k = 0; k < h; k++) {
            double dn = dy[(long)i * h + k] * g[k];
            dx[(long)i * h + k] += rstd[i] * (dn - m1 - xhat[(long)i * h + k] * m2);
        }
    }
}

double ref_blocks_step(const pl_blocks_config *c, const float *w, const float *X, const int *y,
                       int B, double scale, double *logits, double *grads)
{
    pl_blocks_layout l;
    pl_blocks_layout_make(&l, c, pl_blocks_whole(c), NULL, 0);
    int h = c->hidden, f = c->ffn, L = c->layers, C = c->classes;
    long n = l.nparams;
    double *x = calloc((size_t)(L + 2) * B * h, sizeof *x); /* x[j], j = 0..L */
    double *xh = calloc((size_t)(L + 1) * B * h, sizeof *xh);
    double *rs = calloc((size_t)(L + 1) * B, sizeof *rs);
    double *lnj = calloc((size_t)(L + 1) * B * h, sizeof *lnj);
    double *z = calloc((size_t)L * B * f, sizeof *z), *a = calloc((size_t)L * B * f, sizeof *a);
    double *Xd = calloc((size_t)B * c->inputs, sizeof *Xd), *t = calloc((size_t)B * h, 8);
    double *dx = calloc((size_t)B * h, 8), *dl = calloc((size_t)B * h, 8);
    double *da = calloc((size_t)B * f, 8), *dlog = calloc((size_t)B * C, 8);
    for (long i = 0; i < (long)B * c->inputs; i++) Xd[i] = X[i];
    memset(grads, 0, (size_t)n * sizeof *grads);
#define XJ(j) (x + (long)(j)*B * h)
    linear(XJ(0), Xd, w + l.in_w, w + l.in_b, B, h, c->inputs);
    for (int j = 0; j < L; j++) {
        const pl_block_offsets *o = &l.block[j];
        double *lnv = lnj + (long)j * B * h;
        ln_fwd(lnv, xh + (long)j * B * h, rs + (long)j * B, XJ(j), w + o->ln_g, w + o->ln_b, B, h);
        linear(z + (long)j * B * f, lnv, w + o->w1, w + o->b1, B, f, h);
        for (long i = 0; i < (long)B * f; i++)
            a[(long)j * B * f + i] = ref_gelu(z[(long)j * B * f + i]);
        linear(t, a + (long)j * B * f, w + o->w2, w + o->b2, B, h, f);
        for (long i = 0; i < (long)B * h; i++) XJ(j + 1)[i] = XJ(j)[i] + t[i];
    }
    double *lnf = lnj + (long)L * B * h;
    ln_fwd(lnf, xh + (long)L * B * h, rs + (long)L * B, XJ(L), w + l.lnf_g, w + l.lnf_b, B, h);
    linear(logits, lnf, w + l.wc, w + l.bc, B, C, h);
    double loss = 0;
    for (int i = 0; i < B; i++) {
        double mx = -INFINITY, s = 0;
        for (int k = 0; k < C; k++) mx = fmax(mx, logits[(long)i * C + k]);
        for (int k = 0; k < C; k++) s += exp(logits[(long)i * C + k] - mx);
        loss += log(s) - (logits[(long)i * C + y[i]] - mx);
        for (int k = 0; k < C; k++)
            dlog[(long)i * C + k] = (exp(logits[(long)i * C + k] - mx) / s - (k == y[i])) * scale;
    }
    double *g = grads;
    memset(dl, 0, (size_t)B * h * 8);
    linear_back(dl, g + l.wc, g + l.bc, lnf, dlog, w + l.wc, B, C, h);
    memset(dx, 0, (size_t)B * h * 8);
    ln_back(dx, g + l.lnf_g, g + l.lnf_b, dl, xh + (long)L * B * h, rs + (long)L * B, w + l.lnf_g,
            B, h);
    for (int j = L - 1; j >= 0; j--) {
        const pl_block_offsets *o = &l.block[j];
        linear_back(da, g + o->w2, g + o->b2, a + (long)j * B * f, dx, w + o->w2, B, h, f);
        for (long i = 0; i < (long)B * f; i++) da[i] *= ref_gelu_grad(z[(long)j * B * f + i]);
        linear_back(dl, g + o->w1, g + o->b1, lnj + (long)j * B * h, da, w + o->w1, B, f, h);
        ln_back(dx, g + o->ln_g, g + o->ln_b, dl, xh + (long)j * B * h, rs + (long)j * B,
                w + o->ln_g, B, h); /* dx += : the residual */
    }
    linear_back(NULL, g + l.in_w, g + l.in_b, Xd, dx, w + l.in_w, B, h, c->inputs);
#undef XJ
    free(x), free(xh), free(rs), free(lnj), free(z), free(a), free(Xd), free(t);
    free(dx), free(dl), free(da), free(dlog);
    return loss;
}
