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
int register_watchdog_suite(void);
int register_harness_suite(void);

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
