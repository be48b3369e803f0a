/*
 * comm_local_algorithms.c — the local engine's algorithms: the ring
 * (reduce-scatter, all-gather, and all-reduce as the two), the chain
 * (broadcast, reduce), both chunked and pipelined, and the pairwise
 * exchange (all-to-all); the six collectives on them, each traced as one
 * event.
 */
#include "comm_local.h"
#include "paralab/device.h"
#include "paralab/kernels.h"

/* ---- buffers and segments ----------------------------------------------------------------- */

/* The scratch a step reduces from, kept between calls. */
static pl_comm_result ensure_scratch(lcomm *c, size_t bytes)
{
    if (bytes <= c->scratch_bytes) return PL_COMM_OK;
    cudaFree(c->scratch);
    c->scratch = NULL;
    c->scratch_bytes = 0;
    cudaError_t e = cudaMalloc(&c->scratch, bytes);
    if (e) return lc_cuda_fail(c, e, "cudaMalloc of the engine's scratch buffer");
    c->scratch_bytes = bytes;
    return PL_COMM_OK;
}

/* The work buffer, kept between calls: reusing it is safe because every call
 * ends with this rank's stream waiting for its successor's last read, and
 * growing it frees the old one with cudaFree, which waits for the device.
 * NULL when out of memory. Call on this rank's device. */
static void *ensure_work(lcomm *c, size_t bytes)
{
    if (bytes > c->work_bytes) {
        cudaFree(c->work);
        c->work = NULL;
        c->work_bytes = 0;
        if (cudaMalloc(&c->work, bytes) != cudaSuccess) return NULL;
        c->work_bytes = bytes;
    }
    return c->work;
}

/* Segment k of N over count elements: [start, start+len), lengths differ by
 * at most one. */
static size_t seg_start(size_t count, int n, int k) { return count * (size_t)k / (size_t)n; }
static size_t seg_len(size_t count, int n, int k)
{
    return seg_start(count, n, k + 1) - seg_start(count, n, k);
}

/* Chunks of at most `ce` elements over a segment of at most `maxlen`. */
static int chunks_of(size_t maxlen, size_t ce)
{
    return maxlen ? (int)((maxlen + ce - 1) / ce) : 1;
}

/* Elements per chunk for elements of es bytes. */
static size_t chunk_elems(const lcomm *c, size_t es)
{
    size_t ce = c->g->w->chunk_bytes / es;
    return ce ? ce : 1;
}

/* ---- the ring, chunked and pipelined -------------------------------------------------------- */

/* The ring over `buf` (this rank's copy, in place), chunk after chunk, as
 * NCCL's ring loops over its chunks: for each chunk, the reduce-scatter
 * steps (rs) — segment by segment, add the predecessor's partial sum — then
 * the all-gather steps (ag) — pass each finished segment on. Segment k is
 * seg_start/seg_len of count over N (`blocks` = 0), or block k of `count`
 * elements (all_gather, `blocks` = 1). Each chunk-step waits, on the device,
 * for the predecessor's data of its previous step and for the successor to
 * have read what it overwrites; the host threads only wait for their two
 * neighbours, at most FIFO steps apart, so a rank runs ahead of the others
 * instead of meeting all of them at every step. */
