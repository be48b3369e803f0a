/*
 * test_picture_lab02.c — Lab 02's pictures: a warp's sectors, shared-memory banks.
 * PLACEHOLDER: no tests yet.
 */
#include "suites.h"

int register_picture_lab02_suite(void)
{
    static const unit_test tests[] = {{NULL, NULL}};
    return unit_suite_setup("picture lab02", NULL, NULL, tests, 0);
}
