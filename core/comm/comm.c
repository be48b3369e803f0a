/*
 * comm.c — the public communicator functions (paralab/comm.h): each calls
 * the function of the handle's engine (comm_engine.h). The engines are the
 * local one (comm_local*.c) and NCCL: comm_nccl.c in the CUDA build,
 * nccl_none.c (which makes no handles) in the simulated one; the build
 * compiles one of the two (mk/build.mk), so nothing here asks which.
 */
#include <stdio.h>

#include "comm_engine.h"
#include "paralab/comm.h"
#include "paralab/device.h"
#include "paralab/kernels.h"

/* ---- types ------------------------------------------------------------- */

/* The reduction kernel numbers the types and operations itself (a kernel
 * sees the CUDA dialect only): the two numberings must agree. */
#define PL_SAME_(a, b) ((int)(a) == (int)(b))
_Static_assert(PL_SAME_(PL_K_FLOAT32, PL_FLOAT32) && PL_SAME_(PL_K_FLOAT64, PL_FLOAT64) &&
                   PL_SAME_(PL_K_INT32, PL_INT32) && PL_SAME_(PL_K_INT64, PL_INT64),
               "paralab/kernels.h numbers the types as pl_dtype does");
_Static_assert(PL_SAME_(PL_K_SUM, PL_SUM) && PL_SAME_(PL_K_PROD, PL_PROD) &&
                   PL_SAME_(PL_K_MAX, PL_MAX) && PL_SAME_(PL_K_MIN, PL_MIN) &&
                   PL_SAME_(PL_K_AVG, PL_AVG),
               "paralab/kernels.h numbers the operations as pl_redop does");

size_t pl_dtype_size(pl_dtype t)
{
    switch (t) {
    case PL_FLOAT32:
    case PL_INT32:
        return 4;
    case PL_FLOAT64:
    case PL_INT64:
        return 8;
    default:
        return 0;
    }
}

const char *pl_dtype_name(pl_dtype t)
{
    static const char *n[] = {"float", "double", "int32", "int64"};
    return (unsigned)t < PL_NUM_DTYPES ? n[t] : "?";
}

const char *pl_redop_name(pl_redop op)
{
    static const char *n[] = {"sum", "prod", "max", "min", "avg"};
    return (unsigned)op < PL_NUM_OPS ? n[op] : "?";
}

const char *pl_comm_call_name(pl_comm_call k)
{
    static const char *n[] = {"pl_all_reduce",     "pl_broadcast",  "pl_reduce", "pl_all_gather",
                              "pl_reduce_scatter", "pl_all_to_all", "pl_send",   "pl_recv",
                              "pl_comm_barrier",   "pl_comm_split"};
    return (unsigned)k < PL_NUM_CALLS ? n[k] : "?";
}

const char *pl_comm_result_name(pl_comm_result r)
{
    static const char *n[] = {"PL_COMM_OK",      "PL_COMM_INVALID_ARGUMENT", "PL_COMM_MISMATCH",
                              "PL_COMM_TIMEOUT", "PL_COMM_CUDA_ERROR",       "PL_COMM_SYSTEM_ERROR",
                              "PL_COMM_ABORTED"};
    return (unsigned)r <= PL_COMM_ABORTED ? n[r] : "?";
}

/* ---- choosing an engine ------------------------------------------------------------------- */

const char *pl_comm_engine_name(const pl_comm *c) { return c->engine->name; }

pl_comm_engine_choice pl_comm_auto_engine(int n, const int *devices)
{
    return pl_comm_nccl_engine.fits(n, devices) ? PL_COMM_NCCL : PL_COMM_LOCAL;
}

/* ---- dispatch ------------------------------------------------------------------------------ */

void pl_comm_destroy_all(pl_comm **ranks, int n)
{
    if (n >= 1 && ranks[0]) ranks[0]->engine->destroy_all(ranks, n);
}

void pl_comm_set_trace(pl_comm *c, struct pl_trace *t) { c->engine->set_trace(c, t); }
void pl_comm_set_chunk_bytes(pl_comm *c, size_t bytes) { c->engine->set_chunk_bytes(c, bytes); }
void pl_comm_abort(pl_comm *c, const char *why) { c->engine->abort(c, why); }
void pl_comm_hold(pl_comm *c, int on)
{
    if (c->engine->hold) c->engine->hold(c, on);
}
int pl_comm_rank(const pl_comm *c) { return c->engine->rank(c); }
int pl_comm_size(const pl_comm *c) { return c->engine->size(c); }
int pl_comm_device(const pl_comm *c) { return c->engine->device(c); }
const char *pl_comm_last_error(const pl_comm *c) { return c->engine->last_error(c); }

pl_comm_result pl_comm_split(pl_comm *c, int color, int key, pl_comm **out)
{
    c->engine->count_call(c, PL_CALL_SPLIT);
    return c->engine->split(c, color, key, out);
}

pl_comm_result pl_comm_free(pl_comm *c) { return c->engine->free(c); }
pl_comm_result pl_comm_barrier(pl_comm *c)
{
    c->engine->count_call(c, PL_CALL_BARRIER);
    return c->engine->barrier(c);
}

pl_comm_result pl_all_reduce(pl_comm *c, const void *send, void *recv, size_t count, pl_dtype t,
                             pl_redop op, cudaStream_t stream)
{
    c->engine->count_call(c, PL_CALL_ALL_REDUCE);
    return c->engine->all_reduce(c, send, recv, count, t, op, stream);
}

