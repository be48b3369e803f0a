/*
 * kernels_dialect.cu — the dialect suite's kernels (tests/unit/test_dialect.c):
 * CUDA C as CUDA samples and books write it, which build/sim compiles through
 * mk/cu2c.pl and simt/device.h, and nvcc as it is.
 */
#include "simt/kernel.h"

#include "kernels_dialect.h"

static dim3 d1(unsigned x)
{
    dim3 d = {x, 1, 1};
    return d;
}

/* ---- vector types ------------------------------------------------------------ */

#define TD_LAYOUT(k, T)                                                                            \
    do {                                                                                           \
        out[2 * (k)] = (unsigned)sizeof(T);                                                        \
        out[2 * (k) + 1] = (unsigned)__alignof__(T);                                               \
    } while (0)

static __global__ void vector_layout(unsigned *out)
{
    TD_LAYOUT(0, float2);
    TD_LAYOUT(1, float3);
    TD_LAYOUT(2, float4);
    TD_LAYOUT(3, int2);
    TD_LAYOUT(4, int3);
    TD_LAYOUT(5, int4);
    TD_LAYOUT(6, uint2);
    TD_LAYOUT(7, uint3);
    TD_LAYOUT(8, uint4);
    TD_LAYOUT(9, double2);
    TD_LAYOUT(10, char4);
    TD_LAYOUT(11, short2);
    TD_LAYOUT(12, longlong2);
}
SIMT_LAUNCHER(vector_layout, (unsigned *out), (out))

cudaError_t td_vector_layout(unsigned *out)
{
    return launch_vector_layout(d1(1), d1(1), 0, 0, out);
}

static __global__ void __launch_bounds__(256) float4_copy(const float4 *in, float4 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 v = in[i];
        out[i] = make_float4(2.0f * v.x, v.y + 1.0f, -v.z, v.w);
    }
}
SIMT_LAUNCHER(float4_copy, (const float4 *in, float4 *out, int n), (in, out, n))

cudaError_t td_float4_copy(const float4 *in, float4 *out, int n, int block)
{
    return launch_float4_copy(d1((unsigned)((n + block - 1) / block)), d1((unsigned)block), 0, 0,
                              in, out, n);
}

/* ---- warpReduceSum: a non-static inline helper with shuffles --------------------- */

inline __device__ float warpReduceSum(float v)
{
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__device__ int lane_id(void) { return threadIdx.x % warpSize; }

static __global__ void warp_reduce(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = warpReduceSum(i < n ? in[i] : 0.0f);
    if (lane_id() == 0 && i < n) out[i / 32] = sum;
}
SIMT_LAUNCHER(warp_reduce, (const float *in, float *out, int n), (in, out, n))

cudaError_t td_warp_reduce(const float *in, float *out, int n, int block)
{
    return launch_warp_reduce(d1((unsigned)((n + block - 1) / block)), d1((unsigned)block), 0, 0,
                              in, out, n);
}

/* blockReduceSum as NVIDIA's blog writes it ("Faster Parallel Reductions on
 * Kepler"): specifiers on a line of their own, a static __shared__ array */
// clang-format off
__inline__ __device__
int blockReduceSum(int val)
// clang-format on
{
    static __shared__ int shared[32];
    int lane = threadIdx.x % warpSize, wid = threadIdx.x / warpSize;
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        val += __shfl_down_sync(0xffffffffu, val, offset);
    if (lane == 0) shared[wid] = val;
    __syncthreads();
    val = (threadIdx.x < blockDim.x / warpSize) ? shared[lane] : 0;
    if (wid == 0)
        for (int offset = warpSize / 2; offset > 0; offset /= 2)
            val += __shfl_down_sync(0xffffffffu, val, offset);
    return val;
}

static __global__ void block_reduce(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int sum = blockReduceSum(i < n ? in[i] : 0);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
}
SIMT_LAUNCHER(block_reduce, (const int *in, int *out, int n), (in, out, n))

cudaError_t td_block_reduce(const int *in, int *out, int n, int block)
{
    return launch_block_reduce(d1((unsigned)((n + block - 1) / block)), d1((unsigned)block), 0, 0,
                               in, out, n);
}

/* ---- extern __shared__: in the kernel, and at file scope ---------------------------- */

static __global__ void reverse_extern(const int *in, int *out, int n)
{
    extern __shared__ int s[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0;
    __syncthreads();
    int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - t);
    if (j < n) out[j] = s[t];
}
SIMT_LAUNCHER(reverse_extern, (const int *in, int *out, int n), (in, out, n))

extern __shared__ int td_file_shared[];

static __global__ void reverse_file_scope(const int *in, int *out, int n)
{
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    td_file_shared[t] = i < n ? in[i] : 0;
    __syncthreads();
    int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - t);
    if (j < n) out[j] = td_file_shared[t];
}
SIMT_LAUNCHER(reverse_file_scope, (const int *in, int *out, int n), (in, out, n))

