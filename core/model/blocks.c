/* blocks.c — see paralab/blocks.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paralab/blocks.h"
#include "paralab/device.h"
#include "paralab/nn.h"

pl_blocks_config pl_blocks_config_make(int hidden, int layers)
{
    pl_blocks_config c = {
        .inputs = 64, .hidden = hidden, .ffn = 4 * hidden, .layers = layers, .classes = 10};
    return c;
}

pl_blocks_config pl_blocks_default(void) { return pl_blocks_config_make(64, 2); }

int pl_blocks_degrees(const pl_blocks_config *c, int max_t, char *buf, size_t cap)
{
    int count = 0, k = 0;
    for (int d = 1; d <= max_t && d <= 64; d++)
        if (c->hidden % d == 0 && c->ffn % d == 0) count++;
    size_t len = 0;
    if (cap) buf[0] = '\0';
    for (int d = 1; d <= max_t && d <= 64 && cap; d++) {
        if (c->hidden % d || c->ffn % d) continue;
        k++;
        int w = snprintf(buf + len, cap - len, "%s%d", k == 1 ? "" : k == count ? " or " : ", ", d);
        if (w < 0 || (size_t)w >= cap - len) break;
        len += (size_t)w;
    }
    return count;
}

int pl_blocks_check(const pl_blocks_config *c, int t, const char *what, int max_t, char *err,
                    size_t cap)
{
    if (!what) what = "the TP degree";
    if (max_t < 1 || max_t > 64) max_t = 64;
    if (c->hidden < 1 || c->hidden > 4096) {
        if (cap) snprintf(err, cap, "--hidden %d: the width must be 1..4096", c->hidden);
        return -1;
    }
    if (c->layers < 1 || c->layers > PL_BLOCKS_MAX) {
        if (cap)
            snprintf(err, cap, "--layers %d: the blocks must be 1..%d", c->layers, PL_BLOCKS_MAX);
        return -1;
    }
    if (c->inputs < 1 || c->inputs > 4096 || c->classes < 1 || c->classes > 4096 || c->ffn < 1 ||
        c->ffn > 4 * 4096) {
        if (cap)
            snprintf(err, cap,
                     "a block model of %d inputs, %d classes and f = %d: each must be "
                     "1..4096 (f up to 16384)",
                     c->inputs, c->classes, c->ffn);
        return -1;
    }
    if (t >= 1 && t <= 64 && c->hidden % t == 0 && c->ffn % t == 0) return 0;
    if (cap) {
        char list[256];
        pl_blocks_degrees(c, max_t, list, sizeof list);
        const char *why = t < 1 || t > 64 ? "it must be 1..64"
                          : c->hidden % t ? "the hidden width does not divide by it"
                                          : "the feed-forward width does not divide by it";
        snprintf(err, cap,
                 "%s %d: %s (h = %d, f = 4h = %d); tensor parallelism can split this model "
                 "over %s ranks%s",
                 what, t, why, c->hidden, c->ffn, list, max_t < 64 ? " (of the devices here)" : "");
    }
    return -1;
}

pl_blocks_part pl_blocks_whole(const pl_blocks_config *c)
{
    pl_blocks_part p = {
        .first = 0, .last = c->layers, .input = 1, .head = 1, .tp = 1, .tp_rank = 0};
    return p;
}

int pl_blocks_layout_make(pl_blocks_layout *l, const pl_blocks_config *c, pl_blocks_part part,
                          char *err, size_t cap)
{
    memset(l, 0, sizeof *l);
    if (pl_blocks_check(c, part.tp, "the TP degree", 64, err, cap)) return -1;
    if (part.tp_rank < 0 || part.tp_rank >= part.tp) {
        if (cap)
            snprintf(err, cap, "TP rank %d of %d: it must be 0..%d", part.tp_rank, part.tp,
                     part.tp - 1);
        return -1;
    }
    if (part.first < 0 || part.last > c->layers || part.first > part.last ||
        (part.first == part.last && !part.input && !part.head)) {
        if (cap)
            snprintf(err, cap,
                     "blocks [%d, %d) of a model of %d: a part holds a range inside "
                     "0..%d",
                     part.first, part.last, c->layers, c->layers);
        return -1;
    }
    l->cfg = *c;
    l->part = part;
    int t = part.tp, h = c->hidden;
    l->ffn_local = c->ffn / t;
    l->classes_padded = (c->classes + t - 1) / t * t;
    l->classes_local = l->classes_padded / t;
    l->class0 = part.tp_rank * l->classes_local;
    int valid = c->classes - l->class0;
    l->classes_valid = valid < 0 ? 0 : valid > l->classes_local ? l->classes_local : valid;
    long o = 0;
    l->in_w = l->in_b = l->in_end = -1;
    l->head_begin = l->lnf_g = l->lnf_b = l->head_shard = l->wc = l->bc = l->head_end = -1;
    if (part.input) {
        l->in_w = o;
        o += (long)c->inputs * h;
        l->in_b = o;
        o += h;
        l->in_end = o;
    }
    for (int j = part.first; j < part.last; j++) {
        pl_block_offsets *b = &l->block[j];
        b->begin = b->ln_g = o;
        b->ln_b = o += h;
        b->b2 = o += h;
        b->shard = b->w1 = o += h;
        b->b1 = o += (long)h * l->ffn_local;
        b->w2 = o += l->ffn_local;
        b->end = o += (long)l->ffn_local * h;
    }
    if (part.head) {
        l->head_begin = l->lnf_g = o;
        l->lnf_b = o += h;
        l->head_shard = l->wc = o += h;
        l->bc = o += (long)h * l->classes_local;
        l->head_end = o += l->classes_local;
    }
    l->nparams = o;
    return 0;
}

long pl_blocks_count(const pl_blocks_config *c)
{
    long h = c->hidden, f = c->ffn;
    return (long)c->inputs * h + h + c->layers * (3 * h + h * f + f + f * h) + 2 * h +
           h * c->classes + c->classes;
}

/* splitmix64: every value depends on the seed and its place in the order only. */
static double uniform(unsigned long long *s)
{
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0; /* [0, 1) */
}

/* n values uniform in ±1/sqrt(fan_in) (nn.Linear's W and b). */
static void linear_init(unsigned long long *s, float *p, long n, int fan_in)
{
    double bound = 1.0 / sqrt((double)fan_in);
    for (long i = 0; i < n; i++) p[i] = (float)((2.0 * uniform(s) - 1.0) * bound);
}

static void fill(float *p, long n, float v)
{
    for (long i = 0; i < n; i++) p[i] = v;
}

