/*
 * harness/shared.h — a buffer the rank threads of one process share (a
 * Part II lab's rows of every rank's data, gathered to rank 0 under
 * mpirun: each process has its own), made by the first rank that takes it
 * and freed by the last that leaves:
 *
 *   pl_lab_shared_init(&s)                         once, before the world
 *   pl_lab_shared_take(&s, make, ctx, err, cap)    each rank: the first runs
 *                                                  make(ctx, err, cap)
 *   pl_lab_shared_leave(&s, release, ctx)          each rank that took it:
 *                                                  the last runs release(ctx)
 */
#ifndef PARALAB_HARNESS_SHARED_H
#define PARALAB_HARNESS_SHARED_H

#include <pthread.h>
#include <stddef.h>

typedef struct pl_lab_shared {
    pthread_mutex_t lock;
    int users;
} pl_lab_shared;

static inline void pl_lab_shared_init(pl_lab_shared *s)
{
    pthread_mutex_init(&s->lock, NULL);
    s->users = 0;
}

/* 0, or make's -1 (its reason in err): the caller is then no user. */
static inline int pl_lab_shared_take(pl_lab_shared *s,
                                     int (*make)(void *ctx, char *err, size_t cap), void *ctx,
                                     char *err, size_t cap)
{
    pthread_mutex_lock(&s->lock);
    int rc = s->users ? 0 : make(ctx, err, cap);
    if (!rc) s->users++;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static inline void pl_lab_shared_leave(pl_lab_shared *s, void (*release)(void *ctx), void *ctx)
{
    pthread_mutex_lock(&s->lock);
    if (--s->users == 0) release(ctx);
    pthread_mutex_unlock(&s->lock);
}

#endif
