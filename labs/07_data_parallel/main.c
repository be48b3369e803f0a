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
#include "paralab/cli.h"
#include "paralab/device.h"
#include "paralab/options.h"
#include "paralab/plural.h"
#include "paralab/viz.h"

enum {
    KEY_BATCH = 300,
    KEY_EPOCHS,
    KEY_LR,
    KEY_OPTIMIZER,
    KEY_BUCKET,
    KEY_NO_OVERLAP,
    KEY_SOLUTION
};

typedef struct {
    long batch, epochs, bucket_kb;
    double lr;
    int sgd, no_overlap, solution;
} args;

static int on_option(int key, const char *arg, void *ctx, char *err, size_t cap)
{
    args *a = ctx;
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
    case KEY_LR: {
        char *end;
        a->lr = strtod(arg, &end);
        if (end == arg || *end || !(a->lr > 0 && a->lr <= 10)) {
            snprintf(err, cap, "--lr '%s' is not a number in (0, 10]", arg);
            return 1;
        }
        return 0;
    }
    case KEY_OPTIMIZER:
        if (!strcmp(arg, "sgd") || !strcmp(arg, "adamw")) {
            a->sgd = !strcmp(arg, "sgd");
            return 0;
        }
        snprintf(err, cap, "--optimizer '%s': choose adamw or sgd", arg);
        return 1;
    case KEY_NO_OVERLAP:
        a->no_overlap = 1;
        return 0;
    default:
        a->solution = 1;
        return 0;
    }
    if (e) snprintf(err, cap, "%s", e);
    return e != NULL;
}

/* Which of the student's functions are written: probed on a one-rank world. */
typedef struct {
    int shard_todo, sync_todo;
} probe;

static int probe_rank(pl_rank *r)
{
    probe *p = r->arg;
    int first, count;
    p->shard_todo = lab07_exercise.shard_batch(4, 1, 0, &first, &count) == PL_TODO_STATUS;
    float *d;
    if (cudaMalloc((void **)&d, sizeof(float))) return 1;
    cudaMemsetAsync(d, 0, sizeof(float), r->stream);
    p->sync_todo = lab07_exercise.sync_gradients(r->comm, d, 1, r->stream) == PL_TODO_STATUS;
    cudaStreamSynchronize(r->stream);
    cudaFree(d);
    return 0;
}

