/*
 * api_memory.c — the memory calls of the CUDA runtime API: device and pinned
 * host allocations (alloc.c keeps the tables), copies, memsets, peer access
 * and peer copies, __constant__ symbols. Each checks its pointers against
 * the tables, asks the cost model (cost.c) for the op's modeled duration and
 * queues it on its stream (stream.c). See api.c for the rest of the API.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "api.h"
#include "config.h"
#include "cost.h"
#include "stream.h"

/* cudaDeviceEnablePeerAccess: peer_enabled[d][p], device d may access p. */
static unsigned char peer_enabled[SIMT_MAX_DEVICES][SIMT_MAX_DEVICES];

void simt_peer_reset(int dev) { memset(peer_enabled[dev], 0, sizeof peer_enabled[dev]); }

int simt_peer_enabled(int a, int b)
{
    return a >= 0 && b >= 0 && a < SIMT_MAX_DEVICES && b < SIMT_MAX_DEVICES &&
           (peer_enabled[a][b] || peer_enabled[b][a]);
}

/* ---- device memory ---------------------------------------------------- */

cudaError_t cudaMalloc(void **p, size_t size)
{
    ENTER();
    if (!p) return simt_ret(cudaErrorInvalidValue);
    *p = NULL;
    if (size == 0) return cudaSuccess;
    pthread_mutex_lock(&simt_lock);
    cudaError_t e = simt_alloc_device(simt_cur_dev, size, p);
    pthread_mutex_unlock(&simt_lock);
    return simt_ret(e);
}

cudaError_t cudaFree(void *p)
{
    ENTER();
    if (!p) return cudaSuccess;
    pthread_mutex_lock(&simt_lock);
    int home = simt_alloc_home(p);
    if (home < 0) {
        pthread_mutex_unlock(&simt_lock);
        return simt_ret(cudaErrorInvalidValue);
    }
    /* cudaFree synchronises: no kernel may still use it, and no peer copy
     * queued on another device either (a collective that aborted may have
     * left one behind); only the memory's own device sets the host's clock */
    for (int d = 0; d < simt_cfg.ndev; d++) simt_device_drain(d, d == home);
    simt_alloc_free(p);
    cudaError_t e = simt_sticky(simt_cur_dev);
    pthread_mutex_unlock(&simt_lock);
    return simt_ret(e);
}

cudaError_t cudaMemGetInfo(size_t *fr, size_t *total)
{
    ENTER();
    if (!fr || !total) return simt_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&simt_lock);
    *total = simt_cfg.capacity;
    *fr = simt_cfg.capacity - simt_alloc_used(simt_cur_dev);
    pthread_mutex_unlock(&simt_lock);
    return cudaSuccess;
}

/* ---- pinned host memory ------------------------------------------------ */

cudaError_t cudaHostAlloc(void **p, size_t size, unsigned flags)
{
    ENTER();
    unsigned all = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
    if (!p || (flags & ~all)) return simt_ret(cudaErrorInvalidValue);
    *p = NULL;
    if (size == 0) return cudaSuccess;
    void *m = NULL;
    if (posix_memalign(&m, 4096, size) != 0) return simt_ret(cudaErrorMemoryAllocation);
    pthread_mutex_lock(&simt_lock);
    cudaError_t e = simt_pinned_add(m, size);
    pthread_mutex_unlock(&simt_lock);
    if (e) {
        free(m);
        return simt_ret(e);
    }
    *p = m;
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void **p, size_t size) { return cudaHostAlloc(p, size, 0); }

cudaError_t cudaFreeHost(void *p)
{
    ENTER();
    if (!p) return cudaSuccess;
    pthread_mutex_lock(&simt_lock);
    if (!simt_pinned_is_block(p)) {
        pthread_mutex_unlock(&simt_lock);
        return simt_ret(cudaErrorInvalidValue);
    }
    for (int d = 0; d < simt_cfg.ndev; d++) simt_device_sync(d); /* no copy may still read it */
    simt_pinned_remove(p);
    pthread_mutex_unlock(&simt_lock);
    free(p);
    return cudaSuccess;
}

