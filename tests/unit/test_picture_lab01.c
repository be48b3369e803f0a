/*
 * test_picture_lab01.c — Lab 01's pictures (core/picture_lab01.c, the
 * builders; viz/picture_lab01.c, the renderers) from hand-made kernel
 * records: a 2x2 grid on 1 SM holding 2 blocks at a time draws two waves
 * (every p[] and iv[]; the rows at 120 columns in UTF-8, reveal 1, 0.5
 * and 0); 2344 blocks on 132 SMs x 8 fold into 80 columns of ASCII, three
 * waves; the element map of a kernel with its bound check (the tail idle),
 * without it (the stores past the end marked '!'), and with an element
 * written twice and one never written, its exact rows at 120 and 80
 * columns; loads and other ranges left out; what the builders refuse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../labs/01_hello_threads/lab01.h"
#include "../../viz/vizint.h"
#include "grid_text.h"
#include "paralab/device.h"
#include "paralab/picture.h"
#include "suites.h"

/* The cells a UTF-8 string takes. */
static int ncells(const char *s)
{
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Draws p on a fresh w x h grid (UTF-8 or ASCII) at reveal; returns the
 * rows the renderer used in *used. */
static void draw(viz_grid *g, const pl_picture *p, int w, int h, int utf8, double reveal, int *used)
{
    memset(g, 0, sizeof *g);
    g->utf8 = utf8;
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(g, w, h), 0);
    pl_rect r = {0, 0, w, h};
    *used = p->kind == PL_PIC_BLOCKS ? viz_pic_blocks(g, r, p, reveal)
                                     : viz_pic_elements(g, r, p, reveal);
    if (getenv("PICTURE_DUMP")) {
        char *t = viz_grid_text(g);
        fprintf(stderr, "\n%s", t);
        free(t);
    }
}

/* Rows 0.. of g equal want[0 .. n-1] (each padded with blanks to the
 * grid's width), and the rest of the grid is blank. */
static void check_rows(const viz_grid *g, const char *const *want, int n)
{
    char row[2048];
    for (int y = 0; y < g->h; y++) {
        const char *w = y < n ? want[y] : "";
        row_text(g, y, 0, g->w, row, sizeof row);
        char expect[2048];
        snprintf(expect, sizeof expect, "%s%*s", w, g->w - ncells(w), "");
        CU_ASSERT_STRING_EQUAL(row, expect);
        if (strcmp(row, expect))
            fprintf(stderr, "  row %d: got  '%s'\n         want '%s'\n", y, row, expect);
    }
}

/* ---- blocks on SMs ---------------------------------------------------------------------- */

/* A 2x2 grid of 32-thread blocks on 1 SM that holds 2 at a time: blocks
 * 0 and 1 in wave 0, 2 and 3 in wave 1 (the model's b mod sms, b / (sms x
 * per_sm)), recorded in the order 1 0 3 2 (the order they ran). */
static pl_kernel_record two_waves(pl_record_block bl[4])
{
    const uint32_t order[4] = {1, 0, 3, 2};
    for (int i = 0; i < 4; i++)
        bl[i] = (pl_record_block){order[i], 0, order[i] / 2, 0.1 * i, 0.1 * i + 0.05};
    return (pl_kernel_record){.kernel = "vector_add",
                              .grid = {2, 2, 1},
                              .block = {32, 1, 1},
                              .sms = 1,
                              .per_sm = 2,
                              .waves = 2,
                              .blocks = bl,
                              .nblocks = 4};
}

