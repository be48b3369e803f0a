/*
 * Lab 08 — the checks. Exercise 0 is the column-parallel layer, exercise 1
 * the row-parallel one; each is checked with the reference for the other.
 *   one step: for t in {1, 2, 4, 8}, with and without sequence
 *     parallelism, a model of h = 16, f = 64, 2 blocks and 10 classes
 *     (padded to 12 on 4 ranks, 16 on 8) on 16 rows: one block alone (its
 *     output and the gradient of its input, every element) and the whole
 *     model (logits, loss, every gradient gathered from the shards) equal
 *     the unsharded model's within 1e-6 + 1e-5 of the tensor's largest
 *     value (the same float sums in another order);
 *   with training (make check; once, in the row-parallel check, with your
 *     row- and column-parallel layers — the reference's where the latter
 *     are TODO or fail): the
 *     default model (h = 64, 2 blocks), 10
 *     SGD steps (momentum 0.9) of batch 64 for t = 2, 4, 8, with and
 *     without SP (SGD: AdamW's division by the root of the second moment
 *     grows the last-bit differences of sums in another order to ~4e-5 in
 *     10 steps; SGD keeps them at the rounding level): the
 *     gathered weights equal one device's within 1e-5 relative (+ 1e-6),
 *     the replicated parameters are the same bits on every rank after
 *     every step, and the first step's collectives on every rank (by kind
 *     and direction, forward and backward, and the bytes each rank sends)
 *     are exactly lab08_formula's; then 20 epochs of AdamW
 *     reach at least 95 % test accuracy for t = 1, 2, 4, 8 (they take
 *     minutes in the emulator; --short leaves them out and trains 10 steps
 *     on t = 2 and t = 4 with SP only).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "08_tensor_parallel/lab08.h"
#include "paralab/plural.h"
#include "registry.h"

enum { ROWS = 16 };

static pl_blocks_config small(void) { return pl_blocks_config_make(16, 2); }

/* the column-parallel functions of one table, the row-parallel of another */
static pl_tp_linear_ops mix(int exercise, const pl_tp_linear_ops *impl)
{
    const pl_tp_linear_ops *col = exercise == 0 ? impl : &lab08_solution,
                           *row = exercise == 1 ? impl : &lab08_solution;
    pl_tp_linear_ops o = {col->column_forward, row->row_forward, row->row_backward,
                          col->column_backward};
    return o;
}

/* ---- one step, gathered ---------------------------------------------------------------- */

typedef struct {
    const pl_tp_linear_ops *ops;
    int sp, block_only;
    float X[ROWS * 64], dout[ROWS * 16];
    int y[ROWS];
    int todo[8];
    float *grads[8], *logits[8], *out[8], *dx[8], loss[8];
    pl_blocks_layout lay[8];
    char error[8][300];
} step_run;

static void *to_dev(const void *h, size_t bytes)
{
    void *d = NULL;
    if (cudaMalloc(&d, bytes) == cudaSuccess) cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
    return d;
}

static void *from_dev(const void *d, size_t bytes)
{
    void *h = malloc(bytes);
    if (h) cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost);
    return h;
}

