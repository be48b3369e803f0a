/*
 * test_blocks_split.c — the block model's backward split into B (the
 * input gradient) and W (the weight gradients) for zero-bubble pipeline
 * schedules, and the activations' one allocation (paralab/blocks.h):
 *   - pl_blocks_acts_bytes: the bytes cudaMemGetInfo sees an activation
 *     set take, with and without the split, for a hand-counted layout and
 *     for every kind of part; each tensor 256-byte aligned, none
 *     overlapping another; k sets take k times one;
 *   - B then W equals the fused backward bit for bit (every gradient
 *     element, and the gradient of the part's input), for L = 1 and 3 and
 *     every kind of part a pipeline cuts (whole, first, middle, last,
 *     input-only, head-only): one micro-batch; three with accumulation in
 *     zero-bubble orders (all B before any W, and ZB-H1's interleaving);
 *     on 2 TP ranks with and without sequence parallelism too; run with
 *     the legacy default stream lazy (pl_device_set_lazy_default_stream),
 *     so that a buffer the ranks' non-blocking streams use but do not wait
 *     for (a cudaMemset) lands late every time, not once in a busy run;
 *   - the refusals: a block outside the part, W without its B, a second B
 *     or a forward before the W, activations without the split's buffers,
 *     a head or input layer the part has not — each message exact.
 * Part of the `blocks` suite (registered by test_blocks.c). Runs in well
 * under a second: h = 8, 8 rows.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks_ref.h"
#include "nn_ref.h"
#include "paralab/blocks.h"
#include "paralab/device.h"
#include "paralab/tp.h"
#include "paralab/world.h"
#include "suites.h"

enum { ROWS = 8, MB = 3, MAXP = 6 };

/* h = 8, f = 32, 5 classes (6 padded on 2 ranks), 6 inputs; L blocks */
static pl_blocks_config cfg(int layers)
{
    pl_blocks_config c = {.inputs = 6, .hidden = 8, .ffn = 32, .layers = layers, .classes = 5};
    return c;
}

/* ---- the one allocation ----------------------------------------------------------------- */

static size_t used_now(void)
{
    size_t fr = 0, total = 0;
    cudaMemGetInfo(&fr, &total);
    return total - fr;
}

typedef struct {
    uintptr_t p;
    size_t n;
} span;

static int by_address(const void *x, const void *y)
{
    const span *a = x, *b = y;
    return a->p < b->p ? -1 : a->p > b->p;
}

/* Every tensor of a lies 256-aligned inside [base, base + bytes), none
 * overlapping another (ln and xfull, z1 and dz1 are one tensor without
 * SP / by design). Returns the tensors seen. */
