/*
 * paralab/hybrid.h — 3D parallelism (core/parallel/hybrid.c): the block
 * model (paralab/blocks.h) trained with data, tensor and pipeline
 * parallelism at once, on one device mesh (paralab/mesh.h). What Lab 10
 * teaches, and paralab-bench hybrid measures.
 *
 * The world's dp * tp * pp ranks are laid out on the mesh (Megatron-LM's
 * order by default, picotron's on request); each rank belongs to one TP
 * group, one PP group and one DP group (their communicators: pl_mesh_split,
 * or a caller's own, checked against the mesh: pl_hybrid_check_groups). A
 * rank at (dp d, pp r, tp i) holds
 *   - stage r of the pipeline: the blocks pl_pp_split gives virtual stages
 *     c p + r (Lab 09's cut; the input layer on stage 0, the head on p - 1),
 *   - TP shard i of each of them: Megatron's column- and row-parallel
 *     layers (Lab 08's: W1 by columns, W2 by rows, the head's classes by
 *     columns), the TP collectives on its TP group,
 *   - a replica of both for DP replica d: the global batch of B rows is cut
 *     into dp shards of B / dp contiguous rows (replica d: rows
 *     [d B/dp, (d+1) B/dp)), and each replica's into m micro-batches of
 *     B / (dp m) rows, as Lab 07 shards and Lab 09 cuts.
 * One optimizer step (pl_hybrid_step), on every rank:
 *   1. the pipeline schedule on the PP group (paralab/pp_exec.h: activations
 *      and gradients between the ranks at the same (dp, tp) of neighbouring
 *      stages; each F and backward runs its TP collectives on the TP
 *      group), the loss of each micro-batch scaled by 1 / B (the global
 *      batch), so the step's gradient is the mean over the global batch;
 *   2. right after the op at index dp_after of the stage's list (the last
 *      op that writes weight gradients: pl_hybrid_dp_after; Megatron-LM
 *      enables its gradient sync for the last micro-batch's backward, so a
 *      stage whose schedule has no warm-up reduces too): the replicated
 *      gradients summed over the TP group under sequence parallelism
 *      (pl_blocks_finish_grads), then the data-parallel reduction —
 *      each chunk's gradient buffer all-reduced over the DP group in
 *      buckets of bucket_floats from its end (Lab 07's buckets: the last
 *      layers' gradients first), summed (each replica's gradient is already
 *      scaled by 1 / B, so the sum is the global mean). Once per step, on
 *      every stage, at different times: the last stage finishes its
 *      backward first;
 *   3. the optimizer (pl_hybrid_adamw / _sgd) on every rank's part: the DP
 *      replicas of each (pp, tp) position hold the same bits after every
 *      step (the ring all-reduce gives every member the same sum).
 * Collectives of one step, per rank (the ring volumes of
 * paralab/collectives.h; pl_hybrid_traffic):
 *   TP: Lab 08's formula per micro-batch for the blocks the stage holds
 *       (and the head's and input layer's where it holds them);
 *   PP: Lab 09's: one activation [B / (dp m), h] forward and one gradient
 *       backward per micro-batch and boundary: 2 m v sends on inner stages;
 *   DP: one all-reduce of the part's gradients: 2 (dp - 1) / dp of its
 *       bytes per rank (the group's members together: 2 (dp - 1) times).
 * Each group's communicator is tagged with its axis (pl_comm_set_group), so
 * the trace tells TP, DP and PP traffic apart, and each keeps its own
 * ledger (pl_comm_ledger_own).
 *
 * Sources: Narayanan et al., "Efficient Large-Scale Language Model
 * Training on GPU Clusters Using Megatron-LM", SC21 (PTD-P, section 3);
 * Megatron-LM megatron/core/parallel_state.py (the groups) and
 * pipeline_parallel/schedules.py (the gradient sync of the last
 * micro-batch); picotron (process_group_manager.py); the Ultra-Scale
 * Playbook, "5D parallelism". Notes: shared/REFERENCES-PARALLEL.md,
 * "3D parallelism".
 *
 * Errors: functions return 0 or -1 with the reason in h->error (or err);
 * nothing here prints.
 */
