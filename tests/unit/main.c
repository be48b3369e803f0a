/*
 * The unit-test runner: every suite, CUnit's basic interface. Exit status 1
 * when any failure was recorded (CU_get_number_of_failure_records: the
 * assertion counter alone wraps at 256 in some CUnit versions).
 *
 *   unit            all suites
 *   unit SUITE...   only these (unit --list names them)
 *   unit --list     the suites' names, one per line
 *
 * UNIT_SHORT=1: fewer configurations in the training-like tests (the
 * sanitizer passes; suites.h, unit_short).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "paralab/device.h"
#include "suites.h"

int unit_suite_setup(const char *name, CU_InitializeFunc init, CU_CleanupFunc cleanup,
                     const unit_test *t, size_t n)
{
    CU_pSuite s = CU_add_suite(name, init, cleanup);
    if (!s) return -1;
    for (size_t i = 0; i < n; i++)
        if (!CU_add_test(s, t[i].name, t[i].fn)) return -1;
    return 0;
}

int unit_short(void)
{
    const char *s = getenv("UNIT_SHORT");
    return s && *s && strcmp(s, "0") != 0;
}

int main(int argc, char **argv)
{
    /* The simulated GPU: 8 devices unless the caller chose; fault reports
     * stay in simtLastFaultReport() instead of stderr. */
    setenv("SIMT_DEVICES", "16", 0); /* two nodes of 8 */
    setenv("SIMT_QUIET", "1", 0);
    const char *why = pl_device_problem("unit");
    if (why) {
        fprintf(stderr, "unit: %s\n", why);
        return 2;
    }
    if (CU_initialize_registry() != CUE_SUCCESS) return 2;
    struct {
        const char *name;
        int (*reg)(void);
    } suites[] = {
        {"runtime", register_runtime_suite},
        {"emulator", register_emulator_suite},
        {"faults", register_faults_suite},
        {"check", register_check_suite},
        {"comm", register_comm_suite},
        {"options", register_options_suite},
        {"trace", register_trace_suite},
        {"step", register_step_suite},
        {"nn", register_nn_suite},
        {"mlp", register_mlp_suite},
        {"data", register_data_suite},
        {"viz", register_viz_suite},
        {"watchdog", register_watchdog_suite},
        {"mesh", register_mesh_suite},
        {"device", register_device_suite},
        {"harness", register_harness_suite},
        {"blocks", register_blocks_suite},
        {"pipeline", register_pipeline_suite},
        {"pp", register_pp_suite},
        {"hybrid", register_hybrid_suite},
        {"zero", register_zero_suite},
        {"record", register_record_suite},
        {"picture", register_picture_suite},
        {"picture_lab01", register_picture_lab01_suite},
        {"picture_lab02", register_picture_lab02_suite},
        {"picture_lab03", register_picture_lab03_suite},
        {"picture_lab04", register_picture_lab04_suite},
        {"plots", register_plots_suite},
        {"dialect", register_dialect_suite},
        {"parts", register_parts_suite},
    };
    int n = (int)(sizeof suites / sizeof *suites);
    if (argc == 2 && strcmp(argv[1], "--list") == 0) { /* make gpu-test runs them one by one */
        for (int i = 0; i < n; i++) printf("%s\n", suites[i].name);
        CU_cleanup_registry();
        return 0;
    }
    for (int a = 1; a < argc; a++) {
        int known = 0;
        for (int i = 0; i < n; i++) known |= strcmp(argv[a], suites[i].name) == 0;
        if (!known) {
            fprintf(stderr, "unit: no suite '%s'; the suites are:", argv[a]);
            for (int i = 0; i < n; i++) fprintf(stderr, " %s", suites[i].name);
            fprintf(stderr, "\n");
            return 2;
        }
    }
    for (int i = 0; i < n; i++) {
        int want = argc < 2;
        for (int a = 1; a < argc; a++) want |= strcmp(argv[a], suites[i].name) == 0;
        if (want && suites[i].reg() != 0) {
            fprintf(stderr, "unit: cannot register suite %s: %s\n", suites[i].name,
                    CU_get_error_msg());
            return 2;
        }
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failures = CU_get_number_of_failure_records();
    unsigned run = CU_get_number_of_tests_run(), failed = CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    printf("\nunit: %u passed, %u failed\n", run - failed, failed);
    return failures ? 1 : 0;
}
