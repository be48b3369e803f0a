/*
 * Lab 04 — the naive kernel and the bytes each version moves.
 */
#include "simt/kernel.h"

#include "04_gemm/lab04.h"

/* A and B read once per use: 2K floats per element of C, and C written. */
double lab04_bytes_naive(int M, int N, int K) { return 4.0 * (2.0 * M * N * K + (double)M * N); }

/* With t x t tiles of C each element of A is read once per column tile and
 * each element of B once per row tile: 4 (MK ceil(N/t) + KN ceil(M/t) + MN)
 * bytes. */
double lab04_bytes_tiled(int M, int N, int K, int tile)
{
    double ct = (N + tile - 1) / tile, rt = (M + tile - 1) / tile;
    return 4.0 * ((double)M * K * ct + (double)K * N * rt + (double)M * N);
}

static __global__ void matmul_naive(float *C, const float *A, const float *B, int M, int N, int K)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
}
SIMT_LAUNCHER(matmul_naive, (float *C, const float *A, const float *B, int M, int N, int K),
              (C, A, B, M, N, K))

int lab04_matmul_naive(float *C, const float *A, const float *B, int M, int N, int K)
{
    dim3 grid = {(unsigned)((N + 15) / 16), (unsigned)((M + 15) / 16), 1}, block = {16, 16, 1};
    SIMT_LAUNCH_COST(2.0 * M * N * K, lab04_bytes_naive(M, N, K));
    return launch_matmul_naive(grid, block, 0, 0, C, A, B, M, N, K);
}

/* Register tiles: a block of 256 threads computes a 128x128 tile of C and
 * each thread 8x8 of it, held in 64 registers. K is walked 8 at a time: the
 * block stages a 128x8 slice of A (transposed, so a thread's 8 values of A
 * for one k sit in one row) and an 8x128 slice of B in shared memory; then
 * for each of the 8 k every thread reads 8 values of A and 8 of B into
 * registers and does 64 multiply-adds: 16 shared-memory reads for 64 FMAs
 * instead of the 16x16 tile's 2 for 1.
 *
 * A thread owns rows ty + 16 i and columns tx + 16 j (i, j = 0..7), not a
 * contiguous 8x8 block: the 16 threads of a half-warp then read 16
 * consecutive floats of Bs (16 banks, no conflict) and write 16 consecutive
 * floats of C (one 64-byte segment). As in Simon Boehm's "How to Optimize a
 * CUDA Matmul Kernel" (kernel 5, 2D block tiling). */
#define RT_BM 128
#define RT_BN 128
#define RT_BK 8
#define RT_T 8 /* outputs per thread in each direction */

