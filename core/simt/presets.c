/*
 * presets.c — hardware presets for the simulated GPU's modeled clock.
 *
 * Sources (cited per number below):
 *   [H100]  NVIDIA H100 Tensor Core GPU datasheet (SXM5 column), 2023.
 *   [H200]  NVIDIA H200 Tensor Core GPU datasheet (SXM column), 2024.
 *   [A100]  NVIDIA A100 Tensor Core GPU datasheet (80GB SXM column), 2021.
 *   [4090]  NVIDIA Ada GPU architecture whitepaper v2.1, Appendix A (RTX 4090).
 *   [CPG]   CUDA C++ Programming Guide, "Compute Capabilities" table
 *           (threads, shared memory per SM and per block with opt-in).
 *   [PCIe]  PCI-SIG: Gen4 x16 = 32 GB/s, Gen5 x16 = 64 GB/s per direction.
 *   [DGXH]  NVIDIA DGX H100 / DGX H200 datasheets: 8 GPUs per system, and for
 *           the compute fabric one single-port ConnectX-7 per GPU at
 *           400 Gb/s (InfiniBand NDR) = 50 GB/s each way.
 *   [DGXA]  NVIDIA DGX A100 datasheet: 8 GPUs per system, one single-port
 *           ConnectX-6 per GPU at 200 Gb/s (InfiniBand HDR) = 25 GB/s.
 *   [MODEL] paralab's modeling assumptions, not datasheet numbers: pinned
 *           copies reach ~80 % of the PCIe link, pageable ~45 %; kernel
 *           launch ~3 us; one NVLink transfer ~1.5 us; one PCIe copy ~3 us;
 *           one InfiniBand transfer ~4 us; an RTX 4090 box is one node
 *           (typical figures: shared/REFERENCES.md, "Latencies to model").
 */
#include <string.h>
#include <strings.h>

#include "simt/simt.h"

/* clang-format off: the tables keep one number and its source per line */
#define GB 1e9
#define TFLOPS 1e12
#define KiB 1024u
#define MiB (1024u * 1024u)

static const simt_preset h100 = {
    .name = "H100-SXM",
    .device_name = "NVIDIA H100 80GB HBM3 (simulated)",
    .cc_major = 9,
    .cc_minor = 0,                              /* [CPG] */
    .sm_count = 132,                            /* [H100] */
    .memory_bytes = 80ull * 1000 * 1000 * 1000, /* [H100] 80 GB */
    .fp32_flops = 67 * TFLOPS,                  /* [H100] FP32 */
    .bf16_tensor_flops = 989 * TFLOPS,          /* [H100] BF16 dense */
    .memory_bw = 3.35e12,                       /* [H100] 3.35 TB/s */
    .host_link_bw = 64 * GB,                    /* [PCIe] Gen5 x16 */
    .pinned_efficiency = 0.80,                  /* [MODEL] */
    .pageable_efficiency = 0.45,                /* [MODEL] */
    .peer_bw = 450 * GB,                        /* [H100] NVLink 900 GB/s total */
    .peer_latency = 1.5e-6,                     /* [MODEL] */
    .gpus_per_node = 8,                         /* [DGXH] */
    .inter_node_bw = 50 * GB,                   /* [DGXH] NDR 400 Gb/s per GPU */
    .inter_node_latency = 4e-6,                 /* [MODEL] */
    .launch_latency = 3e-6,                     /* [MODEL] */
    .copy_latency = 3e-6,                       /* [MODEL] */
    .l2_bytes = 50 * MiB,                       /* [H100] 50 MB L2 */
    .memory_bus_bits = 5120,                    /* [H100] */
    .max_threads_per_sm = 2048,                 /* [CPG] 9.0 */
    .shared_per_sm = 228 * KiB,                 /* [CPG] 9.0 */
    .shared_per_block_optin = 227 * KiB,        /* [CPG] 9.0 */
};

static const simt_preset h200 = {
    .name = "H200-SXM",
    .device_name = "NVIDIA H200 (simulated)",
    .cc_major = 9,
    .cc_minor = 0,                               /* [CPG] */
    .sm_count = 132,                             /* [H200] same GH100 as H100 SXM */
    .memory_bytes = 141ull * 1000 * 1000 * 1000, /* [H200] 141 GB HBM3e */
    .fp32_flops = 67 * TFLOPS,                   /* [H200] */
    .bf16_tensor_flops = 989 * TFLOPS,           /* [H200] */
    .memory_bw = 4.8e12,                         /* [H200] 4.8 TB/s */
    .host_link_bw = 64 * GB,                     /* [PCIe] Gen5 x16 */
    .pinned_efficiency = 0.80,                   /* [MODEL] */
    .pageable_efficiency = 0.45,                 /* [MODEL] */
    .peer_bw = 450 * GB,                         /* [H200] NVLink 900 GB/s total */
    .peer_latency = 1.5e-6,                      /* [MODEL] */
    .gpus_per_node = 8,                          /* [DGXH] */
    .inter_node_bw = 50 * GB,                    /* [DGXH] NDR 400 Gb/s per GPU */
    .inter_node_latency = 4e-6,                  /* [MODEL] */
    .launch_latency = 3e-6,                      /* [MODEL] */
    .copy_latency = 3e-6,                        /* [MODEL] */
    .l2_bytes = 50 * MiB,                        /* [H200] */
    .memory_bus_bits = 6144,                     /* [H200] six HBM3e stacks */
    .max_threads_per_sm = 2048,                  /* [CPG] 9.0 */
    .shared_per_sm = 228 * KiB,                  /* [CPG] 9.0 */
    .shared_per_block_optin = 227 * KiB,         /* [CPG] 9.0 */
};

