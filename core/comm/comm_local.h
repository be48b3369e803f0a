/*
 * comm_local.h — the local collective engine's shared state (internal to
 * core/comm; see paralab/comm.h and comm_engine.h).
 *
 * Ranks are threads of one process. A communicator's members share one
 * `group`; all groups split from one world share its `world` (one lock and
 * condition variable, the point-to-point mailbox, the ledger, and what each
 * rank is waiting for, for the deadlock report).
 *
 * Every collective starts with a rendezvous at which each member posts its
 * call (kind, count, type, op, root) and its buffers; the calls are compared
 * (consistency check), then the algorithm runs as a sequence of steps: in
 * the ring and the chain a rank waits only for its two neighbours, the
 * pairwise exchange meets at each step. Within a step each rank only
 * enqueues work on its own stream: copies from a neighbour's device buffer
 * (cudaMemcpyPeerAsync) and the reduction kernel. Device-side order comes
 * from events: a rank records `ready` after each step that changes its
 * buffer and `read` after each copy out of a neighbour; a rank's stream
 * waits for its predecessor's `ready` before copying from it and for its
 * successor's `read` before overwriting what the successor still reads. The
 * events are kept in FIFOs of 8 slots a rank (comm_local_fifo.c): a slot is
 * recorded again only once its one waiter has enqueued its wait. Nothing
 * blocks a stream on the host, so the modeled clock of the simulated GPU
 * sees the real dependency chain. On simulated GPUs a step's copies,
 * records and reduction run on the rank's own thread when its stream is
 * idle (eager execution, core/simt/stream.c): no hand-off to a worker.
 *
 * Ring all-reduce = ring reduce-scatter then ring all-gather: 2(N-1) steps,
 * each moving one of N segments, so each rank sends 2(N-1)/N of the array
 * (segments differ by at most one element when N does not divide the count).
 *
 * The engine's files, one idea each:
 *   comm_local.c            the world, its groups and handles: creation,
 *                           split, free, teardown; errors; trace events;
 *                           the engine's table
 *   comm_local_wait.c       waiting for the other ranks: the rendezvous, the
 *                           watchdog and its deadlock report, holds, aborts
 *   comm_local_calls.c      a collective's frame: each member posts its call,
 *                           the calls are compared (mismatches), arguments
 *                           checked; the ledger of bytes and calls
 *   comm_local_fifo.c       the FIFO of events between ring neighbours
 *   comm_local_algorithms.c the ring, chain and pairwise algorithms and the
 *                           six collectives on them
 *   comm_local_p2p.c        send and receive, and groups of them
 */
#ifndef PARALAB_COMM_LOCAL_H
#define PARALAB_COMM_LOCAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "comm_engine.h"
#include "paralab/collectives.h"
#include "paralab/comm.h"
#include "paralab/trace.h"

#define MAX_RANKS 64
/* A rank about to wait for another (a FIFO count, a meeting, a matching
 * send or receive) first gives its core away this many times
 * (sched_yield, lc_yield_until), looking again (under the lock) after
 * each that follows a wake-up meant for it (lc_wake):
 * when ranks outnumber cores the one it waits for is often runnable but
 * not running, and the yield lets it run at once, where sleeping on the
 * condition variable costs a futex wait and a wake-up. With a core to
 * itself a yield returns at once: a short spin. */
#define LC_YIELDS 32
/* Events between neighbours: slots per rank and kind, as NCCL keeps
 * NCCL_STEPS = 8 slots per connection. */
#define FIFO 8
/* `done` events kept per receiving rank for its next receives. */
#define DONE_POOL 4
/* Chunk size default: NCCL's default NCCL_BUFFSIZE (4 MiB). */
#define DEFAULT_CHUNK_BYTES ((size_t)4 << 20)

typedef struct lcomm lcomm; /* one rank's handle: the engine's pl_comm */

/* ---- shared state -------------------------------------------------------- */

/* What a member calls: a pl_comm_call (a collective, whose descriptor is in
 * paralab/collectives.h, or barrier, split), or comm_free. */
enum { CALL_FREE = PL_NUM_CALLS };

typedef struct call {
    int kind;
    size_t count;
    int type, op, root;
    int color, key; /* split */
    int bad;        /* this rank's arguments were invalid */
    char why[400];  /* ... and its message, for the others' (without "rank R: ") */
} call;

/* The times an event starts at: measured, and modeled on the stream. */
typedef pl_comm_mark mark; /* comm_engine.h */

