/* trace.c — see paralab/trace.h. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "paralab/clock.h"
#include "paralab/device.h"
#include "paralab/picture.h"
#include "paralab/trace.h"

#define MAX_RANKS 64
#define MAX_NOTES 65536

const char *pl_lane_name(pl_lane lane)
{
    static const char *n[] = {"compute", "copy", "comm"};
    return (unsigned)lane < PL_NUM_LANES ? n[lane] : "?";
}

const char *pl_event_kind_name(pl_event_kind k)
{
    static const char *n[] = {"kernel", "copy",    "collective", "ring step", "send",
                              "recv",   "forward", "backward",   "optimizer", "weight-grad"};
    return (unsigned)k < PL_NUM_EVENT_KINDS ? n[k] : "?";
}

const char *pl_group_name(pl_group g)
{
    static const char *n[] = {"", "tp", "dp", "pp"};
    return (unsigned)g < PL_NUM_GROUPS ? n[g] : "?";
}

double pl_trace_now(void) { return pl_now(); }

/* One rank's ring. head: the next slot the producer writes; tail: the next
 * the consumer reads. Each on its own cache line: the producer writes head
 * and only reads tail when the ring looks full (it keeps a cached copy). */
typedef struct ring {
    _Alignas(64) _Atomic uint64_t head;
    uint64_t tail_cache; /* producer's last view of tail */
    uint64_t dropped;
    uint64_t gave_up_at; /* tail + 1 when the producer last gave up waiting (0: never) */
    _Alignas(64) _Atomic uint64_t tail;
    _Alignas(64) pl_event *slots;
} ring;

struct pl_trace {
    int n;
    uint64_t mask;
    pl_trace_full_policy policy;
    ring rings[MAX_RANKS];
    pthread_mutex_t note_lock;
    pl_note *notes; /* in the order they were noted */
    size_t nnotes, capnotes;
    double mem_last[MAX_RANKS][2]; /* each rank's last memory sample noted: used, total */
    unsigned char mem_noted[MAX_RANKS];
    _Atomic int step; /* pl_trace_set_step */
};

pl_trace *pl_trace_create(int n, size_t capacity, pl_trace_full_policy policy)
{
    if (n < 1 || n > MAX_RANKS) return NULL;
    if (capacity > ((size_t)1 << 30)) return NULL; /* 2^30 events a rank is plenty */
    size_t cap = 2;
    while (cap < capacity) cap *= 2;
    pl_trace *t = aligned_alloc(64, sizeof *t);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    t->n = n;
    t->mask = cap - 1;
    t->policy = policy;
    pthread_mutex_init(&t->note_lock, NULL);
    for (int r = 0; r < n; r++)
        if (!(t->rings[r].slots = calloc(cap, sizeof(pl_event)))) {
            pl_trace_destroy(t);
            return NULL;
        }
    return t;
}

void pl_trace_destroy(pl_trace *t)
{
    if (!t) return;
    for (int r = 0; r < t->n; r++) free(t->rings[r].slots);
    pl_trace_free_notes(t->notes, t->nnotes);
    pthread_mutex_destroy(&t->note_lock);
    free(t);
}

pl_trace_stamp pl_trace_stamp_now(void)
{
    return (pl_trace_stamp){.at = pl_trace_now(), .modeled_at = pl_device_now()};
}

/* A note's picture, freed with its arrays. */
static void free_pic(pl_picture *p)
{
    pl_picture_free(p);
    free(p);
}

/* Under note_lock: x at the end of the notes (it takes x->text and x->pic). */
static void append_note(pl_trace *t, pl_note *x)
{
    if (t->nnotes == t->capnotes && t->capnotes < MAX_NOTES) {
        size_t cap = t->capnotes ? t->capnotes * 2 : 64;
        pl_note *p = realloc(t->notes, cap * sizeof *p);
        if (p) {
            t->notes = p;
            t->capnotes = cap;
        }
    }
    if (t->nnotes < t->capnotes) {
        t->notes[t->nnotes++] = *x;
        x->text = NULL;
        x->pic = NULL;
    }
}

