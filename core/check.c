/* check.c — see paralab/check.h. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "paralab/check.h"
#include "paralab/exercise.h"
#include "paralab/watchdog.h"

void pl_check_begin(pl_check *c, const char *lab, const char *exercise)
{
    memset(c, 0, sizeof *c);
    c->lab = lab;
    c->exercise = exercise;
    c->outcome = PL_PASS;
}

static void vfail(pl_check *c, const char *fmt, va_list ap)
{
    if (c->outcome != PL_PASS) return;
    c->outcome = PL_FAIL;
    vsnprintf(c->detail, sizeof c->detail, fmt, ap);
}

int pl_check_fail(pl_check *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(c, fmt, ap);
    va_end(ap);
    return 0;
}

void pl_check_todo(pl_check *c)
{
    if (c->outcome == PL_FAIL) return;
    c->outcome = PL_TODO;
    snprintf(c->detail, sizeof c->detail, "not attempted yet: PL_TODO() at %s", pl_todo_location());
}

int pl_check_ok(const pl_check *c) { return c->outcome == PL_PASS; }

int pl_check_that(pl_check *c, int ok, const char *fmt, ...)
{
    pl_watchdog_progress(); /* a check that compares values moves on */
    c->assertions++;
    if (!ok) {
        va_list ap;
        va_start(ap, fmt);
        vfail(c, fmt, ap);
        va_end(ap);
    }
    return ok;
}

int pl_check_floats(pl_check *c, const char *what, const float *got, const float *want, size_t n,
                    double rtol, double atol)
{
    pl_watchdog_progress();
    for (size_t i = 0; i < n; i++) {
        c->assertions++;
        double g = got[i], w = want[i];
        if (!(fabs(g - w) <= atol + rtol * fabs(w))) {
            if (isnan(g) && !isnan(w)) /* checks fill outputs with NaN before the run */
                pl_check_fail(c, "%s[%zu] = NaN but expected %.9g: this element was never written",
                              what, i, w);
            else
                pl_check_fail(c,
                              "%s[%zu] = %.9g but expected %.9g (tolerance %.3g + %.3g*|expected|)",
                              what, i, g, w, atol, rtol);
            return 0;
        }
    }
    return 1;
}

void pl_check_progress(const pl_check *c, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pl_watchdog_progress();
    fprintf(stderr, "  ... %s %s: %s\n", c->lab, c->exercise, line);
    fflush(stderr);
}

void pl_check_print(const pl_check *c, int color)
{
    static const char *word[] = {"PASS", "FAIL", "TODO"};
    static const char *col[] = {"\033[32m", "\033[31m", "\033[33m"};
    printf("%s%s%s  %-20s %-16s", color ? col[c->outcome] : "", word[c->outcome],
           color ? "\033[0m" : "", c->lab, c->exercise);
    if (c->outcome == PL_PASS)
        printf(" (%ld values checked)\n", c->assertions);
    else
        printf(" %s\n", c->detail);
}

static int short_runs;
void pl_check_set_short(int on) { short_runs = on; }
int pl_check_short(void) { return short_runs; }
