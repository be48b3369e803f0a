/*
 * test_trace.c — the per-rank event rings (nothing lost or reordered with
 * a concurrent consumer; exact drop counts), and the Chrome trace of a real
 * all_reduce parsed back with jansson: event counts, bytes, and every ring
 * step nested inside its collective, on the measured and the modeled clock.
 */
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paralab/comm.h"
#include "paralab/step.h"
#include "paralab/trace.h"
#include "paralab/world.h"
#include "suites.h"

/* The simulated runtime records its own kernels, copies and memsets in the
 * trace; on a real GPU that would need CUPTI, and only paralab's own events
 * (collectives, ring steps, sends) are there. */
#ifdef PARALAB_SIMULATED_CUDA
#define RUNTIME_OPS 1
#else
#define RUNTIME_OPS 0
#endif

enum { EVENTS = 200000 };

static void *producer(void *p)
{
    pl_trace *t = p;
    for (int i = 0; i < EVENTS; i++) {
        pl_event e = {.rank = 1, .micro_batch = i};
        pl_trace_record(t, &e);
    }
    return NULL;
}

static void test_ring_wait_keeps_everything(void)
{
    pl_trace *t = pl_trace_create(2, 64, PL_TRACE_WAIT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    pthread_t th;
    pthread_create(&th, NULL, producer, t);
    pl_event buf[100];
    int next = 0, in_order = 1;
    while (next < EVENTS) {
        size_t n = pl_trace_drain(t, buf, 100);
        for (size_t i = 0; i < n; i++) in_order &= buf[i].micro_batch == next++;
        if (!n) sched_yield();
    }
    pthread_join(th, NULL);
    CU_ASSERT(in_order);
    CU_ASSERT_EQUAL(next, EVENTS);
    CU_ASSERT_EQUAL(pl_trace_dropped(t, 1), 0);
    CU_ASSERT_EQUAL(pl_trace_drain(t, buf, 100), 0);
    pl_trace_destroy(t);
}

/* Each event carries the narrated step it was recorded in. */
static void test_events_carry_their_step(void)
{
    pl_trace *t = pl_trace_create(1, 8, PL_TRACE_WAIT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    pl_event e = {.rank = 0, .kind = PL_EV_KERNEL, .step = 7}; /* the trace says, not the caller */
    pl_trace_record(t, &e);
    pl_trace_set_step(t, 2);
    pl_trace_record(t, &e);
    pl_trace_record(t, &e);
    pl_trace_set_step(t, 3);
    pl_trace_record(t, &e);
    pl_event out[8];
    CU_ASSERT_EQUAL_FATAL(pl_trace_drain(t, out, 8), 4);
    int want[] = {0, 2, 2, 3};
    for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL(out[i].step, want[i]);
    pl_trace_destroy(t);
}

static void test_ring_drop_counts(void)
{
    pl_trace *t = pl_trace_create(1, 3, PL_TRACE_DROP); /* rounded up to 4 */
    for (int i = 0; i < 10; i++) {
        pl_event e = {.rank = 0, .micro_batch = i};
        pl_trace_record(t, &e);
    }
    pl_event buf[16];
    CU_ASSERT_EQUAL(pl_trace_drain(t, buf, 16), 4);
    for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL(buf[i].micro_batch, i);
    CU_ASSERT_EQUAL(pl_trace_dropped(t, 0), 6);
    pl_trace_destroy(t);
}

static int run_all_reduce(pl_rank *r)
{
    float *d;
    if (cudaMalloc((void **)&d, 1000 * sizeof(float))) return 1;
    cudaMemsetAsync(d, 0, 1000 * sizeof(float), r->stream);
    pl_comm_result res = pl_all_reduce(r->comm, d, d, 1000, PL_FLOAT32, PL_SUM, r->stream);
    cudaStreamSynchronize(r->stream);
    cudaFree(d);
    if (res) snprintf(r->error, sizeof r->error, "%s", pl_comm_last_error(r->comm));
    return res != PL_COMM_OK;
}

/* Parses the file and checks counts and nesting; returns the X events. */
static int check_json(const char *path, int n, int modeled)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root) fprintf(stderr, "  %s: %s (line %d)\n", path, jerr.text, jerr.line);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    json_t *evs = json_object_get(root, "traceEvents");
    CU_ASSERT_TRUE(json_is_array(evs));
    int meta = 0, coll = 0, steps = 0, kernels[8] = {0}, peer_copies[8] = {0}, memsets[8] = {0};
    int op_tid[8] = {-1, -1, -1, -1, -1, -1, -1, -1}, named[8][8] = {{0}};
    double cstart[8] = {0}, cend[8] = {0};
    long long step_bytes[8] = {0}, copy_bytes[8] = {0};
    size_t i;
    json_t *e;
    json_array_foreach(evs, i, e)
    {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        const char *cat = json_string_value(json_object_get(e, "cat"));
        int pid = (int)json_integer_value(json_object_get(e, "pid"));
        if (ph && !strcmp(ph, "M")) meta++;
        if (ph && !strcmp(ph, "M") && json_object_get(e, "tid")) { /* a track's name */
            int t = (int)json_integer_value(json_object_get(e, "tid"));
            const char *tn = json_string_value(json_object_get(json_object_get(e, "args"), "name"));
            char want[32];
            if (t < PL_NUM_LANES)
                snprintf(want, sizeof want, "%s", pl_lane_name((pl_lane)t));
            else
                snprintf(want, sizeof want, "stream %d", t - PL_NUM_LANES);
            CU_ASSERT(t >= 0 && t < 8 && tn && !strcmp(tn, want));
            if (t >= 0 && t < 8) named[pid][t]++;
        }
        if (ph && !strcmp(ph, "X")) /* times count from the origin: never negative */
            CU_ASSERT(json_number_value(json_object_get(e, "ts")) >= 0);
        if (ph && !strcmp(ph, "X") && cat && !strcmp(cat, "collective")) {
            coll++;
            cstart[pid] = json_number_value(json_object_get(e, "ts"));
            cend[pid] = cstart[pid] + json_number_value(json_object_get(e, "dur"));
            CU_ASSERT_EQUAL(
                json_integer_value(json_object_get(json_object_get(e, "args"), "bytes")), 4000);
            CU_ASSERT_EQUAL(json_integer_value(json_object_get(e, "tid")), PL_LANE_COMM);
        }
        /* the engine's own work: a reduce kernel per reduce-scatter step on
         * the compute lane, a peer copy per step on the copy lane */
        const char *name = json_string_value(json_object_get(e, "name"));
        json_t *args = json_object_get(e, "args");
        int tid = (int)json_integer_value(json_object_get(e, "tid"));
        /* kernels and copies on the track of their stream, the rank's own
         * (not the legacy default stream: number 0), the lane in args */
        if (ph && !strcmp(ph, "X") && cat && (!strcmp(cat, "kernel") || !strcmp(cat, "copy"))) {
            int stream = (int)json_integer_value(json_object_get(args, "stream"));
            CU_ASSERT(stream >= 1);
            CU_ASSERT_EQUAL(tid, PL_NUM_LANES + stream);
            if (op_tid[pid] < 0) op_tid[pid] = tid;
            CU_ASSERT_EQUAL(tid, op_tid[pid]);
            CU_ASSERT_EQUAL(json_integer_value(json_object_get(args, "lane")),
                            !strcmp(cat, "kernel") ? PL_LANE_COMPUTE : PL_LANE_COPY);
        }
        if (ph && !strcmp(ph, "X") && cat && !strcmp(cat, "kernel")) kernels[pid]++;
        if (ph && !strcmp(ph, "X") && cat && !strcmp(cat, "copy")) {
            if (name && !strcmp(name, "memcpy peer")) {
                peer_copies[pid]++;
                copy_bytes[pid] += json_integer_value(json_object_get(args, "bytes"));
                CU_ASSERT_EQUAL(json_integer_value(json_object_get(args, "peer")),
                                (pid + n - 1) % n);
            } else if (name && !strcmp(name, "memset")) {
                memsets[pid]++;
                CU_ASSERT_EQUAL(json_integer_value(json_object_get(args, "bytes")), 4000);
            } else
                CU_FAIL("a copy other than the ring's peer copies and the memset");
        }
    }
    /* ring steps inside their rank's collective (events are in drain order:
     * a rank's steps come before its collective, so check in a second pass) */
    json_array_foreach(evs, i, e)
    {
        const char *cat = json_string_value(json_object_get(e, "cat"));
        if (!cat || strcmp(cat, "ring step")) continue;
        steps++;
        int pid = (int)json_integer_value(json_object_get(e, "pid"));
        double ts = json_number_value(json_object_get(e, "ts"));
        double end = ts + json_number_value(json_object_get(e, "dur"));
        /* exactly inside: the file has whole nanoseconds (0.001 us), so
         * 1e-6 us covers only the decimal parsing */
        CU_ASSERT(ts >= cstart[pid] - 1e-6 && end <= cend[pid] + 1e-6);
        step_bytes[pid] += json_integer_value(json_object_get(json_object_get(e, "args"), "bytes"));
        CU_ASSERT(json_integer_value(json_object_get(json_object_get(e, "args"), "peer")) ==
                  (pid + n - 1) % n);
    }
    /* a process name per rank, a thread name per track used (comm; the
     * rank's stream on simulated GPUs), each once */
    CU_ASSERT_EQUAL(meta, n + n * (1 + RUNTIME_OPS));
    for (int r = 0; r < n; r++) {
        CU_ASSERT_EQUAL(named[r][PL_LANE_COMM], 1);
        if (RUNTIME_OPS) CU_ASSERT(op_tid[r] >= PL_NUM_LANES && named[r][op_tid[r]] == 1);
    }
    CU_ASSERT_EQUAL(coll, n);
    CU_ASSERT_EQUAL(steps, n * 2 * (n - 1));
    for (int r = 0; r < n; r++) {
        CU_ASSERT_EQUAL(step_bytes[r], 2LL * (n - 1) * 4000 / n); /* what it received */
        CU_ASSERT_EQUAL(kernels[r], RUNTIME_OPS * (n - 1));
        CU_ASSERT_EQUAL(peer_copies[r], RUNTIME_OPS * 2 * (n - 1));
        CU_ASSERT_EQUAL(copy_bytes[r], RUNTIME_OPS * step_bytes[r]);
        CU_ASSERT_EQUAL(memsets[r], RUNTIME_OPS);
        if (modeled && RUNTIME_OPS) CU_ASSERT(cend[r] > cstart[r]); /* no modeled clock on GPUs */
    }
    json_decref(root);
    int ops = 0;
    for (int r = 0; r < n; r++) ops += kernels[r] + peer_copies[r] + memsets[r];
    return coll + steps + ops;
}

