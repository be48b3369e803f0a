/*
 * paralab/blocks.h — the block model Labs 08-11 train (core/model/blocks.c):
 * residual MLP blocks in the shape of a transformer's feed-forward half,
 * between an input layer and a classifier,
 *
 *   input:    x = X · W0 + b0                    X: [B, inputs], W0: [inputs, h]
 *   block j:  x = x + W2 · GELU(W1 · LN(x) + b1) + b2     (row-vector form:
 *             x + GELU(LN(x) · W1 + b1) · W2 + b2), W1: [h, f], W2: [f, h]
 *   head:     logits = LNf(x) · Wc + bc          Wc: [h, classes]
 *   loss:     softmax cross-entropy of the logits, summed over the rows
 *             times `scale` (1 / the global batch: the mean's gradient)
 *
 * with LN a LayerNorm (gain and bias per unit, eps 1e-5: paralab/nn.h), f
 * = 4h the feed-forward width (the transformer's, Vaswani et al. 2017,
 * section 3.3), GELU in its tanh form. The sources of the parts:
 * Megatron-LM's ParallelMLP (Shoeybi et al. 2019, section 3), the pre-LN
 * residual of GPT-2 (Radford et al. 2019, section 2.3).
 *
 * A part: what one rank runs and holds. Blocks [first, last) of the model,
 * with the input layer (input = 1, on the first stage of a pipeline) and
 * the head (head = 1, on the last), each block sharded over `tp` ranks as
 * Megatron does (paralab/tp.h): W1 and b1 column-parallel (rank i: the
 * columns [i f/t, (i+1) f/t)), W2 row-parallel (its rows [i f/t, (i+1)
 * f/t)); LayerNorm, b2, the input layer and LNf replicated; the classifier
 * column-parallel over the classes rounded up to a multiple of t (rank i:
 * classes [i Cp/t, (i+1) Cp/t); the padding's weights are zero and stay
 * zero, and never change a loss: vocabulary-parallel cross-entropy,
 * paralab/nn.h). The whole model is the part {0, L, input, head, tp 1}.
 *
 * A part's parameters are one contiguous buffer (and its gradients and
 * AdamW moments three more of the same layout), in the order they run:
 *
 *   [input: W0 [inputs, h], b0 [h]]
 *   [block j: ln_g [h], ln_b [h], b2 [h]  | W1 [h, f/t], b1 [f/t], W2 [f/t, h]]  j = first..last-1
 *   [head:    lnf_g [h], lnf_b [h]        | Wc [h, Cp/t], bc [Cp/t]]
 *
 * (replicated | sharded), so a bucket of data parallelism, a ZeRO shard, a
 * stage's blocks and the gradients TP must sum (the replicated ones, under
 * sequence parallelism) are each one range of it.
 *
 * Initialisation (pl_blocks_init): the whole model drawn on the host from
 * the seed alone, tensor by tensor in the order above, as PyTorch's
 * defaults: a linear layer's W and b uniform in ±1/sqrt(its inputs)
 * (nn.Linear), a LayerNorm's gain 1 and bias 0 (nn.LayerNorm); a part
 * takes its slice of it, so the gathered weights are the same bits for
 * every t and every split into stages (torchtitan docs/debugging.md;
 * picotron).
 *
 * Errors: functions return 0 / cudaSuccess, or -1 / the first failing
 * call's error, with a message in err or in tp->error that names the bad
 * value and what is allowed.
 */
#ifndef PARALAB_BLOCKS_H
#define PARALAB_BLOCKS_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "paralab/tensor.h"
#include "paralab/tp.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PL_BLOCKS_MAX 64 /* blocks in a model */

typedef struct pl_blocks_config {
    int inputs;  /* features of a sample (64 for the digits) */
    int hidden;  /* h, the width of the residual stream */
    int ffn;     /* f, the feed-forward width: 4h */
    int layers;  /* L, the blocks */
    int classes; /* 10 for the digits */
} pl_blocks_config;

