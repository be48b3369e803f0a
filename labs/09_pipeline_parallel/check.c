/*
 * Lab 09 — the checks. Exercise 0 is GPipe's lists, 1 the 1F1B warm-up
 * count, 2 1F1B's lists (with your warm-up count where it passes its own
 * check, the reference's otherwise).
 *
 *   the lists, for p in {1, 2, 3, 4, 8} and m in {1, 2, 3, 4, 7, 8, 32}
 *     (m = 1, m < p, m = p and m >> p): the validator (pl_pp_validate)
 *     accepts them (its message is the failure: the first bad operation by
 *     stage and position, or who waits for whom in a deadlock); GPipe runs
 *     every forward before every backward, 1F1B is 1F1B's order op by op;
 *     the most micro-batches a stage holds at once is the formula's (GPipe
 *     m, 1F1B min(p - r, m)); and on the validator's timeline of uniform
 *     stages (a forward 1 slot, a backward 2, messages free) the bubble is
 *     the formula's exactly, (p - 1)/m of the ideal time and (p - 1)/(m +
 *     p - 1) of the total;
 *   the warm-up count: min(p - r - 1, m) for every stage r, p in 1..8 and
 *     m in 1..40; a wrong count is shown with what it does to 1F1B's lists
 *     (the validator's message, or the activations and the time it costs);
 *   with the executor (make check; lab09 runs these without training):
 *     see lab09_check below.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "09_pipeline_parallel/lab09.h"
#include "paralab/plural.h"
#include "registry.h"

static const int grid_p[] = {1, 2, 3, 4, 8};
static const int grid_m[] = {1, 2, 3, 4, 7, 8, 32};
enum { NP = sizeof grid_p / sizeof grid_p[0], NM = sizeof grid_m / sizeof grid_m[0] };
/* the validator's timeline: a forward 1 slot, a backward 2 */
#define T_F 1.0
#define T_B 2.0

static const char *kind_title(pl_pp_kind k) { return k == PL_PP_GPIPE ? "GPipe" : "1F1B"; }

static int min_int(int a, int b) { return a < b ? a : b; }

int lab09_lists(const lab09_impl *impl, pl_pp_kind kind, int p, int m, pl_pp_schedule *s,
                char *err, size_t cap)
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
                         "warmup_1f1b(p=%d, m=%d, stage=%d) = %d: a count of forwards is 0..%d", p,
                         m, r, w, m);
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
                      "p=%d, m=%d: stage %d holds %d micro-batches' activations at once; %s's "
                      "formula says %d",
                      p, m, r, rep.peak_in_flight[r], kind_title(kind), want);
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
        for (int b = 0; b < NM && pl_check_ok(c); b++) check_lists(impl, kind, grid_p[a], grid_m[b], c);
}

/* The warm-up count; a wrong one is shown with the 1F1B lists it makes. */
static void check_warmup(const lab09_impl *impl, pl_check *c)
{
    for (int p = 1; p <= 8; p++)
        for (int m = 1; m <= 40; m++)
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
                lab09_impl with = {lab09_solution.gpipe, impl->warmup_1f1b,
                                   lab09_solution.one_f_one_b};
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
                    snprintf(what, sizeof what,
                             "with it the 1F1B lists run, but stage %d holds %d micro-batches' "
                             "activations at once (1F1B: %d) and a step takes %g slots (1F1B: %g)",
                             r, rep.peak_in_flight[r], ref.peak_in_flight[r], rep.makespan,
                             ref.makespan);
                } else
                    snprintf(what, sizeof what, "%s", err);
                if (rc == 0) pl_pp_schedule_free(&s);
                pl_check_fail(c,
                              "warmup_1f1b(p=%d, m=%d, stage=%d) = %d, but 1F1B's warm-up is "
                              "min(p - r - 1, m) = %d; %s",
                              p, m, r, got, want, what);
                return;
            }
}

/* The warm-up that 1F1B's lists are built with: yours where it passes. */
static lab09_impl mix(const lab09_impl *impl)
{
    lab09_impl o = {impl->gpipe, lab09_solution.warmup_1f1b, impl->one_f_one_b};
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
    lab09_impl o = mix(impl);
    check_schedule(&o, exercise == LAB09_GPIPE ? PL_PP_GPIPE : PL_PP_1F1B, c);
}

void lab09_check(int exercise, const lab09_impl *impl, pl_check *c)
{
    lab09_check_quick(exercise, impl, c);
}

static const char *const exercises[] = {"gpipe", "warmup_1f1b", "one_f_one_b", NULL};

static void check_entry(int exercise, int use_solution, pl_check *c)
{
    lab09_check(exercise, use_solution ? &lab09_solution : &lab09_exercise, c);
}

const pl_lab lab09_pipeline_parallel = {"09_pipeline_parallel", exercises, check_entry};
