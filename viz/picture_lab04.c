/*
 * picture_lab04.c — Lab 04's pictures (paralab/picture.h's layouts; the
 * contract in vizint.h, "the picture pane"):
 *
 * tiles: A (M x K), B (K x N) and C (M x N) as small grids, a cell per
 * tile of T x T (a cell per f x f tiles when they do not fit: "a cell:
 * 2x2 tiles"), C's tile the block computes marked, and the tiles of A and
 * B its loads read at each step along K (from the record: the bounding box
 * of the elements loaded in that barrier round) lit one step after the
 * other as the picture is revealed:
 *
 *     block (1, 2) computes C[16:32, 32:48] in 4 steps along K (tiles of 16)
 *     step 2 of 4 along K: A[16:32, 16:32] and B[16:32, 32:48] in shared memory
 *     A 64x64      B 64x64      C 64x64
 *     ········     ····░░··     ········
 *     ▒▒██░░░░  ×  ····██··  =  ····◆◆··
 *     ...
 *     █ this step  ▒ loaded before  ░ still to load  ◆ the block's C tile  · others
 *
 * roofline: FLOP/s against FLOP per byte, both on log axes with a labelled
 * tick per decade; the roof (the memory slope bw x I up to the ridge at
 * peak / bw, then the flat FP32 peak), the ridge's column dotted, a point
 * per kernel (its kernel's number, the student's a diamond) with its name
 * on its row where there is room (over no roof, ridge or point) and a legend row each (FLOP/B,
 * FLOP/s, the share of its roof). Where a decade starts is exact: a decade is cpd columns and rpd
 * rows, value v on the x axis at column round((log10 v - lo) cpd) of the plot, on the y axis
 * round((log10 v - lo) rpd) rows above its bottom row.
 *
 * Both draw every mark with its own glyph (UTF-8 and ASCII twins), so that
 * they read without colour, and fit what room there is (80x24: the tiles
 * folded, the roofline's decades fewer rows).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/picture.h"
#include "vizint.h"

/* A cell of g inside r only. */
static void put(viz_grid *g, pl_rect r, int x, int y, uint32_t ch, int fg, int attr)
{
    if (x < r.x || y < r.y || x >= r.x + r.w || y >= r.y + r.h) return;
    viz_put(g, x, y, ch, fg, attr);
}

/* Text inside r only (cut at its right edge). */
static int text(viz_grid *g, pl_rect r, int x, int y, const char *s, int fg, int attr)
{
    if (y < r.y || y >= r.y + r.h || x >= r.x + r.w) return 0;
    int skip = 0;
    while (x + skip < r.x && s[0]) {
        s++; /* the labels cut on the left are ASCII */
        skip++;
    }
    return viz_text(g, x + skip, y, r.x + r.w - x - skip, s, fg, attr);
}

/* ---- tiles ----------------------------------------------------------------------------- */

enum { T_OTHER, T_LATER, T_BEFORE, T_NOW }; /* a cell of A or B, by precedence */

static const uint32_t TILE_U8[4] = {0x00B7, 0x2591, 0x2592, 0x2588}; /* · ░ ▒ █ */
static const char TILE_ASCII[4] = {'.', ':', '+', '#'};
static const int TILE_COL[4] = {COL_DIM, COL_DIM, COL_COPY, COL_KERNEL};
#define C_TILE_U8 0x25C6 /* ◆ */
#define C_TILE_ASCII '@'

typedef struct {
    int tm, tn, tk;     /* tiles along M, N, K */
    int f, cw;          /* tiles per cell each way, columns per cell */
    int am, ak, bk, bn; /* cells of A (am x ak), B (bk x bn); C is am x bn */
    int colw[3];        /* each matrix's column: its grid or its label, the wider */
    int gh, width;      /* grid rows, all three with the gaps */
    char label[3][32];
} tiles_geo;

#define TILES_GAP 5       /* "  x  " between A and B, "  =  " between B and C */
#define TILES_FIXED 4     /* headline, step line, labels, legend (and the fold's note) */
#define TILES_MAX_GRID 16 /* the grid rows a picture asks for */

static int cdiv(long a, long b) { return (int)((a + b - 1) / b); }

static void tiles_fold(const pl_picture *p, int f, int cw, tiles_geo *G)
{
    long T = p->p[3];
    G->tm = cdiv(p->p[0], T);
    G->tn = cdiv(p->p[1], T);
    G->tk = cdiv(p->p[2], T);
    G->f = f;
    G->cw = cw;
    G->am = cdiv(G->tm, f);
    G->ak = cdiv(G->tk, f);
    G->bk = G->ak;
    G->bn = cdiv(G->tn, f);
    snprintf(G->label[0], sizeof G->label[0], "A %ldx%ld", (long)p->p[0], (long)p->p[2]);
    snprintf(G->label[1], sizeof G->label[1], "B %ldx%ld", (long)p->p[2], (long)p->p[1]);
    snprintf(G->label[2], sizeof G->label[2], "C %ldx%ld", (long)p->p[0], (long)p->p[1]);
    int cells[3] = {G->ak, G->bn, G->bn};
    G->width = 2 * TILES_GAP;
    for (int i = 0; i < 3; i++) {
        int gw = cells[i] * cw, lw = (int)strlen(G->label[i]);
        G->colw[i] = gw > lw ? gw : lw;
        G->width += G->colw[i];
    }
    G->gh = G->am > G->bk ? G->am : G->bk;
}

