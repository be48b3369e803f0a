/*
 * labcheck — runs every lab's checks and prints one line per exercise.
 *
 *   labcheck              the student's code (exercise files): make check
 *   labcheck --solution   the reference solutions: make test
 *   labcheck --strict     a TODO counts as a failure (make test)
 *   labcheck --short      leave out the long training runs (the sanitizer
 *                         passes of make test; the plain build runs them)
 *   labcheck LAB...       only these labs (by id or number: 01_hello_threads, 01)
 *   labcheck LAB:EXERCISE only this exercise (06:ring_all_reduce); or
 *                         --exercise NAME, in the labs selected
 *   --junit FILE, --gradescope FILE
 *                         also write the results for an autograder: JUnit
 *                         XML, Gradescope's results.json (the points from
 *                         labs/grading.h)
 *
 * Each exercise is checked in a child process of its own: a crash, an
 * endless loop (--timeout: S seconds of the child's CPU time with no
 * progress, default 60, see paralab/watchdog.h; the report names the kernel
 * still running) or a sticky GPU fault in one exercise cannot touch the
 * others, and
 * the parent never initialises CUDA (so forking is safe on a real GPU too).
 * A first child checks that a device answers at all: a missing GPU or a bad
 * simulated-GPU setting is one clear line and exit 2, not a student's FAIL.
 * With a report asked for, the child's output (stdout and stderr: progress
 * lines, the emulator's reports) comes through a pipe: the parent passes it
 * on to its stderr as it comes and keeps it for the report. The reports are
 * written by the parent, after the last check: a check that crashes or
 * loops is a FAIL in them like any other. Each report is a temporary file
 * beside its name, made before the first check (an unwritable path is
 * refused at once) and renamed over the name at the end.
 *
 * Exit status: 0 when every selected check passed (TODO too, unless
 * --strict); 1 if any check FAILED (or, with --strict, is TODO); 2 for bad
 * usage, no device, or a report that cannot be written; 128 + N when
 * stopped by signal N (SIGINT, SIGTERM, SIGHUP: the reports are still
 * written, the checks not run counted as failures).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <cuda_runtime.h> /* defines PARALAB_SIMULATED_CUDA in the simulated build */
#ifdef PARALAB_SIMULATED_CUDA
#include "simt/simt.h"
#endif

#include "paralab/device.h"

#include "grading.h"
#include "paralab/cli.h"
#include "paralab/watchdog.h"
#include "registry.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: labcheck [--solution] [--strict] [--short] [--timeout S] [--list]\n"
               "                [--exercise NAME] [--junit FILE] [--gradescope FILE]\n"
               "                [LAB | LAB:EXERCISE]...\n"
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
               "  --list      list the labs, their exercises and their points\n"
               "  --exercise  only the exercise NAME (in the labs selected, or all)\n"
               "  --junit     also write the results as JUnit XML to FILE (CI services,\n"
               "              classroom tools): a testsuite per lab, a testcase per\n"
               "              exercise; FAIL is a <failure> (type wrong-result, crash,\n"
               "              timeout, exit), TODO <skipped> (a <failure> with --strict)\n"
               "  --gradescope also write Gradescope's results.json to FILE: each\n"
               "              exercise's score, max_score, status, output, visibility;\n"
               "              the points are labs/grading.h's (10 a lab)\n"
               "  LAB         a lab id or number (01_hello_threads, 01 or 1); default: all\n"
               "  LAB:EXERCISE  one exercise of a lab (06:ring_all_reduce)\n"
               "A report is written whole or not at all (a temporary file beside FILE,\n"
               "renamed at the end); a check that crashes or loops is a failure in it.\n"
               "Exit status: 0 all selected checks passed (TODO too, unless --strict);\n"
               "1 a check failed (or, with --strict, is TODO); 2 bad usage, no device,\n"
               "or a report that cannot be written; 128+N stopped by signal N (the\n"
               "reports are written, the checks not run counted as failures).\n");
}

/* ---- selection ------------------------------------------------------------ */

/* a lab named by id or number */
static int lab_named(const pl_lab *lab, const char *name, size_t len)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf) return 0;
    memcpy(buf, name, len);
    buf[len] = '\0';
    char *end;
    long n = strtol(buf, &end, 10);
    return strcmp(buf, lab->id) == 0 || (!*end && n == atol(lab->id));
}

