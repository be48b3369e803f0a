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
