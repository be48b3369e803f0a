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
 * (SIMT_PLAIN=0 turns this off); in the forward schedule from a loop of
 * the kernel's own (simt_kernel.run_plain), into which it may be inlined.
 * Should one of them reach a barrier or warp operation after all (legal for
 * a warp operation whose mask leaves out thread 0's warp or lane), the
 * block turns into fibers there: that thread keeps running on this stack
 * as the block's "host" fiber, the threads that have not run yet become
 * fibers, and the rest of the block is scheduled from a small stack of its
 * own (the aux scheduler, below).
 *
 * Barriers: __syncthreads() waits for every live thread of the block and
 * checks they all reached the same call site; warp operations (__syncwarp,
 * __shfl*_sync, __ballot_sync, __any_sync, __all_sync) wait for the lanes
 * their mask names and check that none of those lanes exited or waits
 * elsewhere. Faults (divergent barrier, bad mask, out-of-bounds access,
 * integer division by zero) stop the kernel and come back as a CUDA error
 * plus a report naming the kernel, block and thread; a failed assert stops
 * its thread, and the kernel when the block ends (the report counts the
 * threads that failed).
 *
 * Memory checks: kernel files are compiled with GCC's kernel-address
 * instrumentation. In build/sim it is inline: each load and store reads a
 * shadow byte and calls __asan_report_* (memcheck.c) only when the byte is
 * poisoned; the runtime poisons the bytes after every device allocation, and
 * freed or never-allocated device memory is unmapped, so touching it faults
 * into the SIGSEGV handler (fault.c). In the ASan build it is call mode: every
 * access calls __asan_{load,store}N_noabort(addr), checked against the
 * allocation table. Either way an out-of-bounds access stops the kernel with
 * cudaErrorIllegalAddress and a report naming the nearest allocation.
 *
 * Sanitizers: under AddressSanitizer every switch is announced with
 * __sanitizer_{start,finish}_switch_fiber; under the race check (SIMT_TSAN)
 * each fiber is a ThreadSanitizer fiber, switches between barriers carry no
 * synchronisation, and barriers release/acquire, so TSan sees exactly the
 * happens-before that CUDA guarantees.
 *
 * The emulator's files, one idea each: emu.c (this file: the executor of an
 * OS thread, its fibers, the schedule, running a launch's blocks), sync.c
 * (barriers and warp operations), fault.c (fault reports, the SIGSEGV
 * handler), watch.c (what runs now, for watchdogs), memcheck.c (the
 * kernel-address hooks), atomics.c, memstats.c (simtMemStats), races.c (the
 * race check of warp-synchronous code and lost updates). They share
 * executor.h; the runtime sees only emu.h.
 */
#undef _FORTIFY_SOURCE /* __longjmp_chk aborts on jumps between stacks */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "executor.h"
#include "memcheck.h"
#include "memstats.h"
#include "races.h"
#include "record.h"

/* Pulls memcheck.o, the kernel-address hooks, into every program that runs
 * kernels. A kernel file's calls to __asan_{load,store}N_noabort do not:
 * under ASan libasan.so defines those too and comes first on the link
 * line, so the linker resolves them there and never takes memcheck.o out
 * of libsimt.a unless something else names it (atomics.c, an access
 * observer). A program with neither (Lab 02, whose kernels use no atomics)
 * ran its kernels on libasan's hooks: no check against the allocations,
 * nothing counted for simtMemStats, nothing logged for a record. Once
 * memcheck.o is linked its definitions win over the shared library's.
 * tests/link_check.sh checks each program of build/sim-asan. */
__attribute__((used)) static void (*const pull_memcheck)(executor *, uintptr_t, size_t,
                                                         int) = simt_check_slow;

_Thread_local uint3 simt_threadIdx, simt_blockIdx;
_Thread_local int simt_plain_stop;
_Thread_local dim3 simt_blockDim, simt_gridDim;
_Thread_local void *simt_dynamic_shared;
_Thread_local executor *simt_X;

int simt_schedule_kind;
unsigned long long simt_schedule_seed;

void simtSetSchedule(int kind, unsigned long long seed)
{
    simt_schedule_kind = kind;
    simt_schedule_seed = seed;
}

/* ---- fibers ------------------------------------------------------------ */

static void fiber_yield(fiber *f)
{
    executor *x = simt_X;
    FIBER_YIELD(x, f);
}

static void fiber_main(void)
{
    fiber *f = simt_X->priming;
    ASAN_FINISH(NULL, &simt_X->sched_bottom, &simt_X->sched_size);
    fiber_yield(f); /* primed: back to the scheduler */
    for (;;) {
        executor *x = simt_X; /* not kept across the switch below (_setjmp builds) */
        x->launch->kernel->entry(x->launch->args);
#ifdef SIMT_TSAN
        /* Blocks run one after another: the scheduler acquires every exit
         * once the block is over (run_blocks), and the next block's threads
         * get it when resumed. Not an acquire here: the threads of one block
         * are not ordered by one another's exit (a counter[0]++ by every
         * thread is a race). */
        __tsan_release(&x->tsan_block);
#endif
        f->state = T_EXITED;
        x->alive--;
        /* in place, not fiber_yield: resumed for the next block, it goes
         * on here, with no return the CPU would mispredict */
        FIBER_YIELD(x, f);
    }
}

/* Scheduler -> fiber (synchronising: the fiber sees the launch's setup). */
static void resume(executor *x, fiber *f)
{
    x->cur = f;
    simt_threadIdx = f->idx;
    if (!CTX_SAVE(x->sched)) {
        /* the host fiber of a block turned into fibers runs on the OS thread's stack */
        ASAN_START(&x->asan_fake, f == x->host ? x->os_bottom : f->stack,
                   f == x->host ? x->os_size : x->stack_size);
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

/* A thread that ran a kernel and ends without simt_emu_thread_exit (a host
 * thread that ran an eager launch, stream.c) frees its executor here. */
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static void exit_destructor(void *x)
{
    (void)x;
    simt_emu_thread_exit();
}
static void exit_key_make(void) { (void)pthread_key_create(&exit_key, exit_destructor); }

static executor *get_executor(void)
{
    if (!simt_X) {
        pthread_once(&exit_once, exit_key_make);
        simt_X = calloc(1, sizeof *simt_X);
        if (simt_X) pthread_setspecific(exit_key, simt_X);
        if (simt_X)
            simt_X->have_cpu_clock = pthread_getcpuclockid(pthread_self(), &simt_X->cpu_clock) == 0;
        if (simt_X) simt_register_executor(simt_X);
        simt_install_fault_handler();
#ifdef SIMT_SHADOW
        stack_t ss = {.ss_size = 64 * 1024};
        if (simt_X && (ss.ss_sp = simt_X->altstack = malloc(ss.ss_size))) sigaltstack(&ss, NULL);
#endif
    }
#ifdef SIMT_TSAN
    if (simt_X && !simt_X->tsan_sched) simt_X->tsan_sched = __tsan_get_current_fiber();
#endif
    return simt_X;
}

const char *simt_emu_current_kernel(void)
{
    const executor *x = simt_X;
    return x && x->launch ? x->launch->kernel->name : NULL;
}

void simt_emu_thread_exit(void)
{
    executor *x = simt_X;
    if (!x) return;
    simt_stacks_free(x);
    if (x->aux_stack) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        munmap(x->aux_stack - page, x->aux_size + page);
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
    simt_memcount_free(x->mc);
    simt_races_free(x);
    simt_unregister_executor(x);
    free(x);
    simt_X = NULL;
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
    f->idx = idx;
    f->state = T_RUNNABLE;
#ifdef SIMT_TSAN
    snprintf(f->tsan_name, sizeof f->tsan_name,
             "CUDA thread (%u,%u,%u) of block (%u,%u,%u), warp %u lane %u", idx.x, idx.y, idx.z,
             x->bv.block_idx.x, x->bv.block_idx.y, x->bv.block_idx.z, FIBER_WARP(f), FIBER_LANE(f));
    __tsan_set_fiber_name(f->tsan_fiber, f->tsan_name);
#else
    (void)x;
#endif
}

/* The rounds of a block from the thread after position x->pos of this round
 * (from the start: x->pos = UINT_MAX) until every thread has exited. */
static void run_rounds(executor *x)
{
    fiber *F = x->fibers;
    unsigned n = x->nthreads;
    for (;;) {
        for (x->pos++; x->pos < n; x->pos++) {
            fiber *f = &F[x->order[x->pos]];
            if (f->state == T_RUNNABLE) resume(x, f); /* may hand over, advancing pos */
        }
        if (x->alive == 0) break;
        simt_resolve(x);
        x->round++;
        if (simt_schedule_kind == 2) make_order(x);
        x->pos = UINT_MAX;
    }
}

/* ---- a plain block turned into fibers ----------------------------------
 * A thread running as a plain call has its frames on the OS thread's stack,
 * right above run_plain's; it cannot be suspended for another fiber to run
 * the scheduler there. So when it reaches a barrier or warp operation it
 * becomes the block's host fiber where it stands, and the scheduler moves to
 * the aux stack: aux_main runs the rest of the block's rounds there (resuming
 * the host on the OS stack like any fiber), then jumps back to run_plain,
 * where the host left off once it exited (host_exit). The aux context is
 * primed once per OS thread (and again after a fault abandons it). */
static void aux_main(void)
{
    /* simt_X throughout: no local lives across the jumps (sanitizer builds
     * save with _setjmp) */
    ASAN_FINISH(NULL, &simt_X->os_bottom, &simt_X->os_size); /* primed from the OS stack */
    for (;;) {
        if (!CTX_SAVE(simt_X->aux_ctx)) { /* parked: back to the priming, or to host_exit */
            ASAN_START(&simt_X->aux_fake, simt_X->os_bottom, simt_X->os_size);
            ctx_jump(&simt_X->aux_back);
        }
        ASAN_FINISH(simt_X->aux_fake, NULL, NULL);
        run_rounds(simt_X);
    }
}

static int prime_aux(executor *x)
{
    if (!x->aux_stack) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
#if defined(__SANITIZE_ADDRESS__)
        size_t size = 1024 * 1024;
#else
        size_t size = 256 * 1024;
#endif
        char *m = mmap(NULL, size + page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) return -1;
        if (mprotect(m, page, PROT_NONE) != 0) { /* a guard below it */
            munmap(m, size + page);
            return -1;
        }
        x->aux_stack = m + page;
        x->aux_size = size;
    }
    ucontext_t uc;
    if (getcontext(&uc) != 0) return -1;
    uc.uc_stack.ss_sp = x->aux_stack;
    uc.uc_stack.ss_size = x->aux_size;
    uc.uc_link = NULL;
    makecontext(&uc, aux_main, 0);
    void *fake = NULL;
    if (!CTX_SAVE(x->aux_back)) {
        ASAN_START(&fake, x->aux_stack, x->aux_size);
        setcontext(&uc); /* does not return: aux_main parks and jumps back here */
    }
    ASAN_FINISH(fake, NULL, NULL);
    x->aux_primed = 1;
    return 0;
}

fiber *simt_plain_to_fibers(executor *x)
{
    if (!x->aux_primed && prime_aux(x) != 0) return NULL;
    fiber *F = x->fibers;
    const dim3 bd = x->bv.block_dim;
    /* the running thread's position in this round's order: in the forward
     * order (the identity) its linear index, which run_plain does not store */
    unsigned n = x->nthreads,
             k = x->plain_forward
                     ? simt_threadIdx.x + bd.x * (simt_threadIdx.y + bd.y * simt_threadIdx.z)
                     : x->pos;
    if (x->plain_forward) x->pos = k;
    for (unsigned j = 1; j < n; j++) init_fiber(x, &F[j], j, thread_index(j, bd));
    unsigned alive = n - 1; /* thread 0 has exited, as have those before position k */
    for (unsigned p = 0; p < k; p++)
        if (F[x->order[p]].state != T_EXITED) {
            F[x->order[p]].state = T_EXITED;
            alive--;
        }
    fiber *f = &F[x->order[k]];
    /* Its own fiber stays parked where it is (its context is taken over by
     * its frames on the OS stack until it exits, then given back). */
    memcpy(x->host_ctx, f->ctx, sizeof x->host_ctx);
    x->host_fake = f->asan_fake;
    x->alive = alive;
    x->plain = 0;
    x->host = f;
    simt_plain_stop = 1; /* its run_plain loop stops after it */
    x->cur = f;
    memcpy(x->sched, x->aux_ctx, sizeof x->sched); /* its yields go to the aux scheduler */
    x->sched_bottom = x->aux_stack;
    x->sched_size = x->aux_size;
    return f;
}

/* The host fiber has exited (its kernel call returned into run_plain): the
 * block's other fibers finish on the aux scheduler, which then comes back
 * here. */
static __attribute__((noinline)) void host_exit(executor *x)
{
    fiber *f = x->host;
    f->state = T_EXITED;
    x->alive--;
    if (!CTX_SAVE(x->aux_back)) {
        fiber *g = DIRECT_SWITCH ? next_runnable(x, f) : NULL;
        if (g) {
            x->cur = g;
            simt_threadIdx = g->idx;
            ctx_jump(&g->ctx);
        }
        ASAN_START(&f->asan_fake, x->sched_bottom, x->sched_size);
        ctx_jump(&x->sched);
    }
    ASAN_FINISH(f->asan_fake, NULL, NULL);
    memcpy(f->ctx, x->host_ctx, sizeof f->ctx);
    f->asan_fake = x->host_fake;
    x->host = NULL;
    x->cur = NULL;
    x->sched_bottom = x->os_bottom;
    x->sched_size = x->os_size;
}

/* The block's threads as plain calls from x->plain_pos on (forward: the
 * next thread's linear index; other schedules: its position in the order).
 * A thread that reaches a barrier or warp operation becomes the host fiber
 * (simt_plain_to_fibers); once it has exited, the block is done here. */
static __attribute__((noinline)) void run_plain_from(executor *x)
{
    const dim3 bd = x->bv.block_dim;
    unsigned n = x->nthreads;
    void (*entry)(const void *) = x->launch->kernel->entry;
    const void *args = x->launch->args;
    if (x->plain_forward && x->launch->kernel->run_plain && !x->rec &&
        !atomic_load_explicit(&simt_counting, memory_order_relaxed)) {
        /* the kernel's own loop (SIMT_LAUNCHER's run_plain): no indirect
         * call and no unpacking of the arguments per thread. Not while
         * accesses are counted, logged or tracked: they are told apart by
         * their call site, and the kernel inlined into the loop has sites
         * of its own, not those of the copy thread 0 and fibers run. */
        simt_threadIdx = thread_index(x->plain_pos, bd);
        simt_plain_stop = 0;
        x->launch->kernel->run_plain(args, x->plain_pos, n);
        if (x->host) host_exit(x); /* a thread became the host fiber */
    } else if (x->plain_forward) {
        uint3 t = thread_index(x->plain_pos, bd);
        for (unsigned i = x->plain_pos; i < n; i++) { /* the index counts up, no division */
            x->plain_pos = i + 1;
            simt_threadIdx = t;
            entry(args);
            if (__builtin_expect(x->host != NULL, 0)) { /* it became the host fiber */
                host_exit(x);
                return;
            }
            if (++t.x == bd.x) {
                t.x = 0;
                if (++t.y == bd.y) {
                    t.y = 0;
                    t.z++;
                }
            }
        }
    } else {
        for (unsigned k = x->plain_pos; k < n; k++) {
            unsigned i = x->order[k];
            x->plain_pos = k + 1;
            if (i == 0) continue;
            simt_threadIdx = thread_index(i, bd);
            x->pos = k;
            entry(args);
            if (__builtin_expect(x->host != NULL, 0)) {
                host_exit(x);
                return;
            }
        }
    }
}

/* The block's other threads as plain calls: thread 0 reached no barrier. */
static void run_plain(executor *x)
{
    x->plain = 1;
    x->cur = &x->fibers[0]; /* for fault reports, which read simt_threadIdx */
    x->plain_forward = simt_schedule_kind == 0;
    x->plain_pos = x->plain_forward ? 1 : 0;
    /* A thread that failed an assert lands here: on with the next; or, if it
     * was the host fiber (a plain block turned into fibers), the block's
     * other fibers finish as when the host returns. */
    if (_setjmp(x->plain_ctx)) {
        if (x->host) {
            host_exit(x);
            goto done;
        }
        if (x->plain_forward) { /* on with the thread after the one that failed */
            const dim3 bd = x->bv.block_dim;
            x->plain_pos =
                simt_threadIdx.x + bd.x * (simt_threadIdx.y + bd.y * simt_threadIdx.z) + 1;
        }
    }
    run_plain_from(x);
done:
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
    x->pos = UINT_MAX;
    run_rounds(x);
}

static cudaError_t run_grid(dim3 g);

static cudaError_t emu_run(executor *x, const simt_launch *l, char *report, size_t report_size);

cudaError_t simt_emu_run(const simt_launch *l, char *report, size_t report_size)
{
    executor *x = get_executor();
    if (!x) return cudaErrorMemoryAllocation;
    cudaError_t e = emu_run(x, l, report, report_size);
    simt_stacks_release(x); /* stacks.c: other launches may take them back now */
    return e;
}

static cudaError_t emu_run(executor *x, const simt_launch *l, char *report, size_t report_size)
{
    const dim3 g = l->grid, b = l->block;
    unsigned n = b.x * b.y * b.z;
    if (simt_stacks_ensure(x, n, report, report_size) != 0) return cudaErrorMemoryAllocation;
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
    x->assert_same = x->assert_other = 0;
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
    if (__builtin_expect(l->record != 0, 0)) simt_record_start(x, l); /* sets x->rec */
    x->races_launch = simt_races_launch(l);
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
                if (__builtin_expect(x->rec, 0)) simt_record_block_begin(x);
                if (__builtin_expect(x->races_launch != 0, 0)) {
                    simt_races_begin(x); /* this block is race-checked */
                    if (x->races_launch == 1) x->races_launch = 0;
                }
                run_block(x);
                if (__builtin_expect(x->assert_same != 0, 0)) simt_fault_asserts();
                if (__builtin_expect(x->track, 0)) simt_races_end(x, 1); /* may fault */
#ifdef SIMT_TSAN
                __tsan_acquire(&x->tsan_block); /* every thread of the block has exited */
#endif
                if (__builtin_expect(x->rec, 0)) simt_record_block_end(x);
                if (x->mc) simt_memcount_flush(x->mc);
                atomic_fetch_add_explicit(&x->blocks_done, 1, memory_order_relaxed);
                atomic_fetch_add_explicit(&simt_progress_count, 1, memory_order_relaxed);
            }
}

/* Where a fault lands: nothing local survives the jump, so only simt_X is used. */
static cudaError_t run_grid(dim3 g)
{
    if (_setjmp(simt_X->abort_ctx)) {
        executor *y = simt_X;
        if (y->fault_switched) ASAN_FINISH(NULL, NULL, NULL);
        y->nprimed = 0; /* fibers stopped mid-kernel: make them afresh */
        if (y->host) {  /* the aux scheduler too */
            y->aux_primed = 0;
            y->host = NULL;
            y->sched_bottom = y->os_bottom;
            y->sched_size = y->os_size;
        }
        if (y->mc) simt_memcount_clear(y->mc); /* a faulted block's requests are not counted */
        simt_races_end(y, 0);
        if (y->rec) { /* the record keeps the faulted block */
            simt_record_block_end(y);
            simt_record_finish(y);
        }
        y->cur = NULL;
        y->plain = 0;
        y->launch = NULL;
        return y->err;
    }
    run_blocks(simt_X, g);
    if (simt_X->rec) simt_record_finish(simt_X);
    simt_X->launch = NULL;
    return cudaSuccess;
}
