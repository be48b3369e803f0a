/*
 * paralab/check.h — checks that test numbers, not effort.
 *
 * One pl_check per exercise. A check records its first failure with what
 * differed (index and both values); PL_TODO in the exercise makes it TODO.
 * Used by every lab's checks, by `labcheck` (make check / make test) and by
 * each lab binary, which exits 0 only when its own checks pass.
 */
#ifndef PARALAB_CHECK_H
#define PARALAB_CHECK_H

#include <stddef.h>

typedef enum { PL_PASS, PL_FAIL, PL_TODO } pl_outcome;

typedef struct pl_check {
    const char *lab;      /* "01_hello_threads" */
    const char *exercise; /* "grid_size" */
    pl_outcome outcome;
    long assertions;  /* values compared */
    char detail[512]; /* the first failure, or where the TODO is */
} pl_check;

void pl_check_begin(pl_check *c, const char *lab, const char *exercise);
/* Records a failure; only the first message is kept. Returns 0. */
int pl_check_fail(pl_check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Marks the exercise TODO (a PL_TODO() was reached). */
void pl_check_todo(pl_check *c);
/* 1 when the check has neither failed nor hit a TODO. */
int pl_check_ok(const pl_check *c);
/* Counts one comparison; fails with the message when !ok. Returns ok. */
int pl_check_that(pl_check *c, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Every element: |got - want| <= atol + rtol * |want| (NaN never passes).
 * On failure: the first differing index and both values; a NaN where a
 * number was expected is reported as never written (checks fill outputs with
 * NaN before running the code under test). Returns 1 if equal. */
int pl_check_floats(pl_check *c, const char *what, const float *got, const float *want, size_t n,
                    double rtol, double atol);
/* A line on stderr while a long check runs ("  ... 07_data_parallel
 * sync_gradients: N=4, epoch 5/20"), so that a slow check is seen to move. */
void pl_check_progress(const pl_check *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Short runs (labcheck --short: the sanitizer passes of make test): a check
 * may leave out its long training runs, which the plain build runs in full
 * (Lab 07's 20 epochs at N = 1, 2, 4, 8). Off by default. */
void pl_check_set_short(int on);
int pl_check_short(void);
/* "PASS  01_hello_threads  grid_size" etc.; `color` adds ANSI colours. */
void pl_check_print(const pl_check *c, int color);

#endif
