/*
 * pp_bench.c — paralab-bench pp: every shipped pipeline schedule
 * (paralab/pipeline.h) on p = 4 stages of simulated H100s (the H100-SXM
 * preset, whatever SIMT_GPU says), m = 8 micro-batches (interleaved: v = 2
 * chunks), run by the one executor (paralab/pp_exec.h):
 *   - uniform stages (pl_pp_uniform_body: every F, B and W one kernel of
 *     the same cost, messages of no data): the bubble measured on the
 *     modeled clock, of the ideal time and of the total, against
 *     pl_pp_bubble_formula (the ratio: 1 when they agree);
 *   - the block model (paralab/pp_blocks.h: h = 64, L = 8 blocks, 2 per
 *     stage or 1 per chunk, a batch of 64 in micro-batches of 8 rows,
 *     AdamW): one step's bubble measured against the formula, and its
 *     modeled makespan against the formula's, busy / (1 - of_total) with
 *     busy the stages' mean busy time (the formula's time for stages as
 *     busy as these, with free messages); the makespan against 1F1B's; and
 *     the wall time per step on this machine against 1F1B's.
 * The mean of STEPS steps after a warm-up step, every number measured in
 * this run. The data is random: the times do not depend on it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "bench.h"
#include "paralab/clock.h"
#include "paralab/cuda_check.h"
#include "paralab/device.h"
#include "paralab/options.h"
#include "paralab/pp_blocks.h"
#include "paralab/world.h"

enum { P = 4, M = 8, BATCH = 64, LAYERS = 8, STEPS = 3 };

typedef struct {
    const pl_pp_schedule *s;
    int chunks, blocks; /* blocks: the block model, else the uniform body */
    const float *x;     /* [BATCH, inputs] */
    const int *y;       /* [BATCH] */
    /* rank 0's */
    pl_pp_timing t; /* uniform: its run; blocks: the mean over STEPS (makespan, bubbles) */
    double wall;    /* seconds per step, host clock */
} pp_run;

static int uniform_rank(pl_rank *r)
{
    pp_run *run = r->arg;
    pl_pp_uniform body;
    pl_pp_exec ex;
    if (pl_pp_uniform_init(&body, 1 << 14, r->stream, r->error, sizeof r->error)) return 1;
    int rc = 1;
    if (pl_pp_exec_init(&ex, &pl_pp_uniform_body, &body, r->comm, r->stream, 0, r->error,
                        sizeof r->error))
        goto out_body;
    pl_pp_timing t;
    if (pl_pp_run(&ex, run->s) || pl_pp_measure(&ex, 0, &t)) {
        snprintf(r->error, sizeof r->error, "%s", ex.error);
        goto out;
    }
    if (r->rank == 0) run->t = t;
    rc = 0;
out:
    pl_pp_exec_free(&ex);
out_body:
    pl_pp_uniform_free(&body);
    return rc;
}

static int blocks_rank(pl_rank *r)
{
    pp_run *run = r->arg;
    pl_blocks_config c = pl_blocks_config_make(64, LAYERS);
    pl_pp_blocks pp;
    float *dx = NULL;
    int *dy = NULL, status = 1;
    if (pl_pp_blocks_create(&pp, &c, r->comm, run->chunks, BATCH, M, 0, r->stream, r->error,
                            sizeof r->error))
        return 1;
    PL_RANK_CK(cudaMalloc((void **)&dx, (size_t)BATCH * c.inputs * sizeof(float)));
    PL_RANK_CK(cudaMalloc((void **)&dy, BATCH * sizeof(int)));
    PL_RANK_CK(
        cudaMemcpy(dx, run->x, (size_t)BATCH * c.inputs * sizeof(float), cudaMemcpyHostToDevice));
    PL_RANK_CK(cudaMemcpy(dy, run->y, BATCH * sizeof(int), cudaMemcpyHostToDevice));
    pl_pp_timing sum;
    memset(&sum, 0, sizeof sum);
    double t0 = 0;
    for (int s = 0; s <= STEPS; s++) { /* step 0: the warm-up */
        if (s == 1) t0 = pl_now();
        pl_pp_timing t;
        if (pl_pp_blocks_step(&pp, run->s, dx, dy, NULL) || pl_pp_measure(&pp.exec, 0, &t) ||
            pl_pp_blocks_adamw(&pp, 1e-3f)) {
            snprintf(r->error, sizeof r->error, "%s", pp.error[0] ? pp.error : pp.exec.error);
            goto out;
        }
        PL_RANK_CK(cudaStreamSynchronize(r->stream));
        if (s == 0) continue;
        sum.makespan += t.makespan / STEPS;
        sum.of_ideal += t.of_ideal / STEPS;
        sum.of_total += t.of_total / STEPS;
        for (int q = 0; q < P; q++) sum.busy[q] += t.busy[q] / STEPS;
    }
    if (r->rank == 0) {
        run->wall = (pl_now() - t0) / STEPS;
        run->t = sum;
    }
    status = 0;
out:
    cudaStreamSynchronize(r->stream);
    pl_pp_blocks_destroy(&pp);
    cudaFree(dx);
    cudaFree(dy);
    return status;
}

