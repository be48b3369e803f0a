/*
 * simt/kernel.h — include this (first) in every kernel file (*.cu).
 *
 * A kernel file is written in the C subset of CUDA and compiles two ways:
 *
 *   nvcc  (build/cuda): real CUDA; this header adds only the launcher macro.
 *   cc    (build/sim):  C11 against the SIMT emulator; this header supplies
 *                       the CUDA dialect (threadIdx, __syncthreads, atomics,
 *                       shuffles, ...) from simt/device.h.
 *
 * Every kernel gets exactly one launcher declaration after its definition:
 *
 *     __global__ void vector_add(const float *a, const float *b, float *c, int n)
 *     { ... }
 *     SIMT_LAUNCHER(vector_add, (const float *a, const float *b, float *c, int n),
 *                   (a, b, c, n))
 *
 * which defines, in this file only (static),
 *
 *     cudaError_t launch_vector_add(dim3 grid, dim3 block, size_t shmem,
 *                                   cudaStream_t stream, const float *a, ...);
 *
 * Under nvcc it expands to `vector_add<<<grid, block, shmem, stream>>>(...)`
 * and returns cudaGetLastError(); in the simulated build it hands a copy of
 * the arguments to the emulator, which validates the launch configuration
 * exactly as CUDA does and runs the kernel on the stream. A kernel takes at
 * least one parameter and at most 16.
 *
 * SIMT_LAUNCH_COST(flops, bytes) before a launch declares the work it does
 * (floating-point operations, bytes of device memory read + written); the
 * simulated GPU uses it for the kernel's modeled time (a roofline). It is a
 * no-op on real GPUs, where time is measured. SIMT_LAUNCH_EAGER() before a
 * launch says the kernel's work is bounded, so the simulated GPU may run it
 * on the launching thread when its stream is idle (simtLaunchEager); a
 * no-op on real GPUs.
 *
 * The dynamic shared-memory array is declared as in CUDA,
 * `extern __shared__ type name[];` (build/sim: mk/cu2c.pl rewrites it), or
 * with SIMT_DYNAMIC_SHARED(type, name) inside the kernel body.
 *
 * See docs/cuda-c-dialect.md for what is supported and what is refused.
 */
#ifndef SIMT_KERNEL_H
#define SIMT_KERNEL_H

#define SIMT_UNPAREN(...) __VA_ARGS__

/* `SIMT_UNROLL for (...)`: nvcc unrolls the loop completely (#pragma unroll;
 * the trip count must be a constant), so that arrays indexed by its counter
 * live in registers. The simulated build ignores it (gcc would warn about an
 * unknown pragma). */
#ifdef __CUDACC__
#define SIMT_UNROLL _Pragma("unroll")
#else
#define SIMT_UNROLL
#endif

#ifdef __CUDACC__

#include <cuda_runtime.h>
#include <assert.h>
#include <stdio.h>

#define SIMT_LAUNCHER(name, params, args)                                                          \
    static __attribute__((unused)) cudaError_t launch_##name(                                      \
        dim3 grid, dim3 block, size_t shmem, cudaStream_t stream, SIMT_UNPAREN params)             \
    {                                                                                              \
        name<<<grid, block, shmem, stream>>> args;                                                 \
        return cudaGetLastError();                                                                 \
    }
#define SIMT_LAUNCH_COST(flops, bytes) ((void)(flops), (void)(bytes))
#define SIMT_LAUNCH_EAGER() ((void)0)
#define SIMT_DYNAMIC_SHARED(type, name) extern __shared__ type name[]

#else /* the simulated build */

#include "simt/device.h"

#endif

#endif /* SIMT_KERNEL_H */
