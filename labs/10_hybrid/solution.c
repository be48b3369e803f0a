/*
 * Lab 10 — the reference solution. Read it after trying exercise.c.
 *
 * The mesh is a mixed-radix number: tp the fastest digit (radix t), then
 * dp and pp in Megatron-LM's order, pp and dp in picotron's. Reading the
 * digits off is a division and a remainder per axis. A group along an axis
 * is the ranks whose other two digits agree: those two digits are its
 * color, and the rank's own digit on the axis its key, so its rank in the
 * group is its coordinate.
 *
 * The DP reduction must wait for the last gradient to be added: the last
 * backward (or W) of the stage's list. Megatron-LM turns its gradient sync
 * on for the last micro-batch's backward (schedules.py), which every stage
 * runs, so the last stage, which has no warm-up, reduces too, and first:
 * its backwards end before the others'.
 */
#include "10_hybrid/lab10.h"

static int coords(const pl_mesh *m, int rank, pl_mesh_coord *c)
{
    if (rank < 0 || rank >= m->size) return -1;
    c->tp = rank % m->tp;
    int rest = rank / m->tp;
    if (m->order == PL_MESH_MEGATRON) { /* rank = tp + t (dp + N pp) */
        c->dp = rest % m->dp;
        c->pp = rest / m->dp;
    } else { /* picotron: rank = tp + t (pp + p dp) */
        c->pp = rest % m->pp;
        c->dp = rest / m->pp;
    }
    return 0;
}

static int make_groups(pl_comm *world, const pl_mesh *m, pl_mesh_groups *g)
{
    pl_mesh_coord c;
    int rc = coords(m, pl_comm_rank(world), &c);
    if (rc) return rc;
    /* color: the other two coordinates; key: the one on the axis */
    if ((rc = pl_comm_split(world, c.dp + m->dp * c.pp, c.tp, &g->tp))) return rc;
    if ((rc = pl_comm_split(world, c.tp + m->tp * c.pp, c.dp, &g->dp))) return rc;
    if ((rc = pl_comm_split(world, c.tp + m->tp * c.dp, c.pp, &g->pp))) return rc;
    return 0;
}

static int dp_after(const pl_pp_schedule *s, int stage)
{
    if (stage < 0 || stage >= s->stages) return -1;
    for (int i = s->n[stage] - 1; i >= 0; i--)
        if (s->ops[stage][i].kind == PL_PP_BW || s->ops[stage][i].kind == PL_PP_W) return i;
    return -1;
}

const lab10_impl lab10_solution = {coords, make_groups, dp_after};
