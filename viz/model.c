/* model.c — the world as the events tell it (see vizint.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/picture.h"
#include "paralab/pipeline.h"
#include "vizint.h"

void viz_model_init(viz_model *m, int nranks)
{
    memset(m, 0, sizeof *m);
    m->nranks = nranks < 0 ? 0 : nranks > PL_MAX_RANKS ? PL_MAX_RANKS : nranks;
    m->t_lo[0] = m->t_lo[1] = 1e300;
    m->t_hi[0] = m->t_hi[1] = -1e300;
}

void viz_model_free(viz_model *m)
{
    for (int r = 0; r < PL_MAX_RANKS; r++)
        for (int l = 0; l < PL_NUM_LANES; l++) {
            free(m->lanes[r][l].ev);
            free(m->lanes[r][l].ck);
            free(m->lanes[r][l].coll);
        }
    for (int r = 0; r < PL_MAX_RANKS; r++)
        for (int k = 0; k < VIZ_STREAM_LANES; k++) {
            free(m->streams[r][k].ev);
            free(m->streams[r][k].ck);
            free(m->streams[r][k].coll);
        }
    free(m->pp_cache);
    for (int k = 0; k < m->nseries; k++) {
        free(m->series[k].v);
        free(m->series[k].seq);
    }
    for (int r = 0; r < PL_MAX_RANKS; r++)
        for (int k = 0; k < VIZ_ZMEM_PARTS; k++) free(m->zmem[r][k]);
    for (size_t i = 0; i < m->npics; i++) {
        pl_picture_free(m->pics[i].pic);
        free(m->pics[i].pic);
    }
    free(m->pics);
    memset(m, 0, sizeof *m);
}

double viz_ev_start(const pl_event *e, int modeled)
{
    return modeled && (e->modeled_start != 0 || e->modeled_end != 0) ? e->modeled_start : e->start;
}

double viz_ev_end(const pl_event *e, int modeled)
{
    return modeled && (e->modeled_start != 0 || e->modeled_end != 0) ? e->modeled_end : e->end;
}

/* Inserts e into L, by start on the measured clock: events mostly arrive
 * in order, and an enclosing collective (reported after its steps) moves
 * back a little. 0, or -1 when out of memory. */
static int lane_insert(viz_lane *L, const pl_event *e)
{
    if (L->n == L->cap) {
        size_t cap = L->cap ? L->cap * 2 : 256;
        pl_event *p = realloc(L->ev, cap * sizeof *p);
        if (!p) return -1;
        L->ev = p;
        L->cap = cap;
    }
    size_t i = L->n;
    while (i > 0 && L->ev[i - 1].start > e->start) i--;
    memmove(&L->ev[i + 1], &L->ev[i], (L->n - i) * sizeof *L->ev);
    L->ev[i] = *e;
    L->n++;
    if (i < L->dirty || L->dirty > L->swept) L->dirty = i; /* the busy sweep: from here */
    /* the collectives' places: those after i move one on (few: an event
     * lands near the end), and a collective takes its own */
    size_t k = L->ncoll;
    while (k > 0 && L->coll[k - 1] >= i) L->coll[--k]++;
    if (e->kind == PL_EV_COLLECTIVE) {
        if (L->ncoll == L->capcoll) {
            size_t cap = L->capcoll ? 2 * L->capcoll : 64;
            size_t *c = realloc(L->coll, cap * sizeof *c);
            if (!c) return -1;
            L->coll = c;
            L->capcoll = cap;
        }
        memmove(&L->coll[k + 1], &L->coll[k], (L->ncoll - k) * sizeof *L->coll);
        L->coll[k] = i;
        L->ncoll++;
    }
    return 0;
}

