/*
 * Lab 11 — the checks. One exercise: zero1_update, ZeRO stage 1's update
 * (lab11_zero1_update), run in the training loop every rank runs
 * (lab11_rank) at stage 1, against the engine at stage 0 (plain data
 * parallelism: the same buckets, every gradient summed in the same order,
 * so the same bits).
 *
 *   for N in {1, 2, 4, 8} (the block model, h = 64, L = 2, a batch of 64,
 *   SGD with momentum 0.9 at lr 0.05, the checks' optimizer): after each
 *   of 10 steps, every rank's replica of the weights (each of its Ψ
 *   floats) equals plain DP's within 1e-6 relative (a rank that kept
 *   stale slices is named: the all-gather); each rank's floats sent and
 *   collectives called in each step (its ledger, pl_comm_ledger) equal
 *   pl_zero_traffic_of exactly (an all-reduce where stage 1
 *   reduce-scatters is named); each rank's memory, measured from its
 *   allocations, equals pl_zero_memory_of;
 *   then (make check, not --short) 20 epochs at N = 8 with AdamW (lr 2e-3)
 *   reach >= 95 % test accuracy; --short trains 2 epochs to >= 90 %.
 *
 * What lab11 prints at its end (lab11_check_quick): the same for N = 2
 * and 3 steps of a small model (h = 16, L = 1, a batch of 16).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "11_zero/lab11.h"
#include "paralab/plural.h"
#include "registry.h"

typedef int (*update_fn)(pl_zero *, float);

/* One run of lab11_rank on n ranks. */
static int train(const pl_digits *d, int n, int stage, update_fn update, int h, int L, int B,
                 int steps, int epochs, int sgd, float lr, const pl_check *progress,
                 lab11_result *res, char *err, size_t cap)
{
    lab11_config cfg = {.zc = {.model = pl_blocks_config_make(h, L),
                               .stage = stage,
                               .batch = B,
                               .accumulate = 1,
                               .overlap = 1,
                               .sgd = sgd},
                        .update = update,
                        .update_from = "your lab11_zero1_update (exercise.c)",
                        .epochs = epochs,
                        .max_steps = steps,
                        .lr = lr,
                        .seed = 0,
                        .evaluate = steps == 0,
                        .keep_steps = steps < LAB11_KEEP_MAX ? steps : LAB11_KEEP_MAX,
                        .progress = progress};
    memset(res, 0, sizeof *res);
    lab11_run run;
    lab11_run_init(&run, &cfg, d, res);
    return pl_world_run(n, NULL, 60, lab11_rank, &run, err, cap) ? -1 : 0;
}

static void result_free(lab11_result *r)
{
    free(r->params);
    free(r->init);
    for (int s = 0; s < LAB11_KEEP_MAX; s++) free(r->kept[s]);
    memset(r, 0, sizeof *r);
}

/* The unit and the owner of weight i for n ranks: "b0, the slice rank 1
 * owns"; returns the owner (-1: none found). */
static long where(const pl_blocks_config *m, int n, long i, char *buf, size_t cap)
{
    pl_zero_bucket b[PL_ZERO_UNITS_MAX];
    int u = pl_zero_buckets(m, n, 0, b, PL_ZERO_UNITS_MAX, NULL, 0);
    snprintf(buf, cap, "?");
    for (int k = 0; k < u; k++)
        if (i >= b[k].begin && i < b[k].end) {
            long owner = (i - b[k].begin) / b[k].shard;
            snprintf(buf, cap, "unit %s, in the slice rank %ld owns", b[k].name, owner);
            return owner;
        }
    return -1;
}

