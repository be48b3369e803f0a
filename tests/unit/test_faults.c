/*
 * test_faults.c — SIM ONLY: the emulator's teaching checks. Each fault stops
 * the kernel, comes back as CUDA's error (sticky, as on a device) and leaves
 * a report naming the kernel, block, thread and what went wrong.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"

#ifdef PARALAB_SIMULATED_CUDA
#include <sys/wait.h>
#include <unistd.h>

#include "kernels.h"
#include "simt/simt.h"

/* The device the fault tests break (and reset). */
#define FAULT_DEVICE 7

static int *buffer(size_t n)
{
    int *p = NULL;
    CU_ASSERT_OK(cudaSetDevice(FAULT_DEVICE));
    CU_ASSERT_OK(cudaMalloc((void **)&p, n * sizeof(int)));
    return p;
}

/* A kernel fault is asynchronous: the launch itself may already see the
 * sticky error (if the kernel ran before cudaGetLastError), or not yet; the
 * next synchronising call must return it. */
#define LAUNCH_FAULTS(call, err)                                                                   \
    do {                                                                                           \
        cudaError_t l_ = (call);                                                                   \
        CU_ASSERT(l_ == cudaSuccess || l_ == (err));                                               \
        CU_ASSERT_CUDA(cudaDeviceSynchronize(), (err));                                            \
    } while (0)

static void report_has(const char *needle)
{
    const char *r = simtLastFaultReport();
    if (!strstr(r, needle)) fprintf(stderr, "  report \"%s\"\n  lacks \"%s\"\n", r, needle);
    CU_ASSERT_PTR_NOT_NULL(strstr(r, needle));
}

static void finish(void)
{
    CU_ASSERT_OK(cudaDeviceReset());
    CU_ASSERT_STRING_EQUAL(simtLastFaultReport(), "");
    CU_ASSERT_OK(cudaSetDevice(0));
}

static void test_divergent_barrier(void)
{
    int *p = buffer(64);
    LAUNCH_FAULTS(tk_divergent_barrier(p), cudaErrorLaunchFailure);
    report_has("kernel divergent_barrier");
    report_has("divergent __syncthreads()");
    /* both call sites, file:line */
    const char *r = simtLastFaultReport(), *a = strstr(r, "kernels.cu:"),
               *b = a ? strstr(a + 1, "kernels.cu:") : NULL;
    CU_ASSERT_PTR_NOT_NULL(b);
    if (a && b) {
        CU_ASSERT_NOT_EQUAL(atoi(a + 11), atoi(b + 11));
    }
    finish();
}

static void test_exit_before_barrier(void)
{
    int *p = buffer(64);
    LAUNCH_FAULTS(tk_exit_before_barrier(p, 40), cudaErrorLaunchFailure);
    report_has("exited without reaching the __syncthreads()");
    finish();
}

static void test_shfl_exited_lane(void)
{
    int *p = buffer(32);
    LAUNCH_FAULTS(tk_shfl_exited_lane(p), cudaErrorLaunchFailure);
    report_has("__shfl_down_sync");
    report_has("has already exited");
    finish();
}

static void test_out_of_bounds(void)
{
    int *p = buffer(100);
    LAUNCH_FAULTS(tk_write_past_end(p, 100, 1), cudaErrorIllegalAddress);
    report_has("kernel write_past_end");
    report_has("blockIdx (1,0,0), threadIdx (36,0,0)"); /* element 100 = block 1, thread 36 */
    report_has("out-of-bounds write of 4 bytes");
    char base[64];
    snprintf(base, sizeof base, "base %p, 400 bytes", (void *)p);
    report_has(base);
    report_has("offset 400");
    report_has("the first byte past its end");
    /* sticky: every call on the device returns it until cudaDeviceReset */
    void *q;
    CU_ASSERT_CUDA(cudaMalloc(&q, 16), cudaErrorIllegalAddress);
    CU_ASSERT_CUDA(cudaGetLastError(), cudaErrorIllegalAddress);
    CU_ASSERT_CUDA(cudaGetLastError(), cudaErrorIllegalAddress);
    finish();
    CU_ASSERT_OK(cudaSetDevice(FAULT_DEVICE));
    CU_ASSERT_OK(cudaMalloc(&q, 16));
    CU_ASSERT_OK(cudaFree(q));
    CU_ASSERT_OK(cudaSetDevice(0));
}

