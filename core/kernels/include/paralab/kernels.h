/*
 * paralab/kernels.h — paralab's own device kernels (in core/kernels/), as
 * host functions that launch them on a stream and return the launch's
 * cudaError_t. Pointers are device pointers; counts are elements.
 */
#ifndef PARALAB_KERNELS_H
#define PARALAB_KERNELS_H

#include <stddef.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The element types and reductions by number, as paralab/comm.h numbers
 * pl_dtype and pl_redop (core/comm/comm.c checks that the two agree): a kernel
 * sees the CUDA dialect only, never paralab/comm.h. */
enum { PL_K_FLOAT32, PL_K_FLOAT64, PL_K_INT32, PL_K_INT64 };
enum { PL_K_SUM, PL_K_PROD, PL_K_MAX, PL_K_MIN, PL_K_AVG };

/* dst[i] = dst[i] OP src[i] for i < n. type: a pl_dtype, op: PL_SUM, PL_PROD,
 * PL_MAX or PL_MIN (PL_AVG reduces as PL_SUM; see pl_k_divide). */
cudaError_t pl_k_reduce(void *dst, const void *src, size_t n, int type, int op,
                        cudaStream_t stream);
/* buf[i] = buf[i] / divisor for i < n (integers: C division). */
cudaError_t pl_k_divide(void *buf, size_t n, int type, int divisor, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
