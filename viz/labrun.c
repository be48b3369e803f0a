/*
 * labrun.c — pl_viz_run_lab (paralab/viz.h): how every lab runs its world,
 * with the terminal UI or as plain text, with or without a trace file.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "paralab/viz.h"
#include "paralab/watchdog.h"
#include "vizint.h"
#include "paralab/device.h"
#include "paralab/dist.h"
#include "vizint.h"

typedef struct {
    pl_trace *trace;
    pl_trace_writer *writer;
    pl_player *player;
    volatile int done;
} drainer;

/* Ctrl-C or SIGTERM while a headless run writes a trace: the ranks stop at
 * their next step and the file is finished, as the UI's q does. */
static volatile sig_atomic_t interrupted;
static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
    signal(sig, SIG_DFL); /* a second one stops the process at once */
}

/* The watchdog saw no progress: a kernel (or the host code) in an endless
 * loop, or ranks asked to stop that cannot reach their next step. With the
 * UI, its thread gives the terminal back first; headless, the report goes
 * out here. Either way the process ends: its ranks can never be joined. */
static void on_stall(const char *report, void *user)
{
    if (*(const int *)user) {
        viz_stalled(report);
        return;
    }
    fflush(stdout);
    if (interrupted)
        fprintf(stderr,
                "  stopped by the student (Ctrl-C): the ranks cannot reach their next step: "
                "%s\n",
                report);
    else
        fprintf(stderr,
                "  the run is stopped: %s: an endless loop? (--stall-timeout S allows "
                "longer)\n",
                report);
    _exit(interrupted ? 130 : 1);
}

/* Headless with a trace file: a thread drains the rings into the writer,
 * and turns an interruption into a quit of the player. */
static void *drain_loop(void *p)
{
    drainer *d = p;
    static pl_event buf[4096];
    int told = 0;
    pl_watchdog_ignore_thread(); /* polling the rings is not the ranks' work */
    for (;;) {
        if (interrupted && !told) {
            pl_player_quit(d->player);
            pl_watchdog_hurry(1.0);
            told = 1;
        }
        int last = __atomic_load_n(&d->done, __ATOMIC_ACQUIRE);
        size_t n = pl_trace_drain(d->trace, buf, 4096);
        if (n) pl_trace_writer_add(d->writer, buf, n);
        pl_trace_writer_take_notes(d->writer, d->trace); /* the steps and metrics */
        if (!n && last) return NULL;
        if (!n) usleep(1000);
    }
}

