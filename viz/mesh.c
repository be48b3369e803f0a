/* mesh.c — the mesh pane: a hybrid run's ranks as a grid dp x pp x tp,
 * with the group that communicates now lit in its colour (see vizint.h). */
#include <stdio.h>
#include <string.h>

#include "paralab/mesh.h"
#include "vizint.h"

int pl_viz_check_mesh(const pl_viz_mesh *m, int nranks, char *err, size_t cap)
{
    if (!m) return 0;
    char bad[128] = "";
    const char *why = NULL;
    if (m->dp < 1 || m->tp < 1 || m->pp < 1) {
        snprintf(bad, sizeof bad, "dp %d, tp %d, pp %d", m->dp, m->tp, m->pp);
        why = "degrees of at least 1 each";
    } else if ((long long)m->dp * m->tp * m->pp > PL_MAX_RANKS) {
        snprintf(bad, sizeof bad, "dp x tp x pp = %d x %d x %d = %lld ranks", m->dp, m->tp, m->pp,
                 (long long)m->dp * m->tp * m->pp);
        why = "at most 64 ranks (PL_MAX_RANKS)";
    } else if (nranks > 0 && m->dp * m->tp * m->pp != nranks) {
        snprintf(bad, sizeof bad, "dp x tp x pp = %d x %d x %d = %d ranks for a world of %d", m->dp,
                 m->tp, m->pp, m->dp * m->tp * m->pp, nranks);
        why = "degrees whose product is the world's ranks";
    } else if (!m->order || (strcmp(m->order, "megatron") && strcmp(m->order, "picotron"))) {
        snprintf(bad, sizeof bad, "order '%.32s'", m->order ? m->order : "(none)");
        why = "megatron (TP fastest, PP outermost) and picotron (TP fastest, DP outermost)";
    }
    if (why) {
        snprintf(err, cap, "mesh pane: %s: allowed are %s", bad, why);
        return -1;
    }
    return 0;
}

int viz_model_set_mesh(viz_model *m, const pl_viz_mesh *mesh, char *err, size_t cap)
{
    m->version++; /* what is cached from the events depends on it too */
    if (pl_viz_check_mesh(mesh, 0, err, cap)) return -1;
    memset(&m->mesh, 0, sizeof m->mesh);
    if (!mesh) return 0;
    m->mesh.dp = mesh->dp;
    m->mesh.tp = mesh->tp;
    m->mesh.pp = mesh->pp;
    m->mesh.order = strcmp(mesh->order, "picotron") ? PL_MESH_MEGATRON : PL_MESH_PICOTRON;
    return 0;
}

int viz_group_colour(int group)
{
    return group == PL_GROUP_TP   ? COL_GROUP_TP
           : group == PL_GROUP_DP ? COL_GROUP_DP
           : group == PL_GROUP_PP ? COL_GROUP_PP
                                  : COL_COMM;
}

char viz_group_letter(int group)
{
    return group == PL_GROUP_TP ? 't' : group == PL_GROUP_DP ? 'd' : group == PL_GROUP_PP ? 'p' : 0;
}

static int is_comm_kind(int kind)
{
    return kind == PL_EV_COLLECTIVE || kind == PL_EV_RING_STEP || kind == PL_EV_SEND ||
           kind == PL_EV_RECV;
}

const pl_event *viz_mesh_active(const viz_model *m, double t, int modeled)
{
    const pl_event *best = NULL;
    double best_at = 0;
    for (int rk = 0; rk < m->nranks; rk++) {
        const viz_lane *L = &m->lanes[rk][PL_LANE_COMM];
        /* the lane is by measured start; the view's clock may be the modeled one,
         * whose order is the same for one rank's comm lane: search, then walk back */
        size_t lo = 0, hi = L->n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (viz_ev_start(&L->ev[mid], modeled) <= t)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t i = lo; i > 0; i--) {
            const pl_event *e = &L->ev[i - 1];
            if (e->group < PL_GROUP_TP || e->group > PL_GROUP_PP || !is_comm_kind(e->kind))
                continue;
            double a = viz_ev_start(e, modeled);
            if (a > t) continue;
            if (!best || a > best_at) { /* the newest; on a tie, the lowest rank */
                best = e;
                best_at = a;
            }
            break;
        }
    }
    return best;
}

