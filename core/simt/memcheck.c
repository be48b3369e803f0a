/*
 * memcheck.c — the kernel-address hooks: what GCC's kernel-address
 * instrumentation of kernel files calls. Inline mode (build/sim) calls
 * __asan_report_* only when a shadow byte is poisoned; call mode (the ASan
 * build, and KASAN_CALLS_FILES) calls __asan_{load,store}N_noabort on every
 * access, checked against the allocation table (memcheck.h's check_access).
 * Either way an out-of-bounds access stops the kernel with
 * cudaErrorIllegalAddress and a report naming the nearest allocation.
 */
#include <stdint.h>

#include "memcheck.h"

simt_access_observer simt_observer;

void simtSetAccessObserver(simt_access_observer fn) { simt_observer = fn; }

void simt_check_slow(executor *x, uintptr_t a, size_t size, int store)
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
    simt_fault(cudaErrorIllegalAddress, x->cur, "out-of-bounds %s of %zu bytes at address %p: %s",
               store ? "write" : "read", size, (void *)a, near);
}

/* An inline check found a poisoned shadow byte: memory the kernel's record
 * logs (record.c poisons it while the recorded kernel runs), else name the
 * access precisely. */
static void report_access(uintptr_t a, size_t size, int store, uintptr_t site)
{
    executor *x = simt_X;
    if (!x || !x->launch) return; /* host code in a kernel file: not ours to judge */
    if (__builtin_expect(x->rec, 0) && simt_record_poisoned(x, a, size, store, site)) return;
    if (__builtin_expect(x->track, 0) && simt_races_access(x, a, size, store, site)) return;
    uintptr_t base;
    size_t len;
    if (simt_alloc_find(a, size, &base, &len)) return;
    char near[256];
    simt_alloc_describe(a, near, sizeof near);
    simt_fault(cudaErrorIllegalAddress, x->cur, "out-of-bounds %s of %zu bytes at address %p: %s",
               store ? "write" : "read", size, (void *)a, near);
}

#define REPORT(kind, n, store)                                                                     \
    void __asan_report_##kind##n##_noabort(uintptr_t a);                                           \
    void __asan_report_##kind##n##_noabort(uintptr_t a)                                            \
    {                                                                                              \
        report_access(a, n, store, (uintptr_t)__builtin_return_address(0));                        \
    }
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
void __asan_report_load_n_noabort(uintptr_t a, size_t n)
{
    report_access(a, n, 0, (uintptr_t)__builtin_return_address(0));
}
void __asan_report_store_n_noabort(uintptr_t a, size_t n);
void __asan_report_store_n_noabort(uintptr_t a, size_t n)
{
    report_access(a, n, 1, (uintptr_t)__builtin_return_address(0));
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
