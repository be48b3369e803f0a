/*
 * test_picture_lab03.c — Lab 03's picture: a block's reduction tree
 * (paralab/picture.h's PL_PIC_TREE). The builder (core/picture_lab03.c)
 * from hand-made records: a 4-level tree of 16 values in sequential
 * addressing (every triple), the loads of the values making no level, the
 * threads' order not mattering, other blocks and device memory left out;
 * the warp shuffles of one warp (every lane's source); the divergent
 * interleaved tree of 64 threads; a warp-synchronous tail (two adds in one
 * round: two levels); a record with no add refused. The renderer
 * (viz/picture_lab03.c) into a grid in memory: every row of the 4-level
 * tree in UTF-8 and in ASCII, half the levels at reveal 0.5, the
 * divergent tree's warps, the shuffles' lanes, a 256-value tree folded to
 * its first 64 (120 columns) or 32 (80 columns) elements, and the rows it
 * gives up when the pane is short.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../viz/vizint.h"
#include "grid_text.h"
#include "kernels_record.h"
#include "paralab/device.h"
#include "paralab/picture.h"
#include "suites.h"

/* ---- hand-made records ---------------------------------------------------------------- */

typedef struct {
    pl_kernel_record r;
    size_t cap, wcap;
} rec_b;

static void rec_init(rec_b *b, const char *name, unsigned threads)
{
    memset(b, 0, sizeof *b);
    snprintf(b->r.kernel, sizeof b->r.kernel, "%s", name);
    b->r.grid[0] = 4, b->r.grid[1] = b->r.grid[2] = 1;
    b->r.block[0] = threads, b->r.block[1] = b->r.block[2] = 1;
    b->cap = 1 << 16;
    b->r.access = calloc(b->cap, sizeof *b->r.access);
    b->wcap = 1 << 12;
    b->r.warp_ops = calloc(b->wcap, sizeof *b->r.warp_ops);
}

static void acc(rec_b *b, unsigned block, unsigned thread, unsigned round, int space, long elem,
                int store)
{
    if (b->r.naccess == b->cap) return;
    b->r.access[b->r.naccess++] = (pl_record_access){
        .block = block,
        .thread = thread,
        .round = round,
        .site = store,
        .offset = (uint64_t)elem * 4,
        .size = 4,
        .store = (uint8_t)store,
        .space = (uint8_t)space,
    };
}

static void wop(rec_b *b, unsigned thread, unsigned round, int src_lane)
{
    if (b->r.nwarp_ops == b->wcap) return;
    b->r.warp_ops[b->r.nwarp_ops++] = (pl_record_warp_op){
        .block = 0, .thread = thread, .round = round, .src_lane = src_lane, .kind = 2};
}

static void rec_free(rec_b *b)
{
    free(b->r.access);
    free(b->r.warp_ops);
}

/* A block of n threads: each loads in[i] (device memory, range 0) and
 * stores s[t] in round 0; then sequential addressing (half = n/2 .. 1) or
 * interleaved (stride 1 .. n/2), one round each; thread 0 reads s[0] in
 * the last round. reverse: the threads of a round in reverse order, the
 * two loads swapped. stores 0: the adds' stores left out of the log, as
 * the instrumentation leaves them (it checks s[t] once, at its load).
 * Block 1 does the same (left out of the picture). */
static int g_stores = 1;
static void tree_record(rec_b *b, const char *name, unsigned n, int interleaved, int reverse)
{
    rec_init(b, name, n);
    for (unsigned blk = 0; blk < 2; blk++) {
        for (unsigned i = 0; i < n; i++) {
            unsigned t = reverse ? n - 1 - i : i;
            acc(b, blk, t, 0, 1, blk * n + t, 0);
            acc(b, blk, t, 0, PL_RECORD_SHARED, t, 1);
        }
        unsigned round = 1;
        for (unsigned s = interleaved ? 1 : n / 2; interleaved ? s < n : s > 0;
             s = interleaved ? s * 2 : s / 2, round++)
            for (unsigned i = 0; i < n; i++) {
                unsigned t = reverse ? n - 1 - i : i;
                if (interleaved ? t % (2 * s) != 0 : t >= s) continue;
                acc(b, blk, t, round, PL_RECORD_SHARED, reverse ? t + s : t, 0);
                acc(b, blk, t, round, PL_RECORD_SHARED, reverse ? t : t + s, 0);
                if (g_stores) acc(b, blk, t, round, PL_RECORD_SHARED, t, 1);
            }
        acc(b, blk, 0, round, PL_RECORD_SHARED, 0, 0);
        acc(b, blk, 0, round, 1, 1000 + blk, 1);
    }
}

