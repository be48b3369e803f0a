/*
 * emu.c — the SIMT emulator: runs a kernel written in CUDA C on the CPU.
 *
 * A launch runs its blocks one after another on the calling OS thread (a
 * stream's worker). Within a block every CUDA thread is a fiber with its own
 * stack. Fibers are created once per OS thread with makecontext and then
 * switched with setjmp/longjmp (see "The context switch" below; swapcontext
 * would cost a sigprocmask system call per switch). Between two barriers the fibers run one after
 * another, to completion or to their next barrier, in the order the schedule
 * names: forward, reverse or random:SEED (SIMT_SCHEDULE). A missing
 * __syncthreads() therefore shows up as a wrong result under some order,
 * just as it does on hardware under some timing.
 *
 * A block's thread 0 runs first, as a fiber. If it finishes without reaching
 * any barrier or warp operation, the block's other threads run as plain
 * function calls on this stack: kernels with no barrier pay no fiber switch
 * (SIMT_PLAIN=0 turns this off, for a kernel whose thread 0 rightly skips
 * every warp operation the others perform).
 *
 * Barriers: __syncthreads() waits for every live thread of the block and
 * checks they all reached the same call site; warp operations (__syncwarp,
 * __shfl*_sync, __ballot_sync, __any_sync, __all_sync) wait for the lanes
 * their mask names and check that none of those lanes exited or waits
 * elsewhere. Faults (divergent barrier, bad mask, out-of-bounds access,
 * failed assert) stop the kernel and come back as a CUDA error plus a
 * report naming the kernel, block and thread.
 *
 * Memory checks: kernel files are compiled with GCC's kernel-address
 * instrumentation. In build/sim it is inline: each load and store reads a
 * shadow byte and calls __asan_report_* (below) only when the byte is
 * poisoned; the runtime poisons the bytes after every device allocation, and
 * freed or never-allocated device memory is unmapped, so touching it faults
 * into the SIGSEGV handler below. In the ASan build it is call mode: every
 * access calls __asan_{load,store}N_noabort(addr), checked against the
 * allocation table. Either way an out-of-bounds access stops the kernel with
 * cudaErrorIllegalAddress and a report naming the nearest allocation.
 *
 * Sanitizers: under AddressSanitizer every switch is announced with
 * __sanitizer_{start,finish}_switch_fiber; under the race check (SIMT_TSAN)
 * each fiber is a ThreadSanitizer fiber, switches between barriers carry no
 * synchronisation, and barriers release/acquire, so TSan sees exactly the
 * happens-before that CUDA guarantees.
 */
#undef _FORTIFY_SOURCE /* __longjmp_chk aborts on jumps between stacks */
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "internal.h"

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
static __attribute__((noinline, noreturn)) void ctx_jump(simt_ctx *c) { __builtin_longjmp(*c, 1); }
#define DIRECT_SWITCH 1
#endif

enum { T_RUNNABLE, T_BARRIER, T_WARP, T_EXITED };
#define STACK_GUARD ((size_t)64 * 1024)
enum { CACHE_WAYS = 8 };

/* The block a launch is running now. */
typedef struct simt_block_view {
    uint3 block_idx;
    dim3 block_dim, grid_dim;
    void *dynamic_shared;
} simt_block_view;

typedef struct fiber {
    uint3 idx; /* its threadIdx */
    simt_ctx ctx;
    int state;
    unsigned linear, lane, warp;
    const char *file; /* where it waits */
    int line;
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
} fiber;

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
    unsigned pos;     /* position in `order` of the thread running now */
    unsigned order_n; /* order[] holds the forward order for this many */
    int plain;        /* running threads as plain calls */
    void *altstack;   /* for the fault handler: a kernel may overflow its stack */
    int synced;       /* the current block reached a barrier or warp op */
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
    /* for watchdogs (simtDescribeStalled): this OS thread's CPU clock, the
     * blocks it has finished, and what the watchdog saw last (its own) */
    clockid_t cpu_clock;
    int have_cpu_clock;
    _Atomic unsigned long long blocks_done;
    unsigned long long wd_blocks;
    const simt_launch *wd_launch;
    double wd_cpu;
    /* the scheduler's stack, as ASan learns it */
    void *asan_fake;
    const void *sched_bottom;
    size_t sched_size;
#ifdef SIMT_TSAN
    void *tsan_sched;
    char tsan_barrier, tsan_block, tsan_warp[32];
#endif
} executor;

_Thread_local uint3 simt_threadIdx, simt_blockIdx;
_Thread_local dim3 simt_blockDim, simt_gridDim;
_Thread_local void *simt_dynamic_shared;
static _Thread_local executor *X;
static void memcount_flush(struct memcount *m);
static void memcount_clear(struct memcount *m);
static void memcount_free(struct memcount *m);
static simt_access_observer observer;

int simt_schedule_kind;
unsigned long long simt_schedule_seed;

void simtSetSchedule(int kind, unsigned long long seed)
{
    simt_schedule_kind = kind;
    simt_schedule_seed = seed;
}

void simtSetAccessObserver(simt_access_observer fn) { observer = fn; }

/* ---- faults ---------------------------------------------------------- */

/* The thread a fault names: the one running now (f), or the block only. */
static void where(const executor *x, const fiber *f, char *buf, size_t cap)
{
    const simt_block_view *b = &x->bv;
    const simt_kernel *k = x->launch->kernel;
    uint3 t = f == x->cur ? simt_threadIdx : (f ? f->idx : simt_threadIdx);
    if (f)
        snprintf(buf, cap, "kernel %s (%s:%d), blockIdx (%u,%u,%u), threadIdx (%u,%u,%u)", k->name,
                 k->file, k->line, b->block_idx.x, b->block_idx.y, b->block_idx.z, t.x, t.y, t.z);
    else
        snprintf(buf, cap, "kernel %s (%s:%d), blockIdx (%u,%u,%u)", k->name, k->file, k->line,
                 b->block_idx.x, b->block_idx.y, b->block_idx.z);
}

/* Stops the kernel: records err and the report, and jumps to the launch. */
static _Noreturn __attribute__((format(printf, 3, 4))) void fault(cudaError_t err, const fiber *f,
                                                                  const char *fmt, ...)
{
    executor *x = X;
    char head[256];
    where(x, f, head, sizeof head);
    int n = snprintf(x->report, x->report_cap, "%s: ", head);
    if (n < 0 || (size_t)n >= x->report_cap) n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->report + n, x->report_cap - (size_t)n, fmt, ap);
    va_end(ap);
    x->err = err;
    if (x->cur && !x->plain) {
        /* Leaving a fiber for good: its stack is abandoned (re-primed). */
        ASAN_START(NULL, x->sched_bottom, x->sched_size);
#ifdef SIMT_TSAN
        __tsan_switch_to_fiber(x->tsan_sched, 0);
#endif
    }
    _longjmp(x->abort_ctx, 1);
}

/* ---- fibers ------------------------------------------------------------ */