static void add_note(pl_trace *t, pl_note *x, const pl_trace_stamp *when)
{
    pl_trace_stamp s = when ? *when : pl_trace_stamp_now();
    x->at = s.at;
    x->modeled_at = s.modeled_at;
    pthread_mutex_lock(&t->note_lock);
    append_note(t, x);
    pthread_mutex_unlock(&t->note_lock);
    free(x->text); /* not kept: no room */
    free_pic(x->pic);
}

static void note_step(pl_trace *t, int step, const char *text, const pl_trace_stamp *when)
{
    if (!t || step < 1) return;
    pl_note x = {.kind = PL_NOTE_STEP, .step = step, .text = strdup(text ? text : "")};
    if (x.text) add_note(t, &x, when);
}

void pl_trace_note_step(pl_trace *t, int step, const char *text) { note_step(t, step, text, NULL); }

void pl_trace_note_step_at(pl_trace *t, int step, const char *text, pl_trace_stamp at)
{
    note_step(t, step, text, &at);
}

void pl_trace_note_metric(pl_trace *t, const char *name, double value)
{
    if (!t) return;
    pl_note x = {.kind = PL_NOTE_METRIC, .value = value};
    snprintf(x.name, sizeof x.name, "%s", name && *name ? name : "metric");
    add_note(t, &x, NULL);
}

void pl_trace_note_memory(pl_trace *t, int rank, double used, double total)
{
    if (!t || rank < 0 || rank >= t->n) return;
    pl_trace_stamp s = pl_trace_stamp_now();
    pl_note x = {.kind = PL_NOTE_MEMORY,
                 .rank = rank,
                 .value = used,
                 .total = total,
                 .at = s.at,
                 .modeled_at = s.modeled_at};
    snprintf(x.name, sizeof x.name, "device memory");
    pthread_mutex_lock(&t->note_lock);
    if (!t->mem_noted[rank] || t->mem_last[rank][0] != used || t->mem_last[rank][1] != total) {
        t->mem_noted[rank] = 1;
        t->mem_last[rank][0] = used;
        t->mem_last[rank][1] = total;
        append_note(t, &x);
    }
    pthread_mutex_unlock(&t->note_lock);
}

/* The picture is stamped with the step the trace's events are stamped with
 * now (pl_trace_set_step): a step begun with pl_step_begin has its number
 * from then on, while its narration is noted only at its pl_step. */
void pl_trace_note_picture(pl_trace *t, const pl_picture *pic)
{
    if (!t || !pic || pl_picture_check(pic, NULL, 0)) return;
    pl_picture *c = malloc(sizeof *c);
    if (!c) return;
    if (pl_picture_copy(c, pic)) {
        free(c);
        return;
    }
    pl_note x = {.kind = PL_NOTE_PICTURE,
                 .step = atomic_load_explicit(&t->step, memory_order_relaxed),
                 .pic = c};
    snprintf(x.name, sizeof x.name, "%s", pl_picture_kind_name(c->kind));
    add_note(t, &x, NULL);
}

size_t pl_trace_take_notes(pl_trace *t, pl_note **out)
{
    *out = NULL;
    if (!t) return 0;
    pthread_mutex_lock(&t->note_lock);
    pl_note *ns = t->notes;
    size_t n = t->nnotes;
    t->notes = NULL;
    t->nnotes = t->capnotes = 0;
    pthread_mutex_unlock(&t->note_lock);
    if (!n) {
        free(ns);
        return 0;
    }
    *out = ns;
    return n;
}

void pl_trace_free_notes(pl_note *notes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(notes[i].text);
        free_pic(notes[i].pic);
    }
    free(notes);
}

