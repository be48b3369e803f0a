/*
 * train.c — Lab 07's training loop, run by every rank (lab07_rank).
 *
 * Every rank holds a replica of the MLP made from the same seed. Each step
 * takes the next global batch of the epoch's shuffle, and each rank its
 * shard of it (the exercise's shard_batch); forward, the loss of the
 * shard's mean, and backward layer by layer. The gradient buffer is cut
 * into buckets from its end (the last layer's gradients come first), and
 * each bucket is synchronised (the exercise's sync_gradients: all-reduce,
 * then average) as soon as backward has produced it — on a second stream,
 * overlapping the layers still to go, or after backward on the compute
 * stream with overlap off. Then every rank takes the same optimizer step.
 *
 * The epoch's last partial batch is dropped (1,438 = 22 x 64 + 30), as a
 * DistributedSampler with drop_last does, so that every step's global batch
 * splits evenly. The reported loss is the global mean over the samples
 * seen: the per-sample losses summed over every rank, over their count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "07_data_parallel/lab07.h"
#include "harness/train.h" /* FAIL, CK, STEP, BEGIN */
#include "paralab/cuda_check.h"
#include "paralab/dist.h"
#include "paralab/nn.h"
#include "paralab/plural.h"
#include "paralab/step.h"
#include "paralab/trace.h"
#include "paralab/viz.h"
#include "paralab/device.h"

#define MAX_BUCKETS 4096

typedef struct {
    double start, modeled_start;
} mark;

static mark mark_now(cudaStream_t s)
{
    mark m = {pl_trace_now(), pl_device_stream_now(s)};
    return m;
}

/* A forward, backward or optimizer event of this rank, on the compute lane. */
static void emit(pl_rank *r, pl_event_kind kind, const char *label, mark m, cudaStream_t s)
{
    if (!r->trace) return;
    pl_event e;
    memset(&e, 0, sizeof e);
    e.rank = r->rank;
    e.lane = PL_LANE_COMPUTE;
    e.kind = (uint8_t)kind;
    e.micro_batch = -1;
    e.layer = -1;
    e.peer = -1;
    e.start = m.start;
    e.end = pl_trace_now();
    e.modeled_start = m.modeled_start;
    e.modeled_end = pl_device_stream_now(s);
    snprintf(e.label, sizeof e.label, "%s", label);
    pl_trace_record(r->trace, &e);
}

/* Layer l's backward (inside the step's "backward"), with the bytes of
 * gradients it produced, on the compute lane. */
static void emit_layer(pl_rank *r, int l, long bytes, mark m, cudaStream_t s)
{
    if (!r->trace) return;
    pl_event e;
    memset(&e, 0, sizeof e);
    e.rank = r->rank;
    e.lane = PL_LANE_COMPUTE;
    e.kind = PL_EV_BACKWARD;
    e.micro_batch = -1;
    e.layer = l;
    e.peer = -1;
    e.bytes = (uint64_t)bytes;
    e.start = m.start;
    e.end = pl_trace_now();
    e.modeled_start = m.modeled_start;
    e.modeled_end = pl_device_stream_now(s);
    snprintf(e.label, sizeof e.label, "backward L%d", l);
    pl_trace_record(r->trace, &e);
}

static unsigned hash_floats(const float *p, long n)
{
    unsigned h = 2166136261u;
    const unsigned char *b = (const unsigned char *)p;
    for (long i = 0; i < n * (long)sizeof(float); i++) h = (h ^ b[i]) * 16777619u;
    return h;
}

#define SYNC(ptr, count, stream)                                                                   \
    do {                                                                                           \
        int rc_ = run->impl->sync_gradients(r->comm, (ptr), (count), (stream));                    \
        if (rc_ == PL_TODO_STATUS) {                                                               \
            res->todo = 1;                                                                         \
            status = 0;                                                                            \
            goto out;                                                                              \
        }                                                                                          \
        if (rc_)                                                                                   \
            FAIL("sync_gradients returned %s: %s", pl_comm_result_name((pl_comm_result)rc_),       \
                 pl_comm_last_error(r->comm));                                                     \
    } while (0)