void pl_blocks_init_whole(const pl_blocks_config *c, unsigned long long seed, float *w)
{
    pl_blocks_layout l;
    pl_blocks_layout_make(&l, c, pl_blocks_whole(c), NULL, 0);
    int h = c->hidden, f = c->ffn;
    unsigned long long s = seed;
    linear_init(&s, w + l.in_w, (long)c->inputs * h, c->inputs);
    linear_init(&s, w + l.in_b, h, c->inputs);
    for (int j = 0; j < c->layers; j++) {
        const pl_block_offsets *b = &l.block[j];
        fill(w + b->ln_g, h, 1.0f);
        fill(w + b->ln_b, h, 0.0f);
        linear_init(&s, w + b->w1, (long)h * f, h);
        linear_init(&s, w + b->b1, f, h);
        linear_init(&s, w + b->w2, (long)f * h, f);
        linear_init(&s, w + b->b2, h, f);
    }
    fill(w + l.lnf_g, h, 1.0f);
    fill(w + l.lnf_b, h, 0.0f);
    linear_init(&s, w + l.wc, (long)h * c->classes, h);
    linear_init(&s, w + l.bc, c->classes, h);
}

/* Copies between a part and the whole model, direction by `to_whole`. */
static void move(float *whole, float *part, long n, int to_whole)
{
    if (to_whole)
        memcpy(whole, part, (size_t)n * sizeof *whole);
    else
        memcpy(part, whole, (size_t)n * sizeof *whole);
}

static void transfer(const pl_blocks_layout *l, float *whole, float *part, int to_whole)
{
    pl_blocks_layout W;
    pl_blocks_layout_make(&W, &l->cfg, pl_blocks_whole(&l->cfg), NULL, 0);
    int h = l->cfg.hidden, fl = l->ffn_local, r = l->part.tp_rank;
    if (l->part.input) move(whole + W.in_w, part + l->in_w, l->in_end - l->in_w, to_whole);
    for (int j = l->part.first; j < l->part.last; j++) {
        const pl_block_offsets *p = &l->block[j], *w = &W.block[j];
        move(whole + w->ln_g, part + p->ln_g, 3L * h, to_whole); /* ln_g, ln_b, b2 */
        for (int i = 0; i < h; i++) /* W1's columns [r fl, (r+1) fl), row by row */
            move(whole + w->w1 + (long)i * l->cfg.ffn + (long)r * fl, part + p->w1 + (long)i * fl,
                 fl, to_whole);
        move(whole + w->b1 + (long)r * fl, part + p->b1, fl, to_whole);
        move(whole + w->w2 + (long)r * fl * h, part + p->w2, (long)fl * h, to_whole); /* rows */
    }
    if (l->part.head) {
        int C = l->cfg.classes, cl = l->classes_local, v = l->classes_valid, c0 = l->class0;
        move(whole + W.lnf_g, part + l->lnf_g, 2L * h, to_whole);
        for (int i = 0; i < h; i++) {
            if (v) move(whole + W.wc + (long)i * C + c0, part + l->wc + (long)i * cl, v, to_whole);
            if (!to_whole) fill(part + l->wc + (long)i * cl + v, cl - v, 0.0f); /* padding */
        }
        if (v) move(whole + W.bc + c0, part + l->bc, v, to_whole);
        if (!to_whole) fill(part + l->bc + v, cl - v, 0.0f);
    }
}

void pl_blocks_slice(const pl_blocks_layout *l, const float *whole, float *part)
{
    transfer(l, (float *)whole, part, 0);
}

void pl_blocks_unslice(const pl_blocks_layout *l, const float *part, float *whole)
{
    transfer(l, whole, (float *)part, 1);
}

unsigned pl_blocks_hash(const float *x, long n)
{
    unsigned h = 2166136261u;
    const unsigned char *b = (const unsigned char *)x;
    for (long i = 0; i < n * (long)sizeof(float); i++) h = (h ^ b[i]) * 16777619u;
    return h;
}

/* ---- device state ----------------------------------------------------------------------- */

static cudaError_t alloc(float **p, long n)
{
    *p = NULL;
    if (n <= 0) return cudaSuccess;
    cudaError_t e = cudaMalloc((void **)p, (size_t)n * sizeof(float));
    if (!e) e = cudaMemset(*p, 0, (size_t)n * sizeof(float));
    return e;
}

/* What acts_layout does with each tensor of an activation set. */
enum { LAY_COUNT, LAY_ALLOC };

/* One tensor of n elements of `size` bytes of set a: counts its bytes into
 * *off, or allocates it (zeroed when zero) and adds it to a's allocations.
 * Each tensor is its own cudaMalloc, so the simulated GPU checks every access
 * against that tensor's bounds (a kernel writing past x[j] is reported, not
 * silently corrupting ln[j]). */
static void carve(int mode, pl_blocks_acts *a, void **p, long n, size_t size, size_t *off,
                  cudaError_t *e, int zero)
{
    size_t bytes = (size_t)n * size;
    *off += bytes;
    if (mode != LAY_ALLOC) return;
    *p = NULL;
    if (*e || !bytes) return;
    if (a->nallocs == PL_BLOCKS_ACTS_MAX) { /* cannot happen: PL_BLOCKS_ACTS_MAX counts them */
        *e = cudaErrorInvalidValue;
        return;
    }
    *e = cudaMalloc(p, bytes);
    if (*e) return;
    a->allocs[a->nallocs++] = *p;
    if (zero) *e = cudaMemset(*p, 0, bytes);
}

/* Counts or allocates an activation set's tensors (pl_blocks_acts_bytes'
 * order) and returns its bytes; the first allocation error in *e. */
static size_t acts_layout(int mode, pl_blocks_acts *a, const pl_blocks_layout *lay, int B, int R,
                          int split, int zero, cudaError_t *e)
{
    int h = lay->cfg.hidden, fl = lay->ffn_local, cl = lay->classes_local;
    int sp = R != B; /* sequence parallelism: f's output is its own */
    int first = lay->part.first, last = lay->part.last;
    size_t off = 0, F = sizeof(float);
    pl_blocks_acts dummy, *d = a ? a : &dummy;
    if (!a) memset(&dummy, 0, sizeof dummy);
#define CARVE(lv, n, size)                                                                         \
    do {                                                                                           \
        void *p_ = (void *)(lv);                                                                   \
        carve(mode, d, &p_, (n), (size), &off, e, zero);                                           \
        (lv) = p_;                                                                                 \
    } while (0)
    CARVE(d->input, (long)R * (lay->part.input ? lay->cfg.inputs : h), F);
    for (int j = first; j <= last; j++) {
        CARVE(d->x[j], (long)R * h, F);
        if (j == last && !lay->part.head) break; /* the part's output */
        CARVE(d->ln[j], (long)R * h, F);
        CARVE(d->mean[j], R, F);
        CARVE(d->rstd[j], R, F);
        if (sp)
            CARVE(d->xfull[j], (long)B * h, F);
        else
            d->xfull[j] = d->ln[j]; /* f forward: identity */
        if (j == last) break;
        CARVE(d->z1[j], (long)B * fl, F);
        CARVE(d->a[j], (long)B * fl, F);
        if (split) {
            CARVE(d->dy[j], (long)B * h, F);
            d->dz1[j] = d->z1[j];
        }
    }
    if (lay->part.head) {
        CARVE(d->logits, (long)B * cl, F);
        CARVE(d->rowmax, B, F);
        CARVE(d->sumexp, B, F);
        CARVE(d->target, B, F);
        CARVE(d->losses, B, F);
        CARVE(d->pred, B, sizeof(int));
        if (split) CARVE(d->dlogits, (long)B * cl, F);
    }
    if (split && lay->part.input) CARVE(d->dinput, (long)R * h, F);
#undef CARVE
    return off;
}

