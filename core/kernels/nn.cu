/*
 * nn.cu — the kernels of the MLP (paralab/nn.h): the tiled matrix multiply
 * in the three forms backward needs, bias, GELU and ReLU, fused softmax and
 * cross-entropy and its vocabulary-parallel form, LayerNorm, a deterministic
 * sum, accuracy, SGD and AdamW, and the vector helpers.
 *
 * Element-wise kernels: each block owns one contiguous tile of TILE = 256
 * threads x 16 elements and its threads stride through it by 256, so a
 * warp's accesses stay coalesced on a GPU and the emulator pays its
 * per-thread cost once per 16 elements (see reduce.cu).
 */
#include <float.h>
#include <limits.h>
#include <math.h>

#include "simt/kernel.h"

#include "paralab/nn.h"

#define THREADS 256u
#define TILE (THREADS * 16u)

static dim3 grid_1d(long n)
{
    long blocks = (n + (long)TILE - 1) / (long)TILE;
    dim3 g = {(unsigned)(blocks > 0 ? blocks : 1), 1, 1};
    return g;
}

static dim3 block_1d(void)
{
    dim3 b = {THREADS, 1, 1};
    return b;
}

/* [first, end) of this thread's elements: the block's tile, by 256. */
#define TILE_FIRST() ((long)blockIdx.x * (long)TILE + (long)threadIdx.x)
#define TILE_END(n)                                                                                \
    ((long)blockIdx.x * (long)TILE + (long)TILE < (n) ? (long)blockIdx.x * (long)TILE + (long)TILE \
                                                      : (n))

/* ---- matrix multiply ------------------------------------------------------------------ */

#define MM_BM 64 /* rows of C per block */
#define MM_BN 64 /* columns of C per block */
#define MM_BK 16 /* the K-slice staged in shared memory */

/* One 64x64 tile of C per block of 16x16 threads (a 1-D block of 256).
 * Thread (tx, ty) computes rows ty + 16 i and columns tx + 16 j (i, j < 4):
 * neighbouring threads write neighbouring columns (coalesced) and read
 * neighbouring shared words (no bank conflicts). Each K-slice of A and B
 * is loaded by all 256 threads, in the order that makes global reads
 * contiguous for the operand's layout, with zeros past the edges, so any
 * M, N, K works. */
static __global__ void matmul_tiled(float *C, const float *A, const float *B, int M, int N, int K,
                                    int form, int accumulate)
{
    __shared__ float As[MM_BK][MM_BM]; /* As[k][m] = op(A)[m0 + m][k0 + k] */
    __shared__ float Bs[MM_BK][MM_BN]; /* Bs[k][n] = op(B)[k0 + k][n0 + n] */
    int t = (int)threadIdx.x, tx = t % 16, ty = t / 16;
    int m0 = (int)blockIdx.y * MM_BM, n0 = (int)blockIdx.x * MM_BN;
    int ta = form == PL_TN, tb = form == PL_NT;
    float acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += MM_BK) {
        for (int e = t; e < MM_BK * MM_BM; e += (int)THREADS) {
            /* A[M,K]: consecutive threads read consecutive k; Aᵀ (A[K,M]): m */
            int kk = ta ? e / MM_BM : e % MM_BK, mm = ta ? e % MM_BM : e / MM_BK;
            int m = m0 + mm, k = k0 + kk;
            float v = 0.0f;
            if (m < M && k < K) v = ta ? A[(long)k * M + m] : A[(long)m * K + k];
            As[kk][mm] = v;
        }
        for (int e = t; e < MM_BK * MM_BN; e += (int)THREADS) {
            /* B[K,N]: consecutive threads read consecutive n; Bᵀ (B[N,K]): k */
            int kk = tb ? e % MM_BK : e / MM_BN, nn = tb ? e / MM_BK : e % MM_BN;
            int n = n0 + nn, k = k0 + kk;
            float v = 0.0f;
            if (n < N && k < K) v = tb ? B[(long)n * K + k] : B[(long)k * N + n];
            Bs[kk][nn] = v;
        }
        __syncthreads();
        for (int kk = 0; kk < MM_BK; kk++) {
            float a[4], b[4];
            for (int i = 0; i < 4; i++) a[i] = As[kk][ty + 16 * i];
            for (int j = 0; j < 4; j++) b[j] = Bs[kk][tx + 16 * j];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads(); /* before the next slice overwrites As and Bs */
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
            if (m < M && n < N) {
                long at = (long)m * N + n;
                C[at] = accumulate ? C[at] + acc[i][j] : acc[i][j];
            }
        }
}
SIMT_LAUNCHER(matmul_tiled,
              (float *C, const float *A, const float *B, int M, int N, int K, int form,
               int accumulate),
              (C, A, B, M, N, K, form, accumulate))

