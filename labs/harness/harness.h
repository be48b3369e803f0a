/*
 * harness/harness.h — the one lab harness: all of a lab's main() that is not
 * its lesson. A lab describes itself in a pl_lab_def (its name and --help
 * text, its own options, the devices it accepts, its exercises, the panes
 * of the UI) and hands over its lesson as a few functions; pl_lab_main then
 *
 *   1. parses the common options (paralab/options.h), the lab's own and
 *      --solution: --help prints the usage (exit 0), a bad option prints
 *      "labNN: ..." naming it on stderr (exit 2);
 *   2. refuses a --devices outside the lab's range, applies the options and
 *      checks that a device answers (exit 2);
 *   3. probes the exercises on a one-rank world (def->probe; not with
 *      --solution), then def->setup: the lab's own set-up and its title
 *      lines; then, for what the probe found, the TODO banner
 *      ("  ! exercise not attempted yet — using the reference; open ...");
 *   4. runs def->steps on a world of --devices ranks, one device each, in
 *      the UI or as plain text (viz's pl_viz_run_lab, on the clock the build
 *      has): exit 0 after q, 130 after Ctrl-C (as a shell reports SIGINT),
 *      1 when a step failed ("labNN: ..." and the simulator's report of the
 *      kernel fault that stopped it, if one did), 2 when the trace file
 *      cannot be written;
 *   5. def->report (what the run found), then the "[checks]" block: each
 *      exercise checked as it ran, "(yours)" or "(reference)"; exit 0 when
 *      every check passed and the run found nothing wrong, else 1.
 *
 * Exercises still TODO: a lab without a probe calls its exercise where it
 * needs it and, when PL_TODO_STATUS comes back (PL_TODO() is an exercise's
 * first statement: nothing ran), calls pl_lab_reference and runs the
 * reference instead; the checks do the same. Never probe an exercise with
 * made-up arguments (NULL pointers): a finished one would run its kernel
 * on them, and a fault is sticky for the rest of the run.
 *
 * One lab per process: the harness keeps the run's state (the options,
 * --solution, the exercises found TODO) for the functions below.
 */
#ifndef PARALAB_HARNESS_H
#define PARALAB_HARNESS_H

#include <stddef.h>
#include <stdio.h>

#include "paralab/cuda_check.h"
#include "paralab/options.h"
#include "paralab/step.h"
#include "paralab/viz.h"
#include "paralab/world.h"
#include "registry.h"

typedef struct pl_lab_def {
    /* what --help and the messages say */
    const char *program;  /* "lab02": every message starts with it */
    const char *summary;  /* --help's first line */
    const char *exercise; /* "labs/02_memory/exercise.cu": named by --help and the banner */
    const char *title;    /* the UI's header, "lab 02 memory" */

    /* the lab's own options (NULL-terminated; --solution is added after
     * them) and their handler, called with ctx */
    const pl_lab_option *options;
    pl_lab_option_handler on_option;
    const char *solution_help; /* NULL: "run the reference instead of your exercise" */
    void *ctx;                 /* the lab's state: every function here gets it */

    /* --devices: the default and the range (0: 1 and 64). A one-device lab
     * (max_devices 1) says so in --help. The refusal reads "labNN:
     * --devices N: <devices_rule> (LO..HI)" ("lab NN runs on one device
     * (--devices 1)" by default for a one-device lab). */
    int default_devices, min_devices, max_devices;
    const char *devices_rule;
    /* 1: the lab's steps may run in a world of several processes (mpirun,
     * the MPI build: paralab/dist.h): what rank 0 prints of the other
     * ranks comes through the communicator or pl_dist_gather_host. 0: under
     * mpirun with more than one process the lab refuses to start ("labNN:
     * under mpirun: ..."), since its ranks share host memory. */
    int multi_process;
    /* --devices beyond the devices there are (have): the counts that work,
     * said after the refusal ("...; tensor parallelism can split this model
     * over 1, 2, 4 or 8 ranks"); NULL: nothing more. Gets ctx after the
     * lab's options were parsed. */
    void (*devices_hint)(void *ctx, int have, char *buf, size_t cap);

    /* the exercises: their names and checks (the lab's entry in
     * labs/registry.c), and the checks the binary runs after its steps
     * (NULL: the registry's; Lab 07 leaves its long training runs to make
     * check). todo_names: the TODO banner names the exercise, one banner
     * each ("(block_sum) — using the reference there"); else one banner
     * for the lab. checks_note: said after "[checks]". */
    const pl_lab *lab;
    void (*check)(int exercise, int use_solution, pl_check *c);
    int todo_names;
    const char *checks_note;

    /* the UI: the panes besides the header, narration, devices, timeline
     * and metrics (PL_PANE_BIT(PL_PANE_TOPOLOGY)...), a timeline lane per
     * CUDA stream (pl_viz_config.stream_lanes), and each rank's role, "dp"
     * for "dp 0", "dp 1"... (NULL: none) */
    unsigned panes;
    int stream_lanes;
    const char *role;
    /* the shards pane (PL_PANE_BIT(PL_PANE_SHARDS) in panes): the matrices
     * the lab cuts over tp ranks (pl_viz_matrix, paralab/viz.h: the events
     * that say which shard a rank multiplies), read when the steps start,
     * after setup (which may fill the array: a classifier's padded classes
     * depend on --devices); tp 0: --devices. nmatrices 0: none. A
     * description pl_viz_check_matrices refuses stops the run before its
     * steps: "labNN: shards pane: ..." on stderr, exit 1. */
    const pl_viz_matrix *matrices;
    int nmatrices, tp;
    /* the pipeline pane (PL_PANE_BIT(PL_PANE_PIPELINE) in panes): the
     * pipeline the lab runs (pl_viz_pipeline, paralab/viz.h: stages,
     * micro-batches, chunks, the schedule and its formula's bubble), read
     * when the steps start, after setup (which fills it from the options);
     * NULL: none. One pl_viz_check_pipeline refuses stops the run before
     * its steps: "labNN: pipeline pane: ..." on stderr, exit 1. */
    const pl_viz_pipeline *pipeline;
    /* the mesh pane (PL_PANE_BIT(PL_PANE_MESH) in panes): the device mesh
     * the lab runs on (pl_viz_mesh, paralab/viz.h: dp, tp, pp and the rank
     * order), read when the steps start, after setup (which fills it from
     * the options); NULL: none. One pl_viz_check_mesh refuses stops the run
     * before its steps: "labNN: mesh pane: ..." on stderr, exit 1. */
    const pl_viz_mesh *mesh;
    /* the memory pane (PL_PANE_BIT(PL_PANE_MEMORY) in panes): the ZeRO run
     * (pl_viz_zero, paralab/viz.h: stage, N, Ψ, Ψ_pad, sgd), read when the
     * steps start, after setup; NULL: none. One pl_viz_check_zero refuses
     * stops the run before its steps: "labNN: memory pane: ..." on stderr,
     * exit 1. */
    const pl_viz_zero *zero;

    /* The lesson. All optional but steps; each gets ctx.
     *   probe(r)      on a one-rank world, before setup, not with
     *                 --solution: asks the exercises on real buffers and
     *                 calls pl_lab_found_todo for each still TODO
     *   setup(ctx)    the lab's set-up, once the options are applied and a
     *                 device answers, and its title lines; returns the
     *                 number of narrated steps it will take (the UI counts
     *                 them), or -1 with a message in err (exit 2)
     *   steps(r)      the narrated steps, on every rank (r->arg is ctx)
     *   fault_shown   when the steps failed: 1 if the lab has shown why
     *                 itself (Lab 01 narrates a kernel's fault as its
     *                 lesson) and goes on to the checks, the device reset
     *   report(ctx)   after the steps: prints what the run found if the
     *                 steps did not; returns non-zero when the run went
     *                 wrong (a wrong element): exit 1 after the checks */
    pl_rank_fn probe;
    int (*setup)(void *ctx, char *err, size_t cap);
    pl_rank_fn steps;
    int (*fault_shown)(void *ctx);
    int (*report)(void *ctx);
} pl_lab_def;

