/*
 * test_viz.c — the visualiser without a terminal: the layout for every
 * size and device count, panes rendered into the cell grid from known
 * events (an exact GPipe schedule, a ring all-reduce's link bytes, a
 * timeline row), the ASCII twins, reading traces back (good, truncated,
 * corrupt, missing; the narration, the metrics, the streams), the replay's
 * cursor and plan, and paralab-viz --check.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../viz/vizint.h"
#include "grid_text.h"
#include "paralab/comm.h"
#include "paralab/trace.h"
#include "paralab/viz.h"
#include "paralab/world.h"
#include "suites.h"

static int overlap(pl_rect a, pl_rect b)
{
    return a.w > 0 && b.w > 0 && a.h > 0 && b.h > 0 && a.x < b.x + b.w && b.x < a.x + a.w &&
           a.y < b.y + b.h && b.y < a.y + a.h;
}

/* Every size from 1x1 to 200x60 and every device count 0..64, for three
 * sets of panes: inside the screen, no two overlapping, ok exactly when the
 * screen is at least the minimum. */
static void test_layout_everywhere(void)
{
    unsigned sets[] = {0,
                       PL_PANE_BIT(PL_PANE_DEVICES) | PL_PANE_BIT(PL_PANE_TIMELINE) |
                           PL_PANE_BIT(PL_PANE_TOPOLOGY) | PL_PANE_BIT(PL_PANE_METRICS),
                       (1u << PL_NUM_PANES) - 1};
    long bad = 0, checked = 0;
    static const int texts[] = {0, 8, 100}; /* rows of narration a step has */
    for (int s = 0; s < 3; s++)
        for (int ndev = 0; ndev <= 64; ndev++)
            for (int w = 1; w <= 200; w++)
                for (int h = 1; h <= 60; h++)
                    for (int t = 0; t < 3; t++) {
                        pl_layout L;
                        pl_viz_layout_text(w, h, ndev, sets[s], texts[t], &L);
                        checked++;
                        if (L.ok != (w >= L.min_w && h >= L.min_h)) bad++;
                        for (int p = 0; p < PL_NUM_PANES; p++) {
                            pl_rect r = L.pane[p];
                            if (!L.ok && r.w) bad++;
                            if (r.w < 0 || r.h < 0 || r.x < 0 || r.y < 0 || r.x + r.w > w ||
                                r.y + r.h > h)
                                bad++;
                            for (int q = p + 1; q < PL_NUM_PANES; q++)
                                if (overlap(r, L.pane[q])) bad++;
                            int asked = p <= PL_PANE_NARRATION || (sets[s] >> p & 1u);
                            /* the devices may give their room to the mesh, which
                             * shows the ranks (and only then) */
                            int given_up = p == PL_PANE_DEVICES && (sets[s] >> PL_PANE_MESH & 1u) &&
                                           L.pane[PL_PANE_MESH].h >= 7;
                            /* the timeline is hidden where it would have no room for a
                             * lane (4 rows): the panes under it take its rows (fewer than 7) */
                            int hidden = p == PL_PANE_TIMELINE && L.pane[PL_PANE_METRICS].h > 0 &&
                                         L.pane[PL_PANE_METRICS].h < 7;
                            if (L.ok && asked != (r.w > 0 && r.h > 0) &&
                                !((given_up || hidden) && !r.w))
                                bad++;
                            if (p == PL_PANE_TIMELINE && r.w && r.h < 4 &&
                                L.pane[PL_PANE_METRICS].h > 0)
                                bad++; /* an empty box */
                        }
                    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(checked > 100000);
    /* Lab 10's panes at 80x24 with a long step: the mesh keeps its 7 rows
     * (the devices give theirs up), the pipeline its own */
    unsigned lab10 = PL_PANE_BIT(PL_PANE_DEVICES) | PL_PANE_BIT(PL_PANE_TIMELINE) |
                     PL_PANE_BIT(PL_PANE_METRICS) | PL_PANE_BIT(PL_PANE_MESH) |
                     PL_PANE_BIT(PL_PANE_PIPELINE);
    pl_layout L;
    pl_viz_layout_stages(80, 24, 8, 2, lab10, 100, &L);
    CU_ASSERT_EQUAL(L.ok, 1);
    CU_ASSERT(L.pane[PL_PANE_MESH].h >= 7);
    CU_ASSERT(L.pane[PL_PANE_PIPELINE].h >= 5);
    CU_ASSERT_EQUAL(L.pane[PL_PANE_DEVICES].w, 0);
    /* with room, the devices stay */
    pl_viz_layout_stages(120, 40, 8, 2, lab10, 8, &L);
    CU_ASSERT(L.pane[PL_PANE_DEVICES].h >= 3);
    CU_ASSERT(L.pane[PL_PANE_MESH].h >= 7);
}

/* A step with more to say gets the rows: at 80x24, Lab 01's block map (8
 * rows of text) gets all 8, a longer step 3/5 of the screen (13 rows of
 * 23), the others keeping at least 8; nothing to say: the usual 4 (9 from
 * 30 rows up). */
static void test_layout_narration_grows(void)
{
    unsigned lab06 = PL_PANE_BIT(PL_PANE_DEVICES) | PL_PANE_BIT(PL_PANE_TIMELINE) |
                     PL_PANE_BIT(PL_PANE_TOPOLOGY) | PL_PANE_BIT(PL_PANE_METRICS);
    static const struct {
        int w, h, text, want;
    } c[] = {{80, 24, 0, 4},    {80, 24, 2, 4},    {80, 24, 7, 9},  {80, 24, 8, 10},
             {80, 24, 11, 13},  {80, 24, 40, 13},  {120, 40, 0, 9}, {120, 40, 7, 9},
             {120, 40, 20, 22}, {120, 40, 99, 23}, {60, 13, 99, 4}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        pl_layout L;
        pl_viz_layout_text(c[i].w, c[i].h, 4, lab06, c[i].text, &L);
        CU_ASSERT_FATAL(L.ok);
        pl_rect n = L.pane[PL_PANE_NARRATION];
        CU_ASSERT_EQUAL(n.h, c[i].want);
        CU_ASSERT_EQUAL(n.y + n.h, c[i].h);
        /* the body above it: what is left */
        CU_ASSERT_EQUAL(L.pane[PL_PANE_TOPOLOGY].y + L.pane[PL_PANE_TOPOLOGY].h, n.y);
        CU_ASSERT(n.y - 1 >= 8);
    }
    pl_layout a, b;
    pl_viz_layout(80, 24, 4, lab06, &a);
    pl_viz_layout_text(80, 24, 4, lab06, 0, &b);
    CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof a), 0);
}

static pl_event ev(int rank, int lane, int kind, double s, double e, int mb, int layer,
                   const char *label)
{
    pl_event x;
    memset(&x, 0, sizeof x);
    x.rank = rank;
    x.lane = (uint8_t)lane;
    x.kind = (uint8_t)kind;
    x.start = s;
    x.end = e;
    x.micro_batch = mb;
    x.layer = layer;
    x.peer = -1;
    snprintf(x.label, sizeof x.label, "%s", label);
    return x;
}

/* The row of the grid text at y, without the pane's borders. */
static void row_of(const viz_grid *g, int y, int x0, int w, char *out)
{
    int k = 0;
    for (int x = x0; x < x0 + w; x++) {
        uint32_t c = g->cells[y * g->w + x].ch;
        out[k++] = c < 0x80 ? (char)c : '#';
    }
    out[k] = '\0';
}

/* GPipe on 2 stages with 4 micro-batches, every forward and backward one
 * time unit: the schedule pane shows it exactly, and the bubble is
 * 1 - 16 / (2 x 10) = 20 %. (The pipeline pane of Lab 09 in full:
 * test_pipeline_pane.c.) */
static void test_pipeline_gpipe(void)
{
    viz_model m;
    viz_model_init(&m, 2);
    for (int i = 0; i < 4; i++) {
        pl_event f0 = ev(0, 0, PL_EV_FORWARD, i, i + 1, i, 0, "fwd");
        pl_event f1 = ev(1, 0, PL_EV_FORWARD, i + 1, i + 2, i, 1, "fwd");
        pl_event b1 = ev(1, 0, PL_EV_BACKWARD, 5 + i, 6 + i, 3 - i, 1, "bwd");
        pl_event b0 = ev(0, 0, PL_EV_BACKWARD, 6 + i, 7 + i, 3 - i, 0, "bwd");
        viz_model_add(&m, &f0);
        viz_model_add(&m, &f1);
        viz_model_add(&m, &b1);
        viz_model_add(&m, &b0);
    }
    CU_ASSERT_DOUBLE_EQUAL(viz_bubble_fraction(&m, 0), 0.2, 1e-12);
    /* the same events in a ZeRO run are its units (layer: the unit) on every
     * rank, not pipeline stages: no bubble */
    pl_viz_zero zr = {.stage = 3, .ranks = 2, .psi = 100, .psi_pad = 100};
    char zerr[256];
    CU_ASSERT_EQUAL_FATAL(viz_model_set_zero(&m, &zr, zerr, sizeof zerr), 0);
    CU_ASSERT_EQUAL(viz_bubble_fraction(&m, 0), -1.0);
    CU_ASSERT_EQUAL_FATAL(viz_model_set_zero(&m, NULL, zerr, sizeof zerr), 0);
    CU_ASSERT_DOUBLE_EQUAL(viz_bubble_fraction(&m, 0), 0.2, 1e-12);
    /* forwards of a layer without a micro-batch (Lab 08's matmuls) make no
     * pipeline: no bubble */
    viz_model tp;
    viz_model_init(&tp, 2);
    pl_event w1 = ev(0, 0, PL_EV_FORWARD, 0, 1, -1, 0, "W1");
    pl_event w2 = ev(1, 0, PL_EV_FORWARD, 2, 3, -1, 1, "W2");
    viz_model_add(&tp, &w1);
    viz_model_add(&tp, &w2);
    CU_ASSERT_EQUAL(viz_bubble_fraction(&tp, 0), -1.0);
    viz_model_free(&tp);
    viz_grid g = {0};
    g.utf8 = 0;
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 40, 6), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    viz_render_pane(&g, PL_PANE_PIPELINE, (pl_rect){0, 0, 40, 6}, &m, &v);
    char r0[64], r1[64], title[64], line[64];
    row_of(&g, 0, 0, 40, title);
    row_of(&g, 1, 1, 38, line);
    row_of(&g, 2, 1, 38, r0);
    row_of(&g, 3, 1, 38, r1);
    /* the bubble line (no formula without the pipeline's description), and
     * the schedule: idle before the newest op's end is a bubble (dots) */
    CU_ASSERT_STRING_EQUAL(title, "+ pipeline: iteration 1, 10.00 s ------+");
    CU_ASSERT_STRING_EQUAL(line, "bubble 20.0 % of the time             ");
    CU_ASSERT_STRING_EQUAL(r0, "s0  F0F1F2F3....B3B2B1B0              ");
    CU_ASSERT_STRING_EQUAL(r1, "s1  ..F0F1F2F3B3B2B1B0..              ");
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* GPipe, p = 2, m = 4, every op one time unit, in the order of their ends
 * (as a run's events arrive): stage 0's forwards at 0..4, stage 1's at
 * 1..5, stage 1's backwards (micro-batches 3 to 0) at 5..9, stage 0's at
 * 6..10; iteration it starts at 10 x (it - 1). */
static int gpipe_2x4_ops(pl_event *out, int it)
{
    int n = 0;
    double t0 = 10.0 * (it - 1);
    for (int end = 1; end <= 10; end++)
        for (int st = 0; st < 2; st++)
            for (int k = 0; k < 4; k++) {
                int f = k + st + 1, b = st ? 6 + k : 7 + k; /* ends */
                if (f == end) out[n++] = ev(st, 0, PL_EV_FORWARD, t0 + f - 1, t0 + f, k, st, "F");
                if (b == end)
                    out[n++] = ev(st, 0, PL_EV_BACKWARD, t0 + b - 1, t0 + b, 3 - k, st, "B");
            }
    return n;
}

/* The pane's row y at w x h, inside its borders, without the blanks at its end. */
static void pane_row(viz_grid *g, int pane, const viz_model *m, int w, int h, int y, char *out)
{
    viz_view v;
    memset(&v, 0, sizeof v);
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(g, w, h), 0);
    viz_render_pane(g, pane, (pl_rect){0, 0, w, h}, m, &v);
    row_of(g, y, 1, w - 2, out);
    for (size_t n = strlen(out); n > 0 && out[n - 1] == ' '; n--) out[n - 1] = '\0';
}

/* Play mode: no bubble figure from an iteration still running. Every
 * prefix of GPipe 2 x 4's ops (with the pipeline's description, and
 * without one) says the first iteration is in progress and has no figure;
 * the whole iteration gives its exact figures (busy 16 of 2 x 10: 20 % of
 * the time, 4 / 16 = 25 % of the ideal time, as the formula); while the
 * second runs, the line is the first's and names it. (Before: 25 % and
 * 33.3 % of the ideal time from stage 0's F0 F1 and stage 1's F0.) */
