/*
 * hybrid_bench.c — paralab-bench hybrid: one optimizer step of the block
 * model trained with 3D parallelism (paralab/hybrid.h: h = 256, f = 4h,
 * L = 8 blocks, a global batch of 64, m = 8 micro-batches per replica,
 * 1F1B, AdamW) for every factorisation (dp, tp, pp) of 8 ranks that
 * pl_hybrid_factorisations accepts, on 8 simulated H100s (the H100-SXM
 * preset, whatever SIMT_GPU says) in two machines:
 *   - one node of 8 (the preset's gpus_per_node): NVLink between all;
 *   - two nodes of 4 (pl_options.gpus_per_node = 4: devices 0-3 and 4-7):
 *     NVLink inside a node, the network (inter_node_bw, inter_node_latency)
 *     between them.
 * Rank r runs on device r, node r / gpus_per_node; Megatron's order puts tp
 * fastest, so a TP group of 4 or fewer stays inside a node of 4 and one of
 * 8 spans both. For each run, all measured in it on the modeled clock:
 *   - the step: every rank starts at the same modeled instant (the latest
 *     of their streams after a warm-up step), the step ends when the last
 *     rank's stream finishes its AdamW; the ratio to the best of its machine;
 *   - the bubble: pl_pp_measure's of_total over each PP group (the stages'
 *     idle time over p x the pipeline's makespan), the mean over the groups;
 *   - the bytes each rank sent per step through its TP, PP and DP groups
 *     (pl_comm_ledger_own of h.groups.tp/pp/dp around pl_hybrid_step), the
 *     mean over the ranks, and of those the bytes that crossed the node
 *     boundary (pl_comm_link_bytes between ranks on different nodes, each
 *     link given to the one axis its two ranks differ on); the two counts
 *     are checked against each other;
 *   - the collectives per step on each group (rank 0's ledger).
 * Then a verdict computed from those numbers. The runtime reads the node
 * size when it starts, so each machine runs in its own child process
 * (fork before any CUDA call), which hands its figures back through a pipe.
 * The data is random: the times do not depend on it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "bench.h"
#include "paralab/clock.h"
#include "paralab/device.h"
#include "paralab/hybrid.h"
#include "paralab/options.h"
#include "paralab/world.h"

enum { N = 8, HIDDEN = 64, LAYERS = 8, BATCH = 64, M = 8, MAXF = 16 };
enum { AX_TP, AX_PP, AX_DP, AXES };
static const char *const axis_name[AXES] = {"TP", "PP", "DP"};

/* One factorisation on one machine: what the child hands back. */
typedef struct {
    int dp, tp, pp;
    int ok;
    char error[256];
    double step;             /* modeled seconds */
    double bubble;           /* of_total, the mean over the PP groups */
    double sent[AXES];       /* bytes per rank per step, the mean over the ranks */
    double across[AXES];     /* of those, bytes per rank that crossed nodes */
    double other;            /* link bytes between ranks of no common group (none) */
    unsigned calls[AXES];    /* rank 0's: TP and DP collectives, PP sends */
    double kernels, compute; /* per rank: kernels run in the step, their modeled seconds */
    double wall;             /* host seconds for the warm-up and the step */
} hyb_result;

typedef struct {
    int g; /* gpus per node */
    double nvlink_bw, nvlink_lat, net_bw, net_lat, launch;
    int count;
    hyb_result r[MAXF];
    char error[256]; /* the machine could not be set up */
} hyb_machine;

/* What the ranks of one run share. */
typedef struct {
    pl_hybrid_config cfg;
    const float *x; /* [BATCH, inputs] */
    const int *y;   /* [BATCH] */
    double t0[N], end[N], bubble[N];
    pl_mesh_coord coord[N];
    uint64_t sent[N][AXES];
    unsigned calls[AXES];
    uint64_t link0[N][N], link1[N][N];
    long kernels[N];
    double compute[N];
    double start; /* the aligned start */
} hyb_run;

