/*
 * Lab 06 — your exercise: the ring all-reduce, from send and receive.
 * Delete the PL_TODO() line when you start, then run `make check`.
 * See README.md in this folder.
 */
#include "06_collectives/lab06.h"
#include "paralab/kernels.h"

/*
 * N ranks each hold buf[0..count). Cut it into N segments (lab06_seg_start,
 * lab06_seg_len). Rank r's neighbours: next = (r + 1) mod N, prev = (r - 1)
 * mod N (lab06_mod).
 *
 * 1. Reduce-scatter, N-1 steps. At step s, rank r sends segment (r - s - 1)
 *    to next and receives segment (r - s - 2) from prev into scratch, then adds
 *    scratch into that segment of buf:
 *        pl_k_reduce(buf + start, scratch, len, PL_FLOAT32, PL_SUM, stream)
 *    Afterwards rank r holds the full sum of segment r (as the
 *    engine's ring: the table of step 6 and 7 shows its segments cK).
 * 2. All-gather, N-1 steps. At step s, rank r sends segment (r - s) to
 *    next and receives segment (r - s - 1) from prev straight into buf.
 *
 * Each step's send and receive go between pl_group_start() and
 * pl_group_end(): every rank sends before it receives, and outside a group
 * that would deadlock (try it: the engine reports who waits for whom).
 */
static int ring_all_reduce(pl_comm *c, float *buf, size_t count, float *scratch,
                           cudaStream_t stream)
{
    PL_TODO();
    return PL_COMM_OK;
}

const lab06_impl lab06_exercise = {ring_all_reduce};
