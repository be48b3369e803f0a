/*
 * paralab/cuda_check.h — for a lab's main only: check a CUDA call, and on
 * failure print the call, file:line, the error's name and text, then exit 1.
 * Library code returns errors instead.
 */
#ifndef PARALAB_CUDA_CHECK_H
#define PARALAB_CUDA_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

static inline void pl_cuda_check(cudaError_t e, const char *call, const char *file, int line)
{
    if (e == cudaSuccess) return;
    fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, call, cudaGetErrorName(e),
            cudaGetErrorString(e));
    exit(1);
}
#define cudaCheck(call) pl_cuda_check((call), #call, __FILE__, __LINE__)

#endif
