/*
 * Lab 09 — the checks. Exercise 0 is GPipe's lists, 1 the 1F1B warm-up
 * count, 2 1F1B's lists (with your warm-up count where it passes its own
 * check, the reference's otherwise).
 *
 *   the lists, for p in {1, 2, 3, 4, 8} and m in {1, 2, 3, 4, 7, 8, 32}
 *     (p = 4 and m = 8 first)
 *     (m = 1, m < p, m = p and m >> p): the validator (pl_pp_validate)
 *     accepts them (its message is the failure: the first bad operation by
 *     stage and position, or who waits for whom in a deadlock); GPipe runs
 *     every forward before every backward, 1F1B is 1F1B's order op by op;
 *     the most micro-batches a stage holds at once is the formula's (GPipe
 *     m, 1F1B min(p - r, m)); and on the validator's timeline of uniform
 *     stages (a forward 1 slot, a backward 2, messages free) the bubble is
 *     the formula's exactly, (p - 1)/m of the ideal time and (p - 1)/(m +
 *     p - 1) of the total;
 *   the warm-up count: min(p - r - 1, m) for every stage r of p = 4 stages
 *     and m = 8, then p in 1..8 and m in 1..40; a wrong count is shown with what it does to 1F1B's
 * lists (the validator's message, or the activations and the time it costs); with the executor
 * (make check; lab09 runs these without training): see lab09_check below.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "09_pipeline_parallel/lab09.h"
#include "paralab/plural.h"
#include "registry.h"

/* (p = 4, m = 8, the lab's default, first: its failure is the one explained) */
static const int grid_p[] = {4, 1, 2, 3, 8};
static const int grid_m[] = {8, 1, 2, 3, 4, 7, 32};
enum { NP = sizeof grid_p / sizeof grid_p[0], NM = sizeof grid_m / sizeof grid_m[0] };
/* the validator's timeline: a forward 1 slot, a backward 2 */
#define T_F 1.0
#define T_B 2.0

static const char *kind_title(pl_pp_kind k) { return k == PL_PP_GPIPE ? "GPipe" : "1F1B"; }

static int min_int(int a, int b) { return a < b ? a : b; }

int lab09_lists(const lab09_impl *impl, pl_pp_kind kind, int p, int m, pl_pp_schedule *s, char *err,
                size_t cap)
{
    if (pl_pp_schedule_init(s, p, m, 1, err, cap)) return -1;
    for (int r = 0; r < p; r++) {
        int rc;
        if (kind == PL_PP_GPIPE) {
            rc = impl->gpipe(s, r);
        } else {
            int w = impl->warmup_1f1b(p, m, r);
            if (w == PL_TODO_STATUS) {
                rc = w;
            } else if (w < 0 || w > m) {
                snprintf(err, cap,
                         "your warmup_1f1b (exercise.c) returned %d for p=%d, m=%d, stage=%d: a "
                         "count of forwards is 0..%d",
                         w, p, m, r, m);
                pl_pp_schedule_free(s);
                return -1;
            } else {
                rc = impl->one_f_one_b(s, r, w);
            }
        }
        if (rc == PL_TODO_STATUS) {
            pl_pp_schedule_free(s);
            return PL_TODO_STATUS;
        }
        if (rc) {
            snprintf(err, cap,
                     "p=%d, m=%d: your %s list of stage %d returned %d after %d op%s (pl_pp_push "
                     "returns -1 when the stage is not 0..%d or its list is full: %d ops)",
                     p, m, kind_title(kind), r, rc, s->n[r], pl_s(s->n[r]), p - 1, s->cap);
            pl_pp_schedule_free(s);
            return -1;
        }
    }
    return 0;
}

/* 1F1B's op i on stage r of p, for m micro-batches (2 m ops). */
static pl_pp_op op_1f1b(int p, int m, int r, int i)
{
    int w = min_int(p - r - 1, m), steady = 2 * (m - w);
    if (i < w) return pl_pp_forward(i, 0);
    if (i < w + steady) {
        int j = i - w;
        return j % 2 ? pl_pp_backward(j / 2, 0) : pl_pp_forward(w + j / 2, 0);
    }
    return pl_pp_backward(m - w + (i - w - steady), 0);
}

