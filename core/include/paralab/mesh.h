/*
 * paralab/mesh.h — a device mesh: the ranks of a world laid out as a grid
 * of dp x tp x pp (data-, tensor- and pipeline-parallel degrees), each rank's
 * coordinates on it, the ranks of its TP, PP and DP groups, and the
 * sub-communicators of those groups (core/parallel/mesh.c). Labs 08-11 build
 * their tensor, pipeline, hybrid and sharded runs on it.
 *
 * The convention is Megatron-LM's (megatron/core/parallel_state.py, order
 * "tp-cp-ep-dp-pp" without context and expert parallelism; nanotron and
 * torchtitan agree): TP varies fastest, then DP, and PP is outermost,
 *
 *     rank = tp_rank + tp * (dp_rank + dp * pp_rank)
 *
 * so the ranks of one TP group are adjacent (they share a node and its
 * NVLink: TP's traffic is the heaviest and most frequent). With 8 ranks and
 * dp = tp = pp = 2: TP groups {0,1} {2,3} {4,5} {6,7}; DP groups {0,2} {1,3}
 * {4,6} {5,7}; PP groups {0,4} {1,5} {2,6} {3,7}.
 *
 * picotron's order (picotron/process_group_manager.py: the grid
 * view(dp, pp, cp, tp)) is the other one a reader meets, on request
 * (PL_MESH_PICOTRON): TP still fastest, then PP, and DP outermost,
 *
 *     rank = tp_rank + tp * (pp_rank + pp * dp_rank)
 *
 * so with 8 ranks and 2 x 2 x 2 the TP groups are the same, DP {0,4} {1,5}
 * {2,6} {3,7} and PP {0,2} {1,3} {4,6} {5,7}. Both formulas and these groups
 * are in the project's notes, shared/REFERENCES-PARALLEL.md, "3D
 * parallelism: ranks and groups"; tests/unit/test_mesh.c asserts them.
 *
 * Shapes: a group along an axis has as many ranks as that axis' size; its
 * ranks are listed in the order of their coordinate on the axis (which is
 * also increasing rank order), so a rank's index in its group — and its
 * rank in the group's communicator — is its coordinate on that axis.
 *
 * Errors: pl_mesh_init validates and returns -1 with a message naming the
 * bad value and what is allowed (sizes below 1, more than PL_MAX_RANKS = 64
 * ranks, a product that is not the world size); the queries return -1 for a
 * rank or an axis out of range; pl_mesh_split returns the communicator's
 * error. Nothing here prints.
 */
#ifndef PARALAB_MESH_H
#define PARALAB_MESH_H

#include <stddef.h>

#include "paralab/comm.h"
#include "paralab/world.h" /* PL_MAX_RANKS */

#ifdef __cplusplus
extern "C" {
#endif

/* The axes, fastest first (the order of the rank formula above). */
typedef enum { PL_MESH_TP, PL_MESH_DP, PL_MESH_PP, PL_MESH_NUM_AXES } pl_mesh_axis;
/* "tp", "dp", "pp" ("?" for anything else). */
const char *pl_mesh_axis_name(pl_mesh_axis a);

/* The two rank orders above. */
typedef enum { PL_MESH_MEGATRON, PL_MESH_PICOTRON, PL_MESH_NUM_ORDERS } pl_mesh_order;
/* "megatron", "picotron" ("?" for anything else). */
const char *pl_mesh_order_name(pl_mesh_order o);
/* The order named s: its value, or -1 with "'x' is not a rank order: use
 * megatron (TP fastest, PP outermost) or picotron (TP fastest, DP
 * outermost)" in err. */
int pl_mesh_order_parse(const char *s, char *err, size_t err_size);

typedef struct pl_mesh {
    int dp, tp, pp;      /* the degrees, each >= 1 */
    int size;            /* dp * tp * pp: the world size */
    pl_mesh_order order; /* how a rank's number is made from its coordinates */
} pl_mesh;

/* A rank's place on the mesh: 0 <= tp < mesh.tp, and so on. */
typedef struct pl_mesh_coord {
    int dp, tp, pp;
} pl_mesh_coord;

/* Makes the mesh of a world of world_size ranks. Returns 0, or -1 with *m
 * zeroed and a message in err (err_size bytes, may be 0), e.g.
 *   "mesh: tp = 0 is not allowed: each of dp, tp, pp must be at least 1"
 *   "mesh: a world of 65 ranks is more than the 64 paralab runs (PL_MAX_RANKS)"
 *   "mesh: dp x tp x pp = 2 x 2 x 3 = 12 ranks, but the world has 8: the
 *    product must equal the world size" */
int pl_mesh_init(pl_mesh *m, int world_size, int dp, int tp, int pp, char *err, size_t err_size);
/* The same in either order (pl_mesh_init is PL_MESH_MEGATRON's); an order
 * out of range is refused ("mesh: order 7 is not megatron or picotron"). */
int pl_mesh_init_order(pl_mesh *m, int world_size, int dp, int tp, int pp, pl_mesh_order order,
                       char *err, size_t err_size);

/* The size of an axis (mesh.tp, ...); -1 for an unknown axis. */
int pl_mesh_axis_size(const pl_mesh *m, pl_mesh_axis a);
/* A rank's coordinates: 0, or -1 when rank is outside 0..size-1. */
int pl_mesh_coords(const pl_mesh *m, int rank, pl_mesh_coord *c);
/* The rank at coordinates c; -1 when a coordinate is out of range. */
int pl_mesh_rank(const pl_mesh *m, pl_mesh_coord c);
/* The ranks of `rank`'s group along axis a, in coordinate order, into
 * ranks[0 .. size of a - 1] (at most PL_MAX_RANKS). Returns the group's size,
 * or -1 for a bad rank or axis. */
int pl_mesh_group(const pl_mesh *m, pl_mesh_axis a, int rank, int *ranks);
/* The rank of the previous (next) pipeline stage at the same dp and tp
 * coordinates: where rank's activations come from (go to); -1 on the first
 * (last) stage, or for a bad rank. */
int pl_mesh_pp_prev(const pl_mesh *m, int rank);
int pl_mesh_pp_next(const pl_mesh *m, int rank);
/* "dp 1, pp 0, tp 1": c as the labs print it. */
void pl_mesh_coord_str(pl_mesh_coord c, char *buf, size_t cap);

/* One rank's handles on the communicators of its three groups. */
typedef struct pl_mesh_groups {
    pl_comm *tp, *dp, *pp;
} pl_mesh_groups;

/* Collective over `world` (every rank of it calls it, from its own thread):
 * splits it three times with pl_comm_split, into the TP, DP and PP groups
 * of m, the world's ranks being the mesh's ranks; in each, a rank's rank is
 * its coordinate on that axis, and each is tagged with its axis'
 * pl_group (pl_comm_set_group: its trace events say "tp", "dp", "pp").
 * world's size must be m->size, else
 * PL_COMM_INVALID_ARGUMENT with a message in err. On another failure the
 * split's error is returned, its message (pl_comm_last_error) copied to
 * err, every group already made is freed (if the world is stopping,
 * pl_world_run frees them) and *g is zeroed. */
pl_comm_result pl_mesh_split(const pl_mesh *m, pl_comm *world, pl_mesh_groups *g, char *err,
                             size_t err_size);
/* Frees the three communicators (collective, as pl_comm_free); NULL ones
 * are skipped. Returns the first error. */
pl_comm_result pl_mesh_groups_free(pl_mesh_groups *g);

#ifdef __cplusplus
}
#endif

#endif
