/*
 * paralab/device.h — the device seam: everything paralab asks of "the GPU"
 * that differs between a simulated GPU and a real one.
 *
 * Two files implement it, and the build compiles exactly one:
 *   core/device_sim.c   the simulated build (core/simt: the SIMT emulator and
 *                       its simulated CUDA runtime, a modeled clock)
 *   core/device_cuda.c  the CUDA build (real GPUs, the CUDA runtime, CUDA
 *                       events for time)
 * (What is the same in both worlds, written over the CUDA runtime API, is in
 * core/device.c.) Only they know which world this is; labs,
 * the visualiser, the tools and the rest of core ask the seam what the
 * world can do (pl_device_caps) and never test the build. A world that
 * cannot do a thing answers with a value saying so (0, "", -1) or, for an
 * option, with a sentence naming the option and what to use instead.
 *
 * Every function may be called from any thread unless it says otherwise.
 */
#ifndef PARALAB_DEVICE_H
#define PARALAB_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

/* What the world can do. */
typedef struct pl_world_caps {
    const char *world;   /* "simulated" | "real" */
    const char *clock;   /* "modeled" (times from the preset's model) | "measured" (CUDA events) */
    int modeled;         /* 1: times come from a deterministic model, so one run
                            times a kernel exactly (no warm-up, no repeats) */
    int schedules;       /* how many thread orders a check can run a kernel under
                            (pl_device_set_schedule): 2 simulated (forward,
                            reverse), 1 real (the hardware's) */
    int mem_counts;      /* 1: pl_device_mem_stats_* count sectors and wavefronts */
    int op_reports;      /* 1: pl_device_set_op_hook reports every kernel, copy, memset */
    int kernel_progress; /* 1: the host sees a kernel's progress (the CPU-time
                            watchdog, "kernel K is in block B") */
    int lazy_loading;    /* 1: a kernel's first launch loads it (CUDA's lazy
                            loading): run it once untimed before timing it */
    int nccl;            /* 1: NCCL can run the collectives (PL_COMM_NCCL) */
    int records;         /* 1: pl_device_record_* record a kernel (paralab/picture.h's panes) */
} pl_world_caps;
const pl_world_caps *pl_device_caps(void);

/* "modeled" in the simulated world, "measured" on real GPUs. */
const char *pl_clock_name(void);

/* NULL when at least one device answers; otherwise a sentence saying why
 * not and what to do (a simulated GPU that could not start because of an
 * environment variable, SIMT_DEVICES=0, or no CUDA driver/GPU: use the
 * simulated build). `program` names the binary in the advice. For the
 * programs' main functions, before any other CUDA call. */
const char *pl_device_problem(const char *program);

/* The GPU, for the labs' headers: "simulated H100-SXM" or the real device's
 * name (cudaDeviceProp.name of device 0); "" if none answers. */
const char *pl_device_label(void);

/* The roofline of device `device`: peak non-tensor FP32 FLOP/s and peak
 * memory bytes/s.
 *   Simulated: the preset's datasheet numbers (core/simt/presets.c).
 *   Real: from the device's attributes: SMs x FP32 lanes per SM x 2 (a
 *   multiply-add is 2 FLOP) x the peak SM clock; 2 (double data rate) x
 *   the memory clock x the bus width in bytes. FP32 lanes per SM: 64 on
 *   compute capability 6.0, 7.x and 8.0, 128 on the others from 6.1 on
 *   (CUDA C++ Programming Guide, "Arithmetic Instructions": 32-bit
 *   floating-point add, multiply, multiply-add per clock per SM). An H200:
 *   132 x 128 x 2 x 1.98 GHz = 66.9 TFLOP/s, 2 x 3.2 GHz x 768 B = 4.9
 *   TB/s (datasheet: 67 and 4.8).
 * Returns 0, or the cudaError_t of the failing query. */
int pl_device_peaks(int device, double *fp32_flops, double *memory_bw);

