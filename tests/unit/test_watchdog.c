/*
 * test_watchdog.c — the watchdog counts CPU time, never the wall clock: a
 * process that sleeps, or is stopped (SIGSTOP), for five times the limit is
 * not reported; one that spins with no progress is; work that makes progress
 * (ops finishing) is not, however much CPU it uses; and a kernel stuck in one
 * block is named (simulated GPUs). No assertion depends on how fast the
 * machine is: each loop ends on an event or on CPU time, not on wall time.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernels.h"
#include "paralab/watchdog.h"
#include "suites.h"

static atomic_int fired;
static char report[1200];

static void on_stall(const char *r, void *user)
{
    (void)user;
    snprintf(report, sizeof report, "%s", r);
    atomic_store(&fired, 1);
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Sleeping 1 s, five times the 0.2 s limit, uses no CPU: never reported. */
static void test_sleep_is_no_stall(void)
{
    atomic_store(&fired, 0);
    report[0] = '\0';
    CU_ASSERT_EQUAL_FATAL(pl_watchdog_start(0.2, on_stall, NULL), 0);
    nap(1.0);
    pl_watchdog_stop();
    CU_ASSERT_EQUAL(atomic_load(&fired), 0);
    if (atomic_load(&fired)) fprintf(stderr, "  reported: %s\n", report);
}

/* A child stopped for 1 s (SIGSTOP), then continued, finishes unreported. */
static void test_stopped_is_no_stall(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        atomic_store(&fired, 0);
        report[0] = '\0';
        if (pl_watchdog_start(0.2, on_stall, NULL) != 0) _exit(3);
        raise(SIGSTOP);
        nap(0.3); /* the watchdog samples again after the stop */
        pl_watchdog_stop();
        _exit(atomic_load(&fired) ? 1 : 0);
    }
    CU_ASSERT_FATAL(pid > 0);
    int st = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &st, WUNTRACED), pid);
    CU_ASSERT(WIFSTOPPED(st));
    nap(1.0);
    kill(pid, SIGCONT);
    CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);
    CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Spinning with no progress is reported once the process has spent the
 * limit of CPU time (the loop is bounded by CPU time, not wall time). */
static void test_spin_is_a_stall(void)
{
    atomic_store(&fired, 0);
    report[0] = '\0';
    CU_ASSERT_EQUAL_FATAL(pl_watchdog_start(0.2, on_stall, NULL), 0);
    double t0 = cpu_now();
    volatile unsigned long x = 0;
    while (!atomic_load(&fired) && cpu_now() - t0 < 30)
        for (int i = 0; i < 100000; i++) x = x + (unsigned long)i;
    pl_watchdog_stop();
    CU_ASSERT_EQUAL(atomic_load(&fired), 1);
    CU_ASSERT_STRING_EQUAL(
        report, "no progress for 0.2 s of CPU time: no kernel is running (the host code)");
}

/* Work that makes progress (an op done every few microseconds of CPU) uses
 * five times the limit and is not reported. */
static void test_progress_is_no_stall(void)
{
    int *d = NULL;
    CU_ASSERT_CUDA(cudaMalloc((void **)&d, 64), cudaSuccess);
    atomic_store(&fired, 0);
    report[0] = '\0';
    CU_ASSERT_EQUAL_FATAL(pl_watchdog_start(0.2, on_stall, NULL), 0);
    double t0 = cpu_now();
    while (cpu_now() - t0 < 1.0) {
        if (cudaMemsetAsync(d, 0, 64, 0) != cudaSuccess) break;
        pl_watchdog_progress(); /* the CUDA build's ops are not counted */
        volatile unsigned long x = 0;
        for (int i = 0; i < 2000; i++) x = x + (unsigned long)i;
        if (cudaStreamSynchronize(0) != cudaSuccess) break;
    }
    pl_watchdog_stop();
    CU_ASSERT_EQUAL(atomic_load(&fired), 0);
    if (atomic_load(&fired)) fprintf(stderr, "  reported: %s\n", report);
    cudaFree(d);
}

#ifdef PARALAB_SIMULATED_CUDA
/* A kernel that never leaves its block is named, with its block and thread,
 * even while the host makes progress; then it is let go (a copy on another
 * stream sets its flag). */
static void test_stuck_kernel_is_named(void)
{
    int *flag = NULL, one = 1;
    cudaStream_t run, poke;
    CU_ASSERT_CUDA(cudaMalloc((void **)&flag, sizeof *flag), cudaSuccess);
    CU_ASSERT_CUDA(cudaMemset(flag, 0, sizeof *flag), cudaSuccess);
    CU_ASSERT_CUDA(cudaStreamCreate(&run), cudaSuccess);
    CU_ASSERT_CUDA(cudaStreamCreate(&poke), cudaSuccess);
    atomic_store(&fired, 0);
    report[0] = '\0';
    CU_ASSERT_EQUAL_FATAL(pl_watchdog_start(0.2, on_stall, NULL), 0);
    CU_ASSERT_CUDA(tk_spin_until(flag, run), cudaSuccess);
    double t0 = cpu_now();
    /* the host makes progress meanwhile: only the kernel is stuck */
    while (!atomic_load(&fired) && cpu_now() - t0 < 30) {
        pl_watchdog_progress();
        nap(0.01);
    }
    pl_watchdog_stop();
    CU_ASSERT_CUDA(cudaMemcpyAsync(flag, &one, sizeof one, cudaMemcpyHostToDevice, poke),
                   cudaSuccess);
    CU_ASSERT_CUDA(cudaStreamSynchronize(poke), cudaSuccess);
    CU_ASSERT_CUDA(cudaStreamSynchronize(run), cudaSuccess);
    CU_ASSERT_EQUAL(atomic_load(&fired), 1);
    const char *want =
        "no progress for 0.2 s of CPU time: kernel spin_until (tests/unit/kernels.cu:";
    CU_ASSERT_NSTRING_EQUAL(report, want, strlen(want));
    CU_ASSERT_PTR_NOT_NULL(strstr(report, ") is in blockIdx (0,0,0), threadIdx (0,0,0)"));
    if (!strstr(report, "threadIdx (0,0,0)")) fprintf(stderr, "  reported: %s\n", report);
    cudaStreamDestroy(run);
    cudaStreamDestroy(poke);
    cudaFree(flag);
}
#endif

int register_watchdog_suite(void)
{
    static const unit_test t[] = {
        {"sleeping five times the limit is no stall", test_sleep_is_no_stall},
        {"stopped (SIGSTOP) past the limit is no stall", test_stopped_is_no_stall},
        {"spinning with no progress is a stall", test_spin_is_a_stall},
        {"busy work that makes progress is no stall", test_progress_is_no_stall},
#ifdef PARALAB_SIMULATED_CUDA
        {"a kernel stuck in one block is named", test_stuck_kernel_is_named},
#endif
    };
    return UNIT_SUITE("watchdog", t);
}
