/*
 * Lab 06 — the checks: every element of the ring all-reduce for N in
 * {2, 3, 4, 8} and counts {0, 1, N-1, 1000, 2^20+3} (most not divisible by
 * N), compared exactly (the values keep every float sum exact), and the
 * bytes each rank sent, from the ledger: a ring all-reduce sends exactly
 * 2(N-1)/N of the array per rank when N divides the count, and 2(N-1) times
 * the array over all ranks whatever the count; and the method, from the
 * ledger's call counts: no library collective (pl_all_reduce would pass
 * every other test), sends only to the next rank, and, when every segment
 * holds an element, 2(N-1) pl_send and 2(N-1) pl_recv per rank. scratch is
 * filled with NaN before each run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include "paralab/device.h"

#include "06_collectives/lab06.h"
#include "paralab/plural.h"
#include "paralab/world.h"
#include "registry.h"

typedef struct {
    const lab06_impl *impl;
    size_t count;
    int todo;
    pl_ledger ledger[8];
    uint64_t link[8][8]; /* bytes from rank a to rank b */
} run_arg;

static float value(int rank, size_t i) { return (float)((i * 7 + (size_t)rank * 3) % 11 + 1); }

static int rank_main(pl_rank *r)
{
    run_arg *a = r->arg;
    int n = r->size;
    size_t count = a->count, seg = lab06_seg_len(count, n, 0) + 1;
    float *h = malloc((count + 1) * sizeof(float)), *buf = NULL, *scratch = NULL;
    if (!h || cudaMalloc((void **)&buf, (count + 1) * sizeof(float)) ||
        cudaMalloc((void **)&scratch, seg * sizeof(float))) {
        snprintf(r->error, sizeof r->error, "out of memory for count %zu", count);
        free(h);
        return 1;
    }
    for (size_t i = 0; i < count; i++) h[i] = value(r->rank, i);
    cudaMemcpy(buf, h, count * sizeof(float), cudaMemcpyHostToDevice);
    /* NaN: no result may come from before (on the rank's stream, ahead of its work) */
    cudaMemsetAsync(scratch, 0xff, seg * sizeof(float), r->stream);
    int res = a->impl->ring_all_reduce(r->comm, buf, count, scratch, r->stream);
    int bad = 0;
    if (res == PL_TODO_STATUS)
        a->todo = 1;
    else if (res) {
        snprintf(r->error, sizeof r->error, "ring_all_reduce returned %s: %s",
                 pl_comm_result_name((pl_comm_result)res), pl_comm_last_error(r->comm));
        bad = 1;
    } else {
        cudaError_t e = cudaStreamSynchronize(r->stream);
        if (!e) e = cudaMemcpy(h, buf, count * sizeof(float), cudaMemcpyDeviceToHost);
        if (e) {
            const char *why = pl_fault_report();
            snprintf(r->error, sizeof r->error, "the device failed: %s %s", cudaGetErrorName(e),
                     why);
            bad = 1;
        }
        for (size_t i = 0; !bad && i < count; i++) {
            float want = 0;
            for (int q = 0; q < n; q++) want += value(q, i);
            if (h[i] != want) {
                snprintf(r->error, sizeof r->error,
                         "buf[%zu] = %g but expected %g (N=%d, count %zu)", i, h[i], want, n,
                         count);
                bad = 1;
            }
        }
        a->ledger[r->rank] = pl_comm_ledger(r->comm);
        for (int q = 0; q < n; q++) a->link[r->rank][q] = pl_comm_link_bytes(r->comm, r->rank, q);
    }
    cudaFree(buf);
    cudaFree(scratch);
    free(h);
    return bad;
}

/* The lesson is the ring built from send and receive: which calls each
 * rank made (the ledger counts them) and to whom it sent. */
