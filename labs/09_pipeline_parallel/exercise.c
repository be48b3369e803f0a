/*
 * Lab 09 — your exercise: pipeline schedules as lists. Delete a PL_TODO()
 * line when you start that function, then run `make check`. See README.md
 * in this folder.
 *
 * p stages (s->stages), m micro-batches (s->micro_batches). Stage r holds
 * a range of the model's blocks; a micro-batch's forward runs on stage 0,
 * then 1, ..., then p - 1, and its backward back from p - 1 to 0. You
 * write, for one stage, the ordered list of what it runs: append each
 * operation with
 *
 *     PL_PP_TRY(pl_pp_push(s, stage, pl_pp_forward(k, 0)));   F of micro-batch k
 *     PL_PP_TRY(pl_pp_push(s, stage, pl_pp_backward(k, 0)));  its backward (BW)
 *
 * (chunk 0: one model chunk per stage; PL_PP_TRY returns pl_pp_push's
 * error for you). You never write a send or a receive: the executor adds
 * them around each operation (a forward receives its input from stage r - 1
 * and sends its output to r + 1; a backward the reverse). The validator
 * (pl_pp_validate) checks your lists before anything runs: every operation
 * exactly once, each backward after its forward, and no stage waiting
 * forever for a message that never comes.
 */
#include "09_pipeline_parallel/lab09.h"

/*
 * 1. GPipe (Huang et al. 2019): every forward, micro-batch 0 first, then
 *    every backward, micro-batch 0 first (another order of the backwards
 *    is a GPipe list too). The same list on every stage.
 */
static int gpipe(pl_pp_schedule *s, int stage)
{
    PL_TODO();
    return 0;
}

/*
 * 2. 1F1B's warm-up: how many forwards stage `stage` of p runs before its
 *    steady state (one forward, one backward, in turn) begins, for m
 *    micro-batches (Megatron-LM's num_warmup_microbatches). The last stage
 *    needs none: its forward ends at the loss, so the backward of that
 *    micro-batch can follow at once. Each stage before it runs one more, as
 *    the gradient of its first micro-batch comes back only after the
 *    stages behind it have run their forward of it. And there are only m
 *    micro-batches.
 */
static int warmup_1f1b(int p, int m, int stage)
{
    PL_TODO();
    return 0;
}

/*
 * 3. 1F1B (PipeDream-Flush; Megatron-LM's default): `warmup` forwards
 *    (your answer to 2, or the reference's while 2 is TODO or wrong), then
 *    the steady state: one forward, one backward, in turn, each backward
 *    the oldest micro-batch whose forward this stage has run, until every
 *    forward has run; then the cool-down: the backwards that are left.
 *    Stage r then holds at most min(p - r, m) micro-batches' activations
 *    at once, where GPipe holds all m.
 */
static int one_f_one_b(pl_pp_schedule *s, int stage, int warmup)
{
    PL_TODO();
    return 0;
}

const lab09_impl lab09_exercise = {gpipe, warmup_1f1b, one_f_one_b};
