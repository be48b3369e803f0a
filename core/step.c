/* step.c — see paralab/step.h. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "paralab/step.h"
#include "paralab/device.h"
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
    int waiting;              /* rank 0 waits for the release of the current step */
    int begun;                /* pl_step_begin released the step before: the current
                                 step's work runs, its narration is not shown yet */
    pl_trace_stamp begun_at;  /* when pl_step_begin released the step before */
    void (*listener)(void *ctx, int step, const char *text);
    void *listener_ctx;
};

double pl_step_read_seconds(const char *text)
{
    int words = 0;
    for (const char *c = text; c && *c; c++)
        if (*c != ' ' && *c != '\n' && *c != '\t' &&
            (c == text || c[-1] == ' ' || c[-1] == '\n' || c[-1] == '\t'))
            words++;
    return PL_READ_BASE_S + PL_READ_WORD_S * words;
}

int pl_player_read_lines(pl_player *p, FILE *in)
{
    int advances = 0;
    for (;;) {
        int c;
        do c = getc(in);
        while (c == ' ' || c == '\t' || c == '\r');
        if (c == EOF) break;
        int quit = c == 'q' || c == 'Q';
        while (c != '\n' && c != EOF) c = getc(in); /* the rest of the line, however long */
        if (quit) {
            pl_player_quit(p);
            break;
        }
        pl_player_advance(p);
        advances++;
        if (c == EOF) break;
    }
    return advances;
}

/* Step mode on a terminal without the UI: the terminal's lines, as they come. */
static void *read_keys(void *arg)
{
    pl_player_read_lines(arg, stdin);
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
    /* play mode's deadlines on the monotonic clock: a change of the date
     * (NTP, the user) must not shorten or stretch a pause */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
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

void pl_player_set_listener(pl_player *p, void (*fn)(void *ctx, int step, const char *text),
                            void *ctx)
{
    pthread_mutex_lock(&p->lock);
    p->listener = fn;
    p->listener_ctx = ctx;
    pthread_mutex_unlock(&p->lock);
}

int pl_player_quitting(pl_player *p)
{
    pthread_mutex_lock(&p->lock);
    int q = p->quit;
    pthread_mutex_unlock(&p->lock);
    return q;
}

int pl_player_current(pl_player *p, char *buf, size_t cap)
{
    pthread_mutex_lock(&p->lock);
    int k = p->step;
    snprintf(buf, cap, "%s", p->narration);
    pthread_mutex_unlock(&p->lock);
    return k;
}

int pl_player_waiting(pl_player *p)
{
    pthread_mutex_lock(&p->lock);
    int w = p->waiting;
    pthread_mutex_unlock(&p->lock);
    return w;
}

/* Waits for the release of the current step (p->lock held): the student
 * has read it and watched its work. The mode and speed may change while it
 * waits (the UI's p, + and -): every change wakes it and it looks again. An
 * advance always releases, in play mode too; play mode releases by itself
 * once the narration has been up for its reading time over the speed. */
static void wait_release(pl_player *p)
{
    p->waiting = 1;
    while (p->step > 0 && !p->begun && !p->headless && !p->quit && p->advances == p->seen) {
        if (p->mode == PL_MODE_PLAY) {
            double s = pl_step_read_seconds(p->narration) / p->speed;
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
    p->waiting = 0;
}

/* Rank 0: show the narration once the step before is released (at once
 * after pl_step_begin). 1 if quitting. */
static int show(pl_player *p, const char *text, pl_trace_stamp *began)
{
    pthread_mutex_lock(&p->lock);
    wait_release(p);
    if (!p->quit) {
        if (!p->begun) p->step++;
        *began = p->begun ? p->begun_at : pl_trace_stamp_now();
        p->begun = 0;
        snprintf(p->narration, sizeof p->narration, "%s", text);
        if (p->listener) p->listener(p->listener_ctx, p->step, p->narration);
        if (!p->quiet) {
            fprintf(p->out, "[%d] %s%s\n", p->step, text,
                    !p->headless && p->mode == PL_MODE_STEP && p->reader_started
                        ? "   (Enter: next step, q then Enter: quit)"
                        : "");
            fflush(p->out);
        }
    }
    p->seen = p->advances;
    clock_gettime(CLOCK_MONOTONIC, &p->shown_at);
    int quit = p->quit;
    pthread_mutex_unlock(&p->lock);
    return quit;
}

/* Rank 0: the release of the current step, for the next one's work. */
static void begin(pl_player *p)
{
    pthread_mutex_lock(&p->lock);
    wait_release(p);
    if (!p->quit && !p->begun) {
        p->step++;
        p->begun = 1;
        p->begun_at = pl_trace_stamp_now();
        snprintf(p->narration, sizeof p->narration, "%s", PL_STEP_RUNNING);
    }
    p->seen = p->advances;
    pthread_mutex_unlock(&p->lock);
}

/* All ranks meet (after their work of the step so far). */
static int meet(pl_rank *r)
{
    pl_device_flush_ops();  /* this rank's finished work into the trace before the step moves on */
    pl_rank_note_memory(r); /* and its device's memory, as the step leaves it */
    if (pl_comm_barrier(r->comm) != PL_COMM_OK) {
        snprintf(r->error, sizeof r->error, "%s", pl_comm_last_error(r->comm));
        return -1;
    }
    return 0;
}

/* Everyone waits for rank 0's release, then reads the same verdict. */
static int verdict(pl_rank *r)
{
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

/* While rank 0 waits for the student, the ranks are held: the deadlock
 * watchdog does not count that time (pl_comm_hold). */
int pl_step(pl_rank *r, const char *fmt, ...)
{
    if (meet(r)) return -1;
    if (r->rank == 0 && r->player) {
        char text[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        pl_comm_hold(r->comm, 1);
        pl_trace_stamp began;
        if (!show(r->player, text, &began)) { /* the step, for the trace file (a replay shows it) */
            int k = pl_player_current(r->player, NULL, 0);
            pl_trace_note_step_at(r->trace, k, text, began);
            pl_trace_set_step(r->trace, k);
        }
        pl_comm_hold(r->comm, 0);
    }
    return verdict(r);
}

int pl_step_begin(pl_rank *r)
{
    if (meet(r)) return -1;
    if (r->rank == 0 && r->player) {
        pl_comm_hold(r->comm, 1);
        begin(r->player);
        pl_trace_set_step(r->trace, pl_player_current(r->player, NULL, 0));
        pl_comm_hold(r->comm, 0);
    }
    return verdict(r);
}
