/*
 * paralab/step.h — narrated steps, and the player that paces them.
 *
 * A lab calls pl_step(r, "narration", ...) at each teachable point, on every
 * rank, then does and prints that step's work: all ranks meet there, and
 * rank 0's narration is shown once the player has released the step before
 * (so the student reads a step and watches its work before moving on):
 *   headless (--no-viz, or no terminal): at once; the narration is printed
 *     as a plain line "[k] text";
 *   play: 1/speed seconds after the step before was shown;
 *   step: when the student advances (pl_player_advance: the UI's space, or
 *     Enter on a terminal without the UI).
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
 * stdin, Enter advances and q quits. NULL when out of memory. */
pl_player *pl_player_create(pl_mode mode, double speed, int headless, FILE *out);
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
/* The current step's number (0 before the first) and narration. */
int pl_player_current(pl_player *p, char *buf, size_t cap);
/* fn(ctx, step, text) each time a step's narration is shown, on rank 0's
 * thread before the step's work runs (a UI records it for its transcript,
 * in order with what the lab prints); it must not call the player. NULL:
 * none. */
void pl_player_set_listener(pl_player *p, void (*fn)(void *ctx, int step, const char *text),
                            void *ctx);

/* Every rank calls it. 0: go on; non-zero: stop (the student quit, or the
 * world failed: r->error says which). Without a player it only meets. */
int pl_step(pl_rank *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
