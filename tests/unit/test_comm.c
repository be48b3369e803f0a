/*
 * test_comm.c — the local collective engine: every element of every
 * collective for N in {2, 3, 4, 8} and counts that N does not divide, exact
 * byte counts from the ledger, in-place forms, every type and op, split,
 * point to point with groups, and the checks NCCL does not make (bad
 * arguments, mismatched calls, deadlock). Ranks run on simulated devices.
 *
 * CUnit is not thread-safe: rank functions only record what they saw; the
 * test thread asserts.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paralab/collectives.h"
#include "paralab/comm.h"
#include "paralab/device.h"
#include "paralab/dist.h"
#include "paralab/world.h"
#include "kernels.h"
#include "paralab/trace.h"
#include "suites.h"
#ifdef PARALAB_SIMULATED_CUDA
#include "simt/simt.h"
#endif

enum { K_ALL_REDUCE, K_BROADCAST, K_REDUCE, K_ALL_GATHER, K_REDUCE_SCATTER, K_ALL_TO_ALL };

typedef struct {
    int kind;
    size_t count; /* all_gather: sendcount; reduce_scatter: recvcount; all_to_all: per block */
    pl_dtype type;
    pl_redop op;
    int root;
    int inplace;
    size_t chunk; /* the local engine's chunk in bytes (0: its default) */
    /* results, per rank */
    pl_ledger ledger[8];
    pl_comm_result result[8];
    char msg[8][1024];
} coll_case;

/* A value that keeps every sum, product and average exact in every type. */
static double value(int rank, size_t i, pl_redop op)
{
    if (op == PL_PROD) return (double)((i + (size_t)rank) % 2 + 1);
    return (double)((i * 7 + (size_t)rank * 3) % 11 + 1);
}

static double get(const void *p, pl_dtype t, size_t i)
{
    switch (t) {
    case PL_FLOAT32:
        return ((const float *)p)[i];
    case PL_FLOAT64:
        return ((const double *)p)[i];
    case PL_INT32:
        return ((const int32_t *)p)[i];
    default:
        return (double)((const int64_t *)p)[i];
    }
}

static void set(void *p, pl_dtype t, size_t i, double v)
{
    switch (t) {
    case PL_FLOAT32:
        ((float *)p)[i] = (float)v;
        break;
    case PL_FLOAT64:
        ((double *)p)[i] = v;
        break;
    case PL_INT32:
        ((int32_t *)p)[i] = (int32_t)v;
        break;
    default:
        ((int64_t *)p)[i] = (int64_t)v;
    }
}

/* The reduction of element i over ranks, as the type computes it. */
static double reduced(int n, size_t i, pl_dtype t, pl_redop op)
{
    double acc = value(0, i, op);
    for (int r = 1; r < n; r++) {
        double v = value(r, i, op);
        acc = op == PL_PROD  ? acc * v
              : op == PL_MAX ? (v > acc ? v : acc)
              : op == PL_MIN ? (v < acc ? v : acc)
                             : acc + v;
    }
    if (op == PL_AVG) {
        if (t == PL_FLOAT32) return (double)((float)acc / (float)n);
        if (t == PL_FLOAT64) return acc / n;
        return (double)((int64_t)acc / n);
    }
    return acc;
}

static int run_collective(pl_rank *r)
{
    coll_case *k = r->arg;
    int n = r->size, me = r->rank;
    size_t es = pl_dtype_size(k->type), sn = k->count, rn = k->count;
    if (k->kind == K_ALL_GATHER) rn = k->count * (size_t)n;
    if (k->kind == K_REDUCE_SCATTER) sn = k->count * (size_t)n;
    if (k->kind == K_ALL_TO_ALL) sn = rn = k->count * (size_t)n;
    size_t big = sn > rn ? sn : rn;
    char *hs = malloc(big * es + 1), *hr = malloc(big * es + 1);
    void *ds = NULL, *dr = NULL;
    if (cudaMalloc(&dr, big * es + 1) || cudaMalloc(&ds, big * es + 1)) {
        snprintf(r->error, sizeof r->error, "cudaMalloc failed");
        return 1;
    }
    /* send data: block j of all_to_all / reduce_scatter carries (rank, j) */
    for (size_t i = 0; i < sn; i++) set(hs, k->type, i, value(me, i, k->op));
    /* on the rank's own (non-blocking) stream: the legacy stream's work is
     * not ordered with it */
    cudaMemcpy(ds, hs, sn * es, cudaMemcpyHostToDevice);
    cudaMemsetAsync(dr, 0xff, big * es + 1, r->stream);
    void *send = ds, *recv = dr;
    if (k->inplace) {
        /* the in-place forms of NCCL's documentation */
        if (k->kind == K_ALL_GATHER) {
            recv = ds;
            send = (char *)ds + (size_t)me * k->count * es;
            cudaMemcpyAsync(send, hs, k->count * es, cudaMemcpyHostToDevice, r->stream);
        } else if (k->kind == K_REDUCE_SCATTER) {
            recv = (char *)ds + (size_t)me * k->count * es;
        } else
            recv = ds;
    }
    pl_comm_result res;
    switch (k->kind) {
    case K_ALL_REDUCE:
        res = pl_all_reduce(r->comm, send, recv, k->count, k->type, k->op, r->stream);
        break;
    case K_BROADCAST:
        res = pl_broadcast(r->comm, send, recv, k->count, k->type, k->root, r->stream);
        break;
    case K_REDUCE:
        res = pl_reduce(r->comm, send, recv, k->count, k->type, k->op, k->root, r->stream);
        break;
    case K_ALL_GATHER:
        res = pl_all_gather(r->comm, send, recv, k->count, k->type, r->stream);
        break;
    case K_REDUCE_SCATTER:
        res = pl_reduce_scatter(r->comm, send, recv, k->count, k->type, k->op, r->stream);
        break;
    default:
        res = pl_all_to_all(r->comm, send, recv, k->count, k->type, r->stream);
    }
    k->result[me] = res;
    snprintf(k->msg[me], sizeof k->msg[me], "%s", pl_comm_last_error(r->comm));
    if (res) {
        cudaFree(ds);
        cudaFree(dr);
        free(hs);
        free(hr);
        return 0; /* the test judges the error */
    }
    cudaError_t e = cudaStreamSynchronize(r->stream);
    size_t out = k->kind == K_REDUCE_SCATTER ? k->count : rn;
    if (!e) e = cudaMemcpy(hr, recv, out * es, cudaMemcpyDeviceToHost);
    int bad = e != cudaSuccess;
    if (bad) snprintf(r->error, sizeof r->error, "CUDA: %s", cudaGetErrorName(e));
    int check = !(k->kind == K_REDUCE && me != k->root);
    for (size_t i = 0; check && !bad && i < out; i++) {
        double want;
        switch (k->kind) {
        case K_ALL_REDUCE:
        case K_REDUCE:
            want = reduced(n, i, k->type, k->op);
            break;
        case K_BROADCAST:
            want = value(k->root, i, k->op);
            break;
        case K_ALL_GATHER:
            want = value((int)(i / k->count), i % k->count, k->op);
            break;
        case K_REDUCE_SCATTER:
            want = reduced(n, (size_t)me * k->count + i, k->type, k->op);
            break;
        default: /* all_to_all: block j came from rank j's block me */
            want = value((int)(i / k->count), (size_t)me * k->count + i % k->count, k->op);
        }
        double got = get(hr, k->type, i);
        if (got != want) {
            snprintf(r->error, sizeof r->error, "recv[%zu] = %g but expected %g", i, got, want);
            bad = 1;
        }
    }
    k->ledger[me] = pl_comm_ledger(r->comm);
    cudaFree(ds);
    cudaFree(dr);
    free(hs);
    free(hr);
    return bad;
}

static int run(coll_case *k, int n, double timeout, char *err, size_t cap)
{
    pl_world_config cfg = {
        .n = n, .comm_timeout_s = timeout, .comm = PL_COMM_LOCAL, .comm_chunk_bytes = k->chunk};
    return pl_world_run_config(&cfg, run_collective, k, err, cap);
}

#define CHECK_RUN(k, n)                                                                            \
    do {                                                                                           \
        char err_[1200];                                                                           \
        int rc_ = run((k), (n), 30, err_, sizeof err_);                                            \
        if (rc_)                                                                                   \
            fprintf(stderr, "  %s:%d: N=%d count=%zu kind=%d: %s\n", __FILE__, __LINE__, (n),      \
                    (k)->count, (k)->kind, err_);                                                  \
        CU_ASSERT_EQUAL(rc_, 0);                                                                   \
    } while (0)

static const int sizes_n[] = {2, 3, 4, 8};

static void test_all_reduce_every_element(void)
{
    for (int a = 0; a < 4; a++) {
        int n = sizes_n[a];
        size_t counts[] = {0, 1, (size_t)n - 1, 1000, (1u << 20) + 3};
        for (int b = 0; b < 5; b++)
            for (int inplace = 0; inplace <= (b == 3); inplace++) {
                coll_case k = {.kind = K_ALL_REDUCE,
                               .count = counts[b],
                               .type = PL_FLOAT32,
                               .op = PL_SUM,
                               .inplace = inplace};
                CHECK_RUN(&k, n);
                /* the ring's volume: every segment travels N-1 times in each half */
                uint64_t total = 0;
                for (int r = 0; r < n; r++) total += k.ledger[r].bytes_sent;
                CU_ASSERT_EQUAL(total, 2ull * (uint64_t)(n - 1) * counts[b] * 4);
                if (counts[b] % (size_t)n == 0)
                    for (int r = 0; r < n; r++) {
                        CU_ASSERT_EQUAL(k.ledger[r].bytes_sent,
                                        2ull * (uint64_t)(n - 1) * (counts[b] / (size_t)n) * 4);
                        CU_ASSERT_EQUAL(k.ledger[r].bytes_received, k.ledger[r].bytes_sent);
                    }
                if (counts[b] >= (size_t)n) /* no segment is empty: 2(N-1) transfers */
                    for (int r = 0; r < n; r++)
                        CU_ASSERT_EQUAL(k.ledger[r].messages_sent, 2ull * (uint64_t)(n - 1));
            }
    }
}

/* Chunks of c elements over a segment of len: the messages one segment
 * makes (an empty chunk moves nothing and is no message). */
static uint64_t chunk_msgs(size_t len, size_t c) { return (len + c - 1) / c; }

/* Chunked and pipelined: every element, for every collective, with chunks
 * small enough that the FIFO of 8 slots wraps many times; the ledger's
 * bytes are the same as unchunked, and every chunk is one message. */