int viz_mesh_lit(const viz_model *m, double t, int modeled, unsigned char *lit)
{
    memset(lit, 0, PL_MAX_RANKS);
    if (m->mesh.dp < 1) return 0;
    const pl_event *e = viz_mesh_active(m, t, modeled);
    if (!e) return 0;
    pl_mesh mesh;
    if (pl_mesh_init_order(&mesh, m->mesh.dp * m->mesh.tp * m->mesh.pp, m->mesh.dp, m->mesh.tp,
                           m->mesh.pp, (pl_mesh_order)m->mesh.order, NULL, 0))
        return 0;
    pl_mesh_axis axis = e->group == PL_GROUP_TP   ? PL_MESH_TP
                        : e->group == PL_GROUP_DP ? PL_MESH_DP
                                                  : PL_MESH_PP;
    int ranks[PL_MAX_RANKS];
    int n = pl_mesh_group(&mesh, axis, e->rank, ranks);
    if (n < 0) return 0;
    for (int k = 0; k < n; k++) lit[ranks[k]] = (unsigned char)e->group;
    return e->group;
}

static int digits(int x)
{
    int d = 1;
    while (x >= 10) {
        x /= 10;
        d++;
    }
    return d;
}

/* The replicas placed in mode `compact` (0: a box each; 1: a column of
 * cells each under its name, between bars); 0 when not even one fits. */
static int place(const viz_model *m, pl_rect in, int compact, viz_mesh_layout *L)
{
    int dp = m->mesh.dp, tp = m->mesh.tp, pp = m->mesh.pp;
    L->compact = compact;
    L->nd = digits(dp * tp * pp - 1);
    L->cell_w = L->nd + 2;                               /* the number, its mark, a blank */
    L->label_w = 2 + digits(pp - 1) + 1;                 /* "pp0" and a blank */
    int avail_w = in.w - L->label_w, avail_h = in.h - 1; /* a row for the legend */
    if (!compact) {
        L->box_w = 2 + 1 + tp * L->cell_w - 1; /* borders, a blank, the cells less the last blank */
        int title_w = 4 + 3 + digits(dp - 1);  /* its title, " dp 7 ", whole */
        if (L->box_w < title_w) L->box_w = title_w;
        L->box_h = 2 + pp;
        L->per_row = (avail_w + 1) / (L->box_w + 1); /* a blank between boxes */
    } else {
        L->box_w = 1 + 1 + tp * L->cell_w - 1; /* a bar, a blank, the cells less the last blank */
        L->box_h = 1 + pp;                     /* its name, then its stages */
        L->per_row = (avail_w - 1) / L->box_w; /* and a bar after the last */
    }
    if (L->per_row > dp) L->per_row = dp;
    if (L->per_row < 1 || avail_h < L->box_h) {
        L->per_row = L->box_rows = L->shown = 0;
        return 0;
    }
    int rows_fit = avail_h / L->box_h, need = (dp + L->per_row - 1) / L->per_row;
    L->box_rows = need < rows_fit ? need : rows_fit;
    L->shown = L->box_rows * L->per_row < dp ? L->box_rows * L->per_row : dp;
    L->legend_rows = in.h - L->box_rows * L->box_h >= 2 ? 2 : 1;
    L->origin_x = in.x;
    L->origin_y = in.y;
    return L->shown;
}

void viz_mesh_geometry(const viz_model *m, pl_rect in, viz_mesh_layout *L)
{
    memset(L, 0, sizeof *L);
    if (m->mesh.dp < 1 || in.w < 1 || in.h < 1) return;
    if (place(m, in, 0, L) == m->mesh.dp) return; /* a box each, when all fit */
    viz_mesh_layout boxed = *L;
    if (place(m, in, 1, L) <= boxed.shown) *L = boxed; /* else the compact fold, if it shows more */
}

/* The top-left corner of replica d's box (or column). */
static void replica_at(const viz_mesh_layout *L, int d, int *bx, int *by)
{
    *bx = L->origin_x + L->label_w + (d % L->per_row) * (L->box_w + (L->compact ? 0 : 1));
    *by = L->origin_y + (d / L->per_row) * L->box_h;
}

int viz_mesh_cell(const viz_model *m, const viz_mesh_layout *L, int rank, int *x, int *y)
{
    pl_mesh mesh;
    pl_mesh_coord c;
    if (!L->per_row ||
        pl_mesh_init_order(&mesh, m->mesh.dp * m->mesh.tp * m->mesh.pp, m->mesh.dp, m->mesh.tp,
                           m->mesh.pp, (pl_mesh_order)m->mesh.order, NULL, 0) ||
        pl_mesh_coords(&mesh, rank, &c) || c.dp >= L->shown)
        return -1;
    int bx, by;
    replica_at(L, c.dp, &bx, &by);
    *x = bx + 2 + c.tp * L->cell_w;
    *y = by + 1 + c.pp;
    return 0;
}

/* text from (x, y) in rows of w cells, at most rows of them, broken at blanks (a word longer
 * than a row is cut); the last row that fits ends in "..." when words are left over. So that
 * "now: TP group {4 5} all_reduce step 3" is not cut at a narrow pane's edge. */
