/*
 * mpicheck — the MPI engine across processes (tests/mpi.sh runs it under
 * scripts/mpirun.sh; built by `make mpi` into build/sim-mpi/bin).
 *
 *   mpicheck [--ranks-per-process T] [--comm-timeout S] [--chunk-bytes B]
 *            [ok|mesh|hold|mismatch|deadlock]
 *
 * ok: every collective, point to point in a group, a split into two groups
 * (key reversing the order) and its all-reduce, each result checked element
 * by element against its closed form, and a row of host data per rank
 * shared by pl_dist_allgather_host (host_allgather); process 0 prints one
 * line. mesh (8 ranks): Lab 10's TP, DP and PP groups (rank_mesh), and the
 * rows again. hold: rank 0 held
 * (pl_comm_hold) for 3 s, past the timeout: the others wait. mismatch:
 * rank 1 all-reduces 3 elements where the others give 4: every rank must get
 * PL_COMM_MISMATCH. deadlock: rank 0 receives from the last rank, which never
 * sends (the others meet at a barrier): the timeout reports it and stops
 * every process. A failing rank's message goes to stderr; the exit status
 * is 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "paralab/comm.h"
#include "paralab/dist.h"
#include "paralab/mesh.h"
#include "paralab/world.h"

enum { C = 4 };
static const char *scenario = "ok";

#define FAILR(...)                                                                                 \
    do {                                                                                           \
        snprintf(r->error, sizeof r->error, __VA_ARGS__);                                          \
        return 1;                                                                                  \
    } while (0)
#define COMM(call)                                                                                 \
    do {                                                                                           \
        if ((call) != PL_COMM_OK) FAILR("%s: %s", #call, pl_comm_last_error(r->comm));             \
    } while (0)

static int put(int *d, const int *h, size_t n)
{
    return cudaMemcpy(d, h, n * sizeof *h, cudaMemcpyHostToDevice) != cudaSuccess;
}
static int get(int *h, const int *d, size_t n)
{
    return cudaMemcpy(h, d, n * sizeof *h, cudaMemcpyDeviceToHost) != cudaSuccess;
}

/* pl_dist_allgather_host: a row of host data per rank, written by its rank
 * in its process, in every process after the call: two rounds, so that the
 * second must bring new rows, not find the first's. */
static int host_rows[64][2];
static int host_allgather(pl_rank *r)
{
    int me = r->rank, n = r->size;
    for (int round = 0; round < 2; round++) {
        host_rows[me][0] = me * 10 + round;
        host_rows[me][1] = -me - 100 * round;
        COMM(pl_comm_barrier(r->comm)); /* this process's rows written */
        COMM(pl_dist_allgather_host(r->comm, host_rows, sizeof host_rows[0], sizeof host_rows[0]));
        for (int q = 0; q < n; q++)
            if (host_rows[q][0] != q * 10 + round || host_rows[q][1] != -q - 100 * round)
                FAILR("pl_dist_allgather_host, round %d: rank %d's row is {%d, %d}, not {%d, %d}",
                      round + 1, q, host_rows[q][0], host_rows[q][1], q * 10 + round,
                      -q - 100 * round);
        COMM(pl_comm_barrier(r->comm)); /* read before the next round writes */
    }
    return 0;
}

/* every element of got against want, or a message naming the first wrong */
static int expect(pl_rank *r, const char *what, const int *got, const int *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) FAILR("%s: element %zu is %d, not %d", what, i, got[i], want[i]);
    return 0;
}

