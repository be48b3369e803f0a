/*
 * comm_local.c — the local collective engine (see paralab/comm.h and
 * comm_engine.h).
 *
 * Ranks are threads of one process. A communicator's members share one
 * `group`; all groups split from one world share its `world` (one lock and
 * condition variable, the point-to-point mailbox, the ledger, and what each
 * rank is waiting for, for the deadlock report).
 *
 * Every collective starts with a rendezvous at which each member posts its
 * call (kind, count, type, op, root) and its buffers; the calls are compared
 * (consistency check), then the algorithm runs as a sequence of steps, one
 * rendezvous per step. Within a step each rank only enqueues work on its own
 * stream: copies from a neighbour's device buffer (cudaMemcpyPeerAsync) and
 * the reduction kernel. Device-side order comes from events: a rank records
 * `ready` after each step that changes its buffer and `read` after each copy
 * out of a neighbour; a rank's stream waits for its predecessor's `ready`
 * before copying from it and for its successor's `read` before overwriting
 * what the successor still reads. Events alternate by step parity, and the
 * per-step rendezvous guarantees every wait is enqueued before its event is
 * recorded again two steps later. Nothing blocks a stream on the host, so
 * the modeled clock of the simulated GPU sees the real dependency chain.
 *
 * Ring all-reduce = ring reduce-scatter then ring all-gather: 2(N-1) steps,
 * each moving one of N segments, so each rank sends 2(N-1)/N of the array
 * (segments differ by at most one element when N does not divide the count).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm_engine.h"
#include "paralab/watchdog.h"
#include "paralab/comm.h"
#include "paralab/kernels.h"
#include "paralab/plural.h"
#include "paralab/trace.h"
#include "paralab/device.h"

#define MAX_RANKS 64
/* Events between neighbours: slots per rank and kind, as NCCL keeps
 * NCCL_STEPS = 8 slots per connection. */
#define FIFO 8
/* Chunk size default: NCCL's default NCCL_BUFFSIZE (4 MiB). */
#define DEFAULT_CHUNK_BYTES ((size_t)4 << 20)

typedef struct lcomm lcomm; /* one rank's handle: the engine's pl_comm */

/* ---- shared state -------------------------------------------------------- */

enum call_kind {
    CALL_NONE,
    CALL_ALL_REDUCE,
    CALL_BROADCAST,
    CALL_REDUCE,
    CALL_ALL_GATHER,
    CALL_REDUCE_SCATTER,
    CALL_ALL_TO_ALL,
    CALL_SPLIT,
    CALL_FREE,
    CALL_BARRIER,
};

static const char *kind_name(int k)
{
    static const char *n[] = {"none",       "all_reduce",     "broadcast",  "reduce",
                              "all_gather", "reduce_scatter", "all_to_all", "comm_split",
                              "comm_free",  "barrier"};
    return k >= 0 && k <= CALL_BARRIER ? n[k] : "?";
}

typedef struct call {
    int kind;
    size_t count;
    int type, op, root;
    int color, key; /* split */
    int bad;        /* this rank's arguments were invalid */
} call;

/* The times an event starts at: measured, and modeled on the stream. */
typedef struct mark {
    double start, modeled_start;
    cudaStream_t stream;
} mark;

typedef struct p2p {
    struct p2p *next;
    const void *grp; /* the communicator's group: a send matches a receive in it only */
    int send;        /* 1: a send, 0: a receive */
    int from, to;    /* world ranks */
    size_t count;
    int type;
    const void *sbuf;  /* send: the source */
    void *rbuf;        /* recv: the destination */
    int device;        /* the poster's device */
    cudaEvent_t ready; /* send: recorded on the sender's stream when posted */
    cudaEvent_t done;  /* recv: recorded after the copy (the sender waits for it) */
    int matched;       /* recv: the copy is enqueued, `done` recorded */
    mark posted;       /* when it was posted, for its trace event */
    int taken;         /* send: the receiver has copied it */
    pl_comm_result err;
    char msg[256];
} p2p;

typedef struct world {
    int n;
    double timeout;
    pthread_mutex_t lock;
    pthread_cond_t cv[MAX_RANKS]; /* each world rank sleeps on its own: woken alone when
                                     a neighbour moves its FIFO, all together otherwise */
    int aborted;
    pl_comm_result abort_code; /* PL_COMM_TIMEOUT (the watchdog) or PL_COMM_ABORTED */
    /* pl_comm_hold: while a rank is held (by the student), the watchdog's
     * clock stops; it counts only time in which every rank is free to run */
    int held;                      /* ranks held now */
    double held_since, held_total; /* CLOCK_MONOTONIC seconds */
    char abort_msg[2048];
    char doing[MAX_RANKS][160]; /* what each world rank waits for */
    pl_ledger ledger[MAX_RANKS];
    uint64_t link[MAX_RANKS][MAX_RANKS];
    p2p *posts;
    int refs; /* groups alive */
    pl_trace *trace;
    size_t chunk_bytes;    /* the local engine cuts segments into chunks of this size */
    struct group *groups;  /* every group alive, for pl_comm_destroy_all */
    struct lcomm *handles; /* every handle alive, likewise */
} world;

typedef struct group {
    world *w;
    int n;
    int wrank[MAX_RANKS];  /* member -> world rank */
    int device[MAX_RANKS]; /* member -> device */
    /* rendezvous */
    int arrived;
    unsigned long gen;
    /* what each member posted for the current call */
    call calls[MAX_RANKS];
    const void *send[MAX_RANKS];
    void *recv[MAX_RANKS];
    void *work[MAX_RANKS]; /* per-member device scratch for the current call */
    /* each member's FIFO of events: `ready` (its buffer holds step i's
     * data) and `read` (it has copied what it needed of its predecessor's
     * buffer for step i); how many of each it has recorded, and how many its
     * one waiter has enqueued a wait for (the successor waits for `ready`,
     * the predecessor for `read`); reset at every call */
    cudaEvent_t ready[MAX_RANKS][FIFO], read[MAX_RANKS][FIFO];
    unsigned long rec_ready[MAX_RANKS], rec_read[MAX_RANKS];
    unsigned long cons_ready[MAX_RANKS], cons_read[MAX_RANKS];
    struct group *split_to[MAX_RANKS]; /* pl_comm_split: each member's new group */
    int is_world;                      /* made by pl_comm_create, not by a split */
    struct group *next_group;
    int members_alive;
} group;

struct lcomm {
    pl_comm base; /* the engine table: first, so a pl_comm * is an lcomm * */
    group *g;
    int rank;
    struct lcomm *next_handle; /* in its world's list */
    unsigned long seq;         /* collective call number */
    mark call_mark, step_mark; /* when the call and its current step began */
    uint64_t step_bytes;
    int step_peer;
    unsigned long fifo_step, fifo_steps; /* the current ring step and how many, for reports */
    void *scratch;                       /* device scratch, on this rank's device */
    size_t scratch_bytes;
    void *work; /* a copy of the operands (reduce, reduce_scatter), kept between calls */
    size_t work_bytes;
    char err[2048];
};

/* Per host thread: the group nesting and the point-to-point ops queued in it. */
static _Thread_local int group_depth;
static _Thread_local struct queued {
    lcomm *c;
    p2p *op;
    cudaStream_t stream;
} * group_ops;
static _Thread_local int group_nops, group_cap;

/* Every rank waiting in the world re-checks what it waits for (w->lock held). */
static void wake_all(world *w)
{
    for (int r = 0; r < w->n; r++) pthread_cond_broadcast(&w->cv[r]);
}

/* ---- errors -------------------------------------------------------------- */

