/*
 * test_shards.c — the shards pane (viz/panes.c) of a tensor-parallel lab:
 * Lab 08's matrices (W1 64x256 column-parallel, W2 256x64 row-parallel,
 * the classifier Wc 64xCp column-parallel with its padded classes) drawn
 * into the cell grid, cell by cell, in the pane the layout gives at 80x24
 * and at 120x40, with t = 4 and 8; which shard each rank multiplies (the
 * latest matmul event at the view's time, forward and backward, a block's
 * and the head's, ranks apart); the ASCII twins; every pane size from 1x1,
 * drawn inside its rectangle or saying it is too small; matmul events are
 * not pipeline stages; bad descriptions refused with their value; the
 * matrices through a trace file and a replay played to its end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../viz/vizint.h"
#include "paralab/trace.h"
#include "paralab/viz.h"
#include "suites.h"

/* The panes Lab 08 is expected to show. */
#define LAB08_PANES                                                                                \
    (PL_PANE_BIT(PL_PANE_DEVICES) | PL_PANE_BIT(PL_PANE_TIMELINE) |                                \
     PL_PANE_BIT(PL_PANE_TOPOLOGY) | PL_PANE_BIT(PL_PANE_SHARDS) | PL_PANE_BIT(PL_PANE_METRICS))

/* Lab 08's matrices at t ranks: h = 64, the 10 classes padded to a multiple of t. */
static void lab08_matrices(int t, pl_viz_matrix m[3])
{
    int cp = (10 + t - 1) / t * t;
    m[0] = (pl_viz_matrix){"W1", 64, 256, 'c', 0};
    m[1] = (pl_viz_matrix){"W2", 256, 64, 'r', 0};
    m[2] = (pl_viz_matrix){"Wc", 64, cp, 'c', cp - 10};
}

static pl_event matmul(int rank, int kind, double s, double e, int layer, const char *label)
{
    pl_event x;
    memset(&x, 0, sizeof x);
    x.rank = rank;
    x.lane = PL_LANE_COMPUTE;
    x.kind = (uint8_t)kind;
    x.start = s;
    x.end = e;
    x.micro_batch = -1;
    x.layer = layer;
    x.peer = -1;
    snprintf(x.label, sizeof x.label, "%s", label);
    return x;
}

/* A model of t ranks with Lab 08's matrices; every rank multiplies W1 of
 * block 1 in [0, 1], then W2 in [2, 3] (forward). */
static void lab08_model(viz_model *m, int t)
{
    pl_viz_matrix mx[3];
    char err[256];
    lab08_matrices(t, mx);
    viz_model_init(m, t);
    CU_ASSERT_EQUAL_FATAL(viz_model_set_matrices(m, mx, 3, t, err, sizeof err), 0);
    for (int r = 0; r < t; r++) {
        pl_event a = matmul(r, PL_EV_FORWARD, 0, 1, 1, "W1"),
                 k = matmul(r, PL_EV_KERNEL, 0.1, 0.9, -1, "gemm"),
                 b = matmul(r, PL_EV_FORWARD, 2, 3, 1, "W2");
        viz_model_add(m, &a);
        viz_model_add(m, &k); /* a kernel inside: not a matmul event */
        viz_model_add(m, &b);
    }
}

/* Row y of g from x, w cells, as UTF-8. */
static void row_text(const viz_grid *g, int y, int x, int w, char *out, size_t cap)
{
    size_t n = 0;
    for (int i = x; i < x + w && n + 5 < cap; i++) {
        uint32_t c = g->cells[y * g->w + i].ch;
        if (c < 0x80)
            out[n++] = (char)c;
        else if (c < 0x800) {
            out[n++] = (char)(0xC0 | c >> 6);
            out[n++] = (char)(0x80 | (c & 0x3F));
        } else {
            out[n++] = (char)(0xE0 | c >> 12);
            out[n++] = (char)(0x80 | (c >> 6 & 0x3F));
            out[n++] = (char)(0x80 | (c & 0x3F));
        }
    }
    out[n] = '\0';
}

/* The pane's rows are exactly want[0..h-1]; on a failure, prints them. */
static int pane_is(const viz_grid *g, pl_rect r, const char *const *want)
{
    int bad = 0;
    char row[512];
    for (int y = 0; y < r.h; y++) {
        row_text(g, r.y + y, r.x, r.w, row, sizeof row);
        if (strcmp(row, want[y])) {
            fprintf(stderr, "\n  row %d: '%s'\n  want:   '%s'", y, row, want[y]);
            bad++;
        }
    }
    return bad == 0;
}