double viz_lane_busy(const viz_lane *cL, int modeled)
{
    viz_lane *L = (viz_lane *)cL; /* the sweep's state is a cache */
    if (L->dirty < L->swept) {    /* an event landed in what was swept: from its checkpoint */
        size_t k = L->dirty / VIZ_BUSY_EVERY;
        if (k < L->nck) {
            L->covered[0] = L->ck[k][0], L->busy[0] = L->ck[k][1];
            L->covered[1] = L->ck[k][2], L->busy[1] = L->ck[k][3];
            L->swept = k * VIZ_BUSY_EVERY;
            L->nck = k;
        } else
            L->swept = 0;
    }
    if (L->swept == 0) {
        L->covered[0] = L->covered[1] = -1e300;
        L->busy[0] = L->busy[1] = 0;
        L->nck = 0;
    }
    for (size_t i = L->swept; i < L->n; i++) {
        if (i % VIZ_BUSY_EVERY == 0) { /* the state before event i */
            if (L->nck == L->capck) {
                size_t cap = L->capck ? 2 * L->capck : 16;
                double(*ck)[4] = realloc(L->ck, cap * sizeof *ck);
                if (!ck) { /* no checkpoint: a later insertion sweeps from the start */
                    L->swept = i;
                    goto keep;
                }
                L->ck = ck;
                L->capck = cap;
            }
            double *c = L->ck[L->nck++];
            c[0] = L->covered[0], c[1] = L->busy[0], c[2] = L->covered[1], c[3] = L->busy[1];
        }
    keep:;
        const pl_event *e = &L->ev[i];
        if (e->kind == PL_EV_COLLECTIVE || e->kind == PL_EV_RING_STEP) continue;
        for (int c = 0; c < 2; c++) {
            double a = viz_ev_start(e, c), b = viz_ev_end(e, c);
            if (b > L->covered[c]) {
                L->busy[c] += b - (a > L->covered[c] ? a : L->covered[c]);
                L->covered[c] = b;
            }
        }
    }
    L->swept = L->dirty = L->n;
    return L->busy[modeled ? 1 : 0];
}

int viz_model_add(viz_model *m, const pl_event *e)
{
    if (e->rank < 0 || e->rank >= PL_MAX_RANKS || e->lane >= PL_NUM_LANES) return 0;
    if (e->rank >= m->nranks) m->nranks = e->rank + 1;
    if (lane_insert(&m->lanes[e->rank][e->lane], e)) return -1;
    if (e->stream > 0) { /* also on its stream's lane (the last one takes the rest) */
        int k = e->stream - 1 < VIZ_STREAM_LANES ? e->stream - 1 : VIZ_STREAM_LANES - 1;
        if (lane_insert(&m->streams[e->rank][k], e)) return -1;
        if (k + 1 > m->nstreams[e->rank]) m->nstreams[e->rank] = k + 1;
    }
    m->nevents++;
    m->version++;
    if (e->kind < sizeof m->nkind / sizeof *m->nkind) m->nkind[e->kind]++;
    if (e->rank == 0 && e->lane == PL_LANE_COMPUTE && e->kind == PL_EV_BACKWARD &&
        e->micro_batch < 0 && e->layer < 0)
        m->whole_backwards0++; /* the topology's buckets look for the latest */
    if (e->kind == PL_EV_COLLECTIVE && e->rank == 0) { /* the metrics pane's */
        struct viz_colls *k = &m->colls;
        k->bytes += (double)e->bytes;
        k->calls++;
        k->newest_step = e->step > k->newest_step ? e->step : k->newest_step;
        for (int c = 0; c < 2; c++) {
            double s = viz_ev_start(e, c);
            k->secs[c] += viz_ev_end(e, c) - s;
            int tiny = e->bytes <= VIZ_TINY_COLL;
            pl_event *p = tiny ? &k->tiny[c] : &k->last[c];
            int *have = tiny ? &k->have_tiny[c] : &k->have_last[c];
            if (!*have || s >= viz_ev_start(p, c)) *p = *e, *have = 1;
        }
    }
    if (e->group > PL_GROUP_NONE && e->group < PL_NUM_GROUPS &&
        (e->kind == PL_EV_COLLECTIVE || e->kind == PL_EV_RING_STEP || e->kind == PL_EV_SEND ||
         e->kind == PL_EV_RECV)) {
        m->ngroup[e->group]++;
        m->nkind_grouped[e->kind]++;
    }
    if (e->modeled_start != 0 || e->modeled_end != 0) m->have_modeled = 1;
    for (int c = 0; c < 2; c++) {
        double s = viz_ev_start(e, c), t = viz_ev_end(e, c);
        if (s < m->t_lo[c]) m->t_lo[c] = s;
        if (t > m->t_hi[c]) m->t_hi[c] = t;
    }
    /* the bytes over each link: what the comm lane says moved (ring steps
     * and receives name the peer they copied from) */
    if (e->peer >= 0 && e->peer < PL_MAX_RANKS &&
        (e->kind == PL_EV_RING_STEP || e->kind == PL_EV_RECV))
        m->link[e->peer][e->rank] += e->bytes;
    return 0;
}

/* The stage of a metric named "activations s<r>" (r 0..PL_MAX_RANKS-1,
 * in decimal without leading zeros), or -1. */
