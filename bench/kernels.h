/* kernels.h — the benchmark's kernels (bench/kernels.cu); launches on stream 0. */
#ifndef BENCH_KERNELS_H
#define BENCH_KERNELS_H

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* c = a + b, one element per thread, blocks of 256. */
cudaError_t bk_vector_add(const float *a, const float *b, float *c, int n);
/* Shared-memory tree reduction, 256 threads per block: out[block] = partial
 * sum. 9 barriers per thread (one after the load, 8 in the tree). */
cudaError_t bk_block_sum(const float *in, float *out, int n);
#define BK_BLOCK_SUM_BARRIERS 9
/* Warp-shuffle reduction, 256 threads per block: out[warp] = partial sum.
 * 5 shuffles per thread. */
cudaError_t bk_warp_sum(const float *in, float *out, int n);
#define BK_WARP_SUM_SHUFFLES 5

#ifdef __cplusplus
}
#endif

#endif
