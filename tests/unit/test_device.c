/*
 * test_device.c — the device seam (paralab/device.h): what the world says it
 * can do agrees with what it does. In the simulated build: the preset's
 * numbers as core/simt has them, the op reports of a memset and two copies
 * (kinds, names, bytes, the modeled clock), the memory counters of a
 * strided copy (32 sectors per request at a stride of 32 floats), device
 * memory in use after an allocation; in the CUDA build: the "not here"
 * answers (-1, 0, "").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "paralab/device.h"
#include "paralab/options.h"
#include "suites.h"
#ifdef PARALAB_SIMULATED_CUDA /* a test may compare the seam with what it wraps */
#include "simt/simt.h"
#endif

static void test_caps_agree(void)
{
    const pl_world_caps *c = pl_device_caps();
    CU_ASSERT_STRING_EQUAL(pl_clock_name(), c->clock);
    pl_hw_model hw;
    if (c->modeled) {
        CU_ASSERT_STRING_EQUAL(c->world, "simulated");
        CU_ASSERT_STRING_EQUAL(c->clock, "modeled");
        CU_ASSERT_EQUAL(c->schedules, 2);
        CU_ASSERT_EQUAL(c->nccl, 0);
        CU_ASSERT_EQUAL(pl_device_model(&hw), 0);
        char want[128];
        snprintf(want, sizeof want, "simulated %s", hw.name);
        CU_ASSERT_STRING_EQUAL(pl_device_label(), want);
        CU_ASSERT_EQUAL(pl_device_memory_is_host(), 1);
    } else {
        CU_ASSERT_STRING_EQUAL(c->world, "real");
        CU_ASSERT_STRING_EQUAL(c->clock, "measured");
        CU_ASSERT_EQUAL(c->schedules, 1);
        CU_ASSERT_EQUAL(pl_device_model(&hw), -1);
        CU_ASSERT_EQUAL(pl_device_now(), 0);
        CU_ASSERT_EQUAL(pl_device_progress(), 0);
        CU_ASSERT_EQUAL(pl_device_mem_stats_begin(), -1);
        CU_ASSERT_STRING_EQUAL(pl_fault_report(), "");
    }
#ifdef PARALAB_SIMULATED_CUDA
    const simt_preset *p = simtCurrentPreset();
    CU_ASSERT_STRING_EQUAL(hw.name, p->name);
    CU_ASSERT_EQUAL(hw.fp32_flops, p->fp32_flops);
    CU_ASSERT_EQUAL(hw.memory_bw, p->memory_bw);
    CU_ASSERT_EQUAL(hw.host_link_bw, p->host_link_bw);
    CU_ASSERT_EQUAL(hw.pinned_efficiency, p->pinned_efficiency);
    CU_ASSERT_EQUAL(hw.pageable_efficiency, p->pageable_efficiency);
    CU_ASSERT_EQUAL(hw.peer_bw, p->peer_bw);
    CU_ASSERT_EQUAL(hw.peer_latency, p->peer_latency);
    CU_ASSERT_EQUAL(hw.launch_latency, p->launch_latency);
    double flops = 0, bw = 0;
    CU_ASSERT_EQUAL(pl_device_peaks(0, &flops, &bw), 0);
    CU_ASSERT_EQUAL(flops, p->fp32_flops);
    CU_ASSERT_EQUAL(bw, p->memory_bw);
#endif
}

typedef struct {
    pl_device_op op[8];
    int n;
} op_log;

static void log_op(const pl_device_op *op, void *user)
{
    op_log *l = user;
    if (l->n < 8) l->op[l->n++] = *op;
}

