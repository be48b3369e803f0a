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
 * Beside the events, a trace holds notes: each narrated step (its number
 * and text, noted by pl_step), each metric value a lab records (the loss:
 * pl_metric, paralab/world.h) and each sample of a rank's device memory
 * (taken by the world on the rank's thread: when it starts, at every step
 * and when it ends), in the order they were noted, with the time on both
 * clocks. The consumer takes them (pl_trace_take_notes): the UI shows them
 * and hands them to the writer, which writes them to the file; a replay
 * reads them back and shows them again. The UI learns from the trace
 * alone what a run did.
 *
 * pl_trace_writer writes Chrome Trace Event JSON (open it in Perfetto or
 * chrome://tracing): one process per rank; in it one thread (track) per
 * CUDA stream the rank's kernels and copies ran on ("stream 0 (default)",
 * "stream 1", ...: tid 3 + the stream's number on its device) and one per
 * lane for the events of no stream ("compute": a lab's forward, backward
 * and optimizer phases; "copy"; "comm": collectives, their ring steps,
 * send/recv: tids 0, 1, 2), so that slices on one track never overlap
 * without nesting; complete ("X") events with microsecond timestamps, args
 * holding bytes, FLOPs, the lane, the stream, micro-batch, layer/stage and
 * peer; each step as an instant ("i", cat "narration", args step and text)
 * and each metric value as a counter ("C", cat "metric", args value); each
 * memory sample as a counter of the rank's process ("C", cat "memory", name
 * "device memory", args used and total, bytes); each picture as an instant
 * ("i", cat "picture", see pl_trace_note_picture).
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
    PL_EV_WEIGHT_GRAD, /* a pipeline's W: the weight gradient split from its backward
                          (zero-bubble schedules, paralab/pipeline.h); its B is a BACKWARD */
    PL_NUM_EVENT_KINDS
} pl_event_kind;

/* The parallel axis a communicator serves (pl_comm_set_group), stamped
 * into the events of its calls: a hybrid run's TP, DP and PP traffic told
 * apart (Lab 10). PL_GROUP_NONE: the world, or an untagged split. */
typedef enum { PL_GROUP_NONE, PL_GROUP_TP, PL_GROUP_DP, PL_GROUP_PP, PL_NUM_GROUPS } pl_group;
/* "", "tp", "dp", "pp" ("?" out of range). */
const char *pl_group_name(pl_group g);