/* Level l's k and triples, checked against want (k, then triples). */
static void check_level(const pl_picture *p, size_t *at, const int *want)
{
    CU_ASSERT_FATAL(*at < p->ni);
    CU_ASSERT_EQUAL(p->iv[*at], want[0]);
    if (p->iv[*at] != want[0]) {
        fprintf(stderr, "  level at %zu: k %d, want %d\n", *at, p->iv[*at], want[0]);
        return;
    }
    for (int i = 0; i < 3 * want[0]; i++) {
        CU_ASSERT_EQUAL(p->iv[*at + 1 + i], want[1 + i]);
        if (p->iv[*at + 1 + i] != want[1 + i])
            fprintf(stderr, "  triple %d part %d: %d, want %d\n", i / 3, i % 3, p->iv[*at + 1 + i],
                    want[1 + i]);
    }
    *at += 1 + 3 * (size_t)want[0];
}

static const int SEQ16[4][1 + 3 * 8] = {
    {8, 0, 0, 8, 1, 1, 9, 2, 2, 10, 3, 3, 11, 4, 4, 12, 5, 5, 13, 6, 6, 14, 7, 7, 15},
    {4, 0, 0, 4, 1, 1, 5, 2, 2, 6, 3, 3, 7},
    {2, 0, 0, 2, 1, 1, 3},
    {1, 0, 0, 1},
};

static void test_tree_4_levels(void)
{
    for (int k = 0; k < 4; k++) {
        int reverse = k & 1;
        g_stores = k < 2;
        rec_b b;
        tree_record(&b, "block_sum", 16, 0, reverse);
        pl_picture p;
        CU_ASSERT_EQUAL_FATAL(pl_picture_tree(&b.r, 0, &p), 0);
        CU_ASSERT_EQUAL(p.kind, PL_PIC_TREE);
        CU_ASSERT_STRING_EQUAL(p.title, "tree of block 0: block_sum");
        CU_ASSERT_EQUAL(p.p[0], 16); /* values */
        CU_ASSERT_EQUAL(p.p[1], 4);  /* levels: the load of round 0 is none */
        CU_ASSERT_EQUAL(p.p[2], 32);
        CU_ASSERT_EQUAL(p.p[3], 0);
        CU_ASSERT_EQUAL(p.p[4], 16);
        CU_ASSERT_EQUAL(p.p[5], 0);
        CU_ASSERT_EQUAL(p.p[6], 0);
        CU_ASSERT_EQUAL(p.ni, 4 + 3 * 15);
        size_t at = 0;
        for (int l = 0; l < 4; l++) check_level(&p, &at, SEQ16[l]);
        CU_ASSERT_EQUAL(at, p.ni);
        pl_picture_free(&p);
        rec_free(&b);
    }
    g_stores = 1;
}

static void test_tree_shuffle(void)
{
    rec_b b;
    rec_init(&b, "block_sum_shuffle", 64);
    /* warp 0 shuffles down by 16, 8, 4, 2, 1 in rounds 3..7 (lanes in
     * reverse order); shared accesses are no shuffle */
    acc(&b, 0, 0, 0, PL_RECORD_SHARED, 0, 1);
    for (int d = 16, round = 3; d > 0; d /= 2, round++)
        for (int l = 31; l >= 0; l--)
            wop(&b, (unsigned)l, (unsigned)round, l + d < 32 ? l + d : -1);
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_tree(&b.r, 1, &p), 0);
    CU_ASSERT_STRING_EQUAL(p.title, "shuffles of block 0: block_sum_shuffle");
    CU_ASSERT_EQUAL(p.p[0], 32); /* lanes: one warp */
    CU_ASSERT_EQUAL(p.p[1], 5);
    CU_ASSERT_EQUAL(p.p[3], 1);
    CU_ASSERT_EQUAL(p.p[4], 64);
    size_t at = 0;
    for (int d = 16; d > 0; d /= 2) {
        int want[1 + 3 * 32], k = 32 - d;
        want[0] = k;
        for (int l = 0; l < k; l++)
            want[1 + 3 * l] = l, want[2 + 3 * l] = l, want[3 + 3 * l] = l + d;
        check_level(&p, &at, want);
    }
    CU_ASSERT_EQUAL(at, p.ni);
    CU_ASSERT_EQUAL(p.p[7], 0);
    pl_picture_free(&p);
    /* warp 1 shuffles too (its lanes read lane 0): left out; alone, it is drawn */
    size_t w0 = b.r.nwarp_ops;
    for (unsigned l = 32; l < 64; l++) wop(&b, l, 9, 0);
    CU_ASSERT_EQUAL_FATAL(pl_picture_tree(&b.r, 1, &p), 0);
    CU_ASSERT_EQUAL(p.p[1], 5);
    CU_ASSERT_EQUAL(p.p[7], 0);
    pl_picture_free(&p);
    memmove(b.r.warp_ops, b.r.warp_ops + w0, 32 * sizeof *b.r.warp_ops);
    b.r.nwarp_ops = 32;
    CU_ASSERT_EQUAL_FATAL(pl_picture_tree(&b.r, 1, &p), 0);
    CU_ASSERT_EQUAL(p.p[0], 32);
    CU_ASSERT_EQUAL(p.p[1], 1);
    CU_ASSERT_EQUAL(p.p[7], 1);
    CU_ASSERT_EQUAL(p.ni, 1 + 3 * 32);
    for (int l = 0; l < 32 && p.ni == 1 + 3 * 32; l++) {
        CU_ASSERT_EQUAL(p.iv[1 + 3 * l], 32 + l); /* the thread */
        CU_ASSERT_EQUAL(p.iv[2 + 3 * l], l);      /* its lane */
        CU_ASSERT_EQUAL(p.iv[3 + 3 * l], 0);
    }
    pl_picture_free(&p);
    /* the shared mode of the same record: one store, no add, no level */
    CU_ASSERT_EQUAL(pl_picture_tree(&b.r, 0, &p), -1);
    rec_free(&b);
}

