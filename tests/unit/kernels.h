/*
 * kernels.h — host wrappers of the conformance suite's kernels
 * (tests/unit/kernels.cu). Every wrapper launches on `stream` and returns the
 * launch's cudaError_t. Pointers are device pointers unless said otherwise.
 */
#ifndef TEST_KERNELS_H
#define TEST_KERNELS_H

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out[linear thread id] = blockIdx/threadIdx packed as
 * ((((bz*gy+by)*gx+bx) << 10) | linear id in block), for any 3-D shape. */
cudaError_t tk_ids(unsigned *out, dim3 grid, dim3 block);
/* One thread that spins until *flag (device memory, written from another
 * stream) is non-zero: a kernel in an endless loop, for the watchdog. */
cudaError_t tk_spin_until(const int *flag, cudaStream_t stream);
/* Shared-memory tree reduction of in[0..n) (sequential addressing), one
 * partial sum per block into out[blockIdx.x]; `block` a power of two.
 * sync=0 leaves out the __syncthreads() inside the loop (a race). */
cudaError_t tk_block_sum(const float *in, float *out, int n, int block, int sync);
/* The same with every __syncthreads(), on `stream` (each rank's own). */
cudaError_t tk_block_sum_on(const float *in, float *out, int n, int block, cudaStream_t stream);
/* Warp-shuffle reduction: out[warp] = sum of in over the warp. */
cudaError_t tk_warp_sum(const int *in, int *out, int n);
/* For lane l of one warp of 32: out[k*32 + l] = results of
 * k=0 __shfl_sync(v, arg), 1 __shfl_up_sync(v, arg), 2 __shfl_down_sync,
 * 3 __shfl_xor_sync, all with `width`, where v = 100 + l. */
cudaError_t tk_shuffles(int *out, int arg, int width);
/* out[0..2] = __ballot_sync(full, l % 3 == 0), __any_sync(l == 7), __all_sync(l < 32);
 * out[3] = __all_sync(l != 5); out[4] = __any_sync(0). */
cudaError_t tk_votes(unsigned *out);
/* Atomics over `threads` threads; see kernels.cu for what each slot holds. */
cudaError_t tk_atomics(int *i, unsigned *u, unsigned long long *ull, float *f, double *d,
                       int threads);
/* Integer, bit and float intrinsics of x: out[0..] (see kernels.cu). */
cudaError_t tk_intrinsics(int *out, int x);
/* Dynamic shared memory: out[i] = in[block - 1 - i] within each block. */
cudaError_t tk_reverse_dynamic(const int *in, int *out, int n, int block, size_t shmem);
/* For cudaFuncSetAttribute: the kernel tk_reverse_dynamic launches. */
const void *tk_reverse_dynamic_kernel(void);
/* __constant__ memory: sets the 4 coefficients, then out[i] = poly(i). */
cudaError_t tk_set_coefficients(const float *c4);
cudaError_t tk_poly(float *out, int n);
/* Grid-stride loop: x[i] = a * x[i] + y[i] for i < n with a fixed grid. */
cudaError_t tk_axpy(float a, const float *y, float *x, int n, int grid, int block);
/* Spins until *flag (pinned host memory) is non-zero or `limit` iterations
 * pass; *seen = 1 if it saw the flag. One thread. */
cudaError_t tk_wait_flag(volatile int *flag, int *seen, long long limit, cudaStream_t stream);
/* A kernel of declared cost (flops, bytes) that writes out[0] = 1. */
cudaError_t tk_cost(int *out, double flops, double bytes, cudaStream_t stream);
/* Warp-synchronous tail: the legacy reduction with a volatile shared array
 * and no __syncwarp() (sync=0), or with __syncwarp() between steps (1).
 * One block of 64 threads; out[0] = sum of in[0..64). */
cudaError_t tk_warp_tail(const int *in, int *out, int sync);

/* Device printf: threads 0..2 of each of `blocks` blocks print
 * "hello from thread T of block B, tag TAG". */
cudaError_t tk_hello(int blocks, int tag);

