/* registry.c — see registry.h. */
#include "registry.h"

/* one lab a line (clang-format would pack them into a table) */
/* clang-format off */
const pl_lab *const pl_labs[] = {
    &lab01_hello_threads,
    &lab02_memory,
    &lab03_reduction,
    &lab04_gemm,
    &lab05_streams,
    &lab06_collectives,
    &lab07_data_parallel,
    &lab08_tensor_parallel,
    &lab09_pipeline_parallel,
    &lab10_hybrid,
    &lab11_zero,
    NULL,
};
/* clang-format on */
