/*
 * device_sim.c — the device seam (paralab/device.h) for the simulated build:
 * the SIMT emulator and its simulated CUDA runtime (core/simt), whose clock
 * is modeled from a hardware preset. The build compiles this file or
 * device_cuda.c, never both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "paralab/comm.h"
#include "paralab/device.h"
#include "paralab/dist.h"
#include "paralab/options.h"
#include "simt/simt.h"

#ifndef PARALAB_SIMULATED_CUDA
#error "device_sim.c is the simulated build's seam: the CUDA build compiles device_cuda.c"
#endif

const pl_world_caps *pl_device_caps(void)
{
    static const pl_world_caps caps = {.world = "simulated",
                                       .clock = "modeled",
                                       .modeled = 1,
                                       .schedules = 2,
                                       .mem_counts = 1,
                                       .op_reports = 1,
                                       .kernel_progress = 1,
                                       .lazy_loading = 0,
                                       .nccl = 0,
                                       .records = 1};
    return &caps;
}

/* The variable that sets the number of simulated devices, as the user
 * spelled it (the old PARALAB_SIM_DEVICES still works). */
static const char *devices_variable(void)
{
    const char *v = simtEnvSource("SIMT_DEVICES");
    return v ? v : "SIMT_DEVICES";
}

const char *pl_device_problem(const char *program)
{
    static _Thread_local char msg[512];
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaSuccess && n > 0) return NULL;
    cudaGetLastError();
    (void)program;
    if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0))
        snprintf(msg, sizeof msg, "no simulated device: %s is 0 (allowed: 1 to %d, default 8)",
                 devices_variable(), SIMT_MAX_DEVICES);
    else
        snprintf(msg, sizeof msg,
                 "the simulated GPU could not start (%s): the line above names the environment "
                 "variable to fix",
                 cudaGetErrorName(e));
    return msg;
}

const char *pl_device_label(void)
{
    static _Thread_local char label[96];
    snprintf(label, sizeof label, "simulated %s", simtCurrentPreset()->name);
    return label;
}

int pl_device_peaks(int device, double *fp32_flops, double *memory_bw)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e) return (int)e;
    if (device < 0 || device >= n) return (int)cudaErrorInvalidDevice;
    const simt_preset *p = simtCurrentPreset();
    *fp32_flops = p->fp32_flops;
    *memory_bw = p->memory_bw;
    return 0;
}

int pl_device_model(pl_hw_model *out)
{
    const simt_preset *p = simtCurrentPreset();
    *out = (pl_hw_model){.name = p->name,
                         .fp32_flops = p->fp32_flops,
                         .memory_bw = p->memory_bw,
                         .host_link_bw = p->host_link_bw,
                         .pinned_efficiency = p->pinned_efficiency,
                         .pageable_efficiency = p->pageable_efficiency,
                         .peer_bw = p->peer_bw,
                         .peer_latency = p->peer_latency,
                         .launch_latency = p->launch_latency,
                         .gpus_per_node = p->gpus_per_node,
                         .inter_node_bw = p->inter_node_bw,
                         .inter_node_latency = p->inter_node_latency};
    return 0;
}

int pl_device_memory_is_host(void) { return 1; }

const char *pl_fault_report(void) { return simtLastFaultReport(); }

int pl_device_alloc_room(const void *p, size_t *room, size_t *size, int *device)
{
    const void *base = NULL;
    size_t len = 0;
    if (!simtAllocRange(p, &base, &len, device)) return 0;
    if (room) *room = len - (size_t)((const char *)p - (const char *)base);
    if (size) *size = len;
    return 1;
}

double pl_device_now(void) { return simtModeledNow(); }
double pl_device_stream_now(cudaStream_t s) { return simtStreamModeledTime(s); }
void pl_device_start_clock(double t) { simtHostClockAdvance(t); }
cudaError_t pl_device_stream_drain(cudaStream_t s) { return simtStreamSynchronizeQuiet(s); }
int pl_device_model_transfer(cudaStream_t s, size_t bytes, int src_device, int dst_device,
                             double not_before)
{
    return simtModelTransfer(s, bytes, src_device, dst_device, not_before) == cudaSuccess ? 0 : -1;
}
int pl_device_model_peer_copy(cudaStream_t s, size_t bytes, int src_device, int dst_device)
{
    return simtModelPeerCopy(s, bytes, src_device, dst_device) == cudaSuccess ? 0 : -1;
}
cudaError_t pl_device_event_record_at(cudaEvent_t e, cudaStream_t s, double t)
{
    return simtEventRecordAt(e, s, t);
}

