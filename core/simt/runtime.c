/*
 * runtime.c — the simulated CUDA runtime: devices, memory, streams, events,
 * errors and the modeled clock. See <cuda_runtime.h> (core/simt/cudart) for
 * the semantics followed (core/simt/cudart) and simt/simt.h for the simulator-only calls.
 *
 * Execution: each stream (the legacy default stream of every device too) has
 * one worker OS thread that runs its operations in order; a kernel runs on
 * its stream's worker through the SIMT emulator. Operations carry
 * dependencies (the previous work the legacy stream semantics or
 * cudaStreamWaitEvent impose), so distinct streams run concurrently and
 * exactly as ordered as CUDA promises.
 *
 * Modeled time is assigned when an operation is enqueued, from its declared
 * work and the device's preset: its start is the latest of the issuing host
 * thread's clock, its stream's clock, its dependencies' ends and the
 * engine it needs (compute, H2D copy, D2H copy, D2D copy, peer link); its end
 * is start + duration. Enqueue order is program order, so modeled time is
 * deterministic whatever the OS threads do.
 *
 * One mutex (G.lock) guards queues, streams, events and clocks; the device
 * allocation table has its own rwlock because every kernel memory access
 * may consult it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define MAX_DEVICES 64
#define DEFAULT_DEVICES 8
#define DEFAULT_SHMEM_LIMIT (48u * 1024u) /* [CPG] static + dynamic without opt-in */
#define REPORT_CAP 2048

enum engine {
    ENG_COMPUTE,
    ENG_H2D,
    ENG_D2H,
    ENG_D2D,
    ENG_PEER,       /* NVLink (or PCIe) within a node */
    ENG_NET,        /* the GPU's network port, between nodes */
    ENG_COMPUTE_HI, /* kernels of high-priority streams: on the SMs the others leave */
    ENG_COUNT,
    ENG_NONE = -1
};
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
    int engine;                   /* enum engine it was modeled on */
    int peer_device;              /* the other device of a peer copy, else -1 */
    int stream;                   /* its stream's number (simt_op_record.stream) */
    double flops, declared_bytes; /* a kernel's declared work (simtLaunchCost) */
    simt_op *next;                /* in its stream's queue */
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
    struct simt_stream *next;
};

struct simt_event {
    unsigned magic;
    int device;
    unsigned flags;
    simt_op *op; /* the marker of the last record, or NULL */
    struct simt_event *next;
};

typedef struct alloc {
    uintptr_t base;
    size_t size;   /* as requested */
    size_t mapped; /* pages mapped */
    int device;
} alloc;

typedef struct range {
    uintptr_t base;
    size_t len;
} range;

typedef struct device {
    int initialised;
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
    size_t used;
    double engine_free[ENG_COUNT];
    unsigned char peer_enabled[MAX_DEVICES];
    uintptr_t arena;  /* this device's part of the arena */
    uintptr_t cursor; /* first never-used byte */
    range *free_ranges;
    int nfree, capfree;
} device;

typedef struct func_attr {
    const void *fn;
    int max_dynamic_shared;
} func_attr;

static struct {
    pthread_once_t once;
    cudaError_t init_err;
    pthread_mutex_t lock;
    int ndev;
    const simt_preset *preset;
    size_t capacity;
    size_t span; /* arena bytes per device */
    device dev[MAX_DEVICES];
    pthread_rwlock_t alloc_lock;
    alloc *allocs; /* sorted by base */
    int nalloc, capalloc;
    void **pinned; /* sorted */
    size_t *pinned_size;
    int npinned, cappinned;
    func_attr *attrs;
    int nattrs;
    int quiet;
} G = {.once = PTHREAD_ONCE_INIT,
       .lock = PTHREAD_MUTEX_INITIALIZER,
       .alloc_lock = PTHREAD_RWLOCK_INITIALIZER};

uintptr_t simt_arena_lo;
uintptr_t simt_arena_span;
atomic_uint simt_alloc_generation;

static _Thread_local int cur_dev;
static _Thread_local cudaError_t last_err;
static _Thread_local double host_clock; /* modeled seconds */
static _Thread_local double next_flops, next_bytes;
static _Thread_local int next_cost_set;
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

/* ---- initialisation --------------------------------------------------- */

static int parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static void init_once(void)
{
    const char *s;
    long v;
    G.quiet = (s = getenv("SIMT_QUIET")) && *s && strcmp(s, "0") != 0;
    for (int d = 0; d < MAX_DEVICES; d++) pthread_cond_init(&G.dev[d].done_cv, NULL);
    G.ndev = DEFAULT_DEVICES;
    if ((s = getenv("PARALAB_SIM_DEVICES")) && *s) {
        if (parse_int(s, 0, MAX_DEVICES, &v) != 0) {
            fprintf(stderr, "simt: PARALAB_SIM_DEVICES=%s is not a whole number from 0 to %d\n", s,
                    MAX_DEVICES);
            G.init_err = cudaErrorInitializationError;
            return;
        }
        G.ndev = (int)v;
    }
    G.preset = simtPresetByName("H100-SXM");
    if ((s = getenv("PARALAB_SIM_GPU")) && *s) {
        G.preset = simtPresetByName(s);
        if (!G.preset) {
            fprintf(stderr, "simt: PARALAB_SIM_GPU=%s is not a known preset; choose one of:", s);
            for (const simt_preset *const *p = simtPresets(); *p; p++)
                fprintf(stderr, " %s", (*p)->name);
            fprintf(stderr, "\n");
            G.init_err = cudaErrorInitializationError;
            return;
        }
    }
    G.capacity = G.preset->memory_bytes;
    if ((s = getenv("PARALAB_SIM_MEM_MB")) && *s) {
        if (parse_int(s, 1, 1L << 24, &v) != 0) {
            fprintf(stderr,
                    "simt: PARALAB_SIM_MEM_MB=%s is not a whole number of MiB from 1 to %ld\n", s,
                    1L << 24);
            G.init_err = cudaErrorInitializationError;
            return;
        }
        G.capacity = (size_t)v << 20;
    }
    if ((s = getenv("SIMT_PLAIN")) && *s) {
        if (strcmp(s, "0") && strcmp(s, "1")) {
            fprintf(stderr, "simt: SIMT_PLAIN=%s is not 0 or 1\n", s);
            G.init_err = cudaErrorInitializationError;
            return;
        }
        simt_plain_calls = *s == '1';
    }
    if ((s = getenv("SIMT_SCHEDULE")) && *s) {
        char *end;
        if (strcmp(s, "forward") == 0)
            simt_schedule_kind = 0;
        else if (strcmp(s, "reverse") == 0)
            simt_schedule_kind = 1;
        else if (strncmp(s, "random:", 7) == 0 && s[7] &&
                 (simt_schedule_seed = strtoull(s + 7, &end, 10), *end == '\0'))
            simt_schedule_kind = 2;
        else {
            fprintf(stderr, "simt: SIMT_SCHEDULE=%s is not one of forward, reverse, random:SEED\n",
                    s);
            G.init_err = cudaErrorInitializationError;
            return;
        }
    }
    /* Reserve the device-memory arena: address space only, no memory. */
    if (G.ndev > 0) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        size_t span = (G.capacity + (G.capacity >> 2) + page - 1) / page * page;
        if (span < (64u << 20)) span = 64u << 20; /* room for guard pages under a tiny capacity */
        void *a = MAP_FAILED;
        for (; span >= (64u << 20); span /= 2) {
            a = mmap(NULL, span * (size_t)G.ndev, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (a != MAP_FAILED) break;
        }
        if (a == MAP_FAILED) {
            fprintf(stderr, "simt: cannot reserve address space for %d simulated devices\n",
                    G.ndev);
            G.init_err = cudaErrorInitializationError;
            return;
        }
        G.span = span;
        simt_arena_lo = (uintptr_t)a;
        simt_arena_span = span * (size_t)G.ndev;
    }
    for (int d = 0; d < G.ndev; d++) {
        device *dv = &G.dev[d];
        dv->arena = dv->cursor = simt_arena_lo + (uintptr_t)d * G.span;
        dv->legacy.magic = STREAM_MAGIC;
        dv->legacy.device = d;
        dv->legacy.legacy = 1;
        pthread_cond_init(&dv->legacy.cv, NULL);
    }
}

