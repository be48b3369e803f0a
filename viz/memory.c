/* memory.c — the memory pane: a ZeRO run's bytes per device for the
 * parameters, gradients and optimizer state, on the scale of plain data
 * parallelism, beside the stage's formula (see vizint.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "vizint.h"

/* The cells a UTF-8 string takes (a cell a code point). */
static int cells(const char *s)
{
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

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
    m->version++; /* what is cached from the events depends on it too */
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

/* x with thousands separated: "71,376" */
static void fmt_int(char *buf, size_t cap, long long x)
{
    char d[32];
    snprintf(d, sizeof d, "%lld", x < 0 ? -x : x);
    size_t n = strlen(d), o = 0;
    if (x < 0 && o + 1 < cap) buf[o++] = '-';
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        if (i && (n - i) % 3 == 0 && o + 2 < cap) buf[o++] = ',';
        buf[o++] = d[i];
    }
    buf[o] = '\0';
}

void viz_fmt_kib(char *buf, size_t cap, double n)
{
    long long tenths = llround(n * 10 / 1024);
    char whole[32];
    fmt_int(whole, sizeof whole, tenths / 10);
    snprintf(buf, cap, "%s.%lld KiB", whole, tenths % 10);
}

/* Of the bytes of each part, per unit of Ψ: the coefficient, and whether it is over N. */
static int part_coeff(const struct viz_zero *z, int part, int *sharded)
{
    static const int first_sharded[VIZ_ZMEM_PARTS] = {3, 2, 1}; /* the stage that shards it */
    *sharded = z->stage >= first_sharded[part];
    return part == VIZ_ZMEM_OPTIM && !z->sgd ? 8 : 4;
}

long long viz_zero_formula_bytes(const struct viz_zero *z, int part)
{
    if (z->ranks < 1) return 0;
    long long sum = 0;
    for (int k = 0; k < VIZ_ZMEM_PARTS; k++) {
        if (part != VIZ_ZMEM_PARTS && part != k) continue;
        int sh, c = part_coeff(z, k, &sh);
        sum += sh ? c * (z->psi_pad / z->ranks) : c * (long long)z->psi_pad;
    }
    return sum;
}

long long viz_zero_scale_bytes(const struct viz_zero *z)
{
    return (z->sgd ? 12 : 16) * (long long)z->psi_pad;
}

/* The coefficients of Ψ of the parts held whole (*full) and sharded (*shard). */
static void coeffs(const struct viz_zero *z, int *full, int *shard)
{
    *full = *shard = 0;
    for (int k = 0; k < VIZ_ZMEM_PARTS; k++) {
        int sh, c = part_coeff(z, k, &sh);
        *(sh ? shard : full) += c;
    }
}

void viz_zero_formula(const struct viz_zero *z, int utf8, int form, char *buf, size_t cap)
{
    const char *psi = utf8 ? "\xce\xa8" : "Psi", *dot = utf8 ? "\xc2\xb7" : "*";
    int F, S;
    coeffs(z, &F, &S);
    char head[32], sym[64], num[128], kib[48], pad[32];
    if (z->stage == 0)
        snprintf(head, sizeof head, "ZeRO-0, plain DP");
    else
        snprintf(head, sizeof head, "ZeRO-%d", z->stage);
    fmt_int(pad, sizeof pad, z->psi_pad);
    if (F && S) {
        snprintf(sym, sizeof sym, "%d%s + %d%s/N", F, psi, S, psi);
        snprintf(num, sizeof num, "%d%s%s + %d%s%s/%d B", F, dot, pad, S, dot, pad, z->ranks);
    } else if (F) {
        snprintf(sym, sizeof sym, "%d%s", F, psi);
        snprintf(num, sizeof num, "%d%s%s B", F, dot, pad);
    } else {
        snprintf(sym, sizeof sym, "%d%s/N", S, psi);
        snprintf(num, sizeof num, "%d%s%s/%d B", S, dot, pad, z->ranks);
    }
    viz_fmt_kib(kib, sizeof kib, (double)viz_zero_formula_bytes(z, VIZ_ZMEM_PARTS));
    if (form == 0)
        snprintf(buf, cap, "%s: %s = %s = %s", head, sym, num, kib);
    else if (form == 1)
        snprintf(buf, cap, "%s: %s = %s", head, sym, kib);
    else
        snprintf(buf, cap, "%s: %s", head, sym);
}

void viz_zero_bar(int w, const double bytes[VIZ_ZMEM_PARTS], double scale, int len[VIZ_ZMEM_PARTS])
{
    int sum = 0;
    for (int k = 0; k < VIZ_ZMEM_PARTS; k++) {
        double f = scale > 0 && bytes[k] > 0 ? bytes[k] / scale * w : 0;
        len[k] = bytes[k] > 0 ? (int)lround(f) : 0;
        if (bytes[k] > 0 && len[k] < 1) len[k] = 1;
        sum += len[k];
    }
    while (sum > (w > 0 ? w : 0)) { /* past the bar: the longest cut */
        int big = 0;
        for (int k = 1; k < VIZ_ZMEM_PARTS; k++)
            if (len[k] > len[big]) big = k;
        len[big]--;
        sum--;
    }
}

