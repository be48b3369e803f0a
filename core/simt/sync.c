/*
 * sync.c — barriers and warp operations, as kernels call them: a fiber that
 * reaches __syncthreads() or a warp operation records where it waits and
 * yields; once every runnable thread has run, simt_resolve releases what can
 * complete and faults on what never can (a divergent barrier, a lane that
 * exited, a mask that names a lane waiting elsewhere). Also the device-side
 * assert: the thread that fails one stops, the block's other threads run on
 * so that the report can say how many failed, and the kernel stops at the
 * end of the block. See emu.c for how the fibers of a block are run.
 */
#undef _FORTIFY_SOURCE /* __longjmp_chk aborts on jumps between stacks */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor.h"
#include "races.h"
#include "record.h"

#ifdef SIMT_TSAN
#define TSAN_NEXT_BARRIER(x) ((x)->tsan_bar_gen++)
#else
#define TSAN_NEXT_BARRIER(x) ((void)0)
#endif

static const char *wop_name(int wop)
{
    static const char *names[] = {"__syncwarp",       "__shfl_sync",     "__shfl_up_sync",
                                  "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
                                  "__any_sync",       "__all_sync"};
    return wop >= 0 && wop < (int)(sizeof names / sizeof *names) ? names[wop] : "?";
}

/* The lane whose value lane l reads in a shuffle of kind wop (SIMT_WOP_SHFL
 * .. _XOR, any other: l itself) with argument arg and width w; *outside: the
 * source lies outside l's segment of w lanes, so l keeps its own value. */
static inline unsigned shfl_source(int wop, unsigned l, unsigned arg, unsigned w, int *outside)
{
    unsigned seg = l & ~(w - 1), src = l;
    *outside = 0;
    switch (wop) {
    case SIMT_WOP_SHFL:
        src = seg + (arg & (w - 1));
        break;
    case SIMT_WOP_SHFL_UP:
        *outside = arg > l - seg;
        src = *outside ? l : l - arg;
        break;
    case SIMT_WOP_SHFL_DOWN:
        *outside = l + arg >= seg + w;
        src = *outside ? l : l + arg;
        break;
    case SIMT_WOP_SHFL_XOR:
        src = l ^ arg;
        *outside = src >= seg + w;
        if (*outside) src = l;
        break;
    default:
        break;
    }
    return src;
}

/* Completes the warp operation of the lanes in `mask` of warp w: every lane
 * it names has arrived at the same operation. */
static void complete_warp_op(executor *x, fiber *w0, unsigned count, unsigned mask, int wop)
{
    unsigned votes = 0;
    for (unsigned l = 0; l < count; l++)
        if ((mask >> l & 1u) && w0[l].wval) votes |= 1u << l;
    for (unsigned l = 0; l < count; l++) {
        if (!(mask >> l & 1u)) continue;
        fiber *f = &w0[l];
        int outside;
        unsigned src = shfl_source(wop, l, (unsigned)f->warg, (unsigned)f->wwidth, &outside);
        switch (wop) {
        case SIMT_WOP_BALLOT:
            f->wres = votes;
            break;
        case SIMT_WOP_ANY:
            f->wres = votes != 0;
            break;
        case SIMT_WOP_ALL:
            f->wres = votes == mask;
            break;
        case SIMT_WOP_SYNCWARP:
            f->wres = 0;
            break;
        default:
            if (src >= count || !(mask >> src & 1u))
                simt_fault(cudaErrorLaunchFailure, f,
                           "%s at %s:%d: lane %u reads lane %u, which is not in the mask 0x%08x "
                           "(the value would be undefined on a GPU)",
                           wop_name(wop), f->file, f->line, l, src, mask);
            f->wres = w0[src].wval;
            if (__builtin_expect(x->rec_log, 0)) /* a shuffle of a recorded block */
                simt_record_log_shfl(x, f->linear, wop - SIMT_WOP_SHFL, outside ? -1 : (int)src);
        }
    }
    for (unsigned l = 0; l < count; l++)
        if (mask >> l & 1u) w0[l].state = T_RUNNABLE;
    if (__builtin_expect(x->track, 0)) simt_races_warp_sync(x, w0->linear, mask);
}

