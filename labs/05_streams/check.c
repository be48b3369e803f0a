/*
 * Lab 05 — the checks: the chunked version's output equals the one-stream
 * version's, element for element, for n in {1, 1000, 2^20 + 3}, 1, 3 and 8
 * chunks and 1, 2 and 4 streams (so chunks that do not divide n, and more
 * chunks than streams); and, on the simulated GPU's modeled clock, 8 chunks
 * over 4 streams finish sooner than one stream, with a copy and a kernel
 * running at the same time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#ifdef PARALAB_SIMULATED_CUDA
#include "simt/simt.h"
#endif

#include "05_streams/lab05.h"
#include "registry.h"

typedef struct {
    float *h_in, *h_out, *h_ref, *d_in, *d_out;
    size_t n;
} buffers;

static int alloc(buffers *b, size_t n)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    size_t bytes = n * sizeof(float);
    if (cudaMallocHost((void **)&b->h_in, bytes) || cudaMallocHost((void **)&b->h_out, bytes) ||
        cudaMallocHost((void **)&b->h_ref, bytes) || cudaMalloc((void **)&b->d_in, bytes) ||
        cudaMalloc((void **)&b->d_out, bytes))
        return -1;
    for (size_t i = 0; i < n; i++) b->h_in[i] = (float)(i % 1000) * 0.25f;
    return 0;
}

static void release(buffers *b)
{
    cudaFreeHost(b->h_in);
    cudaFreeHost(b->h_out);
    cudaFreeHost(b->h_ref);
    cudaFree(b->d_in);
    cudaFree(b->d_out);
}

/* Runs the student's chunked version; 1 if TODO, -1 on an error (c says). */
static int run_chunked(const lab05_impl *impl, buffers *b, int chunks, cudaStream_t *s, int ns,
                       pl_check *c)
{
    memset(b->h_out, 0xff, b->n * sizeof(float)); /* NaN: an element not copied back shows */
    int e = impl->chunked(b->h_out, b->h_in, b->d_out, b->d_in, b->n, chunks, s, ns);
    if (e == PL_TODO_STATUS) return 1;
    cudaError_t se = cudaDeviceSynchronize();
    if (e || se) {
        pl_check_fail(c, "chunked(n=%zu, chunks=%d, streams=%d) failed: %s", b->n, chunks, ns,
                      cudaGetErrorName(e ? (cudaError_t)e : se));
        return -1;
    }
    return 0;
}

#ifdef PARALAB_SIMULATED_CUDA
/* The ops a run made, as the simulated runtime reports them. */
typedef struct {
    simt_op_record rec[4096];
    int n;
} op_log;

static void log_op(const simt_op_record *r, void *user)
{
    op_log *l = user;
    if (l->n < 4096) l->rec[l->n++] = *r;
}

/* A copy and a kernel running at the same time on the modeled clock (so on
 * different streams: one stream runs its ops one after another). */
static int copy_meets_kernel(const op_log *l)
{
    for (int i = 0; i < l->n; i++)
        for (int j = 0; j < l->n; j++)
            if (l->rec[i].kind == SIMT_OP_COPY && l->rec[j].kind == SIMT_OP_KERNEL &&
                l->rec[i].modeled_start < l->rec[j].modeled_end &&
                l->rec[j].modeled_start < l->rec[i].modeled_end)
                return 1;
    return 0;
}
#endif

static void check_chunked(const lab05_impl *impl, pl_check *c)
{
    static const size_t sizes[] = {1, 1000, (1u << 20) + 3};
    static const int chunk_counts[] = {1, 3, 8}, stream_counts[] = {1, 2, 4};
    cudaStream_t s[4];
    for (int i = 0; i < 4; i++)
        if (cudaStreamCreate(&s[i])) {
            pl_check_fail(c, "cannot create streams");
            return;
        }
    for (int a = 0; a < 3 && pl_check_ok(c); a++) {
        buffers b;
        if (alloc(&b, sizes[a])) {
            pl_check_fail(c, "out of memory for %zu floats", sizes[a]);
            release(&b);
            break;
        }
        lab05_one_stream(b.h_ref, b.h_in, b.d_out, b.d_in, b.n, s[0]);
        cudaDeviceSynchronize();
        for (int k = 0; k < 3 && pl_check_ok(c); k++)
            for (int m = 0; m < 3 && pl_check_ok(c); m++) {
                int r = run_chunked(impl, &b, chunk_counts[k], s, stream_counts[m], c);
                if (r == 1) {
                    pl_check_todo(c);
                    break;
                }
                if (r < 0) break;
                char what[96];
                snprintf(what, sizeof what, "chunked(n=%zu, chunks=%d, streams=%d): h_out", b.n,
                         chunk_counts[k], stream_counts[m]);
                pl_check_floats(c, what, b.h_out, b.h_ref, b.n, 0, 0);
            }
        release(&b);
    }
#ifdef PARALAB_SIMULATED_CUDA
    if (pl_check_ok(c)) { /* the overlap, on the modeled clock */
        buffers b;
        if (alloc(&b, 1u << 22)) {
            pl_check_fail(c, "out of memory");
            release(&b);
        } else {
            double t0 = simtModeledNow();
            lab05_one_stream(b.h_ref, b.h_in, b.d_out, b.d_in, b.n, s[0]);
            cudaDeviceSynchronize();
            double t1 = simtModeledNow();
            static op_log log;
            log.n = 0;
            simtSetOpHook(log_op, &log);
            int r = run_chunked(impl, &b, 8, s, 4, c);
            simtFlushOps();
            simtSetOpHook(NULL, NULL);
            if (r == 0) {
                double t2 = simtModeledNow();
                pl_check_that(c, t2 - t1 < t1 - t0,
                              "8 chunks over 4 streams took %.1f us (modeled), one stream %.1f "
                              "us: the chunks' copies should overlap",
                              (t2 - t1) * 1e6, (t1 - t0) * 1e6);
                pl_check_that(c, copy_meets_kernel(&log),
                              "8 chunks over 4 streams: no copy ran while a kernel ran (modeled "
                              "clock): put each chunk on its own stream, streams[k %% nstreams]");
            }
            release(&b);
        }
    }
#endif
    for (int i = 0; i < 4; i++) cudaStreamDestroy(s[i]);
}

void lab05_check(int exercise, const lab05_impl *impl, pl_check *c)
{
    (void)exercise;
    check_chunked(impl, c);
}

static const char *const exercises[] = {"chunked", NULL};

static void check_entry(int exercise, int use_solution, pl_check *c)
{
    lab05_check(exercise, use_solution ? &lab05_solution : &lab05_exercise, c);
}

const pl_lab lab05_streams = {"05_streams", exercises, check_entry};
