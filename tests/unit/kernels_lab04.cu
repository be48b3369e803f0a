/*
 * kernels_lab04.cu — Lab 04's kernels as the lab builds them (its
 * reference tiled kernel, solution.cu, and lab04_kernels.cu's byte counts
 * and other two kernels), for test_picture_lab04.c to record: the unit
 * binary links no lab. In call mode (KASAN_CALLS_FILES, mk/build.mk), so
 * that the kernel record sees every access.
 */
#include "../../labs/04_gemm/lab04_kernels.cu"
#include "../../labs/04_gemm/solution.cu"