int main(int argc, char **argv)
{
    args a = {.batch = 64, .epochs = 20, .bucket_kb = 25, .lr = -1};
    static const pl_lab_option extra[] = {
        {"batch", 1, "B", "the global batch, split over the ranks (1..1438, default 64)",
         KEY_BATCH},
        {"epochs", 1, "E", "passes over the training set (1..1000, default 20)", KEY_EPOCHS},
        {"lr", 1, "X", "learning rate (default 0.005 for adamw, 0.1 for sgd)", KEY_LR},
        {"optimizer", 1, "NAME", "adamw (default) or sgd (momentum 0.9)", KEY_OPTIMIZER},
        {"bucket-kb", 1, "K",
         "gradient bucket size in KiB (1..1024, default 25: DDP's 25 MiB, scaled down)",
         KEY_BUCKET},
        {"no-overlap", 0, "", "all-reduce after backward instead of during it", KEY_NO_OVERLAP},
        {"solution", 0, "", "run the reference instead of your exercise", KEY_SOLUTION},
        {0, 0, 0, 0, 0},
    };
    pl_options opt;
    char msg[4096];
    pl_options_defaults(&opt, 4);
    pl_options_status st = pl_options_parse(
        &opt, argc, argv, "lab07",
        "Lab 07, data parallelism: replicas, sharded batches, gradient all-reduce in buckets "
        "overlapping backward, on the digits.",
        extra, on_option, &a, msg, sizeof msg);
    if (st == PL_OPTIONS_HELP) {
        fputs(msg, stdout);
        printf("\nYour code: labs/07_data_parallel/exercise.c. Check it with `make check`.\n");
        return 0;
    }
    if (st == PL_OPTIONS_ERROR) {
        fprintf(stderr, "lab07: %s\n", msg);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    setenv("SIMT_QUIET", "1", 0);
    if (pl_options_apply(&opt, "lab07", msg, sizeof msg)) {
        fprintf(stderr, "lab07: %s\n", msg);
        return 2;
    }
    /* the devices first (there may be fewer than asked), then the batch */
    int n = opt.devices;
    if (a.batch % n) {
        long lo = a.batch / n * n, hi = lo + n;
        if (lo >= n)
            fprintf(stderr,
                    "lab07: --batch %ld does not split evenly over %d ranks: the nearest batch "
                    "sizes that do are %ld and %ld\n",
                    a.batch, n, lo, hi);
        else
            fprintf(stderr,
                    "lab07: --batch %ld is smaller than --devices %d: every rank needs a "
                    "sample; the nearest batch size that splits evenly is %ld\n",
                    a.batch, n, hi);
        return 2;
    }
    const char *why = pl_device_problem("lab07");
    if (why) {
        fprintf(stderr, "lab07: %s\n", why);
        return 2;
    }
    pl_digits data;
    char err[2048];
    if (pl_digits_load("data/digits.csv", &data, err, sizeof err)) {
        fprintf(stderr, "lab07: %s\n", err);
        return 2;
    }
    /* the student's functions where written, the reference's elsewhere */
    lab07_impl impl = a.solution ? lab07_solution : lab07_exercise;
    probe p = {0, 0};
    if (!a.solution && pl_world_run(1, NULL, 10, probe_rank, &p, err, sizeof err) == 0) {
        if (p.shard_todo) impl.shard_batch = lab07_solution.shard_batch;
        if (p.sync_todo) impl.sync_gradients = lab07_solution.sync_gradients;
    }
    const char *clock = pl_clock_name();
    const char *dev = pl_device_caps()->modeled ? pl_device_label() : "real GPUs";
    printf("paralab lab 07 — data parallelism (%d rank%s on %s, %s clock)\n", n, pl_s(n), dev,
           clock);
    if (p.shard_todo || p.sync_todo)
        printf("  ! exercise not attempted yet (%s%s%s) — using the reference there; open "
               "labs/07_data_parallel/exercise.c\n",
               p.shard_todo ? "shard_batch" : "", p.shard_todo && p.sync_todo ? ", " : "",
               p.sync_todo ? "sync_gradients" : "");
    lab07_config cfg = {.batch = (int)a.batch,
                        .epochs = (int)a.epochs,
                        .sgd = a.sgd,
                        .lr = (float)(a.lr > 0 ? a.lr
                                      : a.sgd  ? 0.1
                                               : 5e-3),
                        .bucket_floats = (int)(a.bucket_kb * 1024 / 4),
                        .overlap = !a.no_overlap,
                        .seed = opt.seed,
                        .narrate = 1};
    static lab07_result res;
    lab07_run run = {.cfg = &cfg, .impl = &impl, .data = &data, .result = &res};
    static const char *roles[PL_MAX_RANKS];
    static char role_text[PL_MAX_RANKS][16];
    for (int r = 0; r < n; r++) {
        snprintf(role_text[r], sizeof role_text[r], "dp %d", r);
        roles[r] = role_text[r];
    }
    pl_viz_config vc = {.title = "lab 07 data parallel",
                        .panes = PL_PANE_BIT(PL_PANE_DEVICES) | PL_PANE_BIT(PL_PANE_TIMELINE) |
                                 PL_PANE_BIT(PL_PANE_TOPOLOGY) | PL_PANE_BIT(PL_PANE_METRICS),
                        .steps = 7 + cfg.epochs,
                        .clock = clock,
                        .modeled = pl_device_caps()->modeled};
    memcpy(vc.roles, roles, sizeof roles);
    int quit = 0, failed = pl_viz_run_lab(&vc, &opt, n, lab07_rank, &run, &quit, err, sizeof err);
    pl_digits_free(&data);
    if (quit) {
        free(res.params);
        return quit == 2 ? 130 : 0; /* Ctrl-C: 130, as a shell reports SIGINT */
    }
    if (failed) {
        fprintf(stderr, "lab07: %s\n", err);
        free(res.params);
        return failed == 2 ? 2 : 1;
    }
    printf("\n  %d steps of a global batch of %d on %d rank%s: loss %.4f, test accuracy %.1f %%; "
           "a step takes %.1f us (%s)\n",
           res.steps, cfg.batch, n, pl_s(n),
           res.epoch_loss[cfg.epochs - 1 < 1000 ? cfg.epochs - 1 : 999], res.test_acc,
           (pl_device_caps()->modeled ? res.modeled_step : res.measured_step) * 1e6, clock);
    free(res.params);

    /* the checks of what ran; the training checks are make check's */
    printf("\n[checks]  (make check also trains with your sync_gradients: 10 steps against one "
           "device, and 20 epochs on 1, 2, 4 and 8 ranks)\n");
    int bad = 0;
    for (int ex = 0; ex < 2; ex++) {
        int todo = ex == 0 ? p.shard_todo : p.sync_todo;
        const lab07_impl *which = todo || a.solution ? &lab07_solution : &lab07_exercise;
        pl_check chk;
        pl_check_begin(&chk, "07_data_parallel", ex == 0 ? "shard_batch" : "sync_gradients");
        lab07_check_quick(ex, which, &chk);
        printf("  %-11s  ", which == &lab07_solution ? "(reference)" : "(yours)");
        pl_check_print(&chk, 0);
        bad |= chk.outcome != PL_PASS;
    }
    return bad ? 1 : 0;
}