static int same_op(pl_pp_op a, pl_pp_op b)
{
    return a.kind == b.kind && a.micro_batch == b.micro_batch && a.chunk == b.chunk;
}

int lab09_1f1b_mismatch(const pl_pp_op *ops, int n, int p, int m, int r, pl_pp_op *want)
{
    for (int i = 0; i < n || i < 2 * m; i++) {
        pl_pp_op w = i < 2 * m ? op_1f1b(p, m, r, i) : (pl_pp_op){PL_PP_NUM_OPS, -1, 0};
        if (i >= n || !same_op(ops[i], w)) {
            *want = w;
            return i;
        }
    }
    return -1;
}

static void op_name(pl_pp_op op, char *buf, size_t cap)
{
    if (op.kind < 0 || op.kind >= PL_PP_NUM_OPS)
        snprintf(buf, cap, "nothing");
    else
        pl_pp_op_name(op, 1, buf, cap);
}

/* The lists of one (p, m), validated and compared with the schedule's
 * shape and formulas. 0: passed (or c failed / TODO). */
static void check_lists(const lab09_impl *impl, pl_pp_kind kind, int p, int m, pl_check *c)
{
    pl_pp_schedule s;
    char err[1024];
    int rc = lab09_lists(impl, kind, p, m, &s, err, sizeof err);
    if (rc == PL_TODO_STATUS) {
        pl_check_todo(c);
        return;
    }
    if (rc) {
        pl_check_fail(c, "%s", err);
        return;
    }
    pl_pp_report rep;
    if (!pl_check_that(c, !pl_pp_validate(&s, T_F, T_B, 0, &rep, err, sizeof err),
                       "p=%d, m=%d: your %s lists cannot run: %s", p, m, kind_title(kind), err))
        goto out;
    for (int r = 0; r < p && pl_check_ok(c); r++) {
        char got[32], want_name[32];
        if (kind == PL_PP_GPIPE) {
            for (int i = 0; i < s.n[r] && pl_check_ok(c); i++) {
                int fwd = s.ops[r][i].kind == PL_PP_F;
                op_name(s.ops[r][i], got, sizeof got);
                pl_check_that(c, fwd == (i < m),
                              "p=%d, m=%d: stage %d's op %d is %s: GPipe runs every forward "
                              "first (ops 0..%d), then every backward",
                              p, m, r, i, got, m - 1);
            }
        } else {
            pl_pp_op w;
            int i = lab09_1f1b_mismatch(s.ops[r], s.n[r], p, m, r, &w);
            if (i >= 0) {
                int wu = min_int(p - r - 1, m);
                if (i < s.n[r])
                    op_name(s.ops[r][i], got, sizeof got);
                else
                    snprintf(got, sizeof got, "missing (the list ends)");
                op_name(w, want_name, sizeof want_name);
                pl_check_fail(c,
                              "p=%d, m=%d: stage %d's op %d is %s; 1F1B runs %s there (%d "
                              "warm-up forward%s, then one forward and one backward in turn, "
                              "then the backwards left)",
                              p, m, r, i, got, want_name, wu, pl_s(wu));
                break;
            }
            for (int j = 0; j < 2 * m; j++) pl_check_that(c, 1, "counted");
        }
        int want = pl_pp_peak_formula(kind, p, m, 1, r);
        pl_check_that(c, rep.peak_in_flight[r] == want,
                      "p=%d, m=%d: stage %d holds %d micro-batch%s' activations at once; %s's "
                      "formula says %d",
                      p, m, r, rep.peak_in_flight[r], rep.peak_in_flight[r] == 1 ? "" : "es",
                      kind_title(kind), want);
    }
    if (pl_check_ok(c)) {
        double ideal = m * (T_F + T_B), bubble = rep.makespan - ideal, of_ideal, of_total;
        pl_pp_bubble_formula(kind, p, m, 1, &of_ideal, &of_total);
        pl_check_that(c, bubble / ideal == of_ideal && bubble / rep.makespan == of_total,
                      "p=%d, m=%d: on uniform stages (F 1 slot, BW 2) your %s lists take %g "
                      "slots: a bubble of %.4f of the ideal time and %.4f of the total; the "
                      "formula says (p - 1)/m = %.4f and (p - 1)/(m + p - 1) = %.4f",
                      p, m, kind_title(kind), rep.makespan, bubble / ideal, bubble / rep.makespan,
                      of_ideal, of_total);
    }
out:
    pl_pp_schedule_free(&s);
}

