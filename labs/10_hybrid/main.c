/*
 * Lab 10 — hybrid (3D) parallelism: dp x tp x pp ranks on one device mesh.
 * Each rank has coordinates (dp, pp, tp) (yours: coords), belongs to a TP,
 * a DP and a PP group (yours: make_groups), holds TP shard tp of pipeline
 * stage pp of replica dp, and runs the pipeline schedule with its TP
 * collectives inside each F and backward, then the DP reduction after the
 * op your dp_after names. The mesh and its groups, one micro-batch through
 * TP-sharded stages, the pipeline, the DP reduction, the step, training.
 *
 * Usage: lab10 [--dp N] [--tp t] [--pp p] [--order megatron|picotron]
 *              [--micro-batches m] [--schedule NAME] [--chunks v] [--layers L]
 *              [--hidden h] [--batch B] [--epochs E] [--lr X]
 *              [--sequence-parallel] [--clip-grad-norm X] [--solution]
 *              [common options] [--help]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "10_hybrid/lab10.h"
#include "harness/harness.h"
#include "paralab/cli.h"
#include "paralab/device.h"
#include "paralab/dist.h"
#include "paralab/options.h"
#include "paralab/plural.h"
#include "paralab/viz.h" /* the panes */

enum {
    KEY_DP = 300,
    KEY_TP,
    KEY_PP,
    KEY_ORDER,
    KEY_MICRO,
    KEY_SCHEDULE,
    KEY_CHUNKS,
    KEY_LAYERS,
    KEY_HIDDEN,
    KEY_BATCH,
    KEY_EPOCHS,
    KEY_LR,
    KEY_SP,
    KEY_CLIP
};

typedef struct {
    long dp, tp, pp, micro, chunks, layers, hidden, batch, epochs; /* chunks, layers 0: default */
    double lr, clip;
    int kind, order, sp;
    int set_micro, set_batch; /* --micro-batches, --batch given */
    int set_devices;          /* the --devices the degrees set (0: none given) */
    int user_devices;         /* a --devices given before the degrees (0: none) */
    pl_digits data;           /* the run */
    pl_pp_schedule sched;
    int have_sched;
    char coords_from[160], groups_from[160], dp_after_from[160];
    lab10_impl use;
    lab10_config cfg;
    lab10_result res;
    lab10_run run;
    pl_viz_pipeline pipe; /* the pipeline pane */
    pl_viz_mesh mesh;     /* the mesh pane */
} lab;

static int on_option(int key, const char *arg, void *ctx, char *err, size_t cap)
{
    lab *a = ctx;
    const char *e = NULL;
    char why[512];
    switch (key) {
    case KEY_DP:
    case KEY_TP:
    case KEY_PP: {
        const char *name = key == KEY_DP ? "--dp" : key == KEY_TP ? "--tp" : "--pp";
        long *to = key == KEY_DP ? &a->dp : key == KEY_TP ? &a->tp : &a->pp;
        if ((e = pl_parse_long(name, arg, 1, PL_MAX_RANKS, to))) break;
        /* --devices is their product: a --devices before them is the user's */
        int now = pl_lab_options()->devices;
        if (a->set_devices ? now != a->set_devices : now != 8) a->user_devices = now;
        long prod = a->dp * a->tp * a->pp;
        a->set_devices = prod <= PL_MAX_RANKS ? (int)prod : PL_MAX_RANKS + 1;
        pl_lab_set_devices(a->set_devices);
        break;
    }
    case KEY_ORDER:
        if ((a->order = pl_mesh_order_parse(arg, why, sizeof why)) < 0) {
            snprintf(err, cap, "--order %s", why);
            return 1;
        }
        return 0;
    case KEY_MICRO:
        e = pl_parse_long("--micro-batches", arg, 1, 1438, &a->micro);
        a->set_micro = 1;
        break;
    case KEY_SCHEDULE:
        a->kind = pl_pp_kind_parse(arg, why, sizeof why);
        if (a->kind < 0) {
            snprintf(err, cap, "--schedule %s: %s", arg, why);
            return 1;
        }
        return 0;
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
        a->set_batch = 1;
        break;
    case KEY_EPOCHS:
        e = pl_parse_long("--epochs", arg, 1, 1000, &a->epochs);
        break;
    case KEY_LR:
        e = pl_parse_double("--lr", arg, 0, 10, 1, &a->lr);
        break;
    case KEY_SP:
        a->sp = 1;
        return 0;
    default: /* KEY_CLIP */
        e = pl_parse_double("--clip-grad-norm", arg, 0, 1e6, 1, &a->clip);
        break;
    }
    if (e) snprintf(err, cap, "%s", e);
    return e != NULL;
}

