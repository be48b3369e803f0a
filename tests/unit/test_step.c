/*
 * test_step.c — narrated steps: every rank meets, rank 0's narration is
 * shown once per step; headless never blocks, play waits 1/speed, step mode
 * waits for an advance, and quitting stops every rank.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "paralab/step.h"
#include "suites.h"

static int three_steps(pl_rank *r)
{
    if (pl_step(r, "one: rank %d speaks", r->rank)) return 1;
    if (pl_step(r, "two")) return 1;
    return pl_step(r, "three") != 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
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
    double t0 = now();
    CU_ASSERT_EQUAL(run_with(p, three_steps, err, sizeof err), 0);
    CU_ASSERT(now() - t0 < 5);
    fclose(f);
    CU_ASSERT_STRING_EQUAL(buf, "[1] one: rank 0 speaks\n[2] two\n[3] three\n");
    char cur[64];
    CU_ASSERT_EQUAL(pl_player_current(p, cur, sizeof cur), 3);
    CU_ASSERT_STRING_EQUAL(cur, "three");
    pl_player_destroy(p);
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
    pl_player *p = pl_player_create(PL_MODE_PLAY, 20, 0, f); /* 50 ms a step */
    char err[512];
    double t0 = now();
    CU_ASSERT_EQUAL(run_with(p, three_steps, err, sizeof err), 0);
    double took = now() - t0;
    CU_ASSERT(took >= 0.099 && took < 5); /* steps 2 and 3 wait 50 ms each */
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
    double t0 = now();
    CU_ASSERT_EQUAL(run_with(p, three_steps, err, sizeof err), 0);
    CU_ASSERT(now() - t0 >= 0.039); /* steps 2 and 3 wait for an advance, 20 ms each */
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

int register_step_suite(void)
{
    CU_pSuite s = CU_add_suite("step", NULL, NULL);
    if (!s) return -1;
    if (!CU_add_test(s, "headless: one line per step, no wait", test_headless) ||
        !CU_add_test(s, "play: 1/speed seconds a step", test_play_paces) ||
        !CU_add_test(s, "step: waits for the student", test_step_waits_for_advance) ||
        !CU_add_test(s, "quit stops every rank", test_quit_stops_every_rank) ||
        !CU_add_test(s, "a listener hears each step before its work", test_listener))
        return -1;
    return 0;
}