static void test_tree_interleaved(void)
{
    for (int v = 0; v < 4; v++) {
        int reverse = v & 1;
        g_stores = v < 2;
        rec_b b;
        tree_record(&b, "interleaved", 64, 1, reverse);
        pl_picture p;
        CU_ASSERT_EQUAL_FATAL(pl_picture_tree(&b.r, 0, &p), 0);
        CU_ASSERT_EQUAL(p.p[0], 64);
        CU_ASSERT_EQUAL(p.p[1], 6);
        size_t at = 0;
        for (int s = 1; s < 64; s *= 2) {
            int want[1 + 3 * 32], k = 0;
            for (int t = 0; t < 64; t += 2 * s, k++)
                want[1 + 3 * k] = t, want[2 + 3 * k] = t, want[3 + 3 * k] = t + s;
            want[0] = k;
            CU_ASSERT_EQUAL(k, 32 / s);
            check_level(&p, &at, want);
        }
        CU_ASSERT_EQUAL(at, p.ni);
        pl_picture_free(&p);
        rec_free(&b);
    }
    g_stores = 1;
}

/* A warp-synchronous tail: 8 threads, no barrier between s[t] += s[t+4],
 * s[t] += s[t+2] and s[t] += s[t+1] (round 1): three levels, with or
 * without the stores in the log; a register's add; the dst when the loads
 * come in the other order. */
