/*
 * Lab 09 — pipeline parallelism: p ranks each hold a range of the block
 * model's blocks (a stage), and the global batch goes through them in m
 * micro-batches: activations forward, gradients backward, between
 * neighbours. A schedule is data: for each stage the list of operations
 * it runs (yours for GPipe and 1F1B), checked by the validator before
 * anything runs, then run by one executor. The bubble, the activations
 * each stage holds, and training as one device trains.
 *
 * Usage: lab09 [--stages p] [--micro-batches m] [--schedule NAME] [--chunks v]
 *              [--layers L] [--hidden h] [--batch B] [--epochs E] [--lr X]
 *              [--clip-grad-norm X] [--solution] [common options] [--help]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "09_pipeline_parallel/lab09.h"
#include "harness/harness.h"
#include "paralab/cli.h"
#include "paralab/device.h"
#include "paralab/options.h"
#include "paralab/plural.h"
#include "paralab/viz.h" /* the panes */

enum {
    KEY_STAGES = 300,
    KEY_MICRO,
    KEY_SCHEDULE,
    KEY_CHUNKS,
    KEY_LAYERS,
    KEY_HIDDEN,
    KEY_BATCH,
    KEY_EPOCHS,
    KEY_LR,
    KEY_CLIP
};

typedef struct {
    long micro, chunks, layers, hidden, batch, epochs; /* the options (chunks, layers 0: default) */
    double lr, clip;
    int kind;
    pl_digits data; /* the run */
    pl_pp_schedule sched;
    int have_sched;
    char from[256];
    lab09_config cfg;
    lab09_result res;
    lab09_run run;
    pl_viz_pipeline pipe; /* the pipeline pane */
} lab;

static int on_option(int key, const char *arg, void *ctx, char *err, size_t cap)
{
    lab *a = ctx;
    const char *e = NULL;
    long n;
    switch (key) {
    case KEY_STAGES:
        if (!(e = pl_parse_long("--stages", arg, 1, PL_MAX_RANKS, &n))) pl_lab_set_devices((int)n);
        break;
    case KEY_MICRO:
        e = pl_parse_long("--micro-batches", arg, 1, 1438, &a->micro);
        break;
    case KEY_SCHEDULE: {
        char why[512];
        a->kind = pl_pp_kind_parse(arg, why, sizeof why);
        if (a->kind < 0) {
            snprintf(err, cap, "--schedule %s: %s", arg, why);
            return 1;
        }
        return 0;
    }
    case KEY_CHUNKS:
        e = pl_parse_long("--chunks", arg, 1, PL_PP_MAX_CHUNKS, &a->chunks);
        break;
    case KEY_LAYERS:
        e = pl_parse_long("--layers", arg, 1, PL_BLOCKS_MAX, &a->layers);
        break;
    case KEY_HIDDEN:
        e = pl_parse_long("--hidden", arg, 1, 1024, &a->hidden);
        break;
    case KEY_BATCH:
        e = pl_parse_long("--batch", arg, 1, 1438, &a->batch);
        break;
    case KEY_EPOCHS:
        e = pl_parse_long("--epochs", arg, 1, 1000, &a->epochs);
        break;
    case KEY_LR:
        e = pl_parse_double("--lr", arg, 0, 10, 1, &a->lr);
        break;
    default: /* KEY_CLIP */
        e = pl_parse_double("--clip-grad-norm", arg, 0, 1e6, 1, &a->clip);
        break;
    }
    if (e) snprintf(err, cap, "%s", e);
    return e != NULL;
}

/* --stages beyond the devices there are */
static void devices_hint(void *ctx, int have, char *buf, size_t cap)
{
    (void)ctx;
    snprintf(buf, cap, "a pipeline runs one stage per device: --stages 1 to %d here", have);
}

/* Which of the student's functions are written: each asked once, on a
 * schedule of 2 stages and 2 micro-batches (host memory only). */