/* ---- copies and memsets --------------------------------------------------- */

/* 1 when [p, p + n) wraps past the top of the address space: no allocation
 * can hold it, and the tables' end checks (p + n <= end) would see the
 * wrapped, small end and pass (SIZE_MAX - 4096 bytes from a 256-byte
 * buffer). Every copy and memset refuses such a range first. */
static int range_wraps(const void *p, size_t n) { return n > UINTPTR_MAX - (uintptr_t)p; }

/* Checks a copy's pointers against its kind and returns the modeled engine
 * and duration. The runtime lock held. */
static cudaError_t plan_copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                             int *engine, double *duration, int *pageable_src, int *pageable_dst)
{
    if ((unsigned)kind > cudaMemcpyDefault) return cudaErrorInvalidMemcpyDirection;
    if (!dst || !src) return cudaErrorInvalidValue;
    if (range_wraps(dst, n) || range_wraps(src, n)) return cudaErrorInvalidValue;
    int dd = simt_in_arena(dst), sd = simt_in_arena(src);
    if (kind == cudaMemcpyDefault)
        kind = dd ? (sd ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                  : (sd ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
    int want_dd = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    int want_sd = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (dd != want_dd || sd != want_sd) return cudaErrorInvalidValue; /* kind contradicts */
    int ok =
        (!dd || simt_alloc_device_of(dst, n) >= 0) && (!sd || simt_alloc_device_of(src, n) >= 0);
    if (!ok) return cudaErrorInvalidValue; /* runs past the end of an allocation */
    *pageable_src = !sd && !simt_is_pinned(src, n);
    *pageable_dst = !dd && !simt_is_pinned(dst, n);
    simt_cost_copy(simt_cfg.preset, kind, n, *pageable_src, *pageable_dst, engine, duration);
    if (*engine == ENG_NONE) *pageable_src = *pageable_dst = 0; /* host to host */
    return cudaSuccess;
}

static cudaError_t copy_common(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                               cudaStream_t st, int sync)
{
    ENTER();
    pthread_mutex_lock(&simt_lock);
    int bad, engine, psrc = 0, pdst = 0;
    double duration = 0;
    struct simt_stream *s = simt_stream_resolve(st, simt_cur_dev, &bad);
    cudaError_t r = bad ? cudaErrorInvalidResourceHandle
                        : plan_copy(dst, src, n, kind, &engine, &duration, &psrc, &pdst);
    /* A pageable source of an asynchronous copy is staged now, so the caller
     * may reuse it as soon as the call returns (as CUDA does). */
    if (r == cudaSuccess && n > 0)
        r = simt_queue_copy(s, dst, src, n, engine, duration, -1, !sync && psrc, sync || pdst);
    pthread_mutex_unlock(&simt_lock);
    if (sync) simtFlushOps();
    return simt_ret(r);
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
    pthread_mutex_lock(&simt_lock);
    int bad;
    struct simt_stream *s = simt_stream_resolve(st, simt_cur_dev, &bad);
    cudaError_t r = cudaSuccess;
    int ok = n == 0 || (!range_wraps(p, n) && simt_alloc_device_of(p, n) >= 0);
    if (bad)
        r = cudaErrorInvalidResourceHandle;
    else if (!ok)
        r = cudaErrorInvalidValue;
    else if (n > 0)
        r = simt_queue_memset(s, p, value, n, simt_cost_memset(simt_cfg.preset, n));
    pthread_mutex_unlock(&simt_lock);
    return simt_ret(r);
}

cudaError_t cudaMemset(void *p, int value, size_t n) { return memset_common(p, value, n, NULL); }

cudaError_t cudaMemsetAsync(void *p, int value, size_t n, cudaStream_t st)
{
    return memset_common(p, value, n, st);
}

cudaError_t cudaDeviceCanAccessPeer(int *can, int d, int peer)
{
    cudaError_t e = simt_init();
    if (e) return simt_ret(e);
    if (!can) return simt_ret(cudaErrorInvalidValue);
    if (d < 0 || d >= simt_cfg.ndev || peer < 0 || peer >= simt_cfg.ndev)
        return simt_ret(cudaErrorInvalidDevice);
    *can =
        d != peer && simt_peer_capable(simt_cfg.preset) && simt_same_node(simt_cfg.preset, d, peer);
    return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned flags)
{
    ENTER();
    if (flags != 0) return simt_ret(cudaErrorInvalidValue);
    if (peer < 0 || peer >= simt_cfg.ndev || peer == simt_cur_dev)
        return simt_ret(cudaErrorInvalidDevice);
    if (!simt_peer_capable(simt_cfg.preset) || !simt_same_node(simt_cfg.preset, simt_cur_dev, peer))
        return simt_ret(cudaErrorPeerAccessUnsupported);
    pthread_mutex_lock(&simt_lock);
    cudaError_t r =
        peer_enabled[simt_cur_dev][peer] ? cudaErrorPeerAccessAlreadyEnabled : cudaSuccess;
    peer_enabled[simt_cur_dev][peer] = 1;
    pthread_mutex_unlock(&simt_lock);
    return simt_ret(r);
}

static cudaError_t peer_common(void *dst, int dd, const void *src, int sd, size_t n,
                               cudaStream_t st, int sync)
{
    ENTER();
    if (dd < 0 || dd >= simt_cfg.ndev || sd < 0 || sd >= simt_cfg.ndev)
        return simt_ret(cudaErrorInvalidDevice);
    pthread_mutex_lock(&simt_lock);
    int bad;
    struct simt_stream *s = simt_stream_resolve(st, simt_cur_dev, &bad);
    cudaError_t r = cudaSuccess;
    int ok = n == 0 || (!range_wraps(dst, n) && !range_wraps(src, n) &&
                        simt_alloc_device_of(dst, n) == dd && simt_alloc_device_of(src, n) == sd);
    if (bad)
        r = cudaErrorInvalidResourceHandle;
    else if (!ok)
        r = cudaErrorInvalidValue;
    else if (n > 0) {
        int engine;
        double duration = simt_cost_peer(simt_cfg.preset, n, sd, dd,
                                         peer_enabled[sd][dd] || peer_enabled[dd][sd], &engine);
        if (sync) {
            simt_device_sync(sd);
            simt_device_sync(dd);
        }
        int dev = simt_stream_device(s);
        r = simt_queue_copy(s, dst, src, n, engine, duration, dev == dd ? sd : dd, 0, sync);
    }
    pthread_mutex_unlock(&simt_lock);
    if (sync) simtFlushOps();
    return simt_ret(r);
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

int simtAllocRange(const void *p, const void **base, size_t *size, int *device)
{
    uintptr_t b = 0;
    size_t len = 0;
    if (!p || !simt_alloc_find((uintptr_t)p, 1, &b, &len)) return 0;
    if (base) *base = (const void *)b;
    if (size) *size = len;
    if (device) *device = simt_alloc_device_of((const void *)b, len);
    return 1;
}

cudaError_t simtMemcpyToSymbol(void *symbol, size_t symbol_size, const void *src, size_t count,
                               size_t offset, enum cudaMemcpyKind kind)
{
    ENTER();
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice &&
        kind != cudaMemcpyDefault)
        return simt_ret(cudaErrorInvalidMemcpyDirection);
    if (!src || offset > symbol_size || count > symbol_size - offset)
        return simt_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&simt_lock);
    simt_device_sync(simt_cur_dev); /* kernels already queued see the old value */
    memcpy((char *)symbol + offset, src, count);
    pthread_mutex_unlock(&simt_lock);
    return cudaSuccess;
}
