/*
 * picture_lab02.c — Lab 02's pictures (paralab/picture.h's layouts; the
 * contract in vizint.h):
 *
 * request: one warp's request to global memory. The 32 lanes as a row,
 *   a line down from each to the 32-byte sector its bytes lie in, the
 *   touched sectors as boxes in address order (inside each, the 4-byte
 *   words its lanes use lit, the rest light), the span of memory from the
 *   first touched sector to the last as a strip (touched sectors lit),
 *   and the count: "4 sectors (the fewest: 4)", "32 sectors (8x the
 *   fewest)". A lane whose box does not lie under it (lanes that do not
 *   climb through memory in order) names its box by a letter instead.
 *
 *          0       8       16      24      31           (the ruler)
 *   loads  ●●●●●●●●●●●●●●●●●●●●●●●●●●●●●●●●            (a lane: ●; none: ·)
 *          ││││││││││││││││││││││││││││││││
 *          ↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓
 *          ┌──────┐┌──────┐┌──────┐┌──────┐            (sectors: █ words used,
 *          │██████││██████││██████││██████│             ░ words moved unused)
 *          └──────┘└──────┘└──────┘└──────┘
 *          +0      +32     +64     +96                 (bytes from the first)
 *   memory ████                                        (the span, lit: touched)
 *   4 sectors (the fewest: 4): 128 B moved for 128 B used
 *
 *   Rows: 11; in fewer (80x24) the compact form: the ruler, the lanes, one
 *   row of arrows, the sectors in one row ([██]), the strip, the count (6
 *   rows, the legend left out); under 6 rows only the sectors and the
 *   count. ASCII: * . | v + - # . [ ].
 *
 * banks: one warp's request to shared memory. The 32 banks as columns;
 *   each lane's word at its bank's column (word % 32) in its row (word /
 *   32), marked by what its bank must do: ● one word, ✕ a bank that
 *   serves several distinct words (the conflict: one wavefront each), ◆ a
 *   word several lanes read (a broadcast, free); under the columns each
 *   bank's distinct words (its wavefronts: "waves"); the rows are labelled
 *   by their first word (w0, w32, ...); then "wavefronts: 32 (32-way conflict)" or
 *   "wavefronts: 1 (no conflict)". Rows touched are drawn in order, a gap
 *   of untouched rows as one "~" row, while they take at most 8 lines and
 *   fit; else each line holds 2, 4, 8... rows, a cell the count of
 *   distinct words in it (2-9, + for more), and a note says so instead of
 *   the legend (a tile's 32 rows: 8 lines of 4). Rows: the lines + 4.
 *   ASCII: o X B ~.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/picture.h"
#include "vizint.h"

/* A cell inside r only. */
static void put(viz_grid *g, pl_rect r, int x, int y, uint32_t ch, int fg, int attr)
{
    if (x < r.x || y < r.y || x >= r.x + r.w || y >= r.y + r.h) return;
    viz_put(g, x, y, ch, fg, attr);
}

static void text(viz_grid *g, pl_rect r, int x, int y, const char *s, int fg)
{
    if (y < r.y || y >= r.y + r.h || x >= r.x + r.w) return;
    viz_text(g, x, y, r.x + r.w - x, s, fg, 0);
}

static uint32_t ch2(const viz_grid *g, uint32_t utf, uint32_t ascii)
{
    return g->utf8 ? utf : ascii;
}

/* The columns a lane (or bank) takes at width w after a label of lw: 3, 2 or 1. */
static int pitch_for(int w, int lw) { return w - lw >= 96 ? 3 : w - lw >= 64 ? 2 : 1; }

/* ---- request ------------------------------------------------------------------------ */

enum { REQ_LW = 8, REQ_FULL_ROWS = 11, REQ_COMPACT_ROWS = 6, MAX_SEC = 64 };

