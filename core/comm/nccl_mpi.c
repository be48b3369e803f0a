/*
 * nccl_mpi.c — NCCL's bootstrap over MPI (paralab/nccl_mpi.h): the unique
 * id from the root to every process, the host-local place of each process
 * and the GPU of each of its ranks. Only NCCL and MPI: no GPU is needed
 * (tests/mpi/nccl_id.c runs it under mpirun without one). Compiled in the
 * CUDA build with MPI (mk/build.mk, MPI=1) only; comm_nccl.c makes the
 * communicators with it (pl_comm_create_nccl_mpi).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/nccl_mpi.h"

/* err: "what: MPI's message for rc". */
static int mpi_fail(int rc, const char *what, char *err, size_t cap)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error %d", rc);
    snprintf(err, cap, "%s: %s", what, msg);
    return -1;
}

int pl_mpi_local_rank(MPI_Comm comm, int *local, int *local_size, char *err, size_t cap)
{
    int n = 0, me = 0, len = 0, rc;
    if ((rc = MPI_Comm_size(comm, &n)) != MPI_SUCCESS ||
        (rc = MPI_Comm_rank(comm, &me)) != MPI_SUCCESS)
        return mpi_fail(rc, "MPI_Comm_size/rank", err, cap);
    char mine[MPI_MAX_PROCESSOR_NAME];
    memset(mine, 0, sizeof mine); /* the bytes after the name compare too */
    if ((rc = MPI_Get_processor_name(mine, &len)) != MPI_SUCCESS)
        return mpi_fail(rc, "MPI_Get_processor_name", err, cap);
    char *all = calloc((size_t)n, MPI_MAX_PROCESSOR_NAME);
    if (!all) {
        snprintf(err, cap, "out of memory for %d host names", n);
        return -1;
    }
    rc = MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
                       MPI_CHAR, comm);
    if (rc != MPI_SUCCESS) {
        free(all);
        return mpi_fail(rc, "MPI_Allgather of the host names", err, cap);
    }
    *local = *local_size = 0;
    for (int r = 0; r < n; r++)
        if (!strncmp(all + (size_t)r * MPI_MAX_PROCESSOR_NAME, mine, MPI_MAX_PROCESSOR_NAME)) {
            if (r < me) ++*local;
            ++*local_size;
        }
    free(all);
    return 0;
}

int pl_nccl_mpi_unique_id(MPI_Comm comm, int root, ncclUniqueId *id, char *err, size_t cap)
{
    int n = 0, me = 0, rc;
    if ((rc = MPI_Comm_size(comm, &n)) != MPI_SUCCESS ||
        (rc = MPI_Comm_rank(comm, &me)) != MPI_SUCCESS)
        return mpi_fail(rc, "MPI_Comm_size/rank", err, cap);
    if (root < 0 || root >= n) {
        snprintf(err, cap, "the root %d: allowed are the communicator's ranks 0..%d", root, n - 1);
        return -1;
    }
    int status = ncclSuccess; /* the root's: every process learns it */
    memset(id, 0, sizeof *id);
    if (me == root) status = (int)ncclGetUniqueId(id);
    if ((rc = MPI_Bcast(&status, 1, MPI_INT, root, comm)) != MPI_SUCCESS)
        return mpi_fail(rc, "MPI_Bcast of ncclGetUniqueId's status", err, cap);
    if (status != ncclSuccess) {
        snprintf(err, cap, "ncclGetUniqueId on rank %d: %s", root,
                 ncclGetErrorString((ncclResult_t)status));
        return -1;
    }
    /* the id: NCCL_UNIQUE_ID_BYTES (128) bytes */
    if ((rc = MPI_Bcast(id, (int)sizeof *id, MPI_BYTE, root, comm)) != MPI_SUCCESS)
        return mpi_fail(rc, "MPI_Bcast of the NCCL unique id", err, cap);
    return 0;
}

int pl_nccl_mpi_device(int local, int local_size, int threads, int thread, int gpus, char *err,
                       size_t cap)
{
    if (local_size < 1 || local < 0 || local >= local_size || threads < 1 || thread < 0 ||
        thread >= threads) {
        snprintf(err, cap,
                 "process %d of %d on its host, thread %d of %d: allowed are 0..processes-1 and "
                 "0..threads-1",
                 local, local_size, thread, threads);
        return -1;
    }
    if ((long)local_size * threads > gpus) {
        snprintf(err, cap,
                 "this host runs %d process%s of %d rank%s (%d ranks) and has %d GPU%s: NCCL "
                 "needs one GPU per rank (fewer processes or --ranks-per-process on this host, "
                 "or the MPI engine)",
                 local_size, local_size == 1 ? "" : "es", threads, threads == 1 ? "" : "s",
                 local_size * threads, gpus, gpus == 1 ? "" : "s");
        return -1;
    }
    return local * threads + thread;
}
