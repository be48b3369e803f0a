/* nn_ref.c — see nn_ref.h. */
#include <math.h>
#include <stdlib.h>

#include "nn_ref.h"

void ref_matmul(float *C, double *mag, const float *A, const float *B, int M, int N, int K,
                pl_mm_form form, int accumulate)
{
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double s = accumulate ? C[(long)m * N + n] : 0.0, a_b = 0.0;
            for (int k = 0; k < K; k++) {
                double a = form == PL_TN ? A[(long)k * M + m] : A[(long)m * K + k];
                double b = form == PL_NT ? B[(long)n * K + k] : B[(long)k * N + n];
                s += a * b;
                a_b += fabs(a * b);
            }
            C[(long)m * N + n] = (float)s;
            if (mag) mag[(long)m * N + n] = a_b;
        }
}

void ref_bias_add(float *Y, const float *b, int M, int N)
{
    for (long i = 0; i < (long)M * N; i++) Y[i] = (float)((double)Y[i] + b[i % N]);
}

void ref_bias_grad(float *db, const float *dY, int M, int N, int accumulate)
{
    for (int n = 0; n < N; n++) {
        double s = accumulate ? db[n] : 0.0;
        for (int m = 0; m < M; m++) s += dY[(long)m * N + n];
        db[n] = (float)s;
    }
}

double ref_gelu(double x)
{
    const double k = sqrt(2.0 / M_PI), c = 0.044715;
    return 0.5 * x * (1.0 + tanh(k * (x + c * x * x * x)));
}

double ref_gelu_grad(double x)
{
    const double k = sqrt(2.0 / M_PI), c = 0.044715;
    double th = tanh(k * (x + c * x * x * x));
    return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * k * (1.0 + 3.0 * c * x * x);
}

void ref_softmax_xent(float *probs, float *losses, const float *logits, const int *labels, int M,
                      int C)
{
    for (int r = 0; r < M; r++) {
        const float *z = logits + (long)r * C;
        double mx = z[0], sum = 0.0;
        for (int c = 1; c < C; c++) mx = z[c] > mx ? z[c] : mx;
        for (int c = 0; c < C; c++) sum += exp(z[c] - mx);
        for (int c = 0; c < C; c++) probs[(long)r * C + c] = (float)(exp(z[c] - mx) / sum);
        int y = labels[r];
        losses[r] = y >= 0 && y < C ? (float)(log(sum) - (z[y] - mx)) : NAN;
    }
}

void ref_layernorm(float *y, float *mean, float *rstd, const float *x, const float *gamma,
                   const float *beta, int rows, int h)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (long)r * h;
        double m = 0.0, var = 0.0;
        for (int i = 0; i < h; i++) m += xr[i];
        m /= h;
        for (int i = 0; i < h; i++) var += (xr[i] - m) * (xr[i] - m);
        var /= h;
        double rs = 1.0 / sqrt(var + 1e-5);
        for (int i = 0; i < h; i++)
            y[(long)r * h + i] = (float)((xr[i] - m) * rs * gamma[i] + beta[i]);
        mean[r] = (float)m;
        rstd[r] = (float)rs;
    }
}

/* dnorm = dy gamma; dx = rstd (dnorm - mean(dnorm) - norm mean(dnorm norm)) */
void ref_layernorm_backward(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x,
                            const float *mean, const float *rstd, const float *gamma, int rows,
                            int h, int accumulate)
{
    double *dg = calloc((size_t)h, sizeof *dg), *db = calloc((size_t)h, sizeof *db);
    for (int c = 0; c < h && accumulate; c++) {
        dg[c] = dgamma[c];
        db[c] = dbeta[c];
    }
    for (int r = 0; r < rows; r++) {
        long off = (long)r * h;
        double sg = 0.0, sgn = 0.0;
        for (int i = 0; i < h; i++) {
            double n = ((double)x[off + i] - mean[r]) * rstd[r], g = (double)dy[off + i] * gamma[i];
            sg += g;
            sgn += g * n;
            dg[i] += (double)dy[off + i] * n;
            db[i] += dy[off + i];
        }
        sg /= h;
        sgn /= h;
        for (int i = 0; i < h; i++) {
            double n = ((double)x[off + i] - mean[r]) * rstd[r];
            dx[off + i] = (float)(rstd[r] * ((double)dy[off + i] * gamma[i] - sg - n * sgn));
        }
    }
    for (int c = 0; c < h; c++) {
        dgamma[c] = (float)dg[c];
        dbeta[c] = (float)db[c];
    }
    free(dg);
    free(db);
}

void ref_sgd(float *w, float *v, const float *g, long n, float lr, float mu, float wd)
{
    for (long i = 0; i < n; i++) {
        double vi = (double)mu * v[i] + ((double)g[i] + (double)wd * w[i]);
        v[i] = (float)vi;
        w[i] = (float)(w[i] - (double)lr * vi);
    }
}

void ref_adamw(float *w, float *m, float *v, const float *g, long n, float lr, float b1, float b2,
               float eps, float wd, int t)
{
    double c1 = 1.0 - pow(b1, t), c2 = 1.0 - pow(b2, t);
    for (long i = 0; i < n; i++) {
        double mi = (double)b1 * m[i] + (1.0 - b1) * g[i];
        double vi = (double)b2 * v[i] + (1.0 - b2) * (double)g[i] * g[i];
        m[i] = (float)mi;
        v[i] = (float)vi;
        w[i] = (float)(w[i] - (double)lr * ((mi / c1) / (sqrt(vi / c2) + eps) + (double)wd * w[i]));
    }
}

int ref_count_correct(const float *logits, const int *labels, int M, int C)
{
    int correct = 0;
    for (int r = 0; r < M; r++) {
        int best = 0;
        for (int c = 1; c < C; c++)
            if (logits[(long)r * C + c] > logits[(long)r * C + best]) best = c;
        correct += best == labels[r];
    }
    return correct;
}

double ref_uniform(ref_rng *r, double lo, double hi)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    unsigned long long x = r->s * 2685821657736338717ull;
    return lo + (hi - lo) * (double)(x >> 11) / 9007199254740992.0;
}

void ref_fill(ref_rng *r, float *x, long n, double lo, double hi)
{
    for (long i = 0; i < n; i++) x[i] = (float)ref_uniform(r, lo, hi);
}