/* The hardware the modeled clock charges (the simulated GPU's preset; every
 * number cited to its datasheet in core/simt/presets.c). Units: FLOP/s,
 * bytes/s, seconds. */
typedef struct pl_hw_model {
    const char *name;           /* the preset, e.g. "H100-SXM" (--hw) */
    double fp32_flops;          /* peak non-tensor FP32 FLOP/s */
    double memory_bw;           /* device memory */
    double host_link_bw;        /* PCIe, per direction, theoretical */
    double pinned_efficiency;   /* the fraction of it pinned host memory reaches */
    double pageable_efficiency; /* ... and pageable host memory */
    double peer_bw;             /* GPU to GPU per direction (NVLink; PCIe if none) */
    double peer_latency;        /* per peer transfer */
    double launch_latency;      /* per kernel launch */
    /* The cluster: devices 0..g-1 are node 0, g..2g-1 node 1, ... (g =
     * gpus_per_node, the preset's or pl_options.gpus_per_node's); between
     * nodes a peer copy goes over the network at inter_node_bw per
     * direction after inter_node_latency. */
    int gpus_per_node;
    double inter_node_bw;
    double inter_node_latency;
} pl_hw_model;
/* Fills *out and returns 0; -1 on real GPUs (measured, not modeled). */
int pl_device_model(pl_hw_model *out);

/* Device memory of `device` in bytes: in use and in all. Returns 0, or the
 * cudaError_t of the failing query. On the simulated GPU device memory is
 * host memory (pl_device_caps()->world). Sets the calling thread's current
 * device to `device`. */
int pl_device_memory(int device, size_t *used, size_t *total);
/* 1 when device memory is the host's (the simulated GPU): a size must fit
 * the host's free memory twice over (host and "device" copies). */
int pl_device_memory_is_host(void);

/* The simulator's report of the last kernel fault on the current device:
 * the kernel, its file:line, the block and thread, and what went wrong
 * (an out-of-bounds access with the allocation it missed, a divergent
 * __syncthreads(), a shuffle whose mask leaves out lanes...); "" when
 * there was none, and always "" on real GPUs (a real GPU says only its
 * error code). For the checks' and labs' failure messages. */
const char *pl_fault_report(void);

/* The device allocation holding p, for messages that name a buffer: 1, with
 * the bytes from p to the allocation's end (*room), its size and its device
 * (any pointer may be NULL); 0 when p lies in no live device allocation
 * (freed, never from cudaMalloc, host memory); -1 where the world cannot
 * tell (real GPUs: the runtime API has no such query). */
int pl_device_alloc_room(const void *p, size_t *room, size_t *size, int *device);

/* ---- the modeled clock (seconds; 0 on real GPUs, which have none) ---- */
/* The latest modeled time any device, stream or engine has work until. */
double pl_device_now(void);
/* Modeled time at which the stream's last enqueued work ends. */
double pl_device_stream_now(cudaStream_t s);
/* Moves the calling thread's modeled clock forward to t (a world starts all
 * its ranks at pl_device_now()). Nothing on real GPUs. */
void pl_device_start_clock(double t);
/* cudaStreamSynchronize for a wait the host makes only because the world is
 * emulated (the MPI engine waits for a rank's stream before MPI reads its
 * device buffers, where NCCL's kernels would not hold the host): the
 * calling thread's modeled clock stays where it was, so what it queues next
 * on another stream still overlaps on the modeled clock. On real GPUs,
 * cudaStreamSynchronize. */
cudaError_t pl_device_stream_drain(cudaStream_t s);
/* A transfer whose bytes came by other means (another process's rank, over
 * MPI: the MPI engine), put on the modeled clock as the local engine's peer
 * copy would be: the stream waits until not_before (the sender's modeled
 * time), then for a copy of `bytes` from device src_device to dst_device of
 * the simulated cluster (the world's global numbering; the link between
 * them is the preset's: NVLink inside a node of gpus_per_node, the network
 * across). Nothing is copied. bytes = 0: only the wait until not_before.
 * 0, or -1 (a bad stream). Nothing on real GPUs. */
