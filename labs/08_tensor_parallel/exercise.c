/*
 * Lab 08 — your exercise: the column- and row-parallel linear layers of
 * Megatron-LM. Delete a PL_TODO() line when you start that function, then
 * run `make check`. See README.md in this folder.
 *
 * Every function gets this rank's shard of the weights and its view of the
 * TP group, tp (paralab/tp.h): tp->size ranks, tp->rows rows in the full
 * activations, tp->local_rows outside the parallel region (tp->rows / t
 * with --sequence-parallel, else tp->rows), tp->accumulate (pass it to the
 * gradient kernels), tp->stream (enqueue everything there).
 *
 * The two operators are written for you (they become an all-gather and a
 * reduce-scatter under sequence parallelism):
 *   f (entering the parallel region): pl_tp_f_forward (identity),
 *                                     pl_tp_f_backward (all-reduce)
 *   g (leaving it):                   pl_tp_g_forward (all-reduce),
 *                                     pl_tp_g_backward (identity)
 * The kernels (paralab/nn.h): pl_k_matmul(C, A, B, M, N, K, form,
 * accumulate, stream) with PL_NN (A·B), PL_NT (A·Bᵀ), PL_TN (Aᵀ·B);
 * pl_k_bias_add(Y, b, M, N, stream); pl_k_bias_grad(db, dY, M, N,
 * accumulate, stream). Wrap each call in PL_TP_TRY(...): it returns the
 * call's error for you.
 */
#include "08_tensor_parallel/lab08.h"
#include "paralab/nn.h"

/*
 * 1. The column-parallel layer. W is split by columns: this rank holds
 *    W[k, n/t] and b[n/t]. Every rank needs the whole input.
 *      forward:  xfull = f(x)                         [rows, k]
 *                z = xfull · W + b                     [rows, n/t]
 *      backward: dW = xfullᵀ · dz,  db = the sum of dz's rows
 *                dxfull = dz · Wᵀ                      [rows, k]: only this
 *                                                      rank's part of dx
 *                dx = f'(dxfull)                       [local_rows, k]
 */
static int column_forward(pl_tp *tp, const float *x, float *xfull, const float *W, const float *b,
                          float *z, int k, int n)
{
    PL_TODO();
    return 0;
}

static int column_backward(pl_tp *tp, const float *dz, const float *xfull, const float *W,
                           float *dW, float *db, float *dxfull, float *dx, int k, int n)
{
    PL_TODO();
    return 0;
}

/*
 * 2. The row-parallel layer. W is split by rows: this rank holds W[k/t, n]
 *    and reads its k/t columns of the input, a (the column-parallel
 *    layer's output, after GELU). b[n] is whole on every rank.
 *      forward:  partial = a · W                       [rows, n]: a partial sum
 *                y = g(partial), then + b              [local_rows, n]
 *                (how many times may b be added to the sum?)
 *      backward: db = the sum of dy's rows (local rows)
 *                dyfull = g'(dy)                       [rows, n]
 *                dW = aᵀ · dyfull,  da = dyfull · Wᵀ   [rows, k/t]
 */
static int row_forward(pl_tp *tp, const float *a, const float *W, const float *b, float *partial,
                       float *y, int k, int n)
{
    PL_TODO();
    return 0;
}

static int row_backward(pl_tp *tp, const float *dy, const float *a, const float *W, float *dW,
                        float *db, float *dyfull, float *da, int k, int n)
{
    PL_TODO();
    return 0;
}

const pl_tp_linear_ops lab08_exercise = {column_forward, row_forward, row_backward,
                                         column_backward};
