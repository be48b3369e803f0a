/*
 * picture_lab03.c — Lab 03's picture: a block's reduction tree, level by
 * level (paralab/picture.h's PL_PIC_TREE; the contract in vizint.h).
 *
 * One column per element of the shared array (lane, with shuffles), the
 * first 64 at most (32 at 80 columns; the header says so):
 *
 *   256 values in shared memory, 256 threads, 8 levels; the first 64 of 256 drawn
 *          0   4   8   12  16 ...
 *   values ○○○○○○○○○○○○○○○○○○○○○...
 *   L0     ●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●... s[t] += s[t+1]: 128 threads
 *     thr  █·█·█·█·█·█·█·█·█·█·█... warps 0-7 diverge: 16 of 32 active
 *   L1     ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●... s[t] += s[t+2]: 64 threads
 *
 * In a level's row: ● (+) the element an add writes (dst), ◀ ▶ (< >) the
 * element it reads (src), on the side the value flows to, ─ (-) between
 * them over elements already summed, · (.) a value not yet added that no
 * add touches, blank: a value already added into another; × (x) an add
 * that reads or writes a value already added elsewhere (unused: its result
 * feeds nothing, as a shuffle's upper lanes'; the text counts the adds
 * used). After the row (or under it, in a pane narrower than 108
 * columns): the level's pattern (s[t] += s[t+128], s[2t] += s[2t+1]; lane
 * l reads l+16) and its active threads. In shared memory a second row per
 * level marks the active threads, █ (#), and the idle ones, · (.), by
 * thread index, with the warps that diverge (some but not all of their
 * threads active).
 *
 * Reveal: the first ceil(reveal x L) levels; the rows of the others stay
 * blank, so that the picture does not move as it unfolds. Short of rows:
 * the threads' rows go first (their warps then said on the level's row,
 * shorter), then the legend, the ruler, the header (the fold then said
 * beside the values), the text rows under the levels; then the levels that
 * do not fit are counted on the last row.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/picture.h"
#include "vizint.h"

#define MAX_VIEW 64
#define LABEL_W 7 /* "values " */
#define TEXT_W 36 /* the level's text wants this much beside its row */

enum { M_NONE, M_IDLE, M_DST, M_SRC_L, M_SRC_R, M_UNUSED };

typedef struct {
    int64_t n, levels, warp, shuffle, threads;
    int view, cw;          /* elements drawn, cells per element */
    int below;             /* 1: each level's text on a row under it (a narrow pane) */
    const int32_t **level; /* level l's k, then its triples */
    int thread_rows;       /* rows for the threads: a level each in shared memory */
} layout;

static int level_index(const pl_picture *p, layout *L)
{
    L->n = p->p[0];
    L->levels = p->p[1];
    L->warp = p->p[2] > 0 ? p->p[2] : 32;
    L->shuffle = p->p[3];
    L->threads = p->p[4];
    L->level = NULL;
    L->thread_rows = p->p[3] ? 0 : (int)p->p[1];
    if (L->n <= 0 || L->levels <= 0 || !p->iv) return -1;
    L->level = malloc((size_t)L->levels * sizeof *L->level);
    if (!L->level) return -1;
    size_t at = 0;
    for (int64_t l = 0; l < L->levels; l++) {
        if (at >= p->ni) return -1;
        int64_t k = p->iv[at];
        if (k < 0 || at + 1 + 3 * (size_t)k > p->ni) return -1;
        L->level[l] = &p->iv[at];
        at += 1 + 3 * (size_t)k;
    }
    return 0;
}

static void layout_free(layout *L) { free(L->level); }

/* Elements drawn and cells each at width w, and where the levels' text
 * goes: beside the rows (64 elements, or 32, and TEXT_W beside them), else
 * on a row of its own under each level (a narrow pane: 32 elements). */
static void fit(layout *L, int w)
{
    int v = (int)(L->n < MAX_VIEW ? L->n : MAX_VIEW);
    while (v > 32 && LABEL_W + v + 1 + TEXT_W > w) v /= 2;
    L->below = LABEL_W + v + 1 + TEXT_W > w;
    while (v > 1 && v > w - LABEL_W) v /= 2;
    if (v < 1) v = 1;
    int cw = L->below ? (w - LABEL_W) / v : (w - LABEL_W - 1 - 44) / v;
    L->cw = cw < 1 ? 1 : cw > 3 ? 3 : cw;
    L->view = v;
}

