/*
 * handles.h — which pointers are live streams and events: a set of
 * pointers, so that the runtime refuses a handle it did not make (or has
 * destroyed) with cudaErrorInvalidResourceHandle without walking every
 * device's list on each call. Open addressing, linear probing, deletion by
 * backward shift; at most half full. Not thread-safe: the runtime lock
 * guards each set (stream.c). Not public; depends on nothing.
 */
#ifndef SIMT_HANDLES_H
#define SIMT_HANDLES_H

#include <stddef.h>

typedef struct simt_handle_set {
    const void **slot; /* NULL: empty */
    size_t cap;        /* a power of two, or 0 before the first add */
    size_t n;
} simt_handle_set;

/* 1 when p is in the set. */
int simt_handles_has(const simt_handle_set *h, const void *p);
/* Adds p (not NULL, not in the set); -1 when out of memory (the set is
 * unchanged), else 0. */
int simt_handles_add(simt_handle_set *h, const void *p);
/* Removes p if it is in the set. */
void simt_handles_remove(simt_handle_set *h, const void *p);

#endif