static void test_pipeline_partial_iteration(void)
{
    pl_event ops[16], next[16];
    CU_ASSERT_EQUAL_FATAL(gpipe_2x4_ops(ops, 1), 16);
    CU_ASSERT_EQUAL_FATAL(gpipe_2x4_ops(next, 2), 16);
    viz_grid g = {0};
    g.utf8 = 0;
    char line[128];
    for (int described = 0; described < 2; described++) {
        viz_model m;
        viz_model_init(&m, 2);
        char err[256];
        pl_viz_pipeline pp = {2, 4, 1, "gpipe", 0.25, 0.2, 0, {0}};
        if (described) CU_ASSERT_EQUAL_FATAL(viz_model_set_pipeline(&m, &pp, err, sizeof err), 0);
        for (int i = 0; i < 16; i++) {
            CU_ASSERT_EQUAL(viz_model_add(&m, &ops[i]), 0);
            viz_pp_round R;
            viz_pp_round_find(&m, 0, &R);
            CU_ASSERT_EQUAL(R.iteration, 1);
            if (i == 15) break;
            CU_ASSERT_EQUAL(viz_bubble_fraction(&m, 0), -1.0);
            pane_row(&g, PL_PANE_PIPELINE, &m, 100, 6, 1, line);
            CU_ASSERT_STRING_EQUAL(line, "bubble: iteration 1 in progress");
        }
        CU_ASSERT_DOUBLE_EQUAL(viz_bubble_fraction(&m, 0), 0.2, 1e-12);
        pane_row(&g, PL_PANE_PIPELINE, &m, 100, 6, 1, line);
        CU_ASSERT_STRING_EQUAL(line, described ? "bubble 20.0 % of the time (formula 20.0 %), "
                                                 "25.0 % of the ideal time (formula 25.0 %)"
                                               : "bubble 20.0 % of the time, 25.0 % of the ideal "
                                                 "time");
        pane_row(&g, PL_PANE_METRICS, &m, 40, 8, 3, line);
        CU_ASSERT_STRING_EQUAL(line, "bubble 20.0 %");
        /* the second iteration's first ops: stage 0's F0 F1, stage 1's F0 */
        for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL(viz_model_add(&m, &next[i]), 0);
        CU_ASSERT_DOUBLE_EQUAL(viz_bubble_fraction(&m, 0), 0.2, 1e-12);
        pane_row(&g, PL_PANE_PIPELINE, &m, 100, 6, 0, line);
        const char *title = described ? " pipeline: gpipe, p 2, m 4, iteration 2, 2.00 s --"
                                      : " pipeline: iteration 2, 2.00 s --";
        CU_ASSERT_NSTRING_EQUAL(line, title, strlen(title));
        pane_row(&g, PL_PANE_PIPELINE, &m, 100, 6, 1, line);
        CU_ASSERT_STRING_EQUAL(line, described
                                         ? "iteration 1: bubble 20.0 % of the time (formula "
                                           "20.0 %), 25.0 % of the ideal time (formula 25.0 %)"
                                         : "iteration 1: bubble 20.0 % of the time, 25.0 % "
                                           "of the ideal time");
        /* narrower: the shorter forms keep the iteration's name */
        pane_row(&g, PL_PANE_PIPELINE, &m, 40, 6, 1, line);
        CU_ASSERT_STRING_EQUAL(line, "iteration 1: bubble 20.0 % of the time");
        pane_row(&g, PL_PANE_METRICS, &m, 40, 8, 3, line);
        CU_ASSERT_STRING_EQUAL(line, "bubble 20.0 % (iteration 1)");
        viz_model_free(&m);
    }
    viz_grid_free(&g);
}

/* A timeline row: rank 0's compute lane with a kernel over the middle
 * half of the window and a forward of micro-batch 7 at the end. */
static void test_timeline_row(void)
{
    viz_model m;
    viz_model_init(&m, 1);
    pl_event k = ev(0, PL_LANE_COMPUTE, PL_EV_KERNEL, 2.5, 7.5, -1, -1, "matmul");
    pl_event f = ev(0, PL_LANE_COMPUTE, PL_EV_FORWARD, 8, 10, 7, 0, "fwd");
    viz_model_add(&m, &k);
    viz_model_add(&m, &f);
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 30, 6), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.t_end = 10;
    v.span = 10;
    v.ndev = 1;
    viz_render_pane(&g, PL_PANE_TIMELINE, (pl_rect){0, 0, 30, 6}, &m, &v);
    char row[64];
    row_of(&g, 1, 1, 28, row); /* 8 label cells, then 20 cells of 0.5 s */
    CU_ASSERT_STRING_EQUAL(row, "r0  cmp .....##########.7777");
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* A 4-rank ring all-reduce, traced: the model's link bytes equal the
 * ledger's, and the topology pane prints them. */
typedef struct {
    uint64_t link[4][4];
} ring_links;

static int run_ring(pl_rank *r)
{
    ring_links *l = r->arg;
    float *d;
    if (cudaMalloc((void **)&d, 4096 * sizeof(float))) return 1;
    cudaMemsetAsync(d, 0, 4096 * sizeof(float), r->stream);
    if (pl_all_reduce(r->comm, d, d, 4096, PL_FLOAT32, PL_SUM, r->stream)) return 1;
    cudaStreamSynchronize(r->stream);
    pl_comm_barrier(r->comm);
    if (r->rank == 0)
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) l->link[a][b] = pl_comm_link_bytes(r->comm, a, b);
    cudaFree(d);
    return 0;
}

static void test_topology_ring_bytes(void)
{
    pl_trace *t = pl_trace_create(4, 4096, PL_TRACE_WAIT);
    ring_links l;
    memset(&l, 0, sizeof l);
    char err[512];
    CU_ASSERT_EQUAL_FATAL(pl_world_run_traced(4, NULL, 10, t, run_ring, &l, err, sizeof err), 0);
    static pl_event buf[4096];
    size_t n = pl_trace_drain(t, buf, 4096);
    viz_model m;
    viz_model_init(&m, 4);
    for (size_t i = 0; i < n; i++) viz_model_add(&m, &buf[i]);
    int same = 1;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) same &= m.link[a][b] == l.link[a][b];
    CU_ASSERT(same);
    CU_ASSERT_EQUAL(m.link[0][1], 2 * 3 * 1024 * 4); /* 2(N-1) segments of 1024 floats */
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 40, 20), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 4;
    v.t_end = m.t_hi[0];
    v.span = m.t_hi[0] - m.t_lo[0];
    viz_render_pane(&g, PL_PANE_TOPOLOGY, (pl_rect){0, 0, 40, 20}, &m, &v);
    char *text = viz_grid_text(&g);
    /* every link of the ring: 3>0 too */
    for (int k = 0; k < 4; k++) {
        char want[32];
        snprintf(want, sizeof want, "%d>%d 24.0 KiB", k, (k + 1) % 4);
        CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "r3"));
    free(text);
    viz_grid_free(&g);
    viz_model_free(&m);
    pl_trace_destroy(t);
}

/* ASCII twins: with utf8 off no byte of the frame is above 0x7f; too small
 * a screen says how much it needs. */
static void test_ascii_and_too_small(void)
{
    viz_model m;
    viz_model_init(&m, 2);
    pl_event k = ev(1, 0, PL_EV_KERNEL, 0, 1, -1, -1, "kernel \xc3\xa9");
    viz_model_add(&m, &k);
    viz_grid g = {0};
    g.utf8 = 0;
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 100, 30), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 2;
    v.t_end = 1;
    v.span = 1;
    snprintf(v.narration, sizeof v.narration, "caf\xc3\xa9 and a long narration");
    pl_layout L;
    pl_viz_layout(100, 30, 2, (1u << PL_NUM_PANES) - 1, &L);
    viz_render(&g, &L, &m, &v);
    char *text = viz_grid_text(&g);
    int high = 0;
    for (char *p = text; *p; p++) high |= (unsigned char)*p > 0x7f;
    CU_ASSERT_FALSE(high);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "+ devices -"));
    free(text);
    viz_grid_resize(&g, 20, 5);
    pl_viz_layout(20, 5, 2, (1u << PL_NUM_PANES) - 1, &L);
    CU_ASSERT_FALSE(L.ok);
    viz_render(&g, &L, &m, &v);
    text = viz_grid_text(&g);
    CU_ASSERT_EQUAL(strncmp(text, "need at least 60x13", 19), 0);
    free(text);
    /* the message never cut: on one line where it fits, else two, else a short form */
    static const struct {
        int w, h;
        const char *want;
    } small[] = {
        {59, 12, "need at least 60x13 (this terminal is 59x12)\n"},
        {40, 12, "need at least 60x13\n(this terminal is 40x12)\n"},
        {22, 12, "need at least 60x13\nhave 22x12\n"},
        {12, 3, "need 60x13\nhave 12x3\n"},
        {30, 1, "need 60x13; have 30x1\n"},
    };
    for (size_t i = 0; i < sizeof small / sizeof *small; i++) {
        viz_grid_resize(&g, small[i].w, small[i].h);
        pl_viz_layout(small[i].w, small[i].h, 2, (1u << PL_NUM_PANES) - 1, &L);
        CU_ASSERT_FALSE(L.ok);
        viz_render(&g, &L, &m, &v);
        text = viz_grid_text(&g);
        /* each row's trailing blanks dropped */
        char got[512];
        size_t n = 0;
        for (char *p = text; *p && n + 1 < sizeof got;) {
            char *nl = strchr(p, '\n');
            size_t len = nl ? (size_t)(nl - p) : strlen(p);
            while (len && p[len - 1] == ' ') len--;
            if (len) {
                memcpy(got + n, p, len < sizeof got - n - 2 ? len : sizeof got - n - 2);
                n += len < sizeof got - n - 2 ? len : sizeof got - n - 2;
                got[n++] = '\n';
            }
            if (!nl) break;
            p = nl + 1;
        }
        got[n] = '\0';
        CU_ASSERT_STRING_EQUAL(got, small[i].want);
        free(text);
    }
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* A lab about streams: one timeline lane per CUDA stream of the rank (s0
 * the default stream), each op on its stream's lane only. */
static void test_stream_lanes(void)
{
    viz_model m;
    viz_model_init(&m, 1);
    m.stream_lanes = 1;
    pl_event a = ev(0, PL_LANE_COPY, PL_EV_COPY, 0, 5, -1, -1, "memcpy H2D");
    pl_event b = ev(0, PL_LANE_COMPUTE, PL_EV_KERNEL, 5, 10, -1, -1, "process");
    a.stream = 2; /* stream 1 */
    b.stream = 3; /* stream 2 */
    CU_ASSERT_EQUAL(viz_model_add(&m, &a), 0);
    CU_ASSERT_EQUAL(viz_model_add(&m, &b), 0);
    CU_ASSERT_EQUAL(m.nstreams[0], 3);
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 28, 6), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 1;
    v.t_end = 10;
    v.span = 10;
    viz_render_pane(&g, PL_PANE_TIMELINE, (pl_rect){0, 0, 28, 6}, &m, &v);
    char row[3][32];
    for (int i = 0; i < 3; i++) row_of(&g, 1 + i, 1, 26, row[i]);
    /* 8 columns of label, then 18 of time: 10 s, 0.56 s a column */
    CU_ASSERT_EQUAL(strncmp(row[0], "r0  s0  ", 8), 0);
    CU_ASSERT_EQUAL(strncmp(row[1], " 0  s1  ", 8), 0);
    CU_ASSERT_EQUAL(strncmp(row[2], " 0  s2  ", 8), 0);
    for (int c = 8; c < 26; c++) {
        int first_half = c - 8 < 9;
        CU_ASSERT_EQUAL(row[0][c], '.');                    /* nothing on the default stream */
        CU_ASSERT_EQUAL(row[1][c], first_half ? '=' : '.'); /* the copy, on stream 1 */
        CU_ASSERT_EQUAL(row[2][c], first_half ? '.' : '#'); /* the kernel, on stream 2 */
    }
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* The narration keeps a step's line breaks and their indentation, and
 * wraps long lines at spaces. */