static int check_method(pl_check *c, const run_arg *a, int n, size_t count)
{
    static const pl_comm_call collectives[] = {PL_CALL_ALL_REDUCE,     PL_CALL_BROADCAST,
                                               PL_CALL_REDUCE,         PL_CALL_ALL_GATHER,
                                               PL_CALL_REDUCE_SCATTER, PL_CALL_ALL_TO_ALL};
    for (int r = 0; r < n; r++) {
        const pl_ledger *l = &a->ledger[r];
        for (int k = 0; k < (int)(sizeof collectives / sizeof collectives[0]); k++) {
            uint64_t times = l->calls[collectives[k]];
            if (!pl_check_that(c, times == 0,
                               "N=%d, count %zu: rank %d called %s (%llu time%s): the result is "
                               "right, but this exercise builds the ring itself, from pl_send "
                               "and pl_recv (with pl_k_reduce for the sums); the library's "
                               "collectives do it for you",
                               n, count, r, pl_comm_call_name(collectives[k]),
                               (unsigned long long)times, pl_s((long long)times)))
                return 0;
        }
        int next = lab06_mod(r + 1, n);
        for (int q = 0; q < n; q++)
            if (!pl_check_that(c, q == next || a->link[r][q] == 0,
                               "N=%d, count %zu: rank %d sent %llu bytes to rank %d, but in a "
                               "ring each rank sends only to the next one, (r + 1) mod N = %d",
                               n, count, r, (unsigned long long)a->link[r][q], q, next))
                return 0;
        /* every segment holds an element: each of the 2(N-1) steps is one
         * pl_send and one pl_recv (with empty segments a send may be skipped) */
        if (count >= (size_t)n) {
            uint64_t steps = 2ull * (uint64_t)(n - 1), sends = l->calls[PL_CALL_SEND],
                     recvs = l->calls[PL_CALL_RECV];
            if (!pl_check_that(c, sends == steps && recvs == steps,
                               "N=%d, count %zu: rank %d called pl_send %llu and pl_recv %llu "
                               "times, but a ring all-reduce takes 2(N-1) = %llu steps (N-1 of "
                               "reduce-scatter, N-1 of all-gather), one pl_send and one pl_recv "
                               "each",
                               n, count, r, (unsigned long long)sends, (unsigned long long)recvs,
                               (unsigned long long)steps))
                return 0;
        }
    }
    return 1;
}

static void check_ring(const lab06_impl *impl, pl_check *c)
{
    static const int ranks[] = {2, 3, 4, 8};
    for (int a = 0; a < 4; a++) {
        int n = ranks[a];
        size_t counts[] = {0, 1, (size_t)n - 1, 1000, (1u << 20) + 3};
        for (int b = 0; b < 5; b++) {
            run_arg arg;
            memset(&arg, 0, sizeof arg);
            arg.impl = impl;
            arg.count = counts[b];
            char err[1200];
            int failed = pl_world_run(n, NULL, 10, rank_main, &arg, err, sizeof err);
            if (arg.todo) {
                pl_check_todo(c);
                return;
            }
            if (!pl_check_that(c, !failed, "N=%d, count %zu: %s", n, counts[b], err)) return;
            c->assertions += (long)(counts[b] * (size_t)n); /* every element, every rank */
            if (!check_method(c, &arg, n, counts[b])) return;
            uint64_t total = 0, S = counts[b] * sizeof(float);
            for (int r = 0; r < n; r++) total += arg.ledger[r].bytes_sent;
            if (!pl_check_that(c, total == 2ull * (uint64_t)(n - 1) * S,
                               "N=%d, count %zu: the ranks sent %llu bytes in all, but a ring "
                               "all-reduce sends 2(N-1) x %llu = %llu",
                               n, counts[b], (unsigned long long)total, (unsigned long long)S,
                               2ull * (unsigned long long)(n - 1) * S))
                return;
            if (counts[b] % (size_t)n == 0)
                for (int r = 0; r < n; r++) {
                    uint64_t want = 2ull * (uint64_t)(n - 1) * S / (uint64_t)n;
                    if (!pl_check_that(c, arg.ledger[r].bytes_sent == want,
                                       "N=%d, count %zu: rank %d sent %llu bytes, but each rank "
                                       "of a ring all-reduce sends 2(N-1)/N x S = %llu",
                                       n, counts[b], r,
                                       (unsigned long long)arg.ledger[r].bytes_sent,
                                       (unsigned long long)want))
                        return;
                }
        }
    }
}

void lab06_check(int exercise, const lab06_impl *impl, pl_check *c)
{
    (void)exercise;
    check_ring(impl, c);
}

static const char *const exercises[] = {"ring_all_reduce", NULL};

static void check_entry(int exercise, int use_solution, pl_check *c)
{
    lab06_check(exercise, use_solution ? &lab06_solution : &lab06_exercise, c);
}

const pl_lab lab06_collectives = {"06_collectives", exercises, check_entry};
