/*
 * Lab 11 — ZeRO stages 1-3 (FSDP): data parallelism over N ranks, with
 * what every replica keeps N times over sharded instead: the optimizer
 * state (stage 1), the gradients too (stage 2), the parameters too (stage
 * 3), each rank keeping 1/N and the collectives fetching the rest when it
 * is needed. The engine is paralab/zero.h (pl_zero); the exercise is stage
 * 1's update (reduce-scatter the gradients, update this rank's shard,
 * all-gather the parameters), the reference pl_zero_update_stage1.
 *
 * The steps (the first optimizer step narrated): what a replica holds (the
 * memory measured from the device allocations against the formulas), the
 * buckets and their padding (Ψ against Ψ_pad), the forward and backward,
 * the update, the communication (the ledger against pl_zero_traffic_of),
 * the weights against plain data parallelism (a stage-0 engine beside it),
 * then one line per epoch (the loss, the test accuracy).
 *
 * Usage: lab11 [--stage 0|1|2|3] [--accumulate k] [--hidden h] [--layers L]
 *              [--batch B] [--lr X] [--epochs E] [--no-overlap] [--solution]
 *              [common options: --devices N ...] [--help]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "11_zero/lab11.h"
#include "harness/harness.h"
#include "paralab/cli.h"
#include "paralab/device.h"
#include "paralab/options.h"
#include "paralab/plural.h"
#include "paralab/viz.h" /* the panes */

enum {
    KEY_STAGE = 300,
    KEY_ACCUMULATE,
    KEY_HIDDEN,
    KEY_LAYERS,
    KEY_BATCH,
    KEY_LR,
    KEY_EPOCHS,
    KEY_NO_OVERLAP
};

typedef struct {
    long stage, accumulate, hidden, layers, batch, epochs; /* the options */
    double lr;
    int no_overlap;
    pl_digits data; /* the run */
    char update_from[160];
    lab11_config cfg;
    lab11_result res;
    lab11_run run;
    pl_viz_zero viz; /* the memory pane: the run's stage, N, Ψ and Ψ_pad */
} lab;

static int on_option(int key, const char *arg, void *ctx, char *err, size_t cap)
{
    lab *a = ctx;
    const char *e = NULL;
    switch (key) {
    case KEY_STAGE: /* a number outside 0..3 is pl_zero_check's to refuse: it names the
                       stages; text that is no number is refused with the range */
        if (pl_parse_long("--stage", arg, -1000000, 1000000, &a->stage))
            e = pl_parse_long("--stage", arg, 0, 3, &a->stage);
        break;
    case KEY_ACCUMULATE: /* (the same: "--accumulate 0: ...") */
        if (pl_parse_long("--accumulate", arg, -1000000, 1000000, &a->accumulate))
            e = pl_parse_long("--accumulate", arg, 1, 1024, &a->accumulate);
        break;
    case KEY_HIDDEN:
        e = pl_parse_long("--hidden", arg, 1, 1024, &a->hidden);
        break;
    case KEY_LAYERS:
        e = pl_parse_long("--layers", arg, 1, PL_BLOCKS_MAX, &a->layers);
        break;
    case KEY_BATCH:
        e = pl_parse_long("--batch", arg, 1, 1438, &a->batch);
        break;
    case KEY_LR:
        e = pl_parse_double("--lr", arg, 0, 10, 1, &a->lr);
        break;
    case KEY_EPOCHS:
        e = pl_parse_long("--epochs", arg, 1, 1000, &a->epochs);
        break;
    default: /* KEY_NO_OVERLAP */
        a->no_overlap = 1;
        return 0;
    }
    if (e) snprintf(err, cap, "%s", e);
    return e != NULL;
}

/* --devices beyond the devices there are */
static void devices_hint(void *ctx, int have, char *buf, size_t cap)
{
    (void)ctx;
    snprintf(buf, cap, "ZeRO runs one data-parallel rank per device: --devices 1 to %d here", have);
}

/* Whether lab11_zero1_update is written: asked once, on a stage-1 engine
 * of a tiny model on the one-rank world (a real engine: a finished update
 * runs on it, and the engine is thrown away). */
