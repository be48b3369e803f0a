/*
 * test_memory_pane.c — the memory pane (viz/memory.c) of a ZeRO lab (Lab
 * 11) drawn into the cell grid from synthetic metric notes ("mem params
 * r<k>", "mem grads r<k>", "mem optim r<k>"): the stage's formula in every
 * form for every stage, AdamW and SGD, UTF-8 and ASCII, and its bytes; the
 * notes' names; the notes kept out of the metrics pane's curves; the
 * latest note at or before the view's time on either clock (the newest
 * while the view follows); the bars' cells for given bytes (the rounding,
 * the one cell of a small part, the cut at the bar's end); the pane at
 * 80x24 (ranks folded into two columns) and 120x40 (a row each: a stage-3
 * run's bars moving as a bucket is gathered and given back), every cell's
 * letter, colour and reverse video; the layout of Lab 11's panes at 80x24,
 * 120x40 and 200x50 and at every size; the descriptions pl_viz_check_zero
 * refuses; and the "paralab zero" metadata and the notes through a trace
 * file into a replay's model.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../viz/vizint.h"
#include "grid_text.h"
#include "paralab/trace.h"
#include "paralab/viz.h"
#include "suites.h"

/* The panes Lab 11 shows (the harness adds devices, timeline, metrics). */
#define LAB11_PANES                                                                                \
    (PL_PANE_BIT(PL_PANE_DEVICES) | PL_PANE_BIT(PL_PANE_TIMELINE) |                                \
     PL_PANE_BIT(PL_PANE_TOPOLOGY) | PL_PANE_BIT(PL_PANE_METRICS) | PL_PANE_BIT(PL_PANE_MEMORY))

#define PSI 71376L /* the examples' Ψ, a multiple of 8 and 16: Ψ_pad = Ψ */