static const viz_cell *cell(const viz_grid *g, pl_rect r, int x, int y)
{
    return &g->cells[(r.y + y) * g->w + r.x + x];
}

/* Cells (x0..x1, y) of the pane all reversed (the shard being multiplied) or none. */
static int reversed(const viz_grid *g, pl_rect r, int x0, int x1, int y, int want)
{
    for (int x = x0; x <= x1; x++)
        if (!!(cell(g, r, x, y)->attr & ATTR_REVERSE) != want) return 0;
    return 1;
}

/* Nothing drawn outside r: the pane alone, rendered into a blank grid. */
static int inside_only(viz_grid *g, pl_rect r)
{
    for (int y = 0; y < g->h; y++)
        for (int x = 0; x < g->w; x++) {
            int in = x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
            if (!in && g->cells[y * g->w + x].ch != ' ') return 0;
        }
    return 1;
}

/* 80x24, t = 4: the pane the layout gives Lab 08 (25x8 under the
 * timeline, beside the metrics), in the full screen; each matrix side by
 * side, W1 wide, W2 tall, Wc narrow, every shard in its rank's digit and
 * colour; the shard each rank multiplies in reverse video with ▶ at its
 * matrix's name, the block and direction in the first row. */
static void test_shards_80x24(void)
{
    pl_layout L;
    pl_viz_layout(80, 24, 4, LAB08_PANES, &L);
    CU_ASSERT_FATAL(L.ok);
    pl_rect r = L.pane[PL_PANE_SHARDS];
    CU_ASSERT(r.x == 30 && r.y == 12 && r.w == 25 && r.h == 8);
    viz_model m;
    lab08_model(&m, 4);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 4;
    v.t_end = 3; /* the timeline's end: W2's forward has run */
    v.span = 3;
    v.title = "lab 08";
    viz_grid g = {0};
    g.utf8 = 1;
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 80, 24), 0);
    viz_render(&g, &L, &m, &v);
    static const char *const fwd_w2[] = {
        "┌ shards (tp 4) ────────┐", //
        "│block 1 fwd: W2 shards │", //
        "│ W1       ▶W2     Wc   │", //
        "│00112233  00000  0123  │", //
        "│00112233  11111  0123  │", //
        "│          22222        │", //
        "│          33333        │", //
        "└───────────────────────┘",
    };
    CU_ASSERT(pane_is(&g, r, fwd_w2));
    /* W2's four row shards reversed, W1's and Wc's not; the rank colours */
    for (int y = 3; y <= 6; y++) CU_ASSERT(reversed(&g, r, 11, 15, y, 1));
    CU_ASSERT(reversed(&g, r, 1, 8, 3, 0) && reversed(&g, r, 1, 8, 4, 0));
    CU_ASSERT(reversed(&g, r, 18, 21, 3, 0));
    CU_ASSERT_EQUAL(cell(&g, r, 1, 3)->fg, COL_RANK0);      /* W1's shard 0 */
    CU_ASSERT_EQUAL(cell(&g, r, 6, 3)->fg, COL_RANK0 + 2);  /* W1's shard 2 */
    CU_ASSERT_EQUAL(cell(&g, r, 13, 6)->fg, COL_RANK0 + 3); /* W2's shard 3 */
    CU_ASSERT_EQUAL(cell(&g, r, 19, 4)->fg, COL_RANK0 + 1); /* Wc's shard 1 */
    CU_ASSERT_EQUAL(cell(&g, r, 11, 2)->fg, COL_FORWARD);
    /* the pane alone draws nothing outside its rectangle */
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_SHARDS, r, &m, &v);
    CU_ASSERT(inside_only(&g, r));
    /* earlier on the timeline (t = 1): W1 is being multiplied */
    v.t_end = 1;
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_SHARDS, r, &m, &v);
    static const char *const fwd_w1[] = {
        "┌ shards (tp 4) ────────┐", //
        "│block 1 fwd: W1 shards │", //
        "│▶W1        W2     Wc   │", //
        "│00112233  00000  0123  │", //
        "│00112233  11111  0123  │", //
        "│          22222        │", //
        "│          33333        │", //
        "└───────────────────────┘",
    };
    CU_ASSERT(pane_is(&g, r, fwd_w1));
    CU_ASSERT(reversed(&g, r, 1, 8, 3, 1) && reversed(&g, r, 11, 15, 3, 0));
    /* backward through W2: ◀ */
    for (int k = 0; k < 4; k++) {
        pl_event b = matmul(k, PL_EV_BACKWARD, 4, 5, 1, "W2");
        viz_model_add(&m, &b);
    }
    v.t_end = 5;
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_SHARDS, r, &m, &v);
    char row[256];
    row_text(&g, r.y + 1, r.x, r.w, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "│block 1 bwd: W2 shards │");
    row_text(&g, r.y + 2, r.x, r.w, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "│ W1       ◀W2     Wc   │");
    CU_ASSERT_EQUAL(cell(&g, r, 11, 2)->fg, COL_BACKWARD);
    /* the head's classifier (layer -1) */
    for (int k = 0; k < 4; k++) {
        pl_event c = matmul(k, PL_EV_FORWARD, 6, 7, -1, "Wc");
        viz_model_add(&m, &c);
    }
    v.t_end = 7;
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_SHARDS, r, &m, &v);
    row_text(&g, r.y + 1, r.x, r.w, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "│head fwd: Wc shards    │");
    CU_ASSERT(reversed(&g, r, 18, 21, 3, 1) && reversed(&g, r, 11, 15, 3, 0));
    /* ranks apart: rank 0 already on block 0's W1, the others on the head */
    pl_event a = matmul(0, PL_EV_FORWARD, 8, 9, 0, "W1");
    viz_model_add(&m, &a);
    v.t_end = 9;
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_SHARDS, r, &m, &v);
    row_text(&g, r.y + 1, r.x, r.w, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "│r0 b0 fwd W1, r1 head f│");
    row_text(&g, r.y + 2, r.x, r.w, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "│▶W1        W2    ▶Wc   │");
    /* W1's shard 0 (rank 0's) and Wc's shards 1..3 */
    CU_ASSERT(reversed(&g, r, 1, 2, 3, 1) && reversed(&g, r, 3, 8, 3, 0));
    CU_ASSERT(reversed(&g, r, 18, 18, 3, 0) && reversed(&g, r, 19, 21, 3, 1));
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* Lab 08's metrics pane at 80x24 (25x8 beside the shards): each line in a form that fits its
 * 23 cells, not cut at the edge: 13 events and rank 0's all-reduce of 16 KiB in 18 us. */
