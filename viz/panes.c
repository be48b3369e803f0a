/* panes.c — each pane drawn into the cell grid from the model (see vizint.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vizint.h"

void viz_fmt_time(char *buf, size_t cap, double s)
{
    double a = fabs(s);
    if (a < 1e-6)
        snprintf(buf, cap, "%.0f ns", s * 1e9);
    else if (a < 1e-3)
        snprintf(buf, cap, "%.1f us", s * 1e6);
    else if (a < 1)
        snprintf(buf, cap, "%.2f ms", s * 1e3);
    else
        snprintf(buf, cap, "%.2f s", s);
}

void viz_fmt_bytes(char *buf, size_t cap, double b)
{
    static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int k = 0;
    while (b >= 1024 && k < 4) {
        b /= 1024;
        k++;
    }
    snprintf(buf, cap, k ? "%.1f %s" : "%.0f %s", b, u[k]);
}

static int kind_colour(int kind)
{
    switch (kind) {
    case PL_EV_KERNEL:
        return COL_KERNEL;
    case PL_EV_FORWARD:
        return COL_FORWARD;
    case PL_EV_BACKWARD:
        return COL_BACKWARD;
    case PL_EV_OPTIMIZER:
        return COL_OPTIMIZER;
    case PL_EV_COPY:
        return COL_COPY;
    default:
        return COL_COMM;
    }
}

static pl_rect inside(pl_rect r) { return (pl_rect){r.x + 1, r.y + 1, r.w - 2, r.h - 2}; }

/* ---- header and narration ----------------------------------------------------------- */

static void header(viz_grid *g, pl_rect r, const viz_view *v)
{
    for (int x = r.x; x < r.x + r.w; x++) viz_put(g, x, r.y, ' ', COL_TITLE, ATTR_REVERSE);
    char steps[32];
    if (v->steps > 0)
        snprintf(steps, sizeof steps, "step %d/%d", v->step, v->steps);
    else
        snprintf(steps, sizeof steps, "step %d", v->step);
    viz_textf(g, r.x, r.y, r.w, COL_TITLE, ATTR_REVERSE | ATTR_BOLD,
              " paralab | %s | %s | %s | clock %s%s | %d device%s | ? help ",
              v->title ? v->title : "", steps, v->mode ? v->mode : "",
              v->modeled ? "modeled" : "measured", v->recorded ? " (recorded)" : "", v->ndev,
              v->ndev == 1 ? "" : "s");
}

/* Words wrapped into the box; returns the rows used. A '\n' starts a new
 * row and keeps the next line's indentation (a table in a step). */
static int wrap(viz_grid *g, pl_rect in, const char *text, int fg)
{
    int row = 0, hard = 0; /* hard: the row starts after a '\n' */
    const char *p = text;
    while (*p && row < in.h) {
        if (!hard)
            while (*p == ' ') p++;
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p), take = len;
        if (take > in.w) { /* break at the last space that fits */
            take = in.w;
            while (take > 0 && p[take] != ' ') take--;
            if (take == 0) take = in.w;
        }
        char line[1024];
        snprintf(line, sizeof line, "%.*s", take, p);
        viz_text(g, in.x, in.y + row, in.w, line, fg, 0);
        p += take;
        hard = *p == '\n';
        if (hard) p++;
        row++;
    }
    return row;
}

static void narration(viz_grid *g, pl_rect r, const viz_view *v)
{
    viz_box(g, r, "narration", v->focus == PL_PANE_NARRATION);
    pl_rect in = inside(r);
    if (in.w < 1 || in.h < 1) return;
    int used = wrap(g, in, v->narration[0] ? v->narration : "(no step yet)", COL_DEFAULT);
    int room = in.h - used - (v->status ? 1 : 0);
    /* the lab's newest output lines under the narration */
    for (int i = 0; i < room && i < v->nlog; i++)
        viz_text(g, in.x, in.y + used + i, in.w,
                 v->log[v->nlog - (room < v->nlog ? room : v->nlog) + i], COL_DIM, 0);
    if (v->status && used < in.h)
        viz_text(g, in.x, in.y + in.h - 1, in.w, v->status, COL_WARN, ATTR_BOLD);
}

