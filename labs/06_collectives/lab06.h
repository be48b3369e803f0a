/*
 * lab06.h — Lab 06, collectives: the exercise (a ring all-reduce built from
 * send and receive) and its checks.
 */
#ifndef LAB06_H
#define LAB06_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "paralab/check.h"
#include "paralab/comm.h"
#include "paralab/exercise.h"

typedef struct lab06_impl {
    /* The exercise: sum buf (count floats, on this rank's device) over every
     * rank of c, in place, with a ring: reduce-scatter then all-gather, from
     * pl_send / pl_recv (paired in pl_group_start / pl_group_end) and the
     * reduction kernel pl_k_reduce. scratch holds at least
     * lab06_seg_len(count, n, 0) floats on this rank's device. All work on
     * `stream`. Returns PL_COMM_OK or the first error. */
    int (*ring_all_reduce)(pl_comm *c, float *buf, size_t count, float *scratch,
                           cudaStream_t stream);
} lab06_impl;

extern const lab06_impl lab06_exercise; /* exercise.c: yours */
extern const lab06_impl lab06_solution; /* solution.c: the reference */

/* Segment k of n over count elements: [start, start + len). Lengths differ
 * by at most one element when n does not divide count. */
static inline size_t lab06_seg_start(size_t count, int n, int k)
{
    return count * (size_t)k / (size_t)n;
}
static inline size_t lab06_seg_len(size_t count, int n, int k)
{
    return lab06_seg_start(count, n, k + 1) - lab06_seg_start(count, n, k);
}
/* a mod n for negative a too */
static inline int lab06_mod(int a, int n) { return ((a % n) + n) % n; }

/* The checks of the exercise (0: ring_all_reduce). */
void lab06_check(int exercise, const lab06_impl *impl, pl_check *c);

#endif
