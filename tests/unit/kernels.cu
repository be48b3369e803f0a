/*
 * kernels.cu — kernels of the conformance suite. CUDA C that compiles with
 * nvcc and as C against the SIMT emulator; each has a host wrapper.
 */
#include "simt/kernel.h"

#include "kernels.h"

static dim3 d1(unsigned x)
{
    dim3 d = {x, 1, 1};
    return d;
}

/* ---- a kernel that loops until told --------------------------------------- */

static __global__ void spin_until(const int *flag)
{
    while (!*(const volatile int *)flag) {
    }
}
SIMT_LAUNCHER(spin_until, (const int *flag), (flag))

cudaError_t tk_spin_until(const int *flag, cudaStream_t stream)
{
    return launch_spin_until(d1(1), d1(1), 0, stream, flag);
}

/* ---- indices ------------------------------------------------------------ */

static __global__ void ids(unsigned *out)
{
    unsigned b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    unsigned t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    unsigned nt = blockDim.x * blockDim.y * blockDim.z;
    out[b * nt + t] = b << 10 | t;
}
SIMT_LAUNCHER(ids, (unsigned *out), (out))

cudaError_t tk_ids(unsigned *out, dim3 grid, dim3 block)
{
    return launch_ids(grid, block, 0, 0, out);
}

/* ---- reductions ---------------------------------------------------------- */

static __global__ void block_sum(const float *in, float *out, int n, int sync)
{
    __shared__ float s[1024];
    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < (unsigned)n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) s[t] += s[t + stride];
        if (sync) __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
SIMT_LAUNCHER(block_sum, (const float *in, float *out, int n, int sync), (in, out, n, sync))

cudaError_t tk_block_sum(const float *in, float *out, int n, int block, int sync)
{
    return launch_block_sum(d1((unsigned)((n + block - 1) / block)), d1((unsigned)block), 0, 0, in,
                            out, n, sync);
}

cudaError_t tk_block_sum_on(const float *in, float *out, int n, int block, cudaStream_t stream)
{
    return launch_block_sum(d1((unsigned)((n + block - 1) / block)), d1((unsigned)block), 0, stream,
                            in, out, n, 1);
}

static __global__ void warp_sum(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (threadIdx.x % 32 == 0) out[i / 32] = v;
}
SIMT_LAUNCHER(warp_sum, (const int *in, int *out, int n), (in, out, n))

cudaError_t tk_warp_sum(const int *in, int *out, int n)
{
    unsigned warps = (unsigned)((n + 31) / 32);
    return launch_warp_sum(d1((warps + 7) / 8), d1(256), 0, 0, in, out, n);
}

/* ---- warp operations ------------------------------------------------------ */

static __global__ void shuffles(int *out, int arg, int width)
{
    int l = threadIdx.x, v = 100 + l;
    out[0 * 32 + l] = __shfl_sync(0xffffffffu, v, arg, width);
    out[1 * 32 + l] = __shfl_up_sync(0xffffffffu, v, (unsigned)arg, width);
    out[2 * 32 + l] = __shfl_down_sync(0xffffffffu, v, (unsigned)arg, width);
    out[3 * 32 + l] = __shfl_xor_sync(0xffffffffu, v, arg, width);
}
SIMT_LAUNCHER(shuffles, (int *out, int arg, int width), (out, arg, width))

cudaError_t tk_shuffles(int *out, int arg, int width)
{
    return launch_shuffles(d1(1), d1(32), 0, 0, out, arg, width);
}

static __global__ void votes(unsigned *out)
{
    unsigned l = threadIdx.x;
    unsigned b = __ballot_sync(0xffffffffu, l % 3 == 0);
    int any7 = __any_sync(0xffffffffu, l == 7);
    int all = __all_sync(0xffffffffu, l < 32);
    int not5 = __all_sync(0xffffffffu, l != 5);
    int none = __any_sync(0xffffffffu, 0);
    if (l == 0) {
        out[0] = b;
        out[1] = (unsigned)any7;
        out[2] = (unsigned)all;
        out[3] = (unsigned)not5;
        out[4] = (unsigned)none;
    }
}
SIMT_LAUNCHER(votes, (unsigned *out), (out))

