/*
 * fuzz/roundtrip.c — libFuzzer target: a trace paralab writes, read back.
 *
 * The input is read as what a lab records: a title, then events (a rank,
 * lane, kind, stream and label of any bytes), narrated steps (a text of any
 * bytes), metric values (a name of any bytes, any double: NaN and
 * infinities too) and memory samples, in that order in time. They are
 * written by pl_trace_writer (core/trace.c, what --trace FILE.json does)
 * and read back by viz_read_trace (what paralab-viz replays). What it
 * checks: every file the writer writes is read back (a trace paralab wrote
 * always replays), with the same events, steps, metrics and samples; a
 * text that is valid UTF-8 comes back as it was (the writer replaces the
 * bytes of one that is not).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../viz/vizint.h"
#include "memfile.h"
#include "paralab/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    const uint8_t *p;
    size_t n;
} input;

static unsigned byte(input *in)
{
    if (!in->n) return 0;
    in->n--;
    return *in->p++;
}

/* A string of up to max bytes (no NUL) into s[max + 1]: a length byte, then
 * the bytes. */
static void text(input *in, char *s, size_t max)
{
    size_t len = byte(in) % (max + 1), k = 0;
    while (k < len && in->n) {
        unsigned c = byte(in);
        s[k++] = (char)(c ? c : 'x');
    }
    s[k] = '\0';
}

/* Whether s is UTF-8 as RFC 3629 has it (what JSON readers take). */
static int valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p, cp,
                 n = c < 0x80   ? 0
                     : c < 0xc2 ? 9
                     : c < 0xe0 ? 1
                     : c < 0xf0 ? 2
                     : c < 0xf5 ? 3
                                : 9;
        if (n == 9) return 0;
        cp = n == 0 ? c : n == 1 ? c & 0x1f : n == 2 ? c & 0x0f : c & 0x07;
        for (unsigned i = 1; i <= n; i++) {
            if ((p[i] & 0xc0) != 0x80) return 0;
            cp = cp << 6 | (p[i] & 0x3f);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        p += n + 1;
    }
    return 1;
}