/* The digits' model: 64 inputs, h = 64, f = 256, L = 2 blocks, 10
 * classes; 71,370 parameters. AdamW at lr 2e-3 and a batch of 64 reach
 * >= 95 % test accuracy in 20 epochs (Lab 08's make check trains it on 1, 2,
 * 4 and 8 TP ranks). */
pl_blocks_config pl_blocks_default(void);
/* The same with hidden h (f = 4h) and L blocks. */
pl_blocks_config pl_blocks_config_make(int hidden, int layers);

/* 0 when t ranks can share the model's blocks (t divides h and f; 1..64);
 * else -1 and a message naming t and listing the degrees up to max_t (the
 * devices there are; 64 or less) that work, e.g. "--devices 3: the hidden
 * width does not divide by it (h = 64, f = 4h = 256); tensor parallelism
 * can split this model over 1, 2, 4 or 8 ranks (of the devices here)".
 * Also checks the config itself (1 <= h, inputs, classes <= 4096; 1 <= L
 * <= PL_BLOCKS_MAX). `what` names t in the message ("--devices"). */
int pl_blocks_check(const pl_blocks_config *c, int t, const char *what, int max_t, char *err,
                    size_t cap);
/* The TP degrees 1..max_t that divide h and f, as "1, 2, 4 or 8" into buf;
 * returns how many there are. */
int pl_blocks_degrees(const pl_blocks_config *c, int max_t, char *buf, size_t cap);

/* What one rank runs and holds. */
typedef struct pl_blocks_part {
    int first, last; /* blocks [first, last) */
    int input, head; /* holds the input layer / the head */
    int tp, tp_rank; /* its shard: rank tp_rank of tp */
} pl_blocks_part;

/* The whole model, unsharded. */
pl_blocks_part pl_blocks_whole(const pl_blocks_config *c);

/* Where each tensor of a block lies in its part's buffer (floats from the
 * start). begin..end is the block's range; begin..shard the replicated
 * ln_g, ln_b, b2. */
typedef struct pl_block_offsets {
    long begin, ln_g, ln_b, b2, shard, w1, b1, w2, end;
} pl_block_offsets;

typedef struct pl_blocks_layout {
    pl_blocks_config cfg;
    pl_blocks_part part;
    int ffn_local;                         /* f / t */
    int classes_padded;                    /* Cp: classes rounded up to a multiple of t */
    int classes_local;                     /* Cp / t: this rank's logits */
    int class0;                            /* its first class: tp_rank * Cp / t */
    int classes_valid;                     /* of its classes, the real ones (0..classes_local) */
    long in_w, in_b, in_end;               /* the input layer (-1 without it) */
    pl_block_offsets block[PL_BLOCKS_MAX]; /* for first <= j < last */
    long head_begin, lnf_g, lnf_b, head_shard, wc, bc, head_end; /* -1 without the head */
    long nparams;                                                /* floats in the buffer */
} pl_blocks_layout;

/* The layout of a part (checked: pl_blocks_check, 0 <= first < last <= L
 * unless an input- or head-only part has first == last, 0 <= tp_rank <
 * tp). 0, or -1 with the reason. */
int pl_blocks_layout_make(pl_blocks_layout *l, const pl_blocks_config *c, pl_blocks_part part,
                          char *err, size_t cap);
/* The whole model's parameter count. */
long pl_blocks_count(const pl_blocks_config *c);

/* The whole model's initial parameters for seed (pl_blocks_count floats,
 * the whole part's layout). */
void pl_blocks_init_whole(const pl_blocks_config *c, unsigned long long seed, float *whole);
/* A part's slice of the whole model's parameters (part: l->nparams floats;
 * the classifier's padding zero). */
void pl_blocks_slice(const pl_blocks_layout *l, const float *whole, float *part);
/* The inverse for the values a part holds: writes them into their places
 * in whole (which it leaves alone elsewhere). Gathering every rank's part
 * this way rebuilds the whole model. */
void pl_blocks_unslice(const pl_blocks_layout *l, const float *part, float *whole);
/* FNV-1a of n floats' bytes: the hash a lab prints. */
unsigned pl_blocks_hash(const float *x, long n);