/* In a fresh process (the suite again, UNIT_FIRST_ALLOCATION=read or write):
 * the first cudaMalloc of the program, on device 0, lies at the bottom of
 * the simulated device memory. Reading p[-1], or writing p[-1] .. p[-300]
 * (what once landed on a stream worker's stack and killed the process), is
 * an out-of-bounds access reported like any other; the host goes on. Prints
 * what went wrong; exits 0 if nothing did. */
static void first_allocation_child(const char *mode)
{
    int bad = 0, write = strcmp(mode, "write") == 0;
    float *p = NULL, *out = NULL;
    if (cudaMalloc((void **)&p, 100 * sizeof(float)) != cudaSuccess ||
        cudaMalloc((void **)&out, 300 * sizeof(float)) != cudaSuccess) {
        printf("first allocation: cudaMalloc failed\n");
        _exit(1);
    }
    cudaError_t l = tk_below(p, out, 300, write), e = cudaDeviceSynchronize();
    if ((l != cudaSuccess && l != cudaErrorIllegalAddress) || e != cudaErrorIllegalAddress) {
        printf("first allocation: %s below it gave %s / %s, not cudaErrorIllegalAddress\n", mode,
               cudaGetErrorName(l), cudaGetErrorName(e));
        bad = 1;
    }
    char want[3][160];
    snprintf(want[0], sizeof want[0], "kernel below (tests/unit/kernels.cu:");
    snprintf(want[1], sizeof want[1],
             "blockIdx (0,0,0), threadIdx (0,0,0): out-of-bounds %s of 4 "
             "bytes at address %p",
             write ? "write" : "read", (void *)(p - 1));
    snprintf(want[2], sizeof want[2],
             "4 bytes before the nearest allocation (base %p, 400 bytes, device 0)", (void *)p);
    const char *r = simtLastFaultReport();
    for (int i = 0; i < 3; i++)
        if (!strstr(r, want[i])) {
            printf("first allocation: the report \"%s\" lacks \"%s\"\n", r, want[i]);
            bad = 1;
        }
    /* the host goes on: a reset device runs kernels again */
    long long h[64], *d = NULL, got[64];
    for (int i = 0; i < 64; i++) h[i] = 3 * i + 1;
    if (cudaDeviceReset() != cudaSuccess || cudaMalloc((void **)&d, sizeof h) != cudaSuccess ||
        cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice) != cudaSuccess ||
        tk_divide(d, d, d, 64, 3) != cudaSuccess ||
        cudaMemcpy(got, d, sizeof got, cudaMemcpyDeviceToHost) != cudaSuccess) {
        printf("first allocation: the device does not work after the fault and a reset\n");
        bad = 1;
    } else
        for (int i = 0; i < 64; i++)
            if (got[i] != 1) {
                printf("first allocation: after the reset got[%d] = %lld, not 1\n", i, got[i]);
                bad = 1;
            }
    printf("first allocation (%s): %s\n", mode, bad ? "FAILED" : "ok");
    fflush(stdout);
    _exit(bad);
}

