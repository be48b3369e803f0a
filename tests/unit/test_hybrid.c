/*
 * test_hybrid.c — 3D parallelism (paralab/hybrid.h): the refusals and the
 * factorisations they list, a caller's groups checked against the mesh,
 * when the DP reduction fires, and real runs on 4 and 8 simulated ranks:
 * for every factorisation (dp, tp, pp) the model accepts, in both rank
 * orders, the first step's gradients equal the one-device step's within
 * 1e-6 + 1e-5 max|g| and the weights after the last step within 1e-6 +
 * 1e-5 relative (SGD: the sums taken in another order differ in their last
 * bits, and SGD keeps those differences at that level); after every step
 * the DP replicas of each (pp, tp) position hold the same bits; and each
 * group's own ledger for one step equals pl_hybrid_traffic_of, call for
 * call and byte for byte. A stage whose reduction never fires leaves its
 * replicas apart (what the lab's checks catch).
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
#include "suites.h"

enum { HID = 16, LAYERS = 4, BATCH = 16, MAXSTEPS = 2, NR = 8 };

static pl_hybrid_config config(int dp, int tp, int pp, int m)
{
    pl_hybrid_config c = {.model = pl_blocks_config_make(HID, LAYERS),
                          .dp = dp,
                          .tp = tp,
                          .pp = pp,
                          .chunks = 1,
                          .batch = BATCH,
                          .micro_batches = m,
                          .bucket_floats = 1000};
    return c;
}

/* ---- refusals, factorisations, groups, the reduction's op ---------------------------------- */

