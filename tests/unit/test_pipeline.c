/*
 * test_pipeline.c — pipeline schedules as data (paralab/pipeline.h):
 *   - the layer split (picotron's rule over the p v virtual stages) and its
 *     refusal;
 *   - the shipped lists written out by hand for small cases (1F1B, GPipe,
 *     interleaved, ZB-H1) and the timeline of one case op by op under both
 *     send semantics, derived by hand;
 *   - over p in {1,2,3,4,8}, m in {1,2,3,4,7,8,16,32}, v in {1,2,4}: every
 *     accepted configuration builds and validates; refused ones give the
 *     exact rule; op counts, sends and receives per stage; the forwards
 *     before the first backward against the warm-up formulas; the peak of
 *     activations in flight against pl_pp_peak_formula on every stage; the
 *     bubble of the timeline (t_f = t_b = 1) against the formula in both
 *     normalisations to 1e-12 (buffered sends: all five; rendezvous sends:
 *     naive, GPipe, 1F1B); ZB-H1's bubble a third of 1F1B's;
 *   - interleaved with v = 1 is 1F1B op for op;
 *   - the validator's failures, each with its exact message: a backward
 *     before its forward, a missing op, a duplicated op, another stage's
 *     chunk, W before B, a deadlocking order (a cycle of receives, and
 *     Megatron-LM's interleaved order under rendezvous sends: a cycle of
 *     sends), a mismatched message order.
 * Pure host code; the whole suite runs in well under a second.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/pipeline.h"
#include "suites.h"

/* ---- helpers ---------------------------------------------------------------------------- */

/* Parses one op as pl_pp_op_name writes it: "F3", "BW0", "B2.1", "W2". */
static pl_pp_op parse_op(const char *t)
{
    pl_pp_op o = {PL_PP_F, 0, 0};
    if (t[0] == 'B' && t[1] == 'W') {
        o.kind = PL_PP_BW;
        t += 2;
    } else {
        o.kind = t[0] == 'F' ? PL_PP_F : t[0] == 'B' ? PL_PP_B : PL_PP_W;
        t += 1;
    }
    o.micro_batch = atoi(t);
    const char *dot = strchr(t, '.');
    if (dot) o.chunk = atoi(dot + 1);
    return o;
}

/* A schedule written by hand: lists[r] = "F0 F1 BW0 ..." for r < p. */
static void from_text(pl_pp_schedule *s, int p, int m, int v, const char *const *lists)
{
    char err[256];
    CU_ASSERT_EQUAL_FATAL(pl_pp_schedule_init(s, p, m, v, err, sizeof err), 0);
    for (int r = 0; r < p; r++) {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s", lists[r]);
        for (char *t = strtok(buf, " "); t; t = strtok(NULL, " "))
            CU_ASSERT_EQUAL(pl_pp_push(s, r, parse_op(t)), 0);
    }
}

/* Stage r's list as text, the way from_text reads it. */
static void to_text(const pl_pp_schedule *s, int r, char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < s->n[r] && at < cap; i++) {
        char nm[32];
        pl_pp_op_name(s->ops[r][i], s->chunks, nm, sizeof nm);
        at += (size_t)snprintf(buf + at, cap - at, "%s%s", i ? " " : "", nm);
    }
}

/* Asserts the validator refuses lists with exactly msg (both send semantics). */
static void expect_invalid(int p, int m, int v, const char *const *lists, const char *msg)
{
    pl_pp_schedule s;
    char err[1024] = "";
    from_text(&s, p, m, v, lists);
    for (int sends = PL_PP_RENDEZVOUS; sends <= PL_PP_BUFFERED; sends++) {
        err[0] = 0;
        CU_ASSERT_EQUAL(
            pl_pp_validate_sends(&s, (pl_pp_sends)sends, 1, 1, 1, NULL, err, sizeof err), -1);
        if (strcmp(err, msg) != 0)
            fprintf(stderr, "\n  sends %d: got  \"%s\"\n  expected \"%s\"\n", sends, err, msg);
        CU_ASSERT_STRING_EQUAL(err, msg);
    }
    pl_pp_schedule_free(&s);
}

static int imin(int a, int b) { return a < b ? a : b; }

/* ---- the split ---------------------------------------------------------------------------- */

