/*
 * paralab/viz.h — the terminal visualiser: panes that show a world of ranks
 * as it runs (live) or as a trace recorded it (replay).
 *
 * The UI runs on the main thread and is the only code that calls ncurses.
 * It drains the world's trace (paralab/trace.h: the ranks' events, and the
 * notes of the steps, the metrics a lab records with pl_metric and the
 * device memory the world samples) into a model of the world, renders every pane into an in-memory
 * cell grid and copies the grid to the terminal with one doupdate per frame, about 30 times a
 * second. The ranks run on their own threads; the player (paralab/step.h) paces their narrated
 * steps and the UI drives it (space, p, + and -).
 *
 * Without a terminal (--no-viz, a pipe, CI), or when TERM is unset, "dumb"
 * or unknown to terminfo, labs stay headless: plain narration lines, no
 * escape bytes. pl_viz_available says which, and why.
 */
#ifndef PARALAB_VIZ_H
#define PARALAB_VIZ_H

#include <stddef.h>
#include <stdint.h>

#include "paralab/options.h"
#include "paralab/step.h"
#include "paralab/trace.h"
#include "paralab/world.h"

typedef enum {
    PL_PANE_HEADER,
    PL_PANE_NARRATION,
    PL_PANE_DEVICES,
    PL_PANE_TIMELINE,
    PL_PANE_TOPOLOGY,
    PL_PANE_SHARDS,
    PL_PANE_PIPELINE,
    PL_PANE_METRICS,
    PL_PANE_MESH,    /* a hybrid lab's device mesh (pl_viz_mesh) */
    PL_PANE_MEMORY,  /* a ZeRO lab's memory per device (pl_viz_zero) */
    PL_PANE_PICTURE, /* a lab's picture of its idea (paralab/picture.h: blocks on SMs,
                        a warp's sectors, the tree, the tiles, the roofline, bars) */
    PL_NUM_PANES
} pl_pane;
#define PL_PANE_BIT(p) (1u << (p))

/* ---- layout: a pure function, tested for every size and device count ------------- */

typedef struct {
    int x, y, w, h; /* w == 0: not shown */
} pl_rect;

typedef struct {
    int ok;           /* 0: the terminal is below min_w x min_h */
    int min_w, min_h; /* what these panes need */
    pl_rect pane[PL_NUM_PANES];
} pl_layout;

/* Rectangles for the panes in `panes` (PL_PANE_BIT set) on a cols x rows
 * screen with ndev devices (0..64). Panes never overlap and stay inside the
 * screen. */
void pl_viz_layout(int cols, int rows, int ndev, unsigned panes, pl_layout *out);
/* The same for a narration that has text_rows rows of text to show: its
 * pane grows past its usual height (4 rows, 9 from 30 rows up) to fit them,
 * up to 3/5 of the screen below the header, leaving the others at least 8
 * rows; the others shrink. text_rows 0: pl_viz_layout. */
void pl_viz_layout_text(int cols, int rows, int ndev, unsigned panes, int text_rows,
                        pl_layout *out);
/* The same for a pipeline of `stages` stages (0: ndev, as above): the
 * pipeline pane wants a row per stage (a hybrid run: fewer stages than
 * devices, pl_viz_pipeline.have_stage_rank). The mesh pane goes in the
 * left column (36 columns at least), under the devices (which leave it 7
 * rows where they can) and above the topology (half each, the mesh at
 * least 7 rows where that leaves the topology 3). The memory pane goes
 * across the screen under the header (and the pipeline pane): a row per
 * device and four more, leaving the others 11 rows (8 when the screen is
 * short; beside the metrics when not even that leaves it 5). The picture
 * pane takes the right half of the body under those (its whole height)
 * where that leaves it at least 56 columns and the others theirs (60 with
 * a left column, else 40); else the full width above the narration, 3/5
 * of the body's rows leaving the others 9 (beside the metrics when that
 * is under 5); the whole body with no other pane. */