static void test_below_first_allocation(void)
{
    const char *mode = getenv("UNIT_FIRST_ALLOCATION");
    if (mode) first_allocation_child(mode); /* does not return */
    static const char *modes[] = {"read", "write"};
    for (int m = 0; m < 2; m++) {
        int out[2];
        CU_ASSERT_FATAL(pipe(out) == 0);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            dup2(out[1], 1);
            dup2(out[1], 2);
            close(out[0]);
            setenv("UNIT_FIRST_ALLOCATION", modes[m], 1);
            execl("/proc/self/exe", "unit", "faults", (char *)NULL);
            _exit(127);
        }
        close(out[1]);
        CU_ASSERT_FATAL(pid > 0);
        char text[1 << 14];
        size_t n = 0;
        ssize_t got;
        while ((got = read(out[0], text + n, sizeof text - 1 - n)) > 0) n += (size_t)got;
        text[n] = '\0';
        close(out[0]);
        int st = 0;
        CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);
        char ok[64];
        snprintf(ok, sizeof ok, "first allocation (%s): ok\n", modes[m]);
        int passed = WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(text, ok);
        CU_ASSERT(passed);
        if (!passed)
            fprintf(stderr, "  UNIT_FIRST_ALLOCATION=%s unit faults (status %#x):\n%s\n", modes[m],
                    (unsigned)st, text);
    }
}

/* p[-1] of an allocation made after another: what lies below it is the
 * guard after another allocation, or freed memory (first fit may reuse a
 * freed range of an earlier test below the other). */
static void test_below_allocation(void)
{
    float *q = (float *)buffer(32), *p = (float *)buffer(100);
    LAUNCH_FAULTS(tk_below(p, q, 32, 0), cudaErrorIllegalAddress);
    report_has("kernel below");
    char at[128];
    snprintf(at, sizeof at, "blockIdx (0,0,0), threadIdx (0,0,0): ");
    report_has(at);
    snprintf(at, sizeof at,
             " at address %p: 4 bytes before the nearest allocation (base %p, 400 bytes",
             (void *)(p - 1), (void *)p);
    report_has(at);
    finish();
}

/* Integer division by zero: the kernel stops (a GPU does not trap; the
 * value it gives is unspecified), the report names the thread and the line,
 * and the host goes on. */
static void test_divide_by_zero(void)
{
    static const struct {
        int op;
        const char *what;
    } ops[] = {
        {0, "a / or % of int 38 by 0"},
        {1, "a / or % of int 38 by 0"},
        {2, "a / or % of unsigned int 38 by 0"},
        {3, "a / or % of long long int 38 by 0"},
    };
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
        long long ha[64], hb[64], got[64];
        for (int i = 0; i < 64; i++) {
            ha[i] = i + 1;
            hb[i] = i == 37 ? 0 : 1; /* block 1, thread 5 */
        }
        long long *a = (long long *)buffer(128), *b = (long long *)buffer(128),
                  *out = (long long *)buffer(128);
        CU_ASSERT_OK(cudaMemcpy(a, ha, sizeof ha, cudaMemcpyHostToDevice));
        CU_ASSERT_OK(cudaMemcpy(b, hb, sizeof hb, cudaMemcpyHostToDevice));
        LAUNCH_FAULTS(tk_divide(a, b, out, 64, ops[k].op), cudaErrorLaunchFailure);
        report_has("kernel divide (tests/unit/kernels.cu:");
        report_has("blockIdx (1,0,0), threadIdx (5,0,0): integer division by zero at ");
        char line[64];
        snprintf(line, sizeof line, "kernels.cu:%d (", tk_divide_line + 3 * ops[k].op);
        report_has(line);
        report_has(ops[k].what);
        report_has("a GPU gives an unspecified value there, with no error");
        finish();
        /* the host goes on */
        a = (long long *)buffer(128);
        out = (long long *)buffer(128);
        CU_ASSERT_OK(cudaMemcpy(a, ha, sizeof ha, cudaMemcpyHostToDevice));
        CU_ASSERT_OK(tk_divide(a, a, out, 64, ops[k].op));
        CU_ASSERT_OK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
        for (int i = 0; i < 64; i++) CU_ASSERT_EQUAL(got[i], ops[k].op == 1 ? 0 : 1);
        finish();
    }
}

