/*
 * Lab 08 — the reference solution. Read it after trying exercise.c.
 *
 * The whole of tensor parallelism's communication is f and g: one
 * collective each way per pair of layers. The column-parallel layer needs
 * no communication forward (every rank has the whole input) and its
 * backward all-reduces dx (each rank's dz · Wᵀ covers only its columns).
 * The row-parallel layer's forward all-reduces the partial sums, and its
 * backward needs nothing (dy is whole on every rank). b2 is added after
 * the sum, once: added on every rank before it, the sum would hold t b2.
 */
#include "08_tensor_parallel/lab08.h"
#include "paralab/nn.h"

static int column_forward(pl_tp *tp, const float *x, float *xfull, const float *W, const float *b,
                          float *z, int k, int n)
{
    int cols = n / tp->size; /* this rank's columns */
    PL_TP_TRY(pl_tp_f_forward(tp, x, xfull, k));
    PL_TP_TRY(pl_k_matmul(z, xfull, W, tp->rows, cols, k, PL_NN, 0, tp->stream));
    PL_TP_TRY(pl_k_bias_add(z, b, tp->rows, cols, tp->stream));
    return 0;
}

static int column_backward(pl_tp *tp, const float *dz, const float *xfull, const float *W,
                           float *dW, float *db, float *dxfull, float *dx, int k, int n)
{
    int cols = n / tp->size;
    PL_TP_TRY(pl_k_matmul(dW, xfull, dz, k, cols, tp->rows, PL_TN, tp->accumulate, tp->stream));
    PL_TP_TRY(pl_k_bias_grad(db, dz, tp->rows, cols, tp->accumulate, tp->stream));
    PL_TP_TRY(pl_k_matmul(dxfull, dz, W, tp->rows, k, cols, PL_NT, 0, tp->stream));
    PL_TP_TRY(pl_tp_f_backward(tp, dxfull, dx, k)); /* sum every rank's part of dx */
    return 0;
}

static int row_forward(pl_tp *tp, const float *a, const float *W, const float *b, float *partial,
                       float *y, int k, int n)
{
    int rows_of_w = k / tp->size; /* this rank's rows of W: its columns of a */
    PL_TP_TRY(pl_k_matmul(partial, a, W, tp->rows, n, rows_of_w, PL_NN, 0, tp->stream));
    PL_TP_TRY(pl_tp_g_forward(tp, partial, y, n));                 /* sum the partials */
    PL_TP_TRY(pl_k_bias_add(y, b, tp->local_rows, n, tp->stream)); /* then b, once */
    return 0;
}

static int row_backward(pl_tp *tp, const float *dy, const float *a, const float *W, float *dW,
                        float *db, float *dyfull, float *da, int k, int n)
{
    int rows_of_w = k / tp->size;
    PL_TP_TRY(pl_k_bias_grad(db, dy, tp->local_rows, n, tp->accumulate, tp->stream));
    PL_TP_TRY(pl_tp_g_backward(tp, dy, dyfull, n));
    PL_TP_TRY(
        pl_k_matmul(dW, a, dyfull, rows_of_w, n, tp->rows, PL_TN, tp->accumulate, tp->stream));
    PL_TP_TRY(pl_k_matmul(da, dyfull, W, tp->rows, rows_of_w, n, PL_NT, 0, tp->stream));
    return 0;
}

const pl_tp_linear_ops lab08_solution = {column_forward, row_forward, row_backward,
                                         column_backward};
