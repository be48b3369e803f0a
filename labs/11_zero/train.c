/*
 * train.c — Lab 11's training loop, run by every rank (lab11_rank).
 *
 * The N ranks are one data-parallel group; each makes its share of a ZeRO
 * run (paralab/zero.h, pl_zero_create: the buffers its stage keeps, the
 * model's initial weights from the seed, a stage-3 rank only its slices).
 * A step: rank r takes rows [r B/N, (r+1) B/N) of the global batch,
 * pl_zero_step runs the forward and the backward of the k micro-steps (and
 * the reductions a stage makes during backward), then the update: at
 * stage 1 the student's lab11_zero1_update (or the reference's), else the
 * engine's pl_zero_update. The loss is the batch's mean: each rank's rows'
 * losses scaled by 1 / B, once.
 *
 * The first step is narrated: what a replica holds (z->mem against the
 * formulas), the buckets and their padding, the forward and backward, the
 * update, the communication (the ledger against pl_zero_traffic_of), the
 * weights against plain data parallelism (a stage-0 engine beside it for
 * that step). After every step each rank's floats sent and collectives
 * called (its ledger, pl_comm_ledger) are compared with
 * pl_zero_traffic_of; the first step that differs is kept in the result.
 * The epoch's last partial batch is dropped, as Lab 08 does; the test set
 * is evaluated in batches of B rows, the last padded with rows no label
 * matches.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "11_zero/lab11.h"
#include "harness/train.h" /* FAIL, CK, STEP, BEGIN, pl_bytes_text, pl_appendf */
#include "paralab/cuda_check.h"
#include "paralab/device.h"
#include "paralab/dist.h"
#include "paralab/plural.h"
#include "paralab/step.h"
#include "paralab/trace.h"

