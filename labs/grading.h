/*
 * labs/grading.h — the points of every exercise: the one grading table.
 *
 * labcheck's reports for autograders (--gradescope: each exercise's score
 * and max_score; --junit: each lab's score and max_score, properties of its
 * testsuite) and labcheck --list take the points from here, and nowhere
 * else. Every lab is worth 10 points, split
 * among its exercises by the work each one asks; 110 in all. An instructor
 * who weighs the labs differently edits this table (and only it): labcheck
 * refuses to run (exit 2) when an exercise of labs/registry.c has no line
 * here, or a line names no exercise.
 *
 * visibility is Gradescope's: "visible" (the default: the student sees the
 * score and the message at once), "hidden", "after_due_date" or
 * "after_published".
 *
 * Included by tests/labcheck.c only. docs/exercises.md, "Autograders".
 */
#ifndef PARALAB_LABS_GRADING_H
#define PARALAB_LABS_GRADING_H

typedef struct pl_grade {
    const char *lab;        /* "06_collectives" */
    const char *exercise;   /* "ring_all_reduce" */
    int points;             /* its max_score: 0 .. 1000 */
    const char *visibility; /* Gradescope's visibility of its result */
} pl_grade;

/* one exercise a line (clang-format would pack them into a table) */
/* clang-format off */
static const pl_grade pl_grading[] = {
    {"01_hello_threads",        "grid_size",         3, "visible"},
    {"01_hello_threads",        "vector_add",        7, "visible"},
    {"02_memory",               "transpose_tiled",  10, "visible"},
    {"03_reduction",            "block_sum",         6, "visible"},
    {"03_reduction",            "block_sum_shuffle", 4, "visible"},
    {"04_gemm",                 "matmul_tiled",     10, "visible"},
    {"05_streams",              "chunked",          10, "visible"},
    {"06_collectives",          "ring_all_reduce",  10, "visible"},
    {"07_data_parallel",        "shard_batch",       3, "visible"},
    {"07_data_parallel",        "sync_gradients",    7, "visible"},
    {"08_tensor_parallel",      "column_parallel",   5, "visible"},
    {"08_tensor_parallel",      "row_parallel",      5, "visible"},
    {"09_pipeline_parallel",    "gpipe",             3, "visible"},
    {"09_pipeline_parallel",    "warmup_1f1b",       2, "visible"},
    {"09_pipeline_parallel",    "one_f_one_b",       5, "visible"},
    {"10_hybrid",               "coords",            3, "visible"},
    {"10_hybrid",               "make_groups",       4, "visible"},
    {"10_hybrid",               "dp_after",          3, "visible"},
    {"11_zero",                 "zero1_update",     10, "visible"},
};
/* clang-format on */

#endif