void pl_viz_layout_stages(int cols, int rows, int ndev, int stages, unsigned panes, int text_rows,
                          pl_layout *out);

/* ---- running a lab with the UI ---------------------------------------------------- */

/* A weight matrix of a tensor-parallel lab, as the shards pane draws it:
 * cut into tp shards, shard i held by the ranks r with r % tp == i (the TP
 * group is tp consecutive ranks: rank i when the world is one group) and
 * drawn in rank i's colour and digit.
 *   split 'c', column-parallel: shard i is columns [i cols/tp, (i+1) cols/tp)
 *     (cols a multiple of tp);
 *   split 'r', row-parallel: shard i is rows [i rows/tp, (i+1) rows/tp)
 *     (rows a multiple of tp);
 *   split 0, replicated: every rank holds all of it.
 * padded_cols: the last padded_cols columns are padding (a classifier's
 * classes padded up to a multiple of tp), drawn as such in the shards of
 * the ranks that hold them; 0..cols-1.
 *
 * Which shard a rank multiplies now: the lab records, around each linear
 * layer's matmul, an event on the compute lane (pl_trace_record) of kind
 * PL_EV_FORWARD or PL_EV_BACKWARD whose label is the matrix's name exactly
 * ("W1"), with layer the block's index (-1: none, e.g. the head), rank the
 * rank, and its start and end on both clocks. For each rank the pane
 * highlights the shard of the matrix named by the rank's latest such event
 * that started at or before the time the view shows (the timeline's end),
 * and says which block and direction. Such events are not pipeline stages:
 * the pipeline pane and the bubble leave them out. */
#define PL_VIZ_MAX_MATRICES 8
typedef struct pl_viz_matrix {
    const char *name; /* "W1": also the label of the events that multiply it; 1..15 bytes */
    int rows, cols;   /* the full matrix's shape, 1..1<<30 */
    char split;       /* 'c' column-parallel, 'r' row-parallel, 0 replicated */
    int padded_cols;  /* columns at the right end that are padding; 0: none */
} pl_viz_matrix;

/* 0 when the matrices can be drawn sharded over tp ranks of a world of
 * nranks; else -1 with err naming the matrix, the bad value and what is
 * allowed. */
int pl_viz_check_matrices(const pl_viz_matrix *m, int n, int tp, int nranks, char *err, size_t cap);

/* A pipeline-parallel lab's pipeline (Lab 09), as the pipeline pane
 * draws it: p stages (the ranks of the PP group: stage r is the layer of
 * the events of its ops), m micro-batches per optimizer step, v model
 * chunks per stage, the schedule's name ("gpipe", "1f1b", "zb-h1"...: what
 * the title says) and the formula's bubble (pl_pp_bubble_formula,
 * paralab/pipeline.h) in its two normalisations: of the ideal time and of
 * the total time; both negative: no formula (ZB-H1 with m < p).
 *
 * The events the pane draws (paralab/trace.h): one per op on the compute
 * lane, kind PL_EV_FORWARD (F), PL_EV_BACKWARD (BW, or zero-bubble's B) or
 * PL_EV_WEIGHT_GRAD (W), micro_batch k, layer the stage, chunk c; and the
 * metric notes "activations s<r>" (pl_trace_note_metric: the bytes of
 * activations stage r holds now), drawn as a gauge per stage with its peak
 * and kept out of the metrics pane's curves. */
typedef struct pl_viz_pipeline {
    int stages;                /* p: 1..PL_MAX_RANKS, dividing the world's ranks */
    int micro_batches;         /* m: 1..PL_PP_MAX_MICRO */
    int chunks;                /* v: 1..PL_PP_MAX_CHUNKS */
    const char *schedule;      /* 1..15 bytes */
    double of_ideal, of_total; /* of_ideal >= 0, 0 <= of_total < 1; or both < 0: none */
    /* A hybrid run (Lab 10) runs each stage on several ranks (every dp and
     * tp coordinate): have_stage_rank 1 draws stage r from the events of
     * world rank stage_rank[r] only (0..PL_MAX_RANKS-1 and, for a world of
     * n ranks, below n; for r < stages), e.g. the ranks at dp 0, tp 0.
     * have_stage_rank 0 (the default): per stage, the events of the lowest
     * rank that runs it (Lab 09: rank = stage). */
    int have_stage_rank;
    int stage_rank[PL_MAX_RANKS];
} pl_viz_pipeline;

