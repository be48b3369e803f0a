/*
 * test_data.c — the digits loader on files the test writes: a good one
 * (values, scaling, the fixed split), and each malformed kind with the
 * message it must give; the shuffle and the batching rule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paralab/data.h"
#include "suites.h"

/* A file holding `text`; its path in path[64]. */
static void write_file(char *path, const char *text)
{
    strcpy(path, "/tmp/paralab-data-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return;
    size_t n = strlen(text);
    if (write(fd, text, n) != (ssize_t)n) perror("write");
    close(fd);
}

/* Sample i: pixel j = (i + j) % 17, label i % 10. */
static char *good_csv(int n)
{
    char *s = malloc((size_t)n * 65 * 4 + 1), *p = s;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < 64; j++) p += sprintf(p, "%d,", (i + j) % 17);
        p += sprintf(p, "%d\n", i % 10);
    }
    *p = '\0';
    return s;
}

static void test_good_file(void)
{
    char path[64], err[512];
    char *csv = good_csv(23);
    write_file(path, csv);
    pl_digits d;
    CU_ASSERT_EQUAL_FATAL(pl_digits_load(path, &d, err, sizeof err), PL_DATA_OK);
    /* every fifth sample (4, 9, 14, 19) is a test sample */
    CU_ASSERT_EQUAL(d.train.n, 19);
    CU_ASSERT_EQUAL(d.test.n, 4);
    CU_ASSERT_EQUAL(d.test.y[0], 4);
    CU_ASSERT_EQUAL(d.test.y[3], 9);
    CU_ASSERT_EQUAL(d.train.y[4], 5); /* train holds 0,1,2,3,5,... */
    CU_ASSERT_DOUBLE_EQUAL(d.test.x[0 * 64 + 3], (4 + 3) % 17 / 16.0, 1e-7);
    CU_ASSERT_DOUBLE_EQUAL(d.train.x[4 * 64 + 63], (5 + 63) % 17 / 16.0, 1e-7);
    int in_range = 1;
    for (int i = 0; i < d.train.n * 64; i++) in_range &= d.train.x[i] >= 0 && d.train.x[i] <= 1;
    CU_ASSERT(in_range);
    pl_digits_free(&d);
    /* CRLF line ends and a trailing blank line are fine */
    char *crlf = malloc(strlen(csv) * 2 + 4), *q = crlf;
    for (const char *c = csv; *c; c++) {
        if (*c == '\n') *q++ = '\r';
        *q++ = *c;
    }
    strcpy(q, "\n");
    unlink(path);
    write_file(path, crlf);
    CU_ASSERT_EQUAL(pl_digits_load(path, &d, err, sizeof err), PL_DATA_OK);
    CU_ASSERT_EQUAL(d.train.n + d.test.n, 23);
    pl_digits_free(&d);
    unlink(path);
    free(crlf);
    free(csv);
}

/* A bad file: `line` replaces line 3 of a good one (NULL: cut the file
 * after `cut` bytes); the message must contain `want`. */
static void expect_bad(const char *line, long cut, const char *want)
{
    char *csv = good_csv(10), path[64], err[512];
    if (line) {
        char *third = csv;
        for (int k = 0; k < 2; k++) third = strchr(third, '\n') + 1;
        char *rest = strchr(third, '\n');
        char *edited = malloc(strlen(csv) + strlen(line) + 2);
        sprintf(edited, "%.*s%s%s", (int)(third - csv), csv, line, rest);
        free(csv);
        csv = edited;
    } else
        csv[cut] = '\0';
    write_file(path, csv);
    pl_digits d;
    memset(err, 0, sizeof err);
    CU_ASSERT_EQUAL(pl_digits_load(path, &d, err, sizeof err), PL_DATA_BAD);

    if (!strstr(err, want)) fprintf(stderr, "  got \"%s\", wanted \"...%s...\"\n", err, want);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
    CU_ASSERT_PTR_NULL(d.train.x); /* nothing kept */
    unlink(path);
    free(csv);
}