static void range_text(char *buf, size_t cap, int a, int b)
{
    if (a == b)
        snprintf(buf, cap, "%d", a);
    else
        snprintf(buf, cap, "%d-%d", a, b);
}

/* Warp w's threads (the last warp of a block may have fewer). */
static int64_t size_of(const layout *L, int w)
{
    int64_t size = L->threads - (int64_t)w * L->warp;
    return size > L->warp ? L->warp : size;
}

/* The level's pattern and count ("s[t] += s[t+128]: 128 threads", the
 * shuffle's "lane l reads l+16: 16 lanes") into pat; its warps into div
 * ("no warp diverges", "warps 0-7 diverge: 16 of 32 active") and, shorter,
 * into sdiv ("warps 0-7: 16/32 active"). */
static void level_text(const layout *L, const int32_t *lv, int unused, char *pat, size_t cap,
                       char *bare, char *div, char *sdiv, size_t dcap)
{
    int64_t k = lv[0];
    const int32_t *t = lv + 1;
    int same_delta = 1, same_xor = 1, thread_is_dst = 1, scaled = 1;
    int64_t delta = k ? t[2] - t[1] : 0, x = k ? t[2] ^ t[1] : 0, scale = 0;
    for (int64_t i = 0; i < k; i++) {
        const int32_t *e = t + 3 * i;
        same_delta &= e[2] - e[1] == delta;
        same_xor &= (e[2] ^ e[1]) == x;
        thread_is_dst &= e[0] == e[1];
        if (e[0]) {
            if (!scale && e[1] % e[0] == 0) scale = e[1] / e[0];
            scaled &= scale && e[1] == scale * e[0];
        } else
            scaled &= e[1] == 0;
    }
    char what[96];
    if (L->shuffle) {
        if (same_delta)
            snprintf(what, sizeof what, "lane l reads l%+lld", (long long)delta);
        else if (same_xor)
            snprintf(what, sizeof what, "lane l reads l^%lld", (long long)x);
        else
            snprintf(what, sizeof what, "lanes read others");
    } else {
        const char *d = thread_is_dst ? "t" : NULL;
        char ds[24];
        if (!d && scaled && scale > 1) {
            snprintf(ds, sizeof ds, "%lldt", (long long)scale);
            d = ds;
        }
        if (d && same_delta)
            snprintf(what, sizeof what, "s[%s] += s[%s%+lld]", d, d, (long long)delta);
        else if (same_delta)
            snprintf(what, sizeof what, "s[d] += s[d%+lld]", (long long)delta);
        else
            snprintf(what, sizeof what, "s[d] += s[src]");
    }
    snprintf(bare, dcap, "%s", what);
    if (unused)
        snprintf(pat, cap, "%s; %lld of %lld adds used", what, (long long)(k - unused),
                 (long long)k);
    else
        snprintf(pat, cap, "%s: %lld %s", what, (long long)k,
                 L->shuffle ? (k == 1 ? "lane" : "lanes") : (k == 1 ? "thread" : "threads"));
    div[0] = sdiv[0] = '\0';
    if (L->shuffle) return;
    /* the warps that diverge: some but not all of their threads active */
    int nw = (int)((L->threads + L->warp - 1) / L->warp);
    if (nw <= 0) return;
    int *c = calloc((size_t)nw, sizeof *c);
    if (!c) return;
    for (int64_t i = 0; i < k; i++)
        if (t[3 * i] >= 0 && t[3 * i] / L->warp < nw) c[t[3 * i] / L->warp]++;
    int first = -1, last = -1, count = -1, ndiv = 0, contiguous = 1, same = 1;
    for (int w = 0; w < nw; w++) {
        int64_t size = size_of(L, w);
        if (c[w] <= 0 || c[w] >= size) continue;
        if (first < 0) first = w, count = c[w];
        if (last >= 0 && last != w - 1) contiguous = 0;
        same &= c[w] == count;
        last = w;
        ndiv++;
    }
    free(c);
    char r[32];
    if (!ndiv) {
        snprintf(div, dcap, "no warp diverges");
        snprintf(sdiv, dcap, "no warp diverges");
    } else if (same && contiguous) {
        range_text(r, sizeof r, first, last);
        snprintf(div, dcap, "warp%s %s diverge%s: %d of %lld active", ndiv > 1 ? "s" : "", r,
                 ndiv > 1 ? "" : "s", count, (long long)size_of(L, first));
        snprintf(sdiv, dcap, "warp%s %s: %d/%lld active", ndiv > 1 ? "s" : "", r, count,
                 (long long)size_of(L, first));
    } else if (same) {
        snprintf(div, dcap, "%d warps diverge: %d of %lld active", ndiv, count,
                 (long long)size_of(L, first));
        snprintf(sdiv, dcap, "%d warps: %d/%lld active", ndiv, count, (long long)size_of(L, first));
    } else {
        snprintf(div, dcap, "%d warps diverge (warp %d: %d of %lld active)", ndiv, first, count,
                 (long long)size_of(L, first));
        snprintf(sdiv, dcap, "%d warps diverge", ndiv);
    }
}

