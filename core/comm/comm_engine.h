/*
 * comm_engine.h — the table of functions behind paralab/comm.h (internal).
 *
 * A communicator handle starts with its engine, as nvtop's GPU handles start
 * with their vendor's table: the public functions in comm.c read it and
 * call the engine's own. Two engines:
 *   - pl_comm_local_engine (comm_local.c): ring algorithms over the CUDA
 *     runtime API, on simulated GPUs or ranks sharing a real one, with the
 *     checks NCCL cannot make;
 *   - pl_comm_nccl_engine: NCCL itself, one communicator per rank, each
 *     rank on its own GPU (comm_nccl.c, the CUDA build); in the simulated
 *     build nccl_none.c, which makes no handles (pl_comm_create_nccl says
 *     why). The build compiles one of the two (mk/build.mk).
 */
#ifndef PARALAB_COMM_ENGINE_H
#define PARALAB_COMM_ENGINE_H

#include "paralab/comm.h"
#include "paralab/trace.h"

struct pl_trace;

/* Where a communicator's trace event began: the host clock, and the
 * modeled end of the rank's stream's work then. */
typedef struct pl_comm_mark {
    double start, modeled_start;
    cudaStream_t stream;
} pl_comm_mark;
void pl_comm_mark_start(pl_comm_mark *m, cudaStream_t s);
/* One event of global rank `rank` on the comm lane into t (NULL: nothing),
 * from m to now on both clocks, stamped with c's group: kind, label, bytes,
 * peer (-1: none), chunk (pl_event.chunk). The rank's finished copies and
 * kernels are reported first, so that they come before it, in order. The
 * engines that run on the CUDA runtime's streams (local, MPI) share it. */
void pl_comm_emit(struct pl_trace *t, const pl_comm *c, int rank, const pl_comm_mark *m,
                  pl_event_kind kind, const char *label, uint64_t bytes, int peer, int chunk);

/* Every engine's handle begins with this (its first member). */
struct pl_comm {
    const struct pl_comm_engine *engine;
    int group; /* pl_group: stamped into its events (pl_comm_set_group) */
    int procs; /* the processes its world spans: > 1 for pl_comm_create_dist's across
                  processes (the MPI engine's, or NCCL's over MPI), else 0 or 1 */
};

typedef struct pl_comm_engine {
    const char *name; /* "local", "nccl" */
    /* 1 when the engine can join n ranks on these devices (NCCL: one device
     * per rank; where it is not built, never): what PL_COMM_AUTO asks */
    int (*fits)(int n, const int *devices);
    void (*destroy_all)(pl_comm **ranks, int n);
    void (*set_trace)(pl_comm *c, struct pl_trace *t);
    void (*set_chunk_bytes)(pl_comm *c, size_t bytes);
    void (*abort)(pl_comm *c, const char *why);
    void (*hold)(pl_comm *c, int on); /* NULL: the engine has no watchdog */
    int (*rank)(const pl_comm *c);
    int (*size)(const pl_comm *c);
    int (*device)(const pl_comm *c);
    const char *(*last_error)(const pl_comm *c);
    pl_comm_result (*split)(pl_comm *c, int color, int key, pl_comm **out);
    pl_comm_result (*free)(pl_comm *c);
    pl_comm_result (*barrier)(pl_comm *c);
    pl_comm_result (*all_reduce)(pl_comm *c, const void *send, void *recv, size_t count, pl_dtype t,
                                 pl_redop op, cudaStream_t s);
    pl_comm_result (*broadcast)(pl_comm *c, const void *send, void *recv, size_t count, pl_dtype t,
                                int root, cudaStream_t s);
    pl_comm_result (*reduce)(pl_comm *c, const void *send, void *recv, size_t count, pl_dtype t,
                             pl_redop op, int root, cudaStream_t s);
    pl_comm_result (*all_gather)(pl_comm *c, const void *send, void *recv, size_t sendcount,
                                 pl_dtype t, cudaStream_t s);
    pl_comm_result (*reduce_scatter)(pl_comm *c, const void *send, void *recv, size_t recvcount,
                                     pl_dtype t, pl_redop op, cudaStream_t s);
    pl_comm_result (*all_to_all)(pl_comm *c, const void *send, void *recv, size_t count, pl_dtype t,
                                 cudaStream_t s);
    pl_comm_result (*send)(pl_comm *c, const void *buf, size_t count, pl_dtype t, int peer,
                           cudaStream_t s);
    pl_comm_result (*recv)(pl_comm *c, void *buf, size_t count, pl_dtype t, int peer,
                           cudaStream_t s);
    pl_comm_result (*send_eager)(pl_comm *c, const void *buf, size_t count, pl_dtype t, int peer,
                                 cudaStream_t s);
    pl_comm_result (*wait_sends)(pl_comm *c);
    /* per host thread, for every communicator of the engine */
    pl_comm_result (*group_start)(void);
    pl_comm_result (*group_end)(void);
    pl_ledger (*ledger)(const pl_comm *c);
    pl_ledger (*ledger_own)(const pl_comm *c); /* this communicator's calls alone */
    int (*world_rank)(const pl_comm *c, int member);
    /* counts one call of kind k by this rank in its ledger (comm.c calls it) */
    void (*count_call)(pl_comm *c, pl_comm_call k);
    uint64_t (*link_bytes)(const pl_comm *c, int from, int to);
} pl_comm_engine;

extern const pl_comm_engine pl_comm_local_engine;
extern const pl_comm_engine pl_comm_nccl_engine;
/* comm_mpi.c: the ranks of a world of several processes (mpirun), over MPI
 * point to point; in a build without MPI a table that makes no handles */
extern const pl_comm_engine pl_comm_mpi_engine;

#endif