static int rank_ok(pl_rank *r)
{
    int me = r->rank, n = r->size;
    int *s = NULL, *d = NULL, h[64 * C], w[64 * C];
    if (cudaMalloc((void **)&s, 64 * C * sizeof(int)) ||
        cudaMalloc((void **)&d, 64 * C * sizeof(int)))
        FAILR("cudaMalloc");
    cudaStream_t st = r->stream;
    /* all-reduce (sum) */
    for (int i = 0; i < C; i++) h[i] = me + 1 + i;
    if (put(s, h, C)) FAILR("copy");
    COMM(pl_all_reduce(r->comm, s, d, C, PL_INT32, PL_SUM, st));
    cudaStreamSynchronize(st);
    for (int i = 0; i < C; i++) w[i] = n * (n + 1) / 2 + n * i;
    if (get(h, d, C) || expect(r, "all_reduce", h, w, C)) return 1;
    /* broadcast from the last rank */
    for (int i = 0; i < C; i++) h[i] = me == n - 1 ? 1000 + i : -1;
    if (put(d, h, C)) FAILR("copy");
    COMM(pl_broadcast(r->comm, d, d, C, PL_INT32, n - 1, st));
    cudaStreamSynchronize(st);
    for (int i = 0; i < C; i++) w[i] = 1000 + i;
    if (get(h, d, C) || expect(r, "broadcast", h, w, C)) return 1;
    /* reduce (max) to rank 1 % n */
    int root = 1 % n;
    for (int i = 0; i < C; i++) h[i] = me * 10 + i;
    if (put(s, h, C)) FAILR("copy");
    COMM(pl_reduce(r->comm, s, d, C, PL_INT32, PL_MAX, root, st));
    cudaStreamSynchronize(st);
    for (int i = 0; i < C; i++) w[i] = (n - 1) * 10 + i;
    if (me == root && (get(h, d, C) || expect(r, "reduce", h, w, C))) return 1;
    /* all-gather */
    for (int i = 0; i < C; i++) h[i] = me * 100 + i;
    if (put(s, h, C)) FAILR("copy");
    COMM(pl_all_gather(r->comm, s, d, C, PL_INT32, st));
    cudaStreamSynchronize(st);
    for (int q = 0; q < n; q++)
        for (int i = 0; i < C; i++) w[q * C + i] = q * 100 + i;
    if (get(h, d, (size_t)n * C) || expect(r, "all_gather", h, w, (size_t)n * C)) return 1;
    /* reduce-scatter (sum) */
    for (int j = 0; j < n * C; j++) h[j] = me + j;
    if (put(s, h, (size_t)n * C)) FAILR("copy");
    COMM(pl_reduce_scatter(r->comm, s, d, C, PL_INT32, PL_SUM, st));
    cudaStreamSynchronize(st);
    for (int i = 0; i < C; i++) w[i] = n * (n - 1) / 2 + n * (me * C + i);
    if (get(h, d, C) || expect(r, "reduce_scatter", h, w, C)) return 1;
    /* all-to-all */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < C; i++) h[j * C + i] = me * 100 + j * 10 + i;
    if (put(s, h, (size_t)n * C)) FAILR("copy");
    COMM(pl_all_to_all(r->comm, s, d, C, PL_INT32, st));
    cudaStreamSynchronize(st);
    for (int q = 0; q < n; q++)
        for (int i = 0; i < C; i++) w[q * C + i] = q * 100 + me * 10 + i;
    if (get(h, d, (size_t)n * C) || expect(r, "all_to_all", h, w, (size_t)n * C)) return 1;
    /* a ring of sends and receives in one group */
    if (n > 1) {
        for (int i = 0; i < C; i++) h[i] = me * 7 + i;
        if (put(s, h, C)) FAILR("copy");
        COMM(pl_group_start());
        COMM(pl_send(r->comm, s, C, PL_INT32, (me + 1) % n, st));
        COMM(pl_recv(r->comm, d, C, PL_INT32, (me + n - 1) % n, st));
        COMM(pl_group_end());
        cudaStreamSynchronize(st);
        for (int i = 0; i < C; i++) w[i] = ((me + n - 1) % n) * 7 + i;
        if (get(h, d, C) || expect(r, "send/recv ring", h, w, C)) return 1;
    }
    /* a split: even and odd ranks, the key reversing the order */
    pl_comm *g = NULL;
    COMM(pl_comm_split(r->comm, me % 2, -me, &g));
    int gn = (n - me % 2 + 1) / 2, want_rank = 0;
    for (int q = me + 2; q < n; q += 2) want_rank++;
    if (!g || pl_comm_size(g) != gn || pl_comm_rank(g) != want_rank)
        FAILR("split: size %d rank %d, not %d and %d", g ? pl_comm_size(g) : -1,
              g ? pl_comm_rank(g) : -1, gn, want_rank);
    h[0] = me;
    if (put(s, h, 1)) FAILR("copy");
    if (pl_all_reduce(g, s, d, 1, PL_INT32, PL_SUM, st))
        FAILR("group all_reduce: %s", pl_comm_last_error(g));
    cudaStreamSynchronize(st);
    w[0] = 0;
    for (int q = me % 2; q < n; q += 2) w[0] += q;
    if (get(h, d, 1) || expect(r, "the group's all_reduce", h, w, 1)) return 1;
    if (pl_comm_world_rank(g, 0) != (n - 1 - ((n - 1 - me % 2) % 2)))
        FAILR("split: member 0 is world rank %d", pl_comm_world_rank(g, 0));
    if (pl_comm_free(g)) FAILR("pl_comm_free: %s", pl_comm_last_error(g));
    COMM(pl_comm_barrier(r->comm));
    /* the world ledger counts the group's calls too */
    pl_ledger l = pl_comm_ledger(r->comm);
    if (l.calls[PL_CALL_ALL_REDUCE] != 2 || l.calls[PL_CALL_SPLIT] != 1 ||
        l.calls[PL_CALL_BARRIER] != 1)
        FAILR("ledger: %llu all-reduces, %llu splits, %llu barriers (not 2, 1, 1)",
              (unsigned long long)l.calls[PL_CALL_ALL_REDUCE],
              (unsigned long long)l.calls[PL_CALL_SPLIT],
              (unsigned long long)l.calls[PL_CALL_BARRIER]);
    cudaFree(s);
    cudaFree(d);
    return host_allgather(r);
}