/* 0 when p can be drawn for a world of nranks (0: any); else -1 with err
 * naming the bad value and what is allowed. */
int pl_viz_check_pipeline(const pl_viz_pipeline *p, int nranks, char *err, size_t cap);

/* A hybrid lab's device mesh (paralab/mesh.h), as the mesh pane draws it:
 * dp x tp x pp ranks numbered in the order named (rank = tp + t (dp + d pp)
 * for "megatron", tp + t (pp + p dp) for "picotron"), folded to fit: a box
 * per DP replica, side by side (wrapping to more rows of boxes when they do
 * not fit), in it a row per pipeline stage and a column per TP rank, each
 * cell the world rank. The group that communicates now lights up in its
 * colour (TP, DP, PP: the timeline's): the members, along the event's
 * axis, of the rank of the newest communication event (a collective, a
 * ring step, a send or a receive on the comm lane, pl_event.group
 * PL_GROUP_TP/DP/PP) that started at or before the time the view shows.
 * Without colour the lit cells are reversed and marked with t, d or p. */
typedef struct pl_viz_mesh {
    int dp, tp, pp;    /* the degrees, each >= 1; dp x tp x pp = the world's ranks */
    const char *order; /* "megatron" or "picotron" (paralab/mesh.h) */
} pl_viz_mesh;

/* 0 when m can be drawn for a world of nranks (0: any; m NULL: none);
 * else -1 with err ("mesh pane: ...") naming the bad value and what is
 * allowed. */
int pl_viz_check_mesh(const pl_viz_mesh *m, int nranks, char *err, size_t cap);

/* A ZeRO lab's sharding (paralab/zero.h, Lab 11), as the memory pane
 * draws it: a bar per device of the bytes it holds for the parameters (p),
 * the gradients (g) and the optimizer state (o), each in its colour and
 * letter (the letters tell them apart without colour), every bar on the
 * scale of plain data parallelism's 16 Ψ_pad (12 Ψ_pad with SGD: the same
 * run at stage 0), so that the bars shrink as the stage rises; the stage's
 * formula beside them ("ZeRO-2: 4Ψ + 12Ψ/N = 4·71,376 + 12·71,376/8 B =
 * 383.4 KiB", Ψ the padded Ψ_pad) and each part's term in the legend.
 * What a bar measures: the metric notes "mem params r<k>", "mem grads
 * r<k>" and "mem optim r<k>" (pl_trace_note_metric: the bytes rank k's
 * device holds now for each, working buckets included), the latest of
 * each noted at or before the time the view shows (its newest while the
 * view follows the run), so that a stage-3 run's bars move as its buckets
 * are gathered and given back; those notes are no curves of the metrics
 * pane. */
typedef struct pl_viz_zero {
    int stage;    /* 0 (plain data parallelism), 1, 2 or 3 */
    int ranks;    /* N: 1..PL_MAX_RANKS, the world's ranks */
    long psi;     /* Ψ: the model's parameters, >= 1 */
    long psi_pad; /* Ψ_pad: Ψ with each bucket padded to a multiple of N (pl_zero_padded);
                     >= psi, a multiple of N, at most 2^40 */
    int sgd;      /* 1: the optimizer keeps m only (4Ψ_pad/N of state, not 8Ψ_pad/N); 0: AdamW */
} pl_viz_zero;

/* 0 when z can be drawn for a world of nranks (0: any; z NULL: none);
 * else -1 with err ("memory pane: ...") naming the bad value and what is
 * allowed. */