static void test_op_reports(void)
{
    static op_log log;
    log.n = 0;
    char *d = NULL, h[4096];
    CU_ASSERT_OK(cudaSetDevice(0));
    CU_ASSERT_OK(cudaMalloc((void **)&d, 4096));
    cudaStream_t s;
    CU_ASSERT_OK(cudaStreamCreate(&s));
    int hooked = pl_device_set_op_hook(log_op, &log);
    CU_ASSERT_EQUAL(hooked, pl_device_caps()->op_reports ? 0 : -1);
    CU_ASSERT_OK(cudaMemsetAsync(d, 7, 1024, s));
    CU_ASSERT_OK(cudaMemcpyAsync(h, d, 4096, cudaMemcpyDeviceToHost, s));
    CU_ASSERT_OK(cudaMemcpyAsync(d, h, 512, cudaMemcpyHostToDevice, s));
    CU_ASSERT_OK(cudaStreamSynchronize(s));
    pl_device_flush_ops();
    CU_ASSERT_EQUAL(pl_device_set_op_hook(NULL, NULL), 0);
    CU_ASSERT_EQUAL(h[0], 7);
    CU_ASSERT_EQUAL(h[1023], 7);
    if (hooked == 0) {
        CU_ASSERT_EQUAL_FATAL(log.n, 3);
        static const pl_op_kind kinds[] = {PL_OP_MEMSET, PL_OP_COPY, PL_OP_COPY};
        static const char *const names[] = {"memset", "memcpy D2H", "memcpy H2D"};
        static const double bytes[] = {1024, 4096, 512};
        double prev_end = 0;
        for (int i = 0; i < 3; i++) {
            CU_ASSERT_EQUAL(log.op[i].kind, kinds[i]);
            CU_ASSERT_STRING_EQUAL(log.op[i].name, names[i]);
            CU_ASSERT_EQUAL(log.op[i].bytes, bytes[i]);
            CU_ASSERT_EQUAL(log.op[i].device, 0);
            CU_ASSERT_EQUAL(log.op[i].peer_device, -1);
            CU_ASSERT_EQUAL(log.op[i].error, cudaSuccess);
            /* one stream: each starts when the one before it ends, and takes time */
            CU_ASSERT(log.op[i].modeled_start >= prev_end);
            CU_ASSERT(log.op[i].modeled_end > log.op[i].modeled_start);
            prev_end = log.op[i].modeled_end;
        }
        CU_ASSERT_EQUAL(pl_device_stream_now(s), prev_end);
        CU_ASSERT(pl_device_now() >= prev_end);
    } else {
        CU_ASSERT_EQUAL(log.n, 0);
    }
    cudaStreamDestroy(s);
    cudaFree(d);
}

static void test_mem_counts(void)
{
    float *in = NULL, *out = NULL;
    CU_ASSERT_OK(cudaMalloc((void **)&in, 32 * 32 * sizeof(float)));
    CU_ASSERT_OK(cudaMalloc((void **)&out, 32 * sizeof(float)));
    CU_ASSERT_OK(cudaMemset(in, 0, 32 * 32 * sizeof(float)));
    CU_ASSERT_OK(cudaDeviceSynchronize());
    pl_mem_stats st;
    memset(&st, 0xff, sizeof st);
    int counting = pl_device_mem_stats_begin();
    CU_ASSERT_EQUAL(counting, pl_device_caps()->mem_counts ? 0 : -1);
    CU_ASSERT_OK(tk_strided_copy(out, in, 32, 32)); /* a warp reads 32 floats 128 bytes apart */
    CU_ASSERT_OK(cudaDeviceSynchronize());
    CU_ASSERT_EQUAL(pl_device_mem_stats_end(&st), counting);
    if (counting == 0) {
        CU_ASSERT_EQUAL(st.incomplete, 0);
        CU_ASSERT_EQUAL(st.global_load.requests, 1);
        CU_ASSERT_EQUAL(st.global_load.units, 32); /* 32 sectors: one per thread */
        CU_ASSERT_EQUAL(st.global_store.requests, 1);
        CU_ASSERT_EQUAL(st.global_store.units, 4); /* 32 consecutive floats */
        CU_ASSERT_EQUAL(st.shared_load.requests, 0);
    }
    cudaFree(in);
    cudaFree(out);
}

