/*
 * test_picture.c — pictures (paralab/picture.h) from a lab to the screen:
 * the container (kind names, init, copy, free); pl_picture_check, a good
 * picture of every kind accepted and bad ones refused with their messages;
 * the trace note (a deep copy stamped with the trace's step), the writer's
 * "picture" instant and the replay reader (field by field, NaN kept; the
 * replay's plan puts it under its step; malformed ones refused naming the
 * file and the event); the model's choice of the pictures to show (the
 * newest step that noted any at or before the view's time, on either
 * clock); the reveal; the picture pane at 120x40 and 80x24, UTF-8 and
 * ASCII (its box and title, "no picture yet", two pictures stacked, side
 * by side, the line saying what was left out), its content compared with
 * the kind's renderer drawing the same picture in the same place; the
 * layout of the picture pane at every size; viz_pic_text; and
 * pl_lab_picture in a toy lab run without the UI, with a trace file.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../viz/vizint.h"
#include "grid_text.h"
#include "harness/harness.h"
#include "paralab/picture.h"
#include "paralab/trace.h"
#include "paralab/viz.h"
#include "suites.h"

/* ---- pictures of every kind ---------------------------------------------------------------- */

static void set_p(pl_picture *p, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) p->p[i] = va_arg(ap, long long);
    va_end(ap);
}

/* A good picture of `kind` (small, every number in range). */
static void good(pl_picture *p, int kind)
{
    switch (kind) {
    case PL_PIC_BLOCKS: /* 4 blocks on 2 SMs, one each at a time: 2 waves */
        CU_ASSERT_FATAL(pl_picture_init(p, kind, "blocks on SMs", 8, 0, 0) == 0);
        set_p(p, 6, 4LL, 2LL, 1LL, 2LL, 256LL, 4LL);
        for (int b = 0; b < 4; b++) {
            p->iv[2 * b] = b % 2;
            p->iv[2 * b + 1] = b / 2;
        }
        break;
    case PL_PIC_ELEMENTS: /* 10 elements, 3 blocks of 4: 2 tail threads */
        CU_ASSERT_FATAL(pl_picture_init(p, kind, "element map", 10, 0, 0) == 0);
        set_p(p, 8, 10LL, 4LL, 3LL, 10LL, 2LL, 0LL, -1LL, 0LL);
        for (int i = 0; i < 10; i++) p->iv[i] = i;
        break;
    case PL_PIC_REQUEST: /* 32 lanes of 4 bytes: 4 sectors */
        CU_ASSERT_FATAL(pl_picture_init(p, kind, "a warp's request", 32, 0, 1) == 0);
        set_p(p, 6, 32LL, 32LL, 4LL, 0LL, 4LL, 4LL);
        for (int l = 0; l < 32; l++) p->iv[l] = 4 * l;
        snprintf(p->sv[0], sizeof p->sv[0], "coalesced");
        break;
    case PL_PIC_BANKS: /* a column of a 32x32 tile: one bank, 32 wavefronts */
        CU_ASSERT_FATAL(pl_picture_init(p, kind, "shared banks", 32, 0, 1) == 0);
        set_p(p, 4, 32LL, 32LL, 32LL, 32LL);
        for (int l = 0; l < 32; l++) p->iv[l] = 32 * l;
        snprintf(p->sv[0], sizeof p->sv[0], "32x32");
        break;
    case PL_PIC_TREE: { /* 8 values, 3 levels */
        static const int32_t iv[] = {4, 0, 0, 4, 1, 1, 5, 2, 2, 6, 3, 3,
                                     7, 2, 0, 0, 2, 1, 1, 3, 1, 0, 0, 1};
        CU_ASSERT_FATAL(pl_picture_init(p, kind, "the tree", 24, 0, 0) == 0);
        set_p(p, 5, 8LL, 3LL, 32LL, 0LL, 8LL);
        memcpy(p->iv, iv, sizeof iv);
        break;
    }
    case PL_PIC_TILES: { /* 4x4x4 in tiles of 2: the block at tile (0, 1), 2 steps */
        static const int32_t iv[] = {0, 0, 2, 2, 0, 2, 2, 2, 0, 2, 2, 2, 2, 2, 2, 2};
        CU_ASSERT_FATAL(pl_picture_init(p, kind, "tiles along K", 16, 0, 0) == 0);
        set_p(p, 7, 4LL, 4LL, 4LL, 2LL, 2LL, 0LL, 1LL);
        memcpy(p->iv, iv, sizeof iv);
        break;
    }
    case PL_PIC_ROOFLINE:
        CU_ASSERT_FATAL(pl_picture_init(p, kind, "roofline", 0, 6, 3) == 0);
        set_p(p, 2, 2LL, 1LL);
        p->dv[0] = 989e12;
        p->dv[1] = 3.35e12;
        p->dv[2] = 0.25;
        p->dv[3] = 7e11;
        p->dv[4] = 8;
        p->dv[5] = 2.5e13;
        snprintf(p->sv[0], sizeof p->sv[0], "simulated H100-SXM preset");
        snprintf(p->sv[1], sizeof p->sv[1], "naive");
        snprintf(p->sv[2], sizeof p->sv[2], "tiled (yours)");
        break;
    default: /* bars: 3 and no reference line */
        CU_ASSERT_FATAL(pl_picture_init(p, PL_PIC_BARS, "bandwidth", 0, 4, 5) == 0);
        set_p(p, 2, 3LL, -1LL);
        p->dv[0] = 1500;
        p->dv[1] = 187.5;
        p->dv[2] = 0.1;
        p->dv[3] = NAN;
        snprintf(p->sv[0], sizeof p->sv[0], "GB/s");
        snprintf(p->sv[1], sizeof p->sv[1], "coalesced");
        snprintf(p->sv[2], sizeof p->sv[2], "strided x8");
        snprintf(p->sv[3], sizeof p->sv[3], "transposed");
        snprintf(p->sv[4], sizeof p->sv[4], "peak");
        break;
    }
}

/* Two pictures the same, field by field (NaN equal to NaN). */
static int same_picture(const pl_picture *a, const pl_picture *b)
{
    if (a->kind != b->kind || strcmp(a->title, b->title) || memcmp(a->p, b->p, sizeof a->p) ||
        a->ni != b->ni || a->nd != b->nd || a->ns != b->ns)
        return 0;
    if (a->ni && memcmp(a->iv, b->iv, a->ni * sizeof *a->iv)) return 0;
    for (size_t i = 0; i < a->nd; i++)
        if (!(a->dv[i] == b->dv[i] || (isnan(a->dv[i]) && isnan(b->dv[i])))) return 0;
    for (size_t i = 0; i < a->ns; i++)
        if (strcmp(a->sv[i], b->sv[i])) return 0;
    return 1;
}

/* ---- the container ------------------------------------------------------------------------ */

