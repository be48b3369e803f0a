/* world.c — see paralab/world.h. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "paralab/trace.h"
#include "paralab/world.h"
#include "paralab/device.h"
#include "paralab/dist.h"

typedef struct {
    pl_rank r;
    pl_rank_fn fn;
    int status;
    pthread_t thread;
    _Atomic int *first_failed; /* the rank that failed first: the cause */
    const int *devs;           /* the device of every rank */
    int n;
    double modeled_start; /* the simulated GPU's modeled "now" at the start */
    pl_trace *trace;      /* NULL: not traced */
} rank_slot;

/* Where the world reports them (pl_device_caps()->op_reports: the simulated
 * GPU), each finished kernel, copy and memset of a rank comes on the rank's
 * own thread (pl_device_set_op_hook): one event each in the rank's ring:
 * kernels on the compute lane, copies and memsets on the copy lane. */
static void record_op(const pl_device_op *op, void *user)
{
    const rank_slot *s = user;
    pl_event e = {.rank = s->r.rank,
                  .lane = op->kind == PL_OP_KERNEL ? PL_LANE_COMPUTE : PL_LANE_COPY,
                  .kind = op->kind == PL_OP_KERNEL ? PL_EV_KERNEL : PL_EV_COPY,
                  .stream = (uint8_t)(op->stream < 254 ? op->stream + 1 : 255),
                  .micro_batch = -1,
                  .layer = -1,
                  .peer = -1,
                  .bytes = (uint64_t)op->bytes,
                  .flops = op->flops,
                  .start = op->start,
                  .end = op->end,
                  .modeled_start = op->modeled_start,
                  .modeled_end = op->modeled_end};
    if (op->peer_device >= 0) /* the rank that owns the other device, if any */
        for (int q = 0; q < s->n; q++)
            if (q != s->r.rank && s->devs[q] == op->peer_device) {
                e.peer = q;
                break;
            }
    snprintf(e.label, sizeof e.label, "%s", op->name);
    pl_trace_record(s->trace, &e);
}

void pl_metric(const pl_rank *r, const char *name, double value)
{
    if (r) pl_trace_note_metric(r->trace, name, value);
}

void pl_rank_note_memory(const pl_rank *r)
{
    if (!r || !r->trace) return;
    int current = -1;
    if (cudaGetDevice(&current) != cudaSuccess) current = -1;
    size_t used = 0, total = 0;
    if (pl_device_memory(r->device, &used, &total) == 0 && total > 0)
        pl_trace_note_memory(r->trace, r->rank, (double)used, (double)total);
    if (current >= 0 && current != r->device) cudaSetDevice(current);
}

static void *rank_main(void *p)
{
    rank_slot *s = p;
    pl_rank *r = &s->r;
    pl_device_start_clock(s->modeled_start); /* every rank starts at the same modeled time */
    int reported = s->trace && pl_device_set_op_hook(record_op, s) == 0;
    cudaError_t e = cudaSetDevice(r->device);
    if (!e) e = cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking);
    if (e) {
        snprintf(r->error, sizeof r->error, "cannot use device %d: %s (%s)", r->device,
                 cudaGetErrorName(e), cudaGetErrorString(e));
        s->status = 1;
    } else {
        /* peer access to the other ranks' devices where the hardware has it
         * (NVLink on the simulated presets): copies go device to device */
        for (int q = 0; q < s->n; q++) {
            int d = s->devs[q], can = 0; /* -1: a rank of another process */
            if (d >= 0 && d != r->device &&
                cudaDeviceCanAccessPeer(&can, r->device, d) == cudaSuccess && can &&
                cudaDeviceEnablePeerAccess(d, 0) != cudaSuccess)
                cudaGetLastError(); /* already enabled: fine */
        }
        pl_rank_note_memory(r); /* the device as the rank finds it */
        s->status = s->fn(r);
        cudaError_t se = cudaStreamSynchronize(r->stream);
        if (!s->status && se) {
            snprintf(r->error, sizeof r->error, "the rank's stream failed: %s (%s)",
                     cudaGetErrorName(se), cudaGetErrorString(se));
            s->status = 1;
        }
        cudaStreamDestroy(r->stream);
        pl_rank_note_memory(r); /* and as it leaves it */
    }
    if (s->status) {
        int none = -1;
        atomic_compare_exchange_strong(s->first_failed, &none, r->rank);
        pl_comm_abort(r->comm, r->error[0] ? r->error : "its function failed");
    }
    if (reported) {
        cudaDeviceSynchronize(); /* after the abort: reports what the rank left */
        pl_device_set_op_hook(NULL, NULL);
    }
    return NULL;
}

