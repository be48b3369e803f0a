/*
 * races.h — the race check of the normal run (races.c): warp-synchronous
 * code and lost updates, in the blocks it checks. Not public; the emulator's
 * files only.
 */
#ifndef SIMT_RACES_H
#define SIMT_RACES_H

#include <stddef.h>
#include <stdint.h>

#include "executor.h"

/* SIMT_RACES (simtSetRaceCheck): 0 off, 1 the first block of each kernel's
 * first launch, 2 every block. */
extern int simt_races_mode;

/* Which blocks of this launch to check: 0 none, 1 its first, 2 all. */
int simt_races_launch(const simt_launch *l);
/* Starts checking the block x is about to run (sets x->track). */
void simt_races_begin(executor *x);
/* One access of the checked block (memcheck.c, memcheck.h); returns 1 when
 * it is in the block's shared memory (not device memory: no bounds check). */
int simt_races_access(executor *x, uintptr_t a, size_t size, int store, uintptr_t site);
/* The lanes in `mask` of the warp whose lane 0 is thread `base` completed a
 * warp operation; every thread of the block passed a __syncthreads(). */
/* An atomic on [a, a + size): not a race, but the words change. */
void simt_races_atomic(executor *x, uintptr_t a, size_t size);
void simt_races_warp_sync(executor *x, unsigned base, unsigned mask);
void simt_races_barrier(executor *x);
/* Ends the check of the block (restores the shadow); report: fault with
 * the race found, if one is to be reported. */
void simt_races_end(executor *x, int report);
void simt_races_free(executor *x);

#endif