int pl_device_model_transfer(cudaStream_t s, size_t bytes, int src_device, int dst_device,
                             double not_before);
/* A peer copy of `bytes` from src_device to dst_device on the modeled clock
 * only, costed and reported as cudaMemcpyPeerAsync would be; nothing is
 * copied: the caller reads the source itself, which simulated device
 * memory allows (the local engine's ring reduces straight out of its
 * neighbour's buffer, one pass over memory instead of a copy and then a
 * reduction). 0; -1 on real GPUs (nothing done: copy for real). */
int pl_device_model_peer_copy(cudaStream_t s, size_t bytes, int src_device, int dst_device);
/* cudaEventRecord whose wait is, on the modeled clock, until t (no later
 * than the stream's modeled time; what was queued before it still runs
 * first). Real GPUs: cudaEventRecord. */
cudaError_t pl_device_event_record_at(cudaEvent_t e, cudaStream_t s, double t);

/* ---- op reports (the trace of a rank's kernels and copies) ------------ */
typedef enum { PL_OP_KERNEL, PL_OP_COPY, PL_OP_MEMSET } pl_op_kind;
typedef struct pl_device_op {
    pl_op_kind kind;
    const char *name;        /* the kernel's name, or "memcpy H2D" | "memcpy D2H" |
                                "memcpy D2D" | "memcpy peer" | "memset" */
    int device, peer_device; /* peer_device: a peer copy's other device, else -1 */
    int stream;              /* numbered on its device: 0 the default stream, 1, 2... */
    double bytes, flops;     /* bytes copied or set, a kernel's declared bytes and FLOPs */
    double start, end;       /* measured: wall seconds, CLOCK_MONOTONIC */
    double modeled_start, modeled_end; /* modeled seconds */
    cudaError_t error;                 /* cudaSuccess, or the fault it ended with */
} pl_device_op;
typedef void (*pl_device_op_fn)(const pl_device_op *op, void *user);
/* Sets the calling thread's hook (NULL: none): every kernel, copy and
 * memset the thread enqueues is reported once finished, in program order,
 * on this thread, by pl_device_flush_ops (which the synchronising CUDA calls
 * also run). Returns 0, or -1 where the world cannot (real GPUs: no op
 * reports; pl_device_caps()->op_reports is 0). */
int pl_device_set_op_hook(pl_device_op_fn fn, void *user);
/* Reports the calling thread's finished ops now; returns how many. */
int pl_device_flush_ops(void);

/* ---- checks' tools ----------------------------------------------------- */
/* The order threads run in between barriers, for a check that runs a kernel
 * again to find an order-dependent result: 0 forward, 1 reverse (below
 * pl_device_caps()->schedules; others are ignored). Nothing on real GPUs. */
void pl_device_set_schedule(int kind);

/* The lazy default stream, for a test that must see a race between the
 * legacy default stream (cudaMemset, cudaMemcpy's queue) and a rank's
 * non-blocking stream fail every time: on, the simulated GPU runs legacy-
 * stream work only once something waits for it (simtSetLazyLegacy). 0, or
 * -1 where there is no such thing (real GPUs). */
int pl_device_set_lazy_default_stream(int on);

/* How a warp's accesses reach memory (the simulated GPU's counters; see
 * simtMemStatsBegin in core/simt/include/simt/simt.h for what is counted):
 * per kind, warp-wide requests and the 32-byte sectors (global) or shared
 * wavefronts they cost. */
typedef struct pl_mem_counts {
    unsigned long long requests, units;
} pl_mem_counts;
typedef struct pl_mem_stats {
    pl_mem_counts global_load, global_store, shared_load, shared_store;
    int incomplete; /* 1: some requests were not counted (out of memory) */
} pl_mem_stats;
/* Begins counting the kernels run from now on (every device and stream).
 * Returns 0, or -1 on real GPUs (pl_device_caps()->mem_counts is 0). */
