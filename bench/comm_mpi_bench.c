/*
 * comm_mpi_bench.c — paralab-bench comm started by mpirun in the MPI build
 * (build/sim-mpi): all-reduce (float, sum) at 4 KiB, 64 KiB, 1 MiB and
 * 16 MiB, measured in the same run three ways on the same bytes:
 *
 *   MPI engine    P processes x 1 rank thread (pl_comm_create_mpi, through
 *                 pl_world_run_config with .distributed = 1): the local
 *                 engine's ring over MPI point to point
 *   local engine  P rank threads in process 0 alone (the one-process
 *                 engine); the other processes wait, asleep, at a barrier
 *   Open MPI      MPI_Allreduce called here, on host buffers, by the P
 *                 processes: the reference the two others are divided by
 *
 * For each size and way: K warm-up calls (at least 3), then R timed
 * repetitions (--repeat, default 9) of K calls each (--iters; by default
 * 200, 100, 20, 4 by size); a repetition's time is the slowest rank's mean
 * per call; the table gives the median repetition, the fastest and the
 * slowest (the spread),
 * busbw = S / t x 2(P-1)/P (nccl-tests), and busbw over Open MPI's. Every
 * element of every rank's result is checked (rank q sends q + 1 + i mod
 * 251 at element i) after the last repetition, whose receive buffer was
 * cleared first. Process 0 prints; the others' stdout is closed by
 * pl_dist_init.
 */
#include "bench.h"

#ifndef PARALAB_MPI

int bench_comm_mpi(long max_bytes, int repeat, int iters)
{
    (void)max_bytes, (void)repeat, (void)iters;
    return -1; /* no MPI engine in this build */
}

#else

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "paralab/clock.h"
#include "paralab/collectives.h"
#include "paralab/comm.h"
#include "paralab/device.h"
#include "paralab/dist.h"
#include "paralab/world.h"

enum { E_MPI, E_LOCAL, E_OMPI, E_COUNT }; /* the three ways, in the table's order */
enum { MAX_REPS = 100, MAX_P = 64 };

static const char *const way_name[E_COUNT] = {"MPI engine", "local engine", "Open MPI"};

typedef struct {
    double t[MAX_REPS]; /* seconds per call in each repetition */
    long wrong;         /* elements of the result that differ */
} rank_row;

typedef struct {
    size_t count; /* floats */
    int reps, iters, warm;
    rank_row row[MAX_P]; /* by global rank; process 0 gathers them */
    char err[512];
} mpi_bench;

typedef struct {
    double med, lo, hi; /* seconds per call: median, fastest, slowest repetition */
    long wrong, checked;
} result;

