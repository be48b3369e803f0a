/*
 * test_viz.c — the visualiser without a terminal: the layout for every
 * size and device count, panes rendered into the cell grid from known
 * events (an exact GPipe schedule, a ring all-reduce's link bytes, a
 * timeline row), the ASCII twins, and reading traces back (good, truncated,
 * corrupt, missing).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../viz/vizint.h"
#include "paralab/comm.h"
#include "paralab/trace.h"
#include "paralab/viz.h"
#include "paralab/world.h"
#include "suites.h"

static int overlap(pl_rect a, pl_rect b)
{
    return a.w > 0 && b.w > 0 && a.h > 0 && b.h > 0 && a.x < b.x + b.w && b.x < a.x + a.w &&
           a.y < b.y + b.h && b.y < a.y + a.h;
}

/* Every size from 1x1 to 200x60 and every device count 0..64, for three
 * sets of panes: inside the screen, no two overlapping, ok exactly when the
 * screen is at least the minimum. */
static void test_layout_everywhere(void)
{
    unsigned sets[] = {0,
                       PL_PANE_BIT(PL_PANE_DEVICES) | PL_PANE_BIT(PL_PANE_TIMELINE) |
                           PL_PANE_BIT(PL_PANE_TOPOLOGY) | PL_PANE_BIT(PL_PANE_METRICS),
                       (1u << PL_NUM_PANES) - 1};
    long bad = 0, checked = 0;
    for (int s = 0; s < 3; s++)
        for (int ndev = 0; ndev <= 64; ndev++)
            for (int w = 1; w <= 200; w++)
                for (int h = 1; h <= 60; h++) {
                    pl_layout L;
                    pl_viz_layout(w, h, ndev, sets[s], &L);
                    checked++;
                    if (L.ok != (w >= L.min_w && h >= L.min_h)) bad++;
                    for (int p = 0; p < PL_NUM_PANES; p++) {
                        pl_rect r = L.pane[p];
                        if (!L.ok && r.w) bad++;
                        if (r.w < 0 || r.h < 0 || r.x < 0 || r.y < 0 || r.x + r.w > w ||
                            r.y + r.h > h)
                            bad++;
                        for (int q = p + 1; q < PL_NUM_PANES; q++)
                            if (overlap(r, L.pane[q])) bad++;
                        int asked = p <= PL_PANE_NARRATION || (sets[s] >> p & 1u);
                        if (L.ok && asked != (r.w > 0 && r.h > 0)) bad++;
                    }
                }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(checked > 100000);
}

static pl_event ev(int rank, int lane, int kind, double s, double e, int mb, int layer,
                   const char *label)
{
    pl_event x;
    memset(&x, 0, sizeof x);
    x.rank = rank;
    x.lane = (uint8_t)lane;
    x.kind = (uint8_t)kind;
    x.start = s;
    x.end = e;
    x.micro_batch = mb;
    x.layer = layer;
    x.peer = -1;
    snprintf(x.label, sizeof x.label, "%s", label);
    return x;
}

/* The row of the grid text at y, without the pane's borders. */
static void row_of(const viz_grid *g, int y, int x0, int w, char *out)
{
    int k = 0;
    for (int x = x0; x < x0 + w; x++) {
        uint32_t c = g->cells[y * g->w + x].ch;
        out[k++] = c < 0x80 ? (char)c : '#';
    }
    out[k] = '\0';
}

/* GPipe on 2 stages with 4 micro-batches, every forward and backward one
 * time unit: the schedule pane shows it exactly, and the bubble is
 * 1 - 16 / (2 x 10) = 20 %. */
