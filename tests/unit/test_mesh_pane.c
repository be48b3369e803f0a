/*
 * test_mesh_pane.c — the mesh pane (viz/mesh.c) of a hybrid lab (Lab 10)
 * drawn into the cell grid from synthetic events: a 2 x 2 x 2 mesh in both
 * rank orders, every rank number in the cell of its (dp, pp, tp) (a box per
 * DP replica, a row per stage, a column per TP rank), the cells a TP, a DP
 * and a PP event light (reversed, their group's letter beside them, in
 * the group's colour) and the legend's "(now)"; the newest event wins,
 * one that starts after the time the view shows does not (no peeking
 * ahead), and events without a group or off the comm lane light nothing;
 * dp = 8 folded at 80 columns (in the layout's pane) and at 200; the
 * descriptions pl_viz_check_mesh refuses; the timeline's comm events in
 * their group's letter and colour with the group legend (none without
 * groups); the pipeline pane of a hybrid run drawing each stage from its
 * stage rank; and the trace round trip of args.group, the "paralab mesh"
 * metadata and the pipeline's stage_ranks, with a bad group refused by
 * name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../viz/vizint.h"
#include "grid_text.h"
#include "paralab/trace.h"
#include "paralab/viz.h"
#include "suites.h"

/* The panes Lab 10 shows (the harness adds devices, timeline, metrics). */
#define LAB10_PANES                                                                                \
    (PL_PANE_BIT(PL_PANE_DEVICES) | PL_PANE_BIT(PL_PANE_TIMELINE) | PL_PANE_BIT(PL_PANE_MESH) |    \
     PL_PANE_BIT(PL_PANE_PIPELINE) | PL_PANE_BIT(PL_PANE_METRICS))

/* A communication event of `rank` on the comm lane, [s, e] on both clocks. */
static pl_event comm_ev(int kind, int rank, int group, double s, double e, const char *label)
{
    pl_event x;
    memset(&x, 0, sizeof x);
    x.rank = rank;
    x.lane = PL_LANE_COMM;
    x.kind = (uint8_t)kind;
    x.group = (uint8_t)group;
    x.micro_batch = x.layer = x.peer = -1;
    x.start = x.modeled_start = s;
    x.end = x.modeled_end = e;
    snprintf(x.label, sizeof x.label, "%s", label);
    return x;
}

static void add(viz_model *m, pl_event e) { CU_ASSERT_EQUAL(viz_model_add(m, &e), 0); }

/* Rows y0.. of g from x equal want[0 .. n-1], each; a mismatch printed. */
static void check_rows(const viz_grid *g, int x, int y0, const char *const *want, int n)
{
    char row[512];
    for (int y = 0; y < n; y++) {
        row_text(g, y0 + y, x, (int)strlen(want[y]), row, sizeof row);
        /* the UTF-8 rows are longer in bytes than in cells: compare the cells' text */
        CU_ASSERT_STRING_EQUAL(row, want[y]);
        if (strcmp(row, want[y]))
            fprintf(stderr, "  row %d: got  '%s'\n         want '%s'\n", y0 + y, row, want[y]);
    }
}

static void dump(const viz_grid *g)
{
    if (!getenv("MESH_DUMP")) return;
    char *t = viz_grid_text(g);
    fprintf(stderr, "\n%s", t);
    free(t);
}

static void mesh_model(viz_model *m, int dp, int tp, int pp, const char *order)
{
    char err[256];
    pl_viz_mesh mesh = {dp, tp, pp, order};
    viz_model_init(m, dp * tp * pp);
    CU_ASSERT_EQUAL_FATAL(viz_model_set_mesh(m, &mesh, err, sizeof err), 0);
}

/* The pane r drawn at time t (the view's end) on an ASCII grid. */
static void draw(viz_grid *g, const viz_model *m, pl_rect r, double t)
{
    viz_view v;
    memset(&v, 0, sizeof v);
    v.modeled = 1;
    v.t_end = t;
    v.span = t > 0 ? t : 1;
    viz_grid_clear(g);
    viz_render_pane(g, PL_PANE_MESH, r, m, &v);
    dump(g);
}

/* The groups rank 0 sent on in the current narrated step, not only the newest: step 3 a TP
 * all-reduce; step 4 (Lab 10's DP reduction) a DP all-reduce at t = 1 with its ring step, a
 * PP send at 2 (its receive on rank 4 not counted), a PP all-reduce at 3, and rank 1's TP
 * all-reduce (not rank 0's). At t = 3.5 the "now" line names the PP group (the newest), the
 * step line every group's count; at t = 1.5 the DP one alone; in step 3 the TP one. */