/* The cells a UTF-8 string takes. */
static int ncells(const char *s)
{
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Rows y0.. of g from x equal want[0 .. n-1], each; a mismatch printed. */
static void check_rows(const viz_grid *g, int x, int y0, const char *const *want, int n)
{
    char row[1024];
    for (int y = 0; y < n; y++) {
        row_text(g, y0 + y, x, ncells(want[y]), row, sizeof row);
        CU_ASSERT_STRING_EQUAL(row, want[y]);
        if (strcmp(row, want[y]))
            fprintf(stderr, "  row %d: got  '%s'\n         want '%s'\n", y0 + y, row, want[y]);
    }
}

static void dump(const viz_grid *g)
{
    if (!getenv("MEMORY_DUMP")) return;
    char *t = viz_grid_text(g);
    fprintf(stderr, "\n%s", t);
    free(t);
}

static void zero_model(viz_model *m, int stage, int n, long psi, long pad, int sgd)
{
    char err[256];
    pl_viz_zero z = {stage, n, psi, pad, sgd};
    viz_model_init(m, n);
    CU_ASSERT_EQUAL_FATAL(viz_model_set_zero(m, &z, err, sizeof err), 0);
}

/* A metric note of rank rk's part ("params", "grads", "optim") at time t on both clocks. */
static void note(viz_model *m, const char *part, int rk, double bytes, double t)
{
    pl_note n = {.kind = PL_NOTE_METRIC, .value = bytes, .at = t, .modeled_at = t};
    snprintf(n.name, sizeof n.name, "mem %s r%d", part, rk);
    CU_ASSERT_EQUAL(viz_model_note(m, &n), 0);
}

/* The formula of every stage, AdamW and SGD, in its three forms; UTF-8 and
 * ASCII; its bytes, each part's and the scale (plain DP with the same
 * optimizer), with N = 8 and N = 1. */
static void test_zero_formula(void)
{
    static const struct {
        int stage, sgd;
        const char *form[3];
        long long params, grads, optim;
    } c[] = {
        {0,
         0,
         {"ZeRO-0, plain DP: 16Ψ = 16·71,376 B = 1,115.3 KiB",
          "ZeRO-0, plain DP: 16Ψ = 1,115.3 KiB", "ZeRO-0, plain DP: 16Ψ"},
         4 * PSI,
         4 * PSI,
         8 * PSI},
        {1,
         0,
         {"ZeRO-1: 8Ψ + 8Ψ/N = 8·71,376 + 8·71,376/8 B = 627.3 KiB",
          "ZeRO-1: 8Ψ + 8Ψ/N = 627.3 KiB", "ZeRO-1: 8Ψ + 8Ψ/N"},
         4 * PSI,
         4 * PSI,
         PSI},
        {2,
         0,
         {"ZeRO-2: 4Ψ + 12Ψ/N = 4·71,376 + 12·71,376/8 B = 383.4 KiB",
          "ZeRO-2: 4Ψ + 12Ψ/N = 383.4 KiB", "ZeRO-2: 4Ψ + 12Ψ/N"},
         4 * PSI,
         PSI / 2,
         PSI},
        {3,
         0,
         {"ZeRO-3: 16Ψ/N = 16·71,376/8 B = 139.4 KiB", "ZeRO-3: 16Ψ/N = 139.4 KiB",
          "ZeRO-3: 16Ψ/N"},
         PSI / 2,
         PSI / 2,
         PSI},
        {0,
         1,
         {"ZeRO-0, plain DP: 12Ψ = 12·71,376 B = 836.4 KiB", "ZeRO-0, plain DP: 12Ψ = 836.4 KiB",
          "ZeRO-0, plain DP: 12Ψ"},
         4 * PSI,
         4 * PSI,
         4 * PSI},
        {1,
         1,
         {"ZeRO-1: 8Ψ + 4Ψ/N = 8·71,376 + 4·71,376/8 B = 592.5 KiB",
          "ZeRO-1: 8Ψ + 4Ψ/N = 592.5 KiB", "ZeRO-1: 8Ψ + 4Ψ/N"},
         4 * PSI,
         4 * PSI,
         PSI / 2},
        {2,
         1,
         {"ZeRO-2: 4Ψ + 8Ψ/N = 4·71,376 + 8·71,376/8 B = 348.5 KiB",
          "ZeRO-2: 4Ψ + 8Ψ/N = 348.5 KiB", "ZeRO-2: 4Ψ + 8Ψ/N"},
         4 * PSI,
         PSI / 2,
         PSI / 2},
        {3,
         1,
         {"ZeRO-3: 12Ψ/N = 12·71,376/8 B = 104.6 KiB", "ZeRO-3: 12Ψ/N = 104.6 KiB",
          "ZeRO-3: 12Ψ/N"},
         PSI / 2,
         PSI / 2,
         PSI / 2},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        struct viz_zero z = {c[i].stage, 8, c[i].sgd, PSI, PSI};
        for (int f = 0; f < 3; f++) {
            char got[256];
            viz_zero_formula(&z, 1, f, got, sizeof got);
            CU_ASSERT_STRING_EQUAL(got, c[i].form[f]);
            if (strcmp(got, c[i].form[f]))
                fprintf(stderr, "\n  stage %d sgd %d form %d: '%s'\n", c[i].stage, c[i].sgd, f,
                        got);
        }
        CU_ASSERT_EQUAL(viz_zero_formula_bytes(&z, VIZ_ZMEM_PARAMS), c[i].params);
        CU_ASSERT_EQUAL(viz_zero_formula_bytes(&z, VIZ_ZMEM_GRADS), c[i].grads);
        CU_ASSERT_EQUAL(viz_zero_formula_bytes(&z, VIZ_ZMEM_OPTIM), c[i].optim);
        CU_ASSERT_EQUAL(viz_zero_formula_bytes(&z, VIZ_ZMEM_PARTS),
                        c[i].params + c[i].grads + c[i].optim);
        CU_ASSERT_EQUAL(viz_zero_scale_bytes(&z), (c[i].sgd ? 12 : 16) * PSI);
    }
    /* ASCII: Psi and *; N = 1, a padded Ψ */
    struct viz_zero z = {2, 8, 0, PSI, PSI};
    char got[256];
    viz_zero_formula(&z, 0, 0, got, sizeof got);
    CU_ASSERT_STRING_EQUAL(got, "ZeRO-2: 4Psi + 12Psi/N = 4*71,376 + 12*71,376/8 B = 383.4 KiB");
    z = (struct viz_zero){3, 1, 0, 1000, 1000};
    viz_zero_formula(&z, 0, 0, got, sizeof got);
    CU_ASSERT_STRING_EQUAL(got, "ZeRO-3: 16Psi/N = 16*1,000/1 B = 15.6 KiB");
    z = (struct viz_zero){1, 3, 0, 1000, 1002};
    CU_ASSERT_EQUAL(viz_zero_formula_bytes(&z, VIZ_ZMEM_PARTS), 8 * 1002 + 8 * 334);
    viz_fmt_kib(got, sizeof got, 1024.0 * 1234567.25);
    CU_ASSERT_STRING_EQUAL(got, "1,234,567.3 KiB");
    viz_fmt_kib(got, sizeof got, 0);
    CU_ASSERT_STRING_EQUAL(got, "0.0 KiB");
}

/* The notes' names: a part and a rank 0..63, or none. */
static void test_zero_metric_names(void)
{
    static const struct {
        const char *name;
        int part, rank;
    } c[] = {
        {"mem params r0", VIZ_ZMEM_PARAMS, 0},
        {"mem grads r7", VIZ_ZMEM_GRADS, 7},
        {"mem optim r63", VIZ_ZMEM_OPTIM, 63},
        {"mem params r64", -1, 0},
        {"mem params r01", -1, 0},
        {"mem params r", -1, 0},
        {"mem params r1x", -1, 0},
        {"mem paramsr1", -1, 0},
        {"mem state r1", -1, 0},
        {"activations s0", -1, 0},
        {"loss", -1, 0},
        {"mem optim r100", -1, 0},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        int rank = -1;
        CU_ASSERT_EQUAL(viz_zero_metric(c[i].name, &rank), c[i].part);
        if (c[i].part >= 0) CU_ASSERT_EQUAL(rank, c[i].rank);
    }
}

/* The notes reach the pane's store with their times, and are no curves:
 * only "loss" is a series of the metrics pane. Before any, a rank has none. */
static void test_zero_notes_not_series(void)
{
    viz_model m;
    zero_model(&m, 2, 2, PSI, PSI, 0);
    double b = -1;
    CU_ASSERT_EQUAL(viz_zero_bytes_at(&m, 0, VIZ_ZMEM_PARAMS, INFINITY, 1, &b), 0);
    note(&m, "params", 0, 4 * PSI, 1);
    note(&m, "grads", 1, PSI / 2, 1.5);
    note(&m, "optim", 1, PSI, 2);
    pl_note loss = {.kind = PL_NOTE_METRIC, .value = 2.5, .at = 3};
    snprintf(loss.name, sizeof loss.name, "loss");
    CU_ASSERT_EQUAL(viz_model_note(&m, &loss), 0);
    CU_ASSERT_EQUAL(viz_model_push_named(&m, "mem optim r0", 99), 0); /* untimed: at 0 */
    CU_ASSERT_EQUAL(m.nseries, 1);
    CU_ASSERT_STRING_EQUAL(m.series[0].name, "loss");
    CU_ASSERT_EQUAL(m.series[0].n, 1);
    CU_ASSERT_EQUAL(m.nzmem[0][VIZ_ZMEM_PARAMS], 1);
    CU_ASSERT_EQUAL(m.nzmem[1][VIZ_ZMEM_GRADS], 1);
    CU_ASSERT_EQUAL(m.nzmem[1][VIZ_ZMEM_OPTIM], 1);
    CU_ASSERT_EQUAL(m.nzmem[0][VIZ_ZMEM_OPTIM], 1);
    CU_ASSERT_EQUAL(m.nzmem[0][VIZ_ZMEM_GRADS], 0);
    CU_ASSERT_EQUAL(viz_zero_bytes_at(&m, 1, VIZ_ZMEM_GRADS, INFINITY, 1, &b), 1);
    CU_ASSERT_EQUAL(b, PSI / 2);
    CU_ASSERT_EQUAL(viz_zero_bytes_at(&m, 0, VIZ_ZMEM_OPTIM, 0, 0, &b), 1);
    CU_ASSERT_EQUAL(b, 99);
    /* the metrics pane draws the loss, not the memory */
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 60, 10), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 2;
    v.t_end = 3;
    v.span = 3;
    viz_render_pane(&g, PL_PANE_METRICS, (pl_rect){0, 0, 60, 10}, &m, &v);
    dump(&g);
    char *text = viz_grid_text(&g);
    CU_ASSERT_PTR_NULL(strstr(text, "mem "));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "loss"));
    free(text);
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* Which note a bar shows: the latest at or before the view's time, on the
 * view's clock (the modeled one may order them otherwise); INFINITY (the
 * view following the run) the newest; none before the first. */
