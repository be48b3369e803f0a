/*
 * test_picture_lab02.c — Lab 02's pictures: a warp's sectors
 * (pl_picture_request) and shared-memory banks (pl_picture_banks), built
 * from hand-made kernel records: the coalesced warp in 4 sectors, the
 * stride-8 warp in 32, the transposed warp's 32 sectors 4 KiB apart, the
 * site-th call site and each lane's first time there, warp 0 of block 0
 * only; a 32x32 tile's column read in 32 wavefronts, a 32x33 tile's in
 * 1, a broadcast free, a 2-way conflict. Then the renderers
 * (viz/picture_lab02.c) into a cell grid, every row's text: UTF-8 at 118
 * columns (a 120-column pane's inside), ASCII at 78 (80x24), compact and
 * minimal heights, the lanes named by letter when they do not lie above
 * their sectors. PIC_DUMP=1 prints each grid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../viz/vizint.h"
#include "grid_text.h"
#include "kernels.h"
#include "paralab/device.h"
#include "paralab/picture.h"
#include "suites.h"

/* ---- hand-made records ------------------------------------------------------------------ */

typedef struct {
    pl_kernel_record rec;
    pl_record_access a[4096];
} fake;

static void fake_init(fake *f, unsigned threads)
{
    memset(f, 0, sizeof *f);
    snprintf(f->rec.kernel, sizeof f->rec.kernel, "test");
    f->rec.grid[0] = f->rec.grid[1] = f->rec.grid[2] = 1;
    f->rec.block[0] = threads;
    f->rec.block[1] = f->rec.block[2] = 1;
    f->rec.access = f->a;
}

static void add(fake *f, unsigned block, unsigned thread, unsigned site, uint64_t offset, int size,
                int store, int space)
{
    pl_record_access *a = &f->a[f->rec.naccess++];
    *a = (pl_record_access){.block = block,
                            .thread = thread,
                            .site = site,
                            .offset = offset,
                            .size = (uint8_t)size,
                            .store = (uint8_t)store,
                            .space = (uint8_t)space};
}

/* Lanes 0..31 of warp 0, block 0: a load of 4 bytes at offset base + l * step, range 0. */
static void warp_loads(fake *f, unsigned site, uint64_t base, uint64_t step)
{
    for (unsigned l = 0; l < 32; l++) add(f, 0, l, site, base + l * step, 4, 0, 1);
}

/* pl_picture_check passes p (the trace reader refuses what it refuses). */
static void well_formed(const pl_picture *p)
{
    char err[256] = "";
    CU_ASSERT_EQUAL(pl_picture_check(p, err, sizeof err), 0);
    if (err[0]) fprintf(stderr, "  pl_picture_check: %s\n", err);
}

static void check_request(const pl_picture *p, int sectors, int fewest, int store, uint64_t step)
{
    well_formed(p);
    CU_ASSERT_EQUAL(p->kind, PL_PIC_REQUEST);
    CU_ASSERT_EQUAL(p->p[0], 32);
    CU_ASSERT_EQUAL(p->p[1], 32);
    CU_ASSERT_EQUAL(p->p[2], sectors);
    CU_ASSERT_EQUAL(p->p[3], store);
    CU_ASSERT_EQUAL(p->p[4], fewest);
    CU_ASSERT_EQUAL(p->p[5], 4);
    CU_ASSERT_EQUAL_FATAL(p->ni, 32);
    for (int l = 0; l < 32; l++) CU_ASSERT_EQUAL(p->iv[l], (int32_t)(l * step));
}

static void test_coalesced(void)
{
    static fake f;
    fake_init(&f, 256);
    warp_loads(&f, 0, 0, 4);
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_request(&f.rec, 0, 0, "coalesced", &p), 0);
    check_request(&p, 4, 4, 0, 4);
    CU_ASSERT_STRING_EQUAL(p.sv[0], "coalesced");
    CU_ASSERT_STRING_EQUAL(p.title, "one warp's loads: coalesced");
    pl_picture_free(&p);
}

static void test_stride8(void)
{
    static fake f;
    fake_init(&f, 256);
    warp_loads(&f, 0, 0, 32); /* floats 8 apart */
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_request(&f.rec, 0, 0, "strided x8", &p), 0);
    check_request(&p, 32, 4, 0, 32);
    pl_picture_free(&p);
    /* stride 2: 8 sectors, half of each used */
    fake_init(&f, 256);
    warp_loads(&f, 0, 0, 8);
    CU_ASSERT_EQUAL_FATAL(pl_picture_request(&f.rec, 0, 0, "strided x2", &p), 0);
    check_request(&p, 8, 4, 0, 8);
    pl_picture_free(&p);
}

/* The naive transpose's stores: lane l at column l of a 1024-row matrix,
 * 4096 bytes apart, from byte 8200 (offsets from the first sector: 8). */