static void test_narration_lines(void)
{
    viz_model m;
    viz_model_init(&m, 1);
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 24, 8), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    snprintf(v.narration, sizeof v.narration,
             "Strides:\n    s 1: 4.0\n    s 32: 32.0\none two three four five six");
    viz_render_pane(&g, PL_PANE_NARRATION, (pl_rect){0, 0, 24, 8}, &m, &v);
    char row[32];
    /* 22 columns inside the box: "five" does not fit after "four" */
    static const char *want[] = {"Strides:", "    s 1: 4.0", "    s 32: 32.0", "one two three four",
                                 "five six"};
    for (int i = 0; i < 5; i++) {
        row_of(&g, 1 + i, 1, 22, row);
        size_t n = strlen(want[i]);
        CU_ASSERT_EQUAL(strncmp(row, want[i], n), 0);
        for (size_t k = n; row[k]; k++) CU_ASSERT_EQUAL(row[k], ' '); /* nothing after it */
    }
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* The metrics pane's busy time (the shards pane: test_viz_shards.c). */
static void test_busy_time(void)
{
    viz_model m;
    viz_model_init(&m, 2);
    viz_grid g = {0};
    viz_view v;
    memset(&v, 0, sizeof v);
    /* busy time is a union: a forward and the kernels inside it count once */
    pl_event f = ev(0, PL_LANE_COMPUTE, PL_EV_FORWARD, 0, 10, 0, -1, "fwd");
    pl_event k1 = ev(0, PL_LANE_COMPUTE, PL_EV_KERNEL, 1, 3, -1, -1, "k");
    pl_event k2 = ev(0, PL_LANE_COMPUTE, PL_EV_KERNEL, 4, 6, -1, -1, "k");
    pl_event k3 = ev(1, PL_LANE_COMPUTE, PL_EV_KERNEL, 0, 5, -1, -1, "k");
    viz_model_add(&m, &f);
    viz_model_add(&m, &k1);
    viz_model_add(&m, &k2);
    viz_model_add(&m, &k3);
    viz_grid_resize(&g, 40, 6);
    viz_render_pane(&g, PL_PANE_METRICS, (pl_rect){0, 0, 40, 6}, &m, &v);
    char *busy = viz_grid_text(&g);
    CU_ASSERT_PTR_NOT_NULL(strstr(busy, "busy: compute 75 %")); /* (10 + 5) / (2 x 10) */
    free(busy);
    /* the bandwidth is the latest collective's own (Lab 06's 4 MiB ring in
     * 36.3 us: 115.55 GB/s, as its narration says), not a sum over every
     * call, which a small latency-bound one before it would drag down */
    pl_event small = ev(0, PL_LANE_COMM, PL_EV_COLLECTIVE, 11, 11 + 10e-6, -1, -1, "broadcast");
    small.bytes = 16;
    pl_event big = ev(0, PL_LANE_COMM, PL_EV_COLLECTIVE, 12, 12 + 36.3e-6, -1, -1, "all_reduce");
    big.bytes = 4 << 20;
    viz_model_add(&m, &small);
    viz_model_add(&m, &big);
    viz_grid_resize(&g, 60, 6);
    viz_render_pane(&g, PL_PANE_METRICS, (pl_rect){0, 0, 60, 6}, &m, &v);
    char *bw = viz_grid_text(&g);
    CU_ASSERT_PTR_NOT_NULL(strstr(bw, "2 collectives (4.0 MiB)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(bw, "last: all_reduce 4.0 MiB in 36.3 us, 115.55 GB/s algbw"));
    free(bw);
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* The rows y0.. of a grid, x0.. w cells each, as ASCII. */
static void rows_of(const viz_grid *g, int y0, int n, int x0, int w, char out[][96])
{
    for (int i = 0; i < n; i++) row_of(g, y0 + i, x0, w, out[i]);
}

/* The loss curve: Lab 07 pushes each batch's loss and each epoch's mean
 * ("epoch loss"). Epoch 1: batches 4 and 2, mean 3; epoch 2: 1 and 2, mean
 * 1.5; epoch 3 so far: 0.75. The pane draws a column per epoch (3 cells,
 * a gap) on a scale from 0 to 3 (5 rows: 8 eighths a row), the epoch in
 * progress shaded, headed by the narration's value, epoch 2's mean. */
static void test_metrics_loss_per_epoch(void)
{
    viz_model m;
    viz_model_init(&m, 1);
    static const struct {
        const char *name;
        double v;
    } pushed[] = {{"loss", 4}, {"loss", 2},         {"epoch loss", 3}, {"loss", 1},
                  {"loss", 2}, {"epoch loss", 1.5}, {"loss", 0.75}};
    for (size_t i = 0; i < sizeof pushed / sizeof *pushed; i++)
        CU_ASSERT_EQUAL(viz_model_push_named(&m, pushed[i].name, pushed[i].v), 0);
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 60, 10), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    viz_render_pane(&g, PL_PANE_METRICS, (pl_rect){0, 0, 60, 10}, &m, &v);
    char r[8][96];
    rows_of(&g, 1, 8, 1, 58, r);
    static const char *want[] = {
        "0 events, 0 collectives (0 B)",
        "loss 1.5000: epoch 2's mean; epoch 3 so far 0.7500",
        "3.0000|###", /* epoch 1: 3 of 3, five rows */
        "      |###",
        "      |### ===", /* epoch 2: 1.5 of 3, 2.5 rows: the half a '=' */
        "      |### ### :::",
        "     0|### ### :::", /* epoch 3 so far: 0.75, 1.25 rows, shaded */
        "      +1         3 epochs",
    };
    for (int i = 0; i < 8; i++) {
        size_t n = strlen(want[i]);
        CU_ASSERT_EQUAL(strncmp(r[i], want[i], n), 0);
        for (size_t k = n; r[i][k]; k++) CU_ASSERT_EQUAL(r[i][k], ' ');
        if (strncmp(r[i], want[i], n))
            printf("\n  row %d: '%s'\n  want:  '%s'\n", i, r[i], want[i]);
    }
    /* UTF-8: the half is a lower half block, the bars full blocks */
    g.utf8 = 1;
    viz_render_pane(&g, PL_PANE_METRICS, (pl_rect){0, 0, 60, 10}, &m, &v);
    CU_ASSERT_EQUAL(g.cells[5 * 60 + 13].ch, 0x2584); /* ▄ */
    CU_ASSERT_EQUAL(g.cells[3 * 60 + 9].ch, 0x2588);  /* █ */
    CU_ASSERT_EQUAL(g.cells[7 * 60 + 17].ch, 0x2591); /* ░ */
    viz_grid_free(&g);
    viz_model_free(&m);

    /* no epoch series: the whole run, 200 values, the mean of 4 a column */
    viz_model_init(&m, 1);
    snprintf(m.metric_name, sizeof m.metric_name, "loss");
    for (int i = 0; i < 200; i++) viz_model_push_metric(&m, i < 100 ? 1.0 : 0.5);
    viz_grid g2 = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g2, 60, 10), 0);
    viz_render_pane(&g2, PL_PANE_METRICS, (pl_rect){0, 0, 60, 10}, &m, &v);
    rows_of(&g2, 1, 8, 1, 58, r);
    CU_ASSERT_EQUAL(strncmp(r[1], "loss 0.5000, the last of 200 ", 29), 0);
    /* 51 cells for 200 values: 4 a cell, 50 cells; 25 at 1.0 (5 rows), 25 at 0.5 */
    char full[51], half[51];
    memset(full, '#', 50);
    full[50] = '\0';
    memset(half, '#', 25);
    memset(half + 25, '=', 25);
    half[50] = '\0';
    CU_ASSERT_EQUAL(strncmp(r[2], "1.0000|", 7), 0);
    CU_ASSERT_EQUAL(strncmp(r[2] + 7, "#########################     ", 30), 0);
    CU_ASSERT_EQUAL(strncmp(r[4] + 7, half, 50), 0);
    CU_ASSERT_EQUAL(strncmp(r[6] + 7, full, 50), 0);
    CU_ASSERT_EQUAL(strncmp(r[7], "      +1 ", 9), 0);
    CU_ASSERT_EQUAL(strncmp(r[7] + 7 + 47, "200", 3), 0); /* under the 50th cell */
    CU_ASSERT_PTR_NOT_NULL(strstr(r[7], " values "));
    viz_grid_free(&g2);
    viz_model_free(&m);
}

/* Lab 07 to its end: the last epochs' loss (0.005) is far below a cell's
 * eighth on a scale up to 2 (5 rows: 0.05 an eighth), and still draws the
 * lowest glyph ('_', UTF-8 U+2581), never nothing. */
static void test_metrics_small_values(void)
{
    viz_model m;
    viz_model_init(&m, 1);
    CU_ASSERT_EQUAL(viz_model_push_named(&m, "epoch loss", 2), 0);
    CU_ASSERT_EQUAL(viz_model_push_named(&m, "epoch loss", 0.014), 0);
    CU_ASSERT_EQUAL(viz_model_push_named(&m, "epoch loss", 0.005), 0);
    CU_ASSERT_EQUAL(viz_model_push_named(&m, "epoch loss", 0), 0);
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 60, 10), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    viz_render_pane(&g, PL_PANE_METRICS, (pl_rect){0, 0, 60, 10}, &m, &v);
    char r[8][96];
    rows_of(&g, 1, 8, 1, 58, r);
    /* the bottom row: epoch 1 full, 2 and 3 the lowest glyph, 4 (0) nothing */
    CU_ASSERT_EQUAL(strncmp(r[6], "     0|### ___ ___    ", 22), 0);
    if (strncmp(r[6], "     0|### ___ ___    ", 22)) printf("\n  row 6: '%s'", r[6]);
    g.utf8 = 1;
    viz_render_pane(&g, PL_PANE_METRICS, (pl_rect){0, 0, 60, 10}, &m, &v);
    CU_ASSERT_EQUAL(g.cells[7 * 60 + 12].ch, 0x2581); /* ▁ */
    CU_ASSERT_EQUAL(g.cells[7 * 60 + 16].ch, 0x2581);
    CU_ASSERT_EQUAL(g.cells[6 * 60 + 12].ch, ' ');
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* Lab 06 step 8: its ring is sends and receives; its only collective is
 * the 4-byte all-reduce that aligns the clocks. "last:" names step 7's 4
 * MiB all-reduce instead, saying its step; a larger one in the newest step
 * is named without. */
static void test_metrics_last_skips_tiny(void)
{
    viz_model m;
    viz_model_init(&m, 1);
    pl_event big = ev(0, PL_LANE_COMM, PL_EV_COLLECTIVE, 1, 2, -1, -1, "all_reduce");
    big.bytes = 4u << 20;
    big.step = 7;
    pl_event tiny = ev(0, PL_LANE_COMM, PL_EV_COLLECTIVE, 3, 3.5, -1, -1, "all_reduce");
    tiny.bytes = 4;
    tiny.step = 8;
    CU_ASSERT_EQUAL(viz_model_add(&m, &big), 0);
    CU_ASSERT_EQUAL(viz_model_add(&m, &tiny), 0);
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 70, 6), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    viz_render_pane(&g, PL_PANE_METRICS, (pl_rect){0, 0, 70, 6}, &m, &v);
    char r[2][96];
    rows_of(&g, 1, 2, 1, 68, r);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(r[1], "last: all_reduce 4.0 MiB in 1.00 s, 4.19 MB/s algbw (step 7)"));
    if (!strstr(r[1], "(step 7)")) printf("\n  row 1: '%s'", r[1]);
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* The header alone, w cells wide, as UTF-8. */
static void header_at(int w, const viz_view *v, char *out, size_t cap)
{
    viz_grid g = {0};
    g.utf8 = 1;
    if (viz_grid_resize(&g, w, 1)) {
        out[0] = '\0';
        return;
    }
    viz_render_pane(&g, PL_PANE_HEADER, (pl_rect){0, 0, w, 1}, NULL, v);
    row_text(&g, 0, 0, w, out, cap);
    viz_grid_free(&g);
}

/* left, blanks, then " ? help " in the last 8 of w cells. */
static void help_right(const char *left, int w, char *out, size_t cap)
{
    snprintf(out, cap, "%-*s ? help ", w - 8, left);
}

/* The header at 80x24 and narrower (the minimum is 40 or 60 columns): fields shortened or
 * dropped whole, the least important first, the help key always on the right; never a word
 * or a number cut at the edge ("| modeled | 4  ? help", "| 4 d ? help", "| 1 dev"). Where
 * everything fits (120 columns) the whole header as before. */
static void test_header_fields_whole(void)
{
    viz_view v;
    memset(&v, 0, sizeof v);
    v.title = "lab 09 pipeline parallel";
    v.step = 4;
    v.steps = 8;
    v.mode = "step (space: next)";
    v.modeled = 1;
    v.ndev = 4;
    char got[1024], want[1024];
    static const struct {
        int w;
        const char *left; /* NULL: the whole header, as wide as it is */
    } lab09[] = {
        {120, NULL},
        {105, NULL},
        {104, " lab 09 pipeline parallel | step 4/8 | step (space: next) | modeled | 4 devices"},
        {80, " lab 09 pipeline parallel | step 4/8 | step (space: next) | modeled"},
        {60, " lab 09 | step 4/8 | step (space: next) | modeled"},
        {50, " lab 09 | step 4/8 | step | modeled"},
        {40, " lab 09 | step 4/8 | step"},
        {30, " lab 09 | 4/8 | step"},
        {20, " 4/8 | step"},
        {14, " 4/8"},
    };
    for (size_t i = 0; i < sizeof lab09 / sizeof *lab09; i++) {
        int w = lab09[i].w;
        header_at(w, &v, got, sizeof got);
        if (lab09[i].left)
            help_right(lab09[i].left, w, want, sizeof want);
        else
            snprintf(want, sizeof want, "%-*s", w,
                     " paralab | lab 09 pipeline parallel | step 4/8 | step (space: next) | "
                     "clock modeled | 4 devices | ? help ");
        CU_ASSERT_STRING_EQUAL(got, want);
        if (strcmp(got, want)) printf("\n  %3d: '%s'\n  want '%s'", w, got, want);
    }
    /* Lab 10 at 80 columns keeps its devices, spelt whole; Lab 01 its 1 device */
    v.title = "lab 10 hybrid";
    v.steps = 7;
    v.ndev = 8;
    header_at(80, &v, got, sizeof got);
    help_right(" lab 10 hybrid | step 4/7 | step (space: next) | modeled | 8 devices", 80, want,
               sizeof want);
    CU_ASSERT_STRING_EQUAL(got, want);
    v.title = "lab 01 hello threads";
    v.steps = 4;
    v.mode = "done";
    v.ndev = 1;
    header_at(80, &v, got, sizeof got);
    help_right(" lab 01 hello threads | step 4/4 | done | modeled | 1 device", 80, want,
               sizeof want);
    CU_ASSERT_STRING_EQUAL(got, want);
    /* a replay: "(recorded)" goes with "clock" (its mode says "replay") */
    v.title = "lab 04 gemm";
    v.steps = 6;
    v.step = 1;
    v.mode = "replay paused (space: next)";
    v.recorded = 1;
    header_at(80, &v, got, sizeof got);
    help_right(" lab 04 gemm | step 1/6 | replay paused (space: next) | modeled", 80, want,
               sizeof want);
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want)) printf("\n  80: '%s'\n want '%s'", got, want);
    header_at(130, &v, got, sizeof got);
    snprintf(want, sizeof want, "%-130s",
             " paralab | lab 04 gemm | step 1/6 | replay paused (space: next) | clock modeled "
             "(recorded) | 1 device | ? help ");
    CU_ASSERT_STRING_EQUAL(got, want);

    /* every width from 14 to 140, several headers: the help key on the right, and each field
     * one of its whole forms, each at most once, in order */
    static const struct {
        const char *title, *mode;
        int steps, ndev, modeled, recorded;
    } hs[] = {
        {"lab 09 pipeline parallel", "step (space: next)", 8, 4, 1, 0},
        {"lab 08 tensor parallel", "step (running...)", 15, 4, 0, 0},
        {"lab 11 zero", "play x1.0", 8, 8, 1, 0},
        {"lab 06 collectives", "replay paused (space: next)", 9, 4, 0, 1},
        {"/tmp/a-long-trace-file-name-from-lab07-data-parallel.json", "replay done", 27, 16, 1, 1},
        {"", "", 0, 0, 1, 0},
    };
    for (size_t h = 0; h < sizeof hs / sizeof *hs; h++) {
        v.title = hs[h].title;
        v.mode = hs[h].mode;
        v.step = hs[h].steps ? hs[h].steps - 1 : 3;
        v.steps = hs[h].steps;
        v.ndev = hs[h].ndev;
        v.modeled = hs[h].modeled;
        v.recorded = hs[h].recorded;
        char forms[5][3][128];
        int nf[5] = {1, 2, 2, 1, 1};
        const char *clock = v.modeled ? "modeled" : "measured";
        snprintf(forms[0][0], 128, "%s", v.title);
        const char *sp = strchr(v.title, ' '), *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
        snprintf(forms[0][1], 128, "%.*s", sp2 ? (int)(sp2 - v.title) : 127, v.title);
        nf[0] = sp2 ? 2 : 1;
        if (v.steps) {
            snprintf(forms[1][0], 128, "step %d/%d", v.step, v.steps);
            snprintf(forms[1][1], 128, "%d/%d", v.step, v.steps);
        } else {
            snprintf(forms[1][0], 128, "step %d", v.step);
            snprintf(forms[1][1], 128, "%d", v.step);
        }
        snprintf(forms[2][0], 128, "%s", v.mode);
        const char *paren = strstr(v.mode, " (");
        snprintf(forms[2][1], 128, "%.*s", paren ? (int)(paren - v.mode) : 127, v.mode);
        snprintf(forms[3][0], 128, "%s", clock);
        snprintf(forms[4][0], 128, "%d device%s", v.ndev, v.ndev == 1 ? "" : "s");
        char full[512];
        snprintf(full, sizeof full, " paralab | %s | %s | %s | clock %s%s | %d device%s | ? help ",
                 v.title, forms[1][0], v.mode, clock, v.recorded ? " (recorded)" : "", v.ndev,
                 v.ndev == 1 ? "" : "s");
        for (int w = 14; w <= 140; w++) {
            header_at(w, &v, got, sizeof got);
            int ok = (int)strlen(got) == w;
            if (w >= (int)strlen(full)) {
                ok = ok && !strncmp(got, full, strlen(full));
            } else {
                ok = ok && !strcmp(got + w - 8, " ? help ");
                char left[512];
                snprintf(left, sizeof left, "%.*s", w - 8, got);
                size_t n = strlen(left);
                while (n && left[n - 1] == ' ') left[--n] = '\0';
                /* " f1 | f2 | ..." */
                int field = 0;
                char *p = left;
                ok = ok && (!*p || *p == ' ');
                if (*p) p++;
                while (ok && *p) {
                    char *bar = strstr(p, " | ");
                    size_t len = bar ? (size_t)(bar - p) : strlen(p);
                    int found = 0;
                    for (; field < 5 && !found; field++)
                        for (int k = 0; k < nf[field] && !found; k++)
                            found =
                                strlen(forms[field][k]) == len && !strncmp(forms[field][k], p, len);
                    ok = found;
                    p = bar ? bar + 3 : p + len;
                }
            }
            CU_ASSERT(ok);
            if (!ok) printf("\n  header %zu at %d: '%s'", h, w, got);
        }
    }
}

