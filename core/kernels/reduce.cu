/*
 * reduce.cu — the element-wise reduction the local collective engine applies
 * to each chunk it receives, and the division that turns a sum into PL_AVG.
 * Grid-stride loops: a fixed grid of at most 1024 blocks of 256 threads, so
 * the emulator pays its per-thread cost once per thread, not per element.
 */
#include "simt/kernel.h"

#include "paralab/comm.h"
#include "paralab/kernels.h"

/* U: the type the arithmetic is done in. Integers use their unsigned twin,
 * so that sums and products wrap as on a GPU (and in NCCL) instead of
 * overflowing, which C leaves undefined. */
#define REDUCE_KERNEL(suffix, T, U)                                                                \
    static __global__ void reduce_##suffix(T *dst, const T *src, size_t n, int op)                 \
    {                                                                                              \
        size_t stride = (size_t)blockDim.x * gridDim.x;                                            \
        size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;                                  \
        switch (op) {                                                                              \
        case PL_PROD:                                                                              \
            for (; i < n; i += stride) dst[i] = (T)((U)dst[i] * (U)src[i]);                        \
            break;                                                                                 \
        case PL_MAX:                                                                               \
            for (; i < n; i += stride) dst[i] = src[i] > dst[i] ? src[i] : dst[i];                 \
            break;                                                                                 \
        case PL_MIN:                                                                               \
            for (; i < n; i += stride) dst[i] = src[i] < dst[i] ? src[i] : dst[i];                 \
            break;                                                                                 \
        default: /* PL_SUM, PL_AVG */                                                              \
            for (; i < n; i += stride) dst[i] = (T)((U)dst[i] + (U)src[i]);                        \
        }                                                                                          \
    }                                                                                              \
    SIMT_LAUNCHER(reduce_##suffix, (T * dst, const T *src, size_t n, int op), (dst, src, n, op))   \
    static __global__ void divide_##suffix(T *buf, size_t n, T divisor)                            \
    {                                                                                              \
        size_t stride = (size_t)blockDim.x * gridDim.x;                                            \
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)         \
            buf[i] = buf[i] / divisor;                                                             \
    }                                                                                              \
    SIMT_LAUNCHER(divide_##suffix, (T * buf, size_t n, T divisor), (buf, n, divisor))

REDUCE_KERNEL(f32, float, float)
REDUCE_KERNEL(f64, double, double)
REDUCE_KERNEL(i32, int32_t, uint32_t)
REDUCE_KERNEL(i64, int64_t, uint64_t)

static dim3 grid_for(size_t n)
{
    size_t blocks = (n + 255) / 256;
    dim3 g = {(unsigned)(blocks < 1024 ? (blocks ? blocks : 1) : 1024), 1, 1};
    return g;
}

cudaError_t pl_k_reduce(void *dst, const void *src, size_t n, int type, int op, cudaStream_t stream)
{
    dim3 g = grid_for(n), b = {256, 1, 1};
    size_t bytes = pl_dtype_size((pl_dtype)type);
    SIMT_LAUNCH_COST((double)n, 3.0 * (double)(n * bytes)); /* 1 op; read 2, write 1 */
    switch (type) {
    case PL_FLOAT32:
        return launch_reduce_f32(g, b, 0, stream, (float *)dst, (const float *)src, n, op);
    case PL_FLOAT64:
        return launch_reduce_f64(g, b, 0, stream, (double *)dst, (const double *)src, n, op);
    case PL_INT32:
        return launch_reduce_i32(g, b, 0, stream, (int32_t *)dst, (const int32_t *)src, n, op);
    case PL_INT64:
        return launch_reduce_i64(g, b, 0, stream, (int64_t *)dst, (const int64_t *)src, n, op);
    default:
        return cudaErrorInvalidValue;
    }
}

cudaError_t pl_k_divide(void *buf, size_t n, int type, int divisor, cudaStream_t stream)
{
    dim3 g = grid_for(n), b = {256, 1, 1};
    size_t bytes = pl_dtype_size((pl_dtype)type);
    SIMT_LAUNCH_COST((double)n, 2.0 * (double)(n * bytes));
    switch (type) {
    case PL_FLOAT32:
        return launch_divide_f32(g, b, 0, stream, (float *)buf, n, (float)divisor);
    case PL_FLOAT64:
        return launch_divide_f64(g, b, 0, stream, (double *)buf, n, (double)divisor);
    case PL_INT32:
        return launch_divide_i32(g, b, 0, stream, (int32_t *)buf, n, (int32_t)divisor);
    case PL_INT64:
        return launch_divide_i64(g, b, 0, stream, (int64_t *)buf, n, (int64_t)divisor);
    default:
        return cudaErrorInvalidValue;
    }
}