static void test_zero_bytes_at(void)
{
    viz_model m;
    zero_model(&m, 3, 2, PSI, PSI, 0);
    static const double at[] = {1, 2, 2, 3}, mat[] = {10, 11, 12, 20}, v[] = {100, 200, 250, 300};
    for (int i = 0; i < 4; i++) {
        pl_note n = {.kind = PL_NOTE_METRIC, .value = v[i], .at = at[i], .modeled_at = mat[i]};
        snprintf(n.name, sizeof n.name, "mem params r1");
        CU_ASSERT_EQUAL(viz_model_note(&m, &n), 0);
    }
    static const struct {
        double t;
        int modeled, found;
        double want;
    } c[] = {{0.5, 0, 0, 0},   {1, 0, 1, 100},   {1.5, 0, 1, 100},      {2, 0, 1, 250},
             {2.9, 0, 1, 250}, {3, 0, 1, 300},   {INFINITY, 0, 1, 300}, {9, 1, 0, 0},
             {10, 1, 1, 100},  {11, 1, 1, 200},  {19.9, 1, 1, 250},     {20, 1, 1, 300},
             {3, 1, 0, 0},     {1e9, 1, 1, 300}, {INFINITY, 1, 1, 300}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        double b = -1;
        int found = viz_zero_bytes_at(&m, 1, VIZ_ZMEM_PARAMS, c[i].t, c[i].modeled, &b);
        CU_ASSERT_EQUAL(found, c[i].found);
        if (c[i].found) CU_ASSERT_EQUAL(b, c[i].want);
        if (found != c[i].found || (found && b != c[i].want))
            fprintf(stderr, "\n  t %g (modeled %d): found %d, %g\n", c[i].t, c[i].modeled, found,
                    b);
    }
    double b;
    CU_ASSERT_EQUAL(viz_zero_bytes_at(&m, 0, VIZ_ZMEM_PARAMS, INFINITY, 0, &b), 0); /* rank 0 */
    CU_ASSERT_EQUAL(viz_zero_bytes_at(&m, 1, VIZ_ZMEM_GRADS, INFINITY, 0, &b), 0);
    CU_ASSERT_EQUAL(viz_zero_bytes_at(&m, 64, VIZ_ZMEM_PARAMS, INFINITY, 0, &b), 0);
    viz_model_free(&m);
}

/* The cells of each part: round(bytes / scale x w), at least 1 for a part
 * that holds any, none for one that holds nothing, the longest cut while
 * they pass the bar. */
static void test_zero_bar(void)
{
    static const struct {
        int w;
        double b[3], scale;
        int want[3];
    } c[] = {
        /* ZeRO-2, N 8, 20,000 B of buckets: 6.25, 1.22, 1.56 of 25 */
        {25, {4 * PSI, PSI / 2 + 20000, PSI}, 16 * PSI, {6, 1, 2}},
        /* plain DP at 23 cells: 5.75, 5.75, 11.5 round to 6, 6, 12 = 24: the optimizer's cut */
        {23, {4 * PSI, 4 * PSI, 8 * PSI}, 16 * PSI, {6, 6, 11}},
        /* plain DP at 64: 16, 16, 32 */
        {64, {4 * PSI, 4 * PSI, 8 * PSI}, 16 * PSI, {16, 16, 32}},
        /* ZeRO-3, N 64, at 25 cells: 0.098 and 0.195 of a cell: one each */
        {25, {PSI / 16, PSI / 16, PSI / 8}, 16 * PSI, {1, 1, 1}},
        /* nothing held: no cell; more than the scale: the bar, the longest (first of equals) cut */
        {10, {0, 0, 0}, 16 * PSI, {0, 0, 0}},
        {10, {0, 16 * PSI, 16 * PSI}, 16 * PSI, {0, 5, 5}},
        {2, {1, 1, 1}, 16 * PSI, {0, 1, 1}},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        int len[3] = {-1, -1, -1};
        viz_zero_bar(c[i].w, c[i].b, c[i].scale, len);
        for (int k = 0; k < 3; k++) CU_ASSERT_EQUAL(len[k], c[i].want[k]);
        if (memcmp(len, c[i].want, sizeof len))
            fprintf(stderr, "\n  case %zu: %d %d %d\n", i, len[0], len[1], len[2]);
    }
}

