/*
 * paralab/pipeline.h — pipeline parallelism as data (core/parallel/pipeline.c):
 * how a model is cut into stages, a schedule (for each stage, the ordered
 * list of operations it runs), the validator that proves a schedule can
 * run before anything runs, the shipped schedules, and their formulas.
 * The executor that runs any schedule is paralab/pp_exec.h.
 *
 * Notation (shared/REFERENCES-PARALLEL.md, "Pipeline schedules"): p stages
 * (ranks of the PP group, stage r = 0..p-1), m micro-batches per optimizer
 * step (k = 0..m-1), v model chunks per stage (interleaving; 1 otherwise,
 * c = 0..v-1). Chunk c of stage r is the model's virtual stage q = c p + r
 * (Megatron-LM's interleaving: stage r holds virtual stages r, p + r, ...),
 * so a forward goes q -> q + 1: from stage r to r + 1, and from stage p - 1
 * (chunk c) to stage 0 (chunk c + 1).
 *
 * An operation is a forward F, a whole backward (input and weight
 * gradients together) BW, or the backward split in two (Qi et al., "Zero
 * Bubble Pipeline Parallelism", ICLR 2024): B, the input gradient (on the
 * critical path: the stage before waits for it), and W, the weight
 * gradient (nobody waits for it; it may be deferred to fill a bubble).
 * For each (k, c) a schedule has one F and either one BW or one B and one
 * W, on the stage that holds chunk c.
 *
 * What the executor does around each operation, and so what the validator
 * checks (pl_pp_validate):
 *   - F of (k, c) on virtual stage q > 0 first receives its input
 *     (activation) from the stage of q - 1; F on q < p v - 1 sends its
 *     output to the stage of q + 1 after it.
 *   - BW or B of (k, c) on q < p v - 1 first receives the gradient of its
 *     output from the stage of q + 1; on q > 0 it sends the gradient of its
 *     input to the stage of q - 1 after it. W sends and receives nothing.
 *   - The send after operation i and the receive before operation i + 1
 *     are posted in one group (NCCL's ncclGroupStart/End; Megatron-LM's
 *     send_forward_recv_backward), so two neighbours that each send to
 *     the other at that moment cannot deadlock.
 *   - A send completes when its receiver has posted the matching receive
 *     (NCCL's p2p semantics): a group waits until all of its sends and
 *     receives are matched. Messages between two stages in one direction
 *     are matched in order (NCCL has no tags): the j-th send from a to b is
 *     the j-th receive at b from a, and must carry the same (k, c, kind).
 *     (pl_pp_validate checks these rendezvous sends; pl_pp_validate_sends
 *     can check buffered sends instead, see pl_pp_sends.)
 *
 * What the timing of sends does to the shipped schedules (uniform costs,
 * messages free; checked by tests/unit/test_pipeline.c for p 1..8):
 *   - naive, GPipe and 1F1B run under rendezvous sends, and their timeline
 *     gives the bubble formulas exactly: every message is taken by its
 *     receiver the moment its sender finishes.
 *   - Megatron-LM's interleaved order deadlocks under rendezvous sends as
 *     grouped here (one receive per group, posted right before its op)
 *     whenever m > p: around the ring stage 0 -> ... -> p - 1 -> stage 0
 *     every stage waits after a backward to send to the stage before it,
 *     which has not yet reached the matching receive. Megatron-LM does not
 *     deadlock because it posts both sends and both next receives of a
 *     1F1B step in one batch (send_forward_backward_recv_forward_backward),
 *     the receives one step ahead. No 1F1B-like order was found that
 *     runs and keeps Megatron-LM's memory: with its order the warm-up must
 *     grow to all but the last chunk-forward before it runs. The
 *     breadth-first order (pl_pp_build_breadth_first: all chunk-forwards,
 *     then all chunk-backwards) runs and reaches (p - 1)/(v m) exactly, at
 *     GPipe's memory.
 *   - ZB-H1 runs under rendezvous sends but does not reach a third of
 *     1F1B's bubble; it loses to 1F1B (t_f = t_b = t_w = 1, p = 4: bubble
 *     9, 17, 33 for m = 8, 16, 32, against 1F1B's 9): a W run between a
 *     send and the neighbour's matching receive makes the sender wait, and
 *     with B's moving one stage per t_b against the F's no period-3 steady
 *     state lets every message be taken at once when p >= 3 (F on stage r
 *     at a + r + 3k, B at b - r + 3k: a + r = b - r mod 3 for some r).
 *     (An executor that posted a receive before the W's in front of its
 *     op would give ZB-H1 a bubble of 2 (p - 1) under rendezvous sends:
 *     two thirds of 1F1B's, not one third; measured, not shipped.)
 *   - With buffered sends (PL_PP_BUFFERED: a send completes at once; the
 *     receive waits for its message) all five schedules run for every
 *     (p, m, v) pl_pp_accepts accepts and every formula below is exact.
 *     The formulas of the papers assume that (asynchronous p2p).
 * Sources: Huang et al., "GPipe", 2019 (all forwards, then all
 * backwards); Narayanan et al., "Efficient Large-Scale Language Model
 * Training on GPU Clusters Using Megatron-LM", SC21, sections 2.2.1-2.2.2
 * (1F1B, PipeDream-Flush; the interleaved schedule); Qi et al., ICLR 2024
 * (ZB-H1); Megatron-LM megatron/core/pipeline_parallel/schedules.py (the
 * warm-up counts, the interleaved schedule's rules); picotron
 * pipeline_parallel.py (the layer split).
 *
 * Errors: functions that can fail return 0 or -1 with a message in err
 * (cap bytes) that names the bad value and what is allowed.
 */