static void test_trace_of_all_reduce(void)
{
    enum { N = 4 };
    pl_trace *t = pl_trace_create(N, 1024, PL_TRACE_WAIT);
    char err[1024];
    CU_ASSERT_EQUAL(pl_world_run_traced(N, NULL, 10, t, run_all_reduce, NULL, err, sizeof err), 0);
    pl_event ev[1024];
    size_t n = pl_trace_drain(t, ev, 1024);
    /* per rank: the collective, 2(N-1) ring steps, and the runtime's ops:
     * the memset, 2(N-1) peer copies, N-1 reduce kernels */
    enum { WANT_EVENTS = N + N * 2 * (N - 1) + RUNTIME_OPS * N * (1 + 2 * (N - 1) + (N - 1)) };
    CU_ASSERT_EQUAL(n, WANT_EVENTS);
    for (int modeled = 0; modeled <= 1; modeled++) {
        char path[] = "/tmp/paralab-trace-XXXXXX";
        int fd = mkstemp(path);
        close(fd);
        pl_trace_writer *w = pl_trace_writer_open(path, N, modeled, 0, err, sizeof err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        CU_ASSERT_EQUAL(pl_trace_writer_add(w, ev, n), 0);
        CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
        CU_ASSERT_EQUAL(check_json(path, N, modeled), WANT_EVENTS);
        unlink(path);
    }
    pl_trace_destroy(t);
}

static void test_writer_errors(void)
{
    char err[512];
    CU_ASSERT_PTR_NULL(pl_trace_writer_open("/nonexistent-dir/t.json", 1, 0, -1, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot write the trace /nonexistent-dir/t.json"));
    /* labels are JSON-escaped */
    char path[] = "/tmp/paralab-trace-XXXXXX";
    close(mkstemp(path));
    pl_trace_writer *w = pl_trace_writer_open(path, 1, 0, -1, err, sizeof err);
    pl_event e = {.rank = 0, .micro_batch = -1, .layer = -1, .peer = -1, .end = 1};
    snprintf(e.label, sizeof e.label, "a \"quoted\"\\label\n");
    pl_trace_writer_add(w, &e, 1);
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    json_t *evs = json_object_get(root, "traceEvents");
    json_t *last = json_array_get(evs, json_array_size(evs) - 1);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(last, "name")),
                           "a \"quoted\"\\label\n");
    json_decref(root);
    unlink(path);
}

/* Times are written in whole nanoseconds from rounded start and end, so an
 * event inside another stays inside in the file. Rounding start and
 * duration separately would write this child ending at 1.001 us, past its
 * parent's 1.000. */
static void test_writer_keeps_nesting(void)
{
    char path[] = "/tmp/paralab-trace-XXXXXX", err[512];
    close(mkstemp(path));
    pl_trace_writer *w = pl_trace_writer_open(path, 1, 0, 0, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    pl_event ev[2] = {
        {.rank = 0, .micro_batch = -1, .layer = -1, .peer = -1, .start = 0.4e-9, .end = 1000.4e-9},
        {.rank = 0, .micro_batch = -1, .layer = -1, .peer = -1, .start = 0.6e-9, .end = 1000.4e-9},
    };
    CU_ASSERT_EQUAL(pl_trace_writer_add(w, ev, 2), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    json_t *evs = json_object_get(root, "traceEvents");
    size_t n = json_array_size(evs);
    CU_ASSERT_FATAL(n >= 2);
    json_t *parent = json_array_get(evs, n - 2), *child = json_array_get(evs, n - 1);
    double pts = json_number_value(json_object_get(parent, "ts"));
    double pdur = json_number_value(json_object_get(parent, "dur"));
    double cts = json_number_value(json_object_get(child, "ts"));
    double cdur = json_number_value(json_object_get(child, "dur"));
    CU_ASSERT_DOUBLE_EQUAL(pts, 0.000, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(pdur, 1.000, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(cts, 0.001, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(cdur, 0.999, 1e-9);
    CU_ASSERT(cts + cdur <= pts + pdur + 1e-9);
    json_decref(root);
    unlink(path);
}

/* With no consumer the wait policy drops (and counts) instead of hanging. */
static int run_many(pl_rank *r)
{
    float *d;
    cudaMalloc((void **)&d, 64);
    for (int i = 0; i < 20; i++)
        if (pl_all_reduce(r->comm, d, d, 8, PL_FLOAT32, PL_SUM, r->stream)) return 1;
    cudaFree(d);
    return 0;
}

static void test_no_consumer_no_hang(void)
{
    pl_trace *t = pl_trace_create(4, 16, PL_TRACE_WAIT);
    char err[512];
    double t0 = pl_trace_now();
    CU_ASSERT_EQUAL(pl_world_run_traced(4, NULL, 10, t, run_many, NULL, err, sizeof err), 0);
    CU_ASSERT(pl_trace_now() - t0 < 8); /* a second per rank at most, not per event */
    uint64_t dropped = 0;
    for (int r = 0; r < 4; r++) dropped += pl_trace_dropped(t, r);
    /* per call and rank: the collective, 6 ring steps, (6 peer copies and 3
     * reduce kernels); all but what the rings hold are dropped */
    CU_ASSERT_EQUAL(dropped, 4 * 20 * (7 + RUNTIME_OPS * 9) - 4 * 16);
    CU_ASSERT_PTR_NULL(pl_trace_create(1, (size_t)-1, PL_TRACE_WAIT));
    pl_trace_destroy(t);
}

#ifdef PARALAB_SIMULATED_CUDA
/* Each kernel and copy names its stream: 1 + its number on the device (1
 * the legacy default stream; a new stream takes the smallest number no
 * live stream has). */
static int run_streams(pl_rank *r)
{
    float *d;
    cudaStream_t a, b;
    if (cudaMalloc((void **)&d, 64) || cudaStreamCreate(&a) || cudaStreamCreate(&b)) return 1;
    cudaMemsetAsync(d, 0, 64, a);
    cudaStreamSynchronize(a);
    cudaMemsetAsync(d, 0, 64, b);
    cudaStreamSynchronize(b);
    cudaMemset(d, 0, 64);
    cudaDeviceSynchronize();
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    cudaFree(d);
    (void)r;
    return 0;
}

static void test_stream_numbers(void)
{
    pl_trace *t = pl_trace_create(1, 64, PL_TRACE_WAIT);
    char err[512];
    CU_ASSERT_EQUAL_FATAL(pl_world_run_traced(1, NULL, 10, t, run_streams, NULL, err, sizeof err),
                          0);
    pl_event ev[64];
    size_t n = pl_trace_drain(t, ev, 64);
    int got[3] = {0, 0, 0}, k = 0;
    for (size_t i = 0; i < n; i++)
        if (ev[i].kind == PL_EV_COPY && k < 3) got[k++] = ev[i].stream;
    CU_ASSERT_EQUAL(k, 3);
    CU_ASSERT(got[0] >= 3);     /* a: made after the rank's own stream */
    CU_ASSERT(got[1] > got[0]); /* b: made after a (other threads may make some between) */
    CU_ASSERT_EQUAL(got[2], 1); /* the legacy default stream */
    pl_trace_destroy(t);
}
#endif

/* Every send and receive is an event of its rank, with bytes and peer. */
static int run_shift(pl_rank *r)
{
    int n = r->size, *d;
    cudaMalloc((void **)&d, 2 * sizeof(int));
    pl_group_start();
    pl_send(r->comm, d, 1, PL_INT32, (r->rank + 1) % n, r->stream);
    pl_recv(r->comm, d + 1, 1, PL_INT32, (r->rank + n - 1) % n, r->stream);
    int res = pl_group_end();
    cudaStreamSynchronize(r->stream);
    cudaFree(d);
    return res != PL_COMM_OK;
}

static void test_send_recv_events(void)
{
    pl_trace *t = pl_trace_create(3, 64, PL_TRACE_WAIT);
    char err[512];
    CU_ASSERT_EQUAL(pl_world_run_traced(3, NULL, 10, t, run_shift, NULL, err, sizeof err), 0);
    pl_event ev[64];
    size_t n = pl_trace_drain(t, ev, 64);
    int sends = 0, recvs = 0;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind == PL_EV_SEND) {
            sends++;
            CU_ASSERT_EQUAL(ev[i].peer, (ev[i].rank + 1) % 3);
            CU_ASSERT_EQUAL(ev[i].bytes, 4);
        }
        if (ev[i].kind == PL_EV_RECV) {
            recvs++;
            CU_ASSERT_EQUAL(ev[i].peer, (ev[i].rank + 2) % 3);
        }
    }
    CU_ASSERT_EQUAL(sends, 3);
    CU_ASSERT_EQUAL(recvs, 3);
    pl_trace_destroy(t);
}

/* ---- one track per stream; the narration and the metrics in the file ------------------ */

static pl_event slice_ev(int rank, int lane, int kind, int stream, double t0_us, double t1_us)
{
    pl_event e = {.rank = rank,
                  .lane = (uint8_t)lane,
                  .kind = (uint8_t)kind,
                  .stream = (uint8_t)stream,
                  .micro_batch = -1,
                  .layer = -1,
                  .peer = -1,
                  .start = t0_us * 1e-6,
                  .end = t1_us * 1e-6};
    snprintf(e.label, sizeof e.label, "%s %d", pl_event_kind_name((pl_event_kind)kind), stream);
    return e;
}

/* Pairs of slices on one track (pid, tid) that overlap without one holding
 * the other: Perfetto cannot draw them. */
static int unnested_pairs(json_t *evs)
{
    int bad = 0;
    size_t n = json_array_size(evs);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            json_t *a = json_array_get(evs, i), *b = json_array_get(evs, j);
            if (strcmp(json_string_value(json_object_get(a, "ph")), "X") ||
                strcmp(json_string_value(json_object_get(b, "ph")), "X") ||
                json_integer_value(json_object_get(a, "pid")) !=
                    json_integer_value(json_object_get(b, "pid")) ||
                json_integer_value(json_object_get(a, "tid")) !=
                    json_integer_value(json_object_get(b, "tid")))
                continue;
            double as = json_number_value(json_object_get(a, "ts"));
            double bs = json_number_value(json_object_get(b, "ts"));
            double ae = as + json_number_value(json_object_get(a, "dur"));
            double be = bs + json_number_value(json_object_get(b, "dur"));
            int apart = ae <= bs + 1e-9 || be <= as + 1e-9;
            int nested =
                (as <= bs + 1e-9 && be <= ae + 1e-9) || (bs <= as + 1e-9 && ae <= be + 1e-9);
            bad += !apart && !nested;
        }
    return bad;
}

/* Two kernels of one rank at once on two streams land on two tracks, each
 * named; a copy on one of those streams shares its track; the events of no
 * stream (a forward phase, a collective and its ring step) stay on their
 * lanes' tracks; no track has slices that overlap without nesting. */
static void test_tracks_per_stream(void)
{
    char path[] = "/tmp/paralab-trace-XXXXXX", err[512];
    close(mkstemp(path));
    pl_trace_writer *w = pl_trace_writer_open(path, 2, 0, 0, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    pl_event ev[] = {
        slice_ev(0, PL_LANE_COMPUTE, PL_EV_FORWARD, 0, 0, 20), /* tid 0 */
        slice_ev(0, PL_LANE_COMPUTE, PL_EV_KERNEL, 2, 1, 10),  /* stream 1: tid 4 */
        slice_ev(0, PL_LANE_COMPUTE, PL_EV_KERNEL, 3, 5, 15),  /* stream 2: tid 5 */
        slice_ev(0, PL_LANE_COPY, PL_EV_COPY, 3, 15, 18),      /* stream 2: tid 5 */
        slice_ev(0, PL_LANE_COMPUTE, PL_EV_KERNEL, 1, 2, 4),   /* stream 0: tid 3 */
        slice_ev(0, PL_LANE_COMM, PL_EV_RING_STEP, 0, 4, 6),   /* tid 2 */
        slice_ev(0, PL_LANE_COMM, PL_EV_COLLECTIVE, 0, 3, 12), /* tid 2, holds the step */
        slice_ev(1, PL_LANE_COMPUTE, PL_EV_KERNEL, 2, 0, 5),   /* rank 1, stream 1: tid 4 */
    };
    int want_tid[] = {0, 4, 5, 5, 3, 2, 2, 4}, n = (int)(sizeof ev / sizeof *ev);
    CU_ASSERT_EQUAL(pl_trace_writer_add(w, ev, (size_t)n), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    json_t *evs = json_object_get(root, "traceEvents"), *e;
    size_t i;
    int k = 0, names = 0;
    json_array_foreach(evs, i, e)
    {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        json_t *args = json_object_get(e, "args");
        int pid = (int)json_integer_value(json_object_get(e, "pid"));
        int tid = (int)json_integer_value(json_object_get(e, "tid"));
        if (!strcmp(ph, "M") &&
            !strcmp(json_string_value(json_object_get(e, "name")), "thread_name")) {
            static const char *want[] = {"compute",  "copy",    "comm", "stream 0 (default)",
                                         "stream 1", "stream 2"};
            CU_ASSERT(tid >= 0 && tid < 6 && tid != PL_LANE_COPY); /* the copy lane: unused */
            if (tid >= 0 && tid < 6)
                CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(args, "name")), want[tid]);
            names++;
        }
        if (strcmp(ph, "X")) continue;
        CU_ASSERT_FATAL(k < n);
        CU_ASSERT_EQUAL(pid, ev[k].rank);
        CU_ASSERT_EQUAL(tid, want_tid[k]);
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(args, "lane")), ev[k].lane);
        json_t *st = json_object_get(args, "stream");
        CU_ASSERT(ev[k].stream ? json_is_integer(st) && json_integer_value(st) == ev[k].stream - 1
                               : st == NULL);
        k++;
    }
    CU_ASSERT_EQUAL(k, n);
    CU_ASSERT_EQUAL(names, 5 + 1); /* rank 0: tids 0, 2, 3, 4, 5; rank 1: tid 4 */
    CU_ASSERT_EQUAL(unnested_pairs(evs), 0);
    json_decref(root);
    unlink(path);
}

/* The notes: each narrated step as an instant (its number and its text, a
 * character cut in two replaced so that the file stays JSON), each metric
 * value as a counter (NaN as null), in the order noted, on the writer's
 * clock; taken once. */
static void test_notes_written(void)
{
    pl_trace *t = pl_trace_create(1, 16, PL_TRACE_WAIT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    double t0 = pl_trace_now();
    pl_trace_note_step(t, 1, "the first step:\n  a table");
    pl_trace_note_metric(t, "loss", 0.25);
    pl_trace_note_step(t, 2, "cut \"here\" \xe2\x86");
    pl_trace_note_metric(t, "loss", NAN);
    pl_trace_note_step(NULL, 3, "nowhere"); /* no trace: nothing */
    char path[] = "/tmp/paralab-trace-XXXXXX", err[512];
    close(mkstemp(path));
    pl_trace_writer *w = pl_trace_writer_open(path, 1, 0, t0, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_EQUAL(pl_trace_writer_describe(w, "lab 99 \xc2\xb7 tests", 7, 5u, 1), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_take_notes(w, t), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_take_notes(w, t), 0); /* taken: nothing more */
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root) fprintf(stderr, "  %s: %s\n", path, jerr.text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    json_t *evs = json_object_get(root, "traceEvents"), *e;
    size_t i;
    int k = 0, lab = 0;
    double last = 0;
    json_array_foreach(evs, i, e)
    {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        const char *name = json_string_value(json_object_get(e, "name"));
        json_t *args = json_object_get(e, "args");
        if (!strcmp(ph, "M") && !strcmp(name, "paralab")) {
            lab++;
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(args, "title")),
                                   "lab 99 \xc2\xb7 tests");
            CU_ASSERT_EQUAL(json_integer_value(json_object_get(args, "steps")), 7);
            CU_ASSERT_EQUAL(json_integer_value(json_object_get(args, "panes")), 5);
            CU_ASSERT_EQUAL(json_integer_value(json_object_get(args, "stream_lanes")), 1);
        }
        if (!strcmp(ph, "M")) continue;
        double ts = json_number_value(json_object_get(e, "ts"));
        CU_ASSERT(ts >= last && ts < 60e6); /* in the order noted, from the origin */
        last = ts;
        if (k == 0 || k == 2) {
            CU_ASSERT_STRING_EQUAL(ph, "i");
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "cat")), "narration");
            CU_ASSERT_EQUAL(json_integer_value(json_object_get(args, "step")), k / 2 + 1);
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(args, "text")),
                                   k ? "cut \"here\" ??" : "the first step:\n  a table");
        } else {
            CU_ASSERT_STRING_EQUAL(ph, "C");
            CU_ASSERT_STRING_EQUAL(name, "loss");
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "cat")), "metric");
            json_t *v = json_object_get(args, "value");
            CU_ASSERT(k == 1 ? json_is_real(v) && json_real_value(v) == 0.25 : json_is_null(v));
        }
        k++;
    }
    CU_ASSERT_EQUAL(k, 4);
    CU_ASSERT_EQUAL(lab, 1);
    json_decref(root);
    unlink(path);
    pl_trace_note_metric(t, "gone", 1);
    CU_ASSERT_EQUAL(pl_trace_writer_take_notes(NULL, t), 0); /* no writer: dropped */
    pl_trace_destroy(t);
}

