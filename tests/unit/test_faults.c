/*
 * test_faults.c — SIM ONLY: the emulator's teaching checks. Each fault stops
 * the kernel, comes back as CUDA's error (sticky, as on a device) and leaves
 * a report naming the kernel, block, thread and what went wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"

#ifdef PARALAB_SIMULATED_CUDA
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
        {"divergent barrier names both sites", test_divergent_barrier},
        {"exit before a barrier", test_exit_before_barrier},
        {"shuffle mask names an exited lane", test_shfl_exited_lane},
        {"out-of-bounds write report, sticky error", test_out_of_bounds},
        {"use after free", test_use_after_free},
        {"device-side assert", test_device_assert},
        {"a fault is per device", test_fault_is_per_device},
        {"a plain block turns into fibers at a warp operation", test_plain_calls_turn_into_fibers},
        {"faults after a plain block turned into fibers", test_plain_turned_faults},
        {"warp-synchronous code is reported (the book's reductions)",
         test_warp_synchronous_reported},
        {"a lost update by 256 threads is reported (shared, global)", test_lost_update_reported},
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