#ifndef PARALAB_PIPELINE_H
#define PARALAB_PIPELINE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PL_PP_MAX_STAGES 64  /* p */
#define PL_PP_MAX_CHUNKS 8   /* v */
#define PL_PP_MAX_MICRO 4096 /* m */

/* ---- cutting the model into stages ---------------------------------------------------- */

/* Blocks [first[q], first[q] + count[q]) of the model's L blocks go to
 * virtual stage q = 0..p v - 1 (chunk q / p of stage q % p): picotron's
 * rule, applied to the p v virtual stages: floor(L / (p v)) blocks each,
 * and one more for the first L mod (p v) of them. The input layer goes
 * with virtual stage 0 (stage 0), the classifier with the last (stage
 * p - 1). -1 when L < p v (a stage or chunk would hold no block): the
 * message names L, p and v and says how many blocks are needed. */
int pl_pp_split(int layers, int stages, int chunks, int *first, int *count, char *err, size_t cap);

/* ---- a schedule ----------------------------------------------------------------------- */

typedef enum {
    PL_PP_F,  /* forward */
    PL_PP_BW, /* the whole backward: input and weight gradients */
    PL_PP_B,  /* the input gradient only (zero-bubble's B) */
    PL_PP_W,  /* the weight gradient only (zero-bubble's W) */
    PL_PP_NUM_OPS
} pl_pp_op_kind;

typedef struct pl_pp_op {
    int kind;        /* pl_pp_op_kind */
    int micro_batch; /* k: 0..m-1 */
    int chunk;       /* c: 0..v-1 (0 without interleaving) */
} pl_pp_op;

/* Constructors, for writing a schedule by hand (Lab 09's exercise). */
pl_pp_op pl_pp_forward(int micro_batch, int chunk);
pl_pp_op pl_pp_backward(int micro_batch, int chunk);        /* BW */
pl_pp_op pl_pp_backward_input(int micro_batch, int chunk);  /* B */
pl_pp_op pl_pp_backward_weight(int micro_batch, int chunk); /* W */
/* "F3", "BW0", "B2.1" (k 2, chunk 1: the chunk is written when v > 1). */
void pl_pp_op_name(pl_pp_op op, int chunks, char *buf, size_t cap);