#ifndef PARALAB_HYBRID_H
#define PARALAB_HYBRID_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "paralab/blocks.h"
#include "paralab/comm.h"
#include "paralab/mesh.h"
#include "paralab/pipeline.h"
#include "paralab/pp_blocks.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pl_hybrid_config {
    pl_blocks_config model; /* h and L (pl_blocks_config_make) */
    int dp, tp, pp;         /* the degrees: dp * tp * pp ranks */
    pl_mesh_order order;    /* the rank order (PL_MESH_MEGATRON by default) */
    int chunks;             /* v: model chunks per stage (1; 2+ for interleaved) */
    int sequence_parallel;  /* Lab 08's SP inside each stage */
    int batch;              /* B: the global batch, over every replica */
    int micro_batches;      /* m: each replica's batch in m micro-batches */
    size_t bucket_floats;   /* DP bucket: floats per all-reduce (0: a chunk's buffer in one) */
} pl_hybrid_config;

/* Checks c for a world of `world` ranks without making anything. 0, or -1
 * with a message that names the numbers and, where the degrees are the
 * problem, lists the factorisations of the world this model accepts:
 *   "--dp 2 --tp 2 --pp 3: dp x tp x pp = 12 ranks, but there are 8 devices;
 *    valid (dp, tp, pp) for 8 ranks here: (8, 1, 1), (4, 2, 1), ..."
 *   "--tp 3: tensor parallelism must divide the widths h = 64 and f = 256
 *    (t can be 1, 2, 4, 8 ...); valid (dp, tp, pp) ..."
 *   "--pp 4: L = 2 blocks cannot fill 4 stages of 1 chunk (each virtual
 *    stage needs a block: --layers 4 at least); valid (dp, tp, pp) ..."
 *   "--batch 64: 64 rows do not split into dp = 3 replicas of m = 8
 *    micro-batches (B must be a multiple of dp m = 24)"
 * and SP's rule (the micro-batch's rows divide by t). */
int pl_hybrid_check(const pl_hybrid_config *c, int world, char *err, size_t cap);

/* The factorisations (dp, tp, pp) of n ranks that pl_hybrid_check accepts
 * with c's other fields (c's own dp, tp, pp are ignored), dp descending,
 * then tp descending: each into out[i] = {dp, tp, pp} for i < max. Returns
 * how many there are (may exceed max). */
int pl_hybrid_factorisations(const pl_hybrid_config *c, int n, int (*out)[3], int max);
/* "(8, 1, 1), (4, 2, 1) or (2, 2, 2)": the same as text ("none" if none). */
void pl_hybrid_factorisations_str(const pl_hybrid_config *c, int n, char *buf, size_t cap);

/* 0 when g's three communicators hold exactly the ranks mesh m puts in
 * `rank`'s TP, DP and PP groups, each in coordinate order (a member's rank
 * in the communicator is its coordinate on the axis); else -1 with the
 * first difference, e.g.
 *   "rank 2's DP group is {2, 6}; the megatron mesh (dp 2, tp 2, pp 2)
 *    puts rank 2 in the DP group {0, 2}"
 * (a NULL communicator is "missing"). Local: no communication. */
int pl_hybrid_check_groups(const pl_mesh *m, int rank, const pl_mesh_groups *g, char *err,
                           size_t cap);

/* The index in stage's list of s after which the DP reduction fires: its
 * last op that writes weight gradients (BW, or W when the backward is
 * split). -1 for a stage out of range or a list with none. (Lab 10's
 * exercise asks for the same.) */
int pl_hybrid_dp_after(const pl_pp_schedule *s, int stage);

/* One rank's share of a hybrid run. */
typedef struct pl_hybrid {
    pl_hybrid_config cfg;
    pl_mesh mesh;
    pl_mesh_coord coord; /* this rank's */
    int rank;            /* in the world */
    pl_mesh_groups groups;
    int own_groups;  /* made here by pl_mesh_split (freed by pl_hybrid_destroy) */
    pl_pp_blocks pp; /* this rank's stage, its TP shard inside (pp.tp[c].comm: the TP group) */
    int rows;        /* B / dp: this replica's rows per step */
    /* the last step's DP reduction on this rank */
    int dp_after;            /* the op index it fired after (-1: it did not fire) */
    int dp_fired;            /* reductions fired in the last step (0 or 1) */
    int dp_buckets;          /* all-reduces it took */
    double dp_start, dp_end; /* modeled seconds (0 on real GPUs) */
    char error[1024];
} pl_hybrid;

