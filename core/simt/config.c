/*
 * config.c — the simulated runtime's settings from the environment: see
 * config.h, and docs/simulated-gpu.md for every variable.
 *
 * The simulator's own variables are SIMT_*. SIMT_DEVICES, SIMT_GPU and
 * SIMT_MEM_MB were first named PARALAB_SIM_DEVICES, PARALAB_SIM_GPU and
 * PARALAB_SIM_MEM_MB; the old names still work, with a one-line note on
 * stderr (once per process) naming the new one. When both are set the new
 * name wins. A message about a bad value names the variable the user set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

simt_config simt_cfg;
pthread_mutex_t simt_lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;

#define DEFAULT_DEVICES 8

/* The renamed variables: the new name, and the old one that still works. */
static const struct {
    const char *name, *old;
} renamed[] = {
    {"SIMT_DEVICES", "PARALAB_SIM_DEVICES"},
    {"SIMT_GPU", "PARALAB_SIM_GPU"},
    {"SIMT_MEM_MB", "PARALAB_SIM_MEM_MB"},
};
enum { NRENAMED = sizeof renamed / sizeof *renamed };

static const char *old_name(const char *name)
{
    for (int i = 0; i < NRENAMED; i++)
        if (strcmp(renamed[i].name, name) == 0) return renamed[i].old;
    return NULL;
}

static int set(const char *name)
{
    const char *s = name ? getenv(name) : NULL;
    return s && *s;
}

const char *simtEnvSource(const char *name)
{
    if (!name) return NULL;
    if (set(name)) return name;
    const char *old = old_name(name);
    return set(old) ? old : NULL;
}

/* The value of `name` (NULL when not set, or empty), and in *used the
 * variable it came from: name itself, or its old name. Using an old name
 * prints its note, once per process. */
static const char *env(const char *name, const char **used)
{
    static int noted[NRENAMED];
    const char *old = old_name(name);
    if (set(old))
        for (int i = 0; i < NRENAMED; i++)
            if (renamed[i].old == old && !noted[i]) {
                noted[i] = 1;
                if (set(name))
                    fprintf(stderr, "simt: %s is deprecated and ignored, as %s is set: use %s\n",
                            old, name, name);
                else
                    fprintf(stderr, "simt: %s is deprecated: use %s (it means the same)\n", old,
                            name);
            }
    *used = simtEnvSource(name);
    return *used ? getenv(*used) : NULL;
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

cudaError_t simt_config_read(void)
{
    const char *s, *var;
    long v;
    simt_cfg.quiet = (s = getenv("SIMT_QUIET")) && *s && strcmp(s, "0") != 0;
    simt_cfg.ndev = DEFAULT_DEVICES;
    simt_cfg.plain = simt_cfg.schedule = simt_cfg.races = -1;
    if ((s = env("SIMT_DEVICES", &var))) {
        if (parse_int(s, 0, SIMT_MAX_DEVICES, &v) != 0) {
            fprintf(stderr, "simt: %s=%s is not a whole number from 0 to %d\n", var, s,
                    SIMT_MAX_DEVICES);
            return cudaErrorInitializationError;
        }
        simt_cfg.ndev = (int)v;
    }
    simt_cfg.preset = simtPresetByName("H100-SXM");
    if ((s = env("SIMT_GPU", &var))) {
        simt_cfg.preset = simtPresetByName(s);
        if (!simt_cfg.preset) {
            fprintf(stderr, "simt: %s=%s is not a known preset; choose one of:", var, s);
            for (const simt_preset *const *p = simtPresets(); *p; p++)
                fprintf(stderr, " %s", (*p)->name);
            fprintf(stderr, "\n");
            return cudaErrorInitializationError;
        }
    }
    if ((s = getenv("SIMT_GPUS_PER_NODE")) && *s) {
        /* the preset's machine with nodes of another size: a copy of it */
        static simt_preset custom;
        if (parse_int(s, 1, SIMT_MAX_DEVICES, &v) != 0) {
            fprintf(stderr, "simt: SIMT_GPUS_PER_NODE=%s is not a whole number from 1 to %d\n", s,
                    SIMT_MAX_DEVICES);
            return cudaErrorInitializationError;
        }
        custom = *simt_cfg.preset;
        custom.gpus_per_node = (int)v;
        simt_cfg.preset = &custom;
    }
    simt_cfg.capacity = simt_cfg.preset->memory_bytes;
    if ((s = env("SIMT_MEM_MB", &var))) {
        if (parse_int(s, 1, 1L << 24, &v) != 0) {
            fprintf(stderr, "simt: %s=%s is not a whole number of MiB from 1 to %ld\n", var, s,
                    1L << 24);
            return cudaErrorInitializationError;
        }
        simt_cfg.capacity = (size_t)v << 20;
    }
    if ((s = getenv("SIMT_PLAIN")) && *s) {
        if (strcmp(s, "0") && strcmp(s, "1")) {
            fprintf(stderr, "simt: SIMT_PLAIN=%s is not 0 or 1\n", s);
            return cudaErrorInitializationError;
        }
        simt_cfg.plain = *s == '1';
    }
    if ((s = getenv("SIMT_RACES")) && *s) {
        if (strcmp(s, "0") && strcmp(s, "1") && strcmp(s, "2")) {
            fprintf(stderr,
                    "simt: SIMT_RACES=%s is not 0 (no race check), 1 (the first block of each "
                    "kernel's first launch) or 2 (every block)\n",
                    s);
            return cudaErrorInitializationError;
        }
        simt_cfg.races = *s - '0';
    }
    if ((s = getenv("SIMT_LAZY_LEGACY")) && *s) {
        if (strcmp(s, "0") && strcmp(s, "1")) {
            fprintf(stderr, "simt: SIMT_LAZY_LEGACY=%s is not 0 or 1\n", s);
            return cudaErrorInitializationError;
        }
        simt_cfg.lazy_legacy = *s == '1';
    }
    if ((s = getenv("SIMT_EAGER")) && *s) {
        if (strcmp(s, "0") && strcmp(s, "1")) {
            fprintf(stderr, "simt: SIMT_EAGER=%s is not 0 or 1\n", s);
            return cudaErrorInitializationError;
        }
        simt_cfg.no_eager = *s == '0';
    }
    /* As CUDA reads it (CUDA C++ Programming Guide, "CUDA Environment
     * Variables"): 1 makes every launch synchronous, any other value not. */
    simt_cfg.launch_blocking = (s = getenv("CUDA_LAUNCH_BLOCKING")) && strcmp(s, "1") == 0;
    if ((s = getenv("SIMT_SCHEDULE")) && *s) {
        char *end;
        if (strcmp(s, "forward") == 0)
            simt_cfg.schedule = 0;
        else if (strcmp(s, "reverse") == 0)
            simt_cfg.schedule = 1;
        else if (strncmp(s, "random:", 7) == 0 && s[7] &&
                 (simt_cfg.seed = strtoull(s + 7, &end, 10), *end == '\0'))
            simt_cfg.schedule = 2;
        else {
            fprintf(stderr, "simt: SIMT_SCHEDULE=%s is not one of forward, reverse, random:SEED\n",
                    s);
            return cudaErrorInitializationError;
        }
    }
    return cudaSuccess;
}