cudaError_t tk_votes(unsigned *out) { return launch_votes(d1(1), d1(32), 0, 0, out); }

/* ---- atomics -------------------------------------------------------------- */
/* i[0] += 1; i[1] max= tid; i[2] min= -tid; i[3] via CAS += 2; i[4] -= 1;
 * i[5] |= 1 << (tid % 31); i[6] ^= tid; i[7] &= ~(1 << (tid % 31)); i[8] exch
 * u[0] inc wrap at 9; u[1] dec wrap at 9; ull[0] += tid; f[0] += 0.5; d[0] += 0.25 */
static __global__ void atomics(int *i, unsigned *u, unsigned long long *ull, float *f, double *d,
                               int threads)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    atomicAdd(&i[0], 1);
    atomicMax(&i[1], t);
    atomicMin(&i[2], -t);
    int old = i[3], assumed;
    do {
        assumed = old;
        old = atomicCAS(&i[3], assumed, assumed + 2);
    } while (old != assumed);
    atomicSub(&i[4], 1);
    atomicOr(&i[5], 1 << (t % 31));
    atomicXor(&i[6], t);
    atomicAnd(&i[7], ~(1 << (t % 31)));
    atomicExch(&i[8], 42);
    atomicInc(&u[0], 9u);
    atomicDec(&u[1], 9u);
    atomicAdd(&ull[0], (unsigned long long)t);
    atomicAdd(&f[0], 0.5f);
    atomicAdd(&d[0], 0.25);
}
SIMT_LAUNCHER(atomics,
              (int *i, unsigned *u, unsigned long long *ull, float *f, double *d, int threads),
              (i, u, ull, f, d, threads))

cudaError_t tk_atomics(int *i, unsigned *u, unsigned long long *ull, float *f, double *d,
                       int threads)
{
    return launch_atomics(d1((unsigned)(threads + 127) / 128), d1(128), 0, 0, i, u, ull, f, d,
                          threads);
}

/* ---- intrinsics ----------------------------------------------------------- */

static __global__ void intrinsics(int *out, int x)
{
    out[0] = __popc((unsigned)x);
    out[1] = __clz(x);
    out[2] = __ffs(x);
    out[3] = (int)__brev((unsigned)x);
    out[4] = __mul24(x, -3);
    out[5] = (int)__umul24((unsigned)x, 5u);
    out[6] = __float_as_int(1.5f);
    out[7] = (int)__int_as_float(0x40490fdb); /* pi as float, truncated: 3 */
    out[8] = __popcll(0xf0f0f0f0f0f0f0f0ull);
    out[9] = __mulhi(x, 0x40000000);
    out[10] = min(x, 7);
    out[11] = max(x, 7);
}
SIMT_LAUNCHER(intrinsics, (int *out, int x), (out, x))

cudaError_t tk_intrinsics(int *out, int x) { return launch_intrinsics(d1(1), d1(1), 0, 0, out, x); }

/* ---- dynamic shared memory ----------------------------------------------- */

static __global__ void reverse_dynamic(const int *in, int *out, int n)
{
    SIMT_DYNAMIC_SHARED(int, s);
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0;
    __syncthreads();
    int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - t);
    if (j < n) out[j] = s[t];
}
SIMT_LAUNCHER(reverse_dynamic, (const int *in, int *out, int n), (in, out, n))

cudaError_t tk_reverse_dynamic(const int *in, int *out, int n, int block, size_t shmem)
{
    return launch_reverse_dynamic(d1((unsigned)((n + block - 1) / block)), d1((unsigned)block),
                                  shmem, 0, in, out, n);
}

const void *tk_reverse_dynamic_kernel(void) { return (const void *)reverse_dynamic; }

/* ---- constant memory -------------------------------------------------------- */

__constant__ float coefficients[4];

static __global__ void poly(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = (float)i;
        out[i] =
            ((coefficients[3] * x + coefficients[2]) * x + coefficients[1]) * x + coefficients[0];
    }
}
SIMT_LAUNCHER(poly, (float *out, int n), (out, n))

cudaError_t tk_set_coefficients(const float *c4)
{
    return cudaMemcpyToSymbol(coefficients, c4, 4 * sizeof(float));
}

