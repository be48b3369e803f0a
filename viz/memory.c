/* memory.c — the memory pane: a ZeRO run's bytes per device for the
 * parameters, gradients and optimizer state, on the scale of plain data
 * parallelism, beside the stage's formula (see vizint.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "vizint.h"

int pl_viz_check_zero(const pl_viz_zero *z, int nranks, char *err, size_t cap)
{
    if (!z) return 0;
    char bad[160] = "", range[96];
    const char *why = NULL;
    if (z->stage < 0 || z->stage > 3) {
        snprintf(bad, sizeof bad, "stage %d", z->stage);
        why = "stages 0 (plain data parallelism), 1, 2 and 3";
    } else if (z->ranks < 1 || z->ranks > PL_MAX_RANKS) {
        snprintf(bad, sizeof bad, "%d ranks", z->ranks);
        why = "1..64 ranks (PL_MAX_RANKS)";
    } else if (nranks > 0 && z->ranks != nranks) {
        snprintf(bad, sizeof bad, "%d ranks for a world of %d", z->ranks, nranks);
        why = "the world's ranks";
    } else if (z->psi < 1 || z->psi > 1L << 40) {
        snprintf(bad, sizeof bad, "psi %ld", z->psi);
        why = "1..2^40 parameters";
    } else if (z->psi_pad < z->psi || z->psi_pad > 1L << 40) {
        snprintf(bad, sizeof bad, "psi_pad %ld for psi %ld", z->psi_pad, z->psi);
        snprintf(range, sizeof range, "%ld..2^40 (psi and its padding)", z->psi);
        why = range;
    } else if (z->psi_pad % z->ranks) {
        snprintf(bad, sizeof bad, "psi_pad %ld for %d ranks", z->psi_pad, z->ranks);
        why = "multiples of the ranks (each bucket is padded to a multiple of N)";
    } else if (z->sgd != 0 && z->sgd != 1) {
        snprintf(bad, sizeof bad, "sgd %d", z->sgd);
        why = "0 (AdamW) and 1 (SGD with momentum)";
    }
    if (why) {
        snprintf(err, cap, "memory pane: %s: allowed are %s", bad, why);
        return -1;
    }
    return 0;
}

int viz_model_set_zero(viz_model *m, const pl_viz_zero *z, char *err, size_t cap)
{
    if (pl_viz_check_zero(z, 0, err, cap)) return -1;
    memset(&m->zero, 0, sizeof m->zero);
    if (!z) return 0;
    m->zero = (struct viz_zero){z->stage, z->ranks, z->sgd, z->psi, z->psi_pad};
    return 0;
}

int viz_zero_metric(const char *name, int *rank)
{
    static const char *pre[VIZ_ZMEM_PARTS] = {"mem params r", "mem grads r", "mem optim r"};
    for (int part = 0; part < VIZ_ZMEM_PARTS; part++) {
        size_t n = strlen(pre[part]);
        if (strncmp(name, pre[part], n)) continue;
        const char *d = name + n;
        if (!*d || (d[0] == '0' && d[1]) || strlen(d) > 2) return -1;
        int r = 0;
        for (; *d; d++) {
            if (*d < '0' || *d > '9') return -1;
            r = r * 10 + (*d - '0');
        }
        if (r >= PL_MAX_RANKS) return -1;
        *rank = r;
        return part;
    }
    return -1;
}

int viz_zero_bytes_at(const viz_model *m, int rank, int part, double t, int modeled, double *bytes)
{
    if (rank < 0 || rank >= PL_MAX_RANKS || part < 0 || part >= VIZ_ZMEM_PARTS) return 0;
    const struct viz_zmem *z = m->zmem[rank][part];
    size_t n = m->nzmem[rank][part], lo = 0, hi = n;
    int c = modeled ? 1 : 0;
    while (lo < hi) { /* the first noted after t */
        size_t mid = (lo + hi) / 2;
        if (z[mid].at[c] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo) return 0;
    *bytes = z[lo - 1].bytes;
    return 1;
}

void viz_memory_pane(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v)
{
    viz_box(g, r, "memory", v->focus == PL_PANE_MEMORY);
    pl_rect in = {r.x + 1, r.y + 1, r.w - 2, r.h - 2};
    if (in.w < 1 || in.h < 1) return;
    if (m->zero.ranks < 1) {
        viz_text(g, in.x, in.y, in.w, "no ZeRO run described", COL_DIM, 0);
        return;
    }
    viz_text(g, in.x, in.y, in.w, "(the bars come next)", COL_DIM, 0);
}