cudaError_t pl_k_matmul(float *C, const float *A, const float *B, int M, int N, int K,
                        pl_mm_form form, int accumulate, cudaStream_t stream)
{
    if (M < 0 || N < 0 || K < 0 || (unsigned)form > PL_TN) return cudaErrorInvalidValue;
    if (M == 0 || N == 0) return cudaSuccess;
    if (!C || (K > 0 && (!A || !B))) return cudaErrorInvalidValue;
    dim3 g = {(unsigned)((N + MM_BN - 1) / MM_BN), (unsigned)((M + MM_BM - 1) / MM_BM), 1};
    /* global traffic: each 64-wide tile of C reads its rows of A and
     * columns of B once, so A is read once per column tile and B once per
     * row tile */
    SIMT_LAUNCH_COST(2.0 * M * N * K, 4.0 * ((double)M * K * g.x + (double)K * N * g.y +
                                             (double)M * N * (1 + accumulate)));
    return launch_matmul_tiled(g, block_1d(), 0, stream, C, A, B, M, N, K, (int)form, accumulate);
}

/* ---- bias ------------------------------------------------------------------------------ */

static __global__ void bias_add(float *Y, const float *b, long total, int N)
{
    for (long i = TILE_FIRST(), end = TILE_END(total); i < end; i += THREADS) Y[i] += b[i % N];
}
SIMT_LAUNCHER(bias_add, (float *Y, const float *b, long total, int N), (Y, b, total, N))

cudaError_t pl_k_bias_add(float *Y, const float *b, int M, int N, cudaStream_t stream)
{
    if (M < 0 || N < 0) return cudaErrorInvalidValue;
    long total = (long)M * N;
    if (total == 0) return cudaSuccess;
    if (!Y || !b) return cudaErrorInvalidValue;
    SIMT_LAUNCH_COST((double)total, 4.0 * (2.0 * total + N));
    return launch_bias_add(grid_1d(total), block_1d(), 0, stream, Y, b, total, N);
}

/* One thread per column, down the rows: neighbouring threads read
 * neighbouring columns of a row (coalesced). */
static __global__ void bias_grad(float *db, const float *dY, int M, int N, int accumulate)
{
    for (int n = (int)(blockIdx.x * blockDim.x + threadIdx.x); n < N;
         n += (int)(blockDim.x * gridDim.x)) {
        float s = 0.0f;
        for (int m = 0; m < M; m++) s += dY[(long)m * N + n];
        db[n] = accumulate ? db[n] + s : s;
    }
}
SIMT_LAUNCHER(bias_grad, (float *db, const float *dY, int M, int N, int accumulate),
              (db, dY, M, N, accumulate))

cudaError_t pl_k_bias_grad(float *db, const float *dY, int M, int N, int accumulate,
                           cudaStream_t stream)
{
    if (M < 0 || N < 0) return cudaErrorInvalidValue;
    if (N == 0) return cudaSuccess;
    if (!db || (M > 0 && !dY)) return cudaErrorInvalidValue;
    dim3 g = {(unsigned)((N + (int)THREADS - 1) / (int)THREADS), 1, 1};
    SIMT_LAUNCH_COST((double)M * N, 4.0 * ((double)M * N + 2.0 * N));
    return launch_bias_grad(g, block_1d(), 0, stream, db, dY, M, N, accumulate);
}

/* ---- activations ------------------------------------------------------------------------ */

#define GELU_K 0.7978845608028654f /* sqrt(2 / pi) */
#define GELU_C 0.044715f

static __global__ void gelu_fwd(float *y, const float *x, long n)
{
    for (long i = TILE_FIRST(), end = TILE_END(n); i < end; i += THREADS) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhf(GELU_K * (v + GELU_C * v * v * v)));
    }
}
SIMT_LAUNCHER(gelu_fwd, (float *y, const float *x, long n), (y, x, n))

/* d/dx of 0.5 x (1 + tanh u), u = k (x + c x^3):
 * 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) k (1 + 3 c x^2) */
static __global__ void gelu_bwd(float *dx, const float *dy, const float *x, long n)
{
    for (long i = TILE_FIRST(), end = TILE_END(n); i < end; i += THREADS) {
        float v = x[i], th = tanhf(GELU_K * (v + GELU_C * v * v * v));
        float d = 0.5f * (1.0f + th) +
                  0.5f * v * (1.0f - th * th) * GELU_K * (1.0f + 3.0f * GELU_C * v * v);
        dx[i] = dy[i] * d;
    }
}
SIMT_LAUNCHER(gelu_bwd, (float *dx, const float *dy, const float *x, long n), (dx, dy, x, n))

