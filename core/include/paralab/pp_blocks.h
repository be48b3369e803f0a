/*
 * paralab/pp_blocks.h — the block model (paralab/blocks.h) cut into
 * pipeline stages (core/parallel/pp_blocks.c): what Labs 09-11 train with
 * pipeline parallelism.
 *
 * Stage r of p holds v chunks; chunk c is the model's virtual stage
 * q = c p + r and holds the blocks pl_pp_split gives it (picotron's rule
 * over the p v virtual stages), with the input layer on q = 0 (stage 0,
 * chunk 0) and the head on q = p v - 1 (stage p - 1, chunk v - 1). Each
 * chunk is one pl_blocks part, with its own pl_tp: t = 1
 * (pl_pp_blocks_create), or TP shard i of a TP group of t ranks
 * (pl_pp_blocks_create_tp: Lab 10's tensor parallelism inside each stage;
 * under sequence parallelism a micro-batch's rows are split over the TP
 * group outside the parallel region, so the messages between stages are
 * [b / t, h] and rank i reads rows [k b + i b/t, k b + (i+1) b/t) of X).
 *
 * One optimizer step (pl_pp_blocks_step): the global batch of B rows is
 * cut into m micro-batches of b = B / m rows (micro-batch k: rows
 * [k b, (k+1) b)); the schedule runs on the executor (paralab/pp_exec.h)
 * with this body:
 *   F of (k, c):  takes a set of activations for (k, c) (one allocation,
 *                 pl_blocks_acts_alloc, or a spare one), runs the chunk's forward on the
 *                 received activation (or on X's rows of micro-batch k on
 *                 virtual stage 0) and, but on the last virtual stage,
 *                 writes the output to send;
 *   BW / B:       on the last virtual stage first the loss of micro-batch
 *                 k (pl_blocks_loss, from the logits F kept: softmax
 *                 cross-entropy, its gradient scaled by 1/B once — so the
 *                 step sees the mean gradient over the global batch
 *                 whatever m is: REFERENCES-PARALLEL.md, "Gradient
 *                 accumulation"), then the chunk's backward, its weight
 *                 gradients added to the step's (they are zeroed before
 *                 the first micro-batch, as llm.c's gpt2_zero_grad);
 *   W:            the weight gradients of (k, c) (after its B);
 * and (k, c)'s set is given back at the end of its last backward op (BW,
 * or W), kept for the next F (no cudaFree mid-pipeline: it would
 * synchronise the device). So the activations a stage holds at once are the
 * validator's peak_in_flight sets of pl_blocks_acts_bytes each: all m for
 * GPipe, min(p - r, m) for 1F1B (REFERENCES-PARALLEL.md).
 * The loss is summed over the micro-batches on the last stage; after the
 * step, optionally the global gradient norm (pl_pp_blocks_clip_grad_norm:
 * every chunk's sum of squares, summed over the PP group), then AdamW or
 * SGD on every chunk.
 *
 * A lab's loop, on every stage (comm: the PP group, e.g. the world's):
 *
 *   pl_pp_schedule s;                       schedule as data, paralab/pipeline.h
 *   pl_pp_build(&s, PL_PP_1F1B, p, m, 1, err, sizeof err);
 *   pl_pp_blocks pp;
 *   pl_pp_blocks_create(&pp, &cfg, comm, 1, B, m, seed, stream, err, sizeof err);
 *   pp.exec.trace = r->trace;               one event per op, activation notes
 *   pp.exec.world_rank = r->rank;
 *   for each step:
 *       X to stage 0's device, labels to the last stage's
 *       pl_pp_blocks_step(&pp, &s, X, labels, &loss_sum);    (the last stage's)
 *       if (clip > 0) pl_pp_blocks_clip_grad_norm(&pp, clip, &norm);
 *       pl_pp_blocks_adamw(&pp, lr);
 *   pl_pp_measure(&pp.exec, 0, &timing);     the last step's bubble, on every stage
 *
 * Errors: functions return 0 or -1 with the reason in pp->error (or err).
 */
