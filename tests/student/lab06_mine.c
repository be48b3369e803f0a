/* Student scenario: Lab 06 finished as a student would write it (not the
 * reference): one helper for a ring step, the segments named by the
 * neighbour they come from. */
#include "06_collectives/lab06.h"
#include "paralab/kernels.h"

/* One step of the ring: send segment `out` to next, receive segment `in`
 * from prev into dst (+ its start), together. */
static int ring_step(pl_comm *c, float *buf, float *dst_base, size_t count, int out, int in,
                     cudaStream_t stream)
{
    int n = pl_comm_size(c), r = pl_comm_rank(c);
    int next = (r + 1) % n, prev = (r + n - 1) % n;
    int rc = pl_group_start();
    if (rc != PL_COMM_OK) return rc;
    int e1 = pl_send(c, buf + lab06_seg_start(count, n, out), lab06_seg_len(count, n, out),
                     PL_FLOAT32, next, stream);
    int e2 = pl_recv(c, dst_base, lab06_seg_len(count, n, in), PL_FLOAT32, prev, stream);
    rc = pl_group_end();
    if (e1 != PL_COMM_OK) return e1;
    if (e2 != PL_COMM_OK) return e2;
    return rc;
}

static int ring_all_reduce(pl_comm *c, float *buf, size_t count, float *scratch,
                           cudaStream_t stream)
{
    int n = pl_comm_size(c), r = pl_comm_rank(c);
    for (int s = 0; s < n - 1; s++) { /* reduce-scatter */
        int out = lab06_mod(r - s, n), in = lab06_mod(r - s - 1, n);
        int rc = ring_step(c, buf, scratch, count, out, in, stream);
        if (rc != PL_COMM_OK) return rc;
        size_t len = lab06_seg_len(count, n, in);
        if (len && pl_k_reduce(buf + lab06_seg_start(count, n, in), scratch, len, PL_FLOAT32,
                               PL_SUM, stream) != cudaSuccess)
            return PL_COMM_CUDA_ERROR;
    }
    for (int s = 0; s < n - 1; s++) { /* all-gather */
        int out = lab06_mod(r + 1 - s, n), in = lab06_mod(r - s, n);
        int rc = ring_step(c, buf, buf + lab06_seg_start(count, n, in), count, out, in, stream);
        if (rc != PL_COMM_OK) return rc;
    }
    return PL_COMM_OK;
}

const lab06_impl lab06_exercise = {ring_all_reduce};
