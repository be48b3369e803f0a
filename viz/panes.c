/* panes.c — each pane drawn into the cell grid from the model (see vizint.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/plural.h"
#include "vizint.h"

void viz_fmt_time(char *buf, size_t cap, double s)
{
    double a = fabs(s);
    if (a < 0.5e-9) s = 0; /* "0 ns", never "-0 ns" */
    if (a < 1e-6)
        snprintf(buf, cap, "%.0f ns", s * 1e9);
    else if (a < 1e-3)
        snprintf(buf, cap, "%.1f us", s * 1e6);
    else if (a < 1)
        snprintf(buf, cap, "%.2f ms", s * 1e3);
    else
        snprintf(buf, cap, "%.2f s", s);
}

void viz_fmt_bytes(char *buf, size_t cap, double b)
{
    static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int k = 0;
    while (b >= 1024 && k < 4) {
        b /= 1024;
        k++;
    }
    snprintf(buf, cap, k ? "%.1f %s" : "%.0f %s", b, u[k]);
}

static int kind_colour(int kind)
{
    switch (kind) {
    case PL_EV_KERNEL:
        return COL_KERNEL;
    case PL_EV_FORWARD:
        return COL_FORWARD;
    case PL_EV_BACKWARD:
        return COL_BACKWARD;
    case PL_EV_OPTIMIZER:
        return COL_OPTIMIZER;
    case PL_EV_WEIGHT_GRAD:
        return COL_WGRAD;
    case PL_EV_COPY:
        return COL_COPY;
    default:
        return COL_COMM;
    }
}

/* The glyph of a kind on the timeline: each kind its own, so that they
 * differ without colour (NO_COLOR, a monochrome terminal) too. */
static viz_glyph kind_glyph(int kind)
{
    switch (kind) {
    case PL_EV_KERNEL:
        return G_FULL;
    case PL_EV_FORWARD:
        return G_EV_FORWARD;
    case PL_EV_BACKWARD:
        return G_EV_BACKWARD;
    case PL_EV_OPTIMIZER:
        return G_EV_OPTIM;
    case PL_EV_WEIGHT_GRAD:
        return G_EV_WGRAD;
    case PL_EV_COPY:
        return G_EV_COPY;
    case PL_EV_COLLECTIVE:
        return G_EV_COLL;
    default:
        return G_EV_COMM;
    }
}

static pl_rect inside(pl_rect r) { return (pl_rect){r.x + 1, r.y + 1, r.w - 2, r.h - 2}; }

/* ---- header and narration ----------------------------------------------------------- */

/* The cells a UTF-8 text takes (a code point a cell). */
static int cells_of(const char *s)
{
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* The header: every field where it fits (" paralab | title | step | mode | clock | devices |
 * ? help "); else the help key on the right and, before it, the fields shortened or dropped
 * whole, least important first (never a word or a number cut at the edge): the name
 * "paralab"; "clock modeled" said "modeled" ("(recorded)" dropped: the mode says "replay");
 * the devices; the title's first two words ("lab 09"); the mode's note in parentheses
 * ("step (space: next)" said "step"); the clock; the word "step" before the count; the title;
 * the mode; the count. */
static void header(viz_grid *g, pl_rect r, const viz_view *v)
{
    for (int x = r.x; x < r.x + r.w; x++) viz_put(g, x, r.y, ' ', COL_TITLE, ATTR_REVERSE);
    char steps[40], count[32];
    if (v->steps > 0)
        snprintf(count, sizeof count, "%d/%d", v->step, v->steps);
    else
        snprintf(count, sizeof count, "%d", v->step);
    snprintf(steps, sizeof steps, "step %s", count);
    const char *title = v->title ? v->title : "", *mode = v->mode ? v->mode : "";
    const char *clock = v->modeled ? "modeled" : "measured",
               *rec = v->recorded ? " (recorded)" : "";
    char text[512];
    snprintf(text, sizeof text, " paralab | %s | %s | %s | clock %s%s | %d device%s | ? help ",
             title, steps, mode, clock, rec, v->ndev, v->ndev == 1 ? "" : "s");
    if (cells_of(text) <= r.w) {
        viz_text(g, r.x, r.y, r.w, text, COL_TITLE, ATTR_REVERSE | ATTR_BOLD);
        return;
    }
    /* narrow: the short forms, each a whole field */
    char devs[32], short_title[256], short_mode[64];
    snprintf(devs, sizeof devs, "%d device%s", v->ndev, v->ndev == 1 ? "" : "s");
    const char *sp = strchr(title, ' '), *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
    snprintf(short_title, sizeof short_title, "%.*s", sp2 ? (int)(sp2 - title) : 255, title);
    const char *paren = strstr(mode, " (");
    snprintf(short_mode, sizeof short_mode, "%.*s", paren ? (int)(paren - mode) : 63, mode);
    enum { F_TITLE, F_STEPS, F_MODE, F_CLOCK, F_DEVS, F_COUNT };
    const char *f[F_COUNT] = {title, steps, mode, clock, devs};
    for (int cut = 0;; cut++) {
        switch (cut) { /* one field shorter or gone each time round */
        case 0:
            break;
        case 1:
            f[F_DEVS] = NULL;
            break;
        case 2:
            f[F_TITLE] = short_title;
            break;
        case 3:
            f[F_MODE] = short_mode;
            break;
        case 4:
            f[F_CLOCK] = NULL;
            break;
        case 5:
            f[F_STEPS] = count;
            break;
        case 6:
            f[F_TITLE] = NULL;
            break;
        case 7:
            f[F_MODE] = NULL;
            break;
        default:
            f[F_STEPS] = NULL;
            break;
        }
        size_t n = 0;
        text[0] = '\0';
        for (int i = 0; i < F_COUNT; i++)
            if (f[i] && f[i][0] && n < sizeof text)
                n += (size_t)snprintf(text + n, sizeof text - n, "%s%s", n ? " | " : " ", f[i]);
        if (cut > 7 || cells_of(text) + 8 <= r.w) break;
    }
    if (cells_of(text) + 8 <= r.w)
        viz_text(g, r.x, r.y, r.w, text, COL_TITLE, ATTR_REVERSE | ATTR_BOLD);
    if (r.w >= 8)
        viz_text(g, r.x + r.w - 8, r.y, 8, " ? help ", COL_TITLE, ATTR_REVERSE | ATTR_BOLD);
    else
        viz_text(g, r.x, r.y, r.w, "? help", COL_TITLE, ATTR_REVERSE | ATTR_BOLD);
}

/* Words wrapped into the box; returns the rows used. A '\n' starts a new
 * row and keeps the next line's indentation (a table in a step). g NULL:
 * the rows only (at in.w, up to in.h). */
static int wrap(viz_grid *g, pl_rect in, const char *text, int fg)
{
    int row = 0, hard = 0; /* hard: the row starts after a '\n' */
    const char *p = text;
    while (*p && row < in.h) {
        if (!hard)
            while (*p == ' ') p++;
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p), take = len;
        if (take > in.w) { /* break at the last space that fits */
            take = in.w;
            while (take > 0 && p[take] != ' ') take--;
            if (take == 0) take = in.w;
        }
        if (g) {
            char line[1024];
            snprintf(line, sizeof line, "%.*s", take, p);
            viz_text(g, in.x, in.y + row, in.w, line, fg, 0);
        }
        p += take;
        hard = *p == '\n';
        if (hard) p++;
        row++;
    }
    return row;
}

/* Bytes of the UTF-8 character at s (1 for a bad byte). */
static int cp_len(const unsigned char *s)
{
    int n = s[0] < 0x80             ? 1
            : (s[0] & 0xE0) == 0xC0 ? 2
            : (s[0] & 0xF0) == 0xE0 ? 3
            : (s[0] & 0xF8) == 0xF0 ? 4
                                    : 1;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return i;
    return n;
}

/* One row of a line wrapped at w cells, broken at the last space that
 * fits: its bytes in *n; returns where the next row starts (its leading
 * blanks skipped), or NULL after the last. */
static const char *wrap_row(const char *s, int w, int *n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t at = 0, brk = 0;
    for (int cells = 0; p[at] && cells < w; cells++) {
        if (p[at] == ' ') brk = at;
        at += (size_t)cp_len(p + at);
    }
    if (!p[at]) {
        *n = (int)at;
        return NULL;
    }
    if (p[at] == ' ') brk = at;
    size_t take = brk > 0 ? brk : at;
    *n = (int)take;
    const char *next = s + take;
    while (*next == ' ') next++;
    return *next ? next : NULL;
}

static int line_rows(const char *s, int w)
{
    int rows = 1, len;
    while ((s = wrap_row(s, w, &len))) rows++;
    return rows;
}

/* The transcript's rows at width w: before the current step's first line
 * (*anchor) and in all. */
static void transcript_rows(const viz_transcript *t, int w, int *anchor, int *total)
{
    int rows = 0;
    *anchor = 0;
    for (size_t i = 0; i < t->nlines; i++) {
        if (i == t->step_line) *anchor = rows;
        rows += line_rows(t->buf + t->line[i], w);
    }
    *total = rows;
}

int viz_narration_rows(const viz_view *v, int w)
{
    const viz_transcript *t = v->transcript;
    if (w < 1) return 0;
    if (!t) { /* a replay: the step's narration and the output under it (narration()) */
        pl_rect in = {0, 0, w, 1 << 20};
        int rows = wrap(NULL, in, v->narration[0] ? v->narration : "(no step yet)", COL_DEFAULT);
        return rows + v->nlog + (v->status ? 1 : 0);
    }
    int rows = v->status ? 1 : 0;
    for (size_t i = t->step_line; i < t->nlines; i++) rows += line_rows(t->buf + t->line[i], w);
    return rows;
}

/* The rows of text the narration pane r shows, under which the status. */
static int narration_text_rows(const viz_view *v, pl_rect r)
{
    return r.h - 2 - (v->status ? 1 : 0);
}

void viz_narration_range(const viz_view *v, pl_rect r, int *lo, int *hi)
{
    *lo = *hi = 0;
    if (!v->transcript || r.w < 3) return;
    int anchor, total, h = narration_text_rows(v, r);
    transcript_rows(v->transcript, r.w - 2, &anchor, &total);
    *lo = -anchor;
    *hi = total - h - anchor > 0 ? total - h - anchor : 0;
}

/* A live run's narration: the transcript from the current step's first
 * row (or where the student scrolled to), narrations in full colour, the
 * lab's output dim; the bottom border says what lies above and below. */
static void narration_transcript(viz_grid *g, pl_rect r, const viz_view *v)
{
    pl_rect in = inside(r);
    const viz_transcript *t = v->transcript;
    int h = narration_text_rows(v, r);
    if (!t->nlines) {
        viz_text(g, in.x, in.y, in.w, "(no step yet)", COL_DEFAULT, 0);
    } else if (h > 0) {
        int anchor, total, lo, hi;
        transcript_rows(t, in.w, &anchor, &total);
        viz_narration_range(v, r, &lo, &hi);
        int sc = v->narr_scroll < lo ? lo : v->narr_scroll > hi ? hi : v->narr_scroll;
        int top = anchor + sc, row = 0;
        for (size_t i = 0; i < t->nlines && row < top + h; i++) {
            const char *s = t->buf + t->line[i];
            int fg = t->narr[i] ? COL_DEFAULT : COL_DIM;
            do {
                int len;
                const char *next = wrap_row(s, in.w, &len);
                if (row >= top) {
                    char line[1024];
                    snprintf(line, sizeof line, "%.*s", len, s);
                    viz_text(g, in.x, in.y + row - top, in.w, line, fg, 0);
                }
                row++;
                s = next;
            } while (s && row < top + h);
        }
        int above = top, below = total - top - h;
        char say[96] = "";
        if (above > 0 && below > 0)
            snprintf(say, sizeof say, " %d row%s above, %d below: PgUp/PgDn ", above, pl_s(above),
                     below);
        else if (below > 0)
            snprintf(say, sizeof say, " %d more row%s: PgDn%s ", below, pl_s(below),
                     v->big_narration ? "" : ", n: all narration");
        else if (sc != 0)
            snprintf(say, sizeof say, " %d row%s above: PgUp; e: this step ", above, pl_s(above));
        else if (above > 0)
            snprintf(say, sizeof say, " earlier steps: PgUp ");
        int len = (int)strlen(say);
        if (len) {
            int x = r.x + r.w - 2 - len;
            viz_text(g, x > r.x + 1 ? x : r.x + 1, r.y + r.h - 1, r.w - 2, say, COL_TITLE,
                     ATTR_BOLD);
        }
    }
    if (v->status && in.h > 0)
        viz_text(g, in.x, in.y + in.h - 1, in.w, v->status, COL_WARN, ATTR_BOLD);
}

static void narration(viz_grid *g, pl_rect r, const viz_view *v)
{
    viz_box(g, r, "narration", v->focus == PL_PANE_NARRATION);
    pl_rect in = inside(r);
    if (in.w < 1 || in.h < 1) return;
    if (v->transcript) {
        narration_transcript(g, r, v);
        return;
    }
    int used = wrap(g, in, v->narration[0] ? v->narration : "(no step yet)", COL_DEFAULT);
    int room = in.h - used - (v->status ? 1 : 0);
    /* the lab's newest output lines under the narration */
    for (int i = 0; i < room && i < v->nlog; i++)
        viz_text(g, in.x, in.y + used + i, in.w,
                 v->log[v->nlog - (room < v->nlog ? room : v->nlog) + i], COL_DIM, 0);
    if (v->status && used < in.h)
        viz_text(g, in.x, in.y + in.h - 1, in.w, v->status, COL_WARN, ATTR_BOLD);
}

/* ---- devices -------------------------------------------------------------------------- */

static double view_time(const viz_view *v) { return v->t_end; }

static void devices(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v)
{
    viz_box(g, r, "devices", v->focus == PL_PANE_DEVICES);
    pl_rect in = inside(r);
    if (in.w < 8 || in.h < 1) return;
    int n = m->nranks > v->ndev ? m->nranks : v->ndev, rows = in.h;
    int first = v->rank_scroll > 0 && v->rank_scroll < n ? v->rank_scroll : 0;
    for (int k = 0; k < rows && first + k < n; k++) {
        int rk = first + k, y = in.y + k;
        if (k == rows - 1 && first + k < n - 1) {
            viz_textf(g, in.x, y, in.w, COL_DIM, 0, "... %d more (focus: up/down)", n - first - k);
            break;
        }
        int x = in.x + viz_textf(g, in.x, y, in.w, COL_RANK0 + rk % 8, ATTR_BOLD, "r%-2d", rk);
        if (m->roles[rk]) x += viz_textf(g, x, y, in.x + in.w - x, COL_DIM, 0, " %s", m->roles[rk]);
        /* what it runs now: the comm lane first, then compute, then copy */
        const pl_event *now = NULL;
        static const int order[] = {PL_LANE_COMM, PL_LANE_COMPUTE, PL_LANE_COPY};
        for (int i = 0; i < 3 && !now; i++)
            now = viz_model_at(m, rk, order[i], view_time(v), v->modeled);
        int memw = m->mem_total[rk] > 0 && in.w >= 28 ? (in.w >= 44 ? 12 : 6) : 0;
        int opw = in.x + in.w - x - 1 - (memw ? memw + 2 : 0);
        if (opw > 0)
            viz_text(g, x + 1, y, opw, now ? now->label : "idle",
                     now ? kind_colour(now->kind) : COL_DIM, 0);
        if (memw) {
            int bx = in.x + in.w - memw;
            viz_bar(g, bx, y, memw, m->mem_used[rk] / m->mem_total[rk], COL_COPY);
        }
    }
}

/* ---- timeline --------------------------------------------------------------------------- */

static const char *lane_tag[] = {"cmp", "cpy", "com"};

/* The glyph of each kind the model holds, its name, and idle: "█ kernel
 * ▒ copy · idle" at x, in w cells (short names when the long ones do not
 * fit; what still does not fit is left out). Returns the cells used. */
static int legend_digits(viz_grid *g, int x, int y, int w, const viz_model *m, int digits);

/* (inline: without a caller it is no unused function; other timelines call it) */
static inline int legend(viz_grid *g, int x, int y, int w, const viz_model *m)
{
    return legend_digits(g, x, y, w, m, 0);
}

/* The same, with "0-9 micro-batch" (brief "0-9 mb") after the kinds when digits: the timeline
 * drew a forward, backward or weight-gradient cell as its micro-batch's digit (reversed, as
 * the cells are: Lab 11's units, Lab 09's ops). */
static int legend_digits(viz_grid *g, int x, int y, int w, const viz_model *m, int digits)
{
    static const struct {
        int kind;
        const char *name, *brief;
    } items[] = {
        {PL_EV_KERNEL, "kernel", "kernel"},
        {PL_EV_FORWARD, "forward", "fwd"},
        {PL_EV_BACKWARD, "backward", "bwd"},
        {PL_EV_WEIGHT_GRAD, "weight grad", "wgrad"},
        {PL_EV_OPTIMIZER, "optimizer", "opt"},
        {PL_EV_COPY, "copy", "copy"},
        {PL_EV_RING_STEP, "comm", "comm"},
        {PL_EV_COLLECTIVE, "collective", "coll"},
        {-1, "idle", "idle"},
    };
    int n = (int)(sizeof items / sizeof *items), on[9], len[2] = {0, 0};
    for (int i = 0; i < n; i++) {
        int k = items[i].kind;
        /* (a hybrid run's communication is drawn by its group: group_legend) */
#define PLAIN(kind) (m->nkind[kind] - m->nkind_grouped[kind])
        on[i] = k < 0 || PLAIN(k) > 0 ||
                (k == PL_EV_RING_STEP && (PLAIN(PL_EV_SEND) || PLAIN(PL_EV_RECV)));
#undef PLAIN
        if (!on[i]) continue;
        len[0] += 4 + (int)strlen(items[i].name);
        len[1] += 4 + (int)strlen(items[i].brief);
    }
    if (digits) len[0] += 4 + (int)strlen("0-9 micro-batch") - 2;
    int brief = len[0] - 2 > w, cx = x;
    for (int i = 0; i < n; i++) {
        if (!on[i]) continue;
        const char *name = brief ? items[i].brief : items[i].name;
        int need = 2 + (int)strlen(name);
        if (cx + need > x + w) break;
        if (cx > x) { /* two blanks between items */
            viz_put(g, cx++, y, ' ', COL_DIM, 0);
            viz_put(g, cx++, y, ' ', COL_DIM, 0);
        }
        int k = items[i].kind;
        viz_put(g, cx, y, viz_glyph_ch(g, k < 0 ? G_DOT : kind_glyph(k)),
                k < 0 ? COL_DIM : kind_colour(k), 0);
        viz_put(g, cx + 1, y, ' ', COL_DIM, 0);
        viz_text(g, cx + 2, y, need - 2, name, COL_DIM, 0);
        cx += need;
    }
    if (digits) { /* after the kinds */
        const char *name = brief ? "mb" : "micro-batch";
        int need = 4 + (int)strlen(name);
        if (cx + 2 + need <= x + w) {
            viz_put(g, cx++, y, ' ', COL_DIM, 0);
            viz_put(g, cx++, y, ' ', COL_DIM, 0);
            viz_put(g, cx, y, '0', COL_FORWARD, ATTR_REVERSE);
            viz_put(g, cx + 1, y, '-', COL_DIM, 0);
            viz_put(g, cx + 2, y, '9', COL_BACKWARD, ATTR_REVERSE);
            viz_put(g, cx + 3, y, ' ', COL_DIM, 0);
            viz_text(g, cx + 4, y, need - 4, name, COL_DIM, 0);
            cx += need;
        }
    }
    return cx - x;
}

/* The groups of a hybrid run's traffic (pl_event.group), each in its colour
 * and letter: "t TP group  d DP group  p PP group" at x, in w cells (short
 * names when the long ones do not fit). Returns the cells used. */
static int group_legend(viz_grid *g, int x, int y, int w, const viz_model *m)
{
    static const char *name[PL_NUM_GROUPS] = {"", "TP group", "DP group", "PP group"};
    int len = 0;
    for (int k = PL_GROUP_TP; k <= PL_GROUP_PP; k++)
        if (m->ngroup[k]) len += (len ? 2 : 0) + 2 + (int)strlen(name[k]);
    int brief = len > w, cx = x;
    for (int k = PL_GROUP_TP; k <= PL_GROUP_PP; k++) {
        if (!m->ngroup[k]) continue;
        int need = 2 + (brief ? 2 : (int)strlen(name[k]));
        if (cx + (cx > x ? 2 : 0) + need > x + w) break;
        if (cx > x) {
            viz_put(g, cx++, y, ' ', COL_DIM, 0);
            viz_put(g, cx++, y, ' ', COL_DIM, 0);
        }
        viz_put(g, cx, y, (uint32_t)viz_group_letter(k), viz_group_colour(k), ATTR_BOLD);
        viz_put(g, cx + 1, y, ' ', COL_DIM, 0);
        viz_text(g, cx + 2, y, need - 2, name[k], viz_group_colour(k), 0);
        cx += need;
    }
    return cx - x;
}

/* A hybrid run's communication: the letter of its group, in the group's
 * colour. 0: no group. */
static uint32_t group_mark(const pl_event *e, int *col)
{
    if (e->group < PL_GROUP_TP || e->group > PL_GROUP_PP ||
        !(e->kind == PL_EV_COLLECTIVE || e->kind == PL_EV_RING_STEP || e->kind == PL_EV_SEND ||
          e->kind == PL_EV_RECV))
        return 0;
    *col = viz_group_colour(e->group);
    return (uint32_t)viz_group_letter(e->group);
}

static const char *fitting(const char *const *s, int n, int w);

/* ---- timeline: a lab about streams, each step's run from its own start ------------------- */

/* The streams' work of one narrated step (pl_event.step) on rank 0: a lab
 * about streams runs the same work several ways, one step each (Lab 05:
 * one stream, then chunks over streams). */
typedef struct {
    int step;      /* pl_event.step */
    double lo, hi; /* its first start and last end on the clock */
    unsigned used; /* the stream lanes it used (bit k: lane k) */
    int kernels;
} stream_run;
#define VIZ_MAX_RUNS 4

/* The runs on rank rk's stream lanes, by step, the newest VIZ_MAX_RUNS;
 * returns how many. Events before the first narrated step (step 0) are no
 * run. */
static int stream_runs(const viz_model *m, int rk, int modeled, stream_run *run)
{
    stream_run all[64];
    int n = 0;
    for (int l = 0; l < m->nstreams[rk] && l < VIZ_STREAM_LANES; l++)
        for (size_t i = 0; i < m->streams[rk][l].n; i++) {
            const pl_event *e = &m->streams[rk][l].ev[i];
            if (e->step <= 0) continue;
            int k = 0;
            while (k < n && all[k].step != e->step) k++;
            if (k == n) {
                if (n == 64) continue;
                all[n++] =
                    (stream_run){e->step, viz_ev_start(e, modeled), viz_ev_end(e, modeled), 0, 0};
            }
            double s = viz_ev_start(e, modeled), t = viz_ev_end(e, modeled);
            all[k].lo = s < all[k].lo ? s : all[k].lo;
            all[k].hi = t > all[k].hi ? t : all[k].hi;
            all[k].used |= 1u << l;
            all[k].kernels += e->kind == PL_EV_KERNEL;
        }
    /* by step (a handful: insertion) */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && all[j - 1].step > all[j].step; j--) {
            stream_run x = all[j];
            all[j] = all[j - 1];
            all[j - 1] = x;
        }
    int from = n > VIZ_MAX_RUNS ? n - VIZ_MAX_RUNS : 0;
    for (int i = from; i < n; i++) run[i - from] = all[i];
    return n - from;
}