static void test_tree_one_round(void)
{
    rec_b b;
    rec_init(&b, "tail", 8);
    for (unsigned t = 0; t < 8; t++) acc(&b, 0, t, 0, PL_RECORD_SHARED, t, 1);
    for (unsigned t = 0; t < 4; t++)
        for (unsigned s = 4; s > 0; s /= 2) {
            acc(&b, 0, t, 1, PL_RECORD_SHARED, t, 0);
            acc(&b, 0, t, 1, PL_RECORD_SHARED, t + s, 0);
            acc(&b, 0, t, 1, PL_RECORD_SHARED, t, 1);
        }
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_tree(&b.r, 0, &p), 0);
    CU_ASSERT_EQUAL(p.p[1], 3);
    size_t at = 0;
    static const int l0[] = {4, 0, 0, 4, 1, 1, 5, 2, 2, 6, 3, 3, 7},
                     l1[] = {4, 0, 0, 2, 1, 1, 3, 2, 2, 4, 3, 3, 5},
                     l2[] = {4, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4};
    check_level(&p, &at, l0);
    check_level(&p, &at, l1);
    check_level(&p, &at, l2);
    pl_picture_free(&p);
    rec_free(&b);
    /* the same without the stores (the instrumentation's log): the loads
     * s[t], s[t+4], s[t+2], s[t+1] of one round, adds into s[t] */
    rec_init(&b, "tail", 8);
    for (unsigned t = 0; t < 8; t++) acc(&b, 0, t, 0, PL_RECORD_SHARED, t, 1);
    for (unsigned t = 0; t < 4; t++)
        for (unsigned s = 4; s > 0; s /= 2) {
            acc(&b, 0, t, 1, PL_RECORD_SHARED, t, 0);
            acc(&b, 0, t, 1, PL_RECORD_SHARED, t + s, 0);
        }
    CU_ASSERT_EQUAL_FATAL(pl_picture_tree(&b.r, 0, &p), 0);
    CU_ASSERT_EQUAL(p.p[1], 3);
    at = 0;
    check_level(&p, &at, l0);
    check_level(&p, &at, l1);
    check_level(&p, &at, l2);
    pl_picture_free(&p);
    rec_free(&b);
    /* v = s[t] + s[t+32] into a register (no store), after a level in
     * shared memory: the add of its level, into s[t] */
    rec_init(&b, "to_register", 64);
    for (unsigned t = 0; t < 64; t++) acc(&b, 0, t, 0, PL_RECORD_SHARED, t, 1);
    for (unsigned t = 0; t < 32; t++) {
        acc(&b, 0, t, 1, PL_RECORD_SHARED, t, 0);
        acc(&b, 0, t, 1, PL_RECORD_SHARED, t + 32, 0);
    }
    CU_ASSERT_EQUAL_FATAL(pl_picture_tree(&b.r, 0, &p), 0);
    CU_ASSERT_EQUAL(p.p[0], 64);
    CU_ASSERT_EQUAL(p.p[1], 1);
    CU_ASSERT_EQUAL(p.ni, 1 + 3 * 32);
    for (int t = 0; t < 32 && p.ni == 1 + 3 * 32; t++) {
        CU_ASSERT_EQUAL(p.iv[1 + 3 * t], t);
        CU_ASSERT_EQUAL(p.iv[2 + 3 * t], t);
        CU_ASSERT_EQUAL(p.iv[3 + 3 * t], t + 32);
    }
    pl_picture_free(&p);
    rec_free(&b);
    /* the dst is the element accessed later: s[t] = s[t+2] + s[t] loads
     * s[t+2] first; s[t] is read again (round 2), s[t+2] never */
    rec_init(&b, "swapped", 4);
    for (unsigned t = 0; t < 4; t++) acc(&b, 0, t, 0, PL_RECORD_SHARED, t, 1);
    for (unsigned t = 0; t < 2; t++) {
        acc(&b, 0, t, 1, PL_RECORD_SHARED, t + 2, 0);
        acc(&b, 0, t, 1, PL_RECORD_SHARED, t, 0);
    }
    acc(&b, 0, 0, 2, PL_RECORD_SHARED, 1, 0);
    acc(&b, 0, 0, 2, PL_RECORD_SHARED, 0, 0);
    CU_ASSERT_EQUAL_FATAL(pl_picture_tree(&b.r, 0, &p), 0);
    static const int w0[] = {2, 0, 0, 2, 1, 1, 3}, w1[] = {1, 0, 1, 0};
    at = 0;
    check_level(&p, &at, w0);
    /* round 2: neither is accessed later: the first loaded, s[1] (a
     * guess the log cannot settle: the store was not seen) */
    check_level(&p, &at, w1);
    pl_picture_free(&p);
    rec_free(&b);
    /* no add: only the values' load, device memory, a load without a store */
    rec_init(&b, "copy", 8);
    for (unsigned t = 0; t < 8; t++) {
        acc(&b, 0, t, 0, 1, t, 0);
        acc(&b, 0, t, 0, PL_RECORD_SHARED, t, 1);
        acc(&b, 0, t, 1, PL_RECORD_SHARED, (t + 1) % 8, 0);
        acc(&b, 0, t, 1, 1, t, 1);
    }
    CU_ASSERT_EQUAL(pl_picture_tree(&b.r, 0, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_tree(&b.r, 1, &p), -1);
    rec_free(&b);
}

/* ---- the renderer ----------------------------------------------------------------------- */

static int ncells(const char *s)
{
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static void dump(const viz_grid *g)
{
    if (!getenv("TREE_DUMP")) return;
    char *t = viz_grid_text(g);
    fprintf(stderr, "\n%s", t);
    free(t);
}

/* Rows y0.. of g from x equal want[0 .. n-1], each cut of trailing blanks. */
static void check_rows(const viz_grid *g, int x, int y0, const char *const *want, int n)
{
    char row[2048];
    for (int y = 0; y < n; y++) {
        row_text(g, y0 + y, x, g->w - x, row, sizeof row);
        size_t len = strlen(row);
        while (len && row[len - 1] == ' ') row[--len] = '\0';
        CU_ASSERT_STRING_EQUAL(row, want[y]);
        if (strcmp(row, want[y]))
            fprintf(stderr, "  row %d: got  '%s'\n         want '%s'\n", y0 + y, row, want[y]);
    }
    (void)ncells;
}

/* The picture of a record made by tree_record. */
static void tree_picture(pl_picture *p, const char *name, unsigned n, int interleaved)
{
    rec_b b;
    tree_record(&b, name, n, interleaved, 0);
    CU_ASSERT_EQUAL(pl_picture_tree(&b.r, 0, p), 0);
    rec_free(&b);
}

static void draw(viz_grid *g, int w, int h, int utf8, const pl_picture *p, double reveal, int *rows)
{
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(g, w, h), 0);
    g->utf8 = utf8;
    *rows = viz_pic_tree(g, (pl_rect){0, 0, w, h}, p, reveal);
    dump(g);
}

