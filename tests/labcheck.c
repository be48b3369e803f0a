/*
 * labcheck — runs every lab's checks and prints one line per exercise.
 *
 *   labcheck              the student's code (exercise files): make check
 *   labcheck --solution   the reference solutions: make test
 *   labcheck --strict     a TODO counts as a failure (make test)
 *   labcheck --short      leave out the long training runs (the sanitizer
 *                         passes of make test; the plain build runs them)
 *   labcheck LAB...       only these labs (by id or number: 01_hello_threads, 01)
 *
 * Each exercise is checked in a child process of its own: a crash, an
 * endless loop (--timeout: S seconds of the child's CPU time with no
 * progress, default 60, see paralab/watchdog.h; the report names the kernel
 * still running) or a sticky GPU fault in one exercise cannot touch the
 * others, and
 * the parent never initialises CUDA (so forking is safe on a real GPU too).
 * A first child checks that a device answers at all: a missing GPU or a bad
 * simulated-GPU setting is one clear line and exit 2, not a student's FAIL.
 *
 * Exit status: 1 if any check FAILED (or, with --strict, is TODO); 2 for bad
 * usage or no device; else 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime.h> /* defines PARALAB_SIMULATED_CUDA in the simulated build */
#ifdef PARALAB_SIMULATED_CUDA
#include "simt/simt.h"
#endif

#include "paralab/device.h"

#include "paralab/cli.h"
#include "paralab/watchdog.h"
#include "registry.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: labcheck [--solution] [--strict] [--short] [--timeout S] [--list] [LAB...]\n"
               "  --solution  check the reference solutions instead of your exercise files\n"
               "  --strict    count TODO (not attempted) as a failure\n"
               "  --short     leave out the long training runs (the 20 epochs of Labs 07\n"
               "              and 08; Lab 08 trains 10 steps on 2 configurations, Lab 09\n"
               "              runs its lists on 2 (p, m) pairs and trains 10 steps on one,\n"
               "              Lab 10 trains 2 of its factorisations, Lab 11 trains 2\n"
               "              epochs of its 20, to 90 %%; Lab 03 sums 2^16 + 7 floats,\n"
               "              not 2^20 + 7, Lab 04 multiplies no side of 257)\n"
               "  --timeout   CPU seconds a check may run without progress before it is\n"
               "              stopped as an endless loop (default 60)\n"
               "  --list      list the labs and their exercises\n"
               "  LAB         a lab id or number (01_hello_threads, 01 or 1); default: all\n");
}

static int selected(const pl_lab *lab, int argc, char **argv)
{
    if (argc == 0) return 1;
    for (int i = 0; i < argc; i++) {
        char *end;
        long n = strtol(argv[i], &end, 10);
        if (strcmp(argv[i], lab->id) == 0 || (*argv[i] && !*end && n == atol(lab->id))) return 1;
    }
    return 0;
}

/* In the child: the check under way, where its result goes, and who
 * reports first (the check, or the watchdog when it loops). */
static const pl_check *child_check;
static int child_fd;
static atomic_int child_reported;

/* The watchdog saw no progress: report what is running, then go. */
static void on_stall(const char *report, void *user)
{
    (void)user;
    if (atomic_exchange(&child_reported, 1)) return;
    pl_check c;
    pl_check_begin(&c, child_check->lab, child_check->exercise);
    pl_check_fail(&c, "%s: an endless loop? (make check ARGS=\"--timeout S\" allows longer)",
                  report);
    ssize_t w = write(child_fd, &c, sizeof c);
    _exit(w == (ssize_t)sizeof c ? 0 : 3);
}

