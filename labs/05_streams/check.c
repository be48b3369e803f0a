/*
 * Lab 05 — the checks: the chunked version's output equals the one-stream
 * version's, element for element, for n in {1, 1000, 2^20 + 3}, 1, 3 and 8
 * chunks and 1, 2 and 4 streams (so chunks that do not divide n, and more
 * chunks than streams); and, on the simulated GPU's modeled clock, 8 chunks
 * over 4 streams finish sooner than one stream, with a copy and a kernel
 * running at the same time. Before each run every output is poisoned (h_out
 * NaN, d_out and d_in their own values), so that a result left from an
 * earlier run cannot pass, and a wrong element says which step is missing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include "paralab/device.h"

#include "05_streams/lab05.h"
#include "registry.h"

typedef struct {
    float *h_in, *h_out, *h_ref, *d_in, *d_out;
    size_t n;
    float in_poisoned; /* what lab05_process makes of D_IN_POISON */
} buffers;

/* The poisons, byte patterns for memset: h_out NaN (0xff), d_out 0x7f7f7f7f
 * (3.4e38), d_in 0x7e7e7e7e (8.5e37); all unlike any right output. */
#define H_OUT_POISON 0xff
#define D_OUT_POISON 0x7f
#define D_IN_POISON 0x7e

static float poison_float(int byte)
{
    unsigned char b[sizeof(float)];
    memset(b, byte, sizeof b);
    float f;
    memcpy(&f, b, sizeof f);
    return f;
}

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
    /* what a chunk processed before it was copied in would hold */
    if (cudaMemset(b->d_in, D_IN_POISON, sizeof(float)) || lab05_process(b->d_out, b->d_in, 1, 0) ||
        cudaDeviceSynchronize() ||
        cudaMemcpy(&b->in_poisoned, b->d_out, sizeof(float), cudaMemcpyDeviceToHost))
        return -1;
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

/* Runs the student's chunked version; 1 if TODO, -1 on an error (c says).
 * *start (if not NULL): the modeled clock when the student's work begins. */
static int run_chunked_from(const lab05_impl *impl, buffers *b, int chunks, cudaStream_t *s, int ns,
                            pl_check *c, double *start)
{
    /* nothing from an earlier run may pass: every output holds a poison */
    memset(b->h_out, H_OUT_POISON, b->n * sizeof(float));
    if (cudaMemset(b->d_out, D_OUT_POISON, b->n * sizeof(float)) ||
        cudaMemset(b->d_in, D_IN_POISON, b->n * sizeof(float)) || cudaDeviceSynchronize()) {
        pl_check_fail(c, "cannot clear the device buffers");
        return -1;
    }
    if (start) *start = pl_device_now();
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

static int run_chunked(const lab05_impl *impl, buffers *b, int chunks, cudaStream_t *s, int ns,
                       pl_check *c)
{
    return run_chunked_from(impl, b, chunks, s, ns, c, NULL);
}

/* h_out against the one-stream output, exactly; a wrong element is named
 * with the step that would have changed it. */
static int compare_out(pl_check *c, const buffers *b, int chunks, int ns)
{
    float h_poison = poison_float(H_OUT_POISON), d_poison = poison_float(D_OUT_POISON);
    for (size_t i = 0; i < b->n; i++) {
        c->assertions++;
        float got = b->h_out[i], want = b->h_ref[i];
        if (got == want) continue;
        char head[96];
        snprintf(head, sizeof head, "chunked(n=%zu, chunks=%d, streams=%d): h_out[%zu]", b->n,
                 chunks, ns, i);
        if (memcmp(&got, &h_poison, sizeof got) == 0)
            pl_check_fail(c,
                          "%s = NaN, the value the check put in h_out before the run, but "
                          "expected %.9g: it was never copied back (cudaMemcpyAsync(h_out + "
                          "off, d_out + off, len * 4, cudaMemcpyDeviceToHost, s))",
                          head, want);
        else if (memcmp(&got, &d_poison, sizeof got) == 0)
            pl_check_fail(c,
                          "%s = %.9g, the value the check put in d_out before the run, but "
                          "expected %.9g: it was copied back, but no kernel wrote it: call "
                          "lab05_process(d_out + off, d_in + off, len, s) between the two copies",
                          head, got, want);
        else if (got == b->in_poisoned)
            pl_check_fail(c,
                          "%s = %.9g, what lab05_process makes of the value the check put in "
                          "d_in before the run, but expected %.9g: the chunk was processed "
                          "before it was copied in (copy in, process, copy out, on one stream)",
                          head, got, want);
        else if (got == b->h_in[i])
            pl_check_fail(c,
                          "%s = %.9g, the input h_in[%zu] itself, but expected %.9g: copy back "
                          "d_out, lab05_process's output, not d_in",
                          head, got, i, want);
        else
            pl_check_fail(c, "%s = %.9g but expected %.9g", head, got, want);
        return 0;
    }
    return 1;
}

/* The ops a run made, as the simulated GPU reports them. */
typedef struct {
    pl_device_op rec[4096];
    int n;
} op_log;

static void log_op(const pl_device_op *r, void *user)
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
            if (l->rec[i].kind == PL_OP_COPY && l->rec[j].kind == PL_OP_KERNEL &&
                l->rec[i].modeled_start < l->rec[j].modeled_end &&
                l->rec[j].modeled_start < l->rec[i].modeled_end)
                return 1;
    return 0;
}

