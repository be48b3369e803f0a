/*
 * blocks_ref.h — the block model on the host in double (tests only).
 */
#ifndef TEST_BLOCKS_REF_H
#define TEST_BLOCKS_REF_H

#include "paralab/blocks.h"

/* One step of the whole model (parameters w, pl_blocks_count floats, the
 * whole layout) on X[B, inputs] with labels y: logits[B, classes], the
 * gradients of scale * sum(losses) (grads, pl_blocks_count doubles);
 * returns sum(losses). */
double ref_blocks_step(const pl_blocks_config *c, const float *w, const float *X, const int *y,
                       int B, double scale, double *logits, double *grads);

#endif
