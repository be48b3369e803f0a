/*
 * Lab 07 — data parallelism: N replicas of the MLP train on the digits,
 * each on its shard of every global batch, their gradients averaged with
 * all-reduce, bucket by bucket, overlapping backward.
 *
 * Usage: lab07 [--devices N] [--batch B] [--epochs E] [--lr X]
 *              [--optimizer sgd|adamw] [--bucket-kb K] [--no-overlap]
 *              [--solution] [common options] [--help]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "07_data_parallel/lab07.h"
#include "harness/harness.h"
#include "paralab/cli.h"
#include "paralab/device.h"
#include "paralab/options.h"
#include "paralab/plural.h"
#include "paralab/viz.h" /* PL_PANE_TOPOLOGY */

enum { KEY_BATCH = 300, KEY_EPOCHS, KEY_LR, KEY_OPTIMIZER, KEY_BUCKET, KEY_NO_OVERLAP };

typedef struct {
    long batch, epochs, bucket_kb; /* the options */
    double lr;
    int sgd, no_overlap;
    pl_digits data; /* the run */
    lab07_impl impl;
    lab07_config cfg;
    lab07_result res;
    lab07_run run;
} lab;

static int on_option(int key, const char *arg, void *ctx, char *err, size_t cap)
{
    lab *a = ctx;
    const char *e = NULL;
    switch (key) {
    case KEY_BATCH:
        e = pl_parse_long("--batch", arg, 1, 1438, &a->batch);
        break;
    case KEY_EPOCHS:
        e = pl_parse_long("--epochs", arg, 1, 1000, &a->epochs);
        break;
    case KEY_BUCKET:
        e = pl_parse_long("--bucket-kb", arg, 1, 1024, &a->bucket_kb);
        break;
    case KEY_LR:
        e = pl_parse_double("--lr", arg, 0, 10, 1, &a->lr);
        break;
    case KEY_OPTIMIZER:
        if (!strcmp(arg, "sgd") || !strcmp(arg, "adamw")) {
            a->sgd = !strcmp(arg, "sgd");
            return 0;
        }
        snprintf(err, cap, "--optimizer '%s': choose adamw or sgd", arg);
        return 1;
    default: /* KEY_NO_OVERLAP */
        a->no_overlap = 1;
        return 0;
    }
    if (e) snprintf(err, cap, "%s", e);
    return e != NULL;
}

/* Which of the student's functions are written: asked on a one-rank world,
 * on a real buffer. */
static int probe_rank(pl_rank *r)
{
    int first, count;
    if (lab07_exercise.shard_batch(4, 1, 0, &first, &count) == PL_TODO_STATUS) pl_lab_found_todo(0);
    float *d;
    if (cudaMalloc((void **)&d, sizeof(float))) return 1;
    cudaMemsetAsync(d, 0, sizeof(float), r->stream);
    if (lab07_exercise.sync_gradients(r->comm, d, 1, r->stream) == PL_TODO_STATUS)
        pl_lab_found_todo(1);
    cudaStreamSynchronize(r->stream);
    cudaFree(d);
    return 0;
}

/* A batch the ranks can share, the digits, your functions (the reference's
 * where yours are TODO), the training's configuration; the title. The
 * steps: the set-up's seven, then one per epoch. */