/* Lab 11's screen at w x h for the model m at the view's time t (follow:
 * the newest); *r the memory pane's rectangle. */
static void lab11_screen(viz_grid *g, int utf8, int w, int h, const viz_model *m, double t,
                         int follow, pl_rect *r)
{
    pl_layout L;
    pl_viz_layout(w, h, m->nranks, LAB11_PANES, &L);
    CU_ASSERT_FATAL(L.ok);
    *r = L.pane[PL_PANE_MEMORY];
    g->utf8 = utf8;
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(g, w, h), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.modeled = 1;
    v.t_end = t;
    v.span = t > 0 ? t : 1;
    v.follow = follow;
    v.ndev = m->nranks;
    viz_render(g, &L, m, &v);
    dump(g);
}

/* The bar of ranks at (x, y), its cells: n[0] 'p' in the forward's colour,
 * n[1] 'g' in the backward's, n[2] 'o' in the optimizer's, each reversed;
 * then dim empty cells to w. */
static void check_bar_peak(const viz_grid *g, int x, int y, int w, const int n[3], int nb)
{
    static const char letter[3] = {'p', 'g', 'o'};
    static const int colour[3] = {COL_FORWARD, COL_BACKWARD, COL_OPTIMIZER};
    int cx = x, bad = 0;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < n[k]; i++, cx++) {
            const viz_cell *c = cell(g, cx, y);
            bad += c->ch != (uint32_t)letter[k] || c->fg != colour[k] || c->attr != ATTR_REVERSE;
        }
    for (int i = 0; i < nb; i++, cx++) { /* up to the peak: b, plain, in the warning colour */
        const viz_cell *c = cell(g, cx, y);
        bad += c->ch != 'b' || c->fg != COL_WARN || c->attr != 0;
    }
    for (; cx < x + w; cx++) {
        const viz_cell *c = cell(g, cx, y);
        bad += c->ch != viz_glyph_ch(g, G_LIGHT) || c->fg != COL_DIM || c->attr != 0;
    }
    CU_ASSERT_EQUAL(bad, 0);
    if (bad) fprintf(stderr, "\n  bar at (%d, %d): %d cells wrong\n", x, y, bad);
}

/* The same without a peak past it. */
static void check_bar(const viz_grid *g, int x, int y, int w, const int n[3])
{
    check_bar_peak(g, x, y, w, n, 0);
}

/* ZeRO-2 over 8 ranks at 80x24 (ASCII): the pane across the top, 8 rows;
 * the ranks in two columns of 4 (bars of 25 cells); each rank noted with
 * 20,000 B of gradient buckets past the formula, but rank 5, noted
 * nothing: an empty bar and "-". Every row's text; every bar cell's letter,
 * colour and attributes; the legend's letters as the bars'. */
