/*
 * Lab 03 — reduction: the sum of an array, one block of 256 threads per
 * 256 elements, five ways: the interleaved tree (divergent warps),
 * sequential addressing (yours), the first add during the load, warp
 * shuffles for the last warp (yours), and atomics across blocks.
 *
 * Usage: lab03 [--size N] [--solution] [common options] [--help]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "03_reduction/lab03.h"
#include "harness/harness.h"
#include "paralab/cli.h"
#include "paralab/device.h"
#include "paralab/options.h"
#include "paralab/picture.h"
#include "paralab/plural.h"
#include "paralab/step.h"
#include "paralab/viz.h"

enum { KEY_SIZE = 300, KEY_KERNEL };
#define LAB03_KERNEL_LIST                                                                          \
    "1 interleaved, 2 sequential (yours), 3 first add, 4 warp shuffle (yours), 5 atomics"

typedef struct {
    long n, kernel; /* kernel: the one version to run, 0 for all */
    int bad;        /* a sum came out wrong */
} lab;

static int on_option(int key, const char *arg, void *ctx, char *err, size_t cap)
{
    lab *l = ctx;
    const char *e = key == KEY_KERNEL ? pl_parse_long("--kernel", arg, 1, 5, &l->kernel)
                                      : pl_parse_long("--size", arg, 1, 1L << 26, &l->n);
    if (e) snprintf(err, cap, "%s%s", e, key == KEY_KERNEL ? " (" LAB03_KERNEL_LIST ")" : "");
    return e != NULL;
}

typedef int (*sum_fn)(const float *, float *, int);

/* Your two kernels, or the reference where one is still TODO (found at its
 * first call, on the lab's own arrays: harness/harness.h). */
static int block_sum(const float *in, float *out, int n)
{
    if (!pl_lab_uses_reference(0)) {
        int e = lab03_exercise.block_sum(in, out, n);
        if (e != PL_TODO_STATUS) return e;
        pl_lab_reference(0);
    }
    return lab03_solution.block_sum(in, out, n);
}

static int block_sum_shuffle(const float *in, float *out, int n)
{
    if (!pl_lab_uses_reference(1)) {
        int e = lab03_exercise.block_sum_shuffle(in, out, n);
        if (e != PL_TODO_STATUS) return e;
        pl_lab_reference(1);
    }
    return lab03_solution.block_sum_shuffle(in, out, n);
}

/* The tree of sequential addressing, folded one level per step on the
 * first 16 elements (a block of 16 threads; the kernels' blocks have 256
 * and fold 8 times): at each level the threads below `half` add
 * s[tid + half] into s[tid], and a __syncthreads() ends the level. */
enum { FOLD_N = 16, FOLD_STEPS = 5 };
static int fold(pl_rank *r, const float *h, int n)
{
    float s[FOLD_N];
    for (int i = 0; i < FOLD_N; i++) s[i] = i < n ? h[i] : 0.0f;
    char row[FOLD_N * 4 + 1];
    int len = 0;
    for (int i = 0; i < FOLD_N; i++) len += snprintf(row + len, sizeof row - len, "%3.0f ", s[i]);
    if (pl_step(r, "The tree, on a block of %d threads (the first %d elements):\n    s: %s", FOLD_N,
                FOLD_N, row))
        return 1;
    for (int half = FOLD_N / 2; half > 0; half /= 2) {
        for (int t = 0; t < half; t++) s[t] += s[t + half];
        len = 0;
        for (int i = 0; i < FOLD_N; i++)
            len += i < half ? snprintf(row + len, sizeof row - len, "%3.0f ", s[i])
                            : snprintf(row + len, sizeof row - len, "  . ");
        char who[32];
        snprintf(who, sizeof who, half == 1 ? "thread 0 adds" : "threads 0..%d add", half - 1);
        if (pl_step(r,
                    "half = %d: %s s[tid + %d] into s[tid]; threads %d..%d rest; "
                    "then __syncthreads().\n    s: %s%s",
                    half, who, half, half, FOLD_N - 1, row,
                    half == 1 ? "\n    s[0] is the block's sum; thread 0 writes it out." : ""))
            return 1;
    }
    return 0;
}

/* The tree of block 0 as the kernel made it (paralab/picture.h), for the
 * picture pane of version v's step: its shared-memory accesses recorded
 * by the simulated GPU while fn summed the first min(n, 256) floats (one
 * block: the same kernel, the student's where it is written), and with
 * shuffles its warp ops too (a second picture: the lanes). Nothing on a
 * real GPU (pl_device_caps()->records is 0). 0, or a CUDA error of the
 * launch (the run stops with it). */
static int picture_tree(pl_rank *r, sum_fn fn, int shuffle, const float *din, float *dout, int n)
{
    if (!pl_device_caps()->records) return 0;
    pl_record_config cfg = {.max_accesses = 1 << 16,
                            .shared = 1,
                            .warp_ops = shuffle,
                            .block_first = 0,
                            .block_count = 1};
    if (pl_device_record_begin(&cfg)) return 0;
    int e = fn(din, dout, n < LAB03_THREADS ? n : LAB03_THREADS);
    if (!e) e = cudaDeviceSynchronize();
    pl_kernel_record rec;
    memset(&rec, 0, sizeof rec);
    if (pl_device_record_end(&rec) || e) {
        pl_kernel_record_free(&rec);
        return e;
    }
    for (int mode = 0; mode <= shuffle; mode++) {
        pl_picture pic;
        if (pl_picture_tree(&rec, mode, &pic)) continue; /* no level: nothing to draw */
        pl_lab_picture(r, &pic);
        pl_picture_free(&pic);
    }
    pl_kernel_record_free(&rec);
    return 0;
}