static __global__ void matmul_registers(float *C, const float *A, const float *B, int M, int N,
                                        int K)
{
    __shared__ float As[RT_BK][RT_BM], Bs[RT_BK][RT_BN];
    int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    int row0 = blockIdx.y * RT_BM, col0 = blockIdx.x * RT_BN;
    float acc[RT_T][RT_T], a[RT_T], b[RT_T];
    SIMT_UNROLL for (int i = 0; i < RT_T; i++) SIMT_UNROLL for (int j = 0; j < RT_T; j++)
        acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += RT_BK) {
        /* 1024 elements of each slice, 4 per thread, zeros past the edges */
        SIMT_UNROLL for (int q = 0; q < 4; q++)
        {
            int e = tid + 256 * q, m = e / RT_BK, k = e % RT_BK;
            As[k][m] = row0 + m < M && k0 + k < K ? A[(row0 + m) * K + k0 + k] : 0.0f;
            int kb = e / RT_BN, n = e % RT_BN;
            Bs[kb][n] = k0 + kb < K && col0 + n < N ? B[(k0 + kb) * N + col0 + n] : 0.0f;
        }
        __syncthreads();
        SIMT_UNROLL for (int k = 0; k < RT_BK; k++)
        {
            SIMT_UNROLL for (int i = 0; i < RT_T; i++) a[i] = As[k][ty + 16 * i];
            SIMT_UNROLL for (int j = 0; j < RT_T; j++) b[j] = Bs[k][tx + 16 * j];
            SIMT_UNROLL for (int i = 0; i < RT_T; i++) SIMT_UNROLL for (int j = 0; j < RT_T; j++)
                acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    SIMT_UNROLL for (int i = 0; i < RT_T; i++) SIMT_UNROLL for (int j = 0; j < RT_T; j++)
    {
        int r = row0 + ty + 16 * i, c = col0 + tx + 16 * j;
        if (r < M && c < N) C[r * N + c] = acc[i][j];
    }
}
SIMT_LAUNCHER(matmul_registers, (float *C, const float *A, const float *B, int M, int N, int K),
              (C, A, B, M, N, K))

int lab04_matmul_registers(float *C, const float *A, const float *B, int M, int N, int K)
{
    dim3 grid = {(unsigned)((N + RT_BN - 1) / RT_BN), (unsigned)((M + RT_BM - 1) / RT_BM), 1};
    dim3 block = {256, 1, 1};
    SIMT_LAUNCH_COST(2.0 * M * N * K, lab04_bytes_tiled(M, N, K, RT_BM));
    return launch_matmul_registers(grid, block, 0, 0, C, A, B, M, N, K);
}

/* Warp tiles, 16-byte loads and double-buffered shared memory: the steps
 * that take the register tiles towards cuBLAS in the well-known hand-tuned
 * SGEMM write-ups (Boehm's kernels 6, 10 and 11; CUTLASS's warp-level
 * tiling). The same 128x128 tile of C per block of 256 threads, 8x8 outputs
 * per thread, the same FLOPs and bytes; what changes is how many
 * instructions and how much waiting they take:
 *
 * - Warp tiles. The 8 warps split the block's tile 2 x 4: warp w owns 64
 *   rows by 32 columns, and its 32 lanes, 8 x 4, each own 2 x 2 sub-tiles
 *   of 4 x 4 (rows wm0 + 32 i + 4 lr + p, columns wn0 + 16 j + 4 lc + q).
 *   A lane's 4 values of A for one k, and its 4 of B, lie side by side in
 *   shared memory: one 16-byte read each (the register tiles' were strided:
 *   16 reads of 4 bytes for the same 16 values), and a warp reads only
 *   64 + 32 distinct floats per k.
 * - 16-byte loads (float4) from global memory too: each thread fetches two
 *   float4 of A's 128x16 slice and two of B's 16x128 per step, a quarter of
 *   the load instructions, and writes C four floats at a time. A float4
 *   access must be 16-byte aligned, so they are used when the rows are: K
 *   (for A) or N (for B and C) a multiple of 4 and the pointers aligned;
 *   otherwise (and at the edges) one float at a time, zeros past the edge.
 * - Double buffering: two slices of each in shared memory. While the block
 *   multiplies slice t, every thread already has slice t+1's loads in
 *   flight into registers, and stores them into the other buffer after its
 *   multiply-adds: the memory latency hides behind arithmetic, and one
 *   __syncthreads() per step instead of two (buffer t+1 is written while no
 *   one reads it; buffer t is written again only after everyone passed the
 *   barrier that ends step t).
 *
 * The modeled clock charges FLOPs and bytes, so on the simulated GPU this
 * version takes the register tiles' time; only a real GPU shows the
 * difference. */
#define WT_BM 128
#define WT_BN 128
#define WT_BK 16
#define WT_WM 64 /* a warp's tile: 64 rows x 32 columns */
#define WT_WN 32
/* A's rows in shared memory (As[k][m]) are WT_AP = WT_BM + 4 floats apart,
 * not 128. A warp stores A's slice transposed, one float at a time: 8 rows
 * m..m+7 at columns k, k+4, k+8, k+12. 128 floats apart, word 128 k + m is
 * in bank m % 32 whatever k, so 4 lanes meet in each of 8 banks: 4
 * wavefronts a store. 132 apart, k+4 lands 16 banks over: 2 wavefronts.
 * The pitch must stay a multiple of 4 floats (each row's float4 reads are
 * 16-byte aligned), and then k and k+8 are a multiple of 32 words apart:
 * 2 is the least. Lab 02 pads its tile the same way, by one float. */
#define WT_AP (WT_BM + 4)

/* A float4 access must be 16-byte aligned: a GPU stops the kernel at one
 * that is not (cudaErrorMisalignedAddress). The emulator runs it as any
 * access (this CPU allows it) and does not check, so in the simulated build
 * the kernel checks it itself: a device assert, naming this line. */
#ifdef __CUDACC__
#define WT_ALIGNED16(p) ((void)0)
#else
#define WT_ALIGNED16(p) assert(((size_t)(p)&15) == 0)
#endif

/* p[0..3] of a row of which `valid` (at most 4, may be 0 or less) exist:
 * one 16-byte load when all four exist and `vec` (p is 16-byte aligned),
 * else one load each, zeros past the edge. */
static __device__ float4 wt_load4(const float *p, int valid, int vec)
{
    if (vec && valid >= 4) {
        WT_ALIGNED16(p);
        return *(const float4 *)p;
    }
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (valid > 0) v.x = p[0];
    if (valid > 1) v.y = p[1];
    if (valid > 2) v.z = p[2];
    if (valid > 3) v.w = p[3];
    return v;
}

/* The next slice of A (128 rows by 16 of K) and of B (16 by 128 columns)
 * from k0 into registers: two float4 of each per thread. Thread t's A
 * float4 e (= t + 256 q) is row e / 4, columns 4 (e % 4) to 4 (e % 4) + 3:
 * four threads read a row's 64 bytes, a warp 8 rows. Its B float4 is row
 * e / 32, columns 4 (e % 32) on: a warp reads 512 consecutive bytes. */
static __device__ void wt_fetch(float4 *pa, float4 *pb, const float *A, const float *B, int M,
                                int N, int K, int row0, int col0, int k0, int vec_a, int vec_b)
{
    int t = threadIdx.x;
    SIMT_UNROLL for (int q = 0; q < 2; q++)
    {
        int e = t + 256 * q;
        int m = e / 4, ka = k0 + (e % 4) * 4;
        int va = row0 + m < M ? K - ka : 0;
        pa[q] = wt_load4(va > 0 ? &A[(row0 + m) * K + ka] : A, va, vec_a);
        int kb = k0 + e / 32, n = col0 + (e % 32) * 4;
        int vb = kb < K ? N - n : 0;
        pb[q] = wt_load4(vb > 0 ? &B[kb * N + n] : B, vb, vec_b);
    }
}

/* Stores fetched slices into buffer `buf`: A transposed (As[k][m], so that
 * a lane's 4 rows for one k are adjacent; rows WT_AP apart), B as it is. */
static __device__ void wt_stash(float (*As)[WT_AP], float (*Bs)[WT_BN], const float4 *pa,
                                const float4 *pb)
{
    int t = threadIdx.x;
    SIMT_UNROLL for (int q = 0; q < 2; q++)
    {
        int e = t + 256 * q;
        int m = e / 4, k = (e % 4) * 4;
        As[k][m] = pa[q].x;
        As[k + 1][m] = pa[q].y;
        As[k + 2][m] = pa[q].z;
        As[k + 3][m] = pa[q].w;
        *(float4 *)&Bs[e / 32][(e % 32) * 4] = pb[q];
    }
}

static __global__ void __launch_bounds__(256, 2)
    matmul_warptiles(float *C, const float *A, const float *B, int M, int N, int K)
{
    __shared__ __align__(16) float As[2][WT_BK][WT_AP];
    __shared__ __align__(16) float Bs[2][WT_BK][WT_BN];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int wm0 = (warp / 4) * WT_WM, wn0 = (warp % 4) * WT_WN; /* the warp's tile in the block's */
    int lr = lane / 4, lc = lane % 4;                       /* the lane's place in the warp's */
    int row0 = blockIdx.y * WT_BM, col0 = blockIdx.x * WT_BN;
    int vec_a = K % 4 == 0 && ((size_t)A & 15) == 0, vec_b = N % 4 == 0 && ((size_t)B & 15) == 0;
    float acc[2][2][4][4];
    SIMT_UNROLL for (int i = 0; i < 2; i++) SIMT_UNROLL for (int j = 0; j < 2; j++)
        SIMT_UNROLL for (int p = 0; p < 4; p++) SIMT_UNROLL for (int q = 0; q < 4; q++)
            acc[i][j][p][q] = 0.0f;
    float4 pa[2], pb[2];
    wt_fetch(pa, pb, A, B, M, N, K, row0, col0, 0, vec_a, vec_b);
    wt_stash(As[0], Bs[0], pa, pb);
    __syncthreads();
    int buf = 0;
    for (int k0 = 0; k0 < K; k0 += WT_BK) {
        int more =
            k0 + WT_BK < K; /* the same in every thread: the barrier below is reached by all */
        if (more) wt_fetch(pa, pb, A, B, M, N, K, row0, col0, k0 + WT_BK, vec_a, vec_b);
        SIMT_UNROLL for (int k = 0; k < WT_BK; k++)
        {
            float4 a[2], b[2];
            SIMT_UNROLL for (int i = 0; i < 2; i++) a[i] =
                *(const float4 *)&As[buf][k][wm0 + 32 * i + 4 * lr];
            SIMT_UNROLL for (int j = 0; j < 2; j++) b[j] =
                *(const float4 *)&Bs[buf][k][wn0 + 16 * j + 4 * lc];
            SIMT_UNROLL for (int i = 0; i < 2; i++) SIMT_UNROLL for (int j = 0; j < 2; j++)
            {
                float av[4] = {a[i].x, a[i].y, a[i].z, a[i].w},
                      bv[4] = {b[j].x, b[j].y, b[j].z, b[j].w};
                SIMT_UNROLL for (int p = 0; p < 4; p++) SIMT_UNROLL for (int q = 0; q < 4; q++)
                    acc[i][j][p][q] += av[p] * bv[q];
            }
        }
        if (more) wt_stash(As[buf ^ 1], Bs[buf ^ 1], pa, pb);
        __syncthreads();
        buf ^= 1;
    }
    int vec_c = N % 4 == 0 && ((size_t)C & 15) == 0;
    SIMT_UNROLL for (int i = 0; i < 2; i++) SIMT_UNROLL for (int j = 0; j < 2; j++)
        SIMT_UNROLL for (int p = 0; p < 4; p++)
    {
        int r = row0 + wm0 + 32 * i + 4 * lr + p, c = col0 + wn0 + 16 * j + 4 * lc;
        if (r >= M) continue;
        float *out = &C[r * N + c];
        if (vec_c && c + 3 < N) {
            WT_ALIGNED16(out);
            *(float4 *)out =
                make_float4(acc[i][j][p][0], acc[i][j][p][1], acc[i][j][p][2], acc[i][j][p][3]);
        } else
            SIMT_UNROLL for (int q = 0; q < 4; q++) if (c + q < N) out[q] = acc[i][j][p][q];
    }
}
SIMT_LAUNCHER(matmul_warptiles, (float *C, const float *A, const float *B, int M, int N, int K),
              (C, A, B, M, N, K))

int lab04_matmul_warptiles(float *C, const float *A, const float *B, int M, int N, int K)
{
    dim3 grid = {(unsigned)((N + WT_BN - 1) / WT_BN), (unsigned)((M + WT_BM - 1) / WT_BM), 1};
    dim3 block = {256, 1, 1};
    SIMT_LAUNCH_COST(2.0 * M * N * K, lab04_bytes_tiled(M, N, K, WT_BM));
    return launch_matmul_warptiles(grid, block, 0, 0, C, A, B, M, N, K);
}
