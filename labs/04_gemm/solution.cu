/*
 * Lab 04 — the reference solution. Read it after trying exercise.cu.
 */
#include "simt/kernel.h"

#include "04_gemm/lab04.h"

#define TILE 16

/* Each block computes a 16x16 tile of C. The K dimension is walked 16 at a
 * time: the block loads a 16x16 tile of A and one of B into shared memory
 * (one element per thread, zeros past the edges), waits, multiplies them,
 * and waits again before the next load overwrites them. */
static __global__ void matmul_tiled(float *C, const float *A, const float *B, int M, int N, int K)
{
    __shared__ float As[TILE][TILE], Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = row < M && k0 + tx < K ? A[row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = k0 + ty < K && col < N ? B[(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}
SIMT_LAUNCHER(matmul_tiled, (float *C, const float *A, const float *B, int M, int N, int K),
              (C, A, B, M, N, K))

static int matmul(float *C, const float *A, const float *B, int M, int N, int K)
{
    dim3 grid = {(unsigned)((N + TILE - 1) / TILE), (unsigned)((M + TILE - 1) / TILE), 1};
    dim3 block = {TILE, TILE, 1};
    SIMT_LAUNCH_COST(2.0 * M * N * K, lab04_bytes_tiled(M, N, K, TILE));
    return launch_matmul_tiled(grid, block, 0, 0, C, A, B, M, N, K);
}

const lab04_impl lab04_solution = {matmul};
