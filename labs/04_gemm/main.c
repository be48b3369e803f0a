/*
 * Lab 04 — GEMM: C = A·B naive (every operand from global memory), with
 * 16x16 shared-memory tiles (yours), register-tiled (128x128 tiles, 8x8
 * outputs per thread), and the same tiles by warps with float4 loads and
 * double-buffered shared memory; each one's arithmetic intensity and its
 * place under the roofline of the device.
 *
 * Usage: lab04 [--size N] [--solution] [common options] [--help]
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#ifdef PARALAB_CUBLAS
#include <cublas_v2.h>
#endif

#include "04_gemm/lab04.h"
#include "harness/harness.h"
#include "paralab/cli.h"
#include "paralab/device.h"
#include "paralab/options.h"
#include "paralab/picture.h"
#include "paralab/plural.h"
#include "paralab/step.h"
#include "paralab/viz.h"

enum { KEY_SIZE = 300, KEY_KERNEL };

/* The versions --kernel picks (cuBLAS in the CUDA build) and the narrated
 * steps: the roofline, every version, the lesson. */
#ifdef PARALAB_CUBLAS
#define LAB04_KERNELS 5
#define LAB04_KERNEL_LIST "1 naive, 2 tiled (yours), 3 register tiles, 4 warp tiles, 5 cuBLAS"
#else
#define LAB04_KERNELS 4
#define LAB04_KERNEL_LIST                                                                          \
    "1 naive, 2 tiled (yours), 3 register tiles, 4 warp tiles; 5, cuBLAS, needs the CUDA build"
#endif
#define LAB04_OURS 4 /* the versions before cuBLAS */
#define LAB04_STEPS (LAB04_KERNELS + 2)

typedef struct {
    long n, kernel; /* kernel: the one version to run, 0 for all */
    long wrong;     /* elements of your tiles' C that differ from the naive one's */
} lab;

static int on_option(int key, const char *arg, void *ctx, char *err, size_t cap)
{
    lab *l = ctx;
    const char *e = key == KEY_KERNEL ? pl_parse_long("--kernel", arg, 1, LAB04_KERNELS, &l->kernel)
                                      : pl_parse_long("--size", arg, 1, 4096, &l->n);
    if (e) snprintf(err, cap, "%s%s", e, key == KEY_KERNEL ? " (" LAB04_KERNEL_LIST ")" : "");
    return e != NULL;
}

typedef int (*gemm_fn)(float *C, const float *A, const float *B, int M, int N, int K);

/* Your tiled kernel, or the reference while it is still TODO (found at its
 * first call, on the lab's own matrices: harness/harness.h). */
static int matmul_tiled(float *C, const float *A, const float *B, int M, int N, int K)
{
    if (!pl_lab_uses_reference(0)) {
        int e = lab04_exercise.matmul_tiled(C, A, B, M, N, K);
        if (e != PL_TODO_STATUS) return e;
        pl_lab_reference(0);
    }
    return lab04_solution.matmul_tiled(C, A, B, M, N, K);
}

/* Timed runs of one version. On a real GPU one untimed run first (it loads
 * the module and warms the caches), then `reps` timed back to back; the
 * simulator's modeled clock needs neither. *ms: the mean per run. */
static cudaError_t timed(gemm_fn f, float *dC, const float *dA, const float *dB, int n, float *ms)
{
    int reps = 1;
    if (!pl_device_caps()->modeled) {
        reps = n >= 1024 ? 5 : 20;
        cudaError_t w = (cudaError_t)f(dC, dA, dB, n, n, n);
        if (w) return w;
    }
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaError_t e = cudaEventRecord(a, 0);
    for (int i = 0; i < reps && !e; i++) e = (cudaError_t)f(dC, dA, dB, n, n, n);
    if (!e) e = cudaEventRecord(b, 0);
    if (!e) e = cudaEventSynchronize(b);
    if (!e) e = cudaEventElapsedTime(ms, a, b);
    if (!e) *ms /= reps;
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return e;
}

#ifdef PARALAB_CUBLAS
/* cuBLAS is column-major: row-major C = A.B is column-major C^T = B^T.A^T,
 * so SGEMM gets B first. FP32 throughout (the default math mode: no TF32). */
static cublasHandle_t blas;
static int sgemm_cublas(float *C, const float *A, const float *B, int M, int N, int K)
{
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t s =
        cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, C, N);
    return s == CUBLAS_STATUS_SUCCESS ? (int)cudaGetLastError() : (int)cudaErrorUnknown;
}
#endif

