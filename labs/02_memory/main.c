/*
 * Lab 02 — memory: how bytes reach the GPU and how a warp's accesses reach
 * its memory. Host<->device copies from pageable and from pinned memory;
 * a copy kernel reading with strides 1..32 (coalescing); the transpose
 * naive, through a shared-memory tile (yours), and with the tile padded
 * against bank conflicts. On the simulated GPU the emulator counts the
 * 32-byte sectors of every warp's request and the bank conflicts of every
 * shared-memory request.
 *
 * Usage: lab02 [--size N] [--solution] [common options] [--help]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "02_memory/lab02.h"
#include "harness/harness.h"
#include "paralab/cli.h"
#include "paralab/device.h"
#include "paralab/options.h"
#include "paralab/picture.h"
#include "paralab/step.h"
#include "paralab/viz.h"

enum { KEY_SIZE = 300, KEY_KERNEL };
#define LAB02_KERNEL_LIST "1 naive, 2 tiled (yours), 3 padded"

typedef struct {
    long n;      /* the transpose is n x n */
    long kernel; /* the one transpose to run (and nothing else), 0 for all */
    int bad;     /* the steps found wrong elements */
} lab;

static int on_option(int key, const char *arg, void *ctx, char *err, size_t cap)
{
    lab *l = ctx;
    const char *e = key == KEY_KERNEL ? pl_parse_long("--kernel", arg, 1, 3, &l->kernel)
                                      : pl_parse_long("--size", arg, 1, 8192, &l->n);
    if (e) snprintf(err, cap, "%s%s", e, key == KEY_KERNEL ? " (" LAB02_KERNEL_LIST ")" : "");
    return e != NULL;
}

/* Your transpose, or the reference where it is still TODO (found at its
 * first call, on the lab's own buffers: harness/harness.h). */
static int transpose_tiled(float *out, const float *in, int rows, int cols)
{
    if (!pl_lab_uses_reference(0)) {
        int e = lab02_exercise.transpose_tiled(out, in, rows, cols);
        if (e != PL_TODO_STATUS) return e;
        pl_lab_reference(0);
    }
    return lab02_solution.transpose_tiled(out, in, rows, cols);
}

/* One kernel run (or copy), to be timed: a launch with its arguments. */
typedef struct {
    int (*transpose)(float *out, const float *in, int rows, int cols);
    int stride; /* for the strided copy */
    float *out;
    const float *in;
    const void *host;
    void *host_dst;
    size_t bytes;
    int n, kind; /* 0 transpose, 1 strided copy, 2 copy to the device, 3 copy to the host */
} job;

static cudaError_t run_job(const job *j)
{
    switch (j->kind) {
    case 0:
        return (cudaError_t)j->transpose(j->out, j->in, j->n, j->n);
    case 1:
        return (cudaError_t)lab02_strided_copy(j->out, j->in, j->n, j->stride);
    case 2:
        return cudaMemcpy(j->out, j->host, j->bytes, cudaMemcpyHostToDevice);
    default:
        return cudaMemcpy(j->host_dst, j->in, j->bytes, cudaMemcpyDeviceToHost);
    }
}

/* What a run cost: its time (modeled or measured: on a real GPU one
 * untimed run first, then the mean of 5) and, on the simulator, its
 * sectors per global request and wavefronts per shared request. */
typedef struct {
    float ms;
    int counted;
    /* per request; 0 where there were none */
    double load_sectors, store_sectors, shared_load_waves, shared_store_waves;
} cost;

static double per_request(pl_mem_counts m)
{
    return m.requests ? (double)m.units / (double)m.requests : 0;
}

static cudaError_t measure(const job *j, cost *c)
{
    memset(c, 0, sizeof *c);
    /* a modeled clock times one run exactly; a real GPU: the mean of 5
     * after one to warm up */
    int reps = pl_device_caps()->modeled ? 1 : 5;
    if (!pl_device_caps()->modeled) {
        cudaError_t w = run_job(j);
        if (w) return w;
    }
    pl_mem_stats st;
    int counting = j->kind <= 1 && pl_device_caps()->mem_counts;
    cudaDeviceSynchronize(); /* nothing earlier in the timing (or the counts) */
    if (counting) pl_device_mem_stats_begin();
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaError_t e = cudaEventRecord(a, 0);
    for (int i = 0; i < reps && !e; i++) e = run_job(j);
    if (!e) e = cudaEventRecord(b, 0);
    if (!e) e = cudaEventSynchronize(b);
    if (!e) e = cudaEventElapsedTime(&c->ms, a, b);
    c->ms /= (float)reps;
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    if (counting && pl_device_mem_stats_end(&st) == 0) {
        c->counted = !st.incomplete; /* out of memory for the counts: show none */
        c->load_sectors = per_request(st.global_load);
        c->store_sectors = per_request(st.global_store);
        c->shared_load_waves = per_request(st.shared_load);
        c->shared_store_waves = per_request(st.shared_store);
    }
    return e;
}

