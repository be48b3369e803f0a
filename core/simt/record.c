/*
 * record.c — simtRecord*: what one kernel did, recorded while it ran (its
 * blocks on the model's SMs and waves with their measured times, the
 * accesses of chosen blocks to chosen memory, the shuffles), for the labs'
 * pictures. paralab/device.h ("a kernel's record") says what each field
 * means and where the model of SMs comes from.
 *
 * The life of a record: simtRecordBegin arms it (R_ARMED); the next
 * simtLaunchKernel claims it (R_CLAIMED, the launch carries the ticket);
 * the stream worker that runs that launch starts it before the first block
 * (R_RUNNING: from then on only that worker writes the record) and
 * finishes it after the last block or at a fault (R_DONE); simtRecordEnd,
 * on the host after a synchronize, hands it out (R_IDLE). A claimed launch
 * that never runs (a broken context), or one that starts after End, is not
 * recorded. The lock guards the state; the record itself needs none, as
 * one thread writes it at a time and the hand-overs take the lock.
 *
 * Cost: the access log rides on simt_counting's SIMT_COUNT_RECORD bit,
 * set only while the recorded kernel runs with a log; blocks and warp ops
 * test the executor's own x->rec / x->rec_log, once per block and once per
 * resolved warp operation.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "memstats.h"
#include "record.h"
#include "shadow.h"

enum { R_IDLE, R_ARMED, R_CLAIMED, R_RUNNING, R_DONE };
#define MAX_BLOCKS ((size_t)1 << 20)
#define MAX_LOG ((size_t)1 << 24)

atomic_int simt_record_armed;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int state;
static unsigned gen; /* the ticket of the record begun last */
static simt_record_config cfg;
static simt_record rec;

/* Written only by the worker running the recorded kernel (R_RUNNING). */
static struct {
    size_t cap_blocks, cap_access, cap_warp;
    int warp_full;
    double t0;         /* the kernel's start, CLOCK_MONOTONIC seconds */
    unsigned per_wave; /* sms x per_sm */
    uintptr_t tls_lo, tls_hi, dyn_lo;
    size_t dyn_len;
    struct site {
        uintptr_t pc; /* 0: empty */
        uint32_t id;
    } * sites;
    size_t cap_sites, nsites;
} w;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int simtRecordBegin(const simt_record_config *c)
{
    if (!c || c->max_accesses > MAX_LOG || c->nranges < 0 || c->nranges > SIMT_RECORD_MAX_RANGES)
        return -1;
    if (c->warp_ops && !c->max_accesses) return -1; /* the shuffle log holds max_accesses */
    for (int i = 0; i < c->nranges; i++)
        if (!c->range[i].lo || !c->range[i].len) return -1;
    pthread_mutex_lock(&lock);
    if (state != R_IDLE) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    cfg = *c;
    gen = gen + 1 ? gen + 1 : 1; /* 0 means "no record" */
    state = R_ARMED;
    atomic_store(&simt_record_armed, 1);
    pthread_mutex_unlock(&lock);
    return 0;
}

unsigned simt_record_claim(void)
{
    unsigned ticket = 0;
    pthread_mutex_lock(&lock);
    if (state == R_ARMED) {
        state = R_CLAIMED;
        atomic_store(&simt_record_armed, 0);
        ticket = gen;
    }
    pthread_mutex_unlock(&lock);
    return ticket;
}

void simt_record_unclaim(unsigned ticket)
{
    pthread_mutex_lock(&lock);
    if (state == R_CLAIMED && gen == ticket) {
        state = R_ARMED;
        atomic_store(&simt_record_armed, 1);
    }
    pthread_mutex_unlock(&lock);
}

/* paralab/device.h's model: blocks of the launch one SM holds at a time. */
static int blocks_per_sm(const simt_preset *p, unsigned threads, size_t shmem)
{
    size_t per = 32;
    if (threads && (size_t)p->max_threads_per_sm / threads < per)
        per = (size_t)p->max_threads_per_sm / threads;
    if (shmem && p->shared_per_sm / shmem < per) per = p->shared_per_sm / shmem;
    return per ? (int)per : 1;
}

/* Kernel files with inline checks (build/sim) read a shadow byte per
 * access and call memcheck.c's report hooks only where it is poisoned: the
 * memory the record logs is poisoned while the recorded kernel runs, so
 * their accesses there reach simt_record_poisoned, and no access costs
 * anything more while nothing is recorded. Restored (in reverse order, as
 * the ranges may overlap) when the kernel ends. */
#ifdef SIMT_SHADOW
static struct poisoned {
    signed char *at, *saved;
    size_t n;
} poisoned[SIMT_RECORD_MAX_RANGES + 2];
static int npoisoned;

static void poison(uintptr_t lo, size_t len)
{
    if (!len) return;
    uintptr_t g0 = lo >> 3, g1 = (lo + len + 7) >> 3;
    struct poisoned *p = &poisoned[npoisoned];
    p->at = (signed char *)(g0 + SIMT_SHADOW_OFFSET);
    p->n = g1 - g0;
    p->saved = malloc(p->n);
    if (!p->saved) { /* then only call-mode files' accesses there are logged */
        rec.truncated = 1;
        return;
    }
    memcpy(p->saved, p->at, p->n);
    memset(p->at, (signed char)0xf9, p->n);
    npoisoned++;
}