/* The least fold that fits w columns and hmax grid rows (2 columns a cell
 * if they fit, else 1); 0 when not even one cell per matrix does. */
static int tiles_geometry(const pl_picture *p, int w, int hmax, tiles_geo *G)
{
    long T = p->p[3];
    int most = cdiv(p->p[0], T);
    if (cdiv(p->p[1], T) > most) most = cdiv(p->p[1], T);
    if (cdiv(p->p[2], T) > most) most = cdiv(p->p[2], T);
    for (int f = 1; f <= most; f++) {
        for (int cw = 2; cw >= 1; cw--) {
            tiles_fold(p, f, cw, G);
            if (G->gh <= hmax && G->width <= w) return 1;
        }
    }
    return 0;
}

static int tiles_ok(const pl_picture *p)
{
    return p && p->kind == PL_PIC_TILES && p->p[0] > 0 && p->p[1] > 0 && p->p[2] > 0 &&
           p->p[3] > 0 && p->p[4] >= 0 && (size_t)p->p[4] * 8 <= p->ni && (p->p[4] == 0 || p->iv);
}

/* "A[16:32, 0:16]" (a tile of step s, matrix m: 0 A, 1 B), or "no A". */
static void tile_slice(const pl_picture *p, int s, int m, char *buf, size_t cap)
{
    const int32_t *t = p->iv + 8 * s + 4 * m;
    if (t[2] <= 0 || t[3] <= 0)
        snprintf(buf, cap, "no %c", "AB"[m]);
    else
        snprintf(buf, cap, "%c[%d:%d, %d:%d]", "AB"[m], t[0], t[0] + t[2], t[1], t[1] + t[3]);
}

/* The cells (folded) a step's tile of matrix m covers: rows [*r0, *r1], cols [*c0, *c1]; 0: none.
 */
static int tile_cells(const pl_picture *p, const tiles_geo *G, int s, int m, int *r0, int *r1,
                      int *c0, int *c1)
{
    const int32_t *t = p->iv + 8 * s + 4 * m;
    if (t[2] <= 0 || t[3] <= 0 || t[0] < 0 || t[1] < 0) return 0;
    long T = p->p[3], F = (long)G->f * T;
    *r0 = (int)(t[0] / F);
    *r1 = (int)((t[0] + t[2] - 1) / F);
    *c0 = (int)(t[1] / F);
    *c1 = (int)((t[1] + t[3] - 1) / F);
    return 1;
}

static const char *const TILE_WORDS[2][5] = {
    {"this step", "loaded before", "still to load", "the block's C tile", "others"},
    {"now", "before", "to load", "its C tile", "others"}};

/* The legend's form (0 long, 1 short) at width w, and its rows: 2 when
 * the fold's note ("(a cell: 2x2 tiles)") needs a row of its own. */
static int tiles_legend(const tiles_geo *G, int w, int *form, char *fold, size_t cap)
{
    fold[0] = '\0';
    if (G->f > 1) snprintf(fold, cap, "(a cell: %dx%d tiles)", G->f, G->f);
    for (*form = 0; *form < 2; (*form)++) {
        /* a glyph, a blank, the words, two blanks between; the note two blanks after */
        int len = fold[0] ? 2 + (int)strlen(fold) : 0;
        for (int i = 0; i < 5; i++) len += (i ? 2 : 0) + 2 + (int)strlen(TILE_WORDS[*form][i]);
        if (len <= w) return 1;
    }
    *form = 1;
    return fold[0] ? 2 : 1;
}

/* The geometry in w x h (h: the rows for all of it), the fold's note on a row of its own
 * where it must; *rows: all it takes. 0: the tiles do not fit. */
static int tiles_layout_at(const pl_picture *p, int w, int h, int fixed, tiles_geo *G, int *form,
                           char *fold, size_t cap, int *rows)
{
    for (int extra = 0; extra < 2; extra++) {
        if (!tiles_geometry(p, w, h - fixed - extra, G)) continue;
        int lr = tiles_legend(G, w, form, fold, cap);
        if (lr - 1 > extra) continue;
        *rows = fixed - 1 + lr + G->gh;
        return 1;
    }
    return 0;
}

/* The same, and where rows are few the least folded of: everything
 * (*level 0), no headline (1: the pane's title names the block), no
 * labels either (2: the step line names A and B); a level up only where
 * its cells are at most half as many tiles across. */