int pl_device_mem_stats_begin(void);
/* Stops counting and fills *out. Returns 0, or -1 as above. */
int pl_device_mem_stats_end(pl_mem_stats *out);

/* ---- a kernel's record (the panes of Labs 01-04, paralab/picture.h) ----
 * What one kernel did, recorded by the simulated GPU while it ran, for a
 * picture drawn from the run itself (never from a second computation on
 * the host): which block ran on which simulated SM, in which wave and
 * when; the accesses chosen threads made to chosen memory (which thread
 * wrote which element, a warp's 32 addresses, a tree's level); the warp
 * shuffles. Nothing is recorded, and nothing costs, unless a lab asks
 * (pl_device_record_begin): the emulator's check of each access tests one
 * flag it already tests for the memory counters.
 *
 * Accesses are seen in every kernel file compiled with the memory checks:
 * in call mode (KASAN_CALLS_FILES in mk/build.mk, every kernel of
 * build/sim-asan) through the emulator's check; with inline checks (the
 * other kernel files of build/sim, the labs' among them) because the
 * record poisons the shadow of the logged memory while its kernel runs.
 * Not seen: files compiled without checks (KASAN_OFF_FILES), and what the
 * instrumentation leaves out: a constant index into a __shared__ array
 * (s[0]), and a second access to one address with no call in between (the
 * store of s[t] += s[t + stride] is seen only as its load). The block
 * schedule and warp ops are seen in every kernel.
 *
 * The SMs: paralab's model of the block scheduler (NVIDIA does not
 * document its own) hands blocks out in linear block order (blockIdx.x
 * fastest), round-robin over the preset's SMs, per_sm at a time on each:
 * per_sm = min(32, max_threads_per_sm / threads per block, shared_per_sm /
 * shared bytes per block) (at least 1; the preset's limits, CUDA C++
 * Programming Guide, "Compute Capabilities"; registers are not modeled;
 * shared bytes: the launch's dynamic shared memory only, as the emulator
 * cannot tell which static __shared__ arrays a kernel uses). Block b runs
 * on SM b mod sms in wave b / (sms x per_sm). */
#define PL_RECORD_MAX_RANGES 4
typedef struct pl_record_config {
    int blocks;          /* 1: record each block's SM, wave and time */
    size_t max_accesses; /* the access log's capacity (at most 1<<24); 0: no log */
    int shared;          /* 1: log shared-memory accesses (static and dynamic) */
    int warp_ops;        /* 1: log the shuffles (max_accesses entries at most: needs it > 0) */
    int nranges;         /* device-memory ranges whose accesses are logged, 0..4 */
    struct {
        const void *lo; /* a device pointer (the start of a cudaMalloc'd array) */
        size_t len;     /* bytes */
    } range[PL_RECORD_MAX_RANGES];
    /* only the accesses and warp ops of linear blocks [block_first,
     * block_first + block_count) (linear = x + gx (y + gy z)); count 0: all */
    unsigned block_first, block_count;
} pl_record_config;

typedef struct pl_record_block {
    uint32_t block;    /* linear block index */
    uint32_t sm, wave; /* the model's SM and wave (above) */
    double start, end; /* measured seconds from the kernel's start, as the emulator ran it */
} pl_record_block;

enum { PL_RECORD_SHARED = 0 }; /* pl_record_access.space; 1 + i: range i */
typedef struct pl_record_access {
    uint32_t block;  /* linear block index */
    uint32_t thread; /* linear thread index in the block (x + bx (y + by z)) */
    uint32_t round;  /* barrier rounds the block had passed (each __syncthreads, __syncwarp
                        or warp op releases one; 0 before the first) */
    uint32_t site;   /* the access's call site, numbered 0, 1... in the order first seen */
    uint64_t offset; /* bytes from range[space-1].lo; shared: from the lowest shared byte
                        any logged access of the block touched */
    uint8_t size;    /* bytes: 1, 2, 4, 8 or 16 */
    uint8_t store;   /* 1: a store (an atomic counts as both: one entry, store 1) */
    uint8_t space;   /* PL_RECORD_SHARED, or 1 + the range's index */
} pl_record_access;

