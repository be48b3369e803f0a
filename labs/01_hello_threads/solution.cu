/*
 * Lab 01 — the reference solution. Read it after trying exercise.cu.
 */
#include "simt/kernel.h"

#include "01_hello_threads/lab01.h"

/* Ceiling division: the smallest g with g * block >= n. */
static int grid_size(int n, int block) { return (n + block - 1) / block; }

/* One element per thread. The global index counts the threads of all the
 * blocks before this one, then this thread's place in its block. */
static __global__ void vector_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) /* the tail: the last block may run past the end */
        c[i] = a[i] + b[i];
}
SIMT_LAUNCHER(vector_add, (const float *a, const float *b, float *c, int n), (a, b, c, n))

static int vector_add_on_device(const float *a, const float *b, float *c, int n, int block)
{
    dim3 grid = {(unsigned)grid_size(n, block), 1, 1};
    dim3 threads = {(unsigned)block, 1, 1};
    SIMT_LAUNCH_COST(n, 12.0 * n); /* 1 add; 2 loads + 1 store of 4 bytes per element */
    return launch_vector_add(grid, threads, 0, 0, a, b, c, n);
}

const lab01_impl lab01_solution = {grid_size, vector_add_on_device};
