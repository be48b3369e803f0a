/*
 * trace_bench.c — paralab-bench trace: what recording an event costs.
 * 8 producer threads (ranks) each record events into their own ring while
 * one consumer drains them all, as the UI will; each producer's CPU time
 * per event is the cost (the wall time on a 2-core machine also holds the
 * time the others run). Goal: <= 50 ns per event.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "bench.h"
#include "paralab/trace.h"

enum { PRODUCERS = 8 };

typedef struct {
    pl_trace *t;
    int rank;
    long events;
    double cpu_s;
} producer_arg;

static atomic_int producers_done;

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *produce(void *p)
{
    producer_arg *a = p;
    pl_event e = {.rank = a->rank,
                  .lane = PL_LANE_COMM,
                  .kind = PL_EV_RING_STEP,
                  .micro_batch = -1,
                  .layer = -1,
                  .peer = 0,
                  .bytes = 4096};
    double t0 = thread_cpu();
    for (long i = 0; i < a->events; i++) {
        e.micro_batch = (int)i;
        pl_trace_record(a->t, &e);
    }
    a->cpu_s = thread_cpu() - t0;
    atomic_fetch_add(&producers_done, 1);
    return NULL;
}

int bench_trace(long events_per_rank)
{
    pl_trace *t = pl_trace_create(PRODUCERS, 4096, PL_TRACE_WAIT);
    if (!t) {
        fprintf(stderr, "paralab-bench: out of memory\n");
        return 1;
    }
    producer_arg args[PRODUCERS];
    pthread_t th[PRODUCERS];
    atomic_store(&producers_done, 0);
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    for (int r = 0; r < PRODUCERS; r++) {
        args[r] = (producer_arg){t, r, events_per_rank, 0};
        pthread_create(&th[r], NULL, produce, &args[r]);
    }
    static pl_event buf[4096];
    long drained = 0, want = events_per_rank * PRODUCERS;
    while (drained < want) {
        size_t n = pl_trace_drain(t, buf, 4096);
        drained += (long)n;
        if (!n) sched_yield();
    }
    for (int r = 0; r < PRODUCERS; r++) pthread_join(th[r], NULL);
    clock_gettime(CLOCK_MONOTONIC, &w1);
    double cpu = 0, wall = (double)(w1.tv_sec - w0.tv_sec) + (w1.tv_nsec - w0.tv_nsec) * 1e-9;
    for (int r = 0; r < PRODUCERS; r++) cpu += args[r].cpu_s;
    double ns = cpu / (double)want * 1e9;
    printf("paralab-bench trace: %d producers x %ld events into per-rank rings (4096 each), one "
           "consumer draining\n\n",
           PRODUCERS, events_per_rank);
    printf("%-28s %14s %14s %14s %s\n", "", "events", "ns/event", "Mevents/s", "goal");
    printf("%-28s %14ld %14.1f %14.1f %s <= 50 ns per event\n", "record (producer CPU time)", want,
           ns, (double)want / wall / 1e6, ns <= 50 ? "met:" : "MISSED:");
    printf("\nall %ld events drained, %llu dropped\n", drained,
           (unsigned long long)pl_trace_dropped(t, 0));
    printf("goal (recording an event at most 50 ns of its producer's CPU time): %.1f ns: %s\n", ns,
           ns <= 50 ? "met" : "not met");
    pl_trace_destroy(t);
    return drained == want ? 0 : 1;
}
