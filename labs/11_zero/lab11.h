/*
 * lab11.h — Lab 11, ZeRO stages 1-3 (FSDP): the exercise (ZeRO-1's
 * update: reduce-scatter the gradients, update this rank's shard,
 * all-gather the parameters), the training loop every rank runs on the
 * pl_zero engine (paralab/zero.h), and the checks.
 */
#ifndef LAB11_H
#define LAB11_H

#include <stddef.h>

#include "paralab/check.h"
#include "paralab/comm.h"
#include "paralab/data.h"
#include "paralab/exercise.h"
#include "paralab/world.h"
#include "paralab/zero.h"
#include "harness/shared.h"

/* The exercise (exercise.c): stage 1's optimizer step on z, at lr. 0, or
 * -1 with the reason in z->error (PL_TODO_STATUS while TODO). The
 * reference: lab11_zero1_update_solution (solution.c), the engine's
 * pl_zero_update_stage1. */
int lab11_zero1_update(pl_zero *z, float lr);
int lab11_zero1_update_solution(pl_zero *z, float lr);

enum { LAB11_ZERO1, LAB11_EXERCISES };

/* How a run trains: the world's N ranks, one data-parallel group. */
typedef struct lab11_config {
    pl_zero_config zc; /* the model, the stage, B, k, overlap, the optimizer (trace: each rank's) */
    /* stage 1's update (the student's or the reference's); NULL: pl_zero_update */
    int (*update)(pl_zero *z, float lr);
    const char *update_from; /* the narration's words: "your lab11_zero1_update (exercise.c)" */
    int epochs;              /* passes over the training set */
    int max_steps;           /* stop after this many optimizer steps (0: no limit) */
    float lr;                /* AdamW's, or SGD's */
    float clip;              /* --clip-grad-norm: > 0 clips the global norm to it */
    unsigned long long seed;
    int narrate;  /* pl_step at the teachable points, and the epoch lines */
    int evaluate; /* the test set after each epoch (0: the checks' short runs) */
    int compare;  /* narrate's step [4]: the first step beside a stage-0 engine (plain DP) */
    /* the checks: every rank's whole view of the weights after each of the
     * first keep_steps steps (stages 0-2: each rank's replica; stage 3: the
     * ranks' slices put together) into the result */
    int keep_steps;
    const struct pl_check *progress; /* a line every 5 epochs (pl_check_progress), or NULL */
} lab11_config;

#define LAB11_KEEP_MAX 10

/* What a run found (rank 0 fills it unless said). */
typedef struct lab11_result {
    int steps;
    double epoch_loss[1000];    /* mean loss of each epoch */
    double train_acc, test_acc; /* %, the last epoch */
    double first_loss;          /* the first step's mean loss */
    float *params;              /* the whole model at the end (malloc'd; Ψ floats) */
    long nparams, psi_pad;
    unsigned init_hash; /* FNV-1a of the initial weights */
    float *init;        /* the initial weights (malloc'd; Ψ floats) */
    int todo;           /* the update returned PL_TODO_STATUS (nothing trained) */
    /* keep_steps: step s's weights as rank q holds them, at
     * kept[s][q * nparams ...] (malloc'd; stage 3: the slices, every q the same) */
    float *kept[LAB11_KEEP_MAX];
    int kept_steps;
    /* per rank: floats sent (the ledger's bytes / 4) and collectives called
     * in the first step; and the first step (1-based) where either differs
     * from pl_zero_traffic_of (0: none), with the message */
    unsigned long long sent[PL_MAX_RANKS];
    unsigned calls[PL_MAX_RANKS][PL_NUM_CALLS];
    int traffic_bad_at;
    char traffic_why[768];
    pl_zero_memory mem[PL_MAX_RANKS]; /* each rank's z->mem, measured at create */
    pl_zero_memory formula;           /* pl_zero_memory_of for the run */
    pl_zero_traffic traffic;          /* pl_zero_traffic_of for the run */
    double modeled_step;              /* modeled seconds per step (simulated GPUs), rank 0 */
    double measured_step;             /* wall seconds per step, rank 0 */
    double first_step;                /* the first step's modeled time, rank 0 */
} lab11_result;

/* Everything the ranks share. Under mpirun (paralab/dist.h) each process
 * has its own: a rank writes its own entries, and what rank 0 reads of the
 * other processes' ranks comes to it by pl_dist_gather_host (what every
 * rank reads, by pl_dist_allgather_host); in one process those do nothing.
 * (The checks' kept weights, result->kept, are of one process only.) */
typedef struct lab11_run {
    const lab11_config *cfg;
    const pl_digits *data;
    lab11_result *result;
    pl_lab_shared shared; /* rows: the process's first rank allocates them */
    float *rows;          /* a row per rank: its slices (pl_zero_shard_to_host), Ψ_pad / N */
    long rows_stride;
    float *whole, *whole0;     /* rank 0: Ψ floats, the slices put together (this engine, stage
                                  0's) */
    double loss[PL_MAX_RANKS]; /* each rank's rows' loss, unscaled */
    int right[PL_MAX_RANKS];   /* training rows predicted right, this epoch */
    int test_right[PL_MAX_RANKS];
    int failed[PL_MAX_RANKS]; /* rank 0 could not compute the formulas (the others stop) */
} lab11_run;

/* Fills run for cfg, data and result (its lock initialised). */
void lab11_run_init(lab11_run *run, const lab11_config *cfg, const pl_digits *data,
                    lab11_result *result);

/* The rank function: every rank trains cfg->epochs (or max_steps). */
int lab11_rank(pl_rank *r);

/* The checks with training (make check) or without it (what lab11 prints
 * at its end: one N, a few steps). */
void lab11_check(int exercise, int (*update)(pl_zero *, float), pl_check *c);
void lab11_check_quick(int exercise, int (*update)(pl_zero *, float), pl_check *c);

#endif
