/*
 * picture.c — the picture pane (PL_PANE_PICTURE, see vizint.h): the
 * pictures of the step the view shows, stacked or side by side in a box
 * titled with their titles, revealed part by part as they arrive; the
 * dispatch to the per-kind renderers (picture_lab0N.c, picture_plots.c);
 * and a picture's text form for a run without the UI.
 */
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/picture.h"
#include "vizint.h"

/* ---- the dispatch ---------------------------------------------------------------------- */

int viz_pic_draw(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal)
{
    if (!p || r.w < 1 || r.h < 1) return 0;
    if (reveal < 0) reveal = 0;
    if (reveal > 1) reveal = 1;
    int n;
    switch (p->kind) {
    case PL_PIC_BLOCKS:
        n = viz_pic_blocks(g, r, p, reveal);
        break;
    case PL_PIC_ELEMENTS:
        n = viz_pic_elements(g, r, p, reveal);
        break;
    case PL_PIC_REQUEST:
        n = viz_pic_request(g, r, p, reveal);
        break;
    case PL_PIC_BANKS:
        n = viz_pic_banks(g, r, p, reveal);
        break;
    case PL_PIC_TREE:
        n = viz_pic_tree(g, r, p, reveal);
        break;
    case PL_PIC_TILES:
        n = viz_pic_tiles(g, r, p, reveal);
        break;
    case PL_PIC_ROOFLINE:
        n = viz_pic_roofline(g, r, p, reveal);
        break;
    case PL_PIC_BARS:
        n = viz_pic_bars(g, r, p, reveal);
        break;
    default:
        return 0;
    }
    return n < 0 ? 0 : n > r.h ? r.h : n;
}

int viz_pic_rows(const struct pl_picture *p, int w)
{
    if (!p || w < 1) return 1;
    int n;
    switch (p->kind) {
    case PL_PIC_BLOCKS:
        n = viz_pic_blocks_rows(p, w);
        break;
    case PL_PIC_ELEMENTS:
        n = viz_pic_elements_rows(p, w);
        break;
    case PL_PIC_REQUEST:
        n = viz_pic_request_rows(p, w);
        break;
    case PL_PIC_BANKS:
        n = viz_pic_banks_rows(p, w);
        break;
    case PL_PIC_TREE:
        n = viz_pic_tree_rows(p, w);
        break;
    case PL_PIC_TILES:
        n = viz_pic_tiles_rows(p, w);
        break;
    case PL_PIC_ROOFLINE:
        n = viz_pic_roofline_rows(p, w);
        break;
    case PL_PIC_BARS:
        n = viz_pic_bars_rows(p, w);
        break;
    default:
        n = 1;
        break;
    }
    return n < 1 ? 1 : n > 4096 ? 4096 : n;
}

/* The parts come from the picture's own numbers (picture.h): the blocks'
 * waves p[3], the tree's levels p[1], the tiles' steps along K p[4]. */
int viz_pic_parts(const struct pl_picture *p)
{
    long long n = 1;
    if (p && p->kind == PL_PIC_BLOCKS) n = p->p[3];
    if (p && p->kind == PL_PIC_TREE) n = p->p[1];
    if (p && p->kind == PL_PIC_TILES) n = p->p[4];
    return n < 1 ? 1 : n > (1 << 20) ? 1 << 20 : (int)n;
}

double viz_pic_reveal(const struct pl_picture *p, double elapsed)
{
    int parts = viz_pic_parts(p);
    double each = VIZ_PIC_REVEAL_S; /* a part at a time, the whole within VIZ_PIC_REVEAL_MAX_S */
    if (parts > 1 && each * (parts - 1) > VIZ_PIC_REVEAL_MAX_S)
        each = VIZ_PIC_REVEAL_MAX_S / (parts - 1);
    double k = 1 + floor((elapsed > 0 ? elapsed : 0) / each);
    return k >= parts ? 1 : k / parts;
}

/* ---- the text form --------------------------------------------------------------------- */