static void t_blocks_two_waves(void)
{
    pl_record_block bl[4];
    pl_kernel_record r = two_waves(bl);
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_blocks(&r, &p), 0);
    CU_ASSERT_EQUAL(p.kind, PL_PIC_BLOCKS);
    CU_ASSERT_STRING_EQUAL(p.title, "blocks on SMs");
    const int64_t want_p[6] = {4, 1, 2, 2, 32, 4};
    for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(p.p[i], want_p[i]);
    CU_ASSERT_EQUAL_FATAL(p.ni, 8);
    const int32_t want_iv[8] = {0, 0, 0, 0, 0, 1, 0, 1};
    for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(p.iv[i], want_iv[i]);

    viz_grid g;
    int used;
    CU_ASSERT_EQUAL(viz_pic_blocks_rows(&p, 120), 7);
    draw(&g, &p, 120, 8, 1, 1.0, &used);
    CU_ASSERT_EQUAL(used, 7);
    static const char *const all[] = {
        "4 blocks x 32 threads: 2 waves",
        "1 SM x 2 per SM = 2 blocks at once",
        "block  0 1 2 3",
        "SM     0 0 0 0",
        "wave   0 0 1 1",
        "0 wave 0: blocks 0-1 on 1 SM, up to 2 per SM",
        "1 wave 1: blocks 2-3 on 1 SM, up to 2 per SM",
    };
    check_rows(&g, all, 7);
    /* each wave in its own colour, the labels dim */
    CU_ASSERT_EQUAL(cell(&g, 7, 4)->fg, COL_RANK0 + 0);
    CU_ASSERT_EQUAL(cell(&g, 13, 4)->fg, COL_RANK0 + 1);
    CU_ASSERT_EQUAL(cell(&g, 0, 2)->fg, COL_DIM);
    viz_grid_free(&g);

    /* reveal 0.5: the first wave only; the second waits (· in UTF-8) */
    draw(&g, &p, 120, 8, 1, 0.5, &used);
    CU_ASSERT_EQUAL(used, 7);
    static const char *const half[] = {
        "4 blocks x 32 threads: 2 waves",
        "1 SM x 2 per SM = 2 blocks at once",
        "block  0 1 2 3",
        "SM     0 0 · ·",
        "wave   0 0 · ·",
        "0 wave 0: blocks 0-1 on 1 SM, up to 2 per SM",
        "· waiting for an SM: wave 1",
    };
    check_rows(&g, half, 7);
    CU_ASSERT_EQUAL(cell(&g, 13, 4)->fg, COL_DIM);
    viz_grid_free(&g);

    /* reveal 0, ASCII at 80 columns: nothing taken yet */
    draw(&g, &p, 80, 24, 0, 0.0, &used);
    CU_ASSERT_EQUAL(used, 6);
    static const char *const none[] = {
        "4 blocks x 32 threads: 2 waves",
        "1 SM x 2 per SM = 2 blocks at once",
        "block  0 1 2 3",
        "SM     . . . .",
        "wave   . . . .",
        ". waiting for an SM: waves 0-1",
    };
    check_rows(&g, none, 6);
    viz_grid_free(&g);
    /* a rect too short: cut, never past it */
    draw(&g, &p, 80, 3, 0, 1.0, &used);
    CU_ASSERT_EQUAL(used, 3);
    check_rows(&g, all, 3);
    viz_grid_free(&g);
    pl_picture_free(&p);
}

/* 2344 blocks of 256 threads (600000 elements) on an H100's 132 SMs, 8 per
 * SM: waves of 1056, 1056 and 232 blocks; at 80 columns of ASCII folded
 * to 12 blocks a cell, saying so. */
static void t_blocks_fold(void)
{
    enum { G = 2344 };
    pl_record_block *bl = calloc(G, sizeof *bl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bl);
    size_t k = 0;
    for (uint32_t b = 0; b < G; b++) bl[k++] = (pl_record_block){b, b % 132, b / 1056, 0, 0};
    pl_kernel_record r = {.kernel = "vector_add",
                          .grid = {G, 1, 1},
                          .block = {256, 1, 1},
                          .sms = 132,
                          .per_sm = 8,
                          .waves = 3,
                          .blocks = bl,
                          .nblocks = k};
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_blocks(&r, &p), 0);
    const int64_t want_p[6] = {G, 132, 8, 3, 256, G};
    for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(p.p[i], want_p[i]);
    CU_ASSERT_EQUAL(p.ni, 2 * G);
    CU_ASSERT_EQUAL(p.iv[2 * 5], 5);
    CU_ASSERT_EQUAL(p.iv[2 * 5 + 1], 0);
    CU_ASSERT_EQUAL(p.iv[2 * 1056], 0);
    CU_ASSERT_EQUAL(p.iv[2 * 1056 + 1], 1);
    CU_ASSERT_EQUAL(p.iv[2 * 2343], 2343 % 132);
    CU_ASSERT_EQUAL(p.iv[2 * 2343 + 1], 2);
    viz_grid g;
    int used;
    draw(&g, &p, 80, 9, 0, 2.0 / 3, &used);
    CU_ASSERT_EQUAL(used, 9);
    static const char *const folded[] = {
        "2344 blocks x 256 threads: 3 waves",
        "132 SMs x 8 per SM = 1056 blocks at once",
        "   0 0000000000000000000000000000000000000000000000000000000000000000000000",
        " 840 0000000000000000001111111111111111111111111111111111111111111111111111",
        "1680 111111111111111111111111111111111111....................",
        "1 cell = 12 blocks (the first one's wave)",
        "0 wave 0: blocks 0-1055 on 132 SMs, up to 8 per SM",
        "1 wave 1: blocks 1056-2111 on 132 SMs, up to 8 per SM",
        ". waiting for an SM: wave 2",
    };
    check_rows(&g, folded, 9);
    viz_grid_free(&g);
    /* 120 columns: 110 blocks a row, 3 a cell in 8 rows */
    CU_ASSERT_EQUAL(viz_pic_blocks_rows(&p, 120), 2 + 8 + 1 + 3);
    draw(&g, &p, 120, 14, 1, 1.0, &used);
    CU_ASSERT_EQUAL(used, 14);
    char row[512];
    /* the row from block 990: blocks 990, 993 .. 1053 in wave 0 (22 cells),
     * 1056 .. 1317 in wave 1 (88) */
    char want[128];
    int n = snprintf(want, sizeof want, " 990 ");
    for (int c = 0; c < 110; c++) want[n++] = c < 22 ? '0' : '1';
    snprintf(want + n, sizeof want - n, "%5s", "");
    row_text(&g, 5, 0, 120, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, want);
    /* from block 1980: 44 cells of wave 1 (to 2109), then wave 2 from 2112 */
    n = snprintf(want, sizeof want, "1980 ");
    for (int c = 0; c < 110; c++) want[n++] = c < 44 ? '1' : '2';
    want[n] = '\0';
    row_text(&g, 8, 0, 115, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, want);
    row_text(&g, 9, 0, 18, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "2310 222222222222 "); /* 2310 .. 2343: 12 cells */
    static const char *const last = "2 wave 2: blocks 2112-2343 on 132 SMs, up to 2 per SM";
    row_text(&g, 13, 0, ncells(last), row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, last);
    viz_grid_free(&g);
    pl_picture_free(&p);
    free(bl);
}

