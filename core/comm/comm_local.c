/*
 * comm_local.c — the local engine's world, groups and handles: creation,
 * split, free and teardown; this rank's errors; its trace events; and the
 * engine's table (the engine as a whole: comm_local.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "comm_local.h"
#include "paralab/device.h"

/* ---- errors -------------------------------------------------------------- */

pl_comm_result lc_fail(lcomm *c, pl_comm_result r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(c->err, sizeof c->err, "rank %d: ", c->g->wrank[c->rank]);
    vsnprintf(c->err + n, sizeof c->err - (size_t)n, fmt, ap);
    va_end(ap);
    return r;
}

pl_comm_result lc_cuda_fail(lcomm *c, cudaError_t e, const char *what)
{
    return lc_fail(c, PL_COMM_CUDA_ERROR, "%s: %s (%s)", what, cudaGetErrorName(e),
                   cudaGetErrorString(e));
}

/* ---- a handle's accessors and settings ------------------------------------------------- */

static int l_comm_rank(const pl_comm *pc)
{
    const lcomm *c = (const lcomm *)pc;
    return c->rank;
}
static int l_comm_size(const pl_comm *pc)
{
    const lcomm *c = (const lcomm *)pc;
    return c->g->n;
}
static int l_comm_device(const pl_comm *pc)
{
    const lcomm *c = (const lcomm *)pc;
    return c->g->device[c->rank];
}

static const char *l_comm_last_error(const pl_comm *pc)
{
    const lcomm *c = (const lcomm *)pc;
    return c->err;
}

static void l_comm_set_chunk_bytes(pl_comm *pc, size_t bytes)
{
    lcomm *c = (lcomm *)pc;
    c->g->w->chunk_bytes = bytes ? bytes : DEFAULT_CHUNK_BYTES;
}

static void l_comm_set_trace(pl_comm *pc, pl_trace *t)
{
    lcomm *c = (lcomm *)pc;
    c->g->w->trace = t;
}

/* ---- trace events ------------------------------------------------------------ */

/* Without a trace nothing reads a mark but its stream: no clock is read (the
 * modeled one takes the runtime's lock). */
void lc_mark_start(lcomm *c, mark *m, cudaStream_t s)
{
    if (c->g->w->trace)
        pl_comm_mark_start(m, s);
    else
        *m = (mark){.stream = s};
}

void lc_emit(lcomm *c, const mark *m, pl_event_kind kind, const char *label, uint64_t bytes,
             int peer)
{
    pl_comm_emit(c->g->w->trace, &c->base, c->g->wrank[c->rank], m, kind, label, bytes, peer,
                 kind == PL_EV_RING_STEP && c->step_seg >= 0 ? c->step_seg + 1 : 0);
}

/* ---- creation --------------------------------------------------------------- */

static group *group_new(world *w, int n)
{
    group *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->w = w;
    g->n = n;
    g->members_alive = n;
    w->refs++;
    g->next_group = w->groups;
    w->groups = g;
    return g;
}

/* pl_comm_create's message into err (nothing when err_size is 0); returns r. */
static pl_comm_result create_fail(char *err, size_t err_size, pl_comm_result r, const char *fmt,
                                  ...) __attribute__((format(printf, 4, 5)));
static pl_comm_result create_fail(char *err, size_t err_size, pl_comm_result r, const char *fmt,
                                  ...)
{
    if (err && err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_size, fmt, ap);
        va_end(ap);
    }
    return r;
}

pl_comm_result pl_comm_create(int n, const int *devices, double timeout_s, pl_comm **ranks,
                              char *err, size_t err_size)
{
    if (err && err_size) err[0] = '\0';
    if (n < 1 || n > MAX_RANKS)
        return create_fail(err, err_size, PL_COMM_INVALID_ARGUMENT,
                           "pl_comm_create: %d ranks (allowed: 1..%d)", n, MAX_RANKS);
    if (!devices || !ranks)
        return create_fail(err, err_size, PL_COMM_INVALID_ARGUMENT, "pl_comm_create: %s is NULL",
                           devices ? "ranks" : "devices");
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e || ndev < 1)
        return create_fail(err, err_size, PL_COMM_CUDA_ERROR,
                           "pl_comm_create: no device: cudaGetDeviceCount: %s (%s)",
                           cudaGetErrorName(e), cudaGetErrorString(e));
    for (int r = 0; r < n; r++)
        if (devices[r] < 0 || devices[r] >= ndev)
            return create_fail(err, err_size, PL_COMM_INVALID_ARGUMENT,
                               "pl_comm_create: rank %d: device %d does not exist (devices 0..%d)",
                               r, devices[r], ndev - 1);
    world *w = calloc(1, sizeof *w);
    if (!w)
        return create_fail(err, err_size, PL_COMM_SYSTEM_ERROR, "pl_comm_create: out of memory");
    w->n = n;
    w->timeout = timeout_s > 0 ? timeout_s : 10.0;
    w->chunk_bytes = DEFAULT_CHUNK_BYTES;
    /* adaptive: a rank woken while its waker still holds the lock (lc_wake)
     * spins a little for it instead of sleeping in the kernel at once */
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&w->lock, &a);
    pthread_mutexattr_destroy(&a);
    for (int r = 0; r < MAX_RANKS; r++) pthread_cond_init(&w->cv[r], NULL);
    group *g = group_new(w, n);
    if (!g) {
        free(w);
        return create_fail(err, err_size, PL_COMM_SYSTEM_ERROR, "pl_comm_create: out of memory");
    }
    g->is_world = 1;
    for (int r = 0; r < n; r++) {
        g->wrank[r] = r;
        g->device[r] = devices[r];
        lcomm *h = calloc(1, sizeof *h);
        if (!h) {
            while (r-- > 0) free(ranks[r]);
            free(g);
            free(w);
            return create_fail(err, err_size, PL_COMM_SYSTEM_ERROR,
                               "pl_comm_create: out of memory");
        }
        h->base.engine = &pl_comm_local_engine;
        h->g = g;
        h->rank = r;
        h->next_handle = w->handles;
        w->handles = h;
        ranks[r] = &h->base;
    }
    return PL_COMM_OK;
}

