/*
 * paralab/watchdog.h — stops a program that makes no progress: a kernel in
 * an endless loop, or host code spinning forever.
 *
 * The watchdog counts CPU time, never the wall clock: an endless loop burns
 * CPU, while a busy machine, a paused lab or a stopped process (SIGSTOP)
 * burns none of the program's, so a slow or loaded machine never trips it.
 * A thread samples a few times a second (the period is not a limit) and
 * reports a stall when
 *   - a kernel's OS thread has spent more than limit seconds of its own CPU
 *     time in one block without finishing it (simulated GPUs: the report
 *     names the kernel, block and thread), or
 *   - the process has spent more than limit seconds of CPU time with no
 *     progress at all: no block of any kernel finished, no copy done (the
 *     emulator's counts), no pl_watchdog_progress call. CPU time of the
 *     threads that called pl_watchdog_ignore_thread (a UI, a trace drainer,
 *     the watchdog's own) is not counted.
 * A program that waits without using the CPU (a rank in a collective: the
 * communicator's deadlock watchdog reports it) is never reported here.
 *
 * labcheck runs one in each exercise's child process (--timeout); the lab
 * binaries run one over their world (--stall-timeout).
 */
#ifndef PARALAB_WATCHDOG_H
#define PARALAB_WATCHDOG_H

#include <stddef.h>

/* Called once, on the watchdog's thread, with a one-line report such as
 * "no progress for 3 s of CPU time: kernel vector_add (labs/...:12) is in
 * blockIdx (0,0,0), threadIdx (0,0,0)". The program's threads still run:
 * the handler usually ends the process (_exit) after saying so. */
typedef void (*pl_watchdog_fn)(const char *report, void *user);

/* Starts the watchdog with limit_s CPU seconds (> 0). 0, or -1 when one is
 * already running or no thread can be made. */
int pl_watchdog_start(double limit_s, pl_watchdog_fn fn, void *user);
/* Stops it (from any thread but the handler's); nothing when none runs. */
void pl_watchdog_stop(void);
/* Lowers the limit to limit_s (never raises it): a program asked to stop
 * (Ctrl-C) that cannot reach a point where it stops cleanly is reported
 * sooner. */
void pl_watchdog_hurry(double limit_s);
/* The calling thread's CPU time is not the checked program's work. */
void pl_watchdog_ignore_thread(void);
/* Host progress, for work the emulator does not count (any thread). */
void pl_watchdog_progress(void);
/* The process's progress so far: finished kernel blocks and copies (the
 * emulator's counts) plus pl_watchdog_progress calls. Works whether or not
 * a watchdog runs; the communicators' deadlock watchdog reads it. */
unsigned long long pl_watchdog_progress_count(void);

#endif