/* The pane's row y inside its box (x 1 to w - 2), as UTF-8, trailing blanks dropped. */
static void metrics_row(const viz_grid *g, int y, char *out, size_t cap)
{
    row_text(g, y, 1, g->w - 2, out, cap);
    size_t n = strlen(out);
    while (n && out[n - 1] == ' ') out[--n] = '\0';
}

/* The metrics pane as narrow as beside Lab 08's shards at 80x24 (25 cells) and narrower: a
 * line too long drops whole items (the events first), then ends after its last whole item
 * with an ellipsis ("…", "..." in ASCII); never "1170 coll, 9" for 9.7 MiB. */
static void test_metrics_items_whole(void)
{
    viz_model m;
    viz_model_init(&m, 1);
    for (int i = 0; i < 1170; i++) { /* 1170 x 8704 B: 9.7 MiB */
        pl_event c = ev(0, PL_LANE_COMM, PL_EV_COLLECTIVE, i, i + 0.5, -1, -1, "reduce_scatter");
        c.bytes = 8704;
        c.step = 3;
        CU_ASSERT_EQUAL(viz_model_add(&m, &c), 0);
    }
    pl_event k = ev(0, PL_LANE_COMPUTE, PL_EV_KERNEL, 0, 292.5, -1, -1, "k");
    CU_ASSERT_EQUAL(viz_model_add(&m, &k), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    static const struct {
        int w, utf8;
        const char *want[3];
    } c[] = {
        {80,
         1,
         {"1171 events, 1170 collectives (9.7 MiB)",
          "last: reduce_scatter 8.5 KiB in 500.00 ms, 17.41 kB/s algbw",
          "busy: compute 25 %, copy 0 %"}},
        {32,
         1,
         {"1171 ev, 1170 coll, 9.7 MiB", "last: reduce_scatter 8.5 KiB",
          "busy: compute 25 %, copy 0 %"}},
        {25, 1, {"1170 coll, 9.7 MiB", "reduce_scatter 8.5 KiB", "busy: cmp 25 %, cpy 0 %"}},
        {20, 1, {"1170 coll, 9.7 MiB", "reduce_scatter …", "cmp 25% cpy 0%"}},
        {20, 0, {"1170 coll, 9.7 MiB", "reduce_scatter ...", "cmp 25% cpy 0%"}},
        {14, 1, {"1170 coll …", "…", "cmp 25% …"}},
        {15, 0, {"1170 coll ...", "...", "cmp 25% ..."}},
        {14, 0, {"...", "...", "cmp 25% ..."}},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        viz_grid g = {0};
        g.utf8 = c[i].utf8;
        CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, c[i].w, 5), 0);
        viz_render_pane(&g, PL_PANE_METRICS, (pl_rect){0, 0, c[i].w, 5}, &m, &v);
        for (int y = 0; y < 3; y++) {
            char got[256];
            metrics_row(&g, 1 + y, got, sizeof got);
            CU_ASSERT_STRING_EQUAL(got, c[i].want[y]);
            if (strcmp(got, c[i].want[y]))
                printf("\n  %d cells, row %d: '%s'\n  want '%s'", c[i].w, y, got, c[i].want[y]);
        }
        viz_grid_free(&g);
    }
    viz_model_free(&m);

    /* the loss curve's headline: its items whole */
    viz_model_init(&m, 1);
    static const struct {
        const char *name;
        double v;
    } pushed[] = {{"loss", 4}, {"epoch loss", 3}, {"loss", 1}, {"epoch loss", 1.5}, {"loss", 0.75}};
    for (size_t i = 0; i < sizeof pushed / sizeof *pushed; i++)
        CU_ASSERT_EQUAL(viz_model_push_named(&m, pushed[i].name, pushed[i].v), 0);
    static const struct {
        int w;
        const char *want;
    } h[] = {
        {60, "loss 1.5000: epoch 2's mean; epoch 3 so far 0.7500"},
        {40, "loss 1.5000: epoch 2's mean …"},
        {25, "loss 1.5000 (epoch 2) …"}, /* beside Lab 08's shards at 80x24 */
        {20, "loss 1.5000 …"},
        {12, "…"},
    };
    for (size_t i = 0; i < sizeof h / sizeof *h; i++) {
        viz_grid g = {0};
        g.utf8 = 1;
        CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, h[i].w, 10), 0);
        viz_render_pane(&g, PL_PANE_METRICS, (pl_rect){0, 0, h[i].w, 10}, &m, &v);
        char got[256];
        metrics_row(&g, 2, got, sizeof got);
        CU_ASSERT_STRING_EQUAL(got, h[i].want);
        if (strcmp(got, h[i].want))
            printf("\n  %d cells: '%s'\n  want '%s'", h[i].w, got, h[i].want);
        viz_grid_free(&g);
    }
    viz_model_free(&m);

    /* a pipeline's bubble (2 stages, GPipe, 20 %): shorter words, never the number cut */
    viz_model_init(&m, 2);
    for (int i = 0; i < 4; i++) {
        pl_event e[4] = {ev(0, 0, PL_EV_FORWARD, i, i + 1, i, 0, "fwd"),
                         ev(1, 0, PL_EV_FORWARD, i + 1, i + 2, i, 1, "fwd"),
                         ev(1, 0, PL_EV_BACKWARD, 5 + i, 6 + i, 3 - i, 1, "bwd"),
                         ev(0, 0, PL_EV_BACKWARD, 6 + i, 7 + i, 3 - i, 0, "bwd")};
        for (int j = 0; j < 4; j++) viz_model_add(&m, &e[j]);
    }
    static const struct {
        int w;
        const char *want;
    } b[] = {{40, "bubble 20.0 %"}, {14, "bubble 20.0%"}, {12, "bub 20.0%"}};
    for (size_t i = 0; i < sizeof b / sizeof *b; i++) {
        viz_grid g = {0};
        g.utf8 = 0;
        CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, b[i].w, 6), 0);
        viz_render_pane(&g, PL_PANE_METRICS, (pl_rect){0, 0, b[i].w, 6}, &m, &v);
        char got[256];
        metrics_row(&g, 3, got, sizeof got);
        CU_ASSERT_STRING_EQUAL(got, b[i].want);
        if (strcmp(got, b[i].want))
            printf("\n  %d cells: '%s'\n  want '%s'", b[i].w, got, b[i].want);
        viz_grid_free(&g);
    }
    viz_model_free(&m);
}

/* Without colour a kernel and a copy still differ: a stream's row with a
 * copy, then a kernel, then a copy (Lab 05's chunk); one row per rank
 * (comm over compute over copy) with a ring step, a collective and a
 * forward. Each kind its glyph (and its ASCII twin), and the legend names
 * the kinds on the timeline. */
static void test_timeline_glyphs_legend(void)
{
    viz_model m;
    viz_model_init(&m, 1);
    m.stream_lanes = 1;
    pl_event in = ev(0, PL_LANE_COPY, PL_EV_COPY, 0, 4, -1, -1, "memcpy H2D");
    pl_event k = ev(0, PL_LANE_COMPUTE, PL_EV_KERNEL, 4, 6, -1, -1, "process");
    pl_event out = ev(0, PL_LANE_COPY, PL_EV_COPY, 6, 10, -1, -1, "memcpy D2H");
    in.stream = k.stream = out.stream = 1; /* all on the default stream */
    viz_model_add(&m, &in);
    viz_model_add(&m, &k);
    viz_model_add(&m, &out);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 1;
    v.t_end = 10;
    v.span = 10;
    for (int utf8 = 0; utf8 < 2; utf8++) {
        viz_grid g = {0};
        g.utf8 = utf8;
        CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 30, 6), 0);
        viz_render_pane(&g, PL_PANE_TIMELINE, (pl_rect){0, 0, 30, 6}, &m, &v);
        /* 20 cells of 0.5 s: 8 of copy, 4 of kernel, 8 of copy */
        uint32_t copy = utf8 ? 0x2592 : '=', kern = utf8 ? 0x2588 : '#';
        for (int c = 0; c < 20; c++)
            CU_ASSERT_EQUAL(g.cells[1 * 30 + 9 + c].ch, c >= 8 && c < 12 ? kern : copy);
        CU_ASSERT_NOT_EQUAL(copy, kern);
        char *text = viz_grid_text(&g);
        /* the row of its own above the axis */
        CU_ASSERT_PTR_NOT_NULL(
            strstr(text, utf8 ? "│█ kernel  ▒ copy  · idle" : "|# kernel  = copy  . idle"));
        free(text);
        viz_grid_free(&g);
    }
    viz_model_free(&m);

    /* two ranks on one row each: comm over compute over copy */
    viz_model_init(&m, 2);
    pl_event f = ev(0, PL_LANE_COMPUTE, PL_EV_FORWARD, 0, 2, -1, -1, "forward");
    pl_event b = ev(0, PL_LANE_COMPUTE, PL_EV_BACKWARD, 2, 4, -1, -1, "backward");
    pl_event o = ev(0, PL_LANE_COMPUTE, PL_EV_OPTIMIZER, 4, 5, -1, -1, "optimizer");
    pl_event c1 = ev(1, PL_LANE_COMM, PL_EV_COLLECTIVE, 0, 10, -1, -1, "all_reduce");
    pl_event s1 = ev(1, PL_LANE_COMM, PL_EV_RING_STEP, 2, 4, -1, -1, "all_reduce step 1");
    pl_event cp = ev(0, PL_LANE_COPY, PL_EV_COPY, 5, 10, -1, -1, "memcpy");
    pl_event *all[] = {&f, &b, &o, &c1, &s1, &cp};
    for (int i = 0; i < 6; i++) viz_model_add(&m, all[i]);
    v.ndev = 2;
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 80, 5), 0);
    viz_render_pane(&g, PL_PANE_TIMELINE, (pl_rect){0, 0, 80, 5}, &m, &v);
    char r0[96], r1[96], border[96];
    row_of(&g, 1, 1, 78, r0);
    row_of(&g, 2, 1, 78, r1);
    row_of(&g, 4, 0, 80, border);
    /* 70 cells of 1/7 s */
    CU_ASSERT_EQUAL(
        strncmp(
            r0,
            "r0      >>>>>>>>>>>>>><<<<<<<<<<<<<<ooooooo===================================", 78),
        0);
    CU_ASSERT_EQUAL(
        strncmp(
            r1,
            "r1      ::::::::::::::~~~~~~~~~~~~~~::::::::::::::::::::::::::::::::::::::::::", 78),
        0);
    /* no row left: the legend in the bottom border, every kind shown */
    CU_ASSERT_EQUAL(strncmp(border,
                            "+ > forward  < backward  o optimizer  = copy  ~ comm  : collective  "
                            ". idle -",
                            76),
                    0);
    /* narrower: by their short names */
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 60, 5), 0);
    viz_render_pane(&g, PL_PANE_TIMELINE, (pl_rect){0, 0, 60, 5}, &m, &v);
    row_of(&g, 4, 0, 60, border);
    CU_ASSERT_EQUAL(strncmp(border, "+ > fwd  < bwd  o opt  = copy  ~ comm  : coll  . idle -", 55),
                    0);
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* Every link's bytes, at 4, 8 and 64 ranks: inside the ring while they
 * fit, folded into columns and scrolled when they do not, the bottom
 * border saying which links show. */
static char *topology_text(viz_model *m, int n, pl_rect r, int scroll)
{
    viz_grid g = {0};
    if (viz_grid_resize(&g, r.w, r.h)) return NULL;
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = n;
    v.link_scroll = scroll;
    viz_render_pane(&g, PL_PANE_TOPOLOGY, r, m, &v);
    char *text = viz_grid_text(&g);
    viz_grid_free(&g);
    return text;
}

