/*
 * replay.c — reads a Chrome trace written by pl_trace_writer (--trace) back
 * into events, with jansson, and the replay's cursor (vizint.h). Every "X"
 * event becomes a pl_event: pid the rank, args.lane the lane (absent, in
 * files of older paralabs: the tid), args.stream its CUDA stream, cat the
 * kind, name the label, ts and dur (µs) the start and end in seconds, args
 * the bytes, FLOPs, micro-batch, layer and peer. An instant ("i") of cat
 * "narration" is a narrated step (args step and text), a counter ("C") of
 * cat "metric" a metric value (args value), one of cat "memory" a sample of
 * rank pid's device memory (args used and total), the metadata event "paralab"
 * what the lab said (title, steps, panes, stream_lanes), each "paralab
 * matrix" a matrix of the shards pane (name, rows, cols, split, padded_cols,
 * tp), the "paralab pipeline" the pipeline of the pipeline pane (stages,
 * micro_batches, chunks, schedule, of_ideal, of_total, and stage_ranks in a
 * hybrid run's), the "paralab mesh" the mesh of the mesh pane (dp, tp, pp,
 * order), the "paralab zero" the ZeRO run of the memory pane (stage, ranks,
 * psi, psi_pad, sgd), an instant of cat "picture" a lab's picture (name its
 * kind, args step, title, p, iv, dv with null for NaN, sv; refused unless
 * pl_picture_check accepts it); other metadata is skipped. The clock the file was written on is in
 * otherData.clock
 * ("modeled" or "measured"; absent: measured).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "paralab/picture.h"
#include "paralab/pipeline.h"
#include "vizint.h"

static int kind_of(const char *cat)
{
    for (int k = 0; k < PL_NUM_EVENT_KINDS; k++)
        if (!strcmp(cat, pl_event_kind_name((pl_event_kind)k))) return k;
    return -1;
}

static int int_arg(json_t *args, const char *key, long long lo, long long hi, long long *out)
{
    json_t *v = json_object_get(args, key);
    if (!v) return 0; /* absent: keep the default */
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) return -1;
    *out = json_integer_value(v);
    return 0;
}

void viz_trace_free(viz_trace *t)
{
    free(t->ev);
    for (int i = 0; i < t->nmarks; i++) free(t->marks[i].text);
    free(t->marks);
    free(t->metrics);
    free(t->memory);
    for (size_t i = 0; i < t->npictures; i++) {
        pl_picture_free(t->pictures[i].pic);
        free(t->pictures[i].pic);
    }
    free(t->pictures);
    memset(t, 0, sizeof *t);
}

static int by_start(const void *x, const void *y)
{
    const pl_event *a = x, *b = y;
    return a->start < b->start ? -1 : a->start > b->start;
}

static int by_time(const void *x, const void *y)
{
    const viz_mark *a = x, *b = y;
    return a->at < b->at ? -1 : a->at > b->at ? 1 : (a->step > b->step) - (a->step < b->step);
}

/* The "paralab" metadata: what the lab said. */
static void read_lab(viz_trace *t, json_t *args)
{
    json_t *title = json_object_get(args, "title"), *steps = json_object_get(args, "steps");
    json_t *panes = json_object_get(args, "panes"), *lanes = json_object_get(args, "stream_lanes");
    if (json_is_string(title)) snprintf(t->title, sizeof t->title, "%s", json_string_value(title));
    if (json_is_integer(steps) && json_integer_value(steps) > 0 &&
        json_integer_value(steps) < 1000000)
        t->steps = (int)json_integer_value(steps);
    if (json_is_integer(panes) && json_integer_value(panes) >= 0)
        t->panes = (unsigned)json_integer_value(panes) & ((1u << PL_NUM_PANES) - 1);
    t->stream_lanes = json_is_true(lanes) || (json_is_integer(lanes) && json_integer_value(lanes));
}

/* A "paralab matrix" metadata event: a matrix of the shards pane. 0, or -1
 * with err saying what it needs. */
static int read_matrix(viz_trace *t, json_t *args, const char *path, size_t i, char *err,
                       size_t cap)
{
    json_t *name = json_object_get(args, "name"), *split = json_object_get(args, "split");
    long long rows = 0, cols = 0, pad = 0, tp = 0;
    const char *sp = json_is_string(split) ? json_string_value(split) : "";
    int k = !strcmp(sp, "column")       ? 'c'
            : !strcmp(sp, "row")        ? 'r'
            : !strcmp(sp, "replicated") ? 0
                                        : -1;
    if (!json_is_string(name) || strlen(json_string_value(name)) < 1 ||
        strlen(json_string_value(name)) > 15 || k < 0 || !json_object_get(args, "rows") ||
        !json_object_get(args, "cols") || !json_object_get(args, "tp") ||
        int_arg(args, "rows", 1, 1 << 30, &rows) || int_arg(args, "cols", 1, 1 << 30, &cols) ||
        int_arg(args, "padded_cols", 0, (1 << 30) - 1, &pad) ||
        int_arg(args, "tp", 1, PL_MAX_RANKS, &tp)) {
        snprintf(err, cap,
                 "%s: event %zu: a matrix (\"paralab matrix\") needs args.name (1 to 15 bytes), "
                 "rows and cols (whole numbers 1..2^30), split (\"column\", \"row\" or "
                 "\"replicated\"), tp (1..%d) and padded_cols (0..cols-1, absent: 0)",
                 path, i, PL_MAX_RANKS);
        return -1;
    }
    if (t->nmatrices == PL_VIZ_MAX_MATRICES || (t->nmatrices && tp != t->tp)) {
        snprintf(err, cap, "%s: event %zu: matrix %s: %s", path, i, json_string_value(name),
                 t->nmatrices == PL_VIZ_MAX_MATRICES
                     ? "more matrices than the shards pane draws (8)"
                     : "a tp other than the matrices' before");
        return -1;
    }
    int j = t->nmatrices++;
    snprintf(t->matrix_names[j], sizeof t->matrix_names[j], "%s", json_string_value(name));
    t->matrices[j] = (pl_viz_matrix){t->matrix_names[j], (int)rows, (int)cols, (char)k, (int)pad};
    t->tp = (int)tp;
    return 0;
}

/* The "paralab pipeline" metadata event: the pipeline pane's pipeline. 0, or
 * -1 with err saying what it needs. */