/* The run's configuration from the options (layers: the default for pp). */
static pl_hybrid_config config_of(const lab *a)
{
    int v = a->chunks ? (int)a->chunks : a->kind == PL_PP_INTERLEAVED ? 2 : 1;
    long L = a->layers;
    if (!L) {
        L = a->pp * v;
        if (L < 2) L = 2;
        if (L > PL_BLOCKS_MAX) L = PL_BLOCKS_MAX;
    }
    pl_hybrid_config c = {.model = pl_blocks_config_make((int)a->hidden, (int)L),
                          .dp = (int)a->dp,
                          .tp = (int)a->tp,
                          .pp = (int)a->pp,
                          .order = (pl_mesh_order)a->order,
                          .chunks = v,
                          .sequence_parallel = a->sp,
                          .batch = (int)a->batch,
                          .micro_batches = (int)a->micro,
                          .bucket_floats = 0};
    return c;
}

/* --devices (the degrees' product) beyond the devices there are */
static void devices_hint(void *ctx, int have, char *buf, size_t cap)
{
    lab *a = ctx;
    pl_hybrid_config c = config_of(a);
    char list[1024];
    pl_hybrid_factorisations_str(&c, have, list, sizeof list);
    snprintf(buf, cap,
             "--dp %ld --tp %ld --pp %ld make %ld ranks, one device each; valid (dp, tp, pp) for "
             "%d ranks here (h = %d, L = %d blocks): %s",
             a->dp, a->tp, a->pp, a->dp * a->tp * a->pp, have, c.model.hidden, c.model.layers,
             list);
}

/* Which of the student's functions are written: each asked once (coords
 * and dp_after on host data; make_groups on the one-rank world). */
static int probe_rank(pl_rank *r)
{
    pl_mesh m;
    pl_mesh_coord c;
    char err[256];
    if (pl_mesh_init(&m, 8, 2, 2, 2, err, sizeof err)) return 1;
    pl_lab_probing(LAB10_COORDS);
    if (lab10_exercise.coords(&m, 0, &c) == PL_TODO_STATUS) pl_lab_found_todo(LAB10_COORDS);
    pl_mesh one;
    if (pl_mesh_init(&one, 1, 1, 1, 1, err, sizeof err)) return 1;
    pl_mesh_groups g = {0};
    pl_lab_probing(LAB10_GROUPS);
    int rc = lab10_exercise.make_groups(r->comm, &one, &g);
    pl_mesh_groups_free(&g);
    if (rc == PL_TODO_STATUS) pl_lab_found_todo(LAB10_GROUPS);
    pl_pp_schedule s;
    if (pl_pp_build(&s, PL_PP_1F1B, 2, 2, 1, err, sizeof err)) return 1;
    pl_lab_probing(LAB10_DP_AFTER);
    if (lab10_exercise.dp_after(&s, 0) == PL_TODO_STATUS) pl_lab_found_todo(LAB10_DP_AFTER);
    pl_pp_schedule_free(&s);
    return 0;
}

/* Before the run: each rank's groups made by the functions the run uses
 * and checked against the mesh, on a world of its own (nothing trains). */
typedef struct {
    const lab10_impl *impl;
    pl_mesh mesh;
    int bad[PL_MAX_RANKS];
    char why[PL_MAX_RANKS][1024];
} groups_try;

static int groups_rank(pl_rank *r)
{
    groups_try *t = r->arg;
    pl_mesh_groups g;
    int rc = lab10_groups(t->impl, r->comm, &t->mesh, &g, t->why[r->rank], sizeof t->why[0]);
    t->bad[r->rank] = rc != 0;
    if (rc == PL_TODO_STATUS) return 0;
    /* a split that failed (the comm layer says why) stops the world */
    if (rc && !strncmp(t->why[r->rank], "make_groups returned ", 21)) {
        snprintf(r->error, sizeof r->error, "%s", t->why[r->rank]);
        return 1;
    }
    if (pl_comm_barrier(r->comm)) {
        snprintf(r->error, sizeof r->error, "rank %d, after make_groups: %s", r->rank,
                 pl_comm_last_error(r->comm));
        return 1;
    }
    /* wrong groups stay (the lab stops): their frees are collective, and
     * one rank's TP group may be another's DP group, each waiting on the other */
    if (!rc) pl_mesh_groups_free(&g);
    return 0;
}