static void test_memory_80x24(void)
{
    viz_model m;
    zero_model(&m, 2, 8, PSI, PSI, 0);
    for (int rk = 0; rk < 8; rk++) {
        if (rk == 5) continue;
        note(&m, "params", rk, 4 * PSI, 0.1);
        note(&m, "grads", rk, PSI / 2 + 20000, 0.1);
        note(&m, "optim", rk, PSI, 0.1);
    }
    viz_grid g = {0};
    pl_rect r;
    lab11_screen(&g, 0, 80, 24, &m, 1, 1, &r);
    CU_ASSERT(r.x == 0 && r.y == 1 && r.w == 80 && r.h == 8);
    /* clang-format off */
    static const char *want[] = {
        "+ memory per device - a full bar is plain DP's 16Psi = 1,115.3 KiB ------------+",
        "|ZeRO-2: 4Psi + 12Psi/N = 4*71,376 + 12*71,376/8 B = 383.4 KiB                 |",
        "|r0 ppppppgoo................ 402.9 KiB  r4 ppppppgoo................ 402.9 KiB|",
        "|r1 ppppppgoo................ 402.9 KiB  r5 .........................         -|",
        "|r2 ppppppgoo................ 402.9 KiB  r6 ppppppgoo................ 402.9 KiB|",
        "|r3 ppppppgoo................ 402.9 KiB  r7 ppppppgoo................ 402.9 KiB|",
        "|p params 4Psi  g grads 4Psi/N  o optim 8Psi/N                                 |",
        "+------------------------------------------------------------------------------+",
    };
    /* clang-format on */
    check_rows(&g, 0, 1, want, 8);
    static const int full[3] = {6, 1, 2}, none[3] = {0, 0, 0};
    for (int rk = 0; rk < 8; rk++)
        check_bar(&g, 4 + rk / 4 * 40, 3 + rk % 4, 25, rk == 5 ? none : full);
    /* the labels in their rank's colour, the values plain ("-" dim) */
    CU_ASSERT_EQUAL(cell(&g, 1, 3)->fg, COL_RANK0);
    CU_ASSERT_EQUAL(cell(&g, 41, 4)->fg, COL_RANK0 + 5);
    CU_ASSERT_EQUAL(cell(&g, 30, 3)->fg, COL_DEFAULT);
    CU_ASSERT_EQUAL(cell(&g, 78, 4)->fg, COL_DIM);
    /* the legend: p, g, o reversed in the bars' colours */
    static const struct {
        int x, fg;
        char ch;
    } leg[] = {{1, COL_FORWARD, 'p'}, {16, COL_BACKWARD, 'g'}, {32, COL_OPTIMIZER, 'o'}};
    for (int k = 0; k < 3; k++) {
        const viz_cell *c = cell(&g, leg[k].x, 7);
        CU_ASSERT(c->ch == (uint32_t)leg[k].ch && c->fg == leg[k].fg && c->attr == ATTR_REVERSE);
    }
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* ZeRO-3 over 8 ranks at 120x40 (UTF-8): a row per rank, bars of 64 cells
 * (2, 2 and 4 of them for 4Ψ/N, 4Ψ/N and 8Ψ/N: 1/32, 1/32 and 1/16 of
 * 16Ψ); rank 0's parameter
 * bucket gathered at t = 2 (+80,000 B: its bar and the working buckets
 * beside it grow), one of the two given back at t = 3, the view at t = 1,
 * 2.5, 3.5 and following; the other ranks as created. */
static void test_memory_stage3_moves(void)
{
    viz_model m;
    zero_model(&m, 3, 8, PSI, PSI, 0);
    for (int rk = 0; rk < 8; rk++) {
        note(&m, "params", rk, PSI / 2, 0);
        note(&m, "grads", rk, PSI / 2, 0);
        note(&m, "optim", rk, PSI, 0);
    }
    note(&m, "params", 0, PSI / 2 + 80000, 2);
    note(&m, "params", 0, PSI / 2 + 40000, 3);
    note(&m, "params", 0, PSI / 2, 4); /* both given back: at rest, the peak in b */
    /* b: the cells from what it holds now to its peak so far (222,752 B at t = 2: 12.48
     * cells, 12), once it has given a bucket back */
    static const struct {
        double t;
        int follow;
        int p, b;
        const char *row0;
    } c[] = {
        {1, 0, 2, 0,
         "│r0 ppggoooo░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░ 139.4 KiB     "},
        /* 35,688 + 80,000 of 1,142,016 x 64 = 6.48 */
        {2.5, 0, 6, 0,
         "│r0 ppppppggoooo░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░ 217.5 KiB (+78.1 "
         "KiB in working buckets)"},
        /* 35,688 + 40,000: 4.24 */
        {3.5, 0, 4, 2,
         "│r0 ppppggoooobb░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░ 178.5 KiB (+39.1 "
         "KiB in working buckets)"},
        /* at rest after t = 4: the formula's 2 cells of parameters, b to the peak, and what
         * the buckets took then */
        {4.5, 0, 2, 4,
         "│r0 ppggoooobbbb░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░ 139.4 KiB (peak: "
         "+78.1 KiB working buckets)"},
        {0.5, 1, 2, 4,
         "│r0 ppggoooobbbb░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░ 139.4 KiB (peak: "
         "+78.1 KiB working buckets)"},
    };
    viz_grid g = {0};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        pl_rect r;
        lab11_screen(&g, 1, 120, 40, &m, c[i].t, c[i].follow, &r);
        CU_ASSERT(r.x == 0 && r.y == 1 && r.w == 120 && r.h == 12);
        /* clang-format off */
        const char *want[] = {
            "┌ memory per device · a full bar is plain DP's 16Ψ = 1,115.3 KiB ──────────────────"
            "────────────────────────────────────┐",
            "│ZeRO-3: 16Ψ/N = 16·71,376/8 B = 139.4 KiB",
            c[i].row0,
        };
        /* clang-format on */
        check_rows(&g, 0, 1, want, 3);
        int n0[3] = {c[i].p, 2, 4}, n[3] = {2, 2, 4};
        check_bar_peak(&g, 4, 3, 64, n0, c[i].b);
        char row[512];
        for (int rk = 1; rk < 8; rk++) {
            check_bar(&g, 4, 3 + rk, 64, n);
            row_text(&g, 3 + rk, 68, 52, row, sizeof row);
            CU_ASSERT_STRING_EQUAL(row, " 139.4 KiB                                         │");
        }
        row_text(&g, 11, 0, 120, row, sizeof row);
        if (c[i].b) { /* the legend says what b is */
            CU_ASSERT_STRING_EQUAL(row,
                                   "│p params 4Ψ/N = 34.9 KiB  g grads 4Ψ/N = 34.9 KiB  o optim "
                                   "8Ψ/N = 69.7 KiB  b working buckets at their peak           │");
        } else {
            CU_ASSERT_STRING_EQUAL(row,
                                   "│p params 4Ψ/N = 34.9 KiB  g grads 4Ψ/N = 34.9 KiB  o optim "
                                   "8Ψ/N = 69.7 KiB                                            │");
        }
        if (c[i].b)
            CU_ASSERT(cell(&g, 77, 11)->ch == (uint32_t)'b' && cell(&g, 77, 11)->fg == COL_WARN);
    }
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* Narrower panes: the formula and the legend in shorter forms, a padded Ψ
 * said in the legend, more ranks than fit (the last slot counts them, the
 * view's rank_scroll shows the next), no room, and no ZeRO run. */
static void test_memory_narrow(void)
{
    viz_model m;
    zero_model(&m, 1, 16, 71370, 71376, 1);
    viz_grid g = {0};
    g.utf8 = 1;
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 44, 6), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.follow = 1;
    viz_render_pane(&g, PL_PANE_MEMORY, (pl_rect){0, 0, 44, 6}, &m, &v);
    dump(&g);
    /* clang-format off */
    static const char *want[] = {
        "┌ memory · full bar 12Ψ = 836.4 KiB ───────┐",
        "│ZeRO-1: 8Ψ + 4Ψ/N = 575.1 KiB             │",
        "│r0  ░░░░░░░░░░░░░░ -  r2  ░░░░░░░░░░░░░░ -│",
        "│r1  ░░░░░░░░░░░░░░ -  +13 more (up/down)  │", /* a form that fits, not cut */
        "│p params 4Ψ  g grads 4Ψ  o optim 4Ψ/N     │",
        "└──────────────────────────────────────────┘",
    };
    /* clang-format on */
    check_rows(&g, 0, 0, want, 6);
    v.rank_scroll = 12;
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_MEMORY, (pl_rect){0, 0, 44, 6}, &m, &v);
    static const char *scrolled[] = {"│r12 ░░░░░░░░░░░░░░ -  r14 ░░░░░░░░░░░░░░ -│",
                                     "│r13 ░░░░░░░░░░░░░░ -  r15 ░░░░░░░░░░░░░░ -│"};
    check_rows(&g, 0, 2, scrolled, 2);
    /* wide enough for the legend's padding */
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 70, 5), 0);
    g.utf8 = 1;
    v.rank_scroll = 0;
    viz_render_pane(&g, PL_PANE_MEMORY, (pl_rect){0, 0, 70, 5}, &m, &v);
    dump(&g);
    static const char *padded[] = {
        "│p params 4Ψ  g grads 4Ψ  o optim 4Ψ/N  Ψ = 71,370 + 6 padding       │"};
    check_rows(&g, 0, 3, padded, 1);
    /* one row for the ranks: the first, and no count (no legend either) */
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 20, 4), 0);
    g.utf8 = 1;
    viz_render_pane(&g, PL_PANE_MEMORY, (pl_rect){0, 0, 20, 4}, &m, &v);
    static const char *tiny[] = {"┌ memory ──────────┐", "│ZeRO-1: 8Ψ + 4Ψ/N │",
                                 "│r0  ░░░░░░░░░░░░ -│"};
    check_rows(&g, 0, 0, tiny, 3);
    /* too narrow for a bar: said; the formula cut */
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_MEMORY, (pl_rect){0, 0, 12, 4}, &m, &v);
    static const char *narrow[] = {"┌ memory ──┐", "│ZeRO-1: 8Ψ│", "│too small │"};
    check_rows(&g, 0, 0, narrow, 3);
    viz_model_free(&m);
    viz_model_init(&m, 2);
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_MEMORY, (pl_rect){0, 0, 20, 4}, &m, &v);
    static const char *none[] = {"┌ memory ──────────┐", "│no ZeRO run descri│"};
    check_rows(&g, 0, 0, none, 2);
    viz_model_free(&m);
    viz_grid_free(&g);
}

