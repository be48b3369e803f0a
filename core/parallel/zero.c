/* zero.c — ZeRO stages 0-3 on the block model: see paralab/zero.h. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/device.h"
#include "paralab/kernels.h"
#include "paralab/nn.h"
#include "paralab/plural.h"
#include "paralab/trace.h"
#include "paralab/world.h"
#include "paralab/zero.h"

static int fail(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t cap, const char *fmt, ...)
{
    if (err && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#define ZFAIL(...) fail(z->error, sizeof z->error, __VA_ARGS__)
/* A CUDA call in a function of z: -1 with the call named. */
#define ZCUDA(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_) return ZFAIL("%s: %s", #call, cudaGetErrorName(e_));                               \
    } while (0)
/* A collective in a function of z: -1 with the communicator's message. */
#define ZCOMM(what, call)                                                                          \
    do {                                                                                           \
        if (call) return ZFAIL("%s: %s", what, pl_comm_last_error(z->comm));                       \
    } while (0)
/* A pl_tp call (the pieces of paralab/blocks.h): -1 with tp's message. */
#define ZTP(tp, call)                                                                              \
    do {                                                                                           \
        if (call) return ZFAIL("%s", (tp)->error[0] ? (tp)->error : #call);                        \
    } while (0)

/* ---- configuration, buckets, formulas (host only) ----------------------------------------- */

int pl_zero_check(const pl_zero_config *c, int n, char *err, size_t cap)
{
    if (n < 1 || n > PL_MAX_RANKS)
        return fail(err, cap, "--devices %d: data parallelism runs on 1..%d ranks", n,
                    PL_MAX_RANKS);
    if (c->stage < 0 || c->stage > 3)
        return fail(err, cap,
                    "--stage %d: ZeRO has stages 0 (plain data parallelism), 1 (optimizer "
                    "state sharded), 2 (and gradients) and 3 (and parameters)",
                    c->stage);
    if (c->accumulate < 1 || c->accumulate > 1024)
        return fail(err, cap, "--accumulate %d: the micro-steps per optimizer step must be 1..1024",
                    c->accumulate);
    if (pl_blocks_check(&c->model, 1, "--devices", 1, err, cap)) return -1;
    long nk = (long)n * c->accumulate;
    if (c->batch < 1 || c->batch % nk)
        return fail(err, cap,
                    "--batch %d: %d row%s do not split into %d rank%s of %d micro-step%s (B must "
                    "be a multiple of N k = %ld)",
                    c->batch, c->batch, pl_s(c->batch), n, pl_s(n), c->accumulate,
                    pl_s(c->accumulate), nk);
    return 0;
}

int pl_zero_buckets(const pl_blocks_config *m, int n, int rank, pl_zero_bucket *out, int max,
                    char *err, size_t cap)
{
    static const char *block_names[PL_BLOCKS_MAX] = {
        "b0",  "b1",  "b2",  "b3",  "b4",  "b5",  "b6",  "b7",  "b8",  "b9",  "b10", "b11", "b12",
        "b13", "b14", "b15", "b16", "b17", "b18", "b19", "b20", "b21", "b22", "b23", "b24", "b25",
        "b26", "b27", "b28", "b29", "b30", "b31", "b32", "b33", "b34", "b35", "b36", "b37", "b38",
        "b39", "b40", "b41", "b42", "b43", "b44", "b45", "b46", "b47", "b48", "b49", "b50", "b51",
        "b52", "b53", "b54", "b55", "b56", "b57", "b58", "b59", "b60", "b61", "b62", "b63"};
    if (n < 1 || n > PL_MAX_RANKS || rank < 0 || rank >= n)
        return fail(err, cap, "rank %d of %d: not a rank of 1..%d", rank, n, PL_MAX_RANKS);
    pl_blocks_layout l;
    if (pl_blocks_layout_make(&l, m, pl_blocks_whole(m), err, cap)) return -1;
    int U = m->layers + 2;
    if (U > max) return fail(err, cap, "%d units do not fit in %d", U, max);
    long full = 0, slice = 0;
    for (int u = 0; u < U; u++) {
        pl_zero_bucket *b = &out[u];
        if (u == 0) {
            b->name = "in";
            b->begin = l.in_w;
            b->end = l.in_end;
        } else if (u == U - 1) {
            b->name = "head";
            b->begin = l.head_begin;
            b->end = l.head_end;
        } else {
            b->name = block_names[u - 1];
            b->begin = l.block[u - 1].begin;
            b->end = l.block[u - 1].end;
        }
        long len = b->end - b->begin;
        b->shard = (len + n - 1) / n;
        b->padded = b->shard * n;
        b->full_at = full;
        b->slice_at = slice;
        long lo = (long)rank * b->shard, real = len - lo;
        b->real = real < 0 ? 0 : real > b->shard ? b->shard : real;
        full += b->padded;
        slice += b->shard;
    }
    return U;
}

long pl_zero_padded(const pl_blocks_config *m, int n)
{
    pl_zero_bucket b[PL_ZERO_UNITS_MAX];
    int U = pl_zero_buckets(m, n, 0, b, PL_ZERO_UNITS_MAX, NULL, 0);
    if (U < 0) return -1;
    long s = 0;
    for (int u = 0; u < U; u++) s += b[u].padded;
    return s;
}

/* The largest bucket's padded size and slice. */
static void largest(const pl_zero_bucket *b, int U, long *padded, long *shard)
{
    *padded = *shard = 0;
    for (int u = 0; u < U; u++) {
        if (b[u].padded > *padded) *padded = b[u].padded;
        if (b[u].shard > *shard) *shard = b[u].shard;
    }
}

int pl_zero_memory_of(const pl_zero_config *c, int n, pl_zero_memory *out, char *err, size_t cap)
{
    if (pl_zero_check(c, n, err, cap)) return -1;
    pl_zero_bucket b[PL_ZERO_UNITS_MAX];
    int U = pl_zero_buckets(&c->model, n, 0, b, PL_ZERO_UNITS_MAX, err, cap);
    if (U < 0) return -1;
    size_t F = sizeof(float), pad = (size_t)pl_zero_padded(&c->model, n), sh = pad / (size_t)n;
    size_t states = c->sgd ? 1 : 2;
    long maxpad, maxshard;
    largest(b, U, &maxpad, &maxshard);
    memset(out, 0, sizeof *out);
    out->params = F * (c->stage == 3 ? sh : pad);
    out->grads = F * (c->stage >= 2 ? sh : pad);
    out->optim = F * states * (c->stage == 0 ? pad : sh);
    if (c->stage >= 2)
        out->buffers = F * ((size_t)maxpad * (c->stage == 3 ? 4 : 2) +
                            (c->accumulate > 1 ? (size_t)maxshard : 0));
    return 0;
}

int pl_zero_traffic_of(const pl_zero_config *c, int n, pl_zero_traffic *out, char *err, size_t cap)
{
    if (pl_zero_check(c, n, err, cap)) return -1;
    pl_zero_bucket b[PL_ZERO_UNITS_MAX];
    int U = pl_zero_buckets(&c->model, n, 0, b, PL_ZERO_UNITS_MAX, err, cap);
    if (U < 0) return -1;
    memset(out, 0, sizeof *out);
    unsigned long long k = (unsigned long long)c->accumulate, sent = 0; /* c Ψ_pad */
    for (int u = 0; u < U; u++) sent += (unsigned long long)b[u].shard * (unsigned)(n - 1);
    unsigned calls = (unsigned)U;
    switch (c->stage) {
    case 0:
        out->all_reduce = 2 * sent;
        out->calls = calls;
        break;
    case 1:
        out->reduce_scatter = sent;
        out->all_gather = sent;
        out->calls = 2 * calls;
        break;
    case 2:
        out->reduce_scatter = k * sent;
        out->all_gather = sent;
        out->calls = (unsigned)(k + 1) * calls;
        break;
    default:
        out->reduce_scatter = k * sent;
        out->all_gather = 2 * k * sent;
        out->calls = (unsigned)(3 * k) * calls;
        break;
    }
    return 0;
}

/* ---- allocation, measured ----------------------------------------------------------------- */

/* n zeroed floats at *p, their bytes added to *counted: as the simulated
 * device counts them (cudaMemGetInfo before and after), or on a real GPU
 * the bytes asked for (its allocator rounds up, and cudaMemGetInfo moves
 * in pages of megabytes). */
static int zalloc(pl_zero *z, float **p, long n, size_t *counted)
{
    int dev = 0, measured = pl_device_memory_is_host();
    size_t before = 0, after = 0, total = 0, bytes = (size_t)n * sizeof(float);
    ZCUDA(cudaGetDevice(&dev));
    if (measured && pl_device_memory(dev, &before, &total)) return ZFAIL("cudaMemGetInfo failed");
    ZCUDA(cudaMalloc((void **)p, bytes));
    ZCUDA(cudaMemset(*p, 0, bytes));
    if (measured && pl_device_memory(dev, &after, &total)) return ZFAIL("cudaMemGetInfo failed");
    *counted += measured ? after - before : bytes;
    return 0;
}

/* ---- the memory notes --------------------------------------------------------------------- */

/* The steps whose buckets are noted as they are taken and given back (the
 * memory pane's bars moving); later steps only at rest. */
#define NOTE_STEPS 3

typedef struct {
    int pslot_unit[2], gslot_unit[2]; /* the unit a working bucket holds now; -1: none */
} slots;

static void note_memory(pl_zero *z, const slots *sl)
{
    if (!z->cfg.trace) return;
    size_t F = sizeof(float), inuse_p = 0, inuse_g = 0;
    for (int i = 0; i < 2; i++) {
        if (sl && sl->pslot_unit[i] >= 0)
            inuse_p += F * (size_t)z->bucket[sl->pslot_unit[i]].padded;
        if (sl && sl->gslot_unit[i] >= 0)
            inuse_g += F * (size_t)z->bucket[sl->gslot_unit[i]].padded;
    }
    int wr = pl_comm_world_rank(z->comm, z->rank);
    char name[32];
    snprintf(name, sizeof name, "mem params r%d", wr);
    pl_trace_note_metric(z->cfg.trace, name, (double)(z->mem.params + inuse_p));
    snprintf(name, sizeof name, "mem grads r%d", wr);
    pl_trace_note_metric(z->cfg.trace, name, (double)(z->mem.grads + inuse_g));
    snprintf(name, sizeof name, "mem optim r%d", wr);
    pl_trace_note_metric(z->cfg.trace, name, (double)z->mem.optim);
}

/* ---- the linear layers on one device ------------------------------------------------------- */

/* The reference linear layers (paralab/tp.h) with t = 1, called so that
 * their identity operators f and g have nothing to copy: the same kernels
 * on the same values, so the same bits, and no device-to-device copy on the
 * compute stream for the reduce-scatters' copies to queue behind (the
 * simulated GPU's copy engine takes copies in the order they are
 * enqueued). */
static int od_column_forward(pl_tp *tp, const float *x, float *xfull, const float *W,
                             const float *b, float *z, int k, int n)
{
    (void)xfull;
    return pl_tp_reference_ops.column_forward(tp, x, (float *)x, W, b, z, k, n);
}
static int od_row_forward(pl_tp *tp, const float *a, const float *W, const float *b, float *partial,
                          float *y, int k, int n)
{
    (void)partial;
    return pl_tp_reference_ops.row_forward(tp, a, W, b, y, y, k, n);
}
static int od_row_backward(pl_tp *tp, const float *dy, const float *a, const float *W, float *dW,
                           float *db, float *dyfull, float *da, int k, int n)
{
    (void)dyfull;
    return pl_tp_reference_ops.row_backward(tp, dy, a, W, dW, db, (float *)dy, da, k, n);
}
static int od_column_backward(pl_tp *tp, const float *dz, const float *xfull, const float *W,
                              float *dW, float *db, float *dxfull, float *dx, int k, int n)
{
    (void)dxfull;
    return pl_tp_reference_ops.column_backward(tp, dz, xfull, W, dW, db, dx, dx, k, n);
}
static const pl_tp_linear_ops one_device = {od_column_forward, od_row_forward, od_row_backward,
                                            od_column_backward};

/* ---- create, destroy ---------------------------------------------------------------------- */

void pl_zero_destroy(pl_zero *z)
{
    if (!z) return;
    for (int u = 0; u < z->units; u++) {
        /* the unit's own buffers back (create shared or aliased them) */
        if (z->own_dx[u]) z->unit[u].d_x = z->own_dx[u];
        pl_blocks_destroy(&z->unit[u]);
    }
    float *bufs[] = {z->params,     z->grads,      z->param_shard, z->grad_shard,
                     z->opt_m,      z->opt_v,      z->pbucket[0],  z->pbucket[1],
                     z->gbucket[0], z->gbucket[1], z->rsbuf,       z->norm_sq};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) cudaFree(bufs[i]);
    if (z->comm_stream) cudaStreamDestroy(z->comm_stream);
    for (int i = 0; i < PL_ZERO_EVENTS; i++)
        if (z->ev[i]) cudaEventDestroy(z->ev[i]);
    z->units = 0;
    z->params = z->grads = z->param_shard = z->grad_shard = z->opt_m = z->opt_v = NULL;
    z->pbucket[0] = z->pbucket[1] = z->gbucket[0] = z->gbucket[1] = z->rsbuf = z->norm_sq = NULL;
    z->comm_stream = NULL;
    memset(z->ev, 0, sizeof z->ev);
}