/* Lab 10's groups across processes: the mesh dp 2 x tp 2 x pp 2 split into
 * its TP, DP and PP groups (pl_mesh_split), an all-reduce of the world
 * ranks in each against the mesh's own list of its members, and an
 * activation down the PP group (send and receive). */
static int rank_mesh(pl_rank *r)
{
    int me = r->rank, *s = NULL, *d = NULL, h[8];
    pl_mesh m;
    char err[512];
    if (pl_mesh_init(&m, r->size, 2, 2, 2, err, sizeof err)) FAILR("%s", err);
    pl_mesh_groups g;
    if (pl_mesh_split(&m, r->comm, &g, err, sizeof err)) FAILR("pl_mesh_split: %s", err);
    if (cudaMalloc((void **)&s, 8 * sizeof(int)) || cudaMalloc((void **)&d, 8 * sizeof(int)))
        FAILR("cudaMalloc");
    pl_comm *gs[3] = {g.tp, g.dp, g.pp};
    pl_mesh_axis axes[3] = {PL_MESH_TP, PL_MESH_DP, PL_MESH_PP};
    const char *names[3] = {"TP", "DP", "PP"};
    for (int a = 0; a < 3; a++) {
        int members[64], k = pl_mesh_group(&m, axes[a], me, members), want = 0;
        for (int i = 0; i < k; i++) {
            want += members[i];
            if (pl_comm_world_rank(gs[a], i) != members[i])
                FAILR("%s group: member %d is world rank %d, not %d", names[a], i,
                      pl_comm_world_rank(gs[a], i), members[i]);
        }
        h[0] = me;
        if (put(s, h, 1)) FAILR("copy");
        if (pl_all_reduce(gs[a], s, d, 1, PL_INT32, PL_SUM, r->stream))
            FAILR("%s all_reduce: %s", names[a], pl_comm_last_error(gs[a]));
        cudaStreamSynchronize(r->stream);
        if (get(h, d, 1) || expect(r, names[a], h, &want, 1)) return 1;
    }
    /* stage 0 sends its rank to stage 1 on the PP group */
    int prev = pl_mesh_pp_prev(&m, me), next = pl_mesh_pp_next(&m, me);
    h[0] = me * 3;
    if (put(s, h, 1)) FAILR("copy");
    if (next >= 0 && pl_send(g.pp, s, 1, PL_INT32, 1, r->stream))
        FAILR("PP send: %s", pl_comm_last_error(g.pp));
    if (prev >= 0) {
        if (pl_recv(g.pp, d, 1, PL_INT32, 0, r->stream))
            FAILR("PP recv: %s", pl_comm_last_error(g.pp));
        cudaStreamSynchronize(r->stream);
        int want = prev * 3;
        if (get(h, d, 1) || expect(r, "PP recv", h, &want, 1)) return 1;
    }
    if (pl_mesh_groups_free(&g)) FAILR("pl_mesh_groups_free");
    cudaFree(s);
    cudaFree(d);
    return host_allgather(r);
}

