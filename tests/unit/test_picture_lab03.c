/*
 * test_picture_lab03.c — Lab 03's picture: the reduction tree.
 * PLACEHOLDER: no tests yet.
 */
#include "suites.h"

int register_picture_lab03_suite(void)
{
    static const unit_test tests[] = {{NULL, NULL}};
    return unit_suite_setup("picture lab03", NULL, NULL, tests, 0);
}