static pl_comm_result fail(lcomm *c, pl_comm_result r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static pl_comm_result fail(lcomm *c, pl_comm_result r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(c->err, sizeof c->err, "rank %d: ", c->g->wrank[c->rank]);
    vsnprintf(c->err + n, sizeof c->err - (size_t)n, fmt, ap);
    va_end(ap);
    return r;
}

static pl_comm_result cuda_fail(lcomm *c, cudaError_t e, const char *what)
{
    return fail(c, PL_COMM_CUDA_ERROR, "%s: %s (%s)", what, cudaGetErrorName(e),
                cudaGetErrorString(e));
}

static const char *l_comm_last_error(const pl_comm *pc)
{
    const lcomm *c = (const lcomm *)pc;
    return c->err;
}

static void l_comm_set_chunk_bytes(pl_comm *pc, size_t bytes)
{
    lcomm *c = (lcomm *)pc;
    c->g->w->chunk_bytes = bytes ? bytes : DEFAULT_CHUNK_BYTES;
}

static void l_comm_set_trace(pl_comm *pc, pl_trace *t)
{
    lcomm *c = (lcomm *)pc;
    c->g->w->trace = t;
}

/* ---- trace events ------------------------------------------------------------ */

static void mark_start(mark *m, cudaStream_t s)
{
    m->start = pl_trace_now();
    m->modeled_start = pl_device_stream_now(s);
    m->stream = s;
}

static void emit(lcomm *c, const mark *m, pl_event_kind kind, const char *label, uint64_t bytes,
                 int peer)
{
    pl_trace *t = c->g->w->trace;
    if (!t) return;
    pl_device_flush_ops(); /* this rank's finished copies and kernels first, in order */
    pl_event e = {.rank = c->g->wrank[c->rank],
                  .lane = PL_LANE_COMM,
                  .kind = (uint8_t)kind,
                  .micro_batch = -1,
                  .layer = -1,
                  .peer = peer,
                  .bytes = bytes,
                  .start = m->start,
                  .end = pl_trace_now(),
                  .modeled_start = m->modeled_start,
                  .modeled_end = pl_device_stream_now(m->stream)};
    snprintf(e.label, sizeof e.label, "%s", label);
    pl_trace_record(t, &e);
}

static void l_comm_abort(pl_comm *pc, const char *why)
{
    lcomm *c = (lcomm *)pc;
    world *w = c->g->w;
    pthread_mutex_lock(&w->lock);
    if (!w->aborted) {
        snprintf(w->abort_msg, sizeof w->abort_msg, "rank %d stopped the world: %s",
                 c->g->wrank[c->rank], why);
        w->aborted = 1;
        w->abort_code = PL_COMM_ABORTED;
    }
    wake_all(w);
    pthread_mutex_unlock(&w->lock);
}
static int l_comm_rank(const pl_comm *pc)
{
    const lcomm *c = (const lcomm *)pc;
    return c->rank;
}
static int l_comm_size(const pl_comm *pc)
{
    const lcomm *c = (const lcomm *)pc;
    return c->g->n;
}
static int l_comm_device(const pl_comm *pc)
{
    const lcomm *c = (const lcomm *)pc;
    return c->g->device[c->rank];
}

/* ---- waiting, with the watchdog ------------------------------------------ */

static void deadline_after(struct timespec *ts, double s)
{
    clock_gettime(CLOCK_REALTIME, ts);
    long ns = ts->tv_nsec + (long)((s - (long)s) * 1e9);
    ts->tv_sec += (time_t)s + ns / 1000000000L;
    ts->tv_nsec = ns % 1000000000L;
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The watchdog's clock: seconds in which no rank was held (w->lock held). */
static double free_clock(const world *w)
{
    double now = mono_now();
    return now - w->held_total - (w->held ? now - w->held_since : 0);
}

/* One wait on cv for the watchdog (w->lock held). *since is the free clock
 * when the wait began, *seen the process's progress then
 * (pl_watchdog_progress_count): 1 when `timeout` seconds of free time have
 * passed with no progress anywhere in the process, else 0 (woken, or a hold
 * began or ended: look again). While a rank is held it waits without a
 * deadline; the release wakes everyone. Progress elsewhere (a kernel block
 * finished, a copy done) starts the count again: on a slow or busy machine
 * the other ranks' work is late, not deadlocked. */
static int watch(world *w, pthread_cond_t *cv, double *since, unsigned long long *seen)
{
    if (w->held) {
        pthread_cond_wait(cv, &w->lock);
        return 0;
    }
    double left = w->timeout - (free_clock(w) - *since);
    if (left > 0) {
        struct timespec dl;
        deadline_after(&dl, left);
        pthread_cond_timedwait(cv, &w->lock, &dl);
    }
    if (w->held || free_clock(w) - *since < w->timeout) return 0;
    unsigned long long p = pl_watchdog_progress_count();
    if (p != *seen) {
        *seen = p;
        *since = free_clock(w);
        return 0;
    }
    return 1;
}

/* Everyone's state, for the report of a deadlock (w->lock held). */
static void describe_world(world *w, char *buf, size_t cap)
{
    size_t n = 0;
    for (int r = 0; r < w->n && n < cap; r++) {
        int k = snprintf(buf + n, cap - n, "%srank %d %s", r ? "; " : "", r,
                         w->doing[r][0] ? w->doing[r] : "is in no communicator call");
        if (k < 0) break;
        n += (size_t)k;
    }
    /* the classic: two ranks that both send first, outside a group */
    for (int a = 0; a < w->n; a++)
        for (int b = a + 1; b < w->n; b++) {
            char sa[64], sb[64];
            snprintf(sa, sizeof sa, "waits in send to rank %d (", b); /* not rank 10 for 1 */
            snprintf(sb, sizeof sb, "waits in send to rank %d (", a);
            if (strstr(w->doing[a], sa) && strstr(w->doing[b], sb) && n < cap) {
                snprintf(buf + n, cap - n,
                         ". Ranks %d and %d both send before they receive: put each exchange in "
                         "pl_group_start()/pl_group_end()",
                         a, b);
                return;
            }
        }
}

/* The watchdog ran out: the world is aborted with a report of what every
 * rank waits for (w->lock held). */
static void trip(world *w)
{
    if (w->aborted) return;
    char who[1700];
    describe_world(w, who, sizeof who);
    snprintf(w->abort_msg, sizeof w->abort_msg, "deadlock: no progress for %g s: %s", w->timeout,
             who);
    w->aborted = 1;
    w->abort_code = PL_COMM_TIMEOUT;
    wake_all(w);
}

static void l_comm_hold(pl_comm *pc, int on)
{
    lcomm *c = (lcomm *)pc;
    world *w = c->g->w;
    pthread_mutex_lock(&w->lock);
    if (on && w->held++ == 0) w->held_since = mono_now();
    if (!on && w->held > 0 && --w->held == 0) {
        w->held_total += mono_now() - w->held_since;
        wake_all(w); /* the waiting ranks set their deadlines again */
    }
    pthread_mutex_unlock(&w->lock);
}

/* Waits on this rank's w->cv until *cond holds or the watchdog runs out
 * (w->lock held). On timeout the world is aborted with a report of what
 * every rank waits for. */
static pl_comm_result wait_until(lcomm *c, int (*cond)(void *), void *arg)
{
    world *w = c->g->w;
    double since = free_clock(w);
    unsigned long long seen = pl_watchdog_progress_count();
    while (!cond(arg)) {
        if (w->aborted) return fail(c, w->abort_code, "%s", w->abort_msg);
        if (watch(w, &w->cv[c->g->wrank[c->rank]], &since, &seen) && !cond(arg)) {
            trip(w);
            return fail(c, w->abort_code, "%s", w->abort_msg);
        }
    }
    return w->aborted ? fail(c, w->abort_code, "%s", w->abort_msg) : PL_COMM_OK;
}

typedef struct {
    group *g;
    unsigned long gen;
} gen_arg;

static int gen_moved(void *p)
{
    gen_arg *a = p;
    return a->g->gen != a->gen;
}

/* Every member of the group arrives before any leaves (w->lock held). */
static pl_comm_result rendezvous(lcomm *c, const char *what)
{
    group *g = c->g;
    world *w = g->w;
    if (w->aborted) return fail(c, w->abort_code, "%s", w->abort_msg);
    snprintf(w->doing[g->wrank[c->rank]], sizeof w->doing[0], "%s", what);
    gen_arg a = {g, g->gen};
    pl_comm_result r = PL_COMM_OK;
    if (++g->arrived == g->n) {
        g->arrived = 0;
        g->gen++;
        wake_all(w);
    } else
        r = wait_until(c, gen_moved, &a);
    w->doing[g->wrank[c->rank]][0] = '\0';
    return r;
}

/* ---- creation --------------------------------------------------------------- */

static group *group_new(world *w, int n)
{
    group *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->w = w;
    g->n = n;
    g->members_alive = n;
    w->refs++;
    g->next_group = w->groups;
    w->groups = g;
    return g;
}

pl_comm_result pl_comm_create(int n, const int *devices, double timeout_s, pl_comm **ranks)
{
    if (n < 1 || n > MAX_RANKS || !devices || !ranks) return PL_COMM_INVALID_ARGUMENT;
    world *w = calloc(1, sizeof *w);
    if (!w) return PL_COMM_SYSTEM_ERROR;
    w->n = n;
    w->timeout = timeout_s > 0 ? timeout_s : 10.0;
    w->chunk_bytes = DEFAULT_CHUNK_BYTES;
    pthread_mutex_init(&w->lock, NULL);
    for (int r = 0; r < MAX_RANKS; r++) pthread_cond_init(&w->cv[r], NULL);
    group *g = group_new(w, n);
    if (!g) {
        free(w);
        return PL_COMM_SYSTEM_ERROR;
    }
    g->is_world = 1;
    for (int r = 0; r < n; r++) {
        g->wrank[r] = r;
        g->device[r] = devices[r];
        lcomm *h = calloc(1, sizeof *h);
        if (!h) {
            while (r-- > 0) free(ranks[r]);
            free(g);
            free(w);
            return PL_COMM_SYSTEM_ERROR;
        }
        h->base.engine = &pl_comm_local_engine;
        h->g = g;
        h->rank = r;
        h->next_handle = w->handles;
        w->handles = h;
        ranks[r] = &h->base;
    }
    return PL_COMM_OK;
}

static void handle_free(lcomm *c)
{
    group *g = c->g;
    world *w = g->w;
    int dev = g->device[c->rank], cur = 0;
    cudaGetDevice(&cur);
    cudaSetDevice(dev);
    for (int p = 0; p < FIFO; p++) {
        if (g->ready[c->rank][p]) cudaEventDestroy(g->ready[c->rank][p]);
        if (g->read[c->rank][p]) cudaEventDestroy(g->read[c->rank][p]);
    }
    cudaFree(c->scratch);
    cudaFree(c->work);
    cudaSetDevice(cur);
    pthread_mutex_lock(&w->lock);
    for (lcomm **pp = &w->handles; *pp; pp = &(*pp)->next_handle)
        if (*pp == c) {
            *pp = c->next_handle;
            break;
        }
    int last_member = --g->members_alive == 0;
    if (last_member)
        for (group **pp = &w->groups; *pp; pp = &(*pp)->next_group)
            if (*pp == g) {
                *pp = g->next_group;
                break;
            }
    int last_group = last_member && --w->refs == 0;
    pthread_mutex_unlock(&w->lock);
    if (last_member) free(g);
    if (last_group) {
        pthread_mutex_destroy(&w->lock);
        for (int r = 0; r < MAX_RANKS; r++) pthread_cond_destroy(&w->cv[r]);
        free(w);
    }
    free(c);
}

static void l_comm_destroy_all(pl_comm **ranks, int n)
{
    if (n < 1 || !ranks[0]) return;
    world *w = ((lcomm *)ranks[0])->g->w;
    /* Everything the world still holds, the ranks' handles among it: split
     * communicators the ranks did not free (a rank failed), and groups that
     * a failed split made but gave no handles to. */
    pthread_mutex_lock(&w->lock);
    int nh = 0;
    for (lcomm *h = w->handles; h; h = h->next_handle) nh++;
    lcomm **hs = malloc((size_t)(nh ? nh : 1) * sizeof *hs);
    nh = 0;
    for (lcomm *h = w->handles; hs && h; h = h->next_handle) hs[nh++] = h;
    for (group **pp = &w->groups; *pp;) {
        group *g = *pp;
        int held = 0;
        for (lcomm *h = w->handles; h; h = h->next_handle) held += h->g == g;
        g->members_alive = held; /* each remaining handle frees its share */
        if (held == 0) {
            *pp = g->next_group;
            w->refs--;
            free(g);
        } else
            pp = &g->next_group;
    }
    pthread_mutex_unlock(&w->lock);
    if (!hs) { /* out of memory: at least the ranks' handles */
        for (int r = 0; r < n; r++)
            if (ranks[r]) handle_free((lcomm *)ranks[r]);
        return;
    }
    for (int i = 0; i < nh; i++) handle_free(hs[i]); /* the last one frees the world */
    free(hs);
}

/* ---- the collective frame ------------------------------------------------------ */

/* This rank's events on its device, made at first use. */
static pl_comm_result ensure_events(lcomm *c)
{
    group *g = c->g;
    for (int p = 0; p < FIFO; p++) {
        cudaError_t e = cudaSuccess;
        if (!g->ready[c->rank][p])
            e = cudaEventCreateWithFlags(&g->ready[c->rank][p], cudaEventDisableTiming);
        if (!e && !g->read[c->rank][p])
            e = cudaEventCreateWithFlags(&g->read[c->rank][p], cudaEventDisableTiming);
        if (e) return cuda_fail(c, e, "cudaEventCreate");
    }
    return PL_COMM_OK;
}

static pl_comm_result ensure_scratch(lcomm *c, size_t bytes)
{
    if (bytes <= c->scratch_bytes) return PL_COMM_OK;
    cudaFree(c->scratch);
    c->scratch = NULL;
    c->scratch_bytes = 0;
    cudaError_t e = cudaMalloc(&c->scratch, bytes);
    if (e) return cuda_fail(c, e, "cudaMalloc of the engine's scratch buffer");
    c->scratch_bytes = bytes;
    return PL_COMM_OK;
}

/* The work buffer, kept between calls: reusing it is safe because every call
 * ends with this rank's stream waiting for its successor's last read, and
 * growing it frees the old one with cudaFree, which waits for the device.
 * NULL when out of memory. Call on this rank's device. */
static void *ensure_work(lcomm *c, size_t bytes)
{
    if (bytes > c->work_bytes) {
        cudaFree(c->work);
        c->work = NULL;
        c->work_bytes = 0;
        if (cudaMalloc(&c->work, bytes) != cudaSuccess) return NULL;
        c->work_bytes = bytes;
    }
    return c->work;
}

static void describe_call(const call *k, char *buf, size_t cap)
{
    switch (k->kind) {
    case CALL_ALL_REDUCE:
    case CALL_REDUCE_SCATTER:
        snprintf(buf, cap, "%s(count=%zu, %s, %s)", kind_name(k->kind), k->count,
                 pl_dtype_name(k->type), pl_redop_name(k->op));
        break;
    case CALL_REDUCE:
        snprintf(buf, cap, "reduce(count=%zu, %s, %s, root=%d)", k->count, pl_dtype_name(k->type),
                 pl_redop_name(k->op), k->root);
        break;
    case CALL_BROADCAST:
        snprintf(buf, cap, "broadcast(count=%zu, %s, root=%d)", k->count, pl_dtype_name(k->type),
                 k->root);
        break;
    case CALL_SPLIT:
        snprintf(buf, cap, "comm_split");
        break;
    case CALL_FREE:
        snprintf(buf, cap, "comm_free");
        break;
    case CALL_BARRIER:
        snprintf(buf, cap, "barrier");
        break;
    default:
        snprintf(buf, cap, "%s(count=%zu, %s)", kind_name(k->kind), k->count,
                 pl_dtype_name(k->type));
    }
    if (k->bad && strlen(buf) + 24 < cap) strcat(buf, " [invalid arguments]");
}

static int same_call(const call *a, const call *b)
{
    if (a->kind != b->kind || a->bad || b->bad) return 0;
    if (a->kind == CALL_SPLIT || a->kind == CALL_FREE || a->kind == CALL_BARRIER) return 1;
    if (a->count != b->count || a->type != b->type) return 0;
    if ((a->kind == CALL_ALL_REDUCE || a->kind == CALL_REDUCE || a->kind == CALL_REDUCE_SCATTER) &&
        a->op != b->op)
        return 0;
    if ((a->kind == CALL_REDUCE || a->kind == CALL_BROADCAST) && a->root != b->root) return 0;
    return 1;
}

/* "call #3: ranks 0,1,3 all_reduce(count=1024, float, sum); rank 2
 * all_gather(count=256, float)": the members grouped by what they called. */
static void describe_mismatch(group *g, unsigned long seq, char *buf, size_t cap)
{
    int done[MAX_RANKS] = {0};
    size_t n = (size_t)snprintf(buf, cap, "the ranks disagree about call #%lu: ", seq);
    for (int i = 0; i < g->n && n < cap; i++) {
        if (done[i]) continue;
        char ranks[256] = "", what[160];
        size_t rn = 0;
        int count = 0;
        for (int j = i; j < g->n; j++)
            if (!done[j] && (j == i || (same_call(&g->calls[i], &g->calls[j]) ||
                                        (g->calls[i].bad && g->calls[j].bad &&
                                         g->calls[i].kind == g->calls[j].kind)))) {
                done[j] = 1;
                count++;
                rn += (size_t)snprintf(ranks + rn, sizeof ranks - rn, "%s%d", rn ? "," : "",
                                       g->wrank[j]);
            }
        describe_call(&g->calls[i], what, sizeof what);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s %s %s", i ? "; " : "",
                              count > 1 ? "ranks" : "rank", ranks, what);
    }
}

/* Posts this rank's call and buffers, meets the others, checks they all
 * called the same. On any error every member returns an error. */
static pl_comm_result begin(lcomm *c, const call *k, const void *send, void *recv,
                            cudaStream_t stream)
{
    group *g = c->g;
    world *w = g->w;
    call in_group;
    if (group_depth > 0 && !k->bad) { /* still meet the others: they must not wait */
        fail(c, PL_COMM_INVALID_ARGUMENT,
             "%s inside pl_group_start()/pl_group_end(): the local engine groups only send and "
             "receive",
             kind_name(k->kind));
        in_group = *k;
        in_group.bad = 1;
        k = &in_group;
    }
    cudaError_t e = cudaSetDevice(g->device[c->rank]);
    if (e) return cuda_fail(c, e, "cudaSetDevice");
    pl_comm_result r = ensure_events(c);
    if (r) return r;
    c->seq++;
    mark_start(&c->call_mark, stream);
    c->step_mark = c->call_mark;
    c->step_bytes = 0;
    c->step_peer = -1;
    pthread_mutex_lock(&w->lock);
    g->calls[c->rank] = *k;
    g->send[c->rank] = send;
    g->recv[c->rank] = recv;
    char what[200], desc[160];
    describe_call(k, desc, sizeof desc);
    snprintf(what, sizeof what, "waits in %s (call #%lu) for the other ranks", desc, c->seq);
    r = rendezvous(c, what);
    int agree = 1;
    for (int i = 0; i < g->n; i++) agree &= same_call(&g->calls[0], &g->calls[i]);
    char msg[1800];
    if (r == PL_COMM_OK && !agree) describe_mismatch(g, c->seq, msg, sizeof msg);
    /* every member has left its previous call: its FIFO starts afresh */
    g->rec_ready[c->rank] = g->rec_read[c->rank] = 0;
    g->cons_ready[c->rank] = g->cons_read[c->rank] = 0;
    /* a second meeting: no member may post its next call while others read
     * this one, or use a FIFO before its owner has reset it */
    pl_comm_result r2 = r ? r : rendezvous(c, what);
    pthread_mutex_unlock(&w->lock);
    if (r) return r;
    if (r2) return r2;
    int all_bad = 1;
    for (int i = 0; i < g->n; i++) all_bad &= g->calls[i].bad;
    if (!agree) {
        pl_comm_result code = k->bad ? PL_COMM_INVALID_ARGUMENT : PL_COMM_MISMATCH;
        if (all_bad) return code; /* everyone erred alike: its own message says it all */
        if (k->bad) {             /* keep this rank's own argument message, add the picture */
            size_t n = strlen(c->err);
            snprintf(c->err + n, sizeof c->err - n, " (%s)", msg);
            return code;
        }
        return fail(c, code, "%s", msg);
    }
    return PL_COMM_OK;
}

/* One step's meeting, with what this rank is doing for the deadlock report. */
static pl_comm_result step(lcomm *c, const char *kind, int s, int steps)
{
    world *w = c->g->w;
    char what[160];
    snprintf(what, sizeof what, "waits in %s (call #%lu, step %d of %d)", kind, c->seq,
             s < 0 ? 0 : s + 1, steps);
    pthread_mutex_lock(&w->lock);
    pl_comm_result r = rendezvous(c, what);
    pthread_mutex_unlock(&w->lock);
    if (!r && s >= 0 && s < steps) {
        char label[48];
        snprintf(label, sizeof label, "%s step %d", kind, s + 1);
        emit(c, &c->step_mark, PL_EV_RING_STEP, label, c->step_bytes, c->step_peer);
    }
    mark_start(&c->step_mark, c->call_mark.stream);
    c->step_bytes = 0;
    c->step_peer = -1;
    return r;
}

/* The ledger: `bytes` from member `from` to member `to` (world ranks). */
static void account(group *g, int from, int to, size_t bytes)
{
    world *w = g->w;
    int a = g->wrank[from], b = g->wrank[to];
    pthread_mutex_lock(&w->lock);
    w->ledger[a].bytes_sent += bytes;
    w->ledger[a].messages_sent++;
    w->ledger[b].bytes_received += bytes;
    w->ledger[b].messages_received++;
    w->link[a][b] += bytes;
    pthread_mutex_unlock(&w->lock);
}

static pl_ledger l_comm_ledger(const pl_comm *pc)
{
    const lcomm *c = (const lcomm *)pc;
    world *w = c->g->w;
    pthread_mutex_lock(&w->lock);
    pl_ledger l = w->ledger[c->g->wrank[c->rank]];
    pthread_mutex_unlock(&w->lock);
    return l;
}

static void l_comm_count_call(pl_comm *pc, pl_comm_call k)
{
    lcomm *c = (lcomm *)pc;
    world *w = c->g->w;
    pthread_mutex_lock(&w->lock);
    w->ledger[c->g->wrank[c->rank]].calls[k]++;
    pthread_mutex_unlock(&w->lock);
}

static uint64_t l_comm_link_bytes(const pl_comm *pc, int from, int to)
{
    const lcomm *c = (const lcomm *)pc;
    world *w = c->g->w;
    if (from < 0 || to < 0 || from >= w->n || to >= w->n) return 0;
    pthread_mutex_lock(&w->lock);
    uint64_t b = w->link[from][to];
    pthread_mutex_unlock(&w->lock);
    return b;
}

/* ---- argument checks ------------------------------------------------------------- */

static int check_type_op(lcomm *c, call *k, int with_op)
{
    if ((unsigned)k->type >= PL_NUM_DTYPES) {
        fail(c, PL_COMM_INVALID_ARGUMENT,
             "%s: type %d is not a pl_dtype (allowed: 0..%d: float, double, int32, int64)",
             kind_name(k->kind), k->type, PL_NUM_DTYPES - 1);
        return 0;
    }
    if (with_op && (unsigned)k->op >= PL_NUM_OPS) {
        fail(c, PL_COMM_INVALID_ARGUMENT,
             "%s: op %d is not a pl_redop (allowed: 0..%d: sum, prod, max, min, avg)",
             kind_name(k->kind), k->op, PL_NUM_OPS - 1);
        return 0;
    }
    return 1;
}

static int check_root(lcomm *c, call *k)
{
    if (k->root < 0 || k->root >= c->g->n) {
        fail(c, PL_COMM_INVALID_ARGUMENT, "%s: root %d is not a rank (allowed: 0..%d)",
             kind_name(k->kind), k->root, c->g->n - 1);
        return 0;
    }
    return 1;
}

static int check_buffers(lcomm *c, call *k, const void *send, const void *recv, int need_send,
                         int need_recv)
{
    if (k->count == 0) return 1;
    if ((need_send && !send) || (need_recv && !recv)) {
        fail(c, PL_COMM_INVALID_ARGUMENT, "%s: %s buffer is NULL with count %zu > 0",
             kind_name(k->kind), need_send && !send ? "send" : "receive", k->count);
        return 0;
    }
    return 1;
}

/* ---- the FIFO of events between neighbours ------------------------------------------------ */

/* Segment k of N over count elements: [start, start+len), lengths differ by
 * at most one. */
static size_t seg_start(size_t count, int n, int k) { return count * (size_t)k / (size_t)n; }
static size_t seg_len(size_t count, int n, int k)
{
    return seg_start(count, n, k + 1) - seg_start(count, n, k);
}

#define MOD(a, n) ((((a) % (n)) + (n)) % (n))
#define CK(call, what)                                                                             \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_) return cuda_fail(c, e_, what);                                                     \
    } while (0)

