/*
 * test_plots.c — bar charts with labels and an axis.
 * PLACEHOLDER: no tests yet.
 */
#include "suites.h"

int register_plots_suite(void)
{
    static const unit_test tests[] = {{NULL, NULL}};
    return unit_suite_setup("plots", NULL, NULL, tests, 0);
}