/* INT_MIN / -1 and INT_MIN % -1 (a trap on x86-64): the kernel stops too. */
static void test_divide_overflow(void)
{
    for (int op = 0; op < 2; op++) {
        long long ha[64], hb[64];
        for (int i = 0; i < 64; i++) {
            ha[i] = i == 37 ? INT_MIN : i + 1;
            hb[i] = i == 37 ? -1 : 1;
        }
        long long *a = (long long *)buffer(128), *b = (long long *)buffer(128),
                  *out = (long long *)buffer(128);
        CU_ASSERT_OK(cudaMemcpy(a, ha, sizeof ha, cudaMemcpyHostToDevice));
        CU_ASSERT_OK(cudaMemcpy(b, hb, sizeof hb, cudaMemcpyHostToDevice));
        LAUNCH_FAULTS(tk_divide(a, b, out, 64, op), cudaErrorLaunchFailure);
        report_has("kernel divide (tests/unit/kernels.cu:");
        report_has("blockIdx (1,0,0), threadIdx (5,0,0): integer division overflow");
        report_has("a GPU gives INT_MIN");
#ifdef __SANITIZE_ADDRESS__ /* UBSan's check names the line; build/sim's trap cannot */
        char line[96];
        snprintf(line, sizeof line,
                 "kernels.cu:%d (a / or %% of int -2147483648 by -1: the quotient does not fit in "
                 "int)",
                 tk_divide_line + 3 * op);
        report_has(line);
#endif
        finish();
    }
}

static void test_use_after_free(void)
{
    int *p = buffer(64);
    CU_ASSERT_OK(cudaFree(p));
    LAUNCH_FAULTS(tk_write_past_end(p, 64, 0), cudaErrorIllegalAddress);
    report_has("out-of-bounds write");
    finish();
}

static void test_device_assert(void)
{
    int h[100], *p = buffer(100);
    for (int i = 0; i < 100; i++) h[i] = i == 77 ? -1 : i;
    CU_ASSERT_OK(cudaMemcpy(p, h, sizeof h, cudaMemcpyHostToDevice));
    LAUNCH_FAULTS(tk_assert_nonnegative(p, 100), cudaErrorAssert);
    report_has("Assertion `in[i] >= 0` failed.");
    report_has("block: [1,0,0], thread: [13,0,0]"); /* element 77 */
    finish();
}

/* Where the report ends (the count of the other threads that failed). */
static void report_ends_with(const char *tail)
{
    const char *r = simtLastFaultReport();
    size_t n = strlen(r), k = strlen(tail);
    int ok = n >= k && strcmp(r + n - k, tail) == 0;
    if (!ok) fprintf(stderr, "  report \"%s\"\n  does not end with \"%s\"\n", r, tail);
    CU_ASSERT(ok);
}

/* Every thread of block 0 fails: the report names the first and counts the
 * others of the block (the kernel stops at the end of the block). */
static void test_device_assert_count(void)
{
    int h[100], *p = buffer(100);
    for (int i = 0; i < 100; i++) h[i] = -1 - i;
    CU_ASSERT_OK(cudaMemcpy(p, h, sizeof h, cudaMemcpyHostToDevice));
    LAUNCH_FAULTS(tk_assert_nonnegative(p, 100), cudaErrorAssert);
    report_has("blockIdx (0,0,0), threadIdx (0,0,0): ");
    report_ends_with("block: [0,0,0], thread: [0,0,0] Assertion `in[i] >= 0` failed. 63 more "
                     "threads of this block failed this assert (the kernel stopped at the end "
                     "of the block).");
    finish();
    /* three of block 0 (3, 10, 20) and one of block 1 (70), which does not run */
    p = buffer(100);
    for (int i = 0; i < 100; i++) h[i] = i == 3 || i == 10 || i == 20 || i == 70 ? -1 : i;
    CU_ASSERT_OK(cudaMemcpy(p, h, sizeof h, cudaMemcpyHostToDevice));
    LAUNCH_FAULTS(tk_assert_nonnegative(p, 100), cudaErrorAssert);
    report_ends_with("block: [0,0,0], thread: [3,0,0] Assertion `in[i] >= 0` failed. 2 more "
                     "threads of this block failed this assert (the kernel stopped at the end "
                     "of the block).");
    finish();
    /* one more: singular */
    p = buffer(100);
    for (int i = 0; i < 100; i++) h[i] = i == 3 || i == 10 ? -1 : i;
    CU_ASSERT_OK(cudaMemcpy(p, h, sizeof h, cudaMemcpyHostToDevice));
    LAUNCH_FAULTS(tk_assert_nonnegative(p, 100), cudaErrorAssert);
    report_ends_with("thread: [3,0,0] Assertion `in[i] >= 0` failed. 1 more thread of this "
                     "block failed this assert (the kernel stopped at the end of the block).");
    finish();
}

