/* grid.c — the cell grid and the layout (see vizint.h, paralab/viz.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vizint.h"

static const uint32_t glyph_utf8[G_COUNT] = {
    0x2500, 0x2502, 0x250C, 0x2510, 0x2514, 0x2518, /* ─ │ ┌ ┐ └ ┘ */
    0x2588, 0x2593, 0x2591, ' ',                    /* █ ▓ ░ */
    0x00B7, 0x25CF, 0x2500, 0x2502, 0x2572, 0x2571, /* · ● ─ │ ╲ ╱ */
    0x25B6, 0x25C0, 0x25C6, 0x2592, 0x2593, 0x2591, /* ▶ ◀ ◆ ▒ ▓ ░ */
    0x2191, 0x2193,                                 /* ↑ ↓ */
    0x25AA,                                         /* ▪ */
};
static const uint32_t glyph_ascii[G_COUNT] = {
    '-', '|',  '+', '+', '+', '+', '#', '=', '.', ' ', '.', '*', '-',
    '|', '\\', '/', '>', '<', 'o', '=', '~', ':', '^', 'v', '+',
};

uint32_t viz_glyph_ch(const viz_grid *g, viz_glyph k)
{
    return g->utf8 ? glyph_utf8[k] : glyph_ascii[k];
}

int viz_grid_resize(viz_grid *g, int w, int h)
{
    if (w < 0) w = 0;
    if (h < 0) h = 0;
    size_t cells = (size_t)w * (size_t)h;
    viz_cell *c = realloc(g->cells, (cells ? cells : 1) * sizeof *c);
    if (!c) return -1;
    g->cells = c;
    g->w = w;
    g->h = h;
    viz_grid_clear(g);
    return 0;
}

void viz_grid_free(viz_grid *g)
{
    free(g->cells);
    g->cells = NULL;
    g->w = g->h = 0;
}

void viz_grid_clear(viz_grid *g)
{
    for (int i = 0; i < g->w * g->h; i++) g->cells[i] = (viz_cell){' ', COL_DEFAULT, 0};
}

void viz_put(viz_grid *g, int x, int y, uint32_t ch, int fg, int attr)
{
    if (x < 0 || y < 0 || x >= g->w || y >= g->h) return;
    if (!g->utf8 && ch > 0x7e) ch = '?';
    g->cells[y * g->w + x] = (viz_cell){ch, (uint8_t)fg, (uint8_t)attr};
}

/* The next code point of a UTF-8 string (invalid bytes: '?'). */
static uint32_t next_cp(const unsigned char **p)
{
    const unsigned char *s = *p;
    uint32_t c = s[0];
    int n = c < 0x80             ? 0
            : (c & 0xE0) == 0xC0 ? 1
            : (c & 0xF0) == 0xE0 ? 2
            : (c & 0xF8) == 0xF0 ? 3
                                 : -1;
    if (n < 0) {
        *p = s + 1;
        return '?';
    }
    c = n ? c & (0x3F >> n) : c;
    for (int i = 1; i <= n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *p = s + i;
            return '?';
        }
        c = c << 6 | (s[i] & 0x3F);
    }
    *p = s + n + 1;
    return c;
}

int viz_text(viz_grid *g, int x, int y, int maxw, const char *s, int fg, int attr)
{
    const unsigned char *p = (const unsigned char *)s;
    int k = 0;
    while (*p && k < maxw) {
        uint32_t c = next_cp(&p);
        viz_put(g, x + k, y, c < 0x20 ? ' ' : c, fg, attr);
        k++;
    }
    return k;
}

int viz_textf(viz_grid *g, int x, int y, int maxw, int fg, int attr, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return viz_text(g, x, y, maxw, buf, fg, attr);
}

void viz_box(viz_grid *g, pl_rect r, const char *title, int focused)
{
    if (r.w < 2 || r.h < 2) return;
    int c = focused ? COL_FOCUS : COL_BORDER;
    for (int x = r.x + 1; x < r.x + r.w - 1; x++) {
        viz_put(g, x, r.y, viz_glyph_ch(g, G_H), c, 0);
        viz_put(g, x, r.y + r.h - 1, viz_glyph_ch(g, G_H), c, 0);
    }
    for (int y = r.y + 1; y < r.y + r.h - 1; y++) {
        viz_put(g, r.x, y, viz_glyph_ch(g, G_V), c, 0);
        viz_put(g, r.x + r.w - 1, y, viz_glyph_ch(g, G_V), c, 0);
    }
    viz_put(g, r.x, r.y, viz_glyph_ch(g, G_TL), c, 0);
    viz_put(g, r.x + r.w - 1, r.y, viz_glyph_ch(g, G_TR), c, 0);
    viz_put(g, r.x, r.y + r.h - 1, viz_glyph_ch(g, G_BL), c, 0);
    viz_put(g, r.x + r.w - 1, r.y + r.h - 1, viz_glyph_ch(g, G_BR), c, 0);
    if (title && r.w > 4) {
        viz_put(g, r.x + 1, r.y, ' ', c, 0);
        int n =
            viz_text(g, r.x + 2, r.y, r.w - 4, title, focused ? COL_FOCUS : COL_TITLE, ATTR_BOLD);
        viz_put(g, r.x + 2 + n, r.y, ' ', c, 0);
    }
}

