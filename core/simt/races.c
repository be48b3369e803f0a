/*
 * races.c — the race check of the normal run (issue 19): two races that no
 * schedule of the emulator can show, because each thread runs on to its
 * next barrier before another starts.
 *
 *   warp-synchronous code: lanes of one warp that exchange values through
 *     memory with no __syncwarp() (or other warp operation) between them —
 *     the legacy "volatile" reduction tail. Since Volta the lanes of a warp
 *     are not in lockstep and this is a race; in the emulator the first
 *     lane runs its whole tail before the next starts, a wrong sum.
 *   lost updates: many threads read, change and write back one word with no
 *     barrier between them (counter[0]++ instead of atomicAdd). The emulator
 *     runs each increment whole, so the count is always right; on a GPU
 *     increments are lost.
 *
 * How: while a block is checked, the shadow of its shared memory (the
 * static TLS block that holds the __shared__ arrays, and the dynamic shared
 * memory) and of every device allocation the launch's arguments point into
 * is poisoned, so that every access a kernel file with inline checks makes
 * there calls memcheck.c's report hook, which hands it here (call-mode files
 * hand every access over through check_access). Each 4-byte word keeps its
 * last writer and its last two readers in this barrier interval, each with
 * the lane's clock: lanes of a warp carry vector clocks over the warp's 32
 * lanes, joined at every warp operation that names them, and
 * __syncthreads() starts a new interval. A race is an access by one thread
 * to a word another thread wrote or read (one of them writing) that nothing
 * orders. When the block ends: a lost update (a thread wrote a word it had
 * read while another thread's write to it was unordered with that read) is
 * reported; else races only between lanes of one warp (none across warps)
 * are reported as warp-synchronous code. Races across warps alone are left
 * to the schedules (SIMT_SCHEDULE: reverse shows a missing __syncthreads())
 * and to `make racecheck`. The report stops the kernel
 * (cudaErrorLaunchFailure) and names the threads, the memory and the fix.
 *
 * Cost: nothing unless a block is checked. By default (SIMT_RACES=1) that
 * is the first block of each kernel's first launch (a kernel's race is in
 * its code, and shows in any block); SIMT_RACES=2 checks every block, 0
 * none. The checked block runs slower (a call and a table update per
 * access), up to 1<<22 accesses and 1<<20 distinct words. Not seen: a
 * __shared__ array's element at a constant index (GCC's kernel-address
 * instrumentation checks no access to a thread-local variable at a known
 * offset; a __shared__ scalar is reached through a pointer, mk/cu2c.pl, so
 * it is seen), and device memory reached only through pointers in memory.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "executor.h"
#include "memstats.h"
#include "races.h"
#include "shadow.h"

int simt_races_mode = 1;

void simtSetRaceCheck(int mode) { simt_races_mode = mode < 0 ? 0 : mode > 2 ? 2 : mode; }

enum { MAX_RANGES = 16, MAX_ACCESSES = 1 << 22, MAX_CELLS = 1 << 21 };

typedef struct {
    uint16_t tid;  /* linear thread index + 1 (0: none) */
    uint8_t bytes; /* which of the word's 4 bytes */
    uint32_t clk;  /* the lane's own clock at the access */
} who;

typedef struct cell {
    uintptr_t word; /* address >> 2, + 1 (0: empty slot) */
    uint32_t phase; /* the barrier interval the entries below belong to */
    uint32_t val;   /* the word's value at the last access seen */
    int pending;    /* the last access seen was a store: val not known yet */
    who last;       /* the last access seen */
    who w, r[2];    /* the last writer; the last two readers (distinct threads) */
} cell;

typedef struct race {
    int found;
    uintptr_t addr;
    who a, b; /* a: the earlier access, b: the later */
    int a_store, b_store;
} race;

typedef struct races {
    struct {
        uintptr_t lo, hi;
        int shared;
    } range[MAX_RANGES];
    int nranges;
    struct {
        signed char *at, *saved;
        size_t n;
    } poisoned[MAX_RANGES];
    int npoisoned;
    cell *cells;
    size_t cap, ncells;
    uint32_t *vc; /* nthreads x 32: each lane's clocks of its warp's lanes */
    unsigned nthreads;
    uint32_t phase;
    unsigned long long accesses;
    int active; /* still recording (not over the limits) */
    race lost, warp, cross;
    uintptr_t skip[5][2]; /* the emulator's own thread-locals: threadIdx... */
} races;