/* A plain block turned into fibers at warp 1's shuffle, whose lanes then
 * fail an assert: the host fiber (the thread that turned it, whose frames are
 * on the OS thread's stack) stops like any other, the count is whole, and
 * the next launches run right, under every schedule. */
static void test_plain_turned_asserts(void)
{
    static const int sched[][2] = {{0, 0}, {1, 0}, {2, 7}, {2, 12345}};
    for (int s = 0; s < 4; s++) {
        simtSetSchedule(sched[s][0], (unsigned long long)sched[s][1]);
        int h[32], got[32], *in = buffer(32), *out = buffer(32);
        for (int k = 0; k < 2; k++) { /* all 32 lanes fail; then lanes 0 and 5 */
            for (int i = 0; i < 32; i++) h[i] = k == 0 ? -1 - i : (i == 0 || i == 5 ? -1 : i);
            CU_ASSERT_OK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
            LAUNCH_FAULTS(tk_warp1_shuffle_assert(in, out), cudaErrorAssert);
            report_ends_with(k == 0 ? "Assertion `in[t - 32] >= 0` failed. 31 more threads of "
                                      "this block failed this assert (the kernel stopped at "
                                      "the end of the block)."
                                    : "Assertion `in[t - 32] >= 0` failed. 1 more thread of "
                                      "this block failed this assert (the kernel stopped at "
                                      "the end of the block).");
            finish();
            in = buffer(32);
            out = buffer(32);
        }
        /* and then a launch with no failure gives every value */
        for (int i = 0; i < 32; i++) h[i] = 10 * i;
        CU_ASSERT_OK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
        CU_ASSERT_OK(tk_warp1_shuffle_assert(in, out));
        CU_ASSERT_OK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
        for (int i = 0; i < 32; i++) CU_ASSERT_EQUAL(got[i], 10 * (i < 31 ? i + 1 : i));
        finish();
    }
    simtSetSchedule(0, 0);
}

/* Threads that failed an assert never reach the block's __syncthreads():
 * the report is still the assert's, with the count, other asserts apart. */
static void test_device_assert_count_barrier(void)
{
    int h[64], *in = buffer(64), *out = buffer(64), got[64];
    for (int i = 0; i < 64; i++) h[i] = i == 5 || i == 40 || i == 41 ? -1 : i == 50 ? 5000 : i;
    CU_ASSERT_OK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
    CU_ASSERT_OK(cudaMemset(out, 0, sizeof got));
    LAUNCH_FAULTS(tk_assert_then_sync(in, out, 64), cudaErrorAssert);
    report_has("kernel assert_then_sync");
    report_ends_with("block: [0,0,0], thread: [5,0,0] Assertion `in[t] >= 0` failed. 2 more "
                     "threads of this block failed this assert, 1 thread failed another assert "
                     "(the kernel stopped at the end of the block).");
    finish();
    /* one thread only: CUDA's message alone */
    in = buffer(64);
    out = buffer(64);
    for (int i = 0; i < 64; i++) h[i] = i == 50 ? 5000 : i;
    CU_ASSERT_OK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
    LAUNCH_FAULTS(tk_assert_then_sync(in, out, 64), cudaErrorAssert);
    report_ends_with("block: [0,0,0], thread: [50,0,0] Assertion `in[t] < 1000` failed.");
    finish();
}

