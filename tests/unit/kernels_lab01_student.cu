/*
 * kernels_lab01_student.cu — a student's Lab 01 kernel without its bound
 * check (tests/student/lab01_no_tail_guard.cu, the scenario make check's
 * student tests use), in the unit tests as lab01_exercise, for the picture
 * lab01 suite: its tail's stores past the end, recorded.
 */
/* its kernel never reads n: that is the mistake */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../student/lab01_no_tail_guard.cu"