static void test_transposed(void)
{
    static fake f;
    fake_init(&f, 256);
    for (unsigned l = 0; l < 32; l++) add(&f, 0, l, 0, 8200 + 4096 * l, 4, 1, 1);
    pl_picture p;
    CU_ASSERT_EQUAL(pl_picture_request(&f.rec, 0, 0, "transposed", &p), -1); /* no loads */
    CU_ASSERT_EQUAL_FATAL(pl_picture_request(&f.rec, 1, 0, "transposed", &p), 0);
    CU_ASSERT_EQUAL(p.p[2], 32);
    CU_ASSERT_EQUAL(p.p[3], 1);
    CU_ASSERT_EQUAL(p.p[4], 4);
    for (int l = 0; l < 32; l++) CU_ASSERT_EQUAL(p.iv[l], 8 + 4096 * l);
    CU_ASSERT_STRING_EQUAL(p.title, "one warp's stores: transposed");
    pl_picture_free(&p);
}

/* The site-th site in the order first seen, of loads in range 0 only;
 * each lane's first time there; warp 0 of block 0 only; a lane that made
 * no access is -1; 8-byte accesses across a sector's edge. */
static void test_sites(void)
{
    static fake f;
    fake_init(&f, 256);
    add(&f, 0, 0, 7, 0, 4, 0, 2);  /* range 1: not counted */
    add(&f, 0, 0, 8, 0, 4, 0, 0);  /* shared: not counted */
    add(&f, 0, 0, 9, 64, 4, 1, 1); /* a store site */
    add(&f, 1, 0, 3, 0, 4, 0, 1);  /* block 1: not counted */
    warp_loads(&f, 5, 0, 4);       /* load site 0 */
    for (unsigned l = 0; l < 32; l += 2) add(&f, 0, l, 6, 4096 + 8 * l + 4, 8, 0, 1);
    for (unsigned l = 0; l < 32; l += 2) /* load site 1 again: the lanes' second time, ignored */
        add(&f, 0, l, 6, 0, 4, 0, 1);
    for (unsigned l = 32; l < 64; l++) add(&f, 0, l, 6, 0, 4, 0, 1); /* warp 1: ignored */
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_request(&f.rec, 0, 0, "site 0", &p), 0);
    check_request(&p, 4, 4, 0, 4);
    pl_picture_free(&p);
    CU_ASSERT_EQUAL_FATAL(pl_picture_request(&f.rec, 0, 1, "site 1", &p), 0);
    /* even lanes: bytes 4096 + 8l + 4 .. + 12: 16 lanes x 8 = 128 bytes from
     * byte 4100 to 4348, 8 apart: sectors 128..135, 8 of them, the fewest 4 */
    CU_ASSERT_EQUAL(p.p[2], 8);
    CU_ASSERT_EQUAL(p.p[4], 4);
    CU_ASSERT_EQUAL(p.p[5], 8);
    for (int l = 0; l < 32; l++) CU_ASSERT_EQUAL(p.iv[l], l % 2 ? -1 : 8 * l + 4);
    pl_picture_free(&p);
    CU_ASSERT_EQUAL(pl_picture_request(&f.rec, 0, 2, "none", &p), -1);
    CU_ASSERT_EQUAL_FATAL(pl_picture_request(&f.rec, 1, 0, "store", &p), 0);
    CU_ASSERT_EQUAL(p.p[2], 1);
    CU_ASSERT_EQUAL(p.iv[0], 0); /* byte 64, from its sector */
    for (int l = 1; l < 32; l++) CU_ASSERT_EQUAL(p.iv[l], -1);
    pl_picture_free(&p);
    CU_ASSERT_EQUAL(pl_picture_request(NULL, 0, 0, "none", &p), -1);
    /* a block of 8 threads: 8 lanes */
    fake_init(&f, 8);
    for (unsigned l = 0; l < 8; l++) add(&f, 0, l, 0, 4 * l, 4, 0, 1);
    CU_ASSERT_EQUAL_FATAL(pl_picture_request(&f.rec, 0, 0, "8 lanes", &p), 0);
    CU_ASSERT_EQUAL(p.p[0], 8);
    CU_ASSERT_EQUAL(p.ni, 8);
    CU_ASSERT_EQUAL(p.p[2], 1);
    CU_ASSERT_EQUAL(p.p[4], 1);
    pl_picture_free(&p);
}

/* A tile's column read: lane l reads word pitch * l of a shared tile. */
static void column_read(fake *f, int pitch)
{
    fake_init(f, 256);
    for (unsigned l = 0; l < 32; l++) add(f, 0, l, 0, 4u * l, 4, 1, 0); /* the row store */
    for (unsigned l = 0; l < 32; l++) add(f, 0, l, 1, 4u * (unsigned)pitch * l, 4, 0, 0);
}