size_t pl_blocks_acts_bytes(const pl_blocks_layout *lay, int max_rows, int local_rows, int split)
{
    if (max_rows < 1 || local_rows < 1 || local_rows > max_rows) return 0;
    cudaError_t e = cudaSuccess;
    return acts_layout(LAY_COUNT, NULL, lay, max_rows, local_rows, split != 0, 0, &e);
}

static cudaError_t acts_alloc(pl_blocks_acts *a, const pl_blocks_layout *lay, int max_rows,
                              int local_rows, int split, int zero)
{
    memset(a, 0, sizeof *a);
    if (max_rows < 1 || local_rows < 1 || local_rows > max_rows) return cudaErrorInvalidValue;
    split = split != 0;
    a->rows = max_rows;
    a->local_rows = local_rows;
    a->split = split;
    cudaError_t e = cudaSuccess;
    a->bytes = acts_layout(LAY_ALLOC, a, lay, max_rows, local_rows, split, zero, &e);
    /* the zeros are set on the legacy default stream, which a non-blocking
     * stream does not wait for: they land before the set is handed out */
    if (!e && zero) e = cudaStreamSynchronize(0);
    if (e) pl_blocks_acts_free(a);
    return e;
}

cudaError_t pl_blocks_acts_alloc_split(pl_blocks_acts *a, const pl_blocks_layout *lay, int max_rows,
                                       int local_rows, int split)
{
    return acts_alloc(a, lay, max_rows, local_rows, split, 0);
}

cudaError_t pl_blocks_acts_alloc(pl_blocks_acts *a, const pl_blocks_layout *lay, int max_rows,
                                 int local_rows)
{
    return acts_alloc(a, lay, max_rows, local_rows, 0, 1);
}

void pl_blocks_acts_free(pl_blocks_acts *a)
{
    while (a->nallocs > 0) cudaFree(a->allocs[--a->nallocs]);
    memset(a, 0, sizeof *a);
}

/* Everything of a part but its parameter, gradient and optimizer buffers. */
static cudaError_t create_rest(pl_blocks *m, const pl_blocks_layout *lay, int max_rows,
                               int local_rows)
{
    int h = lay->cfg.hidden, B = max_rows;
    cudaError_t e = pl_blocks_acts_alloc(&m->acts, lay, max_rows, local_rows);
    if (!e) e = alloc(&m->d_x, (long)B * h);
    if (!e) e = alloc(&m->d_ln, (long)B * h);
    if (!e) e = alloc(&m->d_full, (long)B * h);
    if (!e) e = alloc(&m->d_ffn, (long)B * lay->ffn_local);
    if (!e) e = alloc(&m->d_out, (long)B * (lay->part.head ? lay->classes_local : 1));
    if (!e) e = cudaMalloc((void **)&m->loss_sum, sizeof(float));
    if (!e) e = cudaMemset(m->loss_sum, 0, sizeof(float));
    if (!e) e = cudaMalloc((void **)&m->correct, sizeof(int));
    if (!e) e = cudaMemset(m->correct, 0, sizeof(int));
    return e;
}

cudaError_t pl_blocks_create_bare(pl_blocks *m, const pl_blocks_layout *lay, int max_rows,
                                  int local_rows)
{
    memset(m, 0, sizeof *m);
    if (max_rows < 1) return cudaErrorInvalidValue;
    m->lay = *lay;
    m->max_rows = max_rows;
    cudaError_t e = create_rest(m, lay, max_rows, local_rows);
    if (e) pl_blocks_destroy(m);
    return e;
}

cudaError_t pl_blocks_create(pl_blocks *m, const pl_blocks_layout *lay, int max_rows,
                             int local_rows, unsigned long long seed)
{
    memset(m, 0, sizeof *m);
    if (max_rows < 1) return cudaErrorInvalidValue;
    m->lay = *lay;
    m->max_rows = max_rows;
    int n = (int)lay->nparams;
    cudaError_t e = pl_tensor_alloc(&m->params, 1, n);
    if (!e) e = pl_tensor_alloc(&m->grads, 1, n);
    if (!e) e = pl_tensor_alloc(&m->opt_m, 1, n);
    if (!e) e = pl_tensor_alloc(&m->opt_v, 1, n);
    if (!e) e = create_rest(m, lay, max_rows, local_rows);
    if (!e) {
        long whole_n = pl_blocks_count(&lay->cfg);
        float *whole = malloc((size_t)whole_n * sizeof *whole);
        float *part = malloc((size_t)lay->nparams * sizeof *part);
        if (!whole || !part) e = cudaErrorMemoryAllocation;
        if (!e) {
            pl_blocks_init_whole(&lay->cfg, seed, whole);
            pl_blocks_slice(lay, whole, part);
            e = pl_tensor_from_host(&m->params, part, 0);
            if (!e) e = cudaStreamSynchronize(0);
        }
        free(whole);
        free(part);
    }
    if (e) pl_blocks_destroy(m);
    return e;
}

void pl_blocks_destroy(pl_blocks *m)
{
    pl_tensor_free(&m->params);
    pl_tensor_free(&m->grads);
    pl_tensor_free(&m->opt_m);
    pl_tensor_free(&m->opt_v);
    pl_blocks_acts_free(&m->acts);
    cudaFree(m->d_x);
    cudaFree(m->d_ln);
    cudaFree(m->d_full);
    cudaFree(m->d_ffn);
    cudaFree(m->d_out);
    cudaFree(m->loss_sum);
    cudaFree(m->correct);
    memset(m, 0, sizeof *m);
}

/* ---- forward and backward --------------------------------------------------------------- */

#define TRY(call)                                                                                  \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_) return rc_;                                                                       \
    } while (0)
#define CUDA(call) TRY(pl_tp_cuda(tp, (call), #call))

static const pl_tp_linear_ops *or_reference(const pl_tp_linear_ops *ops)
{
    return ops ? ops : &pl_tp_reference_ops;
}

