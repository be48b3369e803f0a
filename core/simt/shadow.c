/*
 * shadow.c — the shadow of the inline memory checks (build/sim): see
 * shadow.h. Reserved before main; alloc.c marks the bytes after every device
 * allocation.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
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

/* Why the reservation failed, for its message: the address-space limit
 * (ulimit -v) when one is set, vm.overcommit_memory=2 when it is the
 * policy (no NORESERVE mapping then: the 16 TiB count against the commit
 * limit), else the kernel's word for it. */
static void why_not_reserved(void *p, char *buf, size_t cap)
{
    struct rlimit as;
    if (p != MAP_FAILED) {
        snprintf(buf, cap, "Something else is mapped there.");
        return;
    }
    if (!getrlimit(RLIMIT_AS, &as) && as.rlim_cur != RLIM_INFINITY) {
        snprintf(buf, cap,
                 "This process's address space is limited to %llu MiB (ulimit -v %llu), and "
                 "the range is 16 TiB of address space (reserved, not used: no memory). Lift "
                 "the limit (ulimit -v unlimited); to bound the memory a run takes, limit memory "
                 "instead of address space (a cgroup: systemd-run --user --scope -p "
                 "MemoryMax=8G ...; Labs 08-11 refuse a run that would not fit, and "
                 "PARALAB_MEMORY_LIMIT=bytes sets the memory they count on).",
                 (unsigned long long)(as.rlim_cur >> 20), (unsigned long long)(as.rlim_cur >> 10));
        return;
    }
    int policy = -1;
    FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
    if (f) {
        if (fscanf(f, "%d", &policy) != 1) policy = -1;
        fclose(f);
    }
    if (policy == 2) {
        snprintf(buf, cap,
                 "vm.overcommit_memory is 2, where no NORESERVE mapping is possible (the 16 TiB "
                 "would count against the commit limit): set it to 0 or 1, or use the "
                 "sanitizer build (build/sim-asan).");
        return;
    }
    snprintf(buf, cap,
             "With no address-space limit (ulimit -v) and vm.overcommit_memory %d, the kernel "
             "refused the mapping (out of memory for it, or too many mappings: "
             "vm.max_map_count); the sanitizer build (build/sim-asan) does without it.",
             policy);
}

/* Reserved before main: instrumented code may run before the first CUDA call. */
__attribute__((constructor)) static void reserve_shadow(void)
{
    void *p = mmap((void *)SIMT_SHADOW_OFFSET, SIMT_SHADOW_SPAN, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != (void *)SIMT_SHADOW_OFFSET) {
        int err = errno;
        char why[1024];
        why_not_reserved(p, why, sizeof why);
        fprintf(stderr,
                "simt: cannot reserve the address range [%#llx, %#llx) that the simulated GPU's "
                "memory checks use (%s). %s\n",
                SIMT_SHADOW_OFFSET, SIMT_SHADOW_OFFSET + SIMT_SHADOW_SPAN,
                p == MAP_FAILED ? strerror(err) : "address taken", why);
        _exit(70);
    }
}
#else
void simt_shadow_mark(uintptr_t base, size_t size, size_t span)
{
    (void)base, (void)size, (void)span;
}
#endif
