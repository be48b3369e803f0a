/*
 * test_pp.c — pipeline parallelism: the executor (paralab/pp_exec.h) and
 * the block model's pipeline (paralab/pp_blocks.h), on simulated worlds of
 * p = 1, 2, 4 ranks, one stage per rank, each on its own device.
 *
 * The model: h = 16, f = 64, 64 inputs, 10 classes, L = 5 blocks (12,042
 * parameters; split unevenly: 3 + 2 on 2 stages, 2 + 1 + 1 + 1 on 4) or,
 * for the interleaved schedule, L = 8 (18,522); global batches of B = 16.
 *   - Every shipped schedule over the grid p = 1: m 1, 4; p = 2: m 1, 2, 8;
 *     p = 4: m 1, 2, 4, 16 (m = 1; m < p; m = p; m = 4p >> p) wherever
 *     pl_pp_accepts takes it, interleaved with v = 2 and 4 (v = 4 on p = 4
 *     needs 16 blocks: the split refuses it; v = 1's lists are 1F1B's,
 *     checked equal): the first step's gradients, gathered from the stages
 *     (pl_blocks_unslice), equal the one-device step's (pl_blocks_forward/
 *     loss/backward on the whole model: not the pipeline's code) within
 *     1e-6 + 1e-5 max|ref| of each tensor — the same float sums in another
 *     order, the micro-batches' partial sums added instead of one sum over
 *     the batch (GPipe adds them last to first) — and with m = 1 exactly
 *     (the same kernels on the same data); and 10 SGD steps, a new batch
 *     each, equal 10 one-device steps within 1e-5 of max|ref| of each
 *     tensor, the losses within 1e-5. So no m changes the result.
 *     (UNIT_SHORT, the sanitizer pass: fewer grid points and 3 steps.)
 *   - On the modeled clock, the uniform body (each F, B, W one kernel of
 *     the same cost, BW = B + W, messages of 0 floats): the measured
 *     bubble equals pl_pp_bubble_formula in both normalisations to 1e-9
 *     for naive, GPipe, 1F1B and interleaved (m = p, 2p, 4p); ZB-H1's bubble time is a third of
 *     1F1B's (and equals its own formula); and every op of every schedule
 *     starts exactly when the validator's buffered timeline
 *     (pl_pp_timeline) says.
 *   - The peak activation bytes each stage holds, measured from the
 *     device's allocations, equal the schedule's formula (GPipe m, 1F1B
 *     min(p - r, m), interleaved its count) times one set's bytes.
 *   - A bad schedule (a backward before its forward, a missing op, a
 *     deadlocking order) makes pl_pp_run return the validator's message on
 *     every rank, with no message sent and no hang.
 *   - The global gradient norm (pl_pp_blocks_clip_grad_norm) on 4 stages
 *     equals the one-device norm (the host's, in double) within 1e-4
 *     relative (float sums of ~18,500 squares in another order), and
 *     clipping scales every gradient by max_norm / norm.
 *   - Evaluation (pl_pp_blocks_evaluate, forwards only) gives the one
 *     device's loss for p, m = 1, 1; 2, 4; 4, 2; 4, 16.
 *   - pl_pp_blocks_create leaves nothing on the legacy default stream (the
 *     rank's stream does not wait for it): with the legacy stream lazy, a
 *     value written on the stream after create survives a synchronize.
 *   - The trace: one event per op with its kind, micro-batch, stage,
 *     chunk and label, and the "activations s<r>" notes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks_ref.h"
#include "nn_ref.h"
#include "paralab/blocks.h"
#include "paralab/device.h"
#include "paralab/pipeline.h"
#include "paralab/pp_blocks.h"
#include "paralab/pp_exec.h"
#include "paralab/trace.h"
#include "paralab/world.h"
#include "suites.h"

enum { B = 16, STEPS = 10, SEED = 5 };
static const float LR = 0.05f;
/* The SGD steps the schedules train against one device: STEPS, or 3 with
 * UNIT_SHORT (the sanitizer pass: every step's paths run from the second
 * step on; the plain pass trains all 10). */
static int steps_run(void) { return unit_short() ? 3 : STEPS; }

/* L = 5 blocks (an uneven split over 2 and 4 stages: 3 + 2, 2 + 1 + 1 + 1),
 * 8 for the interleaved schedule (4 stages of 2 chunks, 2 of 4) */
static int layers = 5;
static pl_blocks_config model(void) { return pl_blocks_config_make(16, layers); }

/* The batches of every step, the same for the pipeline and the one device. */
static float X_all[STEPS][B * 64];
static int y_all[STEPS][B];
static void make_batches(void)
{
    static int made;
    if (made) return;
    made = 1;
    ref_rng rng = {77};
    for (int s = 0; s < STEPS; s++) {
        ref_fill(&rng, X_all[s], B * 64, -1, 1);
        for (int i = 0; i < B; i++) y_all[s][i] = (int)ref_uniform(&rng, 0, 10) % 10;
    }
}

static void *to_dev(const void *h, size_t bytes)
{
    void *d = NULL;
    if (cudaMalloc(&d, bytes)) return NULL;
    cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
    return d;
}

/* ---- the one-device reference ------------------------------------------------------------- */

typedef struct {
    float *grads1;     /* the first step's gradients (whole layout) */
    float *params;     /* after steps_run() SGD steps */
    float loss[STEPS]; /* each step's loss sum */
} one_device;

static one_device *reference(void)
{
    static one_device *refs[PL_BLOCKS_MAX + 1];
    one_device *ref = refs[layers];
    if (ref) return ref;
    make_batches();
    pl_blocks_config c = model();
    long n = pl_blocks_count(&c);
    ref = refs[layers] = calloc(1, sizeof *ref);
    ref->grads1 = malloc((size_t)n * 4);
    ref->params = malloc((size_t)n * 4);
    pl_blocks_layout l;
    CU_ASSERT_FATAL(pl_blocks_layout_make(&l, &c, pl_blocks_whole(&c), NULL, 0) == 0);
    pl_blocks m;
    CU_ASSERT_FATAL(pl_blocks_create(&m, &l, B, B, SEED) == cudaSuccess);
    pl_tp tp;
    char err[256];
    CU_ASSERT_FATAL(pl_tp_init(&tp, NULL, 0, B, 0, err, sizeof err) == 0);
    float *dX = NULL;
    int *dy = NULL;
    cudaMalloc((void **)&dX, sizeof X_all[0]);
    cudaMalloc((void **)&dy, sizeof y_all[0]);
    for (int s = 0; s < steps_run(); s++) {
        cudaMemcpy(dX, X_all[s], sizeof X_all[s], cudaMemcpyHostToDevice);
        cudaMemcpy(dy, y_all[s], sizeof y_all[s], cudaMemcpyHostToDevice);
        int rc = pl_blocks_forward(&m, &m.acts, &tp, NULL, dX, NULL);
        if (!rc) rc = pl_blocks_loss(&m, &m.acts, &tp, dy, 1.0f / B);
        if (!rc) rc = pl_blocks_backward(&m, &m.acts, &tp, NULL, dX, NULL, NULL);
        CU_ASSERT_FATAL(rc == 0);
        cudaMemcpy(&ref->loss[s], m.loss_sum, 4, cudaMemcpyDeviceToHost);
        if (s == 0) cudaMemcpy(ref->grads1, m.grads.data, (size_t)n * 4, cudaMemcpyDeviceToHost);
        CU_ASSERT_FATAL(pl_blocks_sgd(&m, LR, 0) == cudaSuccess);
    }
    cudaMemcpy(ref->params, m.params.data, (size_t)n * 4, cudaMemcpyDeviceToHost);
    cudaFree(dX), cudaFree(dy);
    pl_blocks_destroy(&m);
    return ref;
}

