/* pp_blocks.c — the block model's pipeline: see paralab/pp_blocks.h. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/device.h"
#include "paralab/nn.h"
#include "paralab/pp_blocks.h"

static int fail(char *err, size_t cap, const char *fmt, ...)
{
    if (cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* The device's memory in use now (0 when it cannot be asked). */
static long long mem_used(void)
{
    int dev = 0;
    size_t used = 0, total = 0;
    if (cudaGetDevice(&dev) || pl_device_memory(dev, &used, &total)) return 0;
    return (long long)used;
}

size_t pl_pp_blocks_acts_bytes(const pl_pp_blocks *pp, int chunk)
{
    return chunk >= 0 && chunk < pp->chunks ? pp->acts_bytes[chunk] : 0;
}

/* ---- the stage body: what each op does ---------------------------------------------------- */

static pl_pp_blocks *of(pl_pp_exec *ex) { return ex->user; }

/* The activations of (k, c): taken when its F starts, from the chunk's
 * spare sets or, when none is left, a new allocation (as PyTorch's caching
 * allocator: no cudaFree, which would synchronise the whole device, in the
 * middle of a pipeline). */
static int take_acts(pl_pp_blocks *pp, pl_pp_exec *ex, int k, int c)
{
    int i = k * pp->chunks + c, m = pp->micro_batches;
    if (pp->spare_n[c] > 0)
        pp->acts[i] = pp->spare[c * m + --pp->spare_n[c]];
    else {
        long long before = mem_used();
        cudaError_t e = pl_blocks_acts_alloc_split(&pp->acts[i], &pp->part[c].lay, pp->rows,
                                                   pp->local_rows, pp->split);
        if (e)
            return fail(ex->error, sizeof ex->error,
                        "allocating the activations of micro-batch %d: %s", k, cudaGetErrorName(e));
        pp->measured_held += mem_used() - before;
        if (pp->measured_held > (long long)pp->measured_peak_bytes)
            pp->measured_peak_bytes = (size_t)pp->measured_held;
    }
    pp->held[i] = 1;
    pp->held_bytes += pp->acts_bytes[c];
    if (pp->held_bytes > pp->peak_bytes) pp->peak_bytes = pp->held_bytes;
    if (++pp->in_flight > pp->peak_in_flight) pp->peak_in_flight = pp->in_flight;
    return 0;
}

/* ... and given back after its last backward op, kept for the next F. */
static void give_acts(pl_pp_blocks *pp, int k, int c)
{
    int i = k * pp->chunks + c;
    if (!pp->held[i]) return;
    pp->spare[c * pp->micro_batches + pp->spare_n[c]++] = pp->acts[i];
    memset(&pp->acts[i], 0, sizeof pp->acts[i]);
    pp->held[i] = 0;
    pp->held_bytes -= pp->acts_bytes[c];
    pp->in_flight--;
}

/* Frees the spare sets (their device memory leaves the measure too). */
static void free_spares(pl_pp_blocks *pp)
{
    for (int c = 0; c < pp->chunks && pp->spare; c++)
        while (pp->spare_n[c] > 0) {
            long long before = mem_used();
            pl_blocks_acts_free(&pp->spare[c * pp->micro_batches + --pp->spare_n[c]]);
            pp->measured_held += mem_used() - before;
        }
}

/* A model call's failure: its reason (tp->error) into the executor's. */
static int model_failed(pl_pp_exec *ex, const pl_tp *tp, const char *what)
{
    snprintf(ex->error, sizeof ex->error, "%s: %s", what, tp->error[0] ? tp->error : "failed");
    return -1;
}

/* The first row of X this rank reads for micro-batch k: the micro-batch's
 * first, and under sequence parallelism its TP rank's share of it. */
static size_t first_row(const pl_pp_blocks *pp, const pl_tp *tp, int k)
{
    return (size_t)k * pp->rows + (tp->sequence_parallel ? (size_t)tp->rank * pp->local_rows : 0);
}

static int body_forward(pl_pp_exec *ex, int k, int c, const float *in, float *out)
{
    pl_pp_blocks *pp = of(ex);
    if (take_acts(pp, ex, k, c)) return -1;
    pl_blocks *m = &pp->part[c];
    pl_tp *tp = &pp->tp[c];
    const float *X = m->lay.part.input ? pp->X + first_row(pp, tp, k) * pp->cfg.inputs : in;
    if (m->lay.part.input && !pp->X)
        return fail(ex->error, sizeof ex->error, "stage 0 was given no samples (X is NULL)");
    tp->error[0] = '\0';
    if (pl_blocks_forward(m, &pp->acts[k * pp->chunks + c], tp, NULL, X, out))
        return model_failed(ex, tp, "forward");
    return 0;
}