typedef struct pl_record_warp_op {
    uint32_t block, thread, round; /* as pl_record_access */
    int32_t src_lane;              /* the lane it read from (-1: none, out of the width) */
    uint8_t kind;                  /* 0 __shfl_sync, 1 _up, 2 _down, 3 _xor */
} pl_record_warp_op;

typedef struct pl_kernel_record {
    char kernel[48];            /* its name */
    unsigned grid[3], block[3]; /* gridDim, blockDim */
    size_t shmem;               /* dynamic shared bytes */
    int sms, per_sm, waves;     /* the model's SMs, blocks per SM, waves */
    pl_record_block *blocks;    /* in the order they ran; malloc'd */
    size_t nblocks;
    pl_record_access *access; /* in the order made; malloc'd */
    size_t naccess;
    pl_record_warp_op *warp_ops;
    size_t nwarp_ops;
    int truncated; /* 1: the log filled up (or blocks past 1<<20): the rest was not kept */
} pl_kernel_record;

/* Records the first kernel launched from now on (any device, any stream,
 * any host thread: the launch claims it). 0, or -1 on real GPUs
 * (pl_device_caps()->records is 0), for a config out of range (warp_ops
 * without max_accesses, a range with no pointer or length) and while a
 * record is under way (Begin again before End). One record at a time in
 * the process. A kernel that faults keeps what it recorded up to the fault. */
int pl_device_record_begin(const pl_record_config *c);
/* Stops recording and fills *out (zeroed when no kernel ran; call after
 * the kernel has finished: a synchronize). 0, or -1 on real GPUs, out of
 * memory, and while the recorded kernel still runs (*out zeroed; the
 * record goes on: synchronize and call again). */
int pl_device_record_end(pl_kernel_record *out);
void pl_kernel_record_free(pl_kernel_record *r);

/* ---- the watchdog's eyes ----------------------------------------------- */
/* Blocks finished plus ops done on every device since the process began
 * (only grows; 0 on real GPUs). */
unsigned long long pl_device_progress(void);
/* The kernels whose thread has spent more than cpu_seconds of CPU time in one
 * block ("kernel K (file:line) is in blockIdx (..), threadIdx (..)"), into
 * buf; returns the length, 0 when none (always 0 on real GPUs). One caller
 * at a time. */
size_t pl_device_describe_stalled(double cpu_seconds, char *buf, size_t cap);
/* The kernels running now, the same way; takes no lock (safe in a dying
 * process's last report). */
size_t pl_device_describe_running(char *buf, size_t cap);

/* ---- options that exist in one world only ----------------------------- */
struct pl_options;
/* Applies the world-specific options of a parsed command line: --hw (a
 * simulated preset; on real GPUs an error: a real GPU is measured, not
 * modeled), gpus_per_node (the simulated cluster's nodes, 1 to 64 devices
 * each instead of the preset's: SIMT_GPUS_PER_NODE; on real GPUs an error:
 * a real machine's nodes are what they are), --comm nccl (real GPUs only),
 * and --devices against the devices there are. Returns 0, or -1 with a
 * sentence in msg naming the option, the bad value and what is allowed.
 * Call before any other CUDA call (--hw and gpus_per_node are read when the
 * simulated runtime starts). */
int pl_device_apply_options(const struct pl_options *o, char *msg, size_t cap);
/* The --hw presets for --help: "H100-SXM (the default), H200-SXM, ..." in
 * the simulated build (core/simt/presets.c), "" on real GPUs (no --hw
 * there). Returns the length written (as snprintf, within cap). */
size_t pl_device_hw_presets(char *buf, size_t cap);

#endif
