/*
 * paralab/zero.h — ZeRO stages 0-3 (core/parallel/zero.c): the block model
 * (paralab/blocks.h) trained with data parallelism over N ranks, its
 * gradients, AdamW state and parameters sharded over them. What Lab 11
 * teaches, and paralab-bench zero measures.
 *
 * Units and buckets. The model is cut into U = L + 2 units, in the order
 * they run: the input layer, each block, the head (FSDP's "units", each
 * one flat parameter; Zhao et al. 2023, section 3.2.1). Each unit is one
 * contiguous range [begin, end) of the whole model's flat buffer
 * (paralab/blocks.h's layout, pl_blocks_whole), of n = end - begin floats;
 * its bucket is that range padded with zeros to a multiple of N,
 * padded = N ceil(n / N) floats, cut into N slices of shard = padded / N:
 * rank r owns the floats [r shard, (r + 1) shard) of every bucket. Every
 * stage uses the same buckets (stage 0 too), so every stage sums every
 * gradient element in the same order and gives the same bits.
 *   Ψ      the model's parameters (pl_blocks_count);
 *   Ψ_pad  the sum of the buckets' padded sizes (Ψ when N divides every n):
 *          what the full buffers hold. The padding is zero, is never
 *          updated (the optimizer runs over each slice's real floats
 *          only), and is left out of norms and counts.
 *   shard  a rank's shard buffer: its slices of every bucket one after
 *          another (bucket b's at slice_at[b]), Ψ_pad / N floats.
 *
 * The stages (Rajbhandari et al., "ZeRO: Memory Optimizations Toward
 * Training Trillion Parameter Models", SC 2020, section 5), per rank, in
 * fp32 (no master copy): what each holds, in bytes (pl_zero_memory; in
 * pl_zero.mem measured from the simulated device's allocations with
 * cudaMemGetInfo, on a real GPU the bytes asked for):
 *   stage 0, plain DP:  params 4Ψ_pad, grads 4Ψ_pad, AdamW m and v 8Ψ_pad     = 16Ψ_pad
 *   stage 1 (P_os):     params 4Ψ_pad, grads 4Ψ_pad, m, v 8Ψ_pad/N            =  8Ψ_pad + 8Ψ_pad/N
 *   stage 2 (P_os+g):   params 4Ψ_pad, grads 4Ψ_pad/N, m, v 8Ψ_pad/N          =  4Ψ_pad + 12Ψ_pad/N
 *   stage 3 (P_os+g+p): params 4Ψ_pad/N, grads 4Ψ_pad/N, m, v 8Ψ_pad/N        = 16Ψ_pad/N
 * plus, stages 2 and 3, the working buffers (pl_zero_memory.buffers):
 * two gradient buckets of the largest unit (the one backward fills, the
 * one being reduce-scattered), with k > 1 one slice of it (a micro-step's
 * reduce-scatter before it is added to the shard), and stage 3 two
 * parameter buckets (the unit
 * running, the next one's gather prefetched); FSDP's limit of two
 * all-gathers in flight. "Freed after use" is a bucket given back to the
 * pair for the unit after next.
 *
 * One optimizer step (pl_zero_step, then pl_zero_update), k = accumulate
 * micro-steps of B / (N k) rows each on every rank (rank r's rows of the
 * global batch B: [r B/N, (r+1) B/N), as Lab 07 shards), the loss of each
 * scaled by 1 / B, so that the sum over the micro-steps and the ranks is
 * the mean gradient of the global batch (scaled once, never divided after):
 *   stage 0: forward, backward; each bucket all-reduced (sum) as soon as
 *            backward has produced it, on the communication stream while
 *            backward goes on (Lab 07's mechanism; overlap = 0: after
 *            backward) — in the last micro-step only, the earlier ones
 *            accumulate locally; update: AdamW on the full buffers;
 *   stage 1: forward, backward (accumulating locally); update: each
 *            bucket's gradients reduce-scattered in place (rank r ends with
 *            the sum of its slice), AdamW on the rank's slices (its shard
 *            of m and v), each bucket's parameters all-gathered in place
 *            (pl_zero_update_stage1: Lab 11's exercise);
 *   stage 2: forward; backward into a gradient bucket per unit, reduce-
 *            scattered as soon as the unit's backward ends (into the shard
 *            in the first micro-step, added to it in the later ones: every
 *            micro-step reduces); update: AdamW on the shard, each
 *            bucket's parameters all-gathered;
 *   stage 3: each unit's parameters all-gathered into a parameter bucket
 *            before its forward (the next unit's gather started as this
 *            one's forward is enqueued: prefetched) and again before its
 *            backward, the bucket given back after use; gradients as stage
 *            2; update: AdamW on the shard, nothing gathered (the next
 *            forward gathers).
 * Communication per rank per step, in floats sent (the ring volumes of
 * paralab/collectives.h; pl_zero_traffic_of), with c = (N - 1) / N:
 *   stage 0: all-reduce 2 c Ψ_pad;  stage 1: reduce-scatter c Ψ_pad +
 *   all-gather c Ψ_pad = 2 c Ψ_pad;  stage 2: (k + 1) c Ψ_pad;
 *   stage 3: (3k) c Ψ_pad (each micro-step gathers twice and reduces once).
 * With k = 1 that is the paper's 2Ψ, 2Ψ, 2Ψ, 3Ψ (section 7).
 *
 * Streams: compute on the caller's stream, the gradient reductions and the
 * gathers on a communication stream of the engine's (overlap = 1), joined
 * by events; on simulated GPUs the modeled clock shows the overlap.
 *
 * Trace (paralab/trace.h), when cfg.trace is set: per unit and micro-step
 * a compute-lane event, PL_EV_FORWARD or PL_EV_BACKWARD, label "F in",
 * "F b0", ..., "F head" and "B head" ... "B in", layer = the unit (0 the
 * input layer, 1 + j block j, L + 1 the head), micro_batch the micro-step;
 * one PL_EV_OPTIMIZER "update" per step; the collectives are the comm
 * layer's own events. And the metric notes "mem params r<k>", "mem grads
 * r<k>", "mem optim r<k>" (pl_trace_note_metric: the bytes rank k's device holds now
 * for each, working buffers included; the memory pane's bars), noted at
 * create and whenever a stage-3 bucket is taken or given back.
 *
 * Sources: Rajbhandari et al. 2020; Zhao et al., "PyTorch FSDP:
 * Experiences on Scaling Fully Sharded Data Parallel", VLDB 2023;
 * DeepSpeed's stage_1_and_2.py (buckets reduced as backward produces
 * them); llm.c llmc/zero.cuh (which falls back to plain DP when N does
 * not divide Ψ: paralab pads instead). Notes: shared/REFERENCES-PARALLEL.md,
 * "ZeRO / FSDP".
 *
 * Errors: functions return 0 or -1 with the reason in z->error (or err);
 * nothing here prints.
 */