static void test_bad_files(void)
{
    char row64[400] = "", *p = row64;
    for (int j = 0; j < 63; j++) p += sprintf(p, "1,");
    sprintf(p, "1"); /* 64 columns: the label is missing */
    expect_bad(row64, 0, ":3: 64 columns, expected 65 (64 pixels and the label)");
    char row[600];
    snprintf(row, sizeof row, "%s,3,4", row64);
    expect_bad(row, 0, ":3: 66 columns, expected 65");
    snprintf(row, sizeof row, "%s,x", row64);
    expect_bad(row, 0, ":3, column 65: 'x' is not a whole number");
    snprintf(row, sizeof row, "1,2.5,%s", row64 + 4);
    expect_bad(row, 0, ":3, column 2: '2.5' is not a whole number");
    snprintf(row, sizeof row, "1,,%s", row64 + 4);
    expect_bad(row, 0, ":3, column 2: '' is not a whole number");
    snprintf(row, sizeof row, "17,%s", row64 + 2);
    snprintf(row + strlen(row), sizeof row - strlen(row), ",0");
    expect_bad(row, 0, ":3, column 1: 17 is out of 0..16");
    snprintf(row, sizeof row, "%s,10", row64);
    expect_bad(row, 0, ":3, column 65 (the label): 10 is out of 0..9");
    snprintf(row, sizeof row, "%s,-1", row64);
    expect_bad(row, 0, ":3, column 65 (the label): -1 is out of 0..9");
    /* truncated in the middle of line 2 (a line is 64 values and a label) */
    expect_bad(NULL, 200, ":2: ");
    /* empty: no samples */
    expect_bad(NULL, 0,
               ": 0 samples: too few to split into training and test sets (an empty "
               "file: run `make data` again)");
}

/* What fuzz/digits found the loader accepting: white space other than
 * blanks before a value (strtol skips it), and a NUL byte (the rest of the
 * line was ignored). */
static void test_fuzz_found(void)
{
    char row64[400] = "", *p = row64, row[600];
    for (int j = 0; j < 63; j++) p += sprintf(p, "1,");
    sprintf(p, "1");
    snprintf(row, sizeof row, "\f\f0,%s", row64 + 2);
    snprintf(row + strlen(row), sizeof row - strlen(row), ",0");
    expect_bad(row, 0, ":3, column 1: '\f\f0' is not a whole number");
    snprintf(row, sizeof row, "%s,\v7", row64);
    expect_bad(row, 0, ":3, column 65: '\v7' is not a whole number");
    snprintf(row, sizeof row, "%s, \r 7", row64);
    expect_bad(row, 0, ":3, column 65: ' \r 7' is not a whole number");
    /* blanks around a value and a sign stay allowed */
    char *csv = good_csv(10), path[64], err[512];
    char *signed_csv = malloc(strlen(csv) + 8);
    sprintf(signed_csv, " +0\t%s", csv + 1); /* line 1 begins " +0\t,1,2" */
    write_file(path, signed_csv);
    pl_digits d;
    CU_ASSERT_EQUAL(pl_digits_load(path, &d, err, sizeof err), PL_DATA_OK);
    CU_ASSERT_EQUAL(d.train.n + d.test.n, 10);
    CU_ASSERT_EQUAL(d.train.x[0], 0.0f);
    CU_ASSERT_EQUAL(d.train.x[1], 1 / 16.0f);
    pl_digits_free(&d);
    unlink(path);
    free(signed_csv);
    /* a NUL in line 2, after its last value: 10 samples of which one has
     * bytes after the NUL */
    size_t n = strlen(csv);
    char *nl = strchr(strchr(csv, '\n') + 1, '\n');
    size_t at = (size_t)(nl - csv), line2 = (size_t)(strchr(csv, '\n') + 1 - csv);
    char *bytes = malloc(n + 4);
    memcpy(bytes, csv, at);
    memcpy(bytes + at, "\0,9", 3);
    memcpy(bytes + at + 3, csv + at, n - at);
    strcpy(path, "/tmp/paralab-data-XXXXXX");
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(write(fd, bytes, n + 3), (ssize_t)(n + 3));
    close(fd);
    memset(err, 0, sizeof err);
    CU_ASSERT_EQUAL(pl_digits_load(path, &d, err, sizeof err), PL_DATA_BAD);
    char want[64];
    snprintf(want, sizeof want, ":2: a NUL byte (byte %zu of the line): not a text file",
             at - line2 + 1);
    if (!strstr(err, want)) fprintf(stderr, "  got \"%s\", wanted \"...%s...\"\n", err, want);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
    CU_ASSERT_PTR_NULL(d.train.x);
    unlink(path);
    free(bytes);
    free(csv);
}

