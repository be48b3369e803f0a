/*
 * test_blocks.c — the block model (paralab/blocks.h) and tensor
 * parallelism (paralab/tp.h):
 *   - the layout: counts, every part's slice of the whole model and back;
 *   - one step on one device against the double-precision host reference
 *     (tests/unit/blocks_ref.c), whose gradients are themselves checked by
 *     central finite differences;
 *   - t = 1, 2, 4, 8 TP ranks, with and without sequence parallelism: the
 *     logits, the loss and every gradient equal one device's; one block
 *     alone (its output and the gradient of its input); the replicated
 *     parameters' gradients the same bits on every rank; the collectives
 *     by kind and the bytes each rank sends, exactly the formula's.
 *
 * Tolerances: device against reference |d - r| <= 1e-5 + 1e-4 max|r| of
 * the tensor (float accumulation over at most a few hundred terms); t
 * ranks against one device 1e-6 + 1e-5 max|r| (the same float sums in
 * another order: seen ~1e-7 relative).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks_ref.h"
#include "nn_ref.h"
#include "paralab/blocks.h"
#include "paralab/collectives.h"
#include "paralab/nn.h"
#include "paralab/tp.h"
#include "paralab/world.h"
#include "suites.h"

/* a model small enough to check every element: h = 8 and f = 32 split over
 * up to 8 ranks; 5 classes pad to 6 on 2 ranks, 8 on 4 and 8 (on 8, ranks
 * 5-7 hold padding only) */
static pl_blocks_config small(void)
{
    pl_blocks_config c = {.inputs = 6, .hidden = 8, .ffn = 32, .layers = 2, .classes = 5};
    return c;
}
enum { ROWS = 8 };

static void batch(const pl_blocks_config *c, float *X, int *y, unsigned long long seed)
{
    ref_rng rng = {seed};
    ref_fill(&rng, X, (long)ROWS * c->inputs, -1, 1);
    for (int i = 0; i < ROWS; i++) y[i] = (int)(ref_uniform(&rng, 0, c->classes)) % c->classes;
}

/* |got - want| <= abs + rel * max |want| over the range; reports the first miss. */
static int range_close(const char *what, const float *got, const double *want, long n, double abs,
                       double rel)
{
    double mx = 0;
    for (long i = 0; i < n; i++) mx = fmax(mx, fabs(want[i]));
    for (long i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= abs + rel * mx)) {
            fprintf(stderr, "  %s[%ld] = %.9g, want %.9g (max |want| %.3g)\n", what, i, got[i],
                    want[i], mx);
            return 0;
        }
    return 1;
}

/* ---- the layout ------------------------------------------------------------------------ */

static void test_counts(void)
{
    pl_blocks_config d = pl_blocks_default();
    CU_ASSERT_EQUAL(d.inputs, 64);
    CU_ASSERT_EQUAL(d.hidden, 64);
    CU_ASSERT_EQUAL(d.ffn, 256);
    CU_ASSERT_EQUAL(d.layers, 2);
    CU_ASSERT_EQUAL(d.classes, 10);
    /* 64*64 + 64 + 2 (3*64 + 64*256 + 256 + 256*64) + 2*64 + 64*10 + 10 */
    CU_ASSERT_EQUAL(pl_blocks_count(&d), 71370);
    pl_blocks_layout l;
    CU_ASSERT_EQUAL_FATAL(pl_blocks_layout_make(&l, &d, pl_blocks_whole(&d), NULL, 0), 0);
    CU_ASSERT_EQUAL(l.nparams, 71370);
    CU_ASSERT_EQUAL(l.in_w, 0);
    CU_ASSERT_EQUAL(l.in_b, 4096);
    CU_ASSERT_EQUAL(l.block[0].begin, 4160);
    CU_ASSERT_EQUAL(l.block[0].b2, 4160 + 128);
    CU_ASSERT_EQUAL(l.block[0].w1, 4160 + 192);
    CU_ASSERT_EQUAL(l.block[0].end, 4160 + 33216);
    CU_ASSERT_EQUAL(l.block[1].begin, l.block[0].end);
    CU_ASSERT_EQUAL(l.head_begin, l.block[1].end);
    CU_ASSERT_EQUAL(l.head_end, 71370);
    /* on 4 ranks: 10 classes pad to 12, 3 each; rank 3 holds class 9 and 2 of padding */
    pl_blocks_part p = {0, 2, 1, 1, 4, 3};
    CU_ASSERT_EQUAL_FATAL(pl_blocks_layout_make(&l, &d, p, NULL, 0), 0);
    CU_ASSERT_EQUAL(l.ffn_local, 64);
    CU_ASSERT_EQUAL(l.classes_padded, 12);
    CU_ASSERT_EQUAL(l.classes_local, 3);
    CU_ASSERT_EQUAL(l.class0, 9);
    CU_ASSERT_EQUAL(l.classes_valid, 1);
    CU_ASSERT_EQUAL(l.nparams, 4160 + 2 * (192 + 64 * 64 + 64 + 64 * 64) + 128 + 64 * 3 + 3);
}

