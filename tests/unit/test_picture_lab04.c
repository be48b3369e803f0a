/*
 * test_picture_lab04.c — Lab 04's pictures: tiles along K, the roofline.
 * PLACEHOLDER: no tests yet.
 */
#include "suites.h"

int register_picture_lab04_suite(void)
{
    static const unit_test tests[] = {{NULL, NULL}};
    return unit_suite_setup("picture lab04", NULL, NULL, tests, 0);
}