static void check_schedule(const lab09_impl *impl, pl_pp_kind kind, pl_check *c)
{
    for (int a = 0; a < NP && pl_check_ok(c); a++)
        for (int b = 0; b < NM && pl_check_ok(c); b++)
            check_lists(impl, kind, grid_p[a], grid_m[b], c);
}

/* The warm-up count; a wrong one is shown with the 1F1B lists it makes. */
static void check_warmup(const lab09_impl *impl, pl_check *c)
{
    for (int g = 0; g < 1 + 8 * 40; g++) {
        int p = g ? 1 + (g - 1) / 40 : 4, m = g ? 1 + (g - 1) % 40 : 8;
        for (int r = 0; r < p; r++) {
            int got = impl->warmup_1f1b(p, m, r), want = min_int(p - r - 1, m);
            if (got == PL_TODO_STATUS) {
                pl_check_todo(c);
                return;
            }
            if (got == want) {
                pl_check_that(c, 1, "counted");
                continue;
            }
            /* what it does: the reference's lists with this count */
            char err[1024], what[1200];
            lab09_impl with = {lab09_solution.gpipe, impl->warmup_1f1b, lab09_solution.one_f_one_b};
            pl_pp_schedule s;
            pl_pp_report rep, ref;
            int rc = lab09_lists(&with, PL_PP_1F1B, p, m, &s, err, sizeof err);
            if (rc == 0 && pl_pp_validate(&s, T_F, T_B, 0, &rep, err, sizeof err))
                snprintf(what, sizeof what, "with it the 1F1B lists cannot run: %s", err);
            else if (rc == 0) {
                pl_pp_schedule good;
                lab09_lists(&lab09_solution, PL_PP_1F1B, p, m, &good, err, sizeof err);
                pl_pp_validate(&good, T_F, T_B, 0, &ref, err, sizeof err);
                pl_pp_schedule_free(&good);
                char slots[128];
                if (rep.makespan != ref.makespan)
                    snprintf(slots, sizeof slots, "and a step takes %g slots (1F1B: %g)",
                             rep.makespan, ref.makespan);
                else /* a forward more ahead costs memory, not time */
                    snprintf(slots, sizeof slots, "for nothing: a step takes 1F1B's %g slots",
                             rep.makespan);
                snprintf(what, sizeof what,
                         "with it the 1F1B lists run, but stage %d holds %d micro-batch%s' "
                         "activations at once (1F1B: %d) %s",
                         r, rep.peak_in_flight[r], rep.peak_in_flight[r] == 1 ? "" : "es",
                         ref.peak_in_flight[r], slots);
            } else if (got < 0 || got > m)
                snprintf(what, sizeof what, "a count of forwards is 0..%d", m);
            else
                snprintf(what, sizeof what, "%s", err);
            if (rc == 0) pl_pp_schedule_free(&s);
            pl_check_fail(c,
                          "warmup_1f1b(p=%d, m=%d, stage=%d) = %d, but 1F1B's warm-up is "
                          "min(p - r - 1, m) = %d; %s",
                          p, m, r, got, want, what);
            return;
        }
    }
}

/* The warm-up that 1F1B's lists are built with: yours where it passes.
 * GPipe has no warm-up: its check never calls yours (a loop in it is
 * warmup_1f1b's failure, not gpipe's). */
