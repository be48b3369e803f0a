/*
 * test_step.c — narrated steps: every rank meets, rank 0's narration is
 * shown once per step; headless never blocks, play waits a narration's
 * reading time over the speed, step mode waits for an advance, and quitting
 * stops every rank. A pause of any length is no deadlock (the watchdog
 * counts only time in which the ranks are free to run), a real deadlock is
 * still found in step mode, and what the ranks do at step k is exactly that
 * step's work (pl_step_begin: the ranks never run ahead of the narration).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "paralab/clock.h"
#include "paralab/step.h"
#include "paralab/trace.h"
#include "suites.h"

static int three_steps(pl_rank *r)
{
    if (pl_step(r, "one: rank %d speaks", r->rank)) return 1;
    if (pl_step(r, "two")) return 1;
    return pl_step(r, "three") != 0;
}

static int run_with(pl_player *p, pl_rank_fn fn, char *err, size_t cap)
{
    pl_world_config cfg = {.n = 4, .comm_timeout_s = 10, .player = p};
    return pl_world_run_config(&cfg, fn, NULL, err, cap);
}

static void test_headless(void)
{
    char buf[512] = "";
    FILE *f = fmemopen(buf, sizeof buf, "w");
    pl_player *p = pl_player_create(PL_MODE_STEP, 1, 1, f); /* headless: never blocks */
    char err[512];
    double t0 = pl_now();
    CU_ASSERT_EQUAL(run_with(p, three_steps, err, sizeof err), 0);
    CU_ASSERT(pl_now() - t0 < 5);
    fclose(f);
    CU_ASSERT_STRING_EQUAL(buf, "[1] one: rank 0 speaks\n[2] two\n[3] three\n");
    char cur[64];
    CU_ASSERT_EQUAL(pl_player_current(p, cur, sizeof cur), 3);
    CU_ASSERT_STRING_EQUAL(cur, "three");
    pl_player_destroy(p);
}

/* The terminal reader of step mode without the UI: an empty line, blanks
 * alone or any word but q advance; a line whose first non-blank character
 * is q (or Q) quits, and nothing after it is read; a long line is one line. */
static void test_read_lines(void)
{
    struct {
        const char *in;
        int advances, quits;
        const char *left; /* what stays unread */
    } c[] = {
        {"\n \n\t\nnext\n", 4, 0, ""},
        {"q\nnot read\n", 0, 1, "not read\n"},
        {"\n q\nnot read\n", 1, 1, "not read\n"},
        {" \t Q and more words\n\n", 0, 1, "\n"},
        {"\r\n  quit\r\n", 1, 1, ""},
        {"x q\n", 1, 0, ""},
        {"\n\n\n", 3, 0, ""},
    };
    char longline[300];
    memset(longline, ' ', 200);
    snprintf(longline + 200, sizeof longline - 200, "q\nleft\n"); /* blanks past any buffer */
    for (size_t i = 0; i <= sizeof c / sizeof *c; i++) {
        const char *in = i < sizeof c / sizeof *c ? c[i].in : longline;
        int want_adv = i < sizeof c / sizeof *c ? c[i].advances : 0,
            want_quit = i < sizeof c / sizeof *c ? c[i].quits : 1;
        const char *want_left = i < sizeof c / sizeof *c ? c[i].left : "left\n";
        char buf[512];
        snprintf(buf, sizeof buf, "%s", in);
        FILE *f = fmemopen(buf, strlen(buf), "r");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        pl_player *p = pl_player_create(PL_MODE_STEP, 1, 1, NULL);
        CU_ASSERT_EQUAL(pl_player_read_lines(p, f), want_adv);
        CU_ASSERT_EQUAL(pl_player_quitting(p), want_quit);
        char rest[512] = "";
        size_t n = fread(rest, 1, sizeof rest - 1, f);
        rest[n] = '\0';
        CU_ASSERT_STRING_EQUAL(rest, want_left);
        fclose(f);
        pl_player_destroy(p);
    }
}