static int setup(void *ctx, char *err, size_t cap)
{
    lab *a = ctx;
    const pl_options *opt = pl_lab_options();
    int n = opt->devices;
    if (!a->chunks) a->chunks = a->kind == PL_PP_INTERLEAVED ? 2 : 1;
    pl_hybrid_config c = config_of(a);
    long prod = a->dp * a->tp * a->pp;
    /* a --devices of the user's: before the degrees (seen then), or after them */
    int given = a->user_devices;
    if (a->set_devices ? n != a->set_devices : n != 8) given = n;
    if (pl_dist_active() && !a->user_devices && prod != n) { /* the world mpirun started */
        char list[1024];
        int P = pl_dist_procs(), T = n / P;
        pl_hybrid_factorisations_str(&c, n, list, sizeof list);
        snprintf(err, cap,
                 "under mpirun the world is %d processes x %d rank%s = %d ranks, but --dp %ld "
                 "--tp %ld --pp %ld make %ld: give degrees that make %d (valid (dp, tp, pp) for %d "
                 "ranks here: %s), or start %ld ranks (mpirun -np P with --ranks-per-process T, "
                 "P x T = %ld)",
                 P, T, T == 1 ? "" : "s", n, a->dp, a->tp, a->pp, prod, n, n, list, prod, prod);
        return -1;
    }
    if (given && given != prod) {
        char list[1024];
        pl_hybrid_factorisations_str(&c, given, list, sizeof list);
        snprintf(err, cap,
                 "--devices %d, but --dp %ld --tp %ld --pp %ld make %ld ranks: --devices is their "
                 "product (leave it out, or give degrees that make %d: valid (dp, tp, pp) for %d "
                 "ranks here: %s)",
                 given, a->dp, a->tp, a->pp, prod, given, given, list);
        return -1;
    }
    if (pl_hybrid_check(&c, n, err, cap)) {
        /* the batch's rule broken by a --micro-batches of the user's: lead with
         * it, and say which m would do (the divisors of B / dp). Only the lab
         * knows which of --batch and --micro-batches the user gave; every
         * other refusal is the library's, word for word. */
        if (a->set_micro && !strncmp(err, "--batch ", 8) && c.batch % c.dp == 0) {
            int rows = c.batch / c.dp;
            char ms[512] = "";
            int k = 0, len = 0;
            for (int d = 1; d <= rows; d++)
                if (rows % d == 0 && len < (int)sizeof ms - 16)
                    len += snprintf(ms + len, sizeof ms - (size_t)len, "%s%d", k++ ? ", " : "", d);
            char *comma = strrchr(ms, ',');
            if (comma && k > 1) {
                memmove(comma + 3, comma + 1, strlen(comma + 1) + 1);
                memcpy(comma, " or", 3);
            }
            char with[32] = "";
            if (a->set_batch) snprintf(with, sizeof with, "--batch %d ", c.batch);
            snprintf(err, cap,
                     "%s--micro-batches %d: each replica's rows (B / dp = %d / %d = %d) are cut "
                     "into m micro-batches of the same size, so m must divide %d: m = %s",
                     with, c.micro_batches, c.batch, c.dp, rows, rows, ms);
        }
        return -1;
    }
    /* the memory it takes, before anything is allocated: each rank its TP shard
     * of its stage's blocks and up to m micro-batches' activations; on the host
     * rank 0's gathered weights and gradients, and every rank's row of the
     * gather (a model per replica) */
    pl_blocks_run need = {.model = c.model,
                          .dp = c.dp,
                          .tp = c.tp,
                          .pp = c.pp,
                          .chunks = c.chunks,
                          .batch = c.batch,
                          .micro_batches = c.micro_batches,
                          .in_flight = c.micro_batches,
                          .sequence_parallel = c.sequence_parallel,
                          .zero_stage = -1,
                          .host_models = c.dp + 2};
    if (pl_blocks_run_fits(&need, err, cap)) return -1;
    int p = c.pp, m = c.micro_batches, v = c.chunks;
    if (pl_pp_build(&a->sched, (pl_pp_kind)a->kind, p, m, v, err, cap)) return -1;
    a->have_sched = 1;
    /* whose functions run */
    int co = !pl_lab_uses_reference(LAB10_COORDS), gr = !pl_lab_uses_reference(LAB10_GROUPS),
        da = !pl_lab_uses_reference(LAB10_DP_AFTER);
    a->use = (lab10_impl){co ? lab10_exercise.coords : lab10_solution.coords,
                          gr ? lab10_exercise.make_groups : lab10_solution.make_groups,
                          da ? lab10_exercise.dp_after : lab10_solution.dp_after};
    const char *sol = pl_lab_solution() ? " (--solution)" : "";
    snprintf(a->groups_from, sizeof a->groups_from, "%s",
             gr ? "your make_groups (exercise.c)" : "");
    if (!gr) snprintf(a->groups_from, sizeof a->groups_from, "the reference's make_groups%s", sol);
    snprintf(a->coords_from, sizeof a->coords_from, "%s", co ? "your coords (exercise.c)" : "");
    if (!co) snprintf(a->coords_from, sizeof a->coords_from, "the reference's coords%s", sol);
    snprintf(a->dp_after_from, sizeof a->dp_after_from, "%s",
             da ? "your dp_after (exercise.c)" : "");
    if (!da) snprintf(a->dp_after_from, sizeof a->dp_after_from, "the reference's dp_after%s", sol);
    pl_mesh mesh;
    if (pl_mesh_init_order(&mesh, n, c.dp, c.tp, c.pp, c.order, err, cap)) return -1;
    char why[1024];
    if (co) {
        int rc = lab10_coords_mismatch(&a->use, &mesh, why, sizeof why);
        if (rc >= 0) {
            snprintf(err, cap,
                     "your coords (labs/10_hybrid/exercise.c) is wrong, so nothing ran: %s", why);
            return -1;
        }
    }
    static groups_try t;
    memset(&t, 0, sizeof t);
    t.impl = &a->use;
    t.mesh = mesh;
    if (pl_world_run(n, NULL, opt->comm_timeout, groups_rank, &t, why, sizeof why)) {
        snprintf(err, cap, "%s failed, so nothing ran: %s",
                 gr ? "your make_groups (labs/10_hybrid/exercise.c)"
                    : "the reference's make_groups",
                 why);
        return -1;
    }
    for (int q = 0; q < n; q++)
        if (t.bad[q]) {
            snprintf(err, cap, "%s %s, so nothing ran: %s",
                     gr ? "your make_groups (labs/10_hybrid/exercise.c)"
                        : "the reference's make_groups",
                     strncmp(t.why[q], "make_groups returned ", 21)
                         ? "built groups the mesh does not have"
                         : "failed",
                     t.why[q]);
            return -1;
        }
    if (pl_digits_load("data/digits.csv", &a->data, err, cap)) return -1;
    a->cfg = (lab10_config){.hc = c,
                            .kind = (pl_pp_kind)a->kind,
                            .schedule = &a->sched,
                            .groups = &a->use,
                            .dp_after = a->use.dp_after,
                            .coords_from = a->coords_from,
                            .groups_from = a->groups_from,
                            .dp_after_from = a->dp_after_from,
                            .epochs = (int)a->epochs,
                            .lr = (float)a->lr,
                            .clip = (float)a->clip,
                            .seed = opt->seed,
                            .narrate = 1,
                            .evaluate = 1};
    lab10_run_init(&a->run, &a->cfg, &a->data, &a->res);
    double fi = -1, ft = -1;
    if (pl_pp_bubble_formula((pl_pp_kind)a->kind, p, m, v, &fi, &ft)) fi = ft = -1;
    a->pipe = (pl_viz_pipeline){.stages = p,
                                .micro_batches = m,
                                .chunks = v,
                                .schedule = pl_pp_kind_name((pl_pp_kind)a->kind),
                                .of_ideal = fi,
                                .of_total = ft};
    a->pipe.have_stage_rank = 1; /* stage r: the rank at dp 0, tp 0 */
    for (int st = 0; st < p; st++)
        a->pipe.stage_rank[st] = pl_mesh_rank(&mesh, (pl_mesh_coord){0, 0, st});
    a->mesh = (pl_viz_mesh){c.dp, c.tp, c.pp, pl_mesh_order_name(c.order)};
    const char *dev = pl_device_caps()->modeled ? pl_device_label() : "real GPUs";
    printf("paralab lab 10 — hybrid parallelism (dp %d x tp %d x pp %d = %d rank%s on %s, %s "
           "clock; %s order; %s, %d micro-batch%s%s%s)\n",
           c.dp, c.tp, c.pp, n, pl_s(n), dev, pl_clock_name(), pl_mesh_order_name(c.order),
           pl_pp_kind_name((pl_pp_kind)a->kind), m, m == 1 ? "" : "es", v > 1 ? ", chunks " : "",
           v > 1 ? "v" : "");
    return 5 + a->cfg.epochs;
}