static const char *const SEQ16_UTF8[] = {
    "16 values in shared memory, 16 threads, 4 levels",
    "       0   4   8   12",
    "values ○○○○○○○○○○○○○○○○",
    "L0     ●●●●●●●●◀◀◀◀◀◀◀◀ s[t] += s[t+8]: 8 threads",
    "  thr  ████████········ warp 0 diverges: 8 of 16 active",
    "L1     ●●●●◀◀◀◀         s[t] += s[t+4]: 4 threads",
    "  thr  ████············ warp 0 diverges: 4 of 16 active",
    "L2     ●●◀◀             s[t] += s[t+2]: 2 threads",
    "  thr  ██·············· warp 0 diverges: 2 of 16 active",
    "L3     ●◀               s[t] += s[t+1]: 1 thread",
    "  thr  █··············· warp 0 diverges: 1 of 16 active",
    "● adds into  ◀▶ read from  ─ add  · not yet added  × feeds nothing  █ adds",
};
static const char *const SEQ16_ASCII[] = {
    "16 values in shared memory, 16 threads, 4 levels",
    "       0   4   8   12",
    "values oooooooooooooooo",
    "L0     ++++++++<<<<<<<< s[t] += s[t+8]: 8 threads",
    "  thr  ########........ warp 0 diverges: 8 of 16 active",
    "L1     ++++<<<<         s[t] += s[t+4]: 4 threads",
    "  thr  ####............ warp 0 diverges: 4 of 16 active",
    "L2     ++<<             s[t] += s[t+2]: 2 threads",
    "  thr  ##.............. warp 0 diverges: 2 of 16 active",
    "L3     +<               s[t] += s[t+1]: 1 thread",
    "  thr  #............... warp 0 diverges: 1 of 16 active",
    "+ adds into  <> read from  - add  . not yet added  x feeds nothing  # adds",
};

/* The 4-level tree at 80x24: every row, UTF-8 and ASCII; the rest blank. */
static void test_render_4_levels(void)
{
    pl_picture p;
    tree_picture(&p, "block_sum", 16, 0);
    CU_ASSERT_EQUAL(viz_pic_tree_rows(&p, 80), 12);
    viz_grid g = {0};
    int rows;
    draw(&g, 80, 24, 1, &p, 1.0, &rows);
    CU_ASSERT_EQUAL(rows, 12);
    check_rows(&g, 0, 0, SEQ16_UTF8, 12);
    static const char *const blank[] = {""};
    for (int y = 12; y < 24; y++) check_rows(&g, 0, y, blank, 1);
    /* colour is not the only difference: dst, src and idle differ by glyph */
    CU_ASSERT_EQUAL(cell(&g, 7, 3)->ch, 0x25CF);
    CU_ASSERT_EQUAL(cell(&g, 15, 3)->ch, 0x25C0);
    CU_ASSERT_NOT_EQUAL(cell(&g, 7, 3)->fg, cell(&g, 15, 3)->fg);
    draw(&g, 80, 24, 0, &p, 1.0, &rows);
    CU_ASSERT_EQUAL(rows, 12);
    check_rows(&g, 0, 0, SEQ16_ASCII, 12);
    for (int y = 0; y < 24; y++)
        for (int x = 0; x < 80; x++) CU_ASSERT(cell(&g, x, y)->ch < 0x7f);
    pl_picture_free(&p);
    viz_grid_free(&g);
}

/* reveal 0.5: the first 2 of 4 levels; the others' rows keep their labels. */
static void test_render_reveal(void)
{
    pl_picture p;
    tree_picture(&p, "block_sum", 16, 0);
    viz_grid g = {0};
    int rows;
    draw(&g, 80, 24, 0, &p, 0.5, &rows);
    CU_ASSERT_EQUAL(rows, 12);
    const char *want[12];
    memcpy(want, SEQ16_ASCII, sizeof want);
    want[7] = "L2", want[8] = "  thr", want[9] = "L3", want[10] = "  thr";
    check_rows(&g, 0, 0, want, 12);
    /* reveal 0: the values only; 0.3: one level (ceil(0.3 x 4) = 2) */
    draw(&g, 80, 24, 0, &p, 0.0, &rows);
    want[3] = "L0", want[4] = "  thr", want[5] = "L1", want[6] = "  thr";
    check_rows(&g, 0, 0, want, 12);
    draw(&g, 80, 24, 0, &p, 0.3, &rows);
    memcpy(want, SEQ16_ASCII, sizeof want);
    want[7] = "L2", want[8] = "  thr", want[9] = "L3", want[10] = "  thr";
    check_rows(&g, 0, 0, want, 12);
    draw(&g, 80, 24, 0, &p, 0.25, &rows);
    want[5] = "L1", want[6] = "  thr";
    check_rows(&g, 0, 0, want, 12);
    pl_picture_free(&p);
    viz_grid_free(&g);
}

/* The interleaved tree of 256 threads: at 120 columns its first 64
 * elements, a threads' row per level with the diverging warps; at 80
 * columns and 14 rows its first 32, no threads' rows (the warps said
 * shorter on the levels' rows); at 8 rows the levels that fit and a count. */