enum { MAX_RECORDS = 256 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, size};
    int nranks = 1 + (int)(byte(&in) % 8), modeled = (int)(byte(&in) & 1);
    char title[64];
    text(&in, title, 63);
    static pl_event ev[MAX_RECORDS];
    static pl_note notes[MAX_RECORDS];
    static char texts[MAX_RECORDS][201];
    size_t nev = 0, nnotes = 0;
    const char *path = fuzz_memfile(NULL, 0);
    char err[512] = "";
    pl_trace_writer *w = pl_trace_writer_open(path, nranks, modeled, 0, err, sizeof err);
    FUZZ_CHECK(w != NULL, "pl_trace_writer_open: %s", err);
    FUZZ_CHECK(pl_trace_writer_describe(w, title, 0, 0, 0) == 0, "describe");
    /* every record 1 ms after the one before: the reader sorts by time */
    for (int k = 1; in.n && nev + nnotes < MAX_RECORDS; k++) {
        double at = k * 1e-3;
        unsigned what = byte(&in) % 4;
        if (what == 0) { /* an event */
            pl_event *e = &ev[nev++];
            memset(e, 0, sizeof *e);
            e->rank = (int32_t)(byte(&in) % (unsigned)nranks);
            e->lane = (uint8_t)(byte(&in) % PL_NUM_LANES);
            e->kind = (uint8_t)(byte(&in) % PL_NUM_EVENT_KINDS);
            e->stream = (uint8_t)(byte(&in) % 5);
            e->micro_batch = e->layer = e->peer = -1;
            e->bytes = byte(&in);
            e->start = e->modeled_start = at;
            e->end = e->modeled_end = at + byte(&in) * 1e-6;
            text(&in, e->label, sizeof e->label - 1);
            FUZZ_CHECK(pl_trace_writer_add(w, e, 1) == 0, "add");
            continue;
        }
        pl_note *x = &notes[nnotes];
        memset(x, 0, sizeof *x);
        x->at = x->modeled_at = at;
        if (what == 1) { /* a narrated step */
            x->kind = PL_NOTE_STEP;
            x->step = (int)nnotes + 1;
            text(&in, texts[nnotes], 200);
            x->text = texts[nnotes];
        } else if (what == 2) { /* a metric value: 8 bytes of a double */
            x->kind = PL_NOTE_METRIC;
            text(&in, x->name, sizeof x->name - 1);
            uint64_t bits = 0;
            for (int b = 0; b < 8; b++) bits = bits << 8 | byte(&in);
            memcpy(&x->value, &bits, sizeof x->value);
        } else { /* a memory sample: whole bytes */
            x->kind = PL_NOTE_MEMORY;
            x->rank = (int)(byte(&in) % (unsigned)nranks);
            x->value = byte(&in) * 1048576.0;
            x->total = x->value + byte(&in) * 1048576.0;
        }
        FUZZ_CHECK(pl_trace_writer_add_notes(w, x, 1) == 0, "add_notes");
        nnotes++;
    }
    FUZZ_CHECK(pl_trace_writer_close(w, err, sizeof err) == 0, "close: %s", err);

    viz_trace t;
    FUZZ_CHECK(viz_read_trace(path, &t, err, sizeof err) == 0,
               "a trace paralab wrote is not read back: %s", err);
    if (valid_utf8(title))
        FUZZ_CHECK(!strcmp(t.title, title), "title '%s', written '%s'", t.title, title);
    FUZZ_CHECK(t.nev == nev, "%zu events read, %zu written", t.nev, nev);
    for (size_t i = 0; i < nev; i++) {
        const pl_event *a = &t.ev[i], *e = &ev[i];
        const char *label = e->label[0] ? e->label : pl_event_kind_name((pl_event_kind)e->kind);
        FUZZ_CHECK(a->rank == e->rank && a->kind == e->kind && a->bytes == e->bytes &&
                       (e->stream ? a->stream == e->stream : 1),
                   "event %zu: rank %d kind %d bytes %llu stream %d, written %d %d %llu %d", i,
                   (int)a->rank, (int)a->kind, (unsigned long long)a->bytes, (int)a->stream,
                   (int)e->rank, (int)e->kind, (unsigned long long)e->bytes, (int)e->stream);
        FUZZ_CHECK(fabs(a->start - e->start) < 1e-9 && fabs(a->end - e->end) < 2e-9,
                   "event %zu: %.9f..%.9f, written %.9f..%.9f", i, a->start, a->end, e->start,
                   e->end);
        if (valid_utf8(label))
            FUZZ_CHECK(!strcmp(a->label, label), "event %zu: label '%s', written '%s'", i, a->label,
                       label);
        else
            FUZZ_CHECK(strlen(a->label) <= strlen(label), "event %zu: label '%s', written '%s'", i,
                       a->label, label);
    }
    size_t nm = 0, nmet = 0, nmem = 0;
    for (size_t i = 0; i < nnotes; i++) {
        const pl_note *x = &notes[i];
        if (x->kind == PL_NOTE_STEP) {
            FUZZ_CHECK(nm < (size_t)t.nmarks, "%d steps read, more written", t.nmarks);
            const viz_mark *m = &t.marks[nm++];
            FUZZ_CHECK(m->step == x->step, "step %d, written %d", m->step, x->step);
            if (valid_utf8(x->text))
                FUZZ_CHECK(!strcmp(m->text, x->text), "step %d: '%s', written '%s'", m->step,
                           m->text, x->text);
        } else if (x->kind == PL_NOTE_METRIC) {
            FUZZ_CHECK(nmet < t.nmetrics, "%zu metrics read, more written", t.nmetrics);
            const viz_metric_note *m = &t.metrics[nmet++];
            if (valid_utf8(x->name))
                FUZZ_CHECK(!strcmp(m->name, x->name), "metric '%s', written '%s'", m->name,
                           x->name);
            FUZZ_CHECK(isfinite(x->value) ? m->value == x->value : isnan(m->value),
                       "metric %s: %.17g, written %.17g", x->name, m->value, x->value);
        } else {
            FUZZ_CHECK(nmem < t.nmemory, "%zu memory samples read, more written", t.nmemory);
            const viz_memory_note *m = &t.memory[nmem++];
            FUZZ_CHECK(m->rank == x->rank && m->used == x->value && m->total == x->total,
                       "memory of rank %d: %.0f of %.0f, written rank %d: %.0f of %.0f", m->rank,
                       m->used, m->total, x->rank, x->value, x->total);
        }
    }
    FUZZ_CHECK(nm == (size_t)t.nmarks && nmet == t.nmetrics && nmem == t.nmemory,
               "%d steps, %zu metrics, %zu samples read; %zu, %zu, %zu written", t.nmarks,
               t.nmetrics, t.nmemory, nm, nmet, nmem);
    viz_trace_free(&t);
    return 0;
}