static int popcount(unsigned x)
{
    int k = 0;
    for (; x; x &= x - 1) k++;
    return k;
}

/* Each run one above the other, every one from its own first event, on
 * the time scale of the longest: a row naming it (its step, streams,
 * kernels and time; from the second on, how many times as fast as the
 * first), then a lane per stream it used; blank after its end, so that the
 * shorter run ends visibly sooner. Then the axis (0 to the longest run's
 * time) and the legend: the glyphs, and what the lanes are. Short of
 * rows, one row names every run and each lane its run's step; rows that
 * still do not fit are left out, from the last run's last lane, and the
 * bottom border says how many. */
/* How run i's time compares with the first's (base over its, ratio):
 * "1.69x as fast", or, slower, "1.10x slower" (never "0.91x as fast");
 * brief: without "as fast". Returns what snprintf does. */
static int speed_words(char *buf, size_t cap, double ratio, int brief)
{
    if (ratio < 1) return snprintf(buf, cap, "%.2fx slower", ratio > 0 ? 1 / ratio : 0);
    return snprintf(buf, cap, brief ? "%.2fx" : "%.2fx as fast", ratio);
}

static void stream_compare(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v,
                           const stream_run *run, int nrun)
{
    char sp[32], title[96];
    double longest = 0;
    for (int i = 0; i < nrun; i++)
        longest = run[i].hi - run[i].lo > longest ? run[i].hi - run[i].lo : longest;
    viz_fmt_time(sp, sizeof sp, longest);
    snprintf(title, sizeof title, "timeline (%s clock): each step from its start, %s wide",
             v->modeled ? "modeled" : "measured", sp);
    viz_box(g, r, title, v->focus == PL_PANE_TIMELINE);
    pl_rect in = inside(r);
    int label_w = 8, w = in.w - label_w;
    if (w < 4 || in.h < 2) return;
    double dt = longest > 0 ? longest / w : 1;
    int need = 0;
    for (int i = 0; i < nrun; i++) need += 1 + popcount(run[i].used);
    /* short of rows: one row names every run ("2: 1 stream 674.4 us  3: ..."),
     * and each lane says its run's step ("2: s1") */
    int compact = need > in.h, y = in.y;
    if (compact) {
        need -= nrun - 1;
        char line[2][256];
        for (int f = 0; f < 2; f++) { /* f 0: the words; 1: the numbers */
            int len = 0;
            for (int i = 0; i < nrun && len < (int)sizeof line[f] - 80; i++) {
                char t[32];
                int nl = popcount(run[i].used);
                viz_fmt_time(t, sizeof t, run[i].hi - run[i].lo);
                len += snprintf(line[f] + len, sizeof line[f] - (size_t)len,
                                f ? "%s%d: %d stream%s %s" : "%sstep %d: %d stream%s, %s",
                                i ? (f ? "  " : "; ") : "", run[i].step, nl, nl == 1 ? "" : "s", t);
                if (i > 0 && run[i].hi > run[i].lo) {
                    char sw[48];
                    speed_words(sw, sizeof sw, (run[0].hi - run[0].lo) / (run[i].hi - run[i].lo),
                                f);
                    len += snprintf(line[f] + len, sizeof line[f] - (size_t)len, f ? " %s" : ", %s",
                                    sw);
                }
            }
        }
        const char *ls[2] = {line[0], line[1]};
        viz_text(g, in.x, y++, in.w, fitting(ls, 2, in.w), COL_TITLE, ATTR_BOLD);
    }
    /* the axis, then the legend's two rows, each while the runs still fit */
    int axis = need + 1 <= in.h, legend_rows = 0;
    while (legend_rows < 2 && need + axis + legend_rows + 1 <= in.h) legend_rows++;
    int rows = in.h - axis - legend_rows, left = 0;
    for (int i = 0; i < nrun; i++) {
        int nl = popcount(run[i].used);
        if (y >= in.y + rows) {
            left += !compact + nl;
            continue;
        }
        char t[32], head[160];
        viz_fmt_time(t, sizeof t, run[i].hi - run[i].lo);
        int len =
            snprintf(head, sizeof head, "step %d: %d stream%s, %d kernel%s, %s", run[i].step, nl,
                     nl == 1 ? "" : "s", run[i].kernels, run[i].kernels == 1 ? "" : "s", t);
        if (i > 0 && run[i].hi > run[i].lo) {
            char sw[48];
            double ratio = (run[0].hi - run[0].lo) / (run[i].hi - run[i].lo);
            speed_words(sw, sizeof sw, ratio, 0);
            snprintf(head + len, sizeof head - (size_t)len, ", %s %s step %d", sw,
                     ratio < 1 ? "than" : "as", run[0].step);
        }
        if (!compact) viz_text(g, in.x, y++, in.w, head, COL_TITLE, ATTR_BOLD);
        for (int l = 0; l < VIZ_STREAM_LANES; l++) {
            if (!(run[i].used & 1u << l)) continue;
            if (y >= in.y + rows) {
                left++;
                continue;
            }
            if (compact)
                viz_textf(g, in.x, y, label_w, COL_DIM, 0, "%d: s%d%s", run[i].step, l,
                          l == VIZ_STREAM_LANES - 1 ? "+" : "");
            else
                viz_textf(g, in.x, y, label_w, COL_DIM, 0, "    s%d%s", l,
                          l == VIZ_STREAM_LANES - 1 ? "+" : "");
            for (int c = 0; c < w; c++) {
                double at = run[i].lo + (c + 0.5) * dt;
                if (at > run[i].hi) break; /* after its end: blank */
                const pl_event *e = viz_model_at_stream(m, 0, l, at, v->modeled);
                if (!e || e->step != run[i].step)
                    viz_put(g, in.x + label_w + c, y, viz_glyph_ch(g, G_DOT), COL_DIM, 0);
                else
                    viz_put(g, in.x + label_w + c, y, viz_glyph_ch(g, kind_glyph(e->kind)),
                            kind_colour(e->kind), 0);
            }
            /* a kernel shorter than a cell still gets one: the cell of its middle */
            const viz_lane *L = &m->streams[0][l];
            for (size_t k = 0; k < L->n; k++) {
                const pl_event *e = &L->ev[k];
                if (e->step != run[i].step || e->kind != PL_EV_KERNEL) continue;
                int c = (int)floor(
                    ((viz_ev_start(e, v->modeled) + viz_ev_end(e, v->modeled)) / 2 - run[i].lo) /
                    dt);
                if (c >= 0 && c < w)
                    viz_put(g, in.x + label_w + c, y, viz_glyph_ch(g, G_FULL), COL_KERNEL, 0);
            }
            y++;
        }
    }
    int ay = in.y + in.h - 1;
    if (axis) {
        char z[32];
        viz_fmt_time(z, sizeof z, 0);
        viz_text(g, in.x + label_w, ay, w, z, COL_DIM, 0);
        int l2 = (int)strlen(sp);
        if (w > l2 + 6) viz_text(g, in.x + in.w - l2, ay, l2, sp, COL_DIM, 0);
    }
    /* the glyphs, then the lanes */
    int ly = ay - axis - legend_rows + 1;
    if (legend_rows >= 1)
        legend(g, in.x, ly, in.w, m);
    else if (r.w > 8) {
        int k = legend(g, r.x + 2, r.y + r.h - 1, r.w - 5, m);
        viz_put(g, r.x + 1, r.y + r.h - 1, ' ', COL_DIM, 0);
        viz_put(g, r.x + 2 + k, r.y + r.h - 1, ' ', COL_DIM, 0);
    }
    if (legend_rows >= 2) {
        static const char *const lanes[] = {
            "s0 the default stream, s1.. the streams made; a copy engine each way and the SMs run "
            "side by side",
            "s0 default stream, s1.. made ones; copy in, kernel, copy out overlap",
            "s0 default, s1.. made streams"};
        viz_text(g, in.x, ly + 1, in.w, fitting(lanes, 3, in.w), COL_DIM, 0);
    }
    if (left > 0 && r.w > 30) {
        char s[48];
        int len = snprintf(s, sizeof s, " %d row%s left out ", left, left == 1 ? "" : "s");
        viz_text(g, r.x + r.w - 2 - len, r.y + r.h - 1, len, s, COL_TITLE, ATTR_BOLD);
    }
}