static int activation_stage(const char *name)
{
    static const char pre[] = "activations s";
    if (strncmp(name, pre, sizeof pre - 1)) return -1;
    const char *d = name + sizeof pre - 1;
    if (!*d || (d[0] == '0' && d[1]) || strlen(d) > 2) return -1;
    int r = 0;
    for (; *d; d++) {
        if (*d < '0' || *d > '9') return -1;
        r = r * 10 + (*d - '0');
    }
    return r < PL_MAX_RANKS ? r : -1;
}

int viz_model_push_named(viz_model *m, const char *name, double value)
{
    return viz_model_push_timed(m, name, value, 0, 0);
}

int viz_model_push_timed(viz_model *m, const char *name, double value, double at, double modeled_at)
{
    if (!name) name = "";
    int zr, part = viz_zero_metric(name, &zr);
    if (part >= 0) { /* a ZeRO rank's bytes of one part: its bar, no curve */
        if (value != value) return 0;
        size_t *n = &m->nzmem[zr][part], *cap = &m->capzmem[zr][part];
        if (*n == *cap) {
            size_t c = *cap ? *cap * 2 : 64;
            struct viz_zmem *p = realloc(m->zmem[zr][part], c * sizeof *p);
            if (!p) return -1;
            m->zmem[zr][part] = p;
            *cap = c;
        }
        m->zmem[zr][part][(*n)++] = (struct viz_zmem){{at, modeled_at}, value};
        return 0;
    }
    int st = activation_stage(name);
    if (st >= 0) { /* a stage's activations: its gauge, no curve */
        if (value != value) return 0;
        m->act_now[st] = value;
        if (!m->act_seen[st] || value > m->act_peak[st]) m->act_peak[st] = value;
        m->act_seen[st] = 1;
        return 0;
    }
    int k = 0;
    while (k < m->nseries && strcmp(m->series[k].name, name)) k++;
    if (k == m->nseries) {
        if (k == (int)(sizeof m->series / sizeof *m->series)) return -1;
        memset(&m->series[k], 0, sizeof m->series[k]);
        snprintf(m->series[k].name, sizeof m->series[k].name, "%s", name);
        m->nseries++;
    }
    struct viz_series *S = &m->series[k];
    if (S->n == S->cap) {
        size_t cap = S->cap ? S->cap * 2 : 64;
        double *v = realloc(S->v, cap * sizeof *v);
        if (!v) return -1;
        S->v = v;
        size_t *q = realloc(S->seq, cap * sizeof *q);
        if (!q) return -1;
        S->seq = q;
        S->cap = cap;
    }
    S->v[S->n] = value;
    S->seq[S->n++] = ++m->pushes;
    return 0;
}

int viz_model_push_metric(viz_model *m, double value)
{
    return viz_model_push_named(m, m->metric_name, value);
}

/* A picture note: its deep copy at the end of m->pics. 0, or -1 out of memory. */
static int add_picture(viz_model *m, const pl_note *n)
{
    if (m->npics == m->cappics) {
        size_t cap = m->cappics ? m->cappics * 2 : 16;
        struct viz_pic *p = realloc(m->pics, cap * sizeof *p);
        if (!p) return -1;
        m->pics = p;
        m->cappics = cap;
    }
    pl_picture *c = malloc(sizeof *c);
    if (!c || pl_picture_copy(c, n->pic)) {
        free(c);
        return -1;
    }
    m->pics[m->npics++] =
        (struct viz_pic){c, {n->at, n->modeled_at}, pl_trace_now(), n->step > 0 ? n->step : 0};
    return 0;
}

int viz_model_note(viz_model *m, const pl_note *n)
{
    switch (n->kind) {
    case PL_NOTE_METRIC:
        return viz_model_push_timed(m, n->name, n->value, n->at, n->modeled_at);
    case PL_NOTE_MEMORY:
        if (n->rank < 0 || n->rank >= PL_MAX_RANKS) return 0;
        m->mem_used[n->rank] = n->value;
        m->mem_total[n->rank] = n->total;
        return 0;
    case PL_NOTE_PICTURE:
        return n->pic ? add_picture(m, n) : 0;
    default: /* a step: a live run narrates from the player, a replay from its marks */
        return 0;
    }
}

