/*
 * paralab/clock.h — the host's wall clock, for measuring: seconds on
 * CLOCK_MONOTONIC (never steps back, never jumps with the date). The trace's
 * measured times (pl_trace_now) are on the same clock. A modeled time comes
 * from the device seam instead (pl_device_now, paralab/device.h).
 */
#ifndef PARALAB_CLOCK_H
#define PARALAB_CLOCK_H

/* Seconds since an arbitrary moment of this boot (CLOCK_MONOTONIC). */
double pl_now(void);

#endif
