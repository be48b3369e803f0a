/* Student scenario: Lab 03 with a shuffle mask that leaves out lanes: the
 * first warp shuffles with 0xffff, "16 lanes are enough", while all 32 of
 * its lanes call __shfl_down_sync (the emulator reports the lanes the mask
 * leaves out, with kernel, file:line, block and thread). */
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
        v += __shfl_down_sync(0xffff, v, 16);
        v += __shfl_down_sync(0xffff, v, 8);
        v += __shfl_down_sync(0xffff, v, 4);
        v += __shfl_down_sync(0xffff, v, 2);
        v += __shfl_down_sync(0xffff, v, 1);
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
