/*
 * lab10.h — Lab 10, hybrid (3D) parallelism: the exercise (a rank's
 * coordinates on the device mesh, the TP, DP and PP groups, when the DP
 * reduction fires in a pipeline schedule), the training loop every rank
 * runs (paralab/hybrid.h), and the checks.
 */
#ifndef LAB10_H
#define LAB10_H

#include <stddef.h>

#include "paralab/check.h"
#include "paralab/comm.h"
#include "paralab/data.h"
#include "paralab/exercise.h"
#include "paralab/hybrid.h"
#include "paralab/mesh.h"
#include "paralab/pipeline.h"
#include "paralab/world.h"
#include "harness/shared.h"

/* The exercise. 0: coords; 1: make_groups; 2: dp_after. Each returns 0 (a
 * count for dp_after), or a non-zero status (PL_TODO_STATUS while TODO). */
typedef struct lab10_impl {
    /* rank -> (dp, pp, tp) on m, in m->order: 0, or -1 for a rank outside
     * 0..m->size - 1 */
    int (*coords)(const pl_mesh *m, int rank, pl_mesh_coord *c);
    /* collective over world (m->size ranks): this rank's TP, DP and PP
     * groups by pl_comm_split, its rank in each its coordinate on the axis */
    int (*make_groups)(pl_comm *world, const pl_mesh *m, pl_mesh_groups *g);
    /* the index of the op in stage's list after which the DP reduction fires */
    int (*dp_after)(const pl_pp_schedule *s, int stage);
} lab10_impl;
extern const lab10_impl lab10_exercise; /* exercise.c: yours */
extern const lab10_impl lab10_solution; /* solution.c: the reference */

enum { LAB10_COORDS, LAB10_GROUPS, LAB10_DP_AFTER, LAB10_EXERCISES };

/* The first rank whose coordinates impl->coords gets wrong on m: -1 when
 * none (and 0 returned); else the rank, with a message in err naming the
 * rank, what coords said and what the mesh has (PL_TODO_STATUS returned
 * when coords is TODO, -1 otherwise). */
int lab10_coords_mismatch(const lab10_impl *impl, const pl_mesh *m, char *err, size_t cap);

/* Makes this rank's groups with impl->make_groups, tags them with their
 * axes (pl_comm_set_group) and checks them against the mesh
 * (pl_hybrid_check_groups): 0; PL_TODO_STATUS (nothing made); or -1 with
 * a message in err: the groups made are left in g when only the check
 * refused them (the caller frees them with every rank:
 * pl_mesh_groups_free is collective), freed when make_groups failed.
 * Collective over world. */
int lab10_groups(const lab10_impl *impl, pl_comm *world, const pl_mesh *m, pl_mesh_groups *g,
                 char *err, size_t cap);

/* How a run trains: the world's dp tp pp ranks. */
typedef struct lab10_config {
    pl_hybrid_config hc;            /* the model, the degrees, the order, B, m, v, SP */
    pl_pp_kind kind;                /* what schedule is (for the narration) */
    const pl_pp_schedule *schedule; /* the lists every stage runs */
    const lab10_impl *groups;       /* whose coords and make_groups make the groups */
    int (*dp_after)(const pl_pp_schedule *s, int stage);   /* whose dp_after */
    const char *coords_from, *groups_from, *dp_after_from; /* the narration's words */
    int epochs;                                            /* passes over the training set */
    int max_steps; /* stop after this many optimizer steps (0: no limit) */
    float lr;      /* AdamW's, or SGD's */
    int sgd;       /* SGD with momentum 0.9 instead of AdamW (the checks) */
    float clip;    /* --clip-grad-norm: > 0 clips the global norm to it */
    unsigned long long seed;
    int narrate;                     /* pl_step at the teachable points, and the epoch lines */
    int keep_grads;                  /* the first step's gradients, gathered, into the result */
    int evaluate;                    /* the test set after each epoch (0: the checks' short runs) */
    int audit;                       /* after every step: replicas and bytes per group checked */
    const struct pl_check *progress; /* a line every 5 epochs (pl_check_progress), or NULL */
} lab10_config;