/* The op hook of a rank's thread: its kernels and their modeled time. */
typedef struct {
    long kernels;
    double seconds;
} kernel_count;
static void count_kernel(const pl_device_op *op, void *user)
{
    kernel_count *k = user;
    if (op->kind != PL_OP_KERNEL) return;
    k->kernels++;
    k->seconds += op->modeled_end - op->modeled_start;
}

static void snapshot(pl_comm *world, uint64_t (*link)[N])
{
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++) link[a][b] = pl_comm_link_bytes(world, a, b);
}

#define RUN_CK(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            snprintf(r->error, sizeof r->error, __VA_ARGS__);                                      \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

static int rank_fn(pl_rank *r)
{
    hyb_run *u = r->arg;
    pl_hybrid h;
    pl_pp_schedule s;
    int have_s = 0, rc = 1, me = r->rank;
    float *X = NULL;
    int *y = NULL;
    char err[1024];
    if (pl_hybrid_create(&h, &u->cfg, r->comm, NULL, 7, r->stream, r->error, sizeof r->error))
        return 1;
    u->coord[me] = h.coord;
    RUN_CK(!pl_pp_build(&s, PL_PP_1F1B, u->cfg.pp, M, 1, err, sizeof err), "%s", err);
    have_s = 1;
    int rows = h.rows, row0 = h.coord.dp * rows, inputs = u->cfg.model.inputs;
    RUN_CK(!cudaMalloc((void **)&X, (size_t)rows * inputs * sizeof(float)) &&
               !cudaMalloc((void **)&y, (size_t)rows * sizeof(int)),
           "cudaMalloc");
    RUN_CK(!cudaMemcpy(X, u->x + (size_t)row0 * inputs, (size_t)rows * inputs * sizeof(float),
                       cudaMemcpyHostToDevice) &&
               !cudaMemcpy(y, u->y + row0, (size_t)rows * sizeof(int), cudaMemcpyHostToDevice),
           "cudaMemcpy");
    int after = pl_hybrid_dp_after(&s, h.coord.pp);
    /* the warm-up step: the engines' buffers, the optimizer's state */
    RUN_CK(!pl_hybrid_step(&h, &s, after, X, y, NULL) && !pl_hybrid_adamw(&h, 1e-3f), "%.900s",
           h.error);
    RUN_CK(!cudaStreamSynchronize(r->stream), "cudaStreamSynchronize");
    /* the measured step, from one modeled instant on every rank */
    u->t0[me] = pl_device_stream_now(r->stream);
    RUN_CK(!pl_comm_barrier(r->comm), "barrier");
    if (me == 0) {
        snapshot(r->comm, u->link0);
        u->start = 0;
        for (int q = 0; q < N; q++)
            if (u->t0[q] > u->start) u->start = u->t0[q];
    }
    RUN_CK(!pl_comm_barrier(r->comm), "barrier");
    pl_device_start_clock(u->start);
    pl_comm *g[AXES] = {h.groups.tp, h.groups.pp, h.groups.dp};
    pl_ledger before[AXES], now[AXES];
    for (int a = 0; a < AXES; a++) before[a] = pl_comm_ledger_own(g[a]);
    kernel_count kc = {0, 0};
    pl_device_set_op_hook(count_kernel, &kc);
    RUN_CK(!pl_hybrid_step(&h, &s, after, X, y, NULL), "%.900s", h.error);
    for (int a = 0; a < AXES; a++) {
        now[a] = pl_comm_ledger_own(g[a]);
        u->sent[me][a] = now[a].bytes_sent - before[a].bytes_sent;
    }
    if (me == 0) {
        unsigned c[AXES] = {0};
        for (int a = 0; a < AXES; a++)
            for (int k = 0; k < PL_NUM_CALLS; k++)
                if (k != PL_CALL_BARRIER && k != PL_CALL_RECV && k != PL_CALL_SPLIT)
                    c[a] += (unsigned)(now[a].calls[k] - before[a].calls[k]);
        memcpy(u->calls, c, sizeof c);
    }
    RUN_CK(!pl_hybrid_adamw(&h, 1e-3f), "%.900s", h.error);
    RUN_CK(!cudaStreamSynchronize(r->stream), "cudaStreamSynchronize");
    pl_device_flush_ops();
    pl_device_set_op_hook(NULL, NULL);
    u->kernels[me] = kc.kernels;
    u->compute[me] = kc.seconds;
    u->end[me] = pl_device_stream_now(r->stream);
    RUN_CK(!pl_comm_barrier(r->comm), "barrier");
    if (me == 0) snapshot(r->comm, u->link1);
    RUN_CK(!pl_comm_barrier(r->comm), "barrier");
    pl_pp_timing t;
    RUN_CK(!pl_pp_measure(&h.pp.exec, 0, &t), "%.900s", h.pp.exec.error);
    u->bubble[me] = t.of_total;
    rc = 0;
out:
    pl_device_set_op_hook(NULL, NULL);
    if (have_s) pl_pp_schedule_free(&s);
    cudaStreamSynchronize(r->stream);
    cudaFree(X);
    cudaFree(y);
    pl_hybrid_destroy(&h);
    return rc;
}