static int steps(pl_rank *r)
{
    lab *a = r->arg;
    r->arg = &a->run;
    return lab10_rank(r);
}

static int report(void *ctx)
{
    lab *a = ctx;
    int bad = 0;
    const pl_hybrid_config *c = &a->cfg.hc;
    if (a->res.steps) {
        printf("\n  %d step%s of a batch of %d on dp %d x tp %d x pp %d (%s, %d micro-batch%s per "
               "replica): loss %.4f, test accuracy %.1f %%; a step takes %.1f us (%s)\n",
               a->res.steps, pl_s(a->res.steps), c->batch, c->dp, c->tp, c->pp,
               pl_pp_kind_name(a->cfg.kind), c->micro_batches, c->micro_batches == 1 ? "" : "es",
               a->res.epoch_loss[a->cfg.epochs - 1 < 1000 ? a->cfg.epochs - 1 : 999],
               a->res.test_acc,
               (pl_device_caps()->modeled ? a->res.modeled_step : a->res.measured_step) * 1e6,
               pl_clock_name());
        if (a->res.replicas_differ_at) {
            printf("  ! after step %d %s: the DP reduction did not make every replica's "
                   "gradients the same sum (see dp_after)\n",
                   a->res.replicas_differ_at, a->res.replicas_why);
            bad = 1;
        }
    }
    free(a->res.params);
    free(a->res.grads);
    if (a->have_sched) pl_pp_schedule_free(&a->sched);
    pl_digits_free(&a->data);
    return bad;
}

