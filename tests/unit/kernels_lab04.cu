/*
 * kernels_lab04.cu — Lab 04's kernels as the lab builds them (its
 * reference tiled kernel, solution.cu, and lab04_kernels.cu's byte counts
 * and other three kernels), for test_picture_lab04.c to record: the unit
 * binary links no lab. Compiled as the lab's own files are (inline
 * checks: the record sees their accesses through the shadow it poisons,
 * paralab/device.h).
 */
#include "../../labs/04_gemm/lab04_kernels.cu"
#include "../../labs/04_gemm/solution.cu"
