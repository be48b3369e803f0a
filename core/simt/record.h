/*
 * record.h — simtRecord* (record.c), as the emulator's other files need it:
 * the claim of a launch (api.c), the start and end of the recorded kernel
 * and of each of its blocks (emu.c), one access (memcheck.h's
 * check_access), one shuffle (sync.c). Not public; what is recorded is
 * described in paralab/device.h ("a kernel's record").
 *
 * Only the executor that runs the recorded kernel records (x->rec); the
 * access log rides on simt_counting's SIMT_COUNT_RECORD bit, set only
 * while that kernel runs, so no other kernel pays for it.
 */
#ifndef SIMT_RECORD_H
#define SIMT_RECORD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "emu.h"

struct executor;

/* 1 between simtRecordBegin and the claim of a launch. */
extern atomic_int simt_record_armed;

/* The claim, by simtLaunchKernel on the launching host thread: the ticket
 * the launch carries (simt_launch.record), or 0 when no record waits. */
unsigned simt_record_claim(void);
/* The launch with this ticket was not queued after all: the record waits
 * for the next one. */
void simt_record_unclaim(unsigned ticket);
static inline unsigned simt_record_take(void)
{
    return atomic_load_explicit(&simt_record_armed, memory_order_relaxed) ? simt_record_claim() : 0;
}

/* On the stream worker that runs launch l (l->record != 0), before its
 * first block: the record starts (unless it was ended meanwhile), x->rec. */
void simt_record_start(struct executor *x, const simt_launch *l);
/* Around each block of the recorded kernel (x->bv.block_idx set). */
void simt_record_block_begin(struct executor *x);
void simt_record_block_end(struct executor *x);
/* After the last block, or at a fault: the record is complete. */
void simt_record_finish(struct executor *x);

/* One access of the recorded kernel (memcheck.h: SIMT_COUNT_RECORD set). */
void simt_record_log_access(struct executor *x, uintptr_t a, size_t size, int store,
                            uintptr_t site);
/* An access of a kernel file with inline checks to memory the record
 * poisoned (build/sim; memcheck.c's report hooks, x->rec set): logged as
 * above. 1 when it lies in the recorded shared memory (valid: no further
 * check), 0 otherwise (the caller checks it against the allocations). */
int simt_record_poisoned(struct executor *x, uintptr_t a, size_t size, int store, uintptr_t site);
/* Lane `thread` (linear in the block) of a shuffle of kind `kind` (0 idx,
 * 1 up, 2 down, 3 xor) read lane src_lane (-1: out of the width). */
void simt_record_log_shfl(struct executor *x, unsigned thread, int kind, int src_lane);

#endif