static void test_chunked_every_element(void)
{
    const size_t chunk = 64; /* bytes: 16 floats */
    for (int a = 0; a < 4; a++) {
        int n = sizes_n[a];
        size_t counts[] = {1, (size_t)n - 1, 1000, 4099};
        for (int b = 0; b < 4; b++) {
            size_t count = counts[b];
            coll_case k = {.kind = K_ALL_REDUCE,
                           .count = count,
                           .type = PL_FLOAT32,
                           .op = PL_SUM,
                           .chunk = chunk};
            CHECK_RUN(&k, n);
            /* rank r sends its successor every segment but r in the
             * reduce-scatter and every segment but r+1 in the all-gather,
             * chunk by chunk */
            for (int r = 0; r < n; r++) {
                uint64_t bytes = 0, msgs = 0;
                for (int seg = 0; seg < n; seg++) {
                    size_t len =
                        count * (size_t)(seg + 1) / (size_t)n - count * (size_t)seg / (size_t)n;
                    int times = (seg != r) + (seg != (r + 1) % n);
                    bytes += (uint64_t)times * len * 4;
                    msgs += (uint64_t)times * chunk_msgs(len, chunk / 4);
                }
                CU_ASSERT_EQUAL(k.ledger[r].bytes_sent, bytes);
                CU_ASSERT_EQUAL(k.ledger[r].messages_sent, msgs);
            }
            int kinds[] = {K_BROADCAST, K_REDUCE, K_ALL_GATHER, K_REDUCE_SCATTER};
            for (int q = 0; q < 4; q++) {
                coll_case j = {.kind = kinds[q],
                               .count = count,
                               .type = PL_INT32,
                               .op = PL_MAX,
                               .root = n - 1,
                               .chunk = chunk,
                               .inplace = (int)(count & 1)};
                CHECK_RUN(&j, n);
                /* chains: every rank but the last of the chain sends it all, chunk by chunk */
                if (kinds[q] == K_BROADCAST || kinds[q] == K_REDUCE)
                    for (int r = 0; r < n; r++) {
                        int last = kinds[q] == K_BROADCAST ? (j.root + n - 1) % n : j.root;
                        CU_ASSERT_EQUAL(j.ledger[r].bytes_sent, r == last ? 0 : count * 4);
                        CU_ASSERT_EQUAL(j.ledger[r].messages_sent,
                                        r == last ? 0 : chunk_msgs(count, chunk / 4));
                    }
            }
        }
    }
}

#ifdef PARALAB_SIMULATED_CUDA
typedef struct {
    size_t count;
    double modeled[4];
} bcast_time;

/* A broadcast, timed on the modeled clock from the call to the end of the
 * rank's stream. */
static int run_bcast_timed(pl_rank *r)
{
    bcast_time *b = r->arg;
    float *d;
    if (cudaMalloc((void **)&d, b->count * 4)) return 1;
    cudaMemsetAsync(d, 0, b->count * 4, r->stream);
    if (pl_comm_barrier(r->comm)) return 1;
    cudaStreamSynchronize(r->stream);
    double t0 = simtStreamModeledTime(r->stream);
    if (pl_broadcast(r->comm, d, d, b->count, PL_FLOAT32, 0, r->stream)) return 1;
    cudaStreamSynchronize(r->stream);
    b->modeled[r->rank] = simtStreamModeledTime(r->stream) - t0;
    cudaFree(d);
    return 0;
}

/* SIM ONLY: pipelining, on the modeled clock. A broadcast of S bytes down
 * a chain of 4 ranks over peer links (latency a, bandwidth b) takes
 * 3 (a + S/b) unchunked; cut into C = 16 chunks the last rank has it after
 * 3 + 15 chunk copies, 18 (a + S/16/b). */
static void test_chunks_pipeline_broadcast(void)
{
    enum { COUNT = 4u << 20 }; /* floats: 16 MiB */
    bcast_time whole = {.count = COUNT}, cut = {.count = COUNT};
    char err[1200];
    pl_world_config cfg = {.n = 4, .comm = PL_COMM_LOCAL, .comm_chunk_bytes = 64u << 20};
    CU_ASSERT_EQUAL_FATAL(pl_world_run_config(&cfg, run_bcast_timed, &whole, err, sizeof err), 0);
    cfg.comm_chunk_bytes = COUNT * 4 / 16;
    CU_ASSERT_EQUAL_FATAL(pl_world_run_config(&cfg, run_bcast_timed, &cut, err, sizeof err), 0);
    const simt_preset *h = simtCurrentPreset();
    double S = COUNT * 4.0, a = h->peer_latency, b = h->peer_bw;
    double want_whole = 3 * (a + S / b), want_cut = 18 * (a + S / 16 / b);
    /* the last rank of the chain (3) finishes last; the memset before and
     * the stream's own latencies are outside the window */
    CU_ASSERT_DOUBLE_EQUAL(whole.modeled[3], want_whole, want_whole * 0.02);
    CU_ASSERT_DOUBLE_EQUAL(cut.modeled[3], want_cut, want_cut * 0.02);
    if (fabs(cut.modeled[3] - want_cut) > want_cut * 0.02 ||
        fabs(whole.modeled[3] - want_whole) > want_whole * 0.02)
        fprintf(stderr, "  modeled: whole %.2f us (want %.2f), chunked %.2f us (want %.2f)\n",
                whole.modeled[3] * 1e6, want_whole * 1e6, cut.modeled[3] * 1e6, want_cut * 1e6);
}
#endif

static void test_types_and_ops(void)
{
    for (int t = 0; t < PL_NUM_DTYPES; t++)
        for (int op = 0; op < PL_NUM_OPS; op++) {
            coll_case k = {
                .kind = K_ALL_REDUCE, .count = 1001, .type = (pl_dtype)t, .op = (pl_redop)op};
            CHECK_RUN(&k, 3);
            coll_case rs = {
                .kind = K_REDUCE_SCATTER, .count = 77, .type = (pl_dtype)t, .op = (pl_redop)op};
            CHECK_RUN(&rs, 3);
            coll_case rd = {
                .kind = K_REDUCE, .count = 500, .type = (pl_dtype)t, .op = (pl_redop)op, .root = 2};
            CHECK_RUN(&rd, 3);
        }
}

static void test_broadcast_and_reduce_roots(void)
{
    for (int a = 0; a < 4; a++) {
        int n = sizes_n[a];
        for (int root = 0; root < n; root++) {
            coll_case b = {.kind = K_BROADCAST,
                           .count = 1000,
                           .type = PL_INT32,
                           .root = root,
                           .inplace = root % 2};
            CHECK_RUN(&b, n);
            coll_case r = {.kind = K_REDUCE,
                           .count = 999,
                           .type = PL_FLOAT32,
                           .op = PL_SUM,
                           .root = root,
                           .inplace = root % 2};
            CHECK_RUN(&r, n);
        }
        /* broadcast: each byte of the array reaches each non-root once */
        coll_case b = {.kind = K_BROADCAST, .count = 1000, .type = PL_FLOAT64, .root = 1 % n};
        CHECK_RUN(&b, n);
        uint64_t total = 0;
        for (int r = 0; r < n; r++) total += b.ledger[r].bytes_received;
        CU_ASSERT_EQUAL(total, (uint64_t)(n - 1) * 1000 * 8);
        CU_ASSERT_EQUAL(b.ledger[1 % n].bytes_received, 0);
    }
}

static void test_gather_scatter_all_to_all(void)
{
    for (int a = 0; a < 4; a++) {
        int n = sizes_n[a];
        size_t counts[] = {0, 1, (size_t)n - 1, 1000};
        for (int b = 0; b < 4; b++)
            for (int inplace = 0; inplace <= 1; inplace++) {
                coll_case g = {.kind = K_ALL_GATHER,
                               .count = counts[b],
                               .type = PL_FLOAT32,
                               .inplace = inplace};
                CHECK_RUN(&g, n);
                coll_case rs = {.kind = K_REDUCE_SCATTER,
                                .count = counts[b],
                                .type = PL_FLOAT32,
                                .op = PL_SUM,
                                .inplace = inplace};
                CHECK_RUN(&rs, n);
                /* (N-1)/N of the whole array (N * count elements) per rank */
                for (int r = 0; r < n; r++) {
                    CU_ASSERT_EQUAL(g.ledger[r].bytes_sent, (uint64_t)(n - 1) * counts[b] * 4);
                    CU_ASSERT_EQUAL(rs.ledger[r].bytes_sent, (uint64_t)(n - 1) * counts[b] * 4);
                }
            }
        coll_case x = {.kind = K_ALL_TO_ALL, .count = 333, .type = PL_INT64};
        CHECK_RUN(&x, n);
        for (int r = 0; r < n; r++)
            CU_ASSERT_EQUAL(x.ledger[r].bytes_sent, (uint64_t)(n - 1) * 333 * 8);
    }
}

/* ---- the checks NCCL does not make ---------------------------------------- */

typedef struct {
    int mode; /* 0 mismatch, 1 bad root, 2 NULL buffer, 3 bad type, 4 bad op, 5 all_to_all in
               * place; 6, 7, 8 mismatched root, op, kind */
    pl_comm_result result[8];
    char msg[8][1024];
} bad_case;

static int run_bad(pl_rank *r)
{
    bad_case *b = r->arg;
    float *d;
    cudaMalloc((void **)&d, 4096 * sizeof(float));
    pl_comm_result res;
    int odd = r->rank == 2;
    switch (b->mode) {
    case 0:
        res = odd ? pl_all_gather(r->comm, d, d, 256, PL_FLOAT32, r->stream)
                  : pl_all_reduce(r->comm, d, d, 1024, PL_FLOAT32, PL_SUM, r->stream);
        break;
    case 1:
        res = pl_broadcast(r->comm, d, d, 16, PL_FLOAT32, odd ? 4 : 0, r->stream);
        break;
    case 2:
        res = pl_all_reduce(r->comm, odd ? NULL : d, d, 16, PL_FLOAT32, PL_SUM, r->stream);
        break;
    case 3:
        res = pl_all_reduce(r->comm, d, d, 16, odd ? (pl_dtype)9 : PL_FLOAT32, PL_SUM, r->stream);
        break;
    case 4:
        res = pl_all_reduce(r->comm, d, d, 16, PL_FLOAT32, odd ? (pl_redop)7 : PL_SUM, r->stream);
        break;
    case 5: /* all_to_all has no in-place form */
        res = pl_all_to_all(r->comm, d, odd ? d : d + 2048, 16, PL_FLOAT32, r->stream);
        break;
    case 6:
        res = pl_broadcast(r->comm, d, d, 16, PL_FLOAT32, odd ? 1 : 0, r->stream);
        break;
    case 7:
        res = pl_reduce(r->comm, d, d, 16, PL_FLOAT32, odd ? PL_MAX : PL_SUM, 0, r->stream);
        break;
    default:
        res = odd ? pl_all_to_all(r->comm, d, d + 2048, 16, PL_FLOAT32, r->stream)
                  : pl_reduce_scatter(r->comm, d, d + 2048, 16, PL_FLOAT32, PL_SUM, r->stream);
    }
    b->result[r->rank] = res;
    snprintf(b->msg[r->rank], sizeof b->msg[0], "%s", pl_comm_last_error(r->comm));
    cudaFree(d);
    return 0;
}

static void has(const char *text, const char *needle)
{
    if (!strstr(text, needle)) fprintf(stderr, "  \"%s\"\n  lacks \"%s\"\n", text, needle);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, needle));
}

/* Each collective's call is named with the arguments it takes (its op,
 * its root). */
