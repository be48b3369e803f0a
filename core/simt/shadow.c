/*
 * shadow.c — the shadow of the inline memory checks (build/sim): see
 * shadow.h. Reserved before main; alloc.c marks the bytes after every device
 * allocation.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shadow.h"

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