typedef enum {
    PL_PP_NAIVE,       /* one micro-batch at a time: its forward through every stage, then
                          its backward back, before the next micro-batch starts */
    PL_PP_GPIPE,       /* all m forwards, then all m backwards (GPipe; "AFAB") */
    PL_PP_1F1B,        /* warm-up forwards, then one forward one backward, then the
                          cool-down backwards (PipeDream-Flush, Megatron-LM's default) */
    PL_PP_INTERLEAVED, /* 1F1B over v chunks per stage (Megatron-LM's interleaved) */
    PL_PP_ZB_H1,       /* 1F1B with the backward split into B and W, stage r's W's
                          started r steps late and the rest deferred into the
                          cool-down's bubbles (Qi et al. 2024, ZB-H1) */
    PL_PP_NUM_KINDS
} pl_pp_kind;

/* "naive", "gpipe", "1f1b", "interleaved", "zb-h1" (the --schedule names). */
const char *pl_pp_kind_name(pl_pp_kind k);
/* The kind named so; -1 (and a message listing the names) if none. */
int pl_pp_kind_parse(const char *name, char *err, size_t cap);

/* A schedule: for each stage r the ordered list of ops[r][0..n[r]-1].
 * Its storage holds up to 3 m v ops per stage (an F, a B and a W for each
 * micro-batch and chunk): pl_pp_schedule_init allocates it. */
typedef struct pl_pp_schedule {
    int stages, micro_batches, chunks; /* p, m, v */
    int kind;                          /* the pl_pp_kind it was built as; -1: written by hand */
    int cap;                           /* ops each stage's list can hold: 3 m v */
    int n[PL_PP_MAX_STAGES];           /* ops on stage r */
    pl_pp_op *ops[PL_PP_MAX_STAGES];   /* stage r's list */
} pl_pp_schedule;

/* Empty lists for p stages, m micro-batches, v chunks. -1 with a message
 * when p is not 1..PL_PP_MAX_STAGES, m not 1..PL_PP_MAX_MICRO, v not
 * 1..PL_PP_MAX_CHUNKS, or out of memory. */
int pl_pp_schedule_init(pl_pp_schedule *s, int stages, int micro_batches, int chunks, char *err,
                        size_t cap);
void pl_pp_schedule_free(pl_pp_schedule *s);
/* Appends op to stage r's list; -1 when r is not a stage or the list is full. */
int pl_pp_push(pl_pp_schedule *s, int stage, pl_pp_op op);

/* Whether kind can run p stages, m micro-batches and v chunks: 0, or -1
 * with the rule it breaks, named with its source, e.g. "interleaved: m = 6
 * micro-batches is not a multiple of p = 4 stages (Megatron-LM's
 * interleaved schedule runs micro-batches in groups of p)". The rules:
 * v must be 1 except for interleaved; interleaved needs m a multiple of p
 * and p >= 2 (Megatron-LM schedules.py). Every kind accepts every m >= 1
 * that these rules allow. (Megatron-LM also refuses p = 2 without
 * overlapped p2p, issue 750: the previous and next stage are one peer.
 * Here the in-order matching of the p = 2 lists holds, and with buffered
 * sends they run; under rendezvous sends p = 2 deadlocks for m > p like
 * every p, see the top of this file.) */
int pl_pp_accepts(pl_pp_kind kind, int stages, int micro_batches, int chunks, char *err,
                  size_t cap);
/* Builds the shipped schedule into s (initialised here; free it with
 * pl_pp_schedule_free): 0, or -1 as pl_pp_accepts. */
int pl_pp_build(pl_pp_schedule *s, pl_pp_kind kind, int stages, int micro_batches, int chunks,
                char *err, size_t cap);