/* "; loads 4.0 sectors per request, ..." or, off the simulator, nothing */
static const char *counts(const cost *c, char *buf, size_t cap)
{
    if (!c->counted)
        snprintf(buf, cap, "%s", "");
    else if (c->shared_load_waves > 0)
        snprintf(buf, cap,
                 "; sectors per request: loads %.1f, stores %.1f; shared-memory wavefronts per "
                 "request: stores %.1f, loads %.1f%s",
                 c->load_sectors, c->store_sectors, c->shared_store_waves, c->shared_load_waves,
                 c->shared_load_waves > 1.05 ? " (a 32-way bank conflict)" : " (no conflict)");
    else
        snprintf(buf, cap, "; sectors per request: loads %.1f, stores %.1f", c->load_sectors,
                 c->store_sectors);
    return buf;
}

/* ---- the pictures (paralab/picture.h): drawn from the kernel's record ---- */

/* Records the next kernel launched: block 0's accesses to the arrays
 * [a, a + an) (range 0) and [b, b + bn) (range 1), and its shared memory.
 * 1 when recording, 0 where the device records nothing (a real GPU:
 * pl_device_caps()->records is 0; the lab then draws no picture). */
static int recording; /* a record begun and not yet ended (a failed run ends it at out) */

static int record_begin(const void *a, size_t an, const void *b, size_t bn)
{
    if (!pl_device_caps()->records) return 0;
    pl_record_config c = {
        .max_accesses = 1 << 14, .shared = 1, .nranges = 2, .block_first = 0, .block_count = 1};
    c.range[0].lo = a;
    c.range[0].len = an;
    c.range[1].lo = b;
    c.range[1].len = bn;
    recording = pl_device_record_begin(&c) == 0;
    return recording;
}

/* The record begun, ended: 0 and *rec filled, or -1 (none). */
static int record_end(pl_kernel_record *rec)
{
    if (!recording) return -1;
    recording = 0;
    return pl_device_record_end(rec);
}

/* The record's picture of one warp's request (to range 0: loads, or
 * stores when `store`) or, with pitch > 0, of its shared-memory loads
 * from a tile of that row pitch, into the current step. Nothing where the
 * record has none. */
static void record_picture(pl_rank *r, int rec_on, int store, int pitch, const char *name)
{
    pl_kernel_record rec;
    if (!rec_on || record_end(&rec)) return;
    pl_picture p;
    int e = pitch ? pl_picture_banks(&rec, 0, 0, pitch, name, &p)
                  : pl_picture_request(&rec, store, 0, name, &p);
    if (!e) {
        pl_lab_picture(r, &p);
        pl_picture_free(&p);
    }
    pl_kernel_record_free(&rec);
}

/* The record of a kernel with two pictures: its shared-memory loads (the
 * step's idea, first: a small pane shows the first) and, with req, its
 * stores' request (the tiled transposes). */
static void record_pictures2(pl_rank *r, int rec_on, const char *req, int pitch, const char *banks)
{
    pl_kernel_record rec;
    if (!rec_on || record_end(&rec)) return;
    pl_picture p;
    if (pl_picture_banks(&rec, 0, 0, pitch, banks, &p) == 0) {
        pl_lab_picture(r, &p);
        pl_picture_free(&p);
    }
    if (req && pl_picture_request(&rec, 1, 0, req, &p) == 0) {
        pl_lab_picture(r, &p);
        pl_picture_free(&p);
    }
    pl_kernel_record_free(&rec);
}

/* A bar chart of what the step measured (one bar per run, `unit`), the
 * reference line `ref` (NaN: none) named ref_name, bar hi lit (-1: none). */
