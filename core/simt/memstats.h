/*
 * memstats.h — simtMemStats' counting (memstats.c), as the emulator's other
 * files need it: whether counting is on, the hand-over of one access, and
 * the end of a block. Not public.
 */
#ifndef SIMT_MEMSTATS_H
#define SIMT_MEMSTATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "executor.h"

/* What check_access hands over, a bit mask: SIMT_COUNT_STATS between
 * simtMemStatsBegin and simtMemStatsEnd, SIMT_COUNT_RECORD while a recorded
 * kernel with an access log runs (record.c), SIMT_COUNT_RACES while a block
 * is race-checked (races.c). 0: nothing, one relaxed load. */
enum { SIMT_COUNT_STATS = 1, SIMT_COUNT_RECORD = 2, SIMT_COUNT_RACES = 4 };
extern atomic_int simt_counting;

/* The calling OS thread's static TLS block, where the __shared__ arrays
 * live: [*lo, *hi) ([0, 0) where unknown: off x86-64). */
void simt_static_tls(uintptr_t *lo, uintptr_t *hi);

/* Files one access of the kernel running on executor x under its request
 * (site: the call site; global: device memory, else shared or local). */
void simt_count_access(executor *x, uintptr_t a, size_t size, int store, uintptr_t site,
                       int global);

struct memcount;
/* At the end of a block: cost its requests, add them up, start afresh. */
void simt_memcount_flush(struct memcount *m);
/* Forgets the block's requests (a faulted block's are not counted). */
void simt_memcount_clear(struct memcount *m);
void simt_memcount_free(struct memcount *m);

#endif