typedef struct {
    const unsigned long *ctr;
    int who;
    unsigned long need;
} ctr_arg;

static int ctr_reached(void *p)
{
    const ctr_arg *a = p;
    return a->ctr[a->who] >= a->need;
}

/* Waits (on the host) until counter ctr[who] of this group reaches need. */
static pl_comm_result await_ctr(lcomm *c, const unsigned long *ctr, int who, unsigned long need,
                                const char *fmt, int peer)
{
    world *w = c->g->w;
    pl_comm_result r = PL_COMM_OK;
    pthread_mutex_lock(&w->lock);
    if (w->aborted)
        r = fail(c, w->abort_code, "%s", w->abort_msg);
    else if (ctr[who] < need) {
        char *doing = w->doing[c->g->wrank[c->rank]];
        int k =
            snprintf(doing, sizeof w->doing[0], "waits in %s (call #%lu, step %lu of %lu) ",
                     kind_name(c->g->calls[c->rank].kind), c->seq, c->fifo_step + 1, c->fifo_steps);
        snprintf(doing + k, sizeof w->doing[0] - (size_t)k, fmt, c->g->wrank[peer]);
        ctr_arg a = {ctr, who, need};
        r = wait_until(c, ctr_reached, &a);
        doing[0] = '\0';
    }
    pthread_mutex_unlock(&w->lock);
    return r;
}