static cudaError_t init(void)
{
    pthread_once(&G.once, init_once);
    return G.init_err;
}

static cudaError_t ret(cudaError_t e)
{
    if (e != cudaSuccess) last_err = e;
    return e;
}

/* Every call begins here: initialised, not called from a kernel, and the
 * current device not faulted. */
static cudaError_t enter(const char *fn)
{
    cudaError_t e = init();
    if (e) return e;
    const char *k = simt_emu_current_kernel();
    if (k) {
        if (!G.quiet)
            fprintf(stderr,
                    "simt: %s called from kernel %s: runtime calls from device code (dynamic "
                    "parallelism) are not simulated\n",
                    fn, k);
        return cudaErrorNotSupported;
    }
    if (G.ndev == 0) return cudaErrorNoDevice;
    return G.dev[cur_dev].sticky;
}

#define ENTER()                                                                                    \
    do {                                                                                           \
        cudaError_t e_ = enter(__func__);                                                          \
        if (e_) return ret(e_);                                                                    \
    } while (0)

/* ---- errors ---------------------------------------------------------- */

typedef struct {
    cudaError_t code;
    const char *name, *text;
} err_info;
/* Names and strings as the CUDA runtime reports them (cudaGetErrorName,
 * cudaGetErrorString, CUDA 12/13). */
static const err_info errors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorCudartUnloading, "cudaErrorCudartUnloading", "driver shutting down"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {cudaErrorInvalidPitchValue, "cudaErrorInvalidPitchValue", "invalid pitch argument"},
    {cudaErrorInvalidSymbol, "cudaErrorInvalidSymbol", "invalid device symbol"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
     "invalid copy direction for memcpy"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorPeerAccessUnsupported, "cudaErrorPeerAccessUnsupported",
     "peer access is not supported between these two devices"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorIllegalState, "cudaErrorIllegalState",
     "the operation cannot be performed in the present state"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress",
     "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources",
     "too many resources requested for launch"},
    {cudaErrorPeerAccessAlreadyEnabled, "cudaErrorPeerAccessAlreadyEnabled",
     "peer access is already enabled"},
    {cudaErrorPeerAccessNotEnabled, "cudaErrorPeerAccessNotEnabled",
     "peer access has not been enabled"},
    {cudaErrorContextIsDestroyed, "cudaErrorContextIsDestroyed", "context is destroyed"},
    {cudaErrorAssert, "cudaErrorAssert", "device-side assert triggered"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorCooperativeLaunchTooLarge, "cudaErrorCooperativeLaunchTooLarge",
     "too many blocks in cooperative launch"},
    {cudaErrorNotPermitted, "cudaErrorNotPermitted", "operation not permitted"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

static const err_info *find_error(cudaError_t e)
{
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
        if (errors[i].code == e) return &errors[i];
    return NULL;
}

const char *cudaGetErrorName(cudaError_t e)
{
    const err_info *i = find_error(e);
    return i ? i->name : "unrecognized error code";
}

const char *cudaGetErrorString(cudaError_t e)
{
    const err_info *i = find_error(e);
    return i ? i->text : "unrecognized error code";
}

cudaError_t cudaGetLastError(void)
{
    if (init() == cudaSuccess && G.ndev > 0 && G.dev[cur_dev].sticky)
        return G.dev[cur_dev].sticky; /* sticky: cannot be cleared */
    cudaError_t e = last_err;
    last_err = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    if (init() == cudaSuccess && G.ndev > 0 && G.dev[cur_dev].sticky) return G.dev[cur_dev].sticky;
    return last_err;
}

const char *simtLastFaultReport(void)
{
    if (init() != cudaSuccess || G.ndev == 0) return "";
    return G.dev[cur_dev].report;
}

/* ---- devices ----------------------------------------------------------- */

cudaError_t cudaGetDeviceCount(int *count)
{
    cudaError_t e = init();
    if (e) return ret(e);
    if (!count) return ret(cudaErrorInvalidValue);
    *count = G.ndev;
    return G.ndev ? cudaSuccess : ret(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int d)
{
    cudaError_t e = init();
    if (e) return ret(e);
    if (G.ndev == 0) return ret(cudaErrorNoDevice);
    if (d < 0 || d >= G.ndev) return ret(cudaErrorInvalidDevice);
    cur_dev = d;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *d)
{
    cudaError_t e = init();
    if (e) return ret(e);
    if (!d) return ret(cudaErrorInvalidValue);
    if (G.ndev == 0) return ret(cudaErrorNoDevice);
    *d = cur_dev;
    return cudaSuccess;
}

const simt_preset *simtCurrentPreset(void) { return init() == cudaSuccess ? G.preset : NULL; }

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
    cudaError_t e = init();
    if (e) return ret(e);
    if (!p) return ret(cudaErrorInvalidValue);
    if (d < 0 || d >= G.ndev) return ret(cudaErrorInvalidDevice);
    const simt_preset *h = G.preset;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", h->device_name);
    p->totalGlobalMem = G.capacity;
    p->sharedMemPerBlock = DEFAULT_SHMEM_LIMIT;
    p->regsPerBlock = 65536;
    p->warpSize = 32;
    p->memPitch = 2147483647;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024;
    p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647;
    p->maxGridSize[1] = 65535;
    p->maxGridSize[2] = 65535;
    p->totalConstMem = 65536;
    p->major = h->cc_major;
    p->minor = h->cc_minor;
    p->textureAlignment = 512;
    p->multiProcessorCount = h->sm_count;
    p->canMapHostMemory = 1;
    p->concurrentKernels = 1;
    p->pciBusID = d + 1;
    p->asyncEngineCount = 2;
    p->unifiedAddressing = 1;
    p->memoryBusWidth = h->memory_bus_bits;
    p->l2CacheSize = (int)h->l2_bytes;
    p->maxThreadsPerMultiProcessor = h->max_threads_per_sm;
    p->sharedMemPerMultiprocessor = h->shared_per_sm;
    p->regsPerMultiprocessor = 65536;
    p->sharedMemPerBlockOptin = h->shared_per_block_optin;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int d)
{
    struct cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, d);
    if (e) return e;
    if (!value) return ret(cudaErrorInvalidValue);
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
        *value = p.maxThreadsPerBlock;
        break;
    case cudaDevAttrMaxBlockDimX:
        *value = p.maxThreadsDim[0];
        break;
    case cudaDevAttrMaxBlockDimY:
        *value = p.maxThreadsDim[1];
        break;
    case cudaDevAttrMaxBlockDimZ:
        *value = p.maxThreadsDim[2];
        break;
    case cudaDevAttrMaxGridDimX:
        *value = p.maxGridSize[0];
        break;
    case cudaDevAttrMaxGridDimY:
        *value = p.maxGridSize[1];
        break;
    case cudaDevAttrMaxGridDimZ:
        *value = p.maxGridSize[2];
        break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
        *value = (int)p.sharedMemPerBlock;
        break;
    case cudaDevAttrTotalConstantMemory:
        *value = (int)p.totalConstMem;
        break;
    case cudaDevAttrWarpSize:
        *value = p.warpSize;
        break;
    case cudaDevAttrMaxRegistersPerBlock:
        *value = p.regsPerBlock;
        break;
    case cudaDevAttrMultiProcessorCount:
        *value = p.multiProcessorCount;
        break;
    case cudaDevAttrIntegrated:
        *value = p.integrated;
        break;
    case cudaDevAttrCanMapHostMemory:
        *value = p.canMapHostMemory;
        break;
    case cudaDevAttrConcurrentKernels:
        *value = p.concurrentKernels;
        break;
    case cudaDevAttrPciBusId:
        *value = p.pciBusID;
        break;
    case cudaDevAttrPciDeviceId:
        *value = p.pciDeviceID;
        break;
    case cudaDevAttrGlobalMemoryBusWidth:
        *value = p.memoryBusWidth;
        break;
    case cudaDevAttrL2CacheSize:
        *value = p.l2CacheSize;
        break;
    case cudaDevAttrMaxThreadsPerMultiProcessor:
        *value = p.maxThreadsPerMultiProcessor;
        break;
    case cudaDevAttrAsyncEngineCount:
        *value = p.asyncEngineCount;
        break;
    case cudaDevAttrUnifiedAddressing:
        *value = p.unifiedAddressing;
        break;
    case cudaDevAttrComputeCapabilityMajor:
        *value = p.major;
        break;
    case cudaDevAttrComputeCapabilityMinor:
        *value = p.minor;
        break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
        *value = (int)p.sharedMemPerMultiprocessor;
        break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
        *value = (int)p.sharedMemPerBlockOptin;
        break;
    default:
        return ret(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

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

static simt_op *op_new(enum op_kind kind, int device)
{
    simt_op *op = calloc(1, sizeof *op);
    if (!op) return NULL;
    op->kind = kind;
    op->device = device;
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
            pthread_mutex_lock(&G.lock);
            if (!dv->sticky) {
                dv->sticky = e;
                snprintf(dv->report, sizeof dv->report, "%s", report);
            }
            pthread_mutex_unlock(&G.lock);
            if (!G.quiet) fprintf(stderr, "simt: %s\n", report);
        }
        break;
    }
    case OP_COPY:
        memmove(op->dst, op->staging ? op->staging : op->src, op->bytes);
        break;
    case OP_MEMSET:
        memset(op->dst, op->value, op->bytes);
        break;
    case OP_MARKER:
        break;
    }
}