cudaError_t tk_poly(float *out, int n)
{
    return launch_poly(d1((unsigned)(n + 63) / 64), d1(64), 0, 0, out, n);
}

/* ---- grid-stride loop ------------------------------------------------------- */

static __global__ void axpy(float a, const float *y, float *x, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        x[i] = a * x[i] + y[i];
}
SIMT_LAUNCHER(axpy, (float a, const float *y, float *x, int n), (a, y, x, n))

cudaError_t tk_axpy(float a, const float *y, float *x, int n, int grid, int block)
{
    SIMT_LAUNCH_COST(2.0 * n, 12.0 * n);
    return launch_axpy(d1((unsigned)grid), d1((unsigned)block), 0, 0, a, y, x, n);
}

/* ---- streams and the modeled clock ------------------------------------------ */

static __global__ void wait_flag(volatile int *flag, int *seen, long long limit)
{
    long long k = 0;
    while (!*flag && k < limit) k++;
    *seen = *flag != 0;
}
SIMT_LAUNCHER(wait_flag, (volatile int *flag, int *seen, long long limit), (flag, seen, limit))

cudaError_t tk_wait_flag(volatile int *flag, int *seen, long long limit, cudaStream_t stream)
{
    return launch_wait_flag(d1(1), d1(1), 0, stream, flag, seen, limit);
}

static __global__ void cost(int *out) { out[0] = 1; }
SIMT_LAUNCHER(cost, (int *out), (out))

cudaError_t tk_cost(int *out, double flops, double bytes, cudaStream_t stream)
{
    SIMT_LAUNCH_COST(flops, bytes);
    return launch_cost(d1(1), d1(1), 0, stream, out);
}

/* ---- the warp-synchronous tail ---------------------------------------------- */

static __global__ void warp_tail(const int *in, int *out, int sync)
{
    __shared__ int s[64];
    volatile int *v = s;
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    if (t < 32) {
        v[t] += v[t + 32];
        if (sync) __syncwarp();
        for (unsigned stride = 16; stride > 0; stride /= 2) {
            /* read, sync, write: lanes must not overwrite a value another lane reads */
            int other = t < stride ? v[t + stride] : 0;
            if (sync) __syncwarp();
            if (t < stride) v[t] += other;
            if (sync) __syncwarp();
        }
    }
    if (t == 0) out[0] = s[0];
}
SIMT_LAUNCHER(warp_tail, (const int *in, int *out, int sync), (in, out, sync))

cudaError_t tk_warp_tail(const int *in, int *out, int sync)
{
    return launch_warp_tail(d1(1), d1(64), 0, 0, in, out, sync);
}

/* ---- teaching faults ---------------------------------------------------------- */

static __global__ void divergent_barrier(int *out)
{
    if (threadIdx.x < 16) {
        __syncthreads();
    } else {
        __syncthreads();
    }
    out[threadIdx.x] = 1;
}
SIMT_LAUNCHER(divergent_barrier, (int *out), (out))

cudaError_t tk_divergent_barrier(int *out)
{
    return launch_divergent_barrier(d1(1), d1(64), 0, 0, out);
}

static __global__ void exit_before_barrier(int *out, int n)
{
    int i = threadIdx.x;
    if (i >= n) return;
    __syncthreads();
    out[i] = 1;
}
SIMT_LAUNCHER(exit_before_barrier, (int *out, int n), (out, n))

cudaError_t tk_exit_before_barrier(int *out, int n)
{
    return launch_exit_before_barrier(d1(1), d1(64), 0, 0, out, n);
}

static __global__ void shfl_exited_lane(int *out)
{
    int l = threadIdx.x;
    if (l >= 16) return;
    out[l] = __shfl_down_sync(0xffffffffu, l, 1);
}
SIMT_LAUNCHER(shfl_exited_lane, (int *out), (out))

cudaError_t tk_shfl_exited_lane(int *out)
{
    return launch_shfl_exited_lane(d1(1), d1(32), 0, 0, out);
}

static __global__ void write_past_end(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = i;
}
SIMT_LAUNCHER(write_past_end, (int *out, int n), (out, n))

