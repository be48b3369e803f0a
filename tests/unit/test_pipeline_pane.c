/*
 * test_pipeline_pane.c — the pipeline pane (viz/panes.c) of a pipeline-
 * parallel lab (Lab 09), drawn into the cell grid from synthetic events,
 * cell by cell: GPipe and ZB-H1 on p = 2 stages with m = 2 micro-batches
 * (the F, B and W boxes with their numbers at their columns, the bubbles
 * as dots, the bubble line's exact text, the activation gauges and their
 * peaks), an odd chunk's box (small letter, underlined), the ops appearing
 * as they arrive and the newest iteration only; p = 8, m = 32 at 120x40
 * and 80x24 in the layout's pane (every stage's row, compressed to fit,
 * nothing outside the pane); the activation notes kept out of the metrics'
 * curves; a pipeline's sends and receives on the topology; the "paralab
 * pipeline" metadata through a trace file, and corrupt ones refused.
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

/* The panes Lab 09 shows. */
#define LAB09_PANES                                                                                \
    (PL_PANE_BIT(PL_PANE_DEVICES) | PL_PANE_BIT(PL_PANE_TIMELINE) |                                \
     PL_PANE_BIT(PL_PANE_TOPOLOGY) | PL_PANE_BIT(PL_PANE_PIPELINE) | PL_PANE_BIT(PL_PANE_METRICS))

/* An op of stage `stage` (its rank) on the compute lane, [s, e] on both clocks. */
static pl_event op(int kind, int stage, int k, int chunk, double s, double e)
{
    pl_event x;
    memset(&x, 0, sizeof x);
    x.rank = stage;
    x.lane = PL_LANE_COMPUTE;
    x.kind = (uint8_t)kind;
    x.micro_batch = k;
    x.layer = stage;
    x.chunk = chunk;
    x.peer = -1;
    x.start = x.modeled_start = s;
    x.end = x.modeled_end = e;
    snprintf(x.label, sizeof x.label, "%c%d",
             kind == PL_EV_FORWARD    ? 'F'
             : kind == PL_EV_BACKWARD ? 'B'
                                      : 'W',
             k);
    return x;
}

static void add(viz_model *m, pl_event e) { CU_ASSERT_EQUAL(viz_model_add(m, &e), 0); }

/* GPipe, p = 2, m = 2, every F and B one unit: stage 0 F0 F1 at 0..2, B0
 * B1 at 4..6; stage 1 F0 F1 at 1..3, B0 B1 at 3..5. Makespan 6, busy 8
 * of 12: bubble 1/3 of the time, 4/8 = 1/2 of the ideal time, as the
 * formula says ((p-1)/(m+p-1), (p-1)/m). Activations: stage 0 holds 100 B
 * a micro-batch (notes 100, 200, 100: peak 200, now 100), stage 1 50 B
 * (50, 100, 50, 0: peak 100, now 0). */
static void gpipe_2x2(viz_model *m)
{
    char err[256];
    pl_viz_pipeline pp = {2, 2, 1, "gpipe", 0.5, 1.0 / 3, 0, {0}};
    viz_model_init(m, 2);
    CU_ASSERT_EQUAL_FATAL(viz_model_set_pipeline(m, &pp, err, sizeof err), 0);
    add(m, op(PL_EV_FORWARD, 0, 0, 0, 0, 1));
    add(m, op(PL_EV_FORWARD, 0, 1, 0, 1, 2));
    add(m, op(PL_EV_FORWARD, 1, 0, 0, 1, 2));
    add(m, op(PL_EV_FORWARD, 1, 1, 0, 2, 3));
    add(m, op(PL_EV_BACKWARD, 1, 0, 0, 3, 4));
    add(m, op(PL_EV_BACKWARD, 1, 1, 0, 4, 5));
    add(m, op(PL_EV_BACKWARD, 0, 0, 0, 4, 5));
    add(m, op(PL_EV_BACKWARD, 0, 1, 0, 5, 6));
    static const double s0[] = {100, 200, 100}, s1[] = {50, 100, 50, 0};
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(viz_model_push_named(m, "activations s0", s0[i]), 0);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(viz_model_push_named(m, "activations s1", s1[i]), 0);
}

static void render_pane(viz_grid *g, int utf8, int w, int h, const viz_model *m)
{
    g->utf8 = utf8;
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(g, w, h), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.modeled = 1;
    viz_render_pane(g, PL_PANE_PIPELINE, (pl_rect){0, 0, w, h}, m, &v);
    if (getenv("PP_DUMP")) {
        char *t = viz_grid_text(g);
        fprintf(stderr, "\n%s", t);
        free(t);
    }
}