static void test_mismatch(void)
{
    static const struct {
        int mode;
        const char *want;
    } t[] = {
        {0, "the ranks disagree about call #1: ranks 0,1,3 all_reduce(count=1024, float, sum); "
            "rank 2 all_gather(count=256, float)"},
        {6, "the ranks disagree about call #1: ranks 0,1,3 broadcast(count=16, float, root=0); "
            "rank 2 broadcast(count=16, float, root=1)"},
        {7, "the ranks disagree about call #1: ranks 0,1,3 reduce(count=16, float, sum, "
            "root=0); rank 2 reduce(count=16, float, max, root=0)"},
        {8, "the ranks disagree about call #1: ranks 0,1,3 reduce_scatter(count=16, float, "
            "sum); rank 2 all_to_all(count=16, float)"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        bad_case b = {.mode = t[i].mode};
        char err[1200];
        CU_ASSERT_EQUAL(pl_world_run(4, NULL, 10, run_bad, &b, err, sizeof err), 0);
        for (int r = 0; r < 4; r++) {
            CU_ASSERT_EQUAL(b.result[r], PL_COMM_MISMATCH);
            has(b.msg[r], t[i].want);
        }
    }
}

/* Calls back to back: a rank that has left a call's meeting posts the next
 * call while the others still read this one (the posts alternate by the
 * call's parity, the FIFO counts carry the call's number). 4 ranks, 600
 * calls of every kind and size 0..3 elements, one rank slowed now and then;
 * every result exact; then a mismatch at an even call number names it. */
typedef struct {
    int wrong[4], calls[4];
    pl_comm_result last[4];
    char msg[4][1024];
} b2b_case;

static int run_back_to_back(pl_rank *r)
{
    b2b_case *b = r->arg;
    int me = r->rank;
    float *d, h[16];
    if (cudaMalloc((void **)&d, 16 * sizeof *d)) return 1;
    for (int i = 0; i < 600; i++) {
        size_t n = (size_t)(i % 4);
        if (i % 97 == me * 13) usleep(2000); /* a rank late now and then */
        for (size_t k = 0; k < 16; k++) h[k] = (float)(me + 1) * (float)(k + 1);
        cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
        pl_comm_result e;
        float want = 0;
        switch (i % 3) {
        case 0: /* 1+2+3+4 = 10 times (k+1) */
            e = pl_all_reduce(r->comm, d, d, n, PL_FLOAT32, PL_SUM, r->stream);
            want = 10;
            break;
        case 1: /* root's (root+1) times (k+1) */
            e = pl_broadcast(r->comm, d, d, n, PL_FLOAT32, i % 4, r->stream);
            want = (float)(i % 4 + 1);
            break;
        default:
            e = pl_comm_barrier(r->comm);
            n = 0;
        }
        if (e) {
            b->last[me] = e;
            snprintf(b->msg[me], sizeof b->msg[0], "call %d: %s", i, pl_comm_last_error(r->comm));
            break;
        }
        cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
        for (size_t k = 0; k < n; k++) b->wrong[me] += h[k] != want * (float)(k + 1);
        b->calls[me]++;
    }
    /* call #601 (odd) agreed above; call #602 (even): rank 3 disagrees */
    pl_comm_result e = pl_all_reduce(r->comm, d, d, 4, PL_FLOAT32, PL_SUM, r->stream);
    if (!e)
        e = me == 3 ? pl_all_gather(r->comm, d, d, 1, PL_FLOAT32, r->stream)
                    : pl_all_reduce(r->comm, d, d, 4, PL_FLOAT32, PL_SUM, r->stream);
    if (!b->last[me]) {
        b->last[me] = e;
        snprintf(b->msg[me], sizeof b->msg[0], "%s", pl_comm_last_error(r->comm));
    }
    cudaFree(d);
    return 0;
}

static void test_back_to_back(void)
{
    b2b_case b = {0};
    char err[1200];
    CU_ASSERT_EQUAL(pl_world_run(4, NULL, 30, run_back_to_back, &b, err, sizeof err), 0);
    for (int r = 0; r < 4; r++) {
        CU_ASSERT_EQUAL(b.calls[r], 600);
        CU_ASSERT_EQUAL(b.wrong[r], 0);
        CU_ASSERT_EQUAL(b.last[r], PL_COMM_MISMATCH);
        has(b.msg[r], "the ranks disagree about call #602: ranks 0,1,2 all_reduce(count=4, "
                      "float, sum); rank 3 all_gather(count=1, float)");
    }
}

static void test_bad_arguments(void)
{
    static const char *want[] = {NULL,
                                 "broadcast: root 4 is not a rank (allowed: 0..3)",
                                 "all_reduce: send buffer is NULL with count 16 > 0",
                                 "all_reduce: type 9 is not a pl_dtype (allowed: 0..3",
                                 "all_reduce: op 7 is not a pl_redop (allowed: 0..4",
                                 "all_to_all: send and receive buffers must differ (no in-place "
                                 "form)"};
    for (int mode = 1; mode <= 5; mode++) {
        bad_case b = {.mode = mode};
        char err[1200];
        CU_ASSERT_EQUAL(pl_world_run(4, NULL, 10, run_bad, &b, err, sizeof err), 0);
        CU_ASSERT_EQUAL(b.result[2], PL_COMM_INVALID_ARGUMENT);
        has(b.msg[2], want[mode]);
        /* the others are told, rather than left waiting */
        for (int r = 0; r < 4; r++)
            if (r != 2) {
                CU_ASSERT_EQUAL(b.result[r], PL_COMM_MISMATCH);
                has(b.msg[r], "rank 2 ");
                has(b.msg[r], "[invalid arguments]");
            }
    }
}

/* ---- point to point ------------------------------------------------------------ */

typedef struct {
    int grouped;
    pl_comm_result result[8];
    char msg[8][1024];
    int got[8];
} p2p_case;

/* Each rank sends its rank number to the next and receives from the previous. */
static int run_shift(pl_rank *r)
{
    p2p_case *p = r->arg;
    int n = r->size, me = r->rank, *ds, *dr;
    cudaMalloc((void **)&ds, sizeof(int));
    cudaMalloc((void **)&dr, sizeof(int));
    cudaMemcpy(ds, &me, sizeof me, cudaMemcpyHostToDevice);
    pl_comm_result res;
    if (p->grouped) {
        pl_group_start();
        pl_send(r->comm, ds, 1, PL_INT32, (me + 1) % n, r->stream);
        pl_recv(r->comm, dr, 1, PL_INT32, (me + n - 1) % n, r->stream);
        res = pl_group_end();
    } else { /* everyone sends first: a deadlock */
        res = pl_send(r->comm, ds, 1, PL_INT32, (me + 1) % n, r->stream);
        if (!res) res = pl_recv(r->comm, dr, 1, PL_INT32, (me + n - 1) % n, r->stream);
    }
    p->result[me] = res;
    snprintf(p->msg[me], sizeof p->msg[0], "%s", pl_comm_last_error(r->comm));
    if (!res) {
        cudaStreamSynchronize(r->stream);
        cudaMemcpy(&p->got[me], dr, sizeof(int), cudaMemcpyDeviceToHost);
    }
    cudaFree(ds);
    cudaFree(dr);
    return 0;
}

static void test_send_recv_group(void)
{
    for (int a = 0; a < 4; a++) {
        int n = sizes_n[a];
        p2p_case p = {.grouped = 1};
        char err[1200];
        CU_ASSERT_EQUAL(pl_world_run(n, NULL, 10, run_shift, &p, err, sizeof err), 0);
        for (int r = 0; r < n; r++) {
            CU_ASSERT_EQUAL(p.result[r], PL_COMM_OK);
            CU_ASSERT_EQUAL(p.got[r], (r + n - 1) % n);
        }
    }
}

static void test_send_deadlock_reported(void)
{
    p2p_case p = {.grouped = 0};
    char err[1200];
    CU_ASSERT_EQUAL(pl_world_run(2, NULL, 0.5, run_shift, &p, err, sizeof err), 0);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL(p.result[r], PL_COMM_TIMEOUT);
        has(p.msg[r], "deadlock: no progress for");
        has(p.msg[r], "rank 0 waits in send to rank 1 (1 int32) for the matching receive");
        has(p.msg[r], "rank 1 waits in send to rank 0");
        has(p.msg[r], "Ranks 0 and 1 both send before they receive: put each exchange in "
                      "pl_group_start()/pl_group_end()");
    }
}

/* Eager sends: every rank sends to the next before anyone receives (a
 * barrier between), outside a group (what deadlocks with pl_send, above);
 * rank 0 sends three more to rank 1 before rank 1 takes any. Also: the
 * sender's stream does not wait for the receiver until the send is reaped
 * (the modeled clock). */
typedef struct {
    pl_comm_result result[8], waited[8];
    char msg[8][1024];
    int got[8], extra[3];
    pl_ledger ledger[8];
    double before[8], after_send[8], after_wait[8], receiver_busy_until;
    int never_received; /* rank 0 sends once more, which nobody receives */
} eager_case;

static int run_eager(pl_rank *r)
{
    eager_case *p = r->arg;
    int n = r->size, me = r->rank, *ds, *dr, h[4] = {me, 10, 11, 12};
    cudaMalloc((void **)&ds, 4 * sizeof(int));
    cudaMalloc((void **)&dr, 4 * sizeof(int));
    cudaMemcpy(ds, h, sizeof h, cudaMemcpyHostToDevice);
    cudaStreamSynchronize(r->stream);
    pl_comm_result res = PL_COMM_OK;
    if (me == 1 && !p->never_received) { /* busy before it receives: 64 MiB set */
        void *big;
        cudaMalloc(&big, 64 << 20);
        cudaMemsetAsync(big, 0, 64 << 20, r->stream);
        p->receiver_busy_until = pl_device_stream_now(r->stream);
        cudaStreamSynchronize(r->stream);
        cudaFree(big);
    }
    p->before[me] = pl_device_stream_now(r->stream);
    if (!p->never_received) {
        res = pl_send_eager(r->comm, ds, 1, PL_INT32, (me + 1) % n, r->stream);
        for (int k = 1; k <= 3 && me == 0 && !res; k++)
            res = pl_send_eager(r->comm, ds + k, 1, PL_INT32, 1, r->stream);
        p->after_send[me] = pl_device_stream_now(r->stream);
        if (!res) res = pl_comm_barrier(r->comm); /* nobody receives before every send is made */
        if (!res) res = pl_recv(r->comm, dr, 1, PL_INT32, (me + n - 1) % n, r->stream);
        for (int k = 1; k <= 3 && me == 1 && !res; k++)
            res = pl_recv(r->comm, dr + k, 1, PL_INT32, 0, r->stream);
    } else if (me == 0)
        res = pl_send_eager(r->comm, ds, 1, PL_INT32, 1, r->stream);
    p->result[me] = res;
    p->waited[me] = pl_comm_wait_sends(r->comm);
    p->after_wait[me] = pl_device_stream_now(r->stream);
    snprintf(p->msg[me], sizeof p->msg[0], "%s", pl_comm_last_error(r->comm));
    p->ledger[me] = pl_comm_ledger(r->comm);
    if (!res && !p->never_received) {
        cudaStreamSynchronize(r->stream);
        cudaMemcpy(h, dr, sizeof h, cudaMemcpyDeviceToHost);
        p->got[me] = h[0];
        if (me == 1) memcpy(p->extra, h + 1, sizeof p->extra);
    }
    cudaFree(ds);
    cudaFree(dr);
    return 0;
}

static void test_send_eager(void)
{
    for (int a = 0; a < 4; a++) {
        int n = sizes_n[a];
        if (n < 2) continue;
        eager_case p = {0};
        char err[1200];
        CU_ASSERT_EQUAL(pl_world_run(n, NULL, 10, run_eager, &p, err, sizeof err), 0);
        for (int r = 0; r < n; r++) {
            CU_ASSERT_EQUAL(p.result[r], PL_COMM_OK);
            CU_ASSERT_EQUAL(p.waited[r], PL_COMM_OK);
            CU_ASSERT_EQUAL(p.got[r], (r + n - 1) % n);
            CU_ASSERT_EQUAL(p.ledger[r].calls[PL_CALL_SEND], r == 0 ? 4u : 1u);
            CU_ASSERT_EQUAL(p.ledger[r].bytes_sent, r == 0 ? 16u : 4u);
        }
        CU_ASSERT_EQUAL(p.extra[0], 10);
        CU_ASSERT_EQUAL(p.extra[1], 11);
        CU_ASSERT_EQUAL(p.extra[2], 12);
        CU_ASSERT_EQUAL(p.ledger[1].bytes_received, 16u);
#ifdef PARALAB_SIMULATED_CUDA
        /* rank 0's stream did not wait for busy rank 1 when it sent (it went on
         * long before rank 1's memset ended), only once the sends were reaped */
        CU_ASSERT(p.receiver_busy_until > p.before[0]);
        CU_ASSERT(p.after_send[0] < p.receiver_busy_until);
        CU_ASSERT(p.after_wait[0] >= p.receiver_busy_until);
#endif
    }
}

