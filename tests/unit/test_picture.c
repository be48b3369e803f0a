/*
 * test_picture.c — pictures: the container, the trace notes, the replay, the picture pane.
 * PLACEHOLDER: no tests yet.
 */
#include "suites.h"

int register_picture_suite(void)
{
    static const unit_test tests[] = {{NULL, NULL}};
    return unit_suite_setup("picture", NULL, NULL, tests, 0);
}
