/*
 * Lab 06 — collectives: point to point, the collectives and what they mean,
 * ring all-reduce = reduce-scatter + all-gather, and algbw vs busbw.
 *
 * N ranks (one device each) walk through send/recv, broadcast, reduce,
 * all-gather and reduce-scatter on small vectors you can read, then compare
 * a naive all-reduce (reduce to one rank, then broadcast) with the ring,
 * run your ring all-reduce (exercise.c; the reference until you write it),
 * and print an nccl-tests-style table for your ring and the engine's.
 *
 * Usage: lab06 [--devices N] [--count C] [--max-bytes B] [common options]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "06_collectives/lab06.h"
#include "harness/harness.h"
#include "paralab/cli.h"
#include "paralab/collectives.h"
#include "paralab/device.h"
#include "paralab/kernels.h"
#include "paralab/options.h"
#include "paralab/plural.h"
#include "paralab/step.h"
#include "paralab/dist.h"
#include "paralab/trace.h"
#include "paralab/viz.h" /* PL_PANE_TOPOLOGY */
#include "paralab/world.h"

enum { SHOW = 8, KEY_COUNT = 300, KEY_MAX_BYTES };

typedef struct lab {
    long count, max_bytes;
    float shown[64][SHOW * 64];
    float ms[64];
    float *tmp[64]; /* per rank: a whole array, for the naive all-reduce's root */
    long wrong[64];
    pl_ledger before[64], after[64];
} lab;

static int on_option(int key, const char *arg, void *ctx, char *err, size_t cap)
{
    lab *l = ctx;
    const char *e = key == KEY_COUNT
                        ? pl_parse_long("--count", arg, 1, 64, &l->count)
                        : pl_parse_long("--max-bytes", arg, 8, 256L << 20, &l->max_bytes);
    if (e) snprintf(err, cap, "%s", e);
    return e != NULL;
}

/* Every rank copies its first values; rank 0 prints them all. */
static int show(pl_rank *r, const char *title, const float *d, size_t count)
{
    lab *l = r->arg;
    size_t k = count < SHOW * (size_t)r->size ? count : SHOW * (size_t)r->size;
    if (cudaStreamSynchronize(r->stream) ||
        cudaMemcpy(l->shown[r->rank], d, k * sizeof(float), cudaMemcpyDeviceToHost))
        return 1;
    if (pl_comm_barrier(r->comm)) return 1;
    /* under mpirun the other processes' rows come to rank 0 (paralab/dist.h) */
    pl_dist_gather_host(r->comm, l->shown, sizeof l->shown[0], k * sizeof(float));
    if (r->rank == 0) {
        printf("    %s\n", title);
        for (int q = 0; q < r->size; q++) {
            printf("      rank %d:", q);
            for (size_t i = 0; i < k; i++) printf(" %g", l->shown[q][i]);
            printf("%s\n", count > k ? " ..." : "");
        }
    }
    return pl_comm_barrier(r->comm) != PL_COMM_OK;
}

static int fill(pl_rank *r, float *d, size_t count, float v)
{
    float *h = malloc(count * sizeof(float));
    if (!h) return 1;
    for (size_t i = 0; i < count; i++) h[i] = v;
    cudaError_t e = cudaMemcpy(d, h, count * sizeof(float), cudaMemcpyHostToDevice);
    free(h);
    (void)r;
    return e != cudaSuccess;
}

enum { OP_ENGINE_RING, OP_NAIVE, OP_STUDENT };

/* One all-reduce (sum) of count floats, timed on this rank's stream; the
 * slowest rank's time is the collective's. Counts wrong elements. */
/* The textbook naive all-reduce: every rank sends its whole array to root 0,
 * which adds them up and sends the sum back to each: the root moves
 * 2(N-1) x S while the others move 2 x S. tmp holds count floats. */
