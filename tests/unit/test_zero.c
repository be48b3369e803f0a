/*
 * test_zero.c — ZeRO stages 0-3 (paralab/zero.h): the refusals, the
 * buckets and their padding, the memory and traffic formulas as numbers
 * worked out by hand, and real runs on 1, 2, 4 and 8 simulated ranks. For
 * every stage and N, ten AdamW steps:
 *   - the weights after each step are the same bits as stage 0's (plain
 *     data parallelism over the same buckets: every stage sums every
 *     gradient element in the same ring order);
 *   - stage 0's weights after each step equal Lab 10's engine as plain data
 *     parallelism (pl_hybrid, dp = N, tp = pp = 1: an independent
 *     implementation, one all-reduce of the whole unpadded buffer) within
 *     1e-6 relative (the norm of the difference over the norm of the
 *     weights);
 *   - the memory each rank's allocations take (z->mem, measured with
 *     cudaMemGetInfo) equals the fp32 formulas with the padding;
 *   - the floats each rank sends per step (its ledger) equal 2 (N-1)/N
 *     Ψ_pad for stages 0-2 and 3 (N-1)/N Ψ_pad for stage 3, and the calls
 *     the stage makes;
 *   - the padding of every full buffer and shard is still zero.
 * Then gradient accumulation (k = 2 and 4, SGD) against k = 1 within
 * 1e-6 relative, its traffic ((k+1) and 3k for stages 2 and 3), overlap on
 * and off giving the same bits, and pl_zero_optimize_range's refusal of a
 * range outside the rank's shard.
 *
 * CUnit is not thread-safe: rank functions only record what they saw; the
 * test thread asserts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/hybrid.h"
#include "paralab/world.h"
#include "paralab/zero.h"
#include "suites.h"

enum { HID = 16, LAYERS = 2, BATCH = 32, STEPS = 10, NR = 8 };

static pl_zero_config config(int stage, int k)
{
    pl_zero_config c = {.model = pl_blocks_config_make(HID, LAYERS),
                        .stage = stage,
                        .batch = BATCH,
                        .accumulate = k,
                        .overlap = 1};
    return c;
}

/* ---- host-only: refusals, buckets, formulas ------------------------------------------------ */