static lab09_impl mix(const lab09_impl *impl, int exercise)
{
    lab09_impl o = {impl->gpipe, lab09_solution.warmup_1f1b, impl->one_f_one_b};
    if (exercise == LAB09_GPIPE) return o;
    pl_check w;
    pl_check_begin(&w, "09_pipeline_parallel", "warmup_1f1b");
    check_warmup(impl, &w);
    if (w.outcome == PL_PASS) o.warmup_1f1b = impl->warmup_1f1b;
    return o;
}

void lab09_check_quick(int exercise, const lab09_impl *impl, pl_check *c)
{
    if (exercise == LAB09_WARMUP) {
        check_warmup(impl, c);
        return;
    }
    lab09_impl o = mix(impl, exercise);
    check_schedule(&o, exercise == LAB09_GPIPE ? PL_PP_GPIPE : PL_PP_1F1B, c);
}

/* ---- on the executor ------------------------------------------------------------------
 */

/* One run of lab09_rank: steps SGD steps (lr 0.05) of batch B on p stages
 * in m micro-batches with the lists s, on the model h, L; the first
 * step's gradients kept. */
static int train(const pl_digits *d, const pl_pp_schedule *s, pl_pp_kind kind, int h, int L, int B,
                 int steps, lab09_result *res, char *err, size_t cap)
{
    lab09_config cfg = {.hidden = h,
                        .layers = L,
                        .batch = B,
                        .micro_batches = s->micro_batches,
                        .chunks = 1,
                        .kind = kind,
                        .schedule = s,
                        .schedule_from = "the lists checked",
                        .epochs = 1,
                        .max_steps = steps,
                        .lr = 0.05f,
                        .sgd = 1,
                        .seed = 0,
                        .keep_grads = 1};
    memset(res, 0, sizeof *res);
    lab09_run run;
    lab09_run_init(&run, &cfg, d, res);
    return pl_world_run(s->stages, NULL, 60, lab09_rank, &run, err, cap) ? -1 : 0;
}

static void result_free(lab09_result *r)
{
    free(r->params);
    free(r->grads);
    r->params = r->grads = NULL;
}

/* The first index off by more than 1e-6 + 1e-5 max|want|; -1 if none. */
static long first_bad(const float *got, const float *want, long n, double rtol)
{
    double mx = 0;
    for (long i = 0; i < n; i++) mx = fmax(mx, fabs(want[i]));
    for (long i = 0; i < n; i++)
        if (!(fabs((double)got[i] - want[i]) <= 1e-6 + rtol * mx)) return i;
    return -1;
}

/* The uniform body: every op one kernel of the same cost, nothing held. */
typedef struct {
    const pl_pp_schedule *s;
    pl_pp_timing timing;
    char error[PL_PP_MAX_STAGES][1024];
} uniform_run;

static int uniform_rank(pl_rank *r)
{
    uniform_run *u = r->arg;
    pl_pp_uniform body;
    pl_pp_exec ex;
    if (pl_pp_uniform_init(&body, 1 << 14, r->stream, r->error, sizeof r->error)) return 1;
    int rc = 1;
    if (pl_pp_exec_init(&ex, &pl_pp_uniform_body, &body, r->size > 1 ? r->comm : NULL, r->stream, 0,
                        r->error, sizeof r->error))
        goto out_body;
    pl_pp_timing t;
    if (pl_pp_run(&ex, u->s) || pl_pp_measure(&ex, 0, &t)) {
        snprintf(r->error, sizeof r->error, "%s", ex.error);
        goto out;
    }
    if (r->rank == 0) u->timing = t;
    rc = 0;
out:
    pl_pp_exec_free(&ex);
out_body:
    pl_pp_uniform_free(&body);
    return rc;
}

static const int step_p[] = {2, 4};
static const int step_m[] = {1, 2, 4, 8, 16};