#ifndef PARALAB_PP_BLOCKS_H
#define PARALAB_PP_BLOCKS_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "paralab/blocks.h"
#include "paralab/comm.h"
#include "paralab/pipeline.h"
#include "paralab/pp_exec.h"
#include "paralab/tp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pl_pp_blocks {
    pl_blocks_config cfg;
    int stage, stages, chunks;        /* r, p, v */
    int batch, micro_batches, rows;   /* B, m, b = B / m */
    int local_rows;                   /* b / t under sequence parallelism, else b */
    int loss_batch;                   /* the rows the loss is a mean over (B; a hybrid run's
                                         global batch: the DP sum is then the mean) */
    pl_blocks part[PL_PP_MAX_CHUNKS]; /* chunk c: virtual stage c p + r */
    pl_tp tp[PL_PP_MAX_CHUNKS];       /* its TP view (t = 1: comm NULL) */
    pl_pp_exec exec;                  /* the executor of this stage */
    cudaStream_t stream;
    /* the activations in flight: acts[k v + c] for (k, c) while held */
    pl_blocks_acts *acts;
    unsigned char *held; /* [m v]: 1 while (k, c)'s set is taken */
    /* the sets given back, kept for the next F (PyTorch's caching allocator:
     * a cudaFree would synchronise the device in mid-pipeline): chunk c's
     * spare[c m + j], j < spare_n[c] */
    pl_blocks_acts *spare;
    int spare_n[PL_PP_MAX_CHUNKS];
    int split;                           /* the sets keep what W needs (a list with B and W) */
    size_t acts_bytes[PL_PP_MAX_CHUNKS]; /* bytes of one set of chunk c: pl_blocks_acts_bytes */
    size_t held_bytes, peak_bytes;       /* now, and the most this step (counted) */
    int in_flight, peak_in_flight;       /* sets held now, and the most this step */
    /* the device memory the sets take, measured (cudaMemGetInfo before and
     * after each allocation): the sets in use and the spare ones. Its most
     * during a step equals peak_bytes when the rank is alone on its device
     * (exact on simulated GPUs; a real GPU's driver counts whole pages): a
     * set is allocated only when every earlier one is in use */
    size_t measured_peak_bytes;
    long long measured_held; /* bytes, by those deltas */
    /* the step's batch (device pointers, valid during pl_pp_blocks_step) */
    const float *X;    /* [B, inputs] on stage 0 */
    const int *labels; /* [B] on the last stage */
    float *loss_sum;   /* device: the step's loss summed over its micro-batches */
    float *norm_sq;    /* device: scratch for the gradient norm */
    char error[1024];
} pl_pp_blocks;

/* Stage r = pl_comm_rank(comm) of p = pl_comm_size(comm) (comm: the PP
 * group; NULL for one stage), on the current device and stream: its
 * chunks' parts (their slices of the whole model drawn from seed, so the
 * gathered weights are the one-device model's bits), for global batches
 * of `batch` rows in m micro-batches. Refused with a message that names
 * the bad value and what is allowed: a split with a chunk of no block
 * (pl_pp_split: L < p v), batch not divisible by m ("--micro-batches 3:
 * a batch of 16 does not divide into 3 micro-batches (m can be 1, 2, 4,
 * 8 or 16)"), chunks out of 1..PL_PP_MAX_CHUNKS. */
int pl_pp_blocks_create(pl_pp_blocks *pp, const pl_blocks_config *c, pl_comm *comm, int chunks,
                        int batch, int micro_batches, unsigned long long seed, cudaStream_t stream,
                        char *err, size_t cap);
/* The same with tensor parallelism inside the stage: tp_comm the rank's TP
 * group (NULL: t = 1), each chunk's part its shard pl_comm_rank(tp_comm) of
 * t, with or without sequence parallelism (then the micro-batch's rows must
 * divide by t: refused otherwise, naming both). Every rank of a TP group
 * runs the same stage's list, so its collectives match. */
int pl_pp_blocks_create_tp(pl_pp_blocks *pp, const pl_blocks_config *c, pl_comm *comm,
                           pl_comm *tp_comm, int sequence_parallel, int chunks, int batch,
                           int micro_batches, unsigned long long seed, cudaStream_t stream,
                           char *err, size_t cap);
void pl_pp_blocks_destroy(pl_pp_blocks *pp);

/* One step's forward and backward of the global batch through schedule s
 * (its p, m and v must be the pipeline's): X [B, inputs] (device) on
 * stage 0, labels [B] (device) on the last stage, NULL elsewhere (ignored).
 * Zeroes the gradients, runs s on the executor (pl_pp_run: it validates s
 * first and refuses a bad one on every stage with the validator's
 * message) and waits for the stream. *loss_sum (may be NULL): on the last
 * stage the sum of the B rows' losses (divide by B for the mean), 0 on
 * the others. The rows predicted right are added to the head's
 * part[v - 1].correct. */
int pl_pp_blocks_step(pl_pp_blocks *pp, const pl_pp_schedule *s, const float *X, const int *labels,
                      float *loss_sum);

/* The global gradient norm: every chunk's sum of squares, all-reduced
 * over the PP group (llm.c's global norm; REFERENCES-PARALLEL.md: a
 * pipeline's norm is over every stage), its root in *norm (every stage
 * gets the same value). When max_norm > 0 and the norm exceeds it, every
 * gradient is scaled by max_norm / norm (PyTorch clip_grad_norm_).
 * max_norm <= 0: only the norm. Collective: every stage calls it. */
int pl_pp_blocks_clip_grad_norm(pl_pp_blocks *pp, float max_norm, float *norm);

/* The optimizer on every chunk (pl_blocks_sgd, pl_blocks_adamw). */
int pl_pp_blocks_sgd(pl_pp_blocks *pp, float lr);
int pl_pp_blocks_adamw(pl_pp_blocks *pp, float lr);

/* Forward only, for evaluation: the B rows of X through every stage, one
 * micro-batch after another, and the loss of labels (scale 0: no
 * gradient), the rows predicted right added to part[v - 1].correct on the
 * last stage; *loss_sum as pl_pp_blocks_step. Labels of -1 match nothing
 * (padding rows). Collective over the PP group; waits for the stream. */
int pl_pp_blocks_evaluate(pl_pp_blocks *pp, const float *X, const int *labels, float *loss_sum);

/* The bytes of one micro-batch's activations on chunk c of this stage. */
size_t pl_pp_blocks_acts_bytes(const pl_pp_blocks *pp, int chunk);

#ifdef __cplusplus
}
#endif

#endif
