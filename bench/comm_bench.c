/*
 * comm_bench.c — paralab-bench comm: collectives timed on the wall clock,
 * as nccl-tests prints them: size, count, type, redop, time, algbw, busbw,
 * #wrong — for all-reduce, all-gather, reduce-scatter and broadcast, N = 2,
 * 4, 8.
 *
 * Simulated build: the local engine on simulated devices (this machine's
 * CPU does the copies and the reductions). The references, measured in the
 * same run: memcpy bandwidth — bytes copied per second, B/t: one hop of an
 * in-memory ring is such a copy, and busbw is defined so that it compares
 * with the bandwidth of one link (nccl-tests, doc/PERFORMANCE.md), so a
 * perfect in-memory engine reaches 1.0 of it — and Open MPI's MPI_Allreduce
 * with the same number of processes and sizes, and its ping-pong with 2
 * (bench/mpi/allreduce.c, run with mpirun, processes bound to cores; the
 * path of the program in $PARALAB_MPI_ALLREDUCE, which `make bench`
 * builds). Both references are measured again after the tables. Goals:
 * busbw at least half of memcpy's from 1 MiB up; all-reduce busbw at least
 * Open MPI's from 1 MiB up at N = 4; an all-reduce up to 4 KiB, and a
 * pipeline's hop, within 3x of Open MPI's time; the references' two
 * measurements within 20 % of each other.
 *
 * CUDA build (make gpu-check): the same tables for NCCL, where there is a
 * GPU per rank, then for the local engine with its busbw over NCCL's.
 *
 * Under mpirun (bench_mpi_launch): the MPI build (build/sim-mpi) measures
 * the MPI engine, the local engine and MPI_Allreduce against each other
 * (bench/comm_mpi_bench.c, bench_comm_mpi). In a build without MPI, process
 * 0 says so and what it measures (the one-process tables, without Open
 * MPI's reference: mpirun cannot start from inside mpirun); the other
 * processes end at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cuda_runtime.h>

#include "bench.h"
#include "paralab/clock.h"
#include "paralab/collectives.h"
#include "paralab/comm.h"
#include "paralab/device.h"
#include "paralab/kernels.h"
#include "paralab/world.h"

/* The tables, in order; each collective's name, sizes and busbw factor are
 * its descriptor's (paralab/collectives.h). */
enum { C_ALL_REDUCE, C_ALL_GATHER, C_REDUCE_SCATTER, C_BROADCAST, C_COUNT };
static const pl_collective *const coll[C_COUNT] = {
    &pl_collectives[PL_CALL_ALL_REDUCE], &pl_collectives[PL_CALL_ALL_GATHER],
    &pl_collectives[PL_CALL_REDUCE_SCATTER], &pl_collectives[PL_CALL_BROADCAST]};

enum { MPI_N = 4, MAX_SIZES = 16 }; /* Open MPI is compared at N = 4 */

enum { MAX_N = 3 }; /* N = 2, 4, 8 */
/* Each size: a warm-up call, then REPS repetitions of K calls; a
 * repetition's time is the slowest rank's mean per call; the table gives
 * the median repetition and the spread (the fastest and slowest over the
 * median). */
enum { REPS = 5 };
/* a pipeline's hop: one activation of Lab 09 ([8 x 64] floats), sent back
 * and forth between 2 ranks, PING_ROUNDS round trips a repetition, halved */