/* The tiles picture (paralab/picture.h): the simulated GPU records the
 * loads of A and B by the block in the middle of C while the tiled kernel
 * runs (the one launch `f` makes, timed as usual), and the picture shows
 * them step by step along K. Recording needs the simulated GPU
 * (pl_device_caps()->records); without it there is no picture (*made 0)
 * and the run goes on; *made -1: the block's loads in a round spanned
 * more than a 16x16 tile of A or B (not a tiled kernel's: no picture).
 * *tile_row, *tile_col: the block's tile. */
static cudaError_t timed_recorded(gemm_fn f, float *dC, const float *dA, const float *dB, int n,
                                  float *ms, pl_picture *pic, int *made, int *tile_row,
                                  int *tile_col)
{
    int tiles = (n + 15) / 16, steps = tiles;
    *made = 0;
    *tile_row = *tile_col = tiles / 2;
    pl_record_config c = {
        /* A and B each: a load per thread per step, 256 threads; room for
         * twice that (a kernel that loads more is cut: the picture says so) */
        .max_accesses = (size_t)4 * 256 * steps + 4096,
        .nranges = 2,
        .block_first = (unsigned)(*tile_row * tiles + *tile_col),
        .block_count = 1,
    };
    c.range[0].lo = dA;
    c.range[0].len = (size_t)n * n * sizeof(float);
    c.range[1].lo = dB;
    c.range[1].len = (size_t)n * n * sizeof(float);
    int recording = pl_device_caps()->records && pl_device_record_begin(&c) == 0;
    cudaError_t e = timed(f, dC, dA, dB, n, ms);
    if (!recording) return e;
    pl_kernel_record rec;
    if (pl_device_record_end(&rec) == 0) {
        if (!e && pl_picture_tiles(&rec, n, n, n, 16, *tile_row, *tile_col, pic) == 0) *made = 1;
        /* a round whose loads span more than a tile is no tiles picture (picture.h) */
        if (*made && pl_picture_check(pic, NULL, 0)) {
            pl_picture_free(pic);
            *made = -1;
        }
        pl_kernel_record_free(&rec);
    }
    return e;
}

/* The roofline picture: the device's roof (pl_device_peaks) and a point
 * per kernel run, at the FLOP per byte its declared FLOPs and bytes give
 * and the FLOP/s its time gave. 0, or -1 (no picture). */
static int roofline(const struct cudaDeviceProp *prop, double peak, double bw, int np,
                    const double *ai, const double *gflops, const char *const *names, int mine,
                    int first, pl_picture *pic)
{
    char whose[32];
    pl_hw_model m;
    if (pl_device_model(&m) == 0)
        snprintf(whose, sizeof whose, "simulated %.14s preset", m.name);
    else
        snprintf(whose, sizeof whose, "%.31s", prop->name);
    double fl[8];
    int k = 0, hl = -1;
    double a[8];
    const char *nm[8];
    int num[8]; /* each point's number: its kernel's (first for ai[0]) */
    for (int i = 0; i < np && k < 8; i++) {
        if (!(gflops[i] > 0)) continue; /* not run, or no time */
        if (i == mine) hl = k;
        a[k] = ai[i];
        fl[k] = gflops[i] * 1e9;
        num[k] = first + i;
        nm[k++] = names[i];
    }
    if (peak <= 0 || bw <= 0 || k == 0) return -1;
    pl_picture_free(pic); /* a step before may have drawn one */
    return pl_picture_roofline_numbered(whose, peak, bw, k, a, fl, nm, num, hl, pic);
}