static uint32_t mark_ch(const viz_grid *g, int m)
{
    switch (m) {
    case M_IDLE:
        return viz_glyph_ch(g, G_DOT);
    case M_DST:
        return g->utf8 ? 0x25CF : '+'; /* ● */
    case M_SRC_L:
        return g->utf8 ? 0x25C0 : '<'; /* ◀ */
    case M_SRC_R:
        return g->utf8 ? 0x25B6 : '>'; /* ▶ */
    case M_UNUSED:
        return g->utf8 ? 0x00D7 : 'x'; /* × */
    default:
        return ' ';
    }
}

static int mark_col(int m)
{
    switch (m) {
    case M_DST:
        return COL_FORWARD;
    case M_SRC_L:
    case M_SRC_R:
        return COL_COMM;
    case M_UNUSED:
        return COL_WARN;
    default:
        return COL_DIM;
    }
}

/* The rows wanted: header, ruler, values, levels (and their text rows
 * under them in a narrow pane), threads' rows, legend. */
static int full_rows(const layout *L)
{
    return 4 + (int)L->levels * (1 + L->below) + L->thread_rows;
}

int viz_pic_tree_rows(const struct pl_picture *p, int w)
{
    layout L;
    int rows = 1;
    if (!level_index(p, &L)) {
        fit(&L, w);
        rows = full_rows(&L);
    }
    layout_free(&L);
    return rows;
}

