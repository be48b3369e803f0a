/*
 * kernels_dialect.h — host wrappers of the dialect suite's kernels
 * (tests/unit/kernels_dialect.cu): CUDA forms the simulated build once
 * refused (extern __shared__, non-static inline __device__ helpers,
 * __launch_bounds__, vector types, clock64(), conversion intrinsics). Each
 * wrapper launches on the legacy stream and returns the launch's error.
 */
#ifndef TEST_KERNELS_DIALECT_H
#define TEST_KERNELS_DIALECT_H

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* sizes and alignments of the vector types, device side: out[2k] = sizeof,
 * out[2k + 1] = alignment of the k-th of float2, float3, float4, int2,
 * int3, int4, uint2, uint3, uint4, double2, char4, short2, longlong2 */
#define TD_VECTOR_TYPES 13
cudaError_t td_vector_layout(unsigned *out);
/* out[i] = make_float4(2 in[i].x, in[i].y + 1, -in[i].z, in[i].w) for i < n,
 * by a __launch_bounds__(256) kernel in blocks of `block` threads (more than
 * 256: cudaErrorLaunchOutOfResources) */
cudaError_t td_float4_copy(const float4 *in, float4 *out, int n, int block);
/* out[warp] = sum of in over each warp of 32 (n a multiple of 32), by a
 * non-static inline __device__ warpReduceSum */
cudaError_t td_warp_reduce(const float *in, float *out, int n, int block);
/* out[block] = sum of in over each block (a multiple of 32 threads, at most
 * 1024), by blockReduceSum as NVIDIA's blog writes it: `__inline__ __device__`
 * on a line of its own, a `static __shared__` array */
cudaError_t td_block_reduce(const int *in, int *out, int n, int block);
/* out[i] = in[the mirror of i in its block], staged through dynamic shared
 * memory of `shmem` bytes declared `extern __shared__ int s[];` in the
 * kernel (file_scope 0) or at file scope (1) */
cudaError_t td_reverse_extern(const int *in, int *out, int n, int block, size_t shmem,
                              int file_scope);
/* One block of `threads`: each thread reads clock64() three times (a
 * __syncthreads() before the third) and clock() twice; out[4 t + 0..2] =
 * the clock64() readings, out[4 t + 3] = (unsigned)(second clock() - first) */
cudaError_t td_clocks(long long *out, int threads);
/* The conversion intrinsics on fixed inputs: out[0..TD_CONVERSIONS) (see
 * kernels_dialect.cu for which slot is which) */
#define TD_CONVERSIONS 32
cudaError_t td_conversions(long long *out);

#ifdef __cplusplus
}
#endif

#endif