/* Why a run did not overlap, from its ops: into why ("" if none found). */
static void serial_cause(const op_log *l, char *why, size_t cap)
{
    int kernels = 0, nstreams = 0, streams[64];
    for (int i = 0; i < l->n; i++) {
        if (l->rec[i].kind == PL_OP_MEMSET) continue; /* the check's own clearing */
        if (l->rec[i].kind == PL_OP_KERNEL) kernels++;
        int seen = 0;
        for (int j = 0; j < nstreams; j++) seen |= streams[j] == l->rec[i].stream;
        if (!seen && nstreams < 64) streams[nstreams++] = l->rec[i].stream;
    }
    if (!kernels)
        snprintf(why, cap, ": no kernel ran; call lab05_process on each chunk, between its copies");
    else if (nstreams == 1 && streams[0] == 0)
        snprintf(why, cap,
                 ": every copy and kernel ran on the default stream (a synchronous cudaMemcpy, "
                 "or stream 0?); put chunk k on streams[k %% nstreams] with cudaMemcpyAsync");
    else if (nstreams == 1)
        snprintf(why, cap,
                 ": every chunk ran on the same stream; put chunk k on streams[k %% nstreams]");
    else
        snprintf(why, cap,
                 ": the chunks ran on %d streams, but one at a time: is there a "
                 "cudaStreamSynchronize, a cudaDeviceSynchronize or a synchronous cudaMemcpy "
                 "in the loop?",
                 nstreams);
}

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
                compare_out(c, &b, chunk_counts[k], stream_counts[m]);
            }
        release(&b);
    }
    /* the overlap, on the modeled clock: where there is one, and the ops it reports */
    if (pl_check_ok(c) && pl_device_caps()->modeled && pl_device_caps()->op_reports) {
        buffers b;
        if (alloc(&b, 1u << 22)) {
            pl_check_fail(c, "out of memory");
            release(&b);
        } else {
            double t0 = pl_device_now();
            lab05_one_stream(b.h_ref, b.h_in, b.d_out, b.d_in, b.n, s[0]);
            cudaDeviceSynchronize();
            double t1 = pl_device_now();
            static op_log log;
            log.n = 0;
            pl_device_set_op_hook(log_op, &log);
            double t1b = 0; /* after run_chunked's clearing of the buffers */
            int r = run_chunked_from(impl, &b, 8, s, 4, c, &t1b);
            pl_device_flush_ops();
            pl_device_set_op_hook(NULL, NULL);
            if (r == 0 && compare_out(c, &b, 8, 4)) {
                double t2 = pl_device_now();
                char why[256] = "";
                serial_cause(&log, why, sizeof why);
                pl_check_that(c, t2 - t1b < t1 - t0,
                              "8 chunks over 4 streams took %.1f us (modeled), one stream %.1f "
                              "us: the chunks' copies should overlap%s",
                              (t2 - t1b) * 1e6, (t1 - t0) * 1e6, why);
                pl_check_that(c, copy_meets_kernel(&log),
                              "8 chunks over 4 streams: no copy ran while a kernel ran (modeled "
                              "clock)%s",
                              why);
            }
            release(&b);
        }
    }
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