/* Sets counter ctr[who] and wakes the one member that waits for it. */
static void set_ctr(lcomm *c, unsigned long *ctr, int who, unsigned long v, int waiter)
{
    world *w = c->g->w;
    pthread_mutex_lock(&w->lock);
    ctr[who] = v;
    pthread_cond_signal(&w->cv[c->g->wrank[waiter]]);
    pthread_mutex_unlock(&w->lock);
}

/* Record i of this rank's `ready` (which = 1) or `read` (0) event: into slot
 * i % FIFO, once the one neighbour that waits for it has enqueued its wait
 * for the record the slot held before (i - FIFO). */
static pl_comm_result fifo_record(lcomm *c, int which, unsigned long i, cudaStream_t s)
{
    group *g = c->g;
    int me = c->rank;
    if (i >= FIFO) {
        pl_comm_result r =
            which ? await_ctr(c, g->cons_ready, me, i - FIFO + 1,
                              "for rank %d to take an earlier chunk (the FIFO is full)",
                              MOD(me + 1, g->n))
                  : await_ctr(c, g->cons_read, me, i - FIFO + 1,
                              "for rank %d to take an earlier chunk (the FIFO is full)",
                              MOD(me - 1, g->n));
        if (r) return r;
    }
    CK(cudaEventRecord(which ? g->ready[me][i % FIFO] : g->read[me][i % FIFO], s),
       "cudaEventRecord");
    /* the successor waits for `ready`, the predecessor for `read` */
    set_ctr(c, which ? g->rec_ready : g->rec_read, me, i + 1, MOD(me + (which ? 1 : -1), g->n));
    return PL_COMM_OK;
}