static void test_hybrid_check(void)
{
    char err[1024];
    pl_hybrid_config c = config(2, 2, 2, 2);
    CU_ASSERT_EQUAL(pl_hybrid_check(&c, 8, err, sizeof err), 0);
    int f[64][3];
    /* L = 4 blocks: pp = 8 cannot be; every other factorisation of 8 can */
    CU_ASSERT_EQUAL(pl_hybrid_factorisations(&c, 8, f, 64), 9);
    static const int want8[9][3] = {{8, 1, 1}, {4, 2, 1}, {4, 1, 2}, {2, 4, 1}, {2, 2, 2},
                                    {2, 1, 4}, {1, 8, 1}, {1, 4, 2}, {1, 2, 4}};
    for (int i = 0; i < 9; i++)
        for (int k = 0; k < 3; k++) CU_ASSERT_EQUAL(f[i][k], want8[i][k]);
    c.dp = 2, c.tp = 2, c.pp = 3;
    CU_ASSERT_EQUAL(pl_hybrid_check(&c, 8, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "--dp 2 --tp 2 --pp 3: dp x tp x pp = 12 ranks, but there are 8 "
                                "devices; valid (dp, tp, pp) for 8 ranks and this model: (8, 1, "
                                "1), (4, 2, 1), (4, 1, 2), (2, 4, 1), (2, 2, 2), (2, 1, 4), (1, "
                                "8, 1), (1, 4, 2) or (1, 2, 4)");
    c = config(1, 3, 2, 2);
    c.dp = 1;
    CU_ASSERT_EQUAL(pl_hybrid_check(&c, 6, err, sizeof err), -1);
    /* the TP degrees that split the model, up to the 6 ranks there are */
    CU_ASSERT_STRING_EQUAL(err, "--tp 3: the hidden width does not divide by it (h = 16, f = 4h = "
                                "64); tensor parallelism can split this model over 1, 2 or 4 "
                                "ranks (of the devices here); valid (dp, tp, pp) for 6 ranks and "
                                "this model: (2, 1, 3) or (1, 2, 3)");
    c = config(1, 1, 8, 2);
    CU_ASSERT_EQUAL(pl_hybrid_check(&c, 8, err, sizeof err), -1);
    CU_ASSERT_EQUAL(strncmp(err,
                            "--pp 8: L = 4 blocks cannot fill 8 stages of 1 chunk (each virtual "
                            "stage needs a block: --layers 8 at least); valid (dp, tp, pp) for 8 "
                            "ranks and this model: (8, 1, 1),",
                            145),
                    0);
    c = config(4, 1, 1, 8);
    CU_ASSERT_EQUAL(pl_hybrid_check(&c, 4, err, sizeof err), -1);
    const char *want_batch = "--batch 16: the global batch is cut into dp = 4 replicas of m = 8 "
                             "micro-batches each, so it must be a multiple of dp m = 32 (the "
                             "smallest: 32); valid";
    CU_ASSERT_EQUAL(strncmp(err, want_batch, strlen(want_batch)), 0);
    c = config(2, 1, 2, 4); /* 30 rows, dp m = 8: the multiples of 8 around 30 */
    c.batch = 30;
    CU_ASSERT_EQUAL(pl_hybrid_check(&c, 4, err, sizeof err), -1);
    const char *want_near = "--batch 30: the global batch is cut into dp = 2 replicas of m = 4 "
                            "micro-batches each, so it must be a multiple of dp m = 8 (the nearest "
                            "that are: 24 and 32)";
    CU_ASSERT_EQUAL(strncmp(err, want_near, strlen(want_near)), 0);
    c = config(1, 4, 1, 8); /* 2 rows per micro-batch cannot split over 4 */
    c.sequence_parallel = 1;
    CU_ASSERT_EQUAL(pl_hybrid_check(&c, 4, err, sizeof err), -1);
    CU_ASSERT_EQUAL(strncmp(err,
                            "--sequence-parallel: a micro-batch of 2 rows (B / (dp m) = 16 / 8) "
                            "does not split over tp = 4 ranks; valid (dp, tp, pp) for 4 ranks "
                            "and this model: (2, 1, 2), (1, 2, 2) or (1, 1, 4)",
                            170),
                    0);
    c = config(1, 2, 2, 16); /* one row: the singular */
    c.sequence_parallel = 1;
    CU_ASSERT_EQUAL(pl_hybrid_check(&c, 4, err, sizeof err), -1);
    CU_ASSERT_EQUAL(strncmp(err,
                            "--sequence-parallel: a micro-batch of 1 row (B / (dp m) = 16 / 16) "
                            "does not split over tp = 2 ranks; valid",
                            100),
                    0);
    c = config(0, 2, 2, 2);
    CU_ASSERT_EQUAL(pl_hybrid_check(&c, 8, err, sizeof err), -1);
    CU_ASSERT_EQUAL(strncmp(err, "--dp 0: each degree must be 1..64; valid", 40), 0);
    char list[256];
    c = config(1, 1, 1, 1);
    pl_hybrid_factorisations_str(&c, 1, list, sizeof list);
    CU_ASSERT_STRING_EQUAL(list, "(1, 1, 1)");
    c.batch = 1;
    c.model = pl_blocks_config_make(HID, 1);
    pl_hybrid_factorisations_str(&c, 3, list, sizeof list); /* 3 replicas of 1 row: no */
    CU_ASSERT_STRING_EQUAL(list, "none");
}

static void test_hybrid_dp_after(void)
{
    char err[256];
    pl_pp_schedule s;
    /* 1F1B on 4 stages, 4 micro-batches: every list ends with its last BW */
    CU_ASSERT_EQUAL_FATAL(pl_pp_build(&s, PL_PP_1F1B, 4, 4, 1, err, sizeof err), 0);
    for (int r = 0; r < 4; r++) CU_ASSERT_EQUAL(pl_hybrid_dp_after(&s, r), s.n[r] - 1);
    CU_ASSERT_EQUAL(pl_hybrid_dp_after(&s, 4), -1);
    CU_ASSERT_EQUAL(pl_hybrid_dp_after(&s, -1), -1);
    CU_ASSERT_EQUAL(pl_hybrid_dp_after(NULL, 0), -1);
    pl_pp_schedule_free(&s);
    /* ZB-H1: the last op writing weight gradients is a W */
    CU_ASSERT_EQUAL_FATAL(pl_pp_build(&s, PL_PP_ZB_H1, 4, 4, 1, err, sizeof err), 0);
    for (int r = 0; r < 4; r++) {
        int i = pl_hybrid_dp_after(&s, r);
        CU_ASSERT_EQUAL(s.ops[r][i].kind, PL_PP_W);
        for (int j = i + 1; j < s.n[r]; j++)
            CU_ASSERT(s.ops[r][j].kind != PL_PP_W && s.ops[r][j].kind != PL_PP_BW);
    }
    pl_pp_schedule_free(&s);
    /* a hand-made list that ends with a forward: the BW before it */
    CU_ASSERT_EQUAL_FATAL(pl_pp_schedule_init(&s, 1, 2, 1, err, sizeof err), 0);
    pl_pp_push(&s, 0, pl_pp_forward(0, 0));
    pl_pp_push(&s, 0, pl_pp_backward(0, 0));
    pl_pp_push(&s, 0, pl_pp_forward(1, 0));
    CU_ASSERT_EQUAL(pl_hybrid_dp_after(&s, 0), 1);
    pl_pp_schedule_free(&s);
}

/* Groups made by hand on 8 ranks: the mesh's are accepted, the DP and PP
 * ones swapped are refused with the first difference. */
typedef struct {
    int swap;
    int rc[NR];
    char msg[NR][512];
} groups_run;

static int groups_rank(pl_rank *r)
{
    groups_run *g = r->arg;
    pl_mesh m;
    pl_mesh_groups mine;
    if (pl_mesh_init(&m, NR, 2, 2, 2, r->error, sizeof r->error)) return 1;
    if (pl_mesh_split(&m, r->comm, &mine, r->error, sizeof r->error)) return 1;
    if (g->swap) {
        pl_comm *t = mine.dp;
        mine.dp = mine.pp;
        mine.pp = t;
    }
    g->rc[r->rank] = pl_hybrid_check_groups(&m, r->rank, &mine, g->msg[r->rank], 512);
    if (g->swap) { /* freed as made */
        pl_comm *t = mine.dp;
        mine.dp = mine.pp;
        mine.pp = t;
    }
    return pl_mesh_groups_free(&mine) != PL_COMM_OK;
}

static void test_hybrid_groups(void)
{
    static groups_run g;
    char err[1200];
    for (int swap = 0; swap < 2; swap++) {
        memset(&g, 0, sizeof g);
        g.swap = swap;
        int rc = pl_world_run(NR, NULL, 10, groups_rank, &g, err, sizeof err);
        if (rc) fprintf(stderr, "  %s\n", err);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        for (int r = 0; r < NR; r++) CU_ASSERT_EQUAL(g.rc[r], swap ? -1 : 0);
    }
    CU_ASSERT_STRING_EQUAL(g.msg[2], "rank 2's DP group is {2, 6}; the megatron mesh (dp 2, tp 2, "
                                     "pp 2) puts rank 2 in the DP group {0, 2}");
    pl_mesh m;
    pl_mesh_groups none = {0};
    CU_ASSERT_EQUAL_FATAL(pl_mesh_init(&m, NR, 2, 2, 2, err, sizeof err), 0);
    CU_ASSERT_EQUAL(pl_hybrid_check_groups(&m, 5, &none, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "rank 5 has no TP group; the megatron mesh (dp 2, tp 2, pp 2) "
                                "puts it in the TP group {4, 5}");
}

/* ---- real runs ------------------------------------------------------------------------------ */

typedef struct {
    pl_hybrid_config cfg;
    pl_pp_kind kind;
    int steps, skip_last; /* skip_last: the last stage's reduction never fires */
    float X[BATCH * 64];
    int y[BATCH];
    /* what the ranks saw */
    float *grads, *params; /* the whole model: the first step's gradients, the last weights */
    unsigned hash[MAXSTEPS][NR];
    pl_ledger before[NR][3], after[NR][3]; /* the first step, per group: tp, dp, pp */
    pl_hybrid_traffic want[NR];
    int fired[NR];
    double dp_start[NR];
    pl_mesh_coord coord[NR];
    float loss[NR];
} hyb_run;

static unsigned fnv(const float *x, long n)
{
    unsigned h = 2166136261u;
    const unsigned char *b = (const unsigned char *)x;
    for (long i = 0; i < n * 4; i++) h = (h ^ b[i]) * 16777619u;
    return h;
}

/* This rank's parameters' hash (every chunk, in order). */
static int params_hash(pl_hybrid *h, unsigned *out)
{
    unsigned acc = 0;
    if (cudaStreamSynchronize(h->pp.stream)) return -1; /* the optimizer's step first */
    for (int c = 0; c < h->pp.chunks; c++) {
        long n = h->pp.part[c].lay.nparams;
        float *host = malloc((size_t)n * 4);
        if (!host ||
            cudaMemcpy(host, h->pp.part[c].params.data, (size_t)n * 4, cudaMemcpyDeviceToHost)) {
            free(host);
            return -1;
        }
        acc = acc * 31 + fnv(host, n);
        free(host);
    }
    *out = acc;
    return 0;
}

/* Each rank of replica 0 writes its slices into whole, one after another. */
static int gather(pl_hybrid *h, pl_rank *r, float *whole, int grads)
{
    for (int turn = 0; turn < r->size; turn++) {
        if (turn == r->rank && h->coord.dp == 0 && pl_hybrid_unslice(h, whole, grads)) return -1;
        if (pl_comm_barrier(r->comm)) return -1;
    }
    return 0;
}

#define RUN_CK(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            snprintf(r->error, sizeof r->error, __VA_ARGS__);                                      \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

static int hybrid_rank(pl_rank *r)
{
    hyb_run *u = r->arg;
    pl_hybrid h;
    pl_pp_schedule s;
    int have_s = 0, rc = 1, me = r->rank;
    float *X = NULL;
    int *y = NULL;
    char err[1024];
    if (pl_hybrid_create(&h, &u->cfg, r->comm, NULL, 5, r->stream, r->error, sizeof r->error))
        return 1;
    u->coord[me] = h.coord;
    RUN_CK(
        !pl_pp_build(&s, u->kind, u->cfg.pp, u->cfg.micro_batches, u->cfg.chunks, err, sizeof err),
        "%s", err);
    have_s = 1;
    RUN_CK(!pl_hybrid_traffic_of(&u->cfg, h.coord, &u->want[me], err, sizeof err), "%s", err);
    /* this replica's rows of the global batch */
    int rows = h.rows, row0 = h.coord.dp * rows;
    RUN_CK(!cudaMalloc((void **)&X, (size_t)rows * 64 * 4) &&
               !cudaMalloc((void **)&y, (size_t)rows * sizeof(int)),
           "cudaMalloc");
    cudaMemcpy(X, u->X + (size_t)row0 * 64, (size_t)rows * 64 * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(y, u->y + row0, (size_t)rows * sizeof(int), cudaMemcpyHostToDevice);
    pl_comm *g[3] = {h.groups.tp, h.groups.dp, h.groups.pp};
    for (int step = 0; step < u->steps; step++) {
        int after = pl_hybrid_dp_after(&s, h.coord.pp);
        if (u->skip_last && h.coord.pp == u->cfg.pp - 1) after = -1;
        if (step == 0)
            for (int a = 0; a < 3; a++) u->before[me][a] = pl_comm_ledger_own(g[a]);
        RUN_CK(!pl_hybrid_step(&h, &s, after, X, y, &u->loss[me]), "step %d: %.900s", step,
               h.error);
        if (step == 0) {
            for (int a = 0; a < 3; a++) u->after[me][a] = pl_comm_ledger_own(g[a]);
            u->fired[me] = h.dp_fired;
            u->dp_start[me] = h.dp_start;
            RUN_CK(!gather(&h, r, u->grads, 1), "gathering the gradients");
        }
        RUN_CK(!pl_hybrid_sgd(&h, 0.05f), "%s", h.error);
        RUN_CK(!params_hash(&h, &u->hash[step][me]), "hash");
    }
    RUN_CK(!gather(&h, r, u->params, 0), "gathering the weights");
    rc = 0;
out:
    if (have_s) pl_pp_schedule_free(&s);
    cudaFree(X);
    cudaFree(y);
    pl_hybrid_destroy(&h);
    return rc;
}

static hyb_run *new_run(pl_hybrid_config c, pl_pp_kind kind, int steps)
{
    hyb_run *u = calloc(1, sizeof *u);
    u->cfg = c;
    u->kind = kind;
    u->steps = steps;
    unsigned long long x = 12345;
    for (int i = 0; i < BATCH * 64; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        u->X[i] = (float)((x >> 40) % 1000) / 500.0f - 1.0f;
    }
    for (int i = 0; i < BATCH; i++) u->y[i] = (i * 7 + 3) % 10;
    long n = pl_blocks_count(&c.model);
    u->grads = calloc((size_t)n, 4);
    u->params = calloc((size_t)n, 4);
    return u;
}

static void free_run(hyb_run *u)
{
    free(u->grads);
    free(u->params);
    free(u);
}

static int go(hyb_run *u)
{
    char err[1500];
    int n = u->cfg.dp * u->cfg.tp * u->cfg.pp;
    int rc = pl_world_run(n, NULL, 30, hybrid_rank, u, err, sizeof err);
    if (rc) fprintf(stderr, "  dp %d tp %d pp %d: %s\n", u->cfg.dp, u->cfg.tp, u->cfg.pp, err);
    return rc;
}

/* The first index off by more than 1e-6 + rtol * scale; -1 if none. */
static long first_bad(const float *got, const float *want, long n, double rtol, int relative)
{
    double mx = 0;
    for (long i = 0; i < n; i++) mx = fmax(mx, fabs(want[i]));
    for (long i = 0; i < n; i++)
        if (!(fabs((double)got[i] - want[i]) <= 1e-6 + rtol * (relative ? fabs(want[i]) : mx)))
            return i;
    return -1;
}

/* Factorisations of n ranks against one device: gradients, weights,
 * replicas, the ledger. only: the (dp, tp, pp) to run, {0} terminated
 * (NULL: every one the model accepts). */
static void check_world(int n, pl_mesh_order order, pl_pp_kind kind, int sp, const int (*only)[3])
{
    pl_hybrid_config base = config(1, 1, 1, 2);
    base.order = order;
    base.sequence_parallel = sp;
    hyb_run *ref = new_run(config(1, 1, 1, 1), PL_PP_1F1B, MAXSTEPS);
    CU_ASSERT_EQUAL_FATAL(go(ref), 0);
    long np = pl_blocks_count(&base.model);
    int f[64][3];
    int count = pl_hybrid_factorisations(&base, n, f, 64);
    CU_ASSERT(count >= (sp ? 3 : 5));
    if (only) {
        for (count = 0; only[count][0]; count++) memcpy(f[count], only[count], sizeof f[count]);
        for (int i = 0; i < count; i++) {
            pl_hybrid_config c = base;
            c.dp = f[i][0], c.tp = f[i][1], c.pp = f[i][2];
            CU_ASSERT_EQUAL(pl_hybrid_check(&c, n, NULL, 0), 0);
        }
    }
    for (int i = 0; i < count && i < 64; i++) {
        pl_hybrid_config c = base;
        c.dp = f[i][0], c.tp = f[i][1], c.pp = f[i][2];
        hyb_run *u = new_run(c, kind, MAXSTEPS);
        char what[96];
        snprintf(what, sizeof what, "%s dp %d tp %d pp %d%s %s", pl_mesh_order_name(order), c.dp,
                 c.tp, c.pp, sp ? " SP" : "", pl_pp_kind_name(kind));
        if (go(u)) {
            CU_FAIL("the run failed");
            free_run(u);
            continue;
        }
        long bad = first_bad(u->grads, ref->grads, np, 1e-5, 0);
        if (bad >= 0)
            fprintf(stderr, "  %s: gradient [%ld] %.9g, one device %.9g\n", what, bad,
                    u->grads[bad], ref->grads[bad]);
        CU_ASSERT_EQUAL(bad, -1);
        bad = first_bad(u->params, ref->params, np, 1e-5, 1);
        if (bad >= 0)
            fprintf(stderr, "  %s: weight [%ld] %.9g, one device %.9g\n", what, bad, u->params[bad],
                    ref->params[bad]);
        CU_ASSERT_EQUAL(bad, -1);
        for (int r = 0; r < n; r++) {
            CU_ASSERT_EQUAL(u->fired[r], 1);
            /* the replicas of (pp, tp): the same bits after every step */
            for (int q = 0; q < n; q++)
                if (u->coord[q].pp == u->coord[r].pp && u->coord[q].tp == u->coord[r].tp)
                    for (int st = 0; st < MAXSTEPS; st++)
                        CU_ASSERT_EQUAL(u->hash[st][q], u->hash[st][r]);
            /* the ledger of each group, for one step */
            const pl_hybrid_traffic *w = &u->want[r];
            pl_ledger d[3];
            for (int a = 0; a < 3; a++) {
                d[a] = u->after[r][a];
                d[a].bytes_sent -= u->before[r][a].bytes_sent;
                for (int k = 0; k < PL_NUM_CALLS; k++) d[a].calls[k] -= u->before[r][a].calls[k];
            }
            unsigned tp_calls =
                (unsigned)(d[0].calls[PL_CALL_ALL_REDUCE] + d[0].calls[PL_CALL_ALL_GATHER] +
                           d[0].calls[PL_CALL_REDUCE_SCATTER]);
            CU_ASSERT_EQUAL(c.tp > 1 ? tp_calls : 0, w->tp_calls);
            CU_ASSERT_EQUAL(c.dp > 1 ? d[1].calls[PL_CALL_ALL_REDUCE] : 0, w->dp_calls);
            CU_ASSERT_EQUAL(d[2].calls[PL_CALL_SEND], w->pp_sends);
            CU_ASSERT_EQUAL(d[2].bytes_sent, w->pp_bytes);
            if (d[2].bytes_sent != w->pp_bytes || (c.tp > 1 ? tp_calls : 0) != w->tp_calls)
                fprintf(stderr, "  %s rank %d: tp calls %u (formula %u), pp bytes %llu (%llu)\n",
                        what, r, tp_calls, w->tp_calls, (unsigned long long)d[2].bytes_sent,
                        w->pp_bytes);
            /* the group totals: the ranks of r's TP (DP) group together */
            unsigned long long tp_total = 0, dp_total = 0;
            for (int q = 0; q < n; q++) {
                int same_tp = u->coord[q].dp == u->coord[r].dp && u->coord[q].pp == u->coord[r].pp;
                int same_dp = u->coord[q].tp == u->coord[r].tp && u->coord[q].pp == u->coord[r].pp;
                if (same_tp) tp_total += u->after[q][0].bytes_sent - u->before[q][0].bytes_sent;
                if (same_dp) dp_total += u->after[q][1].bytes_sent - u->before[q][1].bytes_sent;
            }
            CU_ASSERT_EQUAL(tp_total, w->tp_bytes);
            CU_ASSERT_EQUAL(dp_total, w->dp_bytes);
            if (tp_total != w->tp_bytes || dp_total != w->dp_bytes)
                fprintf(stderr,
                        "  %s rank %d: TP group %llu bytes (formula %llu), DP %llu (%llu)\n", what,
                        r, tp_total, w->tp_bytes, dp_total, w->dp_bytes);
        }
        /* the last stage reduces first: it finishes its backward first */
        if (c.pp > 1 && c.dp > 1 && kind == PL_PP_1F1B)
            for (int r = 0; r < n; r++)
                if (u->coord[r].pp == c.pp - 1)
                    for (int q = 0; q < n; q++)
                        if (u->coord[q].pp == 0) CU_ASSERT(u->dp_start[r] < u->dp_start[q]);
        free_run(u);
    }
    free_run(ref);
}

/* Every factorisation of 8 in Megatron-LM's order; the rest, where the
 * order or the schedule changes something (DP and PP both > 1, TP inside
 * stages): the lab's checks run every factorisation of 4 and 8 in both
 * orders with the student's groups. */
static const int mixed8[][3] = {{2, 2, 2}, {2, 1, 4}, {4, 1, 2}, {0}};
static const int mixed4[][3] = {{2, 1, 2}, {1, 2, 2}, {0}};
static const int sp4[][3] = {{2, 2, 1}, {1, 2, 2}, {0}};
static void test_hybrid_8_megatron(void)
{
    check_world(8, PL_MESH_MEGATRON, PL_PP_1F1B, 0, unit_short() ? mixed8 : NULL);
}
static void test_hybrid_8_picotron(void)
{
    check_world(8, PL_MESH_PICOTRON, PL_PP_1F1B, 0, mixed8);
}
static void test_hybrid_4_gpipe(void) { check_world(4, PL_MESH_MEGATRON, PL_PP_GPIPE, 0, mixed4); }
static void test_hybrid_4_zb(void) { check_world(4, PL_MESH_PICOTRON, PL_PP_ZB_H1, 0, mixed4); }
static void test_hybrid_4_sp(void) { check_world(4, PL_MESH_MEGATRON, PL_PP_1F1B, 1, sp4); }

/* The last stage never reducing: its replicas drift apart, the others stay equal. */
static void test_hybrid_skip(void)
{
    hyb_run *u = new_run(config(2, 1, 2, 2), PL_PP_1F1B, 2);
    u->skip_last = 1;
    CU_ASSERT_EQUAL_FATAL(go(u), 0);
    for (int r = 0; r < 4; r++) {
        int last = u->coord[r].pp == 1;
        CU_ASSERT_EQUAL(u->fired[r], !last);
        for (int q = 0; q < 4; q++)
            if (q != r && u->coord[q].pp == u->coord[r].pp)
                CU_ASSERT_EQUAL(u->hash[0][q] == u->hash[0][r], !last);
    }
    free_run(u);
}

int register_hybrid_suite(void)
{
    static const unit_test t[] = {
        {"refusals name the numbers and list the valid factorisations", test_hybrid_check},
        {"the DP reduction fires after the last op writing weight gradients", test_hybrid_dp_after},
        {"a caller's groups: the mesh's accepted, DP and PP swapped refused", test_hybrid_groups},
        {"8 ranks, every factorisation, Megatron order: = one device, replicas, ledger",
         test_hybrid_8_megatron},
        {"8 ranks, picotron order: 2x2x2, 2x1x4, 4x1x2", test_hybrid_8_picotron},
        {"4 ranks, GPipe: 2x1x2, 1x2x2", test_hybrid_4_gpipe},
        {"4 ranks, ZB-H1 (picotron order): 2x1x2, 1x2x2", test_hybrid_4_zb},
        {"4 ranks, sequence parallelism: 2x2x1, 1x2x2", test_hybrid_4_sp},
        {"a last stage that never reduces: its replicas drift apart", test_hybrid_skip},
    };
    return UNIT_SUITE("hybrid", t);
}
