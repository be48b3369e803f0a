/* registry.c — see registry.h. */
#include "registry.h"

extern const pl_lab lab01_hello_threads;
extern const pl_lab lab02_memory;
extern const pl_lab lab03_reduction;
extern const pl_lab lab04_gemm;
extern const pl_lab lab05_streams;
extern const pl_lab lab06_collectives;
extern const pl_lab lab07_data_parallel;

const pl_lab *const pl_labs[] = {
    &lab01_hello_threads, &lab02_memory,      &lab03_reduction,     &lab04_gemm,
    &lab05_streams,       &lab06_collectives, &lab07_data_parallel, NULL,
};