static void test_render_divergent(void)
{
    pl_picture p;
    tree_picture(&p, "interleaved", 256, 1);
    CU_ASSERT_EQUAL(viz_pic_tree_rows(&p, 120), 20);
    viz_grid g = {0};
    int rows;
    draw(&g, 120, 20, 1, &p, 1.0, &rows);
    CU_ASSERT_EQUAL(rows, 20);
    static const char *const wide[] = {
        "256 values in shared memory, 256 threads, 8 levels; the first 64 of 256 drawn",
        "       0   4   8   12  16  20  24  28  32  36  40  44  48  52  56  60",
        "values ○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○",
        "L0     ●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀ s[t] += "
        "s[t+1]: 128 threads",
        "  thr  █·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█· warps 0-7 "
        "diverge: 16 of 32 active",
        "L1     ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀  s[t] += "
        "s[t+2]: 64 threads",
        "  thr  █···█···█···█···█···█···█···█···█···█···█···█···█···█···█···█··· warps 0-7 "
        "diverge: 8 of 32 active",
        "L2     ●───◀   ●───◀   ●───◀   ●───◀   ●───◀   ●───◀   ●───◀   ●───◀    s[t] += "
        "s[t+4]: 32 threads",
    };
    check_rows(&g, 0, 0, wide, 8);
    static const char *const wide_end[] = {
        "L5     ●───────────────────────────────◀                                s[t] += "
        "s[t+32]: 4 threads",
        "  thr  █······························································· 4 warps "
        "diverge: 1 of 32 active",
        "L6     ●─────────────────────────────────────────────────────────────── s[t] += "
        "s[t+64]: 2 threads",
        "  thr  █······························································· 2 warps "
        "diverge: 1 of 32 active",
        "L7     ●─────────────────────────────────────────────────────────────── s[t] += "
        "s[t+128]: 1 thread",
        "  thr  █······························································· warp 0 "
        "diverges: 1 of 32 active",
        "● adds into  ◀▶ read from  ─ add  · not yet added  × feeds nothing  █ adds",
    };
    check_rows(&g, 0, 13, wide_end, 7);
    /* 80x14, ASCII: the first 32, no threads' rows */
    draw(&g, 80, 14, 0, &p, 1.0, &rows);
    CU_ASSERT_EQUAL(rows, 12);
    static const char *const narrow[] = {
        "256 values in shared memory, 256 threads, 8 levels; the first 32 of 256 drawn",
        "       0   4   8   12  16  20  24  28",
        "values oooooooooooooooooooooooooooooooo",
        "L0     +<+<+<+<+<+<+<+<+<+<+<+<+<+<+<+< s[t] += s[t+1]; warps 0-7: 16/32 active",
        "L1     +-< +-< +-< +-< +-< +-< +-< +-<  s[t] += s[t+2]; warps 0-7: 8/32 active",
        "L2     +---<   +---<   +---<   +---<    s[t] += s[t+4]; warps 0-7: 4/32 active",
        "L3     +-------<       +-------<        s[t] += s[t+8]; warps 0-7: 2/32 active",
        "L4     +---------------<                s[t] += s[t+16]; warps 0-7: 1/32 active",
        "L5     +------------------------------- s[t] += s[t+32]; 4 warps: 1/32 active",
        "L6     +------------------------------- s[t] += s[t+64]; 2 warps: 1/32 active",
        "L7     +------------------------------- s[t] += s[t+128]; warp 0: 1/32 active",
        "+ adds into  <> read from  - add  . not yet added  x feeds nothing",
        "",
        "",
    };
    check_rows(&g, 0, 0, narrow, 14);
    /* 80x8: the values, the levels that fit, how many do not */
    draw(&g, 80, 8, 0, &p, 1.0, &rows);
    CU_ASSERT_EQUAL(rows, 8);
    const char *shortp[8];
    shortp[0] = "values oooooooooooooooooooooooooooooooo first 32 of 256";
    for (int i = 1; i < 7; i++) shortp[i] = narrow[2 + i];
    shortp[7] = "+2 more levels (a taller pane shows them)";
    check_rows(&g, 0, 0, shortp, 8);
    /* a narrow pane (58 columns, the picture pane beside the timeline at
     * 120x40): 32 elements, each level's text on a row under it */
    CU_ASSERT_EQUAL(viz_pic_tree_rows(&p, 58), 4 + 3 * 8);
    draw(&g, 58, 36, 1, &p, 1.0, &rows);
    CU_ASSERT_EQUAL(rows, 28);
    static const char *const below[] = {
        "256 values, 256 threads, 8 levels; first 32 drawn",
        "       0   4   8   12  16  20  24  28",
        "values ○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○",
        "L0     ●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀",
        "  thr  █·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█·",
        "       s[t] += s[t+1]; warps 0-7 diverge: 16 of 32 active",
        "L1     ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀",
        "  thr  █···█···█···█···█···█···█···█···",
        "       s[t] += s[t+2]; warps 0-7 diverge: 8 of 32 active",
    };
    check_rows(&g, 0, 0, below, 9);
    static const char *const below_end[] = {
        "L7     ●───────────────────────────────",
        "  thr  █·······························",
        "       s[t] += s[t+128]; warp 0 diverges: 1 of 32 active",
        "● adds into  ◀▶ read  ─ add  · not added  × unused  █ adds",
        "",
    };
    check_rows(&g, 0, 24, below_end, 5);
    /* 58x20: no threads' rows, the text rows kept */
    draw(&g, 58, 20, 0, &p, 1.0, &rows);
    CU_ASSERT_EQUAL(rows, 20);
    static const char *const below_short[] = {
        "256 values, 256 threads, 8 levels; first 32 drawn",
        "       0   4   8   12  16  20  24  28",
        "values oooooooooooooooooooooooooooooooo",
        "L0     +<+<+<+<+<+<+<+<+<+<+<+<+<+<+<+<",
        "       s[t] += s[t+1]; warps 0-7 diverge: 16 of 32 active",
        "L1     +-< +-< +-< +-< +-< +-< +-< +-<",
    };
    check_rows(&g, 0, 0, below_short, 6);
    pl_picture_free(&p);
    viz_grid_free(&g);
}