static int probe_rank(pl_rank *r)
{
    (void)r;
    pl_pp_schedule s;
    char err[256];
    if (pl_pp_schedule_init(&s, 2, 2, 1, err, sizeof err)) return 1;
    pl_lab_probing(LAB09_GPIPE);
    if (lab09_exercise.gpipe(&s, 0) == PL_TODO_STATUS) pl_lab_found_todo(LAB09_GPIPE);
    pl_lab_probing(LAB09_WARMUP);
    if (lab09_exercise.warmup_1f1b(2, 2, 0) == PL_TODO_STATUS) pl_lab_found_todo(LAB09_WARMUP);
    pl_pp_schedule_free(&s);
    if (pl_pp_schedule_init(&s, 2, 2, 1, err, sizeof err)) return 1;
    pl_lab_probing(LAB09_1F1B);
    if (lab09_exercise.one_f_one_b(&s, 0, 1) == PL_TODO_STATUS) pl_lab_found_todo(LAB09_1F1B);
    pl_pp_schedule_free(&s);
    return 0;
}

/* The lists the stages run, and the narration's words for them. */
static int make_schedule(lab *a, int p, char *err, size_t cap)
{
    int m = (int)a->micro, v = (int)a->chunks;
    if (a->kind != PL_PP_GPIPE && a->kind != PL_PP_1F1B) {
        if (pl_pp_build(&a->sched, a->kind, p, m, v, err, cap)) return -1;
        a->have_sched = 1;
        if (v > 1)
            snprintf(a->from, sizeof a->from, "the library's %s schedule (pl_pp_build, %d chunks)",
                     pl_pp_kind_name(a->kind), v);
        else
            snprintf(a->from, sizeof a->from, "the library's %s schedule (pl_pp_build)",
                     pl_pp_kind_name(a->kind));
        return 0;
    }
    int gp = !pl_lab_uses_reference(LAB09_GPIPE), wu = !pl_lab_uses_reference(LAB09_WARMUP),
        ff = !pl_lab_uses_reference(LAB09_1F1B);
    lab09_impl use = {gp ? lab09_exercise.gpipe : lab09_solution.gpipe,
                      wu ? lab09_exercise.warmup_1f1b : lab09_solution.warmup_1f1b,
                      ff ? lab09_exercise.one_f_one_b : lab09_solution.one_f_one_b};
    const char *sol = pl_lab_solution() ? " (--solution)" : "";
    if (a->kind == PL_PP_GPIPE)
        snprintf(a->from, sizeof a->from, "%s GPipe lists%s", gp ? "your" : "the reference's",
                 gp ? " (exercise.c)" : sol);
    else if (ff && wu)
        snprintf(a->from, sizeof a->from, "your 1F1B lists and warm-up count (exercise.c)");
    else if (ff)
        snprintf(a->from, sizeof a->from,
                 "your 1F1B lists (exercise.c) with the reference's warm-up count");
    else if (wu)
        snprintf(a->from, sizeof a->from,
                 "the reference's 1F1B lists with your warm-up count (exercise.c)");
    else
        snprintf(a->from, sizeof a->from, "the reference's 1F1B lists%s", sol);
    char why[1024];
    int rc = lab09_lists(&use, a->kind, p, m, &a->sched, why, sizeof why);
    if (rc) { /* (a TODO was found by the probe: it cannot come back here) */
        snprintf(err, cap, "%s", rc == PL_TODO_STATUS ? "an exercise is TODO" : why);
        return -1;
    }
    a->have_sched = 1;
    if (pl_pp_validate(&a->sched, 1, 2, 0, NULL, why, sizeof why)) {
        snprintf(err, cap,
                 "%s cannot run (%d stages, %d micro-batches), so nothing ran: the validator "
                 "says: %s",
                 a->from, p, m, why);
        return -1;
    }
    return 0;
}

/* The options checked together, the digits, the schedule; the title. The
 * steps: six for the first step, then one per epoch. */