/* Sets unit u's parameter and gradient views for the stage's buffers
 * (stage 3's parameters and stage 2-3's gradients: a working bucket, set
 * when it is taken). */
static void set_views(pl_zero *z, int u, float *params, float *grads)
{
    pl_blocks *m = &z->unit[u];
    int dev = 0;
    cudaGetDevice(&dev);
    int n = (int)m->lay.nparams;
    if (params) m->params = pl_tensor_view(params, 1, n, dev);
    if (grads) m->grads = pl_tensor_view(grads, 1, n, dev);
}

static int create(pl_zero *z, unsigned long long seed)
{
    const pl_zero_config *c = &z->cfg;
    int n = z->n, r = z->rank, st = c->stage;
    char err[512];
    int U = pl_zero_buckets(&c->model, n, r, z->bucket, PL_ZERO_UNITS_MAX, err, sizeof err);
    if (U < 0) return ZFAIL("%s", err);
    z->units = U;
    z->psi = pl_blocks_count(&c->model);
    z->psi_pad = pl_zero_padded(&c->model, n);
    z->shard_floats = z->psi_pad / n;
    z->rows = c->batch / (n * c->accumulate);
    long pad = z->psi_pad, sh = z->shard_floats, states = c->sgd ? 1 : 2, maxpad, maxshard;
    largest(z->bucket, U, &maxpad, &maxshard);
    /* the units: activations and scratch; parameters and gradients are views */
    for (int u = 0; u < U; u++) {
        pl_blocks_part part = {.first = u == 0       ? 0
                                        : u == U - 1 ? c->model.layers
                                                     : u - 1,
                               .last = u == 0       ? 0
                                       : u == U - 1 ? c->model.layers
                                                    : u,
                               .input = u == 0,
                               .head = u == U - 1,
                               .tp = 1,
                               .tp_rank = 0};
        pl_blocks_layout lay;
        if (pl_blocks_layout_make(&lay, &c->model, part, err, sizeof err)) return ZFAIL("%s", err);
        if (lay.nparams != z->bucket[u].end - z->bucket[u].begin)
            return ZFAIL("unit %s: %ld parameters, its range %ld", z->bucket[u].name, lay.nparams,
                         z->bucket[u].end - z->bucket[u].begin);
        ZCUDA(pl_blocks_create_bare(&z->unit[u], &lay, z->rows, z->rows));
    }
    /* the units as one model, with nothing to copy between them: unit u
     * reads the residual stream where unit u - 1 wrote it, and backward
     * passes the stream's gradient on in one buffer (unit 0's d_x) */
    for (int u = 0; u < U; u++) {
        pl_blocks *m = &z->unit[u];
        if (u > 0)
            m->acts.x[m->lay.part.first] = z->unit[u - 1].acts.x[z->unit[u - 1].lay.part.last];
        z->own_dx[u] = m->d_x;
        m->d_x = z->unit[0].d_x;
    }
    /* the stage's buffers, measured */
    memset(&z->mem, 0, sizeof z->mem);
    if (st <= 2 && zalloc(z, &z->params, pad, &z->mem.params)) return -1;
    if (st == 3 && zalloc(z, &z->param_shard, sh, &z->mem.params)) return -1;
    if (st <= 1 && zalloc(z, &z->grads, pad, &z->mem.grads)) return -1;
    if (st >= 2 && zalloc(z, &z->grad_shard, sh, &z->mem.grads)) return -1;
    long state = st == 0 ? pad : sh;
    if (zalloc(z, &z->opt_m, state, &z->mem.optim)) return -1;
    if (states == 2 && zalloc(z, &z->opt_v, state, &z->mem.optim)) return -1;
    if (st >= 2) {
        for (int i = 0; i < 2; i++)
            if (zalloc(z, &z->gbucket[i], maxpad, &z->mem.buffers)) return -1;
        if (c->accumulate > 1 && zalloc(z, &z->rsbuf, maxshard, &z->mem.buffers)) return -1;
    }
    if (st == 3)
        for (int i = 0; i < 2; i++)
            if (zalloc(z, &z->pbucket[i], maxpad, &z->mem.buffers)) return -1;
    /* the one-device model's parameters for seed, into this rank's buffers */
    float *whole = malloc((size_t)z->psi * sizeof *whole);
    float *mine = malloc((size_t)(st == 3 ? sh : pad) * sizeof *mine);
    if (!whole || !mine) {
        free(whole);
        free(mine);
        return ZFAIL("out of host memory for the initial parameters (%ld floats)", z->psi);
    }
    pl_blocks_init_whole(&c->model, seed, whole);
    if (st == 3) {
        memset(mine, 0, (size_t)sh * sizeof *mine);
        for (int u = 0; u < U; u++) {
            const pl_zero_bucket *b = &z->bucket[u];
            memcpy(mine + b->slice_at, whole + b->begin + (long)r * b->shard,
                   (size_t)b->real * sizeof *mine);
        }
    } else {
        memset(mine, 0, (size_t)pad * sizeof *mine);
        for (int u = 0; u < U; u++) {
            const pl_zero_bucket *b = &z->bucket[u];
            memcpy(mine + b->full_at, whole + b->begin, (size_t)(b->end - b->begin) * sizeof *mine);
        }
    }
    cudaError_t e = cudaMemcpy(st == 3 ? z->param_shard : z->params, mine,
                               (size_t)(st == 3 ? sh : pad) * sizeof *mine, cudaMemcpyHostToDevice);
    free(whole);
    free(mine);
    if (e) return ZFAIL("copying the initial parameters: %s", cudaGetErrorName(e));
    for (int u = 0; u < U; u++)
        set_views(z, u, z->params ? z->params + z->bucket[u].full_at : NULL,
                  z->grads ? z->grads + z->bucket[u].full_at : NULL);
    if (c->overlap) { /* the highest priority, as Lab 07's: a ring step's reduction kernel
                          goes before the backward's next kernel (PyTorch DDP and NCCL
                          streams do the same) */
        int lo = 0, hi = 0;
        ZCUDA(cudaDeviceGetStreamPriorityRange(&lo, &hi));
        ZCUDA(cudaStreamCreateWithPriority(&z->comm_stream, cudaStreamNonBlocking, hi));
    }
    for (int i = 0; i < PL_ZERO_EVENTS; i++)
        ZCUDA(cudaEventCreateWithFlags(&z->ev[i], cudaEventDisableTiming));
    note_memory(z, NULL);
    return 0;
}

