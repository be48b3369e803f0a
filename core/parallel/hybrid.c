/* hybrid.c — 3D parallelism on the block model: see paralab/hybrid.h. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/device.h"
#include "paralab/hybrid.h"
#include "paralab/nn.h"
#include "paralab/plural.h"

static int fail(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t cap, const char *fmt, ...)
{
    if (err && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- what a configuration may be ---------------------------------------------------------- */

/* The checks of pl_hybrid_check, without the list of factorisations:
 * 0, or -1 with the reason; *degrees set when the degrees are to blame. */
static int check_one(const pl_hybrid_config *c, int world, char *err, size_t cap, int *degrees)
{
    *degrees = 0;
    const char *names[] = {"--dp", "--tp", "--pp"};
    const int d[] = {c->dp, c->tp, c->pp};
    for (int i = 0; i < 3; i++)
        if (d[i] < 1 || d[i] > PL_MAX_RANKS) {
            *degrees = 1;
            return fail(err, cap, "%s %d: each degree must be 1..%d", names[i], d[i], PL_MAX_RANKS);
        }
    if ((unsigned)c->order >= PL_MESH_NUM_ORDERS)
        return fail(err, cap, "the rank order %d is not megatron or picotron", (int)c->order);
    long product = (long)c->dp * c->tp * c->pp;
    if (product != world) {
        *degrees = 1;
        return fail(err, cap,
                    "--dp %d --tp %d --pp %d: dp x tp x pp = %ld ranks, but there are %d devices",
                    c->dp, c->tp, c->pp, product, world);
    }
    if (c->chunks < 1 || c->chunks > PL_PP_MAX_CHUNKS)
        return fail(err, cap, "--chunks %d: a stage holds 1..%d model chunks", c->chunks,
                    PL_PP_MAX_CHUNKS);
    if (c->micro_batches < 1 || c->micro_batches > PL_PP_MAX_MICRO)
        return fail(err, cap, "--micro-batches %d: m must be 1..%d", c->micro_batches,
                    PL_PP_MAX_MICRO);
    /* the degrees TP could have here: at most the ranks there are */
    if (pl_blocks_check(&c->model, c->tp, "--tp", world >= 1 && world < 64 ? world : 64, err,
                        cap)) {
        *degrees = c->model.hidden >= 1 && c->model.layers >= 1 && c->model.hidden <= 4096 &&
                   c->model.layers <= PL_BLOCKS_MAX;
        return -1;
    }
    int first[PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS], count[PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS];
    if (c->pp > PL_PP_MAX_STAGES || c->pp * c->chunks > PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS ||
        pl_pp_split(c->model.layers, c->pp, c->chunks, first, count, NULL, 0)) {
        *degrees = 1;
        return fail(err, cap,
                    "--pp %d: L = %d block%s cannot fill %d stage%s of %d chunk%s (each virtual "
                    "stage needs a block: --layers %d at least)",
                    c->pp, c->model.layers, c->model.layers == 1 ? "" : "s", c->pp,
                    c->pp == 1 ? "" : "s", c->chunks, c->chunks == 1 ? "" : "s", c->pp * c->chunks);
    }
    long per = (long)c->dp * c->micro_batches;
    if (c->batch < 1 || c->batch % per) {
        long lo = c->batch / per * per, hi = lo + per;
        char nearest[96];
        if (lo > 0)
            snprintf(nearest, sizeof nearest, "the nearest that are: %ld and %ld", lo, hi);
        else
            snprintf(nearest, sizeof nearest, "the smallest: %ld", per);
        *degrees = c->dp > 1;
        return fail(err, cap,
                    "--batch %d: the global batch is cut into dp = %d replica%s of m = %d "
                    "micro-batch%s each, so it must be a multiple of dp m = %ld (%s)",
                    c->batch, c->dp, c->dp == 1 ? "" : "s", c->micro_batches,
                    c->micro_batches == 1 ? "" : "es", per, nearest);
    }
    int rows = (int)(c->batch / per);
    if (c->sequence_parallel && rows % c->tp) {
        *degrees = 1;
        return fail(err, cap,
                    "--sequence-parallel: a micro-batch of %d row%s (B / (dp m) = %d / %ld) does "
                    "not split over tp = %d rank%s",
                    rows, pl_s(rows), c->batch, per, c->tp, pl_s(c->tp));
    }
    return 0;
}