static int probe_rank(pl_rank *r)
{
    pl_zero_config c = {.model = pl_blocks_config_make(8, 1),
                        .stage = 1,
                        .batch = 1,
                        .accumulate = 1,
                        .overlap = 1,
                        .sgd = 1};
    pl_zero z;
    if (pl_zero_create(&z, &c, r->comm, 0, r->stream, r->error, sizeof r->error)) return 1;
    pl_lab_probing(LAB11_ZERO1);
    if (lab11_zero1_update(&z, 0.01f) == PL_TODO_STATUS) pl_lab_found_todo(LAB11_ZERO1);
    cudaError_t se = cudaStreamSynchronize(r->stream);
    if (se) { /* a fault leaves the device unusable: say where, and stop */
        fflush(stdout);
        fprintf(stderr,
                "lab11: your zero1_update (labs/11_zero/exercise.c), tried on a tiny model on "
                "one rank before the run, made the device fail: %s (%s)\n  %s\n",
                cudaGetErrorName(se), cudaGetErrorString(se), pl_fault_report());
        _exit(1);
    }
    pl_zero_destroy(&z);
    return 0;
}

/* The options checked together (pl_zero_check names the bad value), the
 * digits; the title. The steps: six for the first step, then one per
 * epoch. */
static int setup(void *ctx, char *err, size_t cap)
{
    lab *a = ctx;
    const pl_options *opt = pl_lab_options();
    int n = opt->devices;
    pl_zero_config zc = {.model = pl_blocks_config_make((int)a->hidden, (int)a->layers),
                         .stage = (int)a->stage,
                         .batch = (int)a->batch,
                         .accumulate = (int)a->accumulate,
                         .overlap = !a->no_overlap,
                         .sgd = 0};
    if (pl_zero_check(&zc, n, err, cap)) return -1;
    /* the memory it takes, before anything is allocated: the engine's stage on
     * each rank, and the plain-DP engine beside it for the first step; on the
     * host rank 0's two gathered models, the initial one and the shards' rows */
    pl_blocks_run need = {.model = zc.model,
                          .dp = n,
                          .tp = 1,
                          .pp = 1,
                          .chunks = 1,
                          .batch = zc.batch,
                          .micro_batches = zc.accumulate,
                          .zero_stage = zc.stage,
                          .extra_states = 1,
                          .host_models = 4};
    if (pl_blocks_run_fits(&need, err, cap)) return -1;
    if (pl_digits_load("data/digits.csv", &a->data, err, cap)) return -1;
    int yours = !pl_lab_uses_reference(LAB11_ZERO1);
    if (yours)
        snprintf(a->update_from, sizeof a->update_from, "your lab11_zero1_update (exercise.c)");
    else
        snprintf(a->update_from, sizeof a->update_from, "the reference's lab11_zero1_update%s",
                 pl_lab_solution() ? " (--solution)" : "");
    a->cfg = (lab11_config){.zc = zc,
                            .update = yours ? lab11_zero1_update : lab11_zero1_update_solution,
                            .update_from = a->update_from,
                            .epochs = (int)a->epochs,
                            .lr = (float)a->lr,
                            .seed = opt->seed,
                            .narrate = 1,
                            .evaluate = 1,
                            .compare = 1};
    lab11_run_init(&a->run, &a->cfg, &a->data, &a->res);
    a->viz = (pl_viz_zero){.stage = zc.stage,
                           .ranks = n,
                           .psi = pl_blocks_count(&zc.model),
                           .psi_pad = pl_zero_padded(&zc.model, n),
                           .sgd = zc.sgd};
    const char *dev = pl_device_caps()->modeled ? pl_device_label() : "real GPUs";
    char micro[64] = "";
    if (zc.accumulate > 1)
        snprintf(micro, sizeof micro, ", %d micro-steps per step", zc.accumulate);
    printf("paralab lab 11 — ZeRO stage %d (%d rank%s on %s, %s clock; h = %d, L = %d, a batch "
           "of %d%s%s)\n",
           zc.stage, n, pl_s(n), dev, pl_clock_name(), zc.model.hidden, zc.model.layers, zc.batch,
           micro, zc.overlap ? "" : ", no overlap");
    if (zc.stage != 1)
        printf("  (stage %d runs the engine's update; --stage 1 runs %s)\n", zc.stage,
               yours ? "yours" : "the exercise's");
    return 6 + a->cfg.epochs;
}

static int steps(pl_rank *r)
{
    lab *a = r->arg;
    r->arg = &a->run;
    return lab11_rank(r);
}

