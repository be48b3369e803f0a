/*
 * tests/mpi/nccl_id.c — NCCL's bootstrap over MPI without a GPU
 * (paralab/nccl_mpi.h, core/comm/nccl_mpi.c), run under mpirun:
 *
 *   mpirun -np 2 build/mpi/nccl_id
 *
 * Rank 0 calls ncclGetUniqueId and broadcasts its 128 bytes
 * (pl_nccl_mpi_unique_id); every process then gathers what it got to rank
 * 0, which checks that every process holds the same 128 bytes, that they
 * are not all zero, and that a second id (a second communicator's) differs.
 * Also checked: each process's place on its host (pl_mpi_local_rank: on
 * one machine, local rank = rank, local size = size), the GPU of each of
 * T threads (pl_nccl_mpi_device), and the refusal of more ranks than GPUs.
 * Prints one line per check from rank 0; exit 0 only if all passed.
 * With a GPU for each process on the host (scripts/gpu-check.sh: one
 * process), also ncclCommInitRank with the broadcast id and an all-reduce;
 * without, a SKIP line says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/nccl_mpi.h"

static int fails;

static void check(int rank, int ok, const char *what)
{
    if (rank == 0) printf("%s  %s\n", ok ? "PASS" : "FAIL", what);
    if (!ok) fails++;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = 0, me = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    char err[512] = "";
    ncclUniqueId id, second;
    int rc = pl_nccl_mpi_unique_id(MPI_COMM_WORLD, 0, &id, err, sizeof err);
    if (rc) fprintf(stderr, "nccl_id: rank %d: %s\n", me, err);
    int all_rc = 0;
    MPI_Allreduce(&rc, &all_rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    check(me, all_rc == 0, "pl_nccl_mpi_unique_id: ncclGetUniqueId on rank 0, MPI_Bcast");
    /* every process's 128 bytes, to rank 0 */
    unsigned char *ids = malloc(sizeof id * (size_t)n);
    MPI_Gather(&id, (int)sizeof id, MPI_BYTE, ids, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    int same = 1, nonzero = 0;
    if (me == 0) {
        for (int r = 1; r < n; r++) same &= !memcmp(ids, ids + sizeof id * (size_t)r, sizeof id);
        for (size_t i = 0; i < sizeof id; i++) nonzero |= ids[i] != 0;
    }
    char what[512];
    snprintf(what, sizeof what, "all %d processes hold the same %zu bytes", n, sizeof id);
    check(me, sizeof id == 128 && same, what);
    check(me, me != 0 || nonzero, "the id is not all zero");
    rc = pl_nccl_mpi_unique_id(MPI_COMM_WORLD, n - 1, &second, err, sizeof err);
    int differs = rc == 0 && memcmp(&id, &second, sizeof id) != 0;
    MPI_Allreduce(MPI_IN_PLACE, &differs, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    check(me, differs, "a second id (root: the last rank) differs from the first, everywhere");
    rc = pl_nccl_mpi_unique_id(MPI_COMM_WORLD, n, &second, err, sizeof err);
    snprintf(what, sizeof what, "the root %d: allowed are the communicator's ranks 0..%d", n,
             n - 1);
    check(me, rc == -1 && !strcmp(err, what), "a root out of range: refused, the exact message");

    int local = -1, local_size = -1;
    rc = pl_mpi_local_rank(MPI_COMM_WORLD, &local, &local_size, err, sizeof err);
    int placed = rc == 0 && local == me && local_size == n; /* one machine */
    MPI_Allreduce(MPI_IN_PLACE, &placed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    check(me, placed, "pl_mpi_local_rank on one host: local rank = rank, local size = size");
    /* 2 threads a process, as many GPUs as ranks: process k's threads on 2k, 2k + 1 */
    int d0 = pl_nccl_mpi_device(local, local_size, 2, 0, 2 * n, err, sizeof err);
    int d1 = pl_nccl_mpi_device(local, local_size, 2, 1, 2 * n, err, sizeof err);
    int good = d0 == 2 * me && d1 == 2 * me + 1;
    MPI_Allreduce(MPI_IN_PLACE, &good, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    check(me, good, "pl_nccl_mpi_device: thread t of process k on GPU k * T + t");
    rc = pl_nccl_mpi_device(local, local_size, 2, 0, 2 * n - 1, err, sizeof err);
    snprintf(what, sizeof what,
             "this host runs %d process%s of 2 ranks (%d ranks) and has %d GPU%s: NCCL needs one "
             "GPU per rank (fewer processes or --ranks-per-process on this host, or the MPI "
             "engine)",
             n, n == 1 ? "" : "es", 2 * n, 2 * n - 1, 2 * n - 1 == 1 ? "" : "s");
    check(me, rc == -1 && !strcmp(err, what), "more ranks than GPUs: refused, the exact message");
    free(ids);

    /* with a GPU for each process on this host (gpu-check: one process):
     * ncclCommInitRank with the broadcast id, and an all-reduce of one
     * value per process: 1 + 2 + ... + n */
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
    int enough = gpus >= local_size;
    MPI_Allreduce(MPI_IN_PLACE, &enough, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!enough) {
        if (me == 0)
            printf("SKIP  ncclCommInitRank and an all-reduce: %d GPU%s here for %d process%s (they "
                   "need a GPU each; scripts/gpu-check.sh runs them)\n",
                   gpus, gpus == 1 ? "" : "s", local_size, local_size == 1 ? "" : "es");
    } else {
        ncclComm_t comm = NULL;
        float *dev = NULL, got = 0, mine = (float)(me + 1);
        cudaSetDevice(local);
        ncclResult_t e = ncclCommInitRank(&comm, n, id, me);
        int ok = e == ncclSuccess && cudaMalloc((void **)&dev, sizeof *dev) == cudaSuccess &&
                 cudaMemcpy(dev, &mine, sizeof mine, cudaMemcpyHostToDevice) == cudaSuccess &&
                 ncclAllReduce(dev, dev, 1, ncclFloat, ncclSum, comm, 0) == ncclSuccess &&
                 cudaMemcpy(&got, dev, sizeof got, cudaMemcpyDeviceToHost) == cudaSuccess &&
                 got == (float)n * (float)(n + 1) / 2;
        if (e != ncclSuccess)
            fprintf(stderr, "nccl_id: rank %d: ncclCommInitRank: %s\n", me, ncclGetErrorString(e));
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        check(me, ok,
              "ncclCommInitRank with the broadcast id on each process's GPU; an all-reduce of "
              "rank + 1 gives n(n+1)/2");
        cudaFree(dev);
        if (comm) ncclCommDestroy(comm);
    }
    int total = fails;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf("%s nccl_id: %d process%s, %s\n", total ? "✗" : "✓", n, n == 1 ? "" : "es",
               total ? "a check failed" : "every check passed");
    MPI_Finalize();
    return total ? 1 : 0;
}
