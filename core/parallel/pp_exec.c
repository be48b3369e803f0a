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
    cudaFree(ex->pool);
    cudaFree(ex->timing);
    free(ex->slot_of);
    free(ex->free_slots);
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

/* A slot's four message buffers: the activation received (in) and sent
 * (out), the gradient received (dout) and sent (din). */
enum { BUF_IN, BUF_OUT, BUF_DOUT, BUF_DIN };
static float *slot_buf(const pl_pp_exec *ex, int slot, int which)
{
    if (!ex->message_floats) return NULL;
    return ex->pool + ((size_t)slot * 4 + (size_t)which) * ex->message_floats;
}

/* Room for `slots` slots of messages, m v (k, c) pairs and n records. */
static int prepare(pl_pp_exec *ex, int slots, int pairs, int n)
{
    if (slots > ex->pool_slots) {
        cudaFree(ex->pool);
        ex->pool = NULL;
        ex->pool_slots = 0;
        size_t bytes = (size_t)slots * 4 * ex->message_floats * sizeof(float);
        if (bytes) {
            cudaError_t e = cudaMalloc((void **)&ex->pool, bytes);
            if (e)
                return fail(ex->error, sizeof ex->error,
                            "stage %d: cannot allocate %d message buffers of %zu floats: %s",
                            ex->stage, 4 * slots, ex->message_floats, cudaGetErrorName(e));
            e = cudaMemset(ex->pool, 0, bytes);
            if (e)
                return fail(ex->error, sizeof ex->error, "stage %d: cudaMemset: %s", ex->stage,
                            cudaGetErrorName(e));
        }
        free(ex->free_slots);
        ex->free_slots = malloc((size_t)slots * sizeof *ex->free_slots);
        if (!ex->free_slots) return fail(ex->error, sizeof ex->error, "out of host memory");
        ex->pool_slots = slots;
    }
    if (pairs > ex->slot_cap) {
        free(ex->slot_of);
        ex->slot_of = malloc((size_t)pairs * sizeof *ex->slot_of);
        if (!ex->slot_of) return fail(ex->error, sizeof ex->error, "out of host memory");
        ex->slot_cap = pairs;
    }
    if (n > ex->records_cap) {
        free(ex->records);
        ex->records = malloc((size_t)n * sizeof *ex->records);
        if (!ex->records) return fail(ex->error, sizeof ex->error, "out of host memory");
        ex->records_cap = n;
    }
    for (int i = 0; i < pairs; i++) ex->slot_of[i] = -1;
    for (int i = 0; i < ex->pool_slots; i++) ex->free_slots[i] = ex->pool_slots - 1 - i;
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
    return pl_pp_validate(s, 1, 1, 1, rep, err, cap) ? -1 : 0;
}

