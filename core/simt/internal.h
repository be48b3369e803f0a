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

/* The name of the kernel running on the calling OS thread, or NULL. */
const char *simt_emu_current_kernel(void);

/* Frees the calling OS thread's emulator state (fibers, stacks); a stream
 * worker calls it before it exits. */
void simt_emu_thread_exit(void);
/* Blocks finished and ops done (simtProgress): the emulator counts blocks,
 * the stream workers ops. */
extern _Atomic unsigned long long simt_progress_count;

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

/* The shadow of the inline memory checks (build/sim): kernel files compiled
 * with -fsanitize=kernel-address -fasan-shadow-offset=SIMT_SHADOW_OFFSET read
 * one shadow byte per 8 bytes of memory, (addr >> 3) + SIMT_SHADOW_OFFSET, and
 * call __asan_report_* when it is poisoned (ASan's encoding: 0 = all 8 bytes
 * valid, k = the first k valid, negative = none). The whole shadow is
 * reserved at start-up (address space only); only the tails after device
 * allocations are ever written. The ASan and race-check builds do not use it.
 * Keep in step with SIMT_SHADOW_OFFSET in mk/build.mk. */
#define SIMT_SHADOW_OFFSET 0x100000000000ull
#define SIMT_SHADOW_SPAN (1ull << 44) /* covers the 47-bit user address space */
/* Marks [base, base+size) valid and [base+size, base+span) invalid (span a
 * multiple of 8: the page slack and guard page after an allocation). A freed
 * range is marked all valid (size = span): it is PROT_NONE, and the fault
 * handler reports any access to it. No-op outside the shadow build. */
void simt_shadow_mark(uintptr_t base, size_t size, size_t span);

/* SIMT_PLAIN (1: blocks whose thread 0 reaches no barrier run as plain calls). */
extern int simt_plain_calls;

/* SIMT_SCHEDULE as parsed (0 forward, 1 reverse, 2 random). */
extern int simt_schedule_kind;
extern unsigned long long simt_schedule_seed;

#endif