static int setup(void *ctx, char *err, size_t cap)
{
    lab *a = ctx;
    const pl_options *opt = pl_lab_options();
    int p = opt->devices;
    if (!a->chunks) a->chunks = a->kind == PL_PP_INTERLEAVED ? 2 : 1;
    int m = (int)a->micro, v = (int)a->chunks;
    if (pl_pp_accepts(a->kind, p, m, v, err, cap)) return -1;
    if (!a->layers) a->layers = (long)p * v < PL_BLOCKS_MAX ? p * v : PL_BLOCKS_MAX;
    int first[PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS], count[PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS];
    if (pl_pp_split((int)a->layers, p, v, first, count, err, cap)) return -1;
    pl_blocks_config c = pl_blocks_config_make((int)a->hidden, (int)a->layers);
    if (pl_blocks_check(&c, 1, "--devices", 1, err, cap)) return -1;
    if (a->batch < m) {
        snprintf(err, cap,
                 "--batch %ld: the batch is cut into m = %d micro-batches of B/m rows, so it "
                 "needs %d rows at least",
                 a->batch, m, m);
        return -1;
    }
    if (a->batch % m) {
        long lo = a->batch / m * m, hi = lo + m;
        snprintf(err, cap,
                 "--batch %ld: the batch is cut into m = %d micro-batches of equal size, and "
                 "%ld does not divide by %d (the nearest batch sizes that do are %ld and %ld)",
                 a->batch, m, a->batch, m, lo, hi);
        return -1;
    }
    /* the memory it takes, before anything is allocated: each stage its blocks
     * and up to m micro-batches' activations; on the host rank 0's gathered
     * weights and gradients, and the stages' rows of the gather */
    pl_blocks_run need = {.model = c,
                          .dp = 1,
                          .tp = 1,
                          .pp = p,
                          .chunks = v,
                          .batch = (int)a->batch,
                          .micro_batches = m,
                          .in_flight = m,
                          .zero_stage = -1,
                          .host_models = 3};
    if (pl_blocks_run_fits(&need, err, cap)) return -1;
    if (make_schedule(a, p, err, cap)) return -1;
    if (pl_digits_load("data/digits.csv", &a->data, err, cap)) return -1;
    a->cfg = (lab09_config){.hidden = (int)a->hidden,
                            .layers = (int)a->layers,
                            .batch = (int)a->batch,
                            .micro_batches = m,
                            .chunks = v,
                            .kind = (pl_pp_kind)a->kind,
                            .schedule = &a->sched,
                            .schedule_from = a->from,
                            .epochs = (int)a->epochs,
                            .lr = (float)a->lr,
                            .clip = (float)a->clip,
                            .seed = opt->seed,
                            .narrate = 1,
                            .evaluate = 1};
    lab09_run_init(&a->run, &a->cfg, &a->data, &a->res);
    double fi = -1, ft = -1;
    if (pl_pp_bubble_formula((pl_pp_kind)a->kind, p, m, v, &fi, &ft)) fi = ft = -1;
    a->pipe = (pl_viz_pipeline){p, m, v, pl_pp_kind_name((pl_pp_kind)a->kind), fi, ft, 0, {0}};
    const char *dev = pl_device_caps()->modeled ? pl_device_label() : "real GPUs";
    char chunks[32] = "";
    if (v > 1) snprintf(chunks, sizeof chunks, ", %d chunks per stage", v);
    printf("paralab lab 09 — pipeline parallelism (%d stage%s on %s, %s clock; %s, %d "
           "micro-batch%s%s)\n",
           p, pl_s(p), dev, pl_clock_name(), pl_pp_kind_name(a->kind), m, m == 1 ? "" : "es",
           chunks);
    return 6 + a->cfg.epochs;
}

static int steps(pl_rank *r)
{
    lab *a = r->arg;
    r->arg = &a->run;
    return lab09_rank(r);
}