static void test_metrics_80x24_forms(void)
{
    pl_layout L;
    pl_viz_layout(80, 24, 4, LAB08_PANES, &L);
    pl_rect r = L.pane[PL_PANE_METRICS];
    CU_ASSERT_FATAL(r.w == 25 && r.h == 8);
    viz_model m;
    lab08_model(&m, 4);
    pl_event c;
    memset(&c, 0, sizeof c);
    c.lane = PL_LANE_COMM;
    c.kind = PL_EV_COLLECTIVE;
    c.start = 3;
    c.end = 3 + 18e-6;
    c.bytes = 16384;
    c.micro_batch = c.layer = c.peer = -1;
    snprintf(c.label, sizeof c.label, "all_reduce");
    CU_ASSERT_EQUAL(viz_model_add(&m, &c), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 4;
    v.t_end = 3.1;
    v.span = 3.1;
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 80, 24), 0);
    viz_render_pane(&g, PL_PANE_METRICS, r, &m, &v);
    static const char *const want[] = {
        "+ metrics --------------+", //
        "|13 ev, 1 coll, 16.0 KiB|", //
        "|all_reduce 16.0 KiB    |", //
        "|busy: cmp 67 %, cpy 0 %|", //
        "|                       |", //
        "|                       |", //
        "|                       |", //
        "+-----------------------+",
    };
    CU_ASSERT(pane_is(&g, r, want));
    /* wide: the long forms, as before */
    r = (pl_rect){0, 0, 70, 6};
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_METRICS, r, &m, &v);
    char row[256];
    row_text(&g, 1, 1, 68, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row,
                           "13 events, 1 collective (16.0 KiB)                                  ");
    row_text(&g, 2, 1, 68, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row,
                           "last: all_reduce 16.0 KiB in 18.0 us, 910.22 MB/s algbw             ");
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* 80x24 with t = 8: W2's 8 row shards do not fit in 4 rows, so a row per
 * matrix; ASCII (LANG=C) and no colour: the digits, '>' at the matrix
 * multiplied, '.' for Wc's padded classes (16 = 10 + 6: ranks 5..7 hold
 * only padding). */
