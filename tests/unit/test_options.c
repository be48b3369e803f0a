/*
 * test_options.c — the options every lab takes: values, defaults, and the
 * message for every bad value (it names the value and what is allowed).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/options.h"
#include "suites.h"

enum { KEY_BATCH = 1003 }; /* the keys of the common options must not collide */

static int on_lab_option(int key, const char *arg, void *ctx, char *err, size_t cap)
{
    if (key != KEY_BATCH) return 1;
    int v = atoi(arg);
    if (v < 1) {
        snprintf(err, cap, "--batch '%s' must be a positive number", arg);
        return 1;
    }
    *(int *)ctx = v;
    return 0;
}

static const pl_lab_option lab_opts[] = {
    {"batch", 1, "B", "global batch size", KEY_BATCH},
    {0, 0, 0, 0, 0},
};

static pl_options_status parse(pl_options *o, int *batch, char *msg, size_t cap, ...)
{
    char *argv[32] = {"labxx"};
    int argc = 1;
    va_list ap;
    va_start(ap, cap);
    for (char *a; (a = va_arg(ap, char *)) && argc < 31;) argv[argc++] = a;
    va_end(ap);
    pl_options_defaults(o, 4);
    return pl_options_parse(o, argc, argv, "labxx", "a test lab", lab_opts, on_lab_option, batch,
                            msg, cap);
}

static void test_values(void)
{
    pl_options o;
    int batch = 0;
    char msg[2048];
    CU_ASSERT_EQUAL(parse(&o, &batch, msg, sizeof msg, (char *)NULL), PL_OPTIONS_OK);
    CU_ASSERT_EQUAL(o.devices, 4);
    CU_ASSERT_EQUAL(o.viz, 1);
    CU_ASSERT_EQUAL(o.mode, PL_MODE_PLAY);
    CU_ASSERT_EQUAL(o.comm, PL_COMM_AUTO);
    CU_ASSERT_DOUBLE_EQUAL(o.comm_timeout, 10.0, 0);
    CU_ASSERT_EQUAL(parse(&o, &batch, msg, sizeof msg, "-n", "8", "--no-viz", "--step", "--speed",
                          "2.5", "--trace", "t.json", "--seed", "18446744073709551615", "--hw",
                          "A100-SXM-80GB", "--comm", "local", "--comm-timeout", "0.5", "--batch",
                          "64", (char *)NULL),
                    PL_OPTIONS_OK);
    CU_ASSERT_EQUAL(o.devices, 8);
    CU_ASSERT_EQUAL(o.viz, 0);
    CU_ASSERT_EQUAL(o.mode, PL_MODE_STEP);
    CU_ASSERT_DOUBLE_EQUAL(o.speed, 2.5, 0);
    CU_ASSERT_STRING_EQUAL(o.trace, "t.json");
    CU_ASSERT_EQUAL(o.seed, 18446744073709551615ull);
    CU_ASSERT_STRING_EQUAL(o.hw, "A100-SXM-80GB");
    CU_ASSERT_EQUAL(o.comm, PL_COMM_LOCAL);
    CU_ASSERT_DOUBLE_EQUAL(o.comm_timeout, 0.5, 0);
    CU_ASSERT_EQUAL(batch, 64);
    CU_ASSERT_EQUAL(parse(&o, &batch, msg, sizeof msg, "--devices=2", (char *)NULL), PL_OPTIONS_OK);
    CU_ASSERT_EQUAL(o.devices, 2);
    /* a value that starts with --, given after = (as the next word it is
     * taken for a forgotten value: test_bad_values) */
    CU_ASSERT_EQUAL(
        parse(&o, &batch, msg, sizeof msg, "--trace=--odd.json", "--no-viz", (char *)NULL),
        PL_OPTIONS_OK);
    CU_ASSERT_STRING_EQUAL(o.trace, "--odd.json");
    CU_ASSERT_EQUAL(o.viz, 0);
}

static void test_help(void)
{
    pl_options o;
    int batch = 0;
    char msg[2048];
    CU_ASSERT_EQUAL(parse(&o, &batch, msg, sizeof msg, "--help", (char *)NULL), PL_OPTIONS_HELP);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "usage: labxx [options]\na test lab\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "  -n, --devices N "));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "      --batch B         global batch size\n"));
#ifdef PARALAB_SIMULATED_CUDA
    /* the presets --hw takes, wrapped at 80 columns */
    CU_ASSERT_PTR_NOT_NULL(strstr(msg,
                                  "      --hw PRESET       hardware preset for the modeled clock:\n"
                                  "                        H100-SXM (the default), H200-SXM, "
                                  "A100-SXM-80GB or\n"
                                  "                        RTX-4090\n"));
#endif
    for (const char *l = msg; *l;) { /* no line of the help wider than 80 columns */
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        if (len > 80) fprintf(stderr, "  a help line of %zu columns: %.*s\n", len, (int)len, l);
        CU_ASSERT(len <= 80);
        l += len + (e != NULL);
    }
}

