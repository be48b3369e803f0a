/* Student scenario: Lab 03 with block_sum written with interleaved
 * addressing (tid % 2s == 0 adds its neighbour s away), as Mark Harris's
 * first kernel does: right sums, divergent warps. The checks pass; the
 * lab's picture of the student's kernel shows that tree, not the
 * reference's: s[t] += s[t+1] with 16 of 32 threads of every warp active
 * at its first level. block_sum_shuffle is the reference's. */
#include "simt/kernel.h"

#include "03_reduction/lab03.h"

#define T LAB03_THREADS

static __global__ void block_sum(const float *in, float *out, int n)
{
    __shared__ float s[T];
    int tid = threadIdx.x, i = blockIdx.x * T + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = 1; stride < T; stride *= 2) {
        if (tid % (2 * stride) == 0) s[tid] += s[tid + stride];
        __syncthreads();
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
    for (int half = T / 2; half > 32; half /= 2) {
        if (tid < half) s[tid] += s[tid + half];
        __syncthreads();
    }
    if (tid < 32) {
        float v = s[tid] + s[tid + 32];
        for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
        if (tid == 0) out[blockIdx.x] = v;
    }
}
SIMT_LAUNCHER(block_sum_shuffle, (const float *in, float *out, int n), (in, out, n))

static int shared_sum(const float *in, float *out, int n)
{
    dim3 g = {(unsigned)((n + T - 1) / T), 1, 1}, b = {T, 1, 1};
    SIMT_LAUNCH_COST((double)n, 4.0 * n);
    return launch_block_sum(g, b, 0, 0, in, out, n);
}

static int shuffle_sum(const float *in, float *out, int n)
{
    dim3 g = {(unsigned)((n + T - 1) / T), 1, 1}, b = {T, 1, 1};
    SIMT_LAUNCH_COST((double)n, 4.0 * n);
    return launch_block_sum_shuffle(g, b, 0, 0, in, out, n);
}

const lab03_impl lab03_exercise = {shared_sum, shuffle_sum};