static float sent(int rank, size_t i) { return (float)(rank + 1) + (float)(i % 251); }
static float summed(int n, size_t i)
{
    return (float)n * (float)(n + 1) / 2 + (float)n * (float)(i % 251);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The rows of n ranks: per repetition the slowest rank; then the median, the
 * fastest and the slowest of those. */
static result summarise(const rank_row *row, int n, int reps, size_t count)
{
    double t[MAX_REPS];
    result r = {0, 0, 0, 0, (long)count * n};
    for (int k = 0; k < reps; k++) {
        t[k] = 0;
        for (int q = 0; q < n; q++) t[k] = row[q].t[k] > t[k] ? row[q].t[k] : t[k];
    }
    for (int q = 0; q < n; q++) r.wrong += row[q].wrong;
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    r.med = reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;
    r.lo = t[0];
    r.hi = t[reps - 1];
    return r;
}

/* One rank of the MPI engine's world or of the local engine's. */
static int rank_main(pl_rank *r)
{
    mpi_bench *b = r->arg;
    size_t bytes = b->count * sizeof(float);
    float *send, *recv, *h = malloc(bytes);
    if (!h || cudaMalloc((void **)&send, bytes) || cudaMalloc((void **)&recv, bytes)) {
        snprintf(r->error, sizeof r->error, "out of memory for %zu bytes", bytes);
        free(h);
        return 1;
    }
    for (size_t i = 0; i < b->count; i++) h[i] = sent(r->rank, i);
    cudaMemcpy(send, h, bytes, cudaMemcpyHostToDevice);
    rank_row *mine = &b->row[r->rank];
    int failed = 0;
    for (int k = 0; k < b->warm && !failed; k++)
        failed = pl_all_reduce(r->comm, send, recv, b->count, PL_FLOAT32, PL_SUM, r->stream) != 0;
    failed = failed || cudaStreamSynchronize(r->stream);
    for (int k = 0; k < b->reps && !failed; k++) {
        /* the last repetition's result is checked: nothing stale in it (on the
         * rank's own stream: a cudaMemset would go on the legacy stream, which
         * the rank's non-blocking stream does not wait for) */
        if (k == b->reps - 1)
            failed = cudaMemsetAsync(recv, 0xff, bytes, r->stream) != cudaSuccess ||
                     cudaStreamSynchronize(r->stream) != cudaSuccess;
        if (failed || pl_comm_barrier(r->comm)) {
            failed = 1;
            break;
        }
        double t0 = pl_now();
        for (int it = 0; it < b->iters && !failed; it++)
            failed =
                pl_all_reduce(r->comm, send, recv, b->count, PL_FLOAT32, PL_SUM, r->stream) != 0;
        failed = failed || cudaStreamSynchronize(r->stream);
        mine->t[k] = (pl_now() - t0) / b->iters;
    }
    if (failed) {
        snprintf(r->error, sizeof r->error, "all_reduce of %zu floats: %s", b->count,
                 pl_comm_last_error(r->comm));
        cudaFree(send);
        cudaFree(recv);
        free(h);
        return 1;
    }
    cudaMemcpy(h, recv, bytes, cudaMemcpyDeviceToHost);
    mine->wrong = 0;
    for (size_t i = 0; i < b->count; i++) mine->wrong += h[i] != summed(r->size, i);
    /* every rank's row to rank 0's process (the local engine's: there already) */
    pl_dist_gather_host(r->comm, b->row, sizeof(rank_row), sizeof(rank_row));
    cudaFree(send);
    cudaFree(recv);
    free(h);
    return 0;
}

/* Open MPI's MPI_Allreduce on host buffers, the same warm-up, repetitions,
 * calls and check; rank q's row lands in process 0's b->row[q]. */
static int run_ompi(mpi_bench *b, int me, int n)
{
    size_t bytes = b->count * sizeof(float);
    float *send = malloc(bytes), *recv = malloc(bytes);
    int ok = send && recv;
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        snprintf(b->err, sizeof b->err, "Open MPI: out of memory for %zu bytes", bytes);
        free(send);
        free(recv);
        return 1;
    }
    for (size_t i = 0; i < b->count; i++) send[i] = sent(me, i);
    rank_row mine = {{0}, 0};
    for (int k = 0; k < b->warm; k++)
        MPI_Allreduce(send, recv, (int)b->count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < b->reps; k++) {
        if (k == b->reps - 1) memset(recv, 0xff, bytes);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int it = 0; it < b->iters; it++)
            MPI_Allreduce(send, recv, (int)b->count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        mine.t[k] = (MPI_Wtime() - t0) / b->iters;
    }
    for (size_t i = 0; i < b->count; i++) mine.wrong += recv[i] != summed(n, i);
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, b->row, (int)sizeof mine, MPI_BYTE, 0,
               MPI_COMM_WORLD);
    free(send);
    free(recv);
    return 0;
}

/* Process 0 runs the local engine's world of n rank threads; the others
 * wait for it at a barrier they poll asleep (an MPI_Barrier would spin on
 * the cores the rank threads need). Every process returns the outcome. */
static int run_local(mpi_bench *b, int me, int n)
{
    int rc = 0;
    if (me == 0) {
        pl_world_config cfg = {.n = n, .comm_timeout_s = 60, .comm = PL_COMM_LOCAL};
        rc = pl_world_run_config(&cfg, rank_main, b, b->err, sizeof b->err) != 0;
    }
    MPI_Request rq;
    MPI_Ibcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq);
    for (int done = 0;;) {
        MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
        if (done) break;
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    return rc;
}

