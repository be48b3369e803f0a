/*
 * suites.h — the unit-test suites (one per module) and small helpers.
 * Each test_*.c registers its suite; main.c runs them all with CUnit.
 */
#ifndef TEST_SUITES_H
#define TEST_SUITES_H

#include <CUnit/CUnit.h>

#include <cuda_runtime.h>

int register_runtime_suite(void);
int register_emulator_suite(void);
int register_faults_suite(void);
int register_check_suite(void);
int register_comm_suite(void);
int register_options_suite(void);
int register_trace_suite(void);
int register_step_suite(void);
int register_nn_suite(void);
int register_mlp_suite(void);
int register_data_suite(void);
int register_viz_suite(void);
int register_shards_suite(void);        /* by register_viz_suite: `unit viz` runs both */
int register_pipeline_pane_suite(void); /* by register_viz_suite too */
int register_mesh_pane_suite(void);     /* and this one */
int register_memory_pane_suite(void);   /* and this one */
int register_watchdog_suite(void);
int register_mesh_suite(void);
int register_device_suite(void);
int register_harness_suite(void);
int register_blocks_suite(void);
int register_blocks_split_suite(void); /* by register_blocks_suite: `unit blocks` runs both */
int register_pipeline_suite(void);
int register_pp_suite(void);
int register_hybrid_suite(void);
int register_zero_suite(void);
int register_record_suite(void);
int register_picture_suite(void);
int register_picture_lab01_suite(void);
int register_picture_lab02_suite(void);
int register_picture_lab03_suite(void);
int register_picture_lab04_suite(void);
int register_plots_suite(void);
int register_dialect_suite(void);
int register_parts_suite(void); /* a multi-process run's trace parts, merged */

/* A suite's tests, in the order they run. */
typedef struct unit_test {
    const char *name;
    CU_TestFunc fn;
} unit_test;
/* Registers suite `name` with its n tests, and CUnit's init and cleanup
 * functions around them (NULL: none): 0, or -1 (CUnit's error,
 * CU_get_error_msg). Each test_*.c's register_*_suite calls it. */
int unit_suite_setup(const char *name, CU_InitializeFunc init, CU_CleanupFunc cleanup,
                     const unit_test *t, size_t n);
#define UNIT_SUITE(name, table)                                                                    \
    unit_suite_setup((name), NULL, NULL, (table), sizeof(table) / sizeof *(table))
#define UNIT_SUITE_SETUP(name, init, cleanup, table)                                               \
    unit_suite_setup((name), (init), (cleanup), (table), sizeof(table) / sizeof *(table))

/* 1 when UNIT_SHORT is set (and not "0"): the sanitizer passes of make test
 * run the training-like tests (many schedules or factorisations, each
 * trained) on fewer configurations, as their lab checks run --short; the
 * plain pass runs them all. */
int unit_short(void);

/* Asserts a CUDA call returned `want`, naming both on failure. */
#define CU_ASSERT_CUDA(call, want)                                                                 \
    do {                                                                                           \
        cudaError_t got_ = (call);                                                                 \
        if (got_ != (want))                                                                        \
            fprintf(stderr, "  %s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #call,   \
                    cudaGetErrorName(got_), cudaGetErrorName(want));                               \
        CU_ASSERT_EQUAL(got_, (want));                                                             \
    } while (0)
#define CU_ASSERT_OK(call) CU_ASSERT_CUDA(call, cudaSuccess)

#endif
