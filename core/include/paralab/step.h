/*
 * paralab/step.h — narrated steps, and the player that paces them.
 *
 * A lab calls pl_step(r, "narration", ...) at each teachable point, on every
 * rank, then does and prints that step's work: all ranks meet there, and
 * rank 0's narration is shown once the player has released the step before
 * (so the student reads a step and watches its work before moving on):
 *   headless (--no-viz, or no terminal): at once; the narration is printed
 *     as a plain line "[k] text";
 *   play: once the step before has been up for its reading time
 *     (pl_step_read_seconds of its narration) over the speed;
 *   step: when the student advances (pl_player_advance: the UI's space, or
 *     Enter on a terminal without the UI).
 * The ranks never run ahead of the narration: what they do after pl_step(k)
 * is done while step k is shown, and none of step k+1's work starts before
 * the student releases step k. A narration that reports its step's results
 * ("the kernel took 3 us") needs them before it can be written: such a step
 * starts with pl_step_begin(r), which releases the step before (the UI
 * shows the new step as running), then does the work, then pl_step(r, ...)
 * shows the narration at once. So each step's work appears under its own
 * narration, in the UI and in the trace.
 * While rank 0 waits for the student the world is held (pl_comm_hold): a
 * pause of any length is no deadlock.
 * pl_player_quit releases every waiting step and makes pl_step return
 * non-zero on every rank, so a lab can stop cleanly (q, Ctrl-C).
 */
#ifndef PARALAB_STEP_H
#define PARALAB_STEP_H

#include <stdio.h>

#include "paralab/options.h"
#include "paralab/world.h"

typedef struct pl_player pl_player;

/* out: where the narration goes (stdout). In step mode with a terminal on
 * stdin (and no UI), a thread reads its lines (pl_player_read_lines): Enter
 * advances, q then Enter quits. NULL when out of memory. */
pl_player *pl_player_create(pl_mode mode, double speed, int headless, FILE *out);
/* What that thread does with stdin, from in: a line whose first character
 * other than blanks (space, tab, CR) is q or Q quits (pl_player_quit) and
 * ends the reading; any other line, an empty one or blanks alone too,
 * advances (pl_player_advance). A line is read to its end however long.
 * The terminal stays line-buffered (canonical mode: a key arrives with its
 * Enter; nothing to restore on any exit), so the prompt says "q then
 * Enter". Returns the advances; stops at EOF. */
int pl_player_read_lines(pl_player *p, FILE *in);
void pl_player_destroy(pl_player *p);
/* Step mode blocks only when something will advance it: the terminal
 * reader (set by pl_player_create) or a UI, which calls this. */
void pl_player_set_interactive(pl_player *p, int on);
void pl_player_advance(pl_player *p);
/* A UI shows the narration itself: the player prints nothing. */
void pl_player_set_quiet(pl_player *p, int on);
/* Switches between play and step (and sets the speed, if > 0); a waiting
 * step looks again at once. */
void pl_player_set_mode(pl_player *p, pl_mode mode, double speed);
pl_mode pl_player_mode(pl_player *p, double *speed);
void pl_player_quit(pl_player *p);
/* 1 once the student quit (pl_player_quit). */
int pl_player_quitting(pl_player *p);
/* The current step's number (0 before the first) and narration. */
int pl_player_current(pl_player *p, char *buf, size_t cap);
/* 1 while rank 0 waits for the release of the current step (the student's
 * advance, or the play timer): every rank is held, the step's work is done. */
int pl_player_waiting(pl_player *p);
/* fn(ctx, step, text) each time a step's narration is shown, on rank 0's
 * thread before the step's work runs (a UI records it for its transcript,
 * in order with what the lab prints); it must not call the player. NULL:
 * none. */
void pl_player_set_listener(pl_player *p, void (*fn)(void *ctx, int step, const char *text),
                            void *ctx);

/* Every rank calls it. 0: go on; non-zero: stop (the student quit, or the
 * world failed: r->error says which). Without a player it only meets. */
int pl_step(pl_rank *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Every rank calls it where the work of a step whose narration reports it
 * begins: waits for the release of the current step, as pl_step would, and
 * makes the next step current with the narration PL_STEP_RUNNING until its
 * pl_step shows the text (at once). Twice in a row: the second only meets.
 * Returns as pl_step does. */
int pl_step_begin(pl_rank *r);
#define PL_STEP_RUNNING "(running this step: its narration follows when its work is done)"

/* How long a narration stays up in play mode at speed 1: PL_READ_BASE_S
 * plus PL_READ_WORD_S per word (200 words a minute); speed x divides it. */
#define PL_READ_BASE_S 2.0
#define PL_READ_WORD_S 0.3
double pl_step_read_seconds(const char *text);

#endif
