/* Student scenario: Lab 03 finished as a student would write it (not the
 * reference): the tree as a while loop with a shift, the shuffle tree
 * unrolled by hand. */
#include "simt/kernel.h"

#include "03_reduction/lab03.h"

#define T LAB03_THREADS

static __global__ void block_sum(const float *in, float *out, int n)
{
    __shared__ float s[T];
    int tid = threadIdx.x, i = blockIdx.x * T + tid;
    float v = 0.0f;
    if (i < n) v = in[i];
    s[tid] = v;
    __syncthreads();
    int half = T >> 1;
    while (half > 0) {
        if (tid < half) s[tid] = s[tid] + s[tid + half];
        __syncthreads();
        half >>= 1;
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
SIMT_LAUNCHER(block_sum, (const float *in, float *out, int n), (in, out, n))

static __global__ void block_sum_shuffle(const float *in, float *out, int n)
{
    __shared__ float s[T];
    int tid = threadIdx.x, i = blockIdx.x * T + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int half = T / 2; half >= 64; half = half / 2) {
        if (tid < half) s[tid] += s[tid + half];
        __syncthreads();
    }
    if (tid < 32) {
        float v = s[tid] + s[tid + 32];
        v += __shfl_down_sync(0xffffffff, v, 16);
        v += __shfl_down_sync(0xffffffff, v, 8);
        v += __shfl_down_sync(0xffffffff, v, 4);
        v += __shfl_down_sync(0xffffffff, v, 2);
        v += __shfl_down_sync(0xffffffff, v, 1);
        if (tid == 0) out[blockIdx.x] = v;
    }
}
SIMT_LAUNCHER(block_sum_shuffle, (const float *in, float *out, int n), (in, out, n))

static int shared_sum(const float *in, float *out, int n)
{
    dim3 grid = {(unsigned)((n + T - 1) / T), 1, 1}, block = {T, 1, 1};
    SIMT_LAUNCH_COST((double)n, 4.0 * n);
    return launch_block_sum(grid, block, 0, 0, in, out, n);
}

static int shuffle_sum(const float *in, float *out, int n)
{
    dim3 grid = {(unsigned)((n + T - 1) / T), 1, 1}, block = {T, 1, 1};
    SIMT_LAUNCH_COST((double)n, 4.0 * n);
    return launch_block_sum_shuffle(grid, block, 0, 0, in, out, n);
}

const lab03_impl lab03_exercise = {shared_sum, shuffle_sum};
