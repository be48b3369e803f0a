/*
 * picture_plots.c — plots (paralab/picture.h's layouts; the contract in
 * vizint.h): a bar chart with labels and an axis (PL_PIC_BARS).
 *
 *   stride 1     ██████████████████████┊           1503.2 GB/s
 * ▶ tiled (yours)▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓┊▓▓▓        2980.0 GB/s
 *   stride 32    ███                   ┊            190.1 GB/s
 *                └─────────┬─────────┬─┊───────┬
 *                0         1000      2000      3000 GB/s
 *                ┊ peak: 3350.0 GB/s
 *
 * One row per bar (its label, the bar from the axis's 0, its value and
 * unit); the highlighted bar drawn in ▓ (ASCII =) with a ▶ (>) before its
 * label, the others in █ (#); the reference line ┊ (:) across the rows
 * at its value, and its label under the axis. The axis runs from 0 to a
 * round number at or above the largest value (and the reference), ticks
 * at 4 or 5 round steps, labelled with the unit. Rows: the bars + 3 (+2
 * without a reference line: no legend); in fewer the legend goes, then
 * the tick labels; then bars are left out, saying "(+N more)" above the
 * axis (which stays while there are 3 rows).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "paralab/picture.h"
#include "vizint.h"

static void put(viz_grid *g, pl_rect r, int x, int y, uint32_t ch, int fg, int attr)
{
    if (x < r.x || y < r.y || x >= r.x + r.w || y >= r.y + r.h) return;
    viz_put(g, x, y, ch, fg, attr);
}

static void text(viz_grid *g, pl_rect r, int x, int y, const char *s, int fg, int attr)
{
    if (y < r.y || y >= r.y + r.h || x >= r.x + r.w || x < r.x) return;
    viz_text(g, x, y, r.x + r.w - x, s, fg, attr);
}

/* The cells of a UTF-8 string. */
static int cells(const char *s)
{
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* A round step (1, 2, 2.5 or 5 x 10^k) of about top / 4. */
static double nice_step(double top)
{
    double raw = top / 4, m = pow(10, floor(log10(raw))), f = raw / m;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * m;
}

static void fmt_value(char *s, size_t cap, double v)
{
    if (fabs(v) >= 10 || v == floor(v))
        snprintf(s, cap, "%.1f", v);
    else
        snprintf(s, cap, "%.2f", v);
}

typedef struct {
    int n, hi, has_ref;
    double ref, top, step;
    const char *unit;
} bars_info;

static void bars_analyse(const pl_picture *p, bars_info *b)
{
    b->n = (int)p->p[0];
    if (b->n < 0) b->n = 0;
    if ((size_t)b->n > p->nd) b->n = (int)p->nd;
    b->hi = (int)p->p[1];
    b->ref = (size_t)b->n < p->nd ? p->dv[b->n] : NAN;
    b->has_ref = isfinite(b->ref) && b->ref > 0;
    b->unit = p->ns > 0 ? p->sv[0] : "";
    double most = b->has_ref ? b->ref : 0;
    for (int i = 0; i < b->n; i++)
        if (isfinite(p->dv[i]) && p->dv[i] > most) most = p->dv[i];
    if (most <= 0) most = 1;
    b->step = nice_step(most);
    b->top = ceil(most / b->step - 1e-9) * b->step;
    if (b->top < most) b->top += b->step;
}

int viz_pic_bars_rows(const struct pl_picture *p, int w)
{
    (void)w;
    bars_info b;
    bars_analyse(p, &b);
    return b.n + 2 + b.has_ref;
}

int viz_pic_bars(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal)
{
    (void)reveal;
    if (r.h < 1 || r.w < 1 || !p) return 0;
    bars_info b;
    bars_analyse(p, &b);
    /* the label column (the marker, the longest label, at most 2/5 of the width) */
    int lw = 0;
    for (int i = 0; i < b.n; i++) {
        const char *l = (size_t)(1 + i) < p->ns ? p->sv[1 + i] : "";
        if (cells(l) > lw) lw = cells(l);
    }
    if (lw > 2 * r.w / 5) lw = 2 * r.w / 5;
    lw += 3; /* "▶ " before, a blank after */
    /* the value column: "1234.5 GB/s" */
    int vw = 0;
    for (int i = 0; i < b.n; i++) {
        char v[48];
        fmt_value(v, sizeof v, p->dv[i]);
        int n = cells(v) + 1 + cells(b.unit);
        if (n > vw) vw = n;
    }
    vw += 1;
    int x0 = r.x + lw, bw = r.w - lw - vw;
    if (bw < 4) bw = 4;
    /* rows: bars, then the axis, the ticks' labels, the reference's legend */
    int extra = 2 + b.has_ref, shown = b.n;
    if (r.h < b.n + extra) extra = r.h - b.n;
    if (extra < 1) extra = r.h >= 3; /* bars left out: the axis stays */
    if (shown > r.h - extra) shown = r.h - extra;
    int cut = shown < b.n; /* the last row says how many are left out */
    if (cut && shown > 0) shown--;
    int refx = b.has_ref ? x0 + (int)lround(b.ref / b.top * bw) : -1;
    if (refx >= x0 + bw) refx = x0 + bw - 1;
    uint32_t refch = g->utf8 ? 0x250A : ':';
    int y = r.y;
    for (int i = 0; i < shown; i++, y++) {
        int hl = i == b.hi;
        const char *l = (size_t)(1 + i) < p->ns ? p->sv[1 + i] : "";
        if (hl) put(g, r, r.x, y, viz_glyph_ch(g, G_EV_FORWARD), COL_FOCUS, ATTR_BOLD);
        char lab[64];
        snprintf(lab, sizeof lab, "%s", l);
        viz_text(g, r.x + 2, y, lw - 3, lab, hl ? COL_FOCUS : COL_DEFAULT, hl ? ATTR_BOLD : 0);
        double v = isfinite(p->dv[i]) && p->dv[i] > 0 ? p->dv[i] : 0;
        int len = (int)lround(v / b.top * bw);
        if (len == 0 && v > 0) len = 1; /* a small bar still shows */
        if (len > bw) len = bw;
        uint32_t fill = viz_glyph_ch(g, hl ? G_SHADE : G_FULL);
        if (!g->utf8 && hl) fill = '=';
        for (int c = 0; c < len; c++) put(g, r, x0 + c, y, fill, hl ? COL_FOCUS : COL_KERNEL, 0);
        if (refx >= 0 && refx >= x0 + len) put(g, r, refx, y, refch, COL_WARN, 0);
        char val[64];
        fmt_value(val, sizeof val, p->dv[i]);
        snprintf(val + strlen(val), sizeof val - strlen(val), " %s", b.unit);
        text(g, r, x0 + bw + vw - cells(val), y, val, hl ? COL_FOCUS : COL_DEFAULT, 0);
    }
    if (cut) {
        char more[32];
        snprintf(more, sizeof more, "(+%d more)", b.n - shown);
        text(g, r, r.x + 2, y, more, COL_DIM, 0);
        y++;
    }
    if (extra >= 1) { /* the axis and its ticks */
        put(g, r, x0, y, viz_glyph_ch(g, G_BL), COL_BORDER, 0);
        for (int c = 1; c <= bw; c++) put(g, r, x0 + c, y, viz_glyph_ch(g, G_H), COL_BORDER, 0);
        int nt = (int)lround(b.top / b.step);
        for (int t = 1; t <= nt; t++) {
            int tx = x0 + (int)lround(t * b.step / b.top * bw);
            put(g, r, tx, y, g->utf8 ? 0x252C : '+', COL_BORDER, 0);
        }
        if (refx >= 0) put(g, r, refx, y, refch, COL_WARN, 0);
        y++;
    }
    if (extra >= 2) { /* the ticks' labels, the unit after the last */
        int last = x0 - 2;
        int nt = (int)lround(b.top / b.step);
        for (int t = 0; t <= nt; t++) {
            char n[32];
            snprintf(n, sizeof n, "%g%s%s", t * b.step, t == nt ? " " : "", t == nt ? b.unit : "");
            int tx = x0 + (int)lround(t * b.step / b.top * bw);
            if (tx <= last + 1) continue;
            text(g, r, tx, y, n, COL_DIM, 0);
            last = tx + cells(n);
        }
        y++;
    }
    if (extra >= 3 && b.has_ref) {
        char n[96], v[48];
        fmt_value(v, sizeof v, b.ref);
        const char *rl = (size_t)(1 + b.n) < p->ns ? p->sv[1 + b.n] : "reference";
        snprintf(n, sizeof n, "%s: %s %s", rl[0] ? rl : "reference", v, b.unit);
        int lx = refx;
        if (lx + 2 + cells(n) > r.x + r.w) lx = r.x + r.w - 2 - cells(n);
        if (lx < r.x) lx = r.x;
        put(g, r, lx, y, refch, COL_WARN, 0);
        text(g, r, lx + 2, y, n, COL_WARN, 0);
        y++;
    }
    return y - r.y;
}