/* The most allocations one activation set makes: 8 per block (x, ln, mean,
 * rstd, xfull, z1, a, dy), the head's 12 (the last x, ln, mean, rstd, xfull;
 * logits, rowmax, sumexp, target, losses, pred, dlogits), the input and dinput. */
#define PL_BLOCKS_ACTS_MAX (8 * PL_BLOCKS_MAX + 14)

/* What a forward keeps for its backward: one micro-batch in flight on one
 * part (a pipeline keeps several). For `rows` rows (local_rows =
 * rows / t under sequence parallelism). Each tensor is its own device
 * allocation (so the simulated GPU checks a kernel's accesses against that
 * tensor's bounds), and `bytes` (pl_blocks_acts_bytes) is exactly what they
 * take: the memory a pipeline's stage holds for its micro-batches in
 * flight, measured from the device's allocations, is an exact multiple of
 * one set. */
typedef struct pl_blocks_acts {
    int rows, local_rows;
    int split;    /* made with the B/W split's buffers (pl_blocks_acts_alloc_split) */
    size_t bytes; /* the bytes its allocations take: pl_blocks_acts_bytes */
    int nallocs;  /* the device allocations it made, for pl_blocks_acts_free */
    void *allocs[PL_BLOCKS_ACTS_MAX];
    float *input;                 /* the part's input: X [local, inputs] or x [local, h] */
    float *x[PL_BLOCKS_MAX + 1];  /* the residual stream entering block j (x[last]: the head's) */
    float *ln[PL_BLOCKS_MAX + 1]; /* LN(x) [local, h] (ln[last]: LNf) */
    float *mean[PL_BLOCKS_MAX + 1], *rstd[PL_BLOCKS_MAX + 1]; /* [local] */
    float *xfull[PL_BLOCKS_MAX + 1];             /* f(LN(x)) [rows, h]: the column-parallel input */
    float *z1[PL_BLOCKS_MAX], *a[PL_BLOCKS_MAX]; /* W1's output, GELU of it [rows, f/t] */
    float *logits;                               /* [rows, Cp/t] */
    float *rowmax, *sumexp, *target, *losses;    /* [rows] */
    int *pred;                                   /* [rows] */
    /* What B keeps for W (split only; NULL otherwise), per micro-batch from
     * its B until its W: */
    float *dy[PL_BLOCKS_MAX];  /* g'(the gradient of block j's output) [rows, h]: W2's and b2's */
    float *dz1[PL_BLOCKS_MAX]; /* the gradient of W1's output [rows, f/t]: W1's and b1's. It
                                  takes z1[j]'s place (B has used z1; W does not need it) */
    float *dlogits;            /* the gradient of the logits [rows, Cp/t]: Wc's and bc's */
    float *dinput;             /* the gradient of the input layer's output [local, h]: W0's, b0's */
    /* 1 from a piece's B until its W (block j at [j], the head at
     * [PL_BLOCKS_MAX], the input layer at [PL_BLOCKS_MAX + 1]): W refuses
     * without it, and a forward or a second B refuses with it */
    unsigned char w_due[PL_BLOCKS_MAX + 2];
} pl_blocks_acts;

/* A part on the current device: parameters, gradients, AdamW moments,
 * scratch, and one set of activations (acts) for micro-batches of up to
 * max_rows rows. */
typedef struct pl_blocks {
    pl_blocks_layout lay;
    int max_rows;
    pl_tensor params, grads, opt_m, opt_v; /* 1 x nparams each */
    int step;                              /* optimizer steps taken */
    pl_blocks_acts acts;
    float *d_x, *d_ln, *d_full, *d_ffn, *d_out; /* scratch for backward */
    float *loss_sum; /* device: one float, the sum of the last loss's per-row losses */
    int *correct;    /* device: rows predicted right since pl_blocks_reset_correct */
} pl_blocks;

/* Allocates a part for micro-batches of up to max_rows rows, local_rows of
 * them on this rank outside the parallel region (max_rows / t under
 * sequence parallelism, else max_rows), and loads its slice of the initial
 * parameters for seed. */