/* The rows fit what the part and its activations were made for. */
static int shape_ok(const pl_blocks *m, const pl_blocks_acts *a, pl_tp *tp)
{
    if (tp->rows < 1 || tp->rows > a->rows || tp->local_rows > a->local_rows ||
        tp->size != m->lay.part.tp || tp->rank != m->lay.part.tp_rank ||
        (tp->local_rows != tp->rows) != (a->local_rows != a->rows)) {
        snprintf(tp->error, sizeof tp->error,
                 "a pass of %d rows (%d local) on TP rank %d of %d, for a part made for rank %d "
                 "of %d and %d rows (%d local)",
                 tp->rows, tp->local_rows, tp->rank, tp->size, m->lay.part.tp_rank, m->lay.part.tp,
                 a->rows, a->local_rows);
        return (int)cudaErrorInvalidValue;
    }
    return 0;
}

static float *P(pl_blocks *m, long off) { return m->params.data + off; }
static float *G(pl_blocks *m, long off) { return m->grads.data + off; }

/* The pieces of a part, for the B/W split's bookkeeping (acts->w_due). */
enum { PIECE_BLOCK, PIECE_HEAD, PIECE_INPUT };

/* Whether `what` ('F', 'B' or 'W') of a piece (block j, the head or the
 * input layer) may run on a: the part holds it; B and W: the set has the
 * split's buffers; W: its B ran on a; F and B: no W is due. */
static int piece_ok(const pl_blocks *m, const pl_blocks_acts *a, pl_tp *tp, int piece, int j,
                    char what)
{
    const pl_blocks_part *p = &m->lay.part;
    const char *fn = what == 'F'   ? "forward"
                     : what == 'B' ? "B (input gradient)"
                                   : "W (weight gradient)";
    char name[32];
    int slot = piece == PIECE_HEAD ? PL_BLOCKS_MAX : piece == PIECE_INPUT ? PL_BLOCKS_MAX + 1 : j;
    if (piece == PIECE_BLOCK)
        snprintf(name, sizeof name, "block %d", j);
    else
        snprintf(name, sizeof name, "%s", piece == PIECE_HEAD ? "the head" : "the input layer");
    if (piece == PIECE_BLOCK && (j < p->first || j >= p->last)) {
        snprintf(tp->error, sizeof tp->error, "%s of block %d: this part holds blocks [%d, %d)", fn,
                 j, p->first, p->last);
        return (int)cudaErrorInvalidValue;
    }
    if ((piece == PIECE_HEAD && !p->head) || (piece == PIECE_INPUT && !p->input)) {
        snprintf(tp->error, sizeof tp->error, "%s of %s: this part (blocks [%d, %d)) has none", fn,
                 name, p->first, p->last);
        return (int)cudaErrorInvalidValue;
    }
    if (what != 'F' && !a->split) {
        snprintf(tp->error, sizeof tp->error,
                 "%s of %s: these activations have no room for what B keeps for W (make them "
                 "with pl_blocks_acts_alloc_split, split = 1)",
                 fn, name);
        return (int)cudaErrorInvalidValue;
    }
    if (what == 'W' && !a->w_due[slot]) {
        snprintf(tp->error, sizeof tp->error,
                 "%s of %s without its B: B must run first on these activations (W reads what "
                 "it keeps)",
                 fn, name);
        return (int)cudaErrorInvalidValue;
    }
    if (what != 'W' && a->w_due[slot]) {
        snprintf(tp->error, sizeof tp->error,
                 "%s of %s on activations whose W has not run: B kept its data there for W, "
                 "which must run first",
                 fn, name);
        return (int)cudaErrorInvalidValue;
    }
    return 0;
}

int pl_blocks_input_forward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const float *X)
{
    TRY(shape_ok(m, a, tp));
    TRY(piece_ok(m, a, tp, PIECE_INPUT, 0, 'F'));
    const pl_blocks_layout *l = &m->lay;
    int R = tp->local_rows, h = l->cfg.hidden, k = l->cfg.inputs;
    float *x = a->x[l->part.first];
    if (X != a->input)
        CUDA(cudaMemcpyAsync(a->input, X, (size_t)R * k * sizeof(float), cudaMemcpyDeviceToDevice,
                             tp->stream));
    CUDA(pl_k_matmul(x, a->input, P(m, l->in_w), R, h, k, PL_NN, 0, tp->stream));
    CUDA(pl_k_bias_add(x, P(m, l->in_b), R, h, tp->stream));
    return 0;
}

/* LN of the residual stream entering block j (or the head, j = last). */
static int layernorm(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, int j, long g, long b)
{
    CUDA(pl_k_layernorm(a->ln[j], a->mean[j], a->rstd[j], a->x[j], P(m, g), P(m, b), tp->local_rows,
                        m->lay.cfg.hidden, tp->stream));
    return 0;
}

int pl_blocks_block_forward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const pl_tp_linear_ops *ops,
                            int j)
{
    TRY(shape_ok(m, a, tp));
    TRY(piece_ok(m, a, tp, PIECE_BLOCK, j, 'F'));
    const pl_blocks_layout *l = &m->lay;
    const pl_block_offsets *o = &l->block[j];
    ops = or_reference(ops);
    int h = l->cfg.hidden, f = l->cfg.ffn, R = tp->local_rows;
    tp->layer = j;
    TRY(layernorm(m, a, tp, j, o->ln_g, o->ln_b));
    TRY(ops->column_forward(tp, a->ln[j], a->xfull[j], P(m, o->w1), P(m, o->b1), a->z1[j], h, f));
    CUDA(pl_k_gelu(a->a[j], a->z1[j], (long)tp->rows * l->ffn_local, tp->stream));
    /* g's input: full rows; its output: this rank's (the same buffer unless they differ) */
    float *y = a->x[j + 1], *partial = tp->local_rows != tp->rows ? m->d_full : y;
    TRY(ops->row_forward(tp, a->a[j], P(m, o->w2), P(m, o->b2), partial, y, f, h));
    CUDA(pl_k_axpy(y, a->x[j], (long)R * h, 1.0f, tp->stream)); /* the residual */
    return 0;
}

int pl_blocks_head_forward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const pl_tp_linear_ops *ops)
{
    TRY(shape_ok(m, a, tp));
    TRY(piece_ok(m, a, tp, PIECE_HEAD, 0, 'F'));
    const pl_blocks_layout *l = &m->lay;
    int j = l->part.last;
    ops = or_reference(ops);
    tp->layer = -1;
    TRY(layernorm(m, a, tp, j, l->lnf_g, l->lnf_b));
    return ops->column_forward(tp, a->ln[j], a->xfull[j], P(m, l->wc), P(m, l->bc), a->logits,
                               l->cfg.hidden, l->classes_padded);
}