int pl_zero_create(pl_zero *z, const pl_zero_config *c, pl_comm *comm, unsigned long long seed,
                   cudaStream_t stream, char *err, size_t cap)
{
    memset(z, 0, sizeof *z);
    if (!comm) return fail(err, cap, "no communicator");
    z->cfg = *c;
    z->comm = comm;
    z->n = pl_comm_size(comm);
    z->rank = pl_comm_rank(comm);
    z->stream = stream;
    if (pl_zero_check(c, z->n, err, cap)) return -1;
    int rc = create(z, seed);
    /* every rank's buffers are made before anyone's first collective uses them */
    if (!rc && pl_comm_barrier(comm))
        rc = ZFAIL("the barrier after making the buffers: %s", pl_comm_last_error(comm));
    if (rc) {
        fail(err, cap, "%s", z->error);
        pl_zero_destroy(z);
    }
    return rc;
}

/* ---- one step ----------------------------------------------------------------------------- */

enum { EV_PFREE = 0, EV_PGOT = 2, EV_GREADY = 4, EV_GFREE = 6, EV_UNIT = 8, EV_JOIN = 9 };

/* A step's state: the working buckets' slots and the streams. */
typedef struct {
    pl_zero *z;
    cudaStream_t cs; /* the communication stream (the compute stream without overlap) */
    slots sl;
    int next_pslot, next_gslot;
    int note; /* note the buckets as they move (the first NOTE_STEPS steps) */
} run;