static int digits(int x)
{
    int d = 1;
    while (x >= 10) {
        x /= 10;
        d++;
    }
    return d;
}

/* The time the pane shows: the view's, or the newest while it follows the run. */
static double shown_time(const viz_view *v) { return v->follow ? INFINITY : v->t_end; }

/* Rank rk's bytes of each part now: 1 when any was noted. */
static int rank_bytes(const viz_model *m, const viz_view *v, int rk, double b[VIZ_ZMEM_PARTS])
{
    int any = 0;
    for (int k = 0; k < VIZ_ZMEM_PARTS; k++) {
        b[k] = 0;
        any |= viz_zero_bytes_at(m, rk, k, shown_time(v), v->modeled, &b[k]);
    }
    return any;
}

/* Rank rk's most bytes at once (the three parts summed at each note's time) among the notes up
 * to the view's time: *peak, and 1 when any was noted. A stage-2 or 3 rank's working buckets
 * are taken and given back inside a step (zero.c notes each), so that at a step's end, where
 * the lab waits, its bars are back at rest: the peak is what says how much the buckets took. */
int viz_zero_peak_at(const viz_model *m, int rk, double t, int modeled, double *peak)
{
    int any = 0, c = modeled ? 1 : 0;
    *peak = 0;
    if (rk < 0 || rk >= PL_MAX_RANKS) return 0;
    for (int k = 0; k < VIZ_ZMEM_PARTS; k++)
        for (size_t i = 0; i < m->nzmem[rk][k]; i++) {
            double at = m->zmem[rk][k][i].at[c], sum = 0, b;
            if (at > t) break;
            for (int q = 0; q < VIZ_ZMEM_PARTS; q++)
                if (viz_zero_bytes_at(m, rk, q, at, modeled, &b)) sum += b;
            if (sum > *peak) *peak = sum;
            any = 1;
        }
    return any;
}

/* What a rank's row says after its bar: its bytes now, or "-" before any note. */
static void rank_value(const viz_model *m, const viz_view *v, int rk, char *buf, size_t cap)
{
    double b[VIZ_ZMEM_PARTS];
    if (rank_bytes(m, v, rk, b))
        viz_fmt_kib(buf, cap, b[0] + b[1] + b[2]);
    else
        snprintf(buf, cap, "-");
}

#define MEM_BAR_MIN 8  /* a bar's fewest cells */
#define MEM_BAR_MAX 64 /* and its most: the values stay beside the bars */

void viz_memory_geometry(const viz_model *m, const viz_view *v, pl_rect in, viz_memory_layout *L)
{
    memset(L, 0, sizeof *L);
    int n = m->zero.ranks;
    if (n < 1 || in.w < 1 || in.h < 2) return;
    int rows = in.h - (in.h >= 3 ? 2 : 1); /* the formula above, the legend below */
    L->label_w = 1 + digits(n - 1) + 1;    /* "r12" and a blank */
    L->value_w = 1;
    for (int rk = 0; rk < n; rk++) {
        char val[48];
        rank_value(m, v, rk, val, sizeof val);
        if ((int)strlen(val) > L->value_w) L->value_w = (int)strlen(val);
    }
    int min_w = L->label_w + MEM_BAR_MIN + 1 + L->value_w;
    int fit = (in.w + 2) / (min_w + 2); /* columns that fit, 2 apart */
    if (fit < 1) return;
    L->first = v->rank_scroll > 0 && v->rank_scroll < n ? v->rank_scroll : 0;
    int left = n - L->first, need = (left + rows - 1) / rows;
    L->cols = need < fit ? need : fit;
    L->rows = rows;
    L->col_w = (in.w - 2 * (L->cols - 1)) / L->cols;
    L->bar_w = L->col_w - L->label_w - 1 - L->value_w;
    if (L->bar_w > MEM_BAR_MAX) L->bar_w = MEM_BAR_MAX;
    int slots = rows * L->cols;
    L->shown = left <= slots ? left : slots > 1 ? slots - 1 : 1;
    L->more = left - L->shown;
}

/* The legend: each part's letter as its bar draws it, its name and term
 * (form 0: and the formula's bytes; 2: the names only), and Ψ's padding. */