static void test_zero_check(void)
{
    char err[512];
    pl_zero_config c = config(2, 1);
    CU_ASSERT_EQUAL(pl_zero_check(&c, 8, err, sizeof err), 0);
    c.stage = 4;
    CU_ASSERT_EQUAL(pl_zero_check(&c, 8, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "--stage 4: ZeRO has stages 0 (plain data parallelism), 1 "
                                "(optimizer state sharded), 2 (and gradients) and 3 (and "
                                "parameters)");
    c = config(1, 0);
    CU_ASSERT_EQUAL(pl_zero_check(&c, 8, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err,
                           "--accumulate 0: the micro-steps per optimizer step must be 1..1024");
    c = config(1, 4);
    c.batch = 60;
    CU_ASSERT_EQUAL(pl_zero_check(&c, 8, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "--batch 60: 60 rows do not split into 8 ranks of 4 micro-steps "
                                "(B must be a multiple of N k = 32)");
    c = config(0, 1);
    CU_ASSERT_EQUAL(pl_zero_check(&c, 0, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "--devices 0: data parallelism runs on 1..64 ranks");
    c.model.layers = 0;
    CU_ASSERT_EQUAL(pl_zero_check(&c, 2, err, sizeof err), -1);
}

/* The default model (h 64, f 256, L 2, 64 inputs, 10 classes) on 8 ranks:
 * the units are 64*64+64 = 4160, 3*64 + 64*256 + 256 + 256*64 = 33216
 * (twice) and 2*64 + 64*10 + 10 = 778 floats; 778 pads to 784 = 8 * 98,
 * the others divide. Ψ = 71370, Ψ_pad = 71376, a shard 8922. */
static void test_zero_buckets(void)
{
    pl_blocks_config m = pl_blocks_default();
    pl_zero_bucket b[PL_ZERO_UNITS_MAX];
    char err[256];
    CU_ASSERT_EQUAL_FATAL(pl_zero_buckets(&m, 8, 7, b, PL_ZERO_UNITS_MAX, err, sizeof err), 4);
    const char *names[] = {"in", "b0", "b1", "head"};
    const long begin[] = {0, 4160, 37376, 70592}, len[] = {4160, 33216, 33216, 778};
    const long shard[] = {520, 4152, 4152, 98}, full_at[] = {0, 4160, 37376, 70592};
    const long slice_at[] = {0, 520, 4672, 8824}, real7[] = {520, 4152, 4152, 92};
    for (int u = 0; u < 4; u++) {
        CU_ASSERT_STRING_EQUAL(b[u].name, names[u]);
        CU_ASSERT_EQUAL(b[u].begin, begin[u]);
        CU_ASSERT_EQUAL(b[u].end - b[u].begin, len[u]);
        CU_ASSERT_EQUAL(b[u].shard, shard[u]);
        CU_ASSERT_EQUAL(b[u].padded, 8 * shard[u]);
        CU_ASSERT_EQUAL(b[u].full_at, full_at[u]);
        CU_ASSERT_EQUAL(b[u].slice_at, slice_at[u]);
        CU_ASSERT_EQUAL(b[u].real, real7[u]);
    }
    CU_ASSERT_EQUAL(pl_blocks_count(&m), 71370);
    CU_ASSERT_EQUAL(pl_zero_padded(&m, 8), 71376);
    CU_ASSERT_EQUAL(pl_zero_padded(&m, 1), 71370);
    /* 3 ranks: 4160 -> 4161, 33216 divides, 778 -> 780 */
    CU_ASSERT_EQUAL(pl_zero_padded(&m, 3), 4161 + 2 * 33216 + 780);
    CU_ASSERT_EQUAL(pl_zero_buckets(&m, 3, 2, b, PL_ZERO_UNITS_MAX, err, sizeof err), 4);
    CU_ASSERT_EQUAL(b[0].real, 4160 - 2 * 1387);
    CU_ASSERT_EQUAL(b[3].real, 778 - 2 * 260);
    /* a rank whose slice of a small unit is all padding */
    pl_blocks_config tiny = pl_blocks_config_make(1, 1);
    tiny.classes = 2; /* head: 2*1 + 1*2 + 2 = 6 floats over 8 ranks: shard 1, rank 7 none */
    CU_ASSERT_EQUAL(pl_zero_buckets(&tiny, 8, 7, b, PL_ZERO_UNITS_MAX, err, sizeof err), 3);
    CU_ASSERT_EQUAL(b[2].shard, 1);
    CU_ASSERT_EQUAL(b[2].real, 0);
    CU_ASSERT_EQUAL(pl_zero_buckets(&m, 8, 8, b, PL_ZERO_UNITS_MAX, err, sizeof err), -1);
}

static void test_zero_formulas(void)
{
    const size_t P = 71376; /* Ψ_pad for the default model on 8 ranks */
    pl_zero_config c = {.model = pl_blocks_default(), .batch = 64, .accumulate = 1};
    pl_zero_memory m;
    const size_t want_p[] = {4 * P, 4 * P, 4 * P, 4 * P / 8};
    const size_t want_g[] = {4 * P, 4 * P, 4 * P / 8, 4 * P / 8};
    const size_t want_o[] = {8 * P, 8 * P / 8, 8 * P / 8, 8 * P / 8};
    /* the working buckets: 2 (stage 2) or 4 (stage 3) of the largest unit, 33216 floats */
    const size_t want_b[] = {0, 0, 2 * 4 * 33216, 4 * 4 * 33216};
    for (int s = 0; s < 4; s++) {
        c.stage = s;
        CU_ASSERT_EQUAL_FATAL(pl_zero_memory_of(&c, 8, &m, NULL, 0), 0);
        CU_ASSERT_EQUAL(m.params, want_p[s]);
        CU_ASSERT_EQUAL(m.grads, want_g[s]);
        CU_ASSERT_EQUAL(m.optim, want_o[s]);
        CU_ASSERT_EQUAL(m.buffers, want_b[s]);
    }
    /* the paper's totals: 16Ψ, 8Ψ + 8Ψ/N, 4Ψ + 12Ψ/N, 16Ψ/N */
    c.stage = 2;
    pl_zero_memory_of(&c, 8, &m, NULL, 0);
    CU_ASSERT_EQUAL(m.params + m.grads + m.optim, 4 * P + 12 * P / 8);
    c.sgd = 1; /* momentum only */
    pl_zero_memory_of(&c, 8, &m, NULL, 0);
    CU_ASSERT_EQUAL(m.optim, 4 * P / 8);
    c.sgd = 0;
    c.accumulate = 2; /* and one slice of the largest unit */
    pl_zero_memory_of(&c, 8, &m, NULL, 0);
    CU_ASSERT_EQUAL(m.buffers, 2 * 4 * 33216 + 4 * 4152);
    /* traffic: c Ψ_pad = 7/8 of 71376 = 62454 floats */
    pl_zero_traffic t;
    c.accumulate = 1;
    for (int s = 0; s < 4; s++) {
        c.stage = s;
        CU_ASSERT_EQUAL_FATAL(pl_zero_traffic_of(&c, 8, &t, NULL, 0), 0);
        CU_ASSERT_EQUAL(t.all_reduce + t.reduce_scatter + t.all_gather,
                        (s == 3 ? 3u : 2u) * 62454u);
        CU_ASSERT_EQUAL(t.calls, s == 0 ? 4u : s == 3 ? 12u : 8u);
    }
    c.accumulate = 4;
    c.stage = 2;
    pl_zero_traffic_of(&c, 8, &t, NULL, 0);
    CU_ASSERT_EQUAL(t.reduce_scatter, 4u * 62454u);
    CU_ASSERT_EQUAL(t.all_gather, 62454u);
    c.stage = 3;
    pl_zero_traffic_of(&c, 8, &t, NULL, 0);
    CU_ASSERT_EQUAL(t.all_gather, 8u * 62454u);
    c.stage = 1;
    pl_zero_traffic_of(&c, 8, &t, NULL, 0);
    CU_ASSERT_EQUAL(t.reduce_scatter + t.all_gather, 2u * 62454u);
}

/* ---- real runs ---------------------------------------------------------------------------- */

typedef struct zrun {
    pl_zero_config cfg;
    int n, steps, hybrid; /* hybrid: run pl_hybrid (dp = n) instead */
    float X[BATCH * 64];
    int y[BATCH];
    long psi;
    float *params[STEPS]; /* the whole model's weights after each step */
    float *rows[NR];      /* each rank's slices of the last step (pl_zero_shard_to_host) */
    float *placed;        /* rank 0 put the rows in their places (pl_zero_shard_place) */
    pl_zero_memory mem[NR];
    pl_ledger sent[NR];  /* one step's, from the ledger */
    int padding_bad[NR]; /* a padding float found non-zero */
    char refusal[NR][256];
} zrun;

#define RUN_CK(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            snprintf(r->error, sizeof r->error, __VA_ARGS__);                                      \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

/* Every float of the padding in this rank's buffers is zero. */
static int padding_zero(pl_zero *z)
{
    cudaStreamSynchronize(z->stream);
    for (int u = 0; u < z->units; u++) {
        const pl_zero_bucket *b = &z->bucket[u];
        long n = b->end - b->begin;
        float *fulls[] = {z->params, z->grads};
        for (int i = 0; i < 2; i++) {
            if (!fulls[i] || b->padded == n) continue;
            float tail[64];
            long m = b->padded - n;
            if (m > 64 ||
                cudaMemcpy(tail, fulls[i] + b->full_at + n, (size_t)m * 4, cudaMemcpyDeviceToHost))
                return 0;
            for (long j = 0; j < m; j++)
                if (tail[j] != 0.0f) return 0;
        }
        float *shards[] = {z->param_shard, z->grad_shard, z->opt_m, z->opt_v};
        for (int i = 0; i < 4; i++) {
            if (!shards[i] || (i >= 2 && z->cfg.stage == 0) || b->real == b->shard) continue;
            long m = b->shard - b->real;
            float tail[64];
            if (m > 64 || cudaMemcpy(tail, shards[i] + b->slice_at + b->real, (size_t)m * 4,
                                     cudaMemcpyDeviceToHost))
                return 0;
            for (long j = 0; j < m; j++)
                if (tail[j] != 0.0f) return 0;
        }
    }
    return 1;
}

static int zero_rank(pl_rank *r)
{
    zrun *q = r->arg;
    int me = r->rank, n = r->size, rc = 1, rows = BATCH / n;
    float *X = NULL;
    int *y = NULL;
    pl_zero z;
    memset(&z, 0, sizeof z);
    pl_hybrid h;
    memset(&h, 0, sizeof h);
    pl_pp_schedule s;
    int have_s = 0;
    char err[512];
    RUN_CK(!cudaMalloc((void **)&X, (size_t)rows * 64 * 4) &&
               !cudaMalloc((void **)&y, (size_t)rows * sizeof(int)),
           "cudaMalloc");
    cudaMemcpy(X, q->X + (size_t)me * rows * 64, (size_t)rows * 64 * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(y, q->y + me * rows, (size_t)rows * sizeof(int), cudaMemcpyHostToDevice);
    if (q->hybrid) {
        pl_hybrid_config hc = {.model = q->cfg.model,
                               .dp = n,
                               .tp = 1,
                               .pp = 1,
                               .chunks = 1,
                               .batch = BATCH,
                               .micro_batches = 1};
        RUN_CK(!pl_hybrid_create(&h, &hc, r->comm, NULL, 7, r->stream, err, sizeof err), "%s", err);
        RUN_CK(!pl_pp_build(&s, PL_PP_1F1B, 1, 1, 1, err, sizeof err), "%s", err);
        have_s = 1;
        for (int step = 0; step < q->steps; step++) {
            RUN_CK(!pl_hybrid_step(&h, &s, pl_hybrid_dp_after(&s, 0), X, y, NULL), "%s", h.error);
            RUN_CK(!(q->cfg.sgd ? pl_hybrid_sgd(&h, 0.05f) : pl_hybrid_adamw(&h, 0.01f)), "%s",
                   h.error);
            if (me == 0) RUN_CK(!pl_hybrid_unslice(&h, q->params[step], 0), "%s", h.error);
        }
        rc = 0;
        goto out;
    }
    RUN_CK(!pl_zero_create(&z, &q->cfg, r->comm, 7, r->stream, err, sizeof err), "%s", err);
    q->mem[me] = z.mem;
    for (int step = 0; step < q->steps; step++) {
        pl_ledger before = pl_comm_ledger_own(r->comm);
        RUN_CK(!pl_zero_step(&z, X, y, NULL), "step %d: %.900s", step, z.error);
        RUN_CK(!pl_zero_update(&z, q->cfg.sgd ? 0.05f : 0.01f), "update %d: %.900s", step, z.error);
        pl_ledger after = pl_comm_ledger_own(r->comm);
        if (step == 0) {
            q->sent[me].bytes_sent = after.bytes_sent - before.bytes_sent;
            for (int k = 0; k < PL_NUM_CALLS; k++)
                q->sent[me].calls[k] = after.calls[k] - before.calls[k];
        }
        /* the ranks' slices are disjoint: each writes its own */
        RUN_CK(!pl_zero_slices_to_host(&z, q->params[step], 0), "%s", z.error);
        if (!padding_zero(&z)) q->padding_bad[me] = step + 1;
        RUN_CK(!pl_comm_barrier(r->comm), "barrier");
    }
    /* the same slices as rows (as under mpirun), put in place by rank 0 */
    RUN_CK((q->rows[me] = calloc((size_t)z.shard_floats, 4)) != NULL, "out of memory");
    RUN_CK(!pl_zero_shard_to_host(&z, q->rows[me], 0), "%s", z.error);
    RUN_CK(!pl_comm_barrier(r->comm), "barrier");
    for (int k = 0; k < n && me == 0; k++)
        RUN_CK(!pl_zero_shard_place(&z, k, q->rows[k], q->placed), "%s", z.error);
    RUN_CK(pl_zero_shard_place(&z, n, q->rows[0], q->placed) == -1 &&
               strstr(z.error, "shard_place: rank") != NULL,
           "a rank out of range was not refused: %.900s", z.error);
    /* a rank updating more than its shard is refused, naming the range */
    if (z.cfg.stage > 0) {
        pl_zero_count_step(&z);
        if (pl_zero_optimize_range(&z, z.params ? z.params : z.param_shard,
                                   z.grads ? z.grads : z.grad_shard, 0, z.psi_pad, 0.01f))
            snprintf(q->refusal[me], sizeof q->refusal[me], "%.250s", z.error);
    }
    rc = 0;
out:
    if (have_s) pl_pp_schedule_free(&s);
    if (q->hybrid)
        pl_hybrid_destroy(&h);
    else
        pl_zero_destroy(&z);
    cudaFree(X);
    cudaFree(y);
    return rc;
}

static zrun *new_run(pl_zero_config c, int n, int steps)
{
    zrun *q = calloc(1, sizeof *q);
    q->cfg = c;
    q->n = n;
    q->steps = steps;
    unsigned long long x = 12345;
    for (int i = 0; i < BATCH * 64; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        q->X[i] = (float)((x >> 40) % 1000) / 500.0f - 1.0f;
    }
    for (int i = 0; i < BATCH; i++) q->y[i] = (i * 7 + 3) % 10;
    q->psi = pl_blocks_count(&c.model);
    for (int s = 0; s < steps; s++) q->params[s] = calloc((size_t)q->psi, 4);
    q->placed = calloc((size_t)q->psi, 4);
    return q;
}

static void free_run(zrun *q)
{
    for (int s = 0; s < q->steps; s++) free(q->params[s]);
    for (int r = 0; r < NR; r++) free(q->rows[r]);
    free(q->placed);
    free(q);
}

static int go(zrun *q)
{
    char err[1500];
    int rc = pl_world_run(q->n, NULL, 30, zero_rank, q, err, sizeof err);
    if (rc)
        fprintf(stderr, "  N %d stage %d k %d%s: %s\n", q->n, q->cfg.stage, q->cfg.accumulate,
                q->hybrid ? " (hybrid)" : "", err);
    return rc;
}

/* |got - want| / |want| over the whole vector. */
static double rel_diff(const float *got, const float *want, long n)
{
    double d = 0, w = 0;
    for (long i = 0; i < n; i++) {
        d += ((double)got[i] - want[i]) * ((double)got[i] - want[i]);
        w += (double)want[i] * want[i];
    }
    return w > 0 ? sqrt(d / w) : sqrt(d);
}

/* Ψ_pad computed by hand: the unit sizes padded to a multiple of n. */
static long psi_pad_by_hand(int n)
{
    long h = HID, f = 4 * HID, units[2 + LAYERS];
    units[0] = 64 * h + h;
    for (int j = 0; j < LAYERS; j++) units[1 + j] = 3 * h + h * f + f + f * h;
    units[1 + LAYERS] = 2 * h + h * 10 + 10;
    long s = 0;
    for (int u = 0; u < 2 + LAYERS; u++) s += (units[u] + n - 1) / n * n;
    return s;
}

static void check_n(int n)
{
    zrun *base = new_run(config(0, 1), n, STEPS);
    CU_ASSERT_EQUAL_FATAL(go(base), 0);
    /* stage 0 against pl_hybrid's plain DP */
    zrun *hy = new_run(config(0, 1), n, STEPS);
    hy->hybrid = 1;
    CU_ASSERT_EQUAL_FATAL(go(hy), 0);
    for (int s = 0; s < STEPS; s++) {
        double d = rel_diff(base->params[s], hy->params[s], base->psi);
        if (d > 1e-6) fprintf(stderr, "  N %d step %d: stage 0 vs plain DP %.3g\n", n, s, d);
        CU_ASSERT(d <= 1e-6);
    }
    long P = psi_pad_by_hand(n);
    for (int st = 0; st < 4; st++) {
        zrun *q = st == 0 ? base : new_run(config(st, 1), n, STEPS);
        if (st) CU_ASSERT_EQUAL_FATAL(go(q), 0);
        for (int s = 0; s < STEPS; s++)
            CU_ASSERT_EQUAL(memcmp(q->params[s], base->params[s], (size_t)base->psi * 4), 0);
        /* the rows put together are the last step's weights, every float */
        CU_ASSERT_EQUAL(memcmp(q->placed, q->params[STEPS - 1], (size_t)q->psi * 4), 0);
        pl_zero_memory want;
        CU_ASSERT_EQUAL_FATAL(pl_zero_memory_of(&q->cfg, n, &want, NULL, 0), 0);
        /* bytes: params 4, grads 4, m and v 8 per float, each whole or a 1/n shard */
        size_t p = (size_t)P, pn = p / (size_t)n;
        size_t hand = st == 0   ? 16 * p
                      : st == 1 ? 8 * p + 8 * pn
                      : st == 2 ? 4 * p + 12 * pn
                                : 16 * pn;
        for (int r = 0; r < n; r++) {
            CU_ASSERT_EQUAL(q->mem[r].params, want.params);
            CU_ASSERT_EQUAL(q->mem[r].grads, want.grads);
            CU_ASSERT_EQUAL(q->mem[r].optim, want.optim);
            CU_ASSERT_EQUAL(q->mem[r].buffers, want.buffers);
            CU_ASSERT_EQUAL(q->mem[r].params + q->mem[r].grads + q->mem[r].optim, hand);
            /* c Ψ_pad floats per call kind: 2 of them (3 at stage 3) */
            unsigned long long per = (unsigned long long)(n - 1) * (unsigned long long)(P / n);
            CU_ASSERT_EQUAL(q->sent[r].bytes_sent, 4ull * per * (st == 3 ? 3 : 2));
            const uint64_t *k = q->sent[r].calls;
            int U = 2 + LAYERS;
            CU_ASSERT_EQUAL(k[PL_CALL_ALL_REDUCE], st == 0 ? (uint64_t)U : 0);
            CU_ASSERT_EQUAL(k[PL_CALL_REDUCE_SCATTER], st == 0 ? 0 : (uint64_t)U);
            CU_ASSERT_EQUAL(k[PL_CALL_ALL_GATHER], (uint64_t)(st == 0 ? 0 : st == 3 ? 2 * U : U));
            CU_ASSERT_EQUAL(q->padding_bad[r], 0);
            if (st > 0) {
                char want_msg[256];
                snprintf(want_msg, sizeof want_msg,
                         "the AdamW state is %ld floats on each rank (its shard); floats [0, %ld) "
                         "are outside it: a rank updates only its own slices",
                         P / n, P);
                if (n > 1) CU_ASSERT_STRING_EQUAL(q->refusal[r], want_msg);
            }
        }
        if (st) free_run(q);
    }
    free_run(hy);
    free_run(base);
}

static void test_zero_1(void) { check_n(1); }
static void test_zero_2(void) { check_n(2); }
static void test_zero_4(void) { check_n(4); }
static void test_zero_8(void) { check_n(8); }

/* Gradient accumulation: k micro-steps of B / (N k) rows give the step of
 * one micro-step of B / N within 1e-6 relative (SGD), at every stage; the
 * traffic of stages 2 and 3 grows with k. Overlap off: the same bits. */
static void test_zero_accumulate(void)
{
    const int n = 4, ks[] = {2, 4};
    zrun *ref = NULL;
    pl_zero_config c = config(0, 1);
    c.sgd = 1;
    ref = new_run(c, n, 3);
    CU_ASSERT_EQUAL_FATAL(go(ref), 0);
    long P = psi_pad_by_hand(n);
    unsigned long long per = (unsigned long long)(n - 1) * (unsigned long long)(P / n);
    for (int st = 0; st < 4; st++)
        for (int i = 0; i < 2; i++) {
            if (unit_short() && i == 1) continue;
            c = config(st, ks[i]);
            c.sgd = 1;
            zrun *q = new_run(c, n, 3);
            CU_ASSERT_EQUAL_FATAL(go(q), 0);
            for (int s = 0; s < 3; s++) {
                double d = rel_diff(q->params[s], ref->params[s], q->psi);
                if (d > 1e-6)
                    fprintf(stderr, "  stage %d k %d step %d: %.3g from k = 1\n", st, ks[i], s, d);
                CU_ASSERT(d <= 1e-6);
            }
            unsigned long long k = (unsigned long long)ks[i];
            unsigned long long want = st <= 1 ? 2 : st == 2 ? k + 1 : 3 * k;
            for (int r = 0; r < n; r++) CU_ASSERT_EQUAL(q->sent[r].bytes_sent, 4ull * per * want);
            /* without overlap: the same bits */
            c.overlap = 0;
            zrun *o = new_run(c, n, 3);
            CU_ASSERT_EQUAL_FATAL(go(o), 0);
            for (int s = 0; s < 3; s++)
                CU_ASSERT_EQUAL(memcmp(o->params[s], q->params[s], (size_t)q->psi * 4), 0);
            free_run(o);
            free_run(q);
        }
    free_run(ref);
}

int register_zero_suite(void)
{
    static const unit_test t[] = {
        {"refusals name the bad value and what is allowed", test_zero_check},
        {"buckets: the units, their padding, each rank's slices", test_zero_buckets},
        {"memory and traffic formulas, worked by hand", test_zero_formulas},
        {"1 rank: every stage = plain DP, memory, ledger, padding", test_zero_1},
        {"2 ranks: every stage = plain DP, memory, ledger, padding", test_zero_2},
        {"4 ranks: every stage = plain DP, memory, ledger, padding", test_zero_4},
        {"8 ranks: every stage = plain DP, memory, ledger, padding", test_zero_8},
        {"accumulation over k micro-steps = one step; traffic; overlap off, same bits",
         test_zero_accumulate},
    };
    return UNIT_SUITE("zero", t);
}