static void run_init(run *q, pl_zero *z)
{
    memset(q, 0, sizeof *q);
    q->z = z;
    q->cs = z->cfg.overlap ? z->comm_stream : z->stream;
    for (int i = 0; i < 2; i++) q->sl.pslot_unit[i] = q->sl.gslot_unit[i] = -1;
    q->note = z->cfg.trace && z->step < NOTE_STEPS;
}

static void emit(pl_zero *z, int kind, const char *what, int u, int micro, double mstart,
                 double start)
{
    if (!z->cfg.trace) return;
    pl_event e;
    memset(&e, 0, sizeof e);
    e.rank = pl_comm_world_rank(z->comm, z->rank);
    e.lane = PL_LANE_COMPUTE;
    e.kind = (uint8_t)kind;
    e.micro_batch = micro;
    e.layer = u;
    e.peer = -1;
    e.start = mstart;
    e.end = pl_trace_now();
    e.modeled_start = start;
    e.modeled_end = pl_device_stream_now(z->stream);
    if (u >= 0)
        snprintf(e.label, sizeof e.label, "%s %s", what, z->bucket[u].name);
    else
        snprintf(e.label, sizeof e.label, "%s", what);
    pl_trace_record(z->cfg.trace, &e);
}

/* Stage 3: starts gathering unit u's parameters into the next parameter
 * bucket, on the communication stream once the bucket's last user is
 * done; returns the slot. */