enum { PING_BYTES = 2048, PING_ROUNDS = 1000 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One run of Open MPI's reference program (bench/mpi/allreduce.c). */
typedef struct {
    double time[MAX_SIZES]; /* seconds per MPI_Allreduce, by size index */
    long wrong[MAX_SIZES];  /* elements of the result that differ from the sum */
    int sizes;              /* how many sizes it has */
    double pingpong;        /* seconds one way of its 2 KiB ping-pong (0: none) */
} mpi_ref;

typedef struct {
    long max_bytes;
    pl_comm_engine_choice engine;               /* what this world runs on */
    int ni;                                     /* which N: 0, 1, 2 */
    double memcpy_bw;                           /* simulated build: bytes copied per second */
    double nccl_bus[C_COUNT][MAX_N][MAX_SIZES]; /* CUDA build: NCCL's busbw, GB/s (0: none) */
    int worst_ratio_ok;
    double worst_mem;      /* the lowest busbw / memcpy from 1 MiB at N = 4 and 8 */
    double worst_mpi;      /* the lowest all_reduce busbw / Open MPI's from 1 MiB at N = 4 */
    double small_vs_mpi;   /* the highest all_reduce time / Open MPI's up to 4 KiB at N = 4 */
    int mpi_ok;            /* -1: no Open MPI numbers; else the goal so far */
    mpi_ref mpi;           /* Open MPI at the start: what the tables compare with */
    double pingpong[REPS]; /* the local engine's, each repetition */
    double t[64][REPS];    /* each rank's seconds per call in each repetition */
    long wrong[64];
} comm_bench;

/* count: the whole array (each rank gives count/N to an all-gather) */
static pl_comm_result run_one(pl_rank *r, int kind, float *send, float *recv, size_t count)
{
    size_t c = pl_collective_count(coll[kind], count, r->size); /* the call's count */
    switch (kind) {
    case C_ALL_REDUCE:
        return pl_all_reduce(r->comm, send, recv, c, PL_FLOAT32, PL_SUM, r->stream);
    case C_ALL_GATHER:
        return pl_all_gather(r->comm, send, recv, c, PL_FLOAT32, r->stream);
    case C_REDUCE_SCATTER:
        return pl_reduce_scatter(r->comm, send, recv, c, PL_FLOAT32, PL_SUM, r->stream);
    default:
        return pl_broadcast(r->comm, send, recv, c, PL_FLOAT32, 0, r->stream);
    }
}

/* The values each rank holds: rank + 1 everywhere; the expected result. */
static float expected(int kind, int n, size_t i, size_t count)
{
    if (kind == C_ALL_REDUCE || kind == C_REDUCE_SCATTER) return (float)n * (float)(n + 1) / 2;
    if (kind == C_ALL_GATHER) return (float)(i / (count / (size_t)n) + 1);
    return 1.0f; /* broadcast from rank 0 */
}

static int rank_main(pl_rank *r)
{
    comm_bench *b = r->arg;
    int n = r->size, me = r->rank;
    size_t max_count = (size_t)b->max_bytes / sizeof(float);
    float *send, *recv, *h = malloc(max_count * sizeof(float));
    if (!h || cudaMalloc((void **)&send, max_count * sizeof(float)) ||
        cudaMalloc((void **)&recv, max_count * sizeof(float))) {
        snprintf(r->error, sizeof r->error, "out of memory for %ld bytes", b->max_bytes);
        return 1;
    }
    for (size_t i = 0; i < max_count; i++) h[i] = (float)(me + 1);
    cudaMemcpy(send, h, max_count * sizeof(float), cudaMemcpyHostToDevice);
    for (int kind = 0; kind < C_COUNT; kind++) {
        int vs_mpi = kind == C_ALL_REDUCE && n == MPI_N && b->mpi_ok >= 0;
        if (me == 0) {
            printf("\n%s, %d ranks, %s\n%12s %12s %6s %6s %11s %8s %11s %11s %7s %14s",
                   coll[kind]->name, n, b->engine == PL_COMM_NCCL ? "NCCL" : "local engine",
                   "size (B)", "count", "type", "redop", "time (us)", "spread", "algbw GB/s",
                   "busbw GB/s", "#wrong",
                   b->memcpy_bw > 0            ? "busbw / memcpy"
                   : b->engine == PL_COMM_NCCL ? ""
                                               : "busbw / NCCL");
            if (vs_mpi) printf(" %6s %10s %11s %12s", "", "MPI us", "MPI busbw", "busbw / MPI");
            printf("\n");
        }
        int si = 0;
        for (size_t bytes = 64; bytes <= (size_t)b->max_bytes; bytes *= 4, si++) {
            size_t count = bytes / sizeof(float) / (size_t)n * (size_t)n; /* N divides it */
            size_t call_count = pl_collective_count(coll[kind], count, n);
            int iters = bytes < (1u << 20) ? 10 : bytes < (16u << 20) ? 3 : 1;
            if (run_one(r, kind, send, recv, count) || cudaStreamSynchronize(r->stream)) {
                snprintf(r->error, sizeof r->error, "%s: %s", coll[kind]->name,
                         pl_comm_last_error(r->comm));
                return 1;
            }
            for (int rp = 0; rp < REPS; rp++) {
                if (pl_comm_barrier(r->comm)) return 1;
                double t0 = pl_now();
                for (int it = 0; it < iters; it++)
                    if (run_one(r, kind, send, recv, count)) return 1;
                cudaStreamSynchronize(r->stream);
                b->t[me][rp] = (pl_now() - t0) / iters;
            }
            size_t out = pl_collective_recv_count(coll[kind], call_count, n);
            cudaMemcpy(h, recv, out * sizeof(float), cudaMemcpyDeviceToHost);
            long wrong = 0;
            for (size_t i = 0; i < out; i++) wrong += h[i] != expected(kind, n, i, count);
            b->wrong[me] = wrong;
            if (pl_comm_barrier(r->comm)) return 1;
            if (me == 0) {
                double rt[REPS] = {0};
                long all_wrong = 0;
                for (int q = 0; q < n; q++) {
                    for (int rp = 0; rp < REPS; rp++)
                        rt[rp] = b->t[q][rp] > rt[rp] ? b->t[q][rp] : rt[rp];
                    all_wrong += b->wrong[q];
                }
                qsort(rt, REPS, sizeof *rt, cmp_double);
                double t = rt[REPS / 2], spread = t > 0 ? (rt[REPS - 1] - rt[0]) / t : 0;
                double S = (double)pl_collective_bytes(coll[kind], call_count, PL_FLOAT32, n);
                double alg = S / t / 1e9;
                double bus = alg * pl_collective_busbw_factor(coll[kind], n);
                double ratio = b->memcpy_bw > 0 ? bus * 1e9 / b->memcpy_bw : 0;
                printf("%12zu %12zu %6s %6s %11.1f %6.0f %% %11.2f %11.2f %7ld", (size_t)S, count,
                       "float", coll[kind]->has_op ? "sum" : "none", t * 1e6, spread * 100, alg,
                       bus, all_wrong);
                double nccl = si < MAX_SIZES ? b->nccl_bus[kind][b->ni][si] : 0;
                if (b->engine == PL_COMM_NCCL && si < MAX_SIZES)
                    b->nccl_bus[kind][b->ni][si] = bus;
                else if (b->memcpy_bw <= 0 && nccl > 0)
                    printf(" %14.2f", bus / nccl);
                else if (b->memcpy_bw > 0 && S >= (1 << 20)) {
                    printf(" %14.2f %-6s", ratio, ratio >= 0.5 ? "met" : "MISSED");
                    if (ratio < 0.5) b->worst_ratio_ok = 0;
                    if (n >= 4 && ratio < b->worst_mem) b->worst_mem = ratio;
                } else if (vs_mpi)
                    printf(" %14s %6s", "", ""); /* keeps the MPI columns aligned */
                if (vs_mpi && si < MAX_SIZES && b->mpi.time[si] > 0) {
                    double mpi_bus =
                        S / b->mpi.time[si] / 1e9 * pl_collective_busbw_factor(coll[kind], n);
                    double vs = bus / mpi_bus;
                    printf(" %10.1f %11.2f", b->mpi.time[si] * 1e6, mpi_bus);
                    if (b->mpi.wrong[si]) printf(" (MPI: %ld wrong)", b->mpi.wrong[si]);
                    if (S >= (1 << 20)) {
                        printf(" %12.2f %s", vs, vs >= 1.0 ? "met" : "MISSED");
                        if (vs < 1.0) b->mpi_ok = 0;
                        if (vs < b->worst_mpi) b->worst_mpi = vs;
                    }
                    if (S <= 4096 && t / b->mpi.time[si] > b->small_vs_mpi)
                        b->small_vs_mpi = t / b->mpi.time[si];
                }
                printf("\n");
            }
            if (pl_comm_barrier(r->comm)) return 1;
        }
    }
    cudaFree(send);
    cudaFree(recv);
    free(h);
    return 0;
}

/* Bytes copied per second by memcpy over `bytes` (B/t), once the machine
 * is warm: copies until three in a row agree within 5 % (at most 30; a
 * virtual machine's first copies of fresh memory are several times slower,
 * and the next ones speed up over a few copies), then the median of
 * MEMCPY_REPS; *spread: the slowest and fastest over the median. */
enum { MEMCPY_REPS = 9 };
static double memcpy_bandwidth(size_t bytes, double *spread)
{
    char *a = malloc(bytes), *b = malloc(bytes);
    *spread = 0;
    if (!a || !b) {
        free(a);
        free(b);
        return 0;
    }
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    double t[MEMCPY_REPS > 30 ? MEMCPY_REPS : 30];
    for (int i = 0; i < 30; i++) { /* the warm-up */
        double t0 = pl_now();
        memcpy(b, a, bytes);
        t[i] = pl_now() - t0;
        a[i] = (char)i; /* the next copy is another copy */
        if (i >= 2) {
            double lo = t[i], hi = t[i];
            for (int k = i - 2; k < i; k++) {
                lo = t[k] < lo ? t[k] : lo;
                hi = t[k] > hi ? t[k] : hi;
            }
            if (hi <= 1.05 * lo) break;
        }
    }
    for (int i = 0; i < MEMCPY_REPS; i++) {
        double t0 = pl_now();
        memcpy(b, a, bytes);
        t[i] = pl_now() - t0;
        a[i] = (char)(i + 1);
    }
    qsort(t, MEMCPY_REPS, sizeof *t, cmp_double);
    volatile char sink = b[bytes / 2];
    (void)sink;
    free(a);
    free(b);
    *spread = (t[MEMCPY_REPS - 1] - t[0]) / t[MEMCPY_REPS / 2];
    return (double)bytes / t[MEMCPY_REPS / 2];
}

/* How far apart two measurements of one reference are: |x - y| over the
 * smaller (0.25: one is 25 % above the other). */
static double apart(double x, double y)
{
    double lo = x < y ? x : y, hi = x < y ? y : x;
    return lo > 0 ? (hi - lo) / lo : 0;
}

/* One mpirun of Open MPI's reference program `prog`: MPI_N processes, its
 * all-reduce up to max_bytes, or (max_bytes 0) 2 processes, its ping-pong;
 * the processes bound to cores (round robin: 0, 1, 0, 1 on 2 cores) or
 * not. Fills what it measured of *m. mpirun's own words are printed unless
 * `quiet`. Returns 0, or -1 with the reason in why. */
static int run_mpi(const char *prog, long max_bytes, int bind, int quiet, mpi_ref *m, char *why,
                   size_t cap)
{
    char cmd[1024], arg[32] = "pingpong";
    if (max_bytes) snprintf(arg, sizeof arg, "%ld", max_bytes);
    /* as root (containers, CI), mpirun wants --allow-run-as-root; more
     * processes than cores want --oversubscribe (it then yields when idle)
     * and, bound, overload-allowed */
    snprintf(cmd, sizeof cmd,
             "mpirun --allow-run-as-root --oversubscribe %s -np %d '%s' %s 2>&1 "
             "</dev/null",
             bind ? "--bind-to core:overload-allowed --map-by core" : "", max_bytes ? MPI_N : 2,
             prog, arg);
    FILE *p = popen(cmd, "r");
    if (!p) {
        snprintf(why, cap, "cannot run mpirun");
        return -1;
    }
    char line[512];
    int n = 0, shown = 0;
    size_t want = 64;
    while (fgets(line, sizeof line, p)) {
        size_t bytes, count;
        double t;
        long wrong;
        if (sscanf(line, "pingpong %zu %lf", &bytes, &t) == 2 && bytes == PING_BYTES) {
            m->pingpong = t;
            continue;
        }
        if (sscanf(line, "%zu %zu %lf %ld", &bytes, &count, &t, &wrong) == 4 && n < MAX_SIZES &&
            bytes <= want && t > 0) {
            m->time[n] = t;
            m->wrong[n] = wrong;
            n++;
            want *= 4;
        } else if (!quiet && line[strspn(line, "- \n")] && shown++ < 8) /* its words, not rules */
            printf("Open MPI: %s", line);
    }
    int st = pclose(p);
    if (max_bytes) m->sizes = n;
    if (st != 0 || (max_bytes ? n == 0 : m->pingpong <= 0)) {
        if (st != -1 && WIFEXITED(st))
            snprintf(why, cap, "mpirun exited with status %d", WEXITSTATUS(st));
        else
            snprintf(why, cap, "mpirun failed");
        return -1;
    }
    return 0;
}

/* Runs Open MPI's MPI_Allreduce over the same sizes, up to max_bytes, with
 * MPI_N processes, then its ping-pong with 2; fills *m. The processes are
 * bound to cores: unbound, 4 processes on 2 cores land anew at each
 * mpirun, and its 64 B all-reduce took 2.3 or 3.1 us by where they landed
 * (four mpiruns on this project's 2-core machine); bound, 2.32-2.38 us
 * (four more). Where mpirun refuses to bind, unbound. Returns 0, or -1
 * with the reason printed (*m zeroed). */
static int measure_mpi(long max_bytes, mpi_ref *m)
{
    memset(m, 0, sizeof *m);
    const char *prog = getenv("PARALAB_MPI_ALLREDUCE");
    int rank, size;
    if (bench_mpi_launch(&rank, &size)) {
        printf("Open MPI: not measured (under mpirun)\n");
        return -1;
    }
    if (!prog || !*prog) {
        printf("Open MPI: not measured ($PARALAB_MPI_ALLREDUCE is not set; `make bench` builds "
               "bench/mpi/allreduce.c and sets it)\n");
        return -1;
    }
    char why[128];
    int bind = 1;
    if (run_mpi(prog, max_bytes, 1, 1, m, why, sizeof why) != 0) {
        printf("Open MPI: bound to cores, %s; unbound instead (its times then vary between runs: "
               "each mpirun places its processes anew)\n",
               why);
        bind = 0;
        memset(m, 0, sizeof *m);
        if (run_mpi(prog, max_bytes, 0, 0, m, why, sizeof why) != 0) {
            printf("Open MPI: %s; not compared\n", why);
            memset(m, 0, sizeof *m);
            return -1;
        }
    }
    if (run_mpi(prog, 0, bind, 0, m, why, sizeof why) != 0) {
        printf("Open MPI's ping-pong: %s; not compared\n", why);
        m->pingpong = 0;
    }
    return 0;
}

/* Ranks 0 and 1 send one activation back and forth (pl_send, pl_recv,
 * each on the rank's stream and waited for, as a pipeline stage's hop):
 * a warm-up repetition, then REPS of PING_ROUNDS round trips; rank 0
 * writes each repetition's one-way time. */
static int pingpong_rank(pl_rank *r)
{
    comm_bench *b = r->arg;
    int me = r->rank, peer = 1 - me;
    float *buf;
    if (cudaMalloc((void **)&buf, PING_BYTES)) {
        snprintf(r->error, sizeof r->error, "out of memory");
        return 1;
    }
    size_t count = PING_BYTES / sizeof(float);
    for (int rp = -1; rp < REPS; rp++) {
        if (pl_comm_barrier(r->comm)) return 1;
        double t0 = pl_now();
        for (int it = 0; it < PING_ROUNDS; it++) {
            pl_comm_result e = me == 0 ? pl_send(r->comm, buf, count, PL_FLOAT32, peer, r->stream)
                                       : pl_recv(r->comm, buf, count, PL_FLOAT32, peer, r->stream);
            if (!e)
                e = me == 0 ? pl_recv(r->comm, buf, count, PL_FLOAT32, peer, r->stream)
                            : pl_send(r->comm, buf, count, PL_FLOAT32, peer, r->stream);
            if (e || cudaStreamSynchronize(r->stream)) {
                snprintf(r->error, sizeof r->error, "ping-pong: %s", pl_comm_last_error(r->comm));
                return 1;
            }
        }
        if (rp >= 0 && me == 0) b->pingpong[rp] = (pl_now() - t0) / PING_ROUNDS / 2;
    }
    cudaFree(buf);
    return 0;
}

/* The simulated runtime's calls that one rank's ring all-reduce of 64 bytes
 * makes (comm_local_algorithms.c's ring_run), timed alone on this thread,
 * without the engine's waits for the other ranks: a reduce-scatter step
 * waits for two events, models the neighbour's copy, reads its stream's
 * clock, launches the reduction kernel and records two events; an
 * all-gather step copies instead of the three middle calls. Seconds for the
 * (N-1) steps of each at n ranks, median of 5 runs of K steps (0: failed). */
static double ring_calls_per_rank(int n)
{
    enum { K = 2000 };
    cudaStream_t s;
    cudaEvent_t e;
    float *a = NULL, *b = NULL;
    if (cudaSetDevice(0) || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) return 0;
    if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) || cudaMalloc((void **)&a, 64) ||
        cudaMalloc((void **)&b, 64) || cudaMemset(a, 0, 64) || cudaMemset(b, 0, 64))
        return 0;
    double t[5];
    int bad = 0;
    for (int rp = 0; rp < 5; rp++) {
        double t0 = pl_now();
        for (int i = 0; i < K; i++) {
            bad |= cudaStreamWaitEvent(s, e, 0) || cudaStreamWaitEvent(s, e, 0);
            bad |= pl_device_model_peer_copy(s, 64, 0, 0) != 0;
            double copied = pl_device_stream_now(s);
            bad |= pl_k_reduce(a, b, 16, PL_K_FLOAT32, PL_K_SUM, s) != 0;
            bad |= pl_device_event_record_at(e, s, copied) || cudaEventRecord(e, s);
            bad |= cudaStreamWaitEvent(s, e, 0) || cudaStreamWaitEvent(s, e, 0);
            bad |= cudaMemcpyPeerAsync(a, 0, b, 0, 64, s) != 0;
            bad |= cudaEventRecord(e, s) || cudaEventRecord(e, s);
        }
        bad |= cudaStreamSynchronize(s) != 0;
        t[rp] = (pl_now() - t0) / K;
    }
    qsort(t, 5, sizeof *t, cmp_double);
    cudaFree(a);
    cudaFree(b);
    cudaEventDestroy(e);
    cudaStreamDestroy(s);
    return bad ? 0 : t[2] * (n - 1);
}