static void test_pipeline_gpipe(void)
{
    viz_model m;
    viz_model_init(&m, 2);
    for (int i = 0; i < 4; i++) {
        pl_event f0 = ev(0, 0, PL_EV_FORWARD, i, i + 1, i, 0, "fwd");
        pl_event f1 = ev(1, 0, PL_EV_FORWARD, i + 1, i + 2, i, 1, "fwd");
        pl_event b1 = ev(1, 0, PL_EV_BACKWARD, 5 + i, 6 + i, 3 - i, 1, "bwd");
        pl_event b0 = ev(0, 0, PL_EV_BACKWARD, 6 + i, 7 + i, 3 - i, 0, "bwd");
        viz_model_add(&m, &f0);
        viz_model_add(&m, &f1);
        viz_model_add(&m, &b1);
        viz_model_add(&m, &b0);
    }
    CU_ASSERT_DOUBLE_EQUAL(viz_bubble_fraction(&m, 0), 0.2, 1e-12);
    viz_grid g = {0};
    g.utf8 = 0;
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 40, 4), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    viz_render_pane(&g, PL_PANE_PIPELINE, (pl_rect){0, 0, 40, 4}, &m, &v);
    char r0[64], r1[64], title[64];
    row_of(&g, 0, 0, 40, title);
    row_of(&g, 1, 1, 38, r0);
    row_of(&g, 2, 1, 38, r1);
    CU_ASSERT_PTR_NOT_NULL(strstr(title, "pipeline (bubble 20.0 %)"));
    CU_ASSERT_STRING_EQUAL(r0, "s0  F0F1F2F3    B3B2B1B0              ");
    CU_ASSERT_STRING_EQUAL(r1, "s1    F0F1F2F3B3B2B1B0                ");
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* A timeline row: rank 0's compute lane with a kernel over the middle
 * half of the window and a forward of micro-batch 7 at the end. */
static void test_timeline_row(void)
{
    viz_model m;
    viz_model_init(&m, 1);
    pl_event k = ev(0, PL_LANE_COMPUTE, PL_EV_KERNEL, 2.5, 7.5, -1, -1, "matmul");
    pl_event f = ev(0, PL_LANE_COMPUTE, PL_EV_FORWARD, 8, 10, 7, 0, "fwd");
    viz_model_add(&m, &k);
    viz_model_add(&m, &f);
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 30, 6), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.t_end = 10;
    v.span = 10;
    v.ndev = 1;
    viz_render_pane(&g, PL_PANE_TIMELINE, (pl_rect){0, 0, 30, 6}, &m, &v);
    char row[64];
    row_of(&g, 1, 1, 28, row); /* 8 label cells, then 20 cells of 0.5 s */
    CU_ASSERT_STRING_EQUAL(row, "r0  cmp .....##########.7777");
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* A 4-rank ring all-reduce, traced: the model's link bytes equal the
 * ledger's, and the topology pane prints them. */
typedef struct {
    uint64_t link[4][4];
} ring_links;

static int run_ring(pl_rank *r)
{
    ring_links *l = r->arg;
    float *d;
    if (cudaMalloc((void **)&d, 4096 * sizeof(float))) return 1;
    cudaMemsetAsync(d, 0, 4096 * sizeof(float), r->stream);
    if (pl_all_reduce(r->comm, d, d, 4096, PL_FLOAT32, PL_SUM, r->stream)) return 1;
    cudaStreamSynchronize(r->stream);
    pl_comm_barrier(r->comm);
    if (r->rank == 0)
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) l->link[a][b] = pl_comm_link_bytes(r->comm, a, b);
    cudaFree(d);
    return 0;
}

static void test_topology_ring_bytes(void)
{
    pl_trace *t = pl_trace_create(4, 4096, PL_TRACE_WAIT);
    ring_links l;
    memset(&l, 0, sizeof l);
    char err[512];
    CU_ASSERT_EQUAL_FATAL(pl_world_run_traced(4, NULL, 10, t, run_ring, &l, err, sizeof err), 0);
    static pl_event buf[4096];
    size_t n = pl_trace_drain(t, buf, 4096);
    viz_model m;
    viz_model_init(&m, 4);
    for (size_t i = 0; i < n; i++) viz_model_add(&m, &buf[i]);
    int same = 1;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) same &= m.link[a][b] == l.link[a][b];
    CU_ASSERT(same);
    CU_ASSERT_EQUAL(m.link[0][1], 2 * 3 * 1024 * 4); /* 2(N-1) segments of 1024 floats */
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 40, 20), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 4;
    v.t_end = m.t_hi[0];
    v.span = m.t_hi[0] - m.t_lo[0];
    viz_render_pane(&g, PL_PANE_TOPOLOGY, (pl_rect){0, 0, 40, 20}, &m, &v);
    char *text = viz_grid_text(&g);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "0>1 24.0 KiB"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "r3"));
    free(text);
    viz_grid_free(&g);
    viz_model_free(&m);
    pl_trace_destroy(t);
}