static void bars_picture(pl_rank *r, const char *title, int n, const double *v,
                         const char (*label)[32], const char *unit, double ref,
                         const char *ref_name, int hi)
{
    pl_picture p;
    if (pl_picture_init(&p, PL_PIC_BARS, title, 0, (size_t)n + 1, (size_t)n + 2)) return;
    p.p[0] = n;
    p.p[1] = hi;
    for (int i = 0; i < n; i++) {
        p.dv[i] = v[i];
        snprintf(p.sv[1 + i], sizeof p.sv[0], "%s", label[i]);
    }
    p.dv[n] = ref;
    snprintf(p.sv[0], sizeof p.sv[0], "%s", unit);
    snprintf(p.sv[1 + n], sizeof p.sv[0], "%s", ref_name);
    pl_lab_picture(r, &p);
    pl_picture_free(&p);
}

static int run_steps(pl_rank *r)
{
    lab *l = r->arg;
    int n = (int)l->n, status = 1;
    size_t elems = (size_t)n * n, bytes = elems * sizeof(float);
    /* the strided copy: 4 MiB of useful reads on the simulator; on a real
     * GPU 64 MiB, so that stride 8 (512 MiB spanned) does not sit in L2 */
    enum { MAX_STRIDE = 32, COPY_BYTES = 16 << 20 };
    const int COPY_N = pl_device_caps()->modeled ? 1 << 20 : 1 << 24;
    float *h = malloc(bytes), *back = malloc(bytes), *pageable = malloc(COPY_BYTES), *pinned = NULL;
    float *din = NULL, *dout = NULL, *dwide = NULL, *dnarrow = NULL;
    char buf[256];
    /* every kernel's bandwidth, for the bars of the last step */
    double kbw[8];
    char klabel[8][32];
    int nk = 0;
    if (!h || !back || !pageable) {
        snprintf(r->error, sizeof r->error, "out of host memory for --size %d", n);
        goto out;
    }
    for (size_t i = 0; i < elems; i++) h[i] = (float)(i % 1000003);
    memset(pageable, 1, COPY_BYTES);
    PL_LAB_CK(cudaMallocHost((void **)&pinned, COPY_BYTES));
    memset(pinned, 1, COPY_BYTES);
    PL_LAB_CK(cudaMalloc((void **)&din, bytes));
    PL_LAB_CK(cudaMalloc((void **)&dout, bytes));
    PL_LAB_CK(cudaMalloc((void **)&dwide, (size_t)COPY_N * MAX_STRIDE * sizeof(float)));
    PL_LAB_CK(cudaMalloc((void **)&dnarrow, (size_t)COPY_N * sizeof(float)));
    PL_LAB_CK(cudaMemset(dwide, 0, (size_t)COPY_N * MAX_STRIDE * sizeof(float)));
    struct cudaDeviceProp prop;
    PL_LAB_CK(cudaGetDeviceProperties(&prop, 0));
    double peak_flops = 0, peak_bw = 0;
    PL_LAB_CK(pl_device_peaks(0, &peak_flops, &peak_bw));
    pl_hw_model hw;
    int have_hw = pl_device_model(&hw) == 0;
    if (have_hw) /* the preset the modeled clock charges */
        PL_LAB_STEP("The %s: %.2f TB/s of device memory; the host link moves %.0f GB/s each "
                    "way at most, %.0f %% of it from pinned host memory, %.0f %% from pageable.",
                    prop.name, hw.memory_bw / 1e12, hw.host_link_bw / 1e9,
                    100 * hw.pinned_efficiency, 100 * hw.pageable_efficiency);
    else
        PL_LAB_STEP(
            "The %s: %d SMs, %.0f MiB of L2, %.2f TB/s of device memory at most (2 x its clock x "
            "its bus width); times below are measured with CUDA events (the mean of 5 runs after "
            "one to warm up).",
            prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1048576.0, peak_bw / 1e12);
    /* 1. copies */
    if (!l->kernel) {
        PL_LAB_BEGIN();
        cost c[4];
        job j = {.out = dwide, .in = dwide, .bytes = COPY_BYTES, .kind = 2, .host = pageable};
        PL_LAB_CK(measure(&j, &c[0]));
        j.host = pinned;
        PL_LAB_CK(measure(&j, &c[1]));
        j.kind = 3;
        j.host_dst = pageable;
        PL_LAB_CK(measure(&j, &c[2]));
        j.host_dst = pinned;
        PL_LAB_CK(measure(&j, &c[3]));
        double mb = COPY_BYTES / 1e6;
        PL_LAB_STEP(
            "Copies of %.1f MB (%s): to the device %.1f GB/s from pageable memory, %.1f GB/s "
            "from pinned; to the host %.1f GB/s into pageable, %.1f GB/s into pinned. Pageable "
            "memory is first copied into a pinned staging buffer by the driver: pin what you "
            "copy often (cudaMallocHost).",
            mb, pl_clock_name(), mb / c[0].ms, mb / c[1].ms, mb / c[2].ms, mb / c[3].ms);
        pl_metric(r, "GB/s", mb / c[1].ms);
        static const char copy_label[4][32] = {"to device, pageable", "to device, pinned",
                                               "to host, pageable", "to host, pinned"};
        double v[4];
        for (int i = 0; i < 4; i++) v[i] = mb / c[i].ms;
        bars_picture(r, "host<->device copies", 4, v, copy_label, "GB/s",
                     have_hw ? hw.host_link_bw / 1e9 : NAN, "the host link", 1);
    }
    /* 2. strides */
    if (!l->kernel) {
        PL_LAB_BEGIN();
        static const int strides[] = {1, 2, 4, 8, 32};
        char line[5][240];
        for (int s = 0; s < 5; s++) {
            job j = {.out = dnarrow, .in = dwide, .n = COPY_N, .stride = strides[s], .kind = 1};
            cost c;
            /* one warp's loads drawn for stride 1 and 8, from the record of the run */
            int rec = (strides[s] == 1 || strides[s] == 8) &&
                      record_begin(dwide, (size_t)COPY_N * MAX_STRIDE * sizeof(float), dnarrow,
                                   (size_t)COPY_N * sizeof(float));
            PL_LAB_CK(measure(&j, &c));
            record_picture(r, rec, 0, 0, strides[s] == 1 ? "coalesced (stride 1)" : "strided x8");
            double useful = 8.0 * COPY_N; /* 4 bytes read, 4 written per element */
            double gbs = useful / (c.ms * 1e-3) / 1e9;
            snprintf(line[s], sizeof line[s],
                     "stride %2d: %6.1f GB/s useful (%3.0f %% of the peak)%s", strides[s], gbs,
                     100 * gbs * 1e9 / peak_bw, counts(&c, buf, sizeof buf));
            pl_metric(r, "GB/s", useful / (c.ms * 1e-3) / 1e9);
            kbw[nk] = gbs;
            snprintf(klabel[nk++], sizeof klabel[0], "copy, stride %d", strides[s]);
        }
        PL_LAB_STEP(
            "A copy kernel, out[i] = in[i * stride], %d floats (%s):\n    %s\n    %s\n    %s\n  "
            "  %s\n    %s\nA warp's 32 loads of consecutive floats are 128 bytes: 4 sectors of 32 "
            "bytes, one request. Spread out, each needs its own sector: 8x the traffic for the "
            "same useful bytes.",
            COPY_N, pl_clock_name(), line[0], line[1], line[2], line[3], line[4]);
    }
    /* 3. transposes */
    static const char *names[] = {
        "naive: reads along rows, writes along columns",
        "tiled (transpose_tiled, %s): both along rows, through a 32x32 shared tile",
        "padded: the tile 32x33, so a column of it lies in 32 banks"};
    int (*fns[3])(float *, const float *, int, int) = {lab02_transpose_naive, transpose_tiled,
                                                       lab02_transpose_padded};
    PL_LAB_CK(cudaMemcpy(din, h, bytes, cudaMemcpyHostToDevice));
    for (int v = 0; v < 3; v++) {
        if (l->kernel && l->kernel != v + 1) continue;
        PL_LAB_BEGIN();
        job j = {.transpose = fns[v], .out = dout, .in = din, .n = n, .kind = 0};
        cost c;
        PL_LAB_CK(cudaMemset(dout, 0, bytes));
        /* the naive one's stores (a column of out); the tiled ones' tile */
        int rec = record_begin(dout, bytes, din, bytes);
        PL_LAB_CK(measure(&j, &c));
        if (v == 0)
            record_picture(r, rec, 1, 0, "transposed (naive)");
        else
            record_pictures2(r, rec, v == 1 ? "tiled: a row of out" : NULL, v == 1 ? 32 : 33,
                             v == 1 ? "32x32 tile, a column read" : "32x33 tile, a column read");
        PL_LAB_CK(cudaMemcpy(back, dout, bytes, cudaMemcpyDeviceToHost));
        long wrong = 0;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) wrong += back[(size_t)a * n + b] != h[(size_t)b * n + a];
        l->bad |= wrong != 0;
        char what[160];
        snprintf(what, sizeof what, names[v], pl_lab_is_todo(0) ? "the reference" : "yours");
        double gbs = 2.0 * bytes / (c.ms * 1e-3) / 1e9;
        PL_LAB_STEP("Transpose %dx%d, %s: %.1f us (%s), %.1f GB/s (%.0f %% of the peak)%s%s.", n, n,
                    what, c.ms * 1e3, pl_clock_name(), gbs, 100 * gbs * 1e9 / peak_bw,
                    counts(&c, buf, sizeof buf), wrong ? "; SOME ELEMENTS ARE WRONG" : "");
        pl_metric(r, "GB/s", 2.0 * bytes / (c.ms * 1e-3) / 1e9);
        static const char *const short_names[] = {"transpose, naive", "transpose, tiled",
                                                  "transpose, padded"};
        kbw[nk] = gbs;
        snprintf(klabel[nk++], sizeof klabel[0], "%s%s", short_names[v],
                 v == 1 ? (pl_lab_is_todo(0) ? " (ref)" : " (yours)") : "");
    }
    if (!l->kernel) {
        PL_LAB_BEGIN();
        char peak[32];
        snprintf(peak, sizeof peak, "peak (%s)", have_hw ? "the preset" : "the GPU");
        bars_picture(r, "every kernel's bandwidth", nk, kbw, (const char(*)[32])klabel, "GB/s",
                     peak_bw / 1e9, peak, nk - 2);
        PL_LAB_STEP(
            "Coalescing is the first rule: a warp's 32 accesses should fall in as few 32-byte "
            "sectors as possible. The tile turns the column writes into row writes; the padding "
            "spreads the tile's columns over the 32 banks.%s",
            pl_device_caps()->modeled
                ? " The modeled clock charges the sectors, not the bank conflicts: on a real GPU "
                  "the padded tile is the faster one."
                : "");
    }
    status = 0;
