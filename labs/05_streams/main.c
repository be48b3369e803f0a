/*
 * Lab 05 — streams: copy in, compute and copy out on one stream, one after
 * the other; then the same work cut into chunks over several streams, so
 * that a chunk's copy in, another's kernel and a third's copy out run at
 * the same time on the device's engines.
 *
 * Usage: lab05 [--size N] [--chunks C] [--streams S] [--solution]
 *              [common options] [--help]
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "05_streams/lab05.h"
#include "harness/harness.h"
#include "paralab/cli.h"
#include "paralab/device.h"
#include "paralab/options.h"
#include "paralab/plural.h"
#include "paralab/step.h"
#include "paralab/viz.h"

enum { KEY_SIZE = 300, KEY_CHUNKS, KEY_STREAMS, KEY_KERNEL };
#define LAB05_KERNEL_LIST "1 one stream, 2 chunks over streams (yours)"

typedef struct {
    long n, chunks, streams;
    long kernel; /* the one version to show, 0 for both (one stream always runs: the reference) */
    float ms_one, ms_chunked;
    long wrong;
} lab;

static int on_option(int key, const char *arg, void *ctx, char *err, size_t cap)
{
    lab *l = ctx;
    const char *e = NULL;
    if (key == KEY_SIZE)
        e = pl_parse_long("--size", arg, 1, 1L << 28, &l->n);
    else if (key == KEY_CHUNKS)
        e = pl_parse_long("--chunks", arg, 1, 1024, &l->chunks);
    else if (key == KEY_STREAMS)
        e = pl_parse_long("--streams", arg, 1, 32, &l->streams);
    else
        e = pl_parse_long("--kernel", arg, 1, 2, &l->kernel);
    if (e) snprintf(err, cap, "%s%s", e, key == KEY_KERNEL ? " (" LAB05_KERNEL_LIST ")" : "");
    return e != NULL;
}

/* Your chunks over streams, or the reference while it is still TODO (found
 * at its first call, on the lab's own buffers: harness/harness.h). */
static int chunked(float *h_out, const float *h_in, float *d_out, float *d_in, size_t n, int chunks,
                   cudaStream_t *s, int ns)
{
    if (!pl_lab_uses_reference(0)) {
        int e = lab05_exercise.chunked(h_out, h_in, d_out, d_in, n, chunks, s, ns);
        if (e != PL_TODO_STATUS) return e;
        pl_lab_reference(0);
    }
    return lab05_solution.chunked(h_out, h_in, d_out, d_in, n, chunks, s, ns);
}