static void test_missing_file(void)
{
    char err[512];
    pl_digits d;
    CU_ASSERT_EQUAL(pl_digits_load("/nonexistent/digits.csv", &d, err, sizeof err),
                    PL_DATA_MISSING);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot read /nonexistent/digits.csv"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "run `make data`"));
}

/* The shuffle: a permutation, the same for the same (seed, epoch), another
 * for another epoch or seed. */
static void test_shuffle(void)
{
    enum { N = 1438 };
    static int a[N], b[N], c[N], seen[N];
    pl_shuffle(a, N, 0, 1);
    pl_shuffle(b, N, 0, 1);
    CU_ASSERT_EQUAL(memcmp(a, b, sizeof a), 0);
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < N; i++) seen[a[i]]++;
    int perm = 1;
    for (int i = 0; i < N; i++) perm &= seen[i] == 1;
    CU_ASSERT(perm);
    pl_shuffle(c, N, 0, 2);
    CU_ASSERT_NOT_EQUAL(memcmp(a, c, sizeof a), 0);
    pl_shuffle(c, N, 1, 1);
    CU_ASSERT_NOT_EQUAL(memcmp(a, c, sizeof a), 0);
}

/* Batches: ceil(n / B); the last holds what is left; gathering copies rows. */
static void test_batches(void)
{
    CU_ASSERT_EQUAL(pl_batch_count(1438, 64), 23);
    CU_ASSERT_EQUAL(pl_batch_size(1438, 64, 0), 64);
    CU_ASSERT_EQUAL(pl_batch_size(1438, 64, 22), 30);
    CU_ASSERT_EQUAL(pl_batch_size(1438, 64, 23), 0);
    CU_ASSERT_EQUAL(pl_batch_count(128, 64), 2);
    CU_ASSERT_EQUAL(pl_batch_size(128, 64, 1), 64);
    CU_ASSERT_EQUAL(pl_batch_count(0, 64), 0);
    float x[5 * 64];
    int y[5] = {0}, order[3] = {2, 0, 1};
    float px[3 * 64];
    int py[3] = {7, 8, 9};
    for (int i = 0; i < 3 * 64; i++) px[i] = (float)i;
    pl_dataset ds = {3, px, py};
    pl_gather_batch(&ds, order, 2, 1, x, y); /* batch 1 of size 2: only order[2] */
    CU_ASSERT_EQUAL(y[0], 8);
    CU_ASSERT_EQUAL(x[0], 64.0f);
    CU_ASSERT_EQUAL(x[63], 127.0f);
}

int register_data_suite(void)
{
    static const unit_test t[] = {
        {"a good file: values, scaling, the fixed split, CRLF", test_good_file},
        {"malformed files: the line, the column and what is wrong", test_bad_files},
        {"what fuzz/digits found: a NUL byte, white space but blanks before a value",
         test_fuzz_found},
        {"a missing file: run make data", test_missing_file},
        {"the shuffle: a permutation from (seed, epoch)", test_shuffle},
        {"batches: the last holds the rest", test_batches},
    };
    return UNIT_SUITE("data", t);
}