/* Text the writer writes is UTF-8 as JSON readers take it (jansson:
 * paralab-viz): an overlong form, a surrogate, a code point past U+10FFFF
 * or a byte no UTF-8 begins with becomes '?' a byte, as a character cut in
 * two does; the characters at each edge of the valid ranges stay. Found by
 * fuzz/roundtrip: the writer let E0 80 80 (an overlong NUL) through and
 * paralab-viz refused the file ("unable to decode byte 0xe0"). */
static void test_text_utf8(void)
{
    static const struct {
        const char *text, *written;
    } cases[] = {
        {"overlong \xe0\x80\x80 nul", "overlong ??? nul"},
        {"overlong \xf0\x8f\xbf\xbf", "overlong ????"},
        {"surrogate \xed\xa0\x80", "surrogate ???"},
        {"past U+10FFFF \xf4\x90\x80\x80 \xf5\x80\x80\x80", "past U+10FFFF ???? ????"},
        {"edges \xc2\x80 \xe0\xa0\x80 \xed\x9f\xbf \xee\x80\x80 \xf0\x90\x80\x80 "
         "\xf4\x8f\xbf\xbf",
         "edges \xc2\x80 \xe0\xa0\x80 \xed\x9f\xbf \xee\x80\x80 \xf0\x90\x80\x80 "
         "\xf4\x8f\xbf\xbf"},
    };
    enum { N = sizeof cases / sizeof *cases };
    char path[] = "/tmp/paralab-trace-XXXXXX", err[512];
    close(mkstemp(path));
    pl_trace_writer *w = pl_trace_writer_open(path, 1, 0, 0, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    for (int k = 0; k < N; k++) {
        pl_note x = {.kind = PL_NOTE_STEP, .step = k + 1, .at = k, .text = (char *)cases[k].text};
        CU_ASSERT_EQUAL(pl_trace_writer_add_notes(w, &x, 1), 0);
        pl_event e = {.kind = PL_EV_KERNEL,
                      .start = k + 0.5,
                      .end = k + 0.75,
                      .micro_batch = -1,
                      .layer = -1,
                      .peer = -1};
        snprintf(e.label, sizeof e.label, "%.47s", cases[k].text);
        CU_ASSERT_EQUAL(pl_trace_writer_add(w, &e, 1), 0);
    }
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root) fprintf(stderr, "  %s: %s\n", path, jerr.text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    json_t *evs = json_object_get(root, "traceEvents"), *e;
    size_t i;
    int steps = 0, slices = 0;
    json_array_foreach(evs, i, e)
    {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        json_t *args = json_object_get(e, "args");
        if (!strcmp(ph, "i")) {
            int k = (int)json_integer_value(json_object_get(args, "step")) - 1;
            CU_ASSERT_FATAL(k == steps);
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(args, "text")),
                                   cases[k].written);
            steps++;
        } else if (!strcmp(ph, "X")) {
            char want[48];
            snprintf(want, sizeof want, "%.47s", cases[slices].written);
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "name")), want);
            slices++;
        }
    }
    CU_ASSERT_EQUAL(steps, N);
    CU_ASSERT_EQUAL(slices, N);
    json_decref(root);
    unlink(path);
}

