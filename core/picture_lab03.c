/*
 * picture_lab03.c — Lab 03's picture from a kernel's record (paralab/picture.h,
 * PL_PIC_TREE): a block's reduction tree, level by level, read off the
 * block's shared-memory accesses (or its warp shuffles) as the kernel made
 * them.
 *
 * Shared memory: a thread's adds are read off its accesses to the shared
 * array in one barrier round, element = offset / the size of the block's
 * first store (the floats' 4 bytes):
 *   - a store after loads: an add into the stored element (dst) of the
 *     first element loaded since the thread's previous store other than
 *     dst (src): s[t] += s[t + stride] loads s[t] and s[t + stride] and
 *     stores s[t]: src t + stride.
 *   - loads of two or more elements and no store after them (the usual
 *     case: GCC's instrumentation checks an address once per basic block,
 *     so the store of s[t] += ..., whose address the load of s[t] checked
 *     already, is not in the log; core/simt's record says so): an add into
 *     one of them of each other, in the order loaded. Its dst is the one
 *     accessed again in a later round (a sum lives on, an element added in
 *     is never read again), else the first loaded (s[t] += ... loads s[t]
 *     first). v = s[t] + s[t + 32] into a register counts too: it is the
 *     add of that level, kept in a register.
 *   - a store with no such load (the load of the block's values, s[t] =
 *     in[i]; a constant), or a load of one element (thread 0's read of
 *     s[0]): no add. The initial load is therefore no level: the values'
 *     row of the picture stands for it.
 * A round's adds form one level; a thread that adds twice in one round (a
 * warp-synchronous tail, no barrier between) puts its second add in the
 * next level, and so on. Rounds without an add are skipped; levels are
 * numbered from 0.
 *
 * Shuffles: the lowest warp of the block that made a warp op; each of its
 * ops whose lane read another (src_lane >= 0) is an add of its round: dst
 * = the lane, src = src_lane (a lane reading past the width keeps its own
 * value: no add). The other warps' shuffles are left out.
 *
 * Within a level the triples are in thread order, whatever order the
 * emulator ran the threads in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/picture.h"

#define WARP 32
#define MAX_LEVELS 64 /* pl_picture_check's limit */

typedef struct {
    uint32_t round, sub, thread;
    int32_t dst, src;
} add;

static int by_level(const void *a, const void *b)
{
    const add *x = a, *y = b;
    if (x->round != y->round) return x->round < y->round ? -1 : 1;
    if (x->sub != y->sub) return x->sub < y->sub ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return 0;
}

#define MAX_PENDING 8 /* distinct elements a thread's loads may hold before a store */

/* Per thread: the round of its last add and the adds it made in it; the
 * distinct elements it loaded since its last store, in order, and their
 * round. */
typedef struct {
    uint32_t round, nsub;
    int have_round;
    uint32_t load_round;
    int nload;
    int64_t load[MAX_PENDING];
} tstate;

static uint32_t next_sub(tstate *s, uint32_t round)
{
    if (!s->have_round || s->round != round) {
        s->have_round = 1;
        s->round = round;
        s->nsub = 0;
    }
    return s->nsub++;
}

/* Thread t's loads with no store after them: an add into one of them of
 * each other (above). last[e]: the last round element e was accessed in. */
static void flush(tstate *s, uint32_t t, const uint32_t *last, add *adds, size_t *na)
{
    if (s->nload >= 2) {
        int d = 0;
        for (int k = 0; k < s->nload; k++)
            if (last[s->load[k]] > s->load_round) {
                d = k; /* lives on: the sum */
                break;
            }
        for (int k = 0; k < s->nload; k++)
            if (k != d)
                adds[(*na)++] = (add){s->load_round, next_sub(s, s->load_round), t,
                                      (int32_t)s->load[d], (int32_t)s->load[k]};
    }
    s->nload = 0;
}