static void *worker_main(void *arg)
{
    struct simt_stream *s = arg;
    device *dv = &G.dev[s->device];
    pthread_mutex_lock(&G.lock);
    for (;;) {
        while (!s->head && !s->destroyed) pthread_cond_wait(&s->cv, &G.lock);
        if (!s->head) break; /* destroyed and drained */
        simt_op *op = s->head;
        for (int i = 0; i < op->ndeps; i++)
            while (!op->deps[i]->done)
                pthread_cond_wait(&G.dev[op->deps[i]->device].done_cv, &G.lock);
        pthread_mutex_unlock(&G.lock);
        double w0 = now_wall();
        execute(op, dv);
        double w = now_wall();
        pthread_mutex_lock(&G.lock);
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
        pthread_cond_broadcast(&dv->done_cv);
        op_unref(op);
    }
    /* A destroyed stream frees itself once its work is done. */
    op_unref(s->last);
    dv->zombies--;
    pthread_cond_broadcast(&dv->done_cv);
    pthread_mutex_unlock(&G.lock);
    pthread_cond_destroy(&s->cv);
    free(s);
    simt_emu_thread_exit();
    return NULL;
}

static struct simt_stream *resolve_stream(cudaStream_t st, int *bad)
{
    *bad = 0;
    if (!st || st == cudaStreamLegacy) return &G.dev[cur_dev].legacy;
    for (int d = 0; d < G.ndev; d++)
        for (struct simt_stream *s = G.dev[d].streams; s; s = s->next)
            if (s == st) return s;
    *bad = 1;
    return NULL;
}

/* Queues op on s with its modeled duration on `engine`. G.lock held.
 * Takes over the caller's reference to op. */
static cudaError_t enqueue(struct simt_stream *s, simt_op *op, int engine, double duration)
{
    device *dv = &G.dev[s->device];
    op->stream = s->number;
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
    op->m_start = start;
    op->m_end = start + duration;
    op->engine = engine;
    s->clock = op->m_end;
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
    pthread_cond_signal(&s->cv);
    return cudaSuccess;
}

/* Waits for op (G.lock held). The wait releases the lock, and meanwhile the
 * op's stream may move on and drop it: hold a reference while waiting. */
static void wait_op(simt_op *op)
{
    if (!op) return;
    op->refs++;
    while (!op->done) pthread_cond_wait(&G.dev[op->device].done_cv, &G.lock);
    op_unref(op);
}

/* Waits for everything queued on the device, destroyed streams included,
 * and (advance) moves the host's modeled clock to the device's. G.lock held. */
static void drain_device(int d, int advance)
{
    device *dv = &G.dev[d];
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
    while (dv->zombies > 0) pthread_cond_wait(&dv->done_cv, &G.lock);
}

static void sync_device(int d) { drain_device(d, 1); }

/* The smallest number from 1 that no live stream of the device has: a
 * program's streams are numbered 1, 2... in creation order, and a
 * destroyed stream's number is given again. G.lock held. */
static int free_stream_number(const device *dv)
{
    for (int k = 1;; k++) {
        int used = 0;
        for (const struct simt_stream *t = dv->streams; t && !used; t = t->next)
            used = t->number == k;
        if (!used) return k;
    }
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *ps, unsigned flags)
{
    ENTER();
    if (!ps || (flags & ~(unsigned)cudaStreamNonBlocking)) return ret(cudaErrorInvalidValue);
    struct simt_stream *s = calloc(1, sizeof *s);
    if (!s) return ret(cudaErrorMemoryAllocation);
    s->magic = STREAM_MAGIC;
    s->device = cur_dev;
    s->flags = flags;
    pthread_cond_init(&s->cv, NULL);
    pthread_mutex_lock(&G.lock);
    s->clock = host_clock;
    s->number = free_stream_number(&G.dev[cur_dev]);
    s->next = G.dev[cur_dev].streams;
    G.dev[cur_dev].streams = s;
    pthread_mutex_unlock(&G.lock);
    *ps = s;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *ps) { return cudaStreamCreateWithFlags(ps, 0); }