#define ZE(call, zz)                                                                               \
    do {                                                                                           \
        if (call) FAIL("%s", (zz).error[0] ? (zz).error : #call " failed");                        \
    } while (0)
#define BARRIER()                                                                                  \
    do {                                                                                           \
        if (pl_comm_barrier(r->comm)) FAIL("a barrier of the ranks failed");                       \
    } while (0)

void lab11_run_init(lab11_run *run, const lab11_config *cfg, const pl_digits *data,
                    lab11_result *result)
{
    memset(run, 0, sizeof *run);
    run->cfg = cfg;
    run->data = data;
    run->result = result;
    pl_lab_shared_init(&run->shared);
}

/* The process's rows (lab11_run, pl_lab_shared_take): n rows of a rank's
 * shard, Ψ_pad / N floats. */
typedef struct {
    lab11_run *run;
    int n;
    long shard_floats;
} rows_arg;

static int rows_make(void *arg, char *err, size_t cap)
{
    const rows_arg *a = arg;
    a->run->rows_stride = a->shard_floats;
    a->run->rows = calloc((size_t)a->n * (size_t)a->shard_floats, sizeof(float));
    if (a->run->rows) return 0;
    snprintf(err, cap, "out of host memory");
    return -1;
}

static void rows_free(void *arg)
{
    lab11_run *run = arg;
    free(run->rows);
    run->rows = NULL;
}

/* Every rank's slices of z (what: pl_zero_slices_to_host's) put together
 * in whole on rank 0: each rank its row (pl_zero_shard_to_host), a barrier,
 * the other processes' rows to rank 0 (pl_dist_gather_host), rank 0 puts
 * every row in its places, a barrier. Every rank calls it. 0, or -1 with
 * z->error or r->error. */
static int slices_to_rank0(pl_rank *r, lab11_run *run, pl_zero *z, int what, float *whole)
{
    size_t row_bytes = (size_t)run->rows_stride * sizeof(float);
    if (pl_zero_shard_to_host(z, run->rows + (size_t)r->rank * (size_t)run->rows_stride, what))
        return -1;
    if (pl_comm_barrier(r->comm)) {
        snprintf(r->error, sizeof r->error, "a barrier of the ranks failed");
        return -1;
    }
    pl_dist_gather_host(r->comm, run->rows, row_bytes, row_bytes);
    for (int q = 0; q < r->size && r->rank == 0; q++)
        if (pl_zero_shard_place(z, q, run->rows + (size_t)q * (size_t)run->rows_stride, whole))
            return -1;
    /* rank 0 has read every row before any rank writes its row again */
    if (pl_comm_barrier(r->comm)) {
        snprintf(r->error, sizeof r->error, "a barrier of the ranks failed");
        return -1;
    }
    return 0;
}

static const char *const stage_name[4] = {"plain data parallelism", "ZeRO-1 (P_os)",
                                          "ZeRO-2 (P_os+g)", "ZeRO-3 (P_os+g+p)"};

/* Step [1]: what this rank holds, measured and by the formula, and what
 * each stage would hold for this N. */
static void memory_text(const lab11_config *cfg, const pl_zero *z, const lab11_result *res,
                        char *buf, size_t cap)
{
    const pl_zero_memory *m = &res->mem[0], *f = &res->formula;
    int s = z->cfg.stage, n = z->n;
    char p[32], g[32], o[32], w[32];
    pl_bytes_text(m->params, p, sizeof p);
    pl_bytes_text(m->grads, g, sizeof g);
    pl_bytes_text(m->optim, o, sizeof o);
    pl_bytes_text(m->buffers, w, sizeof w);
    int same = 1;
    for (int q = 0; q < n; q++)
        same &= res->mem[q].params == f->params && res->mem[q].grads == f->grads &&
                res->mem[q].optim == f->optim && res->mem[q].buffers == f->buffers;
    static const char *const formula[4] = {"params 4Ψ_pad, grads 4Ψ_pad, %s 8Ψ_pad",
                                           "params 4Ψ_pad, grads 4Ψ_pad, %s 8Ψ_pad/N",
                                           "params 4Ψ_pad, grads 4Ψ_pad/N, %s 8Ψ_pad/N",
                                           "params 4Ψ_pad/N, grads 4Ψ_pad/N, %s 8Ψ_pad/N"};
    char fm[160];
    snprintf(fm, sizeof fm, formula[s], cfg->zc.sgd ? "momentum" : "AdamW m and v");
    if (cfg->zc.sgd) { /* SGD keeps one buffer: half the optimizer's state */
        char *e = strstr(fm, "8Ψ_pad");
        if (e) e[0] = '4';
    }
    buf[0] = 0;
    pl_appendf(buf, cap,
               "What a replica holds: %s on %d rank%s, Ψ = %ld parameters (Ψ_pad = %ld with the "
               "padding). Rank 0's device, measured from its allocations (z->mem): parameters %s, "
               "gradients %s, optimizer state %s, working buckets %s. The formula (fp32, no master "
               "copy): %s = %zu + %zu + %zu bytes, plus %zu of buckets: %s. ",
               stage_name[s], n, pl_s(n), z->psi, z->psi_pad, p, g, o, w, fm, f->params, f->grads,
               f->optim, f->buffers,
               same ? "every rank the same" : "a rank DIFFERS (see the report)");
    pl_appendf(buf, cap,
               "Each stage on %d rank%s, per rank (parameters + gradients + state; with the "
               "working buckets):",
               n, pl_s(n));
    size_t with[4] = {0};
    for (int st = 0; st < 4; st++) {
        pl_zero_config c = cfg->zc;
        c.stage = st;
        pl_zero_memory e;
        if (pl_zero_memory_of(&c, n, &e, NULL, 0)) continue;
        char t[32];
        size_t sum = e.params + e.grads + e.optim;
        with[st] = sum + e.buffers;
        pl_bytes_text(sum, t, sizeof t);
        pl_appendf(buf, cap, "%s stage %d %s", st ? "," : "", st, t);
        if (e.buffers) pl_appendf(buf, cap, " (%zu B with its buckets)", with[st]);
    }
    pl_appendf(buf, cap, "%s.",
               s == 0   ? ": every replica holds all of it, N times over"
               : s == 3 ? ": only 1/N of everything, gathered when a unit runs"
                        : ": the sharded parts shrink as 1/N");
    if (with[1] && (with[2] > with[1] || with[3] > with[1])) {
        long big = 0;
        for (int b = 0; b < z->units; b++)
            if (z->bucket[b].padded > big) big = z->bucket[b].padded;
        pl_appendf(buf, cap,
                   " At this toy size stages 2 and 3 hold MORE than stage 1 once the working "
                   "buckets count: two buckets of the largest unit (%ld floats; stage 3 two more "
                   "for its parameters) outweigh what the shards save. A wider model (--hidden "
                   "256 --layers 8) shows the shrink.",
                   big);
    }
}

/* Step [2]: the buckets and their padding. */
static void buckets_text(const pl_zero *z, char *buf, size_t cap)
{
    int n = z->n;
    buf[0] = 0;
    pl_appendf(
        buf, cap,
        "The buckets: the model in U = L + 2 = %d units (the input layer, each block, the head), "
        "each one range of the flat buffer padded with zeros to a multiple of N = %d, cut into %d "
        "slice%s; rank r owns slice r of every bucket. Unit: floats -> padded / N = shard: ",
        z->units, n, n, pl_s(n));
    for (int b = 0; b < z->units; b++) {
        const pl_zero_bucket *k = &z->bucket[b];
        if (strlen(buf) > 700 && b < z->units - 1) {
            if (!strstr(buf, "; ...")) pl_appendf(buf, cap, "; ...");
            continue;
        }
        pl_appendf(buf, cap, "%s%s %ld -> %ld / %d = %ld", b ? "; " : "", k->name,
                   k->end - k->begin, k->padded, n, k->shard);
    }
    long pad = z->psi_pad - z->psi;
    pl_appendf(buf, cap,
               ". Ψ = %ld, Ψ_pad = %ld: %ld float%s of padding (zero, never updated, out of norms "
               "and counts)%s; each rank's shard is Ψ_pad / N = %ld floats.",
               z->psi, z->psi_pad, pad, pl_s(pad), pad ? "" : ": N divides every unit",
               z->shard_floats);
}

/* The first (rank, reason) where the ledger's step differs from the
 * formula; 0 when none. */
static int traffic_differs(const lab11_config *cfg, const lab11_result *res, int n, int step,
                           char *why, size_t cap)
{
    const pl_zero_traffic *t = &res->traffic;
    unsigned long long want = t->all_reduce + t->reduce_scatter + t->all_gather;
    for (int q = 0; q < n; q++) {
        const unsigned *c = res->calls[q];
        unsigned coll = c[PL_CALL_ALL_REDUCE] + c[PL_CALL_REDUCE_SCATTER] + c[PL_CALL_ALL_GATHER] +
                        c[PL_CALL_BROADCAST] + c[PL_CALL_REDUCE] + c[PL_CALL_ALL_TO_ALL];
        if (res->sent[q] == want && coll == t->calls) continue;
        char extra[400] = "";
        int s = cfg->zc.stage;
        if ((s == 1 || s == 2 || s == 3) && c[PL_CALL_ALL_REDUCE])
            snprintf(extra, sizeof extra,
                     ": %u all-reduce%s (pl_all_reduce) where stage %d reduce-scatters: an "
                     "all-reduce sends 2 (N - 1)/N floats per float, a reduce-scatter (N - 1)/N, "
                     "and leaves every rank the whole sum where it needs only its slice",
                     c[PL_CALL_ALL_REDUCE], c[PL_CALL_ALL_REDUCE] == 1 ? "" : "s", s);
        else if ((s == 1 || s == 2) && !c[PL_CALL_ALL_GATHER])
            snprintf(extra, sizeof extra, ": no all-gather: the replicas keep stale weights");
        snprintf(why, cap,
                 "step %d, rank %d: its ledger (pl_comm_ledger) says it sent %llu floats in %u "
                 "collective%s (%u reduce-scatter, %u all-gather, %u all-reduce); "
                 "pl_zero_traffic_of says %llu floats (reduce-scatter %llu, all-gather %llu, "
                 "all-reduce %llu) in %u%s",
                 step, q, res->sent[q], coll, coll == 1 ? "" : "s", c[PL_CALL_REDUCE_SCATTER],
                 c[PL_CALL_ALL_GATHER], c[PL_CALL_ALL_REDUCE], want, t->reduce_scatter,
                 t->all_gather, t->all_reduce, t->calls, extra);
        return 1;
    }
    return 0;
}

int lab11_rank(pl_rank *r)
{
    lab11_run *run = r->arg;
    const lab11_config *cfg = run->cfg;
    lab11_result *res = run->result;
    const pl_dataset *train = &run->data->train, *test = &run->data->test;
    int n = r->size, me = r->rank, status = 1, B = cfg->zc.batch, rows = B / n;
    int S = cfg->zc.stage;
    cudaStream_t cs = r->stream;
    pl_zero z, z0;
    int created = 0, created0 = 0, have_rows = 0;
    float *hx = NULL, *dx = NULL;
    int *hy = NULL, *dy = NULL, *order = NULL;
    char why[1024];
    pl_zero_config zc = cfg->zc;
    zc.trace = r->trace;
    if (pl_zero_create(&z, &zc, r->comm, cfg->seed, cs, why, sizeof why)) FAIL("%s", why);
    created = 1;
    long psi = z.psi;
    rows_arg ra = {run, n, z.shard_floats};
    if (pl_lab_shared_take(&run->shared, rows_make, &ra, why, sizeof why)) FAIL("%s", why);
    have_rows = 1;
    hx = malloc((size_t)rows * PL_DIGITS_FEATURES * sizeof *hx);
    hy = malloc((size_t)rows * sizeof *hy);
    order = malloc((size_t)train->n * sizeof *order);
    if (!hx || !hy || !order) FAIL("out of host memory");
    CK(cudaMalloc((void **)&dx, (size_t)rows * PL_DIGITS_FEATURES * sizeof(float)));
    CK(cudaMalloc((void **)&dy, (size_t)rows * sizeof(int)));
    if (me == 0) {
        run->whole = calloc((size_t)psi, sizeof(float));
        run->whole0 = calloc((size_t)psi, sizeof(float));
        int keep = cfg->keep_steps < LAB11_KEEP_MAX ? cfg->keep_steps : LAB11_KEEP_MAX;
        for (int s = 0; s < keep; s++)
            if (!(res->kept[s] = calloc((size_t)psi * (size_t)n, sizeof(float)))) break;
        if (pl_zero_memory_of(&cfg->zc, n, &res->formula, why, sizeof why) ||
            pl_zero_traffic_of(&cfg->zc, n, &res->traffic, why, sizeof why))
            run->failed[0] = 1;
        res->nparams = psi;
        res->psi_pad = z.psi_pad;
    }
    res->mem[me] = z.mem;
    BARRIER();
    TO_RANK0(res->mem);
    TO_ALL(run->failed);
    if (me == 0 && (!run->whole || !run->whole0)) FAIL("out of host memory");
    if (run->failed[0]) FAIL("%.1000s", me == 0 ? why : "rank 0 could not compute the formulas");
    if (slices_to_rank0(r, run, &z, 0, run->whole)) FAIL("%s", z.error[0] ? z.error : r->error);
    if (me == 0) {
        res->init_hash = pl_blocks_hash(run->whole, psi);
        if ((res->init = malloc((size_t)psi * sizeof(float))))
            memcpy(res->init, run->whole, (size_t)psi * sizeof(float));
    }
    if (cfg->narrate) {
        char text[2048];
        memory_text(cfg, &z, res, text, sizeof text);
        STEP("%s", text);
        buckets_text(&z, text, sizeof text);
        STEP("%s The weights, drawn whole from seed %llu (a stage-3 rank keeps only its "
             "slices), hash to %08x put together.",
             text, cfg->seed, res->init_hash);
    }
    if (cfg->narrate && cfg->compare) { /* plain DP beside it, for the first step */
        pl_zero_config c0 = cfg->zc;
        c0.stage = 0;
        c0.trace = NULL;
        if (pl_zero_create(&z0, &c0, r->comm, cfg->seed, cs, why, sizeof why)) FAIL("%s", why);
        created0 = 1;
    }

    int steps_per_epoch = train->n / B, k = cfg->zc.accumulate;
    double modeled_total = 0, measured_total = 0;
    int steps = 0;
    for (int epoch = 1; epoch <= cfg->epochs; epoch++) {
        if (epoch > 1) BEGIN();
        pl_shuffle(order, train->n, cfg->seed, epoch);
        double loss_sum = 0;
        int seen = 0;
        for (int st = 0; st < steps_per_epoch; st++) {
            int narrate = cfg->narrate && epoch == 1 && st == 0;
            const int *rws = order + (long)st * B + (long)me * rows;
            for (int i = 0; i < rows; i++) {
                memcpy(hx + (size_t)i * PL_DIGITS_FEATURES,
                       train->x + (size_t)rws[i] * PL_DIGITS_FEATURES,
                       PL_DIGITS_FEATURES * sizeof *hx);
                hy[i] = train->y[rws[i]];
            }
            if (narrate) BEGIN();
            CK(cudaMemcpyAsync(dx, hx, (size_t)rows * PL_DIGITS_FEATURES * sizeof(float),
                               cudaMemcpyHostToDevice, cs));
            CK(cudaMemcpyAsync(dy, hy, (size_t)rows * sizeof(int), cudaMemcpyHostToDevice, cs));
            CK(cudaStreamSynchronize(cs));
            double t0 = pl_trace_now(), m0 = pl_device_stream_now(cs);
            pl_ledger before = pl_comm_ledger(r->comm);
            float loss = 0;
            ZE(pl_zero_step(&z, dx, dy, &loss), z);
            double m1 = pl_device_stream_now(cs);
            if (narrate) {
                static const char *const what[4] = {
                    "each bucket all-reduced (summed) on the communication stream as soon as "
                    "backward has produced it, while backward goes on (Lab 07's mechanism)",
                    "the gradients kept whole on every rank, nothing sent yet: stage 1 reduces "
                    "them in the update (your exercise)",
                    "each unit's gradients in a working bucket, reduce-scattered as soon as its "
                    "backward ends: only the rank's slice is kept (its shard of the gradients)",
                    "each unit's parameters all-gathered into a working bucket before its "
                    "forward (the next unit's gather prefetched) and again before its backward, "
                    "given back after use; the gradients reduce-scattered as each unit's "
                    "backward ends, as stage 2"};
                char micro[160] = "";
                if (k > 1)
                    snprintf(micro, sizeof micro,
                             " in %d micro-steps of %d rows (the losses all scaled by 1/B: the "
                             "sum over micro-steps and ranks is the mean, scaled once)",
                             k, rows / k);
                char comm[200] = "";
                if (S != 1 && cfg->zc.overlap && z.comm_end > z.step_start)
                    snprintf(comm, sizeof comm,
                             "; its collectives ran on the communication stream beside the "
                             "compute, the last ending %.1f us after the step began",
                             (z.comm_end - z.step_start) * 1e6);
                STEP("Forward and backward (pl_zero_step): rank r runs rows [r B/N, (r+1) B/N) "
                     "of the batch of %d, %d rows each%s, through the %d units (the timeline draws "
                     "each unit's forward and backward as the micro-batch's digit on its rank's "
                     "lane; the devices pane writes each rank's latest label: \"F in\" ... \"F "
                     "head\", then \"B head\" ... \"B in\", then \"update\"); %s. Rank 0: "
                     "%.1f us on the %s clock%s.",
                     B, rows, micro, z.units, what[S], (m1 - m0) * 1e6, pl_clock_name(), comm);
            }
            /* [4]'s work, the update (stage 1's reduce-scatters and all-gathers), under its
             * own narration: not on the screen while [3] is */
            if (narrate) BEGIN();
            if (S == 1 && cfg->update) {
                int rc = pl_zero_update_with(&z, cfg->lr, cfg->update);
                if (rc == PL_TODO_STATUS) {
                    res->todo = 1;
                    FAIL("%s is TODO", cfg->update_from);
                }
                if (rc) {
                    const char *fault = pl_fault_report();
                    FAIL("%s returned %d: %.500s%s%.400s", cfg->update_from, rc,
                         z.error[0] ? z.error : "(nothing in z->error)", fault[0] ? ": " : "",
                         fault);
                }
                cudaError_t se = cudaStreamSynchronize(cs);
                if (se)
                    FAIL("after %s: cudaStreamSynchronize: %s %.600s", cfg->update_from,
                         cudaGetErrorName(se), pl_fault_report());
                if (z.step != steps + 1)
                    FAIL("after %s: z->step is %d after %d step%s: call pl_zero_count_step once "
                         "per step (before the loop over the buckets)%s: AdamW's bias "
                         "correction (1 - beta^t) uses the step count t",
                         cfg->update_from, z.step, steps + 1, pl_s(steps + 1),
                         z.step > steps + 1 ? ", not once per bucket" : "");
            } else {
                ZE(pl_zero_update(&z, cfg->lr), z);
            }
            CK(cudaStreamSynchronize(cs));
            pl_ledger after = pl_comm_ledger(r->comm);
            double m2 = pl_device_stream_now(cs);
            res->sent[me] = (after.bytes_sent - before.bytes_sent) / sizeof(float);
            for (int q = 0; q < PL_NUM_CALLS; q++)
                res->calls[me][q] = (unsigned)(after.calls[q] - before.calls[q]);
            run->loss[me] = loss;
            /* every step: the weights each rank holds, for the checks */
            if (steps < cfg->keep_steps && steps < LAB11_KEEP_MAX && res->kept[steps]) {
                if (S < 3)
                    ZE(pl_zero_params_to_host(&z, res->kept[steps] + (size_t)me * psi), z);
                else
                    ZE(pl_zero_slices_to_host(&z, res->kept[steps], 0), z);
            }
            BARRIER();
            TO_ALL(run->loss);
            TO_RANK0(res->sent);
            TO_RANK0(res->calls);
            double step_loss = 0;
            for (int q = 0; q < n; q++) step_loss += run->loss[q];
            if (me == 0) {
                if (steps < cfg->keep_steps && steps < LAB11_KEEP_MAX && res->kept[steps]) {
                    if (S == 3)
                        for (int q = 1; q < n; q++)
                            memcpy(res->kept[steps] + (size_t)q * psi, res->kept[steps],
                                   (size_t)psi * sizeof(float));
                    res->kept_steps = steps + 1;
                }
                if (!res->traffic_bad_at &&
                    traffic_differs(cfg, res, n, steps + 1, res->traffic_why,
                                    sizeof res->traffic_why))
                    res->traffic_bad_at = steps + 1;
                if (steps == 0) {
                    res->first_loss = step_loss / B;
                    res->first_step = m2 - m0;
                }
            }
            BARRIER(); /* rank 0 has read what the ranks wrote for this step */
            if (narrate) {
                static const char *const what[4] = {
                    "AdamW on the full buffers, on every rank (each replica updates all of it, "
                    "N times over)",
                    "for each bucket the gradients reduce-scattered in place (rank r ends with "
                    "the sum of its slice), AdamW on the rank's slices only (its shard of m and "
                    "v), then each bucket's parameters all-gathered in place",
                    "AdamW on the rank's shard (its gradients were reduced during backward), "
                    "then each bucket's parameters all-gathered",
                    "AdamW on the rank's shard of the parameters; nothing gathered (the next "
                    "forward gathers)"};
                char opt[64];
                snprintf(opt, sizeof opt, "%s", cfg->zc.sgd ? "SGD (momentum 0.9)" : "AdamW");
                char overlap[200] = "";
                if (!cfg->zc.overlap)
                    snprintf(overlap, sizeof overlap,
                             "; --no-overlap: every collective on the compute stream, in order");
                STEP("The update (%s): %s%s. Rank 0: %.1f us; the whole step %.1f us (%s "
                     "clock)%s.",
                     S == 1 ? cfg->update_from : "pl_zero_update", what[S],
                     strcmp(opt, "AdamW") ? " (here SGD in AdamW's place)" : "", (m2 - m1) * 1e6,
                     (m2 - m0) * 1e6, pl_clock_name(), overlap);
                /* [5] the communication */
                const pl_zero_traffic *t = &res->traffic;
                unsigned long long want = t->all_reduce + t->reduce_scatter + t->all_gather;
                double c = (double)(n - 1) / n;
                static const char *const formula[4] = {"all-reduce 2 c Ψ_pad",
                                                       "reduce-scatter c Ψ_pad + all-gather c "
                                                       "Ψ_pad = 2 c Ψ_pad",
                                                       "(k + 1) c Ψ_pad", "3 k c Ψ_pad"};
                double mult = S == 0 || S == 1 ? 2 : S == 2 ? k + 1 : 3 * k;
                STEP("The communication of the step, from rank 0's ledger (pl_comm_ledger): %llu "
                     "floats sent in %u reduce-scatter%s, %u all-gather%s and %u all-reduce%s. "
                     "pl_zero_traffic_of, the ring volumes with c = (N - 1)/N = %.3f: %s = %.0f "
                     "x %.3f x %ld = %llu floats (reduce-scatter %llu, all-gather %llu, "
                     "all-reduce %llu): %s. In the paper's words (k = 1, c -> 1): 2Ψ for "
                     "stages 0, 1 and 2, 3Ψ for stage 3: ZeRO-1 and 2 cost no more than plain "
                     "data parallelism; stage 3 gathers the parameters twice per step.",
                     res->sent[0], res->calls[0][PL_CALL_REDUCE_SCATTER],
                     pl_s((int)res->calls[0][PL_CALL_REDUCE_SCATTER]),
                     res->calls[0][PL_CALL_ALL_GATHER],
                     pl_s((int)res->calls[0][PL_CALL_ALL_GATHER]),
                     res->calls[0][PL_CALL_ALL_REDUCE],
                     pl_s((int)res->calls[0][PL_CALL_ALL_REDUCE]), c, formula[S], mult, c,
                     z.psi_pad, want, t->reduce_scatter, t->all_gather, t->all_reduce,
                     res->traffic_bad_at ? res->traffic_why : "the same on every rank");
            }
            if (narrate && created0) { /* [6] the weights against plain DP */
                /* the stage-0 engine's step (its all-reduces) under [6], not while [5] is up */
                BEGIN();
                float l0 = 0;
                ZE(pl_zero_step(&z0, dx, dy, &l0), z0);
                ZE(pl_zero_update(&z0, cfg->lr), z0);
                if (slices_to_rank0(r, run, &z0, 0, run->whole0))
                    FAIL("%s", z0.error[0] ? z0.error : r->error);
                /* rank 0's replica (stages 0-2: each rank holds the whole model after
                 * the update); stage 3: the ranks' slices put together */
                if (S < 3 && me == 0) ZE(pl_zero_params_to_host(&z, run->whole), z);
                if (S == 3 && slices_to_rank0(r, run, &z, 0, run->whole))
                    FAIL("%s", z.error[0] ? z.error : r->error);
                long same = 0, worst = 0;
                double diff = 0;
                for (long i = 0; i < psi && me == 0; i++) {
                    same += !memcmp(&run->whole[i], &run->whole0[i], sizeof(float));
                    double d = fabs((double)run->whole[i] - run->whole0[i]) /
                               fmax(fabs((double)run->whole0[i]), 1e-30);
                    if (d > diff) diff = d, worst = i;
                }
                unsigned h = me == 0 ? pl_blocks_hash(run->whole, psi) : 0,
                         h0 = me == 0 ? pl_blocks_hash(run->whole0, psi) : 0;
                char first[200] = "";
                if (me == 0 && same < psi)
                    snprintf(first, sizeof first,
                             " (the largest at weight %ld: %.9g here, %.9g in plain DP)", worst,
                             run->whole[worst], run->whole0[worst]);
                const char *note = "";
                if (S == 0)
                    note = " (Stage 0 against stage 0: trivially the same bits; run --stage 1, 2 "
                           "or 3 to compare a ZeRO stage.)";
                else if (same == psi)
                    note = " What ZeRO shards is memory, not arithmetic.";
                else if (k > 1 && S >= 2)
                    note = " With k > 1, stages 2 and 3 reduce every micro-step and add the sums, "
                           "while stage 0 adds the micro-steps first and reduces once: the same "
                           "sum in another order, so gradients differ in their last bits, and by "
                           "more, relatively, where their terms nearly cancel. AdamW moves a "
                           "weight by about lr g / (|g| + eps), as far for a tiny gradient as for "
                           "a large one, so such a difference shows in the weights (the largest "
                           "above); with SGD (lr g) it stays as small as the gradient's: the unit "
                           "suite checks k > 1 with SGD, within 1e-6 relative. Bit for bit holds "
                           "for k = 1.";
                STEP("The weights against plain data parallelism: a stage-0 engine (the same "
                     "buckets, every gradient summed in the same order) ran the same step beside "
                     "it. Of the %ld weights %s, %ld are the same bits%s (hashes %08x and %08x); "
                     "the largest relative difference %.3g%s.%s",
                     psi, S < 3 ? "of rank 0's replica" : "(the ranks' slices put together)", same,
                     same == psi ? ": all of them" : "", h, h0, diff, first, note);
                BARRIER();
                pl_zero_destroy(&z0);
                created0 = 0;
            }
            loss_sum += step_loss;
            seen += B;
            modeled_total += m2 - m0;
            measured_total += pl_trace_now() - t0;
            steps++;
            if (me == 0) pl_metric(r, "loss", step_loss / B);
            if (narrate) BEGIN();
            if (cfg->max_steps && steps >= cfg->max_steps) break;
        }
        /* the epoch: the test set, B rows at a time, each rank its rows */
        int test_right = 0;
        for (int s0 = 0; cfg->evaluate && s0 < test->n; s0 += B) {
            for (int i = 0; i < rows; i++) { /* padding rows: zeros, a label nothing matches */
                int row = s0 + me * rows + i;
                if (row < test->n)
                    memcpy(hx + (size_t)i * PL_DIGITS_FEATURES,
                           test->x + (size_t)row * PL_DIGITS_FEATURES,
                           PL_DIGITS_FEATURES * sizeof *hx);
                else
                    memset(hx + (size_t)i * PL_DIGITS_FEATURES, 0, PL_DIGITS_FEATURES * sizeof *hx);
                hy[i] = row < test->n ? test->y[row] : -1;
            }
            CK(cudaMemcpyAsync(dx, hx, (size_t)rows * PL_DIGITS_FEATURES * sizeof(float),
                               cudaMemcpyHostToDevice, cs));
            CK(cudaMemcpyAsync(dy, hy, (size_t)rows * sizeof(int), cudaMemcpyHostToDevice, cs));
            int right = 0;
            ZE(pl_zero_evaluate(&z, dx, dy, rows, NULL, &right), z);
            test_right += right;
        }
        run->test_right[me] = test_right;
        BARRIER();
        TO_ALL(run->test_right);
        test_right = 0;
        for (int q = 0; q < n; q++) test_right += run->test_right[q];
        BARRIER();
        double ep_loss = seen ? loss_sum / seen : 0, te_acc = 100.0 * test_right / test->n;
        if (me == 0) {
            res->test_acc = te_acc;
            if (epoch - 1 < 1000) res->epoch_loss[epoch - 1] = ep_loss;
            if (cfg->progress && (epoch % 5 == 0 || epoch == cfg->epochs))
                pl_check_progress(cfg->progress,
                                  "N=%d stage %d, epoch %d/%d: loss %.4f, test %.1f %%", n, S,
                                  epoch, cfg->epochs, ep_loss, te_acc);
        }
        if (cfg->evaluate)
            STEP("Epoch %d/%d: loss %.4f (the mean over %d samples), test %.1f %%.", epoch,
                 cfg->epochs, ep_loss, seen, te_acc);
        else
            STEP("Epoch %d/%d: loss %.4f (the mean over %d samples).", epoch, cfg->epochs, ep_loss,
                 seen);
        if (me == 0) pl_metric(r, "epoch loss", ep_loss);
        if (cfg->max_steps && steps >= cfg->max_steps) break;
    }
    if (slices_to_rank0(r, run, &z, 0, run->whole)) FAIL("%s", z.error[0] ? z.error : r->error);
    if (me == 0) {
        res->steps = steps;
        res->modeled_step = steps ? modeled_total / steps : 0;
        res->measured_step = steps ? measured_total / steps : 0;
        res->params = run->whole;
        run->whole = NULL;
    }
    status = 0;
out:
    cudaStreamSynchronize(cs);
    if (created0) pl_zero_destroy(&z0);
    if (created) pl_zero_destroy(&z);
    cudaFree(dx);
    cudaFree(dy);
    free(hx);
    free(hy);
    free(order);
    if (me == 0) {
        free(run->whole);
        free(run->whole0);
        run->whole = run->whole0 = NULL;
    }
    if (have_rows) pl_lab_shared_leave(&run->shared, rows_free, run);
    return status;
}