/* |got - want| <= abs + rel max|want| over [off, off + len); names the first miss. */
static int close_range(const char *what, const float *got, const float *want, long off, long len,
                       double abs, double rel)
{
    double mx = 0;
    for (long i = off; i < off + len; i++) mx = fmax(mx, fabs(want[i]));
    for (long i = off; i < off + len; i++)
        if (!(fabs((double)got[i] - want[i]) <= abs + rel * mx)) {
            fprintf(stderr, "  %s[%ld] = %.9g, want %.9g (max |want| %.3g)\n", what, i - off,
                    got[i], want[i], mx);
            return 0;
        }
    return 1;
}

/* Tensor by tensor: the input layer, each block, the head. */
static int close_model(const char *what, const float *got, const float *want, double abs,
                       double rel)
{
    pl_blocks_config c = model();
    pl_blocks_layout W;
    pl_blocks_layout_make(&W, &c, pl_blocks_whole(&c), NULL, 0);
    char name[64];
    int ok = 1;
    snprintf(name, sizeof name, "%s: input layer", what);
    ok &= close_range(name, got, want, 0, W.in_end, abs, rel);
    for (int j = 0; j < c.layers && ok; j++) {
        snprintf(name, sizeof name, "%s: block %d", what, j);
        ok &= close_range(name, got, want, W.block[j].begin, W.block[j].end - W.block[j].begin, abs,
                          rel);
    }
    snprintf(name, sizeof name, "%s: head", what);
    ok &= ok && close_range(name, got, want, W.head_begin, W.head_end - W.head_begin, abs, rel);
    return ok;
}

/* ---- a pipeline run ------------------------------------------------------------------------ */

typedef struct {
    const pl_pp_schedule *s;
    int v, steps;
    float clip; /* > 0: clip the first step's gradients to it */
    /* out */
    float *grads1, *params; /* whole layout, gathered from the stages */
    float loss[STEPS];      /* the last stage's */
    float norm;
    int peak_in_flight[PL_PP_MAX_STAGES], exec_peak[PL_PP_MAX_STAGES];
    size_t peak_bytes[PL_PP_MAX_STAGES], measured_peak[PL_PP_MAX_STAGES],
        exec_peak_bytes[PL_PP_MAX_STAGES], acts_bytes[PL_PP_MAX_STAGES][PL_PP_MAX_CHUNKS];
    char err[PL_PP_MAX_STAGES][1024];
} pp_run;

static void gather(const pl_pp_blocks *pp, int grads, float *whole)
{
    cudaStreamSynchronize(pp->stream); /* the clip's scaling, the optimizer's step */
    for (int c = 0; c < pp->chunks; c++) {
        const pl_blocks *m = &pp->part[c];
        long n = m->lay.nparams;
        float *h = malloc((size_t)n * 4);
        cudaMemcpy(h, grads ? m->grads.data : m->params.data, (size_t)n * 4,
                   cudaMemcpyDeviceToHost);
        pl_blocks_unslice(&m->lay, h, whole); /* each stage writes only its own places */
        free(h);
    }
}

static int pp_rank_fn(pl_rank *r)
{
    pp_run *run = r->arg;
    pl_blocks_config c = model();
    pl_pp_blocks pp;
    int me = r->rank, rc = 1;
    float *dX = NULL;
    int *dy = NULL;
    if (pl_pp_blocks_create(&pp, &c, r->comm, run->v, B, run->s->micro_batches, SEED, r->stream,
                            run->err[me], sizeof run->err[me]))
        return 1;
    dX = to_dev(X_all[0], sizeof X_all[0]);
    dy = to_dev(y_all[0], sizeof y_all[0]);
    for (int s = 0; s < run->steps; s++) {
        cudaMemcpy(dX, X_all[s], sizeof X_all[s], cudaMemcpyHostToDevice);
        cudaMemcpy(dy, y_all[s], sizeof y_all[s], cudaMemcpyHostToDevice);
        float loss = 0;
        if (pl_pp_blocks_step(&pp, run->s, me == 0 ? dX : NULL, me == r->size - 1 ? dy : NULL,
                              &loss)) {
            snprintf(run->err[me], sizeof run->err[me], "%s", pp.error);
            goto out;
        }
        if (me == r->size - 1) run->loss[s] = loss; /* the last stage's */
        if (s == 0) {
            for (int ch = 0; ch < run->v; ch++) /* of the sets this schedule made */
                run->acts_bytes[me][ch] = pl_pp_blocks_acts_bytes(&pp, ch);
            run->peak_in_flight[me] = pp.peak_in_flight;
            run->peak_bytes[me] = pp.peak_bytes;
            run->measured_peak[me] = pp.measured_peak_bytes;
            run->exec_peak[me] = pp.exec.result.peak_in_flight;
            run->exec_peak_bytes[me] = pp.exec.result.peak_held_bytes;
            if (run->clip > 0 && pl_pp_blocks_clip_grad_norm(&pp, run->clip, &run->norm)) {
                snprintf(run->err[me], sizeof run->err[me], "%s", pp.error);
                goto out;
            }
            gather(&pp, 1, run->grads1);
        }
        if (pl_pp_blocks_sgd(&pp, LR)) goto out;
    }
    cudaStreamSynchronize(r->stream);
    gather(&pp, 0, run->params);
    rc = 0;
out:
    cudaFree(dX), cudaFree(dy);
    pl_pp_blocks_destroy(&pp);
    return rc;
}