/* Priorities 0 (the default, the least) down to -5 (the greatest), as on
 * Hopper GPUs [MODEL]; a value outside the range is clamped, as CUDA does. */
#define PRIORITY_GREATEST (-5)

cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    ENTER();
    if (least) *least = 0;
    if (greatest) *greatest = PRIORITY_GREATEST;
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *ps, unsigned flags, int priority)
{
    cudaError_t e = cudaStreamCreateWithFlags(ps, flags);
    if (e) return e;
    struct simt_stream *s = *ps;
    pthread_mutex_lock(&G.lock);
    s->priority = priority > 0 ? 0 : priority < PRIORITY_GREATEST ? PRIORITY_GREATEST : priority;
    pthread_mutex_unlock(&G.lock);
    return cudaSuccess;
}

cudaError_t cudaStreamGetPriority(cudaStream_t st, int *priority)
{
    ENTER();
    pthread_mutex_lock(&G.lock);
    int bad;
    struct simt_stream *s = resolve_stream(st, &bad);
    if (!bad && priority) *priority = s->priority;
    pthread_mutex_unlock(&G.lock);
    return ret(bad || !priority ? (bad ? cudaErrorInvalidResourceHandle : cudaErrorInvalidValue)
                                : cudaSuccess);
}

cudaError_t cudaStreamDestroy(cudaStream_t st)
{
    ENTER();
    pthread_mutex_lock(&G.lock);
    int bad;
    struct simt_stream *s = resolve_stream(st, &bad);
    if (bad || s->legacy) {
        pthread_mutex_unlock(&G.lock);
        return ret(cudaErrorInvalidResourceHandle);
    }
    device *dv = &G.dev[s->device];
    for (struct simt_stream **pp = &dv->streams; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    s->magic = 0;
    if (s->worker_started) { /* the worker drains the queue, then frees s */
        s->destroyed = 1;
        dv->zombies++;
        pthread_cond_signal(&s->cv);
    } else {
        pthread_cond_destroy(&s->cv);
        free(s);
    }
    pthread_mutex_unlock(&G.lock);
    return cudaSuccess;
}

static cudaError_t stream_sync_locked(struct simt_stream *s)
{
    wait_op(s->last);
    host_clock = maxd(host_clock, s->clock);
    return G.dev[s->device].sticky;
}

cudaError_t cudaStreamSynchronize(cudaStream_t st)
{
    ENTER();
    pthread_mutex_lock(&G.lock);
    int bad;
    struct simt_stream *s = resolve_stream(st, &bad);
    cudaError_t e = bad ? cudaErrorInvalidResourceHandle : stream_sync_locked(s);
    pthread_mutex_unlock(&G.lock);
    simtFlushOps();
    return ret(e);
}

cudaError_t cudaStreamQuery(cudaStream_t st)
{
    ENTER();
    pthread_mutex_lock(&G.lock);
    int bad;
    struct simt_stream *s = resolve_stream(st, &bad);
    cudaError_t e = bad ? cudaErrorInvalidResourceHandle
                        : (s->last && !s->last->done ? cudaErrorNotReady : cudaSuccess);
    pthread_mutex_unlock(&G.lock);
    return e == cudaErrorNotReady ? e : ret(e); /* "not ready" is no error */
}

cudaError_t cudaDeviceSynchronize(void)
{
    ENTER();
    pthread_mutex_lock(&G.lock);
    sync_device(cur_dev);
    cudaError_t e = G.dev[cur_dev].sticky;
    pthread_mutex_unlock(&G.lock);
    simtFlushOps();
    return ret(e);
}

double simtModeledNow(void)
{
    if (enter(__func__) != cudaSuccess) return 0;
    pthread_mutex_lock(&G.lock);
    double t = host_clock;
    for (int d = 0; d < G.ndev; d++) {
        device *dv = &G.dev[d];
        t = maxd(t, dv->legacy.clock);
        for (struct simt_stream *s = dv->streams; s; s = s->next) t = maxd(t, s->clock);
        for (int e = 0; e < ENG_COUNT; e++) t = maxd(t, dv->engine_free[e]);
    }
    pthread_mutex_unlock(&G.lock);
    return t;
}

void simtHostClockAdvance(double t) { host_clock = maxd(host_clock, t); }

double simtStreamModeledTime(cudaStream_t st)
{
    if (enter(__func__) != cudaSuccess) return 0;
    pthread_mutex_lock(&G.lock);
    int bad;
    struct simt_stream *s = resolve_stream(st, &bad);
    double t = bad ? 0 : s->clock;
    pthread_mutex_unlock(&G.lock);
    return t;
}

/* ---- events ---------------------------------------------------------- */

static struct simt_event *find_event(cudaEvent_t ev)
{
    for (int d = 0; d < G.ndev; d++)
        for (struct simt_event *e = G.dev[d].events; e; e = e->next)
            if (e == ev) return e;
    return NULL;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *pe, unsigned flags)
{
    ENTER();
    unsigned all = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
    if (!pe || (flags & ~all) ||
        ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)))
        return ret(cudaErrorInvalidValue);
    struct simt_event *e = calloc(1, sizeof *e);
    if (!e) return ret(cudaErrorMemoryAllocation);
    e->magic = EVENT_MAGIC;
    e->device = cur_dev;
    e->flags = flags;
    pthread_mutex_lock(&G.lock);
    e->next = G.dev[cur_dev].events;
    G.dev[cur_dev].events = e;
    pthread_mutex_unlock(&G.lock);
    *pe = e;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *pe) { return cudaEventCreateWithFlags(pe, 0); }

cudaError_t cudaEventDestroy(cudaEvent_t ev)
{
    ENTER();
    pthread_mutex_lock(&G.lock);
    struct simt_event *e = find_event(ev);
    if (!e) {
        pthread_mutex_unlock(&G.lock);
        return ret(cudaErrorInvalidResourceHandle);
    }
    for (struct simt_event **pp = &G.dev[e->device].events; *pp; pp = &(*pp)->next)
        if (*pp == e) {
            *pp = e->next;
            break;
        }
    op_unref(e->op);
    e->magic = 0;
    free(e);
    pthread_mutex_unlock(&G.lock);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t st)
{
    ENTER();
    pthread_mutex_lock(&G.lock);
    struct simt_event *e = find_event(ev);
    int bad;
    struct simt_stream *s = resolve_stream(st, &bad);
    cudaError_t r = cudaSuccess;
    if (!e || bad || s->device != e->device)
        r = cudaErrorInvalidResourceHandle;
    else {
        simt_op *op = op_new(OP_MARKER, s->device);
        if (!op)
            r = cudaErrorMemoryAllocation;
        else {
            op->refs++; /* the event's */
            r = enqueue(s, op, ENG_NONE, 0);
            if (r == cudaSuccess) {
                op_unref(e->op);
                e->op = op;
            } else
                op_unref(op);
        }
    }
    pthread_mutex_unlock(&G.lock);
    return ret(r);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t st, cudaEvent_t ev, unsigned flags)
{
    ENTER();
    pthread_mutex_lock(&G.lock);
    struct simt_event *e = find_event(ev);
    int bad;
    struct simt_stream *s = resolve_stream(st, &bad);
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
    pthread_mutex_unlock(&G.lock);
    return ret(r);
}

