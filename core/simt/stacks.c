/*
 * stacks.c — the fiber stacks of every executor (one per OS thread that runs
 * kernels: each stream's worker), and the process's budget of them.
 *
 * Each fiber's stack lies above a PROT_NONE guard (executor.h: STACK_GUARD,
 * and its colour gap), so that a kernel that overflows its stack faults
 * (kernel files are compiled with -fstack-clash-protection, so even a frame
 * larger than the guard touches it) instead of corrupting its neighbour's.
 * The address space of an executor's 1024 slots is reserved at once; a
 * slot's guard is made when its fiber first gets a stack (a stream that
 * only ever runs blocks of 256 threads pays 256 mprotect calls, not 1024).
 * A guard costs the process two memory-map areas (the guard,
 * and the stack that it splits from the next), and Linux caps the areas of a
 * process at vm.max_map_count (65,530 by default; mmap and mprotect then
 * fail with ENOMEM). A world of 64 ranks has 64 stream workers or more; with
 * blocks of 1024 threads each would keep 2,048 areas: 131,072, twice the cap
 * (issue 19: worlds of 34 ranks and more failed with "out of memory").
 *
 * So the guards of the whole process come out of one budget: half of
 * vm.max_map_count's areas (the other half stays for the rest of the
 * program: device allocations, thread stacks, libraries), a quarter in
 * guards: 16,382 fibers, 16 blocks of 1024 threads at once. An executor
 * holds its stacks between launches, so a stream that runs one kernel after
 * another makes its stacks once; when a launch needs more guards than are
 * left, the stacks of executors that run no launch now are taken back
 * (unmapped; their fibers are made afresh at their next launch, as after a
 * fault), least recently used first, and if every guard belongs to a running
 * launch, the launch waits for one to end. A block larger than the whole
 * budget (a vm.max_map_count lowered far below its default) fails its
 * launch with a report that says so. Every mmap, mprotect and munmap is
 * checked: a failure fails the launch with its errno in the report.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "executor.h"

enum { MAXT = 1024 }; /* fibers per executor: the most threads a block has */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t freed = PTHREAD_COND_INITIALIZER;
static executor *holders;      /* executors with stacks mapped, least recently used first */
static unsigned long used;     /* guards made, over all executors */
static unsigned long budget;   /* the most guards at once (0: not read yet) */
static long map_count = 65530; /* vm.max_map_count, as read */

static void read_budget(void)
{
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    long v = 0;
    if (f) {
        if (fscanf(f, "%ld", &v) == 1 && v > 0) map_count = v;
        fclose(f);
    }
    budget = (unsigned long)map_count / 4;
    if (budget < 1) budget = 1;
}

static size_t stack_size_from_env(void)
{
    const char *s = getenv("SIMT_STACK_KB");
    long kb = s ? strtol(s, NULL, 10) : 0;
#if defined(__SANITIZE_ADDRESS__) || defined(SIMT_TSAN)
    if (kb < 64) kb = 512;
#else
    if (kb < 16) kb = 128;
#endif
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return ((size_t)kb * 1024 + page - 1) / page * page;
}

static void unlink_holder(executor *x)
{
    for (executor **pp = &holders; *pp; pp = &(*pp)->stacks_next)
        if (*pp == x) {
            *pp = x->stacks_next;
            break;
        }
    x->stacks_next = NULL;
}

/* Unmaps x's stacks and gives its guards back (the lock held). 0, or -1
 * with errno when munmap fails (the stacks then stay, and count). */
static int unmap_stacks(executor *x)
{
    if (!x->stacks) return 0;
    size_t len = STACK_SLOT(x->stack_size) * MAXT;
    /* (AddressSanitizer: the frames its fibers left stay poisoned in the
     * shadow, but its mmap interceptor clears the shadow of a new mapping) */
    if (munmap(x->stacks, len) != 0) return -1;
    unlink_holder(x);
    used -= x->nfibers;
    x->stacks = NULL;
    x->nfibers = x->nprimed = 0;
    pthread_cond_broadcast(&freed);
    return 0;
}

/* Takes back the stacks of executors that run no launch, least recently
 * used first, until `need` guards fit the budget (the lock held). */