/* What one step sent, by group, on one rank: its own ledger's deltas. */
typedef struct lab10_bytes {
    unsigned long long tp, dp, pp; /* bytes this rank sent on each group */
    unsigned tp_calls, dp_calls, pp_sends;
} lab10_bytes;

/* What a run found (rank 0 fills it unless said). */
typedef struct lab10_result {
    int steps;
    double epoch_loss[1000];    /* mean loss of each epoch */
    double train_acc, test_acc; /* %, the last epoch */
    double first_loss;          /* the first step's mean loss */
    double first_norm;          /* the first step's global gradient norm (before clipping) */
    float *params;              /* the gathered whole model at the end (malloc'd) */
    float *grads;               /* keep_grads: the first step's gradients, gathered (malloc'd) */
    long nparams;
    unsigned init_hash; /* FNV-1a of the gathered initial weights */
    /* audit (and the first step always): the first step after which the DP
     * replicas of a (pp, tp) position differ (0: none), and the message */
    int replicas_differ_at;
    char replicas_why[512];
    /* audit: the first step whose bytes on a group differ from the
     * formulas (0: none), and the message */
    int traffic_bad_at;
    char traffic_why[512];
    /* per world rank, the first step: the DP reduction, the bytes sent */
    int dp_after[PL_MAX_RANKS], dp_fired[PL_MAX_RANKS], dp_buckets[PL_MAX_RANKS];
    double dp_start[PL_MAX_RANKS], dp_end[PL_MAX_RANKS];
    lab10_bytes first_bytes[PL_MAX_RANKS];
    unsigned part_hash[PL_MAX_RANKS]; /* each rank's own parameters after the first step */
    double modeled_step;              /* modeled seconds per step (simulated GPUs), rank 0 */
    double measured_step;             /* wall seconds per step, rank 0 */
} lab10_result;

/* Everything the ranks share. Under mpirun (paralab/dist.h) each process
 * has its own: a rank writes its own entries, and what rank 0 reads of the
 * other processes' ranks comes to it by pl_dist_gather_host (what every
 * rank reads, by pl_dist_allgather_host); in one process those do nothing. */
typedef struct lab10_run {
    const lab10_config *cfg;
    const pl_digits *data;
    lab10_result *result;
    pl_lab_shared shared; /* the rows below: the process's first rank allocates them */
    /* a row per rank: its parameters or gradients (its chunks one after
     * another), of rows_stride floats, the most any rank holds; rank 0
     * writes the DP-0 ranks' rows into the gathered model */
    float *rows;
    long rows_stride;
    pl_pp_record *recs; /* a row per rank: its op records of the first step */
    int recs_stride;    /* the most ops a stage's list has */
    /* scratch the ranks share between barriers */
    float *whole;
    unsigned hash[PL_MAX_RANKS];
    lab10_bytes bytes[PL_MAX_RANKS];
    double loss[PL_MAX_RANKS];
    int right[PL_MAX_RANKS], test_right[PL_MAX_RANKS];
    pl_mesh_coord coord[PL_MAX_RANKS];
    int members[PL_MAX_RANKS][3][PL_MAX_RANKS]; /* each rank's groups (world ranks): tp, dp, pp */
    const pl_pp_record *rec[PL_MAX_RANKS];      /* into recs */
    int nrec[PL_MAX_RANKS];
    lab10_bytes eval_bytes[PL_MAX_RANKS]; /* one forward pass (step [2]) */
    float *part[PL_MAX_RANKS];            /* each rank's own parameters (into rows) */
    long part_n[PL_MAX_RANKS];
    int bad[PL_MAX_RANKS]; /* its groups were refused */
} lab10_run;

/* Fills run for cfg, data and result (its lock initialised). */
void lab10_run_init(lab10_run *run, const lab10_config *cfg, const pl_digits *data,
                    lab10_result *result);

/* The rank function: every rank of the mesh trains cfg->epochs (or
 * max_steps). */
int lab10_rank(pl_rank *r);

/* The checks of exercise i with training (make check) or without it (what
 * lab10 prints at its end). */
void lab10_check(int exercise, const lab10_impl *impl, pl_check *c);
void lab10_check_quick(int exercise, const lab10_impl *impl, pl_check *c);

#endif
