/*
 * Lab 06 — the reference solution. Read it after trying exercise.c.
 */
#include "06_collectives/lab06.h"
#include "paralab/kernels.h"

static int ring_all_reduce(pl_comm *c, float *buf, size_t count, float *scratch,
                           cudaStream_t stream)
{
    int n = pl_comm_size(c), r = pl_comm_rank(c), next = lab06_mod(r + 1, n),
        prev = lab06_mod(r - 1, n);
    pl_comm_result e;
    /* reduce-scatter: each step adds one more rank's share into a segment */
    for (int s = 0; s < n - 1; s++) {
        int out = lab06_mod(r - s - 1, n), in = lab06_mod(r - s - 2, n);
        size_t in_len = lab06_seg_len(count, n, in);
        pl_group_start();
        pl_send(c, buf + lab06_seg_start(count, n, out), lab06_seg_len(count, n, out), PL_FLOAT32,
                next, stream);
        pl_recv(c, scratch, in_len, PL_FLOAT32, prev, stream);
        if ((e = pl_group_end())) return e;
        if (in_len && pl_k_reduce(buf + lab06_seg_start(count, n, in), scratch, in_len, PL_FLOAT32,
                                  PL_SUM, stream))
            return PL_COMM_CUDA_ERROR;
    }
    /* all-gather: pass the finished segments once around the ring */
    for (int s = 0; s < n - 1; s++) {
        int out = lab06_mod(r - s, n), in = lab06_mod(r - s - 1, n);
        pl_group_start();
        pl_send(c, buf + lab06_seg_start(count, n, out), lab06_seg_len(count, n, out), PL_FLOAT32,
                next, stream);
        pl_recv(c, buf + lab06_seg_start(count, n, in), lab06_seg_len(count, n, in), PL_FLOAT32,
                prev, stream);
        if ((e = pl_group_end())) return e;
    }
    return PL_COMM_OK;
}

const lab06_impl lab06_solution = {ring_all_reduce};
