/*
 * train.c — Lab 10's training loop, run by every rank of the mesh
 * (lab10_rank), and the groups it trains on (lab10_groups).
 *
 * The world's dp tp pp ranks are laid out on the mesh; each makes its TP,
 * DP and PP groups (the student's make_groups, or the reference's), which
 * are checked against the mesh before anything trains, then its share of
 * the run (paralab/hybrid.h: its stage of the pipeline, its TP shard of
 * it, its replica). A step: replica d takes rows [d B/dp, (d+1) B/dp) of
 * the global batch, its pipeline runs the schedule (each F and backward
 * with its TP collectives), the DP reduction fires after the op dp_after
 * gives each stage, then the optimizer. The first step is narrated: the
 * mesh and its groups, one micro-batch through the TP-sharded stages, the
 * pipeline, the DP reduction, the step (the replicas' hashes, the bytes
 * per group against the formulas). With cfg->audit every step is checked
 * so: the DP replicas of each (pp, tp) position identical bit for bit, and
 * each group's bytes those of pl_hybrid_traffic_of.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "10_hybrid/lab10.h"
#include "harness/train.h" /* FAIL, CK, STEP, BEGIN; pl_bytes_text, pl_appendf */
#include "paralab/cuda_check.h"
#include "paralab/device.h"
#include "paralab/dist.h"
#include "paralab/plural.h"
#include "paralab/trace.h"

