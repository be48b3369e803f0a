/*
 * lab01.h — Lab 01, hello threads: what the exercise and the reference
 * solution provide, and the checks.
 */
#ifndef LAB01_H
#define LAB01_H

#include "paralab/check.h"
#include "paralab/exercise.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lab01_impl {
    /* Exercise 1: the number of blocks of `block` threads that cover n
     * elements (n >= 1, block >= 1). */
    int (*grid_size)(int n, int block);
    /* Exercise 2: c[i] = a[i] + b[i] for i < n on the current device (device
     * pointers), `block` threads per block. Returns the launch's cudaError_t
     * (the kernel runs asynchronously on the default stream). */
    int (*vector_add)(const float *a, const float *b, float *c, int n, int block);
} lab01_impl;

extern const lab01_impl lab01_exercise; /* exercise.cu: yours */
extern const lab01_impl lab01_solution; /* solution.cu: the reference */

/* Launches the lab's own `who_ran` kernel: block_of[i] = blockIdx.x of the
 * thread that handled element i (lab01_kernels.cu). */
int lab01_who_ran(int *block_of, int n, int block, int grid);

/* The checks, exercise 0 (grid_size) or 1 (vector_add). */
void lab01_check(int exercise, const lab01_impl *impl, pl_check *c);

#ifdef __cplusplus
}
#endif

#endif