static void timeline(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v)
{
    int nr = m->nranks > v->ndev ? m->nranks : v->ndev;
    if (m->stream_lanes && nr == 1 && !v->zoomed) { /* one stream against chunks */
        stream_run run[VIZ_MAX_RUNS];
        int nrun = stream_runs(m, 0, v->modeled, run);
        if (nrun >= 2) {
            stream_compare(g, r, m, v, run, nrun);
            return;
        }
    }
    char t1[32], t2[32], sp[32];
    viz_fmt_time(sp, sizeof sp, v->span);
    char title[96];
    snprintf(title, sizeof title, "timeline (%s clock, %s wide%s)",
             v->modeled ? "modeled" : "measured", sp, v->follow ? ", following" : "");
    viz_box(g, r, title, v->focus == PL_PANE_TIMELINE);
    pl_rect in = inside(r);
    int label_w = 8, w = in.w - label_w;
    if (w < 4 || in.h < 2) return;
    double t0 = v->t_end - v->span, dt = v->span / w;
    int rows = in.h - 1; /* the last row: the time axis */
    int n = m->nranks > v->ndev ? m->nranks : v->ndev;
    /* three lanes per rank when they fit, else one row per rank (comm over
     * compute over copy); or, for a lab about streams, a lane per stream */
    int per = n * 3 <= rows ? 3 : 1,
        first = v->rank_scroll > 0 && v->rank_scroll < n ? v->rank_scroll : 0;
    /* the legend: in a row of its own above the axis when the lanes leave
     * one, else in the bottom border */
    int need = 0;
    for (int rk = first; rk < n; rk++)
        need += m->stream_lanes ? (m->nstreams[rk] > 0 ? m->nstreams[rk] : 1) : per;
    int own_legend = need < rows;
    /* a hybrid run's groups: a row of their own too, when there is one */
    int groups = m->ngroup[PL_GROUP_TP] + m->ngroup[PL_GROUP_DP] + m->ngroup[PL_GROUP_PP] > 0;
    int own_groups = groups && need < rows - own_legend;
    rows -= own_legend + own_groups;
    int y = in.y, drew_digits = 0; /* a cell drawn as its op's micro-batch digit */
    for (int rk = first; rk < n && y < in.y + rows; rk++) {
        int lanes = m->stream_lanes ? (m->nstreams[rk] > 0 ? m->nstreams[rk] : 1) : per;
        for (int l = 0; l < lanes && y < in.y + rows; l++, y++) {
            if (m->stream_lanes)
                viz_textf(g, in.x, y, label_w, l == 0 ? COL_RANK0 + rk % 8 : COL_DIM, 0,
                          "%s%-2d s%d%s", l == 0 ? "r" : " ", rk, l,
                          l == VIZ_STREAM_LANES - 1 ? "+" : "");
            else if (per == 3)
                viz_textf(g, in.x, y, label_w, l == 0 ? COL_RANK0 + rk % 8 : COL_DIM, 0,
                          "%s%-2d %s", l == 0 ? "r" : " ", rk, lane_tag[l]);
            else
                viz_textf(g, in.x, y, label_w, COL_RANK0 + rk % 8, 0, "r%-2d", rk);
            for (int c = 0; c < w; c++) {
                double t = t0 + (c + 0.5) * dt;
                const pl_event *e = NULL;
                if (m->stream_lanes)
                    e = viz_model_at_stream(m, rk, l, t, v->modeled);
                else if (per == 3)
                    e = viz_model_at(m, rk, l, t, v->modeled);
                else
                    for (int k = PL_NUM_LANES - 1; k >= 0 && !e; k--)
                        e = viz_model_at(m, rk, k, t, v->modeled);
                if (!e) {
                    viz_put(g, in.x + label_w + c, y, viz_glyph_ch(g, G_DOT), COL_DIM, 0);
                    continue;
                }
                uint32_t ch = viz_glyph_ch(g, kind_glyph(e->kind));
                int col = kind_colour(e->kind), attr = 0;
                if ((e->kind == PL_EV_FORWARD || e->kind == PL_EV_BACKWARD ||
                     e->kind == PL_EV_WEIGHT_GRAD) &&
                    e->micro_batch >= 0) {
                    ch = (uint32_t)('0' + e->micro_batch % 10); /* the micro-batch, in its colour */
                    attr = ATTR_REVERSE;
                    drew_digits = 1;
                }
                uint32_t gm = group_mark(e, &col);
                if (gm) ch = gm;
                viz_put(g, in.x + label_w + c, y, ch, col, attr);
            }
        }
    }
    /* the axis: start, middle and end times (none before the first event) */
    if (!m->nevents) return;
    viz_fmt_time(t1, sizeof t1, t0 - (v->modeled ? m->t_lo[1] : m->t_lo[0]));
    viz_fmt_time(t2, sizeof t2, v->t_end - (v->modeled ? m->t_lo[1] : m->t_lo[0]));
    int ay = in.y + in.h - 1;
    viz_text(g, in.x + label_w, ay, w, t1, COL_DIM, 0);
    int l1 = (int)strlen(t1), l2 = (int)strlen(t2);
    if (w > l1 + l2 + 2) viz_text(g, in.x + in.w - l2, ay, l2, t2, COL_DIM, 0);
    if (own_legend) legend_digits(g, in.x, ay - 1, in.w, m, drew_digits);
    if (own_groups) group_legend(g, in.x, ay - 1 - own_legend, in.w, m);
    if ((!own_legend || (groups && !own_groups)) && r.w > 8) {
        /* " █ kernel  ▒ copy " on the border (a hybrid run's groups first) */
        int used = groups && !own_groups ? group_legend(g, r.x + 2, r.y + r.h - 1, r.w - 5, m) : 0;
        int gap = used ? 2 : 0; /* two blanks between the two, when the kinds' fit */
        if (!own_legend && r.w - 5 - used - gap > 0) {
            int k = legend_digits(g, r.x + 2 + used + gap, r.y + r.h - 1, r.w - 5 - used - gap, m,
                                  drew_digits);
            for (int i = 0; k && i < gap; i++)
                viz_put(g, r.x + 2 + used + i, r.y + r.h - 1, ' ', COL_DIM, 0);
            used += k ? gap + k : 0;
        }
        viz_put(g, r.x + 1, r.y + r.h - 1, ' ', COL_DIM, 0);
        viz_put(g, r.x + 2 + used, r.y + r.h - 1, ' ', COL_DIM, 0);
    }
}

/* ---- topology --------------------------------------------------------------------------- */

/* Where rank k of n sits: on an ellipse filling the box. */
static void ring_pos(pl_rect in, int k, int n, int *x, int *y)
{
    double a = 2 * M_PI * k / (n ? n : 1) - M_PI / 2;
    double rx = (in.w - 6) / 2.0, ry = (in.h - 2) / 2.0;
    *x = in.x + (int)lround(in.w / 2.0 + rx * cos(a)) - 1;
    *y = in.y + (int)lround(in.h / 2.0 - 0.5 + ry * sin(a));
}

/* The links that carried bytes, a then b: a -> b in *la, *lb. */
static int list_links(const viz_model *m, int n, uint8_t *la, uint8_t *lb)
{
    int k = 0;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            if (m->link[a][b]) {
                la[k] = (uint8_t)a;
                lb[k++] = (uint8_t)b;
            }
    return k;
}

static int ring_drawn(pl_rect in, int n) { return n <= 16 && in.h >= 7; }

/* Where the list of links goes: inside the ring when it is drawn, else
 * the whole pane; how many columns of cw cells, which link comes first. */
typedef struct {
    pl_rect area;
    int total, cols, cw, page, first;
} link_list;

static link_list link_geometry(const viz_model *m, const viz_view *v, pl_rect in, int n,
                               const uint8_t *la, const uint8_t *lb, int total)
{
    link_list L = {ring_drawn(in, n) ? (pl_rect){in.x + 5, in.y + 2, in.w - 10, in.h - 4} : in,
                   total,
                   1,
                   1,
                   0,
                   0};
    int longest = 0;
    for (int k = 0; k < total; k++) {
        char by[32], s[48];
        viz_fmt_bytes(by, sizeof by, (double)m->link[la[k]][lb[k]]);
        int len = snprintf(s, sizeof s, "%d>%d %s", la[k], lb[k], by);
        longest = len > longest ? len : longest;
    }
    L.cw = longest + 2;
    L.cols = (L.area.w + 2) / L.cw; /* as many as it takes, as many as fit */
    if (L.area.h > 0 && L.cols > (total + L.area.h - 1) / L.area.h)
        L.cols = (total + L.area.h - 1) / L.area.h;
    if (L.cols < 1) L.cols = 1;
    L.page = L.area.h > 0 ? L.cols * L.area.h : 0;
    if (total > L.page && L.page > 0) {
        int last = (total - L.page + L.cols - 1) / L.cols * L.cols;
        int f = v->link_scroll > 0 ? v->link_scroll / L.cols * L.cols : 0;
        L.first = f < last ? f : last;
    }
    return L;
}

/* The ring steps of the newest collective run on the engine's ring (its
 * ring-step events carry the segment they moved: pl_event.chunk), as a
 * table: a row per step, a column per link a>a+1, in each cell the
 * segment that crossed it (c0..c(N-1)), from the events of the receiving
 * rank (peer: the sender). The collective: rank 0's newest on its comm
 * lane that started at or before t and has such steps; rank b's is its
 * collective of the same number (every rank makes the same calls in the
 * same order). A pipelined ring (its steps named "... chunk K step S"):
 * chunk 1's steps. */
#define VIZ_RING_STEPS 32
typedef struct {
    int steps, n;
    char kind[48]; /* "all_reduce" */
    int step;      /* the narrated step it ran in (pl_event.step; 0: none) */
    signed char seg[VIZ_RING_STEPS][PL_MAX_RANKS]; /* [step][receiver]: -1 none */
    int pipelined;                                 /* chunks > 1 */
} ring_table;

static int ring_step_of(const char *label, int *chunk)
{
    const char *s = strstr(label, " step ");
    const char *c = strstr(label, " chunk ");
    *chunk = c ? atoi(c + 7) : 1;
    return s ? atoi(s + 6) : 0;
}

/* Fills T from the ord-th collective of every rank; 1 when its first step
 * moved a segment over every link (a collective too small for that, as
 * one float, is passed over). */
static int ring_steps_fill(const viz_model *m, int n, size_t ord, int modeled, ring_table *T)
{
    memset(T, 0, sizeof *T);
    memset(T->seg, -1, sizeof T->seg);
    T->n = n;
    for (int b = 0; b < n; b++) {
        const viz_lane *L = &m->lanes[b][PL_LANE_COMM];
        if (ord >= L->ncoll) return 0;
        size_t i = L->coll[ord]; /* its ord-th collective */
        const pl_event *Cb = &L->ev[i];
        if (b == 0) {
            snprintf(T->kind, sizeof T->kind, "%s", Cb->label);
            T->step = Cb->step;
        }
        /* its steps: from the first event that starts with it (a step ends
         * first, so it may come before it) to its end */
        while (i > 0 && viz_ev_start(&L->ev[i - 1], modeled) >= viz_ev_start(Cb, modeled)) i--;
        for (size_t j = i; j < L->n; j++) {
            const pl_event *s = &L->ev[j];
            if (viz_ev_start(s, modeled) > viz_ev_end(Cb, modeled)) break;
            if (s->kind != PL_EV_RING_STEP || s->chunk <= 0 || s->peer != (b + n - 1) % n) continue;
            int chunk, st = ring_step_of(s->label, &chunk);
            T->pipelined |= chunk > 1;
            if (chunk != 1 || st < 1 || st > VIZ_RING_STEPS) continue;
            T->seg[st - 1][b] = (signed char)(s->chunk - 1);
            T->steps = st > T->steps ? st : T->steps;
        }
    }
    int full = T->steps > 0;
    for (int b = 0; b < n; b++) full &= T->seg[0][b] >= 0;
    return full;
}

#define VIZ_RING_TRIES 64
static int ring_steps_find(const viz_model *m, int n, double t, int modeled, ring_table *T)
{
    /* rank 0's collectives, newest first from the last to start by t (a
     * binary search: the lane is in start order), at most VIZ_RING_TRIES of
     * them (a ring table of an older one would be a stale picture) */
    const viz_lane *L0 = &m->lanes[0][PL_LANE_COMM];
    size_t lo = 0, hi = L0->ncoll;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (viz_ev_start(&L0->ev[L0->coll[mid]], modeled) <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t ord = lo, tries = 0; ord-- > 0 && tries < VIZ_RING_TRIES;) {
        const pl_event *e = &L0->ev[L0->coll[ord]];
        if (viz_ev_start(e, modeled) > t) continue;
        tries++;
        if (ring_steps_fill(m, n, ord, modeled, T)) return 1;
    }
    memset(T, 0, sizeof *T);
    return 0;
}

