/*
 * watch.c — what runs now, for watchdogs and diagnostics: every OS thread's
 * executor in one table, simtDescribeRunning and simtDescribeStalled (which
 * counts each executor's CPU time, never wall time), and simtProgress.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "executor.h"

/* Every OS thread's executor, for simtDescribeRunning (diagnostics). An
 * executor is freed only under executors_lock, so that simtDescribeStalled
 * (which holds it) never reads a freed one. */
enum { MAX_EXECUTORS = 512 };
static executor *_Atomic executors[MAX_EXECUTORS];
static pthread_mutex_t executors_lock = PTHREAD_MUTEX_INITIALIZER;

/* Blocks finished and ops done, all devices: what a watchdog calls progress. */
_Atomic unsigned long long simt_progress_count;

unsigned long long simtProgress(void)
{
    return atomic_load_explicit(&simt_progress_count, memory_order_relaxed);
}

static void register_executor(executor *x, executor *old)
{
    for (int i = 0; i < MAX_EXECUTORS; i++) {
        executor *expect = old;
        if (atomic_compare_exchange_strong(&executors[i], &expect, x)) return;
    }
}

void simt_register_executor(executor *x) { register_executor(x, NULL); }

void simt_unregister_executor(executor *x)
{
    pthread_mutex_lock(&executors_lock);
    register_executor(NULL, x);
    pthread_mutex_unlock(&executors_lock);
}

static int describe(const executor *x, const simt_launch *l, const char *sep, char *buf,
                    size_t cap);

size_t simtDescribeRunning(char *buf, size_t cap)
{
    size_t n = 0;
    if (cap) buf[0] = '\0';
    for (int i = 0; i < MAX_EXECUTORS && n + 1 < cap; i++) {
        const executor *x = atomic_load(&executors[i]);
        const simt_launch *l = x ? x->launch : NULL;
        if (!l) continue;
        int w = describe(x, l, n ? "; " : "", buf + n, cap - n);
        if (w < 0) break;
        n += (size_t)w < cap - n ? (size_t)w : cap - n - 1;
    }
    return n;
}

/* What runs on executor x now, as simtDescribeRunning says it. */
static int describe(const executor *x, const simt_launch *l, const char *sep, char *buf, size_t cap)
{
    const simt_kernel *k = l->kernel;
    const fiber *f = x->cur;
    if (f && !x->plain)
        return snprintf(buf, cap,
                        "%skernel %s (%s:%d) is in blockIdx (%u,%u,%u), threadIdx (%u,%u,%u)", sep,
                        k->name, k->file, k->line, x->bv.block_idx.x, x->bv.block_idx.y,
                        x->bv.block_idx.z, f->idx.x, f->idx.y, f->idx.z);
    return snprintf(buf, cap, "%skernel %s (%s:%d) is in blockIdx (%u,%u,%u)", sep, k->name,
                    k->file, k->line, x->bv.block_idx.x, x->bv.block_idx.y, x->bv.block_idx.z);
}

size_t simtDescribeStalled(double cpu_seconds, char *buf, size_t cap)
{
    size_t n = 0;
    if (cap) buf[0] = '\0';
    pthread_mutex_lock(&executors_lock);
    for (int i = 0; i < MAX_EXECUTORS; i++) {
        executor *x = atomic_load(&executors[i]);
        if (!x || !x->have_cpu_clock) continue;
        const simt_launch *l = *(const simt_launch *volatile *)&x->launch;
        unsigned long long b = atomic_load_explicit(&x->blocks_done, memory_order_relaxed);
        struct timespec ts;
        if (clock_gettime(x->cpu_clock, &ts) != 0) continue;
        double t = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
        if (!l || l != x->wd_launch || b != x->wd_blocks) { /* a new block, or none */
            x->wd_launch = l;
            x->wd_blocks = b;
            x->wd_cpu = t;
            continue;
        }
        if (t - x->wd_cpu <= cpu_seconds || n + 1 >= cap) continue;
        int w = describe(x, l, n ? "; " : "", buf + n, cap - n);
        if (w < 0) break;
        n += (size_t)w < cap - n ? (size_t)w : cap - n - 1;
    }
    pthread_mutex_unlock(&executors_lock);
    return n;
}
