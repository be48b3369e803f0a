/*
 * allreduce.c — the reference paralab-bench comm measures the local
 * engine against: Open MPI's MPI_Allreduce (float, sum) on this machine,
 * with the same sizes, iteration counts and correctness check as the
 * engine's table. Built with mpicc by `make bench`, run by paralab-bench as
 *   mpirun -np N build/mpi/allreduce MAX_BYTES
 * Rank 0 prints one line per size: "bytes count seconds wrong", where
 * seconds is the slowest rank's mean time per call and wrong counts the
 * elements (over all ranks) that differ from N(N+1)/2.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    char *end;
    long max_bytes = argc == 2 ? strtol(argv[1], &end, 10) : 0;
    if (argc != 2 || *end || max_bytes < 64 || max_bytes > (1L << 30)) {
        if (me == 0)
            fprintf(stderr, "usage: mpirun -np N build/mpi/allreduce MAX_BYTES (64..2^30)\n");
        MPI_Finalize();
        return 2;
    }
    size_t max_count = (size_t)max_bytes / sizeof(float);
    float *send = malloc(max_count * sizeof(float)), *recv = malloc(max_count * sizeof(float));
    if (!send || !recv) {
        fprintf(stderr, "allreduce: rank %d: out of memory for %ld bytes\n", me, max_bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < max_count; i++) send[i] = (float)(me + 1);
    const float want = (float)n * (float)(n + 1) / 2;
    for (size_t bytes = 64; bytes <= (size_t)max_bytes; bytes *= 4) {
        /* as the engine's table: N divides the count */
        size_t count = bytes / sizeof(float) / (size_t)n * (size_t)n;
        int iters = bytes < (1u << 20) ? 20 : bytes < (16u << 20) ? 5 : 2;
        MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); /* warm-up */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int it = 0; it < iters; it++)
            MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double t = (MPI_Wtime() - t0) / iters, tmax = 0;
        long wrong = 0, all_wrong = 0;
        for (size_t i = 0; i < count; i++) wrong += recv[i] != want;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&wrong, &all_wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (me == 0) printf("%zu %zu %.9e %ld\n", count * sizeof(float), count, tmax, all_wrong);
    }
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