cudaError_t cudaEventSynchronize(cudaEvent_t ev)
{
    ENTER();
    pthread_mutex_lock(&G.lock);
    struct simt_event *e = find_event(ev);
    cudaError_t r = cudaSuccess;
    if (!e)
        r = cudaErrorInvalidResourceHandle;
    else if (e->op) {
        wait_op(e->op);
        host_clock = maxd(host_clock, e->op->m_end);
        r = G.dev[e->device].sticky;
    }
    pthread_mutex_unlock(&G.lock);
    simtFlushOps();
    return ret(r);
}

cudaError_t cudaEventQuery(cudaEvent_t ev)
{
    ENTER();
    pthread_mutex_lock(&G.lock);
    struct simt_event *e = find_event(ev);
    cudaError_t r = !e ? cudaErrorInvalidResourceHandle
                       : (e->op && !e->op->done ? cudaErrorNotReady : cudaSuccess);
    pthread_mutex_unlock(&G.lock);
    return r == cudaErrorNotReady ? r : ret(r);
}

static cudaError_t elapsed(float *ms, cudaEvent_t a, cudaEvent_t b, int measured)
{
    ENTER();
    if (!ms) return ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&G.lock);
    struct simt_event *s = find_event(a), *e = find_event(b);
    cudaError_t r = cudaSuccess;
    if (!s || !e || !s->op || !e->op || ((s->flags | e->flags) & cudaEventDisableTiming))
        r = cudaErrorInvalidResourceHandle;
    else if (!s->op->done || !e->op->done)
        r = cudaErrorNotReady;
    else
        *ms = measured ? (float)((e->op->w_end - s->op->w_end) * 1e3)
                       : (float)((e->op->m_end - s->op->m_end) * 1e3);
    pthread_mutex_unlock(&G.lock);
    return ret(r);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    return elapsed(ms, a, b, 0);
}

cudaError_t simtEventElapsedMeasured(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    return elapsed(ms, a, b, 1);
}

/* ---- device memory ---------------------------------------------------- */

static int alloc_index(uintptr_t a) /* last allocation with base <= a, or -1 */
{
    int lo = 0, hi = G.nalloc - 1, r = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (G.allocs[mid].base <= a) {
            r = mid;
            lo = mid + 1;
        } else
            hi = mid - 1;
    }
    return r;
}

int simt_alloc_find(uintptr_t a, size_t size, uintptr_t *base, size_t *len)
{
    pthread_rwlock_rdlock(&G.alloc_lock);
    int i = alloc_index(a);
    int ok = i >= 0 && a + size <= G.allocs[i].base + G.allocs[i].size;
    if (ok) {
        *base = G.allocs[i].base;
        *len = G.allocs[i].size;
    }
    pthread_rwlock_unlock(&G.alloc_lock);
    return ok;
}

void simt_alloc_describe(uintptr_t a, char *buf, size_t cap)
{
    pthread_rwlock_rdlock(&G.alloc_lock);
    const alloc *best = NULL;
    uintptr_t bestd = UINTPTR_MAX;
    for (int i = 0; i < G.nalloc; i++) {
        const alloc *al = &G.allocs[i];
        uintptr_t d = a < al->base               ? al->base - a
                      : a >= al->base + al->size ? a - (al->base + al->size) + 1
                                                 : 0;
        if (d < bestd) {
            bestd = d;
            best = al;
        }
    }
    if (!best)
        snprintf(buf, cap,
                 "no device allocation is live (freed memory, or a pointer never "
                 "returned by cudaMalloc)");
    else if (a < best->base)
        snprintf(buf, cap,
                 "%zu bytes before the nearest allocation (base %p, %zu bytes, device %d)",
                 (size_t)(best->base - a), (void *)best->base, best->size, best->device);
    else if (a - best->base == best->size)
        snprintf(buf, cap,
                 "offset %zu of the nearest allocation (base %p, %zu bytes, device %d): the first "
                 "byte past its end",
                 (size_t)(a - best->base), (void *)best->base, best->size, best->device);
    else if (a - best->base > best->size)
        snprintf(buf, cap,
                 "offset %zu of the nearest allocation (base %p, %zu bytes, device %d): %zu bytes "
                 "past its end",
                 (size_t)(a - best->base), (void *)best->base, best->size, best->device,
                 (size_t)(a - best->base) - best->size);
    else
        snprintf(buf, cap,
                 "offset %zu of the allocation at base %p (%zu bytes, device %d): the access runs "
                 "past its end",
                 (size_t)(a - best->base), (void *)best->base, best->size, best->device);
    pthread_rwlock_unlock(&G.alloc_lock);
}

/* The allocation holding [p, p+n), on any device; NULL if none. */
static const alloc *device_range(const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p;
    if (a - simt_arena_lo >= simt_arena_span) return NULL;
    int i = alloc_index(a);
    if (i < 0 || a + n > G.allocs[i].base + G.allocs[i].size) return NULL;
    return &G.allocs[i];
}

static int in_arena(const void *p) { return (uintptr_t)p - simt_arena_lo < simt_arena_span; }

