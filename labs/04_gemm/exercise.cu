/*
 * Lab 04 — your exercise: the shared-memory tiled GEMM. Delete the PL_TODO()
 * line when your kernel is written, then run `make check`. See README.md in
 * this folder.
 */
#include "simt/kernel.h"

#include "04_gemm/lab04.h"

#define TILE 16

/*
 * C[M,N] = A[M,K] · B[K,N], row-major. A block of 16x16 threads computes a
 * 16x16 tile of C: thread (tx, ty) the element at row blockIdx.y*16 + ty,
 * column blockIdx.x*16 + tx.
 *
 * Walk K 16 at a time. In each step every thread loads one element of the
 * A tile and one of the B tile into shared memory (zero when it falls past
 * M, N or K), __syncthreads(), adds its row of As times its column of Bs to
 * its sum, and __syncthreads() again before the next step overwrites the
 * tiles. At the end, the threads inside C write their sums.
 */
static __global__ void matmul_tiled(float *C, const float *A, const float *B, int M, int N, int K)
{
    /* your kernel here; the tiles:
     *     __shared__ float As[TILE][TILE], Bs[TILE][TILE];
     */
}
SIMT_LAUNCHER(matmul_tiled, (float *C, const float *A, const float *B, int M, int N, int K),
              (C, A, B, M, N, K))

static int matmul(float *C, const float *A, const float *B, int M, int N, int K)
{
    PL_TODO(); /* delete this line once your kernel above is written */
    dim3 grid = {(unsigned)((N + TILE - 1) / TILE), (unsigned)((M + TILE - 1) / TILE), 1};
    dim3 block = {TILE, TILE, 1};
    SIMT_LAUNCH_COST(2.0 * M * N * K, lab04_bytes_tiled(M, N, K, TILE));
    return launch_matmul_tiled(grid, block, 0, 0, C, A, B, M, N, K);
}

const lab04_impl lab04_exercise = {matmul};