static void test_split(void)
{
    int first[64], count[64];
    char err[256];
    /* even: 8 blocks over 4 stages */
    CU_ASSERT_EQUAL(pl_pp_split(8, 4, 1, first, count, err, sizeof err), 0);
    const int f8[] = {0, 2, 4, 6}, c8[] = {2, 2, 2, 2};
    for (int q = 0; q < 4; q++) {
        CU_ASSERT_EQUAL(first[q], f8[q]);
        CU_ASSERT_EQUAL(count[q], c8[q]);
    }
    /* uneven: 10 over 4: floor 2 each, one more for the first 10 mod 4 = 2 */
    CU_ASSERT_EQUAL(pl_pp_split(10, 4, 1, first, count, err, sizeof err), 0);
    const int f10[] = {0, 3, 6, 8}, c10[] = {3, 3, 2, 2};
    for (int q = 0; q < 4; q++) {
        CU_ASSERT_EQUAL(first[q], f10[q]);
        CU_ASSERT_EQUAL(count[q], c10[q]);
    }
    /* interleaved: 11 blocks over p = 2, v = 3: 6 virtual stages, 2 each, one
     * more for the first 5 (virtual stage q = chunk q / 2 of stage q % 2) */
    CU_ASSERT_EQUAL(pl_pp_split(11, 2, 3, first, count, err, sizeof err), 0);
    const int f11[] = {0, 2, 4, 6, 8, 10}, c11[] = {2, 2, 2, 2, 2, 1};
    for (int q = 0; q < 6; q++) {
        CU_ASSERT_EQUAL(first[q], f11[q]);
        CU_ASSERT_EQUAL(count[q], c11[q]);
    }
    CU_ASSERT_EQUAL(pl_pp_split(13, 2, 3, first, count, err, sizeof err), 0);
    const int f13[] = {0, 3, 5, 7, 9, 11}, c13[] = {3, 2, 2, 2, 2, 2};
    for (int q = 0; q < 6; q++) {
        CU_ASSERT_EQUAL(first[q], f13[q]);
        CU_ASSERT_EQUAL(count[q], c13[q]);
    }
    /* one block per stage is enough */
    CU_ASSERT_EQUAL(pl_pp_split(4, 4, 1, first, count, err, sizeof err), 0);
    for (int q = 0; q < 4; q++) {
        CU_ASSERT_EQUAL(first[q], q);
        CU_ASSERT_EQUAL(count[q], 1);
    }
    /* refused */
    CU_ASSERT_EQUAL(pl_pp_split(3, 4, 1, first, count, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "3 blocks cannot be cut into 4 stages: each stage needs a block, "
                                "so at least 4 blocks");
    CU_ASSERT_EQUAL(pl_pp_split(5, 4, 2, first, count, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "5 blocks cannot be cut into 4 stages of 2 chunks: each of the 8 "
                                "virtual stages needs a block, so at least 8 blocks");
    CU_ASSERT_EQUAL(pl_pp_split(8, 0, 1, first, count, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "0 pipeline stages: allowed 1..64");
}

/* ---- names, constructors, lists ------------------------------------------------------------ */

static void test_names(void)
{
    char b[32], err[256];
    pl_pp_op_name(pl_pp_forward(3, 0), 1, b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "F3");
    pl_pp_op_name(pl_pp_backward(0, 0), 1, b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "BW0");
    pl_pp_op_name(pl_pp_backward_input(2, 1), 2, b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "B2.1");
    pl_pp_op_name(pl_pp_backward_weight(2, 0), 1, b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "W2");
    pl_pp_op_name(pl_pp_forward(1, 0), 4, b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "F1.0");
    pl_pp_op o = pl_pp_backward_weight(7, 3);
    CU_ASSERT_EQUAL(o.kind, PL_PP_W);
    CU_ASSERT_EQUAL(o.micro_batch, 7);
    CU_ASSERT_EQUAL(o.chunk, 3);
    const char *names[] = {"naive", "gpipe", "1f1b", "interleaved", "zb-h1"};
    for (int k = 0; k < PL_PP_NUM_KINDS; k++) {
        CU_ASSERT_STRING_EQUAL(pl_pp_kind_name((pl_pp_kind)k), names[k]);
        CU_ASSERT_EQUAL(pl_pp_kind_parse(names[k], err, sizeof err), k);
    }
    CU_ASSERT_EQUAL(pl_pp_kind_parse("zb-h2", err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "no schedule 'zb-h2': the schedules are naive, gpipe, 1f1b, "
                                "interleaved and zb-h1");
}

static void test_lists(void)
{
    pl_pp_schedule s;
    char err[256];
    CU_ASSERT_EQUAL(pl_pp_schedule_init(&s, 0, 4, 1, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "0 pipeline stages: allowed 1..64");
    CU_ASSERT_EQUAL(pl_pp_schedule_init(&s, 2, 4097, 1, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "4097 micro-batches: allowed 1..4096");
    CU_ASSERT_EQUAL(pl_pp_schedule_init(&s, 2, 4, 9, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "9 model chunks per stage: allowed 1..8");
    CU_ASSERT_EQUAL_FATAL(pl_pp_schedule_init(&s, 2, 2, 1, err, sizeof err), 0);
    CU_ASSERT_EQUAL(s.cap, 6);
    CU_ASSERT_EQUAL(s.kind, -1);
    for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(pl_pp_push(&s, 1, pl_pp_forward(0, 0)), 0);
    CU_ASSERT_EQUAL(pl_pp_push(&s, 1, pl_pp_forward(0, 0)), -1); /* full */
    CU_ASSERT_EQUAL(pl_pp_push(&s, 2, pl_pp_forward(0, 0)), -1); /* no stage 2 */
    CU_ASSERT_EQUAL(pl_pp_push(&s, -1, pl_pp_forward(0, 0)), -1);
    CU_ASSERT_EQUAL(s.n[0], 0);
    CU_ASSERT_EQUAL(s.n[1], 6);
    pl_pp_schedule_free(&s);
    CU_ASSERT_PTR_NULL(s.ops[1]);
}

/* ---- the shipped lists, by hand ------------------------------------------------------------ */

static void expect_lists(pl_pp_kind kind, int p, int m, int v, const char *const *want)
{
    pl_pp_schedule s;
    char err[256], got[4096];
    CU_ASSERT_EQUAL_FATAL(pl_pp_build(&s, kind, p, m, v, err, sizeof err), 0);
    CU_ASSERT_EQUAL(s.kind, (int)kind);
    for (int r = 0; r < p; r++) {
        to_text(&s, r, got, sizeof got);
        if (strcmp(got, want[r]) != 0)
            fprintf(stderr, "\n  %s stage %d: got \"%s\"\n  expected \"%s\"\n",
                    pl_pp_kind_name(kind), r, got, want[r]);
        CU_ASSERT_STRING_EQUAL(got, want[r]);
    }
    pl_pp_schedule_free(&s);
}

static void test_shipped_by_hand(void)
{
    /* 1F1B p = 4, m = 6: warm-up 3, 2, 1, 0 forwards, then F/BW pairs, then the
     * cool-down (Megatron-LM forward_backward_pipelining_without_interleaving) */
    const char *f1b[] = {
        "F0 F1 F2 F3 BW0 F4 BW1 F5 BW2 BW3 BW4 BW5",
        "F0 F1 F2 BW0 F3 BW1 F4 BW2 F5 BW3 BW4 BW5",
        "F0 F1 BW0 F2 BW1 F3 BW2 F4 BW3 F5 BW4 BW5",
        "F0 BW0 F1 BW1 F2 BW2 F3 BW3 F4 BW4 F5 BW5",
    };
    expect_lists(PL_PP_1F1B, 4, 6, 1, f1b);
    /* 1F1B with m < p: stage 0 holds all m */
    const char *f1b_small[] = {"F0 F1 BW0 BW1", "F0 F1 BW0 BW1", "F0 BW0 F1 BW1"};
    expect_lists(PL_PP_1F1B, 3, 2, 1, f1b_small);
    /* GPipe: all forwards, then the backwards from the last micro-batch */
    const char *gp[] = {"F0 F1 F2 BW2 BW1 BW0", "F0 F1 F2 BW2 BW1 BW0"};
    expect_lists(PL_PP_GPIPE, 2, 3, 1, gp);
    const char *nv[] = {"F0 BW0 F1 BW1", "F0 BW0 F1 BW1", "F0 BW0 F1 BW1"};
    expect_lists(PL_PP_NAIVE, 3, 2, 1, nv);
    /* interleaved p = 2, m = 4, v = 2: chunk-forwards in groups of p =
     * (0,0) (1,0) (0,1) (1,1) (2,0) (3,0) (2,1) (3,1), chunk-backwards the
     * same micro-batches with chunks reversed; warm-up 2 (p-r-1) + (v-1) p = 4
     * and 2 */
    const char *il[] = {
        "F0.0 F1.0 F0.1 F1.1 F2.0 BW0.1 F3.0 BW1.1 F2.1 BW0.0 F3.1 BW1.0 BW2.1 BW3.1 BW2.0 BW3.0",
        "F0.0 F1.0 F0.1 BW0.1 F1.1 BW1.1 F2.0 BW0.0 F3.0 BW1.0 F2.1 BW2.1 F3.1 BW3.1 BW2.0 BW3.0",
    };
    expect_lists(PL_PP_INTERLEAVED, 2, 4, 2, il);
    /* ZB-H1 p = 3, m = 4: 1F1B's order with B for BW, stage r's W's r steps
     * late, the rest at the end */
    const char *zb[] = {
        "F0 F1 F2 B0 W0 F3 B1 W1 B2 W2 B3 W3",
        "F0 F1 B0 F2 B1 W0 F3 B2 W1 B3 W2 W3",
        "F0 B0 F1 B1 F2 B2 W0 F3 B3 W1 W2 W3",
    };
    expect_lists(PL_PP_ZB_H1, 3, 4, 1, zb);
}

/* ZB-H1 p = 2, m = 3 with t_f = t_b = t_w = 1, op by op (derived by hand in
 * the comments): buffered sends reach 3 m + p - 1 = 10; rendezvous sends
 * 11, since stage 1 waits after B1 until stage 0 has run W0 and F2. */
static void test_timeline_by_hand(void)
{
    pl_pp_schedule s;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(pl_pp_build(&s, PL_PP_ZB_H1, 2, 3, 1, err, sizeof err), 0);
    /* stage 0: F0 F1 B0 W0 F2 B1 W1 B2 W2; stage 1: F0 B0 F1 B1 W0 F2 B2 W1 W2 */
    const double buf0[] = {0, 1, 3, 4, 5, 6, 7, 8, 9}, buf1[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const double rv0[] = {0, 1, 3, 4, 5, 7, 8, 9, 10}, rv1[] = {1, 2, 3, 4, 6, 7, 8, 9, 10};
    double a[9], b[9];
    double *rows[PL_PP_MAX_STAGES] = {a, b};
    CU_ASSERT_EQUAL(pl_pp_timeline(&s, PL_PP_BUFFERED, 1, 1, 1, rows, err, sizeof err), 0);
    for (int i = 0; i < 9; i++) {
        CU_ASSERT_DOUBLE_EQUAL(a[i], buf0[i], 0);
        CU_ASSERT_DOUBLE_EQUAL(b[i], buf1[i], 0);
    }
    CU_ASSERT_EQUAL(pl_pp_timeline(&s, PL_PP_RENDEZVOUS, 1, 1, 1, rows, err, sizeof err), 0);
    for (int i = 0; i < 9; i++) {
        CU_ASSERT_DOUBLE_EQUAL(a[i], rv0[i], 0);
        CU_ASSERT_DOUBLE_EQUAL(b[i], rv1[i], 0);
    }
    pl_pp_report rep;
    CU_ASSERT_EQUAL(pl_pp_validate_sends(&s, PL_PP_BUFFERED, 1, 1, 1, &rep, err, sizeof err), 0);
    CU_ASSERT_DOUBLE_EQUAL(rep.makespan, 10, 0);
    CU_ASSERT_EQUAL(pl_pp_validate(&s, 1, 1, 1, &rep, err, sizeof err), 0);
    CU_ASSERT_DOUBLE_EQUAL(rep.makespan, 11, 0);
    CU_ASSERT_DOUBLE_EQUAL(rep.busy[0], 9, 0);
    CU_ASSERT_DOUBLE_EQUAL(rep.busy[1], 9, 0);
    CU_ASSERT_EQUAL(pl_pp_timeline(&s, (pl_pp_sends)2, 1, 1, 1, rows, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "sends 2: allowed PL_PP_RENDEZVOUS (0) or PL_PP_BUFFERED (1)");
    pl_pp_schedule_free(&s);
}

/* ---- the grid ------------------------------------------------------------------------------ */

static const int grid_p[] = {1, 2, 3, 4, 8};
static const int grid_m[] = {1, 2, 3, 4, 7, 8, 16, 32};
static const int grid_v[] = {1, 2, 4};
#define N_OF(a) ((int)(sizeof(a) / sizeof *(a)))

/* The rule pl_pp_accepts must give, written out independently; "" if none. */
static void expected_refusal(pl_pp_kind kind, int p, int m, int v, char *buf, size_t cap)
{
    buf[0] = 0;
    if (kind != PL_PP_INTERLEAVED) {
        if (v != 1)
            snprintf(buf, cap,
                     "%s: v = %d chunks per stage, but only the interleaved schedule runs more "
                     "than one chunk per stage (v must be 1)",
                     pl_pp_kind_name(kind), v);
        return;
    }
    if (p < 2)
        snprintf(buf, cap,
                 "interleaved: p = %d stage, but the interleaved schedule needs at least 2 "
                 "(Megatron-LM: pipeline parallelism of size > 1; with one stage every chunk "
                 "would send to itself)",
                 p);
    else if (m % p)
        snprintf(buf, cap,
                 "interleaved: m = %d micro-batches is not a multiple of p = %d stages "
                 "(Megatron-LM's interleaved schedule runs micro-batches in groups of p)",
                 m, p);
}

/* One accepted configuration: counts, warm-up, peaks, messages and, where
 * there is a formula, the bubble. Returns the bubble time (buffered sends). */
static double check_config(pl_pp_kind kind, int p, int m, int v)
{
    pl_pp_schedule s;
    char err[1024];
    CU_ASSERT_EQUAL_FATAL(pl_pp_build(&s, kind, p, m, v, err, sizeof err), 0);
    int split = kind == PL_PP_ZB_H1;
    double t_w = split ? 1 : 0; /* ZB-H1: t_f = t_b = t_w = 1; the others t_f = t_b = 1 */
    pl_pp_report rep;
    int rc = pl_pp_validate_sends(&s, PL_PP_BUFFERED, 1, 1, t_w, &rep, err, sizeof err);
    if (rc) fprintf(stderr, "\n  %s p=%d m=%d v=%d: %s\n", pl_pp_kind_name(kind), p, m, v, err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    for (int r = 0; r < p; r++) {
        int nf = 0, nbw = 0, nb = 0, nw = 0, before = -1;
        for (int i = 0; i < s.n[r]; i++) {
            int k = s.ops[r][i].kind;
            nf += k == PL_PP_F;
            nbw += k == PL_PP_BW;
            nb += k == PL_PP_B;
            nw += k == PL_PP_W;
            if (k != PL_PP_F && before < 0) before = nf;
        }
        CU_ASSERT_EQUAL(nf, m * v);
        CU_ASSERT_EQUAL(nbw, split ? 0 : m * v);
        CU_ASSERT_EQUAL(nb, split ? m * v : 0);
        CU_ASSERT_EQUAL(nw, split ? m * v : 0);
        CU_ASSERT_EQUAL(s.n[r], (split ? 3 : 2) * m * v);
        /* the forwards before the first backward: the warm-up and the first
         * steady forward */
        int want_before = kind == PL_PP_NAIVE   ? 1
                          : kind == PL_PP_GPIPE ? m
                          : kind == PL_PP_INTERLEAVED
                              ? imin(pl_pp_warmup_interleaved(p, m, v, r) + 1, m * v)
                              : imin(pl_pp_warmup_1f1b(p, m, r) + 1, m);
        CU_ASSERT_EQUAL(before, want_before);
        int peak = pl_pp_peak_formula(kind, p, m, v, r);
        if (rep.peak_in_flight[r] != peak)
            fprintf(stderr, "\n  %s p=%d m=%d v=%d stage %d: peak %d, formula %d\n",
                    pl_pp_kind_name(kind), p, m, v, r, rep.peak_in_flight[r], peak);
        CU_ASSERT_EQUAL(rep.peak_in_flight[r], peak);
        /* messages: an activation out of every F but the last virtual stage's,
         * a gradient out of every backward but virtual stage 0's; as many in */
        int out = 0, in = 0;
        for (int c = 0; c < v; c++) {
            int q = c * p + r;
            out += (q < p * v - 1) + (q > 0);
            in += (q > 0) + (q < p * v - 1);
        }
        CU_ASSERT_EQUAL(rep.sends[r], out * m);
        CU_ASSERT_EQUAL(rep.recvs[r], in * m);
        CU_ASSERT_DOUBLE_EQUAL(rep.busy[r], (2 + t_w) * m * v, 0);
    }
    double bubble = rep.makespan - rep.busy[0];
    double of_ideal, of_total;
    if (pl_pp_bubble_formula(kind, p, m, v, &of_ideal, &of_total) == 0) {
        double ideal = rep.busy[0]; /* m v (t_f + t_b [+ t_w]) */
        if (fabs(bubble / ideal - of_ideal) > 1e-12 ||
            fabs(bubble / rep.makespan - of_total) > 1e-12)
            fprintf(stderr, "\n  %s p=%d m=%d v=%d: bubble %g of %g (formula %g, %g)\n",
                    pl_pp_kind_name(kind), p, m, v, bubble, rep.makespan, of_ideal, of_total);
        CU_ASSERT_DOUBLE_EQUAL(bubble / ideal, of_ideal, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(bubble / rep.makespan, of_total, 1e-12);
    } else {
        CU_ASSERT(kind == PL_PP_ZB_H1 && m < p);
    }
    /* rendezvous sends: naive, GPipe and 1F1B run and reach the same timeline */
    if (kind == PL_PP_NAIVE || kind == PL_PP_GPIPE || kind == PL_PP_1F1B) {
        pl_pp_report rv;
        CU_ASSERT_EQUAL(pl_pp_validate(&s, 1, 1, 0, &rv, err, sizeof err), 0);
        CU_ASSERT_DOUBLE_EQUAL(rv.makespan, rep.makespan, 0);
    }
    pl_pp_schedule_free(&s);
    return bubble;
}

static void test_grid(void)
{
    char err[1024], want[1024];
    int accepted[PL_PP_NUM_KINDS] = {0};
    for (int kind = 0; kind < PL_PP_NUM_KINDS; kind++)
        for (int a = 0; a < N_OF(grid_p); a++)
            for (int b = 0; b < N_OF(grid_m); b++)
                for (int c = 0; c < N_OF(grid_v); c++) {
                    int p = grid_p[a], m = grid_m[b], v = grid_v[c];
                    expected_refusal((pl_pp_kind)kind, p, m, v, want, sizeof want);
                    err[0] = 0;
                    int rc = pl_pp_accepts((pl_pp_kind)kind, p, m, v, err, sizeof err);
                    CU_ASSERT_EQUAL(rc, want[0] ? -1 : 0);
                    if (want[0]) {
                        CU_ASSERT_STRING_EQUAL(err, want);
                        pl_pp_schedule s;
                        CU_ASSERT_EQUAL(pl_pp_build(&s, (pl_pp_kind)kind, p, m, v, err, sizeof err),
                                        -1);
                        CU_ASSERT_STRING_EQUAL(err, want);
                        continue;
                    }
                    accepted[kind]++;
                    check_config((pl_pp_kind)kind, p, m, v);
                }
    /* the grid accepts: 40 (p, m) for each v = 1 kind; interleaved: p >= 2 and
     * m a multiple of p, for v = 1, 2, 4 */
    for (int kind = 0; kind < PL_PP_NUM_KINDS; kind++)
        if (kind != PL_PP_INTERLEAVED) CU_ASSERT_EQUAL(accepted[kind], 40);
    /* p = 2: m 2, 4, 8, 16, 32; p = 3: 3; p = 4: 4, 8, 16, 32; p = 8: 8, 16, 32 */
    CU_ASSERT_EQUAL(accepted[PL_PP_INTERLEAVED], 3 * (5 + 1 + 4 + 3));
}

/* ZB-H1 against 1F1B with the same costs t_f = t_b = t_w = 1 (1F1B's BW
 * takes t_b + t_w): (p - 1)(t_f + t_b - t_w) = p - 1 against 3 (p - 1). */
static void test_zb_third(void)
{
    for (int a = 0; a < N_OF(grid_p); a++)
        for (int b = 0; b < N_OF(grid_m); b++) {
            int p = grid_p[a], m = grid_m[b];
            if (m < p) continue;
            pl_pp_schedule zb, f1;
            pl_pp_report rz, rf;
            char err[256];
            CU_ASSERT_EQUAL_FATAL(pl_pp_build(&zb, PL_PP_ZB_H1, p, m, 1, err, sizeof err), 0);
            CU_ASSERT_EQUAL_FATAL(pl_pp_build(&f1, PL_PP_1F1B, p, m, 1, err, sizeof err), 0);
            CU_ASSERT_EQUAL(
                pl_pp_validate_sends(&zb, PL_PP_BUFFERED, 1, 1, 1, &rz, err, sizeof err), 0);
            CU_ASSERT_EQUAL(
                pl_pp_validate_sends(&f1, PL_PP_BUFFERED, 1, 1, 1, &rf, err, sizeof err), 0);
            CU_ASSERT_DOUBLE_EQUAL(rz.makespan - rz.busy[0], p - 1, 0);
            CU_ASSERT_DOUBLE_EQUAL(rf.makespan - rf.busy[0], 3 * (p - 1), 0);
            CU_ASSERT_DOUBLE_EQUAL(rf.busy[0], rz.busy[0], 0);
            pl_pp_schedule_free(&zb);
            pl_pp_schedule_free(&f1);
        }
}

static void test_interleaved_v1_is_1f1b(void)
{
    for (int p = 2; p <= 8; p++)
        for (int m = p; m <= 4 * p; m += p) {
            pl_pp_schedule a, b;
            char err[256];
            CU_ASSERT_EQUAL_FATAL(pl_pp_build(&a, PL_PP_INTERLEAVED, p, m, 1, err, sizeof err), 0);
            CU_ASSERT_EQUAL_FATAL(pl_pp_build(&b, PL_PP_1F1B, p, m, 1, err, sizeof err), 0);
            for (int r = 0; r < p; r++) {
                CU_ASSERT_EQUAL_FATAL(a.n[r], b.n[r]);
                for (int i = 0; i < a.n[r]; i++) {
                    CU_ASSERT_EQUAL(a.ops[r][i].kind, b.ops[r][i].kind);
                    CU_ASSERT_EQUAL(a.ops[r][i].micro_batch, b.ops[r][i].micro_batch);
                    CU_ASSERT_EQUAL(a.ops[r][i].chunk, 0);
                }
                CU_ASSERT_EQUAL(pl_pp_warmup_interleaved(p, m, 1, r), pl_pp_warmup_1f1b(p, m, r));
            }
            pl_pp_schedule_free(&a);
            pl_pp_schedule_free(&b);
        }
    /* the formulas themselves, by hand */
    CU_ASSERT_EQUAL(pl_pp_warmup_1f1b(4, 8, 0), 3);
    CU_ASSERT_EQUAL(pl_pp_warmup_1f1b(4, 2, 0), 2);
    CU_ASSERT_EQUAL(pl_pp_warmup_1f1b(4, 8, 3), 0);
    CU_ASSERT_EQUAL(pl_pp_warmup_interleaved(4, 8, 2, 0), 10); /* 2*3 + 1*4 */
    CU_ASSERT_EQUAL(pl_pp_warmup_interleaved(4, 8, 2, 3), 4);
    CU_ASSERT_EQUAL(pl_pp_warmup_interleaved(4, 4, 2, 0), 8); /* capped at m v */
    CU_ASSERT_EQUAL(pl_pp_peak_formula(PL_PP_INTERLEAVED, 4, 8, 2, 0), 11);
    CU_ASSERT_EQUAL(pl_pp_peak_formula(PL_PP_1F1B, 4, 8, 1, 1), 3);
    CU_ASSERT_EQUAL(pl_pp_peak_formula(PL_PP_ZB_H1, 4, 8, 1, 3), 4);
    CU_ASSERT_EQUAL(pl_pp_peak_formula(PL_PP_GPIPE, 4, 8, 1, 3), 8);
    double a, b;
    CU_ASSERT_EQUAL(pl_pp_bubble_formula(PL_PP_INTERLEAVED, 4, 8, 2, &a, &b), 0);
    CU_ASSERT_DOUBLE_EQUAL(a, 3.0 / 16, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(b, 3.0 / 19, 1e-15);
    CU_ASSERT_EQUAL(pl_pp_bubble_formula(PL_PP_ZB_H1, 4, 8, 1, &a, &b), 0);
    CU_ASSERT_DOUBLE_EQUAL(a, 3.0 / 24, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(b, 3.0 / 27, 1e-15);
    CU_ASSERT_EQUAL(pl_pp_bubble_formula(PL_PP_ZB_H1, 4, 3, 1, &a, &b), -1);
    CU_ASSERT_EQUAL(pl_pp_bubble_formula(PL_PP_NAIVE, 4, 3, 1, &a, &b), 0);
    CU_ASSERT_DOUBLE_EQUAL(a, 3, 0);
    CU_ASSERT_DOUBLE_EQUAL(b, 0.75, 0);
}

/* ---- the validator's failures ------------------------------------------------------------- */

static void test_bad_orders(void)
{
    /* a backward before its forward */
    const char *bw_first[] = {"F0 F1 BW0 BW1", "BW0 F0 F1 BW1"};
    expect_invalid(2, 2, 1, bw_first,
                   "stage 1, op 0 (BW0): the backward of micro-batch 0 comes before its forward "
                   "(F0 is op 1)");
    /* a missing op */
    const char *missing[] = {"F0 BW0 BW1", "F0 BW0 F1 BW1"};
    expect_invalid(2, 2, 1, missing,
                   "stage 0: F1 is missing (the stage runs one F and one BW, or one B and one W, "
                   "of every micro-batch and chunk)");
    const char *missing_bw[] = {"F0 F1 BW0", "F0 BW0 F1 BW1"};
    expect_invalid(2, 2, 1, missing_bw,
                   "stage 0: the backward of micro-batch 1 is missing (no BW1, nor B1 and W)");
    const char *missing_w[] = {"F0 B0 W0 F1 B1", "F0 B0 W0 F1 B1 W1"};
    expect_invalid(2, 2, 1, missing_w, "stage 0, op 4 (B1): its W1 is missing (a B needs its W)");
    /* a duplicated op */
    const char *dup[] = {"F0 F0 F1 BW0 BW1", "F0 BW0 F1 BW1"};
    expect_invalid(2, 2, 1, dup, "stage 0, op 1 (F0): F0 again (it is op 0; each op runs once)");
    /* another stage's chunk: chunks are a stage's own 0..v-1 */
    const char *chunk[] = {"F0.0 F0.1 BW0.1 BW0.0", "F0.0 F0.2 BW0.1 BW0.0"};
    expect_invalid(2, 1, 2, chunk,
                   "stage 1, op 1 (F0.2): chunk 2 is not one of this stage's chunks (v = 2: 0..1)");
    const char *chunk1[] = {"F0 F0.1 BW0", "F0 BW0"};
    expect_invalid(2, 1, 1, chunk1,
                   "stage 0, op 1 (F0.1): chunk 1 is not one of this stage's chunks (v = 1: 0..0)");
    const char *range[] = {"F0 F5 BW0", "F0 BW0"};
    expect_invalid(2, 1, 1, range,
                   "stage 0, op 1 (F5): micro-batch 5 is out of range (m = 1: 0..0)");
    /* W before B */
    const char *w_first[] = {"F0 W0 B0", "F0 B0 W0"};
    expect_invalid(2, 1, 1, w_first,
                   "stage 0, op 1 (W0): the weight gradient of micro-batch 0 comes before its "
                   "input gradient (B0 is op 2)");
    /* BW and B for one micro-batch */
    const char *both[] = {"F0 BW0 B0 W0 F1 BW1", "F0 BW0 F1 BW1"};
    expect_invalid(2, 2, 1, both,
                   "stage 0, op 2 (B0): micro-batch 0 already has BW0 (op 1): a backward is one "
                   "BW, or one B and one W, not both");
    /* a real cycle: stage 0 wants BW0's gradient before it sends F1's output;
     * stage 1 runs F1 (which needs that output) before BW0 */
    const char *cycle[] = {"F0 BW0 F1 BW1", "F0 F1 BW0 BW1"};
    expect_invalid(2, 2, 1, cycle,
                   "deadlock: stage 0 waits at op 1 (BW0) to receive from stage 1, which waits at "
                   "op 1 (F1) to receive from stage 0: a cycle, no stage in it can go on");
    /* three stages, the cycle 1 -> 2 -> 1 named from the first stage that
     * waits in it */
    const char *cycle3[] = {"F0 F1 BW0 BW1", "F0 BW0 F1 BW1", "F0 F1 BW0 BW1"};
    expect_invalid(3, 2, 1, cycle3,
                   "deadlock: stage 1 waits at op 1 (BW0) to receive from stage 2, which waits at "
                   "op 1 (F1) to receive from stage 1: a cycle, no stage in it can go on");
    /* mismatched message order: stage 1 sends BW0's gradient first, stage 0
     * takes its first gradient for BW1 */
    const char *order[] = {"F0 F1 BW1 BW0", "F0 F1 BW0 BW1"};
    expect_invalid(2, 2, 1, order,
                   "stage 0, op 2 (BW1): its receive is the 1st from stage 1 and must bring the "
                   "gradient for BW1, but stage 1's 1st send to stage 0 (after its op 2, BW0) "
                   "carries the gradient from BW0 (messages between two stages are matched in "
                   "order)");
    const char *order_f[] = {"F0 F1 BW0 BW1", "F1 F0 BW0 BW1"};
    expect_invalid(2, 2, 1, order_f,
                   "stage 1, op 0 (F1): its receive is the 1st from stage 0 and must bring the "
                   "input of F1, but stage 0's 1st send to stage 1 (after its op 0, F0) carries "
                   "the output of F0 (messages between two stages are matched in order)");
}

/* A cycle of sends, which only rendezvous sends have: Megatron-LM's
 * interleaved order with m > p, grouped one receive per group. Buffered
 * sends run it. */
static void test_send_deadlock(void)
{
    pl_pp_schedule s;
    pl_pp_report rep;
    char err[1024];
    CU_ASSERT_EQUAL_FATAL(pl_pp_build(&s, PL_PP_INTERLEAVED, 4, 8, 2, err, sizeof err), 0);
    CU_ASSERT_EQUAL(pl_pp_validate(&s, 1, 1, 0, &rep, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "deadlock: stage 0 waits after op 11 (BW0.1) to send to stage 3, "
                                "which waits after op 11 (BW3.1) to send to stage 2, which waits "
                                "after op 11 (BW2.1) to send to stage 1, which waits after op 11 "
                                "(BW1.1) to send to stage 0: a cycle, no stage in it can go on");
    CU_ASSERT_EQUAL(pl_pp_validate_sends(&s, PL_PP_BUFFERED, 1, 1, 0, &rep, err, sizeof err), 0);
    CU_ASSERT_DOUBLE_EQUAL(rep.makespan, 2 * 16 + 2 * 3, 0); /* (m v + p - 1)(t_f + t_b) */
    pl_pp_schedule_free(&s);
}

/* The interleaved order all-forward-all-backward (pl_pp_build_breadth_first): runs under rendezvous
 * sends for every configuration the interleaved rules accept, holds all m v chunk activations, and
 * reaches (p - 1)/(v m) exactly under both semantics. */
static void test_breadth_first(void)
{
    char err[1024];
    pl_pp_schedule s;
    const char *small[] = {
        "F0.0 F1.0 F0.1 F1.1 F2.0 F3.0 F2.1 F3.1 BW0.1 BW1.1 BW0.0 BW1.0 BW2.1 BW3.1 BW2.0 BW3.0",
        "F0.0 F1.0 F0.1 F1.1 F2.0 F3.0 F2.1 F3.1 BW0.1 BW1.1 BW0.0 BW1.0 BW2.1 BW3.1 BW2.0 BW3.0",
    };
    char got[4096];
    CU_ASSERT_EQUAL_FATAL(pl_pp_build_breadth_first(&s, 2, 4, 2, err, sizeof err), 0);
    CU_ASSERT_EQUAL(s.kind, -1);
    for (int r = 0; r < 2; r++) {
        to_text(&s, r, got, sizeof got);
        CU_ASSERT_STRING_EQUAL(got, small[r]);
    }
    pl_pp_schedule_free(&s);
    CU_ASSERT_EQUAL(pl_pp_build_breadth_first(&s, 4, 6, 2, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "interleaved: m = 6 micro-batches is not a multiple of p = 4 "
                                "stages (Megatron-LM's interleaved schedule runs micro-batches in "
                                "groups of p)");
    for (int a = 0; a < N_OF(grid_p); a++)
        for (int b = 0; b < N_OF(grid_m); b++)
            for (int c = 0; c < N_OF(grid_v); c++) {
                int p = grid_p[a], m = grid_m[b], v = grid_v[c];
                if (pl_pp_accepts(PL_PP_INTERLEAVED, p, m, v, err, sizeof err)) continue;
                CU_ASSERT_EQUAL_FATAL(pl_pp_build_breadth_first(&s, p, m, v, err, sizeof err), 0);
                double of_ideal, of_total;
                CU_ASSERT_EQUAL(
                    pl_pp_bubble_formula(PL_PP_INTERLEAVED, p, m, v, &of_ideal, &of_total), 0);
                for (int sends = PL_PP_RENDEZVOUS; sends <= PL_PP_BUFFERED; sends++) {
                    pl_pp_report rep;
                    int rc = pl_pp_validate_sends(&s, (pl_pp_sends)sends, 1, 1, 0, &rep, err,
                                                  sizeof err);
                    CU_ASSERT_EQUAL_FATAL(rc, 0);
                    double bubble = rep.makespan - rep.busy[0];
                    CU_ASSERT_DOUBLE_EQUAL(bubble / rep.busy[0], of_ideal, 1e-12);
                    CU_ASSERT_DOUBLE_EQUAL(bubble / rep.makespan, of_total, 1e-12);
                    for (int r = 0; r < p; r++) CU_ASSERT_EQUAL(rep.peak_in_flight[r], m * v);
                }
                pl_pp_schedule_free(&s);
            }
}

int register_pipeline_suite(void)
{
    static const unit_test t[] = {
        {"split: picotron's rule over p v virtual stages, and the refusal", test_split},
        {"op and schedule names, constructors, parse", test_names},
        {"lists: init bounds, push, free", test_lists},
        {"shipped lists written out by hand (1F1B, GPipe, naive, interleaved, ZB-H1)",
         test_shipped_by_hand},
        {"timeline op by op: ZB-H1 p=2 m=3, buffered and rendezvous sends", test_timeline_by_hand},
        {"grid p x m x v: accepted build and validate, refusals, counts, peaks, bubbles",
         test_grid},
        {"ZB-H1: bubble p-1, a third of 1F1B's with the same costs", test_zb_third},
        {"interleaved v=1 is 1F1B op for op; warm-up, peak and bubble formulas",
         test_interleaved_v1_is_1f1b},
        {"validator: each bad order named with its rule", test_bad_orders},
        {"validator: a cycle of sends under rendezvous sends", test_send_deadlock},
        {"interleaved breadth first: runs under rendezvous sends, bubble exact",
         test_breadth_first},
    };
    return UNIT_SUITE("pipeline", t);
}