static void test_gpipe_cells(void)
{
    viz_model m;
    gpipe_2x2(&m);
    CU_ASSERT_DOUBLE_EQUAL(viz_bubble_fraction(&m, 1), 1.0 / 3, 1e-12);
    viz_grid g = {0};
    render_pane(&g, 0, 60, 6, &m); /* ASCII: NO_COLOR, LANG=C */
    char row[256];
    row_text(&g, 0, 0, 60, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "+ pipeline: gpipe, p 2, m 2, iteration 1, 6.00 s ----------+");
    row_text(&g, 1, 1, 58, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "bubble 33.3 % of the time (formula 33.3 %)                ");
    /* 2 cells a unit: F0 at columns 4-5 of the row, the bubble (t 2..4) as dots;
     * the gauges: 6 cells, 200 B the scale; s0 now 100 (3 cells), | at its
     * peak (200: the 6th cell); s1 now 0, its peak 100 at the 3rd */
    row_text(&g, 2, 1, 58, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "s0  F0F1....B0B1                         ###..|      200 B");
    row_text(&g, 3, 1, 58, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "s1  ..F0F1B0B1..                         ..|...      100 B");
    row_text(&g, 4, 1, 58, row, sizeof row);
    /* 58 cells: not room for "of micro-batch k" and "activations' peak" both; the
     * backward named as the narration names it (BWk) */
    CU_ASSERT_STRING_EQUAL(row, "Fk forward  Bk backward (BWk)  . bubble  | act. peak      ");
    /* the kinds in their colours, the letters bold, the peaks marked */
    CU_ASSERT_EQUAL(cell(&g, 5, 2)->fg, COL_FORWARD);
    CU_ASSERT_EQUAL(cell(&g, 5, 2)->attr, ATTR_BOLD);
    CU_ASSERT_EQUAL(cell(&g, 6, 2)->attr, 0);
    CU_ASSERT_EQUAL(cell(&g, 13, 2)->fg, COL_BACKWARD);
    CU_ASSERT_EQUAL(cell(&g, 9, 2)->fg, COL_DIM);
    CU_ASSERT_EQUAL(cell(&g, 47, 2)->fg, COL_WARN);
    CU_ASSERT_EQUAL(cell(&g, 44, 3)->fg, COL_WARN);
    CU_ASSERT_EQUAL(cell(&g, 42, 2)->fg, COL_COPY);
    CU_ASSERT_EQUAL(cell(&g, 45, 2)->fg, COL_DIM);
    /* UTF-8: the dots and the gauge's glyphs */
    render_pane(&g, 1, 60, 6, &m);
    row_text(&g, 2, 1, 58, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "s0  F0F1····B0B1                         ███░░│      200 B");
    /* wide: the ideal time's normalisation too */
    render_pane(&g, 0, 100, 6, &m);
    row_text(&g, 1, 1, 98, row, sizeof row);
    CU_ASSERT_PTR_NOT_NULL(strstr(row, "bubble 33.3 % of the time (formula 33.3 %), 50.0 % of the "
                                       "ideal time (formula 50.0 %)"));
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* The timeline of the same run: its F and B cells are their micro-batch's digit, reversed,
 * and its legend says what the digits are ("0-9 micro-batch" after the kinds, "0-9 mb" when
 * brief); a timeline without such cells has no such item. ASCII, 8 cells a unit. */
static void test_timeline_digits_legend(void)
{
    viz_model m;
    gpipe_2x2(&m);
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 60, 10), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.modeled = 1;
    v.t_end = 6;
    v.span = 6;
    v.ndev = 2;
    viz_render_pane(&g, PL_PANE_TIMELINE, (pl_rect){0, 0, 60, 10}, &m, &v);
    if (getenv("PP_DUMP")) {
        char *t = viz_grid_text(&g);
        fprintf(stderr, "\n%s", t);
        free(t);
    }
    char row[256];
    row_text(&g, 1, 1, 58, row, sizeof row); /* rank 0's compute lane: F0 F1, idle, B0 B1 */
    CU_ASSERT_STRING_EQUAL(row, "r0  cmp 00000000111111111................00000000011111111");
    CU_ASSERT(cell(&g, 9, 1)->attr == ATTR_REVERSE && cell(&g, 9, 1)->fg == COL_FORWARD);
    row_text(&g, 7, 1, 58, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "> forward  < backward  . idle  0-9 micro-batch            ");
    CU_ASSERT(cell(&g, 32, 7)->ch == '0' && cell(&g, 32, 7)->attr == ATTR_REVERSE);
    /* brief where the names do not fit */
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 40, 10), 0);
    viz_render_pane(&g, PL_PANE_TIMELINE, (pl_rect){0, 0, 40, 10}, &m, &v);
    row_text(&g, 7, 1, 38, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "> fwd  < bwd  . idle  0-9 mb          ");
    viz_model_free(&m);
    /* no micro-batches: no digits, no item */
    viz_model_init(&m, 1);
    pl_event e = op(PL_EV_FORWARD, 0, 0, 0, 0, 1);
    e.micro_batch = -1;
    add(&m, e);
    v.ndev = 1;
    v.t_end = v.span = 1;
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 60, 10), 0);
    viz_render_pane(&g, PL_PANE_TIMELINE, (pl_rect){0, 0, 60, 10}, &m, &v);
    char *t = viz_grid_text(&g);
    CU_ASSERT_PTR_NULL(strstr(t, "micro-batch"));
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "> forward"));
    free(t);
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* ZB-H1, p = 2, m = 2, F, B and W one unit each: stage 0 F0 F1, idle,
 * B0 W0 B1 W1; stage 1 idle, F0 B0 F1 B1 W0 W1. Makespan 7, busy 12 of
 * 14: 1/7 of the time, 2/12 of the ideal, as (p-1)/(3m+p-1) and
 * (p-1)/(3m) say. */