cudaError_t tk_write_past_end(int *out, int n, int extra)
{
    int m = n + extra;
    return launch_write_past_end(d1((unsigned)(m + 63) / 64), d1(64), 0, 0, out, m);
}

static __global__ void assert_nonnegative(const int *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) assert(in[i] >= 0);
}
SIMT_LAUNCHER(assert_nonnegative, (const int *in, int n), (in, n))

cudaError_t tk_assert_nonnegative(const int *in, int n)
{
    return launch_assert_nonnegative(d1((unsigned)(n + 63) / 64), d1(64), 0, 0, in, n);
}

/* The line of the division in divide (below), for the report's test. */
const int tk_divide_line = __LINE__ + 8;
static __global__ void divide(const long long *a, const long long *b, long long *out, int n, int op)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long r = 0;
    switch (op) {
    case 0:
        r = (int)a[i] / (int)b[i];
        break;
    case 1:
        r = (int)a[i] % (int)b[i];
        break;
    case 2:
        r = (unsigned)a[i] / (unsigned)b[i];
        break;
    default:
        r = a[i] / b[i];
    }
    out[i] = r;
}
SIMT_LAUNCHER(divide, (const long long *a, const long long *b, long long *out, int n, int op),
              (a, b, out, n, op))

cudaError_t tk_divide(const long long *a, const long long *b, long long *out, int n, int op)
{
    return launch_divide(d1((unsigned)(n + 31) / 32), d1(32), 0, 0, a, b, out, n, op);
}

/* Thread t of one block of `threads` writes p[-1 - t], or (write = 0) reads
 * p[-1 - t] into out[t]. */
static __global__ void below(float *p, float *out, int write)
{
    int t = threadIdx.x;
    if (write)
        p[-1 - t] = 1.0f;
    else
        out[t] = p[-1 - t];
}
SIMT_LAUNCHER(below, (float *p, float *out, int write), (p, out, write))

cudaError_t tk_below(float *p, float *out, int threads, int write)
{
    return launch_below(d1(1), d1((unsigned)threads), 0, 0, p, out, write);
}

/* assert(in[t] >= 0) and assert(in[t] < 1000) by every thread t of one
 * block, then a __syncthreads(); out[t] = in[t] after it. */
static __global__ void assert_then_sync(const int *in, int *out)
{
    int t = threadIdx.x;
    assert(in[t] >= 0);
    assert(in[t] < 1000);
    __syncthreads();
    out[t] = in[t];
}
SIMT_LAUNCHER(assert_then_sync, (const int *in, int *out), (in, out))

cudaError_t tk_assert_then_sync(const int *in, int *out, int threads)
{
    return launch_assert_then_sync(d1(1), d1((unsigned)threads), 0, 0, in, out);
}

static __global__ void lane0_skips(int *out)
{
    int l = threadIdx.x;
    if (l == 0) return;
    out[l] = __shfl_down_sync(0xfffffffeu, 100 + l, 1);
}
SIMT_LAUNCHER(lane0_skips, (int *out), (out))

cudaError_t tk_lane0_skips(int *out) { return launch_lane0_skips(d1(1), d1(32), 0, 0, out); }

/* issue 19: a full-mask shuffle that only warp 1 executes (warp 0, and so
 * thread 0, does none): legal CUDA. Each of `blocks` blocks of 64 threads:
 * out[b * 32 + l] = lane l + 1's value (lane 31: its own). `exit_from`: lanes
 * of warp 1 at or above it exit instead (a mask naming exited lanes: wrong). */
static __global__ void warp1_shuffles(int *out, int exit_from)
{
    int t = threadIdx.x;
    if (t < 32 || t - 32 >= exit_from) return;
    int v = __shfl_down_sync(0xffffffffu, 1000 * (int)blockIdx.x + t, 1);
    out[blockIdx.x * 32 + t - 32] = v;
}
SIMT_LAUNCHER(warp1_shuffles, (int *out, int exit_from), (out, exit_from))

cudaError_t tk_warp1_shuffles(int *out, int blocks, int exit_from)
{
    return launch_warp1_shuffles(d1((unsigned)blocks), d1(64), 0, 0, out, exit_from);
}

