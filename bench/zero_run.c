/*
 * zero_run.c — one run of the ZeRO engine on N simulated ranks, measured
 * (bench/zero_run.h): the memory each rank's engine measured, and one
 * optimizer step after a warm-up step on the modeled clock, every rank's
 * clock started at the same modeled instant (the latest of their streams
 * after the warm-up, as paralab-bench hybrid aligns them), with what each
 * rank's ledger counted through the engine's communicator in it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "paralab/clock.h"
#include "paralab/cuda_check.h"
#include "paralab/device.h"
#include "paralab/world.h"
#include "zero_run.h"

enum { NMAX = 8 };

typedef struct {
    pl_zero_config cfg;
    int steps;
    const float *x;
    const int *y;
    pl_zero_memory mem[NMAX];
    long psi, psi_pad;
    double t0[NMAX], start;
    double step[NMAX], end[NMAX];
    unsigned long long floats[NMAX];
    unsigned calls, by_call[3];
} zrun;

static const float LR = 1e-3f;

static int rank_fn(pl_rank *r)
{
    zrun *u = r->arg;
    pl_zero z;
    float *X = NULL;
    int *y = NULL, rc = 1, me = r->rank;
    memset(&z, 0, sizeof z);
    if (pl_zero_create(&z, &u->cfg, r->comm, 7, r->stream, r->error, sizeof r->error)) return 1;
    u->mem[me] = z.mem;
    u->psi = z.psi, u->psi_pad = z.psi_pad;
    if (!u->steps) {
        rc = 0;
        goto out;
    }
    int rows = u->cfg.batch / r->size, inputs = u->cfg.model.inputs;
    PL_RANK_CK(cudaMalloc((void **)&X, (size_t)rows * inputs * sizeof(float)));
    PL_RANK_CK(cudaMalloc((void **)&y, (size_t)rows * sizeof(int)));
    PL_RANK_CK(cudaMemcpy(X, u->x + (size_t)me * rows * inputs,
                          (size_t)rows * inputs * sizeof(float), cudaMemcpyHostToDevice));
    PL_RANK_CK(cudaMemcpy(y, u->y + (size_t)me * rows, (size_t)rows * sizeof(int),
                          cudaMemcpyHostToDevice));
    /* the warm-up step: the optimizer's state, the communicator's buffers */
    if (pl_zero_step(&z, X, y, NULL) || pl_zero_update(&z, LR)) goto engine;
    PL_RANK_CK(cudaStreamSynchronize(r->stream));
    /* the measured step, from one modeled instant on every rank */
    u->t0[me] = pl_device_stream_now(r->stream);
    if (pl_comm_barrier(r->comm)) goto barrier;
    if (me == 0) {
        u->start = 0;
        for (int q = 0; q < r->size; q++)
            if (u->t0[q] > u->start) u->start = u->t0[q];
    }
    if (pl_comm_barrier(r->comm)) goto barrier;
    pl_device_start_clock(u->start);
    pl_ledger before = pl_comm_ledger_own(r->comm);
    if (pl_zero_step(&z, X, y, NULL)) goto engine;
    u->step[me] = z.step_end; /* pl_zero_step's: forward, backward, the reductions */
    if (pl_zero_update(&z, LR)) goto engine;
    PL_RANK_CK(cudaStreamSynchronize(r->stream));
    pl_ledger after = pl_comm_ledger_own(r->comm);
    u->end[me] = z.step_end; /* pl_zero_update's */
    u->floats[me] = (after.bytes_sent - before.bytes_sent) / sizeof(float);
    if (me == 0) {
        static const int kinds[3] = {PL_CALL_ALL_REDUCE, PL_CALL_REDUCE_SCATTER,
                                     PL_CALL_ALL_GATHER};
        u->calls = 0;
        for (int k = 0; k < PL_NUM_CALLS; k++)
            if (k != PL_CALL_BARRIER) u->calls += (unsigned)(after.calls[k] - before.calls[k]);
        for (int k = 0; k < 3; k++)
            u->by_call[k] = (unsigned)(after.calls[kinds[k]] - before.calls[kinds[k]]);
    }
    rc = 0;
    goto out;
engine:
    snprintf(r->error, sizeof r->error, "%.1000s", z.error);
    goto out;
barrier:
    snprintf(r->error, sizeof r->error, "pl_comm_barrier failed");
out:
    cudaStreamSynchronize(r->stream);
    cudaFree(X);
    cudaFree(y);
    pl_zero_destroy(&z);
    return rc;
}

int bz_run(const pl_zero_config *cfg, int n, int steps, const float *x, const int *y,
           bz_result *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    if (n < 1 || n > NMAX) {
        snprintf(out->error, sizeof out->error, "%d ranks: 1 to %d", n, NMAX);
        return -1;
    }
    zrun *u = calloc(1, sizeof *u);
    if (!u) {
        snprintf(out->error, sizeof out->error, "out of host memory");
        return -1;
    }
    u->cfg = *cfg;
    u->steps = steps;
    u->x = x, u->y = y;
    char err[1024];
    double w0 = pl_now();
    if (pl_world_run(n, NULL, 120, rank_fn, u, err, sizeof err)) {
        snprintf(out->error, sizeof out->error, "%.500s", err);
        free(u);
        return -1;
    }
    out->wall = pl_now() - w0;
    out->psi = u->psi, out->psi_pad = u->psi_pad;
    out->mem = u->mem[0];
    for (int q = 1; q < n; q++)
        if (memcmp(&u->mem[q], &u->mem[0], sizeof u->mem[0])) out->mem_differs = 1;
    if (steps) {
        double end = 0, step = 0;
        for (int q = 0; q < n; q++) {
            if (u->end[q] > end) end = u->end[q];
            if (u->step[q] > step) step = u->step[q];
            if (u->floats[q] != u->floats[0]) out->floats_differ = 1;
        }
        out->step = step - u->start;
        out->whole = end - u->start;
        out->floats = u->floats[0];
        out->calls = u->calls;
        memcpy(out->by_call, u->by_call, sizeof out->by_call);
    }
    out->ok = 1;
    free(u);
    return 0;
}

int bz_data(const pl_blocks_config *c, int batch, float **x, int **y)
{
    *x = malloc((size_t)batch * c->inputs * sizeof **x);
    *y = malloc((size_t)batch * sizeof **y);
    if (!*x || !*y) {
        free(*x), free(*y);
        *x = NULL, *y = NULL;
        return -1;
    }
    unsigned s = 12345;
    for (long i = 0; i < (long)batch * c->inputs; i++) {
        s = s * 1664525u + 1013904223u;
        (*x)[i] = (float)(s >> 8) / 16777216.0f * 16.0f; /* pixels 0..16, as the digits */
    }
    for (int i = 0; i < batch; i++) (*y)[i] = i % c->classes;
    return 0;
}