int pl_hybrid_factorisations(const pl_hybrid_config *c, int n, int (*out)[3], int max)
{
    int found = 0, degrees;
    for (int dp = n; dp >= 1; dp--) {
        if (n % dp) continue;
        for (int tp = n / dp; tp >= 1; tp--) {
            if ((n / dp) % tp) continue;
            pl_hybrid_config k = *c;
            k.dp = dp;
            k.tp = tp;
            k.pp = n / dp / tp;
            if (check_one(&k, n, NULL, 0, &degrees)) continue;
            if (found < max) {
                out[found][0] = dp;
                out[found][1] = tp;
                out[found][2] = k.pp;
            }
            found++;
        }
    }
    return found;
}

void pl_hybrid_factorisations_str(const pl_hybrid_config *c, int n, char *buf, size_t cap)
{
    int f[PL_MAX_RANKS * PL_MAX_RANKS][3];
    int count = pl_hybrid_factorisations(c, n, f, PL_MAX_RANKS * PL_MAX_RANKS);
    if (!cap) return;
    buf[0] = '\0';
    if (!count) {
        snprintf(buf, cap, "none");
        return;
    }
    size_t len = 0;
    for (int i = 0; i < count; i++) {
        int w = snprintf(buf + len, cap - len, "%s(%d, %d, %d)",
                         i == 0           ? ""
                         : i == count - 1 ? " or "
                                          : ", ",
                         f[i][0], f[i][1], f[i][2]);
        if (w < 0 || (size_t)w >= cap - len) break;
        len += (size_t)w;
    }
}

int pl_hybrid_check(const pl_hybrid_config *c, int world, char *err, size_t cap)
{
    int degrees = 0;
    char why[512];
    if (!check_one(c, world, why, sizeof why, &degrees)) return 0;
    if (degrees && world >= 1 && world <= PL_MAX_RANKS) {
        char list[1024];
        pl_hybrid_factorisations_str(c, world, list, sizeof list);
        return fail(err, cap, "%s; valid (dp, tp, pp) for %d rank%s and this model: %s", why, world,
                    world == 1 ? "" : "s", list);
    }
    return fail(err, cap, "%s", why);
}

/* ---- the groups --------------------------------------------------------------------------- */

static void ranks_str(const int *r, int n, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        int w = snprintf(buf + len, cap - len, "%s%d", i ? ", " : "{", r[i]);
        if (w < 0 || (size_t)w >= cap - len) return;
        len += (size_t)w;
    }
    snprintf(buf + len, cap - len, "}");
}

int pl_hybrid_check_groups(const pl_mesh *m, int rank, const pl_mesh_groups *g, char *err,
                           size_t cap)
{
    static const char *upper[] = {"TP", "DP", "PP"};
    pl_comm *comm[] = {g->tp, g->dp, g->pp};
    pl_mesh_coord c;
    if (pl_mesh_coords(m, rank, &c))
        return fail(err, cap, "rank %d is not on the mesh of %d ranks", rank, m->size);
    char mesh[96];
    snprintf(mesh, sizeof mesh, "the %s mesh (dp %d, tp %d, pp %d)", pl_mesh_order_name(m->order),
             m->dp, m->tp, m->pp);
    for (int a = 0; a < PL_MESH_NUM_AXES; a++) {
        int want[PL_MAX_RANKS], got[PL_MAX_RANKS];
        int n = pl_mesh_group(m, (pl_mesh_axis)a, rank, want);
        char ws[512], gs[512];
        ranks_str(want, n, ws, sizeof ws);
        if (!comm[a])
            return fail(err, cap, "rank %d has no %s group; %s puts it in the %s group %s", rank,
                        upper[a], mesh, upper[a], ws);
        int size = pl_comm_size(comm[a]);
        for (int i = 0; i < size && i < PL_MAX_RANKS; i++) got[i] = pl_comm_world_rank(comm[a], i);
        ranks_str(got, size < PL_MAX_RANKS ? size : PL_MAX_RANKS, gs, sizeof gs);
        int same = size == n;
        for (int i = 0; same && i < n; i++) same = got[i] == want[i];
        if (!same)
            return fail(err, cap, "rank %d's %s group is %s; %s puts rank %d in the %s group %s",
                        rank, upper[a], gs, mesh, rank, upper[a], ws);
    }
    return 0;
}

int pl_hybrid_dp_after(const pl_pp_schedule *s, int stage)
{
    if (!s || stage < 0 || stage >= s->stages) return -1;
    for (int i = s->n[stage] - 1; i >= 0; i--)
        if (s->ops[stage][i].kind == PL_PP_BW || s->ops[stage][i].kind == PL_PP_W) return i;
    return -1;
}

/* ---- a run -------------------------------------------------------------------------------- */

