/*
 * kernels_record.cu — kernels for the kernel record (simtRecord*,
 * pl_device_record_*; tests/unit/test_record.c). mk/build.mk compiles this
 * file in call mode (KASAN_CALLS_FILES), so the record sees every access.
 */
#include "simt/kernel.h"

#include "kernels_record.h"

static __global__ void nothing(int unused) { (void)unused; }
SIMT_LAUNCHER(nothing, (int unused), (unused))

cudaError_t rk_nothing(dim3 grid, dim3 block, size_t shmem)
{
    return launch_nothing(grid, block, shmem, 0, 0);
}

static __global__ void vector_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
SIMT_LAUNCHER(vector_add, (const float *a, const float *b, float *c, int n), (a, b, c, n))

cudaError_t rk_vector_add(const float *a, const float *b, float *c, int n, int block)
{
    dim3 g = {(unsigned)((n + block - 1) / block), 1, 1}, bd = {(unsigned)block, 1, 1};
    return launch_vector_add(g, bd, 0, 0, a, b, c, n);
}

static __global__ void strided_read(float *out, const float *in, int stride)
{
    int t = threadIdx.x;
    out[t] = in[t * stride];
}
SIMT_LAUNCHER(strided_read, (float *out, const float *in, int stride), (out, in, stride))

cudaError_t rk_strided_read(float *out, const float *in, int stride)
{
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    return launch_strided_read(g, b, 0, 0, out, in, stride);
}

static __global__ void tree_sum(const float *in, float *out)
{
    __shared__ float s[1024];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[t];
}
SIMT_LAUNCHER(tree_sum, (const float *in, float *out), (in, out))

cudaError_t rk_tree_sum(const float *in, float *out, int n, int block)
{
    dim3 g = {(unsigned)(n / block), 1, 1}, b = {(unsigned)block, 1, 1};
    return launch_tree_sum(g, b, 0, 0, in, out);
}

static __global__ void shfl_sum(const int *in, int *out)
{
    int t = threadIdx.x, v = in[t];
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    if (t == 0) *out = v;
}
SIMT_LAUNCHER(shfl_sum, (const int *in, int *out), (in, out))

cudaError_t rk_shfl_sum(const int *in, int *out)
{
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    return launch_shfl_sum(g, b, 0, 0, in, out);
}

static __global__ void atomic_count(int *counter) { atomicAdd(counter, 1); }
SIMT_LAUNCHER(atomic_count, (int *counter), (counter))

cudaError_t rk_atomic_count(int *counter, int threads)
{
    dim3 g = {1, 1, 1}, b = {(unsigned)threads, 1, 1};
    return launch_atomic_count(g, b, 0, 0, counter);
}

static __global__ void reverse_dynamic(const int *in, int *out)
{
    SIMT_DYNAMIC_SHARED(int, s);
    int t = threadIdx.x, n = blockDim.x;
    s[t] = in[t];
    __syncthreads();
    out[t] = s[n - 1 - t];
}
SIMT_LAUNCHER(reverse_dynamic, (const int *in, int *out), (in, out))

cudaError_t rk_reverse_dynamic(const int *in, int *out, int n)
{
    dim3 g = {1, 1, 1}, b = {(unsigned)n, 1, 1};
    return launch_reverse_dynamic(g, b, (size_t)n * sizeof(int), 0, in, out);
}
