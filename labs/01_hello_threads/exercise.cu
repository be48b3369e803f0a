/*
 * Lab 01 — your exercise. Two functions to write: grid_size, then the
 * vector_add kernel. Delete each PL_TODO() line when you start on it, then
 * run `make check`. See README.md in this folder.
 */
#include "simt/kernel.h"

#include "01_hello_threads/lab01.h"

/* Exercise 1: how many blocks of `block` threads are needed so that every one
 * of the n elements gets a thread? (n >= 1; integer arithmetic only.) */
static int grid_size(int n, int block)
{
    PL_TODO();
    return 0;
}

/* Exercise 2: each thread adds one element: c[i] = a[i] + b[i].
 * Compute i from blockIdx.x, blockDim.x and threadIdx.x. The last block may
 * have more threads than elements left: those threads must do nothing. */
static __global__ void vector_add(const float *a, const float *b, float *c, int n)
{
    /* your kernel here */
}
SIMT_LAUNCHER(vector_add, (const float *a, const float *b, float *c, int n), (a, b, c, n))

static int vector_add_on_device(const float *a, const float *b, float *c, int n, int block)
{
    PL_TODO(); /* delete this line once your kernel above is written */
    dim3 grid = {(unsigned)grid_size(n, block), 1, 1};
    dim3 threads = {(unsigned)block, 1, 1};
    SIMT_LAUNCH_COST(n, 12.0 * n); /* 1 add; 2 loads + 1 store of 4 bytes per element */
    return launch_vector_add(grid, threads, 0, 0, a, b, c, n);
}

const lab01_impl lab01_exercise = {grid_size, vector_add_on_device};
