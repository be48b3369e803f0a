/*
 * test_plots.c — bar charts with labels and an axis (PL_PIC_BARS,
 * viz/picture_plots.c) drawn into a cell grid, every row's text: Lab 02's
 * bandwidths in GB/s with the preset's peak as the reference line and the
 * student's bar highlighted, UTF-8 at 118 columns and ASCII at 78; the
 * rows it asks for; fewer rows (the legend, the ticks' labels, the axis
 * go, then bars, saying how many); no reference line; values too small
 * for a cell. PIC_DUMP=1 prints each grid.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../viz/vizint.h"
#include "grid_text.h"
#include "paralab/picture.h"
#include "suites.h"

static void check_rows(const viz_grid *g, int y0, const char *const *want, int n)
{
    char row[2048];
    for (int y = 0; y < n; y++) {
        row_text(g, y0 + y, 0, g->w, row, sizeof row);
        size_t len = strlen(row);
        while (len && row[len - 1] == ' ') row[--len] = '\0';
        CU_ASSERT_STRING_EQUAL(row, want[y]);
        if (strcmp(row, want[y]))
            fprintf(stderr, "  row %d: got  '%s'\n         want '%s'\n", y0 + y, row, want[y]);
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
            fprintf(stderr, "        \"%s\",\n", line);
        }
    }
    free(t);
}

static int draw(viz_grid *g, const pl_picture *p, int w, int h, int utf8)
{
    viz_grid_resize(g, w, h);
    g->utf8 = utf8;
    int n = viz_pic_bars(g, (pl_rect){0, 0, w, h}, p, 1.0);
    dump(g);
    return n;
}

/* n bars of values v, labels l, a reference line ref (NaN: none) named rl, bar hi lit. */
static void bars(pl_picture *p, int n, const double *v, const char *const *l, double ref,
                 const char *rl, int hi)
{
    CU_ASSERT_EQUAL_FATAL(
        pl_picture_init(p, PL_PIC_BARS, "bandwidth", 0, (size_t)n + 1, (size_t)n + 2), 0);
    p->p[0] = n;
    p->p[1] = hi;
    for (int i = 0; i < n; i++) {
        p->dv[i] = v[i];
        snprintf(p->sv[1 + i], sizeof p->sv[0], "%s", l[i]);
    }
    p->dv[n] = ref;
    snprintf(p->sv[0], sizeof p->sv[0], "GB/s");
    snprintf(p->sv[1 + n], sizeof p->sv[0], "%s", rl);
}

static const double lab02_v[] = {1500, 750, 375, 187.5, 187.5, 190.4, 1473.2, 1473.2};
static const char *const lab02_l[] = {"stride 1",  "stride 2", "stride 4",      "stride 8",
                                      "stride 32", "naive",    "tiled (yours)", "padded"};

/* Lab 02's 8 kernels against the preset's peak, the student's lit. */
static void lab02(pl_picture *p)
{
    bars(p, 8, lab02_v, lab02_l, 3350, "peak (H100-SXM preset)", 6);
}

/* 3 copies, no reference line, none lit; one value too small for a cell. */
static void copies(pl_picture *p)
{
    static const double v[] = {12.5, 25.0, 0.01};
    static const char *const l[] = {"pageable", "pinned", "tiny"};
    bars(p, 3, v, l, NAN, "", -1);
}

/* The reference line past every bar, its label pushed left to fit. */
static void copies_ref(pl_picture *p)
{
    static const double v[] = {28.7, 50.7};
    static const char *const l[] = {"pageable", "pinned"};
    bars(p, 2, v, l, 64, "the host link", 1);
}