static int run_steps(pl_rank *r)
{
    lab *l = r->arg;
    int n = (int)l->n, nb = (n + LAB03_THREADS - 1) / LAB03_THREADS, status = 1;
    float *h = malloc((size_t)n * sizeof *h), *out = malloc((size_t)nb * sizeof *out);
    float *din = NULL, *dout = NULL;
    if (!h || !out || cudaMalloc((void **)&din, (size_t)n * sizeof(float)) ||
        cudaMalloc((void **)&dout, (size_t)nb * sizeof(float))) {
        snprintf(r->error, sizeof r->error, "out of memory for --size %d", n);
        goto out;
    }
    double want = 0;
    for (int i = 0; i < n; i++) {
        h[i] = (float)(i % 7) - 3.0f; /* small integers: every float sum is exact */
        want += h[i];
    }
    cudaMemcpy(din, h, (size_t)n * sizeof(float), cudaMemcpyHostToDevice);
    PL_LAB_STEP(
        "%d float%s; their sum is %.0f. A block of %d threads sums up to %d of them in shared "
        "memory, as a tree of %d levels; the block sums are added up on the host.",
        n, pl_s(n), want, LAB03_THREADS, LAB03_THREADS, (int)log2(LAB03_THREADS));
    if (!l->kernel && fold(r, h, n)) goto out;
    static const char *what[] = {
        "interleaved addressing: at step s the threads with tid %% 2s == 0 add their neighbour "
        "s away; most threads of every warp idle (divergence)",
        "sequential addressing (block_sum, %s): the first half adds the second half; whole warps "
        "work or rest",
        "the first add during the load: each thread adds two elements, half the blocks",
        "the last warp with shuffles (block_sum_shuffle, %s): no shared memory, no "
        "__syncthreads() below 64 sums",
        "atomics: every block adds its sum into one float with atomicAdd (the order varies)"};
    sum_fn fns[5] = {lab03_interleaved, block_sum, lab03_first_add, block_sum_shuffle,
                     lab03_atomic};
    for (int v = 0; v < 5; v++) {
        if (l->kernel && l->kernel != v + 1) continue;
        PL_LAB_BEGIN();
        /* the trees of the interleaved, sequential and shuffle versions */
        if (r->rank == 0 && (v == 0 || v == 1 || v == 3)) {
            int e = picture_tree(r, fns[v], v == 3, din, dout, n);
            if (e) {
                snprintf(r->error, sizeof r->error, "version %d: %s", v + 1,
                         cudaGetErrorName((cudaError_t)e));
                goto out;
            }
        }
        int blocks = v == 2 ? (n + 2 * LAB03_THREADS - 1) / (2 * LAB03_THREADS) : nb;
        /* a real GPU loads a kernel at its first launch (lazy loading): run
         * it once untimed */
        if (pl_device_caps()->lazy_loading && fns[v](din, dout, n) == 0) cudaDeviceSynchronize();
        cudaEvent_t a, b;
        cudaEventCreate(&a);
        cudaEventCreate(&b);
        cudaMemset(dout, 0, (size_t)nb * sizeof(float));
        cudaEventRecord(a, 0);
        cudaError_t e = (cudaError_t)fns[v](din, dout, n);
        cudaEventRecord(b, 0);
        if (!e) e = cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        cudaEventDestroy(a);
        cudaEventDestroy(b);
        if (e) {
            snprintf(r->error, sizeof r->error, "version %d: %s", v + 1, cudaGetErrorName(e));
            goto out;
        }
        cudaMemcpy(out, dout, (size_t)blocks * sizeof(float), cudaMemcpyDeviceToHost);
        double got = 0;
        for (int k = 0; k < (v == 4 ? 1 : blocks); k++) got += out[k];
        int right = got == want;
        l->bad |= !right;
        char text[400];
        snprintf(text, sizeof text, what[v],
                 pl_lab_is_todo(v == 1 ? 0 : 1) ? "the reference" : "yours");
        PL_LAB_STEP("%s. Sum %.0f (%s), %.1f us (%s).", text, got, right ? "right" : "WRONG",
                    ms * 1e3, pl_clock_name());
    }
    status = 0;
out:
    cudaFree(din);
    cudaFree(dout);
    free(h);
    free(out);
    return status;
}

/* The title; the steps: the array, the tree folded level by level, the
 * five versions (with --kernel, the array and one version). */
static int setup(void *ctx, char *err, size_t cap)
{
    lab *l = ctx;
    (void)err, (void)cap;
    printf("paralab lab 03 — reduction (%s clock)\n", pl_clock_name());
    return l->kernel ? 2 : 6 + FOLD_STEPS;
}

static int report(void *ctx) { return ((lab *)ctx)->bad; }

int main(int argc, char **argv)
{
    static lab l = {.n = 1 << 20};
    static const pl_lab_option options[] = {
        {"size", 1, "N", "floats to sum (1..67108864, default 1048576)", KEY_SIZE},
        {"kernel", 1, "K", "run only version K: " LAB03_KERNEL_LIST " (default: all)", KEY_KERNEL},
        {0, 0, 0, 0, 0},
    };
    static const pl_lab_def me = {
        .program = "lab03",
        .summary = "Lab 03, reduction: trees in shared memory, divergence, warp shuffles, atomics.",
        .exercise = "labs/03_reduction/exercise.cu",
        .title = "lab 03 reduction",
        .options = options,
        .on_option = on_option,
        .ctx = &l,
        .max_devices = 1,
        .panes = PL_PANE_BIT(PL_PANE_PICTURE), /* the tree of each version's kernel */
        .lab = &lab03_reduction,
        .todo_names = 1,
        .setup = setup,
        .steps = run_steps,
        .report = report,
    };
    return pl_lab_main(&me, argc, argv);
}
