/*
 * paralab/dist.h — a world of several processes, launched by mpirun.
 *
 * In the MPI build (`make mpi`: build/sim-mpi, compiled with PARALAB_MPI and
 * Open MPI's flags), a lab started by `mpirun -np P` joins a world of P x T
 * ranks: P processes, T rank threads each (--ranks-per-process T, default
 * 1); the global rank of thread t of process p is p * T + t, and it uses
 * device t of its own process. The communicators of that world are the MPI
 * engine's (core/comm/comm_mpi.c). Without mpirun, and in every other build,
 * nothing here changes anything: pl_dist_active() is 0.
 */
#ifndef PARALAB_DIST_H
#define PARALAB_DIST_H

#include <stddef.h>

#include "paralab/comm.h"

/* Joins the MPI world when the process was started by mpirun (Open MPI's
 * OMPI_COMM_WORLD_SIZE, or PMIX_RANK / PMI_RANK, in the environment) in the
 * MPI build: MPI_Init_thread asking for MPI_THREAD_MULTIPLE (every rank
 * thread calls MPI). Idempotent. Returns 0, or 1 with a sentence in err
 * (MPI did not grant MPI_THREAD_MULTIPLE; its tags are too small). The
 * processes other than 0 send their stdout to /dev/null (process 0 prints
 * the lab; every process's stderr stays), unless PARALAB_MPI_OUTPUT=all.
 * MPI_Finalize runs at exit. */
int pl_dist_init(char *err, size_t err_size);
/* 1 when this process is one of an MPI world (after pl_dist_init). */
int pl_dist_active(void);
int pl_dist_procs(void); /* P: 1 when not active */
int pl_dist_proc(void);  /* p: 0 when not active */
/* "MPI build" or "" : whether this build has MPI at all. */
int pl_dist_built(void);

/* Makes the T handles of this process's ranks on a new world communicator
 * of n = P * T ranks on the MPI engine: handle t is global rank p * T + t on
 * devices[t]. Called once per process, by any thread, in every process with
 * the same n and T. timeout_s: how long a rank may wait for a message
 * before it reports a deadlock (<= 0: 10 s). */
pl_comm_result pl_comm_create_mpi(int n, int threads, const int *devices, double timeout_s,
                                  pl_comm **ranks, char *err, size_t err_size);

/* This process's T handles of the world of n = P * T ranks on the build's
 * engine across processes: on simulated GPUs the MPI engine
 * (pl_comm_create_mpi, devices[t] the device of thread t); in the CUDA
 * build with MPI (build/cuda-mpi) NCCL, bootstrapped over MPI
 * (pl_comm_create_nccl_mpi: devices[t] is written, the GPU of thread t by
 * the processes on its host). Called as pl_comm_create_mpi. */
pl_comm_result pl_comm_create_dist(int n, int threads, int *devices, double timeout_s,
                                   pl_comm **ranks, char *err, size_t err_size);

/* bytes at buf in process 0 to buf in every process (MPI_Bcast over all
 * processes): called by one thread of each process, every process alike,
 * outside a world's run. Outside an MPI world it does nothing. */
void pl_dist_bcast_host(void *buf, size_t bytes);
/* The largest of every process's v (MPI_Allreduce, MPI_MAX): called like
 * pl_dist_bcast_host. Outside an MPI world, v. (A world of several
 * processes starts every rank's modeled clock at the latest of theirs.) */
double pl_dist_max(double v);

/* Host data of every rank to rank 0 (for what a lab prints): each rank
 * calls it once with the same base, stride and bytes; the bytes of rank q,
 * at base + q * stride in q's process, are copied to base + q * stride in
 * rank 0's process. Ranks of one process share the memory already: outside
 * an MPI world it does nothing. Not counted in the ledger, not traced.
 * world: the world communicator of pl_comm_create_dist, on either engine
 * (the MPI engine's waits time out and stop with its world; on NCCL's
 * world, build/cuda-mpi, plain MPI without a timeout). */
void pl_dist_gather_host(const pl_comm *world, void *base, size_t stride, size_t bytes);

/* Host data of every rank to every process (for what every rank must know,
 * e.g. whether any rank's groups were refused): each rank of the world
 * communicator calls it once with the same base, stride and bytes, its own
 * row written; when it returns, the bytes of every rank q are at base + q *
 * stride in the caller's process. The rows of the caller's own process are
 * its threads' own: a barrier before the call makes sure they are written.
 * PL_COMM_OK; or, the world stopped or a wait timed out, the engine's
 * result with pl_comm_last_error(world) (the rows then as they were).
 * Outside an MPI world it does nothing (PL_COMM_OK). Not counted in the
 * ledger, not traced. Either engine's world, as pl_dist_gather_host. */
pl_comm_result pl_dist_allgather_host(const pl_comm *world, void *base, size_t stride,
                                      size_t bytes);

#endif