/* The next runnable thread of this round after the one running now. */
static fiber *next_runnable(executor *x)
{
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
 * after a switch every return up the resumed fiber's call chain mispredicts
 * (the CPU's return-stack buffer holds the other fiber's), so the chain from
 * kernel code to the switch is kept one call deep. */
#define FIBER_YIELD(x, f)                                                                          \
    do {                                                                                           \
        if (!CTX_SAVE((f)->ctx)) {                                                                 \
            fiber *g_ = DIRECT_SWITCH && !(x)->priming ? next_runnable(x) : NULL;                  \
            if (g_) {                                                                              \
                (x)->cur = g_;                                                                     \
                simt_threadIdx = g_->idx;                                                          \
                ctx_jump(&g_->ctx);                                                                \
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

static void fiber_yield(fiber *f)
{
    executor *x = X;
    FIBER_YIELD(x, f);
}

static void fiber_main(void)
{
    executor *x = X;
    fiber *f = x->priming;
    ASAN_FINISH(NULL, &x->sched_bottom, &x->sched_size);
    fiber_yield(f); /* primed: back to the scheduler */
    for (;;) {
        x = X;
#ifdef SIMT_TSAN
        __tsan_acquire(&x->tsan_block); /* blocks run one after another */
#endif
        x->launch->kernel->entry(x->launch->args);
#ifdef SIMT_TSAN
        __tsan_release(&x->tsan_block);
#endif
        f->state = T_EXITED;
        x->alive--;
        fiber_yield(f);
    }
}

/* Scheduler -> fiber (synchronising: the fiber sees the launch's setup). */
static void resume(executor *x, fiber *f)
{
    x->cur = f;
    simt_threadIdx = f->idx;
    if (!CTX_SAVE(x->sched)) {
        ASAN_START(&x->asan_fake, f->stack, x->stack_size);
#ifdef SIMT_TSAN
        __tsan_switch_to_fiber(f->tsan_fiber, 0);
#endif
        ctx_jump(&f->ctx);
    }
    ASAN_FINISH(x->asan_fake, NULL, NULL);
    x->cur = NULL;
}

static int prime(executor *x, fiber *f)
{
    ucontext_t uc;
    if (getcontext(&uc) != 0) return -1;
    uc.uc_stack.ss_sp = f->stack;
    uc.uc_stack.ss_size = x->stack_size;
    uc.uc_link = NULL;
    makecontext(&uc, fiber_main, 0);
    x->priming = f;
#ifdef SIMT_TSAN
    if (!f->tsan_fiber) f->tsan_fiber = __tsan_create_fiber(0);
#endif
    if (!CTX_SAVE(x->sched)) {
        ASAN_START(&x->asan_fake, f->stack, x->stack_size);
#ifdef SIMT_TSAN
        __tsan_switch_to_fiber(f->tsan_fiber, 0);
#endif
        setcontext(&uc); /* does not return: the fiber jumps back to x->sched */
    }
    ASAN_FINISH(x->asan_fake, NULL, NULL);
    x->priming = NULL;
    return 0;
}

static size_t stack_size_from_env(void)
{
    const char *s = getenv("SIMT_STACK_KB");
    long kb = s ? strtol(s, NULL, 10) : 0;
#if defined(__SANITIZE_ADDRESS__) || defined(SIMT_TSAN)
    if (kb < 64) kb = 512;
#else
    if (kb < 16) kb = 128;
#endif
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return ((size_t)kb * 1024 + page - 1) / page * page;
}

/* Makes sure n fibers exist with stacks, each above a PROT_NONE guard of
 * STACK_GUARD bytes: a kernel that overflows its stack faults (kernel files
 * are compiled with -fstack-clash-protection, so even a frame larger than
 * the guard touches it) instead of corrupting its neighbour's stack. */
static int ensure_fibers(executor *x, unsigned n)
{
    if (n <= x->nfibers) return 0;
    enum { MAXT = 1024 };
    if (!x->fibers) {
        x->stack_size = stack_size_from_env();
        size_t slot = x->stack_size + STACK_GUARD;
        x->stacks = mmap(NULL, slot * MAXT, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (x->stacks == MAP_FAILED) return -1;
        for (unsigned i = 0; i < MAXT; i++) mprotect(x->stacks + i * slot, STACK_GUARD, PROT_NONE);
        x->fibers = calloc(MAXT, sizeof *x->fibers);
        x->order = calloc(MAXT, sizeof *x->order);
        if (!x->fibers || !x->order) return -1;
        for (unsigned i = 0; i < MAXT; i++) x->fibers[i].stack = x->stacks + i * slot + STACK_GUARD;
    }
    x->nfibers = n;
    return 0;
}

static void install_fault_handler(void);

/* Every OS thread's executor, for simtDescribeRunning (diagnostics). An
 * executor is freed only under executors_lock, so that simtDescribeStalled
 * (which holds it) never reads a freed one. */
enum { MAX_EXECUTORS = 512 };
static executor *_Atomic executors[MAX_EXECUTORS];
static pthread_mutex_t executors_lock = PTHREAD_MUTEX_INITIALIZER;

/* Blocks finished and ops done, all devices: what a watchdog calls progress. */
_Atomic unsigned long long simt_progress_count;

unsigned long long simtProgress(void)
{
    return atomic_load_explicit(&simt_progress_count, memory_order_relaxed);
}

static void register_executor(executor *x, executor *old)
{
    for (int i = 0; i < MAX_EXECUTORS; i++) {
        executor *expect = old;
        if (atomic_compare_exchange_strong(&executors[i], &expect, x)) return;
    }
}

static int describe(const executor *x, const simt_launch *l, const char *sep, char *buf,
                    size_t cap);

size_t simtDescribeRunning(char *buf, size_t cap)
{
    size_t n = 0;
    if (cap) buf[0] = '\0';
    for (int i = 0; i < MAX_EXECUTORS && n + 1 < cap; i++) {
        const executor *x = atomic_load(&executors[i]);
        const simt_launch *l = x ? x->launch : NULL;
        if (!l) continue;
        int w = describe(x, l, n ? "; " : "", buf + n, cap - n);
        if (w < 0) break;
        n += (size_t)w < cap - n ? (size_t)w : cap - n - 1;
    }
    return n;
}

/* What runs on executor x now, as simtDescribeRunning says it. */
static int describe(const executor *x, const simt_launch *l, const char *sep, char *buf, size_t cap)
{
    const simt_kernel *k = l->kernel;
    const fiber *f = x->cur;
    if (f && !x->plain)
        return snprintf(buf, cap,
                        "%skernel %s (%s:%d) is in blockIdx (%u,%u,%u), threadIdx (%u,%u,%u)", sep,
                        k->name, k->file, k->line, x->bv.block_idx.x, x->bv.block_idx.y,
                        x->bv.block_idx.z, f->idx.x, f->idx.y, f->idx.z);
    return snprintf(buf, cap, "%skernel %s (%s:%d) is in blockIdx (%u,%u,%u)", sep, k->name,
                    k->file, k->line, x->bv.block_idx.x, x->bv.block_idx.y, x->bv.block_idx.z);
}

size_t simtDescribeStalled(double cpu_seconds, char *buf, size_t cap)
{
    size_t n = 0;
    if (cap) buf[0] = '\0';
    pthread_mutex_lock(&executors_lock);
    for (int i = 0; i < MAX_EXECUTORS; i++) {
        executor *x = atomic_load(&executors[i]);
        if (!x || !x->have_cpu_clock) continue;
        const simt_launch *l = *(const simt_launch *volatile *)&x->launch;
        unsigned long long b = atomic_load_explicit(&x->blocks_done, memory_order_relaxed);
        struct timespec ts;
        if (clock_gettime(x->cpu_clock, &ts) != 0) continue;
        double t = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
        if (!l || l != x->wd_launch || b != x->wd_blocks) { /* a new block, or none */
            x->wd_launch = l;
            x->wd_blocks = b;
            x->wd_cpu = t;
            continue;
        }
        if (t - x->wd_cpu <= cpu_seconds || n + 1 >= cap) continue;
        int w = describe(x, l, n ? "; " : "", buf + n, cap - n);
        if (w < 0) break;
        n += (size_t)w < cap - n ? (size_t)w : cap - n - 1;
    }
    pthread_mutex_unlock(&executors_lock);
    return n;
}

static executor *get_executor(void)
{
    if (!X) {
        X = calloc(1, sizeof *X);
        if (X) X->have_cpu_clock = pthread_getcpuclockid(pthread_self(), &X->cpu_clock) == 0;
        if (X) register_executor(X, NULL);
        install_fault_handler();
#ifdef SIMT_SHADOW
        stack_t ss = {.ss_size = 64 * 1024};
        if (X && (ss.ss_sp = X->altstack = malloc(ss.ss_size))) sigaltstack(&ss, NULL);
#endif
    }
#ifdef SIMT_TSAN
    if (X && !X->tsan_sched) X->tsan_sched = __tsan_get_current_fiber();
#endif
    return X;
}

const char *simt_emu_current_kernel(void)
{
    const executor *x = X;
    return x && x->launch ? x->launch->kernel->name : NULL;
}

void simt_emu_thread_exit(void)
{
    executor *x = X;
    if (!x) return;
    if (x->stacks) {
        munmap(x->stacks, (x->stack_size + STACK_GUARD) * 1024);
    }
#ifdef SIMT_TSAN
    if (x->fibers)
        for (unsigned i = 0; i < 1024; i++)
            if (x->fibers[i].tsan_fiber) __tsan_destroy_fiber(x->fibers[i].tsan_fiber);
#endif
    if (x->altstack) {
        stack_t off = {.ss_flags = SS_DISABLE};
        sigaltstack(&off, NULL);
        free(x->altstack);
    }
    free(x->fibers);
    free(x->order);
    free(x->dyn_shared);
    memcount_free(x->mc);
    pthread_mutex_lock(&executors_lock);
    register_executor(NULL, x);
    pthread_mutex_unlock(&executors_lock);
    free(x);
    X = NULL;
}

/* ---- scheduling ---------------------------------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The order threads run in during one round (between two barriers). */
static void make_order(executor *x)
{
    unsigned n = x->nthreads;
    if (simt_schedule_kind == 0) {
        if (x->order_n != n)
            for (unsigned i = 0; i < n; i++) x->order[i] = i;
        x->order_n = n;
        return;
    }
    x->order_n = 0;
    for (unsigned i = 0; i < n; i++) x->order[i] = simt_schedule_kind == 1 ? n - 1 - i : i;
    if (simt_schedule_kind == 2) {
        const uint3 b = x->bv.block_idx;
        uint64_t s = simt_schedule_seed ^ ((uint64_t)b.x << 1) ^ ((uint64_t)b.y << 22) ^
                     ((uint64_t)b.z << 43) ^ ((uint64_t)x->round << 52);
        for (unsigned i = n - 1; i > 0; i--) {
            unsigned j = (unsigned)(splitmix(&s) % (i + 1));
            unsigned t = x->order[i];
            x->order[i] = x->order[j];
            x->order[j] = t;
        }
    }
}

static const char *wop_name(int wop)
{
    static const char *names[] = {"__syncwarp",       "__shfl_sync",     "__shfl_up_sync",
                                  "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
                                  "__any_sync",       "__all_sync"};
    return wop >= 0 && wop < (int)(sizeof names / sizeof *names) ? names[wop] : "?";
}

/* Completes the warp operation of the lanes in `mask` of warp w: every lane
 * it names has arrived at the same operation. */
static void complete_warp_op(fiber *w0, unsigned count, unsigned mask, int wop)
{
    unsigned votes = 0;
    for (unsigned l = 0; l < count; l++)
        if ((mask >> l & 1u) && w0[l].wval) votes |= 1u << l;
    for (unsigned l = 0; l < count; l++) {
        if (!(mask >> l & 1u)) continue;
        fiber *f = &w0[l];
        unsigned w = (unsigned)f->wwidth, seg = l & ~(w - 1), src = l;
        switch (wop) {
        case SIMT_WOP_SHFL:
            src = seg + ((unsigned)f->warg & (w - 1));
            break;
        case SIMT_WOP_SHFL_UP:
            src = (unsigned)f->warg > l - seg ? l : l - (unsigned)f->warg;
            break;
        case SIMT_WOP_SHFL_DOWN:
            src = l + (unsigned)f->warg >= seg + w ? l : l + (unsigned)f->warg;
            break;
        case SIMT_WOP_SHFL_XOR:
            src = l ^ (unsigned)f->warg;
            if (src >= seg + w) src = l;
            break;
        default:
            break;
        }
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
                fault(cudaErrorLaunchFailure, f,
                      "%s at %s:%d: lane %u reads lane %u, which is not in the mask 0x%08x "
                      "(the value would be undefined on a GPU)",
                      wop_name(wop), f->file, f->line, l, src, mask);
            f->wres = w0[src].wval;
        }
    }
    for (unsigned l = 0; l < count; l++)
        if (mask >> l & 1u) w0[l].state = T_RUNNABLE;
}

/* Releases what can be released once every runnable thread has run: warp
 * operations whose lanes have all arrived, else the block barrier. Faults
 * on what can never complete. Returns the number of threads released. */
static unsigned resolve(executor *x)
{
    fiber *F = x->fibers;
    unsigned n = x->nthreads, released = 0;
    for (unsigned base = 0; base < n; base += 32) {
        unsigned count = n - base < 32 ? n - base : 32;
        fiber *w0 = &F[base];
        for (unsigned l = 0; l < count; l++) {
            fiber *f = &w0[l];
            if (f->state != T_WARP) continue;
            unsigned mask = f->wmask;
            int ready = 1;
            for (unsigned j = 0; j < 32 && ready; j++) {
                if (!(mask >> j & 1u)) continue;
                if (j >= count)
                    fault(cudaErrorLaunchFailure, f,
                          "%s at %s:%d: mask 0x%08x names lane %u of warp %u, which does not "
                          "exist (the block has %u threads)",
                          wop_name(f->wop), f->file, f->line, mask, j, f->warp, n);
                const fiber *g = &w0[j];
                if (g->state == T_EXITED)
                    fault(cudaErrorLaunchFailure, f,
                          "%s at %s:%d: mask 0x%08x names lane %u, which has already exited; "
                          "every lane named in the mask must reach the same %s",
                          wop_name(f->wop), f->file, f->line, mask, j, wop_name(f->wop));
                if (g->state != T_WARP) {
                    ready = 0; /* waits at __syncthreads: maybe a deadlock, decided below */
                    break;
                }
                if (g->wop != f->wop || (f->wop != SIMT_WOP_SYNCWARP && g->wmask != mask))
                    fault(cudaErrorLaunchFailure, f,
                          "lane %u is at %s(0x%08x) at %s:%d but lane %u is at %s(0x%08x) at "
                          "%s:%d; the lanes of a mask must execute the same warp operation",
                          l, wop_name(f->wop), mask, f->file, f->line, j, wop_name(g->wop),
                          g->wmask, g->file, g->line);
            }
            if (!ready) continue;
            complete_warp_op(w0, count, mask, f->wop);
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
                fault(cudaErrorLaunchFailure, f,
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
        fault(cudaErrorLaunchFailure, at_warp,
              "deadlock: this thread waits at %s at %s:%d for lanes that wait at "
              "__syncthreads() at %s:%d",
              wop_name(at_warp->wop), at_warp->file, at_warp->line, at_bar->file, at_bar->line);
    if (at_bar && exited)
        fault(cudaErrorLaunchFailure, exited,
              "divergent __syncthreads(): this thread exited without reaching the "
              "__syncthreads() at %s:%d where thread (%u,%u,%u) waits; every thread of a "
              "block must reach it (move the barrier out of the condition)",
              at_bar->file, at_bar->line, at_bar->idx.x, at_bar->idx.y, at_bar->idx.z);
    if (!at_bar) fault(cudaErrorLaunchFailure, at_warp, "deadlock in warp operations (internal)");
    for (unsigned i = 0; i < n; i++) F[i].state = T_RUNNABLE;
    return n;
}

int simt_plain_calls = 1;

void simtSetPlainCalls(int on) { simt_plain_calls = on; }

static int plain_allowed(void)
{
#ifdef SIMT_TSAN
    return 0; /* the race check needs every thread on its own fiber */
#else
    return simt_plain_calls;
#endif
}

/* threadIdx of linear id i in a block of shape bd. */
static uint3 thread_index(unsigned i, dim3 bd)
{
    uint3 t = {i % bd.x, i / bd.x % bd.y, i / (bd.x * bd.y)};
    return t;
}

static void init_fiber(executor *x, fiber *f, unsigned i, uint3 idx)
{
    f->linear = i;
    f->lane = i & 31u;
    f->warp = i >> 5;
    f->idx = idx;
    f->state = T_RUNNABLE;
#ifdef SIMT_TSAN
    snprintf(f->tsan_name, sizeof f->tsan_name,
             "CUDA thread (%u,%u,%u) of block (%u,%u,%u), warp %u lane %u", idx.x, idx.y, idx.z,
             x->bv.block_idx.x, x->bv.block_idx.y, x->bv.block_idx.z, f->warp, f->lane);
    __tsan_set_fiber_name(f->tsan_fiber, f->tsan_name);
#else
    (void)x;
#endif
}

/* The block's other threads as plain calls: thread 0 reached no barrier. */
static void run_plain(executor *x)
{
    const dim3 bd = x->bv.block_dim;
    unsigned n = x->nthreads;
    void (*entry)(const void *) = x->launch->kernel->entry;
    const void *args = x->launch->args;
    x->plain = 1;
    x->cur = &x->fibers[0]; /* for fault reports, which read simt_threadIdx */
    if (simt_schedule_kind == 0) {
        uint3 t = {0, 0, 0};
        for (unsigned i = 1; i < n; i++) { /* forward: the index counts up, no division */
            if (++t.x == bd.x) {
                t.x = 0;
                if (++t.y == bd.y) {
                    t.y = 0;
                    t.z++;
                }
            }
            simt_threadIdx = t;
            entry(args);
        }
    } else {
        for (unsigned k = 0; k < n; k++) {
            unsigned i = x->order[k];
            if (i == 0) continue;
            simt_threadIdx = thread_index(i, bd);
            entry(args);
        }
    }
    x->plain = 0;
    x->cur = NULL;
}

static void run_block(executor *x)
{
    fiber *F = x->fibers;
    const dim3 bd = x->bv.block_dim;
    unsigned n = x->nthreads;
    x->alive = n;
    x->round = 0;
    x->synced = 0;
    if (simt_schedule_kind != 0) make_order(x);

    /* Thread 0 first: does this kernel reach a barrier at all? */
    uint3 zero = {0, 0, 0};
    init_fiber(x, &F[0], 0, zero);
    x->pos = n; /* no hand-over to other threads while probing */
    resume(x, &F[0]);
    if (!x->synced && F[0].state == T_EXITED && plain_allowed()) {
        run_plain(x);
        return;
    }
    uint3 t = zero;
    for (unsigned i = 1; i < n; i++) {
        if (++t.x == bd.x) {
            t.x = 0;
            if (++t.y == bd.y) {
                t.y = 0;
                t.z++;
            }
        }
        init_fiber(x, &F[i], i, t);
    }
    for (;;) {
        for (x->pos = 0; x->pos < n; x->pos++) {
            fiber *f = &F[x->order[x->pos]];
            if (f->state == T_RUNNABLE) resume(x, f); /* may hand over, advancing pos */
        }
        if (x->alive == 0) break;
        resolve(x);
        x->round++;
        if (simt_schedule_kind == 2) make_order(x);
    }
}

static cudaError_t run_grid(dim3 g);

cudaError_t simt_emu_run(const simt_launch *l, char *report, size_t report_size)
{
    executor *x = get_executor();
    if (!x) return cudaErrorMemoryAllocation;
    const dim3 g = l->grid, b = l->block;
    unsigned n = b.x * b.y * b.z;
    if (ensure_fibers(x, n) != 0) return cudaErrorMemoryAllocation;
    if (l->shmem > x->dyn_cap) {
        free(x->dyn_shared);
        x->dyn_shared = aligned_alloc(256, (l->shmem + 255) / 256 * 256);
        if (!x->dyn_shared) {
            x->dyn_cap = 0;
            return cudaErrorMemoryAllocation;
        }
        x->dyn_cap = l->shmem;
    }
    x->launch = l;
    x->report = report;
    x->report_cap = report_size;
    x->err = cudaSuccess;
    x->nthreads = n;
    x->bv.block_dim = b;
    x->bv.grid_dim = g;
    x->bv.dynamic_shared = l->shmem ? x->dyn_shared : NULL;
    make_order(x);
    simt_blockDim = b;
    simt_gridDim = g;
    simt_dynamic_shared = x->bv.dynamic_shared;
    report[0] = '\0';

    while (x->nprimed < n) {
        if (prime(x, &x->fibers[x->nprimed]) != 0) return cudaErrorLaunchFailure;
        x->nprimed++;
    }
    return run_grid(g);
}

static void run_blocks(executor *x, dim3 g)
{
    for (unsigned bz = 0; bz < g.z; bz++)
        for (unsigned by = 0; by < g.y; by++)
            for (unsigned bx = 0; bx < g.x; bx++) {
                x->bv.block_idx.x = bx;
                x->bv.block_idx.y = by;
                x->bv.block_idx.z = bz;
                simt_blockIdx = x->bv.block_idx;
                run_block(x);
                if (x->mc) memcount_flush(x->mc);
                atomic_fetch_add_explicit(&x->blocks_done, 1, memory_order_relaxed);
                atomic_fetch_add_explicit(&simt_progress_count, 1, memory_order_relaxed);
            }
}

/* Where a fault lands: nothing local survives the jump, so only X is used. */
static cudaError_t run_grid(dim3 g)
{
    if (_setjmp(X->abort_ctx)) {
        executor *y = X;
        if (y->cur && !y->plain) ASAN_FINISH(NULL, NULL, NULL);
        y->nprimed = 0;                   /* fibers stopped mid-kernel: make them afresh */
        if (y->mc) memcount_clear(y->mc); /* a faulted block's requests are not counted */
        y->cur = NULL;
        y->plain = 0;
        y->launch = NULL;
        return y->err;
    }
    run_blocks(X, g);
    X->launch = NULL;
    return cudaSuccess;
}

/* ---- barriers and warp operations, called from kernels ------------------- */

static inline __attribute__((always_inline)) fiber *arrive(const char *what, const char *file,
                                                           int line)
{
    executor *x = X;
    fiber *f = x ? x->cur : NULL;
    if (!f) {
        fprintf(stderr, "simt: %s called outside a kernel (%s:%d)\n", what, file, line);
        abort();
    }
    if (x->plain)
        fault(cudaErrorLaunchFailure, f,
              "%s at %s:%d is reached by this thread, but thread (0,0,0) of the block finished "
              "without reaching any barrier or warp operation, so the block's threads ran as "
              "plain calls. Every thread of a block must reach the same __syncthreads(); if "
              "thread 0 rightly takes part in no warp operation (a mask without lane 0), run "
              "with SIMT_PLAIN=0",
              what, file, line);
    x->synced = 1;
    f->file = file;
    f->line = line;
    return f;
}

void simt_syncthreads(const char *file, int line)
{
    fiber *f = arrive("__syncthreads()", file, line);
    executor *x = X;
    f->state = T_BARRIER;
#ifdef SIMT_TSAN
    __tsan_release(&x->tsan_barrier);
#endif
    FIBER_YIELD(x, f);
#ifdef SIMT_TSAN
    __tsan_acquire(&x->tsan_barrier);
#endif
}

/* A warp operation up to the switch: validated and recorded (inlined into
 * each entry point, which then yields in its own frame). */
static inline __attribute__((always_inline)) fiber *
warp_arrive(int wop, unsigned mask, uint64_t v, int arg, int width, const char *file, int line)
{
    fiber *f = arrive(wop_name(wop), file, line);
    if (!(mask >> f->lane & 1u))
        fault(cudaErrorLaunchFailure, f,
              "%s at %s:%d: the mask 0x%08x does not include the calling lane %u", wop_name(wop),
              file, line, mask, f->lane);
    if (width < 1 || width > 32 || (width & (width - 1)))
        fault(cudaErrorLaunchFailure, f, "%s at %s:%d: width %d is not a power of two from 1 to 32",
              wop_name(wop), file, line, width);
    f->wop = wop;
    f->wmask = mask;
    f->wval = v;
    f->warg = arg;
    f->wwidth = width;
    f->state = T_WARP;
#ifdef SIMT_TSAN
    __tsan_release(&X->tsan_warp[f->warp % 32]);
#endif
    return f;
}

#ifdef SIMT_TSAN
#define WARP_ACQUIRE(x, f) __tsan_acquire(&(x)->tsan_warp[(f)->warp % 32])
#else
#define WARP_ACQUIRE(x, f) ((void)0)
#endif

void simt_syncwarp(unsigned mask, const char *file, int line)
{
    fiber *f = warp_arrive(SIMT_WOP_SYNCWARP, mask, 0, 0, 32, file, line);
    executor *x = X;
    FIBER_YIELD(x, f);
    WARP_ACQUIRE(x, f);
}

uint64_t simt_shfl(unsigned mask, uint64_t value, int arg, int width, int kind, const char *file,
                   int line)
{
    fiber *f = warp_arrive(kind, mask, value, arg, width, file, line);
    executor *x = X;
    FIBER_YIELD(x, f);
    WARP_ACQUIRE(x, f);
    return f->wres;
}

unsigned simt_vote(unsigned mask, int pred, int kind, const char *file, int line)
{
    fiber *f = warp_arrive(kind, mask, pred != 0, 0, 32, file, line);
    executor *x = X;
    FIBER_YIELD(x, f);
    WARP_ACQUIRE(x, f);
    return (unsigned)f->wres;
}

unsigned simt_activemask(void)
{
    executor *x = X;
    const fiber *f = x->cur;
    unsigned base = f->warp * 32, m = 0;
    for (unsigned l = 0; l < 32 && base + l < x->nthreads; l++)
        if (x->fibers[base + l].state != T_EXITED) m |= 1u << l;
    return m;
}

void simt_assert_fail(const char *expr, const char *file, int line, const char *func)
{
    executor *x = X;
    const fiber *f = x ? x->cur : NULL;
    if (!f) {
        fprintf(stderr, "%s:%d: %s: Assertion `%s' failed.\n", file, line, func, expr);
        abort();
    }
    /* CUDA's own wording for a device-side assert. */
    fault(cudaErrorAssert, f,
          "%s:%d: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.", file, line,
          func, x->bv.block_idx.x, x->bv.block_idx.y, x->bv.block_idx.z, simt_threadIdx.x,
          simt_threadIdx.y, simt_threadIdx.z, expr);
}

/* ---- memory transactions (simtMemStats) ----------------------------------- */
/* While counting, every access of a call-mode kernel is filed under its
 * request: (warp, call site, occurrence), the occurrence being how many
 * times before this thread passed that call site. Requests are costed and
 * added to the totals when the block ends (all its threads have then made
 * their accesses). */

static atomic_int counting;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static simt_mem_stats stats;

enum { K_GLOBAL_LOAD, K_GLOBAL_STORE, K_SHARED_LOAD, K_SHARED_STORE };

typedef struct { /* how often thread `tid` passed `site` (site 0: empty slot) */
    uintptr_t site;
    unsigned tid, count;
} occ_slot;
typedef struct { /* one warp-wide request (site 0: empty slot) */
    uintptr_t site;
    unsigned warp, occ;
    unsigned char kind, n;
    unsigned char size[32];
    uintptr_t addr[32];
} req_slot;
typedef struct memcount {
    occ_slot *occ;
    size_t nocc, capocc; /* capacities: powers of two */
    req_slot *req;
    size_t nreq, capreq;
    uintptr_t tls_lo, tls_hi; /* this OS thread's static TLS: the __shared__ arrays */
    int oom;
} memcount;

static size_t mix(uintptr_t a, unsigned b, unsigned c)
{
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ull ^ ((uint64_t)b << 32 | c);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return (size_t)(h ^ h >> 32);
}

/* Doubles a table of `cap` slots of `size` bytes, rehashing with `key`. */
static void *grow(void *old, size_t cap, size_t size, size_t (*key)(const void *))
{
    size_t ncap = cap ? 2 * cap : 256;
    char *t = calloc(ncap, size);
    if (!t) return NULL;
    for (size_t i = 0; i < cap; i++) {
        const char *e = (const char *)old + i * size;
        if (!*(const uintptr_t *)e) continue;
        size_t j = key(e) & (ncap - 1);
        while (*(uintptr_t *)(t + j * size)) j = (j + 1) & (ncap - 1);
        memcpy(t + j * size, e, size);
    }
    free(old);
    return t;
}
static size_t occ_key(const void *e)
{
    const occ_slot *o = e;
    return mix(o->site, o->tid, 0);
}
static size_t req_key(const void *e)
{
    const req_slot *r = e;
    return mix(r->site, r->warp, r->occ);
}

/* The program's static TLS block, where the emulator's __shared__ arrays
 * live (__shared__ is static _Thread_local): on x86-64 (TLS variant II) the
 * executable's block is the one that ends at the thread pointer, rounded up
 * to its alignment (its PT_TLS segment). Elsewhere [0, 0): no shared
 * access is counted there. */
static int first_tls(struct dl_phdr_info *info, size_t size, void *out)
{
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_TLS) {
            size_t al = info->dlpi_phdr[i].p_align ? info->dlpi_phdr[i].p_align : 1;
            *(size_t *)out = (info->dlpi_phdr[i].p_memsz + al - 1) / al * al;
            break;
        }
    return 1; /* the first object is the program */
}

static void tls_range(memcount *m)
{
#if defined(__x86_64__)
    size_t size = 0;
    dl_iterate_phdr(first_tls, &size);
    uintptr_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    m->tls_lo = tp - size;
    m->tls_hi = tp;
#else
    (void)m;
#endif
}

static memcount *memcount_of(executor *x)
{
    if (!x->mc) {
        x->mc = calloc(1, sizeof *x->mc);
        if (x->mc) tls_range(x->mc);
    }
    return x->mc;
}

static void count_access(executor *x, uintptr_t a, size_t size, int store, uintptr_t site,
                         int global)
{
    memcount *m = memcount_of(x);
    if (!m || m->oom || !site) return;
    if (!global) {
        uintptr_t dyn = (uintptr_t)x->dyn_shared;
        int in_dyn = dyn && a - dyn < x->dyn_cap;
        if (!in_dyn && !(a >= m->tls_lo && a < m->tls_hi)) return; /* a local variable */
    }
    const dim3 bd = x->bv.block_dim;
    unsigned tid = simt_threadIdx.x + bd.x * (simt_threadIdx.y + bd.y * simt_threadIdx.z);
    /* this thread's occurrence at this site */
    if (2 * (m->nocc + 1) > m->capocc) {
        occ_slot *t = grow(m->occ, m->capocc, sizeof *t, occ_key);
        if (!t) {
            m->oom = 1;
            return;
        }
        m->occ = t;
        m->capocc = m->capocc ? 2 * m->capocc : 256;
    }
    size_t i = mix(site, tid, 0) & (m->capocc - 1);
    while (m->occ[i].site && (m->occ[i].site != site || m->occ[i].tid != tid))
        i = (i + 1) & (m->capocc - 1);
    if (!m->occ[i].site) {
        m->occ[i] = (occ_slot){site, tid, 0};
        m->nocc++;
    }
    unsigned occ = m->occ[i].count++;
    /* its request */
    if (2 * (m->nreq + 1) > m->capreq) {
        req_slot *t = grow(m->req, m->capreq, sizeof *t, req_key);
        if (!t) {
            m->oom = 1;
            return;
        }
        m->req = t;
        m->capreq = m->capreq ? 2 * m->capreq : 256;
    }
    unsigned warp = tid / 32;
    size_t j = mix(site, warp, occ) & (m->capreq - 1);
    while (m->req[j].site &&
           (m->req[j].site != site || m->req[j].warp != warp || m->req[j].occ != occ))
        j = (j + 1) & (m->capreq - 1);
    req_slot *r = &m->req[j];
    if (!r->site) {
        memset(r, 0, sizeof *r);
        r->site = site;
        r->warp = warp;
        r->occ = occ;
        r->kind = (unsigned char)(global ? (store ? K_GLOBAL_STORE : K_GLOBAL_LOAD)
                                         : (store ? K_SHARED_STORE : K_SHARED_LOAD));
        m->nreq++;
    }
    if (r->n < 32) {
        r->addr[r->n] = a;
        r->size[r->n] = (unsigned char)(size < 255 ? size : 255);
        r->n++;
    }
}

static int cmp_uptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return (x > y) - (x < y);
}

/* Sectors (global) or wavefronts (shared) of one request. */
static unsigned request_cost(const req_slot *r)
{
    uintptr_t u[32 * 8];
    unsigned n = 0, shift = r->kind <= K_GLOBAL_STORE ? 5 : 2; /* 32-byte sectors, 4-byte words */
    for (unsigned i = 0; i < r->n; i++)
        for (uintptr_t b = r->addr[i] >> shift;
             b <= (r->addr[i] + r->size[i] - 1) >> shift && n < 256; b++)
            u[n++] = b;
    qsort(u, n, sizeof *u, cmp_uptr);
    unsigned distinct = 0, bank[32] = {0}, most = 0;
    for (unsigned i = 0; i < n; i++) {
        if (i && u[i] == u[i - 1]) continue;
        distinct++;
        unsigned k = ++bank[u[i] & 31];
        if (k > most) most = k;
    }
    return r->kind <= K_GLOBAL_STORE ? distinct : most;
}

/* Forgets the block's requests. */
static void memcount_clear(memcount *m)
{
    if (m->req) memset(m->req, 0, m->capreq * sizeof *m->req);
    if (m->occ) memset(m->occ, 0, m->capocc * sizeof *m->occ);
    m->nreq = m->nocc = 0;
    m->oom = 0;
}

/* At the end of a block: cost its requests, add them up, start afresh. */
static void memcount_flush(memcount *m)
{
    if (!m->nreq && !m->nocc && !m->oom) return;
    simt_mem_stats add = {0};
    simt_mem_counts *c[4] = {&add.global_load, &add.global_store, &add.shared_load,
                             &add.shared_store};
    for (size_t i = 0; i < m->capreq; i++) {
        if (!m->req[i].site) continue;
        c[m->req[i].kind]->requests++;
        c[m->req[i].kind]->units += request_cost(&m->req[i]);
    }
    pthread_mutex_lock(&stats_lock);
    simt_mem_counts *t[4] = {&stats.global_load, &stats.global_store, &stats.shared_load,
                             &stats.shared_store};
    for (int k = 0; k < 4; k++) {
        t[k]->requests += c[k]->requests;
        t[k]->units += c[k]->units;
    }
    stats.incomplete |= m->oom;
    pthread_mutex_unlock(&stats_lock);
    memcount_clear(m);
}

static void memcount_free(memcount *m)
{
    if (!m) return;
    free(m->occ);
    free(m->req);
    free(m);
}

void simtMemStatsBegin(void)
{
    pthread_mutex_lock(&stats_lock);
    memset(&stats, 0, sizeof stats);
    pthread_mutex_unlock(&stats_lock);
    atomic_store(&counting, 1);
}

void simtMemStatsEnd(simt_mem_stats *out)
{
    atomic_store(&counting, 0);
    pthread_mutex_lock(&stats_lock);
    if (out) *out = stats;
    pthread_mutex_unlock(&stats_lock);
}

/* ---- memory checks ---------------------------------------------------- */

static void check_slow(executor *x, uintptr_t a, size_t size, int store)
{
    uintptr_t base;
    size_t len;
    if (simt_alloc_find(a, size, &base, &len)) {
        unsigned w = x->cache_next++ % CACHE_WAYS;
        x->cache[w].base = base;
        x->cache[w].len = len;
        return;
    }
    char near[256];
    simt_alloc_describe(a, near, sizeof near);
    fault(cudaErrorIllegalAddress, x->cur, "out-of-bounds %s of %zu bytes at address %p: %s",
          store ? "write" : "read", size, (void *)a, near);
}

static inline void check_access(uintptr_t a, size_t size, int store, uintptr_t site)
{
    int global = a - simt_arena_lo < simt_arena_span;
    if (__builtin_expect(atomic_load_explicit(&counting, memory_order_relaxed), 0)) {
        executor *x = X;
        if (x && x->launch) count_access(x, a, size, store, site, global);
    }
    if (!global) return; /* not device memory */
    executor *x = X;
    if (!x || !x->launch) return; /* host code in a kernel file */
    if (__builtin_expect(observer != NULL, 0)) observer((const void *)a, size, store);
    unsigned gen = atomic_load_explicit(&simt_alloc_generation, memory_order_acquire);
    if (__builtin_expect(gen != x->cache_gen, 0)) { /* something was freed: forget all */
        memset(x->cache, 0, sizeof x->cache);
        x->cache_gen = gen;
    }
    for (int w = 0; w < CACHE_WAYS; w++)
        if (a - x->cache[w].base < x->cache[w].len &&
            a + size - x->cache[w].base <= x->cache[w].len)
            return;
    check_slow(x, a, size, store);
}

/* ---- the inline checks' shadow and the fault handler ---------------------- */

#ifdef SIMT_SHADOW
static signed char *shadow_of(uintptr_t a)
{
    return (signed char *)((a >> 3) + SIMT_SHADOW_OFFSET);
}

/* Sets n shadow bytes from p to v; large zeroed runs are given back to the
 * kernel (they read as zero again). */
static void shadow_fill(signed char *p, int v, size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + page - 1) / page * page, hi = ((uintptr_t)p + n) / page * page;
    if (v == 0 && hi > lo + page) {
        memset(p, 0, lo - (uintptr_t)p);
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
        memset((void *)hi, 0, (uintptr_t)p + n - hi);
    } else
        memset(p, v, n);
}

void simt_shadow_mark(uintptr_t base, size_t size, size_t span)
{
    signed char *s = shadow_of(base);
    size_t full = size / 8, total = span / 8;
    shadow_fill(s, 0, full);
    if (size % 8 && full < total) s[full++] = (signed char)(size % 8);
    if (full < total) shadow_fill(s + full, (signed char)0xfa, total - full);
}

/* Reserved before main: instrumented code may run before the first CUDA call. */
__attribute__((constructor)) static void reserve_shadow(void)
{
    void *p = mmap((void *)SIMT_SHADOW_OFFSET, SIMT_SHADOW_SPAN, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != (void *)SIMT_SHADOW_OFFSET) {
        fprintf(stderr,
                "simt: cannot reserve the address range [%#llx, %#llx) that the simulated GPU's "
                "memory checks use (%s). With vm.overcommit_memory=2 no NORESERVE mapping is "
                "possible: set it to 0 or 1, or use the sanitizer build (build/sim-asan).\n",
                SIMT_SHADOW_OFFSET, SIMT_SHADOW_OFFSET + SIMT_SHADOW_SPAN,
                p == MAP_FAILED ? strerror(errno) : "address taken");
        _exit(70);
    }
}
#else
void simt_shadow_mark(uintptr_t base, size_t size, size_t span)
{
    (void)base, (void)size, (void)span;
}
#endif

/* An inline check found a poisoned shadow byte: name the access precisely. */
static void report_access(uintptr_t a, size_t size, int store)
{
    executor *x = X;
    if (!x || !x->launch) return; /* host code in a kernel file: not ours to judge */
    uintptr_t base;
    size_t len;
    if (simt_alloc_find(a, size, &base, &len)) return;
    char near[256];
    simt_alloc_describe(a, near, sizeof near);
    fault(cudaErrorIllegalAddress, x->cur, "out-of-bounds %s of %zu bytes at address %p: %s",
          store ? "write" : "read", size, (void *)a, near);
}

#define REPORT(kind, n, store)                                                                     \
    void __asan_report_##kind##n##_noabort(uintptr_t a);                                           \
    void __asan_report_##kind##n##_noabort(uintptr_t a) { report_access(a, n, store); }
REPORT(load, 1, 0)
REPORT(load, 2, 0)
REPORT(load, 4, 0)
REPORT(load, 8, 0)
REPORT(load, 16, 0)
REPORT(store, 1, 1)
REPORT(store, 2, 1)
REPORT(store, 4, 1)
REPORT(store, 8, 1)
REPORT(store, 16, 1)
void __asan_report_load_n_noabort(uintptr_t a, size_t n);
void __asan_report_load_n_noabort(uintptr_t a, size_t n) { report_access(a, n, 0); }
void __asan_report_store_n_noabort(uintptr_t a, size_t n);
void __asan_report_store_n_noabort(uintptr_t a, size_t n) { report_access(a, n, 1); }

/* A kernel touched memory that is not mapped: freed or never-allocated device
 * memory, a null or wild pointer, or past the end of its own stack. The
 * kernel stops with cudaErrorIllegalAddress as on a device; a fault outside
 * a kernel is passed on to whatever handled SIGSEGV before. */
static struct sigaction previous_segv;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    executor *x = X;
    uintptr_t a = (uintptr_t)si->si_addr;
    (void)uc;
    if (x && x->launch) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE), slot = x->stack_size + STACK_GUARD;
        if (x->stacks && a >= (uintptr_t)x->stacks && a < (uintptr_t)x->stacks + slot * 1024 &&
            (a - (uintptr_t)x->stacks) % slot < STACK_GUARD)
            fault(cudaErrorIllegalAddress, x->cur,
                  "stack overflow: this thread used more than its %zu KiB of stack (deep "
                  "recursion or large local arrays; SIMT_STACK_KB raises the limit)",
                  x->stack_size / 1024);
        char near[256];
        if (a - simt_arena_lo < simt_arena_span)
            simt_alloc_describe(a, near, sizeof near);
        else
            snprintf(near, sizeof near, "%s", a < page ? "a null pointer" : "not device memory");
        fault(cudaErrorIllegalAddress, x->cur, "illegal memory access at address %p: %s", (void *)a,
              near);
    }
    sigaction(sig, &previous_segv, NULL); /* not a kernel's: fault again, as before */
}

static void install_once(void)
{
#ifdef SIMT_SHADOW
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER; /* we leave by longjmp */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &previous_segv);
#else
    (void)on_segv; /* ASan and TSan have their own SIGSEGV reports */
#endif
}