static void quick_check(int exercise, int use_solution, pl_check *c)
{
    lab10_check_quick(exercise, use_solution ? &lab10_solution : &lab10_exercise, c);
}

int main(int argc, char **argv)
{
    static lab a = {.dp = 2,
                    .tp = 2,
                    .pp = 2,
                    .micro = 4,
                    .hidden = 64,
                    .batch = 64,
                    .epochs = 2,
                    .lr = 2e-3,
                    .kind = PL_PP_1F1B,
                    .order = PL_MESH_MEGATRON};
    static const pl_lab_option options[] = {
        {"dp", 1, "N", "data-parallel replicas (default 2)", KEY_DP},
        {"tp", 1, "t", "tensor-parallel ranks per stage (default 2)", KEY_TP},
        {"pp", 1, "p", "pipeline stages (default 2); --devices: dp tp pp", KEY_PP},
        {"order", 1, "NAME", "rank order: megatron (default) or picotron", KEY_ORDER},
        {"micro-batches", 1, "m", "micro-batches of each replica's rows (default 4)", KEY_MICRO},
        {"schedule", 1, "NAME", "naive, gpipe, 1f1b, interleaved or zb-h1 (default 1f1b)",
         KEY_SCHEDULE},
        {"chunks", 1, "v", "model chunks per stage (1..8; interleaved's default 2)", KEY_CHUNKS},
        {"layers", 1, "L", "residual MLP blocks (1..64, default max(2, p x v))", KEY_LAYERS},
        {"hidden", 1, "h", "residual stream width (1..1024, default 64; f = 4h)", KEY_HIDDEN},
        {"batch", 1, "B", "samples per step, all replicas (1..1438, default 64)", KEY_BATCH},
        {"epochs", 1, "E", "passes over the training set (1..1000, default 2)", KEY_EPOCHS},
        {"lr", 1, "X", "AdamW's learning rate (default 0.002)", KEY_LR},
        {"sequence-parallel", 0, "", "Lab 08's sequence parallelism inside each stage", KEY_SP},
        {"clip-grad-norm", 1, "X", "clip the gradients' norm over the whole model to X", KEY_CLIP},
        {0, 0, 0, 0, 0},
    };
    static const pl_lab_def me = {
        .program = "lab10",
        .summary = "Lab 10, hybrid (3D) parallelism: data, tensor and pipeline parallelism at "
                   "once on one device mesh; each rank's coordinates, its TP, DP and PP groups, "
                   "and when the DP reduction fires in the pipeline schedule, on the block model.",
        .exercise = "labs/10_hybrid/exercise.c",
        .title = "lab 10 hybrid",
        .options = options,
        .on_option = on_option,
        .ctx = &a,
        .default_devices = 8,
        .multi_process = 1, /* train.c: what rank 0 prints of other processes' ranks is gathered */
        .devices_hint = devices_hint,
        .lab = &lab10_hybrid,
        .check = quick_check,
        .todo_names = 1,
        .checks_note = "  (make check also trains every factorisation of 8 and 4 ranks: one step "
                       "and 10 steps against one device, the replicas and the bytes per group "
                       "after every step)",
        .panes = PL_PANE_BIT(PL_PANE_MESH) | PL_PANE_BIT(PL_PANE_PIPELINE),
        .pipeline = &a.pipe,
        .mesh = &a.mesh,
        .probe = probe_rank,
        .setup = setup,
        .steps = steps,
        .report = report,
    };
    return pl_lab_main(&me, argc, argv);
}