/* Makes this rank's stream wait for record i of member `who`'s `ready`
 * (which = 1) or `read` (0), once it is recorded. */
static pl_comm_result fifo_wait(lcomm *c, int which, int who, unsigned long i, cudaStream_t s)
{
    group *g = c->g;
    pl_comm_result r =
        await_ctr(c, which ? g->rec_ready : g->rec_read, who, i + 1,
                  which ? "for rank %d's data" : "for rank %d to finish reading this buffer", who);
    if (r) return r;
    CK(cudaStreamWaitEvent(s, which ? g->ready[who][i % FIFO] : g->read[who][i % FIFO], 0),
       "cudaStreamWaitEvent");
    set_ctr(c, which ? g->cons_ready : g->cons_read, who, i + 1, who); /* its FIFO's owner */
    return PL_COMM_OK;
}

/* A copy of `bytes` from member `from`'s buffer at `src` into `dst` here,
 * with the ledger and the step's trace counts. */
static pl_comm_result fifo_copy(lcomm *c, int from, void *dst, const void *src, size_t bytes,
                                cudaStream_t s)
{
    group *g = c->g;
    if (!bytes) return PL_COMM_OK;
    CK(cudaMemcpyPeerAsync(dst, g->device[c->rank], src, g->device[from], bytes, s),
       "cudaMemcpyPeerAsync");
    account(g, from, c->rank, bytes);
    c->step_bytes += bytes;
    c->step_peer = g->wrank[from];
    return PL_COMM_OK;
}

/* The end of one step: its trace event (nested in the collective's). */
static void step_done(lcomm *c, const char *kind, int chunk, int chunks, int st, int steps)
{
    char label[48];
    if (chunks > 1)
        snprintf(label, sizeof label, "%s chunk %d step %d", kind, chunk + 1, st + 1);
    else
        snprintf(label, sizeof label, "%s step %d", kind, st + 1);
    (void)steps;
    emit(c, &c->step_mark, PL_EV_RING_STEP, label, c->step_bytes, c->step_peer);
    mark_start(&c->step_mark, c->call_mark.stream);
    c->step_bytes = 0;
    c->step_peer = -1;
    c->fifo_step++;
}

/* Chunks of at most `ce` elements over a segment of at most `maxlen`. */
static int chunks_of(size_t maxlen, size_t ce)
{
    return maxlen ? (int)((maxlen + ce - 1) / ce) : 1;
}

/* Elements per chunk for elements of es bytes. */
static size_t chunk_elems(const lcomm *c, size_t es)
{
    size_t ce = c->g->w->chunk_bytes / es;
    return ce ? ce : 1;
}

/* ---- the ring, chunked and pipelined -------------------------------------------------------- */

/* The ring over `buf` (this rank's copy, in place), chunk after chunk, as
 * NCCL's ring loops over its chunks: for each chunk, the reduce-scatter
 * steps (rs) — segment by segment, add the predecessor's partial sum — then
 * the all-gather steps (ag) — pass each finished segment on. Segment k is
 * seg_start/seg_len of count over N (`blocks` = 0), or block k of `count`
 * elements (all_gather, `blocks` = 1). Each chunk-step waits, on the device,
 * for the predecessor's data of its previous step and for the successor to
 * have read what it overwrites; the host threads only wait for their two
 * neighbours, at most FIFO steps apart, so a rank runs ahead of the others
 * instead of meeting all of them at every step. */
static pl_comm_result ring_run(lcomm *c, const char *kind, char *buf, size_t count, int type,
                               int op, int rs, int ag, int blocks, cudaStream_t s)
{
    group *g = c->g;
    int n = g->n, r = c->rank, prev = MOD(r - 1, n), next = MOD(r + 1, n);
    size_t es = pl_dtype_size((pl_dtype)type), ce = chunk_elems(c, es);
    char *prevbuf = g->recv[prev];
    int per_chunk = (rs + ag) * (n - 1);
    int chunks = chunks_of(blocks ? count : (count + (size_t)n - 1) / (size_t)n, ce);
    pl_comm_result res;
    c->fifo_step = 0;
    c->fifo_steps = (unsigned long)chunks * (unsigned long)per_chunk;
    if (rs && (res = ensure_scratch(c, ce * es))) return res;
    /* record 0: this rank's buffer as the call found it (after its own copies) */
    if ((res = fifo_record(c, 1, 0, s)) || (res = fifo_record(c, 0, 0, s))) return res;
    unsigned long i = 0; /* the step: it waits for records i, and makes records i + 1 */
    for (int ch = 0; ch < chunks; ch++)
        for (int st = 0; st < per_chunk; st++, i++) {
            int reduce = st < rs * (n - 1);
            int seg = reduce ? MOD(r - st - 2, n) : MOD(r - (st - rs * (n - 1)) - 1, n);
            size_t off = blocks ? (size_t)seg * count : seg_start(count, n, seg);
            size_t len = blocks ? count : seg_len(count, n, seg);
            size_t lo = (size_t)ch * ce, m = lo < len ? (len - lo < ce ? len - lo : ce) : 0;
            char *mine = buf + (off + lo) * es;
            const char *theirs = prevbuf + (off + lo) * es;
            if ((res = fifo_wait(c, 1, prev, i, s)) || (res = fifo_wait(c, 0, next, i, s)))
                return res;
            if ((res = fifo_copy(c, prev, reduce ? c->scratch : mine, theirs, m * es, s)))
                return res;
            if ((res = fifo_record(c, 0, i + 1, s))) return res;
            if (reduce && m)
                CK(pl_k_reduce(mine, c->scratch, m, type, op, s), "the reduction kernel");
            if ((res = fifo_record(c, 1, i + 1, s))) return res;
            step_done(c, kind, ch, chunks, st, per_chunk);
        }
    /* this buffer may change again only once the successor has read it */
    return fifo_wait(c, 0, next, i, s);
}

/* A chain, chunk after chunk: position 0 holds the data, position p copies
 * each chunk from position p-1 as soon as p-1 has it (broadcast: the copy
 * is the result; reduce: it is reduced into this rank's own partial sum).
 * With C chunks the last position has everything after N-1+C-1 chunk
 * steps, not (N-1)·C: that is the pipelining. `mine` is what position p+1
 * reads. */
static pl_comm_result chain_run(lcomm *c, const char *kind, int pos, char *mine, size_t count,
                                int type, int op, int reduce, cudaStream_t s)
{
    group *g = c->g;
    int n = g->n, r = c->rank, prev = MOD(r - 1, n), next = MOD(r + 1, n);
    size_t es = pl_dtype_size((pl_dtype)type), ce = chunk_elems(c, es);
    const char *prevbuf = g->recv[prev];
    int chunks = chunks_of(count, ce);
    pl_comm_result res;
    c->fifo_step = 0;
    c->fifo_steps = (unsigned long)chunks;
    if (reduce && pos > 0 && (res = ensure_scratch(c, ce * es))) return res;
    for (int ch = 0; ch < chunks; ch++) {
        size_t lo = (size_t)ch * ce, m = count - lo < ce ? count - lo : ce;
        if (pos > 0) {
            if ((res = fifo_wait(c, 1, prev, (unsigned long)ch + 1, s))) return res;
            if ((res = fifo_copy(c, prev, reduce ? c->scratch : mine + lo * es, prevbuf + lo * es,
                                 m * es, s)))
                return res;
            if (reduce)
                CK(pl_k_reduce(mine + lo * es, c->scratch, m, type, op, s), "the reduction kernel");
        }
        if (pos < n - 1 && (res = fifo_record(c, 1, (unsigned long)ch + 1, s))) return res;
        step_done(c, kind, ch, chunks, pos > 0 ? pos - 1 : 0, n - 1);
    }
    /* the predecessor's buffer: read to the end; mine: wait for the successor */
    if (pos > 0 && (res = fifo_record(c, 0, 1, s))) return res;
    if (pos < n - 1) return fifo_wait(c, 0, next, 1, s);
    return PL_COMM_OK;
}