static const char *const want_lab02_utf8[] = {
    "  stride 1      ██████████████████████████████████                                         ┊  "
    "             1500.0 GB/s",
    "  stride 2      █████████████████                                                          ┊  "
    "              750.0 GB/s",
    "  stride 4      ████████                                                                   ┊  "
    "              375.0 GB/s",
    "  stride 8      ████                                                                       ┊  "
    "              187.5 GB/s",
    "  stride 32     ████                                                                       ┊  "
    "              187.5 GB/s",
    "  naive         ████                                                                       ┊  "
    "              190.4 GB/s",
    "▶ tiled (yours) ▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓                                          ┊  "
    "             1473.2 GB/s",
    "  padded        █████████████████████████████████                                          ┊  "
    "             1473.2 GB/s",
    "                "
    "└──────────────────────┬─────────────────────┬──────────────────────┬──────┊──────────────┬",
    "                0                      1000                  2000                   3000      "
    "            4000 GB/s",
    "                                                                                 ┊ peak "
    "(H100-SXM preset): 3350.0 GB/s",
};
static const char *const want_lab02_ascii[] = {
    "  stride 1      ###################                       :        1500.0 GB/s",
    "  stride 2      #########                                 :         750.0 GB/s",
    "  stride 4      #####                                     :         375.0 GB/s",
    "  stride 8      ##                                        :         187.5 GB/s",
    "  stride 32     ##                                        :         187.5 GB/s",
    "  naive         ##                                        :         190.4 GB/s",
    "> tiled (yours) ==================                        :        1473.2 GB/s",
    "  padded        ##################                        :        1473.2 GB/s",
    "                +------------+-----------+------------+---:-------+",
    "                0            1000        2000         3000        4000 GB/s",
    "                                         : peak (H100-SXM preset): 3350.0 GB/s",
};
static const char *const want_lab02_9rows[] = {
    "  stride 1      ###################                       :        1500.0 GB/s",
    "  stride 2      #########                                 :         750.0 GB/s",
    "  stride 4      #####                                     :         375.0 GB/s",
    "  stride 8      ##                                        :         187.5 GB/s",
    "  stride 32     ##                                        :         187.5 GB/s",
    "  naive         ##                                        :         190.4 GB/s",
    "> tiled (yours) ==================                        :        1473.2 GB/s",
    "  padded        ##################                        :        1473.2 GB/s",
    "                +------------+-----------+------------+---:-------+",
};
static const char *const want_lab02_5rows[] = {
    "  stride 1      ###################                       :        1500.0 GB/s",
    "  stride 2      #########                                 :         750.0 GB/s",
    "  stride 4      #####                                     :         375.0 GB/s",
    "  (+5 more)",
    "                +------------+-----------+------------+---:-------+",
};
static const char *const want_lab02_2rows[] = {
    "  stride 1      ###################                       :        1500.0 GB/s",
    "  (+7 more)",
};
static const char *const want_copies_noref[] = {
    "  pageable ########################                                  12.5 GB/s",
    "  pinned   ################################################          25.0 GB/s",
    "  tiny     #                                                         0.01 GB/s",
    "           +------------------+------------------+------------------+",
    "           0                  10                 20                 30 GB/s",
};
static const char *const want_copies_ref_right[] = {
    "  pageable ██████████████                 ┊        28.7 GB/s",
    "▶ pinned   ▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓      ┊        50.7 GB/s",
    "           └─────────┬─────────┬────────┬─┊───────┬",
    "           0         20        40       60        80 GB/s",
    "                                  ┊ the host link: 64.0 GB/s",
};

typedef struct {
    const char *name;
    void (*setup)(pl_picture *);
    int w, h, utf8;
    const char *const *want;
    int rows;
} bars_case;
#define CASE(nm, s, w, h, u)                                                                       \
    {                                                                                              \
#nm, s, w, h, u, want_##nm, (int)(sizeof want_##nm / sizeof *want_##nm)                    \
    }

static void run_cases(const bars_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        viz_grid g = {0};
        pl_picture p;
        c[i].setup(&p);
        char err[256] = "";
        CU_ASSERT_EQUAL(pl_picture_check(&p, err, sizeof err), 0);
        if (getenv("PIC_DUMP")) fprintf(stderr, "== %s\n", c[i].name);
        int rows = draw(&g, &p, c[i].w, c[i].h, c[i].utf8);
        if (getenv("PIC_DUMP")) fprintf(stderr, "=> %d\n", rows);
        CU_ASSERT_EQUAL(rows, c[i].rows);
        check_rows(&g, 0, c[i].want, c[i].rows);
        pl_picture_free(&p);
        viz_grid_free(&g);
    }
}

static void test_bars_utf8(void)
{
    static const bars_case c[] = {
        CASE(lab02_utf8, lab02, 118, 11, 1),
        CASE(copies_ref_right, copies_ref, 60, 6, 1),
    };
    run_cases(c, sizeof c / sizeof *c);
    pl_picture p;
    lab02(&p);
    CU_ASSERT_EQUAL(viz_pic_bars_rows(&p, 118), 11); /* 8 bars, the axis, its labels, the line's */
    pl_picture_free(&p);
    copies(&p);
    CU_ASSERT_EQUAL(viz_pic_bars_rows(&p, 78), 5); /* no reference line: no legend */
    pl_picture_free(&p);
}

static void test_bars_ascii(void)
{
    static const bars_case c[] = {
        CASE(lab02_ascii, lab02, 78, 11, 0),  CASE(lab02_9rows, lab02, 78, 9, 0),
        CASE(lab02_5rows, lab02, 78, 5, 0),   CASE(lab02_2rows, lab02, 78, 2, 0),
        CASE(copies_noref, copies, 78, 5, 0),
    };
    run_cases(c, sizeof c / sizeof *c);
}

int register_plots_suite(void)
{
    static const unit_test tests[] = {
        {"bars: Lab 02's bandwidths, UTF-8 at 118 columns", test_bars_utf8},
        {"bars: ASCII at 78 columns, fewer rows, no reference line", test_bars_ascii},
    };
    return UNIT_SUITE("plots", tests);
}
