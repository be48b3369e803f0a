/* mesh.c — see paralab/mesh.h: the dp x tp x pp device mesh in Megatron's
 * rank order (TP fastest, PP outermost) or picotron's (DP outermost), and
 * its groups' communicators. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "paralab/mesh.h"

const char *pl_mesh_axis_name(pl_mesh_axis a)
{
    static const char *n[] = {"tp", "dp", "pp"};
    return (unsigned)a < PL_MESH_NUM_AXES ? n[a] : "?";
}

/* Writes the message into err (when there is room for one) and returns -1. */
__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t err_size, const char *fmt,
                                                      ...)
{
    if (err && err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_size, fmt, ap);
        va_end(ap);
    }
    return -1;
}

const char *pl_mesh_order_name(pl_mesh_order o)
{
    return o == PL_MESH_MEGATRON ? "megatron" : o == PL_MESH_PICOTRON ? "picotron" : "?";
}

int pl_mesh_order_parse(const char *s, char *err, size_t err_size)
{
    for (int o = 0; o < PL_MESH_NUM_ORDERS; o++)
        if (s && !strcmp(s, pl_mesh_order_name((pl_mesh_order)o))) return o;
    return fail(err, err_size,
                "'%s' is not a rank order: use megatron (TP fastest, PP outermost) or picotron "
                "(TP fastest, DP outermost)",
                s ? s : "");
}

int pl_mesh_init(pl_mesh *m, int world_size, int dp, int tp, int pp, char *err, size_t err_size)
{
    return pl_mesh_init_order(m, world_size, dp, tp, pp, PL_MESH_MEGATRON, err, err_size);
}

int pl_mesh_init_order(pl_mesh *m, int world_size, int dp, int tp, int pp, pl_mesh_order order,
                       char *err, size_t err_size)
{
    memset(m, 0, sizeof *m);
    if (err && err_size) err[0] = '\0';
    if ((unsigned)order >= PL_MESH_NUM_ORDERS)
        return fail(err, err_size, "mesh: order %d is not megatron or picotron", (int)order);
    const char *names[] = {"dp", "tp", "pp"};
    const int sizes[] = {dp, tp, pp};
    for (int i = 0; i < 3; i++) {
        if (sizes[i] < 1)
            return fail(err, err_size,
                        "mesh: %s = %d is not allowed: each of dp, tp, pp must be at least 1",
                        names[i], sizes[i]);
        if (sizes[i] > PL_MAX_RANKS)
            return fail(err, err_size,
                        "mesh: %s = %d is more ranks than the %d paralab runs (PL_MAX_RANKS)",
                        names[i], sizes[i], PL_MAX_RANKS);
    }
    if (world_size < 1)
        return fail(err, err_size, "mesh: a world of %d ranks is not allowed: it needs at least 1",
                    world_size);
    if (world_size > PL_MAX_RANKS)
        return fail(err, err_size,
                    "mesh: a world of %d ranks is more than the %d paralab runs (PL_MAX_RANKS)",
                    world_size, PL_MAX_RANKS);
    long product = (long)dp * tp * pp; /* each <= 64: no overflow */
    if (product != world_size)
        return fail(err, err_size,
                    "mesh: dp x tp x pp = %d x %d x %d = %ld ranks, but the world has %d: the "
                    "product must equal the world size",
                    dp, tp, pp, product, world_size);
    m->dp = dp;
    m->tp = tp;
    m->pp = pp;
    m->size = world_size;
    m->order = order;
    return 0;
}

int pl_mesh_axis_size(const pl_mesh *m, pl_mesh_axis a)
{
    switch (a) {
    case PL_MESH_TP:
        return m->tp;
    case PL_MESH_DP:
        return m->dp;
    case PL_MESH_PP:
        return m->pp;
    default:
        return -1;
    }
}

/* megatron: rank = tp_rank + tp * (dp_rank + dp * pp_rank)
 * picotron: rank = tp_rank + tp * (pp_rank + pp * dp_rank) */
int pl_mesh_coords(const pl_mesh *m, int rank, pl_mesh_coord *c)
{
    if (m->size < 1 || rank < 0 || rank >= m->size) return -1;
    c->tp = rank % m->tp;
    if (m->order == PL_MESH_PICOTRON) {
        c->pp = rank / m->tp % m->pp;
        c->dp = rank / (m->tp * m->pp);
    } else {
        c->dp = rank / m->tp % m->dp;
        c->pp = rank / (m->tp * m->dp);
    }
    return 0;
}

