/*
 * test_mesh.c — the device mesh (paralab/mesh.h): every rank's coordinates
 * and every TP, DP and PP group of a 2x2x2 and a 1x4x2 mesh, written out by
 * hand from Megatron-LM's order (the groups of shared/REFERENCES-PARALLEL.md,
 * "3D parallelism"); the exact error messages; and a world of 8 simulated
 * ranks that splits its groups and all-reduces in each, every element
 * checked.
 *
 * CUnit is not thread-safe: rank functions only record what they saw; the
 * test thread asserts.
 */
#include <stdio.h>
#include <string.h>

#include "paralab/mesh.h"
#include "paralab/world.h"
#include "suites.h"

/* A mesh of 8 ranks as a reader draws it. coord[r] = {dp, tp, pp} of rank
 * r; group[a][g] = the ranks of group g along axis a (PL_MESH_TP, _DP,
 * _PP), in coordinate order. */
typedef struct {
    int dp, tp, pp;
    pl_mesh_order order;
    int coord[8][3];
    int ngroups[PL_MESH_NUM_AXES], gsize[PL_MESH_NUM_AXES];
    int group[PL_MESH_NUM_AXES][8][8];
} mesh_case;

static const mesh_case mesh_222 = {
    .dp = 2,
    .tp = 2,
    .pp = 2,
    .coord =
        {{0, 0, 0}, {0, 1, 0}, {1, 0, 0}, {1, 1, 0}, {0, 0, 1}, {0, 1, 1}, {1, 0, 1}, {1, 1, 1}},
    .ngroups = {4, 4, 4},
    .gsize = {2, 2, 2},
    .group = {[PL_MESH_TP] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}},
              [PL_MESH_DP] = {{0, 2}, {1, 3}, {4, 6}, {5, 7}},
              [PL_MESH_PP] = {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
};

static const mesh_case mesh_142 = {
    .dp = 1,
    .tp = 4,
    .pp = 2,
    .coord =
        {{0, 0, 0}, {0, 1, 0}, {0, 2, 0}, {0, 3, 0}, {0, 0, 1}, {0, 1, 1}, {0, 2, 1}, {0, 3, 1}},
    .ngroups = {2, 8, 4},
    .gsize = {4, 1, 2},
    .group = {[PL_MESH_TP] = {{0, 1, 2, 3}, {4, 5, 6, 7}},
              [PL_MESH_DP] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}},
              [PL_MESH_PP] = {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
};

/* picotron's order (DP outermost): the TP groups are Megatron's, DP and PP
 * trade places (REFERENCES-PARALLEL.md, "3D parallelism"). */
static const mesh_case mesh_222_picotron = {
    .dp = 2,
    .tp = 2,
    .pp = 2,
    .order = PL_MESH_PICOTRON,
    .coord =
        {{0, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 1, 1}, {1, 0, 0}, {1, 1, 0}, {1, 0, 1}, {1, 1, 1}},
    .ngroups = {4, 4, 4},
    .gsize = {2, 2, 2},
    .group = {[PL_MESH_TP] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}},
              [PL_MESH_DP] = {{0, 4}, {1, 5}, {2, 6}, {3, 7}},
              [PL_MESH_PP] = {{0, 2}, {1, 3}, {4, 6}, {5, 7}}},
};

/* 2 x 1 x 4 in picotron's order: rank = pp + 4 dp. */
static const mesh_case mesh_214_picotron = {
    .dp = 2,
    .tp = 1,
    .pp = 4,
    .order = PL_MESH_PICOTRON,
    .coord =
        {{0, 0, 0}, {0, 0, 1}, {0, 0, 2}, {0, 0, 3}, {1, 0, 0}, {1, 0, 1}, {1, 0, 2}, {1, 0, 3}},
    .ngroups = {8, 4, 2},
    .gsize = {1, 2, 4},
    .group = {[PL_MESH_TP] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}},
              [PL_MESH_DP] = {{0, 4}, {1, 5}, {2, 6}, {3, 7}},
              [PL_MESH_PP] = {{0, 1, 2, 3}, {4, 5, 6, 7}}},
};

/* The group of axis a that holds rank r (its index in k->group[a]), and r's
 * position in it; -1 if none does. */
static int group_of(const mesh_case *k, int a, int r, int *pos)
{
    for (int g = 0; g < k->ngroups[a]; g++)
        for (int i = 0; i < k->gsize[a]; i++)
            if (k->group[a][g][i] == r) {
                *pos = i;
                return g;
            }
    return -1;
}