static void test_shards_compact_ascii(void)
{
    pl_layout L;
    pl_viz_layout(80, 24, 8, LAB08_PANES, &L);
    pl_rect r = L.pane[PL_PANE_SHARDS];
    CU_ASSERT_FATAL(r.w == 25 && r.h == 8);
    viz_model m;
    lab08_model(&m, 8);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.t_end = 3;
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 80, 24), 0);
    viz_render_pane(&g, PL_PANE_SHARDS, r, &m, &v);
    static const char *const want[] = {
        "+ shards (tp 8) --------+", //
        "|block 1 fwd: W2 shards |", //
        "| W1 01234567 cols      |", //
        "|>W2 01234567 rows      |", //
        "| Wc 01234... cols      |", //
        "|no collective after it |", /* the trace's: none on rank 0 since W2 began */
        "|                       |", //
        "+-----------------------+",
    };
    CU_ASSERT(pane_is(&g, r, want));
    CU_ASSERT(reversed(&g, r, 5, 12, 3, 1) && reversed(&g, r, 5, 12, 2, 0));
    CU_ASSERT(inside_only(&g, r));
    /* the devices band instead of the topology (40x6): a row per matrix
     * too, with the words */
    pl_viz_layout(80, 24, 4, LAB08_PANES & ~PL_PANE_BIT(PL_PANE_TOPOLOGY), &L);
    r = L.pane[PL_PANE_SHARDS];
    CU_ASSERT_FATAL(r.w == 40 && r.h == 6);
    viz_model_free(&m);
    lab08_model(&m, 4);
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_SHARDS, r, &m, &v);
    static const char *const band[] = {
        "+ shards (tp 4) -----------------------+", //
        "|block 1 forward: each rank's W2 shard |", //
        "| W1 0000111122223333 4 col 64x64      |", //
        "|>W2 0000111122223333 4 row 64x64      |", //
        "| Wc 0000111122223... 4 col 64x3 +2 pad|", //
        "+--------------------------------------+",
    };
    CU_ASSERT(pane_is(&g, r, band));
    CU_ASSERT(inside_only(&g, r));
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* 120x40: the pane is 42x12; the shapes over the drawings and the shards'
 * shapes under them; with t = 8 the classifier's padding shows. */
