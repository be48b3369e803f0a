/*
 * paralab/labmain.h — the part of main() that the one-device labs (01 to 05)
 * share: the options (common ones and the lab's own), the one-device rule,
 * the device check, and the run of the lab's narrated steps on a one-rank
 * world, in the visualiser or as plain text. A lab's main calls
 * pl_lab_start, does its own set-up, calls pl_lab_steps, then runs its
 * checks. The helpers print nothing: they fill msg and say what main
 * returns.
 */
#ifndef PARALAB_LABMAIN_H
#define PARALAB_LABMAIN_H

#include <stddef.h>

#include "paralab/options.h"
#include "paralab/world.h"

typedef struct pl_one_device_lab {
    const char *program;  /* "lab02": the messages start with it */
    const char *summary;  /* --help's first line */
    const char *exercise; /* "labs/02_memory/exercise.cu", named by --help */
    const char *title;    /* the UI's header, "lab 02 memory" */
    const pl_lab_option *extra;
    pl_lab_option_handler on_option;
    void *ctx;        /* for on_option */
    int stream_lanes; /* the timeline: a lane per CUDA stream (pl_viz_config) */
} pl_one_device_lab;

#define PL_LAB_GO (-1) /* go on */

/* Parses argv into *opt (one device by default), refuses any other device
 * count, applies the options, and checks that a device answers; then
 * line-buffers stdout and sets SIMT_QUIET=1 (a lab prints fault reports
 * where they happen). Returns PL_LAB_GO, or what main returns: 0 after
 * --help (msg: the usage, for stdout), 2 after a bad option or no device
 * (msg: "labNN: ...", for stderr). */
int pl_lab_start(const pl_one_device_lab *lab, int argc, char **argv, pl_options *opt, char *msg,
                 size_t cap);

/* Runs steps on a world of one rank with the devices, timeline and metrics
 * panes and `nsteps` narrated steps, on the clock the build has (modeled
 * or measured). Returns PL_LAB_GO once the steps ran; else what main
 * returns: 0 after q, 130 after Ctrl-C (as a shell reports SIGINT), 1 when
 * a step failed, 2 when the trace file cannot be written (msg: "labNN:
 * ...", for stderr, then the simulator's report of the kernel fault that
 * stopped the run, if one did: kernel, file:line, block, thread). */
int pl_lab_steps(const pl_one_device_lab *lab, int nsteps, const pl_options *opt, pl_rank_fn steps,
                 void *arg, char *msg, size_t cap);

/* In a lab's steps function (a pl_rank *r in scope, a cleanup label `out`):
 * narrate a step, begin a step whose narration reports its work (before
 * that work, so that it shows under its own narration: pl_step_begin), or
 * make a CUDA call whose failure stops the run with its name and error in
 * r->error; all jump to out when the run must stop. */
#define PL_LAB_STEP(...)                                                                           \
    do {                                                                                           \
        if (pl_step(r, __VA_ARGS__)) goto out;                                                     \
    } while (0)
#define PL_LAB_BEGIN()                                                                             \
    do {                                                                                           \
        if (pl_step_begin(r)) goto out;                                                            \
    } while (0)
#define PL_LAB_CK(call)                                                                            \
    do {                                                                                           \
        cudaError_t e_ = (cudaError_t)(call);                                                      \
        if (e_) {                                                                                  \
            snprintf(r->error, sizeof r->error, "%s: %s", #call, cudaGetErrorName(e_));            \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

#endif