/* Posts the pending send and this op's receive in one group. */
static int exchange(pl_pp_exec *ex, int send_peer, const float *send_buf, int recv_peer,
                    float *recv_buf)
{
    if (send_peer < 0 && recv_peer < 0) return 0;
    size_t n = ex->message_floats;
    pl_comm_result r = pl_group_start(), r2 = PL_COMM_OK;
    if (!r && send_peer >= 0) r = pl_send(ex->comm, send_buf, n, PL_FLOAT32, send_peer, ex->stream);
    if (!r && recv_peer >= 0) r = pl_recv(ex->comm, recv_buf, n, PL_FLOAT32, recv_peer, ex->stream);
    r2 = pl_group_end();
    return r ? (int)r : (int)r2;
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
    if (prepare(ex, rep.peak_in_flight[r], s->micro_batches * v, n)) return -1;
    pl_pp_result *res = &ex->result;
    memset(res, 0, sizeof *res);
    res->stage = r;
    res->ops = n;
    res->record = ex->records;
    if (ex->body.held_bytes) {
        ex->last_held = ex->body.held_bytes(ex);
        res->peak_held_bytes = ex->last_held;
    }
    int free_top = ex->pool_slots, in_flight = 0;
    int send_peer = -1, release = -1; /* the send after the op before; its slot to give back */
    const float *send_buf = NULL;
    for (int i = 0; i < n; i++) {
        pl_pp_op op = s->ops[r][i];
        int pair = op.micro_batch * v + op.chunk;
        if (op.kind == PL_PP_F) {
            /* the validator proved at most peak_in_flight pairs are held at once */
            ex->slot_of[pair] = ex->free_slots[--free_top];
            in_flight++;
        }
        int slot = ex->slot_of[pair];
        op_msgs m = messages_of(ex, s, op);
        float *recv_buf =
            m.recv_peer < 0 ? NULL : slot_buf(ex, slot, op.kind == PL_PP_F ? BUF_IN : BUF_DOUT);
        if (exchange(ex, send_peer, send_buf, m.recv_peer, recv_buf))
            return op_failed(ex, s, i, pl_comm_last_error(ex->comm));
        if (release >= 0) ex->free_slots[free_top++] = release; /* its last send is done */
        release = -1;
        if (in_flight > res->peak_in_flight) res->peak_in_flight = in_flight;

        pl_pp_record *rec = &ex->records[i];
        rec->op = op;
        rec->start = pl_device_stream_now(ex->stream);
        rec->measured_start = pl_trace_now();
        ex->error[0] = '\0';
        float *out = m.send_peer < 0 ? NULL : slot_buf(ex, slot, op.kind == PL_PP_F ? BUF_OUT
                                                                                    : BUF_DIN);
        const float *in = recv_buf;
        int rc = 0;
        switch (op.kind) {
        case PL_PP_F: rc = ex->body.forward(ex, op.micro_batch, op.chunk, in, out); break;
        case PL_PP_BW: rc = ex->body.backward(ex, op.micro_batch, op.chunk, in, out); break;
        case PL_PP_B: rc = ex->body.backward_input(ex, op.micro_batch, op.chunk, in, out); break;
        default: rc = ex->body.backward_weight(ex, op.micro_batch, op.chunk); break;
        }
        if (rc) return op_failed(ex, s, i, ex->error);
        rec->end = pl_device_stream_now(ex->stream);
        rec->measured_end = pl_trace_now();
        emit(ex, s, rec);
        res->busy += rec->end - rec->start;
        res->measured_busy += rec->measured_end - rec->measured_start;
        if (op.kind == PL_PP_BW || op.kind == PL_PP_W) { /* its last op: the slot goes back */
            release = slot;
            ex->slot_of[pair] = -1;
            in_flight--;
        }
        note_held(ex);
        send_peer = m.send_peer;
        send_buf = out;
    }
    if (exchange(ex, send_peer, send_buf, -1, NULL))
        return op_failed(ex, s, n - 1, pl_comm_last_error(ex->comm));
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
    double mine[T_N] = {ex->result.start,          ex->result.end,
                        ex->result.busy,           ex->result.measured_start,
                        ex->result.measured_end,   ex->result.measured_busy};
    double all[PL_PP_MAX_STAGES * T_N];
    memset(out, 0, sizeof *out);
    if (p == 1)
        memcpy(all, mine, sizeof mine);
    else {
        cudaError_t e = cudaSuccess;
        if (!ex->timing)
            e = cudaMalloc(&ex->timing, (size_t)(p + 1) * T_N * sizeof(double));
        double *d = ex->timing;
        if (!e) e = cudaMemcpyAsync(d, mine, sizeof mine, cudaMemcpyHostToDevice, ex->stream);
        if (e) return fail(ex->error, sizeof ex->error, "pl_pp_measure: %s", cudaGetErrorName(e));
        pl_comm_result r = pl_all_gather(ex->comm, d, d + T_N, T_N, PL_FLOAT64, ex->stream);
        if (r)
            return fail(ex->error, sizeof ex->error, "pl_pp_measure: %s",
                        pl_comm_last_error(ex->comm));
        e = cudaMemcpyAsync(all, d + T_N, (size_t)p * T_N * sizeof(double),
                            cudaMemcpyDeviceToHost, ex->stream);
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

int pl_pp_uniform_init(pl_pp_uniform *u, long n, char *err, size_t cap)
{
    memset(u, 0, sizeof *u);
    if (n < 1) return fail(err, cap, "a uniform stage of %ld floats: it needs at least 1", n);
    cudaError_t e = cudaMalloc((void **)&u->buf, (size_t)n * sizeof(float));
    if (!e) e = cudaMemset(u->buf, 0, (size_t)n * sizeof(float));
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
    int rc = uniform_kernel(ex); /* B */
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
