/*
 * stream.c — streams, events and the op queue of the simulated runtime.
 *
 * Execution: each stream (the legacy default stream of every device too) has
 * one worker OS thread that runs its operations in order; a kernel runs on
 * its stream's worker through the SIMT emulator. Operations carry
 * dependencies (the previous work the legacy stream semantics or
 * cudaStreamWaitEvent impose), so distinct streams run concurrently and
 * exactly as ordered as CUDA promises.
 *
 * Modeled time is assigned when an operation is enqueued, from its duration
 * (cost.c): its start is the latest of the issuing host thread's clock, its
 * stream's clock, its dependencies' ends and the engine it needs (compute,
 * H2D copy, D2H copy, D2D copy, peer link); its end is start + duration.
 * Enqueue order is program order, so modeled time is deterministic whatever
 * the OS threads do.
 *
 * The runtime lock (simt_lock) guards queues, streams, events and clocks.
 * Also here: the op reports of simtSetOpHook and simtFlushOps. (A little
 * over 800 lines: the op, stream and event structures stay private to this
 * one file.)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "cost.h"
#include "handles.h"
#include "stream.h"

#define REPORT_CAP 2048

enum op_kind { OP_KERNEL, OP_COPY, OP_MEMSET, OP_MARKER };

typedef struct simt_op simt_op;
struct simt_op {
    enum op_kind kind;
    int refs;
    int done;
    cudaError_t err;
    int device;
    simt_op **deps;
    int ndeps, capdeps;
    double m_start, m_end;        /* modeled seconds */
    double w_start, w_end;        /* wall seconds (CLOCK_MONOTONIC): execution */
    int engine;                   /* enum simt_engine it was modeled on */
    int peer_device;              /* the other device of a peer copy, else -1 */
    int stream;                   /* its stream's number (simt_op_record.stream) */
    unsigned long long seq;       /* its place in a lazy legacy stream (1, 2...), else 0 */
    double flops, declared_bytes; /* a kernel's declared work (simtLaunchCost) */
    simt_op *next;                /* in its stream's queue */
    int eager;                    /* run by the thread that queued it (run_eager) */
    int at;                       /* a marker at a given modeled time (simt_event_record_at) */
    simt_launch launch;           /* OP_KERNEL */
    void *dst;                    /* OP_COPY, OP_MEMSET */
    const void *src;
    size_t bytes;
    int value;
    void *staging; /* owned copy of a pageable source */
};

#define STREAM_MAGIC 0x5354524du
#define EVENT_MAGIC 0x4556454eu

struct simt_stream {
    unsigned magic;
    int device;
    unsigned flags;
    int legacy;
    int destroyed;
    int worker_started;
    int priority; /* 0, or higher priority below 0 (cudaStreamCreateWithPriority) */
    int number;   /* 0: the legacy default stream; then 1, 2... in creation order */
    pthread_t worker;
    pthread_cond_t cv; /* work arrived */
    simt_op *head, *tail;
    simt_op *last; /* last enqueued op (a reference), for dependencies */
    double clock;  /* modeled end of the last enqueued op */
    /* simtSetLazyLegacy (the legacy stream): its ops queued so far, and the
     * last of them someone waits for; the worker runs none after it */
    unsigned long long queued, wanted;
    struct simt_stream *next;
};

struct simt_event {
    unsigned magic;
    int device;
    unsigned flags;
    simt_op *op; /* the marker of the last record, or NULL */
    struct simt_event *next;
};

typedef struct device {
    struct simt_stream legacy;
    struct simt_stream *streams; /* user streams, live */
    struct simt_event *events;
    int zombies; /* destroyed streams with work still pending */
    /* broadcast when an op of this device finishes (and when a destroyed
     * stream's worker ends): whoever waits for one of its ops, a stream of
     * another device too, sleeps here, so a finished op wakes only the
     * threads that wait for this device's work */
    pthread_cond_t done_cv;
    cudaError_t sticky;
    char report[REPORT_CAP];
    double engine_free[ENG_COUNT];
} device;

static device D[SIMT_MAX_DEVICES];

static _Thread_local double host_clock; /* modeled seconds */
/* simtSetLazyLegacy: the legacy stream runs an op only once something waits
 * for it (or for a later one): a host synchronisation, a stream that
 * depends on it, a query. SIMT_LAZY_LEGACY sets it at start. */
static int lazy_legacy;
/* simtSetOpHook: the calling thread's hook, and the ops it enqueued that
 * have not been reported yet (each holds a reference), in program order. */
