/*
 * cost.c — the cost model: see cost.h. Every rate and latency comes from the
 * preset (presets.c says where each number comes from); nothing here is
 * measured, so the modeled clock is the same on every machine.
 */
#include "cost.h"

static double maxd(double a, double b) { return a > b ? a : b; }

static const char *const engine_label[ENG_COUNT] = {"kernel",
                                                    "memcpy H2D",
                                                    "memcpy D2H",
                                                    "memcpy D2D",
                                                    "memcpy peer",
                                                    "memcpy peer (network)",
                                                    "kernel (high priority)"};

const char *simt_engine_label(int engine)
{
    return engine >= 0 && engine < ENG_COUNT ? engine_label[engine] : "memcpy";
}

void simt_cost_copy(const simt_preset *h, enum cudaMemcpyKind kind, size_t n, int pageable_src,
                    int pageable_dst, int *engine, double *duration)
{
    double link = h->host_link_bw;
    switch (kind) {
    case cudaMemcpyHostToDevice:
        *engine = ENG_H2D;
        *duration = h->copy_latency + (double)n / (link * (pageable_src ? h->pageable_efficiency
                                                                        : h->pinned_efficiency));
        break;
    case cudaMemcpyDeviceToHost:
        *engine = ENG_D2H;
        *duration = h->copy_latency + (double)n / (link * (pageable_dst ? h->pageable_efficiency
                                                                        : h->pinned_efficiency));
        break;
    case cudaMemcpyDeviceToDevice:
        *engine = ENG_D2D;
        *duration = h->copy_latency + 2.0 * (double)n / h->memory_bw; /* read + write */
        break;
    default:
        *engine = ENG_NONE;
        *duration = 0;
        break;
    }
}

int simt_peer_capable(const simt_preset *h) { return h->peer_bw > 0; }

int simt_same_node(const simt_preset *h, int a, int b)
{
    int g = h->gpus_per_node;
    return g <= 0 || a / g == b / g;
}

double simt_cost_peer(const simt_preset *h, size_t n, int sd, int dd, int peer_enabled, int *engine)
{
    *engine = ENG_PEER;
    if (dd == sd) {
        *engine = ENG_D2D;
        return h->copy_latency + 2.0 * (double)n / h->memory_bw;
    }
    if (!simt_same_node(h, sd, dd)) { /* GPU to GPU over the network (RDMA) */
        *engine = ENG_NET;
        return h->inter_node_latency + (double)n / h->inter_node_bw;
    }
    if (simt_peer_capable(h) && peer_enabled) return h->peer_latency + (double)n / h->peer_bw;
    /* staged through host memory: down one PCIe link and up another */
    return 2 * h->copy_latency + 2.0 * (double)n / (h->host_link_bw * h->pinned_efficiency);
}

double simt_cost_memset(const simt_preset *h, size_t n)
{
    return h->launch_latency + (double)n / h->memory_bw;
}

double simt_cost_kernel(const simt_preset *h, int has_cost, double flops, double bytes)
{
    double t = h->launch_latency;
    if (has_cost) t += maxd(flops / h->fp32_flops, bytes / h->memory_bw);
    return t;
}
