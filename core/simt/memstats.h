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

/* Between simtMemStatsBegin and simtMemStatsEnd: 1. */
extern atomic_int simt_counting;

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