static _Thread_local simt_op_hook op_hook;
static _Thread_local void *op_hook_user;
static _Thread_local simt_op **pending;
static _Thread_local int npending, cap_pending;

static double now_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double maxd(double a, double b) { return a > b ? a : b; }

void simt_streams_init(int ndev)
{
    for (int d = 0; d < SIMT_MAX_DEVICES; d++) pthread_cond_init(&D[d].done_cv, NULL);
    for (int d = 0; d < ndev; d++) {
        device *dv = &D[d];
        dv->legacy.magic = STREAM_MAGIC;
        dv->legacy.device = d;
        dv->legacy.legacy = 1;
        pthread_cond_init(&dv->legacy.cv, NULL);
    }
    lazy_legacy = simt_cfg.lazy_legacy;
}

void simt_set_lazy_legacy(int on)
{
    pthread_mutex_lock(&simt_lock);
    lazy_legacy = on != 0;
    if (!lazy_legacy) /* what it held back runs now */
        for (int d = 0; d < simt_cfg.ndev; d++) {
            struct simt_stream *l = &D[d].legacy;
            l->wanted = l->queued;
            pthread_cond_signal(&l->cv);
        }
    pthread_mutex_unlock(&simt_lock);
}

cudaError_t simt_sticky(int dev) { return D[dev].sticky; }

const char *simt_fault_report(int dev) { return D[dev].report; }

/* ---- operations and streams ------------------------------------------- */

static void op_unref(simt_op *op)
{
    if (!op || --op->refs > 0) return;
    for (int i = 0; i < op->ndeps; i++) op_unref(op->deps[i]);
    free(op->deps);
    free(op->launch.args);
    free(op->staging);
    free(op);
}

static simt_op *op_new(enum op_kind kind, int dev)
{
    simt_op *op = calloc(1, sizeof *op);
    if (!op) return NULL;
    op->kind = kind;
    op->device = dev;
    op->peer_device = -1;
    op->refs = 1; /* the queue's */
    return op;
}

static int op_depend(simt_op *op, simt_op *dep)
{
    if (!dep || dep->done) return 0;
    if (op->ndeps == op->capdeps) {
        int cap = op->capdeps ? op->capdeps * 2 : 4;
        simt_op **d = realloc(op->deps, (size_t)cap * sizeof *d);
        if (!d) return -1;
        op->deps = d;
        op->capdeps = cap;
    }
    dep->refs++;
    op->deps[op->ndeps++] = dep;
    return 0;
}

/* Someone waits for op: a lazy legacy stream runs it and what precedes it.
 * the runtime lock held. */
static void want(simt_op *op)
{
    if (!op || op->done || !op->seq) return;
    struct simt_stream *l = &D[op->device].legacy;
    if (op->seq > l->wanted) {
        l->wanted = op->seq;
        pthread_cond_signal(&l->cv);
    }
}

static void execute(simt_op *op, device *dv)
{
    if (dv->sticky) { /* the context is broken: nothing more runs */
        op->err = dv->sticky;
        return;
    }
    switch (op->kind) {
    case OP_KERNEL: {
        char report[REPORT_CAP];
        cudaError_t e = simt_emu_run(&op->launch, report, sizeof report);
        if (e != cudaSuccess) {
            op->err = e;
            pthread_mutex_lock(&simt_lock);
            if (!dv->sticky) {
                dv->sticky = e;
                snprintf(dv->report, sizeof dv->report, "%s", report);
            }
            pthread_mutex_unlock(&simt_lock);
            if (!simt_cfg.quiet) fprintf(stderr, "simt: %s\n", report);
        }
        break;
    }
    case OP_COPY: /* no dst: a transfer on the modeled clock only (simt_model_transfer) */
        if (op->dst) memmove(op->dst, op->staging ? op->staging : op->src, op->bytes);
        break;
    case OP_MEMSET:
        memset(op->dst, op->value, op->bytes);
        break;
    case OP_MARKER:
        break;
    }
}

/* The end of op, the head of s: done at wall times w0..w, off the queue
 * (which drops the queue's reference), its waiters woken. the runtime lock
 * held. */
