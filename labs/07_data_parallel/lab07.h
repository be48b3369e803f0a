/*
 * lab07.h — Lab 07, data parallelism: the exercise (shard the batch,
 * synchronise the gradients), the training loop every rank runs, and the
 * checks.
 */
#ifndef LAB07_H
#define LAB07_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "paralab/check.h"
#include "paralab/comm.h"
#include "paralab/data.h"
#include "paralab/exercise.h"
#include "paralab/mlp.h"
#include "paralab/world.h"

typedef struct lab07_impl {
    /* Exercise 1: rank `rank` of n takes the contiguous rows
     * [*first, *first + *count) of a global batch of B samples; n divides B
     * and every rank gets B / n. Returns 0 (PL_TODO_STATUS if not done). */
    int (*shard_batch)(int B, int n, int rank, int *first, int *count);
    /* Exercise 2: make grad (count floats on this rank's device) the
     * average over every rank of c — all-reduce (sum), then divide by the
     * rank count — enqueued on `stream`. Returns PL_COMM_OK or the first
     * error (PL_TODO_STATUS if not done). */
    int (*sync_gradients)(pl_comm *c, float *grad, size_t count, cudaStream_t stream);
} lab07_impl;

extern const lab07_impl lab07_exercise; /* exercise.c: yours */
extern const lab07_impl lab07_solution; /* solution.c: the reference */

/* How a run trains. */
typedef struct lab07_config {
    int batch;     /* global batch; the rank count divides it */
    int epochs;    /* passes over the training set */
    int max_steps; /* stop after this many optimizer steps (0: no limit) */
    int sgd;       /* 0: AdamW */
    float lr;
    int bucket_floats; /* gradient bucket size */
    int overlap;       /* all-reduce each bucket on a comm stream during backward */
    unsigned long long seed;
    int narrate;                     /* pl_step at the teachable points, and the epoch lines */
    int check_replicas;              /* compare every rank's parameters after every step */
    const struct pl_check *progress; /* a line every 5 epochs (pl_check_progress), or NULL */
} lab07_config;

/* What a run found (filled by rank 0 unless said). */
typedef struct lab07_result {
    int steps;
    double epoch_loss[1000];    /* global mean loss of each epoch */
    double train_acc, test_acc; /* %, the last epoch */
    float *params;              /* rank 0's parameters at the end (malloc'd) */
    long nparams;
    int replicas_differ;  /* a step after which two ranks' parameters differed */
    double modeled_step;  /* modeled seconds per step (simulated GPUs), rank 0 */
    double measured_step; /* wall seconds per step, rank 0 */
    char error[512];
    int todo; /* the exercise reached PL_TODO() */
} lab07_result;

/* Everything the ranks share. */
typedef struct lab07_run {
    const lab07_config *cfg;
    const lab07_impl *impl;
    const pl_digits *data;
    lab07_result *result;
    /* scratch for comparing replicas */
    float *replica[PL_MAX_RANKS];
    /* each replica's hash: how rank 0 compares a replica of another process
     * (under mpirun, paralab/dist.h), whose memory it cannot read */
    unsigned replica_hash[PL_MAX_RANKS];
} lab07_run;

/* The rank function: trains cfg->epochs (or max_steps) on r->size ranks. */
int lab07_rank(pl_rank *r);

/* The checks of exercise 0 (shard_batch) and 1 (sync_gradients, and the
 * training it makes). data: NULL to load data/digits.csv. */
void lab07_check(int exercise, const lab07_impl *impl, pl_check *c);
/* The same without the training runs (what lab07 prints at its end). */
void lab07_check_quick(int exercise, const lab07_impl *impl, pl_check *c);

#endif