typedef struct p2p {
    struct p2p *next;
    const void *grp; /* the communicator's group: a send matches a receive in it only */
    int send;        /* 1: a send, 0: a receive */
    int from, to;    /* world ranks */
    size_t count;
    int type;
    const void *sbuf;       /* send: the source */
    void *rbuf;             /* recv: the destination */
    int device;             /* the poster's device */
    cudaEvent_t ready;      /* send: recorded on the sender's stream when posted */
    cudaEvent_t done;       /* recv: recorded after the copy (the sender waits for it) */
    int matched;            /* recv: the copy is enqueued, `done` recorded */
    mark posted;            /* when it was posted, for its trace event */
    int taken;              /* send: the receiver has copied it */
    cudaStream_t stream;    /* an eager send's stream (it waits for `done` when reaped) */
    struct p2p *eager_next; /* an eager send: the next one of its sender (lcomm.eager) */
    pl_comm_result err;
    char msg[256];
} p2p;

typedef struct world {
    int n;
    double timeout;
    pthread_mutex_t lock;
    pthread_cond_t cv[MAX_RANKS]; /* each world rank sleeps on its own: woken alone when
                                     a neighbour moves its FIFO, all together otherwise */
    /* how often each world rank has been woken (lc_wake): a rank that yields
     * before it sleeps (lc_yield_until) looks again, taking the lock, only
     * when its count moved */
    _Atomic unsigned long pokes[MAX_RANKS];
    int aborted;
    pl_comm_result abort_code; /* PL_COMM_TIMEOUT (the watchdog) or PL_COMM_ABORTED */
    /* pl_comm_hold: while a rank is held (by the student), the watchdog's
     * clock stops; it counts only time in which every rank is free to run */
    int held;                      /* ranks held now */
    double held_since, held_total; /* CLOCK_MONOTONIC seconds */
    char abort_msg[2048];
    char doing[MAX_RANKS][160]; /* what each world rank waits for */
    /* each world rank's receives' `done` events, given back by the sends
     * that waited for them (comm_local_p2p.c) */
    cudaEvent_t done_pool[MAX_RANKS][DONE_POOL];
    int done_pooled[MAX_RANKS];
    const struct p2p *waits_on[MAX_RANKS]; /* ... or the send or receive it completes: its
                                              `doing`, written when a report needs it */
    pl_ledger ledger[MAX_RANKS];
    uint64_t link[MAX_RANKS][MAX_RANKS];
    p2p *posts;
    int refs; /* groups alive */
    pl_trace *trace;
    size_t chunk_bytes;    /* the local engine cuts segments into chunks of this size */
    struct group *groups;  /* every group alive, for pl_comm_destroy_all */
    struct lcomm *handles; /* every handle alive, likewise */
} world;

typedef struct group {
    world *w;
    int n;
    int wrank[MAX_RANKS];     /* member -> world rank */
    int device[MAX_RANKS];    /* member -> device */
    pl_ledger own[MAX_RANKS]; /* member -> its traffic through this group alone (w->lock) */
    /* rendezvous */
    int arrived;
    unsigned long gen;
    /* what each member posted for a call, by the parity of its number
     * (CALLS, SENDS, RECVS): a member that has left call k's meeting may post
     * call k+1 while the others still read call k; it posts call k+2 only
     * once all of them have come to call k+1's meeting, done with call k */
    call calls[2][MAX_RANKS];
    const void *send[2][MAX_RANKS];
    void *recv[2][MAX_RANKS];
    /* each member's FIFO of events: `ready` (its buffer holds step i's
     * data) and `read` (it has copied what it needed of its predecessor's
     * buffer for step i); how many of each it has recorded, and how many its
     * one waiter has enqueued a wait for (the successor waits for `ready`,
     * the predecessor for `read`). A count holds its call's number in the
     * high 32 bits (EPOCH), so it needs no reset between calls: a member
     * still in an earlier call counts below every count of this one. */
    cudaEvent_t ready[MAX_RANKS][FIFO], read[MAX_RANKS][FIFO];
    unsigned long rec_ready[MAX_RANKS], rec_read[MAX_RANKS];
    unsigned long cons_ready[MAX_RANKS], cons_read[MAX_RANKS];
    struct group *split_to[MAX_RANKS]; /* pl_comm_split: each member's new group */
    int is_world;                      /* made by pl_comm_create, not by a split */
    struct group *next_group;
    int members_alive;
} group;

struct lcomm {
    pl_comm base; /* the engine table: first, so a pl_comm * is an lcomm * */
    group *g;
    int rank;
    struct lcomm *next_handle; /* in its world's list */
    unsigned long seq;         /* collective call number */
    int in_call;               /* inside a collective, past its first meeting (lc_begin) */
    mark call_mark, step_mark; /* when the call and its current step began */
    uint64_t step_bytes;
    int step_peer;
    int step_seg; /* the ring step's segment (ring_run), -1: none; its event's chunk - 1 */
    unsigned long fifo_step, fifo_steps; /* the current ring step and how many, for reports */
    void *scratch;                       /* device scratch, on this rank's device */
    size_t scratch_bytes;
    void *work; /* a copy of the operands (reduce, reduce_scatter), kept between calls */
    size_t work_bytes;
    struct p2p *eager;       /* its eager sends not yet reaped, oldest first (pl_send_eager) */
    struct p2p *spare_op;    /* its last send or receive, kept for the next (op_free) */
    cudaEvent_t spare_ready; /* ... and a send's `ready`, on this rank's device */
    char err[2048];
};

