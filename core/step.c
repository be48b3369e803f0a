/* step.c — see paralab/step.h. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "paralab/step.h"
#include "paralab/trace.h"

struct pl_player {
    pl_mode mode;
    double speed;
    int headless;
    FILE *out;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int step;          /* the current step's number */
    unsigned advances; /* how often the student advanced */
    int quit;
    char narration[1024];
    pthread_t reader;
    int reader_started;
    int interactive;          /* something will call pl_player_advance */
    int quiet;                /* a UI shows the narration: do not print it */
    unsigned seen;            /* advances when the current step was shown */
    struct timespec shown_at; /* when it was shown (play mode paces from it) */
};

/* Step mode on a terminal: Enter advances, q (then Enter) quits. */
static void *read_keys(void *arg)
{
    pl_player *p = arg;
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        if (line[0] == 'q') {
            pl_player_quit(p);
            break;
        }
        pl_player_advance(p);
    }
    return NULL;
}

pl_player *pl_player_create(pl_mode mode, double speed, int headless, FILE *out)
{
    pl_player *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->mode = mode;
    p->speed = speed > 0 ? speed : 1;
    p->headless = headless;
    p->out = out ? out : stdout;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (!headless && mode == PL_MODE_STEP && isatty(STDIN_FILENO) &&
        pthread_create(&p->reader, NULL, read_keys, p) == 0) {
        pthread_detach(p->reader);
        p->reader_started = p->interactive = 1;
    }
    return p;
}

void pl_player_destroy(pl_player *p)
{
    if (!p) return;
    if (p->reader_started) return; /* the detached reader may still use it: keep it */
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cv);
    free(p);
}

void pl_player_set_interactive(pl_player *p, int on)
{
    pthread_mutex_lock(&p->lock);
    p->interactive = on;
    pthread_mutex_unlock(&p->lock);
}

void pl_player_set_quiet(pl_player *p, int on)
{
    pthread_mutex_lock(&p->lock);
    p->quiet = on;
    pthread_mutex_unlock(&p->lock);
}

void pl_player_set_mode(pl_player *p, pl_mode mode, double speed)
{
    pthread_mutex_lock(&p->lock);
    p->mode = mode;
    if (speed > 0) p->speed = speed;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->lock);
}

pl_mode pl_player_mode(pl_player *p, double *speed)
{
    pthread_mutex_lock(&p->lock);
    pl_mode m = p->mode;
    if (speed) *speed = p->speed;
    pthread_mutex_unlock(&p->lock);
    return m;
}

void pl_player_advance(pl_player *p)
{
    pthread_mutex_lock(&p->lock);
    p->advances++;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->lock);
}

void pl_player_quit(pl_player *p)
{
    pthread_mutex_lock(&p->lock);
    p->quit = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->lock);
}

int pl_player_current(pl_player *p, char *buf, size_t cap)
{
    pthread_mutex_lock(&p->lock);
    int k = p->step;
    snprintf(buf, cap, "%s", p->narration);
    pthread_mutex_unlock(&p->lock);
    return k;
}

/* Rank 0: show the narration and wait for the release. 1 if quitting. */
static int show(pl_player *p, const char *text)
{
    pthread_mutex_lock(&p->lock);
    /* First the release of the step before: the student has read it and
     * watched its work (the lab prints and runs after its pl_step). The mode
     * and speed may change while it waits (the UI's p, + and -): every change
     * wakes it and it looks again. An advance always releases, in play mode
     * too. */
    while (p->step > 0 && !p->headless && !p->quit && p->advances == p->seen) {
        if (p->mode == PL_MODE_PLAY) {
            double s = 1.0 / p->speed;
            struct timespec dl = p->shown_at;
            long ns = dl.tv_nsec + (long)((s - (long)s) * 1e9);
            dl.tv_sec += (time_t)s + ns / 1000000000L;
            dl.tv_nsec = ns % 1000000000L;
            if (pthread_cond_timedwait(&p->cv, &p->lock, &dl) == ETIMEDOUT) break;
        } else if (p->interactive)
            pthread_cond_wait(&p->cv, &p->lock);
        else
            break;
    }
    if (!p->quit) {
        p->step++;
        snprintf(p->narration, sizeof p->narration, "%s", text);
        if (!p->quiet) {
            fprintf(p->out, "[%d] %s%s\n", p->step, text,
                    !p->headless && p->mode == PL_MODE_STEP && p->reader_started
                        ? "   (Enter: next step, q: quit)"
                        : "");
            fflush(p->out);
        }
    }
    p->seen = p->advances;
    clock_gettime(CLOCK_REALTIME, &p->shown_at);
    int quit = p->quit;
    pthread_mutex_unlock(&p->lock);
    return quit;
}

int pl_step(pl_rank *r, const char *fmt, ...)
{
    if (pl_comm_barrier(r->comm) != PL_COMM_OK) {
        snprintf(r->error, sizeof r->error, "%s", pl_comm_last_error(r->comm));
        return -1;
    }
    if (r->rank == 0 && r->player) {
        char text[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        if (!show(r->player, text)) /* the step, for the trace file (a replay shows it) */
            pl_trace_note_step(r->trace, pl_player_current(r->player, NULL, 0), text);
    }
    /* everyone waits for rank 0's release, then reads the same verdict */
    if (pl_comm_barrier(r->comm) != PL_COMM_OK) {
        snprintf(r->error, sizeof r->error, "%s", pl_comm_last_error(r->comm));
        return -1;
    }
    if (!r->player) return 0;
    pthread_mutex_lock(&r->player->lock);
    int quit = r->player->quit;
    pthread_mutex_unlock(&r->player->lock);
    if (quit) snprintf(r->error, sizeof r->error, "stopped by the student");
    return quit;
}
