/*
 * Lab 10 — the checks. Exercise 0 is coords, 1 make_groups, 2 dp_after.
 *
 *   coords: every rank of every factorisation (dp, tp, pp) of 8 and of 4
 *     ranks, in both orders: first against the tables written out by hand
 *     for dp = tp = pp = 2 (shared/REFERENCES-PARALLEL.md, "3D
 *     parallelism"), then against pl_mesh_coords; a rank outside the mesh
 *     (-1, size) returns -1;
 *   make_groups: a world of 8 and of 4 ranks for every factorisation, both
 *     orders (the 2 x 2 x 2 mesh first, against the hand-written groups):
 *     each of the three communicators has the axis' size, this rank's rank
 *     in it is its coordinate, and its members (pl_comm_world_rank) are the
 *     ranks of the mesh's group in coordinate order;
 *   dp_after: every schedule kind (naive, gpipe, 1f1b, interleaved, zb-h1)
 *     at p in {1, 2, 3, 4, 8} and m in {1, 2, 4, 8} (where the kind takes
 *     them), every stage, against pl_hybrid_dp_after;
 * and with training (make check; lab10 prints the three above): see
 * check_training below.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "10_hybrid/lab10.h"
#include "paralab/plural.h"
#include "registry.h"

/* ---- coords --------------------------------------------------------------------------- */

/* dp = tp = pp = 2, written out: {dp, pp, tp} of ranks 0..7 */
static const int table_megatron[8][3] = {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1},
                                         {0, 1, 0}, {0, 1, 1}, {1, 1, 0}, {1, 1, 1}};
static const int table_picotron[8][3] = {{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1},
                                         {1, 0, 0}, {1, 0, 1}, {1, 1, 0}, {1, 1, 1}};

/* Every (dp, tp, pp) with dp tp pp = n, dp descending then tp: into out;
 * returns how many. */
static int factorisations(int n, int (*out)[3])
{
    int k = 0;
    for (int dp = n; dp >= 1; dp--)
        for (int tp = n; tp >= 1; tp--)
            if (n % (dp * tp) == 0) {
                out[k][0] = dp;
                out[k][1] = tp;
                out[k][2] = n / (dp * tp);
                k++;
            }
    return k;
}

static const char *formula(pl_mesh_order o)
{
    return o == PL_MESH_MEGATRON ? "rank = tp + t (dp + N pp)" : "rank = tp + t (pp + p dp)";
}

/* One mesh: every rank against want (a table) or pl_mesh_coords. 0 when
 * TODO was found. */
static int check_coords_mesh(const lab10_impl *impl, const pl_mesh *m, const int (*table)[3],
                             pl_check *c)
{
    for (int q = 0; q < m->size && pl_check_ok(c); q++) {
        pl_mesh_coord got = {-1, -1, -1}, want;
        int rc = impl->coords(m, q, &got);
        if (rc == PL_TODO_STATUS) {
            pl_check_todo(c);
            return 0;
        }
        if (table)
            want = (pl_mesh_coord){table[q][0], table[q][2], table[q][1]};
        else
            pl_mesh_coords(m, q, &want);
        char g[64], w[64];
        pl_mesh_coord_str(got, g, sizeof g);
        pl_mesh_coord_str(want, w, sizeof w);
        if (!pl_check_that(c, rc == 0,
                           "%s mesh dp %d x tp %d x pp %d: coords(rank %d) returned %d; rank %d "
                           "is at (%s)",
                           pl_mesh_order_name(m->order), m->dp, m->tp, m->pp, q, rc, q, w))
            break;
        pl_check_that(c, got.dp == want.dp && got.pp == want.pp && got.tp == want.tp,
                      "%s mesh dp %d x tp %d x pp %d: coords puts rank %d at (%s); it is at "
                      "(%s)%s: %s",
                      pl_mesh_order_name(m->order), m->dp, m->tp, m->pp, q, g, w,
                      table ? " (the guide's table of the 2 x 2 x 2 groups)" : "",
                      formula(m->order));
    }
    for (int k = 0; k < 2 && pl_check_ok(c); k++) {
        int q = k ? m->size : -1;
        pl_mesh_coord got;
        int rc = impl->coords(m, q, &got);
        pl_check_that(c, rc == -1,
                      "%s mesh dp %d x tp %d x pp %d: coords(rank %d) returned %d; a rank "
                      "outside 0..%d returns -1",
                      pl_mesh_order_name(m->order), m->dp, m->tp, m->pp, q, rc, m->size - 1);
    }
    return 1;
}