static void test_topology_every_link(void)
{
    static const int ranks[] = {4, 8, 64};
    for (int t = 0; t < 3; t++) {
        int n = ranks[t];
        viz_model m;
        viz_model_init(&m, n);
        for (int k = 0; k < n; k++) m.link[k][(k + 1) % n] = (uint64_t)(k + 1) * 1024;
        m.link[2][0] = 3 << 20; /* one more: a send to rank 0 */
        int links = n + 1;
        /* big enough: the ring for 4 and 8 ranks, a list for 64 */
        char *text = topology_text(&m, n, (pl_rect){0, 0, 40, 24}, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        char want[64];
        int seen = 0;
        for (int k = 0; k < n; k++) {
            snprintf(want, sizeof want, "%d>%d %d.0 KiB", k, (k + 1) % n, k + 1);
            seen += strstr(text, want) != NULL;
        }
        seen += strstr(text, "2>0 3.0 MiB") != NULL;
        if (n <= 8) {
            CU_ASSERT_EQUAL(seen, links);               /* all of them */
            CU_ASSERT_PTR_NULL(strstr(text, "links ")); /* no scrolling */
            CU_ASSERT_PTR_NOT_NULL(strstr(text, n == 4 ? "3>0 4.0 KiB" : "7>0 8.0 KiB"));
        } else {
            /* 38 cells: 2 columns of "63>0 64.0 KiB", 22 rows: 44 of 65 */
            int cols, page;
            viz_view v;
            memset(&v, 0, sizeof v);
            v.ndev = n;
            CU_ASSERT_EQUAL(viz_topology_links(&m, &v, (pl_rect){0, 0, 40, 24}, &cols, &page), 65);
            CU_ASSERT_EQUAL(cols, 2);
            CU_ASSERT_EQUAL(page, 44);
            CU_ASSERT_EQUAL(seen, 44);
            CU_ASSERT_PTR_NOT_NULL(strstr(text, " links 1-44 of 65, up/down "));
            /* scrolled to the end: the last page, on a row's start */
            free(text);
            text = topology_text(&m, n, (pl_rect){0, 0, 40, 24}, 1000);
            CU_ASSERT_PTR_NOT_NULL(strstr(text, " links 23-65 of 65, up/down "));
            int rest = 0;
            for (int k = 0; k < n; k++) {
                snprintf(want, sizeof want, "%d>%d %d.0 KiB", k, (k + 1) % n, k + 1);
                rest += strstr(text, want) != NULL;
            }
            CU_ASSERT_EQUAL(rest, 43); /* 2>0 comes third: on the first page */
        }
        free(text);
        /* at 80x24 the pane is 30x13: inside the ring, 7 rows of one column */
        if (n == 8) {
            text = topology_text(&m, n, (pl_rect){0, 0, 30, 13}, 0);
            CU_ASSERT_PTR_NOT_NULL(strstr(text, " links 1-7 of 9, up/down "));
            CU_ASSERT_PTR_NOT_NULL(strstr(text, "0>1 1.0 KiB"));
            free(text);
            text = topology_text(&m, n, (pl_rect){0, 0, 30, 13}, 2);
            CU_ASSERT_PTR_NOT_NULL(strstr(text, " links 3-9 of 9, up/down "));
            CU_ASSERT_PTR_NOT_NULL(strstr(text, "7>0 8.0 KiB"));
            CU_ASSERT_PTR_NULL(strstr(text, "0>1 1.0 KiB"));
            free(text);
        }
        viz_model_free(&m);
    }
}

/* The narration of a live run: the transcript (each step's narration,
 * then what the lab printed during it) from the current step's first row;
 * scrolled down to the end of a long table and back into the step before;
 * the bottom border says how much lies above and below. */
static void test_narration_scroll(void)
{
    viz_transcript t;
    memset(&t, 0, sizeof t);
    CU_ASSERT_EQUAL(viz_transcript_step(&t, 1, "first"), 0);
    const char *out1 = "a\nb\nc\n";
    CU_ASSERT_EQUAL(viz_transcript_output(&t, out1, strlen(out1)), 0);
    CU_ASSERT_EQUAL(viz_transcript_step(&t, 2, "second\n    size  time"), 0);
    for (int i = 0; i < 30; i++) {
        char line[32];
        int n = snprintf(line, sizeof line, "%6d  row\n", i);
        /* in pieces, as the lab's output arrives */
        CU_ASSERT_EQUAL(viz_transcript_output(&t, line, 3), 0);
        CU_ASSERT_EQUAL(viz_transcript_output(&t, line + 3, (size_t)n - 3), 0);
    }
    CU_ASSERT_EQUAL(t.nlines, 4 + 2 + 30);
    CU_ASSERT_EQUAL(t.step_line, 4);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.transcript = &t;
    CU_ASSERT_EQUAL(viz_narration_rows(&v, 38), 32); /* step 2: 2 + 30 rows */
    {
        /* a replay (no transcript): the narration wrapped as the pane wraps it, and the
         * status line; the layout grows the narration as a live run's (Lab 04's tiles
         * at 80x24 had 2 rows more in the replay) */
        viz_view rv;
        memset(&rv, 0, sizeof rv);
        CU_ASSERT_EQUAL(viz_narration_rows(&rv, 38), 1); /* "(no step yet)" */
        snprintf(rv.narration, sizeof rv.narration,
                 "[3] the tiled kernel loads a tile of A and one of B into shared memory\n"
                 "    and each thread reads them 16 times");
        CU_ASSERT_EQUAL(viz_narration_rows(&rv, 38), 4); /* 2 rows, then 2 */
        rv.status = "paused";
        CU_ASSERT_EQUAL(viz_narration_rows(&rv, 38), 5);
        pl_layout Lr, Ll;
        CU_ASSERT_EQUAL(viz_narration_rows(&rv, 78), 3); /* 1 row, 1, the status */
        pl_viz_layout_text(80, 24, 1, (1u << PL_PANE_DEVICES) | (1u << PL_PANE_PICTURE), 3, &Ll);
        pl_viz_layout_text(80, 24, 1, (1u << PL_PANE_DEVICES) | (1u << PL_PANE_PICTURE),
                           viz_narration_rows(&rv, 78), &Lr);
        CU_ASSERT(!memcmp(&Ll.pane[PL_PANE_PICTURE], &Lr.pane[PL_PANE_PICTURE], sizeof(pl_rect)));
    }
    pl_rect r = {0, 0, 40, 10};
    int lo, hi;
    viz_narration_range(&v, r, &lo, &hi);
    CU_ASSERT_EQUAL(lo, -4); /* back to step 1's first row */
    CU_ASSERT_EQUAL(hi, 24); /* 36 rows, 8 shown from row 4 */
    viz_model m;
    viz_model_init(&m, 1);
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 40, 10), 0);
    static const struct {
        int scroll;
        const char *first, *last, *border;
    } c[] = {
        {0, "[2] second", "     5  row", " 4 rows above, 24 below: PgUp/PgDn "},
        {24, "    22  row", "    29  row", " 28 rows above: PgUp; e: this step "},
        {99, "    22  row", "    29  row", " 28 rows above: PgUp; e: this step "},
        {-4, "[1] first", "     1  row", " 28 more rows: PgDn, n: all narration "},
        {-3, "a", "     2  row", " 1 row above, 27 below: PgUp/PgDn "},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        v.narr_scroll = c[i].scroll;
        viz_render_pane(&g, PL_PANE_NARRATION, r, &m, &v);
        char top[64], bottom[64], border[64];
        row_of(&g, 1, 1, 38, top);
        row_of(&g, 8, 1, 38, bottom);
        row_of(&g, 9, 0, 40, border);
        CU_ASSERT_EQUAL(strncmp(top, c[i].first, strlen(c[i].first)), 0);
        CU_ASSERT_EQUAL(strncmp(bottom, c[i].last, strlen(c[i].last)), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(border, c[i].border));
    }
    /* step 2's header row, in full, as the lab printed it */
    v.narr_scroll = 0;
    viz_render_pane(&g, PL_PANE_NARRATION, r, &m, &v);
    char row2[64];
    row_of(&g, 2, 1, 38, row2);
    CU_ASSERT_EQUAL(strncmp(row2, "    size  time ", 15), 0);
    /* the time axis: a rounding error below zero is "0 ns", not "-0 ns" */
    char tm[32];
    viz_fmt_time(tm, sizeof tm, -1e-12);
    CU_ASSERT_STRING_EQUAL(tm, "0 ns");
    viz_fmt_time(tm, sizeof tm, -2e-9);
    CU_ASSERT_STRING_EQUAL(tm, "-2 ns");
    viz_grid_free(&g);
    viz_model_free(&m);
    viz_transcript_free(&t);
}

/* Traces read back: the events a writer wrote (kinds, ranks, lanes, bytes,
 * micro-batch, peer, times to the nanosecond); errors name the file and
 * the position. */