static int wrap_words(viz_grid *g, int x, int y, int w, int rows, const char *text, int fg)
{
    const char *s = text;
    int row = 0;
    for (; row < rows && *s && w > 0; row++) {
        int n = (int)strlen(s);
        if (n > w) { /* the last blank that leaves the row's words whole */
            int cut = w;
            while (cut > 0 && s[cut] != ' ') cut--;
            n = cut > 0 ? cut : w;
        }
        if (row == rows - 1 && n < (int)strlen(s) && w > 3) { /* words left: say so */
            char buf[256];
            int keep = n < w - 3 ? n : w - 3;
            snprintf(buf, sizeof buf, "%.*s...", keep < 250 ? keep : 250, s);
            viz_text(g, x, y + row, w, buf, fg, 0);
            return row + 1;
        }
        viz_textf(g, x, y + row, w, fg, 0, "%.*s", n, s);
        s += n;
        while (*s == ' ') s++;
    }
    return row;
}

int viz_mesh_step_ops(const viz_model *m, int step, double t, int modeled, int ops[PL_NUM_GROUPS])
{
    for (int k = 0; k < PL_NUM_GROUPS; k++) ops[k] = 0;
    if (m->nranks < 1 || step < 1) return 0;
    const viz_lane *L = &m->lanes[0][PL_LANE_COMM];
    int any = 0;
    for (size_t i = L->n; i > 0; i--) { /* back from the newest: the step's are the last */
        const pl_event *e = &L->ev[i - 1];
        if (e->step < step) break;
        if (e->step > step || viz_ev_start(e, modeled) > t) continue;
        if (e->kind != PL_EV_COLLECTIVE && e->kind != PL_EV_SEND) continue;
        if (e->group < PL_GROUP_TP || e->group > PL_GROUP_PP) continue;
        ops[e->group]++;
        any = 1;
    }
    return any;
}

static const char *group_title[PL_NUM_GROUPS] = {"", "TP group", "DP group", "PP group"};

