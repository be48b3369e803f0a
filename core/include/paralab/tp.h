/*
 * paralab/tp.h — tensor parallelism (core/parallel/tp.c): Megatron-LM's
 * column- and row-parallel linear layers and the two operators between
 * them, for t ranks of one TP group.
 *
 * Sources: Shoeybi et al., "Megatron-LM: Training Multi-Billion Parameter
 * Language Models Using Model Parallelism", 2019, section 3 and figure 3
 * (f and g); Korthikanti et al., "Reducing Activation Recomputation in
 * Large Transformer Models", 2022, section 4.2 (sequence parallelism: g
 * and its conjugate become a reduce-scatter and an all-gather); Megatron's
 * megatron/core/tensor_parallel/mappings.py. Notes:
 * shared/REFERENCES-PARALLEL.md, "Tensor parallelism".
 *
 * A linear layer Y = X·W + b, W[k, n], is split over the t ranks in one
 * of two ways:
 *   column-parallel: rank i holds the columns [i n/t, (i+1) n/t) of W and
 *     of b, and computes its part of Y from the whole X: nothing to add up.
 *   row-parallel: rank i holds the rows [i k/t, (i+1) k/t) of W, reads its
 *     part of X (the column-parallel layer's output) and computes a
 *     partial Y: the t partials add up to X·W. The bias is added once,
 *     after the sum.
 * A column-parallel layer, a local nonlinearity, then a row-parallel one
 * (the MLP of a transformer) needs two collectives, one in each direction:
 *   f, entering the parallel region: identity forward, all-reduce backward
 *     (each rank's dX is a partial sum: its columns' contribution);
 *   g, leaving it: all-reduce forward (the partial Ys), identity backward.
 * With sequence parallelism the rows of the activations (the samples of
 * the micro-batch; the sequence, in a transformer) are split over the
 * ranks outside the parallel region, rank i holding rows [i R, (i+1) R),
 * R = rows / t: f becomes an all-gather forward and a reduce-scatter
 * backward, g a reduce-scatter forward and an all-gather backward (the
 * same bytes as the all-reduce: a ring all-reduce is a reduce-scatter then
 * an all-gather).
 *
 * Shapes: row-major float32 device buffers; "full" activations have
 * tp->rows rows, "local" ones tp->local_rows (rows / t under sequence
 * parallelism, else rows).
 *
 * Errors: the functions return 0, or a non-zero code with the reason in
 * tp->error: a collective's failure (the communicator's message) or a
 * kernel's cudaError_t. PL_TODO_STATUS (paralab/exercise.h) passes
 * through untouched.
 */
#ifndef PARALAB_TP_H
#define PARALAB_TP_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "paralab/comm.h"
#include "paralab/exercise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One rank's view of its TP group for one pass of a micro-batch. */
typedef struct pl_tp {
    pl_comm *comm;         /* the TP group's communicator; NULL: one device (t = 1) */
    int size, rank;        /* t and this rank's index in the group (1 and 0 without comm) */
    int sequence_parallel; /* rows split over the ranks outside the parallel region */
    int rows;              /* rows of the full activations: the micro-batch */
    int local_rows;        /* rows this rank holds outside: rows / t with SP, else rows */
    int accumulate;        /* backward adds into the gradients instead of overwriting */
    cudaStream_t stream;   /* everything is enqueued here */
    int layer;             /* the block the model is running (-1: the head; paralab/blocks.h
                              sets it), for a caller's own events */
    void *user;            /* the caller's, untouched */
    char error[256];       /* why the last call failed */
} pl_tp;

/* Fills *tp for a pass of `rows` rows. 0, or -1 with the reason in err when
 * sequence parallelism is on and rows does not divide by the group's size
 * (the message names both and the nearest row counts that do). */
int pl_tp_init(pl_tp *tp, pl_comm *comm, int sequence_parallel, int rows, cudaStream_t stream,
               char *err, size_t cap);

/* f forward: x[local_rows, cols] -> xfull[rows, cols]: a copy (none when
 * x == xfull), or with SP an all-gather of the ranks' rows. */
int pl_tp_f_forward(pl_tp *tp, const float *x, float *xfull, int cols);
/* f backward: the partial gradients dxfull[rows, cols] of every rank ->
 * dx[local_rows, cols]: an all-reduce (sum; dx may be dxfull), or with SP a
 * reduce-scatter (each rank gets the sum of its rows). */