/* 300 messages back and forth between 2 ranks, 4 B to 8 KiB, plain and
 * eager sends: each sender sets its buffer to the round's byte, sends, and
 * at once overwrites it on its stream. Every fourth round the receiver's
 * stream is held (simulated GPUs: a kernel spins until the receiver lets it
 * go, which it does only once the sender has queued its overwrite), so the
 * receiver's copy comes late and only the sender's stream waiting for it
 * keeps the overwrite out. Every byte of every message is checked. (Each
 * rank reuses its last op and events, and a receive's `done` comes back to
 * its receiver: a reuse too early, or no wait, shows as 0xEE bytes.) */
enum { REUSE_ROUNDS = 300, REUSE_MAX = 2048 };
typedef struct {
    int bad[2], checked[2];
    pl_comm_result res[2];
} reuse_case;

static int run_reuse(pl_rank *r)
{
    reuse_case *p = r->arg;
    int me = r->rank, peer = 1 - me;
    static const size_t sizes[3] = {1, 300, REUSE_MAX};
    int32_t *buf = NULL;
    int *flag = NULL;
    unsigned char *host = malloc(REUSE_MAX * sizeof(int32_t));
    cudaMalloc((void **)&buf, REUSE_MAX * sizeof(int32_t));
    cudaMallocHost((void **)&flag, sizeof *flag);
    pl_comm_result res = host && buf && flag ? PL_COMM_OK : PL_COMM_SYSTEM_ERROR;
    for (int k = 0; k < REUSE_ROUNDS && !res; k++) {
        size_t n = sizes[k % 3], bytes = n * sizeof(int32_t);
        int value = 1 + k % 200;
#ifdef PARALAB_SIMULATED_CUDA
        int hold = k % 4 == 1;
#else
        int hold = 0;
#endif
        if (k % 2 == me) { /* the sender */
            cudaMemsetAsync(buf, value, bytes, r->stream);
            if (k % 5 == 0) {
                res = pl_send_eager(r->comm, buf, n, PL_INT32, peer, r->stream);
                if (!res) res = pl_comm_wait_sends(r->comm);
            } else
                res = pl_send(r->comm, buf, n, PL_INT32, peer, r->stream);
            cudaMemsetAsync(buf, 0xEE, bytes, r->stream);     /* at once, on its stream */
            if (hold && !res) res = pl_comm_barrier(r->comm); /* overwrite queued */
        } else {
            if (hold) {
                __atomic_store_n(flag, 0, __ATOMIC_SEQ_CST);
                if (tk_spin_until(flag, r->stream)) res = PL_COMM_CUDA_ERROR;
            }
            if (!res) res = pl_recv(r->comm, buf, n, PL_INT32, peer, r->stream);
            if (hold && !res) res = pl_comm_barrier(r->comm);
            if (hold) __atomic_store_n(flag, 1, __ATOMIC_SEQ_CST); /* let the copy run */
            if (!res && cudaMemcpyAsync(host, buf, bytes, cudaMemcpyDeviceToHost, r->stream))
                res = PL_COMM_CUDA_ERROR;
            cudaStreamSynchronize(r->stream);
            for (size_t b = 0; b < bytes && !res; b++) {
                p->checked[me]++;
                p->bad[me] += host[b] != (unsigned char)value;
            }
        }
    }
    cudaStreamSynchronize(r->stream);
    p->res[me] = res;
    free(host);
    cudaFree(buf);
    cudaFreeHost(flag);
    return 0;
}

static void test_send_recv_reuse(void)
{
    reuse_case p;
    memset(&p, 0, sizeof p);
    char err[1200];
    CU_ASSERT_EQUAL(pl_world_run(2, NULL, 30, run_reuse, &p, err, sizeof err), 0);
    /* bytes each rank received: 150 rounds, sizes 1, 300, 2048 ints in turn */
    int want[2] = {0, 0};
    for (int k = 0; k < REUSE_ROUNDS; k++)
        want[1 - k % 2] += (int)((k % 3 == 0 ? 1 : k % 3 == 1 ? 300 : REUSE_MAX) * 4);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL(p.res[r], PL_COMM_OK);
        CU_ASSERT_EQUAL(p.checked[r], want[r]);
        CU_ASSERT_EQUAL(p.bad[r], 0);
    }
}

static void test_send_eager_never_received(void)
{
    eager_case p = {.never_received = 1};
    char err[1200];
    CU_ASSERT_EQUAL(pl_world_run(2, NULL, 0.5, run_eager, &p, err, sizeof err), 0);
    CU_ASSERT_EQUAL(p.result[0], PL_COMM_OK); /* the send itself returns at once */
    CU_ASSERT_EQUAL(p.waited[0], PL_COMM_TIMEOUT);
    has(p.msg[0], "rank 0 waits in send to rank 1 (1 int32) for the matching receive");
}

/* The ledger counts each call by name: 1 all_reduce, 1 broadcast, a grouped
 * shift (1 send, 1 recv), 2 barriers; nothing else. */
typedef struct {
    pl_ledger ledger[8];
} calls_case;

static int run_calls(pl_rank *r)
{
    calls_case *k = r->arg;
    int n = r->size, me = r->rank, *d;
    cudaMalloc((void **)&d, 2 * sizeof(int));
    cudaMemset(d, 0, 2 * sizeof(int));
    pl_all_reduce(r->comm, d, d, 1, PL_INT32, PL_SUM, r->stream);
    pl_broadcast(r->comm, d, d, 1, PL_INT32, 0, r->stream);
    pl_group_start();
    pl_send(r->comm, d, 1, PL_INT32, (me + 1) % n, r->stream);
    pl_recv(r->comm, d + 1, 1, PL_INT32, (me + n - 1) % n, r->stream);
    pl_group_end();
    pl_comm_barrier(r->comm);
    pl_comm_barrier(r->comm);
    cudaStreamSynchronize(r->stream);
    k->ledger[me] = pl_comm_ledger(r->comm);
    cudaFree(d);
    return 0;
}

static void test_ledger_counts_calls(void)
{
    calls_case k;
    memset(&k, 0, sizeof k);
    char err[1200];
    CU_ASSERT_EQUAL(pl_world_run(3, NULL, 10, run_calls, &k, err, sizeof err), 0);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < PL_NUM_CALLS; c++) {
            uint64_t want = c == PL_CALL_ALL_REDUCE || c == PL_CALL_BROADCAST ||
                                    c == PL_CALL_SEND || c == PL_CALL_RECV
                                ? 1
                            : c == PL_CALL_BARRIER ? 2
                                                   : 0;
            CU_ASSERT_EQUAL(k.ledger[r].calls[c], want);
        }
    CU_ASSERT_STRING_EQUAL(pl_comm_call_name(PL_CALL_ALL_REDUCE), "pl_all_reduce");
    CU_ASSERT_STRING_EQUAL(pl_comm_call_name(PL_CALL_REDUCE_SCATTER), "pl_reduce_scatter");
    CU_ASSERT_STRING_EQUAL(pl_comm_call_name(PL_CALL_SEND), "pl_send");
    CU_ASSERT_STRING_EQUAL(pl_comm_call_name(PL_CALL_SPLIT), "pl_comm_split");
    CU_ASSERT_STRING_EQUAL(pl_comm_call_name(PL_NUM_CALLS), "?");
}

/* ---- split ---------------------------------------------------------------------- */

typedef struct {
    int new_rank[8], new_size[8];
    float sum[8];
    pl_comm_result result[8];
} split_case;

/* 8 ranks: colors r % 2, keys -r (reversed order); each group sums its ranks. */
static int run_split(pl_rank *r)
{
    split_case *s = r->arg;
    pl_comm *sub;
    int me = r->rank;
    pl_comm_result res = pl_comm_split(r->comm, me % 2, -me, &sub);
    s->result[me] = res;
    if (res) {
        snprintf(r->error, sizeof r->error, "%s", pl_comm_last_error(r->comm));
        return 1;
    }
    s->new_rank[me] = pl_comm_rank(sub);
    s->new_size[me] = pl_comm_size(sub);
    float *d, v = (float)me;
    cudaMalloc((void **)&d, sizeof v);
    cudaMemcpy(d, &v, sizeof v, cudaMemcpyHostToDevice);
    res = pl_all_reduce(sub, d, d, 1, PL_FLOAT32, PL_SUM, r->stream);
    if (res) {
        snprintf(r->error, sizeof r->error, "%s", pl_comm_last_error(sub));
        return 1;
    }
    cudaStreamSynchronize(r->stream);
    cudaMemcpy(&s->sum[me], d, sizeof v, cudaMemcpyDeviceToHost);
    cudaFree(d);
    return pl_comm_free(sub) != PL_COMM_OK;
}

static void test_split(void)
{
    split_case s;
    memset(&s, 0, sizeof s);
    char err[1200];
    int rc = pl_world_run(8, NULL, 10, run_split, &s, err, sizeof err);
    if (rc) fprintf(stderr, "  %s\n", err);
    CU_ASSERT_EQUAL(rc, 0);
    for (int r = 0; r < 8; r++) {
        CU_ASSERT_EQUAL(s.new_size[r], 4);
        CU_ASSERT_EQUAL(s.new_rank[r], 3 - r / 2); /* key -r: the highest rank comes first */
        CU_ASSERT_EQUAL(s.sum[r], r % 2 ? 1.0f + 3 + 5 + 7 : 0.0f + 2 + 4 + 6);
    }
}

/* A failing rank stops the world: the others do not wait for it. */
static int run_one_fails(pl_rank *r)
{
    if (r->rank == 1) {
        snprintf(r->error, sizeof r->error, "rank function gave up");
        return 1;
    }
    float *d;
    cudaMalloc((void **)&d, 64);
    pl_comm_result res = pl_all_reduce(r->comm, d, d, 16, PL_FLOAT32, PL_SUM, r->stream);
    cudaFree(d);
    if (res) snprintf(r->error, sizeof r->error, "%s", pl_comm_last_error(r->comm));
    return res != PL_COMM_ABORTED;
}

/* A rank fails while split communicators exist: the world still frees them
 * (LeakSanitizer checks it in the sanitizer build). */
static int run_fails_after_split(pl_rank *r)
{
    pl_comm *sub;
    if (pl_comm_split(r->comm, r->rank % 2, 0, &sub)) return 1;
    if (r->rank == 1) {
        snprintf(r->error, sizeof r->error, "gave up after the split");
        return 1;
    }
    float *d;
    cudaMalloc((void **)&d, 64);
    pl_comm_result res = pl_all_reduce(sub, d, d, 16, PL_FLOAT32, PL_SUM, r->stream);
    cudaFree(d);
    return res != PL_COMM_OK; /* aborted: returns without freeing sub */
}

