/*
 * lab09.h — Lab 09, pipeline parallelism: the exercise (the GPipe and 1F1B
 * schedules as per-stage lists, paralab/pipeline.h), the training loop
 * every stage runs, and the checks.
 */
#ifndef LAB09_H
#define LAB09_H

#include <stddef.h>

#include "paralab/blocks.h"
#include "paralab/check.h"
#include "paralab/data.h"
#include "paralab/exercise.h"
#include "paralab/pipeline.h"
#include "paralab/pp_blocks.h"
#include "paralab/world.h"
#include "harness/shared.h"

/* Returns the call's non-zero status (pl_pp_push's -1 when a list is
 * full or the stage is not one) from the function it is in. */
#define PL_PP_TRY(call)                                                                            \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_) return rc_;                                                                       \
    } while (0)

/* The exercise. Exercise 0: gpipe; 1: warmup_1f1b; 2: one_f_one_b. Each
 * list function appends stage's operations to s (pl_pp_push; s was made
 * by pl_pp_schedule_init for s->stages, s->micro_batches and one chunk)
 * and returns 0, or a non-zero status (PL_TODO_STATUS while TODO). */
typedef struct lab09_impl {
    int (*gpipe)(pl_pp_schedule *s, int stage);
    /* the forwards stage runs before 1F1B's steady state */
    int (*warmup_1f1b)(int p, int m, int stage);
    /* warmup: warmup_1f1b's answer for this stage */
    int (*one_f_one_b)(pl_pp_schedule *s, int stage, int warmup);
} lab09_impl;
extern const lab09_impl lab09_exercise; /* exercise.c: yours */
extern const lab09_impl lab09_solution; /* solution.c: the reference */

enum { LAB09_GPIPE, LAB09_WARMUP, LAB09_1F1B, LAB09_EXERCISES };

/* The lists of kind (PL_PP_GPIPE or PL_PP_1F1B) for p stages and m
 * micro-batches from impl's functions, every stage's, into s (initialised
 * here; free it with pl_pp_schedule_free): 0; PL_TODO_STATUS when a
 * function is TODO; or -1 with a message (a function failed, or returned
 * a warm-up count outside 0..m). Not validated. */
int lab09_lists(const lab09_impl *impl, pl_pp_kind kind, int p, int m, pl_pp_schedule *s, char *err,
                size_t cap);

/* The first place where stage r's 1F1B list (n ops) differs from 1F1B's
 * order for p stages and m micro-batches: its index, or -1 when it is
 * that order; *want: the op 1F1B has there (kind PL_PP_NUM_OPS past its
 * end). */
int lab09_1f1b_mismatch(const pl_pp_op *ops, int n, int p, int m, int r, pl_pp_op *want);

/* How a run trains: p = the world's ranks, one stage each. */
typedef struct lab09_config {
    int hidden, layers;             /* the block model: h and L */
    int batch, micro_batches;       /* B and m: micro-batches of B / m rows */
    int chunks;                     /* v */
    pl_pp_kind kind;                /* what schedule is (for the narration) */
    const pl_pp_schedule *schedule; /* the lists every stage runs */
    const char *schedule_from;      /* "your 1F1B lists" ...: the narration's words */
    int epochs;                     /* passes over the training set */
    int max_steps;                  /* stop after this many optimizer steps (0: no limit) */
    float lr;                       /* AdamW's, or SGD's */
    int sgd;                        /* SGD with momentum 0.9 instead of AdamW (the checks) */
    float clip;                     /* --clip-grad-norm: > 0 clips the global norm to it */
    unsigned long long seed;
    int narrate;                     /* pl_step at the teachable points, and the epoch lines */
    int keep_grads;                  /* the first step's gradients, gathered, into the result */
    int evaluate;                    /* the test set after each epoch (0: the checks' short runs) */
    const struct pl_check *progress; /* a line every 5 epochs (pl_check_progress), or NULL */
} lab09_config;

/* What a run found (rank 0 fills it unless said). */
typedef struct lab09_result {
    int steps;
    double epoch_loss[1000];    /* mean loss of each epoch */
    double train_acc, test_acc; /* %, the last epoch */
    double first_loss;          /* the first step's mean loss */
    double first_norm;          /* the first step's global gradient norm (before clipping) */
    float *params;              /* the gathered whole model at the end (malloc'd) */
    float *grads;               /* keep_grads: the first step's gradients, gathered (malloc'd) */
    long nparams;
    unsigned init_hash; /* FNV-1a of the gathered initial weights */
    /* per stage, the first step: the activations it held at most (bytes:
     * counted, and measured from the device's memory in use), one
     * micro-batch's set of its chunk 0, the sets at once */
    size_t peak_bytes[PL_PP_MAX_STAGES], measured_peak[PL_PP_MAX_STAGES];
    size_t acts_bytes[PL_PP_MAX_STAGES];
    int peak_in_flight[PL_PP_MAX_STAGES];
    pl_pp_timing first;   /* the first step's timing (modeled clock; host clock on GPUs) */
    double modeled_step;  /* modeled seconds per step (simulated GPUs), rank 0 */
    double measured_step; /* wall seconds per step, rank 0 */
} lab09_result;

/* Everything the stages share. Under mpirun (paralab/dist.h) each process
 * has its own: a stage writes its own entries, and what rank 0 reads of the
 * other processes' stages comes to it by pl_dist_gather_host (what every
 * stage reads, by pl_dist_allgather_host); in one process those do nothing. */
typedef struct lab09_run {
    const lab09_config *cfg;
    const pl_digits *data;
    lab09_result *result;
    pl_lab_shared shared; /* the rows below: the process's first stage allocates them */
    /* a row per stage: its parameters or gradients (its chunks one after
     * another), of rows_stride floats, the most any stage holds; rank 0
     * writes them into the gathered model */
    float *rows;
    long rows_stride;
    pl_pp_record *recs; /* a row per stage: its op records of the first step */
    int recs_stride;
    const pl_pp_record *rec[PL_MAX_RANKS]; /* into recs (set with it) */
    int nrec[PL_MAX_RANKS];
    double loss[PL_MAX_RANKS];                         /* the step's loss sum (the last stage's) */
    int right[PL_MAX_RANKS], test_right[PL_MAX_RANKS]; /* the epoch's (the last stage's) */
} lab09_run;

/* Fills run for cfg, data and result (its lock initialised). */
void lab09_run_init(lab09_run *run, const lab09_config *cfg, const pl_digits *data,
                    lab09_result *result);

/* The rank function: stage r->rank of r->size trains cfg->epochs (or
 * max_steps). */
int lab09_rank(pl_rank *r);

/* The checks of exercise i with training on the block model (make check)
 * or without it (what lab09 prints at its end). */
void lab09_check(int exercise, const lab09_impl *impl, pl_check *c);
void lab09_check_quick(int exercise, const lab09_impl *impl, pl_check *c);

#endif