static void check_coords(const lab10_impl *impl, pl_check *c)
{
    pl_mesh m;
    for (int o = 0; o < PL_MESH_NUM_ORDERS && pl_check_ok(c); o++) {
        pl_mesh_init_order(&m, 8, 2, 2, 2, (pl_mesh_order)o, NULL, 0);
        if (!check_coords_mesh(impl, &m, o == PL_MESH_MEGATRON ? table_megatron : table_picotron,
                               c))
            return;
    }
    static const int sizes[] = {8, 4};
    for (int s = 0; s < 2 && pl_check_ok(c); s++) {
        int f[64][3], nf = factorisations(sizes[s], f);
        for (int i = 0; i < nf && pl_check_ok(c); i++)
            for (int o = 0; o < PL_MESH_NUM_ORDERS && pl_check_ok(c); o++) {
                pl_mesh_init_order(&m, sizes[s], f[i][0], f[i][1], f[i][2], (pl_mesh_order)o, NULL,
                                   0);
                if (!check_coords_mesh(impl, &m, NULL, c)) return;
            }
    }
}

/* ---- make_groups ---------------------------------------------------------------------- */

/* The groups of dp = tp = pp = 2, written out: each rank's TP, DP, PP group */
static const int groups_megatron[3][4][2] = {{{0, 1}, {2, 3}, {4, 5}, {6, 7}},
                                             {{0, 2}, {1, 3}, {4, 6}, {5, 7}},
                                             {{0, 4}, {1, 5}, {2, 6}, {3, 7}}};
static const int groups_picotron[3][4][2] = {{{0, 1}, {2, 3}, {4, 5}, {6, 7}},
                                             {{0, 4}, {1, 5}, {2, 6}, {3, 7}},
                                             {{0, 2}, {1, 3}, {4, 6}, {5, 7}}};

typedef struct {
    const lab10_impl *impl;
    pl_mesh mesh;
    int table; /* the hand-written groups of 2 x 2 x 2 */
    int todo[PL_MAX_RANKS];
    char why[PL_MAX_RANKS][1024];
} groups_world;

static const char *const axis_title[3] = {"TP", "DP", "PP"};