static int tiles_layout(const pl_picture *p, int w, int h, tiles_geo *G, int *form, char *fold,
                        size_t cap, int *rows, int *level)
{
    int found = 0;
    for (int lv = 0; lv < 3; lv++) {
        tiles_geo g2;
        int f2, r2;
        char fold2[40];
        if (!tiles_layout_at(p, w, h, TILES_FIXED - lv, &g2, &f2, fold2, sizeof fold2, &r2))
            continue;
        if (found && 2 * g2.f > G->f) continue; /* worth a row only where it halves the fold */
        *G = g2;
        *form = f2;
        *rows = r2;
        *level = lv;
        snprintf(fold, cap, "%s", fold2);
        found = 1;
    }
    return found;
}

int viz_pic_tiles_rows(const struct pl_picture *p, int w)
{
    tiles_geo G;
    char fold[40];
    int form, rows;
    if (!tiles_ok(p)) return 1;
    if (!tiles_layout_at(p, w, TILES_MAX_GRID + TILES_FIXED + 1, TILES_FIXED, &G, &form, fold,
                         sizeof fold, &rows))
        return 2;
    return rows;
}

int viz_pic_tiles(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal)
{
    if (r.h < 1 || r.w < 1) return 0;
    if (!tiles_ok(p)) {
        text(g, r, r.x, r.y, "(a tiles picture out of shape)", COL_WARN, 0);
        return 1;
    }
    int S = (int)p->p[4], T = (int)p->p[3], tr = (int)p->p[5], tc = (int)p->p[6];
    int shown = reveal <= 0 ? 0 : (int)ceil(reveal * S - 1e-9);
    if (shown > S) shown = S;
    if (shown < 0) shown = 0;
    int cur = shown - 1;

    /* the step line: the idea in words, the one row there always is */
    char line[256], a[64], b[64];
    if (cur >= 0) {
        tile_slice(p, cur, 0, a, sizeof a);
        tile_slice(p, cur, 1, b, sizeof b);
        snprintf(line, sizeof line, "step %d of %d along K: %s and %s in shared memory", cur + 1, S,
                 a, b);
        if ((int)strlen(line) > r.w)
            snprintf(line, sizeof line, "step %d of %d along K: %s and %s", cur + 1, S, a, b);
        if ((int)strlen(line) > r.w)
            snprintf(line, sizeof line, "step %d of %d: %s, %s", cur + 1, S, a, b);
    } else
        snprintf(line, sizeof line, "%d step%s along K to come", S, S == 1 ? "" : "s");
    if (r.h < TILES_FIXED - 2 + 1) {
        text(g, r, r.x, r.y, line, COL_DEFAULT, 0);
        return 1;
    }
    tiles_geo G;
    char fold[40];
    int form = 1, used = 0, level = 0;
    if (!tiles_layout(p, r.w, r.h, &G, &form, fold, sizeof fold, &used, &level)) {
        text(g, r, r.x, r.y, line, COL_DEFAULT, 0);
        text(g, r, r.x, r.y + 1, "(no room for the tiles)", COL_DIM, 0);
        return 2;
    }

    char head[256];
    long ro = (long)tr * T, co = (long)tc * T;
    long re = ro + T < p->p[0] ? ro + T : p->p[0], ce = co + T < p->p[1] ? co + T : p->p[1];
    snprintf(head, sizeof head,
             "block (%d, %d) computes C[%ld:%ld, %ld:%ld] in %d step%s along K "
             "(tiles of %d)%s",
             tr, tc, ro, re, co, ce, S, S == 1 ? "" : "s", T,
             p->p[7] ? "; the record was cut short" : "");
    if ((int)strlen(head) > r.w)
        snprintf(head, sizeof head, "block (%d, %d): C[%ld:%ld, %ld:%ld], %d steps along K%s", tr,
                 tc, ro, re, co, ce, S, p->p[7] ? ", record cut short" : "");
    int yh = r.y + (level == 0); /* the step line's row */
    if (level == 0) text(g, r, r.x, r.y, head, COL_TITLE, 0);
    text(g, r, r.x, yh, line, COL_DEFAULT, ATTR_BOLD);

    /* each cell's state, A's and B's, from every step's tiles */
    int na = G.am * G.ak, nb = G.bk * G.bn;
    unsigned char *st = calloc((size_t)(na + nb) + 1, 1);
    if (!st) return 2;
    for (int s = 0; s < S; s++) {
        int v = s == cur ? T_NOW : s < cur ? T_BEFORE : T_LATER;
        for (int m = 0; m < 2; m++) {
            int r0, r1, c0, c1;
            if (!tile_cells(p, &G, s, m, &r0, &r1, &c0, &c1)) continue;
            int rows = m ? G.bk : G.am, cols = m ? G.bn : G.ak;
            unsigned char *base = st + (m ? na : 0);
            for (int i = r0; i <= r1 && i < rows; i++)
                for (int j = c0; j <= c1 && j < cols; j++)
                    if (base[i * cols + j] < v) base[i * cols + j] = (unsigned char)v;
        }
    }

    int x[3];
    x[0] = r.x;
    x[1] = x[0] + G.colw[0] + TILES_GAP;
    x[2] = x[1] + G.colw[1] + TILES_GAP;
    int y0 = yh + 1 + (level < 2);
    if (level < 2)
        for (int i = 0; i < 3; i++) text(g, r, x[i], yh + 1, G.label[i], COL_TITLE, 0);
    for (int m = 0; m < 2; m++) {
        int rows = m ? G.bk : G.am, cols = m ? G.bn : G.ak;
        const unsigned char *base = st + (m ? na : 0);
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++) {
                int v = base[i * cols + j];
                uint32_t ch = g->utf8 ? TILE_U8[v] : (uint32_t)TILE_ASCII[v];
                for (int k = 0; k < G.cw; k++)
                    put(g, r, x[m] + j * G.cw + k, y0 + i, v == T_OTHER && k ? ' ' : ch,
                        TILE_COL[v], v == T_NOW ? ATTR_BOLD : 0);
            }
    }
    int ci = tr / G.f, cj = tc / G.f;
    for (int i = 0; i < G.am; i++)
        for (int j = 0; j < G.bn; j++) {
            int mine = i == ci && j == cj;
            uint32_t ch = mine ? (g->utf8 ? C_TILE_U8 : C_TILE_ASCII)
                               : (g->utf8 ? TILE_U8[T_OTHER] : (uint32_t)TILE_ASCII[T_OTHER]);
            for (int k = 0; k < G.cw; k++)
                put(g, r, x[2] + j * G.cw + k, y0 + i, !mine && k ? ' ' : ch,
                    mine ? COL_FOCUS : COL_DIM, mine ? ATTR_BOLD : 0);
        }
    free(st);
    /* A x B = C, on the middle row of the shorter of A and B */
    int mid = y0 + ((G.am < G.bk ? G.am : G.bk) - 1) / 2;
    put(g, r, x[1] - 3, mid, g->utf8 ? 0x00D7 : 'x', COL_DEFAULT, 0);
    put(g, r, x[2] - 3, mid, '=', COL_DEFAULT, 0);

    /* the legend: a glyph and its words each, and how many tiles a cell is */
    uint32_t glyph[5];
    int order[5] = {T_NOW, T_BEFORE, T_LATER, -1, T_OTHER};
    for (int i = 0; i < 5; i++)
        glyph[i] = order[i] < 0 ? (g->utf8 ? C_TILE_U8 : C_TILE_ASCII)
                                : (g->utf8 ? TILE_U8[order[i]] : (uint32_t)TILE_ASCII[order[i]]);
    int yl = y0 + G.gh, xx = r.x;
    for (int i = 0; i < 5; i++) {
        put(g, r, xx, yl, glyph[i], order[i] < 0 ? COL_FOCUS : TILE_COL[order[i]], 0);
        xx += 2;
        xx += text(g, r, xx, yl, TILE_WORDS[form][i], COL_DEFAULT, 0) + 2;
    }
    if (used == TILES_FIXED - level + 1 + G.gh) /* the note on its own row */
        text(g, r, r.x, yl + 1, fold, COL_DIM, 0);
    else
        text(g, r, xx, yl, fold, COL_DIM, 0);
    return used;
}