static int report(void *ctx)
{
    lab *a = ctx;
    int bad = 0, n = pl_lab_options()->devices;
    const lab11_result *res = &a->res;
    if (res->steps) {
        const pl_zero_memory *m = &res->mem[0];
        printf("\n  %d step%s of a batch of %d at stage %d on %d rank%s: loss %.4f, test accuracy "
               "%.1f %%; rank 0 holds %zu bytes (parameters %zu, gradients %zu, optimizer "
               "state %zu, buckets %zu); a step takes %.1f us (%s)\n",
               res->steps, pl_s(res->steps), a->cfg.zc.batch, a->cfg.zc.stage, n, pl_s(n),
               res->epoch_loss[a->cfg.epochs - 1 < 1000 ? a->cfg.epochs - 1 : 999], res->test_acc,
               m->params + m->grads + m->optim + m->buffers, m->params, m->grads, m->optim,
               m->buffers,
               (pl_device_caps()->modeled ? res->modeled_step : res->measured_step) * 1e6,
               pl_clock_name());
        for (int q = 0; q < n; q++) {
            const pl_zero_memory *g = &res->mem[q], *f = &res->formula;
            if (g->params != f->params || g->grads != f->grads || g->optim != f->optim ||
                g->buffers != f->buffers) {
                printf("  ! rank %d holds parameters %zu, gradients %zu, optimizer state %zu, "
                       "buckets %zu bytes; the formulas say %zu, %zu, %zu, %zu\n",
                       q, g->params, g->grads, g->optim, g->buffers, f->params, f->grads, f->optim,
                       f->buffers);
                bad = 1;
                break;
            }
        }
        if (res->traffic_bad_at) {
            printf("  ! %s\n", res->traffic_why);
            bad = 1;
        }
    }
    free(a->res.params);
    free(a->res.init);
    for (int s = 0; s < LAB11_KEEP_MAX; s++) free(a->res.kept[s]);
    pl_digits_free(&a->data);
    return bad;
}

static void quick_check(int exercise, int use_solution, pl_check *c)
{
    lab11_check_quick(exercise, use_solution ? lab11_zero1_update_solution : lab11_zero1_update, c);
}

int main(int argc, char **argv)
{
    static lab a = {.stage = 3,
                    .accumulate = 1,
                    .hidden = 64,
                    .layers = 2,
                    .batch = 64,
                    .epochs = 2,
                    .lr = 2e-3};
    static const pl_lab_option options[] = {
        {"stage", 1, "S", "ZeRO stage: 0 (plain DP), 1, 2 or 3 (default 3)", KEY_STAGE},
        {"accumulate", 1, "k", "micro-steps per optimizer step (default 1)", KEY_ACCUMULATE},
        {"hidden", 1, "h", "residual stream width (1..1024, default 64; f = 4h)", KEY_HIDDEN},
        {"layers", 1, "L", "residual MLP blocks (1..64, default 2)", KEY_LAYERS},
        {"batch", 1, "B", "samples per step, all ranks (1..1438, default 64)", KEY_BATCH},
        {"lr", 1, "X", "AdamW's learning rate (default 0.002)", KEY_LR},
        {"epochs", 1, "E", "passes over the training set (1..1000, default 2)", KEY_EPOCHS},
        {"no-overlap", 0, "", "collectives on the compute stream, in order", KEY_NO_OVERLAP},
        {0, 0, 0, 0, 0},
    };
    static const pl_lab_def me = {
        .program = "lab11",
        .summary = "Lab 11, ZeRO stages 1-3 (FSDP): the optimizer state, the gradients and the "
                   "parameters sharded over N data-parallel ranks; the memory each rank holds, "
                   "the communication that buys it back, the same weights as plain data "
                   "parallelism, on the block model.",
        .exercise = "labs/11_zero/exercise.c",
        .title = "lab 11 zero",
        .options = options,
        .on_option = on_option,
        .ctx = &a,
        .default_devices = 8,
        .multi_process = 1, /* train.c: what rank 0 prints of other processes' ranks is gathered */
        .devices_hint = devices_hint,
        .lab = &lab11_zero,
        .check = quick_check,
        .todo_names = 1,
        .checks_note = "  (make check also trains with your update at stage 1 on 1, 2, 4 and 8 "
                       "ranks: the weights after each of 10 steps against plain data "
                       "parallelism, the floats sent against the formula, 20 epochs)",
        .panes = PL_PANE_BIT(PL_PANE_MEMORY) | PL_PANE_BIT(PL_PANE_TOPOLOGY),
        .zero = &a.viz,
        .role = "dp",
        .probe = probe_rank,
        .setup = setup,
        .steps = steps,
        .report = report,
    };
    return pl_lab_main(&me, argc, argv);
}