#define HY(call)                                                                                   \
    do {                                                                                           \
        if (call) FAIL("%s", h.error[0] ? h.error : #call " failed");                              \
    } while (0)
#define BARRIER()                                                                                  \
    do {                                                                                           \
        if (pl_comm_barrier(r->comm)) FAIL("a barrier of the world failed");                       \
    } while (0)

/* Times on the clock the build has: modeled on simulated GPUs. */
static int modeled(void) { return pl_device_caps()->modeled; }

void lab10_run_init(lab10_run *run, const lab10_config *cfg, const pl_digits *data,
                    lab10_result *result)
{
    memset(run, 0, sizeof *run);
    run->cfg = cfg;
    run->data = data;
    run->result = result;
    pl_lab_shared_init(&run->shared);
}

int lab10_groups(const lab10_impl *impl, pl_comm *world, const pl_mesh *m, pl_mesh_groups *g,
                 char *err, size_t cap)
{
    memset(g, 0, sizeof *g);
    int rc = impl->make_groups(world, m, g);
    if (rc == PL_TODO_STATUS) {
        pl_mesh_groups_free(g);
        memset(g, 0, sizeof *g);
        return rc;
    }
    if (rc) { /* what the comm layer said: on the world, or on a group made before */
        const char *e = pl_comm_last_error(world);
        pl_comm *made[3] = {g->tp, g->dp, g->pp};
        for (int a = 0; a < 3 && (!e || !e[0]); a++)
            if (made[a]) e = pl_comm_last_error(made[a]);
        if (e && e[0])
            snprintf(err, cap, "make_groups returned %d on rank %d (%s)", rc, pl_comm_rank(world),
                     e);
        else
            snprintf(err, cap,
                     "make_groups returned %d on rank %d (it returns 0, or the non-zero result of "
                     "a pl_comm_split that failed)",
                     rc, pl_comm_rank(world));
        return -1;
    }
    /* the lab tags them: the trace and the UI tell the groups' traffic apart */
    if (g->tp) pl_comm_set_group(g->tp, PL_GROUP_TP);
    if (g->dp) pl_comm_set_group(g->dp, PL_GROUP_DP);
    if (g->pp) pl_comm_set_group(g->pp, PL_GROUP_PP);
    if (pl_hybrid_check_groups(m, pl_comm_rank(world), g, err, cap)) return -1;
    return 0;
}

int lab10_coords_mismatch(const lab10_impl *impl, const pl_mesh *m, char *err, size_t cap)
{
    for (int q = 0; q < m->size; q++) {
        pl_mesh_coord got = {-1, -1, -1}, want;
        int rc = impl->coords(m, q, &got);
        if (rc == PL_TODO_STATUS) {
            snprintf(err, cap, "coords is TODO");
            return PL_TODO_STATUS;
        }
        pl_mesh_coords(m, q, &want);
        if (rc || got.dp != want.dp || got.pp != want.pp || got.tp != want.tp) {
            char g[64], w[64];
            pl_mesh_coord_str(got, g, sizeof g);
            pl_mesh_coord_str(want, w, sizeof w);
            if (rc)
                snprintf(err, cap,
                         "coords(rank %d) returned %d on the %s mesh (dp %d, tp %d, pp %d); the "
                         "mesh has it at (%s)",
                         q, rc, pl_mesh_order_name(m->order), m->dp, m->tp, m->pp, w);
            else
                snprintf(err, cap,
                         "coords puts rank %d at (%s); the %s mesh (dp %d, tp %d, pp %d) has it "
                         "at (%s): rank = %s",
                         q, g, pl_mesh_order_name(m->order), m->dp, m->tp, m->pp, w,
                         m->order == PL_MESH_MEGATRON ? "tp + t (dp + N pp)"
                                                      : "tp + t (pp + p dp)");
            return q;
        }
    }
    return -1;
}

/* What this rank sent on its groups since `before`. */
static lab10_bytes ledger_delta(const pl_mesh_groups *g, const pl_ledger before[3])
{
    pl_ledger now[3] = {pl_comm_ledger_own(g->tp), pl_comm_ledger_own(g->dp),
                        pl_comm_ledger_own(g->pp)};
    unsigned coll[3] = {0, 0, 0};
    for (int a = 0; a < 2; a++)
        for (int k = PL_CALL_ALL_REDUCE; k <= PL_CALL_ALL_TO_ALL; k++)
            coll[a] += (unsigned)(now[a].calls[k] - before[a].calls[k]);
    lab10_bytes b = {now[0].bytes_sent - before[0].bytes_sent,
                     now[1].bytes_sent - before[1].bytes_sent,
                     now[2].bytes_sent - before[2].bytes_sent,
                     coll[0],
                     coll[1],
                     (unsigned)(now[2].calls[PL_CALL_SEND] - before[2].calls[PL_CALL_SEND])};
    return b;
}

static void ledgers(const pl_mesh_groups *g, pl_ledger out[3])
{
    out[0] = pl_comm_ledger_own(g->tp);
    out[1] = pl_comm_ledger_own(g->dp);
    out[2] = pl_comm_ledger_own(g->pp);
}

/* The layout of chunk ch of the rank at `at` (as pl_pp_blocks_create_tp
 * makes it: chunk ch of stage at.pp is the model's part ch p + at.pp): 0,
 * or -1 with why. Rank 0 writes another rank's row into the whole model
 * with it (under mpirun the rank's own layout is in its process). */
static int part_layout(const pl_hybrid_config *hc, pl_mesh_coord at, int ch, pl_blocks_layout *lay,
                       char *err, size_t cap)
{
    int p = hc->pp, v = hc->chunks;
    int first[PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS], count[PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS];
    if (pl_pp_split(hc->model.layers, p, v, first, count, err, cap)) return -1;
    int q = ch * p + at.pp;
    pl_blocks_part part = {first[q], first[q] + count[q], q == 0, q == p * v - 1, hc->tp, at.tp};
    return pl_blocks_layout_make(lay, &hc->model, part, err, cap);
}

/* The floats the rank at `at` holds (its chunks'), or -1 with why. */
static long part_floats(const pl_hybrid_config *hc, pl_mesh_coord at, char *err, size_t cap)
{
    long n = 0;
    for (int ch = 0; ch < hc->chunks; ch++) {
        pl_blocks_layout lay;
        if (part_layout(hc, at, ch, &lay, err, cap)) return -1;
        n += lay.nparams;
    }
    return n;
}

/* The process's rows (lab10_run, pl_lab_shared_take): a row of the most
 * floats any rank holds, and of the most ops any stage's list has. */
typedef struct {
    lab10_run *run;
    const pl_mesh *mesh;
} rows_arg;

static void rows_free(void *arg)
{
    lab10_run *run = arg;
    free(run->rows);
    free(run->recs);
    run->rows = NULL;
    run->recs = NULL;
}

static int rows_make(void *arg, char *err, size_t cap)
{
    const rows_arg *a = arg;
    lab10_run *run = a->run;
    const pl_mesh *mesh = a->mesh;
    long most = 0;
    for (int q = 0; q < mesh->size; q++) {
        pl_mesh_coord at;
        pl_mesh_coords(mesh, q, &at);
        long k = part_floats(&run->cfg->hc, at, err, cap);
        if (k < 0) return -1;
        if (k > most) most = k;
    }
    int ops = 0;
    for (int st = 0; st < run->cfg->schedule->stages; st++)
        if (run->cfg->schedule->n[st] > ops) ops = run->cfg->schedule->n[st];
    run->rows_stride = most;
    run->recs_stride = ops > 0 ? ops : 1;
    run->rows = calloc((size_t)mesh->size * (size_t)most, sizeof(float));
    run->recs = calloc((size_t)mesh->size * (size_t)run->recs_stride, sizeof *run->recs);
    if (!run->rows || !run->recs) {
        rows_free(run);
        snprintf(err, cap, "out of host memory");
        return -1;
    }
    return 0;
}

/* Rank 0: the DP-0 ranks' rows written into run->whole with their layouts.
 * 0, or -1 with why. */
static int unslice_rows(lab10_run *run, const pl_mesh *mesh, char *err, size_t cap)
{
    const pl_hybrid_config *hc = &run->cfg->hc;
    for (int q = 0; q < mesh->size; q++) {
        pl_mesh_coord at;
        pl_mesh_coords(mesh, q, &at);
        if (at.dp != 0) continue;
        const float *row = run->rows + (size_t)q * (size_t)run->rows_stride;
        for (int ch = 0; ch < hc->chunks; ch++) {
            pl_blocks_layout lay;
            if (part_layout(hc, at, ch, &lay, err, cap)) return -1;
            pl_blocks_unslice(&lay, row, run->whole);
            row += lay.nparams;
        }
    }
    return 0;
}

/* "{0, 2}" */
static void members_text(const int *ranks, int n, char *buf, size_t cap)
{
    buf[0] = 0;
    pl_appendf(buf, cap, "{");
    for (int i = 0; i < n; i++) pl_appendf(buf, cap, "%s%d", i ? ", " : "", ranks[i]);
    pl_appendf(buf, cap, "}");
}

/* The ranks of each DP group: whether their parameters (run->part, on
 * rank 0 after a barrier) are the same bits; 0, or -1 with why. */
static int replicas_same(const lab10_run *run, const pl_mesh *mesh, float *const *part,
                         const long *nfl, char *why, size_t cap)
{
    for (int q = 0; q < mesh->size; q++) {
        pl_mesh_coord c;
        pl_mesh_coords(mesh, q, &c);
        if (c.dp == 0) continue;
        pl_mesh_coord c0 = c;
        c0.dp = 0;
        int q0 = pl_mesh_rank(mesh, c0);
        long n = nfl[q];
        if (n != nfl[q0] || memcmp(part[q], part[q0], (size_t)n * sizeof(float))) {
            long i = 0;
            while (i < n && i < nfl[q0] && !memcmp(&part[q][i], &part[q0][i], sizeof(float))) i++;
            snprintf(why, cap,
                     "the DP replicas of (pp %d, tp %d) differ: rank %d (dp %d) holds %.9g at "
                     "its parameter %ld, rank %d (dp 0) %.9g; their parameters hash to %08x and "
                     "%08x",
                     c.pp, c.tp, q, c.dp, i < n ? part[q][i] : 0.0, i, q0,
                     i < nfl[q0] ? part[q0][i] : 0.0, run->hash[q], run->hash[q0]);
            return -1;
        }
    }
    return 0;
}

/* Each group's bytes and calls against the formulas (rank 0, after a
 * barrier): 0, or -1 with why. */
static int traffic_matches(const lab10_run *run, const pl_mesh *mesh, const pl_hybrid_config *hc,
                           const lab10_bytes *bytes, char *why, size_t cap)
{
    for (int q = 0; q < mesh->size; q++) {
        pl_mesh_coord c;
        pl_mesh_coords(mesh, q, &c);
        pl_hybrid_traffic t;
        char err[400];
        if (pl_hybrid_traffic_of(hc, c, &t, err, sizeof err)) {
            snprintf(why, cap, "pl_hybrid_traffic_of: %s", err);
            return -1;
        }
        unsigned long long tp = 0, dp = 0;
        int ranks[PL_MAX_RANKS];
        int n = pl_mesh_group(mesh, PL_MESH_TP, q, ranks);
        for (int i = 0; i < n; i++) tp += bytes[ranks[i]].tp;
        n = pl_mesh_group(mesh, PL_MESH_DP, q, ranks);
        for (int i = 0; i < n; i++) dp += bytes[ranks[i]].dp;
        const lab10_bytes *b = &bytes[q];
        const char *what = NULL;
        unsigned long long got = 0, want = 0;
        if (tp != t.tp_bytes)
            what = "its TP group sent (its members together)", got = tp, want = t.tp_bytes;
        else if (dp != t.dp_bytes)
            what = "its DP group sent (its members together)", got = dp, want = t.dp_bytes;
        else if (b->pp != t.pp_bytes)
            what = "it sent on its PP group", got = b->pp, want = t.pp_bytes;
        else if (b->tp_calls != t.tp_calls)
            what = "collectives it called on its TP group", got = b->tp_calls, want = t.tp_calls;
        else if (b->dp_calls != t.dp_calls)
            what = "collectives it called on its DP group", got = b->dp_calls, want = t.dp_calls;
        else if (b->pp_sends != t.pp_sends)
            what = "sends it made on its PP group", got = b->pp_sends, want = t.pp_sends;
        if (what) {
            char at[64];
            pl_mesh_coord_str(c, at, sizeof at);
            snprintf(why, cap,
                     "rank %d (%s): %s in one step: %llu by its ledger (pl_comm_ledger_own), %llu "
                     "by the formulas (pl_hybrid_traffic_of)",
                     q, at, what, got, want);
            (void)run;
            return -1;
        }
    }
    return 0;
}

/* "block 2", "blocks 2 and 3", "blocks 2 to 5", "no block" */
static void blocks_text(int first, int count, char *buf, size_t cap)
{
    if (count == 0)
        snprintf(buf, cap, "no block");
    else if (count == 1)
        snprintf(buf, cap, "block %d", first);
    else if (count == 2)
        snprintf(buf, cap, "blocks %d and %d", first, first + 1);
    else
        snprintf(buf, cap, "blocks %d to %d", first, first + count - 1);
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

/* Whether a list of p stages shows stage st (all up to 4; else the first
 * two and the last two), and "..." before it. */
static int shown(int st, int p, const char **sep)
{
    *sep = st ? "; " : "";
    if (p <= 4 || st < 2 || st >= p - 2) {
        if (p > 4 && st == p - 2) *sep = "; ...; ";
        return 1;
    }
    return 0;
}

/* Step [1]: the mesh, every rank's coordinates and groups (as many as fit
 * a narration: pl_step keeps 1023 characters). */
static void mesh_text(const lab10_run *run, const pl_mesh *mesh, unsigned init_hash,
                      unsigned long long seed, char *buf, size_t cap)
{
    const lab10_config *cfg = run->cfg;
    int n = mesh->size;
    buf[0] = 0;
    pl_appendf(buf, cap,
               "The mesh: dp %d x tp %d x pp %d = %d rank%s in %s's order (rank = %s), the "
               "coordinates from %s, the groups from %s, checked against the mesh. Rank: (dp, pp, "
               "tp) TP | DP | PP group: ",
               mesh->dp, mesh->tp, mesh->pp, n, pl_s(n), pl_mesh_order_name(mesh->order),
               mesh->order == PL_MESH_MEGATRON ? "tp + t (dp + N pp): TP fastest, PP outermost"
                                               : "tp + t (pp + p dp): TP fastest, DP outermost",
               cfg->coords_from, cfg->groups_from);
    int size[3] = {mesh->tp, mesh->dp, mesh->pp}, q = 0;
    for (; q < n && strlen(buf) < 780; q++) {
        const pl_mesh_coord *c = &run->coord[q];
        char g[3][400];
        for (int a = 0; a < 3; a++) members_text(run->members[q][a], size[a], g[a], sizeof g[a]);
        pl_appendf(buf, cap, "%s%d: (%d, %d, %d) %s | %s | %s", q ? "; " : "", q, c->dp, c->pp,
                   c->tp, g[0], g[1], g[2]);
    }
    if (q < n) pl_appendf(buf, cap, "; ... (%d ranks)", n);
    pl_appendf(
        buf, cap,
        ". TP groups are adjacent ranks (a node's NVLink for TP's heavy traffic). The weights, "
        "drawn whole from seed %llu and sliced, hash to %08x gathered.",
        seed, init_hash);
}

/* Step [2]: which ranks hold which blocks, and one F's TP collectives. */
static void stages_text(const lab10_run *run, const pl_mesh *mesh, char *buf, size_t cap)
{
    const lab10_config *cfg = run->cfg;
    const pl_hybrid_config *hc = &cfg->hc;
    int p = mesh->pp, v = hc->chunks, t = mesh->tp, L = hc->model.layers, pv = p * v;
    int first[PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS], count[PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS];
    const char *sep;
    buf[0] = 0;
    if (pl_pp_split(L, p, v, first, count, NULL, 0)) return;
    int rows = hc->batch / mesh->dp, mb = rows / hc->micro_batches;
    pl_appendf(
        buf, cap,
        "Replica d takes rows [d B/dp, (d+1) B/dp) of the batch of %d: %d row%s, %d micro-batch%s "
        "of %d. ",
        hc->batch, rows, pl_s(rows), hc->micro_batches, hc->micro_batches == 1 ? "" : "es", mb);
    for (int st = 0; st < p; st++) {
        if (!shown(st, p, &sep)) continue;
        int ranks[PL_MAX_RANKS], k = 0;
        for (int q = 0; q < mesh->size; q++)
            if (run->coord[q].pp == st) ranks[k++] = q;
        char who[256], which[200] = "";
        if (k > 8) k = 8;
        members_text(ranks, k, who, sizeof who);
        if (k == 8 && mesh->dp * mesh->tp > 8) memcpy(who + strlen(who) - 1, ", ...}", 7);
        for (int ch = 0; ch < v; ch++) {
            int q = ch * p + st;
            char b[48];
            blocks_text(first[q], count[q], b, sizeof b);
            pl_appendf(which, sizeof which, "%s%s%s%s", ch ? " + " : "", q == 0 ? "input, " : "", b,
                       q == pv - 1 ? ", head" : "");
        }
        pl_appendf(buf, cap, "%sstage %d: %s on ranks %s", sep, st, which, who);
    }
    int f = hc->model.ffn;
    if (t == 1) {
        pl_appendf(buf, cap, ". t = 1: each stage's layers are whole, no TP collective.");
        return;
    }
    pl_appendf(
        buf, cap,
        ". TP rank i of t = %d holds columns [i f/t, (i+1) f/t) of each W1 (%d of f = %d) and "
        "those rows of W2, and its share of the head's classes. One micro-batch's F on the TP "
        "group (its own ledger over a forward pass, / m): ",
        t, f / t, f);
    /* one forward of a micro-batch, measured: pl_comm_ledger_own of the TP
     * group over a forward pass of the replica's rows (m micro-batches) */
    for (int st = 0; st < p; st++) {
        if (!shown(st, p, &sep)) continue;
        pl_mesh_coord c = {0, 0, st};
        int q = pl_mesh_rank(mesh, c), blocks = 0;
        for (int ch = 0; ch < v; ch++) blocks += count[ch * p + st];
        const lab10_bytes *e = &run->eval_bytes[q];
        unsigned calls = e->tp_calls / (unsigned)hc->micro_batches;
        char sz[32];
        pl_bytes_text(e->tp / (unsigned long long)hc->micro_batches, sz, sizeof sz);
        pl_appendf(buf, cap, "%sstage %d (%d block%s%s): %u collective%s, rank %d sending %s", sep,
                   st, blocks, pl_s(blocks), st == p - 1 ? ", head, loss" : "", calls,
                   pl_s((int)calls), q, sz);
    }
    pl_appendf(buf, cap,
               ": one per block (g: the all-reduce of W2's partial sums%s), and the loss's 4 small "
               "all-reduces over the classes' shards (a value per row: the largest logit, the "
               "target's, the sum of exponentials, the prediction).",
               hc->sequence_parallel
                   ? ", under SP a reduce-scatter, and an all-gather entering each "
                     "block"
                   : "");
}

int lab10_rank(pl_rank *r)
{
    lab10_run *run = r->arg;
    const lab10_config *cfg = run->cfg;
    const pl_hybrid_config *hc = &cfg->hc;
    lab10_result *res = run->result;
    const pl_dataset *train = &run->data->train, *test = &run->data->test;
    int n = r->size, me = r->rank, status = 1, B = hc->batch, m = hc->micro_batches, v = hc->chunks,
        audit = cfg->audit;
    cudaStream_t cs = r->stream;
    pl_hybrid h;
    memset(&h, 0, sizeof h);
    pl_mesh mesh;
    pl_mesh_groups g = {0};
    int created = 0, have_groups = 0, took_rows = 0;
    float *hx = NULL, *dx = NULL, *mine = NULL;
    int *hy = NULL, *dy = NULL, *order = NULL;
    char why[1000];
    if (pl_mesh_init_order(&mesh, n, hc->dp, hc->tp, hc->pp, hc->order, why, sizeof why))
        FAIL("%s", why);
    int rc = lab10_groups(cfg->groups, r->comm, &mesh, &g, why, sizeof why);
    if (rc == PL_TODO_STATUS) FAIL("make_groups is TODO");
    have_groups = 1;
    /* a wrong group on any rank stops every rank (they free their groups together) */
    run->bad[me] = rc != 0;
    BARRIER();
    if (pl_dist_allgather_host(r->comm, run->bad, sizeof run->bad[0], sizeof run->bad[0]))
        FAIL("%s", pl_comm_last_error(r->comm));
    for (int q = 0; q < n; q++)
        if (run->bad[q]) {
            pl_mesh_groups_free(&g);
            have_groups = 0;
            if (q == me) FAIL("%s", why);
            status = 0;
            goto out;
        }
    pl_mesh_coord me_c;
    if (cfg->groups->coords(&mesh, me, &me_c)) pl_mesh_coords(&mesh, me, &me_c);
    run->coord[me] = me_c;
    {
        pl_comm *gc[3] = {g.tp, g.dp, g.pp};
        for (int a = 0; a < 3; a++)
            for (int i = 0; i < pl_comm_size(gc[a]) && i < PL_MAX_RANKS; i++)
                run->members[me][a][i] = pl_comm_world_rank(gc[a], i);
    }
    if (pl_hybrid_create(&h, hc, r->comm, &g, cfg->seed, cs, why, sizeof why)) FAIL("%s", why);
    created = 1;
    h.pp.exec.trace = r->trace;
    h.pp.exec.world_rank = me;
    pl_mesh_coord c = h.coord;
    int first_stage = c.pp == 0, last_stage = c.pp == hc->pp - 1, rows = h.rows;
    int dp_after = cfg->dp_after(cfg->schedule, c.pp);
    long nparams = pl_blocks_count(&hc->model), mine_n = 0;
    for (int ch = 0; ch < v; ch++) {
        /* the layout rank 0 will write this rank's row with: the one it has */
        const pl_blocks_layout *have = &h.pp.part[ch].lay;
        pl_blocks_layout lay;
        if (part_layout(hc, c, ch, &lay, why, sizeof why)) FAIL("%s", why);
        if (lay.nparams != have->nparams || lay.part.first != have->part.first ||
            lay.part.last != have->part.last || lay.part.input != have->part.input ||
            lay.part.head != have->part.head || lay.part.tp_rank != have->part.tp_rank)
            FAIL("chunk %d: its layout (%ld floats, blocks %d..%d) is not the one the lab "
                 "gathers it with (%ld floats, blocks %d..%d)",
                 ch, have->nparams, have->part.first, have->part.last, lay.nparams, lay.part.first,
                 lay.part.last);
        mine_n += have->nparams;
    }
    rows_arg ra = {run, &mesh};
    if (pl_lab_shared_take(&run->shared, rows_make, &ra, why, sizeof why)) FAIL("%s", why);
    took_rows = 1;
    if (mine_n > run->rows_stride)
        FAIL("%ld parameters, more than a row holds (%ld)", mine_n, run->rows_stride);
    size_t row_bytes = (size_t)run->rows_stride * sizeof(float),
           rec_bytes = (size_t)run->recs_stride * sizeof *run->recs;
    mine = run->rows + (size_t)me * (size_t)run->rows_stride; /* this rank's row */
    hx = malloc((size_t)rows * PL_DIGITS_FEATURES * sizeof *hx);
    hy = malloc((size_t)rows * sizeof *hy);
    order = malloc((size_t)train->n * sizeof *order);
    if (!hx || !hy || !order) FAIL("out of host memory");
    if (me == 0 && !(run->whole = calloc((size_t)nparams, sizeof(float))))
        FAIL("out of host memory");
    CK(cudaMalloc((void **)&dx, (size_t)rows * PL_DIGITS_FEATURES * sizeof(float)));
    CK(cudaMalloc((void **)&dy, (size_t)rows * sizeof(int)));

/* The whole model on rank 0: the DP-0 ranks copy their parts into their
 * rows; under mpirun those of the other processes' ranks come to rank 0
 * (pl_dist_gather_host); rank 0 writes each into its places (the
 * replicated tensors, the same in every TP rank, once per rank). */
#define GATHER(gradients)                                                                          \
    do {                                                                                           \
        BARRIER();                                                                                 \
        if (c.dp == 0) {                                                                           \
            long at_ = 0;                                                                          \
            for (int ch_ = 0; ch_ < v; ch_++) {                                                    \
                const pl_blocks *b_ = &h.pp.part[ch_];                                             \
                CK(cudaMemcpyAsync(mine + at_, (gradients) ? b_->grads.data : b_->params.data,     \
                                   (size_t)b_->lay.nparams * sizeof(float),                        \
                                   cudaMemcpyDeviceToHost, h.pp.stream));                          \
                CK(cudaStreamSynchronize(h.pp.stream));                                            \
                at_ += b_->lay.nparams;                                                            \
            }                                                                                      \
        }                                                                                          \
        BARRIER();                                                                                 \
        pl_dist_gather_host(r->comm, run->rows, row_bytes, row_bytes);                             \
        if (me == 0 && unslice_rows(run, &mesh, why, sizeof why)) FAIL("%s", why);                 \
    } while (0)
/* This rank's own parameters to the host, hashed. */
#define OWN()                                                                                      \
    do {                                                                                           \
        long at_ = 0;                                                                              \
        for (int ch_ = 0; ch_ < v; ch_++) {                                                        \
            const pl_blocks *b_ = &h.pp.part[ch_];                                                 \
            CK(cudaMemcpy(mine + at_, b_->params.data, (size_t)b_->lay.nparams * sizeof(float),    \
                          cudaMemcpyDeviceToHost));                                                \
            at_ += b_->lay.nparams;                                                                \
        }                                                                                          \
        run->hash[me] = pl_blocks_hash(mine, mine_n);                                              \
        run->part[me] = mine;                                                                      \
        run->part_n[me] = mine_n;                                                                  \
    } while (0)

    GATHER(0);
    if (me == 0) res->init_hash = pl_blocks_hash(run->whole, nparams);
    if (cfg->narrate) { /* step [1]'s mesh: rank 0 lists every rank's coordinates and groups */
        TO_RANK0(run->coord);
        TO_RANK0(run->members);
    }

    /* one forward pass of the first batch's rows (step [2]'s TP collectives) */
    pl_shuffle(order, train->n, cfg->seed, 1);
    if (cfg->narrate) {
        for (int i = 0; i < rows; i++) {
            int row = order[c.dp * rows + i];
            memcpy(hx + (size_t)i * PL_DIGITS_FEATURES, train->x + (size_t)row * PL_DIGITS_FEATURES,
                   PL_DIGITS_FEATURES * sizeof *hx);
            hy[i] = train->y[row];
        }
        if (first_stage)
            CK(cudaMemcpy(dx, hx, (size_t)rows * PL_DIGITS_FEATURES * sizeof(float),
                          cudaMemcpyHostToDevice));
        if (last_stage) CK(cudaMemcpy(dy, hy, (size_t)rows * sizeof(int), cudaMemcpyHostToDevice));
        pl_ledger before[3];
        ledgers(&g, before);
        HY(pl_hybrid_evaluate(&h, first_stage ? dx : NULL, last_stage ? dy : NULL, NULL));
        run->eval_bytes[me] = ledger_delta(&g, before);
        if (last_stage) CK(pl_blocks_reset_correct(&h.pp.part[v - 1], cs));
        BARRIER();
        TO_RANK0(run->eval_bytes);
    }
    {
        char text[8192] = "";
        if (me == 0) mesh_text(run, &mesh, res->init_hash, cfg->seed, text, sizeof text);
        STEP("%s", text);
        if (me == 0) stages_text(run, &mesh, text, sizeof text);
        STEP("%s", text);
    }

    int steps_per_epoch = train->n / B, steps = 0;
    double modeled_total = 0, measured_total = 0;
    for (int epoch = 1; epoch <= cfg->epochs; epoch++) {
        if (epoch > 1) BEGIN();
        pl_shuffle(order, train->n, cfg->seed, epoch);
        if (last_stage) CK(pl_blocks_reset_correct(&h.pp.part[v - 1], cs));
        double loss_sum = 0;
        int seen = 0;
        for (int k = 0; k < steps_per_epoch; k++) {
            int narrate = cfg->narrate && epoch == 1 && k == 0;
            const int *rws = order + (long)k * B + (long)c.dp * rows; /* this replica's rows */
            for (int i = 0; i < rows; i++) {
                memcpy(hx + (size_t)i * PL_DIGITS_FEATURES,
                       train->x + (size_t)rws[i] * PL_DIGITS_FEATURES,
                       PL_DIGITS_FEATURES * sizeof *hx);
                hy[i] = train->y[rws[i]];
            }
            if (narrate) BEGIN();
            double t0 = pl_trace_now(), m0 = pl_device_stream_now(cs);
            if (first_stage)
                CK(cudaMemcpyAsync(dx, hx, (size_t)rows * PL_DIGITS_FEATURES * sizeof(float),
                                   cudaMemcpyHostToDevice, cs));
            if (last_stage)
                CK(cudaMemcpyAsync(dy, hy, (size_t)rows * sizeof(int), cudaMemcpyHostToDevice, cs));
            pl_ledger before[3];
            ledgers(&g, before);
            float step_loss = 0;
            HY(pl_hybrid_step(&h, cfg->schedule, dp_after, first_stage ? dx : NULL,
                              last_stage ? dy : NULL, &step_loss));
            run->bytes[me] = ledger_delta(&g, before);
            run->loss[me] = last_stage && c.tp == 0 ? step_loss : 0;
            pl_pp_timing tm = {0};
            if (steps == 0) {
                if (pl_pp_measure(&h.pp.exec, !modeled(), &tm)) FAIL("%s", h.pp.exec.error);
                res->dp_after[me] = h.dp_after;
                res->dp_fired[me] = h.dp_fired;
                res->dp_buckets[me] = h.dp_buckets;
                res->dp_start[me] = h.dp_start - tm.start;
                res->dp_end[me] = h.dp_end - tm.start;
                if (!modeled() && h.dp_fired && h.dp_after >= 0 &&
                    h.dp_after < h.pp.exec.result.ops) { /* real GPUs: no modeled clock; the
                                                            host's, from the op it follows */
                    res->dp_start[me] = res->dp_end[me] =
                        h.pp.exec.result.record[h.dp_after].measured_end - tm.start;
                }
                res->first_bytes[me] = run->bytes[me];
                if (h.pp.exec.result.ops > run->recs_stride)
                    FAIL("%d ops ran, more than a stage's list has (%d)", h.pp.exec.result.ops,
                         run->recs_stride);
                pl_pp_record *rec_row = run->recs + (size_t)me * (size_t)run->recs_stride;
                memcpy(rec_row, h.pp.exec.result.record,
                       (size_t)h.pp.exec.result.ops * sizeof *rec_row);
                run->rec[me] = rec_row;
                run->nrec[me] = h.pp.exec.result.ops;
                if (cfg->keep_grads) {
                    GATHER(1);
                    if (me == 0) {
                        res->grads = malloc((size_t)nparams * sizeof(float));
                        if (!res->grads) FAIL("out of host memory");
                        memcpy(res->grads, run->whole, (size_t)nparams * sizeof(float));
                    }
                }
            }
            BARRIER();
            TO_RANK0(run->loss);
            if (steps == 0 || audit) TO_RANK0(run->bytes);
            if (steps == 0) { /* what step [3] and [4] say of every rank */
                TO_RANK0(res->dp_after);
                TO_RANK0(res->dp_fired);
                TO_RANK0(res->dp_buckets);
                TO_RANK0(res->dp_start);
                TO_RANK0(res->dp_end);
                TO_RANK0(res->first_bytes);
                TO_RANK0(run->nrec);
                pl_dist_gather_host(r->comm, run->recs, rec_bytes, rec_bytes);
                if (me == 0)
                    for (int q = 0; q < n; q++)
                        run->rec[q] = run->recs + (size_t)q * (size_t)run->recs_stride;
            }
            double total = 0;
            for (int q = 0; q < n; q++) total += run->loss[q];
            step_loss = (float)total; /* every replica's (under mpirun: on rank 0) */
            if (steps == 0 && me == 0) res->first_loss = step_loss / B;
            if (steps == 0 || audit) {
                char t_why[512] = "";
                if (me == 0 && !res->traffic_bad_at &&
                    traffic_matches(run, &mesh, hc, run->bytes, t_why, sizeof t_why)) {
                    res->traffic_bad_at = steps + 1;
                    snprintf(res->traffic_why, sizeof res->traffic_why, "%s", t_why);
                }
            }
            if (narrate) {
                /* [3] the pipeline of replica 0, tp 0 */
                int p = hc->pp, q0[PL_PP_MAX_STAGES];
                for (int st = 0; st < p; st++) {
                    pl_mesh_coord at = {0, 0, st};
                    q0[st] = pl_mesh_rank(&mesh, at);
                }
                double fi = 0, ft = 0;
                int has = !pl_pp_bubble_formula(cfg->kind, p, m, v, &fi, &ft);
                char lists[4096] = "", formula[256];
                const char *sep;
                for (int st = 0; st < p; st++) {
                    if (!shown(st, p, &sep)) continue;
                    char l[1024];
                    ops_text(run->rec[q0[st]], run->nrec[q0[st]], v, 12, l, sizeof l);
                    pl_appendf(lists, sizeof lists, "%sstage %d (rank %d): %s", sep, st, q0[st], l);
                }
                if (has)
                    snprintf(formula, sizeof formula,
                             "%.1f %% of the ideal time and %.1f %% of the total by the formula "
                             "(uniform stages, free messages)",
                             fi * 100, ft * 100);
                else
                    snprintf(formula, sizeof formula, "no formula for this schedule here");
                if (me == 0 && p == 1)
                    STEP("The pipeline: p = 1, one stage, no bubble: each replica's ranks run "
                         "their %d micro-batch%s one after another (%s).",
                         m, m == 1 ? "" : "es", lists);
                else
                    STEP("The pipeline of each (dp, tp): %s, p = %d stages, m = %d micro-batch%s "
                         "of %d row%s%s. Each stage's list (the pipeline at dp 0, tp 0): %s. Its "
                         "bubble on the %s clock: %.1f %% of the ideal time and %.1f %% of the "
                         "total (the step's %.1f us); %s.%s",
                         pl_pp_kind_name(cfg->kind), p, m, m == 1 ? "" : "es", rows / m,
                         pl_s(rows / m), v > 1 ? ", interleaved over chunks" : "", lists,
                         pl_clock_name(), me == 0 ? tm.of_ideal * 100 : 0,
                         me == 0 ? tm.of_total * 100 : 0, me == 0 ? tm.makespan * 1e6 : 0, formula,
                         has ? " They differ: stage 0 also runs the input layer, the last the "
                               "head and the loss, each F and backward waits for its TP "
                               "collectives, and each activation sent to the next stage (on the "
                               "PP group) costs a transfer the formula counts as free."
                             : "");
                /* [4] the DP reduction */
                char fired[4096] = "", dpb[32], dpf[32];
                int first_st = -1, never = -1;
                double first_end = 0;
                for (int st = 0; st < p; st++) {
                    int q = q0[st], show = shown(st, p, &sep);
                    if (res->dp_fired[q] && res->dp_after[q] >= 0 &&
                        res->dp_after[q] < run->nrec[q]) {
                        char op[24];
                        pl_pp_op_name(run->rec[q][res->dp_after[q]].op, v, op, sizeof op);
                        if (show)
                            pl_appendf(
                                fired, sizeof fired,
                                "%sstage %d after op %d of %d (%s), %.1f-%.1f us, %d bucket%s", sep,
                                st, res->dp_after[q], run->nrec[q], op, res->dp_start[q] * 1e6,
                                res->dp_end[q] * 1e6, res->dp_buckets[q], pl_s(res->dp_buckets[q]));
                        if (first_st < 0 || res->dp_end[q] < first_end)
                            first_st = st, first_end = res->dp_end[q];
                    } else {
                        int da = res->dp_after[q];
                        char range[96] = "";
                        if (da != -1)
                            snprintf(range, sizeof range, ": out of range 0..%d; -1 means never",
                                     run->nrec[q] - 1);
                        if (show || never < 0)
                            pl_appendf(fired, sizeof fired, "%sstage %d NEVER (dp_after = %d%s)",
                                       show ? sep : "; ", st, da, range);
                        if (never < 0) never = st;
                    }
                }
                unsigned long long dsum = 0, dwant = 0;
                {
                    int ranks[PL_MAX_RANKS], k2 = pl_mesh_group(&mesh, PL_MESH_DP, 0, ranks);
                    for (int i = 0; i < k2; i++) dsum += run->bytes[ranks[i]].dp;
                    pl_hybrid_traffic t;
                    pl_mesh_coord c0 = {0, 0, 0};
                    if (!pl_hybrid_traffic_of(hc, c0, &t, NULL, 0)) dwant = t.dp_bytes;
                }
                pl_bytes_text(dsum, dpb, sizeof dpb);
                pl_bytes_text(dwant, dpf, sizeof dpf);
                char dpg[256];
                {
                    int ranks[PL_MAX_RANKS], k2 = pl_mesh_group(&mesh, PL_MESH_DP, 0, ranks);
                    members_text(ranks, k2, dpg, sizeof dpg);
                }
                /* "its last W" where the list splits the backward (zero-bubble) */
                int split = 0;
                for (int i = 0; i < run->nrec[q0[0]]; i++)
                    split |= run->rec[q0[0]][i].op.kind == PL_PP_W;
                const char *last = split ? "W" : "backward";
                /* which stage reduced first, from the measured times */
                char first_why[512] = "";
                int warm = cfg->kind == PL_PP_1F1B || cfg->kind == PL_PP_INTERLEAVED;
                if (never >= 0)
                    snprintf(first_why, sizeof first_why,
                             " A stage that never reduces keeps its own replica's gradients: "
                             "its DP replicas step apart (see step 5).");
                else if (p > 1 && first_st == p - 1 && warm)
                    snprintf(first_why, sizeof first_why,
                             " The last stage reduces first: it has no warm-up and its "
                             "backwards end first, and it must still reduce (Megatron-LM syncs "
                             "the gradients in the last micro-batch's backward, which every "
                             "stage runs).");
                else if (p > 1 && first_st >= 0)
                    snprintf(first_why, sizeof first_why,
                             " Stage %d reduces first: its last %s ends first; every stage "
                             "reduces once, when its own list has written its gradients.",
                             first_st, last);
                if (hc->dp == 1)
                    STEP("The DP reduction: dp = 1, one replica: nothing to add up; the gradients "
                         "are complete after each stage's last %s (%s; from %s).",
                         last, fired, cfg->dp_after_from);
                else
                    STEP("The DP reduction (from %s): %s all-reduces its gradients over "
                         "its DP group once its last %s has written them (%s clock): %s.%s "
                         "Rank 0's DP group %s sent %s in the step, its members together (the "
                         "formula, 2 (dp - 1) times the part's gradient bytes: %s). Each "
                         "replica's loss was scaled by 1/B = 1/%d, so the sum over the replicas "
                         "is the global batch's mean gradient.",
                         cfg->dp_after_from, p == 1 ? "the stage" : "each stage", last,
                         pl_clock_name(), fired, first_why, dpg, dpb, dpf, B);
            }
            float norm = 0;
            if (cfg->clip > 0 || narrate) HY(pl_hybrid_clip_grad_norm(&h, cfg->clip, &norm));
            if (steps == 0 && me == 0) res->first_norm = norm;
            HY(cfg->sgd ? pl_hybrid_sgd(&h, cfg->lr) : pl_hybrid_adamw(&h, cfg->lr));
            CK(cudaStreamSynchronize(cs));
            if (steps == 0 || audit) {
                OWN();
                if (steps == 0) res->part_hash[me] = run->hash[me];
                BARRIER();
                TO_RANK0(run->hash);
                TO_RANK0(run->part_n);
                if (steps == 0) TO_RANK0(res->part_hash);
                pl_dist_gather_host(r->comm, run->rows, row_bytes, row_bytes);
                if (me == 0)
                    for (int q = 0; q < n; q++)
                        run->part[q] = run->rows + (size_t)q * (size_t)run->rows_stride;
                char r_why[512] = "";
                if (me == 0 && !res->replicas_differ_at &&
                    replicas_same(run, &mesh, run->part, run->part_n, r_why, sizeof r_why)) {
                    res->replicas_differ_at = steps + 1;
                    snprintf(res->replicas_why, sizeof res->replicas_why, "%s", r_why);
                }
                BARRIER();
            }
            if (narrate) {
                /* [5] the step */
                char hashes[4096] = "", groups[1024] = "", clip[200] = "";
                for (int pp = 0; pp < hc->pp && pp < 4; pp++)
                    for (int tp = 0; tp < hc->tp && tp < 4; tp++) {
                        if (strlen(hashes) > (res->replicas_differ_at ? 100u : 300u)) {
                            if (!strstr(hashes, "; ..."))
                                pl_appendf(hashes, sizeof hashes, "; ...");
                            continue;
                        }
                        pl_appendf(hashes, sizeof hashes, "%s(pp %d, tp %d):", pp || tp ? "; " : "",
                                   pp, tp);
                        for (int d = 0; d < hc->dp && d < 4; d++) {
                            pl_mesh_coord at = {d, tp, pp};
                            pl_appendf(hashes, sizeof hashes, " %08x",
                                       run->hash[pl_mesh_rank(&mesh, at)]);
                        }
                        if (hc->dp > 4) pl_appendf(hashes, sizeof hashes, " ...");
                    }
                if ((hc->pp > 4 || hc->tp > 4) && !strstr(hashes, "; ..."))
                    pl_appendf(hashes, sizeof hashes, "; ...");
                /* bytes per group, summed over every rank, against the formulas */
                unsigned long long got[3] = {0, 0, 0}, want[3] = {0, 0, 0};
                for (int q = 0; q < n; q++) {
                    pl_mesh_coord at;
                    pl_mesh_coords(&mesh, q, &at);
                    pl_hybrid_traffic t;
                    if (pl_hybrid_traffic_of(hc, at, &t, NULL, 0)) continue;
                    got[0] += run->bytes[q].tp;
                    got[1] += run->bytes[q].dp;
                    got[2] += run->bytes[q].pp;
                    want[0] += t.tp_bytes;
                    want[1] += t.dp_bytes;
                    want[2] += t.pp_bytes;
                }
                want[0] /=
                    (unsigned long long)hc->tp; /* a group's figure, counted by each member */
                want[1] /= (unsigned long long)hc->dp;
                static const char *const gname[3] = {"TP", "DP", "PP"};
                for (int a = 0; a < 3; a++) {
                    char gb[32], wb[32];
                    pl_bytes_text(got[a], gb, sizeof gb);
                    pl_bytes_text(want[a], wb, sizeof wb);
                    pl_appendf(groups, sizeof groups, "%s%s %s (the formulas: %s)", a ? ", " : "",
                               gname[a], gb, wb);
                }
                if (cfg->clip > 0 && norm > cfg->clip)
                    snprintf(clip, sizeof clip,
                             ", above --clip-grad-norm %g: every gradient was scaled by %g/%.4f",
                             cfg->clip, cfg->clip, norm);
                else if (cfg->clip > 0)
                    snprintf(clip, sizeof clip, ", below --clip-grad-norm %g: nothing to clip",
                             cfg->clip);
                STEP("The step: loss %.4f (the mean over the %d rows of every replica), gradient "
                     "norm %.4f over the whole model%s; then %s on every rank's part. The DP "
                     "replicas of each (pp, tp) position, their parameters hashed dp 0, 1, ...: "
                     "%s: %s. Bytes sent in the step, every rank's own ledger by group: %s%s%s.",
                     step_loss / B, B, norm, clip, cfg->sgd ? "SGD" : "AdamW", hashes,
                     res->replicas_differ_at ? res->replicas_why : "the same bits in every replica",
                     groups, res->traffic_bad_at ? "; " : "",
                     res->traffic_bad_at ? res->traffic_why : "");
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
        if (last_stage) {
            CK(cudaMemcpy(&right, h.pp.part[v - 1].correct, sizeof right, cudaMemcpyDeviceToHost));
            CK(pl_blocks_reset_correct(&h.pp.part[v - 1], cs));
        }
        for (int s0 = 0; cfg->evaluate && s0 < test->n; s0 += B) {
            for (int i = 0; i < rows; i++) { /* padding rows: zeros, a label nothing matches */
                int row = s0 + c.dp * rows + i;
                if (row < test->n)
                    memcpy(hx + (size_t)i * PL_DIGITS_FEATURES,
                           test->x + (size_t)row * PL_DIGITS_FEATURES,
                           PL_DIGITS_FEATURES * sizeof *hx);
                else
                    memset(hx + (size_t)i * PL_DIGITS_FEATURES, 0, PL_DIGITS_FEATURES * sizeof *hx);
                hy[i] = row < test->n ? test->y[row] : -1;
            }
            if (first_stage)
                CK(cudaMemcpyAsync(dx, hx, (size_t)rows * PL_DIGITS_FEATURES * sizeof(float),
                                   cudaMemcpyHostToDevice, cs));
            if (last_stage)
                CK(cudaMemcpyAsync(dy, hy, (size_t)rows * sizeof(int), cudaMemcpyHostToDevice, cs));
            HY(pl_hybrid_evaluate(&h, first_stage ? dx : NULL, last_stage ? dy : NULL, NULL));
        }
        if (last_stage && cfg->evaluate) {
            CK(cudaMemcpy(&test_right, h.pp.part[v - 1].correct, sizeof test_right,
                          cudaMemcpyDeviceToHost));
            CK(pl_blocks_reset_correct(&h.pp.part[v - 1], cs));
        }
        run->right[me] = last_stage && c.tp == 0 ? right : 0;
        run->test_right[me] = last_stage && c.tp == 0 ? test_right : 0;
        BARRIER();
        TO_RANK0(run->right);
        TO_RANK0(run->test_right);
        right = test_right = 0; /* every rank's (under mpirun: on rank 0) */
        for (int q = 0; q < n; q++) right += run->right[q], test_right += run->test_right[q];
        BARRIER();
        double ep_loss = seen ? loss_sum / seen : 0, tr_acc = seen ? 100.0 * right / seen : 0,
               te_acc = 100.0 * test_right / test->n;
        if (me == 0) {
            res->train_acc = tr_acc;
            res->test_acc = te_acc;
            if (epoch - 1 < 1000) res->epoch_loss[epoch - 1] = ep_loss;
            if (cfg->progress && (epoch % 5 == 0 || epoch == cfg->epochs))
                pl_check_progress(cfg->progress, "dp=%d tp=%d pp=%d, epoch %d/%d: loss %.4f",
                                  hc->dp, hc->tp, hc->pp, epoch, cfg->epochs, ep_loss);
        }
        STEP("Epoch %d/%d: loss %.4f (the mean over %d samples), train %.1f %%, test %.1f %%.",
             epoch, cfg->epochs, ep_loss, seen, tr_acc, te_acc);
        if (me == 0) pl_metric(r, "epoch loss", ep_loss);
        if (cfg->max_steps && steps >= cfg->max_steps) break;
    }
    GATHER(0);
    if (me == 0) {
        res->steps = steps;
        res->modeled_step = steps ? modeled_total / steps : 0;
        res->measured_step = steps ? measured_total / steps : 0;
        res->nparams = nparams;
        res->params = run->whole;
        run->whole = NULL;
    }
    status = 0;
out:
    cudaStreamSynchronize(cs);
    if (created) pl_hybrid_destroy(&h);
    if (have_groups) pl_mesh_groups_free(&g);
    cudaFree(dx);
    cudaFree(dy);
    free(hx);
    free(hy);
    free(order);
    if (took_rows) pl_lab_shared_leave(&run->shared, rows_free, run);
    if (me == 0) {
        free(run->whole);
        run->whole = NULL;
    }
    return status;
}
