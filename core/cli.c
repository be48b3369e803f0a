/* cli.c — see paralab/cli.h. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "paralab/cli.h"

const char *pl_parse_long(const char *opt, const char *text, long lo, long hi, long *out)
{
    static _Thread_local char msg[256];
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || isspace((unsigned char)*text) || v < lo || v > hi) {
        snprintf(msg, sizeof msg, "%s '%s' is not a whole number from %ld to %ld", opt, text, lo,
                 hi);
        return msg;
    }
    *out = v;
    return NULL;
}

const char *pl_parse_double(const char *opt, const char *text, double lo, double hi, int lo_open,
                            double *out)
{
    static _Thread_local char msg[256];
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || isspace((unsigned char)*text) ||
        !(lo_open ? v > lo : v >= lo) || !(v <= hi)) {
        if (lo_open)
            snprintf(msg, sizeof msg, "%s '%s' is not a number in (%g, %g]", opt, text, lo, hi);
        else
            snprintf(msg, sizeof msg, "%s '%s' is not a number from %g to %g", opt, text, lo, hi);
        return msg;
    }
    *out = v;
    return NULL;
}
