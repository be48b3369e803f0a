/*
 * kernels_lab01.cu — Lab 01's reference solution (labs/01_hello_threads/
 * solution.cu, the very file: lab01_solution) in the unit tests, compiled
 * as build/sim compiles the lab (inline memory checks: the record sees its
 * accesses through the poisoned shadow), for the picture lab01 suite's
 * record of the lab's real vector add.
 */
#include "../../labs/01_hello_threads/solution.cu"