/* Executors checking a block now (SIMT_COUNT_RACES is set while any is). */
static atomic_int trackers;

/* Kernels whose first launch was checked (SIMT_RACES=1). */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static const void *seen[4096];

static int first_launch(const void *kernel)
{
    size_t h = ((uintptr_t)kernel * 0x9E3779B97F4A7C15ull) >> 52, cap = sizeof seen / sizeof *seen;
    int first = 0;
    pthread_mutex_lock(&seen_lock);
    for (size_t i = 0; i < cap; i++) {
        size_t j = (h + i) & (cap - 1);
        if (seen[j] == kernel) break;
        if (!seen[j]) {
            seen[j] = kernel;
            first = 1;
            break;
        }
    }
    pthread_mutex_unlock(&seen_lock);
    return first;
}

int simt_races_launch(const simt_launch *l)
{
#ifdef SIMT_TSAN
    (void)l;
    return 0; /* the race check build: ThreadSanitizer sees every access */
#endif
    if (simt_races_mode == 0 || l->record) return 0;
    if (atomic_load_explicit(&simt_counting, memory_order_relaxed) & SIMT_COUNT_RECORD) return 0;
    return simt_races_mode == 2 ? 2 : first_launch(l->kernel);
}

/* ---- the shadow ----------------------------------------------------------- */

static void add_range(races *r, uintptr_t lo, size_t len, int shared)
{
    if (!len || r->nranges == MAX_RANGES) return;
    for (int i = 0; i < r->nranges; i++)
        if (r->range[i].lo == lo) return;
    r->range[r->nranges].lo = lo;
    r->range[r->nranges].hi = lo + len;
    r->range[r->nranges].shared = shared;
    r->nranges++;
#ifdef SIMT_SHADOW
    uintptr_t g0 = lo >> 3, g1 = (lo + len + 7) >> 3;
    signed char *at = (signed char *)(g0 + SIMT_SHADOW_OFFSET);
    size_t n = g1 - g0;
    signed char *saved = malloc(n);
    if (!saved) return; /* then only call-mode files' accesses there are seen */
    memcpy(saved, at, n);
    memset(at, (signed char)0xf8, n);
    r->poisoned[r->npoisoned].at = at;
    r->poisoned[r->npoisoned].saved = saved;
    r->poisoned[r->npoisoned].n = n;
    r->npoisoned++;
#endif
}

static void unpoison(races *r)
{
    while (r->npoisoned > 0) { /* in reverse: the ranges may share a shadow byte */
        r->npoisoned--;
        memcpy(r->poisoned[r->npoisoned].at, r->poisoned[r->npoisoned].saved,
               r->poisoned[r->npoisoned].n);
        free(r->poisoned[r->npoisoned].saved);
    }
}

/* ---- a checked block ------------------------------------------------------- */

static void fail(executor *x)
{
    free(x->races);
    x->races = NULL;
}

void simt_races_begin(executor *x)
{
    races *r = x->races;
    if (!r && !(r = x->races = calloc(1, sizeof *r))) return;
    unsigned n = x->nthreads;
    if (r->nthreads < n) {
        free(r->vc);
        r->vc = malloc((size_t)n * 32 * sizeof *r->vc);
        if (!r->vc) {
            r->nthreads = 0;
            fail(x);
            return;
        }
        r->nthreads = n;
    }
    for (unsigned t = 0; t < n; t++) {
        uint32_t *v = &r->vc[(size_t)t * 32];
        memset(v, 0, 32 * sizeof *v);
        v[t & 31] = 1;
    }
    if (!r->cells) {
        r->cap = 1 << 12;
        r->cells = calloc(r->cap, sizeof *r->cells);
        if (!r->cells) {
            fail(x);
            return;
        }
    } else
        memset(r->cells, 0, r->cap * sizeof *r->cells);
    r->ncells = 0;
    r->phase = 1;
    r->accesses = 0;
    r->active = 1;
    memset(&r->lost, 0, sizeof r->lost);
    memset(&r->warp, 0, sizeof r->warp);
    memset(&r->cross, 0, sizeof r->cross);
    r->nranges = 0;
    /* the built-in variables the emulator writes at every switch: in the
     * static TLS block, but no kernel's memory */
    const void *b[5] = {&simt_threadIdx, &simt_blockIdx, &simt_blockDim, &simt_gridDim,
                        &simt_dynamic_shared};
    const size_t bs[5] = {sizeof simt_threadIdx, sizeof simt_blockIdx, sizeof simt_blockDim,
                          sizeof simt_gridDim, sizeof simt_dynamic_shared};
    for (int k = 0; k < 5; k++) {
        r->skip[k][0] = (uintptr_t)b[k];
        r->skip[k][1] = (uintptr_t)b[k] + bs[k];
    }
    /* shared memory: the static TLS block, the dynamic shared memory */
    uintptr_t lo, hi;
    simt_static_tls(&lo, &hi);
    add_range(r, lo, hi - lo, 1);
    add_range(r, (uintptr_t)x->bv.dynamic_shared, x->bv.dynamic_shared ? x->launch->shmem : 0, 1);
    /* the device allocations the arguments point into */
    const simt_launch *l = x->launch;
    for (size_t o = 0; o + sizeof(uintptr_t) <= l->args_size; o += sizeof(uintptr_t)) {
        uintptr_t p, base;
        size_t len;
        memcpy(&p, (const char *)l->args + o, sizeof p);
        if (p - simt_arena_lo < simt_arena_span && simt_alloc_find(p, 1, &base, &len))
            add_range(r, base, len, 0);
    }
    x->track = 1;
    if (atomic_fetch_add(&trackers, 1) == 0) /* call-mode files hand accesses over */
        atomic_fetch_or(&simt_counting, SIMT_COUNT_RACES);
}