/* The data-parallel reduction: each chunk's gradients all-reduced (summed)
 * over the DP group, in buckets from the end of its buffer (the last
 * layers' first, as their backward ends first: Lab 07). Before it, under
 * sequence parallelism, the replicated gradients summed over the TP group. */
static int reduce(pl_hybrid *h, char *err, size_t cap)
{
    pl_pp_blocks *pp = &h->pp;
    if (h->cfg.sequence_parallel && h->cfg.tp > 1)
        for (int c = 0; c < pp->chunks; c++) {
            pp->tp[c].error[0] = '\0';
            if (pl_blocks_finish_grads(&pp->part[c], &pp->tp[c]))
                return fail(err, cap, "summing the replicated gradients over the TP group: %s",
                            pp->tp[c].error);
        }
    h->dp_fired++;
    h->dp_start = pl_device_stream_now(pp->stream);
    if (h->cfg.dp > 1) {
        size_t bucket = h->cfg.bucket_floats;
        for (int c = pp->chunks - 1; c >= 0; c--) {
            size_t n = (size_t)pp->part[c].lay.nparams, left = n;
            float *g = pp->part[c].grads.data;
            while (left > 0) {
                size_t len = bucket && bucket < left ? bucket : left;
                left -= len;
                if (pl_all_reduce(h->groups.dp, g + left, g + left, len, PL_FLOAT32, PL_SUM,
                                  pp->stream))
                    return fail(err, cap, "the DP all-reduce of the gradients: %s",
                                pl_comm_last_error(h->groups.dp));
                h->dp_buckets++;
            }
        }
    }
    h->dp_end = pl_device_stream_now(pp->stream);
    return 0;
}

static int after_op(pl_pp_exec *ex, int index, pl_pp_op op)
{
    (void)op;
    pl_hybrid *h = ex->after_op_user;
    if (index != h->dp_after) return 0;
    return reduce(h, ex->error, sizeof ex->error);
}

int pl_hybrid_create(pl_hybrid *h, const pl_hybrid_config *c, pl_comm *world,
                     const pl_mesh_groups *groups, unsigned long long seed, cudaStream_t stream,
                     char *err, size_t cap)
{
    memset(h, 0, sizeof *h);
    h->dp_after = -1;
    int n = pl_comm_size(world);
    if (pl_hybrid_check(c, n, err, cap)) return -1;
    h->cfg = *c;
    h->rank = pl_comm_rank(world);
    if (pl_mesh_init_order(&h->mesh, n, c->dp, c->tp, c->pp, c->order, err, cap) ||
        pl_mesh_coords(&h->mesh, h->rank, &h->coord))
        return -1;
    if (groups) {
        if (pl_hybrid_check_groups(&h->mesh, h->rank, groups, err, cap)) return -1;
        h->groups = *groups;
    } else {
        if (pl_mesh_split(&h->mesh, world, &h->groups, err, cap)) return -1;
        h->own_groups = 1;
    }
    pl_comm_set_group(h->groups.tp, PL_GROUP_TP);
    pl_comm_set_group(h->groups.dp, PL_GROUP_DP);
    pl_comm_set_group(h->groups.pp, PL_GROUP_PP);
    h->rows = c->batch / c->dp;
    if (pl_pp_blocks_create_tp(&h->pp, &c->model, h->groups.pp, h->groups.tp, c->sequence_parallel,
                               c->chunks, h->rows, c->micro_batches, seed, stream, err, cap)) {
        if (h->own_groups) pl_mesh_groups_free(&h->groups);
        memset(h, 0, sizeof *h);
        return -1;
    }
    h->pp.loss_batch = c->batch; /* the DP sum of the replicas' gradients is the global mean */
    h->pp.exec.world_rank = h->rank;
    h->pp.exec.after_op = after_op;
    h->pp.exec.after_op_user = h;
    return 0;
}

void pl_hybrid_destroy(pl_hybrid *h)
{
    pl_pp_blocks_destroy(&h->pp);
    if (h->own_groups) pl_mesh_groups_free(&h->groups);
    memset(h, 0, sizeof *h);
}