void pl_trace_record(pl_trace *t, const pl_event *e)
{
    if (!t || e->rank < 0 || e->rank >= t->n) return;
    ring *q = &t->rings[e->rank];
    uint64_t h = atomic_load_explicit(&q->head, memory_order_relaxed);
    double give_up = 0;
    while (h - q->tail_cache > t->mask) { /* looks full: look again */
        q->tail_cache = atomic_load_explicit(&q->tail, memory_order_acquire);
        if (h - q->tail_cache <= t->mask) break;
        if (t->policy == PL_TRACE_WAIT && q->gave_up_at != q->tail_cache + 1) {
            /* let the consumer drain, a second at most; after that, drop at once
             * until the consumer moves */
            double now = pl_trace_now();
            if (!give_up) give_up = now + 1.0;
            if (now < give_up) {
                sched_yield();
                continue;
            }
        }
        if (t->policy == PL_TRACE_WAIT) q->gave_up_at = q->tail_cache + 1;
        q->dropped++; /* PL_TRACE_DROP, or no consumer came: never block for good */
        return;
    }
    q->slots[h & t->mask] = *e;
    q->slots[h & t->mask].step = atomic_load_explicit(&t->step, memory_order_relaxed);
    atomic_store_explicit(&q->head, h + 1, memory_order_release);
}

void pl_trace_set_step(pl_trace *t, int step)
{
    if (t) atomic_store_explicit(&t->step, step, memory_order_relaxed);
}

size_t pl_trace_drain(pl_trace *t, pl_event *out, size_t max)
{
    size_t got = 0;
    for (int r = 0; r < t->n && got < max; r++) {
        ring *q = &t->rings[r];
        uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
        uint64_t head = atomic_load_explicit(&q->head, memory_order_acquire);
        while (tail < head && got < max) out[got++] = q->slots[tail++ & t->mask];
        atomic_store_explicit(&q->tail, tail, memory_order_release);
    }
    return got;
}

uint64_t pl_trace_dropped(const pl_trace *t, int rank)
{
    return t && rank >= 0 && rank < t->n ? t->rings[rank].dropped : 0;
}

/* ---- Chrome Trace Event JSON ------------------------------------------------ */

struct pl_trace_writer {
    FILE *f;
    int modeled, nranks, first, failed;
    double t0; /* the earliest start written: times are relative to it */
    int have_t0;
    char path[4096];
    /* the tracks (tids) of each rank named so far: the lanes, then the streams */
    unsigned char named[MAX_RANKS][PL_NUM_LANES + 256];
    /* a multi-process run's part: the global ranks it runs (nranks 0: a whole trace) */
    int part_first, part_nranks;
};

/* Opens a whole trace (part NULL) or a process's part of one. */
static pl_trace_writer *open_writer(const char *path, int nranks, int modeled, double origin,
                                    const pl_trace_part *part, char *err, size_t cap)
{
    pl_trace_writer *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    if (!(w->f = fopen(path, "w"))) {
        snprintf(err, cap, "cannot write the trace %s: %s", path, strerror(errno));
        free(w);
        return NULL;
    }
    snprintf(w->path, sizeof w->path, "%s", path);
    w->modeled = modeled;
    if (origin >= 0) {
        w->t0 = origin;
        w->have_t0 = 1;
    }
    w->nranks = nranks;
    w->first = 1;
    /* otherData: Chrome's field for metadata; paralab-viz reads the clock */
    fprintf(w->f,
            "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"paralab\",\"clock\":"
            "\"%s\",\"ranks\":%d",
            modeled ? "modeled" : "measured", nranks);
    int lo = 0, hi = nranks; /* the ranks named: a part's own */
    if (part) {
        w->part_first = lo = part->first_rank;
        w->part_nranks = part->nranks;
        hi = lo + part->nranks;
        fprintf(w->f,
                ",\"run\":\"%s\",\"process\":%d,\"processes\":%d,\"first_rank\":%d,"
                "\"part_ranks\":%d",
                part->run, part->process, part->processes, part->first_rank, part->nranks);
    }
    fputs("},\"traceEvents\":[", w->f);
    /* names: one process per rank; its threads (tracks) as they are used */
    for (int r = lo; r < hi; r++) {
        fprintf(w->f,
                "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":"
                "\"rank %d\"}}",
                w->first ? "" : ",", r, r);
        w->first = 0;
    }
    return w;
}

pl_trace_writer *pl_trace_writer_open(const char *path, int nranks, int modeled, double origin,
                                      char *err, size_t cap)
{
    return open_writer(path, nranks, modeled, origin, NULL, err, cap);
}