/* The loss of micro-batch k on the last virtual stage, from the logits its
 * F kept: the gradient of the logits scaled by 1/B (the global batch). */
static int loss_of(pl_pp_blocks *pp, pl_pp_exec *ex, int k, int c, float scale)
{
    pl_blocks *m = &pp->part[c];
    pl_tp *tp = &pp->tp[c];
    if (!pp->labels)
        return fail(ex->error, sizeof ex->error, "the last stage was given no labels (NULL)");
    if (pl_blocks_loss(m, &pp->acts[k * pp->chunks + c], tp, pp->labels + (size_t)k * pp->rows,
                       scale))
        return model_failed(ex, tp, "loss");
    cudaError_t e = pl_k_axpy(pp->loss_sum, m->loss_sum, 1, 1.0f, pp->stream);
    if (e) return fail(ex->error, sizeof ex->error, "summing the loss: %s", cudaGetErrorName(e));
    return 0;
}

static int body_backward(pl_pp_exec *ex, int k, int c, const float *dout, float *din)
{
    pl_pp_blocks *pp = of(ex);
    pl_blocks *m = &pp->part[c];
    pl_tp *tp = &pp->tp[c];
    tp->error[0] = '\0';
    tp->accumulate = 1; /* into the step's gradients, zeroed before its first micro-batch */
    if (m->lay.part.head && loss_of(pp, ex, k, c, 1.0f / (float)pp->loss_batch)) return -1;
    if (pl_blocks_backward(m, &pp->acts[k * pp->chunks + c], tp, NULL, NULL, dout, din))
        return model_failed(ex, tp, "backward");
    give_acts(pp, k, c);
    return 0;
}

/* B: the input gradient only (zero-bubble); the set stays for its W. */
static int body_backward_input(pl_pp_exec *ex, int k, int c, const float *dout, float *din)
{
    pl_pp_blocks *pp = of(ex);
    pl_blocks *m = &pp->part[c];
    pl_tp *tp = &pp->tp[c];
    tp->error[0] = '\0';
    tp->accumulate = 1;
    if (m->lay.part.head && loss_of(pp, ex, k, c, 1.0f / (float)pp->loss_batch)) return -1;
    if (pl_blocks_backward_input(m, &pp->acts[k * pp->chunks + c], tp, NULL, dout, din))
        return model_failed(ex, tp, "backward (B)");
    return 0;
}

/* W: the weight gradients of (k, c), then its set is freed. */
static int body_backward_weight(pl_pp_exec *ex, int k, int c)
{
    pl_pp_blocks *pp = of(ex);
    pl_blocks *m = &pp->part[c];
    pl_tp *tp = &pp->tp[c];
    tp->error[0] = '\0';
    tp->accumulate = 1;
    if (pl_blocks_backward_weight(m, &pp->acts[k * pp->chunks + c], tp, NULL))
        return model_failed(ex, tp, "backward (W)");
    give_acts(pp, k, c);
    return 0;
}

static size_t body_held(pl_pp_exec *ex) { return of(ex)->held_bytes; }

static const pl_pp_body blocks_body = {body_forward, body_backward, body_backward_input,
                                       body_backward_weight, body_held};

/* The sets of a stage whose list splits a backward keep what W needs. */
static void set_split(pl_pp_blocks *pp, int split)
{
    if (split != pp->split) free_spares(pp); /* made for the other kind */
    pp->split = split;
    for (int c = 0; c < pp->chunks; c++)
        pp->acts_bytes[c] = pl_blocks_acts_bytes(&pp->part[c].lay, pp->rows, pp->local_rows, split);
}

/* ---- making the pipeline ------------------------------------------------------------------ */

/* "1, 2, 4, 8 or 16": the m that divide batch. */
static void divisors(int batch, char *buf, size_t cap)
{
    int count = 0, k = 0;
    for (int d = 1; d <= batch && d <= PL_PP_MAX_MICRO; d++) count += batch % d == 0;
    size_t len = 0;
    buf[0] = '\0';
    for (int d = 1; d <= batch && d <= PL_PP_MAX_MICRO; d++) {
        if (batch % d) continue;
        k++;
        int w = snprintf(buf + len, cap - len, "%s%d", k == 1 ? "" : k == count ? " or " : ", ", d);
        if (w < 0 || (size_t)w >= cap - len) break;
        len += (size_t)w;
    }
}