#define MOD(a, n) ((((a) % (n)) + (n)) % (n))
/* Member c's current call's posts (group.calls, send, recv) */
#define CALLS(c) ((c)->g->calls[(c)->seq & 1])
#define SENDS(c) ((c)->g->send[(c)->seq & 1])
#define RECVS(c) ((c)->g->recv[(c)->seq & 1])
/* The base of member c's current call's FIFO counts */
#define EPOCH(c) ((unsigned long)(c)->seq << 32)
/* Returns from the calling function with a PL_COMM_CUDA_ERROR naming `what`
 * (the handle is `c`). */
#define CK(call, what)                                                                             \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_) return lc_cuda_fail(c, e_, what);                                                  \
    } while (0)

/* ---- comm_local.c: errors and trace events ----------------------------------------------- */

/* Sets this rank's message ("rank R: ...") and returns r. */
pl_comm_result lc_fail(lcomm *c, pl_comm_result r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
pl_comm_result lc_cuda_fail(lcomm *c, cudaError_t e, const char *what);
/* The times an event starts at, now, on stream s (none without a trace). */
void lc_mark_start(lcomm *c, mark *m, cudaStream_t s);
/* One event on this rank's comm lane, from *m to now (no trace: nothing). */
void lc_emit(lcomm *c, const mark *m, pl_event_kind kind, const char *label, uint64_t bytes,
             int peer);

/* ---- comm_local_wait.c ------------------------------------------------------------------- */

/* Each needs w->lock held. */
void lc_wake(world *w, int wrank);    /* world rank wrank looks again at what it waits for */
void lc_wake_all(world *w);           /* every waiting rank looks again */
double lc_free_clock(const world *w); /* the watchdog's clock: seconds no rank was held */
/* One wait on cv: 1 when the watchdog ran out (see its definition). */
int lc_watch(world *w, pthread_cond_t *cv, double *since, unsigned long long *seen);
void lc_trip(world *w); /* aborts the world with the report of what every rank waits for */
/* Whether cond(arg) holds, after giving the core away up to LC_YIELDS
 * times while it does not (w->lock released around each sched_yield; looked
 * at again only when world rank `me` was woken, lc_wake). */
int lc_yield_until(world *w, int me, int (*cond)(void *), void *arg);
/* Waits until cond(arg) holds, the watchdog runs out or the world stops
 * (first lc_yield_until, then sleeping on the rank's condition variable). */
pl_comm_result lc_wait_until(lcomm *c, int (*cond)(void *), void *arg);
/* Every member of the group arrives before any leaves; `what` is this
 * rank's line in a deadlock report. */
pl_comm_result lc_rendezvous(lcomm *c, const char *what);
/* The engine's abort and hold (without the lock). */
void lc_abort(pl_comm *pc, const char *why);
void lc_hold(pl_comm *pc, int on);

/* ---- comm_local_calls.c ------------------------------------------------------------------ */

/* "all_reduce", ..., "comm_split", "comm_free", "barrier" */
const char *lc_kind_name(int k);
/* Posts this rank's call and buffers, meets the others, checks they all
 * called the same: on any error every member returns one. */
pl_comm_result lc_begin(lcomm *c, const call *k, const void *send, void *recv, cudaStream_t stream);
/* The end of a collective: a rank that failed inside it, past its first
 * meeting, stops the world at once ("rank R failed in all_reduce(...)
 * (call #N): why"), so the others, waiting for its steps, are told which
 * rank failed in which call instead of waiting out the watchdog. Returns r. */
pl_comm_result lc_end(lcomm *c, pl_comm_result r);
/* The meeting of step s of `steps`, and the step's trace event. */
pl_comm_result lc_step(lcomm *c, const char *kind, int s, int steps);
/* The ledger: one message of `bytes` from member `from` to member `to` (w->lock
 * not held); lc_count_bytes: the same between world ranks a and b, w->lock held. */
void lc_account(group *g, int from, int to, size_t bytes);
void lc_count_bytes(world *w, int a, int b, size_t bytes);
/* The group's own ledger: `bytes` from member `from` to member `to` (w->lock held). */
void lc_count_own(group *g, int from, int to, size_t bytes);
pl_ledger lc_ledger(const pl_comm *pc);
pl_ledger lc_ledger_own(const pl_comm *pc);
int lc_world_rank(const pl_comm *pc, int member);
void lc_count_call(pl_comm *pc, pl_comm_call k);
uint64_t lc_link_bytes(const pl_comm *pc, int from, int to);
/* A collective's arguments, as its descriptor says (type, op, root, the
 * buffers each rank must give, the in-place rule): 1 if good, else 0 with
 * this rank's message set. */
int lc_check_args(lcomm *c, const call *k, const void *send, const void *recv);
/* The sizes: count x type size (x n for a buffer of blocks) must fit a
 * size_t, and each buffer the rank gives (need_send, need_recv) must lie in
 * a live allocation of its device with that many bytes from it (where the
 * world can tell: paralab/device.h, pl_device_alloc_room). `what` names the
 * call in the message. 1 if good, else 0 with this rank's message set. */
int lc_check_sizes(lcomm *c, const char *what, const pl_collective *d, size_t count, int type,
                   const void *send, const void *recv, int need_send, int need_recv);

/* ---- comm_local_fifo.c ------------------------------------------------------------------- */

pl_comm_result lc_ensure_events(lcomm *c); /* this rank's FIFO events, made at first use */
/* Record i of this rank's `ready` (which = 1) or `read` (0) event. */
pl_comm_result lc_fifo_record(lcomm *c, int which, unsigned long i, cudaStream_t s);
/* This rank's stream waits for record i of member who's `ready` or `read`. */
pl_comm_result lc_fifo_wait(lcomm *c, int which, int who, unsigned long i, cudaStream_t s);
/* A copy out of member from's buffer, counted in the ledger and the step. */
pl_comm_result lc_fifo_copy(lcomm *c, int from, void *dst, const void *src, size_t bytes,
                            cudaStream_t s);
/* Simulated GPUs (pl_device_memory_is_host): lc_fifo_copy on the modeled
 * clock only, the ledger and the step's counts as lc_fifo_copy's; the
 * caller reads the neighbour's buffer itself (ring_run's reduction), then
 * records `read` with lc_fifo_record_at at the copy's modeled end. */
pl_comm_result lc_fifo_model_copy(lcomm *c, int from, size_t bytes, cudaStream_t s);
/* lc_fifo_record on the modeled clock at t (pl_device_event_record_at). */
pl_comm_result lc_fifo_record_at(lcomm *c, int which, unsigned long i, cudaStream_t s, double t);
/* The end of one chunk step: its trace event. */
void lc_step_done(lcomm *c, const char *kind, int chunk, int chunks, int st, int steps);

/* ---- comm_local_algorithms.c: the collectives (the engine's) ------------------------------ */

pl_comm_result lc_all_reduce(pl_comm *pc, const void *send, void *recv, size_t count, pl_dtype t,
                             pl_redop op, cudaStream_t s);
pl_comm_result lc_reduce_scatter(pl_comm *pc, const void *send, void *recv, size_t recvcount,
                                 pl_dtype t, pl_redop op, cudaStream_t s);
pl_comm_result lc_all_gather(pl_comm *pc, const void *send, void *recv, size_t sendcount,
                             pl_dtype t, cudaStream_t s);
pl_comm_result lc_broadcast(pl_comm *pc, const void *send, void *recv, size_t count, pl_dtype t,
                            int root, cudaStream_t s);
pl_comm_result lc_reduce(pl_comm *pc, const void *send, void *recv, size_t count, pl_dtype t,
                         pl_redop op, int root, cudaStream_t s);
pl_comm_result lc_all_to_all(pl_comm *pc, const void *send, void *recv, size_t count, pl_dtype t,
                             cudaStream_t s);

/* ---- comm_local_p2p.c -------------------------------------------------------------------- */

/* 1 inside pl_group_start()/pl_group_end() on this host thread. */
int lc_in_group(void);
pl_comm_result lc_send(pl_comm *pc, const void *buf, size_t count, pl_dtype t, int peer,
                       cudaStream_t s);
pl_comm_result lc_recv(pl_comm *pc, void *buf, size_t count, pl_dtype t, int peer, cudaStream_t s);
pl_comm_result lc_send_eager(pl_comm *pc, const void *buf, size_t count, pl_dtype t, int peer,
                             cudaStream_t s);
pl_comm_result lc_wait_sends(pl_comm *pc);
/* Forgets c's eager sends not yet reaped (a handle freed after a failure). */
void lc_drop_eager(lcomm *c);
/* Frees what c keeps for its next send or receive. */
void lc_p2p_free_spares(lcomm *c);
/* Writes the `doing` line of every rank that waits in a send or receive
 * (w->lock held): for a deadlock report. */
void lc_p2p_say_waiting(world *w);
pl_comm_result lc_group_start(void);
pl_comm_result lc_group_end(void);

#endif