static void test_read_trace(void)
{
    char path[] = "/tmp/paralab-viz-XXXXXX", err[512];
    close(mkstemp(path));
    pl_trace_writer *w = pl_trace_writer_open(path, 2, 1, 0, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    pl_event in[3] = {ev(0, PL_LANE_COMPUTE, PL_EV_FORWARD, 0, 0, 3, 1, "fwd"),
                      ev(1, PL_LANE_COMM, PL_EV_RING_STEP, 0, 0, -1, -1, "all_reduce step 1"),
                      ev(1, PL_LANE_COPY, PL_EV_COPY, 0, 0, -1, -1, "memcpy peer")};
    in[0].modeled_start = 1e-6;
    in[0].modeled_end = 3.5e-6;
    in[1].modeled_start = 2e-6;
    in[1].modeled_end = 9e-6;
    in[1].peer = 0;
    in[1].bytes = 4096;
    in[2].modeled_start = 4e-6;
    in[2].modeled_end = 5e-6;
    CU_ASSERT_EQUAL(pl_trace_writer_add(w, in, 3), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    pl_event *out;
    size_t n;
    int nranks, modeled;
    CU_ASSERT_EQUAL_FATAL(pl_viz_read_trace(path, &out, &n, &nranks, &modeled, err, sizeof err), 0);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_EQUAL(nranks, 2);
    CU_ASSERT_EQUAL(modeled, 1);
    CU_ASSERT_EQUAL(out[0].kind, PL_EV_FORWARD);
    CU_ASSERT_EQUAL(out[0].micro_batch, 3);
    CU_ASSERT_EQUAL(out[0].layer, 1);
    CU_ASSERT_DOUBLE_EQUAL(out[0].start, 1e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(out[0].end, 3.5e-6, 1e-12);
    CU_ASSERT_EQUAL(out[1].rank, 1);
    CU_ASSERT_EQUAL(out[1].lane, PL_LANE_COMM);
    CU_ASSERT_EQUAL(out[1].peer, 0);
    CU_ASSERT_EQUAL(out[1].bytes, 4096);
    CU_ASSERT_STRING_EQUAL(out[1].label, "all_reduce step 1");
    CU_ASSERT_EQUAL(out[2].kind, PL_EV_COPY);
    free(out);
    /* truncated: the first half of the file */
    FILE *f = fopen(path, "r+");
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fclose(f);
    CU_ASSERT_EQUAL(truncate(path, len / 2), 0);
    CU_ASSERT_EQUAL(pl_viz_read_trace(path, &out, &n, &nranks, &modeled, err, sizeof err), -1);
    char want[128];
    snprintf(want, sizeof want, "%s:", path);
    CU_ASSERT_EQUAL(strncmp(err, want, strlen(want)), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a trace"));
    /* corrupt: an event without its time */
    f = fopen(path, "w");
    fputs("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"k\",\"cat\":\"kernel\",\"pid\":0,\"tid\":0,"
          "\"dur\":1},\n{\"ph\":\"X\",\"name\":\"k\",\"cat\":\"kernel\",\"pid\":0,\"tid\":0}]}",
          f);
    fclose(f);
    CU_ASSERT_EQUAL(pl_viz_read_trace(path, &out, &n, &nranks, &modeled, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "event 0: \"ts\" is missing or not a number"));
    /* not a trace at all */
    f = fopen(path, "w");
    fputs("[1, 2, 3]", f);
    fclose(f);
    CU_ASSERT_EQUAL(pl_viz_read_trace(path, &out, &n, &nranks, &modeled, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no \"traceEvents\" array"));
    unlink(path);
    CU_ASSERT_EQUAL(pl_viz_read_trace(path, &out, &n, &nranks, &modeled, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot read it"));
}

/* ---- the replay: its cursor, its plan, the notes read back, --check ----------------------- */

/* Which items a replay shows at a cursor, and how the cursor moves: a step
 * a second at speed 1, its items over the first half, space to the next
 * step with all of its items, the end at the last step's end. */
static void test_replay_cursor(void)
{
    double marks[] = {1.0, 2.0, 5.0};
    CU_ASSERT_EQUAL(viz_replay_step_of(0.5, marks, 3), 1); /* before the first: step 1 */
    CU_ASSERT_EQUAL(viz_replay_step_of(1.0, marks, 3), 1);
    CU_ASSERT_EQUAL(viz_replay_step_of(1.5, marks, 3), 1);
    CU_ASSERT_EQUAL(viz_replay_step_of(2.0, marks, 3), 2);
    CU_ASSERT_EQUAL(viz_replay_step_of(4.9, marks, 3), 2);
    CU_ASSERT_EQUAL(viz_replay_step_of(5.0, marks, 3), 3);
    CU_ASSERT_EQUAL(viz_replay_step_of(1e9, marks, 3), 3);
    CU_ASSERT_EQUAL(viz_replay_step_of(7, marks, 0), 1);
    /* 3 steps: 4 items, none (a step of host code only), 6 */
    size_t first[] = {0, 4, 4, 10};
    struct {
        viz_cursor c;
        size_t shown;
        int done;
    } at[] = {{{1, 0}, 0, 0},    {{1, 0.25}, 2, 0}, {{1, 0.5}, 4, 0},   {{1, 0.9}, 4, 0},
              {{2, 0}, 4, 0},    {{2, 0.7}, 4, 0},  {{3, 0}, 4, 0},     {{3, 0.05}, 5, 0},
              {{3, 0.25}, 7, 0}, {{3, 0.5}, 10, 0}, {{3, 0.99}, 10, 0}, {{3, 1}, 10, 1}};
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        CU_ASSERT_EQUAL(viz_replay_shown(first, 3, at[i].c), at[i].shown);
        CU_ASSERT_EQUAL(viz_replay_done(at[i].c, 3), at[i].done);
    }
    /* playing: frames of 1/8 s at 2 steps a second: a quarter step each,
     * the end after exactly 12 frames, never before */
    viz_cursor c = {1, 0};
    for (int f = 1; f <= 12; f++) {
        viz_replay_play(&c, 3, 0.125, 2);
        CU_ASSERT_EQUAL(c.step, f < 12 ? 1 + f / 4 : 3);
        CU_ASSERT_EQUAL(viz_replay_done(c, 3), f == 12);
    }
    CU_ASSERT_DOUBLE_EQUAL(c.f, 1, 1e-12);
    viz_replay_play(&c, 3, 10, 2); /* the end stays the end */
    CU_ASSERT(c.step == 3 && c.f == 1);
    CU_ASSERT_EQUAL(viz_replay_shown(first, 3, c), 10);
    /* fast: 100 steps a second passes steps in one frame */
    c = (viz_cursor){1, 0};
    viz_replay_play(&c, 3, 1.0 / 30, 100);
    CU_ASSERT(viz_replay_done(c, 3));
    /* paused (no time, or no speed): it stays */
    c = (viz_cursor){2, 0.25};
    viz_replay_play(&c, 3, 0, 1);
    viz_replay_play(&c, 3, 1, 0);
    CU_ASSERT(c.step == 2 && c.f == 0.25);
    /* space: the next step, all of its items; in the last, the end */
    c = (viz_cursor){1, 0.1};
    viz_replay_next(&c, 3);
    CU_ASSERT(c.step == 2 && !viz_replay_done(c, 3));
    CU_ASSERT_EQUAL(viz_replay_shown(first, 3, c), 4);
    viz_replay_next(&c, 3);
    CU_ASSERT_EQUAL(c.step, 3);
    CU_ASSERT_EQUAL(viz_replay_shown(first, 3, c), 10);
    CU_ASSERT(!viz_replay_done(c, 3));
    viz_replay_next(&c, 3);
    CU_ASSERT(viz_replay_done(c, 3));
    viz_replay_next(&c, 3);
    CU_ASSERT(c.step == 3 && viz_replay_done(c, 3));
}

/* The plan: every event in the step whose mark it follows (before the
 * first: step 1), every metric value in the step it was pushed in (also
 * at the same time as the next mark), in time order within a step; a
 * trace without narration in 10 equal parts. */
static void test_replay_plan(void)
{
    viz_trace t;
    memset(&t, 0, sizeof t);
    pl_event evs[5];
    double starts[] = {0.5, 1.0, 1.5, 3.0, 6.0};
    for (int i = 0; i < 5; i++)
        evs[i] = ev(0, PL_LANE_COMPUTE, PL_EV_KERNEL, starts[i], starts[i] + 0.1, -1, -1, "k");
    viz_mark marks[] = {{1.0, 1, "one"}, {2.0, 2, "two"}, {5.0, 3, "three"}};
    viz_metric_note mets[] = {{1.7, 0.5, 1, "loss"}, {2.0, 0.4, 1, "loss"}, {5.5, 0.3, 3, "loss"}};
    t.ev = evs;
    t.nev = 5;
    t.marks = marks;
    t.nmarks = 3;
    t.metrics = mets;
    t.nmetrics = 3;
    viz_item *it;
    size_t n, *first;
    CU_ASSERT_EQUAL_FATAL(viz_replay_plan(&t, &it, &n, &first), 3);
    CU_ASSERT_EQUAL(n, 8);
    struct {
        int step, metric;
        size_t index;
    } want[] = {{1, 0, 0}, {1, 0, 1}, {1, 0, 2}, {1, 1, 0},
                {1, 1, 1}, {2, 0, 3}, {3, 1, 2}, {3, 0, 4}};
    for (size_t i = 0; i < n && i < 8; i++) {
        CU_ASSERT_EQUAL(it[i].step, want[i].step);
        CU_ASSERT_EQUAL(it[i].metric, want[i].metric);
        CU_ASSERT_EQUAL(it[i].index, want[i].index);
    }
    size_t want_first[] = {0, 5, 6, 8};
    for (int k = 0; k <= 3; k++) CU_ASSERT_EQUAL(first[k], want_first[k]);
    free(it);
    free(first);
    /* no narration: 20 events in 10 parts of 2; a metric with the event before it */
    pl_event many[20];
    for (int i = 0; i < 20; i++)
        many[i] = ev(0, PL_LANE_COPY, PL_EV_COPY, i * 1e-6, i * 1e-6 + 5e-7, -1, -1, "c");
    viz_metric_note m = {5.5e-6, 1, 0, "GB/s"};
    t = (viz_trace){.ev = many, .nev = 20, .metrics = &m, .nmetrics = 1};
    CU_ASSERT_EQUAL_FATAL(viz_replay_plan(&t, &it, &n, &first), VIZ_REPLAY_PARTS);
    CU_ASSERT_EQUAL(n, 21);
    CU_ASSERT_EQUAL(first[0], 0);
    for (int k = 1; k <= 10; k++) CU_ASSERT_EQUAL(first[k], 2 * (size_t)k + (k >= 3));
    CU_ASSERT(it[6].metric == 1 && it[6].step == 3); /* after event 5, in part 3 */
    free(it);
    free(first);
    /* events that say their step (args.step, pl_trace_set_step) go under it
     * whatever their times say: the ranks' modeled clocks need not agree
     * with rank 0's when it narrates (a broadcast of step 3 that starts, on
     * its rank's clock, before step 3's narration is still step 3's); step
     * 0, before the first narration, goes under the first */
    int steps[] = {0, 3, 2, 1, 3};
    for (int i = 0; i < 5; i++) evs[i].step = steps[i];
    t = (viz_trace){.ev = evs, .nev = 5, .marks = marks, .nmarks = 3};
    CU_ASSERT_EQUAL_FATAL(viz_replay_plan(&t, &it, &n, &first), 3);
    CU_ASSERT_EQUAL(n, 5);
    size_t want_tagged[] = {0, 3, 2, 1, 4}; /* by step, then time */
    for (size_t i = 0; i < n && i < 5; i++) CU_ASSERT_EQUAL(it[i].index, want_tagged[i]);
    size_t want_tfirst[] = {0, 2, 3, 5};
    for (int k = 0; k <= 3; k++) CU_ASSERT_EQUAL(first[k], want_tfirst[k]);
    free(it);
    free(first);
}

/* The narration, the metrics and what the lab said come back from the file
 * as they were noted; kernels and copies come back with their lanes and
 * streams (args), and a file of an older paralab (the lane as tid, no
 * args.lane) still reads. */
static void test_replay_reads_notes(void)
{
    char path[] = "/tmp/paralab-viz-XXXXXX", err[512];
    close(mkstemp(path));
    pl_trace *tr = pl_trace_create(1, 16, PL_TRACE_WAIT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tr);
    pl_trace_writer *w = pl_trace_writer_open(path, 2, 1, 0, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    pl_event in[2] = {ev(0, PL_LANE_COMPUTE, PL_EV_KERNEL, 0, 0, -1, -1, "k"),
                      ev(1, PL_LANE_COPY, PL_EV_COPY, 0, 0, -1, -1, "memcpy H2D")};
    in[0].stream = 3; /* stream 2 */
    in[0].modeled_end = 4e-6;
    in[1].stream = 1; /* the default stream */
    in[1].modeled_start = 1e-6;
    in[1].modeled_end = 2e-6;
    CU_ASSERT_EQUAL(pl_trace_writer_describe(w, "lab 05 streams", 4, 140u, 1), 0);
    pl_trace_note_step(tr, 1, "first: the chunks\n  and a table");
    pl_trace_note_metric(tr, "GB/s", 12.5);
    pl_trace_note_step(tr, 2, "second");
    pl_trace_note_metric(tr, "GB/s", NAN);
    CU_ASSERT_EQUAL(pl_trace_writer_add(w, in, 2), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_take_notes(w, tr), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    pl_trace_destroy(tr);
    viz_trace t;
    CU_ASSERT_EQUAL_FATAL(viz_read_trace(path, &t, err, sizeof err), 0);
    CU_ASSERT_EQUAL(t.nev, 2);
    CU_ASSERT_EQUAL(t.nranks, 2);
    CU_ASSERT_STRING_EQUAL(t.title, "lab 05 streams");
    CU_ASSERT_EQUAL(t.steps, 4);
    CU_ASSERT_EQUAL(t.panes, 140u);
    CU_ASSERT_EQUAL(t.stream_lanes, 1);
    CU_ASSERT_EQUAL_FATAL(t.nmarks, 2);
    CU_ASSERT_EQUAL(t.marks[0].step, 1);
    CU_ASSERT_STRING_EQUAL(t.marks[0].text, "first: the chunks\n  and a table");
    CU_ASSERT_EQUAL(t.marks[1].step, 2);
    CU_ASSERT_STRING_EQUAL(t.marks[1].text, "second");
    CU_ASSERT(t.marks[0].at <= t.marks[1].at);
    CU_ASSERT_EQUAL_FATAL(t.nmetrics, 2);
    CU_ASSERT_STRING_EQUAL(t.metrics[0].name, "GB/s");
    CU_ASSERT_DOUBLE_EQUAL(t.metrics[0].value, 12.5, 0);
    CU_ASSERT_EQUAL(t.metrics[0].after, 1);
    CU_ASSERT(isnan(t.metrics[1].value));
    CU_ASSERT_EQUAL(t.metrics[1].after, 2);
    /* by start: the kernel (0 us), then the copy (1 us) */
    CU_ASSERT(t.ev[0].kind == PL_EV_KERNEL && t.ev[0].lane == PL_LANE_COMPUTE);
    CU_ASSERT_EQUAL(t.ev[0].stream, 3);
    CU_ASSERT(t.ev[1].kind == PL_EV_COPY && t.ev[1].lane == PL_LANE_COPY);
    CU_ASSERT_EQUAL(t.ev[1].stream, 1);
    CU_ASSERT_DOUBLE_EQUAL(t.ev[1].start, 1e-6, 1e-12);
    viz_trace_free(&t);
    /* an older paralab's file: the lane as tid, no stream */
    FILE *f = fopen(path, "w");
    fputs("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"memcpy\",\"cat\":\"copy\",\"pid\":0,"
          "\"tid\":1,\"ts\":2,\"dur\":1,\"args\":{\"bytes\":8}}]}",
          f);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(viz_read_trace(path, &t, err, sizeof err), 0);
    CU_ASSERT_EQUAL(t.nev, 1);
    CU_ASSERT(t.ev[0].lane == PL_LANE_COPY && t.ev[0].stream == 0 && t.ev[0].bytes == 8);
    CU_ASSERT(t.nmarks == 0 && t.nmetrics == 0 && !t.title[0]);
    viz_trace_free(&t);
    /* a narrated step without its text: the event is named */
    f = fopen(path, "w");
    fputs("{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"x\"},{\"ph\":\"i\",\"cat\":\"narration\","
          "\"name\":\"step 1\",\"ts\":0,\"args\":{\"step\":1}}]}",
          f);
    fclose(f);
    CU_ASSERT_EQUAL(viz_read_trace(path, &t, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "event 1: a narrated step needs"));
    /* a stream out of range */
    f = fopen(path, "w");
    fputs("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"k\",\"cat\":\"kernel\",\"pid\":0,"
          "\"tid\":3,\"ts\":2,\"dur\":1,\"args\":{\"lane\":0,\"stream\":999}}]}",
          f);
    fclose(f);
    CU_ASSERT_EQUAL(viz_read_trace(path, &t, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "event 0: stream out of range"));
    unlink(path);
}

/* paralab-viz --check: slices of one track that overlap without nesting
 * are found and named; nested and apart ones pass. */
static void test_check_trace(void)
{
    char path[] = "/tmp/paralab-viz-XXXXXX", msg[1024];
    close(mkstemp(path));
    FILE *f = fopen(path, "w");
    fputs("{\"traceEvents\":[\n"
          "{\"ph\":\"X\",\"name\":\"outer\",\"cat\":\"collective\",\"pid\":0,\"tid\":2,\"ts\":0,"
          "\"dur\":10},\n"
          "{\"ph\":\"X\",\"name\":\"inner\",\"cat\":\"ring step\",\"pid\":0,\"tid\":2,\"ts\":2,"
          "\"dur\":8},\n"
          "{\"ph\":\"X\",\"name\":\"a\",\"cat\":\"kernel\",\"pid\":0,\"tid\":3,\"ts\":0,"
          "\"dur\":5,\"args\":{\"lane\":0,\"stream\":0}},\n"
          "{\"ph\":\"X\",\"name\":\"b\",\"cat\":\"kernel\",\"pid\":0,\"tid\":3,\"ts\":5,"
          "\"dur\":5,\"args\":{\"lane\":0,\"stream\":0}}]}",
          f);
    fclose(f);
    CU_ASSERT_EQUAL(pl_viz_check_trace(path, msg, sizeof msg), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "4 slices on 2 tracks of 1 rank, every track's slices"));
    f = fopen(path, "w");
    fputs("{\"traceEvents\":[\n"
          "{\"ph\":\"X\",\"name\":\"matmul\",\"cat\":\"kernel\",\"pid\":1,\"tid\":0,\"ts\":1,"
          "\"dur\":4},\n"
          "{\"ph\":\"X\",\"name\":\"reduce\",\"cat\":\"kernel\",\"pid\":1,\"tid\":0,\"ts\":3,"
          "\"dur\":4},\n"
          "{\"ph\":\"X\",\"name\":\"other rank\",\"cat\":\"kernel\",\"pid\":0,\"tid\":0,\"ts\":3,"
          "\"dur\":4}]}",
          f);
    fclose(f);
    CU_ASSERT_EQUAL(pl_viz_check_trace(path, msg, sizeof msg), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "1 pair of slices overlap without nesting on one track; "
                                       "the first: rank 1, tid 0: \"matmul\" (1.000 to 5.000 us) "
                                       "and \"reduce\" (3.000 to 7.000 us)"));
    unlink(path);
    CU_ASSERT_EQUAL(pl_viz_check_trace(path, msg, sizeof msg), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "cannot read it"));
}

/* ---- one stream: what a rank records reaches the UI through the trace alone ------------ */

/* Each rank allocates (rank + 1) MiB for one step; rank 0 records a metric
 * value before the step and one in it. What the device says once every
 * rank has allocated (on each rank's own thread) is what the model must
 * show while the step is up: rank 0 takes the trace then, as the UI does
 * while the student reads (the other rank waits: one consumer). */
static size_t mem_used[2], mem_total[2];
static double seen_used[2], seen_total[2];
static viz_model *live;
static pl_trace_writer *live_file;
static pl_event live_buf[4096];
static int metric_and_alloc(pl_rank *r)
{
    void *d = NULL;
    if (cudaMalloc(&d, (size_t)(r->rank + 1) << 20)) return 1;
    if (r->rank == 0) pl_metric(r, "loss", 0.75);
    if (pl_comm_barrier(r->comm)) return 1;
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot)) return 1;
    mem_used[r->rank] = tot - fr;
    mem_total[r->rank] = tot;
    if (pl_comm_barrier(r->comm)) return 1;
    if (pl_step(r, "allocated")) return 1; /* no player: the ranks only meet */
    if (r->rank == 0) {
        viz_model_take(live, r->trace, live_file, live_buf, 4096);
        for (int q = 0; q < 2; q++) {
            seen_used[q] = live->mem_used[q];
            seen_total[q] = live->mem_total[q];
        }
        pl_metric(r, "epoch loss", 0.5);
    }
    if (pl_comm_barrier(r->comm)) return 1;
    return cudaFree(d) != cudaSuccess;
}

/* The metric values a rank records (pl_metric) and its device's memory (the
 * world samples it on the rank's thread: as it starts, at each step, as it
 * ends) reach the UI's model through the trace, as app.c's drain takes it
 * (viz_model_take): no metric queue, no device asked from the UI's thread;
 * the same notes go into the trace file, and its replay puts the same
 * values into its model and the devices pane draws them. */
static void test_one_stream_metrics_and_memory(void)
{
    pl_trace *t = pl_trace_create(2, 4096, PL_TRACE_WAIT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    char path[] = "/tmp/paralab-viz-XXXXXX", err[512];
    close(mkstemp(path));
    live_file = pl_trace_writer_open(path, 2, 0, -1, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(live_file);
    viz_model m;
    viz_model_init(&m, 2);
    live = &m;
    pl_world_config cfg = {.n = 2, .comm_timeout_s = 10, .trace = t};
    CU_ASSERT_EQUAL_FATAL(pl_world_run_config(&cfg, metric_and_alloc, NULL, err, sizeof err), 0);
    for (int r = 0; r < 2; r++) { /* in the step: the allocations */
        CU_ASSERT(mem_used[r] >= (size_t)(r + 1) << 20);
        CU_ASSERT_DOUBLE_EQUAL(seen_used[r], (double)mem_used[r], 0);
        CU_ASSERT_DOUBLE_EQUAL(seen_total[r], (double)mem_total[r], 0);
    }
    CU_ASSERT(viz_model_take(&m, t, live_file, live_buf, 4096) > 0);
    CU_ASSERT_EQUAL(viz_model_take(&m, t, live_file, live_buf, 4096), 0); /* nothing more */
    CU_ASSERT_EQUAL(pl_trace_writer_close(live_file, err, sizeof err), 0);
    for (int r = 0; r < 2; r++) { /* at the end: freed */
        CU_ASSERT_DOUBLE_EQUAL(m.mem_used[r] + (double)((size_t)(r + 1) << 20), (double)mem_used[r],
                               0);
        CU_ASSERT_DOUBLE_EQUAL(m.mem_total[r], (double)mem_total[r], 0);
    }
    CU_ASSERT_EQUAL_FATAL(m.nseries, 2);
    CU_ASSERT_STRING_EQUAL(m.series[0].name, "loss");
    CU_ASSERT(m.series[0].n == 1 && m.series[0].v[0] == 0.75);
    CU_ASSERT_STRING_EQUAL(m.series[1].name, "epoch loss");
    CU_ASSERT(m.series[1].n == 1 && m.series[1].v[0] == 0.5);
    /* the file: the same notes */
    viz_trace tr;
    CU_ASSERT_EQUAL_FATAL(viz_read_trace(path, &tr, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(tr.nmetrics, 2);
    CU_ASSERT(!strcmp(tr.metrics[0].name, "loss") && tr.metrics[0].value == 0.75);
    CU_ASSERT(!strcmp(tr.metrics[1].name, "epoch loss") && tr.metrics[1].value == 0.5);
    /* each rank's device: as it started, in the step, as it ended */
    CU_ASSERT_EQUAL_FATAL(tr.nmemory, 6);
    int k[2] = {0, 0};
    double want[2][3];
    for (int r = 0; r < 2; r++) {
        want[r][0] = want[r][2] = m.mem_used[r];
        want[r][1] = (double)mem_used[r];
    }
    for (size_t i = 0; i < tr.nmemory; i++) {
        int r = tr.memory[i].rank;
        CU_ASSERT_FATAL(r >= 0 && r < 2 && k[r] < 3);
        CU_ASSERT_DOUBLE_EQUAL(tr.memory[i].used, want[r][k[r]], 0);
        CU_ASSERT_DOUBLE_EQUAL(tr.memory[i].total, (double)mem_total[r], 0);
        k[r]++;
    }
    /* the replay: the same model */
    viz_item *it;
    size_t n, *first;
    CU_ASSERT_FATAL(viz_replay_plan(&tr, &it, &n, &first) > 0);
    CU_ASSERT_EQUAL(n, tr.nev + 8);
    viz_model rm;
    viz_model_init(&rm, tr.nranks);
    for (size_t i = 0; i < n; i++) CU_ASSERT_EQUAL(viz_replay_apply(&rm, &tr, &it[i]), 0);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_DOUBLE_EQUAL(rm.mem_used[r], m.mem_used[r], 0);
        CU_ASSERT_DOUBLE_EQUAL(rm.mem_total[r], m.mem_total[r], 0);
    }
    CU_ASSERT_EQUAL_FATAL(rm.nseries, 2);
    CU_ASSERT(rm.series[0].v[0] == 0.75 && rm.series[1].v[0] == 0.5);
    CU_ASSERT_EQUAL(rm.nevents, m.nevents);
    /* the devices pane draws each rank's bar from them (12 cells at this
     * width, '#' the used part, '.' the rest) */
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 60, 4), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 2;
    rm.mem_used[1] = rm.mem_total[1] / 2; /* half full: 6 of 12 */
    viz_render_pane(&g, PL_PANE_DEVICES, (pl_rect){0, 0, 60, 4}, &rm, &v);
    char *text = viz_grid_text(&g);
    char row[2][80];
    snprintf(row[0], sizeof row[0], "|r0  idle%*s|", 50, "............");
    snprintf(row[1], sizeof row[1], "|r1  idle%*s|", 50, "######......");
    CU_ASSERT_PTR_NOT_NULL(strstr(text, row[0]));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, row[1]));
    free(text);
    viz_grid_free(&g);
    free(it);
    free(first);
    viz_model_free(&rm);
    viz_trace_free(&tr);
    viz_model_free(&m);
    pl_trace_destroy(t);
    unlink(path);
}

/* ---- Labs 05-07's screens (review57) ---------------------------------------------------- */

/* The whole pane r of g, as lines (ASCII grid), for exact comparisons. */
static void pane_lines(const viz_grid *g, pl_rect r, char out[][96])
{
    for (int y = 0; y < r.h; y++) row_of(g, r.y + y, r.x, r.w, out[y]);
}

static pl_event on_stream(int stream, int kind, double s, double e, int step)
{
    pl_event x = ev(0, kind == PL_EV_KERNEL ? PL_LANE_COMPUTE : PL_LANE_COPY, kind, s, e, -1, -1,
                    kind == PL_EV_KERNEL ? "process" : "memcpy");
    x.stream = (uint8_t)stream;
    x.step = step;
    return x;
}

/* Lab 05: one stream (step 2: copy in, kernel, copy out, 10 s) against two
 * streams (step 3: the same in two chunks, 7 s), each from its own start on
 * the longest's scale; a kernel shorter than a cell still drawn. ASCII. */
static void test_stream_compare(void)
{
    viz_model m;
    viz_model_init(&m, 1);
    m.stream_lanes = 1;
    pl_event e[] = {
        on_stream(2, PL_EV_COPY, 0, 4, 2),       on_stream(2, PL_EV_KERNEL, 4, 6, 2),
        on_stream(2, PL_EV_COPY, 6, 10, 2),      on_stream(2, PL_EV_COPY, 20, 22, 3),
        on_stream(2, PL_EV_KERNEL, 22, 22.2, 3), on_stream(2, PL_EV_COPY, 22.2, 24, 3),
        on_stream(3, PL_EV_COPY, 22, 24, 3),     on_stream(3, PL_EV_KERNEL, 24, 25, 3),
        on_stream(3, PL_EV_COPY, 25, 27, 3),
    };
    for (size_t i = 0; i < sizeof e / sizeof *e; i++) CU_ASSERT_EQUAL(viz_model_add(&m, &e[i]), 0);
    viz_grid g = {0};
    g.utf8 = 0;
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 30, 10), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 1;
    v.modeled = 0;
    v.t_end = 27;
    v.span = 27;
    pl_rect r = {0, 0, 30, 10};
    viz_render_pane(&g, PL_PANE_TIMELINE, r, &m, &v);
    char L[10][96];
    pane_lines(&g, r, L);
    /* 20 cells of 0.5 s after the 8 of the label */
    static const char *want[10] = {
        "+ timeline (measured clock): +", "|step 2: 1 stream, 1 kernel, |",
        "|    s1  ========####========|", "|step 3: 2 streams, 2 kernels|",
        "|    s1  ====#===......      |", "|    s2  ....====##====      |",
        "|# kernel  = copy  . idle    |", "|s0 default, s1.. made stream|",
        "|        0 ns         10.00 s|", "+----------------------------+",
    };
    for (int y = 0; y < 10; y++) {
        if (strcmp(L[y], want[y])) printf("\n  row %d: '%s'\n   want: '%s'", y, L[y], want[y]);
        CU_ASSERT_STRING_EQUAL(L[y], want[y]);
    }
    /* short of rows (4 inside): one row names both, each lane its step */
    viz_grid_clear(&g);
    pl_rect small = {0, 0, 30, 6};
    viz_render_pane(&g, PL_PANE_TIMELINE, small, &m, &v);
    pane_lines(&g, small, L);
    static const char *want_small[6] = {
        "+ timeline (measured clock): +", "|2: 1 stream 10.00 s  3: 2 st|",
        "|2: s1   ========####========|", "|3: s1   ====#===......      |",
        "|3: s2   ....====##====      |", "+ # kernel  = copy  . idle --+",
    };
    for (int y = 0; y < 6; y++) {
        if (strcmp(L[y], want_small[y])) printf("\n  row %d: '%s'", y, L[y]);
        CU_ASSERT_STRING_EQUAL(L[y], want_small[y]);
    }
    /* zoomed: the usual lanes again */
    v.zoomed = 1;
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_TIMELINE, r, &m, &v);
    pane_lines(&g, r, L);
    CU_ASSERT_EQUAL(strncmp(L[1], "|r0  s0  ", 9), 0);
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* Lab 05 with chunks slower than one stream (--streams 1): step 3 takes
 * 11 s against step 2's 10 s: "1.10x slower than step 2", never "0.91x as
 * fast"; short of rows, "1.10x slower" too. */
static void test_stream_compare_slower(void)
{
    viz_model m;
    viz_model_init(&m, 1);
    m.stream_lanes = 1;
    pl_event e[] = {
        on_stream(2, PL_EV_COPY, 0, 4, 2),     on_stream(2, PL_EV_KERNEL, 4, 6, 2),
        on_stream(2, PL_EV_COPY, 6, 10, 2),    on_stream(2, PL_EV_COPY, 20, 24, 3),
        on_stream(2, PL_EV_KERNEL, 24, 27, 3), on_stream(2, PL_EV_COPY, 27, 31, 3),
    };
    for (size_t i = 0; i < sizeof e / sizeof *e; i++) CU_ASSERT_EQUAL(viz_model_add(&m, &e[i]), 0);
    viz_grid g = {0};
    g.utf8 = 0;
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 80, 10), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 1;
    v.t_end = 31;
    v.span = 31;
    pl_rect r = {0, 0, 80, 10};
    viz_render_pane(&g, PL_PANE_TIMELINE, r, &m, &v);
    char L[10][96];
    pane_lines(&g, r, L);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(L[3], "|step 3: 1 stream, 1 kernel, 11.00 s, 1.10x slower than step 2 "));
    if (!strstr(L[3], "|step 3: 1 stream, 1 kernel, 11.00 s, 1.10x slower than step 2 "))
        printf("\n  row 3: '%s'", L[3]);
    viz_grid_clear(&g);
    pl_rect small = {0, 0, 80, 4};
    viz_render_pane(&g, PL_PANE_TIMELINE, small, &m, &v);
    pane_lines(&g, small, L);
    CU_ASSERT_PTR_NOT_NULL(strstr(L[1], "step 3: 1 stream, 11.00 s, 1.10x slower"));
    if (!strstr(L[1], "step 3: 1 stream, 11.00 s, 1.10x slower")) printf("\n  row 1: '%s'", L[1]);
    viz_grid_free(&g);
    viz_model_free(&m);
}