/* Your lists on the executor: one step of the block model (h = 16, L = 4,
 * a batch of 16) against one device, for p in {2, 4} and m in {1, 2, 4,
 * 8, 16}: the gradients, gathered from the stages, equal one device's
 * within 1e-6 + 1e-5 of the largest (the micro-batches' sums in another
 * order); the activations each stage held at once, measured from the
 * allocations, are the formula's sets; and with the uniform body the
 * bubble, on the modeled clock, is the formula's to 1e-12 relative (the
 * clock's sums of doubles: 1.4999999999999978 for 1.5). */
static void check_executor(const lab09_impl *impl, pl_pp_kind kind, const pl_digits *d, pl_check *c)
{
    char err[1200];
    pl_pp_schedule one;
    lab09_result ref, res;
    if (lab09_lists(&lab09_solution, PL_PP_GPIPE, 1, 1, &one, err, sizeof err)) {
        pl_check_fail(c, "%s", err);
        return;
    }
    int ok = !train(d, &one, PL_PP_GPIPE, 16, 4, 16, 1, &ref, err, sizeof err);
    pl_pp_schedule_free(&one);
    if (!pl_check_that(c, ok, "one device, one step: %s", err)) return;
    long n = ref.nparams;
    for (int a = 0; a < 2 && pl_check_ok(c); a++)
        for (int b = 0; b < 5 && pl_check_ok(c); b++) {
            int p = step_p[a], m = step_m[b];
            if (pl_check_short() && !(p == 4 && (m == 2 || m == 8))) continue;
            pl_pp_schedule s;
            if (lab09_lists(impl, kind, p, m, &s, err, sizeof err)) {
                pl_check_fail(c, "%s", err);
                break;
            }
            if (!pl_check_that(c, !train(d, &s, kind, 16, 4, 16, 1, &res, err, sizeof err),
                               "p=%d, m=%d, your %s lists on the executor: %s", p, m,
                               kind_title(kind), err)) {
                pl_pp_schedule_free(&s);
                break;
            }
            pl_check_that(c, res.init_hash == ref.init_hash,
                          "p=%d, m=%d: the stages' initial weights, gathered, hash to %08x; one "
                          "device's to %08x",
                          p, m, res.init_hash, ref.init_hash);
            long i = pl_check_ok(c) ? first_bad(res.grads, ref.grads, n, 1e-5) : -1;
            if (i >= 0)
                pl_check_fail(c,
                              "p=%d, m=%d: after one step of your %s lists, gradient %ld of %ld "
                              "(gathered from the stages) is %.7g; one device's is %.7g",
                              p, m, kind_title(kind), i, n, res.grads[i], ref.grads[i]);
            else
                for (long j = 0; j < n; j++) pl_check_that(c, 1, "counted");
            for (int r = 0; r < p && pl_check_ok(c); r++) {
                int sets = pl_pp_peak_formula(kind, p, m, 1, r);
                size_t want = (size_t)sets * res.acts_bytes[r];
                pl_check_that(c, res.measured_peak[r] == want && res.peak_bytes[r] == want,
                              "p=%d, m=%d: stage %d held at most %zu bytes of activations "
                              "(measured from the allocations; %zu counted); the formula's %d "
                              "micro-batch%s of %zu bytes is %zu",
                              p, m, r, res.measured_peak[r], res.peak_bytes[r], sets,
                              sets == 1 ? "" : "es", res.acts_bytes[r], want);
            }
            result_free(&res);
            /* the same lists with uniform stages: the bubble is the formula's */
            uniform_run u = {.s = &s};
            double fi, ft;
            pl_pp_bubble_formula(kind, p, m, 1, &fi, &ft);
            if (pl_check_ok(c) &&
                pl_check_that(c, !pl_world_run(p, NULL, 60, uniform_rank, &u, err, sizeof err),
                              "p=%d, m=%d, your %s lists on uniform stages: %s", p, m,
                              kind_title(kind), err))
                pl_check_that(c,
                              fabs(u.timing.of_ideal - fi) <= 1e-12 * fi &&
                                  fabs(u.timing.of_total - ft) <= 1e-12 * ft,
                              "p=%d, m=%d: on uniform stages (modeled clock) the bubble of your "
                              "%s lists is %.17g of the ideal time and %.17g of the total; the "
                              "formula says (p - 1)/m = %.17g and (p - 1)/(m + p - 1) = %.17g",
                              p, m, kind_title(kind), u.timing.of_ideal, u.timing.of_total, fi, ft);
            pl_pp_schedule_free(&s);
        }
    result_free(&ref);
}