#ifndef PARALAB_ZERO_H
#define PARALAB_ZERO_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "paralab/blocks.h"
#include "paralab/comm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PL_ZERO_UNITS_MAX (PL_BLOCKS_MAX + 2)
#define PL_ZERO_EVENTS 10 /* per engine: the working buckets' hand-offs, the join */

struct pl_trace;

typedef struct pl_zero_config {
    pl_blocks_config model; /* h and L (pl_blocks_config_make) */
    int stage;              /* 0 (plain DP), 1, 2 or 3 */
    int batch;              /* B: the global batch of one optimizer step, over every rank */
    int accumulate;         /* k >= 1: micro-steps per optimizer step (B / (N k) rows each) */
    int overlap;            /* 1: reductions and gathers on the communication stream (the
                               default a lab gives); 0: on the compute stream, in order */
    int sgd;                /* 1: SGD with momentum 0.9 instead of AdamW (the checks'
                               optimizer: only m is kept, so "optim" is 4Ψ_pad/N per shard) */
    struct pl_trace *trace; /* events and memory notes go here; NULL: none */
} pl_zero_config;

/* Checks c for a world of n ranks without making anything. 0, or -1 with
 * a message naming the bad value and what is allowed:
 *   "--stage 4: ZeRO has stages 0 (plain data parallelism), 1 (optimizer
 *    state sharded), 2 (and gradients) and 3 (and parameters)"
 *   "--accumulate 0: the micro-steps per optimizer step must be 1..1024"
 *   "--batch 60: 60 rows do not split into 8 ranks of 4 micro-steps (B
 *    must be a multiple of N k = 32)"
 * and the model's own limits (pl_blocks_check with t = 1). */
int pl_zero_check(const pl_zero_config *c, int n, char *err, size_t cap);

/* One unit's bucket (above). */
typedef struct pl_zero_bucket {
    const char *name; /* "in", "b0", "b1", ..., "head" */
    long begin, end;  /* the unit's floats in the whole model's flat buffer */
    long padded;      /* N ceil((end - begin) / N) */
    long shard;       /* padded / N: each rank's slice */
    long full_at;     /* where the bucket starts in a full buffer (Ψ_pad floats) */
    long slice_at;    /* where this rank's slice starts in its shard buffer */
    long real;        /* of this rank's slice, the real floats (the rest is padding) */
} pl_zero_bucket;