int pl_viz_check_zero(const pl_viz_zero *z, int nranks, char *err, size_t cap);

typedef struct pl_viz_config {
    const char *title;               /* "lab 06 · collectives" */
    unsigned panes;                  /* PL_PANE_BIT(...) | ... ; header and narration always */
    int steps;                       /* narrated steps the lab has (0: unknown) */
    const char *roles[PL_MAX_RANKS]; /* per rank, e.g. "dp 1" (NULL: none) */
    const char *clock;               /* "modeled (H100-SXM)" or "measured" */
    int modeled;                     /* the timeline starts on the modeled clock */
    int stream_lanes; /* the timeline shows a lane per CUDA stream (s0 the default stream,
                         s1, s2... in creation order) instead of compute/copy/comm;
                         simulated GPUs only (real ones would need CUPTI) */
    /* the shards pane: the lab's weight matrices as tensor parallelism
     * cuts them over tp ranks (pl_viz_matrix, above); nmatrices 0: none */
    const pl_viz_matrix *matrices;
    int nmatrices; /* 0..PL_VIZ_MAX_MATRICES */
    int tp;        /* the TP degree: 1..PL_MAX_RANKS, dividing the world's ranks */
    /* the pipeline pane's pipeline (pl_viz_pipeline, above); NULL: none
     * (the pane then draws what the events say, without a formula) */
    const pl_viz_pipeline *pipeline;
    /* the mesh pane's mesh (pl_viz_mesh, above); NULL: none */
    const pl_viz_mesh *mesh;
    /* the memory pane's ZeRO run (pl_viz_zero, above); NULL: none */
    const pl_viz_zero *zero;
} pl_viz_config;

/* 1 when a UI can run on this terminal; else 0 and, in why, the one-line
 * reason (not a terminal, TERM unset, dumb or unknown). */
int pl_viz_available(char *why, size_t cap);

/* Runs the world (cfg->n ranks of fn) on a background thread and the UI on
 * this one until the student quits (q, Ctrl-C) or, after the world has
 * ended, presses q. trace: the world's rings (drained here); writer: where
 * the drained events also go (NULL: nowhere). The player is set
 * interactive and quiet. Returns the world's status (0: every rank
 * succeeded), with err as pl_world_run_config's; a quit before the end
 * stops the ranks at their next step and returns 0 with *quit set: 1 for
 * q, 2 for Ctrl-C or SIGTERM. Ranks that cannot reach that step (a kernel
 * in an endless loop: 1 s of CPU time without progress, paralab/watchdog.h)
 * or a second quit end the process here, since nothing can wait for them:
 * the terminal restored, the trace finished with what it has, a line on
 * stderr naming the kernel still running, exit 0 after q, 130 after
 * Ctrl-C. Matrices for the shards pane that pl_viz_check_matrices refuses
 * for cfg->n ranks, a pipeline pl_viz_check_pipeline refuses, a mesh
 * pl_viz_check_mesh refuses or a ZeRO run pl_viz_check_zero refuses: 1
 * with its message, nothing run. */
int pl_viz_run_world(const pl_viz_config *vc, const pl_world_config *wc, pl_rank_fn fn, void *arg,
                     pl_trace_writer *writer, int *quit, char *err, size_t err_size);

/* How a lab runs its world of n ranks: with the UI when opt->viz and the
 * terminal allow (else plain text, with a one-line reason on a terminal
 * that cannot), paced by a player made from opt (--step, --play, --speed),
 * and with opt->trace written as a Chrome trace (modeled clock on simulated
 * GPUs, measured on real ones). Returns the world's status with err; a
 * quit sets *quit and returns 0; 2 when the trace file cannot be written.
 * On simulated GPUs a watchdog (opt->stall_timeout CPU seconds without
 * progress, paralab/watchdog.h) ends a run that loops forever: a line on
 * stderr naming the kernel, exit status 1 (130 when it loops after Ctrl-C),
 * the terminal restored first. Matrices for the shards pane that
 * pl_viz_check_matrices refuses for n ranks (or a pipeline that
 * pl_viz_check_pipeline refuses, a mesh pl_viz_check_mesh refuses, or a
 * ZeRO run pl_viz_check_zero refuses): 1 with its message, before anything
 * runs; with a trace file, they are written to it ("paralab matrix",
 * "paralab pipeline", "paralab mesh" and "paralab zero" metadata) for the
 * replay. */
