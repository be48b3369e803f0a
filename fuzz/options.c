/*
 * fuzz/options.c — libFuzzer target: the option parser every lab uses
 * (core/options.c, pl_options_parse) and the number parsers behind it and
 * the labs' own options (core/cli.c, pl_parse_long, pl_parse_double).
 *
 * Each input is a command line, one argument a line ("--devices\n4\n"; an
 * empty line is an empty argument), at most 62 arguments. It is parsed
 * with the common options and three lab options like the labs' (--size N,
 * a whole number 1..2^30, and --lr X, a number in (0, 10], through their
 * handler; --quiet, no value), then each argument alone as a whole number
 * and as a number.
 *
 * What it checks: the parser never crashes or reads past argv; it ends in
 * exactly one of OK, HELP (a usage text) or ERROR (a message); and what it
 * accepts is within the documented ranges.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memfile.h"
#include "paralab/cli.h"
#include "paralab/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { KEY_SIZE = 256, KEY_LR, KEY_QUIET };

typedef struct {
    long size;
    double lr;
    int quiet;
} lab_opts;

static int handler(int key, const char *arg, void *ctx, char *err, size_t cap)
{
    lab_opts *o = ctx;
    const char *e = NULL;
    switch (key) {
    case KEY_SIZE:
        e = pl_parse_long("--size", arg, 1, 1L << 30, &o->size);
        break;
    case KEY_LR:
        e = pl_parse_double("--lr", arg, 0, 10, 1, &o->lr);
        break;
    case KEY_QUIET:
        FUZZ_CHECK(arg == NULL, "--quiet takes no value, got '%s'", arg);
        o->quiet = 1;
        break;
    default:
        FUZZ_CHECK(0, "the handler got key %d", key);
    }
    if (e) snprintf(err, cap, "%s", e);
    return e ? -1 : 0;
}

static const pl_lab_option extra[] = {
    {"size", 1, "N", "the problem size", KEY_SIZE},
    {"lr", 1, "X", "the learning rate", KEY_LR},
    {"quiet", 0, NULL, "say less", KEY_QUIET},
    {0, 0, 0, 0, 0},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAX_ARGS = 62 };
    char *buf = malloc(size + 1), *argv[MAX_ARGS + 2];
    FUZZ_CHECK(buf != NULL, "out of memory");
    memcpy(buf, data, size);
    buf[size] = '\0';
    int argc = 0;
    argv[argc++] = "lab00";
    for (char *p = buf; argc <= MAX_ARGS;) { /* the lines, a last one without its '\n' */
        char *nl = memchr(p, '\n', (size_t)(buf + size - p));
        if (!nl && p == buf + size) break;
        if (nl) *nl = '\0';
        argv[argc++] = p;
        if (!nl) break;
        p = nl + 1;
    }
    argv[argc] = NULL;
    /* the parser permutes argv: keep what each argument was */
    char *given[MAX_ARGS + 2];
    memcpy(given, argv, sizeof argv);

    pl_options o;
    pl_options_defaults(&o, 2);
    lab_opts lab = {1024, 0.1, 0};
    char msg[4096];
    memset(msg, 'x', sizeof msg); /* the parser must write its message, not leave this */
    pl_options_status st = pl_options_parse(&o, argc, argv, "lab00", "A fuzzed lab.", extra,
                                            handler, &lab, msg, sizeof msg);
    FUZZ_CHECK(memchr(msg, '\0', sizeof msg) != NULL, "the message is not terminated");
    switch (st) {
    case PL_OPTIONS_OK:
        FUZZ_CHECK(msg[0] == '\0', "OK with a message: '%s'", msg);
        FUZZ_CHECK(o.devices >= 1 && o.devices <= 64, "--devices %d", o.devices);
        FUZZ_CHECK(o.speed >= 0.1 && o.speed <= 100, "--speed %g", o.speed);
        FUZZ_CHECK(o.comm_timeout >= 0.1 && o.comm_timeout <= 3600, "--comm-timeout %g",
                   o.comm_timeout);
        FUZZ_CHECK(o.stall_timeout >= 0.1 && o.stall_timeout <= 86400, "--stall-timeout %g",
                   o.stall_timeout);
        FUZZ_CHECK(o.mode == PL_MODE_PLAY || o.mode == PL_MODE_STEP, "mode %d", (int)o.mode);
        FUZZ_CHECK(o.viz == 0 || o.viz == 1, "viz %d", o.viz);
        FUZZ_CHECK(!o.trace || *o.trace, "--trace with an empty name accepted");
        FUZZ_CHECK(lab.size >= 1 && lab.size <= 1L << 30, "--size %ld", lab.size);
        FUZZ_CHECK(lab.lr > 0 && lab.lr <= 10, "--lr %g", lab.lr);
        break;
    case PL_OPTIONS_HELP:
        FUZZ_CHECK(!strncmp(msg, "usage: lab00 [options]\n", 23), "help: '%.80s'", msg);
        break;
    case PL_OPTIONS_ERROR:
        FUZZ_CHECK(msg[0] != '\0', "an error without a message");
        break;
    default:
        FUZZ_CHECK(0, "status %d", (int)st);
    }

    /* each argument alone, as the number parsers take a lab's values */
    for (int i = 1; i < argc; i++) {
        long lv = -1;
        double dv = NAN;
        const char *e = pl_parse_long("--n", given[i], -1000, 1000, &lv);
        FUZZ_CHECK(e ? !strncmp(e, "--n '", 5) : lv >= -1000 && lv <= 1000,
                   "pl_parse_long('%s'): %s, %ld", given[i], e ? e : "accepted", lv);
        e = pl_parse_double("--x", given[i], 0, 1e6, 1, &dv);
        FUZZ_CHECK(e ? !strncmp(e, "--x '", 5) : dv > 0 && dv <= 1e6,
                   "pl_parse_double('%s'): %s, %g", given[i], e ? e : "accepted", dv);
    }
    free(buf);
    return 0;
}
