/*
 * labs/registry.h — the list of labs that `labcheck` (make check, make test)
 * knows. Each lab adds one entry to labs/registry.c.
 */
#ifndef PARALAB_LABS_REGISTRY_H
#define PARALAB_LABS_REGISTRY_H

#include "paralab/check.h"

typedef struct pl_lab {
    const char *id;               /* "01_hello_threads" */
    const char *const *exercises; /* names, NULL-terminated */
    /* Runs the checks of exercise i against the student's code
     * (use_solution = 0) or the reference (1). */
    void (*check)(int exercise, int use_solution, pl_check *c);
} pl_lab;

extern const pl_lab *const pl_labs[]; /* NULL-terminated */

/* Each lab's entry, in its check.c. */
extern const pl_lab lab01_hello_threads;
extern const pl_lab lab02_memory;
extern const pl_lab lab03_reduction;
extern const pl_lab lab04_gemm;
extern const pl_lab lab05_streams;
extern const pl_lab lab06_collectives;
extern const pl_lab lab07_data_parallel;
extern const pl_lab lab08_tensor_parallel;
extern const pl_lab lab09_pipeline_parallel;
extern const pl_lab lab10_hybrid;
extern const pl_lab lab11_zero;

#endif