/* ---- devices -------------------------------------------------------------------------- */

static double view_time(const viz_view *v) { return v->t_end; }

static void devices(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v)
{
    viz_box(g, r, "devices", v->focus == PL_PANE_DEVICES);
    pl_rect in = inside(r);
    if (in.w < 8 || in.h < 1) return;
    int n = m->nranks > v->ndev ? m->nranks : v->ndev, rows = in.h;
    int first = v->rank_scroll > 0 && v->rank_scroll < n ? v->rank_scroll : 0;
    for (int k = 0; k < rows && first + k < n; k++) {
        int rk = first + k, y = in.y + k;
        if (k == rows - 1 && first + k < n - 1) {
            viz_textf(g, in.x, y, in.w, COL_DIM, 0, "... %d more (up/down scroll)", n - first - k);
            break;
        }
        int x = in.x + viz_textf(g, in.x, y, in.w, COL_RANK0 + rk % 8, ATTR_BOLD, "r%-2d", rk);
        if (m->roles[rk]) x += viz_textf(g, x, y, in.x + in.w - x, COL_DIM, 0, " %s", m->roles[rk]);
        /* what it runs now: the comm lane first, then compute, then copy */
        const pl_event *now = NULL;
        static const int order[] = {PL_LANE_COMM, PL_LANE_COMPUTE, PL_LANE_COPY};
        for (int i = 0; i < 3 && !now; i++)
            now = viz_model_at(m, rk, order[i], view_time(v), v->modeled);
        int memw = m->mem_total[rk] > 0 && in.w >= 28 ? (in.w >= 44 ? 12 : 6) : 0;
        int opw = in.x + in.w - x - 1 - (memw ? memw + 2 : 0);
        if (opw > 0)
            viz_text(g, x + 1, y, opw, now ? now->label : "idle",
                     now ? kind_colour(now->kind) : COL_DIM, 0);
        if (memw) {
            int bx = in.x + in.w - memw;
            viz_bar(g, bx, y, memw, m->mem_used[rk] / m->mem_total[rk], COL_COPY);
        }
    }
}

/* ---- timeline --------------------------------------------------------------------------- */

static const char *lane_tag[] = {"cmp", "cpy", "com"};

