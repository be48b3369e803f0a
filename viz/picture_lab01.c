/*
 * picture_lab01.c — Lab 01's pictures (paralab/picture.h's layouts; the
 * contract in vizint.h, "the picture pane"):
 *
 * blocks on SMs (PL_PIC_BLOCKS): a cell per block in linear order, lit with
 * its wave's digit (and colour) as the waves are revealed one by one, as
 * the simulated SMs take them ('·', ASCII '.': a block still waiting); few blocks get
 * a column each with the block's index and the SM that ran it; many are
 * folded (k blocks a cell, saying so). A line per wave says which blocks
 * it held on how many SMs.
 *
 * which thread wrote which element (PL_PIC_ELEMENTS): a cell per element
 * (or per k elements, saying so) marked with the block whose thread wrote
 * it (0-9a-z, the block's index mod 36), '?' never written; past the end
 * the tail's threads as idle cells '-', and a store out of bounds '!'.
 *
 * Every mark differs by its glyph (NO_COLOR), all glyphs are ASCII (LANG=C
 * draws the same), and 80 columns fit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/picture.h"
#include "vizint.h"

static const char block_chars[] = "0123456789abcdefghijklmnopqrstuvwxyz";

static int ndigits(int64_t v)
{
    int d = 1;
    while (v >= 10) v /= 10, d++;
    return d;
}

static const char *plural(int64_t n) { return n == 1 ? "" : "s"; }

/* Narrower than this (a pane's half at 80 columns), the pictures take
 * their compact form: shorter lines, fewer rows (the element map's cells
 * in at most 2 rows, its legend in 3). */
#define PIC_NARROW 50

/* ---- blocks on SMs -------------------------------------------------------------------------- */

#define BLOCKS_MAX_ROWS 8   /* cell rows at most before folding */
#define BLOCKS_MAX_WAVES 4  /* wave lines at most (then "... more") */
#define BLOCKS_SMALL_MAX 40 /* blocks drawn a column each, at most */

/* The waves revealed: the first ceil(reveal x waves). */
static int64_t waves_shown(const pl_picture *p, double reveal)
{
    int64_t W = p->p[3] > 0 ? p->p[3] : 1;
    if (reveal >= 1) return W;
    if (reveal <= 0) return 0;
    int64_t s = (int64_t)(reveal * (double)W);
    if ((double)s < reveal * (double)W) s++;
    return s > W ? W : s;
}

/* A column per block (index, SM, wave) when they fit in w. */
static int blocks_small(const pl_picture *p, int w, int *cw)
{
    int64_t drawn = p->p[5];
    int64_t big = drawn - 1 > p->p[1] - 1 ? drawn - 1 : p->p[1] - 1;
    *cw = ndigits(big) + 1;
    return drawn == p->p[0] && drawn <= BLOCKS_SMALL_MAX && 6 + *cw * drawn <= w;
}

/* Many blocks: cells per row, k blocks per cell, rows, in at most max_rows rows. */
static void blocks_fold(const pl_picture *p, int w, int max_rows, int *lw, int64_t *per_row,
                        int64_t *k, int64_t *rows)
{
    int64_t drawn = p->p[5];
    *lw = ndigits(drawn > 1 ? drawn - 1 : 0) + 1;
    *per_row = w - *lw - 1;
    if (*per_row > 10) *per_row -= *per_row % 10;
    if (*per_row < 1) *per_row = 1;
    if (max_rows < 1) max_rows = 1;
    *k = 1;
    while ((drawn + *k * *per_row - 1) / (*k * *per_row) > max_rows) (*k)++;
    *rows = (drawn + *k * *per_row - 1) / (*k * *per_row);
}

/* The lines under the cells for the waves, at the most (a reveal draws a
 * line per wave shown and one for those still waiting). */
static int wave_lines(const pl_picture *p, int w)
{
    int64_t W = p->p[3];
    if (w < PIC_NARROW && W > 1) return 1; /* compact: one line for them all */
    return (int)(W <= BLOCKS_MAX_WAVES + 1 ? W : BLOCKS_MAX_WAVES + 2);
}

/* Cell rows at most before folding (compact: 2, to stand beside the element map at 80x24). */
static int blocks_max_rows(int w) { return w < PIC_NARROW ? 2 : BLOCKS_MAX_ROWS; }

