/* model.c — the world as the events tell it (see vizint.h). */
#include <stdlib.h>
#include <string.h>

#include "vizint.h"

void viz_model_init(viz_model *m, int nranks)
{
    memset(m, 0, sizeof *m);
    m->nranks = nranks < 0 ? 0 : nranks > PL_MAX_RANKS ? PL_MAX_RANKS : nranks;
    m->t_lo[0] = m->t_lo[1] = 1e300;
    m->t_hi[0] = m->t_hi[1] = -1e300;
}

void viz_model_free(viz_model *m)
{
    for (int r = 0; r < PL_MAX_RANKS; r++)
        for (int l = 0; l < PL_NUM_LANES; l++) free(m->lanes[r][l].ev);
    for (int r = 0; r < PL_MAX_RANKS; r++)
        for (int k = 0; k < VIZ_STREAM_LANES; k++) free(m->streams[r][k].ev);
    free(m->metric);
    memset(m, 0, sizeof *m);
}

double viz_ev_start(const pl_event *e, int modeled)
{
    return modeled && (e->modeled_start != 0 || e->modeled_end != 0) ? e->modeled_start : e->start;
}

double viz_ev_end(const pl_event *e, int modeled)
{
    return modeled && (e->modeled_start != 0 || e->modeled_end != 0) ? e->modeled_end : e->end;
}

/* Inserts e into L, by start on the measured clock: events mostly arrive
 * in order, and an enclosing collective (reported after its steps) moves
 * back a little. 0, or -1 when out of memory. */
static int lane_insert(viz_lane *L, const pl_event *e)
{
    if (L->n == L->cap) {
        size_t cap = L->cap ? L->cap * 2 : 256;
        pl_event *p = realloc(L->ev, cap * sizeof *p);
        if (!p) return -1;
        L->ev = p;
        L->cap = cap;
    }
    size_t i = L->n;
    while (i > 0 && L->ev[i - 1].start > e->start) i--;
    memmove(&L->ev[i + 1], &L->ev[i], (L->n - i) * sizeof *L->ev);
    L->ev[i] = *e;
    L->n++;
    return 0;
}

int viz_model_add(viz_model *m, const pl_event *e)
{
    if (e->rank < 0 || e->rank >= PL_MAX_RANKS || e->lane >= PL_NUM_LANES) return 0;
    if (e->rank >= m->nranks) m->nranks = e->rank + 1;
    if (lane_insert(&m->lanes[e->rank][e->lane], e)) return -1;
    if (e->stream > 0) { /* also on its stream's lane (the last one takes the rest) */
        int k = e->stream - 1 < VIZ_STREAM_LANES ? e->stream - 1 : VIZ_STREAM_LANES - 1;
        if (lane_insert(&m->streams[e->rank][k], e)) return -1;
        if (k + 1 > m->nstreams[e->rank]) m->nstreams[e->rank] = k + 1;
    }
    m->nevents++;
    if (e->modeled_start != 0 || e->modeled_end != 0) m->have_modeled = 1;
    for (int c = 0; c < 2; c++) {
        double s = viz_ev_start(e, c), t = viz_ev_end(e, c);
        if (s < m->t_lo[c]) m->t_lo[c] = s;
        if (t > m->t_hi[c]) m->t_hi[c] = t;
    }
    /* the bytes over each link: what the comm lane says moved (ring steps
     * and receives name the peer they copied from) */
    if (e->peer >= 0 && e->peer < PL_MAX_RANKS &&
        (e->kind == PL_EV_RING_STEP || e->kind == PL_EV_RECV))
        m->link[e->peer][e->rank] += e->bytes;
    return 0;
}

int viz_model_push_metric(viz_model *m, double value)
{
    if (m->nmetric == m->capmetric) {
        size_t cap = m->capmetric ? m->capmetric * 2 : 64;
        double *p = realloc(m->metric, cap * sizeof *p);
        if (!p) return -1;
        m->metric = p;
        m->capmetric = cap;
    }
    m->metric[m->nmetric++] = value;
    return 0;
}

static const pl_event *lane_at(const viz_lane *L, double t, int modeled);

const pl_event *viz_model_at(const viz_model *m, int rank, int lane, double t, int modeled)
{
    if (rank < 0 || rank >= PL_MAX_RANKS || lane < 0 || lane >= PL_NUM_LANES) return NULL;
    return lane_at(&m->lanes[rank][lane], t, modeled);
}

const pl_event *viz_model_at_stream(const viz_model *m, int rank, int k, double t, int modeled)
{
    if (rank < 0 || rank >= PL_MAX_RANKS || k < 0 || k >= VIZ_STREAM_LANES) return NULL;
    return lane_at(&m->streams[rank][k], t, modeled);
}

static const pl_event *lane_at(const viz_lane *L, double t, int modeled)
{
    if (!L->n) return NULL;
    /* The events are in measured-start order; on the modeled clock the
     * order of a rank's events is the same (its stream runs them in order),
     * so one binary search serves both: the last event starting at or
     * before t, then back to the first that still covers t. */
    size_t lo = 0, hi = L->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (viz_ev_start(&L->ev[mid], modeled) <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* What a student wants to see: a forward, backward or optimizer step
     * over the kernels inside it; a ring step or copy over the collective
     * around it; else the innermost (latest start). */
    const pl_event *best = NULL;
    int best_rank = -1;
    for (size_t i = lo, k = 0; i > 0 && k < 64; i--, k++) {
        const pl_event *e = &L->ev[i - 1];
        if (viz_ev_end(e, modeled) < t || viz_ev_start(e, modeled) > t) continue;
        int rank =
            e->kind == PL_EV_FORWARD || e->kind == PL_EV_BACKWARD || e->kind == PL_EV_OPTIMIZER ? 2
            : e->kind == PL_EV_COLLECTIVE                                                       ? 0
                                                                                                : 1;
        if (rank > best_rank) {
            best = e;
            best_rank = rank;
        }
        if (best_rank == 2) break;
    }
    return best;
}

double viz_bubble_fraction(const viz_model *m, int modeled)
{
    double lo = 1e300, hi = -1e300, busy = 0;
    int stages[PL_MAX_RANKS] = {0}, nst = 0;
    for (int r = 0; r < m->nranks; r++)
        for (int l = 0; l < PL_NUM_LANES; l++)
            for (size_t i = 0; i < m->lanes[r][l].n; i++) {
                const pl_event *e = &m->lanes[r][l].ev[i];
                /* a pipeline's stages: forward and backward of a stage (layer) */
                if ((e->kind != PL_EV_FORWARD && e->kind != PL_EV_BACKWARD) || e->layer < 0 ||
                    e->layer >= PL_MAX_RANKS)
                    continue;
                double s = viz_ev_start(e, modeled), t = viz_ev_end(e, modeled);
                lo = s < lo ? s : lo;
                hi = t > hi ? t : hi;
                busy += t - s;
                int st = e->layer;
                if (!stages[st]) nst++;
                stages[st] = 1;
            }
    if (nst == 0 || hi <= lo) return -1;
    double f = 1.0 - busy / ((hi - lo) * nst);
    return f < 0 ? 0 : f;
}