static __global__ void relu_fwd(float *y, const float *x, long n)
{
    for (long i = TILE_FIRST(), end = TILE_END(n); i < end; i += THREADS)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
SIMT_LAUNCHER(relu_fwd, (float *y, const float *x, long n), (y, x, n))

static __global__ void relu_bwd(float *dx, const float *dy, const float *x, long n)
{
    for (long i = TILE_FIRST(), end = TILE_END(n); i < end; i += THREADS)
        dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
}
SIMT_LAUNCHER(relu_bwd, (float *dx, const float *dy, const float *x, long n), (dx, dy, x, n))

cudaError_t pl_k_gelu(float *y, const float *x, long n, cudaStream_t stream)
{
    if (n < 0 || (n && (!y || !x))) return cudaErrorInvalidValue;
    if (!n) return cudaSuccess;
    SIMT_LAUNCH_COST(12.0 * n, 8.0 * n);
    return launch_gelu_fwd(grid_1d(n), block_1d(), 0, stream, y, x, n);
}

cudaError_t pl_k_gelu_backward(float *dx, const float *dy, const float *x, long n,
                               cudaStream_t stream)
{
    if (n < 0 || (n && (!dx || !dy || !x))) return cudaErrorInvalidValue;
    if (!n) return cudaSuccess;
    SIMT_LAUNCH_COST(20.0 * n, 12.0 * n);
    return launch_gelu_bwd(grid_1d(n), block_1d(), 0, stream, dx, dy, x, n);
}

cudaError_t pl_k_relu(float *y, const float *x, long n, cudaStream_t stream)
{
    if (n < 0 || (n && (!y || !x))) return cudaErrorInvalidValue;
    if (!n) return cudaSuccess;
    SIMT_LAUNCH_COST((double)n, 8.0 * n);
    return launch_relu_fwd(grid_1d(n), block_1d(), 0, stream, y, x, n);
}

cudaError_t pl_k_relu_backward(float *dx, const float *dy, const float *x, long n,
                               cudaStream_t stream)
{
    if (n < 0 || (n && (!dx || !dy || !x))) return cudaErrorInvalidValue;
    if (!n) return cudaSuccess;
    SIMT_LAUNCH_COST((double)n, 12.0 * n);
    return launch_relu_bwd(grid_1d(n), block_1d(), 0, stream, dx, dy, x, n);
}

/* ---- softmax and cross-entropy ----------------------------------------------------------- */

/* One thread per row: a classifier has few classes (10 here). */
static __global__ void softmax_xent_fwd(float *probs, float *losses, const float *logits,
                                        const int *labels, int M, int C)
{
    for (int r = (int)(blockIdx.x * blockDim.x + threadIdx.x); r < M;
         r += (int)(blockDim.x * gridDim.x)) {
        const float *z = logits + (long)r * C;
        float *p = probs + (long)r * C;
        float mx = z[0];
        for (int c = 1; c < C; c++) mx = z[c] > mx ? z[c] : mx;
        float sum = 0.0f;
        for (int c = 0; c < C; c++) {
            p[c] = expf(z[c] - mx);
            sum += p[c];
        }
        for (int c = 0; c < C; c++) p[c] /= sum;
        int y = labels[r];
        losses[r] = y >= 0 && y < C ? logf(sum) - (z[y] - mx) : NAN;
    }
}
SIMT_LAUNCHER(softmax_xent_fwd,
              (float *probs, float *losses, const float *logits, const int *labels, int M, int C),
              (probs, losses, logits, labels, M, C))

static __global__ void softmax_xent_bwd(float *dlogits, const float *probs, const int *labels,
                                        long total, int C, float scale)
{
    for (long i = TILE_FIRST(), end = TILE_END(total); i < end; i += THREADS) {
        int c = (int)(i % C);
        float onehot = labels[i / C] == c ? 1.0f : 0.0f;
        dlogits[i] = (probs[i] - onehot) * scale;
    }
}
SIMT_LAUNCHER(softmax_xent_bwd,
              (float *dlogits, const float *probs, const int *labels, long total, int C,
               float scale),
              (dlogits, probs, labels, total, C, scale))

static dim3 grid_rows(int M)
{
    dim3 g = {(unsigned)((M + (int)THREADS - 1) / (int)THREADS), 1, 1};
    return g;
}

cudaError_t pl_k_softmax_xent(float *probs, float *losses, const float *logits, const int *labels,
                              int M, int C, cudaStream_t stream)
{
    if (M < 0 || C < 1) return cudaErrorInvalidValue;
    if (M == 0) return cudaSuccess;
    if (!probs || !losses || !logits || !labels) return cudaErrorInvalidValue;
    SIMT_LAUNCH_COST(6.0 * M * C, 4.0 * (2.0 * M * C + 2.0 * M));
    return launch_softmax_xent_fwd(grid_rows(M), block_1d(), 0, stream, probs, losses, logits,
                                   labels, M, C);
}

cudaError_t pl_k_softmax_xent_backward(float *dlogits, const float *probs, const int *labels, int M,
                                       int C, float scale, cudaStream_t stream)
{
    if (M < 0 || C < 1) return cudaErrorInvalidValue;
    long total = (long)M * C;
    if (total == 0) return cudaSuccess;
    if (!dlogits || !probs || !labels) return cudaErrorInvalidValue;
    SIMT_LAUNCH_COST(2.0 * total, 4.0 * (2.0 * total + M));
    return launch_softmax_xent_bwd(grid_1d(total), block_1d(), 0, stream, dlogits, probs, labels,
                                   total, C, scale);
}

/* ---- vocabulary-parallel softmax cross-entropy ---------------------------------------------- */

/* One thread per row (few classes per rank), the valid columns left to
 * right, in the same order and with the same float operations as
 * softmax_xent_fwd, so with t = 1 the max, the sum, the loss and the
 * gradient are its bits. The padding columns (valid .. Cl-1) are never
 * read. */

/* The first valid column's value, then the larger of each next one
 * (softmax_xent_fwd's comparison); -FLT_MAX with no valid column. */
static __global__ void vp_max(float *rowmax, const float *logits, int M, int Cl, int valid)
{
    for (int r = (int)(blockIdx.x * blockDim.x + threadIdx.x); r < M;
         r += (int)(blockDim.x * gridDim.x)) {
        const float *z = logits + (long)r * Cl;
        float mx = valid > 0 ? z[0] : -FLT_MAX;
        for (int c = 1; c < valid; c++) mx = z[c] > mx ? z[c] : mx;
        rowmax[r] = mx;
    }
}
SIMT_LAUNCHER(vp_max, (float *rowmax, const float *logits, int M, int Cl, int valid),
              (rowmax, logits, M, Cl, valid))

static __global__ void vp_partials(float *sumexp, float *target, const float *logits,
                                   const int *labels, const float *rowmax, int M, int Cl, int valid,
                                   int col0)
{
    for (int r = (int)(blockIdx.x * blockDim.x + threadIdx.x); r < M;
         r += (int)(blockDim.x * gridDim.x)) {
        const float *z = logits + (long)r * Cl;
        float mx = rowmax[r], sum = 0.0f;
        for (int c = 0; c < valid; c++) sum += expf(z[c] - mx);
        int y = labels[r] - col0; /* the label's local column */
        sumexp[r] = sum;
        target[r] = y >= 0 && y < valid ? z[y] - mx : 0.0f;
    }
}
SIMT_LAUNCHER(vp_partials,
              (float *sumexp, float *target, const float *logits, const int *labels,
               const float *rowmax, int M, int Cl, int valid, int col0),
              (sumexp, target, logits, labels, rowmax, M, Cl, valid, col0))

static __global__ void vp_loss(float *losses, const float *sumexp, const float *target, int M)
{
    for (long i = TILE_FIRST(), end = TILE_END(M); i < end; i += THREADS)
        losses[i] = logf(sumexp[i]) - target[i];
}
SIMT_LAUNCHER(vp_loss, (float *losses, const float *sumexp, const float *target, int M),
              (losses, sumexp, target, M))

/* Element-wise over [M, Cl] (as softmax_xent_bwd): p = exp(z - max) / sum
 * is softmax_xent_fwd's probability, bit for bit, when max and sum are its
 * own. Each element is read before it is written: dlogits may be logits. */
static __global__ void vp_bwd(float *dlogits, const float *logits, const int *labels,
                              const float *rowmax, const float *sumexp, long total, int Cl,
                              int valid, int col0, float scale)
{
    for (long i = TILE_FIRST(), end = TILE_END(total); i < end; i += THREADS) {
        int c = (int)(i % Cl);
        long r = i / Cl;
        float d = 0.0f; /* padding */
        if (c < valid) {
            float p = expf(logits[i] - rowmax[r]) / sumexp[r];
            float onehot = labels[r] - col0 == c ? 1.0f : 0.0f;
            d = (p - onehot) * scale;
        }
        dlogits[i] = d;
    }
}
SIMT_LAUNCHER(vp_bwd,
              (float *dlogits, const float *logits, const int *labels, const float *rowmax,
               const float *sumexp, long total, int Cl, int valid, int col0, float scale),
              (dlogits, logits, labels, rowmax, sumexp, total, Cl, valid, col0, scale))

/* The first valid column holding the global max, as a class; INT_MAX when
 * none does, so the group's PL_MIN picks the first rank's, the first
 * largest class overall (count_correct's tie rule). */
static __global__ void vp_argmax(int *pred, const float *logits, const float *rowmax, int M, int Cl,
                                 int valid, int col0)
{
    for (int r = (int)(blockIdx.x * blockDim.x + threadIdx.x); r < M;
         r += (int)(blockDim.x * gridDim.x)) {
        const float *z = logits + (long)r * Cl;
        float mx = rowmax[r];
        int best = INT_MAX;
        for (int c = 0; c < valid; c++)
            if (z[c] == mx) {
                best = col0 + c;
                break;
            }
        pred[r] = best;
    }
}
SIMT_LAUNCHER(vp_argmax,
              (int *pred, const float *logits, const float *rowmax, int M, int Cl, int valid,
               int col0),
              (pred, logits, rowmax, M, Cl, valid, col0))

static __global__ void count_equal(int *correct, const int *pred, const int *labels, int M)
{
    for (int r = (int)(blockIdx.x * blockDim.x + threadIdx.x); r < M;
         r += (int)(blockDim.x * gridDim.x))
        if (pred[r] == labels[r]) atomicAdd(correct, 1);
}
SIMT_LAUNCHER(count_equal, (int *correct, const int *pred, const int *labels, int M),
              (correct, pred, labels, M))

/* The shape checks every vocabulary-parallel kernel shares. */
static int vp_bad_shape(int M, int Cl, int valid, int col0)
{
    return M < 1 || Cl < 1 || valid < 0 || valid > Cl || col0 < 0 || col0 > INT_MAX - Cl;
}

cudaError_t pl_k_vp_max(float *rowmax, const float *logits, int M, int Cl, int valid,
                        cudaStream_t stream)
{
    if (vp_bad_shape(M, Cl, valid, 0) || !rowmax || !logits) return cudaErrorInvalidValue;
    double n = (double)M * valid;
    SIMT_LAUNCH_COST(n, 4.0 * (n + M));
    return launch_vp_max(grid_rows(M), block_1d(), 0, stream, rowmax, logits, M, Cl, valid);
}

cudaError_t pl_k_vp_partials(float *sumexp, float *target, const float *logits, const int *labels,
                             const float *rowmax, int M, int Cl, int valid, int col0,
                             cudaStream_t stream)
{
    if (vp_bad_shape(M, Cl, valid, col0) || !sumexp || !target || !logits || !labels || !rowmax)
        return cudaErrorInvalidValue;
    double n = (double)M * valid;
    SIMT_LAUNCH_COST(3.0 * n + M, 4.0 * (n + 4.0 * M));
    return launch_vp_partials(grid_rows(M), block_1d(), 0, stream, sumexp, target, logits, labels,
                              rowmax, M, Cl, valid, col0);
}

cudaError_t pl_k_vp_loss(float *losses, const float *sumexp, const float *target, int M,
                         cudaStream_t stream)
{
    if (M < 1 || !losses || !sumexp || !target) return cudaErrorInvalidValue;
    SIMT_LAUNCH_COST(2.0 * M, 12.0 * M);
    return launch_vp_loss(grid_1d(M), block_1d(), 0, stream, losses, sumexp, target, M);
}

cudaError_t pl_k_vp_backward(float *dlogits, const float *logits, const int *labels,
                             const float *rowmax, const float *sumexp, int M, int Cl, int valid,
                             int col0, float scale, cudaStream_t stream)
{
    if (vp_bad_shape(M, Cl, valid, col0) || !dlogits || !logits || !labels || !rowmax || !sumexp)
        return cudaErrorInvalidValue;
    long total = (long)M * Cl;
    double n = (double)M * valid;
    SIMT_LAUNCH_COST(5.0 * n, 4.0 * (n + (double)total + 3.0 * M));
    return launch_vp_bwd(grid_1d(total), block_1d(), 0, stream, dlogits, logits, labels, rowmax,
                         sumexp, total, Cl, valid, col0, scale);
}

cudaError_t pl_k_vp_argmax(int *pred, const float *logits, const float *rowmax, int M, int Cl,
                           int valid, int col0, cudaStream_t stream)
{
    if (vp_bad_shape(M, Cl, valid, col0) || !pred || !logits || !rowmax)
        return cudaErrorInvalidValue;
    double n = (double)M * valid;
    SIMT_LAUNCH_COST(n, 4.0 * (n + 2.0 * M));
    return launch_vp_argmax(grid_rows(M), block_1d(), 0, stream, pred, logits, rowmax, M, Cl, valid,
                            col0);
}

cudaError_t pl_k_count_equal(int *correct, const int *pred, const int *labels, int M,
                             cudaStream_t stream)
{
    if (M < 1 || !correct || !pred || !labels) return cudaErrorInvalidValue;
    SIMT_LAUNCH_COST((double)M, 8.0 * M + 4.0);
    return launch_count_equal(grid_rows(M), block_1d(), 0, stream, correct, pred, labels, M);
}

/* ---- LayerNorm --------------------------------------------------------------------------------
 */

#define LN_EPS 1e-5f
/* Threads per row: one warp. Rows are short (h = 64 in the labs), and a
 * wider block would spend its time at barriers: every thread of the block
 * waits at each of the tree's steps, on a GPU and far more in the
 * emulator. */
#define LN_THREADS 32u

static dim3 ln_block(void)
{
    dim3 b = {LN_THREADS, 1, 1};
    return b;
}

/* The sum of every thread's v over the block, returned to every thread: a
 * tree in s[LN_THREADS] in a fixed order (as sum_one_block), so the same
 * inputs give the same bits; s is free again when it returns. */
static __device__ float block_sum(float *s, float v)
{
    unsigned t = threadIdx.x;
    s[t] = v;
    __syncthreads();
    for (unsigned half = LN_THREADS / 2; half > 0; half /= 2) {
        if (t < half) s[t] += s[t + half];
        __syncthreads();
    }
    float total = s[0];
    __syncthreads(); /* every thread has read s[0] before s is reused */
    return total;
}

/* One block per row: the mean, then the variance as the mean of (x -
 * mean)^2 (two passes: no cancellation of E[x^2] - mean^2), then y. Each
 * thread reads x[i] before it writes y[i] of the same i, so y may be x. */
static __global__ void layernorm_fwd(float *y, float *mean, float *rstd, const float *x,
                                     const float *gamma, const float *beta, int h)
{
    __shared__ float s[LN_THREADS];
    unsigned t = threadIdx.x;
    const float *xr = x + (long)blockIdx.x * h;
    float *yr = y + (long)blockIdx.x * h;
    float acc = 0.0f;
    for (int i = (int)t; i < h; i += (int)LN_THREADS) acc += xr[i];
    float m = block_sum(s, acc) / (float)h;
    acc = 0.0f;
    for (int i = (int)t; i < h; i += (int)LN_THREADS) {
        float d = xr[i] - m;
        acc += d * d;
    }
    float r = 1.0f / sqrtf(block_sum(s, acc) / (float)h + LN_EPS);
    for (int i = (int)t; i < h; i += (int)LN_THREADS) yr[i] = (xr[i] - m) * r * gamma[i] + beta[i];
    if (t == 0) {
        mean[blockIdx.x] = m;
        rstd[blockIdx.x] = r;
    }
}
SIMT_LAUNCHER(layernorm_fwd,
              (float *y, float *mean, float *rstd, const float *x, const float *gamma,
               const float *beta, int h),
              (y, mean, rstd, x, gamma, beta, h))

/* dx, one block per row: with n = (x - mean) rstd and g = dy gamma,
 * dx = rstd (g - mean(g) - n mean(g n)). Reads dy[i] before writing dx[i]
 * of the same i, so dx may be dy. */
static __global__ void layernorm_bwd_dx(float *dx, const float *dy, const float *x,
                                        const float *mean, const float *rstd, const float *gamma,
                                        int h)
{
    __shared__ float s[LN_THREADS];
    unsigned t = threadIdx.x;
    long off = (long)blockIdx.x * h;
    float m = mean[blockIdx.x], r = rstd[blockIdx.x];
    float sg = 0.0f, sgn = 0.0f;
    for (int i = (int)t; i < h; i += (int)LN_THREADS) {
        float g = dy[off + i] * gamma[i];
        sg += g;
        sgn += g * ((x[off + i] - m) * r);
    }
    float mg = block_sum(s, sg) / (float)h;
    float mgn = block_sum(s, sgn) / (float)h;
    for (int i = (int)t; i < h; i += (int)LN_THREADS) {
        float n = (x[off + i] - m) * r;
        dx[off + i] = r * (dy[off + i] * gamma[i] - mg - n * mgn);
    }
}
SIMT_LAUNCHER(layernorm_bwd_dx,
              (float *dx, const float *dy, const float *x, const float *mean, const float *rstd,
               const float *gamma, int h),
              (dx, dy, x, mean, rstd, gamma, h))

/* dgamma and dbeta, one thread per column down the rows (as bias_grad):
 * each sum has one owner and a fixed order, so no atomics and the same
 * bits every run. */
static __global__ void layernorm_bwd_params(float *dgamma, float *dbeta, const float *dy,
                                            const float *x, const float *mean, const float *rstd,
                                            int rows, int h, int accumulate)
{
    for (int c = (int)(blockIdx.x * blockDim.x + threadIdx.x); c < h;
         c += (int)(blockDim.x * gridDim.x)) {
        float sg = 0.0f, sb = 0.0f;
        for (int r = 0; r < rows; r++) {
            long at = (long)r * h + c;
            sg += dy[at] * ((x[at] - mean[r]) * rstd[r]);
            sb += dy[at];
        }
        dgamma[c] = accumulate ? dgamma[c] + sg : sg;
        dbeta[c] = accumulate ? dbeta[c] + sb : sb;
    }
}
SIMT_LAUNCHER(layernorm_bwd_params,
              (float *dgamma, float *dbeta, const float *dy, const float *x, const float *mean,
               const float *rstd, int rows, int h, int accumulate),
              (dgamma, dbeta, dy, x, mean, rstd, rows, h, accumulate))

cudaError_t pl_k_layernorm(float *y, float *mean, float *rstd, const float *x, const float *gamma,
                           const float *beta, int rows, int h, cudaStream_t stream)
{
    if (rows < 1 || h < 1 || !y || !mean || !rstd || !x || !gamma || !beta)
        return cudaErrorInvalidValue;
    double n = (double)rows * h;
    dim3 g = {(unsigned)rows, 1, 1};
    SIMT_LAUNCH_COST(8.0 * n, 4.0 * (2.0 * n + 2.0 * h + 2.0 * rows));
    return launch_layernorm_fwd(g, ln_block(), 0, stream, y, mean, rstd, x, gamma, beta, h);
}

cudaError_t pl_k_layernorm_backward(float *dx, float *dgamma, float *dbeta, const float *dy,
                                    const float *x, const float *mean, const float *rstd,
                                    const float *gamma, int rows, int h, int accumulate,
                                    cudaStream_t stream)
{
    if (rows < 1 || h < 1 || !dx || !dgamma || !dbeta || !dy || !x || !mean || !rstd || !gamma)
        return cudaErrorInvalidValue;
    double n = (double)rows * h;
    /* the parameters first: they read dy, which the dx kernel may overwrite */
    dim3 gp = {(unsigned)((h + (int)THREADS - 1) / (int)THREADS), 1, 1};
    SIMT_LAUNCH_COST(6.0 * n, 4.0 * (2.0 * n + 2.0 * rows + 2.0 * h * (1 + accumulate)));
    cudaError_t e = launch_layernorm_bwd_params(gp, block_1d(), 0, stream, dgamma, dbeta, dy, x,
                                                mean, rstd, rows, h, accumulate);
    if (e != cudaSuccess) return e;
    dim3 gr = {(unsigned)rows, 1, 1};
    SIMT_LAUNCH_COST(12.0 * n, 4.0 * (5.0 * n + h + 2.0 * rows));
    return launch_layernorm_bwd_dx(gr, ln_block(), 0, stream, dx, dy, x, mean, rstd, gamma, h);
}

/* ---- sum and accuracy ----------------------------------------------------------------------- */

/* One block: thread t adds elements t, t+256, ... in order, then a tree in
 * shared memory. The order is fixed, so the same input gives the same bits. */
static __global__ void sum_one_block(float *out, const float *x, long n)
{
    __shared__ float s[THREADS];
    unsigned t = threadIdx.x;
    float acc = 0.0f;
    for (long i = t; i < n; i += THREADS) acc += x[i];
    s[t] = acc;
    __syncthreads();
    for (unsigned half = THREADS / 2; half > 0; half /= 2) {
        if (t < half) s[t] += s[t + half];
        __syncthreads();
    }
    if (t == 0) out[0] = s[0];
}
SIMT_LAUNCHER(sum_one_block, (float *out, const float *x, long n), (out, x, n))

cudaError_t pl_k_sum(float *out, const float *x, long n, cudaStream_t stream)
{
    if (n < 0 || !out || (n && !x)) return cudaErrorInvalidValue;
    dim3 g = {1, 1, 1};
    SIMT_LAUNCH_COST((double)n, 4.0 * n + 4.0);
    return launch_sum_one_block(g, block_1d(), 0, stream, out, x, n);
}

static __global__ void count_correct(int *correct, const float *logits, const int *labels, int M,
                                     int C)
{
    for (int r = (int)(blockIdx.x * blockDim.x + threadIdx.x); r < M;
         r += (int)(blockDim.x * gridDim.x)) {
        const float *z = logits + (long)r * C;
        int best = 0;
        for (int c = 1; c < C; c++)
            if (z[c] > z[best]) best = c;
        if (best == labels[r]) atomicAdd(correct, 1);
    }
}
SIMT_LAUNCHER(count_correct, (int *correct, const float *logits, const int *labels, int M, int C),
              (correct, logits, labels, M, C))

cudaError_t pl_k_count_correct(int *correct, const float *logits, const int *labels, int M, int C,
                               cudaStream_t stream)
{
    if (M < 0 || C < 1 || !correct) return cudaErrorInvalidValue;
    if (M == 0) return cudaSuccess;
    if (!logits || !labels) return cudaErrorInvalidValue;
    SIMT_LAUNCH_COST((double)M * C, 4.0 * ((double)M * C + M));
    return launch_count_correct(grid_rows(M), block_1d(), 0, stream, correct, logits, labels, M, C);
}

/* ---- optimizers -------------------------------------------------------------------------- */

static __global__ void sgd_step(float *w, float *v, const float *g, long n, float lr, float mu,
                                float wd)
{
    for (long i = TILE_FIRST(), end = TILE_END(n); i < end; i += THREADS) {
        float vi = mu * v[i] + (g[i] + wd * w[i]);
        v[i] = vi;
        w[i] -= lr * vi;
    }
}
SIMT_LAUNCHER(sgd_step, (float *w, float *v, const float *g, long n, float lr, float mu, float wd),
              (w, v, g, n, lr, mu, wd))

cudaError_t pl_k_sgd(float *w, float *v, const float *g, long n, float lr, float mu, float wd,
                     cudaStream_t stream)
{
    if (n < 0 || (n && (!w || !v || !g))) return cudaErrorInvalidValue;
    if (!n) return cudaSuccess;
    SIMT_LAUNCH_COST(5.0 * n, 20.0 * n);
    return launch_sgd_step(grid_1d(n), block_1d(), 0, stream, w, v, g, n, lr, mu, wd);
}

/* c1 = 1 - b1^t and c2 = 1 - b2^t, the bias corrections, from the host. */
static __global__ void adamw_step(float *w, float *m, float *v, const float *g, long n, float lr,
                                  float b1, float b2, float eps, float wd, float c1, float c2)
{
    for (long i = TILE_FIRST(), end = TILE_END(n); i < end; i += THREADS) {
        float gi = g[i];
        float mi = b1 * m[i] + (1.0f - b1) * gi;
        float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        w[i] -= lr * ((mi / c1) / (sqrtf(vi / c2) + eps) + wd * w[i]);
    }
}
SIMT_LAUNCHER(adamw_step,
              (float *w, float *m, float *v, const float *g, long n, float lr, float b1, float b2,
               float eps, float wd, float c1, float c2),
              (w, m, v, g, n, lr, b1, b2, eps, wd, c1, c2))

cudaError_t pl_k_adamw(float *w, float *m, float *v, const float *g, long n, float lr, float b1,
                       float b2, float eps, float wd, int t, cudaStream_t stream)
{
    if (n < 0 || t < 1 || (n && (!w || !m || !v || !g))) return cudaErrorInvalidValue;
    if (!n) return cudaSuccess;
    float c1 = 1.0f - powf(b1, (float)t), c2 = 1.0f - powf(b2, (float)t);
    SIMT_LAUNCH_COST(16.0 * n, 28.0 * n);
    return launch_adamw_step(grid_1d(n), block_1d(), 0, stream, w, m, v, g, n, lr, b1, b2, eps, wd,
                             c1, c2);
}

/* ---- vectors ------------------------------------------------------------------------------- */

static __global__ void fill_k(float *x, long n, float value)
{
    for (long i = TILE_FIRST(), end = TILE_END(n); i < end; i += THREADS) x[i] = value;
}
SIMT_LAUNCHER(fill_k, (float *x, long n, float value), (x, n, value))

static __global__ void scale_k(float *x, long n, float a)
{
    for (long i = TILE_FIRST(), end = TILE_END(n); i < end; i += THREADS) x[i] *= a;
}
SIMT_LAUNCHER(scale_k, (float *x, long n, float a), (x, n, a))

static __global__ void axpy_k(float *y, const float *x, long n, float a)
{
    for (long i = TILE_FIRST(), end = TILE_END(n); i < end; i += THREADS) y[i] += a * x[i];
}
SIMT_LAUNCHER(axpy_k, (float *y, const float *x, long n, float a), (y, x, n, a))

cudaError_t pl_k_fill(float *x, long n, float value, cudaStream_t stream)
{
    if (n < 0 || (n && !x)) return cudaErrorInvalidValue;
    if (!n) return cudaSuccess;
    SIMT_LAUNCH_COST(0.0, 4.0 * n);
    return launch_fill_k(grid_1d(n), block_1d(), 0, stream, x, n, value);
}

cudaError_t(pl_k_scale)(float *x, long n, float a, cudaStream_t stream)
{
    if (n < 0 || (n && !x)) return cudaErrorInvalidValue;
    if (!n) return cudaSuccess;
    SIMT_LAUNCH_COST((double)n, 8.0 * n);
    return launch_scale_k(grid_1d(n), block_1d(), 0, stream, x, n, a);
}

cudaError_t(pl_k_axpy)(float *y, const float *x, long n, float a, cudaStream_t stream)
{
    if (n < 0 || (n && (!y || !x))) return cudaErrorInvalidValue;
    if (!n) return cudaSuccess;
    SIMT_LAUNCH_COST(2.0 * n, 12.0 * n);
    return launch_axpy_k(grid_1d(n), block_1d(), 0, stream, y, x, n, a);
}
