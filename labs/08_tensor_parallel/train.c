/*
 * train.c — Lab 08's training loop, run by every rank (lab08_rank).
 *
 * The t ranks form one TP group: each holds its shard of every block
 * (paralab/blocks.h) and all of them see the same batch — the data is not
 * split, the model is. Under sequence parallelism each rank holds the
 * batch's rows [r B/t, (r+1) B/t) of the activations outside the parallel
 * region (the input layer, LayerNorm, the residual). A step: the input
 * layer, each block (LayerNorm, the column-parallel W1 between f and GELU,
 * the row-parallel W2 before g), the head (LNf, the column-parallel
 * classifier, the vocabulary-parallel cross-entropy), the same backward,
 * the replicated parameters' gradients summed over the group under SP, and
 * AdamW on every rank's shard. The loss is the batch's mean.
 *
 * The epoch's last partial batch is dropped, as Lab 07 does; the test set
 * is evaluated in batches of B rows, the last one padded with rows no
 * label matches.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "08_tensor_parallel/lab08.h"
#include "harness/train.h" /* FAIL, CK, STEP, BEGIN */
#include "paralab/cuda_check.h"
#include "paralab/device.h"
#include "paralab/dist.h"
#include "paralab/nn.h"
#include "paralab/plural.h"
#include "paralab/step.h"
#include "paralab/trace.h"

/* The bytes one rank sends in a ring collective of `bytes` (S, the whole
 * array; paralab/collectives.h): all-reduce 2(t-1)/t S, all-gather and
 * reduce-scatter (t-1)/t S. */
static unsigned long long ring_ar(unsigned long long bytes, unsigned long long t)
{
    return bytes * 2 * (t - 1) / t;
}
static unsigned long long ring_half(unsigned long long bytes, unsigned long long t)
{
    return bytes * (t - 1) / t;
}

lab08_expect lab08_formula(const pl_blocks_config *c, int t, int sp, int rows)
{
    lab08_expect e;
    memset(&e, 0, sizeof e);
    if (t == 1) return e; /* a collective over one rank is not called */
    unsigned L = (unsigned)c->layers;
    unsigned long long h = (unsigned long long)c->hidden, n = (unsigned long long)t;
    unsigned long long act = (unsigned long long)rows * h * 4; /* one activation [rows, h] */
    unsigned long long vec = (unsigned long long)rows * 4;     /* rows values */
    lab08_count *f = &e.forward, *b = &e.backward;
    /* the loss: all-reduces of the row max, the target logit, the sum of
     * exponentials, and the predictions */
    f->all_reduce = 4;
    f->bytes_sent = 4 * ring_ar(vec, n);
    if (!sp) {
        /* forward: each block's g; backward: each block's f and the head's */
        f->all_reduce += L;
        f->bytes_sent += L * ring_ar(act, n);
        b->all_reduce = L + 1;
        b->bytes_sent = (L + 1) * ring_ar(act, n);
    } else {
        /* forward: each block's f (all-gather) and g (reduce-scatter), the
         * head's f; backward: each block's g' (all-gather) and f'
         * (reduce-scatter), the head's f' */
        f->all_gather = L + 1;
        f->reduce_scatter = L;
        f->bytes_sent += (2ull * L + 1) * ring_half(act, n);
        b->all_gather = L;
        b->reduce_scatter = L + 1;
        b->bytes_sent = (2ull * L + 1) * ring_half(act, n);
        /* then the replicated gradients summed: each block's LayerNorm and
         * b2 (3h), the input layer (inputs h + h), LNf (2h) */
        b->all_reduce = L + 2;
        b->bytes_sent += L * ring_ar(3 * h * 4, n) +
                         ring_ar(((unsigned long long)c->inputs * h + h) * 4, n) +
                         ring_ar(2 * h * 4, n);
    }
    e.total.all_reduce = f->all_reduce + b->all_reduce;
    e.total.all_gather = f->all_gather + b->all_gather;
    e.total.reduce_scatter = f->reduce_scatter + b->reduce_scatter;
    e.total.bytes_sent = f->bytes_sent + b->bytes_sent;
    return e;
}