/* ---- teaching faults (simulated build) ------------------------------- */
/* Threads < 16 reach one __syncthreads(), the others another. */
cudaError_t tk_divergent_barrier(int *out);
/* Threads >= n return before the __syncthreads() the rest reach. */
cudaError_t tk_exit_before_barrier(int *out, int n);
/* Lanes >= 16 exit; the rest shuffle with a full mask. */
cudaError_t tk_shfl_exited_lane(int *out);
/* Writes out[i] for i < n + extra: out-of-bounds past n. */
cudaError_t tk_write_past_end(int *out, int n, int extra);
/* Lane 0 exits at once; lanes 1..31 shuffle with mask 0xfffffffe (legal
 * CUDA): out[l] = value of lane l+1 (lane 31: its own), l = 1..31. */
cudaError_t tk_lane0_skips(int *out);
/* blocks x 64 threads; only warp 1 shuffles (full mask), lanes >= exit_from
 * of it exit first: out[b * 32 + l] = 1000 b + 32 + l + 1 (lane 31: its own). */
cudaError_t tk_warp1_shuffles(int *out, int blocks, int exit_from);
/* One block of 64: warp 1 shuffles, then lane t of warp 1 asserts
 * in[t] >= 0 and writes out[t] = in[t + 1] (lane 31: its own). */
cudaError_t tk_warp1_shuffle_assert(const int *in, int *out);
/* Professional CUDA C Programming's reductions with the "volatile" warp
 * tail: chapter 3's reduceUnrollWarps8 (global memory; 512 threads, 8
 * blocks' worth each) or chapter 5's reduceSmem (shared memory, 128
 * threads; sync = 1: the tail with __syncwarp()). out[b]: block b's sum. */
cudaError_t tk_book_reduce(int *in, int *out, unsigned n, int chapter, int sync);
/* 256 threads count, with ++ (atomic = 0) or atomicAdd (1): into a
 * __shared__ histogram of 4 bins, bin threadIdx.x / 64 (global = 0;
 * out[0..3] = the bins), or into out[0] (global = 1). */
cudaError_t tk_count_up(int *out, int global, int atomic);
/* One block of 256: each thread adds 1 to a scalar __shared__ int (++ or
 * atomicAdd); out[0] = its value. */
cudaError_t tk_count_scalar(int *out, int atomic);
/* 64 threads: thread 0 exits, the others wait at a __syncthreads(). */
cudaError_t tk_thread0_skips_barrier(int *out);
/* A thread with a 256 KiB local array: a stack overflow on the simulator. */
cudaError_t tk_big_frame(int *out);
/* out[0] = what cudaMalloc returns when called inside a kernel (simulated
 * build only: device-side runtime calls are not simulated). */
cudaError_t tk_runtime_from_device(int *out);
/* assert(in[i] >= 0) for every i < n. */
cudaError_t tk_assert_nonnegative(const int *in, int n);
/* out[i] = a[i] OP b[i] for i < n (blocks of 32): op 0 int division, 1 int
 * remainder, 2 unsigned division, 3 long long division (the operands cast
 * from long long). */
cudaError_t tk_divide(const long long *a, const long long *b, long long *out, int n, int op);
/* The line of kernels.cu holding the division of op 0. */
extern const int tk_divide_line;
/* One block of `threads` threads: thread t writes p[-1 - t] (write = 1), or
 * reads it into out[t]. */
cudaError_t tk_below(float *p, float *out, int threads, int write);
/* One block of `threads` threads: assert(in[t] >= 0), assert(in[t] < 1000),
 * __syncthreads(), out[t] = in[t]. */
cudaError_t tk_assert_then_sync(const int *in, int *out, int threads);

/* kernels_mem.cu (call mode: simtMemStats counts their accesses) */
/* out[t] = in[t * stride], one block of `threads` threads. */
cudaError_t tk_strided_copy(float *out, const float *in, int stride, int threads);
/* out[t] = sum over k < reps of in[t + 32 k], one warp. */
cudaError_t tk_repeat_loads(float *out, const float *in, int reps);
/* A 32x32 block transposes in[32][32] through shared memory: mode 0 a
 * 32x32 tile (column reads conflict), 1 a 32x33 tile (no conflict), 2 every
 * thread reads tile[0][0] (a broadcast; out is not a transpose). */
cudaError_t tk_tile_columns(float *out, const float *in, int mode);

#ifdef __cplusplus
}
#endif

#endif