/* The one axis ranks a and b differ on (their common group), or -1. */
static int axis_of(pl_mesh_coord a, pl_mesh_coord b)
{
    int d = (a.tp != b.tp) + (a.pp != b.pp) + (a.dp != b.dp);
    if (d != 1) return -1;
    return a.tp != b.tp ? AX_TP : a.pp != b.pp ? AX_PP : AX_DP;
}

static void run_one(const pl_hybrid_config *base, const int f[3], int g, const float *x,
                    const int *y, hyb_result *out)
{
    hyb_run *u = calloc(1, sizeof *u);
    memset(out, 0, sizeof *out);
    out->dp = f[0], out->tp = f[1], out->pp = f[2];
    if (!u) {
        snprintf(out->error, sizeof out->error, "out of host memory");
        return;
    }
    u->cfg = *base;
    u->cfg.dp = f[0], u->cfg.tp = f[1], u->cfg.pp = f[2];
    u->x = x, u->y = y;
    char err[1024];
    double w0 = pl_now();
    if (pl_world_run(N, NULL, 120, rank_fn, u, err, sizeof err)) {
        snprintf(out->error, sizeof out->error, "%.250s", err);
        free(u);
        return;
    }
    out->wall = pl_now() - w0;
    double end = 0, bubble = 0;
    for (int q = 0; q < N; q++) {
        if (u->end[q] > end) end = u->end[q];
        bubble += u->bubble[q] / N; /* each PP group's members hold its figure */
        for (int a = 0; a < AXES; a++) out->sent[a] += (double)u->sent[q][a] / N;
        out->kernels += (double)u->kernels[q] / N;
        out->compute += u->compute[q] / N;
    }
    out->step = end - u->start;
    out->bubble = bubble;
    memcpy(out->calls, u->calls, sizeof out->calls);
    /* the links: by axis, the node boundary; against the ledgers */
    double by_axis[AXES] = {0};
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++) {
            double bytes = (double)(u->link1[a][b] - u->link0[a][b]);
            if (!bytes) continue;
            int ax = axis_of(u->coord[a], u->coord[b]);
            if (ax < 0) {
                out->other += bytes;
                continue;
            }
            by_axis[ax] += bytes / N;
            if (a / g != b / g) out->across[ax] += bytes / N;
        }
    for (int a = 0; a < AXES; a++)
        if (by_axis[a] != out->sent[a]) {
            snprintf(out->error, sizeof out->error,
                     "the links carried %.0f bytes per rank on %s, its ledgers say %.0f",
                     by_axis[a], axis_name[a], out->sent[a]);
            free(u);
            return;
        }
    if (out->other) {
        snprintf(out->error, sizeof out->error, "%.0f bytes went between ranks that share no group",
                 out->other);
        free(u);
        return;
    }
    out->ok = 1;
    free(u);
}