/* simt reports a simt_op_record; the seam's users get a pl_device_op. */
static _Thread_local pl_device_op_fn op_fn;
static _Thread_local void *op_user;

static void forward_op(const simt_op_record *r, void *user)
{
    (void)user;
    static const pl_op_kind kinds[] = {[SIMT_OP_KERNEL] = PL_OP_KERNEL,
                                       [SIMT_OP_COPY] = PL_OP_COPY,
                                       [SIMT_OP_MEMSET] = PL_OP_MEMSET};
    pl_device_op op = {.kind = kinds[r->kind],
                       .name = r->name,
                       .device = r->device,
                       .peer_device = r->peer_device,
                       .stream = r->stream,
                       .bytes = r->bytes,
                       .flops = r->flops,
                       .start = r->start,
                       .end = r->end,
                       .modeled_start = r->modeled_start,
                       .modeled_end = r->modeled_end,
                       .error = r->error};
    if (op_fn) op_fn(&op, op_user);
}

int pl_device_set_op_hook(pl_device_op_fn fn, void *user)
{
    op_fn = fn;
    op_user = user;
    simtSetOpHook(fn ? forward_op : NULL, NULL);
    return 0;
}

int pl_device_flush_ops(void) { return simtFlushOps(); }

void pl_device_set_schedule(int kind)
{
    if (kind == 0 || kind == 1) simtSetSchedule(kind, 0);
}

int pl_device_set_lazy_default_stream(int on)
{
    simtSetLazyLegacy(on);
    return 0;
}

static pl_mem_counts counts(simt_mem_counts c)
{
    return (pl_mem_counts){.requests = c.requests, .units = c.units};
}

int pl_device_mem_stats_begin(void)
{
    simtMemStatsBegin();
    return 0;
}

int pl_device_mem_stats_end(pl_mem_stats *out)
{
    simt_mem_stats st;
    simtMemStatsEnd(&st);
    *out = (pl_mem_stats){.global_load = counts(st.global_load),
                          .global_store = counts(st.global_store),
                          .shared_load = counts(st.shared_load),
                          .shared_store = counts(st.shared_store),
                          .incomplete = st.incomplete};
    return 0;
}

int pl_device_record_begin(const pl_record_config *c)
{
    if (!c || c->nranges < 0 || c->nranges > PL_RECORD_MAX_RANGES) return -1;
    simt_record_config sc = {.blocks = c->blocks,
                             .max_accesses = c->max_accesses,
                             .shared = c->shared,
                             .warp_ops = c->warp_ops,
                             .nranges = c->nranges,
                             .block_first = c->block_first,
                             .block_count = c->block_count};
    for (int i = 0; i < c->nranges; i++) {
        sc.range[i].lo = c->range[i].lo;
        sc.range[i].len = c->range[i].len;
    }
    return simtRecordBegin(&sc);
}

/* A copy of n elements of `size` bytes (NULL for none); *fail on no memory. */
static void *alloc_array(size_t n, size_t size, int *fail)
{
    if (!n) return NULL;
    void *p = malloc(n * size);
    if (!p) *fail = 1;
    return p;
}

