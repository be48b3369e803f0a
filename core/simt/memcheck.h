/*
 * memcheck.h — the check of one kernel access in call mode, shared by the
 * kernel-address hooks (memcheck.c) and the atomics (atomics.c): inlined into
 * each, as it runs on every access. Not public.
 */
#ifndef SIMT_MEMCHECK_H
#define SIMT_MEMCHECK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "executor.h"
#include "memstats.h"
#include "races.h"
#include "record.h"

/* simtSetAccessObserver's observer, or NULL. */
extern simt_access_observer simt_observer;

/* The access is in no allocation the executor's cache holds: look it up,
 * and fault if it lies in none. */
void simt_check_slow(executor *x, uintptr_t a, size_t size, int store);

/* Checks one access of `size` bytes at a (a store if `store`) from call site
 * `site`: counted while simtMemStats counts, logged while the kernel's
 * record logs accesses (before the check: an out-of-bounds access inside a
 * recorded range is logged, then faults), shown to the observer, and a
 * fault unless it lies inside one live device allocation. */
/* Out of line, so that the check itself stays small enough to inline into
 * every hook (a hook that calls an outlined check pays a second call and
 * its register saves on every access). */
static __attribute__((noinline, cold, unused)) void
count_access(int counting, uintptr_t a, size_t size, int store, uintptr_t site, int global)
{
    executor *x = simt_X;
    if (!x || !x->launch) return;
    if (counting & SIMT_COUNT_STATS) simt_count_access(x, a, size, store, site, global);
    if ((counting & SIMT_COUNT_RECORD) && x->rec_log)
        simt_record_log_access(x, a, size, store, site);
    if ((counting & SIMT_COUNT_RACES) && x->track) simt_races_access(x, a, size, store, site);
}

static inline __attribute__((always_inline)) void
check_access_of(uintptr_t a, size_t size, int store, uintptr_t site, int hand_over)
{
    int global = a - simt_arena_lo < simt_arena_span;
    int counting = atomic_load_explicit(&simt_counting, memory_order_relaxed) & hand_over;
    if (__builtin_expect(counting, 0)) count_access(counting, a, size, store, site, global);
    if (!global) return; /* not device memory */
    executor *x = simt_X;
    if (!x || !x->launch) return; /* host code in a kernel file */
    if (__builtin_expect(simt_observer != NULL, 0)) simt_observer((const void *)a, size, store);
    unsigned gen = atomic_load_explicit(&simt_alloc_generation, memory_order_acquire);
    if (__builtin_expect(gen != x->cache_gen, 0)) { /* something was freed: forget all */
        memset(x->cache, 0, sizeof x->cache);
        x->cache_gen = gen;
    }
    for (int w = 0; w < CACHE_WAYS; w++)
        if (a - x->cache[w].base < x->cache[w].len &&
            a + size - x->cache[w].base <= x->cache[w].len)
            return;
    simt_check_slow(x, a, size, store);
}

/* A kernel's load or store: handed over to everything that counts. */
static inline __attribute__((always_inline)) void check_access(uintptr_t a, size_t size, int store,
                                                               uintptr_t site)
{
    check_access_of(a, size, store, site, ~0);
}

#endif
