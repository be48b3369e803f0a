/*
 * Lab 08 — tensor parallelism: t ranks share every layer of the block
 * model, Megatron-LM's way. W1 is cut into column shards, W2 into row
 * shards; f and g are the only communication: one all-reduce forward and
 * one backward per block (with --sequence-parallel, a reduce-scatter and an
 * all-gather each). The classifier is split over the classes, its loss
 * computed without gathering the logits.
 *
 * Usage: lab08 [--devices t] [--hidden h] [--layers L] [--sequence-parallel]
 *              [--batch B] [--epochs E] [--lr X] [--solution]
 *              [common options] [--help]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "08_tensor_parallel/lab08.h"
#include "harness/harness.h"
#include "paralab/cli.h"
#include "paralab/device.h"
#include "paralab/options.h"
#include "paralab/plural.h"
#include "paralab/viz.h" /* the panes */

enum { KEY_HIDDEN = 300, KEY_LAYERS, KEY_SP, KEY_BATCH, KEY_EPOCHS, KEY_LR };

typedef struct {
    long hidden, layers, batch, epochs; /* the options */
    double lr;
    int sp;
    pl_digits data; /* the run */
    pl_tp_linear_ops impl;
    lab08_config cfg;
    lab08_result res;
    lab08_run run;
    pl_viz_matrix matrices[3]; /* the shards pane: W1, W2, Wc */
} lab;

static int on_option(int key, const char *arg, void *ctx, char *err, size_t cap)
{
    lab *a = ctx;
    const char *e = NULL;
    switch (key) {
    case KEY_HIDDEN:
        e = pl_parse_long("--hidden", arg, 1, 1024, &a->hidden);
        break;
    case KEY_LAYERS:
        e = pl_parse_long("--layers", arg, 1, PL_BLOCKS_MAX, &a->layers);
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
    default: /* KEY_SP */
        a->sp = 1;
        return 0;
    }
    if (e) snprintf(err, cap, "%s", e);
    return e != NULL;
}

/* --devices beyond the devices there are: the degrees that work here. */
static void devices_hint(void *ctx, int have, char *buf, size_t cap)
{
    lab *a = ctx;
    pl_blocks_config c = pl_blocks_config_make((int)a->hidden, (int)a->layers);
    char list[256];
    pl_blocks_degrees(&c, have, list, sizeof list);
    snprintf(buf, cap, "tensor parallelism can split this model (h = %d) over %s ranks here",
             c.hidden, list);
}

/* Which of the student's functions are written: each asked once on a
 * one-rank world, on real 1 x 1 buffers. */
static int probe_rank(pl_rank *r)
{
    float *d;
    if (cudaMalloc((void **)&d, 8 * sizeof(float))) return 1;
    cudaMemsetAsync(d, 0, 8 * sizeof(float), r->stream);
    pl_tp tp;
    char err[256];
    if (pl_tp_init(&tp, NULL, 0, 1, r->stream, err, sizeof err)) return 1;
    const pl_tp_linear_ops *x = &lab08_exercise;
    int col = x->column_forward(&tp, d, d + 1, d + 2, d + 3, d + 4, 1, 1) == PL_TODO_STATUS ||
              x->column_backward(&tp, d, d + 1, d + 2, d + 3, d + 4, d + 5, d + 6, 1, 1) ==
                  PL_TODO_STATUS;
    int row =
        x->row_forward(&tp, d, d + 1, d + 2, d + 3, d + 4, 1, 1) == PL_TODO_STATUS ||
        x->row_backward(&tp, d, d + 1, d + 2, d + 3, d + 4, d + 5, d + 6, 1, 1) == PL_TODO_STATUS;
    if (col) pl_lab_found_todo(0);
    if (row) pl_lab_found_todo(1);
    cudaStreamSynchronize(r->stream);
    cudaFree(d);
    return 0;
}

/* The model and its split checked, the digits, your functions (the
 * reference's where yours are TODO); the title. The steps: nine for the
 * first step (ten with more than one block), then one per epoch. */
