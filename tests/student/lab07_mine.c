/* Student scenario: Lab 07 finished as a student would write it (not the
 * reference): the shard from the rank's share, the average as a scale by
 * one over the rank count computed first. */
#include "07_data_parallel/lab07.h"
#include "paralab/nn.h"

static int shard_batch(int B, int n, int rank, int *first, int *count)
{
    int per_rank = B / n;
    *count = per_rank;
    *first = rank * per_rank;
    return 0;
}

static int sync_gradients(pl_comm *c, float *grad, size_t count, cudaStream_t stream)
{
    float inv = 1.0f / (float)pl_comm_size(c);
    pl_comm_result rc = pl_all_reduce(c, grad, grad, count, PL_FLOAT32, PL_SUM, stream);
    if (rc != PL_COMM_OK) return rc;
    if (pl_k_scale(grad, (long)count, inv, stream) != cudaSuccess) return PL_COMM_CUDA_ERROR;
    return PL_COMM_OK;
}

const lab07_impl lab07_exercise = {shard_batch, sync_gradients};