/* The interleaved schedule all-forward-all-backward, GPipe's way (compare
 * Lamy-Poirier, "Breadth-First Pipeline Parallelism", 2022): every stage
 * runs all its m v chunk-forwards in Megatron-LM's order (micro-batch
 * groups of p, chunk by chunk), then all its chunk-backwards in the same
 * order, chunks reversed. It runs under rendezvous sends (unlike Megatron-LM's order
 * when m > p, see the top of this file) and its timeline reaches the
 * interleaved bubble (p - 1)/(v m) exactly with either send semantics,
 * but every stage holds all m v chunk activations (GPipe's memory). The
 * rules are pl_pp_accepts' for PL_PP_INTERLEAVED; s->kind is -1 (it is not
 * one of the shipped kinds, whose formulas pl_pp_peak_formula gives). */
int pl_pp_build_breadth_first(pl_pp_schedule *s, int stages, int micro_batches, int chunks,
                              char *err, size_t cap);

/* Forwards stage r runs before its first backward in 1F1B:
 * min(p - r - 1, m) (Megatron-LM's num_warmup_microbatches; picotron). */
int pl_pp_warmup_1f1b(int stages, int micro_batches, int stage);
/* The same for the interleaved schedule, counted in chunk-forwards:
 * min((p - r - 1) 2 + (v - 1) p, m v) (Megatron-LM get_pp_rank_microbatches)
 * for v >= 2; for v = 1 it is 1F1B's (Megatron-LM runs the schedule without
 * interleaving then), so the interleaved lists of v = 1 are 1F1B's. */
int pl_pp_warmup_interleaved(int stages, int micro_batches, int chunks, int stage);

/* ---- the validator ---------------------------------------------------------------------- */

/* How the executor's sends complete. RENDEZVOUS: a send completes when its
 * receiver has posted the receive (NCCL; the groups above), the transfer
 * happens at the later of the two and both go on from then. BUFFERED: a
 * send completes at once and its message waits at the receiver (an
 * asynchronous send into a buffer); a receive waits for its message. */
typedef enum { PL_PP_RENDEZVOUS, PL_PP_BUFFERED } pl_pp_sends;

/* What the validator learnt of a schedule that can run. */
typedef struct pl_pp_report {
    /* per stage: the most (micro-batch, chunk) pairs whose activations it
     * holds at once: from the start of an F to the end of the last of its
     * backward ops (BW, or W) */
    int peak_in_flight[PL_PP_MAX_STAGES];
    /* per stage: the sends and receives it posts (each one activation or
     * one gradient) */
    int sends[PL_PP_MAX_STAGES], recvs[PL_PP_MAX_STAGES];
    /* the timeline with every F taking t_f, every BW t_b + t_w, B t_b and
     * W t_w (pl_pp_validate's arguments), messages free: per stage the
     * time its ops take and the makespan (the end of the last op). */
    double busy[PL_PP_MAX_STAGES];
    double makespan;
} pl_pp_report;

/* Checks that s can run, as the executor runs it (above): every stage's
 * list has each (k, c) it should hold exactly once as F and once as BW or
 * as B and W (none out of range: a chunk is a stage's own index 0..v-1,
 * so "another stage's chunk" is a chunk >= v), B before its W, each
 * backward after its forward on the stage; every message's send and
 * receive match in order; and no stage waits forever (the lists are
 * simulated with rendezvous sends). 0 and *rep filled (rep may be NULL);
 * or -1 with the first bad operation, by stage and position, e.g. "stage
 * 1, op 3 (BW0): the backward of micro-batch 0 comes before its forward
 * (F0 is op 5)" or "deadlock: stage 0 waits at op 1 (BW0) to receive
 * from stage 1, which waits at op 1 (F1) to receive from stage 0: a
 * cycle, no stage in it can go on" (a stage blocked on a send "waits
 * after op i (X) to send to stage b"). The timeline: an op starts when
 * its group is complete, a message moves at the later of its sender's
 * end and its receiver's arrival, at no cost. t_f, t_b, t_w: the
 * durations for rep's timeline (any units; 1, 1, 1 for slots; t_w = 0
 * counts a BW as t_b). */