/* ASCII twins: with utf8 off no byte of the frame is above 0x7f; too small
 * a screen says how much it needs. */
static void test_ascii_and_too_small(void)
{
    viz_model m;
    viz_model_init(&m, 2);
    pl_event k = ev(1, 0, PL_EV_KERNEL, 0, 1, -1, -1, "kernel \xc3\xa9");
    viz_model_add(&m, &k);
    viz_grid g = {0};
    g.utf8 = 0;
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 100, 30), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 2;
    v.t_end = 1;
    v.span = 1;
    snprintf(v.narration, sizeof v.narration, "caf\xc3\xa9 and a long narration");
    pl_layout L;
    pl_viz_layout(100, 30, 2, (1u << PL_NUM_PANES) - 1, &L);
    viz_render(&g, &L, &m, &v);
    char *text = viz_grid_text(&g);
    int high = 0;
    for (char *p = text; *p; p++) high |= (unsigned char)*p > 0x7f;
    CU_ASSERT_FALSE(high);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "+ devices -"));
    free(text);
    viz_grid_resize(&g, 20, 5);
    pl_viz_layout(20, 5, 2, (1u << PL_NUM_PANES) - 1, &L);
    CU_ASSERT_FALSE(L.ok);
    viz_render(&g, &L, &m, &v);
    text = viz_grid_text(&g);
    CU_ASSERT_EQUAL(strncmp(text, "need at least 60x13", 19), 0);
    free(text);
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* A lab about streams: one timeline lane per CUDA stream of the rank (s0
 * the default stream), each op on its stream's lane only. */
static void test_stream_lanes(void)
{
    viz_model m;
    viz_model_init(&m, 1);
    m.stream_lanes = 1;
    pl_event a = ev(0, PL_LANE_COPY, PL_EV_COPY, 0, 5, -1, -1, "memcpy H2D");
    pl_event b = ev(0, PL_LANE_COMPUTE, PL_EV_KERNEL, 5, 10, -1, -1, "process");
    a.stream = 2; /* stream 1 */
    b.stream = 3; /* stream 2 */
    CU_ASSERT_EQUAL(viz_model_add(&m, &a), 0);
    CU_ASSERT_EQUAL(viz_model_add(&m, &b), 0);
    CU_ASSERT_EQUAL(m.nstreams[0], 3);
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 28, 6), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    v.ndev = 1;
    v.t_end = 10;
    v.span = 10;
    viz_render_pane(&g, PL_PANE_TIMELINE, (pl_rect){0, 0, 28, 6}, &m, &v);
    char row[3][32];
    for (int i = 0; i < 3; i++) row_of(&g, 1 + i, 1, 26, row[i]);
    /* 8 columns of label, then 18 of time: 10 s, 0.56 s a column */
    CU_ASSERT_EQUAL(strncmp(row[0], "r0  s0  ", 8), 0);
    CU_ASSERT_EQUAL(strncmp(row[1], " 0  s1  ", 8), 0);
    CU_ASSERT_EQUAL(strncmp(row[2], " 0  s2  ", 8), 0);
    for (int c = 8; c < 26; c++) {
        int first_half = c - 8 < 9;
        CU_ASSERT_EQUAL(row[0][c] == '#', 0);           /* nothing on the default stream */
        CU_ASSERT_EQUAL(row[1][c] == '#', first_half);  /* the copy, on stream 1 */
        CU_ASSERT_EQUAL(row[2][c] == '#', !first_half); /* the kernel, on stream 2 */
    }
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* The narration keeps a step's line breaks and their indentation, and
 * wraps long lines at spaces. */
static void test_narration_lines(void)
{
    viz_model m;
    viz_model_init(&m, 1);
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 24, 8), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    snprintf(v.narration, sizeof v.narration,
             "Strides:\n    s 1: 4.0\n    s 32: 32.0\none two three four five six");
    viz_render_pane(&g, PL_PANE_NARRATION, (pl_rect){0, 0, 24, 8}, &m, &v);
    char row[32];
    /* 22 columns inside the box: "five" does not fit after "four" */
    static const char *want[] = {"Strides:", "    s 1: 4.0", "    s 32: 32.0", "one two three four",
                                 "five six"};
    for (int i = 0; i < 5; i++) {
        row_of(&g, 1 + i, 1, 22, row);
        size_t n = strlen(want[i]);
        CU_ASSERT_EQUAL(strncmp(row, want[i], n), 0);
        for (size_t k = n; row[k]; k++) CU_ASSERT_EQUAL(row[k], ' '); /* nothing after it */
    }
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* The shards pane: a weight split by columns over 2 ranks (tensor
 * parallel, column-parallel), each block in its owner's digit and colour;
 * the metrics pane's curve from pushed values. */