static void timeline(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v)
{
    char t1[32], t2[32], sp[32];
    viz_fmt_time(sp, sizeof sp, v->span);
    char title[96];
    snprintf(title, sizeof title, "timeline (%s clock, %s wide%s)",
             v->modeled ? "modeled" : "measured", sp, v->follow ? ", following" : "");
    viz_box(g, r, title, v->focus == PL_PANE_TIMELINE);
    pl_rect in = inside(r);
    int label_w = 8, w = in.w - label_w;
    if (w < 4 || in.h < 2) return;
    double t0 = v->t_end - v->span, dt = v->span / w;
    int rows = in.h - 1; /* the last row: the time axis */
    int n = m->nranks > v->ndev ? m->nranks : v->ndev;
    /* three lanes per rank when they fit, else one row per rank (comm over
     * compute over copy); or, for a lab about streams, a lane per stream */
    int per = n * 3 <= rows ? 3 : 1,
        first = v->rank_scroll > 0 && v->rank_scroll < n ? v->rank_scroll : 0;
    int y = in.y;
    for (int rk = first; rk < n && y < in.y + rows; rk++) {
        int lanes = m->stream_lanes ? (m->nstreams[rk] > 0 ? m->nstreams[rk] : 1) : per;
        for (int l = 0; l < lanes && y < in.y + rows; l++, y++) {
            if (m->stream_lanes)
                viz_textf(g, in.x, y, label_w, l == 0 ? COL_RANK0 + rk % 8 : COL_DIM, 0,
                          "%s%-2d s%d%s", l == 0 ? "r" : " ", rk, l,
                          l == VIZ_STREAM_LANES - 1 ? "+" : "");
            else if (per == 3)
                viz_textf(g, in.x, y, label_w, l == 0 ? COL_RANK0 + rk % 8 : COL_DIM, 0,
                          "%s%-2d %s", l == 0 ? "r" : " ", rk, lane_tag[l]);
            else
                viz_textf(g, in.x, y, label_w, COL_RANK0 + rk % 8, 0, "r%-2d", rk);
            for (int c = 0; c < w; c++) {
                double t = t0 + (c + 0.5) * dt;
                const pl_event *e = NULL;
                if (m->stream_lanes)
                    e = viz_model_at_stream(m, rk, l, t, v->modeled);
                else if (per == 3)
                    e = viz_model_at(m, rk, l, t, v->modeled);
                else
                    for (int k = PL_NUM_LANES - 1; k >= 0 && !e; k--)
                        e = viz_model_at(m, rk, k, t, v->modeled);
                if (!e) {
                    viz_put(g, in.x + label_w + c, y, viz_glyph_ch(g, G_DOT), COL_DIM, 0);
                    continue;
                }
                uint32_t ch = viz_glyph_ch(g, e->kind == PL_EV_COLLECTIVE ? G_SHADE : G_FULL);
                int col = kind_colour(e->kind), attr = 0;
                if ((e->kind == PL_EV_FORWARD || e->kind == PL_EV_BACKWARD) &&
                    e->micro_batch >= 0) {
                    ch = (uint32_t)('0' + e->micro_batch % 10); /* the micro-batch, in its colour */
                    attr = ATTR_REVERSE;
                }
                viz_put(g, in.x + label_w + c, y, ch, col, attr);
            }
        }
    }
    /* the axis: start, middle and end times (none before the first event) */
    if (!m->nevents) return;
    viz_fmt_time(t1, sizeof t1, t0 - (v->modeled ? m->t_lo[1] : m->t_lo[0]));
    viz_fmt_time(t2, sizeof t2, v->t_end - (v->modeled ? m->t_lo[1] : m->t_lo[0]));
    int ay = in.y + in.h - 1;
    viz_text(g, in.x + label_w, ay, w, t1, COL_DIM, 0);
    int l2 = (int)strlen(t2);
    if (w > (int)strlen(t1) + l2 + 2) viz_text(g, in.x + in.w - l2, ay, l2, t2, COL_DIM, 0);
}

/* ---- topology --------------------------------------------------------------------------- */

/* Where rank k of n sits: on an ellipse filling the box. */
static void ring_pos(pl_rect in, int k, int n, int *x, int *y)
{
    double a = 2 * M_PI * k / (n ? n : 1) - M_PI / 2;
    double rx = (in.w - 6) / 2.0, ry = (in.h - 2) / 2.0;
    *x = in.x + (int)lround(in.w / 2.0 + rx * cos(a)) - 1;
    *y = in.y + (int)lround(in.h / 2.0 - 0.5 + ry * sin(a));
}

