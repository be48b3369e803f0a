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