/* ---- the collectives ------------------------------------------------------------------ */

static pl_comm_result all_reduce_impl(lcomm *c, const void *send, void *recv, size_t count,
                                      pl_dtype t, pl_redop op, cudaStream_t s)
{
    call k = {.kind = CALL_ALL_REDUCE, .count = count, .type = t, .op = op};
    k.bad = !check_type_op(c, &k, 1) || !check_buffers(c, &k, send, recv, 1, 1);
    pl_comm_result r = begin(c, &k, send, recv, s);
    if (r || count == 0) return r;
    size_t es = pl_dtype_size(t), bytes = count * es;
    int n = c->g->n;
    if (send != recv) CK(cudaMemcpyAsync(recv, send, bytes, cudaMemcpyDeviceToDevice, s), "copy");
    if (n > 1 && (r = ring_run(c, "all_reduce", recv, count, t, op, 1, 1, 0, s))) return r;
    if (op == PL_AVG && n > 1) CK(pl_k_divide(recv, count, t, n, s), "the division kernel");
    return PL_COMM_OK;
}

static pl_comm_result reduce_scatter_impl(lcomm *c, const void *send, void *recv, size_t recvcount,
                                          pl_dtype t, pl_redop op, cudaStream_t s)
{
    call k = {.kind = CALL_REDUCE_SCATTER, .count = recvcount, .type = t, .op = op};
    k.bad = !check_type_op(c, &k, 1) || !check_buffers(c, &k, send, recv, 1, 1);
    /* the ring works in a copy of send: every member's scratch `work` */
    pl_comm_result r = PL_COMM_OK;
    group *g = c->g;
    int n = g->n;
    size_t es = k.bad ? 0 : pl_dtype_size(t), total = recvcount * (size_t)n;
    void *work = NULL;
    if (!k.bad && recvcount && n > 1) {
        cudaSetDevice(g->device[c->rank]);
        work = ensure_work(c, total * es);
    }
    r = begin(c, &k, send, work, s);
    if (r || recvcount == 0) return r;
    if (n == 1) {
        if (send != recv)
            CK(cudaMemcpyAsync(recv, send, recvcount * es, cudaMemcpyDeviceToDevice, s), "copy");
        return PL_COMM_OK;
    }
    if (!work) return fail(c, PL_COMM_SYSTEM_ERROR, "cudaMalloc of the reduce_scatter scratch");
    /* segment j = block j: N divides the total */
    cudaError_t e0 = cudaMemcpyAsync(work, send, total * es, cudaMemcpyDeviceToDevice, s);
    if (e0) r = cuda_fail(c, e0, "copy");
    if (!r) r = ring_run(c, "reduce_scatter", work, total, t, op, 1, 0, 0, s);
    if (!r && op == PL_AVG)
        if (pl_k_divide((char *)work + (size_t)c->rank * recvcount * es, recvcount, t, n, s))
            r = fail(c, PL_COMM_CUDA_ERROR, "the division kernel");
    if (!r) {
        cudaError_t e = cudaMemcpyAsync(recv, (char *)work + (size_t)c->rank * recvcount * es,
                                        recvcount * es, cudaMemcpyDeviceToDevice, s);
        if (e) r = cuda_fail(c, e, "copy");
    }
    return r;
}

static pl_comm_result all_gather_impl(lcomm *c, const void *send, void *recv, size_t sendcount,
                                      pl_dtype t, cudaStream_t s)
{
    call k = {.kind = CALL_ALL_GATHER, .count = sendcount, .type = t};
    k.bad = !check_type_op(c, &k, 0) || !check_buffers(c, &k, send, recv, 1, 1);
    pl_comm_result r = begin(c, &k, send, recv, s);
    if (r || sendcount == 0) return r;
    int n = c->g->n;
    size_t es = pl_dtype_size(t), bytes = sendcount * es;
    char *mine = (char *)recv + (size_t)c->rank * bytes;
    if ((const char *)send != mine)
        CK(cudaMemcpyAsync(mine, send, bytes, cudaMemcpyDeviceToDevice, s), "copy");
    if (n == 1) return PL_COMM_OK;
    return ring_run(c, "all_gather", recv, sendcount, t, PL_SUM, 0, 1, 1, s);
}

static pl_comm_result broadcast_impl(lcomm *c, const void *send, void *recv, size_t count,
                                     pl_dtype t, int root, cudaStream_t s)
{
    call k = {.kind = CALL_BROADCAST, .count = count, .type = t, .root = root};
    k.bad = !check_type_op(c, &k, 0) || !check_root(c, &k) ||
            !check_buffers(c, &k, send, recv, c->rank == root, 1);
    pl_comm_result r = begin(c, &k, send, recv, s);
    if (r || count == 0) return r;
    group *g = c->g;
    int n = g->n, me = c->rank;
    size_t bytes = count * pl_dtype_size(t);
    if (me == root && send != recv)
        CK(cudaMemcpyAsync(recv, send, bytes, cudaMemcpyDeviceToDevice, s), "copy");
    if (n == 1) return PL_COMM_OK;
    /* a chain root -> root+1 -> ...: position p copies from p-1 */
    return chain_run(c, "broadcast", MOD(me - root, n), recv, count, t, PL_SUM, 0, s);
}

static pl_comm_result reduce_impl(lcomm *c, const void *send, void *recv, size_t count, pl_dtype t,
                                  pl_redop op, int root, cudaStream_t s)
{
    call k = {.kind = CALL_REDUCE, .count = count, .type = t, .op = op, .root = root};
    k.bad = !check_type_op(c, &k, 1) || !check_root(c, &k) ||
            !check_buffers(c, &k, send, recv, 1, c->rank == root);
    group *g = c->g;
    int n = g->n, me = c->rank;
    size_t es = k.bad ? 1 : pl_dtype_size(t), bytes = count * es;
    /* a chain root+1 -> root+2 -> ... -> root: each member adds its send to
     * the partial sum it receives; non-roots accumulate in a scratch copy */
    void *acc = NULL;
    if (!k.bad && count && n > 1 && me != root) {
        cudaSetDevice(g->device[me]);
        acc = ensure_work(c, bytes);
    }
    pl_comm_result r = begin(c, &k, send, me == root ? recv : acc, s);
    if (r || count == 0) return r;
    if (n == 1) {
        if (send != recv)
            CK(cudaMemcpyAsync(recv, send, bytes, cudaMemcpyDeviceToDevice, s), "copy");
        return PL_COMM_OK;
    }
    void *mine = me == root ? recv : acc;
    if (!mine) return fail(c, PL_COMM_SYSTEM_ERROR, "cudaMalloc of the reduce scratch");
    if (send != mine) CK(cudaMemcpyAsync(mine, send, bytes, cudaMemcpyDeviceToDevice, s), "copy");
    /* root is position n-1 */
    r = chain_run(c, "reduce", MOD(me - root - 1, n), mine, count, t, op, 1, s);
    if (!r && me == root && op == PL_AVG && pl_k_divide(recv, count, t, n, s))
        r = fail(c, PL_COMM_CUDA_ERROR, "the division kernel");
    return r;
}

static pl_comm_result all_to_all_impl(lcomm *c, const void *send, void *recv, size_t count,
                                      pl_dtype t, cudaStream_t s)
{
    call k = {.kind = CALL_ALL_TO_ALL, .count = count, .type = t};
    k.bad = !check_type_op(c, &k, 0) || !check_buffers(c, &k, send, recv, 1, 1);
    if (!k.bad && count && send == recv) {
        fail(c, PL_COMM_INVALID_ARGUMENT,
             "all_to_all: send and receive buffers must differ (no in-place form)");
        k.bad = 1;
    }
    pl_comm_result r = begin(c, &k, send, recv, s);
    if (r || count == 0) return r;
    group *g = c->g;
    int n = g->n, me = c->rank;
    size_t bytes = count * pl_dtype_size(t);
    CK(cudaMemcpyAsync((char *)recv + (size_t)me * bytes, (const char *)send + (size_t)me * bytes,
                       bytes, cudaMemcpyDeviceToDevice, s),
       "copy");
    if (n == 1) return PL_COMM_OK;
    /* pairwise exchange: at step j, receive from rank me-j the block it holds
     * for me, straight out of its send buffer */
    CK(cudaEventRecord(g->ready[me][1], s), "cudaEventRecord");
    if ((r = step(c, "all_to_all", 0, n))) return r;
    for (int j = 1; j < n; j++) {
        int from = MOD(me - j, n);
        CK(cudaStreamWaitEvent(s, g->ready[from][1], 0), "cudaStreamWaitEvent");
        CK(cudaMemcpyPeerAsync((char *)recv + (size_t)from * bytes, g->device[me],
                               (const char *)g->send[from] + (size_t)me * bytes, g->device[from],
                               bytes, s),
           "cudaMemcpyPeerAsync");
        account(g, from, me, bytes);
        c->step_bytes += bytes; /* one step, many peers: peer stays -1 */
    }
    CK(cudaEventRecord(g->read[me][0], s), "cudaEventRecord");
    if ((r = step(c, "all_to_all", 1, n))) return r;
    /* every reader of my send buffer is done before my stream goes on */
    for (int j = 0; j < n; j++)
        if (j != me) CK(cudaStreamWaitEvent(s, g->read[j][0], 0), "cudaStreamWaitEvent");
    return step(c, "all_to_all", 2, n); /* no one re-records `read` before all waited */
}

