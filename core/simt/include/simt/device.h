/*
 * simt/device.h — the CUDA dialect for kernels compiled as C (simulated build).
 *
 * Included through simt/kernel.h; do not include directly. It maps CUDA's
 * device-side vocabulary onto the SIMT emulator (core/simt/emu.c):
 *
 *   threadIdx, blockIdx, blockDim, gridDim   thread-locals set at every switch
 *   __shared__                               one copy per executing OS thread
 *                                            (blocks run one at a time on it)
 *   __syncthreads, __syncwarp, __shfl_*_sync,
 *   __ballot_sync, __any_sync, __all_sync    suspend the fiber at a barrier
 *   atomic*                                  type-generic through _Generic
 *   assert                                   device-side assert (cudaErrorAssert)
 *   __float2int_rn, ..., clock64, clock       conversions (as cvt), host nanoseconds
 *   __launch_bounds__                        its thread limit, checked at launch
 *
 * Everything here is C11; the overloaded CUDA intrinsics are macros over
 * _Generic so that kernel files keep CUDA's spelling. What a header cannot
 * spell in C (extern __shared__, non-static inline and __device__
 * functions, the 48 KiB check of static __shared__ memory) the build
 * rewrites first (mk/cu2c.pl): SIMT_EXTERN_SHARED below is its target. The
 * vector types (float4, make_float4, ...) come with <cuda_runtime.h>.
 */
#ifndef SIMT_DEVICE_H
#define SIMT_DEVICE_H

/* clang-format off: clang-format 14 cannot lay out _Generic selections */

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "simt/simt.h"

/* ---- qualifiers --------------------------------------------------------- */
#define __global__
#define __device__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))
#define __restrict__ restrict
#define __align__(n) __attribute__((aligned(n)))
/* __launch_bounds__(max threads per block[, min blocks per SM[, max blocks
 * per cluster]]): nvcc's register allocation hint, and a limit: a launch
 * with more threads per block fails with cudaErrorLaunchOutOfResources.
 * The kernel's SIMT_LAUNCHER becomes SIMT_LAUNCHER_BOUNDED(max, ...)
 * (mk/cu2c.pl) when the kernel's name follows __launch_bounds__(...) on its
 * line; here the attribute itself expands to nothing. */
#define __launch_bounds__(...)
/* Shared memory: blocks of a launch run one after another on one OS thread,
 * so one thread-local copy per OS thread is exactly one copy per block. */
#define __shared__ static _Thread_local
/* p, as a pointer the compiler knows nothing of: mk/cu2c.pl reaches a scalar
 * __shared__ variable through it, so that its accesses are instrumented
 * (the race check of the normal run sees them; GCC leaves an access to a
 * variable it can see whole unchecked). */
static inline void *simt_launder(void *p)
{
    __asm__("" : "+r"(p));
    return p;
}
/* __constant__ memory is an ordinary global in host memory. */
#define __constant__

/* ---- built-in variables ------------------------------------------------- */
#define threadIdx simt_threadIdx
#define blockIdx simt_blockIdx
#define blockDim simt_blockDim
#define gridDim simt_gridDim
#define warpSize 32

#define SIMT_DYNAMIC_SHARED(type, name) type *name = (type *)simt_dynamic_shared
/* `extern __shared__ type name[];` inside a function, as the build's
 * filter (mk/cu2c.pl) rewrites it: a pointer to the launch's dynamic shared
 * memory, unused without a warning (as the extern declaration is in CUDA). */
#define SIMT_EXTERN_SHARED(type, name)                                                             \
    type *name __attribute__((unused)) = (type *)simt_dynamic_shared

/* ---- barriers and warp operations -------------------------------------- */
#define __syncthreads() simt_syncthreads(__FILE__, __LINE__)
#define __syncwarp(...) simt_syncwarp(SIMT_MASK_OR_FULL(__VA_ARGS__), __FILE__, __LINE__)
#define SIMT_MASK_OR_FULL(...) (0xffffffffu __VA_OPT__(&(__VA_ARGS__)))
#define SIMT_WIDTH_OR_32(...) (32 __VA_OPT__(*0 + (__VA_ARGS__)))

#define __ballot_sync(mask, pred) simt_vote((mask), (pred), SIMT_WOP_BALLOT, __FILE__, __LINE__)
#define __any_sync(mask, pred) ((int)simt_vote((mask), (pred), SIMT_WOP_ANY, __FILE__, __LINE__))
#define __all_sync(mask, pred) ((int)simt_vote((mask), (pred), SIMT_WOP_ALL, __FILE__, __LINE__))
#define __activemask() simt_activemask()

