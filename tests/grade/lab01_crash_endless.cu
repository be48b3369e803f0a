/* Autograder scenario (tests/grade_reports.sh): grid_size writes a line
 * (with an escape sequence and a byte that is not UTF-8, which the reports
 * must carry cleanly) and then crashes; vector_add writes 22000 bytes (more
 * than the 16 KiB a report keeps) and its kernel never ends. Both are FAILs
 * in the JUnit and Gradescope reports, with their messages. */
#include <stdio.h>

#include "simt/kernel.h"

#include "01_hello_threads/lab01.h"

static int grid_size(int n, int block)
{
    fprintf(stderr, "grid_size: \033[31mabout to crash\033[0m \xff\n");
    volatile int *p = 0;
    return *p + n / block;
}

static __global__ void vector_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    while (i < n) c[i] = a[i] + b[i]; /* i never changes */
}
SIMT_LAUNCHER(vector_add, (const float *a, const float *b, float *c, int n), (a, b, c, n))

static int vector_add_on_device(const float *a, const float *b, float *c, int n, int block)
{
    for (int i = 0; i < 1000; i++) fprintf(stderr, "vector_add: line %04d\n", i); /* 22 bytes */
    dim3 grid = {(unsigned)((n + block - 1) / block), 1, 1}, threads = {(unsigned)block, 1, 1};
    return launch_vector_add(grid, threads, 0, 0, a, b, c, n);
}

const lab01_impl lab01_exercise = {grid_size, vector_add_on_device};