/* ---- roofline -------------------------------------------------------------------------- */

static int roofline_ok(const pl_picture *p)
{
    if (!p || p->kind != PL_PIC_ROOFLINE || p->p[0] < 0 || p->nd < 2 + 2 * (size_t)p->p[0] ||
        p->ns < 1 + (size_t)p->p[0] || !(p->dv[0] > 0) || !(p->dv[1] > 0) || !isfinite(p->dv[0]) ||
        !isfinite(p->dv[1]))
        return 0;
    for (int i = 0; i < p->p[0]; i++)
        if (!(p->dv[2 + 2 * i] > 0) || !(p->dv[3 + 2 * i] > 0) || !isfinite(p->dv[2 + 2 * i]) ||
            !isfinite(p->dv[3 + 2 * i]))
            return 0;
    return 1;
}

#define RL_YLAB 5   /* "100T" and the axis */
#define RL_RIGHT 12 /* room for the last x tick's label ("1000") and the unit ("  FLOP/B") */
#define RL_MAX_DECADES 8
#define RL_MAX_CPD 12
#define RL_MAX_RPD 3
#define RL_MAX_PH 12 /* the plot's rows at most (but one a decade) */

typedef struct {
    int xlo, xhi, ylo, yhi; /* decades (log10) of the axes */
    int cpd, rpd;           /* columns and rows per decade */
    int pw, ph;             /* the plot spans columns 0..pw and rows 0..ph (from the bottom) */
    int header, axis;       /* 1: the header's rows and the x axis's line are drawn (bare: 0) */
} rl_geo;

