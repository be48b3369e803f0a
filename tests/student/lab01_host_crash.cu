/* Student scenario: grid_size dereferences a null pointer (FAIL: the check
 * crashed), while vector_add is still TODO. */
#include "simt/kernel.h"

#include "01_hello_threads/lab01.h"

static int grid_size(int n, int block)
{
    volatile int *p = 0;
    return *p + n / block;
}

static int vector_add_on_device(const float *a, const float *b, float *c, int n, int block)
{
    PL_TODO();
    return 0;
}

const lab01_impl lab01_exercise = {grid_size, vector_add_on_device};