/* 10 training steps of the default model (h = 64, L = 4, batch 64) with
 * SGD (momentum 0.9, lr 0.05: AdamW's division by the root of the second
 * moment grows the last bits of sums taken in another order; SGD keeps
 * them at the rounding level) through your lists, for (p, m) = (4, 8),
 * (4, 2) and (2, 1) (--short: (4, 8)): the gathered weights equal one
 * device's within 1e-5 relative (+ 1e-6). */
static void check_training(const lab09_impl *impl, pl_pp_kind kind, const pl_digits *d, pl_check *c)
{
    static const int cases[][2] = {{4, 8}, {4, 2}, {2, 1}};
    char err[1200];
    pl_pp_schedule one;
    lab09_result ref, res;
    if (lab09_lists(&lab09_solution, PL_PP_GPIPE, 1, 1, &one, err, sizeof err)) {
        pl_check_fail(c, "%s", err);
        return;
    }
    int ok = !train(d, &one, PL_PP_GPIPE, 64, 4, 64, 10, &ref, err, sizeof err);
    pl_pp_schedule_free(&one);
    if (!pl_check_that(c, ok, "one device, 10 steps: %s", err)) return;
    for (int a = 0; a < 3 && pl_check_ok(c); a++) {
        int p = cases[a][0], m = cases[a][1];
        if (pl_check_short() && a > 0) continue;
        pl_pp_schedule s;
        if (lab09_lists(impl, kind, p, m, &s, err, sizeof err)) {
            pl_check_fail(c, "%s", err);
            break;
        }
        ok = !train(d, &s, kind, 64, 4, 64, 10, &res, err, sizeof err);
        pl_pp_schedule_free(&s);
        if (!pl_check_that(c, ok, "p=%d, m=%d, 10 steps: %s", p, m, err)) break;
        for (long i = 0; i < res.nparams && pl_check_ok(c); i++)
            pl_check_that(c,
                          fabs(res.params[i] - ref.params[i]) <= 1e-6 + 1e-5 * fabs(ref.params[i]),
                          "p=%d, m=%d: after 10 steps through your %s lists, parameter %ld of "
                          "the gathered model is %.9g; one device's is %.9g",
                          p, m, kind_title(kind), i, res.params[i], ref.params[i]);
        pl_check_progress(c, "p=%d, m=%d: 10 steps equal one device's", p, m);
        result_free(&res);
    }
    result_free(&ref);
}

void lab09_check(int exercise, const lab09_impl *impl, pl_check *c)
{
    lab09_check_quick(exercise, impl, c);
    if (exercise == LAB09_WARMUP || !pl_check_ok(c)) return;
    pl_pp_kind kind = exercise == LAB09_GPIPE ? PL_PP_GPIPE : PL_PP_1F1B;
    lab09_impl o = mix(impl, exercise);
    pl_digits d;
    char err[1200];
    if (pl_digits_load("data/digits.csv", &d, err, sizeof err)) {
        pl_check_fail(c, "%s", err);
        return;
    }
    check_executor(&o, kind, &d, c);
    if (pl_check_ok(c)) check_training(&o, kind, &d, c);
    pl_digits_free(&d);
}

static const char *const exercises[] = {"gpipe", "warmup_1f1b", "one_f_one_b", NULL};

static void check_entry(int exercise, int use_solution, pl_check *c)
{
    lab09_check(exercise, use_solution ? &lab09_solution : &lab09_exercise, c);
}

const pl_lab lab09_pipeline_parallel = {"09_pipeline_parallel", exercises, check_entry};