int pl_blocks_loss(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const int *labels, float scale)
{
    TRY(shape_ok(m, a, tp));
    const pl_blocks_layout *l = &m->lay;
    int B = tp->rows, cl = l->classes_local, v = l->classes_valid, c0 = l->class0;
    cudaStream_t s = tp->stream;
    CUDA(pl_k_vp_max(a->rowmax, a->logits, B, cl, v, s));
    TRY(pl_tp_all_reduce(tp, a->rowmax, (size_t)B, PL_FLOAT32, PL_MAX));
    CUDA(pl_k_vp_partials(a->sumexp, a->target, a->logits, labels, a->rowmax, B, cl, v, c0, s));
    TRY(pl_tp_sum(tp, a->target, (size_t)B));
    TRY(pl_tp_sum(tp, a->sumexp, (size_t)B));
    CUDA(pl_k_vp_loss(a->losses, a->sumexp, a->target, B, s));
    CUDA(pl_k_sum(m->loss_sum, a->losses, B, s));
    CUDA(pl_k_vp_argmax(a->pred, a->logits, a->rowmax, B, cl, v, c0, s));
    TRY(pl_tp_all_reduce(tp, a->pred, (size_t)B, PL_INT32, PL_MIN));
    CUDA(pl_k_count_equal(m->correct, a->pred, labels, B, s));
    CUDA(pl_k_vp_backward(m->d_out, a->logits, labels, a->rowmax, a->sumexp, B, cl, v, c0, scale,
                          s));
    return 0;
}

/* Backward of the LN entering block j (or the head): d_ln (the gradient of
 * its output) -> d_x += the gradient of its input (or = with overwrite). */
static int layernorm_backward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, int j, long g, long b,
                              int overwrite)
{
    int R = tp->local_rows, h = m->lay.cfg.hidden;
    CUDA(pl_k_layernorm_backward(m->d_ln, G(m, g), G(m, b), m->d_ln, a->x[j], a->mean[j],
                                 a->rstd[j], P(m, g), R, h, tp->accumulate, tp->stream));
    if (overwrite)
        CUDA(cudaMemcpyAsync(m->d_x, m->d_ln, (size_t)R * h * sizeof(float),
                             cudaMemcpyDeviceToDevice, tp->stream));
    else
        CUDA(pl_k_axpy(m->d_x, m->d_ln, (long)R * h, 1.0f, tp->stream));
    return 0;
}

int pl_blocks_head_backward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const pl_tp_linear_ops *ops)
{
    TRY(shape_ok(m, a, tp));
    const pl_blocks_layout *l = &m->lay;
    int j = l->part.last;
    ops = or_reference(ops);
    tp->layer = -1;
    TRY(ops->column_backward(tp, m->d_out, a->xfull[j], P(m, l->wc), G(m, l->wc), G(m, l->bc),
                             m->d_full, m->d_ln, l->cfg.hidden, l->classes_padded));
    return layernorm_backward(m, a, tp, j, l->lnf_g, l->lnf_b, 1);
}

int pl_blocks_block_backward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp,
                             const pl_tp_linear_ops *ops, int j)
{
    TRY(shape_ok(m, a, tp));
    const pl_blocks_layout *l = &m->lay;
    const pl_block_offsets *o = &l->block[j];
    ops = or_reference(ops);
    int h = l->cfg.hidden, f = l->cfg.ffn;
    tp->layer = j;
    /* d_x, the gradient of the block's output, flows on through the residual */
    TRY(ops->row_backward(tp, m->d_x, a->a[j], P(m, o->w2), G(m, o->w2), G(m, o->b2), m->d_full,
                          m->d_ffn, f, h));
    CUDA(pl_k_gelu_backward(m->d_ffn, m->d_ffn, a->z1[j], (long)tp->rows * l->ffn_local,
                            tp->stream));
    TRY(ops->column_backward(tp, m->d_ffn, a->xfull[j], P(m, o->w1), G(m, o->w1), G(m, o->b1),
                             m->d_full, m->d_ln, h, f));
    return layernorm_backward(m, a, tp, j, o->ln_g, o->ln_b, 0);
}

int pl_blocks_input_backward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const float *X)
{
    TRY(shape_ok(m, a, tp));
    const pl_blocks_layout *l = &m->lay;
    int R = tp->local_rows, h = l->cfg.hidden, k = l->cfg.inputs;
    const float *in = X ? X : a->input;
    CUDA(pl_k_matmul(G(m, l->in_w), in, m->d_x, k, h, R, PL_TN, tp->accumulate, tp->stream));
    CUDA(pl_k_bias_grad(G(m, l->in_b), m->d_x, R, h, tp->accumulate, tp->stream));
    return 0;
}

/* ---- the backward split into B and W (zero-bubble) ---------------------------------------- */

static int copy_rows(pl_tp *tp, float *dst, const float *src, long n)
{
    CUDA(
        cudaMemcpyAsync(dst, src, (size_t)n * sizeof(float), cudaMemcpyDeviceToDevice, tp->stream));
    return 0;
}

/* The kernels are those of pl_tp_reference_ops' row_backward and
 * column_backward (core/parallel/tp.c), in two halves; each gradient
 * tensor gets the same call on the same values. */
int pl_blocks_block_backward_input(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, int j)
{
    TRY(shape_ok(m, a, tp));
    TRY(piece_ok(m, a, tp, PIECE_BLOCK, j, 'B'));
    const pl_blocks_layout *l = &m->lay;
    const pl_block_offsets *o = &l->block[j];
    int h = l->cfg.hidden, fl = l->ffn_local, B = tp->rows;
    cudaStream_t s = tp->stream;
    tp->layer = j;
    /* W2 (row-parallel): dy = g'(d_x), kept; the gradient of a = dy · W2ᵀ */
    TRY(pl_tp_g_backward(tp, m->d_x, a->dy[j], h));
    CUDA(pl_k_matmul(m->d_ffn, a->dy[j], P(m, o->w2), B, fl, h, PL_NT, 0, s));
    /* GELU: dz1 = the gradient of z1, kept (in z1's place: elementwise, each
     * element read before it is written) */
    CUDA(pl_k_gelu_backward(a->dz1[j], m->d_ffn, a->z1[j], (long)B * fl, s));
    /* W1 (column-parallel): the gradient of LN's output = f'(dz1 · W1ᵀ) */
    CUDA(pl_k_matmul(m->d_full, a->dz1[j], P(m, o->w1), B, h, fl, PL_NT, 0, s));
    TRY(pl_tp_f_backward(tp, m->d_full, m->d_ln, h));
    TRY(layernorm_backward(m, a, tp, j, o->ln_g, o->ln_b, 0));
    a->w_due[j] = 1;
    return 0;
}