char *viz_pic_text(const struct pl_picture *p, int w, int utf8)
{
    if (!p) return NULL;
    if (w < 1) w = 1;
    int rows = viz_pic_rows(p, w);
    viz_grid g = {0};
    g.utf8 = utf8 ? 1 : 0;
    if (viz_grid_resize(&g, w, rows + 1)) return NULL;
    viz_text(&g, 0, 0, w, p->title[0] ? p->title : pl_picture_kind_name(p->kind), COL_TITLE,
             ATTR_BOLD);
    viz_pic_draw(&g, (pl_rect){0, 1, w, rows}, p, 1);
    char *s = viz_grid_text(&g);
    viz_grid_free(&g);
    if (!s) return NULL;
    /* each line's trailing blanks cut, then the blank lines at the end */
    char *o = s;
    for (char *line = s; *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        while (len && line[len - 1] == ' ') len--;
        memmove(o, line, len);
        o += len;
        *o++ = '\n';
        if (!nl) break;
        line = nl + 1;
    }
    while (o - s >= 2 && o[-1] == '\n' && o[-2] == '\n') o--;
    *o = '\0';
    return s;
}

char *pl_viz_picture_text(const struct pl_picture *p, int w, int utf8)
{
    return viz_pic_text(p, w, utf8 < 0 ? pl_viz_locale_utf8() : utf8);
}

int pl_viz_locale_utf8(void)
{
    locale_t l = newlocale(LC_CTYPE_MASK, "", (locale_t)0);
    if (l == (locale_t)0) return 0;
    const char *cs = nl_langinfo_l(CODESET, l);
    int u = cs && !strcmp(cs, "UTF-8");
    freelocale(l);
    return u;
}

/* ---- the pane -------------------------------------------------------------------------- */

#define MAX_SHOWN 8  /* pictures of one step the pane draws */
#define MIN_COL_W 30 /* side by side: the narrowest column */

/* " title " on a border row from x, within maxw cells (as viz_box does). */
static void border_title(viz_grid *g, int x, int y, int maxw, const char *s, int focused)
{
    if (maxw < 3) return;
    int c = focused ? COL_FOCUS : COL_BORDER;
    viz_put(g, x, y, ' ', c, 0);
    int n = viz_text(g, x + 1, y, maxw - 2, s, focused ? COL_FOCUS : COL_TITLE, ATTR_BOLD);
    viz_put(g, x + 1 + n, y, ' ', c, 0);
}

static const char *title_of(const pl_picture *p) { return p->title[0] ? p->title : "picture"; }

/* The last row: what was left out (pictures after the first `placed` of n,
 * and the first cut to `cut` of its `cut_of` rows), if anything was. */
static void left_out(viz_grid *g, pl_rect in, const pl_picture *const *ps, int n, int shown,
                     int placed, int cut, int cut_of)
{
    int left = n - placed;
    if (!left && !cut) return;
    /* the longest form that fits: the long one, the short one with the next
     * picture's title, the short one */
    char s[3][256];
    for (int form = 0; form < 3; form++) {
        size_t k = 0, cap = sizeof s[form];
        s[form][0] = '\0';
        if (cut)
            k += (size_t)snprintf(s[form] + k, cap - k,
                                  form ? "cut: %d/%d rows%s" : "cut to %d of %d rows%s", cut,
                                  cut_of, left ? ", " : "");
        if (left && k < cap)
            k +=
                (size_t)snprintf(s[form] + k, cap - k, "+%d picture%s", left, left == 1 ? "" : "s");
        if (left && placed < shown && form < 2 && k < cap)
            k += (size_t)snprintf(s[form] + k, cap - k, " (%s%s)", title_of(ps[placed]),
                                  left > 1 ? ", ..." : "");
        if (k < cap) snprintf(s[form] + k, cap - k, form ? "; enlarge" : ": enlarge the terminal");
    }
    int form = 0;
    while (form < 2 && (int)strlen(s[form]) > in.w) form++;
    viz_text(g, in.x, in.y + in.h - 1, in.w, s[form], COL_WARN, 0);
}