out:
    if (recording) { /* a kernel that failed while recorded */
        pl_kernel_record rec;
        if (record_end(&rec) == 0) pl_kernel_record_free(&rec);
    }
    cudaFree(din);
    cudaFree(dout);
    cudaFree(dwide);
    cudaFree(dnarrow);
    cudaFreeHost(pinned);
    free(h);
    free(back);
    free(pageable);
    return status;
}

/* The title; the steps: the device, the copies, the strides, the three
 * transposes and the lesson (with --kernel, the device and one transpose). */
static int setup(void *ctx, char *err, size_t cap)
{
    lab *l = ctx;
    (void)err, (void)cap;
    printf("paralab lab 02 — memory (%s clock)\n", pl_clock_name());
    return l->kernel ? 2 : 7;
}

static int report(void *ctx) { return ((lab *)ctx)->bad; }

int main(int argc, char **argv)
{
    static lab l = {.n = 1024};
    static const pl_lab_option options[] = {
        {"size", 1, "N", "the transpose is N x N (1..8192, default 1024)", KEY_SIZE},
        {"kernel", 1, "K", "run only transpose K: " LAB02_KERNEL_LIST " (default: everything)",
         KEY_KERNEL},
        {0, 0, 0, 0, 0},
    };
    static const pl_lab_def me = {
        .program = "lab02",
        .summary =
            "Lab 02, memory: pinned copies, coalescing, the transpose and shared-memory banks.",
        .exercise = "labs/02_memory/exercise.cu",
        .title = "lab 02 memory",
        .options = options,
        .on_option = on_option,
        .ctx = &l,
        .max_devices = 1,
        .panes = PL_PANE_BIT(PL_PANE_PICTURE), /* the warp's sectors, the banks, the bars */
        .lab = &lab02_memory,
        .setup = setup,
        .steps = run_steps,
        .report = report,
    };
    return pl_lab_main(&me, argc, argv);
}
