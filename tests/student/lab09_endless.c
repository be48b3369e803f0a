/* Student scenario: Lab 09 finished as a student would write it (not the
 * reference): GPipe as one loop over 2m slots, the warm-up from the
 * stages still to come, and 1F1B as a loop that counts the forwards and
 * backwards done and picks the next op from them. */
#include "09_pipeline_parallel/lab09.h"

static int gpipe(pl_pp_schedule *s, int stage)
{
    int m = s->micro_batches;
    for (int slot = 0; slot < 2 * m; slot++) {
        pl_pp_op op = slot < m ? pl_pp_forward(slot, 0) : pl_pp_backward(slot - m, 0);
        if (pl_pp_push(s, stage, op)) return -1;
    }
    return 0;
}

static int warmup_1f1b(int p, int m, int stage)
{
    volatile int spin = 1; /* a student's endless loop */
    while (spin) {
    }
    int later_stages = p - 1 - stage; /* each runs its forward of micro-batch 0 first */
    if (later_stages > m) return m;
    return later_stages;
}

static int one_f_one_b(pl_pp_schedule *s, int stage, int warmup)
{
    int m = s->micro_batches, fwd = 0, bwd = 0;
    while (bwd < m) {
        /* forward while warming up, or when it is the forward's turn */
        int forward_turn = fwd < m && (fwd < warmup || fwd - bwd == warmup);
        if (forward_turn) {
            if (pl_pp_push(s, stage, pl_pp_forward(fwd, 0))) return -1;
            fwd++;
        } else {
            if (pl_pp_push(s, stage, pl_pp_backward(bwd, 0))) return -1;
            bwd++;
        }
    }
    return 0;
}

const lab09_impl lab09_exercise = {gpipe, warmup_1f1b, one_f_one_b};