cudaError_t cudaMalloc(void **p, size_t size)
{
    ENTER();
    if (!p) return ret(cudaErrorInvalidValue);
    *p = NULL;
    if (size == 0) return cudaSuccess;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t mapped = (size + page - 1) / page * page, need = mapped + page; /* + guard */
    device *dv = &G.dev[cur_dev];
    pthread_mutex_lock(&G.lock);
    if (size > G.capacity - dv->used) {
        pthread_mutex_unlock(&G.lock);
        return ret(cudaErrorMemoryAllocation);
    }
    uintptr_t base = 0;
    for (int i = 0; i < dv->nfree; i++) /* first fit among freed ranges */
        if (dv->free_ranges[i].len >= need) {
            base = dv->free_ranges[i].base;
            dv->free_ranges[i].base += need;
            dv->free_ranges[i].len -= need;
            break;
        }
    if (!base) {
        if (dv->cursor + need > dv->arena + G.span) {
            pthread_mutex_unlock(&G.lock);
            return ret(cudaErrorMemoryAllocation);
        }
        base = dv->cursor;
        dv->cursor += need;
    }
    if (mmap((void *)base, mapped, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED) {
        pthread_mutex_unlock(&G.lock);
        return ret(cudaErrorMemoryAllocation);
    }
    madvise((void *)base, mapped, MADV_HUGEPAGE); /* fewer TLB misses on big arrays */
    simt_shadow_mark(base, size, need);
    pthread_rwlock_wrlock(&G.alloc_lock);
    if (G.nalloc == G.capalloc) {
        int cap = G.capalloc ? G.capalloc * 2 : 64;
        alloc *na = realloc(G.allocs, (size_t)cap * sizeof *na);
        if (!na) {
            pthread_rwlock_unlock(&G.alloc_lock);
            munmap((void *)base, mapped);
            pthread_mutex_unlock(&G.lock);
            return ret(cudaErrorMemoryAllocation);
        }
        G.allocs = na;
        G.capalloc = cap;
    }
    int i = alloc_index(base) + 1;
    memmove(&G.allocs[i + 1], &G.allocs[i], (size_t)(G.nalloc - i) * sizeof *G.allocs);
    G.allocs[i] = (alloc){base, size, mapped, cur_dev};
    G.nalloc++;
    pthread_rwlock_unlock(&G.alloc_lock);
    dv->used += size;
    pthread_mutex_unlock(&G.lock);
    *p = (void *)base;
    return cudaSuccess;
}

static void release_range(device *dv, uintptr_t base, size_t len)
{
    /* back to reserved-only address space */
    mmap((void *)base, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1,
         0);
    if (dv->nfree == dv->capfree) {
        int cap = dv->capfree ? dv->capfree * 2 : 16;
        range *r = realloc(dv->free_ranges, (size_t)cap * sizeof *r);
        if (!r) return; /* the range is lost to reuse, nothing worse */
        dv->free_ranges = r;
        dv->capfree = cap;
    }
    dv->free_ranges[dv->nfree++] = (range){base, len};
}

static void free_alloc_locked(int i)
{
    alloc al = G.allocs[i];
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    pthread_rwlock_wrlock(&G.alloc_lock);
    memmove(&G.allocs[i], &G.allocs[i + 1], (size_t)(G.nalloc - i - 1) * sizeof *G.allocs);
    G.nalloc--;
    atomic_fetch_add_explicit(&simt_alloc_generation, 1, memory_order_release);
    pthread_rwlock_unlock(&G.alloc_lock);
    device *dv = &G.dev[al.device];
    dv->used -= al.size;
    simt_shadow_mark(al.base, 0, al.mapped + page);
    release_range(dv, al.base, al.mapped + page);
}

cudaError_t cudaFree(void *p)
{
    ENTER();
    if (!p) return cudaSuccess;
    pthread_mutex_lock(&G.lock);
    int i = alloc_index((uintptr_t)p);
    if (i < 0 || G.allocs[i].base != (uintptr_t)p) {
        pthread_mutex_unlock(&G.lock);
        return ret(cudaErrorInvalidValue);
    }
    /* cudaFree synchronises: no kernel may still use it, and no peer copy
     * queued on another device either (a collective that aborted may have
     * left one behind); only the memory's own device sets the host's clock */
    int home = G.allocs[i].device;
    for (int d = 0; d < G.ndev; d++) drain_device(d, d == home);
    i = alloc_index((uintptr_t)p);
    if (i >= 0 && G.allocs[i].base == (uintptr_t)p) free_alloc_locked(i);
    cudaError_t e = G.dev[cur_dev].sticky;
    pthread_mutex_unlock(&G.lock);
    return ret(e);
}

cudaError_t cudaMemGetInfo(size_t *fr, size_t *total)
{
    ENTER();
    if (!fr || !total) return ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&G.lock);
    *total = G.capacity;
    *fr = G.capacity - G.dev[cur_dev].used;
    pthread_mutex_unlock(&G.lock);
    return cudaSuccess;
}

/* ---- pinned host memory ------------------------------------------------ */

static int pinned_index(const void *p) /* last pinned block with start <= p */
{
    int lo = 0, hi = G.npinned - 1, r = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if ((uintptr_t)G.pinned[mid] <= (uintptr_t)p) {
            r = mid;
            lo = mid + 1;
        } else
            hi = mid - 1;
    }
    return r;
}

static int is_pinned(const void *p, size_t n)
{
    int i = pinned_index(p);
    return i >= 0 && (uintptr_t)p + n <= (uintptr_t)G.pinned[i] + G.pinned_size[i];
}

cudaError_t cudaHostAlloc(void **p, size_t size, unsigned flags)
{
    ENTER();
    unsigned all = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
    if (!p || (flags & ~all)) return ret(cudaErrorInvalidValue);
    *p = NULL;
    if (size == 0) return cudaSuccess;
    void *m = NULL;
    if (posix_memalign(&m, 4096, size) != 0) return ret(cudaErrorMemoryAllocation);
    pthread_mutex_lock(&G.lock);
    if (G.npinned == G.cappinned) {
        int cap = G.cappinned ? G.cappinned * 2 : 32;
        void **np = realloc(G.pinned, (size_t)cap * sizeof *np);
        size_t *ns = np ? realloc(G.pinned_size, (size_t)cap * sizeof *ns) : NULL;
        if (np) G.pinned = np;
        if (!np || !ns) {
            pthread_mutex_unlock(&G.lock);
            free(m);
            return ret(cudaErrorMemoryAllocation);
        }
        G.pinned_size = ns;
        G.cappinned = cap;
    }
    int i = pinned_index(m) + 1;
    memmove(&G.pinned[i + 1], &G.pinned[i], (size_t)(G.npinned - i) * sizeof *G.pinned);
    memmove(&G.pinned_size[i + 1], &G.pinned_size[i], (size_t)(G.npinned - i) * sizeof(size_t));
    G.pinned[i] = m;
    G.pinned_size[i] = size;
    G.npinned++;
    pthread_mutex_unlock(&G.lock);
    *p = m;
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void **p, size_t size) { return cudaHostAlloc(p, size, 0); }

cudaError_t cudaFreeHost(void *p)
{
    ENTER();
    if (!p) return cudaSuccess;
    pthread_mutex_lock(&G.lock);
    int i = pinned_index(p);
    if (i < 0 || G.pinned[i] != p) {
        pthread_mutex_unlock(&G.lock);
        return ret(cudaErrorInvalidValue);
    }
    for (int d = 0; d < G.ndev; d++) sync_device(d); /* no copy may still read it */
    memmove(&G.pinned[i], &G.pinned[i + 1], (size_t)(G.npinned - i - 1) * sizeof *G.pinned);
    memmove(&G.pinned_size[i], &G.pinned_size[i + 1], (size_t)(G.npinned - i - 1) * sizeof(size_t));
    G.npinned--;
    pthread_mutex_unlock(&G.lock);
    free(p);
    return cudaSuccess;
}

/* ---- copies and memsets --------------------------------------------------- */

/* Checks a copy's pointers against its kind and returns the modeled engine
 * and duration. G.lock held. */