static int gather_start(run *q, int u, int *slot)
{
    pl_zero *z = q->z;
    const pl_zero_bucket *b = &z->bucket[u];
    int s = q->next_pslot;
    q->next_pslot ^= 1;
    ZCUDA(cudaStreamWaitEvent(q->cs, z->ev[EV_PFREE + s], 0));
    ZCOMM("the all-gather of a unit's parameters",
          pl_all_gather(z->comm, z->param_shard + b->slice_at, z->pbucket[s], (size_t)b->shard,
                        PL_FLOAT32, q->cs));
    ZCUDA(cudaEventRecord(z->ev[EV_PGOT + s], q->cs));
    q->sl.pslot_unit[s] = u;
    if (q->note) note_memory(z, &q->sl);
    *slot = s;
    return 0;
}

/* Stage 3: unit u runs from the parameter bucket `slot` (the compute
 * stream waits for its gather). */
static int gather_use(run *q, int u, int slot)
{
    pl_zero *z = q->z;
    ZCUDA(cudaStreamWaitEvent(z->stream, z->ev[EV_PGOT + slot], 0));
    set_views(z, u, z->pbucket[slot], NULL);
    return 0;
}

/* Stage 3: the bucket given back once the compute stream is past its use. */
static int gather_release(run *q, int slot)
{
    pl_zero *z = q->z;
    ZCUDA(cudaEventRecord(z->ev[EV_PFREE + slot], z->stream));
    q->sl.pslot_unit[slot] = -1;
    if (q->note) note_memory(z, &q->sl);
    return 0;
}

/* Stages 2-3: unit u's backward writes into the next gradient bucket, once
 * that bucket's last reduce-scatter has read it. */
static int grads_take(run *q, int u, int *slot)
{
    pl_zero *z = q->z;
    const pl_zero_bucket *b = &z->bucket[u];
    int s = q->next_gslot;
    q->next_gslot ^= 1;
    ZCUDA(cudaStreamWaitEvent(z->stream, z->ev[EV_GFREE + s], 0));
    long n = b->end - b->begin;
    if (b->padded > n) /* the padding: zero (a larger unit may have used the bucket) */
        ZCUDA(cudaMemsetAsync(z->gbucket[s] + n, 0, (size_t)(b->padded - n) * sizeof(float),
                              z->stream));
    set_views(z, u, NULL, z->gbucket[s]);
    q->sl.gslot_unit[s] = u;
    if (q->note) note_memory(z, &q->sl);
    *slot = s;
    return 0;
}

/* Stages 2-3: the bucket reduce-scattered into this rank's slice (added to
 * it after the first micro-step), on the communication stream. */
static int grads_reduce(run *q, int u, int slot, int micro)
{
    pl_zero *z = q->z;
    const pl_zero_bucket *b = &z->bucket[u];
    ZCUDA(cudaEventRecord(z->ev[EV_GREADY + slot], z->stream));
    ZCUDA(cudaStreamWaitEvent(q->cs, z->ev[EV_GREADY + slot], 0));
    float *dst = micro == 0 ? z->grad_shard + b->slice_at : z->rsbuf;
    ZCOMM("the reduce-scatter of a unit's gradients",
          pl_reduce_scatter(z->comm, z->gbucket[slot], dst, (size_t)b->shard, PL_FLOAT32, PL_SUM,
                            q->cs));
    if (micro > 0)
        ZCUDA(pl_k_reduce(z->grad_shard + b->slice_at, z->rsbuf, (size_t)b->shard, PL_FLOAT32,
                          PL_SUM, q->cs));
    ZCUDA(cudaEventRecord(z->ev[EV_GFREE + slot], q->cs));
    q->sl.gslot_unit[slot] = -1;
    if (q->note) note_memory(z, &q->sl);
    return 0;
}

/* The input of unit u: the micro-batch's samples, or the residual stream
 * leaving unit u - 1. */
static const float *unit_input(pl_zero *z, int u, const float *X)
{
    if (u == 0) return X;
    const pl_blocks *p = &z->unit[u - 1];
    return p->acts.x[p->lay.part.last];
}

/* Unit u's forward: unit 0 reads the micro-batch's rows in place, the
 * others the stream unit u - 1 left (create aliased it). */
static int unit_forward(pl_zero *z, pl_tp *tp, int u, const float *X)
{
    pl_blocks *m = &z->unit[u];
    if (u == 0) m->acts.input = (float *)X; /* read where it lies: nothing to copy */
    ZTP(tp, pl_blocks_forward(m, &m->acts, tp, &one_device, unit_input(z, u, X), NULL));
    return 0;
}

static int forward_unit(pl_zero *z, pl_tp *tp, int u, const float *X, int micro)
{
    double start = pl_device_stream_now(z->stream), mstart = pl_trace_now();
    if (unit_forward(z, tp, u, X)) return -1;
    emit(z, PL_EV_FORWARD, "F", u, micro, mstart, start);
    return 0;
}

/* Unit u's backward, piece by piece (pl_blocks_backward's order): the
 * gradient of the stream is d_x, which every unit shares. */
static int backward_unit(pl_zero *z, pl_tp *tp, int u, const float *X, int micro)
{
    double start = pl_device_stream_now(z->stream), mstart = pl_trace_now();
    pl_blocks *m = &z->unit[u];
    pl_blocks_acts *a = &m->acts;
    const pl_blocks_layout *l = &m->lay;
    if (l->part.head) ZTP(tp, pl_blocks_head_backward(m, a, tp, &one_device));
    for (int j = l->part.last - 1; j >= l->part.first; j--)
        ZTP(tp, pl_blocks_block_backward(m, a, tp, &one_device, j));
    if (l->part.input) ZTP(tp, pl_blocks_input_backward(m, a, tp, X));
    emit(z, PL_EV_BACKWARD, "B", u, micro, mstart, start);
    return 0;
}

/* One micro-step's forward and backward with the stage's communication.
 * Stage 3's uses of parameter buckets run in one sequence over the whole
 * step (F of every unit, then B from the last), each use's gather started
 * before the use before it runs: `*slot` is the gather of the current use,
 * already started. */