int pl_trace_path_for_process(const char *path, int process, int nprocs, char *out, size_t cap)
{
    if (cap) out[0] = 0;
    if (!path || nprocs < 1 || nprocs > MAX_RANKS || process < 0 || process >= nprocs) return -1;
    int k;
    if (nprocs == 1)
        k = snprintf(out, cap, "%s", path);
    else {
        const char *base = strrchr(path, '/'), *dot = strrchr(path, '.');
        base = base ? base + 1 : path;
        if (!dot || dot <= base) /* no extension (or a name that begins with its only '.') */
            k = snprintf(out, cap, "%s.p%d", path, process);
        else
            k = snprintf(out, cap, "%.*s.p%d%s", (int)(dot - path), path, process, dot);
    }
    if (k < 0 || (size_t)k >= cap) {
        if (cap) out[0] = 0;
        return -1;
    }
    return 0;
}

void pl_trace_run_id(char *out, size_t cap)
{
    char host[64] = "host";
    FILE *f = fopen("/proc/sys/kernel/hostname", "r");
    if (f) {
        if (fgets(host, sizeof host, f)) host[strcspn(host, "\n")] = 0;
        fclose(f);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char tail[40];
    snprintf(tail, sizeof tail, "-%ld-%lld.%09ld", (long)getpid(), (long long)ts.tv_sec,
             (long)ts.tv_nsec);
    for (char *c = host; *c; c++) /* the id is written into JSON as it is */
        if (*c < 0x21 || *c > 0x7e || *c == '"' || *c == '\\') *c = '_';
    size_t room = cap > 40 ? 40 : cap, nt = strlen(tail); /* pl_trace_part.run's size */
    if (!room) return;
    size_t keep = room > nt + 1 ? room - nt - 1 : 0, nh = strlen(host);
    if (nh > keep) nh = keep;
    memcpy(out, host, nh);
    size_t rest = room - 1 - nh < nt ? room - 1 - nh : nt;
    memcpy(out + nh, tail, rest);
    out[nh + rest] = 0;
}

/* 1 when s is 1 to 39 printable ASCII bytes without a quote or backslash. */
static int run_id_ok(const char *s)
{
    size_t n = strnlen(s, 40);
    if (n < 1 || n > 39) return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < 0x20 || s[i] > 0x7e || s[i] == '"' || s[i] == '\\') return 0;
    return 1;
}

pl_trace_writer *pl_trace_writer_open_part(const char *path, const pl_trace_part *part, int modeled,
                                           double origin, char *err, size_t cap)
{
    const pl_trace_part *p = part;
    if (!p || !run_id_ok(p->run))
        snprintf(err, cap,
                 "a trace part needs a run id of 1 to 39 printable ASCII bytes without '\"' or "
                 "'\\' (pl_trace_run_id makes one)");
    else if (p->processes < 1 || p->processes > MAX_RANKS)
        snprintf(err, cap, "a trace part's processes %d: allowed are 1..%d", p->processes,
                 MAX_RANKS);
    else if (p->process < 0 || p->process >= p->processes)
        snprintf(err, cap, "a trace part's process %d: allowed are 0..%d (processes %d)",
                 p->process, p->processes - 1, p->processes);
    else if (p->world < 1 || p->world > MAX_RANKS)
        snprintf(err, cap, "a trace part's world of %d ranks: allowed are 1..%d", p->world,
                 MAX_RANKS);
    else if (p->nranks < 1 || p->first_rank < 0 || p->first_rank + p->nranks > p->world)
        snprintf(err, cap,
                 "a trace part's ranks %d..%d (first_rank %d, nranks %d): allowed are at least "
                 "one, within the world's 0..%d",
                 p->first_rank, p->first_rank + p->nranks - 1, p->first_rank, p->nranks,
                 p->world - 1);
    else
        return open_writer(path, p->world, modeled, origin, p, err, cap);
    return NULL;
}

/* The rank written for rank r: in a part, a process's own thread index
 * 0 .. part_nranks - 1 becomes its global rank; a global rank stays. */
static int written_rank(const pl_trace_writer *w, int r)
{
    if (!w->part_nranks || (r >= w->part_first && r < w->part_first + w->part_nranks)) return r;
    return r >= 0 && r < w->part_nranks ? w->part_first + r : r;
}

