/*
 * comm_mpi.c — the MPI engine (paralab/dist.h, comm_engine.h): the
 * communicators of a world of several processes launched by mpirun, on
 * simulated GPUs.
 *
 * Every rank thread is its own MPI participant: MPI_Init_thread with
 * MPI_THREAD_MULTIPLE, one duplicate of MPI_COMM_WORLD for the data, and a
 * message between global ranks a and b goes to b's process with a tag that
 * names the communicator (a context number), a's thread and b's thread and
 * the channel (descriptor, collective data, point to point). MPI keeps the
 * order of the messages of one sender and tag, so nothing else is needed.
 *
 * The collectives run the local engine's own algorithms (comm_local_
 * algorithms.c) over MPI point to point: the same ring with the same
 * segments and chunks, the same chain, the same pairwise all-to-all, the
 * same reduction kernel (pl_k_reduce) on the rank's device. So every
 * element is reduced in the same order as in a one-process run and the
 * results are the same bits, and every chunk is the same message in the
 * ledger. (MPI_Allreduce would add in its own order: not the same bits.)
 * Simulated device memory is host memory: MPI reads and writes the device
 * buffers themselves once the rank's stream is synchronised.
 *
 * Checks, as the local engine's: each collective call first meets its
 * members — every member sends its call (kind, count, type, op, root, call
 * number, and its argument error if any) to member 0, which sends the table
 * back — so a mismatch or a bad argument is reported by every member with
 * what each rank called, instead of hanging. A rank that waits longer than
 * the timeout for a message (a receive without its send, a member missing
 * from a call) reports what it waits for and stops the world: it tells the
 * other processes (an abort message), whose ranks stop with their own call.
 */
#include <stdio.h>

#include "comm_engine.h"
#include "paralab/dist.h"

#ifndef PARALAB_MPI

/* The build without MPI: no handles, and nothing is ever active. */
int pl_dist_init(char *err, size_t err_size)
{
    if (err_size) err[0] = '\0';
    return 0;
}
int pl_dist_active(void) { return 0; }
int pl_dist_procs(void) { return 1; }
int pl_dist_proc(void) { return 0; }
int pl_dist_built(void) { return 0; }
void pl_dist_gather_host(const pl_comm *world, void *base, size_t stride, size_t bytes)
{
    (void)world, (void)base, (void)stride, (void)bytes;
}
void pl_dist_bcast_host(void *buf, size_t bytes) { (void)buf, (void)bytes; }
double pl_dist_max(double v) { return v; }
pl_comm_result pl_dist_allgather_host(const pl_comm *world, void *base, size_t stride, size_t bytes)
{
    (void)world, (void)base, (void)stride, (void)bytes;
    return PL_COMM_OK;
}

pl_comm_result pl_comm_create_mpi(int n, int threads, const int *devices, double timeout_s,
                                  pl_comm **ranks, char *err, size_t err_size)
{
    (void)n, (void)threads, (void)devices, (void)timeout_s, (void)ranks;
    if (err_size)
        snprintf(err, err_size, "this build has no MPI engine (build it with `make mpi`)");
    return PL_COMM_INVALID_ARGUMENT;
}

pl_comm_result pl_comm_create_dist(int n, int threads, int *devices, double timeout_s,
                                   pl_comm **ranks, char *err, size_t err_size)
{
    return pl_comm_create_mpi(n, threads, devices, timeout_s, ranks, err, err_size);
}

static pl_comm_result none_group(void) { return PL_COMM_OK; }
static int none_fits(int n, const int *devices)
{
    (void)n, (void)devices;
    return 0;
}
const pl_comm_engine pl_comm_mpi_engine = {
    .name = "mpi", .fits = none_fits, .group_start = none_group, .group_end = none_group};

#else

#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "paralab/collectives.h"
#ifdef PARALAB_CUDA
#include "paralab/nccl_mpi.h" /* pl_comm_create_dist: NCCL across processes */
#endif
#include "paralab/device.h"
#include "paralab/kernels.h"
#include "paralab/trace.h"

#define MAXR 64
#define CH_DESC 0 /* a call's descriptor, and member 0's table */
#define CH_DATA 1 /* a collective's chunks */
#define CH_P2P 2  /* pl_send / pl_recv */
#define CH_HOST 3 /* pl_dist_gather_host, pl_dist_allgather_host */
#define CH_DONE 4 /* a receive's end on the modeled clock, back to its blocking send */
#define NCH 5
#define TAG_ABORT 1 /* on the control communicator */
#define TAG_HOLD 2  /* a hold begins (+1) or ends (-1) in another process */
#define DEFAULT_CHUNK ((size_t)4 << 20)

/* ---- the process ------------------------------------------------------------------------- */

static struct {
    int active, inited, procs, proc, tag_ub;
    MPI_Comm data, ctl;
} D;

static void at_exit(void);

int pl_dist_built(void) { return 1; }
int pl_dist_active(void) { return D.active; }
int pl_dist_procs(void) { return D.active ? D.procs : 1; }
int pl_dist_proc(void) { return D.active ? D.proc : 0; }

int pl_dist_init(char *err, size_t err_size)
{
    if (err_size) err[0] = '\0';
    if (D.inited) return 0;
    D.inited = 1;
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK") && !getenv("PMI_RANK"))
        return 0; /* not launched by mpirun: a one-process world, as always */
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        snprintf(err, err_size, "MPI_Init_thread failed");
        return 1;
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        snprintf(err, err_size,
                 "MPI granted thread level %d, not MPI_THREAD_MULTIPLE (%d): every rank thread "
                 "calls MPI, so this MPI cannot run paralab's worlds",
                 provided, MPI_THREAD_MULTIPLE);
        MPI_Finalize();
        return 1;
    }
    MPI_Comm_size(MPI_COMM_WORLD, &D.procs);
    MPI_Comm_rank(MPI_COMM_WORLD, &D.proc);
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    D.tag_ub = flag && ub ? *ub : 32767;
    MPI_Comm_dup(MPI_COMM_WORLD, &D.data);
    MPI_Comm_dup(MPI_COMM_WORLD, &D.ctl);
    MPI_Comm_set_errhandler(D.data, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(D.ctl, MPI_ERRORS_RETURN);
    D.active = 1;
    atexit(at_exit);
    const char *out = getenv("PARALAB_MPI_OUTPUT");
    if (D.proc > 0 && !(out && !strcmp(out, "all")))
        if (!freopen("/dev/null", "w", stdout)) clearerr(stdout);
    return 0;
}

static _Atomic int world_failed; /* a rank of this process stopped its world */
static _Atomic int held_remote;  /* ranks of other processes held now (their holds' messages) */

static void at_exit(void)
{
    if (!D.active) return;
    fflush(stdout);
    fflush(stderr);
    /* every process meets before any leaves (at most 5 s): mpirun ends the
     * job when one exits with a failure, and the others' reports of the
     * same failure (each rank's call) must be out by then */
    MPI_Request rq;
    if (MPI_Ibarrier(D.ctl, &rq) == MPI_SUCCESS) {
        struct timespec ts = {0, 1000000};
        int done = 0;
        for (int i = 0; i < 5000 && !done; i++) {
            MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
            if (!done) nanosleep(&ts, NULL);
        }
    }
    /* a failed world may leave requests that never complete: MPI_Finalize
     * could wait for them */
    if (!atomic_load(&world_failed)) MPI_Finalize();
}

/* ---- the world and its handles ------------------------------------------------------------ */

typedef struct mworld {
    int n, T, p;
    double timeout;
    pthread_mutex_t lock;
    _Atomic int aborted;
    char abort_msg[1024];
    _Atomic int held;
    pl_ledger ledger[MAXR];    /* per thread of this process */
    uint64_t link[MAXR][MAXR]; /* [thread][to world rank] */
    int next_ctx[MAXR];        /* per thread: see split */
    pl_trace *trace;
    size_t chunk_bytes;
    int handles; /* alive */
    /* pl_dist_allgather_host: this process's threads meet once their rows are in */
    pthread_cond_t host_cv;
    int host_in;
    unsigned host_gen;
} mworld;

/* A message's stamp (exchange, below) */
typedef struct stamp {
    double t;
    int32_t wants_done, pad;
} stamp;

typedef struct mcomm {
    pl_comm base;
    mworld *w;
    int n, rank, thread, ctx, device;
    int wrank[MAXR];
    unsigned long seq;
    pl_ledger own;
    void *scratch, *work;
    size_t scratch_bytes, work_bytes;
    MPI_Request eager[2 * 256]; /* each eager send's stamp and data */
    stamp eager_stamp[256];
    int neager;
    char doing[200];
    char err[2048];
} mcomm;

static int proc_of(const mworld *w, int wr) { return wr / w->T; }
static int thread_of(const mworld *w, int wr) { return wr % w->T; }