/* 20 blocks on 1 SM x 2: ten waves, four told and the rest summed up. */
static void t_blocks_many_waves(void)
{
    pl_record_block bl[20];
    for (uint32_t b = 0; b < 20; b++) bl[b] = (pl_record_block){b, 0, b / 2, 0, 0};
    pl_kernel_record r = {.kernel = "k",
                          .grid = {20, 1, 1},
                          .block = {64, 1, 1},
                          .sms = 1,
                          .per_sm = 2,
                          .waves = 10,
                          .blocks = bl,
                          .nblocks = 20};
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_blocks(&r, &p), 0);
    CU_ASSERT_EQUAL(p.p[3], 10);
    CU_ASSERT_EQUAL(viz_pic_blocks_rows(&p, 80), 11);
    viz_grid g;
    int used;
    draw(&g, &p, 80, 24, 0, 0.65, &used); /* ceil(6.5): waves 0-6 */
    CU_ASSERT_EQUAL(used, 11);
    static const char *const want[] = {
        "20 blocks x 64 threads: 10 waves",
        "1 SM x 2 per SM = 2 blocks at once",
        "block   0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19",
        "SM      0  0  0  0  0  0  0  0  0  0  0  0  0  0  .  .  .  .  .  .",
        "wave    0  0  1  1  2  2  3  3  4  4  5  5  6  6  .  .  .  .  .  .",
        "0 wave 0: blocks 0-1 on 1 SM, up to 2 per SM",
        "1 wave 1: blocks 2-3 on 1 SM, up to 2 per SM",
        "2 wave 2: blocks 4-5 on 1 SM, up to 2 per SM",
        "3 wave 3: blocks 6-7 on 1 SM, up to 2 per SM",
        "... waves 4-6 likewise",
        ". waiting for an SM: waves 7-9",
    };
    check_rows(&g, want, 11);
    viz_grid_free(&g);
    pl_picture_free(&p);
}

/* A record without block 2 (a kernel stopped by a fault): blocks 0 and 1
 * drawn, saying so; without block 0: refused. */
static void t_blocks_missing(void)
{
    pl_record_block bl[4];
    pl_kernel_record r = two_waves(bl);
    r.nblocks = 3;
    bl[0] = (pl_record_block){1, 0, 0, 0, 0};
    bl[1] = (pl_record_block){0, 0, 0, 0, 0};
    bl[2] = (pl_record_block){3, 0, 1, 0, 0}; /* 0, 1 and 3: block 2 missing */
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_blocks(&r, &p), 0);
    CU_ASSERT_EQUAL(p.p[0], 4);
    CU_ASSERT_EQUAL(p.p[5], 2);
    CU_ASSERT_EQUAL(p.ni, 4);
    viz_grid g;
    int used;
    draw(&g, &p, 80, 8, 0, 1.0, &used);
    static const char *const want[] = {
        "4 blocks x 32 threads: 2 waves",
        "1 SM x 2 per SM = 2 blocks at once",
        "0 00",
        "blocks 0..1 shown of 4; 1 cell = 1",
        "0 wave 0: blocks 0-1 on 1 SM, up to 2 per SM",
        "1 wave 1: no block recorded",
    };
    CU_ASSERT_EQUAL(used, 6);
    check_rows(&g, want, 6);
    viz_grid_free(&g);
    pl_picture_free(&p);
    bl[1] = (pl_record_block){2, 0, 1, 0, 0}; /* 1, 2 and 3: block 0 missing */
    CU_ASSERT_EQUAL(pl_picture_blocks(&r, &p), -1);
}

