/*
 * paralab/collectives.h — one descriptor per collective, as nccl-tests keeps
 * one per collective (src/all_reduce.cu, ...: its getCollByteCount and
 * getBw): the name, the sizes of the buffers, the bytes S the bandwidths
 * are measured over, the busbw factor and the in-place rule. The local
 * engine's argument and consistency checks and its trace events, the NCCL
 * engine's trace, `paralab-bench comm` and Lab 06 all read them from here.
 *
 * Counts are the call's own count argument (paralab/comm.h): all_gather's
 * sendcount, reduce_scatter's recvcount, all_to_all's count per block.
 * Reduce-scatter, as in NCCL, reads n x recvcount elements of each send
 * buffer and no more: of an array whose length n does not divide, the last
 * length - n x recvcount elements are ignored (no padding).
 *
 * Bandwidths (nccl-tests, doc/PERFORMANCE.md): algbw = S / t, where S is
 * the bytes of the whole array: count x type size for all-reduce,
 * broadcast, reduce and point to point; n x count x type size for
 * all-gather, reduce-scatter and all-to-all. busbw = algbw x factor, which
 * makes busbw comparable to the bandwidth of one link whatever n:
 * all-reduce 2(n-1)/n; all-gather, reduce-scatter and all-to-all (n-1)/n;
 * broadcast, reduce, send and recv 1. In the ring algorithms (and
 * all-to-all's pairwise exchange) it is also the part of S each rank sends.
 *
 * In place, as NCCL documents it: all_reduce, broadcast and reduce when
 * send == recv; all_gather when send == recv + rank x count; reduce_scatter
 * when recv == send + rank x count; all_to_all has no in-place form.
 */
#ifndef PARALAB_COLLECTIVES_H
#define PARALAB_COLLECTIVES_H

#include <stddef.h>
#include <stdint.h>

#include "paralab/comm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The size of a buffer on each rank, for a call of `count` on n ranks. */
typedef enum {
    PL_BUF_NONE,   /* no such buffer (pl_send has no receive buffer, pl_recv no send buffer) */
    PL_BUF_COUNT,  /* count elements */
    PL_BUF_BLOCKS, /* n x count elements: one block of count per rank, rank r's at r x count */
} pl_buffer_shape;

/* Which buffers may alias: the in-place form of the call. */
typedef enum {
    PL_IN_PLACE_SAME,       /* send == recv (all_reduce, broadcast, reduce) */
    PL_IN_PLACE_RECV_BLOCK, /* send == recv + rank x count, this rank's block (all_gather) */
    PL_IN_PLACE_SEND_BLOCK, /* recv == send + rank x count, this rank's block (reduce_scatter) */
    PL_IN_PLACE_NEVER,      /* no in-place form: send == recv is refused (all_to_all) */
    PL_IN_PLACE_ONE_BUFFER, /* one buffer, nothing to alias (send, recv) */
} pl_in_place_rule;

typedef struct pl_collective {
    pl_comm_call call; /* its index in pl_collectives: PL_CALL_ALL_REDUCE, ... */
    const char *name;  /* "all_reduce": the label of its trace event and of its messages */
    int has_op;        /* takes a pl_redop */
    int has_root;      /* takes a root */
    pl_buffer_shape send, recv;
    int send_root_only; /* only the root's send buffer is read (broadcast) */
    int recv_root_only; /* only the root's receive buffer is written (reduce) */
    /* busbw factor: busbw_num x (n - busbw_sub) / n: 2(n-1)/n is {2, 1},
     * (n-1)/n is {1, 1}, and 1 is {1, 0} */
    int busbw_num, busbw_sub;
    pl_in_place_rule in_place;
} pl_collective;

/* Every call that moves data, indexed by pl_comm_call: the six collectives,
 * then pl_send and pl_recv. */
#define PL_NUM_COLLECTIVES (PL_CALL_RECV + 1)
extern const pl_collective pl_collectives[PL_NUM_COLLECTIVES];

/* The descriptor of call k; NULL for pl_comm_barrier and pl_comm_split
 * (they move no data) and for a value that is not a pl_comm_call. */
const pl_collective *pl_collective_of(pl_comm_call k);

/* Elements of each rank's send and receive buffers (0: no such buffer). */
size_t pl_collective_send_count(const pl_collective *d, size_t count, int n);
size_t pl_collective_recv_count(const pl_collective *d, size_t count, int n);
/* S, the bytes of the whole array: the larger of the two buffers. */
uint64_t pl_collective_bytes(const pl_collective *d, size_t count, pl_dtype t, int n);
/* The count argument of a call over a whole array of `total` elements
 * (nccl-tests' count): total / n where the array is n blocks, else total. */
size_t pl_collective_count(const pl_collective *d, size_t total, int n);
/* busbw / algbw on n ranks (0 for the ring collectives on one rank). */
double pl_collective_busbw_factor(const pl_collective *d, int n);
/* 1 when rank's send and recv are the call's in-place form (for
 * PL_IN_PLACE_NEVER: send == recv, the form that is refused). */
int pl_collective_in_place(const pl_collective *d, const void *send, const void *recv, size_t count,
                           pl_dtype t, int rank);
/* 1 when rank must give a send (receive) buffer for count > 0. */
int pl_collective_needs_send(const pl_collective *d, int rank, int root);
int pl_collective_needs_recv(const pl_collective *d, int rank, int root);

#ifdef __cplusplus
}
#endif

#endif
