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
