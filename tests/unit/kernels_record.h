/*
 * kernels_record.h — host wrappers of the kernel record's test kernels
 * (tests/unit/kernels_record.cu, compiled in call mode: KASAN_CALLS_FILES
 * in mk/build.mk, so the record sees their every access). Each launches on
 * the default stream and returns the launch's cudaError_t. Pointers are
 * device pointers.
 */
#ifndef TEST_KERNELS_RECORD_H
#define TEST_KERNELS_RECORD_H

#include <stddef.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A kernel that touches no memory, on `grid` x `block` with `shmem`
 * dynamic shared bytes: only its blocks are recorded. */
cudaError_t rk_nothing(dim3 grid, dim3 block, size_t shmem);
/* c[i] = a[i] + b[i] for i < n, blocks of `block` threads (the tail
 * threads of the last block store nothing). */
cudaError_t rk_vector_add(const float *a, const float *b, float *c, int n, int block);
/* One warp of 32: out[t] = in[t * stride]. */
cudaError_t rk_strided_read(float *out, const float *in, int stride);
/* One block of `block` threads (a power of two, at most 1024) per
 * `block` elements: the shared-memory tree s[t] += s[t + stride] with
 * __syncthreads() after each level; out[blockIdx.x] = s[0]. */
cudaError_t rk_tree_sum(const float *in, float *out, int n, int block);
/* One warp of 32: v = in[t], then v += __shfl_down_sync(v, o) for o = 16,
 * 8, 4, 2, 1; lane 0 stores *out = v. */
cudaError_t rk_shfl_sum(const int *in, int *out);
/* `threads` threads, one block: atomicAdd(counter, 1). */
cudaError_t rk_atomic_count(int *counter, int threads);
/* One block of n threads (n <= 1024): dynamic shared s[t] = in[t],
 * __syncthreads(), out[t] = s[n - 1 - t]. */
cudaError_t rk_reverse_dynamic(const int *in, int *out, int n);

#ifdef __cplusplus
}
#endif

#endif
