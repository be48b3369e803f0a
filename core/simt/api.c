/*
 * api.c — the CUDA runtime API of <cuda_runtime.h> (core/simt/cudart) over
 * the simulated devices: start-up, errors, devices and their properties,
 * streams and events, kernel launches and cudaDeviceReset; api_memory.c has
 * the memory calls (allocations, copies, memsets, peers). simt/simt.h
 * documents the simulator-only calls.
 *
 * The API surface checks arguments, keeps each host thread's current device
 * and last error, and hands the work to the parts below it, lowest first:
 *   config.c   the settings, from the environment (SIMT_DEVICES, SIMT_GPU...)
 *   alloc.c    device memory: the arena, the allocation table and its bounds,
 *              pinned host blocks
 *   cost.c     the cost model: every op's modeled duration
 *   stream.c   streams, events and the op queue (worker threads, the modeled
 *              clock, op reports)
 *   emu.c      the SIMT emulator, which runs a kernel on a stream's worker
 * Each part has its own small header; none includes one from above it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "api.h"
#include "config.h"
#include "cost.h"
#include "emu.h"
#include "record.h"
#include "stream.h"

#define DEFAULT_SHMEM_LIMIT (48u * 1024u) /* [CPG] static + dynamic without opt-in */

typedef struct func_attr {
    const void *fn;
    int max_dynamic_shared;
} func_attr;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cudaError_t init_err;
static func_attr *attrs; /* cudaFuncSetAttribute's, under the runtime lock */
static int nattrs;

_Thread_local int simt_cur_dev;
static _Thread_local cudaError_t last_err;
static _Thread_local double next_flops, next_bytes;
static _Thread_local int next_cost_set, next_eager;

/* ---- initialisation --------------------------------------------------- */

static void init_once(void)
{
    init_err = simt_config_read();
    if (init_err) return;
    if (simt_cfg.plain >= 0) simt_plain_calls = simt_cfg.plain;
    if (simt_cfg.races >= 0) simtSetRaceCheck(simt_cfg.races);
    if (simt_cfg.schedule >= 0) {
        simt_schedule_kind = simt_cfg.schedule;
        if (simt_cfg.schedule == 2) simt_schedule_seed = simt_cfg.seed;
    }
    init_err = simt_alloc_init(simt_cfg.ndev, simt_cfg.capacity);
    if (init_err) return;
    simt_streams_init(simt_cfg.ndev);
}

cudaError_t simt_init(void)
{
    pthread_once(&once, init_once);
    return init_err;
}

void simtSetLazyLegacy(int on)
{
    if (simt_init() == cudaSuccess) simt_set_lazy_legacy(on);
}

cudaError_t simt_ret(cudaError_t e)
{
    if (e != cudaSuccess) last_err = e;
    return e;
}

cudaError_t simt_enter(const char *fn)
{
    cudaError_t e = simt_init();
    if (e) return e;
    const char *k = simt_emu_current_kernel();
    if (k) {
        if (!simt_cfg.quiet)
            fprintf(stderr,
                    "simt: %s called from kernel %s: runtime calls from device code (dynamic "
                    "parallelism) are not simulated\n",
                    fn, k);
        return cudaErrorNotSupported;
    }
    if (simt_cfg.ndev == 0) return cudaErrorNoDevice;
    return simt_sticky(simt_cur_dev);
}

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
    if (simt_init() == cudaSuccess && simt_cfg.ndev > 0 && simt_sticky(simt_cur_dev))
        return simt_sticky(simt_cur_dev); /* sticky: cannot be cleared */
    cudaError_t e = last_err;
    last_err = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    if (simt_init() == cudaSuccess && simt_cfg.ndev > 0 && simt_sticky(simt_cur_dev))
        return simt_sticky(simt_cur_dev);
    return last_err;
}

const char *simtLastFaultReport(void)
{
    if (simt_init() != cudaSuccess || simt_cfg.ndev == 0) return "";
    return simt_fault_report(simt_cur_dev);
}

