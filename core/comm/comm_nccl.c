/*
 * comm_nccl.c — the NCCL engine behind paralab/comm.h (the CUDA build only:
 * mk/build.mk compiles nccl_none.c in its place in the simulated one).
 *
 * Each rank is a host thread with its own NCCL communicator on its own GPU,
 * made together by ncclCommInitAll (one process, several GPUs, as
 * nccl-tests' threaded mode does). The functions map one to one onto NCCL's:
 * ncclAllReduce, ncclBroadcast, ncclReduce, ncclAllGather,
 * ncclReduceScatter, ncclSend/ncclRecv inside ncclGroupStart/End, and
 * ncclCommSplit. All-to-all is a group of sends and receives, as NCCL's
 * documentation shows it (there is no ncclAllToAll before 2.28's device API).
 *
 * What NCCL does not do, this engine does not pretend to: it checks the
 * arguments it can see on its own rank (type, op, root, peer, NULL buffer,
 * with the local engine's messages), but not that the ranks agree, and it has
 * no watchdog. Its ledger counts the bytes the ring algorithm sends for each
 * call (per rank, to its ring successor; a chain for broadcast and reduce;
 * every pair for all-to-all) — NCCL may choose a tree or another protocol,
 * and then moves other bytes; the ring's are the volumes nccl-tests' busbw
 * is defined by (doc/PERFORMANCE.md). Its trace has one event per call on the
 * comm lane, timed on the host (the enqueue, not the GPU's execution).
 * A failing rank sets the world's abort flag: every later call of every rank
 * returns PL_COMM_ABORTED. A rank already waiting on the GPU for the failed
 * one is not woken (that needs ncclCommAbort from another thread, which this
 * engine does not risk).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nccl.h>

#include "comm_engine.h"
#include "paralab/collectives.h"
#include "paralab/trace.h"
#ifdef PARALAB_MPI
#include "paralab/nccl_mpi.h"
#endif

#define MAX_RANKS 64
#define SCRATCH_INTS (2 + 2 * MAX_RANKS)

typedef struct nworld {
    int n;
    pthread_mutex_t lock;
    pl_ledger ledger[MAX_RANKS];
    uint64_t link[MAX_RANKS][MAX_RANKS];
    pl_trace *trace;
    int aborted;
    char abort_msg[1024];
    struct ncomm *handles; /* every handle alive */
} nworld;

typedef struct ncomm {
    pl_comm base; /* first: a pl_comm * is an ncomm * */
    nworld *w;
    ncclComm_t nc;
    int rank, n, device, is_world;
    int wrank[MAX_RANKS]; /* member -> world rank */
    pl_ledger own;        /* this rank's traffic through this communicator alone */
    int *dev_scratch;     /* SCRATCH_INTS on the device: split (2 + 2 per rank), barrier */
    struct ncomm *next;
    char err[2048];
} ncomm;

#define N(pc) ((ncomm *)(pc))

