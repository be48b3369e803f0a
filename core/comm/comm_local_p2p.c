/*
 * comm_local_p2p.c — point to point in the local engine: posts in the
 * world's mailbox, matched by communicator, sender and receiver; a send
 * outside a group waits for its receive; groups (per host thread) post
 * everything and complete the receives first. An eager send does not
 * wait: it is reaped (its stream made to wait for the receiver's copy)
 * once taken, at the sender's next eager send or at pl_comm_wait_sends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_local.h"
#include "paralab/plural.h"
#include "paralab/watchdog.h"

/* Per host thread: the group nesting and the point-to-point ops queued in it. */
static _Thread_local int group_depth;
static _Thread_local struct queued {
    lcomm *c;
    p2p *op;
    cudaStream_t stream;
} * group_ops;
static _Thread_local int group_nops, group_cap;

/* ---- point to point ----------------------------------------------------------------------- */

static int post_matched(void *p)
{
    const p2p *o = p;
    return o->send ? o->taken : o->matched;
}

/* Finds the oldest post of the other side that matches o (w->lock held). */
static p2p *find_match(world *w, const p2p *o)
{
    for (p2p *q = w->posts; q; q = q->next)
        if (q->send != o->send && q->grp == o->grp && q->from == o->from && q->to == o->to &&
            (o->send ? !q->matched : !q->taken) && q != o)
            return q;
    return NULL;
}

static void append_post(world *w, p2p *o)
{
    p2p **pp = &w->posts;
    while (*pp) pp = &(*pp)->next;
    *pp = o;
}

static void remove_post(world *w, p2p *o)
{
    for (p2p **pp = &w->posts; *pp; pp = &(*pp)->next)
        if (*pp == o) {
            *pp = o->next;
            return;
        }
}

/* Frees a completed op of handle c, or keeps it and its send's `ready` for
 * c's next post: a message then costs no allocation and no event made and
 * destroyed. A receive's `done` went to its send, which gave it back to the
 * receiver's pool (send_complete) or destroys it here. */
static void op_free(lcomm *c, p2p *o)
{
    if (o->ready) {
        if (!c->spare_ready)
            c->spare_ready = o->ready;
        else
            cudaEventDestroy(o->ready);
    }
    if (o->done) cudaEventDestroy(o->done);
    if (!c->spare_op)
        c->spare_op = o;
    else
        free(o);
}

void lc_p2p_free_spares(lcomm *c)
{
    free(c->spare_op);
    if (c->spare_ready) cudaEventDestroy(c->spare_ready);
    c->spare_op = NULL;
    c->spare_ready = NULL;
}

/* A receive's `done` event for world rank `to`: one its sends gave back
 * (w->lock held), else NULL. */
static cudaEvent_t done_take(world *w, int to)
{
    return w->done_pooled[to] ? w->done_pool[to][--w->done_pooled[to]] : NULL;
}

/* Gives a receive's `done` back to its receiver's pool (w->lock held): 0
 * when the pool is full (the caller destroys it). */
static int done_give(world *w, int to, cudaEvent_t ev)
{
    if (w->done_pooled[to] == DONE_POOL) return 0;
    w->done_pool[to][w->done_pooled[to]++] = ev;
    return 1;
}

/* A new event on `device` (made there: a stream of that device records it). */
static cudaError_t event_on(int device, cudaEvent_t *ev)
{
    int cur = device;
    cudaGetDevice(&cur);
    cudaError_t e = cur == device ? cudaSuccess : cudaSetDevice(device);
    if (!e) e = cudaEventCreateWithFlags(ev, cudaEventDisableTiming);
    if (cur != device) cudaSetDevice(cur);
    return e;
}