static void test_kinds_and_container(void)
{
    static const char *names[] = {"?",    "blocks", "elements", "request", "banks",
                                  "tree", "tiles",  "roofline", "bars"};
    for (int k = 0; k < PL_NUM_PICTURE_KINDS; k++) {
        CU_ASSERT_STRING_EQUAL(pl_picture_kind_name(k), names[k]);
        CU_ASSERT_EQUAL(pl_picture_kind_parse(names[k]), k ? k : PL_PIC_NONE);
    }
    CU_ASSERT_STRING_EQUAL(pl_picture_kind_name(-1), "?");
    CU_ASSERT_STRING_EQUAL(pl_picture_kind_name(PL_NUM_PICTURE_KINDS), "?");
    CU_ASSERT_EQUAL(pl_picture_kind_parse("none"), PL_PIC_NONE);
    CU_ASSERT_EQUAL(pl_picture_kind_parse("Blocks"), PL_PIC_NONE);
    CU_ASSERT_EQUAL(pl_picture_kind_parse(NULL), PL_PIC_NONE);

    pl_picture p, c;
    CU_ASSERT_EQUAL_FATAL(pl_picture_init(&p, PL_PIC_BARS, "a title", 3, 2, 4), 0);
    CU_ASSERT(p.kind == PL_PIC_BARS && p.ni == 3 && p.nd == 2 && p.ns == 4);
    CU_ASSERT_STRING_EQUAL(p.title, "a title");
    int zero = 1;
    for (int i = 0; i < 3; i++) zero &= p.iv[i] == 0;
    for (int i = 0; i < 2; i++) zero &= p.dv[i] == 0;
    for (int i = 0; i < 4; i++) zero &= p.sv[i][0] == 0;
    for (int i = 0; i < PL_PIC_PARAMS; i++) zero &= p.p[i] == 0;
    CU_ASSERT(zero);
    p.iv[2] = 7;
    p.dv[1] = NAN;
    snprintf(p.sv[3], sizeof p.sv[3], "label");
    p.p[7] = -3;
    CU_ASSERT_EQUAL_FATAL(pl_picture_copy(&c, &p), 0);
    CU_ASSERT(same_picture(&c, &p));
    CU_ASSERT(c.iv != p.iv && c.dv != p.dv && c.sv != p.sv); /* deep */
    pl_picture_free(&p);
    CU_ASSERT(p.iv == NULL && p.dv == NULL && p.sv == NULL && p.ni == 0 && p.kind == 0);
    CU_ASSERT(c.iv[2] == 7 && isnan(c.dv[1]) && !strcmp(c.sv[3], "label") && c.p[7] == -3);
    pl_picture_free(&c);
    pl_picture_free(&c); /* twice: harmless */
    /* a title longer than 47 bytes is cut; counts over the limits refused */
    char longer[80];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    CU_ASSERT_EQUAL(pl_picture_init(&p, PL_PIC_TREE, longer, 0, 0, 0), 0);
    CU_ASSERT_EQUAL(strlen(p.title), 47);
    CU_ASSERT(p.iv == NULL && p.dv == NULL && p.sv == NULL);
    pl_picture_free(&p);
    CU_ASSERT_EQUAL(pl_picture_init(&p, PL_PIC_TREE, "t", PL_PIC_MAX_INTS + 1, 0, 0), -1);
    CU_ASSERT(p.iv == NULL && p.ni == 0);
    CU_ASSERT_EQUAL(pl_picture_init(&p, PL_PIC_TREE, "t", 0, PL_PIC_MAX_REALS + 1, 0), -1);
    CU_ASSERT_EQUAL(pl_picture_init(&p, PL_PIC_TREE, "t", 0, 0, PL_PIC_MAX_LABELS + 1), -1);
    CU_ASSERT_EQUAL(pl_picture_init(&p, PL_NUM_PICTURE_KINDS, "t", 0, 0, 0), -1);
    CU_ASSERT_EQUAL(pl_picture_init(&p, PL_PIC_TREE, "t", PL_PIC_MAX_INTS, 0, 0), 0);
    CU_ASSERT(p.ni == PL_PIC_MAX_INTS && p.iv != NULL);
    pl_picture_free(&p);
}

/* ---- the check --------------------------------------------------------------------------- */

typedef void (*spoil_fn)(pl_picture *p);
static void blocks_sm(pl_picture *p) { p->iv[4] = 2; }
static void blocks_drawn(pl_picture *p) { p->p[5] = 5; }
static void blocks_ni(pl_picture *p) { p->ni = 7; }
static void blocks_threads(pl_picture *p) { p->p[4] = 1025; }
static void elements_oob(pl_picture *p) { p->p[5] = 1; }
static void elements_thread(pl_picture *p) { p->iv[9] = 12; }
static void request_lanes(pl_picture *p) { p->p[0] = 33; }
static void request_name(pl_picture *p) { p->ns = 0; }
static void banks_wave(pl_picture *p) { p->p[2] = 33; }
static void tree_count(pl_picture *p) { p->iv[13] = 5; }
static void tree_src(pl_picture *p) { p->iv[12] = 8; }
static void tree_extra(pl_picture *p) { p->ni = 23; }
static void tiles_b(pl_picture *p) { p->iv[15] = 3; }
static void tiles_col(pl_picture *p) { p->p[6] = 2; }
static void roof_point(pl_picture *p) { p->dv[4] = 0; }
static void roof_names(pl_picture *p) { p->ns = 2; }
static void bars_value(pl_picture *p) { p->dv[1] = -1; }
static void bars_inf(pl_picture *p) { p->dv[2] = INFINITY; }
static void bars_highlight(pl_picture *p) { p->p[1] = 3; }
static void kind_none(pl_picture *p) { p->kind = PL_PIC_NONE; }
static void sv_unended(pl_picture *p) { memset(p->sv[1], 'a', sizeof p->sv[1]); }