static void test_render_shuffle(void)
{
    rec_b b;
    rec_init(&b, "block_sum_shuffle", 64);
    for (int d = 16, round = 3; d > 0; d /= 2, round++)
        for (int l = 31; l >= 0; l--)
            wop(&b, (unsigned)l, (unsigned)round, l + d < 32 ? l + d : -1);
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_tree(&b.r, 1, &p), 0);
    rec_free(&b);
    CU_ASSERT_EQUAL(viz_pic_tree_rows(&p, 80), 9);
    viz_grid g = {0};
    int rows;
    draw(&g, 80, 10, 0, &p, 1.0, &rows);
    CU_ASSERT_EQUAL(rows, 9);
    static const char *const lanes[] = {
        "32 lanes of warp 0, 5 shuffle levels",
        "       0   4   8   12  16  20  24  28",
        "lanes  oooooooooooooooooooooooooooooooo",
        "L0     ++++++++++++++++<<<<<<<<<<<<<<<< lane l reads l+16: 16 lanes",
        "L1     ++++++++<<<<<<<<xxxxxxxx         lane l reads l+8; 8 of 24 adds used",
        "L2     ++++<<<<xxxxxxxxxxxxxxxxxxxx     lane l reads l+4; 4 of 28 adds used",
        "L3     ++<<xxxxxxxxxxxxxxxxxxxxxxxxxx   lane l reads l+2; 2 of 30 adds used",
        "L4     +<xxxxxxxxxxxxxxxxxxxxxxxxxxxxx  lane l reads l+1; 1 of 31 adds used",
        "+ adds into  <> read from  - add  . not yet added  x feeds nothing",
        "",
    };
    check_rows(&g, 0, 0, lanes, 10);
    /* UTF-8 at 120: a lane every other cell, no connectors (every lane between is live) */
    draw(&g, 120, 10, 1, &p, 1.0, &rows);
    static const char *const wide[] = {
        "L0     ● ● ● ● ● ● ● ● ● ● ● ● ● ● ● ● ◀ ◀ ◀ ◀ ◀ ◀ ◀ ◀ ◀ ◀ ◀ ◀ ◀ ◀ ◀ ◀  lane l reads "
        "l+16: 16 lanes",
        "L1     ● ● ● ● ● ● ● ● ◀ ◀ ◀ ◀ ◀ ◀ ◀ ◀ × × × × × × × ×                  lane l reads "
        "l+8; 8 of 24 adds used",
        "L2     ● ● ● ● ◀ ◀ ◀ ◀ × × × × × × × × × × × × × × × × × × × ×          lane l reads "
        "l+4; 4 of 28 adds used",
        "L3     ● ● ◀ ◀ × × × × × × × × × × × × × × × × × × × × × × × × × ×      lane l reads "
        "l+2; 2 of 30 adds used",
        "L4     ●─◀ × × × × × × × × × × × × × × × × × × × × × × × × × × × × ×    lane l reads "
        "l+1; 1 of 31 adds used",
    };
    check_rows(&g, 0, 3, wide, 5);
    pl_picture_free(&p);
    viz_grid_free(&g);
}

/* ---- a real kernel, recorded ------------------------------------------------------------ */

/* kernels_record.cu's tree of 16 threads (two blocks of 32 floats, block 0
 * recorded) and its warp of shuffles, run by the simulated GPU: the same
 * triples as the hand-made 4-level tree; the shuffles' lanes. On a real
 * GPU nothing is recorded: pl_device_record_begin refuses. */