static void test_read_seconds(void)
{
    /* 2 s, and 0.3 s a word (200 words a minute) */
    CU_ASSERT_DOUBLE_EQUAL(pl_step_read_seconds(""), 2.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(pl_step_read_seconds(NULL), 2.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(pl_step_read_seconds("two"), 2.3, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(pl_step_read_seconds("one: rank 0 speaks"), 3.2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(pl_step_read_seconds("  a\n  table\tof   five words "), 3.5, 1e-12);
    /* Lab 06's step 7: 25 words, 9.5 s at x1 (it was 1 s: too short to read) */
    CU_ASSERT_DOUBLE_EQUAL(
        pl_step_read_seconds("All-reduce, two ways, on 1048576 floats: naive (every rank sends to "
                             "rank 0, which adds and sends the sum back) and ring "
                             "(reduce-scatter, then all-gather)."),
        2.0 + 0.3 * 25, 1e-12);
}

/* A UI's listener hears each step as it is shown, before the step's work
 * (so its transcript has the work under its narration), and a quiet player
 * prints nothing. */
static char heard[256];
static void listen(void *ctx, int step, const char *text)
{
    size_t n = strlen(heard);
    snprintf(heard + n, sizeof heard - n, "[%d] %s|%s", step, text, (const char *)ctx);
}

static int steps_with_work(pl_rank *r)
{
    for (int k = 1; k <= 3; k++) {
        if (pl_step(r, "step %d", k)) return 1;
        if (r->rank == 0) { /* the step's work, as the lab prints it */
            size_t n = strlen(heard);
            snprintf(heard + n, sizeof heard - n, "work %d|", k);
        }
    }
    return 0;
}

static void test_listener(void)
{
    char buf[64] = "";
    FILE *f = fmemopen(buf, sizeof buf, "w");
    pl_player *p = pl_player_create(PL_MODE_STEP, 1, 1, f);
    pl_player_set_quiet(p, 1);
    heard[0] = '\0';
    pl_player_set_listener(p, listen, "");
    char err[512];
    CU_ASSERT_EQUAL(run_with(p, steps_with_work, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(heard, "[1] step 1|work 1|[2] step 2|work 2|[3] step 3|work 3|");
    pl_player_set_listener(p, NULL, NULL); /* off: nothing more heard */
    heard[0] = '\0';
    CU_ASSERT_EQUAL(run_with(p, steps_with_work, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(heard, "work 1|work 2|work 3|");
    fclose(f);
    CU_ASSERT_STRING_EQUAL(buf, ""); /* quiet */
    pl_player_destroy(p);
}

static void test_play_paces(void)
{
    FILE *f = fopen("/dev/null", "w");
    pl_player *p = pl_player_create(PL_MODE_PLAY, 20, 0, f);
    char err[512];
    double t0 = pl_now();
    CU_ASSERT_EQUAL(run_with(p, three_steps, err, sizeof err), 0);
    double took = pl_now() - t0;
    /* step 2 waits for step 1's reading time over the speed, 3.2 s / 20,
     * step 3 for step 2's, 2.3 s / 20 */
    CU_ASSERT(took >= (3.2 + 2.3) / 20 - 0.001);
    fclose(f);
    pl_player_destroy(p);
}

static void *advance_later(void *arg)
{
    pl_player *p = arg;
    char cur[64];
    for (int k = 1; k <= 3; k++) {
        while (pl_player_current(p, cur, sizeof cur) < k) usleep(1000);
        usleep(20000);
        pl_player_advance(p);
    }
    return NULL;
}

static void test_step_waits_for_advance(void)
{
    FILE *f = fopen("/dev/null", "w");
    pl_player *p = pl_player_create(PL_MODE_STEP, 1, 0, f);
    pl_player_set_interactive(p, 1);
    pthread_t th;
    pthread_create(&th, NULL, advance_later, p);
    char err[512];
    double t0 = pl_now();
    CU_ASSERT_EQUAL(run_with(p, three_steps, err, sizeof err), 0);
    CU_ASSERT(pl_now() - t0 >= 0.039); /* steps 2 and 3 wait for an advance, 20 ms each */
    pthread_join(th, NULL);
    fclose(f);
    pl_player_destroy(p);
}

static void *quit_later(void *arg)
{
    usleep(30000);
    pl_player_quit(arg);
    return NULL;
}

static void test_quit_stops_every_rank(void)
{
    FILE *f = fopen("/dev/null", "w");
    pl_player *p = pl_player_create(PL_MODE_STEP, 1, 0, f);
    pl_player_set_interactive(p, 1);
    pthread_t th;
    pthread_create(&th, NULL, quit_later, p);
    char err[512];
    CU_ASSERT_NOT_EQUAL(run_with(p, three_steps, err, sizeof err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "stopped by the student"));
    pthread_join(th, NULL);
    fclose(f);
    pl_player_destroy(p);
}

/* ---- pauses and the deadlock watchdog ---------------------------------------------------- */

typedef struct {
    double hold_s, free_s, hold2_s; /* rank 0: held, then free, then held again */
} hold_plan;

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Rank 0 is held (as by a paused step) for hold_s, free for free_s, held
 * for hold2_s, then meets; the others wait for it in the barrier. */
static int held_then_meet(pl_rank *r)
{
    const hold_plan *h = r->arg;
    if (r->rank == 0) {
        pl_comm_hold(r->comm, 1);
        sleep_s(h->hold_s);
        pl_comm_hold(r->comm, 0);
        sleep_s(h->free_s);
        pl_comm_hold(r->comm, 1);
        sleep_s(h->hold2_s);
        pl_comm_hold(r->comm, 0);
    }
    if (pl_comm_barrier(r->comm)) {
        snprintf(r->error, sizeof r->error, "%s", pl_comm_last_error(r->comm));
        return 1;
    }
    return 0;
}

static void test_hold_stops_the_watchdog(void)
{
    /* 1.65 s of waiting for rank 0 with a timeout of 0.6 s: all but 0.05 s
     * of it while rank 0 is held */
    hold_plan h = {0.8, 0.05, 0.8};
    char err[1024] = "";
    CU_ASSERT_EQUAL(pl_world_run(3, NULL, 0.6, held_then_meet, &h, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(err, "");
}

static void test_free_time_still_counts(void)
{
    /* held 0.2 s, then 1.2 s free: the watchdog (0.6 s) runs out in the free part */
    hold_plan h = {0.2, 1.2, 0};
    char err[1024] = "";
    CU_ASSERT_NOT_EQUAL(pl_world_run(2, NULL, 0.6, held_then_meet, &h, err, sizeof err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "rank 1: deadlock: no progress for 0.6 s: rank 0 is in no "
                                       "communicator call; rank 1 waits in barrier"));
}

/* Rank 0 works on its device (memsets, each one progress) for work_s while
 * the others wait for it in the barrier. */
static int works_then_meets(pl_rank *r)
{
    const double *work_s = r->arg;
    if (r->rank == 0) {
        void *d = NULL;
        if (cudaMalloc(&d, 4096) != cudaSuccess) return 1;
        for (double t0 = pl_now(); pl_now() - t0 < *work_s;)
            if (cudaMemset(d, 0, 4096) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
                cudaFree(d);
                return 1;
            }
        cudaFree(d);
    }
    if (pl_comm_barrier(r->comm)) {
        snprintf(r->error, sizeof r->error, "%s", pl_comm_last_error(r->comm));
        return 1;
    }
    return 0;
}

static void test_progress_is_no_deadlock(void)
{
    /* 1.5 s of rank 0's device work against a 0.5 s timeout: a slow or
     * busy machine makes a rank late, and late is not deadlocked */
    double work_s = 1.5;
    char err[1024] = "";
    CU_ASSERT_EQUAL(pl_world_run(2, NULL, 0.5, works_then_meets, &work_s, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(err, "");
}

/* The student reads step 2 for `hold` seconds, the others briefly, until
 * step `last` or `stop`. */
typedef struct {
    pl_player *p;
    double hold;
    int last;
    volatile int stop;
} reader;

static void *read_slowly(void *arg)
{
    reader *rd = arg;
    char cur[64];
    for (int k = 1; k <= rd->last; k++) {
        while (pl_player_current(rd->p, cur, sizeof cur) < k)
            if (__atomic_load_n(&rd->stop, __ATOMIC_ACQUIRE))
                return NULL;
            else
                usleep(1000);
        sleep_s(k == 2 ? rd->hold : 0.02);
        pl_player_advance(rd->p);
    }
    return NULL;
}

static void test_paused_step_is_no_deadlock(void)
{
    /* step mode, a timeout of 0.6 s, step 2 read for 1.2 s: every rank but
     * rank 0 waits 1.2 s in pl_step's meeting */
    FILE *f = fopen("/dev/null", "w");
    pl_player *p = pl_player_create(PL_MODE_STEP, 1, 0, f);
    pl_player_set_interactive(p, 1);
    reader rd = {p, 1.2, 3, 0};
    pthread_t th;
    pthread_create(&th, NULL, read_slowly, &rd);
    char err[1024] = "";
    pl_world_config cfg = {.n = 4, .comm_timeout_s = 0.6, .player = p};
    CU_ASSERT_EQUAL(pl_world_run_config(&cfg, three_steps, NULL, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(err, "");
    pthread_join(th, NULL);
    char cur[64];
    CU_ASSERT_EQUAL(pl_player_current(p, cur, sizeof cur), 3);
    fclose(f);
    pl_player_destroy(p);
}

static void test_paused_play_is_no_deadlock(void)
{
    /* play mode at x3, a timeout of 0.6 s: step 2 waits 3.2 s / 3 for step
     * 1 to be read, step 3 2.3 s / 3 */
    FILE *f = fopen("/dev/null", "w");
    pl_player *p = pl_player_create(PL_MODE_PLAY, 3, 0, f);
    char err[1024] = "";
    pl_world_config cfg = {.n = 2, .comm_timeout_s = 0.6, .player = p};
    double t0 = pl_now();
    CU_ASSERT_EQUAL(pl_world_run_config(&cfg, three_steps, NULL, err, sizeof err), 0);
    CU_ASSERT(pl_now() - t0 >= (3.2 + 2.3) / 3 - 0.001);
    CU_ASSERT_STRING_EQUAL(err, "");
    fclose(f);
    pl_player_destroy(p);
}

/* Three steps, the second read for long; then rank 0 steps on while rank 1
 * waits for a message rank 0 never sends: a deadlock, in step mode. */
static int steps_then_deadlock(pl_rank *r)
{
    if (pl_step(r, "one") || pl_step(r, "two") || pl_step(r, "three")) return 1;
    if (r->rank == 0) return pl_step(r, "four") != 0;
    float *d = NULL;
    cudaMalloc((void **)&d, 4 * sizeof(float));
    int rc = pl_recv(r->comm, d, 4, PL_FLOAT32, 0, r->stream);
    if (rc) snprintf(r->error, sizeof r->error, "%s", pl_comm_last_error(r->comm));
    cudaFree(d);
    return rc != 0;
}

static void test_deadlock_found_in_step_mode(void)
{
    FILE *f = fopen("/dev/null", "w");
    pl_player *p = pl_player_create(PL_MODE_STEP, 1, 0, f);
    pl_player_set_interactive(p, 1);
    reader rd = {p, 1.0, 4, 0}; /* step 2 held 1 s: longer than the timeout */
    pthread_t th;
    pthread_create(&th, NULL, read_slowly, &rd);
    char err[1024] = "";
    pl_world_config cfg = {.n = 2, .comm_timeout_s = 0.6, .player = p};
    CU_ASSERT_NOT_EQUAL(pl_world_run_config(&cfg, steps_then_deadlock, NULL, err, sizeof err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "deadlock: no progress for 0.6 s: rank 0 waits in barrier"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "rank 1 waits in recv from rank 0 (4 float"));
    char cur[64];
    CU_ASSERT_EQUAL(pl_player_current(p, cur, sizeof cur), 3); /* step 4 never came */
    __atomic_store_n(&rd.stop, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    fclose(f);
    pl_player_destroy(p);
}

/* ---- each step's work under its own narration ---------------------------------------------- */

/* An event of the rank's work, tagged with the step it belongs to. */
static void work(pl_rank *r, int step)
{
    pl_event e = {.rank = r->rank, .micro_batch = step, .layer = -1, .peer = -1};
    snprintf(e.label, sizeof e.label, "work of step %d", step);
    pl_trace_record(r->trace, &e);
}

/* Announced steps (1, 4: the work after the narration), reported ones (2:
 * the work before it, from pl_step_begin), and both (3). */
static int four_steps(pl_rank *r)
{
    if (pl_step(r, "one")) return 1;
    work(r, 1);
    if (pl_step_begin(r)) return 1;
    work(r, 2);
    if (pl_step(r, "two: reports its work")) return 1;
    if (pl_step_begin(r)) return 1;
    work(r, 3);
    if (pl_step(r, "three")) return 1;
    work(r, 3);
    if (pl_step(r, "four")) return 1;
    work(r, 4);
    return 0;
}

typedef struct {
    pl_player *p;
    pl_trace *t;
    volatile int done;
    int waits, seen[6], wrong_step, bad_count, step_at[4];
    char narration[4][64];
} ui_sim;

static void take(ui_sim *u, int shown)
{
    pl_event ev[64];
    size_t n;
    while ((n = pl_trace_drain(u->t, ev, 64)) > 0)
        for (size_t i = 0; i < n; i++) {
            int k = ev[i].micro_batch;
            if (k < 1 || k > 4 || (shown && k > shown)) u->wrong_step++;
            if (k >= 0 && k < 6) u->seen[k]++;
        }
}

/* As the UI does: at each step, once the ranks wait for the student, the
 * events so far must be exactly the work of the steps shown. */
static void *watch_steps(void *arg)
{
    ui_sim *u = arg;
    static const int want[5] = {0, 2, 2, 4, 2}; /* events of step k, 2 ranks */
    while (!__atomic_load_n(&u->done, __ATOMIC_ACQUIRE)) {
        if (!pl_player_waiting(u->p)) {
            usleep(500);
            continue;
        }
        int k = pl_player_current(u->p, u->narration[u->waits & 3], sizeof u->narration[0]);
        take(u, k);
        for (int j = 1; j <= 4; j++)
            if (u->seen[j] != (j <= k ? want[j] : 0)) u->bad_count++;
        u->step_at[u->waits & 3] = k;
        u->waits++;
        pl_player_advance(u->p);
        while (pl_player_waiting(u->p) && pl_player_current(u->p, NULL, 0) == k) usleep(200);
    }
    take(u, 0);
    return NULL;
}

static void test_work_under_its_own_narration(void)
{
    FILE *f = fopen("/dev/null", "w");
    pl_player *p = pl_player_create(PL_MODE_STEP, 1, 0, f);
    pl_player_set_interactive(p, 1);
    pl_player_set_quiet(p, 1);
    ui_sim u = {.p = p, .t = pl_trace_create(2, 64, PL_TRACE_DROP)};
    pthread_t th;
    pthread_create(&th, NULL, watch_steps, &u);
    char err[1024] = "";
    pl_world_config cfg = {.n = 2, .comm_timeout_s = 10, .trace = u.t, .player = p};
    CU_ASSERT_EQUAL(pl_world_run_config(&cfg, four_steps, NULL, err, sizeof err), 0);
    __atomic_store_n(&u.done, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(u.waits, 3); /* steps 1, 2 and 3 waited for the student; 4 is the last */
    CU_ASSERT_EQUAL(u.step_at[0], 1);
    CU_ASSERT_EQUAL(u.step_at[1], 2);
    CU_ASSERT_EQUAL(u.step_at[2], 3);
    CU_ASSERT_STRING_EQUAL(u.narration[0], "one");
    CU_ASSERT_STRING_EQUAL(u.narration[1], "two: reports its work");
    CU_ASSERT_STRING_EQUAL(u.narration[2], "three");
    CU_ASSERT_EQUAL(u.wrong_step, 0); /* nothing of a later step was there to see */
    CU_ASSERT_EQUAL(u.bad_count, 0);  /* and all of the steps shown */
    CU_ASSERT_EQUAL(u.seen[1], 2);
    CU_ASSERT_EQUAL(u.seen[2], 2);
    CU_ASSERT_EQUAL(u.seen[3], 4);
    CU_ASSERT_EQUAL(u.seen[4], 2);
    pl_trace_destroy(u.t);
    fclose(f);
    pl_player_destroy(p);
}

/* While a begun step's work runs, the player shows it as running. */
static char running_text[128];
static int running_step;
static int begin_then_look(pl_rank *r)
{
    if (pl_step(r, "one")) return 1;
    if (pl_step_begin(r)) return 1;
    if (pl_step_begin(r)) return 1; /* twice: only meets */
    if (r->rank == 0)
        running_step = pl_player_current(r->player, running_text, sizeof running_text);
    return pl_step(r, "two") != 0;
}

static void test_begin_shows_running(void)
{
    char buf[512] = "";
    FILE *f = fmemopen(buf, sizeof buf, "w");
    pl_player *p = pl_player_create(PL_MODE_STEP, 1, 1, f);
    char err[512];
    CU_ASSERT_EQUAL(run_with(p, begin_then_look, err, sizeof err), 0);
    fclose(f);
    CU_ASSERT_EQUAL(running_step, 2);
    CU_ASSERT_STRING_EQUAL(running_text, PL_STEP_RUNNING);
    CU_ASSERT_STRING_EQUAL(buf, "[1] one\n[2] two\n"); /* pl_step_begin prints nothing */
    char cur[64];
    CU_ASSERT_EQUAL(pl_player_current(p, cur, sizeof cur), 2);
    CU_ASSERT_STRING_EQUAL(cur, "two");
    pl_player_destroy(p);
}

int register_step_suite(void)
{
    static const unit_test t[] = {
        {"headless: one line per step, no wait", test_headless},
        {"a narration's reading time", test_read_seconds},
        {"step mode's terminal lines: q (after blanks) quits, any other line advances",
         test_read_lines},
        {"play: a step's reading time over the speed", test_play_paces},
        {"step: waits for the student", test_step_waits_for_advance},
        {"quit stops every rank", test_quit_stops_every_rank},
        {"a held rank stops the watchdog's clock", test_hold_stops_the_watchdog},
        {"time no rank is held still counts", test_free_time_still_counts},
        {"a rank that works for longer than the timeout is no deadlock",
         test_progress_is_no_deadlock},
        {"step mode: a long pause is no deadlock", test_paused_step_is_no_deadlock},
        {"play mode: a long pause is no deadlock", test_paused_play_is_no_deadlock},
        {"step mode: a real deadlock is still found", test_deadlock_found_in_step_mode},
        {"each step's work under its own narration", test_work_under_its_own_narration},
        {"pl_step_begin: the step runs, then its narration", test_begin_shows_running},
        {"a listener hears each step before its work", test_listener},
    };
    return UNIT_SUITE("step", t);
}