void viz_picture_pane_at(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v, double now)
{
    if (r.w < 2 || r.h < 2) return;
    int focused = v->focus == PL_PANE_PICTURE;
    const pl_picture *ps[MAX_SHOWN];
    double since = 0;
    int step = 0;
    int n = viz_model_pictures(m, v->follow ? INFINITY : v->t_end, v->modeled, ps, MAX_SHOWN,
                               &since, &step);
    viz_box(g, r, NULL, focused);
    pl_rect in = {r.x + 1, r.y + 1, r.w - 2, r.h - 2};
    if (!n) {
        border_title(g, r.x + 1, r.y, r.w - 2, "picture", focused);
        if (in.h > 0) viz_text(g, in.x, in.y, in.w, "no picture yet", COL_DIM, 0);
        return;
    }
    int shown = n < MAX_SHOWN ? n : MAX_SHOWN;
    /* a step before the one shown: say whose */
    char head[96];
    snprintf(head, sizeof head, "%s", title_of(ps[0]));
    if (v->step > 0 && step != v->step) {
        size_t len = strlen(head);
        snprintf(head + len, sizeof head - len, " (step %d)", step);
    }
    if (in.w < 1 || in.h < 1) {
        border_title(g, r.x + 1, r.y, r.w - 2, head, focused);
        return;
    }
    double reveal[MAX_SHOWN];
    int want[MAX_SHOWN], stacked = 0;
    for (int i = 0; i < shown; i++) {
        reveal[i] = viz_pic_reveal(ps[i], now - since);
        want[i] = viz_pic_rows(ps[i], in.w);
        stacked += want[i] + (i > 0);
    }
    /* side by side: when stacking does not fit and columns of every shown
     * picture do */
    int cw = shown > 1 ? (in.w - (shown - 1)) / shown : 0;
    if (shown > 1 && (stacked > in.h || n > shown) && cw >= MIN_COL_W) {
        int most = 0, room = in.h - (n > shown);
        for (int i = 0; i < shown; i++) {
            int x = in.x + i * (cw + 1), w = i == shown - 1 ? in.x + in.w - x : cw;
            int h = viz_pic_rows(ps[i], w);
            most = h > most ? h : most;
        }
        if (most <= room) {
            for (int i = 0; i < shown; i++) {
                int x = in.x + i * (cw + 1), w = i == shown - 1 ? in.x + in.w - x : cw;
                border_title(g, i ? x : r.x + 1, r.y, i ? w : w + 1, i ? title_of(ps[i]) : head,
                             focused);
                if (i)
                    for (int y = in.y; y < in.y + in.h; y++)
                        viz_put(g, x - 1, y, viz_glyph_ch(g, G_V), COL_BORDER, 0);
                viz_pic_draw(g, (pl_rect){x, in.y, w, room}, ps[i], reveal[i]);
            }
            left_out(g, in, ps, n, shown, shown, 0, 0);
            return;
        }
    }
    /* stacked: each its rows while they fit; a rule with each next one's title */
    border_title(g, r.x + 1, r.y, r.w - 2, head, focused);
    int y = in.y, end = in.y + in.h, placed = 0, cut = 0, cut_of = 0;
    for (int i = 0; i < shown; i++) {
        int rest = 0;
        for (int j = i; j < shown; j++) rest += want[j] + (j > 0);
        int all = n == shown && rest <= end - y; /* the rest fits: no line to keep */
        int sep = i > 0, room = end - y - sep - (all ? 0 : 1), h = want[i];
        if (h > room) {
            if (i > 0) break;
            h = room > 0 ? room : end - y; /* one row: no line for what is left out */
            cut = h;
            cut_of = want[i];
        }
        if (sep) {
            for (int x = in.x; x < in.x + in.w; x++)
                viz_put(g, x, y, viz_glyph_ch(g, G_H), COL_BORDER, 0);
            border_title(g, in.x + 1, y, in.w - 1, title_of(ps[i]), 0);
            y++;
        }
        viz_pic_draw(g, (pl_rect){in.x, y, in.w, h}, ps[i], reveal[i]);
        y += h;
        placed++;
        if (cut) break;
    }
    if (y < end) left_out(g, in, ps, n, shown, placed, cut, cut_of);
}

void viz_picture_pane(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v)
{
    viz_picture_pane_at(g, r, m, v, pl_trace_now());
}