int pl_world_run(int n, const int *devices, double comm_timeout_s, pl_rank_fn fn, void *arg,
                 char *err, size_t err_size)
{
    return pl_world_run_traced(n, devices, comm_timeout_s, NULL, fn, arg, err, err_size);
}

int pl_world_run_traced(int n, const int *devices, double comm_timeout_s, struct pl_trace *trace,
                        pl_rank_fn fn, void *arg, char *err, size_t err_size)
{
    pl_world_config cfg = {n, devices, comm_timeout_s, trace, NULL, PL_COMM_LOCAL, 0, 0, 0};
    return pl_world_run_config(&cfg, fn, arg, err, err_size);
}

int pl_world_run_config(const pl_world_config *cfg, pl_rank_fn fn, void *arg, char *err,
                        size_t err_size)
{
    int n = cfg->n;
    const int *devices = cfg->devices;
    double comm_timeout_s = cfg->comm_timeout_s;
    struct pl_trace *trace = cfg->trace;
    if (err_size) err[0] = '\0';
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e || ndev < 1) {
        snprintf(err, err_size, "no device: %s", cudaGetErrorString(e));
        return 1;
    }
    if (n < 1 || n > PL_MAX_RANKS) {
        snprintf(err, err_size, "world size %d is not from 1 to %d", n, PL_MAX_RANKS);
        return 1;
    }
    /* a world of several processes (mpirun, paralab/dist.h): this process
     * runs global ranks lo .. lo + nl - 1, thread t on its device t */
    int lo = 0, nl = n, dist = cfg->distributed && pl_dist_active();
    int dev[PL_MAX_RANKS];
    if (dist) {
        int T = cfg->ranks_per_process > 0 ? cfg->ranks_per_process : 1, P = pl_dist_procs();
        if (n != P * T) {
            snprintf(err, err_size,
                     "--devices %d: under mpirun the world is %d processes x %d rank%s per "
                     "process (--ranks-per-process %d) = %d ranks: give --devices %d",
                     n, P, T, T == 1 ? "" : "s", T, P * T, P * T);
            return 1;
        }
        if (T > ndev) {
            snprintf(err, err_size,
                     "--ranks-per-process %d: each process has %d devices (devices 0..%d)", T, ndev,
                     ndev - 1);
            return 1;
        }
        lo = pl_dist_proc() * T;
        nl = T;
        for (int r = 0; r < n; r++) dev[r] = r >= lo && r < lo + T ? r - lo : -1;
    }
    for (int r = 0; r < n && !dist; r++) {
        dev[r] = devices ? devices[r] : r % ndev;
        if (dev[r] < 0 || dev[r] >= ndev) {
            snprintf(err, err_size, "rank %d: device %d does not exist (devices 0..%d)", r, dev[r],
                     ndev - 1);
            return 1;
        }
    }
    pl_comm *comms[PL_MAX_RANKS];
    pl_comm_engine_choice engine = cfg->comm;
    if (engine == PL_COMM_AUTO) engine = pl_comm_auto_engine(n, dev);
    if (dist) {
        char why[512];
        if (pl_comm_create_dist(n, nl, dev + lo, comm_timeout_s, comms, why, sizeof why) !=
            PL_COMM_OK) {
            snprintf(err, err_size, "cannot create the %s communicator of %d ranks: %s",
                     pl_device_caps()->modeled ? "MPI" : "NCCL (over MPI)", n, why);
            return 1;
        }
    } else if (engine == PL_COMM_NCCL) {
        char why[512];
        if (pl_comm_create_nccl(n, dev, comms, why, sizeof why) != PL_COMM_OK) {
            snprintf(err, err_size, "cannot create the NCCL communicator of %d ranks: %s", n, why);
            return 1;
        }
    } else {
        char why[512];
        if (pl_comm_create(n, dev, comm_timeout_s, comms, why, sizeof why) != PL_COMM_OK) {
            snprintf(err, err_size, "cannot create the world communicator of %d ranks: %s", n, why);
            return 1;
        }
    }
    pl_comm_set_trace(comms[0], trace);
    pl_comm_set_chunk_bytes(comms[0], cfg->comm_chunk_bytes);
    rank_slot *s = calloc((size_t)nl, sizeof *s);
    if (!s) {
        pl_comm_destroy_all(comms, nl);
        snprintf(err, err_size, "out of memory");
        return 1;
    }
    _Atomic int first_failed = -1;
    double modeled_start = pl_device_now();
    if (dist) modeled_start = pl_dist_max(modeled_start); /* one start in every process */
    int started = 0, failed = 0;
    for (int r = 0; r < nl; r++) {
        s[r].r = (pl_rank){.rank = lo + r,
                           .size = n,
                           .device = dev[lo + r],
                           .comm = comms[r],
                           .arg = arg,
                           .player = cfg->player,
                           .trace = trace};
        s[r].fn = fn;
        s[r].first_failed = &first_failed;
        s[r].devs = dev;
        s[r].n = n;
        s[r].trace = trace;
        s[r].modeled_start = modeled_start;
        if (pthread_create(&s[r].thread, NULL, rank_main, &s[r]) != 0) {
            snprintf(err, err_size, "cannot start the thread of rank %d", lo + r);
            pl_comm_abort(comms[0], "a rank's thread could not start");
            failed = 1;
            break;
        }
        started++;
    }
    for (int r = 0; r < started; r++) pthread_join(s[r].thread, NULL);
    int f = atomic_load(&first_failed);
    if (!failed && f >= 0) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "rank %d: ", f);
        const char *msg = s[f - lo].r.error[0] ? s[f - lo].r.error : "failed";
        /* communicator messages already begin with their rank */
        snprintf(err, err_size, "%s%s", strncmp(msg, prefix, strlen(prefix)) ? prefix : "", msg);
        failed = 1;
    }
    /* PARALAB_LEDGER=1: each rank's ledger on stderr, one line each, for
     * comparing a run of several processes with one of one (tests/mpi.sh) */
    const char *show = getenv("PARALAB_LEDGER");
    if (cfg->distributed && show && !strcmp(show, "1"))
        for (int r = 0; r < nl; r++) {
            pl_ledger l = pl_comm_ledger(comms[r]);
            char calls[512] = "";
            size_t len = 0;
            for (int k = 0; k < PL_NUM_CALLS && len < sizeof calls; k++)
                if (l.calls[k]) {
                    int w = snprintf(calls + len, sizeof calls - len, " %s %llu",
                                     pl_comm_call_name((pl_comm_call)k),
                                     (unsigned long long)l.calls[k]);
                    if (w > 0) len += (size_t)w;
                }
            fprintf(stderr,
                    "ledger rank %d: sent %llu B in %llu messages, received %llu B in %llu "
                    "messages; calls:%s\n",
                    lo + r, (unsigned long long)l.bytes_sent, (unsigned long long)l.messages_sent,
                    (unsigned long long)l.bytes_received, (unsigned long long)l.messages_received,
                    calls);
        }
    pl_comm_destroy_all(comms, nl);
    free(s);
    return failed;
}