static int tag_of(const mcomm *c, int from_wr, int to_wr, int ch)
{
    const mworld *w = c->w;
    return ((c->ctx * w->T + thread_of(w, from_wr)) * w->T + thread_of(w, to_wr)) * NCH + ch;
}

static pl_comm_result fail(mcomm *c, pl_comm_result r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static pl_comm_result fail(mcomm *c, pl_comm_result r, const char *fmt, ...)
{
    char msg[1800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->err, sizeof c->err, "rank %d: %s", c->wrank[c->rank], msg);
    return r;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- aborts -------------------------------------------------------------------------------- */

static void abort_world(mworld *w, const char *why, int tell)
{
    pthread_mutex_lock(&w->lock);
    int first = !atomic_load(&w->aborted);
    if (first) {
        snprintf(w->abort_msg, sizeof w->abort_msg, "%s", why);
        atomic_store(&w->aborted, 1);
        atomic_store(&world_failed, 1);
    }
    pthread_mutex_unlock(&w->lock);
    if (first && tell)
        for (int q = 0; q < D.procs; q++)
            if (q != D.proc) {
                MPI_Request rq;
                if (MPI_Isend(why, (int)strlen(why) + 1, MPI_CHAR, q, TAG_ABORT, D.ctl, &rq) ==
                    MPI_SUCCESS)
                    MPI_Request_free(&rq);
            }
}

/* An abort from another process, if one came. */
static void poll_abort(mworld *w)
{
    int flag = 0;
    MPI_Status st;
    pthread_mutex_lock(&w->lock);
    if (!atomic_load(&w->aborted) &&
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_ABORT, D.ctl, &flag, &st) == MPI_SUCCESS && flag) {
        char msg[1024];
        int len = 0;
        MPI_Get_count(&st, MPI_CHAR, &len);
        if (len < 1 || len > (int)sizeof msg) len = (int)sizeof msg;
        MPI_Recv(msg, len, MPI_CHAR, st.MPI_SOURCE, TAG_ABORT, D.ctl, MPI_STATUS_IGNORE);
        msg[sizeof msg - 1] = '\0';
        snprintf(w->abort_msg, sizeof w->abort_msg, "%.990s (process %d)", msg, st.MPI_SOURCE);
        atomic_store(&w->aborted, 1);
        atomic_store(&world_failed, 1);
    }
    /* the other processes' holds, in the order each process made them */
    while (MPI_Iprobe(MPI_ANY_SOURCE, TAG_HOLD, D.ctl, &flag, &st) == MPI_SUCCESS && flag) {
        int delta = 0;
        MPI_Recv(&delta, 1, MPI_INT, st.MPI_SOURCE, TAG_HOLD, D.ctl, MPI_STATUS_IGNORE);
        atomic_fetch_add(&held_remote, delta);
        flag = 0;
    }
    pthread_mutex_unlock(&w->lock);
}

/* Waits for the requests, polling: PL_COMM_OK, or PL_COMM_TIMEOUT after the
 * world's timeout,
 * or PL_COMM_ABORTED when the world stops. `what`: this rank's wait, for
 * the report. Unfinished requests are cancelled on failure. The clock stops
 * while a rank of any process is held (pl_comm_hold). */
static pl_comm_result wait_for(mcomm *c, int nreq, MPI_Request *rq, MPI_Status *st,
                               const char *what, int abortable)
{
    mworld *w = c->w;
    double start = now_s(), held = 0, held_since = 0;
    for (long spin = 0;; spin++) {
        int done = 0;
        if (MPI_Testall(nreq, rq, &done, st ? st : MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return fail(c, PL_COMM_SYSTEM_ERROR, "MPI failed while it waited for %s", what);
        if (done) return PL_COMM_OK;
        if (abortable && (spin & 63) == 0) poll_abort(w);
        if (abortable && atomic_load(&w->aborted)) {
            for (int i = 0; i < nreq; i++)
                if (rq[i] != MPI_REQUEST_NULL) MPI_Cancel(&rq[i]);
            return fail(c, PL_COMM_ABORTED, "stopped while waiting for %s: %s", what, w->abort_msg);
        }
        double t = now_s();
        if (atomic_load(&w->held) || atomic_load(&held_remote) > 0) {
            if (!held_since) held_since = t;
        } else if (held_since) {
            held += t - held_since;
            held_since = 0;
        }
        if (!held_since && t - start - held > w->timeout) {
            for (int i = 0; i < nreq; i++)
                if (rq[i] != MPI_REQUEST_NULL) MPI_Cancel(&rq[i]);
            pl_comm_result r =
                fail(c, PL_COMM_TIMEOUT,
                     "waited %.0f s for %s: a deadlock? (the other ranks' calls follow from "
                     "their processes)",
                     w->timeout, what);
            abort_world(w, c->err, 1);
            return r;
        }
        if (spin < 200)
            sched_yield();
        else {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
}

static pl_comm_result wait_all(mcomm *c, int nreq, MPI_Request *rq, MPI_Status *st,
                               const char *what)
{
    return wait_for(c, nreq, rq, st, what, 1);
}

/* ---- the ledger and trace events ------------------------------------------------------------ */

static void count_send(mcomm *c, int to_member, size_t bytes)
{
    mworld *w = c->w;
    pthread_mutex_lock(&w->lock);
    w->ledger[c->thread].bytes_sent += bytes;
    w->ledger[c->thread].messages_sent++;
    w->link[c->thread][c->wrank[to_member]] += bytes;
    pthread_mutex_unlock(&w->lock);
    c->own.bytes_sent += bytes;
    c->own.messages_sent++;
}

static void count_recv(mcomm *c, size_t bytes)
{
    mworld *w = c->w;
    pthread_mutex_lock(&w->lock);
    w->ledger[c->thread].bytes_received += bytes;
    w->ledger[c->thread].messages_received++;
    pthread_mutex_unlock(&w->lock);
    c->own.bytes_received += bytes;
    c->own.messages_received++;
}

typedef pl_comm_mark mark; /* comm_engine.h */

static void mark_start(mark *m, cudaStream_t s) { pl_comm_mark_start(m, s); }

static void emit(mcomm *c, const mark *m, pl_event_kind kind, const char *label, uint64_t bytes,
                 int peer, int chunk)
{
    pl_comm_emit(c->w->trace, &c->base, c->wrank[c->rank], m, kind, label, bytes, peer, chunk);
}

/* ---- a call's meeting: descriptors to member 0, its table back ----------------------------- */

enum { CALL_FREE = PL_NUM_CALLS };

typedef struct desc {
    int32_t kind, type, op, root, color, key, bad, next_ctx;
    uint64_t count, seq;
    char why[400];
} desc;

static const char *kind_name(int k)
{
    if (k == CALL_FREE) return "comm_free";
    if (k == PL_CALL_BARRIER) return "barrier";
    if (k == PL_CALL_SPLIT) return "comm_split";
    if (k == PL_CALL_SEND) return "send";
    if (k == PL_CALL_RECV) return "recv";
    if ((unsigned)k < PL_NUM_CALLS) return pl_collectives[k].name;
    return "?";
}

static void describe(const desc *d, char *out, size_t cap)
{
    int k = d->kind;
    if (k == CALL_FREE || k == PL_CALL_BARRIER)
        snprintf(out, cap, "%s()", kind_name(k));
    else if (k == PL_CALL_SPLIT)
        snprintf(out, cap, "comm_split(color=%d, key=%d)", d->color, d->key);
    else {
        const pl_collective *pc = &pl_collectives[k];
        int n = snprintf(out, cap, "%s(count=%llu, %s", pc->name, (unsigned long long)d->count,
                         pl_dtype_name((pl_dtype)d->type));
        if (pc->has_op && n > 0 && (size_t)n < cap)
            n += snprintf(out + n, cap - (size_t)n, ", %s", pl_redop_name((pl_redop)d->op));
        if (pc->has_root && n > 0 && (size_t)n < cap)
            n += snprintf(out + n, cap - (size_t)n, ", root=%d", d->root);
        if (n > 0 && (size_t)n < cap) snprintf(out + n, cap - (size_t)n, ")");
    }
}

static int same_call(const desc *a, const desc *b)
{
    if (a->kind != b->kind || a->seq != b->seq) return 0;
    if (a->kind >= PL_NUM_CALLS || a->kind == PL_CALL_BARRIER || a->kind == PL_CALL_SPLIT) return 1;
    const pl_collective *pc = &pl_collectives[a->kind];
    return a->count == b->count && a->type == b->type && (!pc->has_op || a->op == b->op) &&
           (!pc->has_root || a->root == b->root);
}

/* Every member posts `mine`; on return `all` holds every member's. */
static pl_comm_result meet(mcomm *c, desc *mine, desc *all)
{
    int n = c->n, me = c->rank;
    char what[400], call[300];
    describe(mine, call, sizeof call);
    mine->seq = ++c->seq;
    snprintf(c->doing, sizeof c->doing, "%.170s (call #%lu)", call, c->seq);
    if (n == 1) {
        all[0] = *mine;
    } else if (me == 0) {
        MPI_Request rq[MAXR];
        all[0] = *mine;
        for (int m = 1; m < n; m++)
            MPI_Irecv(&all[m], (int)sizeof(desc), MPI_BYTE, proc_of(c->w, c->wrank[m]),
                      tag_of(c, c->wrank[m], c->wrank[0], CH_DESC), D.data, &rq[m - 1]);
        snprintf(what, sizeof what, "the other members' calls in %s", c->doing);
        pl_comm_result r = wait_all(c, n - 1, rq, NULL, what);
        if (r) return r;
        for (int m = 1; m < n; m++)
            MPI_Isend(all, (int)(n * sizeof(desc)), MPI_BYTE, proc_of(c->w, c->wrank[m]),
                      tag_of(c, c->wrank[0], c->wrank[m], CH_DESC), D.data, &rq[m - 1]);
        snprintf(what, sizeof what, "the members to take the table of %s", c->doing);
        /* not stopped by an abort: a member that finds a mismatch in this
         * table stops the world, and member 0 must still find it itself */
        if ((r = wait_for(c, n - 1, rq, NULL, what, 0))) return r;
    } else {
        MPI_Request rq[2];
        MPI_Isend(mine, (int)sizeof(desc), MPI_BYTE, proc_of(c->w, c->wrank[0]),
                  tag_of(c, c->wrank[me], c->wrank[0], CH_DESC), D.data, &rq[0]);
        MPI_Irecv(all, (int)(n * sizeof(desc)), MPI_BYTE, proc_of(c->w, c->wrank[0]),
                  tag_of(c, c->wrank[0], c->wrank[me], CH_DESC), D.data, &rq[1]);
        snprintf(what, sizeof what, "rank %d (member 0) to meet in %s", c->wrank[0], c->doing);
        pl_comm_result r = wait_all(c, 2, rq, NULL, what);
        if (r) return r;
    }
    /* a bad argument first (the rank's own message), then a mismatch */
    for (int m = 0; m < n; m++)
        if (all[m].bad) {
            all[m].why[sizeof all[m].why - 1] = '\0';
            if (m == me) return fail(c, PL_COMM_INVALID_ARGUMENT, "%s", all[m].why);
            return fail(c, PL_COMM_INVALID_ARGUMENT, "rank %d's arguments are invalid: %s",
                        c->wrank[m], all[m].why);
        }
    for (int m = 1; m < n; m++)
        if (!same_call(&all[0], &all[m])) {
            char list[1700];
            size_t len = 0;
            for (int q = 0; q < n && len < sizeof list; q++) {
                describe(&all[q], call, sizeof call);
                int k = snprintf(list + len, sizeof list - len, "%s rank %d: %s (call #%llu)",
                                 q ? ";" : "", c->wrank[q], call, (unsigned long long)all[q].seq);
                if (k > 0) len += (size_t)k;
            }
            return fail(c, PL_COMM_MISMATCH, "the ranks made different calls:%s", list);
        }
    return PL_COMM_OK;
}

/* ---- device buffers ------------------------------------------------------------------------- */

/* The rank's stream done before MPI reads or writes its buffers: a wait of
 * the emulation's, off the modeled clock (pl_device_stream_drain). */
static pl_comm_result sync_stream(mcomm *c, cudaStream_t s)
{
    cudaError_t e = pl_device_stream_drain(s);
    if (e) return fail(c, PL_COMM_CUDA_ERROR, "the stream failed: %s", cudaGetErrorString(e));
    return PL_COMM_OK;
}

static void *ensure(void **p, size_t *have, size_t bytes)
{
    if (bytes > *have) {
        cudaFree(*p);
        *p = NULL;
        *have = 0;
        if (cudaMalloc(p, bytes) != cudaSuccess) return NULL;
        *have = bytes;
    }
    return *p;
}

static int check_args(mcomm *c, desc *d, const void *send, const void *recv)
{
    const pl_collective *pc = &pl_collectives[d->kind];
    if ((unsigned)d->type >= PL_NUM_DTYPES)
        snprintf(d->why, sizeof d->why, "%s: type %d is not a pl_dtype (0..%d)", pc->name, d->type,
                 PL_NUM_DTYPES - 1);
    else if (pc->has_op && (unsigned)d->op >= PL_NUM_OPS)
        snprintf(d->why, sizeof d->why, "%s: op %d is not a pl_redop (0..%d)", pc->name, d->op,
                 PL_NUM_OPS - 1);
    else if (pc->has_root && (d->root < 0 || d->root >= c->n))
        snprintf(d->why, sizeof d->why, "%s: root %d is not a rank of the communicator (0..%d)",
                 pc->name, d->root, c->n - 1);
    else if (d->count && ((pl_collective_needs_send(pc, c->rank, d->root) && !send) ||
                          (pl_collective_needs_recv(pc, c->rank, d->root) && !recv)))
        snprintf(d->why, sizeof d->why, "%s: a NULL buffer with count %llu", pc->name,
                 (unsigned long long)d->count);
    else
        return 1;
    d->bad = 1;
    return 0;
}

/* ---- the algorithms, as the local engine's --------------------------------------------------- */

static size_t seg_start(size_t count, int n, int k) { return count * (size_t)k / (size_t)n; }
static size_t seg_len(size_t count, int n, int k)
{
    return seg_start(count, n, k + 1) - seg_start(count, n, k);
}
static size_t chunk_elems(const mcomm *c, size_t es)
{
    size_t ce = c->w->chunk_bytes / es;
    return ce ? ce : 1;
}

/* The modeled clock across processes. Each message's data is preceded by
 * its sender's stamp, on the same tag (MPI keeps their order): the modeled
 * time the sender's stream had reached, and whether the sender waits for
 * the receive's end. The receiver puts the transfer on its stream's modeled
 * clock as the local engine's peer copy would be — from no earlier than
 * that time, for the link between the two ranks' devices
 * (pl_device_model_transfer; the world's global ranks number the simulated
 * cluster's devices, as in a one-process run) — and, when asked, sends the
 * copy's end back (CH_DONE), which a blocking send's stream waits for, as
 * the local engine's sender waits for its receive's copy. */
static stamp stamp_of(cudaStream_t s, int wants_done)
{
    return (stamp){pl_device_stream_now(s), wants_done, 0};
}

/* One exchange of a step: send `sb` bytes to member `to` and receive `rb`
 * into `dst` from member `from` (either may be 0 bytes: none), each with
 * its stamp; the received bytes on s's modeled clock. */
static pl_comm_result exchange(mcomm *c, int to, const void *src, size_t sb, int from, void *dst,
                               size_t rb, cudaStream_t s, const char *what)
{
    MPI_Request rq[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int me = c->wrank[c->rank];
    stamp out = stamp_of(s, 0), in = {0, 0, 0};
    if (rb) {
        int pf = proc_of(c->w, c->wrank[from]), tf = tag_of(c, c->wrank[from], me, CH_DATA);
        MPI_Irecv(&in, (int)sizeof in, MPI_BYTE, pf, tf, D.data, &rq[0]);
        MPI_Irecv(dst, (int)rb, MPI_BYTE, pf, tf, D.data, &rq[1]);
    }
    if (sb) {
        int pt = proc_of(c->w, c->wrank[to]), tt = tag_of(c, me, c->wrank[to], CH_DATA);
        MPI_Isend(&out, (int)sizeof out, MPI_BYTE, pt, tt, D.data, &rq[2]);
        MPI_Isend(src, (int)sb, MPI_BYTE, pt, tt, D.data, &rq[3]);
    }
    pl_comm_result r = wait_all(c, 4, rq, NULL, what);
    if (r) return r;
    if (sb) count_send(c, to, sb);
    if (rb) {
        count_recv(c, rb);
        if (pl_device_model_transfer(s, rb, c->wrank[from], me, in.t))
            return fail(c, PL_COMM_CUDA_ERROR, "the transfer on the modeled clock: a bad stream");
    }
    return PL_COMM_OK;
}

static void step_event(mcomm *c, mark *m, const char *kind, int ch, int chunks, int st,
                       uint64_t bytes, int peer, int seg)
{
    char label[48];
    if (chunks > 1)
        snprintf(label, sizeof label, "%s chunk %d step %d", kind, ch + 1, st + 1);
    else
        snprintf(label, sizeof label, "%s step %d", kind, st + 1);
    emit(c, m, PL_EV_RING_STEP, label, bytes, peer, seg + 1);
    mark_start(m, m->stream);
}

/* comm_local_algorithms.c's ring_run, over MPI */
static pl_comm_result ring_run(mcomm *c, const char *kind, char *buf, size_t count, int type,
                               int op, int rs, int ag, int blocks, cudaStream_t s)
{
    int n = c->n, r = c->rank, prev = (r - 1 + n) % n, next = (r + 1) % n;
    size_t es = pl_dtype_size((pl_dtype)type), ce = chunk_elems(c, es);
    int per_chunk = (rs + ag) * (n - 1);
    size_t maxlen = blocks ? count : (count + (size_t)n - 1) / (size_t)n;
    int chunks = maxlen ? (int)((maxlen + ce - 1) / ce) : 1;
    if (rs && !ensure(&c->scratch, &c->scratch_bytes, ce * es))
        return fail(c, PL_COMM_SYSTEM_ERROR, "cudaMalloc of the engine's scratch buffer");
    char what[300];
    snprintf(what, sizeof what, "its ring neighbours (ranks %d and %d) in %s", c->wrank[prev],
             c->wrank[next], c->doing);
    mark m;
    mark_start(&m, s);
    for (int ch = 0; ch < chunks; ch++)
        for (int st = 0; st < per_chunk; st++) {
            int reduce = st < rs * (n - 1);
            int k = reduce ? st : st - rs * (n - 1);
            /* what comes in (the local engine's seg) and what goes out (the successor's) */
            int seg = reduce ? ((r - st - 2) % n + 2 * n) % n : ((r - k - 1) % n + 2 * n) % n;
            int sseg = reduce ? ((r - st - 1) % n + 2 * n) % n : ((r - k) % n + 2 * n) % n;
            size_t off = blocks ? (size_t)seg * count : seg_start(count, n, seg);
            size_t len = blocks ? count : seg_len(count, n, seg);
            size_t soff = blocks ? (size_t)sseg * count : seg_start(count, n, sseg);
            size_t slen = blocks ? count : seg_len(count, n, sseg);
            size_t lo = (size_t)ch * ce;
            size_t mm = lo < len ? (len - lo < ce ? len - lo : ce) : 0;
            size_t sm = lo < slen ? (slen - lo < ce ? slen - lo : ce) : 0;
            char *mine = buf + (off + lo) * es;
            pl_comm_result res = sync_stream(c, s);
            if (!res)
                res = exchange(c, next, buf + (soff + lo) * es, sm * es, prev,
                               reduce ? c->scratch : mine, mm * es, s, what);
            if (res) return res;
            if (reduce && mm) {
                cudaError_t e = pl_k_reduce(mine, c->scratch, mm, type, op, s);
                if (e)
                    return fail(c, PL_COMM_CUDA_ERROR, "the reduction kernel: %s",
                                cudaGetErrorString(e));
            }
            step_event(c, &m, kind, ch, chunks, st, mm * es, mm ? c->wrank[prev] : -1, seg);
        }
    return sync_stream(c, s);
}

/* comm_local_algorithms.c's chain_run, over MPI */
static pl_comm_result chain_run(mcomm *c, const char *kind, int pos, char *mine, size_t count,
                                int type, int op, int reduce, cudaStream_t s)
{
    int n = c->n, r = c->rank, prev = (r - 1 + n) % n, next = (r + 1) % n;
    size_t es = pl_dtype_size((pl_dtype)type), ce = chunk_elems(c, es);
    int chunks = count ? (int)((count + ce - 1) / ce) : 1;
    if (reduce && pos > 0 && !ensure(&c->scratch, &c->scratch_bytes, ce * es))
        return fail(c, PL_COMM_SYSTEM_ERROR, "cudaMalloc of the engine's scratch buffer");
    char what[300];
    snprintf(what, sizeof what, "rank %d's chunk in %s", c->wrank[prev], c->doing);
    mark m;
    mark_start(&m, s);
    for (int ch = 0; ch < chunks; ch++) {
        size_t lo = (size_t)ch * ce, mm = count - lo < ce ? count - lo : ce;
        pl_comm_result res;
        if (pos > 0) {
            /* the previous chunk's reduction reads the scratch buffer on the
             * stream: it must be done before the next chunk lands there (the
             * last of the chain, which sends nothing, syncs nowhere else) */
            if (reduce && ch > 0 && (res = sync_stream(c, s))) return res;
            if ((res = exchange(c, next, NULL, 0, prev, reduce ? c->scratch : mine + lo * es,
                                mm * es, s, what)))
                return res;
            if (reduce) {
                cudaError_t e = pl_k_reduce(mine + lo * es, c->scratch, mm, type, op, s);
                if (e)
                    return fail(c, PL_COMM_CUDA_ERROR, "the reduction kernel: %s",
                                cudaGetErrorString(e));
            }
        }
        if (pos < n - 1) {
            if ((res = sync_stream(c, s))) return res;
            if ((res = exchange(c, next, mine + lo * es, mm * es, prev, NULL, 0, s, what)))
                return res;
        }
        step_event(c, &m, kind, ch, chunks, pos > 0 ? pos - 1 : 0, pos > 0 ? mm * es : 0,
                   pos > 0 ? c->wrank[prev] : -1, -1);
    }
    return sync_stream(c, s);
}

/* ---- the collectives --------------------------------------------------------------------------
 */

static pl_comm_result begin(mcomm *c, desc *d, const void *send, const void *recv, cudaStream_t s,
                            mark *m)
{
    static __thread desc all[MAXR];
    mark_start(m, s);
    check_args(c, d, send, recv);
    return meet(c, d, all);
}

static pl_comm_result traced(mcomm *c, const mark *m, pl_comm_result r, pl_comm_call k,
                             size_t count, pl_dtype t)
{
    uint64_t bytes = pl_collective_bytes(&pl_collectives[k], count, t, c->n);
    if (r == PL_COMM_OK && bytes)
        emit(c, m, PL_EV_COLLECTIVE, pl_collectives[k].name, bytes, -1, 0);
    c->doing[0] = '\0';
    return r;
}

#define CKC(call, what)                                                                            \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_) return fail(c, PL_COMM_CUDA_ERROR, "%s: %s", what, cudaGetErrorString(e_));        \
    } while (0)

static pl_comm_result all_reduce_impl(mcomm *c, const void *send, void *recv, size_t count,
                                      pl_dtype t, pl_redop op, cudaStream_t s, mark *m)
{
    const pl_collective *d = &pl_collectives[PL_CALL_ALL_REDUCE];
    desc k = {.kind = PL_CALL_ALL_REDUCE, .count = count, .type = t, .op = op};
    pl_comm_result r = begin(c, &k, send, recv, s, m);
    if (r || count == 0) return r;
    if (!pl_collective_in_place(d, send, recv, count, t, c->rank))
        CKC(cudaMemcpyAsync(recv, send, count * pl_dtype_size(t), cudaMemcpyDeviceToDevice, s),
            "copy");
    if (c->n > 1 && (r = ring_run(c, d->name, recv, count, t, op, 1, 1, 0, s))) return r;
    if (op == PL_AVG && c->n > 1) CKC(pl_k_divide(recv, count, t, c->n, s), "the division kernel");
    return PL_COMM_OK;
}

static pl_comm_result reduce_scatter_impl(mcomm *c, const void *send, void *recv, size_t rc,
                                          pl_dtype t, pl_redop op, cudaStream_t s, mark *m)
{
    const pl_collective *d = &pl_collectives[PL_CALL_REDUCE_SCATTER];
    desc k = {.kind = PL_CALL_REDUCE_SCATTER, .count = rc, .type = t, .op = op};
    pl_comm_result r = begin(c, &k, send, recv, s, m);
    if (r || rc == 0) return r;
    int n = c->n;
    size_t es = pl_dtype_size(t), total = pl_collective_send_count(d, rc, n);
    if (n == 1) {
        if (!pl_collective_in_place(d, send, recv, rc, t, c->rank))
            CKC(cudaMemcpyAsync(recv, send, rc * es, cudaMemcpyDeviceToDevice, s), "copy");
        return PL_COMM_OK;
    }
    char *work = ensure(&c->work, &c->work_bytes, total * es);
    if (!work) return fail(c, PL_COMM_SYSTEM_ERROR, "cudaMalloc of the reduce_scatter scratch");
    CKC(cudaMemcpyAsync(work, send, total * es, cudaMemcpyDeviceToDevice, s), "copy");
    if ((r = ring_run(c, d->name, work, total, t, op, 1, 0, 0, s))) return r;
    if (op == PL_AVG)
        CKC(pl_k_divide(work + (size_t)c->rank * rc * es, rc, t, n, s), "the division kernel");
    CKC(cudaMemcpyAsync(recv, work + (size_t)c->rank * rc * es, rc * es, cudaMemcpyDeviceToDevice,
                        s),
        "copy");
    return sync_stream(c, s);
}

static pl_comm_result all_gather_impl(mcomm *c, const void *send, void *recv, size_t sc, pl_dtype t,
                                      cudaStream_t s, mark *m)
{
    const pl_collective *d = &pl_collectives[PL_CALL_ALL_GATHER];
    desc k = {.kind = PL_CALL_ALL_GATHER, .count = sc, .type = t};
    pl_comm_result r = begin(c, &k, send, recv, s, m);
    if (r || sc == 0) return r;
    size_t bytes = sc * pl_dtype_size(t);
    char *mine = (char *)recv + (size_t)c->rank * bytes;
    if (!pl_collective_in_place(d, send, recv, sc, t, c->rank))
        CKC(cudaMemcpyAsync(mine, send, bytes, cudaMemcpyDeviceToDevice, s), "copy");
    if (c->n == 1) return PL_COMM_OK;
    return ring_run(c, d->name, recv, sc, t, PL_SUM, 0, 1, 1, s);
}

static pl_comm_result broadcast_impl(mcomm *c, const void *send, void *recv, size_t count,
                                     pl_dtype t, int root, cudaStream_t s, mark *m)
{
    const pl_collective *d = &pl_collectives[PL_CALL_BROADCAST];
    desc k = {.kind = PL_CALL_BROADCAST, .count = count, .type = t, .root = root};
    pl_comm_result r = begin(c, &k, send, recv, s, m);
    if (r || count == 0) return r;
    int n = c->n, me = c->rank;
    if (me == root && !pl_collective_in_place(d, send, recv, count, t, me))
        CKC(cudaMemcpyAsync(recv, send, count * pl_dtype_size(t), cudaMemcpyDeviceToDevice, s),
            "copy");
    if (n == 1) return PL_COMM_OK;
    return chain_run(c, d->name, ((me - root) % n + n) % n, recv, count, t, PL_SUM, 0, s);
}

static pl_comm_result reduce_impl(mcomm *c, const void *send, void *recv, size_t count, pl_dtype t,
                                  pl_redop op, int root, cudaStream_t s, mark *m)
{
    const pl_collective *d = &pl_collectives[PL_CALL_REDUCE];
    desc k = {.kind = PL_CALL_REDUCE, .count = count, .type = t, .op = op, .root = root};
    int n = c->n, me = c->rank;
    pl_comm_result r = begin(c, &k, send, recv, s, m);
    if (r || count == 0) return r;
    size_t bytes = count * pl_dtype_size(t);
    if (n == 1) {
        if (!pl_collective_in_place(d, send, recv, count, t, me))
            CKC(cudaMemcpyAsync(recv, send, bytes, cudaMemcpyDeviceToDevice, s), "copy");
        return PL_COMM_OK;
    }
    void *mine = me == root ? recv : ensure(&c->work, &c->work_bytes, bytes);
    if (!mine) return fail(c, PL_COMM_SYSTEM_ERROR, "cudaMalloc of the reduce scratch");
    if (send != mine) CKC(cudaMemcpyAsync(mine, send, bytes, cudaMemcpyDeviceToDevice, s), "copy");
    r = chain_run(c, d->name, ((me - root - 1) % n + n) % n, mine, count, t, op, 1, s);
    if (!r && me == root && op == PL_AVG)
        CKC(pl_k_divide(recv, count, t, n, s), "the division kernel");
    return r;
}

static pl_comm_result all_to_all_impl(mcomm *c, const void *send, void *recv, size_t count,
                                      pl_dtype t, cudaStream_t s, mark *m)
{
    desc k = {.kind = PL_CALL_ALL_TO_ALL, .count = count, .type = t};
    pl_comm_result r = begin(c, &k, send, recv, s, m);
    if (r || count == 0) return r;
    int n = c->n, me = c->rank;
    size_t bytes = count * pl_dtype_size(t);
    CKC(cudaMemcpyAsync((char *)recv + (size_t)me * bytes, (const char *)send + (size_t)me * bytes,
                        bytes, cudaMemcpyDeviceToDevice, s),
        "copy");
    if (n == 1) return PL_COMM_OK;
    if ((r = sync_stream(c, s))) return r;
    char what[300];
    snprintf(what, sizeof what, "the other members' blocks in %s", c->doing);
    for (int j = 1; j < n; j++) {
        int from = (me - j + n) % n, to = (me + j) % n;
        if ((r = exchange(c, to, (const char *)send + (size_t)to * bytes, bytes, from,
                          (char *)recv + (size_t)from * bytes, bytes, s, what)))
            return r;
    }
    mark st = *m;
    step_event(c, &st, pl_collectives[PL_CALL_ALL_TO_ALL].name, 0, 1, 0,
               (uint64_t)bytes * (uint64_t)(n - 1), -1, -1);
    return PL_COMM_OK;
}

#define COLL(fn, impl, K, cnt, ...)                                                                \
    {                                                                                              \
        mcomm *c = (mcomm *)pc;                                                                    \
        mark m;                                                                                    \
        return traced(c, &m, impl(c, __VA_ARGS__, &m), K, cnt, t);                                 \
    }

static pl_comm_result m_all_reduce(pl_comm *pc, const void *send, void *recv, size_t count,
                                   pl_dtype t, pl_redop op, cudaStream_t s)
    COLL(m_all_reduce, all_reduce_impl, PL_CALL_ALL_REDUCE, count, send, recv, count, t, op,
         s) static pl_comm_result
    m_reduce_scatter(pl_comm *pc, const void *send, void *recv, size_t rc, pl_dtype t, pl_redop op,
                     cudaStream_t s)
        COLL(m_reduce_scatter, reduce_scatter_impl, PL_CALL_REDUCE_SCATTER, rc, send, recv, rc, t,
             op, s) static pl_comm_result
    m_all_gather(pl_comm *pc, const void *send, void *recv, size_t sc, pl_dtype t, cudaStream_t s)
        COLL(m_all_gather, all_gather_impl, PL_CALL_ALL_GATHER, sc, send, recv, sc, t,
             s) static pl_comm_result
    m_broadcast(pl_comm *pc, const void *send, void *recv, size_t count, pl_dtype t, int root,
                cudaStream_t s) COLL(m_broadcast, broadcast_impl, PL_CALL_BROADCAST, count, send,
                                     recv, count, t, root, s) static pl_comm_result
    m_reduce(pl_comm *pc, const void *send, void *recv, size_t count, pl_dtype t, pl_redop op,
             int root, cudaStream_t s) COLL(m_reduce, reduce_impl, PL_CALL_REDUCE, count, send,
                                            recv, count, t, op, root, s) static pl_comm_result
    m_all_to_all(pl_comm *pc, const void *send, void *recv, size_t count, pl_dtype t,
                 cudaStream_t s)
        COLL(m_all_to_all, all_to_all_impl, PL_CALL_ALL_TO_ALL, count, send, recv, count, t, s)

            static pl_comm_result m_barrier(pl_comm *pc)
{
    mcomm *c = (mcomm *)pc;
    static __thread desc all[MAXR];
    desc k = {.kind = PL_CALL_BARRIER};
    pl_comm_result r = meet(c, &k, all);
    c->doing[0] = '\0';
    return r;
}

/* ---- point to point ----------------------------------------------------------------------- */

typedef struct pop {
    mcomm *c;
    int send, peer;
    void *buf;
    size_t count;
    pl_dtype type;
    cudaStream_t s;
} pop;

static __thread int group_depth;
static __thread pop queued[256];
static __thread int nqueued;

static pl_comm_result p2p_check(mcomm *c, int send, const void *buf, size_t count, pl_dtype t,
                                int peer)
{
    const char *f = send ? "pl_send" : "pl_recv";
    if ((unsigned)t >= PL_NUM_DTYPES)
        return fail(c, PL_COMM_INVALID_ARGUMENT, "%s: type %d is not a pl_dtype (0..%d)", f, t,
                    PL_NUM_DTYPES - 1);
    if (peer < 0 || peer >= c->n || peer == c->rank)
        return fail(c, PL_COMM_INVALID_ARGUMENT,
                    "%s: peer %d is not another rank of the communicator (0..%d, not %d)", f, peer,
                    c->n - 1, c->rank);
    if (count && !buf)
        return fail(c, PL_COMM_INVALID_ARGUMENT, "%s: a NULL buffer with count %zu", f, count);
    return PL_COMM_OK;
}

/* Posts and completes ops together (a group, or one op alone), each with its
 * stamp; then each receive's end on the modeled clock goes back to a
 * blocking send (synchronous), whose stream waits for it. */
static pl_comm_result run_ops(pop *ops, int n, int synchronous)
{
    MPI_Request rq[2 * 256];
    MPI_Status st[2 * 256];
    stamp stamps[256];
    double done[256];
    mark mk[256];
    pl_comm_result first = PL_COMM_OK;
    for (int i = 0; i < n; i++) {
        pop *o = &ops[i];
        mcomm *c = o->c;
        mark_start(&mk[i], o->s);
        rq[2 * i] = rq[2 * i + 1] = MPI_REQUEST_NULL;
        if (sync_stream(c, o->s)) return PL_COMM_CUDA_ERROR;
        size_t bytes = o->count * pl_dtype_size(o->type);
        int me = c->wrank[c->rank], pw = c->wrank[o->peer];
        if (o->send) {
            int tag = tag_of(c, me, pw, CH_P2P);
            stamps[i] = stamp_of(o->s, synchronous);
            MPI_Isend(&stamps[i], (int)sizeof stamps[i], MPI_BYTE, proc_of(c->w, pw), tag, D.data,
                      &rq[2 * i]);
            (synchronous ? MPI_Issend : MPI_Isend)(o->buf, (int)bytes, MPI_BYTE, proc_of(c->w, pw),
                                                   tag, D.data, &rq[2 * i + 1]);
        } else {
            int tag = tag_of(c, pw, me, CH_P2P);
            MPI_Irecv(&stamps[i], (int)sizeof stamps[i], MPI_BYTE, proc_of(c->w, pw), tag, D.data,
                      &rq[2 * i]);
            MPI_Irecv(o->buf, (int)bytes, MPI_BYTE, proc_of(c->w, pw), tag, D.data, &rq[2 * i + 1]);
        }
    }
    if (!n) return PL_COMM_OK;
    mcomm *c0 = ops[0].c;
    char what[300];
    if (n == 1)
        snprintf(what, sizeof what, "%s rank %d (%zu %s)",
                 ops[0].send ? "its receive by" : "a send from", c0->wrank[ops[0].peer],
                 ops[0].count, pl_dtype_name(ops[0].type));
    else
        snprintf(what, sizeof what, "the %d sends and receives of its group", n);
    snprintf(c0->doing, sizeof c0->doing, "%.190s", what);
    pl_comm_result r = wait_all(c0, 2 * n, rq, st, what);
    /* the receives on the modeled clock, and their ends back to the blocking sends */
    for (int i = 0; i < n && !r; i++) {
        pop *o = &ops[i];
        mcomm *c = o->c;
        int me = c->wrank[c->rank], pw = c->wrank[o->peer];
        rq[i] = MPI_REQUEST_NULL;
        if (o->send) {
            if (synchronous)
                MPI_Irecv(&done[i], 1, MPI_DOUBLE, proc_of(c->w, pw), tag_of(c, pw, me, CH_DONE),
                          D.data, &rq[i]);
            continue;
        }
        size_t bytes = o->count * pl_dtype_size(o->type);
        if (bytes && pl_device_model_transfer(o->s, bytes, pw, me, stamps[i].t))
            r = fail(c, PL_COMM_CUDA_ERROR, "the transfer on the modeled clock: a bad stream");
        done[i] = pl_device_stream_now(o->s);
        if (stamps[i].wants_done)
            MPI_Isend(&done[i], 1, MPI_DOUBLE, proc_of(c->w, pw), tag_of(c, me, pw, CH_DONE),
                      D.data, &rq[i]);
    }
    if (!r) r = wait_all(c0, n, rq, NULL, what);
    for (int i = 0; i < n && !r && synchronous; i++)
        if (ops[i].send && pl_device_model_transfer(ops[i].s, 0, 0, 0, done[i]))
            r = fail(ops[i].c, PL_COMM_CUDA_ERROR, "the wait on the modeled clock: a bad stream");
    if (r) {
        for (int i = 1; i < n; i++)
            if (ops[i].c != c0) snprintf(ops[i].c->err, sizeof ops[i].c->err, "%s", c0->err);
        return r;
    }
    for (int i = 0; i < n; i++) {
        pop *o = &ops[i];
        mcomm *c = o->c;
        size_t bytes = o->count * pl_dtype_size(o->type);
        int pw = c->wrank[o->peer];
        if (!o->send) {
            int got = 0;
            MPI_Get_count(&st[2 * i + 1], MPI_BYTE, &got);
            if ((size_t)got != bytes && !first)
                first =
                    fail(c, PL_COMM_MISMATCH,
                         "recv from rank %d of %zu bytes got a send of %d bytes", pw, bytes, got);
            if (bytes) count_recv(c, bytes); /* an empty message is not counted (local engine) */
        } else if (bytes)
            count_send(c, o->peer, bytes);
        char label[48];
        snprintf(label, sizeof label, o->send ? "send to %d" : "recv from %d", pw);
        emit(c, &mk[i], o->send ? PL_EV_SEND : PL_EV_RECV, label, bytes, pw, 0);
        c->doing[0] = '\0';
    }
    return first;
}

static pl_comm_result p2p(pl_comm *pc, int send, const void *buf, size_t count, pl_dtype t,
                          int peer, cudaStream_t s)
{
    mcomm *c = (mcomm *)pc;
    pl_comm_result r = p2p_check(c, send, buf, count, t, peer);
    if (r) return r;
    pop o = {c, send, peer, (void *)buf, count, t, s};
    if (group_depth > 0) {
        if (nqueued >= 256)
            return fail(c, PL_COMM_INVALID_ARGUMENT, "more than 256 sends and receives in a group");
        queued[nqueued++] = o;
        return PL_COMM_OK;
    }
    return run_ops(&o, 1, 1);
}

static pl_comm_result m_send(pl_comm *pc, const void *buf, size_t count, pl_dtype t, int peer,
                             cudaStream_t s)
{
    return p2p(pc, 1, buf, count, t, peer, s);
}
static pl_comm_result m_recv(pl_comm *pc, void *buf, size_t count, pl_dtype t, int peer,
                             cudaStream_t s)
{
    return p2p(pc, 0, buf, count, t, peer, s);
}

static pl_comm_result m_send_eager(pl_comm *pc, const void *buf, size_t count, pl_dtype t, int peer,
                                   cudaStream_t s)
{
    mcomm *c = (mcomm *)pc;
    pl_comm_result r = p2p_check(c, 1, buf, count, t, peer);
    if (r) return r;
    if (c->neager >= 2 * 256)
        return fail(c, PL_COMM_INVALID_ARGUMENT,
                    "more than 256 eager sends waiting: call pl_comm_wait_sends");
    if ((r = sync_stream(c, s))) return r;
    size_t bytes = count * pl_dtype_size(t);
    int me = c->wrank[c->rank], pw = c->wrank[peer];
    mark m;
    mark_start(&m, s);
    /* its stamp (no CH_DONE wanted: an eager send does not wait for its receive) */
    int k = c->neager;
    c->eager_stamp[k / 2] = stamp_of(s, 0);
    MPI_Isend(&c->eager_stamp[k / 2], (int)sizeof(stamp), MPI_BYTE, proc_of(c->w, pw),
              tag_of(c, me, pw, CH_P2P), D.data, &c->eager[k]);
    MPI_Isend(buf, (int)bytes, MPI_BYTE, proc_of(c->w, pw), tag_of(c, me, pw, CH_P2P), D.data,
              &c->eager[k + 1]);
    c->neager = k + 2;
    if (bytes) count_send(c, peer, bytes);
    char label[48];
    snprintf(label, sizeof label, "send to %d", pw);
    emit(c, &m, PL_EV_SEND, label, bytes, pw, 0);
    return PL_COMM_OK;
}

static pl_comm_result m_wait_sends(pl_comm *pc)
{
    mcomm *c = (mcomm *)pc;
    pl_comm_result r = wait_all(c, c->neager, c->eager, NULL, "the receives of its eager sends");
    c->neager = 0;
    return r;
}

static pl_comm_result m_group_start(void)
{
    group_depth++;
    return PL_COMM_OK;
}

static pl_comm_result m_group_end(void)
{
    if (group_depth == 0) return PL_COMM_OK; /* comm.c checks nesting with the local engine */
    if (--group_depth > 0) return PL_COMM_OK;
    int n = nqueued;
    nqueued = 0;
    return run_ops(queued, n, 0);
}

/* ---- handles ------------------------------------------------------------------------------- */

static mcomm *handle_new(mworld *w, int thread, int device)
{
    mcomm *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->base.engine = &pl_comm_mpi_engine;
    c->base.group = PL_GROUP_NONE;
    c->w = w;
    c->thread = thread;
    c->device = device;
    pthread_mutex_lock(&w->lock);
    w->handles++;
    pthread_mutex_unlock(&w->lock);
    return c;
}

static void handle_free(mcomm *c)
{
    mworld *w = c->w;
    int cur = -1;
    cudaGetDevice(&cur);
    cudaSetDevice(c->device);
    cudaFree(c->scratch);
    cudaFree(c->work);
    if (cur >= 0) cudaSetDevice(cur);
    pthread_mutex_lock(&w->lock);
    int last = --w->handles == 0;
    pthread_mutex_unlock(&w->lock);
    free(c);
    if (last) {
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->host_cv);
        free(w);
    }
}

pl_comm_result pl_comm_create_mpi(int n, int threads, const int *devices, double timeout_s,
                                  pl_comm **ranks, char *err, size_t err_size)
{
    if (err_size) err[0] = '\0';
    if (!D.active) {
        snprintf(err, err_size, "not started by mpirun: the MPI engine needs an MPI world");
        return PL_COMM_INVALID_ARGUMENT;
    }
    if (!pl_device_memory_is_host()) {
        snprintf(err, err_size,
                 "device memory is not host memory here: the MPI engine moves simulated "
                 "devices' buffers (across processes on real GPUs, NCCL is the engine)");
        return PL_COMM_INVALID_ARGUMENT;
    }
    if (threads < 1 || n != D.procs * threads || n > MAXR) {
        snprintf(err, err_size,
                 "a world of %d ranks is not %d processes x %d ranks per process (at most %d)", n,
                 D.procs, threads, MAXR);
        return PL_COMM_INVALID_ARGUMENT;
    }
    /* the tags: ctx x T x T x channels must fit MPI_TAG_UB for a few thousand contexts */
    if ((long long)D.tag_ub / ((long long)threads * threads * NCH) < 1024) {
        snprintf(err, err_size,
                 "MPI's largest tag (%d) is too small for %d ranks per process (needs %lld)",
                 D.tag_ub, threads, 1024LL * threads * threads * NCH);
        return PL_COMM_INVALID_ARGUMENT;
    }
    mworld *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, err_size, "out of memory");
        return PL_COMM_SYSTEM_ERROR;
    }
    w->n = n;
    w->T = threads;
    w->p = D.proc;
    w->timeout = timeout_s > 0 ? timeout_s : 10;
    w->chunk_bytes = DEFAULT_CHUNK;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->host_cv, NULL);
    for (int t = 0; t < threads; t++) w->next_ctx[t] = 1;
    for (int t = 0; t < threads; t++) {
        mcomm *c = handle_new(w, t, devices[t]);
        if (!c) {
            for (int q = 0; q < t; q++) handle_free((mcomm *)ranks[q]);
            snprintf(err, err_size, "out of memory");
            return PL_COMM_SYSTEM_ERROR;
        }
        c->n = n;
        c->rank = D.proc * threads + t;
        c->ctx = 0;
        for (int q = 0; q < n; q++) c->wrank[q] = q;
        ranks[t] = &c->base;
    }
    return PL_COMM_OK;
}

pl_comm_result pl_comm_create_dist(int n, int threads, int *devices, double timeout_s,
                                   pl_comm **ranks, char *err, size_t err_size)
{
#ifdef PARALAB_CUDA /* real GPUs: NCCL, bootstrapped over MPI; the GPUs by host */
    (void)timeout_s;
    if (!D.active) {
        snprintf(err, err_size, "not started by mpirun: NCCL across processes needs an MPI world");
        return PL_COMM_INVALID_ARGUMENT;
    }
    if (n != D.procs * threads) {
        snprintf(err, err_size, "%d ranks are not %d processes x %d", n, D.procs, threads);
        return PL_COMM_INVALID_ARGUMENT;
    }
    pl_comm_result r =
        pl_comm_create_nccl_mpi(MPI_COMM_WORLD, threads, ranks, devices, err, err_size);
    for (int t = 0; t < threads && r == PL_COMM_OK; t++) ranks[t]->procs = D.procs;
    return r;
#else
    return pl_comm_create_mpi(n, threads, devices, timeout_s, ranks, err, err_size);
#endif
}

static pl_comm_result m_split(pl_comm *pc, int color, int key, pl_comm **out)
{
    mcomm *c = (mcomm *)pc;
    mworld *w = c->w;
    static __thread desc all[MAXR];
    *out = NULL;
    desc k = {
        .kind = PL_CALL_SPLIT, .color = color, .key = key, .next_ctx = w->next_ctx[c->thread]};
    pl_comm_result r = meet(c, &k, all);
    c->doing[0] = '\0';
    if (r) return r;
    /* a context per color: from the largest next context of the members on,
     * so that no two communicators with a common member share one */
    int base = 0, colors[MAXR], nc = 0;
    for (int m = 0; m < c->n; m++) {
        if (all[m].next_ctx > base) base = all[m].next_ctx;
        if (all[m].color < 0) continue;
        int seen = 0;
        for (int i = 0; i < nc; i++) seen |= colors[i] == all[m].color;
        if (!seen) colors[nc++] = all[m].color;
    }
    for (int i = 1; i < nc; i++) /* sorted: every member numbers them alike */
        for (int j = i; j > 0 && colors[j - 1] > colors[j]; j--) {
            int x = colors[j];
            colors[j] = colors[j - 1];
            colors[j - 1] = x;
        }
    w->next_ctx[c->thread] = base + nc;
    if ((long long)(base + nc) * w->T * w->T * NCH > D.tag_ub)
        return fail(c, PL_COMM_SYSTEM_ERROR, "too many communicators for MPI's tags (%d)",
                    D.tag_ub);
    if (color < 0) return PL_COMM_OK;
    int ci = 0;
    while (colors[ci] != color) ci++;
    mcomm *nw = handle_new(w, c->thread, c->device);
    if (!nw) return fail(c, PL_COMM_SYSTEM_ERROR, "out of memory");
    nw->ctx = base + ci;
    nw->base.group = PL_GROUP_NONE;
    /* members of this color by key, then by rank */
    int mem[MAXR], nm = 0;
    for (int m = 0; m < c->n; m++)
        if (all[m].color == color) mem[nm++] = m;
    for (int i = 1; i < nm; i++)
        for (int j = i; j > 0 && (all[mem[j - 1]].key > all[mem[j]].key); j--) {
            int x = mem[j];
            mem[j] = mem[j - 1];
            mem[j - 1] = x;
        }
    nw->n = nm;
    for (int i = 0; i < nm; i++) {
        nw->wrank[i] = c->wrank[mem[i]];
        if (mem[i] == c->rank) nw->rank = i;
    }
    *out = &nw->base;
    return PL_COMM_OK;
}

static pl_comm_result m_free(pl_comm *pc)
{
    mcomm *c = (mcomm *)pc;
    static __thread desc all[MAXR];
    desc k = {.kind = CALL_FREE};
    pl_comm_result r = meet(c, &k, all);
    if (r) return r;
    handle_free(c);
    return PL_COMM_OK;
}

static void m_destroy_all(pl_comm **ranks, int n)
{
    for (int t = 0; t < n; t++)
        if (ranks[t]) handle_free((mcomm *)ranks[t]);
}

static int m_fits(int n, const int *devices)
{
    (void)n, (void)devices;
    return 0; /* never chosen by PL_COMM_AUTO: pl_comm_create_mpi makes its handles */
}

static void m_set_trace(pl_comm *pc, struct pl_trace *t) { ((mcomm *)pc)->w->trace = t; }
static void m_set_chunk_bytes(pl_comm *pc, size_t bytes)
{
    ((mcomm *)pc)->w->chunk_bytes = bytes ? bytes : DEFAULT_CHUNK;
}
static void m_abort(pl_comm *pc, const char *why)
{
    mcomm *c = (mcomm *)pc;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", why);
    abort_world(c->w, msg, 1);
}
static void m_hold(pl_comm *pc, int on)
{
    mcomm *c = (mcomm *)pc;
    int delta = on ? 1 : -1;
    atomic_fetch_add(&c->w->held, delta);
    /* a rank held anywhere stops every process's watchdog clock, as the local
     * engine's stops every rank's (a small message: sent at once) */
    for (int q = 0; q < D.procs; q++)
        if (q != D.proc) MPI_Send(&delta, 1, MPI_INT, q, TAG_HOLD, D.ctl);
}
static int m_rank(const pl_comm *pc) { return ((const mcomm *)pc)->rank; }
static int m_size(const pl_comm *pc) { return ((const mcomm *)pc)->n; }
static int m_device(const pl_comm *pc) { return ((const mcomm *)pc)->device; }
static const char *m_last_error(const pl_comm *pc) { return ((const mcomm *)pc)->err; }

static pl_ledger m_ledger(const pl_comm *pc)
{
    const mcomm *c = (const mcomm *)pc;
    pthread_mutex_lock(&c->w->lock);
    pl_ledger l = c->w->ledger[c->thread];
    pthread_mutex_unlock(&c->w->lock);
    return l;
}
static pl_ledger m_ledger_own(const pl_comm *pc) { return ((const mcomm *)pc)->own; }
static int m_world_rank(const pl_comm *pc, int member)
{
    const mcomm *c = (const mcomm *)pc;
    return member >= 0 && member < c->n ? c->wrank[member] : -1;
}
static void m_count_call(pl_comm *pc, pl_comm_call k)
{
    mcomm *c = (mcomm *)pc;
    pthread_mutex_lock(&c->w->lock);
    c->w->ledger[c->thread].calls[k]++;
    pthread_mutex_unlock(&c->w->lock);
    c->own.calls[k]++;
}
/* Only what this process's ranks sent: the others' links are in their processes. */
static uint64_t m_link_bytes(const pl_comm *pc, int from, int to)
{
    const mcomm *c = (const mcomm *)pc;
    const mworld *w = c->w;
    if (from < 0 || to < 0 || from >= w->n || to >= w->n || proc_of(w, from) != w->p) return 0;
    return w->link[thread_of(w, from)][to];
}

const pl_comm_engine pl_comm_mpi_engine = {
    .name = "mpi",
    .fits = m_fits,
    .destroy_all = m_destroy_all,
    .set_trace = m_set_trace,
    .set_chunk_bytes = m_set_chunk_bytes,
    .abort = m_abort,
    .hold = m_hold,
    .rank = m_rank,
    .size = m_size,
    .device = m_device,
    .last_error = m_last_error,
    .split = m_split,
    .free = m_free,
    .barrier = m_barrier,
    .all_reduce = m_all_reduce,
    .broadcast = m_broadcast,
    .reduce = m_reduce,
    .all_gather = m_all_gather,
    .reduce_scatter = m_reduce_scatter,
    .all_to_all = m_all_to_all,
    .send = m_send,
    .recv = m_recv,
    .send_eager = m_send_eager,
    .wait_sends = m_wait_sends,
    .group_start = m_group_start,
    .group_end = m_group_end,
    .ledger = m_ledger,
    .ledger_own = m_ledger_own,
    .world_rank = m_world_rank,
    .count_call = m_count_call,
    .link_bytes = m_link_bytes,
};

/* ---- host data from process 0, to rank 0 ----------------------------------------------------- */

void pl_dist_bcast_host(void *buf, size_t bytes)
{
    if (!D.active) return;
    MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
}

double pl_dist_max(double v)
{
    double m = v;
    if (D.active) MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

/* The host helpers on a world of another engine (NCCL's, in build/cuda-mpi):
 * plain MPI between the processes' threads, thread t of one process to
 * thread t' of another by the tag, on the data communicator (the MPI engine
 * is not used in that build); the threads of a process meet on a
 * process-wide generation count. No timeout: NCCL's own waits have none. */
static pthread_mutex_t plain_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t plain_cv = PTHREAD_COND_INITIALIZER;
static int plain_in;
static unsigned plain_gen;

static int plain_tag(int T, int from_thread, int to_thread)
{
    return (from_thread * T + to_thread) * NCH + CH_HOST;
}

static void plain_gather(const pl_comm *world, void *base, size_t stride, size_t bytes)
{
    int n = pl_comm_size(world), me = pl_comm_rank(world), T = n / D.procs, k = 0;
    MPI_Request rq[MAXR];
    if (me == 0) {
        for (int q = T; q < n; q++) /* process 0 holds ranks 0..T-1 */
            MPI_Irecv((char *)base + (size_t)q * stride, (int)bytes, MPI_BYTE, q / T,
                      plain_tag(T, q % T, 0), D.data, &rq[k++]);
        MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
    } else if (me >= T)
        MPI_Send((char *)base + (size_t)me * stride, (int)bytes, MPI_BYTE, 0,
                 plain_tag(T, me % T, 0), D.data);
}

static void plain_allgather(const pl_comm *world, void *base, size_t stride, size_t bytes)
{
    int n = pl_comm_size(world), me = pl_comm_rank(world), T = n / D.procs, t = me % T, k = 0;
    MPI_Request rq[2 * MAXR];
    for (int p = 0; p < D.procs; p++)
        if (p != D.proc) {
            MPI_Irecv((char *)base + (size_t)(p * T + t) * stride, (int)bytes, MPI_BYTE, p,
                      plain_tag(T, t, t), D.data, &rq[k++]);
            MPI_Isend((char *)base + (size_t)me * stride, (int)bytes, MPI_BYTE, p,
                      plain_tag(T, t, t), D.data, &rq[k++]);
        }
    MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
    pthread_mutex_lock(&plain_lock); /* the process's threads meet */
    unsigned gen = plain_gen;
    if (++plain_in == T) {
        plain_in = 0;
        plain_gen++;
        pthread_cond_broadcast(&plain_cv);
    } else
        while (gen == plain_gen) pthread_cond_wait(&plain_cv, &plain_lock);
    pthread_mutex_unlock(&plain_lock);
}

void pl_dist_gather_host(const pl_comm *world, void *base, size_t stride, size_t bytes)
{
    if (!D.active || !world) return;
    if (world->engine != &pl_comm_mpi_engine) {
        if (world->procs != D.procs) return; /* a world of this process only */
        plain_gather(world, base, stride, bytes);
        return;
    }
    mcomm *c = (mcomm *)world; /* its error and wait report; the handle is not changed */
    const mworld *w = c->w;
    int me = c->wrank[c->rank];
    MPI_Request rq[MAXR];
    int k = 0;
    if (me == 0) {
        for (int q = 0; q < c->n; q++)
            if (proc_of(w, c->wrank[q]) != w->p)
                MPI_Irecv((char *)base + (size_t)c->wrank[q] * stride, (int)bytes, MPI_BYTE,
                          proc_of(w, c->wrank[q]), tag_of(c, c->wrank[q], 0, CH_HOST), D.data,
                          &rq[k++]);
    } else if (proc_of(w, me) != proc_of(w, 0))
        MPI_Isend((char *)base + (size_t)me * stride, (int)bytes, MPI_BYTE, proc_of(w, 0),
                  tag_of(c, me, 0, CH_HOST), D.data, &rq[k++]);
    /* a failed world or a timeout leaves the rows as they were (the lab's
     * next call reports the failure) */
    if (k) wait_all(c, k, rq, NULL, "the host data of the other processes' ranks");
}

/* Thread t of each process sends its row to thread t of every other process
 * and receives theirs: the rows a thread writes are its own, no two threads
 * write the same row. Then the threads of the process meet, so that each
 * returns with every row in place. (CH_HOST as pl_dist_gather_host: a
 * sending thread's messages to one thread keep their order.) */
pl_comm_result pl_dist_allgather_host(const pl_comm *world, void *base, size_t stride, size_t bytes)
{
    if (!D.active || !world) return PL_COMM_OK;
    if (world->engine != &pl_comm_mpi_engine) {
        if (world->procs != D.procs) return PL_COMM_OK; /* a world of this process only */
        plain_allgather(world, base, stride, bytes);
        return PL_COMM_OK;
    }
    mcomm *c = (mcomm *)world;
    mworld *w = c->w;
    if (c->n != w->n)
        return fail(c, PL_COMM_INVALID_ARGUMENT,
                    "pl_dist_allgather_host: a communicator of %d ranks, not the world's %d (the "
                    "world communicator only)",
                    c->n, w->n);
    int me = c->rank;
    MPI_Request rq[2 * MAXR];
    int k = 0;
    for (int p = 0; p < D.procs; p++)
        if (p != w->p) {
            int q = p * w->T + c->thread;
            MPI_Irecv((char *)base + (size_t)q * stride, (int)bytes, MPI_BYTE, p,
                      tag_of(c, q, me, CH_HOST), D.data, &rq[k++]);
            MPI_Isend((char *)base + (size_t)me * stride, (int)bytes, MPI_BYTE, p,
                      tag_of(c, me, q, CH_HOST), D.data, &rq[k++]);
        }
    pl_comm_result r =
        k ? wait_all(c, k, rq, NULL, "the host data of the other processes' ranks") : PL_COMM_OK;
    /* the process's threads meet: a thread that failed stops the world,
     * which ends the wait (a held rank is not waited for here: every thread
     * of the process is in this call, or on its way) */
    pthread_mutex_lock(&w->lock);
    unsigned gen = w->host_gen;
    if (++w->host_in == w->T) {
        w->host_in = 0;
        w->host_gen++;
        pthread_cond_broadcast(&w->host_cv);
    } else
        while (gen == w->host_gen && !atomic_load(&w->aborted)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 10000000;
            if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
            pthread_cond_timedwait(&w->host_cv, &w->lock, &ts);
        }
    int stopped = gen == w->host_gen;
    pthread_mutex_unlock(&w->lock);
    if (!r && stopped)
        r = fail(c, PL_COMM_ABORTED, "stopped while the host data was shared: %s", w->abort_msg);
    return r;
}

#endif
