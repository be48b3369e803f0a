/*
 * test_check.c — the check helpers and the exercise convention.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "paralab/check.h"
#include "paralab/cli.h"
#include "paralab/exercise.h"
#include "suites.h"

static const int todo_line = __LINE__ + 3; /* the PL_TODO() below */
static int todo_exercise(void)
{
    PL_TODO();
    return 1;
}

static void test_todo_marker(void)
{
    CU_ASSERT_EQUAL(todo_exercise(), PL_TODO_STATUS);
    char where[64];
    snprintf(where, sizeof where, "test_check.c:%d", todo_line);
    CU_ASSERT_PTR_NOT_NULL(strstr(pl_todo_location(), where));
    pl_check c;
    pl_check_begin(&c, "lab", "ex");
    pl_check_todo(&c);
    CU_ASSERT_EQUAL(c.outcome, PL_TODO);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.detail, where));
    CU_ASSERT_FALSE(pl_check_ok(&c));
}

static void test_floats(void)
{
    float want[5] = {1, 2, 3, 4, 5}, got[5] = {1, 2, 3.5f, 4, 0};
    pl_check c;
    pl_check_begin(&c, "lab", "ex");
    CU_ASSERT_TRUE(pl_check_floats(&c, "x", want, want, 5, 0, 0));
    CU_ASSERT_EQUAL(c.outcome, PL_PASS);
    CU_ASSERT_EQUAL(c.assertions, 5);
    CU_ASSERT_FALSE(pl_check_floats(&c, "x", got, want, 5, 0, 0));
    CU_ASSERT_EQUAL(c.outcome, PL_FAIL);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.detail, "x[2] = 3.5 but expected 3"));
    /* the first failure is kept */
    pl_check_fail(&c, "later");
    CU_ASSERT_PTR_NULL(strstr(c.detail, "later"));
    /* tolerance, and NaN never passes */
    pl_check_begin(&c, "lab", "ex");
    float a = 1.0f, b = 1.0f + 1e-6f, nan = NAN;
    CU_ASSERT_TRUE(pl_check_floats(&c, "y", &b, &a, 1, 1e-5, 0));
    CU_ASSERT_FALSE(pl_check_floats(&c, "y", &nan, &a, 1, 1, 1));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(c.detail, "y[0] = NaN but expected 1: this element was never written"));
}

static void test_that(void)
{
    pl_check c;
    pl_check_begin(&c, "lab", "ex");
    CU_ASSERT_TRUE(pl_check_that(&c, 1, "never"));
    CU_ASSERT_FALSE(pl_check_that(&c, 0, "value %d", 7));
    CU_ASSERT_STRING_EQUAL(c.detail, "value 7");
    CU_ASSERT_EQUAL(c.assertions, 2);
    /* a TODO does not hide an earlier failure */
    pl_check_todo(&c);
    CU_ASSERT_EQUAL(c.outcome, PL_FAIL);
}

static void test_parse_long(void)
{
    long v = -1;
    CU_ASSERT_PTR_NULL(pl_parse_long("--n", "42", 1, 100, &v));
    CU_ASSERT_EQUAL(v, 42);
    CU_ASSERT_PTR_NULL(pl_parse_long("--n", "-3", -5, 5, &v));
    CU_ASSERT_EQUAL(v, -3);
    static const char *bad[] = {"0", "101", "", "12abc", "abc", "99999999999999999999", " 7", "7 "};
    for (int i = 0; i < 8; i++) {
        v = 77;
        const char *err = pl_parse_long("--n", bad[i], 1, 100, &v);
        CU_ASSERT_PTR_NOT_NULL(err);
        CU_ASSERT_EQUAL(v, 77);
        char want[128];
        snprintf(want, sizeof want, "--n '%s' is not a whole number from 1 to 100", bad[i]);
        if (err) CU_ASSERT_STRING_EQUAL(err, want);
    }
}

static void test_parse_double(void)
{
    double v = -1;
    CU_ASSERT_PTR_NULL(pl_parse_double("--lr", "2e-3", 0, 10, 1, &v));
    CU_ASSERT_EQUAL(v, 2e-3);
    CU_ASSERT_PTR_NULL(pl_parse_double("--lr", "10", 0, 10, 1, &v));
    CU_ASSERT_EQUAL(v, 10);
    CU_ASSERT_PTR_NULL(pl_parse_double("--speed", "0.1", 0.1, 100, 0, &v));
    CU_ASSERT_EQUAL(v, 0.1);
    /* (0, 10]: 0 itself is out; nan and inf are no numbers in range */
    static const char *bad[] = {"0", "-1", "10.5", "", "abc", "1e-3x", " 1", "nan", "inf", "1e999"};
    for (int i = 0; i < 10; i++) {
        v = 77;
        const char *err = pl_parse_double("--lr", bad[i], 0, 10, 1, &v);
        CU_ASSERT_PTR_NOT_NULL(err);
        CU_ASSERT_EQUAL(v, 77);
        char want[128];
        snprintf(want, sizeof want, "--lr '%s' is not a number in (0, 10]", bad[i]);
        if (err) CU_ASSERT_STRING_EQUAL(err, want);
    }
    const char *err = pl_parse_double("--speed", "0", 0.1, 100, 0, &v);
    CU_ASSERT_PTR_NOT_NULL(err);
    if (err) CU_ASSERT_STRING_EQUAL(err, "--speed '0' is not a number from 0.1 to 100");
}

int register_check_suite(void)
{
    static const unit_test t[] = {
        {"PL_TODO marker", test_todo_marker},   {"float comparison", test_floats},
        {"pl_check_that", test_that},           {"pl_parse_long", test_parse_long},
        {"pl_parse_double", test_parse_double},
    };
    return UNIT_SUITE("check", t);
}
