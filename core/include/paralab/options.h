/*
 * paralab/options.h — the options every lab takes, parsed with getopt_long,
 * plus the lab's own.
 *
 *   -n, --devices N     ranks, one device each (1..64 and at most the
 *                       devices there are)
 *       --no-viz        plain text, no terminal UI
 *       --step | --play step through the narration, or play it
 *       --speed X       play speed, 0.1..100 (at 1 a step stays for its reading
 *                       time, pl_step_read_seconds; X divides it)
 *       --trace FILE    write a Chrome trace (Perfetto) of the run
 *       --seed S        random seed, 0..2^64-1
 *       --hw PRESET     hardware preset of the simulated GPU's modeled clock
 *       --comm ENGINE   local | nccl (default auto: NCCL when every rank has
 *                       its own real GPU; nccl in build/sim is refused with
 *                       a message)
 *       --comm-timeout S  seconds a rank may wait in a collective (0.1..3600)
 *       --stall-timeout S CPU seconds the lab may run with no progress before
 *                       it is stopped as an endless loop (0.1..86400;
 *                       paralab/watchdog.h)
 *
 * Library code: nothing here prints or exits; the caller prints the message
 * pl_options_parse returns and exits with the status it says (0 after
 * --help, 2 for a bad option).
 */
#ifndef PARALAB_OPTIONS_H
#define PARALAB_OPTIONS_H

#include <stddef.h>

#include "paralab/comm.h" /* pl_comm_engine_choice */

typedef enum { PL_MODE_PLAY, PL_MODE_STEP } pl_mode;

typedef struct pl_options {
    int devices; /* default: the lab's */
    int viz;     /* 0 with --no-viz */
    pl_mode mode;
    double speed;
    const char *trace; /* NULL: no trace file */
    unsigned long long seed;
    const char *hw; /* NULL: the default preset */
    /* 0: the preset's; else the simulated cluster's nodes hold this many
     * devices (pl_device_apply_options; no option sets it: paralab-bench
     * hybrid does) */
    int gpus_per_node;
    pl_comm_engine_choice comm;
    double comm_timeout;  /* seconds */
    double stall_timeout; /* CPU seconds without progress (paralab/watchdog.h) */
    /* --ranks-per-process T: under mpirun (the MPI build, paralab/dist.h),
     * the rank threads of each process (0: not given, 1); --devices then
     * defaults to, and must equal, processes x T */
    int ranks_per_process;
} pl_options;

/* A lab's own option: --name [ARG]. handler(key, arg, ctx, err, cap)
 * returns 0, or non-zero with a message in err. */
typedef struct pl_lab_option {
    const char *name;
    int has_arg;          /* 0 or 1 */
    const char *arg_name; /* "N", for --help */
    const char *help;
    int key; /* passed to the handler; 256..65535 */
} pl_lab_option;
typedef int (*pl_lab_option_handler)(int key, const char *arg, void *ctx, char *err, size_t cap);

typedef enum { PL_OPTIONS_OK, PL_OPTIONS_HELP, PL_OPTIONS_ERROR } pl_options_status;

/* Sets the defaults (devices = default_devices, viz on, play, speed 1, seed
 * 0, comm auto, timeout 10 s, stall timeout 60 CPU s). */
void pl_options_defaults(pl_options *o, int default_devices);

/* Parses argv. PL_OPTIONS_HELP: msg holds the usage (print it, exit 0).
 * PL_OPTIONS_ERROR: msg names the bad value and what is allowed (print it,
 * exit 2). extra may be NULL. Does not touch CUDA: call
 * pl_options_apply next. */
pl_options_status pl_options_parse(pl_options *o, int argc, char **argv, const char *prog,
                                   const char *summary, const pl_lab_option *extra,
                                   pl_lab_option_handler handler, void *ctx, char *msg, size_t cap);

/* Applies what must happen before the first CUDA call (the simulated GPU's
 * preset) and checks what needs the devices (--devices against the device
 * count, --comm nccl). 0, or non-zero with a message (exit 2). */
int pl_options_apply(const pl_options *o, const char *prog, char *msg, size_t cap);

#endif
