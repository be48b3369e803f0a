/*
 * Lab 03 — the lab's own reduction kernels: the interleaved (divergent)
 * tree, the first add during the load, and atomics across blocks.
 */
#include "simt/kernel.h"

#include "03_reduction/lab03.h"

#define T LAB03_THREADS

/* Interleaved addressing: at step s the threads with tid % 2s == 0 add
 * their neighbour s away. Most threads of every warp sit idle: divergence. */
static __global__ void interleaved(const float *in, float *out, int n)
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
SIMT_LAUNCHER(interleaved, (const float *in, float *out, int n), (in, out, n))

/* Sequential addressing and two elements per thread on the way in. */
static __global__ void first_add(const float *in, float *out, int n)
{
    __shared__ float s[T];
    int tid = threadIdx.x, i = blockIdx.x * 2 * T + tid;
    s[tid] = (i < n ? in[i] : 0.0f) + (i + T < n ? in[i + T] : 0.0f);
    __syncthreads();
    for (int half = T / 2; half > 0; half /= 2) {
        if (tid < half) s[tid] += s[tid + half];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
SIMT_LAUNCHER(first_add, (const float *in, float *out, int n), (in, out, n))

static __global__ void atomic_sum(const float *in, float *out, int n)
{
    __shared__ float s[T];
    int tid = threadIdx.x, i = blockIdx.x * T + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int half = T / 2; half > 0; half /= 2) {
        if (tid < half) s[tid] += s[tid + half];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, s[0]);
}
SIMT_LAUNCHER(atomic_sum, (const float *in, float *out, int n), (in, out, n))

static dim3 blocks(int n, int per)
{
    dim3 g = {(unsigned)((n + per - 1) / per), 1, 1};
    return g;
}

static dim3 threads(void)
{
    dim3 b = {T, 1, 1};
    return b;
}

int lab03_interleaved(const float *in, float *out, int n)
{
    SIMT_LAUNCH_COST((double)n, 4.0 * n);
    return launch_interleaved(blocks(n, T), threads(), 0, 0, in, out, n);
}

int lab03_first_add(const float *in, float *out, int n)
{
    SIMT_LAUNCH_COST((double)n, 4.0 * n);
    return launch_first_add(blocks(n, 2 * T), threads(), 0, 0, in, out, n);
}

int lab03_atomic(const float *in, float *out, int n)
{
    SIMT_LAUNCH_COST((double)n, 4.0 * n);
    return launch_atomic_sum(blocks(n, T), threads(), 0, 0, in, out, n);
}