static void finish(struct simt_stream *s, simt_op *op, double w0, double w)
{
    op->w_start = w0;
    op->w_end = w;
    op->done = 1;
    atomic_fetch_add_explicit(&simt_progress_count, 1, memory_order_relaxed);
    /* Done: what it waited for no longer matters. Dropping the
     * dependencies now keeps a held op (a pending report) from keeping
     * the whole chain of earlier ops alive. */
    for (int i = 0; i < op->ndeps; i++) op_unref(op->deps[i]);
    op->ndeps = 0;
    s->head = op->next;
    if (!s->head) s->tail = NULL;
    /* the worker skipped what came after, or waits to end a destroyed
     * stream (an idle worker is not woken for nothing) */
    if (op->eager && (s->head || s->destroyed)) pthread_cond_signal(&s->cv);
    pthread_cond_broadcast(&D[s->device].done_cv);
    op_unref(op);
}

/* Eager execution. An op that nothing is ahead of on its stream (the
 * worker is idle), whose dependencies are all done, and whose work is
 * bounded (an event's marker, a copy, a memset, a kernel launched after
 * simtLaunchEager) runs at once on the thread that queues it: the same
 * bytes the worker would move, the same modeled times (assigned before, at
 * enqueue), but no hand-off to the worker and back, which is most of a
 * small transfer's wall time on a busy machine. What is queued behind it
 * meanwhile waits for it as for any op. */
static int eager_ok(const struct simt_stream *s, const simt_op *op)
{
    if (s->head != op || op->seq || s->destroyed || simt_cfg.no_eager) return 0;
    if (op->kind == OP_KERNEL && !op->launch.eager) return 0;
    for (int i = 0; i < op->ndeps; i++)
        if (!op->deps[i]->done) return 0;
    return 1;
}

/* Runs op (eager_ok) on this thread: outside the runtime lock unless it
 * has nothing to move. the runtime lock held. */
static void run_eager(struct simt_stream *s, simt_op *op)
{
    op->eager = 1;
    op->refs++; /* finish drops the queue's */
    double w0 = now_wall(), w = w0;
    if (op->kind == OP_KERNEL || ((op->kind == OP_COPY || op->kind == OP_MEMSET) && op->dst)) {
        pthread_mutex_unlock(&simt_lock);
        execute(op, &D[s->device]);
        w = now_wall();
        pthread_mutex_lock(&simt_lock);
    } else
        execute(op, &D[s->device]);
    finish(s, op, w0, w);
    op_unref(op);
}

static void *worker_main(void *arg)
{
    struct simt_stream *s = arg;
    device *dv = &D[s->device];
    pthread_mutex_lock(&simt_lock);
    for (;;) {
        /* an eager head is its queuing thread's to run (run_eager) */
        while (s->head ? s->head->eager || (s->head->seq && s->head->seq > s->wanted)
                       : !s->destroyed)
            pthread_cond_wait(&s->cv, &simt_lock);
        if (!s->head) break; /* destroyed and drained */
        simt_op *op = s->head;
        for (int i = 0; i < op->ndeps; i++) want(op->deps[i]);
        for (int i = 0; i < op->ndeps; i++)
            while (!op->deps[i]->done)
                pthread_cond_wait(&D[op->deps[i]->device].done_cv, &simt_lock);
        pthread_mutex_unlock(&simt_lock);
        double w0 = now_wall();
        execute(op, dv);
        double w = now_wall();
        pthread_mutex_lock(&simt_lock);
        finish(s, op, w0, w);
    }
    /* A destroyed stream frees itself once its work is done. */
    op_unref(s->last);
    dv->zombies--;
    pthread_cond_broadcast(&dv->done_cv);
    pthread_mutex_unlock(&simt_lock);
    pthread_cond_destroy(&s->cv);
    free(s);
    simt_emu_thread_exit();
    return NULL;
}

/* The streams and events alive now, on every device (the runtime lock). */
static simt_handle_set live_streams, live_events;

static struct simt_stream *resolve_stream(cudaStream_t st, int dev, int *bad)
{
    *bad = 0;
    if (!st || st == cudaStreamLegacy) return &D[dev].legacy;
    if (simt_handles_has(&live_streams, st)) return st;
    *bad = 1;
    return NULL;
}

/* Queues op on s with its modeled duration on `engine`. the runtime lock held.
 * Takes over the caller's reference to op. */