/* The rows below the cells: a fold note (when folded), the wave lines. */
static int blocks_tail_rows(const pl_picture *p, int w, int folded)
{
    return folded + wave_lines(p, w);
}

int viz_pic_blocks_rows(const struct pl_picture *p, int w)
{
    int cw;
    if (blocks_small(p, w, &cw)) return 2 + 3 + wave_lines(p, w);
    int lw;
    int64_t per_row, k, rows;
    blocks_fold(p, w, blocks_max_rows(w), &lw, &per_row, &k, &rows);
    return (int)(2 + rows + blocks_tail_rows(p, w, k > 1 || p->p[5] < p->p[0]));
}

/* Wave v's line: its blocks, the SMs they ran on and the most on one SM
 * (from the picture's own SM and wave per block). */
static void wave_line(viz_grid *g, int x, int y, int w, const pl_picture *p, int64_t v)
{
    int64_t first = -1, last = -1, count = 0, sms = p->p[1] > 0 ? p->p[1] : 1;
    int *on = calloc((size_t)sms, sizeof *on);
    int64_t used = 0, most = 0;
    for (int64_t b = 0; b < p->p[5]; b++) {
        if (p->iv[2 * b + 1] != v) continue;
        if (first < 0) first = b;
        last = b;
        count++;
        int32_t s = p->iv[2 * b];
        if (on && s >= 0 && s < sms) {
            if (on[s]++ == 0) used++;
            if (on[s] > most) most = on[s];
        }
    }
    free(on);
    char line[160], which[48];
    if (first == last)
        snprintf(which, sizeof which, "block %lld", (long long)first);
    else
        snprintf(which, sizeof which, "blocks %lld-%lld", (long long)first, (long long)last);
    if (count == 0)
        snprintf(line, sizeof line, "%c wave %lld: no block recorded", block_chars[v % 10],
                 (long long)v);
    else if (w < PIC_NARROW) /* the SMs' share said by the header */
        snprintf(line, sizeof line, "%c wave %lld: %s on %lld SM%s", block_chars[v % 10],
                 (long long)v, which, (long long)used, plural(used));
    else
        snprintf(line, sizeof line, "%c wave %lld: %s on %lld SM%s, up to %lld per SM",
                 block_chars[v % 10], (long long)v, which, (long long)used, plural(used),
                 (long long)most);
    viz_text(g, x, y, w, line, COL_RANK0 + (int)(v % 8), 0);
}