static int step_rank(pl_rank *r)
{
    step_run *s = r->arg;
    pl_blocks_config c = small();
    int t = r->size, me = r->rank, rc = 1;
    pl_blocks_part p = s->block_only ? (pl_blocks_part){0, 1, 0, 0, t, me}
                                     : (pl_blocks_part){0, c.layers, 1, 1, t, me};
    pl_blocks m;
    memset(&m, 0, sizeof m);
    pl_tp tp;
    float *dX = NULL, *dout = NULL, *out = NULL, *dx = NULL;
    int *dy = NULL;
    if (pl_blocks_layout_make(&s->lay[me], &c, p, s->error[me], 300)) return 1;
    if (pl_tp_init(&tp, r->comm, s->sp, ROWS, r->stream, s->error[me], 300)) return 1;
    int R = tp.local_rows, first = s->sp ? me * R : 0, width = s->block_only ? c.hidden : c.inputs;
    if (pl_blocks_create(&m, &s->lay[me], ROWS, R, 5)) {
        snprintf(s->error[me], 300, "out of device memory");
        return 1;
    }
    dX = to_dev(s->X + (long)first * width, (size_t)R * width * 4);
    dout = to_dev(s->dout + (long)first * c.hidden, (size_t)R * c.hidden * 4);
    dy = to_dev(s->y, sizeof s->y);
    cudaMalloc((void **)&out, (size_t)R * c.hidden * 4);
    cudaMalloc((void **)&dx, (size_t)R * c.hidden * 4);
    int e = pl_blocks_forward(&m, &m.acts, &tp, s->ops, dX, out);
    if (!e && !s->block_only) e = pl_blocks_loss(&m, &m.acts, &tp, dy, 1.0f / ROWS);
    if (!e) e = pl_blocks_backward(&m, &m.acts, &tp, s->ops, dX, dout, dx);
    if (!e) e = pl_blocks_finish_grads(&m, &tp);
    if (e == PL_TODO_STATUS) {
        s->todo[me] = 1;
        rc = 0;
        goto out;
    }
    if (e) {
        snprintf(s->error[me], 300, "%s", tp.error);
        goto out;
    }
    cudaStreamSynchronize(r->stream);
    s->grads[me] = from_dev(m.grads.data, (size_t)s->lay[me].nparams * 4);
    if (s->block_only) {
        s->out[me] = from_dev(out, (size_t)R * c.hidden * 4);
        s->dx[me] = from_dev(dx, (size_t)R * c.hidden * 4);
    } else {
        s->logits[me] = from_dev(m.acts.logits, (size_t)ROWS * s->lay[me].classes_local * 4);
        cudaMemcpy(&s->loss[me], m.loss_sum, 4, cudaMemcpyDeviceToHost);
    }
    rc = 0;
out:
    cudaFree(dX), cudaFree(dout), cudaFree(dy), cudaFree(out), cudaFree(dx);
    pl_blocks_destroy(&m);
    return rc;
}

static void step_free(step_run *s)
{
    for (int r = 0; r < 8; r++)
        free(s->grads[r]), free(s->logits[r]), free(s->out[r]), free(s->dx[r]);
    free(s);
}

/* One step on t ranks; NULL with the failure in c (or TODO marked). */
static step_run *step(const pl_tp_linear_ops *ops, int t, int sp, int block_only, pl_check *c)
{
    step_run *s = calloc(1, sizeof *s);
    if (!s) {
        pl_check_fail(c, "out of host memory");
        return NULL;
    }
    s->ops = ops;
    s->sp = sp;
    s->block_only = block_only;
    unsigned long long x = 88172645463325252ull;
    for (int i = 0; i < ROWS * 64; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        s->X[i] = (float)((double)(x >> 11) / 9007199254740992.0 * 2 - 1);
        if (i < ROWS * 16) s->dout[i] = s->X[i] * 0.5f;
    }
    for (int i = 0; i < ROWS; i++) s->y[i] = (7 * i + 3) % 10;
    char err[1200];
    if (pl_world_run(t, NULL, 30, step_rank, s, err, sizeof err)) {
        pl_check_fail(c, "t=%d%s: %s", t, sp ? " with SP" : "", err);
        step_free(s);
        return NULL;
    }
    for (int r = 0; r < t; r++)
        if (s->todo[r]) {
            pl_check_todo(c);
            step_free(s);
            return NULL;
        }
    return s;
}

/* The first element off by more than 1e-6 + 1e-5 max|want|; -1 if none. */
static long first_bad(const float *got, const float *want, long n)
{
    double mx = 0;
    for (long i = 0; i < n; i++) mx = fmax(mx, fabs(want[i]));
    for (long i = 0; i < n; i++)
        if (!(fabs((double)got[i] - want[i]) <= 1e-6 + 1e-5 * mx)) return i;
    return -1;
}

static const char *sp_name(int sp) { return sp ? " with SP" : ""; }

/* One block alone on t ranks against one device: the output, dx, the
 * block's gradients. The messages name the classic mistakes they match. */