static void topology(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v)
{
    viz_box(g, r, "topology", v->focus == PL_PANE_TOPOLOGY);
    pl_rect in = inside(r);
    int n = m->nranks > v->ndev ? m->nranks : v->ndev;
    if (in.w < 10 || in.h < 3 || n < 1) return;
    if (n > 16 || in.h < 7) { /* too many to draw: the busiest links */
        int row = 0;
        for (int a = 0; a < n && row < in.h; a++)
            for (int b = 0; b < n && row < in.h; b++)
                if (m->link[a][b]) {
                    char by[32];
                    viz_fmt_bytes(by, sizeof by, (double)m->link[a][b]);
                    viz_textf(g, in.x, in.y + row++, in.w, COL_COMM, 0, "r%d -> r%d  %s", a, b, by);
                }
        if (!row) viz_text(g, in.x, in.y, in.w, "no bytes moved yet", COL_DIM, 0);
        return;
    }
    /* links between neighbours (the ring), dotted, with chunks in flight */
    for (int k = 0; k < n && n > 1; k++) {
        int a = k, b = (k + 1) % n, x0, y0, x1, y1;
        ring_pos(in, a, n, &x0, &y0);
        ring_pos(in, b, n, &x1, &y1);
        int steps = abs(x1 - x0) > abs(y1 - y0) ? abs(x1 - x0) : abs(y1 - y0);
        for (int s = 1; s < steps; s++)
            viz_put(g, x0 + (x1 - x0) * s / steps, y0 + (y1 - y0) * s / steps,
                    viz_glyph_ch(g, G_DOT), m->link[a][b] || m->link[b][a] ? COL_COMM : COL_DIM, 0);
        /* a chunk moving from b's predecessor a to b during a ring step */
        const pl_event *e = viz_model_at(m, b, PL_LANE_COMM, v->t_end, v->modeled);
        if (e && e->kind == PL_EV_RING_STEP && e->peer == a && steps > 1) {
            double s0 = viz_ev_start(e, v->modeled), s1 = viz_ev_end(e, v->modeled);
            double f = s1 > s0 ? (v->t_end - s0) / (s1 - s0) : 0.5;
            int s = 1 + (int)(f * (steps - 2));
            viz_put(g, x0 + (x1 - x0) * s / steps, y0 + (y1 - y0) * s / steps,
                    viz_glyph_ch(g, G_CHUNK), COL_WARN, ATTR_BOLD);
        }
    }
    for (int k = 0; k < n; k++) {
        int x, y;
        ring_pos(in, k, n, &x, &y);
        viz_textf(g, x, y, 3, COL_RANK0 + k % 8, ATTR_BOLD | ATTR_REVERSE, "r%d", k);
    }
    /* bytes per link, in the middle */
    int row = 0;
    for (int k = 0; k < n && n > 1 && row < 3; k++) {
        int b = (k + 1) % n;
        if (!m->link[k][b]) continue;
        char by[32];
        viz_fmt_bytes(by, sizeof by, (double)m->link[k][b]);
        char s[48];
        int len = snprintf(s, sizeof s, "%d>%d %s", k, b, by);
        if (n <= 4 || row < 3)
            viz_text(g, in.x + (in.w - len) / 2, in.y + in.h / 2 - 1 + row++, len, s, COL_COMM, 0);
    }
}

/* ---- shards, pipeline, metrics ---------------------------------------------------------- */

static void shards(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v)
{
    viz_box(g, r, m->shard_name[0] ? m->shard_name : "shards", v->focus == PL_PANE_SHARDS);
    pl_rect in = inside(r);
    if (in.w < 2 || in.h < 1) return;
    if (!m->shard_rows || !m->shard_cols) {
        viz_text(g, in.x, in.y, in.w, "no sharded tensor in this lab", COL_DIM, 0);
        return;
    }
    int cw = in.w / m->shard_cols, ch = in.h / m->shard_rows;
    if (cw < 1) cw = 1;
    if (ch < 1) ch = 1;
    for (int i = 0; i < m->shard_rows; i++)
        for (int j = 0; j < m->shard_cols; j++) {
            int owner = m->shard_owner[i * m->shard_cols + j];
            for (int y = 0; y < ch; y++)
                for (int x = 0; x < cw; x++) {
                    int gx = in.x + j * cw + x, gy = in.y + i * ch + y;
                    if (gx >= in.x + in.w || gy >= in.y + in.h) continue;
                    uint32_t c = x == 0 && y == 0 && owner >= 0 ? (uint32_t)('0' + owner % 10)
                                                                : viz_glyph_ch(g, G_FULL);
                    viz_put(g, gx, gy, c, owner >= 0 ? COL_RANK0 + owner % 8 : COL_DIM,
                            x == 0 && y == 0 ? ATTR_REVERSE : 0);
                }
        }
}

/* Stages x time slots: each slot (the shortest forward or backward) is two
 * cells, "F3" or "B0"; empty slots are bubbles. */