int pl_pp_validate(const pl_pp_schedule *s, double t_f, double t_b, double t_w, pl_pp_report *rep,
                   char *err, size_t cap);
/* The same under the given send semantics (pl_pp_validate is
 * PL_PP_RENDEZVOUS). Under PL_PP_BUFFERED a deadlock is a cycle of
 * receives and a message is available when its sender's op ends. */
int pl_pp_validate_sends(const pl_pp_schedule *s, pl_pp_sends sends, double t_f, double t_b,
                         double t_w, pl_pp_report *rep, char *err, size_t cap);

/* The validator's timeline op by op: start[r][i] (r < p, i < n[r]; a row
 * may be NULL) = when op i of stage r starts (it ends t_f, t_b + t_w, t_b
 * or t_w later), under the same timing as pl_pp_report's makespan.
 * 0, or -1 as pl_pp_validate_sends. */
int pl_pp_timeline(const pl_pp_schedule *s, pl_pp_sends sends, double t_f, double t_b, double t_w,
                   double *const start[PL_PP_MAX_STAGES], char *err, size_t cap);

/* ---- formulas ----------------------------------------------------------------------------- */

/* The bubble of kind for uniform stages (every F t_f, every backward t_b,
 * messages free), in the two normalisations of one quantity
 * (REFERENCES-PARALLEL.md): of_ideal = bubble time / (m (t_f + t_b)), the
 * ideal time, and of_total = bubble time / total time, t_f and t_b being
 * a stage's forward and backward of one micro-batch (with v chunks each
 * chunk's op takes t_f / v: the ideal time is m v chunk-op pairs, as the
 * validator's report counts it when its t_f, t_b are per op). GPipe and 1F1B:
 * (p - 1)/m and (p - 1)/(m + p - 1); interleaved: (p - 1)/(v m) and
 * (p - 1)/(v m + p - 1); naive: (p - 1) and (p - 1)/p. ZB-H1, for t_f =
 * t_b = t_w (the backward split into B and W of equal cost) and m >= p:
 * bubble time (p - 1)(t_f + t_b - t_w) against 1F1B's (p - 1)(t_f + t_b +
 * t_w) (Qi et al. 2024, section 3), i.e. (p - 1)/(3m) of the ideal time
 * m (t_f + t_b + t_w) and (p - 1)/(3m + p - 1) of the total: a third of
 * 1F1B's bubble time. Returns 0, or -1 for a configuration without a
 * formula (ZB-H1 with m < p). The timeline reaches these with buffered
 * sends for all five, with rendezvous sends for naive, GPipe and 1F1B
 * (top of this file). */
int pl_pp_bubble_formula(pl_pp_kind kind, int stages, int micro_batches, int chunks,
                         double *of_ideal, double *of_total);
/* The micro-batches' activations stage r holds at most, by the schedule's
 * formula: GPipe m; 1F1B min(p - r, m); interleaved (in chunk
 * activations) min(warm-up + 1, m v); naive 1; ZB-H1 min(p, m) on every
 * stage: "all workers maintain the same number of in-flight
 * micro-batches" (Qi et al. 2024, 3.1), so the maximum over the stages is
 * 1F1B's (stage 0's) while later stages hold more than in 1F1B, counting a
 * micro-batch from its F to the end of its W. Keeping 1F1B's min(p - r, m)
 * on every stage forces the last stage to run F, B, W per micro-batch and
 * leaves at least 2 (p - 1) of bubble, not (p - 1). */
int pl_pp_peak_formula(pl_pp_kind kind, int stages, int micro_batches, int chunks, int stage);

#ifdef __cplusplus
}
#endif

#endif