/* One block of one thread: the singular everywhere. */
static void t_blocks_one(void)
{
    pl_record_block bl[1] = {{0, 0, 0, 0, 0}};
    pl_kernel_record r = {.kernel = "k",
                          .grid = {1, 1, 1},
                          .block = {1, 1, 1},
                          .sms = 132,
                          .per_sm = 32,
                          .waves = 1,
                          .blocks = bl,
                          .nblocks = 1};
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_blocks(&r, &p), 0);
    viz_grid g;
    int used;
    draw(&g, &p, 80, 8, 0, 1.0, &used);
    static const char *const want[] = {
        "1 block x 1 thread: 1 wave",
        "132 SMs x 32 per SM = 4224 blocks at once",
        "block    0",
        "SM       0",
        "wave     0",
        "0 wave 0: block 0 on 1 SM, up to 1 per SM",
    };
    CU_ASSERT_EQUAL(used, 6);
    check_rows(&g, want, 6);
    viz_grid_free(&g);
    pl_picture_free(&p);
}

static void t_blocks_refused(void)
{
    pl_picture p;
    pl_kernel_record r = {.grid = {4, 1, 1}, .block = {32, 1, 1}, .sms = 1, .per_sm = 2};
    CU_ASSERT_EQUAL(pl_picture_blocks(&r, &p), -1); /* made without cfg.blocks */
    CU_ASSERT_EQUAL(pl_picture_blocks(NULL, &p), -1);
}

/* ---- the element map -------------------------------------------------------------------- */

/* Stores by global threads from..to-1 of blocks of `tpb` into element g of
 * range 0, 4-byte floats; then a load of element 0 by thread 0 and a
 * store into range 1 (neither counts). */
static size_t stores(pl_record_access *a, int from, int to, int tpb)
{
    size_t k = 0;
    for (int g = from; g < to; g++)
        a[k++] = (pl_record_access){
            (uint32_t)(g / tpb), (uint32_t)(g % tpb), 0, 0, (uint64_t)g * 4, 4, 1, 1};
    a[k++] = (pl_record_access){0, 0, 0, 1, 0, 4, 0, 1};
    a[k++] = (pl_record_access){0, 3, 0, 2, 8, 4, 1, 2};
    return k;
}

static pl_kernel_record elements_record(pl_record_access *a, size_t na, unsigned grid, unsigned tpb)
{
    return (pl_kernel_record){.kernel = "vector_add",
                              .grid = {grid, 1, 1},
                              .block = {tpb, 1, 1},
                              .sms = 132,
                              .per_sm = 8,
                              .waves = 1,
                              .access = a,
                              .naccess = na};
}

/* 10 elements, 3 blocks of 4: the bound check leaves threads 10 and 11 idle. */
static void t_elements_tail(void)
{
    pl_record_access a[16];
    pl_kernel_record r = elements_record(a, stores(a, 0, 10, 4), 3, 4);
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_elements(&r, 10, 4, &p), 0);
    CU_ASSERT_EQUAL(p.kind, PL_PIC_ELEMENTS);
    const int64_t want_p[8] = {10, 4, 3, 10, 2, 0, -1, 0};
    for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(p.p[i], want_p[i]);
    CU_ASSERT_EQUAL_FATAL(p.ni, 12); /* 10 elements, the 2 tail threads' slots */
    for (int i = 0; i < 10; i++) CU_ASSERT_EQUAL(p.iv[i], i);
    CU_ASSERT_EQUAL(p.iv[10], -1);
    CU_ASSERT_EQUAL(p.iv[11], -1);
    viz_grid g;
    int used;
    CU_ASSERT_EQUAL(viz_pic_elements_rows(&p, 120), 6);
    draw(&g, &p, 120, 6, 1, 1.0, &used);
    CU_ASSERT_EQUAL(used, 6);
    static const char *const want[] = {
        "10 elements; 1 cell = 1 element",
        " 0 0000111122--",
        "0-9a-z: its block b; its thread b x 4 + threadIdx.x",
        "- tail: 2 of 12 threads stored nothing",
        "! past the end: none (no store at element 10 or later)",
        "? never written: 0 elements",
    };
    check_rows(&g, want, 6);
    CU_ASSERT_EQUAL(cell(&g, 3, 1)->fg, COL_RANK0 + 0);
    CU_ASSERT_EQUAL(cell(&g, 7, 1)->fg, COL_RANK0 + 1);
    CU_ASSERT_EQUAL(cell(&g, 14, 1)->fg, COL_DIM);
    viz_grid_free(&g);
    pl_picture_free(&p);
}