/* What the ledger counted between two snapshots. */
static lab08_count counted(const pl_ledger *a, const pl_ledger *b)
{
    lab08_count k = {
        (unsigned)(b->calls[PL_CALL_ALL_REDUCE] - a->calls[PL_CALL_ALL_REDUCE]),
        (unsigned)(b->calls[PL_CALL_ALL_GATHER] - a->calls[PL_CALL_ALL_GATHER]),
        (unsigned)(b->calls[PL_CALL_REDUCE_SCATTER] - a->calls[PL_CALL_REDUCE_SCATTER]),
        (unsigned long long)(b->bytes_sent - a->bytes_sent)};
    return k;
}

int lab08_count_equal(const lab08_count *a, const lab08_count *b)
{
    return a->all_reduce == b->all_reduce && a->all_gather == b->all_gather &&
           a->reduce_scatter == b->reduce_scatter && a->bytes_sent == b->bytes_sent;
}

/* ---- the shards pane's events: which matrix a rank multiplies ----------------------- */

typedef struct {
    pl_rank *r;
    const pl_tp_linear_ops *impl;
    int classes_padded;
    int trace;
    /* the narration of the first row-parallel forward, said just before
     * it, so that the step's work (and the shards pane) is W2's */
    char w2_text[640];
    int w2_pending;
} tracer;

static void emit(pl_tp *tp, int backward, const char *name, double start, double mstart)
{
    tracer *t = tp->user;
    if (!t->trace || !t->r->trace) return;
    pl_event e;
    memset(&e, 0, sizeof e);
    e.rank = t->r->rank;
    e.lane = PL_LANE_COMPUTE;
    e.kind = (uint8_t)(backward ? PL_EV_BACKWARD : PL_EV_FORWARD);
    e.micro_batch = -1;
    e.layer = tp->layer;
    e.peer = -1;
    e.start = start;
    e.end = pl_trace_now();
    e.modeled_start = mstart;
    e.modeled_end = pl_device_stream_now(tp->stream);
    snprintf(e.label, sizeof e.label, "%s", name);
    pl_trace_record(t->r->trace, &e);
}

#define TRACED(call, backward, name)                                                               \
    do {                                                                                           \
        double s_ = pl_trace_now(), m_ = pl_device_stream_now(tp->stream);                         \
        int rc_ = (call);                                                                          \
        if (!rc_) emit(tp, backward, name, s_, m_);                                                \
        return rc_;                                                                                \
    } while (0)

static const char *column_name(pl_tp *tp, int n)
{
    return n == ((tracer *)tp->user)->classes_padded && tp->layer < 0 ? "Wc" : "W1";
}

static int t_column_forward(pl_tp *tp, const float *x, float *xfull, const float *W, const float *b,
                            float *z, int k, int n)
{
    TRACED(((tracer *)tp->user)->impl->column_forward(tp, x, xfull, W, b, z, k, n), 0,
           column_name(tp, n));
}
static int t_row_forward(pl_tp *tp, const float *a, const float *W, const float *b, float *partial,
                         float *y, int k, int n)
{
    tracer *t = tp->user;
    if (t->w2_pending) {
        t->w2_pending = 0;
        if (pl_step(t->r, "%s", t->w2_text)) { /* the run is stopping */
            snprintf(tp->error, sizeof tp->error, "stopped at the narration of W2");
            return -1;
        }
    }
    TRACED(((tracer *)tp->user)->impl->row_forward(tp, a, W, b, partial, y, k, n), 0, "W2");
}
static int t_row_backward(pl_tp *tp, const float *dy, const float *a, const float *W, float *dW,
                          float *db, float *dyfull, float *da, int k, int n)
{
    TRACED(((tracer *)tp->user)->impl->row_backward(tp, dy, a, W, dW, db, dyfull, da, k, n), 1,
           "W2");
}
static int t_column_backward(pl_tp *tp, const float *dz, const float *xfull, const float *W,
                             float *dW, float *db, float *dxfull, float *dx, int k, int n)
{
    TRACED(((tracer *)tp->user)->impl->column_backward(tp, dz, xfull, W, dW, db, dxfull, dx, k, n),
           1, column_name(tp, n));
}
static const pl_tp_linear_ops traced = {t_column_forward, t_row_forward, t_row_backward,
                                        t_column_backward};

/* ---- the loop ------------------------------------------------------------------------- */