/* A device answers (checked in a child: the parent stays CUDA-free). */
static int device_ok(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        const char *why = pl_device_problem("labcheck");
        if (why) fprintf(stderr, "labcheck: %s\n", why);
        _exit(why ? 3 : 0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) return 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Runs one exercise's check in a child process; the result comes back
 * through a pipe. A child that dies or runs out of time is a FAIL. */
static void run_isolated(const pl_lab *lab, int e, int solution, int timeout, pl_check *c)
{
    int fd[2];
    pl_check_begin(c, lab->id, lab->exercises[e]);
    if (pipe(fd) != 0) {
        pl_check_fail(c, "cannot create a pipe: %s", strerror(errno));
        return;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        pl_check_fail(c, "cannot fork: %s", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return;
    }
    if (pid == 0) {
        close(fd[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive labcheck */
        child_check = c;
        child_fd = fd[1];
        if (pl_watchdog_start(timeout, on_stall, NULL) != 0) {
            pl_check_fail(c, "cannot start the watchdog thread");
            ssize_t w = write(fd[1], c, sizeof *c);
            _exit(w == (ssize_t)sizeof *c ? 0 : 3);
        }
        lab->check(e, solution, c);
        if (atomic_exchange(&child_reported, 1))
            for (;;) pause(); /* the watchdog reports and ends the process */
        ssize_t w = write(fd[1], c, sizeof *c);
        _exit(w == (ssize_t)sizeof *c ? 0 : 3);
    }
    close(fd[1]);
    pl_check got;
    size_t n = 0;
    ssize_t r;
    while (n < sizeof got && (r = read(fd[0], (char *)&got + n, sizeof got - n)) > 0)
        n += (size_t)r;
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (n == sizeof got && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
        got.outcome >= PL_PASS && got.outcome <= PL_TODO &&
        memchr(got.detail, '\0', sizeof got.detail)) {
        *c = got;
        c->lab = lab->id; /* the child's pointers are the same, but say so */
        c->exercise = lab->exercises[e];
    } else if (WIFSIGNALED(status))
        pl_check_fail(c, "the check crashed with signal %d (%s): run the lab binary to see where",
                      WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        pl_check_fail(c, "the check exited with status %d before reporting",
                      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

int main(int argc, char **argv)
{
    /* fds 0-2 open, so that the result pipes never take their numbers */
    for (int fd = open("/dev/null", O_RDWR); fd >= 0 && fd <= 2; fd = open("/dev/null", O_RDWR))
        ;
    int solution = 0, strict = 0, list = 0, timeout = 60;
    static const struct option opts[] = {{"solution", no_argument, 0, 's'},
                                         {"strict", no_argument, 0, 't'},
                                         {"timeout", required_argument, 0, 'T'},
                                         {"list", no_argument, 0, 'l'},
                                         {"short", no_argument, 0, 'S'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (o) {
        case 's':
            solution = 1;
            break;
        case 't':
            strict = 1;
            break;
        case 'l':
            list = 1;
            break;
        case 'S':
            pl_check_set_short(1);
            break;
        case 'T': {
            long v;
            const char *err = pl_parse_long("--timeout", optarg, 1, 86400, &v);
            if (err) {
                fprintf(stderr, "labcheck: %s (seconds)\n", err);
                return 2;
            }
            timeout = (int)v;
            break;
        }
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    argc -= optind;
    argv += optind;
    for (int i = 0; i < argc; i++) {
        int known = 0;
        for (int l = 0; pl_labs[l]; l++) known |= selected(pl_labs[l], 1, &argv[i]);
        if (!known) {
            fprintf(stderr, "labcheck: no lab '%s'; the labs are:", argv[i]);
            for (int l = 0; pl_labs[l]; l++) fprintf(stderr, " %s", pl_labs[l]->id);
            fprintf(stderr, "\n");
            return 2;
        }
    }
    const char *term = getenv("TERM");
    int color =
        isatty(STDOUT_FILENO) && !getenv("NO_COLOR") && term && *term && strcmp(term, "dumb") != 0;
    /* each FAIL line carries the emulator's fault report: no second copy */
    setenv("SIMT_QUIET", "1", 0);
    if (!list && !device_ok()) return 2;
    int pass = 0, fail = 0, todo = 0;
    for (int l = 0; pl_labs[l]; l++) {
        const pl_lab *lab = pl_labs[l];
        if (!selected(lab, argc, argv)) continue;
        for (int e = 0; lab->exercises[e]; e++) {
            if (list) {
                printf("%s  %s\n", lab->id, lab->exercises[e]);
                continue;
            }
            pl_check c;
            run_isolated(lab, e, solution, timeout, &c);
            pl_check_print(&c, color);
            fflush(stdout);
            pass += c.outcome == PL_PASS;
            fail += c.outcome == PL_FAIL;
            todo += c.outcome == PL_TODO;
        }
    }
    if (list) return fflush(stdout) == 0 ? 0 : 1;
    printf("labcheck (%s): %d passed, %d failed, %d todo\n",
           solution ? "reference solutions" : "your exercises", pass, fail, todo);
    if (todo && !solution && !fail)
        printf("TODO means not attempted yet: open the exercise file named above and delete its "
               "PL_TODO() line.\n");
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "labcheck: cannot write the results: %s\n", strerror(errno));
        return 1;
    }
    return fail || (strict && todo) ? 1 : 0;
}