static void test_memory(void)
{
    size_t used0 = 0, total0 = 0, used1 = 0, total1 = 0;
    CU_ASSERT_EQUAL(pl_device_memory(1, &used0, &total0), 0);
    void *p = NULL;
    CU_ASSERT_OK(cudaMalloc(&p, 1 << 20));
    CU_ASSERT_EQUAL(pl_device_memory(1, &used1, &total1), 0);
    CU_ASSERT_EQUAL(total1, total0);
    CU_ASSERT(used1 >= used0 + (1 << 20));
#ifdef PARALAB_SIMULATED_CUDA
    CU_ASSERT_EQUAL(total0, simtCurrentPreset()->memory_bytes);
    CU_ASSERT_EQUAL(used1, used0 + (1 << 20));
#endif
    cudaFree(p);
    CU_ASSERT_EQUAL(pl_device_memory(9999, &used1, &total1), (int)cudaErrorInvalidDevice);
    cudaSetDevice(0);
}

static void test_options(void)
{
    pl_options o = {.devices = 1, .comm = PL_COMM_AUTO};
    char msg[512];
    o.hw = "no-such-gpu";
    CU_ASSERT_EQUAL(pl_device_apply_options(&o, msg, sizeof msg), -1);
    if (pl_device_caps()->modeled) {
        CU_ASSERT(strncmp(msg, "--hw 'no-such-gpu' is not a preset: choose ", 43) == 0);
        CU_ASSERT(strstr(msg, "H100-SXM") != NULL);
    } else {
        CU_ASSERT(strstr(msg, "--hw 'no-such-gpu': a real GPU is measured, not modeled") == msg);
    }
    o.hw = NULL;
    o.devices = 65;
    CU_ASSERT_EQUAL(pl_device_apply_options(&o, msg, sizeof msg),
                    pl_device_caps()->modeled ? -1 : 0);
    if (pl_device_caps()->modeled) CU_ASSERT(strncmp(msg, "--devices 65: there are ", 24) == 0);
    o.devices = 1;
    o.comm = PL_COMM_NCCL;
    int nccl = pl_device_apply_options(&o, msg, sizeof msg);
    CU_ASSERT_EQUAL(nccl, pl_device_caps()->nccl ? 0 : -1);
    if (nccl) CU_ASSERT(strstr(msg, "--comm nccl needs real GPUs") == msg);
    /* the simulated cluster's nodes: SIMT_GPUS_PER_NODE for the next runtime
     * (this one has read its setting); real GPUs refuse */
    o.comm = PL_COMM_AUTO;
    o.gpus_per_node = 65;
    CU_ASSERT_EQUAL(pl_device_apply_options(&o, msg, sizeof msg), -1);
    if (pl_device_caps()->modeled) {
        CU_ASSERT_STRING_EQUAL(msg, "gpus_per_node 65: a node holds 1 to 64 simulated devices");
    } else {
        CU_ASSERT_STRING_EQUAL(msg, "gpus_per_node 65: real GPUs' nodes are the machine's own "
                                    "(gpus_per_node is for build/sim's simulated cluster)");
    }
    const char *had = getenv("SIMT_GPUS_PER_NODE");
    char saved[32] = "";
    if (had) snprintf(saved, sizeof saved, "%s", had);
    o.gpus_per_node = 4;
    CU_ASSERT_EQUAL(pl_device_apply_options(&o, msg, sizeof msg),
                    pl_device_caps()->modeled ? 0 : -1);
    if (pl_device_caps()->modeled) {
        const char *v = getenv("SIMT_GPUS_PER_NODE");
        CU_ASSERT(v && strcmp(v, "4") == 0);
    }
    if (had)
        setenv("SIMT_GPUS_PER_NODE", saved, 1);
    else
        unsetenv("SIMT_GPUS_PER_NODE"); /* the labs this process starts later: the preset's */
}

/* The MPI engine's two hooks into the modeled clock: a transfer that came
 * from another process (it waits until the sender's time, then for the
 * link's copy of its bytes), and a wait for a stream that leaves the
 * thread's clock where it was. */