int pl_mesh_rank(const pl_mesh *m, pl_mesh_coord c)
{
    if (m->size < 1 || c.tp < 0 || c.tp >= m->tp || c.dp < 0 || c.dp >= m->dp || c.pp < 0 ||
        c.pp >= m->pp)
        return -1;
    if (m->order == PL_MESH_PICOTRON) return c.tp + m->tp * (c.pp + m->pp * c.dp);
    return c.tp + m->tp * (c.dp + m->dp * c.pp);
}

/* c's coordinate on axis a (where to read or write it). */
static int *axis_coord(pl_mesh_coord *c, pl_mesh_axis a)
{
    return a == PL_MESH_TP ? &c->tp : a == PL_MESH_DP ? &c->dp : &c->pp;
}

int pl_mesh_group(const pl_mesh *m, pl_mesh_axis a, int rank, int *ranks)
{
    pl_mesh_coord c;
    int n = pl_mesh_axis_size(m, a);
    if (n < 1 || pl_mesh_coords(m, rank, &c)) return -1;
    for (int i = 0; i < n; i++) {
        *axis_coord(&c, a) = i;
        ranks[i] = pl_mesh_rank(m, c);
    }
    return n;
}

static int pp_peer(const pl_mesh *m, int rank, int step)
{
    pl_mesh_coord c;
    if (pl_mesh_coords(m, rank, &c)) return -1;
    c.pp += step;
    return pl_mesh_rank(m, c); /* -1 past either end */
}

int pl_mesh_pp_prev(const pl_mesh *m, int rank) { return pp_peer(m, rank, -1); }
int pl_mesh_pp_next(const pl_mesh *m, int rank) { return pp_peer(m, rank, +1); }

void pl_mesh_coord_str(pl_mesh_coord c, char *buf, size_t cap)
{
    snprintf(buf, cap, "dp %d, pp %d, tp %d", c.dp, c.pp, c.tp);
}

/* The split's color: which group of axis a the rank is in, numbered by the
 * other two coordinates (the slower one outer). Its key: the coordinate on a. */
static int group_color(const pl_mesh_coord *c, const pl_mesh *m, pl_mesh_axis a)
{
    switch (a) {
    case PL_MESH_TP:
        return c->dp + m->dp * c->pp;
    case PL_MESH_DP:
        return c->tp + m->tp * c->pp;
    default:
        return c->tp + m->tp * c->dp;
    }
}

pl_comm_result pl_mesh_split(const pl_mesh *m, pl_comm *world, pl_mesh_groups *g, char *err,
                             size_t err_size)
{
    memset(g, 0, sizeof *g);
    if (err && err_size) err[0] = '\0';
    int rank = pl_comm_rank(world), size = pl_comm_size(world);
    pl_mesh_coord c;
    if (size != m->size || pl_mesh_coords(m, rank, &c)) {
        fail(err, err_size,
             "mesh_split: the communicator has %d ranks, the mesh (dp x tp x pp = %d x %d x %d) "
             "%d: they must be equal",
             size, m->dp, m->tp, m->pp, m->size);
        return PL_COMM_INVALID_ARGUMENT;
    }
    pl_comm **out[] = {&g->tp, &g->dp, &g->pp};
    for (int a = 0; a < PL_MESH_NUM_AXES; a++) {
        int color = group_color(&c, m, (pl_mesh_axis)a), key = *axis_coord(&c, (pl_mesh_axis)a);
        pl_comm_result r = pl_comm_split(world, color, key, out[a]);
        if (r != PL_COMM_OK) {
            fail(err, err_size, "mesh_split: the %s groups: %s", pl_mesh_axis_name((pl_mesh_axis)a),
                 pl_comm_last_error(world));
            pl_mesh_groups_free(g);
            memset(g, 0, sizeof *g);
            return r;
        }
        static const pl_group tag[] = {PL_GROUP_TP, PL_GROUP_DP, PL_GROUP_PP};
        if (*out[a]) pl_comm_set_group(*out[a], tag[a]);
    }
    return PL_COMM_OK;
}

pl_comm_result pl_mesh_groups_free(pl_mesh_groups *g)
{
    pl_comm_result first = PL_COMM_OK;
    pl_comm **c[] = {&g->tp, &g->dp, &g->pp};
    for (int a = 0; a < PL_MESH_NUM_AXES; a++) {
        if (!*c[a]) continue;
        pl_comm_result r = pl_comm_free(*c[a]);
        if (r != PL_COMM_OK && first == PL_COMM_OK) first = r;
        *c[a] = NULL;
    }
    return first;
}