/* LAB or LAB:EXERCISE: the lab part's length */
static size_t lab_part(const char *arg)
{
    const char *colon = strchr(arg, ':');
    return colon ? (size_t)(colon - arg) : strlen(arg);
}

static int selected(const pl_lab *lab, int e, int argc, char **argv, const char *exercise)
{
    if (exercise && strcmp(exercise, lab->exercises[e]) != 0) return 0;
    if (argc == 0) return 1;
    for (int i = 0; i < argc; i++) {
        size_t n = lab_part(argv[i]);
        if (!lab_named(lab, argv[i], n)) continue;
        if (!argv[i][n] || strcmp(argv[i] + n + 1, lab->exercises[e]) == 0) return 1;
    }
    return 0;
}

static void list_exercises(FILE *f, const pl_lab *lab)
{
    for (int e = 0; lab->exercises[e]; e++) fprintf(f, " %s", lab->exercises[e]);
    fprintf(f, "\n");
}

/* Every argument names a lab (and an exercise of it); exit status 2 if not. */
static int check_selection(int argc, char **argv, const char *exercise)
{
    for (int i = 0; i < argc; i++) {
        size_t n = lab_part(argv[i]);
        const pl_lab *lab = NULL;
        for (int l = 0; pl_labs[l] && !lab; l++)
            if (lab_named(pl_labs[l], argv[i], n)) lab = pl_labs[l];
        if (!lab) {
            fprintf(stderr, "labcheck: no lab '%.*s'; the labs are:", (int)n, argv[i]);
            for (int l = 0; pl_labs[l]; l++) fprintf(stderr, " %s", pl_labs[l]->id);
            fprintf(stderr, "\n");
            return 2;
        }
        if (!argv[i][n]) continue;
        int found = 0;
        for (int e = 0; lab->exercises[e]; e++)
            found |= !strcmp(argv[i] + n + 1, lab->exercises[e]);
        if (!found) {
            fprintf(stderr, "labcheck: lab %s has no exercise '%s'; its exercises are:", lab->id,
                    argv[i] + n + 1);
            list_exercises(stderr, lab);
            return 2;
        }
    }
    int any = 0;
    for (int l = 0; pl_labs[l]; l++)
        for (int e = 0; pl_labs[l]->exercises[e]; e++)
            any |= selected(pl_labs[l], e, argc, argv, exercise);
    if (!any) {
        fprintf(stderr, "labcheck: no exercise '%s' in the labs selected; their exercises are:\n",
                exercise ? exercise : "?");
        for (int l = 0; pl_labs[l]; l++) {
            int lab_on = argc == 0;
            for (int i = 0; i < argc; i++)
                lab_on |= lab_named(pl_labs[l], argv[i], lab_part(argv[i]));
            if (!lab_on) continue;
            fprintf(stderr, "  %s:", pl_labs[l]->id);
            list_exercises(stderr, pl_labs[l]);
        }
        return 2;
    }
    return 0;
}

/* ---- the grading table ---------------------------------------------------- */

enum { NGRADES = sizeof pl_grading / sizeof pl_grading[0] };

static const pl_grade *grade_of(const char *lab, const char *exercise)
{
    for (int g = 0; g < NGRADES; g++)
        if (!strcmp(pl_grading[g].lab, lab) && !strcmp(pl_grading[g].exercise, exercise))
            return &pl_grading[g];
    return NULL;
}

/* labs/grading.h has one line per exercise, and no other: else 2. */
static int check_grading(void)
{
    static const char *const vis[] = {"visible", "hidden", "after_due_date", "after_published"};
    for (int l = 0; pl_labs[l]; l++)
        for (int e = 0; pl_labs[l]->exercises[e]; e++)
            if (!grade_of(pl_labs[l]->id, pl_labs[l]->exercises[e])) {
                fprintf(stderr, "labcheck: labs/grading.h gives no points to %s %s: add its line\n",
                        pl_labs[l]->id, pl_labs[l]->exercises[e]);
                return 2;
            }
    for (int g = 0; g < NGRADES; g++) {
        const pl_grade *p = &pl_grading[g];
        int known = 0, v_ok = 0;
        for (int l = 0; pl_labs[l]; l++)
            for (int e = 0; pl_labs[l]->exercises[e]; e++)
                known |= !strcmp(p->lab, pl_labs[l]->id) &&
                         !strcmp(p->exercise, pl_labs[l]->exercises[e]);
        for (size_t v = 0; v < sizeof vis / sizeof vis[0]; v++)
            v_ok |= !strcmp(p->visibility, vis[v]);
        if (!known || grade_of(p->lab, p->exercise) != p) {
            fprintf(stderr, "labcheck: labs/grading.h: %s %s is %s\n", p->lab, p->exercise,
                    known ? "listed twice" : "no exercise of labs/registry.c");
            return 2;
        }
        if (p->points < 0 || p->points > 1000 || !v_ok) {
            fprintf(stderr,
                    "labcheck: labs/grading.h: %s %s: %d points, visibility '%s' (allowed: 0 to "
                    "1000 points; visible, hidden, after_due_date, after_published)\n",
                    p->lab, p->exercise, p->points, p->visibility);
            return 2;
        }
    }
    return 0;
}