static void test_failure_frees_splits(void)
{
    char err[1200];
    CU_ASSERT_NOT_EQUAL(pl_world_run(4, NULL, 30, run_fails_after_split, NULL, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(err, "rank 1: gave up after the split");
}

static void test_failure_stops_world(void)
{
    char err[1200];
    int rc = pl_world_run(4, NULL, 30, run_one_fails, NULL, err, sizeof err);
    CU_ASSERT_NOT_EQUAL(rc, 0);
    CU_ASSERT_STRING_EQUAL(err, "rank 1: rank function gave up");
}

/* ---- engines -------------------------------------------------------------------- */

typedef struct {
    const char *world[4], *split[4];
} engine_case;

static int run_engine_names(pl_rank *r)
{
    engine_case *e = r->arg;
    pl_comm *sub;
    e->world[r->rank] = pl_comm_engine_name(r->comm);
    if (pl_comm_split(r->comm, r->rank % 2, 0, &sub)) return 1;
    e->split[r->rank] = pl_comm_engine_name(sub);
    return pl_comm_free(sub) != PL_COMM_OK;
}

/* ---- the descriptors (paralab/collectives.h) ------------------------------ */

/* Every descriptor's sizes, bytes S, busbw factor and in-place rule for
 * n = 1, 2, 8, against numbers worked out by hand: a call of count 6 floats
 * (4 bytes), rank 3's block 3 x 6 x 4 = 72 bytes into a buffer. */
static void test_collective_descriptors(void)
{
    static const struct {
        pl_comm_call k;
        const char *name;
        int op, root;
        size_t send[3], recv[3]; /* elements, for n = 1, 2, 8 */
        uint64_t bytes[3];       /* S, for n = 1, 2, 8 */
        double factor[3];        /* busbw / algbw, for n = 1, 2, 8 */
        size_t count48[3];       /* the count argument over a whole array of 48 */
        pl_in_place_rule rule;
        int same, block; /* in place at rank 3: send == recv; this rank's block */
    } t[] = {
        {PL_CALL_ALL_REDUCE,
         "all_reduce",
         1,
         0,
         {6, 6, 6},
         {6, 6, 6},
         {24, 24, 24},
         {0.0, 1.0, 1.75},
         {48, 48, 48},
         PL_IN_PLACE_SAME,
         1,
         0},
        {PL_CALL_BROADCAST,
         "broadcast",
         0,
         1,
         {6, 6, 6},
         {6, 6, 6},
         {24, 24, 24},
         {1.0, 1.0, 1.0},
         {48, 48, 48},
         PL_IN_PLACE_SAME,
         1,
         0},
        {PL_CALL_REDUCE,
         "reduce",
         1,
         1,
         {6, 6, 6},
         {6, 6, 6},
         {24, 24, 24},
         {1.0, 1.0, 1.0},
         {48, 48, 48},
         PL_IN_PLACE_SAME,
         1,
         0},
        {PL_CALL_ALL_GATHER,
         "all_gather",
         0,
         0,
         {6, 6, 6},
         {6, 12, 48},
         {24, 48, 192},
         {0.0, 0.5, 0.875},
         {48, 24, 6},
         PL_IN_PLACE_RECV_BLOCK,
         0,
         1},
        {PL_CALL_REDUCE_SCATTER,
         "reduce_scatter",
         1,
         0,
         {6, 12, 48},
         {6, 6, 6},
         {24, 48, 192},
         {0.0, 0.5, 0.875},
         {48, 24, 6},
         PL_IN_PLACE_SEND_BLOCK,
         0,
         1},
        {PL_CALL_ALL_TO_ALL,
         "all_to_all",
         0,
         0,
         {6, 12, 48},
         {6, 12, 48},
         {24, 48, 192},
         {0.0, 0.5, 0.875},
         {48, 24, 6},
         PL_IN_PLACE_NEVER,
         1,
         0},
        {PL_CALL_SEND,
         "send",
         0,
         0,
         {6, 6, 6},
         {0, 0, 0},
         {24, 24, 24},
         {1.0, 1.0, 1.0},
         {48, 48, 48},
         PL_IN_PLACE_ONE_BUFFER,
         0,
         0},
        {PL_CALL_RECV,
         "recv",
         0,
         0,
         {0, 0, 0},
         {6, 6, 6},
         {24, 24, 24},
         {1.0, 1.0, 1.0},
         {48, 48, 48},
         PL_IN_PLACE_ONE_BUFFER,
         0,
         0},
    };
    static const int ns[3] = {1, 2, 8};
    static char buf[1024];
    CU_ASSERT_EQUAL(sizeof t / sizeof t[0], PL_NUM_COLLECTIVES);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        const pl_collective *d = pl_collective_of(t[i].k);
        CU_ASSERT_PTR_EQUAL(d, &pl_collectives[t[i].k]);
        if (!d) continue;
        CU_ASSERT_EQUAL(d->call, t[i].k);
        CU_ASSERT_STRING_EQUAL(d->name, t[i].name);
        CU_ASSERT_EQUAL(d->has_op, t[i].op);
        CU_ASSERT_EQUAL(d->has_root, t[i].root);
        CU_ASSERT_EQUAL(d->in_place, t[i].rule);
        for (int j = 0; j < 3; j++) {
            CU_ASSERT_EQUAL(pl_collective_send_count(d, 6, ns[j]), t[i].send[j]);
            CU_ASSERT_EQUAL(pl_collective_recv_count(d, 6, ns[j]), t[i].recv[j]);
            CU_ASSERT_EQUAL(pl_collective_bytes(d, 6, PL_FLOAT32, ns[j]), t[i].bytes[j]);
            CU_ASSERT_EQUAL(pl_collective_bytes(d, 6, PL_FLOAT64, ns[j]), 2 * t[i].bytes[j]);
            CU_ASSERT(pl_collective_busbw_factor(d, ns[j]) == t[i].factor[j]);
            CU_ASSERT_EQUAL(pl_collective_count(d, 48, ns[j]), t[i].count48[j]);
        }
        CU_ASSERT_EQUAL(pl_collective_in_place(d, buf, buf, 6, PL_FLOAT32, 3), t[i].same);
        int block = t[i].rule == PL_IN_PLACE_SEND_BLOCK
                        ? pl_collective_in_place(d, buf, buf + 72, 6, PL_FLOAT32, 3)
                        : pl_collective_in_place(d, buf + 72, buf, 6, PL_FLOAT32, 3);
        CU_ASSERT_EQUAL(block, t[i].block);
        /* a block that is not this rank's: not in place */
        CU_ASSERT_EQUAL(pl_collective_in_place(d, buf + 48, buf, 6, PL_FLOAT32, 3), 0);
        CU_ASSERT_EQUAL(pl_collective_in_place(d, buf, buf + 48, 6, PL_FLOAT32, 3), 0);
    }
    /* the buffers a rank must give: broadcast reads only the root's send
     * buffer, reduce writes only the root's receive buffer */
    const pl_collective *bc = &pl_collectives[PL_CALL_BROADCAST],
                        *rd = &pl_collectives[PL_CALL_REDUCE];
    CU_ASSERT_EQUAL(pl_collective_needs_send(bc, 1, 0), 0);
    CU_ASSERT_EQUAL(pl_collective_needs_send(bc, 0, 0), 1);
    CU_ASSERT_EQUAL(pl_collective_needs_recv(bc, 1, 0), 1);
    CU_ASSERT_EQUAL(pl_collective_needs_send(rd, 1, 0), 1);
    CU_ASSERT_EQUAL(pl_collective_needs_recv(rd, 1, 0), 0);
    CU_ASSERT_EQUAL(pl_collective_needs_recv(rd, 0, 0), 1);
    CU_ASSERT_EQUAL(pl_collective_needs_recv(&pl_collectives[PL_CALL_SEND], 0, -1), 0);
    CU_ASSERT_EQUAL(pl_collective_needs_send(&pl_collectives[PL_CALL_RECV], 0, -1), 0);
    CU_ASSERT_EQUAL(pl_collective_needs_send(&pl_collectives[PL_CALL_ALL_TO_ALL], 5, 0), 1);
    /* no descriptor: calls that move no data, and a value that is no call */
    CU_ASSERT_PTR_NULL(pl_collective_of(PL_CALL_BARRIER));
    CU_ASSERT_PTR_NULL(pl_collective_of(PL_CALL_SPLIT));
    CU_ASSERT_PTR_NULL(pl_collective_of((pl_comm_call)99));
    CU_ASSERT_PTR_NULL(pl_collective_of((pl_comm_call)-1));
    /* the factors are nccl-tests' expressions to the last bit, whatever n
     * (the tables of paralab-bench comm and Lab 06 print them) */
    for (int n = 1; n <= 64; n++) {
        CU_ASSERT(pl_collective_busbw_factor(&pl_collectives[PL_CALL_ALL_REDUCE], n) ==
                  2.0 * (n - 1) / n);
        CU_ASSERT(pl_collective_busbw_factor(&pl_collectives[PL_CALL_ALL_GATHER], n) ==
                  (double)(n - 1) / n);
        CU_ASSERT(pl_collective_busbw_factor(bc, n) == 1.0);
    }
}

/* The functions go through the handle's engine table: the world and what
 * is split from it are the engine the world was made with. */
/* Without mpirun (the unit tests never run under it), no MPI world is
 * active, in any build, and the MPI engine makes no handles, saying why; a
 * world asked to span the processes is this process's, on the local engine. */
static void test_mpi_engine_outside_mpirun(void)
{
    char err[256];
    CU_ASSERT_EQUAL(pl_dist_init(err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(err, "");
    CU_ASSERT_EQUAL(pl_dist_active(), 0);
    CU_ASSERT_EQUAL(pl_dist_procs(), 1);
    CU_ASSERT_EQUAL(pl_dist_proc(), 0);
    int devs[2] = {0, 1};
    pl_comm *c[2] = {NULL, NULL};
    CU_ASSERT_EQUAL(pl_comm_create_mpi(2, 2, devs, 1, c, err, sizeof err),
                    PL_COMM_INVALID_ARGUMENT);
    CU_ASSERT_PTR_NULL(c[0]);
    /* the ranks share the process's memory already: the host rows stay */
    int rows[2][2] = {{1, 2}, {3, 4}};
    CU_ASSERT_EQUAL(pl_dist_allgather_host(NULL, rows, sizeof rows[0], sizeof rows[0]), PL_COMM_OK);
    CU_ASSERT(rows[0][0] == 1 && rows[0][1] == 2 && rows[1][0] == 3 && rows[1][1] == 4);
#ifdef PARALAB_MPI
    CU_ASSERT_STRING_EQUAL(err, "not started by mpirun: the MPI engine needs an MPI world");
#else
    CU_ASSERT_STRING_EQUAL(err, "this build has no MPI engine (build it with `make mpi`)");
#endif
    engine_case e = {{0}, {0}};
    pl_world_config cfg = {.n = 2, .comm = PL_COMM_LOCAL, .distributed = 1, .ranks_per_process = 2};
    CU_ASSERT_EQUAL(pl_world_run_config(&cfg, run_engine_names, &e, err, sizeof err), 0);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_STRING_EQUAL(e.world[r] ? e.world[r] : "", "local");
        CU_ASSERT_STRING_EQUAL(e.split[r] ? e.split[r] : "", "local");
    }
}

static void test_engine_table(void)
{
    char err[1200];
    engine_case e;
    memset(&e, 0, sizeof e);
    pl_world_config cfg = {.n = 4, .comm = PL_COMM_LOCAL};
    CU_ASSERT_EQUAL(pl_world_run_config(&cfg, run_engine_names, &e, err, sizeof err), 0);
    for (int r = 0; r < 4; r++) {
        CU_ASSERT_STRING_EQUAL(e.world[r], "local");
        CU_ASSERT_STRING_EQUAL(e.split[r], "local");
    }
#ifdef PARALAB_SIMULATED_CUDA
    /* auto on simulated GPUs: the local engine */
    memset(&e, 0, sizeof e);
    cfg.comm = PL_COMM_AUTO;
    CU_ASSERT_EQUAL(pl_world_run_config(&cfg, run_engine_names, &e, err, sizeof err), 0);
    for (int r = 0; r < 4; r++) CU_ASSERT_STRING_EQUAL(e.world[r], "local");
    static const int four[4] = {0, 1, 2, 3};
    CU_ASSERT_EQUAL(pl_comm_auto_engine(4, four), PL_COMM_LOCAL); /* no NCCL built */
    /* NCCL: refused, with the reason, before any rank starts */
    memset(&e, 0, sizeof e);
    cfg.comm = PL_COMM_NCCL;
    CU_ASSERT_NOT_EQUAL(pl_world_run_config(&cfg, run_engine_names, &e, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(err, "cannot create the NCCL communicator of 4 ranks: the NCCL engine "
                                "needs real GPUs: this is the simulated build (build/sim); build "
                                "the CUDA variant (make cuda) or use the local engine");
    CU_ASSERT_PTR_NULL(e.world[0]);
    pl_comm *h[2] = {NULL, NULL};
    int devs[2] = {0, 1};
    CU_ASSERT_EQUAL(pl_comm_create_nccl(2, devs, h, err, sizeof err), PL_COMM_INVALID_ARGUMENT);
    CU_ASSERT_PTR_NULL(h[0]);
#else
    /* auto: NCCL when every rank has its own GPU, else the local engine */
    static const int apart[2] = {0, 1}, shared[3] = {0, 1, 0};
    CU_ASSERT_EQUAL(pl_comm_auto_engine(2, apart), PL_COMM_NCCL);
    CU_ASSERT_EQUAL(pl_comm_auto_engine(3, shared), PL_COMM_LOCAL);
    /* auto with one real GPU per rank: NCCL (gpu-check, 1 rank per GPU) */
    int count = 0;
    if (cudaGetDeviceCount(&count) == cudaSuccess && count >= 2) {
        memset(&e, 0, sizeof e);
        cfg.n = 2;
        cfg.comm = PL_COMM_AUTO;
        CU_ASSERT_EQUAL(pl_world_run_config(&cfg, run_engine_names, &e, err, sizeof err), 0);
        CU_ASSERT_STRING_EQUAL(e.world[0], "nccl");
    }
#endif
}

#ifdef PARALAB_SIMULATED_CUDA
/* SIM ONLY: the modeled clock of a collective is deterministic (two runs,
 * the same modeled time on every rank) and follows the size. */
typedef struct {
    size_t count;
    float ms[8];
} timing_case;

static int run_timed(pl_rank *r)
{
    timing_case *t = r->arg;
    float *d;
    cudaEvent_t a, b;
    if (cudaMalloc((void **)&d, t->count * sizeof(float))) return 1;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaMemsetAsync(d, 0, t->count * sizeof(float), r->stream);
    cudaEventRecord(a, r->stream);
    pl_comm_result res = pl_all_reduce(r->comm, d, d, t->count, PL_FLOAT32, PL_SUM, r->stream);
    cudaEventRecord(b, r->stream);
    cudaEventSynchronize(b);
    cudaEventElapsedTime(&t->ms[r->rank], a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaFree(d);
    return res != PL_COMM_OK;
}

static void test_modeled_time_deterministic(void)
{
    timing_case one = {.count = 1 << 20}, two = {.count = 1 << 20}, big = {.count = 1 << 22};
    char err[1200];
    CU_ASSERT_EQUAL(pl_world_run(4, NULL, 10, run_timed, &one, err, sizeof err), 0);
    CU_ASSERT_EQUAL(pl_world_run(4, NULL, 10, run_timed, &two, err, sizeof err), 0);
    CU_ASSERT_EQUAL(pl_world_run(4, NULL, 10, run_timed, &big, err, sizeof err), 0);
    for (int r = 0; r < 4; r++) {
        CU_ASSERT(one.ms[r] > 0);
        CU_ASSERT_EQUAL(one.ms[r], two.ms[r]);
        /* 4x the bytes: more than twice the time (bandwidth), less than 4x
         * (per-step latencies: 1.5 us per NVLink hop, 3 us per kernel launch) */
        CU_ASSERT(big.ms[r] > 2 * one.ms[r] && big.ms[r] < 4 * one.ms[r]);
    }
}
#endif

/* Two ranks on one device, the engine's scratch growing mid-collective
 * (regression: the simulator freed an op another stream still waited on). */
static int run_shared_device(pl_rank *r)
{
    int64_t *a, *b, h[600];
    if (cudaMalloc((void **)&a, 600 * 8) || cudaMalloc((void **)&b, 600 * 8)) return 1;
    for (int i = 0; i < 600; i++) h[i] = r->rank + 1;
    cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice);
    for (int i = 0; i < 60; i++) {
        if (pl_broadcast(r->comm, a, a, 512, PL_INT64, 0, r->stream) ||
            pl_reduce(r->comm, a, b, (size_t)(1 + 9 * i), PL_INT64, PL_SUM, 0, r->stream)) {
            snprintf(r->error, sizeof r->error, "%s", pl_comm_last_error(r->comm));
            return 1;
        }
    }
    cudaStreamSynchronize(r->stream);
    cudaMemcpy(h, b, 8 * 8, cudaMemcpyDeviceToHost);
    int bad = r->rank == 0 && h[7] != 2; /* after the first broadcast every rank holds 1 */
    if (bad) snprintf(r->error, sizeof r->error, "b[7] = %lld, expected 2", (long long)h[7]);
    cudaFree(a);
    cudaFree(b);
    return bad;
}

static void test_shared_device(void)
{
    char err[1200];
    int rc = pl_world_run(2, (const int[]){0, 0}, 10, run_shared_device, NULL, err, sizeof err);
    if (rc) fprintf(stderr, "  %s\n", err);
    CU_ASSERT_EQUAL(rc, 0);
}

/* A send on one communicator never matches a receive on another. */
static int run_two_comms(pl_rank *r)
{
    pl_comm *sub;
    if (pl_comm_split(r->comm, 0, r->rank, &sub)) return 1;
    int *d, h[2] = {r->rank ? 0 : 1, r->rank ? 0 : 2};
    cudaMalloc((void **)&d, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    int res = 0;
    if (r->rank == 0) {
        pl_group_start();
        pl_send(sub, d, 1, PL_INT32, 1, r->stream);         /* 1 on sub */
        pl_send(r->comm, d + 1, 1, PL_INT32, 1, r->stream); /* 2 on world */
        res = pl_group_end();
    } else if (r->rank == 1) {
        pl_group_start();
        pl_recv(r->comm, d, 1, PL_INT32, 0, r->stream); /* from world: 2 */
        pl_recv(sub, d + 1, 1, PL_INT32, 0, r->stream); /* from sub: 1 */
        res = pl_group_end();
        cudaStreamSynchronize(r->stream);
        cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
        if (h[0] != 2 || h[1] != 1) {
            snprintf(r->error, sizeof r->error, "got [%d %d], expected [2 1]", h[0], h[1]);
            res = 1;
        }
    }
    cudaStreamSynchronize(r->stream);
    cudaFree(d);
    return res || pl_comm_free(sub);
}

static void test_p2p_per_communicator(void)
{
    char err[1200];
    int rc = pl_world_run(2, NULL, 10, run_two_comms, NULL, err, sizeof err);
    if (rc) fprintf(stderr, "  %s\n", err);
    CU_ASSERT_EQUAL(rc, 0);
}

/* Misuses that must be told to every rank, at once. */
typedef struct {
    int mode;
    pl_comm_result result[16];
    char msg[16][1024];
} misuse_case;

static int run_misuse(pl_rank *r)
{
    misuse_case *m = r->arg;
    float *d;
    cudaMalloc((void **)&d, 64);
    pl_comm_result res = PL_COMM_OK;
    if (m->mode == 0) /* every rank: the same bad root */
        res = pl_broadcast(r->comm, d, d, 4, PL_FLOAT32, 9, r->stream);
    else if (m->mode == 1) { /* rank 1: a collective inside a group */
        if (r->rank == 1) pl_group_start();
        res = pl_all_reduce(r->comm, d, d, 4, PL_FLOAT32, PL_SUM, r->stream);
        if (r->rank == 1) pl_group_end();
    } else if (m->mode == 2) /* freeing the world communicator */
        res = pl_comm_free(r->comm);
    else if (m->mode == 3) { /* rank 0 sends to 10, rank 1 to 0: no pair both sending */
        if (r->rank == 0) res = pl_send(r->comm, d, 1, PL_FLOAT32, 10, r->stream);
        if (r->rank == 1) res = pl_send(r->comm, d, 1, PL_FLOAT32, 0, r->stream);
    } else { /* int32 sums wrap, as on a GPU */
        int32_t big[4] = {1 << 30, 1 << 30, -5, 7}, got[4];
        cudaMemcpy(d, big, sizeof big, cudaMemcpyHostToDevice);
        res = pl_all_reduce(r->comm, d, d, 4, PL_INT32, PL_SUM, r->stream);
        cudaStreamSynchronize(r->stream);
        cudaMemcpy(got, d, sizeof got, cudaMemcpyDeviceToHost);
        if (got[0] != 0 || got[2] != -20 || got[3] != 28) res = PL_COMM_SYSTEM_ERROR;
    }
    m->result[r->rank] = res;
    snprintf(m->msg[r->rank], sizeof m->msg[0], "%s", pl_comm_last_error(r->comm));
    cudaFree(d);
    return 0;
}

static void test_misuse_told_at_once(void)
{
    char err[1200];
    misuse_case m;
    memset(&m, 0, sizeof m);
    CU_ASSERT_EQUAL(pl_world_run(4, NULL, 30, run_misuse, &m, err, sizeof err), 0);
    for (int r = 0; r < 4; r++) { /* each its own message, no "disagree" */
        CU_ASSERT_EQUAL(m.result[r], PL_COMM_INVALID_ARGUMENT);
        has(m.msg[r], "broadcast: root 9 is not a rank (allowed: 0..3)");
        CU_ASSERT_PTR_NULL(strstr(m.msg[r], "disagree"));
    }
    memset(&m, 0, sizeof m);
    m.mode = 1;
    CU_ASSERT_EQUAL(pl_world_run(4, NULL, 30, run_misuse, &m, err, sizeof err), 0);
    has(m.msg[1], "all_reduce inside pl_group_start()/pl_group_end()");
    CU_ASSERT_EQUAL(m.result[0], PL_COMM_MISMATCH); /* told, not timed out after 30 s */
    has(m.msg[0], "rank 1 all_reduce(count=4, float, sum) [invalid arguments]");
    memset(&m, 0, sizeof m);
    m.mode = 2;
    CU_ASSERT_EQUAL(pl_world_run(2, NULL, 30, run_misuse, &m, err, sizeof err), 0);
    CU_ASSERT_EQUAL(m.result[0], PL_COMM_INVALID_ARGUMENT);
    has(m.msg[0], "comm_free: this is the world communicator");
    memset(&m, 0, sizeof m);
    m.mode = 3;
    CU_ASSERT_EQUAL(pl_world_run(11, NULL, 0.3, run_misuse, &m, err, sizeof err), 0);
    CU_ASSERT_EQUAL(m.result[0], PL_COMM_TIMEOUT);
    has(m.msg[0], "rank 0 waits in send to rank 10");
    CU_ASSERT_PTR_NULL(strstr(m.msg[0], "both send"));
    memset(&m, 0, sizeof m);
    m.mode = 4;
    CU_ASSERT_EQUAL(pl_world_run(4, NULL, 30, run_misuse, &m, err, sizeof err), 0);
    for (int r = 0; r < 4; r++) CU_ASSERT_EQUAL(m.result[r], PL_COMM_OK);
}

/* ---- bad sizes, bad worlds (issue 19) --------------------------------------------- */

/* Every collective with a count whose bytes overflow a size_t (SIZE_MAX,
 * 2^62), or that no buffer holds (SIZE_MAX / 4: a negative int cast to
 * size_t): a message naming the count, never a crash or a silent OK. */
typedef struct {
    int kind; /* K_ALL_REDUCE ... K_ALL_TO_ALL */
    size_t count;
    pl_comm_result result[4];
    char msg[4][1024];
} huge_case;

static int run_huge(pl_rank *r)
{
    huge_case *h = r->arg;
    float *s = NULL, *d = NULL;
    if (cudaMalloc((void **)&s, 4096) || cudaMalloc((void **)&d, 4096)) return 1;
    pl_comm_result res;
    size_t n = h->count;
    switch (h->kind) {
    case K_ALL_REDUCE:
        res = pl_all_reduce(r->comm, s, d, n, PL_FLOAT32, PL_SUM, r->stream);
        break;
    case K_BROADCAST:
        res = pl_broadcast(r->comm, s, d, n, PL_FLOAT32, 0, r->stream);
        break;
    case K_REDUCE:
        res = pl_reduce(r->comm, s, d, n, PL_FLOAT32, PL_SUM, 0, r->stream);
        break;
    case K_ALL_GATHER:
        res = pl_all_gather(r->comm, s, d, n, PL_FLOAT32, r->stream);
        break;
    case K_REDUCE_SCATTER:
        res = pl_reduce_scatter(r->comm, s, d, n, PL_FLOAT32, PL_SUM, r->stream);
        break;
    default:
        res = pl_all_to_all(r->comm, s, d, n, PL_FLOAT32, r->stream);
    }
    h->result[r->rank] = res;
    snprintf(h->msg[r->rank], sizeof h->msg[0], "%s", pl_comm_last_error(r->comm));
    cudaFree(s);
    cudaFree(d);
    return 0;
}

static void test_huge_counts(void)
{
    static const char *names[] = {"all_reduce", "broadcast",      "reduce",
                                  "all_gather", "reduce_scatter", "all_to_all"};
    const size_t counts[] = {SIZE_MAX, SIZE_MAX / 4, (size_t)1 << 62};
    for (int kind = K_ALL_REDUCE; kind <= K_ALL_TO_ALL; kind++)
        for (size_t i = 0; i < 3; i++) {
            int blocks = kind == K_ALL_GATHER || kind == K_REDUCE_SCATTER || kind == K_ALL_TO_ALL;
            size_t max = SIZE_MAX / 4 / (blocks ? 4 : 1);
#ifndef PARALAB_SIMULATED_CUDA
            if (counts[i] <= max) continue; /* real GPUs cannot tell a buffer's size */
#endif
            huge_case h = {.kind = kind, .count = counts[i]};
            char err[1200], want[600];
            CU_ASSERT_EQUAL(pl_world_run(4, NULL, 30, run_huge, &h, err, sizeof err), 0);
            for (int r = 0; r < 4; r++) {
                CU_ASSERT_EQUAL(h.result[r], PL_COMM_INVALID_ARGUMENT);
                if (counts[i] > max)
                    snprintf(want, sizeof want,
                             "rank %d: %s: count %zu is too large: the bytes of %scount %zu x "
                             "float (4 bytes) overflow a size_t (allowed: count 0..%zu; a "
                             "negative count cast to size_t?)",
                             r, names[kind], counts[i], blocks ? "4 ranks x " : "", counts[i], max);
                else /* SIZE_MAX / 4 floats fit a size_t, not the 4096-byte buffers */
                    snprintf(want, sizeof want,
                             "rank %d: %s: the %s buffer is too small: count %zu x float (4 "
                             "bytes) needs %zu bytes, but it holds 4096 (an allocation of 4096 "
                             "bytes on device %d, the buffer at offset 0)",
                             r, names[kind],
                             kind == K_BROADCAST && r != 0 ? "receive"
                             : kind == K_REDUCE && r == 0  ? "send"
                                                           : "send",
                             counts[i], counts[i] * 4, r);
                CU_ASSERT_STRING_EQUAL(h.msg[r], want);
                if (strcmp(h.msg[r], want))
                    fprintf(stderr, "  got  \"%s\"\n  want \"%s\"\n", h.msg[r], want);
            }
        }
}

#ifdef PARALAB_SIMULATED_CUDA
/* The simulated runtime's bounds check of a copy or memset never wraps:
 * SIZE_MAX - 4096 bytes between 256-byte buffers is refused, as is 2^62. */
static void test_huge_copies(void)
{
    char *a = NULL, *b = NULL;
    cudaSetDevice(0);
    CU_ASSERT_EQUAL(cudaMalloc((void **)&a, 256), cudaSuccess);
    CU_ASSERT_EQUAL(cudaMalloc((void **)&b, 256), cudaSuccess);
    const size_t sizes[] = {SIZE_MAX - 4096, SIZE_MAX, (size_t)1 << 62, 257};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        CU_ASSERT_EQUAL(cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
        CU_ASSERT_EQUAL(cudaMemcpy(b, a, n, cudaMemcpyDefault), cudaErrorInvalidValue);
        CU_ASSERT_EQUAL(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, 0),
                        cudaErrorInvalidValue);
        CU_ASSERT_EQUAL(cudaMemset(b, 0, n), cudaErrorInvalidValue);
        CU_ASSERT_EQUAL(cudaMemsetAsync(b, 0, n, 0), cudaErrorInvalidValue);
        CU_ASSERT_EQUAL(cudaMemcpyPeer(b, 0, a, 0, n), cudaErrorInvalidValue);
        CU_ASSERT_EQUAL(cudaMemcpyPeerAsync(b, 0, a, 0, n, 0), cudaErrorInvalidValue);
        cudaGetLastError();
    }
    CU_ASSERT_EQUAL(cudaMemset(a, 7, 256), cudaSuccess); /* the whole buffer is fine */
    CU_ASSERT_EQUAL(cudaMemcpy(b, a, 256, cudaMemcpyDeviceToDevice), cudaSuccess);
    char h[256];
    CU_ASSERT_EQUAL(cudaMemcpy(h, b, 256, cudaMemcpyDeviceToHost), cudaSuccess);
    CU_ASSERT(h[0] == 7 && h[255] == 7);
    cudaFree(a);
    cudaFree(b);
}

/* An undersized buffer on one rank: it is told which buffer, the bytes
 * the call needs and what its allocation holds; the others are told at
 * once (not after the watchdog's timeout) which rank failed and why. */
typedef struct {
    int mode;
    pl_comm_result result[4];
    char msg[4][1024];
    double seconds;
} small_case;

static int run_small(pl_rank *r)
{
    small_case *m = r->arg;
    float *s = NULL, *d = NULL;
    int odd = r->rank == 2;
    if (cudaMalloc((void **)&s, 4096) || cudaMalloc((void **)&d, odd ? 1000 : 4096)) return 1;
    pl_comm_result res;
    if (m->mode == 0) /* rank 2's receive buffer: 1000 bytes for 1024 floats */
        res = pl_all_reduce(r->comm, s, d, 1024, PL_FLOAT32, PL_SUM, r->stream);
    else if (m->mode == 1) /* all_gather: 4 x 64 floats into 1000 bytes */
        res = pl_all_gather(r->comm, s, d, 64, PL_FLOAT32, r->stream);
    else /* rank 2's send buffer starts 10 floats into its allocation */
        res = pl_broadcast(r->comm, odd ? s + 1020 : s, d, 10, PL_FLOAT32, 2, r->stream);
    m->result[r->rank] = res;
    snprintf(m->msg[r->rank], sizeof m->msg[0], "%s", pl_comm_last_error(r->comm));
    cudaFree(s);
    cudaFree(d);
    return 0;
}

static void test_undersized_buffer(void)
{
    static const char *why[] = {
        "all_reduce: the receive buffer is too small: count 1024 x float (4 bytes) needs 4096 "
        "bytes, but it holds 1000 (an allocation of 1000 bytes on device 2, the buffer at offset "
        "0)",
        "all_gather: the receive buffer is too small: 4 ranks x count 64 x float (4 bytes) needs "
        "1024 bytes, but it holds 1000 (an allocation of 1000 bytes on device 2, the buffer at "
        "offset 0)",
        "broadcast: the send buffer is too small: count 10 x float (4 bytes) needs 40 bytes, but "
        "it holds 16 (an allocation of 4096 bytes on device 2, the buffer at offset 4080)"};
    static const char *call[] = {"all_reduce(count=1024, float, sum)",
                                 "all_gather(count=64, float)",
                                 "broadcast(count=10, float, root=2)"};
    for (int mode = 0; mode < 3; mode++) {
        small_case m = {.mode = mode};
        char err[1200], want[1024];
        double t0 = pl_trace_now();
        CU_ASSERT_EQUAL(pl_world_run(4, NULL, 30, run_small, &m, err, sizeof err), 0);
        CU_ASSERT(pl_trace_now() - t0 < 10); /* told at once, not after 30 s */
        CU_ASSERT_EQUAL(m.result[2], PL_COMM_INVALID_ARGUMENT);
        snprintf(want, sizeof want, "rank 2: %s", why[mode]);
        has(m.msg[2], want);
        for (int r = 0; r < 4; r++)
            if (r != 2) {
                CU_ASSERT_EQUAL(m.result[r], PL_COMM_MISMATCH);
                snprintf(want, sizeof want,
                         "rank %d: the ranks disagree about call #1: ranks 0,1,3 %s; rank 2 %s "
                         "[invalid arguments]; rank 2's error: %s",
                         r, call[mode], call[mode], why[mode]);
                CU_ASSERT_STRING_EQUAL(m.msg[r], want);
                if (strcmp(m.msg[r], want))
                    fprintf(stderr, "  got  \"%s\"\n  want \"%s\"\n", m.msg[r], want);
            }
    }
}

/* A rank that fails inside a collective, past its first meeting (here its
 * stream belongs to another device), stops the world at once: the others,
 * waiting for its ring steps, are told which rank failed in which call,
 * though the failed rank goes on to its next call instead of returning. */
static int run_fails_inside(pl_rank *r)
{
    small_case *m = r->arg;
    float *s = NULL, *d = NULL;
    if (cudaMalloc((void **)&s, 4096) || cudaMalloc((void **)&d, 4096)) return 1;
    cudaStream_t st = r->stream, other = NULL;
    if (r->rank == 2) {
        cudaSetDevice((r->device + 1) % 16);
        cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking);
        cudaSetDevice(r->device);
        st = other;
    }
    pl_comm_result res = pl_all_reduce(r->comm, s, d, 1024, PL_FLOAT32, PL_SUM, st);
    m->result[r->rank] = res;
    snprintf(m->msg[r->rank], sizeof m->msg[0], "%s", pl_comm_last_error(r->comm));
    if (r->rank == 2) pl_comm_barrier(r->comm); /* goes on, as a student's loop would */
    cudaStreamSynchronize(r->stream);
    if (other) cudaStreamDestroy(other);
    cudaFree(s);
    cudaFree(d);
    return 0;
}

static void test_failure_inside_call_told(void)
{
    small_case m = {0};
    char err[1200];
    double t0 = pl_trace_now();
    CU_ASSERT_EQUAL(pl_world_run(4, NULL, 20, run_fails_inside, &m, err, sizeof err), 0);
    CU_ASSERT(pl_trace_now() - t0 < 10); /* not the watchdog's 20 s */
    CU_ASSERT_EQUAL(m.result[2], PL_COMM_CUDA_ERROR);
    const char *tail = strstr(m.msg[2], "rank 2: ");
    CU_ASSERT_PTR_NOT_NULL(tail);
    for (int r = 0; r < 4; r++)
        if (r != 2) {
            char want[1200];
            CU_ASSERT_EQUAL(m.result[r], PL_COMM_ABORTED);
            snprintf(want, sizeof want,
                     "rank %d: rank 2 failed in all_reduce(count=1024, float, sum) (call #1): %s",
                     r, tail ? tail + 8 : "?");
            CU_ASSERT_STRING_EQUAL(m.msg[r], want);
            if (strcmp(m.msg[r], want))
                fprintf(stderr, "  got  \"%s\"\n  want \"%s\"\n", m.msg[r], want);
            CU_ASSERT_PTR_NULL(strstr(m.msg[r], "no communicator call"));
        }
}

#endif

/* pl_comm_create checks its arguments up front, with a sentence each. */
static void test_create_validates(void)
{
    int devs[65] = {0};
    pl_comm *h[65];
    char err[256];
    int ndev = 0;
    cudaGetDeviceCount(&ndev);
    CU_ASSERT_EQUAL(pl_comm_create(0, devs, 1, h, err, sizeof err), PL_COMM_INVALID_ARGUMENT);
    CU_ASSERT_STRING_EQUAL(err, "pl_comm_create: 0 ranks (allowed: 1..64)");
    CU_ASSERT_EQUAL(pl_comm_create(65, devs, 1, h, err, sizeof err), PL_COMM_INVALID_ARGUMENT);
    CU_ASSERT_STRING_EQUAL(err, "pl_comm_create: 65 ranks (allowed: 1..64)");
    CU_ASSERT_EQUAL(pl_comm_create(-3, devs, 1, h, err, sizeof err), PL_COMM_INVALID_ARGUMENT);
    CU_ASSERT_STRING_EQUAL(err, "pl_comm_create: -3 ranks (allowed: 1..64)");
    CU_ASSERT_EQUAL(pl_comm_create(2, NULL, 1, h, err, sizeof err), PL_COMM_INVALID_ARGUMENT);
    CU_ASSERT_STRING_EQUAL(err, "pl_comm_create: devices is NULL");
    CU_ASSERT_EQUAL(pl_comm_create(2, devs, 1, NULL, err, sizeof err), PL_COMM_INVALID_ARGUMENT);
    CU_ASSERT_STRING_EQUAL(err, "pl_comm_create: ranks is NULL");
    char want[128];
    int bad[3] = {0, 1, ndev};
    CU_ASSERT_EQUAL(pl_comm_create(3, bad, 1, h, err, sizeof err), PL_COMM_INVALID_ARGUMENT);
    snprintf(want, sizeof want, "pl_comm_create: rank 2: device %d does not exist (devices 0..%d)",
             ndev, ndev - 1);
    CU_ASSERT_STRING_EQUAL(err, want);
    bad[2] = -1;
    CU_ASSERT_EQUAL(pl_comm_create(3, bad, 1, h, err, sizeof err), PL_COMM_INVALID_ARGUMENT);
    snprintf(want, sizeof want, "pl_comm_create: rank 2: device -1 does not exist (devices 0..%d)",
             ndev - 1);
    CU_ASSERT_STRING_EQUAL(err, want);
    /* a good one still works, and says nothing */
    CU_ASSERT_EQUAL(pl_comm_create(3, devs, 1, h, err, sizeof err), PL_COMM_OK);
    CU_ASSERT_STRING_EQUAL(err, "");
    pl_comm_destroy_all(h, 3);
    CU_ASSERT_EQUAL(pl_comm_create(0, devs, 1, h, NULL, 0), PL_COMM_INVALID_ARGUMENT);
}

/* Reduce-scatter with NCCL's meaning: rank r gets the reduction of block r
 * of recvcount elements; what the send buffer holds past n x recvcount is
 * ignored (no padding), and the receive buffer past recvcount untouched. */
typedef struct {
    int32_t got[3][6];
    int32_t send_after[3][20];
} tail_case;

static int run_tail(pl_rank *r)
{
    tail_case *t = r->arg;
    int32_t h[20], *s = NULL, *d = NULL;
    if (cudaMalloc((void **)&s, sizeof h) || cudaMalloc((void **)&d, 6 * sizeof(int32_t))) return 1;
    for (int i = 0; i < 20; i++) h[i] = i < 12 ? 100 * (r->rank + 1) + i : 7000 + i;
    cudaMemcpy(s, h, sizeof h, cudaMemcpyHostToDevice);
    int32_t fill[6] = {-1, -1, -1, -1, -1, -1};
    cudaMemcpy(d, fill, sizeof fill, cudaMemcpyHostToDevice);
    /* 3 ranks x recvcount 4 = 12 of the 20 elements */
    pl_comm_result res = pl_reduce_scatter(r->comm, s, d, 4, PL_INT32, PL_SUM, r->stream);
    cudaStreamSynchronize(r->stream);
    cudaMemcpy(t->got[r->rank], d, sizeof fill, cudaMemcpyDeviceToHost);
    cudaMemcpy(t->send_after[r->rank], s, sizeof h, cudaMemcpyDeviceToHost);
    cudaFree(s);
    cudaFree(d);
    if (res) snprintf(r->error, sizeof r->error, "%s", pl_comm_last_error(r->comm));
    return res != PL_COMM_OK;
}

static void test_reduce_scatter_ignores_tail(void)
{
    tail_case t;
    memset(&t, 0, sizeof t);
    char err[1200];
    CU_ASSERT_EQUAL(pl_world_run(3, NULL, 30, run_tail, &t, err, sizeof err), 0);
    for (int r = 0; r < 3; r++) {
        for (int i = 0; i < 4; i++) /* (100 + 200 + 300) + 3 x element index */
            CU_ASSERT_EQUAL(t.got[r][i], 600 + 3 * (4 * r + i));
        CU_ASSERT_EQUAL(t.got[r][4], -1); /* past recvcount: untouched */
        CU_ASSERT_EQUAL(t.got[r][5], -1);
        for (int i = 0; i < 20; i++) /* the send buffer, tail included, as it was */
            CU_ASSERT_EQUAL(t.send_after[r][i], i < 12 ? 100 * (r + 1) + i : 7000 + i);
    }
}

#ifdef PARALAB_SIMULATED_CUDA
/* 64 ranks, the most a world has, on the unit binary's 16 simulated
 * devices: each rank runs a 1024-thread block with barriers on its own
 * stream (1024 fiber stacks on each of 64 stream threads: more guard pages
 * than vm.max_map_count's 65,530 areas if each stream kept its own), then
 * an all-reduce; every element exact. */
typedef struct {
    float block_sum[64];
    int bad[64];
} world64_case;

static int run_world64(pl_rank *r)
{
    world64_case *w = r->arg;
    enum { N = 1024, COUNT = 300 };
    float h[N], *in = NULL, *out = NULL, *d = NULL;
    if (cudaMalloc((void **)&in, sizeof h) || cudaMalloc((void **)&out, sizeof(float)) ||
        cudaMalloc((void **)&d, COUNT * sizeof(float))) {
        snprintf(r->error, sizeof r->error, "cudaMalloc failed");
        return 1;
    }
    for (int i = 0; i < N; i++) h[i] = (float)(r->rank % 3);
    cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
    cudaError_t e = tk_block_sum_on(in, out, N, 1024, r->stream);
    if (!e) e = cudaStreamSynchronize(r->stream);
    if (!e) e = cudaMemcpy(&w->block_sum[r->rank], out, sizeof(float), cudaMemcpyDeviceToHost);
    if (e) {
        snprintf(r->error, sizeof r->error, "the 1024-thread kernel: %s", cudaGetErrorString(e));
        return 1;
    }
    for (int i = 0; i < COUNT; i++) h[i] = (float)(r->rank * 1000 + i);
    cudaMemcpy(d, h, COUNT * sizeof(float), cudaMemcpyHostToDevice);
    pl_comm_result res = pl_all_reduce(r->comm, d, d, COUNT, PL_FLOAT32, PL_SUM, r->stream);
    if (res) {
        snprintf(r->error, sizeof r->error, "%s", pl_comm_last_error(r->comm));
        return 1;
    }
    cudaStreamSynchronize(r->stream);
    cudaMemcpy(h, d, COUNT * sizeof(float), cudaMemcpyDeviceToHost);
    for (int i = 0; i < COUNT; i++) /* sum over 64 ranks of rank*1000 + i: exact in float */
        if (h[i] != (float)(1000 * 64 * 63 / 2 + 64 * i)) w->bad[r->rank]++;
    cudaFree(in);
    cudaFree(out);
    cudaFree(d);
    return 0;
}

static void test_world_of_64(void)
{
    world64_case w;
    memset(&w, 0, sizeof w);
    char err[1200];
    int rc = pl_world_run(64, NULL, 60, run_world64, &w, err, sizeof err);
    if (rc) fprintf(stderr, "  %s\n", err);
    CU_ASSERT_EQUAL(rc, 0);
    for (int r = 0; r < 64; r++) {
        CU_ASSERT_EQUAL(w.block_sum[r], (float)(1024 * (r % 3)));
        CU_ASSERT_EQUAL(w.bad[r], 0);
    }
}
#endif

int register_comm_suite(void)
{
    static const unit_test t[] = {
        {"all_reduce: every element and the ring's volume", test_all_reduce_every_element},
        {"chunked and pipelined: every element, bytes and messages", test_chunked_every_element},
        {"every type and op", test_types_and_ops},
        {"broadcast and reduce from every root", test_broadcast_and_reduce_roots},
        {"all_gather, reduce_scatter, all_to_all", test_gather_scatter_all_to_all},
        {"mismatched calls name every rank's call", test_mismatch},
        {"600 calls back to back, a rank late now and then; a mismatch at call #602",
         test_back_to_back},
        {"bad arguments name the value and the range", test_bad_arguments},
        {"send/recv in a group", test_send_recv_group},
        {"two ranks that both send first: deadlock reported", test_send_deadlock_reported},
        {"eager sends: none waits for its receive", test_send_eager},
        {"300 messages, each send buffer overwritten at once: every byte received",
         test_send_recv_reuse},
        {"an eager send never received: the watchdog names it", test_send_eager_never_received},
        {"the ledger counts each call by name", test_ledger_counts_calls},
        {"comm_split by color and key", test_split},
        {"a failing rank stops the world", test_failure_stops_world},
        {"a failing rank: split communicators still freed", test_failure_frees_splits},
        {"two ranks on one device", test_shared_device},
        {"send/recv match within their communicator", test_p2p_per_communicator},
        {"misuse is told to every rank at once; int sums wrap", test_misuse_told_at_once},
        {"engines: a table per handle; NCCL refused on simulated GPUs", test_engine_table},
        {"no MPI world outside mpirun: the MPI engine refuses, with text",
         test_mpi_engine_outside_mpirun},
        {"one descriptor per collective: sizes, bytes, busbw factor, in place",
         test_collective_descriptors},
        {"huge counts: every collective names the count", test_huge_counts},
        {"pl_comm_create validates ranks and devices, with text", test_create_validates},
        {"reduce_scatter ignores the send buffer past n x recvcount",
         test_reduce_scatter_ignores_tail},
#ifdef PARALAB_SIMULATED_CUDA
        {"modeled time is deterministic (sim)", test_modeled_time_deterministic},
        {"chunks pipeline a broadcast down the chain (sim)", test_chunks_pipeline_broadcast},
        {"huge copies and memsets are refused (sim)", test_huge_copies},
        {"an undersized buffer: named, with the bytes; the others told (sim)",
         test_undersized_buffer},
        {"a rank failing inside a call: the others told at once (sim)",
         test_failure_inside_call_told},
        {"a world of 64 ranks with 1024-thread blocks (sim)", test_world_of_64},
#endif
    };
    return UNIT_SUITE("comm", t);
}
