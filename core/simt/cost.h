/*
 * cost.h — the cost model (cost.c): the modeled duration of every op from
 * its declared work and the device's preset, and the engine it occupies.
 * Pure functions of the preset; the stream queue (stream.c) places the
 * result on the modeled clock. Not public.
 */
#ifndef SIMT_COST_H
#define SIMT_COST_H

#include <stddef.h>

#include "simt/simt.h"

/* What an op occupies on its device while it runs (modeled): one op at a
 * time per engine. */
enum simt_engine {
    ENG_COMPUTE,
    ENG_H2D,
    ENG_D2H,
    ENG_D2D,
    ENG_PEER,       /* NVLink (or PCIe) within a node */
    ENG_NET,        /* the GPU's network port, between nodes */
    ENG_COMPUTE_HI, /* kernels of high-priority streams: on the SMs the others leave */
    ENG_COUNT,
    ENG_NONE = -1
};

/* The op records' name of a copy on that engine ("memcpy H2D"...). */
const char *simt_engine_label(int engine);

/* A copy of n bytes of the given (resolved) kind, host memory pageable or
 * pinned: its engine and duration (ENG_NONE and 0 for host to host). */
void simt_cost_copy(const simt_preset *h, enum cudaMemcpyKind kind, size_t n, int pageable_src,
                    int pageable_dst, int *engine, double *duration);

/* 1 if the preset's GPUs have a peer link; 1 if devices a and b share a node. */
int simt_peer_capable(const simt_preset *h);
int simt_same_node(const simt_preset *h, int a, int b);

/* A copy of n bytes from device sd to device dd (peer_enabled: either has
 * enabled peer access to the other): its engine and duration. */
double simt_cost_peer(const simt_preset *h, size_t n, int sd, int dd, int peer_enabled,
                      int *engine);

/* A memset of n bytes (on the compute engine). */
double simt_cost_memset(const simt_preset *h, size_t n);

/* A kernel: the launch latency, plus (has_cost: simtLaunchCost declared its
 * work) the longer of its flops and its bytes at the preset's rates. */
double simt_cost_kernel(const simt_preset *h, int has_cost, double flops, double bytes);

#endif