/* A rank's device memory as a note: taken in order with the others
 * (pl_trace_take_notes), a sample equal to the rank's last one not noted
 * again, a rank outside the trace ignored; written as a counter of the
 * rank's process (cat "memory", args used and total, bytes). */
static void test_memory_notes(void)
{
    pl_trace *t = pl_trace_create(2, 16, PL_TRACE_WAIT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    double t0 = pl_trace_now();
    pl_trace_note_memory(t, 1, 4096, 1 << 20);
    pl_trace_note_metric(t, "loss", 0.5);
    pl_trace_note_memory(t, 1, 4096, 1 << 20); /* the same: not again */
    pl_trace_note_memory(t, 0, 4096, 1 << 20); /* another rank's */
    pl_trace_note_memory(t, 1, 8192, 1 << 20);
    pl_trace_note_memory(t, 2, 1, 2); /* no such rank */
    pl_trace_note_memory(NULL, 0, 1, 2);
    pl_note *ns;
    size_t n = pl_trace_take_notes(t, &ns);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    static const int kind[] = {PL_NOTE_MEMORY, PL_NOTE_METRIC, PL_NOTE_MEMORY, PL_NOTE_MEMORY};
    static const int rank[] = {1, 0, 0, 1};
    static const double used[] = {4096, 0.5, 4096, 8192};
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(ns[i].kind, kind[i]);
        CU_ASSERT_EQUAL(ns[i].rank, rank[i]);
        CU_ASSERT_DOUBLE_EQUAL(ns[i].value, used[i], 0);
        CU_ASSERT(ns[i].at >= t0 && (i == 0 || ns[i].at >= ns[i - 1].at));
        if (kind[i] == PL_NOTE_MEMORY) CU_ASSERT_DOUBLE_EQUAL(ns[i].total, 1 << 20, 0);
    }
    CU_ASSERT_STRING_EQUAL(ns[1].name, "loss");
    pl_note *none;
    CU_ASSERT_EQUAL(pl_trace_take_notes(t, &none), 0); /* taken */
    CU_ASSERT_PTR_NULL(none);
    char path[] = "/tmp/paralab-trace-XXXXXX", err[512];
    close(mkstemp(path));
    pl_trace_writer *w = pl_trace_writer_open(path, 2, 0, t0, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_EQUAL(pl_trace_writer_add_notes(w, ns, n), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    pl_trace_free_notes(ns, n);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    json_t *evs = json_object_get(root, "traceEvents"), *e;
    size_t i;
    int k = 0, mem = 0;
    json_array_foreach(evs, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "C")) continue;
        json_t *args = json_object_get(e, "args");
        const char *cat = json_string_value(json_object_get(e, "cat"));
        CU_ASSERT_STRING_EQUAL(cat, k == 1 ? "metric" : "memory");
        if (k != 1) {
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "name")), "device memory");
            CU_ASSERT_EQUAL(json_integer_value(json_object_get(e, "pid")), rank[k]);
            CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(args, "used")), used[k], 0);
            CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(args, "total")), 1 << 20, 0);
            CU_ASSERT_EQUAL(json_object_size(args), 2);
            mem++;
        }
        k++;
    }
    CU_ASSERT_EQUAL(k, 4);
    CU_ASSERT_EQUAL(mem, 3);
    json_decref(root);
    unlink(path);
    pl_trace_destroy(t);
}

