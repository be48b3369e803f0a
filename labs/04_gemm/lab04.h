/*
 * lab04.h — Lab 04, GEMM: C = A·B four ways (naive, shared-memory tiled,
 * register-tiled, warp-tiled with 16-byte loads and double buffering),
 * their arithmetic intensity and where each sits under the roofline.
 */
#ifndef LAB04_H
#define LAB04_H

#include "paralab/check.h"
#include "paralab/exercise.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lab04_impl {
    /* The exercise: C[M,N] = A[M,K] · B[K,N] (row-major, device pointers,
     * any M, N, K >= 1) with the 16x16 shared-memory tiled kernel, launched
     * on the default stream. Returns the launch's cudaError_t. */
    int (*matmul_tiled)(float *C, const float *A, const float *B, int M, int N, int K);
} lab04_impl;

extern const lab04_impl lab04_exercise; /* exercise.cu: yours */
extern const lab04_impl lab04_solution; /* solution.cu: the reference */

/* The lab's other three: one thread per element of C, every operand from
 * global memory; register tiles (128x128 per block of 256 threads, 8x8
 * outputs per thread); and the same tiles by warps (64x32 per warp, 2x2
 * sub-tiles of 4x4 per lane) with float4 loads from global and shared
 * memory and two shared buffers, one filled while the other is used
 * (lab04_kernels.cu says how). Same contract as matmul_tiled. */
int lab04_matmul_naive(float *C, const float *A, const float *B, int M, int N, int K);
int lab04_matmul_registers(float *C, const float *A, const float *B, int M, int N, int K);
int lab04_matmul_warptiles(float *C, const float *A, const float *B, int M, int N, int K);

/* Bytes each version reads and writes in global memory (what the modeled
 * clock charges it; the tiles make the difference). */
double lab04_bytes_naive(int M, int N, int K);
double lab04_bytes_tiled(int M, int N, int K, int tile);

/* The checks of the exercise (impl's matmul_tiled) and then, once it
 * passes, of the register-tiled and the warp-tiled kernels. */
void lab04_check(int exercise, const lab04_impl *impl, pl_check *c);

#ifdef __cplusplus
}
#endif

#endif