/* The track (Chrome's tid) of an event: its stream's (3 + the stream's
 * number on its device), or for an event of no stream its lane's (0..2).
 * The ops of one stream run one after another, so its slices never overlap
 * without nesting; a lane's would (two streams' kernels at once). */
static int track_of(const pl_event *e)
{
    return e->stream ? PL_NUM_LANES + e->stream - 1 : e->lane < PL_NUM_LANES ? e->lane : 0;
}

/* The length of the valid UTF-8 sequence at s (1..4), or 0: valid as RFC
 * 3629 has it, which JSON readers (jansson: paralab-viz) hold a file to — no
 * overlong form, no surrogate (U+D800..U+DFFF), nothing above U+10FFFF. */
static int utf8_len(const unsigned char *s)
{
    int n = s[0] < 0x80             ? 1
            : (s[0] & 0xe0) == 0xc0 ? 2
            : (s[0] & 0xf0) == 0xe0 ? 3
            : (s[0] & 0xf8) == 0xf0 ? 4
                                    : 0;
    if (n == 2 && s[0] < 0xc2) return 0; /* overlong */
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    /* the second byte's range: E0 A0.., ED ..9F, F0 90.., F4 ..8F, F5.. none */
    if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
        (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f) || s[0] > 0xf4)
        return 0;
    return n;
}

/* A JSON string; a byte that is not valid UTF-8 (a text cut in the middle
 * of a character) becomes '?', so that the file stays valid JSON. */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = utf8_len(p);
        if (n > 1) {
            fwrite(p, 1, (size_t)n, f);
            p += n;
            continue;
        }
        unsigned char ch = *p++;
        if (!n)
            fputc('?', f);
        else if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* The thread_name of a rank's track, before its first slice. */
static void name_track(pl_trace_writer *w, int rank, int tid)
{
    if (rank < 0 || rank >= MAX_RANKS || w->named[rank][tid]) return;
    w->named[rank][tid] = 1;
    char name[32];
    if (tid < PL_NUM_LANES)
        snprintf(name, sizeof name, "%s", pl_lane_name((pl_lane)tid));
    else if (tid == PL_NUM_LANES)
        snprintf(name, sizeof name, "stream 0 (default)");
    else
        snprintf(name, sizeof name, "stream %d", tid - PL_NUM_LANES);
    fprintf(w->f,
            ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{"
            "\"name\":\"%s\"}}",
            rank, tid, name);
}

int pl_trace_writer_add(pl_trace_writer *w, const pl_event *ev, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const pl_event *e = &ev[i];
        double s = w->modeled ? e->modeled_start : e->start;
        double end = w->modeled ? e->modeled_end : e->end;
        if (!w->have_t0) {
            w->t0 = s;
            w->have_t0 = 1;
        }
        /* Start and end are rounded to whole nanoseconds, and the duration
         * is their difference: events nested in time stay nested in the
         * file (rounding start and duration separately could push a child's
         * end a nanosecond past its parent's). */
        long long ts_ns = llround((s - w->t0) * 1e9), end_ns = llround((end - w->t0) * 1e9);
        long long dur_ns = end_ns > ts_ns ? end_ns - ts_ns : 0;
        int tid = track_of(e), rank = written_rank(w, e->rank);
        name_track(w, rank, tid);
        fputs(",\n{\"name\":", w->f);
        put_string(w->f, e->label[0] ? e->label : pl_event_kind_name((pl_event_kind)e->kind));
        fprintf(w->f,
                ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
                "\"args\":{\"bytes\":%llu,\"flops\":%.0f,\"lane\":%d",
                pl_event_kind_name((pl_event_kind)e->kind), rank, tid, (double)ts_ns / 1e3,
                (double)dur_ns / 1e3, (unsigned long long)e->bytes, e->flops, e->lane);
        if (e->stream) fprintf(w->f, ",\"stream\":%d", e->stream - 1);
        if (e->micro_batch >= 0) fprintf(w->f, ",\"micro_batch\":%d", e->micro_batch);
        if (e->layer >= 0) fprintf(w->f, ",\"layer\":%d", e->layer);
        if (e->chunk > 0) fprintf(w->f, ",\"chunk\":%d", e->chunk);
        if (e->peer >= 0) fprintf(w->f, ",\"peer\":%d", e->peer);
        if (e->group > 0 && e->group < PL_NUM_GROUPS)
            fprintf(w->f, ",\"group\":\"%s\"", pl_group_name((pl_group)e->group));
        if (e->step > 0) fprintf(w->f, ",\"step\":%d", e->step);
        fputs("}}", w->f);
    }
    if (ferror(w->f)) w->failed = 1;
    return w->failed ? -1 : 0;
}

