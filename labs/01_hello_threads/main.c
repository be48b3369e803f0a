/*
 * Lab 01 — hello threads: the grid / block / thread hierarchy.
 *
 * A kernel runs as a grid of blocks of threads. Each thread finds its element
 * from blockIdx, blockDim and threadIdx; the grid must cover every element,
 * and the threads of the last block that fall past the end (the tail) must do
 * nothing. This program runs your vector add (or the reference, until you
 * have written it), draws its grid of blocks on the simulated SMs and
 * which thread wrote which element (the picture pane; text without the
 * UI), shows which block handled which elements, shows the error CUDA
 * gives for a block of 1025 threads, and checks your code.
 *
 * Usage: lab01 [--size N] [--block B] [--solution] [common options] [--help]
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "paralab/cli.h"
#include "paralab/cuda_check.h"
#include "paralab/device.h"
#include "paralab/options.h"
#include "paralab/picture.h"
#include "paralab/step.h"
#include "paralab/viz.h" /* PL_PANE_PICTURE */
#include "paralab/world.h"

#include "01_hello_threads/lab01.h"
#include "harness/harness.h"

enum { KEY_SIZE = 300, KEY_BLOCK };

typedef struct lab {
    int n, block;               /* --size, --block */
    struct cudaDeviceProp prop; /* device 0 */
    int wrong, ran, fault;      /* what the steps found */
} lab;

/* The lab's own options: --size, --block. */
static int on_option(int key, const char *text, void *ctx, char *err, size_t cap)
{
    lab *a = ctx;
    long v;
    const char *e = NULL;
    if (key == KEY_SIZE && !(e = pl_parse_long("--size", text, 1, INT_MAX / 2, &v)))
        a->n = (int)v;
    else if (key == KEY_BLOCK && !(e = pl_parse_long("--block", text, 1, 1024, &v)))
        a->block = (int)v;
    if (e) snprintf(err, cap, "%s", e);
    return e != NULL;
}

/* Your two functions, or the reference where one is still TODO (found at
 * its first call: harness/harness.h). */
static int grid_size(int n, int block)
{
    if (!pl_lab_uses_reference(0)) {
        int g = lab01_exercise.grid_size(n, block);
        if (g != PL_TODO_STATUS) return g;
        pl_lab_reference(0);
    }
    return lab01_solution.grid_size(n, block);
}

static cudaError_t vector_add(const float *a, const float *b, float *c, int n, int block)
{
    if (!pl_lab_uses_reference(1)) {
        int r = lab01_exercise.vector_add(a, b, c, n, block);
        if (r != PL_TODO_STATUS) return (cudaError_t)r;
        pl_lab_reference(1);
    }
    return (cudaError_t)lab01_solution.vector_add(a, b, c, n, block);
}

/* The text picture: one character per `per` elements, the character naming
 * the block that handled them (0-9a-z, repeating). */
static void draw_blocks(const int *block_of, int n, int block, int grid)
{
    const char *digits = "0123456789abcdefghijklmnopqrstuvwxyz";
    int cols = n < 64 ? n : 64, per = (n + cols - 1) / cols;
    printf("  elements 0..%d, one character = %d element%s, the character is the block index "
           "(mod 36):\n  ",
           n - 1, per, per == 1 ? "" : "s");
    for (int i = 0; i < n; i += per) putchar(digits[block_of[i] % 36]);
    putchar('\n');
    for (int g = 0; g < grid; g++) {
        if (grid > 6 && g == 3) {
            printf("  ... %d more blocks ...\n", grid - 5);
            g = grid - 3;
            continue;
        }
        long first = (long)g * block, last = first + block - 1;
        if (last > n - 1) last = n - 1;
        int busy = (int)(last - first + 1);
        printf("  block %-4d threads 0..%-4d elements %ld..%ld", g, block - 1, first, last);
        if (busy < block) printf("  (%d idle threads: the tail)", block - busy);
        putchar('\n');
    }
}

static const char *plural(long n) { return n == 1 ? "" : "s"; }

