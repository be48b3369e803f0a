/* pp_exec.c — the pipeline executor: see paralab/pp_exec.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/device.h"
#include "paralab/nn.h"
#include "paralab/pp_exec.h"
#include "paralab/trace.h"

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

int pl_pp_exec_init(pl_pp_exec *ex, const pl_pp_body *body, void *user, pl_comm *comm,
                    cudaStream_t stream, size_t message_floats, char *err, size_t cap)
{
    memset(ex, 0, sizeof *ex);
    if (!body || !body->forward || !body->backward)
        return fail(err, cap, "a pipeline stage body needs a forward and a backward");
    if ((body->backward_input == NULL) != (body->backward_weight == NULL))
        return fail(err, cap,
                    "a stage body that splits its backward needs both backward_input (B) and "
                    "backward_weight (W)");
    ex->body = *body;
    ex->user = user;
    ex->comm = comm;
    ex->stage = comm ? pl_comm_rank(comm) : 0;
    ex->stages = comm ? pl_comm_size(comm) : 1;
    ex->stream = stream;
    ex->message_floats = message_floats;
    ex->world_rank = ex->stage;
    return 0;
}

void pl_pp_exec_free(pl_pp_exec *ex)
{
    if (ex->comm_ready) {
        cudaStreamSynchronize(ex->stream);
        for (int i = 0; i < 2; i++) {
            cudaStreamDestroy(ex->send_stream[i]);
            cudaStreamDestroy(ex->recv_stream[i]);
        }
        cudaEventDestroy(ex->ev_op);
        for (int i = 0; i < 4; i++) cudaEventDestroy(ex->ev_comm[i]);
    }
    cudaFree(ex->pool);
    cudaFree(ex->timing);
    free(ex->records);
    memset(ex, 0, sizeof *ex);
}

/* ---- what each op receives and sends (paralab/pipeline.h) ------------------------------- */

typedef struct {
    int recv_peer, send_peer; /* stages, or -1 */
} op_msgs;

static op_msgs messages_of(const pl_pp_exec *ex, const pl_pp_schedule *s, pl_pp_op op)
{
    int p = s->stages, last = p * s->chunks - 1, q = op.chunk * p + ex->stage;
    op_msgs m = {-1, -1};
    if (op.kind == PL_PP_F) {
        if (q > 0) m.recv_peer = (q - 1) % p;
        if (q < last) m.send_peer = (q + 1) % p;
    } else if (op.kind == PL_PP_BW || op.kind == PL_PP_B) {
        if (q < last) m.recv_peer = (q + 1) % p;
        if (q > 0) m.send_peer = (q - 1) % p;
    }
    return m;
}

/* A pair's four message buffers: the activation received (in) and sent
 * (out), the gradient received (dout) and sent (din). */
enum { BUF_IN, BUF_OUT, BUF_DOUT, BUF_DIN };
static float *pair_buf(const pl_pp_exec *ex, int pair, int which)
{
    if (!ex->message_floats) return NULL;
    return ex->pool + ((size_t)pair * 4 + (size_t)which) * ex->message_floats;
}

static int cuda_fail(pl_pp_exec *ex, cudaError_t e, const char *what)
{
    return fail(ex->error, sizeof ex->error, "stage %d: %s: %s", ex->stage, what,
                cudaGetErrorName(e));
}

/* Room for the messages of `pairs` (k, c) pairs and n records; the
 * messages' streams and events. */