static void test_shards_and_metrics(void)
{
    viz_model m;
    viz_model_init(&m, 2);
    m.shard_rows = 2;
    m.shard_cols = 4;
    for (int i = 0; i < 8; i++) m.shard_owner[i] = (i % 4) / 2; /* columns 0,1: rank 0 */
    snprintf(m.shard_name, sizeof m.shard_name, "W1 (column-parallel)");
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(&g, 26, 6), 0);
    viz_view v;
    memset(&v, 0, sizeof v);
    viz_render_pane(&g, PL_PANE_SHARDS, (pl_rect){0, 0, 26, 6}, &m, &v);
    char row[32], title[32];
    row_of(&g, 0, 0, 26, title);
    row_of(&g, 1, 1, 24, row);
    CU_ASSERT_PTR_NOT_NULL(strstr(title, "W1 (column-parallel)"));
    CU_ASSERT_STRING_EQUAL(row, "0#####0#####1#####1#####");
    CU_ASSERT_EQUAL(g.cells[1 * 26 + 14].fg, COL_RANK0 + 1); /* rank 1's colour */
    /* busy time is a union: a forward and the kernels inside it count once */
    pl_event f = ev(0, PL_LANE_COMPUTE, PL_EV_FORWARD, 0, 10, 0, -1, "fwd");
    pl_event k1 = ev(0, PL_LANE_COMPUTE, PL_EV_KERNEL, 1, 3, -1, -1, "k");
    pl_event k2 = ev(0, PL_LANE_COMPUTE, PL_EV_KERNEL, 4, 6, -1, -1, "k");
    pl_event k3 = ev(1, PL_LANE_COMPUTE, PL_EV_KERNEL, 0, 5, -1, -1, "k");
    viz_model_add(&m, &f);
    viz_model_add(&m, &k1);
    viz_model_add(&m, &k2);
    viz_model_add(&m, &k3);
    viz_grid_resize(&g, 40, 6);
    viz_render_pane(&g, PL_PANE_METRICS, (pl_rect){0, 0, 40, 6}, &m, &v);
    char *busy = viz_grid_text(&g);
    CU_ASSERT_PTR_NOT_NULL(strstr(busy, "busy: compute 75 %")); /* (10 + 5) / (2 x 10) */
    free(busy);
    for (int i = 0; i < 5; i++) viz_model_push_metric(&m, 2.0 - 0.4 * i);
    snprintf(m.metric_name, sizeof m.metric_name, "loss");
    viz_grid_resize(&g, 30, 8);
    viz_render_pane(&g, PL_PANE_METRICS, (pl_rect){0, 0, 30, 8}, &m, &v);
    char *text = viz_grid_text(&g);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "loss 0.4000 (max 2.0000)"));
    free(text);
    /* the tallest bar is the first value's */
    int first_top = -1, last_top = -1;
    for (int y = 0; y < 8; y++) {
        if (first_top < 0 && g.cells[y * 30 + 1].ch == '#') first_top = y;
        if (last_top < 0 && g.cells[y * 30 + 5].ch == '#') last_top = y;
    }
    CU_ASSERT(first_top >= 0 && last_top > first_top);
    viz_grid_free(&g);
    viz_model_free(&m);
}

/* Traces read back: the events a writer wrote (kinds, ranks, lanes, bytes,
 * micro-batch, peer, times to the nanosecond); errors name the file and
 * the position. */