/* Collective over `world` (every rank calls it, from its own thread):
 * checks c (pl_hybrid_check), makes the mesh, the groups — groups' (checked
 * with pl_hybrid_check_groups, not owned) or, with groups NULL,
 * pl_mesh_split's — and this rank's stage and shard (pl_pp_blocks with its
 * TP group), its parameters the one-device model's slices for seed. On the
 * current device and stream. 0, or -1 with the reason in err. */
int pl_hybrid_create(pl_hybrid *h, const pl_hybrid_config *c, pl_comm *world,
                     const pl_mesh_groups *groups, unsigned long long seed, cudaStream_t stream,
                     char *err, size_t cap);
/* Frees the stage, and the groups if they were made here (collective). */
void pl_hybrid_destroy(pl_hybrid *h);

/* One step's forward and backward, as the header says: X [B / dp, inputs]
 * (device) this replica's rows on stage 0, labels [B / dp] (device) on the
 * last stage, NULL elsewhere; s: the schedule for (pp, m, v) every rank
 * runs; dp_after: the op index of this stage's list after which the DP
 * reduction fires (pl_hybrid_dp_after's, or a student's; -1 or out of
 * range: it never fires, and the replicas drift apart). Waits for the
 * stream. *loss_sum (may be NULL): on the last stage the sum of this
 * replica's rows' losses, 0 elsewhere. */
int pl_hybrid_step(pl_hybrid *h, const pl_pp_schedule *s, int dp_after, const float *X,
                   const int *labels, float *loss_sum);

/* The global gradient norm over the whole model (every stage, every TP
 * shard; the replicated parameters counted once; the DP replicas hold the
 * same gradients after the reduction), clipping to max_norm when > 0 (as
 * pl_pp_blocks_clip_grad_norm). Collective over the world. */
int pl_hybrid_clip_grad_norm(pl_hybrid *h, float max_norm, float *norm);
int pl_hybrid_adamw(pl_hybrid *h, float lr);
int pl_hybrid_sgd(pl_hybrid *h, float lr);

/* Forward only (pl_pp_blocks_evaluate) of this replica's rows X, labels;
 * collective over the PP and TP groups. */
int pl_hybrid_evaluate(pl_hybrid *h, const float *X, const int *labels, float *loss_sum);

/* This rank's parameters (grads = 0) or gradients (1) written into their
 * places in whole (host, pl_blocks_count floats): its chunks' slices
 * (pl_blocks_unslice). Writes the replicated tensors too, which every TP
 * rank holds: callers let one rank write at a time. */
int pl_hybrid_unslice(pl_hybrid *h, float *whole, int grads);

/* What one step sends, by group, from the formulas of Labs 07-09 (the ring
 * volumes of paralab/collectives.h), for the rank at coordinates `at` of
 * c's mesh. A ring's per-rank bytes depend on how the buffer is cut into
 * segments, so the exact figures are the group's: tp_bytes is what the
 * rank's TP group sends in all (its t members together: 2 (t - 1) times
 * each all-reduced buffer, (t - 1) times each all-gathered or
 * reduce-scattered one), dp_bytes the same for its DP group (2 (dp - 1)
 * times the part's gradient bytes), pp_bytes what the rank itself sends to
 * its pipeline neighbours. Calls: this rank's collectives on the TP and DP
 * groups, its sends on the PP group. */
typedef struct pl_hybrid_traffic {
    unsigned long long tp_bytes, dp_bytes; /* sent by the group's members together */
    unsigned long long pp_bytes;           /* sent by the rank */
    unsigned tp_calls, dp_calls, pp_sends;
} pl_hybrid_traffic;
int pl_hybrid_traffic_of(const pl_hybrid_config *c, pl_mesh_coord at, pl_hybrid_traffic *t,
                         char *err, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
