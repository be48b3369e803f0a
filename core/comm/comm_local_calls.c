/*
 * comm_local_calls.c — a collective's frame in the local engine: each
 * member posts its call, meets the others and compares (a mismatch is
 * reported to every rank, naming each rank's call); the argument checks; the
 * meetings between a call's steps; and the ledger of bytes, messages and
 * calls.
 */
#include <stdio.h>
#include <string.h>

#include "comm_local.h"
#include "paralab/device.h"

const char *lc_kind_name(int k)
{
    const pl_collective *d = pl_collective_of((pl_comm_call)k);
    if (d) return d->name;
    return k == PL_CALL_SPLIT     ? "comm_split"
           : k == PL_CALL_BARRIER ? "barrier"
           : k == CALL_FREE       ? "comm_free"
                                  : "?";
}

/* The first cap - 1 bytes of src, terminated. */
static void copy_text(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* "all_reduce(count=1024, float, sum)", "broadcast(count=4, float, root=0)":
 * the call's arguments, as its descriptor lists them. */
static void describe_call(const call *k, char *buf, size_t cap)
{
    const pl_collective *d = pl_collective_of((pl_comm_call)k->kind);
    if (!d)
        snprintf(buf, cap, "%s", lc_kind_name(k->kind));
    else {
        char op[32] = "", root[32] = "";
        if (d->has_op) snprintf(op, sizeof op, ", %s", pl_redop_name(k->op));
        if (d->has_root) snprintf(root, sizeof root, ", root=%d", k->root);
        snprintf(buf, cap, "%s(count=%zu, %s%s%s)", d->name, k->count, pl_dtype_name(k->type), op,
                 root);
    }
    if (k->bad && strlen(buf) + 24 < cap) strcat(buf, " [invalid arguments]");
}

/* The same call: kind, and for a collective count, type, and its op and
 * root where it takes them. */
static int same_call(const call *a, const call *b)
{
    if (a->kind != b->kind || a->bad || b->bad) return 0;
    const pl_collective *d = pl_collective_of((pl_comm_call)a->kind);
    if (!d) return 1; /* split, free, barrier */
    if (a->count != b->count || a->type != b->type) return 0;
    if (d->has_op && a->op != b->op) return 0;
    if (d->has_root && a->root != b->root) return 0;
    return 1;
}

/* "call #3: ranks 0,1,3 all_reduce(count=1024, float, sum); rank 2
 * all_gather(count=256, float)": the members grouped by what they called;
 * then what was wrong with each other member's invalid arguments ("; rank
 * 2's error: all_reduce: ..."), for member `me`. */
static void describe_mismatch(const lcomm *c, char *buf, size_t cap)
{
    const group *g = c->g;
    const call *calls = CALLS(c);
    int me = c->rank;
    unsigned long seq = c->seq;
    int done[MAX_RANKS] = {0};
    size_t n = (size_t)snprintf(buf, cap, "the ranks disagree about call #%lu: ", seq);
    for (int i = 0; i < g->n && n < cap; i++) {
        if (done[i]) continue;
        char ranks[256] = "", what[160];
        size_t rn = 0;
        int count = 0;
        for (int j = i; j < g->n; j++)
            if (!done[j] &&
                (j == i || (same_call(&calls[i], &calls[j]) ||
                            (calls[i].bad && calls[j].bad && calls[i].kind == calls[j].kind)))) {
                done[j] = 1;
                count++;
                rn += (size_t)snprintf(ranks + rn, sizeof ranks - rn, "%s%d", rn ? "," : "",
                                       g->wrank[j]);
            }
        describe_call(&calls[i], what, sizeof what);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s %s %s", i ? "; " : "",
                              count > 1 ? "ranks" : "rank", ranks, what);
    }
    for (int j = 0; j < g->n && n < cap; j++)
        if (j != me && calls[j].bad && calls[j].why[0])
            n += (size_t)snprintf(buf + n, cap - n, "; rank %d's error: %s", g->wrank[j],
                                  calls[j].why);
}

/* Stops the world because this rank failed in call k, number seq, with the
 * error r (its message in c->err); returns r. */
static pl_comm_result stop_world(lcomm *c, const call *k, unsigned long seq, pl_comm_result r)
{
    world *w = c->g->w;
    char desc[160];
    describe_call(k, desc, sizeof desc);
    const char *why = strstr(c->err, ": "); /* without "rank R: " */
    pthread_mutex_lock(&w->lock);
    if (!w->aborted) {
        int n = snprintf(w->abort_msg, sizeof w->abort_msg,
                         "rank %d failed in %s (call #%lu): ", c->g->wrank[c->rank], desc, seq);
        if (n > 0 && (size_t)n < sizeof w->abort_msg)
            copy_text(w->abort_msg + n, sizeof w->abort_msg - (size_t)n, why ? why + 2 : c->err);
        w->aborted = 1;
        w->abort_code = PL_COMM_ABORTED;
    }
    lc_wake_all(w);
    pthread_mutex_unlock(&w->lock);
    return r;
}