static void test_shards_120x40(void)
{
    pl_layout L;
    pl_viz_layout(120, 40, 4, LAB08_PANES, &L);
    pl_rect r = L.pane[PL_PANE_SHARDS];
    CU_ASSERT_FATAL(r.x == 36 && r.y == 19 && r.w == 42 && r.h == 12);
    viz_model m;
    lab08_model(&m, 4);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.t_end = 3;
    viz_grid g = {0};
    g.utf8 = 1;
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 120, 40), 0);
    viz_render_pane(&g, PL_PANE_SHARDS, r, &m, &v);
    static const char *const t4[] = {
        "┌ shards (tp 4) ─────────────────────────┐", //
        "│block 1 forward: each rank's W2 shard   │", //
        "│ W1 64x256    ▶W2      Wc               │", //
        "│000111222333  000000  0123              │", //
        "│000111222333  111111  0123              │", //
        "│000111222333  222222  0123              │", //
        "│              333333                    │", //
        "│W1 64x256: 4 column shards of 64x64     │", //
        "│W2 256x64: 4 row shards of 64x64        │", //
        "│Wc: 4 col 64x3 +2 pad                   │", //
        "│after it: no collective yet             │", //
        "└────────────────────────────────────────┘",
    };
    CU_ASSERT(pane_is(&g, r, t4));
    for (int y = 3; y <= 6; y++) CU_ASSERT(reversed(&g, r, 15, 20, y, 1));
    CU_ASSERT(inside_only(&g, r));
    /* the row-parallel W2's partial sums all-reduced (g) on every rank at t = 2.5, and a
     * ring step (not a collective of its own): the row under the words says so, from the
     * trace; W1 (column-parallel, t = 1) had none after it */
    for (int rk = 0; rk < 4; rk++) {
        pl_event c;
        memset(&c, 0, sizeof c);
        c.rank = rk;
        c.lane = PL_LANE_COMM;
        c.kind = PL_EV_COLLECTIVE;
        c.start = 2.5;
        c.end = 2.9;
        c.bytes = 16384;
        c.micro_batch = c.layer = c.peer = -1;
        snprintf(c.label, sizeof c.label, "all_reduce");
        viz_model_add(&m, &c);
        c.kind = PL_EV_RING_STEP;
        c.start = 2.6;
        c.end = 2.7;
        snprintf(c.label, sizeof c.label, "all_reduce step 1");
        viz_model_add(&m, &c);
    }
    char arow[256];
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_SHARDS, r, &m, &v);
    row_text(&g, r.y + 10, r.x, r.w, arow, sizeof arow);
    CU_ASSERT_STRING_EQUAL(arow, "│after it: 1 all_reduce, 16.0 KiB        │");
    CU_ASSERT_EQUAL(cell(&g, r, 1, 10)->fg, COL_COMM);
    v.t_end = 1;
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_SHARDS, r, &m, &v);
    row_text(&g, r.y + 10, r.x, r.w, arow, sizeof arow);
    CU_ASSERT_STRING_EQUAL(arow, "│after it: no collective yet             │");
    row_text(&g, r.y + 2, r.x, r.w, arow, sizeof arow);
    CU_ASSERT_STRING_EQUAL(arow, "│▶W1 64x256     W2      Wc               │");
    v.t_end = 3;
    viz_model_free(&m);
    lab08_model(&m, 8);
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_SHARDS, r, &m, &v);
    static const char *const t8[] = {
        "┌ shards (tp 8) ─────────────────────────┐", //
        "│block 1 forward: each rank's W2 shard   │", //
        "│ W1 64x256        ▶W2         Wc        │", //
        "│0011223344556677  000000000  01234░░░   │", //
        "│0011223344556677  111111111  01234░░░   │", //
        "│0011223344556677  222222222  01234░░░   │", //
        "│0011223344556677  333333333  01234░░░   │", //
        "│0011223344556677  444444444  01234░░░   │", //
        "│                  555555555             │", //
        "│                  666666666             │", //
        "│                  777777777             │", //
        "└────────────────────────────────────────┘",
    };
    CU_ASSERT(pane_is(&g, r, t8));
    CU_ASSERT_EQUAL(cell(&g, r, 35, 3)->fg, COL_RANK0 + 5); /* padding, rank 5's */
    /* a wide pane: the whole sentence and every shard's words */
    viz_grid_resize(&g, 70, 16);
    r = (pl_rect){0, 0, 70, 16};
    viz_model_free(&m);
    lab08_model(&m, 4);
    viz_render_pane(&g, PL_PANE_SHARDS, r, &m, &v);
    char row[512];
    row_text(&g, 1, 0, 70, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(
        row, "│block 1 forward: each rank multiplies its W2 shard                  │");
    row_text(&g, 13, 0, 70, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(
        row, "│Wc 64x12: 4 column shards of 64x3, the last 2 columns padding       │");
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* Every pane size from 1x1 to 90x30, t = 1, 2, 4, 8, before and after the
 * matmuls: nothing outside the pane; inside, every matrix with every
 * shard's digit, or (too small for that) "too small" and what it needs. */
static void test_shards_every_size(void)
{
    long bad = 0, drawn = 0, small = 0;
    for (int t = 1; t <= 8; t *= 2) {
        viz_model m;
        lab08_model(&m, t);
        for (int w = 1; w <= 90; w++)
            for (int h = 1; h <= 30; h++)
                for (int late = 0; late < 2; late++) {
                    viz_grid g = {0};
                    g.utf8 = 1;
                    viz_grid_resize(&g, w + 6, h + 4);
                    pl_rect r = {3, 2, w, h};
                    viz_view v;
                    memset(&v, 0, sizeof v);
                    v.t_end = late ? 3 : -1;
                    viz_render_pane(&g, PL_PANE_SHARDS, r, &m, &v);
                    if (!inside_only(&g, r)) bad++;
                    if (w >= 12 && h >= 3) {
                        char *text = viz_grid_text(&g);
                        int names = strstr(text, "W1") && strstr(text, "W2") && strstr(text, "Wc");
                        int digits = 1;
                        for (int k = 0; k < t; k++) digits &= strchr(text, '0' + k) != NULL;
                        if (names && digits)
                            drawn++;
                        else if (strstr(text, "too small") || strstr(text, "small"))
                            small++;
                        else
                            bad++;
                        free(text);
                    }
                    viz_grid_free(&g);
                }
        viz_model_free(&m);
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(drawn > 10000 && small > 100);
    /* what too small says */
    viz_model m;
    lab08_model(&m, 4);
    viz_grid g = {0};
    viz_grid_resize(&g, 40, 4);
    viz_view v;
    memset(&v, 0, sizeof v);
    viz_render_pane(&g, PL_PANE_SHARDS, (pl_rect){0, 0, 40, 4}, &m, &v);
    char row[128];
    row_text(&g, 1, 0, 40, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "|too small for the shards: 10x5 needed |");
    viz_grid_free(&g);
    /* no matrices: it says so */
    viz_model none;
    viz_model_init(&none, 2);
    viz_grid_resize(&g, 40, 4);
    viz_render_pane(&g, PL_PANE_SHARDS, (pl_rect){0, 0, 40, 4}, &none, &v);
    row_text(&g, 1, 0, 40, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "|no sharded matrix in this lab         |");
    viz_grid_free(&g);
    viz_model_free(&m);
    viz_model_free(&none);
}

/* The latest matmul at a time, per rank; matmul events (forward and
 * backward naming a matrix, layer the block) are no pipeline stages: no
 * bubble, and the pipeline pane has nothing — without the matrices the
 * same events would be. */
static void test_matmul_events(void)
{
    viz_model m;
    lab08_model(&m, 2);
    int mi = -2;
    CU_ASSERT_PTR_NULL(viz_matmul_at(&m, 0, -0.5, 0, &mi));
    CU_ASSERT_EQUAL(mi, -1);
    const pl_event *e =
        viz_matmul_at(&m, 1, 0.5, 0, &mi); /* inside W1's, past its kernel's start */
    CU_ASSERT_FATAL(e != NULL);
    CU_ASSERT(mi == 0 && !strcmp(e->label, "W1") && e->rank == 1);
    e = viz_matmul_at(&m, 1, 1.5, 0, &mi); /* after it, before W2's */
    CU_ASSERT(e && mi == 0);
    e = viz_matmul_at(&m, 0, 100, 0, &mi);
    CU_ASSERT(e && mi == 1 && e->layer == 1);
    CU_ASSERT_EQUAL(viz_matrix_index(&m, "Wc"), 2);
    CU_ASSERT_EQUAL(viz_matrix_index(&m, "W3"), -1);
    CU_ASSERT_EQUAL(viz_bubble_fraction(&m, 0), -1);
    viz_grid g = {0};
    viz_grid_resize(&g, 40, 5);
    viz_view v;
    memset(&v, 0, sizeof v);
    viz_render_pane(&g, PL_PANE_PIPELINE, (pl_rect){0, 0, 40, 5}, &m, &v);
    char row[64];
    row_text(&g, 1, 1, 30, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "no forward/backward events yet");
    /* the same events with a micro-batch and no matrices: stages of a
     * pipeline; without a micro-batch (as Lab 08 records them) none */
    viz_model plain, no_mb;
    viz_model_init(&plain, 2);
    viz_model_init(&no_mb, 2);
    for (int r = 0; r < 2; r++)
        for (size_t i = 0; i < m.lanes[r][PL_LANE_COMPUTE].n; i++) {
            pl_event x = m.lanes[r][PL_LANE_COMPUTE].ev[i];
            viz_model_add(&no_mb, &x);
            x.micro_batch = 0;
            viz_model_add(&plain, &x);
        }
    viz_pp_round R;
    viz_pp_round_find(&plain, 0, &R);
    CU_ASSERT(R.iteration > 0);
    viz_pp_round_find(&no_mb, 0, &R);
    CU_ASSERT_EQUAL(R.iteration, 0);
    CU_ASSERT_EQUAL(viz_bubble_fraction(&no_mb, 0), -1);
    viz_model_free(&no_mb);
    viz_grid_free(&g);
    viz_model_free(&plain);
    viz_model_free(&m);
}

/* A description the pane cannot draw: refused, naming the matrix, the
 * value and what is allowed. */
static void test_matrices_refused(void)
{
    char err[256];
    pl_viz_matrix mx[3];
    lab08_matrices(4, mx);
    CU_ASSERT_EQUAL(pl_viz_check_matrices(mx, 3, 4, 4, err, sizeof err), 0);
    CU_ASSERT_EQUAL(pl_viz_check_matrices(NULL, 0, 0, 4, err, sizeof err), 0); /* none */
    CU_ASSERT_EQUAL(pl_viz_check_matrices(mx, 3, 3, 3, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "shards pane: matrix 0 (W1): 256 columns, tp 3: allowed are "
                                "columns a multiple of tp, to cut into tp column shards");
    CU_ASSERT_EQUAL(pl_viz_check_matrices(mx, 3, 4, 6, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "shards pane: tp 4 does not divide the world's 6 ranks");
    CU_ASSERT_EQUAL(pl_viz_check_matrices(mx, 3, 0, 4, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "shards pane: tp 0: allowed 1..64");
    CU_ASSERT_EQUAL(pl_viz_check_matrices(mx, 9, 4, 4, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "shards pane: 9 matrices: allowed 0..8");
    pl_viz_matrix bad = mx[2];
    bad.padded_cols = 12;
    CU_ASSERT_EQUAL(pl_viz_check_matrices(&bad, 1, 4, 4, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "shards pane: matrix 0 (Wc): padded_cols 12, tp 4: allowed are "
                                "padded_cols 0..cols-1");
    bad = mx[1];
    bad.rows = 250;
    CU_ASSERT_EQUAL(pl_viz_check_matrices(&bad, 1, 4, 4, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "250 rows, tp 4: allowed are rows a multiple of tp"));
    bad.split = 'x';
    CU_ASSERT_EQUAL(pl_viz_check_matrices(&bad, 1, 4, 4, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "split 120, tp 4: allowed are split 'c'"));
    pl_viz_matrix twice[2] = {mx[0], mx[0]};
    CU_ASSERT_EQUAL(pl_viz_check_matrices(twice, 2, 4, 4, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(
        err, "shards pane: matrix 1 (W1), tp 4: allowed are a name no other matrix has");
    pl_viz_matrix unnamed = {NULL, 4, 4, 0, 0};
    CU_ASSERT_EQUAL(pl_viz_check_matrices(&unnamed, 1, 4, 4, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "allowed are a name of 1 to 15 bytes"));
    /* the model keeps what it had */
    viz_model m;
    lab08_model(&m, 4);
    CU_ASSERT_EQUAL(viz_model_set_matrices(&m, &bad, 1, 4, err, sizeof err), -1);
    CU_ASSERT(m.nmatrices == 3 && m.tp == 4 && m.matrices[2].padded_cols == 2);
    viz_model_free(&m);
}

/* The matrices through a trace file ("paralab matrix" metadata), and a
 * replay of it played to its end: the same pane as live. An older file
 * (none) still reads; a broken description names its event. */
static void test_matrices_replayed(void)
{
    char path[] = "/tmp/paralab-shards-XXXXXX", err[512];
    close(mkstemp(path));
    pl_trace_writer *w = pl_trace_writer_open(path, 4, 0, 0, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    pl_viz_matrix mx[3];
    lab08_matrices(4, mx);
    CU_ASSERT_EQUAL(pl_trace_writer_describe(w, "lab 08 tensor parallel", 2, LAB08_PANES, 0), 0);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(pl_trace_writer_describe_matrix(w, mx[i].name, mx[i].rows, mx[i].cols,
                                                        mx[i].split, mx[i].padded_cols, 4),
                        0);
    for (int r = 0; r < 4; r++) {
        pl_event e[3] = {matmul(r, PL_EV_FORWARD, 1e-6, 2e-6, 0, "W1"),
                         matmul(r, PL_EV_FORWARD, 3e-6, 4e-6, 0, "W2"),
                         matmul(r, PL_EV_BACKWARD, 5e-6, 6e-6, -1, "Wc")};
        CU_ASSERT_EQUAL(pl_trace_writer_add(w, e, 3), 0);
    }
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    viz_trace t;
    CU_ASSERT_EQUAL_FATAL(viz_read_trace(path, &t, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(t.nmatrices, 3);
    CU_ASSERT_EQUAL(t.tp, 4);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_STRING_EQUAL(t.matrices[i].name, mx[i].name);
        CU_ASSERT(t.matrices[i].rows == mx[i].rows && t.matrices[i].cols == mx[i].cols &&
                  t.matrices[i].split == mx[i].split &&
                  t.matrices[i].padded_cols == mx[i].padded_cols);
    }
    CU_ASSERT_EQUAL(t.nev, 12);
    /* the replay: every item, to the end, into a model set from the file */
    viz_item *it;
    size_t n, *first;
    int nsteps = viz_replay_plan(&t, &it, &n, &first);
    CU_ASSERT_FATAL(nsteps >= 1);
    viz_model m;
    viz_model_init(&m, t.nranks);
    CU_ASSERT_EQUAL_FATAL(
        viz_model_set_matrices(&m, t.matrices, t.nmatrices, t.tp, err, sizeof err), 0);
    viz_cursor c = {1, 0};
    while (!viz_replay_done(c, nsteps)) viz_replay_next(&c, nsteps);
    size_t shown = viz_replay_shown(first, nsteps, c);
    CU_ASSERT_EQUAL(shown, n);
    for (size_t i = 0; i < shown; i++) CU_ASSERT_EQUAL(viz_replay_apply(&m, &t, &it[i]), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.t_end = m.t_hi[0];
    viz_grid g = {0};
    g.utf8 = 1;
    viz_grid_resize(&g, 25, 8);
    pl_rect r = {0, 0, 25, 8};
    viz_render_pane(&g, PL_PANE_SHARDS, r, &m, &v);
    static const char *const end[] = {
        "┌ shards (tp 4) ────────┐", //
        "│head bwd: Wc shards    │", //
        "│ W1        W2    ◀Wc   │", //
        "│00112233  00000  0123  │", //
        "│00112233  11111  0123  │", //
        "│          22222        │", //
        "│          33333        │", //
        "└───────────────────────┘",
    };
    CU_ASSERT(pane_is(&g, r, end));
    CU_ASSERT(reversed(&g, r, 18, 21, 3, 1) && reversed(&g, r, 1, 15, 3, 0));
    viz_grid_free(&g);
    viz_model_free(&m);
    free(it);
    free(first);
    viz_trace_free(&t);
    /* an older file: no matrices, still read */
    FILE *f = fopen(path, "w");
    fputs("{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"paralab\",\"pid\":0,\"args\":{\"title\":"
          "\"lab 06\",\"panes\":188}},{\"ph\":\"X\",\"name\":\"W1\",\"cat\":\"forward\","
          "\"pid\":0,\"tid\":0,\"ts\":1,\"dur\":1}]}",
          f);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(viz_read_trace(path, &t, err, sizeof err), 0);
    CU_ASSERT(t.nmatrices == 0 && t.tp == 0 && t.nev == 1 && t.panes == 188u);
    viz_trace_free(&t);
    /* a matrix without its split; one whose columns do not cut into tp */
    static const char *const broken[] = {
        "{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"x\"},{\"ph\":\"M\",\"name\":\"paralab "
        "matrix\",\"pid\":0,\"args\":{\"name\":\"W1\",\"rows\":4,\"cols\":8,\"tp\":2}}]}",
        "{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"paralab matrix\",\"pid\":0,\"args\":{"
        "\"name\":\"W1\",\"rows\":4,\"cols\":9,\"split\":\"column\",\"tp\":2}}]}",
        "{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"paralab matrix\",\"pid\":0,\"args\":{"
        "\"name\":\"W1\",\"rows\":4,\"cols\":8,\"split\":\"column\",\"tp\":2}},{\"ph\":\"M\","
        "\"name\":\"paralab matrix\",\"pid\":0,\"args\":{\"name\":\"W2\",\"rows\":4,\"cols\":8,"
        "\"split\":\"row\",\"tp\":4}}]}",
    };
    static const char *const says[] = {
        ": event 1: a matrix (\"paralab matrix\") needs args.name (1 to 15 bytes), rows and cols",
        ": shards pane: matrix 0 (W1): 9 columns, tp 2: allowed are columns a multiple of tp",
        ": event 1: matrix W2: a tp other than the matrices' before",
    };
    for (int k = 0; k < 3; k++) {
        f = fopen(path, "w");
        fputs(broken[k], f);
        fclose(f);
        CU_ASSERT_EQUAL(viz_read_trace(path, &t, err, sizeof err), -1);
        if (!strstr(err, says[k])) fprintf(stderr, "\n  %s", err);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, says[k]));
    }
    unlink(path);
}

int register_shards_suite(void)
{
    static const unit_test t[] = {
        {"80x24, t = 4: every shard, the one multiplied, fwd/bwd, the head", test_shards_80x24},
        {"80x24, t = 8 and the devices band: a row per matrix, ASCII", test_shards_compact_ascii},
        {"80x24: the metrics pane's lines in forms that fit", test_metrics_80x24_forms},
        {"120x40: shapes, the shards' words, the padded classes", test_shards_120x40},
        {"every pane size: inside it, drawn or saying too small", test_shards_every_size},
        {"matmul events: the latest per rank, no pipeline stages", test_matmul_events},
        {"descriptions refused with their value", test_matrices_refused},
        {"the matrices through a trace file and a replay to its end", test_matrices_replayed},
    };
    return UNIT_SUITE("shards", t);
}
