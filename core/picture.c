/* picture.c — the picture container: kinds, init/free/copy, and the check of
 * each kind's layout (see paralab/picture.h). The builders are in
 * core/picture_lab0N.c. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/picture.h"

static const char *const kind_names[PL_NUM_PICTURE_KINDS] = {
    "none", "blocks", "elements", "request", "banks", "tree", "tiles", "roofline", "bars"};

const char *pl_picture_kind_name(int kind)
{
    return kind > PL_PIC_NONE && kind < PL_NUM_PICTURE_KINDS ? kind_names[kind] : "?";
}

int pl_picture_kind_parse(const char *name)
{
    for (int k = PL_PIC_NONE + 1; name && k < PL_NUM_PICTURE_KINDS; k++)
        if (!strcmp(name, kind_names[k])) return k;
    return PL_PIC_NONE;
}

int pl_picture_init(pl_picture *p, int kind, const char *title, size_t ni, size_t nd, size_t ns)
{
    memset(p, 0, sizeof *p);
    if (kind < PL_PIC_NONE || kind >= PL_NUM_PICTURE_KINDS || ni > PL_PIC_MAX_INTS ||
        nd > PL_PIC_MAX_REALS || ns > PL_PIC_MAX_LABELS)
        return -1;
    p->iv = ni ? calloc(ni, sizeof *p->iv) : NULL;
    p->dv = nd ? calloc(nd, sizeof *p->dv) : NULL;
    p->sv = ns ? calloc(ns, sizeof *p->sv) : NULL;
    if ((ni && !p->iv) || (nd && !p->dv) || (ns && !p->sv)) {
        pl_picture_free(p);
        return -1;
    }
    p->kind = kind;
    p->ni = ni;
    p->nd = nd;
    p->ns = ns;
    snprintf(p->title, sizeof p->title, "%s", title ? title : "");
    return 0;
}

void pl_picture_free(pl_picture *p)
{
    if (!p) return;
    free(p->iv);
    free(p->dv);
    free(p->sv);
    memset(p, 0, sizeof *p);
}

int pl_picture_copy(pl_picture *dst, const pl_picture *src)
{
    if (pl_picture_init(dst, src->kind, NULL, src->ni, src->nd, src->ns)) return -1;
    memcpy(dst->title, src->title, sizeof dst->title);
    dst->title[sizeof dst->title - 1] = '\0';
    memcpy(dst->p, src->p, sizeof dst->p);
    if (src->ni) memcpy(dst->iv, src->iv, src->ni * sizeof *src->iv);
    if (src->nd) memcpy(dst->dv, src->dv, src->nd * sizeof *src->dv);
    if (src->ns) memcpy(dst->sv, src->sv, src->ns * sizeof *src->sv);
    return 0;
}

/* ---- the check ------------------------------------------------------------------------- */

