/*
 * paralab-bench — benchmarks that report ratios against a reference measured
 * in the same run (never pass/fail on time: shared machines are noisy).
 *
 *   paralab-bench simt   the SIMT emulator vs a plain C loop doing the same
 *                        arithmetic (build/sim). Goals on a 2-core CI box:
 *                        kernels without barriers within 10x of the loop;
 *                        kernels with barriers under 30 ns per thread per
 *                        barrier.
 *   paralab-bench gpu    the same kernels on a real GPU (build/cuda), timed
 *                        with CUDA events, with GB/s beside the loop's.
 *
 * Each measurement is the best of --repeat runs (default 3).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "kernels.h"
#include "paralab/clock.h"
#include "paralab/cli.h"
#include "paralab/device.h"
#include "paralab/cuda_check.h"

typedef struct {
    const char *name;
    int n;         /* elements = CUDA threads */
    int barriers;  /* per thread: __syncthreads() or warp operations */
    double kernel; /* seconds, best of repeats */
    double loop;   /* seconds, the plain C loop */
    double max_err;
} row;

static volatile float sink;

/* The plain C loops: the same arithmetic, no emulation. */
static void loop_add(const float *a, const float *b, float *c, int n)
{
    for (int i = 0; i < n; i++) c[i] = a[i] + b[i];
}

static void loop_block_sums(const float *in, float *out, int n, int per)
{
    for (int b = 0; b < (n + per - 1) / per; b++) {
        float s = 0;
        for (int i = b * per; i < n && i < (b + 1) * per; i++) s += in[i];
        out[b] = s;
    }
}

typedef cudaError_t (*reduce_fn)(const float *, float *, int);

static double time_kernel_add(const float *da, const float *db, float *dc, int n, int repeat)
{
    double best = 1e30;
    for (int r = 0; r < repeat; r++) {
        cudaCheck(cudaDeviceSynchronize());
        double t = pl_now();
        cudaCheck(bk_vector_add(da, db, dc, n));
        cudaCheck(cudaDeviceSynchronize());
        t = pl_now() - t;
        if (t < best) best = t;
    }
    return best;
}

static double time_kernel_reduce(reduce_fn fn, const float *din, float *dout, int n, int repeat)
{
    double best = 1e30;
    for (int r = 0; r < repeat; r++) {
        cudaCheck(cudaDeviceSynchronize());
        double t = pl_now();
        cudaCheck(fn(din, dout, n));
        cudaCheck(cudaDeviceSynchronize());
        t = pl_now() - t;
        if (t < best) best = t;
    }
    return best;
}

static double time_loop(void (*body)(void *), void *arg, int repeat)
{
    double best = 1e30;
    for (int r = 0; r < repeat; r++) {
        double t = pl_now();
        body(arg);
        t = pl_now() - t;
        if (t < best) best = t;
    }
    return best;
}

typedef struct {
    const float *a, *b;
    float *c;
    int n, per;
} loop_arg;
static void run_add(void *p)
{
    loop_arg *l = p;
    loop_add(l->a, l->b, l->c, l->n);
    sink = l->c[l->n / 2];
}
static void run_sums(void *p)
{
    loop_arg *l = p;
    loop_block_sums(l->a, l->c, l->n, l->per);
    sink = l->c[0];
}