typedef struct {
    int lanes, sbytes, size, store;
    int64_t sec[MAX_SEC]; /* touched sectors, ascending (from the first touched) */
    int nsec;
    int lane_box[32];         /* the box of each lane's first byte, -1: none */
    uint8_t used[MAX_SEC][8]; /* per box, its words used (sector bytes / 4, at most 8) */
    long used_bytes;
} req_layout;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void req_analyse(const pl_picture *p, req_layout *q)
{
    memset(q, 0, sizeof *q);
    q->lanes = (int)(p->p[0] < 32 ? p->p[0] : 32);
    if ((size_t)q->lanes > p->ni) q->lanes = (int)p->ni;
    q->sbytes = p->p[1] > 0 ? (int)p->p[1] : 32;
    q->size = p->p[5] > 0 ? (int)p->p[5] : 4;
    q->store = p->p[3] != 0;
    int64_t all[MAX_SEC * 2];
    int n = 0;
    for (int l = 0; l < q->lanes; l++) {
        if (p->iv[l] < 0) continue;
        for (int64_t s = p->iv[l] / q->sbytes; s <= (p->iv[l] + q->size - 1) / q->sbytes; s++)
            if (n < MAX_SEC * 2) all[n++] = s;
    }
    qsort(all, (size_t)n, sizeof *all, cmp_i64);
    for (int i = 0; i < n; i++)
        if ((!i || all[i] != all[i - 1]) && q->nsec < MAX_SEC) q->sec[q->nsec++] = all[i];
    /* the bytes used (lanes' bytes, once each), the words used per box */
    int64_t lo[32], hi[32];
    int nl = 0;
    for (int l = 0; l < q->lanes; l++) {
        q->lane_box[l] = -1;
        if (p->iv[l] < 0) continue;
        int64_t o = p->iv[l], e = o + q->size;
        for (int b = 0; b < q->nsec; b++) {
            int64_t s0 = q->sec[b] * q->sbytes, s1 = s0 + q->sbytes;
            if (o / q->sbytes == q->sec[b]) q->lane_box[l] = b;
            for (int64_t y = o > s0 ? o : s0; y < (e < s1 ? e : s1); y++) {
                int wd = (int)((y - s0) / 4);
                if (wd < 8) q->used[b][wd] = 1;
            }
        }
        lo[nl] = o;
        hi[nl++] = e;
    }
    for (int i = 1; i < nl; i++)
        for (int j = i; j > 0 && lo[j] < lo[j - 1]; j--) {
            int64_t a = lo[j], b = hi[j];
            lo[j] = lo[j - 1], hi[j] = hi[j - 1];
            lo[j - 1] = a, hi[j - 1] = b;
        }
    int64_t end = 0;
    for (int i = 0; i < nl; i++) {
        int64_t a = lo[i] > end ? lo[i] : end;
        if (hi[i] > a) q->used_bytes += hi[i] - a;
        if (hi[i] > end) end = hi[i];
    }
}

/* "4 sectors (the fewest: 4): 128 B moved for 128 B used" */
static void req_summary(const pl_picture *p, const req_layout *q, char *s, size_t cap)
{
    long sectors = (long)p->p[2], fewest = (long)p->p[4];
    char ratio[48];
    if (fewest <= 0 || sectors == fewest)
        snprintf(ratio, sizeof ratio, "the fewest: %ld", fewest);
    else if (sectors % fewest == 0)
        snprintf(ratio, sizeof ratio, "%ldx the fewest", sectors / fewest);
    else
        snprintf(ratio, sizeof ratio, "%.1fx the fewest: %ld", (double)sectors / (double)fewest,
                 fewest);
    snprintf(s, cap, "%ld sector%s (%s): %ld B moved for %ld B used", sectors,
             sectors == 1 ? "" : "s", ratio, sectors * q->sbytes, q->used_bytes);
}