static void test_zb_h1_cells(void)
{
    char err[256];
    viz_model m;
    pl_viz_pipeline pp = {2, 2, 1, "zb-h1", 1.0 / 6, 1.0 / 7, 0, {0}};
    viz_model_init(&m, 2);
    CU_ASSERT_EQUAL_FATAL(viz_model_set_pipeline(&m, &pp, err, sizeof err), 0);
    static const struct {
        int kind, stage, k;
        double s;
    } ops[] = {
        {PL_EV_FORWARD, 0, 0, 0},  {PL_EV_FORWARD, 0, 1, 1},     {PL_EV_FORWARD, 1, 0, 1},
        {PL_EV_BACKWARD, 1, 0, 2}, {PL_EV_FORWARD, 1, 1, 3},     {PL_EV_BACKWARD, 0, 0, 3},
        {PL_EV_BACKWARD, 1, 1, 4}, {PL_EV_WEIGHT_GRAD, 0, 0, 4}, {PL_EV_WEIGHT_GRAD, 1, 0, 5},
        {PL_EV_BACKWARD, 0, 1, 5}, {PL_EV_WEIGHT_GRAD, 1, 1, 6}, {PL_EV_WEIGHT_GRAD, 0, 1, 6}};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        add(&m, op(ops[i].kind, ops[i].stage, ops[i].k, 0, ops[i].s, ops[i].s + 1));
    CU_ASSERT_DOUBLE_EQUAL(viz_bubble_fraction(&m, 1), 1.0 / 7, 1e-12);
    viz_grid g = {0};
    render_pane(&g, 0, 80, 6, &m);
    char row[256];
    row_text(&g, 1, 1, 78, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "bubble 14.3 % of the time (formula 14.3 %); 16.7 % of ideal "
                                "(formula 16.7 %)  ");
    row_text(&g, 2, 1, 24, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "s0  F0F1..B0W0B1W1      ");
    row_text(&g, 3, 1, 24, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "s1  ..F0B0F1B1W0W1      ");
    row_text(&g, 4, 1, 60, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "Fk forward of micro-batch k  Bk input grad  Wk weight grad  ");
    row_text(&g, 4, 61, 18, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, ". bubble          ");
    CU_ASSERT_EQUAL(cell(&g, 13, 2)->ch, 'W');
    CU_ASSERT_EQUAL(cell(&g, 13, 2)->fg, COL_WGRAD);
    CU_ASSERT_EQUAL(cell(&g, 14, 2)->ch, '0');
    CU_ASSERT_EQUAL(cell(&g, 11, 2)->fg, COL_BACKWARD);
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* Interleaving: an op of chunk 1 is a small letter, underlined; a box
 * wider than its number ends in its kind's glyph; a box too narrow for
 * its number has the letter alone. */
static void test_chunks_and_narrow_boxes(void)
{
    char err[256];
    viz_model m;
    pl_viz_pipeline pp = {2, 12, 2, "interleaved", 1.0 / 24, 1.0 / 25, 0, {0}};
    viz_model_init(&m, 2);
    CU_ASSERT_EQUAL_FATAL(viz_model_set_pipeline(&m, &pp, err, sizeof err), 0);
    /* m = 12: 3 cells the shortest op (1 unit); F11 of chunk 1 lasts 2 */
    add(&m, op(PL_EV_FORWARD, 0, 0, 0, 0, 1));
    add(&m, op(PL_EV_FORWARD, 0, 11, 1, 1, 3));
    add(&m, op(PL_EV_BACKWARD, 0, 3, 0, 3, 4));
    viz_grid g = {0};
    render_pane(&g, 1, 160, 6, &m); /* wide enough for the iteration's 50 units, 3 cells each */
    char row[256];
    row_text(&g, 2, 1, 20, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "s0  F0▶f11▶▶▶B3◀    ");
    CU_ASSERT_EQUAL(cell(&g, 8, 2)->attr, ATTR_BOLD | ATTR_UNDERLINE);
    CU_ASSERT_EQUAL(cell(&g, 10, 2)->attr, ATTR_UNDERLINE);
    CU_ASSERT_EQUAL(cell(&g, 5, 2)->attr, ATTR_BOLD);
    row_text(&g, 4, 1, 100, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(
        row, "Fk forward of micro-batch k  Bk backward (BWk)  \xc2\xb7 bubble  fk chunk 1"
             "                                ");
    viz_model_free(&m);
    /* 26 ops of one unit in 20 cells: compressed, letters without numbers */
    viz_model_init(&m, 1);
    for (int k = 0; k < 13; k++) add(&m, op(PL_EV_FORWARD, 0, k, 0, k, k + 1));
    for (int k = 0; k < 13; k++) add(&m, op(PL_EV_BACKWARD, 0, k, 0, 13 + k, 14 + k));
    render_pane(&g, 0, 26, 5, &m);
    row_text(&g, 2, 1, 24, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "s0  FFFFFFFFFFBBBBBBBBBB");
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* Live: the ops appear as they arrive (idle until the newest op's end is a
 * bubble, after it nothing yet); a forward of a micro-batch a stage
 * already ran starts the next iteration, which the pane shows alone; the
 * bubble line is the last complete iteration's. */
static void test_live_and_iterations(void)
{
    char err[256];
    viz_model m;
    pl_viz_pipeline pp = {2, 2, 1, "gpipe", 0.5, 1.0 / 3, 0, {0}};
    viz_model_init(&m, 2);
    CU_ASSERT_EQUAL_FATAL(viz_model_set_pipeline(&m, &pp, err, sizeof err), 0);
    viz_grid g = {0};
    char row[256];
    render_pane(&g, 0, 40, 6, &m);
    row_text(&g, 1, 1, 30, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "no forward/backward events yet");
    add(&m, op(PL_EV_FORWARD, 0, 0, 0, 0, 1));
    add(&m, op(PL_EV_FORWARD, 0, 1, 0, 1, 2));
    add(&m, op(PL_EV_FORWARD, 1, 0, 0, 1, 2));
    render_pane(&g, 0, 50, 6, &m);
    row_text(&g, 1, 1, 48, row, sizeof row);
    /* so far 3 units busy of 2 x 2, but the iteration is not over: no figure yet */
    CU_ASSERT_STRING_EQUAL(row, "bubble: iteration 1 in progress                 ");
    row_text(&g, 2, 1, 16, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "s0  F0F1        ");
    row_text(&g, 3, 1, 16, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "s1  ..F0        ");
    /* the rest of the iteration, then the next one's first forwards */
    add(&m, op(PL_EV_FORWARD, 1, 1, 0, 2, 3));
    add(&m, op(PL_EV_BACKWARD, 1, 0, 0, 3, 4));
    add(&m, op(PL_EV_BACKWARD, 1, 1, 0, 4, 5));
    add(&m, op(PL_EV_BACKWARD, 0, 0, 0, 4, 5));
    add(&m, op(PL_EV_BACKWARD, 0, 1, 0, 5, 6));
    add(&m, op(PL_EV_FORWARD, 0, 0, 0, 10, 11));
    viz_pp_round R;
    viz_pp_round_find(&m, 1, &R);
    CU_ASSERT_EQUAL(R.iteration, 2);
    CU_ASSERT_DOUBLE_EQUAL(R.lo, 10, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(R.hi, 11, 1e-12);
    CU_ASSERT_EQUAL(R.stage_it[1], 1); /* stage 1 has not started it */
    render_pane(&g, 0, 50, 6, &m);
    row_text(&g, 0, 0, 50, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "+ pipeline: gpipe, p 2, m 2, iteration 2, 1.00 s +");
    /* the bubble: iteration 1's, which is complete, named */
    CU_ASSERT_EQUAL(R.done, 1);
    row_text(&g, 1, 1, 48, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "iteration 1: bubble 33.3 % of the time          ");
    row_text(&g, 2, 1, 16, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "s0  F0          ");
    row_text(&g, 3, 1, 16, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "s1  ..          ");
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* GPipe, p = 8, m = 32, t_f = 1, t_b = 2 (units of 1 us), as the lab would
 * run it on a world of 8 ranks; with activations noted. */
static void gpipe_8x32(viz_model *m)
{
    char err[256];
    pl_viz_pipeline pp = {8, 32, 1, "gpipe", 7.0 / 32, 7.0 / 39, 0, {0}};
    viz_model_init(m, 8);
    CU_ASSERT_EQUAL_FATAL(viz_model_set_pipeline(m, &pp, err, sizeof err), 0);
    double u = 1e-6;
    for (int s = 0; s < 8; s++) {
        for (int k = 0; k < 32; k++)
            add(m, op(PL_EV_FORWARD, s, k, 0, (s + k) * u, (s + k + 1) * u));
        /* the backwards from 39 (the last forward's end on stage 7) back up */
        double b0 = 39 + 2 * (7 - s);
        for (int k = 0; k < 32; k++)
            add(m, op(PL_EV_BACKWARD, s, k, 0, (b0 + 2 * k) * u, (b0 + 2 * k + 2) * u));
        char name[32];
        snprintf(name, sizeof name, "activations s%d", s);
        for (int k = 1; k <= 32; k++) viz_model_push_named(m, name, 1024.0 * k);
        for (int k = 31; k >= 0; k--) viz_model_push_named(m, name, 1024.0 * k);
    }
}

/* Nothing outside r, and every stage's row inside it. */
static void check_big(int w, int h, int utf8)
{
    viz_model m;
    gpipe_8x32(&m);
    CU_ASSERT_DOUBLE_EQUAL(viz_bubble_fraction(&m, 1), 7.0 / 39, 1e-9);
    pl_layout L;
    pl_viz_layout(w, h, 8, LAB09_PANES, &L);
    CU_ASSERT_FATAL(L.ok);
    pl_rect r = L.pane[PL_PANE_PIPELINE];
    /* across the top of the body: a row per stage, the bubble line (and the legend) */
    CU_ASSERT_EQUAL(r.x, 0);
    CU_ASSERT_EQUAL(r.y, 1);
    CU_ASSERT_EQUAL(r.w, w);
    CU_ASSERT_EQUAL(r.h, h == 40 ? 12 : 11);
    viz_grid g = {0};
    g.utf8 = utf8;
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, w, h), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.modeled = 1;
    viz_render_pane(&g, PL_PANE_PIPELINE, r, &m, &v);
    if (getenv("PP_DUMP")) {
        char *t = viz_grid_text(&g);
        fprintf(stderr, "\n%s", t);
        free(t);
    }
    int outside = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if ((y < r.y || y >= r.y + r.h || x < r.x || x >= r.x + r.w) &&
                (cell(&g, x, y)->ch != ' ' || cell(&g, x, y)->attr))
                outside++;
    CU_ASSERT_EQUAL(outside, 0);
    char row[512], want[16];
    row_text(&g, r.y + 1, r.x + 1, r.w - 2, row, sizeof row);
    CU_ASSERT_PTR_NOT_NULL(strstr(row, "bubble 17.9 % of the time (formula 17.9 %)"));
    /* the compressed rows: stage s idle for its first s units (the dots),
     * 0.786 cells a unit at 120 columns (92 cells for the 117 units), 0.487
     * at 80 (57), the forwards then the backwards, letters without numbers */
    static const int dots120[8] = {0, 1, 2, 2, 3, 4, 5, 6}, dots80[8] = {0, 0, 1, 1, 2, 2, 3, 3};
    for (int s = 0; s < 8; s++) {
        row_text(&g, r.y + 2 + s, r.x + 1, 4, row, sizeof row);
        snprintf(want, sizeof want, "s%-2d ", s);
        CU_ASSERT_STRING_EQUAL(row, want);
        int d = 0;
        while (d < r.w - 6 && cell(&g, r.x + 5 + d, r.y + 2 + s)->ch == (utf8 ? 0xB7u : '.')) d++;
        CU_ASSERT_EQUAL(d, w == 120 ? dots120[s] : dots80[s]);
        CU_ASSERT_EQUAL(cell(&g, r.x + 5 + d, r.y + 2 + s)->ch, 'F');
        /* the gauge's peak: every stage held 32 KiB at most, the scale */
        row_text(&g, r.y + 2 + s, r.x + r.w - 9, 8, row, sizeof row);
        CU_ASSERT_STRING_EQUAL(row, "32.0 KiB");
    }
    /* stage 0 ends busy: its last cell before the gauge a B; stage 7's
     * first backward right after its last forward */
    int gw = w >= 102 ? 22 : 18, tw = r.w - 2 - 4 - gw;
    CU_ASSERT_EQUAL(cell(&g, r.x + 5 + tw - 1, r.y + 2)->ch, 'B');
    int x = r.x + 5, y7 = r.y + 2 + 7;
    int end = r.x + r.w - 1;
    while (x < end && cell(&g, x, y7)->ch != 'F') x++;
    while (x < end && cell(&g, x, y7)->ch == 'F') x++;
    CU_ASSERT_EQUAL(cell(&g, x, y7)->ch, 'B');
    /* stage 0 waits for the gradients from 32 to 53: 21 units, 16 or 10 cells */
    x = r.x + 5;
    while (x < end && cell(&g, x, r.y + 2)->ch == 'F') x++;
    int gap = 0;
    while (x + gap < end && cell(&g, x + gap, r.y + 2)->ch != 'B') gap++;
    CU_ASSERT_EQUAL(gap, w == 120 ? 17 : 10);
    if (w == 120) { /* the legend row under the stages */
        /* compressed: the letters alone, so no k in the legend either */
        row_text(&g, r.y + r.h - 2, r.x + 1, 57, row, sizeof row);
        CU_ASSERT_STRING_EQUAL(row, "F forward  B backward (BW)  . bubble  | activations' peak");
    } else { /* in the bottom border */
        row_text(&g, r.y + r.h - 1, r.x + 2, 57, row, sizeof row);
        CU_ASSERT_STRING_EQUAL(
            row, utf8
                     ? "F forward  B backward (BW)  \xc2\xb7 bubble  \xe2\x94\x82 activations' peak"
                     : "F forward  B backward (BW)  . bubble  | activations' peak");
    }
    viz_grid_free(&g);
    viz_model_free(&m);
}

static void test_p8_m32_120x40(void) { check_big(120, 40, 0); }
static void test_p8_m32_80x24(void) { check_big(80, 24, 1); }

/* "activations s<r>" notes are the gauges' (now and peak), not series:
 * the metrics pane's curve stays the loss's. */
static void test_activations_not_series(void)
{
    viz_model m;
    viz_model_init(&m, 2);
    CU_ASSERT_EQUAL(viz_model_push_named(&m, "activations s1", 300), 0);
    CU_ASSERT_EQUAL(viz_model_push_named(&m, "loss", 2.5), 0);
    CU_ASSERT_EQUAL(viz_model_push_named(&m, "activations s1", 700), 0);
    CU_ASSERT_EQUAL(viz_model_push_named(&m, "activations s1", 200), 0);
    for (int s = 2; s < 8; s++) {
        char name[32];
        snprintf(name, sizeof name, "activations s%d", s);
        CU_ASSERT_EQUAL(viz_model_push_named(&m, name, 10), 0);
    }
    pl_note n = {.kind = PL_NOTE_METRIC, .value = 5};
    snprintf(n.name, sizeof n.name, "activations s0");
    CU_ASSERT_EQUAL(viz_model_note(&m, &n), 0);
    CU_ASSERT_EQUAL(m.nseries, 1);
    CU_ASSERT_STRING_EQUAL(m.series[0].name, "loss");
    CU_ASSERT_EQUAL(m.act_seen[1], 1);
    CU_ASSERT_DOUBLE_EQUAL(m.act_now[1], 200, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.act_peak[1], 700, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.act_now[0], 5, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.act_now[7], 10, 0);
    CU_ASSERT_EQUAL(m.act_seen[8], 0);
    /* the metrics pane draws the loss: its headline */
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 50, 10), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    viz_render_pane(&g, PL_PANE_METRICS, (pl_rect){0, 0, 50, 10}, &m, &v);
    char *text = viz_grid_text(&g);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "loss 2.5000, the last of 1"));
    CU_ASSERT_PTR_NULL(strstr(text, "activations"));
    free(text);
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* A pipeline's messages: the comm engine's send and receive events (peer
 * the other stage) put their bytes on the topology's links, both ways. */
static void test_sends_on_topology(void)
{
    viz_model m;
    viz_model_init(&m, 2);
    pl_event s = op(PL_EV_SEND, 0, 0, 0, 1, 1.5), r = op(PL_EV_RECV, 1, 0, 0, 1, 1.5);
    s.lane = r.lane = PL_LANE_COMM;
    s.micro_batch = r.micro_batch = s.layer = r.layer = -1;
    s.peer = 1;
    r.peer = 0;
    s.bytes = r.bytes = 4096;
    add(&m, s);
    add(&m, r);
    pl_event gs = s, gr = r; /* the gradient back */
    gs.rank = 1;
    gs.peer = 0;
    gr.rank = 0;
    gr.peer = 1;
    gs.bytes = gr.bytes = 2048;
    add(&m, gs);
    add(&m, gr);
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 40, 12), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 2;
    int cols, page;
    CU_ASSERT_EQUAL(viz_topology_links(&m, &v, (pl_rect){0, 0, 40, 12}, &cols, &page), 2);
    viz_render_pane(&g, PL_PANE_TOPOLOGY, (pl_rect){0, 0, 40, 12}, &m, &v);
    char *text = viz_grid_text(&g);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "0>1 4.0 KiB"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "1>0 2.0 KiB"));
    free(text);
    /* and they are no pipeline ops */
    CU_ASSERT_EQUAL(viz_bubble_fraction(&m, 1), -1);
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* Descriptions the pane cannot draw: refused naming the value. */
static void test_pipeline_refused(void)
{
    char err[256];
    static const struct {
        pl_viz_pipeline p;
        int nranks;
        const char *want;
    } c[] = {
        {{0, 4, 1, "gpipe", 0.5, 0.2, 0, {0}},
         4,
         "pipeline pane: 0 stages: allowed are 1..64 stages"},
        {{3, 4, 1, "gpipe", 0.5, 0.2, 0, {0}},
         4,
         "pipeline pane: 3 stages for 4 ranks: allowed are a number of stages that divides the "
         "world's ranks"},
        {{2, 0, 1, "gpipe", 0.5, 0.2, 0, {0}},
         2,
         "pipeline pane: 0 micro-batches: allowed are 1..4096 micro-batches"},
        {{2, 4, 9, "gpipe", 0.5, 0.2, 0, {0}},
         2,
         "pipeline pane: 9 chunks: allowed are 1..8 chunks"},
        {{2, 4, 1, "", 0.5, 0.2, 0, {0}},
         2,
         "pipeline pane: schedule name of 0 bytes: allowed are a schedule name of 1 to 15 bytes"},
        {{2, 4, 1, "gpipe", 0.25, 1.5, 0, {0}},
         2,
         "pipeline pane: bubble 0.25 of the ideal time, 1.5 of the total: allowed are of_ideal >= "
         "0 and of_total in [0, 1), or both negative (no formula)"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        err[0] = '\0';
        CU_ASSERT_EQUAL(pl_viz_check_pipeline(&c[i].p, c[i].nranks, err, sizeof err), -1);
        CU_ASSERT_STRING_EQUAL(err, c[i].want);
    }
    pl_viz_pipeline none = {2, 1, 1, "zb-h1", -1, -1, 0, {0}};
    CU_ASSERT_EQUAL(pl_viz_check_pipeline(&none, 2, err, sizeof err), 0);
    CU_ASSERT_EQUAL(pl_viz_check_pipeline(NULL, 2, err, sizeof err), 0);
    viz_model m;
    viz_model_init(&m, 2);
    CU_ASSERT_EQUAL(viz_model_set_pipeline(&m, &c[0].p, err, sizeof err), -1);
    CU_ASSERT_EQUAL(m.pp.stages, 0);
    /* without a formula the line says so: ZB-H1, m = 1, every op one unit (F0 on
     * stage 0, then stage 1's F0 B0 W0, then stage 0's B0 W0): makespan 5, busy 6
     * of 10. While the iteration runs (its W's not yet in), no figure */
    CU_ASSERT_EQUAL(viz_model_set_pipeline(&m, &none, err, sizeof err), 0);
    add(&m, op(PL_EV_FORWARD, 0, 0, 0, 0, 1));
    add(&m, op(PL_EV_FORWARD, 1, 0, 0, 1, 2));
    add(&m, op(PL_EV_BACKWARD, 1, 0, 0, 2, 3));
    add(&m, op(PL_EV_BACKWARD, 0, 0, 0, 3, 4));
    viz_grid g = {0};
    render_pane(&g, 0, 50, 6, &m);
    char row[128];
    row_text(&g, 1, 1, 48, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "bubble: iteration 1 in progress                 ");
    add(&m, op(PL_EV_WEIGHT_GRAD, 1, 0, 0, 3, 4));
    add(&m, op(PL_EV_WEIGHT_GRAD, 0, 0, 0, 4, 5));
    render_pane(&g, 0, 50, 6, &m);
    row_text(&g, 1, 1, 48, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "bubble 40.0 % of the time (no formula)          ");
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* The pipeline through a trace file: pl_trace_writer_describe_pipeline,
 * read back exactly (a formula's fractions, or none); a corrupt one, or a
 * second, refused naming its event and what is allowed. */
static void test_pipeline_metadata(void)
{
    char path[] = "/tmp/paralab-pp-XXXXXX", err[512];
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    pl_trace_writer *w = pl_trace_writer_open(path, 8, 1, 0, err, sizeof err);
    CU_ASSERT_FATAL(w != NULL);
    CU_ASSERT_EQUAL(pl_trace_writer_describe(w, "lab 09 pipeline", 3, LAB09_PANES, 0), 0);
    CU_ASSERT_EQUAL(
        pl_trace_writer_describe_pipeline(w, 8, 32, 2, "interleaved", 7.0 / 64, 7.0 / 71, NULL), 0);
    pl_event e = op(PL_EV_WEIGHT_GRAD, 3, 5, 1, 1e-6, 2e-6);
    CU_ASSERT_EQUAL(pl_trace_writer_add(w, &e, 1), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    viz_trace t;
    int rc = viz_read_trace(path, &t, err, sizeof err);
    if (rc) fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(t.pipeline.stages, 8);
    CU_ASSERT_EQUAL(t.pipeline.micro_batches, 32);
    CU_ASSERT_EQUAL(t.pipeline.chunks, 2);
    CU_ASSERT_STRING_EQUAL(t.pipeline.schedule, "interleaved");
    CU_ASSERT(t.pipeline.of_ideal == 7.0 / 64); /* exactly */
    CU_ASSERT(t.pipeline.of_total == 7.0 / 71);
    CU_ASSERT_EQUAL(t.nev, 1);
    CU_ASSERT_EQUAL(t.ev[0].kind, PL_EV_WEIGHT_GRAD);
    CU_ASSERT_EQUAL(t.ev[0].chunk, 1);
    CU_ASSERT_EQUAL(t.ev[0].layer, 3);
    CU_ASSERT_EQUAL(t.ev[0].micro_batch, 5);
    viz_model m;
    viz_model_init(&m, t.nranks);
    CU_ASSERT_EQUAL(viz_model_set_pipeline(&m, &t.pipeline, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(m.pp.schedule, "interleaved");
    viz_model_free(&m);
    viz_trace_free(&t);
    /* no formula: null, read back as none */
    w = pl_trace_writer_open(path, 2, 1, 0, err, sizeof err);
    CU_ASSERT_FATAL(w != NULL);
    CU_ASSERT_EQUAL(pl_trace_writer_describe_pipeline(w, 2, 1, 1, "zb-h1", -1, -1, NULL), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(viz_read_trace(path, &t, err, sizeof err), 0);
    CU_ASSERT_EQUAL(t.pipeline.stages, 2);
    CU_ASSERT(t.pipeline.of_ideal < 0 && t.pipeline.of_total < 0);
    viz_trace_free(&t);
    /* corrupt ones */
    static const struct {
        const char *args, *want;
    } bad[] = {
        {"{\"stages\":0,\"micro_batches\":4,\"chunks\":1,\"schedule\":\"gpipe\",\"of_ideal\":0.5,"
         "\"of_total\":0.2}",
         ": event 1: a pipeline (\"paralab pipeline\") needs args.stages (1..64), micro_batches "
         "(1..4096) and chunks (1..8), whole numbers; schedule (a name of 1 to 15 bytes); "
         "of_ideal (a number >= 0) and of_total (a number in [0, 1)), or both null (no formula)"},
        {"{\"stages\":2,\"micro_batches\":4,\"chunks\":1,\"schedule\":\"gpipe\",\"of_ideal\":0.5,"
         "\"of_total\":1.2}",
         ": event 1: a pipeline (\"paralab pipeline\") needs"},
        {"{\"stages\":2,\"micro_batches\":4,\"chunks\":1,\"of_ideal\":0.5,\"of_total\":0.2}",
         ": event 1: a pipeline (\"paralab pipeline\") needs"},
        {"{\"stages\":2,\"micro_batches\":4.5,\"chunks\":1,\"schedule\":\"gpipe\",\"of_ideal\":"
         "null,"
         "\"of_total\":null}",
         ": event 1: a pipeline (\"paralab pipeline\") needs"},
        {"{\"stages\":2,\"micro_batches\":4,\"chunks\":1,\"schedule\":\"gpipe\",\"of_ideal\":null,"
         "\"of_total\":0.2}",
         ": event 1: a pipeline (\"paralab pipeline\") needs"},
        /* 4 stages of a 2-rank trace (otherData.ranks) */
        {"{\"stages\":4,\"micro_batches\":4,\"chunks\":1,\"schedule\":\"gpipe\",\"of_ideal\":0.75,"
         "\"of_total\":0.4}",
         ": pipeline pane: 4 stages for 2 ranks: allowed are a number of stages that divides the "
         "world's ranks"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad + 1; i++) {
        FILE *f = fopen(path, "w");
        CU_ASSERT_FATAL(f != NULL);
        const char *args = i < sizeof bad / sizeof *bad ? bad[i].args : bad[0].args + 0;
        fprintf(f,
                "{\"otherData\":{\"ranks\":2},\"traceEvents\":[{\"ph\":\"M\",\"name\":\"paralab\","
                "\"pid\":0,\"args\":{}},\n"
                "{\"ph\":\"M\",\"name\":\"paralab pipeline\",\"pid\":0,\"args\":%s},\n"
                "{\"ph\":\"X\",\"name\":\"F0\",\"cat\":\"forward\",\"pid\":1,\"tid\":0,\"ts\":1,"
                "\"dur\":1,\"args\":{\"lane\":0,\"layer\":1,\"micro_batch\":0}}%s]}\n",
                i < sizeof bad / sizeof *bad
                    ? args
                    : "{\"stages\":2,\"micro_batches\":4,\"chunks\":1,\"schedule\":\"gpipe\","
                      "\"of_ideal\":0.25,\"of_total\":0.2}",
                i < sizeof bad / sizeof *bad
                    ? ""
                    : ",\n{\"ph\":\"M\",\"name\":\"paralab pipeline\",\"pid\":0,\"args\":{}}");
        fclose(f);
        err[0] = '\0';
        CU_ASSERT_EQUAL(viz_read_trace(path, &t, err, sizeof err), -1);
        char want[600];
        snprintf(want, sizeof want, "%s%s", path,
                 i < sizeof bad / sizeof *bad
                     ? bad[i].want
                     : ": event 3: a second pipeline (\"paralab pipeline\"): a trace has one");
        CU_ASSERT_EQUAL(strncmp(err, want, strlen(want)), 0);
        if (strncmp(err, want, strlen(want))) fprintf(stderr, "\n  got %s\n  want %s\n", err, want);
    }
    unlink(path);
}

int register_pipeline_pane_suite(void)
{
    static const unit_test t[] = {
        {"GPipe p 2 m 2: boxes, bubbles, the bubble line, the gauges' peaks", test_gpipe_cells},
        {"ZB-H1 p 2 m 2: F, B and W boxes, its bubble against the formula", test_zb_h1_cells},
        {"the timeline's micro-batch digits, in its legend", test_timeline_digits_legend},
        {"a chunk's box; boxes wider than, and too narrow for, their numbers",
         test_chunks_and_narrow_boxes},
        {"live: ops as they arrive; the newest iteration", test_live_and_iterations},
        {"p 8 m 32 at 120x40: every stage's row, compressed, inside the pane", test_p8_m32_120x40},
        {"p 8 m 32 at 80x24 (UTF-8): every stage's row, inside the pane", test_p8_m32_80x24},
        {"activation notes: the gauges', no series", test_activations_not_series},
        {"a pipeline's sends and receives on the topology", test_sends_on_topology},
        {"descriptions refused with their value; no formula", test_pipeline_refused},
        {"the pipeline through a trace file; corrupt ones refused", test_pipeline_metadata},
    };
    return UNIT_SUITE("pipeline pane", t);
}