static void reclaim(executor *self, unsigned long need)
{
    for (executor *v = holders, *next; v && used + need > budget; v = next) {
        next = v->stacks_next;
        if (v != self && !v->stacks_busy) unmap_stacks(v);
    }
}

int simt_stacks_ensure(executor *x, unsigned n, char *report, size_t cap)
{
    pthread_mutex_lock(&lock);
    if (!budget) read_budget();
    if (!x->fibers) {
        x->stack_size = stack_size_from_env();
        x->fibers = aligned_alloc(_Alignof(fiber), MAXT * sizeof *x->fibers);
        if (x->fibers) memset(x->fibers, 0, MAXT * sizeof *x->fibers);
        x->order = calloc(MAXT, sizeof *x->order);
        if (!x->fibers || !x->order) {
            pthread_mutex_unlock(&lock);
            snprintf(report, cap, "out of host memory for the fibers of a block of %u threads", n);
            return -1;
        }
    }
    if (n > budget) {
        pthread_mutex_unlock(&lock);
        snprintf(report, cap,
                 "a block of %u threads needs %u fiber stacks, each with a guard page: more than "
                 "the %lu the process's memory-map limit leaves them (vm.max_map_count = %ld); "
                 "raise it (sysctl vm.max_map_count) or launch smaller blocks",
                 n, n, budget, map_count);
        return -1;
    }
    /* wait until the guards this launch adds fit the budget */
    while (n > x->nfibers && used + (n - x->nfibers) > budget) {
        reclaim(x, n - x->nfibers);
        if (n > x->nfibers && used + (n - x->nfibers) > budget)
            pthread_cond_wait(&freed, &lock); /* every guard is in a running launch */
    }
    size_t slot = STACK_SLOT(x->stack_size);
    if (!x->stacks) {
        void *m = mmap(NULL, slot * MAXT, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            pthread_mutex_unlock(&lock);
            snprintf(report, cap,
                     "cannot map the fiber stacks of a block of %u threads (%zu bytes of address "
                     "space): mmap: %s",
                     n, slot * MAXT, strerror(e));
            return -1;
        }
        x->stacks = m;
        x->nfibers = x->nprimed = 0;
        for (unsigned i = 0; i < MAXT; i++)
            x->fibers[i].stack = x->stacks + i * slot + STACK_GUARD + STACK_COLOUR(i);
    } else
        unlink_holder(x);
    x->stacks_next = NULL; /* to the end of the list: the most recently used */
    executor **tail = &holders;
    while (*tail) tail = &(*tail)->stacks_next;
    *tail = x;
    for (unsigned i = x->nfibers; i < n; i++) {
        if (mprotect(x->stacks + i * slot, STACK_GUARD, PROT_NONE) != 0) {
            int e = errno;
            pthread_mutex_unlock(&lock);
            snprintf(report, cap,
                     "cannot make the guard page of fiber stack %u of a block of %u threads: "
                     "mprotect: %s (%lu guards in the process; vm.max_map_count = %ld)",
                     i, n, strerror(e), used, map_count);
            return -1;
        }
        x->nfibers = i + 1;
        used++;
    }
    x->stacks_busy = 1;
    pthread_mutex_unlock(&lock);
    return 0;
}

void simt_stacks_release(executor *x)
{
    pthread_mutex_lock(&lock);
    x->stacks_busy = 0;
    pthread_cond_broadcast(&freed); /* a waiting launch may take them now */
    pthread_mutex_unlock(&lock);
}

void simt_stacks_free(executor *x)
{
    pthread_mutex_lock(&lock);
    x->stacks_busy = 0;
    if (unmap_stacks(x) != 0) { /* keep the count honest: they stay mapped */
        unlink_holder(x);
        x->stacks = NULL;
    }
    pthread_mutex_unlock(&lock);
}

unsigned long simt_stacks_guards(unsigned long *limit)
{
    pthread_mutex_lock(&lock);
    if (!budget) read_budget();
    unsigned long u = used;
    if (limit) *limit = budget;
    pthread_mutex_unlock(&lock);
    return u;
}
