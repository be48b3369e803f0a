/*
 * Lab 04 — the naive kernel and the bytes each version moves.
 */
#include "simt/kernel.h"

#include "04_gemm/lab04.h"
#include "paralab/nn.h"

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

int lab04_matmul_registers(float *C, const float *A, const float *B, int M, int N, int K)
{
    return pl_k_matmul(C, A, B, M, N, K, PL_NN, 0, 0);
}
