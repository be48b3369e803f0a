/* Student scenario: Lab 08 finished as a student would write it (not the
 * reference): the shard widths named first, the backward's dx (and its
 * all-reduce) before the weight gradients, the row-parallel backward's
 * g' first and its bias gradient last (from dy, the rank's own rows). */
#include "08_tensor_parallel/lab08.h"
#include "paralab/nn.h"

static int column_forward(pl_tp *tp, const float *x, float *xfull, const float *W, const float *b,
                          float *z, int k, int n)
{
    int my_cols = n / tp->size;
    int rows = tp->rows;
    PL_TP_TRY(pl_tp_f_forward(tp, x, xfull, k)); /* f: every rank gets the whole x */
    PL_TP_TRY(pl_k_matmul(z, xfull, W, rows, my_cols, k, PL_NN, 0, tp->stream));
    PL_TP_TRY(pl_k_bias_add(z, b, rows, my_cols, tp->stream)); /* my part of b1 */
    return 0;
}

static int column_backward(pl_tp *tp, const float *dz, const float *xfull, const float *W,
                           float *dW, float *db, float *dxfull, float *dx, int k, int n)
{
    int my_cols = n / tp->size;
    int rows = tp->rows;
    /* dx first: my columns' share of it, then f' adds up the shares */
    PL_TP_TRY(pl_k_matmul(dxfull, dz, W, rows, k, my_cols, PL_NT, 0, tp->stream));
    PL_TP_TRY(pl_tp_f_backward(tp, dxfull, dx, k));
    PL_TP_TRY(pl_k_matmul(dW, xfull, dz, k, my_cols, rows, PL_TN, tp->accumulate, tp->stream));
    PL_TP_TRY(pl_k_bias_grad(db, dz, rows, my_cols, tp->accumulate, tp->stream));
    return 0;
}

static int row_forward(pl_tp *tp, const float *a, const float *W, const float *b, float *partial,
                       float *y, int k, int n)
{
    int my_k = k / tp->size;
    PL_TP_TRY(pl_k_matmul(partial, a, W, tp->rows, n, my_k, PL_NN, 0, tp->stream));
    PL_TP_TRY(pl_tp_g_forward(tp, partial, y, n)); /* g: the partial sums added up */
    PL_TP_TRY(pl_k_bias_add(y, b, tp->local_rows, n, tp->stream)); /* b2 once, on the sum */
    return 0;
}

static int row_backward(pl_tp *tp, const float *dy, const float *a, const float *W, float *dW,
                        float *db, float *dyfull, float *da, int k, int n)
{
    int my_k = k / tp->size;
    PL_TP_TRY(pl_tp_g_backward(tp, dy, dyfull, n)); /* g': nothing to add up */
    PL_TP_TRY(pl_k_matmul(da, dyfull, W, tp->rows, my_k, n, PL_NT, 0, tp->stream));
    PL_TP_TRY(pl_k_matmul(dW, a, dyfull, my_k, n, tp->rows, PL_TN, tp->accumulate, tp->stream));
    PL_TP_TRY(pl_k_bias_grad(db, dy, tp->local_rows, n, tp->accumulate, tp->stream));
    return 0;
}

const pl_tp_linear_ops lab08_exercise = {column_forward, row_forward, row_backward,
                                         column_backward};