/* The buckets for N ranks, from rank's view (slice_at, real): out[u] for
 * u < U. Returns U, or -1 (with err) for a bad config. Pure host code. */
int pl_zero_buckets(const pl_blocks_config *m, int n, int rank, pl_zero_bucket *out, int max,
                    char *err, size_t cap);
/* Ψ_pad for N ranks. */
long pl_zero_padded(const pl_blocks_config *m, int n);

/* Bytes a rank's device holds for each, from the formulas above (the
 * config's stage, N and optimizer); or, in pl_zero.mem, measured. */
typedef struct pl_zero_memory {
    size_t params, grads, optim; /* persistent: the stage's formula */
    size_t buffers;              /* working buckets (stages 2, 3) */
} pl_zero_memory;
int pl_zero_memory_of(const pl_zero_config *c, int n, pl_zero_memory *out, char *err, size_t cap);

/* Floats one rank sends in one step (pl_zero_step + pl_zero_update), by
 * call, from the ring volumes: exact. */
typedef struct pl_zero_traffic {
    unsigned long long all_reduce, reduce_scatter, all_gather; /* floats sent */
    unsigned calls;                                            /* collectives */
} pl_zero_traffic;
int pl_zero_traffic_of(const pl_zero_config *c, int n, pl_zero_traffic *out, char *err, size_t cap);

/* One rank's share of a ZeRO run. */
typedef struct pl_zero {
    pl_zero_config cfg;
    pl_comm *comm; /* the data-parallel group (not owned) */
    int n, rank;   /* N and this rank's index in comm */
    int units;     /* U = L + 2 */
    pl_zero_bucket bucket[PL_ZERO_UNITS_MAX];
    pl_blocks unit[PL_ZERO_UNITS_MAX]; /* each unit's part: activations, scratch; its params
                                          and grads are views into the buffers below */
    long psi, psi_pad;                 /* Ψ, Ψ_pad */
    long shard_floats;                 /* Ψ_pad / N */
    int rows;                          /* B / (N k): a micro-step's rows on this rank */
    /* the buffers (device; NULL where the stage has none): */
    float *params;                    /* full, Ψ_pad (stages 0-2) */
    float *grads;                     /* full, Ψ_pad (stages 0-1) */
    float *param_shard, *grad_shard;  /* Ψ_pad / N (param_shard: stage 3; grad_shard: 2-3) */
    float *opt_m, *opt_v;             /* the optimizer's: Ψ_pad (stage 0) or Ψ_pad / N */
    float *pbucket[2], *gbucket[2];   /* working buckets: the largest unit's padded size */
    float *rsbuf;                     /* accumulate > 1, stages 2-3: a slice's reduce-scatter
                                         before it is added to the shard */
    float *own_dx[PL_ZERO_UNITS_MAX]; /* each unit's own d_x (they share unit 0's) */
    float *norm_sq;                   /* one float: the gradient norm's sum of squares */
    cudaEvent_t ev[PL_ZERO_EVENTS];   /* the buckets' hand-offs between the two streams */
    int step;                         /* optimizer steps taken */
    pl_zero_memory mem;               /* measured from the allocations (cudaMemGetInfo) */
    cudaStream_t stream, comm_stream; /* the caller's; the engine's */
    /* the last step: modeled seconds (0 on real GPUs) */
    double step_start, step_end; /* the whole step on the compute stream */
    double comm_end;             /* when the communication stream's work of the step ends
                                    (overlap = 1; else 0), modeled seconds */
    char error[1024];
} pl_zero;

/* Collective over comm (every rank calls it, from its own thread): checks
 * c (pl_zero_check), allocates this rank's buffers for its stage and its
 * units, and loads the one-device model's initial parameters for seed
 * (pl_blocks_init_whole; a stage-3 rank keeps only its slices). On the
 * current device; compute on `stream`. 0, or -1 with the reason in err. */
int pl_zero_create(pl_zero *z, const pl_zero_config *c, pl_comm *comm, unsigned long long seed,
                   cudaStream_t stream, char *err, size_t cap);
void pl_zero_destroy(pl_zero *z);

/* The forward and backward of one optimizer step and the stage's
 * reductions during backward (above): X [B / N, inputs] and labels [B / N]
 * (device) this rank's rows, micro-step i's the rows [i B/(N k), (i+1)
 * B/(N k)). Collective. *loss_sum (may be NULL): the sum of this rank's
 * rows' losses (unscaled). Waits for the stream. */
