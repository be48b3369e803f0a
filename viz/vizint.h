/*
 * vizint.h — the visualiser's insides: the cell grid the panes draw into,
 * the model of the world they draw, and the panes. No ncurses here: all of
 * it is testable on a grid in memory (tests/unit/test_viz.c).
 */
#ifndef PARALAB_VIZINT_H
#define PARALAB_VIZINT_H

#include <stddef.h>
#include <stdint.h>

#include "paralab/trace.h"
#include "paralab/viz.h"

/* ---- the cell grid --------------------------------------------------------------------- */

/* Colours, mapped to the terminal's palette by the backend. */
enum {
    COL_DEFAULT,
    COL_DIM,
    COL_TITLE,
    COL_BORDER,
    COL_FOCUS,
    COL_WARN,
    COL_KERNEL,                /* compute: kernels */
    COL_FORWARD,               /* forward of a micro-batch */
    COL_BACKWARD,              /* backward */
    COL_OPTIMIZER,             /* optimizer step */
    COL_COPY,                  /* copies and memsets */
    COL_COMM,                  /* collectives, ring steps, send/recv */
    COL_RANK0,                 /* COL_RANK0 + r % 8: a rank's colour (shards, topology) */
    COL_WGRAD = COL_RANK0 + 8, /* a pipeline's W (weight gradient) */
    COL_GROUP_TP,              /* a hybrid run's groups (pl_event.group): the mesh pane */
    COL_GROUP_DP,              /* and the timeline's comm lane, one colour each */
    COL_GROUP_PP,
    COL_COUNT
};
enum { ATTR_BOLD = 1, ATTR_REVERSE = 2, ATTR_UNDERLINE = 4 };

typedef struct {
    uint32_t ch; /* a Unicode code point (ASCII when the grid is not UTF-8) */
    uint8_t fg, attr;
} viz_cell;

typedef struct {
    int w, h;
    int utf8; /* 0: every glyph has its ASCII twin */
    viz_cell *cells;
} viz_grid;

/* The glyphs, in their UTF-8 and ASCII forms. */
typedef enum {
    G_H,
    G_V,
    G_TL,
    G_TR,
    G_BL,
    G_BR, /* box */
    G_FULL,
    G_SHADE,
    G_LIGHT,
    G_EMPTY, /* bars and timeline cells */
    G_DOT,
    G_CHUNK,
    G_LINK_H,
    G_LINK_V,
    G_LINK_D1,
    G_LINK_D2,
    /* the timeline's kinds, told apart without colour (NO_COLOR, LANG=C) */
    G_EV_FORWARD,  /* ▶ > */
    G_EV_BACKWARD, /* ◀ < */
    G_EV_OPTIM,    /* ◆ o */
    G_EV_COPY,     /* ▒ = (a kernel is G_FULL: █ #) */
    G_EV_COMM,     /* ▓ ~ ring steps, sends, receives */
    G_EV_COLL,     /* ░ : a collective between its steps */
    G_UP,          /* ↑ ^ */
    G_DOWN,        /* ↓ v */
    G_EV_WGRAD,    /* ▪ + a pipeline's W, inside its box */
    G_COUNT
} viz_glyph;
uint32_t viz_glyph_ch(const viz_grid *g, viz_glyph k);

int viz_grid_resize(viz_grid *g, int w, int h);
void viz_grid_free(viz_grid *g);
void viz_grid_clear(viz_grid *g);
void viz_put(viz_grid *g, int x, int y, uint32_t ch, int fg, int attr);
/* UTF-8 text at (x, y), at most maxw cells; returns the cells written. On
 * an ASCII grid, non-ASCII characters print as '?'. */