/* __shfl*_sync(mask, var, lane_or_delta[, width]) for every type CUDA
 * overloads them for. The value travels as its 64-bit pattern. */
#define SIMT_SHFL(kind, mask, var, arg, ...)                                                       \
    _Generic((var), int                                                                            \
             : simt_shfl_i32, unsigned                                                             \
             : simt_shfl_u32, long                                                                 \
             : simt_shfl_i64, unsigned long                                                        \
             : simt_shfl_u64, long long                                                            \
             : simt_shfl_ll, unsigned long long                                                    \
             : simt_shfl_ull, float                                                                \
             : simt_shfl_f32, double                                                               \
             : simt_shfl_f64)((mask), (var), (arg), SIMT_WIDTH_OR_32(__VA_ARGS__), (kind),         \
                              __FILE__, __LINE__)
#define __shfl_sync(mask, var, lane, ...) SIMT_SHFL(SIMT_WOP_SHFL, mask, var, lane, __VA_ARGS__)
#define __shfl_up_sync(mask, var, d, ...) SIMT_SHFL(SIMT_WOP_SHFL_UP, mask, var, d, __VA_ARGS__)
#define __shfl_down_sync(mask, var, d, ...) SIMT_SHFL(SIMT_WOP_SHFL_DOWN, mask, var, d, __VA_ARGS__)
#define __shfl_xor_sync(mask, var, m, ...) SIMT_SHFL(SIMT_WOP_SHFL_XOR, mask, var, m, __VA_ARGS__)

#define SIMT_SHFL_FN(suffix, T)                                                                    \
    static inline T simt_shfl_##suffix(unsigned mask, T v, int arg, int width, int kind,           \
                                       const char *file, int line)                                 \
    {                                                                                              \
        union {                                                                                    \
            T t;                                                                                   \
            uint64_t u;                                                                            \
        } in = {.u = 0}, out;                                                                      \
        in.t = v;                                                                                  \
        out.u = simt_shfl(mask, in.u, arg, width, kind, file, line);                               \
        return out.t;                                                                              \
    }
SIMT_SHFL_FN(i32, int)
SIMT_SHFL_FN(u32, unsigned)
SIMT_SHFL_FN(i64, long)
SIMT_SHFL_FN(u64, unsigned long)
SIMT_SHFL_FN(ll, long long)
SIMT_SHFL_FN(ull, unsigned long long)
SIMT_SHFL_FN(f32, float)
SIMT_SHFL_FN(f64, double)
#undef SIMT_SHFL_FN

#define __threadfence() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define __threadfence_block() __atomic_thread_fence(__ATOMIC_SEQ_CST)