/* Warp 1's lanes shuffle (warp 0 does nothing: the block starts as plain
 * calls and thread 32 becomes the host fiber at the shuffle), then every
 * lane whose value is negative fails an assert: in[t - 32] < 0. */
static __global__ void warp1_shuffle_assert(const int *in, int *out)
{
    int t = threadIdx.x;
    if (t < 32) return;
    int v = __shfl_down_sync(0xffffffffu, in[t - 32], 1);
    assert(in[t - 32] >= 0);
    out[t - 32] = v;
}
SIMT_LAUNCHER(warp1_shuffle_assert, (const int *in, int *out), (in, out))

cudaError_t tk_warp1_shuffle_assert(const int *in, int *out)
{
    return launch_warp1_shuffle_assert(d1(1), d1(64), 0, 0, in, out);
}

/* Thread 0 exits at once; every other thread waits at a __syncthreads(). */
static __global__ void thread0_skips_barrier(int *out)
{
    if (threadIdx.x == 0) return;
    __syncthreads();
    out[threadIdx.x] = 1;
}
SIMT_LAUNCHER(thread0_skips_barrier, (int *out), (out))

cudaError_t tk_thread0_skips_barrier(int *out)
{
    return launch_thread0_skips_barrier(d1(1), d1(64), 0, 0, out);
}

/* issue 19: Professional CUDA C Programming's warp-unrolled reductions, as
 * the book writes them: chapter 3's reduceUnrollWarps8 (in global memory)
 * and chapter 5's reduceSmem (in shared memory), each ending in the
 * "volatile" warp-synchronous tail with no __syncwarp(); and the tail as it
 * must be written since Volta (sync = 1: chapter 5's kernel with
 * __syncwarp() between each read and write). */
static __global__ void reduceUnrollWarps8(int *g_idata, int *g_odata, unsigned int n)
{
    unsigned int tid = threadIdx.x;
    unsigned int idx = blockIdx.x * blockDim.x * 8 + threadIdx.x;
    int *idata = g_idata + blockIdx.x * blockDim.x * 8;
    if (idx + 7 * blockDim.x < n) {
        int a1 = g_idata[idx];
        int a2 = g_idata[idx + blockDim.x];
        int a3 = g_idata[idx + 2 * blockDim.x];
        int a4 = g_idata[idx + 3 * blockDim.x];
        int b1 = g_idata[idx + 4 * blockDim.x];
        int b2 = g_idata[idx + 5 * blockDim.x];
        int b3 = g_idata[idx + 6 * blockDim.x];
        int b4 = g_idata[idx + 7 * blockDim.x];
        g_idata[idx] = a1 + a2 + a3 + a4 + b1 + b2 + b3 + b4;
    }
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 32; stride >>= 1) {
        if (tid < (unsigned)stride) idata[tid] += idata[tid + stride];
        __syncthreads();
    }
    if (tid < 32) {
        volatile int *vmem = idata;
        vmem[tid] += vmem[tid + 32];
        vmem[tid] += vmem[tid + 16];
        vmem[tid] += vmem[tid + 8];
        vmem[tid] += vmem[tid + 4];
        vmem[tid] += vmem[tid + 2];
        vmem[tid] += vmem[tid + 1];
    }
    if (tid == 0) g_odata[blockIdx.x] = idata[0];
}
SIMT_LAUNCHER(reduceUnrollWarps8, (int *g_idata, int *g_odata, unsigned int n),
              (g_idata, g_odata, n))

#define BOOK_DIM 128
static __global__ void reduceSmem(int *g_idata, int *g_odata, unsigned int n, int sync)
{
    __shared__ int smem[BOOK_DIM];
    unsigned int tid = threadIdx.x;
    if (blockIdx.x * blockDim.x + tid >= n) return;
    int *idata = g_idata + blockIdx.x * blockDim.x;
    smem[tid] = idata[tid];
    __syncthreads();
    if (blockDim.x >= 128 && tid < 64) smem[tid] += smem[tid + 64];
    __syncthreads();
    if (tid < 32 && !sync) {
        volatile int *vsmem = smem;
        vsmem[tid] += vsmem[tid + 32];
        vsmem[tid] += vsmem[tid + 16];
        vsmem[tid] += vsmem[tid + 8];
        vsmem[tid] += vsmem[tid + 4];
        vsmem[tid] += vsmem[tid + 2];
        vsmem[tid] += vsmem[tid + 1];
    }
    if (tid < 32 && sync) {
        volatile int *vsmem = smem;
        for (int d = 32; d > 0; d /= 2) {
            int v = vsmem[tid] + vsmem[tid + d];
            __syncwarp();
            vsmem[tid] = v;
            __syncwarp();
        }
    }
    if (tid == 0) g_odata[blockIdx.x] = smem[0];
}
SIMT_LAUNCHER(reduceSmem, (int *g_idata, int *g_odata, unsigned int n, int sync),
              (g_idata, g_odata, n, sync))

