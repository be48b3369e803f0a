/*
 * Lab 09 — the reference solution. Read it after trying exercise.c.
 *
 * A schedule is only an order: the same operations (an F and a BW for each
 * micro-batch on each stage) in another order give the same gradients and
 * a different bubble and memory. GPipe runs every forward first: a stage
 * holds all m micro-batches' activations before its first backward. 1F1B
 * starts each backward as soon as its gradient can have come back: stage
 * r runs min(p - r - 1, m) forwards ahead (the stages after it still have
 * to run theirs), then alternates, so it never holds more than p - r.
 */
#include "09_pipeline_parallel/lab09.h"

static int gpipe(pl_pp_schedule *s, int stage)
{
    int m = s->micro_batches;
    for (int k = 0; k < m; k++) PL_PP_TRY(pl_pp_push(s, stage, pl_pp_forward(k, 0)));
    for (int k = 0; k < m; k++) PL_PP_TRY(pl_pp_push(s, stage, pl_pp_backward(k, 0)));
    return 0;
}

static int warmup_1f1b(int p, int m, int stage)
{
    int w = p - stage - 1; /* the stages after this one each run a forward first */
    return w < m ? w : m;
}

static int one_f_one_b(pl_pp_schedule *s, int stage, int warmup)
{
    int m = s->micro_batches;
    for (int k = 0; k < warmup; k++) /* warm-up */
        PL_PP_TRY(pl_pp_push(s, stage, pl_pp_forward(k, 0)));
    for (int k = 0; k < m - warmup; k++) { /* steady state: one forward, one backward */
        PL_PP_TRY(pl_pp_push(s, stage, pl_pp_forward(warmup + k, 0)));
        PL_PP_TRY(pl_pp_push(s, stage, pl_pp_backward(k, 0)));
    }
    for (int k = m - warmup; k < m; k++) /* cool-down */
        PL_PP_TRY(pl_pp_push(s, stage, pl_pp_backward(k, 0)));
    return 0;
}

const lab09_impl lab09_solution = {gpipe, warmup_1f1b, one_f_one_b};