/* Posts this rank's call and buffers, meets the others, checks they all
 * called the same. On any error every member returns an error. */
pl_comm_result lc_begin(lcomm *c, const call *k, const void *send, void *recv, cudaStream_t stream)
{
    group *g = c->g;
    world *w = g->w;
    call in_group;
    if (lc_in_group() && !k->bad) { /* still meet the others: they must not wait */
        lc_fail(c, PL_COMM_INVALID_ARGUMENT,
                "%s inside pl_group_start()/pl_group_end(): the local engine groups only send and "
                "receive",
                lc_kind_name(k->kind));
        in_group = *k;
        in_group.bad = 1;
        k = &in_group;
    }
    /* a failure before the first meeting: the others would wait there for
     * this rank until the watchdog's timeout, so they are told now */
    cudaError_t e = cudaSetDevice(g->device[c->rank]);
    if (e) return stop_world(c, k, c->seq + 1, lc_cuda_fail(c, e, "cudaSetDevice"));
    pl_comm_result r = lc_ensure_events(c);
    if (r) return stop_world(c, k, c->seq + 1, r);
    c->seq++;
    lc_mark_start(c, &c->call_mark, stream);
    c->step_mark = c->call_mark;
    c->step_bytes = 0;
    c->step_peer = -1;
    c->step_seg = -1;
    pthread_mutex_lock(&w->lock);
    call *calls = CALLS(c);
    calls[c->rank] = *k;
    if (k->bad) { /* its message without "rank R: ", for the others */
        const char *why = strstr(c->err, ": ");
        copy_text(calls[c->rank].why, sizeof calls[0].why, why ? why + 2 : c->err);
    }
    SENDS(c)[c->rank] = send;
    RECVS(c)[c->rank] = recv;
    char what[200], desc[160];
    describe_call(k, desc, sizeof desc);
    snprintf(what, sizeof what, "waits in %s (call #%lu) for the other ranks", desc, c->seq);
    r = lc_rendezvous(c, what);
    /* One meeting: every member has left its previous call (its FIFO
     * counts are below this call's EPOCH, its events waited for), and the
     * posts are read by parity (CALLS) */
    int agree = 1;
    for (int i = 0; i < g->n; i++) agree &= same_call(&calls[0], &calls[i]);
    char msg[1800];
    if (r == PL_COMM_OK && !agree) describe_mismatch(c, msg, sizeof msg);
    int all_bad = 1;
    for (int i = 0; i < g->n; i++) all_bad &= calls[i].bad;
    pthread_mutex_unlock(&w->lock);
    if (r) return r;
    if (!agree) {
        pl_comm_result code = k->bad ? PL_COMM_INVALID_ARGUMENT : PL_COMM_MISMATCH;
        if (all_bad) return code; /* everyone erred alike: its own message says it all */
        if (k->bad) {             /* keep this rank's own argument message, add the picture */
            size_t n = strlen(c->err);
            snprintf(c->err + n, sizeof c->err - n, " (%s)", msg);
            return code;
        }
        return lc_fail(c, code, "%s", msg);
    }
    c->in_call = pl_collective_of((pl_comm_call)k->kind) != NULL;
    return PL_COMM_OK;
}

pl_comm_result lc_end(lcomm *c, pl_comm_result r)
{
    int was_in = c->in_call;
    c->in_call = 0;
    if (!r || !was_in || r == PL_COMM_ABORTED || r == PL_COMM_TIMEOUT) return r;
    return stop_world(c, &CALLS(c)[c->rank], c->seq, r);
}

/* One step's meeting, with what this rank is doing for the deadlock report. */
pl_comm_result lc_step(lcomm *c, const char *kind, int s, int steps)
{
    world *w = c->g->w;
    char what[160];
    snprintf(what, sizeof what, "waits in %s (call #%lu, step %d of %d)", kind, c->seq,
             s < 0 ? 0 : s + 1, steps);
    pthread_mutex_lock(&w->lock);
    pl_comm_result r = lc_rendezvous(c, what);
    pthread_mutex_unlock(&w->lock);
    if (!r && s >= 0 && s < steps && w->trace) {
        char label[48];
        snprintf(label, sizeof label, "%s step %d", kind, s + 1);
        lc_emit(c, &c->step_mark, PL_EV_RING_STEP, label, c->step_bytes, c->step_peer);
    }
    lc_mark_start(c, &c->step_mark, c->call_mark.stream);
    c->step_bytes = 0;
    c->step_peer = -1;
    c->step_seg = -1;
    return r;
}