/* "{0, 2}" */
static void set_text(const int *x, int n, char *buf, size_t cap)
{
    size_t k = (size_t)snprintf(buf, cap, "{");
    for (int i = 0; i < n && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%d", i ? ", " : "", x[i]);
    if (k < cap) snprintf(buf + k, cap - k, "}");
}

static int groups_rank(pl_rank *r)
{
    groups_world *w = r->arg;
    const pl_mesh *m = &w->mesh;
    int me = r->rank;
    pl_mesh_groups g = {0};
    char *why = w->why[me];
    size_t cap = sizeof w->why[0];
    int rc = w->impl->make_groups(r->comm, m, &g);
    if (rc == PL_TODO_STATUS) {
        w->todo[me] = 1;
        return 0;
    }
    if (rc) {
        /* what the comm layer said (on the world, or a group made before)
         * stops the world: the other ranks may wait in a call of theirs */
        const char *e = pl_comm_last_error(r->comm);
        pl_comm *made[3] = {g.tp, g.dp, g.pp};
        for (int a = 0; a < 3 && (!e || !e[0]); a++)
            if (made[a]) e = pl_comm_last_error(made[a]);
        if (e && e[0]) {
            snprintf(r->error, sizeof r->error, "make_groups returned %d on rank %d (%s)", rc, me,
                     e);
            return 1;
        }
        snprintf(why, cap,
                 "make_groups returned %d on rank %d; it returns 0, or the non-zero result of a "
                 "pl_comm_split that failed",
                 rc, me);
    } else {
        pl_comm *gc[3] = {g.tp, g.dp, g.pp};
        pl_mesh_axis ax[3] = {PL_MESH_TP, PL_MESH_DP, PL_MESH_PP};
        pl_mesh_coord co;
        pl_mesh_coords(m, me, &co);
        int coord[3] = {co.tp, co.dp, co.pp};
        for (int a = 0; a < 3 && !why[0]; a++) {
            int want[PL_MAX_RANKS], got[PL_MAX_RANKS];
            int nw = pl_mesh_group(m, ax[a], me, want);
            if (w->table) {
                const int(*t)[4][2] =
                    m->order == PL_MESH_MEGATRON ? groups_megatron : groups_picotron;
                for (int gi = 0; gi < 4; gi++)
                    if (t[a][gi][0] == me || t[a][gi][1] == me)
                        want[0] = t[a][gi][0], want[1] = t[a][gi][1];
                nw = 2;
            }
            char ws[256], gs[256];
            set_text(want, nw, ws, sizeof ws);
            if (!gc[a]) {
                snprintf(why, cap, "rank %d's %s group is missing (NULL); it is %s", me,
                         axis_title[a], ws);
                break;
            }
            int ng = pl_comm_size(gc[a]);
            for (int i = 0; i < ng && i < PL_MAX_RANKS; i++) got[i] = pl_comm_world_rank(gc[a], i);
            set_text(got, ng < PL_MAX_RANKS ? ng : PL_MAX_RANKS, gs, sizeof gs);
            int same = ng == nw;
            for (int i = 0; same && i < nw; i++) same = got[i] == want[i];
            if (!same)
                snprintf(why, cap, "rank %d's %s group is %s; it should be %s%s", me, axis_title[a],
                         gs, ws, w->table ? " (the guide's table of the 2 x 2 x 2 groups)" : "");
            else if (pl_comm_rank(gc[a]) != coord[a])
                snprintf(why, cap,
                         "rank %d is rank %d of its %s group %s; its rank there must be its %s "
                         "coordinate, %d (the key of the split)",
                         me, pl_comm_rank(gc[a]), axis_title[a], gs, pl_mesh_axis_name(ax[a]),
                         coord[a]);
        }
    }
    if (pl_comm_barrier(r->comm)) { /* the comm layer says why (a mismatch, a deadlock) */
        snprintf(r->error, sizeof r->error, "%s%s%s", why, why[0] ? ": " : "",
                 pl_comm_last_error(r->comm));
        return 1;
    }
    /* wrong groups stay: their frees are collective, and one rank's TP
     * group may be another's DP group, each waiting on the other */
    if (!why[0]) pl_mesh_groups_free(&g);
    return 0;
}

/* One world for mesh m: 0 when TODO was found. */
static int check_groups_mesh(const lab10_impl *impl, const pl_mesh *m, int table, pl_check *c)
{
    static groups_world w;
    memset(&w, 0, sizeof w);
    w.impl = impl;
    w.mesh = *m;
    w.table = table;
    char err[1024];
    if (!pl_check_that(c, !pl_world_run(m->size, NULL, 20, groups_rank, &w, err, sizeof err),
                       "%s mesh dp %d x tp %d x pp %d, your make_groups: %s",
                       pl_mesh_order_name(m->order), m->dp, m->tp, m->pp, err))
        return 1;
    for (int q = 0; q < m->size; q++)
        if (w.todo[q]) {
            pl_check_todo(c);
            /* a make_groups written, which calls the exercise's own coords,
             * still TODO: its PL_TODO() is coords's */
            char at[256];
            snprintf(at, sizeof at, "%s", pl_todo_location());
            pl_mesh_coord co;
            if (impl->coords(m, 0, &co) == PL_TODO_STATUS && !strcmp(at, pl_todo_location()))
                snprintf(c->detail, sizeof c->detail,
                         "not attempted yet: it calls coords, still TODO (PL_TODO() at %s)", at);
            return 0;
        }
    for (int q = 0; q < m->size && pl_check_ok(c); q++)
        pl_check_that(c, !w.why[q][0], "%s mesh dp %d x tp %d x pp %d: %s",
                      pl_mesh_order_name(m->order), m->dp, m->tp, m->pp, w.why[q]);
    return 1;
}

static void check_groups(const lab10_impl *impl, pl_check *c)
{
    pl_mesh m;
    for (int o = 0; o < PL_MESH_NUM_ORDERS && pl_check_ok(c); o++) {
        pl_mesh_init_order(&m, 8, 2, 2, 2, (pl_mesh_order)o, NULL, 0);
        if (!check_groups_mesh(impl, &m, 1, c)) return;
    }
    static const int sizes[] = {8, 4};
    for (int s = 0; s < 2 && pl_check_ok(c); s++) {
        int f[64][3], nf = factorisations(sizes[s], f);
        for (int i = 0; i < nf && pl_check_ok(c); i++)
            for (int o = 0; o < PL_MESH_NUM_ORDERS && pl_check_ok(c); o++) {
                pl_mesh_init_order(&m, sizes[s], f[i][0], f[i][1], f[i][2], (pl_mesh_order)o, NULL,
                                   0);
                if (!check_groups_mesh(impl, &m, 0, c)) return;
            }
    }
}

/* ---- dp_after ------------------------------------------------------------------------- */

static const int grid_p[] = {2, 1, 3, 4, 8};
static const int grid_m[] = {4, 1, 2, 8};

static void check_dp_after(const lab10_impl *impl, pl_check *c)
{
    /* 1f1b first: the lab's default */
    static const pl_pp_kind kinds[] = {PL_PP_1F1B, PL_PP_NAIVE, PL_PP_GPIPE, PL_PP_INTERLEAVED,
                                       PL_PP_ZB_H1};
    for (int k = 0; k < 5 && pl_check_ok(c); k++)
        for (int a = 0; a < 5 && pl_check_ok(c); a++)
            for (int b = 0; b < 4 && pl_check_ok(c); b++) {
                int p = grid_p[a], m = grid_m[b], v = kinds[k] == PL_PP_INTERLEAVED ? 2 : 1;
                if (pl_pp_accepts(kinds[k], p, m, v, NULL, 0)) continue;
                pl_pp_schedule s;
                char err[512];
                if (!pl_check_that(c, !pl_pp_build(&s, kinds[k], p, m, v, err, sizeof err),
                                   "pl_pp_build: %s", err))
                    return;
                for (int r = 0; r < p && pl_check_ok(c); r++) {
                    int got = impl->dp_after(&s, r), want = pl_hybrid_dp_after(&s, r);
                    if (got == PL_TODO_STATUS) {
                        pl_check_todo(c);
                        break;
                    }
                    if (got == want) {
                        pl_check_that(c, 1, "counted");
                        continue;
                    }
                    char wn[24], gn[24] = "", what[256] = "";
                    pl_pp_op_name(s.ops[r][want], v, wn, sizeof wn);
                    if (got >= 0 && got < s.n[r]) {
                        pl_pp_op_name(s.ops[r][got], v, gn, sizeof gn);
                        snprintf(what, sizeof what,
                                 " (%s): the gradients of the ops after it would miss the "
                                 "reduction",
                                 gn);
                    } else if (got == -1)
                        snprintf(what, sizeof what,
                                 ": stage %d would never reduce, and its DP replicas drift apart",
                                 r);
                    else
                        snprintf(what, sizeof what,
                                 ": out of range 0..%d (an op of stage %d's list; -1 means "
                                 "never)",
                                 s.n[r] - 1, r);
                    pl_check_fail(c,
                                  "%s, p=%d, m=%d%s: dp_after(stage %d) = %d%s; the reduction "
                                  "fires after op %d of %d (%s), the stage's last op that writes "
                                  "weight gradients",
                                  pl_pp_kind_name(kinds[k]), p, m, v > 1 ? ", v=2" : "", r, got,
                                  what, want, s.n[r], wn);
                }
                pl_pp_schedule_free(&s);
            }
}

void lab10_check_quick(int exercise, const lab10_impl *impl, pl_check *c)
{
    if (exercise == LAB10_COORDS)
        check_coords(impl, c);
    else if (exercise == LAB10_GROUPS)
        check_groups(impl, c);
    else
        check_dp_after(impl, c);
}

/* ---- with training -------------------------------------------------------------------- */

/* The model of the training checks: h = 16 (f = 64: t up to 8 divides
 * both), L = 8 (8 stages of a block), a batch of 16 in m = 2 micro-batches
 * per replica (dp up to 8: 8 x 2 divides 16). Small: a step is a few
 * milliseconds of emulated kernels on each rank. */
enum { T_H = 16, T_L = 8, T_B = 16, T_M = 2, T_STEPS = 10 };

static pl_hybrid_config model_of(int dp, int tp, int pp, pl_mesh_order order)
{
    pl_hybrid_config hc = {.model = pl_blocks_config_make(T_H, T_L),
                           .dp = dp,
                           .tp = tp,
                           .pp = pp,
                           .order = order,
                           .chunks = 1,
                           .batch = T_B,
                           .micro_batches = T_M};
    return hc;
}

/* One run of lab10_rank: T_STEPS SGD steps (lr 0.05) with impl's groups
 * and dp_after on 1F1B, every step audited; the first step's gradients
 * kept. */
static int train(const pl_digits *d, const lab10_impl *impl, pl_hybrid_config hc, lab10_result *res,
                 char *err, size_t cap)
{
    pl_pp_schedule s;
    if (pl_pp_build(&s, PL_PP_1F1B, hc.pp, hc.micro_batches, 1, err, cap)) return -1;
    lab10_config cfg = {.hc = hc,
                        .kind = PL_PP_1F1B,
                        .schedule = &s,
                        .groups = impl,
                        .dp_after = impl->dp_after,
                        .coords_from = "the coords checked",
                        .groups_from = "the groups checked",
                        .dp_after_from = "the dp_after checked",
                        .epochs = 1,
                        .max_steps = T_STEPS,
                        .lr = 0.05f,
                        .sgd = 1,
                        .seed = 0,
                        .keep_grads = 1,
                        .audit = 1};
    memset(res, 0, sizeof *res);
    static lab10_run run;
    lab10_run_init(&run, &cfg, d, res);
    int rc = pl_world_run(hc.dp * hc.tp * hc.pp, NULL, 60, lab10_rank, &run, err, cap) ? -1 : 0;
    pthread_mutex_destroy(&run.shared.lock);
    pl_pp_schedule_free(&s);
    return rc;
}

static void result_free(lab10_result *r)
{
    free(r->params);
    free(r->grads);
    r->params = r->grads = NULL;
}

/* With your groups (where make_groups passes its check) and your dp_after,
 * for every factorisation (dp, tp, pp) of 8 ranks and of 4 that
 * pl_hybrid_factorisations accepts (the Megatron order; the picotron order
 * too for 2 x 2 x 2 and 2 x 1 x 2), 10 SGD steps of 1F1B on the model
 * above, each against the one-device run (dp = tp = pp = 1):
 *   - the first step's gradients, gathered from the replica 0 ranks, equal
 *     one device's within 1e-6 + 1e-5 of the largest: the same products
 *     summed in another order (the micro-batches, the TP shards' partial
 *     sums, the DP replicas' sums): float32 rounds each sum to 6e-8 of it,
 *     a few of those over the terms;
 *   - after each step the DP replicas of every (pp, tp) position hold the
 *     same bits, and every group's bytes and calls in the step (each
 *     rank's own ledger, pl_comm_ledger_own) equal pl_hybrid_traffic_of;
 *   - after 10 steps the gathered weights equal one device's within 1e-5
 *     relative (+ 1e-6) (SGD: AdamW's division by the root of the second
 *     moment grows the last bits; SGD keeps them at the rounding level).
 * --short: 2 x 2 x 2 and 1 x 2 x 2 in Megatron's order only. */
static void check_training(const lab10_impl *impl, const pl_digits *d, pl_check *c)
{
    char err[1200];
    lab10_result ref, res;
    if (!pl_check_that(
            c,
            !train(d, &lab10_solution, model_of(1, 1, 1, PL_MESH_MEGATRON), &ref, err, sizeof err),
            "one device, %d steps: %s", T_STEPS, err))
        return;
    long n = ref.nparams;
    double gmax = 0;
    for (long i = 0; i < n; i++) gmax = fmax(gmax, fabs(ref.grads[i]));
    static const int sizes[] = {8, 4};
    for (int sz = 0; sz < 2 && pl_check_ok(c); sz++) {
        pl_hybrid_config probe = model_of(1, 1, 1, PL_MESH_MEGATRON);
        int f[64][3], nf = pl_hybrid_factorisations(&probe, sizes[sz], f, 64);
        for (int i = 0; i < nf && i < 64 && pl_check_ok(c); i++)
            for (int o = 0; o < PL_MESH_NUM_ORDERS && pl_check_ok(c); o++) {
                int dp = f[i][0], tp = f[i][1], pp = f[i][2];
                if (o == PL_MESH_PICOTRON && !(dp == 2 && pp == 2)) continue;
                if (pl_check_short() && !(o == 0 && tp == 2 && pp == 2 && dp <= 2)) continue;
                char at[96];
                snprintf(at, sizeof at, "dp %d x tp %d x pp %d (%s)", dp, tp, pp,
                         pl_mesh_order_name((pl_mesh_order)o));
                if (!pl_check_that(c,
                                   !train(d, impl, model_of(dp, tp, pp, (pl_mesh_order)o), &res,
                                          err, sizeof err),
                                   "%s, %d steps: %s", at, T_STEPS, err))
                    break;
                pl_check_that(c, res.init_hash == ref.init_hash,
                              "%s: the initial weights, gathered, hash to %08x; one device's to "
                              "%08x",
                              at, res.init_hash, ref.init_hash);
                double gerr = 0, perr = 0;
                for (long j = 0; j < n; j++) {
                    gerr = fmax(gerr, fabs((double)res.grads[j] - ref.grads[j]) / gmax);
                    perr = fmax(perr, fabs((double)res.params[j] - ref.params[j]));
                }
                for (long j = 0; j < n && pl_check_ok(c); j++)
                    pl_check_that(c,
                                  fabs((double)res.grads[j] - ref.grads[j]) <= 1e-6 + 1e-5 * gmax,
                                  "%s: after one step, gradient %ld of %ld (gathered) is %.7g; one "
                                  "device's is %.7g (tolerance 1e-6 + 1e-5 x %.4g, the largest)",
                                  at, j, n, res.grads[j], ref.grads[j], gmax);
                pl_check_that(c, !res.replicas_differ_at, "%s: after step %d %s", at,
                              res.replicas_differ_at, res.replicas_why);
                pl_check_that(c, !res.traffic_bad_at, "%s: step %d: %s", at, res.traffic_bad_at,
                              res.traffic_why);
                for (long j = 0; j < n && pl_check_ok(c); j++)
                    pl_check_that(
                        c, fabs(res.params[j] - ref.params[j]) <= 1e-6 + 1e-5 * fabs(ref.params[j]),
                        "%s: after %d steps, parameter %ld of the gathered model is "
                        "%.9g; one device's is %.9g",
                        at, T_STEPS, j, res.params[j], ref.params[j]);
                pl_check_progress(
                    c,
                    "%s: %d steps equal one device's (the first step's gradients "
                    "within %.1e of the largest, the weights after %d apart by %.1e at "
                    "most)",
                    at, T_STEPS, gerr, T_STEPS, perr);
                result_free(&res);
            }
    }
    result_free(&ref);
}

/* Your coords and make_groups where they pass their checks, the
 * reference's otherwise (make_groups calls your coords). */
static lab10_impl mix(const lab10_impl *impl)
{
    lab10_impl o = {lab10_solution.coords, lab10_solution.make_groups, impl->dp_after};
    pl_check w;
    pl_check_begin(&w, "10_hybrid", "coords");
    check_coords(impl, &w);
    if (w.outcome != PL_PASS) return o;
    o.coords = impl->coords;
    pl_check_begin(&w, "10_hybrid", "make_groups");
    check_groups(impl, &w);
    if (w.outcome == PL_PASS) o.make_groups = impl->make_groups;
    return o;
}

void lab10_check(int exercise, const lab10_impl *impl, pl_check *c)
{
    lab10_check_quick(exercise, impl, c);
    if (exercise != LAB10_DP_AFTER || !pl_check_ok(c)) return;
    lab10_impl o = mix(impl);
    pl_digits d;
    char err[1200];
    if (pl_digits_load("data/digits.csv", &d, err, sizeof err)) {
        pl_check_fail(c, "%s", err);
        return;
    }
    check_training(&o, &d, c);
    pl_digits_free(&d);
}

static const char *const exercises[] = {"coords", "make_groups", "dp_after", NULL};

static void check_entry(int exercise, int use_solution, pl_check *c)
{
    lab10_check(exercise, use_solution ? &lab10_solution : &lab10_exercise, c);
}

const pl_lab lab10_hybrid = {"10_hybrid", exercises, check_entry};