static void test_banks(void)
{
    static fake f;
    pl_picture p;
    column_read(&f, 32);
    CU_ASSERT_EQUAL_FATAL(pl_picture_banks(&f.rec, 0, 0, 32, "32x32", &p), 0);
    well_formed(&p);
    CU_ASSERT_EQUAL(p.kind, PL_PIC_BANKS);
    CU_ASSERT_EQUAL(p.p[0], 32);
    CU_ASSERT_EQUAL(p.p[1], 32);
    CU_ASSERT_EQUAL(p.p[2], 32);
    CU_ASSERT_EQUAL(p.p[3], 32);
    for (int l = 0; l < 32; l++) CU_ASSERT_EQUAL(p.iv[l], 32 * l);
    CU_ASSERT_STRING_EQUAL(p.title, "shared-memory banks: 32x32");
    pl_picture_free(&p);
    /* the row store of the same tile: one wavefront */
    CU_ASSERT_EQUAL_FATAL(pl_picture_banks(&f.rec, 1, 0, 32, "row", &p), 0);
    CU_ASSERT_EQUAL(p.p[2], 1);
    for (int l = 0; l < 32; l++) CU_ASSERT_EQUAL(p.iv[l], l);
    pl_picture_free(&p);
    CU_ASSERT_EQUAL(pl_picture_banks(&f.rec, 0, 1, 32, "none", &p), -1);
    column_read(&f, 33);
    CU_ASSERT_EQUAL_FATAL(pl_picture_banks(&f.rec, 0, 0, 33, "32x33", &p), 0);
    well_formed(&p);
    CU_ASSERT_EQUAL(p.p[2], 1);
    CU_ASSERT_EQUAL(p.p[3], 33);
    for (int l = 0; l < 32; l++) CU_ASSERT_EQUAL(p.iv[l], 33 * l);
    pl_picture_free(&p);
    /* a broadcast: every lane the same word; free */
    fake_init(&f, 32);
    for (unsigned l = 0; l < 32; l++) add(&f, 0, l, 0, 20, 4, 0, 0);
    CU_ASSERT_EQUAL_FATAL(pl_picture_banks(&f.rec, 0, 0, 32, "broadcast", &p), 0);
    CU_ASSERT_EQUAL(p.p[2], 1);
    for (int l = 0; l < 32; l++) CU_ASSERT_EQUAL(p.iv[l], 5);
    pl_picture_free(&p);
    /* 2 words apart: banks 0, 2, .. 30 serve 2 words each */
    fake_init(&f, 32);
    for (unsigned l = 0; l < 32; l++) add(&f, 0, l, 0, 8 * l, 4, 0, 0);
    CU_ASSERT_EQUAL_FATAL(pl_picture_banks(&f.rec, 0, 0, 32, "stride 2", &p), 0);
    CU_ASSERT_EQUAL(p.p[2], 2);
    pl_picture_free(&p);
    /* 8-byte words of lanes 0..31: 64 words, 2 per bank (memstats.c's rule) */
    fake_init(&f, 32);
    for (unsigned l = 0; l < 32; l++) add(&f, 0, l, 0, 8 * l, 8, 0, 0);
    CU_ASSERT_EQUAL_FATAL(pl_picture_banks(&f.rec, 0, 0, 32, "double", &p), 0);
    CU_ASSERT_EQUAL(p.p[2], 2);
    pl_picture_free(&p);
}

/* ---- the renderers --------------------------------------------------------------------- */

