/* harness.c — see harness/harness.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "harness/harness.h"
#include "paralab/device.h"
#include "paralab/dist.h"
#include "paralab/exercise.h"
#include "paralab/picture.h"
#include "paralab/trace.h"
#include "paralab/viz.h"
#include "paralab/watchdog.h"

enum { MAX_EXERCISES = 16, MAX_OPTIONS = 64, KEY_SOLUTION = 65535 };

/* The run's state: one lab per process. */
static struct {
    const pl_lab_def *def;
    pl_options opt;
    int solution;
    int todo[MAX_EXERCISES];      /* found TODO: the reference runs there */
    int announced[MAX_EXERCISES]; /* its banner is out */
    int ui; /* the steps run in the terminal UI (as pl_viz_run_lab decides it) */
} H;
/* the exercise the probe asks now, + 1 (0: none): read by the watchdog's thread */
static _Atomic int probing;

const pl_options *pl_lab_options(void) { return &H.opt; }
int pl_lab_solution(void) { return H.solution; }
void pl_lab_set_devices(int devices) { H.opt.devices = devices; }

static int valid(int ex) { return ex >= 0 && ex < MAX_EXERCISES; }
int pl_lab_is_todo(int ex) { return valid(ex) && H.todo[ex]; }
int pl_lab_uses_reference(int ex) { return H.solution || pl_lab_is_todo(ex); }
void pl_lab_found_todo(int ex)
{
    if (valid(ex)) H.todo[ex] = 1;
}
void pl_lab_probing(int ex) { probing = valid(ex) ? ex + 1 : 0; }

static int exercises(void)
{
    int n = 0;
    while (n < MAX_EXERCISES && H.def->lab->exercises[n]) n++;
    return n;
}

/* "  ! exercise not attempted yet (names) — using the reference there; open
 * FILE (PL_TODO at file:line)": the names and the "there" when the banner
 * names exercises, the location when given. */
static void banner(const char *names, const char *where)
{
    printf("  ! exercise not attempted yet%s%s%s — using the reference%s; open %s",
           names ? " (" : "", names ? names : "", names ? ")" : "", names ? " there" : "",
           H.def->exercise);
    if (where) printf(" (PL_TODO at %s)", where);
    printf("\n");
}

void pl_lab_reference(int ex)
{
    if (!valid(ex)) return;
    H.todo[ex] = 1;
    if (H.def->todo_names) {
        if (!H.announced[ex]) banner(H.def->lab->exercises[ex], pl_todo_location());
        H.announced[ex] = 1;
        return;
    }
    for (int i = 0; i < MAX_EXERCISES; i++)
        if (H.announced[i]) return; /* one banner for the lab */
    banner(NULL, pl_todo_location());
    H.announced[ex] = 1;
}

/* After the probe and the title: one banner for every exercise it found
 * TODO; named ones without their locations (each has its own). */
static void probe_banner(void)
{
    char names[512] = "";
    int found = 0;
    for (int ex = 0; ex < exercises(); ex++) {
        if (!H.todo[ex]) continue;
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, "%s%s", found ? ", " : "",
                 H.def->lab->exercises[ex]);
        H.announced[ex] = 1;
        found++;
    }
    if (found)
        banner(H.def->todo_names ? names : NULL, H.def->todo_names ? NULL : pl_todo_location());
}

static int on_option(int key, const char *arg, void *ctx, char *err, size_t cap)
{
    (void)ctx;
    if (key == KEY_SOLUTION) {
        H.solution = 1;
        return 0;
    }
    if (!H.def->on_option) {
        snprintf(err, cap, "no handler for option key %d", key);
        return 1;
    }
    return H.def->on_option(key, arg, H.def->ctx, err, cap);
}