/* The public collectives: the algorithm, then one trace event for the call. */
static pl_comm_result traced(lcomm *c, pl_comm_result r, const char *name, uint64_t bytes)
{
    if (r == PL_COMM_OK && bytes) emit(c, &c->call_mark, PL_EV_COLLECTIVE, name, bytes, -1);
    return r;
}

static pl_comm_result l_all_reduce(pl_comm *pc, const void *send, void *recv, size_t count,
                                   pl_dtype t, pl_redop op, cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    return traced(c, all_reduce_impl(c, send, recv, count, t, op, s), "all_reduce",
                  count * pl_dtype_size(t));
}

static pl_comm_result l_reduce_scatter(pl_comm *pc, const void *send, void *recv, size_t recvcount,
                                       pl_dtype t, pl_redop op, cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    return traced(c, reduce_scatter_impl(c, send, recv, recvcount, t, op, s), "reduce_scatter",
                  recvcount * (size_t)c->g->n * pl_dtype_size(t));
}

static pl_comm_result l_all_gather(pl_comm *pc, const void *send, void *recv, size_t sendcount,
                                   pl_dtype t, cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    return traced(c, all_gather_impl(c, send, recv, sendcount, t, s), "all_gather",
                  sendcount * (size_t)c->g->n * pl_dtype_size(t));
}

static pl_comm_result l_broadcast(pl_comm *pc, const void *send, void *recv, size_t count,
                                  pl_dtype t, int root, cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    return traced(c, broadcast_impl(c, send, recv, count, t, root, s), "broadcast",
                  count * pl_dtype_size(t));
}

static pl_comm_result l_reduce(pl_comm *pc, const void *send, void *recv, size_t count, pl_dtype t,
                               pl_redop op, int root, cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    return traced(c, reduce_impl(c, send, recv, count, t, op, root, s), "reduce",
                  count * pl_dtype_size(t));
}

static pl_comm_result l_all_to_all(pl_comm *pc, const void *send, void *recv, size_t count,
                                   pl_dtype t, cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    return traced(c, all_to_all_impl(c, send, recv, count, t, s), "all_to_all",
                  count * (size_t)c->g->n * pl_dtype_size(t));
}

/* ---- split and free ----------------------------------------------------------------------- */

static pl_comm_result l_comm_split(pl_comm *pc, int color, int key, pl_comm **out)
{
    lcomm *c = (lcomm *)pc;
    call k = {.kind = CALL_SPLIT, .color = color, .key = key};
    if (!out) { /* still meet the others, so they are told */
        fail(c, PL_COMM_INVALID_ARGUMENT, "comm_split: out is NULL");
        k.bad = 1;
    } else
        *out = NULL;
    pl_comm_result r = begin(c, &k, NULL, NULL, NULL);
    if (r) return r;
    group *g = c->g;
    world *w = g->w;
    int me = c->rank;
    /* the lowest member of each color builds the new group */
    pthread_mutex_lock(&w->lock);
    int leader = -1;
    for (int i = 0; i < g->n && leader < 0; i++)
        if (g->calls[i].color == color) leader = i;
    if (color >= 0 && leader == me) {
        int members[MAX_RANKS], m = 0;
        for (int i = 0; i < g->n; i++)
            if (g->calls[i].color == color) members[m++] = i;
        for (int a = 1; a < m; a++) /* by key, then by rank: insertion sort */
            for (int b = a; b > 0; b--) {
                const call *x = &g->calls[members[b - 1]], *y = &g->calls[members[b]];
                if (x->key < y->key || (x->key == y->key && members[b - 1] < members[b])) break;
                int tmp = members[b];
                members[b] = members[b - 1];
                members[b - 1] = tmp;
            }
        group *ng = group_new(w, m);
        for (int i = 0; ng && i < m; i++) {
            ng->wrank[i] = g->wrank[members[i]];
            ng->device[i] = g->device[members[i]];
        }
        for (int i = 0; i < m; i++) g->split_to[members[i]] = ng;
    }
    r = rendezvous(c, "waits in comm_split for the other ranks");
    group *ng = color >= 0 ? g->split_to[me] : NULL;
    pl_comm_result r2 = r ? r : rendezvous(c, "waits in comm_split for the other ranks");
    pthread_mutex_unlock(&w->lock);
    if (r) return r;
    if (r2) return r2;
    if (color < 0) return PL_COMM_OK;
    if (!ng) return fail(c, PL_COMM_SYSTEM_ERROR, "comm_split: out of memory");
    lcomm *h = calloc(1, sizeof *h);
    if (!h) return fail(c, PL_COMM_SYSTEM_ERROR, "comm_split: out of memory");
    h->base.engine = &pl_comm_local_engine;
    h->g = ng;
    for (int i = 0; i < ng->n; i++)
        if (ng->wrank[i] == g->wrank[me]) h->rank = i;
    pthread_mutex_lock(&w->lock);
    h->next_handle = w->handles;
    w->handles = h;
    pthread_mutex_unlock(&w->lock);
    *out = &h->base;
    return PL_COMM_OK;
}

static pl_comm_result l_comm_barrier(pl_comm *pc)
{
    lcomm *c = (lcomm *)pc;
    call k = {.kind = CALL_BARRIER};
    return begin(c, &k, NULL, NULL, NULL);
}

static pl_comm_result l_comm_free(pl_comm *pc)
{
    lcomm *c = (lcomm *)pc;
    if (c->g->is_world)
        return fail(c, PL_COMM_INVALID_ARGUMENT,
                    "comm_free: this is the world communicator; pl_comm_destroy_all (or "
                    "pl_world_run) frees it");
    call k = {.kind = CALL_FREE};
    pl_comm_result r = begin(c, &k, NULL, NULL, NULL);
    if (r) return r;
    handle_free(c);
    return PL_COMM_OK;
}

/* ---- point to point ----------------------------------------------------------------------- */

static int post_matched(void *p)
{
    const p2p *o = p;
    return o->send ? o->taken : o->matched;
}

/* Finds the oldest post of the other side that matches o (w->lock held). */
static p2p *find_match(world *w, const p2p *o)
{
    for (p2p *q = w->posts; q; q = q->next)
        if (q->send != o->send && q->grp == o->grp && q->from == o->from && q->to == o->to &&
            (o->send ? !q->matched : !q->taken) && q != o)
            return q;
    return NULL;
}

static void append_post(world *w, p2p *o)
{
    p2p **pp = &w->posts;
    while (*pp) pp = &(*pp)->next;
    *pp = o;
}

static void remove_post(world *w, p2p *o)
{
    for (p2p **pp = &w->posts; *pp; pp = &(*pp)->next)
        if (*pp == o) {
            *pp = o->next;
            return;
        }
}

static pl_comm_result p2p_post(lcomm *c, int send, const void *buf, size_t count, pl_dtype t,
                               int peer, cudaStream_t s, p2p **out)
{
    group *g = c->g;
    const char *what = send ? "send" : "recv";
    *out = NULL;
    if ((unsigned)t >= PL_NUM_DTYPES)
        return fail(c, PL_COMM_INVALID_ARGUMENT,
                    "%s: type %d is not a pl_dtype (allowed: 0..%d: float, double, int32, int64)",
                    what, (int)t, PL_NUM_DTYPES - 1);
    if (peer < 0 || peer >= g->n)
        return fail(c, PL_COMM_INVALID_ARGUMENT, "%s: peer %d is not a rank (allowed: 0..%d)", what,
                    peer, g->n - 1);
    if (peer == c->rank)
        return fail(c, PL_COMM_INVALID_ARGUMENT, "%s: peer %d is this rank itself", what, peer);
    if (count && !buf)
        return fail(c, PL_COMM_INVALID_ARGUMENT, "%s: buffer is NULL with count %zu > 0", what,
                    count);
    cudaError_t e = cudaSetDevice(g->device[c->rank]);
    if (e) return cuda_fail(c, e, "cudaSetDevice");
    p2p *o = calloc(1, sizeof *o);
    if (!o) return fail(c, PL_COMM_SYSTEM_ERROR, "out of memory");
    o->send = send;
    o->grp = g;
    mark_start(&o->posted, s);
    o->from = send ? g->wrank[c->rank] : g->wrank[peer];
    o->to = send ? g->wrank[peer] : g->wrank[c->rank];
    o->count = count;
    o->type = t;
    o->device = g->device[c->rank];
    if (send)
        o->sbuf = buf;
    else
        o->rbuf = (void *)buf;
    if ((e = cudaEventCreateWithFlags(send ? &o->ready : &o->done, cudaEventDisableTiming)) ||
        (send && (e = cudaEventRecord(o->ready, s)))) {
        free(o);
        return cuda_fail(c, e, "cudaEventRecord");
    }
    pthread_mutex_lock(&g->w->lock);
    append_post(g->w, o);
    wake_all(g->w);
    pthread_mutex_unlock(&g->w->lock);
    *out = o;
    return PL_COMM_OK;
}