static void unpoison(void)
{
    while (npoisoned > 0) {
        struct poisoned *p = &poisoned[--npoisoned];
        memcpy(p->at, p->saved, p->n);
        free(p->saved);
    }
}
#else
static void poison(uintptr_t lo, size_t len) { (void)lo, (void)len; }
static void unpoison(void) {}
#endif

static int in_shared(uintptr_t a)
{
    return cfg.shared && (a - w.dyn_lo < w.dyn_len || (a >= w.tls_lo && a < w.tls_hi));
}

int simt_record_poisoned(executor *x, uintptr_t a, size_t size, int store, uintptr_t site)
{
    if (x->rec_log &&
        (atomic_load_explicit(&simt_counting, memory_order_relaxed) & SIMT_COUNT_RECORD))
        simt_record_log_access(x, a, size, store, site);
    return in_shared(a);
}

void simt_record_start(executor *x, const simt_launch *l)
{
    pthread_mutex_lock(&lock);
    int mine = state == R_CLAIMED && gen == l->record;
    if (mine) state = R_RUNNING;
    pthread_mutex_unlock(&lock);
    if (!mine) return;

    const simt_preset *p = simt_cfg.preset;
    memset(&rec, 0, sizeof rec);
    memset(&w, 0, sizeof w);
    snprintf(rec.kernel, sizeof rec.kernel, "%s", l->kernel->name ? l->kernel->name : "");
    rec.grid = l->grid;
    rec.block = l->block;
    rec.shmem = l->shmem;
    rec.sms = p->sm_count > 0 ? p->sm_count : 1;
    rec.per_sm = blocks_per_sm(p, l->block.x * l->block.y * l->block.z, l->shmem);
    uint64_t total = (uint64_t)l->grid.x * l->grid.y * l->grid.z;
    uint64_t per_wave = (uint64_t)rec.sms * (uint64_t)rec.per_sm;
    w.per_wave = (unsigned)per_wave;
    rec.waves = (int)((total + per_wave - 1) / per_wave);
    if (cfg.blocks) {
        w.cap_blocks = total < MAX_BLOCKS ? (size_t)total : MAX_BLOCKS;
        rec.blocks = malloc(w.cap_blocks * sizeof *rec.blocks);
        if (!rec.blocks) w.cap_blocks = 0; /* then truncated */
    }
    simt_static_tls(&w.tls_lo, &w.tls_hi);
    w.dyn_lo = (uintptr_t)x->bv.dynamic_shared;
    w.dyn_len = x->bv.dynamic_shared ? l->shmem : 0;
    x->rec = 1;
    if (cfg.max_accesses && (cfg.nranges || cfg.shared)) {
        for (int i = 0; i < cfg.nranges; i++) poison((uintptr_t)cfg.range[i].lo, cfg.range[i].len);
        if (cfg.shared) {
            poison(w.tls_lo, w.tls_hi - w.tls_lo);
            poison(w.dyn_lo, w.dyn_len);
        }
        atomic_fetch_or(&simt_counting, SIMT_COUNT_RECORD);
    }
    w.t0 = now();
}

void simt_record_block_begin(executor *x)
{
    const uint3 b = x->bv.block_idx;
    const dim3 g = x->bv.grid_dim;
    uint64_t lin = b.x + (uint64_t)g.x * (b.y + (uint64_t)g.y * b.z);
    x->rec_block = (uint32_t)lin;
    x->rec_log =
        cfg.max_accesses &&
        (!cfg.block_count || (lin >= cfg.block_first && lin - cfg.block_first < cfg.block_count));
    x->rec_in_block = 1;
    x->rec_block_start = now() - w.t0;
}

void simt_record_block_end(executor *x)
{
    double end = now() - w.t0;
    x->rec_log = 0;
    if (!x->rec_in_block) return;
    x->rec_in_block = 0;
    if (!cfg.blocks) return;
    if (rec.nblocks >= w.cap_blocks) {
        rec.truncated = 1;
        return;
    }
    uint32_t b = x->rec_block;
    rec.blocks[rec.nblocks++] = (simt_record_block){
        .block = b,
        .sm = b % (uint32_t)rec.sms,
        .wave = b / w.per_wave,
        .start = x->rec_block_start,
        .end = end,
    };
}

/* Grows a log of *cap entries of `size` bytes (doubling, at most
 * cfg.max_accesses): 0, or -1 when full or out of memory. */
static int grow(void **log, size_t *cap, size_t size)
{
    if (*cap >= cfg.max_accesses) return -1;
    size_t n = *cap ? 2 * *cap : 4096;
    if (n > cfg.max_accesses) n = cfg.max_accesses;
    void *t = realloc(*log, n * size);
    if (!t) return -1;
    *log = t;
    *cap = n;
    return 0;
}