/* ---- devices ----------------------------------------------------------- */

cudaError_t cudaGetDeviceCount(int *count)
{
    cudaError_t e = simt_init();
    if (e) return simt_ret(e);
    if (!count) return simt_ret(cudaErrorInvalidValue);
    *count = simt_cfg.ndev;
    return simt_cfg.ndev ? cudaSuccess : simt_ret(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int d)
{
    cudaError_t e = simt_init();
    if (e) return simt_ret(e);
    if (simt_cfg.ndev == 0) return simt_ret(cudaErrorNoDevice);
    if (d < 0 || d >= simt_cfg.ndev) return simt_ret(cudaErrorInvalidDevice);
    simt_cur_dev = d;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *d)
{
    cudaError_t e = simt_init();
    if (e) return simt_ret(e);
    if (!d) return simt_ret(cudaErrorInvalidValue);
    if (simt_cfg.ndev == 0) return simt_ret(cudaErrorNoDevice);
    *d = simt_cur_dev;
    return cudaSuccess;
}

const simt_preset *simtCurrentPreset(void)
{
    return simt_init() == cudaSuccess ? simt_cfg.preset : NULL;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
    cudaError_t e = simt_init();
    if (e) return simt_ret(e);
    if (!p) return simt_ret(cudaErrorInvalidValue);
    if (d < 0 || d >= simt_cfg.ndev) return simt_ret(cudaErrorInvalidDevice);
    const simt_preset *h = simt_cfg.preset;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", h->device_name);
    p->totalGlobalMem = simt_cfg.capacity;
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
    if (!value) return simt_ret(cudaErrorInvalidValue);
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
        return simt_ret(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

/* ---- streams ---------------------------------------------------------- */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *ps, unsigned flags)
{
    ENTER();
    if (!ps || (flags & ~(unsigned)cudaStreamNonBlocking)) return simt_ret(cudaErrorInvalidValue);
    return simt_ret(simt_stream_create(simt_cur_dev, flags, ps));
}

cudaError_t cudaStreamCreate(cudaStream_t *ps) { return cudaStreamCreateWithFlags(ps, 0); }

/* Priorities 0 (the default, the least) down to -5 (the greatest), as on
 * Hopper GPUs [MODEL]; a value outside the range is clamped, as CUDA does. */
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    ENTER();
    if (least) *least = 0;
    if (greatest) *greatest = SIMT_PRIORITY_GREATEST;
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *ps, unsigned flags, int priority)
{
    cudaError_t e = cudaStreamCreateWithFlags(ps, flags);
    if (e) return e;
    simt_stream_set_priority(*ps, priority);
    return cudaSuccess;
}

cudaError_t cudaStreamGetPriority(cudaStream_t st, int *priority)
{
    ENTER();
    return simt_ret(simt_stream_get_priority(st, simt_cur_dev, priority));
}

cudaError_t cudaStreamDestroy(cudaStream_t st)
{
    ENTER();
    return simt_ret(simt_stream_destroy(st, simt_cur_dev));
}

cudaError_t cudaStreamSynchronize(cudaStream_t st)
{
    ENTER();
    return simt_ret(simt_stream_sync(st, simt_cur_dev));
}

cudaError_t cudaStreamQuery(cudaStream_t st)
{
    ENTER();
    cudaError_t e = simt_stream_query(st, simt_cur_dev);
    return e == cudaErrorNotReady ? e : simt_ret(e); /* "not ready" is no error */
}

cudaError_t cudaDeviceSynchronize(void)
{
    ENTER();
    return simt_ret(simt_device_synchronize(simt_cur_dev));
}

double simtModeledNow(void)
{
    if (simt_enter(__func__) != cudaSuccess) return 0;
    return simt_modeled_now();
}

double simtStreamModeledTime(cudaStream_t st)
{
    if (simt_enter(__func__) != cudaSuccess) return 0;
    return simt_stream_modeled_time(st, simt_cur_dev);
}

cudaError_t simtStreamSynchronizeQuiet(cudaStream_t st)
{
    ENTER();
    return simt_ret(simt_stream_sync_quiet(st, simt_cur_dev));
}

cudaError_t simtModelTransfer(cudaStream_t st, size_t bytes, int src_device, int dst_device,
                              double not_before)
{
    ENTER();
    return simt_ret(
        simt_model_transfer(st, simt_cur_dev, bytes, src_device, dst_device, not_before, -1));
}

cudaError_t simtModelPeerCopy(cudaStream_t st, size_t bytes, int src_device, int dst_device)
{
    ENTER();
    if (src_device < 0 || src_device >= simt_cfg.ndev || dst_device < 0 ||
        dst_device >= simt_cfg.ndev)
        return simt_ret(cudaErrorInvalidDevice);
    return simt_ret(simt_model_transfer(st, simt_cur_dev, bytes, src_device, dst_device, 0,
                                        simt_peer_enabled(src_device, dst_device)));
}

cudaError_t simtEventRecordAt(cudaEvent_t ev, cudaStream_t st, double t)
{
    ENTER();
    return simt_ret(simt_event_record_at(ev, st, simt_cur_dev, t));
}

/* ---- events ---------------------------------------------------------- */

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *pe, unsigned flags)
{
    ENTER();
    unsigned all = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
    if (!pe || (flags & ~all) ||
        ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)))
        return simt_ret(cudaErrorInvalidValue);
    return simt_ret(simt_event_create(simt_cur_dev, flags, pe));
}

