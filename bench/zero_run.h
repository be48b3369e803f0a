/* zero_run.h — one run of the ZeRO engine (paralab/zero.h) on N simulated
 * ranks, measured: what paralab-bench zero and dp share (bench/zero_run.c). */
#ifndef BENCH_ZERO_RUN_H
#define BENCH_ZERO_RUN_H

#include "paralab/zero.h"

/* What one run measured. Every per-rank figure is checked to be the same
 * on every rank (the ranks are symmetric); `same` says which were not. */
typedef struct bz_result {
    int ok;
    char error[512];
    int n;
    long psi, psi_pad;  /* the engine's Ψ and Ψ_pad */
    pl_zero_memory mem; /* rank 0's, measured (z->mem) */
    int mem_differs;    /* some rank measured other bytes */
    /* steps > 0: the measured step, after a warm-up step, every rank's
     * clock started at one modeled instant */
    double step;               /* the common start to the last rank's end of pl_zero_step (the
                                  engine's step_end then: forward, backward, the reductions) */
    double whole;              /* ... and of pl_zero_update (its step_end: the whole step) */
    unsigned long long floats; /* floats rank 0 sent in the step and update (its ledger / 4) */
    int floats_differ;         /* some rank sent another count */
    unsigned calls;            /* rank 0's collectives in them (barriers left out) */
    unsigned by_call[3];       /* of them all-reduces, reduce-scatters, all-gathers */
    double wall;               /* this machine's seconds for the run */
} bz_result;

/* Runs cfg on n ranks (rank r on device r): pl_zero_create and, with
 * steps = 1, a warm-up step and one measured step (pl_zero_step and
 * pl_zero_update) on x [B, inputs], y [B] (host; rank r its rows). steps
 * = 0: create only (memory). 0, or -1 with out->error. */
int bz_run(const pl_zero_config *cfg, int n, int steps, const float *x, const int *y,
           bz_result *out);

/* Random inputs for the model's B rows (pixels 0..16, as the digits) and
 * labels i % classes: the modeled times do not depend on them. Host
 * allocations the caller frees; -1 when out of memory. */
int bz_data(const pl_blocks_config *c, int batch, float **x, int **y);

#endif
