/*
 * Lab 07 — the checks.
 *   shard_batch: for every global batch 1..256 and N in {1, 2, 3, 4, 8}
 *     that divides it, every rank's rows: B/N contiguous, in rank order,
 *     covering the batch once.
 *   sync_gradients: on N in {1, 2, 3, 4, 8} ranks and 1, 1000 and 26,122
 *     floats (the MLP's gradient), every element is the average (the values
 *     keep the float sums exact) and bit for bit the same on every rank;
 *     then training with it: for 10 SGD steps of batch 64 on N = 2, 4 and 8
 *     the parameters are bitwise identical on every rank after every step
 *     and equal one-device training within 1e-5 relative (+ 1e-7), with the
 *     same loss;
 *     and 20 epochs reach at least 95 % test accuracy for N = 1, 2, 4, 8.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "07_data_parallel/lab07.h"
#include "paralab/device.h"
#include "paralab/plural.h"
#include "paralab/trace.h"
#include "registry.h"

static void check_shards(const lab07_impl *impl, pl_check *c)
{
    static const int ranks[] = {1, 2, 3, 4, 8};
    for (int a = 0; a < 5; a++)
        for (int B = ranks[a]; B <= 256; B += ranks[a]) {
            int n = ranks[a], next = 0;
            for (int r = 0; r < n; r++) {
                int first = -1, count = -1;
                if (impl->shard_batch(B, n, r, &first, &count) == PL_TODO_STATUS) {
                    pl_check_todo(c);
                    return;
                }
                if (!pl_check_that(c, first == next && count == B / n,
                                   "shard_batch(B=%d, n=%d, rank=%d) gave rows [%d, %d), but "
                                   "rank %d takes the %d row%s [%d, %d)",
                                   B, n, r, first, first + count, r, B / n, pl_s(B / n), next,
                                   next + B / n))
                    return;
                next += count;
            }
        }
}

/* ---- sync_gradients on its own ------------------------------------------------------- */

typedef struct {
    const lab07_impl *impl;
    size_t count;
    int todo;
    float *out[8];
} sync_arg;

static float value(int rank, size_t i) { return (float)((i * 5 + (size_t)rank * 7) % 13); }

static int sync_rank(pl_rank *r)
{
    sync_arg *a = r->arg;
    size_t n = a->count;
    float *h = malloc(n * sizeof *h), *d = NULL;
    if (!h || cudaMalloc((void **)&d, n * sizeof *d)) {
        free(h);
        snprintf(r->error, sizeof r->error, "out of memory");
        return 1;
    }
    for (size_t i = 0; i < n; i++) h[i] = value(r->rank, i);
    cudaMemcpy(d, h, n * sizeof *d, cudaMemcpyHostToDevice);
    int rc = a->impl->sync_gradients(r->comm, d, n, r->stream);
    int bad = 0;
    if (rc == PL_TODO_STATUS)
        a->todo = 1;
    else if (rc) {
        snprintf(r->error, sizeof r->error, "sync_gradients returned %s: %s",
                 pl_comm_result_name((pl_comm_result)rc), pl_comm_last_error(r->comm));
        bad = 1;
    } else if (cudaStreamSynchronize(r->stream) ||
               cudaMemcpy(h, d, n * sizeof *h, cudaMemcpyDeviceToHost)) {
        snprintf(r->error, sizeof r->error, "the device failed after sync_gradients");
        bad = 1;
    }
    a->out[r->rank] = h;
    cudaFree(d);
    return bad;
}