static void rl_axes(const pl_picture *p, rl_geo *G)
{
    double peak = p->dv[0], bw = p->dv[1], ridge = peak / bw;
    double amin = ridge, amax = ridge * 10, fmax = peak, fmin = peak;
    for (int i = 0; i < p->p[0]; i++) {
        double a = p->dv[2 + 2 * i], f = p->dv[3 + 2 * i];
        if (a < amin) amin = a;
        if (a > amax) amax = a;
        if (f > fmax) fmax = f;
        if (f < fmin) fmin = f;
    }
    G->xlo = (int)floor(log10(amin) + 1e-9);
    G->xhi = (int)ceil(log10(amax) - 1e-9);
    if (G->xhi <= G->xlo) G->xhi = G->xlo + 1;
    if (G->xhi - G->xlo > RL_MAX_DECADES) G->xlo = G->xhi - RL_MAX_DECADES;
    double left = bw * pow(10, G->xlo);
    if (left < fmin) fmin = left;
    G->yhi = (int)ceil(log10(fmax) - 1e-9);
    G->ylo = (int)floor(log10(fmin) + 1e-9);
    if (G->yhi <= G->ylo) G->ylo = G->yhi - 1;
    if (G->yhi - G->ylo > RL_MAX_DECADES) G->ylo = G->yhi - RL_MAX_DECADES;
}

/* Rows besides the plot's and the header's: the x axis, its labels, the roof's legend. */
#define RL_FIXED 3

/* The geometry at w x h (h <= 0: as tall as it likes) under hr rows of
 * header; 0 when no plot fits. With too few rows for the points' legend
 * rows too, the plot takes what it needs first. */
static int rl_geometry(const pl_picture *p, int w, int h, int hr, rl_geo *G)
{
    rl_axes(p, G);
    int nx = G->xhi - G->xlo, ny = G->yhi - G->ylo, P = (int)p->p[0];
    G->cpd = (w - RL_YLAB - RL_RIGHT) / nx;
    if (G->cpd > RL_MAX_CPD) G->cpd = RL_MAX_CPD;
    G->rpd = ny * RL_MAX_RPD <= RL_MAX_PH ? RL_MAX_RPD
                                          : RL_MAX_PH / ny; /* many decades: fewer rows each */
    if (G->rpd < 1) G->rpd = 1;
    G->header = G->axis = 1;
    if (h > 0) {
        int room = h - hr - RL_FIXED - P - 1;
        int most = G->rpd;
        if (room / ny < G->rpd) G->rpd = room / ny;
        if (G->rpd < 1) {
            G->rpd = (h - hr - RL_FIXED) / ny; /* the axis and its labels, a flowed legend */
            if (G->rpd > most) G->rpd = most;
        }
        if (G->rpd < 1) {
            /* bare: the plot and its x labels, no header, no axis line (an 80x24 screen) */
            G->rpd = (h - 2) / ny;
            if (G->rpd > most) G->rpd = most;
            G->header = G->axis = 0;
        }
    }
    if (G->cpd < 2 || G->rpd < 1) return 0;
    G->pw = G->cpd * nx;
    G->ph = G->rpd * ny;
    return 1;
}

/* Column of value v on the x axis, row (from the bottom) of v on the y axis. */
static int rl_col(const rl_geo *G, double v)
{
    int c = (int)floor((log10(v) - G->xlo) * G->cpd + 0.5);
    return c < 0 ? 0 : c > G->pw ? G->pw : c;
}
static int rl_row(const rl_geo *G, double v)
{
    int c = (int)floor((log10(v) - G->ylo) * G->rpd + 0.5);
    return c < 0 ? 0 : c > G->ph ? G->ph : c;
}

/* 10^d as a tick: "0.01", "0.1", "1", "10", "100", "1000", "10k", ...; with
 * SI prefixes for FLOP/s (flops 1): "100G", "1T". */
static void rl_tick(int d, int flops, char *buf, size_t cap)
{
    static const char pre[] = " kMGTPE";
    if (d < 0) {
        snprintf(buf, cap, "%.*f", -d, pow(10, d));
        return;
    }
    if (!flops && d < 4) {
        snprintf(buf, cap, "%.0f", pow(10, d));
        return;
    }
    int k = d / 3 < 6 ? d / 3 : 6;
    if (k)
        snprintf(buf, cap, "%.0f%c", pow(10, d - 3 * k), pre[k]);
    else
        snprintf(buf, cap, "%.0f", pow(10, d));
}

/* 829e9 -> "829 GFLOP/s", 11.5e12 -> "11.5 TFLOP/s" */
static void rl_flops(double f, char *buf, size_t cap)
{
    static const char *pre[] = {"", "k", "M", "G", "T", "P", "E"};
    int k = 0;
    while (f >= 1000 && k < 6) {
        f /= 1000;
        k++;
    }
    snprintf(buf, cap, "%.*f %sFLOP/s", f < 10 ? 2 : f < 100 ? 1 : 0, f, pre[k]);
}

