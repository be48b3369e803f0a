/*
 * comm_local_wait.c — the local engine's ranks waiting for each other: the
 * rendezvous of a group, waits with the deadlock watchdog and the report of
 * what every rank waits for, holds (a paused step stops the watchdog's
 * clock) and aborts.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "paralab/clock.h"
#include "comm_local.h"
#include "paralab/watchdog.h"

/* World rank r re-checks what it waits for (w->lock held). */
void lc_wake(world *w, int r)
{
    atomic_fetch_add_explicit(&w->pokes[r], 1, memory_order_release);
    pthread_cond_broadcast(&w->cv[r]);
}

/* Every rank waiting in the world re-checks what it waits for (w->lock held). */
void lc_wake_all(world *w)
{
    for (int r = 0; r < w->n; r++) lc_wake(w, r);
}

void lc_abort(pl_comm *pc, const char *why)
{
    lcomm *c = (lcomm *)pc;
    world *w = c->g->w;
    pthread_mutex_lock(&w->lock);
    if (!w->aborted) {
        snprintf(w->abort_msg, sizeof w->abort_msg, "rank %d stopped the world: %s",
                 c->g->wrank[c->rank], why);
        w->aborted = 1;
        w->abort_code = PL_COMM_ABORTED;
    }
    lc_wake_all(w);
    pthread_mutex_unlock(&w->lock);
}

/* ---- waiting, with the watchdog ------------------------------------------ */

static void deadline_after(struct timespec *ts, double s)
{
    clock_gettime(CLOCK_REALTIME, ts);
    long ns = ts->tv_nsec + (long)((s - (long)s) * 1e9);
    ts->tv_sec += (time_t)s + ns / 1000000000L;
    ts->tv_nsec = ns % 1000000000L;
}

/* The watchdog's clock: seconds in which no rank was held (w->lock held). */
double lc_free_clock(const world *w)
{
    double now = pl_now();
    return now - w->held_total - (w->held ? now - w->held_since : 0);
}

/* One wait on cv for the watchdog (w->lock held). *since is the free clock
 * when the wait began, *seen the process's progress then
 * (pl_watchdog_progress_count): 1 when `timeout` seconds of free time have
 * passed with no progress anywhere in the process, else 0 (woken, or a hold
 * began or ended: look again). While a rank is held it waits without a
 * deadline; the release wakes everyone. Progress elsewhere (a kernel block
 * finished, a copy done) starts the count again: on a slow or busy machine
 * the other ranks' work is late, not deadlocked. */
int lc_watch(world *w, pthread_cond_t *cv, double *since, unsigned long long *seen)
{
    if (w->held) {
        pthread_cond_wait(cv, &w->lock);
        return 0;
    }
    double left = w->timeout - (lc_free_clock(w) - *since);
    if (left > 0) {
        struct timespec dl;
        deadline_after(&dl, left);
        pthread_cond_timedwait(cv, &w->lock, &dl);
    }
    if (w->held || lc_free_clock(w) - *since < w->timeout) return 0;
    unsigned long long p = pl_watchdog_progress_count();
    if (p != *seen) {
        *seen = p;
        *since = lc_free_clock(w);
        return 0;
    }
    return 1;
}

/* Everyone's state, for the report of a deadlock (w->lock held). */
static void describe_world(world *w, char *buf, size_t cap)
{
    size_t n = 0;
    lc_p2p_say_waiting(w);
    for (int r = 0; r < w->n && n < cap; r++) {
        int k = snprintf(buf + n, cap - n, "%srank %d %s", r ? "; " : "", r,
                         w->doing[r][0] ? w->doing[r] : "is in no communicator call");
        if (k < 0) break;
        n += (size_t)k;
    }
    /* the classic: two ranks that both send first, outside a group */
    for (int a = 0; a < w->n; a++)
        for (int b = a + 1; b < w->n; b++) {
            char sa[64], sb[64];
            snprintf(sa, sizeof sa, "waits in send to rank %d (", b); /* not rank 10 for 1 */
            snprintf(sb, sizeof sb, "waits in send to rank %d (", a);
            if (strstr(w->doing[a], sa) && strstr(w->doing[b], sb) && n < cap) {
                snprintf(buf + n, cap - n,
                         ". Ranks %d and %d both send before they receive: put each exchange in "
                         "pl_group_start()/pl_group_end()",
                         a, b);
                return;
            }
        }
}