static int prepare(pl_pp_exec *ex, int pairs, int n)
{
    cudaError_t e;
    if (pairs > ex->pool_pairs) {
        cudaFree(ex->pool);
        ex->pool = NULL;
        ex->pool_pairs = 0;
        size_t bytes = (size_t)pairs * 4 * ex->message_floats * sizeof(float);
        /* not zeroed: every message is written before it is read (a memset on
         * the op stream would race the receives, which run on their own) */
        if (bytes && (e = cudaMalloc((void **)&ex->pool, bytes)))
            return cuda_fail(ex, e, "message buffers");
        ex->pool_pairs = pairs;
    }
    if (n > ex->records_cap) {
        free(ex->records);
        ex->records = malloc((size_t)n * sizeof *ex->records);
        if (!ex->records) return fail(ex->error, sizeof ex->error, "out of host memory");
        ex->records_cap = n;
    }
    if (!ex->comm_ready && ex->stages > 1) {
        for (int i = 0; i < 2; i++) {
            if ((e = cudaStreamCreateWithFlags(&ex->send_stream[i], cudaStreamNonBlocking)) ||
                (e = cudaStreamCreateWithFlags(&ex->recv_stream[i], cudaStreamNonBlocking)))
                return cuda_fail(ex, e, "cudaStreamCreateWithFlags");
        }
        if ((e = cudaEventCreateWithFlags(&ex->ev_op, cudaEventDisableTiming)))
            return cuda_fail(ex, e, "cudaEventCreateWithFlags");
        for (int i = 0; i < 4; i++)
            if ((e = cudaEventCreateWithFlags(&ex->ev_comm[i], cudaEventDisableTiming)))
                return cuda_fail(ex, e, "cudaEventCreateWithFlags");
        ex->comm_ready = 1;
    }
    return 0;
}

/* The refusals every rank makes alike, before anything runs. */
static int check_schedule(pl_pp_exec *ex, const pl_pp_schedule *s, pl_pp_report *rep)
{
    char *err = ex->error;
    size_t cap = sizeof ex->error;
    if (s->stages != ex->stages)
        return fail(err, cap,
                    "the schedule is for p = %d stages, but the PP group has %d rank%s: one "
                    "stage per rank",
                    s->stages, ex->stages, ex->stages == 1 ? "" : "s");
    if (!ex->body.backward_input)
        for (int r = 0; r < s->stages; r++)
            for (int i = 0; i < s->n[r]; i++) {
                pl_pp_op op = s->ops[r][i];
                if (op.kind != PL_PP_B && op.kind != PL_PP_W) continue;
                char name[24];
                pl_pp_op_name(op, s->chunks, name, sizeof name);
                return fail(err, cap,
                            "stage %d, op %d (%s): this stage body cannot split its backward "
                            "into B and W; use BW ops (or a schedule without the split)",
                            r, i, name);
            }
    return pl_pp_validate(s, 1, 1, 1, rep, err, cap) ? -1 : 0; /* buffered sends: ours */
}

/* The neighbour's index for the message streams: 0 the next stage, 1 the
 * previous (one neighbour when p = 2: index 0). */
static int side(const pl_pp_exec *ex, int peer)
{
    return peer == (ex->stage + 1) % ex->stages ? 0 : 1;
}

/* Posts the pending send (eager: it never waits for its receive, on the
 * host or on the op stream) and this op's receive, each on its neighbour's
 * stream: the send after the op that wrote it, and the op after the
 * receive. The receive waits on the host for its send to be posted. */
static int exchange(pl_pp_exec *ex, int send_peer, const float *send_buf, int recv_peer,
                    float *recv_buf)
{
    if (send_peer < 0 && recv_peer < 0) return 0;
    size_t n = ex->message_floats;
    cudaStream_t ss = send_peer >= 0 ? ex->send_stream[side(ex, send_peer)] : NULL;
    cudaStream_t rs = recv_peer >= 0 ? ex->recv_stream[side(ex, recv_peer)] : NULL;
    cudaError_t e = cudaSuccess;
    if (send_peer >= 0 && ((e = cudaEventRecord(ex->ev_op, ex->stream)) ||
                           (e = cudaStreamWaitEvent(ss, ex->ev_op, 0))))
        return cuda_fail(ex, e, "ordering a send after its op");
    pl_comm_result r = PL_COMM_OK;
    if (send_peer >= 0) r = pl_send_eager(ex->comm, send_buf, n, PL_FLOAT32, send_peer, ss);
    if (!r && recv_peer >= 0) r = pl_recv(ex->comm, recv_buf, n, PL_FLOAT32, recv_peer, rs);
    if (r) return fail(ex->error, sizeof ex->error, "%s", pl_comm_last_error(ex->comm));
    if (recv_peer >= 0 && ((e = cudaEventRecord(ex->ev_comm[0], rs)) ||
                           (e = cudaStreamWaitEvent(ex->stream, ex->ev_comm[0], 0))))
        return cuda_fail(ex, e, "ordering an op after its receive");
    return 0;
}