static void memory_legend(viz_grid *g, int x, int y, int w, const viz_model *m, int buckets)
{
    static const char *name[VIZ_ZMEM_PARTS] = {"params", "grads", "optim"};
    static const char letter[VIZ_ZMEM_PARTS] = {'p', 'g', 'o'};
    static const int colour[VIZ_ZMEM_PARTS] = {COL_FORWARD, COL_BACKWARD, COL_OPTIMIZER};
    const struct viz_zero *z = &m->zero;
    const char *psi = g->utf8 ? "\xce\xa8" : "Psi";
    char item[VIZ_ZMEM_PARTS + 2][80];
    /* the forms tried: the terms with their bytes, then without; each first with the padding */
    static const struct {
        int form, pad;
    } tries[] = {{0, 1}, {0, 0}, {1, 1}, {1, 0}, {2, 0}};
    for (int t = 0; t < 5; t++) {
        int form = tries[t].form;
        int total = 0, nitems = VIZ_ZMEM_PARTS;
        for (int k = 0; k < VIZ_ZMEM_PARTS; k++) {
            int sh, c = part_coeff(z, k, &sh);
            char kib[48];
            viz_fmt_kib(kib, sizeof kib, (double)viz_zero_formula_bytes(z, k));
            if (form == 0)
                snprintf(item[k], sizeof item[k], "%c %s %d%s%s = %s", letter[k], name[k], c, psi,
                         sh ? "/N" : "", kib);
            else if (form == 1)
                snprintf(item[k], sizeof item[k], "%c %s %d%s%s", letter[k], name[k], c, psi,
                         sh ? "/N" : "");
            else
                snprintf(item[k], sizeof item[k], "%c %s", letter[k], name[k]);
        }
        if (buckets)
            snprintf(item[nitems++], sizeof item[0], "b %s",
                     form == 0 ? "working buckets at their peak" : "buckets' peak");
        if (z->psi_pad != z->psi && tries[t].pad) {
            char a[32], b[32];
            fmt_int(a, sizeof a, z->psi);
            fmt_int(b, sizeof b, z->psi_pad - z->psi);
            snprintf(item[nitems++], sizeof item[0], "%s = %s + %s padding", psi, a, b);
        }
        for (int k = 0; k < nitems; k++) total += (k ? 2 : 0) + cells(item[k]);
        if (total > w && t < 4) continue;
        for (int k = 0, cx = x; k < nitems; k++) {
            int len = cells(item[k]);
            if (cx + len > x + w) break;
            if (k < VIZ_ZMEM_PARTS) {
                viz_put(g, cx, y, (uint32_t)letter[k], colour[k], ATTR_REVERSE);
                viz_text(g, cx + 1, y, len - 1, item[k] + 1, COL_DIM, 0);
            } else if (buckets && k == VIZ_ZMEM_PARTS) {
                viz_put(g, cx, y, 'b', COL_WARN, 0);
                viz_text(g, cx + 1, y, len - 1, item[k] + 1, COL_DIM, 0);
            } else
                viz_text(g, cx, y, len, item[k], COL_DIM, 0);
            cx += len + 2;
        }
        return;
    }
}