static int check_tensors(const pl_blocks_acts *a, const pl_blocks_layout *l)
{
    span s[8 * (PL_BLOCKS_MAX + 1) + 16];
    int n = 0, h = l->cfg.hidden, fl = l->ffn_local, cl = l->classes_local, B = a->rows,
        R = a->local_rows, first = l->part.first, last = l->part.last;
#define ADD(ptr, count)                                                                            \
    do {                                                                                           \
        CU_ASSERT_PTR_NOT_NULL(ptr);                                                               \
        if (ptr) s[n++] = (span){(uintptr_t)(ptr), (size_t)(count)*4};                             \
    } while (0)
    ADD(a->input, (long)R * (l->part.input ? l->cfg.inputs : h));
    for (int j = first; j <= last; j++) {
        ADD(a->x[j], (long)R * h);
        if (j == last && !l->part.head) break;
        ADD(a->ln[j], (long)R * h);
        ADD(a->mean[j], R);
        ADD(a->rstd[j], R);
        if (B != R) ADD(a->xfull[j], (long)B * h);
        CU_ASSERT(B != R || a->xfull[j] == a->ln[j]);
        if (j == last) break;
        ADD(a->z1[j], (long)B * fl);
        ADD(a->a[j], (long)B * fl);
        if (a->split) ADD(a->dy[j], (long)B * h);
        CU_ASSERT(a->dy[j] == NULL || a->split);
        CU_ASSERT_PTR_EQUAL(a->dz1[j], a->split ? a->z1[j] : NULL);
    }
    if (l->part.head) {
        ADD(a->logits, (long)B * cl);
        ADD(a->rowmax, B);
        ADD(a->sumexp, B);
        ADD(a->target, B);
        ADD(a->losses, B);
        ADD(a->pred, B);
        if (a->split) ADD(a->dlogits, (long)B * cl);
    }
    if (a->split && l->part.input) ADD(a->dinput, (long)R * h);
#undef ADD
    CU_ASSERT(a->split || (!a->dlogits && !a->dinput));
    qsort(s, (size_t)n, sizeof *s, by_address);
    size_t sum = 0; /* each tensor its own allocation: none overlaps another, and they add up */
    for (int i = 0; i < n; i++) {
        sum += s[i].n;
        if (i) CU_ASSERT(s[i - 1].p + s[i - 1].n <= s[i].p);
    }
    CU_ASSERT_EQUAL(sum, a->bytes);
    /* its list of allocations (what pl_blocks_acts_free frees): those tensors, each once */
    CU_ASSERT_EQUAL(a->nallocs, n);
    span got[8 * (PL_BLOCKS_MAX + 1) + 16];
    int k = 0;
    for (int i = 0; i < a->nallocs && i < n; i++) got[k++] = (span){(uintptr_t)a->allocs[i], 0};
    qsort(got, (size_t)k, sizeof *got, by_address);
    for (int i = 0; i < k; i++) CU_ASSERT_EQUAL(got[i].p, s[i].p);
    return n;
}

/* One set's bytes: what the function says, what the device sees, its tensors. */
static size_t measure(const pl_blocks_layout *l, int B, int R, int split)
{
    size_t want = pl_blocks_acts_bytes(l, B, R, split), before = used_now();
    pl_blocks_acts a;
    CU_ASSERT_EQUAL_FATAL(pl_blocks_acts_alloc_split(&a, l, B, R, split), cudaSuccess);
    size_t took = used_now() - before;
    CU_ASSERT_EQUAL(took, want);
    CU_ASSERT_EQUAL(a.bytes, want);
    CU_ASSERT_EQUAL(a.split, split);
    if (took != want)
        fprintf(stderr,
                "  blocks [%d, %d) input %d head %d tp %d, %d/%d rows, split %d: %zu bytes "
                "taken, pl_blocks_acts_bytes says %zu\n",
                l->part.first, l->part.last, l->part.input, l->part.head, l->part.tp, R, B, split,
                took, want);
    check_tensors(&a, l);
    pl_blocks_acts_free(&a);
    CU_ASSERT_EQUAL(used_now(), before);
    return took;
}