void viz_mesh_pane(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v)
{
    char title[96];
    if (m->mesh.dp > 0)
        snprintf(title, sizeof title, "mesh dp%d pp%d tp%d %s", m->mesh.dp, m->mesh.pp, m->mesh.tp,
                 pl_mesh_order_name((pl_mesh_order)m->mesh.order));
    else
        snprintf(title, sizeof title, "mesh");
    viz_box(g, r, title, v->focus == PL_PANE_MESH);
    pl_rect in = {r.x + 1, r.y + 1, r.w - 2, r.h - 2};
    if (in.w < 1 || in.h < 1) return;
    if (m->mesh.dp < 1) {
        viz_text(g, in.x, in.y, in.w, "no mesh described", COL_DIM, 0);
        return;
    }
    viz_mesh_layout L;
    viz_mesh_geometry(m, in, &L);
    if (!L.per_row) {
        viz_text(g, in.x, in.y, in.w, "too small for the mesh", COL_DIM, 0);
        return;
    }
    unsigned char lit[PL_MAX_RANKS];
    const pl_event *act = viz_mesh_active(m, v->t_end, v->modeled);
    int active = viz_mesh_lit(m, v->t_end, v->modeled, lit);
    /* the boxes: one per DP replica, folded into rows */
    for (int d = 0; d < L.shown; d++) {
        int bx, by;
        replica_at(&L, d, &bx, &by);
        char bt[16];
        if (!L.compact) {
            snprintf(bt, sizeof bt, "dp %d", d);
            viz_box(g, (pl_rect){bx, by, L.box_w, L.box_h}, bt, 0);
        } else { /* "dp3" over its cells, a bar before them (and after the row's last) */
            snprintf(bt, sizeof bt, "dp%d", d);
            viz_text(g, bx + 1, by, L.box_w - 1, bt, COL_TITLE, ATTR_BOLD);
            int last = d % L.per_row == L.per_row - 1 || d == L.shown - 1;
            for (int s = 0; s < m->mesh.pp; s++) {
                viz_put(g, bx, by + 1 + s, viz_glyph_ch(g, G_V), COL_BORDER, 0);
                if (last) viz_put(g, bx + L.box_w, by + 1 + s, viz_glyph_ch(g, G_V), COL_BORDER, 0);
            }
        }
        if (d % L.per_row == 0)
            for (int s = 0; s < m->mesh.pp; s++)
                viz_textf(g, in.x, by + 1 + s, L.label_w - 1, COL_DIM, 0, "pp%d", s);
    }
    int n = m->mesh.dp * m->mesh.tp * m->mesh.pp;
    for (int rk = 0; rk < n; rk++) {
        int x, y;
        if (viz_mesh_cell(m, &L, rk, &x, &y)) continue;
        int gr = lit[rk];
        int fg = gr ? viz_group_colour(gr) : COL_RANK0 + rk % 8;
        viz_textf(g, x, y, L.nd, fg, gr ? ATTR_REVERSE | ATTR_BOLD : 0, "%*d", L.nd, rk);
        if (gr) viz_put(g, x + L.nd, y, (uint32_t)viz_group_letter(gr), fg, ATTR_BOLD);
    }
    int ly = in.y + L.box_rows * L.box_h;
    if (L.shown < m->mesh.dp) /* replicas left out: counted where no stage's label is */
        viz_textf(g, in.x, L.compact ? ly - L.box_h : ly - 1, L.label_w + 1, COL_DIM, 0, "+%d",
                  m->mesh.dp - L.shown);
    /* the legend: each group in its colour, the active one reversed and
     * "(now)" (left out, then the names shortened, where they do not fit) */
    for (int form = 0, x = in.x; form < 3 && ly < in.y + in.h; form++) {
        char item[3][32];
        int total = 0;
        for (int gr = PL_GROUP_TP; gr <= PL_GROUP_PP; gr++) {
            snprintf(item[gr - 1], sizeof item[0], "%c %.*s%s", viz_group_letter(gr),
                     form < 2 ? 8 : 2, group_title[gr], gr == active && form == 0 ? " (now)" : "");
            total += (int)strlen(item[gr - 1]) + (gr > PL_GROUP_TP ? 2 : 0);
        }
        if (total > in.w && form < 2) continue;
        for (int gr = PL_GROUP_TP; gr <= PL_GROUP_PP; gr++) {
            int len = (int)strlen(item[gr - 1]);
            if (x + len > in.x + in.w) break;
            viz_text(g, x, ly, len, item[gr - 1], viz_group_colour(gr),
                     gr == active ? ATTR_REVERSE | ATTR_BOLD : 0);
            x += len + 2;
        }
        break;
    }
    if (L.legend_rows > 1 && ly + 1 < in.y + in.h) {
        if (act && active) {
            char members[PL_MAX_RANKS * 3 + 1] = "";
            size_t len = 0;
            for (int rk = 0; rk < n && len + 4 < sizeof members; rk++)
                if (lit[rk])
                    len += (size_t)snprintf(members + len, sizeof members - len, "%s%d",
                                            len ? " " : "", rk);
            char line[PL_MAX_RANKS * 3 + 160];
            snprintf(line, sizeof line, "now: %s {%s} %s", group_title[active], members,
                     act->label);
            if ((int)strlen(line) > in.w) /* "PP" for "PP group" before a second row */
                snprintf(line, sizeof line, "now: %.2s {%s} %s", group_title[active], members,
                         act->label);
            if ((int)strlen(line) > in.w) /* too long anyway: the words wrapped */
                snprintf(line, sizeof line, "now: %s {%s} %s", group_title[active], members,
                         act->label);
            ly += wrap_words(g, in.x, ly + 1, in.w, in.y + in.h - (ly + 1), line,
                             viz_group_colour(active));
        } else {
            viz_text(g, in.x, ly + 1, in.w, "now: no group communicating", COL_DIM, 0);
            ly++;
        }
        /* what rank 0 sent on each of its groups in this narrated step ("[3] r0 sent: t 8 d 1
         * p 5"): the "now" line names only the newest (a DP all-reduce followed by a PP one
         * shows the PP group lit) */
        int ops[PL_NUM_GROUPS];
        if (v->step > 0 && ly + 1 < in.y + in.h &&
            viz_mesh_step_ops(m, v->step, v->t_end, v->modeled, ops)) {
            char head[48];
            int hl = snprintf(head, sizeof head, "[%d] r0 sent:", v->step);
            int x = in.x;
            if (hl + 3 * 5 <= in.w) {
                viz_text(g, x, ly + 1, hl, head, COL_DIM, 0);
                x += hl;
                for (int gr = PL_GROUP_TP; gr <= PL_GROUP_PP; gr++) {
                    char it[24];
                    int il = snprintf(it, sizeof it, " %c %d", viz_group_letter(gr), ops[gr]);
                    if (x + il > in.x + in.w) break;
                    viz_text(g, x, ly + 1, il, it, ops[gr] ? viz_group_colour(gr) : COL_DIM,
                             ops[gr] ? ATTR_BOLD : 0);
                    x += il;
                }
                const char *tail = " (collectives, sends)";
                if (x + (int)strlen(tail) <= in.x + in.w)
                    viz_text(g, x, ly + 1, (int)strlen(tail), tail, COL_DIM, 0);
            }
        }
    }
}
