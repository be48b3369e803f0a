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
/* The same for a number (strtod's syntax) in [lo, hi], or in (lo, hi] when
 * lo_open: "--lr 'abc' is not a number in (0, 10]", "--speed '0' is not a
 * number from 0.1 to 100". */
const char *pl_parse_double(const char *opt, const char *text, double lo, double hi, int lo_open,
                            double *out);

#endif