static void rl_fmt(double v, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.*f", v < 1 ? 2 : v < 100 ? 1 : 0, v);
}

/* The header, in the longest form that fits w: one line, or two (*line1
 * "" when one). Returns its rows. */
static int rl_header(const pl_picture *p, int w, char *line0, char *line1, size_t cap)
{
    char pk[32], rg[32];
    double bw = p->dv[1];
    rl_flops(p->dv[0], pk, sizeof pk);
    rl_fmt(p->dv[0] / bw, rg, sizeof rg);
    line1[0] = '\0';
    snprintf(line0, cap, "the roof of the %s: %s FP32, %.2f TB/s; ridge at %s FLOP/B", p->sv[0], pk,
             bw / 1e12, rg);
    if ((int)strlen(line0) <= w) return 1;
    snprintf(line0, cap, "%s's roof: %s, %.2f TB/s, ridge %s FLOP/B", p->sv[0], pk, bw / 1e12, rg);
    if ((int)strlen(line0) <= w) return 1;
    snprintf(line0, cap, "the roof of the %s:", p->sv[0]);
    snprintf(line1, cap, "%s FP32, %.2f TB/s; ridge at %s FLOP/B", pk, bw / 1e12, rg);
    return 2;
}

#define RL_POINT_HL_U8 0x25C6 /* ◆ */
#define RL_POINT_HL_ASCII '@'

static uint32_t rl_point_glyph(const viz_grid *g, const pl_picture *p, int i)
{
    if (i == p->p[1]) return g->utf8 ? RL_POINT_HL_U8 : RL_POINT_HL_ASCII;
    int n = p->ni == (size_t)p->p[0] ? (int)p->iv[i] : i + 1; /* its kernel's number */
    return n <= 9 ? (uint32_t)('0' + n) : (uint32_t)('a' + (n - 10) % 26);
}

int viz_pic_roofline_rows(const struct pl_picture *p, int w)
{
    rl_geo G;
    char l0[256], l1[256];
    if (!roofline_ok(p)) return 1;
    int hr = rl_header(p, w, l0, l1, sizeof l0);
    if (!rl_geometry(p, w, 0, hr, &G)) return hr + (int)p->p[0];
    return hr + G.ph + 1 + RL_FIXED + (int)p->p[0];
}

