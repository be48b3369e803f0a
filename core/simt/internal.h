/*
 * internal.h — what emu.c and runtime.c share inside core/simt. Not public.
 */
#ifndef SIMT_INTERNAL_H
#define SIMT_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "simt/simt.h"

/* One kernel launch, as queued on a stream. */
typedef struct simt_launch {
    const simt_kernel *kernel;
    dim3 grid, block;
    size_t shmem;
    void *args; /* owned copy of the argument struct */
    int device;
} simt_launch;

/* Runs every block of the launch on the calling OS thread. Returns
 * cudaSuccess, or the fault's error with its report written to `report`. */
cudaError_t simt_emu_run(const simt_launch *launch, char *report, size_t report_size);

/* ---- device memory, owned by runtime.c --------------------------------- */
/* All device allocations live in one reserved address range, so "is this a
 * device address" is one comparison on the hot path. */
extern uintptr_t simt_arena_lo;
extern uintptr_t simt_arena_span;
/* Bumped on every cudaFree, so the emulator's one-entry lookup cache never
 * accepts an access to freed memory. */
extern atomic_uint simt_alloc_generation;

/* If [addr, addr+size) lies inside one live allocation: 1 and its range. */
int simt_alloc_find(uintptr_t addr, size_t size, uintptr_t *base, size_t *len);
/* A sentence naming the allocation nearest to addr (base, size, offset). */
void simt_alloc_describe(uintptr_t addr, char *buf, size_t cap);

/* SIMT_SCHEDULE as parsed (0 forward, 1 reverse, 2 random). */
extern int simt_schedule_kind;
extern unsigned long long simt_schedule_seed;

#endif