static int micro_step(run *q, pl_tp *tp, const float *X, const int *labels, int micro, int last,
                      int *pslot, float *loss_host)
{
    pl_zero *z = q->z;
    const pl_zero_config *c = &z->cfg;
    int U = z->units, st = c->stage;
    tp->accumulate = st <= 1 && micro > 0;
    for (int u = 0; u < U; u++) {
        int next = -1;
        if (st == 3) {
            /* the next use: F of u + 1, or B of the head after the last F */
            if (gather_start(q, u + 1 < U ? u + 1 : U - 1, &next)) return -1;
            if (gather_use(q, u, *pslot)) return -1;
        }
        if (forward_unit(z, tp, u, X, micro)) return -1;
        if (st == 3) {
            if (gather_release(q, *pslot)) return -1;
            *pslot = next;
        }
    }
    pl_blocks *head = &z->unit[U - 1];
    ZTP(tp, pl_blocks_loss(head, &head->acts, tp, labels, 1.0f / (float)c->batch));
    ZCUDA(cudaMemcpyAsync(loss_host, head->loss_sum, sizeof *loss_host, cudaMemcpyDeviceToHost,
                          z->stream));
    for (int u = U - 1; u >= 0; u--) {
        int next = -1, gslot = -1;
        if (st == 3) {
            /* the next use: B of u - 1, or F of the input layer in the next micro-step */
            if (u > 0 || !last)
                if (gather_start(q, u > 0 ? u - 1 : 0, &next)) return -1;
            if (gather_use(q, u, *pslot)) return -1;
        }
        if (st >= 2 && grads_take(q, u, &gslot)) return -1;
        if (backward_unit(z, tp, u, X, micro)) return -1;
        if (st == 3) {
            if (gather_release(q, *pslot)) return -1;
            *pslot = next;
        }
        if (st >= 2 && grads_reduce(q, u, gslot, micro)) return -1;
        if (st == 0 && last) { /* plain DP: the bucket all-reduced as soon as it is final */
            const pl_zero_bucket *b = &z->bucket[u];
            ZCUDA(cudaEventRecord(z->ev[EV_UNIT], z->stream));
            ZCUDA(cudaStreamWaitEvent(q->cs, z->ev[EV_UNIT], 0));
            ZCOMM("the all-reduce of a bucket's gradients",
                  pl_all_reduce(z->comm, z->grads + b->full_at, z->grads + b->full_at,
                                (size_t)b->padded, PL_FLOAT32, PL_SUM, q->cs));
        }
    }
    return 0;
}

int pl_zero_step(pl_zero *z, const float *X, const int *labels, float *loss_sum)
{
    z->error[0] = '\0';
    const pl_zero_config *c = &z->cfg;
    int k = c->accumulate, R = z->rows, st = c->stage;
    run q;
    run_init(&q, z);
    pl_tp tp;
    char err[256];
    if (pl_tp_init(&tp, NULL, 0, R, z->stream, err, sizeof err)) return ZFAIL("%s", err);
    float *losses = calloc((size_t)k, sizeof *losses);
    if (!losses) return ZFAIL("out of host memory");
    z->step_start = pl_device_stream_now(z->stream);
    /* every bucket free: the events' first waits find them recorded */
    int rc = 0;
    for (int i = 0; i < 8 && !rc; i++)
        if (cudaEventRecord(z->ev[i], z->stream)) rc = ZFAIL("cudaEventRecord failed");
    if (!rc && c->overlap && cudaStreamWaitEvent(q.cs, z->ev[0], 0))
        rc = ZFAIL("cudaStreamWaitEvent failed");
    int pslot = -1;
    if (!rc && st == 3) rc = gather_start(&q, 0, &pslot);
    for (int i = 0; i < k && !rc; i++)
        rc = micro_step(&q, &tp, X + (size_t)i * R * c->model.inputs, labels + (size_t)i * R, i,
                        i == k - 1, &pslot, &losses[i]);
    if (!rc && c->overlap) { /* the compute stream waits for the last reduction */
        if (cudaEventRecord(z->ev[EV_JOIN], q.cs) ||
            cudaStreamWaitEvent(z->stream, z->ev[EV_JOIN], 0))
            rc = ZFAIL("joining the communication stream failed");
    }
    if (!rc) {
        cudaError_t e = cudaStreamSynchronize(z->stream);
        if (e) rc = ZFAIL("the step: %s", cudaGetErrorName(e));
    }
    z->comm_end = c->overlap ? pl_device_stream_now(q.cs) : 0;
    z->step_end = pl_device_stream_now(z->stream);
    if (!rc && loss_sum) {
        double s = 0;
        for (int i = 0; i < k; i++) s += losses[i];
        *loss_sum = (float)s;
    }
    free(losses);
    return rc;
}

/* ---- the optimizer ------------------------------------------------------------------------ */

void pl_zero_count_step(pl_zero *z) { z->step++; }

int pl_zero_optimize_range(pl_zero *z, float *params, const float *grads, long state_off, long n,
                           float lr)
{
    long have = z->cfg.stage == 0 ? z->psi_pad : z->shard_floats;
    const char *opt = z->cfg.sgd ? "SGD momentum" : "AdamW";
    if (!params || !grads || n < 0 || state_off < 0 || state_off + n > have)
        return ZFAIL("the %s state is %ld floats on each rank (%s); floats [%ld, %ld) are outside "
                     "it: a rank updates only its own slices",
                     opt, have, z->cfg.stage == 0 ? "a full copy" : "its shard", state_off,
                     state_off + n);
    if (n == 0) return 0;
    if (z->step < 1) return ZFAIL("pl_zero_optimize_range before pl_zero_count_step");
    if (z->cfg.sgd)
        ZCUDA(pl_k_sgd(params, z->opt_m + state_off, grads, n, lr, 0.9f, 0.0f, z->stream));
    else
        ZCUDA(pl_k_adamw(params, z->opt_m + state_off, z->opt_v + state_off, grads, n, lr, 0.9f,
                         0.999f, 1e-8f, 0.01f, z->step, z->stream));
    return 0;
}

