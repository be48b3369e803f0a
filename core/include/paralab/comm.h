/*
 * paralab/comm.h — communicators with NCCL's semantics and names.
 *
 * A communicator joins N ranks; each rank is a host thread bound to one
 * device and calls the functions below for itself, on its own stream, as it
 * would call ncclAllReduce and friends. The data movement is asynchronous,
 * like NCCL's: it is enqueued on `stream` and complete when the stream is;
 * the calling thread only meets the other ranks' threads once per step (and
 * a send outside a group waits for its receive).
 *
 * The local engine (core/comm/comm_local*.c) implements the collectives with ring
 * algorithms written against the CUDA runtime API only — device-to-device
 * copies (cudaMemcpyPeerAsync) and a reduction kernel, ordered with events —
 * so it runs on simulated GPUs and on ranks sharing one real GPU. Ranks are
 * threads of one process: they meet at a host rendezvous once per ring step.
 * It also checks what NCCL cannot:
 *   - arguments: a bad root or peer, a NULL buffer with count > 0, an
 *     unknown type or op: PL_COMM_INVALID_ARGUMENT and a message naming the
 *     value and the allowed range;
 *   - consistency: at each call sequence number every rank of a communicator
 *     must make the same call (kind, count, type, op, root), else every rank
 *     gets PL_COMM_MISMATCH and a message listing what each rank called;
 *   - a rank that fails inside a call (past its first meeting) stops the
 *     world: the others get PL_COMM_ABORTED and "rank R failed in
 *     all_reduce(count=..., float, sum) (call #N): <its error>" at once;
 *   - deadlock: a rank that waits longer than the communicator's timeout
 *     (default 10 s) gets PL_COMM_TIMEOUT and a message saying what every
 *     rank is waiting for (two ranks that both send first, outside a group).
 *     The timeout counts only time in which every rank is free to run: not
 *     while a rank is held by the student (pl_comm_hold: a paused step).
 *
 * Shapes and the in-place rules, one descriptor per collective (as NCCL
 * documents them): paralab/collectives.h. In short, counts are elements of
 * `type`; all_gather's recv holds nranks * sendcount elements, rank r's
 * block at r * sendcount; reduce_scatter's send holds nranks * recvcount
 * (NCCL's meaning: rank r gets the reduction of elements [r * recvcount,
 * (r+1) * recvcount); elements past nranks * recvcount are ignored, never
 * padded); all_to_all's send and recv hold nranks * count, block j of send
 * going to rank j. Count 0 is a successful no-op. count x the type's size
 * (x nranks for a buffer of blocks) must fit a size_t, and on the simulated
 * GPU each buffer must lie in a live cudaMalloc of the rank's device with
 * that many bytes from it: else PL_COMM_INVALID_ARGUMENT naming the count,
 * the buffer, the bytes needed and the allocation's size.
 * PL_AVG on integers is the sum divided by the rank count (C division), as
 * in NCCL.
 *
 * Two engines stand behind these functions: the local engine above and, in
 * the CUDA build, NCCL itself (pl_comm_create_nccl, core/comm/comm_nccl.c;
 * the simulated build links core/comm/nccl_none.c, which refuses it).
 *
 * Errors: functions return PL_COMM_OK or a pl_comm_result; the message of
 * the last error on a rank is pl_comm_last_error(comm).
 */
#ifndef PARALAB_COMM_H
#define PARALAB_COMM_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "paralab/trace.h" /* pl_group */

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    PL_COMM_OK = 0,
    PL_COMM_INVALID_ARGUMENT, /* NCCL: ncclInvalidArgument */
    PL_COMM_MISMATCH,         /* ranks disagree about a call (local engine only) */
    PL_COMM_TIMEOUT,          /* a rank waited past the timeout: a deadlock */
    PL_COMM_CUDA_ERROR,       /* NCCL: ncclUnhandledCudaError */
    PL_COMM_SYSTEM_ERROR,     /* out of memory, threads: ncclSystemError */
    PL_COMM_ABORTED,          /* another rank failed: the world is stopping */
} pl_comm_result;

/* Element types and reduction ops, with NCCL's meanings. */
typedef enum { PL_FLOAT32, PL_FLOAT64, PL_INT32, PL_INT64, PL_NUM_DTYPES } pl_dtype;
typedef enum { PL_SUM, PL_PROD, PL_MAX, PL_MIN, PL_AVG, PL_NUM_OPS } pl_redop;

size_t pl_dtype_size(pl_dtype t);       /* bytes; 0 for an unknown type */
const char *pl_dtype_name(pl_dtype t);  /* "float", "double", "int32", "int64" */
const char *pl_redop_name(pl_redop op); /* "sum", "prod", "max", "min", "avg" */
const char *pl_comm_result_name(pl_comm_result r);