static pl_comm_result ring_run(lcomm *c, const char *kind, char *buf, size_t count, int type,
                               int op, int rs, int ag, int blocks, cudaStream_t s)
{
    group *g = c->g;
    int n = g->n, r = c->rank, prev = MOD(r - 1, n), next = MOD(r + 1, n);
    size_t es = pl_dtype_size((pl_dtype)type), ce = chunk_elems(c, es);
    char *prevbuf = RECVS(c)[prev];
    int per_chunk = (rs + ag) * (n - 1);
    /* simulated device memory is host memory: a reduce step reads its
     * neighbour's buffer directly (lc_fifo_model_copy) */
    int direct = pl_device_memory_is_host();
    int chunks = chunks_of(blocks ? count : (count + (size_t)n - 1) / (size_t)n, ce);
    pl_comm_result res;
    c->fifo_step = 0;
    c->fifo_steps = (unsigned long)chunks * (unsigned long)per_chunk;
    if (rs && (res = ensure_scratch(c, ce * es))) return res;
    /* record 0: this rank's buffer as the call found it (after its own copies) */
    if ((res = lc_fifo_record(c, 1, 0, s)) || (res = lc_fifo_record(c, 0, 0, s))) return res;
    unsigned long i = 0; /* the step: it waits for records i, and makes records i + 1 */
    for (int ch = 0; ch < chunks; ch++)
        for (int st = 0; st < per_chunk; st++, i++) {
            int reduce = st < rs * (n - 1);
            int seg = reduce ? MOD(r - st - 2, n) : MOD(r - (st - rs * (n - 1)) - 1, n);
            size_t off = blocks ? (size_t)seg * count : seg_start(count, n, seg);
            size_t len = blocks ? count : seg_len(count, n, seg);
            size_t lo = (size_t)ch * ce, m = lo < len ? (len - lo < ce ? len - lo : ce) : 0;
            char *mine = buf + (off + lo) * es;
            const char *theirs = prevbuf + (off + lo) * es;
            if ((res = lc_fifo_wait(c, 1, prev, i, s)) || (res = lc_fifo_wait(c, 0, next, i, s)))
                return res;
            if (reduce && direct) {
                /* one pass: the copy on the modeled clock only, the reduction
                 * out of the neighbour's buffer, then `read`, at the copy's end */
                if ((res = lc_fifo_model_copy(c, prev, m * es, s))) return res;
                double copied = pl_device_stream_now(s);
                if (m) CK(pl_k_reduce(mine, theirs, m, type, op, s), "the reduction kernel");
                if ((res = lc_fifo_record_at(c, 0, i + 1, s, copied))) return res;
            } else {
                if ((res = lc_fifo_copy(c, prev, reduce ? c->scratch : mine, theirs, m * es, s)))
                    return res;
                if ((res = lc_fifo_record(c, 0, i + 1, s))) return res;
                if (reduce && m)
                    CK(pl_k_reduce(mine, c->scratch, m, type, op, s), "the reduction kernel");
            }
            if ((res = lc_fifo_record(c, 1, i + 1, s))) return res;
            c->step_seg = seg; /* into the step's event: which segment came in */
            lc_step_done(c, kind, ch, chunks, st, per_chunk);
        }
    /* this buffer may change again only once the successor has read it */
    return lc_fifo_wait(c, 0, next, i, s);
}

/* A chain, chunk after chunk: position 0 holds the data, position p copies
 * each chunk from position p-1 as soon as p-1 has it (broadcast: the copy
 * is the result; reduce: it is reduced into this rank's own partial sum).
 * With C chunks the last position has everything after N-1+C-1 chunk
 * steps, not (N-1)·C: that is the pipelining. `mine` is what position p+1
 * reads. */
static pl_comm_result chain_run(lcomm *c, const char *kind, int pos, char *mine, size_t count,
                                int type, int op, int reduce, cudaStream_t s)
{
    group *g = c->g;
    int n = g->n, r = c->rank, prev = MOD(r - 1, n), next = MOD(r + 1, n);
    size_t es = pl_dtype_size((pl_dtype)type), ce = chunk_elems(c, es);
    const char *prevbuf = RECVS(c)[prev];
    int chunks = chunks_of(count, ce);
    pl_comm_result res;
    c->fifo_step = 0;
    c->fifo_steps = (unsigned long)chunks;
    if (reduce && pos > 0 && (res = ensure_scratch(c, ce * es))) return res;
    for (int ch = 0; ch < chunks; ch++) {
        size_t lo = (size_t)ch * ce, m = count - lo < ce ? count - lo : ce;
        if (pos > 0) {
            if ((res = lc_fifo_wait(c, 1, prev, (unsigned long)ch + 1, s))) return res;
            if ((res = lc_fifo_copy(c, prev, reduce ? c->scratch : mine + lo * es,
                                    prevbuf + lo * es, m * es, s)))
                return res;
            if (reduce)
                CK(pl_k_reduce(mine + lo * es, c->scratch, m, type, op, s), "the reduction kernel");
        }
        if (pos < n - 1 && (res = lc_fifo_record(c, 1, (unsigned long)ch + 1, s))) return res;
        lc_step_done(c, kind, ch, chunks, pos > 0 ? pos - 1 : 0, n - 1);
    }
    /* the predecessor's buffer: read to the end; mine: wait for the successor */
    if (pos > 0 && (res = lc_fifo_record(c, 0, 1, s))) return res;
    if (pos < n - 1) return lc_fifo_wait(c, 0, next, 1, s);
    return PL_COMM_OK;
}