/* The common case of a warp operation: all 32 lanes of a full warp at the
 * same shuffle with the full mask, the same offset and width; completed in
 * one pass (the general path below checks lane by lane against the mask and
 * decides the same). 0 when the warp is not that case. Not while the block
 * is logged or race-checked: those go through complete_warp_op. */
static int uniform_shuffle(fiber *w0)
{
    const int wop = w0->wop, arg = w0->warg, width = w0->wwidth;
    if (w0->wmask != 0xffffffffu || wop < SIMT_WOP_SHFL || wop > SIMT_WOP_SHFL_XOR) return 0;
    int same = 1;
    for (unsigned l = 0; l < 32; l++) {
        const fiber *g = &w0[l];
        same &= g->state == T_WARP && g->wop == wop && g->wmask == 0xffffffffu && g->warg == arg &&
                g->wwidth == width;
    }
    if (!same || width < 1 || width > 32 || (width & (width - 1))) return 0;
    for (unsigned l = 0; l < 32; l++) {
        int outside;
        w0[l].wres = w0[shfl_source(wop, l, (unsigned)arg, (unsigned)width, &outside)].wval;
    }
    for (unsigned l = 0; l < 32; l++) w0[l].state = T_RUNNABLE;
    return 1;
}

/* Releases what can be released once every runnable thread has run: warp
 * operations whose lanes have all arrived, else the block barrier. Faults
 * on what can never complete. Returns the number of threads released. */
unsigned simt_resolve(executor *x)
{
    fiber *F = x->fibers;
    unsigned n = x->nthreads, released = 0;
    /* The common case first: every thread waits at the same __syncthreads()
     * (the same call site by pointer; anything else takes the full check
     * below, which decides the same way and names what is wrong). */
    const char *file0 = F[0].file;
    int line0 = F[0].line;
    unsigned same = 0;
    while (same < n && F[same].state == T_BARRIER && F[same].line == line0 && F[same].file == file0)
        same++;
    if (same == n) {
        for (unsigned i = 0; i < n; i++) F[i].state = T_RUNNABLE;
        if (__builtin_expect(x->track, 0)) simt_races_barrier(x);
        TSAN_NEXT_BARRIER(x);
        return n;
    }
    const int plain_warps = !x->rec_log && !x->track;
    for (unsigned base = 0; base < n; base += 32) {
        unsigned count = n - base < 32 ? n - base : 32;
        fiber *w0 = &F[base];
        if (plain_warps && count == 32 && w0->state == T_WARP && uniform_shuffle(w0)) {
            released += 32;
            continue;
        }
        for (unsigned l = 0; l < count; l++) {
            fiber *f = &w0[l];
            if (f->state != T_WARP) continue;
            unsigned mask = f->wmask;
            int ready = 1;
            for (unsigned j = 0; j < 32 && ready; j++) {
                if (!(mask >> j & 1u)) continue;
                if (j >= count)
                    simt_fault(cudaErrorLaunchFailure, f,
                               "%s at %s:%d: mask 0x%08x names lane %u of warp %u, which does not "
                               "exist (the block has %u threads)",
                               wop_name(f->wop), f->file, f->line, mask, j, FIBER_WARP(f), n);
                const fiber *g = &w0[j];
                if (g->state == T_EXITED)
                    simt_fault(cudaErrorLaunchFailure, f,
                               "%s at %s:%d: mask 0x%08x names lane %u, which has already exited; "
                               "every lane named in the mask must reach the same %s",
                               wop_name(f->wop), f->file, f->line, mask, j, wop_name(f->wop));
                if (g->state != T_WARP) {
                    ready = 0; /* waits at __syncthreads: maybe a deadlock, decided below */
                    break;
                }
                if (g->wop != f->wop || (f->wop != SIMT_WOP_SYNCWARP && g->wmask != mask))
                    simt_fault(cudaErrorLaunchFailure, f,
                               "lane %u is at %s(0x%08x) at %s:%d but lane %u is at %s(0x%08x) at "
                               "%s:%d; the lanes of a mask must execute the same warp operation",
                               l, wop_name(f->wop), mask, f->file, f->line, j, wop_name(g->wop),
                               g->wmask, g->file, g->line);
            }
            if (!ready) continue;
            complete_warp_op(x, w0, count, mask, f->wop);
            released += (unsigned)__builtin_popcount(mask);
        }
    }
    if (released) return released;

    /* The block barrier: every live thread must wait at the same one. */
    const fiber *at_bar = NULL, *exited = NULL, *at_warp = NULL;
    for (unsigned i = 0; i < n; i++) {
        const fiber *f = &F[i];
        if (f->state == T_BARRIER) {
            if (!at_bar)
                at_bar = f;
            else if (f->line != at_bar->line ||
                     (f->file != at_bar->file && strcmp(f->file, at_bar->file) != 0))
                simt_fault(cudaErrorLaunchFailure, f,
                           "divergent __syncthreads(): thread (%u,%u,%u) waits at %s:%d but thread "
                           "(%u,%u,%u) waits at %s:%d; every thread of a block must reach the same "
                           "__syncthreads()",
                           at_bar->idx.x, at_bar->idx.y, at_bar->idx.z, at_bar->file, at_bar->line,
                           f->idx.x, f->idx.y, f->idx.z, f->file, f->line);
        } else if (f->state == T_EXITED) {
            if (!exited) exited = f;
        } else if (f->state == T_WARP) {
            if (!at_warp) at_warp = f;
        }
    }
    if (at_bar && at_warp)
        simt_fault(cudaErrorLaunchFailure, at_warp,
                   "deadlock: this thread waits at %s at %s:%d for lanes that wait at "
                   "__syncthreads() at %s:%d",
                   wop_name(at_warp->wop), at_warp->file, at_warp->line, at_bar->file,
                   at_bar->line);
    if (at_bar && exited)
        simt_fault(cudaErrorLaunchFailure, exited,
                   "divergent __syncthreads(): this thread exited without reaching the "
                   "__syncthreads() at %s:%d where thread (%u,%u,%u) waits; every thread of a "
                   "block must reach it (move the barrier out of the condition)",
                   at_bar->file, at_bar->line, at_bar->idx.x, at_bar->idx.y, at_bar->idx.z);
    if (!at_bar)
        simt_fault(cudaErrorLaunchFailure, at_warp, "deadlock in warp operations (internal)");
    for (unsigned i = 0; i < n; i++) F[i].state = T_RUNNABLE;
    if (__builtin_expect(x->track, 0)) simt_races_barrier(x);
    TSAN_NEXT_BARRIER(x);
    return n;
}