static void test_mesh_step_ops(void)
{
    viz_model m;
    mesh_model(&m, 2, 2, 2, "megatron");
    pl_event e = comm_ev(PL_EV_COLLECTIVE, 0, PL_GROUP_TP, 0.5, 0.6, "all_reduce");
    e.step = 3;
    add(&m, e);
    static const struct {
        int kind, rank, group;
        double s;
        const char *label;
    } ev[] = {{PL_EV_COLLECTIVE, 0, PL_GROUP_DP, 1, "all_reduce bucket 0"},
              {PL_EV_RING_STEP, 0, PL_GROUP_DP, 1.1, "all_reduce step 1"},
              {PL_EV_SEND, 0, PL_GROUP_PP, 2, "send"},
              {PL_EV_RECV, 4, PL_GROUP_PP, 2, "recv"},
              {PL_EV_COLLECTIVE, 0, PL_GROUP_PP, 3, "all_reduce"},
              {PL_EV_COLLECTIVE, 1, PL_GROUP_TP, 3, "all_reduce"}};
    for (size_t i = 0; i < sizeof ev / sizeof *ev; i++) {
        e = comm_ev(ev[i].kind, ev[i].rank, ev[i].group, ev[i].s, ev[i].s + 0.05, ev[i].label);
        e.step = 4;
        add(&m, e);
    }
    int ops[PL_NUM_GROUPS];
    CU_ASSERT_EQUAL(viz_mesh_step_ops(&m, 4, 3.5, 1, ops), 1);
    CU_ASSERT(ops[PL_GROUP_TP] == 0 && ops[PL_GROUP_DP] == 1 && ops[PL_GROUP_PP] == 2);
    CU_ASSERT_EQUAL(viz_mesh_step_ops(&m, 4, 1.5, 1, ops), 1);
    CU_ASSERT(ops[PL_GROUP_TP] == 0 && ops[PL_GROUP_DP] == 1 && ops[PL_GROUP_PP] == 0);
    CU_ASSERT_EQUAL(viz_mesh_step_ops(&m, 3, 3.5, 1, ops), 1);
    CU_ASSERT(ops[PL_GROUP_TP] == 1 && ops[PL_GROUP_DP] == 0 && ops[PL_GROUP_PP] == 0);
    CU_ASSERT_EQUAL(viz_mesh_step_ops(&m, 5, 3.5, 1, ops), 0);
    CU_ASSERT_EQUAL(viz_mesh_step_ops(&m, 0, 3.5, 1, ops), 0);
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 40, 10), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.modeled = 1;
    v.t_end = 3.5;
    v.span = 3.5;
    v.step = 4;
    viz_render_pane(&g, PL_PANE_MESH, (pl_rect){0, 0, 40, 10}, &m, &v);
    dump(&g);
    char row[256];
    row_text(&g, 6, 0, 40, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "|now: PP group {0 4} all_reduce        |");
    row_text(&g, 7, 0, 40, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "|[4] r0 sent: t 0 d 1 p 2              |");
    /* the counts in their groups' colours, bold; a zero dim */
    CU_ASSERT(cell(&g, 18, 7)->ch == 'd' && cell(&g, 18, 7)->fg == COL_GROUP_DP &&
              cell(&g, 18, 7)->attr == ATTR_BOLD);
    CU_ASSERT(cell(&g, 14, 7)->ch == 't' && cell(&g, 14, 7)->fg == COL_DIM);
    /* wide: the words say what is counted */
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 60, 10), 0);
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_MESH, (pl_rect){0, 0, 60, 10}, &m, &v);
    row_text(&g, 7, 0, 60, row, sizeof row);
    dump(&g);
    CU_ASSERT_STRING_EQUAL(row, "|[4] r0 sent: t 0 d 1 p 2 (collectives, sends)             |");
    /* step 0 (none yet): no such line */
    v.step = 0;
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_MESH, (pl_rect){0, 0, 60, 10}, &m, &v);
    row_text(&g, 7, 0, 60, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "|                                                          |");
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* 2 x 2 x 2, Megatron's order: rank = tp + 2 (dp + 2 pp). Replica dp 0
 * holds 0 1 (pp 0) and 4 5 (pp 1), dp 1 holds 2 3 and 6 7. */
static void test_mesh_megatron_cells(void)
{
    viz_model m;
    mesh_model(&m, 2, 2, 2, "megatron");
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 40, 9), 0);
    draw(&g, &m, (pl_rect){0, 0, 40, 9}, 1);
    /* clang-format off */
    static const char *want[] = {
        "+ mesh dp2 pp2 tp2 megatron -----------+",
        "|    + dp 0 + + dp 1 +                 |",
        "|pp0 | 0  1 | | 2  3 |                 |",
        "|pp1 | 4  5 | | 6  7 |                 |",
        "|    +------+ +------+                 |",
        "|t TP group  d DP group  p PP group    |",
        "|now: no group communicating           |",
        "|                                      |",
        "+--------------------------------------+",
    };
    /* clang-format on */
    check_rows(&g, 0, 0, want, 9);
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* The cells lit at t: lit[] as a list "4t 5t" (rank and letter). */
static void lit_list(const viz_model *m, double t, char *out, size_t cap)
{
    unsigned char lit[PL_MAX_RANKS];
    viz_mesh_lit(m, t, 1, lit);
    size_t n = 0;
    out[0] = '\0';
    for (int r = 0; r < PL_MAX_RANKS && n + 8 < cap; r++)
        if (lit[r])
            n += (size_t)snprintf(out + n, cap - n, "%s%d%c", n ? " " : "", r,
                                  viz_group_letter(lit[r]));
}

/* One event of each group, at t = 1, 2, 3: TP on rank 5, DP on rank 1, PP
 * on rank 2; the group lit at each time in both orders. */
static void test_mesh_lit_groups(void)
{
    static const struct {
        const char *order;
        const char *want[4]; /* at t = 0.5, 1.5, 2.5, 3.5 */
    } c[] = {
        /* megatron: TP {4,5}, DP of 1 {1,3}, PP of 2 {2,6} */
        {"megatron", {"", "4t 5t", "1d 3d", "2p 6p"}},
        /* picotron (rank = tp + 2 (pp + 2 dp)): TP {4,5}, DP of 1 {1,5}, PP of 2 {0,2} */
        {"picotron", {"", "4t 5t", "1d 5d", "0p 2p"}},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        viz_model m;
        mesh_model(&m, 2, 2, 2, c[i].order);
        add(&m, comm_ev(PL_EV_COLLECTIVE, 5, PL_GROUP_TP, 1, 1.2, "all_reduce"));
        add(&m, comm_ev(PL_EV_RING_STEP, 1, PL_GROUP_DP, 2, 2.2, "reduce_scatter 0"));
        add(&m, comm_ev(PL_EV_SEND, 2, PL_GROUP_PP, 3, 3.2, "send"));
        for (int k = 0; k < 4; k++) {
            char got[256];
            lit_list(&m, 0.5 + k, got, sizeof got);
            CU_ASSERT_STRING_EQUAL(got, c[i].want[k]);
            if (strcmp(got, c[i].want[k]))
                fprintf(stderr, "  %s at %g: lit '%s', want '%s'\n", c[i].order, 0.5 + k, got,
                        c[i].want[k]);
        }
        viz_model_free(&m);
    }
}

/* The lit cells drawn: reversed, the group's letter beside them, in the
 * group's colour; the others in their rank's colour, plain; the legend's
 * active group reversed with "(now)", and the line under it naming the
 * members and the event. Picotron, a DP event of rank 1: DP group {1, 5}. */