/* The lab's steps, on a one-rank world. */
static int run_steps(pl_rank *r)
{
    lab *l = r->arg;
    size_t n = (size_t)l->n, bytes = n * sizeof(float);
    int ns = (int)l->streams, status = 1;
    float *h_in = NULL, *h_out = NULL, *h_ref = NULL, *d_in = NULL, *d_out = NULL;
    cudaStream_t s[32] = {0};
    cudaEvent_t e0 = NULL, e1 = NULL, e2 = NULL, e3 = NULL;
    PL_LAB_CK(cudaMallocHost((void **)&h_in, bytes));
    PL_LAB_CK(cudaMallocHost((void **)&h_out, bytes));
    PL_LAB_CK(cudaMallocHost((void **)&h_ref, bytes));
    PL_LAB_CK(cudaMalloc((void **)&d_in, bytes));
    PL_LAB_CK(cudaMalloc((void **)&d_out, bytes));
    for (int i = 0; i < ns; i++) PL_LAB_CK(cudaStreamCreate(&s[i]));
    PL_LAB_CK(cudaEventCreate(&e0));
    PL_LAB_CK(cudaEventCreate(&e1));
    PL_LAB_CK(cudaEventCreate(&e2));
    PL_LAB_CK(cudaEventCreate(&e3));
    for (size_t i = 0; i < n; i++) h_in[i] = (float)(i % 1000) * 0.25f;
    PL_LAB_STEP("%zu float%s (%.1f MiB) in pinned host memory (cudaMallocHost): copies from it "
                "run asynchronously on the copy engines.",
                n, pl_s((long long)n), (double)bytes / (1 << 20));

    PL_LAB_BEGIN(); /* the runs below, under the narration that reports them */
    if (pl_device_caps()->lazy_loading) {
        /* a real GPU loads a kernel at its first launch (lazy loading): not
         * something to time */
        PL_LAB_CK(lab05_process(d_out, d_in, n, s[0]));
        PL_LAB_CK(cudaStreamSynchronize(s[0]));
    }
    /* one stream, the parts timed with events */
    PL_LAB_CK(cudaEventRecord(e0, s[0]));
    PL_LAB_CK(cudaMemcpyAsync(d_in, h_in, bytes, cudaMemcpyHostToDevice, s[0]));
    PL_LAB_CK(cudaEventRecord(e1, s[0]));
    PL_LAB_CK(lab05_process(d_out, d_in, n, s[0]));
    PL_LAB_CK(cudaEventRecord(e2, s[0]));
    PL_LAB_CK(cudaMemcpyAsync(h_ref, d_out, bytes, cudaMemcpyDeviceToHost, s[0]));
    PL_LAB_CK(cudaEventRecord(e3, s[0]));
    PL_LAB_CK(cudaStreamSynchronize(s[0]));
    float in_ms, k_ms, out_ms;
    PL_LAB_CK(cudaEventElapsedTime(&in_ms, e0, e1));
    PL_LAB_CK(cudaEventElapsedTime(&k_ms, e1, e2));
    PL_LAB_CK(cudaEventElapsedTime(&out_ms, e2, e3));
    l->ms_one = in_ms + k_ms + out_ms;
    if (l->kernel != 2)
        PL_LAB_STEP(
            "One stream: copy in %.1f us, process %.1f us, copy out %.1f us — %.1f us in all "
            "(%s), one after the other.",
            in_ms * 1e3, k_ms * 1e3, out_ms * 1e3, l->ms_one * 1e3, pl_clock_name());
    if (l->kernel == 1) {
        status = 0;
        goto out;
    }

    /* chunks over streams */
    PL_LAB_BEGIN();
    memset(h_out, 0xff, bytes);
    PL_LAB_CK(cudaDeviceSynchronize());
    PL_LAB_CK(cudaEventRecord(e0, 0));
    PL_LAB_CK(cudaStreamWaitEvent(s[0], e0, 0));
    int rc = chunked(h_out, h_in, d_out, d_in, n, (int)l->chunks, s, ns);
    PL_LAB_CK(rc);
    for (int i = 0; i < ns; i++) PL_LAB_CK(cudaStreamSynchronize(s[i]));
    PL_LAB_CK(cudaEventRecord(e1, 0));
    PL_LAB_CK(cudaEventSynchronize(e1));
    PL_LAB_CK(cudaEventElapsedTime(&l->ms_chunked, e0, e1));
    l->wrong = 0;
    for (size_t i = 0; i < n; i++) l->wrong += memcmp(&h_out[i], &h_ref[i], sizeof(float)) != 0;
    /* slower than one stream (--streams 1, many chunks): "1.10x slower than",
     * never "0.91x as fast as" */
    double ratio = l->ms_one / (l->ms_chunked > 0 ? l->ms_chunked : 1);
    PL_LAB_STEP(
        "%ld chunk%s over %d stream%s (chunked, %s): %.1f us, %.2fx %s one stream; %s.", l->chunks,
        pl_s(l->chunks), ns, pl_s(ns), pl_lab_is_todo(0) ? "the reference" : "yours",
        l->ms_chunked * 1e3, ratio < 1 && ratio > 0 ? 1 / ratio : ratio,
        ratio < 1 && ratio > 0 ? "slower than" : "as fast as",
        l->wrong ? "SOME OUTPUTS DIFFER from one stream's" : "every output equals one stream's");
    if (!l->kernel)
        PL_LAB_STEP(
            "What overlapped: a GPU has a copy engine each way and the SMs; while chunk k is "
            "processed, chunk k+1 comes in and chunk k-1 goes out. With one stream, or one chunk, "
            "nothing can.");
    status = 0;
out:
    for (int i = 0; i < ns; i++)
        if (s[i]) cudaStreamDestroy(s[i]);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (e2) cudaEventDestroy(e2);
    if (e3) cudaEventDestroy(e3);
    cudaFreeHost(h_in);
    cudaFreeHost(h_out);
    cudaFreeHost(h_ref);
    cudaFree(d_in);
    cudaFree(d_out);
    return status;
}

/* The title; the steps: the buffers, one stream, the chunks, what
 * overlapped (with --kernel, the buffers and one version). */
static int setup(void *ctx, char *err, size_t cap)
{
    lab *l = ctx;
    (void)err, (void)cap;
    printf("paralab lab 05 — streams (%s clock)\n", pl_clock_name());
    return l->kernel ? 2 : 4;
}

static int report(void *ctx) { return ((lab *)ctx)->wrong != 0; }

int main(int argc, char **argv)
{
    static lab l = {.n = 1L << 22, .chunks = 8, .streams = 4};
    static const pl_lab_option options[] = {
        {"size", 1, "N", "floats to process (1..2^28, default 4194304)", KEY_SIZE},
        {"kernel", 1, "K", "show only version K: " LAB05_KERNEL_LIST " (default: both)",
         KEY_KERNEL},
        {"chunks", 1, "C", "pieces the work is cut into (1..1024, default 8)", KEY_CHUNKS},
        {"streams", 1, "S", "streams the pieces go round (1..32, default 4)", KEY_STREAMS},
        {0, 0, 0, 0, 0},
    };
    static const pl_lab_def me = {
        .program = "lab05",
        .summary =
            "Lab 05, streams: one stream against chunks over several, copies overlapping compute.",
        .exercise = "labs/05_streams/exercise.c",
        .title = "lab 05 streams",
        .options = options,
        .on_option = on_option,
        .ctx = &l,
        .max_devices = 1,
        .lab = &lab05_streams,
        .stream_lanes = 1,
        .setup = setup,
        .steps = run_steps,
        .report = report,
    };
    return pl_lab_main(&me, argc, argv);
}