static int naive_all_reduce(pl_rank *r, float *d, float *tmp, size_t count)
{
    int n = r->size;
    pl_comm_result e;
    if (r->rank != 0) {
        if ((e = pl_send(r->comm, d, count, PL_FLOAT32, 0, r->stream))) return e;
        return pl_recv(r->comm, d, count, PL_FLOAT32, 0, r->stream);
    }
    for (int q = 1; q < n; q++) {
        if ((e = pl_recv(r->comm, tmp, count, PL_FLOAT32, q, r->stream))) return e;
        if (pl_k_reduce(d, tmp, count, PL_FLOAT32, PL_SUM, r->stream)) return PL_COMM_CUDA_ERROR;
    }
    for (int q = 1; q < n; q++)
        if ((e = pl_send(r->comm, d, count, PL_FLOAT32, q, r->stream))) return e;
    return PL_COMM_OK;
}

static int timed_all_reduce(pl_rank *r, int op, float *d, float *scratch, size_t count,
                            float *ms_out, long *wrong_out)
{
    lab *l = r->arg;
    int n = r->size;
    if (fill(r, d, count, (float)(r->rank + 1))) return 1;
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    /* align the ranks' clocks first: a tiny all-reduce */
    if (pl_all_reduce(r->comm, scratch, scratch, 1, PL_FLOAT32, PL_SUM, r->stream)) return 1;
    l->before[r->rank] = pl_comm_ledger(r->comm);
    cudaEventRecord(a, r->stream);
    int res;
    if (op == OP_ENGINE_RING)
        res = pl_all_reduce(r->comm, d, d, count, PL_FLOAT32, PL_SUM, r->stream);
    else if (op == OP_NAIVE)
        res = naive_all_reduce(r, d, l->tmp[r->rank], count);
    else {
        const lab06_impl *impl = pl_lab_uses_reference(0) ? &lab06_solution : &lab06_exercise;
        res = impl->ring_all_reduce(r->comm, d, count, scratch, r->stream);
        if (res == PL_TODO_STATUS)
            res = lab06_solution.ring_all_reduce(r->comm, d, count, scratch, r->stream);
    }
    cudaEventRecord(b, r->stream);
    if (res) {
        snprintf(r->error, sizeof r->error, "all-reduce failed: %s", pl_comm_last_error(r->comm));
        return 1;
    }
    cudaEventSynchronize(b);
    cudaEventElapsedTime(&l->ms[r->rank], a, b);
    l->after[r->rank] = pl_comm_ledger(r->comm);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    float *h = malloc(count * sizeof(float));
    long wrong = 0;
    if (!h || cudaMemcpy(h, d, count * sizeof(float), cudaMemcpyDeviceToHost)) wrong = -1;
    float want = (float)n * (float)(n + 1) / 2;
    for (size_t i = 0; h && wrong >= 0 && i < count; i++) wrong += h[i] != want;
    free(h);
    l->wrong[r->rank] = wrong;
    if (pl_comm_barrier(r->comm)) return 1;
    pl_dist_gather_host(r->comm, l->ms, sizeof l->ms[0], sizeof l->ms[0]);
    pl_dist_gather_host(r->comm, l->wrong, sizeof l->wrong[0], sizeof l->wrong[0]);
    float worst = 0;
    long all_wrong = 0;
    for (int q = 0; q < n; q++) {
        worst = l->ms[q] > worst ? l->ms[q] : worst;
        all_wrong += l->wrong[q];
    }
    *ms_out = worst;
    *wrong_out = all_wrong;
    return pl_comm_barrier(r->comm) != PL_COMM_OK;
}