static uint32_t word_value(uintptr_t word)
{
    uint32_t v;
    memcpy(&v, (const void *)((word - 1) << 2), sizeof v);
    return v;
}

static cell *cell_of(races *r, uintptr_t word)
{
    if (2 * (r->ncells + 1) > r->cap) {
        if (r->cap >= MAX_CELLS) return NULL;
        size_t ncap = 2 * r->cap;
        cell *t = calloc(ncap, sizeof *t);
        if (!t) return NULL;
        for (size_t i = 0; i < r->cap; i++) {
            if (!r->cells[i].word) continue;
            size_t j = (r->cells[i].word * 0x9E3779B97F4A7C15ull >> 20) & (ncap - 1);
            while (t[j].word) j = (j + 1) & (ncap - 1);
            t[j] = r->cells[i];
        }
        free(r->cells);
        r->cells = t;
        r->cap = ncap;
    }
    size_t j = (word * 0x9E3779B97F4A7C15ull >> 20) & (r->cap - 1);
    while (r->cells[j].word && r->cells[j].word != word) j = (j + 1) & (r->cap - 1);
    cell *c = &r->cells[j];
    if (!c->word) {
        c->word = word;
        c->phase = r->phase + 1; /* reset below */
        r->ncells++;
    }
    if (c->phase != r->phase) { /* new, or a __syncthreads() since: all that is ordered */
        memset(&c->last, 0, sizeof c->last);
        memset(&c->w, 0, sizeof c->w);
        memset(c->r, 0, sizeof c->r);
        c->pending = 0;
        c->phase = r->phase;
    }
    return c;
}

static const uint32_t *clocks(const races *r, unsigned t) { return &r->vc[(size_t)t * 32]; }

/* Whether the access e is ordered before anything thread t does now. */
static int ordered(const races *r, const who *e, unsigned t)
{
    unsigned a = e->tid - 1u;
    if (a == t) return 1;
    if (a >> 5 != t >> 5) return 0; /* other warps: only __syncthreads() orders them */
    return clocks(r, t)[a & 31] >= e->clk;
}

static void note(race *k, uintptr_t word, const who *a, int a_store, const who *b, int b_store)
{
    if (k->found) return;
    k->found = 1;
    k->addr = (word - 1) << 2;
    k->a = *a;
    k->b = *b;
    k->a_store = a_store;
    k->b_store = b_store;
}

static race *kind(races *r, const who *a, const who *b)
{
    return (unsigned)(a->tid - 1) >> 5 == (unsigned)(b->tid - 1) >> 5 ? &r->warp : &r->cross;
}

/* A write by me (seen, or inferred from the word's value) against what the
 * word saw in this interval: a read by another thread that nothing orders
 * before it; or, when I read the word before, a write by another thread
 * unordered with mine (an update a GPU can lose). */
static void a_write(races *r, cell *c, const who *me)
{
    unsigned t = me->tid - 1u;
    for (int i = 0; i < 2; i++) {
        const who *e = &c->r[i];
        if (e->tid && e->tid != me->tid && (e->bytes & me->bytes) && !ordered(r, e, t))
            note(kind(r, e, me), c->word, e, 0, me, 1);
    }
    const who *w = &c->w;
    int read_it = c->r[0].tid == me->tid || c->r[1].tid == me->tid;
    if (w->tid && w->tid != me->tid && (w->bytes & me->bytes) && read_it && !ordered(r, w, t))
        note(&r->lost, c->word, w, 1, me, 1);
    c->w = *me;
}