/* The same without the bound check (range 0 recorded 12 elements long):
 * threads 10 and 11 store past the end, '!' in the warning colour. */
static void t_elements_out_of_bounds(void)
{
    pl_record_access a[16];
    pl_kernel_record r = elements_record(a, stores(a, 0, 12, 4), 3, 4);
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_elements(&r, 10, 4, &p), 0);
    const int64_t want_p[8] = {10, 4, 3, 10, 0, 2, 10, 0};
    for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(p.p[i], want_p[i]);
    CU_ASSERT_EQUAL_FATAL(p.ni, 12);
    CU_ASSERT_EQUAL(p.iv[10], 10);
    CU_ASSERT_EQUAL(p.iv[11], 11);
    /* well formed (pl_picture_check: the slots past the end allowed when
     * every element is drawn), and not when fewer are */
    char err[256];
    CU_ASSERT_EQUAL(pl_picture_check(&p, err, sizeof err), 0);
    p.p[3] = 9;
    CU_ASSERT_EQUAL(pl_picture_check(&p, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "picture \"elements\" (which thread wrote which element): ni = 12: "
                                "it must be 9 (a thread per element drawn, p[3]; with p[3] = n, up "
                                "to 65536 more)");
    p.p[3] = 10;
    viz_grid g;
    int used;
    draw(&g, &p, 80, 24, 0, 1.0, &used);
    CU_ASSERT_EQUAL(used, 6);
    static const char *const want[] = {
        "10 elements; 1 cell = 1 element",
        " 0 0000111122!!",
        "0-9a-z: its block b; its thread b x 4 + threadIdx.x",
        "- tail: 0 of 12 threads stored nothing",
        "! past the end: 2 stores, the first by thread 10",
        "? never written: 0 elements",
    };
    check_rows(&g, want, 6);
    CU_ASSERT_EQUAL(cell(&g, 14, 1)->fg, COL_WARN);
    CU_ASSERT_EQUAL(cell(&g, 14, 1)->attr, ATTR_BOLD);
    CU_ASSERT_EQUAL(cell(&g, 15, 4)->fg, COL_WARN);
    viz_grid_free(&g);
    pl_picture_free(&p);
}

/* Thread 1 also writes element 0 (after thread 0), nobody writes element 1. */
static void t_elements_twice(void)
{
    pl_record_access a[16];
    size_t k = stores(a, 0, 10, 4);
    a[1].offset = 0; /* thread 1 stores into element 0 */
    pl_kernel_record r = elements_record(a, k, 3, 4);
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_elements(&r, 10, 4, &p), 0);
    const int64_t want_p[8] = {10, 4, 3, 10, 2, 0, -1, 1};
    for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(p.p[i], want_p[i]);
    CU_ASSERT_EQUAL(p.iv[0], 1); /* the last to write it */
    CU_ASSERT_EQUAL(p.iv[1], -1);
    viz_grid g;
    int used;
    CU_ASSERT_EQUAL(viz_pic_elements_rows(&p, 80), 7);
    draw(&g, &p, 80, 7, 0, 1.0, &used);
    CU_ASSERT_EQUAL(used, 7);
    static const char *const want[] = {
        "10 elements; 1 cell = 1 element",
        " 0 0?00111122--",
        "0-9a-z: its block b; its thread b x 4 + threadIdx.x",
        "- tail: 2 of 12 threads stored nothing",
        "! past the end: none (no store at element 10 or later)",
        "? never written: 1 element",
        "written twice or more: 1 element",
    };
    check_rows(&g, want, 7);
    viz_grid_free(&g);
    pl_picture_free(&p);
}

/* The lab's default: 1000 elements, 4 blocks of 256, no bound check: at
 * 80x24 ASCII folded, 5 elements a cell, the last 24 slots '!'. */