static int read_pipeline(viz_trace *t, json_t *args, const char *path, size_t i, char *err,
                         size_t cap)
{
    json_t *name = json_object_get(args, "schedule"), *fi = json_object_get(args, "of_ideal"),
           *ft = json_object_get(args, "of_total");
    long long p = 0, m = 0, v = 0;
    int none = json_is_null(fi) && json_is_null(ft);
    size_t len = json_is_string(name) ? strlen(json_string_value(name)) : 0;
    if (t->pipeline.stages > 0) {
        snprintf(err, cap,
                 "%s: event %zu: a second pipeline (\"paralab pipeline\"): a trace has one", path,
                 i);
        return -1;
    }
    if (!json_object_get(args, "stages") || !json_object_get(args, "micro_batches") ||
        !json_object_get(args, "chunks") || int_arg(args, "stages", 1, PL_MAX_RANKS, &p) ||
        int_arg(args, "micro_batches", 1, PL_PP_MAX_MICRO, &m) ||
        int_arg(args, "chunks", 1, PL_PP_MAX_CHUNKS, &v) || len < 1 || len > 15 ||
        !(none || (json_is_number(fi) && json_is_number(ft) && json_number_value(fi) >= 0 &&
                   json_number_value(ft) >= 0 && json_number_value(ft) < 1))) {
        snprintf(err, cap,
                 "%s: event %zu: a pipeline (\"paralab pipeline\") needs args.stages (1..%d), "
                 "micro_batches (1..%d) and chunks (1..%d), whole numbers; schedule (a name of 1 "
                 "to 15 bytes); of_ideal (a number >= 0) and of_total (a number in [0, 1)), or "
                 "both null (no formula)",
                 path, i, PL_MAX_RANKS, PL_PP_MAX_MICRO, PL_PP_MAX_CHUNKS);
        return -1;
    }
    json_t *sr = json_object_get(args, "stage_ranks");
    int stage_rank[PL_MAX_RANKS] = {0};
    if (sr) { /* a hybrid run's: the rank each stage shows */
        int ok = json_is_array(sr) && json_array_size(sr) == (size_t)p;
        for (size_t r = 0; ok && r < (size_t)p; r++) {
            json_t *x = json_array_get(sr, r);
            ok = json_is_integer(x) && json_integer_value(x) >= 0 &&
                 json_integer_value(x) < PL_MAX_RANKS;
            if (ok) stage_rank[r] = (int)json_integer_value(x);
        }
        if (!ok) {
            snprintf(err, cap,
                     "%s: event %zu: a pipeline's args.stage_ranks must be an array of %lld whole "
                     "numbers 0..%d (a rank per stage)",
                     path, i, p, PL_MAX_RANKS - 1);
            return -1;
        }
    }
    snprintf(t->pipeline_schedule, sizeof t->pipeline_schedule, "%s", json_string_value(name));
    t->pipeline = (pl_viz_pipeline){(int)p,
                                    (int)m,
                                    (int)v,
                                    t->pipeline_schedule,
                                    none ? -1 : json_number_value(fi),
                                    none ? -1 : json_number_value(ft),
                                    sr != NULL,
                                    {0}};
    memcpy(t->pipeline.stage_rank, stage_rank, sizeof stage_rank);
    return 0;
}

/* The "paralab mesh" metadata event: the mesh pane's mesh. 0, or -1 with
 * err saying what it needs. */
static int read_mesh(viz_trace *t, json_t *args, const char *path, size_t i, char *err, size_t cap)
{
    json_t *order = json_object_get(args, "order");
    long long dp = 0, tp = 0, pp = 0;
    if (t->mesh.dp > 0) {
        snprintf(err, cap, "%s: event %zu: a second mesh (\"paralab mesh\"): a trace has one", path,
                 i);
        return -1;
    }
    if (!json_object_get(args, "dp") || !json_object_get(args, "tp") ||
        !json_object_get(args, "pp") || int_arg(args, "dp", 1, PL_MAX_RANKS, &dp) ||
        int_arg(args, "tp", 1, PL_MAX_RANKS, &tp) || int_arg(args, "pp", 1, PL_MAX_RANKS, &pp) ||
        !json_is_string(order) || strlen(json_string_value(order)) > 15) {
        snprintf(err, cap,
                 "%s: event %zu: a mesh (\"paralab mesh\") needs args.dp, tp and pp (whole "
                 "numbers 1..%d) and order (\"megatron\" or \"picotron\")",
                 path, i, PL_MAX_RANKS);
        return -1;
    }
    snprintf(t->mesh_order, sizeof t->mesh_order, "%s", json_string_value(order));
    t->mesh = (pl_viz_mesh){(int)dp, (int)tp, (int)pp, t->mesh_order};
    return 0;
}

/* The "paralab zero" metadata event: the memory pane's ZeRO run. 0, or -1
 * with err saying what it needs (the values' relations are checked with
 * the world: pl_viz_check_zero). */
static int read_zero(viz_trace *t, json_t *args, const char *path, size_t i, char *err, size_t cap)
{
    long long stage = 0, ranks = 0, psi = 0, pad = 0, sgd = 0;
    if (t->zero.ranks > 0) {
        snprintf(err, cap, "%s: event %zu: a second ZeRO run (\"paralab zero\"): a trace has one",
                 path, i);
        return -1;
    }
    if (!json_object_get(args, "stage") || !json_object_get(args, "ranks") ||
        !json_object_get(args, "psi") || !json_object_get(args, "psi_pad") ||
        int_arg(args, "stage", 0, 3, &stage) || int_arg(args, "ranks", 1, PL_MAX_RANKS, &ranks) ||
        int_arg(args, "psi", 1, 1LL << 40, &psi) || int_arg(args, "psi_pad", 1, 1LL << 40, &pad) ||
        int_arg(args, "sgd", 0, 1, &sgd)) {
        snprintf(err, cap,
                 "%s: event %zu: a ZeRO run (\"paralab zero\") needs args.stage (0..3), ranks "
                 "(1..%d), psi and psi_pad (whole numbers 1..2^40), and sgd 0 or 1 if any",
                 path, i, PL_MAX_RANKS);
        return -1;
    }
    t->zero = (pl_viz_zero){(int)stage, (int)ranks, (long)psi, (long)pad, (int)sgd};
    return 0;
}

/* A "picture" instant (e, event i) into *out: 0, or -1 with err naming the
 * file, the event and what is wrong. */
