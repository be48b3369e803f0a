/*
 * test_picture_lab01.c — Lab 01's pictures: blocks on SMs, the element map.
 * PLACEHOLDER: no tests yet.
 */
#include "suites.h"

int register_picture_lab01_suite(void)
{
    static const unit_test tests[] = {{NULL, NULL}};
    return unit_suite_setup("picture lab01", NULL, NULL, tests, 0);
}