void viz_bar(viz_grid *g, int x, int y, int w, double f, int fg)
{
    if (f < 0) f = 0;
    if (f > 1) f = 1;
    int full = (int)(f * w + 0.5);
    for (int i = 0; i < w; i++)
        viz_put(g, x + i, y, viz_glyph_ch(g, i < full ? G_FULL : G_LIGHT), i < full ? fg : COL_DIM,
                0);
}

static int put_utf8(char *o, uint32_t c)
{
    if (c < 0x80) {
        o[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (char)(0xC0 | c >> 6);
        o[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (char)(0xE0 | c >> 12);
        o[1] = (char)(0x80 | (c >> 6 & 0x3F));
        o[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | c >> 18);
    o[1] = (char)(0x80 | (c >> 12 & 0x3F));
    o[2] = (char)(0x80 | (c >> 6 & 0x3F));
    o[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

char *viz_grid_text(const viz_grid *g)
{
    char *s = malloc((size_t)(g->w * 4 + 1) * (size_t)g->h + 1), *o = s;
    if (!s) return NULL;
    for (int y = 0; y < g->h; y++) {
        for (int x = 0; x < g->w; x++) o += put_utf8(o, g->cells[y * g->w + x].ch);
        *o++ = '\n';
    }
    *o = '\0';
    return s;
}

/* ---- layout ----------------------------------------------------------------------------- */

/*
 * The screen, top to bottom: the header (one row); the body; the narration
 * (four rows with its border, nine from 30 rows up, with the lab's output
 * under the narration; more when the step's text needs them, up to 3/5 of
 * the rows below the header, the body keeping at least 8). With a topology, the body is a left
 * column (the devices above the topology) and a right column (the timeline above the pipeline,
 * shards and metrics, side by side). Without one, the devices are a band across the top of the
 * body, a row per device, and the right column's panes take the full width below it. A pane that is
 * not asked for gives its room to the others. The pipeline pane (a pipeline-parallel lab's centre)
 * goes across the whole width at the top of the body: a row per device (stage) and four more (its
 * border, the bubble line, the legend), leaving the others at least 8 rows; where that leaves it
 * less than 5, or with no other pane, it goes where the others would. The mesh pane keeps its 7
 * rows (a replica's box of two stages, its legend, its border) before the devices take theirs;
 * where that leaves the devices no row of their own, they give it up: the mesh shows the ranks.
 * The memory pane (a ZeRO lab's) goes across the width under the pipeline pane's place the same
 * way: a row per device and four more, leaving the others 11 rows (8 on a short screen), else
 * beside the metrics. The picture pane (a lab's picture of its idea) takes the right half of the
 * body under them, its whole height, where that leaves it at least 56 columns and the others
 * theirs (the others share the left half as they would the screen); on a narrower screen the
 * full width above the narration, 3/5 of the body's rows (leaving the others 9; the narration
 * grows only as far as that allows), else (fewer than 5 rows) beside the metrics. With no other
 * pane it takes the whole body. A timeline with panes under it that would get fewer than 4 rows
 * (a lane's 2 and its border) is hidden (w 0): they take its rows.
 */
void pl_viz_layout(int cols, int rows, int ndev, unsigned panes, pl_layout *out)
{
    pl_viz_layout_text(cols, rows, ndev, panes, 0, out);
}

void pl_viz_layout_text(int cols, int rows, int ndev, unsigned panes, int text_rows, pl_layout *out)
{
    pl_viz_layout_stages(cols, rows, ndev, 0, panes, text_rows, out);
}

void pl_viz_layout_stages(int cols, int rows, int ndev, int stages, unsigned panes, int text_rows,
                          pl_layout *out)
{
    memset(out, 0, sizeof *out);
    if (ndev < 0) ndev = 0;
    panes |= PL_PANE_BIT(PL_PANE_HEADER) | PL_PANE_BIT(PL_PANE_NARRATION);
    int has[PL_NUM_PANES];
    for (int p = 0; p < PL_NUM_PANES; p++) has[p] = (panes >> p) & 1u;
    int left = has[PL_PANE_TOPOLOGY] || has[PL_PANE_MESH]; /* the devices join them there */
    int below = has[PL_PANE_PIPELINE] + has[PL_PANE_SHARDS] + has[PL_PANE_METRICS] +
                has[PL_PANE_MEMORY] + has[PL_PANE_PICTURE];
    int right = has[PL_PANE_TIMELINE] || below;
    int band = has[PL_PANE_DEVICES] && !left;
    /* the pipeline pane across the top, when there are other panes to leave 8 rows */
    int pipe = has[PL_PANE_PIPELINE] &&
               (left || band || has[PL_PANE_TIMELINE] || has[PL_PANE_SHARDS] ||
                has[PL_PANE_METRICS] || has[PL_PANE_MEMORY] || has[PL_PANE_PICTURE]);
    /* the memory pane across the top too (under the pipeline), the same way */
    int mem = has[PL_PANE_MEMORY] &&
              (left || band || has[PL_PANE_TIMELINE] || has[PL_PANE_SHARDS] ||
               has[PL_PANE_METRICS] || has[PL_PANE_PIPELINE] || has[PL_PANE_PICTURE]);
    /* the picture pane: the right half of the body (wide), else across it */
    int pic = has[PL_PANE_PICTURE];
    /* (alone: no other pane but the pipeline and memory panes across the top) */
    int pic_alone = pic && !left && !band && !has[PL_PANE_TIMELINE] && !has[PL_PANE_SHARDS] &&
                    !has[PL_PANE_METRICS] && (!has[PL_PANE_PIPELINE] || pipe) &&
                    (!has[PL_PANE_MEMORY] || mem);
    int right_rest = has[PL_PANE_TIMELINE] || below - pic > 0; /* the right column without it */
    int pw = cols / 2,
        pic_wide = pic && !pic_alone && pw >= 56 && cols - pw >= (left && right_rest ? 60 : 40);
    out->min_w = left && right ? 60 : 40;
    out->min_h = 1 + 4 + (left || right || band ? 8 : 0);
    if (cols < out->min_w || rows < out->min_h) return;
    out->ok = 1;
    out->pane[PL_PANE_HEADER] = (pl_rect){0, 0, cols, 1};
    int nh = rows >= 30 ? 9 : 4; /* the narration, and the lab's output under it */
    if (text_rows + 2 > nh) {    /* a step with more to say: room for it */
        int k = 8 + (pipe ? 5 : 0) + (mem ? 5 : 0) + (pic && !pic_alone && !pic_wide ? 9 : 0);
        int most = (rows - 1) * 3 / 5 < rows - 1 - k ? (rows - 1) * 3 / 5 : rows - 1 - k;
        nh = text_rows + 2 < most ? text_rows + 2 : most > nh ? most : nh;
    }
    out->pane[PL_PANE_NARRATION] = (pl_rect){0, rows - nh, cols, nh};
    int by = 1, bh = rows - 1 - nh; /* the body */
    if (pipe && bh - 8 >= 5) {      /* across the top of the body (else beside the metrics) */
        int srows = stages > 0 ? stages : ndev > 0 ? ndev : 1;
        int want = srows + 4, ph = want < bh - 8 ? want : bh - 8;
        out->pane[PL_PANE_PIPELINE] = (pl_rect){0, by, cols, ph};
        by += ph;
        bh -= ph;
        below--;
        right = has[PL_PANE_TIMELINE] || below;
        has[PL_PANE_PIPELINE] = 0; /* placed */
    }
    if (mem) { /* a row per device and four more, leaving the others 11 rows (8 if need be) */
        int keep = bh - 11 >= 5 ? 11 : 8;
        int want = (ndev > 0 ? ndev : 1) + 4, mh = want < bh - keep ? want : bh - keep;
        if (mh >= 5) {
            out->pane[PL_PANE_MEMORY] = (pl_rect){0, by, cols, mh};
            by += mh;
            bh -= mh;
            below--;
            right = has[PL_PANE_TIMELINE] || below;
            has[PL_PANE_MEMORY] = 0; /* placed */
        }
    }
    if (!left && !right && !band) {
        out->pane[PL_PANE_NARRATION] = (pl_rect){0, 1, cols, rows - 1};
        return;
    }
    int bw = cols; /* the body's width, for the panes but the picture */
    if (pic && bh > 0) {
        int ph = bh * 3 / 5 < bh - 9 ? bh * 3 / 5 : bh - 9;
        if (!left && !band && !has[PL_PANE_TIMELINE] && !has[PL_PANE_SHARDS] &&
            !has[PL_PANE_METRICS] && !has[PL_PANE_PIPELINE] && !has[PL_PANE_MEMORY]) {
            out->pane[PL_PANE_PICTURE] = (pl_rect){0, by, cols, bh};
            return;
        }
        if (pic_wide) {
            out->pane[PL_PANE_PICTURE] = (pl_rect){cols - pw, by, pw, bh};
            bw = cols - pw;
        } else if (ph >= 5) { /* across the body, above the narration */
            out->pane[PL_PANE_PICTURE] = (pl_rect){0, by + bh - ph, cols, ph};
            bh -= ph;
        }
        if (out->pane[PL_PANE_PICTURE].w) { /* placed (else: beside the metrics) */
            below--;
            right = has[PL_PANE_TIMELINE] || below;
            has[PL_PANE_PICTURE] = 0;
        }
    }
    if (band) {
        int dh = ndev + 2;
        if (right && dh > bh / 3) dh = bh / 3;
        if (!right || dh > bh) dh = bh;
        if (dh < 3) dh = 3;
        out->pane[PL_PANE_DEVICES] = (pl_rect){0, by, bw, dh};
        by += dh;
        bh -= dh;
    }
    int lw = !left ? 0 : !right ? bw : bw * 3 / 10 < 30 ? 30 : bw * 3 / 10;
    if (left && right && has[PL_PANE_MESH] && lw < 36) lw = 36; /* the mesh's legend, whole */
    if (left) {
        int dh = has[PL_PANE_DEVICES] ? ndev + 2 : 0; /* a row per device */
        if (dh > bh / 2) dh = bh / 2;
        /* the mesh: a replica's box of two stages, its legend and border (7 rows) first */
        int rest = (has[PL_PANE_MESH] ? 7 : 0) + (has[PL_PANE_TOPOLOGY] ? 3 : 0);
        if (has[PL_PANE_MESH] && dh > bh - rest) dh = bh - rest;
        /* no room for a device's row: the devices give it up, the mesh shows the ranks */
        if (has[PL_PANE_MESH] && !has[PL_PANE_TOPOLOGY] && dh < 3 && bh >= 7) {
            dh = 0;
            has[PL_PANE_DEVICES] = 0;
        }
        if (dh < 3 && has[PL_PANE_DEVICES]) dh = 3;
        if (has[PL_PANE_DEVICES]) out->pane[PL_PANE_DEVICES] = (pl_rect){0, by, lw, dh};
        int mh = !has[PL_PANE_MESH] ? 0 : has[PL_PANE_TOPOLOGY] ? (bh - dh + 1) / 2 : bh - dh;
        if (has[PL_PANE_MESH] && has[PL_PANE_TOPOLOGY] && mh < 7) /* its 7 rows first */
            mh = bh - dh - 3 < 7 ? bh - dh - 3 : 7;
        if (has[PL_PANE_MESH] && has[PL_PANE_TOPOLOGY] && mh < (bh - dh + 1) / 2)
            mh = (bh - dh + 1) / 2;
        if (mh) out->pane[PL_PANE_MESH] = (pl_rect){0, by + dh, lw, mh};
        if (has[PL_PANE_TOPOLOGY])
            out->pane[PL_PANE_TOPOLOGY] = (pl_rect){0, by + dh + mh, lw, bh - dh - mh};
    }
    if (right && bh > 0) {
        int rx = lw, rw = bw - lw;
        int th = !has[PL_PANE_TIMELINE] ? 0 : !below ? bh : bh * 3 / 5;
        /* a lane needs 2 rows inside the border: a timeline with less is
         * hidden (w 0), its rows to the panes below it, rather than an
         * empty box (an 80x24 screen with the picture pane) */
        if (below && th < 4) {
            th = 0;
            has[PL_PANE_TIMELINE] = 0;
        }
        if (has[PL_PANE_TIMELINE]) out->pane[PL_PANE_TIMELINE] = (pl_rect){rx, by, rw, th};
        if (below) {
            int k = 0, x = rx;
            static const int row[] = {PL_PANE_SHARDS, PL_PANE_PIPELINE, PL_PANE_MEMORY,
                                      PL_PANE_PICTURE, PL_PANE_METRICS};
            for (int i = 0; i < 5; i++) {
                int p = row[i];
                if (!has[p]) continue;
                int w = k == below - 1 ? rx + rw - x : rw / below;
                out->pane[p] = (pl_rect){x, by + th, w, bh - th};
                x += w;
                k++;
            }
        }
    }
}
