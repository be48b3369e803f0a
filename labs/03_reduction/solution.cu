/*
 * Lab 03 — the reference solution. Read it after trying exercise.cu.
 */
#include "simt/kernel.h"

#include "03_reduction/lab03.h"

#define T LAB03_THREADS

/* Sequential addressing: at each step the first half of the active threads
 * add the second half; every warp is either all busy or all idle. */
static __global__ void block_sum(const float *in, float *out, int n)
{
    __shared__ float s[T];
    int tid = threadIdx.x, i = blockIdx.x * T + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int half = T / 2; half > 0; half /= 2) {
        if (tid < half) s[tid] += s[tid + half];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
SIMT_LAUNCHER(block_sum, (const float *in, float *out, int n), (in, out, n))

/* The same down to 64 partial sums; then the first warp adds its two halves
 * and finishes with shuffles, without shared memory or __syncthreads(). */
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

static int run(int which, const float *in, float *out, int n)
{
    dim3 g = {(unsigned)((n + T - 1) / T), 1, 1}, b = {T, 1, 1};
    SIMT_LAUNCH_COST((double)n, 4.0 * n);
    return which ? launch_block_sum_shuffle(g, b, 0, 0, in, out, n)
                 : launch_block_sum(g, b, 0, 0, in, out, n);
}

static int shared_sum(const float *in, float *out, int n) { return run(0, in, out, n); }
static int shuffle_sum(const float *in, float *out, int n) { return run(1, in, out, n); }

const lab03_impl lab03_solution = {shared_sum, shuffle_sum};