static double max_rel_err(const float *got, const float *want, int n)
{
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double d = got[i] - want[i], w = want[i] < 0 ? -want[i] : want[i];
        double e = (d < 0 ? -d : d) / (w + 1.0);
        if (e > worst) worst = e;
    }
    return worst;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: paralab-bench simt|gpu|trace|comm|train|viz|labs|dp|tp|pp|hybrid|zero\n"
               "                     [--repeat R] [--scale S] [--iters K]\n"
               "  simt      the SIMT emulator vs a plain C loop (simulated build)\n"
               "  gpu       the same kernels on a real GPU (CUDA build)\n"
               "  trace     the cost of recording a trace event (8 producers)\n"
               "  comm      collectives of the local engine, nccl-tests style (to 64 MiB),\n"
               "            vs memcpy, and vs Open MPI when $PARALAB_MPI_ALLREDUCE names\n"
               "            the program bench/mpi/allreduce.c builds (make bench does);\n"
               "            under mpirun in the MPI build (build/sim-mpi): all-reduce at\n"
               "            4 KiB..16 MiB, the MPI engine (a rank a process) and the local\n"
               "            engine (process 0's threads) against MPI_Allreduce, same run,\n"
               "            median of R repetitions (--repeat, default 9 there) of K calls\n"
               "            (--iters; --scale S: sizes up to 16 MiB / 2^S); under mpirun in\n"
               "            another build, process 0 alone runs the tables and says so\n"
               "  train     the digits MLP's training step on one device vs plain C, and\n"
               "            the tiled matmul vs a C triple loop (256^3)\n"
               "  viz       rendering one frame of the visualiser (200x60, 8 ranks, 100k and\n"
               "            10M events)\n"
               "  labs      each lab's default run (labNN --no-viz) timed: wall and CPU time\n"
               "  dp        Lab 07's data-parallel step, N = 1, 2, 4, 8, overlap on and off,\n"
               "            against the alpha-beta model, and the block model's (h 256, 8\n"
               "            blocks) on ZeRO's engine at N = 8: how much of the gradient\n"
               "            communication overlap hides (simulated build; needs make data)\n"
               "  tp        the block model's step on t = 1, 2, 4, 8 tensor-parallel ranks of\n"
               "            simulated H100s, with and without sequence parallelism: modeled\n"
               "            step, communication share, vs t = 1, wall time (simulated build)\n"
               "  pp        every pipeline schedule on 4 stages, 8 micro-batches: the bubble\n"
               "            and the step on the modeled clock against the formulas, uniform\n"
               "            stages and the block model; wall time (simulated build)\n"
               "  hybrid    every (dp, tp, pp) of 8 ranks of the block model (h 64, 8 blocks,\n"
               "            1F1B) on one node of 8 H100s and on two nodes of 4: the modeled\n"
               "            step, the bubble, the bytes of each group and those that crossed\n"
               "            nodes, which wins and why (simulated build; --scale S: h 64 / 2^S)\n"
               "  zero      ZeRO stages 0-3 of the block model on N = 1, 2, 4, 8 ranks: per-rank\n"
               "            memory and traffic (measured) against the formulas, the modeled\n"
               "            step per stage and N (simulated build; --scale S: the wide model's\n"
               "            h 256 / 2^S)\n"
               "  --repeat  runs per measurement, the best is kept (default 3)\n"
               "  --iters   comm under mpirun: calls per timed repetition (default: by size)\n"
               "  --scale   divide the problem sizes by 2^S (default 0)\n");
}

