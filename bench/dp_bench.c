/*
 * dp_bench.c — paralab-bench dp: Lab 07's data-parallel training step on
 * simulated H100s (the default preset), 10 SGD steps of a global batch of
 * 64, for N = 1, 2, 4 and 8 ranks, with and without overlap:
 *   - the modeled step time and the scaling efficiency T(1) / (N T(N));
 *   - the step with the gradient synchronisation left out (compute alone:
 *     forward, backward, optimizer and the loss's all-reduce), so
 *     all-reduce time = T(no overlap) - T(compute);
 *   - the alpha-beta model's all-reduce time, from the preset's numbers:
 *     per bucket of n floats, N-1 reduce-scatter steps (a peer copy of a
 *     segment, alpha + s/beta, and a reduction kernel, launch + 3s/HBM) and
 *     N-1 all-gather steps (a peer copy), then the division (launch +
 *     2n*4/HBM), s = 4n/N bytes; the prediction T(compute) + that, against
 *     the modeled T(no overlap) (goal: within 5 %);
 *   - how much of the all-reduce time overlap hides (goal: at least half);
 *   - the measured samples per second on this machine.
 * Then the block model (paralab/blocks.h) at a width where backward takes
 * long enough to hide something behind: h 256, f 1024, L 8 blocks, AdamW,
 * the same global batch of 64, trained by ZeRO's engine (paralab/zero.h)
 * on N = 8 ranks (8 rows each), the same preset: stage 0 (plain data
 * parallelism, each unit's bucket all-reduced as soon as its backward ends,
 * Lab 07's mechanism) and stage 2 (each bucket reduce-scattered as soon as
 * it is ready), each with overlap = 1 (the reductions on the engine's
 * communication stream, during backward) and overlap = 0 (on the compute
 * stream, in order). T is the engine's modeled step: after a warm-up step,
 * from one modeled instant on every rank to the last rank's pl_zero.step_end
 * after pl_zero_step (forward, backward and the reductions; the update is
 * the same work with and without overlap and is left out).
 * T_compute is the same 8 rows a rank on N = 1 (stage 0: one rank, no
 * communication; the same kernels on the same shapes), and
 *   hidden = (T_no_overlap - T_overlap) / (T_no_overlap - T_compute),
 * the share of the communication's time overlap takes off the step (goal:
 * at least half at N = 8). The MLP's hidden fraction above is the same
 * ratio, its T_compute the step at the same N with the gradient
 * synchronisation left out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "07_data_parallel/lab07.h"
#include "bench.h"
#include "paralab/device.h"
#include "zero_run.h"

/* Gradient synchronisation left out: the compute alone. */
static int no_sync(pl_comm *c, float *grad, size_t count, cudaStream_t stream)
{
    (void)c, (void)grad, (void)count, (void)stream;
    return PL_COMM_OK;
}

static int measure(const pl_digits *d, int n, int overlap, int sync, lab07_result *res)
{
    lab07_impl impl = lab07_solution;
    if (!sync) impl.sync_gradients = no_sync;
    lab07_config cfg = {.batch = 64,
                        .epochs = 1,
                        .max_steps = 10,
                        .sgd = 1,
                        .lr = 0.1f,
                        .bucket_floats = 6400,
                        .overlap = overlap};
    lab07_run run = {.cfg = &cfg, .impl = &impl, .data = d, .result = res};
    memset(res, 0, sizeof *res);
    char err[1024];
    if (pl_world_run(n, NULL, 60, lab07_rank, &run, err, sizeof err)) {
        fprintf(stderr, "paralab-bench dp: N=%d: %s\n", n, err);
        return -1;
    }
    free(res->params);
    res->params = NULL;
    return 0;
}

/* The alpha-beta all-reduce time of the step's buckets on n ranks. */
static double allreduce_model(const pl_hw_model *h, const pl_mlp_config *mc, int bucket_floats,
                              int n)
{
    if (n < 2) return 0;
    double t = 0;
    for (int l = mc->layers - 1; l >= 0; l--) {
        long left = (long)mc->width[l] * mc->width[l + 1] + mc->width[l + 1];
        while (left > 0) { /* the layer's buckets, as lab07 cuts them */
            long b = left < bucket_floats ? left : bucket_floats;
            double s = 4.0 * (double)b / n; /* a segment, bytes */
            double copy = h->peer_latency + s / h->peer_bw;
            double reduce = h->launch_latency + 3 * s / h->memory_bw;
            t += (n - 1) * (copy + reduce) + (n - 1) * copy;
            t += h->launch_latency + 8.0 * (double)b / h->memory_bw; /* the division */
            left -= b;
        }
    }
    return t;
}

/* The block model on ZeRO's engine, N = 8: stage 0's all-reduce and stage
 * 2's reduce-scatter with and without overlap, against T_compute on N = 1. */
