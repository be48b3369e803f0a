/*
 * test_dialect.c — CUDA forms that kernel files write as CUDA samples and
 * books do, with the results a GPU gives (tests/unit/kernels_dialect.cu):
 * vector types and make_ functions, __launch_bounds__, a non-static inline
 * warpReduceSum, extern __shared__ (in a kernel and at file scope),
 * clock64()/clock(), the conversion intrinsics. Runs in both variants.
 */
#include <limits.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_dialect.h"
#include "suites.h"

/* sizeof and alignment of float2, float3, float4, int2, int3, int4, uint2,
 * uint3, uint4, double2, char4, short2, longlong2 (CUDA's vector_types.h) */
static const unsigned want_layout[2 * TD_VECTOR_TYPES] = {
    8, 8, 12, 4, 16, 16, 8, 8, 12, 4, 16, 16, 8, 8, 12, 4, 16, 16, 16, 16, 4, 4, 4, 4, 16, 16};

static void test_vector_types(void)
{
    /* the host side: the same types and the make_ functions */
    unsigned host[2 * TD_VECTOR_TYPES] = {
        sizeof(float2),    alignof(float2), sizeof(float3), alignof(float3), sizeof(float4),
        alignof(float4),   sizeof(int2),    alignof(int2),  sizeof(int3),    alignof(int3),
        sizeof(int4),      alignof(int4),   sizeof(uint2),  alignof(uint2),  sizeof(uint3),
        alignof(uint3),    sizeof(uint4),   alignof(uint4), sizeof(double2), alignof(double2),
        sizeof(char4),     alignof(char4),  sizeof(short2), alignof(short2), sizeof(longlong2),
        alignof(longlong2)};
    for (int k = 0; k < 2 * TD_VECTOR_TYPES; k++) CU_ASSERT_EQUAL(host[k], want_layout[k]);
    float4 f = make_float4(1.0f, -2.0f, 3.5f, 4.25f);
    CU_ASSERT(f.x == 1.0f && f.y == -2.0f && f.z == 3.5f && f.w == 4.25f);
    int3 i3 = make_int3(7, -8, 9);
    CU_ASSERT(i3.x == 7 && i3.y == -8 && i3.z == 9);
    uint2 u2 = make_uint2(4000000000u, 5u);
    CU_ASSERT(u2.x == 4000000000u && u2.y == 5u);
    double2 d2 = make_double2(0.1, -0.25);
    CU_ASSERT(d2.x == 0.1 && d2.y == -0.25);
#if CUDART_VERSION >= 13000
    /* CUDA 13's replacements for the deprecated double4 (and long4, ...) */
    CU_ASSERT(sizeof(double4_16a) == 32 && alignof(double4_16a) == 16);
    CU_ASSERT(sizeof(double4_32a) == 32 && alignof(double4_32a) == 32);
    CU_ASSERT(sizeof(longlong4_32a) == 32 && alignof(longlong4_32a) == 32);
    double4_32a d4 = make_double4_32a(1.0, 2.0, 3.0, 4.0);
    CU_ASSERT(d4.x == 1.0 && d4.y == 2.0 && d4.z == 3.0 && d4.w == 4.0);
#endif
    /* the device side */
    unsigned *dout, got[2 * TD_VECTOR_TYPES];
    CU_ASSERT_OK(cudaMalloc((void **)&dout, sizeof got));
    CU_ASSERT_OK(td_vector_layout(dout));
    CU_ASSERT_OK(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
    for (int k = 0; k < 2 * TD_VECTOR_TYPES; k++) {
        if (got[k] != want_layout[k])
            fprintf(stderr, "  vector type %d: %s %u, expected %u\n", k / 2,
                    k % 2 ? "alignment" : "sizeof", got[k], want_layout[k]);
        CU_ASSERT_EQUAL(got[k], want_layout[k]);
    }
    cudaFree(dout);
}

static void test_float4_copy(void)
{
    enum { N = 1000 }; /* float4s: 4 blocks of 256, the last partial */
    float4 *h = malloc(N * sizeof *h), *got = malloc(N * sizeof *got), *din, *dout;
    for (int i = 0; i < N; i++) h[i] = make_float4((float)i, (float)(i % 13), 0.5f * i, -1.0f * i);
    CU_ASSERT_OK(cudaMalloc((void **)&din, N * sizeof *h));
    CU_ASSERT_OK(cudaMalloc((void **)&dout, N * sizeof *h));
    CU_ASSERT_OK(cudaMemcpy(din, h, N * sizeof *h, cudaMemcpyHostToDevice));
    /* above __launch_bounds__(256): refused at launch, as in CUDA */
    CU_ASSERT_CUDA(td_float4_copy(din, dout, N, 512), cudaErrorLaunchOutOfResources);
    CU_ASSERT_OK(cudaGetLastError());
    CU_ASSERT_OK(td_float4_copy(din, dout, N, 256));
    CU_ASSERT_OK(cudaMemcpy(got, dout, N * sizeof *got, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += !(got[i].x == 2.0f * h[i].x && got[i].y == h[i].y + 1.0f && got[i].z == -h[i].z &&
                 got[i].w == h[i].w);
    CU_ASSERT_EQUAL(bad, 0);
    cudaFree(din);
    cudaFree(dout);
    free(h);
    free(got);
}

static void test_warp_reduce(void)
{
    enum { N = 512 };
    float h[N], got[N / 32], *din, *dout;
    for (int i = 0; i < N; i++) h[i] = (float)(i % 7 + 1);
    CU_ASSERT_OK(cudaMalloc((void **)&din, sizeof h));
    CU_ASSERT_OK(cudaMalloc((void **)&dout, sizeof got));
    CU_ASSERT_OK(cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice));
    CU_ASSERT_OK(td_warp_reduce(din, dout, N, 128));
    CU_ASSERT_OK(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
    for (int w = 0; w < N / 32; w++) {
        float want = 0;
        for (int i = w * 32; i < w * 32 + 32; i++) want += h[i];
        CU_ASSERT_EQUAL(got[w], want);
    }
    cudaFree(din);
    cudaFree(dout);
}

static void test_block_reduce(void)
{
    enum { N = 1000, B = 256 };
    int h[N], got[(N + B - 1) / B], *din, *dout;
    for (int i = 0; i < N; i++) h[i] = i % 11 - 3;
    CU_ASSERT_OK(cudaMalloc((void **)&din, sizeof h));
    CU_ASSERT_OK(cudaMalloc((void **)&dout, sizeof got));
    CU_ASSERT_OK(cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice));
    CU_ASSERT_OK(td_block_reduce(din, dout, N, B));
    CU_ASSERT_OK(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
    for (int b = 0; b < (N + B - 1) / B; b++) {
        int want = 0;
        for (int i = b * B; i < N && i < (b + 1) * B; i++) want += h[i];
        CU_ASSERT_EQUAL(got[b], want);
    }
    cudaFree(din);
    cudaFree(dout);
}

static void reverse_extern(int file_scope)
{
    enum { N = 1000, B = 128 };
    int h[N], got[N], *din, *dout;
    for (int i = 0; i < N; i++) h[i] = 3 * i + 1;
    CU_ASSERT_OK(cudaMalloc((void **)&din, sizeof h));
    CU_ASSERT_OK(cudaMalloc((void **)&dout, sizeof got));
    CU_ASSERT_OK(cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice));
    CU_ASSERT_OK(cudaMemset(dout, 0xff, sizeof got));
    CU_ASSERT_OK(td_reverse_extern(din, dout, N, B, B * sizeof(int), file_scope));
    CU_ASSERT_OK(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < N; i++) {
        int b = i / B, t = i % B, src = b * B + (B - 1 - t);
        bad += got[i] != (src < N ? h[src] : 0);
    }
    CU_ASSERT_EQUAL(bad, 0);
    cudaFree(din);
    cudaFree(dout);
}
static void test_extern_shared(void) { reverse_extern(0); }
static void test_extern_shared_file_scope(void) { reverse_extern(1); }

static void test_clocks(void)
{
    enum { T = 64 };
    long long got[4 * T], *dout;
    CU_ASSERT_OK(cudaMalloc((void **)&dout, sizeof got));
    CU_ASSERT_OK(td_clocks(dout, T));
    CU_ASSERT_OK(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int t = 0; t < T; t++) {
        long long *c = got + 4 * t;
        /* clock64() increases in every thread, across a barrier too; two
         * clock() readings differ by a little */
        bad += !(c[0] < c[1] && c[1] < c[2] && c[3] > 0 && c[3] < 1000000000LL);
        if (!(c[0] < c[1] && c[1] < c[2] && c[3] > 0 && c[3] < 1000000000LL))
            fprintf(stderr, "  thread %d: clock64 %lld %lld %lld, clock() difference %lld\n", t,
                    c[0], c[1], c[2], c[3]);
    }
    CU_ASSERT_EQUAL(bad, 0);
    cudaFree(dout);
}

static void test_conversions(void)
{
    const long long want[TD_CONVERSIONS] = {2,
                                            4,
                                            -2,
                                            -2,
                                            -3,
                                            3,
                                            INT_MAX,
                                            INT_MIN,
                                            0,
                                            0,
                                            4000000000LL,
                                            UINT_MAX,
                                            0,
                                            7,
                                            8,
                                            0x4b800000,
                                            0x4f800000,
                                            0x3f800000,
                                            0x40490fdb,
                                            LLONG_MIN,
                                            123456790528LL,
                                            0,
                                            -8,
                                            INT_MAX,
                                            4,
                                            0x3dcccccd,
                                            0x5a000001,
                                            -5,
                                            0,
                                            2147483520LL,
                                            0,
                                            31};
    long long got[TD_CONVERSIONS], *dout;
    CU_ASSERT_OK(cudaMalloc((void **)&dout, sizeof got));
    CU_ASSERT_OK(td_conversions(dout));
    CU_ASSERT_OK(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
    for (int k = 0; k < TD_CONVERSIONS; k++) {
        if (got[k] != want[k])
            fprintf(stderr, "  conversion %d: %lld, expected %lld\n", k, got[k], want[k]);
        CU_ASSERT_EQUAL(got[k], want[k]);
    }
    cudaFree(dout);
}

int register_dialect_suite(void)
{
    static const unit_test t[] = {
        {"vector types: sizes, alignments, make_", test_vector_types},
        {"float4 copy under __launch_bounds__, and a launch above it", test_float4_copy},
        {"non-static inline warpReduceSum", test_warp_reduce},
        {"blockReduceSum as NVIDIA's blog writes it", test_block_reduce},
        {"extern __shared__ in a kernel", test_extern_shared},
        {"extern __shared__ at file scope", test_extern_shared_file_scope},
        {"clock64 and clock", test_clocks},
        {"conversion intrinsics", test_conversions},
    };
    return UNIT_SUITE("dialect", t);
}
