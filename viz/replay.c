/*
 * replay.c — reads a Chrome trace written by pl_trace_writer (--trace) back
 * into events, with jansson. Every "X" event becomes a pl_event: pid the
 * rank, tid the lane, cat the kind, name the label, ts and dur (µs) the
 * start and end in seconds, args the bytes, FLOPs, micro-batch, layer and
 * peer. Metadata ("M") events are skipped. The clock the file was written
 * on is in otherData.clock ("modeled" or "measured"; absent: measured).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

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

int pl_viz_read_trace(const char *path, pl_event **out, size_t *n, int *nranks, int *modeled,
                      char *err, size_t cap)
{
    *out = NULL;
    *n = 0;
    *nranks = 0;
    *modeled = 0;
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
    *modeled = json_is_string(clock) && !strcmp(json_string_value(clock), "modeled");
    size_t total = json_array_size(events), k = 0;
    pl_event *ev = malloc((total ? total : 1) * sizeof *ev);
    if (!ev) {
        snprintf(err, cap, "%s: out of memory for %zu events", path, total);
        json_decref(root);
        return -1;
    }
    for (size_t i = 0; i < total; i++) {
        json_t *e = json_array_get(events, i), *ph = json_object_get(e, "ph");
        if (!json_is_object(e) || !json_is_string(ph)) {
            snprintf(err, cap, "%s: event %zu: not an object with a \"ph\"", path, i);
            goto bad;
        }
        if (strcmp(json_string_value(ph), "X")) continue; /* metadata */
        json_t *name = json_object_get(e, "name"), *cat = json_object_get(e, "cat");
        json_t *pid = json_object_get(e, "pid"), *tid = json_object_get(e, "tid");
        json_t *ts = json_object_get(e, "ts"), *dur = json_object_get(e, "dur");
        json_t *args = json_object_get(e, "args");
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
        long long rank = json_integer_value(pid), lane = json_integer_value(tid);
        if (kind < 0 || rank < 0 || rank >= PL_MAX_RANKS || lane < 0 || lane >= PL_NUM_LANES) {
            snprintf(err, cap,
                     "%s: event %zu: %s (cat \"%s\", pid %lld, tid %lld): allowed are the kinds "
                     "paralab writes, pid 0..%d and tid 0..%d",
                     path, i, kind < 0 ? "unknown kind" : "rank or lane out of range",
                     json_string_value(cat), rank, lane, PL_MAX_RANKS - 1, PL_NUM_LANES - 1);
            goto bad;
        }
        pl_event x;
        memset(&x, 0, sizeof x);
        x.rank = (int32_t)rank;
        x.lane = (uint8_t)lane;
        x.kind = (uint8_t)kind;
        x.start = json_number_value(ts) * 1e-6;
        x.end = x.start + json_number_value(dur) * 1e-6;
        if (*modeled) { /* the file's clock is the simulated GPU's: keep it as such */
            x.modeled_start = x.start;
            x.modeled_end = x.end;
        }
        snprintf(x.label, sizeof x.label, "%s", json_string_value(name));
        long long mb = -1, layer = -1, peer = -1, bytes = 0;
        if (args && (int_arg(args, "micro_batch", 0, 1 << 30, &mb) ||
                     int_arg(args, "layer", 0, 1 << 30, &layer) ||
                     int_arg(args, "peer", 0, PL_MAX_RANKS - 1, &peer) ||
                     int_arg(args, "bytes", 0, (long long)1 << 62, &bytes))) {
            snprintf(err, cap,
                     "%s: event %zu: an argument (micro_batch, layer, peer, bytes) is "
                     "not a whole number in range",
                     path, i);
            goto bad;
        }
        json_t *fl = args ? json_object_get(args, "flops") : NULL;
        x.flops = json_is_number(fl) ? json_number_value(fl) : 0;
        x.micro_batch = (int32_t)mb;
        x.layer = (int32_t)layer;
        x.peer = (int32_t)peer;
        x.bytes = (uint64_t)bytes;
        if (x.rank + 1 > *nranks) *nranks = x.rank + 1;
        ev[k++] = x;
    }
    json_decref(root);
    *out = ev;
    *n = k;
    return 0;
bad:
    free(ev);
    json_decref(root);
    return -1;
}