int pl_picture_tree(const pl_kernel_record *rec, int shuffle, pl_picture *out)
{
    if (!rec || !out) return -1;
    memset(out, 0, sizeof *out);
    long threads = (long)rec->block[0] * rec->block[1] * rec->block[2];
    if (threads <= 0 || threads > 1024) return -1;
    size_t nlog = shuffle ? rec->nwarp_ops : rec->naccess;
    /* the block: the lowest the log holds (block 0 when it was recorded);
     * with shuffles, its lowest warp that made one */
    int have_block = 0;
    uint32_t blk = 0, first_thread = 0;
    for (size_t i = 0; i < nlog; i++) {
        uint32_t b, t;
        if (shuffle)
            b = rec->warp_ops[i].block, t = rec->warp_ops[i].thread;
        else if (rec->access[i].space == PL_RECORD_SHARED)
            b = rec->access[i].block, t = 0;
        else
            continue;
        if (!have_block || b < blk || (b == blk && t < first_thread))
            blk = b, first_thread = t, have_block = 1;
    }
    if (!have_block) return -1;

    /* the elements: their size, count and the last round each was accessed in */
    int elem = 0;
    int64_t n = 0;
    if (!shuffle)
        for (size_t i = 0; i < nlog; i++) {
            const pl_record_access *a = &rec->access[i];
            if (a->space != PL_RECORD_SHARED || a->block != blk || !a->size) continue;
            if (!elem && a->store) elem = a->size;
        }
    if (!shuffle && !elem) return -1; /* no store at all: no values, no tree */
    if (!shuffle)
        for (size_t i = 0; i < nlog; i++) {
            const pl_record_access *a = &rec->access[i];
            if (a->space != PL_RECORD_SHARED || a->block != blk || !a->size) continue;
            int64_t e = (int64_t)(a->offset / (uint64_t)elem);
            if (e + 1 > n) n = e + 1;
        }
    if (n > PL_PIC_MAX_INTS) return -1;
    add *adds = malloc((nlog ? nlog : 1) * sizeof *adds);
    tstate *ts = calloc((size_t)threads, sizeof *ts);
    uint32_t *last = calloc((size_t)(n ? n : 1), sizeof *last);
    if (!adds || !ts || !last) {
        free(adds);
        free(ts);
        free(last);
        return -1;
    }
    for (size_t i = 0; !shuffle && i < nlog; i++) {
        const pl_record_access *a = &rec->access[i];
        if (a->space != PL_RECORD_SHARED || a->block != blk || !a->size) continue;
        int64_t e = (int64_t)(a->offset / (uint64_t)elem);
        if (a->round > last[e]) last[e] = a->round;
    }
    size_t na = 0;
    int warp = -1;
    for (size_t i = 0; i < nlog; i++) {
        if (shuffle) {
            const pl_record_warp_op *o = &rec->warp_ops[i];
            if (o->block != blk || o->thread >= (uint32_t)threads) continue;
            if (warp < 0) warp = (int)(first_thread / WARP);
            if (o->thread / WARP != (uint32_t)warp) continue; /* another warp's */
            int64_t lane = o->thread % WARP;
            n = WARP;
            if (o->src_lane < 0 || o->src_lane >= WARP) continue;
            adds[na++] = (add){o->round, next_sub(&ts[o->thread], o->round), o->thread,
                               (int32_t)lane, o->src_lane};
            continue;
        }
        const pl_record_access *a = &rec->access[i];
        if (a->space != PL_RECORD_SHARED || a->block != blk || a->thread >= (uint32_t)threads ||
            !a->size)
            continue;
        int64_t e = (int64_t)(a->offset / (uint64_t)elem);
        tstate *s = &ts[a->thread];
        if (s->nload && s->load_round != a->round) flush(s, a->thread, last, adds, &na);
        if (!a->store) {
            int seen = 0;
            for (int k = 0; k < s->nload; k++) seen |= s->load[k] == e;
            if (!seen && s->nload < MAX_PENDING) s->load[s->nload++] = e;
            s->load_round = a->round;
            continue;
        }
        int64_t src = -1;
        for (int k = 0; k < s->nload && src < 0; k++)
            if (s->load[k] != e) src = s->load[k];
        s->nload = 0;
        if (src < 0) continue; /* the load of the values, or a constant: no add */
        adds[na++] = (add){a->round, next_sub(s, a->round), a->thread, (int32_t)e, (int32_t)src};
    }
    for (long t = 0; t < threads; t++)
        if (ts[t].nload) flush(&ts[t], (uint32_t)t, last, adds, &na);
    free(last);
    free(ts);
    if (!na) {
        free(adds);
        return -1;
    }
    qsort(adds, na, sizeof *adds, by_level);
    size_t levels = 0;
    for (size_t i = 0; i < na; i++)
        if (!i || adds[i].round != adds[i - 1].round || adds[i].sub != adds[i - 1].sub) levels++;
    /* what fits the picture's limit: whole levels */
    size_t ni = 0, keep = 0, kept_levels = 0;
    for (size_t i = 0; i < na;) {
        size_t j = i;
        while (j < na && adds[j].round == adds[i].round && adds[j].sub == adds[i].sub) j++;
        if (ni + 1 + 3 * (j - i) > PL_PIC_MAX_INTS || kept_levels == MAX_LEVELS) break;
        ni += 1 + 3 * (j - i);
        keep = j;
        kept_levels++;
        i = j;
    }
    char title[48];
    snprintf(title, sizeof title, "%s of block %u: %.24s", shuffle ? "shuffles" : "tree",
             (unsigned)blk, rec->kernel[0] ? rec->kernel : "a kernel");
    if (!kept_levels || pl_picture_init(out, PL_PIC_TREE, title, ni, 0, 0)) {
        free(adds);
        return -1;
    }
    out->p[0] = n;
    out->p[1] = (int64_t)kept_levels;
    out->p[2] = WARP;
    out->p[3] = shuffle ? 1 : 0;
    out->p[4] = threads;
    out->p[5] = rec->truncated || kept_levels < levels;
    out->p[6] = blk;
    out->p[7] = shuffle ? warp : 0;
    size_t w = 0;
    for (size_t i = 0; i < keep;) {
        size_t j = i;
        while (j < keep && adds[j].round == adds[i].round && adds[j].sub == adds[i].sub) j++;
        out->iv[w++] = (int32_t)(j - i);
        for (size_t k = i; k < j; k++) {
            out->iv[w++] = (int32_t)adds[k].thread;
            out->iv[w++] = adds[k].dst;
            out->iv[w++] = adds[k].src;
        }
        i = j;
    }
    free(adds);
    return 0;
}