static void test_bad_values(void)
{
    static const struct {
        const char *a, *b, *want;
    } cases[] = {
        {"-n", "0", "--devices '0' is not a whole number from 1 to 64"},
        {"--devices", "65", "--devices '65' is not a whole number from 1 to 64"},
        {"--devices", "four", "--devices 'four' is not a whole number from 1 to 64"},
        {"--speed", "0", "--speed '0' is not a number from 0.1 to 100"},
        {"--speed", "fast", "--speed 'fast' is not a number from 0.1 to 100"},
        {"--seed", "-1", "--seed '-1' is not a whole number from 0 to 18446744073709551615"},
        {"--seed", "1e3", "--seed '1e3' is not a whole number from 0 to 18446744073709551615"},
        {"--comm", "mpi", "--comm 'mpi' is not an engine: choose local or nccl"},
        {"--comm-timeout", "0", "--comm-timeout '0' is not a number from 0.1 to 3600"},
        {"--trace", "", "--trace needs a file name (FILE.json)"},
        {"--trace", "--no-viz",
         "option '--trace' needs a value, but the next word is the option '--no-viz' (see "
         "--help; for a value that starts with --, write --trace=VALUE)"},
        {"-n", "--no-viz",
         "option '-n' needs a value, but the next word is the option '--no-viz' (see --help)"},
        {"--batch", "--step",
         "option '--batch' needs a value, but the next word is the option '--step' (see "
         "--help; for a value that starts with --, write --batch=VALUE)"},
        {"--batch", "0", "--batch '0' must be a positive number"},
        {"--bogus", NULL, "unknown option '--bogus' (see --help)"},
        {"extra", NULL, "unexpected argument 'extra' (see --help)"},
        {"--step", "--play", "--step and --play exclude each other: choose one"},
        {"--speed", NULL, "option '--speed' needs a value (see --help)"},
        {"--devices", NULL, "option '--devices' needs a value (see --help)"},
        {"-n", NULL, "option '-n' needs a value (see --help)"},
        {"-xn", "3", "unknown option '-x' (see --help)"},
        {"--no-viz=3", NULL, "option '--no-viz=3' is unknown or takes no value (see --help)"},
        {"--seed", " 1", "--seed ' 1' is not a whole number from 0 to 18446744073709551615"},
        {"--seed", "+1", "--seed '+1' is not a whole number from 0 to 18446744073709551615"},
        {"--ranks-per-process", "0", "--ranks-per-process '0' is not a whole number from 1 to 64"},
#ifdef PARALAB_MPI
        {"--ranks-per-process", "2",
         "--ranks-per-process 2: only under mpirun (a world of one process has --devices N "
         "ranks)"},
#else
        {"--ranks-per-process", "2",
         "--ranks-per-process 2: only under mpirun with the MPI build (make mpi) (a world of "
         "one process has --devices N ranks)"},
#endif
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pl_options o;
        int batch = 0;
        char msg[2048];
        pl_options_status st =
            parse(&o, &batch, msg, sizeof msg, cases[i].a, cases[i].b, (char *)NULL);
        CU_ASSERT_EQUAL(st, PL_OPTIONS_ERROR);
        if (strcmp(msg, cases[i].want))
            fprintf(stderr, "  got  \"%s\"\n  want \"%s\"\n", msg, cases[i].want);
        CU_ASSERT_STRING_EQUAL(msg, cases[i].want);
    }
}

static void test_apply(void)
{
    pl_options o;
    char msg[1024];
    pl_options_defaults(&o, 4);
    CU_ASSERT_EQUAL(pl_options_apply(&o, "labxx", msg, sizeof msg), 0);
#ifdef PARALAB_SIMULATED_CUDA
    o.hw = "B300";
    CU_ASSERT_NOT_EQUAL(pl_options_apply(&o, "labxx", msg, sizeof msg), 0);
    CU_ASSERT_STRING_EQUAL(msg, "--hw 'B300' is not a preset: choose H100-SXM H200-SXM "
                                "A100-SXM-80GB RTX-4090");
    o.hw = NULL;
    o.devices = 64; /* the unit tests run with 16 */
    CU_ASSERT_NOT_EQUAL(pl_options_apply(&o, "labxx", msg, sizeof msg), 0);
    CU_ASSERT_STRING_EQUAL(msg, "--devices 64: there are 16 simulated devices "
                                "(SIMT_DEVICES, up to 64, makes more)");
    o.devices = 2;
    o.comm = PL_COMM_NCCL;
    CU_ASSERT_NOT_EQUAL(pl_options_apply(&o, "labxx", msg, sizeof msg), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "--comm nccl needs real GPUs"));
#endif
}

int register_options_suite(void)
{
    static const unit_test t[] = {
        {"values and defaults", test_values},
        {"--help lists the lab's options", test_help},
        {"every bad value named", test_bad_values},
        {"checks that need the devices", test_apply},
    };
    return UNIT_SUITE("options", t);
}