static int bench_dp_blocks(void)
{
    enum { N = 8, BATCH = 64, HIDDEN = 256, LAYERS = 8 };
    pl_blocks_config c = pl_blocks_config_make(HIDDEN, LAYERS);
    float *x = NULL;
    int *y = NULL;
    if (bz_data(&c, BATCH, &x, &y)) {
        fprintf(stderr, "paralab-bench dp: out of host memory\n");
        return -1;
    }
    pl_zero_config base = {.model = c, .stage = 0, .batch = BATCH, .accumulate = 1, .overlap = 1};
    bz_result comp, r[2][2]; /* [stage 0, 2][overlap 0, 1] */
    pl_zero_config one = base;
    one.batch = BATCH / N; /* the same rows a rank, on one rank */
    int rc = bz_run(&one, 1, 1, x, y, &comp);
    for (int s = 0; s < 2 && !rc; s++)
        for (int o = 0; o < 2 && !rc; o++) {
            pl_zero_config cfg = base;
            cfg.stage = 2 * s;
            cfg.overlap = o;
            rc = bz_run(&cfg, N, 1, x, y, &r[s][o]);
            if (rc)
                fprintf(stderr, "paralab-bench dp: the block model, stage %d, overlap %d: %s\n",
                        cfg.stage, o, r[s][o].error);
        }
    if (rc && !comp.ok)
        fprintf(stderr, "paralab-bench dp: the block model on N = 1: %s\n", comp.error);
    free(x);
    free(y);
    if (rc) return -1;
    printf("\nthe block model (h %d, f %d, %d blocks, %ld parameters), AdamW, a global batch of %d "
           "on N = %d (%d rows a rank), ZeRO's engine, the modeled step (forward, backward, the "
           "gradients' reductions); T_compute: the same %d rows on N = 1, %.1f us\n",
           c.hidden, c.ffn, c.layers, pl_blocks_count(&c), BATCH, N, BATCH / N, BATCH / N,
           comp.step * 1e6);
    printf("%-28s %12s %12s %12s %12s %8s\n", "", "overlap us", "no-ovl us", "compute us",
           "comm us", "hidden");
    static const char *const name[2] = {"stage 0 (all-reduce)", "stage 2 (reduce-scatter)"};
    double hidden[2];
    for (int s = 0; s < 2; s++) {
        double comm = r[s][0].step - comp.step;
        hidden[s] = comm > 0 ? (r[s][0].step - r[s][1].step) / comm : 0;
        printf("%-28s %12.1f %12.1f %12.1f %12.1f %7.0f%%\n", name[s], r[s][1].step * 1e6,
               r[s][0].step * 1e6, comp.step * 1e6, comm * 1e6, hidden[s] * 100);
    }
    printf(
        "\n  N=%d: overlap hides %.0f %% of the block model's all-reduce time (stage 0, Lab 07's "
        "mechanism): %s; of stage 2's reduce-scatter time %.0f %%: %s (goal: at least half)\n",
        N, hidden[0] * 100, hidden[0] >= 0.5 ? "met" : "MISSED", hidden[1] * 100,
        hidden[1] >= 0.5 ? "met" : "MISSED");
    printf("  comm us: T_no_overlap - T_compute; hidden: (T_no_overlap - T_overlap) / comm us\n");
    return 0;
}

int bench_dp(int repeat)
{
    (void)repeat;
    pl_hw_model hw;
    if (pl_device_model(&hw)) {
        fprintf(stderr, "paralab-bench: dp models the step on simulated GPUs: run build/sim's\n");
        return 2;
    }
    pl_digits d;
    char err[512];
    if (pl_digits_load("data/digits.csv", &d, err, sizeof err)) {
        fprintf(stderr, "paralab-bench dp: %s\n", err);
        return 2;
    }
    pl_mlp_config mc = pl_mlp_default();
    static const int ranks[] = {1, 2, 4, 8};
    double t1 = 0;
    int ok_model = 1, ok_hidden = 1;
    printf("paralab-bench dp: Lab 07's step, 10 SGD steps of a global batch of 64, on simulated "
           "%s (modeled clock)\n",
           hw.name);
    printf("%4s %12s %12s %10s %12s %12s %12s %12s %8s %14s\n", "N", "overlap us", "no-ovl us",
           "eff (ovl)", "compute us", "allred us", "alpha-beta", "model/sim", "hidden",
           "samples/s");
    for (int i = 0; i < 4; i++) {
        int n = ranks[i];
        lab07_result ov, no, comp;
        if (measure(&d, n, 1, 1, &ov) || measure(&d, n, 0, 1, &no) || measure(&d, n, 0, 0, &comp)) {
            pl_digits_free(&d);
            return 1;
        }
        if (n == 1) t1 = ov.modeled_step;
        double allreduce = no.modeled_step - comp.modeled_step;
        double model = allreduce_model(&hw, &mc, 6400, n);
        double pred = comp.modeled_step + model, ratio = pred / no.modeled_step;
        double hidden = allreduce > 0 ? (no.modeled_step - ov.modeled_step) / allreduce : 0;
        double eff = t1 / (n * ov.modeled_step);
        printf("%4d %12.1f %12.1f %9.0f%% %12.1f %12.1f %12.1f %12.3f %7.0f%% %14.0f\n", n,
               ov.modeled_step * 1e6, no.modeled_step * 1e6, eff * 100, comp.modeled_step * 1e6,
               allreduce * 1e6, model * 1e6, n > 1 ? ratio : 1.0, n > 1 ? hidden * 100 : 0,
               64 / ov.measured_step);
        if (n == 8) {
            ok_model = ratio > 0.95 && ratio < 1.05;
            ok_hidden = hidden >= 0.5;
            printf("\n  N=8: the alpha-beta model predicts a step of %.1f us without overlap; the "
                   "simulator models %.1f us (%.3f): %s (goal: within 5 %%)\n",
                   pred * 1e6, no.modeled_step * 1e6, ratio, ok_model ? "met" : "MISSED");
            printf("  N=8: overlap hides %.0f %% of the all-reduce time: %s (goal: at least "
                   "half)\n",
                   hidden * 100, ok_hidden ? "met" : "MISSED");
        }
    }
    printf("  efficiency: T(1) / (N T(N)) with a fixed global batch; samples/s: measured on this "
           "machine's CPU, with overlap\n");
    pl_digits_free(&d);
    return bench_dp_blocks() ? 1 : 0;
}
