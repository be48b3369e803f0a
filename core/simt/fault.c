/*
 * fault.c — how a kernel that goes wrong is stopped and reported: the report
 * names the kernel, its block and thread, and what went wrong; the kernel
 * stops with a CUDA error (simt_fault jumps back to the launch). Also the
 * SIGSEGV handler of the shadow build, which turns a touch of unmapped memory
 * (freed or never-allocated device memory, a wild pointer, a stack overflow)
 * into such a fault, and integer division: kernel files are compiled with
 * -fsanitize=integer-divide-by-zero (mk/build.mk), whose check calls
 * __ubsan_handle_divrem_overflow_abort here before a division by zero, and
 * the SIGFPE handler of the shadow build catches what x86-64 still traps on
 * (INT_MIN / -1). A GPU does not trap on either; the kernel stops with
 * cudaErrorLaunchFailure and a report instead of the process dying.
 */
#undef _FORTIFY_SOURCE /* __longjmp_chk aborts on jumps between stacks */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

static void vnote(executor *x, const fiber *f, const char *fmt, va_list ap)
{
    char head[256];
    where(x, f, head, sizeof head);
    int n = snprintf(x->report, x->report_cap, "%s: ", head);
    if (n < 0 || (size_t)n >= x->report_cap) n = 0;
    vsnprintf(x->report + n, x->report_cap - (size_t)n, fmt, ap);
}

void simt_fault_note(const fiber *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vnote(simt_X, f, fmt, ap);
    va_end(ap);
}

/* Appends to the report of a block's failed asserts how many threads failed
 * (nothing if one did). */
static void count_asserts(executor *x)
{
    unsigned more = x->assert_same - 1, other = x->assert_other;
    if (!more && !other) return;
    size_t n = strlen(x->report);
    char *p = x->report + n;
    size_t cap = x->report_cap - n;
    int k = 0;
    if (more)
        k = snprintf(p, cap, " %u more thread%s of this block failed this assert", more,
                     more == 1 ? "" : "s");
    if (other && k >= 0 && (size_t)k < cap)
        k +=
            snprintf(p + k, cap - (size_t)k, "%s%u thread%s %sfailed another assert",
                     more ? ", " : " ", other, other == 1 ? "" : "s", more ? "" : "of this block ");
    if (k >= 0 && (size_t)k < cap)
        snprintf(p + k, cap - (size_t)k, " (the kernel stopped at the end of the block).");
}