static void test_mesh_drawn_lit(void)
{
    viz_model m;
    mesh_model(&m, 2, 2, 2, "picotron");
    add(&m, comm_ev(PL_EV_COLLECTIVE, 1, PL_GROUP_DP, 1, 2, "all_reduce bucket 0"));
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 40, 9), 0);
    draw(&g, &m, (pl_rect){0, 0, 40, 9}, 1.5);
    /* picotron: dp 0 holds 0 1 (pp 0), 2 3 (pp 1); dp 1 holds 4 5, 6 7 */
    /* clang-format off */
    static const char *want[] = {
        "+ mesh dp2 pp2 tp2 picotron -----------+",
        "|    + dp 0 + + dp 1 +                 |",
        "|pp0 | 0  1d| | 4  5d|                 |",
        "|pp1 | 2  3 | | 6  7 |                 |",
        "|    +------+ +------+                 |",
        "|t TP group  d DP group  p PP group    |",
        "|now: DP {1 5} all_reduce bucket 0     |", /* "DP" for "DP group": one row */
        "|                                      |",
        "+--------------------------------------+",
    };
    /* clang-format on */
    check_rows(&g, 0, 0, want, 9);
    /* a label too long for a row even so: wrapped, not cut at the edge; one row fewer, no
     * row to wrap onto: the line says it goes on */
    {
        viz_model m2;
        mesh_model(&m2, 2, 2, 2, "picotron");
        add(&m2, comm_ev(PL_EV_COLLECTIVE, 1, PL_GROUP_DP, 1, 2, "reduce_scatter bucket 3 of 4"));
        viz_grid g2 = {0};
        CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g2, 40, 9), 0);
        draw(&g2, &m2, (pl_rect){0, 0, 40, 9}, 1.5);
        static const char *want2[] = {"|now: DP group {1 5} reduce_scatter    |",
                                      "|bucket 3 of 4                         |"};
        check_rows(&g2, 0, 6, want2, 2);
        CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g2, 40, 8), 0);
        draw(&g2, &m2, (pl_rect){0, 0, 40, 8}, 1.5);
        static const char *want3[] = {"|now: DP group {1 5} reduce_scatter... |"};
        check_rows(&g2, 0, 6, want3, 1);
        viz_grid_free(&g2);
        viz_model_free(&m2);
    }
    /* rank 1 at (10, 2), rank 5 at (19, 2): lit; 0 at (7, 2), 4 at (16, 2), 3 at (10, 3): not */
    static const struct {
        int x, y, lit, rank;
    } k[] = {{10, 2, 1, 1}, {19, 2, 1, 5}, {7, 2, 0, 0}, {16, 2, 0, 4}, {10, 3, 0, 3}};
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        const viz_cell *c = cell(&g, k[i].x, k[i].y);
        CU_ASSERT_EQUAL(c->ch, (uint32_t)('0' + k[i].rank));
        if (k[i].lit) {
            CU_ASSERT(c->attr & ATTR_REVERSE);
            CU_ASSERT_EQUAL(c->fg, COL_GROUP_DP);
            CU_ASSERT_EQUAL(cell(&g, k[i].x + 1, k[i].y)->ch, 'd');
            CU_ASSERT_EQUAL(cell(&g, k[i].x + 1, k[i].y)->fg, COL_GROUP_DP);
        } else {
            CU_ASSERT_EQUAL(c->attr, 0);
            CU_ASSERT_EQUAL(c->fg, COL_RANK0 + k[i].rank % 8);
            CU_ASSERT_EQUAL(cell(&g, k[i].x + 1, k[i].y)->ch, ' ');
        }
    }
    /* the legend: "d DP group" reversed in DP's colour (its "(now)" does not
     * fit), TP's and PP's plain */
    CU_ASSERT(cell(&g, 13, 5)->attr & ATTR_REVERSE);
    CU_ASSERT_EQUAL(cell(&g, 13, 5)->fg, COL_GROUP_DP);
    CU_ASSERT_EQUAL(cell(&g, 1, 5)->attr, 0);
    CU_ASSERT_EQUAL(cell(&g, 1, 5)->fg, COL_GROUP_TP);
    CU_ASSERT_EQUAL(cell(&g, 25, 5)->attr, 0);
    CU_ASSERT_EQUAL(cell(&g, 25, 5)->fg, COL_GROUP_PP);
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* The whole screen of Lab 10 at w x h, for a mesh dp x tp x pp (megatron)
 * with a TP event on rank 0 at t = 1: where the layout puts the mesh pane,
 * drawn; *r its rectangle. */
static void lab10_screen(viz_grid *g, int w, int h, int dp, int tp, int pp, pl_rect *r)
{
    viz_model m;
    mesh_model(&m, dp, tp, pp, "megatron");
    add(&m, comm_ev(PL_EV_COLLECTIVE, 0, PL_GROUP_TP, 1, 2, "all_reduce"));
    pl_layout L;
    pl_viz_layout_stages(w, h, dp * tp * pp, pp, LAB10_PANES, 0, &L);
    CU_ASSERT_FATAL(L.ok);
    *r = L.pane[PL_PANE_MESH];
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(g, w, h), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.modeled = 1;
    v.t_end = 1.5;
    v.span = 1.5;
    v.ndev = dp * tp * pp;
    viz_grid_clear(g);
    viz_render(g, &L, &m, &v);
    dump(g);
    viz_model_free(&m);
}

/* dp = 8 at 80x24 (Lab 10's layout, one stage): the boxes do not fit the
 * 36-column pane, so the replicas fold into columns between bars, 7 and
 * then 1, every rank (= its dp) in its column; the group legend whole. At
 * 200x50 a box each, 6 and then 2. A 2 x 2 x 2 mesh at 80x24: a box each. */
