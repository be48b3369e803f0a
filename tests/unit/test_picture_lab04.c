/*
 * test_picture_lab04.c — Lab 04's pictures: the tiles one block loads
 * along K (pl_picture_tiles from a hand-made kernel record, and its
 * renderer), the roofline (pl_picture_roofline and its renderer: a
 * point's position, the ridge, the ticks), in UTF-8 and ASCII and at
 * 80x24; set PIC04_DUMP=1 to see the grids.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../viz/vizint.h"
#include "grid_text.h"
#include "paralab/picture.h"
#include "suites.h"

/* The cells a UTF-8 string takes. */
static int ncells(const char *s)
{
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Rows y0.. of g from x equal want[0 .. n-1] (and nothing after them on
 * the row, up to w cells); a mismatch printed. */
__attribute__((unused)) static void check_rows(const viz_grid *g, int x, int y0, int w,
                                               const char *const *want, int n)
{
    char row[2048], pad[2048];
    for (int y = 0; y < n; y++) {
        row_text(g, y0 + y, x, w, row, sizeof row);
        /* the want row padded with blanks to w cells */
        snprintf(pad, sizeof pad, "%s%*s", want[y], w - ncells(want[y]), "");
        CU_ASSERT_STRING_EQUAL(row, pad);
        if (strcmp(row, pad))
            fprintf(stderr, "  row %d: got  '%s'\n         want '%s'\n", y0 + y, row, pad);
    }
}

static void dump(const viz_grid *g)
{
    if (!getenv("PIC04_DUMP")) return;
    char *t = viz_grid_text(g);
    fprintf(stderr, "\n%s", t);
    free(t);
}

/* ---- a hand-made record of the tiled kernel ----------------------------------------- */

typedef struct {
    pl_kernel_record rec;
    size_t cap;
} rec_buf;

static void add(rec_buf *b, uint32_t block, uint32_t thread, uint32_t round, uint32_t site,
                uint64_t offset, int store, int space)
{
    if (b->rec.naccess == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 1024;
        b->rec.access = realloc(b->rec.access, b->cap * sizeof *b->rec.access);
    }
    b->rec.access[b->rec.naccess++] = (pl_record_access){.block = block,
                                                         .thread = thread,
                                                         .round = round,
                                                         .site = site,
                                                         .offset = offset,
                                                         .size = 4,
                                                         .store = (uint8_t)store,
                                                         .space = (uint8_t)space};
}

/* What the emulator records of Lab 04's reference (solution.cu) for
 * C = A.B with A M x K, B K x N, tiles of T, for the blocks in [first,
 * first + count): per step along K (round 2s), each thread's load of A
 * (range 0: space 1) and of B (range 1: space 2) where it falls inside,
 * its stores into the shared tiles; in round 2s + 1 the reads of the
 * shared tiles (none of global memory); at the end the store of C (not a
 * logged range: absent). */
static void record_tiled(rec_buf *b, int M, int N, int K, int T, unsigned first, unsigned count)
{
    memset(b, 0, sizeof *b);
    unsigned gx = (unsigned)((N + T - 1) / T), gy = (unsigned)((M + T - 1) / T);
    b->rec.grid[0] = gx;
    b->rec.grid[1] = gy;
    b->rec.grid[2] = 1;
    b->rec.block[0] = b->rec.block[1] = (unsigned)T;
    b->rec.block[2] = 1;
    snprintf(b->rec.kernel, sizeof b->rec.kernel, "matmul_tiled");
    for (unsigned blk = first; blk < first + count && blk < gx * gy; blk++) {
        int bx = (int)(blk % gx), by = (int)(blk / gx);
        for (int k0 = 0, s = 0; k0 < K; k0 += T, s++)
            for (int ty = 0; ty < T; ty++)
                for (int tx = 0; tx < T; tx++) {
                    uint32_t th = (uint32_t)(tx + T * ty), rd = (uint32_t)(2 * s);
                    int row = by * T + ty, col = bx * T + tx;
                    if (row < M && k0 + tx < K)
                        add(b, blk, th, rd, 0, 4ull * ((uint64_t)row * K + k0 + tx), 0, 1);
                    add(b, blk, th, rd, 1, 4ull * (ty * T + tx), 1, PL_RECORD_SHARED);
                    if (k0 + ty < K && col < N)
                        add(b, blk, th, rd, 2, 4ull * ((uint64_t)(k0 + ty) * N + col), 0, 2);
                    add(b, blk, th, rd, 3, 4ull * (T * T + ty * T + tx), 1, PL_RECORD_SHARED);
                    for (int k = 0; k < T; k++) {
                        add(b, blk, th, rd + 1, 4, 4ull * (ty * T + k), 0, PL_RECORD_SHARED);
                        add(b, blk, th, rd + 1, 5, 4ull * (T * T + k * T + tx), 0,
                            PL_RECORD_SHARED);
                    }
                }
    }
}

static void expect_tile(const pl_picture *p, int s, int m, int r0, int c0, int rows, int cols)
{
    const int32_t *t = p->iv + 8 * s + 4 * m;
    CU_ASSERT_EQUAL(t[0], r0);
    CU_ASSERT_EQUAL(t[1], c0);
    CU_ASSERT_EQUAL(t[2], rows);
    CU_ASSERT_EQUAL(t[3], cols);
    if (t[0] != r0 || t[1] != c0 || t[2] != rows || t[3] != cols)
        fprintf(stderr, "  step %d %c: got (%d %d %d %d) want (%d %d %d %d)\n", s, "AB"[m], t[0],
                t[1], t[2], t[3], r0, c0, rows, cols);
}

/* M = N = K = 64, tiles of 16: the block at tile (1, 2) loads, at step s,
 * A[16:32, 16s:16s+16] and B[16s:16s+16, 32:48]; every block of the grid
 * recorded (the others' loads left out), and the block at (0, 0) too. */
static void test_tiles_builder(void)
{
    rec_buf b;
    record_tiled(&b, 64, 64, 64, 16, 0, 0xffffffffu);
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_tiles(&b.rec, 64, 64, 64, 16, 1, 2, &p), 0);
    CU_ASSERT_EQUAL(p.kind, PL_PIC_TILES);
    CU_ASSERT_STRING_EQUAL(p.title, "tiles of block (1, 2)");
    const int64_t want[8] = {64, 64, 64, 16, 4, 1, 2, 0};
    for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(p.p[i], want[i]);
    CU_ASSERT_EQUAL_FATAL(p.ni, 32);
    for (int s = 0; s < 4; s++) {
        expect_tile(&p, s, 0, 16, 16 * s, 16, 16);
        expect_tile(&p, s, 1, 16 * s, 32, 16, 16);
    }
    pl_picture_free(&p);

    CU_ASSERT_EQUAL_FATAL(pl_picture_tiles(&b.rec, 64, 64, 64, 16, 0, 0, &p), 0);
    CU_ASSERT_EQUAL(p.p[4], 4);
    for (int s = 0; s < 4; s++) {
        expect_tile(&p, s, 0, 0, 16 * s, 16, 16);
        expect_tile(&p, s, 1, 16 * s, 0, 16, 16);
    }
    pl_picture_free(&p);
    free(b.rec.access);
}