static void check_mesh(const mesh_case *k)
{
    pl_mesh m;
    char err[256] = "untouched";
    CU_ASSERT_EQUAL_FATAL(pl_mesh_init_order(&m, 8, k->dp, k->tp, k->pp, k->order, err, sizeof err),
                          0);
    CU_ASSERT_STRING_EQUAL(err, "");
    CU_ASSERT_EQUAL(m.order, k->order);
    CU_ASSERT_EQUAL(m.dp, k->dp);
    CU_ASSERT_EQUAL(m.tp, k->tp);
    CU_ASSERT_EQUAL(m.pp, k->pp);
    CU_ASSERT_EQUAL(m.size, 8);
    CU_ASSERT_EQUAL(pl_mesh_axis_size(&m, PL_MESH_TP), k->tp);
    CU_ASSERT_EQUAL(pl_mesh_axis_size(&m, PL_MESH_DP), k->dp);
    CU_ASSERT_EQUAL(pl_mesh_axis_size(&m, PL_MESH_PP), k->pp);
    for (int r = 0; r < 8; r++) {
        pl_mesh_coord c = {-1, -1, -1};
        CU_ASSERT_EQUAL(pl_mesh_coords(&m, r, &c), 0);
        CU_ASSERT_EQUAL(c.dp, k->coord[r][0]);
        CU_ASSERT_EQUAL(c.tp, k->coord[r][1]);
        CU_ASSERT_EQUAL(c.pp, k->coord[r][2]);
        CU_ASSERT_EQUAL(pl_mesh_rank(&m, c), r);
        for (int a = 0; a < PL_MESH_NUM_AXES; a++) {
            int ranks[PL_MAX_RANKS], pos = -1;
            memset(ranks, 0xff, sizeof ranks);
            int g = group_of(k, a, r, &pos);
            CU_ASSERT_FATAL(g >= 0);
            CU_ASSERT_EQUAL(pl_mesh_group(&m, (pl_mesh_axis)a, r, ranks), k->gsize[a]);
            for (int i = 0; i < k->gsize[a]; i++) CU_ASSERT_EQUAL(ranks[i], k->group[a][g][i]);
            CU_ASSERT_EQUAL(ranks[k->gsize[a]], -1); /* nothing written past the group */
            /* a rank's place in its group is its coordinate on the axis */
            int coord = a == PL_MESH_TP ? c.tp : a == PL_MESH_DP ? c.dp : c.pp;
            CU_ASSERT_EQUAL(pos, coord);
        }
        /* the pipeline peers: the neighbours in r's PP group, -1 past its ends */
        int pos = -1, g = group_of(k, PL_MESH_PP, r, &pos);
        CU_ASSERT_EQUAL(pl_mesh_pp_prev(&m, r), pos > 0 ? k->group[PL_MESH_PP][g][pos - 1] : -1);
        CU_ASSERT_EQUAL(pl_mesh_pp_next(&m, r),
                        pos < k->pp - 1 ? k->group[PL_MESH_PP][g][pos + 1] : -1);
    }
    CU_ASSERT_EQUAL(pl_mesh_pp_prev(&m, 8), -1);
    CU_ASSERT_EQUAL(pl_mesh_pp_next(&m, -1), -1);
}

static void test_mesh_222(void) { check_mesh(&mesh_222); }
static void test_mesh_142(void) { check_mesh(&mesh_142); }
static void test_mesh_222_picotron(void) { check_mesh(&mesh_222_picotron); }
static void test_mesh_214_picotron(void) { check_mesh(&mesh_214_picotron); }