static pp_run *pipeline_run(const pl_pp_schedule *s, int steps, float clip, int *world_rc)
{
    make_batches();
    pl_blocks_config c = model();
    long n = pl_blocks_count(&c);
    pp_run *run = calloc(1, sizeof *run);
    run->s = s;
    run->v = s->chunks;
    run->steps = steps;
    run->clip = clip;
    run->grads1 = calloc((size_t)n, 4);
    run->params = calloc((size_t)n, 4);
    char err[2048];
    int rc = pl_world_run(s->stages, NULL, 10, pp_rank_fn, run, err, sizeof err);
    if (world_rc) {
        *world_rc = rc;
        return run;
    }
    if (rc) {
        fprintf(stderr, "  p=%d m=%d v=%d: %s\n", s->stages, s->micro_batches, s->chunks, err);
        for (int r = 0; r < s->stages; r++)
            if (run->err[r][0]) fprintf(stderr, "  rank %d: %s\n", r, run->err[r]);
    }
    CU_ASSERT_EQUAL(rc, 0);
    if (rc) {
        free(run->grads1), free(run->params), free(run);
        return NULL;
    }
    return run;
}

static pp_run *pipeline(const pl_pp_schedule *s, int steps, float clip)
{
    return pipeline_run(s, steps, clip, NULL);
}

static void run_free(pp_run *run)
{
    if (!run) return;
    free(run->grads1), free(run->params), free(run);
}

/* ---- every schedule equals one device ------------------------------------------------------ */

static int checked_configs;

/* s's run against the one device: gradients, 10 SGD steps (UNIT_SHORT: 3),
 * the losses. */
static void check_against_one_device(const pl_pp_schedule *s, const char *name)
{
    one_device *ref = reference();
    int p = s->stages, m = s->micro_batches, v = s->chunks, steps = steps_run();
    pp_run *run = pipeline(s, steps, 0);
    if (run) {
        char what[128];
        snprintf(what, sizeof what, "%s p=%d m=%d v=%d gradients", name, p, m, v);
        pl_blocks_config c = model();
        long n = pl_blocks_count(&c);
        if (m == 1) /* the same kernels on the same rows: the same bits */
            CU_ASSERT_EQUAL(memcmp(run->grads1, ref->grads1, (size_t)n * 4), 0);
        CU_ASSERT(close_model(what, run->grads1, ref->grads1, 1e-6, 1e-5));
        snprintf(what, sizeof what, "%s p=%d m=%d v=%d: %d SGD steps", name, p, m, v, steps);
        CU_ASSERT(close_model(what, run->params, ref->params, 0, 1e-5));
        for (int st = 0; st < steps; st++)
            CU_ASSERT(fabs(run->loss[st] - ref->loss[st]) <= 1e-5 * fabs(ref->loss[st]));
        checked_configs++;
    }
    run_free(run);
}

/* One (kind, p, m, v) that pl_pp_accepts takes, on the block model against
 * one device. The executor's sends are eager (they never wait for their
 * receive), so every shipped schedule runs, Megatron-LM's interleaved order
 * for m > p too (it deadlocks only under rendezvous sends,
 * paralab/pipeline.h): the validator must accept it (pl_pp_validate with
 * buffered sends), and its gradients, steps and losses equal one device's. */
static void check_schedule(pl_pp_kind kind, int p, int m, int v)
{
    char err[512];
    if (pl_pp_accepts(kind, p, m, v, err, sizeof err)) return; /* refused up front: not run */
    layers = kind == PL_PP_INTERLEAVED ? 8 : 5;
    int first[64], count[64];
    if (pl_pp_split(model().layers, p, v, first, count, err, sizeof err)) return;
    pl_pp_schedule s;
    CU_ASSERT_EQUAL_FATAL(pl_pp_build(&s, kind, p, m, v, err, sizeof err), 0);
    /* every shipped schedule runs under the executor's (eager) sends */
    if (pl_pp_validate(&s, 1, 1, 1, NULL, err, sizeof err)) {
        CU_FAIL("a shipped schedule refused by the validator");
        fprintf(stderr, "  %s p %d m %d v %d: %s\n", pl_pp_kind_name(kind), p, m, v, err);
    } else
        check_against_one_device(&s, pl_pp_kind_name(kind));
    pl_pp_schedule_free(&s);
}

/* The grid: for each p, m = 1, m < p, m = p and m = 4p (m >> p); short
 * (UNIT_SHORT: the sanitizer passes): m = 1 and m >> p at p = 4, one more
 * at p = 1 and 2. */
typedef struct {
    int p, n, m[4];
} grid_row;
static const grid_row grid_full[] = {{1, 2, {1, 4}}, {2, 3, {1, 2, 8}}, {4, 4, {1, 2, 4, 16}}};
static const grid_row grid_short[] = {{1, 1, {4}}, {2, 1, {8}}, {4, 2, {1, 16}}};
#define GRID (unit_short() ? grid_short : grid_full)
#define GRID_ROWS 3

static void check_kind(pl_pp_kind kind, int v)
{
    for (size_t i = 0; i < GRID_ROWS; i++)
        for (int j = 0; j < GRID[i].n; j++) check_schedule(kind, GRID[i].p, GRID[i].m[j], v);
}

