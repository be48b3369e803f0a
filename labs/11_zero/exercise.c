/*
 * Lab 11 — your exercise: ZeRO stage 1's optimizer step. Delete the
 * PL_TODO() line when you start, then run `make check`. See README.md in
 * this folder.
 *
 * N ranks (z->n) train one model by data parallelism; this is rank
 * z->rank. Each holds the whole model's parameters and gradients
 * (z->params, z->grads: full buffers of z->psi_pad floats), but only its
 * shard of the optimizer state (AdamW's m and v: z->psi_pad / N floats).
 * The model is cut into z->units buckets (the input layer, each block,
 * the head), bucket b at z->bucket[b]:
 *
 *     full_at   where it starts in the full buffers
 *     padded    its floats there, a multiple of N (the tail is padding: zero)
 *     shard     padded / N: each rank owns one slice of that many floats,
 *               rank r the floats [full_at + r shard, full_at + (r + 1) shard)
 *     slice_at  where this rank's slice of the optimizer state starts
 *     real      of this rank's slice, the floats that are not padding
 *
 * When this runs, backward has left in z->grads this rank's own gradients
 * (of its rows of the batch, each scaled by 1/B: summed over the ranks
 * they make the mean gradient of the global batch).
 */
#include <stdio.h> /* snprintf */

#include "11_zero/lab11.h"

/*
 * For each bucket b, reduce-scatter its gradients in place:
 *
 *     pl_reduce_scatter(z->comm, send, recv, recvcount, PL_FLOAT32, PL_SUM, z->stream)
 *
 * with send = the bucket in z->grads, recvcount its shard, and recv this
 * rank's slice of it (send + rank shard): afterwards that slice holds the
 * sum over the N ranks. (Not pl_all_reduce: it sends twice as much, and
 * every rank would end with the whole sum where it needs only its slice.)
 *
 * Then count the step once, pl_zero_count_step(z), and update only this
 * rank's slices: for each bucket
 *
 *     pl_zero_optimize_range(z, params + off, grads + off, slice_at, real, lr)
 *
 * with off the slice's place in the full buffers (its real floats only:
 * the padding is never updated). It refuses a range of the optimizer
 * state that is not this rank's.
 *
 * Then for each bucket all-gather the parameters in place:
 *
 *     pl_all_gather(z->comm, send, recv, sendcount, PL_FLOAT32, z->stream)
 *
 * send = this rank's slice of the bucket in z->params, sendcount its
 * shard, recv = the bucket's start: every rank again holds the whole,
 * updated model (its replica), ready for the next forward.
 *
 * Return 0, or -1 with the reason in z->error (snprintf(z->error, sizeof
 * z->error, ...); pl_zero_optimize_range writes its own) when a call
 * fails (a collective returns PL_COMM_OK, 0, when it worked; its message:
 * pl_comm_last_error(z->comm)).
 */
int lab11_zero1_update(pl_zero *z, float lr)
{
    PL_TODO();
    return 0;
}