/* The boxes' columns: box b spans [x0 + b*bw, +bw). */
static void req_boxes(viz_grid *g, pl_rect r, const req_layout *q, int x0, int y, int bw, int rows,
                      int letters)
{
    for (int b = 0; b < q->nsec; b++) {
        int bx = x0 + b * bw;
        int alt = b & 1;
        if (bw < 3) { /* no room for walls: sectors told apart by their fill */
            for (int k = 0; k < rows; k++)
                for (int c = 0; c < bw; c++)
                    put(g, r, bx + c, y + k, viz_glyph_ch(g, alt ? G_SHADE : G_FULL), COL_COPY, 0);
            continue;
        }
        int iw = bw - 2, mid = y + (rows == 3);
        if (rows == 3) {
            put(g, r, bx, y, viz_glyph_ch(g, G_TL), COL_BORDER, 0);
            put(g, r, bx + bw - 1, y, viz_glyph_ch(g, G_TR), COL_BORDER, 0);
            put(g, r, bx, y + 2, viz_glyph_ch(g, G_BL), COL_BORDER, 0);
            put(g, r, bx + bw - 1, y + 2, viz_glyph_ch(g, G_BR), COL_BORDER, 0);
            for (int c = 1; c <= iw; c++) {
                put(g, r, bx + c, y, viz_glyph_ch(g, G_H), COL_BORDER, 0);
                put(g, r, bx + c, y + 2, viz_glyph_ch(g, G_H), COL_BORDER, 0);
            }
            put(g, r, bx, mid, viz_glyph_ch(g, G_V), COL_BORDER, 0);
            put(g, r, bx + bw - 1, mid, viz_glyph_ch(g, G_V), COL_BORDER, 0);
        } else {
            put(g, r, bx, mid, '[', COL_BORDER, 0);
            put(g, r, bx + bw - 1, mid, ']', COL_BORDER, 0);
        }
        int words = q->sbytes / 4 < 8 ? q->sbytes / 4 : 8;
        if (words < 1) words = 1;
        for (int c = 0; c < iw; c++) {
            int w0 = c * words / iw, w1 = (c + 1) * words / iw;
            if (w1 <= w0) w1 = w0 + 1;
            int lit = 0;
            for (int k = w0; k < w1 && k < 8; k++) lit |= q->used[b][k];
            put(g, r, bx + 1 + c, mid, viz_glyph_ch(g, lit ? G_FULL : G_LIGHT),
                lit ? COL_COPY : COL_DIM, 0);
        }
        if (letters && iw >= 1) /* the box's letter, for the lanes not above it */
            put(g, r, bx + 1, mid, (uint32_t)(b < 26 ? 'A' + b : 'a' + (b - 26) % 26), COL_TITLE,
                ATTR_BOLD);
    }
}

int viz_pic_request_rows(const struct pl_picture *p, int w)
{
    (void)p;
    (void)w;
    return REQ_FULL_ROWS;
}