static int report(void *ctx)
{
    lab *a = ctx;
    int p = pl_lab_options()->devices;
    if (a->res.steps) {
        double fi = 0, ft = 0;
        int has =
            !pl_pp_bubble_formula(a->cfg.kind, p, a->cfg.micro_batches, a->cfg.chunks, &fi, &ft);
        char formula[64] = "";
        if (has) snprintf(formula, sizeof formula, " (formula %.1f %%)", ft * 100);
        printf("\n  %d step%s of a batch of %d in %d micro-batch%s on %d stage%s (%s): loss %.4f, "
               "test accuracy %.1f %%; a step takes %.1f us (%s), the first step's bubble %.1f "
               "%% of the total%s\n",
               a->res.steps, pl_s(a->res.steps), a->cfg.batch, a->cfg.micro_batches,
               a->cfg.micro_batches == 1 ? "" : "es", p, pl_s(p), pl_pp_kind_name(a->cfg.kind),
               a->res.epoch_loss[a->cfg.epochs - 1 < 1000 ? a->cfg.epochs - 1 : 999],
               a->res.test_acc,
               (pl_device_caps()->modeled ? a->res.modeled_step : a->res.measured_step) * 1e6,
               pl_clock_name(), a->res.first.of_total * 100, formula);
    }
    free(a->res.params);
    free(a->res.grads);
    if (a->have_sched) pl_pp_schedule_free(&a->sched);
    pl_digits_free(&a->data);
    return 0;
}

static void quick_check(int exercise, int use_solution, pl_check *c)
{
    lab09_check_quick(exercise, use_solution ? &lab09_solution : &lab09_exercise, c);
}

int main(int argc, char **argv)
{
    static lab a = {
        .micro = 8, .hidden = 64, .batch = 64, .epochs = 2, .lr = 2e-3, .kind = PL_PP_1F1B};
    static const pl_lab_option options[] = {
        {"stages", 1, "p", "pipeline stages, one device each (--devices; 1..64, default 4)",
         KEY_STAGES},
        {"micro-batches", 1, "m", "micro-batches a step's batch is cut into (1..B, default 8)",
         KEY_MICRO},
        {"schedule", 1, "NAME", "naive, gpipe, 1f1b, interleaved or zb-h1 (default 1f1b)",
         KEY_SCHEDULE},
        {"chunks", 1, "v", "model chunks per stage (1..8; interleaved's default 2)", KEY_CHUNKS},
        {"layers", 1, "L", "residual MLP blocks (1..64, default p x v, a chunk each)", KEY_LAYERS},
        {"hidden", 1, "h", "the width of the residual stream (1..1024, default 64; f = 4h)",
         KEY_HIDDEN},
        {"batch", 1, "B", "samples per step, the global batch (1..1438, default 64)", KEY_BATCH},
        {"epochs", 1, "E", "passes over the training set (1..1000, default 2)", KEY_EPOCHS},
        {"lr", 1, "X", "AdamW's learning rate (default 0.002)", KEY_LR},
        {"clip-grad-norm", 1, "X", "clip the gradients' norm over every stage to X", KEY_CLIP},
        {0, 0, 0, 0, 0},
    };
    static const pl_lab_def me = {
        .program = "lab09",
        .summary = "Lab 09, pipeline parallelism: stages, micro-batches, the bubble and the "
                   "activations they hold; GPipe, 1F1B, interleaved and zero-bubble schedules "
                   "as lists, on the block model.",
        .exercise = "labs/09_pipeline_parallel/exercise.c",
        .title = "lab 09 pipeline parallel",
        .options = options,
        .on_option = on_option,
        .ctx = &a,
        .default_devices = 4,
        .multi_process = 1, /* train.c: what rank 0 prints of other processes' stages is gathered */
        .devices_hint = devices_hint,
        .lab = &lab09_pipeline_parallel,
        .check = quick_check,
        .todo_names = 1,
        .checks_note = "  (make check also runs your lists on the executor: one step against one "
                       "device, the activations each stage holds, the bubble, 10 training steps)",
        .panes = PL_PANE_BIT(PL_PANE_TOPOLOGY) | PL_PANE_BIT(PL_PANE_PIPELINE),
        .pipeline = &a.pipe,
        .role = "pp",
        .probe = probe_rank,
        .setup = setup,
        .steps = steps,
        .report = report,
    };
    return pl_lab_main(&me, argc, argv);
}
