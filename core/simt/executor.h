/*
 * executor.h — what the parts of the SIMT emulator share: one OS thread's
 * executor (its fibers, the block it runs, its fault landing place), the
 * context switch between fibers, and the fault report. Not public; only the
 * emulator's files (emu.c, stacks.c, sync.c, fault.c, watch.c, memcheck.c, atomics.c,
 * memstats.c, races.c) include it. See emu.c for how a launch runs.
 */
#ifndef SIMT_EXECUTOR_H
#define SIMT_EXECUTOR_H

#include <setjmp.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "emu.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define ASAN_START(save, bottom, size) __sanitizer_start_switch_fiber((save), (bottom), (size))
#define ASAN_FINISH(save, bottom, size) __sanitizer_finish_switch_fiber((save), (bottom), (size))
#else
#define ASAN_START(save, bottom, size) ((void)(save), (void)(bottom), (void)(size))
#define ASAN_FINISH(save, bottom, size) ((void)(save), (void)(bottom), (void)(size))
#endif

#ifdef SIMT_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
void __tsan_set_fiber_name(void *fiber, const char *name);
void __tsan_destroy_fiber(void *fiber);
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define TSAN_NO_SYNC 1u /* __tsan_switch_to_fiber_no_sync */
#else
#define TSAN_NO_SYNC 0u
#endif

/* The context switch, with no system call (swapcontext would make one per
 * switch for the signal mask).
 *
 * Under ASan and TSan: glibc's _setjmp/_longjmp, which the sanitizers
 * intercept, and every switch goes through the scheduler so the fiber
 * annotations stay exact.
 *
 * Otherwise, on x86-64 and AArch64: GCC's __builtin_setjmp/__builtin_longjmp,
 * which save and restore only the frame pointer, stack pointer and resume
 * address (glibc's _longjmp also demangles pointers and runs the
 * cancellation unwinder on every jump). Every callee-saved register is
 * declared clobbered around the save, so the function that saves keeps what
 * it needs in its own frame and restores its caller's registers on return.
 * Fibers then hand over directly to the next runnable thread of the round:
 * one jump per switch instead of two. */
#if defined(__SANITIZE_ADDRESS__) || defined(SIMT_TSAN) ||                                         \
    !(defined(__x86_64__) || defined(__aarch64__))
typedef jmp_buf simt_ctx;
#define CTX_SAVE(c) _setjmp(c)
#define ctx_jump(c) _longjmp(*(c), 1)
#define DIRECT_SWITCH 0
#else
typedef void *simt_ctx[5];
#if defined(__x86_64__)
#define CLOBBER_CALLEE_SAVED() __asm__ volatile("" ::: "rbx", "r12", "r13", "r14", "r15", "memory")
#else
#define CLOBBER_CALLEE_SAVED()                                                                     \
    __asm__ volatile("" ::                                                                         \
                         : "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28",   \
                           "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory")
#endif
#define CTX_SAVE(c)                                                                                \
    __extension__({                                                                                \
        CLOBBER_CALLEE_SAVED();                                                                    \
        int r_ = __builtin_setjmp(c);                                                              \
        CLOBBER_CALLEE_SAVED();                                                                    \
        r_;                                                                                        \
    })
/* Not in the function that saves: GCC wants the two builtins apart. */
static __attribute__((noinline, noreturn, unused)) void ctx_jump(simt_ctx *c)
{
    __builtin_longjmp(*c, 1);
}
#define DIRECT_SWITCH 1
#endif

/* A fiber's hand-over to the next (FIBER_YIELD): on x86-64 ctx_jump's four
 * instructions in place (__builtin_setjmp's buffer: frame pointer, resume
 * address, stack pointer), not a call. The call pushed a return address
 * that no return pops, so the CPU's return-stack buffer no longer matched:
 * the resumed fiber's return from the barrier function into its kernel
 * mispredicted at every switch. Without it that return goes back to the
 * very call site the leaving fiber came from (the same barrier of the same
 * kernel), which the buffer predicts. */