int viz_pic_request(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal)
{
    (void)reveal;
    if (r.h < 1 || r.w < 1 || !p || !p->iv) return 0;
    req_layout q;
    req_analyse(p, &q);
    char sum[160];
    req_summary(p, &q, sum, sizeof sum);
    int pitch = pitch_for(r.w, REQ_LW);
    int x0 = r.x + REQ_LW, width = pitch * q.lanes;
    int bw = q.nsec ? width / q.nsec : width;
    if (bw < 1) bw = 1;
    /* does each lane lie above its box? */
    int letters = 0;
    for (int l = 0; l < q.lanes; l++) {
        int b = q.lane_box[l], cx = x0 + pitch * l + (pitch - 1) / 2;
        if (b >= 0 && (cx < x0 + b * bw || cx >= x0 + (b + 1) * bw)) letters = 1;
    }
    if (q.nsec * bw > width + pitch) letters = 1;
    if (r.h < REQ_COMPACT_ROWS || r.w < REQ_LW + q.lanes) {
        int y = r.y;
        if (r.h >= 2) {
            text(g, r, r.x, y, "sectors", COL_DIM);
            req_boxes(g, r, &q, x0, y, bw, 1, 0);
            y++;
        }
        text(g, r, r.x, y, sum, p->p[2] > p->p[4] ? COL_WARN : COL_DEFAULT);
        return y - r.y + 1;
    }
    int full = r.h >= REQ_FULL_ROWS, y = r.y;
    /* the ruler */
    for (int l = 0; l < q.lanes; l += 8) {
        char n[16];
        snprintf(n, sizeof n, "%d", l);
        text(g, r, x0 + pitch * l + (pitch - 1) / 2, y, n, COL_DIM);
    }
    if (q.lanes > 1 && (q.lanes - 1) % 8 >= 3) {
        char n[16];
        snprintf(n, sizeof n, "%d", q.lanes - 1);
        text(g, r, x0 + pitch * (q.lanes - 1) + (pitch - 1) / 2 - ((int)strlen(n) - 1), y, n,
             COL_DIM);
    }
    text(g, r, r.x, y, "lane", COL_DIM);
    y++;
    /* the lanes and their lines down */
    text(g, r, r.x, y, q.store ? "stores" : "loads", COL_DEFAULT);
    int arrows = full ? 2 : 1;
    for (int l = 0; l < q.lanes; l++) {
        int cx = x0 + pitch * l + (pitch - 1) / 2, on = p->iv[l] >= 0;
        put(g, r, cx, y, on ? ch2(g, 0x25CF, '*') : viz_glyph_ch(g, G_DOT),
            on ? COL_DEFAULT : COL_DIM, 0);
        if (!on) continue;
        if (letters) {
            int b = q.lane_box[l];
            put(g, r, cx, y + 1, (uint32_t)(b < 26 ? 'A' + b : 'a' + (b - 26) % 26), COL_TITLE, 0);
            if (arrows == 2) put(g, r, cx, y + 2, viz_glyph_ch(g, G_DOWN), COL_DIM, 0);
        } else {
            if (arrows == 2) put(g, r, cx, y + 1, viz_glyph_ch(g, G_V), COL_DIM, 0);
            put(g, r, cx, y + arrows, viz_glyph_ch(g, G_DOWN), COL_DIM, 0);
        }
    }
    y += 1 + arrows;
    /* the sectors */
    int brow = full ? 3 : 1;
    text(g, r, r.x, y + brow / 2, "sectors", COL_DIM);
    req_boxes(g, r, &q, x0, y, bw, brow, letters);
    y += brow;
    if (full) { /* bytes from the first sector, where they fit */
        int last_end = -1;
        for (int b = 0; b < q.nsec; b++) {
            char n[32];
            snprintf(n, sizeof n, "+%lld", (long long)((q.sec[b] - q.sec[0]) * q.sbytes));
            int bx = x0 + b * bw, len = (int)strlen(n);
            int final = b == q.nsec - 1;
            if (bx <= last_end) continue;
            if (len + 1 > bw && !(b == 0 || final)) continue;
            if (final && len + 1 > bw) bx = x0 + (b + 1) * bw - len; /* right-aligned */
            if (bx <= last_end) continue;
            text(g, r, bx, y, n, COL_DIM);
            last_end = bx + len;
        }
        text(g, r, x0 + q.nsec * bw + 1, y, "bytes", COL_DIM);
        y++;
    }
    /* the span of memory: a column per sector (or several sectors) */
    text(g, r, r.x, y, "memory", COL_DIM);
    long long col_bytes = 0; /* a column of the strip, where it holds several sectors */
    if (q.nsec) {
        int64_t span = q.sec[q.nsec - 1] - q.sec[0] + 1;
        int stripw = r.x + r.w - x0 - 9; /* room for " 124 KiB" after it */
        if (stripw > width) stripw = width;
        if (stripw < 1) stripw = 1;
        int cols = span <= stripw ? (int)span : stripw, per = 1;
        for (int c = 0; c < cols; c++) {
            int64_t s0 = q.sec[0] + (int64_t)c * span / cols,
                    s1 = q.sec[0] + (int64_t)(c + 1) * span / cols;
            if (s1 <= s0) s1 = s0 + 1;
            int lit = 0;
            for (int b = 0; b < q.nsec && !lit; b++) lit = q.sec[b] >= s0 && q.sec[b] < s1;
            for (int k = 0; k < per; k++)
                put(g, r, x0 + c * per + k, y, viz_glyph_ch(g, lit ? G_FULL : G_LIGHT),
                    lit ? COL_COPY : COL_DIM, 0);
        }
        char n[48];
        long long bytes = (long long)(span * q.sbytes);
        if (bytes < 10000)
            snprintf(n, sizeof n, " %lld B", bytes);
        else
            snprintf(n, sizeof n, " %.0f KiB", (double)bytes / 1024);
        col_bytes = span <= stripw ? 0 : (long long)((span * q.sbytes + cols / 2) / cols);
        text(g, r, x0 + cols * per, y, n, COL_DIM);
    }
    y++;
    text(g, r, r.x, y, sum, p->p[2] > p->p[4] ? COL_WARN : COL_DEFAULT);
    y++;
    if (full && y < r.y + r.h) {
        char leg[160], col[48] = "";
        if (col_bytes) snprintf(col, sizeof col, "; memory: a column ~ %lld B", col_bytes);
        int wide = r.w >= 74 + (int)strlen(col);
        snprintf(leg, sizeof leg, "%s%s",
                 wide ? (g->utf8 ? "● a lane's access  ↓ to its 32-byte sector  █ words used  "
                                   "░ moved, unused"
                                 : "* a lane's access  v to its 32-byte sector  # words used  "
                                   ". moved, unused")
                      : (g->utf8 ? "● lane  ↓ its sector  █ word used  ░ moved, unused"
                                 : "* lane  v its sector  # word used  . moved, unused"),
                 col);
        text(g, r, r.x, y, leg, COL_DIM);
        y++;
    }
    return y - r.y;
}

/* ---- banks -------------------------------------------------------------------------- */