static int rank_main(pl_rank *r)
{
    lab *l = r->arg;
    int n = r->size, me = r->rank;
    size_t c = (size_t)l->count, big = (size_t)l->max_bytes / sizeof(float);
    float *d, *d2, *scratch;
    size_t most = big > c * (size_t)n ? big : c * (size_t)n;
    if (cudaMalloc((void **)&d, most * sizeof(float)) ||
        cudaMalloc((void **)&d2, most * sizeof(float)) ||
        cudaMalloc((void **)&scratch, (most / (size_t)n + 2) * sizeof(float)) ||
        cudaMalloc((void **)&l->tmp[me], most * sizeof(float))) {
        snprintf(r->error, sizeof r->error, "out of device memory");
        return 1;
    }
#define STEP(...)                                                                                  \
    do {                                                                                           \
        if (pl_step(r, __VA_ARGS__)) return 1;                                                     \
    } while (0)
#define OK(call)                                                                                   \
    do {                                                                                           \
        if ((call) != 0) {                                                                         \
            snprintf(r->error, sizeof r->error, "%s: %s", #call, pl_comm_last_error(r->comm));     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

    OK(fill(r, d, c * (size_t)n, (float)(me + 1)));
    STEP("%d ranks, one device each. Every rank starts with its own vector: rank r holds r+1.", n);
    OK(show(r, "the vectors", d, c));

    STEP("Send and receive: rank 0 sends its %zu value%s to rank 1. A send completes when the "
         "matching receive is posted.",
         c, pl_s((long long)c));
    OK(fill(r, d2, c, 0));
    if (me == 0) OK(pl_send(r->comm, d, c, PL_FLOAT32, 1, r->stream));
    if (me == 1) OK(pl_recv(r->comm, d2, c, PL_FLOAT32, 0, r->stream));
    OK(show(r, "received (rank 1 now holds rank 0's values; the others hold zeros)", d2, c));

    STEP("Broadcast from root 0: every rank gets rank 0's vector.");
    OK(fill(r, d2, c, (float)(me + 1)));
    OK(pl_broadcast(r->comm, d2, d2, c, PL_FLOAT32, 0, r->stream));
    OK(show(r, "after broadcast", d2, c));

    STEP("Reduce (sum) to root 0: rank 0 gets 1 + 2 + ... + N = %d in every element.",
         n * (n + 1) / 2);
    OK(fill(r, d2, c, 0));
    OK(pl_reduce(r->comm, d, d2, c, PL_FLOAT32, PL_SUM, 0, r->stream));
    OK(show(r, "after reduce (only the root's result is defined)", d2, c));

    STEP("All-gather: rank r contributes block r; every rank ends with all N blocks.");
    OK(pl_all_gather(r->comm, d, d2, c, PL_FLOAT32, r->stream));
    OK(show(r, "after all-gather", d2, c * (size_t)n));

    STEP("Reduce-scatter: the sum of every rank's array, cut into N blocks; rank r keeps block "
         "r.");
    OK(pl_reduce_scatter(r->comm, d, d2, c, PL_FLOAT32, PL_SUM, r->stream));
    OK(show(r, "after reduce-scatter", d2, c));

    /* naive vs ring, on a large array */
    float ms_naive, ms_ring;
    long wrong;
    STEP("All-reduce, two ways, on %zu floats: naive (every rank sends to rank 0, which adds "
         "and sends the sum back) and ring (reduce-scatter, then all-gather).",
         big);
    OK(timed_all_reduce(r, OP_NAIVE, d, scratch, big, &ms_naive, &wrong));
    uint64_t naive_root = l->after[0].bytes_received - l->before[0].bytes_received +
                          l->after[0].bytes_sent - l->before[0].bytes_sent;
    OK(timed_all_reduce(r, OP_ENGINE_RING, d, scratch, big, &ms_ring, &wrong));
    /* the ring's bytes per rank over S: all-reduce's busbw factor (nccl-tests) */
    const pl_collective *ar = &pl_collectives[PL_CALL_ALL_REDUCE];
    double f = pl_collective_busbw_factor(ar, n);
    if (me == 0) {
        double S = (double)pl_collective_bytes(ar, big, PL_FLOAT32, n);
        printf("    naive: %.1f us (%s); rank 0 moves %.2f MB = 2(N-1) x S = %.2f x S: the "
               "bottleneck\n",
               ms_naive * 1e3, pl_clock_name(), naive_root / 1e6, naive_root / S);
        printf("    ring:  %.1f us (%s); each rank sends %.2f MB = 2(N-1)/N x S = %.3f x S\n",
               ms_ring * 1e3, pl_clock_name(),
               (l->after[0].bytes_sent - l->before[0].bytes_sent) / 1e6, f);
    }

    STEP("Your ring all-reduce (exercise.c)%s.",
         pl_lab_is_todo(0) ? ": not attempted yet, so the reference runs" : "");
    float ms_mine;
    OK(timed_all_reduce(r, OP_STUDENT, d, scratch, big, &ms_mine, &wrong));
    if (me == 0)
        printf("    %zu floats: %s, %.1f us (%s); rank 0 sent %llu bytes (2(N-1)/N x S = %.0f)\n",
               big, wrong ? "WRONG" : "every element right", ms_mine * 1e3, pl_clock_name(),
               (unsigned long long)(l->after[0].bytes_sent - l->before[0].bytes_sent),
               f * (double)pl_collective_bytes(ar, big, PL_FLOAT32, n));

    STEP("algbw = S / time; busbw = algbw x 2(N-1)/N for all-reduce: comparable to the link's "
         "bandwidth, whatever N (nccl-tests).");
    if (me == 0)
        printf("    %10s %10s %6s %6s %8s %11s %11s %11s %7s\n", "size (B)", "count", "type",
               "redop", "engine", "time (us)", "algbw GB/s", "busbw GB/s", "#wrong");
    for (size_t bytes = 8; bytes <= (size_t)l->max_bytes; bytes *= 4)
        for (int op = OP_ENGINE_RING; op <= OP_STUDENT; op += OP_STUDENT - OP_ENGINE_RING) {
            size_t count = bytes / sizeof(float);
            float ms;
            OK(timed_all_reduce(r, op, d, scratch, count, &ms, &wrong));
            if (me == 0) {
                double t = ms * 1e-3, alg = pl_collective_bytes(ar, count, PL_FLOAT32, n) / t / 1e9,
                       bus = alg * f;
                printf("    %10zu %10zu %6s %6s %8s %11.2f %11.2f %11.2f %7ld\n", bytes, count,
                       "float", "sum", op == OP_STUDENT ? "yours" : "ring", ms * 1e3, alg, bus,
                       wrong);
            }
        }
    cudaFree(d);
    cudaFree(d2);
    cudaFree(scratch);
    cudaFree(l->tmp[me]);
    return 0;
}

/* Is the exercise still TODO? Ask it on a one-rank world, on real buffers
 * of one float (a ring of one rank has nothing to send): never on made-up
 * NULL pointers, which a finished exercise would hand to the copies and
 * kernels it enqueues, where a fault is sticky for the rest of the run. */
static int probe_todo(pl_rank *r)
{
    float *d = NULL;
    if (cudaMalloc((void **)&d, 2 * sizeof(float))) return 0;
    cudaMemsetAsync(d, 0, 2 * sizeof(float), r->stream);
    if (lab06_exercise.ring_all_reduce(r->comm, d, 1, d + 1, r->stream) == PL_TODO_STATUS)
        pl_lab_found_todo(0);
    cudaStreamSynchronize(r->stream);
    cudaFree(d);
    return 0;
}

/* The title; nine steps. */
static int setup(void *ctx, char *err, size_t cap)
{
    (void)ctx, (void)err, (void)cap;
    printf("paralab lab 06 — collectives (%d ranks, %s clock)\n", pl_lab_options()->devices,
           pl_clock_name());
    return 9;
}

int main(int argc, char **argv)
{
    static lab l = {.count = 4, .max_bytes = 4L << 20};
    static const pl_lab_option options[] = {
        {"count", 1, "C", "values per rank in the walk-through (1..64, default 4)", KEY_COUNT},
        {"max-bytes", 1, "B", "largest size in the table, in bytes (8..268435456, default 4194304)",
         KEY_MAX_BYTES},
        {0, 0, 0, 0, 0},
    };
    static const pl_lab_def me = {
        .program = "lab06",
        .multi_process = 1, /* mpirun: tests/mpi.sh */
        .summary = "Lab 06, collectives: send/recv, broadcast, reduce, all-gather, "
                   "reduce-scatter, the ring all-reduce, algbw and busbw.",
        .exercise = "labs/06_collectives/exercise.c",
        .title = "lab 06 collectives",
        .options = options,
        .on_option = on_option,
        .ctx = &l,
        .default_devices = 4,
        .min_devices = 2,
        .devices_rule = "collectives need at least 2 ranks",
        .lab = &lab06_collectives,
        .panes = PL_PANE_BIT(PL_PANE_TOPOLOGY),
        .probe = probe_todo,
        .setup = setup,
        .steps = rank_main,
    };
    return pl_lab_main(&me, argc, argv);
}
