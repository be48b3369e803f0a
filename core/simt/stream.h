/*
 * stream.h — streams, events and the op queue (stream.c): what the API
 * surface (api.c, api_memory.c) asks of them. A stream's ops run in order on
 * its own worker thread; modeled time is assigned when an op is enqueued.
 * Not public.
 *
 * Functions marked "lock held" expect the runtime lock (simt_lock, config.h)
 * held by the caller; the others take it themselves. `dev` is always the
 * calling thread's current device: the legacy default stream (NULL or
 * cudaStreamLegacy) is that device's.
 */
#ifndef SIMT_STREAM_H
#define SIMT_STREAM_H

#include <stddef.h>

#include "emu.h"
#include "simt/simt.h"

/* At start-up: the legacy default stream of each of the ndev devices. */
void simt_streams_init(int ndev);

/* simtSetLazyLegacy once started: on or off (off runs what it held back). */
void simt_set_lazy_legacy(int on);

/* The device's sticky error (a kernel faulted: the context is broken until
 * cudaDeviceReset), and the fault's report ("" if none). */
cudaError_t simt_sticky(int dev);
const char *simt_fault_report(int dev);

/* ---- queueing ops (lock held) -------------------------------------------- */

/* The stream st names (NULL, cudaStreamLegacy: dev's legacy stream); NULL
 * and *bad = 1 when it names none. */
struct simt_stream *simt_stream_resolve(cudaStream_t st, int dev, int *bad);
int simt_stream_device(const struct simt_stream *s);
int simt_stream_priority(const struct simt_stream *s);

/* Queues a copy of n bytes, modeled on `engine` for `duration` (peer: the
 * other device of a peer copy, else -1). stage: copy the source now if
 * possible (an asynchronous copy from pageable memory), else wait as if
 * `wait`; wait: return only once the copy is done, with the host's modeled
 * clock moved to its end and its error. */
cudaError_t simt_queue_copy(struct simt_stream *s, void *dst, const void *src, size_t n, int engine,
                            double duration, int peer, int stage, int wait);
/* Queues a memset of n bytes, modeled on the compute engine for `duration`. */
cudaError_t simt_queue_memset(struct simt_stream *s, void *p, int value, size_t n, double duration);
/* Queues a kernel launch (its argument struct, args_size bytes at args, is
 * copied), with its declared work, modeled on `engine` for `duration`. */
cudaError_t simt_queue_kernel(struct simt_stream *s, simt_launch launch, const void *args,
                              size_t args_size, double flops, double bytes, int engine,
                              double duration);

/* A transfer whose bytes came by other means (another process's, over MPI):
 * on the modeled clock only, a copy of n bytes on stream st from device sd
 * to device dd of the simulated cluster (any numbers: their link is the
 * preset's, by gpus_per_node), starting no earlier than not_before (the
 * sender's modeled time); reported as a copy op. n = 0: only the wait (a
 * marker, not reported). peer < 0: the bytes came from another process
 * (costed as over a peer link, reported without a peer device); 0 or 1: a
 * peer copy between this process's devices sd and dd, as
 * cudaMemcpyPeerAsync would cost and report it with peer access off or on
 * (simtModelPeerCopy). Takes the lock. */
cudaError_t simt_model_transfer(cudaStream_t st, int dev, size_t n, int sd, int dd,
                                double not_before, int peer);
/* cudaEventRecord, but on the modeled clock at t (no later than the
 * stream's time): the marker completes after the work queued before it,
 * and a wait for the event waits until t (simtEventRecordAt). Takes the
 * lock. */
cudaError_t simt_event_record_at(cudaEvent_t ev, cudaStream_t st, int dev, double t);

/* Waits for everything queued on device d, destroyed streams included, and
 * (advance) moves the calling thread's modeled clock to the device's. */
void simt_device_drain(int d, int advance);
/* = simt_device_drain(d, 1) */
void simt_device_sync(int d);

/* ---- streams and events (each takes the lock) ---------------------------- */

cudaError_t simt_stream_create(int dev, unsigned flags, cudaStream_t *ps);
/* Sets a stream's priority, clamped to 0 (least) .. SIMT_PRIORITY_GREATEST. */
void simt_stream_set_priority(cudaStream_t st, int priority);
#define SIMT_PRIORITY_GREATEST (-5)
cudaError_t simt_stream_get_priority(cudaStream_t st, int dev, int *priority);
cudaError_t simt_stream_destroy(cudaStream_t st, int dev);
/* Waits for the stream's work (and reports finished ops, simtFlushOps). */
cudaError_t simt_stream_sync(cudaStream_t st, int dev);
/* The same, leaving the calling thread's modeled clock where it was. */
cudaError_t simt_stream_sync_quiet(cudaStream_t st, int dev);
/* cudaSuccess, cudaErrorNotReady while work is pending, or a bad handle. */
cudaError_t simt_stream_query(cudaStream_t st, int dev);
/* Waits for the device's work: its sticky error. */
cudaError_t simt_device_synchronize(int dev);
/* simtModeledNow, simtStreamModeledTime. */
double simt_modeled_now(void);
double simt_stream_modeled_time(cudaStream_t st, int dev);

cudaError_t simt_event_create(int dev, unsigned flags, cudaEvent_t *pe);
cudaError_t simt_event_destroy(cudaEvent_t ev);
cudaError_t simt_event_record(cudaEvent_t ev, cudaStream_t st, int dev);
cudaError_t simt_stream_wait_event(cudaStream_t st, cudaEvent_t ev, unsigned flags, int dev);
cudaError_t simt_event_sync(cudaEvent_t ev);
cudaError_t simt_event_query(cudaEvent_t ev);
/* Milliseconds between two completed events: modeled, or measured (wall). */
cudaError_t simt_event_elapsed(float *ms, cudaEvent_t a, cudaEvent_t b, int measured);

/* cudaDeviceReset's part (lock held, the device synchronised): frees its
 * events and streams, waits for destroyed streams' workers, and clears its
 * sticky error and report. */
void simt_device_reset_queues(int dev);

#endif