cudaError_t td_reverse_extern(const int *in, int *out, int n, int block, size_t shmem,
                              int file_scope)
{
    dim3 grid = d1((unsigned)((n + block - 1) / block));
    if (file_scope)
        return launch_reverse_file_scope(grid, d1((unsigned)block), shmem, 0, in, out, n);
    return launch_reverse_extern(grid, d1((unsigned)block), shmem, 0, in, out, n);
}

/* ---- clock64() and clock() ------------------------------------------------------- */

static __global__ void clocks(long long *out)
{
    int t = threadIdx.x;
    long long a = clock64();
    volatile float x = 1.0f;
    for (int k = 0; k < 100; k++) x = x * 1.0001f;
    long long b = clock64();
    __syncthreads();
    long long c = clock64();
    clock_t c0 = clock();
    clock_t c1 = clock();
    out[4 * t] = a;
    out[4 * t + 1] = b;
    out[4 * t + 2] = c;
    out[4 * t + 3] = (long long)(unsigned)(c1 - c0);
}
SIMT_LAUNCHER(clocks, (long long *out), (out))

cudaError_t td_clocks(long long *out, int threads)
{
    return launch_clocks(d1(1), d1((unsigned)threads), 0, 0, out);
}

/* ---- conversion intrinsics ---------------------------------------------------------- */

static __global__ void conversions(long long *out)
{
    float nan = __int_as_float(0x7fc00000);
    int k = 0;
    out[k++] = __float2int_rn(2.5f);                         /* 0: 2 (to even) */
    out[k++] = __float2int_rn(3.5f);                         /* 1: 4 */
    out[k++] = __float2int_rn(-2.5f);                        /* 2: -2 */
    out[k++] = __float2int_rz(-2.7f);                        /* 3: -2 */
    out[k++] = __float2int_rd(-2.2f);                        /* 4: -3 */
    out[k++] = __float2int_ru(2.2f);                         /* 5: 3 */
    out[k++] = __float2int_rn(1e10f);                        /* 6: INT_MAX (saturates) */
    out[k++] = __float2int_rz(-1e10f);                       /* 7: INT_MIN */
    out[k++] = __float2int_rn(nan);                          /* 8: 0 */
    out[k++] = __float2uint_rn(-3.7f);                       /* 9: 0 */
    out[k++] = __float2uint_rn(4e9f);                        /* 10: 4000000000 */
    out[k++] = __float2uint_rz(5e9f);                        /* 11: UINT_MAX */
    out[k++] = __float2uint_rn(nan);                         /* 12: 0 */
    out[k++] = __float2uint_rd(7.9f);                        /* 13: 7 */
    out[k++] = __float2uint_ru(7.1f);                        /* 14: 8 */
    out[k++] = __float_as_int(__int2float_rn(16777217));     /* 15: 16777216.0f's bits */
    out[k++] = __float_as_int(__uint2float_rn(4294967295u)); /* 16: 4294967296.0f's bits */
    out[k++] = __float_as_int(1.0f);                         /* 17: 0x3f800000 */
    out[k++] = __float_as_int(__int_as_float(0x40490fdb));   /* 18: 0x40490fdb */
    out[k++] = __float2ll_rn(-1e19f);                        /* 19: LLONG_MIN */
    out[k++] = __float2ll_rz(123456789012.0f);               /* 20: 123456790528 (the float) */
    out[k++] = (long long)__float2ull_rn(-1.0f);             /* 21: 0 */
    out[k++] = __double2int_rn(-7.5);                        /* 22: -8 (to even) */
    out[k++] = __double2int_rz(3e10);                        /* 23: INT_MAX */
    out[k++] = __double2uint_rn(3.5);                        /* 24: 4 */
    out[k++] = __float_as_int(__double2float_rn(0.1));       /* 25: 0x3dcccccd */
    out[k++] =
        __float_as_int(__ll2float_rn(9007199791611905LL)); /* 26: 2^53 + 2^29 + 1 -> 0x5a000001 */
    out[k++] = (long long)__int2double_rn(-5);             /* 27: -5 */
    out[k++] = __float2int_rn(-0.5f);                      /* 28: 0 */
    out[k++] = __float2int_rn(2147483520.0f); /* 29: 2147483520 (the largest float below 2^31) */
    out[k++] = __float2int_ru(-0.5f);         /* 30: 0 */
    out[k] = k;                               /* 31: 31, the count */
}
SIMT_LAUNCHER(conversions, (long long *out), (out))

cudaError_t td_conversions(long long *out) { return launch_conversions(d1(1), d1(1), 0, 0, out); }
