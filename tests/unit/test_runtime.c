/*
 * test_runtime.c — conformance of the CUDA runtime API: what CUDA documents,
 * asserted in both build variants (the simulated GPU here, a real one in
 * make gpu-check). Tests of the modeled clock and of what only the simulator
 * can promise are marked SIM ONLY.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels.h"
#include "paralab/device.h"
#include "paralab/kernels.h"
#include "suites.h"
#ifdef PARALAB_SIMULATED_CUDA
#include "simt/simt.h"
#endif

static int ndev(void)
{
    int n = 0;
    cudaGetDeviceCount(&n);
    return n;
}

static void test_devices(void)
{
    int n = ndev(), d = -1;
    CU_ASSERT(n >= 1);
#ifdef PARALAB_SIMULATED_CUDA
    CU_ASSERT_EQUAL(n, atoi(getenv("SIMT_DEVICES")));
#endif
    CU_ASSERT_CUDA(cudaSetDevice(-1), cudaErrorInvalidDevice);
    CU_ASSERT_CUDA(cudaSetDevice(n), cudaErrorInvalidDevice);
    CU_ASSERT_OK(cudaSetDevice(n - 1));
    CU_ASSERT_OK(cudaGetDevice(&d));
    CU_ASSERT_EQUAL(d, n - 1);
    CU_ASSERT_OK(cudaSetDevice(0));
    CU_ASSERT_CUDA(cudaGetDevice(NULL), cudaErrorInvalidValue);
    cudaGetLastError();
}

static void test_properties(void)
{
    struct cudaDeviceProp p;
    CU_ASSERT_OK(cudaGetDeviceProperties(&p, 0));
    CU_ASSERT_EQUAL(p.maxThreadsPerBlock, 1024);
    CU_ASSERT_EQUAL(p.warpSize, 32);
    CU_ASSERT_EQUAL(p.maxThreadsDim[0], 1024);
    CU_ASSERT_EQUAL(p.maxThreadsDim[1], 1024);
    CU_ASSERT_EQUAL(p.maxThreadsDim[2], 64);
    CU_ASSERT_EQUAL(p.maxGridSize[0], 2147483647);
    CU_ASSERT_EQUAL(p.maxGridSize[1], 65535);
    CU_ASSERT_EQUAL(p.maxGridSize[2], 65535);
    CU_ASSERT_EQUAL(p.sharedMemPerBlock, 48u * 1024u);
    CU_ASSERT(p.sharedMemPerBlockOptin >= p.sharedMemPerBlock);
    CU_ASSERT(p.totalGlobalMem > 0);
    static const struct {
        enum cudaDeviceAttr a;
        int v;
    } attrs[] = {
        {cudaDevAttrMaxThreadsPerBlock, 1024},
        {cudaDevAttrWarpSize, 32},
        {cudaDevAttrMaxBlockDimZ, 64},
        {cudaDevAttrMaxGridDimY, 65535},
        {cudaDevAttrMaxSharedMemoryPerBlock, 49152},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++) {
        int v = -1;
        CU_ASSERT_OK(cudaDeviceGetAttribute(&v, attrs[i].a, 0));
        CU_ASSERT_EQUAL(v, attrs[i].v);
    }
    int major = 0, sms = 0;
    CU_ASSERT_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    CU_ASSERT_EQUAL(major, p.major);
    CU_ASSERT_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CU_ASSERT_EQUAL(sms, p.multiProcessorCount);
    CU_ASSERT_CUDA(cudaGetDeviceProperties(NULL, 0), cudaErrorInvalidValue);
    CU_ASSERT_CUDA(cudaGetDeviceProperties(&p, ndev()), cudaErrorInvalidDevice);
    cudaGetLastError();
}

static void test_error_names(void)
{
    CU_ASSERT_STRING_EQUAL(cudaGetErrorName(cudaSuccess), "cudaSuccess");
    CU_ASSERT_STRING_EQUAL(cudaGetErrorString(cudaSuccess), "no error");
    CU_ASSERT_STRING_EQUAL(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue");
    CU_ASSERT_STRING_EQUAL(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
    CU_ASSERT_STRING_EQUAL(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
    CU_ASSERT_STRING_EQUAL(cudaGetErrorString(cudaErrorInvalidConfiguration),
                           "invalid configuration argument");
    CU_ASSERT_STRING_EQUAL(cudaGetErrorString(cudaErrorIllegalAddress),
                           "an illegal memory access was encountered");
    CU_ASSERT_STRING_EQUAL(cudaGetErrorString(cudaErrorAssert), "device-side assert triggered");
    CU_ASSERT_STRING_EQUAL(cudaGetErrorName(cudaErrorInvalidDevice), "cudaErrorInvalidDevice");
    /* The numeric values the labs and REFERENCES.md rely on. */
    CU_ASSERT_EQUAL(cudaErrorInvalidConfiguration, 9);
    CU_ASSERT_EQUAL(cudaErrorIllegalAddress, 700);
    CU_ASSERT_EQUAL(cudaErrorAssert, 710);
    CU_ASSERT_EQUAL(cudaErrorLaunchFailure, 719);
    CU_ASSERT_EQUAL(cudaErrorNotReady, 600);
}

static void test_last_error(void)
{
    cudaGetLastError();
    CU_ASSERT_CUDA(cudaSetDevice(-1), cudaErrorInvalidDevice);
    CU_ASSERT_CUDA(cudaPeekAtLastError(), cudaErrorInvalidDevice);
    CU_ASSERT_CUDA(cudaPeekAtLastError(), cudaErrorInvalidDevice);
    CU_ASSERT_CUDA(cudaGetLastError(), cudaErrorInvalidDevice);
    CU_ASSERT_CUDA(cudaGetLastError(), cudaSuccess);
    CU_ASSERT_OK(cudaSetDevice(0)); /* success does not reset an error either */
}

static void test_malloc_free(void)
{
    void *p = (void *)1;
    size_t free0, total, free1;
    CU_ASSERT_CUDA(cudaMalloc(NULL, 16), cudaErrorInvalidValue);
    CU_ASSERT_OK(cudaMalloc(&p, 0));
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT_OK(cudaFree(NULL));
    CU_ASSERT_OK(cudaMemGetInfo(&free0, &total));
    CU_ASSERT(free0 <= total);
    CU_ASSERT_OK(cudaMalloc(&p, 64u << 20));
    CU_ASSERT_PTR_NOT_NULL(p);
    CU_ASSERT_EQUAL((uintptr_t)p % 256, 0); /* cudaMalloc aligns to at least 256 bytes */
    CU_ASSERT_OK(cudaMemGetInfo(&free1, &total));
    CU_ASSERT(free1 <= free0 - (64u << 20));
    CU_ASSERT_OK(cudaFree(p));
    void *huge = NULL;
    CU_ASSERT_CUDA(cudaMalloc(&huge, total + (1u << 30)), cudaErrorMemoryAllocation);
    cudaGetLastError();
#ifdef PARALAB_SIMULATED_CUDA /* real CUDA's answer to a double free varies by version */
    CU_ASSERT_CUDA(cudaFree(p), cudaErrorInvalidValue);
    CU_ASSERT_CUDA(cudaFree((char *)huge + 12345), cudaErrorInvalidValue);
    cudaGetLastError();
#endif
}

static void test_memcpy(void)
{
    enum { N = 1000 };
    int h[N], back[N];
    for (int i = 0; i < N; i++) h[i] = i * 7 - 3;
    int *a, *b;
    CU_ASSERT_OK(cudaMalloc((void **)&a, sizeof h));
    CU_ASSERT_OK(cudaMalloc((void **)&b, sizeof h));
    CU_ASSERT_OK(cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice));
    CU_ASSERT_OK(cudaMemcpy(b, a, sizeof h, cudaMemcpyDeviceToDevice));
    memset(back, 0, sizeof back);
    CU_ASSERT_OK(cudaMemcpy(back, b, sizeof h, cudaMemcpyDeviceToHost));
    CU_ASSERT_EQUAL(memcmp(back, h, sizeof h), 0);
    memset(back, 0, sizeof back);
    CU_ASSERT_OK(cudaMemcpy(b, h, sizeof h, cudaMemcpyDefault)); /* inferred from the pointers */
    CU_ASSERT_OK(cudaMemcpy(back, b, sizeof h, cudaMemcpyDefault));
    CU_ASSERT_EQUAL(memcmp(back, h, sizeof h), 0);
    int hh[4] = {1, 2, 3, 4}, hh2[4] = {0};
    CU_ASSERT_OK(cudaMemcpy(hh2, hh, sizeof hh, cudaMemcpyHostToHost));
    CU_ASSERT_EQUAL(memcmp(hh, hh2, sizeof hh), 0);
    CU_ASSERT_OK(cudaMemcpy(a, h, 0, cudaMemcpyHostToDevice)); /* count 0: a no-op */
    CU_ASSERT_CUDA(cudaMemcpy(a, h, sizeof h, (enum cudaMemcpyKind)7),
                   cudaErrorInvalidMemcpyDirection);
