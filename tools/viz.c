/*
 * paralab-viz — replays a trace written by a lab's --trace FILE.json (on a
 * simulated or a real GPU) with the visualiser's panes and controls, as the
 * lab played it: its narrated steps, a step a second at x1.
 *
 *   build/sim/bin/paralab-viz [--step | --play] [--speed X] FILE.json
 *   build/sim/bin/paralab-viz --check FILE.json
 *
 * A multi-process run (mpirun) writes a part per process, FILE.p0.json,
 * FILE.p1.json ...: given them all, or FILE.json (the name given to
 * --trace) when that file does not exist, it merges them into one timeline
 * of every rank; parts of different runs or worlds are refused.
 *
 * A missing, truncated or corrupt file: a message naming the file and the
 * position, exit status 2; a bad option or value: a message naming it,
 * exit 2. Without a terminal it says what it read and exits 1. --check
 * reads the file and says whether every track's slices nest (as Perfetto
 * needs them): exit 0 if they do, 1 if not, 2 if unreadable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/viz.h"

static const char usage[] =
    "usage: paralab-viz [--step | --play] [--speed X] FILE.json [FILE.p1.json ...]\n"
    "       paralab-viz --check FILE.json [FILE.p1.json ...]\n";

int main(int argc, char **argv)
{
    pl_mode mode = PL_MODE_PLAY;
    double speed = 1;
    int check = 0;
    const char *paths[64];
    int npaths = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("%s"
                   "Replays a trace a lab wrote with --trace FILE.json as the lab played it: its\n"
                   "narrated steps with their events and metrics, the devices, the timeline, the\n"
                   "topology, with the lab's controls (p play/pause, space next step, + and -\n"
                   "speed, z/Z zoom, arrows scroll, ? help, q quit). Each step's events appear\n"
                   "over the first half of its time; idle time in the trace takes none.\n"
                   "\n"
                   "  --step        start paused at step 1 (space: the next step)\n"
                   "  --play        play (the default)\n"
                   "  --speed X     steps a second, 0.1..100 (default 1): N steps take N/X s\n"
                   "  --check       say whether every track's slices nest, as Perfetto draws\n"
                   "                them (exit 0: they do, 1: they do not, 2: not a trace)\n"
                   "\n"
                   "A run under mpirun writes a part per process (--trace run.json: run.p0.json,\n"
                   "run.p1.json, ...): give every part, or run.json, to see them merged into one\n"
                   "timeline of every rank (each part on its own process's clock).\n",
                   usage);
            return 0;
        } else if (!strcmp(a, "--step"))
            mode = PL_MODE_STEP;
        else if (!strcmp(a, "--play"))
            mode = PL_MODE_PLAY;
        else if (!strcmp(a, "--check"))
            check = 1;
        else if (!strcmp(a, "--speed")) {
            char *end = NULL;
            const char *v = i + 1 < argc ? argv[++i] : "";
            speed = strtod(v, &end);
            if (!*v || *end || !(speed >= 0.1 && speed <= 100)) {
                fprintf(stderr,
                        "paralab-viz: --speed '%s': allowed are 0.1 to 100 (steps a "
                        "second)\n",
                        v);
                return 2;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "paralab-viz: unknown option '%s' (%s)\n", a, "see --help");
            fprintf(stderr, "%s", usage);
            return 2;
        } else if (npaths == 64) {
            fprintf(stderr, "paralab-viz: '%s': at most 64 files (a part per process)\n%s", a,
                    usage);
            return 2;
        } else
            paths[npaths++] = a;
    }
    if (!npaths) {
        fprintf(stderr, "%s(see --help)\n", usage);
        return 2;
    }
    char msg[2048];
    if (check) {
        int rc = pl_viz_check_traces(paths, npaths, msg, sizeof msg);
        fprintf(rc ? stderr : stdout, "paralab-viz: %s\n", msg);
        return rc;
    }
    int rc = pl_viz_replay_traces(paths, npaths, mode, speed, msg, sizeof msg);
    if (rc) fprintf(stderr, "paralab-viz: %s\n", msg);
    return rc;
}
