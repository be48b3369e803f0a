/* kernels.cu — kernels for make racecheck: each in a correct and a racy form. */
#include "simt/kernel.h"

#include "kernels.h"

static __global__ void block_sum(const float *in, float *out, int sync)
{
    __shared__ float s[256];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) s[t] += s[t + stride]; /* RACE_LINE_BLOCK_SUM */
        if (sync) __syncthreads();
    }
    if (t == 0) out[0] = s[0];
}
SIMT_LAUNCHER(block_sum, (const float *in, float *out, int sync), (in, out, sync))
const int rk_block_sum_race_line = 13;

cudaError_t rk_block_sum(const float *in, float *out, int sync)
{
    dim3 g = {1, 1, 1}, b = {256, 1, 1};
    return launch_block_sum(g, b, 0, 0, in, out, sync);
}

static __global__ void warp_tail(const int *in, int *out, int sync)
{
    __shared__ int s[64];
    volatile int *v = s;
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    if (t < 32) {
        for (unsigned stride = 32; stride > 0; stride /= 2) {
            int other = t < stride ? v[t + stride] : 0; /* RACE_LINE_WARP_TAIL */
            if (sync) __syncwarp();
            if (t < stride) v[t] += other;
            if (sync) __syncwarp();
        }
    }
    if (t == 0) out[0] = s[0];
}
SIMT_LAUNCHER(warp_tail, (const int *in, int *out, int sync), (in, out, sync))
const int rk_warp_tail_race_line = 36;

cudaError_t rk_warp_tail(const int *in, int *out, int sync)
{
    dim3 g = {1, 1, 1}, b = {64, 1, 1};
    return launch_warp_tail(g, b, 0, 0, in, out, sync);
}

/* 256 threads each add 1 to one counter with no barrier between them (issue
 * 19): a __shared__ int, out[0] = its value (barriers only before and
 * after); or a word of device memory, in a kernel with no barrier at all.
 * atomic = 1 uses atomicAdd (no race). */
static __global__ void shared_counter(int *out, int atomic)
{
    __shared__ int s;
    if (threadIdx.x == 0) s = 0;
    __syncthreads();
    if (atomic) atomicAdd(&s, 1);
    if (!atomic) s++; /* RACE_LINE_SHARED_COUNTER */
    __syncthreads();
    if (threadIdx.x == 0) out[0] = s;
}
SIMT_LAUNCHER(shared_counter, (int *out, int atomic), (out, atomic))

static __global__ void global_counter(int *word, int atomic)
{
    if (atomic) atomicAdd(word, 1);
    if (!atomic) word[0]++; /* RACE_LINE_GLOBAL_COUNTER */
}
SIMT_LAUNCHER(global_counter, (int *word, int atomic), (word, atomic))
const int rk_shared_counter_race_line = 63, rk_global_counter_race_line = 72;

cudaError_t rk_counter(int *word, int *out, int global, int atomic)
{
    dim3 g = {1, 1, 1}, b = {256, 1, 1};
    return global ? launch_global_counter(g, b, 0, 0, word, atomic)
                  : launch_shared_counter(g, b, 0, 0, out, atomic);
}
