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
/* 256 threads add 1 to one counter, no barrier between them: a __shared__
 * int (global = 0; out[0] = its value) or word[0] (global = 1: a kernel
 * with no barrier at all), with ++ (a race) or atomicAdd (atomic = 1: none). */
cudaError_t rk_counter(int *word, int *out, int global, int atomic);
/* The source line of the racy access in each kernel, for the check. */
extern const int rk_block_sum_race_line, rk_warp_tail_race_line;
extern const int rk_shared_counter_race_line, rk_global_counter_race_line;

#ifdef __cplusplus
}
#endif

#endif