int pl_pp_blocks_create(pl_pp_blocks *pp, const pl_blocks_config *c, pl_comm *comm, int chunks,
                        int batch, int micro_batches, unsigned long long seed, cudaStream_t stream,
                        char *err, size_t cap)
{
    return pl_pp_blocks_create_tp(pp, c, comm, NULL, 0, chunks, batch, micro_batches, seed, stream,
                                  err, cap);
}

int pl_pp_blocks_create_tp(pl_pp_blocks *pp, const pl_blocks_config *c, pl_comm *comm,
                           pl_comm *tp_comm, int sequence_parallel, int chunks, int batch,
                           int micro_batches, unsigned long long seed, cudaStream_t stream,
                           char *err, size_t cap)
{
    memset(pp, 0, sizeof *pp);
    int p = comm ? pl_comm_size(comm) : 1, r = comm ? pl_comm_rank(comm) : 0, m = micro_batches;
    int t = tp_comm ? pl_comm_size(tp_comm) : 1, ti = tp_comm ? pl_comm_rank(tp_comm) : 0;
    if (chunks < 1 || chunks > PL_PP_MAX_CHUNKS)
        return fail(err, cap, "--chunks %d: a stage holds 1..%d model chunks", chunks,
                    PL_PP_MAX_CHUNKS);
    if (batch < 1) return fail(err, cap, "--batch %d: a batch needs at least one sample", batch);
    if (m < 1 || m > PL_PP_MAX_MICRO)
        return fail(err, cap, "--micro-batches %d: m must be 1..%d", m, PL_PP_MAX_MICRO);
    if (batch % m) {
        char list[512];
        divisors(batch, list, sizeof list);
        return fail(err, cap,
                    "--micro-batches %d: a batch of %d does not divide into %d micro-batches (m "
                    "can be %s)",
                    m, batch, m, list);
    }
    if (pl_blocks_check(c, t, "--tp", 64, err, cap)) return -1;
    if (sequence_parallel && (batch / m) % t) {
        int b = batch / m;
        return fail(
            err, cap,
            "--sequence-parallel: a micro-batch of %d rows does not split over the %d ranks "
            "of a TP group (its rows must be a multiple of %d)",
            b, t, t);
    }
    int first[PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS], count[PL_PP_MAX_STAGES * PL_PP_MAX_CHUNKS];
    if (pl_pp_split(c->layers, p, chunks, first, count, err, cap)) return -1;
    pp->cfg = *c;
    pp->stage = r;
    pp->stages = p;
    pp->chunks = chunks;
    pp->batch = batch;
    pp->micro_batches = m;
    pp->rows = batch / m;
    pp->local_rows = sequence_parallel ? pp->rows / t : pp->rows;
    pp->loss_batch = batch;
    pp->stream = stream;
    int last = p * chunks - 1;
    for (int ch = 0; ch < chunks; ch++) {
        int q = ch * p + r;
        pl_blocks_part part = {first[q], first[q] + count[q], q == 0, q == last, t, ti};
        pl_blocks_layout lay;
        if (pl_blocks_layout_make(&lay, c, part, err, cap)) goto fail;
        cudaError_t e = pl_blocks_create(&pp->part[ch], &lay, pp->rows, pp->local_rows, seed);
        if (e) {
            fail(err, cap, "stage %d, chunk %d: pl_blocks_create: %s", r, ch, cudaGetErrorName(e));
            goto fail;
        }
        if (pl_tp_init(&pp->tp[ch], tp_comm, sequence_parallel, pp->rows, stream, err, cap))
            goto fail;
    }
    pp->acts = calloc((size_t)m * chunks, sizeof *pp->acts);
    pp->held = calloc((size_t)m * chunks, 1);
    pp->spare = calloc((size_t)m * chunks, sizeof *pp->spare);
    if (!pp->acts || !pp->held || !pp->spare) {
        fail(err, cap, "out of host memory");
        goto fail;
    }
    cudaError_t e = cudaMalloc((void **)&pp->loss_sum, sizeof(float));
    if (!e) e = cudaMalloc((void **)&pp->norm_sq, sizeof(float));
    if (!e) e = cudaMemset(pp->loss_sum, 0, sizeof(float));
    if (e) {
        fail(err, cap, "stage %d: %s", r, cudaGetErrorName(e));
        goto fail;
    }
    set_split(pp, 0);
    if (pl_pp_exec_init(&pp->exec, &blocks_body, pp, comm, stream,
                        (size_t)pp->local_rows * (size_t)c->hidden, err, cap))
        goto fail;
    return 0;
fail:
    pl_pp_blocks_destroy(pp);
    return -1;
}

