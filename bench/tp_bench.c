/*
 * tp_bench.c — paralab-bench tp: a training step of the block model
 * (paralab/blocks.h: the default h = 64, f = 256, L = 2; a batch of 64,
 * AdamW) on t = 1, 2, 4 and 8 tensor-parallel ranks of simulated H100s (the
 * H100-SXM preset, whatever SIMT_GPU says), without and with sequence
 * parallelism, as Lab 08 runs it (paralab/tp.h, the reference layers):
 *   - the modeled step time, rank 0's stream from the step's first copy to
 *     the optimizer's end, the mean of STEPS steps after one warm-up step;
 *   - the communication share: the modeled time of rank 0's collectives in
 *     those steps (each collective's trace event: its stream's time when
 *     called to its stream's time when done) over the step's;
 *   - the step against t = 1's, measured in the same run;
 *   - the collectives and bytes rank 0 sends per step (its ledger);
 *   - the wall time per step on this machine (every rank's thread on its
 *     CPU cores: it grows with t where the modeled one shrinks).
 * The data is random: the times do not depend on it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "bench.h"
#include "paralab/blocks.h"
#include "paralab/clock.h"
#include "paralab/cuda_check.h"
#include "paralab/device.h"
#include "paralab/options.h"
#include "paralab/trace.h"
#include "paralab/world.h"

enum { BATCH = 64, STEPS = 4, EVENTS = 1 << 14 };

typedef struct {
    int sp;
    const float *x; /* [BATCH, inputs] */
    const int *y;   /* [BATCH] */
    /* rank 0's */
    double modeled, wall;       /* the STEPS steps, seconds */
    double window[2];           /* their modeled start and end */
    uint64_t calls, bytes_sent; /* the ledger's difference over them */
} tp_run;

static int fail(pl_rank *r, pl_tp *tp, int rc)
{
    if (rc && !r->error[0])
        snprintf(r->error, sizeof r->error, "%s", tp->error[0] ? tp->error : "a step failed");
    return rc;
}

/* One step: the batch to the device, forward, loss, backward, the
 * replicated gradients (SP), AdamW; waits for the stream. */
static int step(pl_rank *r, pl_blocks *m, pl_tp *tp, float *dx, int *dy, const tp_run *run,
                int first)
{
    size_t inputs = (size_t)m->lay.cfg.inputs;
    int rc;
    if ((rc = pl_tp_cuda(tp,
                         cudaMemcpyAsync(dx, run->x + (size_t)first * inputs,
                                         (size_t)tp->local_rows * inputs * sizeof(float),
                                         cudaMemcpyHostToDevice, tp->stream),
                         "cudaMemcpyAsync")) ||
        (rc = pl_tp_cuda(
             tp,
             cudaMemcpyAsync(dy, run->y, BATCH * sizeof(int), cudaMemcpyHostToDevice, tp->stream),
             "cudaMemcpyAsync")) ||
        (rc = pl_blocks_forward(m, &m->acts, tp, NULL, dx, NULL)) ||
        (rc = pl_blocks_loss(m, &m->acts, tp, dy, 1.0f / BATCH)) ||
        (rc = pl_blocks_backward(m, &m->acts, tp, NULL, dx, NULL, NULL)) ||
        (rc = pl_blocks_finish_grads(m, tp)) ||
        (rc = pl_tp_cuda(tp, pl_blocks_adamw(m, 5e-3f, tp->stream), "pl_blocks_adamw")) ||
        (rc = pl_tp_cuda(tp, cudaStreamSynchronize(tp->stream), "cudaStreamSynchronize")))
        return fail(r, tp, rc);
    return 0;
}

static int rank_fn(pl_rank *r)
{
    tp_run *run = r->arg;
    pl_blocks_config c = pl_blocks_default();
    pl_blocks_layout lay;
    pl_blocks_part part = {0, c.layers, 1, 1, r->size, r->rank};
    pl_blocks m;
    pl_tp tp;
    memset(&m, 0, sizeof m);
    float *dx = NULL;
    int *dy = NULL, status = 1;
    if (pl_blocks_layout_make(&lay, &c, part, r->error, sizeof r->error) ||
        pl_tp_init(&tp, r->comm, run->sp, BATCH, r->stream, r->error, sizeof r->error))
        return 1;
    int R = tp.local_rows;
    PL_RANK_CK(pl_blocks_create(&m, &lay, BATCH, R, 0));
    PL_RANK_CK(cudaMalloc((void **)&dx, (size_t)R * c.inputs * sizeof(float)));
    PL_RANK_CK(cudaMalloc((void **)&dy, BATCH * sizeof(int)));
    int first = run->sp ? r->rank * R : 0;
    if (step(r, &m, &tp, dx, dy, run, first)) goto out; /* warm-up: the engine's buffers */
    pl_ledger before = pl_comm_ledger(r->comm);
    double m0 = pl_device_stream_now(r->stream), t0 = pl_now();
    for (int s = 0; s < STEPS; s++)
        if (step(r, &m, &tp, dx, dy, run, first)) goto out;
    if (r->rank == 0) {
        pl_ledger after = pl_comm_ledger(r->comm);
        run->wall = pl_now() - t0;
        run->window[0] = m0;
        run->window[1] = pl_device_stream_now(r->stream);
        run->modeled = run->window[1] - m0;
        run->calls = 0;
        for (int k = 0; k < PL_NUM_CALLS; k++)
            if (k != PL_CALL_BARRIER) run->calls += after.calls[k] - before.calls[k];
        run->bytes_sent = after.bytes_sent - before.bytes_sent;
    }
    status = 0;
out:
    cudaStreamSynchronize(r->stream);
    pl_blocks_destroy(&m);
    cudaFree(dx);
    cudaFree(dy);
    return status;
}