static int setup(void *ctx, char *err, size_t cap)
{
    lab *a = ctx;
    const pl_options *opt = pl_lab_options();
    int n = opt->devices; /* the devices were checked first: there may be fewer than asked */
    if (a->batch % n) {
        long lo = a->batch / n * n, hi = lo + n;
        if (lo >= n)
            snprintf(err, cap,
                     "--batch %ld does not split evenly over %d ranks: the nearest batch sizes "
                     "that do are %ld and %ld",
                     a->batch, n, lo, hi);
        else
            snprintf(err, cap,
                     "--batch %ld is smaller than --devices %d: every rank needs a sample; the "
                     "nearest batch size that splits evenly is %ld",
                     a->batch, n, hi);
        return -1;
    }
    if (pl_digits_load("data/digits.csv", &a->data, err, cap)) return -1;
    a->impl.shard_batch =
        (pl_lab_uses_reference(0) ? &lab07_solution : &lab07_exercise)->shard_batch;
    a->impl.sync_gradients =
        (pl_lab_uses_reference(1) ? &lab07_solution : &lab07_exercise)->sync_gradients;
    a->cfg = (lab07_config){.batch = (int)a->batch,
                            .epochs = (int)a->epochs,
                            .sgd = a->sgd,
                            .lr = (float)(a->lr > 0 ? a->lr
                                          : a->sgd  ? 0.1
                                                    : 5e-3),
                            .bucket_floats = (int)(a->bucket_kb * 1024 / 4),
                            .overlap = !a->no_overlap,
                            .seed = opt->seed,
                            .narrate = 1};
    a->run = (lab07_run){.cfg = &a->cfg, .impl = &a->impl, .data = &a->data, .result = &a->res};
    const char *dev = pl_device_caps()->modeled ? pl_device_label() : "real GPUs";
    printf("paralab lab 07 — data parallelism (%d rank%s on %s, %s clock)\n", n, pl_s(n), dev,
           pl_clock_name());
    return 7 + a->cfg.epochs;
}

/* Every rank trains its replica (train.c). */
static int steps(pl_rank *r)
{
    lab *a = r->arg;
    r->arg = &a->run;
    return lab07_rank(r);
}

/* What the training came to. */
static int report(void *ctx)
{
    lab *a = ctx;
    int n = pl_lab_options()->devices;
    printf("\n  %d steps of a global batch of %d on %d rank%s: loss %.4f, test accuracy %.1f %%; "
           "a step takes %.1f us (%s)\n",
           a->res.steps, a->cfg.batch, n, pl_s(n),
           a->res.epoch_loss[a->cfg.epochs - 1 < 1000 ? a->cfg.epochs - 1 : 999], a->res.test_acc,
           (pl_device_caps()->modeled ? a->res.modeled_step : a->res.measured_step) * 1e6,
           pl_clock_name());
    free(a->res.params);
    pl_digits_free(&a->data);
    return 0;
}

/* The checks of what ran; the training checks are make check's. */
static void quick_check(int exercise, int use_solution, pl_check *c)
{
    lab07_check_quick(exercise, use_solution ? &lab07_solution : &lab07_exercise, c);
}

int main(int argc, char **argv)
{
    static lab a = {.batch = 64, .epochs = 20, .bucket_kb = 25, .lr = -1};
    static const pl_lab_option options[] = {
        {"batch", 1, "B", "the global batch, split over the ranks (1..1438, default 64)",
         KEY_BATCH},
        {"epochs", 1, "E", "passes over the training set (1..1000, default 20)", KEY_EPOCHS},
        {"lr", 1, "X", "learning rate (default 0.005 for adamw, 0.1 for sgd)", KEY_LR},
        {"optimizer", 1, "NAME", "adamw (default) or sgd (momentum 0.9)", KEY_OPTIMIZER},
        {"bucket-kb", 1, "K",
         "gradient bucket size in KiB (1..1024, default 25: DDP's 25 MiB, scaled down)",
         KEY_BUCKET},
        {"no-overlap", 0, "", "all-reduce after backward instead of during it", KEY_NO_OVERLAP},
        {0, 0, 0, 0, 0},
    };
    static const pl_lab_def me = {
        .program = "lab07",
        .multi_process = 1, /* mpirun: tests/mpi.sh */
        .summary = "Lab 07, data parallelism: replicas, sharded batches, gradient all-reduce in "
                   "buckets overlapping backward, on the digits.",
        .exercise = "labs/07_data_parallel/exercise.c",
        .title = "lab 07 data parallel",
        .options = options,
        .on_option = on_option,
        .ctx = &a,
        .default_devices = 4,
        .lab = &lab07_data_parallel,
        .check = quick_check,
        .todo_names = 1,
        .checks_note = "  (make check also trains with your sync_gradients: 10 steps against one "
                       "device, and 20 epochs on 1, 2, 4 and 8 ranks)",
        .panes = PL_PANE_BIT(PL_PANE_TOPOLOGY),
        .role = "dp",
        .probe = probe_rank,
        .setup = setup,
        .steps = steps,
        .report = report,
    };
    return pl_lab_main(&me, argc, argv);
}