/* Options, devices, the device check: -1 to go on, or what main returns. */
static int start(const pl_lab_def *def, int argc, char **argv)
{
    char m[4096];
    pl_lab_option opts[MAX_OPTIONS + 2];
    int n = 0;
    for (; def->options && n < MAX_OPTIONS && def->options[n].name; n++) opts[n] = def->options[n];
    opts[n++] = (pl_lab_option){"solution", 0, "",
                                def->solution_help ? def->solution_help
                                                   : "run the reference instead of your exercise",
                                KEY_SOLUTION};
    opts[n] = (pl_lab_option){0, 0, 0, 0, 0};
    int lo = def->min_devices ? def->min_devices : 1;
    int hi = def->max_devices ? def->max_devices : PL_MAX_RANKS;
    pl_options_defaults(&H.opt, def->default_devices ? def->default_devices : lo);
    pl_options_status st = pl_options_parse(&H.opt, argc, argv, def->program, def->summary, opts,
                                            on_option, NULL, m, sizeof m);
    if (st == PL_OPTIONS_HELP) {
        printf("%s\n%sYour code: %s. Check it with `make check`.\n", m,
               hi == 1 ? "One device: --devices is 1.\n" : "", def->exercise);
        return 0;
    }
    if (st == PL_OPTIONS_ERROR) {
        fprintf(stderr, "%s: %s\n", def->program, m);
        return 2;
    }
    if (pl_dist_procs() > 1 && !def->multi_process) {
        fprintf(stderr,
                "%s: under mpirun (%d processes): lab %.2s runs in one process, so without mpirun "
                "only (labs 06 to 11 run under mpirun)\n",
                def->program, pl_dist_procs(), def->program + 3);
        return 2;
    }
    /* The lab's range: above it, before the options are applied (--devices
     * 2 for a one-device lab is the lab's rule, whatever the machine has);
     * below it, once they are. */
    char rule[256];
    if (def->devices_rule)
        snprintf(rule, sizeof rule, "%s", def->devices_rule);
    else if (hi == 1)
        snprintf(rule, sizeof rule, "lab %.2s runs on one device", def->program + 3);
    else
        snprintf(rule, sizeof rule, "lab %.2s needs %d to %d devices", def->program + 3, lo, hi);
    char range[64];
    if (lo == hi)
        snprintf(range, sizeof range, "--devices %d", lo);
    else
        snprintf(range, sizeof range, "%d..%d", lo, hi);
    if (H.opt.devices > hi) {
        fprintf(stderr, "%s: --devices %d: %s (%s)\n", def->program, H.opt.devices, rule, range);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* in order with stderr, even through a pipe */
    setenv("SIMT_QUIET", "1", 0);     /* a lab prints fault reports where they happen */
    if (pl_options_apply(&H.opt, def->program, m, sizeof m)) {
        /* more devices than there are: the lab may say which counts work */
        char hint[512] = "";
        int have = 0;
        if (def->devices_hint && cudaGetDeviceCount(&have) == cudaSuccess && have >= 1 &&
            H.opt.devices > have)
            def->devices_hint(def->ctx, have, hint, sizeof hint);
        fprintf(stderr, "%s: %s%s%s\n", def->program, m, hint[0] ? "; " : "", hint);
        return 2;
    }
    const char *why = pl_device_problem(def->program);
    if (why) {
        fprintf(stderr, "%s: %s\n", def->program, why);
        return 2;
    }
    if (H.opt.devices < lo) {
        fprintf(stderr, "%s: --devices %d: %s (%s)\n", def->program, H.opt.devices, rule, range);
        return 2;
    }
    return -1;
}

/* The steps, in the UI or as plain text: -1 once they ran, or what main
 * returns. */
static int run(const pl_lab_def *def, int nsteps)
{
    static char role_text[PL_MAX_RANKS][32];
    pl_viz_config vc = {.title = def->title,
                        .panes = PL_PANE_BIT(PL_PANE_DEVICES) | PL_PANE_BIT(PL_PANE_TIMELINE) |
                                 def->panes | PL_PANE_BIT(PL_PANE_METRICS),
                        .steps = nsteps,
                        .clock = pl_clock_name(),
                        .stream_lanes = def->stream_lanes,
                        .matrices = def->matrices,
                        .nmatrices = def->nmatrices,
                        .tp = def->tp > 0 ? def->tp : H.opt.devices,
                        .pipeline = def->pipeline,
                        .mesh = def->mesh,
                        .zero = def->zero,
                        .modeled = pl_device_caps()->modeled};
    for (int r = 0; def->role && r < H.opt.devices && r < PL_MAX_RANKS; r++) {
        snprintf(role_text[r], sizeof role_text[r], "%s %d", def->role, r);
        vc.roles[r] = role_text[r];
    }
    /* --step waits for a key at each step: say so when nothing can give one */
    if (H.opt.mode == PL_MODE_STEP) {
        char why[256];
        const char *no = !H.opt.viz                          ? "--no-viz prints them as plain text"
                         : !isatty(STDOUT_FILENO)            ? "stdout is not a terminal"
                         : pl_viz_available(why, sizeof why) ? NULL
                         : !isatty(STDIN_FILENO) ? "no UI here, and stdin is not a terminal"
                                                 : NULL;
        if (no)
            fprintf(stderr, "%s: --step: the steps run through without waiting (%s)\n",
                    def->program, no);
    }
    char err[2048], why[256];
    H.ui = H.opt.viz && pl_viz_available(why, sizeof why); /* pl_viz_run_lab's test */
    int quit = 0, failed = pl_viz_run_lab(&vc, &H.opt, H.opt.devices, def->steps, def->ctx, &quit,
                                          err, sizeof err);
    if (quit) return quit == 2 ? 130 : 0;
    if (failed != 2 && def->fault_shown && def->fault_shown(def->ctx)) {
        cudaDeviceReset(); /* a fault is sticky (on a real GPU, until the process ends) */
        cudaGetLastError();
        return -1;
    }
    if (failed) { /* with the emulator's report of a kernel's fault, if one stopped it */
        const char *fault = pl_fault_report();
        fprintf(stderr, "%s: %s\n%s%s%s", def->program, err, *fault ? "  " : "", fault,
                *fault ? "\n" : "");
        return failed == 2 ? 2 : 1;
    }
    return -1;
}

void pl_lab_picture(const pl_rank *r, const struct pl_picture *p)
{
    if (!r || !p || r->rank != 0) return; /* one rank draws it: the others' would repeat it */
    char why[256];
    if (pl_picture_check(p, why, sizeof why)) {
        fprintf(stderr, "%s: %s (not drawn)\n", H.def ? H.def->program : "lab", why);
        return;
    }
    pl_trace_note_picture(r->trace, p); /* the pane, and the trace file (--trace) */
    if (H.ui) return;
    /* plain text, indented as a step's detail lines: 2 + 78 columns */
    char *text = pl_viz_picture_text(p, 78, -1);
    if (!text) return;
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        int len = nl ? (int)(nl - line) : (int)strlen(line);
        printf("%s%.*s\n", len ? "  " : "", len, line);
        if (!nl) break;
        line = nl + 1;
    }
    fflush(stdout);
    free(text);
}