/* Where the layout puts the memory pane for Lab 11 (8 devices): across the
 * top of the body, a row per device and four more, leaving the others 11
 * rows (80x24: 8 rows; 120x40 and 200x50: 12); with fewer devices,
 * fewer rows; on a short screen (60x13), beside the metrics; and, for
 * Lab 11's panes at every size up to 200x60 and 0..64 devices, inside the
 * screen, overlapping none, shown whenever the layout is. */
static void test_memory_layout(void)
{
    static const struct {
        int w, h, ndev;
        pl_rect mem, timeline, metrics, topology;
    } c[] = {
        {80, 24, 8, {0, 1, 80, 8}, {30, 9, 50, 6}, {30, 15, 50, 5}, {0, 14, 30, 6}},
        {120, 40, 8, {0, 1, 120, 12}, {36, 13, 84, 10}, {36, 23, 84, 8}, {0, 22, 36, 9}},
        {200, 50, 8, {0, 1, 200, 12}, {60, 13, 140, 16}, {60, 29, 140, 12}, {0, 23, 60, 18}},
        {80, 24, 2, {0, 1, 80, 6}, {30, 7, 50, 7}, {30, 14, 50, 6}, {0, 11, 30, 9}},
        {60, 13, 8, {30, 5, 15, 4}, {30, 1, 30, 4}, {45, 5, 15, 4}, {0, 5, 30, 4}},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        pl_layout L;
        pl_viz_layout(c[i].w, c[i].h, c[i].ndev, LAB11_PANES, &L);
        CU_ASSERT_FATAL(L.ok);
        const pl_rect *got[] = {&L.pane[PL_PANE_MEMORY], &L.pane[PL_PANE_TIMELINE],
                                &L.pane[PL_PANE_METRICS], &L.pane[PL_PANE_TOPOLOGY]};
        const pl_rect *want[] = {&c[i].mem, &c[i].timeline, &c[i].metrics, &c[i].topology};
        for (int k = 0; k < 4; k++) {
            int same = !memcmp(got[k], want[k], sizeof(pl_rect));
            CU_ASSERT(same);
            if (!same)
                fprintf(stderr, "\n  %dx%d: pane %d at %d %d %d %d\n", c[i].w, c[i].h, k, got[k]->x,
                        got[k]->y, got[k]->w, got[k]->h);
        }
    }
    long bad = 0;
    for (int ndev = 0; ndev <= 64; ndev++)
        for (int w = 1; w <= 200; w++)
            for (int h = 1; h <= 60; h++) {
                pl_layout L;
                pl_viz_layout_text(w, h, ndev, LAB11_PANES, h % 3 ? 0 : 100, &L);
                if (L.ok != (w >= L.min_w && h >= L.min_h)) bad++;
                for (int p = 0; p < PL_NUM_PANES; p++) {
                    pl_rect r = L.pane[p];
                    if (r.w < 0 || r.h < 0 || r.x < 0 || r.y < 0 || r.x + r.w > w || r.y + r.h > h)
                        bad++;
                    for (int q = p + 1; q < PL_NUM_PANES; q++) {
                        pl_rect s = L.pane[q];
                        if (r.w > 0 && s.w > 0 && r.h > 0 && s.h > 0 && r.x < s.x + s.w &&
                            s.x < r.x + r.w && r.y < s.y + s.h && s.y < r.y + r.h)
                            bad++;
                    }
                    int asked = p <= PL_PANE_NARRATION || (LAB11_PANES >> p & 1u);
                    if (L.ok && asked != (r.w > 0 && r.h > 0)) bad++;
                }
                /* across the top: the whole width, a row per device and four at most */
                pl_rect r = L.pane[PL_PANE_MEMORY];
                if (L.ok && r.y == 1 && (r.w != w || r.h > (ndev > 0 ? ndev : 1) + 4)) bad++;
            }
    CU_ASSERT_EQUAL(bad, 0);
}