/* In a child process: the runtime with nodes of g, every factorisation. */
static void run_machine(const pl_hybrid_config *base, int (*f)[3], int count, int g, const float *x,
                        const int *y, hyb_machine *m)
{
    memset(m, 0, sizeof *m);
    m->g = g;
    pl_options o;
    pl_options_defaults(&o, N);
    o.hw = "H100-SXM"; /* before the first CUDA call: read when the runtime starts */
    o.gpus_per_node = g;
    char msg[512];
    pl_hw_model hw;
    if (pl_device_apply_options(&o, msg, sizeof msg) || pl_device_model(&hw)) {
        snprintf(m->error, sizeof m->error, "%d ranks, one device each, nodes of %d: %.200s", N, g,
                 msg);
        return;
    }
    if (hw.gpus_per_node != g) {
        snprintf(m->error, sizeof m->error, "asked for nodes of %d, the runtime has %d", g,
                 hw.gpus_per_node);
        return;
    }
    m->nvlink_bw = hw.peer_bw, m->nvlink_lat = hw.peer_latency;
    m->net_bw = hw.inter_node_bw, m->net_lat = hw.inter_node_latency;
    m->launch = hw.launch_latency;
    m->count = count;
    for (int i = 0; i < count; i++) run_one(base, f[i], g, x, y, &m->r[i]);
}