static void pipeline(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v)
{
    double bubble = viz_bubble_fraction(m, v->modeled);
    char title[64];
    if (bubble >= 0)
        snprintf(title, sizeof title, "pipeline (bubble %.1f %%)", bubble * 100);
    else
        snprintf(title, sizeof title, "pipeline");
    viz_box(g, r, title, v->focus == PL_PANE_PIPELINE);
    pl_rect in = inside(r);
    if (in.w < 4 || in.h < 1) return;
    if (bubble < 0) {
        viz_text(g, in.x, in.y, in.w, "no forward/backward events yet", COL_DIM, 0);
        return;
    }
    double lo = 1e300, slot = 1e300;
    int last_stage = 0;
    for (int rk = 0; rk < m->nranks; rk++)
        for (int l = 0; l < PL_NUM_LANES; l++)
            for (size_t i = 0; i < m->lanes[rk][l].n; i++) {
                const pl_event *e = &m->lanes[rk][l].ev[i];
                if ((e->kind != PL_EV_FORWARD && e->kind != PL_EV_BACKWARD) || e->layer < 0)
                    continue;
                double s = viz_ev_start(e, v->modeled), d = viz_ev_end(e, v->modeled) - s;
                lo = s < lo ? s : lo;
                if (d > 0 && d < slot) slot = d;
                int st = e->layer >= 0 ? e->layer : rk;
                last_stage = st > last_stage ? st : last_stage;
            }
    for (int st = 0; st <= last_stage && st < in.h; st++)
        viz_textf(g, in.x, in.y + st, 4, COL_DIM, 0, "s%-2d", st);
    for (int rk = 0; rk < m->nranks; rk++)
        for (int l = 0; l < PL_NUM_LANES; l++)
            for (size_t i = 0; i < m->lanes[rk][l].n; i++) {
                const pl_event *e = &m->lanes[rk][l].ev[i];
                if ((e->kind != PL_EV_FORWARD && e->kind != PL_EV_BACKWARD) || e->layer < 0)
                    continue;
                int st = e->layer;
                double s = viz_ev_start(e, v->modeled), d = viz_ev_end(e, v->modeled) - s;
                int k0 = (int)lround((s - lo) / slot), k1 = (int)lround((s + d - lo) / slot);
                for (int k = k0; k < k1; k++) {
                    int x = in.x + 4 + 2 * k, y = in.y + st;
                    if (y >= in.y + in.h || x + 1 >= in.x + in.w) continue;
                    int col = kind_colour(e->kind);
                    viz_put(g, x, y, e->kind == PL_EV_FORWARD ? 'F' : 'B', col, ATTR_BOLD);
                    viz_put(g, x + 1, y,
                            e->micro_batch >= 0 ? (uint32_t)('0' + e->micro_batch % 10) : '?', col,
                            0);
                }
            }
}

static void metrics(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v)
{
    viz_box(g, r, "metrics", v->focus == PL_PANE_METRICS);
    pl_rect in = inside(r);
    if (in.w < 10 || in.h < 1) return;
    int row = 0;
    /* throughput: bytes of every collective over their time */
    double bytes = 0, secs = 0, busy[PL_NUM_LANES] = {0};
    size_t calls = 0;
    for (int rk = 0; rk < m->nranks; rk++)
        for (int l = 0; l < PL_NUM_LANES; l++) {
            /* busy time: the union of the lane's events (a forward and the
             * kernels inside it count once), swept in start order */
            double covered = -1e300;
            for (size_t i = 0; i < m->lanes[rk][l].n; i++) {
                const pl_event *e = &m->lanes[rk][l].ev[i];
                double s = viz_ev_start(e, v->modeled), t = viz_ev_end(e, v->modeled);
                if (e->kind != PL_EV_COLLECTIVE && e->kind != PL_EV_RING_STEP && t > covered) {
                    busy[l] += t - (s > covered ? s : covered);
                    covered = t;
                }
                if (e->kind == PL_EV_COLLECTIVE && rk == 0) {
                    bytes += (double)e->bytes;
                    secs += t - s;
                    calls++;
                }
            }
        }
    char b[32];
    viz_fmt_bytes(b, sizeof b, bytes);
    viz_textf(g, in.x, in.y + row++, in.w, COL_DEFAULT, 0, "%zu events, %zu collectives (%s)",
              m->nevents, calls, b);
    if (secs > 0 && row < in.h)
        viz_textf(g, in.x, in.y + row++, in.w, COL_COMM, 0,
                  "collectives: %.2f GB/s (rank 0, algbw)", bytes / secs / 1e9);
    double span = v->modeled ? m->t_hi[1] - m->t_lo[1] : m->t_hi[0] - m->t_lo[0];
    if (span > 0 && m->nranks > 0 && row < in.h)
        viz_textf(g, in.x, in.y + row++, in.w, COL_DIM, 0, "busy: compute %.0f %%, copy %.0f %%",
                  100 * busy[0] / (span * m->nranks), 100 * busy[1] / (span * m->nranks));
    double bubble = viz_bubble_fraction(m, v->modeled);
    if (bubble >= 0 && row < in.h)
        viz_textf(g, in.x, in.y + row++, in.w, COL_DEFAULT, 0, "bubble %.1f %%", bubble * 100);
    /* the pushed metric (a loss curve), as bars: the last in.w values */
    if (m->nmetric && row < in.h) {
        int h = in.h - row - 1, w = in.w;
        size_t n = m->nmetric, from = n > (size_t)w ? n - (size_t)w : 0;
        double mx = 0;
        for (size_t i = from; i < n; i++) mx = m->metric[i] > mx ? m->metric[i] : mx;
        viz_textf(g, in.x, in.y + row++, in.w, COL_DEFAULT, 0, "%s %.4f (max %.4f)",
                  m->metric_name[0] ? m->metric_name : "loss", m->metric[n - 1], mx);
        for (size_t i = from; i < n && h > 0; i++) {
            int bars = mx > 0 ? (int)lround(m->metric[i] / mx * h) : 0;
            for (int k = 0; k < bars; k++)
                viz_put(g, in.x + (int)(i - from), in.y + row + h - 1 - k, viz_glyph_ch(g, G_FULL),
                        COL_FORWARD, 0);
        }
    }
}