static void test_mesh_fold(void)
{
    viz_grid g = {0};
    pl_rect r;
    lab10_screen(&g, 80, 24, 8, 1, 1, &r);
    CU_ASSERT(r.x == 0 && r.y == 13 && r.w == 36 && r.h == 7);
    /* clang-format off */
    static const char *fold80[] = {
        "+ mesh dp8 pp1 tp1 megatron -------+",
        "|     dp0 dp1 dp2 dp3 dp4 dp5 dp6  |",
        "|pp0 | 0t| 1 | 2 | 3 | 4 | 5 | 6 | |",
        "|     dp7                          |",
        "|pp0 | 7 |                         |",
        "|t TP group  d DP group  p PP group|",
        "+----------------------------------+",
    };
    /* clang-format on */
    check_rows(&g, r.x, r.y, fold80, 7);
    lab10_screen(&g, 200, 50, 8, 1, 1, &r);
    CU_ASSERT(r.x == 0 && r.w == 60);
    /* clang-format off */
    static const char *fold200[] = {
        "+ mesh dp8 pp1 tp1 megatron -------------------------------+",
        "|    + dp 0 + + dp 1 + + dp 2 + + dp 3 + + dp 4 + + dp 5 + |",
        "|pp0 | 0t   | | 1    | | 2    | | 3    | | 4    | | 5    | |",
        "|    +------+ +------+ +------+ +------+ +------+ +------+ |",
        "|    + dp 6 + + dp 7 +                                     |",
        "|pp0 | 6    | | 7    |                                     |",
        "|    +------+ +------+                                     |",
        "|t TP group (now)  d DP group  p PP group                  |",
        "|now: TP group {0} all_reduce                              |",
    };
    /* clang-format on */
    check_rows(&g, r.x, r.y, fold200, 9);
    lab10_screen(&g, 80, 24, 2, 2, 2, &r);
    CU_ASSERT(r.x == 0 && r.w == 36 && r.h == 7);
    /* clang-format off */
    static const char *cube80[] = {
        "+ mesh dp2 pp2 tp2 megatron -------+",
        "|    + dp 0 + + dp 1 +             |",
        "|pp0 | 0t 1t| | 2  3 |             |",
        "|pp1 | 4  5 | | 6  7 |             |",
        "|    +------+ +------+             |",
        "|t TP group  d DP group  p PP group|",
        "+----------------------------------+",
    };
    /* clang-format on */
    check_rows(&g, r.x, r.y, cube80, 7);
    viz_grid_free(&g);
}

/* More replicas than fit, boxed and folded: the ones left out counted
 * ("+N") where no stage's label is. dp 16 x tp 1 x pp 2 in 36 x 9 (folded:
 * 5 a row, 2 rows, 6 left out; two-digit ranks); dp 4 x tp 4 x pp 1 in
 * 30 x 6 (boxed: 1 of 4, folding would show no more; the short legend). */
static void test_mesh_left_out(void)
{
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 36, 9), 0);
    viz_model m;
    mesh_model(&m, 16, 1, 2, "megatron");
    draw(&g, &m, (pl_rect){0, 0, 36, 9}, 1);
    /* clang-format off */
    static const char *folded[] = {
        "+ mesh dp16 pp2 tp1 megatron ------+",
        "|     dp0  dp1  dp2  dp3  dp4      |",
        "|pp0 |  0 |  1 |  2 |  3 |  4 |    |",
        "|pp1 | 16 | 17 | 18 | 19 | 20 |    |",
        "|+6   dp5  dp6  dp7  dp8  dp9      |",
        "|pp0 |  5 |  6 |  7 |  8 |  9 |    |",
        "|pp1 | 21 | 22 | 23 | 24 | 25 |    |",
        "|t TP group  d DP group  p PP group|",
    };
    /* clang-format on */
    check_rows(&g, 0, 0, folded, 8);
    viz_model_free(&m);
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 30, 6), 0);
    mesh_model(&m, 4, 4, 1, "megatron");
    draw(&g, &m, (pl_rect){0, 0, 30, 6}, 1);
    /* clang-format off */
    static const char *boxed[] = {
        "+ mesh dp4 pp1 tp4 megatron -+",
        "|    + dp 0 ----------+      |",
        "|pp0 |  0   1   2   3 |      |",
        "|+3  +----------------+      |",
        "|t TP  d DP  p PP            |",
    };
    /* clang-format on */
    check_rows(&g, 0, 0, boxed, 5);
    viz_model_free(&m);
    viz_grid_free(&g);
}

/* The rank of (d, s, t) by the formulas of paralab/mesh.h, written out. */
static int formula(const char *order, int D, int T, int P, int d, int s, int t)
{
    (void)D;
    return !strcmp(order, "megatron") ? t + T * (d + D * s) : t + T * (s + P * d);
}

/* Every factorisation of 8 and of 12 ranks, both orders, boxed (120x30)
 * and in a short pane (60x8: folded where the boxes do not fit, replicas
 * left out where nothing fits them all): the number at each rank's
 * cell is that rank; the cells of (d, s, t) sit in replica d's place, row
 * s, column t (t cell widths right of tp 0), replicas left to right, then
 * down; every rank drawn exactly once. */
static void test_mesh_every_cell(void)
{
    static const char *orders[] = {"megatron", "picotron"};
    static const pl_rect rects[] = {{0, 0, 120, 30}, {0, 0, 60, 8}};
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 120, 30), 0);
    long bad = 0, cells = 0, compact = 0, all = 0;
    for (int n = 8; n <= 12; n += 4)
        for (int D = 1; D <= n; D++)
            for (int T = 1; T <= n / D; T++) {
                if (n % (D * T)) continue;
                int P = n / (D * T);
                for (int o = 0; o < 2; o++)
                    for (int k = 0; k < 2; k++) {
                        viz_model m;
                        mesh_model(&m, D, T, P, orders[o]);
                        draw(&g, &m, rects[k], 1);
                        pl_rect in = {rects[k].x + 1, rects[k].y + 1, rects[k].w - 2,
                                      rects[k].h - 2};
                        viz_mesh_layout L;
                        viz_mesh_geometry(&m, in, &L);
                        if (k == 0 && L.shown != D) bad++; /* the big pane fits them all */
                        compact += L.compact;
                        all += L.shown == D;
                        int drawn[PL_MAX_RANKS] = {0}, px = -1, py = -1;
                        for (int d = 0; d < L.shown; d++) {
                            int x0, y0;
                            if (viz_mesh_cell(&m, &L, formula(orders[o], D, T, P, d, 0, 0), &x0,
                                              &y0)) {
                                bad++;
                                continue;
                            }
                            if (!(y0 > py || (y0 == py && x0 > px))) bad++; /* reading order */
                            px = x0;
                            py = y0;
                            for (int s = 0; s < P; s++)
                                for (int t = 0; t < T; t++) {
                                    int rk = formula(orders[o], D, T, P, d, s, t), x, y;
                                    cells++;
                                    if (viz_mesh_cell(&m, &L, rk, &x, &y) ||
                                        x != x0 + t * L.cell_w || y != y0 + s) {
                                        bad++;
                                        continue;
                                    }
                                    char want[8], got[8];
                                    snprintf(want, sizeof want, "%*d", L.nd, rk);
                                    row_text(&g, y, x, L.nd, got, sizeof got);
                                    if (strcmp(got, want)) {
                                        bad++;
                                        fprintf(stderr, "  %dx%dx%d %s: rank %d shows '%s'\n", D, T,
                                                P, orders[o], rk, got);
                                    }
                                    drawn[rk]++;
                                }
                        }
                        for (int rk = 0; rk < n && L.shown == D; rk++) bad += drawn[rk] != 1;
                        viz_model_free(&m);
                    }
            }
    CU_ASSERT_EQUAL(bad, 0);
    /* 10 factorisations of 8, 18 of 12, 2 orders, 2 panes; the short pane (6
     * rows inside) has no room for a stage's column of 6, 8 or 12 (1x1x8,
     * 2x1x6, 1x2x6, 1x1x12: 8 cases, 88 cells), and folds 18 cases */
    CU_ASSERT_EQUAL(all, 2 * 2 * (10 + 18) - 8);
    CU_ASSERT_EQUAL(compact, 18);
    CU_ASSERT_EQUAL(cells, 2 * 2 * (10 * 8 + 18 * 12) - 88);
    viz_grid_free(&g);
}