/* Refuses a size whose arrays cannot fit: 4 host arrays and 4 device arrays
 * of n elements (on the simulated GPU device memory is host memory too). */
static int fits_in_memory(int n, char *err, size_t cap)
{
    double gib = 1024.0 * 1024.0 * 1024.0, host = 16.0 * n, device = 16.0 * n;
    double avail = (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    size_t used = 0, total = 0;
    if (pl_device_memory_is_host())
        host += device;
    else if (pl_device_memory(0, &used, &total) == 0 && device > (double)(total - used)) {
        snprintf(err, cap, "--size %d needs %.1f GiB of device memory; %.1f GiB are free", n,
                 device / gib, (double)(total - used) / gib);
        return 0;
    }
    if (host > avail) {
        snprintf(err, cap,
                 "--size %d needs %.1f GiB of memory; this machine has %.1f GiB available", n,
                 host / gib, avail / gib);
        return 0;
    }
    return 1;
}

/* The element map is drawn for sizes up to this (paralab/picture.h's
 * limit on the elements a picture holds); past it, only the blocks. */
#define PICTURE_MAX_N (1 << 20)

/* Builds the two pictures of a record and notes them for step 2; returns
 * 2 when the element map was among them, 1 the blocks alone, 0 none. */
static int note_pictures(pl_rank *r, const pl_kernel_record *rec, int n)
{
    pl_picture p;
    int noted = 0;
    if (pl_picture_blocks(rec, &p) == 0) {
        pl_lab_picture(r, &p);
        pl_picture_free(&p);
        noted = 1;
    }
    if (rec->access && !rec->truncated && pl_picture_elements(rec, n, sizeof(float), &p) == 0) {
        pl_lab_picture(r, &p);
        pl_picture_free(&p);
        noted = 2;
    }
    return noted;
}

/* Step 2's pictures (on the simulated GPU: pl_device_caps()->records; a
 * real GPU draws none): your kernel runs once more, recorded, before the
 * run the step reports, on arrays of `slots` elements, room for every
 * thread of the grid (grid x block >= n). A missing bound check then
 * shows as stores past element n - 1 (the element map's '!') instead of
 * faulting: with arrays of exactly n elements, as the run below and the
 * checks allocate, the emulator stops such a kernel at its first access
 * past the end (a read of a[n]), before any store past it could be seen.
 * The values added are not looked at (only which thread stored where), so
 * nothing is copied in. Returns the recorded run's error (cudaSuccess, or
 * the fault of a kernel that reached past even that room); without room
 * for the arrays, no picture and cudaSuccess. */
static cudaError_t picture_run(pl_rank *r, int n, int block, int grid, int *noted, size_t *room)
{
    long blocks = (n + (long)block - 1) / block;
    if (grid > blocks) blocks = grid;
    size_t slots = (size_t)blocks * (size_t)block, bytes = slots * sizeof(float);
    *room = slots;
    float *pa = NULL, *pb = NULL, *pc = NULL;
    cudaError_t e = cudaMalloc((void **)&pa, bytes);
    if (e == cudaSuccess) e = cudaMalloc((void **)&pb, bytes);
    if (e == cudaSuccess) e = cudaMalloc((void **)&pc, bytes);
    if (e != cudaSuccess) { /* no room for the pictures: the step goes on without them */
        cudaFree(pa);
        cudaFree(pb);
        return cudaSuccess;
    }
    pl_record_config cfg = {.blocks = 1, .nranges = 1};
    /* one store per thread, loads of c by a kernel that reads it too, slack */
    cfg.max_accesses = 2 * slots + 4096;
    if (cfg.max_accesses > (size_t)1 << 24) cfg.max_accesses = (size_t)1 << 24;
    cfg.range[0].lo = pc;
    cfg.range[0].len = bytes;
    if (pl_device_record_begin(&cfg) == 0) {
        e = vector_add(pa, pb, pc, n, block);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        pl_kernel_record rec = {0};
        if (pl_device_record_end(&rec) == 0 && e == cudaSuccess) *noted = note_pictures(r, &rec, n);
        pl_kernel_record_free(&rec);
    }
    cudaFree(pa);
    cudaFree(pb);
    cudaFree(pc);
    return e;
}

/* Under step 2's narration: where its pictures came from. */
static void say_pictures(int noted, size_t room, int n)
{
    if (noted == 2)
        printf("    pictures: the kernel ran once more, recorded, on arrays of %zu element%s\n"
               "    (room for every thread): a store past element %d shows as ! there\n",
               room, room == 1 ? "" : "s", n - 1);
    else if (noted == 1)
        printf("    picture: this run's blocks on the SMs (the element map: --size up to %d)\n",
               PICTURE_MAX_N);
}

#define STEP(...)                                                                                  \
    do {                                                                                           \
        if (pl_step(r, __VA_ARGS__)) return 1;                                                     \
    } while (0)
/* Steps 2 to 4 report what their work found: each begins before its work,
 * so that the work shows under its own narration (paralab/step.h). */
#define BEGIN()                                                                                    \
    do {                                                                                           \
        if (pl_step_begin(r)) return 1;                                                            \
    } while (0)
#define CK(call)                                                                                   \
    do {                                                                                           \
        if (pl_cuda_note((cudaError_t)(call), #call, 1, r->error, sizeof r->error)) return 1;      \
    } while (0)

/* The lab's four steps, on rank 0 of a one-rank world. */
static int run_steps(pl_rank *r)
{
    lab *L = r->arg;
    int n = L->n, block = L->block;
    /* Step 1: the launch configuration. */
    int grid = grid_size(n, block);
    STEP("grid size: %d element%s, %d thread%s per block -> %d block%s (%lld thread%s)", n,
         plural(n), block, plural(block), grid, plural(grid), (long long)grid * block,
         plural((long)grid * block));

    /* Step 2: the kernel. */
    BEGIN();
    size_t bytes = (size_t)n * sizeof(float);
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    int *block_of = malloc((size_t)n * sizeof(int));
    if (!a || !b || !c || !block_of) {
        free(a);
        free(b);
        free(c);
        free(block_of);
        snprintf(r->error, sizeof r->error, "out of host memory for %d elements", n);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = 2.0f * (float)i;
    }
    float *da, *db, *dc;
    int *dblock;
    cudaEvent_t t0, t1;
    CK(cudaMalloc((void **)&da, bytes));
    CK(cudaMalloc((void **)&db, bytes));
    CK(cudaMalloc((void **)&dc, bytes));
    CK(cudaMalloc((void **)&dblock, (size_t)n * sizeof(int)));
    CK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
    CK(cudaMemset(dc, 0xff, bytes)); /* NaN everywhere: an unwritten element shows */
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));
    /* the pictures: a recorded run on roomier arrays (picture_run) up to
     * PICTURE_MAX_N elements; past it, this run's blocks alone */
    int records = pl_device_caps()->records, record_here = records && n > PICTURE_MAX_N;
    int noted = 0;
    size_t room = 0;
    cudaError_t e =
        records && !record_here ? picture_run(r, n, block, grid, &noted, &room) : cudaSuccess;
    pl_record_config blocks_only = {.blocks = 1};
    if (record_here && pl_device_record_begin(&blocks_only)) record_here = 0;
    if (e == cudaSuccess) e = cudaEventRecord(t0, 0);
    if (e == cudaSuccess) e = vector_add(da, db, dc, n, block);
    if (e == cudaSuccess) e = cudaEventRecord(t1, 0);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (record_here) {
        pl_kernel_record rec = {0};
        if (pl_device_record_end(&rec) == 0 && e == cudaSuccess) noted = note_pictures(r, &rec, n);
        pl_kernel_record_free(&rec);
    }
    L->ran = e == cudaSuccess;
    if (!L->ran) {
        /* the emulator's report names the kernel, block and thread; the
         * world's stream then fails with the same sticky error, and main
         * resets the device for the checks */
        L->fault = 1;
        STEP("vector add c[i] = a[i] + b[i] failed: %s (%s)", cudaGetErrorName(e),
             cudaGetErrorString(e));
        if (*pl_fault_report()) printf("    %s\n", pl_fault_report());
        say_pictures(noted, room, n);
    } else {
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, t0, t1));
        CK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
        int first_wrong = -1, wrong = 0;
        for (int i = 0; i < n; i++)
            if (c[i] != a[i] + b[i] && wrong++ == 0) first_wrong = i;
        L->wrong = wrong;
        const char *clock = pl_device_caps()->modeled ? "modeled on a " : "measured on ";
        const char *gpu = pl_device_caps()->modeled ? pl_device_label() : L->prop.name;
        STEP("vector add c[i] = a[i] + b[i]: %d of %d element%s correct; kernel time %.4f ms "
             "(%s%s)",
             n - wrong, n, plural(n), ms, clock, gpu);
        if (wrong && c[first_wrong] != c[first_wrong])
            printf("    first wrong: c[%d] was never written (expected %g)\n", first_wrong,
                   a[first_wrong] + b[first_wrong]);
        else if (wrong)
            printf("    first wrong: c[%d] = %g, expected %g\n", first_wrong, c[first_wrong],
                   a[first_wrong] + b[first_wrong]);
        say_pictures(noted, room, n);

        /* Step 3: which block runs which elements, with the grid size from
         * step 1 (the lab's own kernel records blockIdx.x per element). */
        BEGIN();
        CK(lab01_who_ran(dblock, n, block, grid));
        CK(cudaMemcpy(block_of, dblock, (size_t)n * sizeof(int), cudaMemcpyDeviceToHost));
        STEP("which block handles which elements (%d block%s of %d):", grid, plural(grid), block);
        draw_blocks(block_of, n, block, grid);

        /* Step 4: the limit. */
        BEGIN();
        e = vector_add(da, db, dc, n < 1025 ? n : 1025, 1025);
        STEP("a block of 1025 threads: %s (%s) — a block holds at most %d threads",
             cudaGetErrorName(e), cudaGetErrorString(e), L->prop.maxThreadsPerBlock);
    }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dblock);
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    free(a);
    free(b);
    free(c);
    free(block_of);
    return 0;
}

