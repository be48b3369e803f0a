/*
 * train.c — Lab 09's training loop, run by every stage (lab09_rank).
 *
 * The p ranks form one pipeline: rank r is stage r and holds its blocks of
 * the model (paralab/pp_blocks.h: pl_pp_split's cut, the input layer on
 * stage 0, the head on stage p - 1). A step cuts the global batch of B rows
 * into m micro-batches of B / m rows and runs the schedule's lists on the
 * executor (paralab/pp_exec.h): each stage its own list, the activations
 * sent forward and the gradients backward between neighbours; then the
 * optimizer on every stage's own parameters. The loss is the batch's mean:
 * each micro-batch's loss is scaled by 1 / B, once.
 *
 * The first step is narrated from what the executor recorded (each op's
 * start and end, the activations each stage held): the micro-batch that
 * crossed the stages first, the bubble, the steady state, the flush, the
 * optimizer step. The epoch's last partial batch is dropped, as Lab 08
 * does; the test set is evaluated in batches of B rows, the last padded
 * with rows no label matches.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "09_pipeline_parallel/lab09.h"
#include "harness/train.h" /* FAIL, CK, STEP, BEGIN */
#include "paralab/cuda_check.h"
#include "paralab/device.h"
#include "paralab/dist.h"
#include "paralab/plural.h"
#include "paralab/step.h"
#include "paralab/trace.h"

