/*
 * labcheck — runs every lab's checks and prints one line per exercise.
 *
 *   labcheck              the student's code (exercise files): make check
 *   labcheck --solution   the reference solutions: make test
 *   labcheck --strict     a TODO counts as a failure (make test)
 *   labcheck LAB...       only these labs (by id or number: 01_hello_threads, 01)
 *
 * Each exercise is checked in a child process of its own: a crash, an
 * endless loop (--timeout, default 300 s) or a sticky GPU fault in one
 * exercise cannot touch the others, and the parent never initialises CUDA
 * (so forking is safe on a real GPU too).
 *
 * Exit status: 1 if any check FAILED (or, with --strict, is TODO); else 0.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paralab/cli.h"
#include "registry.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: labcheck [--solution] [--strict] [--timeout S] [--list] [LAB...]\n"
               "  --solution  check the reference solutions instead of your exercise files\n"
               "  --strict    count TODO (not attempted) as a failure\n"
               "  --timeout   seconds one exercise's check may take (default 300)\n"
               "  --list      list the labs and their exercises\n"
               "  LAB         a lab id or number (01_hello_threads or 01); default: all\n");
}

static int selected(const pl_lab *lab, int argc, char **argv)
{
    if (argc == 0) return 1;
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], lab->id) == 0 ||
            (strlen(argv[i]) == 2 && strncmp(argv[i], lab->id, 2) == 0))
            return 1;
    return 0;
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
        alarm((unsigned)timeout);
        lab->check(e, solution, c);
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
    if (n == sizeof got && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        *c = got;
        c->lab = lab->id; /* the child's pointers are the same, but say so */
        c->exercise = lab->exercises[e];
    } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        pl_check_fail(c, "still running after %d s (an endless loop? raise --timeout)", timeout);
    else if (WIFSIGNALED(status))
        pl_check_fail(c, "the check crashed with signal %d (%s): run the lab binary to see where",
                      WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        pl_check_fail(c, "the check exited with status %d before reporting",
                      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

int main(int argc, char **argv)
{
    int solution = 0, strict = 0, list = 0, timeout = 300;
    static const struct option opts[] = {
        {"solution", no_argument, 0, 's'},      {"strict", no_argument, 0, 't'},
        {"timeout", required_argument, 0, 'T'}, {"list", no_argument, 0, 'l'},
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
    int color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
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
    if (list) return 0;
    printf("labcheck (%s): %d passed, %d failed, %d todo\n",
           solution ? "reference solutions" : "your exercises", pass, fail, todo);
    if (todo && !solution && !fail)
        printf("TODO means not attempted yet: open the exercise file named above and delete its "
               "PL_TODO() line.\n");
    return fail || (strict && todo) ? 1 : 0;
}