static void handle_free(lcomm *c)
{
    group *g = c->g;
    world *w = g->w;
    int dev = g->device[c->rank], cur = 0;
    cudaGetDevice(&cur);
    cudaSetDevice(dev);
    lc_drop_eager(c);
    lc_p2p_free_spares(c);
    for (int p = 0; p < FIFO; p++) {
        if (g->ready[c->rank][p]) cudaEventDestroy(g->ready[c->rank][p]);
        if (g->read[c->rank][p]) cudaEventDestroy(g->read[c->rank][p]);
    }
    cudaFree(c->scratch);
    cudaFree(c->work);
    cudaSetDevice(cur);
    pthread_mutex_lock(&w->lock);
    for (lcomm **pp = &w->handles; *pp; pp = &(*pp)->next_handle)
        if (*pp == c) {
            *pp = c->next_handle;
            break;
        }
    int last_member = --g->members_alive == 0;
    if (last_member)
        for (group **pp = &w->groups; *pp; pp = &(*pp)->next_group)
            if (*pp == g) {
                *pp = g->next_group;
                break;
            }
    int last_group = last_member && --w->refs == 0;
    pthread_mutex_unlock(&w->lock);
    if (last_member) free(g);
    if (last_group) {
        for (int r = 0; r < MAX_RANKS; r++)
            for (int k = 0; k < w->done_pooled[r]; k++) cudaEventDestroy(w->done_pool[r][k]);
        pthread_mutex_destroy(&w->lock);
        for (int r = 0; r < MAX_RANKS; r++) pthread_cond_destroy(&w->cv[r]);
        free(w);
    }
    free(c);
}

static void l_comm_destroy_all(pl_comm **ranks, int n)
{
    if (n < 1 || !ranks[0]) return;
    world *w = ((lcomm *)ranks[0])->g->w;
    /* Everything the world still holds, the ranks' handles among it: split
     * communicators the ranks did not free (a rank failed), and groups that
     * a failed split made but gave no handles to. */
    pthread_mutex_lock(&w->lock);
    int nh = 0;
    for (lcomm *h = w->handles; h; h = h->next_handle) nh++;
    lcomm **hs = malloc((size_t)(nh ? nh : 1) * sizeof *hs);
    nh = 0;
    for (lcomm *h = w->handles; hs && h; h = h->next_handle) hs[nh++] = h;
    for (group **pp = &w->groups; *pp;) {
        group *g = *pp;
        int held = 0;
        for (lcomm *h = w->handles; h; h = h->next_handle) held += h->g == g;
        g->members_alive = held; /* each remaining handle frees its share */
        if (held == 0) {
            *pp = g->next_group;
            w->refs--;
            free(g);
        } else
            pp = &g->next_group;
    }
    pthread_mutex_unlock(&w->lock);
    if (!hs) { /* out of memory: at least the ranks' handles */
        for (int r = 0; r < n; r++)
            if (ranks[r]) handle_free((lcomm *)ranks[r]);
        return;
    }
    for (int i = 0; i < nh; i++) handle_free(hs[i]); /* the last one frees the world */
    free(hs);
}

/* ---- split and free ----------------------------------------------------------------------- */

