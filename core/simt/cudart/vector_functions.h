/*
 * vector_functions.h — make_TYPEn(x, ...) for CUDA's vector types in the
 * simulated build (<cuda_runtime.h> includes it, as CUDA's does): for each
 * type of <vector_types.h>, e.g. make_float4(x, y, z, w), make_int2(x, y).
 */
#ifndef SIMT_VECTOR_FUNCTIONS_H
#define SIMT_VECTOR_FUNCTIONS_H

#include "vector_types.h"

#define SIMT_MAKE1(n, T)                                                                           \
    static inline n##1 make_##n##1(T x)                                                            \
    {                                                                                              \
        n##1 v = {x};                                                                              \
        return v;                                                                                  \
    }
#define SIMT_MAKE2(n, T)                                                                           \
    static inline n##2 make_##n##2(T x, T y)                                                       \
    {                                                                                              \
        n##2 v = {x, y};                                                                           \
        return v;                                                                                  \
    }
#define SIMT_MAKE3(n, T)                                                                           \
    static inline n##3 make_##n##3(T x, T y, T z)                                                  \
    {                                                                                              \
        n##3 v = {x, y, z};                                                                        \
        return v;                                                                                  \
    }
#define SIMT_MAKE4(n, T)                                                                           \
    static inline n##4 make_##n##4(T x, T y, T z, T w)                                             \
    {                                                                                              \
        n##4 v = {x, y, z, w};                                                                     \
        return v;                                                                                  \
    }
#define SIMT_MAKES(n, T) SIMT_MAKE1(n, T) SIMT_MAKE2(n, T) SIMT_MAKE3(n, T) SIMT_MAKE4(n, T)
/* and for the 8-byte types of CUDA 13, make_TYPE4_16a and make_TYPE4_32a
 * (make_TYPE4 returns the deprecated TYPE4: defining it warns nowhere, using
 * its result as a TYPE4 warns where the user names the type, as in CUDA) */
#define SIMT_MAKEA(n, T, a)                                                                        \
    static inline n##4_##a make_##n##4_##a(T x, T y, T z, T w)                                     \
    {                                                                                              \
        n##4_##a v = {x, y, z, w};                                                                 \
        return v;                                                                                  \
    }
#define SIMT_MAKES8(n, T) SIMT_MAKES(n, T) SIMT_MAKEA(n, T, 16a) SIMT_MAKEA(n, T, 32a)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

SIMT_MAKES(char, signed char)
SIMT_MAKES(uchar, unsigned char)
SIMT_MAKES(short, short)
SIMT_MAKES(ushort, unsigned short)
SIMT_MAKES(int, int)
SIMT_MAKES(uint, unsigned int)
SIMT_MAKES8(long, long)
SIMT_MAKES8(ulong, unsigned long)
SIMT_MAKES8(longlong, long long)
SIMT_MAKES8(ulonglong, unsigned long long)
SIMT_MAKES(float, float)
SIMT_MAKES8(double, double)

#pragma GCC diagnostic pop

#undef SIMT_MAKES
#undef SIMT_MAKES8
#undef SIMT_MAKEA
#undef SIMT_MAKE1
#undef SIMT_MAKE2
#undef SIMT_MAKE3
#undef SIMT_MAKE4

#endif /* SIMT_VECTOR_FUNCTIONS_H */