/* The watchdog ran out: the world is aborted with a report of what every
 * rank waits for (w->lock held). */
void lc_trip(world *w)
{
    if (w->aborted) return;
    char who[1700];
    describe_world(w, who, sizeof who);
    snprintf(w->abort_msg, sizeof w->abort_msg, "deadlock: no progress for %g s: %s", w->timeout,
             who);
    w->aborted = 1;
    w->abort_code = PL_COMM_TIMEOUT;
    lc_wake_all(w);
}

void lc_hold(pl_comm *pc, int on)
{
    lcomm *c = (lcomm *)pc;
    world *w = c->g->w;
    pthread_mutex_lock(&w->lock);
    if (on && w->held++ == 0) w->held_since = pl_now();
    if (!on && w->held > 0 && --w->held == 0) {
        w->held_total += pl_now() - w->held_since;
        lc_wake_all(w); /* the waiting ranks set their deadlines again */
    }
    pthread_mutex_unlock(&w->lock);
}

/* Before a rank sleeps on its w->cv: up to LC_YIELDS times, the lock let go
 * and the core given to whoever else can run (comm_local.h); the lock is
 * taken again to look only once the rank was woken (w->lock held). Without
 * the lock between looks, the rank it waits for does not queue on it to
 * move the very count it waits for. */
int lc_yield_until(world *w, int me, int (*cond)(void *), void *arg)
{
    int i = 0;
    while (i < LC_YIELDS && !w->aborted) {
        if (cond(arg)) return 1;
        unsigned long seen = atomic_load_explicit(&w->pokes[me], memory_order_acquire);
        pthread_mutex_unlock(&w->lock);
        do sched_yield();
        while (++i < LC_YIELDS &&
               atomic_load_explicit(&w->pokes[me], memory_order_acquire) == seen);
        pthread_mutex_lock(&w->lock);
    }
    return cond(arg);
}

/* Waits on this rank's w->cv until *cond holds or the watchdog runs out
 * (w->lock held). On timeout the world is aborted with a report of what
 * every rank waits for. */
pl_comm_result lc_wait_until(lcomm *c, int (*cond)(void *), void *arg)
{
    world *w = c->g->w;
    if (lc_yield_until(w, c->g->wrank[c->rank], cond, arg))
        return w->aborted ? lc_fail(c, w->abort_code, "%s", w->abort_msg) : PL_COMM_OK;
    double since = lc_free_clock(w);
    unsigned long long seen = pl_watchdog_progress_count();
    while (!cond(arg)) {
        if (w->aborted) return lc_fail(c, w->abort_code, "%s", w->abort_msg);
        if (lc_watch(w, &w->cv[c->g->wrank[c->rank]], &since, &seen) && !cond(arg)) {
            lc_trip(w);
            return lc_fail(c, w->abort_code, "%s", w->abort_msg);
        }
    }
    return w->aborted ? lc_fail(c, w->abort_code, "%s", w->abort_msg) : PL_COMM_OK;
}

typedef struct {
    group *g;
    unsigned long gen;
} gen_arg;

static int gen_moved(void *p)
{
    gen_arg *a = p;
    return a->g->gen != a->gen;
}

/* Every member of the group arrives before any leaves (w->lock held). */
pl_comm_result lc_rendezvous(lcomm *c, const char *what)
{
    group *g = c->g;
    world *w = g->w;
    if (w->aborted) return lc_fail(c, w->abort_code, "%s", w->abort_msg);
    snprintf(w->doing[g->wrank[c->rank]], sizeof w->doing[0], "%s", what);
    gen_arg a = {g, g->gen};
    pl_comm_result r = PL_COMM_OK;
    if (++g->arrived == g->n) {
        g->arrived = 0;
        g->gen++;
        for (int i = 0; i < g->n; i++) lc_wake(w, g->wrank[i]); /* its members */
    } else
        r = lc_wait_until(c, gen_moved, &a);
    w->doing[g->wrank[c->rank]][0] = '\0';
    return r;
}