#define PP(call)                                                                                   \
    do {                                                                                           \
        if (call) FAIL("%s", pp.error[0] ? pp.error : #call " failed");                            \
    } while (0)
#define BARRIER()                                                                                  \
    do {                                                                                           \
        if (pl_comm_barrier(r->comm)) FAIL("a barrier of the stages failed");                      \
    } while (0)

/* Times on the clock the build has: modeled on simulated GPUs. */
static int modeled(void) { return pl_device_caps()->modeled; }
static double rec_start(const pl_pp_record *x) { return modeled() ? x->start : x->measured_start; }
static double rec_end(const pl_pp_record *x) { return modeled() ? x->end : x->measured_end; }

void lab09_run_init(lab09_run *run, const lab09_config *cfg, const pl_digits *data,
                    lab09_result *result)
{
    memset(run, 0, sizeof *run);
    run->cfg = cfg;
    run->data = data;
    run->result = result;
    pl_lab_shared_init(&run->shared);
}

/* Virtual stage q's blocks (stage q % p, its chunk q / p) and its layout. */
static int vstage_layout(const pl_blocks_config *c, int p, int v, int q, pl_blocks_layout *l)
{
    int first[PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS], count[PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS];
    if (pl_pp_split(c->layers, p, v, first, count, NULL, 0)) return -1;
    pl_blocks_part part = {first[q], first[q] + count[q], q == 0, q == p * v - 1, 1, 0};
    return pl_blocks_layout_make(l, c, part, NULL, 0);
}

/* The process's rows (lab09_run, pl_lab_shared_take): a row of the most
 * floats any stage holds, and of the most ops any stage's list has. */
typedef struct {
    lab09_run *run;
    const pl_blocks_config *c;
    int p;
} rows_arg;

static void rows_free(void *arg)
{
    lab09_run *run = arg;
    free(run->rows);
    free(run->recs);
    run->rows = NULL;
    run->recs = NULL;
}

static int rows_make(void *arg, char *err, size_t cap)
{
    const rows_arg *a = arg;
    lab09_run *run = a->run;
    int p = a->p, v = run->cfg->chunks;
    long most = 0;
    for (int st = 0; st < p; st++) {
        long k = 0;
        for (int ch = 0; ch < v; ch++) {
            pl_blocks_layout l;
            if (vstage_layout(a->c, p, v, ch * p + st, &l)) {
                snprintf(err, cap, "stage %d's layout was refused", st);
                return -1;
            }
            k += l.nparams;
        }
        if (k > most) most = k;
    }
    int ops = 0;
    for (int st = 0; st < run->cfg->schedule->stages; st++)
        if (run->cfg->schedule->n[st] > ops) ops = run->cfg->schedule->n[st];
    run->rows_stride = most;
    run->recs_stride = ops > 0 ? ops : 1;
    run->rows = calloc((size_t)p * (size_t)most, sizeof(float));
    run->recs = calloc((size_t)p * (size_t)run->recs_stride, sizeof *run->recs);
    if (!run->rows || !run->recs) {
        rows_free(run);
        snprintf(err, cap, "out of host memory");
        return -1;
    }
    for (int q = 0; q < p; q++) run->rec[q] = run->recs + (size_t)q * (size_t)run->recs_stride;
    return 0;
}

/* Each stage's parameters (or gradients) in its row, its chunks one after
 * another; under mpirun the other processes' rows to rank 0; rank 0 writes
 * each chunk into its place in the whole model (host). */
static int gather(pl_rank *r, lab09_run *run, const pl_pp_blocks *pp, int grads, float *whole)
{
    float *row = run->rows + (size_t)r->rank * (size_t)run->rows_stride;
    long at = 0;
    for (int c = 0; c < pp->chunks; c++) {
        const pl_blocks *b = &pp->part[c];
        const pl_tensor *t = grads ? &b->grads : &b->params;
        if (cudaMemcpy(row + at, t->data, (size_t)b->lay.nparams * sizeof(float),
                       cudaMemcpyDeviceToHost))
            return -1;
        at += b->lay.nparams;
    }
    if (pl_comm_barrier(r->comm)) return -1;
    size_t row_bytes = (size_t)run->rows_stride * sizeof(float);
    pl_dist_gather_host(r->comm, run->rows, row_bytes, row_bytes);
    if (r->rank == 0) {
        int p = r->size, v = pp->chunks;
        for (int st = 0; st < p; st++) {
            const float *from = run->rows + (size_t)st * (size_t)run->rows_stride;
            for (int ch = 0; ch < v; ch++) {
                pl_blocks_layout l;
                if (vstage_layout(&pp->cfg, p, v, ch * p + st, &l)) return -1;
                pl_blocks_unslice(&l, from, whole);
                from += l.nparams;
            }
        }
    }
    return pl_comm_barrier(r->comm) ? -1 : 0;
}

/* "blocks 2 to 3", "block 2", "no block" */
static void blocks_text(int first, int count, char *buf, size_t cap)
{
    if (count == 1)
        snprintf(buf, cap, "block %d", first);
    else if (count == 2)
        snprintf(buf, cap, "blocks %d and %d", first, first + 1);
    else
        snprintf(buf, cap, "blocks %d to %d", first, first + count - 1);
}

/* Step [1]: which blocks on which stage, and their parameters. */
static void cut_text(const lab09_config *cfg, int p, char *buf, size_t cap)
{
    int v = cfg->chunks, L = cfg->layers;
    pl_blocks_config c = pl_blocks_config_make(cfg->hidden, L);
    int first[PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS], count[PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS];
    buf[0] = 0;
    if (pl_pp_split(L, p, v, first, count, NULL, 0)) return;
    int pv = p * v, each = L / pv, extra = L % pv;
    if (p == 1)
        pl_appendf(buf, cap, "1 stage holds the whole block model (%d block%s of h = %d)", L,
                   pl_s(L), cfg->hidden);
    else if (v == 1)
        pl_appendf(
            buf, cap,
            "%d stages share the %d blocks: each gets floor(L/p) = %d%s (picotron's rule), "
            "the input layer goes with stage 0, the head (LNf, the classifier) with stage %d",
            p, L, each,
            extra ? (extra == 1 ? ", and the first stage 1 more" : ", and the first L mod p 1 more")
                  : "",
            p - 1);
    else
        pl_appendf(
            buf, cap,
            "%d stages of %d chunks each: the %d blocks are cut into p v = %d virtual stages of "
            "%d block%s%s; stage r holds virtual stages r, p + r, ... (Megatron-LM's "
            "interleaving)",
            p, v, L, pv, each, pl_s(each), extra ? " (the first L mod p v one more)" : "");
    pl_appendf(buf, cap, ". ");
    long total = 0;
    for (int r = 0; r < p; r++) {
        long n = 0;
        char which[160] = "";
        for (int ch = 0; ch < v; ch++) {
            int q = ch * p + r;
            pl_blocks_layout l;
            pl_blocks_part part = {first[q], first[q] + count[q], q == 0, q == pv - 1, 1, 0};
            if (pl_blocks_layout_make(&l, &c, part, NULL, 0)) return;
            n += l.nparams;
            char b[48];
            blocks_text(first[q], count[q], b, sizeof b);
            pl_appendf(which, sizeof which, "%s%s%s%s", ch ? " + " : "", q == 0 ? "input, " : "", b,
                       q == pv - 1 ? ", head" : "");
        }
        total += n;
        pl_appendf(buf, cap, "%sstage %d: %s (%ld parameters)", r ? "; " : "", r, which, n);
    }
    pl_appendf(buf, cap, "; %ld in all.", total);
}

/* One op list as text, at most max ops then "...". */
static void ops_text(const pl_pp_record *rec, int n, int v, int max, char *buf, size_t cap)
{
    buf[0] = 0;
    for (int i = 0; i < n && i < max; i++) {
        char name[24];
        pl_pp_op_name(rec[i].op, v, name, sizeof name);
        pl_appendf(buf, cap, "%s%s", i ? " " : "", name);
    }
    if (n > max) pl_appendf(buf, cap, " ... (%d ops)", n);
}

int lab09_rank(pl_rank *r)
{
    lab09_run *run = r->arg;
    const lab09_config *cfg = run->cfg;
    lab09_result *res = run->result;
    const pl_dataset *train = &run->data->train, *test = &run->data->test;
    int p = r->size, me = r->rank, status = 1, B = cfg->batch, m = cfg->micro_batches,
        v = cfg->chunks, last = p - 1;
    cudaStream_t cs = r->stream;
    pl_pp_blocks pp;
    memset(&pp, 0, sizeof pp);
    float *hx = NULL, *dx = NULL, *whole = NULL;
    int *hy = NULL, *dy = NULL, *order = NULL;
    int created = 0, have_rows = 0;
    pl_blocks_config c = pl_blocks_config_make(cfg->hidden, cfg->layers);
    char why[1024];
    if (pl_pp_blocks_create(&pp, &c, p > 1 ? r->comm : NULL, v, B, m, cfg->seed, cs, why,
                            sizeof why))
        FAIL("%s", why);
    created = 1;
    rows_arg ra = {run, &c, p};
    if (pl_lab_shared_take(&run->shared, rows_make, &ra, why, sizeof why)) FAIL("%s", why);
    have_rows = 1;
    pp.exec.trace = r->trace;
    pp.exec.world_rank = me;
    hx = malloc((size_t)B * PL_DIGITS_FEATURES * sizeof *hx);
    hy = malloc((size_t)B * sizeof *hy);
    order = malloc((size_t)train->n * sizeof *order);
    whole = malloc((size_t)pl_blocks_count(&c) * sizeof *whole);
    if (!hx || !hy || !order || !whole) FAIL("out of host memory");
    CK(cudaMalloc((void **)&dx, (size_t)B * PL_DIGITS_FEATURES * sizeof(float)));
    CK(cudaMalloc((void **)&dy, (size_t)B * sizeof(int)));

    if (gather(r, run, &pp, 0, whole)) FAIL("gathering the initial weights failed");
    if (me == 0) res->init_hash = pl_blocks_hash(whole, pl_blocks_count(&c));
    {
        char cut[2048];
        cut_text(cfg, p, cut, sizeof cut);
        STEP("%s Drawn whole from seed %llu and sliced: gathered, they hash to %08x for any p. "
             "The schedule: %s, validated before anything runs.",
             cut, cfg->seed, res->init_hash, cfg->schedule_from);
    }

    int steps_per_epoch = train->n / B, rows = B / m;
    size_t msg_bytes = (size_t)rows * c.hidden * sizeof(float);
    double modeled_total = 0, measured_total = 0;
    int steps = 0;
    for (int epoch = 1; epoch <= cfg->epochs; epoch++) {
        if (epoch > 1) BEGIN();
        pl_shuffle(order, train->n, cfg->seed, epoch);
        if (me == last) CK(pl_blocks_reset_correct(&pp.part[v - 1], cs));
        double loss_sum = 0;
        int seen = 0;
        for (int k = 0; k < steps_per_epoch; k++) {
            int narrate = cfg->narrate && epoch == 1 && k == 0;
            const int *rws = order + (long)k * B;
            for (int i = 0; i < B; i++) {
                memcpy(hx + (size_t)i * PL_DIGITS_FEATURES,
                       train->x + (size_t)rws[i] * PL_DIGITS_FEATURES,
                       PL_DIGITS_FEATURES * sizeof *hx);
                hy[i] = train->y[rws[i]];
            }
            if (narrate) BEGIN();
            double t0 = pl_trace_now(), m0 = pl_device_stream_now(cs);
            if (me == 0)
                CK(cudaMemcpyAsync(dx, hx, (size_t)B * PL_DIGITS_FEATURES * sizeof(float),
                                   cudaMemcpyHostToDevice, cs));
            if (me == last)
                CK(cudaMemcpyAsync(dy, hy, (size_t)B * sizeof(int), cudaMemcpyHostToDevice, cs));
            float step_loss = 0;
            PP(pl_pp_blocks_step(&pp, cfg->schedule, dx, dy, &step_loss));
            if (steps == 0) { /* what the first step held, and its timing */
                pl_pp_timing tm;
                if (pl_pp_measure(&pp.exec, !modeled(), &tm)) FAIL("%s", pp.exec.error);
                res->peak_bytes[me] = pp.peak_bytes;
                res->measured_peak[me] = pp.measured_peak_bytes;
                res->acts_bytes[me] = pl_pp_blocks_acts_bytes(&pp, 0);
                res->peak_in_flight[me] = pp.peak_in_flight;
                if (me == 0) res->first = tm;
                if (pp.exec.result.ops > run->recs_stride)
                    FAIL("stage %d ran %d ops, more than its list's %d", me, pp.exec.result.ops,
                         run->recs_stride);
                pl_pp_record *row = run->recs + (size_t)me * (size_t)run->recs_stride;
                memcpy(row, pp.exec.result.record, (size_t)pp.exec.result.ops * sizeof *row);
                run->nrec[me] = pp.exec.result.ops;
                if (cfg->keep_grads) {
                    if (gather(r, run, &pp, 1, whole)) FAIL("gathering the gradients failed");
                    if (me == 0) {
                        res->grads = malloc((size_t)pl_blocks_count(&c) * sizeof(float));
                        if (!res->grads) FAIL("out of host memory");
                        memcpy(res->grads, whole, (size_t)pl_blocks_count(&c) * sizeof(float));
                    }
                }
            }
            run->loss[me] = me == last ? step_loss : 0;
            BARRIER();
            TO_ALL(run->loss);
            step_loss = (float)run->loss[last]; /* the last stage's, on every stage */
            if (steps == 0) {                   /* what steps [2] to [5] say of every stage */
                TO_RANK0(res->peak_bytes);
                TO_RANK0(res->measured_peak);
                TO_RANK0(res->acts_bytes);
                TO_RANK0(res->peak_in_flight);
                TO_RANK0(run->nrec);
                size_t rec_bytes = (size_t)run->recs_stride * sizeof *run->recs;
                pl_dist_gather_host(r->comm, run->recs, rec_bytes, rec_bytes);
            }
            if (steps == 0 && me == 0) res->first_loss = step_loss / B;
            if (narrate) {
                /* [2] the first micro-batch through every (virtual) stage */
                char text[3072] = "", sz[32];
                pl_bytes_text(msg_bytes, sz, sizeof sz);
                double t_first = 0, t_last = 0;
                for (int q = 0; q < p * v; q++) {
                    int st = q % p, ch = q / p;
                    for (int i = 0; i < run->nrec[st]; i++) {
                        const pl_pp_record *x = &run->rec[st][i];
                        if (x->op.kind != PL_PP_F || x->op.micro_batch != 0 || x->op.chunk != ch)
                            continue;
                        if (q == 0) t_first = rec_start(x);
                        t_last = rec_end(x);
                        if (q < 8 || q == p * v - 1)
                            pl_appendf(text, sizeof text, "%s%sstage %d %.1f-%.1f us",
                                       q ? ", " : "", q == p * v - 1 && q >= 8 ? "... " : "", st,
                                       (rec_start(x) - t_first) * 1e6,
                                       (rec_end(x) - t_first) * 1e6);
                    }
                }
                int hops = p * v - 1;
                char span[32]; /* "rows 0 to 7", "row 0" */
                if (rows > 1)
                    snprintf(span, sizeof span, "rows 0 to %d", rows - 1);
                else
                    snprintf(span, sizeof span, "row 0");
                STEP("Micro-batch 0 (%s of the batch of %d; %d micro-batch%s of %d "
                     "row%s) forward through the %s: %s. %d hop%s, each an activation [%d x %d] "
                     "of %s sent to the next stage: %.1f us from its first op to the loss%s.",
                     span, B, m, m == 1 ? "" : "es", rows, pl_s(rows),
                     v > 1 ? "virtual stages" : "stages", text, hops, pl_s(hops), rows, c.hidden,
                     sz, (t_last - t_first) * 1e6,
                     m > 1 ? "; the other micro-batches follow it, a stage behind each other" : "");
                /* [3] the bubble, measured against the formula */
                const pl_pp_timing *tm = &res->first;
                double fi = 0, ft = 0;
                int has = !pl_pp_bubble_formula(cfg->kind, p, m, v, &fi, &ft);
                char busy[1024] = "";
                for (int st = 0; st < p && st < 8; st++)
                    pl_appendf(busy, sizeof busy, "%s%.1f", st ? ", " : "", tm->busy[st] * 1e6);
                if (p > 8) pl_appendf(busy, sizeof busy, ", ...");
                char formula[512];
                if (has && cfg->kind == PL_PP_INTERLEAVED)
                    snprintf(formula, sizeof formula,
                             "(p - 1)/(v m) = %.1f %% of the ideal time and (p - 1)/(v m + p - 1) "
                             "= %.1f %% of the total",
                             fi * 100, ft * 100);
                else if (has && cfg->kind == PL_PP_NAIVE)
                    snprintf(formula, sizeof formula,
                             "p - 1 = %.0f00 %% of the ideal time and (p - 1)/p = %.1f %% of the "
                             "total",
                             fi, ft * 100);
                else if (has && cfg->kind == PL_PP_ZB_H1)
                    snprintf(formula, sizeof formula,
                             "(p - 1)/(3m) = %.1f %% of the ideal time and (p - 1)/(3m + p - 1) = "
                             "%.1f %% of the total (F, B and W of one cost)",
                             fi * 100, ft * 100);
                else if (has)
                    snprintf(formula, sizeof formula,
                             "(p - 1)/m = %.1f %% of the ideal time and (p - 1)/(m + p - 1) = "
                             "%.1f %% of the total",
                             fi * 100, ft * 100);
                else
                    snprintf(formula, sizeof formula, "none for m < p");
                if (p == 1)
                    STEP("The bubble: one stage never waits for another; it is busy %.1f %% of "
                         "the step (a bubble of %.1f %% of the total). With p stages each waits "
                         "while the pipeline fills and drains.",
                         100 - tm->of_total * 100, tm->of_total * 100);
                else
                    STEP("The bubble, the stages' idle time, measured on the %s clock: %.1f %% "
                         "of the ideal time (the stages' busy time) and %.1f %% of the total (p "
                         "x the step's %.1f us). The formula for uniform stages and free "
                         "messages: %s. They differ: stage 0 also runs the input layer and stage "
                         "%d the head and the loss (busy us per stage: %s), and each of the "
                         "hops costs a transfer the formula counts as free.",
                         pl_clock_name(), tm->of_ideal * 100, tm->of_total * 100,
                         tm->makespan * 1e6, formula, last, busy);
                /* [4] the steady state: stage 0's list and what each stage held */
                char list[1024], held[1024] = "", one[32], peak[32];
                ops_text(run->rec[0], run->nrec[0], v, 24, list, sizeof list);
                pl_bytes_text(res->acts_bytes[0], one, sizeof one);
                pl_bytes_text(res->measured_peak[0], peak, sizeof peak);
                for (int st = 0; st < p && st < 8; st++)
                    pl_appendf(held, sizeof held, "%s%d", st ? ", " : "", res->peak_in_flight[st]);
                if (p > 8) pl_appendf(held, sizeof held, ", ...");
                int want0 = pl_pp_peak_formula(cfg->kind, p, m, v, 0);
                const char *what;
                switch (cfg->kind) {
                case PL_PP_1F1B:
                    what = "1F1B: the warm-up forwards, then one forward and one backward in turn "
                           "(the steady state: each backward frees a micro-batch's activations "
                           "as the next forward takes a set), then the cool-down backwards";
                    break;
                case PL_PP_GPIPE:
                    what = "GPipe has no steady state: every forward, then every backward, so "
                           "each stage holds every micro-batch's activations before its first "
                           "backward";
                    break;
                case PL_PP_NAIVE:
                    what = "naive: one micro-batch through every stage and back before the next "
                           "starts";
                    break;
                case PL_PP_INTERLEAVED:
                    what = "interleaved 1F1B: the warm-up forwards run over the chunks, then one "
                           "chunk-forward and one chunk-backward in turn";
                    break;
                default:
                    what = "ZB-H1: 1F1B's order with each backward split into B (the input's "
                           "gradient, which the stage before waits for) and W (the weights', "
                           "which nobody waits for), stage r running its W's r steps late so "
                           "that they fill the bubbles 1F1B leaves";
                    break;
                }
                STEP("Stage 0's list: %s. %s. Stage 0 held at most %d %s activations at once "
                     "(the formula: %d), %s of %s each: %s at its peak, measured from the "
                     "allocations. The most held at once, per stage: %s.",
                     list, what, res->peak_in_flight[0],
                     res->peak_in_flight[0] == 1 ? "micro-batch's" : "micro-batches'", want0,
                     v > 1 ? "chunk sets" : "sets", one, peak, held);
                /* [5] the flush */
                char ends[1024] = "";
                double t_end = tm->start + tm->makespan;
                for (int st = 0; st < p && st < 8; st++) {
                    if (run->nrec[st] < 1) continue; /* another process's (rank 0 has all) */
                    const pl_pp_record *x = &run->rec[st][run->nrec[st] - 1];
                    pl_appendf(ends, sizeof ends, "%sstage %d %.1f us", st ? ", " : "", st,
                               (t_end - rec_end(x)) * 1e6);
                }
                STEP("The flush: the last backwards drain the pipeline from stage %d back to "
                     "stage 0, and the step ends when stage 0's last op does. Each stage then "
                     "idles until the end (%s); no forward of the next step may start before "
                     "the optimizer has run, so every micro-batch of a step sees the same "
                     "weights (PipeDream-Flush).",
                     last, ends);
            }
            float norm = 0;
            if (cfg->clip > 0 || narrate) PP(pl_pp_blocks_clip_grad_norm(&pp, cfg->clip, &norm));
            if (steps == 0 && me == 0) res->first_norm = norm;
            PP(cfg->sgd ? pl_pp_blocks_sgd(&pp, cfg->lr) : pl_pp_blocks_adamw(&pp, cfg->lr));
            CK(cudaStreamSynchronize(cs));
            if (narrate) {
                char clip[200] = "";
                if (cfg->clip > 0 && norm > cfg->clip)
                    snprintf(clip, sizeof clip,
                             ", above --clip-grad-norm %g: every gradient was scaled by %g/%.4f",
                             cfg->clip, cfg->clip, norm);
                else if (cfg->clip > 0)
                    snprintf(clip, sizeof clip, ", below --clip-grad-norm %g: nothing to clip",
                             cfg->clip);
                STEP("The optimizer step: each micro-batch's loss was scaled by 1/B = 1/%d once, "
                     "so the %d %s gradients added up to the mean over the global "
                     "batch, what one device computes on all %d rows (the loss: %.4f). The "
                     "gradient norm over every stage (each stage's sum of squares, "
                     "all-reduced): %.4f%s. Then %s on each stage's own parameters.",
                     B, m, m == 1 ? "micro-batch's" : "micro-batches'", B, step_loss / B, norm,
                     clip, cfg->sgd ? "SGD" : "AdamW");
            }
            loss_sum += step_loss;
            seen += B;
            modeled_total += pl_device_stream_now(cs) - m0;
            measured_total += pl_trace_now() - t0;
            steps++;
            if (me == 0) pl_metric(r, "loss", step_loss / B);
            if (narrate) BEGIN();
            if (cfg->max_steps && steps >= cfg->max_steps) break;
        }
        /* the epoch: the training rows predicted right, then the test set */
        int right = 0, test_right = 0;
        if (me == last) {
            CK(cudaMemcpy(&right, pp.part[v - 1].correct, sizeof right, cudaMemcpyDeviceToHost));
            CK(pl_blocks_reset_correct(&pp.part[v - 1], cs));
        }
        for (int s0 = 0; cfg->evaluate && s0 < test->n; s0 += B) {
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
            if (me == 0)
                CK(cudaMemcpyAsync(dx, hx, (size_t)B * PL_DIGITS_FEATURES * sizeof(float),
                                   cudaMemcpyHostToDevice, cs));
            if (me == last)
                CK(cudaMemcpyAsync(dy, hy, (size_t)B * sizeof(int), cudaMemcpyHostToDevice, cs));
            PP(pl_pp_blocks_evaluate(&pp, dx, dy, NULL));
        }
        if (me == last) {
            CK(cudaMemcpy(&test_right, pp.part[v - 1].correct, sizeof test_right,
                          cudaMemcpyDeviceToHost));
            CK(pl_blocks_reset_correct(&pp.part[v - 1], cs));
        }
        run->right[me] = right;
        run->test_right[me] = test_right;
        BARRIER();
        TO_ALL(run->right);
        TO_ALL(run->test_right);
        right = run->right[last];
        test_right = run->test_right[last];
        BARRIER();
        double ep_loss = seen ? loss_sum / seen : 0, tr_acc = seen ? 100.0 * right / seen : 0,
               te_acc = 100.0 * test_right / test->n;
        if (me == 0) {
            res->train_acc = tr_acc;
            res->test_acc = te_acc;
            if (epoch - 1 < 1000) res->epoch_loss[epoch - 1] = ep_loss;
            if (cfg->progress && (epoch % 5 == 0 || epoch == cfg->epochs))
                pl_check_progress(cfg->progress, "p=%d m=%d, epoch %d/%d: loss %.4f, test %.1f %%",
                                  p, m, epoch, cfg->epochs, ep_loss, te_acc);
        }
        STEP("Epoch %d/%d: loss %.4f (the mean over %d samples), train %.1f %%, test %.1f %%.",
             epoch, cfg->epochs, ep_loss, seen, tr_acc, te_acc);
        if (me == 0) pl_metric(r, "epoch loss", ep_loss);
        if (cfg->max_steps && steps >= cfg->max_steps) break;
    }
    if (gather(r, run, &pp, 0, whole)) FAIL("gathering the weights failed");
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
    if (created) pl_pp_blocks_destroy(&pp);
    cudaFree(dx);
    cudaFree(dy);
    free(hx);
    free(hy);
    free(order);
    if (have_rows) pl_lab_shared_leave(&run->shared, rows_free, run);
    free(whole);
    return status;
}