static int run_steps(pl_rank *r)
{
    lab *l = r->arg;
    int n = (int)l->n, status = 1;
    size_t bytes = (size_t)n * n * sizeof(float);
    float *A = malloc(bytes), *B = malloc(bytes), *ref = malloc(bytes), *got = malloc(bytes);
    float *dA = NULL, *dB = NULL, *dC = NULL;
    pl_picture tiles_pic = {0}, roof_pic = {0};
    if (!A || !B || !ref || !got) {
        snprintf(r->error, sizeof r->error, "out of host memory for --size %d", n);
        goto out;
    }
    unsigned s = 7;
    for (size_t i = 0; i < (size_t)n * n; i++) {
        s = s * 1664525u + 1013904223u;
        A[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
        s = s * 1664525u + 1013904223u;
        B[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
    }
    PL_LAB_CK(cudaMalloc((void **)&dA, bytes));
    PL_LAB_CK(cudaMalloc((void **)&dB, bytes));
    PL_LAB_CK(cudaMalloc((void **)&dC, bytes));
    PL_LAB_CK(cudaMemcpy(dA, A, bytes, cudaMemcpyHostToDevice));
    PL_LAB_CK(cudaMemcpy(dB, B, bytes, cudaMemcpyHostToDevice));
    struct cudaDeviceProp prop;
    PL_LAB_CK(cudaGetDeviceProperties(&prop, 0));
    double peak = 0, bw = 0;
    PL_LAB_CK(pl_device_peaks(0, &peak, &bw));
    double flop = 2.0 * n * n * n;
    if (peak > 0)
        PL_LAB_STEP(
            "C = A.B for %dx%d matrices: %.2f GFLOP. The roofline of the %s: %.1f TFLOP/s at "
            "most, and %.2f TB/s of memory, so a kernel that does fewer than %.1f FLOP per byte "
            "it moves is memory-bound.",
            n, n, flop / 1e9, prop.name, peak / 1e12, bw / 1e12, peak / bw);
    else
        PL_LAB_STEP("C = A.B for %dx%d matrices: %.2f GFLOP on %s (measured).", n, n, flop / 1e9,
                    prop.name);
    static const char *names[] = {
        "naive (one thread per element of C)", "shared-memory tiles of 16x16 (yours)",
        "register tiles (128x128 per block, 8x8 per thread)",
        "warp tiles (128x128 per block, 64x32 per warp, 4x4 sub-tiles per lane), float4 loads, "
        "two shared buffers"};
    gemm_fn fns[LAB04_OURS] = {lab04_matmul_naive, matmul_tiled, lab04_matmul_registers,
                               lab04_matmul_warptiles};
    double moved[LAB04_OURS] = {lab04_bytes_naive(n, n, n), lab04_bytes_tiled(n, n, n, 16),
                                lab04_bytes_tiled(n, n, n, 128), lab04_bytes_tiled(n, n, n, 128)};
    double gf[LAB04_OURS + 1] = {0}, ais[LAB04_OURS + 1] = {0};
    /* the roofline's names (cuBLAS in the CUDA build: its bytes are not known, so its point sits
     * at the fewest bytes C = A.B can move, each matrix once: an upper bound on its intensity) */
    const char *short_names[LAB04_OURS + 1] = {"naive", "tiles 16x16 (yours)", "register tiles",
                                               "warp tiles", "cuBLAS (fewest bytes)"};
    for (int v = 0; v < LAB04_OURS; v++) {
        /* the naive kernel always runs: its C is the reference */
        int show = !l->kernel || l->kernel == v + 1;
        if (!show && v) continue;
        if (show) PL_LAB_BEGIN();
        float ms = 0;
        int pic = 0, tr = 0, tc = 0;
        if (v == 1)
            PL_LAB_CK(timed_recorded(fns[v], dC, dA, dB, n, &ms, &tiles_pic, &pic, &tr, &tc));
        else
            PL_LAB_CK(timed(fns[v], dC, dA, dB, n, &ms));
        PL_LAB_CK(cudaMemcpy(v ? got : ref, dC, bytes, cudaMemcpyDeviceToHost));
        long wrong = 0;
        if (v)
            for (size_t i = 0; i < (size_t)n * n; i++) {
                double scale = 1e-6 + 1e-5 * n * 0.25; /* |a b| <= 1/4 */
                wrong += !(fabs((double)got[i] - ref[i]) <= scale);
            }
        if (v == 1) l->wrong = wrong;
        double gflops = ms > 0 ? flop / (ms * 1e-3) / 1e9 : 0, ai = flop / moved[v];
        gf[v] = gflops;
        ais[v] = ai;
        double roof = peak > 0 ? fmin(peak, bw * ai) / 1e9 : 0;
        if (v == 1 && pl_lab_is_todo(0))
            names[1] = "shared-memory tiles of 16x16 (the reference: yours is still TODO)";
        if (v == 1 && pl_lab_is_todo(0)) short_names[1] = "tiles 16x16 (reference)";
        if (!show) continue;
        char seen[200] = "";
        if (pic < 0)
            snprintf(seen, sizeof seen,
                     ". No tiles picture: block (%d, %d) loaded more than a 16x16 tile of A or B "
                     "between two barriers",
                     tr, tc);
        if (pic > 0) {
            pl_lab_picture(r, &tiles_pic);
            snprintf(seen, sizeof seen,
                     ". The picture: the tiles of A and B block (%d, %d) loaded into shared "
                     "memory, step by step along K (the simulated GPU's record of its loads)",
                     tr, tc);
        }
        if (l->kernel && roofline(&prop, peak, bw, 1, &ais[v], &gf[v], &short_names[v],
                                  v == 1 ? 0 : -1, v + 1, &roof_pic) == 0)
            pl_lab_picture(r, &roof_pic);
        /* big tiles, few blocks: a small matrix leaves most SMs idle */
        char few[320] = "";
        long tile = v >= 2 ? 128 : 16, blocks = ((n + tile - 1) / tile) * ((n + tile - 1) / tile);
        if (v > 0 && blocks < prop.multiProcessorCount)
            snprintf(few, sizeof few,
                     strcmp(pl_clock_name(), "modeled") == 0
                         ? "; only %ld block%s of %ldx%ld for %d SMs: on a real GPU %ld SMs would "
                           "get none and wait, but the modeled clock charges no occupancy (its "
                           "roof is the whole GPU's), so this time does not show it"
                         : "; only %ld block%s of %ldx%ld for %d SMs: %ld SMs get none and wait "
                           "(try a larger --size)",
                     blocks, pl_s(blocks), tile, tile, prop.multiProcessorCount,
                     (long)prop.multiProcessorCount - blocks);
        /* the warp tiles: the register tiles' FLOPs and bytes, fewer instructions and waits */
        char same[240] = "";
        if (v == 3 && pl_device_caps()->modeled)
            snprintf(same, sizeof same,
                     ". The register tiles' FLOPs and bytes, so the modeled clock gives it their "
                     "time: what it saves (load instructions, a barrier per step, waiting for "
                     "memory) only a real GPU shows");
        else if (v == 3 && gf[2] > 0)
            snprintf(same, sizeof same,
                     ". The register tiles' FLOPs and bytes at %.2fx their speed: fewer load "
                     "instructions, a barrier per step, loads in flight during the arithmetic",
                     gflops / gf[2]);
        if (peak > 0)
            PL_LAB_STEP(
                "%s: %.1f us (%s), %.0f GFLOP/s. It moves %.1f MB: %.*f FLOP per byte, so its "
                "roof is %.0f GFLOP/s (%s)%s%s%s%s%s.",
                names[v], ms * 1e3, pl_clock_name(), gflops, moved[v] / 1e6, ai < 1 ? 2 : 1, ai,
                roof, bw * ai < peak ? "memory-bound" : "compute-bound",
                gflops > 1.05 * roof ? "; above that roof: the L1 and L2 caches served operands "
                                       "the count charges to device memory"
                                     : "",
                few, wrong ? "; SOME ELEMENTS DIFFER from the naive result" : "", same, seen);
        else
            PL_LAB_STEP("%s: %.1f us (%s), %.0f GFLOP/s%s%s%s%s.", names[v], ms * 1e3,
                        pl_clock_name(), gflops, few,
                        wrong ? "; SOME ELEMENTS DIFFER from the naive result" : "", same, seen);
    }
#ifdef PARALAB_CUBLAS
    if (!l->kernel || l->kernel == LAB04_OURS + 1) {
        PL_LAB_BEGIN();
        if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
            snprintf(r->error, sizeof r->error, "cublasCreate failed");
            goto out;
        }
        float ms = 0;
        cudaError_t e = timed(sgemm_cublas, dC, dA, dB, n, &ms);
        if (!e) e = cudaMemcpy(got, dC, bytes, cudaMemcpyDeviceToHost);
        cublasDestroy(blas);
        PL_LAB_CK(e);
        long wrong = 0;
        for (size_t i = 0; i < (size_t)n * n; i++)
            wrong += !(fabs((double)got[i] - ref[i]) <= 1e-6 + 1e-5 * n * 0.25);
        double bar = ms > 0 ? flop / (ms * 1e-3) / 1e9 : 0;
        gf[LAB04_OURS] = bar;
        ais[LAB04_OURS] = flop / (4.0 * 3 * n * n);
        if (l->kernel && roofline(&prop, peak, bw, 1, &ais[LAB04_OURS], &gf[LAB04_OURS],
                                  &short_names[LAB04_OURS], -1, LAB04_OURS + 1, &roof_pic) == 0)
            pl_lab_picture(r, &roof_pic);
        char share[200] = "";
        if (bar > 0 && !l->kernel)
            snprintf(share, sizeof share,
                     " %s reaches %.1f %% of it, the register tiles %.1f %%, the warp tiles "
                     "%.1f %%.",
                     pl_lab_is_todo(0) ? "The reference's (tiles of 16; yours are still TODO)"
                                       : "Yours (tiles of 16)",
                     100.0 * gf[1] / bar, 100.0 * gf[2] / bar, 100.0 * gf[3] / bar);
        PL_LAB_STEP("cuBLAS SGEMM, the bar: %.1f us (measured), %.0f GFLOP/s%s.%s", ms * 1e3, bar,
                    wrong ? "; SOME ELEMENTS DIFFER from the naive result" : "", share);
    }
#endif
    if (!l->kernel) {
        PL_LAB_BEGIN();
        char seen[400] = "";
        /* the modeled clock puts the warp tiles on the register tiles' point: one point for both */
        double pts[LAB04_OURS + 1];
        const char *pt_names[LAB04_OURS + 1];
        memcpy(pts, gf, sizeof pts);
        memcpy(pt_names, short_names, sizeof pt_names);
        int merged = gf[3] == gf[2] && ais[3] == ais[2];
        if (merged) {
            pts[3] = 0; /* not drawn */
            pt_names[2] = "register and warp tiles";
        }
        if (roofline(&prop, peak, bw, LAB04_KERNELS, ais, pts, pt_names, 1, 1, &roof_pic) == 0) {
            pl_lab_picture(r, &roof_pic);
            snprintf(seen, sizeof seen,
                     " The picture: the roofline of the %s, each kernel at the FLOP per byte of "
                     "the FLOPs and bytes it declares (what its algorithm moves: counted, not "
                     "measured) and the FLOP/s of its %s time, %s highlighted%s.",
                     pl_device_model(&(pl_hw_model){0}) == 0 ? "simulated preset (its datasheet)"
                                                             : "GPU (from its attributes)",
                     pl_clock_name(), pl_lab_is_todo(0) ? "the reference's tiles" : "yours",
                     merged ? ", the register and warp tiles one point (3)" : "");
        }
        PL_LAB_STEP(
            "Each tile loaded into shared memory (or registers) is used 16 (or 128) times: the "
            "bytes moved per FLOP drop by that factor, and the kernel climbs the roofline's "
            "slope towards the compute roof. Past that the bytes stay and the instructions go: "
            "the warp tiles sit at the register tiles' intensity, and can come closer to the roof "
            "only on a GPU that pays for instructions and waits.%s Here: register tiles ran "
            "%.1fx as fast as naive, warp tiles %.1fx, %s %.1fx.",
            seen, gf[0] > 0 ? gf[2] / gf[0] : 0, gf[0] > 0 ? gf[3] / gf[0] : 0,
            pl_lab_is_todo(0) ? "the reference's tiles (yours are still TODO)" : "your tiles",
            gf[0] > 0 ? gf[1] / gf[0] : 0);
    }
    status = 0;
out:
    pl_picture_free(&tiles_pic);
    pl_picture_free(&roof_pic);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    free(A);
    free(B);
    free(ref);
    free(got);
    return status;
}

/* The title; the steps: the roofline, every version, the lesson (with
 * --kernel, the roofline and one version). */
static int setup(void *ctx, char *err, size_t cap)
{
    lab *l = ctx;
    (void)err, (void)cap;
    printf("paralab lab 04 — GEMM (%s clock)\n", pl_clock_name());
    if (pl_device_caps()->modeled && l->n > 1024) /* the emulator runs every multiply-add here */
        printf(
            "  note: --size %ld on the simulated GPU is %.0f times the work of --size 1024, every "
            "multiply-add run on this CPU: expect a long run (q or Ctrl-C stops it)\n",
            l->n, (double)l->n * l->n * l->n / (1024.0 * 1024.0 * 1024.0));
    return l->kernel ? 2 : LAB04_STEPS;
}

static int report(void *ctx) { return ((lab *)ctx)->wrong != 0; }

int main(int argc, char **argv)
{
    static lab l = {.n = 512};
    static const pl_lab_option options[] = {
        {"size", 1, "N", "matrix size N (N x N times N x N; 1..4096, default 512)", KEY_SIZE},
        {"kernel", 1, "K", "run only version K: " LAB04_KERNEL_LIST " (default: all)", KEY_KERNEL},
        {0, 0, 0, 0, 0},
    };
    static const pl_lab_def me = {
        .program = "lab04",
        .summary = "Lab 04, GEMM: naive, shared-memory tiles, register tiles, warp tiles, and the "
                   "roofline.",
        .exercise = "labs/04_gemm/exercise.cu",
        .title = "lab 04 gemm",
        .options = options,
        .on_option = on_option,
        .ctx = &l,
        .max_devices = 1,
        .lab = &lab04_gemm,
        .panes = PL_PANE_BIT(PL_PANE_PICTURE),
        .setup = setup,
        .steps = run_steps,
        .report = report,
    };
    return pl_lab_main(&me, argc, argv);
}