int pl_blocks_block_backward_weight(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, int j)
{
    TRY(shape_ok(m, a, tp));
    TRY(piece_ok(m, a, tp, PIECE_BLOCK, j, 'W'));
    const pl_blocks_layout *l = &m->lay;
    const pl_block_offsets *o = &l->block[j];
    int h = l->cfg.hidden, fl = l->ffn_local, B = tp->rows, R = tp->local_rows,
        acc = tp->accumulate;
    cudaStream_t s = tp->stream;
    /* b2's gradient sums this rank's rows of dy: under SP, its rows of the gathered dy */
    const float *dy_local = a->dy[j] + (B != R ? (long)tp->rank * R * h : 0);
    tp->layer = j;
    CUDA(pl_k_bias_grad(G(m, o->b2), dy_local, R, h, acc, s));
    CUDA(pl_k_matmul(G(m, o->w2), a->a[j], a->dy[j], fl, h, B, PL_TN, acc, s));
    CUDA(pl_k_matmul(G(m, o->w1), a->xfull[j], a->dz1[j], h, fl, B, PL_TN, acc, s));
    CUDA(pl_k_bias_grad(G(m, o->b1), a->dz1[j], B, fl, acc, s));
    a->w_due[j] = 0;
    return 0;
}

int pl_blocks_head_backward_input(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp)
{
    TRY(shape_ok(m, a, tp));
    TRY(piece_ok(m, a, tp, PIECE_HEAD, 0, 'B'));
    const pl_blocks_layout *l = &m->lay;
    int j = l->part.last, h = l->cfg.hidden, cl = l->classes_local, B = tp->rows;
    tp->layer = -1;
    TRY(copy_rows(tp, a->dlogits, m->d_out, (long)B * cl)); /* the next loss overwrites d_out */
    CUDA(pl_k_matmul(m->d_full, a->dlogits, P(m, l->wc), B, h, cl, PL_NT, 0, tp->stream));
    TRY(pl_tp_f_backward(tp, m->d_full, m->d_ln, h));
    TRY(layernorm_backward(m, a, tp, j, l->lnf_g, l->lnf_b, 1));
    a->w_due[PL_BLOCKS_MAX] = 1;
    return 0;
}

int pl_blocks_head_backward_weight(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp)
{
    TRY(shape_ok(m, a, tp));
    TRY(piece_ok(m, a, tp, PIECE_HEAD, 0, 'W'));
    const pl_blocks_layout *l = &m->lay;
    int j = l->part.last, h = l->cfg.hidden, cl = l->classes_local, B = tp->rows;
    tp->layer = -1;
    CUDA(pl_k_matmul(G(m, l->wc), a->xfull[j], a->dlogits, h, cl, B, PL_TN, tp->accumulate,
                     tp->stream));
    CUDA(pl_k_bias_grad(G(m, l->bc), a->dlogits, B, cl, tp->accumulate, tp->stream));
    a->w_due[PL_BLOCKS_MAX] = 0;
    return 0;
}

int pl_blocks_input_backward_input(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp)
{
    TRY(shape_ok(m, a, tp));
    TRY(piece_ok(m, a, tp, PIECE_INPUT, 0, 'B'));
    TRY(copy_rows(tp, a->dinput, m->d_x, (long)tp->local_rows * m->lay.cfg.hidden));
    a->w_due[PL_BLOCKS_MAX + 1] = 1;
    return 0;
}

int pl_blocks_input_backward_weight(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const float *X)
{
    TRY(shape_ok(m, a, tp));
    TRY(piece_ok(m, a, tp, PIECE_INPUT, 0, 'W'));
    const pl_blocks_layout *l = &m->lay;
    int R = tp->local_rows, h = l->cfg.hidden, k = l->cfg.inputs;
    const float *in = X ? X : a->input;
    CUDA(pl_k_matmul(G(m, l->in_w), in, a->dinput, k, h, R, PL_TN, tp->accumulate, tp->stream));
    CUDA(pl_k_bias_grad(G(m, l->in_b), a->dinput, R, h, tp->accumulate, tp->stream));
    a->w_due[PL_BLOCKS_MAX + 1] = 0;
    return 0;
}

int pl_blocks_forward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const pl_tp_linear_ops *ops,
                      const float *X, float *out)
{
    TRY(shape_ok(m, a, tp));
    const pl_blocks_layout *l = &m->lay;
    int R = tp->local_rows, h = l->cfg.hidden;
    if (l->part.input)
        TRY(pl_blocks_input_forward(m, a, tp, X));
    else if (X != a->x[l->part.first])
        CUDA(cudaMemcpyAsync(a->x[l->part.first], X, (size_t)R * h * sizeof(float),
                             cudaMemcpyDeviceToDevice, tp->stream));
    for (int j = l->part.first; j < l->part.last; j++)
        TRY(pl_blocks_block_forward(m, a, tp, ops, j));
    if (l->part.head) return pl_blocks_head_forward(m, a, tp, ops);
    if (out && out != a->x[l->part.last])
        CUDA(cudaMemcpyAsync(out, a->x[l->part.last], (size_t)R * h * sizeof(float),
                             cudaMemcpyDeviceToDevice, tp->stream));
    return 0;
}

int pl_blocks_backward(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const pl_tp_linear_ops *ops,
                       const float *X, const float *dout, float *dx)
{
    TRY(shape_ok(m, a, tp));
    const pl_blocks_layout *l = &m->lay;
    int R = tp->local_rows, h = l->cfg.hidden;
    if (l->part.head)
        TRY(pl_blocks_head_backward(m, a, tp, ops));
    else
        CUDA(cudaMemcpyAsync(m->d_x, dout, (size_t)R * h * sizeof(float), cudaMemcpyDeviceToDevice,
                             tp->stream));
    for (int j = l->part.last - 1; j >= l->part.first; j--)
        TRY(pl_blocks_block_backward(m, a, tp, ops, j));
    if (l->part.input) return pl_blocks_input_backward(m, a, tp, X);
    if (dx)
        CUDA(cudaMemcpyAsync(dx, m->d_x, (size_t)R * h * sizeof(float), cudaMemcpyDeviceToDevice,
                             tp->stream));
    return 0;
}

int pl_blocks_backward_input(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const float *X,
                             const float *dout, float *dx)
{
    (void)X; /* B of the input layer does not read it */
    TRY(shape_ok(m, a, tp));
    const pl_blocks_layout *l = &m->lay;
    int R = tp->local_rows, h = l->cfg.hidden;
    if (l->part.head)
        TRY(pl_blocks_head_backward_input(m, a, tp));
    else
        TRY(copy_rows(tp, m->d_x, dout, (long)R * h));
    for (int j = l->part.last - 1; j >= l->part.first; j--)
        TRY(pl_blocks_block_backward_input(m, a, tp, j));
    if (l->part.input) return pl_blocks_input_backward_input(m, a, tp);
    if (dx) TRY(copy_rows(tp, dx, m->d_x, (long)R * h));
    return 0;
}

int pl_blocks_backward_weight(pl_blocks *m, pl_blocks_acts *a, pl_tp *tp, const float *X)
{
    TRY(shape_ok(m, a, tp));
    const pl_blocks_layout *l = &m->lay;
    if (l->part.head) TRY(pl_blocks_head_backward_weight(m, a, tp));
    for (int j = l->part.last - 1; j >= l->part.first; j--)
        TRY(pl_blocks_block_backward_weight(m, a, tp, j));
    if (l->part.input) return pl_blocks_input_backward_weight(m, a, tp, X);
    return 0;
}