/* One table per collective for N = 2, 4, 8 ranks on `engine`. */
static int run_tables(comm_bench *b, pl_comm_engine_choice engine)
{
    static const int ranks[MAX_N] = {2, 4, 8};
    int ndev = 0;
    cudaGetDeviceCount(&ndev);
    b->engine = engine;
    for (int i = 0; i < MAX_N; i++) {
        if (engine == PL_COMM_NCCL && ranks[i] > ndev) {
            printf("\nNCCL, %d ranks: not measured (NCCL needs a GPU per rank; there are %d)\n",
                   ranks[i], ndev);
            continue;
        }
        char err[1024];
        b->ni = i;
        pl_world_config cfg = {.n = ranks[i], .comm_timeout_s = 60, .comm = engine};
        if (pl_world_run_config(&cfg, rank_main, b, err, sizeof err)) {
            fprintf(stderr, "paralab-bench: %s\n", err);
            return 1;
        }
    }
    return 0;
}

/* A whole number 0..2^20 from the environment, or -1. */
static long env_int(const char *name)
{
    const char *v = getenv(name);
    char *end = NULL;
    long x = v && *v ? strtol(v, &end, 10) : -1;
    return v && *v && !*end && x >= 0 && x <= (1L << 20) ? x : -1;
}

int bench_mpi_launch(int *rank, int *size)
{
    long r = env_int("OMPI_COMM_WORLD_RANK"), n = env_int("OMPI_COMM_WORLD_SIZE");
    if (r < 0 || n < 1) {
        r = env_int("PMI_RANK");
        n = env_int("PMI_SIZE");
    }
    if (r < 0 || n < 2 || r >= n) return 0;
    *rank = (int)r;
    *size = (int)n;
    return 1;
}