static const simt_preset a100 = {
    .name = "A100-SXM-80GB",
    .device_name = "NVIDIA A100-SXM4-80GB (simulated)",
    .cc_major = 8,
    .cc_minor = 0,                              /* [CPG] */
    .sm_count = 108,                            /* [A100] */
    .memory_bytes = 80ull * 1000 * 1000 * 1000, /* [A100] 80 GB HBM2e */
    .fp32_flops = 19.5 * TFLOPS,                /* [A100] */
    .bf16_tensor_flops = 312 * TFLOPS,          /* [A100] dense */
    .memory_bw = 2.039e12,                      /* [A100] 2,039 GB/s */
    .host_link_bw = 32 * GB,                    /* [PCIe] Gen4 x16 */
    .pinned_efficiency = 0.80,                  /* [MODEL] */
    .pageable_efficiency = 0.45,                /* [MODEL] */
    .peer_bw = 300 * GB,                        /* [A100] NVLink 600 GB/s total */
    .peer_latency = 1.5e-6,                     /* [MODEL] */
    .gpus_per_node = 8,                         /* [DGXA] */
    .inter_node_bw = 25 * GB,                   /* [DGXA] HDR 200 Gb/s per GPU */
    .inter_node_latency = 4e-6,                 /* [MODEL] */
    .launch_latency = 3e-6,                     /* [MODEL] */
    .copy_latency = 3e-6,                       /* [MODEL] */
    .l2_bytes = 40 * MiB,                       /* [A100] 40 MB L2 */
    .memory_bus_bits = 5120,                    /* [A100] */
    .max_threads_per_sm = 2048,                 /* [CPG] 8.0 */
    .shared_per_sm = 164 * KiB,                 /* [CPG] 8.0 */
    .shared_per_block_optin = 163 * KiB,        /* [CPG] 8.0 */
};

static const simt_preset rtx4090 = {
    .name = "RTX-4090",
    .device_name = "NVIDIA GeForce RTX 4090 (simulated)",
    .cc_major = 8,
    .cc_minor = 9,                              /* [CPG] */
    .sm_count = 128,                            /* [4090] */
    .memory_bytes = 24ull * 1000 * 1000 * 1000, /* [4090] 24 GB GDDR6X */
    .fp32_flops = 82.6 * TFLOPS,                /* [4090] */
    .bf16_tensor_flops = 165.2 * TFLOPS,        /* [4090] BF16, FP32 accumulate, dense */
    .memory_bw = 1.008e12,                      /* [4090] 1,008 GB/s */
    .host_link_bw = 32 * GB,                    /* [PCIe] Gen4 x16 */
    .pinned_efficiency = 0.80,                  /* [MODEL] */
    .pageable_efficiency = 0.45,                /* [MODEL] */
    .peer_bw = 0,                               /* [4090] no NVLink, no peer access */
    .peer_latency = 3e-6,                       /* [MODEL] through host memory */
    .gpus_per_node = 0,                         /* [MODEL] one node, no network */
    .inter_node_bw = 0,
    .inter_node_latency = 0,
    .launch_latency = 3e-6,             /* [MODEL] */
    .copy_latency = 3e-6,               /* [MODEL] */
    .l2_bytes = 72 * MiB,               /* [4090] 72 MB L2 */
    .memory_bus_bits = 384,             /* [4090] */
    .max_threads_per_sm = 1536,         /* [CPG] 8.9 */
    .shared_per_sm = 100 * KiB,         /* [CPG] 8.9 */
    .shared_per_block_optin = 99 * KiB, /* [CPG] 8.9 */
};

/* clang-format on */
static const simt_preset *const presets[] = {&h100, &h200, &a100, &rtx4090, NULL};

const simt_preset *const *simtPresets(void) { return presets; }

const simt_preset *simtPresetByName(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; presets[i]; i++)
        if (strcasecmp(presets[i]->name, name) == 0) return presets[i];
    return NULL;
}