static void install_fault_handler(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_once);
}

/* ---- call-mode checks (the ASan build, and files that count accesses) ---- */

#define HOOK(kind, n, store)                                                                       \
    void __asan_##kind##n##_noabort(uintptr_t a);                                                  \
    void __asan_##kind##n##_noabort(uintptr_t a)                                                   \
    {                                                                                              \
        check_access(a, n, store, (uintptr_t)__builtin_return_address(0));                         \
    }
HOOK(load, 1, 0)
HOOK(load, 2, 0)
HOOK(load, 4, 0)
HOOK(load, 8, 0)
HOOK(load, 16, 0)
HOOK(store, 1, 1)
HOOK(store, 2, 1)
HOOK(store, 4, 1)
HOOK(store, 8, 1)
HOOK(store, 16, 1)
#if !defined(__SANITIZE_ADDRESS__) /* under ASan, libasan's own is the one to call */
/* Called before a noreturn call (simt_assert_fail): nothing to unpoison here. */
void __asan_handle_no_return(void);
void __asan_handle_no_return(void) {}
#endif
void __asan_loadN_noabort(uintptr_t a, size_t n);
void __asan_loadN_noabort(uintptr_t a, size_t n)
{
    check_access(a, n, 0, (uintptr_t)__builtin_return_address(0));
}
void __asan_storeN_noabort(uintptr_t a, size_t n);
void __asan_storeN_noabort(uintptr_t a, size_t n)
{
    check_access(a, n, 1, (uintptr_t)__builtin_return_address(0));
}