/* ---- the collectives ------------------------------------------------------------------ */

static pl_comm_result all_reduce_impl(lcomm *c, const void *send, void *recv, size_t count,
                                      pl_dtype t, pl_redop op, cudaStream_t s)
{
    const pl_collective *d = &pl_collectives[PL_CALL_ALL_REDUCE];
    call k = {.kind = PL_CALL_ALL_REDUCE, .count = count, .type = t, .op = op};
    k.bad = !lc_check_args(c, &k, send, recv);
    pl_comm_result r = lc_begin(c, &k, send, recv, s);
    if (r || count == 0) return r;
    size_t es = pl_dtype_size(t), bytes = count * es;
    int n = c->g->n;
    if (!pl_collective_in_place(d, send, recv, count, t, c->rank))
        CK(cudaMemcpyAsync(recv, send, bytes, cudaMemcpyDeviceToDevice, s), "copy");
    if (n > 1 && (r = ring_run(c, d->name, recv, count, t, op, 1, 1, 0, s))) return r;
    if (op == PL_AVG && n > 1) CK(pl_k_divide(recv, count, t, n, s), "the division kernel");
    return PL_COMM_OK;
}

static pl_comm_result reduce_scatter_impl(lcomm *c, const void *send, void *recv, size_t recvcount,
                                          pl_dtype t, pl_redop op, cudaStream_t s)
{
    const pl_collective *d = &pl_collectives[PL_CALL_REDUCE_SCATTER];
    call k = {.kind = PL_CALL_REDUCE_SCATTER, .count = recvcount, .type = t, .op = op};
    k.bad = !lc_check_args(c, &k, send, recv);
    /* the ring works in a copy of send: every member's scratch `work` */
    pl_comm_result r = PL_COMM_OK;
    group *g = c->g;
    int n = g->n;
    size_t es = k.bad ? 0 : pl_dtype_size(t), total = pl_collective_send_count(d, recvcount, n);
    void *work = NULL;
    if (!k.bad && recvcount && n > 1) {
        cudaSetDevice(g->device[c->rank]);
        work = ensure_work(c, total * es);
    }
    r = lc_begin(c, &k, send, work, s);
    if (r || recvcount == 0) return r;
    if (n == 1) {
        if (!pl_collective_in_place(d, send, recv, recvcount, t, c->rank))
            CK(cudaMemcpyAsync(recv, send, recvcount * es, cudaMemcpyDeviceToDevice, s), "copy");
        return PL_COMM_OK;
    }
    if (!work) return lc_fail(c, PL_COMM_SYSTEM_ERROR, "cudaMalloc of the reduce_scatter scratch");
    /* segment j = block j: N divides the total */
    cudaError_t e0 = cudaMemcpyAsync(work, send, total * es, cudaMemcpyDeviceToDevice, s);
    if (e0) r = lc_cuda_fail(c, e0, "copy");
    if (!r) r = ring_run(c, d->name, work, total, t, op, 1, 0, 0, s);
    if (!r && op == PL_AVG)
        if (pl_k_divide((char *)work + (size_t)c->rank * recvcount * es, recvcount, t, n, s))
            r = lc_fail(c, PL_COMM_CUDA_ERROR, "the division kernel");
    if (!r) {
        cudaError_t e = cudaMemcpyAsync(recv, (char *)work + (size_t)c->rank * recvcount * es,
                                        recvcount * es, cudaMemcpyDeviceToDevice, s);
        if (e) r = lc_cuda_fail(c, e, "copy");
    }
    return r;
}

