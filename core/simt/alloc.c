/*
 * alloc.c — device memory: see alloc.h.
 *
 * Every device's memory is one part of a single reserved arena (address
 * space only, PROT_NONE). An allocation maps its pages and leaves a PROT_NONE
 * guard page after them; freeing gives the range back to reserved-only
 * address space, to be reused by a later allocation of the same device, so
 * an access to freed memory faults. Each device's part starts with a guard
 * of ARENA_GUARD bytes that is never mapped, and the arena ends with one:
 * below every allocation lies a guard (that one, or the page after another
 * allocation) or freed memory, never the runtime's own memory (a stream
 * worker's stack lay just below the arena), and the guards count as device
 * memory, so an access there is checked and reported like any other. The
 * table of live allocations, sorted by base, has its own rwlock because
 * every kernel memory access may consult it; everything else here (each
 * device's bytes in use, its free ranges, the pinned blocks) is guarded by
 * the runtime lock, which the callers hold.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "alloc.h"
#include "shadow.h"

typedef struct alloc {
    uintptr_t base;
    size_t size;   /* as requested */
    size_t mapped; /* pages mapped */
    int device;
} alloc;

typedef struct range {
    uintptr_t base;
    size_t len;
} range;

typedef struct memdev {
    size_t used;
    uintptr_t arena;  /* this device's part of the arena */
    uintptr_t cursor; /* first never-used byte */
    range *free_ranges;
    int nfree, capfree;
} memdev;

static struct {
    size_t capacity;
    size_t span; /* arena bytes per device */
    memdev dev[SIMT_MAX_DEVICES];
    pthread_rwlock_t alloc_lock;
    alloc *allocs; /* sorted by base */
    int nalloc, capalloc;
    void **pinned; /* sorted */
    size_t *pinned_size;
    int npinned, cappinned;
} M = {.alloc_lock = PTHREAD_RWLOCK_INITIALIZER};

/* The guard at the start of each device's part of the arena and at its end
 * (address space only). The top POISONED bytes of each device's lower guard
 * are poisoned in the shadow build, so that an access just below a device's
 * first allocation is reported as an out-of-bounds access, as one just below
 * any other allocation is (the page after the allocation before it); further
 * down the guard is unmapped, and the SIGSEGV handler reports it. */
#define ARENA_GUARD ((size_t)16 << 20)
#define ARENA_GUARD_POISONED ((size_t)64 << 10)

uintptr_t simt_arena_lo;
uintptr_t simt_arena_span;
atomic_uint simt_alloc_generation;

cudaError_t simt_alloc_init(int ndev, size_t capacity)
{
    M.capacity = capacity;
    /* Reserve the device-memory arena: address space only, no memory. */
    if (ndev > 0) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        size_t span = (capacity + (capacity >> 2) + page - 1) / page * page + ARENA_GUARD;
        if (span < (64u << 20)) span = 64u << 20; /* room for guard pages under a tiny capacity */
        void *a = MAP_FAILED;
        for (; span >= (64u << 20); span /= 2) {
            a = mmap(NULL, span * (size_t)ndev + ARENA_GUARD, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (a != MAP_FAILED) break;
        }
        if (a == MAP_FAILED) {
            int err = errno;
            struct rlimit as;
            if (!getrlimit(RLIMIT_AS, &as) && as.rlim_cur != RLIM_INFINITY)
                fprintf(stderr,
                        "simt: cannot reserve address space for %d simulated devices (%s): this "
                        "process's address space is limited to %llu MiB (ulimit -v %llu); the "
                        "devices' memory is reserved as address space, not used: lift the limit "
                        "(ulimit -v unlimited), or fewer devices (SIMT_DEVICES)\n",
                        ndev, strerror(err), (unsigned long long)(as.rlim_cur >> 20),
                        (unsigned long long)(as.rlim_cur >> 10));
            else
                fprintf(stderr,
                        "simt: cannot reserve address space for %d simulated devices (%s)\n", ndev,
                        strerror(err));
            return cudaErrorInitializationError;
        }
        M.span = span;
        simt_arena_lo = (uintptr_t)a;
        simt_arena_span = span * (size_t)ndev + ARENA_GUARD;
    }
    for (int d = 0; d < ndev; d++) {
        M.dev[d].arena = simt_arena_lo + (uintptr_t)d * M.span;
        M.dev[d].cursor = M.dev[d].arena + ARENA_GUARD;
        simt_shadow_mark(M.dev[d].cursor - ARENA_GUARD_POISONED, 0, ARENA_GUARD_POISONED);
    }
    return cudaSuccess;
}

/* ---- the table of live allocations ---------------------------------------- */