#ifdef PARALAB_SIMULATED_CUDA
    CU_ASSERT_CUDA(cudaMemcpy(a, h, sizeof h + 4, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    CU_ASSERT_CUDA(cudaMemcpy(h, a, sizeof h, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
#endif
    cudaGetLastError();
    CU_ASSERT_OK(cudaMemset(a, 0xab, sizeof h));
    CU_ASSERT_OK(cudaMemcpy(back, a, sizeof h, cudaMemcpyDeviceToHost));
    int all = 1;
    for (int i = 0; i < N; i++) all &= (unsigned)back[i] == 0xababababu;
    CU_ASSERT(all);
    CU_ASSERT_OK(cudaFree(a));
    CU_ASSERT_OK(cudaFree(b));
}

static void test_pinned(void)
{
    enum { N = 4096 };
    float *h = NULL, *d = NULL, *back = NULL;
    CU_ASSERT_OK(cudaMallocHost((void **)&h, N * sizeof(float)));
    CU_ASSERT_OK(cudaHostAlloc((void **)&back, N * sizeof(float), cudaHostAllocDefault));
    CU_ASSERT_OK(cudaMalloc((void **)&d, N * sizeof(float)));
    for (int i = 0; i < N; i++) h[i] = (float)i * 0.5f;
    cudaStream_t s;
    CU_ASSERT_OK(cudaStreamCreate(&s));
    CU_ASSERT_OK(cudaMemcpyAsync(d, h, N * sizeof(float), cudaMemcpyHostToDevice, s));
    CU_ASSERT_OK(cudaMemcpyAsync(back, d, N * sizeof(float), cudaMemcpyDeviceToHost, s));
    CU_ASSERT_OK(cudaStreamSynchronize(s));
    CU_ASSERT_EQUAL(memcmp(h, back, N * sizeof(float)), 0);
    CU_ASSERT_OK(cudaStreamDestroy(s));
    CU_ASSERT_OK(cudaFree(d));
    CU_ASSERT_OK(cudaFreeHost(h));
    CU_ASSERT_OK(cudaFreeHost(back));
#ifdef PARALAB_SIMULATED_CUDA
    int x;
    CU_ASSERT_CUDA(cudaFreeHost(&x), cudaErrorInvalidValue);
    cudaGetLastError();
#endif
}

/* The roofline numbers the labs print: the preset's on the simulator; on a
 * real GPU computed from its attributes, within a factor of 2 of any
 * datacenter GPU since Pascal. */
static void test_device_peaks(void)
{
    double flops = 0, bw = 0;
    CU_ASSERT_EQUAL(pl_device_peaks(0, &flops, &bw), 0);
#ifdef PARALAB_SIMULATED_CUDA
    CU_ASSERT_EQUAL(flops, simtCurrentPreset()->fp32_flops);
    CU_ASSERT_EQUAL(bw, simtCurrentPreset()->memory_bw);
#else
    CU_ASSERT(flops > 5e12 && flops < 2e14);
    CU_ASSERT(bw > 5e11 && bw < 2e13);
#endif
    CU_ASSERT_EQUAL(pl_device_peaks(ndev(), &flops, &bw), (int)cudaErrorInvalidDevice);
    cudaGetLastError();
}

static void test_launch_limits(void)
{
    unsigned *out;
    CU_ASSERT_OK(cudaMalloc((void **)&out, 4096 * sizeof(unsigned)));
    /* CUDA C++ Programming Guide, "Compute Capabilities". */
    static const struct {
        dim3 g, b;
    } bad[] = {
        {{1, 1, 1}, {1025, 1, 1}}, {{1, 1, 1}, {32, 32, 2}},   {{1, 1, 1}, {1, 1, 65}},
        {{1, 1, 1}, {1, 1025, 1}}, {{1, 65536, 1}, {1, 1, 1}}, {{1, 1, 65536}, {1, 1, 1}},
        {{0, 1, 1}, {32, 1, 1}},   {{1, 1, 1}, {0, 1, 1}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
#ifdef PARALAB_SIMULATED_CUDA
        CU_ASSERT_CUDA(tk_ids(out, bad[i].g, bad[i].b), cudaErrorInvalidConfiguration);
#else
        /* CUDA 13.0, driver 580, H200: cudaErrorInvalidValue (docs/gpu-results.md) */
        cudaError_t e = tk_ids(out, bad[i].g, bad[i].b);
        CU_ASSERT(e == cudaErrorInvalidConfiguration || e == cudaErrorInvalidValue);
#endif
        /* the launcher already returned (and so cleared) the error */
        CU_ASSERT_CUDA(cudaGetLastError(), cudaSuccess);
    }
    dim3 g = {3, 2, 2}, b = {8, 4, 2}; /* 12 blocks of 64 threads */
    CU_ASSERT_OK(tk_ids(out, g, b));
    unsigned h[768];
    CU_ASSERT_OK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (unsigned blk = 0; blk < 12; blk++)
        for (unsigned t = 0; t < 64; t++) ok &= h[blk * 64 + t] == (blk << 10 | t);
    CU_ASSERT(ok);
    dim3 g1 = {1, 1, 1}, b1 = {1024, 1, 1}, b2 = {4, 4, 64};
    CU_ASSERT_OK(tk_ids(out, g1, b1));
    CU_ASSERT_OK(tk_ids(out, g1, b2));
    CU_ASSERT_OK(cudaDeviceSynchronize());
    CU_ASSERT_OK(cudaFree(out));
}

static void test_stream_order(void)
{
    enum { N = 10007 };
    float *x, *y, h[N];
    CU_ASSERT_OK(cudaMalloc((void **)&x, sizeof h));
    CU_ASSERT_OK(cudaMalloc((void **)&y, sizeof h));
    for (int i = 0; i < N; i++) h[i] = (float)(i % 100);
    CU_ASSERT_OK(cudaMemcpy(y, h, sizeof h, cudaMemcpyHostToDevice));
    CU_ASSERT_OK(cudaMemset(x, 0, sizeof h));
    for (int k = 0; k < 5; k++) CU_ASSERT_OK(tk_axpy(2.0f, y, x, N, 4, 64)); /* x = 2x + y */
    CU_ASSERT_OK(cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= h[i] == 31.0f * (float)(i % 100); /* 1+2+4+8+16 */
    CU_ASSERT(ok);
    CU_ASSERT_OK(cudaFree(x));
    CU_ASSERT_OK(cudaFree(y));
}

/* A kernel spins on a flag in pinned host memory: the stream is busy (not
 * ready) until the host sets it. */
static void test_stream_query(void)
{
    int *flag, *seen, h = 0;
    CU_ASSERT_OK(cudaMallocHost((void **)&flag, sizeof(int)));
    CU_ASSERT_OK(cudaMalloc((void **)&seen, sizeof(int)));
    *flag = 0;
    cudaStream_t s;
    CU_ASSERT_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CU_ASSERT_OK(tk_wait_flag(flag, seen, 4000000000LL, s));
    CU_ASSERT_CUDA(cudaStreamQuery(s), cudaErrorNotReady);
    CU_ASSERT_CUDA(cudaGetLastError(), cudaSuccess); /* "not ready" is not an error */
    __atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
    CU_ASSERT_OK(cudaStreamSynchronize(s));
    CU_ASSERT_OK(cudaStreamQuery(s));
    CU_ASSERT_OK(cudaMemcpy(&h, seen, sizeof h, cudaMemcpyDeviceToHost));
    CU_ASSERT_EQUAL(h, 1);
    CU_ASSERT_OK(cudaStreamDestroy(s));
    CU_ASSERT_OK(cudaFree(seen));
    CU_ASSERT_OK(cudaFreeHost(flag));
}

/* Two streams run concurrently: a kernel on s1 waits for a flag that a
 * kernel queued later on s2 sets. The second kernel runs once first: with
 * lazy loading (the default since CUDA 12.2) its first launch loads it,
 * and loading can wait for the spinning kernel, a deadlock (CUDA
 * Programming Guide, "Lazy Loading", "Potential Hazards"). */
static void test_streams_concurrent(void)
{
    int *flag, *seen, h = 0;
    CU_ASSERT_OK(cudaMalloc((void **)&flag, sizeof(int)));
    CU_ASSERT_OK(cudaMalloc((void **)&seen, sizeof(int)));
    CU_ASSERT_OK(cudaMemset(flag, 0, sizeof(int)));
    CU_ASSERT_OK(cudaDeviceSynchronize());
    cudaStream_t s1, s2;
    CU_ASSERT_OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CU_ASSERT_OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CU_ASSERT_OK(tk_cost(seen, 0, 4, s2)); /* loaded now, not while s1 spins */
    CU_ASSERT_OK(cudaDeviceSynchronize());
    CU_ASSERT_OK(cudaMemset(seen, 0, sizeof(int)));
    CU_ASSERT_OK(cudaDeviceSynchronize()); /* s1 does not wait for the default stream */
    CU_ASSERT_OK(tk_wait_flag(flag, seen, 4000000000LL, s1));
    CU_ASSERT_OK(tk_cost(flag, 0, 4, s2));
    CU_ASSERT_OK(cudaDeviceSynchronize());
    CU_ASSERT_OK(cudaMemcpy(&h, seen, sizeof h, cudaMemcpyDeviceToHost));
    CU_ASSERT_EQUAL(h, 1);
    CU_ASSERT_OK(cudaStreamDestroy(s1));
    CU_ASSERT_OK(cudaStreamDestroy(s2));
    CU_ASSERT_OK(cudaFree(flag));
    CU_ASSERT_OK(cudaFree(seen));
}

static void test_events(void)
{
    cudaEvent_t a, b, nt;
    float ms = -1;
    CU_ASSERT_OK(cudaEventCreate(&a));
    CU_ASSERT_OK(cudaEventCreate(&b));
    CU_ASSERT_OK(cudaEventCreateWithFlags(&nt, cudaEventDisableTiming));
    CU_ASSERT_OK(cudaEventQuery(a)); /* never recorded: complete */
    CU_ASSERT_CUDA(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle);
    CU_ASSERT_OK(cudaEventRecord(a, 0));
    CU_ASSERT_OK(cudaEventRecord(nt, 0));
    CU_ASSERT_OK(cudaEventRecord(b, 0));
    CU_ASSERT_OK(cudaEventSynchronize(b));
    CU_ASSERT_OK(cudaEventElapsedTime(&ms, a, b));
    CU_ASSERT(ms >= 0);
    CU_ASSERT_CUDA(cudaEventElapsedTime(&ms, a, nt), cudaErrorInvalidResourceHandle);
    CU_ASSERT_CUDA(cudaEventCreateWithFlags(&nt, 0x80), cudaErrorInvalidValue);
    cudaGetLastError();
    CU_ASSERT_OK(cudaEventDestroy(a));
    CU_ASSERT_OK(cudaEventDestroy(b));
}

static void test_peer(void)
{
    if (ndev() < 2) return;
    int can = -1;
    CU_ASSERT_OK(cudaDeviceCanAccessPeer(&can, 0, 0));
    CU_ASSERT_EQUAL(can, 0);
    CU_ASSERT_OK(cudaDeviceCanAccessPeer(&can, 0, 1));
    int *d0, *d1, h[256], back[256];
    for (int i = 0; i < 256; i++) h[i] = 1000 - i;
    CU_ASSERT_OK(cudaSetDevice(1));
    CU_ASSERT_OK(cudaMalloc((void **)&d1, sizeof h));
    CU_ASSERT_OK(cudaMemcpy(d1, h, sizeof h, cudaMemcpyHostToDevice));
    CU_ASSERT_OK(cudaSetDevice(0));
    CU_ASSERT_OK(cudaMalloc((void **)&d0, sizeof h));
    if (can) {
        cudaError_t e = cudaDeviceEnablePeerAccess(1, 0);
        CU_ASSERT(e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled);
        CU_ASSERT_CUDA(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessAlreadyEnabled);
    }
    CU_ASSERT_CUDA(cudaDeviceEnablePeerAccess(0, 0), cudaErrorInvalidDevice);
    cudaGetLastError();
    CU_ASSERT_OK(cudaMemcpyPeer(d0, 0, d1, 1, sizeof h));
    CU_ASSERT_OK(cudaMemcpy(back, d0, sizeof h, cudaMemcpyDeviceToHost));
    CU_ASSERT_EQUAL(memcmp(back, h, sizeof h), 0);
    CU_ASSERT_OK(cudaFree(d0));
    CU_ASSERT_OK(cudaSetDevice(1));
    CU_ASSERT_OK(cudaFree(d1));
    CU_ASSERT_OK(cudaSetDevice(0));
}

#ifdef PARALAB_SIMULATED_CUDA
/* cudaFree waits for a peer copy that another device's stream will still
 * make from the memory (an aborted collective can leave one behind): when
 * it returns, the copies are done instead of reading freed memory. */
static void test_free_waits_for_peers(void)
{
    if (ndev() < 2) return;
    enum { N = 16 << 20 };
    char *src, *dst, h = 0;
    cudaStream_t s1;
    CU_ASSERT_OK(cudaSetDevice(0));
    CU_ASSERT_OK(cudaMalloc((void **)&src, N));
    CU_ASSERT_OK(cudaMemset(src, 7, N));
    CU_ASSERT_OK(cudaDeviceSynchronize());
    CU_ASSERT_OK(cudaSetDevice(1));
    CU_ASSERT_OK(cudaMalloc((void **)&dst, N));
    CU_ASSERT_OK(cudaStreamCreate(&s1));
    for (int i = 0; i < 8; i++) CU_ASSERT_OK(cudaMemcpyPeerAsync(dst, 1, src, 0, N, s1));
    CU_ASSERT_OK(cudaSetDevice(0));
    CU_ASSERT_OK(cudaFree(src));
    CU_ASSERT_OK(cudaSetDevice(1));
    CU_ASSERT_OK(cudaStreamQuery(s1)); /* done before the memory went */
    CU_ASSERT_OK(cudaMemcpy(&h, dst + N - 1, 1, cudaMemcpyDeviceToHost));
    CU_ASSERT_EQUAL(h, 7);
    CU_ASSERT_OK(cudaStreamDestroy(s1));
    CU_ASSERT_OK(cudaFree(dst));
    CU_ASSERT_OK(cudaSetDevice(0));
}
#endif

static void test_dynamic_shared(void)
{
    enum { N = 1000, B = 256 };
    int h[N], back[N], *in, *out;
    for (int i = 0; i < N; i++) h[i] = i * 3;
    CU_ASSERT_OK(cudaMalloc((void **)&in, sizeof h));
    CU_ASSERT_OK(cudaMalloc((void **)&out, sizeof h));
    CU_ASSERT_OK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
    CU_ASSERT_OK(cudaMemset(out, 0xff, sizeof h));
    CU_ASSERT_OK(tk_reverse_dynamic(in, out, N, B, B * sizeof(int)));
    CU_ASSERT_OK(cudaMemcpy(back, out, sizeof h, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (int i = 0; i < N; i++) {
        int blk = i / B, t = i % B, src = blk * B + (B - 1 - t);
        int want = src < N ? h[src] : 0;
        if (blk * B + B <= N) ok &= back[i] == want; /* full blocks: exact reversal */
    }
    CU_ASSERT(ok);
    /* More than 48 KiB of dynamic shared memory needs the opt-in. */
    size_t big = 64 * 1024;
    CU_ASSERT_CUDA(tk_reverse_dynamic(in, out, N, B, big), cudaErrorInvalidValue);
    CU_ASSERT_OK(cudaFuncSetAttribute(tk_reverse_dynamic_kernel(),
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, (int)big));
    CU_ASSERT_OK(tk_reverse_dynamic(in, out, N, B, big));
    CU_ASSERT_OK(cudaDeviceSynchronize());
    struct cudaDeviceProp p;
    CU_ASSERT_OK(cudaGetDeviceProperties(&p, 0));
    CU_ASSERT_CUDA(cudaFuncSetAttribute(tk_reverse_dynamic_kernel(),
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)p.sharedMemPerBlockOptin + 1024),
                   cudaErrorInvalidValue);
    cudaGetLastError();
    CU_ASSERT_OK(cudaFree(in));
    CU_ASSERT_OK(cudaFree(out));
}

static void test_constant_memory(void)
{
    enum { N = 100 };
    const float c[4] = {1.0f, -2.0f, 0.5f, 0.25f};
    float *d, h[N];
    CU_ASSERT_OK(cudaMalloc((void **)&d, sizeof h));
    CU_ASSERT_OK(tk_set_coefficients(c));
    CU_ASSERT_OK(tk_poly(d, N));
    CU_ASSERT_OK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (int i = 0; i < N; i++) {
        float x = (float)i, want = ((c[3] * x + c[2]) * x + c[1]) * x + c[0];
        ok &= fabsf(h[i] - want) <= 1e-6f * fabsf(want) + 1e-6f;
    }
    CU_ASSERT(ok);
    CU_ASSERT_OK(cudaFree(d));
}

/* Each device has its own memory and runs its own kernels. */
static void test_multi_device(void)
{
    int n = ndev() < 4 ? ndev() : 4;
    unsigned *d[4];
    dim3 g = {2, 1, 1}, b = {32, 1, 1};
    for (int i = 0; i < n; i++) {
        CU_ASSERT_OK(cudaSetDevice(i));
        CU_ASSERT_OK(cudaMalloc((void **)&d[i], 64 * sizeof(unsigned)));
        CU_ASSERT_OK(tk_ids(d[i], g, b));
    }
    for (int i = 0; i < n; i++) {
        unsigned h[64];
        CU_ASSERT_OK(cudaSetDevice(i));
        CU_ASSERT_OK(cudaMemcpy(h, d[i], sizeof h, cudaMemcpyDeviceToHost));
        CU_ASSERT_EQUAL(h[33], 1u << 10 | 1u);
        CU_ASSERT_OK(cudaFree(d[i]));
    }
    CU_ASSERT_OK(cudaSetDevice(0));
}

#ifdef PARALAB_SIMULATED_CUDA
/* SIM ONLY: the modeled clock, from the preset's datasheet numbers. */
static void test_modeled_kernel_time(void)
{
    const simt_preset *h = simtCurrentPreset();
    CU_ASSERT_OK(cudaSetDevice(2));
    int *out;
    cudaEvent_t a, b;
    CU_ASSERT_OK(cudaMalloc((void **)&out, sizeof(int)));
    CU_ASSERT_OK(cudaEventCreate(&a));
    CU_ASSERT_OK(cudaEventCreate(&b));
    CU_ASSERT_OK(cudaEventRecord(a, 0));
    /* memory bound: 1 ms of bytes at the preset's bandwidth */
    CU_ASSERT_OK(tk_cost(out, 0, h->memory_bw * 1e-3, 0));
    CU_ASSERT_OK(cudaEventRecord(b, 0));
    CU_ASSERT_OK(cudaEventSynchronize(b));
    float ms = 0;
    CU_ASSERT_OK(cudaEventElapsedTime(&ms, a, b));
    CU_ASSERT_DOUBLE_EQUAL(ms, 1.0 + h->launch_latency * 1e3, 1e-5);
    /* compute bound: 2 ms of FLOPs */
    CU_ASSERT_OK(cudaEventRecord(a, 0));
    CU_ASSERT_OK(tk_cost(out, h->fp32_flops * 2e-3, 4, 0));
    CU_ASSERT_OK(cudaEventRecord(b, 0));
    CU_ASSERT_OK(cudaEventSynchronize(b));
    CU_ASSERT_OK(cudaEventElapsedTime(&ms, a, b));
    CU_ASSERT_DOUBLE_EQUAL(ms, 2.0 + h->launch_latency * 1e3, 1e-5);
    float wall = -1;
    CU_ASSERT_OK(simtEventElapsedMeasured(&wall, a, b));
    CU_ASSERT(wall >= 0);
    CU_ASSERT_OK(cudaEventDestroy(a));
    CU_ASSERT_OK(cudaEventDestroy(b));
    CU_ASSERT_OK(cudaFree(out));
    CU_ASSERT_OK(cudaSetDevice(0));
}

static float timed_copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k)
{
    cudaEvent_t a, b;
    float ms = -1;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a, 0);
    cudaMemcpy(dst, src, n, k);
    cudaEventRecord(b, 0);
    cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms;
}

/* SIM ONLY: pinned copies reach more of the host link than pageable ones. */
static void test_modeled_copy_time(void)
{
    const simt_preset *h = simtCurrentPreset();
    size_t n = 64u << 20;
    CU_ASSERT_OK(cudaSetDevice(3));
    void *d, *pinned, *pageable = malloc(n);
    CU_ASSERT_OK(cudaMalloc(&d, n));
    CU_ASSERT_OK(cudaMallocHost(&pinned, n));
    memset(pageable, 1, n);
    memset(pinned, 1, n);
    float tp = timed_copy(d, pinned, n, cudaMemcpyHostToDevice);
    float tq = timed_copy(d, pageable, n, cudaMemcpyHostToDevice);
    double want_p = (h->copy_latency + n / (h->host_link_bw * h->pinned_efficiency)) * 1e3;
    double want_q = (h->copy_latency + n / (h->host_link_bw * h->pageable_efficiency)) * 1e3;
    CU_ASSERT_DOUBLE_EQUAL(tp, want_p, 1e-4 * want_p);
    CU_ASSERT_DOUBLE_EQUAL(tq, want_q, 1e-4 * want_q);
    float td = timed_copy(d, pinned, n, cudaMemcpyHostToDevice);
    CU_ASSERT_DOUBLE_EQUAL(td, want_p, 1e-4 * want_p);
    CU_ASSERT_OK(cudaFree(d));
    CU_ASSERT_OK(cudaFreeHost(pinned));
    free(pageable);
    CU_ASSERT_OK(cudaSetDevice(0));
}

/* SIM ONLY: the legacy default stream waits for blocking streams; a
 * non-blocking stream is not waited for. Measured on the modeled clock. */
static void test_legacy_stream(void)
{
    const simt_preset *h = simtCurrentPreset();
    CU_ASSERT_OK(cudaSetDevice(4));
    int *out;
    CU_ASSERT_OK(cudaMalloc((void **)&out, sizeof(int)));
    for (int nonblocking = 0; nonblocking <= 1; nonblocking++) {
        cudaStream_t s;
        cudaEvent_t a, b;
        CU_ASSERT_OK(cudaStreamCreateWithFlags(&s, nonblocking ? cudaStreamNonBlocking : 0));
        CU_ASSERT_OK(cudaEventCreate(&a));
        CU_ASSERT_OK(cudaEventCreate(&b));
        CU_ASSERT_OK(cudaDeviceSynchronize());
        CU_ASSERT_OK(cudaEventRecord(a, 0));
        CU_ASSERT_OK(tk_cost(out, 0, h->memory_bw * 1e-3, s)); /* 1 ms on s */
        CU_ASSERT_OK(cudaEventRecord(b, 0));                   /* on the legacy stream */
        CU_ASSERT_OK(cudaDeviceSynchronize());
        float ms = -1;
        CU_ASSERT_OK(cudaEventElapsedTime(&ms, a, b));
        double want = nonblocking ? 0.0 : 1.0 + h->launch_latency * 1e3;
        CU_ASSERT_DOUBLE_EQUAL(ms, want, 1e-5);
        CU_ASSERT_OK(cudaEventDestroy(a));
        CU_ASSERT_OK(cudaEventDestroy(b));
        CU_ASSERT_OK(cudaStreamDestroy(s));
    }
    CU_ASSERT_OK(cudaFree(out));
    CU_ASSERT_OK(cudaSetDevice(0));
}

/* The 4 bytes of *p as the non-blocking stream s sees them now. */
static unsigned word_on(cudaStream_t s, const unsigned *p)
{
    unsigned w = 0;
    CU_ASSERT_OK(cudaMemcpyAsync(&w, p, sizeof w, cudaMemcpyDeviceToHost, s));
    CU_ASSERT_OK(cudaStreamSynchronize(s));
    return w;
}

/* SIM ONLY: the lazy legacy stream (pl_device_set_lazy_default_stream,
 * simtSetLazyLegacy) holds a cudaMemset back from a non-blocking stream
 * until something waits for it: a blocking stream's op, a host
 * synchronisation, an event a stream waits on, a query. */
static void test_lazy_legacy(void)
{
    CU_ASSERT_OK(cudaSetDevice(4));
    unsigned *p;
    cudaStream_t s, b;
    cudaEvent_t ev;
    CU_ASSERT_OK(cudaMalloc((void **)&p, sizeof *p));
    CU_ASSERT_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CU_ASSERT_OK(cudaStreamCreate(&b));
    CU_ASSERT_OK(cudaEventCreate(&ev));
    CU_ASSERT_EQUAL(pl_device_set_lazy_default_stream(1), 0);
    CU_ASSERT_OK(cudaMemsetAsync(p, 0x11, sizeof *p, s));
    CU_ASSERT_EQUAL(word_on(s, p), 0x11111111u);
    /* held back: s does not wait for it, and nothing else does */
    CU_ASSERT_OK(cudaMemset(p, 0x22, sizeof *p));
    CU_ASSERT_EQUAL(word_on(s, p), 0x11111111u);
    CU_ASSERT_EQUAL(word_on(s, p), 0x11111111u);
    /* a blocking stream waits for it: it runs */
    unsigned w = 0;
    CU_ASSERT_OK(cudaMemcpyAsync(&w, p, sizeof w, cudaMemcpyDeviceToHost, b));
    CU_ASSERT_OK(cudaStreamSynchronize(b));
    CU_ASSERT_EQUAL(w, 0x22222222u);
    CU_ASSERT_EQUAL(word_on(s, p), 0x22222222u);
    /* the host synchronises the legacy stream */
    CU_ASSERT_OK(cudaMemset(p, 0x33, sizeof *p));
    CU_ASSERT_EQUAL(word_on(s, p), 0x22222222u);
    CU_ASSERT_OK(cudaStreamSynchronize(0));
    CU_ASSERT_EQUAL(word_on(s, p), 0x33333333u);
    /* s waits for an event recorded after it */
    CU_ASSERT_OK(cudaMemset(p, 0x44, sizeof *p));
    CU_ASSERT_OK(cudaEventRecord(ev, 0));
    CU_ASSERT_EQUAL(word_on(s, p), 0x33333333u);
    CU_ASSERT_OK(cudaStreamWaitEvent(s, ev, 0));
    CU_ASSERT_EQUAL(word_on(s, p), 0x44444444u);
    /* a loop that polls the legacy stream gets there */
    CU_ASSERT_OK(cudaMemset(p, 0x55, sizeof *p));
    cudaError_t q;
    while ((q = cudaStreamQuery(0)) == cudaErrorNotReady) {
    }
    CU_ASSERT_OK(q);
    CU_ASSERT_EQUAL(word_on(s, p), 0x55555555u);
    CU_ASSERT_EQUAL(pl_device_set_lazy_default_stream(0), 0);
    CU_ASSERT_OK(cudaDeviceSynchronize());
    CU_ASSERT_OK(cudaEventDestroy(ev));
    CU_ASSERT_OK(cudaStreamDestroy(b));
    CU_ASSERT_OK(cudaStreamDestroy(s));
    CU_ASSERT_OK(cudaFree(p));
    CU_ASSERT_OK(cudaSetDevice(0));
}

/* SIM ONLY: devices form nodes of gpus_per_node (the preset's 8, or
 * SIMT_GPUS_PER_NODE's: test_nodes_resized runs this suite again with 4);
 * between nodes there is no peer access and a peer copy takes the
 * network's modeled time. */
static void test_nodes_and_network(void)
{
    const simt_preset *h = simtCurrentPreset();
    const char *resized = getenv("SIMT_GPUS_PER_NODE");
    int ndev = 0, g = h->gpus_per_node, want = resized ? atoi(resized) : 8;
    CU_ASSERT_OK(cudaGetDeviceCount(&ndev));
    CU_ASSERT_EQUAL(g, want);
    CU_ASSERT_FATAL(g == want && ndev >= 2 * g); /* the unit tests run 16 H100s */
    pl_hw_model hw;
    CU_ASSERT_EQUAL_FATAL(pl_device_model(&hw), 0); /* the seam says the same */
    CU_ASSERT_EQUAL(hw.gpus_per_node, g);
    CU_ASSERT_DOUBLE_EQUAL(hw.inter_node_bw, h->inter_node_bw, 0);
    CU_ASSERT_DOUBLE_EQUAL(hw.inter_node_latency, h->inter_node_latency, 0);
    int can = -1;
    CU_ASSERT_OK(cudaDeviceCanAccessPeer(&can, 0, g - 1));
    CU_ASSERT_EQUAL(can, 1);
    CU_ASSERT_OK(cudaDeviceCanAccessPeer(&can, g - 1, g)); /* the node boundary */
    CU_ASSERT_EQUAL(can, 0);
    CU_ASSERT_OK(cudaSetDevice(1));
    CU_ASSERT_CUDA(cudaDeviceEnablePeerAccess(g + 1, 0), cudaErrorPeerAccessUnsupported);
    cudaGetLastError();
    const size_t n = 1 << 20;
    char *a, *b, *c;
    CU_ASSERT_OK(cudaMalloc((void **)&a, n)); /* on device 1, node 0 */
    CU_ASSERT_OK(cudaMemset(a, 0x5a, n));
    CU_ASSERT_OK(cudaDeviceSynchronize()); /* the memset is asynchronous */
    CU_ASSERT_OK(cudaSetDevice(g + 1));    /* node 1 */
    CU_ASSERT_OK(cudaMalloc((void **)&b, n));
    CU_ASSERT_OK(cudaSetDevice(g + 2));
    CU_ASSERT_OK(cudaMalloc((void **)&c, n));
    CU_ASSERT_OK(cudaSetDevice(g + 1));
    cudaStream_t s;
    CU_ASSERT_OK(cudaStreamCreate(&s));
    CU_ASSERT_OK(cudaStreamSynchronize(s));
    double t0 = simtStreamModeledTime(s);
    CU_ASSERT_OK(cudaMemcpyPeerAsync(b, g + 1, a, 1, n, s)); /* node 0 -> node 1 */
    double t1 = simtStreamModeledTime(s);
    CU_ASSERT_DOUBLE_EQUAL(t1 - t0, h->inter_node_latency + (double)n / h->inter_node_bw, 1e-12);
    /* within node 1, after enabling peer access: NVLink */
    CU_ASSERT_OK(cudaDeviceEnablePeerAccess(g + 2, 0));
    CU_ASSERT_OK(cudaMemcpyPeerAsync(c, g + 2, b, g + 1, n, s));
    double t2 = simtStreamModeledTime(s);
    CU_ASSERT_DOUBLE_EQUAL(t2 - t1, h->peer_latency + (double)n / h->peer_bw, 1e-12);
    CU_ASSERT_OK(cudaStreamSynchronize(s));
    char *host = malloc(n);
    CU_ASSERT_OK(cudaMemcpy(host, c, n, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += host[i] != 0x5a;
    CU_ASSERT_EQUAL(bad, 0);
    free(host);
    CU_ASSERT_OK(cudaStreamDestroy(s));
    CU_ASSERT_OK(cudaFree(a));
    CU_ASSERT_OK(cudaFree(b));
    CU_ASSERT_OK(cudaFree(c));
    CU_ASSERT_OK(cudaSetDevice(0));
}

/* SIM ONLY: SIMT_GPUS_PER_NODE=4 (what pl_options.gpus_per_node sets) makes
 * nodes of 4 H100s: this suite again in a fresh process (the setting is read
 * when the runtime starts), whose test_nodes_and_network finds the node
 * boundary between devices 3 and 4. */
static void test_nodes_resized(void)
{
    if (getenv("SIMT_GPUS_PER_NODE")) return; /* that process itself */
    int out[2];
    CU_ASSERT_FATAL(pipe(out) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(out[1], 2);
        close(out[0]);
        setenv("SIMT_GPUS_PER_NODE", "4", 1);
        execl("/proc/self/exe", "unit", "runtime", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    CU_ASSERT_FATAL(pid > 0);
    char text[1 << 16];
    size_t n = 0;
    ssize_t got;
    while ((got = read(out[0], text + n, sizeof text - 1 - n)) > 0) n += (size_t)got;
    text[n] = '\0';
    close(out[0]);
    int st = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);
    int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    CU_ASSERT(ok);
    CU_ASSERT(strstr(text, "Test: nodes and the network (sim) ...passed") != NULL);
    CU_ASSERT(strstr(text, "passed, 0 failed") != NULL);
    if (!ok) fprintf(stderr, "  SIMT_GPUS_PER_NODE=4 unit runtime:\n%s\n", text);
}

/* SIM ONLY: copy and compute on different streams overlap in modeled time;
 * cudaStreamWaitEvent joins them. */
static void test_overlap_and_wait_event(void)
{
    const simt_preset *h = simtCurrentPreset();
    CU_ASSERT_OK(cudaSetDevice(5));
    size_t n = 32u << 20;
    void *d, *pinned;
    int *out;
    CU_ASSERT_OK(cudaMalloc(&d, n));
    CU_ASSERT_OK(cudaMalloc((void **)&out, sizeof(int)));
    CU_ASSERT_OK(cudaMallocHost(&pinned, n));
    cudaStream_t sc, sk;
    cudaEvent_t start, copied, computed, end;
    CU_ASSERT_OK(cudaStreamCreateWithFlags(&sc, cudaStreamNonBlocking));
    CU_ASSERT_OK(cudaStreamCreateWithFlags(&sk, cudaStreamNonBlocking));
    CU_ASSERT_OK(cudaEventCreate(&start));
    CU_ASSERT_OK(cudaEventCreate(&copied));
    CU_ASSERT_OK(cudaEventCreate(&computed));
    CU_ASSERT_OK(cudaEventCreate(&end));
    CU_ASSERT_OK(cudaEventRecord(start, 0));
    CU_ASSERT_OK(cudaStreamWaitEvent(sc, start, 0));
    CU_ASSERT_OK(cudaStreamWaitEvent(sk, start, 0));
    CU_ASSERT_OK(cudaMemcpyAsync(d, pinned, n, cudaMemcpyHostToDevice, sc));
    CU_ASSERT_OK(tk_cost(out, 0, h->memory_bw * 1e-3, sk));
    CU_ASSERT_OK(cudaEventRecord(copied, sc));
    CU_ASSERT_OK(cudaEventRecord(computed, sk));
    CU_ASSERT_OK(cudaStreamWaitEvent(0, copied, 0));
    CU_ASSERT_OK(cudaStreamWaitEvent(0, computed, 0));
    CU_ASSERT_OK(cudaEventRecord(end, 0));
    CU_ASSERT_OK(cudaEventSynchronize(end));
    float tcopy, tkern, total;
    CU_ASSERT_OK(cudaEventElapsedTime(&tcopy, start, copied));
    CU_ASSERT_OK(cudaEventElapsedTime(&tkern, start, computed));
    CU_ASSERT_OK(cudaEventElapsedTime(&total, start, end));
    double want_copy = (h->copy_latency + n / (h->host_link_bw * h->pinned_efficiency)) * 1e3;
    CU_ASSERT_DOUBLE_EQUAL(tcopy, want_copy, 1e-4 * want_copy);
    CU_ASSERT_DOUBLE_EQUAL(tkern, 1.0 + h->launch_latency * 1e3, 1e-5);
    CU_ASSERT_DOUBLE_EQUAL(total, fmax(tcopy, tkern), 1e-5); /* overlapped, not summed */
    CU_ASSERT(total < tcopy + tkern);
    cudaStreamDestroy(sc);
    cudaStreamDestroy(sk);
    cudaEventDestroy(start);
    cudaEventDestroy(copied);
    cudaEventDestroy(computed);
    cudaEventDestroy(end);
    CU_ASSERT_OK(cudaFree(d));
    CU_ASSERT_OK(cudaFree(out));
    CU_ASSERT_OK(cudaFreeHost(pinned));
    CU_ASSERT_OK(cudaSetDevice(0));
}

/* SIM ONLY: two kernels on two streams share the compute engine and run one
 * after the other on the modeled clock; a high-priority stream's kernel runs
 * beside them. Priorities range 0 (least) to -5 and are clamped. */
static void test_stream_priorities(void)
{
    const simt_preset *h = simtCurrentPreset();
    int least = 1, greatest = 1;
    CU_ASSERT_OK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CU_ASSERT_EQUAL(least, 0);
    CU_ASSERT_EQUAL(greatest, -5);
    CU_ASSERT_OK(cudaSetDevice(6));
    int *out;
    CU_ASSERT_OK(cudaMalloc((void **)&out, sizeof(int)));
    cudaStream_t a, b, hi;
    CU_ASSERT_OK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CU_ASSERT_OK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    CU_ASSERT_OK(cudaStreamCreateWithPriority(&hi, cudaStreamNonBlocking, -100));
    int p = 0;
    CU_ASSERT_OK(cudaStreamGetPriority(hi, &p));
    CU_ASSERT_EQUAL(p, -5); /* clamped */
    CU_ASSERT_OK(cudaStreamGetPriority(a, &p));
    CU_ASSERT_EQUAL(p, 0);
    double kernel = h->launch_latency + 1e-3; /* tk_cost: 1 ms of memory traffic */
    for (int with_hi = 0; with_hi <= 1; with_hi++) {
        CU_ASSERT_OK(cudaDeviceSynchronize());
        double t0 = simtModeledNow();
        CU_ASSERT_OK(tk_cost(out, 0, h->memory_bw * 1e-3, a));
        CU_ASSERT_OK(tk_cost(out, 0, h->memory_bw * 1e-3, with_hi ? hi : b));
        CU_ASSERT_OK(cudaDeviceSynchronize());
        double t = simtModeledNow() - t0;
        /* normal streams: one after the other; with the high-priority one: side by side */
        CU_ASSERT_DOUBLE_EQUAL(t, with_hi ? kernel : 2 * kernel, 1e-9);
    }
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    cudaStreamDestroy(hi);
    CU_ASSERT_OK(cudaFree(out));
    CU_ASSERT_OK(cudaSetDevice(0));
}

/* SIM ONLY: handles from elsewhere are refused, not trusted. */
static void test_bad_handles(void)
{
    cudaStream_t s1;
    unsigned *out;
    CU_ASSERT_OK(cudaSetDevice(1));
    CU_ASSERT_OK(cudaStreamCreate(&s1));
    CU_ASSERT_OK(cudaSetDevice(0));
    CU_ASSERT_OK(cudaMalloc((void **)&out, 64 * sizeof(unsigned)));
    CU_ASSERT_CUDA(cudaStreamSynchronize((cudaStream_t)(uintptr_t)0xdead0),
                   cudaErrorInvalidResourceHandle);
    CU_ASSERT_CUDA(cudaEventRecord((cudaEvent_t)(uintptr_t)0xdead0, 0),
                   cudaErrorInvalidResourceHandle);
    CU_ASSERT_CUDA(cudaStreamDestroy(0), cudaErrorInvalidResourceHandle);
    cudaGetLastError();
    CU_ASSERT_OK(cudaStreamDestroy(s1));
    CU_ASSERT_CUDA(cudaStreamDestroy(s1), cudaErrorInvalidResourceHandle);
    cudaGetLastError();
    CU_ASSERT_OK(cudaFree(out));
}

/* SIM ONLY: with hundreds of streams and events alive (the runtime's set
 * of live handles grows several times), destroying them in an order of
 * their own leaves every live one usable and refuses every destroyed one. */
static void test_many_handles(void)
{
    enum { NE = 600, NS = 150 };
    static cudaEvent_t ev[NE];
    static cudaStream_t st[NS];
    static char gone_e[NE], gone_s[NS];
    memset(gone_e, 0, sizeof gone_e);
    memset(gone_s, 0, sizeof gone_s);
    for (int i = 0; i < NE; i++) CU_ASSERT_OK(cudaEventCreate(&ev[i]));
    for (int i = 0; i < NS; i++) CU_ASSERT_OK(cudaStreamCreate(&st[i]));
    /* every third, then every other of what is left, from the end */
    for (int i = 0; i < NE; i += 3) gone_e[i] = 1;
    for (int i = NE - 1; i >= 0; i -= 2) gone_e[i] = 1;
    for (int i = 1; i < NS; i += 3) gone_s[i] = 1;
    for (int i = 0; i < NE; i++)
        if (gone_e[i]) CU_ASSERT_OK(cudaEventDestroy(ev[i]));
    for (int i = NS - 1; i >= 0; i--)
        if (gone_s[i]) CU_ASSERT_OK(cudaStreamDestroy(st[i]));
    int live_ok = 0, live_n = 0, gone_refused = 0, gone_n = 0;
    for (int i = 0; i < NE; i++) {
        cudaError_t e = cudaEventRecord(ev[i], st[i % NS]);
        int stream_gone = gone_s[i % NS];
        if (gone_e[i] || stream_gone) {
            gone_n++;
            gone_refused += e == cudaErrorInvalidResourceHandle;
        } else {
            live_n++;
            live_ok += e == cudaSuccess;
        }
        cudaGetLastError();
    }
    CU_ASSERT_EQUAL(live_ok, live_n);
    CU_ASSERT_EQUAL(gone_refused, gone_n);
    CU_ASSERT_EQUAL(live_n, 100); /* i = 2 mod 6: i = 4 mod 6 records on a destroyed stream */
    CU_ASSERT_EQUAL(gone_n, NE - 100);
    for (int i = 0; i < NS; i++)
        if (!gone_s[i]) {
            CU_ASSERT_OK(cudaStreamSynchronize(st[i]));
            CU_ASSERT_OK(cudaStreamDestroy(st[i]));
        }
    for (int i = 0; i < NE; i++)
        if (!gone_e[i]) CU_ASSERT_OK(cudaEventDestroy(ev[i]));
    CU_ASSERT_CUDA(cudaEventDestroy(ev[1]), cudaErrorInvalidResourceHandle);
    CU_ASSERT_CUDA(cudaStreamDestroy(st[0]), cudaErrorInvalidResourceHandle);
    cudaGetLastError();
}
#endif

#ifdef PARALAB_SIMULATED_CUDA
/* SIM ONLY: simtSetOpHook reports this thread's kernels, copies and memsets
 * once finished, in program order, with their bytes, FLOPs and modeled times;
 * another thread's work is not reported here. */
enum { MAX_RECS = 16 };
static simt_op_record recs[MAX_RECS];
static int nrecs;
static void keep_record(const simt_op_record *r, void *user)
{
    CU_ASSERT_PTR_EQUAL(user, recs);
    if (nrecs < MAX_RECS) recs[nrecs++] = *r;
}

static void *other_thread_memset(void *p)
{
    cudaMemset(p, 0, 16);
    cudaDeviceSynchronize();
    return NULL;
}

static void test_op_hook(void)
{
    const simt_preset *h = simtCurrentPreset();
    int *d, host[4] = {1, 2, 3, 4};
    CU_ASSERT_OK(cudaMalloc((void **)&d, 4096));
    nrecs = 0;
    simtSetOpHook(keep_record, recs);
    /* a synchronous copy is reported before it returns */
    CU_ASSERT_OK(cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice));
    CU_ASSERT_EQUAL_FATAL(nrecs, 1);
    CU_ASSERT_EQUAL(recs[0].kind, SIMT_OP_COPY);
    CU_ASSERT_STRING_EQUAL(recs[0].name, "memcpy H2D");
    CU_ASSERT_EQUAL(recs[0].bytes, sizeof host);
    CU_ASSERT_EQUAL(recs[0].peer_device, -1);
    CU_ASSERT(recs[0].end >= recs[0].start && recs[0].start > 0);
    CU_ASSERT(recs[0].modeled_end > recs[0].modeled_start);
    /* asynchronous work: reported by the stream's synchronize */
    cudaStream_t s;
    CU_ASSERT_OK(cudaStreamCreate(&s));
    CU_ASSERT_OK(tk_cost(d, h->fp32_flops * 1e-3, 8, s)); /* 1 ms of FLOPs */
    CU_ASSERT_OK(cudaMemsetAsync(d + 1, 7, 100, s));
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, other_thread_memset, d + 512), 0);
    pthread_join(th, NULL);
    CU_ASSERT_OK(cudaStreamSynchronize(s));
    CU_ASSERT_EQUAL_FATAL(nrecs, 3); /* not the other thread's memset */
    CU_ASSERT_EQUAL(recs[1].kind, SIMT_OP_KERNEL);
    CU_ASSERT_STRING_EQUAL(recs[1].name, "cost");
    CU_ASSERT_EQUAL(recs[1].flops, h->fp32_flops * 1e-3);
    CU_ASSERT_EQUAL(recs[1].bytes, 8);
    CU_ASSERT_DOUBLE_EQUAL(recs[1].modeled_end - recs[1].modeled_start, 1e-3 + h->launch_latency,
                           1e-12);
    CU_ASSERT_EQUAL(recs[1].error, cudaSuccess);
    CU_ASSERT_EQUAL(recs[2].kind, SIMT_OP_MEMSET);
    CU_ASSERT_STRING_EQUAL(recs[2].name, "memset");
    CU_ASSERT_EQUAL(recs[2].bytes, 100);
    CU_ASSERT(recs[2].modeled_start >= recs[1].modeled_end); /* stream order */
    CU_ASSERT_EQUAL(simtFlushOps(), 0);                      /* nothing left */
    /* no hook: nothing reported */
    simtSetOpHook(NULL, NULL);
    CU_ASSERT_OK(cudaMemsetAsync(d, 0, 4, s));
    CU_ASSERT_OK(cudaStreamSynchronize(s));
    CU_ASSERT_EQUAL(nrecs, 3);
    CU_ASSERT_OK(cudaStreamDestroy(s));
    CU_ASSERT_OK(cudaFree(d));
}

/* SIM ONLY: eager execution (stream.c). Work that nothing is ahead of on
 * its stream, and whose waits are over, runs on the calling thread: done
 * when the call returns, without a synchronisation. Work behind a kernel
 * still running, or behind an event of another stream's unfinished work,
 * waits for it. A student's kernel never runs so; the library's element-wise
 * kernels (simtLaunchEager) do. The modeled times are those of the queue. */
static void test_eager(void)
{
    int *flag;
    unsigned *a, *b;
    float *x, *y;
    cudaStream_t s, t;
    cudaEvent_t ev;
    CU_ASSERT_OK(cudaMallocHost((void **)&flag, sizeof *flag));
    CU_ASSERT_OK(cudaMalloc((void **)&a, 4096));
    CU_ASSERT_OK(cudaMalloc((void **)&b, 4096));
    CU_ASSERT_OK(cudaMalloc((void **)&x, 64 * sizeof *x));
    CU_ASSERT_OK(cudaMalloc((void **)&y, 64 * sizeof *y));
    CU_ASSERT_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CU_ASSERT_OK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
    CU_ASSERT_OK(cudaEventCreate(&ev));
    CU_ASSERT_OK(cudaStreamSynchronize(s));
    /* an idle stream: done on return (device memory is host memory here) */
    double t0 = simtStreamModeledTime(s);
    CU_ASSERT_OK(cudaMemsetAsync(a, 0x11, 4096, s));
    CU_ASSERT_EQUAL(a[1023], 0x11111111u);
    CU_ASSERT_OK(cudaMemcpyAsync(b, a, 4096, cudaMemcpyDeviceToDevice, s));
    CU_ASSERT_EQUAL(b[0], 0x11111111u);
    CU_ASSERT_EQUAL(b[1023], 0x11111111u);
    CU_ASSERT_OK(cudaStreamQuery(s));
    double eager = simtStreamModeledTime(s) - t0;
    CU_ASSERT(eager > 0);
    /* the library's reduction kernel (simtLaunchEager): done on return */
    for (int i = 0; i < 64; i++) x[i] = (float)i, y[i] = 0.5f;
    CU_ASSERT_OK(pl_k_reduce(x, y, 64, PL_K_FLOAT32, PL_K_SUM, s));
    int ok = 1;
    for (int i = 0; i < 64; i++) ok &= x[i] == (float)i + 0.5f;
    CU_ASSERT(ok);
    /* behind a student's kernel still running: it waits (the same modeled
     * times as eager); so does a stream that waits for an event recorded
     * behind it */
    __atomic_store_n(flag, 0, __ATOMIC_SEQ_CST);
    CU_ASSERT_OK(tk_spin_until(flag, s));
    double t1 = simtStreamModeledTime(s);
    CU_ASSERT_OK(cudaMemsetAsync(a, 0x22, 4096, s));
    CU_ASSERT_OK(cudaMemcpyAsync(b, a, 4096, cudaMemcpyDeviceToDevice, s));
    CU_ASSERT_DOUBLE_EQUAL(simtStreamModeledTime(s) - t1, eager, eager * 1e-9);
    CU_ASSERT_OK(cudaEventRecord(ev, s));
    CU_ASSERT_OK(cudaStreamWaitEvent(t, ev, 0));
    CU_ASSERT_OK(cudaMemsetAsync(b + 512, 0x33, 2048, t));
    CU_ASSERT_OK(pl_k_reduce(x, y, 64, PL_K_FLOAT32, PL_K_SUM, t));
    usleep(20000);
    CU_ASSERT_EQUAL(__atomic_load_n(&a[0], __ATOMIC_SEQ_CST), 0x11111111u);
    CU_ASSERT_EQUAL(__atomic_load_n(&b[1023], __ATOMIC_SEQ_CST), 0x11111111u);
    CU_ASSERT_EQUAL(((volatile float *)x)[63], 63.5f);
    CU_ASSERT_CUDA(cudaStreamQuery(t), cudaErrorNotReady);
    __atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
    CU_ASSERT_OK(cudaStreamSynchronize(t));
    CU_ASSERT_EQUAL(a[1023], 0x22222222u);
    CU_ASSERT_EQUAL(b[0], 0x22222222u);
    CU_ASSERT_EQUAL(b[1023], 0x33333333u);
    ok = 1;
    for (int i = 0; i < 64; i++) ok &= x[i] == (float)i + 1.0f;
    CU_ASSERT(ok);
    /* idle again: eager again */
    CU_ASSERT_OK(cudaMemsetAsync(b, 0x44, 4096, t));
    CU_ASSERT_EQUAL(b[1023], 0x44444444u);
    CU_ASSERT_OK(cudaEventDestroy(ev));
    CU_ASSERT_OK(cudaStreamDestroy(t));
    CU_ASSERT_OK(cudaStreamDestroy(s));
    CU_ASSERT_OK(cudaFree(y));
    CU_ASSERT_OK(cudaFree(x));
    CU_ASSERT_OK(cudaFree(b));
    CU_ASSERT_OK(cudaFree(a));
    CU_ASSERT_OK(cudaFreeHost(flag));
}

/* SIM ONLY: simtModelPeerCopy costs and reports a peer copy as
 * cudaMemcpyPeerAsync does, copying nothing; simtEventRecordAt records an
 * event that completes after the work before it, but that a waiting stream
 * waits for only until the given modeled time (the local engine's ring
 * reduces straight out of its neighbour's buffer with these two). */
static void test_model_peer_copy_and_record_at(void)
{
    enum { N = 1 << 20 };
    char *a, *b;
    int *flag, *out;
    cudaStream_t s, t, u;
    cudaEvent_t ev;
    CU_ASSERT_OK(cudaSetDevice(1));
    CU_ASSERT_OK(cudaMalloc((void **)&b, N));
    CU_ASSERT_OK(cudaMalloc((void **)&out, sizeof *out));
    CU_ASSERT_OK(cudaMemset(out, 0, sizeof *out));
    CU_ASSERT_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CU_ASSERT_OK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
    CU_ASSERT_OK(cudaStreamCreateWithFlags(&u, cudaStreamNonBlocking));
    CU_ASSERT_OK(cudaEventCreate(&ev));
    CU_ASSERT_OK(cudaSetDevice(0));
    CU_ASSERT_OK(cudaMalloc((void **)&a, N));
    CU_ASSERT_OK(cudaMallocHost((void **)&flag, sizeof *flag));
    CU_ASSERT_OK(cudaMemset(a, 7, N));
    CU_ASSERT_OK(cudaSetDevice(1));
    CU_ASSERT_OK(cudaMemset(b, 1, N));
    CU_ASSERT_OK(cudaDeviceSynchronize());
    /* the same modeled duration as the real copy, one after the other on
     * one stream (they share the copy engine), and nothing copied */
    CU_ASSERT_OK(cudaEventRecord(ev, t)); /* t's clock up to the host's */
    double t0 = simtStreamModeledTime(t);
    CU_ASSERT_OK(cudaMemcpyPeerAsync(b, 1, a, 0, N, t));
    double t1 = simtStreamModeledTime(t);
    CU_ASSERT_OK(simtModelPeerCopy(t, N, 0, 1));
    double real = t1 - t0, model = simtStreamModeledTime(t) - t1;
    CU_ASSERT(real > 0);
    CU_ASSERT_DOUBLE_EQUAL(model, real, real * 1e-9);
    CU_ASSERT_OK(cudaStreamSynchronize(t));
    CU_ASSERT_OK(cudaMemset(b, 1, N));
    CU_ASSERT_OK(simtModelPeerCopy(s, N, 0, 1));
    CU_ASSERT_OK(cudaStreamSynchronize(s));
    CU_ASSERT_EQUAL(b[N - 1], 1); /* nothing copied */
    CU_ASSERT_CUDA(simtModelPeerCopy(s, N, 0, 99), cudaErrorInvalidDevice);
    cudaGetLastError();
    /* record at the copy's end, after a kernel still running: a stream that
     * waits starts (modeled) at the copy's end, runs (wall) after the kernel */
    double copied = simtStreamModeledTime(s);
    __atomic_store_n(flag, 0, __ATOMIC_SEQ_CST);
    CU_ASSERT_OK(tk_spin_until(flag, s));
    CU_ASSERT_OK(tk_cost(out, simtCurrentPreset()->fp32_flops * 1e-3, 8, s)); /* 1 ms modeled */
    CU_ASSERT(simtStreamModeledTime(s) > copied + 1e-3);
    CU_ASSERT_OK(simtEventRecordAt(ev, s, copied));
    CU_ASSERT_OK(cudaStreamWaitEvent(u, ev, 0));
    CU_ASSERT_DOUBLE_EQUAL(simtStreamModeledTime(u), copied, 1e-12); /* not the kernels' end */
    CU_ASSERT_OK(cudaMemcpyAsync(out, b + 64, sizeof *out, cudaMemcpyDeviceToDevice, u));
    usleep(20000);
    CU_ASSERT_CUDA(cudaStreamQuery(u), cudaErrorNotReady); /* behind the kernel */
    __atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
    CU_ASSERT_OK(cudaStreamSynchronize(u));
    int h = 0;
    CU_ASSERT_OK(cudaMemcpy(&h, out, sizeof h, cudaMemcpyDeviceToHost));
    CU_ASSERT_EQUAL(h, 0x01010101); /* b's bytes, copied once the kernels ran */
    /* the copy waited until `copied` on the modeled clock (its own engine) */
    CU_ASSERT(simtStreamModeledTime(u) > copied);
    CU_ASSERT(simtStreamModeledTime(u) < copied + 1e-4);
    /* past the stream's time: refused */
    CU_ASSERT_CUDA(simtEventRecordAt(ev, s, simtStreamModeledTime(s) + 1.0), cudaErrorInvalidValue);
    cudaGetLastError();
    CU_ASSERT_OK(cudaEventDestroy(ev));
    CU_ASSERT_OK(cudaStreamDestroy(u));
    CU_ASSERT_OK(cudaStreamDestroy(t));
    CU_ASSERT_OK(cudaStreamDestroy(s));
    CU_ASSERT_OK(cudaFree(out));
    CU_ASSERT_OK(cudaFree(b));
    CU_ASSERT_OK(cudaSetDevice(0));
    CU_ASSERT_OK(cudaFreeHost(flag));
    CU_ASSERT_OK(cudaFree(a));
}

/* SIM ONLY: simtEnvSource names the variable that sets a setting now: the
 * new SIMT_* name when it is set, else its old PARALAB_SIM_* name, else
 * none (an empty value counts as unset). Only the environment is read: the
 * runtime, started long ago, is not changed. */
/* simtEnvSource(name) is want (NULL: none). */
static int env_source_is(const char *name, const char *want)
{
    const char *got = simtEnvSource(name);
    return want ? got && strcmp(got, want) == 0 : got == NULL;
}

static void test_env_source(void)
{
    const simt_preset *preset = simtCurrentPreset();
    const char *names[] = {"SIMT_GPU", "PARALAB_SIM_GPU", "SIMT_QUIET"};
    char *saved[3];
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(names[i]);
        saved[i] = v ? strdup(v) : NULL;
        unsetenv(names[i]);
    }
    CU_ASSERT(env_source_is("SIMT_GPU", NULL));
    setenv("PARALAB_SIM_GPU", "A100-SXM-80GB", 1);
    CU_ASSERT(env_source_is("SIMT_GPU", "PARALAB_SIM_GPU"));
    setenv("SIMT_GPU", "H200-SXM", 1);
    CU_ASSERT(env_source_is("SIMT_GPU", "SIMT_GPU"));
    setenv("SIMT_GPU", "", 1);
    CU_ASSERT(env_source_is("SIMT_GPU", "PARALAB_SIM_GPU"));
    setenv("PARALAB_SIM_GPU", "", 1);
    CU_ASSERT(env_source_is("SIMT_GPU", NULL));
    CU_ASSERT(env_source_is("SIMT_DEVICES", "SIMT_DEVICES")); /* main sets it */
    CU_ASSERT(env_source_is("SIMT_QUIET", NULL));
    setenv("SIMT_QUIET", "1", 1); /* a setting never renamed: its own name only */
    CU_ASSERT(env_source_is("SIMT_QUIET", "SIMT_QUIET"));
    CU_ASSERT(env_source_is(NULL, NULL));
    for (int i = 0; i < 3; i++) {
        if (saved[i])
            setenv(names[i], saved[i], 1);
        else
            unsetenv(names[i]);
        free(saved[i]);
    }
    CU_ASSERT_PTR_EQUAL(simtCurrentPreset(), preset);
}
#endif

int register_runtime_suite(void)
{
    static const unit_test t[] = {
        {"devices", test_devices},
        {"device peaks (the roofline)", test_device_peaks},
        {"properties", test_properties},
        {"error names and strings", test_error_names},
        {"last error", test_last_error},
        {"malloc and free", test_malloc_free},
        {"memcpy and memset", test_memcpy},
        {"pinned memory and async copies", test_pinned},
        {"launch limits and 3-D indices", test_launch_limits},
        {"stream order", test_stream_order},
        {"stream query", test_stream_query},
        {"streams run concurrently", test_streams_concurrent},
        {"events", test_events},
        {"peer copies", test_peer},
#ifdef PARALAB_SIMULATED_CUDA
        {"cudaFree waits for other devices' copies of it (sim)", test_free_waits_for_peers},
#endif
        {"dynamic shared memory opt-in", test_dynamic_shared},
        {"constant memory", test_constant_memory},
        {"several devices", test_multi_device},
#ifdef PARALAB_SIMULATED_CUDA
        {"modeled kernel time (sim)", test_modeled_kernel_time},
        {"modeled copy time (sim)", test_modeled_copy_time},
        {"legacy default stream (sim)", test_legacy_stream},
        {"lazy legacy stream: held until something waits for it (sim)", test_lazy_legacy},
        {"overlap and stream wait event (sim)", test_overlap_and_wait_event},
        {"stream priorities: a high-priority kernel runs beside (sim)", test_stream_priorities},
        {"bad handles (sim)", test_bad_handles},
        {"hundreds of streams and events: destroyed ones refused, live ones usable (sim)",
         test_many_handles},
        {"op reports for traces (sim)", test_op_hook},
        {"eager execution: an idle stream's work runs on the calling thread (sim)", test_eager},
        {"a peer copy on the modeled clock only; an event recorded at a modeled time (sim)",
         test_model_peer_copy_and_record_at},
        {"nodes and the network (sim)", test_nodes_and_network},
        {"SIMT_GPUS_PER_NODE=4: nodes of 4, in a fresh process (sim)", test_nodes_resized},
        {"the variable that set a setting: SIMT_* or the old name (sim)", test_env_source},
#endif
    };
    return UNIT_SUITE("runtime", t);
}