/* The end of a run: the op stream waits for every message (so a run is
 * complete when ex->stream is, and the next may reuse the buffers). */
static int join_messages(pl_pp_exec *ex)
{
    if (!ex->comm_ready) return 0;
    if (pl_comm_wait_sends(ex->comm)) /* every send taken; the send streams wait for the copies */
        return fail(ex->error, sizeof ex->error, "%s", pl_comm_last_error(ex->comm));
    for (int i = 0; i < 4; i++) {
        cudaStream_t st = i < 2 ? ex->send_stream[i] : ex->recv_stream[i - 2];
        cudaError_t e = cudaEventRecord(ex->ev_comm[i], st);
        if (!e) e = cudaStreamWaitEvent(ex->stream, ex->ev_comm[i], 0);
        if (e) return cuda_fail(ex, e, "joining the message streams");
    }
    return 0;
}

static void emit(pl_pp_exec *ex, const pl_pp_schedule *s, const pl_pp_record *rec)
{
    if (!ex->trace) return;
    pl_event e;
    memset(&e, 0, sizeof e);
    e.rank = ex->world_rank;
    e.lane = PL_LANE_COMPUTE;
    e.kind = (uint8_t)(rec->op.kind == PL_PP_F   ? PL_EV_FORWARD
                       : rec->op.kind == PL_PP_W ? PL_EV_WEIGHT_GRAD
                                                 : PL_EV_BACKWARD);
    e.micro_batch = rec->op.micro_batch;
    e.layer = ex->stage;
    e.chunk = rec->op.chunk;
    e.peer = -1;
    e.start = rec->measured_start;
    e.end = rec->measured_end;
    e.modeled_start = rec->start;
    e.modeled_end = rec->end;
    pl_pp_op_name(rec->op, s->chunks, e.label, sizeof e.label);
    pl_trace_record(ex->trace, &e);
}

static void note_held(pl_pp_exec *ex)
{
    if (!ex->body.held_bytes) return;
    size_t h = ex->body.held_bytes(ex);
    if (h > ex->result.peak_held_bytes) ex->result.peak_held_bytes = h;
    if (h == ex->last_held) return;
    ex->last_held = h;
    char name[32];
    snprintf(name, sizeof name, "activations s%d", ex->stage);
    pl_trace_note_metric(ex->trace, name, (double)h);
}

/* A failure at op i: the message names the stage, the position and the op;
 * the world stops, so that no other stage waits for this one. */
static int op_failed(pl_pp_exec *ex, const pl_pp_schedule *s, int i, const char *what)
{
    char name[24], why[960];
    pl_pp_op_name(s->ops[ex->stage][i], s->chunks, name, sizeof name);
    snprintf(why, sizeof why, "%s", what && *what ? what : "failed");
    snprintf(ex->error, sizeof ex->error, "stage %d, op %d (%s): %s", ex->stage, i, name, why);
    if (ex->comm) pl_comm_abort(ex->comm, ex->error);
    return -1;
}