static int alloc_index(uintptr_t a) /* last allocation with base <= a, or -1 */
{
    int lo = 0, hi = M.nalloc - 1, r = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (M.allocs[mid].base <= a) {
            r = mid;
            lo = mid + 1;
        } else
            hi = mid - 1;
    }
    return r;
}

int simt_alloc_find(uintptr_t a, size_t size, uintptr_t *base, size_t *len)
{
    pthread_rwlock_rdlock(&M.alloc_lock);
    int i = alloc_index(a);
    int ok = i >= 0 && a + size <= M.allocs[i].base + M.allocs[i].size;
    if (ok) {
        *base = M.allocs[i].base;
        *len = M.allocs[i].size;
    }
    pthread_rwlock_unlock(&M.alloc_lock);
    return ok;
}

void simt_alloc_describe(uintptr_t a, char *buf, size_t cap)
{
    pthread_rwlock_rdlock(&M.alloc_lock);
    const alloc *best = NULL;
    uintptr_t bestd = UINTPTR_MAX;
    for (int i = 0; i < M.nalloc; i++) {
        const alloc *al = &M.allocs[i];
        uintptr_t d = a < al->base               ? al->base - a
                      : a >= al->base + al->size ? a - (al->base + al->size) + 1
                                                 : 0;
        if (d < bestd) {
            bestd = d;
            best = al;
        }
    }
    if (!best)
        snprintf(buf, cap,
                 "no device allocation is live (freed memory, or a pointer never "
                 "returned by cudaMalloc)");
    else if (a < best->base)
        snprintf(buf, cap,
                 "%zu bytes before the nearest allocation (base %p, %zu bytes, device %d)",
                 (size_t)(best->base - a), (void *)best->base, best->size, best->device);
    else if (a - best->base == best->size)
        snprintf(buf, cap,
                 "offset %zu of the nearest allocation (base %p, %zu bytes, device %d): the first "
                 "byte past its end",
                 (size_t)(a - best->base), (void *)best->base, best->size, best->device);
    else if (a - best->base > best->size)
        snprintf(buf, cap,
                 "offset %zu of the nearest allocation (base %p, %zu bytes, device %d): %zu bytes "
                 "past its end",
                 (size_t)(a - best->base), (void *)best->base, best->size, best->device,
                 (size_t)(a - best->base) - best->size);
    else
        snprintf(buf, cap,
                 "offset %zu of the allocation at base %p (%zu bytes, device %d): the access runs "
                 "past its end",
                 (size_t)(a - best->base), (void *)best->base, best->size, best->device);
    pthread_rwlock_unlock(&M.alloc_lock);
}

/* The allocation holding [p, p+n), on any device; NULL if none. */
static const alloc *device_range(const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p;
    if (a - simt_arena_lo >= simt_arena_span) return NULL;
    int i = alloc_index(a);
    if (i < 0 || a + n > M.allocs[i].base + M.allocs[i].size) return NULL;
    return &M.allocs[i];
}

int simt_alloc_device_of(const void *p, size_t n)
{
    pthread_rwlock_rdlock(&M.alloc_lock);
    const alloc *a = device_range(p, n);
    int d = a ? a->device : -1;
    pthread_rwlock_unlock(&M.alloc_lock);
    return d;
}

/* ---- allocating and freeing ------------------------------------------------ */