/* The sizes must fit; the title and device 0; four steps. */
static int setup(void *ctx, char *err, size_t cap)
{
    lab *l = ctx;
    if (!fits_in_memory(l->n, err, cap)) return -1;
    cudaCheck(cudaSetDevice(0));
    cudaCheck(cudaGetDeviceProperties(&l->prop, 0));
    printf("paralab lab 01 — hello threads\n");
    printf("device 0: %s, %d SMs, at most %d threads per block\n\n", l->prop.name,
           l->prop.multiProcessorCount, l->prop.maxThreadsPerBlock);
    return 4;
}

/* A kernel's fault is part of the lesson: step 2 narrates it, and the
 * checks still run. */
static int fault_shown(void *ctx) { return ((lab *)ctx)->fault; }

static int report(void *ctx)
{
    lab *l = ctx;
    return l->wrong || !l->ran;
}

int main(int argc, char **argv)
{
    static lab l = {.n = 1000, .block = 256};
    static const pl_lab_option options[] = {
        {"size", 1, "N", "elements to add (1..1073741823, default 1000)", KEY_SIZE},
        {"block", 1, "B", "threads per block (1..1024, default 256)", KEY_BLOCK},
        {0, 0, 0, 0, 0},
    };
    static const pl_lab_def me = {
        .program = "lab01",
        .summary = "Lab 01, hello threads: grid, blocks, threads, the global index and the tail.",
        .exercise = "labs/01_hello_threads/exercise.cu",
        .title = "lab 01 hello threads",
        .options = options,
        .on_option = on_option,
        .solution_help = "run the reference solution instead of your exercise",
        .ctx = &l,
        .max_devices = 1,
        .lab = &lab01_hello_threads,
        .panes = PL_PANE_BIT(PL_PANE_PICTURE), /* blocks on SMs, the element map */
        .setup = setup,
        .steps = run_steps,
        .fault_shown = fault_shown,
        .report = report,
    };
    return pl_lab_main(&me, argc, argv);
}