typedef struct pl_event {
    int32_t rank;
    uint8_t lane;   /* pl_lane */
    uint8_t kind;   /* pl_event_kind */
    uint8_t stream; /* a kernel or copy: 1 + its stream's number on the device (1: the
                       legacy default stream, 2, 3...: the live streams, numbered from 1 as
                       they were made; simt_op_record.stream); 0: not a stream's op, or
                       unknown (real GPUs) */
    uint8_t group;  /* a communicator's event: its pl_group (0: the world, or untagged) */
    int32_t micro_batch, layer, peer; /* -1: none */
    int32_t chunk; /* a pipeline op's model chunk 0..v-1 (interleaving); a ring step of
                      the engine's ring (reduce-scatter, all-gather, all-reduce): 1 + the
                      segment of N it moved (k: segment k - 1, from peer to rank); 0
                      otherwise */
    int32_t step;  /* the narrated step it was recorded in (pl_trace_set_step); 0: before the
                      first, or none */
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
/* The narrated step the events recorded from now on belong to (pl_step
 * sets it on rank 0 while the other ranks wait in the step's meeting):
 * pl_trace_record stamps it into each event, so that a replay shows each
 * event under its own step whatever the ranks' clocks say. */
void pl_trace_set_step(pl_trace *t, int step);
/* Consumer side (one thread): moves up to max events into out, each ring's
 * events in the order they were recorded; returns how many. */
size_t pl_trace_drain(pl_trace *t, pl_event *out, size_t max);
/* Events a rank dropped because its ring was full (PL_TRACE_DROP). */
uint64_t pl_trace_dropped(const pl_trace *t, int rank);

/* Notes, from any thread: narrated step `step` (1, 2...) with its text, a
 * value of the metric `name`, or a sample of a rank's device memory, at the
 * current time on both clocks (measured; modeled on simulated GPUs). Kept
 * until a consumer takes them (pl_trace_take_notes, or
 * pl_trace_writer_take_notes); past 65536 waiting notes, dropped. t NULL:
 * nothing. */
void pl_trace_note_step(pl_trace *t, int step, const char *text);
/* A moment on both clocks (measured; modeled on simulated GPUs). */
typedef struct {
    double at, modeled_at;
} pl_trace_stamp;
pl_trace_stamp pl_trace_stamp_now(void);
/* pl_trace_note_step, timed at `at` instead of now: a step whose work runs
 * before its narration is written (pl_step_begin) begins when its work does,
 * so that a replay shows that work under it. */
void pl_trace_note_step_at(pl_trace *t, int step, const char *text, pl_trace_stamp at);
void pl_trace_note_metric(pl_trace *t, const char *name, double value);
/* Rank `rank`'s device has `used` of its `total` bytes of memory in use. A
 * sample equal to the rank's last one is not noted again. */
void pl_trace_note_memory(pl_trace *t, int rank, double used, double total);

/* A lab's picture of its idea (paralab/picture.h), noted now: copied (the
 * caller keeps and frees its own), with the step the trace stamps into its
 * events now (pl_trace_set_step: the step begun or narrated last; 0 before
 * the first). Nothing when out of memory or when pl_picture_check refuses
 * it. The writer writes it as an instant ("i", cat "picture", name the
 * kind's, args step, title, p (8 integers), iv, dv (NaN and infinities as
 * null), sv) that the replay reads back. */
struct pl_picture;
void pl_trace_note_picture(pl_trace *t, const struct pl_picture *pic);

typedef enum { PL_NOTE_STEP, PL_NOTE_METRIC, PL_NOTE_MEMORY, PL_NOTE_PICTURE } pl_note_kind;
typedef struct pl_note {
    int kind;     /* pl_note_kind */
    int step;     /* a step: its number (1, 2...); a picture: the step it belongs to */
    int rank;     /* memory: whose device */
    double value; /* a metric's value; memory: the bytes in use */
    double total; /* memory: the bytes in all */
    double at, modeled_at;
    char name[32];          /* a metric's name */
    char *text;             /* a step's narration (malloc'd: pl_trace_free_notes) */
    struct pl_picture *pic; /* a picture (malloc'd with its arrays: pl_trace_free_notes) */
} pl_note;
/* Consumer side (one thread): takes every waiting note, in the order they
 * were noted, into *out (malloc'd; NULL when none); returns how many. */
size_t pl_trace_take_notes(pl_trace *t, pl_note **out);
void pl_trace_free_notes(pl_note *notes, size_t n);

/* Seconds on the measured clock (CLOCK_MONOTONIC). */
double pl_trace_now(void);

/* The Chrome Trace Event JSON writer. `modeled`: use modeled times (the
 * simulated GPU's) instead of measured ones. Text (labels, narration,
 * names, titles) is written as it is where it is UTF-8 as RFC 3629 has it;
 * each byte of what is not (a character cut in two, an overlong form, a
 * surrogate, a code point past U+10FFFF) is written as '?', so that every
 * JSON reader (paralab-viz's jansson) reads the file back. */
typedef struct pl_trace_writer pl_trace_writer;
/* origin: the time (seconds, on the chosen clock) written as 0, no later
 * than any event (the clock's reading before the run: pl_trace_stamp_now());
 * negative: the first event added. */
pl_trace_writer *pl_trace_writer_open(const char *path, int nranks, int modeled, double origin,
                                      char *err, size_t cap);
/* 0, or -1 when writing failed (err says why, at close). */
int pl_trace_writer_add(pl_trace_writer *w, const pl_event *ev, size_t n);
/* Writes n notes taken from a trace (pl_trace_take_notes); 0 or -1 as add. */
int pl_trace_writer_add_notes(pl_trace_writer *w, const pl_note *notes, size_t n);
/* Takes the notes waiting in t and writes them (w NULL: discards them); 0
 * or -1 as add. */
int pl_trace_writer_take_notes(pl_trace_writer *w, pl_trace *t);
/* Says what wrote the trace, for a replay (a "paralab" metadata event): the
 * lab's title, its narrated steps (0: unknown), the panes its UI shows (a
 * pl_viz_config.panes mask) and whether its timeline has a lane per CUDA
 * stream. */
int pl_trace_writer_describe(pl_trace_writer *w, const char *title, int steps, unsigned panes,
                             int stream_lanes);
/* Says, for a replay's shards pane (pl_viz_matrix, paralab/viz.h), a weight
 * matrix the lab cuts over tp ranks: a "paralab matrix" metadata event
 * with args name, rows, cols (its full shape), split ("column", "row" or
 * "replicated" for 'c', 'r', 0), padded_cols and tp; 0 or -1 as add. */
int pl_trace_writer_describe_matrix(pl_trace_writer *w, const char *name, int rows, int cols,
                                    char split, int padded_cols, int tp);
/* Says, for a replay's pipeline pane (pl_viz_pipeline, paralab/viz.h), the
 * pipeline a lab runs: a "paralab pipeline" metadata event with args
 * stages, micro_batches, chunks, schedule and the formula's bubble
 * of_ideal and of_total (null when negative: no formula), and, when
 * stage_rank is not NULL, stage_ranks: the world rank whose events each
 * stage shows (stage_rank[0 .. stages-1]); 0 or -1 as add. */
int pl_trace_writer_describe_pipeline(pl_trace_writer *w, int stages, int micro_batches, int chunks,
                                      const char *schedule, double of_ideal, double of_total,
                                      const int *stage_rank);
/* Says, for a replay's mesh pane (pl_viz_mesh, paralab/viz.h), the device
 * mesh a lab runs on: a "paralab mesh" metadata event with args dp, tp, pp
 * and order ("megatron", "picotron"); 0 or -1 as add. */
int pl_trace_writer_describe_mesh(pl_trace_writer *w, int dp, int tp, int pp, const char *order);
/* Says, for a replay's memory pane (pl_viz_zero, paralab/viz.h), the ZeRO
 * run a lab makes: a "paralab zero" metadata event with args stage, ranks,
 * psi, psi_pad and sgd; 0 or -1 as add. */
int pl_trace_writer_describe_zero(pl_trace_writer *w, int stage, int ranks, long psi, long psi_pad,
                                  int sgd);
/* ---- a multi-process run's parts (MPI) ------------------------------------------------------
 *
 * Under mpirun each process writes its own part of the trace: the events of
 * the ranks it runs, keyed by their global rank (process * T + thread), and
 * in its header (otherData) the run's id, its process index, the number of
 * processes, the world's ranks and the global ranks it runs, so that
 * paralab-viz can merge the parts into one timeline and refuse parts of
 * different runs or worlds (docs/multi-node.md). Each part keeps its own
 * process's clock (the modeled one on simulated GPUs), from that process's
 * start. */

/* The file process `process` of `nprocs` writes for --trace PATH: PATH
 * itself when nprocs is 1; else PATH with ".p<process>" inserted before
 * its extension (from the last '.' of its last component, unless that '.'
 * begins the component), or appended when it has none: "run.json" ->
 * "run.p1.json", "out/run" -> "out/run.p1", "dir.d/.trace" ->
 * "dir.d/.trace.p1". 0; -1 with out "" (when cap > 0) when nprocs is not
 * 1..64, process not 0..nprocs-1, or the name does not fit in cap bytes. */
int pl_trace_path_for_process(const char *path, int process, int nprocs, char *out, size_t cap);

/* What a part says of itself. */
typedef struct pl_trace_part {
    char run[40];           /* the run's id, the same in every process (process 0 makes it with
                               pl_trace_run_id and broadcasts it): 1 to 39 printable ASCII bytes */
    int process;            /* this process: 0 .. processes-1 */
    int processes;          /* how many: 1..64 */
    int world;              /* the world's ranks, all processes together: 1..64 */
    int first_rank, nranks; /* the global ranks this process runs: first_rank ..
                               first_rank + nranks - 1, within the world */
} pl_trace_part;

/* A fresh run id in out (cap bytes, at most 40 used): the host's name, the
 * process id and the time, "host-pid-seconds.nanoseconds" (the host's name
 * cut so that it fits). */
void pl_trace_run_id(char *out, size_t cap);

/* Opens process part->process's part at `path` (the name
 * pl_trace_path_for_process gives), as pl_trace_writer_open does a whole
 * trace: the header says the part (otherData: ranks = part->world, run,
 * process, processes, first_rank, part_ranks), process names only for its
 * ranks. Each event's and memory sample's rank is written as a global rank:
 * a rank already in first_rank .. first_rank + nranks - 1 as it is, a rank
 * 0 .. nranks - 1 (the process's own thread index) as first_rank + it (the
 * two ranges meet only in process 0, where they are the same). The lab's
 * narration, metric values, pictures and pane metadata are read from process
 * 0's part only. NULL with err naming the bad field and what is allowed. */
pl_trace_writer *pl_trace_writer_open_part(const char *path, const pl_trace_part *part, int modeled,
                                           double origin, char *err, size_t cap);

/* Finishes the JSON (so an interrupted run still gives a complete file when
 * close runs from the cleanup path) and closes it: 0, or -1 with err. */
int pl_trace_writer_close(pl_trace_writer *w, char *err, size_t cap);

#endif