static cudaError_t plan_copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                             int *engine, double *duration, int *pageable_src, int *pageable_dst)
{
    if ((unsigned)kind > cudaMemcpyDefault) return cudaErrorInvalidMemcpyDirection;
    if (!dst || !src) return cudaErrorInvalidValue;
    int dd = in_arena(dst), sd = in_arena(src);
    if (kind == cudaMemcpyDefault)
        kind = dd ? (sd ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                  : (sd ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
    int want_dd = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    int want_sd = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (dd != want_dd || sd != want_sd) return cudaErrorInvalidValue; /* kind contradicts */
    pthread_rwlock_rdlock(&G.alloc_lock);
    int ok = (!dd || device_range(dst, n)) && (!sd || device_range(src, n));
    pthread_rwlock_unlock(&G.alloc_lock);
    if (!ok) return cudaErrorInvalidValue; /* runs past the end of an allocation */
    const simt_preset *h = G.preset;
    *pageable_src = !sd && !is_pinned(src, n);
    *pageable_dst = !dd && !is_pinned(dst, n);
    double link = h->host_link_bw;
    switch (kind) {
    case cudaMemcpyHostToDevice:
        *engine = ENG_H2D;
        *duration = h->copy_latency + (double)n / (link * (*pageable_src ? h->pageable_efficiency
                                                                         : h->pinned_efficiency));
        break;
    case cudaMemcpyDeviceToHost:
        *engine = ENG_D2H;
        *duration = h->copy_latency + (double)n / (link * (*pageable_dst ? h->pageable_efficiency
                                                                         : h->pinned_efficiency));
        break;
    case cudaMemcpyDeviceToDevice:
        *engine = ENG_D2D;
        *duration = h->copy_latency + 2.0 * (double)n / h->memory_bw; /* read + write */
        break;
    default:
        *engine = ENG_NONE;
        *duration = 0;
        *pageable_src = *pageable_dst = 0;
        break;
    }
    return cudaSuccess;
}

static cudaError_t copy_common(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                               cudaStream_t st, int sync)
{
    ENTER();
    pthread_mutex_lock(&G.lock);
    int bad, engine, psrc = 0, pdst = 0;
    double duration = 0;
    struct simt_stream *s = resolve_stream(st, &bad);
    cudaError_t r = bad ? cudaErrorInvalidResourceHandle
                        : plan_copy(dst, src, n, kind, &engine, &duration, &psrc, &pdst);
    if (r == cudaSuccess && n > 0) {
        simt_op *op = op_new(OP_COPY, s->device);
        if (!op)
            r = cudaErrorMemoryAllocation;
        else {
            op->dst = dst;
            op->src = src;
            op->bytes = n;
            /* A pageable source is staged now, so the caller may reuse it
             * as soon as the call returns (as CUDA does). */
            if (!sync && psrc && (op->staging = malloc(n))) memcpy(op->staging, src, n);
            int wait = sync || (psrc && !op->staging) || pdst;
            op->refs++;
            r = enqueue(s, op, engine, duration);
            if (r == cudaSuccess && wait) {
                wait_op(op);
                host_clock = maxd(host_clock, op->m_end);
                r = op->err;
            }
            op_unref(op);
        }
    }
    pthread_mutex_unlock(&G.lock);
    if (sync) simtFlushOps();
    return ret(r);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    return copy_common(dst, src, n, kind, NULL, 1);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                            cudaStream_t st)
{
    return copy_common(dst, src, n, kind, st, 0);
}

static cudaError_t memset_common(void *p, int value, size_t n, cudaStream_t st)
{
    ENTER();
    pthread_mutex_lock(&G.lock);
    int bad;
    struct simt_stream *s = resolve_stream(st, &bad);
    cudaError_t r = cudaSuccess;
    pthread_rwlock_rdlock(&G.alloc_lock);
    int ok = n == 0 || device_range(p, n);
    pthread_rwlock_unlock(&G.alloc_lock);
    if (bad)
        r = cudaErrorInvalidResourceHandle;
    else if (!ok)
        r = cudaErrorInvalidValue;
    else if (n > 0) {
        simt_op *op = op_new(OP_MEMSET, s->device);
        if (!op)
            r = cudaErrorMemoryAllocation;
        else {
            op->dst = p;
            op->bytes = n;
            op->value = value;
            r = enqueue(s, op, ENG_COMPUTE,
                        G.preset->launch_latency + (double)n / G.preset->memory_bw);
        }
    }
    pthread_mutex_unlock(&G.lock);
    return ret(r);
}

cudaError_t cudaMemset(void *p, int value, size_t n) { return memset_common(p, value, n, NULL); }

cudaError_t cudaMemsetAsync(void *p, int value, size_t n, cudaStream_t st)
{
    return memset_common(p, value, n, st);
}

static int peer_capable(void) { return G.preset->peer_bw > 0; }
static int same_node(int a, int b)
{
    int g = G.preset->gpus_per_node;
    return g <= 0 || a / g == b / g;
}

cudaError_t cudaDeviceCanAccessPeer(int *can, int d, int peer)
{
    cudaError_t e = init();
    if (e) return ret(e);
    if (!can) return ret(cudaErrorInvalidValue);
    if (d < 0 || d >= G.ndev || peer < 0 || peer >= G.ndev) return ret(cudaErrorInvalidDevice);
    *can = d != peer && peer_capable() && same_node(d, peer);
    return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned flags)
{
    ENTER();
    if (flags != 0) return ret(cudaErrorInvalidValue);
    if (peer < 0 || peer >= G.ndev || peer == cur_dev) return ret(cudaErrorInvalidDevice);
    if (!peer_capable() || !same_node(cur_dev, peer)) return ret(cudaErrorPeerAccessUnsupported);
    pthread_mutex_lock(&G.lock);
    cudaError_t r =
        G.dev[cur_dev].peer_enabled[peer] ? cudaErrorPeerAccessAlreadyEnabled : cudaSuccess;
    G.dev[cur_dev].peer_enabled[peer] = 1;
    pthread_mutex_unlock(&G.lock);
    return ret(r);
}

static cudaError_t peer_common(void *dst, int dd, const void *src, int sd, size_t n,
                               cudaStream_t st, int sync)
{
    ENTER();
    if (dd < 0 || dd >= G.ndev || sd < 0 || sd >= G.ndev) return ret(cudaErrorInvalidDevice);
    pthread_mutex_lock(&G.lock);
    int bad;
    struct simt_stream *s = resolve_stream(st, &bad);
    cudaError_t r = cudaSuccess;
    pthread_rwlock_rdlock(&G.alloc_lock);
    const alloc *da = device_range(dst, n), *sa = device_range(src, n);
    int ok = n == 0 || (da && sa && da->device == dd && sa->device == sd);
    pthread_rwlock_unlock(&G.alloc_lock);
    if (bad)
        r = cudaErrorInvalidResourceHandle;
    else if (!ok)
        r = cudaErrorInvalidValue;
    else if (n > 0) {
        const simt_preset *h = G.preset;
        double duration;
        int engine = ENG_PEER;
        if (dd == sd) {
            engine = ENG_D2D;
            duration = h->copy_latency + 2.0 * (double)n / h->memory_bw;
        } else if (!same_node(sd, dd)) { /* GPU to GPU over the network (RDMA) */
            engine = ENG_NET;
            duration = h->inter_node_latency + (double)n / h->inter_node_bw;
        } else if (peer_capable() && (G.dev[sd].peer_enabled[dd] || G.dev[dd].peer_enabled[sd]))
            duration = h->peer_latency + (double)n / h->peer_bw;
        else /* staged through host memory: down one PCIe link and up another */
            duration =
                2 * h->copy_latency + 2.0 * (double)n / (h->host_link_bw * h->pinned_efficiency);
        if (sync) {
            sync_device(sd);
            sync_device(dd);
        }
        simt_op *op = op_new(OP_COPY, s->device);
        if (!op)
            r = cudaErrorMemoryAllocation;
        else {
            op->dst = dst;
            op->src = src;
            op->bytes = n;
            op->peer_device = s->device == dd ? sd : dd;
            op->refs++;
            r = enqueue(s, op, engine, duration);
            if (r == cudaSuccess && sync) {
                wait_op(op);
                host_clock = maxd(host_clock, op->m_end);
                r = op->err;
            }
            op_unref(op);
        }
    }
    pthread_mutex_unlock(&G.lock);
    if (sync) simtFlushOps();
    return ret(r);
}

cudaError_t cudaMemcpyPeer(void *dst, int dd, const void *src, int sd, size_t n)
{
    return peer_common(dst, dd, src, sd, n, NULL, 1);
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dd, const void *src, int sd, size_t n,
                                cudaStream_t st)
{
    return peer_common(dst, dd, src, sd, n, st, 0);
}

cudaError_t simtMemcpyToSymbol(void *symbol, size_t symbol_size, const void *src, size_t count,
                               size_t offset, enum cudaMemcpyKind kind)
{
    ENTER();
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice &&
        kind != cudaMemcpyDefault)
        return ret(cudaErrorInvalidMemcpyDirection);
    if (!src || offset > symbol_size || count > symbol_size - offset)
        return ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&G.lock);
    sync_device(cur_dev); /* kernels already queued see the old value */
    memcpy((char *)symbol + offset, src, count);
    pthread_mutex_unlock(&G.lock);
    return cudaSuccess;
}