int pl_tp_f_backward(pl_tp *tp, const float *dxfull, float *dx, int cols);
/* g forward: the partial outputs partial[rows, cols] -> y[local_rows,
 * cols]: an all-reduce (sum; y may be partial), or with SP a
 * reduce-scatter. */
int pl_tp_g_forward(pl_tp *tp, const float *partial, float *y, int cols);
/* g backward: dy[local_rows, cols] -> dyfull[rows, cols]: a copy (none
 * when dy == dyfull), or with SP an all-gather. */
int pl_tp_g_backward(pl_tp *tp, const float *dy, float *dyfull, int cols);

/* Sum n floats over the TP group in place (an all-reduce; nothing with
 * t = 1): the gradients of a replicated parameter whose inputs differ over
 * the group (LayerNorm under SP). */
int pl_tp_sum(pl_tp *tp, float *x, size_t n);
/* The same for an all-reduce of n values with op (PL_MAX on floats, PL_MIN
 * on int32s, ...), for the vocabulary-parallel cross-entropy. */
int pl_tp_all_reduce(pl_tp *tp, void *x, size_t n, pl_dtype type, pl_redop op);

/* Records a kernel's error: 0 for cudaSuccess, else the error (as an int)
 * with "what: cudaGetErrorName" in tp->error. */
int pl_tp_cuda(pl_tp *tp, cudaError_t e, const char *what);

/* In a function that returns int and has a pl_tp *tp: returns the call's
 * result when it is not 0 — a code of the functions above (their reason
 * already in tp->error) or a kernel's cudaError_t (then named in
 * tp->error: "pl_k_matmul(...): cudaErrorInvalidValue"). */
#define PL_TP_TRY(call)                                                                            \
    do {                                                                                           \
        int rc_ = (int)(call);                                                                     \
        if (rc_) {                                                                                 \
            if (!tp->error[0] && rc_ != PL_TODO_STATUS) pl_tp_cuda(tp, (cudaError_t)rc_, #call);   \
            return rc_;                                                                            \
        }                                                                                          \
    } while (0)

/* The column- and row-parallel linear layers, forward and backward: Lab
 * 08's exercise, with the reference below. k: the layer's input width, n:
 * its output width; each function is given this rank's shard.
 *
 *   column_forward:  xfull = f(x);  z[rows, n/t] = xfull · W[k, n/t] + b[n/t]
 *                    x: [local_rows, k]; xfull [rows, k] is kept for backward
 *   row_forward:     y[local_rows, n] = g(a[rows, k/t] · W[k/t, n]) + b[n]
 *                    partial: [rows, n] scratch; b added once, after g
 *   row_backward:    dyfull = g'(dy) [rows, n]; dW[k/t, n] = aᵀ · dyfull;
 *                    db[n] = the sum over dy's local rows; da[rows, k/t] =
 *                    dyfull · Wᵀ
 *   column_backward: dW[k, n/t] = xfullᵀ · dz; db[n/t] = the sum over dz's
 *                    rows; dxfull[rows, k] = dz · Wᵀ (a partial sum);
 *                    dx[local_rows, k] = f'(dxfull)
 * Gradients are overwritten, or added to with tp->accumulate. Every
 * function returns 0 or an error as above. */
typedef struct pl_tp_linear_ops {
    int (*column_forward)(pl_tp *tp, const float *x, float *xfull, const float *W, const float *b,
                          float *z, int k, int n);
    int (*row_forward)(pl_tp *tp, const float *a, const float *W, const float *b, float *partial,
                       float *y, int k, int n);
    int (*row_backward)(pl_tp *tp, const float *dy, const float *a, const float *W, float *dW,
                        float *db, float *dyfull, float *da, int k, int n);
    int (*column_backward)(pl_tp *tp, const float *dz, const float *xfull, const float *W,
                           float *dW, float *db, float *dxfull, float *dx, int k, int n);
} pl_tp_linear_ops;

/* The reference implementation (the one Labs 09-11 run). */
extern const pl_tp_linear_ops pl_tp_reference_ops;

#ifdef __cplusplus
}
#endif

#endif