static cudaError_t enqueue(struct simt_stream *s, simt_op *op, int engine, double duration)
{
    device *dv = &D[s->device];
    op->stream = s->number;
    if (s->legacy) {
        s->queued++;
        if (lazy_legacy)
            op->seq = s->queued;
        else
            s->wanted = s->queued;
    }
    double start = maxd(maxd(host_clock, s->clock), op->m_start); /* m_start: a lower bound */
    int fail = op_depend(op, s->last);
    for (int i = 0; i < op->ndeps; i++) start = maxd(start, op->deps[i]->m_end);
    /* Legacy default stream: it waits for every blocking stream of its
     * device, and every blocking stream waits for it. */
    if (s->legacy) {
        for (struct simt_stream *b = dv->streams; b; b = b->next)
            if (!(b->flags & cudaStreamNonBlocking)) {
                fail |= op_depend(op, b->last);
                start = maxd(start, b->clock);
            }
    } else if (!(s->flags & cudaStreamNonBlocking)) {
        fail |= op_depend(op, dv->legacy.last);
        start = maxd(start, dv->legacy.clock);
    }
    if (fail) {
        op_unref(op);
        return cudaErrorMemoryAllocation;
    }
    if (engine != ENG_NONE) {
        start = maxd(start, dv->engine_free[engine]);
        dv->engine_free[engine] = start + duration;
    }
    if (op->at) /* runs after the stream's work, but is on the modeled clock at m_start */
        start = maxd(host_clock, op->m_start);
    op->m_start = start;
    op->m_end = start + duration;
    op->engine = engine;
    s->clock = maxd(s->clock, op->m_end);
    if (!s->worker_started) {
        if (pthread_create(&s->worker, NULL, worker_main, s) != 0) {
            op_unref(op);
            return cudaErrorMemoryAllocation;
        }
        pthread_detach(s->worker);
        s->worker_started = 1;
    }
    /* queued for sure now: hold it for its report (simtSetOpHook) */
    if (op_hook && op->kind != OP_MARKER) {
        if (npending == cap_pending) {
            int cap = cap_pending ? 2 * cap_pending : 64;
            simt_op **p = realloc(pending, (size_t)cap * sizeof *p);
            if (p) {
                pending = p;
                cap_pending = cap;
            }
        }
        if (npending < cap_pending) { /* out of memory: the op goes unreported */
            op->refs++;
            pending[npending++] = op;
        }
    }
    op->refs++; /* s->last */
    op_unref(s->last);
    s->last = op;
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    if (eager_ok(s, op))
        run_eager(s, op);
    else
        pthread_cond_signal(&s->cv);
    return cudaSuccess;
}

/* Waits for op (the runtime lock held). The wait releases the lock, and meanwhile the
 * op's stream may move on and drop it: hold a reference while waiting. */
static void wait_op(simt_op *op)
{
    if (!op) return;
    op->refs++;
    want(op);
    while (!op->done) pthread_cond_wait(&D[op->device].done_cv, &simt_lock);
    op_unref(op);
}

/* Waits for everything queued on the device, destroyed streams included,
 * and (advance) moves the host's modeled clock to the device's. the runtime lock held. */
static void drain_device(int d, int advance)
{
    device *dv = &D[d];
    /* The streams' last ops and clocks now: waiting releases the lock, and
     * streams may be created, destroyed or moved on meanwhile. */
    int n = 1;
    for (struct simt_stream *s = dv->streams; s; s = s->next) n++;
    simt_op *stack_ops[64], **ops = n <= 64 ? stack_ops : malloc((size_t)n * sizeof *ops);
    double t = dv->legacy.clock;
    int k = 0;
    if (ops) {
        ops[k++] = dv->legacy.last;
        for (struct simt_stream *s = dv->streams; s; s = s->next) {
            ops[k++] = s->last;
            t = maxd(t, s->clock);
        }
        for (int i = 0; i < k; i++)
            if (ops[i]) ops[i]->refs++;
        for (int i = 0; i < k; i++) {
            wait_op(ops[i]);
            op_unref(ops[i]);
        }
        if (ops != stack_ops) free(ops);
    } else /* out of memory: wait one stream at a time, legacy first */
        wait_op(dv->legacy.last);
    if (advance) host_clock = maxd(host_clock, t);
    while (dv->zombies > 0) pthread_cond_wait(&dv->done_cv, &simt_lock);
}

static void sync_device(int d) { drain_device(d, 1); }

void simt_device_drain(int d, int advance) { drain_device(d, advance); }

void simt_device_sync(int d) { sync_device(d); }

/* The smallest number from 1 that no live stream of the device has: a
 * program's streams are numbered 1, 2... in creation order, and a
 * destroyed stream's number is given again. the runtime lock held. */
static int free_stream_number(const device *dv)
{
    for (int k = 1;; k++) {
        int used = 0;
        for (const struct simt_stream *t = dv->streams; t && !used; t = t->next)
            used = t->number == k;
        if (!used) return k;
    }
}

