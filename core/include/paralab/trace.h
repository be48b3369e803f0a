/*
 * paralab/trace.h — what happened, for the visualiser and for Perfetto.
 *
 * Every kernel, copy, collective (and each ring step of the local engine),
 * send/recv, forward/backward of a micro-batch and optimizer step is an
 * event. Each rank writes its events into its own ring: lock-free, one
 * producer (the rank's thread) and one consumer (the thread that drains:
 * the UI, or the trace writer). When a ring is full the producer waits for
 * the consumer (PL_TRACE_WAIT: up to a second per event, then it counts a
 * drop, so that a run with no consumer never hangs) or counts a drop at once
 * (PL_TRACE_DROP); it never overwrites an event not yet drained. Someone
 * must drain while the ranks run (pl_world_run_traced does not).
 *
 * pl_trace_writer writes Chrome Trace Event JSON (open it in Perfetto or
 * chrome://tracing): one process per rank, one thread per lane, complete
 * ("X") events with microsecond timestamps, args holding bytes, FLOPs,
 * micro-batch, layer/stage and peer.
 */
#ifndef PARALAB_TRACE_H
#define PARALAB_TRACE_H

#include <stddef.h>
#include <stdint.h>

typedef enum { PL_LANE_COMPUTE, PL_LANE_COPY, PL_LANE_COMM, PL_NUM_LANES } pl_lane;

typedef enum {
    PL_EV_KERNEL,
    PL_EV_COPY,
    PL_EV_COLLECTIVE,
    PL_EV_RING_STEP, /* one step of a collective: inside it in time */
    PL_EV_SEND,
    PL_EV_RECV,
    PL_EV_FORWARD,
    PL_EV_BACKWARD,
    PL_EV_OPTIMIZER,
    PL_NUM_EVENT_KINDS
} pl_event_kind;

typedef struct pl_event {
    int32_t rank;
    uint8_t lane;   /* pl_lane */
    uint8_t kind;   /* pl_event_kind */
    uint8_t stream; /* a kernel or copy: 1 + its stream's number on the device (1: the
                       legacy default stream, 2, 3...: the live streams, numbered from 1 as
                       they were made; simt_op_record.stream); 0: not a stream's op, or
                       unknown (real GPUs) */
    int32_t micro_batch, layer, peer; /* -1: none */
    uint64_t bytes;
    double flops;
    double start, end;                 /* measured, seconds (CLOCK_MONOTONIC) */
    double modeled_start, modeled_end; /* modeled, seconds; both 0 if none */
    char label[48];
} pl_event;

const char *pl_lane_name(pl_lane lane);          /* "compute", "copy", "comm" */
const char *pl_event_kind_name(pl_event_kind k); /* "kernel", "copy", ... */

typedef enum { PL_TRACE_WAIT, PL_TRACE_DROP } pl_trace_full_policy;

typedef struct pl_trace pl_trace;

/* Rings for n ranks of `capacity` events each (rounded up to a power of
 * two, at least 2, at most 2^30). NULL when out of memory, n is not 1..64
 * or capacity is above 2^30. */
pl_trace *pl_trace_create(int n, size_t capacity, pl_trace_full_policy policy);
void pl_trace_destroy(pl_trace *t);

/* Producer side: only rank e->rank's own thread calls it for that rank. */
void pl_trace_record(pl_trace *t, const pl_event *e);
/* Consumer side (one thread): moves up to max events into out, each ring's
 * events in the order they were recorded; returns how many. */
size_t pl_trace_drain(pl_trace *t, pl_event *out, size_t max);
/* Events a rank dropped because its ring was full (PL_TRACE_DROP). */
uint64_t pl_trace_dropped(const pl_trace *t, int rank);

/* Seconds on the measured clock (CLOCK_MONOTONIC). */
double pl_trace_now(void);

/* The Chrome Trace Event JSON writer. `modeled`: use modeled times (the
 * simulated GPU's) instead of measured ones. */
typedef struct pl_trace_writer pl_trace_writer;
/* origin: the time (seconds, on the chosen clock) written as 0, no later
 * than any event (pl_trace_now() or simtModeledNow() before the run);
 * negative: the first event added. */
pl_trace_writer *pl_trace_writer_open(const char *path, int nranks, int modeled, double origin,
                                      char *err, size_t cap);
/* 0, or -1 when writing failed (err says why, at close). */
int pl_trace_writer_add(pl_trace_writer *w, const pl_event *ev, size_t n);
/* Finishes the JSON (so an interrupted run still gives a complete file when
 * close runs from the cleanup path) and closes it: 0, or -1 with err. */
int pl_trace_writer_close(pl_trace_writer *w, char *err, size_t cap);

#endif