cudaError_t tk_book_reduce(int *in, int *out, unsigned n, int chapter, int sync)
{
    if (chapter == 3) return launch_reduceUnrollWarps8(d1(n / 512 / 8), d1(512), 0, 0, in, out, n);
    return launch_reduceSmem(d1(n / BOOK_DIM), d1(BOOK_DIM), 0, 0, in, out, n, sync);
}

/* 256 threads count with no barrier between them: a histogram of 4 bins in
 * shared memory (global = 0: bin threadIdx.x / 64; out[0..3] = the bins)
 * or one word of device memory (global = 1: out[0]), with ++ (updates a GPU
 * loses) or atomicAdd. */
static __global__ void count_up(int *out, int global, int atomic)
{
    __shared__ int bins[4];
    unsigned t = threadIdx.x;
    if (t < 4) bins[t] = 0;
    __syncthreads();
    if (!global && atomic) atomicAdd(&bins[t / 64], 1);
    if (!global && !atomic) bins[t / 64]++;
    if (global && atomic) atomicAdd(out, 1);
    if (global && !atomic) out[0]++;
    __syncthreads();
    if (t < 4 && !global) out[t] = bins[t];
}
SIMT_LAUNCHER(count_up, (int *out, int global, int atomic), (out, global, atomic))

cudaError_t tk_count_up(int *out, int global, int atomic)
{
    return launch_count_up(d1(1), d1(256), 0, 0, out, global, atomic);
}

/* 256 threads add 1 to a scalar __shared__ int (out[0] = its value), with
 * ++ or atomicAdd: the race is on a variable, not an array element (the
 * simulated build reaches it through a pointer: mk/cu2c.pl). */
static __global__ void count_scalar(int *out, int atomic)
{
    __shared__ int count;
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    if (atomic)
        atomicAdd(&count, 1);
    else
        count++;
    __syncthreads();
    if (threadIdx.x == 0) out[0] = count;
}
SIMT_LAUNCHER(count_scalar, (int *out, int atomic), (out, atomic))

cudaError_t tk_count_scalar(int *out, int atomic)
{
    return launch_count_scalar(d1(1), d1(256), 0, 0, out, atomic);
}

static __global__ void big_frame(int *out)
{
    volatile int local[65536]; /* 256 KiB: more than a simulated thread's stack */
    for (int i = 0; i < 65536; i += 1024) local[i] = i;
    out[threadIdx.x] = local[1024];
}
SIMT_LAUNCHER(big_frame, (int *out), (out))

cudaError_t tk_big_frame(int *out) { return launch_big_frame(d1(1), d1(2), 0, 0, out); }

#ifdef PARALAB_SIMULATED_CUDA /* nvcc rightly refuses a host call in device code */
static __global__ void launches_from_device(int *out)
{
    int *p = 0;
    out[0] = cudaMalloc((void **)&p, 16); /* dynamic parallelism: not simulated */
}
SIMT_LAUNCHER(launches_from_device, (int *out), (out))

cudaError_t tk_runtime_from_device(int *out)
{
    return launch_launches_from_device(d1(1), d1(1), 0, 0, out);
}
#endif

static __global__ void hello(int tag)
{
    if (threadIdx.x < 3)
        printf("hello from thread %d of block %d, tag %d\n", threadIdx.x, blockIdx.x, tag);
}
SIMT_LAUNCHER(hello, (int tag), (tag))

cudaError_t tk_hello(int blocks, int tag)
{
    return launch_hello(d1((unsigned)blocks), d1(32), 0, 0, tag);
}