static int ncells(const char *s)
{
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Rows y0.. of g equal want[] (each to its length; then blanks to the width w). */
static void check_rows(const viz_grid *g, int y0, const char *const *want, int n)
{
    char row[2048];
    for (int y = 0; y < n; y++) {
        int c = ncells(want[y]);
        row_text(g, y0 + y, 0, g->w, row, sizeof row);
        /* trailing blanks off */
        size_t len = strlen(row);
        while (len && row[len - 1] == ' ') row[--len] = '\0';
        CU_ASSERT_STRING_EQUAL(row, want[y]);
        if (strcmp(row, want[y]))
            fprintf(stderr, "  row %d: got  '%s'\n         want '%s' (%d)\n", y0 + y, row, want[y],
                    c);
    }
}

/* PIC_DUMP=1: the grid; PIC_DUMP=c: its rows as C strings. */
static void dump(const viz_grid *g)
{
    const char *d = getenv("PIC_DUMP");
    if (!d) return;
    char *t = viz_grid_text(g);
    if (strcmp(d, "c")) {
        fprintf(stderr, "\n%s", t);
    } else {
        fprintf(stderr, "\n");
        for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
            size_t n = strlen(line);
            while (n && line[n - 1] == ' ') line[--n] = '\0';
            fprintf(stderr, "        \"");
            for (char *c = line; *c; c++)
                fprintf(stderr, *c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
            fprintf(stderr, "\",\n");
        }
    }
    free(t);
}

/* p drawn at w x h (utf8 or not) from (0, 0); the rows used. */
static int draw(viz_grid *g, int (*fn)(viz_grid *, pl_rect, const pl_picture *, double),
                const pl_picture *p, int w, int h, int utf8)
{
    viz_grid_resize(g, w, h);
    g->utf8 = utf8;
    int n = fn(g, (pl_rect){0, 0, w, h}, p, 1.0);
    dump(g);
    return n;
}

static void request_of(fake *f, uint64_t base, uint64_t step, pl_picture *p, int store)
{
    fake_init(f, 256);
    for (unsigned l = 0; l < 32; l++) add(f, 0, l, 0, base + l * step, 4, store, 1);
    CU_ASSERT_EQUAL_FATAL(pl_picture_request(&f->rec, store, 0, "x", p), 0);
}

/* Lanes reading 4 sectors in reverse: not above their boxes, named by letter. */
static void reversed(fake *f, pl_picture *p)
{
    fake_init(f, 256);
    for (unsigned l = 0; l < 32; l++) add(f, 0, l, 0, 4 * (31 - l), 4, 0, 1);
    CU_ASSERT_EQUAL_FATAL(pl_picture_request(&f->rec, 0, 0, "reversed", p), 0);
}

static void tile_read(fake *f, int pitch, pl_picture *p)
{
    column_read(f, pitch);
    CU_ASSERT_EQUAL_FATAL(pl_picture_banks(&f->rec, 0, 0, pitch, "tile", p), 0);
}

/* Lanes 0..15 read word 5, lanes 16..31 word 70: two banks, a broadcast each. */
static void broadcast(fake *f, pl_picture *p)
{
    fake_init(f, 32);
    for (unsigned l = 0; l < 32; l++) add(f, 0, l, 0, l < 16 ? 20 : 280, 4, 0, 0);
    CU_ASSERT_EQUAL_FATAL(pl_picture_banks(&f->rec, 0, 0, 32, "broadcast", p), 0);
    CU_ASSERT_EQUAL(p->p[2], 1);
}

typedef struct {
    const char *name;
    int banks; /* 0: the request */
    int w, h, utf8;
    const char *const *want;
    int rows;
} draw_case;

static const char *const want_coalesced_utf8[] = {
    "lane     0                       8                       16                      24           "
    "       31",
    "loads    ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  "
    "●  ●  ●  ●",
    "         │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  "
    "│  │  │  │",
    "         ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  "
    "↓  ↓  ↓  ↓",
    "        "
    "┌──────────────────────┐┌──────────────────────┐┌──────────────────────┐┌─────────────────────"
    "─┐",
    "sectors "
    "│██████████████████████││██████████████████████││██████████████████████││█████████████████████"
    "█│",
    "        "
    "└──────────────────────┘└──────────────────────┘└──────────────────────┘└─────────────────────"
    "─┘",
    "        +0                      +32                     +64                     +96           "
    "           bytes",
    "memory  ████ 128 B",
    "4 sectors (the fewest: 4): 128 B moved for 128 B used",
    "● a lane's access  ↓ to its 32-byte sector  █ words used  ░ moved, unused",
};
static const char *const want_stride8_utf8[] = {
    "lane     0                       8                       16                      24           "
    "       31",
    "loads    ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  "
    "●  ●  ●  ●",
    "         │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  "
    "│  │  │  │",
    "         ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  "
    "↓  ↓  ↓  ↓",
    "        "
    "┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌"
    "─┐",
    "sectors "
    "│█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││"
    "█│",
    "        "
    "└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└"
    "─┘",
    "        +0                                                                                    "
    "      +992 bytes",
    "memory  ████████████████████████████████ 1024 B",
    "32 sectors (8x the fewest): 1024 B moved for 128 B used",
    "● a lane's access  ↓ to its 32-byte sector  █ words used  ░ moved, unused",
};
static const char *const want_stride8_ascii[] = {
    "lane    0               8               16              24           31",
    "loads   * * * * * * * * * * * * * * * * * * * * * * * * * * * * * * * *",
    "        | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | |",
    "        v v v v v v v v v v v v v v v v v v v v v v v v v v v v v v v v",
    "        ##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==",
    "sectors ##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==",
    "        ##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==",
    "        +0                                                          +992 bytes",
    "memory  ################################ 1024 B",
    "32 sectors (8x the fewest): 1024 B moved for 128 B used",
    "* a lane's access  v to its 32-byte sector  # words used  . moved, unused",
};
static const char *const want_stride8_compact[] = {
    "lane    0               8               16              24           31",
    "loads   * * * * * * * * * * * * * * * * * * * * * * * * * * * * * * * *",
    "        v v v v v v v v v v v v v v v v v v v v v v v v v v v v v v v v",
    "sectors ##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==",
    "memory  ################################ 1024 B",
    "32 sectors (8x the fewest): 1024 B moved for 128 B used",
};
static const char *const want_stride8_minimal[] = {
    "sectors ##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==",
    "32 sectors (8x the fewest): 1024 B moved for 128 B used",
};
static const char *const want_transposed_utf8[] = {
    "lane     0                       8                       16                      24           "
    "       31",
    "stores   ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  "
    "●  ●  ●  ●",
    "         │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  "
    "│  │  │  │",
    "         ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  "
    "↓  ↓  ↓  ↓",
    "        "
    "┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌─┐┌"
    "─┐",
    "sectors "
    "│█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││█││"
    "█│",
    "        "
    "└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└─┘└"
    "─┘",
    "        +0                                                                                    "
    "   +126976 bytes",
    "memory  "
    "█░░█░░█░░█░░█░░█░░█░░█░░█░░█░░█░░░█░░█░░█░░█░░█░░█░░█░░█░░█░░█░░░█░░█░░█░░█░░█░░█░░█░░█░░█░░█░"
    "░█ 124 KiB",
    "32 sectors (8x the fewest): 1024 B moved for 128 B used",
    "● a lane's access  ↓ to its 32-byte sector  █ words used  ░ moved, unused; memory: a column ~ "
    "1323 B",
};
static const char *const want_transposed_compact[] = {
    "lane    0               8               16              24           31",
    "stores  * * * * * * * * * * * * * * * * * * * * * * * * * * * * * * * *",
    "        v v v v v v v v v v v v v v v v v v v v v v v v v v v v v v v v",
    "sectors ##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==",
    "memory  ##.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.## 124 KiB",
    "32 sectors (8x the fewest): 1024 B moved for 128 B used",
};
static const char *const want_stride2_utf8[] = {
    "lane     0                       8                       16                      24           "
    "       31",
    "loads    ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  "
    "●  ●  ●  ●",
    "         │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  │  "
    "│  │  │  │",
    "         ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  "
    "↓  ↓  ↓  ↓",
    "        "
    "┌──────────┐┌──────────┐┌──────────┐┌──────────┐┌──────────┐┌──────────┐┌──────────┐┌─────────"
    "─┐",
    "sectors "
    "│██░█░██░█░││██░█░██░█░││██░█░██░█░││██░█░██░█░││██░█░██░█░││██░█░██░█░││██░█░██░█░││██░█░██░█"
    "░│",
    "        "
    "└──────────┘└──────────┘└──────────┘└──────────┘└──────────┘└──────────┘└──────────┘└─────────"
    "─┘",
    "        +0          +32         +64         +96         +128        +160        +192        "
    "+224         bytes",
    "memory  ████████ 256 B",
    "8 sectors (2x the fewest): 256 B moved for 128 B used",
    "● a lane's access  ↓ to its 32-byte sector  █ words used  ░ moved, unused",
};
static const char *const want_stride32_ascii[] = {
    "lane    0               8               16              24           31",
    "loads   * * * * * * * * * * * * * * * * * * * * * * * * * * * * * * * *",
    "        | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | |",
    "        v v v v v v v v v v v v v v v v v v v v v v v v v v v v v v v v",
    "        ##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==",
    "sectors ##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==",
    "        ##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==##==",
    "        +0                                                         +3968 bytes",
    "memory  #.#.#.#.#.#.#.#.#.#.##.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.## 4000 B",
    "32 sectors (8x the fewest): 1024 B moved for 128 B used",
    "* lane  v its sector  # word used  . moved, unused; memory: a column ~ 66 B",
};
static const char *const want_reversed_utf8[] = {
    "lane     0                       8                       16                      24           "
    "       31",
    "loads    ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  ●  "
    "●  ●  ●  ●",
    "         D  D  D  D  D  D  D  D  C  C  C  C  C  C  C  C  B  B  B  B  B  B  B  B  A  A  A  A  "
    "A  A  A  A",
    "         ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  ↓  "
    "↓  ↓  ↓  ↓",
    "        "
    "┌──────────────────────┐┌──────────────────────┐┌──────────────────────┐┌─────────────────────"
    "─┐",
    "sectors "
    "│A█████████████████████││B█████████████████████││C█████████████████████││D████████████████████"
    "█│",
    "        "
    "└──────────────────────┘└──────────────────────┘└──────────────────────┘└─────────────────────"
    "─┘",
    "        +0                      +32                     +64                     +96           "
    "           bytes",
    "memory  ████ 128 B",
    "4 sectors (the fewest: 4): 128 B moved for 128 B used",
    "● a lane's access  ↓ to its 32-byte sector  █ words used  ░ moved, unused",
};
static const char *const want_bank32_utf8[] = {
    "bank   0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 "
    "29 30 31",
    "   w0  4  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w128  4  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w256  4  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w384  4  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w512  4  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w640  4  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w768  4  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w896  4  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    "waves 32  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  "
    "0  0  0",
    "wavefronts: 32 (32-way conflict); row pitch 32 words",
    "(4 rows a line: a digit counts a cell's words)",
};
static const char *const want_bank32_short[] = {
    "bank   0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 "
    "29 30 31",
    "   w0  4  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w128  4  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w256  4  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w384  4  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w512  4  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w640  4  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w768  4  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w896  4  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    "waves 32  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  "
    "0  0  0",
    "wavefronts: 32 (32-way conflict); row pitch 32 words",
    "(4 rows a line: a digit counts a cell's words)",
};
static const char *const want_bank32_ascii[] = {
    "bank   0       4       8      12      16      20      24      28",
    "   w0  8 . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . .",
    " w256  8 . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . .",
    " w512  8 . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . .",
    " w768  8 . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . .",
    "waves 32 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
    "wavefronts: 32 (32-way conflict); row pitch 32 words",
    "(8 rows a line: a digit counts a cell's words)",
};
static const char *const want_bank33_utf8[] = {
    "bank   0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 "
    "29 30 31",
    "   w0  ●  ●  ●  ●  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w128  ·  ·  ·  ·  ●  ●  ●  ●  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w256  ·  ·  ·  ·  ·  ·  ·  ·  ●  ●  ●  ●  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w384  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ●  ●  ●  ●  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w512  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ●  ●  ●  ●  ·  ·  ·  ·  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w640  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ●  ●  ●  ●  ·  ·  ·  ·  ·  "
    "·  ·  ·",
    " w768  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ●  ●  ●  ●  ·  "
    "·  ·  ·",
    " w896  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ·  ●  "
    "●  ●  ●",
    "waves  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  "
    "1  1  1",
    "wavefronts: 1 (no conflict); row pitch 33 words",
    "(4 rows a line: a digit counts a cell's words)",
};
static const char *const want_bank33_ascii[] = {
    "bank   0       4       8      12      16      20      24      28",
    "   w0  o o o o o o o o . . . . . . . . . . . . . . . . . . . . . . . .",
    " w256  . . . . . . . . o o o o o o o o . . . . . . . . . . . . . . . .",
    " w512  . . . . . . . . . . . . . . . . o o o o o o o o . . . . . . . .",
    " w768  . . . . . . . . . . . . . . . . . . . . . . . . o o o o o o o o",
    "waves  1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1",
    "wavefronts: 1 (no conflict); row pitch 33 words",
    "(8 rows a line: a digit counts a cell's words)",
};
static const char *const want_broadcast_ascii[] = {
    "bank   0       4       8      12      16      20      24      28",
    "   w0  . . . . . B . . . . . . . . . . . . . . . . . . . . . . . . . .",
    "  ~    ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~ ~",
    "  w64  . . . . . . B . . . . . . . . . . . . . . . . . . . . . . . . .",
    "waves  0 0 0 0 0 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
    "wavefronts: 1 (no conflict; a broadcast to 16 lanes); row pitch 32 words",
    "o a lane's word  X conflict: its bank serves several  B broadcast (free)",
};
static const char *const want_bank32_pane58[] = {
    "bank  0       8      16      24",
    "   w0 4·······························",
    " w128 4·······························",
    " w256 4·······························",
    " w384 4·······························",
    " w512 4·······························",
    " w640 4·······························",
    " w768 4·······························",
    " w896 4·······························",
    "waves +0000000000000000000000000000000 +: up to 32",
    "wavefronts: 32 (32-way conflict); row pitch 32 words",
    "(4 rows a line: a digit counts a cell's words)",
};
static const char *const want_stride8_pane58[] = {
    "lane    0       8       16      24    31",
    "loads   ●●●●●●●●●●●●●●●●●●●●●●●●●●●●●●●●",
    "        ││││││││││││││││││││││││││││││││",
    "        ↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓",
    "        █▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓",
    "sectors █▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓",
    "        █▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓",
    "        +0                          +992 bytes",
    "memory  ████████████████████████████████ 1024 B",
    "32 sectors (8x the fewest): 1024 B moved for 128 B used",
    "● lane  ↓ its sector  █ word used  ░ moved, unused",
};
static const char *const want_bank33_tiny[] = {
    "wavefronts: 1 (no conflict); row pitch 33 words",
};

static void run_case(const draw_case *c, void (*setup)(fake *, pl_picture *))
{
    static fake f;
    viz_grid g = {0};
    pl_picture p;
    setup(&f, &p);
    if (getenv("PIC_DUMP")) fprintf(stderr, "== %s\n", c->name);
    int n = draw(&g, c->banks ? viz_pic_banks : viz_pic_request, &p, c->w, c->h, c->utf8);
    if (getenv("PIC_DUMP")) fprintf(stderr, "=> %d\n", n);
    CU_ASSERT_EQUAL(n, c->rows);
    check_rows(&g, 0, c->want, c->rows);
    for (int y = c->rows; y < c->h; y++) { /* nothing below what it says it used */
        char row[2048];
        row_text(&g, y, 0, g.w, row, sizeof row);
        CU_ASSERT_EQUAL(strspn(row, " "), strlen(row));
    }
    pl_picture_free(&p);
    viz_grid_free(&g);
}

#define CASE(nm, b, w, h, u)                                                                       \
    {                                                                                              \
#nm, b, w, h, u, want_##nm, (int)(sizeof want_##nm / sizeof *want_##nm)                    \
    }
static void setup_coalesced_utf8(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    request_of(f, 0, 4, p, 0);
}
static void setup_stride8_utf8(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    request_of(f, 0, 32, p, 0);
}
static void setup_stride8_ascii(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    request_of(f, 0, 32, p, 0);
}
static void setup_stride8_compact(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    request_of(f, 0, 32, p, 0);
}
static void setup_stride8_minimal(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    request_of(f, 0, 32, p, 0);
}
static void setup_transposed_utf8(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    request_of(f, 8200, 4096, p, 1);
}
static void setup_transposed_compact(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    request_of(f, 8200, 4096, p, 1);
}
static void setup_stride2_utf8(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    request_of(f, 0, 8, p, 0);
}
static void setup_stride32_ascii(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    request_of(f, 0, 128, p, 0);
}
static void setup_reversed_utf8(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    reversed(f, p);
}
static void setup_bank32_utf8(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    tile_read(f, 32, p);
}
static void setup_bank32_short(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    tile_read(f, 32, p);
}
static void setup_bank32_ascii(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    tile_read(f, 32, p);
}
static void setup_bank33_utf8(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    tile_read(f, 33, p);
}
static void setup_bank33_ascii(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    tile_read(f, 33, p);
}
static void setup_broadcast_ascii(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    broadcast(f, p);
}
static void setup_bank32_pane58(fake *f, pl_picture *p) { tile_read(f, 32, p); }
static void setup_stride8_pane58(fake *f, pl_picture *p) { request_of(f, 0, 32, p, 0); }
static void setup_bank33_tiny(fake *f, pl_picture *p)
{
    (void)f, (void)p;
    tile_read(f, 33, p);
}

static void test_draw_request(void)
{
    static const struct {
        draw_case c;
        void (*setup)(fake *, pl_picture *);
    } t[] = {
        {CASE(coalesced_utf8, 0, 118, 11, 1), setup_coalesced_utf8},
        {CASE(stride8_utf8, 0, 118, 11, 1), setup_stride8_utf8},
        {CASE(stride8_pane58, 0, 58, 11, 1), setup_stride8_pane58},
        {CASE(stride8_ascii, 0, 78, 11, 0), setup_stride8_ascii},
        {CASE(stride8_compact, 0, 78, 7, 0), setup_stride8_compact},
        {CASE(stride8_minimal, 0, 78, 3, 0), setup_stride8_minimal},
        {CASE(transposed_utf8, 0, 118, 11, 1), setup_transposed_utf8},
        {CASE(transposed_compact, 0, 78, 7, 0), setup_transposed_compact},
        {CASE(stride2_utf8, 0, 118, 11, 1), setup_stride2_utf8},
        {CASE(stride32_ascii, 0, 78, 11, 0), setup_stride32_ascii},
        {CASE(reversed_utf8, 0, 118, 11, 1), setup_reversed_utf8},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) run_case(&t[i].c, t[i].setup);
    pl_picture p;
    static fake f;
    request_of(&f, 0, 4, &p, 0);
    CU_ASSERT_EQUAL(viz_pic_request_rows(&p, 118), 11);
    CU_ASSERT_EQUAL(viz_pic_request_rows(&p, 78), 11);
    pl_picture_free(&p);
}

static void test_draw_banks(void)
{
    static const struct {
        draw_case c;
        void (*setup)(fake *, pl_picture *);
    } t[] = {
        {CASE(bank32_utf8, 1, 118, 38, 1), setup_bank32_utf8},
        {CASE(bank32_short, 1, 118, 18, 1), setup_bank32_short},
        {CASE(bank32_ascii, 1, 78, 10, 0), setup_bank32_ascii},
        {CASE(bank33_utf8, 1, 118, 38, 1), setup_bank33_utf8},
        {CASE(bank33_ascii, 1, 78, 10, 0), setup_bank33_ascii},
        {CASE(broadcast_ascii, 1, 78, 8, 0), setup_broadcast_ascii},
        {CASE(bank33_tiny, 1, 78, 3, 0), setup_bank33_tiny},
        {CASE(bank32_pane58, 1, 58, 12, 1), setup_bank32_pane58},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) run_case(&t[i].c, t[i].setup);
    pl_picture p;
    static fake f;
    tile_read(&f, 32, &p);
    CU_ASSERT_EQUAL(viz_pic_banks_rows(&p, 118), 12); /* 32 rows folded to 8 lines, + 4 */
    pl_picture_free(&p);
    broadcast(&f, &p);
    CU_ASSERT_EQUAL(viz_pic_banks_rows(&p, 118), 7); /* rows 0, a gap, 2 + 4 */
    pl_picture_free(&p);
}

/* ---- from the simulated GPU's record of real kernels ---------------------------------
 * kernels_mem.cu's (compiled in call mode, as Lab 02's are): a strided copy
 * and a tile read by columns, recorded with the lab's configuration (the
 * input and output arrays, block 0, shared memory), counted at the same
 * time by simtMemStats: the picture's sectors and wavefronts are the
 * counters' per request. Where the device records nothing (a real GPU),
 * pl_device_record_begin must refuse. */

static int record_on(const void *a, size_t an, const void *b, size_t bn)
{
    pl_record_config c = {
        .max_accesses = 1 << 14, .shared = 1, .nranges = 2, .block_first = 0, .block_count = 1};
    c.range[0].lo = a;
    c.range[0].len = an;
    c.range[1].lo = b;
    c.range[1].len = bn;
    int e = pl_device_record_begin(&c);
    CU_ASSERT_EQUAL(e, pl_device_caps()->records ? 0 : -1);
    return e == 0;
}

static void test_recorded_strided(void)
{
    float *in = NULL, *out = NULL;
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&in, 32 * 8 * sizeof(float)), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&out, 32 * sizeof(float)), cudaSuccess);
    CU_ASSERT_EQUAL(cudaMemset(in, 0, 32 * 8 * sizeof(float)), cudaSuccess);
    for (int stride = 1; stride <= 8; stride *= 8) {
        CU_ASSERT_EQUAL(cudaDeviceSynchronize(), cudaSuccess);
        int rec = record_on(in, 32 * 8 * sizeof(float), out, 32 * sizeof(float));
        int counting = pl_device_mem_stats_begin() == 0;
        CU_ASSERT_EQUAL(tk_strided_copy(out, in, stride, 32), cudaSuccess);
        CU_ASSERT_EQUAL(cudaDeviceSynchronize(), cudaSuccess);
        pl_mem_stats st = {0};
        if (counting) CU_ASSERT_EQUAL(pl_device_mem_stats_end(&st), 0);
        if (!rec) continue;
        pl_kernel_record r;
        CU_ASSERT_EQUAL_FATAL(pl_device_record_end(&r), 0);
        pl_picture p;
        CU_ASSERT_EQUAL_FATAL(pl_picture_request(&r, 0, 0, "strided", &p), 0);
        well_formed(&p);
        CU_ASSERT_EQUAL(p.p[0], 32);
        CU_ASSERT_EQUAL(p.p[2], stride == 1 ? 4 : 32);
        CU_ASSERT_EQUAL(p.p[4], 4);
        CU_ASSERT_EQUAL(p.p[3], 0);
        for (int l = 0; l < 32; l++) CU_ASSERT_EQUAL(p.iv[l], 4 * stride * l);
        if (counting) { /* one request each way: the counters' sectors */
            CU_ASSERT_EQUAL(st.global_load.requests, 1);
            CU_ASSERT_EQUAL((long long)st.global_load.units, p.p[2]);
        }
        pl_picture_free(&p);
        /* the stores, to range 1: not range 0's; none in range 0 */
        CU_ASSERT_EQUAL(pl_picture_request(&r, 1, 0, "stores", &p), -1);
        pl_kernel_record_free(&r);
    }
    cudaFree(in);
    cudaFree(out);
}