static int read_picture(json_t *e, const char *path, size_t i, pl_picture *out, char *err,
                        size_t cap)
{
    json_t *name = json_object_get(e, "name"), *args = json_object_get(e, "args");
    json_t *title = json_object_get(args, "title"), *p = json_object_get(args, "p");
    json_t *iv = json_object_get(args, "iv"), *dv = json_object_get(args, "dv");
    json_t *sv = json_object_get(args, "sv");
    int kind = json_is_string(name) ? pl_picture_kind_parse(json_string_value(name)) : PL_PIC_NONE;
    const char *what =
        kind == PL_PIC_NONE ? "a name that is a kind (blocks, elements, request, "
                              "banks, tree, tiles, roofline, bars)"
        : !json_is_number(json_object_get(e, "ts")) ? "a \"ts\""
        : !json_is_string(title) || strlen(json_string_value(title)) >= sizeof out->title
            ? "args.title (a string of at most 47 bytes)"
        : !json_is_array(p) || json_array_size(p) != PL_PIC_PARAMS
            ? "args.p (an array of 8 whole numbers)"
        : !json_is_array(iv) || json_array_size(iv) > PL_PIC_MAX_INTS
            ? "args.iv (an array of at most 2^20 whole numbers)"
        : !json_is_array(dv) || json_array_size(dv) > PL_PIC_MAX_REALS
            ? "args.dv (an array of at most 2^16 numbers or nulls)"
        : !json_is_array(sv) || json_array_size(sv) > PL_PIC_MAX_LABELS
            ? "args.sv (an array of at most 256 strings)"
            : NULL;
    if (what) {
        snprintf(err, cap, "%s: event %zu: a picture needs %s", path, i, what);
        return -1;
    }
    if (pl_picture_init(out, kind, json_string_value(title), json_array_size(iv),
                        json_array_size(dv), json_array_size(sv))) {
        snprintf(err, cap, "%s: event %zu: out of memory for a picture", path, i);
        return -1;
    }
    size_t k;
    json_t *x;
    json_array_foreach(p, k, x)
    {
        if (!json_is_integer(x)) goto bad_array;
        out->p[k] = (int64_t)json_integer_value(x);
    }
    json_array_foreach(iv, k, x)
    {
        if (!json_is_integer(x) || json_integer_value(x) < INT32_MIN ||
            json_integer_value(x) > INT32_MAX)
            goto bad_array;
        out->iv[k] = (int32_t)json_integer_value(x);
    }
    json_array_foreach(dv, k, x)
    {
        if (!json_is_number(x) && !json_is_null(x)) goto bad_array;
        out->dv[k] = json_is_null(x) ? NAN : json_number_value(x);
    }
    json_array_foreach(sv, k, x)
    {
        if (!json_is_string(x) || strlen(json_string_value(x)) >= sizeof out->sv[0]) goto bad_array;
        snprintf(out->sv[k], sizeof out->sv[k], "%s", json_string_value(x));
    }
    char why[256];
    if (pl_picture_check(out, why, sizeof why)) {
        snprintf(err, cap, "%s: event %zu: %s", path, i, why);
        pl_picture_free(out);
        return -1;
    }
    return 0;
bad_array:
    snprintf(err, cap,
             "%s: event %zu: picture \"%s\": element %zu of an array is not what it holds (p, iv: "
             "whole numbers, iv's within 32 bits; dv: numbers or null; sv: strings of at most 31 "
             "bytes)",
             path, i, pl_picture_kind_name(kind), k);
    pl_picture_free(out);
    return -1;
}

/* In a part, a rank (an event's, a memory sample's) must be one of the
 * part's own: 0, or -1 with err. */
static int not_own_rank(const viz_trace *t, long long rank, const char *path, size_t i, char *err,
                        size_t cap)
{
    if (!t->processes || (rank >= t->first_rank && rank < t->first_rank + t->part_ranks)) return 0;
    snprintf(err, cap,
             "%s: event %zu: rank %lld is not one of this part's ranks %d..%d (process %d of %d)",
             path, i, rank, t->first_rank, t->first_rank + t->part_ranks - 1, t->process,
             t->processes);
    return -1;
}