/* at most 8 lines of rows (folded 2, 4... rows a line where more are
 * touched), so that a tile's 32 rows leave room for another picture */
enum { BANK_LW = 6, NBANKS = 32, BANK_LINES = 8 };

/* The distinct rows (word / 32) the lanes touch, ascending; how many. */
static int bank_rows(const pl_picture *p, int32_t rows[32])
{
    int lanes = (int)(p->p[0] < 32 ? p->p[0] : 32), nr = 0;
    for (int l = 0; l < lanes && (size_t)l < p->ni; l++) {
        if (p->iv[l] < 0) continue;
        int32_t row = p->iv[l] / NBANKS;
        int i = 0;
        while (i < nr && rows[i] != row) i++;
        if (i == nr) rows[nr++] = row;
    }
    for (int i = 1; i < nr; i++)
        for (int j = i; j > 0 && rows[j] < rows[j - 1]; j--) {
            int32_t t = rows[j];
            rows[j] = rows[j - 1];
            rows[j - 1] = t;
        }
    return nr;
}

/* The lines of rows: a row's index, or -1 - i for a gap before rows[i]. */
static int bank_lines(const int32_t *rows, int nr, int line[64])
{
    int nl = 0;
    for (int i = 0; i < nr; i++) {
        if (i && rows[i] > rows[i - 1] + 1) line[nl++] = -1 - i;
        line[nl++] = i;
    }
    return nl;
}

/* Rows of the bank per line so that nr rows take at most `lines` lines: 1, 2, 4... */
static int bank_fold(int nr, int lines)
{
    int per = 1;
    if (lines < 1) lines = 1;
    while ((nr + per - 1) / per > lines) per *= 2;
    return per;
}

int viz_pic_banks_rows(const struct pl_picture *p, int w)
{
    (void)w;
    int32_t rows[32];
    int line[64], nr = bank_rows(p, rows), nl = bank_lines(rows, nr, line);
    /* the banks' numbers, the lines (folded to BANK_LINES), each bank's
     * words, the count, the legend (or the fold's note) */
    if (nl > BANK_LINES) nl = (nr + bank_fold(nr, BANK_LINES) - 1) / bank_fold(nr, BANK_LINES);
    return nl + 4;
}

