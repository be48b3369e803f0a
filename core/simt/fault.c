/*
 * fault.c — how a kernel that goes wrong is stopped and reported: the report
 * names the kernel, its block and thread, and what went wrong; the kernel
 * stops with a CUDA error (simt_fault jumps back to the launch). Also the
 * SIGSEGV handler of the shadow build, which turns a touch of unmapped memory
 * (freed or never-allocated device memory, a wild pointer, a stack overflow)
 * into such a fault.
 */
#undef _FORTIFY_SOURCE /* __longjmp_chk aborts on jumps between stacks */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "executor.h"

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
void simt_fault(cudaError_t err, const fiber *f, const char *fmt, ...)
{
    executor *x = simt_X;
    char head[256];
    where(x, f, head, sizeof head);
    int n = snprintf(x->report, x->report_cap, "%s: ", head);
    if (n < 0 || (size_t)n >= x->report_cap) n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->report + n, x->report_cap - (size_t)n, fmt, ap);
    va_end(ap);
    x->err = err;
    /* On a fiber's stack, or on the aux scheduler's (a plain block turned
     * into fibers, whose host fiber runs on the OS thread's stack)? */
    x->fault_switched = x->host ? x->cur != x->host : x->cur && !x->plain;
    if (x->fault_switched) {
        /* Leaving a fiber for good: its stack is abandoned (re-primed). */
        ASAN_START(NULL, x->host ? x->os_bottom : x->sched_bottom,
                   x->host ? x->os_size : x->sched_size);
#ifdef SIMT_TSAN
        __tsan_switch_to_fiber(x->tsan_sched, 0);
#endif
    }
    _longjmp(x->abort_ctx, 1);
}

/* A kernel touched memory that is not mapped: freed or never-allocated device
 * memory, a null or wild pointer, or past the end of its own stack. The
 * kernel stops with cudaErrorIllegalAddress as on a device; a fault outside
 * a kernel is passed on to whatever handled SIGSEGV before. */
static struct sigaction previous_segv;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    executor *x = simt_X;
    uintptr_t a = (uintptr_t)si->si_addr;
    (void)uc;
    if (x && x->launch) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE), slot = STACK_SLOT(x->stack_size);
        if (x->stacks && a >= (uintptr_t)x->stacks && a < (uintptr_t)x->stacks + slot * 1024 &&
            (a - (uintptr_t)x->stacks) % slot < STACK_GUARD)
            simt_fault(cudaErrorIllegalAddress, x->cur,
                       "stack overflow: this thread used more than its %zu KiB of stack (deep "
                       "recursion or large local arrays; SIMT_STACK_KB raises the limit)",
                       x->stack_size / 1024);
        char near[256];
        if (a - simt_arena_lo < simt_arena_span)
            simt_alloc_describe(a, near, sizeof near);
        else
            snprintf(near, sizeof near, "%s", a < page ? "a null pointer" : "not device memory");
        simt_fault(cudaErrorIllegalAddress, x->cur, "illegal memory access at address %p: %s",
                   (void *)a, near);
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

void simt_install_fault_handler(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_once);
}