static void test_model_transfer(void)
{
#ifdef PARALAB_SIMULATED_CUDA
    const simt_preset *p = simtCurrentPreset();
    cudaStream_t a, b, c;
    CU_ASSERT_EQUAL_FATAL(cudaSetDevice(0), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(cudaStreamSynchronize(a), cudaSuccess);
    double t0 = pl_device_now() + 1e-3, n = 1 << 20;
    /* device 0 to 1 (one node): the peer link, from t0 on */
    CU_ASSERT_EQUAL(pl_device_model_transfer(a, (size_t)n, 0, 1, t0), 0);
    double want = t0 + p->peer_latency + n / p->peer_bw;
    CU_ASSERT_DOUBLE_EQUAL(pl_device_stream_now(a), want, 1e-12);
    /* bytes 0: the wait alone; a time already past: nothing */
    CU_ASSERT_EQUAL(pl_device_model_transfer(a, 0, 0, 1, want + 5e-6), 0);
    CU_ASSERT_DOUBLE_EQUAL(pl_device_stream_now(a), want + 5e-6, 1e-12);
    CU_ASSERT_EQUAL(pl_device_model_transfer(a, 0, 0, 1, t0), 0);
    CU_ASSERT_DOUBLE_EQUAL(pl_device_stream_now(a), want + 5e-6, 1e-12);
    /* another node (devices past this process's own): the network */
    if (p->gpus_per_node > 0) {
        double t1 = pl_device_stream_now(b) + 2e-3;
        int far = p->gpus_per_node;
        CU_ASSERT_EQUAL(pl_device_model_transfer(b, (size_t)n, far, 0, t1), 0);
        CU_ASSERT_DOUBLE_EQUAL(pl_device_stream_now(b),
                               t1 + p->inter_node_latency + n / p->inter_node_bw, 1e-12);
    }
    CU_ASSERT_EQUAL(pl_device_model_transfer((cudaStream_t)(uintptr_t)0x1234, 8, 0, 1, 0), -1);
    CU_ASSERT_EQUAL(cudaGetLastError(), cudaErrorInvalidResourceHandle); /* as a CUDA call's */
    /* a drain leaves the thread's clock: what it queues next on stream c
     * starts at c's own time; a synchronize moves the clock to a's end */
    double a_end = pl_device_stream_now(a), c0 = pl_device_stream_now(c);
    CU_ASSERT(c0 < a_end);
    CU_ASSERT_EQUAL(pl_device_stream_drain(a), cudaSuccess);
    void *buf = NULL;
    CU_ASSERT_EQUAL_FATAL(cudaMalloc(&buf, 4096), cudaSuccess);
    CU_ASSERT_EQUAL(cudaMemsetAsync(buf, 0, 4096, c), cudaSuccess);
    CU_ASSERT(pl_device_stream_now(c) < a_end);
    CU_ASSERT_EQUAL(cudaStreamSynchronize(a), cudaSuccess);
    CU_ASSERT_EQUAL(cudaMemsetAsync(buf, 0, 4096, c), cudaSuccess);
    CU_ASSERT(pl_device_stream_now(c) > a_end);
    CU_ASSERT_EQUAL(cudaStreamSynchronize(c), cudaSuccess);
    cudaFree(buf);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    cudaStreamDestroy(c);
#else
    CU_ASSERT_EQUAL(pl_device_model_transfer(NULL, 8, 0, 1, 1.0), 0); /* nothing on real GPUs */
#endif
}

int register_device_suite(void)
{
    static const unit_test t[] = {
        {"what the world can do agrees with its answers", test_caps_agree},
        {"op reports: kinds, names, bytes, modeled clock", test_op_reports},
        {"memory counters of a strided copy", test_mem_counts},
        {"device memory in use and in all", test_memory},
        {"options of one world", test_options},
        {"a transfer from another process on the modeled clock; a drain", test_model_transfer},
    };
    return UNIT_SUITE("device", t);
}