static void test_acts_bytes_counted(void)
{
    pl_blocks_config c = cfg(1);
    pl_blocks_layout l;
    /* one device, 8 rows (inputs 6, h 8, f 32, 5 classes), bytes:
     *   input X 8x6 floats 192
     *   block 0: x, ln 8x8 256 each, mean, rstd 8 32 each, z1, a 8x32 1024 each: 2624
     *   head: x, ln 256 each, mean, rstd 32 each, logits 8x5 160, rowmax, sumexp, target,
     *         losses, pred 32 each: 896
     * = 192 + 2624 + 896 = 3712; the split adds dy[0] 8x8 256, dlogits 8x5 160, dinput 8x8 256 */
    CU_ASSERT_EQUAL_FATAL(pl_blocks_layout_make(&l, &c, pl_blocks_whole(&c), NULL, 0), 0);
    CU_ASSERT_EQUAL(pl_blocks_acts_bytes(&l, ROWS, ROWS, 0), 3712u);
    CU_ASSERT_EQUAL(pl_blocks_acts_bytes(&l, ROWS, ROWS, 1), 3712u + 672u);
    CU_ASSERT_EQUAL(measure(&l, ROWS, ROWS, 0), 3712u);
    CU_ASSERT_EQUAL(measure(&l, ROWS, ROWS, 1), 4384u);
    /* rank 1 of 2 under sequence parallelism: 4 local rows, f/t = 16, Cp/t = 3:
     *   input 4x6 96; block 0: x, ln 4x8 128 each, mean, rstd 16 each, xfull 8x8 256, z1, a
     *   8x16 512 each: 1568; head: x, ln 128 each, mean, rstd 16 each, xfull 256, logits 8x3
     *   96, rowmax .. pred 5 x 32: 800
     * = 96 + 1568 + 800 = 2464; the split: dy 8x8 256, dlogits 8x3 96, dinput 4x8 128 */
    pl_blocks_part p = {0, 1, 1, 1, 2, 1};
    CU_ASSERT_EQUAL_FATAL(pl_blocks_layout_make(&l, &c, p, NULL, 0), 0);
    CU_ASSERT_EQUAL(pl_blocks_acts_bytes(&l, ROWS, ROWS / 2, 0), 2464u);
    CU_ASSERT_EQUAL(measure(&l, ROWS, ROWS / 2, 0), 2464u);
    CU_ASSERT_EQUAL(measure(&l, ROWS, ROWS / 2, 1), 2944u);
    /* rows out of range: nothing to allocate, and the alloc refuses them */
    CU_ASSERT_EQUAL(pl_blocks_acts_bytes(&l, ROWS, ROWS + 1, 0), 0u);
    CU_ASSERT_EQUAL(pl_blocks_acts_bytes(&l, 0, 0, 1), 0u);
    pl_blocks_acts a;
    CU_ASSERT_EQUAL(pl_blocks_acts_alloc_split(&a, &l, ROWS, 0, 1), cudaErrorInvalidValue);
}

/* Every kind of part a pipeline cuts of L = 3, on 1 and 2 TP ranks (± SP):
 * the function's bytes are the device's; k sets take k times one (what a
 * stage's activation gauge counts). */
static void test_acts_bytes_parts(void)
{
    pl_blocks_config c = cfg(3);
    pl_blocks_part parts[MAXP] = {{0, 3, 1, 1, 1, 0}, {0, 1, 1, 0, 1, 0}, {1, 2, 0, 0, 1, 0},
                                  {2, 3, 0, 1, 1, 0}, {0, 0, 1, 0, 1, 0}, {3, 3, 0, 1, 1, 0}};
    for (int i = 0; i < MAXP; i++)
        for (int t = 1; t <= 2; t++)
            for (int sp = 0; sp <= (t > 1); sp++) {
                pl_blocks_part p = parts[i];
                p.tp = t;
                p.tp_rank = t - 1;
                pl_blocks_layout l;
                CU_ASSERT_EQUAL_FATAL(pl_blocks_layout_make(&l, &c, p, NULL, 0), 0);
                int R = sp ? ROWS / t : ROWS;
                size_t one = measure(&l, ROWS, R, 0), one_split = measure(&l, ROWS, R, 1);
                CU_ASSERT(one_split > one);
                pl_blocks_acts a[4];
                size_t before = used_now();
                for (int k = 0; k < 4; k++)
                    CU_ASSERT_EQUAL_FATAL(pl_blocks_acts_alloc_split(&a[k], &l, ROWS, R, 1),
                                          cudaSuccess);
                CU_ASSERT_EQUAL(used_now() - before, 4 * one_split);
                for (int k = 0; k < 4; k++) pl_blocks_acts_free(&a[k]);
                CU_ASSERT_EQUAL(used_now(), before);
            }
}

/* ---- B then W against the fused backward --------------------------------------------------- */

/* One configuration, run twice on every rank: the fused backward's order
 * and a split one, from the same seed and micro-batches. */
typedef struct {
    int layers;
    pl_blocks_part part; /* tp and tp_rank filled per rank */
    int sp, finish;      /* sequence parallelism; pl_blocks_finish_grads at the end */
    const char *order[2];
    /* the micro-batches, full rows: X (inputs or h wide), the output's gradient, labels */
    float X[MB][ROWS * 8], dout[MB][ROWS * 8];
    int y[MB][ROWS];
    /* per rank and run: the gradients and each micro-batch's gradient of the input */
    float *grads[2][2], dx[2][2][MB][ROWS * 8];
    long nparams[2];
    char error[2][300];
} split_run;

