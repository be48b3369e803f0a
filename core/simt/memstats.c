/*
 * memstats.c — simtMemStats: the memory transactions of call-mode kernels
 * (sectors of global memory, wavefronts of shared memory per warp-wide
 * request), as memcheck.c's hooks hand every access over while counting.
 */
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "executor.h"
#include "memstats.h"

/* While counting, every access of a call-mode kernel is filed under its
 * request: (warp, call site, occurrence), the occurrence being how many
 * times before this thread passed that call site. Requests are costed and
 * added to the totals when the block ends (all its threads have then made
 * their accesses). */

atomic_int simt_counting;
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

void simt_static_tls(uintptr_t *lo, uintptr_t *hi)
{
    *lo = *hi = 0;
#if defined(__x86_64__)
    size_t size = 0;
    dl_iterate_phdr(first_tls, &size);
    uintptr_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    *lo = tp - size;
    *hi = tp;
#endif
}

static memcount *memcount_of(executor *x)
{
    if (!x->mc) {
        x->mc = calloc(1, sizeof *x->mc);
        if (x->mc) simt_static_tls(&x->mc->tls_lo, &x->mc->tls_hi);
    }
    return x->mc;
}

void simt_count_access(executor *x, uintptr_t a, size_t size, int store, uintptr_t site, int global)
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
void simt_memcount_clear(memcount *m)
{
    if (m->req) memset(m->req, 0, m->capreq * sizeof *m->req);
    if (m->occ) memset(m->occ, 0, m->capocc * sizeof *m->occ);
    m->nreq = m->nocc = 0;
    m->oom = 0;
}

/* At the end of a block: cost its requests, add them up, start afresh. */
void simt_memcount_flush(memcount *m)
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
    simt_memcount_clear(m);
}

void simt_memcount_free(memcount *m)
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
    atomic_fetch_or(&simt_counting, SIMT_COUNT_STATS);
}

void simtMemStatsEnd(simt_mem_stats *out)
{
    atomic_fetch_and(&simt_counting, ~SIMT_COUNT_STATS);
    pthread_mutex_lock(&stats_lock);
    if (out) *out = stats;
    pthread_mutex_unlock(&stats_lock);
}