static void t_elements_fold(void)
{
    pl_record_access *a = calloc(1100, sizeof *a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    pl_kernel_record r = elements_record(a, stores(a, 0, 1024, 256), 4, 256);
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_elements(&r, 1000, 4, &p), 0);
    const int64_t want_p[8] = {1000, 256, 4, 1000, 0, 24, 1000, 0};
    for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(p.p[i], want_p[i]);
    CU_ASSERT_EQUAL(p.ni, 1024);
    viz_grid g;
    int used;
    draw(&g, &p, 80, 8, 0, 1.0, &used);
    CU_ASSERT_EQUAL(used, 8);
    static const char *const want[] = {
        "1000 elements; 1 cell = 5 elements",
        "   0 0000000000000000000000000000000000000000000000000000111111111111111111",
        " 350 1111111111111111111111111111111112222222222222222222222222222222222222",
        " 700 222222222222223333333333333333333333333333333333333333333333!!!!!",
        "0-9a-z: its block b; its thread b x 256 + threadIdx.x",
        "- tail: 0 of 1024 threads stored nothing",
        "! past the end: 24 stores, the first by thread 1000",
        "? never written: 0 elements",
    };
    check_rows(&g, want, 8);
    viz_grid_free(&g);
    pl_picture_free(&p);
    free(a);
}

/* 1000 elements and 24 stores past the end folded 3 a cell (110 x 9):
 * the last row from 900 holds 34 cells of elements (the last one element
 * 999 alone), then 8 cells of '!' (24 stores: 1000..1023), none of them
 * straddling the end of the array. */
static void t_elements_fold_at_n(void)
{
    pl_record_access *a = calloc(1100, sizeof *a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    pl_kernel_record r = elements_record(a, stores(a, 0, 1024, 256), 4, 256);
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_elements(&r, 1000, 4, &p), 0);
    viz_grid g;
    int used;
    draw(&g, &p, 110, 9, 0, 1.0, &used);
    CU_ASSERT_EQUAL(used, 9);
    char row[256], want[256];
    row_text(&g, 0, 0, 40, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "1000 elements; 1 cell = 3 elements      ");
    snprintf(want, sizeof want, " 900 %.34s%.8s", "3333333333333333333333333333333333", "!!!!!!!!");
    row_text(&g, 4, 0, (int)strlen(want), row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, want);
    CU_ASSERT_EQUAL(cell(&g, 5 + 33, 4)->fg, COL_RANK0 + 3);
    CU_ASSERT_EQUAL(cell(&g, 5 + 34, 4)->fg, COL_WARN);
    CU_ASSERT_EQUAL(cell(&g, 5 + 42, 4)->ch, ' ');
    viz_grid_free(&g);
    pl_picture_free(&p);
    free(a);
}

/* Half of an 80-column pane (38 columns): the compact forms, side by
 * side in 6 rows: the blocks' lines shorter, the element map in 2 rows of
 * cells (18 elements a cell) and a legend of 3 lines. */
static void t_compact(void)
{
    enum { G = 4 };
    pl_record_block bl[G];
    for (uint32_t b = 0; b < G; b++) bl[b] = (pl_record_block){b, b, 0, 0, 0};
    pl_kernel_record rb = {.kernel = "vector_add",
                           .grid = {G, 1, 1},
                           .block = {256, 1, 1},
                           .sms = 132,
                           .per_sm = 8,
                           .waves = 1,
                           .blocks = bl,
                           .nblocks = G};
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_blocks(&rb, &p), 0);
    CU_ASSERT_EQUAL(viz_pic_blocks_rows(&p, 38), 6);
    viz_grid g;
    int used;
    draw(&g, &p, 38, 6, 0, 1.0, &used);
    CU_ASSERT_EQUAL(used, 6);
    static const char *const blocks[] = {
        "4 blocks x 256 threads: 1 wave", "132 SMs x 8 per SM = 1056 at once",
        "block    0   1   2   3",         "SM       0   1   2   3",
        "wave     0   0   0   0",         "0 wave 0: blocks 0-3 on 4 SMs",
    };
    check_rows(&g, blocks, 6);
    viz_grid_free(&g);
    pl_picture_free(&p);

    pl_record_access *a = calloc(1100, sizeof *a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    pl_kernel_record r = elements_record(a, stores(a, 0, 1024, 256), 4, 256);
    a[7].offset = 6 * 4; /* thread 7 writes element 6 again: 7 is never written */
    CU_ASSERT_EQUAL_FATAL(pl_picture_elements(&r, 1000, 4, &p), 0);
    CU_ASSERT_EQUAL(p.p[7], 1);
    CU_ASSERT_EQUAL(viz_pic_elements_rows(&p, 38), 6);
    draw(&g, &p, 38, 6, 0, 1.0, &used);
    CU_ASSERT_EQUAL(used, 6);
    /* 30 cells a row, 18 elements a cell: from 0 and from 540; the first
     * cell holds the element never written (?), cell 12 of the second row
     * (756..773) starts in block 2, cell 25 (990..999) the array's last
     * elements, cells 26 and 27 the stores past the end (!): no cell
     * straddles the end */
    static const char *const elements[] = {
        "1000 elements; 1 cell = 18 elements",   "   0 ?00000000000000111111111111112",
        " 540 22222222222223333333333333!!",     "0-9a-z: the block; - tail: 0 idle",
        "! past the end: 24, thread 1000 first", "? never written: 1; twice: 1",
    };
    check_rows(&g, elements, 6);
    viz_grid_free(&g);
    pl_picture_free(&p);
    free(a);
}