static void check_sync(const lab07_impl *impl, pl_check *c)
{
    static const int ranks[] = {1, 2, 3, 4, 8};
    static const size_t counts[] = {1, 1000, 26122};
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 3; b++) {
            int n = ranks[a];
            sync_arg arg;
            memset(&arg, 0, sizeof arg);
            arg.impl = impl;
            arg.count = counts[b];
            char err[1200];
            int failed = pl_world_run(n, NULL, 10, sync_rank, &arg, err, sizeof err);
            int ok = !failed;
            if (arg.todo) pl_check_todo(c);
            if (!arg.todo && !pl_check_that(c, ok, "N=%d, %zu float%s: %s", n, counts[b],
                                            pl_s((long long)counts[b]), err))
                ok = 0;
            for (size_t i = 0; ok && !arg.todo && i < counts[b]; i++) {
                float sum = 0;
                for (int q = 0; q < n; q++) sum += value(q, i);
                /* the average: the sum times 1/N (pl_k_scale) or over N (PL_AVG);
                 * the same bits on every rank */
                float want = sum * (1.0f / (float)n), or_want = sum / (float)n;
                float first = arg.out[0][i];
                for (int q = 0; q < n && ok; q++) {
                    float got = arg.out[q][i];
                    ok = pl_check_that(c, got == want || got == or_want,
                                       "N=%d, %zu float%s: rank %d's grad[%zu] = %.9g, but the "
                                       "average over the ranks is %.9g%s",
                                       n, counts[b], pl_s((long long)counts[b]), q, i, got, want,
                                       n < 2 || sum == 0 ? ""
                                       : got == sum
                                           ? " (the sum: divide by the rank count, "
                                             "pl_k_scale(grad, (long)count, 1.0f / n, stream))"
                                       : got == sum * (float)n
                                           ? " (the sum times N: the factor is 1.0f / N, not N)"
                                           : "") &&
                         pl_check_that(c, memcmp(&got, &first, sizeof got) == 0,
                                       "N=%d, %zu float%s: grad[%zu] is %.9g on rank 0 but %.9g "
                                       "on rank %d: every rank must end with the same bits",
                                       n, counts[b], pl_s((long long)counts[b]), i, first, got, q);
                }
            }
            for (int q = 0; q < n; q++) free(arg.out[q]);
            if (arg.todo || !ok) return;
        }
}

/* ---- training with it -------------------------------------------------------------------- */

/* AdamW for the accuracy runs; SGD for the comparison with one device:
 * AdamW divides each gradient by its own running magnitude, so a gradient
 * near zero that rounds differently (the sums run in another order) can
 * move its weight by a whole learning rate. */
static int train(const lab07_impl *impl, const pl_digits *d, int n, int epochs, int max_steps,
                 lab07_result *res, const pl_check *progress, char *err, size_t cap)
{
    lab07_config cfg = {.batch = 64,
                        .epochs = epochs,
                        .max_steps = max_steps,
                        .sgd = max_steps > 0,
                        .lr = max_steps > 0 ? 0.1f : 5e-3f,
                        .bucket_floats = 6400,
                        .overlap = 1,
                        .seed = 0,
                        .check_replicas = max_steps > 0,
                        .progress = progress};
    lab07_run run = {.cfg = &cfg, .impl = impl, .data = d, .result = res};
    memset(res, 0, sizeof *res);
    return pl_world_run(n, NULL, 30, lab07_rank, &run, err, cap);
}