static void check_block(int exercise, const pl_tp_linear_ops *ops, int t, int sp,
                        const step_run *one, pl_check *c)
{
    step_run *s = step(ops, t, sp, 1, c);
    if (!s) return;
    pl_blocks_config cf = small();
    int h = cf.hidden, R = sp ? ROWS / t : ROWS;
    /* b2 of the whole model, to recognise it added t times */
    long whole_n = pl_blocks_count(&cf);
    float *w = malloc((size_t)whole_n * 4);
    pl_blocks_layout W;
    pl_blocks_layout_make(&W, &cf, pl_blocks_whole(&cf), NULL, 0);
    pl_blocks_init_whole(&cf, 5, w);
    const float *b2 = w + W.block[0].b2;
    for (int r = 0; r < t && pl_check_ok(c); r++) {
        int first = sp ? r * R : 0;
        const float *want = one->out[0] + (long)first * h;
        long i = first_bad(s->out[r], want, (long)R * h);
        if (i >= 0) {
            double off = s->out[r][i] - want[i], extra = (t - 1) * (double)b2[i % h];
            if (t > 1 && fabs(off - extra) <= 1e-4 + 1e-3 * fabs(extra))
                pl_check_fail(c,
                              "t=%d%s: the block's output[%ld] on rank %d is %.6g, the unsharded "
                              "block's %.6g: %d b2 too many. b2 was added on every rank before g "
                              "summed the partials; add it once, after g",
                              t, sp_name(sp), i, r, s->out[r][i], want[i], t - 1);
            else
                pl_check_fail(c,
                              "t=%d%s: the block's output[%ld] on rank %d is %.6g, the unsharded "
                              "block's %.6g.%s",
                              t, sp_name(sp), i, r, s->out[r][i], want[i],
                              exercise == 0 ? " f enters the parallel region (identity forward), "
                                              "then z = xfull W + b on this rank's columns"
                                            : " Each rank's a W is a partial sum: g "
                                              "(pl_tp_g_forward) adds them up, then b once");
            break;
        }
        const float *want_dx = one->dx[0] + (long)first * h;
        i = first_bad(s->dx[r], want_dx, (long)R * h);
        if (i >= 0)
            pl_check_fail(c,
                          "t=%d%s: the forward is right, but the gradient of the block's input "
                          "dx[%ld] on rank %d is %.6g, the unsharded block's %.6g.%s",
                          t, sp_name(sp), i, r, s->dx[r][i], want_dx[i],
                          exercise == 0 ? " dz W^T is only this rank's part of dx: f backward "
                                          "(pl_tp_f_backward) sums the parts over the ranks"
                                        : " da = g'(dy) W^T, with g' the identity "
                                          "(pl_tp_g_backward)");
    }
    /* the block's gradients, gathered */
    float *g1 = calloc((size_t)whole_n, 4), *gt = calloc((size_t)whole_n, 4);
    pl_blocks_unslice(&one->lay[0], one->grads[0], g1);
    for (int r = 0; r < t; r++) pl_blocks_unslice(&s->lay[r], s->grads[r], gt);
    static const char *const names[] = {"ln_g", "ln_b", "b2", "W1", "b1", "W2"};
    const pl_block_offsets *o = &W.block[0];
    long off[7] = {o->ln_g, o->ln_b, o->b2, o->w1, o->b1, o->w2, o->end};
    for (int k = 0; k < 6 && pl_check_ok(c); k++) {
        long i = first_bad(gt + off[k], g1 + off[k], off[k + 1] - off[k]);
        if (i >= 0)
            pl_check_fail(c,
                          "t=%d%s: the gradient of %s[%ld], gathered from the ranks, is %.6g; the "
                          "unsharded block's is %.6g",
                          t, sp_name(sp), names[k], i, gt[off[k] + i], g1[off[k] + i]);
    }
    free(g1), free(gt), free(w);
    step_free(s);
}