int bench_comm(long max_bytes)
{
    comm_bench b;
    memset(&b, 0, sizeof b);
    int mpi_rank = 0, mpi_size = 1;
    if (bench_mpi_launch(&mpi_rank, &mpi_size)) {
        /* a build without the MPI engine (build/sim-mpi's bench_comm_mpi
         * measures it): process 0 alone runs the one-process tables */
        if (mpi_rank != 0) return 0;
        printf("paralab-bench comm: started by mpirun as %d processes; process 0 measures, the "
               "others end at once.\nThis build has no MPI engine (the MPI build, `make mpi`: "
               "scripts/mpirun.sh -np %d build/sim-mpi/bin/paralab-bench comm measures it against "
               "the local engine and Open MPI's own MPI_Allreduce): what follows is the "
               "one-process benchmark, in process 0 alone, without Open MPI's reference (mpirun "
               "cannot be started from inside mpirun: run paralab-bench comm without mpirun for "
               "it).\n\n",
               mpi_size, mpi_size);
    }
    b.max_bytes = max_bytes;
    b.worst_ratio_ok = 1;
    b.worst_mem = b.worst_mpi = 1e30;
    if (pl_device_caps()->nccl) {
        b.mpi_ok = -1;
        printf("paralab-bench comm: NCCL, then the local engine, on this machine's GPUs (wall "
               "clock around each call, as nccl-tests' out-of-place rows)\n");
        return run_tables(&b, PL_COMM_NCCL) || run_tables(&b, PL_COMM_LOCAL) ? 1 : 0;
    }
    /* simulated devices: the CPU moves the data, so memcpy and MPI are the references */
    b.mpi_ok = measure_mpi(b.max_bytes, &b.mpi) == 0 ? 1 : -1;
    double mspread = 0;
    size_t mbytes = (size_t)max_bytes < (64u << 20) ? (64u << 20) : (size_t)max_bytes;
    b.memcpy_bw = memcpy_bandwidth(mbytes, &mspread);
    printf("paralab-bench comm: the local engine on simulated devices, wall clock (this CPU moves "
           "the data); each size: a warm-up call, then %d repetitions; time = the median "
           "repetition, spread = (slowest - fastest) / median\nreference, same run: memcpy %.2f "
           "GB/s, median of %d once warm (spread %.0f %%; bytes copied per second: one hop of "
           "an in-memory ring); goal: busbw >= 0.5 x memcpy from 1 MiB\n",
           REPS, b.memcpy_bw / 1e9, MEMCPY_REPS, mspread * 100);
    if (b.mpi_ok >= 0)
        printf("reference, same run: Open MPI MPI_Allreduce, %d processes (all_reduce at %d "
               "ranks; bound to cores round robin, median of 9 repetitions); goal: busbw >= "
               "MPI's from 1 MiB\n",
               MPI_N, MPI_N);
    if (run_tables(&b, PL_COMM_LOCAL)) return 1;
    char err[512];
    if (pl_world_run(2, NULL, 30, pingpong_rank, &b, err, sizeof err)) {
        fprintf(stderr, "paralab-bench: the ping-pong: %s\n", err);
        return 1;
    }
    qsort(b.pingpong, REPS, sizeof *b.pingpong, cmp_double);
    double pp = b.pingpong[REPS / 2];
    printf("\nsend/recv of one activation (%d B, [8 x 64] floats: a hop of Lab 09's pipeline), 2 "
           "ranks, one way (half a round trip; median of %d repetitions of %d, spread %.0f %%): "
           "local engine %.1f us",
           PING_BYTES, REPS, PING_ROUNDS,
           pp > 0 ? (b.pingpong[REPS - 1] - b.pingpong[0]) / pp * 100 : 0, pp * 1e6);
    if (b.mpi.pingpong > 0) printf(", Open MPI (2 processes) %.1f us", b.mpi.pingpong * 1e6);
    printf("\n\n");
    /* the references again, now that the tables ran: as far apart as two
     * runs of the benchmark would see them? */
    double mspread2 = 0, mem2 = memcpy_bandwidth(mbytes, &mspread2),
           worst = apart(b.memcpy_bw, mem2);
    mpi_ref again;
    int mpi_again = b.mpi_ok >= 0 && measure_mpi(b.max_bytes, &again) == 0; /* says why not */
    char worst_what[64] = "memcpy; Open MPI not measured";
    if (mpi_again)
        snprintf(worst_what, sizeof worst_what, "memcpy");
    else if (b.mpi_ok >= 0)
        snprintf(worst_what, sizeof worst_what, "memcpy; Open MPI not measured again");
    printf("the references again, after the tables: memcpy %.2f GB/s (spread %.0f %%), %.0f %% "
           "apart from the first",
           mem2 / 1e9, mspread2 * 100, worst * 100);
    if (mpi_again) {
        double wa = 0, pa = apart(b.mpi.pingpong, again.pingpong);
        int wi = 0;
        for (int i = 0; i < again.sizes && i < b.mpi.sizes; i++)
            if (apart(b.mpi.time[i], again.time[i]) > wa) {
                wa = apart(b.mpi.time[i], again.time[i]);
                wi = i;
            }
        printf("; Open MPI's all_reduce %.0f %% apart at most (%ld B: %.1f then %.1f us), its "
               "ping-pong %.0f %% (%.2f then %.2f us)",
               wa * 100, 64L << (2 * wi), b.mpi.time[wi] * 1e6, again.time[wi] * 1e6, pa * 100,
               b.mpi.pingpong * 1e6, again.pingpong * 1e6);
        if (wa > worst) {
            worst = wa;
            snprintf(worst_what, sizeof worst_what, "Open MPI's all_reduce at %ld B",
                     64L << (2 * wi));
        }
        if (pa > worst) {
            worst = pa;
            snprintf(worst_what, sizeof worst_what, "Open MPI's ping-pong");
        }
    }
    printf("\n");
    if (b.worst_mem < 1e30)
        printf("goal (every collective's busbw >= 0.5 x memcpy from 1 MiB at 4 and 8 ranks): "
               "lowest %.2f: %s\n",
               b.worst_mem, b.worst_mem >= 0.5 ? "met" : "not met");
    else
        printf("goal (busbw >= 0.5 x memcpy from 1 MiB): not measured (--scale left no size of "
               "1 MiB)\n");
    if (b.mpi_ok >= 0 && b.worst_mpi < 1e30)
        printf("goal (all_reduce busbw >= Open MPI's from 1 MiB at %d ranks): lowest %.2f: %s\n",
               MPI_N, b.worst_mpi, b.worst_mpi >= 1.0 ? "met" : "not met");
    else
        printf("goal (all_reduce busbw >= Open MPI's): not measured\n");
    if (b.mpi_ok >= 0 && b.small_vs_mpi > 0)
        printf("goal (an all_reduce of at most 4 KiB within 3x of Open MPI's time at %d ranks): "
               "%.1fx: %s\n",
               MPI_N, b.small_vs_mpi, b.small_vs_mpi <= 3 ? "met" : "not met");
    else
        printf("goal (small all_reduce within 3x of Open MPI's): not measured\n");
    double calls = ring_calls_per_rank(MPI_N);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (calls > 0 && cores > 0) {
        /* the N ranks' calls, spread over at most N cores */
        double floor = calls * MPI_N / (double)(cores < MPI_N ? cores : MPI_N);
        printf("  the simulated runtime's calls alone of a ring all_reduce of 64 B at %d ranks "
               "(%d steps a rank, each enqueues its copy, reduction and events on simulated "
               "devices: the modeled clock follows them), timed on one thread: %.1f us a rank; "
               "the %d ranks on this machine's %ld core%s: at least %.1f us",
               MPI_N, 2 * (MPI_N - 1), calls * 1e6, MPI_N, cores, cores == 1 ? "" : "s",
               floor * 1e6);
        if (b.mpi_ok >= 0 && b.mpi.time[0] > 0)
            printf(" = %.1fx Open MPI's %.1f us, before any wait", floor / b.mpi.time[0],
                   b.mpi.time[0] * 1e6);
        printf("\n");
    }
    if (b.mpi_ok >= 0 && b.mpi.pingpong > 0)
        printf("goal (a pipeline's send/recv of one activation within 3x of Open MPI's time): "
               "%.1fx: %s\n",
               pp / b.mpi.pingpong, pp <= 3 * b.mpi.pingpong ? "met" : "not met");
    else
        printf("goal (a pipeline's send/recv within 3x of Open MPI's): not measured\n");
    printf("goal (the references stable: memcpy and Open MPI, measured again after the tables, "
           "within 20 %% of the first): %.0f %% apart at most (%s): %s\n",
           worst * 100, worst_what, worst <= 0.2 ? "met" : "not met");
    return 0;
}