/* The message: "picture \"blocks\" (blocks on SMs): " then what is wrong. -1. */
__attribute__((format(printf, 4, 5))) static int bad(const pl_picture *p, char *err, size_t cap,
                                                     const char *fmt, ...)
{
    if (!err || !cap) return -1;
    int n = snprintf(err, cap, "picture \"%s\"", pl_picture_kind_name(p->kind));
    if (n >= 0 && (size_t)n < cap && p->title[0] && memchr(p->title, 0, sizeof p->title))
        n += snprintf(err + n, cap - (size_t)n, " (%s)", p->title);
    if (n >= 0 && (size_t)n < cap) n += snprintf(err + n, cap - (size_t)n, ": ");
    if (n >= 0 && (size_t)n < cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, cap - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Parameter k (named `what`) in [lo, hi], else the message. 0 or -1. */
static int param(const pl_picture *p, int k, const char *what, long long lo, long long hi,
                 char *err, size_t cap)
{
    if (p->p[k] >= lo && p->p[k] <= hi) return 0;
    return bad(p, err, cap, "p[%d] (%s) = %lld: allowed are %lld..%lld", k, what,
               (long long)p->p[k], lo, hi);
}

/* The count of an array (`name`: "ni", "nd", "ns") equal to want. */
static int count(const pl_picture *p, const char *name, size_t have, long long want,
                 const char *why, char *err, size_t cap)
{
    if ((long long)have == want) return 0;
    return bad(p, err, cap, "%s = %zu: it must be %lld (%s)", name, have, want, why);
}

/* iv[from .. from + n - 1] each in [lo, hi] (`what` names them). */
static int ints(const pl_picture *p, size_t from, size_t n, size_t stride, const char *what,
                long long lo, long long hi, char *err, size_t cap)
{
    for (size_t i = from; i < from + n * stride; i += stride)
        if (p->iv[i] < lo || p->iv[i] > hi)
            return bad(p, err, cap, "iv[%zu] (%s) = %d: allowed are %lld..%lld", i, what,
                       (int)p->iv[i], lo, hi);
    return 0;
}

static long long min_ll(long long a, long long b) { return a < b ? a : b; }

static int check_blocks(const pl_picture *p, char *err, size_t cap)
{
    if (param(p, 0, "blocks G", 1, 2147483647LL, err, cap) ||
        param(p, 1, "SMs", 1, 65536, err, cap) ||
        param(p, 2, "blocks per SM", 1, 65536, err, cap) ||
        param(p, 3, "waves", 1, 2147483647LL, err, cap) ||
        param(p, 4, "threads per block", 1, 1024, err, cap) ||
        param(p, 5, "blocks drawn", 0, min_ll(p->p[0], 65536), err, cap) ||
        count(p, "ni", p->ni, 2 * p->p[5], "an SM and a wave per block drawn, 2 x p[5]", err,
              cap) ||
        ints(p, 0, (size_t)p->p[5], 2, "a block's SM", 0, p->p[1] - 1, err, cap) ||
        ints(p, 1, (size_t)p->p[5], 2, "a block's wave", 0, p->p[3] - 1, err, cap))
        return -1;
    return 0;
}

static int check_elements(const pl_picture *p, char *err, size_t cap)
{
    if (param(p, 0, "elements n", 1, 1LL << 40, err, cap) ||
        param(p, 1, "threads per block", 1, 1024, err, cap) ||
        param(p, 2, "blocks", 1, 2147483647LL, err, cap))
        return -1;
    long long threads = p->p[1] * p->p[2];
    if (param(p, 3, "elements drawn", 0, min_ll(p->p[0], PL_PIC_MAX_INTS), err, cap) ||
        param(p, 4, "tail threads", 0, threads, err, cap) ||
        param(p, 5, "stores out of bounds", 0, 1LL << 62, err, cap) ||
        param(p, 6, "the first out-of-bounds thread", p->p[5] ? 0 : -1, p->p[5] ? threads - 1 : -1,
              err, cap) ||
        param(p, 7, "elements written twice or more", 0, p->p[0], err, cap))
        return -1;
    /* a thread per element drawn, p[3]; when every element is (p[3] = n),
     * up to 65536 slots past the end too (the stores out of bounds) */
    int past = p->p[3] == p->p[0] && p->ni > (size_t)p->p[3] && p->ni <= (size_t)p->p[3] + 65536;
    if ((!past &&
         count(p, "ni", p->ni, p->p[3],
               "a thread per element drawn, p[3]; with p[3] = n, up to 65536 more", err, cap)) ||
        ints(p, 0, p->ni, 1, "the thread that wrote an element", -1, threads - 1, err, cap))
        return -1;
    return 0;
}

static int check_request(const pl_picture *p, char *err, size_t cap)
{
    if (param(p, 0, "lanes", 1, 32, err, cap) || param(p, 1, "sector bytes", 1, 4096, err, cap) ||
        param(p, 5, "bytes per lane", 1, 64, err, cap))
        return -1;
    long long most = p->p[0] * ((p->p[5] + p->p[1] - 1) / p->p[1] + 1);
    if (param(p, 2, "distinct sectors", 0, most, err, cap) ||
        param(p, 3, "a store (1) or a load (0)", 0, 1, err, cap) ||
        param(p, 4, "the fewest sectors", 0, p->p[2], err, cap) ||
        count(p, "ni", p->ni, p->p[0], "a byte offset per lane, p[0]", err, cap) ||
        ints(p, 0, p->ni, 1, "a lane's byte offset", -1, 2147483647LL, err, cap) ||
        count(p, "ns", p->ns, 1, "the access's name", err, cap))
        return -1;
    return 0;
}

static int check_banks(const pl_picture *p, char *err, size_t cap)
{
    if (param(p, 0, "lanes", 1, 32, err, cap) || param(p, 1, "banks", 1, 64, err, cap) ||
        param(p, 2, "wavefronts", 0, p->p[0], err, cap) ||
        param(p, 3, "row pitch in words", 1, 65536, err, cap) ||
        count(p, "ni", p->ni, p->p[0], "a word index per lane, p[0]", err, cap) ||
        ints(p, 0, p->ni, 1, "a lane's word index", -1, 2147483647LL, err, cap) ||
        count(p, "ns", p->ns, 1, "the access's name", err, cap))
        return -1;
    return 0;
}

static int check_tree(const pl_picture *p, char *err, size_t cap)
{
    if (param(p, 0, "values n", 1, PL_PIC_MAX_INTS, err, cap) ||
        param(p, 1, "levels", 1, 64, err, cap) || param(p, 2, "warp size", 1, 64, err, cap) ||
        param(p, 3, "warp shuffles (1) or shared memory (0)", 0, 1, err, cap) ||
        param(p, 4, "threads per block", 1, 1024, err, cap))
        return -1;
    long long slots = p->p[3] ? p->p[2] : p->p[0]; /* lanes, or the shared array's elements */
    size_t at = 0;
    for (long long l = 0; l < p->p[1]; l++) {
        if (at >= p->ni)
            return bad(p, err, cap,
                       "ni = %zu ends at level %lld of %lld: each level is k, then k triples "
                       "(thread, dst, src)",
                       p->ni, l, (long long)p->p[1]);
        long long k = p->iv[at];
        if (k < 0 || (size_t)k > (p->ni - at - 1) / 3)
            return bad(p, err, cap,
                       "iv[%zu] (level %lld's count k) = %lld: allowed are 0..%zu (the triples "
                       "left in iv)",
                       at, l, k, (p->ni - at - 1) / 3);
        if (ints(p, at + 1, (size_t)k, 3, "a thread", 0, p->p[4] - 1, err, cap) ||
            ints(p, at + 2, (size_t)k, 3, p->p[3] ? "a dst lane" : "a dst element", 0, slots - 1,
                 err, cap) ||
            ints(p, at + 3, (size_t)k, 3, p->p[3] ? "a src lane" : "a src element", 0, slots - 1,
                 err, cap))
            return -1;
        at += 1 + 3 * (size_t)k;
    }
    if (at != p->ni)
        return bad(p, err, cap, "ni = %zu: the %lld levels use %zu (nothing may follow them)",
                   p->ni, (long long)p->p[1], at);
    return 0;
}

static int check_tiles(const pl_picture *p, char *err, size_t cap)
{
    if (param(p, 0, "M", 1, 1 << 20, err, cap) || param(p, 1, "N", 1, 1 << 20, err, cap) ||
        param(p, 2, "K", 1, 1 << 20, err, cap) || param(p, 3, "tile T", 1, 1024, err, cap) ||
        param(p, 4, "steps S", 0, PL_PIC_MAX_INTS / 8, err, cap))
        return -1;
    long long T = p->p[3], M = p->p[0], N = p->p[1], K = p->p[2];
    if (param(p, 5, "the block's tile row", 0, (M + T - 1) / T - 1, err, cap) ||
        param(p, 6, "the block's tile column", 0, (N + T - 1) / T - 1, err, cap) ||
        count(p, "ni", p->ni, 8 * p->p[4], "8 per step: the A tile, then the B tile", err, cap))
        return -1;
    for (long long s = 0; s < p->p[4]; s++) {
        const int32_t *t = &p->iv[8 * s];
        /* A: rows of M, columns of K; B: rows of K, columns of N */
        long long lim[2][2] = {{M, K}, {K, N}};
        for (int m = 0; m < 2; m++) {
            size_t at = (size_t)(8 * s + 4 * m);
            const char *name = m ? "B" : "A";
            for (int d = 0; d < 2; d++) {
                long long o = t[4 * m + d], len = t[4 * m + 2 + d];
                if (o < 0 || o >= lim[m][d])
                    return bad(p, err, cap,
                               "iv[%zu] (step %lld's %s tile %s) = %lld: allowed are 0..%lld",
                               at + (size_t)d, s, name, d ? "col0" : "row0", o, lim[m][d] - 1);
                if (len < 0 || len > T || o + len > lim[m][d])
                    return bad(p, err, cap,
                               "iv[%zu] (step %lld's %s tile %s) = %lld: allowed are 0..%lld "
                               "(at most T, inside the matrix from %lld)",
                               at + 2 + (size_t)d, s, name, d ? "cols" : "rows", len,
                               min_ll(T, lim[m][d] - o), o);
            }
        }
    }
    return 0;
}

static int positive(double x) { return isfinite(x) && x > 0; }

static int check_roofline(const pl_picture *p, char *err, size_t cap)
{
    if (param(p, 0, "points P", 0, PL_PIC_MAX_LABELS - 1, err, cap) ||
        param(p, 1, "the highlighted point", -1, p->p[0] - 1, err, cap) ||
        count(p, "nd", p->nd, 2 + 2 * p->p[0], "the two peaks, then 2 per point", err, cap) ||
        count(p, "ns", p->ns, 1 + p->p[0], "whose roof, then a name per point", err, cap))
        return -1;
    if (p->ni != 0 && p->ni != (size_t)p->p[0])
        return bad(p, err, cap, "ni = %zu: allowed is 0 or P = %lld (a number per point)", p->ni,
                   (long long)p->p[0]);
    for (size_t i = 0; i < p->ni; i++)
        if (p->iv[i] < 1 || p->iv[i] > PL_PIC_MAX_LABELS)
            return bad(p, err, cap, "iv[%zu] (a point's number) = %d: allowed is 1..%d", i,
                       (int)p->iv[i], PL_PIC_MAX_LABELS);
    for (size_t i = 0; i < p->nd; i++)
        if (!positive(p->dv[i]))
            return bad(p, err, cap, "dv[%zu] (%s) = %g: allowed is a finite number > 0", i,
                       i == 0   ? "peak FLOP/s"
                       : i == 1 ? "peak memory bytes/s"
                       : i % 2  ? "a point's FLOP/s"
                                : "a point's FLOP/byte",
                       p->dv[i]);
    return 0;
}

static int check_bars(const pl_picture *p, char *err, size_t cap)
{
    if (param(p, 0, "bars B", 1, PL_PIC_MAX_LABELS - 2, err, cap) ||
        param(p, 1, "the highlighted bar", -1, p->p[0] - 1, err, cap) ||
        count(p, "nd", p->nd, p->p[0] + 1, "a value per bar, then the reference line's", err,
              cap) ||
        count(p, "ns", p->ns, p->p[0] + 2, "the unit, a label per bar, the reference's label", err,
              cap))
        return -1;
    for (size_t i = 0; i < p->nd; i++)
        if (!isnan(p->dv[i]) && !(isfinite(p->dv[i]) && p->dv[i] >= 0))
            return bad(p, err, cap,
                       "dv[%zu] (%s) = %g: allowed is a finite number >= 0, or NaN (none)", i,
                       i + 1 == p->nd ? "the reference line" : "a bar's value", p->dv[i]);
    return 0;
}

int pl_picture_check(const pl_picture *p, char *err, size_t cap)
{
    if (err && cap) err[0] = '\0';
    if (!p) {
        if (err && cap) snprintf(err, cap, "no picture");
        return -1;
    }
    if (p->kind <= PL_PIC_NONE || p->kind >= PL_NUM_PICTURE_KINDS) {
        if (err && cap)
            snprintf(err, cap,
                     "picture kind %d: allowed are %d..%d (blocks, elements, request, banks, "
                     "tree, tiles, roofline, bars)",
                     p->kind, PL_PIC_NONE + 1, PL_NUM_PICTURE_KINDS - 1);
        return -1;
    }
    if (!memchr(p->title, 0, sizeof p->title))
        return bad(p, err, cap, "the title is not a string of at most %zu bytes",
                   sizeof p->title - 1);
    if (p->ni > PL_PIC_MAX_INTS || p->nd > PL_PIC_MAX_REALS || p->ns > PL_PIC_MAX_LABELS)
        return bad(p, err, cap, "ni %zu, nd %zu, ns %zu: allowed are at most %d, %d and %d", p->ni,
                   p->nd, p->ns, PL_PIC_MAX_INTS, PL_PIC_MAX_REALS, PL_PIC_MAX_LABELS);
    if ((p->ni && !p->iv) || (p->nd && !p->dv) || (p->ns && !p->sv))
        return bad(p, err, cap, "an array is NULL with a count above 0");
    for (size_t i = 0; i < p->ns; i++)
        if (!memchr(p->sv[i], 0, sizeof p->sv[i]))
            return bad(p, err, cap, "sv[%zu] is not a string of at most %zu bytes", i,
                       sizeof p->sv[i] - 1);
    switch (p->kind) {
    case PL_PIC_BLOCKS:
        return check_blocks(p, err, cap);
    case PL_PIC_ELEMENTS:
        return check_elements(p, err, cap);
    case PL_PIC_REQUEST:
        return check_request(p, err, cap);
    case PL_PIC_BANKS:
        return check_banks(p, err, cap);
    case PL_PIC_TREE:
        return check_tree(p, err, cap);
    case PL_PIC_TILES:
        return check_tiles(p, err, cap);
    case PL_PIC_ROOFLINE:
        return check_roofline(p, err, cap);
    default:
        return check_bars(p, err, cap);
    }
}