int pl_viz_run_lab(const pl_viz_config *vc, const pl_options *opt, int n, pl_rank_fn fn, void *arg,
                   int *quit, char *err, size_t err_size);

/* Replays a trace file (from --trace) with the same panes and controls,
 * as the lab played: its narrated steps, `speed` steps a second (0.1 to
 * 100) in play mode, or one at a time (space) in step mode; each step's
 * events and metric values appear over the first half of its time. 0; 2
 * with err naming the file and the position for a missing, truncated or
 * corrupt file; 1 if the UI cannot start. */
int pl_viz_replay(const char *path, pl_mode mode, double speed, char *err, size_t err_size);

/* Reads a Chrome trace written by pl_trace_writer back into events (the
 * clock it was written on: the events' start/end, modeled or measured, as
 * seconds from the file's origin). 0, or -1 with err naming the file and the
 * line:column or the event. *out: malloc'd. */
int pl_viz_read_trace(const char *path, pl_event **out, size_t *n, int *nranks, int *modeled,
                      char *err, size_t err_size);

/* Checks a trace file as Perfetto draws it: on every track (pid, tid) two
 * slices ("X" events) are apart or one holds the other. 0 with a summary
 * in msg (slices, tracks, ranks, narrated steps, metric values, pictures); 1 with the
 * number of pairs that overlap without nesting and the first; 2 when the
 * file cannot be read as a trace (msg as pl_viz_read_trace's err). */
int pl_viz_check_trace(const char *path, char *msg, size_t cap);

/* A multi-process run's trace (--trace FILE under mpirun: each process
 * writes its part, pl_trace_writer_open_part): the functions above, given
 * the paths of every part (any order), or the one name given to --trace
 * (FILE: its parts FILE.p0..., pl_trace_path_for_process), read the parts
 * merged into one timeline of every rank: events keyed by global rank, by
 * start (each part's clock as that process had it; a tie: the lower
 * process first), process 0's narration, metrics, pictures and pane
 * metadata. Parts of different runs, worlds or clocks, a part missing or
 * given twice, or one alone: refused (2 for the check and the replay; -1
 * for the reading) with err naming the files. One path that is a whole
 * trace: as the functions above. The check's summary of merged parts says
 * how many parts, the run, and how many of the world's ranks have events. */
int pl_viz_read_traces(const char *const *paths, int n, pl_event **out, size_t *nev, int *nranks,
                       int *modeled, char *err, size_t err_size);
int pl_viz_check_traces(const char *const *paths, int n, char *msg, size_t cap);
int pl_viz_replay_traces(const char *const *paths, int n, pl_mode mode, double speed, char *err,
                         size_t err_size);

/* ---- a picture as text (a run without the UI) ----------------------------------------------- */

/* A lab's picture (paralab/picture.h) as plain text, w columns wide (at
 * least 1): its title on the first line, then what the picture pane draws
 * of it, in full (the renderer's text form, viz_pic_text); utf8 0: ASCII
 * only, 1: UTF-8 glyphs, < 0: as the locale says (pl_viz_locale_utf8).
 * Lines end in '\n', trailing blanks cut. malloc'd; NULL out of memory. */
struct pl_picture;
char *pl_viz_picture_text(const struct pl_picture *p, int w, int utf8);
/* 1 when the environment's locale (LC_ALL, LC_CTYPE, LANG, as
 * setlocale(LC_CTYPE, "") would take it) has the codeset UTF-8, as the UI
 * decides its glyphs; 0 otherwise (LANG=C). Changes no locale. */
int pl_viz_locale_utf8(void);

#endif