/* pl_step notes each step rank 0 shows, with the player's number and the
 * text, once (not once per rank). */
static int run_two_steps(pl_rank *r)
{
    if (pl_step(r, "step %s", "one")) return 1;
    return pl_step(r, "step %s, of %d ranks", "two", r->size);
}

static void test_steps_noted(void)
{
    FILE *out = tmpfile();
    pl_player *p = pl_player_create(PL_MODE_PLAY, 100, 1, out); /* headless: never waits */
    pl_trace *t = pl_trace_create(3, 64, PL_TRACE_WAIT);
    CU_ASSERT_FATAL(p && t);
    pl_world_config cfg = {.n = 3, .trace = t, .player = p};
    char err[512], path[] = "/tmp/paralab-trace-XXXXXX";
    CU_ASSERT_EQUAL_FATAL(pl_world_run_config(&cfg, run_two_steps, NULL, err, sizeof err), 0);
    close(mkstemp(path));
    pl_trace_writer *w = pl_trace_writer_open(path, 3, 0, -1, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_EQUAL(pl_trace_writer_take_notes(w, t), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    json_t *evs = json_object_get(root, "traceEvents"), *e;
    size_t i;
    int k = 0;
    static const char *want[] = {"step one", "step two, of 3 ranks"};
    json_array_foreach(evs, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "i")) continue;
        json_t *args = json_object_get(e, "args");
        CU_ASSERT_FATAL(k < 2);
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(args, "step")), k + 1);
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(args, "text")), want[k]);
        k++;
    }
    CU_ASSERT_EQUAL(k, 2);
    json_decref(root);
    unlink(path);
    pl_trace_destroy(t);
    pl_player_destroy(p);
    fclose(out);
}

int register_trace_suite(void)
{
    static const unit_test t[] = {
        {"ring: wait policy loses nothing", test_ring_wait_keeps_everything},
        {"ring: drop policy counts drops", test_ring_drop_counts},
        {"events carry the step they were recorded in", test_events_carry_their_step},
        {"Chrome trace of an all_reduce", test_trace_of_all_reduce},
        {"writer errors and escaping", test_writer_errors},
        {"writer keeps nested events nested", test_writer_keeps_nesting},
        {"no consumer: drops, no hang", test_no_consumer_no_hang},
        {"send and receive events", test_send_recv_events},
        {"a track per stream, all nested", test_tracks_per_stream},
        {"the narration and the metrics in the file", test_notes_written},
        {"text in the file is UTF-8 a JSON reader takes (found by fuzz/roundtrip)", test_text_utf8},
        {"pl_step notes each step once", test_steps_noted},
        {"device memory notes: in order, once per change, as counters", test_memory_notes},
#ifdef PARALAB_SIMULATED_CUDA
        {"each op names its stream (sim)", test_stream_numbers},
#endif
    };
    return UNIT_SUITE("trace", t);
}