int viz_text(viz_grid *g, int x, int y, int maxw, const char *s, int fg, int attr);
int viz_textf(viz_grid *g, int x, int y, int maxw, int fg, int attr, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* A box on r's edge with its title; the inside is r shrunk by one. */
void viz_box(viz_grid *g, pl_rect r, const char *title, int focused);
/* A bar of w cells, fraction in [0, 1] full. */
void viz_bar(viz_grid *g, int x, int y, int w, double fraction, int fg);
/* The grid's text, one line per row, trailing blanks kept (for tests and
 * the snapshot mode). malloc'd, UTF-8. */
char *viz_grid_text(const viz_grid *g);

/* ---- the model of the world ----------------------------------------------------------- */

typedef struct {
    pl_event *ev; /* by start time */
    size_t n, cap;
    /* the metrics' busy time, swept as events arrive (viz_lane_busy): the
     * lowest index inserted at since the last sweep (n when none), how far
     * the sweep got, its state on each clock, and the state before every
     * VIZ_BUSY_EVERY-th event (an insertion before `swept` sweeps again
     * from the checkpoint before it, not from the start) */
    size_t dirty, swept;
    double covered[2], busy[2];
    double (*ck)[4]; /* covered and busy, measured then modeled */
    size_t nck, capck;
    /* where its collectives are (pl_event kind PL_EV_COLLECTIVE), in lane
     * order: the topology's ring table finds the k-th without a walk */
    size_t *coll, ncoll, capcoll;
} viz_lane;
#define VIZ_BUSY_EVERY 1024
#define VIZ_TINY_COLL 8 /* bytes: a collective of one or two numbers, bookkeeping */

#define VIZ_STREAM_LANES 8 /* streams per rank drawn apart; the 8th takes the rest */

typedef struct viz_model {
    int nranks;
    viz_lane lanes[PL_MAX_RANKS][PL_NUM_LANES];
    /* the kernels and copies again, by CUDA stream (pl_event.stream - 1),
     * for a timeline of one lane per stream (stream_lanes) */
    viz_lane streams[PL_MAX_RANKS][VIZ_STREAM_LANES];
    int nstreams[PL_MAX_RANKS]; /* stream lanes used */
    int stream_lanes;           /* the timeline draws them instead of compute/copy/comm */
    uint64_t link[PL_MAX_RANKS][PL_MAX_RANKS]; /* bytes from [peer] to [rank] */
    size_t nevents;
    double t_lo[2], t_hi[2]; /* [0] measured, [1] modeled: the span of all events */
    int have_modeled;
    /* what the lab says */
    const char *roles[PL_MAX_RANKS];
    double mem_used[PL_MAX_RANKS], mem_total[PL_MAX_RANKS]; /* bytes; 0: unknown */
    /* the shards pane: the lab's matrices cut over tp ranks (viz_model_set_matrices) */
    struct viz_matrix {
        char name[16];
        int rows, cols, padded_cols;
        char split; /* 'c', 'r', 0 */
    } matrices[PL_VIZ_MAX_MATRICES];
    int nmatrices, tp;
    /* the pipeline pane's pipeline (viz_model_set_pipeline); stages 0: none said */
    struct viz_pipeline {
        int stages, micro_batches, chunks;
        char schedule[16];
        double of_ideal, of_total;                     /* < 0: no formula */
        int have_stage_rank, stage_rank[PL_MAX_RANKS]; /* pl_viz_pipeline's */
    } pp;
    /* the mesh pane's mesh (viz_model_set_mesh); dp 0: none said */
    struct viz_mesh {
        int dp, tp, pp;
        int order; /* pl_mesh_order */
    } mesh;
    /* the memory pane's ZeRO run (viz_model_set_zero); ranks 0: none said */
    struct viz_zero {
        int stage, ranks, sgd;
        long psi, psi_pad;
    } zero;
    /* per rank and part (VIZ_ZMEM_PARAMS, GRADS, OPTIM), the bytes its
     * device holds (the metric notes "mem params r<k>", "mem grads r<k>",
     * "mem optim r<k>": not series), each with the note's time on both
     * clocks ([0] measured, [1] modeled), in the order noted */
    struct viz_zmem {
        double at[2], bytes;
    } * zmem[PL_MAX_RANKS][3];
    size_t nzmem[PL_MAX_RANKS][3], capzmem[PL_MAX_RANKS][3];
    /* a hybrid run's communication (a collective, ring step, send or
     * receive with a pl_group): how many of each group, and of each kind
     * (the timeline draws them in their group's letter, not their kind's
     * glyph) */
    size_t ngroup[PL_NUM_GROUPS], nkind_grouped[16];
    /* per stage, the bytes of activations it holds (the metric notes
     * "activations s<r>": not series) now and at most; act_seen: noted */
    double act_now[PL_MAX_RANKS], act_peak[PL_MAX_RANKS];
    unsigned char act_seen[PL_MAX_RANKS];
    size_t nkind[16];        /* events of each kind (pl_event.kind), for the timeline's legend */
    size_t whole_backwards0; /* rank 0's backwards of a whole step (micro_batch and layer < 0) */
    /* rank 0's collectives (the metrics pane), kept as they arrive: on each
     * clock ([0] measured, [1] modeled) their bytes, time and count, and the
     * latest to start of those above VIZ_TINY_COLL bytes and of the others
     * (the later one to arrive on a tie) */
    struct viz_colls {
        double bytes, secs[2];
        size_t calls;
        int newest_step;
        pl_event last[2], tiny[2];
        int have_last[2], have_tiny[2];
    } colls;
    /* what changes with every event: viz_pp_round_find's answer on each
     * clock, kept until the next event (version) */
    unsigned long version;
    struct viz_pp_cache *pp_cache;
    /* every picture noted (viz_model_note of a PL_NOTE_PICTURE; not a
     * metric: no curve), in the order noted: a deep copy, the note's time
     * on both clocks ([0] measured, [1] modeled), when the model took it
     * in (pl_trace_now: the reveal runs from then) and the step it belongs
     * to (pl_note.step) */
    struct viz_pic {
        struct pl_picture *pic;
        double at[2], got;
        int step;
    } * pics;
    size_t npics, cappics;
    /* metrics the lab pushes, by name: "loss" per batch, "epoch loss" per epoch */
    struct viz_series {
        char name[32];
        double *v;
        size_t *seq; /* the model's count of pushes when each came: orders the series */
        size_t n, cap;
    } series[4];
    int nseries;
    size_t pushes;
    char metric_name[32]; /* viz_model_push_metric's name */
} viz_model;

void viz_model_init(viz_model *m, int nranks);
void viz_model_free(viz_model *m);
/* 0, or -1 when out of memory (the event is dropped). */
int viz_model_add(viz_model *m, const pl_event *e);
/* A value of the series `name` (at most 4 series; a 5th name is dropped).
 * "activations s<r>" (r 0..PL_MAX_RANKS-1) is no series: the bytes of
 * activations stage r holds now (act_now; act_peak the most so far).
 * A series "epoch X" holds the mean of X over each epoch: the metrics pane
 * draws X per epoch, with the epoch in progress as the mean so far. 0, or
 * -1 when out of memory or out of series. */
int viz_model_push_named(viz_model *m, const char *name, double value);
/* The same under m->metric_name. */
int viz_model_push_metric(viz_model *m, double value);
/* viz_model_push_named of a value noted at `at` on the measured clock and
 * modeled_at on the modeled one: the memory pane's notes ("mem params
 * r<k>"...) keep their time; any other name is viz_model_push_named's. */
int viz_model_push_timed(viz_model *m, const char *name, double value, double at,
                         double modeled_at);
/* A note of the trace (paralab/trace.h) into the model: a metric value
 * (viz_model_push_timed, with the note's times), a memory sample (the rank's mem_used, mem_total),
 * a picture (copied into pics, with its step: viz_model_pictures);
 * a step's note changes nothing (the narration comes from the player live,
 * from the file's marks in a replay). 0, or -1 as push_named. */
int viz_model_note(viz_model *m, const pl_note *n);
/* What the trace t holds now, into the model: the rings' events, then the
 * notes, each also to the writer w (NULL: none), in the order they came.
 * buf: room for cap events. Returns the events and notes taken. The one
 * way data of a live run reaches the model (app.c's drain). */
size_t viz_model_take(viz_model *m, pl_trace *t, pl_trace_writer *w, pl_event *buf, size_t cap);
/* The event of (rank, lane) covering time t on the clock (innermost: the
 * latest start), or NULL. */
const pl_event *viz_model_at(const viz_model *m, int rank, int lane, double t, int modeled);
/* The same on stream lane k of the rank (the stream numbered k on its
 * device: 0 the legacy default stream). */
const pl_event *viz_model_at_stream(const viz_model *m, int rank, int k, double t, int modeled);
/* The matrices of the shards pane (pl_viz_matrix, paralab/viz.h), checked
 * as pl_viz_check_matrices does (for any number of ranks): 0, or -1 with
 * err (the model unchanged). */
int viz_model_set_matrices(viz_model *m, const pl_viz_matrix *mx, int n, int tp, char *err,
                           size_t cap);
/* The pipeline of the pipeline pane (pl_viz_pipeline, paralab/viz.h),
 * checked as pl_viz_check_pipeline does (for any number of ranks); p NULL:
 * none. 0, or -1 with err (the model unchanged). */
int viz_model_set_pipeline(viz_model *m, const pl_viz_pipeline *p, char *err, size_t cap);
/* The mesh of the mesh pane (pl_viz_mesh, paralab/viz.h), checked as
 * pl_viz_check_mesh does (for any number of ranks); mesh NULL: none. 0, or
 * -1 with err (the model unchanged). */
int viz_model_set_mesh(viz_model *m, const pl_viz_mesh *mesh, char *err, size_t cap);
/* The ZeRO run of the memory pane (pl_viz_zero, paralab/viz.h), checked as
 * pl_viz_check_zero does (for any number of ranks); z NULL: none. 0, or
 * -1 with err (the model unchanged). */
int viz_model_set_zero(viz_model *m, const pl_viz_zero *z, char *err, size_t cap);
/* The index of the matrix named `label` in the model, or -1: an event of
 * kind forward or backward with that label is a matmul with it. */
int viz_matrix_index(const viz_model *m, const char *label);
/* Rank `rank`'s latest matmul (a forward or backward on its compute lane
 * naming one of the model's matrices) that started at or before t on the
 * clock, or NULL; *matrix: its index. */
const pl_event *viz_matmul_at(const viz_model *m, int rank, double t, int modeled, int *matrix);
double viz_ev_start(const pl_event *e, int modeled);
double viz_ev_end(const pl_event *e, int modeled);

/* ---- the transcript: every step's narration and what the lab printed during it ---------- */

typedef struct {
    char *buf; /* the lines, each NUL-terminated */
    size_t len, cap;
    size_t *line;        /* where each line starts in buf */
    unsigned char *narr; /* per line: 1 for a narration's line */
    size_t nlines, capl;
    int open;         /* the last line is output still without its '\n' */
    size_t step_line; /* the current step's first line */
    int step;         /* the current step (0: none yet) */
} viz_transcript;

void viz_transcript_free(viz_transcript *t);
/* What the lab printed: n bytes, split into lines at '\n'. 0, or -1 when
 * out of memory. */
int viz_transcript_output(viz_transcript *t, const char *s, size_t n);
/* Step `step`'s narration begins: "[step] text" (its '\n's start lines). */
int viz_transcript_step(viz_transcript *t, int step, const char *text);

/* ---- a trace read back, and the replay's cursor ---------------------------------------- */

typedef struct {
    double at; /* seconds on the file's clock */
    int step;  /* its number */
    char *text;
} viz_mark; /* a narrated step */

typedef struct {
    double at, value; /* value: NaN when the file says null */
    int after;        /* the narrated steps before it in the file */
    char name[32];
} viz_metric_note;

typedef struct {
    double at, used, total; /* bytes */
    int after;              /* the narrated steps before it in the file */
    int rank;
} viz_memory_note; /* a sample of a rank's device memory */

typedef struct {
    double at; /* seconds on the file's clock */
    int after; /* the narrated steps before it in the file */
    int step;  /* args.step: the step it belongs to (0: before the first; -1: not said) */
    struct pl_picture *pic; /* malloc'd with its arrays (viz_trace_free) */
} viz_picture_note;         /* a lab's picture ("picture" instant) */

typedef struct viz_trace {
    pl_event *ev; /* by start */
    size_t nev;
    viz_mark *marks; /* by time */
    int nmarks;
    viz_metric_note *metrics; /* in the order they were pushed */
    size_t nmetrics;
    viz_memory_note *memory; /* in the order they were taken */
    size_t nmemory;
    viz_picture_note *pictures; /* in the order they were noted, each checked */
    size_t npictures;
    int nranks, modeled;
    /* what the lab said (its "paralab" metadata): 0 / "" when absent */
    char title[64];
    int steps, stream_lanes;
    unsigned panes;
    /* the matrices of the shards pane ("paralab matrix" metadata): 0 when absent */
    pl_viz_matrix matrices[PL_VIZ_MAX_MATRICES];
    char matrix_names[PL_VIZ_MAX_MATRICES][16];
    int nmatrices, tp;
    /* the pipeline of the pipeline pane ("paralab pipeline" metadata): stages 0 when absent */
    pl_viz_pipeline pipeline;
    char pipeline_schedule[16];
    /* the mesh of the mesh pane ("paralab mesh" metadata): dp 0 when absent */
    pl_viz_mesh mesh;
    char mesh_order[16];
    /* the ZeRO run of the memory pane ("paralab zero" metadata): ranks 0 when absent */
    pl_viz_zero zero;
    /* a multi-process run's part (otherData run, process, processes, first_rank,
     * part_ranks): processes 0 in a whole trace; in parts merged (viz_read_traces):
     * the run, processes, process -1 and the world's ranks */
    char run[40];
    int process, processes, first_rank, part_ranks;
} viz_trace;

/* Reads a trace file (paralab-viz, pl_viz_read_trace): 0, or -1 with err
 * naming the file and the position. viz_trace_free frees it. */
int viz_read_trace(const char *path, viz_trace *t, char *err, size_t cap);
/* Reads what paralab-viz is given: one trace; every part of a
 * multi-process run (paths[0..n-1], any order), merged into one timeline;
 * or, for one path that is not a file, the parts a run with --trace PATH
 * wrote (pl_trace_path_for_process: PATH's part 0 says how many). Merged:
 * the events of every part by start (each part's clock as it is; a tie: the
 * lower process first), the world's ranks, the memory samples of every
 * part, and process 0's narration, metric values, pictures and pane
 * metadata. 0, or -1 with err saying which file or which two files do not
 * belong together. *files (when files is not NULL): the files read, n of
 * them in *nfiles (malloc'd; viz_free_files). */
int viz_read_traces(const char *const *paths, int n, viz_trace *t, char ***files, int *nfiles,
                    char *err, size_t cap);
void viz_free_files(char **files, int n);
void viz_trace_free(viz_trace *t);

/* A replay plays like a lab in play mode: a narrated step every 1/speed
 * seconds (speed: steps a second, 0.1 to 100), its events (and the metric
 * values and memory samples noted in it) appearing one after the other in the order they
 * started, evenly over the first half of its time, the second half to read
 * it. Idle time in the trace takes none. A trace without narration plays in
 * VIZ_REPLAY_PARTS equal parts, as if each were a step. */
#define VIZ_REPLAY_PARTS 10
#define VIZ_REPLAY_REVEAL 0.5

typedef struct {
    int step; /* 1..nsteps */
    double f; /* how far into it, 0..1 (1 in the last: the replay is over) */
} viz_cursor;

/* The item the replay shows, in order: an event, a metric value, a
 * memory sample or a picture. */
typedef struct {
    int step;   /* 1..nsteps */
    int metric; /* 0: ev[index]; 1: metrics[index]; 2: memory[index]; 3: pictures[index] */
    size_t index;
    double at;
} viz_item;

/* The step (1..nmarks) of an event at time t: the last mark at or before
 * it; 1 before the first (mark_at ascending). */
int viz_replay_step_of(double t, const double *mark_at, int nmarks);
/* The items of t in the order a replay shows them (malloc'd, *n of them,
 * by step, then time, an event before a metric value before a memory
 * sample before a picture at the same time; a picture in the step its
 * args.step names) and
 * first[k], the first item of step k + 1 (first[0] = 0, first[nsteps] =
 * *n; malloc'd, nsteps + 1 of them). Returns nsteps (>= 1), -1 when out of
 * memory. */
int viz_replay_plan(const viz_trace *t, viz_item **items, size_t *n, size_t **first);
/* Item it of t into the model, as a live run's events and notes go in
 * (viz_model_add, viz_model_note). 0, or -1 when out of memory. */
int viz_replay_apply(viz_model *m, const viz_trace *t, const viz_item *it);
/* How many items (a prefix) are shown at c. */
size_t viz_replay_shown(const size_t *first, int nsteps, viz_cursor c);
int viz_replay_done(viz_cursor c, int nsteps);
/* Playing for `seconds` of wall time at `speed` steps a second. */
void viz_replay_play(viz_cursor *c, int nsteps, double seconds, double speed);
/* Space: the next step, all of its items shown (in the last: the end). */
void viz_replay_next(viz_cursor *c, int nsteps);

/* ---- the view and the panes ----------------------------------------------------------- */

#define VIZ_LOG_LINES 16

typedef struct viz_view {
    const char *title;
    int step, steps; /* the current step (0: none yet) and how many */
    char narration[1024];
    const char *mode; /* "step", "play x2.0", "paused", "replay", "done" */
    const char *clock;
    int modeled;        /* the timeline's clock */
    double t_end, span; /* the timeline shows [t_end - span, t_end] */
    int follow;         /* t_end follows the newest event */
    int zoomed;         /* the student set the span (else: everything so far) */
    int recorded;       /* a replay: the clock is the file's */
    int rank_scroll;    /* first rank row shown */
    int focus;          /* the focused pane */
    int help;           /* the help overlay is up */
    int ndev;
    const char *status;             /* a line for the narration pane's end ("world done") */
    const char *log[VIZ_LOG_LINES]; /* the lab's last output lines, oldest first */
    int nlog;
    /* a live run: the narration pane shows the transcript (else narration
     * and log), from the current step's first row plus narr_scroll rows
     * (negative: back into the steps before) */
    const viz_transcript *transcript;
    int narr_scroll;
    int big_narration; /* n: the narration takes the whole screen */
    int link_scroll;   /* the topology pane's first link listed */
} viz_view;

/* Draws every pane of the layout into g (g has the layout's size). */
void viz_render(viz_grid *g, const pl_layout *lay, const viz_model *m, const viz_view *v);
void viz_render_pane(viz_grid *g, pl_pane p, pl_rect r, const viz_model *m, const viz_view *v);
/* The rows of text the current step needs in a narration pane w cells
 * wide: its transcript from its first line on, and the status line; a
 * replay (no transcript): its narration wrapped, the output lines under
 * it and the status line, so that a replay's layout is the live run's. */
int viz_narration_rows(const viz_view *v, int w);
/* The narr_scroll values that move the narration pane r: [*lo, *hi]. */
void viz_narration_range(const viz_view *v, pl_rect r, int *lo, int *hi);
/* The topology pane r lists the links that carried bytes, folded into
 * columns and scrolled by link_scroll: returns how many there are, with
 * *cols the columns and *page the links one screen shows. */
int viz_topology_links(const viz_model *m, const viz_view *v, pl_rect r, int *cols, int *page);
/* "12.5 us", "3.20 ms", "1.50 s" */
void viz_fmt_time(char *buf, size_t cap, double s);
/* "512 B", "1.5 KiB", "3.0 MiB", "2.0 GiB" */
void viz_fmt_bytes(char *buf, size_t cap, double b);
/* The busy time of a lane on a clock (modeled 0 or 1): the union of its
 * events but collectives and ring steps, swept in start order (measured).
 * Sweeps only what arrived since the last call (the lane's sweep state is
 * a cache: the model is otherwise unchanged). */
double viz_lane_busy(const viz_lane *L, int modeled);
/* A pipeline op: a forward, backward or W event of a micro-batch
 * (micro_batch >= 0) on a stage (layer 0..PL_MAX_RANKS-1) that is no
 * matmul of the shards pane. */
int viz_is_pipeline_op(const viz_model *m, const pl_event *e);
/* The iteration (optimizer step) of the pipeline the pane shows: the
 * newest. A stage's ops belong to one iteration until a forward of a
 * (micro-batch, chunk) it already ran in it starts the next. Per stage,
 * the ops of the lowest rank that runs that stage.
 * And the newest complete iteration (done), whose sums the bubble is
 * computed from: complete on a stage once the stage has begun the next, or
 * has run all its ops (with the pipeline's description: m x v forwards, as
 * many backwards, and as many W where there are any or the schedule is
 * zero-bubble; without one: as many backwards as forwards, as many W where
 * there are any, and the same number of forwards on every stage), and
 * complete when it is on every stage of the pane. */
typedef struct viz_pp_round {
    int iteration;           /* 1, 2...; 0: no pipeline op */
    int stages;              /* the pane's rows: the pipeline's p, else the highest stage + 1 */
    double lo, hi;           /* the first start and the last end of its ops */
    double busy;             /* the time its ops take, over every stage */
    double slot;             /* its shortest op */
    double t_kind[3];        /* the shortest F, B (or BW) and W of any iteration; 0: none */
    int owner[PL_MAX_RANKS]; /* the rank whose ops stage s shows; -1: none */
    /* per stage: its newest iteration, and where it begins on its owner's compute lane */
    int stage_it[PL_MAX_RANKS];
    size_t first[PL_MAX_RANKS];
    /* the newest complete iteration, 0: none yet (the first is in progress);
     * its first start, last end and ops' time as lo, hi and busy above */
    int done;
    double done_lo, done_hi, done_busy;
} viz_pp_round;
void viz_pp_round_find(const viz_model *m, int modeled, viz_pp_round *r);
/* The bubble as a fraction of an iteration's time: idle / (stages x
 * (hi - lo)) = 1 - busy / (stages x (hi - lo)), from the pipeline ops of
 * the newest complete iteration (viz_pp_round_find's done: never from one
 * still running); -1 when none is complete yet, and in a ZeRO run (its
 * forwards and backwards are units on every rank). */
double viz_bubble_fraction(const viz_model *m, int modeled);

/* ---- the mesh pane (mesh.c) ---------------------------------------------------------- */

/* A group's colour (COL_GROUP_TP...; COL_COMM for PL_GROUP_NONE) and its
 * letter ('t', 'd', 'p'; 0 for none): the same in every pane. */
int viz_group_colour(int group);
char viz_group_letter(int group);
/* The communication the mesh pane lights: the newest event on any rank's
 * comm lane (a collective, ring step, send or receive) with a group
 * (PL_GROUP_TP, DP or PP) that started at or before t on the clock (on a
 * tie, the lowest rank's); NULL when none. */
const pl_event *viz_mesh_active(const viz_model *m, double t, int modeled);
/* lit[rank] (PL_MAX_RANKS of them): the group (pl_group) rank is lit in,
 * 0: not lit; the members of the active event's rank's group along the
 * event's axis (pl_mesh_group, in the model's mesh and order). Returns
 * that group, 0 when none (no mesh, no such event). */
int viz_mesh_lit(const viz_model *m, double t, int modeled, unsigned char *lit);
/* Rank 0's collectives and sends of narrated step `step` that began by t, per group (ops[
 * PL_GROUP_TP] ...; ring steps and receives not counted): the mesh pane's "[4] r0 sent: t 0
 * d 1 p 3". 1 when any. */
int viz_mesh_step_ops(const viz_model *m, int step, double t, int modeled, int ops[PL_NUM_GROUPS]);
/* Where the mesh pane puts things inside its border `in`: a box per DP
 * replica (box_w x box_h: its border, a row per stage, a column of cell_w
 * per TP rank, each cell the rank's nd digits, its mark and a blank),
 * per_row of them side by side after the stage labels (label_w, "pp0"),
 * box_rows rows of them; shown: the replicas that fit (the rest are
 * counted, "+N"); legend_rows under them (the groups, then "now: ...").
 * compact: where the boxes do not all fit, and a fold without them shows
 * more, each replica is its name ("dp3") over its cells, between bars
 * (box_w the bar and the cells, box_h its name and stages). per_row 0:
 * too small for one replica. */
typedef struct viz_mesh_layout {
    int compact, nd, cell_w, label_w, box_w, box_h;
    int per_row, box_rows, shown, legend_rows;
    int origin_x, origin_y;
} viz_mesh_layout;
void viz_mesh_geometry(const viz_model *m, pl_rect in, viz_mesh_layout *L);
/* The cell of world rank `rank` (its number's first column, its row): 0,
 * or -1 when it is not drawn (a replica left out, no room, a bad rank). */
int viz_mesh_cell(const viz_model *m, const viz_mesh_layout *L, int rank, int *x, int *y);
void viz_mesh_pane(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v);

/* ---- the memory pane (memory.c) -------------------------------------------------------- */

/* The parts of a ZeRO rank's memory, in the order a bar draws them. */
enum { VIZ_ZMEM_PARAMS, VIZ_ZMEM_GRADS, VIZ_ZMEM_OPTIM, VIZ_ZMEM_PARTS };
/* The part a metric note's name is ("mem params r<k>", "mem grads r<k>",
 * "mem optim r<k>", k 0..PL_MAX_RANKS-1 in decimal without leading zeros)
 * with *rank k; -1 for any other name. */
int viz_zero_metric(const char *name, int *rank);
/* The bytes rank `rank`'s device holds for `part` at time t on the clock:
 * the latest note at or before t (t = INFINITY: the newest; a rank's notes
 * come in time order, from its own thread). 1 with *bytes, 0 when none. */
int viz_zero_bytes_at(const viz_model *m, int rank, int part, double t, int modeled, double *bytes);
/* The formulas' bytes, per rank, for the model's ZeRO run (zero.h, fp32,
 * Ψ = psi_pad): params 4Ψ (4Ψ/N at stage 3), grads 4Ψ (4Ψ/N from stage
 * 2), optim 8Ψ (4Ψ with SGD; /N from stage 1); part VIZ_ZMEM_PARTS: their
 * sum. The bars' scale: the same run's at stage 0 (plain DP: 16Ψ, SGD 12Ψ). */
long long viz_zero_formula_bytes(const struct viz_zero *z, int part);
long long viz_zero_scale_bytes(const struct viz_zero *z);
/* The stage's formula as the pane prints it, in three forms (form 0 the
 * longest): "ZeRO-2: 4Ψ + 12Ψ/N = 4·71,376 + 12·71,376/8 B = 383.4 KiB",
 * "ZeRO-2: 4Ψ + 12Ψ/N = 383.4 KiB", "ZeRO-2: 4Ψ + 12Ψ/N" (stage 0:
 * "ZeRO-0, plain DP: 16Ψ ..."); utf8 0: "Psi" for Ψ and "*" for ·. */
void viz_zero_formula(const struct viz_zero *z, int utf8, int form, char *buf, size_t cap);
/* n bytes as the pane prints them: KiB to a tenth, thousands separated ("1,115.3 KiB"). */
void viz_fmt_kib(char *buf, size_t cap, double n);
/* The cells of each part of a bar w cells wide for bytes[part] on the
 * scale: round(bytes / scale x w) each, at least 1 for a part that holds
 * any, the longest cut (the first of equals) while they pass w. */
void viz_zero_bar(int w, const double bytes[VIZ_ZMEM_PARTS], double scale, int len[VIZ_ZMEM_PARTS]);
/* Rank rk's most bytes at once, the parts summed at each note's time, among its notes up to t
 * (on the modeled clock when modeled): *peak; 1 when any was noted. The bar draws the cells from
 * its bytes now to the peak as 'b' (its working buckets then), the legend "b working buckets at
 * their peak", the row "(+X in working buckets at the peak)" past the formula. */
int viz_zero_peak_at(const viz_model *m, int rk, double t, int modeled, double *peak);
/* Where the memory pane puts things inside its border `in`: the formula on
 * row 0, then rows rows of cols columns of ranks (col_w cells each, 2
 * apart: the rank's label_w, its bar bar_w, a blank, its bytes value_w),
 * the legend on the last row (when in.h >= 3); first the first rank drawn
 * (the view's rank_scroll), shown how many; when some are left out the
 * last slot says how many more. rows 0: no room for a rank. */
typedef struct viz_memory_layout {
    int rows, cols, col_w, label_w, bar_w, value_w;
    int first, shown, more;
} viz_memory_layout;
void viz_memory_geometry(const viz_model *m, const viz_view *v, pl_rect in, viz_memory_layout *L);
void viz_memory_pane(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v);

/* ---- the picture pane (picture.c; a renderer per kind in picture_*.c) ------------------- */

struct pl_picture;
/* Draws picture p into r (no border: the pane draws its own and the
 * picture's title) on g. reveal, 0..1: how much of an animated picture
 * shows (the blocks' waves, the tree's levels, the tiles' steps along K:
 * the first ceil(reveal x count)); the pane raises it over the seconds
 * after the picture appears (VIZ_PIC_REVEAL_S per part), so that the idea
 * unfolds as the student watches. Every mark differs by its glyph too, so
 * that the picture reads without colour (NO_COLOR, a monochrome
 * terminal); on an ASCII grid (LANG=C) only ASCII. Returns the rows used
 * (<= r.h). */
int viz_pic_draw(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal);
/* The rows p wants at width w (to lay out several pictures). */
int viz_pic_rows(const struct pl_picture *p, int w);
/* The parts an animated picture reveals one by one (waves, levels, steps);
 * 1 for a still one. */
int viz_pic_parts(const struct pl_picture *p);
#define VIZ_PIC_REVEAL_S 0.8
/* ... and the whole within this many seconds (Lab 04's 32 steps along K:
 * a quarter of a second each) */
#define VIZ_PIC_REVEAL_MAX_S 8.0
/* The per-kind renderers viz_pic_draw dispatches to, same contract:
 * picture_lab01.c (blocks, elements), picture_lab02.c (request, banks),
 * picture_lab03.c (tree), picture_lab04.c (tiles, roofline),
 * picture_plots.c (bars). */
int viz_pic_blocks(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal);
int viz_pic_elements(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal);
int viz_pic_request(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal);
int viz_pic_banks(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal);
int viz_pic_tree(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal);
int viz_pic_tiles(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal);
int viz_pic_roofline(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal);
int viz_pic_bars(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal);
/* Each kind's rows at width w (viz_pic_rows dispatches): same files. */
int viz_pic_blocks_rows(const struct pl_picture *p, int w);
int viz_pic_elements_rows(const struct pl_picture *p, int w);
int viz_pic_request_rows(const struct pl_picture *p, int w);
int viz_pic_banks_rows(const struct pl_picture *p, int w);
int viz_pic_tree_rows(const struct pl_picture *p, int w);
int viz_pic_tiles_rows(const struct pl_picture *p, int w);
int viz_pic_roofline_rows(const struct pl_picture *p, int w);
int viz_pic_bars_rows(const struct pl_picture *p, int w);
/* A picture as plain text, w columns wide (a run without the UI prints it
 * under its step's narration), utf8 0: ASCII only. malloc'd, lines ending
 * in '\n', trailing blanks cut; NULL out of memory. */
char *viz_pic_text(const struct pl_picture *p, int w, int utf8);
/* The model's pictures to show at time t on the clock: those of the
 * newest narrated step that noted any at or before t (t = INFINITY: the
 * newest), oldest first, the first max of them into out; returns how many
 * that step has (possibly more than max: the pane says how many it left
 * out), with *since the time on the measured clock (pl_trace_now) the
 * model took the newest of them in (a live run: within a frame of when it
 * was noted; a replay: when its step was shown), for the reveal, and
 * *step the step they belong to (either may be NULL). 0 when none. */
int viz_model_pictures(const viz_model *m, double t, int modeled, const struct pl_picture **out,
                       int max, double *since, int *step);
/* The picture pane (PL_PANE_PICTURE): a box titled with the picture's
 * title ("picture" when there is none yet: "no picture yet" inside); the
 * pictures viz_model_pictures gives at the view's time (the newest while
 * it follows the run, else at t_end), several stacked with a rule titled
 * with each next one's title, or side by side (at least 30 columns each,
 * each column's title on the top border) when stacking does not fit and
 * that does; each gets viz_pic_rows rows where they fit, else the first
 * is cut to the rows there are, and the last row says what was left out
 * ("+1 picture (element map): enlarge the terminal", "cut to 6 of 14
 * rows: enlarge the terminal"). A step before the current one's pictures
 * say "step N" in the title. The reveal: an animated picture's parts
 * (viz_pic_parts) appear one by one, the first at once and then one every
 * VIZ_PIC_REVEAL_S seconds from when the model took it in, live and in a
 * replay alike. viz_picture_pane_at: the same at time `now` on the
 * measured clock (viz_picture_pane: pl_trace_now()). */
void viz_picture_pane(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v);
void viz_picture_pane_at(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v, double now);
/* The reveal (0..1) of picture p `elapsed` seconds after the model took it
 * in: (1 + floor(elapsed / VIZ_PIC_REVEAL_S)) / parts, at most 1. */
double viz_pic_reveal(const struct pl_picture *p, double elapsed);

/* The watchdog saw no progress (labrun.c, on the watchdog's thread): the UI
 * thread gives the terminal back, prints the report and ends the process. */
void viz_stalled(const char *report);

#endif