static pl_event comm_ev(int rank, int kind, double s, double e, const char *label, int peer,
                        int chunk)
{
    pl_event x = ev(rank, PL_LANE_COMM, kind, s, e, -1, -1, label);
    x.peer = peer;
    x.chunk = chunk;
    return x;
}

/* Lab 06: a 4-rank ring all-reduce's 6 steps, each rank receiving segment
 * (b - k - 1) mod 4 at step k from its predecessor (the engine's order):
 * the table under the ring, exactly; a collective of one float (only one
 * link moves at its first step) is passed over for the one before. */
static void test_ring_steps_table(void)
{
    viz_model m;
    viz_model_init(&m, 4);
    for (int b = 0; b < 4; b++) {
        pl_event c = comm_ev(b, PL_EV_COLLECTIVE, 0, 6, "all_reduce", -1, 0);
        viz_model_add(&m, &c);
        for (int k = 1; k <= 6; k++) {
            char label[48];
            snprintf(label, sizeof label, "all_reduce step %d", k);
            pl_event s = comm_ev(b, PL_EV_RING_STEP, k - 1, k, label, (b + 3) % 4,
                                 1 + ((b - k - 1) % 4 + 4) % 4);
            viz_model_add(&m, &s);
        }
        pl_event tiny = comm_ev(b, PL_EV_COLLECTIVE, 7, 8, "all_reduce", -1, 0);
        viz_model_add(&m, &tiny);
        if (b == 0) { /* one float: only segment 3, on link 3>0 */
            pl_event s = comm_ev(b, PL_EV_RING_STEP, 7, 7.5, "all_reduce step 1", 3, 4);
            viz_model_add(&m, &s);
        }
    }
    viz_grid g = {0};
    g.utf8 = 0;
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 34, 20), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 4;
    v.t_end = 8;
    v.span = 8;
    pl_rect r = {0, 0, 34, 20};
    viz_render_pane(&g, PL_PANE_TOPOLOGY, r, &m, &v);
    char L[20][96];
    pane_lines(&g, r, L);
    static const char *want[9] = {
        "|all_reduce: cK a>b +add =copy   |", "|step 0>1 1>2 2>3 3>0            |",
        "| 1 + c3  c0  c1  c2             |", "| 2 + c2  c3  c0  c1             |",
        "| 3 + c1  c2  c3  c0             |", "| 4 = c0  c1  c2  c3             |",
        "| 5 = c3  c0  c1  c2             |", "| 6 = c2  c3  c0  c1             |",
        "+--------------------------------+",
    };
    for (int y = 0; y < 9; y++) {
        if (strcmp(L[11 + y], want[y])) printf("\n  row %d: '%s'", 11 + y, L[11 + y]);
        CU_ASSERT_STRING_EQUAL(L[11 + y], want[y]);
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(L[2], "r0")); /* the ring above it */
    CU_ASSERT_PTR_NOT_NULL(strstr(L[9], "r2"));
    /* seen from a later step (8), it says whose it is; a row short of its
     * height (11: 9 inside), without the headline, the ring left out */
    for (int b = 0; b < 4; b++)
        for (size_t i = 0; i < m.lanes[b][PL_LANE_COMM].n; i++)
            m.lanes[b][PL_LANE_COMM].ev[i].step = 7;
    v.step = 8;
    viz_grid_resize(&g, 36, 14);
    for (int h = 14; h >= 11; h -= 3) {
        viz_grid_clear(&g);
        pl_rect q = {0, 0, 36, h};
        viz_render_pane(&g, PL_PANE_TOPOLOGY, q, &m, &v);
        pane_lines(&g, q, L);
        if (h == 14) {
            CU_ASSERT_STRING_EQUAL(L[5], "|step 7's all_reduce: cK moved a>b |");
            CU_ASSERT_STRING_EQUAL(L[6], "|step 0>1 1>2 2>3 3>0              |");
        } else { /* no room for "step 7's": no table (it would read as step 8's) */
            for (int y = 0; y < h; y++) {
                CU_ASSERT_PTR_NULL(strstr(L[y], "step 0>1"));
                CU_ASSERT_PTR_NULL(strstr(L[y], "+ c3"));
            }
        }
    }
    /* at its own step, a row short: without the headline; far too short:
     * a row says the table does not fit */
    v.step = 7;
    viz_grid_clear(&g);
    pl_rect q = {0, 0, 36, 11};
    viz_render_pane(&g, PL_PANE_TOPOLOGY, q, &m, &v);
    pane_lines(&g, q, L);
    CU_ASSERT_STRING_EQUAL(L[3], "|step 0>1 1>2 2>3 3>0              |");
    CU_ASSERT_STRING_EQUAL(L[9], "| 6 = c2  c3  c0  c1               |");
    viz_grid_clear(&g);
    q.h = 8;
    viz_render_pane(&g, PL_PANE_TOPOLOGY, q, &m, &v);
    pane_lines(&g, q, L);
    int said = 0;
    for (int y = 0; y < 8; y++) said |= strstr(L[y], "6 ring steps: no room to show") != NULL;
    CU_ASSERT(said);
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* The engine's ring records which segment each step moved: a 4-rank
 * all-reduce, every step's cells a permutation of the 4 segments. */
