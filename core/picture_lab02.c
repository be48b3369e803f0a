/*
 * picture_lab02.c — the builders of Lab 02's pictures from a kernel's
 * record (paralab/picture.h): one warp's request to global memory (its
 * lanes' byte offsets and the 32-byte sectors they touch) and one warp's
 * request to shared memory (its lanes' words and the banks' wavefronts).
 *
 * A request is what memstats.c (simtMemStats, the lab's counters) costs:
 * the accesses the 32 lanes of one warp make at one call site, each
 * lane's k-th time there (here k = 0, the first request). The costs are
 * memstats.c's rules: a global request moves every distinct 32-byte
 * sector any of its bytes lies in; a shared request takes as many
 * wavefronts as the most distinct 4-byte words one bank (word % 32) must
 * serve (lanes reading the same word share it: a broadcast is free).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/picture.h"

enum { WARP = 32, SECTOR = 32, WORD = 4, BANKS = 32 };

/* The first access of each lane of warp 0 of block 0 at the site-th call
 * site (in the order first seen) of accesses to `space` with this store
 * flag; lane[l] NULL where lane l made none. The lanes of the warp
 * (threads per block, at most 32) in *lanes. 0, or -1 when there is no
 * such site. */
static int first_request(const pl_kernel_record *rec, int space, int store, int site,
                         const pl_record_access *lane[WARP], int *lanes)
{
    if (!rec || site < 0) return -1;
    memset(lane, 0, sizeof(lane[0]) * WARP);
    long threads = (long)rec->block[0] * rec->block[1] * rec->block[2];
    *lanes = threads < WARP ? (int)threads : WARP;
    if (*lanes < 1) return -1;
    /* the sites in the order first seen (a kernel has few) */
    uint32_t seen[64];
    int nseen = 0, found = 0;
    uint32_t want = 0;
    for (size_t i = 0; i < rec->naccess; i++) {
        const pl_record_access *a = &rec->access[i];
        if (a->block != 0 || a->space != space || !a->store != !store) continue;
        if (!found) {
            int k = 0;
            while (k < nseen && seen[k] != a->site) k++;
            if (k == nseen) {
                if (nseen == site) {
                    want = a->site;
                    found = 1;
                } else if (nseen < (int)(sizeof seen / sizeof seen[0]))
                    seen[nseen++] = a->site;
                else
                    return -1;
            }
            if (!found) continue;
        }
        if (a->site != want || a->thread >= (uint32_t)*lanes) continue;
        if (!lane[a->thread]) lane[a->thread] = a; /* its first time there */
    }
    return found ? 0 : -1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The distinct values of u[0..n-1] (sorted in place). */
static int distinct(uint64_t *u, int n)
{
    qsort(u, (size_t)n, sizeof *u, cmp_u64);
    int d = 0;
    for (int i = 0; i < n; i++) d += !i || u[i] != u[i - 1];
    return d;
}

int pl_picture_request(const pl_kernel_record *rec, int store, int site, const char *name,
                       pl_picture *out)
{
    const pl_record_access *lane[WARP];
    int lanes;
    if (!out || first_request(rec, 1, store, site, lane, &lanes)) return -1;
    /* the sectors (memstats.c: each access's bytes [o, o + size)) and the
     * bytes touched */
    uint64_t sec[WARP * 2], lo = UINT64_MAX;
    int ns = 0, size = 0;
    struct {
        uint64_t a, b;
    } span[WARP];
    int nspan = 0;
    for (int l = 0; l < lanes; l++) {
        const pl_record_access *a = lane[l];
        if (!a) continue;
        uint64_t o = a->offset, e = a->offset + (a->size ? a->size : 1);
        for (uint64_t s = o / SECTOR; s <= (e - 1) / SECTOR && ns < WARP * 2; s++) sec[ns++] = s;
        if (o < lo) lo = o;
        if (a->size > size) size = a->size;
        span[nspan].a = o;
        span[nspan++].b = e;
    }
    if (!ns) return -1;
    int sectors = distinct(sec, ns);
    /* the distinct bytes: the lanes' intervals merged */
    for (int i = 1; i < nspan; i++) /* insertion sort by start: 32 at most */
        for (int j = i; j > 0 && span[j].a < span[j - 1].a; j--) {
            uint64_t ta = span[j].a, tb = span[j].b;
            span[j] = span[j - 1];
            span[j - 1].a = ta;
            span[j - 1].b = tb;
        }
    uint64_t bytes = 0, end = 0;
    for (int i = 0; i < nspan; i++) {
        uint64_t a = span[i].a > end ? span[i].a : end;
        if (span[i].b > a) bytes += span[i].b - a;
        if (span[i].b > end) end = span[i].b;
    }
    char title[48];
    snprintf(title, sizeof title, "one warp's %s: %s", store ? "stores" : "loads",
             name ? name : "");
    if (pl_picture_init(out, PL_PIC_REQUEST, title, (size_t)lanes, 0, 1)) return -1;
    uint64_t base = lo / SECTOR * SECTOR;
    out->p[0] = lanes;
    out->p[1] = SECTOR;
    out->p[2] = sectors;
    out->p[3] = store != 0;
    out->p[4] = (int64_t)((bytes + SECTOR - 1) / SECTOR);
    out->p[5] = size;
    for (int l = 0; l < lanes; l++) {
        uint64_t off = lane[l] ? lane[l]->offset - base : 0;
        out->iv[l] = !lane[l] ? -1 : off > INT32_MAX ? INT32_MAX : (int32_t)off;
    }
    snprintf(out->sv[0], sizeof out->sv[0], "%s", name ? name : "");
    return 0;
}

int pl_picture_banks(const pl_kernel_record *rec, int store, int site, int pitch, const char *name,
                     pl_picture *out)
{
    const pl_record_access *lane[WARP];
    int lanes;
    if (!out || pitch < 1 || first_request(rec, 0, store, site, lane, &lanes)) return -1;
    /* memstats.c's wavefronts: the distinct words of every access, then per
     * bank the count of them; the most of any bank */
    uint64_t w[WARP * 4];
    int nw = 0;
    for (int l = 0; l < lanes; l++) {
        const pl_record_access *a = lane[l];
        if (!a) continue;
        uint64_t o = a->offset, e = a->offset + (a->size ? a->size : 1);
        for (uint64_t k = o / WORD; k <= (e - 1) / WORD && nw < WARP * 4; k++) w[nw++] = k;
    }
    if (!nw) return -1;
    qsort(w, (size_t)nw, sizeof *w, cmp_u64);
    int bank[BANKS] = {0}, most = 0;
    for (int i = 0; i < nw; i++) {
        if (i && w[i] == w[i - 1]) continue;
        int k = ++bank[w[i] % BANKS];
        if (k > most) most = k;
    }
    char title[48];
    snprintf(title, sizeof title, "shared-memory banks: %s", name ? name : "");
    if (pl_picture_init(out, PL_PIC_BANKS, title, (size_t)lanes, 0, 1)) return -1;
    out->p[0] = lanes;
    out->p[1] = BANKS;
    out->p[2] = most;
    out->p[3] = pitch;
    for (int l = 0; l < lanes; l++) {
        uint64_t k = lane[l] ? lane[l]->offset / WORD : 0;
        out->iv[l] = !lane[l] ? -1 : k > INT32_MAX ? INT32_MAX : (int32_t)k;
    }
    snprintf(out->sv[0], sizeof out->sv[0], "%s", name ? name : "");
    return 0;
}