int viz_model_pictures(const viz_model *m, double t, int modeled, const struct pl_picture **out,
                       int max, double *since, int *step)
{
    int c = modeled ? 1 : 0, best = 0, found = 0;
    /* the newest step that noted any at or before t (on a tie, the later note's) */
    for (size_t i = 0; i < m->npics; i++)
        if (m->pics[i].at[c] <= t && (!found || m->pics[i].step >= best)) {
            best = m->pics[i].step;
            found = 1;
        }
    int n = 0;
    double got = 0;
    for (size_t i = 0; found && i < m->npics; i++) {
        const struct viz_pic *x = &m->pics[i];
        if (x->step != best || x->at[c] > t) continue;
        if (n < max && out) out[n] = x->pic;
        if (x->got > got) got = x->got;
        n++;
    }
    if (since) *since = got;
    if (step) *step = found ? best : 0;
    return n;
}

size_t viz_model_take(viz_model *m, pl_trace *t, pl_trace_writer *w, pl_event *buf, size_t cap)
{
    if (!t) return 0;
    size_t n, got = 0;
    while ((n = pl_trace_drain(t, buf, cap)) > 0) {
        if (w) pl_trace_writer_add(w, buf, n);
        for (size_t i = 0; i < n; i++) viz_model_add(m, &buf[i]);
        got += n;
    }
    pl_note *notes;
    size_t k = pl_trace_take_notes(t, &notes);
    if (w) pl_trace_writer_add_notes(w, notes, k); /* the steps, metrics and memory, for the file */
    for (size_t i = 0; i < k; i++) viz_model_note(m, &notes[i]);
    pl_trace_free_notes(notes, k);
    return got + k;
}

/* ---- the transcript ---------------------------------------------------------------------- */

void viz_transcript_free(viz_transcript *t)
{
    free(t->buf);
    free(t->line);
    free(t->narr);
    memset(t, 0, sizeof *t);
}

static int tr_reserve(viz_transcript *t, size_t bytes)
{
    if (t->len + bytes > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + bytes) cap *= 2;
        char *b = realloc(t->buf, cap);
        if (!b) return -1;
        t->buf = b;
        t->cap = cap;
    }
    return 0;
}

/* A new line, empty, NUL-terminated. */
static int tr_line(viz_transcript *t, int narr)
{
    if (t->nlines == t->capl) {
        size_t cap = t->capl ? t->capl * 2 : 256;
        size_t *l = realloc(t->line, cap * sizeof *l);
        if (!l) return -1;
        t->line = l;
        unsigned char *n = realloc(t->narr, cap);
        if (!n) return -1;
        t->narr = n;
        t->capl = cap;
    }
    if (tr_reserve(t, 1)) return -1;
    t->line[t->nlines] = t->len;
    t->narr[t->nlines++] = (unsigned char)narr;
    t->buf[t->len++] = '\0';
    return 0;
}

/* c at the end of the last line. */
static int tr_char(viz_transcript *t, char c)
{
    if (tr_reserve(t, 1)) return -1;
    t->buf[t->len - 1] = c;
    t->buf[t->len++] = '\0';
    return 0;
}

int viz_transcript_output(viz_transcript *t, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!t->open) {
            if (tr_line(t, 0)) return -1;
            t->open = 1;
        }
        if (s[i] == '\n')
            t->open = 0;
        else if (tr_char(t, s[i]))
            return -1;
    }
    return 0;
}

int viz_transcript_step(viz_transcript *t, int step, const char *text)
{
    char head[24];
    snprintf(head, sizeof head, "[%d] ", step);
    t->open = 0; /* a line the lab left unfinished ends here */
    size_t first = t->nlines;
    if (tr_line(t, 1)) return -1;
    for (const char *p = head; *p; p++)
        if (tr_char(t, *p)) return -1;
    for (const char *p = text; *p; p++)
        if (*p == '\n' ? tr_line(t, 1) : tr_char(t, *p)) return -1;
    t->step_line = first;
    t->step = step;
    return 0;
}

static const pl_event *lane_at(const viz_lane *L, double t, int modeled);

const pl_event *viz_model_at(const viz_model *m, int rank, int lane, double t, int modeled)
{
    if (rank < 0 || rank >= PL_MAX_RANKS || lane < 0 || lane >= PL_NUM_LANES) return NULL;
    return lane_at(&m->lanes[rank][lane], t, modeled);
}

const pl_event *viz_model_at_stream(const viz_model *m, int rank, int k, double t, int modeled)
{
    if (rank < 0 || rank >= PL_MAX_RANKS || k < 0 || k >= VIZ_STREAM_LANES) return NULL;
    return lane_at(&m->streams[rank][k], t, modeled);
}

