/*
 * comm_local_fifo.c — the FIFO of events between ring neighbours in the
 * local engine: a rank records `ready` when its buffer holds a step's data
 * and `read` when it has copied what it needs of its predecessor's, in
 * FIFO slots; its neighbours' streams wait for them (comm_local.h).
 */
#include <stdio.h>

#include "comm_local.h"
#include "paralab/device.h"

/* This rank's events on its device, made at first use. */
pl_comm_result lc_ensure_events(lcomm *c)
{
    group *g = c->g;
    for (int p = 0; p < FIFO; p++) {
        cudaError_t e = cudaSuccess;
        if (!g->ready[c->rank][p])
            e = cudaEventCreateWithFlags(&g->ready[c->rank][p], cudaEventDisableTiming);
        if (!e && !g->read[c->rank][p])
            e = cudaEventCreateWithFlags(&g->read[c->rank][p], cudaEventDisableTiming);
        if (e) return lc_cuda_fail(c, e, "cudaEventCreate");
    }
    return PL_COMM_OK;
}

typedef struct {
    const unsigned long *ctr;
    int who;
    unsigned long need;
} ctr_arg;

static int ctr_reached(void *p)
{
    const ctr_arg *a = p;
    return a->ctr[a->who] >= a->need;
}

/* Waits (on the host) until counter ctr[who] of this group reaches need in
 * this call. */
static pl_comm_result await_ctr(lcomm *c, const unsigned long *ctr, int who, unsigned long need,
                                const char *fmt, int peer)
{
    world *w = c->g->w;
    pl_comm_result r = PL_COMM_OK;
    need += EPOCH(c);
    pthread_mutex_lock(&w->lock);
    if (w->aborted)
        r = lc_fail(c, w->abort_code, "%s", w->abort_msg);
    else if (ctr[who] < need) {
        char *doing = w->doing[c->g->wrank[c->rank]];
        int k =
            snprintf(doing, sizeof w->doing[0], "waits in %s (call #%lu, step %lu of %lu) ",
                     lc_kind_name(CALLS(c)[c->rank].kind), c->seq, c->fifo_step + 1, c->fifo_steps);
        snprintf(doing + k, sizeof w->doing[0] - (size_t)k, fmt, c->g->wrank[peer]);
        ctr_arg a = {ctr, who, need};
        r = lc_wait_until(c, ctr_reached, &a);
        doing[0] = '\0';
    }
    pthread_mutex_unlock(&w->lock);
    return r;
}

/* Sets counter ctr[who] to v in this call and wakes the one member that
 * waits for it. */
static void set_ctr(lcomm *c, unsigned long *ctr, int who, unsigned long v, int waiter)
{
    world *w = c->g->w;
    pthread_mutex_lock(&w->lock);
    ctr[who] = EPOCH(c) + v;
    lc_wake(w, c->g->wrank[waiter]);
    pthread_mutex_unlock(&w->lock);
}

/* Record i of this rank's `ready` (which = 1) or `read` (0) event: into slot
 * i % FIFO, once the one neighbour that waits for it has enqueued its wait
 * for the record the slot held before (i - FIFO). */
static pl_comm_result fifo_record(lcomm *c, int which, unsigned long i, cudaStream_t s, double at)
{
    group *g = c->g;
    int me = c->rank;
    if (i >= FIFO) {
        pl_comm_result r =
            which ? await_ctr(c, g->cons_ready, me, i - FIFO + 1,
                              "for rank %d to take an earlier chunk (the FIFO is full)",
                              MOD(me + 1, g->n))
                  : await_ctr(c, g->cons_read, me, i - FIFO + 1,
                              "for rank %d to take an earlier chunk (the FIFO is full)",
                              MOD(me - 1, g->n));
        if (r) return r;
    }
    cudaEvent_t ev = which ? g->ready[me][i % FIFO] : g->read[me][i % FIFO];
    CK(at >= 0 ? pl_device_event_record_at(ev, s, at) : cudaEventRecord(ev, s), "cudaEventRecord");
    /* the successor waits for `ready`, the predecessor for `read` */
    set_ctr(c, which ? g->rec_ready : g->rec_read, me, i + 1, MOD(me + (which ? 1 : -1), g->n));
    return PL_COMM_OK;
}

pl_comm_result lc_fifo_record(lcomm *c, int which, unsigned long i, cudaStream_t s)
{
    return fifo_record(c, which, i, s, -1);
}

pl_comm_result lc_fifo_record_at(lcomm *c, int which, unsigned long i, cudaStream_t s, double t)
{
    return fifo_record(c, which, i, s, t);
}

/* Makes this rank's stream wait for record i of member `who`'s `ready`
 * (which = 1) or `read` (0), once it is recorded. */
pl_comm_result lc_fifo_wait(lcomm *c, int which, int who, unsigned long i, cudaStream_t s)
{
    group *g = c->g;
    pl_comm_result r =
        await_ctr(c, which ? g->rec_ready : g->rec_read, who, i + 1,
                  which ? "for rank %d's data" : "for rank %d to finish reading this buffer", who);
    if (r) return r;
    CK(cudaStreamWaitEvent(s, which ? g->ready[who][i % FIFO] : g->read[who][i % FIFO], 0),
       "cudaStreamWaitEvent");
    set_ctr(c, which ? g->cons_ready : g->cons_read, who, i + 1, who); /* its FIFO's owner */
    return PL_COMM_OK;
}

/* A copy of `bytes` from member `from`'s buffer at `src` into `dst` here,
 * with the ledger and the step's trace counts. */
pl_comm_result lc_fifo_copy(lcomm *c, int from, void *dst, const void *src, size_t bytes,
                            cudaStream_t s)
{
    group *g = c->g;
    if (!bytes) return PL_COMM_OK;
    CK(cudaMemcpyPeerAsync(dst, g->device[c->rank], src, g->device[from], bytes, s),
       "cudaMemcpyPeerAsync");
    lc_account(g, from, c->rank, bytes);
    c->step_bytes += bytes;
    c->step_peer = g->wrank[from];
    return PL_COMM_OK;
}

pl_comm_result lc_fifo_model_copy(lcomm *c, int from, size_t bytes, cudaStream_t s)
{
    group *g = c->g;
    if (!bytes) return PL_COMM_OK;
    if (pl_device_model_peer_copy(s, bytes, g->device[from], g->device[c->rank]))
        return lc_fail(c, PL_COMM_CUDA_ERROR, "the modeled peer copy from rank %d failed",
                       g->wrank[from]);
    lc_account(g, from, c->rank, bytes);
    c->step_bytes += bytes;
    c->step_peer = g->wrank[from];
    return PL_COMM_OK;
}

/* The end of one step: its trace event (nested in the collective's). */
void lc_step_done(lcomm *c, const char *kind, int chunk, int chunks, int st, int steps)
{
    (void)steps;
    if (c->g->w->trace) { /* the label only for a trace */
        char label[48];
        if (chunks > 1)
            snprintf(label, sizeof label, "%s chunk %d step %d", kind, chunk + 1, st + 1);
        else
            snprintf(label, sizeof label, "%s step %d", kind, st + 1);
        lc_emit(c, &c->step_mark, PL_EV_RING_STEP, label, c->step_bytes, c->step_peer);
    }
    lc_mark_start(c, &c->step_mark, c->call_mark.stream);
    c->step_bytes = 0;
    c->step_peer = -1;
    c->step_seg = -1;
    c->fifo_step++;
}