/* The [checks] block: every exercise as it ran, yours or the reference
 * (where yours is TODO, found now if the steps did not call it). 1 when
 * one did not pass. */
static int checks(const pl_lab_def *def)
{
    void (*check)(int, int, pl_check *) = def->check ? def->check : def->lab->check;
    printf("\n[checks]%s\n", def->checks_note ? def->checks_note : "");
    int bad = 0;
    for (int ex = 0; ex < exercises(); ex++) {
        pl_check chk;
        int ref = pl_lab_uses_reference(ex);
        pl_check_begin(&chk, def->lab->id, def->lab->exercises[ex]);
        check(ex, ref, &chk);
        if (chk.outcome == PL_TODO && !ref) { /* not run by the steps: check the reference */
            pl_lab_reference(ex);
            ref = 1;
            pl_check_begin(&chk, def->lab->id, def->lab->exercises[ex]);
            check(ex, ref, &chk);
        }
        printf("  %-11s  ", ref ? "(reference)" : "(yours)");
        pl_check_print(&chk, 0);
        bad |= chk.outcome != PL_PASS;
        if (cudaDeviceSynchronize() != cudaSuccess) { /* a fault is sticky: not the next one's */
            cudaDeviceReset();
            cudaGetLastError();
        }
    }
    return bad;
}

/* The probe and the setup call the student's code before the world (and
 * its watchdog) runs: an endless loop there is stopped the same way. */
static void on_early_stall(const char *report, void *user)
{
    const pl_lab_def *def = user;
    int ex = probing - 1; /* the exercise the probe asks (pl_lab_probing), if it said */
    char in[256] = "";
    if (valid(ex) && ex < exercises())
        snprintf(in, sizeof in, ", in %s (%s)", def->lab->exercises[ex], def->exercise);
    fflush(stdout);
    fprintf(stderr,
            "%s: stopped before the run: %s%s: an endless loop? (--stall-timeout S allows "
            "longer)\n",
            def->program, report, in);
    _exit(1);
}

int pl_lab_main(const pl_lab_def *def, int argc, char **argv)
{
    char err[2048];
    memset(&H, 0, sizeof H);
    H.def = def;
    int rc = start(def, argc, argv);
    if (rc >= 0) return rc;
    int watching = pl_device_caps()->kernel_progress &&
                   pl_watchdog_start(H.opt.stall_timeout, on_early_stall, (void *)def) == 0;
    if (def->probe && !H.solution) pl_world_run(1, NULL, 10, def->probe, def->ctx, err, sizeof err);
    pl_lab_probing(-1);
    int nsteps = 0;
    if (def->setup && (nsteps = def->setup(def->ctx, err, sizeof err)) < 0) {
        if (watching) pl_watchdog_stop();
        fprintf(stderr, "%s: %s\n", def->program, err);
        return 2;
    }
    if (watching) pl_watchdog_stop();
    probe_banner();
    if ((rc = run(def, nsteps)) >= 0) return rc;
    int wrong = def->report ? def->report(def->ctx) : 0;
    int bad = checks(def);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "%s: cannot write the output: %s\n", def->program, strerror(errno));
        return 1;
    }
    return bad || wrong ? 1 : 0;
}