/* A real, exactly (it reads back as the same double), or null (JSON has no
 * NaN or infinity). */
static void put_real(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.17g", x);
    else
        fputs("null", f);
}

/* A picture as an instant: name the kind's, args step, title, p, iv, dv, sv. */
static void write_picture(FILE *f, const pl_picture *p, int step, double ts)
{
    fputs(",\n{\"name\":", f);
    put_string(f, pl_picture_kind_name(p->kind));
    fprintf(f,
            ",\"cat\":\"picture\",\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":%.3f,"
            "\"args\":{\"step\":%d,\"title\":",
            ts, step);
    put_string(f, p->title);
    fputs(",\"p\":[", f);
    for (int i = 0; i < PL_PIC_PARAMS; i++) fprintf(f, "%s%lld", i ? "," : "", (long long)p->p[i]);
    fputs("],\"iv\":[", f);
    for (size_t i = 0; i < p->ni; i++) fprintf(f, "%s%d", i ? "," : "", (int)p->iv[i]);
    fputs("],\"dv\":[", f);
    for (size_t i = 0; i < p->nd; i++) {
        if (i) fputc(',', f);
        put_real(f, p->dv[i]);
    }
    fputs("],\"sv\":[", f);
    for (size_t i = 0; i < p->ns; i++) {
        if (i) fputc(',', f);
        put_string(f, p->sv[i]);
    }
    fputs("]}}", f);
}

int pl_trace_writer_add_notes(pl_trace_writer *w, const pl_note *notes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const pl_note *x = &notes[i];
        double at = w->modeled ? x->modeled_at : x->at;
        if (!w->have_t0) {
            w->t0 = at;
            w->have_t0 = 1;
        }
        double ts = (double)llround((at - w->t0) * 1e9) / 1e3;
        if (x->kind == PL_NOTE_STEP) {
            fprintf(w->f,
                    ",\n{\"name\":\"step %d\",\"cat\":\"narration\",\"ph\":\"i\",\"s\":\"g\","
                    "\"pid\":0,\"tid\":0,\"ts\":%.3f,\"args\":{\"step\":%d,\"text\":",
                    x->step, ts, x->step);
            put_string(w->f, x->text ? x->text : "");
            fputs("}}", w->f);
        } else if (x->kind == PL_NOTE_PICTURE) {
            if (x->pic) write_picture(w->f, x->pic, x->step, ts);
        } else if (x->kind == PL_NOTE_MEMORY) {
            fprintf(w->f,
                    ",\n{\"name\":\"device memory\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":%d,"
                    "\"ts\":%.3f,\"args\":{\"used\":%.0f,\"total\":%.0f}}",
                    written_rank(w, x->rank), ts, x->value, x->total);
        } else {
            fputs(",\n{\"name\":", w->f);
            put_string(w->f, x->name);
            fprintf(w->f, ",\"cat\":\"metric\",\"ph\":\"C\",\"pid\":0,\"ts\":%.3f,\"args\":{", ts);
            if (isfinite(x->value))
                fprintf(w->f, "\"value\":%.17g}}", x->value);
            else /* JSON has no NaN or infinity */
                fputs("\"value\":null}}", w->f);
        }
    }
    if (ferror(w->f)) w->failed = 1;
    return w->failed ? -1 : 0;
}

int pl_trace_writer_take_notes(pl_trace_writer *w, pl_trace *t)
{
    pl_note *ns;
    size_t n = pl_trace_take_notes(t, &ns);
    int rc = w ? pl_trace_writer_add_notes(w, ns, n) : 0;
    pl_trace_free_notes(ns, n);
    return rc;
}