cudaError_t simt_alloc_device(int dev, size_t size, void **p)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t mapped = (size + page - 1) / page * page, need = mapped + page; /* + guard */
    memdev *dv = &M.dev[dev];
    if (size > M.capacity - dv->used) return cudaErrorMemoryAllocation;
    uintptr_t base = 0;
    for (int i = 0; i < dv->nfree; i++) /* first fit among freed ranges */
        if (dv->free_ranges[i].len >= need) {
            base = dv->free_ranges[i].base;
            dv->free_ranges[i].base += need;
            dv->free_ranges[i].len -= need;
            break;
        }
    if (!base) {
        if (dv->cursor + need > dv->arena + M.span) return cudaErrorMemoryAllocation;
        base = dv->cursor;
        dv->cursor += need;
    }
    if (mmap((void *)base, mapped, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
        return cudaErrorMemoryAllocation;
    madvise((void *)base, mapped, MADV_HUGEPAGE); /* fewer TLB misses on big arrays */
    simt_shadow_mark(base, size, need);
    pthread_rwlock_wrlock(&M.alloc_lock);
    if (M.nalloc == M.capalloc) {
        int cap = M.capalloc ? M.capalloc * 2 : 64;
        alloc *na = realloc(M.allocs, (size_t)cap * sizeof *na);
        if (!na) {
            pthread_rwlock_unlock(&M.alloc_lock);
            munmap((void *)base, mapped);
            return cudaErrorMemoryAllocation;
        }
        M.allocs = na;
        M.capalloc = cap;
    }
    int i = alloc_index(base) + 1;
    memmove(&M.allocs[i + 1], &M.allocs[i], (size_t)(M.nalloc - i) * sizeof *M.allocs);
    M.allocs[i] = (alloc){base, size, mapped, dev};
    M.nalloc++;
    pthread_rwlock_unlock(&M.alloc_lock);
    dv->used += size;
    *p = (void *)base;
    return cudaSuccess;
}

static void release_range(memdev *dv, uintptr_t base, size_t len)
{
    /* back to reserved-only address space */
    mmap((void *)base, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1,
         0);
    if (dv->nfree == dv->capfree) {
        int cap = dv->capfree ? dv->capfree * 2 : 16;
        range *r = realloc(dv->free_ranges, (size_t)cap * sizeof *r);
        if (!r) return; /* the range is lost to reuse, nothing worse */
        dv->free_ranges = r;
        dv->capfree = cap;
    }
    dv->free_ranges[dv->nfree++] = (range){base, len};
}

static void free_alloc_locked(int i)
{
    alloc al = M.allocs[i];
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    pthread_rwlock_wrlock(&M.alloc_lock);
    memmove(&M.allocs[i], &M.allocs[i + 1], (size_t)(M.nalloc - i - 1) * sizeof *M.allocs);
    M.nalloc--;
    atomic_fetch_add_explicit(&simt_alloc_generation, 1, memory_order_release);
    pthread_rwlock_unlock(&M.alloc_lock);
    memdev *dv = &M.dev[al.device];
    dv->used -= al.size;
    simt_shadow_mark(al.base, 0, al.mapped + page);
    release_range(dv, al.base, al.mapped + page);
}

int simt_alloc_home(const void *p)
{
    int i = alloc_index((uintptr_t)p);
    return i < 0 || M.allocs[i].base != (uintptr_t)p ? -1 : M.allocs[i].device;
}

void simt_alloc_free(const void *p)
{
    int i = alloc_index((uintptr_t)p);
    if (i >= 0 && M.allocs[i].base == (uintptr_t)p) free_alloc_locked(i);
}

void simt_alloc_free_device(int dev)
{
    for (int i = M.nalloc - 1; i >= 0; i--)
        if (M.allocs[i].device == dev) free_alloc_locked(i);
}

size_t simt_alloc_used(int dev) { return M.dev[dev].used; }

/* ---- pinned host memory ------------------------------------------------ */

static int pinned_index(const void *p) /* last pinned block with start <= p */
{
    int lo = 0, hi = M.npinned - 1, r = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if ((uintptr_t)M.pinned[mid] <= (uintptr_t)p) {
            r = mid;
            lo = mid + 1;
        } else
            hi = mid - 1;
    }
    return r;
}

int simt_is_pinned(const void *p, size_t n)
{
    int i = pinned_index(p);
    return i >= 0 && (uintptr_t)p + n <= (uintptr_t)M.pinned[i] + M.pinned_size[i];
}

cudaError_t simt_pinned_add(void *m, size_t size)
{
    if (M.npinned == M.cappinned) {
        int cap = M.cappinned ? M.cappinned * 2 : 32;
        void **np = realloc(M.pinned, (size_t)cap * sizeof *np);
        size_t *ns = np ? realloc(M.pinned_size, (size_t)cap * sizeof *ns) : NULL;
        if (np) M.pinned = np;
        if (!np || !ns) return cudaErrorMemoryAllocation;
        M.pinned_size = ns;
        M.cappinned = cap;
    }
    int i = pinned_index(m) + 1;
    memmove(&M.pinned[i + 1], &M.pinned[i], (size_t)(M.npinned - i) * sizeof *M.pinned);
    memmove(&M.pinned_size[i + 1], &M.pinned_size[i], (size_t)(M.npinned - i) * sizeof(size_t));
    M.pinned[i] = m;
    M.pinned_size[i] = size;
    M.npinned++;
    return cudaSuccess;
}

int simt_pinned_is_block(const void *p)
{
    int i = pinned_index(p);
    return i >= 0 && M.pinned[i] == p;
}

void simt_pinned_remove(const void *p)
{
    int i = pinned_index(p);
    if (i < 0 || M.pinned[i] != p) return;
    memmove(&M.pinned[i], &M.pinned[i + 1], (size_t)(M.npinned - i - 1) * sizeof *M.pinned);
    memmove(&M.pinned_size[i], &M.pinned_size[i + 1], (size_t)(M.npinned - i - 1) * sizeof(size_t));
    M.npinned--;
}