int bench_pp(int repeat)
{
    (void)repeat;
    pl_options o;
    pl_options_defaults(&o, P);
    o.hw = "H100-SXM"; /* before the first CUDA call */
    char msg[512];
    if (!pl_device_caps()->modeled || pl_device_apply_options(&o, msg, sizeof msg)) {
        if (!pl_device_caps()->modeled)
            fprintf(stderr, "paralab-bench: pp measures on the modeled clock: run build/sim's\n");
        else
            fprintf(stderr, "paralab-bench pp: %d stages, one device each: %s\n", P, msg);
        return 2;
    }
    pl_blocks_config c = pl_blocks_config_make(64, LAYERS);
    float *x = malloc((size_t)BATCH * c.inputs * sizeof *x);
    int *y = malloc(BATCH * sizeof *y);
    if (!x || !y) {
        fprintf(stderr, "paralab-bench pp: out of host memory\n");
        free(x);
        free(y);
        return 1;
    }
    unsigned seed = 12345;
    for (int i = 0; i < BATCH * c.inputs; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)(seed >> 8) / 16777216.0f * 16.0f; /* pixels 0..16, as the digits */
    }
    for (int i = 0; i < BATCH; i++) y[i] = i % c.classes;
    printf("paralab-bench pp: p = %d stages of simulated H100-SXM (modeled clock), m = %d "
           "micro-batches; uniform stages, then the block model (h %d, %d blocks, a batch of %d "
           "in micro-batches of %d rows, AdamW; the mean of %d steps after a warm-up)\n",
           P, M, c.hidden, LAYERS, BATCH, BATCH / M, STEPS);
    printf("%-15s %9s %9s %7s | %9s %9s %7s %10s %8s %8s %9s %8s\n", "schedule", "uniform",
           "formula", "ratio", "bubble", "formula", "ratio", "step us", "vs form", "vs 1f1b",
           "wall ms", "vs 1f1b");
    printf("%-15s %9s %9s %7s | %9s %9s %7s %10s %8s %8s %9s %8s\n", "", "(total)", "(total)", "",
           "(total)", "(total)", "", "(modeled)", "", "", "", "");
    static const pl_pp_kind kinds[] = {PL_PP_1F1B, PL_PP_NAIVE, PL_PP_GPIPE, PL_PP_INTERLEAVED,
                                       PL_PP_ZB_H1};
    double step_1f1b = 0, wall_1f1b = 0;
    int rc = 0;
    for (int i = 0; i < 5; i++) {
        int v = kinds[i] == PL_PP_INTERLEAVED ? 2 : 1;
        pl_pp_schedule s;
        char err[1024];
        if (pl_pp_build(&s, kinds[i], P, M, v, err, sizeof err)) {
            fprintf(stderr, "paralab-bench pp: %s\n", err);
            rc = 1;
            break;
        }
        pp_run u = {.s = &s, .chunks = v}, b = {.s = &s, .chunks = v, .blocks = 1, .x = x, .y = y};
        if (pl_world_run(P, NULL, 60, uniform_rank, &u, err, sizeof err) ||
            pl_world_run(P, NULL, 60, blocks_rank, &b, err, sizeof err)) {
            /* the row says why; the others still run */
            printf("%-15s failed: %s\n", pl_pp_kind_name(kinds[i]), err);
            pl_pp_schedule_free(&s);
            rc = 1;
            continue;
        }
        pl_pp_schedule_free(&s);
        double fi = 0, ft = 0, busy = 0;
        pl_pp_bubble_formula(kinds[i], P, M, v, &fi, &ft);
        for (int q = 0; q < P; q++) busy += b.t.busy[q] / P;
        double predicted = busy / (1 - ft);
        if (kinds[i] == PL_PP_1F1B) {
            step_1f1b = b.t.makespan;
            wall_1f1b = b.wall;
        }
        char name[32];
        snprintf(name, sizeof name, "%s%s", pl_pp_kind_name(kinds[i]), v > 1 ? " v=2" : "");
        printf("%-15s %8.2f%% %8.2f%% %7.3f | %8.2f%% %8.2f%% %7.3f %10.1f %8.3f %8.3f %9.1f "
               "%8.3f\n",
               name, u.t.of_total * 100, ft * 100, ft > 0 ? u.t.of_total / ft : 0,
               b.t.of_total * 100, ft * 100, ft > 0 ? b.t.of_total / ft : 0, b.t.makespan * 1e6,
               predicted > 0 ? b.t.makespan / predicted : 0,
               step_1f1b > 0 ? b.t.makespan / step_1f1b : 0, b.wall * 1e3,
               wall_1f1b > 0 ? b.wall / wall_1f1b : 0);
    }
    printf("\n  bubble: the stages' idle time over p x the step (of the total; formula: "
           "pl_pp_bubble_formula); vs form: the modeled step over the formula's for stages "
           "as busy as these, busy / (1 - formula); wall: this machine's time per step (every "
           "stage a thread on its CPU cores)\n");
    free(x);
    free(y);
    return rc;
}