static void test_recorded_tile(void)
{
    float *in = NULL, *out = NULL;
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&in, 1024 * sizeof(float)), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&out, 1024 * sizeof(float)), cudaSuccess);
    CU_ASSERT_EQUAL(cudaMemset(in, 0, 1024 * sizeof(float)), cudaSuccess);
    /* mode 0: a 32x32 tile, 1: 32x33, 2: a broadcast of tile[0][0] */
    static const int waves[3] = {32, 1, 1}, pitch[3] = {32, 33, 32};
    for (int mode = 0; mode < 3; mode++) {
        CU_ASSERT_EQUAL(cudaDeviceSynchronize(), cudaSuccess);
        int rec = record_on(out, 1024 * sizeof(float), in, 1024 * sizeof(float));
        int counting = pl_device_mem_stats_begin() == 0;
        CU_ASSERT_EQUAL(tk_tile_columns(out, in, mode), cudaSuccess);
        CU_ASSERT_EQUAL(cudaDeviceSynchronize(), cudaSuccess);
        pl_mem_stats st = {0};
        if (counting) CU_ASSERT_EQUAL(pl_device_mem_stats_end(&st), 0);
        if (!rec) continue;
        pl_kernel_record r;
        CU_ASSERT_EQUAL_FATAL(pl_device_record_end(&r), 0);
        pl_picture p;
        CU_ASSERT_EQUAL_FATAL(pl_picture_banks(&r, 0, 0, pitch[mode], "tile", &p), 0);
        well_formed(&p);
        CU_ASSERT_EQUAL(p.p[2], waves[mode]);
        for (int l = 0; l < 32; l++) CU_ASSERT_EQUAL(p.iv[l], mode == 2 ? 0 : pitch[mode] * l);
        /* the counters: 32 requests of loads (one per warp); warp 0's is
         * the picture's, and every warp's alike */
        if (counting && st.shared_load.requests)
            CU_ASSERT_EQUAL((long long)(st.shared_load.units / st.shared_load.requests), p.p[2]);
        pl_picture_free(&p);
        /* its row stores: 1 wavefront */
        CU_ASSERT_EQUAL_FATAL(pl_picture_banks(&r, 1, 0, pitch[mode], "rows", &p), 0);
        CU_ASSERT_EQUAL(p.p[2], 1);
        pl_picture_free(&p);
        /* the stores to out (range 0) by rows: 4 sectors */
        CU_ASSERT_EQUAL_FATAL(pl_picture_request(&r, 1, 0, "out", &p), 0);
        CU_ASSERT_EQUAL(p.p[2], 4);
        pl_picture_free(&p);
        pl_kernel_record_free(&r);
    }
    cudaFree(in);
    cudaFree(out);
}

int register_picture_lab02_suite(void)
{
    static const unit_test tests[] = {
        {"a coalesced warp touches 4 sectors", test_coalesced},
        {"a stride-8 warp touches 32 sectors, stride 2 8", test_stride8},
        {"a transposed warp's stores: 32 sectors 4 KiB apart", test_transposed},
        {"the site-th site, each lane's first time, warp 0 of block 0", test_sites},
        {"banks: 32x32 column 32 wavefronts, 32x33 1, broadcast, 2-way", test_banks},
        {"the request drawn: coalesced, strided, transposed; UTF-8, ASCII, 80x24",
         test_draw_request},
        {"the banks drawn: 32x32, 32x33, a broadcast; UTF-8, ASCII, 80x24", test_draw_banks},
        {"recorded: a strided copy's loads, as simtMemStats counts them", test_recorded_strided},
        {"recorded: a tile's column reads, 32x32, 32x33, a broadcast", test_recorded_tile},
    };
    return UNIT_SUITE("picture lab02", tests);
}