int viz_read_trace(const char *path, viz_trace *t, char *err, size_t cap)
{
    memset(t, 0, sizeof *t);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, cap, "%s: is a directory, not a trace file", path);
        return -1;
    }
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        if (je.line < 0 || strstr(je.text, "unable to open"))
            snprintf(err, cap, "%s: cannot read it (%s)", path, je.text);
        else
            snprintf(err, cap, "%s:%d:%d: not a trace: %s (byte %d)", path, je.line, je.column,
                     je.text, je.position);
        return -1;
    }
    json_t *events = json_object_get(root, "traceEvents");
    if (!json_is_object(root) || !json_is_array(events)) {
        snprintf(err, cap, "%s: not a Chrome trace (no \"traceEvents\" array)", path);
        json_decref(root);
        return -1;
    }
    json_t *other = json_object_get(root, "otherData"), *clock = json_object_get(other, "clock");
    t->modeled = json_is_string(clock) && !strcmp(json_string_value(clock), "modeled");
    /* the world's ranks, as the writer says (the events may come from fewer) */
    json_t *ranks = json_object_get(other, "ranks");
    int world = json_is_integer(ranks) && json_integer_value(ranks) > 0 &&
                        json_integer_value(ranks) <= PL_MAX_RANKS
                    ? (int)json_integer_value(ranks)
                    : 0;
    /* a multi-process run's part: its run, process and ranks */
    json_t *run = json_object_get(other, "run");
    if (run || json_object_get(other, "processes")) {
        long long proc = -1, procs = 0, first = -1, own = 0;
        const char *id = json_is_string(run) ? json_string_value(run) : "";
        if (!world || strlen(id) < 1 || strlen(id) > 39 ||
            int_arg(other, "processes", 1, PL_MAX_RANKS, &procs) || !procs ||
            int_arg(other, "process", 0, procs - 1, &proc) || proc < 0 ||
            int_arg(other, "first_rank", 0, world - 1, &first) || first < 0 ||
            int_arg(other, "part_ranks", 1, world - first, &own) || !own) {
            snprintf(err, cap,
                     "%s: a part of a multi-process run needs in otherData: run (1 to 39 "
                     "bytes), ranks (the world's, 1..%d), processes (1..%d), process "
                     "(0..processes-1), first_rank and part_ranks (its ranks, within the world)",
                     path, PL_MAX_RANKS, PL_MAX_RANKS);
            json_decref(root);
            return -1;
        }
        snprintf(t->run, sizeof t->run, "%s", id);
        t->process = (int)proc;
        t->processes = (int)procs;
        t->first_rank = (int)first;
        t->part_ranks = (int)own;
    }
    size_t total = json_array_size(events), k = 0;
    t->ev = malloc((total ? total : 1) * sizeof *t->ev);
    t->marks = malloc((total ? total : 1) * sizeof *t->marks);
    t->metrics = malloc((total ? total : 1) * sizeof *t->metrics);
    t->memory = malloc((total ? total : 1) * sizeof *t->memory);
    t->pictures = malloc((total ? total : 1) * sizeof *t->pictures);
    if (!t->ev || !t->marks || !t->metrics || !t->memory || !t->pictures) {
        snprintf(err, cap, "%s: out of memory for %zu events", path, total);
        goto bad;
    }
    for (size_t i = 0; i < total; i++) {
        json_t *e = json_array_get(events, i), *ph = json_object_get(e, "ph");
        if (!json_is_object(e) || !json_is_string(ph)) {
            snprintf(err, cap, "%s: event %zu: not an object with a \"ph\"", path, i);
            goto bad;
        }
        const char *phase = json_string_value(ph);
        json_t *name = json_object_get(e, "name"), *cat = json_object_get(e, "cat");
        json_t *ts = json_object_get(e, "ts"), *args = json_object_get(e, "args");
        const char *catname = json_is_string(cat) ? json_string_value(cat) : "";
        if (!strcmp(phase, "M")) { /* metadata: only what the lab said */
            if (json_is_string(name) && !strcmp(json_string_value(name), "paralab"))
                read_lab(t, args);
            if (json_is_string(name) && !strcmp(json_string_value(name), "paralab matrix") &&
                read_matrix(t, args, path, i, err, cap))
                goto bad;
            if (json_is_string(name) && !strcmp(json_string_value(name), "paralab pipeline") &&
                read_pipeline(t, args, path, i, err, cap))
                goto bad;
            if (json_is_string(name) && !strcmp(json_string_value(name), "paralab mesh") &&
                read_mesh(t, args, path, i, err, cap))
                goto bad;
            if (json_is_string(name) && !strcmp(json_string_value(name), "paralab zero") &&
                read_zero(t, args, path, i, err, cap))
                goto bad;
            continue;
        }
        if (!strcmp(phase, "i") && !strcmp(catname, "narration")) { /* a narrated step */
            json_t *step = json_object_get(args, "step"), *text = json_object_get(args, "text");
            if (!json_is_number(ts) || !json_is_integer(step) || json_integer_value(step) < 1 ||
                json_integer_value(step) > 1000000 || !json_is_string(text)) {
                snprintf(err, cap,
                         "%s: event %zu: a narrated step needs a \"ts\", args.step (a whole "
                         "number from 1) and args.text (a string)",
                         path, i);
                goto bad;
            }
            viz_mark *m = &t->marks[t->nmarks];
            m->at = json_number_value(ts) * 1e-6;
            m->step = (int)json_integer_value(step);
            if (!(m->text = strdup(json_string_value(text)))) {
                snprintf(err, cap, "%s: out of memory", path);
                goto bad;
            }
            t->nmarks++;
            continue;
        }
        if (!strcmp(phase, "i") && !strcmp(catname, "picture")) { /* a lab's picture */
            long long step = -1;
            if (args && int_arg(args, "step", 0, 1000000, &step)) {
                snprintf(err, cap,
                         "%s: event %zu: a picture's args.step must be a whole number 0..1000000",
                         path, i);
                goto bad;
            }
            pl_picture *pic = malloc(sizeof *pic);
            if (!pic) {
                snprintf(err, cap, "%s: out of memory", path);
                goto bad;
            }
            if (read_picture(e, path, i, pic, err, cap)) {
                free(pic);
                goto bad;
            }
            t->pictures[t->npictures++] =
                (viz_picture_note){json_number_value(ts) * 1e-6, t->nmarks, (int)step, pic};
            continue;
        }
        if (!strcmp(phase, "C") && !strcmp(catname, "metric")) { /* a metric value */
            json_t *value = json_object_get(args, "value");
            if (!json_is_number(ts) || !json_is_string(name) ||
                !(json_is_number(value) || json_is_null(value))) {
                snprintf(err, cap,
                         "%s: event %zu: a metric needs a \"ts\", a \"name\" and args.value (a "
                         "number or null)",
                         path, i);
                goto bad;
            }
            viz_metric_note *m = &t->metrics[t->nmetrics++];
            m->at = json_number_value(ts) * 1e-6;
            m->value = json_is_number(value) ? json_number_value(value) : NAN;
            m->after = t->nmarks;
            snprintf(m->name, sizeof m->name, "%s", json_string_value(name));
            continue;
        }
        if (!strcmp(phase, "C") && !strcmp(catname, "memory")) { /* a rank's device memory */
            json_t *pid = json_object_get(e, "pid"), *used = json_object_get(args, "used");
            json_t *all = json_object_get(args, "total");
            if (!json_is_number(ts) || !json_is_integer(pid) || json_integer_value(pid) < 0 ||
                json_integer_value(pid) >= PL_MAX_RANKS || !json_is_number(used) ||
                !json_is_number(all) || json_number_value(used) < 0 || json_number_value(all) < 0) {
                snprintf(err, cap,
                         "%s: event %zu: a memory sample needs a \"ts\", a \"pid\" (0..%d) and "
                         "args.used and args.total (bytes, numbers >= 0)",
                         path, i, PL_MAX_RANKS - 1);
                goto bad;
            }
            if (not_own_rank(t, json_integer_value(pid), path, i, err, cap)) goto bad;
            viz_memory_note *m = &t->memory[t->nmemory++];
            m->at = json_number_value(ts) * 1e-6;
            m->used = json_number_value(used);
            m->total = json_number_value(all);
            m->rank = (int)json_integer_value(pid);
            m->after = t->nmarks;
            continue;
        }
        if (strcmp(phase, "X")) continue; /* another tool's instants, counters, flows */
        json_t *pid = json_object_get(e, "pid"), *tid = json_object_get(e, "tid");
        json_t *dur = json_object_get(e, "dur");
        const char *what = !json_is_string(name)                                ? "name"
                           : !json_is_string(cat)                               ? "cat"
                           : !json_is_integer(pid)                              ? "pid"
                           : !json_is_integer(tid)                              ? "tid"
                           : !json_is_number(ts)                                ? "ts"
                           : !json_is_number(dur) || json_number_value(dur) < 0 ? "dur"
                                                                                : NULL;
        if (what) {
            snprintf(err, cap, "%s: event %zu: \"%s\" is missing or not %s", path, i, what,
                     !strcmp(what, "name") || !strcmp(what, "cat") ? "a string"
                     : !strcmp(what, "dur")                        ? "a number >= 0"
                                                                   : "a number");
            goto bad;
        }
        int kind = kind_of(json_string_value(cat));
        /* the lane: args.lane; a file of an older paralab has the lane as tid */
        long long rank = json_integer_value(pid), lane = json_integer_value(tid), stream = -1;
        json_t *jl = json_object_get(args, "lane");
        if (jl) lane = json_is_integer(jl) ? json_integer_value(jl) : -1;
        if (kind < 0 || rank < 0 || rank >= PL_MAX_RANKS || lane < 0 || lane >= PL_NUM_LANES ||
            (args && int_arg(args, "stream", 0, 253, &stream))) {
            snprintf(err, cap,
                     "%s: event %zu: %s (cat \"%s\", pid %lld, lane %lld): allowed are the kinds "
                     "paralab writes, pid 0..%d, lane (args.lane, else tid) 0..%d and stream "
                     "0..253",
                     path, i,
                     kind < 0                           ? "unknown kind"
                     : rank < 0 || rank >= PL_MAX_RANKS ? "rank out of range"
                     : lane < 0 || lane >= PL_NUM_LANES ? "lane out of range"
                                                        : "stream out of range",
                     json_string_value(cat), rank, lane, PL_MAX_RANKS - 1, PL_NUM_LANES - 1);
            goto bad;
        }
        if (not_own_rank(t, rank, path, i, err, cap)) goto bad;
        pl_event x;
        memset(&x, 0, sizeof x);
        x.rank = (int32_t)rank;
        x.lane = (uint8_t)lane;
        x.kind = (uint8_t)kind;
        x.stream = (uint8_t)(stream + 1); /* 0: no stream */
        x.start = json_number_value(ts) * 1e-6;
        x.end = x.start + json_number_value(dur) * 1e-6;
        if (t->modeled) { /* the file's clock is the simulated GPU's: keep it as such */
            x.modeled_start = x.start;
            x.modeled_end = x.end;
        }
        snprintf(x.label, sizeof x.label, "%s", json_string_value(name));
        long long mb = -1, layer = -1, peer = -1, bytes = 0, step = 0, chunk = 0;
        if (args && (int_arg(args, "micro_batch", 0, 1 << 30, &mb) ||
                     int_arg(args, "step", 0, 1 << 30, &step) ||
                     int_arg(args, "layer", 0, 1 << 30, &layer) ||
                     int_arg(args, "peer", 0, PL_MAX_RANKS - 1, &peer) ||
                     int_arg(args, "bytes", 0, (long long)1 << 62, &bytes) ||
                     int_arg(args, "chunk", 0, 1 << 30, &chunk))) {
            snprintf(err, cap,
                     "%s: event %zu: an argument (micro_batch, step, layer, peer, bytes, chunk) is "
                     "not a whole number in range",
                     path, i);
            goto bad;
        }
        json_t *jg = args ? json_object_get(args, "group") : NULL;
        int group = 0;
        if (jg) {
            for (int gi = 1; gi < PL_NUM_GROUPS && json_is_string(jg); gi++)
                if (!strcmp(json_string_value(jg), pl_group_name((pl_group)gi))) group = gi;
            if (!group) {
                char said[40];
                if (json_is_string(jg))
                    snprintf(said, sizeof said, "\"%.32s\"", json_string_value(jg));
                else
                    snprintf(said, sizeof said, "(not a string)");
                snprintf(err, cap,
                         "%s: event %zu: args.group %s is not a group: use \"tp\", \"dp\" or "
                         "\"pp\"",
                         path, i, said);
                goto bad;
            }
        }
        x.group = (uint8_t)group;
        json_t *fl = args ? json_object_get(args, "flops") : NULL;
        x.flops = json_is_number(fl) ? json_number_value(fl) : 0;
        x.micro_batch = (int32_t)mb;
        x.step = (int32_t)step;
        x.layer = (int32_t)layer;
        x.peer = (int32_t)peer;
        x.chunk = (int32_t)chunk;
        x.bytes = (uint64_t)bytes;
        if (x.rank + 1 > t->nranks) t->nranks = x.rank + 1;
        t->ev[k++] = x;
    }
    char why[256];
    if (pl_viz_check_matrices(t->matrices, t->nmatrices, t->tp, 0, why, sizeof why) ||
        (t->pipeline.stages > 0 && pl_viz_check_pipeline(&t->pipeline, world, why, sizeof why)) ||
        (t->mesh.dp > 0 && pl_viz_check_mesh(&t->mesh, world, why, sizeof why)) ||
        (t->zero.ranks > 0 && pl_viz_check_zero(&t->zero, world, why, sizeof why))) {
        snprintf(err, cap, "%s: %s", path, why);
        goto bad;
    }
    json_decref(root);
    t->nev = k;
    if (t->processes) t->nranks = world; /* a part: its ranks are the world's */
    qsort(t->ev, t->nev, sizeof *t->ev, by_start);
    qsort(t->marks, (size_t)t->nmarks, sizeof *t->marks, by_time);
    return 0;