int viz_pic_blocks(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal)
{
    if (r.h < 1 || r.w < 1) return 0;
    int64_t G = p->p[0], S = p->p[1], per = p->p[2], W = p->p[3], drawn = p->p[5];
    int64_t shown = waves_shown(p, reveal);
    int y = r.y, end = r.y + r.h;
    viz_textf(g, r.x, y++, r.w, COL_DEFAULT, 0, "%lld block%s x %lld thread%s: %lld wave%s",
              (long long)G, plural(G), (long long)p->p[4], plural(p->p[4]), (long long)W,
              plural(W));
    if (y < end)
        viz_textf(g, r.x, y++, r.w, COL_DIM, 0, "%lld SM%s x %lld per SM = %lld %sat once",
                  (long long)S, plural(S), (long long)per, (long long)(S * per),
                  r.w < PIC_NARROW ? "" : "blocks ");
    uint32_t waiting = viz_glyph_ch(g, G_DOT); /* · . a block still waiting */
    int cw;
    if (blocks_small(p, r.w, &cw)) {
        const char *label[3] = {"block", "SM", "wave"};
        for (int row = 0; row < 3 && y < end; row++, y++) {
            viz_text(g, r.x, y, 6, label[row], COL_DIM, 0);
            for (int64_t b = 0; b < drawn; b++) {
                int32_t sm = p->iv[2 * b], v = p->iv[2 * b + 1];
                int lit = v >= 0 && v < shown;
                int x = r.x + 6 + (int)(b * cw), fg = lit ? COL_RANK0 + v % 8 : COL_DIM;
                if (row == 0)
                    viz_textf(g, x, y, cw, lit ? fg : COL_DEFAULT, 0, "%*lld", cw, (long long)b);
                else if (!lit)
                    viz_put(g, x + cw - 1, y, waiting, COL_DIM, 0);
                else if (row == 1)
                    viz_textf(g, x, y, cw, fg, 0, "%*d", cw, sm);
                else
                    viz_put(g, x + cw - 1, y, (uint32_t)block_chars[v % 10], fg, 0);
            }
        }
    } else {
        int lw;
        int64_t per_row, k, rows;
        int max_rows = end - y - blocks_tail_rows(p, r.w, 1);
        if (max_rows > blocks_max_rows(r.w)) max_rows = blocks_max_rows(r.w);
        blocks_fold(p, r.w, max_rows, &lw, &per_row, &k, &rows);
        for (int64_t row = 0; row < rows && y < end; row++, y++) {
            int64_t b0 = row * per_row * k;
            viz_textf(g, r.x, y, lw, COL_DIM, 0, "%*lld", lw - 1, (long long)b0);
            for (int64_t c = 0; c < per_row; c++) {
                int64_t b = b0 + c * k;
                if (b >= drawn) break;
                int32_t v = p->iv[2 * b + 1]; /* a folded cell: its first block's wave */
                if (v >= 0 && v < shown)
                    viz_put(g, r.x + lw + (int)c, y, (uint32_t)block_chars[v % 10],
                            COL_RANK0 + v % 8, 0);
                else
                    viz_put(g, r.x + lw + (int)c, y, waiting, COL_DIM, 0);
            }
        }
        if (drawn < G && y < end)
            viz_textf(g, r.x, y++, r.w, COL_DIM, 0, "blocks 0..%lld shown of %lld; 1 cell = %lld",
                      (long long)(drawn - 1), (long long)G, (long long)k);
        else if (k > 1 && y < end)
            viz_textf(g, r.x, y++, r.w, COL_DIM, 0, "1 cell = %lld blocks%s", (long long)k,
                      r.w < PIC_NARROW ? "" : " (the first one's wave)");
    }
    if (r.w < PIC_NARROW && W > 1) { /* compact: the waves lit, those waiting */
        if (y < end && shown >= W)
            viz_textf(g, r.x, y++, r.w, COL_DEFAULT, 0, "waves 0-%lld lit (digit: wave)",
                      (long long)(W - 1));
        else if (y < end && shown == 0)
            viz_textf(g, r.x, y++, r.w, COL_DIM, 0, "waves 0-%lld wait for an SM",
                      (long long)(W - 1));
        else if (y < end)
            viz_textf(g, r.x, y++, r.w, COL_DIM, 0, "%s%lld lit; %lld-%lld wait for an SM",
                      shown > 1 ? "waves 0-" : "wave ", (long long)(shown - 1), (long long)shown,
                      (long long)(W - 1));
        return y - r.y;
    }
    for (int64_t v = 0; v < shown && y < end; v++, y++) {
        if (v == BLOCKS_MAX_WAVES && W > BLOCKS_MAX_WAVES + 1) {
            if (shown - 1 > v)
                viz_textf(g, r.x, y++, r.w, COL_DIM, 0, "... waves %lld-%lld likewise",
                          (long long)v, (long long)(shown - 1));
            else
                viz_textf(g, r.x, y++, r.w, COL_DIM, 0, "... wave %lld likewise", (long long)v);
            break;
        }
        wave_line(g, r.x, y, r.w, p, v);
    }
    if (shown < W && y < end) {
        char rest[48];
        if (W - shown > 1)
            snprintf(rest, sizeof rest, "waves %lld-%lld", (long long)shown, (long long)(W - 1));
        else
            snprintf(rest, sizeof rest, "wave %lld", (long long)shown);
        viz_put(g, r.x, y, waiting, COL_DIM, 0);
        viz_textf(g, r.x + 2, y++, r.w - 2, COL_DIM, 0, "waiting for an SM: %s", rest);
    }
    return y - r.y;
}

/* ---- which thread wrote which element ------------------------------------------------------- */

#define ELEMENTS_MAX_ROWS 8 /* cell rows at most before folding (compact: 2) */

/* The legend's lines: 4, and one for elements written twice; compact 3. */
static int elements_legend(const pl_picture *p, int w)
{
    return w < PIC_NARROW ? 3 : 4 + (p->p[7] > 0);
}
static int elements_max_rows(int w) { return w < PIC_NARROW ? 2 : ELEMENTS_MAX_ROWS; }