/* Runs `order` ("F0 F1 B0 W0 ..."; BWk the fused backward) on a fresh part:
 * the loss of micro-batch k right before its BW or B (it writes the
 * part's d_out), accumulate from each kind's second op on (the first
 * overwrites: the gradients start as NaN bytes). */
static int run_order(split_run *s, pl_rank *r, const pl_blocks_layout *l, int v, char *err)
{
    pl_blocks_config c = l->cfg;
    int me = r->rank, split = strstr(s->order[v], "BW") == NULL;
    pl_tp tp;
    if (pl_tp_init(&tp, r->comm, s->sp, ROWS, r->stream, err, 300)) return 1;
    int R = tp.local_rows, row0 = s->sp ? me * R : 0, h = c.hidden;
    int width = l->part.input ? c.inputs : h;
    pl_blocks m;
    pl_blocks_acts a[MB];
    float *X[MB] = {0}, *dout[MB] = {0}, *dx[MB] = {0};
    int *y[MB] = {0}, rc = 1;
    memset(a, 0, sizeof a);
    if (pl_blocks_create(&m, l, ROWS, R, 11)) {
        snprintf(err, 300, "pl_blocks_create failed");
        return 1;
    }
    /* Every write to device memory the ops below read or overwrite goes on
     * r->stream (or is a synchronous copy, done when it returns): the rank's
     * stream is non-blocking, so it does not wait for the legacy default
     * stream, and a cudaMemset there could land after the backward wrote dx
     * (check_split runs this with the legacy stream lazy, so it would). */
    cudaMemsetAsync(m.grads.data, 0xff, (size_t)l->nparams * 4, r->stream); /* NaN: all written */
    for (int k = 0; k < MB; k++) {
        if (pl_blocks_acts_alloc_split(&a[k], l, ROWS, R, split)) goto out;
        cudaMalloc((void **)&X[k], (size_t)R * width * 4);
        cudaMalloc((void **)&dout[k], (size_t)R * h * 4);
        cudaMalloc((void **)&dx[k], (size_t)R * h * 4);
        cudaMalloc((void **)&y[k], ROWS * sizeof(int));
        cudaMemcpy(X[k], s->X[k] + (long)row0 * width, (size_t)R * width * 4,
                   cudaMemcpyHostToDevice);
        cudaMemcpy(dout[k], s->dout[k] + (long)row0 * h, (size_t)R * h * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(y[k], s->y[k], ROWS * sizeof(int), cudaMemcpyHostToDevice);
        cudaMemsetAsync(dx[k], 0, (size_t)R * h * 4, r->stream);
    }
    int seen[3] = {0, 0, 0}; /* BW or B, W */
    const char *o = s->order[v];
    while (*o) {
        while (*o == ' ') o++;
        int kind = o[0] == 'F' ? 0 : o[0] == 'W' ? 2 : 1, e = 0;
        o += o[0] == 'B' && o[1] == 'W' ? 2 : 1;
        int k = *o++ - '0';
        tp.accumulate = kind && seen[kind]++ > 0;
        if (kind == 0)
            e = pl_blocks_forward(&m, &a[k], &tp, NULL, X[k], NULL);
        else if (kind == 1 && l->part.head)
            e = pl_blocks_loss(&m, &a[k], &tp, y[k], 1.0f / (MB * ROWS));
        if (!e && kind == 1 && !split)
            e = pl_blocks_backward(&m, &a[k], &tp, NULL, X[k], dout[k], dx[k]);
        else if (!e && kind == 1)
            e = pl_blocks_backward_input(&m, &a[k], &tp, X[k], dout[k], dx[k]);
        else if (!e && kind == 2)
            e = pl_blocks_backward_weight(&m, &a[k], &tp, X[k]);
        if (e) {
            snprintf(err, 300, "%s: %s", s->order[v], tp.error);
            goto out;
        }
    }
    if (s->finish && pl_blocks_finish_grads(&m, &tp)) {
        snprintf(err, 300, "finish: %s", tp.error);
        goto out;
    }
    cudaStreamSynchronize(r->stream);
    s->nparams[me] = l->nparams;
    s->grads[me][v] = malloc((size_t)l->nparams * 4);
    cudaMemcpy(s->grads[me][v], m.grads.data, (size_t)l->nparams * 4, cudaMemcpyDeviceToHost);
    for (int k = 0; k < MB; k++)
        cudaMemcpy(s->dx[me][v][k], dx[k], (size_t)R * h * 4, cudaMemcpyDeviceToHost);
    rc = 0;
out:
    for (int k = 0; k < MB; k++) {
        pl_blocks_acts_free(&a[k]);
        cudaFree(X[k]), cudaFree(dout[k]), cudaFree(dx[k]), cudaFree(y[k]);
    }
    pl_blocks_destroy(&m);
    return rc;
}

static int split_rank(pl_rank *r)
{
    split_run *s = r->arg;
    pl_blocks_config c = cfg(s->layers);
    pl_blocks_part p = s->part;
    p.tp = r->size;
    p.tp_rank = r->rank;
    pl_blocks_layout l;
    if (pl_blocks_layout_make(&l, &c, p, s->error[r->rank], 300)) return 1;
    for (int v = 0; v < 2; v++)
        if (run_order(s, r, &l, v, s->error[r->rank])) return 1;
    return 0;
}

/* The first element where two runs differ, by tensor name; 0 if none. */
static int same_bits(const pl_blocks_layout *l, const float *want, const float *got,
                     const char *what)
{
    if (!memcmp(want, got, (size_t)l->nparams * 4)) return 1;
    for (long i = 0; i < l->nparams; i++)
        if (memcmp(want + i, got + i, 4)) {
            fprintf(stderr, "  %s: gradient [%ld] = %.9g, fused %.9g\n", what, i, got[i], want[i]);
            break;
        }
    return 0;
}

/* Runs fused against split on t ranks for L blocks and part p; every
 * gradient and every micro-batch's dx the same bits on every rank. */
static void check_split(int layers, pl_blocks_part p, int t, int sp, const char *fused,
                        const char *split)
{
    split_run *s = calloc(1, sizeof *s);
    s->layers = layers;
    s->part = p;
    s->sp = sp;
    s->finish = sp;
    s->order[0] = fused;
    s->order[1] = split;
    ref_rng rng = {77};
    for (int k = 0; k < MB; k++) {
        ref_fill(&rng, s->X[k], ROWS * 8, -1, 1);
        ref_fill(&rng, s->dout[k], ROWS * 8, -0.5, 0.5);
        for (int i = 0; i < ROWS; i++) s->y[k][i] = (5 * i + 2 * k + 1) % 5;
    }
    char err[1200];
    /* the simulated GPU runs legacy-stream work only when something waits
     * for it: work the ranks' streams race with lands late every time */
    pl_device_set_lazy_default_stream(1);
    int rc = pl_world_run(t, NULL, 10, split_rank, s, err, sizeof err);
    pl_device_set_lazy_default_stream(0);
    if (rc) fprintf(stderr, "  L=%d t=%d sp=%d %s: %s\n", layers, t, sp, split, err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    pl_blocks_config c = cfg(layers);
    char what[160];
    for (int r = 0; r < t; r++) {
        pl_blocks_part pr = p;
        pr.tp = t;
        pr.tp_rank = r;
        pl_blocks_layout l;
        pl_blocks_layout_make(&l, &c, pr, NULL, 0);
        snprintf(what, sizeof what, "L=%d blocks [%d, %d) input %d head %d, t=%d sp=%d rank %d, %s",
                 layers, p.first, p.last, p.input, p.head, t, sp, r, split);
        CU_ASSERT(same_bits(&l, s->grads[r][0], s->grads[r][1], what));
        /* a NaN left anywhere: some gradient never written */
        for (long i = 0; i < l.nparams; i++)
            if (s->grads[r][1][i] != s->grads[r][1][i]) {
                CU_FAIL("a gradient was never written");
                break;
            }
        int R = sp ? ROWS / t : ROWS, mbs = 0; /* the micro-batches run: one F each */
        for (const char *o = split; *o; o++) mbs += *o == 'F';
        if (!p.input)
            for (int k = 0; k < mbs; k++) {
                CU_ASSERT_EQUAL(memcmp(s->dx[r][0][k], s->dx[r][1][k], (size_t)R * c.hidden * 4),
                                0);
                int nonzero = 0;
                for (int i = 0; i < R * c.hidden; i++) nonzero += s->dx[r][1][k][i] != 0;
                CU_ASSERT(nonzero > 0);
            }
        free(s->grads[r][0]), free(s->grads[r][1]);
    }
    free(s);
}

/* The parts a pipeline of L blocks cuts: whole, first stage, a middle one,
 * the last; for L = 3 also an input-only and a head-only part. */
static int parts_of(int layers, pl_blocks_part *p)
{
    if (layers == 1) {
        pl_blocks_part q[4] = {
            {0, 1, 1, 1, 1, 0}, {0, 1, 1, 0, 1, 0}, {0, 1, 0, 0, 1, 0}, {0, 1, 0, 1, 1, 0}};
        memcpy(p, q, sizeof q);
        return 4;
    }
    pl_blocks_part q[MAXP] = {{0, 3, 1, 1, 1, 0}, {0, 1, 1, 0, 1, 0}, {1, 2, 0, 0, 1, 0},
                              {1, 3, 0, 1, 1, 0}, {0, 0, 1, 0, 1, 0}, {3, 3, 0, 1, 1, 0}};
    memcpy(p, q, sizeof q);
    return MAXP;
}

static void test_split_one_micro_batch(void)
{
    for (int L = 1; L <= 3; L += 2) {
        pl_blocks_part p[MAXP];
        int n = parts_of(L, p);
        for (int i = 0; i < n; i++) check_split(L, p[i], 1, 0, "F0 BW0", "F0 B0 W0");
    }
}

/* UNIT_SHORT (the sanitizer pass): the multi-micro-batch orders on L = 3
 * only, whose 6 parts hold every combination of input layer and head that
 * L = 1's 4 parts do (and the input layer or the head alone); the plain pass
 * runs both. */
#define SPLIT_L_FIRST (unit_short() ? 3 : 1)

static void test_split_zero_bubble_orders(void)
{
    for (int L = SPLIT_L_FIRST; L <= 3; L += 2) {
        pl_blocks_part p[MAXP];
        int n = parts_of(L, p);
        for (int i = 0; i < n; i++) {
            /* all B before the W, and a stage's ZB-H1 order (W k deferred past B k+1) */
            check_split(L, p[i], 1, 0, "F0 F1 F2 BW0 BW1 BW2", "F0 F1 F2 B0 B1 B2 W0 W1 W2");
            check_split(L, p[i], 1, 0, "F0 F1 F2 BW0 BW1 BW2", "F0 F1 B0 F2 B1 W0 B2 W1 W2");
        }
    }
}

static void test_split_tp2(void)
{
    for (int sp = 0; sp <= 1; sp++)
        for (int L = SPLIT_L_FIRST; L <= 3; L += 2) {
            pl_blocks_part p[MAXP];
            int n = parts_of(L, p);
            for (int i = 0; i < n; i++) {
                check_split(L, p[i], 2, sp, "F0 BW0", "F0 B0 W0");
                check_split(L, p[i], 2, sp, "F0 F1 F2 BW0 BW1 BW2", "F0 F1 B0 F2 B1 W0 B2 W1 W2");
            }
        }
}

/* ---- refusals ---------------------------------------------------------------------------- */

static void test_split_refusals(void)
{
    pl_blocks_config c = cfg(3);
    pl_blocks_layout l;
    CU_ASSERT_EQUAL_FATAL(pl_blocks_layout_make(&l, &c, pl_blocks_whole(&c), NULL, 0), 0);
    pl_blocks m;
    pl_blocks_acts a, plain;
    CU_ASSERT_EQUAL_FATAL(pl_blocks_create(&m, &l, ROWS, ROWS, 11), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(pl_blocks_acts_alloc_split(&a, &l, ROWS, ROWS, 1), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(pl_blocks_acts_alloc(&plain, &l, ROWS, ROWS), cudaSuccess);
    float X[ROWS * 6];
    int y[ROWS];
    ref_rng rng = {5};
    ref_fill(&rng, X, ROWS * 6, -1, 1);
    for (int i = 0; i < ROWS; i++) y[i] = i % 5;
    float *dX;
    int *dy;
    cudaMalloc((void **)&dX, sizeof X);
    cudaMalloc((void **)&dy, sizeof y);
    cudaMemcpy(dX, X, sizeof X, cudaMemcpyHostToDevice);
    cudaMemcpy(dy, y, sizeof y, cudaMemcpyHostToDevice);
    pl_tp tp;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(pl_tp_init(&tp, NULL, 0, ROWS, 0, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(pl_blocks_forward(&m, &a, &tp, NULL, dX, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(pl_blocks_loss(&m, &a, &tp, dy, 1.0f / ROWS), 0);
    CU_ASSERT_EQUAL_FATAL(pl_blocks_head_backward_input(&m, &a, &tp), 0);
    /* blocks outside [0, 3) */
    int bad[3] = {3, -1, PL_BLOCKS_MAX};
    for (int i = 0; i < 3; i++) {
        tp.error[0] = '\0';
        CU_ASSERT_EQUAL(pl_blocks_block_backward_input(&m, &a, &tp, bad[i]), cudaErrorInvalidValue);
        char want[120];
        snprintf(want, sizeof want, "B (input gradient) of block %d: this part holds blocks [0, 3)",
                 bad[i]);
        CU_ASSERT_STRING_EQUAL(tp.error, want);
        CU_ASSERT_EQUAL(pl_blocks_block_backward_weight(&m, &a, &tp, bad[i]),
                        cudaErrorInvalidValue);
    }
    CU_ASSERT_EQUAL(pl_blocks_block_backward_weight(&m, &a, &tp, 3), cudaErrorInvalidValue);
    CU_ASSERT_STRING_EQUAL(tp.error,
                           "W (weight gradient) of block 3: this part holds blocks [0, 3)");
    /* W without its B: block 2's B has not run */
    CU_ASSERT_EQUAL(pl_blocks_block_backward_weight(&m, &a, &tp, 2), cudaErrorInvalidValue);
    CU_ASSERT_STRING_EQUAL(tp.error, "W (weight gradient) of block 2 without its B: B must run "
                                     "first on these activations (W reads what it keeps)");
    CU_ASSERT_EQUAL(pl_blocks_input_backward_weight(&m, &a, &tp, dX), cudaErrorInvalidValue);
    CU_ASSERT_STRING_EQUAL(tp.error, "W (weight gradient) of the input layer without its B: B must "
                                     "run first on these activations (W reads what it keeps)");
    /* a second B, or a forward, before the W */
    CU_ASSERT_EQUAL(pl_blocks_head_backward_input(&m, &a, &tp), cudaErrorInvalidValue);
    CU_ASSERT_STRING_EQUAL(tp.error, "B (input gradient) of the head on activations whose W has "
                                     "not run: B kept its data there for W, which must run first");
    CU_ASSERT_EQUAL(pl_blocks_head_forward(&m, &a, &tp, NULL), cudaErrorInvalidValue);
    CU_ASSERT_STRING_EQUAL(tp.error, "forward of the head on activations whose W has not run: B "
                                     "kept its data there for W, which must run first");
    CU_ASSERT_EQUAL(pl_blocks_block_backward_input(&m, &a, &tp, 2), 0);
    CU_ASSERT_EQUAL(pl_blocks_forward(&m, &a, &tp, NULL, dX, NULL), cudaErrorInvalidValue);
    CU_ASSERT_STRING_EQUAL(tp.error, "forward of block 2 on activations whose W has not run: B "
                                     "kept its data there for W, which must run first");
    /* after the W: forward again */
    CU_ASSERT_EQUAL(pl_blocks_block_backward_weight(&m, &a, &tp, 2), 0);
    CU_ASSERT_EQUAL(pl_blocks_head_backward_weight(&m, &a, &tp), 0);
    CU_ASSERT_EQUAL(pl_blocks_head_backward_weight(&m, &a, &tp), cudaErrorInvalidValue);
    CU_ASSERT_STRING_EQUAL(tp.error, "W (weight gradient) of the head without its B: B must run "
                                     "first on these activations (W reads what it keeps)");
    CU_ASSERT_EQUAL(pl_blocks_forward(&m, &a, &tp, NULL, dX, NULL), 0);
    /* activations without the split's buffers */
    CU_ASSERT_EQUAL(pl_blocks_forward(&m, &plain, &tp, NULL, dX, NULL), 0);
    CU_ASSERT_EQUAL(pl_blocks_backward_input(&m, &plain, &tp, dX, NULL, NULL),
                    cudaErrorInvalidValue);
    CU_ASSERT_STRING_EQUAL(tp.error, "B (input gradient) of the head: these activations have no "
                                     "room for what B keeps for W (make them with "
                                     "pl_blocks_acts_alloc_split, split = 1)");
    CU_ASSERT_EQUAL(pl_blocks_block_backward_weight(&m, &plain, &tp, 0), cudaErrorInvalidValue);
    CU_ASSERT_STRING_EQUAL(tp.error, "W (weight gradient) of block 0: these activations have no "
                                     "room for what B keeps for W (make them with "
                                     "pl_blocks_acts_alloc_split, split = 1)");
    pl_blocks_acts_free(&a);
    pl_blocks_acts_free(&plain);
    pl_blocks_destroy(&m);
    /* a part without the head, without the input layer */
    pl_blocks_part mid = {1, 2, 0, 0, 1, 0};
    CU_ASSERT_EQUAL_FATAL(pl_blocks_layout_make(&l, &c, mid, NULL, 0), 0);
    CU_ASSERT_EQUAL_FATAL(pl_blocks_create(&m, &l, ROWS, ROWS, 11), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(pl_blocks_acts_alloc_split(&a, &l, ROWS, ROWS, 1), cudaSuccess);
    CU_ASSERT_EQUAL(pl_blocks_head_backward_input(&m, &a, &tp), cudaErrorInvalidValue);
    CU_ASSERT_STRING_EQUAL(tp.error, "B (input gradient) of the head: this part (blocks [1, 2)) "
                                     "has none");
    CU_ASSERT_EQUAL(pl_blocks_input_backward_weight(&m, &a, &tp, NULL), cudaErrorInvalidValue);
    CU_ASSERT_STRING_EQUAL(tp.error, "W (weight gradient) of the input layer: this part (blocks "
                                     "[1, 2)) has none");
    CU_ASSERT_EQUAL(pl_blocks_block_backward_input(&m, &a, &tp, 0), cudaErrorInvalidValue);
    CU_ASSERT_STRING_EQUAL(tp.error,
                           "B (input gradient) of block 0: this part holds blocks [1, 2)");
    pl_blocks_acts_free(&a);
    pl_blocks_destroy(&m);
    cudaFree(dX), cudaFree(dy);
}

int register_blocks_split_suite(void)
{
    static const unit_test t[] = {
        {"activations: one allocation, pl_blocks_acts_bytes counted by hand",
         test_acts_bytes_counted},
        {"activations: bytes = the device's, every part, t 1-2, k sets = k x one",
         test_acts_bytes_parts},
        {"B then W = the fused backward, bit for bit (L 1, 3; every part)",
         test_split_one_micro_batch},
        {"3 micro-batches: all B then all W, and ZB-H1's order = fused, bit for bit",
         test_split_zero_bubble_orders},
        {"B/W on 2 TP ranks, with and without SP: = fused, bit for bit", test_split_tp2},
        {"refused: blocks outside the part, W without B, F or B before W, no split buffers",
         test_split_refusals},
    };
    return UNIT_SUITE("blocks-split", t);
}
