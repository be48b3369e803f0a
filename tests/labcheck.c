/*
 * labcheck — runs every lab's checks and prints one line per exercise.
 *
 *   labcheck              the student's code (exercise files): make check
 *   labcheck --solution   the reference solutions: make test
 *   labcheck --strict     a TODO counts as a failure (make test)
 *   labcheck LAB...       only these labs (by id or number: 01_hello_threads, 01)
 *
 * Exit status: 1 if any check FAILED (or, with --strict, is TODO); else 0.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "registry.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: labcheck [--solution] [--strict] [--list] [LAB...]\n"
               "  --solution  check the reference solutions instead of your exercise files\n"
               "  --strict    count TODO (not attempted) as a failure\n"
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

int main(int argc, char **argv)
{
    int solution = 0, strict = 0, list = 0;
    static const struct option opts[] = {{"solution", no_argument, 0, 's'},
                                         {"strict", no_argument, 0, 't'},
                                         {"list", no_argument, 0, 'l'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (o) {
        case 's': solution = 1; break;
        case 't': strict = 1; break;
        case 'l': list = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
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
            pl_check_begin(&c, lab->id, lab->exercises[e]);
            lab->check(e, solution, &c);
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