/* The ledger: `bytes` from member `from` to member `to` (world ranks). */
void lc_account(group *g, int from, int to, size_t bytes)
{
    world *w = g->w;
    pthread_mutex_lock(&w->lock);
    lc_count_bytes(w, g->wrank[from], g->wrank[to], bytes);
    lc_count_own(g, from, to, bytes);
    pthread_mutex_unlock(&w->lock);
}

void lc_count_own(group *g, int from, int to, size_t bytes)
{
    g->own[from].bytes_sent += bytes;
    g->own[from].messages_sent++;
    g->own[to].bytes_received += bytes;
    g->own[to].messages_received++;
}

void lc_count_bytes(world *w, int a, int b, size_t bytes)
{
    w->ledger[a].bytes_sent += bytes;
    w->ledger[a].messages_sent++;
    w->ledger[b].bytes_received += bytes;
    w->ledger[b].messages_received++;
    w->link[a][b] += bytes;
}

pl_ledger lc_ledger(const pl_comm *pc)
{
    const lcomm *c = (const lcomm *)pc;
    world *w = c->g->w;
    pthread_mutex_lock(&w->lock);
    pl_ledger l = w->ledger[c->g->wrank[c->rank]];
    pthread_mutex_unlock(&w->lock);
    return l;
}

pl_ledger lc_ledger_own(const pl_comm *pc)
{
    const lcomm *c = (const lcomm *)pc;
    world *w = c->g->w;
    pthread_mutex_lock(&w->lock);
    pl_ledger l = c->g->own[c->rank];
    pthread_mutex_unlock(&w->lock);
    return l;
}

int lc_world_rank(const pl_comm *pc, int member)
{
    const lcomm *c = (const lcomm *)pc;
    return member >= 0 && member < c->g->n ? c->g->wrank[member] : -1;
}

void lc_count_call(pl_comm *pc, pl_comm_call k)
{
    lcomm *c = (lcomm *)pc;
    world *w = c->g->w;
    pthread_mutex_lock(&w->lock);
    w->ledger[c->g->wrank[c->rank]].calls[k]++;
    c->g->own[c->rank].calls[k]++;
    pthread_mutex_unlock(&w->lock);
}

uint64_t lc_link_bytes(const pl_comm *pc, int from, int to)
{
    const lcomm *c = (const lcomm *)pc;
    world *w = c->g->w;
    if (from < 0 || to < 0 || from >= w->n || to >= w->n) return 0;
    pthread_mutex_lock(&w->lock);
    uint64_t b = w->link[from][to];
    pthread_mutex_unlock(&w->lock);
    return b;
}

/* ---- argument checks ------------------------------------------------------------- */

static int check_type_op(lcomm *c, const call *k, int with_op)
{
    if ((unsigned)k->type >= PL_NUM_DTYPES) {
        lc_fail(c, PL_COMM_INVALID_ARGUMENT,
                "%s: type %d is not a pl_dtype (allowed: 0..%d: float, double, int32, int64)",
                lc_kind_name(k->kind), k->type, PL_NUM_DTYPES - 1);
        return 0;
    }
    if (with_op && (unsigned)k->op >= PL_NUM_OPS) {
        lc_fail(c, PL_COMM_INVALID_ARGUMENT,
                "%s: op %d is not a pl_redop (allowed: 0..%d: sum, prod, max, min, avg)",
                lc_kind_name(k->kind), k->op, PL_NUM_OPS - 1);
        return 0;
    }
    return 1;
}

static int check_root(lcomm *c, const call *k)
{
    if (k->root < 0 || k->root >= c->g->n) {
        lc_fail(c, PL_COMM_INVALID_ARGUMENT, "%s: root %d is not a rank (allowed: 0..%d)",
                lc_kind_name(k->kind), k->root, c->g->n - 1);
        return 0;
    }
    return 1;
}

static int check_buffers(lcomm *c, const call *k, const void *send, const void *recv, int need_send,
                         int need_recv)
{
    if (k->count == 0) return 1;
    if ((need_send && !send) || (need_recv && !recv)) {
        lc_fail(c, PL_COMM_INVALID_ARGUMENT, "%s: %s buffer is NULL with count %zu > 0",
                lc_kind_name(k->kind), need_send && !send ? "send" : "receive", k->count);
        return 0;
    }
    return 1;
}

