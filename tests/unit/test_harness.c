/*
 * test_harness.c — the one lab harness (labs/harness), on a toy lab "lab99"
 * with two exercises: the device range and its refusal, --help, bad
 * options, the probe and --solution, the TODO banner (once per lab, or per
 * exercise by name), the [checks] block and the exit status. Each run is
 * pl_lab_main with its stdout and stderr captured in files, as the lab
 * binaries print them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../viz/vizint.h"
#include "harness/harness.h"
#include "paralab/exercise.h"
#include "suites.h"

/* ---- the toy lab ----------------------------------------------------------------- */

enum { KEY_WIDGETS = 300 };

static struct toy {
    int todo[2];     /* the exercise returns PL_TODO_STATUS */
    int fail[2];     /* its check fails */
    int probes;      /* probe calls */
    int checked[2];  /* use_solution + 1 of the last check run on it (0: none) */
    int calls;       /* the steps call the exercises (lazy TODO) */
    int step_fails;  /* the steps fail */
    int setup_fails; /* setup refuses */
    int wrong;       /* report: the run found something wrong */
    long widgets;
} toy;

static int on_option(int key, const char *arg, void *ctx, char *err, size_t cap)
{
    (void)ctx;
    if (key == KEY_WIDGETS && arg[0] >= '1' && arg[0] <= '9') {
        toy.widgets = atol(arg);
        return 0;
    }
    snprintf(err, cap, "--widgets '%s': from 1 to 9", arg);
    return 1;
}

static const pl_lab_option options[] = {
    {"widgets", 1, "W", "widgets to make (1..9)", KEY_WIDGETS},
    {0, 0, 0, 0, 0},
};

static const char *const exercise_names[] = {"alpha", "beta", NULL};

static void check(int ex, int use_solution, pl_check *c)
{
    toy.checked[ex] = use_solution + 1;
    if (!use_solution && toy.todo[ex])
        pl_check_todo(c);
    else
        pl_check_that(c, !(!use_solution && toy.fail[ex]), "%s is wrong", exercise_names[ex]);
}

static const pl_lab toy_entry = {"99_toy", exercise_names, check};

/* An exercise's call, as a lab without a probe makes it (here it asks the
 * exercise every time, and every time hears TODO). */
static void call(int ex)
{
    if (!toy.todo[ex]) return;
    pl_todo_mark("toy.c", 7 + ex);
    pl_lab_reference(ex);
}

static int probe(pl_rank *r)
{
    (void)r;
    toy.probes++;
    for (int ex = 0; ex < 2; ex++)
        if (toy.todo[ex]) {
            pl_todo_mark("toy.c", 7 + ex);
            pl_lab_found_todo(ex);
        }
    return 0;
}

static int setup(void *ctx, char *err, size_t cap)
{
    (void)ctx;
    if (toy.setup_fails) {
        snprintf(err, cap, "no room for %ld widgets", toy.widgets);
        return -1;
    }
    printf("paralab lab 99 — toy\n");
    return 2;
}

static int steps(pl_rank *r)
{
    if (pl_step(r, "the first step")) return 1;
    if (toy.calls)
        for (int k = 0; k < 2; k++) { /* twice: the banner comes once */
            call(0);
            call(1);
        }
    if (toy.step_fails) {
        snprintf(r->error, sizeof r->error, "the widget press jammed");
        return 1;
    }
    return pl_step(r, "the second step") != 0;
}

static int report(void *ctx)
{
    (void)ctx;
    return toy.wrong;
}

static pl_lab_def toy_def(int min, int max)
{
    pl_lab_def d = {.program = "lab99",
                    .summary = "Lab 99, a toy.",
                    .exercise = "labs/99_toy/exercise.c",
                    .title = "lab 99 toy",
                    .options = options,
                    .on_option = on_option,
                    .min_devices = min,
                    .max_devices = max,
                    .lab = &toy_entry,
                    .setup = setup,
                    .steps = steps,
                    .report = report};
    return d;
}

/* ---- running it ------------------------------------------------------------------ */

static char out[16384], err[16384];

