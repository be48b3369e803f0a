/* labmain.c — see paralab/labmain.h. */
#include <stdio.h>
#include <stdlib.h>

#include "paralab/device.h"
#include "paralab/labmain.h"
#include "paralab/viz.h"

int pl_lab_start(const pl_one_device_lab *lab, int argc, char **argv, pl_options *opt, char *msg,
                 size_t cap)
{
    char m[4096];
    if (cap) msg[0] = '\0';
    pl_options_defaults(opt, 1);
    pl_options_status st = pl_options_parse(opt, argc, argv, lab->program, lab->summary, lab->extra,
                                            lab->on_option, lab->ctx, m, sizeof m);
    if (st == PL_OPTIONS_HELP) {
        snprintf(msg, cap,
                 "%s\nOne device: --devices is 1.\nYour code: %s. Check it with `make check`.\n", m,
                 lab->exercise);
        return 0;
    }
    if (st == PL_OPTIONS_ERROR) {
        snprintf(msg, cap, "%s: %s\n", lab->program, m);
        return 2;
    }
    if (opt->devices != 1) {
        snprintf(msg, cap, "%s: --devices %d: lab %.2s runs on one device (--devices 1)\n",
                 lab->program, opt->devices, lab->program + 3);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* in order with stderr, even through a pipe */
    setenv("SIMT_QUIET", "1", 0);
    if (pl_options_apply(opt, lab->program, m, sizeof m)) {
        snprintf(msg, cap, "%s: %s\n", lab->program, m);
        return 2;
    }
    const char *why = pl_device_problem(lab->program);
    if (why) {
        snprintf(msg, cap, "%s: %s\n", lab->program, why);
        return 2;
    }
    return PL_LAB_GO;
}

int pl_lab_steps(const pl_one_device_lab *lab, int nsteps, const pl_options *opt, pl_rank_fn steps,
                 void *arg, char *msg, size_t cap)
{
    if (cap) msg[0] = '\0';
    pl_viz_config vc = {.title = lab->title,
                        .panes = PL_PANE_BIT(PL_PANE_DEVICES) | PL_PANE_BIT(PL_PANE_TIMELINE) |
                                 PL_PANE_BIT(PL_PANE_METRICS),
                        .steps = nsteps,
                        .clock = pl_clock_name(),
                        .stream_lanes = lab->stream_lanes,
                        .modeled = pl_device_caps()->modeled};
    char err[1024];
    int quit = 0, failed = pl_viz_run_lab(&vc, opt, 1, steps, arg, &quit, err, sizeof err);
    if (quit) return quit == 2 ? 130 : 0;
    if (failed) { /* with the emulator's report of a kernel's fault, if one stopped it */
        const char *fault = pl_fault_report();
        snprintf(msg, cap, "%s: %s\n%s%s%s", lab->program, err, *fault ? "  " : "", fault,
                 *fault ? "\n" : "");
        return failed == 2 ? 2 : 1;
    }
    return PL_LAB_GO;
}
