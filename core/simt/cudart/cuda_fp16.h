/*
 * cuda_fp16.h — refused in the simulated build: half precision (__half,
 * __float2half, ...) is not simulated. This header stands before any CUDA
 * installation's (in /usr/local/include, say), which would be found
 * otherwise and fail later with C++ errors.
 */
#error                                                                                             \
    "cuda_fp16.h (half precision: __half, __float2half) is not supported by paralab's simulated GPU (build/sim): use float"