static void test_tree_recorded(void)
{
    pl_record_config cfg = {.max_accesses = 4096, .shared = 1, .warp_ops = 1, .block_count = 1};
    if (!pl_device_caps()->records) {
        CU_ASSERT_EQUAL(pl_device_record_begin(&cfg), -1);
        return;
    }
    float *in, *out, h[32];
    for (int i = 0; i < 32; i++) h[i] = (float)(i % 7) - 3.0f;
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&in, sizeof h), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&out, 2 * sizeof(float)), cudaSuccess);
    CU_ASSERT_EQUAL(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
    pl_kernel_record rec;
    CU_ASSERT_EQUAL_FATAL(pl_device_record_begin(&cfg), 0);
    CU_ASSERT_EQUAL(rk_tree_sum(in, out, 32, 16), cudaSuccess);
    CU_ASSERT_EQUAL(cudaDeviceSynchronize(), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(pl_device_record_end(&rec), 0);
    float sums[2];
    CU_ASSERT_EQUAL(cudaMemcpy(sums, out, sizeof sums, cudaMemcpyDeviceToHost), cudaSuccess);
    CU_ASSERT_EQUAL(sums[0], -5.0f); /* the kernel ran: (i % 7) - 3 over i < 16 */
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_tree(&rec, 0, &p), 0);
    CU_ASSERT_STRING_EQUAL(p.title, "tree of block 0: tree_sum");
    CU_ASSERT_EQUAL(p.p[0], 16);
    CU_ASSERT_EQUAL(p.p[1], 4);
    CU_ASSERT_EQUAL(p.p[4], 16);
    CU_ASSERT_EQUAL(p.p[5], 0);
    size_t at = 0;
    for (int l = 0; l < 4; l++) check_level(&p, &at, SEQ16[l]);
    CU_ASSERT_EQUAL(at, p.ni);
    pl_picture_free(&p);
    CU_ASSERT_EQUAL(pl_picture_tree(&rec, 1, &p), -1); /* no shuffle */
    pl_kernel_record_free(&rec);

    int *iin, *iout, hi[32];
    for (int i = 0; i < 32; i++) hi[i] = i;
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&iin, sizeof hi), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&iout, sizeof(int)), cudaSuccess);
    CU_ASSERT_EQUAL(cudaMemcpy(iin, hi, sizeof hi, cudaMemcpyHostToDevice), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(pl_device_record_begin(&cfg), 0);
    CU_ASSERT_EQUAL(rk_shfl_sum(iin, iout), cudaSuccess);
    CU_ASSERT_EQUAL(cudaDeviceSynchronize(), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(pl_device_record_end(&rec), 0);
    CU_ASSERT_EQUAL_FATAL(pl_picture_tree(&rec, 1, &p), 0);
    CU_ASSERT_STRING_EQUAL(p.title, "shuffles of block 0: shfl_sum");
    CU_ASSERT_EQUAL(p.p[0], 32);
    CU_ASSERT_EQUAL(p.p[1], 5);
    CU_ASSERT_EQUAL(p.p[3], 1);
    CU_ASSERT_EQUAL(p.p[7], 0);
    at = 0;
    for (int d = 16; d > 0; d /= 2) {
        int want[1 + 3 * 32], k = 32 - d;
        want[0] = k;
        for (int l = 0; l < k; l++)
            want[1 + 3 * l] = l, want[2 + 3 * l] = l, want[3 + 3 * l] = l + d;
        check_level(&p, &at, want);
    }
    CU_ASSERT_EQUAL(at, p.ni);
    pl_picture_free(&p);
    pl_kernel_record_free(&rec);
    CU_ASSERT_EQUAL(cudaFree(in), cudaSuccess);
    CU_ASSERT_EQUAL(cudaFree(out), cudaSuccess);
    CU_ASSERT_EQUAL(cudaFree(iin), cudaSuccess);
    CU_ASSERT_EQUAL(cudaFree(iout), cudaSuccess);
}

int register_picture_lab03_suite(void)
{
    static const unit_test tests[] = {
        {"a 4-level tree's picture (the builder)", test_tree_4_levels},
        {"the shuffles of one warp", test_tree_shuffle},
        {"the divergent interleaved tree", test_tree_interleaved},
        {"adds in one round; no add", test_tree_one_round},
        {"a 4-level tree drawn (80x24, UTF-8 and ASCII)", test_render_4_levels},
        {"reveal 0.5 shows half the levels", test_render_reveal},
        {"the divergent tree drawn: warps, folding, a short pane", test_render_divergent},
        {"the shuffles' lanes drawn", test_render_shuffle},
        {"a real kernel's tree and shuffles, recorded", test_tree_recorded},
    };
    return UNIT_SUITE("picture lab03", tests);
}