/* Which event lights: the newest that started by the view's time, on the
 * view's clock; one that starts later is not used (a replay shows only
 * what happened by then), nor one without a group, nor a group's event
 * that is not communication (a compute-lane event with a group). */
static void test_mesh_active_event(void)
{
    viz_model m;
    mesh_model(&m, 2, 2, 2, "megatron");
    char got[256];
    /* a world (untagged) collective, and a compute event with a group: nothing lit */
    add(&m, comm_ev(PL_EV_COLLECTIVE, 3, PL_GROUP_NONE, 1, 9, "all_reduce"));
    pl_event k = comm_ev(PL_EV_KERNEL, 6, PL_GROUP_PP, 1, 9, "gemm");
    k.lane = PL_LANE_COMPUTE;
    add(&m, k);
    lit_list(&m, 5, got, sizeof got);
    CU_ASSERT_STRING_EQUAL(got, "");
    CU_ASSERT_PTR_NULL(viz_mesh_active(&m, 5, 1));
    /* a long DP all-reduce from t = 1 on rank 7 ({5, 7}); a TP step at 2 on rank 2 ({2, 3});
     * a PP recv at 4 on rank 4 ({0, 4}) */
    add(&m, comm_ev(PL_EV_COLLECTIVE, 7, PL_GROUP_DP, 1, 10, "all_reduce bucket 1"));
    add(&m, comm_ev(PL_EV_RING_STEP, 2, PL_GROUP_TP, 2, 3, "all_gather 0"));
    add(&m, comm_ev(PL_EV_RECV, 4, PL_GROUP_PP, 4, 5, "recv"));
    static const struct {
        double t;
        const char *want;
    } c[] = {{0.9, ""},      {1, "5d 7d"}, {1.5, "5d 7d"}, {2, "2t 3t"},
             {3.9, "2t 3t"}, {4, "0p 4p"}, {20, "0p 4p"}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        lit_list(&m, c[i].t, got, sizeof got);
        CU_ASSERT_STRING_EQUAL(got, c[i].want);
        if (strcmp(got, c[i].want)) fprintf(stderr, "  t %g: '%s'\n", c[i].t, got);
    }
    /* on the modeled clock, which may order them otherwise: the TP step at 0.5 there */
    viz_model_free(&m);
    mesh_model(&m, 2, 2, 2, "megatron");
    pl_event a = comm_ev(PL_EV_COLLECTIVE, 7, PL_GROUP_DP, 1, 10, "all_reduce");
    pl_event b = comm_ev(PL_EV_RING_STEP, 2, PL_GROUP_TP, 2, 3, "all_gather 0");
    b.modeled_start = 0.5;
    b.modeled_end = 0.7;
    add(&m, a);
    add(&m, b);
    unsigned char lit[PL_MAX_RANKS];
    CU_ASSERT_EQUAL(viz_mesh_lit(&m, 1.5, 1, lit), PL_GROUP_DP); /* modeled: DP is newer */
    CU_ASSERT_EQUAL(viz_mesh_lit(&m, 2.5, 0, lit), PL_GROUP_TP); /* measured: TP is */
    CU_ASSERT_EQUAL(viz_mesh_lit(&m, 0.6, 1, lit), PL_GROUP_TP);
    CU_ASSERT(lit[2] == PL_GROUP_TP && lit[3] == PL_GROUP_TP && !lit[7]);
    /* no mesh said: nothing lit, the pane says so */
    viz_model_free(&m);
    viz_model_init(&m, 8);
    add(&m, a);
    CU_ASSERT_EQUAL(viz_mesh_lit(&m, 5, 1, lit), 0);
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 30, 5), 0);
    draw(&g, &m, (pl_rect){0, 0, 30, 5}, 5);
    static const char *none[] = {"+ mesh ----------------------+",
                                 "|no mesh described           |"};
    check_rows(&g, 0, 0, none, 2);
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* Meshes the pane cannot draw: refused naming the values and what is allowed. */
static void test_mesh_refused(void)
{
    static const struct {
        pl_viz_mesh m;
        int nranks;
        const char *want;
    } c[] = {
        {{2, 0, 2, "megatron"},
         8,
         "mesh pane: dp 2, tp 0, pp 2: allowed are degrees of at least 1 each"},
        {{2, 2, 3, "megatron"},
         8,
         "mesh pane: dp x tp x pp = 2 x 2 x 3 = 12 ranks for a world of 8: allowed are degrees "
         "whose product is the world's ranks"},
        {{8, 8, 2, "megatron"},
         0,
         "mesh pane: dp x tp x pp = 8 x 8 x 2 = 128 ranks: allowed are at most 64 ranks "
         "(PL_MAX_RANKS)"},
        {{2, 2, 2, "zigzag"},
         8,
         "mesh pane: order 'zigzag': allowed are megatron (TP fastest, PP outermost) and "
         "picotron (TP fastest, DP outermost)"},
        {{2, 2, 2, NULL},
         8,
         "mesh pane: order '(none)': allowed are megatron (TP fastest, PP outermost) and "
         "picotron (TP fastest, DP outermost)"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char err[256] = "";
        CU_ASSERT_EQUAL(pl_viz_check_mesh(&c[i].m, c[i].nranks, err, sizeof err), -1);
        CU_ASSERT_STRING_EQUAL(err, c[i].want);
        viz_model m;
        viz_model_init(&m, 8);
        /* the model takes a mesh for any number of ranks: only 12 ranks for 8 is drawn */
        int world_only = i == 1;
        CU_ASSERT_EQUAL(viz_model_set_mesh(&m, &c[i].m, err, sizeof err), world_only ? 0 : -1);
        CU_ASSERT_EQUAL(m.mesh.dp, world_only ? 2 : 0); /* else unchanged */
        viz_model_free(&m);
    }
    char err[64];
    pl_viz_mesh ok = {2, 2, 2, "picotron"};
    CU_ASSERT_EQUAL(pl_viz_check_mesh(&ok, 8, err, sizeof err), 0);
    CU_ASSERT_EQUAL(pl_viz_check_mesh(&ok, 0, err, sizeof err), 0);
    CU_ASSERT_EQUAL(pl_viz_check_mesh(NULL, 8, err, sizeof err), 0);
    /* the run refuses it before anything runs */
    pl_viz_config vc = {.title = "t", .mesh = &c[1].m};
    pl_options opt;
    memset(&opt, 0, sizeof opt);
    int quit = 0;
    char rerr[256] = "";
    CU_ASSERT_EQUAL(pl_viz_run_lab(&vc, &opt, 8, NULL, NULL, &quit, rerr, sizeof rerr), 1);
    CU_ASSERT_STRING_EQUAL(rerr, c[1].want);
}

/* The timeline of a hybrid run: each communication in its group's letter
 * and colour (t TP, d DP, p PP), other events as before (a forward's
 * micro-batch, an untagged collective's ':'), and a legend of the groups:
 * in the border when no row is left (before the kinds'), else in a row of
 * its own above the kinds'. */
static void test_timeline_groups(void)
{
    viz_model m;
    viz_model_init(&m, 2);
    pl_event f = comm_ev(PL_EV_FORWARD, 0, PL_GROUP_NONE, 0, 2, "F0");
    f.lane = PL_LANE_COMPUTE;
    f.micro_batch = 0;
    f.layer = 0;
    add(&m, f);
    add(&m, comm_ev(PL_EV_COLLECTIVE, 0, PL_GROUP_TP, 2, 6, "all_reduce"));
    add(&m, comm_ev(PL_EV_RING_STEP, 0, PL_GROUP_TP, 3, 4, "all_reduce step 0"));
    add(&m, comm_ev(PL_EV_SEND, 0, PL_GROUP_PP, 6, 8, "send"));
    add(&m, comm_ev(PL_EV_COLLECTIVE, 1, PL_GROUP_DP, 0, 5, "all_reduce bucket 0"));
    add(&m, comm_ev(PL_EV_COLLECTIVE, 1, PL_GROUP_NONE, 5, 10, "barrier"));
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 2;
    v.t_end = 10;
    v.span = 10;
    v.modeled = 1;
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 48, 5), 0);
    viz_render_pane(&g, PL_PANE_TIMELINE, (pl_rect){0, 0, 48, 5}, &m, &v);
    dump(&g);
    /* 38 cells of 10/38 s, a row per rank: F0 (0..2 s) 8 cells, TP 15 (its step too),
     * PP 7, idle 8; DP 19, the untagged barrier 19 */
    /* clang-format off */
    static const char *small[] = {
        "|r0      00000000tttttttttttttttppppppp........|",
        "|r1      ddddddddddddddddddd:::::::::::::::::::|",
        "|        0 ns                           10.00 s|",
        "+ t TP group  d DP group  p PP group  > fwd ---+",
    };
    /* clang-format on */
    check_rows(&g, 0, 1, small, 4);
    CU_ASSERT_EQUAL(cell(&g, 20, 1)->fg, COL_GROUP_TP);
    CU_ASSERT_EQUAL(cell(&g, 35, 1)->fg, COL_GROUP_PP);
    CU_ASSERT_EQUAL(cell(&g, 10, 2)->fg, COL_GROUP_DP);
    CU_ASSERT_EQUAL(cell(&g, 40, 2)->fg, COL_COMM);
    CU_ASSERT_EQUAL(cell(&g, 2, 4)->fg, COL_GROUP_TP); /* the legend's letters */
    CU_ASSERT_EQUAL(cell(&g, 14, 4)->fg, COL_GROUP_DP);
    /* room: three lanes a rank, the groups' row above the kinds' */
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 60, 11), 0);
    viz_grid_clear(&g);
    viz_render_pane(&g, PL_PANE_TIMELINE, (pl_rect){0, 0, 60, 11}, &m, &v);
    dump(&g);
    char row[256];
    row_text(&g, 7, 1, 58, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "t TP group  d DP group  p PP group                        ");
    row_text(&g, 8, 1, 58, row, sizeof row);
    CU_ASSERT_EQUAL(strncmp(row, "> forward  : collective  . idle", 31), 0);
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* A pipeline op of world rank `rank` on stage `stage`, [s, e] on both clocks. */
static pl_event pp_op(int kind, int rank, int stage, int k, double s, double e)
{
    pl_event x = comm_ev(kind, rank, PL_GROUP_NONE, s, e, kind == PL_EV_FORWARD ? "F" : "B");
    x.lane = PL_LANE_COMPUTE;
    x.micro_batch = k;
    x.layer = stage;
    x.chunk = 0;
    snprintf(x.label, sizeof x.label, "%c%d", kind == PL_EV_FORWARD ? 'F' : 'B', k);
    return x;
}