cudaError_t pl_blocks_create(pl_blocks *m, const pl_blocks_layout *lay, int max_rows,
                             int local_rows, unsigned long long seed);
/* The same without the parameter, gradient and optimizer buffers: params,
 * grads, opt_m and opt_v are left empty, for a caller that keeps them
 * elsewhere and sets them as views (pl_tensor_view) before each use: ZeRO's
 * units (paralab/zero.h), whose parameters and gradients live in its
 * buckets and shards. No initial parameters are loaded. */
cudaError_t pl_blocks_create_bare(pl_blocks *m, const pl_blocks_layout *lay, int max_rows,
                                  int local_rows);
void pl_blocks_destroy(pl_blocks *m);
/* Another set of activations for a part (a pipeline's micro-batches in
 * flight), zeroed; freed by pl_blocks_acts_free. A cudaMalloc per tensor,
 * pl_blocks_acts_bytes(lay, max_rows, local_rows, 0) bytes in all. */
cudaError_t pl_blocks_acts_alloc(pl_blocks_acts *a, const pl_blocks_layout *lay, int max_rows,
                                 int local_rows);
/* The same, NOT zeroed (a pipeline allocates a set as a micro-batch's
 * forward starts, and a memset would be charged to that forward on the
 * modeled clock; PyTorch's caching allocator does not zero either: the
 * forward writes every tensor before anything reads it), and with split =
 * 1 also the buffers the B/W split keeps from B until W (dy, dlogits,
 * dinput above; dz1 lies in z1). */
cudaError_t pl_blocks_acts_alloc_split(pl_blocks_acts *a, const pl_blocks_layout *lay, int max_rows,
                                       int local_rows, int split);
void pl_blocks_acts_free(pl_blocks_acts *a);
/* Exactly the bytes of those allocations (what the simulated device counts
 * them as: cudaMemGetInfo), for B = max_rows rows, R = local_rows (B / t
 * under sequence parallelism, else B), h, f/t and Cp/t as in the layout;
 * the tensors, in this order:
 *   the input: R x inputs (the input layer's X) or R x h (the residual stream)
 *   per block j: x[j], ln[j] R x h each; mean[j], rstd[j] R each; xfull[j]
 *     B x h (sequence parallelism only: else it is ln[j]); z1[j], a[j] B x f/t
 *     each; split: dy[j] B x h
 *   the head: x[last], ln[last] R x h; mean, rstd R; xfull B x h (SP only);
 *     logits B x Cp/t; rowmax, sumexp, target, losses B; pred B ints;
 *     split: dlogits B x Cp/t
 *   no head: x[last] R x h (the part's output)
 *   split with the input layer: dinput R x h
 * (floats and ints of 4 bytes). 0 for rows out of range (as the alloc
 * refuses them: 1 <= local_rows <= max_rows). */
size_t pl_blocks_acts_bytes(const pl_blocks_layout *lay, int max_rows, int local_rows, int split);

/* ---- the memory a run takes ----------------------------------------------
 *
 * In build/sim every simulated GPU's memory is this machine's memory, so a
 * run of Labs 08-11 at the widest --hidden and the most --layers their
 * options allow can ask for many times the RAM there is (and be killed by
 * the kernel's OOM killer with no message). A lab describes its run as a
 * pl_blocks_run and asks pl_blocks_run_fits before it allocates anything.
 */
typedef struct pl_blocks_run {
    pl_blocks_config model;
    int dp, tp, pp;        /* the degrees, 1 where unused: dp tp pp ranks, a device each */
    int chunks;            /* model chunks per pipeline stage (1: none) */
    int batch;             /* the global batch: samples per step, all replicas */
    int micro_batches;     /* a replica's rows cut into m micro-batches (a pipeline's m,
                              ZeRO's --accumulate; 1: none) */
    int in_flight;         /* activation sets a rank holds per chunk beyond its part's own
                              (a pipeline's micro-batches in flight: m is an upper bound, made
                              with the B/W split's buffers; 0: none) */
    int sequence_parallel; /* TP's: R = rows / tp outside the parallel region */
    int zero_stage;        /* -1: no ZeRO (each rank holds its part's parameters, gradients
                              and AdamW moments); 0..3: ZeRO over the dp ranks (tp = pp = 1) */
    int extra_states;      /* whole stage-0 training states more on every rank, each with an
                              activation set (Lab 11's plain-DP engine beside it: 1) */
    int host_models;       /* whole-model float arrays the lab writes on the host (the
                              gathered weights, the copies it compares; an array allocated
                              but never written takes no memory and does not count) */
} pl_blocks_run;