int pl_hybrid_step(pl_hybrid *h, const pl_pp_schedule *s, int dp_after, const float *X,
                   const int *labels, float *loss_sum)
{
    h->error[0] = '\0';
    h->dp_after = dp_after;
    h->dp_fired = 0;
    h->dp_buckets = 0;
    h->dp_start = h->dp_end = 0;
    if (pl_pp_blocks_step(&h->pp, s, X, labels, loss_sum))
        return fail(h->error, sizeof h->error, "%s", h->pp.error);
    /* a list whose reduction never fired still sums its replicated
     * gradients over the TP group (else the TP shards would drift too) */
    if (!h->dp_fired && h->cfg.sequence_parallel && h->cfg.tp > 1)
        for (int c = 0; c < h->pp.chunks; c++)
            if (pl_blocks_finish_grads(&h->pp.part[c], &h->pp.tp[c]))
                return fail(h->error, sizeof h->error, "%s", h->pp.tp[c].error);
    cudaError_t e = cudaStreamSynchronize(h->pp.stream);
    if (e) return fail(h->error, sizeof h->error, "the step: %s", cudaGetErrorName(e));
    return 0;
}

/* The squares of g[a, b) added into *sq on the device (acc: add to it). */
static cudaError_t squares(float *sq, const float *g, long a, long b, int acc, cudaStream_t s)
{
    if (b <= a) return cudaSuccess;
    return pl_k_matmul(sq, g + a, g + a, 1, 1, (int)(b - a), PL_NN, acc, s);
}

int pl_hybrid_clip_grad_norm(pl_hybrid *h, float max_norm, float *norm)
{
    h->error[0] = '\0';
    pl_pp_blocks *pp = &h->pp;
    int lead = h->coord.tp == 0; /* the replicated tensors: counted by TP rank 0 alone */
    int acc = 0;
    cudaError_t e = cudaMemsetAsync(pp->norm_sq, 0, sizeof(float), pp->stream);
    for (int c = 0; !e && c < pp->chunks; c++) {
        const pl_blocks_layout *l = &pp->part[c].lay;
        const float *g = pp->part[c].grads.data;
        if (l->in_w >= 0 && lead && !e)
            e = squares(pp->norm_sq, g, l->in_w, l->in_end, acc++, pp->stream);
        for (int j = l->part.first; j < l->part.last && !e; j++) {
            const pl_block_offsets *b = &l->block[j];
            if (lead) e = squares(pp->norm_sq, g, b->begin, b->shard, acc++, pp->stream);
            if (!e) e = squares(pp->norm_sq, g, b->shard, b->end, acc++, pp->stream);
        }
        if (l->head_begin >= 0 && !e) {
            if (lead) e = squares(pp->norm_sq, g, l->head_begin, l->head_shard, acc++, pp->stream);
            if (!e) e = squares(pp->norm_sq, g, l->head_shard, l->head_end, acc++, pp->stream);
        }
    }
    if (e) return fail(h->error, sizeof h->error, "the gradient norm: %s", cudaGetErrorName(e));
    pl_comm *over[] = {h->groups.tp, h->groups.pp};
    for (int i = 0; i < 2; i++)
        if (over[i] && pl_comm_size(over[i]) > 1 &&
            pl_all_reduce(over[i], pp->norm_sq, pp->norm_sq, 1, PL_FLOAT32, PL_SUM, pp->stream))
            return fail(h->error, sizeof h->error, "the gradient norm's all-reduce: %s",
                        pl_comm_last_error(over[i]));
    float sq = 0;
    e = cudaMemcpyAsync(&sq, pp->norm_sq, sizeof sq, cudaMemcpyDeviceToHost, pp->stream);
    if (!e) e = cudaStreamSynchronize(pp->stream);
    if (e) return fail(h->error, sizeof h->error, "the gradient norm: %s", cudaGetErrorName(e));
    float n = sqrtf(sq);
    if (norm) *norm = n;
    if (max_norm > 0 && n > max_norm)
        for (int c = 0; c < pp->chunks; c++) {
            e = pl_k_scale(pp->part[c].grads.data, pp->part[c].lay.nparams, max_norm / n,
                           pp->stream);
            if (e) return fail(h->error, sizeof h->error, "clipping: %s", cudaGetErrorName(e));
        }
    return 0;
}

int pl_hybrid_adamw(pl_hybrid *h, float lr)
{
    if (pl_pp_blocks_adamw(&h->pp, lr)) return fail(h->error, sizeof h->error, "%s", h->pp.error);
    return 0;
}

int pl_hybrid_sgd(pl_hybrid *h, float lr)
{
    if (pl_pp_blocks_sgd(&h->pp, lr)) return fail(h->error, sizeof h->error, "%s", h->pp.error);
    return 0;
}

int pl_hybrid_evaluate(pl_hybrid *h, const float *X, const int *labels, float *loss_sum)
{
    if (pl_pp_blocks_evaluate(&h->pp, X, labels, loss_sum))
        return fail(h->error, sizeof h->error, "%s", h->pp.error);
    return 0;
}

