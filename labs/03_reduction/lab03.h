/*
 * lab03.h — Lab 03, reduction: summing an array in a block of threads,
 * from the divergent interleaved tree to warp shuffles.
 */
#ifndef LAB03_H
#define LAB03_H

#include "paralab/check.h"
#include "paralab/exercise.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LAB03_THREADS 256 /* threads per block, and elements each block sums */

typedef struct lab03_impl {
    /* Exercise 1: out[b] = in[256 b] + ... + in[256 b + 255] (elements past n
     * count as 0) for every block b of ceil(n / 256), with a tree in shared
     * memory (sequential addressing). Device pointers; returns the launch's
     * cudaError_t. */
    int (*block_sum)(const float *in, float *out, int n);
    /* Exercise 2: the same, the last 32 partial sums added with
     * __shfl_down_sync instead of shared memory. */
    int (*block_sum_shuffle)(const float *in, float *out, int n);
} lab03_impl;

extern const lab03_impl lab03_exercise; /* exercise.cu: yours */
extern const lab03_impl lab03_solution; /* solution.cu: the reference */

/* The lab's own versions, same contract (lab03_kernels.cu): the
 * interleaved tree (tid % 2s: divergent warps), and the first add during
 * the load (each thread adds two elements: half the blocks; out has
 * ceil(n / 512) sums). */
int lab03_interleaved(const float *in, float *out, int n);
int lab03_first_add(const float *in, float *out, int n);
/* Every block adds its sum into out[0] with atomicAdd (zero it first). */
int lab03_atomic(const float *in, float *out, int n);

void lab03_check(int exercise, const lab03_impl *impl, pl_check *c);

#ifdef __cplusplus
}
#endif

#endif