struct simt_stream *simt_stream_resolve(cudaStream_t st, int dev, int *bad)
{
    return resolve_stream(st, dev, bad);
}

int simt_stream_device(const struct simt_stream *s) { return s->device; }

int simt_stream_priority(const struct simt_stream *s) { return s->priority; }

/* ---- queueing copies, memsets and kernels ---------------------------------- */

cudaError_t simt_queue_copy(struct simt_stream *s, void *dst, const void *src, size_t n, int engine,
                            double duration, int peer, int stage, int wait)
{
    simt_op *op = op_new(OP_COPY, s->device);
    if (!op) return cudaErrorMemoryAllocation;
    op->dst = dst;
    op->src = src;
    op->bytes = n;
    op->peer_device = peer;
    /* A pageable source is staged now, so the caller may reuse it as soon
     * as the call returns (as CUDA does). */
    if (stage && (op->staging = malloc(n))) memcpy(op->staging, src, n);
    wait = wait || (stage && !op->staging);
    op->refs++;
    cudaError_t r = enqueue(s, op, engine, duration);
    if (r == cudaSuccess && wait) {
        wait_op(op);
        host_clock = maxd(host_clock, op->m_end);
        r = op->err;
    }
    op_unref(op);
    return r;
}

cudaError_t simt_queue_memset(struct simt_stream *s, void *p, int value, size_t n, double duration)
{
    simt_op *op = op_new(OP_MEMSET, s->device);
    if (!op) return cudaErrorMemoryAllocation;
    op->dst = p;
    op->bytes = n;
    op->value = value;
    return enqueue(s, op, ENG_COMPUTE, duration);
}

cudaError_t simt_queue_kernel(struct simt_stream *s, simt_launch launch, const void *args,
                              size_t args_size, double flops, double bytes, int engine,
                              double duration)
{
    simt_op *op = op_new(OP_KERNEL, launch.device);
    void *copy = malloc(args_size ? args_size : 1);
    if (!op || !copy) {
        free(op);
        free(copy);
        return cudaErrorMemoryAllocation;
    }
    memcpy(copy, args, args_size);
    op->launch = launch;
    op->launch.args = copy;
    op->launch.args_size = args_size;
    op->flops = flops;
    op->declared_bytes = bytes;
    return enqueue(s, op, engine, duration);
}

/* ---- streams --------------------------------------------------------------- */

cudaError_t simt_stream_create(int dev, unsigned flags, cudaStream_t *ps)
{
    struct simt_stream *s = calloc(1, sizeof *s);
    if (!s) return cudaErrorMemoryAllocation;
    s->magic = STREAM_MAGIC;
    s->device = dev;
    s->flags = flags;
    pthread_cond_init(&s->cv, NULL);
    pthread_mutex_lock(&simt_lock);
    if (simt_handles_add(&live_streams, s) != 0) {
        pthread_mutex_unlock(&simt_lock);
        pthread_cond_destroy(&s->cv);
        free(s);
        return cudaErrorMemoryAllocation;
    }
    s->clock = host_clock;
    s->number = free_stream_number(&D[dev]);
    s->next = D[dev].streams;
    D[dev].streams = s;
    pthread_mutex_unlock(&simt_lock);
    *ps = s;
    return cudaSuccess;
}

void simt_stream_set_priority(cudaStream_t s, int priority)
{
    pthread_mutex_lock(&simt_lock);
    s->priority = priority > 0                        ? 0
                  : priority < SIMT_PRIORITY_GREATEST ? SIMT_PRIORITY_GREATEST
                                                      : priority;
    pthread_mutex_unlock(&simt_lock);
}

cudaError_t simt_stream_get_priority(cudaStream_t st, int dev, int *priority)
{
    pthread_mutex_lock(&simt_lock);
    int bad;
    struct simt_stream *s = resolve_stream(st, dev, &bad);
    if (!bad && priority) *priority = s->priority;
    pthread_mutex_unlock(&simt_lock);
    return bad || !priority ? (bad ? cudaErrorInvalidResourceHandle : cudaErrorInvalidValue)
                            : cudaSuccess;
}

