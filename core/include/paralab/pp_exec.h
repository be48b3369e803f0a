/*
 * paralab/pp_exec.h — the one executor that runs any pipeline schedule
 * (paralab/pipeline.h) on the ranks of a PP group (core/parallel/pp_exec.c).
 *
 * Each rank of the group is a stage r (its rank in the group's
 * communicator) and runs its own list s->ops[r] of the schedule, in order,
 * calling a stage body — a table of callbacks that does the work of each
 * op: the block model's (paralab/pp_blocks.h), or a uniform one for
 * measuring a schedule alone (pl_pp_uniform, below). Around each op it
 * does exactly what pipeline.h says, and so what pl_pp_validate checked:
 *   - F of (k, c) on virtual stage q = c p + r > 0 first receives its input
 *     activation from the stage of q - 1; on q < p v - 1 it sends its
 *     output to the stage of q + 1 after it;
 *   - BW or B on q < p v - 1 first receives the gradient of its output from
 *     the stage of q + 1; on q > 0 it sends the gradient of its input to
 *     the stage of q - 1 after it; W sends and receives nothing;
 *   - a send never waits for its receive (pl_send_eager: ncclSend does not
 *     wait on the host either); a receive waits for its message.
 * A message is one activation or one gradient of message_floats floats
 * (the two have the same shape: [micro-batch rows, h] for the block model;
 * 0 is allowed: a message that carries only the dependency). The executor
 * owns the message buffers: four per (micro-batch, chunk) of the run (the
 * activation received and sent, the gradient received and sent), so no
 * message overwrites another still in use.
 *
 * The sends and receives run on streams of their own, one pair per
 * neighbour (as NCCL's p2p and Megatron-LM's overlapped p2p do): the op's
 * stream waits only for the data it receives, and a send's stream waits
 * for its receiver's copy, never the op stream; so on the host and on the
 * modeled clock alike the sends are buffered (PL_PP_BUFFERED, what
 * pl_pp_validate checks), and every formula of pipeline.h is exact. The
 * executor's stream waits for every message at the end of the run
 * (pl_comm_wait_sends).
 *
 * Before anything runs, pl_pp_run validates the whole schedule (every
 * stage's list, on every rank: pl_pp_validate) and checks it against the
 * group and the body; a schedule that cannot run is refused on every rank
 * with the same message, before any send or receive: it never hangs.
 *
 * What it records, per op: one trace event (paralab/trace.h) on the
 * COMPUTE lane of world rank `world_rank`: kind PL_EV_FORWARD (F),
 * PL_EV_BACKWARD (BW or B) or PL_EV_WEIGHT_GRAD (W), micro_batch k, layer
 * = the stage r, chunk c, label pl_pp_op_name ("F3", "BW0", "B2.1"), its
 * measured start and end (host clock, around the body's call) and modeled
 * ones (pl_device_stream_now of the stream: after its receive, before its
 * send). The sends and receives are the communicator's own
 * PL_EV_SEND/RECV events. And when the bytes of activations the body holds
 * change (its held_bytes), a metric note "activations s<r>" with the new
 * value.
 *
 * Sources: Narayanan et al., SC21, section 2.2 (the schedules it runs);
 * Megatron-LM megatron/core/pipeline_parallel/p2p_communication.py (the
 * grouped send/recv pairs); NCCL's documentation, "Point-to-point
 * communication" (sends complete when matched; group semantics).
 *
 * Errors: functions return 0 or -1 with the reason in ex->error (or err).
 */
#ifndef PARALAB_PP_EXEC_H
#define PARALAB_PP_EXEC_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "paralab/comm.h"
#include "paralab/pipeline.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pl_trace;
typedef struct pl_pp_exec pl_pp_exec;

/* A stage's work. Each callback runs one op of micro-batch k on this
 * stage's chunk c, enqueueing its work on ex->stream, and returns 0, or
 * non-zero with the reason written into ex->error (the executor then adds
 * the stage, the position and the op). Buffers are device buffers of
 * ex->message_floats floats, owned by the executor. */