/* The table's rows (a headline, the links, a row per step) and columns. */
static int ring_table_rows(const ring_table *T) { return 2 + T->steps; }
static int ring_table_cols(const ring_table *T) { return 5 + 4 * T->n; }

/* Whether step s (0-based) of the collective adds what came in (reduce)
 * or copies it: the engine's ring all-reduce is a reduce-scatter (N-1
 * steps), then an all-gather. */
static int ring_step_adds(const ring_table *T, int s)
{
    if (strstr(T->kind, "gather")) return 0;
    if (strstr(T->kind, "scatter")) return 1;
    return s < T->n - 1;
}

static void ring_table_draw(viz_grid *g, pl_rect a, const ring_table *T, int compact, int now)
{
    if (compact) { /* no headline: the links' row first */
        a.y--;
        a.h++;
    }
    char head[4][160], kind[80];
    if (T->step > 0 && T->step != now) /* an earlier step's: say which */
        snprintf(kind, sizeof kind, "step %d's %s", T->step, T->kind);
    else
        snprintf(kind, sizeof kind, "%s", T->kind);
    snprintf(head[0], sizeof head[0], "%s%s: cK = segment K moved a>b; + added, = copied", kind,
             T->pipelined ? " (chunk 1)" : "");
    snprintf(head[1], sizeof head[1], "%s%s: cK moved a>b; + add, = copy", kind,
             T->pipelined ? " chunk 1" : "");
    snprintf(head[2], sizeof head[2], "%s: cK a>b +add =copy", kind);
    snprintf(head[3], sizeof head[3], "%s: cK moved a>b", kind);
    const char *hs[4] = {head[0], head[1], head[2], head[3]};
    if (!compact) viz_text(g, a.x, a.y, a.w, fitting(hs, 4, a.w), COL_DEFAULT, ATTR_BOLD);
    viz_text(g, a.x, a.y + 1, 5, "step", COL_DIM, 0);
    for (int j = 0; j < T->n; j++) /* link j>j+1: its receiver's steps */
        viz_textf(g, a.x + 5 + 4 * j, a.y + 1, 3, COL_DIM, 0, "%d>%d", j, (j + 1) % T->n);
    for (int s = 0; s < T->steps && 2 + s < a.h; s++) {
        int y = a.y + 2 + s, add = ring_step_adds(T, s);
        viz_textf(g, a.x, y, 5, COL_DIM, 0, "%2d %c", s + 1, add ? '+' : '=');
        for (int j = 0; j < T->n; j++) {
            int k = T->seg[s][(j + 1) % T->n];
            if (k < 0)
                viz_put(g, a.x + 5 + 4 * j, y, viz_glyph_ch(g, G_DOT), COL_DIM, 0);
            else
                viz_textf(g, a.x + 5 + 4 * j, y, 3, COL_RANK0 + k % 8, add ? ATTR_BOLD : 0, "c%d",
                          k);
        }
    }
}

/* A data-parallel run's gradient buckets (Lab 07): rank 0's newest
 * backward (a PL_EV_BACKWARD of no micro-batch on its compute lane) that
 * started at or before t, and the collectives its comm lane started from
 * then until its next optimizer step (or t): one per bucket, in the order
 * backward filled them. Only in a run without shards, pipeline, mesh or
 * ZeRO (their panes say what their backward does). */
#define VIZ_MAX_BUCKETS 16
typedef struct {
    int n, more;           /* buckets drawn, and left out */
    double b0, b1, lo, hi; /* the backward; the window drawn */
    double s[VIZ_MAX_BUCKETS], e[VIZ_MAX_BUCKETS];
    double ready[VIZ_MAX_BUCKETS]; /* when it was full: its layer's backward's end */
    uint64_t bytes[VIZ_MAX_BUCKETS];
} bucket_view;

/* A run whose other panes say what its communication does (shards,
 * pipeline, mesh, ZeRO): the topology draws its ring and links only. */
static int has_own_pane(const viz_model *m)
{
    return m->nmatrices || m->pp.stages || m->zero.ranks || m->mesh.dp;
}

/* The first event of L that starts at or after t (L->n: none); a lane's
 * events are in start order on both clocks (lane_at, model.c). */
