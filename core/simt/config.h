/*
 * config.h — the simulated runtime's settings, read once from the
 * environment at the first runtime call (config.c), and the one lock every
 * part of the runtime takes. The lowest part of the runtime: it sees only
 * simt/simt.h. Not public.
 */
#ifndef SIMT_CONFIG_H
#define SIMT_CONFIG_H

#include <pthread.h>
#include <stddef.h>

#include "simt/simt.h"

typedef struct simt_config {
    int ndev;                  /* SIMT_DEVICES */
    const simt_preset *preset; /* SIMT_GPU (with SIMT_GPUS_PER_NODE: a copy, nodes resized) */
    size_t capacity;           /* SIMT_MEM_MB, else the preset's: bytes per device */
    int quiet;                 /* SIMT_QUIET: fault reports only in simtLastFaultReport */
    int plain;                 /* SIMT_PLAIN: 0 or 1; -1 when not set */
    int races;                 /* SIMT_RACES: 0, 1 or 2; -1 when not set */
    int schedule;              /* SIMT_SCHEDULE: 0 forward, 1 reverse, 2 random; -1 not set */
    unsigned long long seed;   /* of random:SEED */
    int lazy_legacy;           /* SIMT_LAZY_LEGACY: 0 or 1 (simtSetLazyLegacy) */
    int launch_blocking;       /* CUDA_LAUNCH_BLOCKING=1: a launch returns once its kernel ran */
    int no_eager;              /* SIMT_EAGER=0: every op runs on its stream's worker (stream.c) */
} simt_config;

/* Settled by simt_config_read before any other part of the runtime runs. */
extern simt_config simt_cfg;

/* Guards the queues, streams, events and clocks (stream.c), each device's
 * memory bookkeeping and the pinned blocks (alloc.c). */
extern pthread_mutex_t simt_lock;

/* Reads the environment into simt_cfg. A bad value: its message on stderr
 * (naming the variable as the user set it) and cudaErrorInitializationError.
 * An old PARALAB_SIM_* name: a note on stderr saying which name to use. */
cudaError_t simt_config_read(void);

#endif