static void test_naive(void)
{
    checked_configs = 0;
    check_kind(PL_PP_NAIVE, 1);
    CU_ASSERT_EQUAL(checked_configs, unit_short() ? 4 : 9);
}
static void test_gpipe(void)
{
    checked_configs = 0;
    check_kind(PL_PP_GPIPE, 1);
    CU_ASSERT_EQUAL(checked_configs, unit_short() ? 4 : 9);
}
static void test_1f1b(void)
{
    checked_configs = 0;
    check_kind(PL_PP_1F1B, 1);
    CU_ASSERT_EQUAL(checked_configs, unit_short() ? 4 : 9);
}
static void test_interleaved(void)
{
    checked_configs = 0;
    for (int v = 2; v <= 4; v *= 2) check_kind(PL_PP_INTERLEAVED, v);
    /* run: p = 2 (m 2, 8) and 4 (m 4, 16) for v = 2; p = 2 (m 2, 8) for v = 4 (8 virtual
     * stages of 1 block); m = 1 is not a multiple of p */
    CU_ASSERT_EQUAL(checked_configs, unit_short() ? 2 + 1 : 4 + 2);
    /* v = 1: the lists are 1F1B's (Megatron-LM runs it without interleaving), checked above */
    for (size_t i = 0; i < GRID_ROWS; i++)
        for (int j = 0; j < GRID[i].n; j++) {
            pl_pp_schedule a, b;
            char err[256];
            int p = GRID[i].p, m = GRID[i].m[j];
            if (pl_pp_accepts(PL_PP_INTERLEAVED, p, m, 1, err, sizeof err)) continue;
            CU_ASSERT_EQUAL_FATAL(pl_pp_build(&a, PL_PP_INTERLEAVED, p, m, 1, err, sizeof err), 0);
            CU_ASSERT_EQUAL_FATAL(pl_pp_build(&b, PL_PP_1F1B, p, m, 1, err, sizeof err), 0);
            for (int r = 0; r < p; r++) {
                CU_ASSERT_EQUAL_FATAL(a.n[r], b.n[r]);
                CU_ASSERT_EQUAL(memcmp(a.ops[r], b.ops[r], (size_t)a.n[r] * sizeof(pl_pp_op)), 0);
            }
            pl_pp_schedule_free(&a);
            pl_pp_schedule_free(&b);
            checked_configs++;
        }
    CU_ASSERT_EQUAL(checked_configs, unit_short() ? 3 + 2 : 6 + 4);
    /* p = 4, v = 4 needs 16 blocks */
    int first[16], count[16];
    char err[256];
    CU_ASSERT_EQUAL(pl_pp_split(8, 4, 4, first, count, err, sizeof err), -1);
    pl_pp_blocks pp;
    pl_blocks_config c = model();
    CU_ASSERT_EQUAL(pl_pp_blocks_create(&pp, &c, NULL, 9, B, 4, SEED, 0, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "--chunks 9: a stage holds 1..8 model chunks");
}

static void test_zb_h1(void)
{
    checked_configs = 0;
    check_kind(PL_PP_ZB_H1, 1);
    CU_ASSERT_EQUAL(checked_configs, unit_short() ? 4 : 9);
}

static void test_micro_batches_refused(void)
{
    layers = 5;
    pl_pp_blocks pp;
    pl_blocks_config c = model();
    char err[512];
    CU_ASSERT_EQUAL(pl_pp_blocks_create(&pp, &c, NULL, 1, B, 3, SEED, 0, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "--micro-batches 3: a batch of 16 does not divide into 3 "
                                "micro-batches (m can be 1, 2, 4, 8 or 16)");
    CU_ASSERT_EQUAL(pl_pp_blocks_create(&pp, &c, NULL, 1, 12, 0, SEED, 0, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "--micro-batches 0: m must be 1..4096");
}

/* ---- the bubble on the modeled clock, uniform stages ---------------------------------------- */

typedef struct {
    const pl_pp_schedule *s;
    pl_pp_timing timing[PL_PP_MAX_STAGES];
    pl_pp_result result[PL_PP_MAX_STAGES];
    char err[PL_PP_MAX_STAGES][1024];
    int rc[PL_PP_MAX_STAGES];
    pl_ledger ledger[PL_PP_MAX_STAGES];
    pl_pp_record *records[PL_PP_MAX_STAGES];
} uniform_run;

static int uniform_rank_fn(pl_rank *r)
{
    uniform_run *u = r->arg;
    pl_pp_uniform body;
    pl_pp_exec ex;
    int me = r->rank;
    if (pl_pp_uniform_init(&body, 1024, r->stream, u->err[me], sizeof u->err[me])) return 1;
    if (pl_pp_exec_init(&ex, &pl_pp_uniform_body, &body, r->comm, r->stream, 0, u->err[me],
                        sizeof u->err[me])) {
        pl_pp_uniform_free(&body);
        return 1;
    }
    u->rc[me] = pl_pp_run(&ex, u->s);
    snprintf(u->err[me], sizeof u->err[me], "%s", ex.error);
    if (!u->rc[me]) {
        u->result[me] = ex.result;
        u->records[me] = malloc((size_t)ex.result.ops * sizeof(pl_pp_record));
        memcpy(u->records[me], ex.result.record, (size_t)ex.result.ops * sizeof(pl_pp_record));
        u->result[me].record = u->records[me];
        if (pl_pp_measure(&ex, 0, &u->timing[me])) u->rc[me] = -2;
    }
    cudaStreamSynchronize(r->stream);
    u->ledger[me] = pl_comm_ledger(r->comm);
    pl_pp_exec_free(&ex);
    pl_pp_uniform_free(&body);
    return 0;
}

static uniform_run *uniform(const pl_pp_schedule *s)
{
    uniform_run *u = calloc(1, sizeof *u);
    u->s = s;
    char err[2048];
    int rc = pl_world_run(s->stages, NULL, 10, uniform_rank_fn, u, err, sizeof err);
    if (rc) fprintf(stderr, "  %s\n", err);
    CU_ASSERT_EQUAL(rc, 0);
    return u;
}

static void uniform_free(uniform_run *u)
{
    for (int r = 0; r < PL_PP_MAX_STAGES; r++) free(u->records[r]);
    free(u);
}

/* The measured bubble of s in both normalisations (*ideal, *total) and the
 * mean bubble time of a stage. */
static int measure_schedule(const pl_pp_schedule *s, double *ideal, double *total,
                            double *bubble_time)
{
    int p = s->stages;
    uniform_run *u = uniform(s);
    int ok = 1;
    for (int r = 0; r < p; r++) {
        if (u->rc[r]) fprintf(stderr, "  stage %d: %s\n", r, u->err[r]);
        ok &= u->rc[r] == 0;
        ok &= u->timing[r].makespan == u->timing[0].makespan; /* every stage sees the same */
    }
    *ideal = u->timing[0].of_ideal;
    *total = u->timing[0].of_total;
    *bubble_time = 0;
    for (int r = 0; r < p; r++) *bubble_time += u->timing[0].makespan - u->timing[0].busy[r];
    *bubble_time /= p;
    uniform_free(u);
    return ok ? 0 : -1;
}

static int measure_bubble(pl_pp_kind kind, int p, int m, int v, double *ideal, double *total,
                          double *bubble_time)
{
    pl_pp_schedule s;
    char err[512];
    int rc = pl_pp_build(&s, kind, p, m, v, err, sizeof err);
    if (rc) {
        fprintf(stderr, "  %s\n", err);
        return -1;
    }
    rc = measure_schedule(&s, ideal, total, bubble_time);
    pl_pp_schedule_free(&s);
    return rc;
}

static void check_bubble(pl_pp_kind kind, int p, int m, int v)
{
    double ideal, total, bt, f_ideal, f_total;
    CU_ASSERT_EQUAL_FATAL(pl_pp_bubble_formula(kind, p, m, v, &f_ideal, &f_total), 0);
    CU_ASSERT_EQUAL_FATAL(measure_bubble(kind, p, m, v, &ideal, &total, &bt), 0);
    if (!(fabs(ideal - f_ideal) <= 1e-9 && fabs(total - f_total) <= 1e-9))
        fprintf(stderr,
                "  %s p=%d m=%d v=%d: bubble %.12f of the ideal time, %.12f of the total; "
                "formula %.12f, %.12f\n",
                pl_pp_kind_name(kind), p, m, v, ideal, total, f_ideal, f_total);
    CU_ASSERT(fabs(ideal - f_ideal) <= 1e-9);
    CU_ASSERT(fabs(total - f_total) <= 1e-9);
}

static void test_bubble(void)
{
    static const int ms[] = {1, 2, 3, 4, 8};
    for (int p = 1; p <= 4; p *= 2)
        for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) {
            check_bubble(PL_PP_NAIVE, p, ms[i], 1);
            check_bubble(PL_PP_GPIPE, p, ms[i], 1);
            check_bubble(PL_PP_1F1B, p, ms[i], 1);
        }
    /* interleaved (Megatron-LM's order): m a multiple of p */
    for (int p = 2; p <= 4; p *= 2)
        for (int v = 1; v <= 4; v *= 2)
            for (int m = p; m <= 4 * p; m *= 2) check_bubble(PL_PP_INTERLEAVED, p, m, v);
}

static void test_bubble_zb_h1(void)
{
    for (int p = 2; p <= 4; p *= 2)
        for (int m = p; m <= 2 * p; m += p) {
            double zi, zt, zb, oi, ot, ob;
            CU_ASSERT_EQUAL_FATAL(measure_bubble(PL_PP_ZB_H1, p, m, 1, &zi, &zt, &zb), 0);
            CU_ASSERT_EQUAL_FATAL(measure_bubble(PL_PP_1F1B, p, m, 1, &oi, &ot, &ob), 0);
            if (!(fabs(3 * zb - ob) <= 1e-9 * ob))
                fprintf(stderr, "  p=%d m=%d: ZB-H1's bubble %.9g s, 1F1B's %.9g s (ratio %.6f)\n",
                        p, m, zb, ob, zb / ob);
            CU_ASSERT(fabs(3 * zb - ob) <= 1e-9 * ob);
            double fi, ft;
            CU_ASSERT_EQUAL_FATAL(pl_pp_bubble_formula(PL_PP_ZB_H1, p, m, 1, &fi, &ft), 0);
            CU_ASSERT(fabs(zi - fi) <= 1e-9);
            CU_ASSERT(fabs(zt - ft) <= 1e-9);
        }
}

/* Op by op: every op of every stage starts on the modeled clock when the
 * validator's buffered timeline says (pl_pp_timeline, t_f = t_b = t_w = 1:
 * one kernel each, BW two), in units of one kernel's time: the executor
 * runs the schedule as written, and its messages cost the ops nothing. */
static void check_timeline(const pl_pp_schedule *s, const char *name)
{
    int p = s->stages;
    double *start[PL_PP_MAX_STAGES] = {0};
    for (int r = 0; r < p; r++) start[r] = calloc((size_t)s->n[r], sizeof(double));
    char err[512];
    CU_ASSERT_EQUAL_FATAL(pl_pp_timeline(s, PL_PP_BUFFERED, 1, 1, 1, start, err, sizeof err), 0);
    uniform_run *u = uniform(s);
    const pl_pp_record *f0 = &u->records[0][0];
    double t0 = f0->start, k = f0->end - f0->start; /* stage 0's F0: one kernel */
    CU_ASSERT(k > 0);
    int bad = 0;
    for (int r = 0; r < p; r++) {
        CU_ASSERT_EQUAL_FATAL(u->rc[r], 0);
        for (int i = 0; i < s->n[r]; i++) {
            const pl_pp_record *q = &u->records[r][i];
            double want = t0 + start[r][i] * k, dur = q->op.kind == PL_PP_BW ? 2 : 1;
            if (fabs(q->start - want) > 1e-9 * want ||
                fabs(q->end - q->start - dur * k) > 1e-9 * k) {
                if (bad++ < 3)
                    fprintf(stderr,
                            "  %s p=%d m=%d v=%d stage %d op %d: starts at %.4f kernels, "
                            "the timeline says %.4f\n",
                            name, p, s->micro_batches, s->chunks, r, i, (q->start - t0) / k,
                            start[r][i]);
            }
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    uniform_free(u);
    for (int r = 0; r < p; r++) free(start[r]);
}

static void test_timeline(void)
{
    for (int kind = 0; kind < PL_PP_NUM_KINDS; kind++)
        for (int p = 1; p <= 4; p *= 2)
            for (int m = 1; m <= 8; m *= 2)
                for (int v = 1; v <= 2; v++) {
                    pl_pp_schedule s;
                    char err[512];
                    if (pl_pp_build(&s, (pl_pp_kind)kind, p, m, v, err, sizeof err)) continue;
                    if (!pl_pp_validate(&s, 1, 1, 1, NULL, err, sizeof err))
                        check_timeline(&s, pl_pp_kind_name((pl_pp_kind)kind));
                    pl_pp_schedule_free(&s);
                }
}

/* ---- activation memory ---------------------------------------------------------------------- */

static void check_peak(pl_pp_kind kind, int p, int m, int v)
{
    layers = kind == PL_PP_INTERLEAVED ? 8 : 5;
    pl_pp_schedule s;
    char err[512];
    CU_ASSERT_EQUAL_FATAL(pl_pp_build(&s, kind, p, m, v, err, sizeof err), 0);
    pp_run *run = pipeline(&s, 1, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(run);
    for (int r = 0; r < p; r++) {
        int want = pl_pp_peak_formula(kind, p, m, v, r);
        size_t one = run->acts_bytes[r][0];
        CU_ASSERT(one > 0);
        CU_ASSERT_EQUAL(run->peak_in_flight[r], want);
        CU_ASSERT_EQUAL(run->exec_peak[r], want);
        /* all chunks of a stage alike (v = 1, or a middle stage of the interleaved
         * schedule, whose chunks hold one block each): the count times one set */
        int alike = 1;
        for (int c = 1; c < v; c++) alike &= run->acts_bytes[r][c] == one;
        if (alike) {
            if (run->measured_peak[r] != (size_t)want * one)
                fprintf(stderr, "  %s p=%d m=%d stage %d: %zu bytes measured, formula %d x %zu\n",
                        pl_pp_kind_name(kind), p, m, r, run->measured_peak[r], want, one);
            CU_ASSERT_EQUAL(run->measured_peak[r], (size_t)want * one);
        }
        CU_ASSERT_EQUAL(run->peak_bytes[r], run->measured_peak[r]);
        CU_ASSERT_EQUAL(run->exec_peak_bytes[r], run->measured_peak[r]);
    }
    run_free(run);
    pl_pp_schedule_free(&s);
}

static void test_peak_memory(void)
{
    check_peak(PL_PP_GPIPE, 4, 8, 1); /* m on every stage */
    check_peak(PL_PP_GPIPE, 4, 2, 1);
    check_peak(PL_PP_1F1B, 4, 8, 1);        /* 4, 3, 2, 1 */
    check_peak(PL_PP_1F1B, 4, 2, 1);        /* 2, 2, 2, 1 */
    check_peak(PL_PP_NAIVE, 4, 8, 1);       /* 1 */
    check_peak(PL_PP_INTERLEAVED, 4, 4, 2); /* Megatron-LM's order runs for m = p */
    check_peak(PL_PP_ZB_H1, 4, 8, 1);
}

/* ---- bad schedules: the validator's message on every rank, nothing sent ------------------------
 */

static void check_refused(const pl_pp_schedule *s)
{
    char want[1024];
    CU_ASSERT_EQUAL_FATAL(pl_pp_validate(s, 1, 1, 1, NULL, want, sizeof want), -1);
    uniform_run *u = uniform(s);
    for (int r = 0; r < s->stages; r++) {
        CU_ASSERT_EQUAL(u->rc[r], -1);
        CU_ASSERT_STRING_EQUAL(u->err[r], want);
        CU_ASSERT_EQUAL(u->ledger[r].messages_sent, 0);
        CU_ASSERT_EQUAL(u->ledger[r].calls[PL_CALL_SEND], 0);
    }
    uniform_free(u);
}

static void test_bad_schedules(void)
{
    char err[256];
    pl_pp_schedule s;
    /* stage 1 runs BW0 before F0 */
    CU_ASSERT_EQUAL_FATAL(pl_pp_schedule_init(&s, 2, 2, 1, err, sizeof err), 0);
    pl_pp_push(&s, 0, pl_pp_forward(0, 0));
    pl_pp_push(&s, 0, pl_pp_forward(1, 0));
    pl_pp_push(&s, 0, pl_pp_backward(0, 0));
    pl_pp_push(&s, 0, pl_pp_backward(1, 0));
    pl_pp_push(&s, 1, pl_pp_backward(0, 0));
    pl_pp_push(&s, 1, pl_pp_forward(0, 0));
    pl_pp_push(&s, 1, pl_pp_forward(1, 0));
    pl_pp_push(&s, 1, pl_pp_backward(1, 0));
    check_refused(&s);
    pl_pp_schedule_free(&s);
    /* a missing op: stage 1 never runs F1 */
    CU_ASSERT_EQUAL_FATAL(pl_pp_schedule_init(&s, 2, 2, 1, err, sizeof err), 0);
    pl_pp_push(&s, 0, pl_pp_forward(0, 0));
    pl_pp_push(&s, 0, pl_pp_forward(1, 0));
    pl_pp_push(&s, 0, pl_pp_backward(0, 0));
    pl_pp_push(&s, 0, pl_pp_backward(1, 0));
    pl_pp_push(&s, 1, pl_pp_forward(0, 0));
    pl_pp_push(&s, 1, pl_pp_backward(0, 0));
    pl_pp_push(&s, 1, pl_pp_backward(1, 0));
    check_refused(&s);
    pl_pp_schedule_free(&s);
    /* a deadlock: stage 0 waits for BW0's gradient before sending F1's activation, stage 1
     * waits for F1's activation before running BW0 */
    CU_ASSERT_EQUAL_FATAL(pl_pp_schedule_init(&s, 2, 2, 1, err, sizeof err), 0);
    pl_pp_push(&s, 0, pl_pp_forward(0, 0));
    pl_pp_push(&s, 0, pl_pp_backward(0, 0));
    pl_pp_push(&s, 0, pl_pp_forward(1, 0));
    pl_pp_push(&s, 0, pl_pp_backward(1, 0));
    pl_pp_push(&s, 1, pl_pp_forward(0, 0));
    pl_pp_push(&s, 1, pl_pp_forward(1, 0));
    pl_pp_push(&s, 1, pl_pp_backward(0, 0));
    pl_pp_push(&s, 1, pl_pp_backward(1, 0));
    check_refused(&s);
    pl_pp_schedule_free(&s);
}

/* A schedule for more stages than the group has, and B/W for a body without them. */
typedef struct {
    const pl_pp_schedule *s;
    int rc[2];
    char err[2][1024];
} mismatch_run;

static int nosplit_forward(pl_pp_exec *ex, int k, int c, const float *in, float *out)
{
    (void)ex, (void)k, (void)c, (void)in, (void)out;
    return 0;
}
static int nosplit_backward(pl_pp_exec *ex, int k, int c, const float *dout, float *din)
{
    (void)ex, (void)k, (void)c, (void)dout, (void)din;
    return 0;
}
static const pl_pp_body nosplit = {nosplit_forward, nosplit_backward, NULL, NULL, NULL};

static int mismatch_rank_fn(pl_rank *r)
{
    mismatch_run *u = r->arg;
    pl_pp_exec ex;
    if (pl_pp_exec_init(&ex, &nosplit, NULL, r->comm, r->stream, 0, u->err[r->rank], 1024))
        return 1;
    u->rc[r->rank] = pl_pp_run(&ex, u->s);
    snprintf(u->err[r->rank], 1024, "%s", ex.error);
    pl_pp_exec_free(&ex);
    return 0;
}

static void test_refused_configurations(void)
{
    char err[256];
    pl_pp_schedule s;
    mismatch_run u;
    CU_ASSERT_EQUAL_FATAL(pl_pp_build(&s, PL_PP_1F1B, 4, 4, 1, err, sizeof err), 0);
    memset(&u, 0, sizeof u);
    u.s = &s;
    CU_ASSERT_EQUAL_FATAL(pl_world_run(2, NULL, 10, mismatch_rank_fn, &u, err, sizeof err), 0);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL(u.rc[r], -1);
        CU_ASSERT_STRING_EQUAL(u.err[r], "the schedule is for p = 4 stages, but the PP group has 2 "
                                         "ranks: one stage per rank");
    }
    pl_pp_schedule_free(&s);
    CU_ASSERT_EQUAL_FATAL(pl_pp_build(&s, PL_PP_ZB_H1, 2, 2, 1, err, sizeof err), 0);
    memset(&u, 0, sizeof u);
    u.s = &s;
    CU_ASSERT_EQUAL_FATAL(pl_world_run(2, NULL, 10, mismatch_rank_fn, &u, err, sizeof err), 0);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL(u.rc[r], -1);
        CU_ASSERT_STRING_EQUAL(u.err[r], "stage 0, op 2 (B0): this stage body cannot split its "
                                         "backward into B and W; use BW ops (or a schedule "
                                         "without the split)");
    }
    pl_pp_schedule_free(&s);
    /* a body needs forward and backward */
    pl_pp_exec ex;
    pl_pp_body half = {nosplit_forward, NULL, NULL, NULL, NULL};
    CU_ASSERT_EQUAL(pl_pp_exec_init(&ex, &half, NULL, NULL, 0, 0, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "a pipeline stage body needs a forward and a backward");
}

/* ---- the global gradient norm ------------------------------------------------------------------
 */

static void test_clip_grad_norm(void)
{
    layers = 5;
    one_device *ref = reference();
    pl_blocks_config c = model();
    long n = pl_blocks_count(&c);
    double sq = 0;
    for (long i = 0; i < n; i++) sq += (double)ref->grads1[i] * ref->grads1[i];
    double want = sqrt(sq);
    char err[256];
    pl_pp_schedule s;
    /* the norm only (max_norm huge: nothing scaled), on 1 and 4 stages */
    for (int p = 1; p <= 4; p += 3) {
        CU_ASSERT_EQUAL_FATAL(pl_pp_build(&s, PL_PP_1F1B, p, 4, 1, err, sizeof err), 0);
        pp_run *run = pipeline(&s, 1, 1e30f);
        CU_ASSERT_PTR_NOT_NULL_FATAL(run);
        if (!(fabs(run->norm - want) <= 1e-4 * want))
            fprintf(stderr, "  p=%d: norm %.9g, one device %.9g\n", p, run->norm, want);
        CU_ASSERT(fabs(run->norm - want) <= 1e-4 * want);
        CU_ASSERT(close_model("unclipped gradients", run->grads1, ref->grads1, 1e-6, 1e-5));
        run_free(run);
        pl_pp_schedule_free(&s);
    }
    /* clipped to half the norm: every gradient halved */
    CU_ASSERT_EQUAL_FATAL(pl_pp_build(&s, PL_PP_1F1B, 4, 4, 1, err, sizeof err), 0);
    pp_run *run = pipeline(&s, 1, (float)(want / 2));
    CU_ASSERT_PTR_NOT_NULL_FATAL(run);
    float *half = malloc((size_t)n * 4);
    for (long i = 0; i < n; i++) half[i] = ref->grads1[i] * (float)(want / 2 / run->norm);
    CU_ASSERT(close_model("clipped gradients", run->grads1, half, 1e-7, 1e-5));
    free(half);
    run_free(run);
    pl_pp_schedule_free(&s);
}

/* ---- evaluation: forwards only --------------------------------------------------------------- */

typedef struct {
    int p, m;
    float loss;
    int correct;
    char err[PL_PP_MAX_STAGES][1024];
} eval_run;

static int eval_rank_fn(pl_rank *r)
{
    eval_run *e = r->arg;
    pl_blocks_config c = model();
    pl_pp_blocks pp;
    int me = r->rank, rc = 1;
    if (pl_pp_blocks_create(&pp, &c, r->comm, 1, B, e->m, SEED, r->stream, e->err[me],
                            sizeof e->err[me]))
        return 1;
    float *dX = to_dev(X_all[0], sizeof X_all[0]);
    int *dy = to_dev(y_all[0], sizeof y_all[0]);
    float loss = 0;
    if (pl_pp_blocks_evaluate(&pp, me == 0 ? dX : NULL, me == r->size - 1 ? dy : NULL, &loss))
        snprintf(e->err[me], sizeof e->err[me], "%s", pp.error);
    else
        rc = 0;
    if (!rc && me == r->size - 1) {
        e->loss = loss;
        cudaMemcpy(&e->correct, pp.part[0].correct, sizeof(int), cudaMemcpyDeviceToHost);
    }
    cudaFree(dX), cudaFree(dy);
    pl_pp_blocks_destroy(&pp);
    return rc;
}

/* What a stage's device buffers hold after pl_pp_blocks_create, written
 * on the rank's stream and read back after the device synchronised: the
 * loss sums, the pipeline's and its part's. */
typedef struct {
    float got[2];
    char err[256];
} settled_run;

static int settled_rank_fn(pl_rank *r)
{
    settled_run *t = r->arg;
    pl_blocks_config c = model();
    pl_pp_blocks pp;
    if (pl_pp_blocks_create(&pp, &c, r->comm, 1, B, 2, SEED, r->stream, t->err, sizeof t->err))
        return 1;
    float *bufs[2] = {pp.loss_sum, pp.part[0].loss_sum}, seven = 7.0f;
    for (int i = 0; i < 2; i++)
        cudaMemcpyAsync(bufs[i], &seven, sizeof seven, cudaMemcpyHostToDevice, r->stream);
    cudaStreamSynchronize(r->stream);
    cudaDeviceSynchronize(); /* whatever create left on the legacy stream lands now */
    for (int i = 0; i < 2; i++)
        cudaMemcpyAsync(&t->got[i], bufs[i], sizeof(float), cudaMemcpyDeviceToHost, r->stream);
    cudaStreamSynchronize(r->stream);
    pl_pp_blocks_destroy(&pp);
    return 0;
}

/* pl_pp_blocks_create leaves no work behind on the legacy default stream,
 * which the rank's (non-blocking) stream does not wait for: its zeroing of
 * the loss sum landing later would wipe what the step had summed. Run with
 * the legacy stream lazy (it then lands at the next synchronize, every
 * time): the 7 written on the stream after create is still there. */
static void test_create_settled(void)
{
    layers = 5;
    settled_run t = {{0, 0}, ""};
    pl_device_set_lazy_default_stream(1);
    char err[600];
    int rc = pl_world_run(1, NULL, 10, settled_rank_fn, &t, err, sizeof err);
    pl_device_set_lazy_default_stream(0);
    if (rc) fprintf(stderr, "  %s %s\n", err, t.err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(t.got[0], 7.0f); /* the pipeline's loss sum */
    CU_ASSERT_EQUAL(t.got[1], 7.0f); /* its part's (pl_blocks_create) */
}

/* The loss of the initial weights on the first batch, forwards only through
 * p stages in m micro-batches: the one device's first loss; the rows
 * predicted right the same for every p and m. */
static void test_evaluate(void)
{
    layers = 5;
    one_device *ref = reference();
    int correct = -1;
    static const int pm[][2] = {{1, 1}, {2, 4}, {4, 2}, {4, 16}};
    for (size_t i = 0; i < sizeof pm / sizeof *pm; i++) {
        eval_run e;
        memset(&e, 0, sizeof e);
        e.p = pm[i][0];
        e.m = pm[i][1];
        char err[2048];
        int rc = pl_world_run(e.p, NULL, 10, eval_rank_fn, &e, err, sizeof err);
        if (rc) fprintf(stderr, "  p=%d m=%d: %s\n", e.p, e.m, err);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        CU_ASSERT(fabs(e.loss - ref->loss[0]) <= 1e-5 * fabs(ref->loss[0]));
        if (correct < 0) correct = e.correct;
        CU_ASSERT_EQUAL(e.correct, correct);
        CU_ASSERT(e.correct >= 0 && e.correct <= B);
    }
}

/* ---- the trace ----------------------------------------------------------------------------------
 */

typedef struct {
    const pl_pp_schedule *s;
    size_t acts_bytes[PL_PP_MAX_STAGES];
    char err[PL_PP_MAX_STAGES][1024];
} trace_run;

static int trace_rank_fn(pl_rank *r)
{
    trace_run *t = r->arg;
    pl_blocks_config c = model();
    pl_pp_blocks pp;
    int me = r->rank, rc = 1;
    if (pl_pp_blocks_create(&pp, &c, r->comm, t->s->chunks, B, t->s->micro_batches, SEED, r->stream,
                            t->err[me], sizeof t->err[me]))
        return 1;
    pp.exec.trace = r->trace;
    pp.exec.world_rank = me;
    t->acts_bytes[me] = pl_pp_blocks_acts_bytes(&pp, 0);
    float *dX = to_dev(X_all[0], sizeof X_all[0]);
    int *dy = to_dev(y_all[0], sizeof y_all[0]);
    if (pl_pp_blocks_step(&pp, t->s, dX, dy, NULL))
        snprintf(t->err[me], sizeof t->err[me], "%s", pp.error);
    else
        rc = 0;
    cudaFree(dX), cudaFree(dy);
    pl_pp_blocks_destroy(&pp);
    return rc;
}

static void test_trace(void)
{
    layers = 5;
    make_batches();
    char err[2048];
    pl_pp_schedule s;
    enum { P = 2, M = 4 };
    CU_ASSERT_EQUAL_FATAL(pl_pp_build(&s, PL_PP_1F1B, P, M, 1, err, sizeof err), 0);
    pl_trace *tr = pl_trace_create(P, 4096, PL_TRACE_DROP);
    trace_run t;
    memset(&t, 0, sizeof t);
    t.s = &s;
    int rc = pl_world_run_traced(P, NULL, 10, tr, trace_rank_fn, &t, err, sizeof err);
    if (rc) fprintf(stderr, "  %s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    static pl_event ev[4096];
    size_t n = pl_trace_drain(tr, ev, 4096);
    int seen[P] = {0};
    for (size_t i = 0; i < n; i++) {
        const pl_event *e = &ev[i];
        if (e->kind != PL_EV_FORWARD && e->kind != PL_EV_BACKWARD && e->kind != PL_EV_WEIGHT_GRAD)
            continue;
        int r = e->rank;
        CU_ASSERT_FATAL(r >= 0 && r < P);
        CU_ASSERT_FATAL(seen[r] < s.n[r]);
        pl_pp_op op = s.ops[r][seen[r]++];
        char label[24];
        pl_pp_op_name(op, 1, label, sizeof label);
        CU_ASSERT_STRING_EQUAL(e->label, label);
        CU_ASSERT_EQUAL(e->kind, op.kind == PL_PP_F ? PL_EV_FORWARD : PL_EV_BACKWARD);
        CU_ASSERT_EQUAL(e->lane, PL_LANE_COMPUTE);
        CU_ASSERT_EQUAL(e->micro_batch, op.micro_batch);
        CU_ASSERT_EQUAL(e->layer, r);
        CU_ASSERT_EQUAL(e->chunk, 0);
        CU_ASSERT(e->modeled_end > e->modeled_start);
        CU_ASSERT(e->end >= e->start);
    }
    for (int r = 0; r < P; r++) CU_ASSERT_EQUAL(seen[r], s.n[r]);
    /* the activation notes of each stage: up by one set at each F, down at each BW */
    pl_note *notes = NULL;
    size_t nn = pl_trace_take_notes(tr, &notes);
    for (int r = 0; r < P; r++) {
        char name[32];
        snprintf(name, sizeof name, "activations s%d", r);
        double want[64], held = 0;
        int nw = 0, got = 0;
        for (int j = 0; j < s.n[r]; j++) { /* F takes one set, BW gives it back */
            held += (s.ops[r][j].kind == PL_PP_F ? 1.0 : -1.0) * (double)t.acts_bytes[r];
            want[nw++] = held;
        }
        for (size_t i = 0; i < nn; i++) {
            if (notes[i].kind != PL_NOTE_METRIC || strcmp(notes[i].name, name)) continue;
            CU_ASSERT_FATAL(got < nw);
            CU_ASSERT_EQUAL(notes[i].value, want[got]);
            got++;
        }
        CU_ASSERT_EQUAL(got, nw);
    }
    pl_trace_free_notes(notes, nn);
    pl_trace_destroy(tr);
    pl_pp_schedule_free(&s);
}

int register_pp_suite(void)
{
    static const unit_test t[] = {
        {"naive: gradients and 10 SGD steps equal one device (p 1, 2, 4; m 1, < p, p, 4p)",
         test_naive},
        {"gpipe: the same", test_gpipe},
        {"1f1b: the same", test_1f1b},
        {"interleaved v 1, 2, 4: the same wherever accepted", test_interleaved},
        {"zb-h1: the same", test_zb_h1},
        {"a batch that m does not divide is refused, naming both", test_micro_batches_refused},
        {"uniform stages: measured bubble = the formula (naive, gpipe, 1f1b, interleaved)",
         test_bubble},
        {"uniform stages: ZB-H1's bubble is a third of 1F1B's", test_bubble_zb_h1},
        {"uniform stages: every op starts when the validator's timeline says", test_timeline},
        {"peak activation bytes measured from allocations = the formula", test_peak_memory},
        {"bad schedules: the validator's message on every rank, nothing sent", test_bad_schedules},
        {"a schedule for another p, B/W for a body without them: refused",
         test_refused_configurations},
        {"global gradient norm over the stages = one device's; clipping scales",
         test_clip_grad_norm},
        {"evaluation, forwards only: the one device's loss for every p and m", test_evaluate},
        {"trace: one event per op, the activation notes", test_trace},
        {"create leaves nothing on the legacy stream to land later (lazy legacy)",
         test_create_settled},
    };
    return UNIT_SUITE("pp", t);
}
