/*
 * paralab-viz — replays a trace written by a lab's --trace FILE.json (on a
 * simulated or a real GPU) with the visualiser's panes and controls.
 *
 *   build/sim/bin/paralab-viz FILE.json
 *   build/sim/bin/paralab-viz --check FILE.json
 *
 * --check reads the file and says whether every track's slices nest (as
 * Perfetto needs them): exit 0 if they do, 1 if not, 2 if unreadable.
 *
 * A missing, truncated or corrupt file: a message naming the file and the
 * position, exit status 2. Without a terminal it says what it read and
 * exits 1.
 */
#include <stdio.h>
#include <string.h>

#include "paralab/viz.h"

int main(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: paralab-viz FILE.json\n"
               "       paralab-viz --check FILE.json\n"
               "Replays a trace a lab wrote with --trace FILE.json as the lab played it: its\n"
               "narrated steps, a step a second at x1 (N steps: N seconds), each step's\n"
               "events and metrics, with the lab's controls (p play/pause, space next step,\n"
               "+ and - speed, z/Z zoom, arrows scroll, ? help, q quit).\n"
               "--check: says whether every track's slices nest, as Perfetto draws them\n"
               "(exit 0: they do, 1: they do not, 2: not a trace).\n");
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "--check")) {
        char msg[1024];
        int rc = pl_viz_check_trace(argv[2], msg, sizeof msg);
        fprintf(rc ? stderr : stdout, "paralab-viz: %s\n", msg);
        return rc;
    }
    if (argc == 2 && argv[1][0] == '-') {
        fprintf(stderr,
                "paralab-viz: unknown option '%s' (usage: paralab-viz [--check] FILE.json)\n",
                argv[1]);
        return 2;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: paralab-viz FILE.json (see --help)\n");
        return 2;
    }
    char err[1024];
    int rc = pl_viz_replay(argv[1], err, sizeof err);
    if (rc) fprintf(stderr, "paralab-viz: %s\n", err);
    return rc;
}