/* n ranks, steps steps of h, L, B at stage 1 with update against stage 0. */
static void check_steps(update_fn update, const pl_digits *d, int n, int h, int L, int B, int steps,
                        pl_check *c)
{
    lab11_result ref, got;
    char err[1400];
    if (!pl_check_that(
            c, !train(d, n, 0, NULL, h, L, B, steps, 1, 1, 0.05f, NULL, &ref, err, sizeof err),
            "N=%d, the reference engine at stage 0: %s", n, err)) {
        result_free(&ref);
        return;
    }
    int rc = train(d, n, 1, update, h, L, B, steps, 1, 1, 0.05f, NULL, &got, err, sizeof err);
    if (got.todo) {
        pl_check_todo(c);
        goto out;
    }
    if (!pl_check_that(c, !rc, "N=%d, stage 1, %s", n, err)) goto out;
    if (!pl_check_that(c, got.kept_steps == steps && ref.kept_steps == steps,
                       "N=%d: %d and %d steps kept of %d", n, got.kept_steps, ref.kept_steps,
                       steps))
        goto out;
    pl_blocks_config m = pl_blocks_config_make(h, L);
    long psi = got.nparams;
    for (int s = 0; s < steps && pl_check_ok(c); s++)
        for (int q = 0; q < n && pl_check_ok(c); q++) {
            const float *g = got.kept[s] + (size_t)q * psi, *w = ref.kept[s];
            const float *before = s ? got.kept[s - 1] + (size_t)q * psi : got.init;
            for (long i = 0; i < psi; i++) {
                if (fabs((double)g[i] - w[i]) <= 1e-6 * fabs((double)w[i])) {
                    pl_check_that(c, 1, "counted");
                    continue;
                }
                char at[96];
                long owner = where(&m, n, i, at, sizeof at);
                int stale = before && !memcmp(&g[i], &before[i], sizeof(float));
                /* its own slice unchanged: the update missed it (the offset); another
                 * rank's: that rank's update never came (the all-gather) */
                const char *why = !stale ? ""
                                  : owner == q
                                      ? ": unchanged by the step: your update did not reach "
                                        "this rank's own slice: check the slice offset (full_at "
                                        "+ rank * shard)"
                                      : ": unchanged by the step, the update of its owner never "
                                        "reached this replica (after the update every rank must "
                                        "hold the whole model: the all-gather)";
                pl_check_fail(c,
                              "N=%d, after step %d: rank %d's replica of the weights holds "
                              "%.9g at weight %ld (%s); plain data parallelism (stage 0) has "
                              "%.9g%s",
                              n, s + 1, q, g[i], i, at, w[i], why);
                break;
            }
        }
    if (!pl_check_ok(c)) goto out;
    if (!pl_check_that(c, !got.traffic_bad_at, "N=%d, %s", n, got.traffic_why)) goto out;
    for (int q = 0; q < n; q++) {
        const pl_zero_memory *g = &got.mem[q], *f = &got.formula;
        pl_check_that(c,
                      g->params == f->params && g->grads == f->grads && g->optim == f->optim &&
                          g->buffers == f->buffers,
                      "N=%d, stage 1: rank %d holds parameters %zu, gradients %zu, optimizer "
                      "state %zu, buckets %zu bytes (measured); pl_zero_memory_of says %zu, %zu, "
                      "%zu, %zu",
                      n, q, g->params, g->grads, g->optim, g->buffers, f->params, f->grads,
                      f->optim, f->buffers);
    }
out:
    result_free(&ref);
    result_free(&got);
}

/* Loads the digits. Without them an exercise not attempted yet is still
 * TODO, not a failure: one step on a tiny made-up set (all-zero images)
 * tells whether the update returns PL_TODO_STATUS. Returns 0 with d loaded,
 * else -1 with the verdict given. */
static int load_digits(update_fn update, pl_digits *d, pl_check *c)
{
    char err[1200];
    if (pl_digits_load("data/digits.csv", d, err, sizeof err) == PL_DATA_OK) return 0;
    enum { NTRAIN = 32, NTEST = 8 };
    static float x[(NTRAIN + NTEST) * PL_DIGITS_FEATURES];
    static int y[NTRAIN + NTEST];
    for (int i = 0; i < NTRAIN + NTEST; i++) y[i] = i % PL_DIGITS_CLASSES;
    pl_digits tiny = {{NTRAIN, x, y}, {NTEST, x + NTRAIN * PL_DIGITS_FEATURES, y + NTRAIN}};
    lab11_result probe = {0};
    char perr[1400];
    train(&tiny, 2, 1, update, 16, 1, 16, 1, 1, 1, 0.05f, NULL, &probe, perr, sizeof perr);
    if (probe.todo)
        pl_check_todo(c);
    else
        pl_check_fail(c, "%s", err);
    result_free(&probe);
    return -1;
}

void lab11_check_quick(int exercise, update_fn update, pl_check *c)
{
    (void)exercise;
    pl_digits d;
    if (load_digits(update, &d, c)) return;
    check_steps(update, &d, 2, 16, 1, 16, 3, c);
    pl_digits_free(&d);
}

void lab11_check(int exercise, update_fn update, pl_check *c)
{
    (void)exercise;
    pl_digits d;
    char err[1400];
    if (load_digits(update, &d, c)) return;
    static const int ns[] = {2, 4, 8, 1}; /* N = 2 first: its failure is the one explained */
    for (int a = 0; a < 4 && pl_check_ok(c); a++) {
        check_steps(update, &d, ns[a], 64, 2, 64, 10, c);
        if (pl_check_ok(c))
            pl_check_progress(c, "N=%d: 10 steps at stage 1 equal plain data parallelism's", ns[a]);
    }
    if (pl_check_ok(c)) {
        int epochs = pl_check_short() ? 2 : 20;
        double want = pl_check_short() ? 90 : 95;
        lab11_result res;
        int rc = train(&d, 8, 1, update, 64, 2, 64, 0, epochs, 0, 2e-3f, c, &res, err, sizeof err);
        if (pl_check_that(c, !rc, "N=8, stage 1, %d epochs: %s", epochs, err))
            pl_check_that(c, res.test_acc >= want,
                          "N=8, stage 1, %d epochs with your update (AdamW, lr 0.002): test "
                          "accuracy %.1f %%; plain data parallelism reaches %.0f %% or more",
                          epochs, res.test_acc, want);
        result_free(&res);
    }
    pl_digits_free(&d);
}

static const char *const exercises[] = {"zero1_update", NULL};

static void check_entry(int exercise, int use_solution, pl_check *c)
{
    lab11_check(exercise, use_solution ? lab11_zero1_update_solution : lab11_zero1_update, c);
}

const pl_lab lab11_zero = {"11_zero", exercises, check_entry};
