/*
 * fuzz/digits.c — libFuzzer target: the digits loader (core/model/data.c,
 * pl_digits_load), what paralab-train and Lab 07 read data/digits.csv with.
 *
 * Each input is a digits file: lines of 64 pixel values 0..16 and a label
 * 0..9, comma-separated. What it checks: the loader never crashes, leaks
 * or reads past a line; a file it refuses comes with a message naming the
 * file and nothing kept; and it accepts exactly the files a second, plain
 * reading of the format accepts (below: each line a whole number per
 * column, blanks (spaces, tabs) around it allowed, a sign too; blank lines
 * and a line end of \r\n allowed; at least 5 samples, so that both sets
 * have one), with the same values, split 4 to 1 (sample i in the test set
 * when i % 5 == 4), as paralab/data.h says.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memfile.h"
#include "paralab/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define COLUMNS (PL_DIGITS_FEATURES + 1)

static int blank(uint8_t c) { return c == ' ' || c == '\t'; }
static int digit(uint8_t c) { return c >= '0' && c <= '9'; }

/* The plain reading: the samples' values into *v (malloc'd, COLUMNS a
 * sample) and their count, or -1 for a file the format does not allow. */
static long reference(const uint8_t *d, size_t size, int **v)
{
    long n = 0, cap = 0;
    *v = NULL;
    for (size_t at = 0; at < size;) {
        const uint8_t *nl = memchr(d + at, '\n', size - at);
        size_t end = nl ? (size_t)(nl - d) : size, next = nl ? end + 1 : size;
        while (end > at && d[end - 1] == '\r') end--;
        if (end == at) {
            at = next;
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            int *w = realloc(*v, (size_t)cap * COLUMNS * sizeof *w);
            FUZZ_CHECK(w != NULL, "out of memory");
            *v = w;
        }
        size_t i = at;
        for (int col = 0; col < COLUMNS; col++) {
            if (col && (i >= end || d[i++] != ',')) return -1; /* too few columns */
            while (i < end && blank(d[i])) i++;
            int neg = i < end && (d[i] == '-' || d[i] == '+') ? d[i++] == '-' : 0;
            if (i >= end || !digit(d[i])) return -1;
            long x = 0;
            for (; i < end && digit(d[i]); i++) x = x > 1000 ? x : x * 10 + (d[i] - '0');
            while (i < end && blank(d[i])) i++;
            if (neg) x = -x;
            if (x < 0 || x > (col == COLUMNS - 1 ? PL_DIGITS_CLASSES - 1 : 16)) return -1;
            (*v)[n * COLUMNS + col] = (int)x;
        }
        if (i != end) return -1; /* more columns, or bytes after the last */
        n++;
        at = next;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int *want;
    long samples = reference(data, size, &want);
    const char *path = fuzz_memfile(data, size);
    pl_digits d;
    char err[512] = "";
    int rc = pl_digits_load(path, &d, err, sizeof err);
    if (rc != PL_DATA_OK) {
        FUZZ_CHECK(rc == PL_DATA_BAD, "status %d for a file that is there: '%s'", rc, err);
        FUZZ_CHECK(samples < 5, "refused a file of %ld good samples: '%s'", samples, err);
        FUZZ_CHECK(!strncmp(err, path, strlen(path)), "a refusal that does not name the file: '%s'",
                   err);
        FUZZ_CHECK(!d.train.x && !d.train.y && !d.test.x && !d.test.y && !d.train.n && !d.test.n,
                   "a refused file left samples");
        free(want);
        return 0;
    }
    FUZZ_CHECK(samples >= 5, "accepted a file the format does not allow (%ld samples read)",
               samples);
    int n = d.train.n + d.test.n;
    FUZZ_CHECK(n == samples && d.test.n == n / 5, "%ld samples split into %d and %d", samples,
               d.train.n, d.test.n);
    for (long k = 0; k < samples; k++) {
        const pl_dataset *ds = k % 5 == 4 ? &d.test : &d.train;
        int i = (int)(k % 5 == 4 ? k / 5 : k - k / 5);
        const int *w = want + k * COLUMNS;
        FUZZ_CHECK(ds->y[i] == w[PL_DIGITS_FEATURES], "sample %ld: label %d, the file says %d", k,
                   ds->y[i], w[PL_DIGITS_FEATURES]);
        for (int j = 0; j < PL_DIGITS_FEATURES; j++)
            FUZZ_CHECK(ds->x[(size_t)i * PL_DIGITS_FEATURES + j] == (float)w[j] / 16.0f,
                       "sample %ld, pixel %d: %g, the file says %d", k, j,
                       (double)ds->x[(size_t)i * PL_DIGITS_FEATURES + j], w[j]);
    }
    pl_digits_free(&d);
    free(want);
    return 0;
}