/* --size 1000003 --block 1024: 977 blocks in 4 waves (132 SMs x 2): at
 * 38 columns the compact form's 6 rows (2 rows of cells, one line for the
 * waves), as the element map's, so both stand side by side at 80x24. */
static void t_compact_waves(void)
{
    enum { G = 977 };
    pl_record_block *bl = calloc(G, sizeof *bl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bl);
    for (uint32_t b = 0; b < G; b++) bl[b] = (pl_record_block){b, (b % 264) / 2, b / 264, 0, 0};
    pl_kernel_record rb = {.kernel = "vector_add",
                           .grid = {G, 1, 1},
                           .block = {1024, 1, 1},
                           .sms = 132,
                           .per_sm = 2,
                           .waves = 4,
                           .blocks = bl,
                           .nblocks = G};
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_blocks(&rb, &p), 0);
    CU_ASSERT_EQUAL(viz_pic_blocks_rows(&p, 38), 6);
    viz_grid g;
    int used;
    draw(&g, &p, 38, 6, 0, 1.0, &used);
    CU_ASSERT_EQUAL(used, 6);
    static const char *const all[] = {
        "977 blocks x 1024 threads: 4 waves",
        "132 SMs x 2 per SM = 264 at once",
        "  0 000000000000000011111111111111",
        "510 1122222222222222233333333333",
        "1 cell = 17 blocks",
        "waves 0-3 lit (digit: wave)",
    };
    check_rows(&g, all, 6);
    viz_grid_free(&g);
    draw(&g, &p, 38, 6, 0, 0.5, &used);
    char row[64];
    row_text(&g, 5, 0, 28, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "waves 0-1 lit; 2-3 wait for ");
    viz_grid_free(&g);
    pl_picture_free(&p);
    free(bl);
}

/* ---- the lab's own kernel, recorded ----------------------------------------------------- */

/* Records impl's vector add of n elements in blocks of 256 on arrays of
 * `room` floats (range 0: c), as Lab 01's step 2 does; the record in *rec. */
static void record_vector_add(const lab01_impl *impl, int n, int room, pl_kernel_record *rec)
{
    float *a, *b, *c;
    size_t bytes = (size_t)room * sizeof(float);
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&a, bytes), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&b, bytes), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&c, bytes), cudaSuccess);
    pl_record_config cfg = {.blocks = 1, .max_accesses = 4 * (size_t)room, .nranges = 1};
    cfg.range[0].lo = c;
    cfg.range[0].len = bytes;
    CU_ASSERT_EQUAL_FATAL(pl_device_record_begin(&cfg), 0);
    CU_ASSERT_EQUAL(impl->vector_add(a, b, c, n, 256), cudaSuccess);
    CU_ASSERT_EQUAL(cudaDeviceSynchronize(), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(pl_device_record_end(rec), 0);
    CU_ASSERT_EQUAL(rec->truncated, 0);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
}

/* The reference's vector add of 1000 elements (4 blocks of 256) on the
 * simulated H100 (132 SMs, 8 blocks of 256 threads per SM): one wave on
 * SMs 0-3; every element written by its own thread, the 24 tail threads
 * idle, nothing past the end of the 1024 recorded. */