/* "count 1024 x float (4 bytes)", "4 ranks x count 64 x float (4 bytes)": how a
 * buffer's size follows from the call. */
static void describe_elems(char *buf, size_t cap, pl_buffer_shape shape, int n, size_t count,
                           int type)
{
    char ranks[32] = "";
    if (shape == PL_BUF_BLOCKS) snprintf(ranks, sizeof ranks, "%d ranks x ", n);
    snprintf(buf, cap, "%scount %zu x %s (%zu bytes)", ranks, count, pl_dtype_name((pl_dtype)type),
             pl_dtype_size((pl_dtype)type));
}

/* One buffer against what the call needs of it: in a live device allocation
 * of this rank's device, with the bytes from p to the allocation's end. */
static int check_room(lcomm *c, const char *what, const char *which, const void *p,
                      pl_buffer_shape shape, size_t count, int type)
{
    int n = c->g->n, mydev = c->g->device[c->rank], dev = -1;
    size_t need = (shape == PL_BUF_BLOCKS ? (size_t)n : 1) * count * pl_dtype_size((pl_dtype)type);
    size_t room = 0, size = 0;
    char elems[96];
    int found = pl_device_alloc_room(p, &room, &size, &dev);
    if (found < 0) return 1; /* the world cannot tell: the copies will */
    if (found > 0 && room >= need && dev == mydev) return 1;
    describe_elems(elems, sizeof elems, shape, n, count, type); /* for the message */
    if (found == 0) {
        lc_fail(c, PL_COMM_INVALID_ARGUMENT,
                "%s: the %s buffer %p lies in no live device allocation (freed, or not from "
                "cudaMalloc); %s needs %zu bytes",
                what, which, p, elems, need);
        return 0;
    }
    if (room < need) {
        lc_fail(c, PL_COMM_INVALID_ARGUMENT,
                "%s: the %s buffer is too small: %s needs %zu bytes, but it holds %zu (an "
                "allocation of %zu bytes on device %d, the buffer at offset %zu)",
                what, which, elems, need, room, size, dev, size - room);
        return 0;
    }
    if (dev != mydev) {
        lc_fail(c, PL_COMM_INVALID_ARGUMENT,
                "%s: the %s buffer is on device %d, but this rank's device is %d", what, which, dev,
                mydev);
        return 0;
    }
    return 1;
}

int lc_check_sizes(lcomm *c, const char *what, const pl_collective *d, size_t count, int type,
                   const void *send, const void *recv, int need_send, int need_recv)
{
    if (count == 0) return 1;
    int n = c->g->n;
    size_t es = pl_dtype_size((pl_dtype)type);
    int blocks = d->send == PL_BUF_BLOCKS || d->recv == PL_BUF_BLOCKS;
    size_t max = SIZE_MAX / es / (blocks ? (size_t)n : 1);
    if (count > max) {
        char elems[96];
        describe_elems(elems, sizeof elems, blocks ? PL_BUF_BLOCKS : PL_BUF_COUNT, n, count, type);
        lc_fail(c, PL_COMM_INVALID_ARGUMENT,
                "%s: count %zu is too large: the bytes of %s overflow a size_t (allowed: count "
                "0..%zu; a negative count cast to size_t?)",
                what, count, elems, max);
        return 0;
    }
    if (need_send && send && !check_room(c, what, "send", send, d->send, count, type)) return 0;
    if (need_recv && recv && !check_room(c, what, "receive", recv, d->recv, count, type)) return 0;
    return 1;
}

int lc_check_args(lcomm *c, const call *k, const void *send, const void *recv)
{
    const pl_collective *d = pl_collective_of((pl_comm_call)k->kind);
    int me = c->rank;
    int need_send = pl_collective_needs_send(d, me, k->root);
    int need_recv = pl_collective_needs_recv(d, me, k->root);
    if (!check_type_op(c, k, d->has_op) || (d->has_root && !check_root(c, k)) ||
        !check_buffers(c, k, send, recv, need_send, need_recv) ||
        !lc_check_sizes(c, d->name, d, k->count, k->type, send, recv, need_send, need_recv))
        return 0;
    if (d->in_place == PL_IN_PLACE_NEVER && k->count &&
        pl_collective_in_place(d, send, recv, k->count, (pl_dtype)k->type, me)) {
        lc_fail(c, PL_COMM_INVALID_ARGUMENT,
                "%s: send and receive buffers must differ (no in-place form)", d->name);
        return 0;
    }
    return 1;
}