/* Legal CUDA whose thread 0 takes part in no warp operation (issue 19): a
 * block that started as plain calls (thread 0 reached no barrier) turns into
 * fibers where a thread reaches one, and runs right under every schedule,
 * with plain calls on or off. */
static void test_plain_calls_turn_into_fibers(void)
{
    static const int sched[][2] = {{0, 0}, {1, 0}, {2, 7}, {2, 12345}};
    for (int plain = 1; plain >= 0; plain--)
        for (int s = 0; s < 4; s++) {
            simtSetPlainCalls(plain);
            simtSetSchedule(sched[s][0], (unsigned long long)sched[s][1]);
            int *p = buffer(32), got[32];
            CU_ASSERT_OK(tk_lane0_skips(p));
            CU_ASSERT_OK(cudaMemcpy(got, p, sizeof got, cudaMemcpyDeviceToHost));
            for (int l = 1; l < 31; l++) CU_ASSERT_EQUAL(got[l], 100 + l + 1);
            CU_ASSERT_EQUAL(got[31], 131);
            /* the kernel: a full-mask __shfl_down_sync in warp 1 only */
            int *q = buffer(3 * 32), g[3 * 32];
            CU_ASSERT_OK(tk_warp1_shuffles(q, 3, 32));
            CU_ASSERT_OK(cudaMemcpy(g, q, sizeof g, cudaMemcpyDeviceToHost));
            for (int b = 0; b < 3; b++)
                for (int l = 0; l < 32; l++)
                    CU_ASSERT_EQUAL(g[b * 32 + l], 1000 * b + 32 + (l < 31 ? l + 1 : l));
            CU_ASSERT_STRING_EQUAL(simtLastFaultReport(), "");
            finish();
        }
    simtSetPlainCalls(1);
    simtSetSchedule(0, 0);
}

/* What is wrong after such a turn is named for what it is, not for the plain
 * calls: a full mask whose lanes 16..31 exited, and a __syncthreads() that
 * thread 0 skipped. */
static void test_plain_turned_faults(void)
{
    for (int s = 0; s < 2; s++) {
        simtSetSchedule(s, 0);
        int *p = buffer(32);
        LAUNCH_FAULTS(tk_warp1_shuffles(p, 1, 16), cudaErrorLaunchFailure);
        report_has("__shfl_down_sync");
        report_has("mask 0xffffffff names lane 16, which has already exited");
        CU_ASSERT_PTR_NULL(strstr(simtLastFaultReport(), "SIMT_PLAIN"));
        finish();
        p = buffer(64);
        LAUNCH_FAULTS(tk_thread0_skips_barrier(p), cudaErrorLaunchFailure);
        report_has("threadIdx (0,0,0): divergent __syncthreads(): this thread exited without "
                   "reaching the __syncthreads() at");
        CU_ASSERT_PTR_NULL(strstr(simtLastFaultReport(), "SIMT_PLAIN"));
        finish();
    }
    simtSetSchedule(0, 0);
}

/* Runs one of the book's reductions over n ints (i & 0xff, as the book's
 * rand() & 0xff); returns the launch's error, *sum the blocks' total. */
static cudaError_t book_sum(unsigned n, int chapter, int sync, long long *sum)
{
    int *h = malloc(n * sizeof *h), *in = buffer(n), *out = buffer(n / 128);
    for (unsigned i = 0; i < n; i++) h[i] = (int)(i * 2654435761u >> 24);
    CU_ASSERT_OK(cudaMemcpy(in, h, n * sizeof *h, cudaMemcpyHostToDevice));
    cudaError_t e = tk_book_reduce(in, out, n, chapter, sync);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    *sum = 0;
    unsigned blocks = chapter == 3 ? n / 4096 : n / 128;
    if (e == cudaSuccess) {
        CU_ASSERT_OK(cudaMemcpy(h, out, blocks * sizeof *h, cudaMemcpyDeviceToHost));
        for (unsigned b = 0; b < blocks; b++) *sum += h[b];
    }
    free(h);
    return e;
}