/* ---- barriers and warp operations, called from kernels ------------------- */

/* A thread running as a plain call reached a barrier or warp operation: the
 * block turns into fibers here (emu.c). */
static __attribute__((noinline, cold)) fiber *to_fibers(executor *x, const char *what,
                                                        const char *file, int line)
{
    fiber *f = simt_plain_to_fibers(x);
    if (!f)
        simt_fault(cudaErrorMemoryAllocation, x->cur,
                   "%s at %s:%d: no memory for the scheduler's stack (the block ran as plain "
                   "calls until this thread reached it)",
                   what, file, line);
    return f;
}

/* What a thread waits at, for messages: wop, or -1 for __syncthreads() (named only when a
 * message is written, not at every call). */
static const char *waits_at(int wop) { return wop < 0 ? "__syncthreads()" : wop_name(wop); }

static __attribute__((noinline, cold, noreturn)) void outside_kernel(int wop, const char *file,
                                                                     int line)
{
    fprintf(stderr, "simt: %s called outside a kernel (%s:%d)\n", waits_at(wop), file, line);
    abort();
}

static inline __attribute__((always_inline)) fiber *arrive(int wop, const char *file, int line)
{
    executor *x = simt_X;
    if (__builtin_expect(!x || !x->cur, 0)) outside_kernel(wop, file, line);
    /* thread 0 reached no barrier, so this thread runs as a plain call: fibers from here */
    fiber *f = __builtin_expect(x->plain, 0) ? to_fibers(x, waits_at(wop), file, line) : x->cur;
    x->synced = 1;
    f->file = file;
    f->line = line;
    return f;
}

void simt_syncthreads(const char *file, int line)
{
    fiber *f = arrive(-1, file, line);
    executor *x = simt_X;
    f->state = T_BARRIER;
#ifdef SIMT_TSAN
    __tsan_release(&x->tsan_barrier[x->tsan_bar_gen & 1u]);
#endif
    FIBER_YIELD(x, f);
#ifdef SIMT_TSAN
    __tsan_acquire(&x->tsan_barrier[(x->tsan_bar_gen - 1u) & 1u]); /* released: counted */
#endif
}