int pl_hybrid_unslice(pl_hybrid *h, float *whole, int grads)
{
    for (int c = 0; c < h->pp.chunks; c++) {
        const pl_blocks *m = &h->pp.part[c];
        size_t n = (size_t)m->lay.nparams;
        float *host = malloc(n * sizeof *host);
        if (!host) return fail(h->error, sizeof h->error, "out of host memory");
        cudaError_t e = cudaMemcpyAsync(host, grads ? m->grads.data : m->params.data,
                                        n * sizeof *host, cudaMemcpyDeviceToHost, h->pp.stream);
        if (!e) e = cudaStreamSynchronize(h->pp.stream);
        if (!e) pl_blocks_unslice(&m->lay, host, whole);
        free(host);
        if (e) return fail(h->error, sizeof h->error, "unslicing: %s", cudaGetErrorName(e));
    }
    return 0;
}

/* ---- the formulas ------------------------------------------------------------------------- */

int pl_hybrid_traffic_of(const pl_hybrid_config *c, pl_mesh_coord at, pl_hybrid_traffic *t,
                         char *err, size_t cap)
{
    memset(t, 0, sizeof *t);
    if (pl_hybrid_check(c, c->dp * c->tp * c->pp, err, cap)) return -1;
    if (at.dp < 0 || at.dp >= c->dp || at.tp < 0 || at.tp >= c->tp || at.pp < 0 || at.pp >= c->pp)
        return fail(err, cap, "coordinates (dp %d, pp %d, tp %d) are outside the mesh", at.dp,
                    at.pp, at.tp);
    int p = c->pp, v = c->chunks, m = c->micro_batches, last = p * v - 1, T = c->tp;
    int first[PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS], count[PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS];
    pl_pp_split(c->model.layers, p, v, first, count, NULL, 0);
    unsigned long long h = (unsigned long long)c->model.hidden, inputs = c->model.inputs;
    unsigned long long rows = (unsigned long long)c->batch / c->dp / m;
    unsigned long long local = c->sequence_parallel ? rows / T : rows;
    unsigned long long act = rows * h * 4, vec = rows * 4; /* [rows, h] and [rows] in bytes */
    unsigned long long tm1 = (unsigned long long)T - 1;
    for (int ch = 0; ch < v; ch++) {
        int q = ch * p + at.pp, L = count[q], head = q == last, input = q == 0;
        /* PP: one activation forward and one gradient backward per micro-batch
         * and boundary ([local rows, h]) */
        unsigned sends = (unsigned)m * ((q < last) + (q > 0));
        t->pp_sends += sends;
        t->pp_bytes += (unsigned long long)sends * local * h * 4;
        /* TP (Lab 08's formula, for the pieces this chunk holds), per micro-batch;
         * group totals: an all-reduce of S bytes sends 2 (t - 1) S in all, an
         * all-gather or reduce-scatter of S (t - 1) S */
        if (T > 1) {
            unsigned calls = 0;
            unsigned long long bytes = 0;
            if (head) { /* the loss: max, target logit, sum of exp, predictions */
                calls += 4;
                bytes += 4 * 2 * tm1 * vec;
            }
            if (!c->sequence_parallel) {
                calls += (unsigned)(2 * L + head); /* each block's g and f', the head's f' */
                bytes += (2ull * L + head) * 2 * tm1 * act;
            } else { /* each block's f, g, g', f'; the head's f and f' */
                calls += (unsigned)(4 * L + 2 * head);
                bytes += (4ull * L + 2 * head) * tm1 * act;
            }
            t->tp_calls += calls * (unsigned)m;
            t->tp_bytes += bytes * (unsigned long long)m;
            if (c->sequence_parallel) { /* once per step: the replicated gradients summed */
                t->tp_calls += (unsigned)(L + input + head);
                t->tp_bytes += 2 * tm1 *
                               ((unsigned long long)L * 3 * h * 4 +
                                (input ? (inputs * h + h) * 4 : 0) + (head ? 2 * h * 4 : 0));
            }
        }
        /* DP: the chunk's gradients all-reduced in buckets */
        if (c->dp > 1) {
            pl_blocks_part part = {first[q], first[q] + count[q], input, head, T, at.tp};
            pl_blocks_layout lay;
            if (pl_blocks_layout_make(&lay, &c->model, part, err, cap)) return -1;
            unsigned long long n = (unsigned long long)lay.nparams, b = c->bucket_floats;
            t->dp_calls += (unsigned)(b ? (n + b - 1) / b : 1);
            t->dp_bytes += 2ull * (unsigned long long)(c->dp - 1) * n * 4;
        }
    }
    return 0;
}