int pl_blocks_finish_grads(pl_blocks *m, pl_tp *tp)
{
    if (!tp->sequence_parallel || tp->size == 1) return 0;
    const pl_blocks_layout *l = &m->lay;
    if (l->part.input) TRY(pl_tp_sum(tp, G(m, l->in_w), (size_t)(l->in_end - l->in_w)));
    for (int j = l->part.first; j < l->part.last; j++)
        TRY(pl_tp_sum(tp, G(m, l->block[j].begin),
                      (size_t)(l->block[j].shard - l->block[j].begin)));
    if (l->part.head)
        TRY(pl_tp_sum(tp, G(m, l->head_begin), (size_t)(l->head_shard - l->head_begin)));
    return 0;
}

cudaError_t pl_blocks_adamw(pl_blocks *m, float lr, cudaStream_t s)
{
    m->step++;
    return pl_k_adamw(m->params.data, m->opt_m.data, m->opt_v.data, m->grads.data, m->lay.nparams,
                      lr, 0.9f, 0.999f, 1e-8f, 0.01f, m->step, s);
}

cudaError_t pl_blocks_sgd(pl_blocks *m, float lr, cudaStream_t s)
{
    m->step++;
    return pl_k_sgd(m->params.data, m->opt_m.data, m->grads.data, m->lay.nparams, lr, 0.9f, 0.0f,
                    s);
}

cudaError_t pl_blocks_reset_correct(pl_blocks *m, cudaStream_t s)
{
    return cudaMemsetAsync(m->correct, 0, sizeof(int), s);
}

/* ---- the memory a run takes -------------------------------------------------------------- */

#define RUN_PAGE 4096

/* A ZeRO unit's floats rounded up to a multiple of n (paralab/zero.h's padding). */
static long padded(long floats, int n) { return (floats + n - 1) / n * n; }

size_t pl_blocks_run_bytes(const pl_blocks_run *r, pl_blocks_run_memory *parts)
{
    pl_blocks_run_memory m = {0, 0, 0, 0};
    if (parts) *parts = m;
    const pl_blocks_config *c = &r->model;
    int dp = r->dp, tp = r->tp, pp = r->pp, v = r->chunks, mb = r->micro_batches;
    if (dp < 1 || tp < 1 || pp < 1 || v < 1 || mb < 1 || r->batch < 1 || r->in_flight < 0 ||
        r->extra_states < 0 || r->host_models < 0 || r->zero_stage < -1 || r->zero_stage > 3 ||
        (r->zero_stage >= 0 && (tp > 1 || pp > 1)))
        return 0;
    if (pl_blocks_check(c, tp, NULL, 64, NULL, 0)) return 0;
    const size_t F = sizeof(float);
    size_t ranks = (size_t)dp * (size_t)tp * (size_t)pp;
    size_t psi = (size_t)pl_blocks_count(c);
    /* the heaviest part a rank runs: ceil(L / (p v)) blocks, the input layer and the head */
    int vstages = pp * v, k = (c->layers + vstages - 1) / vstages;
    pl_blocks_layout lay;
    if (pl_blocks_layout_make(&lay, c, (pl_blocks_part){0, k, 1, 1, tp, 0}, NULL, 0)) return 0;
    int rows = r->batch / (dp * mb);
    if (rows < 1) rows = 1;
    int local = r->sequence_parallel ? rows / tp : rows;
    if (local < 1) local = 1;
    /* an activation set: its tensors, each allocation rounded up to a page */
    size_t own = pl_blocks_acts_bytes(&lay, rows, local, 0) + (size_t)(8 * k + 14) * RUN_PAGE;
    size_t held = pl_blocks_acts_bytes(&lay, rows, local, 1) + (size_t)(9 * k + 14) * RUN_PAGE;
    size_t scratch =
        (size_t)rows * (3 * (size_t)c->hidden + (size_t)lay.ffn_local + (size_t)lay.classes_local) *
            F +
        5 * RUN_PAGE;
    size_t per_rank = (size_t)v * (own + (size_t)r->in_flight * held + scratch);
    m.activations = ranks * per_rank;
    if (r->zero_stage < 0) {
        /* a TP rank's parts over every stage hold the whole model's blocks, sharded */
        size_t shards = 0;
        for (int i = 0; i < tp; i++) {
            pl_blocks_layout w;
            if (pl_blocks_layout_make(&w, c, (pl_blocks_part){0, c->layers, 1, 1, tp, i}, NULL, 0))
                return 0;
            shards += (size_t)w.nparams;
        }
        m.states = (size_t)dp * shards * 4 * F; /* params, grads, m, v */
        m.host = ranks * psi * F + (size_t)dp * shards * F;
    } else {
        /* ZeRO over n = dp ranks: the units (the input layer, each block, the head) padded */
        int n = dp, st = r->zero_stage;
        pl_blocks_layout w;
        if (pl_blocks_layout_make(&w, c, pl_blocks_whole(c), NULL, 0)) return 0;
        long pad = padded(w.in_end - w.in_w, n), big = pad;
        for (int j = 0; j < c->layers; j++) {
            long u = padded(w.block[j].end - w.block[j].begin, n);
            pad += u;
            if (u > big) big = u;
        }
        long head = padded(w.head_end - w.head_begin, n);
        pad += head;
        if (head > big) big = head;
        size_t P = (size_t)pad, S = P / (size_t)n, B = (size_t)big;
        size_t floats = (st <= 2 ? P : S) + (st <= 1 ? P : S) + 2 * (st == 0 ? P : S);
        if (st >= 2) floats += 2 * B + (mb > 1 ? B / (size_t)n : 0);
        if (st == 3) floats += 2 * B;
        m.states = ranks * floats * F;
        m.host = ranks * (psi + P) * F;
        m.states += (size_t)r->extra_states * ranks * 4 * P * F;
        m.activations += (size_t)r->extra_states * ranks * (own + scratch);
    }
    if (r->zero_stage < 0 && r->extra_states) { /* a whole replica's state on every rank */
        m.states += (size_t)r->extra_states * ranks * psi * 4 * F;
        m.activations += (size_t)r->extra_states * ranks * (own + scratch);
    }
    m.host += (size_t)r->host_models * psi * F;
    m.total = m.states + m.activations + m.host;
    if (parts) *parts = m;
    return m.total;
}

/* The first number on the line of /proc/meminfo (or a file of one number) that starts with key. */
static int read_number(const char *path, const char *key, unsigned long long *out)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[256];
    int found = -1;
    size_t kl = strlen(key);
    while (found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl)) continue;
        char *end;
        unsigned long long x = strtoull(line + kl, &end, 10);
        if (end != line + kl) {
            *out = x;
            found = 0;
        }
    }
    fclose(f);
    return found;
}