typedef struct pl_comm pl_comm; /* one rank's handle on a communicator */

/* The engines behind the same functions (a table of functions per handle,
 * as nvtop keeps one per GPU vendor). */
typedef enum {
    PL_COMM_AUTO,  /* NCCL when every rank has its own real GPU, else local */
    PL_COMM_LOCAL, /* the local engine: simulated GPUs, or ranks sharing a GPU */
    PL_COMM_NCCL,  /* NCCL (the CUDA build; one GPU per rank) */
} pl_comm_engine_choice;

/* Makes the n rank handles of a new world communicator on the local engine,
 * rank r on devices[r] (several ranks may share a device). Called once, by
 * any thread; each rank then uses its own handle from its own thread.
 * timeout_s: how long a rank may wait for the others (<= 0: 10 s).
 * Checked up front: n from 1 to 64 (PL_MAX_RANKS), devices and ranks not
 * NULL, every devices[r] a device that exists (0 .. cudaGetDeviceCount - 1):
 * else PL_COMM_INVALID_ARGUMENT (PL_COMM_SYSTEM_ERROR: out of memory) and a
 * sentence in err naming the bad value and what is allowed ("rank 3: device
 * 9 does not exist (devices 0..7)"). err may be NULL when err_size is 0. */
pl_comm_result pl_comm_create(int n, const int *devices, double timeout_s, pl_comm **ranks,
                              char *err, size_t err_size);
/* The same on NCCL (ncclCommInitAll): devices[r] must all differ, since
 * NCCL refuses two ranks on one GPU. NCCL checks no consistency and has no
 * watchdog; its ledger counts what the ring algorithm sends (see
 * comm_nccl.c), and its trace has one event per call, timed on the host.
 * In the simulated build, and on any failure: an error, with a message in
 * err that names the cause. */
pl_comm_result pl_comm_create_nccl(int n, const int *devices, pl_comm **ranks, char *err,
                                   size_t err_size);
/* What PL_COMM_AUTO means for n ranks on these devices: NCCL where it is
 * built (the CUDA build) and every rank has its own device, else the local
 * engine. */
pl_comm_engine_choice pl_comm_auto_engine(int n, const int *devices);
/* "local" or "nccl": the engine behind a handle. */
const char *pl_comm_engine_name(const pl_comm *c);
/* Frees every rank's handle of the communicator (after all ranks are done). */
void pl_comm_destroy_all(pl_comm **ranks, int n);

/* Records every collective and each of its ring steps as trace events of
 * the calling rank into t (or stops recording, with NULL). For the whole
 * world the communicator belongs to; set it before the ranks start. */
struct pl_trace;
void pl_comm_set_trace(pl_comm *c, struct pl_trace *t);

/* The local engine cuts what each ring step moves into chunks of at most
 * `bytes` (0: the default, 4 MiB, NCCL's default NCCL_BUFFSIZE) and
 * pipelines them: a chain (broadcast, reduce) of N ranks and C chunks takes
 * N-1+C-1 chunk steps instead of (N-1)*C. Each chunk copy is one message in
 * the ledger. For the whole world; set it before the ranks start. NCCL
 * chooses its own (NCCL_BUFFSIZE). */
void pl_comm_set_chunk_bytes(pl_comm *c, size_t bytes);

/* Stops the world this communicator belongs to: every rank waiting in a
 * communicator call, now or later, returns PL_COMM_ABORTED with `why`. For a
 * rank that failed, so that the others do not wait for it. */
void pl_comm_abort(pl_comm *c, const char *why);

/* The calling rank is held outside any call (a step waits for the student,
 * pl_step): on = 1 when the hold begins, 0 when it ends (holds nest, and
 * several ranks may be held). While any rank of the world is held, the
 * deadlock watchdog's clock stops for every rank of it: a wait times out
 * only after `timeout` seconds in which no rank was held. NCCL has no
 * watchdog: a no-op there. */
void pl_comm_hold(pl_comm *c, int on);

int pl_comm_rank(const pl_comm *c);
int pl_comm_size(const pl_comm *c);
int pl_comm_device(const pl_comm *c);
/* The message of this rank's last error ("" if none). */
const char *pl_comm_last_error(const pl_comm *c);

/* Collective: every rank calls it. Ranks of the same color form a new
 * communicator, ordered by key then by rank; color < 0 takes no part
 * (*out = NULL). */
pl_comm_result pl_comm_split(pl_comm *c, int color, int key, pl_comm **out);
/* Frees this rank's handle of a communicator made by pl_comm_split
 * (collective: every member calls it). */
pl_comm_result pl_comm_free(pl_comm *c);

pl_comm_result pl_all_reduce(pl_comm *c, const void *send, void *recv, size_t count, pl_dtype t,
                             pl_redop op, cudaStream_t stream);