/* ---- the child ------------------------------------------------------------ */

/* In the child: the check under way, where its result goes, and who
 * reports first (the check, or the watchdog when it loops). */
static const pl_check *child_check;
static int child_fd;
static atomic_int child_reported;

/* the child's exit status when the watchdog reported (an endless loop) */
enum { STALL_EXIT = 4 };

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
    _exit(w == (ssize_t)sizeof c ? STALL_EXIT : 3);
}

/* ---- signals: stop, and still write the reports --------------------------- */

static volatile sig_atomic_t stop_signal;
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void on_stop(int sig) { stop_signal = sig; }

static void catch_stops(int on)
{
    /* the parent passes the checks' output on: a reader gone is an error
     * to report (EPIPE), not the end of labcheck and its reports */
    signal(SIGPIPE, on ? SIG_IGN : SIG_DFL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on ? on_stop : SIG_DFL; /* no SA_RESTART: poll and read stop */
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
        sigaction(stop_signals[i], &sa, NULL);
}

/* A device answers (checked in a child: the parent stays CUDA-free). */
static int device_ok(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        catch_stops(0);
        const char *why = pl_device_problem("labcheck");
        if (why) fprintf(stderr, "labcheck: %s\n", why);
        _exit(why ? 3 : 0);
    }
    int status = 0;
    if (pid < 0) return 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* A report: its name, and the temporary file beside it that becomes it. */
typedef struct report {
    const char *what; /* "JUnit report" */
    const char *path;
    char *tmp; /* NULL once renamed or removed */
    int fd;
} report;

static report reports[2];
static pid_t owner;

/* ---- one exercise --------------------------------------------------------- */

/* What the reports need of one exercise. */
typedef struct result {
    pl_check c;
    const char *kind; /* of a FAIL: "wrong-result", "crash", "timeout", "exit", "stopped" */
    double seconds;   /* wall clock */
    char *output;     /* what the child wrote (with a report asked for), or NULL */
    size_t output_len;
    const pl_grade *grade;
} result;

/* the output kept for a report: its first OUTPUT_MAX bytes */
enum { OUTPUT_MAX = 16384 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void keep_output(result *r, const char *buf, size_t n, size_t *dropped)
{
    size_t room = OUTPUT_MAX - r->output_len;
    size_t take = n < room ? n : room;
    memcpy(r->output + r->output_len, buf, take);
    r->output_len += take;
    *dropped += n - take;
}

/* Runs one exercise's check in a child process; the result comes back
 * through a pipe (and, with capture, its output through another). A child
 * that dies or runs out of time is a FAIL. */
static void run_isolated(const pl_lab *lab, int e, int solution, int timeout, int capture,
                         result *r)
{
    pl_check *c = &r->c;
    int fd[2], out[2] = {-1, -1};
    pl_check_begin(c, lab->id, lab->exercises[e]);
    r->kind = "exit";
    if (capture && !(r->output = malloc(OUTPUT_MAX + 128))) {
        pl_check_fail(c, "out of memory for the check's output");
        return;
    }
    if (pipe(fd) != 0) {
        pl_check_fail(c, "cannot create a pipe: %s", strerror(errno));
        return;
    }
    if (capture && pipe(out) != 0) {
        pl_check_fail(c, "cannot create a pipe: %s", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        pl_check_fail(c, "cannot fork: %s", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        if (capture) close(out[0]), close(out[1]);
        return;
    }
    if (pid == 0) {
        catch_stops(0);
        close(fd[0]);
        for (int i = 0; i < 2; i++) /* the reports are labcheck's to write */
            if (reports[i].tmp) close(reports[i].fd);
        if (capture) {
            close(out[0]);
            dup2(out[1], STDOUT_FILENO);
            dup2(out[1], STDERR_FILENO);
            close(out[1]);
            setvbuf(stdout, NULL, _IOLBF, 0); /* a crash loses no whole line */
        }
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
        fflush(stdout);
        fflush(stderr);
        ssize_t w = write(fd[1], c, sizeof *c);
        _exit(w == (ssize_t)sizeof *c ? 0 : 3);
    }
    close(fd[1]);
    if (capture) close(out[1]);
    pl_check got;
    size_t n = 0, dropped = 0;
    int killed = 0;
    struct pollfd pf[2] = {{fd[0], POLLIN, 0}, {capture ? out[0] : -1, POLLIN, 0}};
    while (pf[0].fd >= 0 || pf[1].fd >= 0) {
        if (stop_signal && !killed) {
            kill(pid, SIGKILL);
            killed = 1;
        }
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (pf[0].revents) {
            ssize_t k = n < sizeof got ? read(fd[0], (char *)&got + n, sizeof got - n) : 0;
            if (k > 0)
                n += (size_t)k;
            else if (k == 0 || errno != EINTR) {
                close(fd[0]);
                pf[0].fd = -1;
            }
        }
        if (pf[1].revents) {
            char buf[4096];
            ssize_t k = read(out[0], buf, sizeof buf);
            if (k > 0) {
                ssize_t w = write(STDERR_FILENO, buf, (size_t)k); /* as it comes */
                (void)w;
                keep_output(r, buf, (size_t)k, &dropped);
            } else if (k == 0 || errno != EINTR) {
                close(out[0]);
                pf[1].fd = -1;
            }
        }
    }
    if (pf[0].fd >= 0) close(fd[0]);
    if (pf[1].fd >= 0) close(out[0]);
    if (dropped)
        r->output_len +=
            (size_t)snprintf(r->output + r->output_len, 128,
                             "\n[labcheck: %zu more bytes of output left out]\n", dropped);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (n == sizeof got && (code == 0 || code == STALL_EXIT) && got.outcome >= PL_PASS &&
        got.outcome <= PL_TODO && memchr(got.detail, '\0', sizeof got.detail)) {
        *c = got;
        c->lab = lab->id; /* the child's pointers are the same, but say so */
        c->exercise = lab->exercises[e];
        r->kind = code == STALL_EXIT ? "timeout" : "wrong-result";
    } else if (killed || (stop_signal && WIFSIGNALED(status))) { /* Ctrl-C reaches both */
        pl_check_fail(c, "stopped: labcheck was stopped by signal %d (%s) during this check",
                      (int)stop_signal, strsignal(stop_signal));
        r->kind = "stopped";
    } else if (WIFSIGNALED(status)) {
        pl_check_fail(c, "the check crashed with signal %d (%s): run the lab binary to see where",
                      WTERMSIG(status), strsignal(WTERMSIG(status)));
        r->kind = "crash";
    } else
        pl_check_fail(c, "the check exited with status %d before reporting", code);
}

/* ---- the reports ---------------------------------------------------------- */

/* temporary files left behind (an early exit): removed, by labcheck only */
static void remove_temporaries(void)
{
    if (getpid() != owner) return;
    for (int i = 0; i < 2; i++)
        if (reports[i].tmp) {
            unlink(reports[i].tmp);
            free(reports[i].tmp);
            reports[i].tmp = NULL;
        }
}

/* The temporary file beside path, made now: an unwritable path is refused
 * before any check runs. Returns 0, or prints why not and returns 2. */
static int open_report(report *rp, const char *what, const char *path)
{
    rp->what = what;
    rp->path = path;
    struct stat st;
    if (!*path) {
        fprintf(stderr, "labcheck: the %s needs a file name\n", what);
        return 2;
    }
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr,
                "labcheck: cannot write the %s to '%s': it is a folder (give a file name)\n", what,
                path);
        return 2;
    }
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
    size_t len = strlen(path) + 16;
    if (!(rp->tmp = malloc(len))) {
        fprintf(stderr, "labcheck: out of memory\n");
        return 2;
    }
    snprintf(rp->tmp, len, "%.*s.%s.XXXXXX", (int)dlen, path, path + dlen);
    rp->fd = mkstemp(rp->tmp);
    if (rp->fd < 0) {
        int err = errno;
        free(rp->tmp);
        rp->tmp = NULL;
        fprintf(stderr,
                "labcheck: cannot write the %s to '%s': cannot create a file in %s%.*s%s: %s\n",
                what, path, dlen ? "'" : "the current folder", (int)dlen, path, dlen ? "'" : "",
                strerror(err));
        return 2;
    }
    return 0;
}

/* Writes text to the report's temporary file and renames it over the path.
 * Returns 0, or prints why not and returns 2 (the temporary file removed). */
static int finish_report(report *rp, const char *text, size_t len)
{
    mode_t mask = umask(0);
    umask(mask);
    size_t done = 0;
    int err = 0;
    while (done < len && !err) {
        ssize_t w = write(rp->fd, text + done, len - done);
        if (w > 0)
            done += (size_t)w;
        else if (w < 0 && errno != EINTR)
            err = errno;
    }
    if (!err && fchmod(rp->fd, 0666 & ~mask) != 0) err = errno;
    if (!err && fsync(rp->fd) != 0 && errno != EINVAL) err = errno;
    if (close(rp->fd) != 0 && !err) err = errno;
    if (!err && rename(rp->tmp, rp->path) != 0) err = errno;
    if (err) {
        fprintf(stderr, "labcheck: cannot write the %s to '%s': %s\n", rp->what, rp->path,
                strerror(err));
        unlink(rp->tmp);
    }
    free(rp->tmp);
    rp->tmp = NULL;
    return err ? 2 : 0;
}

/* Text both reports can carry: valid UTF-8, without the control characters
 * XML 1.0 refuses (an escape is shown as ^[, any other as '?'). */
static char *clean_text(const char *s, size_t n)
{
    char *o = malloc(2 * n + 1), *p = o;
    if (!o) return NULL;
    for (size_t i = 0; i < n;) {
        unsigned char b = (unsigned char)s[i];
        if (b < 0x80) {
            if (b == 0x1b)
                *p++ = '^', *p++ = '[';
            else if (b < 0x20 && b != '\t' && b != '\n' && b != '\r')
                *p++ = '?';
            else
                *p++ = (char)b;
            i++;
            continue;
        }
        size_t len = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 && b < 0xe0 ? 2 : 0;
        unsigned long cp = len == 2 ? b & 0x1f : len == 3 ? b & 0x0f : b & 0x07;
        int ok = len && i + len <= n;
        for (size_t k = 1; ok && k < len; k++) {
            unsigned char x = (unsigned char)s[i + k];
            ok = (x & 0xc0) == 0x80;
            cp = cp << 6 | (x & 0x3f);
        }
        ok = ok && !(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
             !(cp >= 0xd800 && cp <= 0xdfff) && cp != 0xfffe && cp != 0xffff;
        if (ok) {
            memcpy(p, s + i, len);
            p += len;
            i += len;
        } else {
            *p++ = '?';
            i++;
        }
    }
    *p = '\0';
    return o;
}

/* a growing string */
typedef struct text {
    char *s;
    size_t len, cap;
    int oom;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->oom) return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->len + n + 1) * 2;
        char *s2 = realloc(t->s, cap);
        if (!s2) {
            t->oom = 1;
            return;
        }
        t->s = s2;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

static void putf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(text *t, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    put(t, buf, n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* XML text (attr = 0) or an attribute's value, escaped (s already clean) */
static void put_xml(text *t, const char *s, int attr)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            put(t, "&amp;", 5);
            break;
        case '<':
            put(t, "&lt;", 4);
            break;
        case '>':
            put(t, "&gt;", 4);
            break;
        case '"':
            put(t, "&quot;", 6);
            break;
        case '\n':
            attr ? put(t, "&#10;", 5) : put(t, s, 1);
            break;
        case '\r':
            put(t, "&#13;", 5);
            break;
        case '\t':
            attr ? put(t, "&#9;", 4) : put(t, s, 1);
            break;
        default:
            put(t, s, 1);
        }
    }
}

static void put_clean_xml(text *t, const char *s, size_t n, int attr)
{
    char *c = clean_text(s, n);
    if (!c) {
        t->oom = 1;
        return;
    }
    put_xml(t, c, attr);
    free(c);
}

static int counts_as_failure(const result *r, int strict)
{
    return r->c.outcome == PL_FAIL || (strict && r->c.outcome == PL_TODO);
}

static int score_of(const result *r) { return r->c.outcome == PL_PASS ? r->grade->points : 0; }

/* "PASS (N values checked)", "FAIL: message", "TODO: message" */
static void put_line(text *t, const result *r)
{
    static const char *word[] = {"PASS", "FAIL", "TODO"};
    if (r->c.outcome == PL_PASS)
        putf(t, "PASS (%ld values checked)", r->c.assertions);
    else {
        putf(t, "%s: ", word[r->c.outcome]);
        put(t, r->c.detail, strlen(r->c.detail));
    }
}

static void iso_time(char *buf, size_t n, time_t when)
{
    struct tm tm;
    gmtime_r(&when, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
}

/* JUnit XML: <testsuites> of one <testsuite> per lab, one <testcase> per
 * exercise (docs/exercises.md, "Autograders"; tests/grade/junit.xsd). */
static int junit_report(report *rp, const result *res, int nres, int solution, int strict,
                        time_t started, double total)
{
    text t = {0};
    int fails = 0, skips = 0;
    for (int i = 0; i < nres; i++) {
        fails += counts_as_failure(&res[i], strict);
        skips += res[i].c.outcome == PL_TODO && !strict;
    }
    char host[256] = "localhost", when[32];
    if (gethostname(host, sizeof host) != 0) strcpy(host, "localhost");
    host[sizeof host - 1] = '\0';
    iso_time(when, sizeof when, started);
    putf(&t, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    putf(&t,
         "<testsuites name=\"labcheck (%s)\" tests=\"%d\" failures=\"%d\" errors=\"0\" "
         "skipped=\"%d\" time=\"%.3f\">\n",
         solution ? "reference solutions" : "your exercises", nres, fails, skips, total);
    for (int i = 0; i < nres;) {
        int j = i, f = 0, s = 0, score = 0, max = 0;
        double secs = 0;
        for (; j < nres && res[j].c.lab == res[i].c.lab; j++) {
            f += counts_as_failure(&res[j], strict);
            s += res[j].c.outcome == PL_TODO && !strict;
            secs += res[j].seconds;
            score += score_of(&res[j]);
            max += res[j].grade->points;
        }
        putf(&t,
             "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" "
             "time=\"%.3f\" timestamp=\"%s\" hostname=\"",
             res[i].c.lab, j - i, f, s, secs, when);
        put_clean_xml(&t, host, strlen(host), 1);
        putf(&t, "\">\n    <properties>\n");
        putf(&t, "      <property name=\"score\" value=\"%d\"/>\n", score);
        putf(&t, "      <property name=\"max_score\" value=\"%d\"/>\n", max);
        putf(&t, "    </properties>\n");
        for (int k = i; k < j; k++) {
            const result *r = &res[k];
            putf(&t, "    <testcase classname=\"%s\" name=\"%s\" time=\"%.3f\">\n", r->c.lab,
                 r->c.exercise, r->seconds);
            if (counts_as_failure(r, strict) || r->c.outcome == PL_TODO) {
                const char *tag = counts_as_failure(r, strict) ? "failure" : "skipped";
                putf(&t, "      <%s type=\"%s\" message=\"", tag,
                     r->c.outcome == PL_TODO ? "todo" : r->kind);
                put_clean_xml(&t, r->c.detail, strlen(r->c.detail), 1);
                putf(&t, "\">");
                put_clean_xml(&t, r->c.detail, strlen(r->c.detail), 0);
                putf(&t, "</%s>\n", tag);
            }
            putf(&t, "      <system-out>");
            text line = {0};
            put_line(&line, r);
            put(&line, "\n", 1);
            if (r->output) put(&line, r->output, r->output_len);
            if (line.oom) t.oom = 1;
            if (line.s) put_clean_xml(&t, line.s, line.len, 0);
            free(line.s);
            putf(&t, "</system-out>\n    </testcase>\n");
        }
        putf(&t, "  </testsuite>\n");
        i = j;
    }
    putf(&t, "</testsuites>\n");
    if (t.oom) {
        fprintf(stderr, "labcheck: out of memory for the %s\n", rp->what);
        free(t.s);
        return 2;
    }
    int rc = finish_report(rp, t.s, t.len);
    free(t.s);
    return rc;
}

/* a JSON string from text that may be anything (made clean) */
static json_t *json_text(const char *s, size_t n)
{
    char *c = clean_text(s, n);
    json_t *j = c ? json_string(c) : NULL;
    free(c);
    return j;
}

/* Gradescope's results.json (docs/exercises.md, "Autograders";
 * tests/grade/gradescope.schema.json). */
static int gradescope_report(report *rp, const result *res, int nres, int solution, int strict,
                             double total)
{
    json_t *root = json_object(), *tests = json_array();
    int ok = root && tests;
    int score = 0, max = 0, pass = 0, fail = 0, todo = 0;
    for (int i = 0; ok && i < nres; i++) {
        const result *r = &res[i];
        score += score_of(r);
        max += r->grade->points;
        pass += r->c.outcome == PL_PASS;
        fail += r->c.outcome == PL_FAIL;
        todo += r->c.outcome == PL_TODO;
        /* "6.1": the lab's number and the exercise's place in it */
        int e = 1;
        for (int k = i; k > 0 && res[k - 1].c.lab == r->c.lab; k--) e++;
        char name[160], number[32];
        snprintf(name, sizeof name, "%s: %s", r->c.lab, r->c.exercise);
        snprintf(number, sizeof number, "%d.%d", atoi(r->c.lab), e);
        text out = {0};
        put_line(&out, r);
        put(&out, "\n", 1);
        if (r->output && r->output_len) {
            put(&out, "\n", 1);
            put(&out, r->output, r->output_len);
        }
        json_t *tst = json_object();
        ok = tst && !out.oom && !json_array_append_new(tests, tst) &&
             !json_object_set_new(tst, "name", json_string(name)) &&
             !json_object_set_new(tst, "number", json_string(number)) &&
             !json_object_set_new(tst, "score", json_integer(score_of(r))) &&
             !json_object_set_new(tst, "max_score", json_integer(r->grade->points)) &&
             !json_object_set_new(tst, "status",
                                  json_string(r->c.outcome == PL_PASS ? "passed" : "failed")) &&
             !json_object_set_new(tst, "output", json_text(out.s, out.len)) &&
             !json_object_set_new(tst, "visibility", json_string(r->grade->visibility)) &&
             !json_object_set_new(tst, "tags", json_pack("[s]", r->c.lab));
        free(out.s);
    }
    char summary[256];
    snprintf(summary, sizeof summary,
             "labcheck (%s): %d passed, %d failed, %d todo%s; %d of %d points\n",
             solution ? "reference solutions" : "your exercises", pass, fail, todo,
             strict && todo ? " (TODO counts as a failure)" : "", score, max);
    ok = ok && !json_object_set_new(root, "score", json_integer(score)) &&
         !json_object_set_new(root, "execution_time", json_integer((json_int_t)(total + 0.999))) &&
         !json_object_set_new(root, "output", json_string(summary)) &&
         !json_object_set_new(root, "stdout_visibility", json_string("hidden")) &&
         !json_object_set_new(root, "tests", tests);
    if (!ok && root && tests && !json_object_get(root, "tests")) json_decref(tests);
    char *s = ok ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    if (!s) {
        fprintf(stderr, "labcheck: out of memory for the %s\n", rp->what);
        return 2;
    }
    size_t len = strlen(s);
    char *withnl = malloc(len + 2);
    int rc = 2;
    if (withnl) {
        memcpy(withnl, s, len);
        withnl[len] = '\n';
        rc = finish_report(rp, withnl, len + 1);
        free(withnl);
    } else
        fprintf(stderr, "labcheck: out of memory for the %s\n", rp->what);
    free(s);
    return rc;
}

/* ---- main ----------------------------------------------------------------- */

int main(int argc, char **argv)
{
    /* fds 0-2 open, so that the result pipes never take their numbers */
    for (int fd = open("/dev/null", O_RDWR); fd >= 0 && fd <= 2; fd = open("/dev/null", O_RDWR))
        ;
    owner = getpid();
    int solution = 0, strict = 0, list = 0, timeout = 60;
    const char *exercise = NULL, *junit = NULL, *gradescope = NULL;
    static const struct option opts[] = {
        {"solution", no_argument, 0, 's'},      {"strict", no_argument, 0, 't'},
        {"timeout", required_argument, 0, 'T'}, {"list", no_argument, 0, 'l'},
        {"short", no_argument, 0, 'S'},         {"exercise", required_argument, 0, 'e'},
        {"junit", required_argument, 0, 'j'},   {"gradescope", required_argument, 0, 'g'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
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
        case 'e':
            exercise = optarg;
            break;
        case 'j':
            junit = optarg;
            break;
        case 'g':
            gradescope = optarg;
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
    if (check_grading() || check_selection(argc, argv, exercise)) return 2;
    if (junit && gradescope && !strcmp(junit, gradescope)) {
        fprintf(stderr, "labcheck: --junit and --gradescope name the same file '%s'\n", junit);
        return 2;
    }
    if (list) {
        for (int l = 0; pl_labs[l]; l++)
            for (int e = 0; pl_labs[l]->exercises[e]; e++)
                if (selected(pl_labs[l], e, argc, argv, exercise))
                    printf("%-20s %-18s %3d points\n", pl_labs[l]->id, pl_labs[l]->exercises[e],
                           grade_of(pl_labs[l]->id, pl_labs[l]->exercises[e])->points);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    atexit(remove_temporaries);
    if (junit && open_report(&reports[0], "JUnit report", junit)) return 2;
    if (gradescope && open_report(&reports[1], "Gradescope report", gradescope)) return 2;
    int capture = junit || gradescope;
    if (capture) catch_stops(1); /* from here, a stop still writes the reports */
    const char *term = getenv("TERM");
    int color =
        isatty(STDOUT_FILENO) && !getenv("NO_COLOR") && term && *term && strcmp(term, "dumb") != 0;
    /* each FAIL line carries the emulator's fault report: no second copy */
    setenv("SIMT_QUIET", "1", 0);
    if (!device_ok()) return 2;
    int nres = 0;
    for (int l = 0; pl_labs[l]; l++)
        for (int e = 0; pl_labs[l]->exercises[e]; e++)
            nres += selected(pl_labs[l], e, argc, argv, exercise);
    result *res = calloc((size_t)nres, sizeof *res);
    if (!res) {
        fprintf(stderr, "labcheck: out of memory\n");
        return 2;
    }
    time_t started = time(NULL);
    double t0 = now();
    int pass = 0, fail = 0, todo = 0, i = 0;
    for (int l = 0; pl_labs[l]; l++) {
        const pl_lab *lab = pl_labs[l];
        for (int e = 0; lab->exercises[e]; e++) {
            if (!selected(lab, e, argc, argv, exercise)) continue;
            result *r = &res[i++];
            r->grade = grade_of(lab->id, lab->exercises[e]);
            if (stop_signal) {
                pl_check_begin(&r->c, lab->id, lab->exercises[e]);
                pl_check_fail(&r->c, "not run: labcheck was stopped by signal %d (%s)",
                              (int)stop_signal, strsignal(stop_signal));
                r->kind = "stopped";
            } else {
                double t = now();
                run_isolated(lab, e, solution, timeout, capture, r);
                r->seconds = now() - t;
            }
            pl_check_print(&r->c, color);
            fflush(stdout);
            pass += r->c.outcome == PL_PASS;
            fail += r->c.outcome == PL_FAIL;
            todo += r->c.outcome == PL_TODO;
        }
    }
    double total = now() - t0;
    printf("labcheck (%s): %d passed, %d failed, %d todo\n",
           solution ? "reference solutions" : "your exercises", pass, fail, todo);
    if (todo && !solution && !fail)
        printf("TODO means not attempted yet: open the exercise file named above and delete its "
               "PL_TODO() line.\n");
    int rc = fail || (strict && todo) ? 1 : 0;
    if (capture) {
        int score = 0, max = 0;
        for (int k = 0; k < nres; k++) score += score_of(&res[k]), max += res[k].grade->points;
        printf("points: %d of %d (labs/grading.h)", score, max);
        if (junit) printf("; JUnit XML in %s", junit);
        if (gradescope) printf("; Gradescope results in %s", gradescope);
        printf("\n");
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "labcheck: cannot write the results: %s\n", strerror(errno));
        rc = rc ? rc : 1;
    }
    if (junit && junit_report(&reports[0], res, nres, solution, strict, started, total)) rc = 2;
    if (gradescope && gradescope_report(&reports[1], res, nres, solution, strict, total)) rc = 2;
    for (int k = 0; k < nres; k++) free(res[k].output);
    free(res);
    if (stop_signal) return 128 + stop_signal;
    return rc;
}