typedef struct pl_pp_body {
    /* F. in: the activation received from the previous virtual stage (NULL
     * on virtual stage 0, which reads micro-batch k itself); out: where to
     * write the activation for the next one (NULL on the last virtual
     * stage, which ends in the loss). */
    int (*forward)(pl_pp_exec *ex, int k, int c, const float *in, float *out);
    /* BW, the whole backward. dout: the gradient of F's output received
     * from the next virtual stage (NULL on the last: it starts from the
     * loss); din: where to write the gradient of F's input (NULL on
     * virtual stage 0). */
    int (*backward)(pl_pp_exec *ex, int k, int c, const float *dout, float *din);
    /* B, the input gradient alone (arguments as backward), and W, the
     * weight gradient of (k, c) after its B. NULL when the body cannot
     * split its backward: a schedule with B or W ops is then refused. */
    int (*backward_input)(pl_pp_exec *ex, int k, int c, const float *dout, float *din);
    int (*backward_weight)(pl_pp_exec *ex, int k, int c);
    /* The bytes of activations the body holds now (NULL: none are
     * counted), asked after every op: the metric and the peak below. */
    size_t (*held_bytes)(pl_pp_exec *ex);
} pl_pp_body;

/* One op as it ran on this stage. */
typedef struct pl_pp_record {
    pl_pp_op op;
    double start, end;                   /* modeled: after its receive, before its send */
    double measured_start, measured_end; /* host clock (pl_trace_now), around the call */
} pl_pp_record;

/* This stage's last run (pl_pp_run). Times in seconds; modeled ones on the
 * simulated GPU's clock (0 on real GPUs, which have none). */
typedef struct pl_pp_result {
    int stage, ops;    /* r and its ops n[r] */
    double start, end; /* modeled: its first op's start, its last op's end */
    double busy;       /* modeled: the sum of its ops' durations (end - start each) */
    double measured_start, measured_end, measured_busy; /* the same on the host clock */
    const pl_pp_record *record; /* ops records, in the order they ran (owned by ex) */
    size_t peak_held_bytes;     /* the most bytes of activations the body held (held_bytes) */
    int peak_in_flight;         /* the most (k, c) between their F's start and last
                                   backward's end: the validator's peak_in_flight[r] */
} pl_pp_result;

struct pl_pp_exec {
    /* set by pl_pp_exec_init */
    pl_pp_body body;
    void *user;            /* the body's state, untouched */
    pl_comm *comm;         /* the PP group; NULL: one stage */
    int stage, stages;     /* r = pl_comm_rank(comm) and p (0 and 1 without comm) */
    cudaStream_t stream;   /* everything is enqueued here, the messages too */
    size_t message_floats; /* floats of one activation or gradient message (0 allowed) */
    /* the caller may set these after init */
    struct pl_trace *trace; /* events and notes go here; NULL: none */
    int world_rank;         /* the rank the events belong to (the world's; default stage) */
    /* called after each op of this stage's list (index i, the op) once the
     * op's own send is posted (eagerly: so nothing a neighbour waits for is
     * held back by what the hook does, e.g. a collective over other
     * ranks); non-zero fails the run with the reason in ex->error. NULL:
     * none (the send then goes with the next op's receive, as always) */
    int (*after_op)(pl_pp_exec *ex, int index, pl_pp_op op);
    void *after_op_user; /* the hook's, untouched */
    /* the result of the last pl_pp_run, and why it failed */
    pl_pp_result result;
    char error[1024];
    /* the executor's own (pl_pp_exec_free releases them) */
    float *pool;    /* message buffers: 4 message_floats floats per (k, c) */
    int pool_pairs; /* (k, c) pairs they are allocated for */
    cudaStream_t send_stream[2], recv_stream[2]; /* per neighbour: the next, the previous */
    cudaEvent_t ev_op, ev_comm[4];               /* ordering between the streams */
    int comm_ready;                              /* the streams and events are made */
    pl_pp_record *records;
    int records_cap;
    size_t last_held; /* the held bytes last noted */
    void *timing;     /* device scratch for pl_pp_measure */
};

