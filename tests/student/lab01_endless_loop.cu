/* Student scenario: the kernel never ends (FAIL after the timeout, naming
 * the kernel and where it is). grid_size is right but slow: it sleeps 2 s
 * once, longer than the 1 s timeout the test gives, using no CPU, and must
 * PASS (the watchdog counts CPU time, not the wall clock). */
#include <unistd.h>

#include "simt/kernel.h"

#include "01_hello_threads/lab01.h"

static int grid_size(int n, int block)
{
    static int slept;
    if (!slept++) sleep(2);
    return (n + block - 1) / block;
}

static __global__ void vector_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    while (i < n) c[i] = a[i] + b[i]; /* i never changes */
}
SIMT_LAUNCHER(vector_add, (const float *a, const float *b, float *c, int n), (a, b, c, n))

static int vector_add_on_device(const float *a, const float *b, float *c, int n, int block)
{
    dim3 grid = {(unsigned)grid_size(n, block), 1, 1}, threads = {(unsigned)block, 1, 1};
    return launch_vector_add(grid, threads, 0, 0, a, b, c, n);
}

const lab01_impl lab01_exercise = {grid_size, vector_add_on_device};