/* ---- kernels ---------------------------------------------------------- */

void simtLaunchCost(double flops, double bytes)
{
    next_flops = flops;
    next_bytes = bytes;
    next_cost_set = 1;
}

cudaError_t cudaFuncSetAttribute(const void *fn, enum cudaFuncAttribute attr, int value)
{
    ENTER();
    if (!fn) return ret(cudaErrorInvalidDeviceFunction);
    if (attr == cudaFuncAttributePreferredSharedMemoryCarveout)
        return value >= -1 && value <= 100 ? cudaSuccess : ret(cudaErrorInvalidValue);
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return ret(cudaErrorInvalidValue);
    if (value < 0 || (size_t)value > G.preset->shared_per_block_optin)
        return ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&G.lock);
    int i;
    for (i = 0; i < G.nattrs; i++)
        if (G.attrs[i].fn == fn) break;
    if (i == G.nattrs) {
        func_attr *na = realloc(G.attrs, (size_t)(G.nattrs + 1) * sizeof *na);
        if (!na) {
            pthread_mutex_unlock(&G.lock);
            return ret(cudaErrorMemoryAllocation);
        }
        G.attrs = na;
        G.nattrs++;
        G.attrs[i].fn = fn;
    }
    G.attrs[i].max_dynamic_shared = value;
    pthread_mutex_unlock(&G.lock);
    return cudaSuccess;
}

static size_t dynamic_shared_limit(const void *fn) /* G.lock held */
{
    for (int i = 0; i < G.nattrs; i++)
        if (G.attrs[i].fn == fn) return (size_t)G.attrs[i].max_dynamic_shared;
    return DEFAULT_SHMEM_LIMIT;
}

cudaError_t simtLaunchKernel(const simt_kernel *k, dim3 grid, dim3 block, size_t shmem,
                             cudaStream_t st, const void *args, size_t args_size)
{
    double flops = next_flops, bytes = next_bytes;
    int has_cost = next_cost_set;
    next_cost_set = 0;
    next_flops = next_bytes = 0;
    ENTER();
    /* Limits: CUDA C++ Programming Guide, "Compute Capabilities". */
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (!block.x || !block.y || !block.z || !grid.x || !grid.y || !grid.z || block.x > 1024 ||
        block.y > 1024 || block.z > 64 || threads > 1024 || grid.x > 2147483647u ||
        grid.y > 65535 || grid.z > 65535)
        return ret(cudaErrorInvalidConfiguration);
    pthread_mutex_lock(&G.lock);
    int bad;
    struct simt_stream *s = resolve_stream(st, &bad);
    cudaError_t r = cudaSuccess;
    if (bad || s->device != cur_dev)
        r = cudaErrorInvalidResourceHandle;
    else if (shmem > dynamic_shared_limit(k->function))
        r = cudaErrorInvalidValue;
    else {
        simt_op *op = op_new(OP_KERNEL, cur_dev);
        void *copy = malloc(args_size ? args_size : 1);
        if (!op || !copy) {
            free(op);
            free(copy);
            r = cudaErrorMemoryAllocation;
        } else {
            memcpy(copy, args, args_size);
            op->launch = (simt_launch){k, grid, block, shmem, copy, cur_dev};
            op->flops = flops;
            op->declared_bytes = bytes;
            const simt_preset *h = G.preset;
            double t = h->launch_latency;
            if (has_cost) t += maxd(flops / h->fp32_flops, bytes / h->memory_bw);
            /* a high-priority stream's kernels (NCCL's, a comm stream's) run
             * beside the others on the modeled clock */
            r = enqueue(s, op, s->priority < 0 ? ENG_COMPUTE_HI : ENG_COMPUTE, t);
        }
    }
    pthread_mutex_unlock(&G.lock);
    return ret(r);
}

/* ---- op reports (simtSetOpHook) ----------------------------------------- */

static const char *const engine_label[ENG_COUNT] = {"kernel",
                                                    "memcpy H2D",
                                                    "memcpy D2H",
                                                    "memcpy D2D",
                                                    "memcpy peer",
                                                    "memcpy peer (network)",
                                                    "kernel (high priority)"};

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
    rec->name = op->kind == OP_KERNEL                       ? op->launch.kernel->name
                : op->kind == OP_MEMSET                     ? "memset"
                : op->engine >= 0 && op->engine < ENG_COUNT ? engine_label[op->engine]
                                                            : "memcpy";
}

void simtSetOpHook(simt_op_hook hook, void *user)
{
    simtFlushOps();
    if (npending) { /* left unfinished: dropped unreported */
        pthread_mutex_lock(&G.lock);
        for (int i = 0; i < npending; i++) op_unref(pending[i]);
        pthread_mutex_unlock(&G.lock);
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
        pthread_mutex_lock(&G.lock);
        while (n < BATCH && n < npending && pending[n]->done) {
            fill_record(pending[n], &rec[n]);
            n++;
        }
        for (int i = 0; i < n; i++) op_unref(pending[i]);
        memmove(pending, pending + n, (size_t)(npending - n) * sizeof *pending);
        npending -= n;
        pthread_mutex_unlock(&G.lock);
        for (int i = 0; i < n; i++) op_hook(&rec[i], op_hook_user);
        reported += n;
        if (n < BATCH) break; /* the next one is still running */
    }
    return reported;
}

/* ---- reset ------------------------------------------------------------- */

cudaError_t cudaDeviceReset(void)
{
    cudaError_t e = init();
    if (e) return ret(e);
    if (G.ndev == 0) return ret(cudaErrorNoDevice);
    pthread_mutex_lock(&G.lock);
    device *dv = &G.dev[cur_dev];
    sync_device(cur_dev);
    for (int i = G.nalloc - 1; i >= 0; i--)
        if (G.allocs[i].device == cur_dev) free_alloc_locked(i);
    while (dv->events) {
        struct simt_event *ev = dv->events;
        dv->events = ev->next;
        op_unref(ev->op);
        free(ev);
    }
    while (dv->streams) {
        struct simt_stream *s = dv->streams;
        dv->streams = s->next;
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
    while (dv->zombies > 0) pthread_cond_wait(&dv->done_cv, &G.lock);
    memset(dv->peer_enabled, 0, sizeof dv->peer_enabled);
    dv->sticky = cudaSuccess;
    dv->report[0] = '\0';
    pthread_mutex_unlock(&G.lock);
    last_err = cudaSuccess;
    return cudaSuccess;
}
