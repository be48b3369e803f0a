/*
 * Lab 11 — the reference solution. Read it after trying exercise.c.
 *
 * ZeRO-1 (Rajbhandari et al. 2020, P_os): data parallelism's all-reduce
 * is a reduce-scatter followed by an all-gather (a ring all-reduce is
 * exactly those two phases), so the optimizer can run between them, on
 * the slice each rank has just received the sum of. Every rank updates a
 * different 1/N of the model with its 1/N of AdamW's state, and the
 * all-gather hands every rank the others' updated slices: the same
 * traffic as plain data parallelism (2 (N - 1)/N Ψ), 1/N of the optimizer
 * state. It is the engine's pl_zero_update_stage1, written out.
 */
#include <stdio.h>

#include "11_zero/lab11.h"

int lab11_zero1_update_solution(pl_zero *z, float lr)
{
    long me = z->rank;
    for (int b = 0; b < z->units; b++) {
        const pl_zero_bucket *k = &z->bucket[b];
        float *g = z->grads + k->full_at;
        if (pl_reduce_scatter(z->comm, g, g + me * k->shard, (size_t)k->shard, PL_FLOAT32, PL_SUM,
                              z->stream)) {
            snprintf(z->error, sizeof z->error, "the reduce-scatter of bucket %s: %s", k->name,
                     pl_comm_last_error(z->comm));
            return -1;
        }
    }
    pl_zero_count_step(z);
    for (int b = 0; b < z->units; b++) {
        const pl_zero_bucket *k = &z->bucket[b];
        long off = k->full_at + me * k->shard;
        if (pl_zero_optimize_range(z, z->params + off, z->grads + off, k->slice_at, k->real, lr))
            return -1;
    }
    for (int b = 0; b < z->units; b++) {
        const pl_zero_bucket *k = &z->bucket[b];
        float *p = z->params + k->full_at;
        if (pl_all_gather(z->comm, p + me * k->shard, p, (size_t)k->shard, PL_FLOAT32, z->stream)) {
            snprintf(z->error, sizeof z->error, "the all-gather of bucket %s: %s", k->name,
                     pl_comm_last_error(z->comm));
            return -1;
        }
    }
    return 0;
}