void pl_pp_blocks_destroy(pl_pp_blocks *pp)
{
    if (pp->stream || pp->acts) cudaStreamSynchronize(pp->stream);
    for (int i = 0; pp->acts && i < pp->micro_batches * pp->chunks; i++)
        if (pp->held && pp->held[i]) pl_blocks_acts_free(&pp->acts[i]);
    free_spares(pp);
    for (int c = 0; c < PL_PP_MAX_CHUNKS; c++) pl_blocks_destroy(&pp->part[c]);
    free(pp->acts);
    free(pp->held);
    free(pp->spare);
    cudaFree(pp->loss_sum);
    cudaFree(pp->norm_sq);
    pl_pp_exec_free(&pp->exec);
    memset(pp, 0, sizeof *pp);
}

/* ---- a step --------------------------------------------------------------------------------- */

#define CUDA_OR_FAIL(call)                                                                         \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_) return fail(pp->error, sizeof pp->error, "%s: %s", #call, cudaGetErrorName(e_));   \
    } while (0)

int pl_pp_blocks_step(pl_pp_blocks *pp, const pl_pp_schedule *s, const float *X, const int *labels,
                      float *loss_sum)
{
    pp->error[0] = '\0';
    if (loss_sum) *loss_sum = 0;
    if (s->stages != pp->stages || s->micro_batches != pp->micro_batches || s->chunks != pp->chunks)
        return fail(pp->error, sizeof pp->error,
                    "the schedule is for p = %d stages, m = %d micro-batches and v = %d chunks; "
                    "this pipeline has p = %d, m = %d, v = %d",
                    s->stages, s->micro_batches, s->chunks, pp->stages, pp->micro_batches,
                    pp->chunks);
    pp->X = X;
    pp->labels = labels;
    int split = 0; /* this stage's list has B and W ops: its sets keep what W needs */
    for (int i = 0; i < s->n[pp->stage]; i++)
        split |= s->ops[pp->stage][i].kind == PL_PP_B || s->ops[pp->stage][i].kind == PL_PP_W;
    if (pp->in_flight == 0) set_split(pp, split);
    for (int c = 0; c < pp->chunks; c++)
        CUDA_OR_FAIL(cudaMemsetAsync(pp->part[c].grads.data, 0,
                                     (size_t)pp->part[c].lay.nparams * sizeof(float), pp->stream));
    CUDA_OR_FAIL(cudaMemsetAsync(pp->loss_sum, 0, sizeof(float), pp->stream));
    pp->peak_bytes = pp->held_bytes;
    pp->peak_in_flight = pp->in_flight;
    pp->measured_peak_bytes = pp->measured_held > 0 ? (size_t)pp->measured_held : 0;
    int rc = pl_pp_run(&pp->exec, s);
    if (rc) {
        snprintf(pp->error, sizeof pp->error, "%s", pp->exec.error);
        cudaStreamSynchronize(pp->stream);
        for (int i = 0; i < pp->micro_batches * pp->chunks; i++) /* a failed run's leftovers */
            if (pp->held[i]) give_acts(pp, i / pp->chunks, i % pp->chunks);
        return -1;
    }
    float loss = 0;
    if (pp->part[pp->chunks - 1].lay.part.head)
        CUDA_OR_FAIL(
            cudaMemcpyAsync(&loss, pp->loss_sum, sizeof loss, cudaMemcpyDeviceToHost, pp->stream));
    CUDA_OR_FAIL(cudaStreamSynchronize(pp->stream));
    if (loss_sum) *loss_sum = loss;
    return 0;
}

int pl_pp_blocks_clip_grad_norm(pl_pp_blocks *pp, float max_norm, float *norm)
{
    pp->error[0] = '\0';
    /* each chunk's sum of squares g . g, one matrix product [1, n] x [n, 1], added up */
    for (int c = 0; c < pp->chunks; c++) {
        const float *g = pp->part[c].grads.data;
        CUDA_OR_FAIL(pl_k_matmul(pp->norm_sq, g, g, 1, 1, (int)pp->part[c].lay.nparams, PL_NN,
                                 c > 0, pp->stream));
    }
    if (pp->stages > 1 &&
        pl_all_reduce(pp->exec.comm, pp->norm_sq, pp->norm_sq, 1, PL_FLOAT32, PL_SUM, pp->stream))
        return fail(pp->error, sizeof pp->error, "the gradient norm's all-reduce: %s",
                    pl_comm_last_error(pp->exec.comm));
    float sq = 0;
    CUDA_OR_FAIL(cudaMemcpyAsync(&sq, pp->norm_sq, sizeof sq, cudaMemcpyDeviceToHost, pp->stream));
    CUDA_OR_FAIL(cudaStreamSynchronize(pp->stream));
    float n = sqrtf(sq);
    if (norm) *norm = n;
    if (max_norm > 0 && n > max_norm) /* llm.c: grad_scale = grad_clip / norm */
        for (int c = 0; c < pp->chunks; c++)
            CUDA_OR_FAIL(pl_k_scale(pp->part[c].grads.data, pp->part[c].lay.nparams, max_norm / n,
                                    pp->stream));
    return 0;
}