int viz_pic_banks(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal)
{
    (void)reveal;
    if (r.h < 1 || r.w < 1 || !p || !p->iv) return 0;
    int lanes = (int)(p->p[0] < 32 ? p->p[0] : 32);
    if ((size_t)lanes > p->ni) lanes = (int)p->ni;
    /* the distinct words, their banks and rows, how many lanes each */
    int32_t word[32];
    int nlanes_of[32], nw = 0;
    for (int l = 0; l < lanes; l++) {
        if (p->iv[l] < 0) continue;
        int k = 0;
        while (k < nw && word[k] != p->iv[l]) k++;
        if (k == nw) {
            word[nw] = p->iv[l];
            nlanes_of[nw++] = 0;
        }
        nlanes_of[k]++;
    }
    int served[NBANKS] = {0};
    for (int k = 0; k < nw; k++) served[word[k] % NBANKS]++;
    int32_t rows[32];
    int line[64], nr = bank_rows(p, rows), nl = bank_lines(rows, nr, line);
    char sum[160];
    long waves = (long)p->p[2];
    if (waves <= 1) {
        int most = 0;
        for (int k = 0; k < nw; k++)
            if (nlanes_of[k] > most) most = nlanes_of[k];
        if (most > 1)
            snprintf(sum, sizeof sum, "wavefronts: %ld (no conflict; a broadcast to %d lanes)",
                     waves, most);
        else
            snprintf(sum, sizeof sum, "wavefronts: %ld (no conflict)", waves);
    } else
        snprintf(sum, sizeof sum, "wavefronts: %ld (%ld-way conflict)", waves, waves);
    char pitch[48];
    snprintf(pitch, sizeof pitch, "; row pitch %lld words", (long long)p->p[3]);
    if (strlen(sum) + strlen(pitch) < sizeof sum) strcat(sum, pitch);
    if (r.h < 4) {
        text(g, r, r.x, r.y, sum, waves > 1 ? COL_WARN : COL_DEFAULT);
        return 1;
    }
    int cw = pitch_for(r.w, BANK_LW), x0 = r.x + BANK_LW, y = r.y;
    /* rows left for the lines; the legend only when everything else fits */
    int avail = r.h - 4, legend = 0;
    if (nl + 4 <= r.h && nl <= BANK_LINES) {
        avail = nl;
        legend = 1;
    }
    if (avail < 1) avail = 1;
    if (avail > BANK_LINES) avail = BANK_LINES;
    int per = 1; /* rows per line where they do not fit: merged, no gap lines */
    if (nl > avail) {
        nl = 0;
        legend = 0;
        per = bank_fold(nr, avail);
        for (int i = 0; i < nr; i += per) line[nl++] = i;
    }
    /* the banks' numbers */
    text(g, r, r.x, y, "bank", COL_DIM);
    int step = cw == 3 ? 1 : cw == 2 ? 4 : 8;
    for (int b = 0; b < NBANKS; b += step) {
        char n[16];
        snprintf(n, sizeof n, "%d", b);
        int len = (int)strlen(n);
        text(g, r, x0 + cw * b + cw / 2 - (len - 1), y, n, COL_DIM);
    }
    y++;
    uint32_t one = ch2(g, 0x25CF, 'o'), conflict = ch2(g, 0x2715, 'X'), bcast = ch2(g, 0x25C6, 'B');
    for (int i = 0; i < nl; i++, y++) {
        if (line[i] < 0) { /* untouched rows between */
            text(g, r, r.x, y, "  ~", COL_DIM);
            for (int b = 0; b < NBANKS; b++) put(g, r, x0 + cw * b + cw / 2, y, '~', COL_DIM, 0);
            continue;
        }
        int i0 = line[i], i1 = per > 1 ? (i0 + per < nr ? i0 + per : nr) : i0 + 1;
        char lab[32];
        char w[24];
        snprintf(w, sizeof w, "w%lld", (long long)rows[i0] * NBANKS);
        snprintf(lab, sizeof lab, "%5s", w);
        text(g, r, r.x, y, lab, COL_DIM);
        for (int b = 0; b < NBANKS; b++) {
            int cnt = 0, lanes_on = 0;
            for (int k = 0; k < nw; k++) {
                int32_t row = word[k] / NBANKS;
                if (word[k] % NBANKS != b || row < rows[i0] || row > rows[i1 - 1]) continue;
                cnt++;
                lanes_on += nlanes_of[k];
            }
            int cx = x0 + cw * b + cw / 2;
            if (!cnt) {
                put(g, r, cx, y, viz_glyph_ch(g, G_DOT), COL_DIM, 0);
                continue;
            }
            if (cnt > 1)
                put(g, r, cx, y, (uint32_t)(cnt <= 9 ? '0' + cnt : '+'), COL_WARN, ATTR_BOLD);
            else if (served[b] > 1)
                put(g, r, cx, y, conflict, COL_WARN, ATTR_BOLD);
            else
                put(g, r, cx, y, lanes_on > 1 ? bcast : one, COL_DEFAULT, 0);
        }
    }
    /* each bank's distinct words: its wavefronts */
    text(g, r, r.x, y, "waves", COL_DIM);
    int wide = 0; /* a count too wide for its column: + (the largest said after) */
    for (int b = 0; b < NBANKS; b++) {
        char n[16];
        snprintf(n, sizeof n, "%d", served[b]);
        int len = (int)strlen(n);
        if (len > cw) {
            snprintf(n, sizeof n, "+");
            if (served[b] > wide) wide = served[b];
        }
        len = (int)strlen(n);
        text(g, r, x0 + cw * b + cw / 2 - (len - 1), y, n, served[b] > 1 ? COL_WARN : COL_DIM);
    }
    if (wide) {
        char n[32];
        snprintf(n, sizeof n, " +: up to %d", wide);
        text(g, r, x0 + cw * NBANKS, y, n, COL_WARN);
    }
    y++;
    text(g, r, r.x, y, sum, waves > 1 ? COL_WARN : COL_DEFAULT);
    y++;
    if (legend && y < r.y + r.h) {
        char leg[200];
        snprintf(leg, sizeof leg, "%s",
                 g->utf8
                     ? "● a lane's word  ✕ conflict: its bank serves several  ◆ broadcast (free)"
                     : "o a lane's word  X conflict: its bank serves several  B broadcast (free)");
        text(g, r, r.x, y, leg, COL_DIM);
        y++;
    } else if (per > 1 && y < r.y + r.h) {
        char n[64];
        snprintf(n, sizeof n, "(%d rows a line: a digit counts a cell's words)", per);
        text(g, r, r.x, y, n, COL_DIM);
        y++;
    }
    return y - r.y;
}