bad:
    json_decref(root);
    viz_trace_free(t);
    return -1;
}

int pl_viz_read_trace(const char *path, pl_event **out, size_t *n, int *nranks, int *modeled,
                      char *err, size_t cap)
{
    viz_trace t;
    *out = NULL;
    *n = 0;
    *nranks = *modeled = 0;
    if (viz_read_trace(path, &t, err, cap)) return -1;
    *out = t.ev;
    *n = t.nev;
    *nranks = t.nranks;
    *modeled = t.modeled;
    t.ev = NULL;
    viz_trace_free(&t);
    return 0;
}

/* ---- a multi-process run's parts, merged ------------------------------------------------ */

void viz_free_files(char **files, int n)
{
    for (int i = 0; files && i < n; i++) free(files[i]);
    free(files);
}

/* The files to read for paths[0..n-1]: the paths themselves, or for one
 * path that is not a file, its parts when its part 0 exists (that part's
 * otherData.processes says how many). 0, or -1 with err. */
static int resolve(const char *const *paths, int n, char ***files, int *nfiles, char *err,
                   size_t cap)
{
    struct stat st;
    char p0[4096];
    int parts = 0;
    if (n == 1 && stat(paths[0], &st) != 0 &&
        pl_trace_path_for_process(paths[0], 0, 2, p0, sizeof p0) == 0 && stat(p0, &st) == 0) {
        json_error_t je;
        json_t *root = json_load_file(p0, 0, &je);
        json_t *procs = json_object_get(json_object_get(root, "otherData"), "processes");
        parts = json_is_integer(procs) && json_integer_value(procs) >= 2 &&
                        json_integer_value(procs) <= PL_MAX_RANKS
                    ? (int)json_integer_value(procs)
                    : 0;
        json_decref(root);
        if (!parts) {
            snprintf(err, cap,
                     "%s: no such file, and %s (its part 0) does not say how many processes "
                     "wrote parts (otherData.processes, 2..%d)",
                     paths[0], p0, PL_MAX_RANKS);
            return -1;
        }
    }
    int m = parts ? parts : n;
    char **f = calloc((size_t)m, sizeof *f);
    for (int i = 0; f && i < m; i++) {
        char name[4096];
        if (parts && pl_trace_path_for_process(paths[0], i, parts, name, sizeof name)) {
            viz_free_files(f, m);
            snprintf(err, cap, "%s: a name too long for its parts", paths[0]);
            return -1;
        }
        if (!(f[i] = strdup(parts ? name : paths[i]))) {
            viz_free_files(f, m);
            f = NULL;
        }
    }
    if (!f) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    *files = f;
    *nfiles = m;
    return 0;
}

/* Moves the parts (read, sorted by process, checked) into one trace t:
 * process 0's lab, narration, metrics and pictures; every part's events
 * (merged by start, a tie: the lower process first) and memory samples. */
/* A viz_trace copied whole (t = part): its metadata's names point into the
 * struct they were read into; point them at t's own copies. */