/* Kernel files check one access at a pointer once: a store after a load
 * of the same element (x += ...) reaches no hook. Such a write shows in the
 * word's value: changed since the last access seen, it was written by the
 * thread of that access (a write by any other thread would have been seen
 * first, or its own first access to the word would have). */
static void infer_write(races *r, cell *c)
{
    if (c->pending || !c->last.tid) return;
    uint32_t now = word_value(c->word), diff = now ^ c->val;
    if (!diff) return;
    who me = c->last;
    me.bytes = (uint8_t)((diff & 0xffu ? 1 : 0) | (diff & 0xff00u ? 2 : 0) |
                         (diff & 0xff0000u ? 4 : 0) | (diff & 0xff000000u ? 8 : 0));
    a_write(r, c, &me);
    c->val = now;
}

static void access_word(races *r, unsigned t, uintptr_t word, uint8_t bytes, int store)
{
    cell *c = cell_of(r, word);
    if (!c) {
        r->active = 0; /* over the limit: what was seen so far stands */
        return;
    }
    if (c->pending) { /* the value the last (seen) store left */
        c->val = word_value(word);
        c->pending = 0;
    } else
        infer_write(r, c);
    who me = {(uint16_t)(t + 1), bytes, clocks(r, t)[t & 31]};
    if (store) {
        a_write(r, c, &me);
        c->pending = 1;
    } else {
        const who *w = &c->w;
        if (w->tid && w->tid != me.tid && (w->bytes & bytes) && !ordered(r, w, t))
            note(kind(r, w, &me), word, w, 1, &me, 0);
        if (c->r[0].tid != me.tid) c->r[1] = c->r[0];
        c->r[0] = me;
        c->val = word_value(word);
    }
    c->last = me;
}

/* At a __syncthreads() and at the end of the block: the writes that only
 * the words' values show. */
static void sweep(races *r)
{
    for (size_t i = 0; i < r->cap; i++)
        if (r->cells[i].word && r->cells[i].phase == r->phase) {
            cell *c = &r->cells[i];
            if (c->pending) {
                c->pending = 0;
                c->val = word_value(c->word);
            } else
                infer_write(r, c);
        }
}

int simt_races_access(executor *x, uintptr_t a, size_t size, int store, uintptr_t site)
{
    races *r = x->races;
    (void)site;
    if (!r) return 0;
    int i = 0;
    while (i < r->nranges && !(a >= r->range[i].lo && a < r->range[i].hi)) i++;
    if (i == r->nranges) return 0;
    int shared = r->range[i].shared;
    if (!r->active || !x->cur || !x->launch) return shared;
    if (shared)
        for (int k = 0; k < 5; k++)
            if (a >= r->skip[k][0] && a < r->skip[k][1]) return shared; /* threadIdx & co. */
    const dim3 bd = x->bv.block_dim;
    unsigned t = simt_threadIdx.x + bd.x * (simt_threadIdx.y + bd.y * simt_threadIdx.z);
    if (t >= r->nthreads) return shared;
    if (++r->accesses > MAX_ACCESSES) {
        r->active = 0;
        return shared;
    }
    for (uintptr_t w = a & ~(uintptr_t)3; w < a + size && r->active; w += 4) {
        uintptr_t lo = a > w ? a : w, hi = a + size < w + 4 ? a + size : w + 4;
        uint8_t bytes = (uint8_t)(((1u << (hi - lo)) - 1u) << (lo - w));
        access_word(r, t, (w >> 2) + 1, bytes, store);
    }
    return shared;
}

void simt_races_atomic(executor *x, uintptr_t a, size_t size)
{
    races *r = x->races;
    if (!r || !r->active) return;
    int i = 0;
    while (i < r->nranges && !(a >= r->range[i].lo && a < r->range[i].hi)) i++;
    if (i == r->nranges) return;
    for (uintptr_t w = a & ~(uintptr_t)3; w < a + size; w += 4) {
        cell *c = cell_of(r, (w >> 2) + 1);
        if (!c) {
            r->active = 0;
            return;
        }
        if (!c->pending) infer_write(r, c); /* a plain write before it */
        c->pending = 1;                     /* its value: read at the next access */
    }
}

