/* pipeline.c — see paralab/pipeline.h: the layer split, the five shipped
 * schedules, the validator (coverage, order, message matching, a
 * rendezvous simulation that finds deadlocks and times the ops) and the
 * formulas. Pure host C. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/pipeline.h"

/* snprintf into err when there is room; always -1 (the failing return). */
static int fail(char *err, size_t cap, const char *fmt, ...)
{
    if (err && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int imin(int a, int b) { return a < b ? a : b; }

/* ---- cutting the model into stages ---------------------------------------------------- */

int pl_pp_split(int layers, int stages, int chunks, int *first, int *count, char *err, size_t cap)
{
    if (stages < 1 || stages > PL_PP_MAX_STAGES)
        return fail(err, cap, "%d pipeline stages: allowed 1..%d", stages, PL_PP_MAX_STAGES);
    if (chunks < 1 || chunks > PL_PP_MAX_CHUNKS)
        return fail(err, cap, "%d model chunks per stage: allowed 1..%d", chunks, PL_PP_MAX_CHUNKS);
    int q = stages * chunks;
    if (layers < q) {
        if (chunks > 1)
            return fail(err, cap,
                        "%d blocks cannot be cut into %d stages of %d chunks: each of the %d "
                        "virtual stages needs a block, so at least %d blocks",
                        layers, stages, chunks, q, q);
        return fail(err, cap,
                    "%d blocks cannot be cut into %d stages: each stage needs a block, so at "
                    "least %d blocks",
                    layers, stages, q);
    }
    int base = layers / q, extra = layers % q, at = 0;
    for (int i = 0; i < q; i++) {
        first[i] = at;
        count[i] = base + (i < extra);
        at += count[i];
    }
    return 0;
}

/* ---- ops and their names ---------------------------------------------------------------- */

static pl_pp_op make_op(int kind, int k, int c)
{
    pl_pp_op o = {kind, k, c};
    return o;
}
pl_pp_op pl_pp_forward(int micro_batch, int chunk) { return make_op(PL_PP_F, micro_batch, chunk); }
pl_pp_op pl_pp_backward(int micro_batch, int chunk)
{
    return make_op(PL_PP_BW, micro_batch, chunk);
}
pl_pp_op pl_pp_backward_input(int micro_batch, int chunk)
{
    return make_op(PL_PP_B, micro_batch, chunk);
}
pl_pp_op pl_pp_backward_weight(int micro_batch, int chunk)
{
    return make_op(PL_PP_W, micro_batch, chunk);
}

static const char *const op_letters[PL_PP_NUM_OPS] = {"F", "BW", "B", "W"};

void pl_pp_op_name(pl_pp_op op, int chunks, char *buf, size_t cap)
{
    if (!buf || !cap) return;
    const char *l = op.kind >= 0 && op.kind < PL_PP_NUM_OPS ? op_letters[op.kind] : "?";
    if (chunks > 1)
        snprintf(buf, cap, "%s%d.%d", l, op.micro_batch, op.chunk);
    else
        snprintf(buf, cap, "%s%d", l, op.micro_batch);
}

static const char *const kind_names[PL_PP_NUM_KINDS] = {"naive", "gpipe", "1f1b", "interleaved",
                                                        "zb-h1"};

const char *pl_pp_kind_name(pl_pp_kind k)
{
    return (int)k >= 0 && k < PL_PP_NUM_KINDS ? kind_names[k] : "?";
}

int pl_pp_kind_parse(const char *name, char *err, size_t cap)
{
    for (int k = 0; k < PL_PP_NUM_KINDS; k++)
        if (name && strcmp(name, kind_names[k]) == 0) return k;
    return fail(err, cap,
                "no schedule '%s': the schedules are naive, gpipe, 1f1b, interleaved "
                "and zb-h1",
                name ? name : "(null)");
}

/* ---- a schedule ----------------------------------------------------------------------- */

static int check_dims(int p, int m, int v, char *err, size_t cap)
{
    if (p < 1 || p > PL_PP_MAX_STAGES)
        return fail(err, cap, "%d pipeline stages: allowed 1..%d", p, PL_PP_MAX_STAGES);
    if (m < 1 || m > PL_PP_MAX_MICRO)
        return fail(err, cap, "%d micro-batches: allowed 1..%d", m, PL_PP_MAX_MICRO);
    if (v < 1 || v > PL_PP_MAX_CHUNKS)
        return fail(err, cap, "%d model chunks per stage: allowed 1..%d", v, PL_PP_MAX_CHUNKS);
    return 0;
}

int pl_pp_schedule_init(pl_pp_schedule *s, int stages, int micro_batches, int chunks, char *err,
                        size_t cap)
{
    memset(s, 0, sizeof *s);
    s->kind = -1;
    if (check_dims(stages, micro_batches, chunks, err, cap)) return -1;
    s->stages = stages;
    s->micro_batches = micro_batches;
    s->chunks = chunks;
    s->cap = 3 * micro_batches * chunks;
    for (int r = 0; r < stages; r++) {
        s->ops[r] = malloc((size_t)s->cap * sizeof *s->ops[r]);
        if (!s->ops[r]) {
            pl_pp_schedule_free(s);
            return fail(err, cap, "out of memory for a schedule of %d stages x %d ops", stages,
                        3 * micro_batches * chunks);
        }
    }
    return 0;
}

void pl_pp_schedule_free(pl_pp_schedule *s)
{
    if (!s) return;
    for (int r = 0; r < PL_PP_MAX_STAGES; r++) {
        free(s->ops[r]);
        s->ops[r] = NULL;
        s->n[r] = 0;
    }
}

int pl_pp_push(pl_pp_schedule *s, int stage, pl_pp_op op)
{
    if (!s || stage < 0 || stage >= s->stages || !s->ops[stage] || s->n[stage] >= s->cap) return -1;
    s->ops[stage][s->n[stage]++] = op;
    return 0;
}

/* ---- the shipped schedules ------------------------------------------------------------- */

int pl_pp_accepts(pl_pp_kind kind, int stages, int micro_batches, int chunks, char *err, size_t cap)
{
    if ((int)kind < 0 || kind >= PL_PP_NUM_KINDS)
        return fail(err, cap,
                    "schedule kind %d: allowed 0..%d (naive, gpipe, 1f1b, "
                    "interleaved, zb-h1)",
                    (int)kind, PL_PP_NUM_KINDS - 1);
    if (check_dims(stages, micro_batches, chunks, err, cap)) return -1;
    const char *name = kind_names[kind];
    if (kind != PL_PP_INTERLEAVED) {
        if (chunks != 1)
            return fail(err, cap,
                        "%s: v = %d chunks per stage, but only the interleaved schedule runs "
                        "more than one chunk per stage (v must be 1)",
                        name, chunks);
        return 0;
    }
    if (stages < 2)
        return fail(err, cap,
                    "interleaved: p = %d stage, but the interleaved schedule needs at least 2 "
                    "(Megatron-LM: pipeline parallelism of size > 1; with one stage every chunk "
                    "would send to itself)",
                    stages);
    if (micro_batches % stages)
        return fail(err, cap,
                    "interleaved: m = %d micro-batches is not a multiple of p = %d stages "
                    "(Megatron-LM's interleaved schedule runs micro-batches in groups of p)",
                    micro_batches, stages);
    return 0;
}

int pl_pp_warmup_1f1b(int stages, int micro_batches, int stage)
{
    return imin(stages - stage - 1, micro_batches);
}

int pl_pp_warmup_interleaved(int stages, int micro_batches, int chunks, int stage)
{
    /* v = 1 is plain 1F1B: Megatron-LM runs forward_backward_pipelining_without_interleaving
     * then, whose warm-up is p - r - 1 (the 2 (p - r - 1) below is for chunk round trips) */
    if (chunks == 1) return pl_pp_warmup_1f1b(stages, micro_batches, stage);
    return imin((stages - stage - 1) * 2 + (chunks - 1) * stages, micro_batches * chunks);
}

static void build_naive(pl_pp_schedule *s)
{
    for (int r = 0; r < s->stages; r++)
        for (int k = 0; k < s->micro_batches; k++) {
            pl_pp_push(s, r, pl_pp_forward(k, 0));
            pl_pp_push(s, r, pl_pp_backward(k, 0));
        }
}

/* GPipe: every stage runs F0..F(m-1), then BW(m-1)..BW0: the last stage
 * starts its backwards with the micro-batch whose forward it ran last (its
 * activations are the freshest, and nothing is waited for), so its
 * gradients leave in the order m-1..0 and every earlier stage must take
 * them in that order too (messages are matched in order). */
static void build_gpipe(pl_pp_schedule *s)
{
    int m = s->micro_batches;
    for (int r = 0; r < s->stages; r++) {
        for (int k = 0; k < m; k++) pl_pp_push(s, r, pl_pp_forward(k, 0));
        for (int k = m - 1; k >= 0; k--) pl_pp_push(s, r, pl_pp_backward(k, 0));
    }
}

/* 1F1B (Megatron-LM forward_backward_pipelining_without_interleaving):
 * warm-up forwards 0..w-1, then m - w steady pairs F(w+i), BW(i), then the
 * cool-down backwards m-w..m-1. */
static void build_1f1b(pl_pp_schedule *s)
{
    int p = s->stages, m = s->micro_batches;
    for (int r = 0; r < p; r++) {
        int w = pl_pp_warmup_1f1b(p, m, r);
        for (int k = 0; k < w; k++) pl_pp_push(s, r, pl_pp_forward(k, 0));
        for (int i = 0; i < m - w; i++) {
            pl_pp_push(s, r, pl_pp_forward(w + i, 0));
            pl_pp_push(s, r, pl_pp_backward(i, 0));
        }
        for (int i = m - w; i < m; i++) pl_pp_push(s, r, pl_pp_backward(i, 0));
    }
}

/* Interleaved 1F1B (Megatron-LM forward_backward_pipelining_with_interleaving,
 * micro-batch groups of p): the t-th chunk-forward of a stage is micro-batch
 * (t / (p v)) p + t % p of chunk (t / p) % v; its t-th chunk-backward is
 * the same micro-batch of chunk v - 1 - (t / p) % v. Warm-up
 * pl_pp_warmup_interleaved forwards, then pairs (forward w + i, backward
 * i), then the remaining backwards. */
static void interleaved_at(int p, int v, int t, int forward, int *k, int *c)
{
    *k = (t / (p * v)) * p + t % p;
    *c = (t / p) % v;
    if (!forward) *c = v - 1 - *c;
}

static void build_interleaved(pl_pp_schedule *s)
{
    int p = s->stages, m = s->micro_batches, v = s->chunks, total = m * v, k, c;
    for (int r = 0; r < p; r++) {
        int w = pl_pp_warmup_interleaved(p, m, v, r);
        for (int t = 0; t < w; t++) {
            interleaved_at(p, v, t, 1, &k, &c);
            pl_pp_push(s, r, pl_pp_forward(k, c));
        }
        for (int i = 0; i < total - w; i++) {
            interleaved_at(p, v, w + i, 1, &k, &c);
            pl_pp_push(s, r, pl_pp_forward(k, c));
            interleaved_at(p, v, i, 0, &k, &c);
            pl_pp_push(s, r, pl_pp_backward(k, c));
        }
        for (int t = total - w; t < total; t++) {
            interleaved_at(p, v, t, 0, &k, &c);
            pl_pp_push(s, r, pl_pp_backward(k, c));
        }
    }
}

int pl_pp_build_breadth_first(pl_pp_schedule *s, int stages, int micro_batches, int chunks,
                              char *err, size_t cap)
{
    memset(s, 0, sizeof *s);
    s->kind = -1;
    if (pl_pp_accepts(PL_PP_INTERLEAVED, stages, micro_batches, chunks, err, cap)) return -1;
    if (pl_pp_schedule_init(s, stages, micro_batches, chunks, err, cap)) return -1;
    int p = stages, v = chunks, total = micro_batches * chunks, k, c;
    for (int r = 0; r < p; r++) {
        for (int t = 0; t < total; t++) {
            interleaved_at(p, v, t, 1, &k, &c);
            pl_pp_push(s, r, pl_pp_forward(k, c));
        }
        for (int t = 0; t < total; t++) {
            interleaved_at(p, v, t, 0, &k, &c);
            pl_pp_push(s, r, pl_pp_backward(k, c));
        }
    }
    return 0;
}

/* ZB-H1 (Qi et al., ICLR 2024, section 3.1): 1F1B's order with each BW
 * split into B then W, and stage r's W's started r steps late ("adjusts
 * the starting points of W depending on the number of warm-up
 * micro-batches"), so that every stage holds the same number, min(p, m),
 * of micro-batches in flight (stage 0's in 1F1B, the maximum over stages
 * is unchanged); the deferred W's fill the cool-down. Steady step i:
 * F(w+i), B(i), and W(i-r) once i >= r; cool-down: each B followed by the
 * oldest pending W; then the remaining W's. */
static void build_zb_h1(pl_pp_schedule *s)
{
    int p = s->stages, m = s->micro_batches;
    for (int r = 0; r < p; r++) {
        int w = pl_pp_warmup_1f1b(p, m, r), next_w = 0;
        for (int k = 0; k < w; k++) pl_pp_push(s, r, pl_pp_forward(k, 0));
        for (int i = 0; i < m - w; i++) {
            pl_pp_push(s, r, pl_pp_forward(w + i, 0));
            pl_pp_push(s, r, pl_pp_backward_input(i, 0));
            if (i >= r) pl_pp_push(s, r, pl_pp_backward_weight(next_w++, 0));
        }
        for (int i = m - w; i < m; i++) {
            pl_pp_push(s, r, pl_pp_backward_input(i, 0));
            pl_pp_push(s, r, pl_pp_backward_weight(next_w++, 0));
        }
        while (next_w < m) pl_pp_push(s, r, pl_pp_backward_weight(next_w++, 0));
    }
}

int pl_pp_build(pl_pp_schedule *s, pl_pp_kind kind, int stages, int micro_batches, int chunks,
                char *err, size_t cap)
{
    memset(s, 0, sizeof *s);
    s->kind = -1;
    if (pl_pp_accepts(kind, stages, micro_batches, chunks, err, cap)) return -1;
    if (pl_pp_schedule_init(s, stages, micro_batches, chunks, err, cap)) return -1;
    s->kind = (int)kind;
    switch (kind) {
    case PL_PP_NAIVE:
        build_naive(s);
        break;
    case PL_PP_GPIPE:
        build_gpipe(s);
        break;
    case PL_PP_1F1B:
        build_1f1b(s);
        break;
    case PL_PP_INTERLEAVED:
        build_interleaved(s);
        break;
    case PL_PP_ZB_H1:
        build_zb_h1(s);
        break;
    default:
        break;
    }
    return 0;
}

/* ---- the validator ---------------------------------------------------------------------- */

/* What an op receives before it and sends after it (the executor's rules,
 * paralab/pipeline.h): the peer stage, or -1. A message is named by what
 * it feeds: its kind (activation or gradient), micro-batch and the virtual
 * stage of the op that receives it. */
enum { MSG_ACT, MSG_GRAD };
typedef struct {
    int type, k, q; /* q: the receiving op's virtual stage */
} msg_key;

static int op_recv(const pl_pp_schedule *s, int r, pl_pp_op o, msg_key *key)
{
    int p = s->stages, last = p * s->chunks - 1, q = o.chunk * p + r;
    if (o.kind == PL_PP_F && q > 0) {
        *key = (msg_key){MSG_ACT, o.micro_batch, q};
        return (q - 1) % p;
    }
    if ((o.kind == PL_PP_BW || o.kind == PL_PP_B) && q < last) {
        *key = (msg_key){MSG_GRAD, o.micro_batch, q};
        return (q + 1) % p;
    }
    return -1;
}

static int op_send(const pl_pp_schedule *s, int r, pl_pp_op o, msg_key *key)
{
    int p = s->stages, last = p * s->chunks - 1, q = o.chunk * p + r;
    if (o.kind == PL_PP_F && q < last) {
        *key = (msg_key){MSG_ACT, o.micro_batch, q + 1};
        return (q + 1) % p;
    }
    if ((o.kind == PL_PP_BW || o.kind == PL_PP_B) && q > 0) {
        *key = (msg_key){MSG_GRAD, o.micro_batch, q - 1};
        return (q - 1) % p;
    }
    return -1;
}

static const char *ordinal(int n, char *buf, size_t cap)
{
    int t = n % 100, u = n % 10;
    const char *suf = (t >= 11 && t <= 13) ? "th"
                      : u == 1             ? "st"
                      : u == 2             ? "nd"
                      : u == 3             ? "rd"
                                           : "th";
    snprintf(buf, cap, "%d%s", n, suf);
    return buf;
}

/* "micro-batch 3" or, with chunks, "micro-batch 3, chunk 1". */
static void mb_words(const pl_pp_schedule *s, pl_pp_op o, char *buf, size_t cap)
{
    if (s->chunks > 1)
        snprintf(buf, cap, "micro-batch %d, chunk %d", o.micro_batch, o.chunk);
    else
        snprintf(buf, cap, "micro-batch %d", o.micro_batch);
}

/* An op's name as the validator writes it: the chunk shown when v > 1 or
 * when the op's chunk is not 0 (so a bad chunk is visible). */
static void name_of(const pl_pp_schedule *s, pl_pp_op o, char *buf, size_t cap)
{
    int v = s->chunks;
    if (o.chunk != 0 && v < 2) v = 2;
    pl_pp_op_name(o, v, buf, cap);
}

/* What a message is, in words: "the gradient for BW1" (receiver side) or
 * "the gradient from BW0" (sender side). */
static void msg_words(const pl_pp_schedule *s, pl_pp_op o, int receiving, char *buf, size_t cap)
{
    char n[32];
    name_of(s, o, n, sizeof n);
    if (o.kind == PL_PP_F)
        snprintf(buf, cap, receiving ? "the input of %s" : "the output of %s", n);
    else
        snprintf(buf, cap, receiving ? "the gradient for %s" : "the gradient from %s", n);
}

/* Coverage and order on one stage (the first bad op, in list order, then
 * what is missing). pos: 4 m v ints of scratch. */
static int check_stage(const pl_pp_schedule *s, int r, int *pos, char *err, size_t cap)
{
    int m = s->micro_batches, v = s->chunks, mv = m * v, n = s->n[r];
    const pl_pp_op *ops = s->ops[r];
    char nm[32], nm2[32], w[64];
    if (n < 0 || n > s->cap)
        return fail(err, cap, "stage %d: %d ops, but a list holds 0..%d (3 m v)", r, n, s->cap);
    if (n > 0 && !ops) return fail(err, cap, "stage %d: %d ops but no list", r, n);
    for (int i = 0; i < 4 * mv; i++) pos[i] = -1;
    /* ranges, and the first position of every op */
    for (int i = 0; i < n; i++) {
        pl_pp_op o = ops[i];
        if (o.kind < 0 || o.kind >= PL_PP_NUM_OPS)
            return fail(err, cap, "stage %d, op %d: kind %d is not an op (F, BW, B or W)", r, i,
                        o.kind);
        name_of(s, o, nm, sizeof nm);
        if (o.micro_batch < 0 || o.micro_batch >= m)
            return fail(err, cap,
                        "stage %d, op %d (%s): micro-batch %d is out of range (m = %d: "
                        "0..%d)",
                        r, i, nm, o.micro_batch, m, m - 1);
        if (o.chunk < 0 || o.chunk >= v)
            return fail(err, cap,
                        "stage %d, op %d (%s): chunk %d is not one of this stage's chunks "
                        "(v = %d: 0..%d)",
                        r, i, nm, o.chunk, v, v - 1);
        int *at = &pos[o.kind * mv + o.micro_batch * v + o.chunk];
        if (*at < 0) *at = i;
    }
    for (int i = 0; i < n; i++) {
        pl_pp_op o = ops[i];
        int id = o.micro_batch * v + o.chunk;
        int pf = pos[PL_PP_F * mv + id], pbw = pos[PL_PP_BW * mv + id];
        int pb = pos[PL_PP_B * mv + id], pw = pos[PL_PP_W * mv + id];
        name_of(s, o, nm, sizeof nm);
        mb_words(s, o, w, sizeof w);
        int first = pos[o.kind * mv + id];
        if (first != i)
            return fail(err, cap, "stage %d, op %d (%s): %s again (it is op %d; each op runs once)",
                        r, i, nm, nm, first);
        if (o.kind == PL_PP_BW || o.kind == PL_PP_B || o.kind == PL_PP_W) {
            int other = o.kind == PL_PP_BW ? (pb >= 0 && (pw < 0 || pb < pw) ? pb : pw) : pbw;
            if (other >= 0 && other < i) {
                name_of(s, ops[other], nm2, sizeof nm2);
                return fail(err, cap,
                            "stage %d, op %d (%s): %s already has %s (op %d): a backward is "
                            "one BW, or one B and one W, not both",
                            r, i, nm, w, nm2, other);
            }
            if (pf > i) {
                name_of(s, ops[pf], nm2, sizeof nm2);
                return fail(err, cap,
                            "stage %d, op %d (%s): the backward of %s comes before its forward "
                            "(%s is op %d)",
                            r, i, nm, w, nm2, pf);
            }
            if (o.kind == PL_PP_W && pb > i) {
                name_of(s, ops[pb], nm2, sizeof nm2);
                return fail(err, cap,
                            "stage %d, op %d (%s): the weight gradient of %s comes before its "
                            "input gradient (%s is op %d)",
                            r, i, nm, w, nm2, pb);
            }
        }
    }
    for (int id = 0; id < mv; id++) {
        pl_pp_op o = {PL_PP_F, id / v, id % v};
        int pf = pos[PL_PP_F * mv + id], pbw = pos[PL_PP_BW * mv + id];
        int pb = pos[PL_PP_B * mv + id], pw = pos[PL_PP_W * mv + id];
        mb_words(s, o, w, sizeof w);
        name_of(s, o, nm, sizeof nm);
        if (pf < 0)
            return fail(err, cap,
                        "stage %d: %s is missing (the stage runs one F and one BW, or one B and "
                        "one W, of every micro-batch and chunk)",
                        r, nm);
        if (pbw < 0 && pb < 0 && pw < 0) {
            o.kind = PL_PP_BW;
            name_of(s, o, nm, sizeof nm);
            o.kind = PL_PP_B;
            name_of(s, o, nm2, sizeof nm2);
            return fail(err, cap, "stage %d: the backward of %s is missing (no %s, nor %s and W)",
                        r, w, nm, nm2);
        }
        if (pb >= 0 && pw < 0) {
            name_of(s, ops[pb], nm, sizeof nm);
            o.kind = PL_PP_W;
            name_of(s, o, nm2, sizeof nm2);
            return fail(err, cap, "stage %d, op %d (%s): its %s is missing (a B needs its W)", r,
                        pb, nm, nm2);
        }
        if (pw >= 0 && pb < 0) {
            name_of(s, ops[pw], nm, sizeof nm);
            o.kind = PL_PP_B;
            name_of(s, o, nm2, sizeof nm2);
            return fail(err, cap, "stage %d, op %d (%s): its %s is missing (a W needs its B)", r,
                        pw, nm, nm2);
        }
    }
    return 0;
}

/* One direction between two stages, a -> b (channel a p + b): its sends
 * and receives in order, each by the op that posts it. */
typedef struct {
    int ns, nr;
    int *send_op, *recv_op; /* the op index on a (send after it) and on b (receive before it) */
} channel;

/* pl_pp_validate_sends and pl_pp_timeline: start[r][i], when not NULL, gets op i's start. */
static int validate(const pl_pp_schedule *s, pl_pp_sends sends, double t_f, double t_b, double t_w,
                    pl_pp_report *rep, double *const *start, char *err, size_t cap)
{
    int buffered = sends == PL_PP_BUFFERED;
    if (!s) return fail(err, cap, "no schedule");
    if (check_dims(s->stages, s->micro_batches, s->chunks, err, cap)) return -1;
    int p = s->stages, m = s->micro_batches, v = s->chunks, rc = -1;
    size_t nch = (size_t)p * (size_t)p;
    if (s->cap != 3 * m * v)
        return fail(err, cap,
                    "a schedule's lists hold 3 m v = %d ops, this one says %d (use "
                    "pl_pp_schedule_init)",
                    3 * m * v, s->cap);
    int *pos = malloc((size_t)4 * m * v * sizeof *pos);
    if (!pos) return fail(err, cap, "out of memory validating a schedule");
    for (int r = 0; r < p; r++)
        if (check_stage(s, r, pos, err, cap)) {
            free(pos);
            return -1;
        }
    free(pos);

    /* the messages of every channel, in the order they are posted */
    channel *ch = calloc(nch, sizeof *ch);
    int *sch[PL_PP_MAX_STAGES] = {0}, *sj[PL_PP_MAX_STAGES] = {0};
    int *rch[PL_PP_MAX_STAGES] = {0}, *rj[PL_PP_MAX_STAGES] = {0};
    double *reach[PL_PP_MAX_STAGES] = {0};
    int *cur = calloc((size_t)PL_PP_MAX_STAGES, sizeof *cur);
    if (!ch || !cur) goto oom;
    for (int r = 0; r < p; r++) {
        int n = s->n[r];
        sch[r] = malloc(((size_t)n + 1) * sizeof(int));
        sj[r] = malloc(((size_t)n + 1) * sizeof(int));
        rch[r] = malloc(((size_t)n + 1) * sizeof(int));
        rj[r] = malloc(((size_t)n + 1) * sizeof(int));
        reach[r] = malloc(((size_t)n + 1) * sizeof(double));
        if (!sch[r] || !sj[r] || !rch[r] || !rj[r] || !reach[r]) goto oom;
        for (int i = 0; i < n; i++) {
            msg_key key;
            int to = op_send(s, r, s->ops[r][i], &key), from = op_recv(s, r, s->ops[r][i], &key);
            sch[r][i] = to < 0 ? -1 : r * p + to;
            sj[r][i] = to < 0 ? -1 : ch[r * p + to].ns++;
            rch[r][i] = from < 0 ? -1 : from * p + r;
            rj[r][i] = from < 0 ? -1 : ch[from * p + r].nr++;
        }
    }
    for (size_t c = 0; c < nch; c++) {
        ch[c].send_op = malloc(((size_t)ch[c].ns + 1) * sizeof(int));
        ch[c].recv_op = malloc(((size_t)ch[c].nr + 1) * sizeof(int));
        if (!ch[c].send_op || !ch[c].recv_op) goto oom;
    }
    for (int r = 0; r < p; r++)
        for (int i = 0; i < s->n[r]; i++) {
            if (sch[r][i] >= 0) ch[sch[r][i]].send_op[sj[r][i]] = i;
            if (rch[r][i] >= 0) ch[rch[r][i]].recv_op[rj[r][i]] = i;
        }

    /* in-order matching: the j-th receive at b from a is the j-th send a -> b */
    char nm[32], nm2[32], what[64], got[64], ord[16];
    for (int b = 0; b < p; b++)
        for (int i = 0; i < s->n[b]; i++) {
            int c = rch[b][i], j = rj[b][i];
            if (c < 0) continue;
            int a = c / p;
            pl_pp_op o = s->ops[b][i];
            name_of(s, o, nm, sizeof nm);
            msg_words(s, o, 1, what, sizeof what);
            if (j >= ch[c].ns) {
                fail(err, cap,
                     "stage %d, op %d (%s): it waits for %s from stage %d, which sends it only "
                     "%d messages: this receive is never matched",
                     b, i, nm, what, a, ch[c].ns);
                goto out;
            }
            int si = ch[c].send_op[j];
            pl_pp_op so = s->ops[a][si];
            msg_key want = {0, 0, 0}, have = {0, 0, 0};
            op_recv(s, b, o, &want);
            op_send(s, a, so, &have);
            if (want.type != have.type || want.k != have.k || want.q != have.q) {
                name_of(s, so, nm2, sizeof nm2);
                msg_words(s, so, 0, got, sizeof got);
                fail(err, cap,
                     "stage %d, op %d (%s): its receive is the %s from stage %d and must bring "
                     "%s, but stage %d's %s send to stage %d (after its op %d, %s) carries %s "
                     "(messages between two stages are matched in order)",
                     b, i, nm, ordinal(j + 1, ord, sizeof ord), a, what, a, ord, b, si, nm2, got);
                goto out;
            }
        }
    for (int a = 0; a < p; a++)
        for (int i = 0; i < s->n[a]; i++) {
            int c = sch[a][i], j = sj[a][i];
            if (c < 0 || j < ch[c].nr) continue;
            name_of(s, s->ops[a][i], nm, sizeof nm);
            msg_words(s, s->ops[a][i], 0, what, sizeof what);
            fail(err, cap,
                 "stage %d, op %d (%s): its send to stage %d (%s) is never received (stage %d "
                 "receives %d messages from stage %d)",
                 a, i, nm, c % p, what, c % p, ch[c].nr, a);
            goto out;
        }

    /* the rendezvous simulation: stage r's group g is the send after op g - 1 and the receive
     * before op g; it completes when each of its messages is posted on both sides (the partner
     * reached the group that holds it), at the later of the two arrival times; op g then runs. */
    for (int r = 0; r < p; r++) reach[r][0] = 0;
    int progress = 1;
    while (progress) {
        progress = 0;
        for (int r = 0; r < p; r++)
            while (cur[r] <= s->n[r]) {
                int g = cur[r], n = s->n[r], ok = 1;
                double t = reach[r][g];
                if (!buffered && g > 0 && sch[r][g - 1] >= 0) {
                    int c = sch[r][g - 1], b = c % p, rg = ch[c].recv_op[sj[r][g - 1]];
                    if (cur[b] < rg)
                        ok = 0;
                    else if (reach[b][rg] > t)
                        t = reach[b][rg];
                }
                if (ok && g < n && rch[r][g] >= 0) {
                    int c = rch[r][g], a = c / p, sg = ch[c].send_op[rj[r][g]] + 1;
                    if (cur[a] < sg)
                        ok = 0;
                    else if (reach[a][sg] > t)
                        t = reach[a][sg];
                }
                if (!ok) break;
                if (g < n) {
                    pl_pp_op o = s->ops[r][g];
                    double d = o.kind == PL_PP_F    ? t_f
                               : o.kind == PL_PP_BW ? t_b + t_w
                               : o.kind == PL_PP_B  ? t_b
                                                    : t_w;
                    reach[r][g + 1] = t + d;
                    if (start && start[r]) start[r][g] = t;
                }
                cur[r]++;
                progress = 1;
            }
    }
    for (int r0 = 0; r0 < p; r0++) {
        if (cur[r0] > s->n[r0]) continue;
        /* r0 is blocked: follow who it waits for until a stage comes back */
        int seen[PL_PP_MAX_STAGES], order[PL_PP_MAX_STAGES + 1], len = 0, r = r0;
        for (int i = 0; i < p; i++) seen[i] = -1;
        while (seen[r] < 0) {
            seen[r] = len;
            order[len++] = r;
            int g = cur[r];
            if (!buffered && g > 0 && sch[r][g - 1] >= 0) {
                int c = sch[r][g - 1], b = c % p;
                if (cur[b] < ch[c].recv_op[sj[r][g - 1]]) {
                    r = b;
                    continue;
                }
            }
            r = rch[r][g] / p;
        }
        size_t at = 0;
        if (cap) at = (size_t)snprintf(err, cap, "deadlock: ");
        for (int i = seen[r]; i < len; i++) {
            int x = order[i], g = cur[x];
            int y = i + 1 < len ? order[i + 1] : r;
            const char *lead = i == seen[r] ? "stage" : ", which";
            char head[16];
            if (i == seen[r])
                snprintf(head, sizeof head, " %d", x);
            else
                head[0] = 0;
            int sending = 0;
            if (!buffered && g > 0 && sch[x][g - 1] >= 0) {
                int c = sch[x][g - 1];
                sending = c % p == y && cur[y] < ch[c].recv_op[sj[x][g - 1]];
            }
            if (sending) {
                name_of(s, s->ops[x][g - 1], nm, sizeof nm);
                if (at < cap)
                    at += (size_t)snprintf(err + at, cap - at,
                                           "%s%s waits after op %d (%s) to send to stage %d", lead,
                                           head, g - 1, nm, y);
            } else {
                name_of(s, s->ops[x][g], nm, sizeof nm);
                if (at < cap)
                    at += (size_t)snprintf(err + at, cap - at,
                                           "%s%s waits at op %d (%s) to receive from stage %d",
                                           lead, head, g, nm, y);
            }
        }
        if (at < cap) snprintf(err + at, cap - at, ": a cycle, no stage in it can go on");
        goto out;
    }

    if (rep) {
        memset(rep, 0, sizeof *rep);
        for (int r = 0; r < p; r++) {
            int held = 0;
            for (int i = 0; i < s->n[r]; i++) {
                pl_pp_op o = s->ops[r][i];
                double d = o.kind == PL_PP_F    ? t_f
                           : o.kind == PL_PP_BW ? t_b + t_w
                           : o.kind == PL_PP_B  ? t_b
                                                : t_w;
                rep->busy[r] += d;
                if (o.kind == PL_PP_F && ++held > rep->peak_in_flight[r])
                    rep->peak_in_flight[r] = held;
                if (o.kind == PL_PP_BW || o.kind == PL_PP_W) held--;
                rep->sends[r] += sch[r][i] >= 0;
                rep->recvs[r] += rch[r][i] >= 0;
            }
            if (reach[r][s->n[r]] > rep->makespan) rep->makespan = reach[r][s->n[r]];
        }
    }
    rc = 0;
    goto out;
oom:
    fail(err, cap, "out of memory validating a schedule");
out:
    if (ch)
        for (size_t c = 0; c < nch; c++) {
            free(ch[c].send_op);
            free(ch[c].recv_op);
        }
    free(ch);
    free(cur);
    for (int r = 0; r < PL_PP_MAX_STAGES; r++) {
        free(sch[r]);
        free(sj[r]);
        free(rch[r]);
        free(rj[r]);
        free(reach[r]);
    }
    return rc;
}

int pl_pp_validate(const pl_pp_schedule *s, double t_f, double t_b, double t_w, pl_pp_report *rep,
                   char *err, size_t cap)
{
    return validate(s, PL_PP_RENDEZVOUS, t_f, t_b, t_w, rep, NULL, err, cap);
}

int pl_pp_validate_sends(const pl_pp_schedule *s, pl_pp_sends sends, double t_f, double t_b,
                         double t_w, pl_pp_report *rep, char *err, size_t cap)
{
    if (sends != PL_PP_RENDEZVOUS && sends != PL_PP_BUFFERED)
        return fail(err, cap, "sends %d: allowed PL_PP_RENDEZVOUS (0) or PL_PP_BUFFERED (1)",
                    (int)sends);
    return validate(s, sends, t_f, t_b, t_w, rep, NULL, err, cap);
}

int pl_pp_timeline(const pl_pp_schedule *s, pl_pp_sends sends, double t_f, double t_b, double t_w,
                   double *const start[PL_PP_MAX_STAGES], char *err, size_t cap)
{
    if (sends != PL_PP_RENDEZVOUS && sends != PL_PP_BUFFERED)
        return fail(err, cap, "sends %d: allowed PL_PP_RENDEZVOUS (0) or PL_PP_BUFFERED (1)",
                    (int)sends);
    return validate(s, sends, t_f, t_b, t_w, NULL, start, err, cap);
}

/* ---- formulas ----------------------------------------------------------------------------- */

int pl_pp_bubble_formula(pl_pp_kind kind, int stages, int micro_batches, int chunks,
                         double *of_ideal, double *of_total)
{
    double p = stages, m = micro_batches, v = chunks, a, b;
    switch (kind) {
    case PL_PP_NAIVE:
        a = p - 1;
        b = (p - 1) / p;
        break;
    case PL_PP_GPIPE:
    case PL_PP_1F1B:
        a = (p - 1) / m;
        b = (p - 1) / (m + p - 1);
        break;
    case PL_PP_INTERLEAVED:
        a = (p - 1) / (v * m);
        b = (p - 1) / (v * m + p - 1);
        break;
    case PL_PP_ZB_H1:
        if (micro_batches < stages) return -1;
        a = (p - 1) / (3 * m);
        b = (p - 1) / (3 * m + p - 1);
        break;
    default:
        return -1;
    }
    if (of_ideal) *of_ideal = a;
    if (of_total) *of_total = b;
    return 0;
}

int pl_pp_peak_formula(pl_pp_kind kind, int stages, int micro_batches, int chunks, int stage)
{
    switch (kind) {
    case PL_PP_NAIVE:
        return 1;
    case PL_PP_GPIPE:
        return micro_batches;
    case PL_PP_1F1B:
        return imin(stages - stage, micro_batches);
    case PL_PP_INTERLEAVED:
        return imin(pl_pp_warmup_interleaved(stages, micro_batches, chunks, stage) + 1,
                    micro_batches * chunks);
    case PL_PP_ZB_H1:
        return imin(stages, micro_batches);
    default:
        return -1;
    }
}
