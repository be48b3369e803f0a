/*
 * A student's Lab 06 that does not build the ring: it calls the library's
 * all-reduce, which gives the right sums with the ring's very bytes. The
 * check must see the call in the ledger and say the ring is built from
 * pl_send and pl_recv.
 */
#include "06_collectives/lab06.h"
#include "paralab/kernels.h"

static int ring_all_reduce(pl_comm *c, float *buf, size_t count, float *scratch,
                           cudaStream_t stream)
{
    return pl_all_reduce(c, buf, buf, count, PL_FLOAT32, PL_SUM, stream);
}

const lab06_impl lab06_exercise = {ring_all_reduce};