static void test_read_trace(void)
{
    char path[] = "/tmp/paralab-viz-XXXXXX", err[512];
    close(mkstemp(path));
    pl_trace_writer *w = pl_trace_writer_open(path, 2, 1, 0, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    pl_event in[3] = {ev(0, PL_LANE_COMPUTE, PL_EV_FORWARD, 0, 0, 3, 1, "fwd"),
                      ev(1, PL_LANE_COMM, PL_EV_RING_STEP, 0, 0, -1, -1, "all_reduce step 1"),
                      ev(1, PL_LANE_COPY, PL_EV_COPY, 0, 0, -1, -1, "memcpy peer")};
    in[0].modeled_start = 1e-6;
    in[0].modeled_end = 3.5e-6;
    in[1].modeled_start = 2e-6;
    in[1].modeled_end = 9e-6;
    in[1].peer = 0;
    in[1].bytes = 4096;
    in[2].modeled_start = 4e-6;
    in[2].modeled_end = 5e-6;
    CU_ASSERT_EQUAL(pl_trace_writer_add(w, in, 3), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    pl_event *out;
    size_t n;
    int nranks, modeled;
    CU_ASSERT_EQUAL_FATAL(pl_viz_read_trace(path, &out, &n, &nranks, &modeled, err, sizeof err), 0);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_EQUAL(nranks, 2);
    CU_ASSERT_EQUAL(modeled, 1);
    CU_ASSERT_EQUAL(out[0].kind, PL_EV_FORWARD);
    CU_ASSERT_EQUAL(out[0].micro_batch, 3);
    CU_ASSERT_EQUAL(out[0].layer, 1);
    CU_ASSERT_DOUBLE_EQUAL(out[0].start, 1e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(out[0].end, 3.5e-6, 1e-12);
    CU_ASSERT_EQUAL(out[1].rank, 1);
    CU_ASSERT_EQUAL(out[1].lane, PL_LANE_COMM);
    CU_ASSERT_EQUAL(out[1].peer, 0);
    CU_ASSERT_EQUAL(out[1].bytes, 4096);
    CU_ASSERT_STRING_EQUAL(out[1].label, "all_reduce step 1");
    CU_ASSERT_EQUAL(out[2].kind, PL_EV_COPY);
    free(out);
    /* truncated: the first half of the file */
    FILE *f = fopen(path, "r+");
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fclose(f);
    CU_ASSERT_EQUAL(truncate(path, len / 2), 0);
    CU_ASSERT_EQUAL(pl_viz_read_trace(path, &out, &n, &nranks, &modeled, err, sizeof err), -1);
    char want[128];
    snprintf(want, sizeof want, "%s:", path);
    CU_ASSERT_EQUAL(strncmp(err, want, strlen(want)), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a trace"));
    /* corrupt: an event without its time */
    f = fopen(path, "w");
    fputs("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"k\",\"cat\":\"kernel\",\"pid\":0,\"tid\":0,"
          "\"dur\":1},\n{\"ph\":\"X\",\"name\":\"k\",\"cat\":\"kernel\",\"pid\":0,\"tid\":0}]}",
          f);
    fclose(f);
    CU_ASSERT_EQUAL(pl_viz_read_trace(path, &out, &n, &nranks, &modeled, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "event 0: \"ts\" is missing or not a number"));
    /* not a trace at all */
    f = fopen(path, "w");
    fputs("[1, 2, 3]", f);
    fclose(f);
    CU_ASSERT_EQUAL(pl_viz_read_trace(path, &out, &n, &nranks, &modeled, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no \"traceEvents\" array"));
    unlink(path);
    CU_ASSERT_EQUAL(pl_viz_read_trace(path, &out, &n, &nranks, &modeled, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot read it"));
}

int register_viz_suite(void)
{
    CU_pSuite s = CU_add_suite("viz", NULL, NULL);
    if (!s) return -1;
    struct {
        const char *name;
        CU_TestFunc fn;
    } t[] = {
        {"layout: every size to 1x1, 0..64 devices, no overlap", test_layout_everywhere},
        {"pipeline pane: an exact GPipe schedule and its bubble", test_pipeline_gpipe},
        {"timeline pane: a row of kernels and micro-batches", test_timeline_row},
        {"topology pane: a ring all-reduce's bytes per link", test_topology_ring_bytes},
        {"ASCII twins; too small a screen says what it needs", test_ascii_and_too_small},
        {"narration: line breaks and wrapping", test_narration_lines},
        {"timeline: a lane per CUDA stream", test_stream_lanes},
        {"shards pane (column-parallel) and the metric curve", test_shards_and_metrics},
        {"traces read back; truncated, corrupt, missing", test_read_trace},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!CU_add_test(s, t[i].name, t[i].fn)) return -1;
    return 0;
}