static size_t lane_from(const viz_lane *L, double t, int modeled)
{
    size_t lo = 0, hi = L->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (viz_ev_start(&L->ev[mid], modeled) < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int buckets_find(const viz_model *m, double t, int modeled, bucket_view *B)
{
    memset(B, 0, sizeof *B);
    if (has_own_pane(m) || !m->whole_backwards0) return 0;
    const viz_lane *C = &m->lanes[0][PL_LANE_COMPUTE], *K = &m->lanes[0][PL_LANE_COMM];
    const pl_event *bw = NULL;
    size_t at = 0;
    for (size_t i = C->n; i-- > 0 && !bw;)
        if (C->ev[i].kind == PL_EV_BACKWARD && C->ev[i].micro_batch < 0 && C->ev[i].layer < 0 &&
            viz_ev_start(&C->ev[i], modeled) <= t) {
            bw = &C->ev[i];
            at = i;
        }
    if (!bw) return 0;
    B->b0 = viz_ev_start(bw, modeled);
    B->b1 = viz_ev_end(bw, modeled);
    double until = t;
    for (size_t i = at + 1; i < C->n; i++)
        if (C->ev[i].kind == PL_EV_OPTIMIZER && viz_ev_start(&C->ev[i], modeled) >= B->b0) {
            until = viz_ev_start(&C->ev[i], modeled);
            break;
        }
    B->lo = B->b0;
    B->hi = B->b1;
    for (size_t i = lane_from(K, B->b0, modeled); i < K->n; i++) {
        const pl_event *e = &K->ev[i];
        double s = viz_ev_start(e, modeled);
        if (s >= until) break;
        if (e->kind != PL_EV_COLLECTIVE) continue;
        if (B->n == VIZ_MAX_BUCKETS) {
            B->more++;
            continue;
        }
        B->s[B->n] = s;
        B->e[B->n] = viz_ev_end(e, modeled);
        B->bytes[B->n++] = e->bytes;
        B->hi = B->e[B->n - 1] > B->hi ? B->e[B->n - 1] : B->hi;
    }
    /* when each was full: the buckets never span two layers and come in
     * the order backward produces the layers (the last first), so bucket
     * after bucket adds up to one layer's gradient bytes (the layer events
     * inside the backward: layer >= 0, bytes); without them, when its
     * all-reduce started. From the first event starting with the backward,
     * not from the one after it: its last layer's event starts with it (on
     * the modeled clock, exactly), and a replay's trace, sorted by start,
     * may put that one first (it was recorded before the backward that
     * encloses it) */
    size_t li = lane_from(C, B->b0, modeled);
    uint64_t acc = 0;
    for (int k = 0; k < B->n; k++) {
        /* past other events (a live lane is in measured order: another
         * event may start after the backward on the modeled clock and still
         * come before its last layer), to the next layer of this backward;
         * none once a backward (a layer or a whole one) starts after it */
        while (li < C->n && !(C->ev[li].kind == PL_EV_BACKWARD && C->ev[li].layer >= 0 &&
                              C->ev[li].bytes > 0 && viz_ev_start(&C->ev[li], modeled) <= B->b1))
            li = C->ev[li].kind == PL_EV_BACKWARD && &C->ev[li] != bw &&
                         viz_ev_start(&C->ev[li], modeled) > B->b1
                     ? C->n
                     : li + 1;
        if (li >= C->n) {
            B->ready[k] = B->s[k];
            continue;
        }
        B->ready[k] = viz_ev_end(&C->ev[li], modeled);
        acc += B->bytes[k];
        if (acc >= C->ev[li].bytes) {
            acc = 0;
            li++;
        }
    }
    return B->n > 0;
}

static int bucket_rows(const bucket_view *B) { return 2 + B->n + (B->more > 0); }

/* A row per bucket over the backward's time: its fill while backward
 * produces it (the backward's glyph, from the backward's start to its
 * all-reduce's start: it starts once the bucket is full), then its
 * all-reduce (the comm glyph); the backward itself on the row above. */
static void buckets_draw(viz_grid *g, pl_rect a, const bucket_view *B, int h)
{
    uint32_t fill = viz_glyph_ch(g, G_EV_BACKWARD), comm = viz_glyph_ch(g, G_EV_COMM);
    int lw = 9, w = a.w - lw;
    if (w < 4 || h < 2) return;
    /* the legend in words, then the glyphs drawn at their places */
    static const char *const words[] = {
        "gradient buckets in backward: X filling, Z full and queued, Y all-reduce",
        "buckets: X filling, Z queued, Y all-reduce", "buckets X fill Z wait Y reduce",
        "X fill Z wait Y reduce"};
    const char *wd = fitting(words, 4, a.w);
    viz_text(g, a.x, a.y, a.w, wd, COL_DEFAULT, ATTR_BOLD);
    const char *X = strchr(wd, 'X'), *Y = strchr(wd, 'Y'), *Z = strchr(wd, 'Z');
    if (X && X - wd < a.w) viz_put(g, a.x + (int)(X - wd), a.y, fill, COL_BACKWARD, ATTR_BOLD);
    if (Y && Y - wd < a.w) viz_put(g, a.x + (int)(Y - wd), a.y, comm, COL_COMM, ATTR_BOLD);
    if (Z && Z - wd < a.w)
        viz_put(g, a.x + (int)(Z - wd), a.y, viz_glyph_ch(g, G_EV_COLL), COL_DIM, ATTR_BOLD);
    double dt = B->hi > B->lo ? (B->hi - B->lo) / w : 1;
    viz_textf(g, a.x, a.y + 1, lw, COL_DIM, 0, "backward");
    for (int c = 0; c < w; c++) {
        double at = B->lo + (c + 0.5) * dt;
        int in = at >= B->b0 && at < B->b1;
        viz_put(g, a.x + lw + c, a.y + 1, in ? fill : viz_glyph_ch(g, G_DOT),
                in ? COL_BACKWARD : COL_DIM, 0);
    }
    for (int k = 0; k < B->n && 2 + k < h; k++) {
        int y = a.y + 2 + k;
        if (2 + k == h - 1 && k < B->n - 1) {
            viz_textf(g, a.x, y, a.w, COL_DIM, 0, "... %d more", B->n - k + B->more);
            return;
        }
        if (B->bytes[k] < 1024) /* its bytes, to the KiB from one on */
            viz_textf(g, a.x, y, lw, COL_DIM, 0, "b%-2d%4lluB", k + 1,
                      (unsigned long long)B->bytes[k]);
        else
            viz_textf(g, a.x, y, lw, COL_DIM, 0, "b%-2d%4.0fK", k + 1, (double)B->bytes[k] / 1024);
        for (int c = 0; c < w; c++) {
            double at = B->lo + (c + 0.5) * dt;
            if (at < B->b0)
                continue;
            else if (at < B->ready[k])
                viz_put(g, a.x + lw + c, y, fill, COL_BACKWARD, 0);
            else if (at < B->s[k]) /* full, its all-reduce queued behind the others */
                viz_put(g, a.x + lw + c, y, viz_glyph_ch(g, G_EV_COLL), COL_DIM, 0);
            else if (at < B->e[k] || c == (int)((B->s[k] - B->lo) / dt))
                viz_put(g, a.x + lw + c, y, comm, COL_COMM, ATTR_BOLD);
            else
                viz_put(g, a.x + lw + c, y, viz_glyph_ch(g, G_DOT), COL_DIM, 0);
        }
    }
    if (B->more && 2 + B->n < h)
        viz_textf(g, a.x, a.y + 2 + B->n, a.w, COL_DIM, 0, "... %d more", B->more);
}

/* What the topology pane draws besides the ring: the ring steps' table
 * (under it) or a data-parallel run's buckets (over it), rows tall. */
typedef struct {
    int table, buckets, rows;
    int compact; /* the table without its headline */
    int nofit;   /* this step's table found, but too tall: a row says so */
    ring_table T;
    bucket_view B;
} topo_extra;

/* Where the ring (and its links) goes in the topology pane's inside `in`:
 * the ring steps' table under it when the table fits (its width, and 2
 * rows left above it; 1 row short, without its headline) in a run without
 * a pane of its own for its communication (has_own_pane); but first a data-parallel run's buckets
 * over it (as many rows as fit; the ring in what is left, none under 3 rows). */
static pl_rect topology_ring_area(const viz_model *m, const viz_view *v, pl_rect in, int n,
                                  topo_extra *X)
{
    X->table = X->buckets = X->rows = X->compact = X->nofit = 0;
    X->buckets = in.w >= 20 && in.h >= 3 && buckets_find(m, v->t_end, v->modeled, &X->B);
    if (X->buckets) {
        X->rows = bucket_rows(&X->B) < in.h ? bucket_rows(&X->B) : in.h;
        int left = in.h - X->rows - 1;
        in.y += X->rows + 1;
        in.h = left >= 3 ? left : 0;
        return in;
    }
    int found = n >= 2 && n <= 16 && !has_own_pane(m) &&
                ring_steps_find(m, n, v->t_end, v->modeled, &X->T) &&
                ring_table_cols(&X->T) <= in.w;
    /* an earlier step's table keeps its headline ("step 7's all_reduce"),
     * else it would read as this step's: without room for it, no table */
    int earlier = X->T.step > 0 && X->T.step != v->step;
    X->table = found && ring_table_rows(&X->T) + 1 + earlier <= in.h;
    if (found && !X->table && !earlier && in.h >= 5) { /* this step's: say it does not fit */
        X->nofit = 1;
        X->rows = 1;
        in.h -= 2;
        return in;
    }
    if (X->table) { /* short of a row: without its headline */
        X->compact = ring_table_rows(&X->T) + 2 > in.h;
        X->rows = ring_table_rows(&X->T) - X->compact;
        in.h -= X->rows + 1;
    }
    return in;
}

int viz_topology_links(const viz_model *m, const viz_view *v, pl_rect r, int *cols, int *page)
{
    uint8_t la[PL_MAX_RANKS * PL_MAX_RANKS], lb[PL_MAX_RANKS * PL_MAX_RANKS];
    int n = m->nranks > v->ndev ? m->nranks : v->ndev;
    n = n > PL_MAX_RANKS ? PL_MAX_RANKS : n;
    int total = list_links(m, n, la, lb);
    topo_extra X;
    pl_rect in = topology_ring_area(m, v, inside(r), n, &X);
    link_list L = link_geometry(m, v, in, n, la, lb, total);
    *cols = L.cols;
    *page = L.page;
    return total;
}

static void topology(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v)
{
    viz_box(g, r, "topology", v->focus == PL_PANE_TOPOLOGY);
    pl_rect in = inside(r);
    int n = m->nranks > v->ndev ? m->nranks : v->ndev;
    n = n > PL_MAX_RANKS ? PL_MAX_RANKS : n;
    if (in.w < 10 || in.h < 3 || n < 1) return;
    uint8_t la[PL_MAX_RANKS * PL_MAX_RANKS], lb[PL_MAX_RANKS * PL_MAX_RANKS];
    int total = list_links(m, n, la, lb);
    /* the newest ring collective's steps under the ring, or a data-parallel
     * run's buckets over it, when they fit */
    topo_extra X;
    pl_rect all = in;
    in = topology_ring_area(m, v, all, n, &X);
    if (X.table)
        ring_table_draw(g, (pl_rect){all.x, in.y + in.h + 1, all.w, X.rows}, &X.T, X.compact,
                        v->step);
    if (X.nofit) { /* the longest wording that fits */
        char nf[3][96];
        snprintf(nf[0], sizeof nf[0], "%s's %d steps: no room for the table", X.T.kind, X.T.steps);
        snprintf(nf[1], sizeof nf[1], "%d ring steps: no room to show", X.T.steps);
        snprintf(nf[2], sizeof nf[2], "ring steps: no room");
        const char *nfs[] = {nf[0], nf[1], nf[2]};
        viz_text(g, all.x, in.y + in.h + 1, all.w, fitting(nfs, 3, all.w), COL_DIM, 0);
    }
    if (X.buckets) buckets_draw(g, (pl_rect){all.x, all.y, all.w, X.rows}, &X.B, X.rows);
    if (in.h <= 0) return;
    if (ring_drawn(in, n)) {
        /* links between neighbours (the ring), dotted, with chunks in flight */
        for (int k = 0; k < n && n > 1; k++) {
            int a = k, b = (k + 1) % n, x0, y0, x1, y1;
            ring_pos(in, a, n, &x0, &y0);
            ring_pos(in, b, n, &x1, &y1);
            int steps = abs(x1 - x0) > abs(y1 - y0) ? abs(x1 - x0) : abs(y1 - y0);
            for (int s = 1; s < steps; s++)
                viz_put(g, x0 + (x1 - x0) * s / steps, y0 + (y1 - y0) * s / steps,
                        viz_glyph_ch(g, G_DOT), m->link[a][b] || m->link[b][a] ? COL_COMM : COL_DIM,
                        0);
            /* a chunk moving from b's predecessor a to b during a ring step */
            const pl_event *e = viz_model_at(m, b, PL_LANE_COMM, v->t_end, v->modeled);
            if (e && e->kind == PL_EV_RING_STEP && e->peer == a && steps > 1) {
                double s0 = viz_ev_start(e, v->modeled), s1 = viz_ev_end(e, v->modeled);
                double f = s1 > s0 ? (v->t_end - s0) / (s1 - s0) : 0.5;
                int s = 1 + (int)(f * (steps - 2));
                viz_put(g, x0 + (x1 - x0) * s / steps, y0 + (y1 - y0) * s / steps,
                        viz_glyph_ch(g, G_CHUNK), COL_WARN, ATTR_BOLD);
            }
        }
        for (int k = 0; k < n; k++) {
            int x, y;
            ring_pos(in, k, n, &x, &y);
            viz_textf(g, x, y, 3, COL_RANK0 + k % 8, ATTR_BOLD | ATTR_REVERSE, "r%d", k);
        }
    } else if (!total)
        viz_text(g, in.x, in.y, in.w, "no bytes moved yet", COL_DIM, 0);
    /* every link's bytes: inside the ring, or the whole pane; folded into
     * columns, and scrolled (up/down with the pane focused) when they are
     * more than a screen, which the bottom border says */
    link_list L = link_geometry(m, v, in, n, la, lb, total);
    if (L.page <= 0 || !total) return;
    int shown = total - L.first < L.page ? total - L.first : L.page;
    int rows = (shown + L.cols - 1) / L.cols, cols = shown < L.cols ? shown : L.cols;
    int x0 = L.area.x, y0 = L.area.y;
    if (ring_drawn(in, n)) { /* centred in the ring */
        x0 += (L.area.w - (cols * L.cw - 2)) / 2;
        y0 = in.y + in.h / 2 - 1 - (rows - 1) / 2;
        if (y0 < L.area.y) y0 = L.area.y;
    }
    for (int i = 0; i < shown; i++) {
        int k = L.first + i;
        char by[32];
        viz_fmt_bytes(by, sizeof by, (double)m->link[la[k]][lb[k]]);
        viz_textf(g, x0 + i % L.cols * L.cw, y0 + i / L.cols, L.cw - 2, COL_COMM, 0, "%d>%d %s",
                  la[k], lb[k], by);
    }
    if (shown < total) {
        char s[64];
        int len = snprintf(s, sizeof s, " links %d-%d of %d, up/down ", L.first + 1,
                           L.first + shown, total);
        int x = r.x + r.w - 2 - len;
        viz_text(g, x > r.x + 1 ? x : r.x + 1, r.y + r.h - 1, r.w - 2, s, COL_TITLE, ATTR_BOLD);
    }
}

/* ---- shards ------------------------------------------------------------------------------ */

/* What the ranks multiply at the view's time: per matrix and shard, 0, or
 * the kind of the matmul a rank holding it does there (1 forward, 2
 * backward); and a sentence for it in three lengths. */
typedef struct {
    unsigned char hl[PL_VIZ_MAX_MATRICES][PL_MAX_RANKS];
    unsigned char active[PL_VIZ_MAX_MATRICES]; /* 1 forward, 2 backward */
    char say[4][160];
    /* what the first rank's communicator did since the matmul began, up to the view's time
     * (its collectives, from the trace): "after it: 1 all_reduce, 16.0 KiB" or "after it: no
     * collective (yet)", in three lengths; "" with no matmul or the ranks apart */
    char after[3][96];
} matmul_now;

/* The collectives on rank rk's communication lane that began in [t0, t]: how many, the
 * bytes of them all, the newest's label (its first word: "all_reduce"). */
static int collectives_between(const viz_model *m, int rk, double t0, double t, int modeled,
                               double *bytes, char *name, size_t cap)
{
    const viz_lane *L = &m->lanes[rk][PL_LANE_COMM];
    size_t lo = 0, hi = L->n; /* the lane by start: the first at or after t0 */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (viz_ev_start(&L->ev[mid], modeled) < t0)
            lo = mid + 1;
        else
            hi = mid;
    }
    int n = 0;
    *bytes = 0;
    for (size_t i = lo; i < L->n && viz_ev_start(&L->ev[i], modeled) <= t; i++) {
        const pl_event *e = &L->ev[i];
        if (e->kind != PL_EV_COLLECTIVE) continue;
        n++;
        *bytes += (double)e->bytes;
        size_t w = strcspn(e->label, " ");
        snprintf(name, cap, "%.*s", (int)(w < 40 ? w : 40), e->label);
    }
    return n;
}

static const char *block_name(int layer, char *buf, size_t cap, int brief)
{
    if (layer < 0) return "head";
    snprintf(buf, cap, brief ? "b%d" : "block %d", layer);
    return buf;
}

static void find_matmuls(const viz_model *m, const viz_view *v, matmul_now *N)
{
    memset(N, 0, sizeof *N);
    double t = view_time(v);
    int n = m->nranks < PL_MAX_RANKS ? m->nranks : PL_MAX_RANKS, seen = 0, same = 1, running = 0;
    const pl_event *first = NULL;
    int first_mi = -1;
    char list[160] = "";
    size_t len = 0;
    for (int rk = 0; rk < n; rk++) {
        int mi;
        const pl_event *e = viz_matmul_at(m, rk, t, v->modeled, &mi);
        if (!e) continue;
        int kind = e->kind == PL_EV_BACKWARD ? 2 : 1;
        int shard = m->matrices[mi].split ? rk % m->tp : 0;
        N->hl[mi][shard] = (unsigned char)kind;
        N->active[mi] = (unsigned char)kind;
        if (viz_ev_end(e, v->modeled) >= t) running = 1;
        char b[24];
        if (len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%sr%d %s %s %s",
                                    seen ? ", " : "", rk, block_name(e->layer, b, sizeof b, 1),
                                    kind == 2 ? "bwd" : "fwd", e->label);
        if (!seen++) {
            first = e;
            first_mi = mi;
        } else if (mi != first_mi || e->layer != first->layer || e->kind != first->kind)
            same = 0;
    }
    if (!first) {
        snprintf(N->say[0], sizeof N->say[0], "no matmul yet; %s",
                 m->tp == 1   ? "every rank holds all of each"
                 : m->tp == n ? "rank r holds shard r"
                              : "rank r holds shard r % tp");
        snprintf(N->say[1], sizeof N->say[1], "no matmul yet");
        snprintf(N->say[2], sizeof N->say[2], "no matmul");
        snprintf(N->say[3], sizeof N->say[3], "idle");
        return;
    }
    if (!same) {
        snprintf(N->say[0], sizeof N->say[0], "ranks differ: %s", list);
        for (int k = 1; k < 4; k++) snprintf(N->say[k], sizeof N->say[k], "%s", list);
        return;
    }
    { /* after it, on the first rank's communicator: a column-parallel layer's forward sends
       * nothing, a row-parallel one's partial sums are all-reduced (g) */
        int rk0 = first->rank < PL_MAX_RANKS ? first->rank : 0;
        double bytes = 0;
        char name[48] = "", kb[32];
        int nc = collectives_between(m, rk0, viz_ev_start(first, v->modeled), t, v->modeled, &bytes,
                                     name, sizeof name);
        viz_fmt_bytes(kb, sizeof kb, bytes);
        if (nc) {
            const char *pl = nc > 1 ? "s" : "";
            snprintf(N->after[0], sizeof N->after[0], "after it, r%d's communicator: %d %s%s, %s",
                     rk0, nc, name, pl, kb);
            snprintf(N->after[1], sizeof N->after[1], "after it: %d %s%s, %s", nc, name, pl, kb);
            snprintf(N->after[2], sizeof N->after[2], "then %d %s%s", nc, name, pl);
        } else {
            snprintf(N->after[0], sizeof N->after[0],
                     "after it, r%d's communicator: no "
                     "collective%s",
                     rk0, running ? " yet" : "");
            snprintf(N->after[1], sizeof N->after[1], "after it: no collective%s",
                     running ? " yet" : "");
            snprintf(N->after[2], sizeof N->after[2], "no collective after it");
        }
    }
    char b[24];
    const char *blk = block_name(first->layer, b, sizeof b, 0);
    const char *dir = first->kind == PL_EV_BACKWARD ? "backward" : "forward";
    const struct viz_matrix *x = &m->matrices[first_mi];
    if (x->split)
        snprintf(N->say[0], sizeof N->say[0], "%s %s: each rank %s its %s shard", blk, dir,
                 running ? "multiplies" : "multiplied", x->name);
    else
        snprintf(N->say[0], sizeof N->say[0], "%s %s: each rank %s all of %s (replicated)", blk,
                 dir, running ? "multiplies" : "multiplied", x->name);
    if (x->split)
        snprintf(N->say[1], sizeof N->say[1], "%s %s: each rank's %s shard", blk, dir, x->name);
    else
        snprintf(N->say[1], sizeof N->say[1], "%s %s: all of %s", blk, dir, x->name);
    const char *d3 = first->kind == PL_EV_BACKWARD ? "bwd" : "fwd";
    snprintf(N->say[2], sizeof N->say[2], "%s %s: %s %s", blk, d3, x->name,
             x->split ? "shards" : "(replicated)");
    char bb[24];
    snprintf(N->say[3], sizeof N->say[3], "%s %s %s", block_name(first->layer, bb, sizeof bb, 1),
             d3, x->name);
}

/* The longest of n texts that fits in w cells (else the shortest, cut). */
static const char *fitting(const char *const *s, int n, int w)
{
    for (int i = 0; i < n; i++)
        if ((int)strlen(s[i]) <= w) return s[i];
    return s[n - 1];
}

/* The same, or "" when none fits. */
static const char *fitting_or_none(const char *const *s, int n, int w)
{
    const char *f = fitting(s, n, w);
    return (int)strlen(f) <= w ? f : "";
}

/* A line of n items in w cells, never one cut (a number apart from its unit): all of them
 * where they fit, else as many whole ones as fit with an ellipsis after them (" …", " ..." on
 * an ASCII grid), else the ellipsis alone (or "" in fewer cells). Each item after the first
 * starts with its separator (", 1 coll"). Into buf; returns buf. */
static const char *whole_items(const viz_grid *g, const char *const *item, int n, int w, char *buf,
                               size_t cap)
{
    const char *dots = g->utf8 ? "\xe2\x80\xa6" : "...";
    int total = 0, k = 0, used = 0;
    for (int i = 0; i < n; i++) total += cells_of(item[i]);
    if (total > w) /* the first k whole, then " ..." */
        while (k < n && used + cells_of(item[k]) + 1 + cells_of(dots) <= w)
            used += cells_of(item[k++]);
    else
        k = n;
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < k && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s", item[i]);
    if (k < n && len < cap && used + (k ? 1 : 0) + cells_of(dots) <= w)
        snprintf(buf + len, cap - len, "%s%s", k ? " " : "", dots);
    return buf;
}

/* "W1 64x256: 4 column shards of 64x64" in three lengths (form 0..2). */
static void matrix_words(const struct viz_matrix *x, int tp, int form, char *buf, size_t cap)
{
    int sr = x->split == 'r' ? x->rows / tp : x->rows,
        sc = x->split == 'c' ? x->cols / tp : x->cols;
    const char *kind = x->split == 'c' ? "column" : "row";
    char pad[64] = "";
    int p = x->padded_cols;
    if (p && form == 0)
        snprintf(pad, sizeof pad, ", the last %d column%s padding", p, pl_s(p));
    else if (p && form == 1)
        snprintf(pad, sizeof pad, ", %d col%s padding", p, pl_s(p));
    else if (p)
        snprintf(pad, sizeof pad, " +%d pad", p);
    if (!x->split && form == 0)
        snprintf(buf, cap, "%s %dx%d: replicated, every rank holds all of it%s", x->name, x->rows,
                 x->cols, pad);
    else if (!x->split)
        snprintf(buf, cap, "%s: %s%s", x->name, form == 1 ? "replicated" : "all", pad);
    else if (form == 0)
        snprintf(buf, cap, "%s %dx%d: %d %s shard%s of %dx%d%s", x->name, x->rows, x->cols, tp,
                 kind, pl_s(tp), sr, sc, pad);
    else if (form == 1)
        snprintf(buf, cap, "%s: %d %s shard%s of %dx%d%s", x->name, tp, kind, pl_s(tp), sr, sc,
                 pad);
    else
        snprintf(buf, cap, "%s: %d %s %dx%d%s", x->name, tp, x->split == 'c' ? "col" : "row", sr,
                 sc, pad);
}

/* Cells of padding at the right of shard `shard` (or of the whole width w
 * of a matrix not cut by columns) drawn sw cells wide: the padded columns'
 * share, at least a cell, leaving the real columns at least one. */
static int pad_cells(const struct viz_matrix *x, int tp, int shard, int sw)
{
    int cols = x->split == 'c' ? x->cols / tp : x->cols, real_end = x->cols - x->padded_cols;
    int first = x->split == 'c' ? shard * cols : 0, pc = first + cols - real_end;
    if (pc <= 0) return 0;
    if (pc >= cols) return sw;
    int k = (int)lround((double)pc * sw / cols);
    return k < 1 ? (sw > 1 ? 1 : 0) : k > sw - 1 ? sw - 1 : k;
}

/* Matrix i drawn at (x0, y0), w x h cells: each shard in its rank's digit
 * and colour, padding as light shade, the shards being multiplied in
 * reverse video. */
static void draw_matrix(viz_grid *g, const viz_model *m, const matmul_now *N, int i, int x0, int y0,
                        int w, int h)
{
    const struct viz_matrix *x = &m->matrices[i];
    int tp = m->tp;
    for (int cy = 0; cy < h; cy++)
        for (int cx = 0; cx < w; cx++) {
            int shard = x->split == 'c' ? cx * tp / w : x->split == 'r' ? cy * tp / h : 0;
            int sx0 = x->split == 'c' ? shard * w / tp : 0, sw = x->split == 'c' ? w / tp : w;
            int pad = cx - sx0 >= sw - pad_cells(x, tp, shard, sw);
            uint32_t ch = pad         ? viz_glyph_ch(g, G_LIGHT)
                          : !x->split ? viz_glyph_ch(g, G_SHADE)
                                      : (uint32_t)('0' + shard % 10);
            int fg = x->split ? COL_RANK0 + shard % 8 : COL_DEFAULT;
            viz_put(g, x0 + cx, y0 + cy, ch, fg, N->hl[i][shard] ? ATTR_REVERSE | ATTR_BOLD : 0);
        }
}

/* The marker before a matrix's name: what is done with it now (▶ forward,
 * ◀ backward), else a blank. */
static void marker(viz_grid *g, int x, int y, int active)
{
    viz_put(g, x, y, active ? viz_glyph_ch(g, active == 2 ? G_EV_BACKWARD : G_EV_FORWARD) : ' ',
            active == 2 ? COL_BACKWARD : COL_FORWARD, ATTR_BOLD);
}

/* The sizes of the matrices side by side in W x H cells: proportional to
 * the square roots of their shapes (a cell is twice as tall as wide: W1
 * h x 4h wide, W2 4h x h tall, a classifier narrow), shards a whole
 * number of cells each, each under a label 1 + its name wide, 2 cells
 * apart. 1 when they fit. */
static int fit_side_by_side(const viz_model *m, int W, int H, int *mw, int *mh, int *slot)
{
    int tp = m->tp, n = m->nmatrices;
    for (double k = 64; k > 0.05; k *= 0.93) {
        int total = 0, ok = 1;
        for (int i = 0; i < n && ok; i++) {
            const struct viz_matrix *x = &m->matrices[i];
            double w = sqrt((double)x->cols) * k, h = sqrt((double)x->rows) * k / 2;
            int a = (int)lround(w), b = (int)lround(h);
            if (x->split == 'c') a = (int)lround(w / tp) * tp;
            if (x->split == 'r') b = (int)lround(h / tp) * tp;
            if (a < (x->split == 'c' ? tp : 1)) a = x->split == 'c' ? tp : 1;
            if (b < (x->split == 'r' ? tp : 1)) b = x->split == 'r' ? tp : 1;
            int label = 1 + (int)strlen(x->name);
            mw[i] = a;
            mh[i] = b;
            slot[i] = a > label ? a : label;
            total += slot[i] + (i ? 2 : 0);
            ok = b <= H && total <= W;
        }
        if (ok) return 1;
    }
    return 0;
}

/* The communication after the matmul (N->after) at row y of in, where one is left. */
static void shards_after(viz_grid *g, pl_rect in, int y, const matmul_now *N)
{
    if (y >= in.y + in.h || !N->after[0][0]) return;
    const char *s[] = {N->after[0], N->after[1], N->after[2]};
    viz_text(g, in.x, y, in.w, fitting_or_none(s, 3, in.w), COL_COMM, 0);
}

static void shards(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v)
{
    matmul_now N;
    if (m->nmatrices) find_matmuls(m, v, &N);
    pl_rect in = inside(r);
    int n = m->nmatrices, maxname = 0;
    for (int i = 0; i < n; i++) {
        int l = (int)strlen(m->matrices[i].name);
        maxname = l > maxname ? l : maxname;
    }
    /* compact: a row per matrix, "▶W1 000111222333 4 col shards of 64x64";
     * the sentence above them when a row is left, else in the title */
    int compact_w = 1 + maxname + 1 + m->tp;
    int sentence_row = n && in.h >= n + 1;
    char title[192] = "shards";
    if (n && !sentence_row && in.h >= n) {
        const char *s[] = {N.say[0], N.say[1], N.say[2], N.say[3]};
        const char *f = fitting_or_none(s, 4, r.w - 12);
        snprintf(title, sizeof title, "%s%s", *f ? "shards: " : "shards", f);
    } else if (n)
        snprintf(title, sizeof title, "shards (tp %d)", m->tp);
    viz_box(g, r, title, v->focus == PL_PANE_SHARDS);
    if (in.w < 1 || in.h < 1) return;
    if (!n) {
        viz_text(g, in.x, in.y, in.w, "no sharded matrix in this lab", COL_DIM, 0);
        return;
    }
    if (in.h < n || in.w < compact_w) {
        char need[64];
        snprintf(need, sizeof need, "too small for the shards: %dx%d needed", compact_w + 2, n + 2);
        const char *s[] = {need, "too small", "small"};
        viz_text(g, in.x, in.y, in.w, fitting(s, 3, in.w), COL_WARN, 0);
        return;
    }
    int y = in.y;
    if (sentence_row) {
        const char *s[] = {N.say[0], N.say[1], N.say[2], N.say[3]};
        viz_text(g, in.x, y++, in.w, fitting(s, 4, in.w), COL_DEFAULT, ATTR_BOLD);
    }
    int mw[PL_VIZ_MAX_MATRICES], mh[PL_VIZ_MAX_MATRICES], slot[PL_VIZ_MAX_MATRICES];
    int rows = in.y + in.h - y; /* for the labels, the drawings and the words */
    int side = rows >= 2 && (fit_side_by_side(m, in.w, rows - 1 - n, mw, mh, slot) ||
                             fit_side_by_side(m, in.w, rows - 1, mw, mh, slot));
    if (side) {
        int x = in.x, tallest = 0;
        for (int i = 0; i < n; i++) {
            const struct viz_matrix *X = &m->matrices[i];
            marker(g, x, y, N.active[i]);
            char label[64];
            snprintf(label, sizeof label, "%s %dx%d", X->name, X->rows, X->cols);
            if ((int)strlen(label) > slot[i] - 1) snprintf(label, sizeof label, "%s", X->name);
            viz_text(g, x + 1, y, slot[i] - 1, label, COL_TITLE, N.active[i] ? ATTR_BOLD : 0);
            draw_matrix(g, m, &N, i, x, y + 1, mw[i], mh[i]);
            tallest = mh[i] > tallest ? mh[i] : tallest;
            x += slot[i] + 2;
        }
        /* the words, in the rows left */
        int wy = y + 1 + tallest;
        for (int i = 0; i < n && wy < in.y + in.h; i++, wy++) {
            char f[3][128];
            for (int k = 0; k < 3; k++) matrix_words(&m->matrices[i], m->tp, k, f[k], sizeof f[k]);
            const char *s[] = {f[0], f[1], f[2]};
            viz_text(g, in.x, wy, in.w, fitting(s, 3, in.w), COL_DIM, 0);
        }
        shards_after(g, in, wy, &N);
        return;
    }
    int avail = in.w - (1 + maxname + 1), sw = (avail - 6) / m->tp;
    sw = sw < 1 ? 1 : sw > 4 ? 4 : sw;
    for (int i = 0; i < n; i++, y++) {
        const struct viz_matrix *X = &m->matrices[i];
        marker(g, in.x, y, N.active[i]);
        viz_text(g, in.x + 1, y, maxname, X->name, COL_TITLE, N.active[i] ? ATTR_BOLD : 0);
        int x0 = in.x + 1 + maxname + 1, w = sw * m->tp;
        /* the shards side by side, whichever way they are cut (the words say) */
        for (int cx = 0; cx < w; cx++) {
            int shard = X->split ? cx / sw : 0, sx0 = shard * sw;
            int pad = X->split == 'c' && cx - sx0 >= sw - pad_cells(X, m->tp, shard, sw);
            uint32_t ch = pad         ? viz_glyph_ch(g, G_LIGHT)
                          : !X->split ? viz_glyph_ch(g, G_SHADE)
                                      : (uint32_t)('0' + shard % 10);
            viz_put(g, x0 + cx, y, ch, X->split ? COL_RANK0 + shard % 8 : COL_DEFAULT,
                    N.hl[i][X->split ? shard : 0] ? ATTR_REVERSE | ATTR_BOLD : 0);
        }
        int tx = x0 + w + 1, tw = in.x + in.w - tx;
        if (tw > 0) {
            char f[3][128];
            for (int k = 0; k < 3; k++) matrix_words(X, m->tp, k, f[k], sizeof f[k]);
            /* without the name, which leads the row */
            size_t nl = strlen(X->name);
            const char *s[] = {f[0] + nl + 1, f[1] + nl + 2, f[2] + nl + 2,
                               X->split == 'c'   ? "cols"
                               : X->split == 'r' ? "rows"
                                                 : "all"};
            viz_text(g, tx, y, tw, fitting_or_none(s, 4, tw), COL_DIM, 0);
        }
    }
    shards_after(g, in, y, &N);
}

/* ---- pipeline, metrics ------------------------------------------------------------------ */

/* One row per stage against the time of the newest iteration (viz_pp_round_find), each op a
 * box: its letter (F forward, B backward: BW or zero-bubble's B, W weight gradient; a small
 * letter, underlined, for an odd chunk), its micro-batch's number, then its kind's glyph
 * (▶ ◀ ▪); a bubble (a stage idle before the newest op's end) is a row of dots. Time is
 * compressed to fit: the shortest op is 1 + the digits of the largest micro-batch cells wide
 * (2 from m = 1 to 10) when the iteration fits, else the whole iteration (its expected time,
 * from the formula, while it runs) takes the row's width, and the boxes are their letter
 * alone, in every cell (the first bold).
 * Above the rows the bubble line (of the newest complete iteration, named when it is not the
 * one drawn; "in progress" before the first completes), beside them each stage's activations
 * (now, and │ at the peak), under them the legend. */

/* The letter of an op's box. */
static uint32_t op_letter(const pl_event *e)
{
    char c = e->kind == PL_EV_FORWARD ? 'F' : e->kind == PL_EV_BACKWARD ? 'B' : 'W';
    return (uint32_t)(e->chunk % 2 ? c - 'A' + 'a' : c);
}

static viz_glyph op_fill(const pl_event *e)
{
    return e->kind == PL_EV_FORWARD    ? G_EV_FORWARD
           : e->kind == PL_EV_BACKWARD ? G_EV_BACKWARD
                                       : G_EV_WGRAD;
}

static void pct(char *b, size_t cap, double f) { snprintf(b, cap, "%.1f %%", f * 100); }

/* The bubble line in five lengths (form 0..4): x_total of the time and x_ideal of the ideal
 * time, from the events of a complete iteration; the formula's beside them. Each form begins
 * with `pre` ("iteration 13: " when that iteration is not the one drawn, else ""). */
static void bubble_words(const viz_model *m, const char *pre, double x_total, double x_ideal,
                         int form, char *buf, size_t cap)
{
    char xt[32], xi[32], yt[32], yi[32], f1[64] = "", f2[64] = "";
    pct(xt, sizeof xt, x_total);
    pct(xi, sizeof xi, x_ideal);
    if (m->pp.stages > 0 && m->pp.of_total >= 0) {
        pct(yt, sizeof yt, m->pp.of_total);
        pct(yi, sizeof yi, m->pp.of_ideal);
        snprintf(f1, sizeof f1, " (formula %s)", yt);
        snprintf(f2, sizeof f2, " (formula %s)", yi);
    } else if (m->pp.stages > 0)
        snprintf(f1, sizeof f1, " (no formula)");
    switch (form) {
    case 0:
        snprintf(buf, cap, "%sbubble %s of the time%s, %s of the ideal time%s", pre, xt, f1, xi,
                 f2);
        break;
    case 1:
        snprintf(buf, cap, "%sbubble %s of the time%s; %s of ideal%s", pre, xt, f1, xi, f2);
        break;
    case 2:
        snprintf(buf, cap, "%sbubble %s of the time%s", pre, xt, f1);
        break;
    case 3:
        snprintf(buf, cap, "%sbubble %s of the time", pre, xt);
        break;
    default:
        snprintf(buf, cap, "%sbubble %s", pre, xt);
        break;
    }
}

/* The legend at (x, y), w cells: what the boxes, the dots and the gauge mean, in the longest
 * form that fits whole. With the numbers drawn (numbers): "Fk forward of micro-batch k", a
 * backward "Bk backward (BWk)" as the narration and the schedules' lists call it (zero-bubble:
 * "Bk input grad", "Wk weight grad"); shorter: without "of micro-batch k", then the gauge's
 * "act. peak", then without "(BWk)"; past that the items that fit. Without the numbers (boxes
 * compressed to their letters): "F forward", "B backward (BW)". */
static void pipeline_legend(viz_grid *g, int x, int y, int w, const viz_model *m, int gauge,
                            int numbers)
{
    int zb = m->nkind[PL_EV_WEIGHT_GRAD] > 0 || !strncmp(m->pp.schedule, "zb", 2);
    typedef struct {
        uint32_t a, b;
        int col, attr;
        const char *name;
    } item;
    uint32_t k = numbers ? 'k' : 0;
    for (int form = 0; form < 4; form++) {
        item items[6];
        int n = 0;
        items[n++] = (item){'F', k, COL_FORWARD, 0,
                            form == 0 && numbers ? "forward of micro-batch k" : "forward"};
        items[n++] = (item){'B', k, COL_BACKWARD, 0,
                            zb          ? "input grad"
                            : form == 3 ? "backward"
                            : numbers   ? "backward (BWk)"
                                        : "backward (BW)"};
        if (zb) items[n++] = (item){'W', k, COL_WGRAD, 0, "weight grad"};
        items[n++] = (item){viz_glyph_ch(g, G_DOT), 0, COL_DIM, 0, "bubble"};
        if (m->pp.chunks > 1)
            items[n++] = (item){'f', k, COL_FORWARD, ATTR_UNDERLINE,
                                m->pp.chunks == 2 ? "chunk 1" : "odd chunks"};
        if (gauge)
            items[n++] = (item){viz_glyph_ch(g, G_V), 0, COL_WARN, 0,
                                form == 2 ? "act. peak" : "activations' peak"};
        int need_all = 0;
        for (int i = 0; i < n; i++)
            need_all += (i ? 2 : 0) + (items[i].b ? 2 : 1) + 1 + (int)strlen(items[i].name);
        if (need_all > w && form < 3) continue;
        int cx = x;
        for (int i = 0; i < n; i++) {
            int glyphs = items[i].b ? 2 : 1, need = glyphs + 1 + (int)strlen(items[i].name);
            if (cx + (cx > x ? 2 : 0) + need > x + w) break;
            if (cx > x) {
                viz_put(g, cx++, y, ' ', COL_DIM, 0);
                viz_put(g, cx++, y, ' ', COL_DIM, 0);
            }
            viz_put(g, cx, y, items[i].a, items[i].col, ATTR_BOLD | items[i].attr);
            if (items[i].b) viz_put(g, cx + 1, y, items[i].b, items[i].col, items[i].attr);
            viz_put(g, cx + glyphs, y, ' ', COL_DIM, 0);
            viz_text(g, cx + glyphs + 1, y, need - glyphs - 1, items[i].name, COL_DIM, 0);
            cx += need;
        }
        return;
    }
}

/* A stage's activations at (x, y): a bar of bw cells, now of the scale, │ at its peak. */
static void act_gauge(viz_grid *g, int x, int y, int bw, int text, double now, double peak,
                      double scale)
{
    int full = scale > 0 ? (int)lround(now / scale * bw) : 0;
    int pk = scale > 0 && peak > 0 ? (int)ceil(peak / scale * bw - 1e-9) - 1 : -1;
    for (int i = 0; i < bw; i++) {
        if (i == pk && now < peak)
            viz_put(g, x + i, y, viz_glyph_ch(g, G_V), COL_WARN, ATTR_BOLD);
        else if (i < full)
            viz_put(g, x + i, y, viz_glyph_ch(g, G_FULL), COL_COPY, 0);
        else
            viz_put(g, x + i, y, viz_glyph_ch(g, i == pk ? G_FULL : G_LIGHT),
                    i == pk ? COL_COPY : COL_DIM, 0);
    }
    if (text) { /* right-aligned */
        char b[32];
        viz_fmt_bytes(b, sizeof b, peak);
        int len = (int)strlen(b) < text ? (int)strlen(b) : text;
        viz_text(g, x + bw + 1 + text - len, y, len, b, COL_DIM, 0);
    }
}

static void pipeline(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v)
{
    viz_pp_round R;
    viz_pp_round_find(m, v->modeled, &R);
    int have = R.iteration > 0 && R.hi > R.lo && R.stages > 0;
    char title[128], span[32] = "";
    int tl = snprintf(title, sizeof title, "pipeline");
    if (m->pp.stages > 0)
        tl += snprintf(title + tl, sizeof title - (size_t)tl, ": %s, p %d, m %d", m->pp.schedule,
                       m->pp.stages, m->pp.micro_batches);
    if (m->pp.chunks > 1)
        tl += snprintf(title + tl, sizeof title - (size_t)tl, ", v %d", m->pp.chunks);
    if (have) {
        viz_fmt_time(span, sizeof span, R.hi - R.lo);
        snprintf(title + tl, sizeof title - (size_t)tl, "%s iteration %d, %s",
                 m->pp.stages > 0 ? "," : ":", R.iteration, span);
    }
    viz_box(g, r, title, v->focus == PL_PANE_PIPELINE);
    pl_rect in = inside(r);
    if (in.w < 4 || in.h < 1) return;
    if (!have) {
        viz_text(g, in.x, in.y, in.w, "no forward/backward events yet", COL_DIM, 0);
        return;
    }
    /* the bubble line, the longest form that fits: the newest complete iteration's (named
     * when the rows show a later one), never one still running */
    char words[5][192];
    const char *forms[5];
    if (R.done > 0 && R.done_hi > R.done_lo) {
        double total = (R.done_hi - R.done_lo) * R.stages, idle = total - R.done_busy;
        if (idle < 0) idle = 0;
        double x_total = idle / total, x_ideal = R.done_busy > 0 ? idle / R.done_busy : 0;
        char pre[40] = "";
        if (R.done != R.iteration) snprintf(pre, sizeof pre, "iteration %d: ", R.done);
        for (int k = 0; k < 5; k++) {
            bubble_words(m, pre, x_total, x_ideal, k, words[k], sizeof words[k]);
            forms[k] = words[k];
        }
        viz_text(g, in.x, in.y, in.w, fitting(forms, 5, in.w), COL_DEFAULT, ATTR_BOLD);
    } else {
        snprintf(words[0], sizeof words[0], "bubble: iteration %d in progress", R.iteration);
        snprintf(words[1], sizeof words[1], "bubble: in progress");
        forms[0] = words[0];
        forms[1] = words[1];
        viz_text(g, in.x, in.y, in.w, fitting(forms, 2, in.w), COL_DIM, 0);
    }
    if (in.h < 2) return;
    /* the rows: a stage each, then the legend (in the bottom border when no row is left) */
    int n = R.stages, rows = in.h - 1, own_legend = rows > n;
    if (own_legend) rows--;
    int first = v->rank_scroll > 0 && v->rank_scroll < n ? v->rank_scroll : 0;
    if (first > 0 && n - first < rows) first = n - rows > 0 ? n - rows : 0;
    int gauge = 0;
    double scale = 0;
    for (int st = 0; st < n; st++)
        if (m->act_seen[st]) {
            gauge = 1;
            scale = m->act_peak[st] > scale ? m->act_peak[st] : scale;
        }
    int lw = 4, bw = 0, text = 0;
    if (gauge && in.w >= 50) {
        bw = in.w >= 100 ? 10 : 6;
        text = 10;
    } else if (gauge && in.w >= 24)
        bw = 4;
    int gw = bw ? 1 + bw + (text ? 1 + text : 0) : 0, tw = in.w - lw - gw;
    if (tw < 1) return;
    /* cells per second: the shortest op 1 + digits cells wide, or the iteration in tw */
    int mb = m->pp.micro_batches > 0 ? m->pp.micro_batches - 1 : 0;
    for (int st = 0; st < n; st++) {
        if (R.owner[st] < 0 || R.stage_it[st] != R.iteration) continue;
        const viz_lane *L = &m->lanes[R.owner[st]][PL_LANE_COMPUTE];
        for (size_t i = R.first[st]; i < L->n; i++)
            if (viz_is_pipeline_op(m, &L->ev[i]) && L->ev[i].layer == st &&
                L->ev[i].micro_batch > mb)
                mb = L->ev[i].micro_batch;
    }
    int digits = 1;
    for (int k = mb; k >= 10; k /= 10) digits++;
    double extent = R.hi - R.lo;
    if (m->pp.stages > 0) { /* the iteration's expected time, so that boxes stay put */
        double tf = R.t_kind[0], tb = R.t_kind[1] > 0 ? R.t_kind[1] : tf,
               tw_ = R.t_kind[2] > 0                     ? R.t_kind[2]
                     : !strncmp(m->pp.schedule, "zb", 2) ? tf
                                                         : 0;
        double ideal = m->pp.micro_batches * m->pp.chunks * (tf + tb + tw_);
        double est = m->pp.of_total >= 0
                         ? ideal / (1 - m->pp.of_total)
                         : ideal + (m->pp.stages - 1) * (tf + tb + tw_) / m->pp.chunks;
        if (est > extent) extent = est;
    }
    double cps = R.slot > 0 ? (1 + digits) / R.slot : 0;
    if (cps <= 0 || cps * extent > tw) cps = tw / extent;
    /* the numbers when the shortest op has room for the largest, else none */
    int numbers = R.slot * cps >= 1 + digits - 1e-9;
    int *cell = malloc((size_t)tw * sizeof *cell);
    if (!cell) return;
    for (int k = 0; k < rows && first + k < n; k++) {
        int st = first + k, y = in.y + 1 + k;
        if (k == rows - 1 && st < n - 1) {
            viz_textf(g, in.x, y, in.w, COL_DIM, 0, "... %d more stage%s (focus: up/down)", n - st,
                      pl_s(n - st));
            break;
        }
        viz_textf(g, in.x, y, lw, COL_RANK0 + st % 8, 0, "s%-2d", st);
        for (int c = 0; c < tw; c++) cell[c] = -1;
        const viz_lane *L = R.owner[st] >= 0 ? &m->lanes[R.owner[st]][PL_LANE_COMPUTE] : NULL;
        if (L && R.stage_it[st] == R.iteration)
            for (size_t i = R.first[st]; i < L->n; i++) {
                const pl_event *e = &L->ev[i];
                if (!viz_is_pipeline_op(m, e) || e->layer != st) continue;
                /* the cells whose middle it covers */
                double a = (viz_ev_start(e, v->modeled) - R.lo) * cps - 0.5,
                       b = (viz_ev_end(e, v->modeled) - R.lo) * cps - 0.5;
                int c0 = (int)ceil(a), c1 = (int)ceil(b);
                for (int c = c0 < 0 ? 0 : c0; c < c1 && c < tw; c++) cell[c] = (int)i;
            }
        int x0 = in.x + lw;
        for (int c = 0; c < tw; c++) {
            if (cell[c] < 0) { /* idle: a bubble until the newest op's end */
                int bubble = R.lo + (c + 0.5) / cps < R.hi;
                viz_put(g, x0 + c, y, bubble ? viz_glyph_ch(g, G_DOT) : ' ', COL_DIM, 0);
                continue;
            }
            const pl_event *e = &L->ev[cell[c]];
            int c0 = c, c1 = c;
            while (c0 > 0 && cell[c0 - 1] == cell[c]) c0--;
            while (c1 + 1 < tw && cell[c1 + 1] == cell[c]) c1++;
            int len = c1 - c0 + 1, at = c - c0, nd = 1;
            for (int k2 = e->micro_batch; k2 >= 10; k2 /= 10) nd++;
            int col = kind_colour(e->kind), attr = e->chunk % 2 ? ATTR_UNDERLINE : 0;
            uint32_t ch;
            if (at == 0 || !numbers) { /* compressed: letters only, the box's first bold */
                ch = op_letter(e);
                attr |= at == 0 ? ATTR_BOLD : 0;
            } else if (len >= 1 + nd && at <= nd) {
                char num[16];
                snprintf(num, sizeof num, "%d", e->micro_batch);
                ch = (uint32_t)num[at - 1];
            } else
                ch = viz_glyph_ch(g, op_fill(e));
            viz_put(g, x0 + c, y, ch, col, attr);
        }
        if (bw && m->act_seen[st])
            act_gauge(g, in.x + in.w - gw + 1, y, bw, text, m->act_now[st], m->act_peak[st], scale);
    }
    free(cell);
    if (own_legend)
        pipeline_legend(g, in.x, in.y + in.h - 1, in.w, m, bw > 0, numbers);
    else if (r.w > 8) {
        pipeline_legend(g, r.x + 2, r.y + r.h - 1, r.w - 4, m, bw > 0, numbers);
    }
}

/* The pushed metric, the whole run in r: a headline with the value the
 * narration gives, then bars on a scale from 0 (the bottom row) to the
 * largest column (its value at the top), and the x axis. With an "epoch X"
 * series: a column per epoch, its mean, and the epoch in progress as the
 * mean of X so far (shaded); else a column per value of the first series,
 * or the mean of k values when there are more than columns. */
static void curve(viz_grid *g, pl_rect r, const viz_model *m)
{
    const struct viz_series *E = NULL, *B = NULL;
    for (int k = 0; k < m->nseries; k++)
        if (!strncmp(m->series[k].name, "epoch ", 6) && m->series[k].n) E = &m->series[k];
    for (int k = 0; k < m->nseries && !B; k++)
        if (E ? !strcmp(m->series[k].name, E->name + 6) : m->series[k].n > 0) B = &m->series[k];
    if (!E && !B) return;
    const char *name = E ? E->name + 6 : B->name[0] ? B->name : "metric";
    size_t ne = E ? E->n : 0, cur = 0, nv;
    double cur_sum = 0;
    if (E && B) /* the epoch in progress: the values since the last epoch's mean */
        for (size_t i = B->n; i > 0 && B->seq[i - 1] > E->seq[ne - 1]; i--, cur++)
            cur_sum += B->v[i - 1];
    nv = E ? ne + (cur > 0) : B->n;
    double *val = malloc(nv * sizeof *val);
    if (!val) return;
    for (size_t i = 0; i < nv; i++) val[i] = E ? (i < ne ? E->v[i] : cur_sum / cur) : B->v[i];
    /* the headline: "loss 1.5000: epoch 2's mean; epoch 3 so far 0.7500", its items whole */
    char head[160], it[3][64];
    snprintf(it[0], sizeof it[0], "%s %.4f", name, E ? E->v[ne - 1] : B->v[B->n - 1]);
    if (E)
        snprintf(it[1], sizeof it[1], ": epoch %zu's mean", ne);
    else
        snprintf(it[1], sizeof it[1], ", the last of %zu", B->n);
    snprintf(it[2], sizeof it[2], "; epoch %zu so far %.4f", ne + 1, E && cur ? cur_sum / cur : 0);
    const char *is[] = {it[0], it[1], it[2]};
    int nit = E && cur ? 3 : 2;
    whole_items(g, is, nit, r.w, head, sizeof head);
    char c0[96];
    snprintf(c0, sizeof c0, "%s (epoch %zu)", it[0], ne);
    if (E && cells_of(it[0]) + cells_of(it[1]) > r.w) { /* narrow: "loss 1.5000 (epoch 2)" */
        char alt[160];
        const char *cs[] = {c0, it[2]};
        if (!strncmp(whole_items(g, cs, nit - 1, r.w, alt, sizeof alt), c0, strlen(c0)))
            snprintf(head, sizeof head, "%s", alt);
    }
    viz_text(g, r.x, r.y, r.w, head, COL_DEFAULT, 0);
    int ph = r.h - 2; /* the bars' rows, between the headline and the axis */
    double mx = 0;
    for (size_t i = 0; i < nv; i++) mx = val[i] > mx ? val[i] : mx;
    char top[32];
    int lw = snprintf(top, sizeof top, "%.4f", mx);
    int pw = r.w - lw - 1, x0 = r.x + lw + 1;
    if (ph < 2 || pw < 2 || !nv) {
        free(val);
        return;
    }
    /* columns: cw cells a value (at most 4, a gap from 3 on), or k values a cell */
    size_t k = (nv + (size_t)pw - 1) / (size_t)pw;
    int ncol = (int)((nv + k - 1) / k), cw = k > 1 ? 1 : pw / ncol > 4 ? 4 : pw / ncol;
    int bw = cw >= 3 ? cw - 1 : cw;
    for (int c = 0; c < ncol; c++) {
        double sum = 0;
        size_t from = (size_t)c * k, to = from + k < nv ? from + k : nv;
        for (size_t i = from; i < to; i++) sum += val[i];
        double y = mx > 0 ? sum / (double)(to - from) / mx : 0;
        long eighths = lround(y * ph * 8);
        if (eighths < 1 && y > 0) eighths = 1; /* a value above 0: the lowest glyph, not nothing */
        int partial = E && cur && to == nv;    /* the epoch in progress */
        for (int row = 0; row < ph; row++) {
            long fill = eighths - 8L * row; /* eighths of this cell, from the bottom */
            if (fill <= 0) break;
            uint32_t ch = partial     ? viz_glyph_ch(g, G_EV_COLL)
                          : fill >= 8 ? viz_glyph_ch(g, G_FULL)
                          : g->utf8   ? 0x2580 + (uint32_t)fill /* ▁ to ▇ */
                          : fill >= 4 ? '='
                                      : '_';
            for (int x = 0; x < bw; x++)
                viz_put(g, x0 + c * cw + x, r.y + ph - row, ch, partial ? COL_DIM : COL_FORWARD, 0);
        }
    }
    /* the scale: the largest column at the top, 0 at the bottom; the x axis */
    viz_text(g, r.x, r.y + 1, lw, top, COL_DIM, 0);
    viz_text(g, r.x + lw - 1, r.y + ph, 1, "0", COL_DIM, 0);
    for (int row = 1; row <= ph; row++)
        viz_put(g, r.x + lw, r.y + row, viz_glyph_ch(g, G_V), COL_DIM, 0);
    int ay = r.y + ph + 1, end = ncol * cw - (cw - bw);
    viz_put(g, r.x + lw, ay, viz_glyph_ch(g, G_BL), COL_DIM, 0);
    /* the x axis: 1 under the first column, the last number under the
     * last, the unit after it (or between them) */
    char last[48];
    int ll = snprintf(last, sizeof last, "%zu", nv);
    const char *unit = E ? (nv == 1 ? "epoch" : "epochs") : (nv == 1 ? "value" : "values");
    int ul = (int)strlen(unit);
    viz_text(g, x0, ay, pw, "1", COL_DIM, 0);
    if (nv > 1 && end - ll > 1) viz_text(g, x0 + end - ll, ay, ll, last, COL_DIM, 0);
    int after = nv > 1 ? end : 1;
    if (after + 1 + ul <= pw)
        viz_text(g, x0 + after + 1, ay, ul, unit, COL_DIM, 0);
    else if (end - ll - 2 > ul + 1)
        viz_text(g, x0 + (end - ll - ul + 1) / 2, ay, ul, unit, COL_DIM, 0);
    free(val);
}

static void metrics(viz_grid *g, pl_rect r, const viz_model *m, const viz_view *v)
{
    viz_box(g, r, "metrics", v->focus == PL_PANE_METRICS);
    pl_rect in = inside(r);
    if (in.w < 10 || in.h < 1) return;
    int row = 0;
    /* throughput: bytes of every collective over their time; rank 0's
     * latest collective, past bookkeeping ones of at most VIZ_TINY_COLL
     * bytes (a lab's clock alignment before a timed one: a 1-float
     * all-reduce) while a larger one was made; newest: the step of its
     * latest collective, tiny or not (last from an earlier step: "last:"
     * says its step). Kept as events arrive (viz_model_add), and each
     * lane's busy time (the union of its events: a forward and the kernels
     * inside it count once) swept as they arrive (viz_lane_busy): a frame
     * costs the same with 10 million events as with a thousand. */
    int clk = v->modeled ? 1 : 0;
    const struct viz_colls *co = &m->colls;
    double bytes = co->bytes, secs = co->secs[clk], busy[PL_NUM_LANES] = {0};
    size_t calls = co->calls;
    const pl_event *last = co->have_last[clk] ? &co->last[clk] : NULL,
                   *tiny = co->have_tiny[clk] ? &co->tiny[clk] : NULL;
    int newest = co->newest_step;
    for (int rk = 0; rk < m->nranks; rk++)
        for (int l = 0; l < PL_NUM_LANES; l++) busy[l] += viz_lane_busy(&m->lanes[rk][l], clk);
    if (!last) last = tiny;
    /* the lines of numbers, then the curve; with a curve, the numbers leave
     * it at least 4 rows (its headline, 2 rows of bars, the axis) */
    double span = v->modeled ? m->t_hi[1] - m->t_lo[1] : m->t_hi[0] - m->t_lo[0];
    double bubble = viz_bubble_fraction(m, v->modeled);
    int lines = 1 + (secs > 0) + (span > 0 && m->nranks > 0) + (bubble >= 0);
    int crows = !m->nseries ? 0 : in.h - lines > 4 ? in.h - lines : in.h < 4 ? in.h : 4;
    int most = in.h - crows;
    char b[32];
    viz_fmt_bytes(b, sizeof b, bytes);
    /* each line in the longest form that fits the pane (at 80x24 it is 23 cells wide beside
     * Lab 08's shards): shorter words, never a number cut at the edge */
    char f[4][160];
    if (row < most) {
        snprintf(f[0], sizeof f[0], "%zu event%s, %zu collective%s (%s)", m->nevents,
                 pl_s((long long)m->nevents), calls, pl_s((long long)calls), b);
        snprintf(f[1], sizeof f[1], "%zu events, %zu coll. (%s)", m->nevents, calls, b);
        snprintf(f[2], sizeof f[2], "%zu ev, %zu coll, %s", m->nevents, calls, b);
        const char *fs[] = {f[0], f[1], f[2]}, *line = fitting_or_none(fs, 3, in.w);
        if (!*line) { /* the events dropped, then the bytes */
            char it[2][48];
            snprintf(it[0], sizeof it[0], "%zu coll", calls);
            snprintf(it[1], sizeof it[1], ", %s", b);
            const char *is[] = {it[0], it[1]};
            line = whole_items(g, is, 2, in.w, f[3], sizeof f[3]);
        }
        viz_text(g, in.x, in.y + row++, in.w, line, COL_DEFAULT, 0);
    }
    /* the latest collective's own algbw, as the narration and nccl-tests
     * give it: a sum over every call would let the small, latency-bound
     * ones drown the large */
    double ls = last ? viz_ev_start(last, v->modeled) : 0,
           lt = last ? viz_ev_end(last, v->modeled) : 0;
    if (secs > 0 && row < most && last && lt > ls) {
        char lb[32], ld[32];
        viz_fmt_bytes(lb, sizeof lb, (double)last->bytes);
        viz_fmt_time(ld, sizeof ld, lt - ls);
        double bw = (double)last->bytes / (lt - ls); /* bytes a second */
        int k = bw >= 1e9 ? 3 : bw >= 1e6 ? 2 : 1;
        const char *name = last->label[0] ? last->label : "collective", *unit = k == 3   ? "GB/s"
                                                                                : k == 2 ? "MB/s"
                                                                                         : "kB/s";
        char st[24] = "";
        if (last->step > 0 && last->step < newest)
            snprintf(st, sizeof st, " (step %d)", last->step);
        snprintf(f[0], sizeof f[0], "last: %s %s in %s, %.2f %s algbw%s", name, lb, ld,
                 bw / pow(1e3, k), unit, st);
        snprintf(f[1], sizeof f[1], "last: %s %s, %.0f %s%s", name, lb, bw / pow(1e3, k), unit, st);
        snprintf(f[2], sizeof f[2], "last: %s %s%s", name, lb, st);
        snprintf(f[3], sizeof f[3], "%s %s", name, lb);
        const char *fs[] = {f[0], f[1], f[2], f[3]}, *line = fitting_or_none(fs, 4, in.w);
        char it[2][64], one[160];
        if (!*line) { /* the name without its bytes, never the bytes cut */
            snprintf(it[0], sizeof it[0], "%s", name);
            snprintf(it[1], sizeof it[1], " %s", lb);
            const char *is[] = {it[0], it[1]};
            line = whole_items(g, is, 2, in.w, one, sizeof one);
        }
        viz_text(g, in.x, in.y + row++, in.w, line, COL_COMM, 0);
    }
    if (span > 0 && m->nranks > 0 && row < most) {
        double c = 100 * busy[0] / (span * m->nranks), p = 100 * busy[1] / (span * m->nranks);
        snprintf(f[0], sizeof f[0], "busy: compute %.0f %%, copy %.0f %%", c, p);
        snprintf(f[1], sizeof f[1], "busy: cmp %.0f %%, cpy %.0f %%", c, p);
        snprintf(f[2], sizeof f[2], "cmp %.0f%% cpy %.0f%%", c, p);
        const char *fs[] = {f[0], f[1], f[2]}, *line = fitting_or_none(fs, 3, in.w);
        if (!*line) {
            char it[2][32];
            snprintf(it[0], sizeof it[0], "cmp %.0f%%", c);
            snprintf(it[1], sizeof it[1], " cpy %.0f%%", p);
            const char *is[] = {it[0], it[1]};
            line = whole_items(g, is, 2, in.w, f[3], sizeof f[3]);
        }
        viz_text(g, in.x, in.y + row++, in.w, line, COL_DIM, 0);
    }
    if (bubble >= 0 && row < most) { /* the newest complete iteration's, named if not the newest */
        viz_pp_round R;
        viz_pp_round_find(m, v->modeled, &R);
        int named = R.done != R.iteration;
        char g5[5][64];
        snprintf(g5[0], sizeof g5[0], "bubble %.1f %% (iteration %d)", bubble * 100, R.done);
        snprintf(g5[1], sizeof g5[1], "bubble %.1f %% (it. %d)", bubble * 100, R.done);
        snprintf(g5[2], sizeof g5[2], "bubble %.1f %%", bubble * 100);
        snprintf(g5[3], sizeof g5[3], "bubble %.1f%%", bubble * 100);
        snprintf(g5[4], sizeof g5[4], "bub %.1f%%", bubble * 100);
        const char *fs[] = {g5[named ? 0 : 2], g5[named ? 1 : 2], g5[2], g5[3], g5[4]};
        viz_text(g, in.x, in.y + row++, in.w, fitting_or_none(fs, 5, in.w), COL_DEFAULT, 0);
    }
    if (crows) curve(g, (pl_rect){in.x, in.y + row, in.w, in.h - row}, m);
}

/* ---- help and the frame ---------------------------------------------------------------- */

static void help(viz_grid *g)
{
    static const char *lines[] = {
        "space, ->   next step",
        "p           play / pause",
        "+ / -       speed",
        "tab, 1-9    focus a pane",
        "left/right  scroll the timeline",
        "up/down     scroll the focused pane",
        "            narration, links, ranks",
        "PgUp/PgDn   scroll the narration",
        "End, e      the narration: this step",
        "n           all narration / panes",
        "z / Z       zoom in / out",
        "f           follow the newest",
        "t           modeled / measured clock",
        "?           this help",
        "q, Ctrl-C   quit",
    };
    int n = (int)(sizeof lines / sizeof *lines), w = 40, h = n + 2;
    pl_rect r = {(g->w - w) / 2, (g->h - h) / 2, w, h};
    if (r.x < 0 || r.y < 0) return;
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++) viz_put(g, x, y, ' ', COL_DEFAULT, 0);
    viz_box(g, r, "keys", 1);
    for (int i = 0; i < n; i++) viz_text(g, r.x + 2, r.y + 1 + i, w - 4, lines[i], COL_DEFAULT, 0);
}

