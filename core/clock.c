/* clock.c — see paralab/clock.h. */
#include <time.h>

#include "paralab/clock.h"

double pl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