int pl_pp_run(pl_pp_exec *ex, const pl_pp_schedule *s)
{
    ex->error[0] = '\0';
    pl_pp_report rep;
    if (check_schedule(ex, s, &rep)) return -1;
    int r = ex->stage, n = s->n[r], v = s->chunks;
    if (prepare(ex, s->micro_batches * v, n)) return -1;
    pl_pp_result *res = &ex->result;
    memset(res, 0, sizeof *res);
    res->stage = r;
    res->ops = n;
    res->record = ex->records;
    if (ex->body.held_bytes) {
        ex->last_held = ex->body.held_bytes(ex);
        res->peak_held_bytes = ex->last_held;
    }
    int in_flight = 0, send_peer = -1; /* the send after the op before */
    const float *send_buf = NULL;
    for (int i = 0; i < n; i++) {
        pl_pp_op op = s->ops[r][i];
        int pair = op.micro_batch * v + op.chunk, fwd = op.kind == PL_PP_F;
        op_msgs m = messages_of(ex, s, op);
        float *in = m.recv_peer < 0 ? NULL : pair_buf(ex, pair, fwd ? BUF_IN : BUF_DOUT);
        float *out = m.send_peer < 0 ? NULL : pair_buf(ex, pair, fwd ? BUF_OUT : BUF_DIN);
        if (exchange(ex, send_peer, send_buf, m.recv_peer, in))
            return op_failed(ex, s, i, ex->error);
        if (fwd && ++in_flight > res->peak_in_flight) res->peak_in_flight = in_flight;

        pl_pp_record *rec = &ex->records[i];
        rec->op = op;
        rec->start = pl_device_stream_now(ex->stream);
        rec->measured_start = pl_trace_now();
        ex->error[0] = '\0';
        int rc = 0;
        switch (op.kind) {
        case PL_PP_F:
            rc = ex->body.forward(ex, op.micro_batch, op.chunk, in, out);
            break;
        case PL_PP_BW:
            rc = ex->body.backward(ex, op.micro_batch, op.chunk, in, out);
            break;
        case PL_PP_B:
            rc = ex->body.backward_input(ex, op.micro_batch, op.chunk, in, out);
            break;
        default:
            rc = ex->body.backward_weight(ex, op.micro_batch, op.chunk);
            break;
        }
        if (rc) return op_failed(ex, s, i, ex->error);
        rec->end = pl_device_stream_now(ex->stream);
        rec->measured_end = pl_trace_now();
        emit(ex, s, rec);
        res->busy += rec->end - rec->start;
        res->measured_busy += rec->measured_end - rec->measured_start;
        if (op.kind == PL_PP_BW || op.kind == PL_PP_W) in_flight--; /* its last op */
        note_held(ex);
        send_peer = m.send_peer;
        send_buf = out;
        if (ex->after_op) {
            if (exchange(ex, send_peer, send_buf, -1, NULL)) return op_failed(ex, s, i, ex->error);
            send_peer = -1;
            send_buf = NULL;
            ex->error[0] = '\0';
            if (ex->after_op(ex, i, op)) return op_failed(ex, s, i, ex->error);
        }
    }
    if (exchange(ex, send_peer, send_buf, -1, NULL)) return op_failed(ex, s, n - 1, ex->error);
    if (join_messages(ex)) return op_failed(ex, s, n - 1, ex->error);
    if (n) {
        res->start = ex->records[0].start;
        res->end = ex->records[n - 1].end;
        res->measured_start = ex->records[0].measured_start;
        res->measured_end = ex->records[n - 1].measured_end;
    }
    return 0;
}

/* ---- the pipeline's timing -------------------------------------------------------------- */

enum { T_START, T_END, T_BUSY, T_MSTART, T_MEND, T_MBUSY, T_N };