static pl_comm_result failf(ncomm *c, pl_comm_result r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static pl_comm_result failf(ncomm *c, pl_comm_result r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = snprintf(c->err, sizeof c->err, "rank %d: ", c->wrank[c->rank]);
    vsnprintf(c->err + k, sizeof c->err - (size_t)k, fmt, ap);
    va_end(ap);
    return r;
}

static pl_comm_result nccl_fail(ncomm *c, ncclResult_t e, const char *what)
{
    pl_comm_result r = e == ncclInvalidArgument || e == ncclInvalidUsage ? PL_COMM_INVALID_ARGUMENT
                       : e == ncclUnhandledCudaError                     ? PL_COMM_CUDA_ERROR
                                                                         : PL_COMM_SYSTEM_ERROR;
    const char *last = c->nc ? ncclGetLastError(c->nc) : "";
    return failf(c, r, "%s: %s%s%s", what, ncclGetErrorString(e), last && *last ? ": " : "",
                 last ? last : "");
}

/* ---- bookkeeping ------------------------------------------------------------------------ */

static int aborted(ncomm *c)
{
    pthread_mutex_lock(&c->w->lock);
    int a = c->w->aborted;
    if (a) failf(c, PL_COMM_ABORTED, "%s", c->w->abort_msg);
    pthread_mutex_unlock(&c->w->lock);
    return a;
}

/* `bytes` from member `from` to member `to`. */
static void account(ncomm *c, int from, int to, uint64_t bytes)
{
    if (!bytes) return;
    nworld *w = c->w;
    int a = c->wrank[from], b = c->wrank[to];
    pthread_mutex_lock(&w->lock);
    w->ledger[a].bytes_sent += bytes;
    w->ledger[a].messages_sent++;
    w->ledger[b].bytes_received += bytes;
    w->ledger[b].messages_received++;
    w->link[a][b] += bytes;
    if (from == c->rank) {
        c->own.bytes_sent += bytes;
        c->own.messages_sent++;
    }
    pthread_mutex_unlock(&w->lock);
}

/* Segment k of n over count elements (the local engine's cut). */
static size_t seg_len(size_t count, int n, int k)
{
    return count * (size_t)(k + 1) / (size_t)n - count * (size_t)k / (size_t)n;
}

/* What this rank sends to its ring successor in a ring reduce-scatter
 * (phases 1) or all-reduce (2) of count elements: at step s of the
 * reduce-scatter the successor receives segment (next - s - 2), of the
 * all-gather segment (next - s - 1). */
static uint64_t ring_sent(int n, int me, size_t count, size_t es, int phases)
{
    int next = (me + 1) % n;
    uint64_t b = 0;
    for (int s = 0; s < n - 1; s++) {
        b += seg_len(count, n, ((next - s - 2) % n + n) % n) * es;
        if (phases == 2) b += seg_len(count, n, ((next - s - 1) % n + n) % n) * es;
    }
    return b;
}

static void emit(ncomm *c, double start, pl_event_kind kind, const char *label, uint64_t bytes,
                 int peer)
{
    pl_trace *t = c->w->trace;
    if (!t) return;
    pl_event e = {.rank = c->wrank[c->rank],
                  .lane = PL_LANE_COMM,
                  .kind = (uint8_t)kind,
                  .group = (uint8_t)c->base.group,
                  .micro_batch = -1,
                  .layer = -1,
                  .peer = peer,
                  .bytes = bytes,
                  .start = start,
                  .end = pl_trace_now()};
    snprintf(e.label, sizeof e.label, "%s", label);
    pl_trace_record(t, &e);
}

/* A collective's one event: its descriptor's name, over its bytes S. */
static void emit_call(ncomm *c, double start, pl_comm_call k, size_t count, pl_dtype t)
{
    const pl_collective *d = &pl_collectives[k];
    emit(c, start, PL_EV_COLLECTIVE, d->name, pl_collective_bytes(d, count, t, c->n), -1);
}

/* ---- checks, with the local engine's messages -------------------------------------------- */

static ncclDataType_t nccl_type(pl_dtype t)
{
    static const ncclDataType_t m[] = {ncclFloat32, ncclFloat64, ncclInt32, ncclInt64};
    return m[t];
}

static ncclRedOp_t nccl_op(pl_redop op)
{
    static const ncclRedOp_t m[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};
    return m[op];
}

static int bad_args(ncomm *c, const char *what, size_t count, pl_dtype t, int op, int root,
                    const void *send, const void *recv)
{
    if (aborted(c)) return 1;
    if ((unsigned)t >= PL_NUM_DTYPES) {
        failf(c, PL_COMM_INVALID_ARGUMENT,
              "%s: type %d is not a pl_dtype (allowed: 0..%d: float, double, int32, int64)", what,
              (int)t, PL_NUM_DTYPES - 1);
        return 1;
    }
    if (op >= 0 && op >= PL_NUM_OPS) {
        failf(c, PL_COMM_INVALID_ARGUMENT,
              "%s: op %d is not a pl_redop (allowed: 0..%d: sum, prod, max, min, avg)", what, op,
              PL_NUM_OPS - 1);
        return 1;
    }
    if (root != -1 && (root < 0 || root >= c->n)) {
        failf(c, PL_COMM_INVALID_ARGUMENT, "%s: root %d is not a rank (allowed: 0..%d)", what, root,
              c->n - 1);
        return 1;
    }
    if (count && (!send || !recv)) {
        failf(c, PL_COMM_INVALID_ARGUMENT, "%s: %s buffer is NULL with count %zu > 0", what,
              !send ? "send" : "receive", count);
        return 1;
    }
    return 0;
}

static pl_comm_result bad(ncomm *c)
{
    return c->w->aborted ? PL_COMM_ABORTED : PL_COMM_INVALID_ARGUMENT;
}

/* ---- creation and teardown ---------------------------------------------------------------- */

static void link_handle(nworld *w, ncomm *h)
{
    pthread_mutex_lock(&w->lock);
    h->next = w->handles;
    w->handles = h;
    pthread_mutex_unlock(&w->lock);
}

/* NCCL refuses two ranks on one GPU. */
static int n_fits(int n, const int *devices)
{
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (devices[a] == devices[b]) return 0;
    return 1;
}

/* The handles of `count` ranks of world w, made from their NCCL
 * communicators nc[0..count-1]: ranks[i] is world rank first + i on GPU
 * devices[i]. On failure every communicator is destroyed, and w freed. */
static pl_comm_result make_handles(nworld *w, ncclComm_t *nc, int count, const int *devices,
                                   int first, pl_comm **ranks, char *err, size_t err_size)
{
    int cur = 0;
    cudaGetDevice(&cur);
    for (int r = 0; r < count; r++) {
        ncomm *h = calloc(1, sizeof *h);
        if (h) {
            cudaSetDevice(devices[r]);
            if (cudaMalloc((void **)&h->dev_scratch, SCRATCH_INTS * sizeof(int)) != cudaSuccess) {
                free(h);
                h = NULL;
            }
        }
        if (!h) {
            snprintf(err, err_size, "out of memory for rank %d's handle", first + r);
            for (int q = r; q < count; q++) ncclCommDestroy(nc[q]);
            if (r > 0)
                pl_comm_nccl_engine.destroy_all(ranks, r); /* frees w too */
            else {
                pthread_mutex_destroy(&w->lock);
                free(w);
            }
            cudaSetDevice(cur);
            return PL_COMM_SYSTEM_ERROR;
        }
        h->base.engine = &pl_comm_nccl_engine;
        h->w = w;
        h->nc = nc[r];
        h->rank = first + r;
        h->n = w->n;
        h->device = devices[r];
        h->is_world = 1;
        for (int q = 0; q < w->n; q++) h->wrank[q] = q;
        link_handle(w, h);
        ranks[r] = &h->base;
    }
    cudaSetDevice(cur);
    return PL_COMM_OK;
}

pl_comm_result pl_comm_create_nccl(int n, const int *devices, pl_comm **ranks, char *err,
                                   size_t err_size)
{
    if (n < 1 || n > MAX_RANKS || !devices || !ranks) {
        snprintf(err, err_size, "%d ranks: allowed 1..%d", n, MAX_RANKS);
        return PL_COMM_INVALID_ARGUMENT;
    }
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (devices[a] == devices[b]) {
                snprintf(err, err_size,
                         "ranks %d and %d are both on GPU %d: NCCL needs one GPU per rank (use "
                         "the local engine to share GPUs)",
                         a, b, devices[a]);
                return PL_COMM_INVALID_ARGUMENT;
            }
    nworld *w = calloc(1, sizeof *w);
    ncclComm_t nc[MAX_RANKS];
    if (!w) return PL_COMM_SYSTEM_ERROR;
    w->n = n;
    pthread_mutex_init(&w->lock, NULL);
    ncclResult_t e = ncclCommInitAll(nc, n, devices);
    if (e != ncclSuccess) {
        snprintf(err, err_size, "ncclCommInitAll: %s", ncclGetErrorString(e));
        pthread_mutex_destroy(&w->lock);
        free(w);
        return PL_COMM_SYSTEM_ERROR;
    }
    return make_handles(w, nc, n, devices, 0, ranks, err, err_size);
}

#ifdef PARALAB_MPI
/* Across processes (paralab/nccl_mpi.h): the id from rank 0 over MPI, the
 * GPUs from the processes on this host, one ncclCommInitRank per rank of
 * this process, in a group (one thread initialises several ranks). */
pl_comm_result pl_comm_create_nccl_mpi(MPI_Comm comm, int threads, pl_comm **ranks, int *devices,
                                       char *err, size_t err_size)
{
    int procs = 0, me = 0, local = 0, local_size = 0, gpus = 0, dev[MAX_RANKS];
    if (MPI_Comm_size(comm, &procs) != MPI_SUCCESS || MPI_Comm_rank(comm, &me) != MPI_SUCCESS) {
        snprintf(err, err_size, "MPI_Comm_size/rank failed: is MPI initialised?");
        return PL_COMM_SYSTEM_ERROR;
    }
    if (!ranks || threads < 1 || (long)procs * threads > MAX_RANKS) {
        snprintf(err, err_size,
                 "%d process%s of %d rank%s: allowed are 1..%d ranks in all (and ranks not NULL)",
                 procs, procs == 1 ? "" : "es", threads, threads == 1 ? "" : "s", MAX_RANKS);
        return PL_COMM_INVALID_ARGUMENT;
    }
    if (pl_mpi_local_rank(comm, &local, &local_size, err, err_size)) return PL_COMM_SYSTEM_ERROR;
    cudaError_t ce = cudaGetDeviceCount(&gpus);
    if (ce != cudaSuccess) gpus = 0; /* said below: no GPU for the ranks */
    for (int t = 0; t < threads; t++)
        if ((dev[t] = pl_nccl_mpi_device(local, local_size, threads, t, gpus, err, err_size)) < 0)
            return PL_COMM_INVALID_ARGUMENT;
    if (devices) memcpy(devices, dev, (size_t)threads * sizeof *dev);
    ncclUniqueId id;
    if (pl_nccl_mpi_unique_id(comm, 0, &id, err, err_size)) return PL_COMM_SYSTEM_ERROR;
    nworld *w = calloc(1, sizeof *w);
    ncclComm_t nc[MAX_RANKS];
    if (!w) return PL_COMM_SYSTEM_ERROR;
    w->n = procs * threads;
    pthread_mutex_init(&w->lock, NULL);
    int cur = 0;
    cudaGetDevice(&cur);
    ncclResult_t e = ncclGroupStart();
    for (int t = 0; t < threads && e == ncclSuccess; t++) {
        cudaSetDevice(dev[t]);
        e = ncclCommInitRank(&nc[t], w->n, id, me * threads + t);
    }
    ncclResult_t g = ncclGroupEnd();
    cudaSetDevice(cur);
    if (e == ncclSuccess) e = g;
    if (e != ncclSuccess) {
        snprintf(err, err_size, "ncclCommInitRank (process %d, ranks %d..%d of %d): %s", me,
                 me * threads, me * threads + threads - 1, w->n, ncclGetErrorString(e));
        pthread_mutex_destroy(&w->lock);
        free(w);
        return PL_COMM_SYSTEM_ERROR;
    }
    return make_handles(w, nc, threads, dev, me * threads, ranks, err, err_size);
}
#endif

static void handle_free(ncomm *h)
{
    int cur = 0;
    cudaGetDevice(&cur);
    cudaSetDevice(h->device);
    if (h->nc) ncclCommDestroy(h->nc);
    cudaFree(h->dev_scratch);
    cudaSetDevice(cur);
    nworld *w = h->w;
    pthread_mutex_lock(&w->lock);
    for (ncomm **pp = &w->handles; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            *pp = h->next;
            break;
        }
    pthread_mutex_unlock(&w->lock);
    free(h);
}

static void n_destroy_all(pl_comm **ranks, int n)
{
    if (n < 1 || !ranks[0]) return;
    nworld *w = N(ranks[0])->w;
    /* every handle still alive: split communicators a failed rank left too */
    while (w->handles) handle_free(w->handles);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

static void n_set_trace(pl_comm *c, struct pl_trace *t) { N(c)->w->trace = t; }

/* NCCL chooses its own chunks (NCCL_BUFFSIZE, NCCL_STEPS). */
static void n_set_chunk_bytes(pl_comm *c, size_t bytes) { (void)c, (void)bytes; }

static void n_abort(pl_comm *pc, const char *why)
{
    ncomm *c = N(pc);
    pthread_mutex_lock(&c->w->lock);
    if (!c->w->aborted) {
        snprintf(c->w->abort_msg, sizeof c->w->abort_msg, "rank %d stopped the world: %s",
                 c->wrank[c->rank], why);
        c->w->aborted = 1;
    }
    pthread_mutex_unlock(&c->w->lock);
}

static int n_rank(const pl_comm *c) { return ((const ncomm *)c)->rank; }
static int n_size(const pl_comm *c) { return ((const ncomm *)c)->n; }
static int n_device(const pl_comm *c) { return ((const ncomm *)c)->device; }
static const char *n_last_error(const pl_comm *c) { return ((const ncomm *)c)->err; }

/* ---- the calls ---------------------------------------------------------------------------- */

#define NCK(call, what)                                                                            \
    do {                                                                                           \
        ncclResult_t e_ = (call);                                                                  \
        if (e_ != ncclSuccess) return nccl_fail(c, e_, what);                                      \
    } while (0)

static pl_comm_result n_all_reduce(pl_comm *pc, const void *send, void *recv, size_t count,
                                   pl_dtype t, pl_redop op, cudaStream_t s)
{
    ncomm *c = N(pc);
    if (bad_args(c, "all_reduce", count, t, (int)op, -1, send, recv)) return bad(c);
    if (!count) return PL_COMM_OK;
    double t0 = pl_trace_now();
    NCK(ncclAllReduce(send, recv, count, nccl_type(t), nccl_op(op), c->nc, s), "ncclAllReduce");
    size_t es = pl_dtype_size(t);
    account(c, c->rank, (c->rank + 1) % c->n,
            c->n > 1 ? ring_sent(c->n, c->rank, count, es, 2) : 0);
    emit_call(c, t0, PL_CALL_ALL_REDUCE, count, t);
    return PL_COMM_OK;
}

static pl_comm_result n_broadcast(pl_comm *pc, const void *send, void *recv, size_t count,
                                  pl_dtype t, int root, cudaStream_t s)
{
    ncomm *c = N(pc);
    if (bad_args(c, "broadcast", count, t, -1, root, c->rank == root ? send : recv, recv))
        return bad(c);
    if (!count) return PL_COMM_OK;
    double t0 = pl_trace_now();
    NCK(ncclBroadcast(send, recv, count, nccl_type(t), root, c->nc, s), "ncclBroadcast");
    size_t bytes = count * pl_dtype_size(t);
    int last = (root + c->n - 1) % c->n; /* the chain root -> root+1 -> ... ends here */
    if (c->rank != last) account(c, c->rank, (c->rank + 1) % c->n, bytes);
    emit_call(c, t0, PL_CALL_BROADCAST, count, t);
    return PL_COMM_OK;
}

static pl_comm_result n_reduce(pl_comm *pc, const void *send, void *recv, size_t count, pl_dtype t,
                               pl_redop op, int root, cudaStream_t s)
{
    ncomm *c = N(pc);
    if (bad_args(c, "reduce", count, t, (int)op, root, send, c->rank == root ? recv : send))
        return bad(c);
    if (!count) return PL_COMM_OK;
    double t0 = pl_trace_now();
    NCK(ncclReduce(send, recv, count, nccl_type(t), nccl_op(op), root, c->nc, s), "ncclReduce");
    size_t bytes = count * pl_dtype_size(t);
    if (c->rank != root) account(c, c->rank, (c->rank + 1) % c->n, bytes); /* chain to root */
    emit_call(c, t0, PL_CALL_REDUCE, count, t);
    return PL_COMM_OK;
}

static pl_comm_result n_all_gather(pl_comm *pc, const void *send, void *recv, size_t sendcount,
                                   pl_dtype t, cudaStream_t s)
{
    ncomm *c = N(pc);
    if (bad_args(c, "all_gather", sendcount, t, -1, -1, send, recv)) return bad(c);
    if (!sendcount) return PL_COMM_OK;
    double t0 = pl_trace_now();
    NCK(ncclAllGather(send, recv, sendcount, nccl_type(t), c->nc, s), "ncclAllGather");
    size_t bytes = sendcount * pl_dtype_size(t);
    account(c, c->rank, (c->rank + 1) % c->n, (uint64_t)(c->n - 1) * bytes);
    emit_call(c, t0, PL_CALL_ALL_GATHER, sendcount, t);
    return PL_COMM_OK;
}

static pl_comm_result n_reduce_scatter(pl_comm *pc, const void *send, void *recv, size_t recvcount,
                                       pl_dtype t, pl_redop op, cudaStream_t s)
{
    ncomm *c = N(pc);
    if (bad_args(c, "reduce_scatter", recvcount, t, (int)op, -1, send, recv)) return bad(c);
    if (!recvcount) return PL_COMM_OK;
    double t0 = pl_trace_now();
    NCK(ncclReduceScatter(send, recv, recvcount, nccl_type(t), nccl_op(op), c->nc, s),
        "ncclReduceScatter");
    size_t bytes = recvcount * pl_dtype_size(t);
    account(c, c->rank, (c->rank + 1) % c->n, (uint64_t)(c->n - 1) * bytes);
    emit_call(c, t0, PL_CALL_REDUCE_SCATTER, recvcount, t);
    return PL_COMM_OK;
}

static pl_comm_result n_all_to_all(pl_comm *pc, const void *send, void *recv, size_t count,
                                   pl_dtype t, cudaStream_t s)
{
    ncomm *c = N(pc);
    if (bad_args(c, "all_to_all", count, t, -1, -1, send, recv)) return bad(c);
    const pl_collective *d = &pl_collectives[PL_CALL_ALL_TO_ALL];
    if (count && pl_collective_in_place(d, send, recv, count, t, c->rank)) /* PL_IN_PLACE_NEVER */
        return failf(c, PL_COMM_INVALID_ARGUMENT,
                     "%s: send and receive buffers must differ (no in-place form)", d->name);
    if (!count) return PL_COMM_OK;
    double t0 = pl_trace_now();
    size_t bytes = count * pl_dtype_size(t);
    NCK(ncclGroupStart(), "ncclGroupStart");
    for (int j = 0; j < c->n; j++) {
        ncclResult_t e =
            ncclSend((const char *)send + (size_t)j * bytes, count, nccl_type(t), j, c->nc, s);
        if (e == ncclSuccess)
            e = ncclRecv((char *)recv + (size_t)j * bytes, count, nccl_type(t), j, c->nc, s);
        if (e != ncclSuccess) {
            ncclGroupEnd();
            return nccl_fail(c, e, "all_to_all");
        }
    }
    NCK(ncclGroupEnd(), "ncclGroupEnd");
    for (int j = 0; j < c->n; j++)
        if (j != c->rank) account(c, c->rank, j, bytes);
    emit_call(c, t0, PL_CALL_ALL_TO_ALL, count, t);
    return PL_COMM_OK;
}

static pl_comm_result p2p(ncomm *c, int is_send, const void *buf, size_t count, pl_dtype t,
                          int peer, cudaStream_t s)
{
    const char *what = is_send ? "send" : "recv";
    if (aborted(c)) return PL_COMM_ABORTED;
    if ((unsigned)t >= PL_NUM_DTYPES)
        return failf(c, PL_COMM_INVALID_ARGUMENT,
                     "%s: type %d is not a pl_dtype (allowed: 0..%d: float, double, int32, int64)",
                     what, (int)t, PL_NUM_DTYPES - 1);
    if (peer < 0 || peer >= c->n)
        return failf(c, PL_COMM_INVALID_ARGUMENT, "%s: peer %d is not a rank (allowed: 0..%d)",
                     what, peer, c->n - 1);
    if (peer == c->rank)
        return failf(c, PL_COMM_INVALID_ARGUMENT, "%s: peer %d is this rank itself", what, peer);
    if (count && !buf)
        return failf(c, PL_COMM_INVALID_ARGUMENT, "%s: buffer is NULL with count %zu > 0", what,
                     count);
    double t0 = pl_trace_now();
    if (is_send)
        NCK(ncclSend(buf, count, nccl_type(t), peer, c->nc, s), "ncclSend");
    else
        NCK(ncclRecv((void *)buf, count, nccl_type(t), peer, c->nc, s), "ncclRecv");
    size_t bytes = count * pl_dtype_size(t);
    if (is_send) account(c, c->rank, peer, bytes); /* the sender counts: once per message */
    char label[48];
    snprintf(label, sizeof label, is_send ? "send to %d" : "recv from %d", c->wrank[peer]);
    emit(c, t0, is_send ? PL_EV_SEND : PL_EV_RECV, label, bytes, c->wrank[peer]);
    return PL_COMM_OK;
}

static pl_comm_result n_send(pl_comm *c, const void *buf, size_t count, pl_dtype t, int peer,
                             cudaStream_t s)
{
    return p2p(N(c), 1, buf, count, t, peer, s);
}

static pl_comm_result n_recv(pl_comm *c, void *buf, size_t count, pl_dtype t, int peer,
                             cudaStream_t s)
{
    return p2p(N(c), 0, buf, count, t, peer, s);
}

/* Nothing to wait for on the host: each send's stream orders it. */
static pl_comm_result n_wait_sends(pl_comm *c)
{
    (void)c;
    return PL_COMM_OK;
}

static pl_comm_result n_group_start(void)
{
    return ncclGroupStart() == ncclSuccess ? PL_COMM_OK : PL_COMM_INVALID_ARGUMENT;
}

static pl_comm_result n_group_end(void)
{
    ncclResult_t e = ncclGroupEnd();
    return e == ncclSuccess              ? PL_COMM_OK
           : e == ncclInvalidUsage       ? PL_COMM_INVALID_ARGUMENT
           : e == ncclUnhandledCudaError ? PL_COMM_CUDA_ERROR
                                         : PL_COMM_SYSTEM_ERROR;
}

/* Every member arrives before any leaves: a one-int all-reduce, waited for. */
static pl_comm_result n_barrier(pl_comm *pc)
{
    ncomm *c = N(pc);
    if (aborted(c)) return PL_COMM_ABORTED;
    cudaStream_t s;
    cudaError_t ce = cudaSetDevice(c->device);
    if (!ce) ce = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (ce) return failf(c, PL_COMM_CUDA_ERROR, "barrier: %s", cudaGetErrorName(ce));
    ncclResult_t e = ncclAllReduce(c->dev_scratch, c->dev_scratch, 1, ncclInt32, ncclSum, c->nc, s);
    ce = e == ncclSuccess ? cudaStreamSynchronize(s) : cudaSuccess;
    cudaStreamDestroy(s);
    if (e != ncclSuccess) return nccl_fail(c, e, "barrier");
    if (ce) return failf(c, PL_COMM_CUDA_ERROR, "barrier: %s", cudaGetErrorName(ce));
    return PL_COMM_OK;
}

#if !(NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0) && !defined(PARALAB_NCCL_NO_SPLIT))
/* A split without ncclCommSplit (NCCL before 2.18): a fresh unique id per
 * group, made by its first member (by key, then rank), all-gathered over
 * the parent communicator (within a process or across processes alike),
 * then ncclCommInitRank by every member of the group. all: every member's
 * (color, key). A member with a negative color joins no group but takes
 * part in the all-gather. */
static pl_comm_result split_by_id(ncomm *c, int color, int key, const int *all, ncclComm_t *nc)
{
    int newrank = 0, size = 0, first = -1;
    for (int i = 0; i < c->n; i++) {
        if (color < 0 || all[2 * i] != color) continue;
        size++;
        if (all[2 * i + 1] < key || (all[2 * i + 1] == key && i < c->rank)) newrank++;
        if (first < 0 || all[2 * i + 1] < all[2 * first + 1]) first = i;
    }
    size_t idb = sizeof(ncclUniqueId);
    unsigned char *ids = malloc(idb * (size_t)c->n);
    ncclUniqueId mine;
    memset(&mine, 0, sizeof mine);
    ncclResult_t e = color >= 0 && first == c->rank ? ncclGetUniqueId(&mine) : ncclSuccess;
    if (!ids) return failf(c, PL_COMM_SYSTEM_ERROR, "comm_split: out of memory");
    if (e != ncclSuccess) {
        free(ids);
        return nccl_fail(c, e, "comm_split: ncclGetUniqueId");
    }
    unsigned char *dev = NULL;
    cudaStream_t s;
    cudaError_t ce = cudaMalloc((void **)&dev, idb * (size_t)(c->n + 1));
    if (!ce) ce = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (!ce) {
        ce = cudaMemcpyAsync(dev, &mine, idb, cudaMemcpyHostToDevice, s);
        if (!ce) e = ncclAllGather(dev, dev + idb, idb, ncclUint8, c->nc, s);
        if (!ce && e == ncclSuccess)
            ce = cudaMemcpyAsync(ids, dev + idb, idb * (size_t)c->n, cudaMemcpyDeviceToHost, s);
        if (!ce && e == ncclSuccess) ce = cudaStreamSynchronize(s);
        cudaStreamDestroy(s);
    }
    cudaFree(dev);
    if (!ce && e == ncclSuccess && color >= 0) {
        ncclUniqueId id;
        memcpy(&id, ids + idb * (size_t)first, idb);
        e = ncclCommInitRank(nc, size, id, newrank);
    }
    free(ids);
    if (ce) return failf(c, PL_COMM_CUDA_ERROR, "comm_split: %s", cudaGetErrorName(ce));
    if (e != ncclSuccess) return nccl_fail(c, e, "comm_split: ncclCommInitRank");
    return PL_COMM_OK;
}
#endif

/* ncclCommSplit, after an all-gather of every member's (color, key): the
 * new handle must know its members' world ranks for the ledger. */
static pl_comm_result n_split(pl_comm *pc, int color, int key, pl_comm **out)
{
    ncomm *c = N(pc);
    if (!out) return failf(c, PL_COMM_INVALID_ARGUMENT, "comm_split: out is NULL");
    *out = NULL;
    if (aborted(c)) return PL_COMM_ABORTED;
    int mine[2] = {color, key}, all[2 * MAX_RANKS];
    cudaStream_t s;
    cudaError_t ce = cudaSetDevice(c->device);
    if (!ce) ce = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (ce) return failf(c, PL_COMM_CUDA_ERROR, "comm_split: %s", cudaGetErrorName(ce));
    ce = cudaMemcpyAsync(c->dev_scratch, mine, sizeof mine, cudaMemcpyHostToDevice, s);
    ncclResult_t e = ce ? ncclSuccess
                        : ncclAllGather(c->dev_scratch, c->dev_scratch + 2, 2, ncclInt32, c->nc, s);
    if (!ce && e == ncclSuccess)
        ce = cudaMemcpyAsync(all, c->dev_scratch + 2, 2 * sizeof(int) * (size_t)c->n,
                             cudaMemcpyDeviceToHost, s);
    if (!ce && e == ncclSuccess) ce = cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
    if (e != ncclSuccess) return nccl_fail(c, e, "comm_split");
    if (ce) return failf(c, PL_COMM_CUDA_ERROR, "comm_split: %s", cudaGetErrorName(ce));
    ncclComm_t nc = NULL;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0) && !defined(PARALAB_NCCL_NO_SPLIT)
    e = ncclCommSplit(c->nc, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &nc, NULL);
    if (e != ncclSuccess) return nccl_fail(c, e, "ncclCommSplit");
#else
    pl_comm_result sr = split_by_id(c, color, key, all, &nc);
    if (sr != PL_COMM_OK) return sr;
#endif
    if (color < 0) return PL_COMM_OK;
    ncomm *h = calloc(1, sizeof *h);
    if (!h || cudaMalloc((void **)&h->dev_scratch, SCRATCH_INTS * sizeof(int)) != cudaSuccess) {
        free(h);
        ncclCommDestroy(nc);
        return failf(c, PL_COMM_SYSTEM_ERROR, "comm_split: out of memory");
    }
    /* the members of this color, by key then by rank (NCCL's order): an
     * insertion sort that moves a member only past larger keys */
    int m = 0;
    for (int i = 0; i < c->n; i++) {
        if (all[2 * i] != color) continue;
        int j = m++;
        for (; j > 0 && all[2 * h->wrank[j - 1] + 1] > all[2 * i + 1]; j--)
            h->wrank[j] = h->wrank[j - 1];
        h->wrank[j] = i; /* a member of the parent, for now */
    }
    for (int j = 0; j < m; j++) {
        if (h->wrank[j] == c->rank) h->rank = j;
        h->wrank[j] = c->wrank[h->wrank[j]]; /* parent member -> world rank */
    }
    h->base.engine = &pl_comm_nccl_engine;
    h->w = c->w;
    h->nc = nc;
    h->n = m;
    h->device = c->device;
    link_handle(c->w, h);
    *out = &h->base;
    return PL_COMM_OK;
}

static pl_comm_result n_free(pl_comm *pc)
{
    ncomm *c = N(pc);
    if (c->is_world)
        return failf(c, PL_COMM_INVALID_ARGUMENT,
                     "comm_free: this is the world communicator; pl_comm_destroy_all (or "
                     "pl_world_run) frees it");
    handle_free(c);
    return PL_COMM_OK;
}

static pl_ledger n_ledger(const pl_comm *pc)
{
    const ncomm *c = (const ncomm *)pc;
    pthread_mutex_lock(&c->w->lock);
    pl_ledger l = c->w->ledger[c->wrank[c->rank]];
    pthread_mutex_unlock(&c->w->lock);
    return l;
}

static pl_ledger n_ledger_own(const pl_comm *pc)
{
    const ncomm *c = (const ncomm *)pc;
    pthread_mutex_lock(&c->w->lock);
    pl_ledger l = c->own;
    pthread_mutex_unlock(&c->w->lock);
    return l;
}

static int n_world_rank(const pl_comm *pc, int member)
{
    const ncomm *c = (const ncomm *)pc;
    return member >= 0 && member < c->n ? c->wrank[member] : -1;
}

static void n_count_call(pl_comm *pc, pl_comm_call k)
{
    ncomm *c = N(pc);
    pthread_mutex_lock(&c->w->lock);
    c->w->ledger[c->wrank[c->rank]].calls[k]++;
    c->own.calls[k]++;
    pthread_mutex_unlock(&c->w->lock);
}

static uint64_t n_link_bytes(const pl_comm *pc, int from, int to)
{
    const ncomm *c = (const ncomm *)pc;
    nworld *w = c->w;
    if (from < 0 || to < 0 || from >= w->n || to >= w->n) return 0;
    pthread_mutex_lock(&w->lock);
    uint64_t b = w->link[from][to];
    pthread_mutex_unlock(&w->lock);
    return b;
}

const pl_comm_engine pl_comm_nccl_engine = {
    .name = "nccl",
    .fits = n_fits,
    .destroy_all = n_destroy_all,
    .set_trace = n_set_trace,
    .set_chunk_bytes = n_set_chunk_bytes,
    .abort = n_abort,
    .rank = n_rank,
    .size = n_size,
    .device = n_device,
    .last_error = n_last_error,
    .split = n_split,
    .free = n_free,
    .barrier = n_barrier,
    .all_reduce = n_all_reduce,
    .broadcast = n_broadcast,
    .reduce = n_reduce,
    .all_gather = n_all_gather,
    .reduce_scatter = n_reduce_scatter,
    .all_to_all = n_all_to_all,
    .send = n_send,
    .recv = n_recv,
    .send_eager = n_send, /* ncclSend never waits on the host: its rendezvous is on the GPU */
    .wait_sends = n_wait_sends,
    .group_start = n_group_start,
    .group_end = n_group_end,
    .ledger = n_ledger,
    .ledger_own = n_ledger_own,
    .world_rank = n_world_rank,
    .count_call = n_count_call,
    .link_bytes = n_link_bytes,
};