static void own_names(viz_trace *t)
{
    for (int j = 0; j < t->nmatrices; j++) t->matrices[j].name = t->matrix_names[j];
    t->pipeline.schedule = t->pipeline_schedule;
    t->mesh.order = t->mesh_order;
}

static int merge(viz_trace *part, int n, viz_trace *t, char *err, size_t cap)
{
    size_t nev = 0, nmem = 0;
    for (int i = 0; i < n; i++) {
        nev += part[i].nev;
        nmem += part[i].nmemory;
    }
    pl_event *ev = malloc((nev ? nev : 1) * sizeof *ev);
    viz_memory_note *mem = malloc((nmem ? nmem : 1) * sizeof *mem);
    size_t *next = calloc((size_t)n, sizeof *next);
    if (!ev || !mem || !next) {
        free(ev);
        free(mem);
        free(next);
        snprintf(err, cap, "out of memory for %zu events", nev);
        return -1;
    }
    viz_trace *p0 = &part[0];
    int tagged = 0; /* process 0's events say their step */
    for (size_t i = 0; i < p0->nev && !tagged; i++) tagged = p0->ev[i].step > 0;
    for (int p = 1; p < n; p++) {
        int own = 0;
        for (size_t i = 0; i < part[p].nev && !own; i++) own = part[p].ev[i].step > 0;
        /* a part whose events do not say their step: process 0's step at
         * their start (its narration, on its own clock) */
        for (size_t i = 0; tagged && !own && i < part[p].nev; i++) {
            int k = 0;
            while (k < p0->nmarks && p0->marks[k].at <= part[p].ev[i].start) k++;
            part[p].ev[i].step = k ? p0->marks[k - 1].step : 0;
        }
    }
    for (size_t k = 0; k < nev; k++) { /* n-way merge: each part is by start */
        int best = -1;
        for (int p = 0; p < n; p++)
            if (next[p] < part[p].nev &&
                (best < 0 || part[p].ev[next[p]].start < part[best].ev[next[best]].start))
                best = p;
        ev[k] = part[best].ev[next[best]++];
    }
    size_t m = 0;
    for (int p = 0; p < n; p++)
        for (size_t i = 0; i < part[p].nmemory; i++) {
            viz_memory_note x = part[p].memory[i];
            /* after: the narrated steps before it; a part narrated
             * otherwise than process 0: process 0's steps by then */
            if (p && part[p].nmarks != p0->nmarks) {
                int k = 0;
                while (k < p0->nmarks && p0->marks[k].at <= x.at) k++;
                x.after = k;
            }
            mem[m++] = x;
        }
    free(next);
    *t = *p0; /* process 0's lab, narration, metrics, pictures */
    own_names(t);
    memset(p0, 0, sizeof *p0);
    free(t->ev);
    free(t->memory);
    t->ev = ev;
    t->nev = nev;
    t->memory = mem;
    t->nmemory = nmem;
    t->process = -1;
    t->first_rank = 0;
    return 0;
}

static int by_process(const void *x, const void *y)
{
    const viz_trace *a = x, *b = y;
    return (a->process > b->process) - (a->process < b->process);
}

int viz_read_traces(const char *const *paths, int n, viz_trace *t, char ***files, int *nfiles,
                    char *err, size_t cap)
{
    memset(t, 0, sizeof *t);
    char **f = NULL;
    int nf = 0;
    if (n < 1) {
        snprintf(err, cap, "no trace file given");
        return -1;
    }
    if (resolve(paths, n, &f, &nf, err, cap)) return -1;
    viz_trace *part = calloc((size_t)nf, sizeof *part);
    int index[PL_MAX_RANKS], owner[PL_MAX_RANKS], read = 0, rc = -1;
    if (!part) {
        snprintf(err, cap, "out of memory");
        goto done;
    }
    for (; read < nf; read++)
        if (viz_read_trace(f[read], &part[read], err, cap)) goto done;
    if (nf == 1) {
        if (part[0].processes > 1) {
            snprintf(err, cap,
                     "%s is process %d's part of a run of %d processes: give every part "
                     "(paralab-viz PART0 PART1 ...), or the name given to --trace",
                     f[0], part[0].process, part[0].processes);
            goto done;
        }
        *t = part[0];
        own_names(t);
        memset(&part[0], 0, sizeof part[0]);
        rc = 0;
        goto done;
    }
    const viz_trace *a = &part[0];
    for (int i = 0; i < nf; i++) {
        const viz_trace *b = &part[i];
        if (!b->processes) {
            snprintf(err, cap,
                     "%s: not a part of a multi-process run (no otherData.run): paralab-viz "
                     "merges the parts one run wrote (FILE.p0.json FILE.p1.json ...), or shows "
                     "one trace alone",
                     f[i]);
            goto done;
        }
        if (strcmp(a->run, b->run)) {
            snprintf(err, cap,
                     "%s is a part of run \"%s\", %s of run \"%s\": parts of different runs "
                     "cannot be merged",
                     f[0], a->run, f[i], b->run);
            goto done;
        }
        if (a->nranks != b->nranks || a->processes != b->processes) {
            snprintf(err, cap,
                     "%s is a part of a world of %d ranks in %d processes, %s of %d ranks in %d "
                     "processes: parts of different worlds cannot be merged",
                     f[0], a->nranks, a->processes, f[i], b->nranks, b->processes);
            goto done;
        }
        if (a->modeled != b->modeled) {
            snprintf(err, cap,
                     "%s is on the %s clock, %s on the %s: parts on different clocks cannot be "
                     "merged",
                     f[0], a->modeled ? "modeled" : "measured", f[i],
                     b->modeled ? "modeled" : "measured");
            goto done;
        }
    }
    /* (a part's nranks is the world's: otherData.ranks) */
    for (int p = 0; p < PL_MAX_RANKS; p++) index[p] = -1;
    for (int i = 0; i < nf; i++) {
        int p = part[i].process;
        if (index[p] >= 0) {
            snprintf(err, cap, "%s and %s are both process %d's part", f[index[p]], f[i], p);
            goto done;
        }
        index[p] = i;
    }
    if (nf != a->processes) {
        int miss = 0;
        while (miss < a->processes && index[miss] >= 0) miss++;
        snprintf(err, cap,
                 "run \"%s\" has %d processes, %d part%s given: process %d's part is missing",
                 a->run, a->processes, nf, nf == 1 ? "" : "s", miss);
        goto done;
    }
    for (int r = 0; r < PL_MAX_RANKS; r++) owner[r] = -1;
    for (int i = 0; i < nf; i++)
        for (int r = part[i].first_rank; r < part[i].first_rank + part[i].part_ranks; r++) {
            if (owner[r] >= 0) {
                snprintf(err, cap, "%s and %s both run rank %d", f[owner[r]], f[i], r);
                goto done;
            }
            owner[r] = i;
        }
    for (int r = 0; r < a->nranks; r++)
        if (owner[r] < 0) {
            snprintf(err, cap, "run \"%s\": no part runs rank %d of the world's %d", a->run, r,
                     a->nranks);
            goto done;
        }
    int world = a->nranks;
    qsort(part, (size_t)nf, sizeof *part, by_process);
    if (merge(part, nf, t, err, cap)) goto done;
    t->nranks = world;
    rc = 0;
done:
    for (int i = 0; i < read; i++) viz_trace_free(&part[i]);
    free(part);
    if (rc == 0 && files) {
        *files = f;
        *nfiles = nf;
    } else
        viz_free_files(f, nf);
    return rc;
}