/* Jumps to the launch with err (the report written). */
static _Noreturn void stop(executor *x, cudaError_t err)
{
    x->err = err;
    x->assert_same = x->assert_other = 0;
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

/* Stops the kernel: records err and the report, and jumps to the launch.
 * After a failed assert in the block, the assert is the fault (what went
 * wrong since may be the threads it stopped: a barrier they never reach). */
void simt_fault(cudaError_t err, const fiber *f, const char *fmt, ...)
{
    executor *x = simt_X;
    if (x->assert_same) {
        count_asserts(x);
        stop(x, cudaErrorAssert);
    }
    va_list ap;
    va_start(ap, fmt);
    vnote(x, f, fmt, ap);
    va_end(ap);
    stop(x, err);
}

void simt_fault_asserts(void)
{
    executor *x = simt_X;
    count_asserts(x);
    stop(x, cudaErrorAssert);
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

/* ---- integer division ------------------------------------------------------ */

/* What GCC's -fsanitize=integer-divide-by-zero passes (libubsan's layout). */
typedef struct ub_location {
    const char *file;
    unsigned line, column;
} ub_location;
typedef struct ub_type {
    unsigned short kind, info; /* kind 0: an integer of 2^(info >> 1) bits, signed if info & 1 */
    char name[];               /* in quotes: "'int'" */
} ub_type;
typedef struct ub_overflow {
    ub_location loc;
    const ub_type *type;
} ub_overflow;

/* An operand as text ("?" if not an integer of at most 64 bits, which
 * libubsan passes by address). */
static unsigned ub_bits(const ub_type *t) /* an integer's width, or 0 */
{
    return t->kind == 0 && (t->info >> 1) < 8 ? 1u << (t->info >> 1) : 0;
}

static void ub_value(const ub_type *t, uintptr_t v, char *buf, size_t cap)
{
    unsigned bits = ub_bits(t);
    if (bits == 0 || bits > 64) {
        snprintf(buf, cap, "?");
        return;
    }
    uint64_t u = (uint64_t)v;
    if (bits < 64) u &= (UINT64_C(1) << bits) - 1;
    if ((t->info & 1) && bits < 64 && (u >> (bits - 1)) & 1) u |= ~UINT64_C(0) << bits;
    if (t->info & 1)
        snprintf(buf, cap, "%lld", (long long)u);
    else
        snprintf(buf, cap, "%llu", (unsigned long long)u);
}

/* A division or remainder by zero (or, in build/sim-asan, whose kernels
 * check all of -fsanitize=undefined, of the type's minimum by -1): the
 * kernel stops. Outside a kernel it is what libubsan would do. */
static void divrem(const ub_overflow *d, uintptr_t lhs, uintptr_t rhs)
{
    char type[64], l[32], r[32];
    snprintf(type, sizeof type, "%s", d->type->name + (d->type->name[0] == '\''));
    size_t n = strlen(type);
    if (n && type[n - 1] == '\'') type[n - 1] = '\0';
    ub_value(d->type, lhs, l, sizeof l);
    ub_value(d->type, rhs, r, sizeof r);
    int by_zero = strcmp(r, "0") == 0;
    executor *x = simt_X;
    if (!x || !x->launch) {
        fprintf(stderr, "%s:%u:%u: runtime error: %s (a / or %% of %s %s by %s)\n", d->loc.file,
                d->loc.line, d->loc.column, by_zero ? "division by zero" : "division overflow",
                type, l, r);
        abort();
    }
    unsigned bits = ub_bits(d->type);
    if (by_zero)
        simt_fault(cudaErrorLaunchFailure, x->cur,
                   "integer division by zero at %s:%u (a / or %% of %s %s by 0): a GPU gives an "
                   "unspecified value there, with no error",
                   d->loc.file, d->loc.line, type, l);
    simt_fault(cudaErrorLaunchFailure, x->cur,
               "integer division overflow at %s:%u (a / or %% of %s %s by %s: the quotient does "
               "not fit in %s): a GPU gives %s as the quotient and 0 as the remainder there, with "
               "no error",
               d->loc.file, d->loc.line, type, l, r, type,
               bits == 32   ? "INT_MIN"
               : bits == 64 ? "LLONG_MIN"
                            : "the dividend");
}

_Noreturn void __ubsan_handle_divrem_overflow_abort(const ub_overflow *d, uintptr_t lhs,
                                                    uintptr_t rhs);
_Noreturn void __ubsan_handle_divrem_overflow_abort(const ub_overflow *d, uintptr_t lhs,
                                                    uintptr_t rhs)
{
    divrem(d, lhs, rhs);
    abort(); /* not reached: divrem stops the kernel or the process */
}
/* The recovering form (a kernel file built with -fsanitize-recover): the
 * same, as the division after it would trap. */
void __ubsan_handle_divrem_overflow(const ub_overflow *d, uintptr_t lhs, uintptr_t rhs);
void __ubsan_handle_divrem_overflow(const ub_overflow *d, uintptr_t lhs, uintptr_t rhs)
{
    divrem(d, lhs, rhs);
}

/* x86-64 traps on a division whose quotient does not fit (INT_MIN / -1,
 * LLONG_MIN / -1, and their remainders); a division by zero is caught
 * before it, with its line. A trap outside a kernel is passed on. */
static struct sigaction previous_fpe;

static void on_fpe(int sig, siginfo_t *si, void *uc)
{
    executor *x = simt_X;
    (void)uc;
    if (x && x->launch && (si->si_code == FPE_INTDIV || si->si_code == FPE_INTOVF))
        simt_fault(cudaErrorLaunchFailure, x->cur,
                   "integer division overflow: a / or %% of INT_MIN by -1 (or of LLONG_MIN by "
                   "-1), whose quotient does not fit: a GPU gives INT_MIN (LLONG_MIN) as the "
                   "quotient and 0 as the remainder there, with no error (build/sim-asan names "
                   "the line)");
    sigaction(sig, &previous_fpe, NULL); /* not a kernel's: trap again, as before */
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
    sa.sa_sigaction = on_fpe;
    sigaction(SIGFPE, &sa, &previous_fpe);
#else
    (void)on_segv; /* ASan and TSan have their own SIGSEGV reports */
    (void)on_fpe;
#endif
}

void simt_install_fault_handler(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_once);
}
