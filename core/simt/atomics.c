/*
 * atomics.c — atomicAdd and the other atomic functions kernels call, each
 * access checked as any other (memcheck.h).
 */
#include <string.h>

#include "memcheck.h"

/* ---- atomics ------------------------------------------------------------ */
/* Blocks of one launch run on one OS thread, but kernels on different
 * streams run concurrently, so atomics are real atomics. */

/* The race check only learns that the word changes: an atomic races with
 * nothing. */
#define CHECK(p, store)                                                                            \
    do {                                                                                           \
        check_access_of((uintptr_t)(p), sizeof *(p), store,                                        \
                        (uintptr_t)__builtin_return_address(0), ~SIMT_COUNT_RACES);                \
        if (__builtin_expect(simt_X && simt_X->track, 0))                                          \
            simt_races_atomic(simt_X, (uintptr_t)(p), sizeof *(p));                                \
    } while (0)
#define ATOMIC_FETCH(name, T, builtin)                                                             \
    T simt_atomic_##name(T *p, T v)                                                                \
    {                                                                                              \
        CHECK(p, 1);                                                                               \
        return builtin(p, v, __ATOMIC_RELAXED);                                                    \
    }
ATOMIC_FETCH(add_i32, int, __atomic_fetch_add)
ATOMIC_FETCH(add_u32, unsigned, __atomic_fetch_add)
ATOMIC_FETCH(add_u64, unsigned long long, __atomic_fetch_add)
ATOMIC_FETCH(sub_i32, int, __atomic_fetch_sub)
ATOMIC_FETCH(sub_u32, unsigned, __atomic_fetch_sub)
ATOMIC_FETCH(exch_i32, int, __atomic_exchange_n)
ATOMIC_FETCH(exch_u32, unsigned, __atomic_exchange_n)
ATOMIC_FETCH(exch_u64, unsigned long long, __atomic_exchange_n)
ATOMIC_FETCH(and_i32, int, __atomic_fetch_and)
ATOMIC_FETCH(and_u32, unsigned, __atomic_fetch_and)
ATOMIC_FETCH(and_u64, unsigned long long, __atomic_fetch_and)
ATOMIC_FETCH(or_i32, int, __atomic_fetch_or)
ATOMIC_FETCH(or_u32, unsigned, __atomic_fetch_or)
ATOMIC_FETCH(or_u64, unsigned long long, __atomic_fetch_or)
ATOMIC_FETCH(xor_i32, int, __atomic_fetch_xor)
ATOMIC_FETCH(xor_u32, unsigned, __atomic_fetch_xor)
ATOMIC_FETCH(xor_u64, unsigned long long, __atomic_fetch_xor)

/* Read-modify-write through compare-and-swap: new = f(old). */
#define ATOMIC_RMW(name, T, expr)                                                                  \
    T simt_atomic_##name(T *p, T v)                                                                \
    {                                                                                              \
        CHECK(p, 1);                                                                               \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED), new_;                                        \
        do {                                                                                       \
            new_ = (expr);                                                                         \
        } while (                                                                                  \
            !__atomic_compare_exchange_n(p, &old, new_, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));   \
        return old;                                                                                \
    }
ATOMIC_RMW(min_i32, int, old < v ? old : v)
ATOMIC_RMW(min_u32, unsigned, old < v ? old : v)
ATOMIC_RMW(min_u64, unsigned long long, old < v ? old : v)
ATOMIC_RMW(min_i64, long long, old < v ? old : v)
ATOMIC_RMW(max_i64, long long, old > v ? old : v)
ATOMIC_RMW(max_i32, int, old > v ? old : v)
ATOMIC_RMW(max_u32, unsigned, old > v ? old : v)
ATOMIC_RMW(max_u64, unsigned long long, old > v ? old : v)
/* CUDA: inc wraps to 0 past v; dec wraps to v at 0 or above v. */
ATOMIC_RMW(inc_u32, unsigned, old >= v ? 0u : old + 1u)
ATOMIC_RMW(dec_u32, unsigned, (old == 0u || old > v) ? v : old - 1u)

#define ATOMIC_FLOAT(name, T, U, expr)                                                             \
    T simt_atomic_##name(T *p, T v)                                                                \
    {                                                                                              \
        CHECK(p, 1);                                                                               \
        U *q = (U *)(void *)p;                                                                     \
        U oldbits = __atomic_load_n(q, __ATOMIC_RELAXED), newbits;                                 \
        T old;                                                                                     \
        do {                                                                                       \
            memcpy(&old, &oldbits, sizeof old);                                                    \
            T new_ = (expr);                                                                       \
            memcpy(&newbits, &new_, sizeof newbits);                                               \
        } while (!__atomic_compare_exchange_n(q, &oldbits, newbits, 0, __ATOMIC_RELAXED,           \
                                              __ATOMIC_RELAXED));                                  \
        return old;                                                                                \
    }
ATOMIC_FLOAT(add_f32, float, uint32_t, old + v)
ATOMIC_FLOAT(add_f64, double, uint64_t, old + v)
ATOMIC_FLOAT(exch_f32, float, uint32_t, v)

#define ATOMIC_CAS(name, T)                                                                        \
    T simt_atomic_##name(T *p, T compare, T v)                                                     \
    {                                                                                              \
        CHECK(p, 1);                                                                               \
        __atomic_compare_exchange_n(p, &compare, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);        \
        return compare;                                                                            \
    }
ATOMIC_CAS(cas_i32, int)
ATOMIC_CAS(cas_u32, unsigned)
ATOMIC_CAS(cas_u64, unsigned long long)