/* The whole model's step on t ranks against one device. */
static void check_model(const pl_tp_linear_ops *ops, int t, int sp, const step_run *one,
                        pl_check *c)
{
    step_run *s = step(ops, t, sp, 0, c);
    if (!s) return;
    pl_blocks_config cf = small();
    for (int r = 0; r < t && pl_check_ok(c); r++) {
        const pl_blocks_layout *l = &s->lay[r];
        for (int i = 0; i < ROWS && pl_check_ok(c); i++)
            for (int k = 0; k < l->classes_valid && pl_check_ok(c); k++) {
                float got = s->logits[r][i * l->classes_local + k],
                      want = one->logits[0][i * cf.classes + l->class0 + k];
                pl_check_that(c, fabs(got - want) <= 1e-5 + 1e-5 * fabs(want),
                              "t=%d%s: rank %d's logit of class %d, row %d, is %.6g; one "
                              "device's %.6g",
                              t, sp_name(sp), r, l->class0 + k, i, got, want);
            }
        pl_check_that(c, fabs(s->loss[r] - one->loss[0]) <= 1e-5 * fabs(one->loss[0]),
                      "t=%d%s: rank %d's loss (the sum over %d rows) is %.6g; one device's %.6g", t,
                      sp_name(sp), r, ROWS, s->loss[r], one->loss[0]);
    }
    long n = pl_blocks_count(&cf);
    float *g1 = calloc((size_t)n, 4), *gt = calloc((size_t)n, 4);
    pl_blocks_unslice(&one->lay[0], one->grads[0], g1);
    for (int r = 0; r < t; r++) pl_blocks_unslice(&s->lay[r], s->grads[r], gt);
    long i = pl_check_ok(c) ? first_bad(gt, g1, n) : -1;
    if (i >= 0)
        pl_check_fail(c,
                      "t=%d%s: gradient %ld of the whole model (of %ld), gathered from the ranks, "
                      "is %.6g; one device's is %.6g",
                      t, sp_name(sp), i, n, gt[i], g1[i]);
    free(g1), free(gt);
    step_free(s);
}

void lab08_check_quick(int exercise, const pl_tp_linear_ops *impl, pl_check *c)
{
    pl_tp_linear_ops ops = mix(exercise, impl);
    step_run *one_block = step(&lab08_solution, 1, 0, 1, c), *one = NULL;
    if (one_block) one = step(&lab08_solution, 1, 0, 0, c);
    static const int degrees[] = {1, 2, 4, 8};
    for (int sp = 0; sp <= 1 && one && pl_check_ok(c); sp++)
        for (int a = 0; a < 4 && pl_check_ok(c); a++) {
            check_block(exercise, &ops, degrees[a], sp, one_block, c);
            if (pl_check_ok(c)) check_model(&ops, degrees[a], sp, one, c);
        }
    if (one_block) step_free(one_block);
    if (one) step_free(one);
}

/* ---- training ------------------------------------------------------------------------ */

/* max_steps > 0: SGD (lr 0.05, momentum 0.9) and the replicated parameters
 * compared after every step; else AdamW at the lab's lr 2e-3. */
static int train(const pl_tp_linear_ops *impl, const pl_digits *d, int t, int sp, int epochs,
                 int max_steps, lab08_result *res, pl_check *c, char *err, size_t cap)
{
    lab08_config cfg = {.hidden = 64,
                        .layers = 2,
                        .sequence_parallel = sp,
                        .batch = 64,
                        .epochs = epochs,
                        .max_steps = max_steps,
                        .lr = max_steps ? 0.05f : 2e-3f,
                        .sgd = max_steps > 0,
                        .seed = 0,
                        .check_replicated = max_steps > 0,
                        .progress = max_steps ? NULL : c};
    memset(res, 0, sizeof *res);
    lab08_run run = {.cfg = &cfg, .impl = impl, .data = d, .result = res};
    if (pl_world_run(t, NULL, 60, lab08_rank, &run, err, cap)) return -1;
    if (res->todo) {
        snprintf(err, cap, "an exercise is TODO");
        return -1;
    }
    return 0;
}

/* Training, once, in the row-parallel exercise's check (it runs last):
 * with your row-parallel layers and your column-parallel ones (the
 * reference's where those are TODO or fail their own check, so that a
 * failure here is the row-parallel layers'). A short run (the sanitizer passes)
 * trains 10 steps on t = 2 and t = 4 with SP only, and not 20 epochs. */