#if DIRECT_SWITCH && defined(__x86_64__)
#define ctx_hand_over(c)                                                                           \
    do {                                                                                           \
        __asm__ volatile("movq 8(%0), %%rax\n\t"                                                   \
                         "movq (%0), %%rdx\n\t"                                                    \
                         "movq 16(%0), %%rsp\n\t"                                                  \
                         "movq %%rdx, %%rbp\n\t"                                                   \
                         "jmp *%%rax"                                                              \
                         :                                                                         \
                         : "r"(*(c))                                                               \
                         : "rax", "rdx", "memory");                                                \
        __builtin_unreachable();                                                                   \
    } while (0)
#else
#define ctx_hand_over(c) ctx_jump(c)
#endif

enum { T_RUNNABLE, T_BARRIER, T_WARP, T_EXITED };
#define STACK_GUARD ((size_t)64 * 1024)
/* Each fiber's stack slot: the guard, then a gap of STACK_COLOUR(i) bytes
 * (mapped, unused), then the stack. Without the gap every stack top lies at
 * the same offset modulo 64 KiB, so the few cache lines each switch touches
 * there fall into the same cache sets for all the threads of a block, and
 * evict one another at every barrier; staggered by 512 bytes a fiber
 * (128 colours) they spread over the L1 and L2 sets. A stack overflow still
 * reaches the guard (after at most the gap). */
#define STACK_COLOURS 128u
#define STACK_COLOUR(i) ((size_t)((i) % STACK_COLOURS) * 512)
#define STACK_SLOT(stack_size) ((stack_size) + STACK_GUARD + STACK_COLOURS * (size_t)512)
enum { CACHE_WAYS = 8 };

/* The block a launch is running now. */
typedef struct simt_block_view {
    uint3 block_idx;
    dim3 block_dim, grid_dim;
    void *dynamic_shared;
} simt_block_view;

/* What a switch touches comes first, in one cache line (fibers are
 * 64-byte aligned): the leaving fiber writes state, file, line and its
 * context; the next one's state, threadIdx and context are read. */
typedef struct fiber {
    int state;
    int line;
    const char *file; /* where it waits */
    uint3 idx;        /* its threadIdx */
    unsigned linear;  /* its lane is linear % 32 and its warp linear / 32 (FIBER_LANE, _WARP) */
    simt_ctx ctx;     /* __builtin_setjmp uses its first three words */
    /* the pending warp operation */
    int wop;
    unsigned wmask;
    uint64_t wval, wres;
    int warg, wwidth;
    char *stack;
    void *asan_fake;
#ifdef SIMT_TSAN
    void *tsan_fiber;
    char tsan_name[96];
#endif
} __attribute__((aligned(64))) fiber;
#define FIBER_LANE(f) ((f)->linear & 31u)
#define FIBER_WARP(f) ((f)->linear >> 5)