int pl_zero_step(pl_zero *z, const float *X, const int *labels, float *loss_sum);

/* The optimizer step for the stage (above): AdamW (or SGD with cfg.sgd) at
 * lr. Stage 1 runs pl_zero_update_stage1. Collective for stages 1-2. */
int pl_zero_update(pl_zero *z, float lr);
/* The same with stage 1's update done by stage1 (a student's: Lab 11's
 * exercise; NULL: pl_zero_update_stage1), inside the step's accounting
 * (its "update" event, the stream waited for, the memory notes). stage1's
 * non-zero return is returned as it is (PL_TODO_STATUS passes through),
 * its reason in z->error. */
int pl_zero_update_with(pl_zero *z, float lr, int (*stage1)(pl_zero *z, float lr));
/* Stage 1's update, the reference for Lab 11's exercise: for each bucket,
 * pl_reduce_scatter of z->grads + full_at in place (recv = send + rank
 * shard); pl_zero_optimize(z, lr) on the slices; for each bucket,
 * pl_all_gather of the slice in place into z->params + full_at. */
int pl_zero_update_stage1(pl_zero *z, float lr);
/* The optimizer on this rank's slices only: for each bucket, its `real`
 * floats of the parameters at p + off, the gradients at g + off, and the
 * optimizer state at slice_at (z->opt_m, opt_v), where off = full_at +
 * rank shard (stages 0-1: the slice of the full buffers) or slice_at (the
 * shard buffers of stages 2-3). Counts the step. On z->stream. */
int pl_zero_optimize(pl_zero *z, float lr);
/* The optimizer on n floats at params and grads with the optimizer state
 * at state_off of this rank's m and v (the exercise's building block;
 * pl_zero_optimize is a loop over it). Refused when the state range is
 * not inside the rank's (Ψ_pad / N floats, Ψ_pad at stage 0), naming it:
 * "the AdamW state is 8922 floats on each rank (its shard); floats
 * [0, 71376) are outside it: a rank updates only its own slices". Does not
 * count a step (pl_zero_optimize does, once per step, before its loop:
 * call pl_zero_count_step first when looping yourself). */
int pl_zero_optimize_range(pl_zero *z, float *params, const float *grads, long state_off, long n,
                           float lr);
void pl_zero_count_step(pl_zero *z);

/* The global gradient norm (the sum of squares over this rank's real
 * slice floats, all-reduced over comm; stage 0: over its full gradient,
 * not reduced: every rank holds the same), clipping to max_norm when > 0.
 * Between pl_zero_step and the update of stages 1: not available (the
 * gradients are not reduced yet: refused). */
int pl_zero_clip_grad_norm(pl_zero *z, float max_norm, float *norm);

/* Forward only of rows rows X, labels (device; any rows up to B / N):
 * *loss_sum their losses' sum and *correct the rows predicted right (each
 * may be NULL). Collective at stage 3 (it gathers). */
int pl_zero_evaluate(pl_zero *z, const float *X, const int *labels, int rows, float *loss_sum,
                     int *correct);

/* This rank's slices of the parameters (what = 0), the gradients (1, after
 * the reduction), or the optimizer's m (2) and v (3), written into their
 * places in whole (host, Ψ floats, the whole model's layout). The ranks'
 * slices are disjoint: every rank calls it on the same array and together
 * they fill it (stage 0 and, for the parameters, stages 1-2 hold
 * everything: each still writes only its slices). Waits for the stream. */
int pl_zero_slices_to_host(pl_zero *z, float *whole, int what);
/* The same slices one after another, as this rank's shard buffers hold
 * them: bucket u's at its slice_at, its real floats, into row (host,
 * z->shard_floats = Ψ_pad / N floats; the padding is not written). For a
 * rank whose row must travel before it is put in place (another process's,
 * under mpirun: pl_dist_gather_host). Waits for the stream. */
int pl_zero_shard_to_host(pl_zero *z, float *row, int what);
/* Rank q's row (pl_zero_shard_to_host on rank q) written into its places in
 * whole (host, Ψ floats): host code only, any rank may call it for any q.
 * 0, or -1 with z->error (q not a rank). */
int pl_zero_shard_place(pl_zero *z, int q, const float *row, float *whole);
/* The same for this rank's whole view: all Ψ parameters (stages 0-2 hold
 * them; stage 3 refuses). */
int pl_zero_params_to_host(pl_zero *z, float *whole);

#ifdef __cplusplus
}
#endif

#endif