int pl_trace_writer_describe(pl_trace_writer *w, const char *title, int steps, unsigned panes,
                             int stream_lanes)
{
    fputs(",\n{\"name\":\"paralab\",\"ph\":\"M\",\"pid\":0,\"args\":{\"title\":", w->f);
    put_string(w->f, title ? title : "");
    fprintf(w->f, ",\"steps\":%d,\"panes\":%u,\"stream_lanes\":%d}}", steps > 0 ? steps : 0, panes,
            stream_lanes ? 1 : 0);
    if (ferror(w->f)) w->failed = 1;
    return w->failed ? -1 : 0;
}

int pl_trace_writer_describe_matrix(pl_trace_writer *w, const char *name, int rows, int cols,
                                    char split, int padded_cols, int tp)
{
    fputs(",\n{\"name\":\"paralab matrix\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":", w->f);
    put_string(w->f, name ? name : "");
    fprintf(w->f, ",\"rows\":%d,\"cols\":%d,\"split\":\"%s\",\"padded_cols\":%d,\"tp\":%d}}", rows,
            cols,
            split == 'c'   ? "column"
            : split == 'r' ? "row"
                           : "replicated",
            padded_cols, tp);
    if (ferror(w->f)) w->failed = 1;
    return w->failed ? -1 : 0;
}

/* A fraction, exactly (it reads back as the same double), or null. */
static void put_fraction(FILE *f, double x)
{
    if (x < 0 || x != x)
        fputs("null", f);
    else
        fprintf(f, "%.17g", x);
}

int pl_trace_writer_describe_pipeline(pl_trace_writer *w, int stages, int micro_batches, int chunks,
                                      const char *schedule, double of_ideal, double of_total,
                                      const int *stage_rank)
{
    fprintf(w->f,
            ",\n{\"name\":\"paralab pipeline\",\"ph\":\"M\",\"pid\":0,\"args\":{\"stages\":%d,"
            "\"micro_batches\":%d,\"chunks\":%d,\"schedule\":",
            stages, micro_batches, chunks);
    put_string(w->f, schedule ? schedule : "");
    fputs(",\"of_ideal\":", w->f);
    put_fraction(w->f, of_ideal);
    fputs(",\"of_total\":", w->f);
    put_fraction(w->f, of_total);
    if (stage_rank) {
        fputs(",\"stage_ranks\":[", w->f);
        for (int r = 0; r < stages; r++) fprintf(w->f, "%s%d", r ? "," : "", stage_rank[r]);
        fputc(']', w->f);
    }
    fputs("}}", w->f);
    if (ferror(w->f)) w->failed = 1;
    return w->failed ? -1 : 0;
}

int pl_trace_writer_describe_mesh(pl_trace_writer *w, int dp, int tp, int pp, const char *order)
{
    fprintf(w->f,
            ",\n{\"name\":\"paralab mesh\",\"ph\":\"M\",\"pid\":0,\"args\":{\"dp\":%d,\"tp\":%d,"
            "\"pp\":%d,\"order\":",
            dp, tp, pp);
    put_string(w->f, order ? order : "");
    fputs("}}", w->f);
    if (ferror(w->f)) w->failed = 1;
    return w->failed ? -1 : 0;
}

int pl_trace_writer_describe_zero(pl_trace_writer *w, int stage, int ranks, long psi, long psi_pad,
                                  int sgd)
{
    fprintf(w->f,
            ",\n{\"name\":\"paralab zero\",\"ph\":\"M\",\"pid\":0,\"args\":{\"stage\":%d,"
            "\"ranks\":%d,\"psi\":%ld,\"psi_pad\":%ld,\"sgd\":%d}}",
            stage, ranks, psi, psi_pad, sgd);
    if (ferror(w->f)) w->failed = 1;
    return w->failed ? -1 : 0;
}

int pl_trace_writer_close(pl_trace_writer *w, char *err, size_t cap)
{
    if (!w) return 0;
    fputs("\n]}\n", w->f);
    int bad = w->failed || ferror(w->f);
    if (fclose(w->f) != 0) bad = 1;
    if (bad) snprintf(err, cap, "writing the trace %s failed: %s", w->path, strerror(errno));
    free(w);
    return bad ? -1 : 0;
}