typedef struct executor {
    fiber *fibers;
    unsigned nfibers; /* fibers with a stack */
    unsigned nprimed; /* fibers whose ctx is at the top of their loop */
    char *stacks;
    size_t stack_size; /* per fiber, without the guard page */
    simt_ctx sched;    /* the scheduler's context */
    jmp_buf abort_ctx; /* where a fault lands */
    fiber *cur;
    fiber *priming;
    const simt_launch *launch;
    simt_block_view bv;
    unsigned nthreads, alive, round;
    unsigned pos;      /* position in `order` of the thread running now */
    unsigned order_n;  /* order[] holds the forward order for this many */
    int plain;         /* running threads as plain calls */
    int plain_forward; /* ... in the forward order (x->pos not kept) */
    void *altstack;    /* for the fault handler: a kernel may overflow its stack */
    int synced;        /* the current block reached a barrier or warp op */
    unsigned *order;
    void *dyn_shared;
    size_t dyn_cap;
    cudaError_t err;
    char *report;
    size_t report_cap;
    /* the allocations last accessed (a vector add touches three) */
    struct {
        uintptr_t base;
        size_t len;
    } cache[CACHE_WAYS];
    unsigned cache_next, cache_gen;
    struct memcount *mc; /* simtMemStats: this block's requests, or NULL */
    /* simtRecord* (record.c): 1 while this executor runs the recorded
     * kernel; 1 while the current block's accesses and warp ops are logged;
     * that block's linear index and its start (seconds from the kernel's) */
    int rec, rec_log, rec_in_block;
    uint32_t rec_block;
    double rec_block_start;
    /* for watchdogs (simtDescribeStalled): this OS thread's CPU clock, the
     * blocks it has finished, and what the watchdog saw last (its own) */
    clockid_t cpu_clock;
    int have_cpu_clock;
    _Atomic unsigned long long blocks_done;
    unsigned long long wd_blocks;
    const simt_launch *wd_launch;
    double wd_cpu;
    /* device asserts that failed in the block running now (sync.c): how many
     * threads failed the first one's (whose report is written), at which
     * call site, and how many failed another; the kernel stops when the
     * block ends. A thread run as a plain call that fails one lands at
     * plain_ctx, and the block goes on at plain_pos. */
    unsigned assert_same, assert_other;
    const char *assert_file;
    int assert_line;
    unsigned plain_pos;
    jmp_buf plain_ctx;
    /* the scheduler's stack, as ASan learns it */
    void *asan_fake;
    const void *sched_bottom;
    size_t sched_size;
    /* stacks.c: in a launch (its stacks may not be taken back), and the next
     * executor holding stacks, least recently used first */
    int stacks_busy;
    struct executor *stacks_next;
    /* A plain block turned into fibers (emu.c, simt_plain_to_fibers): the
     * thread that reached a barrier runs on, on this OS thread's stack, as
     * the host fiber; the scheduler runs on the aux stack meanwhile. */
    fiber *host;
    simt_ctx host_ctx; /* the host's own fiber, parked on its own stack meanwhile */
    void *host_fake;
    char *aux_stack;
    size_t aux_size;
    int aux_primed;
    simt_ctx aux_ctx;  /* the aux scheduler, parked at the top of its loop */
    simt_ctx aux_back; /* where it jumps when parked: the priming, or host_exit */
    void *aux_fake;
    const void *os_bottom; /* this OS thread's stack, as ASan learns it */
    size_t os_size;
    int fault_switched; /* the fault left a fiber's or the aux stack */
    /* the race check of the normal run (races.c): its state, whether the
     * block running now is checked, which blocks of this launch are */
    struct races *races;
    int track, races_launch;
#ifdef SIMT_TSAN
    void *tsan_sched;
    /* A barrier's release and acquire go to tsan_barrier[its number in the
     * block % 2]: a thread that has passed barrier k and reaches k + 1
     * before a slower one has resumed from k must not hand it what it did
     * in between (one object would: every race between two barriers hidden). */
    unsigned tsan_bar_gen;
    char tsan_barrier[2], tsan_block, tsan_warp[32];
#endif
} executor;

/* The calling OS thread's executor (NULL before its first launch). */
extern _Thread_local executor *simt_X;

/* ---- fiber stacks (stacks.c) --------------------------------------------- */

/* Makes sure x has n fibers with guarded stacks, within the process's budget
 * of guards (see stacks.c): may take back idle executors' stacks, or wait
 * for a running launch to end. 0, or -1 with why in report. Marks x as in a
 * launch until simt_stacks_release. */
int simt_stacks_ensure(executor *x, unsigned n, char *report, size_t cap);
/* x's launch is over: its stacks stay, but others may take them back. */
void simt_stacks_release(executor *x);
/* Unmaps x's stacks (its thread ends). */
void simt_stacks_free(executor *x);
/* Guards made in the process now, and the most there may be (*limit). */
unsigned long simt_stacks_guards(unsigned long *limit);

/* ---- the context switch between fibers (emu.c, sync.c) ------------------ */

/* The next runnable thread of this round after f, the one running now (at
 * position x->pos of the order). In the forward order (the default) the
 * order is the identity, so the next candidates are f + 1, f + 2, ...:
 * found from f, which the caller holds in a register, not from x->pos and
 * order[] in memory. Two loads fewer on the chain from one fiber's switch
 * to the next one's first instruction (the next fiber's stack pointer comes
 * from its address). x->pos is kept up to date all the same. */