static void t_lab_kernel(void)
{
    if (!pl_device_caps()->records) return; /* a real GPU records nothing */
    pl_kernel_record rec = {0};
    record_vector_add(&lab01_solution, 1000, 1024, &rec);
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_blocks(&rec, &p), 0);
    CU_ASSERT_EQUAL(pl_picture_check(&p, NULL, 0), 0);
    const int64_t want_b[6] = {4, 132, 8, 1, 256, 4};
    for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(p.p[i], want_b[i]);
    CU_ASSERT_EQUAL_FATAL(p.ni, 8);
    for (int b = 0; b < 4; b++) {
        CU_ASSERT_EQUAL(p.iv[2 * b], b);
        CU_ASSERT_EQUAL(p.iv[2 * b + 1], 0);
    }
    pl_picture_free(&p);
    CU_ASSERT_EQUAL_FATAL(pl_picture_elements(&rec, 1000, 4, &p), 0);
    CU_ASSERT_EQUAL(pl_picture_check(&p, NULL, 0), 0);
    const int64_t want_e[8] = {1000, 256, 4, 1000, 24, 0, -1, 0};
    for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(p.p[i], want_e[i]);
    CU_ASSERT_EQUAL_FATAL(p.ni, 1024);
    int bad = 0;
    for (int i = 0; i < 1024; i++) bad += p.iv[i] != (i < 1000 ? i : -1);
    CU_ASSERT_EQUAL(bad, 0);
    viz_grid g;
    int used;
    draw(&g, &p, 38, 6, 0, 1.0, &used);
    char row[64];
    row_text(&g, 2, 0, 38, row, sizeof row);
    /* cell 25 (990..999) the array's last elements; cells 26 and 27
     * (slots 1000..1017, 1018..1023) the tail's idle threads: no cell
     * straddles the end */
    CU_ASSERT_STRING_EQUAL(row, " 540 22222222222223333333333333--     ");
    viz_grid_free(&g);
    pl_picture_free(&p);
    pl_kernel_record_free(&rec);
}

/* The student's kernel without `if (i < n)` on the same room: threads
 * 1000-1023 store into elements 1000-1023, past the end. */
static void t_lab_kernel_no_bound_check(void)
{
    if (!pl_device_caps()->records) return;
    pl_kernel_record rec = {0};
    record_vector_add(&lab01_exercise, 1000, 1024, &rec);
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_elements(&rec, 1000, 4, &p), 0);
    CU_ASSERT_EQUAL(pl_picture_check(&p, NULL, 0), 0);
    const int64_t want_e[8] = {1000, 256, 4, 1000, 0, 24, 1000, 0};
    for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(p.p[i], want_e[i]);
    CU_ASSERT_EQUAL_FATAL(p.ni, 1024);
    int bad = 0;
    for (int i = 0; i < 1024; i++) bad += p.iv[i] != i;
    CU_ASSERT_EQUAL(bad, 0);
    viz_grid g;
    int used;
    draw(&g, &p, 38, 6, 0, 1.0, &used);
    char row[64];
    row_text(&g, 2, 0, 38, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, " 540 22222222222223333333333333!!     ");
    row_text(&g, 4, 0, 38, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "! past the end: 24, thread 1000 first ");
    viz_grid_free(&g);
    pl_picture_free(&p);
    pl_kernel_record_free(&rec);
}

static void t_elements_refused(void)
{
    pl_picture p;
    pl_kernel_record r = {.grid = {1, 1, 1}, .block = {4, 1, 1}};
    CU_ASSERT_EQUAL(pl_picture_elements(&r, 0, 4, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_elements(&r, 4, 0, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_elements(NULL, 4, 4, &p), -1);
    /* no stores at all: every thread idle, every element never written */
    CU_ASSERT_EQUAL_FATAL(pl_picture_elements(&r, 4, 4, &p), 0);
    CU_ASSERT_EQUAL(p.p[4], 4);
    CU_ASSERT_EQUAL(p.ni, 4);
    for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL(p.iv[i], -1);
    pl_picture_free(&p);
}

int register_picture_lab01_suite(void)
{
    static const unit_test tests[] = {
        {"blocks: a 2x2 grid on 1 SM x 2 draws two waves, revealed one by one", t_blocks_two_waves},
        {"blocks: 2344 on 132 SMs x 8 fold at 80 and 120 columns, three waves", t_blocks_fold},
        {"blocks: ten waves, four told", t_blocks_many_waves},
        {"blocks: a record missing a block draws those before it", t_blocks_missing},
        {"blocks: one block of one thread", t_blocks_one},
        {"blocks: a record without its blocks is refused", t_blocks_refused},
        {"elements: the bound check leaves the tail idle", t_elements_tail},
        {"elements: without it, the stores past the end marked", t_elements_out_of_bounds},
        {"elements: written twice, never written", t_elements_twice},
        {"elements: 1000 elements fold at 80 columns, the tail's stores out of bounds",
         t_elements_fold},
        {"the compact forms at 38 columns (80x24, side by side)", t_compact},
        {"the lab's vector add (solution.cu), recorded: 1 wave, the tail idle", t_lab_kernel},
        {"blocks: 977 in 4 waves, compact in 6 rows at 38 columns", t_compact_waves},
        {"elements: a folded cell never straddles the end of the array", t_elements_fold_at_n},
        {"a student's without its bound check, recorded: the stores past the end",
         t_lab_kernel_no_bound_check},
        {"elements: what is refused; no stores at all", t_elements_refused},
    };
    return UNIT_SUITE("picture lab01", tests);
}