/* ---- atomics ------------------------------------------------------------ */
/* Blocks of one launch run on one OS thread, but kernels on different
 * streams run concurrently, so atomics are real atomics. */

#define CHECK(p, store)                                                                            \
    check_access((uintptr_t)(p), sizeof *(p), store, (uintptr_t)__builtin_return_address(0))
#define ATOMIC_FETCH(name, T, builtin)                                                             \
    T simt_atomic_##name(T *p, T v)                                                                \
    {                                                                                              \
        CHECK(p, 1);                                                                               \
        return builtin(p, v, __ATOMIC_RELAXED);                                                    \
    }
ATOMIC_FETCH(add_i32, int, __atomic_fetch_add)
ATOMIC_FETCH(add_u32, unsigned, __atomic_fetch_add)
ATOMIC_FETCH(add_u64, unsigned long long, __atomic_fetch_add)
ATOMIC_FETCH(sub_i32, int, __atomic_fetch_sub)
ATOMIC_FETCH(sub_u32, unsigned, __atomic_fetch_sub)
ATOMIC_FETCH(exch_i32, int, __atomic_exchange_n)
ATOMIC_FETCH(exch_u32, unsigned, __atomic_exchange_n)
ATOMIC_FETCH(exch_u64, unsigned long long, __atomic_exchange_n)
ATOMIC_FETCH(and_i32, int, __atomic_fetch_and)
ATOMIC_FETCH(and_u32, unsigned, __atomic_fetch_and)
ATOMIC_FETCH(and_u64, unsigned long long, __atomic_fetch_and)
ATOMIC_FETCH(or_i32, int, __atomic_fetch_or)
ATOMIC_FETCH(or_u32, unsigned, __atomic_fetch_or)
ATOMIC_FETCH(or_u64, unsigned long long, __atomic_fetch_or)
ATOMIC_FETCH(xor_i32, int, __atomic_fetch_xor)
ATOMIC_FETCH(xor_u32, unsigned, __atomic_fetch_xor)
ATOMIC_FETCH(xor_u64, unsigned long long, __atomic_fetch_xor)