/* Descriptions the pane cannot draw: refused naming the values and what is
 * allowed; the model unchanged; the run refuses before anything runs. */
static void test_memory_refused(void)
{
    static const struct {
        pl_viz_zero z;
        int nranks;
        const char *want;
    } c[] = {
        {{4, 8, PSI, PSI, 0},
         8,
         "memory pane: stage 4: allowed are stages 0 (plain data parallelism), 1, 2 and 3"},
        {{1, 0, PSI, PSI, 0}, 0, "memory pane: 0 ranks: allowed are 1..64 ranks (PL_MAX_RANKS)"},
        {{1, 4, PSI, PSI, 0},
         8,
         "memory pane: 4 ranks for a world of 8: allowed are the world's ranks"},
        {{1, 8, 0, 8, 0}, 8, "memory pane: psi 0: allowed are 1..2^40 parameters"},
        {{1, 8, PSI, PSI - 8, 0},
         8,
         "memory pane: psi_pad 71368 for psi 71376: allowed are 71376..2^40 (psi and its padding)"},
        {{1, 8, PSI - 2, PSI - 2, 0},
         8,
         "memory pane: psi_pad 71374 for 8 ranks: allowed are multiples of the ranks (each bucket "
         "is padded to a multiple of N)"},
        {{1, 8, PSI, PSI, 2},
         8,
         "memory pane: sgd 2: allowed are 0 (AdamW) and 1 (SGD with momentum)"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char err[256] = "";
        CU_ASSERT_EQUAL(pl_viz_check_zero(&c[i].z, c[i].nranks, err, sizeof err), -1);
        CU_ASSERT_STRING_EQUAL(err, c[i].want);
        viz_model m;
        viz_model_init(&m, 8);
        int world_only = i == 2; /* the model takes any number of ranks */
        CU_ASSERT_EQUAL(viz_model_set_zero(&m, &c[i].z, err, sizeof err), world_only ? 0 : -1);
        CU_ASSERT_EQUAL(m.zero.ranks, world_only ? 4 : 0);
        viz_model_free(&m);
    }
    char err[64];
    pl_viz_zero ok = {3, 8, PSI - 6, PSI, 1};
    CU_ASSERT_EQUAL(pl_viz_check_zero(&ok, 8, err, sizeof err), 0);
    CU_ASSERT_EQUAL(pl_viz_check_zero(&ok, 0, err, sizeof err), 0);
    CU_ASSERT_EQUAL(pl_viz_check_zero(NULL, 8, err, sizeof err), 0);
    pl_viz_config vc = {.title = "t", .zero = &c[2].z};
    pl_options opt;
    memset(&opt, 0, sizeof opt);
    int quit = 0;
    char rerr[256] = "";
    CU_ASSERT_EQUAL(pl_viz_run_lab(&vc, &opt, 8, NULL, NULL, &quit, rerr, sizeof rerr), 1);
    CU_ASSERT_STRING_EQUAL(rerr, c[2].want);
}

/* Through a trace file: the "paralab zero" metadata read back exactly,
 * the memory notes with their times, replayed into a model (the pane's
 * store, not the series; a bar at the file's time); bad metadata refused,
 * naming what it needs or the value. */
static void test_memory_trace_round_trip(void)
{
    char path[] = "/tmp/paralab-memory-XXXXXX", err[512];
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    pl_trace_writer *w = pl_trace_writer_open(path, 2, 1, 0, err, sizeof err);
    CU_ASSERT_FATAL(w != NULL);
    CU_ASSERT_EQUAL(pl_trace_writer_describe(w, "lab 11 zero", 1, LAB11_PANES, 0), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_describe_zero(w, 3, 2, 71370, 71376, 1), 0);
    pl_note n[3] = {{.kind = PL_NOTE_METRIC, .value = 100, .at = 5, .modeled_at = 1},
                    {.kind = PL_NOTE_METRIC, .value = 200, .at = 6, .modeled_at = 2},
                    {.kind = PL_NOTE_METRIC, .value = 2.5, .at = 7, .modeled_at = 3}};
    snprintf(n[0].name, sizeof n[0].name, "mem params r1");
    snprintf(n[1].name, sizeof n[1].name, "mem params r1");
    snprintf(n[2].name, sizeof n[2].name, "loss");
    CU_ASSERT_EQUAL(pl_trace_writer_add_notes(w, n, 3), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    viz_trace t;
    int rc = viz_read_trace(path, &t, err, sizeof err);
    if (rc) fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT(t.zero.stage == 3 && t.zero.ranks == 2 && t.zero.psi == 71370 &&
              t.zero.psi_pad == 71376 && t.zero.sgd == 1);
    CU_ASSERT_EQUAL(t.panes, LAB11_PANES);
    viz_model m;
    viz_model_init(&m, t.nranks);
    CU_ASSERT_EQUAL(viz_model_set_zero(&m, &t.zero, err, sizeof err), 0);
    viz_item *items;
    size_t nitems, *first;
    int steps = viz_replay_plan(&t, &items, &nitems, &first);
    CU_ASSERT_FATAL(steps >= 1);
    for (size_t i = 0; i < nitems; i++) CU_ASSERT_EQUAL(viz_replay_apply(&m, &t, &items[i]), 0);
    CU_ASSERT_EQUAL(m.nseries, 1);
    CU_ASSERT_EQUAL(m.nzmem[1][VIZ_ZMEM_PARAMS], 2);
    double b = 0;
    /* the file is on the modeled clock: 1 and 2 s from its origin 0 */
    CU_ASSERT(viz_zero_bytes_at(&m, 1, VIZ_ZMEM_PARAMS, 1.5, 1, &b) == 1 && b == 100);
    CU_ASSERT(viz_zero_bytes_at(&m, 1, VIZ_ZMEM_PARAMS, 2, 1, &b) == 1 && b == 200);
    CU_ASSERT_EQUAL(viz_zero_bytes_at(&m, 1, VIZ_ZMEM_PARAMS, 0.5, 1, &b), 0);
    free(items);
    free(first);
    viz_model_free(&m);
    viz_trace_free(&t);
    /* refused */
    static const struct {
        const char *meta, *want;
    } bad[] = {
        {"{\"stage\":2,\"ranks\":2,\"psi\":10}",
         "event 1: a ZeRO run (\"paralab zero\") needs args.stage (0..3), ranks (1..64), psi and "
         "psi_pad (whole numbers 1..2^40), and sgd 0 or 1 if any"},
        {"{\"stage\":5,\"ranks\":2,\"psi\":10,\"psi_pad\":10}",
         "event 1: a ZeRO run (\"paralab zero\") needs args.stage (0..3)"},
        {"{\"stage\":2,\"ranks\":2,\"psi\":10,\"psi_pad\":11}",
         "memory pane: psi_pad 11 for 2 ranks: allowed are multiples of the ranks"},
        {"{\"stage\":2,\"ranks\":4,\"psi\":12,\"psi_pad\":12}",
         "memory pane: 4 ranks for a world of 2: allowed are the world's ranks"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        FILE *f = fopen(path, "w");
        CU_ASSERT_FATAL(f != NULL);
        fprintf(f,
                "{\"otherData\":{\"ranks\":2},\"traceEvents\":[{\"ph\":\"M\",\"name\":\"paralab\","
                "\"pid\":0,\"args\":{\"title\":\"x\"}},{\"ph\":\"M\",\"name\":\"paralab zero\","
                "\"pid\":0,\"args\":%s}]}",
                bad[i].meta);
        fclose(f);
        err[0] = '\0';
        CU_ASSERT_EQUAL(viz_read_trace(path, &t, err, sizeof err), -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].want));
        if (!strstr(err, bad[i].want)) fprintf(stderr, "\n  %s\n", err);
    }
    unlink(path);
}

int register_memory_pane_suite(void)
{
    static const unit_test tests[] = {
        {"memory pane: the formula of every stage, AdamW and SGD, and its bytes",
         test_zero_formula},
        {"memory pane: the notes' names", test_zero_metric_names},
        {"memory pane: the notes are no curves of the metrics pane", test_zero_notes_not_series},
        {"memory pane: the note at or before the view's time, on either clock", test_zero_bytes_at},
        {"memory pane: a bar's cells for given bytes", test_zero_bar},
        {"memory pane: ZeRO-2 over 8 ranks at 80x24, ASCII: every row and bar cell",
         test_memory_80x24},
        {"memory pane: ZeRO-3 at 120x40: rank 0's bar grows and shrinks with its buckets",
         test_memory_stage3_moves},
        {"memory pane: narrow panes, padding, ranks left out and scrolled", test_memory_narrow},
        {"memory pane: the layout at 80x24, 120x40, 200x50 and every size", test_memory_layout},
        {"memory pane: descriptions refused", test_memory_refused},
        {"memory pane: 'paralab zero' and the notes through a trace file; bad ones refused",
         test_memory_trace_round_trip},
    };
    return UNIT_SUITE("viz memory pane", tests);
}
