/*
 * handles.c — the set of live stream and event pointers (handles.h).
 */
#include "handles.h"

#include <stdint.h>
#include <stdlib.h>

/* Fibonacci hashing of the address (allocations are 16-byte aligned: the
 * low bits carry nothing). */
static size_t home(const void *p, size_t cap)
{
    uint64_t x = (uint64_t)(uintptr_t)p >> 4;
    return (size_t)((x * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

int simt_handles_has(const simt_handle_set *h, const void *p)
{
    if (!h->cap || !p) return 0;
    for (size_t i = home(p, h->cap);; i = (i + 1) & (h->cap - 1)) {
        if (h->slot[i] == p) return 1;
        if (!h->slot[i]) return 0;
    }
}

static void put(const void **slot, size_t cap, const void *p)
{
    size_t i = home(p, cap);
    while (slot[i]) i = (i + 1) & (cap - 1);
    slot[i] = p;
}

int simt_handles_add(simt_handle_set *h, const void *p)
{
    if (2 * (h->n + 1) > h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        const void **slot = calloc(cap, sizeof *slot);
        if (!slot) return -1;
        for (size_t i = 0; i < h->cap; i++)
            if (h->slot[i]) put(slot, cap, h->slot[i]);
        free(h->slot);
        h->slot = slot;
        h->cap = cap;
    }
    put(h->slot, h->cap, p);
    h->n++;
    return 0;
}

void simt_handles_remove(simt_handle_set *h, const void *p)
{
    if (!simt_handles_has(h, p)) return;
    size_t mask = h->cap - 1, i = home(p, h->cap);
    while (h->slot[i] != p) i = (i + 1) & mask;
    h->slot[i] = NULL;
    h->n--;
    /* backward shift: move up each later entry of the run whose home does
     * not lie cyclically in (i, j], so that no lookup stops at the hole */
    for (size_t j = (i + 1) & mask; h->slot[j]; j = (j + 1) & mask) {
        size_t k = home(h->slot[j], h->cap);
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            h->slot[i] = h->slot[j];
            h->slot[j] = NULL;
            i = j;
        }
    }
}