void simt_races_warp_sync(executor *x, unsigned base, unsigned mask)
{
    races *r = x->races;
    if (!r || base + 32 > r->nthreads + 31) return;
    uint32_t join[32] = {0};
    for (unsigned l = 0; l < 32; l++) {
        if (!(mask >> l & 1u) || base + l >= r->nthreads) continue;
        const uint32_t *v = &r->vc[(size_t)(base + l) * 32];
        for (unsigned j = 0; j < 32; j++)
            if (v[j] > join[j]) join[j] = v[j];
    }
    for (unsigned l = 0; l < 32; l++) {
        if (!(mask >> l & 1u) || base + l >= r->nthreads) continue;
        uint32_t *v = &r->vc[(size_t)(base + l) * 32];
        memcpy(v, join, sizeof join);
        v[l]++;
    }
}

void simt_races_barrier(executor *x)
{
    races *r = x->races;
    if (!r) return;
    if (r->active) sweep(r);
    r->phase++;
}

/* "thread (x,y,z) (warp W, lane L)" of linear index t. */
static void name_thread(const executor *x, unsigned t, char *buf, size_t cap)
{
    const dim3 bd = x->bv.block_dim;
    snprintf(buf, cap, "thread (%u,%u,%u) (warp %u, lane %u)", t % bd.x, t / bd.x % bd.y,
             t / (bd.x * bd.y), t >> 5, t & 31);
}

static void name_memory(const races *r, uintptr_t a, char *buf, size_t cap)
{
    for (int i = 0; i < r->nranges; i++)
        if (a >= r->range[i].lo && a < r->range[i].hi) {
            if (r->range[i].shared) {
                snprintf(buf, cap, "shared memory at %p", (void *)a);
                return;
            }
            snprintf(buf, cap, "device memory at %p (offset %zu of the allocation at %p)",
                     (void *)a, (size_t)(a - r->range[i].lo), (void *)r->range[i].lo);
            return;
        }
    snprintf(buf, cap, "%p", (void *)a);
}

void simt_races_end(executor *x, int report)
{
    races *r = x->races;
    if (!r || !x->track) return;
    x->track = 0;
    if (report && r->active) sweep(r);
    unpoison(r);
    if (r->cap > (1u << 14)) { /* a big block's table: not kept for the next */
        free(r->cells);
        r->cells = NULL;
        r->cap = 0;
    }
    if (atomic_fetch_sub(&trackers, 1) == 1) atomic_fetch_and(&simt_counting, ~SIMT_COUNT_RACES);
    if (!report) return;
    char ta[96], tb[96], mem[160];
    if (r->lost.found) {
        name_thread(x, r->lost.a.tid - 1u, ta, sizeof ta);
        name_thread(x, r->lost.b.tid - 1u, tb, sizeof tb);
        name_memory(r, r->lost.addr, mem, sizeof mem);
        simt_fault(cudaErrorLaunchFailure, NULL,
                   "race: lost update: %s reads, changes and writes back the 4-byte word of %s "
                   "that %s also wrote, with no barrier between them (as in counter[0]++ by many "
                   "threads). On a GPU the threads' read-modify-writes interleave and updates "
                   "are lost; the emulator runs each whole, so its count looks right. Use an "
                   "atomic (atomicAdd(&counter[0], 1)), or give each thread its own word",
                   tb, mem, ta);
    }
    if (r->warp.found && !r->cross.found) {
        name_thread(x, r->warp.a.tid - 1u, ta, sizeof ta);
        name_thread(x, r->warp.b.tid - 1u, tb, sizeof tb);
        name_memory(r, r->warp.addr, mem, sizeof mem);
        simt_fault(cudaErrorLaunchFailure, NULL,
                   "race between lanes of one warp: %s %s %s, which %s %s, with no __syncwarp() "
                   "between them. This is warp-synchronous code (the legacy \"volatile\" "
                   "reduction tail): since Volta the lanes of a warp do not run in lockstep, and "
                   "the emulator runs each lane on to its next barrier, so the result is wrong. "
                   "Put __syncwarp() between the step that writes and the step that reads (or "
                   "use __shfl_down_sync)",
                   tb, r->warp.b_store ? "writes" : "reads", mem, ta,
                   r->warp.a_store ? "wrote before" : "read before");
    }
}

void simt_races_free(executor *x)
{
    races *r = x->races;
    if (!r) return;
    simt_races_end(x, 0);
    free(r->cells);
    free(r->vc);
    free(r);
    x->races = NULL;
}