/* The slots drawn: the elements, then those past the end. */
static int64_t element_slots(const pl_picture *p) { return (int64_t)p->ni; }

/* Folded k a cell, the cells never straddle the end of the array: the
 * slots past it start on a cell of their own. The virtual slots: the
 * elements padded to D = ceil(drawn / k) x k, then those past the end. */
static int64_t elements_padded(const pl_picture *p, int64_t k)
{
    int64_t drawn = p->p[3];
    return (drawn + k - 1) / k * k;
}
static int64_t elements_virtual(const pl_picture *p, int64_t k)
{
    return elements_padded(p, k) + (element_slots(p) - p->p[3]);
}

static void elements_fold(const pl_picture *p, int w, int max_rows, int *lw, int64_t *per_row,
                          int64_t *k, int64_t *rows)
{
    int64_t S = element_slots(p);
    *lw = ndigits(S > 1 ? S - 1 : 0) + 1;
    *per_row = w - *lw - 1;
    if (*per_row > 10) *per_row -= *per_row % 10;
    if (*per_row < 1) *per_row = 1;
    if (max_rows < 1) max_rows = 1;
    *k = 1;
    while ((elements_virtual(p, *k) + *k * *per_row - 1) / (*k * *per_row) > max_rows) (*k)++;
    *rows = (elements_virtual(p, *k) + *k * *per_row - 1) / (*k * *per_row);
}

int viz_pic_elements_rows(const struct pl_picture *p, int w)
{
    int lw;
    int64_t per_row, k, rows;
    elements_fold(p, w, elements_max_rows(w), &lw, &per_row, &k, &rows);
    return (int)(1 + rows + elements_legend(p, w));
}

/* Slot i's mark: '!' out of bounds, '?' an element never written, '-' an
 * idle thread of the tail, ' ' nothing; else the writing block's char. */
static void slot_mark(const pl_picture *p, int64_t i, uint32_t *ch, int *fg, int *rank)
{
    int64_t n = p->p[0], drawn = p->p[3], T = p->p[1] * p->p[2];
    int32_t t = p->iv[i];
    if (i >= drawn) { /* past the end */
        if (t >= 0)
            *ch = '!', *fg = COL_WARN, *rank = 4;
        else if (n + (i - drawn) < T)
            *ch = '-', *fg = COL_DIM, *rank = 1;
        else
            *ch = ' ', *fg = COL_DEFAULT, *rank = 0;
    } else if (t < 0) {
        *ch = '?', *fg = COL_WARN, *rank = 3;
    } else {
        int64_t b = p->p[1] > 0 ? t / p->p[1] : 0;
        *ch = (uint32_t)block_chars[b % 36], *fg = COL_RANK0 + (int)(b % 8), *rank = 2;
    }
}