/* Read-modify-write through compare-and-swap: new = f(old). */
#define ATOMIC_RMW(name, T, expr)                                                                  \
    T simt_atomic_##name(T *p, T v)                                                                \
    {                                                                                              \
        CHECK(p, 1);                                                                               \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED), new_;                                        \
        do {                                                                                       \
            new_ = (expr);                                                                         \
        } while (                                                                                  \
            !__atomic_compare_exchange_n(p, &old, new_, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));   \
        return old;                                                                                \
    }
ATOMIC_RMW(min_i32, int, old < v ? old : v)
ATOMIC_RMW(min_u32, unsigned, old < v ? old : v)
ATOMIC_RMW(min_u64, unsigned long long, old < v ? old : v)
ATOMIC_RMW(min_i64, long long, old < v ? old : v)
ATOMIC_RMW(max_i64, long long, old > v ? old : v)
ATOMIC_RMW(max_i32, int, old > v ? old : v)
ATOMIC_RMW(max_u32, unsigned, old > v ? old : v)
ATOMIC_RMW(max_u64, unsigned long long, old > v ? old : v)
/* CUDA: inc wraps to 0 past v; dec wraps to v at 0 or above v. */
ATOMIC_RMW(inc_u32, unsigned, old >= v ? 0u : old + 1u)
ATOMIC_RMW(dec_u32, unsigned, (old == 0u || old > v) ? v : old - 1u)