/* Forks the child for nodes of g and reads its figures back. */
static int machine(const pl_hybrid_config *base, int (*f)[3], int count, int g, const float *x,
                   const int *y, hyb_machine *m)
{
    int p[2];
    memset(m, 0, sizeof *m);
    if (pipe(p)) {
        snprintf(m->error, sizeof m->error, "pipe: out of file descriptors");
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(m->error, sizeof m->error, "fork: no child process for nodes of %d", g);
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        hyb_machine *mine = calloc(1, sizeof *mine);
        if (mine) run_machine(base, f, count, g, x, y, mine);
        const char *b = (const char *)mine;
        size_t left = mine ? sizeof *mine : 0;
        while (left) {
            ssize_t w = write(p[1], b, left);
            if (w <= 0) _exit(1);
            b += w, left -= (size_t)w;
        }
        _exit(mine ? 0 : 1);
    }
    close(p[1]);
    char *b = (char *)m;
    size_t got = 0;
    ssize_t n;
    while (got < sizeof *m && (n = read(p[0], b + got, sizeof *m - got)) > 0) got += (size_t)n;
    close(p[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    if (got != sizeof *m || !WIFEXITED(st) || WEXITSTATUS(st)) {
        memset(m, 0, sizeof *m);
        snprintf(m->error, sizeof m->error, "the run with nodes of %d ended early (status %d)", g,
                 st);
        return -1;
    }
    return m->error[0] ? -1 : 0;
}

static int best_of(const hyb_machine *m)
{
    int b = -1;
    for (int i = 0; i < m->count; i++)
        if (m->r[i].ok && (b < 0 || m->r[i].step < m->r[b].step)) b = i;
    return b;
}

/* The run of (dp, tp, pp) on m, or NULL. */
static const hyb_result *find(const hyb_machine *m, int dp, int tp, int pp)
{
    for (int i = 0; i < m->count; i++)
        if (m->r[i].ok && m->r[i].dp == dp && m->r[i].tp == tp && m->r[i].pp == pp) return &m->r[i];
    return NULL;
}

static void table(const hyb_machine *m, const char *title)
{
    int b = best_of(m);
    printf("\n%s\n", title);
    printf("%-10s %8s %6s %6s %8s %8s | %-23s | %-23s | %-11s %6s\n", "", "step", "vs", "bubble",
           "kernels", "kernels", "KiB sent per rank", "of which across nodes", "calls", "wall");
    printf("%-10s %8s %6s %6s %8s %8s | %7s %7s %7s | %7s %7s %7s | %-11s %6s\n", "(dp,tp,pp)",
           "us", "best", "", "/rank", "us/rank", "TP", "PP", "DP", "TP", "PP", "DP", "TP/PP/DP",
           "s");
    for (int i = 0; i < m->count; i++) {
        const hyb_result *r = &m->r[i];
        char name[16], calls[24];
        snprintf(name, sizeof name, "(%d, %d, %d)", r->dp, r->tp, r->pp);
        if (!r->ok) {
            printf("%-10s failed: %s\n", name, r->error);
            continue;
        }
        snprintf(calls, sizeof calls, "%u/%u/%u", r->calls[AX_TP], r->calls[AX_PP],
                 r->calls[AX_DP]);
        printf("%-10s %8.1f %6.2f %5.1f%% %8.0f %8.1f | %7.1f %7.1f %7.1f | %7.1f %7.1f %7.1f | "
               "%-11s %6.1f\n",
               name, r->step * 1e6, b >= 0 ? r->step / m->r[b].step : 0, r->bubble * 100,
               r->kernels, r->compute * 1e6, r->sent[AX_TP] / 1024, r->sent[AX_PP] / 1024,
               r->sent[AX_DP] / 1024, r->across[AX_TP] / 1024, r->across[AX_PP] / 1024,
               r->across[AX_DP] / 1024, calls, r->wall);
    }
}

static double pct(double a, double b) { return b > 0 ? (a / b - 1) * 100 : 0; }

static const char *more_less(double a, double b) { return a > b ? "more" : "less"; }

/* The best run of m with tp <= max_tp (0: any), or NULL. */
static const hyb_result *best_with(const hyb_machine *m, int max_tp, int min_tp)
{
    const hyb_result *b = NULL;
    for (int i = 0; i < m->count; i++) {
        const hyb_result *r = &m->r[i];
        if (r->ok && (!max_tp || r->tp <= max_tp) && r->tp >= min_tp && (!b || r->step < b->step))
            b = r;
    }
    return b;
}

/* The verdict, from the figures alone: which wins on each machine, and the
 * Ultra-Scale Playbook's reasons (TP inside a node; PP's bubble; DP's one
 * all-reduce per step) weighed with this run's numbers. */
static void verdict(const hyb_machine *one, const hyb_machine *two)
{
    double launch = one->launch;
    int b1 = best_of(one), b2 = best_of(two);
    if (b1 < 0 || b2 < 0) return;
    const hyb_result *w[2] = {&one->r[b1], &two->r[b2]};
    const hyb_machine *ms[2] = {one, two};
    static const char *const mname[2] = {"one node of 8", "two nodes of 4"};
    printf("\nverdict (computed from the figures above)\n");
    for (int k = 0; k < 2; k++) {
        const hyb_result *second = NULL;
        for (int i = 0; i < ms[k]->count; i++) {
            const hyb_result *r = &ms[k]->r[i];
            if (r->ok && r != w[k] && (!second || r->step < second->step)) second = r;
        }
        printf("  %s: (%d, %d, %d) wins, %.1f us", mname[k], w[k]->dp, w[k]->tp, w[k]->pp,
               w[k]->step * 1e6);
        if (second)
            printf(", %.0f %% ahead of (%d, %d, %d)", pct(second->step, w[k]->step), second->dp,
                   second->tp, second->pp);
        printf("\n");
    }
    /* what a step costs here: kernels */
    const hyb_result *fewest = NULL, *most = NULL;
    double ksum = 0, tsum = 0;
    for (int i = 0; i < one->count; i++) {
        const hyb_result *r = &one->r[i];
        if (!r->ok) continue;
        if (!fewest || r->kernels < fewest->kernels) fewest = r;
        if (!most || r->kernels > most->kernels) most = r;
        ksum += r->kernels, tsum += r->compute;
    }
    double per = ksum > 0 ? tsum / ksum : 0;
    printf("  a kernel takes %.2f us on average, against a launch latency of %.1f us: %s\n",
           per * 1e6, launch * 1e6,
           per < 2 * launch ? "the kernels are launch-bound (this model's matmuls are too small "
                              "for their FLOPs or bytes to count), so a rank's step is the "
                              "kernels it runs one after another"
                            : "the kernels' work, not their launches, sets a rank's step");
    if (fewest && most)
        printf("    (%d, %d, %d) runs the fewest, %.0f per rank%s; (%d, %d, %d) the most, %.0f: PP "
               "gives each rank 1/p of the blocks, DP leaves every replica all of them (m "
               "micro-batches each), TP adds its collectives' kernels\n",
               fewest->dp, fewest->tp, fewest->pp, fewest->kernels,
               fewest == w[0] ? ", and wins in one node" : "", most->dp, most->tp, most->pp,
               most->kernels);
    /* TP's traffic: the most frequent, heavy or not */
    const hyb_result *t8 = find(one, 1, N, 1), *d8 = find(one, N, 1, 1), *p8 = find(one, 1, 1, N);
    if (t8 && d8)
        printf("  TP is the most frequent traffic: tp 8 runs %u collectives per step (%.1f KiB "
               "per rank), %.0fx dp 8's %u all-reduce (%.1f KiB, %s bytes than TP's)%s\n",
               t8->calls[AX_TP], t8->sent[AX_TP] / 1024,
               d8->calls[AX_DP] ? (double)t8->calls[AX_TP] / d8->calls[AX_DP] : 0, d8->calls[AX_DP],
               d8->sent[AX_DP] / 1024, more_less(d8->sent[AX_DP], t8->sent[AX_TP]), p8 ? "" : "\n");
    if (t8 && d8 && p8)
        printf("    and pp 8's %u sends (%.1f KiB); in one node tp 8's step is %.0f %% longer "
               "than dp 8's and %.0f %% longer than pp 8's\n",
               p8->calls[AX_PP], p8->sent[AX_PP] / 1024, pct(t8->step, d8->step),
               pct(t8->step, p8->step));
    /* across nodes */
    const hyb_result *span = NULL;
    double span_slow = 0, inside_slow = 0;
    const hyb_result *inside = NULL;
    for (int i = 0; i < two->count; i++) {
        const hyb_result *r = &two->r[i], *same = find(one, r->dp, r->tp, r->pp);
        if (!r->ok || !same) continue;
        double slow = pct(r->step, same->step);
        if (r->tp > two->g && (!span || slow > span_slow)) span = r, span_slow = slow;
        if (r->tp <= two->g && (!inside || slow > inside_slow)) inside = r, inside_slow = slow;
    }
    if (span)
        printf("  across nodes TP's all-reduces pay the network (%.0f GB/s and %.1f us a message "
               "against NVLink's %.0f GB/s and %.1f us): (%d, %d, %d), whose TP groups span both "
               "nodes, sends %.1f KiB per rank across them and slows by %.0f %% on two nodes of "
               "4; with TP inside a node (tp <= %d) the worst slow-down is %.1f %% ((%d, %d, "
               "%d): its PP sends or DP all-reduce cross instead, %u a step, against TP's %u "
               "collectives)\n",
               two->net_bw / 1e9, two->net_lat * 1e6, two->nvlink_bw / 1e9, two->nvlink_lat * 1e6,
               span->dp, span->tp, span->pp, span->across[AX_TP] / 1024, span_slow, two->g,
               inside ? inside_slow : 0, inside ? inside->dp : 0, inside ? inside->tp : 0,
               inside ? inside->pp : 0, inside ? inside->calls[AX_PP] + inside->calls[AX_DP] : 0,
               span->calls[AX_TP]);
    const hyb_result *tin = best_with(two, two->g, 2), *tout = best_with(two, 0, two->g + 1);
    if (tin && tout)
        printf("    on two nodes of 4 the best with TP inside a node, (%d, %d, %d), %.1f us, beats "
               "the best with TP across them, (%d, %d, %d), %.1f us, by %.0f %%\n",
               tin->dp, tin->tp, tin->pp, tin->step * 1e6, tout->dp, tout->tp, tout->pp,
               tout->step * 1e6, pct(tout->step, tin->step));
    /* PP's bubble and DP's one all-reduce, for the winners */
    for (int k = 0; k < 2; k++) {
        double fi = 0, ft = 0;
        pl_pp_bubble_formula(PL_PP_1F1B, w[k]->pp, M, 1, &fi, &ft);
        printf("  %s: the winner's pipeline idles %.1f %% of the time (the bubble; 1F1B's "
               "(p - 1) / (m + p - 1) = %.1f %% for p = %d, m = %d)",
               mname[k], w[k]->bubble * 100, ft * 100, w[k]->pp, M);
        if (w[k]->dp > 1)
            printf("; DP adds %u all-reduce%s a step (%.1f KiB per rank, %.1f of them across "
                   "nodes)",
                   w[k]->calls[AX_DP], w[k]->calls[AX_DP] == 1 ? "" : "s", w[k]->sent[AX_DP] / 1024,
                   w[k]->across[AX_DP] / 1024);
        else
            printf("; no DP: one replica");
        printf("\n");
    }
    const hyb_result *d8two = find(two, N, 1, 1);
    if (d8 && d8two)
        printf("  DP's one all-reduce per step across nodes: dp 8 slows by %.1f %% on two nodes of "
               "4%s\n",
               pct(d8two->step, d8->step),
               span && pct(d8two->step, d8->step) < span_slow ? ", far less than TP across them"
                                                              : "");
}

int bench_hybrid(int repeat, int scale)
{
    (void)repeat;
    if (!pl_device_caps()->modeled) {
        fprintf(stderr, "paralab-bench: hybrid models the step on simulated GPUs: run "
                        "build/sim's\n");
        return 2;
    }
    int hidden = HIDDEN >> scale;
    if (hidden < 16) hidden = 16;
    pl_hybrid_config base = {.model = pl_blocks_config_make(hidden, LAYERS),
                             .dp = 1,
                             .tp = 1,
                             .pp = 1,
                             .order = PL_MESH_MEGATRON,
                             .chunks = 1,
                             .batch = BATCH,
                             .micro_batches = M,
                             .bucket_floats = 0};
    int f[MAXF][3];
    int count = pl_hybrid_factorisations(&base, N, f, MAXF);
    if (count > MAXF) count = MAXF;
    const pl_blocks_config *c = &base.model;
    float *x = malloc((size_t)BATCH * c->inputs * sizeof *x);
    int *y = malloc(BATCH * sizeof *y);
    hyb_machine *one = calloc(1, sizeof *one), *two = calloc(1, sizeof *two);
    if (!x || !y || !one || !two) {
        fprintf(stderr, "paralab-bench hybrid: out of host memory\n");
        free(x), free(y), free(one), free(two);
        return 1;
    }
    unsigned seed = 12345;
    for (int i = 0; i < BATCH * c->inputs; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)(seed >> 8) / 16777216.0f * 16.0f; /* pixels 0..16, as the digits */
    }
    for (int i = 0; i < BATCH; i++) y[i] = i % c->classes;
    printf("paralab-bench hybrid: the block model (h %d, f %d, %d blocks, %ld parameters), a "
           "global batch of %d, m = %d micro-batches per replica, 1F1B, AdamW, on %d simulated "
           "H100-SXM (modeled clock): one step after a warm-up, for each (dp, tp, pp) of %d "
           "ranks the model takes (Megatron's order: tp fastest; rank r on device r)\n",
           c->hidden, c->ffn, c->layers, pl_blocks_count(c), BATCH, M, N, N);
    double w0 = pl_now();
    int rc1 = machine(&base, f, count, 8, x, y, one);
    int rc2 = machine(&base, f, count, 4, x, y, two);
    double wall = pl_now() - w0;
    int rc = 0;
    if (rc1 || rc2) {
        fprintf(stderr, "paralab-bench hybrid: %s\n", rc1 ? one->error : two->error);
        rc = 1;
    }
    if (!rc1) table(one, "one node of 8 (devices 0-7, NVLink between all)");
    if (!rc2) table(two, "two nodes of 4 (devices 0-3 and 4-7; between them the network)");
    for (int k = 0; k < 2 && !rc; k++)
        for (int i = 0; i < (k ? two : one)->count; i++)
            if (!(k ? two : one)->r[i].ok) rc = 1;
    if (!rc1 && !rc2) verdict(one, two);
    printf("\n  step: from one modeled instant on every rank to the last rank's AdamW; bubble: "
           "the PP group's idle stage time over p x its pipeline (pl_pp_measure, of the total); "
           "kernels: those a rank ran in the step and their modeled time, the mean over the "
           "ranks; "
           "KiB: what each rank sent through the group's communicator in the step (its "
           "ledger), the mean over the ranks; across nodes: the part that went between devices "
           "of different nodes; calls: rank 0's collectives on TP and DP, its sends on PP; "
           "wall: this machine's seconds for the run (set-up, warm-up, step); in all %.1f s\n",
           wall);
    free(x), free(y), free(one), free(two);
    return rc;
}