/* A call of the model (and through it the exercise): its failure, or the
 * exercise's TODO, ends the run. */
#define RUN(call)                                                                                  \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ == PL_TODO_STATUS) {                                                               \
            res->todo = 1;                                                                         \
            status = 0;                                                                            \
            goto out;                                                                              \
        }                                                                                          \
        if (rc_) FAIL("%s", tp.error[0] ? tp.error : #call " failed");                             \
    } while (0)

/* run->rows: taken by every rank (the first allocates them), left by every
 * rank (the last frees them). */
static pthread_mutex_t rows_lock = PTHREAD_MUTEX_INITIALIZER;
static float *rows_take(lab08_run *run, int n, long floats, int me)
{
    pthread_mutex_lock(&rows_lock);
    if (!run->users) run->rows = calloc((size_t)n * (size_t)floats, sizeof(float));
    float *mine = run->rows ? run->rows + (size_t)me * (size_t)floats : NULL;
    if (mine) run->users++;
    pthread_mutex_unlock(&rows_lock);
    return mine;
}
static void rows_leave(lab08_run *run)
{
    pthread_mutex_lock(&rows_lock);
    if (--run->users == 0) {
        free(run->rows);
        run->rows = NULL;
    }
    pthread_mutex_unlock(&rows_lock);
}

/* After a barrier: every rank's row (mine, in run->rows) on rank 0, in
 * run->part (under mpirun the other processes' rows come to it). */
static void rows_to_rank0(pl_rank *r, lab08_run *run, long floats)
{
    size_t bytes = (size_t)floats * sizeof(float);
    pl_dist_gather_host(r->comm, run->rows, bytes, bytes);
    if (r->rank == 0)
        for (int q = 0; q < r->size; q++) run->part[q] = run->rows + (size_t)q * (size_t)floats;
}

/* Every rank's parameters to rank 0, written into the whole model (host). */
static int gather(pl_rank *r, lab08_run *run, const pl_blocks *m, float *mine, float *whole)
{
    if (cudaMemcpy(mine, m->params.data, (size_t)m->lay.nparams * sizeof(float),
                   cudaMemcpyDeviceToHost))
        return -1;
    run->part[r->rank] = mine;
    if (pl_comm_barrier(r->comm)) return -1;
    rows_to_rank0(r, run, m->lay.nparams);
    if (r->rank == 0) {
        pl_blocks_config c = m->lay.cfg;
        for (int q = 0; q < r->size; q++) {
            pl_blocks_layout l;
            pl_blocks_part p = {0, c.layers, 1, 1, r->size, q};
            if (pl_blocks_layout_make(&l, &c, p, NULL, 0) || l.nparams != m->lay.nparams)
                return -1; /* a row is lay.nparams floats on every rank */
            pl_blocks_unslice(&l, run->part[q], whole);
        }
    }
    return pl_comm_barrier(r->comm) ? -1 : 0;
}

/* 1 when the replicated parameters (LayerNorm's, b2, the input layer, LNf)
 * of every rank are rank 0's bits; on every rank. */
static int replicated_same(pl_rank *r, lab08_run *run, const pl_blocks *m, float *mine, int *same)
{
    if (cudaMemcpy(mine, m->params.data, (size_t)m->lay.nparams * sizeof(float),
                   cudaMemcpyDeviceToHost))
        return -1;
    run->part[r->rank] = mine;
    if (pl_comm_barrier(r->comm)) return -1;
    rows_to_rank0(r, run, m->lay.nparams);
    const pl_blocks_layout *l = &m->lay;
    int ok = 1;
    for (int q = 1; q < r->size && r->rank == 0; q++) {
        const float *a = run->part[0], *b = run->part[q];
        ok &= !memcmp(a, b, (size_t)l->in_end * sizeof(float));
        for (int j = 0; j < l->cfg.layers; j++)
            ok &= !memcmp(a + l->block[j].begin, b + l->block[j].begin,
                          (size_t)(l->block[j].shard - l->block[j].begin) * sizeof(float));
        ok &= !memcmp(a + l->head_begin, b + l->head_begin,
                      (size_t)(l->head_shard - l->head_begin) * sizeof(float));
    }
    *same = ok;
    return pl_comm_barrier(r->comm) ? -1 : 0;
}