/* Runs STEPS steps on t ranks; *comm: rank 0's modeled time in collectives
 * during them. */
static int measure(int t, int sp, const float *x, const int *y, tp_run *run, double *comm)
{
    *run = (tp_run){.sp = sp, .x = x, .y = y};
    pl_trace *trace = pl_trace_create(t, EVENTS, PL_TRACE_DROP);
    pl_event *ev = malloc((size_t)t * EVENTS * sizeof *ev);
    if (!trace || !ev) {
        fprintf(stderr, "paralab-bench tp: out of host memory\n");
        pl_trace_destroy(trace);
        free(ev);
        return -1;
    }
    char err[1024];
    int rc = pl_world_run_traced(t, NULL, 60, trace, rank_fn, run, err, sizeof err);
    if (rc) fprintf(stderr, "paralab-bench tp: t=%d%s: %s\n", t, sp ? " SP" : "", err);
    size_t n = rc ? 0 : pl_trace_drain(trace, ev, (size_t)t * EVENTS);
    if (!rc && pl_trace_dropped(trace, 0)) {
        fprintf(stderr, "paralab-bench tp: t=%d: rank 0's trace overflowed (%llu events lost)\n", t,
                (unsigned long long)pl_trace_dropped(trace, 0));
        rc = -1;
    }
    *comm = 0;
    for (size_t i = 0; i < n; i++)
        if (ev[i].rank == 0 && ev[i].kind == PL_EV_COLLECTIVE &&
            ev[i].modeled_start >= run->window[0] && ev[i].modeled_end <= run->window[1])
            *comm += ev[i].modeled_end - ev[i].modeled_start;
    pl_trace_destroy(trace);
    free(ev);
    return rc ? -1 : 0;
}

int bench_tp(int repeat)
{
    (void)repeat;
    pl_options o;
    pl_options_defaults(&o, 8);
    o.hw = "H100-SXM"; /* before the first CUDA call: the preset is read when the runtime starts */
    char msg[512];
    pl_hw_model hw;
    if (!pl_device_caps()->modeled || pl_device_apply_options(&o, msg, sizeof msg) ||
        pl_device_model(&hw)) {
        if (!pl_device_caps()->modeled)
            fprintf(stderr, "paralab-bench: tp models the step on simulated GPUs: run "
                            "build/sim's\n");
        else
            fprintf(stderr, "paralab-bench tp: 8 ranks, one device each: %s\n", msg);
        return 2;
    }
    pl_blocks_config c = pl_blocks_default();
    float *x = malloc((size_t)BATCH * c.inputs * sizeof *x);
    int *y = malloc(BATCH * sizeof *y);
    if (!x || !y) {
        fprintf(stderr, "paralab-bench tp: out of host memory\n");
        return 1;
    }
    unsigned s = 12345;
    for (int i = 0; i < BATCH * c.inputs; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)(s >> 8) / 16777216.0f * 16.0f; /* pixels 0..16, as the digits */
    }
    for (int i = 0; i < BATCH; i++) y[i] = i % c.classes;
    printf("paralab-bench tp: the block model (h %d, f %d, %d blocks, %ld parameters), a batch of "
           "%d, AdamW, on t tensor-parallel ranks of simulated %s (modeled clock); the mean of %d "
           "steps after a warm-up\n",
           c.hidden, c.ffn, c.layers, pl_blocks_count(&c), BATCH, hw.name, STEPS);
    printf("%-6s %12s %10s %10s %12s %12s %13s\n", "t", "step us", "comm us", "comm %", "vs t=1",
           "colls/step", "KiB sent/step");
    static const int ts[] = {1, 2, 4, 8};
    double t1 = 0, wall[2][4] = {{0}};
    int rc = 0;
    for (int sp = 0; sp < 2 && !rc; sp++)
        for (int i = sp; i < 4; i++) { /* t = 1 with SP is t = 1 */
            tp_run run;
            double comm;
            if (measure(ts[i], sp, x, y, &run, &comm)) {
                rc = 1;
                break;
            }
            double st = run.modeled / STEPS;
            if (i == 0) t1 = st;
            wall[sp][i] = run.wall / STEPS;
            char name[16];
            snprintf(name, sizeof name, "%d%s", ts[i], sp ? " SP" : "");
            printf("%-6s %12.1f %10.1f %9.1f%% %11.2fx %12.1f %13.1f\n", name, st * 1e6,
                   comm / STEPS * 1e6, st > 0 ? 100 * comm / run.modeled : 0, t1 > 0 ? st / t1 : 0,
                   (double)run.calls / STEPS, (double)run.bytes_sent / STEPS / 1024);
        }
    if (!rc) {
        printf("\n  comm: rank 0's collectives on its stream, their modeled time; vs t=1: the "
               "modeled step over t = 1's\n");
        printf("  wall time per step on this machine's CPU (every rank a thread):");
        for (int sp = 0; sp < 2; sp++)
            for (int i = sp; i < 4; i++)
                printf(" t=%d%s %.1f ms%s", ts[i], sp ? " SP" : "", wall[sp][i] * 1e3,
                       sp == 1 && i == 3 ? "\n" : ",");
    }
    free(x);
    free(y);
    return rc;
}