cudaError_t cudaEventCreate(cudaEvent_t *pe) { return cudaEventCreateWithFlags(pe, 0); }

cudaError_t cudaEventDestroy(cudaEvent_t ev)
{
    ENTER();
    return simt_ret(simt_event_destroy(ev));
}

cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t st)
{
    ENTER();
    return simt_ret(simt_event_record(ev, st, simt_cur_dev));
}

cudaError_t cudaStreamWaitEvent(cudaStream_t st, cudaEvent_t ev, unsigned flags)
{
    ENTER();
    return simt_ret(simt_stream_wait_event(st, ev, flags, simt_cur_dev));
}

cudaError_t cudaEventSynchronize(cudaEvent_t ev)
{
    ENTER();
    return simt_ret(simt_event_sync(ev));
}

cudaError_t cudaEventQuery(cudaEvent_t ev)
{
    ENTER();
    cudaError_t r = simt_event_query(ev);
    return r == cudaErrorNotReady ? r : simt_ret(r);
}

static cudaError_t elapsed(float *ms, cudaEvent_t a, cudaEvent_t b, int measured)
{
    ENTER();
    if (!ms) return simt_ret(cudaErrorInvalidValue);
    return simt_ret(simt_event_elapsed(ms, a, b, measured));
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    return elapsed(ms, a, b, 0);
}

cudaError_t simtEventElapsedMeasured(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    return elapsed(ms, a, b, 1);
}

/* ---- kernels ---------------------------------------------------------- */

void simtLaunchCost(double flops, double bytes)
{
    next_flops = flops;
    next_bytes = bytes;
    next_cost_set = 1;
}

void simtLaunchEager(void) { next_eager = 1; }

cudaError_t cudaFuncSetAttribute(const void *fn, enum cudaFuncAttribute attr, int value)
{
    ENTER();
    if (!fn) return simt_ret(cudaErrorInvalidDeviceFunction);
    if (attr == cudaFuncAttributePreferredSharedMemoryCarveout)
        return value >= -1 && value <= 100 ? cudaSuccess : simt_ret(cudaErrorInvalidValue);
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return simt_ret(cudaErrorInvalidValue);
    if (value < 0 || (size_t)value > simt_cfg.preset->shared_per_block_optin)
        return simt_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&simt_lock);
    int i;
    for (i = 0; i < nattrs; i++)
        if (attrs[i].fn == fn) break;
    if (i == nattrs) {
        func_attr *na = realloc(attrs, (size_t)(nattrs + 1) * sizeof *na);
        if (!na) {
            pthread_mutex_unlock(&simt_lock);
            return simt_ret(cudaErrorMemoryAllocation);
        }
        attrs = na;
        nattrs++;
        attrs[i].fn = fn;
    }
    attrs[i].max_dynamic_shared = value;
    pthread_mutex_unlock(&simt_lock);
    return cudaSuccess;
}