/* Completes a posted op: a receive waits for its send and copies it; a send
 * waits until it has been copied. Frees the op. */
static pl_comm_result p2p_complete(lcomm *c, p2p *o, cudaStream_t s)
{
    group *g = c->g;
    world *w = g->w;
    pl_comm_result r = PL_COMM_OK;
    pthread_mutex_lock(&w->lock);
    int me = g->wrank[c->rank];
    if (o->send)
        snprintf(w->doing[me], sizeof w->doing[0],
                 "waits in send to rank %d (%zu %s%s) for the matching receive", o->to, o->count,
                 pl_dtype_name(o->type), pl_s((long long)o->count));
    else
        snprintf(w->doing[me], sizeof w->doing[0],
                 "waits in recv from rank %d (%zu %s%s) for the matching send", o->from, o->count,
                 pl_dtype_name(o->type), pl_s((long long)o->count));
    if (!o->send) {
        /* wait for the send to be posted */
        double since = free_clock(w);
        unsigned long long seen = pl_watchdog_progress_count();
        p2p *m;
        while (!(m = find_match(w, o)) && !w->aborted)
            if (watch(w, &w->cv[me], &since, &seen) && !find_match(w, o)) {
                trip(w);
                break;
            }
        if (w->aborted || !m) {
            r = fail(c, w->aborted ? w->abort_code : PL_COMM_TIMEOUT, "%s", w->abort_msg);
        } else if (m->count != o->count || m->type != o->type) {
            snprintf(m->msg, sizeof m->msg,
                     "rank %d sends %zu %s%s to rank %d, but rank %d receives %zu %s%s from rank "
                     "%d",
                     m->from, m->count, pl_dtype_name(m->type), pl_s((long long)m->count), m->to,
                     o->to, o->count, pl_dtype_name(o->type), pl_s((long long)o->count), o->from);
            m->err = PL_COMM_MISMATCH;
            m->taken = 1;
            r = fail(c, PL_COMM_MISMATCH, "%s", m->msg);
            wake_all(w);
        } else {
            const void *src = m->sbuf;
            int sdev = m->device;
            cudaEvent_t ready = m->ready;
            pthread_mutex_unlock(&w->lock);
            cudaError_t e = cudaStreamWaitEvent(s, ready, 0);
            size_t bytes = o->count * pl_dtype_size((pl_dtype)o->type);
            if (!e && bytes) e = cudaMemcpyPeerAsync(o->rbuf, o->device, src, sdev, bytes, s);
            if (!e) e = cudaEventRecord(o->done, s);
            pthread_mutex_lock(&w->lock);
            if (e) {
                m->err = PL_COMM_CUDA_ERROR;
                snprintf(m->msg, sizeof m->msg, "rank %d's receive failed: %s", o->to,
                         cudaGetErrorName(e));
                r = cuda_fail(c, e, "recv");
            } else if (bytes) { /* an empty message moves nothing: not counted */
                w->ledger[o->from].bytes_sent += bytes;
                w->ledger[o->from].messages_sent++;
                w->ledger[o->to].bytes_received += bytes;
                w->ledger[o->to].messages_received++;
                w->link[o->from][o->to] += bytes;
            }
            m->done = o->done; /* the sender waits for the copy */
            m->taken = 1;
            o->done = NULL;
            wake_all(w);
        }
        remove_post(w, o);
    } else {
        r = wait_until(c, post_matched, o);
        if (!r && o->err) r = fail(c, o->err, "%s", o->msg);
        if (!r && o->done) {
            cudaEvent_t done = o->done;
            pthread_mutex_unlock(&w->lock);
            cudaError_t e = cudaStreamWaitEvent(s, done, 0);
            pthread_mutex_lock(&w->lock);
            if (e) r = cuda_fail(c, e, "send");
        }
        remove_post(w, o);
    }
    w->doing[me][0] = '\0';
    pthread_mutex_unlock(&w->lock);
    if (!r) {
        size_t bytes = o->count * pl_dtype_size((pl_dtype)o->type);
        char label[48];
        snprintf(label, sizeof label, o->send ? "send to %d" : "recv from %d",
                 o->send ? o->to : o->from);
        emit(c, &o->posted, o->send ? PL_EV_SEND : PL_EV_RECV, label, bytes,
             o->send ? o->to : o->from);
    }
    /* events: a send's `ready` and the receive's `done` (passed to the
     * send) are destroyed by the sender, once its stream waits for them */
    if (o->send) {
        cudaEventDestroy(o->ready);
        if (o->done) cudaEventDestroy(o->done);
    } else if (o->done)
        cudaEventDestroy(o->done);
    free(o);
    return r;
}

static pl_comm_result p2p_call(lcomm *c, int send, const void *buf, size_t count, pl_dtype t,
                               int peer, cudaStream_t s)
{
    p2p *o;
    pl_comm_result r = p2p_post(c, send, buf, count, t, peer, s, &o);
    if (r) return r;
    if (group_depth == 0) return p2p_complete(c, o, s);
    if (group_nops == group_cap) {
        int cap = group_cap ? 2 * group_cap : 8;
        struct queued *q = realloc(group_ops, (size_t)cap * sizeof *q);
        if (!q) return fail(c, PL_COMM_SYSTEM_ERROR, "out of memory");
        group_ops = q;
        group_cap = cap;
    }
    group_ops[group_nops++] = (struct queued){c, o, s};
    return PL_COMM_OK;
}

static pl_comm_result l_send(pl_comm *pc, const void *buf, size_t count, pl_dtype t, int peer,
                             cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    return p2p_call(c, 1, buf, count, t, peer, s);
}

static pl_comm_result l_recv(pl_comm *pc, void *buf, size_t count, pl_dtype t, int peer,
                             cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    return p2p_call(c, 0, buf, count, t, peer, s);
}

static pl_comm_result local_group_start(void)
{
    group_depth++;
    return PL_COMM_OK;
}

static pl_comm_result local_group_end(void)
{
    if (group_depth == 0) return PL_COMM_INVALID_ARGUMENT;
    if (--group_depth > 0) return PL_COMM_OK;
    /* everything was posted as it was called; receives first, so that every
     * send of the group finds its copy made */
    pl_comm_result first = PL_COMM_OK;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < group_nops; i++) {
            struct queued *q = &group_ops[i];
            if (!q->op || q->op->send != pass) continue;
            pl_comm_result r = p2p_complete(q->c, q->op, q->stream);
            q->op = NULL;
            if (r && !first) first = r;
        }
    free(group_ops); /* per thread: a rank thread may end after its last group */
    group_ops = NULL;
    group_nops = group_cap = 0;
    return first;
}

/* ---- the engine ------------------------------------------------------------------------ */

const pl_comm_engine pl_comm_local_engine = {
    .name = "local",
    .destroy_all = l_comm_destroy_all,
    .set_trace = l_comm_set_trace,
    .set_chunk_bytes = l_comm_set_chunk_bytes,
    .abort = l_comm_abort,
    .hold = l_comm_hold,
    .rank = l_comm_rank,
    .size = l_comm_size,
    .device = l_comm_device,
    .last_error = l_comm_last_error,
    .split = l_comm_split,
    .free = l_comm_free,
    .barrier = l_comm_barrier,
    .all_reduce = l_all_reduce,
    .broadcast = l_broadcast,
    .reduce = l_reduce,
    .all_gather = l_all_gather,
    .reduce_scatter = l_reduce_scatter,
    .all_to_all = l_all_to_all,
    .send = l_send,
    .recv = l_recv,
    .group_start = local_group_start,
    .group_end = local_group_end,
    .ledger = l_comm_ledger,
    .count_call = l_comm_count_call,
    .link_bytes = l_comm_link_bytes,
};
