/*
 * device_cuda.c — the device seam (paralab/device.h) for the CUDA build: real
 * GPUs, timed by CUDA events. What only the simulated GPU can do (a modeled
 * clock, op reports, schedules, memory counters, a kernel's progress) is
 * answered "not here" (0, "", -1), and its options with a sentence saying
 * so. The build compiles this file or device_sim.c, never both.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "paralab/comm.h"
#include "paralab/device.h"
#include "paralab/dist.h"
#include "paralab/options.h"

#ifdef PARALAB_SIMULATED_CUDA
#error "device_cuda.c is the CUDA build's seam: the simulated build compiles device_sim.c"
#endif

const pl_world_caps *pl_device_caps(void)
{
    static const pl_world_caps caps = {.world = "real",
                                       .clock = "measured",
                                       .modeled = 0,
                                       .schedules = 1,
                                       .mem_counts = 0,
                                       .op_reports = 0,
                                       .kernel_progress = 0,
                                       .lazy_loading = 1,
                                       .nccl = 1,
                                       .records = 0};
    return &caps;
}

const char *pl_device_problem(const char *program)
{
    static _Thread_local char msg[512];
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaSuccess && n > 0) return NULL;
    cudaGetLastError();
    snprintf(msg, sizeof msg,
             "no usable CUDA device: %s (%s). On a machine without an NVIDIA GPU and driver, run "
             "the simulated build: build/sim/bin/%s",
             cudaGetErrorName(e), cudaGetErrorString(e), program);
    return msg;
}

const char *pl_device_label(void)
{
    static _Thread_local char label[256];
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        cudaGetLastError();
        return "";
    }
    snprintf(label, sizeof label, "%s", prop.name);
    return label;
}

int pl_device_peaks(int device, double *fp32_flops, double *memory_bw)
{
    int sms, major, minor, clock_khz, mem_khz, bus_bits;
    cudaError_t e;
    if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) ||
        (e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device)) ||
        (e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device)) ||
        (e = cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device)) ||
        (e = cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device)) ||
        (e = cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device)))
        return (int)e;
    int lanes = (major == 6 && minor == 0) || major == 7 || (major == 8 && minor == 0) || major < 6
                    ? 64
                    : 128;
    *fp32_flops = (double)sms * lanes * 2.0 * clock_khz * 1e3;
    *memory_bw = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0);
    return 0;
}

int pl_device_model(pl_hw_model *out)
{
    (void)out;
    return -1;
}

int pl_device_memory_is_host(void) { return 0; }

const char *pl_fault_report(void) { return ""; }

int pl_device_alloc_room(const void *p, size_t *room, size_t *size, int *device)
{
    (void)p, (void)room, (void)size, (void)device;
    return -1;
}

double pl_device_now(void) { return 0; }
double pl_device_stream_now(cudaStream_t s)
{
    (void)s;
    return 0;
}
void pl_device_start_clock(double t) { (void)t; }
cudaError_t pl_device_stream_drain(cudaStream_t s) { return cudaStreamSynchronize(s); }
int pl_device_model_transfer(cudaStream_t s, size_t bytes, int src_device, int dst_device,
                             double not_before)
{
    (void)s, (void)bytes, (void)src_device, (void)dst_device, (void)not_before;
    return 0;
}

int pl_device_model_peer_copy(cudaStream_t s, size_t bytes, int src_device, int dst_device)
{
    (void)s, (void)bytes, (void)src_device, (void)dst_device;
    return -1;
}

cudaError_t pl_device_event_record_at(cudaEvent_t e, cudaStream_t s, double t)
{
    (void)t;
    return cudaEventRecord(e, s);
}

int pl_device_set_op_hook(pl_device_op_fn fn, void *user)
{
    (void)user;
    return fn ? -1 : 0;
}

int pl_device_flush_ops(void) { return 0; }

void pl_device_set_schedule(int kind) { (void)kind; }

int pl_device_set_lazy_default_stream(int on)
{
    (void)on;
    return -1;
}

int pl_device_mem_stats_begin(void) { return -1; }

int pl_device_mem_stats_end(pl_mem_stats *out)
{
    (void)out;
    return -1;
}

int pl_device_record_begin(const pl_record_config *c)
{
    (void)c;
    return -1;
}

int pl_device_record_end(pl_kernel_record *out)
{
    *out = (pl_kernel_record){0};
    return -1;
}

void pl_kernel_record_free(pl_kernel_record *r)
{
    if (!r) return;
    free(r->blocks);
    free(r->access);
    free(r->warp_ops);
    *r = (pl_kernel_record){0};
}

unsigned long long pl_device_progress(void) { return 0; }

size_t pl_device_describe_stalled(double cpu_seconds, char *buf, size_t cap)
{
    (void)cpu_seconds;
    if (cap) buf[0] = '\0';
    return 0;
}

size_t pl_device_describe_running(char *buf, size_t cap)
{
    if (cap) buf[0] = '\0';
    return 0;
}

size_t pl_device_hw_presets(char *buf, size_t cap)
{
    if (cap) buf[0] = '\0';
    return 0;
}

int pl_device_apply_options(const pl_options *o, char *msg, size_t cap)
{
    if (o->hw) {
        snprintf(msg, cap, "--hw '%s': a real GPU is measured, not modeled (--hw is for build/sim)",
                 o->hw);
        return -1;
    }
    if (o->gpus_per_node) {
        snprintf(msg, cap,
                 "gpus_per_node %d: real GPUs' nodes are the machine's own (gpus_per_node is for "
                 "build/sim's simulated cluster)",
                 o->gpus_per_node);
        return -1;
    }
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e || count < 1) {
        snprintf(msg, cap, "no device: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
        return -1;
    }
    /* under mpirun the world spans processes and hosts: NCCL over MPI
     * checks each host's GPUs (pl_comm_create_dist) */
    if (o->comm == PL_COMM_NCCL && o->devices > count && !pl_dist_active()) {
        snprintf(msg, cap,
                 "--devices %d with --comm nccl: NCCL needs one GPU per rank and there are %d "
                 "(use --comm local to share GPUs)",
                 o->devices, count);
        return -1;
    }
    return 0;
}