static const pl_event *lane_at(const viz_lane *L, double t, int modeled)
{
    if (!L->n) return NULL;
    /* The events are in measured-start order; on the modeled clock the
     * order of a rank's events is the same (its stream runs them in order),
     * so one binary search serves both: the last event starting at or
     * before t, then back to the first that still covers t. */
    size_t lo = 0, hi = L->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (viz_ev_start(&L->ev[mid], modeled) <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* What a student wants to see: a forward, backward or optimizer step
     * over the kernels inside it; a ring step or copy over the collective
     * around it; else the innermost (latest start). */
    const pl_event *best = NULL;
    int best_rank = -1;
    for (size_t i = lo, k = 0; i > 0 && k < 64; i--, k++) {
        const pl_event *e = &L->ev[i - 1];
        if (viz_ev_end(e, modeled) < t || viz_ev_start(e, modeled) > t) continue;
        int rank = e->kind == PL_EV_FORWARD || e->kind == PL_EV_BACKWARD ||
                           e->kind == PL_EV_OPTIMIZER || e->kind == PL_EV_WEIGHT_GRAD
                       ? 2
                   : e->kind == PL_EV_COLLECTIVE ? 0
                                                 : 1;
        if (rank > best_rank) {
            best = e;
            best_rank = rank;
        }
        if (best_rank == 2) break;
    }
    return best;
}

/* ---- the matrices of the shards pane ------------------------------------------------------ */

int pl_viz_check_matrices(const pl_viz_matrix *m, int n, int tp, int nranks, char *err, size_t cap)
{
    if (n == 0) return 0;
    if (n < 0 || n > PL_VIZ_MAX_MATRICES || !m) {
        snprintf(err, cap, "shards pane: %d matrices%s: allowed 0..%d", n, m ? "" : " (none given)",
                 PL_VIZ_MAX_MATRICES);
        return -1;
    }
    if (tp < 1 || tp > PL_MAX_RANKS) {
        snprintf(err, cap, "shards pane: tp %d: allowed 1..%d", tp, PL_MAX_RANKS);
        return -1;
    }
    if (nranks > 0 && nranks % tp) {
        snprintf(err, cap, "shards pane: tp %d does not divide the world's %d ranks", tp, nranks);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const pl_viz_matrix *x = &m[i];
        size_t len = x->name ? strlen(x->name) : 0;
        const char *why = NULL;
        char bad[96] = "";
        if (len < 1 || len > 15)
            why = "a name of 1 to 15 bytes";
        else if (x->rows < 1 || x->rows > 1 << 30 || x->cols < 1 || x->cols > 1 << 30) {
            snprintf(bad, sizeof bad, "%dx%d", x->rows, x->cols);
            why = "rows and cols 1..2^30";
        } else if (x->split != 'c' && x->split != 'r' && x->split != 0) {
            snprintf(bad, sizeof bad, "split %d", x->split);
            why = "split 'c' (column-parallel), 'r' (row-parallel) or 0 (replicated)";
        } else if (x->split == 'c' && x->cols % tp) {
            snprintf(bad, sizeof bad, "%d columns", x->cols);
            why = "columns a multiple of tp, to cut into tp column shards";
        } else if (x->split == 'r' && x->rows % tp) {
            snprintf(bad, sizeof bad, "%d rows", x->rows);
            why = "rows a multiple of tp, to cut into tp row shards";
        } else if (x->padded_cols < 0 || x->padded_cols >= x->cols) {
            snprintf(bad, sizeof bad, "padded_cols %d", x->padded_cols);
            why = "padded_cols 0..cols-1";
        }
        for (int j = 0; j < i && !why; j++)
            if (m[j].name && !strcmp(m[j].name, x->name)) why = "a name no other matrix has";
        if (why) {
            snprintf(err, cap, "shards pane: matrix %d (%s)%s%s, tp %d: allowed are %s", i,
                     x->name ? x->name : "no name", *bad ? ": " : "", bad, tp, why);
            return -1;
        }
    }
    return 0;
}

int viz_model_set_matrices(viz_model *m, const pl_viz_matrix *mx, int n, int tp, char *err,
                           size_t cap)
{
    m->version++; /* what is cached from the events depends on it too */
    if (pl_viz_check_matrices(mx, n, tp, 0, err, cap)) return -1;
    m->nmatrices = n;
    m->tp = n ? tp : 0;
    for (int i = 0; i < n; i++) {
        struct viz_matrix *x = &m->matrices[i];
        snprintf(x->name, sizeof x->name, "%s", mx[i].name);
        x->rows = mx[i].rows;
        x->cols = mx[i].cols;
        x->split = mx[i].split;
        x->padded_cols = mx[i].padded_cols;
    }
    return 0;
}

int viz_matrix_index(const viz_model *m, const char *label)
{
    for (int i = 0; i < m->nmatrices; i++)
        if (!strcmp(m->matrices[i].name, label)) return i;
    return -1;
}

static int is_matmul(const viz_model *m, const pl_event *e)
{
    return m->nmatrices && (e->kind == PL_EV_FORWARD || e->kind == PL_EV_BACKWARD) &&
           viz_matrix_index(m, e->label) >= 0;
}

const pl_event *viz_matmul_at(const viz_model *m, int rank, double t, int modeled, int *matrix)
{
    *matrix = -1;
    if (rank < 0 || rank >= PL_MAX_RANKS || !m->nmatrices) return NULL;
    const viz_lane *L = &m->lanes[rank][PL_LANE_COMPUTE];
    /* as lane_at: the last event starting at or before t, then back to the
     * latest matmul (past the kernels inside it and since) */
    size_t lo = 0, hi = L->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (viz_ev_start(&L->ev[mid], modeled) <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i > 0; i--) {
        const pl_event *e = &L->ev[i - 1];
        if (is_matmul(m, e)) {
            *matrix = viz_matrix_index(m, e->label);
            return e;
        }
    }
    return NULL;
}

/* ---- the pipeline of the pipeline pane ------------------------------------------------- */

int pl_viz_check_pipeline(const pl_viz_pipeline *p, int nranks, char *err, size_t cap)
{
    if (!p) return 0;
    size_t len = p->schedule ? strlen(p->schedule) : 0;
    int none = p->of_ideal < 0 && p->of_total < 0;
    char bad[96] = "", range[48];
    const char *why = NULL;
    if (p->stages < 1 || p->stages > PL_MAX_RANKS) {
        snprintf(bad, sizeof bad, "%d stages", p->stages);
        snprintf(range, sizeof range, "1..%d stages", PL_MAX_RANKS);
        why = range;
    } else if (nranks > 0 && nranks % p->stages) {
        snprintf(bad, sizeof bad, "%d stages for %d ranks", p->stages, nranks);
        why = "a number of stages that divides the world's ranks";
    } else if (p->micro_batches < 1 || p->micro_batches > PL_PP_MAX_MICRO) {
        snprintf(bad, sizeof bad, "%d micro-batches", p->micro_batches);
        snprintf(range, sizeof range, "1..%d micro-batches", PL_PP_MAX_MICRO);
        why = range;
    } else if (p->chunks < 1 || p->chunks > PL_PP_MAX_CHUNKS) {
        snprintf(bad, sizeof bad, "%d chunks", p->chunks);
        snprintf(range, sizeof range, "1..%d chunks", PL_PP_MAX_CHUNKS);
        why = range;
    } else if (len < 1 || len > 15) {
        snprintf(bad, sizeof bad, "schedule name of %zu bytes", len);
        why = "a schedule name of 1 to 15 bytes";
    } else if (!none &&
               !(p->of_ideal >= 0 && p->of_ideal < 1e9 && p->of_total >= 0 && p->of_total < 1)) {
        snprintf(bad, sizeof bad, "bubble %g of the ideal time, %g of the total", p->of_ideal,
                 p->of_total);
        why = "of_ideal >= 0 and of_total in [0, 1), or both negative (no formula)";
    }
    for (int r = 0; !why && p->have_stage_rank && r < p->stages; r++) {
        int k = p->stage_rank[r], top = nranks > 0 ? nranks : PL_MAX_RANKS;
        if (k < 0 || k >= top) {
            snprintf(bad, sizeof bad, "stage %d drawn from rank %d", r, k);
            snprintf(range, sizeof range, "ranks 0..%d", top - 1);
            why = range;
        }
    }
    if (why) {
        snprintf(err, cap, "pipeline pane: %s: allowed are %s", bad, why);
        return -1;
    }
    return 0;
}

int viz_model_set_pipeline(viz_model *m, const pl_viz_pipeline *p, char *err, size_t cap)
{
    m->version++; /* what is cached from the events depends on it too */
    if (pl_viz_check_pipeline(p, 0, err, cap)) return -1;
    memset(&m->pp, 0, sizeof m->pp);
    if (!p) return 0;
    m->pp.stages = p->stages;
    m->pp.micro_batches = p->micro_batches;
    m->pp.chunks = p->chunks;
    snprintf(m->pp.schedule, sizeof m->pp.schedule, "%s", p->schedule);
    int none = p->of_ideal < 0 && p->of_total < 0;
    m->pp.of_ideal = none ? -1 : p->of_ideal;
    m->pp.of_total = none ? -1 : p->of_total;
    m->pp.have_stage_rank = p->have_stage_rank ? 1 : 0;
    for (int r = 0; p->have_stage_rank && r < p->stages; r++)
        m->pp.stage_rank[r] = p->stage_rank[r];
    return 0;
}

int viz_is_pipeline_op(const viz_model *m, const pl_event *e)
{
    return (e->kind == PL_EV_FORWARD || e->kind == PL_EV_BACKWARD ||
            e->kind == PL_EV_WEIGHT_GRAD) &&
           e->layer >= 0 && e->layer < PL_MAX_RANKS && e->micro_batch >= 0 &&
           !is_matmul(m, e); /* a block's matmul: no stage */
}

/* F, B (or BW), W: 0, 1, 2. */
static int op_index(const pl_event *e)
{
    return e->kind == PL_EV_FORWARD ? 0 : e->kind == PL_EV_BACKWARD ? 1 : 2;
}

#define SEEN_KEYS (PL_PP_MAX_MICRO * PL_PP_MAX_CHUNKS)

static void pp_round_compute(const viz_model *m, int modeled, viz_pp_round *R);

/* The answer on each clock until the model changes: the pipeline pane and
 * the metrics' bubble ask every frame, and it walks every compute event. */
struct viz_pp_cache {
    int valid[2];
    unsigned long version[2];
    viz_pp_round R[2];
};

void viz_pp_round_find(const viz_model *m, int modeled, viz_pp_round *R)
{
    viz_model *mm = (viz_model *)m; /* the cache's only */
    int c = modeled ? 1 : 0;
    if (!mm->pp_cache) mm->pp_cache = calloc(1, sizeof *mm->pp_cache);
    struct viz_pp_cache *k = mm->pp_cache;
    if (k && k->valid[c] && k->version[c] == m->version) {
        *R = k->R[c];
        return;
    }
    pp_round_compute(m, modeled, R);
    if (k) k->R[c] = *R, k->version[c] = m->version, k->valid[c] = 1;
}

static void pp_round_compute(const viz_model *m, int modeled, viz_pp_round *R)
{
    memset(R, 0, sizeof *R);
    R->lo = 1e300;
    R->hi = -1e300;
    int top = -1;
    for (int s = 0; s < PL_MAX_RANKS; s++) R->owner[s] = -1;
    for (int rk = 0; rk < m->nranks; rk++) {
        const viz_lane *L = &m->lanes[rk][PL_LANE_COMPUTE];
        for (size_t i = 0; i < L->n; i++) {
            const pl_event *e = &L->ev[i];
            if (!viz_is_pipeline_op(m, e)) continue;
            if (m->pp.have_stage_rank && /* a hybrid run: the stage's own rank only */
                (e->layer >= m->pp.stages || m->pp.stage_rank[e->layer] != rk))
                continue;
            if (R->owner[e->layer] < 0) R->owner[e->layer] = rk;
            top = e->layer > top ? e->layer : top;
            double d = viz_ev_end(e, modeled) - viz_ev_start(e, modeled);
            double *t = &R->t_kind[op_index(e)];
            if (d > 0 && (*t == 0 || d < *t)) *t = d;
        }
    }
    R->stages = m->pp.stages > 0 ? m->pp.stages : top + 1;
    if (top < 0) return;
    /* per stage: its iterations, and the sums of its newest. seen[key]: the
     * stamp (call, stage, iteration) of the last forward of (k, c); the UI
     * draws on one thread, so one array serves every call without clearing */
    static uint64_t seen[SEEN_KEYS], call;
    if (++call >= (1u << 23)) {
        memset(seen, 0, sizeof seen);
        call = 1;
    }
    int it[PL_MAX_RANKS] = {0}, wgrad = 0;
    double slot[PL_MAX_RANKS];
    /* each stage's sums of its newest KEPT iterations, iteration j at [j % KEPT]:
     * the newest complete one may be a stage's newest or the two before it */
    enum { KEPT = 3 };
    struct it_sums {
        double lo, hi, busy;
        int n[3]; /* its F, B (or BW) and W ops */
    } kept[PL_MAX_RANKS][KEPT];
    for (int s = 0; s <= top; s++) {
        if (R->owner[s] < 0) continue;
        uint64_t base = call << 40 | (uint64_t)s << 32;
        const viz_lane *L = &m->lanes[R->owner[s]][PL_LANE_COMPUTE];
        struct it_sums *cur = NULL;
        for (size_t i = 0; i < L->n; i++) {
            const pl_event *e = &L->ev[i];
            if (!viz_is_pipeline_op(m, e) || e->layer != s) continue;
            if (e->kind == PL_EV_FORWARD || it[s] == 0) {
                int key = (int)((unsigned)e->micro_batch % PL_PP_MAX_MICRO) * PL_PP_MAX_CHUNKS +
                          (int)((unsigned)e->chunk % PL_PP_MAX_CHUNKS);
                if (it[s] == 0 ||
                    (e->kind == PL_EV_FORWARD && seen[key] == (base | (unsigned)it[s]))) {
                    it[s]++; /* the next iteration */
                    R->first[s] = i;
                    cur = &kept[s][it[s] % KEPT];
                    *cur = (struct it_sums){1e300, -1e300, 0, {0, 0, 0}};
                    slot[s] = 1e300;
                }
                if (e->kind == PL_EV_FORWARD) seen[key] = base | (unsigned)it[s];
            }
            double a = viz_ev_start(e, modeled), b = viz_ev_end(e, modeled);
            cur->lo = a < cur->lo ? a : cur->lo;
            cur->hi = b > cur->hi ? b : cur->hi;
            cur->busy += b - a;
            cur->n[op_index(e)]++;
            if (e->kind == PL_EV_WEIGHT_GRAD) wgrad = 1;
            if (b - a > 0 && b - a < slot[s]) slot[s] = b - a;
        }
    }
    for (int s = 0; s <= top; s++) {
        R->stage_it[s] = it[s];
        R->iteration = it[s] > R->iteration ? it[s] : R->iteration;
    }
    R->slot = 1e300;
    for (int s = 0; s <= top; s++) {
        if (it[s] != R->iteration || R->owner[s] < 0) continue;
        const struct it_sums *k = &kept[s][it[s] % KEPT];
        R->lo = k->lo < R->lo ? k->lo : R->lo;
        R->hi = k->hi > R->hi ? k->hi : R->hi;
        R->busy += k->busy;
        R->slot = slot[s] < R->slot ? slot[s] : R->slot;
    }
    if (R->slot >= 1e300) R->slot = 0;
    /* the newest iteration complete on every stage of the pane */
    int need = m->pp.stages > 0 ? m->pp.micro_batches * m->pp.chunks : 0;
    int w = wgrad || !strncmp(m->pp.schedule, "zb", 2);
    for (int j = R->iteration; j >= 1 && j > R->iteration - KEPT && !R->done; j--) {
        int ok = R->stages <= top + 1, forwards = -1;
        for (int s = 0; ok && s < R->stages; s++) {
            const struct it_sums *k = &kept[s][j % KEPT];
            if (R->owner[s] < 0 || it[s] < j || it[s] - j >= KEPT)
                ok = 0;
            else if (it[s] > j) /* it has begun the next */
                ok = 1;
            else if (need)
                ok = k->n[0] >= need && k->n[1] >= need && (!w || k->n[2] >= need);
            else
                ok = k->n[0] > 0 && k->n[1] == k->n[0] && (!w || k->n[2] == k->n[0]);
            if (ok && !need) { /* and as many forwards as the other stages ran in it */
                ok = forwards < 0 || k->n[0] == forwards;
                forwards = k->n[0];
            }
        }
        if (!ok) continue;
        R->done = j;
        R->done_lo = 1e300;
        R->done_hi = -1e300;
        for (int s = 0; s < R->stages; s++) {
            const struct it_sums *k = &kept[s][j % KEPT];
            R->done_lo = k->lo < R->done_lo ? k->lo : R->done_lo;
            R->done_hi = k->hi > R->done_hi ? k->hi : R->done_hi;
            R->done_busy += k->busy;
        }
    }
}

double viz_bubble_fraction(const viz_model *m, int modeled)
{
    /* a ZeRO run's forwards and backwards are its units', on every rank */
    if (m->zero.ranks > 0) return -1;
    viz_pp_round R;
    viz_pp_round_find(m, modeled, &R);
    if (!R.done || R.done_hi <= R.done_lo || R.stages < 1) return -1;
    double f = 1.0 - R.done_busy / ((R.done_hi - R.done_lo) * R.stages);
    return f < 0 ? 0 : f;
}
