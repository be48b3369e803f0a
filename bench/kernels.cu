/* kernels.cu — the benchmark's kernels: textbook CUDA C. */
#include "simt/kernel.h"

#include "kernels.h"

static __global__ void vector_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
SIMT_LAUNCHER(vector_add, (const float *a, const float *b, float *c, int n), (a, b, c, n))

cudaError_t bk_vector_add(const float *a, const float *b, float *c, int n)
{
    dim3 g = {(unsigned)(n + 255) / 256, 1, 1}, blk = {256, 1, 1};
    SIMT_LAUNCH_COST(n, 12.0 * n);
    return launch_vector_add(g, blk, 0, 0, a, b, c, n);
}

static __global__ void block_sum(const float *in, float *out, int n)
{
    __shared__ float s[256];
    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < (unsigned)n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = 128; stride > 0; stride /= 2) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
SIMT_LAUNCHER(block_sum, (const float *in, float *out, int n), (in, out, n))

cudaError_t bk_block_sum(const float *in, float *out, int n)
{
    dim3 g = {(unsigned)(n + 255) / 256, 1, 1}, blk = {256, 1, 1};
    SIMT_LAUNCH_COST(n, 4.0 * n);
    return launch_block_sum(g, blk, 0, 0, in, out, n);
}

static __global__ void warp_sum(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (threadIdx.x % 32 == 0) out[i / 32] = v;
}
SIMT_LAUNCHER(warp_sum, (const float *in, float *out, int n), (in, out, n))

cudaError_t bk_warp_sum(const float *in, float *out, int n)
{
    dim3 g = {(unsigned)(n + 255) / 256, 1, 1}, blk = {256, 1, 1};
    SIMT_LAUNCH_COST(n, 4.0 * n);
    return launch_warp_sum(g, blk, 0, 0, in, out, n);
}