/* The call site's number in this record: 0, 1... in the order first seen. */
static uint32_t site_id(uintptr_t pc)
{
    if (2 * (w.nsites + 1) > w.cap_sites) {
        size_t ncap = w.cap_sites ? 2 * w.cap_sites : 64;
        struct site *t = calloc(ncap, sizeof *t);
        if (!t) return UINT32_MAX;
        for (size_t i = 0; i < w.cap_sites; i++) {
            if (!w.sites[i].pc) continue;
            size_t j = (w.sites[i].pc * 0x9E3779B97F4A7C15ull >> 20) & (ncap - 1);
            while (t[j].pc) j = (j + 1) & (ncap - 1);
            t[j] = w.sites[i];
        }
        free(w.sites);
        w.sites = t;
        w.cap_sites = ncap;
    }
    size_t j = (pc * 0x9E3779B97F4A7C15ull >> 20) & (w.cap_sites - 1);
    while (w.sites[j].pc && w.sites[j].pc != pc) j = (j + 1) & (w.cap_sites - 1);
    if (!w.sites[j].pc) {
        w.sites[j].pc = pc;
        w.sites[j].id = (uint32_t)w.nsites++;
    }
    return w.sites[j].id;
}

static uint32_t linear_thread(const executor *x)
{
    const dim3 bd = x->bv.block_dim;
    return simt_threadIdx.x + bd.x * (simt_threadIdx.y + bd.y * simt_threadIdx.z);
}

void simt_record_log_access(executor *x, uintptr_t a, size_t size, int store, uintptr_t site)
{
    int space = -1;
    uint64_t off = 0;
    for (int i = 0; i < cfg.nranges; i++) {
        uintptr_t lo = (uintptr_t)cfg.range[i].lo;
        if (a - lo < cfg.range[i].len) {
            space = 1 + i;
            off = a - lo;
            break;
        }
    }
    if (space < 0) {
        if (!in_shared(a)) return; /* a local variable, or memory no range names */
        space = 0;
        off = a; /* made relative to the block's lowest in simt_record_finish */
    }
    if (rec.naccess == w.cap_access &&
        grow((void **)&rec.access, &w.cap_access, sizeof *rec.access) != 0) {
        rec.truncated = 1;
        atomic_fetch_and(&simt_counting, ~SIMT_COUNT_RECORD); /* full: no more calls */
        return;
    }
    rec.access[rec.naccess++] = (simt_record_access){
        .block = x->rec_block,
        .thread = linear_thread(x),
        .round = x->round,
        .site = site_id(site),
        .offset = off,
        .size = (uint8_t)(size < 255 ? size : 255),
        .store = (uint8_t)(store != 0),
        .space = (uint8_t)space,
    };
}

void simt_record_log_shfl(executor *x, unsigned thread, int kind, int src_lane)
{
    if (!cfg.warp_ops || w.warp_full) return;
    if (rec.nwarp_ops == w.cap_warp &&
        grow((void **)&rec.warp_ops, &w.cap_warp, sizeof *rec.warp_ops) != 0) {
        rec.truncated = 1;
        w.warp_full = 1;
        return;
    }
    rec.warp_ops[rec.nwarp_ops++] = (simt_record_warp_op){
        .block = x->rec_block,
        .thread = thread,
        .round = x->round,
        .src_lane = src_lane,
        .kind = (uint8_t)kind,
    };
}

void simt_record_finish(executor *x)
{
    atomic_fetch_and(&simt_counting, ~SIMT_COUNT_RECORD);
    unpoison();
    x->rec = x->rec_log = x->rec_in_block = 0;
    /* Shared offsets from the lowest shared byte each block touched: a
     * block's entries are consecutive (its blocks run one after another
     * on this thread). */
    for (size_t i = 0; i < rec.naccess;) {
        size_t j = i;
        uint64_t lo = UINT64_MAX;
        for (; j < rec.naccess && rec.access[j].block == rec.access[i].block; j++)
            if (rec.access[j].space == 0 && rec.access[j].offset < lo) lo = rec.access[j].offset;
        for (size_t k = i; k < j; k++)
            if (rec.access[k].space == 0) rec.access[k].offset -= lo;
        i = j;
    }
    free(w.sites);
    w.sites = NULL;
    w.cap_sites = w.nsites = 0;
    pthread_mutex_lock(&lock);
    state = R_DONE;
    pthread_mutex_unlock(&lock);
}

int simtRecordEnd(simt_record *out)
{
    simt_record r;
    memset(&r, 0, sizeof r);
    pthread_mutex_lock(&lock);
    if (state == R_RUNNING) { /* the kernel still runs: synchronize first */
        pthread_mutex_unlock(&lock);
        if (out) *out = r;
        return -1;
    }
    if (state == R_DONE) {
        r = rec;
        memset(&rec, 0, sizeof rec);
    }
    state = R_IDLE;
    atomic_store(&simt_record_armed, 0);
    pthread_mutex_unlock(&lock);
    if (out)
        *out = r;
    else
        simtRecordFree(&r);
    return 0;
}

void simtRecordFree(simt_record *r)
{
    if (!r) return;
    free(r->blocks);
    free(r->access);
    free(r->warp_ops);
    memset(r, 0, sizeof *r);
}
