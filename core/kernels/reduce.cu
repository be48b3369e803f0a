/*
 * reduce.cu — the element-wise reduction the local collective engine applies
 * to each chunk it receives, and the division that turns a sum into PL_AVG.
 * Each block owns one contiguous tile of TILE = 256 threads x 16 elements,
 * and its threads stride through the tile by 256: a warp's loads stay
 * coalesced on a GPU, each thread does 16 elements (the emulator pays its
 * per-thread cost once per 16 elements), and in the emulator, which runs a
 * block's threads one after another, consecutive threads reuse the cache
 * lines the one before them loaded. (A grid-stride loop over the whole array
 * makes each emulated thread walk memory a grid apart: measured 2x slower
 * here on 2^21 floats.)
 */
#include "simt/kernel.h"

#include <stdint.h>

#include "paralab/kernels.h"

#define TILE (256u * 16u) /* elements per block: 256 threads x 16 */

/* U: the type the arithmetic is done in. Integers use their unsigned twin,
 * so that sums and products wrap as on a GPU (and in NCCL) instead of
 * overflowing, which C leaves undefined. */
/* Which elements of its block's tile a thread takes: on a GPU every
 * 256th from its index (a warp's loads coalesce); in the emulator, which
 * runs a block's threads one after another on one core, a run of 16 in a
 * row (the core's prefetcher and vector unit see one sweep of the tile, not
 * 256 strided ones: measured below). The same elements are computed either
 * way, each once, so the results are the same bits; the modeled time is
 * the launch's declared cost, not the body's. */
#ifdef PARALAB_SIMULATED_CUDA
#define TILE_FIRST() ((size_t)blockIdx.x * TILE + (size_t)threadIdx.x * (TILE / blockDim.x))
#define TILE_STRIDE() ((size_t)1)
#define TILE_END(n)                                                                                \
    ((n) < (size_t)blockIdx.x * TILE + (size_t)(threadIdx.x + 1) * (TILE / blockDim.x)             \
         ? (n)                                                                                     \
         : (size_t)blockIdx.x * TILE + (size_t)(threadIdx.x + 1) * (TILE / blockDim.x))
#else
#define TILE_FIRST() ((size_t)blockIdx.x * TILE + threadIdx.x)
#define TILE_STRIDE() ((size_t)blockDim.x)
#define TILE_END(n)                                                                                \
    ((n) < (size_t)blockIdx.x * TILE + TILE ? (n) : (size_t)blockIdx.x * TILE + TILE)
#endif

