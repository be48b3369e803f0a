/*
 * paralab/cli.h — command-line helpers for the programs' main functions.
 * Library code: nothing here prints; the caller prints the message.
 */
#ifndef PARALAB_CLI_H
#define PARALAB_CLI_H

/* Parses `text` as a whole decimal number in [lo, hi] for option `opt`.
 * Returns NULL and sets *out on success; otherwise a message naming the
 * option, the bad text and the allowed range, e.g.
 *   "--size '12abc' is not a whole number from 1 to 1073741823"
 * (valid until the next call on this thread). */
const char *pl_parse_long(const char *opt, const char *text, long lo, long hi, long *out);

#endif