static void test_ring_steps_recorded(void)
{
    pl_trace *t = pl_trace_create(4, 4096, PL_TRACE_WAIT);
    ring_links l;
    memset(&l, 0, sizeof l);
    char err[512];
    CU_ASSERT_EQUAL_FATAL(pl_world_run_traced(4, NULL, 10, t, run_ring, &l, err, sizeof err), 0);
    static pl_event buf[4096];
    size_t n = pl_trace_drain(t, buf, 4096);
    size_t steps = 0;
    int seen[4][8] = {{0}}; /* [receiver][step]: segment + 1 */
    for (size_t i = 0; i < n; i++)
        if (buf[i].kind == PL_EV_RING_STEP && strstr(buf[i].label, "chunk 1 step") == NULL) {
            const char *s = strstr(buf[i].label, "step ");
            int k = s ? atoi(s + 5) : 0;
            if (strstr(buf[i].label, "chunk")) continue;
            CU_ASSERT(buf[i].chunk >= 1 && buf[i].chunk <= 4);
            CU_ASSERT_EQUAL(buf[i].peer, (buf[i].rank + 3) % 4);
            if (k >= 1 && k <= 6) seen[buf[i].rank][k - 1] = buf[i].chunk;
            steps++;
        }
    CU_ASSERT_EQUAL(steps, 4 * 6);
    for (int k = 0; k < 6; k++) {
        int mask = 0;
        for (int b = 0; b < 4; b++) mask |= seen[b][k] ? 1 << (seen[b][k] - 1) : 0;
        CU_ASSERT_EQUAL(mask, 15);
    }
    pl_trace_destroy(t);
}

/* Lab 07: a backward of three layers (L2 100 B, L1 300 B, L0 100 B of
 * gradients) and four buckets (100, 200, 100, 100 B) all-reduced one after
 * the other: each fills while its layer runs, waits, is all-reduced. */
/* The model's caches (viz_lane_busy's sweep with its checkpoints, the
 * collectives' places, rank 0's collectives, the pipeline round) against
 * the same computed from scratch, as events arrive out of order: some land
 * thousands of places back (before the last sweep's checkpoints), between
 * frames that ask. */
static double busy_by_hand(const viz_lane *L, int c)
{
    double covered = -1e300, busy = 0;
    for (size_t i = 0; i < L->n; i++) {
        const pl_event *e = &L->ev[i];
        if (e->kind == PL_EV_COLLECTIVE || e->kind == PL_EV_RING_STEP) continue;
        double a = viz_ev_start(e, c), b = viz_ev_end(e, c);
        if (b > covered) {
            busy += b - (a > covered ? a : covered);
            covered = b;
        }
    }
    return busy;
}

static void test_model_caches(void)
{
    viz_model m;
    viz_model_init(&m, 2);
    unsigned long long x = 99;
    int bad_busy = 0, bad_coll = 0, asked = 0;
    for (int i = 0; i < 12000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        pl_event e;
        memset(&e, 0, sizeof e);
        e.rank = (int)(x >> 60) & 1;
        e.lane = (uint8_t)((x >> 50) % 3);
        e.kind = (uint8_t)(e.lane == PL_LANE_COMM
                               ? ((x >> 40) % 4 == 0 ? PL_EV_COLLECTIVE : PL_EV_RING_STEP)
                           : e.lane == PL_LANE_COPY ? PL_EV_COPY
                                                    : PL_EV_KERNEL);
        e.micro_batch = e.layer = e.peer = -1;
        /* mostly in order; one in 50 lands up to 3000 us back */
        double t = i * 1e-6 - ((x >> 20) % 50 == 0 ? (double)((x >> 8) % 3000) * 1e-6 : 0);
        e.start = t;
        e.end = t + (double)((x >> 30) % 5) * 1e-6;
        e.modeled_start = 2 * t;
        e.modeled_end = 2 * e.end + 1e-7;
        e.bytes = (x >> 12) % 3 ? 4096 : 4;
        snprintf(e.label, sizeof e.label, "all_reduce");
        CU_ASSERT_EQUAL_FATAL(viz_model_add(&m, &e), 0);
        if (i % 997 == 0 || i == 11999) { /* a frame asks */
            asked++;
            for (int r = 0; r < 2; r++)
                for (int l = 0; l < PL_NUM_LANES; l++)
                    for (int c = 0; c < 2; c++) {
                        const viz_lane *L = &m.lanes[r][l];
                        double got = viz_lane_busy(L, c), want = busy_by_hand(L, c);
                        if (fabs(got - want) > 1e-9 * (want > 1 ? want : 1)) bad_busy++;
                        size_t k = 0;
                        for (size_t j = 0; j < L->n; j++)
                            if (L->ev[j].kind == PL_EV_COLLECTIVE)
                                bad_coll += k >= L->ncoll || L->coll[k++] != j;
                        bad_coll += k != L->ncoll;
                    }
        }
    }
    CU_ASSERT_EQUAL(bad_busy, 0);
    CU_ASSERT_EQUAL(bad_coll, 0);
    CU_ASSERT(asked >= 12);
    CU_ASSERT(m.lanes[0][PL_LANE_COMPUTE].nck > 1); /* checkpoints were made */
    /* rank 0's collectives: bytes, count, time and the latest large one */
    double bytes = 0, secs = 0, latest = -1e300;
    size_t calls = 0;
    for (int l = 0; l < PL_NUM_LANES; l++)
        for (size_t j = 0; j < m.lanes[0][l].n; j++) {
            const pl_event *e = &m.lanes[0][l].ev[j];
            if (e->kind != PL_EV_COLLECTIVE) continue;
            bytes += (double)e->bytes;
            secs += e->modeled_end - e->modeled_start;
            calls++;
            if (e->bytes > VIZ_TINY_COLL && e->modeled_start > latest) latest = e->modeled_start;
        }
    CU_ASSERT(calls > 100);
    CU_ASSERT_EQUAL(m.colls.calls, calls);
    CU_ASSERT_DOUBLE_EQUAL(m.colls.bytes, bytes, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(m.colls.secs[1], secs, 1e-9);
    CU_ASSERT(m.colls.have_last[1]);
    CU_ASSERT_DOUBLE_EQUAL(m.colls.last[1].modeled_start, latest, 0);
    viz_model_free(&m);
}

static void test_buckets(void)
{
    viz_model m;
    viz_model_init(&m, 1);
    pl_event bw = ev(0, PL_LANE_COMPUTE, PL_EV_BACKWARD, 0, 4, -1, -1, "backward");
    pl_event l2 = ev(0, PL_LANE_COMPUTE, PL_EV_BACKWARD, 0, 1, -1, 2, "backward L2");
    pl_event l1 = ev(0, PL_LANE_COMPUTE, PL_EV_BACKWARD, 1, 3, -1, 1, "backward L1");
    pl_event l0 = ev(0, PL_LANE_COMPUTE, PL_EV_BACKWARD, 3, 4, -1, 0, "backward L0");
    pl_event op = ev(0, PL_LANE_COMPUTE, PL_EV_OPTIMIZER, 8, 9, -1, -1, "optimizer");
    l2.bytes = 100, l1.bytes = 300, l0.bytes = 100;
    pl_event c[4] = {comm_ev(0, PL_EV_COLLECTIVE, 1, 2, "all_reduce", -1, 0),
                     comm_ev(0, PL_EV_COLLECTIVE, 3, 5, "all_reduce", -1, 0),
                     comm_ev(0, PL_EV_COLLECTIVE, 5, 6, "all_reduce", -1, 0),
                     comm_ev(0, PL_EV_COLLECTIVE, 6, 8, "all_reduce", -1, 0)};
    c[0].bytes = 100, c[1].bytes = 200, c[2].bytes = 100, c[3].bytes = 2048;
    pl_event *all[] = {&bw, &l2, &l1, &l0, &c[0], &c[1], &c[2], &c[3], &op};
    for (int i = 0; i < 9; i++) viz_model_add(&m, all[i]);
    viz_grid g = {0};
    g.utf8 = 0;
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 27, 8), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 1;
    v.t_end = 9;
    v.span = 9;
    pl_rect r = {0, 0, 27, 8};
    viz_render_pane(&g, PL_PANE_TOPOLOGY, r, &m, &v);
    char L[8][96];
    pane_lines(&g, r, L);
    /* 16 cells of 0.5 s (0 to 8 s) after the 9 of the label */
    static const char *want[8] = {
        "+ topology ---------------+", "|< fill : wait ~ reduce   |", "|backward <<<<<<<<........|",
        "|b1  100B <<~~............|", "|b2  200B <<<<<<~~~~......|", "|b3  100B <<<<<<::::~~....|",
        "|b4    2K <<<<<<<<::::~~~~|", "+-------------------------+",
    };
    for (int y = 0; y < 8; y++) {
        if (strcmp(L[y], want[y])) printf("\n  row %d: '%s'", y, L[y]);
        CU_ASSERT_STRING_EQUAL(L[y], want[y]);
    }
    /* a run with a pane of its own for its communication (here: shards)
     * keeps the ring and links (a pane this small: the list alone) */
    m.nmatrices = 1;
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_TOPOLOGY, r, &m, &v);
    pane_lines(&g, r, L);
    CU_ASSERT_STRING_EQUAL(L[1], "|no bytes moved yet       |");
    m.nmatrices = 0;
    viz_grid_free(&g);
    viz_model_free(&m);
}

int register_viz_suite(void)
{
    static const unit_test t[] = {
        {"layout: every size to 1x1, 0..64 devices, no overlap", test_layout_everywhere},
        {"pipeline pane: an exact GPipe schedule and its bubble", test_pipeline_gpipe},
        {"pipeline pane: no bubble figure from an iteration still running; the last "
         "complete one's, named",
         test_pipeline_partial_iteration},
        {"timeline pane: a row of kernels and micro-batches", test_timeline_row},
        {"topology pane: a ring all-reduce's bytes per link", test_topology_ring_bytes},
        {"ASCII twins; too small a screen says what it needs", test_ascii_and_too_small},
        {"narration: line breaks and wrapping", test_narration_lines},
        {"timeline: a lane per CUDA stream", test_stream_lanes},
        {"metrics: busy time, a union of a lane's events", test_busy_time},
        {"metrics: the loss per epoch on a stated scale; the whole run",
         test_metrics_loss_per_epoch},
        {"metrics: a loss far below the scale still draws the lowest glyph (Lab 07)",
         test_metrics_small_values},
        {"metrics: \"last:\" skips a 4-byte bookkeeping all-reduce (Lab 06 step 8)",
         test_metrics_last_skips_tiny},
        {"header: fields shortened or dropped whole, the help key kept (80 columns and less)",
         test_header_fields_whole},
        {"metrics: a line too narrow drops whole items, then an ellipsis; never a number cut",
         test_metrics_items_whole},
        {"layout: the narration grows for a step with more to say", test_layout_narration_grows},
        {"timeline: a glyph per kind without colour; the legend", test_timeline_glyphs_legend},
        {"topology: every link's bytes at 4, 8, 64 ranks; scrolled", test_topology_every_link},
        {"narration: the transcript, scrolled back and down", test_narration_scroll},
        {"traces read back; truncated, corrupt, missing", test_read_trace},
        {"replay: the cursor (which items, when; space; the end)", test_replay_cursor},
        {"replay: the plan (events and metrics by step)", test_replay_plan},
        {"replay: the narration, metrics and streams read back", test_replay_reads_notes},
        {"paralab-viz --check: slices that do not nest", test_check_trace},
        {"one stream: a rank's metrics and device memory reach the model, the file, the replay",
         test_one_stream_metrics_and_memory},
        {"timeline: one stream against chunks, each step from its start (Lab 05)",
         test_stream_compare},
        {"timeline: chunks slower than one stream say 'slower than' (Lab 05)",
         test_stream_compare_slower},
        {"topology: a ring all-reduce's steps, the segment on each link (Lab 06)",
         test_ring_steps_table},
        {"the engine's ring records each step's segment", test_ring_steps_recorded},
        {"topology: gradient buckets filling in backward, then all-reduced (Lab 07)", test_buckets},
        {"the model's caches equal the whole computed again, events out of order",
         test_model_caches},
    };
    /* and the shards pane's own suite (test_shards.c), with it */
    return UNIT_SUITE("viz", t) || register_shards_suite() || register_pipeline_pane_suite() ||
           register_mesh_pane_suite() || register_memory_pane_suite();
}