int pl_zero_optimize(pl_zero *z, float lr)
{
    pl_zero_count_step(z);
    for (int u = 0; u < z->units; u++) {
        const pl_zero_bucket *b = &z->bucket[u];
        long mine = b->full_at + (long)z->rank * b->shard;
        int rc = 0;
        switch (z->cfg.stage) {
        case 0:
            rc = pl_zero_optimize_range(z, z->params + b->full_at, z->grads + b->full_at,
                                        b->full_at, b->end - b->begin, lr);
            break;
        case 1:
            rc = pl_zero_optimize_range(z, z->params + mine, z->grads + mine, b->slice_at, b->real,
                                        lr);
            break;
        case 2:
            rc = pl_zero_optimize_range(z, z->params + mine, z->grad_shard + b->slice_at,
                                        b->slice_at, b->real, lr);
            break;
        default:
            rc = pl_zero_optimize_range(z, z->param_shard + b->slice_at,
                                        z->grad_shard + b->slice_at, b->slice_at, b->real, lr);
            break;
        }
        if (rc) return -1;
    }
    return 0;
}

/* Each bucket's parameters all-gathered in place from the ranks' slices. */
static int gather_params(pl_zero *z)
{
    for (int u = 0; u < z->units; u++) {
        const pl_zero_bucket *b = &z->bucket[u];
        float *full = z->params + b->full_at;
        ZCOMM("the all-gather of the parameters",
              pl_all_gather(z->comm, full + (long)z->rank * b->shard, full, (size_t)b->shard,
                            PL_FLOAT32, z->stream));
    }
    return 0;
}

int pl_zero_update_stage1(pl_zero *z, float lr)
{
    if (z->cfg.stage != 1) return ZFAIL("pl_zero_update_stage1 on a stage-%d engine", z->cfg.stage);
    for (int u = 0; u < z->units; u++) {
        const pl_zero_bucket *b = &z->bucket[u];
        float *full = z->grads + b->full_at;
        ZCOMM("the reduce-scatter of the gradients",
              pl_reduce_scatter(z->comm, full, full + (long)z->rank * b->shard, (size_t)b->shard,
                                PL_FLOAT32, PL_SUM, z->stream));
    }
    if (pl_zero_optimize(z, lr)) return -1;
    return gather_params(z);
}

int pl_zero_update(pl_zero *z, float lr) { return pl_zero_update_with(z, lr, NULL); }

int pl_zero_update_with(pl_zero *z, float lr, int (*stage1)(pl_zero *z, float lr))
{
    z->error[0] = '\0';
    double start = pl_device_stream_now(z->stream), mstart = pl_trace_now();
    int rc = 0;
    switch (z->cfg.stage) {
    case 1:
        rc = stage1 ? stage1(z, lr) : pl_zero_update_stage1(z, lr);
        break;
    case 2:
        rc = pl_zero_optimize(z, lr);
        if (!rc) rc = gather_params(z);
        break;
    default: /* 0: every rank the whole update; 3: the shard only, the next forward gathers */
        rc = pl_zero_optimize(z, lr);
        break;
    }
    if (rc) return stage1 && z->cfg.stage == 1 ? rc : -1; /* a caller's code passes through */
    emit(z, PL_EV_OPTIMIZER, "update", -1, -1, mstart, start);
    ZCUDA(cudaStreamSynchronize(z->stream));
    z->step_end = pl_device_stream_now(z->stream);
    if (z->cfg.trace && z->step <= NOTE_STEPS) note_memory(z, NULL);
    return 0;
}

int pl_zero_clip_grad_norm(pl_zero *z, float max_norm, float *norm)
{
    z->error[0] = '\0';
    int st = z->cfg.stage;
    if (st == 1)
        return ZFAIL("at stage 1 the gradients are reduce-scattered inside the update: the norm "
                     "of the mean gradient exists only there (clip at stages 0, 2 and 3)");
    if (!z->norm_sq) ZCUDA(cudaMalloc((void **)&z->norm_sq, sizeof(float)));
    ZCUDA(cudaMemsetAsync(z->norm_sq, 0, sizeof(float), z->stream));
    for (int u = 0; u < z->units; u++) {
        const pl_zero_bucket *b = &z->bucket[u];
        const float *g = st == 0 ? z->grads + b->full_at : z->grad_shard + b->slice_at;
        long n = st == 0 ? b->end - b->begin : b->real; /* the padding left out */
        if (n > 0) ZCUDA(pl_k_matmul(z->norm_sq, g, g, 1, 1, (int)n, PL_NN, 1, z->stream));
    }
    /* stage 0: every rank holds the whole mean gradient; 2-3: each its slices */
    if (st >= 2)
        ZCOMM("the gradient norm's all-reduce",
              pl_all_reduce(z->comm, z->norm_sq, z->norm_sq, 1, PL_FLOAT32, PL_SUM, z->stream));
    float sq = 0;
    ZCUDA(cudaMemcpyAsync(&sq, z->norm_sq, sizeof sq, cudaMemcpyDeviceToHost, z->stream));
    ZCUDA(cudaStreamSynchronize(z->stream));
    float nrm = sqrtf(sq);
    if (norm) *norm = nrm;
    if (max_norm > 0 && nrm > max_norm) /* llm.c: grad_scale = grad_clip / norm */
        ZCUDA(pl_k_scale(st == 0 ? z->grads : z->grad_shard, st == 0 ? z->psi_pad : z->shard_floats,
                         max_norm / nrm, z->stream));
    return 0;
}