int pl_device_record_end(pl_kernel_record *out)
{
    simt_record r;
    *out = (pl_kernel_record){0};
    if (simtRecordEnd(&r) != 0) return -1;
    snprintf(out->kernel, sizeof out->kernel, "%s", r.kernel);
    out->grid[0] = r.grid.x, out->grid[1] = r.grid.y, out->grid[2] = r.grid.z;
    out->block[0] = r.block.x, out->block[1] = r.block.y, out->block[2] = r.block.z;
    out->shmem = r.shmem;
    out->sms = r.sms, out->per_sm = r.per_sm, out->waves = r.waves;
    out->truncated = r.truncated;
    int fail = 0;
    out->blocks = alloc_array(r.nblocks, sizeof *out->blocks, &fail);
    out->access = alloc_array(r.naccess, sizeof *out->access, &fail);
    out->warp_ops = alloc_array(r.nwarp_ops, sizeof *out->warp_ops, &fail);
    if (fail) {
        pl_kernel_record_free(out);
        simtRecordFree(&r);
        return -1;
    }
    for (size_t i = 0; i < r.nblocks; i++) {
        const simt_record_block *b = &r.blocks[i];
        out->blocks[i] = (pl_record_block){b->block, b->sm, b->wave, b->start, b->end};
    }
    out->nblocks = r.nblocks;
    for (size_t i = 0; i < r.naccess; i++) {
        const simt_record_access *a = &r.access[i];
        out->access[i] = (pl_record_access){.block = a->block,
                                            .thread = a->thread,
                                            .round = a->round,
                                            .site = a->site,
                                            .offset = a->offset,
                                            .size = a->size,
                                            .store = a->store,
                                            .space = a->space};
    }
    out->naccess = r.naccess;
    for (size_t i = 0; i < r.nwarp_ops; i++) {
        const simt_record_warp_op *w = &r.warp_ops[i];
        out->warp_ops[i] = (pl_record_warp_op){.block = w->block,
                                               .thread = w->thread,
                                               .round = w->round,
                                               .src_lane = w->src_lane,
                                               .kind = w->kind};
    }
    out->nwarp_ops = r.nwarp_ops;
    simtRecordFree(&r);
    return 0;
}

void pl_kernel_record_free(pl_kernel_record *r)
{
    if (!r) return;
    free(r->blocks);
    free(r->access);
    free(r->warp_ops);
    *r = (pl_kernel_record){0};
}

unsigned long long pl_device_progress(void) { return simtProgress(); }

size_t pl_device_describe_stalled(double cpu_seconds, char *buf, size_t cap)
{
    return simtDescribeStalled(cpu_seconds, buf, cap);
}

size_t pl_device_describe_running(char *buf, size_t cap) { return simtDescribeRunning(buf, cap); }

size_t pl_device_hw_presets(char *buf, size_t cap)
{
    size_t n = 0;
    if (cap) buf[0] = '\0';
    const simt_preset *const *p = simtPresets();
    for (int i = 0; p[i] && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s%s",
                              i == 0     ? ""
                              : p[i + 1] ? ", "
                                         : " or ",
                              p[i]->name, i == 0 ? " (the default)" : "");
    return n < cap ? n : cap ? cap - 1 : 0;
}

int pl_device_apply_options(const pl_options *o, char *msg, size_t cap)
{
    if (o->hw) {
        if (!simtPresetByName(o->hw)) {
            size_t n = (size_t)snprintf(msg, cap, "--hw '%s' is not a preset: choose", o->hw);
            for (const simt_preset *const *p = simtPresets(); *p && n < cap; p++)
                n += (size_t)snprintf(msg + n, cap - n, " %s", (*p)->name);
            return -1;
        }
        setenv("SIMT_GPU", o->hw, 1); /* read when the runtime starts */
    }
    if (o->gpus_per_node) {
        if (o->gpus_per_node < 1 || o->gpus_per_node > SIMT_MAX_DEVICES) {
            snprintf(msg, cap, "gpus_per_node %d: a node holds 1 to %d simulated devices",
                     o->gpus_per_node, SIMT_MAX_DEVICES);
            return -1;
        }
        char v[16];
        snprintf(v, sizeof v, "%d", o->gpus_per_node);
        setenv("SIMT_GPUS_PER_NODE", v, 1); /* the same */
    }
    if (o->comm == PL_COMM_NCCL) {
        snprintf(msg, cap,
                 "--comm nccl needs real GPUs (build/cuda); the simulated GPU has the "
                 "local engine only");
        return -1;
    }
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e || count < 1) {
        snprintf(msg, cap, "no device: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
        return -1;
    }
    /* under mpirun each process runs --ranks-per-process of the ranks, one
     * of its own devices each (paralab/dist.h) */
    if (pl_dist_active()) {
        int t = o->ranks_per_process ? o->ranks_per_process : 1;
        if (t > count) {
            snprintf(msg, cap,
                     "--ranks-per-process %d: each process has %d simulated device%s (%s, up to "
                     "%d, makes more)",
                     t, count, count == 1 ? "" : "s", devices_variable(), SIMT_MAX_DEVICES);
            return -1;
        }
    } else if (o->devices > count) {
        snprintf(msg, cap,
                 "--devices %d: there are %d simulated devices (%s, up to %d, makes more)",
                 o->devices, count, devices_variable(), SIMT_MAX_DEVICES);
        return -1;
    }
    return 0;
}