#define ATOMIC_FLOAT(name, T, U, expr)                                                             \
    T simt_atomic_##name(T *p, T v)                                                                \
    {                                                                                              \
        CHECK(p, 1);                                                                               \
        U *q = (U *)(void *)p;                                                                     \
        U oldbits = __atomic_load_n(q, __ATOMIC_RELAXED), newbits;                                 \
        T old;                                                                                     \
        do {                                                                                       \
            memcpy(&old, &oldbits, sizeof old);                                                    \
            T new_ = (expr);                                                                       \
            memcpy(&newbits, &new_, sizeof newbits);                                               \
        } while (!__atomic_compare_exchange_n(q, &oldbits, newbits, 0, __ATOMIC_RELAXED,           \
                                              __ATOMIC_RELAXED));                                  \
        return old;                                                                                \
    }
ATOMIC_FLOAT(add_f32, float, uint32_t, old + v)
ATOMIC_FLOAT(add_f64, double, uint64_t, old + v)
ATOMIC_FLOAT(exch_f32, float, uint32_t, v)

#define ATOMIC_CAS(name, T)                                                                        \
    T simt_atomic_##name(T *p, T compare, T v)                                                     \
    {                                                                                              \
        CHECK(p, 1);                                                                               \
        __atomic_compare_exchange_n(p, &compare, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);        \
        return compare;                                                                            \
    }
ATOMIC_CAS(cas_i32, int)
ATOMIC_CAS(cas_u32, unsigned)
ATOMIC_CAS(cas_u64, unsigned long long)
