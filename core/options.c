/* options.c — see paralab/options.h. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "paralab/cli.h"
#include "paralab/device.h"
#include "paralab/dist.h"
#include "paralab/options.h"

/* Above every key a lab may use (256..65535, paralab/options.h). */
enum {
    OPT_NO_VIZ = 0x10000,
    OPT_STEP,
    OPT_PLAY,
    OPT_SPEED,
    OPT_TRACE,
    OPT_SEED,
    OPT_HW,
    OPT_COMM,
    OPT_COMM_TIMEOUT,
    OPT_STALL_TIMEOUT,
    OPT_RANKS_PER_PROCESS,
};

void pl_options_defaults(pl_options *o, int default_devices)
{
    memset(o, 0, sizeof *o);
    o->devices = default_devices;
    o->viz = 1;
    o->mode = PL_MODE_PLAY;
    o->speed = 1.0;
    o->comm = PL_COMM_AUTO;
    o->comm_timeout = 10.0;
    o->stall_timeout = 60.0;
}

/* text's words into out, as a line that starts at column col and lines
 * of `indent` blanks after it, none past column 80 where a word fits. A
 * line does not break inside "default 64", "f = 4h" or before a word of 3
 * characters or less ("64)"): such a group moves to the next line whole.
 * Returns out. */
static char *wrapped(const char *text, size_t col, size_t indent, char *out, size_t cap)
{
    char words[1024], *save = NULL, *w[256];
    int nw = 0;
    snprintf(words, sizeof words, "%s", text);
    for (char *t = strtok_r(words, " ", &save); t && nw < 256; t = strtok_r(NULL, " ", &save))
        w[nw++] = t;
    size_t h = 0;
    out[0] = '\0';
    for (int i = 0; i < nw && h < cap;) {
        int j = i + 1; /* the group: w[i] .. w[j - 1] */
        while (j < nw && (w[j][0] == '=' || !strcmp(w[j - 1], "=") || strlen(w[j]) <= 3 ||
                          !strcmp(w[j - 1], "default")))
            j++;
        size_t len = (size_t)(j - i - 1);
        for (int k = i; k < j; k++) len += strlen(w[k]);
        int first = i == 0, wrap = !first && col + 1 + len > 80;
        h += (size_t)snprintf(out + h, cap - h, "%s%*s", wrap ? "\n" : "",
                              wrap    ? (int)indent
                              : first ? 0
                                      : 1,
                              "");
        for (int k = i; k < j && h < cap; k++)
            h += (size_t)snprintf(out + h, cap - h, "%s%s", k > i ? " " : "", w[k]);
        col = (wrap ? indent : first ? col : col + 1) + len;
        i = j;
    }
    return out;
}

static void usage(char *msg, size_t cap, const char *prog, const char *summary,
                  const pl_lab_option *extra)
{
    /* the presets under the option's help, the summary: wrapped at 80 columns */
    char presets[256], hw[400] = "", about[1200];
    if (pl_device_hw_presets(presets, sizeof presets)) {
        hw[0] = ':';
        hw[1] = '\n';
        memset(hw + 2, ' ', 24);
        wrapped(presets, 24, 24, hw + 26, sizeof hw - 26);
    }
    wrapped(summary, 0, 0, about, sizeof about);
    size_t n = (size_t)snprintf(
        msg, cap,
        "usage: %s [options]\n%s\n\n"
        "  -n, --devices N       ranks, one device each (1..64; the simulator has\n"
        "                        8 devices unless SIMT_DEVICES says more)\n"
        "      --no-viz          plain text, no terminal UI\n"
        "      --step, --play    step through the narration, or play it\n"
        "      --speed X         play speed, 0.1..100 (default 1: a step stays\n"
        "                        2 s + 0.3 s a word of its narration; X divides it)\n"
        "      --trace FILE      write a Chrome trace (open in Perfetto)\n"
        "      --seed S          random seed (default 0)\n"
        "      --hw PRESET       hardware preset for the modeled clock%s\n"
        "      --comm ENGINE     local or nccl (default: nccl when every rank\n"
        "                        has its own real GPU, else local)\n"
        "      --comm-timeout S  seconds a rank may wait in a collective "
        "(default 10;\n"
        "                        a paused step does not count)\n"
        "      --stall-timeout S CPU seconds the lab may run without progress before\n"
        "                        it is stopped as an endless loop (default 60)\n"
        "%s",
        prog, about, hw,
        pl_dist_built() ? "      --ranks-per-process T  under mpirun: rank threads per process\n"
                          "                        (default 1); the world is processes x T\n"
                        : "");
    for (const pl_lab_option *e = extra; e && e->name && n < cap; e++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", e->name, e->has_arg ? " " : "",
                 e->has_arg ? e->arg_name : "");
        char help[1200];
        wrapped(e->help, 24, 24, help, sizeof help);
        if (strlen(left) < 18)
            n += (size_t)snprintf(msg + n, cap - n, "      %-18s%s\n", left, help);
        else /* too long for the column: the help on a line of its own */
            n += (size_t)snprintf(msg + n, cap - n, "      %s\n%24s%s\n", left, "", help);
    }
    if (n < cap) snprintf(msg + n, cap - n, "  -h, --help            this help\n");
}