void viz_memory_pane(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v)
{
    const struct viz_zero *z = &m->zero;
    const char *psi = g->utf8 ? "\xce\xa8" : "Psi", *sep = g->utf8 ? " \xc2\xb7 " : " - ";
    char title[160], scale[48];
    viz_fmt_kib(scale, sizeof scale, (double)viz_zero_scale_bytes(z));
    int sc = z->sgd ? 12 : 16;
    /* the title says the bars' scale, in as many words as fit */
    if (z->ranks < 1)
        snprintf(title, sizeof title, "memory");
    else {
        snprintf(title, sizeof title, "memory per device%sa full bar is plain DP's %d%s = %s", sep,
                 sc, psi, scale);
        if (cells(title) > r.w - 4)
            snprintf(title, sizeof title, "memory%sfull bar %d%s = %s", sep, sc, psi, scale);
        if (cells(title) > r.w - 4) snprintf(title, sizeof title, "memory");
    }
    viz_box(g, r, title, v->focus == PL_PANE_MEMORY);
    pl_rect in = {r.x + 1, r.y + 1, r.w - 2, r.h - 2};
    if (in.w < 1 || in.h < 1) return;
    if (z->ranks < 1) {
        viz_text(g, in.x, in.y, in.w, "no ZeRO run described", COL_DIM, 0);
        return;
    }
    char f[256];
    for (int form = 0; form < 3; form++) { /* the formula, whole, in the longest form that fits */
        viz_zero_formula(z, g->utf8, form, f, sizeof f);
        if (cells(f) <= in.w) break;
    }
    viz_text(g, in.x, in.y, in.w, f, COL_TITLE, ATTR_BOLD);
    double formula = (double)viz_zero_formula_bytes(z, VIZ_ZMEM_PARTS);
    int buckets = 0; /* any rank's peak past what it holds now: its bar's b cells */
    for (int rk = 0; rk < z->ranks && rk < PL_MAX_RANKS; rk++) {
        double pk, b[VIZ_ZMEM_PARTS];
        if (viz_zero_peak_at(m, rk, shown_time(v), v->modeled, &pk) && rank_bytes(m, v, rk, b) &&
            pk - (b[0] + b[1] + b[2]) >= 0.05 * 1024)
            buckets = 1;
    }
    if (in.h >= 3) memory_legend(g, in.x, in.y + in.h - 1, in.w, m, buckets);
    viz_memory_layout L;
    viz_memory_geometry(m, v, in, &L);
    if (!L.rows) {
        if (in.h >= 2) viz_text(g, in.x, in.y + 1, in.w, "too small for the bars", COL_DIM, 0);
        return;
    }
    static const char letter[VIZ_ZMEM_PARTS] = {'p', 'g', 'o'};
    static const int colour[VIZ_ZMEM_PARTS] = {COL_FORWARD, COL_BACKWARD, COL_OPTIMIZER};
    double full = (double)viz_zero_scale_bytes(z);
    int more_slot = L.more > 0 && L.rows * L.cols > L.shown; /* (one slot: its rank only) */
    for (int i = 0; i < L.shown + more_slot; i++) {
        int x = in.x + i / L.rows * (L.col_w + 2), y = in.y + 1 + i % L.rows;
        if (i == L.shown) { /* the last slot: the ranks left out */
            /* in the longest form that fits whole: never cut at the column's edge */
            char more[4][64];
            snprintf(more[0], sizeof more[0], "... %d more (focus: up/down)", L.more);
            snprintf(more[1], sizeof more[1], "+%d more (focus: up/down)", L.more);
            snprintf(more[2], sizeof more[2], "+%d more (up/down)", L.more);
            snprintf(more[3], sizeof more[3], "+%d more", L.more);
            int mf = 0;
            while (mf < 3 && (int)strlen(more[mf]) > L.col_w) mf++;
            viz_text(g, x, y, L.col_w, more[mf], COL_DIM, 0);
            break;
        }
        int rk = L.first + i;
        viz_textf(g, x, y, L.label_w, COL_RANK0 + rk % 8, ATTR_BOLD, "r%d", rk);
        double b[VIZ_ZMEM_PARTS];
        int any = rank_bytes(m, v, rk, b), len[VIZ_ZMEM_PARTS];
        viz_zero_bar(L.bar_w, b, full, len);
        int bx = x + L.label_w, cx = bx;
        for (int k = 0; k < VIZ_ZMEM_PARTS; k++)
            for (int c = 0; c < len[k]; c++)
                viz_put(g, cx++, y, (uint32_t)letter[k], colour[k], ATTR_REVERSE);
        /* past what it holds now, up to its peak: b, the working buckets it took then */
        double peak = 0, now = b[0] + b[1] + b[2];
        viz_zero_peak_at(m, rk, shown_time(v), v->modeled, &peak);
        int peak_end = bx;
        if (peak > now && full > 0) {
            double pl[VIZ_ZMEM_PARTS] = {peak, 0, 0};
            int plen[VIZ_ZMEM_PARTS];
            viz_zero_bar(L.bar_w, pl, full, plen);
            peak_end = bx + plen[0];
        }
        while (cx < peak_end) viz_put(g, cx++, y, 'b', COL_WARN, 0);
        while (cx < bx + L.bar_w) viz_put(g, cx++, y, viz_glyph_ch(g, G_LIGHT), COL_DIM, 0);
        char val[48];
        rank_value(m, v, rk, val, sizeof val);
        viz_textf(g, bx + L.bar_w + 1, y, L.value_w, any ? COL_DEFAULT : COL_DIM, 0, "%*s",
                  L.value_w, val);
        /* what it holds past the formula: its working buckets, now or at its peak, where
         * there is room */
        double over = now - formula, over_peak = peak - formula;
        int ex = bx + L.bar_w + 1 + L.value_w, room = x + L.col_w - ex;
        if (any && (over >= 0.05 * 1024 || over_peak >= 0.05 * 1024)) {
            char kib[48], extra[96];
            int at_peak = over < 0.05 * 1024;
            viz_fmt_kib(kib, sizeof kib, at_peak ? over_peak : over);
            if (at_peak) /* at rest now: what the buckets took at the peak (the b cells) */
                snprintf(extra, sizeof extra, " (peak: +%s working buckets)", kib);
            else
                snprintf(extra, sizeof extra, " (+%s in working buckets)", kib);
            if (cells(extra) > room)
                snprintf(extra, sizeof extra, " +%s%s", kib, at_peak ? " peak" : "");
            if (cells(extra) > room) snprintf(extra, sizeof extra, " +%s", kib);
            if (cells(extra) <= room) viz_text(g, ex, y, room, extra, COL_DIM, 0);
        }
    }
}
