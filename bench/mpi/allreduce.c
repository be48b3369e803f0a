/*
 * allreduce.c — the reference paralab-bench comm measures the local
 * engine against: Open MPI's MPI_Allreduce (float, sum) on this machine,
 * with the same sizes and correctness check as the engine's table. Built
 * with mpicc by `make bench`, run by paralab-bench as
 *   mpirun -np N build/mpi/allreduce MAX_BYTES
 * Rank 0 prints one line per size: "bytes count seconds wrong", where
 * seconds is the median of 9 repetitions (each the slowest rank's mean
 * time per call, after a warm-up call; 2000 calls a repetition up to 4 KiB,
 * 200 below 1 MiB, 5 below 16 MiB, then 2) and wrong counts the elements
 * (over all ranks) that differ from N(N+1)/2. As
 *   mpirun -np 2 build/mpi/allreduce pingpong
 * it prints "pingpong bytes seconds": the 2 ranks send one activation of
 * Lab 09 (2 KiB) back and forth, the median of 9 repetitions of 1000 round
 * trips, halved: the one-way time of a pipeline's send and receive (2
 * processes, as the local engine's ping-pong is 2 rank threads: others
 * waiting beside them would poll for cores).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { REPS = 9, PING_BYTES = 2048, PING_ROUNDS = 1000 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ranks 0 and 1 send one activation back and forth: the median one-way time */
static void pingpong(int me)
{
    char *buf = calloc(PING_BYTES, 1);
    if (!buf) MPI_Abort(MPI_COMM_WORLD, 1);
    double reps[REPS];
    int peer = 1 - me;
    for (int rp = -1; rp < REPS; rp++) { /* -1: the warm-up */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int it = 0; it < PING_ROUNDS; it++) {
            if (me == 0) {
                MPI_Send(buf, PING_BYTES, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
                MPI_Recv(buf, PING_BYTES, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, PING_BYTES, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, PING_BYTES, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
            }
        }
        if (rp >= 0) reps[rp] = (MPI_Wtime() - t0) / PING_ROUNDS / 2;
    }
    qsort(reps, REPS, sizeof *reps, cmp_double);
    if (me == 0) printf("pingpong %d %.9e\n", PING_BYTES, reps[REPS / 2]);
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc == 2 && strcmp(argv[1], "pingpong") == 0 && n == 2) {
        pingpong(me);
        MPI_Finalize();
        return 0;
    }
    char *end;
    long max_bytes = argc == 2 ? strtol(argv[1], &end, 10) : 0;
    if (argc != 2 || *end || max_bytes < 64 || max_bytes > (1L << 30)) {
        if (me == 0)
            fprintf(stderr, "usage: mpirun -np N build/mpi/allreduce MAX_BYTES (64..2^30)\n"
                            "       mpirun -np 2 build/mpi/allreduce pingpong\n");
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
        /* a repetition of a few milliseconds at least: 4 processes on 2 cores
         * are preempted now and then, which 20 calls of a few microseconds
         * would each catch whole */
        int iters = bytes <= 4096 ? 2000 : bytes < (1u << 20) ? 200 : bytes < (16u << 20) ? 5 : 2;
        MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); /* warm-up */
        double reps[REPS];
        for (int rp = 0; rp < REPS; rp++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int it = 0; it < iters; it++)
                MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            double t = (MPI_Wtime() - t0) / iters;
            MPI_Allreduce(&t, &reps[rp], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
        qsort(reps, REPS, sizeof *reps, cmp_double);
        long wrong = 0, all_wrong = 0;
        for (size_t i = 0; i < count; i++) wrong += recv[i] != want;
        MPI_Reduce(&wrong, &all_wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (me == 0)
            printf("%zu %zu %.9e %ld\n", count * sizeof(float), count, reps[REPS / 2], all_wrong);
    }
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
