/*
 * paralab/nccl_mpi.h — NCCL across processes, bootstrapped by MPI (the CUDA
 * build with MPI: `make cuda CUDA=1 MPI=1` -> build/cuda-mpi; the plain
 * CUDA and simulated builds neither compile nor need this).
 *
 * As NCCL's documentation ("Creating a communicator") and nccl-tests do it:
 * rank 0 of an MPI communicator calls ncclGetUniqueId, its 128 bytes go to
 * every process with MPI_Bcast, each process picks its GPUs from the
 * processes on its host (an MPI_Allgather of host names: the processes of
 * lower rank on the same host come first), and every NCCL rank calls
 * ncclCommInitRank with the world's size and its global rank, process *
 * threads + thread. ncclGetUniqueId needs no GPU (the id is the root's
 * address for the bootstrap); ncclCommInitRank does.
 *
 * The groups (pl_comm_split on a handle made here, as on any NCCL handle):
 * ncclCommSplit where NCCL has it (2.18 and later), else a fresh unique id
 * per group, made by the group's first member and all-gathered over the
 * parent communicator, and ncclCommInitRank.
 */
#ifndef PARALAB_NCCL_MPI_H
#define PARALAB_NCCL_MPI_H

#include <stddef.h>

#include <mpi.h>
#include <nccl.h>

#include "paralab/comm.h"

/* This process's place on its host: *local, the processes of comm on the
 * same host (MPI_Get_processor_name) with a lower rank; *local_size, how
 * many processes of comm run there. 0, or -1 with err naming the MPI call
 * and its error. */
int pl_mpi_local_rank(MPI_Comm comm, int *local, int *local_size, char *err, size_t cap);

/* The unique id of a new NCCL communicator, the same 128 bytes in every
 * process of comm: process `root` calls ncclGetUniqueId, then MPI_Bcast
 * sends its status and the id. 0, or -1 in every process with err (the
 * root's NCCL error, or the MPI call that failed). */
int pl_nccl_mpi_unique_id(MPI_Comm comm, int root, ncclUniqueId *id, char *err, size_t cap);

/* The GPU of thread `thread` (0..threads-1) of the process with place
 * `local` of `local_size` on a host with `gpus` GPUs: local * threads +
 * thread. -1 with err when the host's processes run more ranks than it has
 * GPUs (NCCL needs one GPU per rank) or an argument is out of range. */
int pl_nccl_mpi_device(int local, int local_size, int threads, int thread, int gpus, char *err,
                       size_t cap);

/* This process's `threads` ranks (1..64 / processes) of a world of
 * processes * threads NCCL ranks over the processes of comm: ranks[t] is
 * global rank process * threads + t, on GPU devices[t] (chosen by
 * pl_nccl_mpi_device; written when devices is not NULL). Every process of
 * comm calls it with the same threads. Its handles are NCCL engine handles
 * (paralab/comm.h) whose ledger counts this process's ranks' traffic only;
 * pl_comm_destroy_all(ranks, threads) frees them. PL_COMM_OK, or an error
 * with err. */
pl_comm_result pl_comm_create_nccl_mpi(MPI_Comm comm, int threads, pl_comm **ranks, int *devices,
                                       char *err, size_t err_size);

#endif