static long long book_want(unsigned n)
{
    long long want = 0;
    for (unsigned i = 0; i < n; i++) want += (int)(i * 2654435761u >> 24);
    return want;
}

/* The "volatile" warp-synchronous tail without __syncwarp() (Professional
 * CUDA C Programming, chapters 3 and 5) is reported, naming the race and
 * __syncwarp(), never a silent wrong sum; with __syncwarp() it is right. */
static void test_warp_synchronous_reported(void)
{
    const unsigned n = 1u << 15;
    long long sum;
    for (int chapter = 3; chapter <= 5; chapter += 2) {
        /* chapter 3's kernel in the normal run (SIMT_RACES=1: its first
         * launch is checked), chapter 5's with every block checked */
        simtSetRaceCheck(chapter == 3 ? 1 : 2);
        cudaError_t e = book_sum(n, chapter, 0, &sum);
        CU_ASSERT_CUDA(e, cudaErrorLaunchFailure);
        report_has(chapter == 3 ? "kernel reduceUnrollWarps8" : "kernel reduceSmem");
        report_has("race between lanes of one warp: thread (");
        report_has(chapter == 3 ? "device memory at" : "shared memory at");
        report_has("with no __syncwarp() between them");
        report_has("Put __syncwarp() between the step that writes and the step that reads");
        finish();
    }
    CU_ASSERT_OK(book_sum(n, 5, 1, &sum));
    CU_ASSERT_EQUAL(sum, book_want(n));
    CU_ASSERT_STRING_EQUAL(simtLastFaultReport(), "");
    finish();
    /* the default checks a kernel's first launch only: reduceSmem, first
     * launched above, runs unchecked now (at full speed) */
    simtSetRaceCheck(1);
    CU_ASSERT_OK(book_sum(n, 5, 1, &sum));
    CU_ASSERT_EQUAL(sum, book_want(n));
    finish();
    simtSetRaceCheck(1);
}

/* 256 threads doing counter++ with no barrier at all, into a shared
 * histogram or one word of device memory: each increment runs whole in the
 * emulator (the counts always come out right), so the check reports the
 * lost update and names atomicAdd; with atomicAdd there is no race. */
static void test_lost_update_reported(void)
{
    simtSetRaceCheck(2);
    for (int global = 0; global <= 1; global++) {
        int *p = buffer(4), got[4] = {-1, -1, -1, -1};
        CU_ASSERT_OK(cudaMemset(p, 0, 4 * sizeof(int)));
        LAUNCH_FAULTS(tk_count_up(p, global, 0), cudaErrorLaunchFailure);
        report_has("kernel count_up");
        report_has("race: lost update: thread (1,0,0) (warp 0, lane 1) reads, changes and writes "
                   "back the 4-byte word of ");
        report_has(global ? "device memory at" : "shared memory at");
        report_has("that thread (0,0,0) (warp 0, lane 0) also wrote, with no barrier between them");
        report_has("Use an atomic (atomicAdd(&counter[0], 1))");
        finish();
        p = buffer(4);
        CU_ASSERT_OK(cudaMemset(p, 0, 4 * sizeof(int)));
        CU_ASSERT_OK(tk_count_up(p, global, 1));
        CU_ASSERT_OK(cudaMemcpy(got, p, sizeof got, cudaMemcpyDeviceToHost));
        for (int k = 0; k < (global ? 1 : 4); k++) CU_ASSERT_EQUAL(got[k], global ? 256 : 64);
        CU_ASSERT_STRING_EQUAL(simtLastFaultReport(), "");
        finish();
    }
    /* a scalar __shared__ int: count++ by every thread */
    int *p = buffer(1), got = -1;
    LAUNCH_FAULTS(tk_count_scalar(p, 0), cudaErrorLaunchFailure);
    report_has("kernel count_scalar");
    report_has("race: lost update: thread (1,0,0) (warp 0, lane 1) reads, changes and writes "
               "back the 4-byte word of shared memory at");
    report_has("Use an atomic (atomicAdd(&counter[0], 1))");
    finish();
    p = buffer(1);
    CU_ASSERT_OK(tk_count_scalar(p, 1));
    CU_ASSERT_OK(cudaMemcpy(&got, p, sizeof got, cudaMemcpyDeviceToHost));
    CU_ASSERT_EQUAL(got, 256);
    CU_ASSERT_STRING_EQUAL(simtLastFaultReport(), "");
    finish();
    simtSetRaceCheck(1);
}