/* A rank held (a paused step) longer than the timeout: the others, in other
 * processes, wait for it at a barrier without timing out. */
static int rank_hold(pl_rank *r)
{
    if (r->rank == 0) {
        pl_comm_hold(r->comm, 1);
        struct timespec ts = {3, 0};
        nanosleep(&ts, NULL);
        pl_comm_hold(r->comm, 0);
    }
    COMM(pl_comm_barrier(r->comm));
    return 0;
}

static int rank_mismatch(pl_rank *r)
{
    int *d = NULL;
    if (cudaMalloc((void **)&d, 8 * sizeof(int))) FAILR("cudaMalloc");
    cudaMemset(d, 0, 8 * sizeof(int));
    pl_comm_result res =
        pl_all_reduce(r->comm, d, d, r->rank == 1 ? 3 : 4, PL_INT32, PL_SUM, r->stream);
    cudaFree(d);
    if (res != PL_COMM_MISMATCH)
        FAILR("expected PL_COMM_MISMATCH, got %s: %s", pl_comm_result_name(res),
              pl_comm_last_error(r->comm));
    FAILR("%s", pl_comm_last_error(r->comm)); /* the diagnosis, to stderr */
}

static int rank_deadlock(pl_rank *r)
{
    int *d = NULL;
    if (cudaMalloc((void **)&d, 8 * sizeof(int))) FAILR("cudaMalloc");
    pl_comm_result res = r->rank == 0 ? pl_recv(r->comm, d, 4, PL_INT32, r->size - 1, r->stream)
                                      : pl_comm_barrier(r->comm);
    cudaFree(d);
    FAILR("%s: %s", pl_comm_result_name(res), pl_comm_last_error(r->comm));
}

int main(int argc, char **argv)
{
    int T = 1;
    double timeout = 10;
    size_t chunk = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ranks-per-process") && i + 1 < argc)
            T = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--chunk-bytes") && i + 1 < argc)
            chunk = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--comm-timeout") && i + 1 < argc)
            timeout = atof(argv[++i]);
        else
            scenario = argv[i];
    }
    char err[2048];
    if (pl_dist_init(err, sizeof err)) {
        fprintf(stderr, "mpicheck: %s\n", err);
        return 2;
    }
    int P = pl_dist_procs();
    pl_world_config cfg = {.n = P * T,
                           .comm_timeout_s = timeout,
                           .comm = PL_COMM_LOCAL,
                           .distributed = 1,
                           .ranks_per_process = T,
                           .comm_chunk_bytes = chunk};
    pl_rank_fn fn = !strcmp(scenario, "hold")       ? rank_hold
                    : !strcmp(scenario, "mesh")     ? rank_mesh
                    : !strcmp(scenario, "mismatch") ? rank_mismatch
                    : !strcmp(scenario, "deadlock") ? rank_deadlock
                                                    : rank_ok;
    if (pl_world_run_config(&cfg, fn, NULL, err, sizeof err)) {
        fprintf(stderr, "mpicheck (process %d): %s\n", pl_dist_proc(), err);
        return 1;
    }
    printf("mpicheck: every check passed on %d ranks (%d process%s x %d)\n", P * T, P,
           P == 1 ? "" : "es", T);
    return 0;
}
