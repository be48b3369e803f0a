/*
 * harness/train.h — the four macros every Part I–II training loop (a lab's
 * train.c, run by each rank) is written with. Include it in train.c only.
 *
 * They expect, in the function they are used in: `pl_rank *r` (the rank:
 * its error text), `cfg` (the lab's configuration, with an int `narrate`:
 * 0 in the checks' quiet runs) and a label `out:` where the function frees
 * what it made and returns.
 *
 *   FAIL("fmt", ...)   the reason into r->error, then goto out
 *   CK(call)           a CUDA runtime call; its error named, then goto out
 *                      (PL_RANK_CK, paralab/cuda_check.h)
 *   STEP("fmt", ...)   a narrated step (pl_step, paralab/step.h): it waits
 *                      for the student; the run ends (goto out) when the
 *                      student quits
 *   BEGIN()            a step whose narration reports the work that follows
 *                      it begins before that work (pl_step_begin), so the
 *                      work shows under its own narration
 */
#ifndef PARALAB_HARNESS_TRAIN_H
#define PARALAB_HARNESS_TRAIN_H

#include <stdio.h>

#include "paralab/cuda_check.h"
#include "paralab/step.h"

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        snprintf(r->error, sizeof r->error, __VA_ARGS__);                                          \
        goto out;                                                                                  \
    } while (0)
#define CK(call) PL_RANK_CK(call)
#define STEP(...)                                                                                  \
    do {                                                                                           \
        if (cfg->narrate && pl_step(r, __VA_ARGS__)) goto out;                                     \
    } while (0)
#define BEGIN()                                                                                    \
    do {                                                                                           \
        if (cfg->narrate && pl_step_begin(r)) goto out;                                            \
    } while (0)

#endif