static void test_check(void)
{
    char err[512];
    for (int k = PL_PIC_NONE + 1; k < PL_NUM_PICTURE_KINDS; k++) {
        pl_picture p;
        good(&p, k);
        int rc = pl_picture_check(&p, err, sizeof err);
        CU_ASSERT_EQUAL(rc, 0);
        if (rc) fprintf(stderr, "\n  %s: %s\n", pl_picture_kind_name(k), err);
        CU_ASSERT_STRING_EQUAL(err, "");
        pl_picture_free(&p);
    }
    static const struct {
        int kind;
        spoil_fn spoil;
        const char *want;
    } c[] = {
        {PL_PIC_BLOCKS, blocks_sm,
         "picture \"blocks\" (blocks on SMs): iv[4] (a block's SM) = 2: allowed are 0..1"},
        {PL_PIC_BLOCKS, blocks_drawn,
         "picture \"blocks\" (blocks on SMs): p[5] (blocks drawn) = 5: allowed are 0..4"},
        {PL_PIC_BLOCKS, blocks_ni,
         "picture \"blocks\" (blocks on SMs): ni = 7: it must be 8 (an SM and a wave per block "
         "drawn, 2 x p[5])"},
        {PL_PIC_BLOCKS, blocks_threads,
         "picture \"blocks\" (blocks on SMs): p[4] (threads per block) = 1025: allowed are "
         "1..1024"},
        {PL_PIC_ELEMENTS, elements_oob,
         "picture \"elements\" (element map): p[6] (the first out-of-bounds thread) = -1: allowed "
         "are 0..11"},
        {PL_PIC_ELEMENTS, elements_thread,
         "picture \"elements\" (element map): iv[9] (the thread that wrote an element) = 12: "
         "allowed are -1..11"},
        {PL_PIC_REQUEST, request_lanes,
         "picture \"request\" (a warp's request): p[0] (lanes) = 33: allowed are 1..32"},
        {PL_PIC_REQUEST, request_name,
         "picture \"request\" (a warp's request): ns = 0: it must be 1 (the access's name)"},
        {PL_PIC_BANKS, banks_wave,
         "picture \"banks\" (shared banks): p[2] (wavefronts) = 33: allowed are 0..32"},
        {PL_PIC_TREE, tree_count,
         "picture \"tree\" (the tree): iv[13] (level 1's count k) = 5: allowed are 0..3 (the "
         "triples left in iv)"},
        {PL_PIC_TREE, tree_src,
         "picture \"tree\" (the tree): iv[12] (a src element) = 8: allowed are 0..7"},
        {PL_PIC_TREE, tree_extra,
         "picture \"tree\" (the tree): iv[20] (level 2's count k) = 1: allowed are 0..0 (the "
         "triples left in iv)"},
        {PL_PIC_TILES, tiles_b,
         "picture \"tiles\" (tiles along K): iv[15] (step 1's B tile cols) = 3: allowed are 0..2 "
         "(at most T, inside the matrix from 2)"},
        {PL_PIC_TILES, tiles_col,
         "picture \"tiles\" (tiles along K): p[6] (the block's tile column) = 2: allowed are 0..1"},
        {PL_PIC_ROOFLINE, roof_point,
         "picture \"roofline\" (roofline): dv[4] (a point's FLOP/byte) = 0: allowed is a finite "
         "number > 0"},
        {PL_PIC_ROOFLINE, roof_names,
         "picture \"roofline\" (roofline): ns = 2: it must be 3 (whose roof, then a name per "
         "point)"},
        {PL_PIC_BARS, bars_value,
         "picture \"bars\" (bandwidth): dv[1] (a bar's value) = -1: allowed is a finite number >= "
         "0, or NaN (none)"},
        {PL_PIC_BARS, bars_inf,
         "picture \"bars\" (bandwidth): dv[2] (a bar's value) = inf: allowed is a finite number "
         ">= 0, or NaN (none)"},
        {PL_PIC_BARS, bars_highlight,
         "picture \"bars\" (bandwidth): p[1] (the highlighted bar) = 3: allowed are -1..2"},
        {PL_PIC_BARS, kind_none,
         "picture kind 0: allowed are 1..8 (blocks, elements, request, banks, tree, tiles, "
         "roofline, bars)"},
        {PL_PIC_BARS, sv_unended,
         "picture \"bars\" (bandwidth): sv[1] is not a string of at most 31 bytes"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        pl_picture p;
        good(&p, c[i].kind);
        size_t ni = p.ni, ns = p.ns;
        c[i].spoil(&p);
        err[0] = '\0';
        CU_ASSERT_EQUAL(pl_picture_check(&p, err, sizeof err), -1);
        CU_ASSERT_STRING_EQUAL(err, c[i].want);
        if (strcmp(err, c[i].want)) fprintf(stderr, "\n  case %zu: %s\n", i, err);
        p.ni = ni; /* the arrays as allocated, for free */
        p.ns = ns;
        pl_picture_free(&p);
    }
    CU_ASSERT_EQUAL(pl_picture_check(NULL, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "no picture");
    pl_picture p;
    good(&p, PL_PIC_BLOCKS);
    CU_ASSERT_EQUAL(pl_picture_check(&p, NULL, 0), 0); /* no room for a message: still an answer */
    p.iv[1] = 2;
    CU_ASSERT_EQUAL(pl_picture_check(&p, NULL, 0), -1);
    pl_picture_free(&p);
}

/* ---- the note, the file, the replay ------------------------------------------------------ */

/* The trace's notes: a picture noted is a deep copy stamped with the
 * trace's step; one pl_picture_check refuses is not noted; freed with the
 * notes. */
static void test_note(void)
{
    pl_trace *t = pl_trace_create(1, 16, PL_TRACE_DROP);
    CU_ASSERT_FATAL(t != NULL);
    pl_picture a, b;
    good(&a, PL_PIC_TREE);
    good(&b, PL_PIC_BARS);
    pl_trace_note_picture(t, &a); /* before any step: step 0 */
    pl_trace_set_step(t, 3);
    pl_trace_note_step(t, 3, "three");
    pl_trace_note_picture(t, &b);
    b.p[1] = 9; /* refused */
    pl_trace_note_picture(t, &b);
    pl_trace_note_picture(t, NULL);
    pl_trace_note_picture(NULL, &a);
    b.p[1] = -1;
    pl_note *ns;
    size_t n = pl_trace_take_notes(t, &ns);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT(ns[0].kind == PL_NOTE_PICTURE && ns[0].step == 0 && ns[0].pic != NULL);
    CU_ASSERT(ns[1].kind == PL_NOTE_STEP && ns[1].step == 3);
    CU_ASSERT(ns[2].kind == PL_NOTE_PICTURE && ns[2].step == 3 && ns[2].pic != NULL);
    CU_ASSERT(ns[0].pic != &a && ns[0].pic->iv != a.iv);
    CU_ASSERT(same_picture(ns[0].pic, &a));
    CU_ASSERT(same_picture(ns[2].pic, &b));
    CU_ASSERT(ns[2].at > 0 && ns[2].at >= ns[0].at);
    pl_trace_free_notes(ns, n);
    /* notes left in the trace are freed with it */
    pl_trace_note_picture(t, &a);
    pl_trace_destroy(t);
    pl_picture_free(&a);
    pl_picture_free(&b);
}

/* A picture of every kind through the writer, the file and the reader:
 * the same, field by field (the bars' NaN reference kept: null in the
 * file); each under the step it says in the replay's plan, in the
 * model's pictures there. */
static void test_round_trip(void)
{
    char path[] = "/tmp/paralab-picture-XXXXXX", err[512];
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    pl_trace_writer *w = pl_trace_writer_open(path, 1, 0, 0, err, sizeof err);
    CU_ASSERT_FATAL(w != NULL);
    unsigned panes = PL_PANE_BIT(PL_PANE_TIMELINE) | PL_PANE_BIT(PL_PANE_PICTURE);
    CU_ASSERT_EQUAL(pl_trace_writer_describe(w, "pictures", 2, panes, 0), 0);
    enum { K = PL_NUM_PICTURE_KINDS - 1 };
    pl_picture pics[K];
    pl_note n[K + 2];
    memset(n, 0, sizeof n);
    /* step 1's narration at 1 s; the pictures of step 2 before its narration
     * (a step begun before its work) at 2 s, the narration at 2.5 s; the
     * bars in step 2 too, after it */
    n[0] = (pl_note){.kind = PL_NOTE_STEP, .step = 1, .at = 1, .text = "one"};
    for (int k = 0; k < K; k++) {
        good(&pics[k], k + 1);
        n[1 + k] = (pl_note){.kind = PL_NOTE_PICTURE,
                             .step = k + 1 == PL_PIC_BLOCKS ? 1 : 2,
                             .at = 2 + 0.01 * k,
                             .pic = &pics[k]};
    }
    pics[K - 1].dv[0] = 1.0 / 3; /* exactly back */
    n[K + 1] = (pl_note){.kind = PL_NOTE_STEP, .step = 2, .at = 1.5, .text = "two"};
    CU_ASSERT_EQUAL(pl_trace_writer_add_notes(w, n, K + 2), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    /* the file: a picture is an instant of cat "picture", null for NaN */
    FILE *f = fopen(path, "r");
    CU_ASSERT_FATAL(f != NULL);
    static char text[65536];
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = '\0';
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(text, "{\"name\":\"bars\",\"cat\":\"picture\",\"ph\":\"i\",\"s\":\"g\",\"pid\":0,"
                     "\"tid\":0,\"ts\":2070000.000,\"args\":{\"step\":2,\"title\":\"bandwidth\","
                     "\"p\":[3,-1,0,0,0,0,0,0],\"iv\":[],\"dv\":[0.33333333333333331,187.5,"
                     "0.10000000000000001,null],\"sv\":[\"GB/s\",\"coalesced\",\"strided x8\","
                     "\"transposed\",\"peak\"]}}"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"name\":\"blocks\",\"cat\":\"picture\""));
    viz_trace t;
    int rc = viz_read_trace(path, &t, err, sizeof err);
    if (rc) fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(t.panes, panes);
    CU_ASSERT_EQUAL_FATAL(t.npictures, K);
    for (int k = 0; k < K; k++) {
        CU_ASSERT(same_picture(t.pictures[k].pic, &pics[k]));
        CU_ASSERT(fabs(t.pictures[k].at - (2 + 0.01 * k)) < 1e-9);
        CU_ASSERT_EQUAL(t.pictures[k].step, k + 1 == PL_PIC_BLOCKS ? 1 : 2);
        CU_ASSERT_EQUAL(t.pictures[k].after, 1);
    }
    CU_ASSERT(isnan(t.pictures[K - 1].pic->dv[3]));
    char msg[1024];
    CU_ASSERT_EQUAL(pl_viz_check_trace(path, msg, sizeof msg), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "; 2 narrated steps, 0 metric values, 8 pictures"));
    /* the plan: the blocks in step 1, the others in step 2 (after its narration at 1.5 s) */
    viz_item *items;
    size_t nitems, *first;
    int steps = viz_replay_plan(&t, &items, &nitems, &first);
    CU_ASSERT_EQUAL_FATAL(steps, 2);
    CU_ASSERT_EQUAL(nitems, K);
    CU_ASSERT_EQUAL(first[1], 1); /* step 1: one item */
    CU_ASSERT(items[0].metric == 3 && items[0].index == 0 && items[0].step == 1);
    for (size_t i = 1; i < nitems; i++)
        CU_ASSERT(items[i].metric == 3 && items[i].index == i && items[i].step == 2);
    /* the replay shows step 1: the blocks; then step 2: the seven others */
    viz_model m;
    viz_model_init(&m, 1);
    viz_cursor cur = {1, VIZ_REPLAY_REVEAL};
    size_t shown = viz_replay_shown(first, steps, cur);
    CU_ASSERT_EQUAL(shown, 1);
    for (size_t i = 0; i < shown; i++) CU_ASSERT_EQUAL(viz_replay_apply(&m, &t, &items[i]), 0);
    const pl_picture *out[8];
    double since = -1;
    int step = -1;
    CU_ASSERT_EQUAL(viz_model_pictures(&m, INFINITY, 0, out, 8, &since, &step), 1);
    CU_ASSERT(out[0]->kind == PL_PIC_BLOCKS && step == 1 && since > 0);
    CU_ASSERT(same_picture(out[0], &pics[0]));
    cur = (viz_cursor){2, VIZ_REPLAY_REVEAL};
    for (size_t i = shown; i < viz_replay_shown(first, steps, cur); i++)
        CU_ASSERT_EQUAL(viz_replay_apply(&m, &t, &items[i]), 0);
    CU_ASSERT_EQUAL(viz_model_pictures(&m, INFINITY, 0, out, 8, &since, &step), K - 1);
    CU_ASSERT_EQUAL(step, 2);
    for (int k = 1; k < K; k++) CU_ASSERT(same_picture(out[k - 1], &pics[k]));
    CU_ASSERT_EQUAL(m.nseries, 0); /* no curves */
    free(items);
    free(first);
    viz_model_free(&m);
    viz_trace_free(&t);
    for (int k = 0; k < K; k++) pl_picture_free(&pics[k]);
    unlink(path);
}

/* Malformed "picture" instants: refused, naming the file, the event and
 * what is wrong (pl_picture_check's message for a bad value). */
static void test_replay_refused(void)
{
    char path[] = "/tmp/paralab-picture-bad-XXXXXX", err[512];
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    static const struct {
        const char *ev, *want;
    } bad[] = {
        {"{\"ph\":\"i\",\"cat\":\"picture\",\"name\":\"blobs\",\"ts\":1,\"args\":{}}",
         ": event 1: a picture needs a name that is a kind (blocks, elements, request, banks, "
         "tree, tiles, roofline, bars)"},
        {"{\"ph\":\"i\",\"cat\":\"picture\",\"name\":\"bars\",\"ts\":1,\"args\":{\"title\":\"t\","
         "\"p\":[1,-1,0,0,0,0,0],\"iv\":[],\"dv\":[1,2],\"sv\":[\"u\",\"a\",\"r\"]}}",
         ": event 1: a picture needs args.p (an array of 8 whole numbers)"},
        {"{\"ph\":\"i\",\"cat\":\"picture\",\"name\":\"bars\",\"ts\":1,\"args\":{\"title\":\"t\","
         "\"p\":[1,-1,0,0,0,0,0,0],\"iv\":[],\"dv\":[1,\"2\"],\"sv\":[\"u\",\"a\",\"r\"]}}",
         ": event 1: picture \"bars\": element 1 of an array is not what it holds"},
        {"{\"ph\":\"i\",\"cat\":\"picture\",\"name\":\"bars\",\"ts\":1,\"args\":{\"title\":\"t\","
         "\"p\":[2,-1,0,0,0,0,0,0],\"iv\":[],\"dv\":[1,2],\"sv\":[\"u\",\"a\",\"r\"]}}",
         ": event 1: picture \"bars\" (t): nd = 2: it must be 3 (a value per bar, then the "
         "reference line's)"},
        {"{\"ph\":\"i\",\"cat\":\"picture\",\"name\":\"bars\",\"ts\":1,\"args\":{\"step\":-2,"
         "\"title\":\"t\",\"p\":[1,-1,0,0,0,0,0,0],\"iv\":[],\"dv\":[1,2],\"sv\":[\"u\",\"a\","
         "\"r\"]}}",
         ": event 1: a picture's args.step must be a whole number 0..1000000"},
        {"{\"ph\":\"i\",\"cat\":\"picture\",\"name\":\"bars\",\"args\":{\"title\":\"t\","
         "\"p\":[1,-1,0,0,0,0,0,0],\"iv\":[],\"dv\":[1,2],\"sv\":[\"u\",\"a\",\"r\"]}}",
         ": event 1: a picture needs a \"ts\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        FILE *f = fopen(path, "w");
        CU_ASSERT_FATAL(f != NULL);
        fprintf(f,
                "{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"paralab\",\"pid\":0,\"args\":{"
                "\"title\":\"x\"}},%s]}",
                bad[i].ev);
        fclose(f);
        viz_trace t;
        err[0] = '\0';
        CU_ASSERT_EQUAL(viz_read_trace(path, &t, err, sizeof err), -1);
        char want[512];
        snprintf(want, sizeof want, "%s%s", path, bad[i].want);
        CU_ASSERT_EQUAL(strncmp(err, want, strlen(want)), 0);
        if (strncmp(err, want, strlen(want))) fprintf(stderr, "\n  case %zu: %s\n", i, err);
    }
    /* the good one of the same shape reads */
    FILE *f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fprintf(f, "{\"traceEvents\":[{\"ph\":\"i\",\"cat\":\"picture\",\"name\":\"bars\",\"ts\":1,"
               "\"args\":{\"title\":\"t\",\"p\":[1,-1,0,0,0,0,0,0],\"iv\":[],\"dv\":[1,null],"
               "\"sv\":[\"u\",\"a\",\"r\"]}}]}");
    fclose(f);
    viz_trace t;
    CU_ASSERT_EQUAL_FATAL(viz_read_trace(path, &t, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(t.npictures, 1);
    CU_ASSERT(t.pictures[0].step == -1 && t.pictures[0].pic->dv[0] == 1 &&
              isnan(t.pictures[0].pic->dv[1]) && !strcmp(t.pictures[0].pic->sv[2], "r"));
    viz_trace_free(&t);
    unlink(path);
}

/* ---- the model ---------------------------------------------------------------------------- */

static void note_pic(viz_model *m, int kind, const char *title, int step, double at, double mat)
{
    pl_picture p;
    good(&p, kind);
    snprintf(p.title, sizeof p.title, "%s", title);
    pl_note n = {.kind = PL_NOTE_PICTURE, .step = step, .at = at, .modeled_at = mat, .pic = &p};
    CU_ASSERT_EQUAL(viz_model_note(m, &n), 0);
    pl_picture_free(&p);
}

/* Pictures in step 1 (at 1 s and 1.5 s) and step 3 (at 3 s and 3.2 s;
 * modeled 0.1 s each): between them, step 1's two; after, step 3's two,
 * oldest first; the newest while following; before any, none; at most
 * max, counting all. */
static void test_model_pictures(void)
{
    viz_model m;
    viz_model_init(&m, 1);
    const pl_picture *out[4] = {NULL};
    double since = -1;
    int step = -1;
    CU_ASSERT_EQUAL(viz_model_pictures(&m, INFINITY, 0, out, 4, &since, &step), 0);
    CU_ASSERT(since == 0 && step == 0);
    note_pic(&m, PL_PIC_BLOCKS, "a", 1, 1.0, 0.1);
    note_pic(&m, PL_PIC_ELEMENTS, "b", 1, 1.5, 0.2);
    double t0 = pl_trace_now();
    note_pic(&m, PL_PIC_TREE, "c", 3, 3.0, 0.3);
    note_pic(&m, PL_PIC_BARS, "d", 3, 3.2, 0.4);
    CU_ASSERT_EQUAL(m.npics, 4);
    CU_ASSERT_EQUAL(m.nseries, 0);
    CU_ASSERT(m.pics[2].at[0] == 3.0 && m.pics[2].at[1] == 0.3 && m.pics[2].step == 3);
    static const struct {
        double t;
        int modeled, n, step;
        const char *titles;
    } c[] = {
        {0.5, 0, 0, 0, ""},   {1.0, 0, 1, 1, "a"},       {2.0, 0, 2, 1, "ab"},
        {3.1, 0, 1, 3, "c"},  {INFINITY, 0, 2, 3, "cd"}, {0.25, 1, 2, 1, "ab"},
        {0.35, 1, 1, 3, "c"}, {5, 1, 2, 3, "cd"},        {0.05, 1, 0, 0, ""},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char got[8] = "";
        int n = viz_model_pictures(&m, c[i].t, c[i].modeled, out, 4, &since, &step);
        for (int k = 0; k < n && k < 4; k++) {
            got[k] = out[k]->title[0];
            got[k + 1] = '\0';
        }
        CU_ASSERT(n == c[i].n && step == c[i].step && !strcmp(got, c[i].titles));
        if (n != c[i].n || step != c[i].step || strcmp(got, c[i].titles))
            fprintf(stderr, "\n  case %zu: %d pictures of step %d: %s\n", i, n, step, got);
    }
    /* since: when the model took the newest in */
    viz_model_pictures(&m, INFINITY, 0, out, 4, &since, NULL);
    CU_ASSERT(since == m.pics[3].got && since >= t0);
    viz_model_pictures(&m, 2.0, 0, out, 4, &since, NULL);
    CU_ASSERT(since == m.pics[1].got);
    /* at most max; the count is all of them */
    out[1] = NULL;
    CU_ASSERT_EQUAL(viz_model_pictures(&m, INFINITY, 0, out, 1, NULL, NULL), 2);
    CU_ASSERT(!strcmp(out[0]->title, "c") && out[1] == NULL);
    viz_model_free(&m);
    CU_ASSERT(m.pics == NULL && m.npics == 0);
}

/* The reveal: the first part at once, then one every VIZ_PIC_REVEAL_S; a
 * still picture whole at once. */
static void test_reveal(void)
{
    pl_picture p;
    good(&p, PL_PIC_BLOCKS); /* 2 waves */
    CU_ASSERT_EQUAL(viz_pic_parts(&p), 2);
    p.p[3] = 4;
    CU_ASSERT_EQUAL(viz_pic_parts(&p), 4);
    static const double at[] = {-1, 0, 0.79, 0.81, 1.7, 2.5, 100};
    static const double want[] = {0.25, 0.25, 0.25, 0.5, 0.75, 1, 1};
    for (int i = 0; i < 7; i++) CU_ASSERT_DOUBLE_EQUAL(viz_pic_reveal(&p, at[i]), want[i], 1e-12);
    /* 33 parts: 32 after the first within VIZ_PIC_REVEAL_MAX_S, 0.25 s each */
    p.p[3] = 33;
    static const double at33[] = {0, 0.24, 0.26, 4.01, 7.99, 8.01, 100};
    static const double want33[] = {1, 1, 2, 17, 32, 33, 33};
    for (int i = 0; i < 7; i++)
        CU_ASSERT_DOUBLE_EQUAL(viz_pic_reveal(&p, at33[i]), want33[i] / 33, 1e-12);
    pl_picture_free(&p);
    good(&p, PL_PIC_TREE);
    CU_ASSERT_EQUAL(viz_pic_parts(&p), 3);
    pl_picture_free(&p);
    good(&p, PL_PIC_TILES);
    CU_ASSERT_EQUAL(viz_pic_parts(&p), 2);
    pl_picture_free(&p);
    good(&p, PL_PIC_BARS);
    CU_ASSERT_EQUAL(viz_pic_parts(&p), 1);
    CU_ASSERT_EQUAL(viz_pic_reveal(&p, 0), 1);
    pl_picture_free(&p);
    CU_ASSERT_EQUAL(viz_pic_parts(NULL), 1);
}

/* ---- the pane ----------------------------------------------------------------------------- */

/* The panes Labs 01 to 04 show (the harness adds devices, timeline, metrics). */
#define LAB_PANES                                                                                  \
    (PL_PANE_BIT(PL_PANE_DEVICES) | PL_PANE_BIT(PL_PANE_TIMELINE) | PL_PANE_BIT(PL_PANE_METRICS) | \
     PL_PANE_BIT(PL_PANE_PICTURE))

/* The cells a UTF-8 string takes. */
static int ncells(const char *s)
{
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Row y of g from x is `want` (as many cells as it has). */
static void check_row(const viz_grid *g, int x, int y, const char *want)
{
    char row[2048];
    row_text(g, y, x, ncells(want), row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, want);
    if (strcmp(row, want))
        fprintf(stderr, "\n  row %d: got  '%s'\n         want '%s'\n", y, row, want);
}

/* The cells of r on a and b are the same (glyph, colour, attributes). */
static int same_cells(const viz_grid *a, const viz_grid *b, pl_rect r)
{
    int bad = 0;
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++) {
            const viz_cell *p = cell(a, x, y), *q = cell(b, x, y);
            bad += p->ch != q->ch || p->fg != q->fg || p->attr != q->attr;
        }
    if (bad) fprintf(stderr, "\n  %d cells differ in %d %d %d %d\n", bad, r.x, r.y, r.w, r.h);
    return !bad;
}

/* What the kind's renderer draws of p in r (reveal), on a blank grid like g. */
static void reference(viz_grid *ref, const viz_grid *g, pl_rect r, const pl_picture *p, double rv)
{
    ref->utf8 = g->utf8;
    CU_ASSERT_FATAL(viz_grid_resize(ref, g->w, g->h) == 0);
    viz_pic_draw(ref, r, p, rv);
}

/* A line of n cells: the text, then `fill` to the end. */
static const char *line(char *buf, size_t cap, const char *text, const char *fill, int n)
{
    snprintf(buf, cap, "%s", text);
    for (int k = ncells(text); k < n; k++) strncat(buf, fill, cap - strlen(buf) - 1);
    return buf;
}

static void view_init(viz_view *v, int step)
{
    memset(v, 0, sizeof *v);
    v->follow = 1;
    v->step = step;
    v->ndev = 1;
}

/* The screen of Labs 01..04 at w x h: before any picture, the box titled
 * "picture" with "no picture yet"; with one, titled with its title and
 * drawn inside as the kind's renderer draws it, revealed by the time since
 * the model took it in; a step before the one shown says whose. */
static void test_pane_screen(int w, int h, int utf8)
{
    pl_layout L;
    pl_viz_layout(w, h, 1, LAB_PANES, &L);
    CU_ASSERT_FATAL(L.ok);
    pl_rect r = L.pane[PL_PANE_PICTURE];
    CU_ASSERT_FATAL(r.w >= 40 && r.h >= 8);
    viz_grid g = {0}, ref = {0};
    g.utf8 = utf8;
    CU_ASSERT_FATAL(viz_grid_resize(&g, w, h) == 0);
    viz_model m;
    viz_model_init(&m, 1);
    viz_view v;
    view_init(&v, 1);
    viz_render(&g, &L, &m, &v);
    const char *H = utf8 ? "─" : "-", *V = utf8 ? "│" : "|";
    char want[2048], top[2048];
    snprintf(top, sizeof top, "%s picture ", utf8 ? "┌" : "+");
    line(want, sizeof want, top, H, r.w - 1);
    strcat(want, utf8 ? "┐" : "+");
    check_row(&g, r.x, r.y, want);
    snprintf(top, sizeof top, "%sno picture yet", V);
    line(want, sizeof want, top, " ", r.w - 1);
    strcat(want, V);
    check_row(&g, r.x, r.y + 1, want);
    snprintf(top, sizeof top, "%s", utf8 ? "└" : "+");
    line(want, sizeof want, top, H, r.w - 1);
    strcat(want, utf8 ? "┘" : "+");
    check_row(&g, r.x, r.y + r.h - 1, want);
    /* one picture of step 1: the box titled with it; inside, the renderer's drawing */
    pl_picture p;
    good(&p, PL_PIC_BLOCKS); /* 2 waves: half at first */
    pl_note n = {.kind = PL_NOTE_PICTURE, .step = 1, .at = 1, .modeled_at = 1, .pic = &p};
    CU_ASSERT_EQUAL(viz_model_note(&m, &n), 0);
    double got = m.pics[0].got;
    pl_rect in = {r.x + 1, r.y + 1, r.w - 2, r.h - 2};
    for (int k = 0; k < 2; k++) {
        viz_grid_clear(&g);
        for (int q = 0; q < PL_NUM_PANES; q++)
            if (q != PL_PANE_PICTURE) viz_render_pane(&g, (pl_pane)q, L.pane[q], &m, &v);
        viz_picture_pane_at(&g, r, &m, &v, got + k * VIZ_PIC_REVEAL_S * 1.1);
        snprintf(top, sizeof top, "%s blocks on SMs ", utf8 ? "┌" : "+");
        line(want, sizeof want, top, H, r.w - 1);
        strcat(want, utf8 ? "┐" : "+");
        check_row(&g, r.x, r.y, want);
        int rows = viz_pic_rows(&p, in.w);
        pl_rect drawn = {in.x, in.y, in.w, rows < in.h ? rows : in.h};
        reference(&ref, &g, drawn, &p, k ? 1 : 0.5);
        CU_ASSERT(same_cells(&g, &ref, drawn));
        /* the box's sides around it */
        CU_ASSERT_EQUAL(cell(&g, r.x, r.y + 1)->ch, viz_glyph_ch(&g, G_V));
        CU_ASSERT_EQUAL(cell(&g, r.x + r.w - 1, r.y + 1)->ch, viz_glyph_ch(&g, G_V));
    }
    /* the view at step 2: the picture says it is step 1's */
    v.step = 2;
    viz_picture_pane_at(&g, r, &m, &v, got);
    snprintf(top, sizeof top, "%s blocks on SMs (step 1) ", utf8 ? "┌" : "+");
    line(want, sizeof want, top, H, r.w - 1);
    strcat(want, utf8 ? "┐" : "+");
    check_row(&g, r.x, r.y, want);
    /* focused: the border in the focus colour */
    v.focus = PL_PANE_PICTURE;
    viz_picture_pane_at(&g, r, &m, &v, got);
    CU_ASSERT_EQUAL(cell(&g, r.x, r.y)->fg, COL_FOCUS);
    pl_picture_free(&p);
    viz_model_free(&m);
    viz_grid_free(&g);
    viz_grid_free(&ref);
}

static void test_pane_120x40_utf8(void) { test_pane_screen(120, 40, 1); }
static void test_pane_80x24_ascii(void) { test_pane_screen(80, 24, 0); }
static void test_pane_120x40_ascii(void) { test_pane_screen(120, 40, 0); }
static void test_pane_80x24_utf8(void) { test_pane_screen(80, 24, 1); }

/* Several pictures of a step: stacked, a rule titled with the next one's
 * title between them, each drawn by its renderer in its rows; where they
 * do not all fit, side by side when each column can have 30 cells; else
 * the last row says what was left out; the first cut to the rows there
 * are when even it does not fit. */
static void test_pane_several(void)
{
    pl_picture a, b, c;
    good(&a, PL_PIC_BARS);
    good(&b, PL_PIC_ROOFLINE);
    good(&c, PL_PIC_REQUEST);
    viz_model m;
    viz_model_init(&m, 1);
    pl_note n = {.kind = PL_NOTE_PICTURE, .step = 2, .at = 1, .pic = &a};
    CU_ASSERT_EQUAL(viz_model_note(&m, &n), 0);
    n.pic = &b;
    CU_ASSERT_EQUAL(viz_model_note(&m, &n), 0);
    viz_view v;
    view_init(&v, 2);
    double now = pl_trace_now() + 100;
    for (int pass = 0; pass < 4; pass++) {
        int utf8 = pass % 2;
        if (pass == 2) { /* a third noted */
            n.pic = &c;
            CU_ASSERT_EQUAL(viz_model_note(&m, &n), 0);
        }
        viz_grid g = {0}, ref = {0};
        g.utf8 = utf8;
        const char *H = utf8 ? "─" : "-";
        CU_ASSERT_FATAL(viz_grid_resize(&g, 200, 80) == 0);
        char want[2048], head[256];
        /* stacked: 58 wide, tall enough for both */
        int ra = viz_pic_rows(&a, 56), rb = viz_pic_rows(&b, 56);
        pl_rect r = {0, 0, 58, ra + rb + 3};
        viz_picture_pane_at(&g, r, &m, &v, now);
        if (pass >= 2) goto three;
        snprintf(head, sizeof head, "%s bandwidth ", utf8 ? "┌" : "+");
        line(want, sizeof want, head, H, 57);
        check_row(&g, 0, 0, want);
        reference(&ref, &g, (pl_rect){1, 1, 56, ra}, &a, 1);
        CU_ASSERT(same_cells(&g, &ref, (pl_rect){1, 1, 56, ra}));
        snprintf(head, sizeof head, "%s roofline ", H);
        line(want, sizeof want, head, H, 56);
        check_row(&g, 1, 1 + ra, want);
        reference(&ref, &g, (pl_rect){1, 2 + ra, 56, rb}, &b, 1);
        CU_ASSERT(same_cells(&g, &ref, (pl_rect){1, 2 + ra, 56, rb}));
        viz_grid_free(&g);
        viz_grid_free(&ref);
        continue;
    three:; /* three: the third does not fit below; too narrow to go side by side */
        viz_grid_clear(&g);
        viz_picture_pane_at(&g, r, &m, &v, now);
        /* the first whole; the second whole when it leaves a row for the line, else left out */
        int second = ra + 1 + rb <= r.h - 2 - 1;
        line(want, sizeof want,
             second ? "+1 picture (a warp's request): enlarge the terminal"
                    : "+2 pictures (roofline, ...): enlarge the terminal",
             " ", 56);
        check_row(&g, 1, r.h - 2, want);
        CU_ASSERT_EQUAL(cell(&g, 1, r.h - 2)->fg, COL_WARN);
        reference(&ref, &g, (pl_rect){1, 1, 56, ra}, &a, 1);
        CU_ASSERT(same_cells(&g, &ref, (pl_rect){1, 1, 56, ra}));
        /* side by side: 3 columns of 30 (+ 2 separators) when stacking does not fit */
        int most = 0;
        const pl_picture *three[3] = {&a, &b, &c};
        for (int k = 0; k < 3; k++) {
            int rk = viz_pic_rows(three[k], 30);
            most = rk > most ? rk : most;
        }
        int stacked = viz_pic_rows(&a, 92) + viz_pic_rows(&b, 92) + viz_pic_rows(&c, 92) + 2;
        pl_rect s = {0, 0, 94, most + 2};
        viz_grid_clear(&g);
        viz_picture_pane_at(&g, s, &m, &v, now);
        if (stacked > most) {
            snprintf(head, sizeof head, "%s bandwidth ", utf8 ? "┌" : "+");
            line(want, sizeof want, head, H, 32);
            snprintf(head, sizeof head, " roofline ");
            line(want + strlen(want), sizeof want - strlen(want), head, H, 31);
            snprintf(head, sizeof head, " a warp's request ");
            line(want + strlen(want), sizeof want - strlen(want), head, H, 30);
            strcat(want, utf8 ? "┐" : "+");
            check_row(&g, 0, 0, want);
            for (int k = 0; k < 3; k++) {
                pl_rect col = {1 + 31 * k, 1, 30, most};
                reference(&ref, &g, col, three[k], 1);
                CU_ASSERT(same_cells(&g, &ref, col));
                if (k) CU_ASSERT_EQUAL(cell(&g, 31 * k, 1)->ch, viz_glyph_ch(&g, G_V));
            }
        }
        /* two rows inside: the first picture cut to one, the line under it */
        pl_rect tiny = {0, 0, 70, 4};
        viz_grid_clear(&g);
        viz_picture_pane_at(&g, tiny, &m, &v, now);
        if (viz_pic_rows(&a, 68) > 1) {
            /* the long form, else the short one: it fits the pane's width */
            char msg[128];
            snprintf(msg, sizeof msg,
                     "cut to 1 of %d rows, +2 pictures (roofline, ...): enlarge "
                     "the terminal",
                     viz_pic_rows(&a, 68));
            if (strlen(msg) > 68)
                snprintf(msg, sizeof msg, "cut: 1/%d rows, +2 pictures (roofline, ...); enlarge",
                         viz_pic_rows(&a, 68));
            CU_ASSERT(strlen(msg) <= 68);
            line(want, sizeof want, msg, " ", 68);
        } else
            line(want, sizeof want, "+2 pictures (roofline, ...): enlarge the terminal", " ", 68);
        check_row(&g, 1, 2, want);
        reference(&ref, &g, (pl_rect){1, 1, 68, 1}, &a, 1);
        CU_ASSERT(same_cells(&g, &ref, (pl_rect){1, 1, 68, 1}));
        viz_grid_free(&g);
        viz_grid_free(&ref);
    }
    /* the pane at 80x24 (ASCII): a pane of the layout, the same rules */
    pl_layout L;
    pl_viz_layout(80, 24, 1, LAB_PANES, &L);
    viz_grid g = {0};
    CU_ASSERT_FATAL(viz_grid_resize(&g, 80, 24) == 0);
    viz_render(&g, &L, &m, &v);
    pl_rect r = L.pane[PL_PANE_PICTURE];
    char row[256];
    row_text(&g, r.y, r.x, 13, row, sizeof row);
    CU_ASSERT_STRING_EQUAL(row, "+ bandwidth -");
    viz_grid_free(&g);
    pl_picture_free(&a);
    pl_picture_free(&b);
    pl_picture_free(&c);
    viz_model_free(&m);
}

/* viz_pic_text: the title, then the renderer's drawing, trailing blanks
 * cut; pl_viz_picture_text the same, its glyphs from the locale. */
static void test_text(void)
{
    pl_picture p;
    good(&p, PL_PIC_BLOCKS);
    for (int utf8 = 0; utf8 < 2; utf8++) {
        char *s = viz_pic_text(&p, 78, utf8);
        CU_ASSERT_FATAL(s != NULL);
        /* the reference: the renderer into 78 x rows */
        int rows = viz_pic_rows(&p, 78);
        viz_grid g = {0};
        g.utf8 = utf8;
        CU_ASSERT_FATAL(viz_grid_resize(&g, 78, rows) == 0);
        viz_pic_draw(&g, (pl_rect){0, 0, 78, rows}, &p, 1);
        char *body = viz_grid_text(&g);
        static char want[65536];
        snprintf(want, sizeof want, "blocks on SMs\n");
        for (char *ln = body; *ln;) { /* each line without its trailing blanks */
            char *nl = strchr(ln, '\n');
            size_t len = (size_t)(nl - ln);
            while (len && ln[len - 1] == ' ') len--;
            strncat(want, ln, len);
            strcat(want, "\n");
            ln = nl + 1;
        }
        size_t wl = strlen(want);
        while (wl >= 2 && want[wl - 1] == '\n' && want[wl - 2] == '\n') want[--wl] = '\0';
        CU_ASSERT_STRING_EQUAL(s, want);
        if (strcmp(s, want)) fprintf(stderr, "\n  got:\n%s  want:\n%s", s, want);
        /* no line ends in a blank; every line ends in '\n' */
        CU_ASSERT(strstr(s, " \n") == NULL);
        CU_ASSERT(s[strlen(s) - 1] == '\n');
        if (!utf8) /* ASCII only */
            for (const char *c = s; *c; c++) CU_ASSERT((unsigned char)*c < 0x80);
        free(body);
        free(s);
        viz_grid_free(&g);
    }
    /* the placeholders' form (the renderer draws the title on one row) */
    pl_picture q;
    CU_ASSERT_FATAL(pl_picture_init(&q, PL_PIC_TREE, "", 4, 0, 0) == 0);
    set_p(&q, 5, 2LL, 1LL, 32LL, 0LL, 2LL);
    q.iv[0] = 1;
    q.iv[1] = 0;
    q.iv[2] = 0;
    q.iv[3] = 1;
    char *s = viz_pic_text(&q, 1, 0);
    CU_ASSERT_FATAL(s != NULL);
    CU_ASSERT(!strncmp(s, "t\n", 2)); /* untitled: the kind's name, cut to 1 column */
    free(s);
    pl_picture_free(&q);
    const char *keep = getenv("LC_ALL");
    char saved[64] = "";
    if (keep) snprintf(saved, sizeof saved, "%s", keep);
    setenv("LC_ALL", "C", 1);
    CU_ASSERT_EQUAL(pl_viz_locale_utf8(), 0);
    char *a = pl_viz_picture_text(&p, 78, -1), *b = viz_pic_text(&p, 78, 0);
    CU_ASSERT(a && b && !strcmp(a, b));
    free(a);
    free(b);
    setenv("LC_ALL", "C.UTF-8", 1);
    CU_ASSERT_EQUAL(pl_viz_locale_utf8(), 1);
    if (keep)
        setenv("LC_ALL", saved, 1);
    else
        unsetenv("LC_ALL");
    CU_ASSERT_PTR_NULL(viz_pic_text(NULL, 80, 0));
    pl_picture_free(&p);
}

/* ---- the layout --------------------------------------------------------------------------- */

static int overlap(pl_rect a, pl_rect b)
{
    return a.w > 0 && b.w > 0 && a.h > 0 && b.h > 0 && a.x < b.x + b.w && b.x < a.x + a.w &&
           a.y < b.y + b.h && b.y < a.y + a.h;
}

/* Labs 01..04 (one device): at 120x40 the right half under the header, the
 * body's whole height (60x30; with a long step 60x16), the devices,
 * timeline and metrics in the left half; at 80x24 the full width above
 * the narration, 10 rows (8 with a long step). For Lab 01's panes, a
 * topology lab's and every pane, every size to 200x60, 0..64 devices:
 * inside the screen, overlapping none, shown whenever the layout is, at
 * least 56 x 8 from 112x40 and the full width from 80x24 where shown
 * across, and the sizes above at 120x40 and 80x24. */
static void test_layout(void)
{
    static const struct {
        int w, h, text;
        pl_rect pic, dev, tl, met, narr;
    } c[] = {
        {120,
         40,
         0,
         {60, 1, 60, 30},
         {0, 1, 60, 3},
         {0, 4, 60, 16},
         {0, 20, 60, 11},
         {0, 31, 120, 9}},
        {120,
         40,
         100,
         {60, 1, 60, 16},
         {0, 1, 60, 3},
         {0, 4, 60, 7},
         {0, 11, 60, 6},
         {0, 17, 120, 23}},
        /* 80x24: the timeline would have 3 rows, no lane: hidden, the metrics take them */
        {80, 24, 0, {0, 10, 80, 10}, {0, 1, 80, 3}, {0, 0, 0, 0}, {0, 4, 80, 6}, {0, 20, 80, 4}},
        {80, 24, 100, {0, 10, 80, 8}, {0, 1, 80, 3}, {0, 0, 0, 0}, {0, 4, 80, 6}, {0, 18, 80, 6}},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        pl_layout L;
        pl_viz_layout_text(c[i].w, c[i].h, 1, LAB_PANES, c[i].text, &L);
        CU_ASSERT_FATAL(L.ok);
        const pl_rect *got[] = {&L.pane[PL_PANE_PICTURE], &L.pane[PL_PANE_DEVICES],
                                &L.pane[PL_PANE_TIMELINE], &L.pane[PL_PANE_METRICS],
                                &L.pane[PL_PANE_NARRATION]};
        const pl_rect *want[] = {&c[i].pic, &c[i].dev, &c[i].tl, &c[i].met, &c[i].narr};
        for (int k = 0; k < 5; k++) {
            int same = !memcmp(got[k], want[k], sizeof(pl_rect));
            CU_ASSERT(same);
            if (!same)
                fprintf(stderr, "\n  %dx%d text %d: pane %d at %d %d %d %d\n", c[i].w, c[i].h,
                        c[i].text, k, got[k]->x, got[k]->y, got[k]->w, got[k]->h);
        }
    }
    unsigned sets[] = {LAB_PANES, LAB_PANES | PL_PANE_BIT(PL_PANE_TOPOLOGY),
                       PL_PANE_BIT(PL_PANE_PICTURE), (1u << PL_NUM_PANES) - 1,
                       PL_PANE_BIT(PL_PANE_PICTURE) | PL_PANE_BIT(PL_PANE_PIPELINE)};
    long bad = 0, checked = 0;
    for (size_t s = 0; s < sizeof sets / sizeof *sets; s++)
        for (int ndev = 0; ndev <= 64; ndev += ndev < 8 ? 1 : 8)
            for (int w = 1; w <= 200; w++)
                for (int h = 1; h <= 60; h++)
                    for (int text = 0; text <= 100; text += 100) {
                        pl_layout L;
                        pl_viz_layout_text(w, h, ndev, sets[s], text, &L);
                        checked++;
                        if (L.ok != (w >= L.min_w && h >= L.min_h)) bad++;
                        for (int p = 0; p < PL_NUM_PANES; p++) {
                            pl_rect r = L.pane[p];
                            if (r.w < 0 || r.h < 0 || r.x < 0 || r.y < 0 || r.x + r.w > w ||
                                r.y + r.h > h)
                                bad++;
                            for (int q = p + 1; q < PL_NUM_PANES; q++)
                                if (overlap(r, L.pane[q])) bad++;
                            int asked = p <= PL_PANE_NARRATION || (sets[s] >> p & 1u);
                            int given_up = p == PL_PANE_DEVICES && (sets[s] >> PL_PANE_MESH & 1u) &&
                                           L.pane[PL_PANE_MESH].h >= 7;
                            /* the timeline is hidden where it would have no room for a
                             * lane (4 rows): the panes under it take its rows (fewer than 7) */
                            int hidden = p == PL_PANE_TIMELINE && L.pane[PL_PANE_METRICS].h > 0 &&
                                         L.pane[PL_PANE_METRICS].h < 7;
                            if (L.ok && asked != (r.w > 0 && r.h > 0) &&
                                !((given_up || hidden) && !r.w))
                                bad++;
                            if (p == PL_PANE_TIMELINE && r.w && r.h < 4 &&
                                L.pane[PL_PANE_METRICS].h > 0)
                                bad++; /* an empty box */
                        }
                        pl_rect r = L.pane[PL_PANE_PICTURE];
                        if (!L.ok || s > 1) continue;
                        /* Labs 01..04's panes, and with a topology: big */
                        if (w >= 112 + 8 * (int)s && h >= 40 && (r.w < 56 || r.h < 16)) bad++;
                        if (w >= 80 && w < 112 && h >= 24 && (r.w != w || r.h < 8)) bad++;
                    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(checked > 100000);
}

/* ---- pl_lab_picture in a run without the UI ------------------------------------------------ */

static pl_picture toy_pic[2];

static int toy_steps(pl_rank *r)
{
    if (pl_step(r, "the first step")) return 1;
    pl_lab_picture(r, &toy_pic[0]); /* after pl_step: under its narration */
    if (pl_step_begin(r)) return 1;
    pl_lab_picture(r, &toy_pic[1]); /* a step begun: before its narration, but its own */
    return pl_step(r, "the second step") != 0;
}

static int toy_setup(void *ctx, char *err, size_t cap)
{
    (void)ctx;
    (void)err;
    (void)cap;
    return 2;
}

static void toy_check(int ex, int use_solution, pl_check *c)
{
    (void)ex;
    (void)use_solution;
    pl_check_that(c, 1, "never");
}

static const char *const toy_names[] = {"only", NULL};
static const pl_lab toy_entry = {"98_pictures", toy_names, toy_check};

/* Two ranks, --no-viz, --trace: rank 0's pictures printed as text,
 * indented, under the first step's narration (the first) and before the
 * second's (the second, noted in a step begun before its narration);
 * rank 1's call does nothing (each picture once); the trace file has both,
 * under their steps. */
static void test_lab_picture(void)
{
    good(&toy_pic[0], PL_PIC_BARS);
    good(&toy_pic[1], PL_PIC_TREE);
    char path[] = "/tmp/paralab-picture-lab-XXXXXX", errbuf[512];
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    pl_lab_def d = {.program = "lab98",
                    .summary = "pictures",
                    .exercise = "x.c",
                    .title = "lab 98",
                    .min_devices = 2,
                    .max_devices = 2,
                    .default_devices = 2,
                    .lab = &toy_entry,
                    .setup = toy_setup,
                    .steps = toy_steps,
                    .panes = PL_PANE_BIT(PL_PANE_PICTURE)};
    char *argv[] = {"lab98", "--no-viz", "--trace", path, NULL};
    FILE *fo = tmpfile();
    CU_ASSERT_FATAL(fo != NULL);
    fflush(stdout);
    int keep = dup(1);
    dup2(fileno(fo), 1);
    setenv("LC_ALL", "C", 1);
    int rc = pl_lab_main(&d, 4, argv);
    unsetenv("LC_ALL");
    fflush(stdout);
    dup2(keep, 1);
    close(keep);
    static char out[65536];
    rewind(fo);
    size_t n = fread(out, 1, sizeof out - 1, fo);
    out[n] = '\0';
    fclose(fo);
    CU_ASSERT_EQUAL(rc, 0);
    /* the expected text: each picture's viz_pic_text, each line indented by 2 */
    static char want[65536];
    want[0] = '\0';
    char *t[2] = {viz_pic_text(&toy_pic[0], 78, 0), viz_pic_text(&toy_pic[1], 78, 0)};
    CU_ASSERT_FATAL(t[0] && t[1]);
    strcat(want, "[1] the first step\n");
    for (int k = 0; k < 2; k++) {
        for (char *ln = t[k]; *ln;) {
            char *nl = strchr(ln, '\n');
            if (nl > ln) strcat(want, "  ");
            strncat(want, ln, (size_t)(nl - ln + 1));
            ln = nl + 1;
        }
    }
    strcat(want, "[2] the second step\n");
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    if (!strstr(out, want)) fprintf(stderr, "\n  got:\n%s\n  want:\n%s", out, want);
    free(t[0]);
    free(t[1]);
    /* the file: two pictures, under steps 1 and 2 */
    viz_trace tr;
    rc = viz_read_trace(path, &tr, errbuf, sizeof errbuf);
    if (rc) fprintf(stderr, "\n  %s\n", errbuf);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(tr.npictures, 2);
    CU_ASSERT(same_picture(tr.pictures[0].pic, &toy_pic[0]) && tr.pictures[0].step == 1);
    CU_ASSERT(same_picture(tr.pictures[1].pic, &toy_pic[1]) && tr.pictures[1].step == 2);
    CU_ASSERT(tr.panes & PL_PANE_BIT(PL_PANE_PICTURE));
    viz_item *items;
    size_t nitems, *first;
    int steps = viz_replay_plan(&tr, &items, &nitems, &first);
    CU_ASSERT_EQUAL(steps, 2);
    int seen = 0;
    for (size_t i = 0; i < nitems; i++)
        if (items[i].metric == 3) {
            CU_ASSERT_EQUAL(items[i].step, (int)items[i].index + 1);
            seen++;
        }
    CU_ASSERT_EQUAL(seen, 2);
    free(items);
    free(first);
    viz_trace_free(&tr);
    unlink(path);
    /* another rank, or no picture: nothing */
    pl_rank other;
    memset(&other, 0, sizeof other);
    other.rank = 1;
    fo = tmpfile();
    fflush(stdout);
    keep = dup(1);
    dup2(fileno(fo), 1);
    pl_lab_picture(&other, &toy_pic[0]);
    other.rank = 0;
    pl_lab_picture(&other, NULL);
    fflush(stdout);
    dup2(keep, 1);
    close(keep);
    CU_ASSERT_EQUAL(ftell(fo), 0);
    fclose(fo);
    pl_picture_free(&toy_pic[0]);
    pl_picture_free(&toy_pic[1]);
}

int register_picture_suite(void)
{
    static const unit_test tests[] = {
        {"picture: kind names, init, copy, free", test_kinds_and_container},
        {"picture: check accepts every kind's good picture, refuses bad ones", test_check},
        {"picture: the trace's note: a deep copy with the trace's step", test_note},
        {"picture: every kind through a trace file and the replay, NaN kept", test_round_trip},
        {"picture: malformed picture events refused, naming file and event", test_replay_refused},
        {"picture: the model's pictures at a time: the newest step's", test_model_pictures},
        {"picture: the reveal, part by part", test_reveal},
        {"picture pane: 120x40 UTF-8: box, title, no picture yet, the renderer's drawing",
         test_pane_120x40_utf8},
        {"picture pane: 120x40 ASCII", test_pane_120x40_ascii},
        {"picture pane: 80x24 ASCII", test_pane_80x24_ascii},
        {"picture pane: 80x24 UTF-8", test_pane_80x24_utf8},
        {"picture pane: stacked, side by side, left out, cut", test_pane_several},
        {"picture: viz_pic_text and pl_viz_picture_text", test_text},
        {"picture pane: the layout at 120x40, 80x24 and every size", test_layout},
        {"picture: pl_lab_picture without the UI, with a trace file", test_lab_picture},
    };
    return UNIT_SUITE("picture", tests);
}
