/*
 * alloc.h — device memory (alloc.c): the arena every device allocation lies
 * in, the table of live allocations and their bounds, and the pinned host
 * blocks. The emulator needs only the first part (is an address device
 * memory, which allocation holds it); the runtime all of it. Not public.
 */
#ifndef SIMT_ALLOC_H
#define SIMT_ALLOC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "simt/simt.h"

/* ---- what the emulator reads on every access ----------------------------- */

/* All device allocations live in one reserved address range, so "is this a
 * device address" is one comparison on the hot path. The range includes the
 * unmapped guards at the start of each device's part and at its end. */
extern uintptr_t simt_arena_lo;
extern uintptr_t simt_arena_span;
/* Bumped on every cudaFree, so the emulator's one-entry lookup cache never
 * accepts an access to freed memory. */
extern atomic_uint simt_alloc_generation;

/* If [addr, addr+size) lies inside one live allocation: 1 and its range. */
int simt_alloc_find(uintptr_t addr, size_t size, uintptr_t *base, size_t *len);
/* A sentence naming the allocation nearest to addr (base, size, offset). */
void simt_alloc_describe(uintptr_t addr, char *buf, size_t cap);

/* ---- what the runtime asks (the runtime lock, simt_lock, held) ---------- */

/* Reserves the arena of ndev devices of `capacity` bytes each (address space
 * only); prints why on failure. At start-up. */
cudaError_t simt_alloc_init(int ndev, size_t capacity);

/* 1 if p lies in the arena (device memory, live or not). */
static inline int simt_in_arena(const void *p)
{
    return (uintptr_t)p - simt_arena_lo < simt_arena_span;
}
/* The device of the live allocation holding [p, p+n), or -1. Takes the
 * table's own lock. */
int simt_alloc_device_of(const void *p, size_t n);

/* cudaMalloc on device dev (size > 0). */
cudaError_t simt_alloc_device(int dev, size_t size, void **p);
/* The device of the allocation whose base is p, or -1. */
int simt_alloc_home(const void *p);
/* Frees the allocation whose base is p, if it is still live. */
void simt_alloc_free(const void *p);
/* Frees every allocation of device dev (cudaDeviceReset). */
void simt_alloc_free_device(int dev);
/* Bytes allocated on device dev. */
size_t simt_alloc_used(int dev);

/* Pinned host memory (cudaHostAlloc): its blocks, for the copies' cost. */
cudaError_t simt_pinned_add(void *p, size_t size);
/* 1 if p is the start of a pinned block. */
int simt_pinned_is_block(const void *p);
void simt_pinned_remove(const void *p);
/* 1 if [p, p+n) lies in one pinned block. */
int simt_is_pinned(const void *p, size_t n);

#endif