static size_t dynamic_shared_limit(const void *fn) /* the runtime lock held */
{
    for (int i = 0; i < nattrs; i++)
        if (attrs[i].fn == fn) return (size_t)attrs[i].max_dynamic_shared;
    return DEFAULT_SHMEM_LIMIT;
}

cudaError_t simtLaunchKernel(const simt_kernel *k, dim3 grid, dim3 block, size_t shmem,
                             cudaStream_t st, const void *args, size_t args_size)
{
    double flops = next_flops, bytes = next_bytes;
    int has_cost = next_cost_set, eager = next_eager;
    next_cost_set = next_eager = 0;
    next_flops = next_bytes = 0;
    ENTER();
    /* Limits: CUDA C++ Programming Guide, "Compute Capabilities". */
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (!block.x || !block.y || !block.z || !grid.x || !grid.y || !grid.z || block.x > 1024 ||
        block.y > 1024 || block.z > 64 || threads > 1024 || grid.x > 2147483647u ||
        grid.y > 65535 || grid.z > 65535)
        return simt_ret(cudaErrorInvalidConfiguration);
    pthread_mutex_lock(&simt_lock);
    int bad;
    struct simt_stream *s = simt_stream_resolve(st, simt_cur_dev, &bad);
    cudaError_t r = cudaSuccess;
    if (bad || simt_stream_device(s) != simt_cur_dev)
        r = cudaErrorInvalidResourceHandle;
    else if (k->max_threads && threads > k->max_threads) /* __launch_bounds__ */
        r = cudaErrorLaunchOutOfResources;
    else if (shmem > dynamic_shared_limit(k->function))
        r = cudaErrorInvalidValue;
    else {
        /* the first launch after simtRecordBegin carries the record's
         * ticket; a high-priority stream's kernels (NCCL's, a comm
         * stream's) run beside the others on the modeled clock */
        unsigned ticket = simt_record_take();
        r = simt_queue_kernel(
            s, (simt_launch){k, grid, block, shmem, NULL, args_size, simt_cur_dev, ticket, eager},
            args, args_size, flops, bytes,
            simt_stream_priority(s) < 0 ? ENG_COMPUTE_HI : ENG_COMPUTE,
            simt_cost_kernel(simt_cfg.preset, has_cost, flops, bytes));
        if (r != cudaSuccess && ticket) simt_record_unclaim(ticket);
    }
    pthread_mutex_unlock(&simt_lock);
    /* CUDA_LAUNCH_BLOCKING=1: the kernel has run when the launch returns,
     * and a fault it made is what the next cudaGetLastError() says */
    if (r == cudaSuccess && simt_cfg.launch_blocking) r = simt_stream_sync(st, simt_cur_dev);
    return simt_ret(r);
}

/* ---- reset ------------------------------------------------------------- */

cudaError_t cudaDeviceReset(void)
{
    cudaError_t e = simt_init();
    if (e) return simt_ret(e);
    if (simt_cfg.ndev == 0) return simt_ret(cudaErrorNoDevice);
    pthread_mutex_lock(&simt_lock);
    simt_device_sync(simt_cur_dev);
    simt_alloc_free_device(simt_cur_dev);
    simt_device_reset_queues(simt_cur_dev);
    simt_peer_reset(simt_cur_dev);
    pthread_mutex_unlock(&simt_lock);
    last_err = cudaSuccess;
    return cudaSuccess;
}
