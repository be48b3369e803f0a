/*
 * clock.c — clock64() and clock() in kernels (simt/device.h).
 *
 * A GPU's clock64() counts the SM's cycles; the emulator has no cycles, so
 * it counts host nanoseconds: strictly increasing on each OS thread (a read
 * that finds the clock unchanged returns one more than the last), so every
 * CUDA thread sees its own reads increase, as on a GPU.
 */
#include <stdint.h>
#include <time.h>

#include "simt/simt.h"

#include "emu.h"

static _Thread_local long long last_clock;

long long simt_clock64(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long t = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    if (t <= last_clock) t = last_clock + 1;
    last_clock = t;
    return t;
}

long simt_clock(void)
{
    if (!simt_emu_current_kernel()) return (long)clock();
    return (long)(uint32_t)simt_clock64();
}