/* What pl_blocks_run_bytes counts, in bytes, all ranks together. */
typedef struct pl_blocks_run_memory {
    size_t states;      /* parameters, gradients, AdamW m and v (fp32) of every rank's part
                           (ZeRO: its stage's shards and full buffers, and its working
                           buckets), and the extra_states */
    size_t activations; /* every rank's activation sets (pl_blocks_acts_bytes of its
                           heaviest part, each allocation rounded up to a 4 KiB page) and
                           backward scratch (d_x, d_ln, d_full, d_ffn, d_out) */
    size_t host;        /* host arrays: the whole model each rank draws to slice its part
                           from (pl_blocks_init_whole: Ψ floats, and the part), and
                           host_models whole models */
    size_t total;       /* the sum */
} pl_blocks_run_memory;

/* An upper-ish estimate of the bytes a run takes, the simulated devices'
 * memory (which in build/sim is this machine's) and the host arrays above
 * together; the parts into *parts (may be NULL). Counted from the layouts
 * the run makes (pl_blocks_layout_make, pl_blocks_acts_bytes, ZeRO's
 * padded units), not measured: it leaves out the program's own memory (a
 * default run of Labs 08-11 peaks at 25-85 MB of RSS) and the per-rank
 * transient buffers of the collectives; an array allocated but never
 * written (calloc, untouched pages) takes no memory and is not counted.
 * Units: bytes; fp32 and int32 tensors, 4 bytes an element.
 *
 * Measured against the peak RSS of runs (build/sim, /usr/bin/time -v
 * "Maximum resident set size", --no-viz --epochs 1, the program's own
 * 25-85 MB included in the RSS), estimate / RSS:
 *   lab08 --hidden 256 --layers 8                  199 / 178 MB = 1.12
 *   lab09 --hidden 256 --layers 8                  215 / 175 MB = 1.23
 *   lab10 --hidden 256 --layers 8                  392 / 321 MB = 1.22
 *   lab11 --hidden 256 --layers 8                 1032 / 1102 MB = 0.94
 *   lab11 --hidden 512 --layers 4 --stage 0
 *     (its first 120 s)                           2853 / 2854 MB = 1.00
 *   lab08 --hidden 512 --layers 16 (first 40 s)   1523 / 1213 MB = 1.26
 * (the last two stopped early: their peak may be higher), within 0.9-1.3
 * of the real peak: pl_blocks_run_fits adds 128 MiB for the program
 * (PL_RUN_PROGRAM_BYTES) on top. 0 for a run that is not valid (a degree below 1, a model
 * pl_blocks_check refuses). */
size_t pl_blocks_run_bytes(const pl_blocks_run *r, pl_blocks_run_memory *parts);

/* The bytes of memory this machine can give a run, and where the figure
 * comes from into source (cap bytes; may be NULL): PARALAB_MEMORY_LIMIT
 * when set (bytes, or a number with a K, M, G or T suffix: KiB ... TiB;
 * tests set it for a limit that does not depend on the machine), else
 * MemAvailable of /proc/meminfo, lowered to what the process's cgroup
 * (v2: memory.max less memory.current) still allows; sysconf's available
 * pages where /proc/meminfo cannot be read. 0 when none of these can be
 * read; (size_t)-1 when PARALAB_MEMORY_LIMIT is not a number (source says
 * so). */
size_t pl_host_memory_available(char *source, size_t cap);