cudaError_t simt_stream_destroy(cudaStream_t st, int dev)
{
    pthread_mutex_lock(&simt_lock);
    int bad;
    struct simt_stream *s = resolve_stream(st, dev, &bad);
    if (bad || s->legacy) {
        pthread_mutex_unlock(&simt_lock);
        return cudaErrorInvalidResourceHandle;
    }
    device *dv = &D[s->device];
    for (struct simt_stream **pp = &dv->streams; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    simt_handles_remove(&live_streams, s);
    s->magic = 0;
    if (s->worker_started) { /* the worker drains the queue, then frees s */
        s->destroyed = 1;
        dv->zombies++;
        pthread_cond_signal(&s->cv);
    } else {
        pthread_cond_destroy(&s->cv);
        free(s);
    }
    pthread_mutex_unlock(&simt_lock);
    return cudaSuccess;
}

static cudaError_t stream_sync_locked(struct simt_stream *s)
{
    wait_op(s->last);
    host_clock = maxd(host_clock, s->clock);
    return D[s->device].sticky;
}

cudaError_t simt_stream_sync(cudaStream_t st, int dev)
{
    pthread_mutex_lock(&simt_lock);
    int bad;
    struct simt_stream *s = resolve_stream(st, dev, &bad);
    cudaError_t e = bad ? cudaErrorInvalidResourceHandle : stream_sync_locked(s);
    pthread_mutex_unlock(&simt_lock);
    simtFlushOps();
    return e;
}

cudaError_t simt_stream_sync_quiet(cudaStream_t st, int dev)
{
    pthread_mutex_lock(&simt_lock);
    int bad;
    struct simt_stream *s = resolve_stream(st, dev, &bad);
    if (!bad) wait_op(s->last);
    cudaError_t e = bad ? cudaErrorInvalidResourceHandle : D[s->device].sticky;
    pthread_mutex_unlock(&simt_lock);
    simtFlushOps();
    return e;
}

cudaError_t simt_stream_query(cudaStream_t st, int dev)
{
    pthread_mutex_lock(&simt_lock);
    int bad;
    struct simt_stream *s = resolve_stream(st, dev, &bad);
    if (!bad) want(s->last); /* a loop that polls gets there */
    cudaError_t e = bad ? cudaErrorInvalidResourceHandle
                        : (s->last && !s->last->done ? cudaErrorNotReady : cudaSuccess);
    pthread_mutex_unlock(&simt_lock);
    return e;
}

cudaError_t simt_device_synchronize(int dev)
{
    pthread_mutex_lock(&simt_lock);
    sync_device(dev);
    cudaError_t e = D[dev].sticky;
    pthread_mutex_unlock(&simt_lock);
    simtFlushOps();
    return e;
}

double simt_modeled_now(void)
{
    pthread_mutex_lock(&simt_lock);
    double t = host_clock;
    for (int d = 0; d < simt_cfg.ndev; d++) {
        device *dv = &D[d];
        t = maxd(t, dv->legacy.clock);
        for (struct simt_stream *s = dv->streams; s; s = s->next) t = maxd(t, s->clock);
        for (int e = 0; e < ENG_COUNT; e++) t = maxd(t, dv->engine_free[e]);
    }
    pthread_mutex_unlock(&simt_lock);
    return t;
}

void simtHostClockAdvance(double t) { host_clock = maxd(host_clock, t); }

double simt_stream_modeled_time(cudaStream_t st, int dev)
{
    pthread_mutex_lock(&simt_lock);
    int bad;
    struct simt_stream *s = resolve_stream(st, dev, &bad);
    double t = bad ? 0 : s->clock;
    pthread_mutex_unlock(&simt_lock);
    return t;
}

cudaError_t simt_model_transfer(cudaStream_t st, int dev, size_t n, int sd, int dd,
                                double not_before, int peer)
{
    pthread_mutex_lock(&simt_lock);
    int bad;
    struct simt_stream *s = resolve_stream(st, dev, &bad);
    cudaError_t r = cudaSuccess;
    simt_op *op = bad ? NULL : op_new(n ? OP_COPY : OP_MARKER, s->device);
    if (bad)
        r = cudaErrorInvalidResourceHandle;
    else if (!op)
        r = cudaErrorMemoryAllocation;
    else if (!n) { /* the wait alone */
        op->m_start = not_before;
        r = enqueue(s, op, ENG_NONE, 0);
    } else {
        int engine;
        double duration = simt_cost_peer(simt_cfg.preset, n, sd, dd, peer != 0, &engine);
        op->bytes = n; /* reported; nothing is copied (no dst) */
        op->peer_device = peer >= 0 ? (s->device == dd ? sd : dd) : -1;
        op->m_start = not_before; /* a lower bound (enqueue) */
        r = enqueue(s, op, engine, duration);
    }
    pthread_mutex_unlock(&simt_lock);
    return r;
}

/* ---- events ---------------------------------------------------------- */

static struct simt_event *find_event(cudaEvent_t ev)
{
    return simt_handles_has(&live_events, ev) ? ev : NULL;
}

cudaError_t simt_event_create(int dev, unsigned flags, cudaEvent_t *pe)
{
    struct simt_event *e = calloc(1, sizeof *e);
    if (!e) return cudaErrorMemoryAllocation;
    e->magic = EVENT_MAGIC;
    e->device = dev;
    e->flags = flags;
    pthread_mutex_lock(&simt_lock);
    if (simt_handles_add(&live_events, e) != 0) {
        pthread_mutex_unlock(&simt_lock);
        free(e);
        return cudaErrorMemoryAllocation;
    }
    e->next = D[dev].events;
    D[dev].events = e;
    pthread_mutex_unlock(&simt_lock);
    *pe = e;
    return cudaSuccess;
}

cudaError_t simt_event_destroy(cudaEvent_t ev)
{
    pthread_mutex_lock(&simt_lock);
    struct simt_event *e = find_event(ev);
    if (!e) {
        pthread_mutex_unlock(&simt_lock);
        return cudaErrorInvalidResourceHandle;
    }
    for (struct simt_event **pp = &D[e->device].events; *pp; pp = &(*pp)->next)
        if (*pp == e) {
            *pp = e->next;
            break;
        }
    simt_handles_remove(&live_events, e);
    op_unref(e->op);
    e->magic = 0;
    free(e);
    pthread_mutex_unlock(&simt_lock);
    return cudaSuccess;
}

/* cudaEventRecord; at >= 0: on the modeled clock at `at` (simt_event_record_at) */
static cudaError_t event_record(cudaEvent_t ev, cudaStream_t st, int dev, double at)
{
    pthread_mutex_lock(&simt_lock);
    struct simt_event *e = find_event(ev);
    int bad;
    struct simt_stream *s = resolve_stream(st, dev, &bad);
    cudaError_t r = cudaSuccess;
    if (!e || bad || s->device != e->device)
        r = cudaErrorInvalidResourceHandle;
    else if (at > s->clock)
        r = cudaErrorInvalidValue;
    else {
        simt_op *op = op_new(OP_MARKER, s->device);
        if (!op)
            r = cudaErrorMemoryAllocation;
        else {
            if (at >= 0) {
                op->at = 1;
                op->m_start = at;
            }
            op->refs++; /* the event's */
            r = enqueue(s, op, ENG_NONE, 0);
            if (r == cudaSuccess) {
                op_unref(e->op);
                e->op = op;
            } else
                op_unref(op);
        }
    }
    pthread_mutex_unlock(&simt_lock);
    return r;
}

cudaError_t simt_event_record(cudaEvent_t ev, cudaStream_t st, int dev)
{
    return event_record(ev, st, dev, -1);
}

cudaError_t simt_event_record_at(cudaEvent_t ev, cudaStream_t st, int dev, double t)
{
    return event_record(ev, st, dev, t < 0 ? 0 : t);
}

cudaError_t simt_stream_wait_event(cudaStream_t st, cudaEvent_t ev, unsigned flags, int dev)
{
    pthread_mutex_lock(&simt_lock);
    struct simt_event *e = find_event(ev);
    int bad;
    struct simt_stream *s = resolve_stream(st, dev, &bad);
    cudaError_t r = cudaSuccess;
    if (!e || bad)
        r = cudaErrorInvalidResourceHandle;
    else if (flags != 0)
        r = cudaErrorInvalidValue;
    else if (e->op) { /* an event never recorded is complete: nothing to wait for */
        simt_op *op = op_new(OP_MARKER, s->device);
        if (!op || op_depend(op, e->op) != 0)
            r = cudaErrorMemoryAllocation;
        else {
            op->m_start = e->op->m_end; /* also when the event has completed already */
            r = enqueue(s, op, ENG_NONE, 0);
        }
    }
    pthread_mutex_unlock(&simt_lock);
    return r;
}

cudaError_t simt_event_sync(cudaEvent_t ev)
{
    pthread_mutex_lock(&simt_lock);
    struct simt_event *e = find_event(ev);
    cudaError_t r = cudaSuccess;
    if (!e)
        r = cudaErrorInvalidResourceHandle;
    else if (e->op) {
        wait_op(e->op);
        host_clock = maxd(host_clock, e->op->m_end);
        r = D[e->device].sticky;
    }
    pthread_mutex_unlock(&simt_lock);
    simtFlushOps();
    return r;
}

cudaError_t simt_event_query(cudaEvent_t ev)
{
    pthread_mutex_lock(&simt_lock);
    struct simt_event *e = find_event(ev);
    if (e) want(e->op); /* a loop that polls gets there */
    cudaError_t r = !e ? cudaErrorInvalidResourceHandle
                       : (e->op && !e->op->done ? cudaErrorNotReady : cudaSuccess);
    pthread_mutex_unlock(&simt_lock);
    return r;
}

cudaError_t simt_event_elapsed(float *ms, cudaEvent_t a, cudaEvent_t b, int measured)
{
    pthread_mutex_lock(&simt_lock);
    struct simt_event *s = find_event(a), *e = find_event(b);
    cudaError_t r = cudaSuccess;
    if (!s || !e || !s->op || !e->op || ((s->flags | e->flags) & cudaEventDisableTiming))
        r = cudaErrorInvalidResourceHandle;
    else if (!s->op->done || !e->op->done)
        r = cudaErrorNotReady;
    else
        *ms = measured ? (float)((e->op->w_end - s->op->w_end) * 1e3)
                       : (float)((e->op->m_end - s->op->m_end) * 1e3);
    pthread_mutex_unlock(&simt_lock);
    return r;
}

/* ---- op reports (simtSetOpHook) ----------------------------------------- */

static void fill_record(const simt_op *op, simt_op_record *rec)
{
    *rec = (simt_op_record){.kind = op->kind == OP_KERNEL ? SIMT_OP_KERNEL
                                    : op->kind == OP_COPY ? SIMT_OP_COPY
                                                          : SIMT_OP_MEMSET,
                            .device = op->device,
                            .peer_device = op->peer_device,
                            .stream = op->stream,
                            .bytes = op->kind == OP_KERNEL ? op->declared_bytes : (double)op->bytes,
                            .flops = op->flops,
                            .start = op->w_start,
                            .end = op->w_end,
                            .modeled_start = op->m_start,
                            .modeled_end = op->m_end,
                            .error = op->err};
    rec->name = op->kind == OP_KERNEL   ? op->launch.kernel->name
                : op->kind == OP_MEMSET ? "memset"
                                        : simt_engine_label(op->engine);
}

void simtSetOpHook(simt_op_hook hook, void *user)
{
    simtFlushOps();
    if (npending) { /* left unfinished: dropped unreported */
        pthread_mutex_lock(&simt_lock);
        for (int i = 0; i < npending; i++) op_unref(pending[i]);
        pthread_mutex_unlock(&simt_lock);
        npending = 0;
    }
    if (!hook) {
        free(pending);
        pending = NULL;
        cap_pending = 0;
    }
    op_hook = hook;
    op_hook_user = user;
}

int simtFlushOps(void)
{
    if (!op_hook || !npending) return 0;
    int reported = 0;
    while (npending) {
        /* Report the finished prefix, in program order, in batches: the
         * hook runs without the runtime lock held. */
        enum { BATCH = 32 };
        simt_op_record rec[BATCH];
        int n = 0;
        pthread_mutex_lock(&simt_lock);
        while (n < BATCH && n < npending && pending[n]->done) {
            fill_record(pending[n], &rec[n]);
            n++;
        }
        for (int i = 0; i < n; i++) op_unref(pending[i]);
        memmove(pending, pending + n, (size_t)(npending - n) * sizeof *pending);
        npending -= n;
        pthread_mutex_unlock(&simt_lock);
        for (int i = 0; i < n; i++) op_hook(&rec[i], op_hook_user);
        reported += n;
        if (n < BATCH) break; /* the next one is still running */
    }
    return reported;
}

/* ---- reset ------------------------------------------------------------- */

void simt_device_reset_queues(int dev)
{
    device *dv = &D[dev];
    while (dv->events) {
        struct simt_event *ev = dv->events;
        dv->events = ev->next;
        simt_handles_remove(&live_events, ev);
        op_unref(ev->op);
        free(ev);
    }
    while (dv->streams) {
        struct simt_stream *s = dv->streams;
        dv->streams = s->next;
        simt_handles_remove(&live_streams, s);
        s->magic = 0;
        if (s->worker_started) {
            s->destroyed = 1;
            dv->zombies++;
            pthread_cond_signal(&s->cv);
        } else {
            pthread_cond_destroy(&s->cv);
            free(s);
        }
    }
    while (dv->zombies > 0) pthread_cond_wait(&dv->done_cv, &simt_lock);
    dv->sticky = cudaSuccess;
    dv->report[0] = '\0';
}