pl_comm_result pl_broadcast(pl_comm *c, const void *send, void *recv, size_t count, pl_dtype t,
                            int root, cudaStream_t stream)
{
    c->engine->count_call(c, PL_CALL_BROADCAST);
    return c->engine->broadcast(c, send, recv, count, t, root, stream);
}

pl_comm_result pl_reduce(pl_comm *c, const void *send, void *recv, size_t count, pl_dtype t,
                         pl_redop op, int root, cudaStream_t stream)
{
    c->engine->count_call(c, PL_CALL_REDUCE);
    return c->engine->reduce(c, send, recv, count, t, op, root, stream);
}

pl_comm_result pl_all_gather(pl_comm *c, const void *send, void *recv, size_t sendcount, pl_dtype t,
                             cudaStream_t stream)
{
    c->engine->count_call(c, PL_CALL_ALL_GATHER);
    return c->engine->all_gather(c, send, recv, sendcount, t, stream);
}

pl_comm_result pl_reduce_scatter(pl_comm *c, const void *send, void *recv, size_t recvcount,
                                 pl_dtype t, pl_redop op, cudaStream_t stream)
{
    c->engine->count_call(c, PL_CALL_REDUCE_SCATTER);
    return c->engine->reduce_scatter(c, send, recv, recvcount, t, op, stream);
}

pl_comm_result pl_all_to_all(pl_comm *c, const void *send, void *recv, size_t count, pl_dtype t,
                             cudaStream_t stream)
{
    c->engine->count_call(c, PL_CALL_ALL_TO_ALL);
    return c->engine->all_to_all(c, send, recv, count, t, stream);
}

pl_comm_result pl_send(pl_comm *c, const void *buf, size_t count, pl_dtype t, int peer,
                       cudaStream_t stream)
{
    c->engine->count_call(c, PL_CALL_SEND);
    return c->engine->send(c, buf, count, t, peer, stream);
}

pl_comm_result pl_recv(pl_comm *c, void *buf, size_t count, pl_dtype t, int peer,
                       cudaStream_t stream)
{
    c->engine->count_call(c, PL_CALL_RECV);
    return c->engine->recv(c, buf, count, t, peer, stream);
}

pl_comm_result pl_send_eager(pl_comm *c, const void *buf, size_t count, pl_dtype t, int peer,
                             cudaStream_t stream)
{
    c->engine->count_call(c, PL_CALL_SEND);
    return c->engine->send_eager(c, buf, count, t, peer, stream);
}

pl_comm_result pl_comm_wait_sends(pl_comm *c) { return c->engine->wait_sends(c); }

/* Groups belong to the host thread, not to a communicator: every engine
 * opens and closes its own (NCCL's ncclGroupStart/End are per thread too). */
static const pl_comm_engine *const engines[] = {
    &pl_comm_local_engine,
    &pl_comm_nccl_engine, /* comm_nccl.c, or nccl_none.c where there is no NCCL */
    &pl_comm_mpi_engine,  /* comm_mpi.c (a table without handles where there is no MPI) */
};
enum { NUM_ENGINES = sizeof engines / sizeof engines[0] };

pl_comm_result pl_group_start(void)
{
    for (int i = 0; i < NUM_ENGINES; i++) {
        pl_comm_result r = engines[i]->group_start();
        if (r) {
            while (i-- > 0) engines[i]->group_end();
            return r;
        }
    }
    return PL_COMM_OK;
}

pl_comm_result pl_group_end(void)
{
    pl_comm_result first = PL_COMM_OK;
    for (int i = NUM_ENGINES - 1; i >= 0; i--) {
        pl_comm_result r = engines[i]->group_end();
        if (r && !first) first = r;
    }
    return first;
}

pl_ledger pl_comm_ledger(const pl_comm *c) { return c->engine->ledger(c); }
pl_ledger pl_comm_ledger_own(const pl_comm *c) { return c->engine->ledger_own(c); }
int pl_comm_world_rank(const pl_comm *c, int member) { return c->engine->world_rank(c, member); }

void pl_comm_set_group(pl_comm *c, pl_group g)
{
    if (c) c->group = (unsigned)g < PL_NUM_GROUPS ? (int)g : PL_GROUP_NONE;
}

pl_group pl_comm_group(const pl_comm *c) { return c ? (pl_group)c->group : PL_GROUP_NONE; }

uint64_t pl_comm_link_bytes(const pl_comm *c, int from, int to)
{
    return c->engine->link_bytes(c, from, to);
}

/* ---- the engines' trace events ----------------------------------------------------------- */

void pl_comm_mark_start(pl_comm_mark *m, cudaStream_t s)
{
    m->start = pl_trace_now();
    m->modeled_start = pl_device_stream_now(s);
    m->stream = s;
}

void pl_comm_emit(struct pl_trace *t, const pl_comm *c, int rank, const pl_comm_mark *m,
                  pl_event_kind kind, const char *label, uint64_t bytes, int peer, int chunk)
{
    if (!t) return;
    pl_device_flush_ops(); /* this rank's finished copies and kernels first, in order */
    pl_event e = {.rank = rank,
                  .lane = PL_LANE_COMM,
                  .kind = (uint8_t)kind,
                  .group = (uint8_t)c->group,
                  .micro_batch = -1,
                  .layer = -1,
                  .peer = peer,
                  .chunk = chunk,
                  .bytes = bytes,
                  .start = m->start,
                  .end = pl_trace_now(),
                  .modeled_start = m->modeled_start,
                  .modeled_end = pl_device_stream_now(m->stream)};
    snprintf(e.label, sizeof e.label, "%s", label);
    pl_trace_record(t, &e);
}