#ifndef __SANITIZE_ADDRESS__ /* under ASan, ASan owns SIGSEGV and reports it itself */
static void test_stack_overflow(void)
{
    int *p = buffer(2);
    LAUNCH_FAULTS(tk_big_frame(p), cudaErrorIllegalAddress);
    report_has("kernel big_frame");
    report_has("stack overflow");
    finish();
}
#endif

/* Device-side runtime calls (dynamic parallelism) are refused clearly. */
static void test_runtime_from_device(void)
{
    int *p = buffer(1), got = -1;
    CU_ASSERT_OK(tk_runtime_from_device(p));
    CU_ASSERT_OK(cudaMemcpy(&got, p, sizeof got, cudaMemcpyDeviceToHost));
    CU_ASSERT_EQUAL(got, cudaErrorNotSupported);
    finish();
}

/* A fault on one device leaves the others working. */
static void test_fault_is_per_device(void)
{
    int *p = buffer(10);
    LAUNCH_FAULTS(tk_write_past_end(p, 10, 5), cudaErrorIllegalAddress);
    CU_ASSERT_OK(cudaSetDevice(0));
    void *q;
    CU_ASSERT_OK(cudaMalloc(&q, 16));
    CU_ASSERT_OK(cudaFree(q));
    CU_ASSERT_OK(cudaSetDevice(FAULT_DEVICE));
    finish();
}
#endif

int register_faults_suite(void)
{
#ifdef PARALAB_SIMULATED_CUDA
    static const unit_test t[] = {
        {"below the program's first allocation (a fresh process)", test_below_first_allocation},
        {"divergent barrier names both sites", test_divergent_barrier},
        {"exit before a barrier", test_exit_before_barrier},
        {"shuffle mask names an exited lane", test_shfl_exited_lane},
        {"out-of-bounds write report, sticky error", test_out_of_bounds},
        {"below a later allocation", test_below_allocation},
        {"use after free", test_use_after_free},
        {"integer division by zero", test_divide_by_zero},
        {"integer division overflow (INT_MIN / -1)", test_divide_overflow},
        {"device-side assert", test_device_assert},
        {"device-side assert: how many threads failed", test_device_assert_count},
        {"device-side assert: the count across a barrier", test_device_assert_count_barrier},
        {"a fault is per device", test_fault_is_per_device},
        {"a plain block turns into fibers at a warp operation", test_plain_calls_turn_into_fibers},
        {"faults after a plain block turned into fibers", test_plain_turned_faults},
        {"asserts after a plain block turned into fibers", test_plain_turned_asserts},
        {"warp-synchronous code is reported (the book's reductions)",
         test_warp_synchronous_reported},
        {"a lost update by 256 threads is reported (shared, global, a __shared__ scalar)",
         test_lost_update_reported},
        {"runtime calls from a kernel are refused", test_runtime_from_device},
#ifndef __SANITIZE_ADDRESS__
        {"stack overflow", test_stack_overflow},
#endif
    };
    return UNIT_SUITE("faults", t);
#else
    return unit_suite_setup("faults", NULL, NULL, NULL, 0); /* the simulator's fault reports only */
#endif
}