int viz_pic_roofline(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal)
{
    (void)reveal; /* a still picture */
    if (r.h < 1 || r.w < 1) return 0;
    if (!roofline_ok(p)) {
        text(g, r, r.x, r.y, "(a roofline out of shape)", COL_WARN, 0);
        return 1;
    }
    double peak = p->dv[0], bw = p->dv[1], ridge = peak / bw;
    int P = (int)p->p[0];
    char l0[256], l1[256];
    int hr = rl_header(p, r.w, l0, l1, sizeof l0);
    rl_geo G;
    int plotted = rl_geometry(p, r.w, r.h, hr, &G);
    if (!plotted || G.header) {
        text(g, r, r.x, r.y, l0, COL_TITLE, 0);
        if (hr > 1) text(g, r, r.x, r.y + 1, l1, COL_TITLE, 0);
    }
    int y = r.y + hr;
    if (!plotted) {
        /* no room for a plot: the points as text */
        for (int i = 0; i < P && y < r.y + r.h; i++, y++) {
            char fl[32], ai[32];
            rl_flops(p->dv[3 + 2 * i], fl, sizeof fl);
            rl_fmt(p->dv[2 + 2 * i], ai, sizeof ai);
            put(g, r, r.x, y, rl_point_glyph(g, p, i), COL_KERNEL, 0);
            char line[128];
            snprintf(line, sizeof line, "%s: %s FLOP/B, %s", p->sv[1 + i], ai, fl);
            text(g, r, r.x + 2, y, line, COL_DEFAULT, 0);
        }
        return y - r.y < r.h ? y - r.y : r.h;
    }
    int x0 = r.x + RL_YLAB, top = r.y + (G.header ? hr : 0); /* plot column 0, plot row ph */
    int bottom = top + G.ph;                                 /* plot row 0 */
#define AT_ROW(row) (bottom - (row))
    /* the y axis with a tick and label per decade */
    for (int row = 0; row <= G.ph; row++) {
        int tick = row % G.rpd == 0;
        put(g, r, x0 - 1, AT_ROW(row), g->utf8 ? (tick ? 0x2524 : 0x2502) : (tick ? '+' : '|'),
            COL_BORDER, 0);
        if (tick) {
            char t[16];
            rl_tick(G.ylo + row / G.rpd, 1, t, sizeof t);
            int n = (int)strlen(t);
            text(g, r, x0 - 1 - n, AT_ROW(row), t, COL_DIM, 0);
        }
    }
    /* the x axis under the plot, its ticks and labels */
    int ax = bottom + 1; /* the x axis's line, its labels under it (bare: no line) */
    if (G.axis) {
        put(g, r, x0 - 1, ax, g->utf8 ? 0x2514 : '+', COL_BORDER, 0);
        for (int c = 0; c <= G.pw; c++) {
            int tick = c % G.cpd == 0;
            put(g, r, x0 + c, ax, g->utf8 ? (tick ? 0x2534 : 0x2500) : (tick ? '+' : '-'),
                COL_BORDER, 0);
        }
    } else
        ax--;
    int lastx = -1000;
    for (int d = 0; d <= G.xhi - G.xlo; d++) {
        char t[16];
        rl_tick(G.xlo + d, 0, t, sizeof t);
        int n = (int)strlen(t), at = x0 + d * G.cpd - (n - 1) / 2;
        if (at <= lastx) continue;
        text(g, r, at, ax + 1, t, COL_DIM, 0);
        lastx = at + n;
    }
    const char *unit = "FLOP/B";
    if (lastx + 2 + (int)strlen(unit) <= r.x + r.w) text(g, r, lastx + 2, ax + 1, unit, COL_DIM, 0);

    /* the roof: the slope up to the ridge, then the flat peak */
    for (int c = 0; c <= G.pw; c++) {
        double ai = pow(10, G.xlo + (double)c / G.cpd), roof = bw * ai < peak ? bw * ai : peak;
        int slope = bw * ai < peak, row = rl_row(&G, roof);
        put(g, r, x0 + c, AT_ROW(row), slope ? (g->utf8 ? 0x2571 : '/') : (g->utf8 ? 0x2500 : '-'),
            COL_WARN, 0);
        if (slope && c < G.pw) {
            /* a slope steeper than a row a column: the rows it climbs */
            double an = pow(10, G.xlo + (double)(c + 1) / G.cpd);
            int next = rl_row(&G, bw * an < peak ? bw * an : peak);
            for (int k = row + 1; k < next; k++)
                put(g, r, x0 + c, AT_ROW(k), g->utf8 ? 0x2571 : '/', COL_WARN, 0);
        }
    }
    /* the ridge: dotted from under the roof to the axis */
    int cr = rl_col(&G, ridge), rr = rl_row(&G, peak);
    for (int row = 0; row < rr; row++)
        put(g, r, x0 + cr, AT_ROW(row), g->utf8 ? 0x250A : ':', COL_DIM, 0);
    /* the points, the highlighted last (on top); each name beside it where it is free */
    int col[PL_PIC_MAX_LABELS], row[PL_PIC_MAX_LABELS];
    for (int k = 0; k <= P; k++) {
        int i = k < P ? k : (int)p->p[1];
        if (i < 0 || (k < P && i == p->p[1])) continue;
        col[i] = rl_col(&G, p->dv[2 + 2 * i]);
        row[i] = rl_row(&G, p->dv[3 + 2 * i]);
        int hl = i == p->p[1];
        put(g, r, x0 + col[i], AT_ROW(row[i]), rl_point_glyph(g, p, i), hl ? COL_FOCUS : COL_KERNEL,
            hl ? ATTR_BOLD | ATTR_REVERSE : ATTR_BOLD);
    }
    /* a point another is drawn over (the same cell, drawn after it: the highlighted last) has
     * no name beside it, and its legend row says so */
    unsigned char hid[PL_PIC_MAX_LABELS] = {0};
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P && !hid[i]; j++)
            hid[i] = j != i && col[j] == col[i] && row[j] == row[i] &&
                     (j == p->p[1] || (i != p->p[1] && j > i));
    for (int k = -1; k < P; k++) { /* the highlighted one's name first: it gets the best place */
        int i = k < 0 ? (int)p->p[1] : k;
        if (i < 0 || (k >= 0 && i == p->p[1]) || hid[i]) continue;
        /* on its row (never another's): right of it, left of it, then further right, further
         * left — the first place that is blank with a blank either side (no roof, no ridge, no
         * other point or name under it); none: the legend names it */
        const char *name = p->sv[1 + i];
        int n = (int)strlen(name), px = x0 + col[i], py = AT_ROW(row[i]);
        int right = r.x + r.w - n, far = right - (px + 3) + 1, nfar = far > 0 ? far : 0;
        int nleft = px - 2 - n - x0 + 1 > 0 ? px - 2 - n - x0 + 1 : 0;
        for (int c = 0; c < 2 + nfar + nleft; c++) {
            int xs = c == 0         ? px + 2
                     : c == 1       ? px - 1 - n
                     : c < 2 + nfar ? px + 3 + (c - 2)
                                    : px - 2 - n - (c - 2 - nfar);
            int ok = 1;
            if (xs < x0 || xs + n > r.x + r.w) continue;
            for (int k2 = -1; k2 <= n && ok; k2++) {
                int xx = xs + k2;
                if (xx < x0 || xx >= r.x + r.w) continue;
                ok = g->cells[py * g->w + xx].ch == ' ';
            }
            if (!ok) continue;
            text(g, r, xs, py, name, i == p->p[1] ? COL_FOCUS : COL_DEFAULT, 0);
            break;
        }
    }
