/*
 * emu.h — what the runtime needs from the SIMT emulator (emu.c and the files
 * beside it): run a launch on the calling OS thread, name the kernel running
 * there, free a thread's emulator state, and the emulator's knobs. Not
 * public. The emulator itself sees only alloc.h (where device memory lies).
 */
#ifndef SIMT_EMU_H
#define SIMT_EMU_H

#include <stdatomic.h>
#include <stddef.h>

#include "simt/simt.h"

/* One kernel launch, as queued on a stream. */
typedef struct simt_launch {
    const simt_kernel *kernel;
    dim3 grid, block;
    size_t shmem;
    void *args; /* owned copy of the argument struct */
    size_t args_size;
    int device;
    unsigned record; /* simtRecord*: the ticket of the record it claimed, or 0 */
    int eager;       /* launched after simtLaunchEager: may run on the launching thread */
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

/* SIMT_PLAIN (1: blocks whose thread 0 reaches no barrier run as plain
 * calls) and SIMT_SCHEDULE (0 forward, 1 reverse, 2 random:SEED), as the
 * runtime read them at start-up (or simtSetPlainCalls, simtSetSchedule). */
extern int simt_plain_calls;
extern int simt_schedule_kind;
extern unsigned long long simt_schedule_seed;

#endif