/* A warp operation up to the switch: validated and recorded (inlined into
 * each entry point, which then yields in its own frame). */
static inline __attribute__((always_inline)) fiber *
warp_arrive(int wop, unsigned mask, uint64_t v, int arg, int width, const char *file, int line)
{
    fiber *f = arrive(wop, file, line);
    if (!(mask >> FIBER_LANE(f) & 1u))
        simt_fault(cudaErrorLaunchFailure, f,
                   "%s at %s:%d: the mask 0x%08x does not include the calling lane %u",
                   wop_name(wop), file, line, mask, FIBER_LANE(f));
    if (width < 1 || width > 32 || (width & (width - 1)))
        simt_fault(cudaErrorLaunchFailure, f,
                   "%s at %s:%d: width %d is not a power of two from 1 to 32", wop_name(wop), file,
                   line, width);
    f->wop = wop;
    f->wmask = mask;
    f->wval = v;
    f->warg = arg;
    f->wwidth = width;
    f->state = T_WARP;
#ifdef SIMT_TSAN
    __tsan_release(&simt_X->tsan_warp[FIBER_WARP(f) % 32]);
#endif
    return f;
}

#ifdef SIMT_TSAN
#define WARP_ACQUIRE(x, f) __tsan_acquire(&(x)->tsan_warp[FIBER_WARP(f) % 32])
#else
#define WARP_ACQUIRE(x, f) ((void)0)
#endif

void simt_syncwarp(unsigned mask, const char *file, int line)
{
    fiber *f = warp_arrive(SIMT_WOP_SYNCWARP, mask, 0, 0, 32, file, line);
    executor *x = simt_X;
    FIBER_YIELD(x, f);
    WARP_ACQUIRE(x, f);
}

uint64_t simt_shfl(unsigned mask, uint64_t value, int arg, int width, int kind, const char *file,
                   int line)
{
    fiber *f = warp_arrive(kind, mask, value, arg, width, file, line);
    executor *x = simt_X;
    FIBER_YIELD(x, f);
    WARP_ACQUIRE(x, f);
    return f->wres;
}

unsigned simt_vote(unsigned mask, int pred, int kind, const char *file, int line)
{
    fiber *f = warp_arrive(kind, mask, pred != 0, 0, 32, file, line);
    executor *x = simt_X;
    FIBER_YIELD(x, f);
    WARP_ACQUIRE(x, f);
    return (unsigned)f->wres;
}

unsigned simt_activemask(void)
{
    executor *x = simt_X;
    const fiber *f = x->cur;
    unsigned base = FIBER_WARP(f) * 32, m = 0;
    for (unsigned l = 0; l < 32 && base + l < x->nthreads; l++)
        if (x->fibers[base + l].state != T_EXITED) m |= 1u << l;
    return m;
}

void simt_assert_fail(const char *expr, const char *file, int line, const char *func)
{
    executor *x = simt_X;
    fiber *f = x ? x->cur : NULL;
    if (!f) {
        fprintf(stderr, "%s:%d: %s: Assertion `%s' failed.\n", file, line, func, expr);
        abort();
    }
    /* The first of the block: CUDA's own wording for a device-side assert.
     * The others are counted (fault.c adds how many to the report). */
    if (!x->assert_same) {
        simt_fault_note(f,
                        "%s:%d: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.",
                        file, line, func, x->bv.block_idx.x, x->bv.block_idx.y, x->bv.block_idx.z,
                        simt_threadIdx.x, simt_threadIdx.y, simt_threadIdx.z, expr);
        x->assert_file = file;
        x->assert_line = line;
        x->assert_same = 1;
    } else if (line == x->assert_line && strcmp(file, x->assert_file) == 0)
        x->assert_same++;
    else
        x->assert_other++;
    /* The thread stops; the block's others go on, and the kernel stops when
     * the block ends (emu.c). */
    if (x->plain || f == x->host) _longjmp(x->plain_ctx, 1); /* its frames are on the OS stack */
    f->state = T_EXITED;
    x->alive--;
    FIBER_YIELD(x, f);
    abort(); /* an exited thread is not resumed */
}