int main(int argc, char **argv)
{
    int repeat = 3, scale = 0, repeat_given = 0, iters = 0;
    static const struct option opts[] = {{"repeat", required_argument, 0, 'r'},
                                         {"scale", required_argument, 0, 's'},
                                         {"iters", required_argument, 0, 'i'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        long v;
        const char *err = NULL;
        switch (o) {
        case 'r':
            if (!(err = pl_parse_long("--repeat", optarg, 1, 100, &v))) repeat = (int)v;
            repeat_given = 1;
            break;
        case 'i':
            if (!(err = pl_parse_long("--iters", optarg, 1, 10000, &v))) iters = (int)v;
            break;
        case 's':
            if (!(err = pl_parse_long("--scale", optarg, 0, 12, &v))) scale = (int)v;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
        if (err) {
            fprintf(stderr, "paralab-bench: %s\n", err);
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr,
                "paralab-bench: which benchmark? simt, gpu, trace, comm, train, viz, labs, dp, tp, "
                "pp, hybrid or zero\n");
        usage(stderr);
        return 2;
    }
    if (optind < argc - 1) {
        fprintf(stderr, "paralab-bench: unexpected argument '%s'\n", argv[optind + 1]);
        return 2;
    }
    if (!strcmp(argv[optind], "trace")) return bench_trace(2000000L >> scale);
    if (!strcmp(argv[optind], "comm")) {
        const char *why = pl_device_problem("paralab-bench");
        if (why) {
            fprintf(stderr, "paralab-bench: %s\n", why);
            return 2;
        }
        int mpi_rank, mpi_size;
        if (bench_mpi_launch(&mpi_rank, &mpi_size)) { /* the MPI build's three ways */
            int rc = bench_comm_mpi((16L << 20) >> scale, repeat_given ? repeat : 0, iters);
            if (rc >= 0) return rc;
        }
        return bench_comm((64L << 20) >> scale);
    }
    if (!strcmp(argv[optind], "viz")) return bench_viz(repeat);
    if (!strcmp(argv[optind], "labs")) return bench_labs();
    if (!strcmp(argv[optind], "dp")) return bench_dp(repeat); /* on a modeled clock only */
    if (!strcmp(argv[optind], "tp")) return bench_tp(repeat); /* the same */
    if (!strcmp(argv[optind], "pp")) return bench_pp(repeat); /* the same */
    if (!strcmp(argv[optind], "hybrid")) return bench_hybrid(repeat, scale); /* the same */
    if (!strcmp(argv[optind], "zero")) return bench_zero(repeat, scale);     /* the same */
    if (!strcmp(argv[optind], "train")) {
        const char *why = pl_device_problem("paralab-bench");
        if (why) {
            fprintf(stderr, "paralab-bench: %s\n", why);
            return 2;
        }
        return bench_train(repeat);
    }
    if (strcmp(argv[optind], "simt") && strcmp(argv[optind], "gpu")) {
        fprintf(stderr,
                "paralab-bench: no benchmark '%s'; the benchmarks are simt, gpu, trace, comm, "
                "train, viz, labs, dp, tp, pp, hybrid and zero\n",
                argv[optind]);
        return 2;
    }
    int gpu = strcmp(argv[optind], "gpu") == 0;
    const char *why = pl_device_problem("paralab-bench");
    if (why) {
        fprintf(stderr, "paralab-bench: %s\n", why);
        return 2;
    }
    if (gpu && pl_device_caps()->modeled) {
        fprintf(stderr, "paralab-bench: 'gpu' needs the CUDA build (build/cuda/bin/paralab-bench); "
                        "this is the simulated one\n");
        return 2;
    }
    if (!gpu && !pl_device_caps()->modeled) {
        fprintf(stderr,
                "paralab-bench: 'simt' measures the emulator: run build/sim/bin/paralab-bench\n");
        return 2;
    }

    int n_add = (1 << 24) >> scale, n_red = (1 << 22) >> scale;
    int nmax = n_add > n_red ? n_add : n_red;
    size_t bytes = (size_t)nmax * sizeof(float);
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes), *ref = malloc(bytes);
    if (!a || !b || !c || !ref) {
        fprintf(stderr, "paralab-bench: out of host memory\n");
        return 1;
    }
    for (int i = 0; i < nmax; i++) {
        a[i] = (float)(i % 1000) * 0.001f;
        b[i] = (float)(i % 7);
    }
    float *da, *db, *dc;
    cudaCheck(cudaMalloc((void **)&da, bytes));
    cudaCheck(cudaMalloc((void **)&db, bytes));
    cudaCheck(cudaMalloc((void **)&dc, bytes));
    cudaCheck(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
    cudaCheck(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));

    printf("paralab-bench %s: %s, best of %d runs\n", gpu ? "gpu" : "simt",
           gpu ? "kernels on the GPU vs a plain C loop on the CPU"
               : "the SIMT emulator vs a plain C loop doing the same arithmetic",
           repeat);
    row rows[3];
    loop_arg la = {a, b, ref, n_add, 0};

    /* vector add */
    rows[0] = (row){"vector add (no barrier)", n_add, 0, 0, 0, 0};
    rows[0].kernel = time_kernel_add(da, db, dc, n_add, repeat);
    rows[0].loop = time_loop(run_add, &la, repeat);
    cudaCheck(cudaMemcpy(c, dc, (size_t)n_add * sizeof(float), cudaMemcpyDeviceToHost));
    rows[0].max_err = max_rel_err(c, ref, n_add);

    /* block reduction, shared memory */
    la = (loop_arg){a, NULL, ref, n_red, 256};
    rows[1] = (row){"block sum (shared, 9 barriers)", n_red, BK_BLOCK_SUM_BARRIERS, 0, 0, 0};
    rows[1].kernel = time_kernel_reduce(bk_block_sum, da, dc, n_red, repeat);
    rows[1].loop = time_loop(run_sums, &la, repeat);
    cudaCheck(cudaMemcpy(c, dc, (size_t)(n_red / 256) * sizeof(float), cudaMemcpyDeviceToHost));
    rows[1].max_err = max_rel_err(c, ref, n_red / 256);

    /* warp-shuffle reduction */
    la.per = 32;
    rows[2] = (row){"warp sum (5 shuffles)", n_red, BK_WARP_SUM_SHUFFLES, 0, 0, 0};
    rows[2].kernel = time_kernel_reduce(bk_warp_sum, da, dc, n_red, repeat);
    rows[2].loop = time_loop(run_sums, &la, repeat);
    cudaCheck(cudaMemcpy(c, dc, (size_t)(n_red / 32) * sizeof(float), cudaMemcpyDeviceToHost));
    rows[2].max_err = max_rel_err(c, ref, n_red / 32);

    printf("\n%-32s %10s %12s %12s %12s %10s %s\n", "kernel", "threads", "kernel ms", "ns/thread",
           gpu ? "loop ms" : "ns/thr/bar", gpu ? "speed-up" : "vs loop", gpu ? "" : "goal");
    int all_right = 1;
    for (int i = 0; i < 3; i++) {
        row *r = &rows[i];
        double ns = r->kernel * 1e9 / r->n, ratio = r->kernel / r->loop;
        all_right &= r->max_err < 1e-5;
        if (gpu) {
            /* the loop's time over the kernel's: how many times faster the GPU is */
            printf("%-32s %10d %12.3f %12.4f %12.3f %9.0fx\n", r->name, r->n, r->kernel * 1e3, ns,
                   r->loop * 1e3, r->kernel > 0 ? r->loop / r->kernel : 0);
            continue;
        }
        char per_bar[32] = "-", goal[64];
        if (r->barriers) {
            double nb = ns / r->barriers;
            snprintf(per_bar, sizeof per_bar, "%.1f", nb);
            snprintf(goal, sizeof goal, "%s <= 15 ns per thread per %s",
                     nb <= 15 ? "met:" : "not met:", i == 2 ? "shuffle" : "barrier");
        } else
            snprintf(goal, sizeof goal, "%s within 3x of the loop",
                     ratio <= 3 ? "met:" : "not met:");
        printf("%-32s %10d %12.2f %12.2f %12s %9.1fx %s\n", r->name, r->n, r->kernel * 1e3, ns,
               per_bar, ratio, goal);
    }
    printf("\nresults %s (every output within 1e-5 of the loop's)\n",
           all_right ? "correct" : "WRONG");
    if (!gpu) {
        double nb1 = rows[1].kernel * 1e9 / rows[1].n / rows[1].barriers,
               nb2 = rows[2].kernel * 1e9 / rows[2].n / rows[2].barriers,
               r0 = rows[0].kernel / rows[0].loop;
        printf("goal (a no-barrier kernel within 3x of plain C): %.1fx: %s\n", r0,
               r0 <= 3 ? "met" : "not met");
        printf("goal (__syncthreads() at most 15 ns per thread per barrier, 256 threads): %.1f ns: "
               "%s\n",
               nb1, nb1 <= 15 ? "met" : "not met");
        printf("goal (a shuffle at most 15 ns per thread): %.1f ns: %s\n", nb2,
               nb2 <= 15 ? "met" : "not met");
    }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    free(a);
    free(b);
    free(c);
    free(ref);
    if (gpu && bench_gemm_goal()) return 1;
    return all_right ? 0 : 1;
}