/* ---- atomics (CUDA's overload sets) ------------------------------------- */
#define SIMT_ATOMIC_INT(op, p, v)                                                                  \
    _Generic((p),                                                                              \
        int *: simt_atomic_##op##_i32,                                                         \
        unsigned *: simt_atomic_##op##_u32,                                                    \
        unsigned long long *: simt_atomic_##op##_u64)((p), (v))
#define atomicAdd(p, v)                                                                            \
    _Generic((p),                                                                              \
        int *: simt_atomic_add_i32,                                                            \
        unsigned *: simt_atomic_add_u32,                                                       \
        unsigned long long *: simt_atomic_add_u64,                                             \
        float *: simt_atomic_add_f32,                                                          \
        double *: simt_atomic_add_f64)((p), (v))
#define atomicSub(p, v)                                                                            \
    _Generic((p), int * : simt_atomic_sub_i32, unsigned * : simt_atomic_sub_u32)((p), (v))
#define atomicExch(p, v)                                                                           \
    _Generic((p),                                                                              \
        int *: simt_atomic_exch_i32,                                                           \
        unsigned *: simt_atomic_exch_u32,                                                      \
        unsigned long long *: simt_atomic_exch_u64,                                            \
        float *: simt_atomic_exch_f32)((p), (v))
#define atomicMin(p, v)                                                                            \
    _Generic((p),                                                                              \
        int *: simt_atomic_min_i32,                                                            \
        unsigned *: simt_atomic_min_u32,                                                       \
        long long *: simt_atomic_min_i64,                                                      \
        unsigned long long *: simt_atomic_min_u64)((p), (v))
#define atomicMax(p, v)                                                                            \
    _Generic((p),                                                                              \
        int *: simt_atomic_max_i32,                                                            \
        unsigned *: simt_atomic_max_u32,                                                       \
        long long *: simt_atomic_max_i64,                                                      \
        unsigned long long *: simt_atomic_max_u64)((p), (v))
#define atomicAnd(p, v) SIMT_ATOMIC_INT(and, p, v)
#define atomicOr(p, v) SIMT_ATOMIC_INT(or, p, v)
#define atomicXor(p, v) SIMT_ATOMIC_INT(xor, p, v)
#define atomicInc(p, v) simt_atomic_inc_u32((p), (v))
#define atomicDec(p, v) simt_atomic_dec_u32((p), (v))
#define atomicCAS(p, c, v)                                                                         \
    _Generic((p),                                                                              \
        int *: simt_atomic_cas_i32,                                                            \
        unsigned *: simt_atomic_cas_u32,                                                       \
        unsigned long long *: simt_atomic_cas_u64)((p), (c), (v))

/* ---- integer, bit and float intrinsics --------------------------------- */
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static inline int __clzll(long long x)
{
    return x == 0 ? 64 : __builtin_clzll((unsigned long long)x);
}
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x)
{
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
/* 24-bit multiplies: the low 24 bits of each operand, sign-extended for the
 * signed form; the low 32 bits of the product (CUDA Math API). */
static inline int __mul24(int a, int b)
{
    int32_t x = (int32_t)((uint32_t)a << 8) >> 8, y = (int32_t)((uint32_t)b << 8) >> 8;
    return (int)(uint32_t)((int64_t)x * y);
}
static inline unsigned __umul24(unsigned a, unsigned b)
{
    return (a & 0xffffffu) * (b & 0xffffffu);
}
static inline int __mulhi(int a, int b) { return (int)(((int64_t)a * b) >> 32); }
static inline unsigned __umulhi(unsigned a, unsigned b)
{
    return (unsigned)(((uint64_t)a * b) >> 32);
}
static inline int __float_as_int(float f)
{
    int i;
    memcpy(&i, &f, 4);
    return i;
}
static inline float __int_as_float(int i)
{
    float f;
    memcpy(&f, &i, 4);
    return f;
}
static inline unsigned __float_as_uint(float f)
{
    unsigned i;
    memcpy(&i, &f, 4);
    return i;
}
static inline float __uint_as_float(unsigned i)
{
    float f;
    memcpy(&f, &i, 4);
    return f;
}
static inline long long __double_as_longlong(double d)
{
    long long i;
    memcpy(&i, &d, 8);
    return i;
}
static inline double __longlong_as_double(long long i)
{
    double d;
    memcpy(&d, &i, 8);
    return d;
}
static inline float __saturatef(float x)
{
    return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : (x == x ? x : 0.0f));
}
static inline float __fdividef(float a, float b) { return a / b; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
#define __expf expf
#define __logf logf
#define __sinf sinf
#define __cosf cosf
#define __powf powf
#define __tanhf tanhf
#define __fmaf_rn fmaf
#define __fadd_rn(a, b) ((float)(a) + (float)(b))
#define __fmul_rn(a, b) ((float)(a) * (float)(b))

/* Conversions with a rounding mode (rn: to nearest even, rz: toward zero,
 * rd: down, ru: up), as CUDA's cvt instruction does them: out-of-range
 * values saturate to the type's limits, and NaN gives 0 from a float into
 * a 32-bit integer, the lowest bit pattern 1 << (bits - 1) otherwise (from
 * a double, or into a 64-bit integer). */
static inline int simt_cvt_i32(double r, int nan)
{
    return r != r ? nan : r >= 2147483648.0 ? INT_MAX : r < -2147483648.0 ? INT_MIN : (int)r;
}
static inline unsigned simt_cvt_u32(double r, unsigned nan)
{
    return r != r ? nan : r <= 0.0 ? 0u : r >= 4294967296.0 ? UINT_MAX : (unsigned)r;
}
static inline long long simt_cvt_i64(double r)
{
    return r != r || r < -9223372036854775808.0 ? LLONG_MIN
           : r >= 9223372036854775808.0         ? LLONG_MAX
                                                : (long long)r;
}
static inline unsigned long long simt_cvt_u64(double r)
{
    return r != r                        ? 1ull << 63
           : r <= 0.0                    ? 0ull
           : r >= 18446744073709551616.0 ? ULLONG_MAX
                                         : (unsigned long long)r;
}
static inline int __float2int_rn(float x) { return simt_cvt_i32(nearbyintf(x), 0); }
static inline int __float2int_rz(float x) { return simt_cvt_i32(truncf(x), 0); }
static inline int __float2int_rd(float x) { return simt_cvt_i32(floorf(x), 0); }
static inline int __float2int_ru(float x) { return simt_cvt_i32(ceilf(x), 0); }
static inline unsigned __float2uint_rn(float x) { return simt_cvt_u32(nearbyintf(x), 0); }
static inline unsigned __float2uint_rz(float x) { return simt_cvt_u32(truncf(x), 0); }
static inline unsigned __float2uint_rd(float x) { return simt_cvt_u32(floorf(x), 0); }
static inline unsigned __float2uint_ru(float x) { return simt_cvt_u32(ceilf(x), 0); }
static inline long long __float2ll_rn(float x) { return simt_cvt_i64(nearbyintf(x)); }
static inline long long __float2ll_rz(float x) { return simt_cvt_i64(truncf(x)); }
static inline unsigned long long __float2ull_rn(float x) { return simt_cvt_u64(nearbyintf(x)); }
static inline unsigned long long __float2ull_rz(float x) { return simt_cvt_u64(truncf(x)); }
static inline int __double2int_rn(double x) { return simt_cvt_i32(nearbyint(x), INT_MIN); }
static inline int __double2int_rz(double x) { return simt_cvt_i32(trunc(x), INT_MIN); }
static inline unsigned __double2uint_rn(double x) { return simt_cvt_u32(nearbyint(x), 1u << 31); }
static inline unsigned __double2uint_rz(double x) { return simt_cvt_u32(trunc(x), 1u << 31); }
/* int to float and double to float round to nearest even, as C does. */
static inline float __int2float_rn(int i) { return (float)i; }
static inline float __uint2float_rn(unsigned u) { return (float)u; }
static inline float __ll2float_rn(long long i) { return (float)i; }
static inline double __int2double_rn(int i) { return (double)i; }
static inline double __uint2double_rn(unsigned u) { return (double)u; }
static inline float __double2float_rn(double x) { return (float)x; }

/* ---- clock64() and clock() ----------------------------------------------- */
/* Host nanoseconds, not SM cycles (simt_clock64, core/simt/clock.c): each
 * CUDA thread's reads strictly increase. clock() is the low 32 bits as a
 * clock_t in a kernel, and the C library's clock() in host code (<time.h>
 * is included first, so its own declaration is not affected). */
#define clock64() simt_clock64()
#define clock() ((clock_t)simt_clock())

/* CUDA's device-side min/max are overloaded for integers and floats. */
#define SIMT_MINMAX(fn, a, b)                                                                      \
    _Generic((a) + (b), int                                                                        \
             : simt_##fn##_i, unsigned                                                             \
             : simt_##fn##_u, long                                                                 \
             : simt_##fn##_l, unsigned long                                                        \
             : simt_##fn##_ul, long long                                                           \
             : simt_##fn##_ll, unsigned long long                                                  \
             : simt_##fn##_ull, float                                                              \
             : simt_##fn##_f, double                                                               \
             : simt_##fn##_d)((a), (b))
#define SIMT_MINMAX_FN(suffix, T)                                                                  \
    static inline T simt_min_##suffix(T a, T b) { return a < b ? a : b; }                          \
    static inline T simt_max_##suffix(T a, T b) { return a > b ? a : b; }
SIMT_MINMAX_FN(i, int)
SIMT_MINMAX_FN(u, unsigned)
SIMT_MINMAX_FN(l, long)
SIMT_MINMAX_FN(ul, unsigned long)
SIMT_MINMAX_FN(ll, long long)
SIMT_MINMAX_FN(ull, unsigned long long)
#undef SIMT_MINMAX_FN
static inline float simt_min_f(float a, float b) { return fminf(a, b); }
static inline float simt_max_f(float a, float b) { return fmaxf(a, b); }
static inline double simt_min_d(double a, double b) { return fmin(a, b); }
static inline double simt_max_d(double a, double b) { return fmax(a, b); }
#define min(a, b) SIMT_MINMAX(min, a, b)
#define max(a, b) SIMT_MINMAX(max, a, b)

/* ---- device-side assert -------------------------------------------------- */
/* A failed assert stops its thread; the rest of the block runs on, then the
 * kernel stops: the report is CUDA's message for the first failure plus how
 * many more threads of the block failed, and the next synchronising call
 * returns cudaErrorAssert (sticky, as on a real device). */
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : simt_assert_fail(#e, __FILE__, __LINE__, __func__))
#endif

/* ---- not simulated: refused at compile time ------------------------------ */
/* An expression, so the message appears wherever the call stands. */
#define SIMT_NOT_SIMULATED(what)                                                                   \
    ((int)sizeof(struct {                                                                          \
        _Static_assert(0, what " is not simulated by paralab's SIMT emulator");                    \
        int simt_;                                                                                 \
    }))
#define __syncthreads_count(p) SIMT_NOT_SIMULATED("__syncthreads_count")
#define __syncthreads_and(p) SIMT_NOT_SIMULATED("__syncthreads_and")
#define __syncthreads_or(p) SIMT_NOT_SIMULATED("__syncthreads_or")
#define __ldg(p) (*(p))
/* Half precision (__half, <cuda_fp16.h>) is not simulated. */
#define __float2half(x) SIMT_NOT_SIMULATED("__float2half (half precision, cuda_fp16.h)")
#define __half2float(x) SIMT_NOT_SIMULATED("__half2float (half precision, cuda_fp16.h)")

/* ---- the launcher (see simt/kernel.h) ------------------------------------ */
#define SIMT_CAT_(a, b) a##b
#define SIMT_CAT(a, b) SIMT_CAT_(a, b)
#define SIMT_NARG(...)                                                                             \
    SIMT_NARG_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define SIMT_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, N, ...) N
#define SIMT_EACH(f, ...) SIMT_CAT(SIMT_EACH_, SIMT_NARG(__VA_ARGS__))(f, __VA_ARGS__)
#define SIMT_EACH_1(f, x) f(x)
#define SIMT_EACH_2(f, x, ...) f(x) SIMT_EACH_1(f, __VA_ARGS__)
#define SIMT_EACH_3(f, x, ...) f(x) SIMT_EACH_2(f, __VA_ARGS__)
#define SIMT_EACH_4(f, x, ...) f(x) SIMT_EACH_3(f, __VA_ARGS__)
#define SIMT_EACH_5(f, x, ...) f(x) SIMT_EACH_4(f, __VA_ARGS__)
#define SIMT_EACH_6(f, x, ...) f(x) SIMT_EACH_5(f, __VA_ARGS__)
#define SIMT_EACH_7(f, x, ...) f(x) SIMT_EACH_6(f, __VA_ARGS__)
#define SIMT_EACH_8(f, x, ...) f(x) SIMT_EACH_7(f, __VA_ARGS__)
#define SIMT_EACH_9(f, x, ...) f(x) SIMT_EACH_8(f, __VA_ARGS__)
#define SIMT_EACH_10(f, x, ...) f(x) SIMT_EACH_9(f, __VA_ARGS__)
#define SIMT_EACH_11(f, x, ...) f(x) SIMT_EACH_10(f, __VA_ARGS__)
#define SIMT_EACH_12(f, x, ...) f(x) SIMT_EACH_11(f, __VA_ARGS__)
#define SIMT_EACH_13(f, x, ...) f(x) SIMT_EACH_12(f, __VA_ARGS__)
#define SIMT_EACH_14(f, x, ...) f(x) SIMT_EACH_13(f, __VA_ARGS__)
#define SIMT_EACH_15(f, x, ...) f(x) SIMT_EACH_14(f, __VA_ARGS__)
#define SIMT_EACH_16(f, x, ...) f(x) SIMT_EACH_15(f, __VA_ARGS__)
#define SIMT_LIST(f, ...) SIMT_CAT(SIMT_LIST_, SIMT_NARG(__VA_ARGS__))(f, __VA_ARGS__)
#define SIMT_LIST_1(f, x) f(x)
#define SIMT_LIST_2(f, x, ...) f(x), SIMT_LIST_1(f, __VA_ARGS__)
#define SIMT_LIST_3(f, x, ...) f(x), SIMT_LIST_2(f, __VA_ARGS__)
#define SIMT_LIST_4(f, x, ...) f(x), SIMT_LIST_3(f, __VA_ARGS__)
#define SIMT_LIST_5(f, x, ...) f(x), SIMT_LIST_4(f, __VA_ARGS__)
#define SIMT_LIST_6(f, x, ...) f(x), SIMT_LIST_5(f, __VA_ARGS__)
#define SIMT_LIST_7(f, x, ...) f(x), SIMT_LIST_6(f, __VA_ARGS__)
#define SIMT_LIST_8(f, x, ...) f(x), SIMT_LIST_7(f, __VA_ARGS__)
#define SIMT_LIST_9(f, x, ...) f(x), SIMT_LIST_8(f, __VA_ARGS__)
#define SIMT_LIST_10(f, x, ...) f(x), SIMT_LIST_9(f, __VA_ARGS__)
#define SIMT_LIST_11(f, x, ...) f(x), SIMT_LIST_10(f, __VA_ARGS__)
#define SIMT_LIST_12(f, x, ...) f(x), SIMT_LIST_11(f, __VA_ARGS__)
#define SIMT_LIST_13(f, x, ...) f(x), SIMT_LIST_12(f, __VA_ARGS__)
#define SIMT_LIST_14(f, x, ...) f(x), SIMT_LIST_13(f, __VA_ARGS__)
#define SIMT_LIST_15(f, x, ...) f(x), SIMT_LIST_14(f, __VA_ARGS__)
#define SIMT_LIST_16(f, x, ...) f(x), SIMT_LIST_15(f, __VA_ARGS__)
#define SIMT_FIELD(decl) decl;
#define SIMT_ARGREF(name) simt_a->name
#define SIMT_LOCALREF(name) simt_l.name

/* The launcher copies the arguments into a struct (launches are
 * asynchronous); the trampoline hands them back to the kernel.
 * SIMT_LAUNCHER_BOUNDED(max, ...) is the launcher of a kernel declared with
 * __launch_bounds__(max, ...), as mk/cu2c.pl rewrites its SIMT_LAUNCHER: a
 * launch of more than `max` threads per block fails with
 * cudaErrorLaunchOutOfResources, as in CUDA. */
#define SIMT_LAUNCHER(name, params, args) SIMT_LAUNCHER_BOUNDED(0, name, params, args)
#define SIMT_LAUNCHER_BOUNDED(max, name, params, args)                                             \
    struct simt_args_##name {                                                                      \
        SIMT_EACH(SIMT_FIELD, SIMT_UNPAREN params)                                                 \
    };                                                                                             \
    /* not instrumented: it only unpacks the launcher's own copy */                                \
    __attribute__((no_sanitize_address)) static void simt_entry_##name(const void *simt_p)         \
    {                                                                                              \
        const struct simt_args_##name *simt_a = simt_p;                                            \
        name(SIMT_LIST(SIMT_ARGREF, SIMT_UNPAREN args));                                           \
    }                                                                                              \
    /* a block's threads as plain calls, threadIdx counting up (simt_kernel.run_plain) */          \
    static void simt_run_##name(const void *simt_p, unsigned simt_i, unsigned simt_n)              \
    {                                                                                              \
        const struct simt_args_##name simt_l = *(const struct simt_args_##name *)simt_p;           \
        uint3 simt_t = simt_threadIdx;                                                             \
        const dim3 simt_bd = simt_blockDim;                                                        \
        for (; simt_i < simt_n; simt_i++) {                                                        \
            simt_threadIdx = simt_t;                                                               \
            name(SIMT_LIST(SIMT_LOCALREF, SIMT_UNPAREN args));                                     \
            if (__builtin_expect(simt_plain_stop, 0)) return;                                      \
            if (++simt_t.x == simt_bd.x) {                                                         \
                simt_t.x = 0;                                                                      \
                if (++simt_t.y == simt_bd.y) {                                                     \
                    simt_t.y = 0;                                                                  \
                    simt_t.z++;                                                                    \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    /* the name positionally: `.name` would be this macro's parameter */                           \
    static const simt_kernel simt_kernel_##name = {#name,                                          \
                                                   .file = __FILE__,                               \
                                                   .line = __LINE__,                               \
                                                   .entry = simt_entry_##name,                     \
                                                   .function = (const void *)name,                 \
                                                   .max_threads = (unsigned)(max),                 \
                                                   .run_plain = simt_run_##name};                  \
    static __attribute__((unused)) cudaError_t launch_##name(                                      \
        dim3 grid, dim3 block, size_t shmem, cudaStream_t stream, SIMT_UNPAREN params)             \
    {                                                                                              \
        struct simt_args_##name simt_a = {SIMT_UNPAREN args};                                      \
        simtLaunchKernel(&simt_kernel_##name, grid, block, shmem, stream, &simt_a, sizeof simt_a); \
        return cudaGetLastError(); /* as <<<...>>> then cudaGetLastError() */                      \
    }
#define SIMT_LAUNCH_COST(flops, bytes) simtLaunchCost((double)(flops), (double)(bytes))
#define SIMT_LAUNCH_EAGER() simtLaunchEager()

/* clang-format on */

#endif /* SIMT_DEVICE_H */