static inline __attribute__((always_inline)) fiber *next_runnable(executor *x, fiber *f)
{
    if (simt_schedule_kind == 0) {
        /* x->pos past the end: no hand-over (run_block probing thread 0
         * alone); a branch, predicted, not a load the next address waits for */
        if (x->pos >= x->nthreads) return NULL;
        fiber *end = x->fibers + x->nthreads;
        for (fiber *g = f + 1; g < end; g++)
            if (g->state == T_RUNNABLE) {
                x->pos = (unsigned)(g - x->fibers);
                return g;
            }
        x->pos = x->nthreads;
        return NULL;
    }
    while (++x->pos < x->nthreads) {
        fiber *g = &x->fibers[x->order[x->pos]];
        if (g->state == T_RUNNABLE) return g;
    }
    return NULL;
}

/* Leaves fiber f (waiting at a barrier, or exited): straight to the next
 * runnable thread of the round, else back to the scheduler; continues when f
 * is resumed. Under the race check the switch carries no happens-before:
 * only barriers order the accesses of different threads.
 *
 * A macro, expanded in the frame of the barrier function the kernel called:
 * after a switch the CPU's return-stack buffer holds the leaving fiber's
 * returns, which the resumed fiber's match only where both came the same
 * way (the same barrier of the same kernel), so the chain from kernel code
 * to the switch is kept one call deep, and the jump is not a call
 * (ctx_hand_over). */
#define FIBER_YIELD(x, f)                                                                          \
    do {                                                                                           \
        if (!CTX_SAVE((f)->ctx)) {                                                                 \
            fiber *g_ = DIRECT_SWITCH && !(x)->priming ? next_runnable(x, f) : NULL;               \
            if (g_) {                                                                              \
                (x)->cur = g_;                                                                     \
                simt_threadIdx = g_->idx;                                                          \
                ctx_hand_over(&g_->ctx);                                                           \
            }                                                                                      \
            ASAN_START(&(f)->asan_fake, (x)->sched_bottom, (x)->sched_size);                       \
            TSAN_TO_SCHED(x);                                                                      \
            ctx_jump(&(x)->sched);                                                                 \
        }                                                                                          \
        ASAN_FINISH((f)->asan_fake, &(x)->sched_bottom, &(x)->sched_size);                         \
    } while (0)
#ifdef SIMT_TSAN
#define TSAN_TO_SCHED(x) __tsan_switch_to_fiber((x)->tsan_sched, TSAN_NO_SYNC)
#else
#define TSAN_TO_SCHED(x) ((void)0)
#endif

/* A thread running as a plain call (x->plain) reached a barrier or warp
 * operation: turns the block into fibers (the threads before it in this
 * round's order have exited, the ones after it have not started) with this
 * thread as the host fiber, and returns its fiber, or NULL when the aux
 * scheduler's stack cannot be had. The caller then waits as any fiber does
 * (FIBER_YIELD). (emu.c) */
fiber *simt_plain_to_fibers(executor *x);

/* ---- faults (fault.c) ----------------------------------------------------- */

/* Stops the kernel: records err and the report (naming the kernel, block
 * and thread f, or the block only when f is NULL), and jumps to the launch. */
_Noreturn __attribute__((format(printf, 3, 4))) void simt_fault(cudaError_t err, const fiber *f,
                                                                const char *fmt, ...);
/* Writes the report of a fault that does not stop the kernel yet: the first
 * failed assert of a block. While a block has failed asserts, any fault
 * stops the kernel with cudaErrorAssert and their report. */
__attribute__((format(printf, 2, 3))) void simt_fault_note(const fiber *f, const char *fmt, ...);
/* Stops the kernel at the end of a block in which asserts failed: their
 * report, with how many threads failed. */
_Noreturn void simt_fault_asserts(void);
/* Installs the SIGSEGV handler that turns a kernel's bad access into a
 * fault (once per process; only in the shadow build). */
void simt_install_fault_handler(void);

/* ---- barriers (sync.c) ---------------------------------------------------- */

/* Releases what can be released once every runnable thread has run: warp
 * operations whose lanes have all arrived, else the block barrier. Faults
 * on what can never complete. Returns the number of threads released. */
unsigned simt_resolve(executor *x);

/* ---- the executors, for watchdogs (watch.c) ------------------------------- */

/* Enters a new executor in the table simtDescribeRunning reads; takes one
 * out before it is freed (under the lock simtDescribeStalled holds). */
void simt_register_executor(executor *x);
void simt_unregister_executor(executor *x);

#endif