int lab07_rank(pl_rank *r)
{
    lab07_run *run = r->arg;
    const lab07_config *cfg = run->cfg;
    lab07_result *res = run->result;
    const pl_dataset *train = &run->data->train, *test = &run->data->test;
    int n = r->size, me = r->rank, status = 1;
    cudaStream_t cs = r->stream, ms = NULL;
    pl_mlp m;
    memset(&m, 0, sizeof m);
    float *hx = NULL, *dx = NULL, *host_params = NULL;
    int *hy = NULL, *dy = NULL, *order = NULL, *dcount = NULL;
    cudaEvent_t layer_done[PL_MLP_MAX_LAYERS] = {0}, comm_done = NULL;

    int first = 0, count = 0;
    int sh = run->impl->shard_batch(cfg->batch, n, me, &first, &count);
    if (sh == PL_TODO_STATUS) {
        res->todo = 1;
        return 0;
    }
    if (count * n != cfg->batch || first != me * (cfg->batch / n))
        FAIL("shard_batch(B=%d, n=%d, rank=%d) gave rows [%d, %d); rank %d of %d takes rows "
             "[%d, %d)",
             cfg->batch, n, me, first, first + count, me, n, me * (cfg->batch / n),
             (me + 1) * (cfg->batch / n));
    pl_mlp_config mc = pl_mlp_default();
    CK(pl_mlp_create(&m, &mc, count, cfg->seed));
    /* the comm stream at the highest priority, as NCCL's: its small kernels
     * run beside backward's */
    int least = 0, greatest = 0;
    CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CK(cudaStreamCreateWithPriority(&ms, cudaStreamNonBlocking, greatest));
    for (int l = 0; l < mc.layers; l++)
        CK(cudaEventCreateWithFlags(&layer_done[l], cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&comm_done, cudaEventDisableTiming));
    hx = malloc((size_t)count * PL_DIGITS_FEATURES * sizeof *hx);
    hy = malloc((size_t)count * sizeof *hy);
    order = malloc((size_t)train->n * sizeof *order);
    host_params = malloc((size_t)m.nparams * sizeof *host_params);
    if (!hx || !hy || !order || !host_params) FAIL("out of host memory");
    CK(cudaMalloc((void **)&dx, (size_t)count * PL_DIGITS_FEATURES * sizeof(float)));
    CK(cudaMalloc((void **)&dy, (size_t)count * sizeof(int)));
    CK(cudaMalloc((void **)&dcount, sizeof(int)));

    /* Buckets in the order backward produces the gradients: the last
     * layer's first. A bucket never spans two layers (it would wait for the
     * earlier one); a layer's range is cut from its end into buckets of at
     * most bucket_floats. */
    long bstart[MAX_BUCKETS], blen[MAX_BUCKETS];
    int nb = 0;
    for (int l = mc.layers - 1; l >= 0; l--) {
        long lo = m.w_off[l], end = m.b_off[l] + mc.width[l + 1];
        while (end > lo && nb < MAX_BUCKETS) {
            long len = end - lo < cfg->bucket_floats ? end - lo : cfg->bucket_floats;
            if (nb == MAX_BUCKETS - 1) len = end - lo;
            bstart[nb] = end - len;
            blen[nb] = len;
            end -= len;
            nb++;
        }
    }

    if (n == 1)
        STEP("1 rank, with the full MLP: %ld parameters from the seed (a world of one: nothing to "
             "keep in step).",
             m.nparams);
    else
        STEP("%d ranks, each with a full replica of the MLP: %ld parameters from the same seed, "
             "so the replicas start identical.",
             n, m.nparams);
    int steps_per_epoch = train->n / cfg->batch;
    double modeled_total = 0, measured_total = 0;
    int steps = 0;
    for (int epoch = 1; epoch <= cfg->epochs; epoch++) {
        if (epoch > 1) BEGIN(); /* the epoch's work, under its narration */
        pl_shuffle(order, train->n, cfg->seed, epoch);
        CK(pl_mlp_reset_correct(&m, cs));
        double loss_sum = 0;
        int seen = 0;
        for (int k = 0; k < steps_per_epoch; k++) {
            int narrate = cfg->narrate && epoch == 1 && k == 0;
            if (narrate)
                STEP("The global batch of %d sample%s is cut into %d shard%s of %d row%s: rank r "
                     "takes rows %d r to %d r + %d of it.",
                     cfg->batch, pl_s(cfg->batch), n, pl_s(n), count, pl_s(count), count, count,
                     count - 1);
            const int *rows = order + (long)k * cfg->batch + first;
            for (int i = 0; i < count; i++) {
                memcpy(hx + (size_t)i * PL_DIGITS_FEATURES,
                       train->x + (size_t)rows[i] * PL_DIGITS_FEATURES,
                       PL_DIGITS_FEATURES * sizeof *hx);
                hy[i] = train->y[rows[i]];
            }
            mark t0 = mark_now(cs);
            CK(cudaMemcpyAsync(dx, hx, (size_t)count * PL_DIGITS_FEATURES * sizeof(float),
                               cudaMemcpyHostToDevice, cs));
            CK(cudaMemcpyAsync(dy, hy, (size_t)count * sizeof(int), cudaMemcpyHostToDevice, cs));
            if (narrate) STEP("Forward: each rank runs its own shard through its own replica.");
            mark f = mark_now(cs);
            CK(pl_mlp_forward(&m, dx, count, cs));
            /* the gradient of the shard's mean loss */
            CK(pl_mlp_loss(&m, dy, count, 1.0f / (float)count, cs));
            emit(r, PL_EV_FORWARD, "forward", f, cs);
            if (narrate)
                STEP("Backward, last layer first. The gradients (%ld KiB) are cut into %d "
                     "bucket%s of at most %d KiB; each is all-reduced as soon as backward has "
                     "produced it%s. (PyTorch DDP's buckets are 25 MiB; here they are scaled "
                     "down with the model, which would otherwise fit in one bucket and leave "
                     "nothing to overlap.)",
                     (long)(m.nparams * (long)sizeof(float) / 1024), nb, pl_s(nb),
                     cfg->bucket_floats * 4 / 1024,
                     cfg->overlap ? ", on a second stream, while backward goes on"
                                  : " — after backward, with --no-overlap");
            mark b = mark_now(cs);
            int launched = 0;
            for (int l = mc.layers - 1; l >= 0; l--) {
                mark bl = mark_now(cs);
                CK(pl_mlp_backward_layer(&m, dx, count, l, 0, cs));
                /* the layer's gradients are produced: the buckets pane fills
                 * its buckets from these (bytes: the layer's gradients) */
                emit_layer(r, l, (m.b_off[l] + mc.width[l + 1] - m.w_off[l]) * (long)sizeof(float),
                           bl, cs);
                if (!cfg->overlap) continue;
                CK(cudaEventRecord(layer_done[l], cs));
                /* every bucket whose gradients are all final now */
                while (launched < nb && bstart[launched] >= m.w_off[l]) {
                    CK(cudaStreamWaitEvent(ms, layer_done[l], 0));
                    SYNC(m.grads.data + bstart[launched], (size_t)blen[launched], ms);
                    launched++;
                }
            }
            emit(r, PL_EV_BACKWARD, "backward", b, cs);
            if (cfg->overlap) {
                CK(cudaEventRecord(comm_done, ms));
                CK(cudaStreamWaitEvent(cs, comm_done, 0));
            } else
                for (int k2 = 0; k2 < nb; k2++)
                    SYNC(m.grads.data + bstart[k2], (size_t)blen[k2], cs);
            if (narrate)
                STEP("Each rank's gradient was its own shard's mean. The all-reduce summed "
                     "them; divided by %d, every rank holds the mean gradient of the whole "
                     "batch of %d.",
                     n, cfg->batch);
            if (narrate)
                STEP("The same %s step on every rank, from the same gradient.",
                     cfg->sgd ? "SGD" : "AdamW");
            mark o = mark_now(cs);
            if (cfg->sgd)
                CK(pl_mlp_sgd(&m, cfg->lr, 0.9f, 0.0f, cs));
            else
                CK(pl_mlp_adamw(&m, cfg->lr, 0.9f, 0.999f, 1e-8f, 0.01f, cs));
            emit(r, PL_EV_OPTIMIZER, "optimizer", o, cs);
            /* the global loss: every rank's per-sample losses, summed */
            if (pl_all_reduce(r->comm, m.loss_sum, m.loss_sum, 1, PL_FLOAT32, PL_SUM, cs))
                FAIL("the loss all-reduce: %s", pl_comm_last_error(r->comm));
            float step_loss;
            CK(cudaMemcpyAsync(&step_loss, m.loss_sum, sizeof step_loss, cudaMemcpyDeviceToHost,
                               cs));
            CK(cudaStreamSynchronize(cs));
            loss_sum += step_loss;
            seen += cfg->batch;
            modeled_total += pl_device_stream_now(cs) - t0.modeled_start;
            measured_total += pl_trace_now() - t0.start;
            steps++;
            if (me == 0) pl_metric(r, "loss", step_loss / cfg->batch);
            if (narrate) BEGIN(); /* the check, under "the replicas are still identical" */
            if (cfg->check_replicas || narrate) {
                CK(cudaMemcpy(host_params, m.params.data, (size_t)m.nparams * sizeof(float),
                              cudaMemcpyDeviceToHost));
                run->replica[me] = host_params;
                run->replica_hash[me] = hash_floats(host_params, m.nparams);
                if (pl_comm_barrier(r->comm)) FAIL("%s", pl_comm_last_error(r->comm));
                pl_dist_gather_host(r->comm, run->replica_hash, sizeof run->replica_hash[0],
                                    sizeof run->replica_hash[0]);
                /* a replica of this process byte for byte; one of another
                 * process (mpirun) by its hash */
                if (me == 0)
                    for (int q = 1; q < n; q++)
                        if ((run->replica[q] ? memcmp(run->replica[0], run->replica[q],
                                                      (size_t)m.nparams * sizeof(float))
                                             : run->replica_hash[0] != run->replica_hash[q]) &&
                            !res->replicas_differ)
                            res->replicas_differ = steps;
                if (pl_comm_barrier(r->comm)) FAIL("%s", pl_comm_last_error(r->comm));
            }
            if (narrate)
                STEP("The replicas are still identical: every rank's %ld parameters are the "
                     "same, bit for bit (hash %08x).",
                     m.nparams, hash_floats(host_params, m.nparams));
            if (narrate) BEGIN(); /* the rest of epoch 1, under its narration */
            if (cfg->max_steps && steps >= cfg->max_steps) break;
        }
        /* the epoch: training accuracy over every rank, test accuracy on rank 0
         * (the narration's numbers are rank 0's: only its narration shows) */
        double ep_loss = 0, tr_acc = 0, te_acc = 0;
        CK(cudaMemcpyAsync(dcount, m.correct, sizeof(int), cudaMemcpyDeviceToDevice, cs));
        if (pl_all_reduce(r->comm, dcount, dcount, 1, PL_INT32, PL_SUM, cs))
            FAIL("the accuracy all-reduce: %s", pl_comm_last_error(r->comm));
        int right = 0;
        CK(cudaMemcpyAsync(&right, dcount, sizeof right, cudaMemcpyDeviceToHost, cs));
        CK(cudaStreamSynchronize(cs));
        if (me == 0) {
            CK(pl_mlp_reset_correct(&m, cs));
            for (int s0 = 0; s0 < test->n; s0 += count) {
                int b2 = test->n - s0 < count ? test->n - s0 : count;
                CK(cudaMemcpyAsync(dx, test->x + (size_t)s0 * PL_DIGITS_FEATURES,
                                   (size_t)b2 * PL_DIGITS_FEATURES * sizeof(float),
                                   cudaMemcpyHostToDevice, cs));
                CK(cudaMemcpyAsync(dy, test->y + s0, (size_t)b2 * sizeof(int),
                                   cudaMemcpyHostToDevice, cs));
                CK(pl_mlp_forward(&m, dx, b2, cs));
                CK(pl_mlp_loss(&m, dy, b2, 0.0f, cs));
                CK(cudaStreamSynchronize(cs));
            }
            int test_right = 0;
            CK(cudaMemcpy(&test_right, m.correct, sizeof test_right, cudaMemcpyDeviceToHost));
            ep_loss = seen ? loss_sum / seen : 0;
            tr_acc = res->train_acc = seen ? 100.0 * right / seen : 0;
            te_acc = res->test_acc = 100.0 * test_right / test->n;
            if (epoch - 1 < 1000) res->epoch_loss[epoch - 1] = ep_loss;
            if (cfg->progress && (epoch % 5 == 0 || epoch == cfg->epochs))
                pl_check_progress(cfg->progress, "N=%d, epoch %d/%d: loss %.4f, test %.1f %%",
                                  r->size, epoch, cfg->epochs, ep_loss, te_acc);
        }
        STEP("Epoch %d/%d: loss %.4f (the mean over %d samples), train %.1f %%, test %.1f %%.",
             epoch, cfg->epochs, ep_loss, seen, tr_acc, te_acc);
        /* the loss curve's value, the narration's, as it appears */
        if (me == 0) pl_metric(r, "epoch loss", ep_loss);
        if (cfg->max_steps && steps >= cfg->max_steps) break;
    }
    if (me == 0) {
        res->steps = steps;
        res->modeled_step = steps ? modeled_total / steps : 0;
        res->measured_step = steps ? measured_total / steps : 0;
        res->nparams = m.nparams;
        res->params = malloc((size_t)m.nparams * sizeof(float));
        if (res->params)
            cudaMemcpy(res->params, m.params.data, (size_t)m.nparams * sizeof(float),
                       cudaMemcpyDeviceToHost);
    }
    status = 0;
out:
    if (ms) {
        cudaStreamSynchronize(ms);
        cudaStreamDestroy(ms);
    }
    for (int l = 0; l < PL_MLP_MAX_LAYERS; l++)
        if (layer_done[l]) cudaEventDestroy(layer_done[l]);
    if (comm_done) cudaEventDestroy(comm_done);
    cudaStreamSynchronize(cs);
    pl_mlp_destroy(&m);
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dcount);
    free(hx);
    free(hy);
    free(order);
    free(host_params);
    return status;
}