static pl_comm_result all_gather_impl(lcomm *c, const void *send, void *recv, size_t sendcount,
                                      pl_dtype t, cudaStream_t s)
{
    const pl_collective *d = &pl_collectives[PL_CALL_ALL_GATHER];
    call k = {.kind = PL_CALL_ALL_GATHER, .count = sendcount, .type = t};
    k.bad = !lc_check_args(c, &k, send, recv);
    pl_comm_result r = lc_begin(c, &k, send, recv, s);
    if (r || sendcount == 0) return r;
    int n = c->g->n;
    size_t es = pl_dtype_size(t), bytes = sendcount * es;
    char *mine = (char *)recv + (size_t)c->rank * bytes; /* this rank's block */
    if (!pl_collective_in_place(d, send, recv, sendcount, t, c->rank))
        CK(cudaMemcpyAsync(mine, send, bytes, cudaMemcpyDeviceToDevice, s), "copy");
    if (n == 1) return PL_COMM_OK;
    return ring_run(c, d->name, recv, sendcount, t, PL_SUM, 0, 1, 1, s);
}

static pl_comm_result broadcast_impl(lcomm *c, const void *send, void *recv, size_t count,
                                     pl_dtype t, int root, cudaStream_t s)
{
    const pl_collective *d = &pl_collectives[PL_CALL_BROADCAST];
    call k = {.kind = PL_CALL_BROADCAST, .count = count, .type = t, .root = root};
    k.bad = !lc_check_args(c, &k, send, recv);
    pl_comm_result r = lc_begin(c, &k, send, recv, s);
    if (r || count == 0) return r;
    group *g = c->g;
    int n = g->n, me = c->rank;
    size_t bytes = count * pl_dtype_size(t);
    if (me == root && !pl_collective_in_place(d, send, recv, count, t, me))
        CK(cudaMemcpyAsync(recv, send, bytes, cudaMemcpyDeviceToDevice, s), "copy");
    if (n == 1) return PL_COMM_OK;
    /* a chain root -> root+1 -> ...: position p copies from p-1 */
    return chain_run(c, d->name, MOD(me - root, n), recv, count, t, PL_SUM, 0, s);
}

static pl_comm_result reduce_impl(lcomm *c, const void *send, void *recv, size_t count, pl_dtype t,
                                  pl_redop op, int root, cudaStream_t s)
{
    const pl_collective *d = &pl_collectives[PL_CALL_REDUCE];
    call k = {.kind = PL_CALL_REDUCE, .count = count, .type = t, .op = op, .root = root};
    k.bad = !lc_check_args(c, &k, send, recv);
    group *g = c->g;
    int n = g->n, me = c->rank;
    size_t es = k.bad ? 1 : pl_dtype_size(t), bytes = count * es;
    /* a chain root+1 -> root+2 -> ... -> root: each member adds its send to
     * the partial sum it receives; non-roots accumulate in a scratch copy */
    void *acc = NULL;
    if (!k.bad && count && n > 1 && me != root) {
        cudaSetDevice(g->device[me]);
        acc = ensure_work(c, bytes);
    }
    pl_comm_result r = lc_begin(c, &k, send, me == root ? recv : acc, s);
    if (r || count == 0) return r;
    if (n == 1) {
        if (!pl_collective_in_place(d, send, recv, count, t, me))
            CK(cudaMemcpyAsync(recv, send, bytes, cudaMemcpyDeviceToDevice, s), "copy");
        return PL_COMM_OK;
    }
    void *mine = me == root ? recv : acc;
    if (!mine) return lc_fail(c, PL_COMM_SYSTEM_ERROR, "cudaMalloc of the reduce scratch");
    if (send != mine) CK(cudaMemcpyAsync(mine, send, bytes, cudaMemcpyDeviceToDevice, s), "copy");
    /* root is position n-1 */
    r = chain_run(c, d->name, MOD(me - root - 1, n), mine, count, t, op, 1, s);
    if (!r && me == root && op == PL_AVG && pl_k_divide(recv, count, t, n, s))
        r = lc_fail(c, PL_COMM_CUDA_ERROR, "the division kernel");
    return r;
}

