/* data.c — see paralab/data.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paralab/data.h"

#define COLUMNS (PL_DIGITS_FEATURES + 1)

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Parses one line into v[COLUMNS]: each column a whole number (a sign
 * allowed), with spaces or tabs around it and nothing else. 0, or -1 with
 * the message. */
static int parse_line(const char *path, long lineno, char *line, int *v, char *err, size_t cap)
{
    int col = 0;
    char *p = line;
    for (;;) {
        char *end = p + strcspn(p, ",");
        int last = *end != ',';
        *end = '\0';
        if (col < COLUMNS) {
            char *q = p, *stop;
            while (*q == ' ' || *q == '\t') q++;
            /* strtol would also skip other white space (\f, \v, \r) */
            int number = is_digit(*q) || ((*q == '+' || *q == '-') && is_digit(q[1]));
            errno = 0;
            long x = number ? strtol(q, &stop, 10) : 0;
            if (!number) stop = q;
            while (*stop == ' ' || *stop == '\t') stop++;
            if (q == stop || *stop || errno) {
                snprintf(err, cap, "%s:%ld, column %d: '%.20s' is not a whole number", path, lineno,
                         col + 1, p);
                return -1;
            }
            int is_label = col == COLUMNS - 1;
            long hi = is_label ? PL_DIGITS_CLASSES - 1 : 16;
            if (x < 0 || x > hi) {
                snprintf(err, cap, "%s:%ld, column %d%s: %ld is out of 0..%ld", path, lineno,
                         col + 1, is_label ? " (the label)" : "", x, hi);
                return -1;
            }
            v[col] = (int)x;
        }
        col++;
        if (last) break;
        p = end + 1;
    }
    if (col != COLUMNS) {
        snprintf(err, cap, "%s:%ld: %d column%s, expected %d (64 pixels and the label)", path,
                 lineno, col, col == 1 ? "" : "s", COLUMNS);
        return -1;
    }
    return 0;
}

static int grow(pl_dataset *ds, int *cap)
{
    int c = *cap ? *cap * 2 : 2048;
    float *x = realloc(ds->x, (size_t)c * PL_DIGITS_FEATURES * sizeof *x);
    if (x) ds->x = x;
    int *y = realloc(ds->y, (size_t)c * sizeof *y);
    if (y) ds->y = y;
    if (!x || !y) return -1;
    *cap = c;
    return 0;
}

/* A relative path not found here, looked for from the repository the
 * running program was built in: its binary is <root>/build/<variant>/bin/
 * (the labs, paralab-train), so <root>/path, for a lab started from
 * another folder. 0 and the path in out, or -1 (no /proc/self/exe, or too
 * long). */
static int beside_program(const char *path, char *out, size_t cap)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = '\0';
    for (int up = 0; up < 4; up++) { /* the binary's name, bin, the variant, build */
        char *slash = strrchr(exe, '/');
        if (!slash || slash == exe) return -1;
        *slash = '\0';
    }
    int k = snprintf(out, cap, "%s/%s", exe, path);
    return k > 0 && (size_t)k < cap ? 0 : -1;
}

int pl_digits_load(const char *path, pl_digits *d, char *err, size_t cap)
{
    memset(d, 0, sizeof *d);
    FILE *f = fopen(path, "r");
    if (!f && errno == ENOENT && path[0] != '/') {
        char there[4096];
        if (beside_program(path, there, sizeof there) == 0 && (f = fopen(there, "r")) == NULL) {
            snprintf(err, cap,
                     "cannot read %s, neither from this folder nor as %s (the repository this "
                     "program was built in): run `make data` there to fetch the digits",
                     path, there);
            return PL_DATA_MISSING;
        }
    }
    if (!f) {
        snprintf(err, cap, "cannot read %s: %s; run `make data` to fetch the digits", path,
                 strerror(errno));
        return PL_DATA_MISSING;
    }
    int caps[2] = {0, 0}, v[COLUMNS], status = PL_DATA_OK;
    long lineno = 0, samples = 0;
    char *line = NULL;
    size_t linecap = 0;
    ssize_t len;
    while ((len = getline(&line, &linecap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (len == 0) continue; /* a blank line (the end of the file) */
        /* a NUL would end the line early, and what follows it be ignored */
        const char *nul = memchr(line, '\0', (size_t)len);
        if (nul) {
            snprintf(err, cap, "%s:%ld: a NUL byte (byte %zu of the line): not a text file", path,
                     lineno, (size_t)(nul - line) + 1);
            status = PL_DATA_BAD;
            break;
        }
        if (parse_line(path, lineno, line, v, err, cap)) {
            status = PL_DATA_BAD;
            break;
        }
        pl_dataset *ds = samples % 5 == 4 ? &d->test : &d->train;
        int *c = samples % 5 == 4 ? &caps[1] : &caps[0];
        if (ds->n == *c && grow(ds, c)) {
            snprintf(err, cap, "%s:%ld: out of memory", path, lineno);
            status = PL_DATA_BAD;
            break;
        }
        for (int j = 0; j < PL_DIGITS_FEATURES; j++)
            ds->x[(size_t)ds->n * PL_DIGITS_FEATURES + j] = (float)v[j] / 16.0f;
        ds->y[ds->n++] = v[PL_DIGITS_FEATURES];
        samples++;
    }
    if (status == PL_DATA_OK && ferror(f)) {
        snprintf(err, cap, "cannot read %s: %s", path, strerror(errno));
        status = PL_DATA_BAD;
    }
    if (status == PL_DATA_OK && (d->train.n == 0 || d->test.n == 0)) {
        snprintf(err, cap, "%s: %ld sample%s: too few to split into training and test sets%s", path,
                 samples, samples == 1 ? "" : "s",
                 samples ? "" : " (an empty file: run `make data` again)");
        status = PL_DATA_BAD;
    }
    free(line);
    fclose(f);
    if (status) pl_digits_free(d);
    return status;
}

void pl_digits_free(pl_digits *d)
{
    free(d->train.x);
    free(d->train.y);
    free(d->test.x);
    free(d->test.y);
    memset(d, 0, sizeof *d);
}

static unsigned long long splitmix64(unsigned long long *s)
{
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void pl_shuffle(int *order, int n, unsigned long long seed, int epoch)
{
    unsigned long long s = seed * 0x2545F4914F6CDD1Dull + (unsigned long long)epoch;
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
        int j = (int)(splitmix64(&s) % (unsigned long long)(i + 1));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

int pl_batch_count(int n, int B) { return B > 0 && n > 0 ? (n + B - 1) / B : 0; }

int pl_batch_size(int n, int B, int k)
{
    long left = (long)n - (long)k * B;
    return left <= 0 ? 0 : left < B ? (int)left : B;
}

void pl_gather_batch(const pl_dataset *ds, const int *order, int B, int k, float *x, int *y)
{
    int size = pl_batch_size(ds->n, B, k);
    for (int i = 0; i < size; i++) {
        int s = order[(long)k * B + i];
        memcpy(x + (size_t)i * PL_DIGITS_FEATURES, ds->x + (size_t)s * PL_DIGITS_FEATURES,
               PL_DIGITS_FEATURES * sizeof *x);
        y[i] = ds->y[s];
    }
}