/* Runs the lab (steps 1 to 5 above) and returns what main returns. */
int pl_lab_main(const pl_lab_def *def, int argc, char **argv);

/* ---- for the lab's functions, during pl_lab_main ---------------------------------- */

/* The common options, parsed and applied. */
const pl_options *pl_lab_options(void);
/* For a lab option that names the ranks (Lab 09's --stages p): sets
 * --devices, as if given there (the last of the two given wins). */
void pl_lab_set_devices(int devices);
/* 1 with --solution. */
int pl_lab_solution(void);
/* 1 when exercise `exercise` (its index in def->lab->exercises) was found
 * TODO (pl_lab_reference, pl_lab_found_todo): the reference runs there. */
int pl_lab_is_todo(int exercise);
/* 1 when the reference runs in place of the exercise: --solution, or TODO. */
int pl_lab_uses_reference(int exercise);
/* The exercise returned PL_TODO_STATUS: marks it TODO and, the first time,
 * prints the TODO banner (with the PL_TODO's file:line). */
void pl_lab_reference(int exercise);
/* For probe: marks the exercise TODO; the banner comes after setup. */
void pl_lab_found_todo(int exercise);
/* For probe: exercise `exercise` is asked now (-1: none), so that an endless
 * loop stopped before the run names it: "labNN: stopped before the run: no
 * progress for S s of CPU time: ... (the host code), in coords
 * (labs/10_hybrid/exercise.c): an endless loop? ...". Call it before asking
 * each exercise; the harness clears it when the probe returns. */
void pl_lab_probing(int exercise);

/* A picture of the lab's idea (paralab/picture.h) for the current step:
 * noted into the world's trace (pl_trace_note_picture: the picture pane,
 * and the trace file with --trace, in both modes); without the UI
 * (--no-viz, no terminal) also printed at once as text
 * (pl_viz_picture_text: its title, then the picture; 78 columns indented
 * by 2, as a step's detail lines; ASCII unless the locale is UTF-8). It
 * belongs to the step the trace stamps now: call it during the step,
 * after its pl_step_begin or its pl_step and before the next step's
 * (after pl_step the text prints under the step's narration; after
 * pl_step_begin, before the narration is out, above it). Rank 0 only:
 * on any other rank it does nothing. A picture pl_picture_check refuses
 * is not drawn: "labNN: <why> (not drawn)" on stderr. The caller keeps p. */
void pl_lab_picture(const pl_rank *r, const struct pl_picture *p);

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
#define PL_LAB_CK(call) PL_RANK_CK(call) /* paralab/cuda_check.h */

#endif
