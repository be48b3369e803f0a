/* tp.c — see paralab/tp.h. */
#include <stdio.h>
#include <string.h>

#include "paralab/nn.h"
#include "paralab/tp.h"

int pl_tp_init(pl_tp *tp, pl_comm *comm, int sequence_parallel, int rows, cudaStream_t stream,
               char *err, size_t cap)
{
    memset(tp, 0, sizeof *tp);
    tp->comm = comm;
    tp->size = comm ? pl_comm_size(comm) : 1;
    tp->rank = comm ? pl_comm_rank(comm) : 0;
    tp->sequence_parallel = sequence_parallel;
    tp->rows = rows;
    tp->stream = stream;
    tp->layer = -1;
    if (rows < 1) {
        if (cap) snprintf(err, cap, "a micro-batch of %d rows: it needs at least one", rows);
        return -1;
    }
    if (sequence_parallel && rows % tp->size) {
        int lo = rows / tp->size * tp->size, hi = lo + tp->size;
        if (cap) {
            if (lo > 0)
                snprintf(err, cap,
                         "sequence parallelism splits the %d rows of a micro-batch over %d TP "
                         "ranks: %d does not divide by %d (the nearest row counts that do are "
                         "%d and %d)",
                         rows, tp->size, rows, tp->size, lo, hi);
            else
                snprintf(err, cap,
                         "sequence parallelism splits the %d rows of a micro-batch over %d TP "
                         "ranks: every rank needs a row (at least %d rows)",
                         rows, tp->size, hi);
        }
        return -1;
    }
    tp->local_rows = sequence_parallel ? rows / tp->size : rows;
    return 0;
}

int pl_tp_cuda(pl_tp *tp, cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return 0;
    snprintf(tp->error, sizeof tp->error, "%s: %s", what, cudaGetErrorName(e));
    return (int)e;
}

/* A collective's result: 0, or its code with the communicator's message. */
static int comm_result(pl_tp *tp, pl_comm_result r, const char *what)
{
    if (r == PL_COMM_OK) return 0;
    snprintf(tp->error, sizeof tp->error, "%s over the TP group: %s", what,
             pl_comm_last_error(tp->comm));
    return (int)r;
}

static int copy(pl_tp *tp, float *dst, const float *src, size_t n)
{
    if (dst == src || !n) return 0;
    return pl_tp_cuda(
        tp, cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice, tp->stream),
        "cudaMemcpyAsync");
}

/* Sum over the group of full [rows, cols] buffers into local rows: an
 * all-reduce, or a reduce-scatter under SP. The identity with t = 1. */
static int reduce_rows(pl_tp *tp, const float *full, float *local, int cols, const char *what)
{
    size_t n = (size_t)tp->local_rows * (size_t)cols;
    if (!tp->comm || tp->size == 1) return copy(tp, local, full, n);
    if (tp->sequence_parallel)
        return comm_result(
            tp, pl_reduce_scatter(tp->comm, full, local, n, PL_FLOAT32, PL_SUM, tp->stream), what);
    return comm_result(tp, pl_all_reduce(tp->comm, full, local, n, PL_FLOAT32, PL_SUM, tp->stream),
                       what);
}

/* Local rows -> full rows: a copy, or an all-gather under SP. */
static int gather_rows(pl_tp *tp, const float *local, float *full, int cols, const char *what)
{
    size_t n = (size_t)tp->local_rows * (size_t)cols;
    if (!tp->comm || tp->size == 1 || !tp->sequence_parallel) return copy(tp, full, local, n);
    return comm_result(tp, pl_all_gather(tp->comm, local, full, n, PL_FLOAT32, tp->stream), what);
}

int pl_tp_f_forward(pl_tp *tp, const float *x, float *xfull, int cols)
{
    return gather_rows(tp, x, xfull, cols, "f forward (all-gather)");
}