/* What pl_blocks_run_fits allows the program itself besides the estimate
 * (its code, the digits, the trace: a default run of Labs 08-11 peaks at
 * 25-85 MB of RSS). */
#define PL_RUN_PROGRAM_BYTES ((size_t)128 << 20)

/* 0 when the run's estimate (pl_blocks_run_bytes: in build/sim all of it;
 * on real GPUs the host arrays only) and PL_RUN_PROGRAM_BYTES fit in
 * pl_host_memory_available (or that cannot be read); else -1 and a message in err, in the labs'
 * words for a refused option: the values, the bytes needed, the memory
 * there is and where that figure comes from, and the widest --hidden that
 * fits with these --layers and the most --layers with this --hidden, e.g.
 * "--hidden 1024 --layers 64: this run needs about 113.6 GiB of memory
 * (121,963,561,696 bytes: the 537,408,522 parameters' values, gradients
 * and AdamW moments and the activations, on 8 simulated GPUs whose memory
 * is this machine's, and 128 MiB for the program itself), and this
 * machine has 23.1 GiB available (MemAvailable in /proc/meminfo); with
 * --layers 64 the widest that fits is --hidden 459, with --hidden 1024
 * the most is --layers 12" (Lab 11 at stage 3). It names --batch too where the activations are
 * a quarter of the estimate or more. A bad PARALAB_MEMORY_LIMIT: -1 and
 * the message naming it. */
int pl_blocks_run_fits(const pl_blocks_run *r, char *err, size_t cap);

/* The pieces, for a lab that shows them one by one. Every function runs on
 * tp->stream for tp->rows rows with the linear layers of ops (NULL: the
 * reference, pl_tp_reference_ops), and returns 0 or an error in tp->error.
 *
 * The input layer: acts->x[first] = X · W0 + b0, X [local_rows, inputs]. */
int pl_blocks_input_forward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const float *X);
/* Block j: acts->x[j + 1] = the block of acts->x[j]. */
int pl_blocks_block_forward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const pl_tp_linear_ops *ops,
                            int j);
/* The head: LNf, f, the column-parallel classifier: acts->logits. */
int pl_blocks_head_forward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const pl_tp_linear_ops *ops);
/* The vocabulary-parallel loss of the logits for labels [rows] (device;
 * the same on every TP rank): acts->losses, *loss_sum (their sum), the
 * rows predicted right added to *correct, and d_out = the gradient of
 * scale * sum(losses) with respect to this rank's logits. Three
 * all-reduces over the TP group (max, target logit, sum of exp) and one
 * for the predictions. */
int pl_blocks_loss(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const int *labels, float scale);
/* Backward of the head from the loss's gradient: d_x = the gradient of
 * the residual stream entering it [local_rows, h]. */
int pl_blocks_head_backward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp,
                            const pl_tp_linear_ops *ops);
/* Backward of block j: d_x (the gradient of its output) becomes the
 * gradient of its input; its parameters' gradients are written (added with
 * tp->accumulate). */
int pl_blocks_block_backward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp,
                             const pl_tp_linear_ops *ops, int j);
/* Backward of the input layer from d_x. */
int pl_blocks_input_backward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const float *X);

