/* watchdog.c — see paralab/watchdog.h. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "paralab/device.h"
#include "paralab/watchdog.h"

enum { MAX_IGNORED = 16 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int running, stopping;
static pthread_t thread;
static double limit;
static pl_watchdog_fn handler;
static void *handler_user;
/* the ignored threads' CPU clocks and their last readings (a thread that
 * has exited keeps its time in the process's total: its last reading stays
 * subtracted) */
static clockid_t ignored[MAX_IGNORED];
static double ignored_last[MAX_IGNORED];
static int nignored;
static _Atomic unsigned long long host_progress;

static double seconds(clockid_t c, int *ok)
{
    struct timespec ts;
    *ok = clock_gettime(c, &ts) == 0;
    return *ok ? (double)ts.tv_sec + ts.tv_nsec * 1e-9 : 0;
}

void pl_watchdog_ignore_thread(void)
{
    clockid_t c;
    if (pthread_getcpuclockid(pthread_self(), &c) != 0) return;
    pthread_mutex_lock(&lock);
    int ok;
    double now = seconds(c, &ok);
    for (int i = 0; i < nignored; i++)
        if (ignored[i] == c) { /* a new thread with an old thread's id */
            ignored_last[i] = now;
            pthread_mutex_unlock(&lock);
            return;
        }
    if (nignored < MAX_IGNORED) {
        ignored[nignored] = c;
        ignored_last[nignored++] = now;
    }
    pthread_mutex_unlock(&lock);
}

void pl_watchdog_progress(void) { atomic_fetch_add(&host_progress, 1); }

/* CPU seconds the process has spent, less the ignored threads'. */
static double busy(void)
{
    int ok;
    double t = seconds(CLOCK_PROCESS_CPUTIME_ID, &ok);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nignored; i++) {
        double v = seconds(ignored[i], &ok);
        if (ok) ignored_last[i] = v;
        t -= ignored_last[i];
    }
    pthread_mutex_unlock(&lock);
    return t;
}

unsigned long long pl_watchdog_progress_count(void)
{
    unsigned long long p = atomic_load(&host_progress);
    p += pl_device_progress();
    return p;
}

void pl_watchdog_hurry(double limit_s)
{
    pthread_mutex_lock(&lock);
    if (limit_s > 0 && limit_s < limit) limit = limit_s;
    pthread_mutex_unlock(&lock);
}

static void *watch(void *arg)
{
    (void)arg;
    pl_watchdog_ignore_thread();
    unsigned long long seen = pl_watchdog_progress_count();
    double base = busy();
    char report[1200], what[1000];
    pthread_mutex_lock(&lock);
    while (!stopping) {
        double lim = limit, period = lim / 4 < 0.01 ? 0.01 : lim / 4 > 0.25 ? 0.25 : lim / 4;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        long ns = until.tv_nsec + (long)(period * 1e9);
        until.tv_sec += ns / 1000000000L;
        until.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&cv, &lock, &until); /* a sampling period, not a limit */
        if (stopping) break;
        pthread_mutex_unlock(&lock);
        what[0] = '\0';
        pl_device_describe_stalled(lim, what, sizeof what);
        unsigned long long p = pl_watchdog_progress_count();
        double t = busy();
        if (!what[0] && p != seen) {
            seen = p;
            base = t;
        } else if (!what[0] && t - base > lim) {
            pl_device_describe_running(what, sizeof what);
            if (!what[0]) snprintf(what, sizeof what, "no kernel is running (the host code)");
        }
        if (what[0]) {
            snprintf(report, sizeof report, "no progress for %g s of CPU time: %s", lim, what);
            handler(report, handler_user);
            return NULL; /* one report */
        }
        pthread_mutex_lock(&lock);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

int pl_watchdog_start(double limit_s, pl_watchdog_fn fn, void *user)
{
    pthread_mutex_lock(&lock);
    if (running || !(limit_s > 0) || !fn) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    limit = limit_s;
    handler = fn;
    handler_user = user;
    stopping = 0;
    running = pthread_create(&thread, NULL, watch, NULL) == 0;
    pthread_mutex_unlock(&lock);
    return running ? 0 : -1;
}

void pl_watchdog_stop(void)
{
    pthread_mutex_lock(&lock);
    if (!running || pthread_equal(thread, pthread_self())) {
        pthread_mutex_unlock(&lock);
        return;
    }
    stopping = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&lock);
    pthread_join(thread, NULL);
    pthread_mutex_lock(&lock);
    running = 0;
    pthread_mutex_unlock(&lock);
}