static int setup(void *ctx, char *err, size_t cap)
{
    lab *a = ctx;
    const pl_options *opt = pl_lab_options();
    int t = opt->devices;
    pl_blocks_config c = pl_blocks_config_make((int)a->hidden, (int)a->layers);
    int have = 0;
    if (cudaGetDeviceCount(&have) != cudaSuccess || have < 1) have = 64;
    if (pl_blocks_check(&c, t, "--devices", have, err, cap)) return -1;
    if (a->sp && a->batch % t) {
        long lo = a->batch / t * t, hi = lo + t;
        if (lo >= t)
            snprintf(err, cap,
                     "--batch %ld: sequence parallelism splits the batch's rows over the %d "
                     "ranks, and %ld does not divide by %d (the nearest batch sizes that do are "
                     "%ld and %ld)",
                     a->batch, t, a->batch, t, lo, hi);
        else
            snprintf(err, cap,
                     "--batch %ld: sequence parallelism gives each of the %d ranks a row at "
                     "least (the smallest batch is %d)",
                     a->batch, t, t);
        return -1;
    }
    /* the memory it takes, before anything is allocated: each rank its shard of
     * every block and its activations; on the host rank 0's gathered model and
     * the ranks' rows of the gather */
    pl_blocks_run need = {.model = c,
                          .dp = 1,
                          .tp = t,
                          .pp = 1,
                          .chunks = 1,
                          .batch = (int)a->batch,
                          .micro_batches = 1,
                          .sequence_parallel = a->sp,
                          .zero_stage = -1,
                          .host_models = 2};
    if (pl_blocks_run_fits(&need, err, cap)) return -1;
    if (pl_digits_load("data/digits.csv", &a->data, err, cap)) return -1;
    const pl_tp_linear_ops *col = pl_lab_uses_reference(0) ? &lab08_solution : &lab08_exercise,
                           *row = pl_lab_uses_reference(1) ? &lab08_solution : &lab08_exercise;
    a->impl = (pl_tp_linear_ops){col->column_forward, row->row_forward, row->row_backward,
                                 col->column_backward};
    a->cfg = (lab08_config){.hidden = (int)a->hidden,
                            .layers = (int)a->layers,
                            .sequence_parallel = a->sp,
                            .batch = (int)a->batch,
                            .epochs = (int)a->epochs,
                            .lr = (float)a->lr,
                            .seed = opt->seed,
                            .narrate = 1,
                            .trace_linears = 1};
    a->run = (lab08_run){.cfg = &a->cfg, .impl = &a->impl, .data = &a->data, .result = &a->res};
    int cp = (c.classes + t - 1) / t * t; /* the classes, padded to a multiple of t */
    a->matrices[0] = (pl_viz_matrix){"W1", c.hidden, c.ffn, 'c', 0};
    a->matrices[1] = (pl_viz_matrix){"W2", c.ffn, c.hidden, 'r', 0};
    a->matrices[2] = (pl_viz_matrix){"Wc", c.hidden, cp, 'c', cp - c.classes};
    const char *dev = pl_device_caps()->modeled ? pl_device_label() : "real GPUs";
    printf("paralab lab 08 — tensor parallelism (%d rank%s on %s, %s clock%s)\n", t, pl_s(t), dev,
           pl_clock_name(), a->sp ? ", sequence parallel" : "");
    return 9 + (a->cfg.layers > 1) + a->cfg.epochs; /* "Block 1 the same way" with L > 1 */
}

static int steps(pl_rank *r)
{
    lab *a = r->arg;
    r->arg = &a->run;
    return lab08_rank(r);
}

static int report(void *ctx)
{
    lab *a = ctx;
    int t = pl_lab_options()->devices;
    if (!a->res.todo)
        printf("\n  %d step%s of a batch of %d on %d TP rank%s%s: loss %.4f, test accuracy %.1f "
               "%%; a step takes %.1f us (%s)\n",
               a->res.steps, pl_s(a->res.steps), a->cfg.batch, t, pl_s(t),
               a->sp ? " (sequence parallel)" : "",
               a->res.epoch_loss[a->cfg.epochs - 1 < 1000 ? a->cfg.epochs - 1 : 999],
               a->res.test_acc,
               (pl_device_caps()->modeled ? a->res.modeled_step : a->res.measured_step) * 1e6,
               pl_clock_name());
    free(a->res.params);
    pl_digits_free(&a->data);
    return 0;
}

static void quick_check(int exercise, int use_solution, pl_check *c)
{
    lab08_check_quick(exercise, use_solution ? &lab08_solution : &lab08_exercise, c);
}

int main(int argc, char **argv)
{
    static lab a = {.hidden = 64, .layers = 2, .batch = 64, .epochs = 5, .lr = 2e-3};
    static const pl_lab_option options[] = {
        {"hidden", 1, "h", "the width of the residual stream (1..1024, default 64; f = 4h)",
         KEY_HIDDEN},
        {"layers", 1, "L", "residual MLP blocks (1..64, default 2)", KEY_LAYERS},
        {"sequence-parallel", 0, "",
         "split the batch's rows over the ranks outside the parallel region", KEY_SP},
        {"batch", 1, "B", "samples per step, the same on every rank (1..1438, default 64)",
         KEY_BATCH},
        {"epochs", 1, "E",
         "passes over the training set (1..1000, default 5; make check trains 20)", KEY_EPOCHS},
        {"lr", 1, "X", "AdamW's learning rate (default 0.002)", KEY_LR},
        {0, 0, 0, 0, 0},
    };
    static const pl_lab_def me = {
        .program = "lab08",
        .summary = "Lab 08, tensor parallelism: column- and row-parallel layers, f and g, the "
                   "vocabulary-parallel loss and sequence parallelism, on the block model.",
        .exercise = "labs/08_tensor_parallel/exercise.c",
        .title = "lab 08 tensor parallel",
        .options = options,
        .on_option = on_option,
        .ctx = &a,
        .default_devices = 4,
        .multi_process = 1, /* train.c: rank 0 gathers the parameters it checks and prints */
        .devices_hint = devices_hint,
        .lab = &lab08_tensor_parallel,
        .check = quick_check,
        .todo_names = 1,
        .checks_note = "  (make check also trains with your layers: 10 steps against one device "
                       "with and without SP, and 20 epochs on 1, 2, 4 and 8 ranks)",
        .panes = PL_PANE_BIT(PL_PANE_TOPOLOGY) | PL_PANE_BIT(PL_PANE_SHARDS),
        .matrices = a.matrices,
        .nmatrices = 3,
        .role = "tp",
        .probe = probe_rank,
        .setup = setup,
        .steps = steps,
        .report = report,
    };
    return pl_lab_main(&me, argc, argv);
}
