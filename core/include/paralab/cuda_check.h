/*
 * paralab/cuda_check.h — checking a CUDA call, the one way every program
 * here does it:
 *   cudaCheck(call)   for a program's main only: on failure print file:line,
 *                     the call, the error's name and text, then exit 1;
 *   PL_RANK_CK(call)  for a rank's function (a `pl_rank *r` in scope and an
 *                     `out:` label that frees what it made): on failure
 *                     "call: cudaErrorName" into r->error, goto out —
 *                     the world reports it (Labs' PL_LAB_CK is this);
 *   pl_cuda_note      the message both write, for code with other needs.
 * Library code returns errors instead (the communicators return their own
 * pl_comm_result, NCCL's calls their ncclResult_t).
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
#define cudaCheck(call) pl_cuda_check((cudaError_t)(call), #call, __FILE__, __LINE__)

/* "call: cudaErrorName" into buf (cap bytes) when e is an error, and
 * " (its text)" after it when `text` is 1; returns e. */
static inline cudaError_t pl_cuda_note(cudaError_t e, const char *call, int text, char *buf,
                                       size_t cap)
{
    if (e != cudaSuccess)
        snprintf(buf, cap, "%s: %s%s%s%s", call, cudaGetErrorName(e), text ? " (" : "",
                 text ? cudaGetErrorString(e) : "", text ? ")" : "");
    return e;
}
#define PL_RANK_CK(call)                                                                           \
    do {                                                                                           \
        if (pl_cuda_note((cudaError_t)(call), #call, 0, r->error, sizeof r->error)) goto out;      \
    } while (0)

#endif