static void slurp(FILE *f, char *buf, size_t cap)
{
    rewind(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* pl_lab_main(def, "lab99", args..., "--no-viz") with stdout and stderr in
 * out and err; its exit status. */
static int run(const pl_lab_def *def, ...)
{
    char *argv[16] = {"lab99"};
    int argc = 1;
    va_list ap;
    va_start(ap, def);
    for (char *a; (a = va_arg(ap, char *)) && argc < 14;) argv[argc++] = a;
    va_end(ap);
    argv[argc++] = "--no-viz";
    FILE *fo = tmpfile(), *fe = tmpfile();
    if (!fo || !fe) return -100;
    fflush(stdout);
    fflush(stderr);
    int keep_out = dup(1), keep_err = dup(2);
    dup2(fileno(fo), 1);
    dup2(fileno(fe), 2);
    memset(toy.checked, 0, sizeof toy.checked);
    toy.probes = 0;
    int rc = pl_lab_main(def, argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(keep_out, 1);
    dup2(keep_err, 2);
    close(keep_out);
    close(keep_err);
    slurp(fo, out, sizeof out);
    slurp(fe, err, sizeof err);
    return rc;
}

static int lines_with(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

#define BANNER "  ! exercise not attempted yet"

/* A line of the [checks] block, as pl_check_print writes it, up to the
 * detail: "  (yours)      PASS  99_toy    ...   alpha      ..." */
static const char *checks_line(const char *who, const char *word, const char *ex)
{
    static char buf[4][160];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, sizeof buf[0], "  %-11s  %s  %-20s %-16s", who, word, "99_toy", ex);
    return b;
}

static void reset(void) { memset(&toy, 0, sizeof toy); }

/* ---- the tests ------------------------------------------------------------------- */

static void test_device_range(void)
{
    reset();
    pl_lab_def one = toy_def(0, 1);
    CU_ASSERT_EQUAL(run(&one, "--devices", "2", NULL), 2);
    CU_ASSERT_STRING_EQUAL(err, "lab99: --devices 2: lab 99 runs on one device (--devices 1)\n");
    CU_ASSERT_STRING_EQUAL(out, "");
    pl_lab_def few = toy_def(2, 4);
    few.devices_rule = "toys come in pairs";
    CU_ASSERT_EQUAL(run(&few, "--devices", "1", NULL), 2);
    CU_ASSERT_STRING_EQUAL(err, "lab99: --devices 1: toys come in pairs (2..4)\n");
    CU_ASSERT_EQUAL(run(&few, "--devices", "5", NULL), 2);
    CU_ASSERT_STRING_EQUAL(err, "lab99: --devices 5: toys come in pairs (2..4)\n");
    pl_lab_def plain = toy_def(1, 2);
    CU_ASSERT_EQUAL(run(&plain, "-n", "3", NULL), 2);
    CU_ASSERT_STRING_EQUAL(err, "lab99: --devices 3: lab 99 needs 1 to 2 devices (1..2)\n");
    /* inside the range: the default is the lowest, and the lab runs */
    CU_ASSERT_EQUAL(run(&few, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "[1] the first step"));
    CU_ASSERT_EQUAL(pl_lab_options()->devices, 2);
    CU_ASSERT_EQUAL(run(&few, "--devices", "4", NULL), 0);
    CU_ASSERT_EQUAL(pl_lab_options()->devices, 4);
}

static void test_help_and_bad_options(void)
{
    reset();
    pl_lab_def one = toy_def(0, 1);
    CU_ASSERT_EQUAL(run(&one, "--help", NULL), 0);
    const char *head = "usage: lab99 [options]\nLab 99, a toy.\n";
    CU_ASSERT_EQUAL(strncmp(out, head, strlen(head)), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--widgets W "));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(out, "--solution        run the reference instead of your exercise\n"));
    const char *tail = "\nOne device: --devices is 1.\nYour code: labs/99_toy/exercise.c. Check it "
                       "with `make check`.\n";
    size_t n = strlen(out), t = strlen(tail);
    CU_ASSERT(n > t && strcmp(out + n - t, tail) == 0);
    CU_ASSERT_STRING_EQUAL(err, "");
    pl_lab_def many = toy_def(2, 8);
    many.solution_help = "the reference's widgets";
    CU_ASSERT_EQUAL(run(&many, "--help", NULL), 0);
    CU_ASSERT_PTR_NULL(strstr(out, "One device"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--solution        the reference's widgets\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n\nYour code: labs/99_toy/exercise.c."));
    /* a bad value of the lab's own option, and of a common one: exit 2 */
    CU_ASSERT_EQUAL(run(&one, "--widgets", "0", NULL), 2);
    CU_ASSERT_STRING_EQUAL(err, "lab99: --widgets '0': from 1 to 9\n");
    CU_ASSERT_STRING_EQUAL(out, "");
    CU_ASSERT_EQUAL(run(&one, "--speed", "fast", NULL), 2);
    CU_ASSERT_EQUAL(strncmp(err, "lab99: ", 7), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "fast"));
    CU_ASSERT_EQUAL(run(&one, "--solution=1", NULL), 2); /* --solution takes no value */
}

static void test_probe_and_solution(void)
{
    reset();
    pl_lab_def d = toy_def(0, 4);
    d.probe = probe;
    toy.todo[1] = 1;
    CU_ASSERT_EQUAL(run(&d, NULL), 0);
    CU_ASSERT_EQUAL(toy.probes, 1);
    /* the banner right after the title, for what the probe found */
    CU_ASSERT_EQUAL(strncmp(out,
                            "paralab lab 99 — toy\n" BANNER " — using the reference; open "
                            "labs/99_toy/exercise.c (PL_TODO at toy.c:8)\n[1] the first step\n",
                            strlen("paralab lab 99 — toy\n" BANNER " — using the reference; open "
                                   "labs/99_toy/exercise.c (PL_TODO at toy.c:8)\n[1] the "
                                   "first step\n")),
                    0);
    CU_ASSERT_EQUAL(lines_with(out, BANNER), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n[checks]\n"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(strstr(out, "\n[checks]\n"), checks_line("(yours)", "PASS", "alpha")));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, checks_line("(reference)", "PASS", "beta")));
    CU_ASSERT_EQUAL(toy.checked[0], 1); /* yours */
    CU_ASSERT_EQUAL(toy.checked[1], 2); /* the reference */
    /* both TODO, named: one banner naming both, no location */
    toy.todo[0] = 1;
    d.todo_names = 1;
    CU_ASSERT_EQUAL(run(&d, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n" BANNER " (alpha, beta) — using the reference there; "
                                       "open labs/99_toy/exercise.c\n[1] "));
    CU_ASSERT_EQUAL(lines_with(out, BANNER), 1);
    /* --solution: no probe, no banner, every check on the reference */
    CU_ASSERT_EQUAL(run(&d, "--solution", NULL), 0);
    CU_ASSERT_EQUAL(toy.probes, 0);
    CU_ASSERT_EQUAL(pl_lab_solution(), 1);
    CU_ASSERT_EQUAL(lines_with(out, BANNER), 0);
    CU_ASSERT_EQUAL(lines_with(out, "(reference)  PASS"), 2);
    CU_ASSERT_EQUAL(toy.checked[0], 2);
    CU_ASSERT_EQUAL(toy.checked[1], 2);
}

static void test_lazy_banner(void)
{
    reset();
    pl_lab_def d = toy_def(0, 1);
    toy.todo[0] = toy.todo[1] = 1;
    toy.calls = 1;
    /* one banner for the lab, at the first TODO, under its step */
    CU_ASSERT_EQUAL(run(&d, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "[1] the first step\n" BANNER " — using the reference; open "
                                       "labs/99_toy/exercise.c (PL_TODO at toy.c:7)\n[2] "));
    CU_ASSERT_EQUAL(lines_with(out, BANNER), 1);
    CU_ASSERT_EQUAL(lines_with(out, "(reference)  PASS"), 2);
    /* named: one banner each, with its own location */
    d.todo_names = 1;
    CU_ASSERT_EQUAL(run(&d, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, BANNER " (alpha) — using the reference there; open "
                                              "labs/99_toy/exercise.c (PL_TODO at toy.c:7)\n" BANNER
                                              " (beta) — using the reference there; open "
                                              "labs/99_toy/exercise.c (PL_TODO at toy.c:8)\n"));
    CU_ASSERT_EQUAL(lines_with(out, BANNER), 2);
    /* not called by the steps: found TODO by the checks, which then check
     * the reference and say so there */
    toy.calls = 0;
    toy.todo[0] = 0;
    CU_ASSERT_EQUAL(run(&d, NULL), 0);
    char want[512];
    snprintf(want, sizeof want,
             "\n[checks]\n%s (1 values checked)\n" BANNER " (beta) — using the reference there; "
             "open labs/99_toy/exercise.c (PL_TODO at toy.c:8)\n%s (1 values checked)\n",
             checks_line("(yours)", "PASS", "alpha"), checks_line("(reference)", "PASS", "beta"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    CU_ASSERT_EQUAL(toy.checked[1], 2);
}

static void test_exit_status(void)
{
    reset();
    pl_lab_def d = toy_def(0, 1);
    CU_ASSERT_EQUAL(run(&d, NULL), 0);
    CU_ASSERT_STRING_EQUAL(err, "");
    toy.fail[1] = 1; /* a check fails */
    CU_ASSERT_EQUAL(run(&d, NULL), 1);
    char want[256];
    snprintf(want, sizeof want, "%s beta is wrong\n", checks_line("(yours)", "FAIL", "beta"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    toy.fail[1] = 0;
    toy.wrong = 1; /* the run found something wrong, the checks pass */
    CU_ASSERT_EQUAL(run(&d, NULL), 1);
    CU_ASSERT_EQUAL(lines_with(out, "(yours)      PASS  "), 2);
    toy.wrong = 0;
    toy.setup_fails = 1; /* setup refuses: exit 2 before any step */
    CU_ASSERT_EQUAL(run(&d, "--widgets", "3", NULL), 2);
    CU_ASSERT_STRING_EQUAL(err, "lab99: no room for 3 widgets\n");
    CU_ASSERT_PTR_NULL(strstr(out, "[1]"));
    toy.setup_fails = 0;
    toy.step_fails = 1; /* a step fails: exit 1, no checks */
    CU_ASSERT_EQUAL(run(&d, NULL), 1);
    CU_ASSERT_EQUAL(strncmp(err, "lab99: ", 7), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "the widget press jammed"));
    CU_ASSERT_PTR_NULL(strstr(out, "[checks]"));
}

/* The shards pane's matrices pass through to the UI and the trace file:
 * tp 0 is --devices, the array filled by setup is the one read; a
 * description the pane cannot draw stops the run before its steps. */
static pl_viz_matrix toy_mx[2];
static int setup_matrices(void *ctx, char *why, size_t cap)
{
    toy_mx[0] = (pl_viz_matrix){"W1", 4, 8, 'c', 0};
    toy_mx[1] = (pl_viz_matrix){"Wc", 4, 2 * pl_lab_options()->devices + (int)toy.widgets, 'c', 1};
    return setup(ctx, why, cap);
}

static void test_shards_matrices(void)
{
    reset();
    char path[] = "/tmp/paralab-harness-XXXXXX", rerr[512];
    close(mkstemp(path));
    pl_lab_def d = toy_def(1, 4);
    d.panes = PL_PANE_BIT(PL_PANE_SHARDS);
    d.matrices = toy_mx;
    d.nmatrices = 2;
    d.setup = setup_matrices;
    CU_ASSERT_EQUAL(run(&d, "--devices", "2", "--trace", path, NULL), 0);
    viz_trace t;
    CU_ASSERT_EQUAL_FATAL(viz_read_trace(path, &t, rerr, sizeof rerr), 0);
    CU_ASSERT_EQUAL_FATAL(t.nmatrices, 2);
    CU_ASSERT_EQUAL(t.tp, 2); /* --devices */
    CU_ASSERT_STRING_EQUAL(t.matrices[1].name, "Wc");
    CU_ASSERT(t.matrices[1].cols == 4 && t.matrices[1].padded_cols == 1); /* setup's */
    CU_ASSERT(t.panes & PL_PANE_BIT(PL_PANE_SHARDS));
    viz_trace_free(&t);
    /* 2 x 2 + 1 = 5 columns do not cut into 2 */
    CU_ASSERT_EQUAL(run(&d, "--devices", "2", "--widgets", "1", NULL), 1);
    CU_ASSERT_STRING_EQUAL(err, "lab99: shards pane: matrix 1 (Wc): 5 columns, tp 2: allowed are "
                                "columns a multiple of tp, to cut into tp column shards\n");
    CU_ASSERT_PTR_NULL(strstr(out, "[1]"));
    /* a tp of the lab's own that does not divide the ranks */
    toy.widgets = 0;
    d.tp = 4;
    CU_ASSERT_EQUAL(run(&d, "--devices", "2", NULL), 1);
    CU_ASSERT_STRING_EQUAL(err, "lab99: shards pane: tp 4 does not divide the world's 2 ranks\n");
    unlink(path);
}

/* The pipeline pane's pipeline passes through to the trace file (the
 * description setup fills in is the one read); one the pane cannot draw
 * (stages not dividing the ranks) stops the run before its steps. */
static pl_viz_pipeline toy_pp;
static int setup_pipeline(void *ctx, char *why, size_t cap)
{
    toy_pp = (pl_viz_pipeline){
        pl_lab_options()->devices + (int)toy.widgets, 4, 1, "1f1b", 0.25, 0.2, 0, {0}};
    return setup(ctx, why, cap);
}

static void test_pipeline_description(void)
{
    reset();
    char path[] = "/tmp/paralab-harness-XXXXXX", rerr[512];
    close(mkstemp(path));
    pl_lab_def d = toy_def(1, 4);
    d.panes = PL_PANE_BIT(PL_PANE_PIPELINE);
    d.pipeline = &toy_pp;
    d.setup = setup_pipeline;
    CU_ASSERT_EQUAL(run(&d, "--devices", "2", "--trace", path, NULL), 0);
    viz_trace t;
    CU_ASSERT_EQUAL_FATAL(viz_read_trace(path, &t, rerr, sizeof rerr), 0);
    CU_ASSERT_EQUAL_FATAL(t.pipeline.stages, 2);
    CU_ASSERT_EQUAL(t.pipeline.micro_batches, 4);
    CU_ASSERT_STRING_EQUAL(t.pipeline.schedule, "1f1b");
    CU_ASSERT(t.pipeline.of_ideal == 0.25 && t.pipeline.of_total == 0.2);
    CU_ASSERT(t.panes & PL_PANE_BIT(PL_PANE_PIPELINE));
    viz_trace_free(&t);
    /* 3 stages on 2 ranks */
    CU_ASSERT_EQUAL(run(&d, "--devices", "2", "--widgets", "1", NULL), 1);
    CU_ASSERT_STRING_EQUAL(err, "lab99: pipeline pane: 3 stages for 2 ranks: allowed are a number "
                                "of stages that divides the world's ranks\n");
    CU_ASSERT_PTR_NULL(strstr(out, "[1]"));
    unlink(path);
}

/* The mesh pane's mesh passes through to the trace file (the one setup
 * fills in), with the pipeline's stage ranks; one the pane cannot draw
 * (not the world's ranks) stops the run before its steps. */
static pl_viz_mesh toy_mesh;
static pl_viz_pipeline toy_pp2;
static int setup_mesh(void *ctx, char *why, size_t cap)
{
    toy_mesh = (pl_viz_mesh){pl_lab_options()->devices / 2 + (int)toy.widgets, 1, 2, "picotron"};
    toy_pp2 = (pl_viz_pipeline){2, 4, 1, "1f1b", 0.25, 0.2, 1, {0}};
    toy_pp2.stage_rank[1] = toy_mesh.dp; /* dp 0 on stage 1, in picotron's order */
    return setup(ctx, why, cap);
}

static void test_mesh_description(void)
{
    reset();
    char path[] = "/tmp/paralab-harness-XXXXXX", rerr[512];
    close(mkstemp(path));
    pl_lab_def d = toy_def(1, 4);
    d.panes = PL_PANE_BIT(PL_PANE_MESH) | PL_PANE_BIT(PL_PANE_PIPELINE);
    d.mesh = &toy_mesh;
    d.pipeline = &toy_pp2;
    d.setup = setup_mesh;
    CU_ASSERT_EQUAL(run(&d, "--devices", "4", "--trace", path, NULL), 0);
    viz_trace t;
    CU_ASSERT_EQUAL_FATAL(viz_read_trace(path, &t, rerr, sizeof rerr), 0);
    CU_ASSERT_EQUAL(t.mesh.dp, 2);
    CU_ASSERT_EQUAL(t.mesh.tp, 1);
    CU_ASSERT_EQUAL(t.mesh.pp, 2);
    CU_ASSERT_STRING_EQUAL(t.mesh.order, "picotron");
    CU_ASSERT(t.panes & PL_PANE_BIT(PL_PANE_MESH));
    CU_ASSERT_EQUAL(t.pipeline.have_stage_rank, 1);
    CU_ASSERT(t.pipeline.stage_rank[0] == 0 && t.pipeline.stage_rank[1] == 2);
    viz_trace_free(&t);
    /* dp 3 x tp 1 x pp 2 on 4 ranks */
    CU_ASSERT_EQUAL(run(&d, "--devices", "4", "--widgets", "1", NULL), 1);
    CU_ASSERT_STRING_EQUAL(err, "lab99: mesh pane: dp x tp x pp = 3 x 1 x 2 = 6 ranks for a world "
                                "of 4: allowed are degrees whose product is the world's ranks\n");
    CU_ASSERT_PTR_NULL(strstr(out, "[1]"));
    unlink(path);
}

static int had_quiet;
static int init(void)
{
    had_quiet = getenv("SIMT_QUIET") != NULL;
    return 0;
}
static int cleanup(void)
{
    if (!had_quiet) unsetenv("SIMT_QUIET"); /* the harness sets it for a lab's process */
    return 0;
}

/* The memory pane's ZeRO run passes through to the trace file (the one
 * setup fills in, N from --devices); one the pane cannot draw (Ψ_pad not a
 * multiple of N) stops the run before its steps. */
static pl_viz_zero toy_zero;
static int setup_zero(void *ctx, char *why, size_t cap)
{
    int n = pl_lab_options()->devices;
    toy_zero = (pl_viz_zero){2, n, 71370, 71376 + (int)toy.widgets, 1};
    return setup(ctx, why, cap);
}

static void test_zero_description(void)
{
    reset();
    char path[] = "/tmp/paralab-harness-XXXXXX", rerr[512];
    close(mkstemp(path));
    pl_lab_def d = toy_def(1, 4);
    d.panes = PL_PANE_BIT(PL_PANE_MEMORY);
    d.zero = &toy_zero;
    d.setup = setup_zero;
    CU_ASSERT_EQUAL(run(&d, "--devices", "4", "--trace", path, NULL), 0);
    viz_trace t;
    CU_ASSERT_EQUAL_FATAL(viz_read_trace(path, &t, rerr, sizeof rerr), 0);
    CU_ASSERT_EQUAL(t.zero.stage, 2);
    CU_ASSERT_EQUAL(t.zero.ranks, 4);
    CU_ASSERT_EQUAL(t.zero.psi, 71370);
    CU_ASSERT_EQUAL(t.zero.psi_pad, 71376);
    CU_ASSERT_EQUAL(t.zero.sgd, 1);
    CU_ASSERT(t.panes & PL_PANE_BIT(PL_PANE_MEMORY));
    viz_trace_free(&t);
    /* Ψ_pad 71,378 on 4 ranks */
    CU_ASSERT_EQUAL(run(&d, "--devices", "4", "--widgets", "2", NULL), 1);
    CU_ASSERT_STRING_EQUAL(err, "lab99: memory pane: psi_pad 71378 for 4 ranks: allowed are "
                                "multiples of the ranks (each bucket is padded to a multiple of "
                                "N)\n");
    CU_ASSERT_PTR_NULL(strstr(out, "[1]"));
    unlink(path);
}

int register_harness_suite(void)
{
    static const unit_test t[] = {
        {"the device range", test_device_range},
        {"--help and bad options", test_help_and_bad_options},
        {"the probe and --solution", test_probe_and_solution},
        {"the TODO banner without a probe", test_lazy_banner},
        {"exit status", test_exit_status},
        {"the shards pane's matrices: to the UI and the trace, or refused", test_shards_matrices},
        {"the pipeline pane's pipeline: to the trace, or refused", test_pipeline_description},
        {"the mesh pane's mesh and the stage ranks: to the trace, or refused",
         test_mesh_description},
        {"the memory pane's ZeRO run: to the trace, or refused", test_zero_description},
    };
    return UNIT_SUITE_SETUP("harness", init, cleanup, t);
}