int pl_pp_blocks_sgd(pl_pp_blocks *pp, float lr)
{
    for (int c = 0; c < pp->chunks; c++) CUDA_OR_FAIL(pl_blocks_sgd(&pp->part[c], lr, pp->stream));
    return 0;
}

int pl_pp_blocks_adamw(pl_pp_blocks *pp, float lr)
{
    for (int c = 0; c < pp->chunks; c++)
        CUDA_OR_FAIL(pl_blocks_adamw(&pp->part[c], lr, pp->stream));
    return 0;
}

/* ---- evaluation: forwards only, one micro-batch after another ------------------------------ */

int pl_pp_blocks_evaluate(pl_pp_blocks *pp, const float *X, const int *labels, float *loss_sum)
{
    pp->error[0] = '\0';
    if (loss_sum) *loss_sum = 0;
    int p = pp->stages, v = pp->chunks, last = p * v - 1, r = pp->stage;
    size_t n = (size_t)pp->local_rows * (size_t)pp->cfg.hidden;
    pl_comm *comm = pp->exec.comm;
    float *in = NULL, *out = NULL;
    int rc = -1;
    cudaError_t e = cudaMalloc((void **)&in, n * sizeof(float));
    if (!e) e = cudaMalloc((void **)&out, n * sizeof(float));
    if (!e) e = cudaMemsetAsync(pp->loss_sum, 0, sizeof(float), pp->stream);
    if (e) {
        fail(pp->error, sizeof pp->error, "evaluation buffers: %s", cudaGetErrorName(e));
        goto out;
    }
    /* every stage takes the (k, c) in the same order, so the chain of sends
     * and receives (each one micro-batch's activation, q -> q + 1) is
     * matched in order and never waits in a cycle */
    for (int k = 0; k < pp->micro_batches; k++)
        for (int c = 0; c < v; c++) {
            int q = c * p + r;
            pl_blocks *m = &pp->part[c];
            pl_tp *tp = &pp->tp[c];
            tp->error[0] = '\0';
            if (q > 0 && pl_recv(comm, in, n, PL_FLOAT32, (q - 1) % p, pp->stream)) {
                fail(pp->error, sizeof pp->error, "evaluation: %s", pl_comm_last_error(comm));
                goto out;
            }
            const float *x = m->lay.part.input ? X + first_row(pp, tp, k) * pp->cfg.inputs : in;
            if (pl_blocks_forward(m, &m->acts, tp, NULL, x, q < last ? out : NULL)) {
                fail(pp->error, sizeof pp->error, "evaluation forward: %s", tp->error);
                goto out;
            }
            if (q == last) {
                if (pl_blocks_loss(m, &m->acts, tp, labels + (size_t)k * pp->rows, 0.0f)) {
                    fail(pp->error, sizeof pp->error, "evaluation loss: %s", tp->error);
                    goto out;
                }
                e = pl_k_axpy(pp->loss_sum, m->loss_sum, 1, 1.0f, pp->stream);
                if (e) {
                    fail(pp->error, sizeof pp->error, "evaluation: %s", cudaGetErrorName(e));
                    goto out;
                }
            }
            if (q < last && pl_send(comm, out, n, PL_FLOAT32, (q + 1) % p, pp->stream)) {
                fail(pp->error, sizeof pp->error, "evaluation: %s", pl_comm_last_error(comm));
                goto out;
            }
        }
    float loss = 0;
    if (pp->part[v - 1].lay.part.head)
        e = cudaMemcpyAsync(&loss, pp->loss_sum, sizeof loss, cudaMemcpyDeviceToHost, pp->stream);
    if (!e) e = cudaStreamSynchronize(pp->stream);
    if (e) {
        fail(pp->error, sizeof pp->error, "evaluation: %s", cudaGetErrorName(e));
        goto out;
    }
    if (loss_sum) *loss_sum = loss;
    rc = 0;
out:
    if (rc && comm) pl_comm_abort(comm, pp->error);
    cudaStreamSynchronize(pp->stream);
    cudaFree(in);
    cudaFree(out);
    return rc;
}
