/*
 * test_record.c — the kernel record (simtRecord*, pl_device_record_*).
 * PLACEHOLDER: no tests yet.
 */
#include "suites.h"

int register_record_suite(void)
{
    static const unit_test tests[] = {{NULL, NULL}};
    return unit_suite_setup("record", NULL, NULL, tests, 0);
}