int pl_pp_measure(pl_pp_exec *ex, int measured, pl_pp_timing *out)
{
    int p = ex->stages;
    double mine[T_N] = {ex->result.start,        ex->result.end,
                        ex->result.busy,         ex->result.measured_start,
                        ex->result.measured_end, ex->result.measured_busy};
    double all[PL_PP_MAX_STAGES * T_N];
    memset(out, 0, sizeof *out);
    if (p == 1)
        memcpy(all, mine, sizeof mine);
    else {
        cudaError_t e = cudaSuccess;
        if (!ex->timing) e = cudaMalloc(&ex->timing, (size_t)(p + 1) * T_N * sizeof(double));
        double *d = ex->timing;
        if (!e) e = cudaMemcpyAsync(d, mine, sizeof mine, cudaMemcpyHostToDevice, ex->stream);
        if (e) return fail(ex->error, sizeof ex->error, "pl_pp_measure: %s", cudaGetErrorName(e));
        pl_comm_result r = pl_all_gather(ex->comm, d, d + T_N, T_N, PL_FLOAT64, ex->stream);
        if (r)
            return fail(ex->error, sizeof ex->error, "pl_pp_measure: %s",
                        pl_comm_last_error(ex->comm));
        e = cudaMemcpyAsync(all, d + T_N, (size_t)p * T_N * sizeof(double), cudaMemcpyDeviceToHost,
                            ex->stream);
        if (!e) e = cudaStreamSynchronize(ex->stream);
        if (e) return fail(ex->error, sizeof ex->error, "pl_pp_measure: %s", cudaGetErrorName(e));
    }
    int o = measured ? T_MSTART - T_START : 0;
    double start = all[T_START + o], end = all[T_END + o], busy = 0, bubble = 0;
    for (int q = 0; q < p; q++) {
        const double *t = all + q * T_N + o;
        if (t[T_START] < start) start = t[T_START];
        if (t[T_END] > end) end = t[T_END];
    }
    out->start = start;
    out->makespan = end - start;
    for (int q = 0; q < p; q++) {
        out->busy[q] = all[q * T_N + o + T_BUSY];
        busy += out->busy[q];
        bubble += out->makespan - out->busy[q];
    }
    out->of_ideal = busy > 0 ? bubble / busy : 0;
    out->of_total = out->makespan > 0 ? bubble / (p * out->makespan) : 0;
    return 0;
}

/* ---- the uniform body -------------------------------------------------------------------- */

int pl_pp_uniform_init(pl_pp_uniform *u, long n, cudaStream_t stream, char *err, size_t cap)
{
    memset(u, 0, sizeof *u);
    if (n < 1) return fail(err, cap, "a uniform stage of %ld floats: it needs at least 1", n);
    cudaError_t e = cudaMalloc((void **)&u->buf, (size_t)n * sizeof(float));
    if (!e) e = cudaMemsetAsync(u->buf, 0, (size_t)n * sizeof(float), stream);
    if (!e) e = cudaStreamSynchronize(stream);
    if (e) {
        cudaFree(u->buf);
        u->buf = NULL;
        return fail(err, cap, "a uniform stage of %ld floats: %s", n, cudaGetErrorName(e));
    }
    u->n = n;
    return 0;
}

void pl_pp_uniform_free(pl_pp_uniform *u)
{
    cudaFree(u->buf);
    memset(u, 0, sizeof *u);
}

/* One kernel of the fixed cost. */
static int uniform_kernel(pl_pp_exec *ex)
{
    pl_pp_uniform *u = ex->user;
    cudaError_t e = pl_k_scale(u->buf, u->n, 1.0f, ex->stream);
    if (e) snprintf(ex->error, sizeof ex->error, "pl_k_scale: %s", cudaGetErrorName(e));
    return e ? -1 : 0;
}

static int uniform_forward(pl_pp_exec *ex, int k, int c, const float *in, float *out)
{
    (void)k, (void)c, (void)in, (void)out;
    return uniform_kernel(ex);
}
static int uniform_backward(pl_pp_exec *ex, int k, int c, const float *dout, float *din)
{
    (void)k, (void)c, (void)dout, (void)din;
    int rc = uniform_kernel(ex);         /* B */
    return rc ? rc : uniform_kernel(ex); /* W */
}
static int uniform_input(pl_pp_exec *ex, int k, int c, const float *dout, float *din)
{
    (void)k, (void)c, (void)dout, (void)din;
    return uniform_kernel(ex);
}
static int uniform_weight(pl_pp_exec *ex, int k, int c)
{
    (void)k, (void)c;
    return uniform_kernel(ex);
}

const pl_pp_body pl_pp_uniform_body = {uniform_forward, uniform_backward, uniform_input,
                                       uniform_weight, NULL};