static void check_training(const lab07_impl *impl, pl_check *c)
{
    pl_digits d;
    char err[1200];
    if (!pl_check_that(c, pl_digits_load("data/digits.csv", &d, err, sizeof err) == PL_DATA_OK,
                       "%s", err))
        return;
    static lab07_result one, many;
    if (train(impl, &d, 1, 100, 10, &one, NULL, err, sizeof err) || one.todo) {
        if (one.todo)
            pl_check_todo(c);
        else
            pl_check_fail(c, "one device, 10 steps: %s", err);
        goto out;
    }
    static const int ranks[] = {2, 4, 8};
    for (int a = 0; a < 3 && pl_check_ok(c); a++) {
        int n = ranks[a];
        if (!pl_check_that(c, !train(impl, &d, n, 100, 10, &many, NULL, err, sizeof err),
                           "N=%d, 10 steps: %s", n, err))
            break;
        if (!pl_check_that(c, !many.replicas_differ,
                           "N=%d: after step %d the ranks' parameters differ: every rank must "
                           "apply the same averaged gradient",
                           n, many.replicas_differ))
            break;
        char what[64];
        snprintf(what, sizeof what, "N=%d vs one device, parameters after 10 steps", n);
        pl_check_floats(c, what, many.params, one.params, (size_t)one.nparams, 1e-5, 1e-7);
        pl_check_that(c, fabs(many.epoch_loss[0] - one.epoch_loss[0]) <= 1e-5 * one.epoch_loss[0],
                      "N=%d: the loss over 10 steps is %.6f, one device's %.6f: the loss is the "
                      "mean over every rank's samples",
                      n, many.epoch_loss[0], one.epoch_loss[0]);
        free(many.params);
        many.params = NULL;
    }
    /* overlap, on the modeled clock (where there is one): 5 steps on 4 ranks
     * with and without */
    if (pl_check_ok(c) && pl_device_caps()->modeled) {
        double step[2] = {0, 0};
        int overlapping = 0;
        for (int ov = 0; ov <= 1; ov++) {
            lab07_config cfg = {.batch = 64,
                                .epochs = 1,
                                .max_steps = 5,
                                .sgd = 1,
                                .lr = 0.1f,
                                .bucket_floats = 6400,
                                .overlap = ov};
            static lab07_result r5;
            memset(&r5, 0, sizeof r5);
            lab07_run run = {.cfg = &cfg, .impl = impl, .data = &d, .result = &r5};
            pl_trace *t = pl_trace_create(4, 1 << 16, PL_TRACE_DROP);
            if (!t || pl_world_run_traced(4, NULL, 30, t, lab07_rank, &run, err, sizeof err)) {
                pl_check_fail(c, "N=4, 5 steps with%s overlap: %s", ov ? "" : "out",
                              t ? err : "out of memory");
                pl_trace_destroy(t);
                break;
            }
            step[ov] = r5.modeled_step;
            free(r5.params);
            /* rank 0: does an all-reduce run while a backward runs? */
            static pl_event ev[1 << 16];
            size_t n = pl_trace_drain(t, ev, 1 << 16);
            for (size_t i = 0; ov && i < n && !overlapping; i++) {
                if (ev[i].rank != 0 || ev[i].kind != PL_EV_BACKWARD) continue;
                for (size_t j = 0; j < n && !overlapping; j++)
                    overlapping = ev[j].rank == 0 && ev[j].kind == PL_EV_COLLECTIVE &&
                                  ev[j].modeled_start < ev[i].modeled_end &&
                                  ev[j].modeled_end > ev[i].modeled_start;
            }
            pl_trace_destroy(t);
        }
        if (pl_check_ok(c)) {
            pl_check_that(c, step[1] < step[0],
                          "N=4: a step takes %.1f us (modeled) with overlap and %.1f us "
                          "without: the buckets' all-reduces should hide behind backward",
                          step[1] * 1e6, step[0] * 1e6);
            pl_check_that(c, overlapping,
                          "N=4 with overlap: no all-reduce of rank 0 ran during its backward "
                          "(modeled clock)");
        }
    }
    static const int all[] = {1, 2, 4, 8};
    if (pl_check_short() && pl_check_ok(c))
        pl_check_progress(c, "short run (--short): the 20-epoch runs are left to the plain build");
    for (int a = 0; a < 4 && pl_check_ok(c) && !pl_check_short(); a++) {
        lab07_result full;
        if (!pl_check_that(c, !train(impl, &d, all[a], 20, 0, &full, c, err, sizeof err),
                           "N=%d, 20 epochs: %s", all[a], err))
            break;
        pl_check_that(c, full.test_acc >= 95.0,
                      "N=%d, 20 epochs of batch 64: test accuracy %.1f %%, below 95 %%", all[a],
                      full.test_acc);
        free(full.params);
    }
out:
    free(one.params);
    one.params = NULL;
    pl_digits_free(&d);
}

void lab07_check_quick(int exercise, const lab07_impl *impl, pl_check *c)
{
    if (exercise == 0)
        check_shards(impl, c);
    else
        check_sync(impl, c);
}

void lab07_check(int exercise, const lab07_impl *impl, pl_check *c)
{
    if (exercise == 0) {
        check_shards(impl, c);
        return;
    }
    check_sync(impl, c);
    if (pl_check_ok(c)) check_training(impl, c);
}

static const char *const exercises[] = {"shard_batch", "sync_gradients", NULL};

static void check_entry(int exercise, int use_solution, pl_check *c)
{
    lab07_check(exercise, use_solution ? &lab07_solution : &lab07_exercise, c);
}

const pl_lab lab07_data_parallel = {"07_data_parallel", exercises, check_entry};