int viz_pic_tree(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal)
{
    if (r.h < 1 || r.w < 1) return 0;
    layout L;
    if (level_index(p, &L)) {
        layout_free(&L);
        viz_text(g, r.x, r.y, r.w, "(a tree picture out of shape)", COL_WARN, 0);
        return 1;
    }
    fit(&L, r.w);
    unsigned char *live = malloc((size_t)L.n), *mark = malloc((size_t)L.n);
    if (!live || !mark) {
        free(live);
        free(mark);
        layout_free(&L);
        return 0;
    }
    memset(live, 1, (size_t)L.n);
    if (reveal < 0 || reveal != reveal) reveal = 0;
    if (reveal > 1) reveal = 1;
    int shown = (int)ceil(reveal * (double)L.levels - 1e-9);
    if (shown > L.levels) shown = (int)L.levels;

    /* what fits: drop the threads' rows, the legend, the ruler, the
     * header, the text rows under the levels (a narrow pane) */
    int thread_rows = L.thread_rows > 0, legend = 1, ruler = 1, header = 1, below = L.below;
    int levels_fit = (int)L.levels;
    int *drop[] = {&thread_rows, &legend, &ruler, &header, &below};
    for (int d = 0; d < 5; d++) {
        int need = header + ruler + 1 + (int)L.levels * (1 + below + thread_rows) + legend;
        if (r.h >= need) break;
        *drop[d] = 0;
    }
    if (r.h < 1 + L.levels) levels_fit = r.h >= 3 ? r.h - 2 : 0; /* values, levels, "+N" */

    int y = r.y, gx = r.x + LABEL_W, tx = gx + L.view * L.cw + 1, tw = r.x + r.w - tx;
    if (L.below) tw = 0; /* no text beside the rows: under them, or none */
    const char *what = L.shuffle ? "lanes" : "values";
    if (header) {
        char fold[48] = "";
        if (L.view < L.n)
            snprintf(fold, sizeof fold, "; the first %d of %lld drawn", L.view, (long long)L.n);
        char head[200];
        if (L.shuffle)
            snprintf(head, sizeof head, "%lld lanes of warp %lld, %lld shuffle level%s%s%s",
                     (long long)L.n, (long long)p->p[7], (long long)L.levels,
                     L.levels == 1 ? "" : "s", fold, p->p[5] ? " (incomplete)" : "");
        else
            snprintf(head, sizeof head,
                     "%lld values in shared memory, %lld threads, %lld level%s%s%s", (long long)L.n,
                     (long long)L.threads, (long long)L.levels, L.levels == 1 ? "" : "s", fold,
                     p->p[5] ? " (incomplete)" : "");
        if ((int)strlen(head) > r.w && !L.shuffle) { /* shorter */
            if (L.view < L.n) snprintf(fold, sizeof fold, "; first %d drawn", L.view);
            snprintf(head, sizeof head, "%lld values, %lld threads, %lld level%s%s%s",
                     (long long)L.n, (long long)L.threads, (long long)L.levels,
                     L.levels == 1 ? "" : "s", fold, p->p[5] ? " (incomplete)" : "");
        }
        viz_text(g, r.x, y, r.w, head, COL_TITLE, 0);
        y++;
    }
    if (ruler) {
        int digits = L.view > 100 ? 3 : L.view > 10 ? 2 : 1, step = 1;
        while (step * L.cw < digits + 1) step *= 2;
        for (int i = 0; i < L.view; i += step)
            viz_textf(g, gx + i * L.cw, y, r.x + r.w - gx - i * L.cw, COL_DIM, 0, "%d", i);
        y++;
    }
    viz_text(g, r.x, y, LABEL_W - 1, what, COL_DEFAULT, 0);
    for (int i = 0; i < L.view; i++)
        viz_put(g, gx + i * L.cw, y, g->utf8 ? 0x25CB : 'o', COL_DEFAULT, 0); /* ○ */
    if (!header && L.view < L.n) /* the fold, said here when the header is not */
        viz_textf(g, gx + L.view * L.cw + 1, y, r.x + r.w - gx - L.view * L.cw - 1, COL_DIM, 0,
                  "first %d of %lld", L.view, (long long)L.n);
    y++;

    for (int l = 0; l < L.levels; l++) {
        const int32_t *lv = L.level[l];
        int64_t k = lv[0];
        const int32_t *t = lv + 1;
        /* marks: from the liveness before this level */
        for (int64_t i = 0; i < L.n; i++) mark[i] = live[i] ? M_IDLE : M_NONE;
        int unused = 0;
        for (int64_t i = 0; i < k; i++) {
            int32_t d = t[3 * i + 1], s = t[3 * i + 2];
            if (d < 0 || s < 0 || d >= L.n || s >= L.n) continue;
            if (!live[d] || !live[s]) {
                unused++;
                if (mark[d] != M_DST && mark[d] != M_SRC_L && mark[d] != M_SRC_R)
                    mark[d] = M_UNUSED;
                continue;
            }
            mark[d] = M_DST;
            if (mark[s] != M_DST) mark[s] = s > d ? M_SRC_L : M_SRC_R;
        }
        int draw = l < shown && l < levels_fit;
        char pat[224], bare[96], div[96], sdiv[96];
        level_text(&L, lv, unused, pat, sizeof pat, bare, div, sdiv, sizeof div);
        if (l < levels_fit) {
            viz_textf(g, r.x, y, LABEL_W - 1, COL_DEFAULT, 0, "L%d", l);
            if (draw) {
                /* connectors first: between a live add's ends, where every
                 * element between them is already summed (blank) */
                for (int64_t i = 0; i < k; i++) {
                    int32_t d = t[3 * i + 1], s = t[3 * i + 2];
                    if (d < 0 || s < 0 || d >= L.n || s >= L.n || !live[d] || !live[s]) continue;
                    int clear = 1;
                    for (int32_t e = (d < s ? d : s) + 1; e < (d < s ? s : d) && clear; e++)
                        clear = mark[e] == M_NONE;
                    if (!clear) continue;
                    int a = (d < s ? d : s) * L.cw + 1, b = (d < s ? s : d) * L.cw - 1;
                    if (b > L.view * L.cw - 1) b = L.view * L.cw - 1;
                    for (int c = a; c <= b; c++) {
                        int e = c / L.cw;
                        if (c % L.cw == 0 && mark[e] != M_NONE) continue;
                        viz_put(g, gx + c, y, viz_glyph_ch(g, G_LINK_H), COL_DIM, 0);
                    }
                }
                for (int i = 0; i < L.view; i++)
                    if (mark[i] != M_NONE)
                        viz_put(g, gx + i * L.cw, y, mark_ch(g, mark[i]), mark_col(mark[i]), 0);
                if ((!thread_rows || L.below) && div[0]) {
                    /* no threads' row: the warps on this one, as they fit */
                    const char *first[4] = {pat, bare, pat, bare},
                               *then[4] = {div, div, sdiv, sdiv};
                    char line[200];
                    int room = L.below ? r.x + r.w - gx : tw;
                    for (int f = 0; f < 4; f++) {
                        snprintf(line, sizeof line, "%s; %s", first[f], then[f]);
                        if ((int)strlen(line) <= room || f == 3) break;
                    }
                    snprintf(pat, sizeof pat, "%s", line);
                }
                if (tw > 0) viz_text(g, tx, y, tw, pat, COL_DEFAULT, 0);
            }
            y++;
            if (thread_rows) {
                viz_text(g, r.x, y, LABEL_W - 1, "  thr", COL_DIM, 0);
                if (draw) {
                    for (int i = 0; i < L.view && i < L.threads; i++)
                        viz_put(g, gx + i * L.cw, y, viz_glyph_ch(g, G_DOT), COL_DIM, 0);
                    for (int64_t i = 0; i < k; i++)
                        if (t[3 * i] >= 0 && t[3 * i] < L.view)
                            viz_put(g, gx + t[3 * i] * L.cw, y, viz_glyph_ch(g, G_FULL), COL_KERNEL,
                                    0);
                    if (tw > 0)
                        viz_text(g, tx, y, tw, (int)strlen(div) <= tw ? div : sdiv,
                                 strcmp(div, "no warp diverges") ? COL_WARN : COL_DIM, 0);
                }
                y++;
            }
            if (below) { /* the text under the level (and its threads) */
                if (draw) viz_text(g, gx, y, r.x + r.w - gx, pat, COL_DEFAULT, 0);
                y++;
            }
        } else if (l == levels_fit && y < r.y + r.h) {
            viz_textf(g, r.x, y, r.w, COL_DIM, 0, "+%lld more level%s (a taller pane shows them)",
                      (long long)(L.levels - levels_fit), L.levels - levels_fit == 1 ? "" : "s");
            y++;
        }
        /* the liveness after it: a live add's source is added in (no longer
         * a value of its own), its dst holds the sum (xor shuffles: both) */
        memcpy(mark, live, (size_t)L.n);
        for (int64_t i = 0; i < k; i++) {
            int32_t d = t[3 * i + 1], s = t[3 * i + 2];
            if (d >= 0 && s >= 0 && d < L.n && s < L.n && mark[d] && mark[s]) live[s] = 0;
        }
        for (int64_t i = 0; i < k; i++) {
            int32_t d = t[3 * i + 1], s = t[3 * i + 2];
            if (d >= 0 && s >= 0 && d < L.n && s < L.n && mark[d] && mark[s]) live[d] = 1;
        }
    }
    if (legend && y < r.y + r.h) {
        /* the longest form that fits */
        static const char *const forms[2][2] = {
            {"+ adds into  <> read from  - add  . not yet added  x feeds nothing",
             "+ adds into  <> read  - add  . not added  x unused"},
            {"● adds into  ◀▶ read from  ─ add  · not yet added  × feeds nothing",
             "● adds into  ◀▶ read  ─ add  · not added  × unused"}};
        const char *thr = g->utf8 ? "  █ adds" : "  # adds";
        char buf[200];
        for (int f = 0; f < 2; f++) {
            snprintf(buf, sizeof buf, "%s%s", forms[g->utf8 != 0][f], thread_rows ? thr : "");
            int cells = 0;
            for (const char *c = buf; *c; c++) cells += ((unsigned char)*c & 0xC0) != 0x80;
            if (cells <= r.w) break;
        }
        viz_text(g, r.x, y, r.w, buf, COL_DIM, 0);
        y++;
    }
    free(live);
    free(mark);
    layout_free(&L);
    return y - r.y;
}