int viz_pic_elements(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal)
{
    (void)reveal; /* a still picture */
    if (r.h < 1 || r.w < 1) return 0;
    int64_t n = p->p[0], tpb = p->p[1], G = p->p[2], drawn = p->p[3], S = element_slots(p);
    int y = r.y, end = r.y + r.h;
    int lw;
    int64_t per_row, k, rows;
    int max_rows = end - y - 1 - elements_legend(p, r.w);
    if (max_rows > elements_max_rows(r.w)) max_rows = elements_max_rows(r.w);
    elements_fold(p, r.w, max_rows, &lw, &per_row, &k, &rows);
    char fold[64] = "";
    if (drawn < n) snprintf(fold, sizeof fold, " (0..%lld shown)", (long long)(drawn - 1));
    char head[128];
    snprintf(head, sizeof head, "%lld element%s%s; 1 cell = %lld element%s", (long long)n,
             plural(n), fold, (long long)k, plural(k));
    if ((int)strlen(head) > r.w) /* narrow: the unit said once */
        snprintf(head, sizeof head, "%lld element%s%s; 1 cell = %lld", (long long)n, plural(n),
                 fold, (long long)k);
    viz_text(g, r.x, y++, r.w, head, COL_DEFAULT, 0);
    int64_t D = elements_padded(p, k), V = elements_virtual(p, k);
    for (int64_t row = 0; row < rows && y < end; row++, y++) {
        int64_t v0 = row * per_row * k; /* a virtual slot: < D an element, else D + j slot n + j */
        viz_textf(g, r.x, y, lw, COL_DIM, 0, "%*lld", lw - 1,
                  (long long)(v0 < D ? v0 : n + (v0 - D)));
        for (int64_t c = 0; c < per_row; c++) {
            int64_t v = v0 + c * k;
            if (v >= V) break;
            /* a folded cell: its most telling mark (! ? block - blank); the
             * elements' last cell ends at drawn, the slots past it start anew */
            uint32_t ch = ' ';
            int fg = COL_DEFAULT, best = -1;
            int64_t i = v < D ? v : drawn + (v - D);
            int64_t lim = v < D ? drawn : S;
            int64_t hi = i + k < lim ? i + k : lim;
            if (hi <= drawn) {
                /* elements only: '?' where one was never written, else the
                 * first's block — the marks of the loop below, found by a
                 * loop the compiler vectorises (2^20 elements in a frame) */
                int32_t least = p->iv[i];
                for (int64_t j = i + 1; j < hi; j++) least = p->iv[j] < least ? p->iv[j] : least;
                slot_mark(p, i, &ch, &fg, &best);
                if (least < 0) ch = '?', fg = COL_WARN;
            } else
                for (int64_t j = i; j < hi; j++) {
                    uint32_t cj;
                    int fj, rj;
                    slot_mark(p, j, &cj, &fj, &rj);
                    if (rj > best) ch = cj, fg = fj, best = rj;
                }
            viz_put(g, r.x + lw + (int)c, y, ch, fg, fg == COL_WARN ? ATTR_BOLD : 0);
        }
    }
    int64_t never = 0;
    for (int64_t i = 0; i < drawn; i++) never += p->iv[i] < 0 ? 1 : 0;
    if (r.w < PIC_NARROW) { /* compact: three lines */
        if (y < end)
            viz_textf(g, r.x, y++, r.w, COL_DEFAULT, 0, "0-9a-z: the block; - tail: %lld idle",
                      (long long)p->p[4]);
        if (y < end) {
            if (p->p[5] > 0)
                viz_textf(g, r.x, y++, r.w, COL_WARN, 0, "! past the end: %lld, thread %lld first",
                          (long long)p->p[5], (long long)p->p[6]);
            else
                viz_textf(g, r.x, y++, r.w, COL_DIM, 0, "! past the end: none");
        }
        if (y < end) {
            char twice[48] = "";
            if (p->p[7] > 0) snprintf(twice, sizeof twice, "; twice: %lld", (long long)p->p[7]);
            viz_textf(g, r.x, y++, r.w, never || p->p[7] ? COL_WARN : COL_DIM, 0,
                      "? never written: %lld%s", (long long)never, twice);
        }
        return y - r.y;
    }
    if (y < end)
        viz_textf(g, r.x, y++, r.w, COL_DEFAULT, 0,
                  "0-9a-z: its block b; its thread b x %lld + threadIdx.x", (long long)tpb);
    if (y < end)
        viz_textf(g, r.x, y++, r.w, COL_DIM, 0, "- tail: %lld of %lld thread%s stored nothing",
                  (long long)p->p[4], (long long)(tpb * G), plural(tpb * G));
    if (y < end) {
        if (p->p[5] > 0)
            viz_textf(g, r.x, y++, r.w, COL_WARN, 0,
                      "! past the end: %lld store%s, the first by thread %lld", (long long)p->p[5],
                      plural(p->p[5]), (long long)p->p[6]);
        else
            viz_textf(g, r.x, y++, r.w, COL_DIM, 0,
                      "! past the end: none (no store at element %lld or later)", (long long)n);
    }
    if (y < end)
        viz_textf(g, r.x, y++, r.w, never ? COL_WARN : COL_DIM, 0,
                  "? never written: %lld element%s", (long long)never, plural(never));
    if (p->p[7] > 0 && y < end)
        viz_textf(g, r.x, y++, r.w, COL_WARN, 0, "written twice or more: %lld element%s",
                  (long long)p->p[7], plural(p->p[7]));
    return y - r.y;
}