int pl_tp_f_backward(pl_tp *tp, const float *dxfull, float *dx, int cols)
{
    return reduce_rows(tp, dxfull, dx, cols,
                       tp->sequence_parallel ? "f backward (reduce-scatter)"
                                             : "f backward (all-reduce)");
}

int pl_tp_g_forward(pl_tp *tp, const float *partial, float *y, int cols)
{
    return reduce_rows(tp, partial, y, cols,
                       tp->sequence_parallel ? "g forward (reduce-scatter)"
                                             : "g forward (all-reduce)");
}

int pl_tp_g_backward(pl_tp *tp, const float *dy, float *dyfull, int cols)
{
    return gather_rows(tp, dy, dyfull, cols, "g backward (all-gather)");
}

int pl_tp_all_reduce(pl_tp *tp, void *x, size_t n, pl_dtype type, pl_redop op)
{
    if (!tp->comm || tp->size == 1 || !n) return 0;
    return comm_result(tp, pl_all_reduce(tp->comm, x, x, n, type, op, tp->stream), "all-reduce");
}

int pl_tp_sum(pl_tp *tp, float *x, size_t n)
{
    return pl_tp_all_reduce(tp, x, n, PL_FLOAT32, PL_SUM);
}

/* ---- the reference column- and row-parallel layers ---------------------------------- */

static int column_forward(pl_tp *tp, const float *x, float *xfull, const float *W, const float *b,
                          float *z, int k, int n)
{
    int nl = n / tp->size;
    PL_TP_TRY(pl_tp_f_forward(tp, x, xfull, k)); /* f: every rank needs the whole input */
    PL_TP_TRY(pl_k_matmul(z, xfull, W, tp->rows, nl, k, PL_NN, 0, tp->stream));
    PL_TP_TRY(pl_k_bias_add(z, b, tp->rows, nl, tp->stream)); /* its own columns of b */
    return 0;
}

static int row_forward(pl_tp *tp, const float *a, const float *W, const float *b, float *partial,
                       float *y, int k, int n)
{
    int kl = k / tp->size;
    PL_TP_TRY(pl_k_matmul(partial, a, W, tp->rows, n, kl, PL_NN, 0, tp->stream));
    PL_TP_TRY(pl_tp_g_forward(tp, partial, y, n));                 /* g: add up the partial sums */
    PL_TP_TRY(pl_k_bias_add(y, b, tp->local_rows, n, tp->stream)); /* once, after the sum */
    return 0;
}

static int row_backward(pl_tp *tp, const float *dy, const float *a, const float *W, float *dW,
                        float *db, float *dyfull, float *da, int k, int n)
{
    int kl = k / tp->size;
    PL_TP_TRY(pl_k_bias_grad(db, dy, tp->local_rows, n, tp->accumulate, tp->stream));
    PL_TP_TRY(pl_tp_g_backward(tp, dy, dyfull, n)); /* g': identity (an all-gather under SP) */
    PL_TP_TRY(pl_k_matmul(dW, a, dyfull, kl, n, tp->rows, PL_TN, tp->accumulate, tp->stream));
    PL_TP_TRY(pl_k_matmul(da, dyfull, W, tp->rows, kl, n, PL_NT, 0, tp->stream));
    return 0;
}

static int column_backward(pl_tp *tp, const float *dz, const float *xfull, const float *W,
                           float *dW, float *db, float *dxfull, float *dx, int k, int n)
{
    int nl = n / tp->size;
    PL_TP_TRY(pl_k_matmul(dW, xfull, dz, k, nl, tp->rows, PL_TN, tp->accumulate, tp->stream));
    PL_TP_TRY(pl_k_bias_grad(db, dz, tp->rows, nl, tp->accumulate, tp->stream));
    PL_TP_TRY(pl_k_matmul(dxfull, dz, W, tp->rows, k, nl, PL_NT, 0, tp->stream));
    return pl_tp_f_backward(tp, dxfull, dx, k); /* f': add up every rank's part of dx */
}

const pl_tp_linear_ops pl_tp_reference_ops = {column_forward, row_forward, row_backward,
                                              column_backward};