static pl_comm_result p2p_post(lcomm *c, int send, const void *buf, size_t count, pl_dtype t,
                               int peer, cudaStream_t s, p2p **out)
{
    group *g = c->g;
    const char *what = send ? "send" : "recv";
    *out = NULL;
    if ((unsigned)t >= PL_NUM_DTYPES)
        return lc_fail(
            c, PL_COMM_INVALID_ARGUMENT,
            "%s: type %d is not a pl_dtype (allowed: 0..%d: float, double, int32, int64)", what,
            (int)t, PL_NUM_DTYPES - 1);
    if (peer < 0 || peer >= g->n)
        return lc_fail(c, PL_COMM_INVALID_ARGUMENT, "%s: peer %d is not a rank (allowed: 0..%d)",
                       what, peer, g->n - 1);
    if (peer == c->rank)
        return lc_fail(c, PL_COMM_INVALID_ARGUMENT, "%s: peer %d is this rank itself", what, peer);
    if (count && !buf)
        return lc_fail(c, PL_COMM_INVALID_ARGUMENT, "%s: buffer is NULL with count %zu > 0", what,
                       count);
    if (!lc_check_sizes(c, what, &pl_collectives[send ? PL_CALL_SEND : PL_CALL_RECV], count, t,
                        send ? buf : NULL, send ? NULL : buf, send, !send))
        return PL_COMM_INVALID_ARGUMENT;
    cudaError_t e = cudaSetDevice(g->device[c->rank]);
    if (e) return lc_cuda_fail(c, e, "cudaSetDevice");
    p2p *o = c->spare_op; /* the last one freed, kept (op_free) */
    if (o) {
        c->spare_op = NULL;
        memset(o, 0, sizeof *o);
    } else if (!(o = calloc(1, sizeof *o)))
        return lc_fail(c, PL_COMM_SYSTEM_ERROR, "out of memory");
    o->send = send;
    o->grp = g;
    lc_mark_start(c, &o->posted, s);
    o->from = send ? g->wrank[c->rank] : g->wrank[peer];
    o->to = send ? g->wrank[peer] : g->wrank[c->rank];
    o->count = count;
    o->type = t;
    o->device = g->device[c->rank];
    if (send)
        o->sbuf = buf;
    else
        o->rbuf = (void *)buf;
    if (send) { /* a receive takes its `done` when it copies (recv_copy) */
        o->ready = c->spare_ready;
        c->spare_ready = NULL;
        if ((!o->ready && (e = cudaEventCreateWithFlags(&o->ready, cudaEventDisableTiming))) ||
            (e = cudaEventRecord(o->ready, s))) {
            op_free(c, o);
            return lc_cuda_fail(c, e, "cudaEventRecord");
        }
    }
    pthread_mutex_lock(&g->w->lock);
    append_post(g->w, o);
    lc_wake(g->w, send ? o->to : o->from); /* the one rank it concerns */
    pthread_mutex_unlock(&g->w->lock);
    *out = o;
    return PL_COMM_OK;
}

/* What this rank waits for, for the deadlock report (w->lock held). */
static void say_waiting(world *w, int me, const p2p *o)
{
    w->waits_on[me] = NULL;
    if (o->send)
        snprintf(w->doing[me], sizeof w->doing[0],
                 "waits in send to rank %d (%zu %s%s) for the matching receive", o->to, o->count,
                 pl_dtype_name(o->type), pl_s((long long)o->count));
    else
        snprintf(w->doing[me], sizeof w->doing[0],
                 "waits in recv from rank %d (%zu %s%s) for the matching send", o->from, o->count,
                 pl_dtype_name(o->type), pl_s((long long)o->count));
}

void lc_p2p_say_waiting(world *w)
{
    for (int r = 0; r < w->n; r++)
        if (w->waits_on[r]) say_waiting(w, r, w->waits_on[r]);
}

/* A receive waits for its send to be posted: the send, or NULL when the
 * watchdog ran out or the world stopped (w->lock held). */
typedef struct {
    world *w;
    const p2p *o;
} match_arg;

static int has_match(void *p)
{
    const match_arg *a = p;
    return find_match(a->w, a->o) != NULL;
}

static p2p *await_send(world *w, int me, const p2p *o)
{
    double since = lc_free_clock(w);
    unsigned long long seen = pl_watchdog_progress_count();
    p2p *m;
    lc_yield_until(w, me, has_match, &(match_arg){w, o});
    while (!(m = find_match(w, o)) && !w->aborted)
        if (lc_watch(w, &w->cv[me], &since, &seen) && !find_match(w, o)) {
            lc_trip(w);
            break;
        }
    return w->aborted ? NULL : m;
}

/* The send m and the receive o disagree about count or type: both fail,
 * with one message (w->lock held). */
static pl_comm_result refuse_mismatch(lcomm *c, const p2p *o, p2p *m)
{
    snprintf(m->msg, sizeof m->msg,
             "rank %d sends %zu %s%s to rank %d, but rank %d receives %zu %s%s from rank %d",
             m->from, m->count, pl_dtype_name(m->type), pl_s((long long)m->count), m->to, o->to,
             o->count, pl_dtype_name(o->type), pl_s((long long)o->count), o->from);
    m->err = PL_COMM_MISMATCH;
    m->taken = 1;
    lc_wake(c->g->w, m->from); /* its sender */
    return lc_fail(c, PL_COMM_MISMATCH, "%s", m->msg);
}

