/*
 * lab08.h — Lab 08, tensor parallelism: the exercise (the column- and
 * row-parallel linear layers, paralab/tp.h), the training loop every rank
 * runs, and the checks.
 */
#ifndef LAB08_H
#define LAB08_H

#include <stddef.h>

#include "paralab/blocks.h"
#include "paralab/check.h"
#include "paralab/comm.h"
#include "paralab/data.h"
#include "paralab/exercise.h"
#include "paralab/tp.h"
#include "paralab/world.h"

/* The exercise: pl_tp_linear_ops (paralab/tp.h). Exercise 0 is the
 * column-parallel layer (column_forward, column_backward), exercise 1 the
 * row-parallel one (row_forward, row_backward). */
extern const pl_tp_linear_ops lab08_exercise; /* exercise.c: yours */
extern const pl_tp_linear_ops lab08_solution; /* solution.c: the reference */

/* How a run trains. */
typedef struct lab08_config {
    int hidden, layers;    /* the block model: h and L */
    int sequence_parallel; /* --sequence-parallel */
    int batch;             /* every rank sees the whole batch (split by rows under SP) */
    int epochs;            /* passes over the training set */
    int max_steps;         /* stop after this many optimizer steps (0: no limit) */
    float lr;              /* AdamW's, or SGD's */
    int sgd;               /* SGD with momentum 0.9 instead of AdamW (the 10-step check) */
    unsigned long long seed;
    int narrate;          /* pl_step at the teachable points, and the epoch lines */
    int check_replicated; /* compare every rank's LayerNorm parameters after every step */
    int trace_linears;    /* the W1/W2/Wc events of the shards pane */
    const struct pl_check *progress; /* a line every 5 epochs (pl_check_progress), or NULL */
} lab08_config;

/* Collectives by kind, and the bytes a rank sends. */
typedef struct lab08_count {
    unsigned all_reduce, all_gather, reduce_scatter;
    unsigned long long bytes_sent;
} lab08_count;
/* What a run found (filled by rank 0 unless said). */
typedef struct lab08_result {
    int steps;
    double epoch_loss[1000];    /* mean loss of each epoch */
    double train_acc, test_acc; /* %, the last epoch */
    double first_loss;          /* the first step's mean loss */
    float *params;              /* the gathered whole model at the end (malloc'd) */
    long nparams;
    unsigned init_hash;    /* FNV-1a of the gathered initial weights */
    int replicated_differ; /* a step after which two ranks' LayerNorm parameters differed */
    /* each rank's collectives in the first step, from the ledger */
    lab08_count first_forward[PL_MAX_RANKS], first_backward[PL_MAX_RANKS];
    double modeled_step;  /* modeled seconds per step (simulated GPUs), rank 0 */
    double measured_step; /* wall seconds per step, rank 0 */
    int todo;             /* an exercise reached PL_TODO() */
} lab08_result;

/* Everything the ranks share. */
typedef struct lab08_run {
    const lab08_config *cfg;
    const pl_tp_linear_ops *impl;
    const pl_digits *data;
    lab08_result *result;
    float *part[PL_MAX_RANKS]; /* scratch: each rank's parameters, for gathering (into rows) */
    /* a row per rank of its parameters (lay.nparams floats, the same on
     * every rank), in each process: its first rank allocates them, the
     * last frees them. Under mpirun (paralab/dist.h) the other processes'
     * rows come to rank 0 by pl_dist_gather_host; in one process it does
     * nothing. */
    float *rows;
    int users;
} lab08_run;

/* The rank function: trains cfg->epochs (or max_steps) on r->size TP ranks. */
int lab08_rank(pl_rank *r);

/* The collectives one training step makes on each of t ranks, by the
 * formula (L blocks and the head, one micro-batch of `rows`): forward
 * (through the loss), backward (with the replicated gradients' sums under
 * SP) and both; bytes on a ring (paralab/collectives.h). */
typedef struct lab08_expect {
    lab08_count forward, backward, total;
} lab08_expect;
lab08_expect lab08_formula(const pl_blocks_config *c, int t, int sp, int rows);
/* 1 when the two are the same. */
int lab08_count_equal(const lab08_count *a, const lab08_count *b);

/* The checks of exercise 0 (column-parallel) and 1 (row-parallel), with
 * training (make check) or without (what lab08 prints at its end). */
void lab08_check(int exercise, const pl_tp_linear_ops *impl, pl_check *c);
void lab08_check_quick(int exercise, const pl_tp_linear_ops *impl, pl_check *c);

#endif