int pl_viz_run_lab(const pl_viz_config *vc, const pl_options *opt, int n, pl_rank_fn fn, void *arg,
                   int *quit, char *err, size_t err_size)
{
    *quit = 0;
    if (pl_viz_check_matrices(vc->matrices, vc->nmatrices, vc->tp, n, err, err_size) ||
        pl_viz_check_pipeline(vc->pipeline, n, err, err_size) ||
        pl_viz_check_mesh(vc->mesh, n, err, err_size) ||
        pl_viz_check_zero(vc->zero, n, err, err_size))
        return 1;
    char why[256];
    int ui = opt->viz && pl_viz_available(why, sizeof why);
    if (opt->viz && !ui && isatty(STDOUT_FILENO)) printf("  (%s)\n", why);
    /* with the UI the player starts in play mode, so that it does not read
     * stdin (the UI does), then takes the mode asked for */
    pl_player *player = pl_player_create(ui ? PL_MODE_PLAY : opt->mode, opt->speed,
                                         !ui && (!opt->viz || !isatty(STDOUT_FILENO)), stdout);
    if (!player) {
        snprintf(err, err_size, "out of memory");
        return 1;
    }
    if (ui) pl_player_set_mode(player, opt->mode, opt->speed);
    drainer dr = {0};
    if (opt->trace || ui) {
        dr.trace = pl_trace_create(n, 1 << 14, PL_TRACE_WAIT);
        if (!dr.trace) {
            pl_player_destroy(player);
            snprintf(err, err_size, "out of memory for the trace");
            return 1;
        }
    }
    if (opt->trace) {
        int modeled = pl_device_caps()->modeled;
        pl_trace_stamp origin = pl_trace_stamp_now(); /* the run starts now, on both clocks */
        double at = modeled ? origin.modeled_at : origin.at;
        if (pl_dist_procs() > 1) { /* under mpirun: this process's part (docs/multi-node.md) */
            int T = opt->ranks_per_process > 0 ? opt->ranks_per_process : 1;
            pl_trace_part part = {.process = pl_dist_proc(),
                                  .processes = pl_dist_procs(),
                                  .world = n,
                                  .first_rank = pl_dist_proc() * T,
                                  .nranks = T};
            if (part.process == 0) pl_trace_run_id(part.run, sizeof part.run);
            pl_dist_bcast_host(part.run, sizeof part.run); /* the same id in every part */
            char path[4096];
            if (pl_trace_path_for_process(opt->trace, part.process, part.processes, path,
                                          sizeof path) != 0) {
                snprintf(err, err_size, "--trace %s: the part's name is too long", opt->trace);
                pl_trace_destroy(dr.trace);
                pl_player_destroy(player);
                return 2;
            }
            dr.writer = pl_trace_writer_open_part(path, &part, modeled, at, err, err_size);
        } else
            dr.writer = pl_trace_writer_open(opt->trace, n, modeled, at, err, err_size);
        if (!dr.writer) {
            pl_trace_destroy(dr.trace);
            pl_player_destroy(player);
            return 2;
        }
        pl_trace_writer_describe(dr.writer, vc->title, vc->steps, vc->panes, vc->stream_lanes);
        for (int i = 0; i < vc->nmatrices; i++) /* the shards pane's, for a replay */
            pl_trace_writer_describe_matrix(dr.writer, vc->matrices[i].name, vc->matrices[i].rows,
                                            vc->matrices[i].cols, vc->matrices[i].split,
                                            vc->matrices[i].padded_cols, vc->tp);
        if (vc->pipeline) /* the pipeline pane's, for a replay */
            pl_trace_writer_describe_pipeline(
                dr.writer, vc->pipeline->stages, vc->pipeline->micro_batches, vc->pipeline->chunks,
                vc->pipeline->schedule, vc->pipeline->of_ideal, vc->pipeline->of_total,
                vc->pipeline->have_stage_rank ? vc->pipeline->stage_rank : NULL);
        if (vc->mesh) /* the mesh pane's */
            pl_trace_writer_describe_mesh(dr.writer, vc->mesh->dp, vc->mesh->tp, vc->mesh->pp,
                                          vc->mesh->order);
        if (vc->zero) /* the memory pane's */
            pl_trace_writer_describe_zero(dr.writer, vc->zero->stage, vc->zero->ranks,
                                          vc->zero->psi, vc->zero->psi_pad, vc->zero->sgd);
    }
    pthread_t drain_thread;
    dr.player = player;
    int draining = !ui && dr.writer && pthread_create(&drain_thread, NULL, drain_loop, &dr) == 0;
    if (draining) {
        interrupted = 0;
        signal(SIGINT, on_interrupt);
        signal(SIGTERM, on_interrupt);
    }
    /* real GPUs: a kernel's progress cannot be seen from the host */
    static int stall_ui;
    stall_ui = ui;
    int watching = pl_device_caps()->kernel_progress &&
                   pl_watchdog_start(opt->stall_timeout, on_stall, &stall_ui) == 0;
    pl_world_config cfg = {.n = n,
                           .comm_timeout_s = opt->comm_timeout,
                           .trace = dr.trace,
                           .player = player,
                           .comm = opt->comm,
                           .distributed = 1, /* under mpirun: every process's world */
                           .ranks_per_process = opt->ranks_per_process};
    int failed = ui ? pl_viz_run_world(vc, &cfg, fn, arg, dr.writer, quit, err, err_size)
                    : pl_world_run_config(&cfg, fn, arg, err, err_size);
    if (watching) pl_watchdog_stop();
    if (draining) {
        __atomic_store_n(&dr.done, 1, __ATOMIC_RELEASE);
        pthread_join(drain_thread, NULL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if (interrupted) { /* the ranks stopped at a step: not a failure of theirs */
            *quit = 2;
            failed = 0;
        }
    }
    if (!ui && !*quit && pl_player_quitting(player)) { /* q in plain-text step mode */
        *quit = 1;
        failed = 0;
    }
    if (*quit) printf("  stopped by the student%s\n", *quit == 2 ? " (Ctrl-C)" : "");
    if (dr.writer) {
        char werr[512];
        if (pl_trace_writer_close(dr.writer, werr, sizeof werr))
            fprintf(stderr, "%s\n", werr);
        else
            printf("  trace written to %s (open it in Perfetto, ui.perfetto.dev, or replay it: "
                   "paralab-viz %s)\n",
                   opt->trace, opt->trace);
    }
    pl_trace_destroy(dr.trace);
    pl_player_destroy(player);
    return failed;
}
