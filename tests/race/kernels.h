/* kernels.h — the race check's kernels (tests/race/kernels.cu). One block. */
#ifndef RACE_KERNELS_H
#define RACE_KERNELS_H

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Shared-memory tree reduction of 256 values; sync=0 drops the
 * __syncthreads() inside the loop (a race). */
cudaError_t rk_block_sum(const float *in, float *out, int sync);
/* The legacy warp-synchronous tail over 64 values: a volatile shared array,
 * no __syncwarp() (sync=0, a race since Volta), or with it (1). */
cudaError_t rk_warp_tail(const int *in, int *out, int sync);
/* The source line of the racy access in each kernel, for the check. */
extern const int rk_block_sum_race_line, rk_warp_tail_race_line;

#ifdef __cplusplus
}
#endif

#endif