static void test_mesh_orders(void)
{
    char err[256] = "";
    CU_ASSERT_STRING_EQUAL(pl_mesh_order_name(PL_MESH_MEGATRON), "megatron");
    CU_ASSERT_STRING_EQUAL(pl_mesh_order_name(PL_MESH_PICOTRON), "picotron");
    CU_ASSERT_STRING_EQUAL(pl_mesh_order_name(PL_MESH_NUM_ORDERS), "?");
    CU_ASSERT_EQUAL(pl_mesh_order_parse("megatron", err, sizeof err), PL_MESH_MEGATRON);
    CU_ASSERT_EQUAL(pl_mesh_order_parse("picotron", err, sizeof err), PL_MESH_PICOTRON);
    CU_ASSERT_EQUAL(pl_mesh_order_parse("torchtitan", err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "'torchtitan' is not a rank order: use megatron (TP fastest, PP "
                                "outermost) or picotron (TP fastest, DP outermost)");
    pl_mesh m;
    CU_ASSERT_EQUAL(pl_mesh_init_order(&m, 8, 2, 2, 2, (pl_mesh_order)7, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "mesh: order 7 is not megatron or picotron");
    char buf[64];
    pl_mesh_coord_str((pl_mesh_coord){.dp = 1, .tp = 3, .pp = 0}, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "dp 1, pp 0, tp 3");
}

static void test_mesh_errors(void)
{
    pl_mesh m;
    char err[256];
    struct {
        int world, dp, tp, pp;
        const char *msg;
    } bad[] = {
        {8, 0, 4, 2, "mesh: dp = 0 is not allowed: each of dp, tp, pp must be at least 1"},
        {8, 2, -1, 2, "mesh: tp = -1 is not allowed: each of dp, tp, pp must be at least 1"},
        {8, 2, 4, 0, "mesh: pp = 0 is not allowed: each of dp, tp, pp must be at least 1"},
        {8, 1, 65, 1, "mesh: tp = 65 is more ranks than the 64 paralab runs (PL_MAX_RANKS)"},
        {0, 1, 1, 1, "mesh: a world of 0 ranks is not allowed: it needs at least 1"},
        {128, 2, 8, 8,
         "mesh: a world of 128 ranks is more than the 64 paralab runs (PL_MAX_RANKS)"},
        {8, 2, 2, 3,
         "mesh: dp x tp x pp = 2 x 2 x 3 = 12 ranks, but the world has 8: the product must equal "
         "the world size"},
        {64, 4, 4, 8,
         "mesh: dp x tp x pp = 4 x 4 x 8 = 128 ranks, but the world has 64: the product must "
         "equal the world size"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&m, 0x5a, sizeof m);
        CU_ASSERT_EQUAL(
            pl_mesh_init(&m, bad[i].world, bad[i].dp, bad[i].tp, bad[i].pp, err, sizeof err), -1);
        CU_ASSERT_STRING_EQUAL(err, bad[i].msg);
        if (strcmp(err, bad[i].msg)) fprintf(stderr, "  got '%s'\n", err);
        CU_ASSERT_EQUAL(m.size, 0); /* zeroed: no half-made mesh */
        CU_ASSERT_EQUAL(m.dp, 0);
    }
    /* no room for a message: still refused */
    CU_ASSERT_EQUAL(pl_mesh_init(&m, 8, 0, 4, 2, NULL, 0), -1);
    /* the largest world */
    CU_ASSERT_EQUAL(pl_mesh_init(&m, 64, 4, 4, 4, err, sizeof err), 0);
    CU_ASSERT_EQUAL(m.size, 64);

    /* queries out of range */
    CU_ASSERT_EQUAL_FATAL(pl_mesh_init(&m, 8, 2, 2, 2, err, sizeof err), 0);
    pl_mesh_coord c;
    int ranks[PL_MAX_RANKS];
    CU_ASSERT_EQUAL(pl_mesh_coords(&m, 8, &c), -1);
    CU_ASSERT_EQUAL(pl_mesh_coords(&m, -1, &c), -1);
    CU_ASSERT_EQUAL(pl_mesh_rank(&m, (pl_mesh_coord){.dp = 2, .tp = 0, .pp = 0}), -1);
    CU_ASSERT_EQUAL(pl_mesh_rank(&m, (pl_mesh_coord){.dp = 0, .tp = -1, .pp = 0}), -1);
    CU_ASSERT_EQUAL(pl_mesh_rank(&m, (pl_mesh_coord){.dp = 0, .tp = 0, .pp = 2}), -1);
    CU_ASSERT_EQUAL(pl_mesh_rank(&m, (pl_mesh_coord){.dp = 1, .tp = 1, .pp = 1}), 7);
    CU_ASSERT_EQUAL(pl_mesh_group(&m, PL_MESH_NUM_AXES, 0, ranks), -1);
    CU_ASSERT_EQUAL(pl_mesh_group(&m, PL_MESH_TP, 8, ranks), -1);
    CU_ASSERT_EQUAL(pl_mesh_axis_size(&m, PL_MESH_NUM_AXES), -1);
    CU_ASSERT_STRING_EQUAL(pl_mesh_axis_name(PL_MESH_TP), "tp");
    CU_ASSERT_STRING_EQUAL(pl_mesh_axis_name(PL_MESH_DP), "dp");
    CU_ASSERT_STRING_EQUAL(pl_mesh_axis_name(PL_MESH_PP), "pp");
    CU_ASSERT_STRING_EQUAL(pl_mesh_axis_name(PL_MESH_NUM_AXES), "?");
}

/* ---- a real run: 8 ranks split their groups and all-reduce in each ------------------------ */

enum { N_ELEM = 5 };

typedef struct {
    const mesh_case *k;
    int world; /* the world's size (8; 4 for the mismatch) */
    pl_comm_result result[8];
    char msg[8][512];
    int sub_rank[8][PL_MESH_NUM_AXES], sub_size[8][PL_MESH_NUM_AXES];
    int tag[8][PL_MESH_NUM_AXES];               /* pl_comm_group of each group's handle */
    int member[8][PL_MESH_NUM_AXES][8];         /* pl_comm_world_rank of each member */
    pl_ledger own[8][PL_MESH_NUM_AXES], world0; /* each group's own ledger; rank 0's world's */
    float sum[8][PL_MESH_NUM_AXES][N_ELEM];
} split_run;

/* Rank r's element i, distinct per rank and axis, exact in float. */
static float value(int r, int a, int i) { return (float)(100 * a + 10 * r + i); }

static int run_mesh_split(pl_rank *r)
{
    split_run *s = r->arg;
    int me = r->rank;
    pl_mesh m;
    pl_mesh_groups g;
    if (pl_mesh_init_order(&m, 8, s->k->dp, s->k->tp, s->k->pp, s->k->order, s->msg[me],
                           sizeof s->msg[me]))
        return 1;
    s->result[me] = pl_mesh_split(&m, r->comm, &g, s->msg[me], sizeof s->msg[me]);
    if (s->result[me] != PL_COMM_OK) return s->world == 8; /* the mismatch case expects it */
    pl_comm *sub[PL_MESH_NUM_AXES] = {g.tp, g.dp, g.pp};
    float *d = NULL, h[N_ELEM];
    if (cudaMalloc((void **)&d, sizeof h)) {
        snprintf(r->error, sizeof r->error, "cudaMalloc failed");
        return 1;
    }
    for (int a = 0; a < PL_MESH_NUM_AXES; a++) {
        s->sub_rank[me][a] = pl_comm_rank(sub[a]);
        s->sub_size[me][a] = pl_comm_size(sub[a]);
        s->tag[me][a] = pl_comm_group(sub[a]);
        for (int i = 0; i < 8; i++) s->member[me][a][i] = pl_comm_world_rank(sub[a], i);
        for (int i = 0; i < N_ELEM; i++) h[i] = value(me, a, i);
        cudaMemcpyAsync(d, h, sizeof h, cudaMemcpyHostToDevice, r->stream);
        pl_comm_result res = pl_all_reduce(sub[a], d, d, N_ELEM, PL_FLOAT32, PL_SUM, r->stream);
        if (res) {
            snprintf(r->error, sizeof r->error, "%s", pl_comm_last_error(sub[a]));
            return 1;
        }
        cudaMemcpyAsync(s->sum[me][a], d, sizeof h, cudaMemcpyDeviceToHost, r->stream);
        cudaStreamSynchronize(r->stream);
    }
    cudaFree(d);
    for (int a = 0; a < PL_MESH_NUM_AXES; a++) s->own[me][a] = pl_comm_ledger_own(sub[a]);
    if (me == 0) s->world0 = pl_comm_ledger(r->comm);
    return pl_mesh_groups_free(&g) != PL_COMM_OK || g.tp || g.dp || g.pp;
}

static void check_split_run(const mesh_case *k)
{
    static split_run s; /* 8 ranks' results: off the stack */
    memset(&s, 0, sizeof s);
    s.k = k;
    s.world = 8;
    char err[1200];
    int rc = pl_world_run(8, NULL, 10, run_mesh_split, &s, err, sizeof err);
    if (rc) fprintf(stderr, "  %s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    static const pl_group tag[] = {PL_GROUP_TP, PL_GROUP_DP, PL_GROUP_PP};
    uint64_t own_sent0 = 0;
    for (int r = 0; r < 8; r++) {
        CU_ASSERT_EQUAL(s.result[r], PL_COMM_OK);
        CU_ASSERT_STRING_EQUAL(s.msg[r], "");
        for (int a = 0; a < PL_MESH_NUM_AXES; a++) {
            int pos = -1, g = group_of(k, a, r, &pos);
            CU_ASSERT_FATAL(g >= 0);
            CU_ASSERT_EQUAL(s.sub_size[r][a], k->gsize[a]);
            CU_ASSERT_EQUAL(s.sub_rank[r][a], pos);
            CU_ASSERT_EQUAL(s.tag[r][a], tag[a]);
            for (int i = 0; i < 8; i++)
                CU_ASSERT_EQUAL(s.member[r][a][i], i < k->gsize[a] ? k->group[a][g][i] : -1);
            /* one all-reduce of N_ELEM floats through this group alone: a ring of n
             * ranks sends 2 (n - 1) messages per rank, and the group's members
             * together send (n - 1) times the 20 bytes twice over (each of the n
             * segments travels n - 1 hops in each phase) */
            const pl_ledger *o = &s.own[r][a];
            int n = k->gsize[a];
            CU_ASSERT_EQUAL(o->calls[PL_CALL_ALL_REDUCE], 1);
            CU_ASSERT_EQUAL(o->calls[PL_CALL_SEND], 0);
            CU_ASSERT_EQUAL(o->messages_sent, (uint64_t)(2 * (n - 1)));
            CU_ASSERT_EQUAL(o->messages_received, o->messages_sent);
            if (pos == 0) {
                uint64_t sent = 0, received = 0;
                for (int j = 0; j < n; j++) {
                    sent += s.own[k->group[a][g][j]][a].bytes_sent;
                    received += s.own[k->group[a][g][j]][a].bytes_received;
                }
                CU_ASSERT_EQUAL(sent, (uint64_t)(2 * (n - 1) * N_ELEM * sizeof(float)));
                CU_ASSERT_EQUAL(received, sent);
            }
            if (r == 0) own_sent0 += o->bytes_sent;
            for (int i = 0; i < N_ELEM; i++) {
                float want = 0;
                for (int j = 0; j < k->gsize[a]; j++) want += value(k->group[a][g][j], a, i);
                CU_ASSERT_EQUAL(s.sum[r][a][i], want);
            }
        }
    }
    /* the world's ledger of rank 0 holds the three groups' traffic, and only it */
    CU_ASSERT_EQUAL(s.world0.bytes_sent, own_sent0);
    CU_ASSERT_EQUAL(s.world0.calls[PL_CALL_ALL_REDUCE], 3);
}

static void test_split_222(void) { check_split_run(&mesh_222); }
static void test_split_142(void) { check_split_run(&mesh_142); }
static void test_split_222_picotron(void) { check_split_run(&mesh_222_picotron); }

/* A mesh of 8 on a world of 4: every rank is refused, naming both sizes. */
static void test_split_size_mismatch(void)
{
    static split_run s;
    memset(&s, 0, sizeof s);
    s.k = &mesh_222;
    s.world = 4;
    char err[1200];
    int rc = pl_world_run(4, NULL, 10, run_mesh_split, &s, err, sizeof err);
    if (rc) fprintf(stderr, "  %s\n", err);
    CU_ASSERT_EQUAL(rc, 0);
    for (int r = 0; r < 4; r++) {
        CU_ASSERT_EQUAL(s.result[r], PL_COMM_INVALID_ARGUMENT);
        CU_ASSERT_STRING_EQUAL(s.msg[r], "mesh_split: the communicator has 4 ranks, the mesh (dp x "
                                         "tp x pp = 2 x 2 x 2) 8: they must be equal");
    }
}

int register_mesh_suite(void)
{
    static const unit_test t[] = {
        {"2x2x2: every coordinate and group (Megatron order)", test_mesh_222},
        {"1x4x2: every coordinate and group", test_mesh_142},
        {"2x2x2: every coordinate and group (picotron order)", test_mesh_222_picotron},
        {"2x1x4: every coordinate and group (picotron order)", test_mesh_214_picotron},
        {"the two orders by name; a coordinate as the labs print it", test_mesh_orders},
        {"bad sizes and queries: the messages name the value", test_mesh_errors},
        {"8 ranks, 2x2x2: split, all-reduce in every group", test_split_222},
        {"8 ranks, 1x4x2: split, all-reduce in every group", test_split_142},
        {"8 ranks, 2x2x2 picotron: split, tags, members, each group's own ledger",
         test_split_222_picotron},
        {"a mesh of 8 on a world of 4 is refused", test_split_size_mismatch},
    };
    return UNIT_SUITE("mesh", t);
}