/* The receive's copy, out of the send's buffer once the send's `ready` has
 * passed, then `done`, which the sender's stream will wait for; counted in
 * the ledger (w->lock held; released around the enqueues). */
static pl_comm_result recv_copy(lcomm *c, p2p *o, p2p *m, cudaStream_t s)
{
    world *w = c->g->w;
    pl_comm_result r = PL_COMM_OK;
    const void *src = m->sbuf;
    int sdev = m->device;
    cudaEvent_t ready = m->ready;
    o->done = done_take(w, o->to);
    pthread_mutex_unlock(&w->lock);
    cudaError_t e = o->done ? cudaSuccess : event_on(o->device, &o->done);
    if (!e) e = cudaStreamWaitEvent(s, ready, 0);
    size_t bytes = o->count * pl_dtype_size((pl_dtype)o->type);
    if (!e && bytes) e = cudaMemcpyPeerAsync(o->rbuf, o->device, src, sdev, bytes, s);
    if (!e) e = cudaEventRecord(o->done, s);
    pthread_mutex_lock(&w->lock);
    if (e) {
        m->err = PL_COMM_CUDA_ERROR;
        snprintf(m->msg, sizeof m->msg, "rank %d's receive failed: %s", o->to, cudaGetErrorName(e));
        r = lc_cuda_fail(c, e, "recv");
    } else if (bytes) { /* an empty message moves nothing: not counted */
        lc_count_bytes(w, o->from, o->to, bytes);
        group *g = c->g;
        int from = -1, to = -1;
        for (int i = 0; i < g->n; i++) {
            if (g->wrank[i] == o->from) from = i;
            if (g->wrank[i] == o->to) to = i;
        }
        if (from >= 0 && to >= 0) lc_count_own(g, from, to, bytes);
    }
    m->done = o->done; /* the sender waits for the copy */
    m->taken = 1;
    o->done = NULL;
    lc_wake(w, m->from); /* its sender */
    return r;
}

/* A receive: waits for its send, checks they agree, copies (w->lock held). */
static pl_comm_result recv_complete(lcomm *c, p2p *o, cudaStream_t s)
{
    world *w = c->g->w;
    p2p *m = await_send(w, c->g->wrank[c->rank], o);
    if (!m) return lc_fail(c, w->aborted ? w->abort_code : PL_COMM_TIMEOUT, "%s", w->abort_msg);
    if (m->count != o->count || m->type != o->type) return refuse_mismatch(c, o, m);
    return recv_copy(c, o, m, s);
}

/* A send: waits until its receive has taken it, then makes this stream
 * wait for the receive's copy (w->lock held; released around the wait). */
static pl_comm_result send_complete(lcomm *c, p2p *o, cudaStream_t s)
{
    world *w = c->g->w;
    pl_comm_result r = lc_wait_until(c, post_matched, o);
    if (!r && o->err) r = lc_fail(c, o->err, "%s", o->msg);
    if (!r && o->done) {
        cudaEvent_t done = o->done;
        pthread_mutex_unlock(&w->lock);
        cudaError_t e = cudaStreamWaitEvent(s, done, 0);
        pthread_mutex_lock(&w->lock);
        if (e)
            r = lc_cuda_fail(c, e, "send");
        else if (done_give(w, o->to, done)) /* waited for: its receiver may record it again */
            o->done = NULL;
    }
    return r;
}

/* The op's trace event, from its post to now. */
static void trace_op(lcomm *c, const p2p *o)
{
    if (!c->g->w->trace) return;
    size_t bytes = o->count * pl_dtype_size((pl_dtype)o->type);
    char label[48];
    snprintf(label, sizeof label, o->send ? "send to %d" : "recv from %d",
             o->send ? o->to : o->from);
    lc_emit(c, &o->posted, o->send ? PL_EV_SEND : PL_EV_RECV, label, bytes,
            o->send ? o->to : o->from);
}

/* Completes a posted op: a receive waits for its send and copies it; a send
 * waits until it has been copied. Frees the op. */
static pl_comm_result p2p_complete(lcomm *c, p2p *o, cudaStream_t s)
{
    world *w = c->g->w;
    int me = c->g->wrank[c->rank];
    pthread_mutex_lock(&w->lock);
    w->waits_on[me] = o; /* written out only for a report (lc_p2p_say_waiting) */
    pl_comm_result r = o->send ? send_complete(c, o, s) : recv_complete(c, o, s);
    remove_post(w, o);
    w->waits_on[me] = NULL;
    w->doing[me][0] = '\0';
    pthread_mutex_unlock(&w->lock);
    if (!r) trace_op(c, o);
    op_free(c, o);
    return r;
}