/* Edges: M = 40, N = 24, K = 40 with tiles of 16: the block at (2, 1)
 * loads only what falls inside (A's rows 32..39, B's columns 16..23, the
 * last step's 8 of K); a record of that block alone; the truncated flag;
 * a round that loads A alone; the refusals. */
static void test_tiles_edges(void)
{
    rec_buf b;
    record_tiled(&b, 40, 24, 40, 16, 2 * 2 + 1, 1);
    b.rec.truncated = 1;
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_tiles(&b.rec, 40, 24, 40, 16, 2, 1, &p), 0);
    CU_ASSERT_EQUAL(p.p[4], 3);
    CU_ASSERT_EQUAL(p.p[7], 1);
    expect_tile(&p, 0, 0, 32, 0, 8, 16);
    expect_tile(&p, 0, 1, 0, 16, 16, 8);
    expect_tile(&p, 1, 0, 32, 16, 8, 16);
    expect_tile(&p, 1, 1, 16, 16, 16, 8);
    expect_tile(&p, 2, 0, 32, 32, 8, 8);
    expect_tile(&p, 2, 1, 32, 16, 8, 8);
    pl_picture_free(&p);
    /* a block the record left out, a tile outside C, bad sizes */
    CU_ASSERT_EQUAL(pl_picture_tiles(&b.rec, 40, 24, 40, 16, 0, 0, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_tiles(&b.rec, 40, 24, 40, 16, 3, 0, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_tiles(&b.rec, 40, 24, 40, 16, 0, 2, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_tiles(&b.rec, 0, 24, 40, 16, 0, 0, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_tiles(&b.rec, 40, 24, 40, 0, 0, 0, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_tiles(NULL, 40, 24, 40, 16, 0, 0, &p), -1);
    free(b.rec.access);

    /* A in round 0, B in round 1 (a barrier between): two steps, one matrix each */
    memset(&b, 0, sizeof b);
    b.rec.grid[0] = b.rec.grid[1] = b.rec.grid[2] = 1;
    for (uint32_t t = 0; t < 4; t++) {
        add(&b, 0, t, 3, 0, 4 * (t * 8 + 2), 0, 1);      /* A[0:4, 2:3] of 8 x 8 */
        add(&b, 0, t, 5, 1, 4 * (8 * 5 + t), 0, 2);      /* B[5:6, 0:4] */
        add(&b, 0, t, 4, 2, 4 * t, 1, 1);                /* a store: not a load */
        add(&b, 0, t, 4, 3, 4 * t, 0, PL_RECORD_SHARED); /* shared: not A or B */
    }
    CU_ASSERT_EQUAL_FATAL(pl_picture_tiles(&b.rec, 8, 8, 8, 8, 0, 0, &p), 0);
    CU_ASSERT_EQUAL(p.p[4], 2);
    CU_ASSERT_EQUAL(p.p[7], 0);
    expect_tile(&p, 0, 0, 0, 2, 4, 1);
    expect_tile(&p, 0, 1, 0, 0, 0, 0);
    expect_tile(&p, 1, 0, 0, 0, 0, 0);
    expect_tile(&p, 1, 1, 5, 0, 1, 4);
    pl_picture_free(&p);
    free(b.rec.access);
}

/* A tiles picture of M x N x K, tiles of T, for the block at (tr, tc),
 * made by the builder from the hand-made record. */
static void tiles_picture(int M, int N, int K, int T, int tr, int tc, pl_picture *p)
{
    rec_buf b;
    unsigned gx = (unsigned)((N + T - 1) / T);
    record_tiled(&b, M, N, K, T, (unsigned)tr * gx + (unsigned)tc, 1);
    CU_ASSERT_EQUAL_FATAL(pl_picture_tiles(&b.rec, M, N, K, T, tr, tc, p), 0);
    free(b.rec.access);
}

static void draw(viz_grid *g, int utf8, int w, int h)
{
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(g, w, h), 0);
    g->utf8 = utf8;
    viz_grid_clear(g);
}

static void test_tiles_render(void)
{
    pl_picture p;
    tiles_picture(64, 64, 64, 16, 1, 2, &p);
    viz_grid g = {0};
    for (int utf8 = 1; utf8 >= 0; utf8--)
        for (int k = 0; k <= 4; k++) {
            draw(&g, utf8, 80, 12);
            int rows = viz_pic_tiles(&g, (pl_rect){0, 0, 80, 12}, &p, k / 4.0);
            (void)rows;
            dump(&g);
        }
    pl_picture_free(&p);
    tiles_picture(512, 512, 512, 16, 16, 16, &p);
    for (int utf8 = 1; utf8 >= 0; utf8--) {
        draw(&g, utf8, 120, 24);
        viz_pic_tiles(&g, (pl_rect){0, 0, 120, 24}, &p, 0.5);
        dump(&g);
        draw(&g, utf8, 78, 14);
        viz_pic_tiles(&g, (pl_rect){0, 0, 78, 14}, &p, 0.5);
        dump(&g);
    }
    pl_picture_free(&p);
    viz_grid_free(&g);
}

static void test_roofline_render(void)
{
    pl_picture p;
    const double ai[3] = {1, 10, 20}, fl[3] = {5e11, 1e13, 2e12};
    const char *names[3] = {"one", "two", "mine"};
    CU_ASSERT_EQUAL_FATAL(pl_picture_roofline("test roof", 1e13, 1e12, 3, ai, fl, names, 2, &p), 0);
    viz_grid g = {0};
    for (int utf8 = 1; utf8 >= 0; utf8--) {
        int h = viz_pic_roofline_rows(&p, 60);
        draw(&g, utf8, 60, h);
        viz_pic_roofline(&g, (pl_rect){0, 0, 60, h}, &p, 1);
        dump(&g);
    }
    pl_picture_free(&p);
    const double ai2[3] = {0.25, 3.9, 28.4}, fl2[3] = {829e9, 11.5e12, 38.3e12};
    const char *names2[3] = {"naive", "tiled 16x16 (yours)", "register tiles"};
    CU_ASSERT_EQUAL_FATAL(pl_picture_roofline("simulated H100-SXM preset", 67e12, 3.35e12, 3, ai2,
                                              fl2, names2, 1, &p),
                          0);
    for (int utf8 = 1; utf8 >= 0; utf8--) {
        int h = viz_pic_roofline_rows(&p, 80);
        draw(&g, utf8, 80, h);
        viz_pic_roofline(&g, (pl_rect){0, 0, 80, h}, &p, 1);
        dump(&g);
        draw(&g, utf8, 78, 12);
        viz_pic_roofline(&g, (pl_rect){0, 0, 78, 12}, &p, 1);
        dump(&g);
    }
    pl_picture_free(&p);
    viz_grid_free(&g);
}

int register_picture_lab04_suite(void)
{
    static const unit_test tests[] = {
        {"the tiles along K of a 64^3 GEMM's block", test_tiles_builder},
        {"tiles cut by the edges; one matrix a round; refusals", test_tiles_edges},
        {"the tiles drawn", test_tiles_render},
        {"the roofline drawn", test_roofline_render},
    };
    return UNIT_SUITE("picture lab04", tests);
}