#undef AT_ROW
    /* the legend: the roof's marks, then a row per point (full, else compact, else the
     * points' short entries flowed over the rows there are) */
    y = ax + 2;
    int avail = r.y + r.h - y, namew = 0;
    for (int i = 0; i < P; i++)
        if ((int)strlen(p->sv[1 + i]) > namew) namew = (int)strlen(p->sv[1 + i]);
    char(*line)[160] = calloc((size_t)P + 1, sizeof *line);
    if (!line) return y - r.y < r.h ? y - r.y : r.h;
    int form = 0; /* 0 full, 1 compact, 2 flowed */
    for (form = 0; form < 2; form++) {
        int fits = 1;
        for (int i = 0; i < P; i++) {
            char fl[32], ai[32];
            double a = p->dv[2 + 2 * i], f = p->dv[3 + 2 * i], roof = bw * a < peak ? bw * a : peak;
            double share = 100 * f / roof;
            rl_flops(f, fl, sizeof fl);
            rl_fmt(a, ai, sizeof ai);
            if (form == 0)
                snprintf(line[i], sizeof line[i], "%-*s %6s FLOP/B  %14s  %*.*f%% of its roof",
                         namew, p->sv[1 + i], ai, fl, 3, share < 9.95 ? 1 : 0, share);
            else
                snprintf(line[i], sizeof line[i], "%-*s %s FLOP/B %s %.*f%%", namew, p->sv[1 + i],
                         ai, fl, share < 9.95 ? 1 : 0, share);
            if (hid[i]) {
                size_t k = strlen(line[i]);
                snprintf(line[i] + k, sizeof line[i] - k, " (hidden: same cell)");
            }
            fits = fits && 2 + (int)strlen(line[i]) <= r.w;
        }
        if (fits && avail >= P) break;
    }
    if (form < 2 && avail >= P + 1) {
        int xx = r.x;
        struct {
            uint32_t u8;
            char a;
            const char *w;
        } roof[3] = {
            {0x2571, '/', "memory roof"}, {0x2500, '-', "FP32 peak"}, {0x250A, ':', "ridge"}};
        for (int i = 0; i < 3; i++) {
            put(g, r, xx, y, g->utf8 ? roof[i].u8 : (uint32_t)roof[i].a, i < 2 ? COL_WARN : COL_DIM,
                0);
            xx += 2 + text(g, r, xx + 2, y, roof[i].w, COL_DEFAULT, 0) + 2;
        }
        const char *note = "(FLOP/s against FLOP/B, log-log)";
        if (xx + (int)strlen(note) > r.x + r.w) note = "(y: FLOP/s, log-log)";
        if (xx + (int)strlen(note) > r.x + r.w) note = "(log-log)";
        if (xx + (int)strlen(note) <= r.x + r.w) text(g, r, xx, y, note, COL_DIM, 0);
        y++;
    }
    if (form < 2)
        for (int i = 0; i < P && y < r.y + r.h; i++, y++) {
            int hl = i == p->p[1];
            put(g, r, r.x, y, rl_point_glyph(g, p, i), hl ? COL_FOCUS : COL_KERNEL,
                hl ? ATTR_BOLD | ATTR_REVERSE : ATTR_BOLD);
            text(g, r, r.x + 2, y, line[i], hl ? COL_FOCUS : COL_DEFAULT, hl ? ATTR_BOLD : 0);
        }
    else {
        /* each point's glyph, name and FLOP/s, as many a row as fit */
        int xx = r.x, used = avail > 0;
        for (int i = 0; i < P && avail > 0; i++) {
            char fl[32];
            rl_flops(p->dv[3 + 2 * i], fl, sizeof fl);
            snprintf(line[i], sizeof line[i], "%s %s", p->sv[1 + i], fl);
            int n = 2 + (int)strlen(line[i]);
            if (xx > r.x && xx + n > r.x + r.w) {
                if (y + 1 >= r.y + r.h) break;
                y++;
                xx = r.x;
            }
            int hl = i == p->p[1];
            put(g, r, xx, y, rl_point_glyph(g, p, i), hl ? COL_FOCUS : COL_KERNEL,
                hl ? ATTR_BOLD | ATTR_REVERSE : ATTR_BOLD);
            text(g, r, xx + 2, y, line[i], hl ? COL_FOCUS : COL_DEFAULT, 0);
            xx += n + 2;
        }
        y += used;
    }
    free(line);
    return y - r.y < r.h ? y - r.y : r.h;
}