static pl_comm_result p2p_call(lcomm *c, int send, const void *buf, size_t count, pl_dtype t,
                               int peer, cudaStream_t s)
{
    p2p *o;
    pl_comm_result r = p2p_post(c, send, buf, count, t, peer, s, &o);
    if (r) return r;
    if (group_depth == 0) return p2p_complete(c, o, s);
    if (group_nops == group_cap) {
        int cap = group_cap ? 2 * group_cap : 8;
        struct queued *q = realloc(group_ops, (size_t)cap * sizeof *q);
        if (!q) return lc_fail(c, PL_COMM_SYSTEM_ERROR, "out of memory");
        group_ops = q;
        group_cap = cap;
    }
    group_ops[group_nops++] = (struct queued){c, o, s};
    return PL_COMM_OK;
}

pl_comm_result lc_send(pl_comm *pc, const void *buf, size_t count, pl_dtype t, int peer,
                       cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    return p2p_call(c, 1, buf, count, t, peer, s);
}

pl_comm_result lc_recv(pl_comm *pc, void *buf, size_t count, pl_dtype t, int peer, cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    return p2p_call(c, 0, buf, count, t, peer, s);
}

/* ---- eager sends -------------------------------------------------------------------------- */

/* Reaps c's eager sends that have been taken (all of them, waiting for each,
 * when `wait`): each one's stream waits for its copy, its trace event is
 * recorded, and it is freed. The first failure is returned; a failed send
 * is reaped too. */
static pl_comm_result reap_eager(lcomm *c, int wait)
{
    world *w = c->g->w;
    int me = c->g->wrank[c->rank];
    pl_comm_result first = PL_COMM_OK;
    for (p2p **pp = &c->eager; *pp;) {
        p2p *o = *pp;
        pthread_mutex_lock(&w->lock);
        if (!wait && !o->taken && !w->aborted) {
            pthread_mutex_unlock(&w->lock);
            pp = &o->eager_next;
            continue;
        }
        w->waits_on[me] = o;
        pl_comm_result r = send_complete(c, o, o->stream);
        remove_post(w, o);
        w->waits_on[me] = NULL;
        w->doing[me][0] = '\0';
        pthread_mutex_unlock(&w->lock);
        if (!r) trace_op(c, o);
        if (r && !first) first = r;
        *pp = o->eager_next;
        op_free(c, o);
    }
    return first;
}

pl_comm_result lc_send_eager(pl_comm *pc, const void *buf, size_t count, pl_dtype t, int peer,
                             cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    p2p *o;
    pl_comm_result r = p2p_post(c, 1, buf, count, t, peer, s, &o);
    if (r) return r;
    o->stream = s;
    p2p **pp = &c->eager;
    while (*pp) pp = &(*pp)->eager_next;
    *pp = o;
    return reap_eager(c, 0);
}

pl_comm_result lc_wait_sends(pl_comm *pc) { return reap_eager((lcomm *)pc, 1); }

void lc_drop_eager(lcomm *c)
{
    world *w = c->g->w;
    while (c->eager) {
        p2p *o = c->eager;
        c->eager = o->eager_next;
        pthread_mutex_lock(&w->lock);
        remove_post(w, o);
        pthread_mutex_unlock(&w->lock);
        op_free(c, o);
    }
}

int lc_in_group(void) { return group_depth > 0; }

pl_comm_result lc_group_start(void)
{
    group_depth++;
    return PL_COMM_OK;
}

pl_comm_result lc_group_end(void)
{
    if (group_depth == 0) return PL_COMM_INVALID_ARGUMENT;
    if (--group_depth > 0) return PL_COMM_OK;
    /* everything was posted as it was called; receives first, so that every
     * send of the group finds its copy made */
    pl_comm_result first = PL_COMM_OK;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < group_nops; i++) {
            struct queued *q = &group_ops[i];
            if (!q->op || q->op->send != pass) continue;
            pl_comm_result r = p2p_complete(q->c, q->op, q->stream);
            q->op = NULL;
            if (r && !first) first = r;
        }
    free(group_ops); /* per thread: a rank thread may end after its last group */
    group_ops = NULL;
    group_nops = group_cap = 0;
    return first;
}
