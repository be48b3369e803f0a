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
 *
 * and two helpers for the narration's text:
 *   pl_bytes_text(b, buf, cap)   "12.3 KiB", "2.0 MiB", "512 B"
 *   pl_appendf(buf, cap, ...)    printf onto the end of buf (cut at cap)
 *
 * Under mpirun (paralab/dist.h) each process has its own copy of what the
 * ranks share; for an array of one entry per rank, after a barrier (every
 * rank has written its own):
 *   TO_RANK0(array)    the other processes' ranks' entries to rank 0
 *   TO_ALL(array)      ... to every rank (FAIL if the world stopped)
 * In one process both do nothing. (A buffer the ranks of a process share
 * for them: harness/shared.h.)
 */
#ifndef PARALAB_HARNESS_TRAIN_H
#define PARALAB_HARNESS_TRAIN_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "paralab/cuda_check.h"
#include "paralab/dist.h"
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

#define TO_RANK0(array) pl_dist_gather_host(r->comm, (array), sizeof(array)[0], sizeof(array)[0])
#define TO_ALL(array)                                                                              \
    do {                                                                                           \
        if (pl_dist_allgather_host(r->comm, (array), sizeof(array)[0], sizeof(array)[0]))          \
            FAIL("%s", pl_comm_last_error(r->comm));                                               \
    } while (0)

static inline void pl_bytes_text(unsigned long long b, char *buf, size_t cap)
{
    if (b >= 1024 * 1024)
        snprintf(buf, cap, "%.1f MiB", (double)b / (1024.0 * 1024.0));
    else if (b >= 1024)
        snprintf(buf, cap, "%.1f KiB", (double)b / 1024.0);
    else
        snprintf(buf, cap, "%llu B", b);
}

static inline void pl_appendf(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void pl_appendf(char *buf, size_t cap, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len >= cap - 1) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
}

#endif