#define REDUCE_KERNEL(suffix, T, U)                                                                \
    static __global__ void reduce_##suffix(T *dst, const T *src, size_t n, int op)                 \
    {                                                                                              \
        size_t i = TILE_FIRST(), stride = TILE_STRIDE();                                           \
        n = TILE_END(n); /* this thread's part of its block's tile */                              \
        switch (op) {                                                                              \
        case PL_K_PROD:                                                                            \
            for (; i < n; i += stride) dst[i] = (T)((U)dst[i] * (U)src[i]);                        \
            break;                                                                                 \
        case PL_K_MAX:                                                                             \
            for (; i < n; i += stride) dst[i] = src[i] > dst[i] ? src[i] : dst[i];                 \
            break;                                                                                 \
        case PL_K_MIN:                                                                             \
            for (; i < n; i += stride) dst[i] = src[i] < dst[i] ? src[i] : dst[i];                 \
            break;                                                                                 \
        default: /* PL_K_SUM, PL_K_AVG */                                                          \
            for (; i < n; i += stride) dst[i] = (T)((U)dst[i] + (U)src[i]);                        \
        }                                                                                          \
    }                                                                                              \
    SIMT_LAUNCHER(reduce_##suffix, (T * dst, const T *src, size_t n, int op), (dst, src, n, op))   \
    static __global__ void divide_##suffix(T *buf, size_t n, T divisor)                            \
    {                                                                                              \
        size_t i = TILE_FIRST(), stride = TILE_STRIDE();                                           \
        n = TILE_END(n);                                                                           \
        for (; i < n; i += stride) buf[i] = buf[i] / divisor;                                      \
    }                                                                                              \
    SIMT_LAUNCHER(divide_##suffix, (T * buf, size_t n, T divisor), (buf, n, divisor))

REDUCE_KERNEL(f32, float, float)
REDUCE_KERNEL(f64, double, double)
REDUCE_KERNEL(i32, int32_t, uint32_t)
REDUCE_KERNEL(i64, int64_t, uint64_t)

/* bytes per element (0: a type this file does not know) */
static size_t elem_size(int type)
{
    switch (type) {
    case PL_K_FLOAT32:
        return sizeof(float);
    case PL_K_FLOAT64:
        return sizeof(double);
    case PL_K_INT32:
        return sizeof(int32_t);
    case PL_K_INT64:
        return sizeof(int64_t);
    default:
        return 0;
    }
}

static dim3 grid_for(size_t n)
{
    size_t blocks = (n + TILE - 1) / TILE;
    dim3 g = {(unsigned)(blocks ? blocks : 1), 1, 1};
    return g;
}

/* 256 threads a block; in the emulator, a launch of fewer than TILE
 * elements (one block) gets one thread, which takes the whole tile
 * (TILE_FIRST, TILE_END): of 256, only the first n/16 would find work,
 * and each of the others costs a call. A ring step of a small message then
 * runs one emulated thread, a plain loop. The same elements, each computed
 * once: the same bits; the modeled time is the declared cost, whatever the
 * block. */
static dim3 block_for(size_t n)
{
    dim3 b = {256, 1, 1};
#ifdef PARALAB_SIMULATED_CUDA
    if (n < TILE) b.x = 1;
#else
    (void)n;
#endif
    return b;
}

cudaError_t pl_k_reduce(void *dst, const void *src, size_t n, int type, int op, cudaStream_t stream)
{
    dim3 g = grid_for(n), b = block_for(n);
    size_t bytes = elem_size(type);
    SIMT_LAUNCH_COST((double)n, 3.0 * (double)(n * bytes)); /* 1 op; read 2, write 1 */
    SIMT_LAUNCH_EAGER();
    switch (type) {
    case PL_K_FLOAT32:
        return launch_reduce_f32(g, b, 0, stream, (float *)dst, (const float *)src, n, op);
    case PL_K_FLOAT64:
        return launch_reduce_f64(g, b, 0, stream, (double *)dst, (const double *)src, n, op);
    case PL_K_INT32:
        return launch_reduce_i32(g, b, 0, stream, (int32_t *)dst, (const int32_t *)src, n, op);
    case PL_K_INT64:
        return launch_reduce_i64(g, b, 0, stream, (int64_t *)dst, (const int64_t *)src, n, op);
    default:
        return cudaErrorInvalidValue;
    }
}

cudaError_t pl_k_divide(void *buf, size_t n, int type, int divisor, cudaStream_t stream)
{
    dim3 g = grid_for(n), b = block_for(n);
    size_t bytes = elem_size(type);
    SIMT_LAUNCH_COST((double)n, 2.0 * (double)(n * bytes));
    SIMT_LAUNCH_EAGER();
    switch (type) {
    case PL_K_FLOAT32:
        return launch_divide_f32(g, b, 0, stream, (float *)buf, n, (float)divisor);
    case PL_K_FLOAT64:
        return launch_divide_f64(g, b, 0, stream, (double *)buf, n, (double)divisor);
    case PL_K_INT32:
        return launch_divide_i32(g, b, 0, stream, (int32_t *)buf, n, (int32_t)divisor);
    case PL_K_INT64:
        return launch_divide_i64(g, b, 0, stream, (int64_t *)buf, n, (int64_t)divisor);
    default:
        return cudaErrorInvalidValue;
    }
}
