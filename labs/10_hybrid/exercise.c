/*
 * Lab 10 — your exercise: the bookkeeping of 3D parallelism. Delete a
 * PL_TODO() line when you start that function, then run `make check`. See
 * README.md in this folder.
 *
 * The world's dp x tp x pp ranks are laid out on a device mesh (m: m->dp,
 * m->tp, m->pp, m->size = their product, m->order). Each rank has
 * coordinates (dp, pp, tp) and belongs to three groups: its TP group (the
 * ranks at its dp and pp, which share each layer's shards), its DP group
 * (the ranks at its pp and tp: the replicas, which add up their gradients)
 * and its PP group (the ranks at its dp and tp: the stages of one
 * pipeline).
 */
#include "10_hybrid/lab10.h"

/*
 * 1. A rank's coordinates, in either order (m->order). TP varies fastest
 *    in both; then
 *      PL_MESH_MEGATRON (Megatron-LM):  rank = tp + t (dp + N pp)
 *      PL_MESH_PICOTRON (picotron):     rank = tp + t (pp + p dp)
 *    with t = m->tp, N = m->dp, p = m->pp. Invert the formula of the mesh's
 *    order into c->dp, c->pp, c->tp and return 0; a rank outside 0 ..
 *    m->size - 1 returns -1. (Not pl_mesh_coords: that is the reference.)
 */
static int coords(const pl_mesh *m, int rank, pl_mesh_coord *c)
{
    PL_TODO();
    return 0;
}

/*
 * 2. This rank's three groups, each a communicator split from world
 *    (every rank of the world calls this at once):
 *
 *        pl_comm_split(world, color, key, &g->tp)
 *
 *    puts the ranks that pass the same color into one new communicator,
 *    ordered by key. So color names the group (one number per group of
 *    that axis: the rank's other two coordinates) and key is the rank's
 *    coordinate on the axis (its rank in the group). Make g->tp, g->dp and
 *    g->pp in that order, and return 0, or pl_comm_split's non-zero result
 *    when it fails. Use your coords above (pl_comm_rank(world) is this
 *    rank's number); if it returns non-zero, return that. The lab checks
 *    your groups against the mesh before anything trains.
 */
static int make_groups(pl_comm *world, const pl_mesh *m, pl_mesh_groups *g)
{
    PL_TODO();
    return 0;
}

/*
 * 3. When stage `stage`'s DP reduction fires: the index of the op in its
 *    list (s->ops[stage][0 .. s->n[stage] - 1]) after which the gradients
 *    are complete, that is its last op that writes weight gradients: a BW
 *    (the whole backward: kind PL_PP_BW) or, where the schedule splits the
 *    backward (zero-bubble), a W (PL_PP_W). A B (PL_PP_B) writes only the
 *    input's gradient. -1 if the list has none.
 *    Every stage must reduce once per step, including one whose schedule
 *    has no warm-up: in 1F1B the last stage runs F0 BW0 F1 BW1 ..., and its
 *    last backward is the last op of its list.
 */
static int dp_after(const pl_pp_schedule *s, int stage)
{
    PL_TODO();
    return 0;
}

const lab10_impl lab10_exercise = {coords, make_groups, dp_after};