static void test_check_messages(void)
{
    pl_blocks_config d = pl_blocks_default();
    char err[512];
    for (int t = 1; t <= 64; t *= 2)
        CU_ASSERT_EQUAL(pl_blocks_check(&d, t, "--devices", 64, err, 512), 0);
    CU_ASSERT_EQUAL(pl_blocks_check(&d, 3, "--devices", 64, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "--devices 3: the hidden width does not divide by it (h = 64, f = "
                                "4h = 256); tensor parallelism can split this model over 1, 2, "
                                "4, 8, 16, 32 or 64 ranks");
    pl_blocks_config c = pl_blocks_config_make(24, 1);
    CU_ASSERT_EQUAL(pl_blocks_check(&c, 16, "--devices", 8, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "--devices 16: the hidden width does not divide by it (h = 24, f = "
                                "4h = 96); tensor parallelism can split this model over 1, 2, 3, "
                                "4, 6 or 8 ranks (of the devices here)");
    c = pl_blocks_config_make(64, 0);
    CU_ASSERT_EQUAL(pl_blocks_check(&c, 1, "--devices", 64, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "--layers 0: the blocks must be 1..64");
}

/* Every part's slice, written back, rebuilds the whole model bit for bit;
 * the classifier's padding is zero; the replicated tensors are the whole
 * model's. */
static void test_slice_unslice(void)
{
    pl_blocks_config c = small();
    long n = pl_blocks_count(&c);
    float *whole = malloc((size_t)n * 4), *back = malloc((size_t)n * 4),
          *part = malloc((size_t)n * 4);
    pl_blocks_init_whole(&c, 7, whole);
    for (int t = 1; t <= 8; t *= 2) {
        for (long i = 0; i < n; i++) back[i] = NAN;
        for (int r = 0; r < t; r++) {
            pl_blocks_layout l;
            pl_blocks_part p = {0, c.layers, 1, 1, t, r};
            CU_ASSERT_EQUAL_FATAL(pl_blocks_layout_make(&l, &c, p, NULL, 0), 0);
            pl_blocks_slice(&l, whole, part);
            for (int k = l.classes_valid; k < l.classes_local; k++) {
                CU_ASSERT_EQUAL(part[l.bc + k], 0.0f);
                for (int i = 0; i < c.hidden; i++)
                    CU_ASSERT_EQUAL(part[l.wc + i * l.classes_local + k], 0.0f);
            }
            pl_blocks_unslice(&l, part, back);
        }
        CU_ASSERT_EQUAL(memcmp(whole, back, (size_t)n * 4), 0);
    }
    /* two stages of one block each, the first with the input layer, the second with the head */
    for (long i = 0; i < n; i++) back[i] = NAN;
    pl_blocks_part st[2] = {{0, 1, 1, 0, 1, 0}, {1, 2, 0, 1, 1, 0}};
    long total = 0;
    for (int s = 0; s < 2; s++) {
        pl_blocks_layout l;
        CU_ASSERT_EQUAL_FATAL(pl_blocks_layout_make(&l, &c, st[s], NULL, 0), 0);
        pl_blocks_slice(&l, whole, part);
        pl_blocks_unslice(&l, part, back);
        total += l.nparams;
    }
    CU_ASSERT_EQUAL(total, n);
    CU_ASSERT_EQUAL(memcmp(whole, back, (size_t)n * 4), 0);
    /* the same seed, the same bits; another seed, others */
    pl_blocks_init_whole(&c, 7, back);
    CU_ASSERT_EQUAL(memcmp(whole, back, (size_t)n * 4), 0);
    pl_blocks_init_whole(&c, 8, back);
    CU_ASSERT_NOT_EQUAL(memcmp(whole, back, (size_t)n * 4), 0);
    free(whole), free(back), free(part);
}

/* ---- one device ----------------------------------------------------------------------- */

/* The host reference's gradients against central differences of its own
 * loss (double: h = 1e-6 leaves ~1e-8 of error), for 3 parameters of every
 * tensor: so the reference is right, and the device is checked against it. */
static void test_reference_gradcheck(void)
{
    pl_blocks_config c = small();
    long n = pl_blocks_count(&c);
    float *w = malloc((size_t)n * 4), X[ROWS * 6];
    int y[ROWS];
    double *g = malloc((size_t)n * 8), *g2 = malloc((size_t)n * 8), logits[ROWS * 5];
    pl_blocks_init_whole(&c, 3, w);
    /* LN's gains and biases off 1 and 0, so their gradients are not special */
    ref_rng rng = {5};
    for (long i = 0; i < n; i++) w[i] += (float)ref_uniform(&rng, -0.1, 0.1);
    batch(&c, X, y, 9);
    ref_blocks_step(&c, w, X, y, ROWS, 1.0 / ROWS, logits, g);
    int bad = 0;
    for (long i = 0; i < n; i += 1 + n / 97) {
        float keep = w[i];
        double hstep = 1e-3; /* on a float parameter: the loss is smooth at this scale */
        w[i] = (float)(keep + hstep);
        double up = ref_blocks_step(&c, w, X, y, ROWS, 1.0 / ROWS, logits, g2) / ROWS;
        w[i] = (float)(keep - hstep);
        double down = ref_blocks_step(&c, w, X, y, ROWS, 1.0 / ROWS, logits, g2) / ROWS;
        w[i] = keep;
        double fd = (up - down) / (2 * hstep);
        if (!(fabs(fd - g[i]) <= 1e-6 + 1e-3 * fabs(g[i]))) {
            if (bad++ < 3) fprintf(stderr, "  param %ld: fd %.9g, analytic %.9g\n", i, fd, g[i]);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    free(w), free(g), free(g2);
}

/* Device buffers of a batch. */
static void *to_dev(const void *h, size_t bytes)
{
    void *d = NULL;
    cudaMalloc(&d, bytes);
    cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
    return d;
}

static void test_one_device_step(void)
{
    pl_blocks_config c = small();
    long n = pl_blocks_count(&c);
    pl_blocks_layout l;
    CU_ASSERT_EQUAL_FATAL(pl_blocks_layout_make(&l, &c, pl_blocks_whole(&c), NULL, 0), 0);
    pl_blocks m;
    CU_ASSERT_EQUAL_FATAL(pl_blocks_create(&m, &l, ROWS, ROWS, 11), cudaSuccess);
    float X[ROWS * 6], *w = malloc((size_t)n * 4), *gd = malloc((size_t)n * 4), lg[ROWS * 5];
    int y[ROWS];
    double *g = malloc((size_t)n * 8), logits[ROWS * 5];
    batch(&c, X, y, 13);
    pl_blocks_init_whole(&c, 11, w);
    double loss = ref_blocks_step(&c, w, X, y, ROWS, 1.0 / ROWS, logits, g);
    float *dX = to_dev(X, sizeof X);
    int *dy = to_dev(y, sizeof y);
    pl_tp tp;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(pl_tp_init(&tp, NULL, 0, ROWS, 0, err, sizeof err), 0);
    int rc = pl_blocks_forward(&m, &m.acts, &tp, NULL, dX, NULL);
    if (!rc) rc = pl_blocks_loss(&m, &m.acts, &tp, dy, 1.0f / ROWS);
    if (!rc) rc = pl_blocks_backward(&m, &m.acts, &tp, NULL, dX, NULL, NULL);
    if (rc) fprintf(stderr, "  %s\n", tp.error);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    float loss_d;
    cudaMemcpy(&loss_d, m.loss_sum, 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(lg, m.acts.logits, sizeof lg, cudaMemcpyDeviceToHost);
    cudaMemcpy(gd, m.grads.data, (size_t)n * 4, cudaMemcpyDeviceToHost);
    CU_ASSERT(fabs(loss_d - loss) <= 1e-5 * fabs(loss));
    CU_ASSERT(range_close("logits", lg, logits, ROWS * 5, 1e-5, 1e-4));
    /* tensor by tensor */
    struct {
        const char *name;
        long off, len;
    } t[] = {{"W0", l.in_w, l.in_b - l.in_w},
             {"b0", l.in_b, c.hidden},
             {"ln_g", l.block[0].ln_g, c.hidden},
             {"ln_b", l.block[0].ln_b, c.hidden},
             {"b2", l.block[0].b2, c.hidden},
             {"W1", l.block[0].w1, (long)c.hidden * c.ffn},
             {"b1", l.block[0].b1, c.ffn},
             {"W2", l.block[0].w2, (long)c.ffn * c.hidden},
             {"block 1", l.block[1].begin, l.block[1].end - l.block[1].begin},
             {"lnf", l.lnf_g, 2L * c.hidden},
             {"Wc", l.wc, (long)c.hidden * c.classes},
             {"bc", l.bc, c.classes}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        CU_ASSERT(range_close(t[i].name, gd + t[i].off, g + t[i].off, t[i].len, 1e-5, 1e-4));
    cudaFree(dX), cudaFree(dy);
    pl_blocks_destroy(&m);
    free(w), free(gd), free(g);
}

/* ---- t ranks ---------------------------------------------------------------------------- */

typedef struct {
    int sp, block_only; /* sequence parallelism; one block alone (no input layer, no head) */
    float X[ROWS * 8], dout[ROWS * 8];
    int y[ROWS];
    /* per rank, after one step */
    float *grads[8], *logits[8], *out[8], *dx[8];
    float loss[8];
    int correct[8];
    pl_blocks_layout lay[8];
    pl_ledger ledger[8];
    char error[8][300];
} tp_run;

static int tp_rank_fn(pl_rank *r)
{
    tp_run *s = r->arg;
    pl_blocks_config c = small();
    int t = r->size, me = r->rank, rc = 1;
    pl_blocks_part p = s->block_only ? (pl_blocks_part){0, 1, 0, 0, t, me}
                                     : (pl_blocks_part){0, c.layers, 1, 1, t, me};
    pl_blocks_layout *l = &s->lay[me];
    pl_blocks m;
    memset(&m, 0, sizeof m);
    pl_tp tp;
    float *dX = NULL, *dout = NULL, *out = NULL, *dx = NULL;
    int *dy = NULL;
    if (pl_blocks_layout_make(l, &c, p, s->error[me], 300)) return 1;
    if (pl_tp_init(&tp, r->comm, s->sp, ROWS, r->stream, s->error[me], 300)) return 1;
    int R = tp.local_rows, first = s->sp ? me * R : 0, width = s->block_only ? c.hidden : c.inputs;
    if (pl_blocks_create(&m, l, ROWS, R, 11)) goto out;
    dX = to_dev(s->X + (long)first * width, (size_t)R * width * 4);
    dout = to_dev(s->dout + (long)first * c.hidden, (size_t)R * c.hidden * 4);
    dy = to_dev(s->y, sizeof s->y);
    cudaMalloc((void **)&out, (size_t)R * c.hidden * 4);
    cudaMalloc((void **)&dx, (size_t)R * c.hidden * 4);
    int e = pl_blocks_forward(&m, &m.acts, &tp, NULL, dX, out);
    if (!e && !s->block_only) e = pl_blocks_loss(&m, &m.acts, &tp, dy, 1.0f / ROWS);
    if (!e) e = pl_blocks_backward(&m, &m.acts, &tp, NULL, dX, dout, dx);
    if (!e) e = pl_blocks_finish_grads(&m, &tp);
    if (e) {
        snprintf(s->error[me], 300, "%s", tp.error);
        goto out;
    }
    cudaStreamSynchronize(r->stream);
    s->ledger[me] = pl_comm_ledger(r->comm);
    s->grads[me] = malloc((size_t)l->nparams * 4);
    cudaMemcpy(s->grads[me], m.grads.data, (size_t)l->nparams * 4, cudaMemcpyDeviceToHost);
    if (s->block_only) {
        s->out[me] = malloc((size_t)R * c.hidden * 4);
        s->dx[me] = malloc((size_t)R * c.hidden * 4);
        cudaMemcpy(s->out[me], out, (size_t)R * c.hidden * 4, cudaMemcpyDeviceToHost);
        cudaMemcpy(s->dx[me], dx, (size_t)R * c.hidden * 4, cudaMemcpyDeviceToHost);
    } else {
        s->logits[me] = malloc((size_t)ROWS * l->classes_local * 4);
        cudaMemcpy(s->logits[me], m.acts.logits, (size_t)ROWS * l->classes_local * 4,
                   cudaMemcpyDeviceToHost);
        cudaMemcpy(&s->loss[me], m.loss_sum, 4, cudaMemcpyDeviceToHost);
        cudaMemcpy(&s->correct[me], m.correct, 4, cudaMemcpyDeviceToHost);
    }
    rc = 0;
out:
    cudaFree(dX), cudaFree(dout), cudaFree(dy), cudaFree(out), cudaFree(dx);
    pl_blocks_destroy(&m);
    return rc;
}

static tp_run *tp_step(int t, int sp, int block_only)
{
    tp_run *s = calloc(1, sizeof *s);
    s->sp = sp;
    s->block_only = block_only;
    pl_blocks_config c = small();
    ref_rng rng = {21};
    ref_fill(&rng, s->X, ROWS * 8, -1, 1);    /* X [ROWS, inputs] or x [ROWS, h] */
    ref_fill(&rng, s->dout, ROWS * 8, -1, 1); /* the block's output gradient */
    for (int i = 0; i < ROWS; i++) s->y[i] = (3 * i + 1) % c.classes;
    char err[1200];
    int rc = pl_world_run(t, NULL, 10, tp_rank_fn, s, err, sizeof err);
    if (rc) fprintf(stderr, "  t=%d sp=%d: %s\n", t, sp, err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    return s;
}

static void tp_free(tp_run *s)
{
    for (int r = 0; r < 8; r++)
        free(s->grads[r]), free(s->logits[r]), free(s->out[r]), free(s->dx[r]);
    free(s);
}

/* Exact collectives of one step (one micro-batch) on t ranks: calls by
 * kind, and bytes sent (ring volumes, paralab/collectives.h: all-reduce
 * 2(t-1)/t S, all-gather and reduce-scatter (t-1)/t S). */
static void expect_ledger(const tp_run *s, int t, int sp, int L, int h, int inputs)
{
    long act = (long)ROWS * h * 4; /* one activation: S of each f and g collective */
    uint64_t ar = 0, ag = 0, rs = 0, bytes = 0;
    if (t > 1) {
        if (!sp) { /* blocks: g fwd, f bwd; head: f bwd; loss: max, target, sumexp, prediction */
            ar = 2 * L + 1 + 4;
            bytes = (uint64_t)(2 * L + 1) * act * 2 * (t - 1) / t +
                    4 * ((uint64_t)ROWS * 4) * 2 * (t - 1) / t;
        } else { /* f fwd AG, g fwd RS, g bwd AG, f bwd RS per block; the head's f: AG + RS */
            ag = 2 * L + 1;
            rs = 2 * L + 1;
            ar = 4 + L + 2; /* the loss's 4, and finish_grads: a block's 3h, W0 and b0, LNf's 2h */
            bytes =
                (uint64_t)(4 * L + 2) * act * (t - 1) / t +
                4 * ((uint64_t)ROWS * 4) * 2 * (t - 1) / t +
                ((uint64_t)L * 3 * h + ((uint64_t)inputs * h + h) + 2 * h) * 4 * 2 * (t - 1) / t;
        }
    }
    for (int r = 0; r < t; r++) {
        CU_ASSERT_EQUAL(s->ledger[r].calls[PL_CALL_ALL_REDUCE], ar);
        CU_ASSERT_EQUAL(s->ledger[r].calls[PL_CALL_ALL_GATHER], ag);
        CU_ASSERT_EQUAL(s->ledger[r].calls[PL_CALL_REDUCE_SCATTER], rs);
        CU_ASSERT_EQUAL(s->ledger[r].bytes_sent, bytes);
        if (s->ledger[r].bytes_sent != bytes)
            fprintf(stderr, "  t=%d sp=%d rank %d: %llu bytes sent, formula %llu\n", t, sp, r,
                    (unsigned long long)s->ledger[r].bytes_sent, (unsigned long long)bytes);
    }
}

static void check_tp(int t, int sp)
{
    pl_blocks_config c = small();
    long n = pl_blocks_count(&c);
    tp_run *one = tp_step(1, 0, 0), *s = tp_step(t, sp, 0);
    /* gather every rank's gradients into the whole layout */
    float *g1 = calloc((size_t)n, 4), *gt = calloc((size_t)n, 4);
    double *want = calloc((size_t)n, 8);
    pl_blocks_unslice(&one->lay[0], one->grads[0], g1);
    for (int r = 0; r < t; r++) pl_blocks_unslice(&s->lay[r], s->grads[r], gt);
    for (long i = 0; i < n; i++) want[i] = g1[i];
    pl_blocks_layout W;
    pl_blocks_layout_make(&W, &c, pl_blocks_whole(&c), NULL, 0);
    CU_ASSERT(range_close("input layer", gt, want, W.in_end, 1e-6, 1e-5));
    for (int j = 0; j < c.layers; j++)
        CU_ASSERT(range_close("block", gt + W.block[j].begin, want + W.block[j].begin,
                              W.block[j].end - W.block[j].begin, 1e-6, 1e-5));
    CU_ASSERT(range_close("head", gt + W.head_begin, want + W.head_begin, W.head_end - W.head_begin,
                          1e-6, 1e-5));
    /* the replicated parameters' gradients: the same bits on every rank */
    for (int r = 1; r < t; r++) {
        const pl_blocks_layout *l = &s->lay[r];
        CU_ASSERT_EQUAL(memcmp(s->grads[r], s->grads[0], (size_t)l->in_end * 4), 0);
        for (int j = 0; j < c.layers; j++)
            CU_ASSERT_EQUAL(memcmp(s->grads[r] + l->block[j].begin, s->grads[0] + l->block[j].begin,
                                   (size_t)(l->block[j].shard - l->block[j].begin) * 4),
                            0);
        CU_ASSERT_EQUAL(memcmp(s->grads[r] + l->head_begin, s->grads[0] + l->head_begin,
                               (size_t)(l->head_shard - l->head_begin) * 4),
                        0);
    }
    /* the logits, class by class; the loss and the count on every rank */
    for (int r = 0; r < t; r++) {
        const pl_blocks_layout *l = &s->lay[r];
        for (int i = 0; i < ROWS; i++)
            for (int k = 0; k < l->classes_valid; k++) {
                double w1 = one->logits[0][i * c.classes + l->class0 + k];
                CU_ASSERT(fabs(s->logits[r][i * l->classes_local + k] - w1) <=
                          1e-5 + 1e-5 * fabs(w1));
            }
        CU_ASSERT(fabs(s->loss[r] - one->loss[0]) <= 1e-5 * fabs(one->loss[0]));
        CU_ASSERT_EQUAL(s->loss[r], s->loss[0]);
        CU_ASSERT_EQUAL(s->correct[r], one->correct[0]);
    }
    expect_ledger(s, t, sp, c.layers, c.hidden, c.inputs);
    free(g1), free(gt), free(want);
    tp_free(one), tp_free(s);
}

/* One block alone: its output and the gradient of its input, gathered over
 * the ranks' rows under SP, equal one device's; its parameters' gradients too. */
static void check_block(int t, int sp)
{
    pl_blocks_config c = small();
    tp_run *one = tp_step(1, 0, 1), *s = tp_step(t, sp, 1);
    int R = sp ? ROWS / t : ROWS, h = c.hidden;
    double want[ROWS * 8], want_dx[ROWS * 8];
    for (int i = 0; i < ROWS * h; i++) want[i] = one->out[0][i], want_dx[i] = one->dx[0][i];
    for (int r = 0; r < t; r++) {
        int first = sp ? r * R : 0;
        CU_ASSERT(
            range_close("block output", s->out[r], want + first * h, (long)R * h, 1e-6, 1e-5));
        CU_ASSERT(range_close("block dx", s->dx[r], want_dx + first * h, (long)R * h, 1e-6, 1e-5));
    }
    pl_blocks_layout W;
    pl_blocks_part p = {0, 1, 0, 0, 1, 0};
    pl_blocks_layout_make(&W, &c, p, NULL, 0);
    long n = W.nparams;
    float *g1 = calloc((size_t)n, 4), *gt = calloc((size_t)n, 4);
    double *w = calloc((size_t)n, 8);
    /* a one-block part's layout is the whole block's: unslice through a whole-model array */
    long whole = pl_blocks_count(&c);
    float *a1 = calloc((size_t)whole, 4), *at = calloc((size_t)whole, 4);
    pl_blocks_unslice(&one->lay[0], one->grads[0], a1);
    for (int r = 0; r < t; r++) pl_blocks_unslice(&s->lay[r], s->grads[r], at);
    pl_blocks_layout Wm;
    pl_blocks_layout_make(&Wm, &c, pl_blocks_whole(&c), NULL, 0);
    long b0 = Wm.block[0].begin, len = Wm.block[0].end - b0;
    for (long i = 0; i < len; i++) w[i] = a1[b0 + i];
    CU_ASSERT(range_close("block gradients", at + b0, w, len, 1e-6, 1e-5));
    /* the collectives: 2 all-reduces (plain) or 2 all-gathers + 2 reduce-scatters + 1 all-reduce
     * (SP) */
    for (int r = 0; t > 1 && r < t; r++) {
        CU_ASSERT_EQUAL(s->ledger[r].calls[PL_CALL_ALL_REDUCE], sp ? 1u : 2u);
        CU_ASSERT_EQUAL(s->ledger[r].calls[PL_CALL_ALL_GATHER], sp ? 2u : 0u);
        CU_ASSERT_EQUAL(s->ledger[r].calls[PL_CALL_REDUCE_SCATTER], sp ? 2u : 0u);
    }
    free(g1), free(gt), free(w), free(a1), free(at);
    tp_free(one), tp_free(s);
}

static void test_tp_2(void) { check_tp(2, 0); }
static void test_tp_4(void) { check_tp(4, 0); }
static void test_tp_8(void) { check_tp(8, 0); }
static void test_sp_2(void) { check_tp(2, 1); }
static void test_sp_4(void) { check_tp(4, 1); }
static void test_sp_8(void) { check_tp(8, 1); }
static void test_block_alone(void)
{
    for (int t = 1; t <= 8; t *= 2) {
        check_block(t, 0);
        check_block(t, 1);
    }
}

/* Sequence parallelism needs the rows to divide by t: the message names both. */
static char sp_msg[4][300];
static int sp_init[4];
static int sp_rank_fn(pl_rank *r)
{
    pl_tp tp;
    sp_init[r->rank] = pl_tp_init(&tp, r->comm, 1, 6, r->stream, sp_msg[r->rank], 300);
    return 0;
}

static void test_sp_rows_refused(void)
{
    pl_tp tp;
    char err[300];
    CU_ASSERT_EQUAL(pl_tp_init(&tp, NULL, 1, 0, 0, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "a micro-batch of 0 rows: it needs at least one");
    CU_ASSERT_EQUAL_FATAL(pl_world_run(4, NULL, 10, sp_rank_fn, NULL, err, sizeof err), 0);
    for (int r = 0; r < 4; r++) {
        CU_ASSERT_EQUAL(sp_init[r], -1);
        CU_ASSERT_STRING_EQUAL(sp_msg[r], "sequence parallelism splits the 6 rows of a micro-batch "
                                          "over 4 TP ranks: 6 does not divide by 4 (the nearest "
                                          "row counts that do are 4 and 8)");
    }
    /* 4 rows on 4 ranks: one each */
    CU_ASSERT_EQUAL(pl_tp_init(&tp, NULL, 1, 4, 0, err, sizeof err), 0);
    CU_ASSERT_EQUAL(tp.local_rows, 4); /* one rank: all of them */
}

/* ---- the memory a run takes (pl_blocks_run_bytes) ------------------------
 *
 * The values by hand, for h = 4 (f = 16), 64 inputs, 10 classes. One block:
 * Ψ = 64*4 + 4 (input) + 3*4 + 4*16 + 16 + 16*4 (block) + 2*4 + 4*10 + 10
 * (head) = 260 + 156 + 58 = 474; two blocks 630. An activation set of the
 * whole one-block model for B = R = 2 rows (pl_blocks_acts_bytes' list):
 * input 2*64, block x ln 8 each, mean rstd 2 each, z1 a 2*16 each, the
 * head's x ln 8 each, mean rstd 2 each, logits 2*10, rowmax sumexp target
 * losses pred 2 each: 262 floats = 1048 bytes, plus a page for each of
 * its 8 + 14 allocations (90112); the scratch 2 (3*4 + 16 + 10) floats =
 * 304 bytes and 5 pages (20480). */
static pl_blocks_run run_of(int h, int layers)
{
    pl_blocks_run r = {.model = pl_blocks_config_make(h, layers),
                       .dp = 1,
                       .tp = 1,
                       .pp = 1,
                       .chunks = 1,
                       .batch = 2,
                       .micro_batches = 1,
                       .zero_stage = -1};
    return r;
}

static void test_run_bytes(void)
{
    pl_blocks_run_memory m;
    /* one device: 16 bytes a parameter; the set and scratch; the whole
     * model drawn on the host and the part sliced from it */
    pl_blocks_run r = run_of(4, 1);
    CU_ASSERT_EQUAL(pl_blocks_count(&r.model), 474);
    CU_ASSERT_EQUAL(pl_blocks_run_bytes(&r, &m), 123320u);
    CU_ASSERT_EQUAL(m.states, 474u * 16);
    CU_ASSERT_EQUAL(m.activations, 1048u + 90112 + 304 + 20480);
    CU_ASSERT_EQUAL(m.host, 474u * 4 * 2);
    CU_ASSERT_EQUAL(m.total, m.states + m.activations + m.host);

    /* TP t = 2 with SP, B = 4 (R = 2), 3 host models: each rank holds the
     * input layer (260), a block of 3*4 + 4*8 + 8 + 8*4 = 84, the head's LNf
     * and 5 classes (8 + 20 + 5): 377 floats. A set: input 2*64, block x ln
     * 8, mean rstd 2, xfull 4*4, z1 a 4*8, head x ln 8, mean rstd 2, xfull
     * 16, logits 4*5, five of 4: 304 floats; scratch 4 (12 + 8 + 5) floats */
    r = run_of(4, 1);
    r.tp = 2;
    r.batch = 4;
    r.sequence_parallel = 1;
    r.host_models = 3;
    CU_ASSERT_EQUAL(pl_blocks_run_bytes(&r, &m), 248976u);
    CU_ASSERT_EQUAL(m.states, 2u * 377 * 16);
    CU_ASSERT_EQUAL(m.activations, 2u * (1216 + 90112 + 400 + 20480));
    CU_ASSERT_EQUAL(m.host, 2u * 474 * 4 + 2 * 377 * 4 + 3 * 474 * 4);

    /* a pipeline of 2 stages, 2 blocks, m = 2 micro-batches of 2 rows, both
     * in flight: each stage's heaviest part is one block with the input and
     * the head (the set above), and two held sets with the B/W split's
     * dy 2*4, dlogits 2*10 and dinput 2*4 more (1192 bytes, 23 pages) */
    r = run_of(4, 2);
    r.pp = 2;
    r.batch = 4;
    r.micro_batches = 2;
    r.in_flight = 2;
    CU_ASSERT_EQUAL(pl_blocks_count(&r.model), 630);
    CU_ASSERT_EQUAL(pl_blocks_run_bytes(&r, &m), 623128u);
    CU_ASSERT_EQUAL(m.states, 630u * 16);
    CU_ASSERT_EQUAL(m.activations, 2u * (91160 + 2 * (1192 + 94208) + 20784));
    CU_ASSERT_EQUAL(m.host, 2u * 630 * 4 + 630 * 4);

    /* ZeRO-3 over 4 ranks, B = 8 (2 rows each), the stage-0 engine beside
     * it, 5 host models: units 260, 156, 58 -> 60 padded: Ψ_pad = 476, a
     * shard 119, the largest unit 260. Per rank 16 Ψ_pad / 4 = 476 floats
     * and four buckets of 260; the stage-0 engine 16 Ψ_pad bytes a rank */
    r = run_of(4, 1);
    r.dp = 4;
    r.batch = 8;
    r.zero_stage = 3;
    r.extra_states = 1;
    r.host_models = 5;
    CU_ASSERT_EQUAL(pl_blocks_run_bytes(&r, &m), 974952u);
    CU_ASSERT_EQUAL(m.states, 4u * (476 + 4 * 260) * 4 + 4 * 476 * 16);
    CU_ASSERT_EQUAL(m.activations, 2u * 4 * 111944);
    CU_ASSERT_EQUAL(m.host, 4u * (474 + 476) * 4 + 5 * 474 * 4);
    /* stage 1: full parameters and gradients, the moments sharded; no buckets */
    r.zero_stage = 1;
    r.extra_states = 0;
    pl_blocks_run_bytes(&r, &m);
    CU_ASSERT_EQUAL(m.states, 4u * (476 + 476 + 2 * 119) * 4);

    /* not a run: 0 */
    r = run_of(4, 1);
    r.tp = 3; /* h = 4 does not divide by 3 */
    CU_ASSERT_EQUAL(pl_blocks_run_bytes(&r, NULL), 0u);
    r = run_of(4, 1);
    r.tp = 2;
    r.zero_stage = 1; /* ZeRO is over data parallelism alone */
    CU_ASSERT_EQUAL(pl_blocks_run_bytes(&r, NULL), 0u);
    r = run_of(4, 1);
    r.dp = 0;
    CU_ASSERT_EQUAL(pl_blocks_run_bytes(&r, NULL), 0u);

    /* it grows with each of --hidden, --layers and --batch */
    pl_blocks_run a = run_of(64, 2), b = run_of(128, 2), c = run_of(64, 4), d = run_of(64, 2);
    d.batch = 64;
    size_t base = pl_blocks_run_bytes(&a, NULL);
    CU_ASSERT(pl_blocks_run_bytes(&b, NULL) > base);
    CU_ASSERT(pl_blocks_run_bytes(&c, NULL) > base);
    CU_ASSERT(pl_blocks_run_bytes(&d, NULL) > base);
}

static void test_run_fits(void)
{
    char err[2048], src[256];
    const char *old = getenv("PARALAB_MEMORY_LIMIT");
    char *saved = old ? strdup(old) : NULL;
    setenv("PARALAB_MEMORY_LIMIT", "1G", 1);
    CU_ASSERT_EQUAL(pl_host_memory_available(src, sizeof src), (size_t)1 << 30);
    CU_ASSERT_PTR_NOT_NULL(strstr(src, "PARALAB_MEMORY_LIMIT=1G"));
    setenv("PARALAB_MEMORY_LIMIT", "123456789", 1);
    CU_ASSERT_EQUAL(pl_host_memory_available(NULL, 0), 123456789u);
    setenv("PARALAB_MEMORY_LIMIT", "lots", 1);
    CU_ASSERT_EQUAL(pl_host_memory_available(src, sizeof src), (size_t)-1);
    CU_ASSERT_PTR_NOT_NULL(strstr(src, "PARALAB_MEMORY_LIMIT=lots: not a number"));
    pl_blocks_run r = run_of(4, 1);
    CU_ASSERT_EQUAL(pl_blocks_run_fits(&r, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "PARALAB_MEMORY_LIMIT=lots"));
    unsetenv("PARALAB_MEMORY_LIMIT");
    CU_ASSERT(pl_host_memory_available(src, sizeof src) > 0); /* this machine's */

    /* exactly at the limit (the estimate, 123320, and PL_RUN_PROGRAM_BYTES)
     * it fits; a byte less, it is refused, naming the values */
    CU_ASSERT_EQUAL(PL_RUN_PROGRAM_BYTES, 134217728u);
    setenv("PARALAB_MEMORY_LIMIT", "134341048", 1);
    CU_ASSERT_EQUAL(pl_blocks_run_fits(&r, err, sizeof err), 0);
    setenv("PARALAB_MEMORY_LIMIT", "134341047", 1);
    CU_ASSERT_EQUAL(pl_blocks_run_fits(&r, err, sizeof err), -1);
    /* (the activations, at this size most of it: --batch named) */
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--hidden 4 --layers 1 --batch 2: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(err,
                                  "needs about 128.1 MiB of memory (134,341,048 bytes: the 474 "
                                  "parameters' values, gradients and AdamW moments and the "
                                  "activations, on 1 simulated GPU whose memory"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "128.1 MiB available (PARALAB_MEMORY_LIMIT=134341047)"));
    /* nothing smaller with these --layers; one block is the least */
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "with --layers 1 the widest that fits is --hidden 3"));

    /* the suggestions fit, and one more does not */
    r = run_of(1024, 64);
    r.tp = 4;
    r.batch = 64;
    r.host_models = 6;
    size_t limit = (size_t)8 << 30;
    setenv("PARALAB_MEMORY_LIMIT", "8G", 1);
    CU_ASSERT_EQUAL(pl_blocks_run_fits(&r, err, sizeof err), -1);
    int h = 0, l = 0;
    const char *ph = strstr(err, "the widest that fits is --hidden "),
               *pl = strstr(err, "the most is --layers ");
    CU_ASSERT_FATAL(ph && pl);
    CU_ASSERT_EQUAL(sscanf(ph, "the widest that fits is --hidden %d", &h), 1);
    CU_ASSERT_EQUAL(sscanf(pl, "the most is --layers %d", &l), 1);
    CU_ASSERT_EQUAL(h % 4, 0); /* TP over 4 ranks needs h a multiple of 4 */
    pl_blocks_run t = r;
    t.model = pl_blocks_config_make(h, 64);
    CU_ASSERT(pl_blocks_run_bytes(&t, NULL) + PL_RUN_PROGRAM_BYTES <= limit);
    t.model = pl_blocks_config_make(h + 4, 64);
    CU_ASSERT(pl_blocks_run_bytes(&t, NULL) + PL_RUN_PROGRAM_BYTES > limit);
    t.model = pl_blocks_config_make(1024, l);
    CU_ASSERT(pl_blocks_run_bytes(&t, NULL) + PL_RUN_PROGRAM_BYTES <= limit);
    t.model = pl_blocks_config_make(1024, l + 1);
    CU_ASSERT(pl_blocks_run_bytes(&t, NULL) + PL_RUN_PROGRAM_BYTES > limit);
    /* a batch that drives it is named */
    r = run_of(64, 2);
    r.batch = 1438;
    pl_blocks_run least = r;
    least.model = pl_blocks_config_make(1, 2);
    size_t below = pl_blocks_run_bytes(&least, NULL) + PL_RUN_PROGRAM_BYTES - 1;
    char lim[32];
    snprintf(lim, sizeof lim, "%zu", below);
    setenv("PARALAB_MEMORY_LIMIT", lim, 1);
    CU_ASSERT_EQUAL(pl_blocks_run_fits(&r, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--hidden 64 --layers 2 --batch 1438: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no --hidden or --layers fits with the others as given: a "
                                       "smaller --batch"));
    /* a limit below what the program itself takes says so */
    setenv("PARALAB_MEMORY_LIMIT", "1M", 1);
    CU_ASSERT_EQUAL(pl_blocks_run_fits(&r, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "; that is less than the 128 MiB the program itself takes"));
    if (saved) {
        setenv("PARALAB_MEMORY_LIMIT", saved, 1);
        free(saved);
    } else
        unsetenv("PARALAB_MEMORY_LIMIT");
}

int register_blocks_suite(void)
{
    static const unit_test t[] = {
        {"layout: counts and offsets (71,370 parameters by default)", test_counts},
        {"TP degrees: the message names t and lists the valid ones", test_check_messages},
        {"every part's slice written back rebuilds the whole model", test_slice_unslice},
        {"host reference: gradients equal central differences", test_reference_gradcheck},
        {"one device: loss, logits and every gradient equal the reference", test_one_device_step},
        {"TP t=2: logits, loss, gradients, replicated bits, collectives", test_tp_2},
        {"TP t=4", test_tp_4},
        {"TP t=8 (3 ranks of padding classes only)", test_tp_8},
        {"TP + sequence parallelism t=2", test_sp_2},
        {"TP + sequence parallelism t=4", test_sp_4},
        {"TP + sequence parallelism t=8 (1 row per rank)", test_sp_8},
        {"one block alone, t = 1..8, with and without SP", test_block_alone},
        {"SP: rows that do not divide by t refused, naming both", test_sp_rows_refused},
        {"a run's memory: exact bytes for small runs by hand", test_run_bytes},
        {"a run that does not fit the memory: refused, naming the values", test_run_fits},
    };
    /* and the B/W split's (test_blocks_split.c), with it */
    return UNIT_SUITE("blocks", t) || register_blocks_split_suite();
}