size_t pl_host_memory_available(char *source, size_t cap)
{
    const char *env = getenv("PARALAB_MEMORY_LIMIT");
    if (env && *env) {
        char *end;
        double x = strtod(env, &end);
        double unit = 1;
        if (*end && strchr("kKmMgGtT", *end)) {
            int e = (int)(strchr("kmgt", *end | 32) - "kmgt") + 1;
            unit = ldexp(1, 10 * e);
            end++;
        }
        if (end == env || *end || !(x >= 0) || x * unit > 1e18) {
            if (cap)
                snprintf(source, cap,
                         "PARALAB_MEMORY_LIMIT=%s: not a number of bytes (e.g. 8000000000 or 8G)",
                         env);
            return (size_t)-1;
        }
        if (cap) snprintf(source, cap, "PARALAB_MEMORY_LIMIT=%s", env);
        return (size_t)(x * unit);
    }
    unsigned long long kb = 0, max = 0, cur = 0;
    size_t have = 0;
    if (!read_number("/proc/meminfo", "MemAvailable:", &kb)) {
        have = (size_t)kb * 1024;
        if (cap) snprintf(source, cap, "MemAvailable in /proc/meminfo");
    } else {
        long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
        if (pages > 0 && size > 0) have = (size_t)pages * (size_t)size;
        if (cap) snprintf(source, cap, "sysconf's available pages");
    }
    /* cgroup v2: the limit of the group this process runs in ("max": none) */
    char group[512] = "";
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "0::", 3)) {
                line[strcspn(line, "\n")] = '\0';
                snprintf(group, sizeof group, "%s", line + 3);
            }
        fclose(f);
    }
    char pmax[600], pcur[600];
    snprintf(pmax, sizeof pmax, "/sys/fs/cgroup%s/memory.max", strcmp(group, "/") ? group : "");
    snprintf(pcur, sizeof pcur, "/sys/fs/cgroup%s/memory.current", strcmp(group, "/") ? group : "");
    if (*group && !read_number(pmax, "", &max) && !read_number(pcur, "", &cur)) {
        size_t left = max > cur ? (size_t)(max - cur) : 0;
        if (!have || left < have) {
            have = left;
            if (cap) snprintf(source, cap, "the cgroup's memory.max less memory.current");
        }
    }
    return have;
}

/* "83.4 GiB" */
static void human(size_t b, char *buf, size_t cap)
{
    const char *u[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double x = (double)b;
    int i = 0;
    while (x >= 1024 && i < 4) x /= 1024, i++;
    if (i == 0)
        snprintf(buf, cap, "%zu bytes", b);
    else
        snprintf(buf, cap, "%.1f %s", x, u[i]);
}

/* "89,548,419,072" */
static void grouped(size_t b, char *buf, size_t cap)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%zu", b), o = 0;
    for (int i = 0; i < n && o + 2 < (int)cap; i++) {
        if (i && (n - i) % 3 == 0) buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

int pl_blocks_run_fits(const pl_blocks_run *r, char *err, size_t cap)
{
    char source[256] = "";
    size_t have = pl_host_memory_available(source, sizeof source);
    if (have == (size_t)-1) {
        if (cap) snprintf(err, cap, "%s", source);
        return -1;
    }
    if (!have) return 0; /* nothing to compare with: let the run try */
    int sim = !strcmp(pl_device_caps()->world, "simulated");
    pl_blocks_run_memory m;
    if (!pl_blocks_run_bytes(r, &m)) return 0; /* not valid: the lab's checks say why */
    size_t need = (sim ? m.total : m.host) + PL_RUN_PROGRAM_BYTES;
    if (need <= have) return 0;
    int H = r->model.hidden, L = r->model.layers, least = r->pp * r->chunks;
    /* the widest --hidden that fits with these --layers, the most --layers with this --hidden */
    int h_fit = 0, l_fit = 0;
    pl_blocks_run t = *r;
    for (int h = H - 1; h >= 1 && !h_fit; h--) {
        t.model = pl_blocks_config_make(h, L);
        t.model.inputs = r->model.inputs;
        t.model.classes = r->model.classes;
        if (pl_blocks_check(&t.model, r->tp, NULL, 64, NULL, 0)) continue;
        pl_blocks_run_memory x;
        if (pl_blocks_run_bytes(&t, &x) && (sim ? x.total : x.host) + PL_RUN_PROGRAM_BYTES <= have)
            h_fit = h;
    }
    for (int l = L - 1; l >= (least > 1 ? least : 1) && !l_fit; l--) {
        t.model = r->model;
        t.model.layers = l;
        pl_blocks_run_memory x;
        if (pl_blocks_run_bytes(&t, &x) && (sim ? x.total : x.host) + PL_RUN_PROGRAM_BYTES <= have)
            l_fit = l;
    }
    char hn[32], hb[32], avail[32], what[64] = "";
    human(need, hn, sizeof hn);
    grouped(need, hb, sizeof hb);
    human(have, avail, sizeof avail);
    int by_batch = sim && m.activations >= m.total / 4;
    if (by_batch) snprintf(what, sizeof what, " --batch %d", r->batch);
    size_t ranks = (size_t)r->dp * (size_t)r->tp * (size_t)r->pp;
    char np[32], on[96];
    grouped((size_t)pl_blocks_count(&r->model), np, sizeof np);
    snprintf(on, sizeof on, "on %zu simulated GPU%s whose memory is this machine's", ranks,
             ranks == 1 ? "" : "s");
    int len = snprintf(err, cap,
                       "--hidden %d --layers %d%s: this run needs about %s of memory (%s bytes: "
                       "%s%s parameters%s%s, and 128 MiB for the program itself), and this machine "
                       "has %s available (%s)",
                       H, L, what, hn, hb, sim ? "the " : "the host's copies of the ", np,
                       sim ? "' values, gradients and AdamW moments and the activations, " : "",
                       sim ? on : "", avail, source);
    if (len < 0 || (size_t)len >= cap) return -1;
    char more[512];
    if (h_fit && l_fit)
        snprintf(more, sizeof more,
                 "; with --layers %d the widest that fits is --hidden %d, with --hidden %d the "
                 "most is --layers %d",
                 L, h_fit, H, l_fit);
    else if (h_fit)
        snprintf(more, sizeof more, "; with --layers %d the widest that fits is --hidden %d", L,
                 h_fit);
    else if (l_fit)
        snprintf(more, sizeof more, "; with --hidden %d the most that fits is --layers %d", H,
                 l_fit);
    else if (have <= PL_RUN_PROGRAM_BYTES)
        snprintf(more, sizeof more, "; that is less than the 128 MiB the program itself takes");
    else
        snprintf(more, sizeof more, "; no --hidden or --layers fits with the others as given%s",
                 by_batch ? ": a smaller --batch" : "");
    snprintf(err + len, cap - (size_t)len, "%s", more);
    return -1;
}
