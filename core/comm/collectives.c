/*
 * collectives.c — the descriptor of every collective (paralab/collectives.h):
 * the table, and what it says of one call.
 */
#include "paralab/collectives.h"

const pl_collective pl_collectives[PL_NUM_COLLECTIVES] = {
    [PL_CALL_ALL_REDUCE] = {.call = PL_CALL_ALL_REDUCE,
                            .name = "all_reduce",
                            .has_op = 1,
                            .send = PL_BUF_COUNT,
                            .recv = PL_BUF_COUNT,
                            .busbw_num = 2,
                            .busbw_sub = 1,
                            .in_place = PL_IN_PLACE_SAME},
    [PL_CALL_BROADCAST] = {.call = PL_CALL_BROADCAST,
                           .name = "broadcast",
                           .has_root = 1,
                           .send = PL_BUF_COUNT,
                           .recv = PL_BUF_COUNT,
                           .send_root_only = 1,
                           .busbw_num = 1,
                           .busbw_sub = 0,
                           .in_place = PL_IN_PLACE_SAME},
    [PL_CALL_REDUCE] = {.call = PL_CALL_REDUCE,
                        .name = "reduce",
                        .has_op = 1,
                        .has_root = 1,
                        .send = PL_BUF_COUNT,
                        .recv = PL_BUF_COUNT,
                        .recv_root_only = 1,
                        .busbw_num = 1,
                        .busbw_sub = 0,
                        .in_place = PL_IN_PLACE_SAME},
    [PL_CALL_ALL_GATHER] = {.call = PL_CALL_ALL_GATHER,
                            .name = "all_gather",
                            .send = PL_BUF_COUNT,
                            .recv = PL_BUF_BLOCKS,
                            .busbw_num = 1,
                            .busbw_sub = 1,
                            .in_place = PL_IN_PLACE_RECV_BLOCK},
    [PL_CALL_REDUCE_SCATTER] = {.call = PL_CALL_REDUCE_SCATTER,
                                .name = "reduce_scatter",
                                .has_op = 1,
                                .send = PL_BUF_BLOCKS,
                                .recv = PL_BUF_COUNT,
                                .busbw_num = 1,
                                .busbw_sub = 1,
                                .in_place = PL_IN_PLACE_SEND_BLOCK},
    [PL_CALL_ALL_TO_ALL] = {.call = PL_CALL_ALL_TO_ALL,
                            .name = "all_to_all",
                            .send = PL_BUF_BLOCKS,
                            .recv = PL_BUF_BLOCKS,
                            .busbw_num = 1,
                            .busbw_sub = 1,
                            .in_place = PL_IN_PLACE_NEVER},
    [PL_CALL_SEND] = {.call = PL_CALL_SEND,
                      .name = "send",
                      .send = PL_BUF_COUNT,
                      .recv = PL_BUF_NONE,
                      .busbw_num = 1,
                      .busbw_sub = 0,
                      .in_place = PL_IN_PLACE_ONE_BUFFER},
    [PL_CALL_RECV] = {.call = PL_CALL_RECV,
                      .name = "recv",
                      .send = PL_BUF_NONE,
                      .recv = PL_BUF_COUNT,
                      .busbw_num = 1,
                      .busbw_sub = 0,
                      .in_place = PL_IN_PLACE_ONE_BUFFER},
};

const pl_collective *pl_collective_of(pl_comm_call k)
{
    return (unsigned)k < PL_NUM_COLLECTIVES ? &pl_collectives[k] : NULL;
}

static size_t elements(pl_buffer_shape s, size_t count, int n)
{
    return s == PL_BUF_NONE ? 0 : s == PL_BUF_BLOCKS ? count * (size_t)n : count;
}

size_t pl_collective_send_count(const pl_collective *d, size_t count, int n)
{
    return elements(d->send, count, n);
}

size_t pl_collective_recv_count(const pl_collective *d, size_t count, int n)
{
    return elements(d->recv, count, n);
}

uint64_t pl_collective_bytes(const pl_collective *d, size_t count, pl_dtype t, int n)
{
    size_t s = pl_collective_send_count(d, count, n), r = pl_collective_recv_count(d, count, n);
    return (uint64_t)(s > r ? s : r) * pl_dtype_size(t);
}

size_t pl_collective_count(const pl_collective *d, size_t total, int n)
{
    int blocks = d->send == PL_BUF_BLOCKS || d->recv == PL_BUF_BLOCKS;
    return blocks && n > 0 ? total / (size_t)n : total;
}

double pl_collective_busbw_factor(const pl_collective *d, int n)
{
    return (double)(d->busbw_num * (n - d->busbw_sub)) / n;
}

int pl_collective_in_place(const pl_collective *d, const void *send, const void *recv, size_t count,
                           pl_dtype t, int rank)
{
    size_t block = (size_t)rank * count * pl_dtype_size(t);
    switch (d->in_place) {
    case PL_IN_PLACE_SAME:
    case PL_IN_PLACE_NEVER:
        return send == recv;
    case PL_IN_PLACE_RECV_BLOCK:
        return recv && (const char *)send == (const char *)recv + block;
    case PL_IN_PLACE_SEND_BLOCK:
        return send && (const char *)recv == (const char *)send + block;
    default:
        return 0;
    }
}

int pl_collective_needs_send(const pl_collective *d, int rank, int root)
{
    return d->send != PL_BUF_NONE && (!d->send_root_only || rank == root);
}

int pl_collective_needs_recv(const pl_collective *d, int rank, int root)
{
    return d->recv != PL_BUF_NONE && (!d->recv_root_only || rank == root);
}
