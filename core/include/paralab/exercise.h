/*
 * paralab/exercise.h — the exercise convention.
 *
 * Every exercise is a function in a lab's exercise file that returns int (a
 * count, a size, or a cudaError_t status). Not yet attempted, its body starts
 * with
 *
 *     PL_TODO();   // delete this line when you start
 *
 * which returns PL_TODO_STATUS and remembers where it stood. The checks
 * report such an exercise as TODO (neither pass nor fail), and a lab binary
 * runs the reference solution in its place and says so on screen.
 * Works in both build variants (the .cu files use it on the host side).
 */
#ifndef PARALAB_EXERCISE_H
#define PARALAB_EXERCISE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Returned by an exercise that is still TODO; no real result equals it. */
#define PL_TODO_STATUS (-0x70D0)

/* Records file:line as the last TODO reached and returns PL_TODO_STATUS. */
int pl_todo_mark(const char *file, int line);
/* "file:line" of the last PL_TODO() reached in the process, or "". */
const char *pl_todo_location(void);

#define PL_TODO() return pl_todo_mark(__FILE__, __LINE__)

#ifdef __cplusplus
}
#endif

#endif