static void check_training(const pl_tp_linear_ops *impl, pl_check *c)
{
    pl_tp_linear_ops ops = mix(1, impl);
    pl_check col; /* your column-parallel layers train too when their own check passes */
    pl_check_begin(&col, c->lab, "column_parallel");
    lab08_check_quick(0, impl, &col);
    if (pl_check_ok(&col)) {
        ops.column_forward = impl->column_forward;
        ops.column_backward = impl->column_backward;
    }
    pl_digits d;
    char err[1200];
    if (pl_digits_load("data/digits.csv", &d, err, sizeof err)) {
        pl_check_fail(c, "%s", err);
        return;
    }
    lab08_result one, res;
    if (!pl_check_that(c, !train(&lab08_solution, &d, 1, 0, 1, 10, &one, c, err, sizeof err),
                       "one device, 10 steps: %s", err))
        goto out;
    pl_blocks_config cf = pl_blocks_default();
    static const int degrees[] = {1, 2, 4, 8};
    for (int sp = 0; sp <= 1 && pl_check_ok(c); sp++)
        for (int a = 1; a < 4 && pl_check_ok(c); a++) {
            int t = degrees[a];
            if (pl_check_short() && !(t == 2 && !sp) && !(t == 4 && sp)) continue;
            if (!pl_check_that(c, !train(&ops, &d, t, sp, 1, 10, &res, c, err, sizeof err),
                               "t=%d%s, 10 steps: %s", t, sp_name(sp), err))
                break;
            pl_check_that(c, res.init_hash == one.init_hash,
                          "t=%d%s: the gathered initial weights hash to %08x, one device's to "
                          "%08x: the shards must be slices of the whole model drawn from the seed",
                          t, sp_name(sp), res.init_hash, one.init_hash);
            for (long i = 0; i < res.nparams && pl_check_ok(c); i++)
                pl_check_that(
                    c, fabs(res.params[i] - one.params[i]) <= 1e-6 + 1e-5 * fabs(one.params[i]),
                    "t=%d%s: after 10 steps, parameter %ld of the gathered model is "
                    "%.9g; one device's is %.9g",
                    t, sp_name(sp), i, res.params[i], one.params[i]);
            pl_check_that(c, !res.replicated_differ,
                          "t=%d%s: after step %d the ranks' LayerNorm parameters differ: the "
                          "replicated parameters must stay the same bits on every rank",
                          t, sp_name(sp), res.replicated_differ);
            lab08_expect e = lab08_formula(&cf, t, sp, 64);
            for (int r = 0; r < t && pl_check_ok(c); r++)
                for (int dir = 0; dir < 2 && pl_check_ok(c); dir++) {
                    const lab08_count *g = dir ? &res.first_backward[r] : &res.first_forward[r],
                                      *w = dir ? &e.backward : &e.forward;
                    pl_check_that(c, lab08_count_equal(g, w),
                                  "t=%d%s: rank %d's %s of one step made %u all-reduces, %u "
                                  "all-gathers and %u reduce-scatters and sent %llu bytes; the "
                                  "formula for %d blocks and the head says %u, %u, %u and %llu",
                                  t, sp_name(sp), r, dir ? "backward" : "forward", g->all_reduce,
                                  g->all_gather, g->reduce_scatter, g->bytes_sent, cf.layers,
                                  w->all_reduce, w->all_gather, w->reduce_scatter, w->bytes_sent);
                }
            free(res.params);
        }
    if (pl_check_short() && pl_check_ok(c))
        pl_check_progress(c, "short run (--short): 10 steps on t = 2 and t = 4 with SP only; the "
                             "20-epoch runs are left to the plain build");
    for (int a = 0; a < 4 && pl_check_ok(c) && !pl_check_short(); a++) {
        if (!pl_check_that(c, !train(&ops, &d, degrees[a], 0, 20, 0, &res, c, err, sizeof err),
                           "t=%d, 20 epochs: %s", degrees[a], err))
            break;
        pl_check_that(c, res.test_acc >= 95.0,
                      "t=%d, 20 epochs of batch 64: test accuracy %.1f %%, below 95 %%", degrees[a],
                      res.test_acc);
        free(res.params);
    }
    free(one.params);
out:
    pl_digits_free(&d);
}

void lab08_check(int exercise, const pl_tp_linear_ops *impl, pl_check *c)
{
    lab08_check_quick(exercise, impl, c);
    if (exercise == 1 && pl_check_ok(c)) check_training(impl, c);
}

static const char *const exercises[] = {"column_parallel", "row_parallel", NULL};

static void check_entry(int exercise, int use_solution, pl_check *c)
{
    lab08_check(exercise, use_solution ? &lab08_solution : &lab08_exercise, c);
}

const pl_lab lab08_tensor_parallel = {"08_tensor_parallel", exercises, check_entry};
