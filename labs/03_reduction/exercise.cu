/*
 * Lab 03 — your exercises: a block's sum in shared memory, then with warp
 * shuffles. Delete a PL_TODO() line when that kernel is written, then run
 * `make check`. See README.md in this folder.
 */
#include "simt/kernel.h"

#include "03_reduction/lab03.h"

#define T LAB03_THREADS

/*
 * 1. Block b sums in[256 b .. 256 b + 255] into out[b] (elements past n
 *    count as 0). Each thread loads one element into a __shared__ float
 *    s[256], then, for half = 128, 64, ..., 1: the threads below `half` add
 *    s[tid + half] into s[tid]. Every thread must see the others' writes
 *    before the next step reads them: __syncthreads() after the load and
 *    after each step. Thread 0 writes s[0].
 */
static __global__ void block_sum(const float *in, float *out, int n)
{
    /* your kernel here: the load, the tree, thread 0's write
     * (then delete the PL_TODO() line in shared_sum below) */
}
SIMT_LAUNCHER(block_sum, (const float *in, float *out, int n), (in, out, n))

/*
 * 2. The same down to 64 partial sums (half = 128, 64... stop above 32);
 *    then the first warp alone: v = s[tid] + s[tid + 32], and five shuffles
 *        v += __shfl_down_sync(0xffffffff, v, d);   for d = 16, 8, 4, 2, 1
 *    leave the block's sum in lane 0. No __syncthreads() inside a warp.
 */
static __global__ void block_sum_shuffle(const float *in, float *out, int n)
{
    /* your kernel here: the tree down to 64 sums, then the shuffles
     * (then delete the PL_TODO() line in shuffle_sum below) */
}
SIMT_LAUNCHER(block_sum_shuffle, (const float *in, float *out, int n), (in, out, n))

static int shared_sum(const float *in, float *out, int n)
{
    PL_TODO(); /* delete this line once block_sum above is written */
    dim3 g = {(unsigned)((n + T - 1) / T), 1, 1}, b = {T, 1, 1};
    SIMT_LAUNCH_COST((double)n, 4.0 * n);
    return launch_block_sum(g, b, 0, 0, in, out, n);
}

static int shuffle_sum(const float *in, float *out, int n)
{
    PL_TODO(); /* delete this line once block_sum_shuffle above is written */
    dim3 g = {(unsigned)((n + T - 1) / T), 1, 1}, b = {T, 1, 1};
    SIMT_LAUNCH_COST((double)n, 4.0 * n);
    return launch_block_sum_shuffle(g, b, 0, 0, in, out, n);
}

const lab03_impl lab03_exercise = {shared_sum, shuffle_sum};
