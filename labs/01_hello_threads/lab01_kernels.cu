/*
 * Lab 01 — the lab's own kernel: which block handled which element.
 */
#include "simt/kernel.h"

#include "01_hello_threads/lab01.h"

static __global__ void who_ran(int *block_of, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) block_of[i] = blockIdx.x;
}
SIMT_LAUNCHER(who_ran, (int *block_of, int n), (block_of, n))

int lab01_who_ran(int *block_of, int n, int block, int grid)
{
    dim3 g = {(unsigned)grid, 1, 1}, b = {(unsigned)block, 1, 1};
    SIMT_LAUNCH_COST(0, 4.0 * n);
    return launch_who_ran(g, b, 0, 0, block_of, n);
}