/* Prepares the executor of this rank's stage: body (copied; forward and
 * backward required), user (the body's, in ex->user), comm (the PP group;
 * NULL or a group of one: one stage), stream, message_floats. No device
 * memory is taken until the first run. 0, or -1 with the reason in err. */
int pl_pp_exec_init(pl_pp_exec *ex, const pl_pp_body *body, void *user, pl_comm *comm,
                    cudaStream_t stream, size_t message_floats, char *err, size_t cap);
void pl_pp_exec_free(pl_pp_exec *ex);

/* Runs this stage's list of s, as the header says; every stage of the
 * group calls it with the same schedule. First it validates s
 * (pl_pp_validate; s->stages must be the group's size, and a schedule
 * with B or W needs a body with backward_input and backward_weight): -1
 * on every rank with the validator's message (or the mismatch) in
 * ex->error, before any message. Then it runs the list; the ops' work is
 * enqueued on ex->stream and not waited for, except as the messages need
 * (the caller synchronises). 0 and ex->result filled; or -1 with the
 * failing op's message ("stage 1, op 4 (BW0): ..."), after aborting the
 * world (pl_comm_abort), so that the other stages' waits end instead of
 * timing out. */
int pl_pp_run(pl_pp_exec *ex, const pl_pp_schedule *s);

/* The whole pipeline's timing of the last run (a collective over the PP
 * group: every stage calls it after pl_pp_run; it synchronises ex->stream).
 * makespan = the last op's end over all stages - the first op's start;
 * each stage's bubble is makespan - its busy time, and
 *   of_ideal = sum of the bubbles / sum of the busy times   ((p-1)/m for
 *              GPipe and 1F1B with uniform stages)
 *   of_total = sum of the bubbles / (p makespan)            ((p-1)/(m+p-1))
 * the two normalisations of pl_pp_bubble_formula (REFERENCES-PARALLEL.md,
 * "Pipeline schedules"). On the modeled clock (the simulated GPU), or
 * with measured = 1 the host clock's. */
typedef struct pl_pp_timing {
    double start, makespan;
    double of_ideal, of_total;
    double busy[PL_PP_MAX_STAGES]; /* each stage's busy time */
} pl_pp_timing;
int pl_pp_measure(pl_pp_exec *ex, int measured, pl_pp_timing *out);

/* ---- a uniform body: the schedule alone ------------------------------------------------ */

/* Every F, B and W is one kernel of the same fixed cost (a scale of n
 * floats in place on the modeled clock: the launch latency plus the
 * larger of its FLOPs over the peak and its bytes over the memory
 * bandwidth, core/simt/cost.c), a BW is B's kernel then W's, and nothing
 * is held: uniform stages with t_f = t_b = t_w, for measuring a schedule's
 * bubble against pl_pp_bubble_formula. Messages of 0 floats. */
typedef struct pl_pp_uniform {
    float *buf; /* device, n floats */
    long n;
} pl_pp_uniform;
/* Allocates the buffer on the current device and zeroes it on `stream`
 * (the stage's: a memset on another stream would hold the device's
 * compute engine while the stage's first op waits for it, a gap its
 * stream's clock does not show). 0, or -1 with err. */
int pl_pp_uniform_init(pl_pp_uniform *u, long n, cudaStream_t stream, char *err, size_t cap);
void pl_pp_uniform_free(pl_pp_uniform *u);
/* The body (its user: the pl_pp_uniform). */
extern const pl_pp_body pl_pp_uniform_body;

#ifdef __cplusplus
}
#endif

#endif
