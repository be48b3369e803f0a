/*
 * Lab 07 — your exercise: data parallelism. Delete a PL_TODO() line when you
 * start that function, then run `make check`. See README.md in this folder.
 */
#include "07_data_parallel/lab07.h"
#include "paralab/nn.h"

/*
 * 1. Shard the batch. N ranks share a global batch of B samples (N divides
 *    B): rank r takes B/N contiguous rows, rank 0 the first ones.
 */
static int shard_batch(int B, int n, int rank, int *first, int *count)
{
    PL_TODO();
    return 0;
}

/*
 * 2. Synchronise the gradients. Each rank computed the gradient of the mean
 *    loss over its own shard. The gradient of the whole batch's mean loss is
 *    the average of those: all-reduce the buffer (pl_all_reduce, PL_SUM, in
 *    place), then divide it by the rank count (pl_k_scale). Everything on
 *    `stream`. Why average, not sum? Try both, and look at the loss.
 */
static int sync_gradients(pl_comm *c, float *grad, size_t count, cudaStream_t stream)
{
    PL_TODO();
    return PL_COMM_OK;
}

const lab07_impl lab07_exercise = {shard_batch, sync_gradients};