int lab08_rank(pl_rank *r)
{
    lab08_run *run = r->arg;
    const lab08_config *cfg = run->cfg;
    lab08_result *res = run->result;
    const pl_dataset *train = &run->data->train, *test = &run->data->test;
    int t = r->size, me = r->rank, status = 1, B = cfg->batch;
    cudaStream_t cs = r->stream;
    pl_blocks m;
    memset(&m, 0, sizeof m);
    pl_tp tp;
    memset(&tp, 0, sizeof tp);
    float *hx = NULL, *dx = NULL, *mine = NULL, *whole = NULL;
    int *hy = NULL, *dy = NULL, *order = NULL;
    pl_blocks_config c = pl_blocks_config_make(cfg->hidden, cfg->layers);
    pl_blocks_layout lay;
    pl_blocks_part part = {0, c.layers, 1, 1, t, me};
    char why[512];
    if (pl_blocks_layout_make(&lay, &c, part, why, sizeof why)) FAIL("%s", why);
    if (pl_tp_init(&tp, r->comm, cfg->sequence_parallel, B, cs, why, sizeof why)) FAIL("%s", why);
    tracer tr = {r, run->impl, lay.classes_padded, cfg->trace_linears, "", 0};
    tp.user = &tr;
    const pl_tp_linear_ops *ops = &traced;
    int R = tp.local_rows, first = cfg->sequence_parallel ? me * R : 0;
    CK(pl_blocks_create(&m, &lay, B, R, cfg->seed));
    hx = malloc((size_t)B * PL_DIGITS_FEATURES * sizeof *hx);
    hy = malloc((size_t)B * sizeof *hy);
    order = malloc((size_t)train->n * sizeof *order);
    mine = rows_take(run, t, lay.nparams, me); /* every rank's lay.nparams are the same */
    whole = malloc((size_t)pl_blocks_count(&c) * sizeof *whole);
    if (!hx || !hy || !order || !mine || !whole) FAIL("out of host memory");
    CK(cudaMalloc((void **)&dx, (size_t)R * PL_DIGITS_FEATURES * sizeof(float)));
    CK(cudaMalloc((void **)&dy, (size_t)B * sizeof(int)));

    if (gather(r, run, &m, mine, whole)) FAIL("gathering the initial weights failed");
    if (me == 0) res->init_hash = pl_blocks_hash(whole, pl_blocks_count(&c));
    int f = c.ffn, fl = lay.ffn_local, h = c.hidden;
    if (t == 1)
        STEP("1 rank holds the whole block model: %d block%s of h = %d (W1 %dx%d, W2 %dx%d), "
             "%ld parameters drawn from seed %llu (hash %08x). With --devices t each rank would "
             "hold 1/t of every block.",
             c.layers, pl_s(c.layers), h, h, f, f, h, pl_blocks_count(&c), cfg->seed,
             res->init_hash);
    else
        STEP("%d ranks share every block: W1 [%dx%d] is cut into %d column shards of %dx%d, W2 "
             "[%dx%d] into %d row shards of %dx%d; the classifier's %d classes%s into %d each. "
             "The weights were drawn whole from seed %llu and sliced: gathered, they hash to "
             "%08x for any t. This rank holds %ld of the model's %ld parameters.",
             t, h, f, t, h, fl, f, h, t, fl, h, c.classes,
             lay.classes_padded != c.classes ? " (padded)" : "", lay.classes_local, cfg->seed,
             res->init_hash, lay.nparams, pl_blocks_count(&c));

    int steps_per_epoch = train->n / B;
    double modeled_total = 0, measured_total = 0;
    int steps = 0;
    for (int epoch = 1; epoch <= cfg->epochs; epoch++) {
        if (epoch > 1) BEGIN();
        pl_shuffle(order, train->n, cfg->seed, epoch);
        CK(pl_blocks_reset_correct(&m, cs));
        double loss_sum = 0;
        int seen = 0;
        for (int k = 0; k < steps_per_epoch; k++) {
            int narrate = cfg->narrate && epoch == 1 && k == 0;
            const int *rows = order + (long)k * B;
            for (int i = 0; i < B; i++) {
                memcpy(hx + (size_t)i * PL_DIGITS_FEATURES,
                       train->x + (size_t)rows[i] * PL_DIGITS_FEATURES,
                       PL_DIGITS_FEATURES * sizeof *hx);
                hy[i] = train->y[rows[i]];
            }
            pl_ledger before = pl_comm_ledger(r->comm);
            double t0 = pl_trace_now(), m0 = pl_device_stream_now(cs);
            CK(cudaMemcpyAsync(dx, hx + (size_t)first * PL_DIGITS_FEATURES,
                               (size_t)R * PL_DIGITS_FEATURES * sizeof(float),
                               cudaMemcpyHostToDevice, cs));
            CK(cudaMemcpyAsync(dy, hy, (size_t)B * sizeof(int), cudaMemcpyHostToDevice, cs));
            if (narrate) {
                if (cfg->sequence_parallel && t > 1)
                    STEP("A batch of %d samples, the same on every rank: TP splits the model, not "
                         "the data. With sequence parallelism each rank keeps %d of its rows "
                         "outside the parallel region: the input layer and LayerNorm run on "
                         "[%d x %d] per rank.",
                         B, R, R, h);
                else
                    STEP("A batch of %d samples, the same on every rank: TP splits the model, not "
                         "the data. The input layer (64 -> %d, replicated) runs on every rank.",
                         B, h);
            }
            RUN(pl_blocks_input_forward(&m, &m.acts, &tp, dx));
            for (int j = 0; j < c.layers; j++) {
                if (narrate && j == 0)
                    STEP("Block 0 forward. LayerNorm, then f: %s. Column-parallel W1: rank r "
                         "computes z1 = x W1_r + b1_r, [%d x %d], its own %d columns, and GELU "
                         "on them: no communication.",
                         cfg->sequence_parallel && t > 1
                             ? "an all-gather of the ranks' rows, so that every rank has the "
                               "whole input"
                             : "the identity (every rank already has the whole input)",
                         B, fl, fl);
                if (narrate && j == 0) {
                    snprintf(tr.w2_text, sizeof tr.w2_text,
                             "Row-parallel W2: each rank's GELU(z1_r) W2_r is a partial [%d x %d]; "
                             "g %s, then b2 is added once and the residual. %s",
                             B, h,
                             t == 1 ? "has nothing to sum on one rank"
                             : cfg->sequence_parallel
                                 ? "reduce-scatters the partials: each rank gets the sum of its "
                                   "rows"
                                 : "all-reduces the partials: every rank gets their sum",
                             t == 1 ? "On t ranks: one collective forward per block."
                                    : "One block, one collective forward.");
                    tr.w2_pending = 1; /* said by the traced row_forward, before W2 */
                }
                if (narrate && j == 1) {
                    char which[48];
                    if (c.layers == 2)
                        snprintf(which, sizeof which, "Block 1");
                    else if (c.layers == 3)
                        snprintf(which, sizeof which, "Blocks 1 and 2");
                    else
                        snprintf(which, sizeof which, "Blocks 1 to %d", c.layers - 1);
                    STEP("%s the same way: LayerNorm, W1's column shards, GELU, W2's row "
                         "shards and g%s.",
                         which, t == 1 ? " (nothing to sum on one rank)" : "");
                }
                RUN(pl_blocks_block_forward(&m, &m.acts, &tp, ops, j));
            }
            if (narrate && t == 1)
                STEP("The head: LNf, f, and the classifier: all %d classes on the one rank (on t "
                     "ranks it is column-parallel over the classes).",
                     c.classes);
            else if (narrate)
                STEP("The head: LNf, f, and the classifier column-parallel over the classes "
                     "(rank r: classes %d r to %d r + %d%s).",
                     lay.classes_local, lay.classes_local, lay.classes_local - 1,
                     lay.classes_padded != c.classes ? "; the padding classes never count" : "");
            RUN(pl_blocks_head_forward(&m, &m.acts, &tp, ops));
            RUN(pl_blocks_loss(&m, &m.acts, &tp, dy, 1.0f / (float)B));
            pl_ledger mid = pl_comm_ledger(r->comm); /* forward | backward */
            float step_loss = 0;
            CK(cudaMemcpyAsync(&step_loss, m.loss_sum, sizeof step_loss, cudaMemcpyDeviceToHost,
                               cs));
            CK(cudaStreamSynchronize(cs));
            if (narrate && t == 1)
                STEP("Cross-entropy of the logits: %.4f. On t ranks the logits would never be "
                     "gathered: each keeps its classes', and three all-reduces of %d values (the "
                     "row max, the target logit, the sum of exponentials) and one of the "
                     "predictions give every rank the loss.",
                     step_loss / B, B);
            else if (narrate)
                STEP("Vocabulary-parallel cross-entropy: the logits are never gathered. Three "
                     "all-reduces of %d values (the row max, the target logit, the sum of "
                     "exponentials) and one of the predictions give every rank the loss: %.4f.",
                     B, step_loss / B);
            if (narrate && t == 1)
                STEP("Backward, the head then block by block. On one rank f and g have nothing to "
                     "do; on t ranks g backward is the identity and f backward all-reduces the "
                     "column-parallel layers' dx = dz W_r^T, each rank's part of it.");
            else if (narrate)
                STEP("Backward, the head then block by block: g backward is %s; the "
                     "column-parallel layers' dx = dz W_r^T is each rank's part, and f backward "
                     "%s it.",
                     cfg->sequence_parallel ? "an all-gather" : "the identity",
                     cfg->sequence_parallel ? "reduce-scatters" : "all-reduces");
            RUN(pl_blocks_head_backward(&m, &m.acts, &tp, ops));
            for (int j = c.layers - 1; j >= 0; j--)
                RUN(pl_blocks_block_backward(&m, &m.acts, &tp, ops, j));
            RUN(pl_blocks_input_backward(&m, &m.acts, &tp, dx));
            RUN(pl_blocks_finish_grads(&m, &tp));
            CK(cudaStreamSynchronize(cs));
            if (steps == 0) { /* every rank's collectives of the first step, by direction */
                pl_ledger after = pl_comm_ledger(r->comm);
                res->first_forward[me] = counted(&before, &mid);
                res->first_backward[me] = counted(&mid, &after);
                if (me == 0) res->first_loss = step_loss / B;
            }
            if (narrate) {
                lab08_expect e = lab08_formula(&c, t, cfg->sequence_parallel, B);
                const lab08_count *fw = &res->first_forward[me], *bw = &res->first_backward[me];
                int same = lab08_count_equal(fw, &e.forward) && lab08_count_equal(bw, &e.backward);
                STEP("This step's collectives on rank %d, from the ledger: forward %u "
                     "all-reduce%s, %u all-gather%s, %u reduce-scatter%s, %llu bytes sent; "
                     "backward %u, %u, %u, %llu bytes. The formula for %d block%s and the head "
                     "%s: %u, %u, %u, %llu; %u, %u, %u, %llu.",
                     me, fw->all_reduce, pl_s(fw->all_reduce), fw->all_gather, pl_s(fw->all_gather),
                     fw->reduce_scatter, pl_s(fw->reduce_scatter), fw->bytes_sent, bw->all_reduce,
                     bw->all_gather, bw->reduce_scatter, bw->bytes_sent, c.layers, pl_s(c.layers),
                     same ? "gives the same" : "says otherwise", e.forward.all_reduce,
                     e.forward.all_gather, e.forward.reduce_scatter, e.forward.bytes_sent,
                     e.backward.all_reduce, e.backward.all_gather, e.backward.reduce_scatter,
                     e.backward.bytes_sent);
            }
            CK(cfg->sgd ? pl_blocks_sgd(&m, cfg->lr, cs) : pl_blocks_adamw(&m, cfg->lr, cs));
            CK(cudaStreamSynchronize(cs));
            loss_sum += step_loss;
            seen += B;
            modeled_total += pl_device_stream_now(cs) - m0;
            measured_total += pl_trace_now() - t0;
            steps++;
            if (me == 0) pl_metric(r, "loss", step_loss / B);
            if (narrate) BEGIN();
            if (cfg->check_replicated || narrate) {
                int same = 1;
                if (replicated_same(r, run, &m, mine, &same))
                    FAIL("comparing the ranks' LayerNorm parameters failed");
                if (me == 0 && !same && !res->replicated_differ) res->replicated_differ = steps;
            }
            if (narrate)
                STEP("%s on %s. The replicated parameters (LayerNorm's, b2, "
                     "the input layer, LNf) are %s on every rank%s.",
                     cfg->sgd ? "SGD" : "AdamW",
                     t == 1 ? "the rank's parameters" : "each rank's shard",
                     res->replicated_differ ? "NOT the same" : "the same bits",
                     cfg->sequence_parallel && t > 1
                         ? ": under SP each rank saw only its rows, so their gradients were "
                           "summed over the group first"
                         : ": their gradients came from the same whole activations");
            if (narrate) BEGIN();
            if (cfg->max_steps && steps >= cfg->max_steps) break;
        }
        /* the epoch: the training rows predicted right (the same count on
         * every rank), then the test set */
        int right = 0, test_right = 0;
        CK(cudaMemcpy(&right, m.correct, sizeof right, cudaMemcpyDeviceToHost));
        CK(pl_blocks_reset_correct(&m, cs));
        for (int s0 = 0; s0 < test->n; s0 += B) {
            int b2 = test->n - s0 < B ? test->n - s0 : B;
            for (int i = 0; i < B; i++) { /* padding rows: zeros, a label nothing matches */
                if (i < b2)
                    memcpy(hx + (size_t)i * PL_DIGITS_FEATURES,
                           test->x + (size_t)(s0 + i) * PL_DIGITS_FEATURES,
                           PL_DIGITS_FEATURES * sizeof *hx);
                else
                    memset(hx + (size_t)i * PL_DIGITS_FEATURES, 0, PL_DIGITS_FEATURES * sizeof *hx);
                hy[i] = i < b2 ? test->y[s0 + i] : -1;
            }
            CK(cudaMemcpyAsync(dx, hx + (size_t)first * PL_DIGITS_FEATURES,
                               (size_t)R * PL_DIGITS_FEATURES * sizeof(float),
                               cudaMemcpyHostToDevice, cs));
            CK(cudaMemcpyAsync(dy, hy, (size_t)B * sizeof(int), cudaMemcpyHostToDevice, cs));
            tr.trace = 0;
            RUN(pl_blocks_forward(&m, &m.acts, &tp, ops, dx, NULL));
            RUN(pl_blocks_loss(&m, &m.acts, &tp, dy, 0.0f));
            tr.trace = cfg->trace_linears;
            CK(cudaStreamSynchronize(cs));
        }
        CK(cudaMemcpy(&test_right, m.correct, sizeof test_right, cudaMemcpyDeviceToHost));
        double ep_loss = seen ? loss_sum / seen : 0, tr_acc = seen ? 100.0 * right / seen : 0,
               te_acc = 100.0 * test_right / test->n;
        if (me == 0) {
            res->train_acc = tr_acc;
            res->test_acc = te_acc;
            if (epoch - 1 < 1000) res->epoch_loss[epoch - 1] = ep_loss;
            if (cfg->progress && (epoch % 5 == 0 || epoch == cfg->epochs))
                pl_check_progress(cfg->progress, "t=%d%s, epoch %d/%d: loss %.4f, test %.1f %%", t,
                                  cfg->sequence_parallel ? " SP" : "", epoch, cfg->epochs, ep_loss,
                                  te_acc);
        }
        CK(pl_blocks_reset_correct(&m, cs));
        STEP("Epoch %d/%d: loss %.4f (the mean over %d samples), train %.1f %%, test %.1f %%.",
             epoch, cfg->epochs, ep_loss, seen, tr_acc, te_acc);
        if (me == 0) pl_metric(r, "epoch loss", ep_loss);
        if (cfg->max_steps && steps >= cfg->max_steps) break;
    }
    if (gather(r, run, &m, mine, whole)) FAIL("gathering the weights failed");
    if (me == 0) {
        res->steps = steps;
        res->modeled_step = steps ? modeled_total / steps : 0;
        res->measured_step = steps ? measured_total / steps : 0;
        res->nparams = pl_blocks_count(&c);
        res->params = whole;
        whole = NULL;
    }
    status = 0;
out:
    cudaStreamSynchronize(cs);
    pl_blocks_destroy(&m);
    cudaFree(dx);
    cudaFree(dy);
    free(hx);
    free(hy);
    free(order);
    if (mine) rows_leave(run);
    free(whole);
    return status;
}
