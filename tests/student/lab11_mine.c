/*
 * Lab 11 — a student's finished exercise (tests/solved_labs.sh,
 * tests/student_check.sh): ZeRO-1's update written bucket by bucket, each
 * bucket reduced, updated and gathered before the next (the reference does
 * each phase over every bucket in turn; the buckets are independent, so
 * the bits are the same).
 */
#include <stdio.h>

#include "11_zero/lab11.h"

int lab11_zero1_update(pl_zero *z, float lr)
{
    pl_zero_count_step(z); /* once per step, before the loop */
    for (int b = 0; b < z->units; b++) {
        pl_zero_bucket *bk = &z->bucket[b];
        long mine = bk->full_at + (long)z->rank * bk->shard; /* my slice in the full buffers */
        pl_comm_result rc = pl_reduce_scatter(z->comm, z->grads + bk->full_at, z->grads + mine,
                                              bk->shard, PL_FLOAT32, PL_SUM, z->stream);
        if (rc != PL_COMM_OK) {
            snprintf(z->error, sizeof z->error, "reduce-scatter of %s failed: %s", bk->name,
                     pl_comm_last_error(z->comm));
            return -1;
        }
        if (pl_zero_optimize_range(z, z->params + mine, z->grads + mine, bk->slice_at, bk->real,
                                   lr) != 0)
            return -1;
        rc = pl_all_gather(z->comm, z->params + mine, z->params + bk->full_at, bk->shard,
                           PL_FLOAT32, z->stream);
        if (rc != PL_COMM_OK) {
            snprintf(z->error, sizeof z->error, "all-gather of %s failed: %s", bk->name,
                     pl_comm_last_error(z->comm));
            return -1;
        }
    }
    return 0;
}
