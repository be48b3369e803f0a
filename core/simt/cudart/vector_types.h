/*
 * vector_types.h — CUDA's built-in vector types for the simulated build
 * (<cuda_runtime.h> includes it, as CUDA's does).
 *
 * TYPE1 to TYPE4 for char, uchar, short, ushort, int, uint, long, ulong,
 * longlong, ulonglong, float and double: structs of members x, y, z, w,
 * aligned as CUDA aligns them (a 2- or 4-vector to its whole size up to
 * 16 bytes, so that a float4 or int4 load is one 16-byte access on a GPU;
 * a 1- or 3-vector to its element). As in CUDA 13, the 4-vectors of 8-byte
 * elements (long4, ulong4, longlong4, ulonglong4, double4) are deprecated
 * for TYPE4_16a and TYPE4_32a (aligned 16 and 32), which are here too: a
 * use of the old name is a warning, an error under -Werror, in both builds.
 * Their make_TYPEn constructors are in <vector_functions.h>. No arithmetic
 * operators (CUDA has none either).
 */
#ifndef SIMT_VECTOR_TYPES_H
#define SIMT_VECTOR_TYPES_H

#define SIMT_VEC1(n, T, a)                                                                         \
    typedef struct __attribute__((aligned(a))) n##1 { T x; }                                       \
    n##1;
#define SIMT_VEC2(n, T, a)                                                                         \
    typedef struct __attribute__((aligned(a))) n##2 { T x, y; }                                    \
    n##2;
#define SIMT_VEC3(n, T, a)                                                                         \
    typedef struct __attribute__((aligned(a))) n##3 { T x, y, z; }                                 \
    n##3;
#define SIMT_VEC4(n, T, a)                                                                         \
    typedef struct __attribute__((aligned(a))) n##4 { T x, y, z, w; }                              \
    n##4;
#define SIMT_VECS(n, T, a1, a2, a3, a4)                                                            \
    SIMT_VEC1(n, T, a1) SIMT_VEC2(n, T, a2) SIMT_VEC3(n, T, a3) SIMT_VEC4(n, T, a4)
/* CUDA 13: TYPE4 of an 8-byte type deprecated, TYPE4_16a and TYPE4_32a instead */
// clang-format off
#define SIMT_VECS8(n, T)                                                                           \
    SIMT_VEC1(n, T, 8) SIMT_VEC2(n, T, 16) SIMT_VEC3(n, T, 8)                                      \
    SIMT_VEC4A(n, T, 4, 16) SIMT_VEC4A(n, T, 4_16a, 16) SIMT_VEC4A(n, T, 4_32a, 32)
// clang-format on
#define SIMT_VEC4A(n, T, suffix, a)                                                                \
    typedef struct __attribute__((aligned(a))) n##suffix {                                         \
        T x, y, z, w;                                                                              \
    } n##suffix SIMT_DEPRECATED_##suffix(n);
#define SIMT_DEPRECATED_4(n) __attribute__((deprecated("use " #n "4_16a or " #n "4_32a")))
#define SIMT_DEPRECATED_4_16a(n)
#define SIMT_DEPRECATED_4_32a(n)

SIMT_VECS(char, signed char, 1, 2, 1, 4)
SIMT_VECS(uchar, unsigned char, 1, 2, 1, 4)
SIMT_VECS(short, short, 2, 4, 2, 8)
SIMT_VECS(ushort, unsigned short, 2, 4, 2, 8)
SIMT_VECS(int, int, 4, 8, 4, 16)
SIMT_VECS(uint, unsigned int, 4, 8, 4, 16)
SIMT_VECS8(long, long)
SIMT_VECS8(ulong, unsigned long)
SIMT_VECS8(longlong, long long)
SIMT_VECS8(ulonglong, unsigned long long)
SIMT_VECS(float, float, 4, 8, 4, 16)
SIMT_VECS8(double, double)

#undef SIMT_VECS
#undef SIMT_VECS8
#undef SIMT_VEC4A
#undef SIMT_DEPRECATED_4
#undef SIMT_DEPRECATED_4_16a
#undef SIMT_DEPRECATED_4_32a
#undef SIMT_VEC1
#undef SIMT_VEC2
#undef SIMT_VEC3
#undef SIMT_VEC4

#endif /* SIMT_VECTOR_TYPES_H */
