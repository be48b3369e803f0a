/*
 * paralab/world.h — a world of N ranks: one host thread per rank, each
 * bound to a device (rank r on device devices[r], by default r mod the
 * device count) with its own stream and its handle on the world
 * communicator. The calling thread waits for every rank.
 *
 * A rank that fails (its function returns non-zero) stops the world: ranks
 * waiting in communicator calls return PL_COMM_ABORTED instead of hanging,
 * and pl_world_run reports the first failure with its rank.
 */
#ifndef PARALAB_WORLD_H
#define PARALAB_WORLD_H

#include <cuda_runtime.h>

#include "paralab/comm.h"

#define PL_MAX_RANKS 64

typedef struct pl_rank {
    int rank, size, device;
    pl_comm *comm;            /* this rank's handle on the world communicator */
    cudaStream_t stream;      /* this rank's stream (non-blocking) */
    void *arg;                /* what pl_world_run was given */
    struct pl_player *player; /* paces pl_step (NULL: steps only meet) */
    struct pl_trace *trace;   /* the world's trace, for a lab's own events (NULL: none) */
    char error[1024];         /* a failing rank function may explain here */
} pl_rank;

/* Returns 0 on success, non-zero on failure (message in r->error). */
typedef int (*pl_rank_fn)(pl_rank *r);

/* A value of the metric `name`, into the world's trace (a note,
 * paralab/trace.h; nothing without a trace), for the UI's metrics pane,
 * the trace file and its replay: per batch (e.g. "loss"), and at each
 * epoch's end its mean as "epoch " + the same name ("epoch loss", the value
 * the narration gives): the pane then draws the whole run per epoch, on a
 * scale from 0 to its maximum. Without an epoch series it draws the whole
 * run, a column the mean of its values. From the rank's thread (or any
 * thread: notes keep the order they were made in). */
void pl_metric(const pl_rank *r, const char *name, double value);
/* A sample of the rank's device memory (pl_device_memory), into the world's
 * trace: the world takes one when the rank starts, at each of its steps
 * (pl_step, pl_step_begin) and when it ends, on the rank's thread; a lab
 * may add one after it allocates. Leaves the thread's current device as it
 * was. Nothing without a trace. */
void pl_rank_note_memory(const pl_rank *r);

/* Runs fn on n ranks (1..PL_MAX_RANKS). devices: NULL for rank r on device
 * r mod count. The communicator is the local engine's (pl_world_run_config
 * chooses). comm_timeout_s: its deadlock timeout (<= 0: 10 s). Returns 0 when every rank returned
 * 0; otherwise non-zero, with "rank R: <its message>" for the first failing rank in err. */
int pl_world_run(int n, const int *devices, double comm_timeout_s, pl_rank_fn fn, void *arg,
                 char *err, size_t err_size);

/* The same, recording the communicator's events into `trace` (rings for at
 * least n ranks; NULL: none). */
struct pl_trace;
int pl_world_run_traced(int n, const int *devices, double comm_timeout_s, struct pl_trace *trace,
                        pl_rank_fn fn, void *arg, char *err, size_t err_size);

/* Everything a world can be given. */
struct pl_player;
typedef struct pl_world_config {
    int n;
    const int *devices;         /* NULL: rank r on device r mod count */
    double comm_timeout_s;      /* <= 0: 10 s */
    struct pl_trace *trace;     /* NULL: none */
    struct pl_player *player;   /* NULL: pl_step only meets */
    pl_comm_engine_choice comm; /* PL_COMM_AUTO (0): NCCL when every rank has its own
                                   real GPU, else the local engine */
    size_t comm_chunk_bytes;    /* the local engine's chunk (0: 4 MiB) */
    /* Under mpirun (paralab/dist.h, the MPI build): 1 makes this the world of
     * every process, n = processes x ranks_per_process ranks, this process
     * running global ranks p*T .. p*T+T-1 on its devices 0..T-1 with the MPI
     * engine (comm is ignored). 0, or no mpirun: this process alone, as
     * always (a lab's checks and probes run so in every process). */
    int distributed;
    int ranks_per_process; /* T (0: 1) */
} pl_world_config;
int pl_world_run_config(const pl_world_config *cfg, pl_rank_fn fn, void *arg, char *err,
                        size_t err_size);

#endif