int pl_viz_read_traces(const char *const *paths, int n, pl_event **out, size_t *nev, int *nranks,
                       int *modeled, char *err, size_t cap)
{
    viz_trace t;
    *out = NULL;
    *nev = 0;
    *nranks = *modeled = 0;
    if (viz_read_traces(paths, n, &t, NULL, NULL, err, cap)) return -1;
    *out = t.ev;
    *nev = t.nev;
    *nranks = t.nranks;
    *modeled = t.modeled;
    t.ev = NULL;
    viz_trace_free(&t);
    return 0;
}

/* ---- the cursor ------------------------------------------------------------------------- */

int viz_replay_step_of(double t, const double *mark_at, int nmarks)
{
    int lo = 0, hi = nmarks; /* the first mark after t */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (mark_at[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 ? lo : 1;
}

static int by_step(const void *x, const void *y)
{
    const viz_item *a = x, *b = y;
    if (a->step != b->step) return a->step < b->step ? -1 : 1;
    if (a->at != b->at) return a->at < b->at ? -1 : 1;
    if (a->metric != b->metric) return a->metric - b->metric;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* The part (1..VIZ_REPLAY_PARTS) of event i of n, in a trace without narration. */
static int part(size_t i, size_t n) { return 1 + (int)(i * VIZ_REPLAY_PARTS / (n ? n : 1)); }

/* The mark (1..nmarks) of narrated step `step`; 1 for an event recorded
 * before the first step (step 0). */
static int mark_of_step(const viz_trace *t, int step)
{
    for (int k = t->nmarks; k > 0; k--)
        if (t->marks[k - 1].step <= step) return k;
    return 1;
}

/* The step a note (a metric value, a memory sample) is shown in: the step
 * it was noted in (after: the narrated steps before it in the file), or in
 * a trace without narration the part of the last event that started
 * before it. */
static int note_step(const viz_trace *t, int after, double at)
{
    if (t->nmarks) return after > 0 ? after : 1;
    size_t lo = 0, hi = t->nev;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->ev[mid].start <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return part(lo ? lo - 1 : 0, t->nev);
}

int viz_replay_plan(const viz_trace *t, viz_item **items, size_t *n, size_t **first)
{
    int nsteps = t->nmarks > 0 ? t->nmarks : VIZ_REPLAY_PARTS;
    size_t total = t->nev + t->nmetrics + t->nmemory + t->npictures;
    viz_item *it = malloc((total ? total : 1) * sizeof *it);
    size_t *f = calloc((size_t)nsteps + 1, sizeof *f);
    double *at = malloc(((size_t)t->nmarks + 1) * sizeof *at);
    if (!it || !f || !at) {
        free(it);
        free(f);
        free(at);
        return -1;
    }
    for (int k = 0; k < t->nmarks; k++) at[k] = t->marks[k].at;
    int tagged = 0; /* the file says each event's step */
    for (size_t i = 0; i < t->nev && !tagged; i++) tagged = t->ev[i].step > 0;
    for (size_t i = 0; i < t->nev; i++) {
        double s = t->ev[i].start; /* the file's clock */
        /* the step the event was recorded in (args.step), else the last
         * narration before it started (a file without steps in its events) */
        int k = t->nmarks && tagged ? mark_of_step(t, t->ev[i].step) : 0;
        it[i] = (viz_item){.step = !t->nmarks ? part(i, t->nev)
                                   : k        ? k
                                              : viz_replay_step_of(s, at, t->nmarks),
                           .metric = 0,
                           .index = i,
                           .at = s};
    }
    for (size_t i = 0; i < t->nmetrics; i++) {
        const viz_metric_note *m = &t->metrics[i];
        it[t->nev + i] =
            (viz_item){.step = note_step(t, m->after, m->at), .metric = 1, .index = i, .at = m->at};
    }
    for (size_t i = 0; i < t->nmemory; i++) {
        const viz_memory_note *m = &t->memory[i];
        it[t->nev + t->nmetrics + i] =
            (viz_item){.step = note_step(t, m->after, m->at), .metric = 2, .index = i, .at = m->at};
    }
    for (size_t i = 0; i < t->npictures; i++) {
        const viz_picture_note *x = &t->pictures[i];
        /* the step it says (a step begun before its narration is noted
         * shows its picture under it), else as the other notes */
        int k =
            t->nmarks && x->step >= 0 ? mark_of_step(t, x->step) : note_step(t, x->after, x->at);
        it[t->nev + t->nmetrics + t->nmemory + i] =
            (viz_item){.step = k, .metric = 3, .index = i, .at = x->at};
    }
    qsort(it, total, sizeof *it, by_step);
    for (size_t i = 0; i < total; i++) f[it[i].step]++; /* counts, then starts */
    for (int k = 1; k <= nsteps; k++) f[k] += f[k - 1];
    free(at);
    *items = it;
    *n = total;
    *first = f;
    return nsteps;
}

int viz_replay_apply(viz_model *m, const viz_trace *t, const viz_item *it)
{
    if (it->metric == 0) return viz_model_add(m, &t->ev[it->index]);
    pl_note n = {.kind = PL_NOTE_METRIC};
    if (it->metric == 1) {
        const viz_metric_note *x = &t->metrics[it->index];
        n.value = x->value;
        n.at = n.modeled_at = x->at; /* the file's clock, its events' */
        snprintf(n.name, sizeof n.name, "%s", x->name);
    } else if (it->metric == 2) {
        const viz_memory_note *x = &t->memory[it->index];
        n = (pl_note){.kind = PL_NOTE_MEMORY, .rank = x->rank, .value = x->used, .total = x->total};
    } else { /* a picture, under the number of the step the replay shows it in */
        const viz_picture_note *x = &t->pictures[it->index];
        int k = it->step;
        n = (pl_note){.kind = PL_NOTE_PICTURE,
                      .step = t->nmarks && k >= 1 && k <= t->nmarks ? t->marks[k - 1].step : k,
                      .at = x->at,
                      .modeled_at = x->at,
                      .pic = x->pic};
    }
    return viz_model_note(m, &n); /* as a live run's notes go in */
}

int viz_replay_done(viz_cursor c, int nsteps) { return c.step >= nsteps && c.f >= 1; }

size_t viz_replay_shown(const size_t *first, int nsteps, viz_cursor c)
{
    if (c.step < 1) return 0;
    if (c.step > nsteps || viz_replay_done(c, nsteps)) return first[nsteps];
    size_t a = first[c.step - 1], m = first[c.step] - a;
    double part = c.f >= VIZ_REPLAY_REVEAL ? 1 : c.f < 0 ? 0 : c.f / VIZ_REPLAY_REVEAL;
    size_t k = (size_t)ceil(part * (double)m);
    return a + (k < m ? k : m);
}

void viz_replay_play(viz_cursor *c, int nsteps, double seconds, double speed)
{
    if (seconds <= 0 || speed <= 0) return;
    c->f += seconds * speed;
    while (c->f >= 1 && c->step < nsteps) {
        c->f -= 1;
        c->step++;
    }
    if (c->step >= nsteps && c->f > 1) c->f = 1;
}

void viz_replay_next(viz_cursor *c, int nsteps)
{
    if (c->step < nsteps) {
        c->step++;
        c->f = VIZ_REPLAY_REVEAL;
    } else
        c->f = 1;
}

/* ---- paralab-viz --check ---------------------------------------------------------------- */

typedef struct {
    long long pid, tid, start, end; /* ns */
    const char *name;
} slice;

static int by_track(const void *x, const void *y)
{
    const slice *a = x, *b = y;
    if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return (a->end < b->end) - (a->end > b->end); /* the longer (the parent) first */
}

int pl_viz_check_trace(const char *path, char *msg, size_t cap)
{
    return pl_viz_check_traces(&path, 1, msg, cap);
}

int pl_viz_check_traces(const char *const *paths, int nfiles, char *msg, size_t cap)
{
    viz_trace t;
    char **files = NULL;
    int nf = 0;
    /* the whole file (or the parts, merged), as a replay reads it */
    if (viz_read_traces(paths, nfiles, &t, &files, &nf, msg, cap)) return 2;
    const char *path = files[0];
    size_t total = 0, n = 0, i;
    json_t **roots = calloc((size_t)nf, sizeof *roots);
    for (int f = 0; roots && f < nf; f++) {
        json_error_t je;
        roots[f] = json_load_file(files[f], 0, &je);
        total += json_array_size(json_object_get(roots[f], "traceEvents"));
    }
    slice *s = malloc((total ? total : 1) * sizeof *s);
    int loaded = roots != NULL;
    for (int f = 0; roots && f < nf; f++) loaded &= roots[f] != NULL;
    if (!loaded || !s) {
        snprintf(msg, cap, "%s: out of memory", path);
        free(s);
        for (int f = 0; roots && f < nf; f++) json_decref(roots[f]);
        free(roots);
        viz_free_files(files, nf);
        viz_trace_free(&t);
        return 2;
    }
    /* the parts' ranks are disjoint: their tracks too */
    for (int f = 0; f < nf; f++) {
        json_t *events = json_object_get(roots[f], "traceEvents");
        json_t *e;
        json_array_foreach(events, i, e)
        {
            if (strcmp(json_string_value(json_object_get(e, "ph")), "X")) continue;
            double ts = json_number_value(json_object_get(e, "ts"));
            double dur = json_number_value(json_object_get(e, "dur"));
            /* the file has whole nanoseconds: compare them exactly */
            s[n++] =
                (slice){json_integer_value(json_object_get(e, "pid")),
                        json_integer_value(json_object_get(e, "tid")), llround(ts * 1e3),
                        llround((ts + dur) * 1e3), json_string_value(json_object_get(e, "name"))};
        }
    }
    qsort(s, n, sizeof *s, by_track);
    /* per track, a stack of the slices open at each start: a slice must end
     * no later than the innermost one still open */
    size_t *open = malloc((n ? n : 1) * sizeof *open), depth = 0, bad = 0, tracks = 0;
    slice first[2] = {{0}, {0}};
    for (size_t k = 0; open && k < n; k++) {
        if (!k || s[k].pid != s[k - 1].pid || s[k].tid != s[k - 1].tid) {
            depth = 0;
            tracks++;
        }
        while (depth && s[open[depth - 1]].end <= s[k].start) depth--;
        if (depth && s[k].end > s[open[depth - 1]].end && bad++ == 0) {
            first[0] = s[open[depth - 1]];
            first[1] = s[k];
        }
        open[depth++] = k;
    }
    int rc = 0;
    if (!open) {
        snprintf(msg, cap, "%s: out of memory", path);
        rc = 2;
    } else if (bad) {
        snprintf(msg, cap,
                 "%s: %zu pair%s of slices overlap without nesting on one track; the first: "
                 "rank %lld, tid %lld: \"%s\" (%.3f to %.3f us) and \"%s\" (%.3f to %.3f us)",
                 path, bad, bad == 1 ? "" : "s", first[0].pid, first[0].tid, first[0].name,
                 first[0].start / 1e3, first[0].end / 1e3, first[1].name, first[1].start / 1e3,
                 first[1].end / 1e3);
        rc = 1;
    } else {
        char merged[160] = "";
        if (nf > 1) {
            /* the ranks with events: a merged trace shows every rank */
            unsigned char has[PL_MAX_RANKS] = {0};
            int with = 0, none = -1;
            for (size_t k = 0; k < t.nev; k++) has[t.ev[k].rank] = 1;
            for (int r = 0; r < t.nranks; r++) {
                with += has[r];
                if (!has[r] && none < 0) none = r;
            }
            int len = snprintf(merged, sizeof merged,
                               " (%d parts of run \"%s\", merged: events of %d of the world's %d "
                               "rank%s",
                               nf, t.run, with, t.nranks, t.nranks == 1 ? "" : "s");
            if (len > 0 && (size_t)len < sizeof merged)
                snprintf(merged + len, sizeof merged - (size_t)len,
                         none < 0 ? ")" : "; none of rank %d)", none);
        }
        snprintf(msg, cap,
                 "%s%s: %zu slice%s on %zu track%s of %d rank%s, every track's slices nested or "
                 "apart; %d narrated step%s, %zu metric value%s, %zu picture%s",
                 path, merged, n, n == 1 ? "" : "s", tracks, tracks == 1 ? "" : "s", t.nranks,
                 t.nranks == 1 ? "" : "s", t.nmarks, t.nmarks == 1 ? "" : "s", t.nmetrics,
                 t.nmetrics == 1 ? "" : "s", t.npictures, t.npictures == 1 ? "" : "s");
    }
    free(open);
    free(s);
    for (int f = 0; f < nf; f++) json_decref(roots[f]);
    free(roots);
    viz_free_files(files, nf);
    viz_trace_free(&t);
    return rc;
}