/* ---- evaluation, the host's view ---------------------------------------------------------- */

int pl_zero_evaluate(pl_zero *z, const float *X, const int *labels, int rows, float *loss_sum,
                     int *correct)
{
    z->error[0] = '\0';
    const pl_zero_config *c = &z->cfg;
    int U = z->units;
    if (rows < 0) return ZFAIL("evaluate: %d rows", rows);
    pl_blocks *head = &z->unit[U - 1];
    ZCUDA(pl_blocks_reset_correct(head, z->stream));
    run q;
    run_init(&q, z);
    q.note = 0;
    double sum = 0;
    for (int i = 0; i < 8; i++) ZCUDA(cudaEventRecord(z->ev[i], z->stream));
    if (c->overlap) ZCUDA(cudaStreamWaitEvent(q.cs, z->ev[0], 0));
    for (int at = 0; at < rows; at += z->rows) {
        int R = rows - at < z->rows ? rows - at : z->rows;
        pl_tp tp;
        char err[256];
        if (pl_tp_init(&tp, NULL, 0, R, z->stream, err, sizeof err)) return ZFAIL("%s", err);
        const float *Xi = X + (size_t)at * c->model.inputs;
        for (int u = 0; u < U; u++) {
            int slot = -1;
            if (c->stage == 3 && (gather_start(&q, u, &slot) || gather_use(&q, u, slot))) return -1;
            if (unit_forward(z, &tp, u, Xi)) return -1;
            if (c->stage == 3 && gather_release(&q, slot)) return -1;
        }
        ZTP(&tp, pl_blocks_loss(head, &head->acts, &tp, labels + at, 1.0f));
        float l = 0;
        ZCUDA(cudaMemcpyAsync(&l, head->loss_sum, sizeof l, cudaMemcpyDeviceToHost, z->stream));
        ZCUDA(cudaStreamSynchronize(z->stream));
        sum += l;
    }
    int right = 0;
    ZCUDA(cudaMemcpyAsync(&right, head->correct, sizeof right, cudaMemcpyDeviceToHost, z->stream));
    ZCUDA(cudaStreamSynchronize(z->stream));
    if (loss_sum) *loss_sum = (float)sum;
    if (correct) *correct = right;
    return 0;
}

/* Where bucket b's slice of this rank lives on the device, for what (0 the
 * parameters, 1 the gradients, 2 and 3 the optimizer's m and v): in the
 * full buffer or in the shard, by the stage. */
static const float *slice_src(const pl_zero *z, const pl_zero_bucket *b, int what)
{
    int st = z->cfg.stage;
    long full = b->full_at + (long)z->rank * b->shard, slice = b->slice_at;
    switch (what) {
    case 0:
        return st == 3 ? z->param_shard + slice : z->params + full;
    case 1:
        return st >= 2 ? z->grad_shard + slice : z->grads + full;
    default: {
        const float *s = what == 2 ? z->opt_m : z->opt_v;
        return st == 0 ? s + full : s + slice;
    }
    }
}

/* Each of this rank's slices of what into host memory: into whole at its
 * place in the model (packed 0), or into row at its place in the shard
 * (packed 1). */
static int slices_out(pl_zero *z, float *dst, int what, int packed)
{
    z->error[0] = '\0';
    if (what < 0 || what > 3) return ZFAIL("slices to the host: what %d is not 0..3", what);
    if (what == 3 && z->cfg.sgd) return ZFAIL("SGD keeps no second moment");
    ZCUDA(cudaStreamSynchronize(z->stream));
    for (int u = 0; u < z->units; u++) {
        const pl_zero_bucket *b = &z->bucket[u];
        if (b->real <= 0) continue;
        float *to = packed ? dst + b->slice_at : dst + b->begin + (long)z->rank * b->shard;
        ZCUDA(cudaMemcpy(to, slice_src(z, b, what), (size_t)b->real * sizeof(float),
                         cudaMemcpyDeviceToHost));
    }
    return 0;
}

int pl_zero_slices_to_host(pl_zero *z, float *whole, int what)
{
    return slices_out(z, whole, what, 0);
}

int pl_zero_shard_to_host(pl_zero *z, float *row, int what) { return slices_out(z, row, what, 1); }

int pl_zero_shard_place(pl_zero *z, int q, const float *row, float *whole)
{
    z->error[0] = '\0';
    if (q < 0 || q >= z->n) return ZFAIL("shard_place: rank %d is not 0..%d", q, z->n - 1);
    pl_zero_bucket b[PL_ZERO_UNITS_MAX];
    char why[256];
    int U = pl_zero_buckets(&z->cfg.model, z->n, q, b, PL_ZERO_UNITS_MAX, why, sizeof why);
    if (U != z->units) return ZFAIL("shard_place: rank %d's buckets: %s", q, why);
    for (int u = 0; u < U; u++)
        if (b[u].real > 0)
            memcpy(whole + b[u].begin + (long)q * b[u].shard, row + b[u].slice_at,
                   (size_t)b[u].real * sizeof(float));
    return 0;
}

int pl_zero_params_to_host(pl_zero *z, float *whole)
{
    z->error[0] = '\0';
    if (z->cfg.stage == 3)
        return ZFAIL("a stage-3 rank holds only its slices of the parameters "
                     "(pl_zero_slices_to_host)");
    ZCUDA(cudaStreamSynchronize(z->stream));
    for (int u = 0; u < z->units; u++) {
        const pl_zero_bucket *b = &z->bucket[u];
        ZCUDA(cudaMemcpy(whole + b->begin, z->params + b->full_at,
                         (size_t)(b->end - b->begin) * sizeof(float), cudaMemcpyDeviceToHost));
    }
    return 0;
}