static int parse_double(const char *opt, const char *text, double lo, double hi, double *out,
                        char *msg, size_t cap)
{
    const char *e = pl_parse_double(opt, text, lo, hi, 0, out);
    if (e) snprintf(msg, cap, "%s", e);
    return e ? -1 : 0;
}

pl_options_status pl_options_parse(pl_options *o, int argc, char **argv, const char *prog,
                                   const char *summary, const pl_lab_option *extra,
                                   pl_lab_option_handler handler, void *ctx, char *msg, size_t cap)
{
    struct option opts[64];
    static const struct option common[] = {
        {"devices", required_argument, 0, 'n'},
        {"no-viz", no_argument, 0, OPT_NO_VIZ},
        {"step", no_argument, 0, OPT_STEP},
        {"play", no_argument, 0, OPT_PLAY},
        {"speed", required_argument, 0, OPT_SPEED},
        {"trace", required_argument, 0, OPT_TRACE},
        {"seed", required_argument, 0, OPT_SEED},
        {"hw", required_argument, 0, OPT_HW},
        {"comm", required_argument, 0, OPT_COMM},
        {"comm-timeout", required_argument, 0, OPT_COMM_TIMEOUT},
        {"stall-timeout", required_argument, 0, OPT_STALL_TIMEOUT},
        {"ranks-per-process", required_argument, 0, OPT_RANKS_PER_PROCESS},
        {"help", no_argument, 0, 'h'},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof common / sizeof *common; i++) opts[n++] = common[i];
    for (const pl_lab_option *e = extra; e && e->name && n < 63; e++)
        opts[n++] =
            (struct option){e->name, e->has_arg ? required_argument : no_argument, 0, e->key};
    opts[n] = (struct option){0, 0, 0, 0};
    msg[0] = '\0';
    optind = 0; /* a fresh scan, also when called again */
    opterr = 0;
    int c, mode_seen = 0, devices_seen = 0;
    while ((c = getopt_long(argc, argv, ":n:h", opts, NULL)) != -1) {
        long v;
        const char *err;
        /* A value given as the next word that is itself an option (--trace
         * --no-viz): the value was forgotten, and taking the option as a
         * file name or a number would lose it (and, for --trace, write a
         * file named --no-viz). A value that starts with -- is still
         * possible as --trace=--name. */
        if (optarg && optind >= 2 && optarg == argv[optind - 1] && !strncmp(optarg, "--", 2) &&
            optarg[2]) {
            const char *opt = argv[optind - 2];
            int k = snprintf(msg, cap,
                             "option '%s' needs a value, but the next word is the option '%s' "
                             "(see --help",
                             opt, optarg);
            if (k > 0 && (size_t)k < cap)
                snprintf(msg + k, cap - (size_t)k, "%s%s%s)",
                         strncmp(opt, "--", 2) ? "" : "; for a value that starts with --, write ",
                         strncmp(opt, "--", 2) ? "" : opt, strncmp(opt, "--", 2) ? "" : "=VALUE");
            return PL_OPTIONS_ERROR;
        }
        switch (c) {
        case 'n':
            if ((err = pl_parse_long("--devices", optarg, 1, 64, &v))) {
                snprintf(msg, cap, "%s", err);
                return PL_OPTIONS_ERROR;
            }
            o->devices = (int)v;
            devices_seen = 1;
            break;
        case OPT_RANKS_PER_PROCESS:
            if ((err = pl_parse_long("--ranks-per-process", optarg, 1, 64, &v))) {
                snprintf(msg, cap, "%s", err);
                return PL_OPTIONS_ERROR;
            }
            o->ranks_per_process = (int)v;
            break;
        case OPT_NO_VIZ:
            o->viz = 0;
            break;
        case OPT_STEP:
        case OPT_PLAY:
            if (mode_seen && o->mode != (c == OPT_STEP ? PL_MODE_STEP : PL_MODE_PLAY)) {
                snprintf(msg, cap, "--step and --play exclude each other: choose one");
                return PL_OPTIONS_ERROR;
            }
            o->mode = c == OPT_STEP ? PL_MODE_STEP : PL_MODE_PLAY;
            mode_seen = 1;
            break;
        case OPT_SPEED:
            if (parse_double("--speed", optarg, 0.1, 100, &o->speed, msg, cap))
                return PL_OPTIONS_ERROR;
            break;
        case OPT_TRACE:
            if (!*optarg) {
                snprintf(msg, cap, "--trace needs a file name (FILE.json)");
                return PL_OPTIONS_ERROR;
            }
            o->trace = optarg;
            break;
        case OPT_SEED: {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(optarg, &end, 10);
            /* strtoull skips blanks and accepts a sign: refuse both */
            if (errno || end == optarg || *end || *optarg < '0' || *optarg > '9') {
                snprintf(msg, cap, "--seed '%s' is not a whole number from 0 to %llu", optarg,
                         (unsigned long long)-1);
                return PL_OPTIONS_ERROR;
            }
            o->seed = s;
            break;
        }
        case OPT_HW:
            o->hw = optarg;
            break;
        case OPT_COMM:
            if (!strcmp(optarg, "local"))
                o->comm = PL_COMM_LOCAL;
            else if (!strcmp(optarg, "nccl"))
                o->comm = PL_COMM_NCCL;
            else {
                snprintf(msg, cap, "--comm '%s' is not an engine: choose local or nccl", optarg);
                return PL_OPTIONS_ERROR;
            }
            break;
        case OPT_COMM_TIMEOUT:
            if (parse_double("--comm-timeout", optarg, 0.1, 3600, &o->comm_timeout, msg, cap))
                return PL_OPTIONS_ERROR;
            break;
        case OPT_STALL_TIMEOUT:
            if (parse_double("--stall-timeout", optarg, 0.1, 86400, &o->stall_timeout, msg, cap))
                return PL_OPTIONS_ERROR;
            break;
        case 'h':
            usage(msg, cap, prog, summary, extra);
            return PL_OPTIONS_HELP;
        case ':': /* name it as it was typed: --devices, not -n */
            if (optopt && optopt < 128 && strncmp(argv[optind - 1], "--", 2))
                snprintf(msg, cap, "option '-%c' needs a value (see --help)", optopt);
            else
                snprintf(msg, cap, "option '%s' needs a value (see --help)", argv[optind - 1]);
            return PL_OPTIONS_ERROR;
        case '?':
            if (optopt && optopt < 128) /* a short option: argv holds a cluster like -xn */
                snprintf(msg, cap, "unknown option '-%c' (see --help)", optopt);
            else if (strchr(argv[optind - 1], '='))
                snprintf(msg, cap, "option '%s' is unknown or takes no value (see --help)",
                         argv[optind - 1]);
            else
                snprintf(msg, cap, "unknown option '%s' (see --help)", argv[optind - 1]);
            return PL_OPTIONS_ERROR;
        default:
            if (!handler || handler(c, optarg, ctx, msg, cap) != 0) {
                if (!msg[0]) snprintf(msg, cap, "option %s was refused", argv[optind - 1]);
                return PL_OPTIONS_ERROR;
            }
        }
    }
    if (optind < argc) {
        snprintf(msg, cap, "unexpected argument '%s' (see --help)", argv[optind]);
        return PL_OPTIONS_ERROR;
    }
    /* under mpirun (paralab/dist.h): the world is processes x ranks per process */
    if (pl_dist_init(msg, cap)) return PL_OPTIONS_ERROR;
    if (pl_dist_active()) {
        int t = o->ranks_per_process ? o->ranks_per_process : 1, p = pl_dist_procs();
        if (!devices_seen && p * t <= 64)
            o->devices = p * t;
        else if (o->devices != p * t) {
            snprintf(msg, cap,
                     "--devices %d: under mpirun the world is %d processes x %d rank%s per "
                     "process (--ranks-per-process %d) = %d ranks: give --devices %d or none",
                     o->devices, p, t, t == 1 ? "" : "s", t, p * t, p * t);
            return PL_OPTIONS_ERROR;
        }
    } else if (o->ranks_per_process) {
        snprintf(msg, cap,
                 "--ranks-per-process %d: only under mpirun%s (a world of one process has "
                 "--devices N ranks)",
                 o->ranks_per_process, pl_dist_built() ? "" : " with the MPI build (make mpi)");
        return PL_OPTIONS_ERROR;
    }
    return PL_OPTIONS_OK;
}

int pl_options_apply(const pl_options *o, const char *prog, char *msg, size_t cap)
{
    (void)prog;
    return pl_device_apply_options(o, msg, cap); /* --hw, --comm nccl, --devices: the seam's */
}