static pl_comm_result l_comm_split(pl_comm *pc, int color, int key, pl_comm **out)
{
    lcomm *c = (lcomm *)pc;
    call k = {.kind = PL_CALL_SPLIT, .color = color, .key = key};
    if (!out) { /* still meet the others, so they are told */
        lc_fail(c, PL_COMM_INVALID_ARGUMENT, "comm_split: out is NULL");
        k.bad = 1;
    } else
        *out = NULL;
    pl_comm_result r = lc_begin(c, &k, NULL, NULL, NULL);
    if (r) return r;
    group *g = c->g;
    world *w = g->w;
    int me = c->rank;
    /* the lowest member of each color builds the new group */
    pthread_mutex_lock(&w->lock);
    int leader = -1;
    for (int i = 0; i < g->n && leader < 0; i++)
        if (CALLS(c)[i].color == color) leader = i;
    if (color >= 0 && leader == me) {
        int members[MAX_RANKS], m = 0;
        for (int i = 0; i < g->n; i++)
            if (CALLS(c)[i].color == color) members[m++] = i;
        for (int a = 1; a < m; a++) /* by key, then by rank: insertion sort */
            for (int b = a; b > 0; b--) {
                const call *x = &CALLS(c)[members[b - 1]], *y = &CALLS(c)[members[b]];
                if (x->key < y->key || (x->key == y->key && members[b - 1] < members[b])) break;
                int tmp = members[b];
                members[b] = members[b - 1];
                members[b - 1] = tmp;
            }
        group *ng = group_new(w, m);
        for (int i = 0; ng && i < m; i++) {
            ng->wrank[i] = g->wrank[members[i]];
            ng->device[i] = g->device[members[i]];
        }
        for (int i = 0; i < m; i++) g->split_to[members[i]] = ng;
    }
    r = lc_rendezvous(c, "waits in comm_split for the other ranks");
    group *ng = color >= 0 ? g->split_to[me] : NULL;
    pl_comm_result r2 = r ? r : lc_rendezvous(c, "waits in comm_split for the other ranks");
    pthread_mutex_unlock(&w->lock);
    if (r) return r;
    if (r2) return r2;
    if (color < 0) return PL_COMM_OK;
    if (!ng) return lc_fail(c, PL_COMM_SYSTEM_ERROR, "comm_split: out of memory");
    lcomm *h = calloc(1, sizeof *h);
    if (!h) return lc_fail(c, PL_COMM_SYSTEM_ERROR, "comm_split: out of memory");
    h->base.engine = &pl_comm_local_engine;
    h->g = ng;
    for (int i = 0; i < ng->n; i++)
        if (ng->wrank[i] == g->wrank[me]) h->rank = i;
    pthread_mutex_lock(&w->lock);
    h->next_handle = w->handles;
    w->handles = h;
    pthread_mutex_unlock(&w->lock);
    *out = &h->base;
    return PL_COMM_OK;
}

static pl_comm_result l_comm_barrier(pl_comm *pc)
{
    lcomm *c = (lcomm *)pc;
    call k = {.kind = PL_CALL_BARRIER};
    return lc_begin(c, &k, NULL, NULL, NULL);
}

static pl_comm_result l_comm_free(pl_comm *pc)
{
    lcomm *c = (lcomm *)pc;
    if (c->g->is_world)
        return lc_fail(c, PL_COMM_INVALID_ARGUMENT,
                       "comm_free: this is the world communicator; pl_comm_destroy_all (or "
                       "pl_world_run) frees it");
    pl_comm_result r = lc_wait_sends(pc); /* its eager sends first: they read its buffers */
    if (r) return r;
    call k = {.kind = CALL_FREE};
    r = lc_begin(c, &k, NULL, NULL, NULL);
    if (r) return r;
    handle_free(c);
    return PL_COMM_OK;
}

/* ---- the engine ------------------------------------------------------------------------ */

/* Any ranks, on any devices (several may share one). */
static int l_fits(int n, const int *devices)
{
    (void)n, (void)devices;
    return 1;
}

const pl_comm_engine pl_comm_local_engine = {
    .name = "local",
    .fits = l_fits,
    .destroy_all = l_comm_destroy_all,
    .set_trace = l_comm_set_trace,
    .set_chunk_bytes = l_comm_set_chunk_bytes,
    .abort = lc_abort,
    .hold = lc_hold,
    .rank = l_comm_rank,
    .size = l_comm_size,
    .device = l_comm_device,
    .last_error = l_comm_last_error,
    .split = l_comm_split,
    .free = l_comm_free,
    .barrier = l_comm_barrier,
    .all_reduce = lc_all_reduce,
    .broadcast = lc_broadcast,
    .reduce = lc_reduce,
    .all_gather = lc_all_gather,
    .reduce_scatter = lc_reduce_scatter,
    .all_to_all = lc_all_to_all,
    .send = lc_send,
    .recv = lc_recv,
    .send_eager = lc_send_eager,
    .wait_sends = lc_wait_sends,
    .group_start = lc_group_start,
    .group_end = lc_group_end,
    .ledger = lc_ledger,
    .ledger_own = lc_ledger_own,
    .world_rank = lc_world_rank,
    .count_call = lc_count_call,
    .link_bytes = lc_link_bytes,
};