static pl_comm_result all_to_all_impl(lcomm *c, const void *send, void *recv, size_t count,
                                      pl_dtype t, cudaStream_t s)
{
    const char *name = pl_collectives[PL_CALL_ALL_TO_ALL].name;
    call k = {.kind = PL_CALL_ALL_TO_ALL, .count = count, .type = t};
    k.bad = !lc_check_args(c, &k, send, recv); /* send == recv among them: no in-place form */
    pl_comm_result r = lc_begin(c, &k, send, recv, s);
    if (r || count == 0) return r;
    group *g = c->g;
    int n = g->n, me = c->rank;
    size_t bytes = count * pl_dtype_size(t);
    CK(cudaMemcpyAsync((char *)recv + (size_t)me * bytes, (const char *)send + (size_t)me * bytes,
                       bytes, cudaMemcpyDeviceToDevice, s),
       "copy");
    if (n == 1) return PL_COMM_OK;
    /* pairwise exchange: at step j, receive from rank me-j the block it holds
     * for me, straight out of its send buffer */
    CK(cudaEventRecord(g->ready[me][1], s), "cudaEventRecord");
    if ((r = lc_step(c, name, 0, n))) return r;
    for (int j = 1; j < n; j++) {
        int from = MOD(me - j, n);
        CK(cudaStreamWaitEvent(s, g->ready[from][1], 0), "cudaStreamWaitEvent");
        CK(cudaMemcpyPeerAsync((char *)recv + (size_t)from * bytes, g->device[me],
                               (const char *)SENDS(c)[from] + (size_t)me * bytes, g->device[from],
                               bytes, s),
           "cudaMemcpyPeerAsync");
        lc_account(g, from, me, bytes);
        c->step_bytes += bytes; /* one step, many peers: peer stays -1 */
    }
    CK(cudaEventRecord(g->read[me][0], s), "cudaEventRecord");
    if ((r = lc_step(c, name, 1, n))) return r;
    /* every reader of my send buffer is done before my stream goes on */
    for (int j = 0; j < n; j++)
        if (j != me) CK(cudaStreamWaitEvent(s, g->read[j][0], 0), "cudaStreamWaitEvent");
    return lc_step(c, name, 2, n); /* no one re-records `read` before all waited */
}

/* The public collectives: the algorithm, then one trace event for the call,
 * over the bytes its descriptor says (S, the whole array). */
static pl_comm_result traced(lcomm *c, pl_comm_result r, pl_comm_call k, size_t count, pl_dtype t)
{
    const pl_collective *d = &pl_collectives[k];
    uint64_t bytes = pl_collective_bytes(d, count, t, c->g->n);
    r = lc_end(c, r);
    if (r == PL_COMM_OK && bytes) lc_emit(c, &c->call_mark, PL_EV_COLLECTIVE, d->name, bytes, -1);
    return r;
}

pl_comm_result lc_all_reduce(pl_comm *pc, const void *send, void *recv, size_t count, pl_dtype t,
                             pl_redop op, cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    return traced(c, all_reduce_impl(c, send, recv, count, t, op, s), PL_CALL_ALL_REDUCE, count, t);
}

pl_comm_result lc_reduce_scatter(pl_comm *pc, const void *send, void *recv, size_t recvcount,
                                 pl_dtype t, pl_redop op, cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    return traced(c, reduce_scatter_impl(c, send, recv, recvcount, t, op, s),
                  PL_CALL_REDUCE_SCATTER, recvcount, t);
}

pl_comm_result lc_all_gather(pl_comm *pc, const void *send, void *recv, size_t sendcount,
                             pl_dtype t, cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    return traced(c, all_gather_impl(c, send, recv, sendcount, t, s), PL_CALL_ALL_GATHER, sendcount,
                  t);
}

pl_comm_result lc_broadcast(pl_comm *pc, const void *send, void *recv, size_t count, pl_dtype t,
                            int root, cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    return traced(c, broadcast_impl(c, send, recv, count, t, root, s), PL_CALL_BROADCAST, count, t);
}

pl_comm_result lc_reduce(pl_comm *pc, const void *send, void *recv, size_t count, pl_dtype t,
                         pl_redop op, int root, cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    return traced(c, reduce_impl(c, send, recv, count, t, op, root, s), PL_CALL_REDUCE, count, t);
}

pl_comm_result lc_all_to_all(pl_comm *pc, const void *send, void *recv, size_t count, pl_dtype t,
                             cudaStream_t s)
{
    lcomm *c = (lcomm *)pc;
    return traced(c, all_to_all_impl(c, send, recv, count, t, s), PL_CALL_ALL_TO_ALL, count, t);
}