/* The backward split in two (Qi et al., "Zero Bubble Pipeline
 * Parallelism", ICLR 2024, section 2): B, the gradient of the input (what
 * the stage before waits for), and W, the gradients of the weights
 * (nobody waits: a schedule may defer it). They need activations made by
 * pl_blocks_acts_alloc_split (split = 1; pl_blocks_create's m->acts is
 * made without), run the reference linear layers (the kernels directly,
 * never a pl_tp_linear_ops table), and give the SAME BITS as the fused
 * backward above: each gradient tensor comes from the same kernel on the
 * same inputs, and with tp->accumulate the micro-batches' contributions to
 * a tensor are added in the order their W (or, for the gradients B
 * writes, their B) runs, so B0 B1 B2 W0 W1 W2 equals BW0 BW1 BW2 bit for
 * bit. Any TP degree, with or without sequence
 * parallelism: W needs no collective (under SP, b2's gradient sums this
 * rank's rows of the gathered dy, the same values the fused sums).
 *
 * Which gradients each half writes:
 *   B of block j: ln_g, ln_b (they come out of the LayerNorm backward
 *     kernel with the input's gradient: splitting them off would run it
 *     twice), and d_x: the gradient of its output becomes that of its input.
 *     Keeps dy[j] and dz1[j].
 *   W of block j: W1, b1, W2, b2.
 *   B of the head: lnf_g, lnf_b, and d_x = the gradient of the residual
 *     stream entering it, from the loss's d_out (pl_blocks_loss). Keeps
 *     dlogits (a copy of d_out, which the next micro-batch's loss
 *     overwrites).
 *   W of the head: Wc, bc.
 *   B of the input layer: no gradient; keeps d_x in dinput.
 *   W of the input layer: W0, b0 (from X, or a->input when X is NULL).
 * tp->accumulate applies to what each half writes: a step's first B and
 * first W overwrite (or the gradients are zeroed and both add), as the
 * first BW does. W runs with the same tp (rows, TP rank, SP) as its B; the
 * head's B reads the d_out of the loss run last, so a micro-batch's
 * pl_blocks_loss comes right before its B (a later loss overwrites d_out).
 * A piece's W needs its B on the same activations first, and the set can
 * take no forward and no second B until that W has run (w_due above):
 * each refuses with a message in tp->error naming the piece. j outside the
 * part's blocks [first, last) is refused the same way, as is a part
 * without the head or the input layer for those pieces. */
int pl_blocks_block_backward_input(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, int j);
int pl_blocks_block_backward_weight(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, int j);
int pl_blocks_head_backward_input(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp);
int pl_blocks_head_backward_weight(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp);
int pl_blocks_input_backward_input(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp);
int pl_blocks_input_backward_weight(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const float *X);

/* The whole part, in that order. forward: X is the samples (the part has
 * the input layer) or the residual stream [local_rows, h] (it does not);
 * without the head, out receives the residual stream leaving the last
 * block ([local_rows, h], may be NULL). backward: without the head, dout is
 * the gradient of out; without the input layer, dx receives the gradient
 * of X (may be NULL). */
int pl_blocks_forward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const pl_tp_linear_ops *ops,
                      const float *X, float *out);
int pl_blocks_backward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const pl_tp_linear_ops *ops,
                       const float *X, const float *dout, float *dx);
/* pl_blocks_backward split into B and W (above), with its conventions:
 * backward_input runs the head's B (or takes dout without the head), every
 * block's B from the last, and the input layer's B (or writes the gradient
 * of X into dx without it; dx may be NULL; B does not read X: it is there
 * for the same call as pl_blocks_backward); backward_weight runs every W
 * (the head's, the blocks' from the last, the input layer's with X). */
int pl_blocks_backward_input(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const float *X,
                             const float *dout, float *dx);
int pl_blocks_backward_weight(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const float *X);

/* Once per optimizer step, after every micro-batch's backward: under
 * sequence parallelism, the gradients of the replicated parameters (LN's,
 * b2, the input layer, LNf) summed over the TP group — each rank saw only
 * its rows (Megatron's finalize_model_grads). Nothing otherwise: under
 * plain TP those gradients are already the same bits on every rank. One
 * all-reduce per block and one each for the input layer and the head. */
int pl_blocks_finish_grads(pl_blocks *m, pl_tp *tp);

/* AdamW (beta 0.9, 0.999, eps 1e-8, weight decay 0.01) on the part's
 * parameters from its gradients; the classifier's padding stays zero. */
cudaError_t pl_blocks_adamw(pl_blocks *m, float lr, cudaStream_t stream);
/* SGD with momentum 0.9, no weight decay (the checks' optimizer: its step
 * is linear in the gradient, so the last-bit differences of sums taken in
 * another order stay at that level, where AdamW's division by the root of
 * the second moment lets them grow). */
cudaError_t pl_blocks_sgd(pl_blocks *m, float lr, cudaStream_t stream);
cudaError_t pl_blocks_reset_correct(pl_blocks *m, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
