/*
 * lab05.h — Lab 05, streams: one stream (copy in, compute, copy out, one
 * after the other) against chunks spread over several streams, so that one
 * chunk's copies overlap another's compute.
 */
#ifndef LAB05_H
#define LAB05_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "paralab/check.h"
#include "paralab/exercise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The work: out[i] = f(in[i]) for i < n, a few dozen floating-point
 * operations per element (lab05_kernels.cu), enqueued on `stream`. */
int lab05_process(float *d_out, const float *d_in, size_t n, cudaStream_t stream);

typedef struct lab05_impl {
    /* The exercise: the same as lab05_one_stream, with the n elements cut
     * into `chunks` pieces (the last may be shorter), piece k copied in,
     * processed and copied out on streams[k % nstreams]. h_in and h_out are
     * pinned host memory, d_in and d_out device memory, n floats each.
     * Returns cudaSuccess or the first error; the work may still be running
     * (the caller synchronises). */
    int (*chunked)(float *h_out, const float *h_in, float *d_out, float *d_in, size_t n, int chunks,
                   cudaStream_t *streams, int nstreams);
} lab05_impl;

extern const lab05_impl lab05_exercise; /* exercise.c: yours */
extern const lab05_impl lab05_solution; /* solution.c: the reference */

/* One stream: copy all in, process all, copy all out, in sequence. */
int lab05_one_stream(float *h_out, const float *h_in, float *d_out, float *d_in, size_t n,
                     cudaStream_t stream);

/* The checks (exercise 0: chunked). */
void lab05_check(int exercise, const lab05_impl *impl, pl_check *c);

#ifdef __cplusplus
}
#endif

#endif