/* ---- help and the frame ---------------------------------------------------------------- */

static void help(viz_grid *g)
{
    static const char *lines[] = {
        "space, ->   next step",
        "p           play / pause",
        "+ / -       speed",
        "tab, 1-8    focus a pane",
        "left/right  scroll the timeline",
        "up/down     scroll the ranks",
        "z / Z       zoom in / out",
        "f           follow the newest",
        "t           modeled / measured clock",
        "?           this help",
        "q, Ctrl-C   quit",
    };
    int n = (int)(sizeof lines / sizeof *lines), w = 40, h = n + 2;
    pl_rect r = {(g->w - w) / 2, (g->h - h) / 2, w, h};
    if (r.x < 0 || r.y < 0) return;
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++) viz_put(g, x, y, ' ', COL_DEFAULT, 0);
    viz_box(g, r, "keys", 1);
    for (int i = 0; i < n; i++) viz_text(g, r.x + 2, r.y + 1 + i, w - 4, lines[i], COL_DEFAULT, 0);
}

void viz_render_pane(viz_grid *g, pl_pane p, pl_rect r, const viz_model *m, const viz_view *v)
{
    if (r.w <= 0 || r.h <= 0) return;
    switch (p) {
    case PL_PANE_HEADER:
        header(g, r, v);
        break;
    case PL_PANE_NARRATION:
        narration(g, r, v);
        break;
    case PL_PANE_DEVICES:
        devices(g, r, m, v);
        break;
    case PL_PANE_TIMELINE:
        timeline(g, r, m, v);
        break;
    case PL_PANE_TOPOLOGY:
        topology(g, r, m, v);
        break;
    case PL_PANE_SHARDS:
        shards(g, r, m, v);
        break;
    case PL_PANE_PIPELINE:
        pipeline(g, r, m, v);
        break;
    case PL_PANE_METRICS:
        metrics(g, r, m, v);
        break;
    default:
        break;
    }
}

void viz_render(viz_grid *g, const pl_layout *lay, const viz_model *m, const viz_view *v)
{
    viz_grid_clear(g);
    if (!lay->ok) {
        char s[96];
        snprintf(s, sizeof s, "need at least %dx%d (this terminal is %dx%d)", lay->min_w,
                 lay->min_h, g->w, g->h);
        viz_text(g, 0, 0, g->w, s, COL_WARN, ATTR_BOLD);
        return;
    }
    for (int p = 0; p < PL_NUM_PANES; p++) viz_render_pane(g, (pl_pane)p, lay->pane[p], m, v);
    if (v->help) help(g);
}