void viz_render_pane(viz_grid *g, pl_pane p, pl_rect r, const viz_model *m, const viz_view *v)
{
    if (r.w <= 0 || r.h <= 0) return;
    switch (p) {
    case PL_PANE_HEADER:
        header(g, r, v);
        break;
    case PL_PANE_NARRATION:
        narration(g, r, v);
        break;
    case PL_PANE_DEVICES:
        devices(g, r, m, v);
        break;
    case PL_PANE_TIMELINE:
        timeline(g, r, m, v);
        break;
    case PL_PANE_TOPOLOGY:
        topology(g, r, m, v);
        break;
    case PL_PANE_SHARDS:
        shards(g, r, m, v);
        break;
    case PL_PANE_PIPELINE:
        pipeline(g, r, m, v);
        break;
    case PL_PANE_METRICS:
        metrics(g, r, m, v);
        break;
    case PL_PANE_MESH:
        viz_mesh_pane(g, r, m, v);
        break;
    case PL_PANE_MEMORY:
        viz_memory_pane(g, r, m, v);
        break;
    case PL_PANE_PICTURE:
        viz_picture_pane(g, r, m, v);
        break;
    default:
        break;
    }
}

void viz_render(viz_grid *g, const pl_layout *lay, const viz_model *m, const viz_view *v)
{
    viz_grid_clear(g);
    if (!lay->ok) {
        /* never cut: on one line where it fits, else on two (each part long where it fits,
         * else short: "need 60x13", "have 40x12"), else short on one */
        char a[64], b[64], s[128];
        snprintf(s, sizeof s, "need at least %dx%d (this terminal is %dx%d)", lay->min_w,
                 lay->min_h, g->w, g->h);
        if ((int)strlen(s) > g->w && g->h >= 2) {
            snprintf(a, sizeof a, "need at least %dx%d", lay->min_w, lay->min_h);
            if ((int)strlen(a) > g->w) snprintf(a, sizeof a, "need %dx%d", lay->min_w, lay->min_h);
            snprintf(b, sizeof b, "(this terminal is %dx%d)", g->w, g->h);
            if ((int)strlen(b) > g->w) snprintf(b, sizeof b, "have %dx%d", g->w, g->h);
            viz_text(g, 0, 0, g->w, a, COL_WARN, ATTR_BOLD);
            viz_text(g, 0, 1, g->w, b, COL_WARN, ATTR_BOLD);
            return;
        }
        if ((int)strlen(s) > g->w)
            snprintf(s, sizeof s, "need %dx%d; have %dx%d", lay->min_w, lay->min_h, g->w, g->h);
        viz_text(g, 0, 0, g->w, s, COL_WARN, ATTR_BOLD);
        return;
    }
    for (int p = 0; p < PL_NUM_PANES; p++) viz_render_pane(g, (pl_pane)p, lay->pane[p], m, v);
    if (v->help) help(g);
}
