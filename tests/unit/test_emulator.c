/*
 * test_emulator.c — kernels produce CUDA's results: reductions, shuffles,
 * votes, atomics, intrinsics, shared and constant memory. Runs in both
 * variants; schedule tests (SIMT_SCHEDULE) are SIM ONLY.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels.h"
#include "suites.h"
#ifdef PARALAB_SIMULATED_CUDA
#include "simt/simt.h"
#endif

/* Sums per block with a double reference; returns the worst relative error
 * and whether every block matched within rtol. */
static int block_sums_match(int n, int block, int sync, double rtol)
{
    int blocks = (n + block - 1) / block;
    float *h = malloc((size_t)n * sizeof(float)), *got = malloc((size_t)blocks * sizeof(float));
    float *din, *dout;
    for (int i = 0; i < n; i++) h[i] = (float)((i * 37) % 101) * 0.01f - 0.3f;
    CU_ASSERT_OK(cudaMalloc((void **)&din, (size_t)n * sizeof(float)));
    CU_ASSERT_OK(cudaMalloc((void **)&dout, (size_t)blocks * sizeof(float)));
    CU_ASSERT_OK(cudaMemcpy(din, h, (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
    CU_ASSERT_OK(tk_block_sum(din, dout, n, block, sync));
    CU_ASSERT_OK(cudaMemcpy(got, dout, (size_t)blocks * sizeof(float), cudaMemcpyDeviceToHost));
    int ok = 1;
    for (int b = 0; b < blocks; b++) {
        double want = 0;
        for (int i = b * block; i < n && i < (b + 1) * block; i++) want += h[i];
        if (fabs(got[b] - want) > rtol * (fabs(want) + 1.0)) ok = 0;
    }
    cudaFree(din);
    cudaFree(dout);
    free(h);
    free(got);
    return ok;
}

/* UNIT_SHORT (the sanitizer pass): 2^16 + 7 floats instead of 2^20 + 7, the
 * same paths (many blocks, more than the SMs, a partial last one) at a
 * sixteenth of the cost: the plain pass sums the million. */
static void test_block_sum(void)
{
    const int sizes[] = {1, 1023, 1025, (unit_short() ? 1 << 16 : 1 << 20) + 7};
    for (int i = 0; i < 4; i++) {
        CU_ASSERT(block_sums_match(sizes[i], 256, 1, 1e-5));
        CU_ASSERT(block_sums_match(sizes[i], 1024, 1, 1e-5));
    }
}

static void test_warp_sum(void)
{
    enum { N = 1000 };
    int h[N], got[(N + 31) / 32], *din, *dout;
    for (int i = 0; i < N; i++) h[i] = i % 17 - 8;
    CU_ASSERT_OK(cudaMalloc((void **)&din, sizeof h));
    CU_ASSERT_OK(cudaMalloc((void **)&dout, 64 * sizeof(int))); /* whole blocks of 256 */
    CU_ASSERT_OK(cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice));
    CU_ASSERT_OK(tk_warp_sum(din, dout, N));
    CU_ASSERT_OK(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
    for (int w = 0; w < (N + 31) / 32; w++) {
        int want = 0;
        for (int i = w * 32; i < N && i < w * 32 + 32; i++) want += h[i];
        CU_ASSERT_EQUAL(got[w], want);
    }
    cudaFree(din);
    cudaFree(dout);
}

/* CUDA C++ Programming Guide, "Warp Shuffle Functions": the source lane of
 * each variant within segments of `width` lanes. */
static void expected_shuffles(int want[4][32], int arg, int width)
{
    for (int l = 0; l < 32; l++) {
        int seg = l / width * width, v = 100 + l;
        want[0][l] = 100 + seg + ((arg % width) + width) % width;
        want[1][l] = l - arg >= seg ? 100 + l - arg : v;
        want[2][l] = l + arg < seg + width ? 100 + l + arg : v;
        int x = l ^ arg;
        want[3][l] = x < seg + width ? 100 + x : v;
    }
}

static void test_shuffles(void)
{
    static const int cases[][2] = {{3, 32}, {0, 32}, {31, 32}, {3, 8}, {9, 8}, {1, 2}, {5, 16}};
    int *d, got[4][32], want[4][32];
    CU_ASSERT_OK(cudaMalloc((void **)&d, sizeof got));
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int arg = cases[c][0], width = cases[c][1];
        CU_ASSERT_OK(tk_shuffles(d, arg, width));
        CU_ASSERT_OK(cudaMemcpy(got, d, sizeof got, cudaMemcpyDeviceToHost));
        expected_shuffles(want, arg, width);
        for (int k = 0; k < 4; k++)
            for (int l = 0; l < 32; l++)
                if (got[k][l] != want[k][l]) {
                    fprintf(stderr, "  shuffle kind %d arg %d width %d lane %d: got %d want %d\n",
                            k, arg, width, l, got[k][l], want[k][l]);
                    CU_FAIL("shuffle result");
                    k = 4;
                    break;
                }
    }
    cudaFree(d);
}

static void test_votes(void)
{
    unsigned *d, got[5];
    CU_ASSERT_OK(cudaMalloc((void **)&d, sizeof got));
    CU_ASSERT_OK(tk_votes(d));
    CU_ASSERT_OK(cudaMemcpy(got, d, sizeof got, cudaMemcpyDeviceToHost));
    CU_ASSERT_EQUAL(got[0], 0x49249249u); /* lanes 0, 3, ..., 30 */
    CU_ASSERT_EQUAL(got[1], 1u);
    CU_ASSERT_EQUAL(got[2], 1u);
    CU_ASSERT_EQUAL(got[3], 0u);
    CU_ASSERT_EQUAL(got[4], 0u);
    cudaFree(d);
}

static void test_atomics(void)
{
    enum { T = 1000 };
    int hi[9] = {0, -1, 0, 0, 0, 0, 0, -1, 0};
    unsigned hu[2] = {0, 0};
    unsigned long long hull = 0;
    float hf = 0;
    double hd = 0;
    int *di;
    unsigned *du;
    unsigned long long *dull;
    float *df;
    double *dd;
    CU_ASSERT_OK(cudaMalloc((void **)&di, sizeof hi));
    CU_ASSERT_OK(cudaMalloc((void **)&du, sizeof hu));
    CU_ASSERT_OK(cudaMalloc((void **)&dull, sizeof hull));
    CU_ASSERT_OK(cudaMalloc((void **)&df, sizeof hf));
    CU_ASSERT_OK(cudaMalloc((void **)&dd, sizeof hd));
    CU_ASSERT_OK(cudaMemcpy(di, hi, sizeof hi, cudaMemcpyHostToDevice));
    CU_ASSERT_OK(cudaMemcpy(du, hu, sizeof hu, cudaMemcpyHostToDevice));
    CU_ASSERT_OK(cudaMemcpy(dull, &hull, sizeof hull, cudaMemcpyHostToDevice));
    CU_ASSERT_OK(cudaMemcpy(df, &hf, sizeof hf, cudaMemcpyHostToDevice));
    CU_ASSERT_OK(cudaMemcpy(dd, &hd, sizeof hd, cudaMemcpyHostToDevice));
    CU_ASSERT_OK(tk_atomics(di, du, dull, df, dd, T));
    CU_ASSERT_OK(cudaMemcpy(hi, di, sizeof hi, cudaMemcpyDeviceToHost));
    CU_ASSERT_OK(cudaMemcpy(hu, du, sizeof hu, cudaMemcpyDeviceToHost));
    CU_ASSERT_OK(cudaMemcpy(&hull, dull, sizeof hull, cudaMemcpyDeviceToHost));
    CU_ASSERT_OK(cudaMemcpy(&hf, df, sizeof hf, cudaMemcpyDeviceToHost));
    CU_ASSERT_OK(cudaMemcpy(&hd, dd, sizeof hd, cudaMemcpyDeviceToHost));
    int x = 0;
    for (int t = 0; t < T; t++) x ^= t;
    CU_ASSERT_EQUAL(hi[0], T);
    CU_ASSERT_EQUAL(hi[1], T - 1);
    CU_ASSERT_EQUAL(hi[2], -(T - 1));
    CU_ASSERT_EQUAL(hi[3], 2 * T);
    CU_ASSERT_EQUAL(hi[4], -T);
    CU_ASSERT_EQUAL(hi[5], 0x7fffffff);
    CU_ASSERT_EQUAL(hi[6], x);
    CU_ASSERT_EQUAL((unsigned)hi[7], 0x80000000u);
    CU_ASSERT_EQUAL(hi[8], 42);
    CU_ASSERT_EQUAL(hu[0], (unsigned)(T % 10));             /* atomicInc wraps to 0 past 9 */
    CU_ASSERT_EQUAL(hu[1], (unsigned)((10 - T % 10) % 10)); /* atomicDec wraps to 9 at 0 */
    CU_ASSERT_EQUAL(hull, (unsigned long long)T * (T - 1) / 2);
    CU_ASSERT_EQUAL(hf, 0.5f * T); /* exact: multiples of 0.5 below 2^24 */
    CU_ASSERT_EQUAL(hd, 0.25 * T);
    cudaFree(di);
    cudaFree(du);
    cudaFree(dull);
    cudaFree(df);
    cudaFree(dd);
}

static unsigned brev(unsigned x)
{
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}

static void test_intrinsics(void)
{
    static const int xs[] = {240, -5, 1, 0x12345678};
    int *d, got[12];
    CU_ASSERT_OK(cudaMalloc((void **)&d, sizeof got));
    for (int k = 0; k < 4; k++) {
        int x = xs[k];
        CU_ASSERT_OK(tk_intrinsics(d, x));
        CU_ASSERT_OK(cudaMemcpy(got, d, sizeof got, cudaMemcpyDeviceToHost));
        int x24 = (int)((unsigned)x << 8) >> 8;
        CU_ASSERT_EQUAL(got[0], __builtin_popcount((unsigned)x));
        CU_ASSERT_EQUAL(got[1], __builtin_clz((unsigned)x));
        CU_ASSERT_EQUAL(got[2], __builtin_ffs(x));
        CU_ASSERT_EQUAL((unsigned)got[3], brev((unsigned)x));
        CU_ASSERT_EQUAL(got[4], (int)(unsigned)((long long)x24 * -3));
        CU_ASSERT_EQUAL((unsigned)got[5], ((unsigned)x & 0xffffffu) * 5u);
        CU_ASSERT_EQUAL(got[6], 0x3fc00000);
        CU_ASSERT_EQUAL(got[7], 3);
        CU_ASSERT_EQUAL(got[8], 32);
        CU_ASSERT_EQUAL(got[9], (int)(((long long)x * 0x40000000LL) >> 32));
        CU_ASSERT_EQUAL(got[10], x < 7 ? x : 7);
        CU_ASSERT_EQUAL(got[11], x > 7 ? x : 7);
    }
    cudaFree(d);
}

static void test_grid_stride(void)
{
    enum { N = 10007 };
    float *x, *y, hx[N], hy[N];
    for (int i = 0; i < N; i++) {
        hx[i] = (float)i;
        hy[i] = 1.0f;
    }
    CU_ASSERT_OK(cudaMalloc((void **)&x, sizeof hx));
    CU_ASSERT_OK(cudaMalloc((void **)&y, sizeof hy));
    CU_ASSERT_OK(cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice));
    CU_ASSERT_OK(cudaMemcpy(y, hy, sizeof hy, cudaMemcpyHostToDevice));
    CU_ASSERT_OK(tk_axpy(3.0f, y, x, N, 3, 96));
    CU_ASSERT_OK(cudaMemcpy(hx, x, sizeof hx, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= hx[i] == 3.0f * (float)i + 1.0f;
    CU_ASSERT(ok);
    cudaFree(x);
    cudaFree(y);
}

/* Device printf reaches stdout by the next synchronising call. */
static void test_device_printf(void)
{
    char path[] = "/tmp/paralab-printf-XXXXXX";
    int fd = mkstemp(path), saved = dup(STDOUT_FILENO);
    CU_ASSERT(fd >= 0 && saved >= 0);
    fflush(stdout);
    dup2(fd, STDOUT_FILENO);
    CU_ASSERT_OK(tk_hello(2, 41));
    CU_ASSERT_OK(cudaDeviceSynchronize());
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    char buf[1024] = "";
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(path);
    CU_ASSERT(n > 0);
    int lines = 0;
    for (int b = 0; b < 2; b++)
        for (int t = 0; t < 3; t++) {
            char want[80];
            snprintf(want, sizeof want, "hello from thread %d of block %d, tag 41\n", t, b);
            lines += strstr(buf, want) != NULL;
        }
    CU_ASSERT_EQUAL(lines, 6);
}

static int warp_tail(int sync)
{
    int h[64], *din, *dout, got = 0;
    for (int i = 0; i < 64; i++) h[i] = i + 1;
    cudaMalloc((void **)&din, sizeof h);
    cudaMalloc((void **)&dout, sizeof(int));
    cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice);
    CU_ASSERT_OK(tk_warp_tail(din, dout, sync));
    CU_ASSERT_OK(cudaMemcpy(&got, dout, sizeof got, cudaMemcpyDeviceToHost));
    cudaFree(din);
    cudaFree(dout);
    return got;
}

static void test_warp_tail_with_syncwarp(void) { CU_ASSERT_EQUAL(warp_tail(1), 64 * 65 / 2); }

#ifdef PARALAB_SIMULATED_CUDA
/* SIM ONLY: the order threads run in between barriers is a choice; correct
 * code gives the same answer under every one, a missing barrier does not. */
static void test_schedules(void)
{
    for (int kind = 0; kind <= 2; kind++)
        for (unsigned long long seed = 1; seed <= (kind == 2 ? 3u : 1u); seed++) {
            simtSetSchedule(kind, seed);
            CU_ASSERT(block_sums_match(4099, 256, 1, 1e-5));
            CU_ASSERT_EQUAL(warp_tail(1), 64 * 65 / 2);
        }
    /* without the __syncthreads() in the loop, thread 0 runs ahead of the
     * threads whose partial sums it reads */
    simtSetSchedule(0, 0);
    CU_ASSERT_FALSE(block_sums_match(4099, 256, 0, 1e-5));
    simtSetSchedule(2, 7);
    CU_ASSERT_FALSE(block_sums_match(4099, 256, 0, 1e-5));
    simtSetSchedule(0, 0);
}

/* SIM ONLY: warps do not run in lockstep (independent thread scheduling,
 * since Volta); the emulator does not fake it, so the legacy volatile tail
 * without __syncwarp() gives a wrong sum. */
static void test_no_lockstep(void)
{
    simtSetSchedule(0, 0);
    CU_ASSERT_NOT_EQUAL(warp_tail(0), 64 * 65 / 2);
}
#endif

#ifdef PARALAB_SIMULATED_CUDA
/* Runs f between simtMemStatsBegin and End. */
#define COUNTED(st, call)                                                                          \
    do {                                                                                           \
        CU_ASSERT_OK(cudaDeviceSynchronize());                                                     \
        simtMemStatsBegin();                                                                       \
        CU_ASSERT_OK(call);                                                                        \
        CU_ASSERT_OK(cudaDeviceSynchronize());                                                     \
        simtMemStatsEnd(&(st));                                                                    \
    } while (0)
#define COUNTS(c, want_requests, want_units)                                                       \
    do {                                                                                           \
        CU_ASSERT_EQUAL((c).requests, want_requests);                                              \
        CU_ASSERT_EQUAL((c).units, want_units);                                                    \
    } while (0)

/* Sectors per request: 32 consecutive floats are 4 sectors (cudaMalloc
 * aligns to 256 bytes), every second one 8, 32 bytes or more apart 32. */
static void test_mem_sectors(void)
{
    float *in, *out;
    CU_ASSERT_OK(cudaMalloc((void **)&in, 32 * 32 * 33 * sizeof(float)));
    CU_ASSERT_OK(cudaMalloc((void **)&out, 64 * sizeof(float)));
    CU_ASSERT_OK(cudaMemset(in, 0, 32 * 32 * 33 * sizeof(float)));
    static const struct {
        int stride, threads;
        unsigned long long req, sectors;
    } want[] = {{1, 32, 1, 4},   {2, 32, 1, 8}, {4, 32, 1, 16}, {8, 32, 1, 32},
                {32, 32, 1, 32}, {1, 64, 2, 8}, {0, 32, 1, 1},  {1, 8, 1, 1}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        simt_mem_stats st;
        COUNTED(st, tk_strided_copy(out, in, want[i].stride, want[i].threads));
        COUNTS(st.global_load, want[i].req, want[i].sectors);
        COUNTS(st.global_store, want[i].req, (want[i].threads + 7) / 8);
        COUNTS(st.shared_load, 0, 0);
        COUNTS(st.shared_store, 0, 0);
    }
    /* one load site passed 3 times: 3 requests, not one of 96 threads */
    simt_mem_stats st;
    COUNTED(st, tk_repeat_loads(out, in, 3));
    COUNTS(st.global_load, 3, 12);
    COUNTS(st.global_store, 1, 4);
    /* after End nothing is counted */
    CU_ASSERT_OK(tk_strided_copy(out, in, 8, 32));
    CU_ASSERT_OK(cudaDeviceSynchronize());
    simt_mem_stats after;
    simtMemStatsEnd(&after);
    CU_ASSERT_EQUAL(memcmp(&after, &st, sizeof st), 0);
    CU_ASSERT_OK(cudaFree(in));
    CU_ASSERT_OK(cudaFree(out));
}

/* Wavefronts per shared request: a column of a 32x32 tile is 32 words in
 * one bank (32 wavefronts), of a 32x33 tile 32 banks (1); one word read by
 * every thread is a broadcast (1). The transpose is right every time. */
static void test_mem_banks(void)
{
    float *in, *out, h[1024], back[1024];
    for (int i = 0; i < 1024; i++) h[i] = (float)i;
    CU_ASSERT_OK(cudaMalloc((void **)&in, sizeof h));
    CU_ASSERT_OK(cudaMalloc((void **)&out, sizeof h));
    CU_ASSERT_OK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
    static const unsigned long long load_waves[] = {32 * 32, 32, 32};
    for (int mode = 0; mode < 3; mode++) {
        simt_mem_stats st;
        COUNTED(st, tk_tile_columns(out, in, mode));
        /* mode 2 also reads in[0] in every warp: one more request of one sector */
        COUNTS(st.global_load, mode == 2 ? 64 : 32, mode == 2 ? 32 * 5 : 32 * 4);
        COUNTS(st.global_store, 32, 32 * 4);
        COUNTS(st.shared_store, 32, 32);
        COUNTS(st.shared_load, 32, load_waves[mode]);
        CU_ASSERT_OK(cudaMemcpy(back, out, sizeof back, cudaMemcpyDeviceToHost));
        int ok = 1;
        for (int y = 0; y < 32; y++)
            for (int x = 0; x < 32; x++)
                ok &= back[y * 32 + x] == (mode == 2 ? 0.0f : h[x * 32 + y]);
        CU_ASSERT(ok);
    }
    CU_ASSERT_OK(cudaFree(in));
    CU_ASSERT_OK(cudaFree(out));
}
#endif

int register_emulator_suite(void)
{
    static const unit_test t[] = {
        {"block reduction in shared memory", test_block_sum},
        {"warp-shuffle reduction", test_warp_sum},
        {"shuffle variants and widths", test_shuffles},
        {"ballot, any, all", test_votes},
        {"atomics", test_atomics},
        {"integer and bit intrinsics", test_intrinsics},
        {"grid-stride loop", test_grid_stride},
        {"warp tail with __syncwarp", test_warp_tail_with_syncwarp},
        {"device printf", test_device_printf},
#ifdef PARALAB_SIMULATED_CUDA
        {"schedules (sim)", test_schedules},
        {"no lockstep (sim)", test_no_lockstep},
        {"memory sectors per request (sim)", test_mem_sectors},
        {"shared-memory bank conflicts (sim)", test_mem_banks},
#endif
    };
    return UNIT_SUITE("emulator", t);
}