/* A hybrid run's pipeline pane: 2 stages on 4 ranks (dp 2: stage 0 on
 * ranks 0 and 1, stage 1 on 2 and 3), each rank at its own pace. With the
 * stage ranks {1, 3} each stage is drawn from that rank's ops alone (their
 * span and bubble); unset, from the lowest rank of the stage (0 and 2), as
 * in Lab 09. A stage rank outside the world is refused by name. The
 * layout gives the pane a row per stage, not per device. */
static void test_pipeline_stage_ranks(void)
{
    char err[256];
    for (int set = 0; set < 2; set++) {
        pl_viz_pipeline pp = {2, 1, 1, "gpipe", 0.5, 1.0 / 3, set, {1, 3}};
        viz_model m;
        viz_model_init(&m, 4);
        CU_ASSERT_EQUAL_FATAL(viz_model_set_pipeline(&m, &pp, err, sizeof err), 0);
        /* ranks 0, 2: ops of 1 unit (F at 0 and 1, B at 2 and 3); ranks 1, 3: of 2 units */
        add(&m, pp_op(PL_EV_FORWARD, 0, 0, 0, 0, 1));
        add(&m, pp_op(PL_EV_FORWARD, 2, 1, 0, 1, 2));
        add(&m, pp_op(PL_EV_BACKWARD, 2, 1, 0, 2, 3));
        add(&m, pp_op(PL_EV_BACKWARD, 0, 0, 0, 3, 4));
        add(&m, pp_op(PL_EV_FORWARD, 1, 0, 0, 0, 2));
        add(&m, pp_op(PL_EV_FORWARD, 3, 1, 0, 2, 4));
        add(&m, pp_op(PL_EV_BACKWARD, 3, 1, 0, 4, 6));
        add(&m, pp_op(PL_EV_BACKWARD, 1, 0, 0, 6, 8));
        viz_pp_round R;
        viz_pp_round_find(&m, 1, &R);
        CU_ASSERT_EQUAL(R.stages, 2);
        CU_ASSERT_EQUAL(R.owner[0], set ? 1 : 0);
        CU_ASSERT_EQUAL(R.owner[1], set ? 3 : 2);
        CU_ASSERT_DOUBLE_EQUAL(R.hi, set ? 8 : 4, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(R.busy, set ? 8 : 4, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(R.slot, set ? 2 : 1, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(viz_bubble_fraction(&m, 1), 0.5, 1e-12);
        /* the pane: stage 1's F0 at the slot of its own rank's timing (2 cells a unit) */
        viz_grid g = {0};
        CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 60, 8), 0);
        viz_view v;
        memset(&v, 0, sizeof v);
        v.modeled = 1;
        viz_render_pane(&g, PL_PANE_PIPELINE, (pl_rect){0, 0, 60, 8}, &m, &v);
        dump(&g);
        char *text = viz_grid_text(&g);
        CU_ASSERT_PTR_NOT_NULL(strstr(text, "iteration 1"));
        CU_ASSERT_PTR_NOT_NULL(strstr(text, set ? "8.00 s" : "4.00 s"));
        free(text);
        viz_grid_free(&g);
        viz_model_free(&m);
    }
    pl_viz_pipeline bad = {2, 1, 1, "gpipe", 0.5, 1.0 / 3, 1, {0, 4}};
    CU_ASSERT_EQUAL(pl_viz_check_pipeline(&bad, 4, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "pipeline pane: stage 1 drawn from rank 4: allowed are ranks 0..3");
    CU_ASSERT_EQUAL(pl_viz_check_pipeline(&bad, 8, err, sizeof err), 0);
    bad.stage_rank[0] = -1;
    CU_ASSERT_EQUAL(pl_viz_check_pipeline(&bad, 0, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err,
                           "pipeline pane: stage 0 drawn from rank -1: allowed are ranks 0..63");
    /* the layout: a row per stage (2 + 4), not per device (8 + 4, capped at 11 on 80x24) */
    pl_layout L;
    pl_viz_layout_stages(80, 24, 8, 2, LAB10_PANES, 0, &L);
    CU_ASSERT_EQUAL(L.pane[PL_PANE_PIPELINE].h, 6);
    pl_viz_layout_stages(80, 24, 8, 0, LAB10_PANES, 0, &L);
    CU_ASSERT_EQUAL(L.pane[PL_PANE_PIPELINE].h, 11);
    /* with the topology too: the mesh keeps its 7 rows, the topology the rest (3), the
     * devices 3; the left column 36 wide */
    pl_viz_layout_stages(80, 24, 8, 2, LAB10_PANES | PL_PANE_BIT(PL_PANE_TOPOLOGY), 0, &L);
    CU_ASSERT(L.pane[PL_PANE_DEVICES].h == 3 && L.pane[PL_PANE_MESH].h == 7 &&
              L.pane[PL_PANE_TOPOLOGY].h == 3 && L.pane[PL_PANE_MESH].w == 36);
    CU_ASSERT_EQUAL(L.pane[PL_PANE_MESH].y, L.pane[PL_PANE_DEVICES].y + 3);
    CU_ASSERT_EQUAL(L.pane[PL_PANE_TOPOLOGY].y, L.pane[PL_PANE_MESH].y + 7);
}

/* Through a trace file: the events' groups (args.group), the "paralab
 * mesh" metadata and the pipeline's stage_ranks, written and read back
 * exactly; a group, a mesh or stage ranks that are not right refused,
 * naming the value. */
static void test_trace_round_trip(void)
{
    char path[] = "/tmp/paralab-mesh-XXXXXX", err[512];
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    pl_trace_writer *w = pl_trace_writer_open(path, 8, 1, 0, err, sizeof err);
    CU_ASSERT_FATAL(w != NULL);
    CU_ASSERT_EQUAL(pl_trace_writer_describe(w, "lab 10 hybrid", 2, LAB10_PANES, 0), 0);
    int sr[2] = {0, 4};
    CU_ASSERT_EQUAL(pl_trace_writer_describe_pipeline(w, 2, 4, 1, "1f1b", 0.25, 0.2, sr), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_describe_mesh(w, 2, 2, 2, "picotron"), 0);
    static const int groups[] = {PL_GROUP_TP, PL_GROUP_DP, PL_GROUP_PP, PL_GROUP_NONE};
    for (int i = 0; i < 4; i++) {
        pl_event e =
            comm_ev(i == 2 ? PL_EV_SEND : PL_EV_COLLECTIVE, i, groups[i], i + 1, i + 1.5, "x");
        CU_ASSERT_EQUAL(pl_trace_writer_add(w, &e, 1), 0);
    }
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    viz_trace t;
    int rc = viz_read_trace(path, &t, err, sizeof err);
    if (rc) fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(t.mesh.dp, 2);
    CU_ASSERT_EQUAL(t.mesh.tp, 2);
    CU_ASSERT_EQUAL(t.mesh.pp, 2);
    CU_ASSERT_STRING_EQUAL(t.mesh.order, "picotron");
    CU_ASSERT_EQUAL(t.pipeline.have_stage_rank, 1);
    CU_ASSERT_EQUAL(t.pipeline.stage_rank[0], 0);
    CU_ASSERT_EQUAL(t.pipeline.stage_rank[1], 4);
    CU_ASSERT_EQUAL(t.panes, LAB10_PANES);
    CU_ASSERT_EQUAL_FATAL(t.nev, 4);
    for (size_t i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(t.ev[i].rank, (int)i);
        CU_ASSERT_EQUAL(t.ev[i].group, groups[i]);
    }
    viz_model m;
    viz_model_init(&m, t.nranks);
    CU_ASSERT_EQUAL(viz_model_set_mesh(&m, &t.mesh, err, sizeof err), 0);
    CU_ASSERT_EQUAL(m.mesh.order, 1); /* PL_MESH_PICOTRON */
    viz_model_free(&m);
    viz_trace_free(&t);
    /* without stage ranks: none read back */
    w = pl_trace_writer_open(path, 2, 1, 0, err, sizeof err);
    CU_ASSERT_FATAL(w != NULL);
    CU_ASSERT_EQUAL(pl_trace_writer_describe_pipeline(w, 2, 4, 1, "1f1b", 0.25, 0.2, NULL), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(viz_read_trace(path, &t, err, sizeof err), 0);
    CU_ASSERT_EQUAL(t.pipeline.have_stage_rank, 0);
    CU_ASSERT_EQUAL(t.mesh.dp, 0);
    viz_trace_free(&t);
    /* refused */
    static const struct {
        const char *meta, *args, *want;
    } bad[] = {
        {"", "{\"lane\":2,\"group\":\"xx\"}",
         ": event 1: args.group \"xx\" is not a group: use \"tp\", \"dp\" or \"pp\""},
        {"", "{\"lane\":2,\"group\":7}",
         ": event 1: args.group (not a string) is not a group: use \"tp\", \"dp\" or \"pp\""},
        {"{\"name\":\"paralab mesh\",\"ph\":\"M\",\"pid\":0,\"args\":{\"dp\":2,\"tp\":2,\"pp\":"
         "2,\"order\":\"zigzag\"}},",
         "{\"lane\":2}",
         ": mesh pane: order 'zigzag': allowed are megatron (TP fastest, PP outermost) and "
         "picotron (TP fastest, DP outermost)"},
        {"{\"name\":\"paralab mesh\",\"ph\":\"M\",\"pid\":0,\"args\":{\"dp\":2,\"tp\":2,\"pp\":"
         "3,\"order\":\"megatron\"}},",
         "{\"lane\":2}",
         ": mesh pane: dp x tp x pp = 2 x 2 x 3 = 12 ranks for a world of 8: allowed are degrees "
         "whose product is the world's ranks"},
        {"{\"name\":\"paralab mesh\",\"ph\":\"M\",\"pid\":0,\"args\":{\"dp\":2,\"pp\":2,"
         "\"order\":\"megatron\"}},",
         "{\"lane\":2}",
         ": event 1: a mesh (\"paralab mesh\") needs args.dp, tp and pp (whole numbers 1..64) and "
         "order (\"megatron\" or \"picotron\")"},
        {"{\"name\":\"paralab pipeline\",\"ph\":\"M\",\"pid\":0,\"args\":{\"stages\":2,"
         "\"micro_batches\":4,\"chunks\":1,\"schedule\":\"1f1b\",\"of_ideal\":null,\"of_total\":"
         "null,\"stage_ranks\":[0]}},",
         "{\"lane\":2}",
         ": event 1: a pipeline's args.stage_ranks must be an array of 2 whole numbers 0..63 (a "
         "rank per stage)"},
        {"{\"name\":\"paralab pipeline\",\"ph\":\"M\",\"pid\":0,\"args\":{\"stages\":2,"
         "\"micro_batches\":4,\"chunks\":1,\"schedule\":\"1f1b\",\"of_ideal\":null,\"of_total\":"
         "null,\"stage_ranks\":[0,9]}},",
         "{\"lane\":2}", ": pipeline pane: stage 1 drawn from rank 9: allowed are ranks 0..7"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        FILE *f = fopen(path, "w");
        CU_ASSERT_FATAL(f != NULL);
        fprintf(f,
                "{\"otherData\":{\"ranks\":8},\"traceEvents\":[{\"ph\":\"M\",\"name\":\"paralab\","
                "\"pid\":0,\"args\":{}},\n%s"
                "{\"ph\":\"X\",\"name\":\"all_reduce\",\"cat\":\"collective\",\"pid\":1,\"tid\":2,"
                "\"ts\":1,\"dur\":1,\"args\":%s}]}\n",
                bad[i].meta, bad[i].args);
        fclose(f);
        err[0] = '\0';
        CU_ASSERT_EQUAL(viz_read_trace(path, &t, err, sizeof err), -1);
        char want[600];
        snprintf(want, sizeof want, "%s%s", path, bad[i].want);
        CU_ASSERT_STRING_EQUAL(err, want);
        if (strcmp(err, want)) fprintf(stderr, "\n  got  %s\n  want %s\n", err, want);
    }
    unlink(path);
}

static const unit_test tests[] = {
    {"mesh pane: replicas left out are counted", test_mesh_left_out},
    {"pipeline pane: a hybrid run's stages from their stage ranks", test_pipeline_stage_ranks},
    {"trace: groups, the mesh and stage ranks written and read back; bad ones refused",
     test_trace_round_trip},
    {"timeline: a hybrid run's traffic by its group, with the groups' legend",
     test_timeline_groups},
    {"mesh pane: the newest grouped communication by the view's time lights",
     test_mesh_active_event},
    {"mesh pane: meshes refused naming the values", test_mesh_refused},
    {"mesh pane: dp 8 folded at 80 columns, boxed at 200; 2x2x2 at 80x24", test_mesh_fold},
    {"mesh pane: every factorisation of 8 and 12, both orders: every rank in its cell",
     test_mesh_every_cell},
    {"mesh pane: the lit cells reversed, lettered, in the group's colour", test_mesh_drawn_lit},
    {"mesh pane: rank 0's collectives and sends of the step, per group", test_mesh_step_ops},
    {"mesh pane: a TP, a DP, a PP event light their groups (both orders)", test_mesh_lit_groups},
    {"mesh pane: 2x2x2 megatron, every rank in its cell", test_mesh_megatron_cells},
};

int register_mesh_pane_suite(void) { return UNIT_SUITE("viz mesh pane", tests); }