pl_comm_result pl_broadcast(pl_comm *c, const void *send, void *recv, size_t count, pl_dtype t,
                            int root, cudaStream_t stream);
pl_comm_result pl_reduce(pl_comm *c, const void *send, void *recv, size_t count, pl_dtype t,
                         pl_redop op, int root, cudaStream_t stream);
pl_comm_result pl_all_gather(pl_comm *c, const void *send, void *recv, size_t sendcount, pl_dtype t,
                             cudaStream_t stream);
pl_comm_result pl_reduce_scatter(pl_comm *c, const void *send, void *recv, size_t recvcount,
                                 pl_dtype t, pl_redop op, cudaStream_t stream);
pl_comm_result pl_all_to_all(pl_comm *c, const void *send, void *recv, size_t count, pl_dtype t,
                             cudaStream_t stream);

/* Every rank of the communicator arrives before any leaves (on the host;
 * it enqueues nothing). */
pl_comm_result pl_comm_barrier(pl_comm *c);

/* Point to point. Outside a group a send waits (on the host) until its
 * receiver has posted the matching receive, as NCCL's would on the GPU; two
 * ranks that exchange must put their send and recv in one group. */
pl_comm_result pl_send(pl_comm *c, const void *buf, size_t count, pl_dtype t, int peer,
                       cudaStream_t stream);
pl_comm_result pl_recv(pl_comm *c, void *buf, size_t count, pl_dtype t, int peer,
                       cudaStream_t stream);
/* An eager send: returns once posted, without waiting for its receive, in
 * a group or not (ncclSend does not wait on the host either: its
 * rendezvous happens on the GPU). The receive copies out of buf whenever it
 * comes, so buf must stay as it is until pl_comm_wait_sends has returned;
 * `stream` waits for that copy from then on (the sender's next eager send
 * or pl_comm_wait_sends makes it wait). Counted as a pl_send. A pipeline
 * sends its activations and gradients this way, on streams of their own,
 * so that no stage waits for a neighbour to take a message (paralab/pp_exec.h). */
pl_comm_result pl_send_eager(pl_comm *c, const void *buf, size_t count, pl_dtype t, int peer,
                             cudaStream_t stream);
/* Waits until every eager send this rank made on c has been received (the
 * watchdog reports one that never is) and makes each one's stream wait for
 * its copy. */
pl_comm_result pl_comm_wait_sends(pl_comm *c);
/* Groups (per host thread, nestable): the sends and receives between start
 * and end are posted together at the outermost end. */
pl_comm_result pl_group_start(void);
pl_comm_result pl_group_end(void);

/* The calls the ledger counts, one counter each. */
typedef enum pl_comm_call {
    PL_CALL_ALL_REDUCE,
    PL_CALL_BROADCAST,
    PL_CALL_REDUCE,
    PL_CALL_ALL_GATHER,
    PL_CALL_REDUCE_SCATTER,
    PL_CALL_ALL_TO_ALL,
    PL_CALL_SEND,
    PL_CALL_RECV,
    PL_CALL_BARRIER,
    PL_CALL_SPLIT,
    PL_NUM_CALLS
} pl_comm_call;
/* The function's name: "pl_all_reduce", ..., "pl_comm_split". */
const char *pl_comm_call_name(pl_comm_call k);

/* The ledger: what this rank sent and received through the communicator
 * (and the communicators split from the same world), since creation, and
 * how many times it called each function (calls[PL_CALL_SEND]: pl_send),
 * counted on entry, whatever the call returned. */
typedef struct pl_ledger {
    uint64_t bytes_sent, bytes_received;
    uint64_t messages_sent, messages_received;
    uint64_t calls[PL_NUM_CALLS];
} pl_ledger;
pl_ledger pl_comm_ledger(const pl_comm *c);
/* The same for this communicator alone: what this rank sent and received,
 * and called, through c itself, not through the rest of its world (a
 * hybrid run's TP, DP and PP groups counted apart). On NCCL the received
 * side is not counted here (0): each rank counts what it sends. */
pl_ledger pl_comm_ledger_own(const pl_comm *c);
/* The world rank of c's member `member` (0 .. size - 1), or -1: who is in
 * a group. */
int pl_comm_world_rank(const pl_comm *c, int member);
/* Tags c with the parallel axis it serves (paralab/trace.h, pl_group):
 * every event of its calls carries it from then on, so a timeline can tell
 * TP, DP and PP traffic apart. This rank's handle only (each member tags
 * its own; pl_mesh_split tags all three groups). */
void pl_comm_set_group(pl_comm *c, pl_group g);
pl_group pl_comm_group(const pl_comm *c);
/* Bytes sent from world rank `from` to world rank `to`. */
uint64_t pl_comm_link_bytes(const pl_comm *c, int from, int to);

#ifdef __cplusplus
}
#endif

#endif