/* The 3 x sizes results, then the table in process 0. */
int bench_comm_mpi(long max_bytes, int repeat, int iters)
{
    char err[512];
    if (pl_dist_init(err, sizeof err)) {
        fprintf(stderr, "paralab-bench: %s\n", err);
        return 1;
    }
    /* not started by mpirun; or real GPUs (build/cuda-mpi), where the MPI
     * engine does not run (NCCL is the engine across processes there) */
    if (!pl_dist_active() || !pl_device_memory_is_host()) return -1;
    int me = pl_dist_proc(), n = pl_dist_procs();
    if (n > MAX_P) {
        if (me == 0)
            fprintf(stderr, "paralab-bench comm: %d processes; at most %d are measured\n", n,
                    MAX_P);
        return 1;
    }
    int reps = repeat > 0 ? repeat : 9;
    mpi_bench *b = calloc(1, sizeof *b);
    if (!b) return 1;
    const pl_collective *ar = &pl_collectives[PL_CALL_ALL_REDUCE];
    double factor = pl_collective_busbw_factor(ar, n);
    if (me == 0) {
        printf("paralab-bench comm: started by mpirun as %d processes (MPI build): all_reduce "
               "(float, sum) of %d ranks, three ways in this same run:\n"
               "  MPI engine    %d processes x 1 rank thread (pl_comm_create_mpi: the local "
               "engine's ring over MPI point to point)\n"
               "  local engine  %d rank threads in process 0 alone (the others wait asleep at a "
               "barrier)\n"
               "  Open MPI      MPI_Allreduce on host buffers, called by the %d processes: the "
               "reference\n"
               "each: warm-up, then %d repetitions of K calls (K by size%s); a repetition's time "
               "is the slowest rank's mean per call.\n"
               "columns: time = median repetition (latency per call, us), fastest and slowest "
               "repetition (the spread), busbw = size / time x 2(n-1)/n (GB/s), #wrong = "
               "elements of all ranks' results that differ from the sum (every one checked), "
               "busbw / Open MPI = Open MPI's time / this time\n\n",
               n, n, n, n, n, reps, iters > 0 ? ", here --iters" : ": 200, 100, 20, 4");
        printf("%10s %9s  %-12s %10s %10s %10s %10s %9s %9s %16s\n", "size (B)", "count", "way",
               "time (us)", "min (us)", "max (us)", "busbw GB/s", "#wrong", "checked",
               "busbw / Open MPI");
        fflush(stdout);
    }
    long checked[E_COUNT] = {0}, wrong[E_COUNT] = {0};
    int rc = 0, rows = 0;
    static const long sizes[] = {4L << 10, 64L << 10, 1L << 20, 16L << 20};
    for (int si = 0; si < 4 && !rc; si++) {
        long bytes = sizes[si];
        if (bytes > max_bytes) {
            if (si > 0) break;
            bytes = max_bytes < 64 ? 64 : max_bytes; /* --scale: at least one size */
        }
        memset(b, 0, sizeof *b);
        b->count = (size_t)bytes / sizeof(float) / (size_t)n * (size_t)n; /* n divides it */
        b->reps = reps;
        b->iters = iters > 0             ? iters
                   : bytes < (64L << 10) ? 200
                   : bytes < (1L << 20)  ? 100
                   : bytes < (16L << 20) ? 20
                                         : 4;
        b->warm = b->iters < 3 ? 3 : b->iters;
        result res[E_COUNT];
        /* the MPI engine: every process one rank of the world */
        pl_world_config cfg = {.n = n,
                               .comm_timeout_s = 60,
                               .comm = PL_COMM_LOCAL,
                               .distributed = 1,
                               .ranks_per_process = 1};
        if (pl_world_run_config(&cfg, rank_main, b, b->err, sizeof b->err)) {
            fprintf(stderr, "paralab-bench comm: process %d: MPI engine: %s\n", me, b->err);
            rc = 1;
            break;
        }
        res[E_MPI] = summarise(b->row, n, reps, b->count);
        memset(b->row, 0, sizeof b->row);
        if (run_local(b, me, n)) {
            if (me == 0) fprintf(stderr, "paralab-bench comm: local engine: %s\n", b->err);
            rc = 1;
            break;
        }
        res[E_LOCAL] = summarise(b->row, n, reps, b->count);
        memset(b->row, 0, sizeof b->row);
        if (run_ompi(b, me, n)) {
            fprintf(stderr, "paralab-bench comm: process %d: %s\n", me, b->err);
            rc = 1;
            break;
        }
        res[E_OMPI] = summarise(b->row, n, reps, b->count);
        if (me == 0) {
            double S = (double)b->count * sizeof(float);
            double ref = S / res[E_OMPI].med / 1e9 * factor;
            for (int e = 0; e < E_COUNT; e++) {
                double bus = S / res[e].med / 1e9 * factor;
                char head[2][32] = {"", ""};
                if (e == 0) {
                    snprintf(head[0], sizeof head[0], "%.0f", S);
                    snprintf(head[1], sizeof head[1], "%zu", b->count);
                }
                printf("%10s %9s  %-12s %10.1f %10.1f %10.1f %10.3f %9ld %9ld %16.2f\n", head[0],
                       head[1], way_name[e], res[e].med * 1e6, res[e].lo * 1e6, res[e].hi * 1e6,
                       bus, res[e].wrong, res[e].checked, bus / ref);
                checked[e] += res[e].checked;
                wrong[e] += res[e].wrong;
            }
            fflush(stdout);
        }
        rows++;
    }
    if (me == 0 && !rc) {
        printf("\nresults checked, every element of every rank (%d size%s):", rows,
               rows == 1 ? "" : "s");
        for (int e = 0; e < E_COUNT; e++)
            printf("%s %s %ld wrong of %ld", e ? "," : "", way_name[e], wrong[e], checked[e]);
        printf("\n");
        for (int e = 0; e < E_COUNT; e++)
            if (wrong[e]) rc = 1;
    }
    free(b);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}

#endif
