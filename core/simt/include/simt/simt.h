/*
 * simt/simt.h — the SIMT emulator and the simulated GPU (build/sim only).
 *
 * core/simt is a simulated GPU that any C program can use; it knows nothing
 * of paralab. It has two halves:
 *
 *   emu.c      runs a kernel's blocks one at a time on the calling OS thread.
 *              The threads of a block are fibers (created with ucontext,
 *              switched with setjmp/longjmp: no system call); they run one
 *              after another between barriers, in the order SIMT_SCHEDULE
 *              names (forward | reverse | random:SEED). A block whose thread
 *              0 finishes without reaching a barrier runs its other threads
 *              as plain calls, with no fiber switch, until one reaches a
 *              barrier or warp operation (SIMT_PLAIN=0: never).
 *              Every memory access of a kernel is checked (see emu.c).
 *   api.c      the CUDA runtime API of <cuda_runtime.h> over N simulated
 *              devices: memory, streams (one worker OS thread each), events,
 *              and a modeled clock from a hardware preset (api.c lists the
 *              files it stands on).
 *
 * Its settings come from the environment, read at the first runtime call:
 * SIMT_DEVICES, SIMT_GPU, SIMT_MEM_MB, SIMT_QUIET, SIMT_PLAIN, SIMT_SCHEDULE,
 * SIMT_RACES
 * (and SIMT_STACK_KB, per OS thread); docs/simulated-gpu.md has them all.
 * The first three were once PARALAB_SIM_DEVICES, PARALAB_SIM_GPU and
 * PARALAB_SIM_MEM_MB: those names still work, with a note on stderr.
 *
 * Kernel files reach this header through simt/kernel.h; host programs may
 * include it for the simulator-only calls at the end (presets, modeled time,
 * the last fault report).
 */
#ifndef SIMT_SIMT_H
#define SIMT_SIMT_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- what a kernel sees ----------------------------------------------------
 * CUDA's built-in variables for the CUDA thread running now on this OS thread
 * (the emulator sets them at every switch): one thread-local load each. */
extern _Thread_local uint3 simt_threadIdx, simt_blockIdx;
extern _Thread_local dim3 simt_blockDim, simt_gridDim;
extern _Thread_local void *simt_dynamic_shared;
/* 1 once the CUDA thread running as a plain call (simt_kernel.run_plain)
 * has turned into a fiber at a barrier or warp operation: its loop stops
 * after that thread. */
extern _Thread_local int simt_plain_stop;

/* One per kernel, made by SIMT_LAUNCHER. */
typedef struct simt_kernel {
    const char *name;
    const char *file;
    int line;
    void (*entry)(const void *args); /* unpacks the argument copy, calls the kernel */
    const void *function;            /* the kernel itself (for cudaFuncSetAttribute) */
    unsigned max_threads;            /* __launch_bounds__'s threads per block, or 0 */
    /* Runs the threads of linear index from..n-1 of the current block, in
     * that order, as plain calls, the first at simt_threadIdx; returns after
     * the last, or after the one that set simt_plain_stop. The kernel's
     * call is in the loop (inlined where the compiler sees fit), its
     * arguments unpacked once per block. NULL: entry, once per thread. */
    void (*run_plain)(const void *args, unsigned from, unsigned n);
} simt_kernel;

/* Validates the configuration like CUDA (cudaErrorInvalidConfiguration for
 * 0 or too-large dimensions, more than 1024 threads, block z > 64, grid y/z
 * > 65535; cudaErrorLaunchOutOfResources for more threads per block than the
 * kernel's __launch_bounds__; cudaErrorInvalidValue for dynamic shared
 * memory above the kernel's limit) and enqueues the kernel on the stream
 * with a copy of the argument struct. Returns and records the error like any
 * runtime call. */
cudaError_t simtLaunchKernel(const simt_kernel *k, dim3 grid, dim3 block, size_t shmem,
                             cudaStream_t stream, const void *args, size_t args_size);

/* Declares the next launch's work on this host thread: FLOPs, and bytes of
 * device memory read + written. The modeled kernel time is
 *   launch latency + max(flops / peak FP32 FLOP/s, bytes / memory bandwidth). */
void simtLaunchCost(double flops, double bytes);

/* Declares the next launch on this host thread bounded (it ends after a
 * known amount of work, as the library's element-wise kernels do): when
 * nothing is ahead of it on its stream and what it waits for is done, it
 * runs at once on the launching thread instead of the stream's worker
 * (stream.c, "Eager execution"). Same results, same modeled times; a
 * student's kernel, which may loop forever, is never launched so. */
void simtLaunchEager(void);

enum simt_warp_op {
    SIMT_WOP_SYNCWARP,
    SIMT_WOP_SHFL,
    SIMT_WOP_SHFL_UP,
    SIMT_WOP_SHFL_DOWN,
    SIMT_WOP_SHFL_XOR,
    SIMT_WOP_BALLOT,
    SIMT_WOP_ANY,
    SIMT_WOP_ALL,
};

void simt_syncthreads(const char *file, int line);
void simt_syncwarp(unsigned mask, const char *file, int line);
uint64_t simt_shfl(unsigned mask, uint64_t value, int arg, int width, int kind, const char *file,
                   int line);
unsigned simt_vote(unsigned mask, int pred, int kind, const char *file, int line);
unsigned simt_activemask(void);
_Noreturn void simt_assert_fail(const char *expr, const char *file, int line, const char *func);
/* clock64() in a kernel: host nanoseconds (CLOCK_MONOTONIC), strictly
 * increasing on each OS thread, so within every CUDA thread. simt_clock is
 * clock(): in a kernel the low 32 bits of simt_clock64(), elsewhere the C
 * library's clock() (host code of a kernel file). */
long long simt_clock64(void);
long simt_clock(void);

int simt_atomic_add_i32(int *p, int v);
unsigned simt_atomic_add_u32(unsigned *p, unsigned v);
unsigned long long simt_atomic_add_u64(unsigned long long *p, unsigned long long v);
float simt_atomic_add_f32(float *p, float v);
double simt_atomic_add_f64(double *p, double v);
int simt_atomic_sub_i32(int *p, int v);
unsigned simt_atomic_sub_u32(unsigned *p, unsigned v);
int simt_atomic_exch_i32(int *p, int v);
unsigned simt_atomic_exch_u32(unsigned *p, unsigned v);
unsigned long long simt_atomic_exch_u64(unsigned long long *p, unsigned long long v);
float simt_atomic_exch_f32(float *p, float v);
int simt_atomic_min_i32(int *p, int v);
unsigned simt_atomic_min_u32(unsigned *p, unsigned v);
unsigned long long simt_atomic_min_u64(unsigned long long *p, unsigned long long v);
long long simt_atomic_min_i64(long long *p, long long v);
int simt_atomic_max_i32(int *p, int v);
long long simt_atomic_max_i64(long long *p, long long v);
unsigned simt_atomic_max_u32(unsigned *p, unsigned v);
unsigned long long simt_atomic_max_u64(unsigned long long *p, unsigned long long v);
int simt_atomic_and_i32(int *p, int v);
unsigned simt_atomic_and_u32(unsigned *p, unsigned v);
unsigned long long simt_atomic_and_u64(unsigned long long *p, unsigned long long v);
int simt_atomic_or_i32(int *p, int v);
unsigned simt_atomic_or_u32(unsigned *p, unsigned v);
unsigned long long simt_atomic_or_u64(unsigned long long *p, unsigned long long v);
int simt_atomic_xor_i32(int *p, int v);
unsigned simt_atomic_xor_u32(unsigned *p, unsigned v);
unsigned long long simt_atomic_xor_u64(unsigned long long *p, unsigned long long v);
unsigned simt_atomic_inc_u32(unsigned *p, unsigned v);
unsigned simt_atomic_dec_u32(unsigned *p, unsigned v);
int simt_atomic_cas_i32(int *p, int compare, int v);
unsigned simt_atomic_cas_u32(unsigned *p, unsigned compare, unsigned v);
unsigned long long simt_atomic_cas_u64(unsigned long long *p, unsigned long long compare,
                                       unsigned long long v);

/* ---- settings ---------------------------------------------------------- */
/* The most simulated devices SIMT_DEVICES may ask for. */
#define SIMT_MAX_DEVICES 64

/* The environment variable that sets the setting `name` ("SIMT_DEVICES",
 * "SIMT_GPU", "SIMT_MEM_MB") now: name itself when it is set (non-empty),
 * else its old name (PARALAB_SIM_DEVICES...) when that one is, else NULL
 * (the default applies). For messages that must name what the user set. */
const char *simtEnvSource(const char *name);

/* ---- hardware presets (SIMT_GPU) ---------------------------------------- */
/* Every number is cited to its datasheet in presets.c. Units: FLOP/s, B/s,
 * bytes, seconds. */
typedef struct simt_preset {
    const char *name;        /* SIMT_GPU value, e.g. "H100-SXM" */
    const char *device_name; /* cudaDeviceProp.name */
    int cc_major, cc_minor;
    int sm_count;
    size_t memory_bytes;
    double fp32_flops;        /* peak non-tensor FP32 FLOP/s */
    double bf16_tensor_flops; /* peak dense BF16 tensor FLOP/s */
    double memory_bw;         /* HBM/GDDR bytes/s */
    double host_link_bw;      /* PCIe bytes/s per direction, theoretical */
    double pinned_efficiency; /* fraction of host_link_bw pinned copies reach */
    double pageable_efficiency;
    double peer_bw;      /* GPU-GPU bytes/s per direction (NVLink; PCIe if none) */
    double peer_latency; /* seconds per peer transfer */
    /* Nodes: devices 0..g-1 are node 0, g..2g-1 node 1, ... (g =
     * gpus_per_node; 0: every device in one node). Across nodes there is
     * no peer access; a peer copy goes over the network (InfiniBand, one
     * NIC per GPU) at inter_node_bw after inter_node_latency. */
    int gpus_per_node;
    double inter_node_bw;      /* bytes/s per GPU per direction */
    double inter_node_latency; /* seconds per network transfer */
    double launch_latency;     /* seconds per kernel launch */
    double copy_latency;       /* seconds per host<->device copy */
    size_t l2_bytes;
    int memory_bus_bits;
    int max_threads_per_sm;
    size_t shared_per_sm;
    size_t shared_per_block_optin;
} simt_preset;

/* The presets, NULL-terminated, and lookup by name (case-insensitive);
 * NULL when unknown. */
const simt_preset *const *simtPresets(void);
const simt_preset *simtPresetByName(const char *name);
/* The preset the simulated devices use (after SIMT_GPU). */
const simt_preset *simtCurrentPreset(void);

/* ---- modeled and measured time --------------------------------------- */
/* Wall-clock milliseconds between two recorded events (measured; on the
 * simulator this is CPU time and says nothing about a GPU). */
cudaError_t simtEventElapsedMeasured(float *ms, cudaEvent_t start, cudaEvent_t end);
/* Modeled seconds at which the stream's last enqueued work ends. */
double simtStreamModeledTime(cudaStream_t stream);
/* The latest modeled time any device, stream or engine has work until. */
double simtModeledNow(void);
/* cudaStreamSynchronize, leaving the calling thread's modeled clock where it
 * was: for a host wait that is the emulation's, not the program's (the MPI
 * engine waits for a stream before MPI reads its buffers; on a GPU, NCCL's
 * kernels would not hold the host), so work the thread queues next on
 * another stream still overlaps on the modeled clock. */
cudaError_t simtStreamSynchronizeQuiet(cudaStream_t stream);
/* A transfer whose bytes arrived by other means (from another process,
 * over MPI), put on the modeled clock: the stream waits until not_before
 * (the sender's modeled time), then for a peer copy of `bytes` from device
 * src_device to dst_device of the simulated cluster (numbers beyond this
 * process's devices allowed: the link is the preset's, by gpus_per_node).
 * Nothing is copied; reported as a copy op. bytes = 0: only the wait (not
 * reported). cudaErrorInvalidResourceHandle for a bad stream. */
/* A peer copy of `bytes` from src_device to dst_device (this process's
 * devices) on the modeled clock only, costed and reported exactly as
 * cudaMemcpyPeerAsync would be; nothing is copied (the caller moves the
 * bytes itself: the local engine's ring reduces straight out of its
 * neighbour's buffer). cudaErrorInvalidDevice for a device out of range. */
cudaError_t simtModelPeerCopy(cudaStream_t stream, size_t bytes, int src_device, int dst_device);
/* cudaEventRecord on the modeled clock at t, no later than the stream's
 * modeled time: the event completes after all the work queued before it
 * (as cudaEventRecord), but a stream that waits for it waits until t only.
 * The local engine's ring records `read` so once its reduction has read the
 * neighbour's buffer, at the time its modeled copy ended.
 * cudaErrorInvalidValue for t past the stream's time. */
cudaError_t simtEventRecordAt(cudaEvent_t event, cudaStream_t stream, double t);
cudaError_t simtModelTransfer(cudaStream_t stream, size_t bytes, int src_device, int dst_device,
                              double not_before);
/* Moves the calling host thread's modeled clock forward to t (work it
 * enqueues starts no earlier). A world of ranks starts them all at
 * simtModeledNow(), so that earlier work does not skew their timelines. */
void simtHostClockAdvance(double t);

/* ---- op reports (what a trace records) --------------------------------- */
/* One finished kernel, copy or memset, as simtFlushOps reports it. */
typedef enum { SIMT_OP_KERNEL, SIMT_OP_COPY, SIMT_OP_MEMSET } simt_op_kind;
typedef struct simt_op_record {
    simt_op_kind kind;
    const char *name;  /* the kernel's name; "memcpy H2D" | "memcpy D2H" | "memcpy D2D" |
                          "memcpy peer" | "memset"; valid for the process's life */
    int device;        /* the device of the stream it ran on */
    int peer_device;   /* the other device of a cudaMemcpyPeer(Async), else -1 */
    int stream;        /* its stream, numbered on its device: 0 the legacy default
                          stream; a new stream gets the smallest number from 1 that no
                          live stream of the device has (1, 2... in creation order) */
    double bytes;      /* bytes copied or set; a kernel's declared bytes (0 if none) */
    double flops;      /* a kernel's declared FLOPs (simtLaunchCost), else 0 */
    double start, end; /* measured: wall seconds, CLOCK_MONOTONIC */
    double modeled_start, modeled_end; /* modeled seconds */
    cudaError_t error;                 /* cudaSuccess, or the fault it ended with */
} simt_op_record;
typedef void (*simt_op_hook)(const simt_op_record *rec, void *user);

/* Sets the calling host thread's hook (NULL: none). From then on every
 * kernel, copy and memset that this thread enqueues is held until it has
 * finished and is then reported, in program order, on this same thread: by
 * simtFlushOps, which cudaStreamSynchronize, cudaDeviceSynchronize,
 * cudaEventSynchronize and the synchronous copies call before they return.
 * Reports therefore come only from the thread that made the work — a
 * single producer, as a trace ring needs. Setting a hook first reports what
 * has finished; ops still running are then dropped unreported. */
void simtSetOpHook(simt_op_hook hook, void *user);
/* Reports this thread's finished ops (an unfinished one stops the walk, to
 * keep program order); returns how many were reported. */
int simtFlushOps(void);

/* ---- faults ------------------------------------------------------------ */
/* The report of the last kernel fault on the current device (illegal address,
 * assert, divergent barrier, warp mask error, ...), or "" if none. Valid until
 * the next fault or cudaDeviceReset. The report is also printed on stderr
 * unless SIMT_QUIET=1. */
const char *simtLastFaultReport(void);

/* The live device allocation holding p: 1, with its base, its size in bytes
 * and its device (any may be NULL); 0 when p lies in no live allocation
 * (freed, never allocated, host memory). For messages that name a buffer's
 * allocation (the communicators' "needs N bytes but holds M"). */
int simtAllocRange(const void *p, const void **base, size_t *size, int *device);

/* Memory-access observer: when set (non-NULL), called for every device-memory
 * access (address, size in bytes, 1 for a store) made by kernels compiled in
 * call mode (the ASan build, and the files named in KASAN_CALLS_FILES in
 * mk/build.mk) and by atomics; kernels with inline checks (build/sim) call it
 * only for atomics. One per process; for tools such as lab 02's coalescing
 * counter. */
typedef void (*simt_access_observer)(const void *addr, size_t size, int is_store);
void simtSetAccessObserver(simt_access_observer fn);

/* ---- memory transactions (lab 02) --------------------------------------
 * Counts how a warp's accesses reach memory, for kernels compiled in call
 * mode (KASAN_CALLS_FILES in mk/build.mk; every kernel in build/sim-asan).
 * The accesses the 32 threads of a warp make at one call site, each thread
 * its k-th time there, form one request: what one instruction of a real
 * warp issues. A global-memory request costs the distinct 32-byte sectors
 * its bytes touch: 4 when 32 threads read 32 consecutive floats, 32 when
 * they are 128 bytes apart (CUDA C++ Best Practices Guide, "Coalesced
 * Access to Global Memory"). A shared-memory request costs wavefronts: the
 * most distinct 4-byte words any one of the 32 banks must deliver (1: no
 * bank conflict; the same word to many threads is a broadcast, free; CUDA
 * C++ Programming Guide, "Shared Memory" of compute capability 5.x and
 * later). Shared memory is a kernel's __shared__ arrays and its dynamic
 * shared memory; local variables are not counted. */
typedef struct simt_mem_counts {
    unsigned long long requests; /* warp-wide instructions */
    unsigned long long units;    /* sectors (global) or wavefronts (shared) */
} simt_mem_counts;
typedef struct simt_mem_stats {
    simt_mem_counts global_load, global_store, shared_load, shared_store;
    int incomplete; /* 1: the emulator ran out of memory for its tables and
                     * some requests were not counted */
} simt_mem_stats;
/* Zeroes the counts and counts the accesses of kernels run from now on
 * (every device, every stream: bracket one kernel with a synchronize). */
void simtMemStatsBegin(void);
/* Stops counting; *out: the counts since simtMemStatsBegin (a block that
 * faults is not counted). */
void simtMemStatsEnd(simt_mem_stats *out);

/* ---- a kernel's record (the labs' pictures) -----------------------------
 * paralab/device.h's pl_device_record_* over these: see there for what is
 * recorded, the model of SMs and waves, and which kernels' accesses are
 * seen. Recording rides on the flag the memory counters test (call mode)
 * and on the shadow of the inline checks (poisoned only while the recorded
 * kernel runs), so a kernel pays nothing for it while nobody records. */
#define SIMT_RECORD_MAX_RANGES 4
typedef struct simt_record_config {
    int blocks;
    size_t max_accesses; /* <= 1<<24 */
    int shared, warp_ops;
    int nranges;
    struct {
        const void *lo;
        size_t len;
    } range[SIMT_RECORD_MAX_RANGES];
    unsigned block_first, block_count;
} simt_record_config;
typedef struct simt_record_block {
    uint32_t block, sm, wave;
    double start, end;
} simt_record_block;
typedef struct simt_record_access {
    uint32_t block, thread, round, site;
    uint64_t offset;
    uint8_t size, store, space;
} simt_record_access;
typedef struct simt_record_warp_op {
    uint32_t block, thread, round;
    int32_t src_lane;
    uint8_t kind;
} simt_record_warp_op;
typedef struct simt_record {
    char kernel[48];
    dim3 grid, block;
    size_t shmem;
    int sms, per_sm, waves;
    simt_record_block *blocks;
    size_t nblocks;
    simt_record_access *access;
    size_t naccess;
    simt_record_warp_op *warp_ops;
    size_t nwarp_ops;
    int truncated;
} simt_record;
/* Records the first kernel launched from now on (simtLaunchKernel claims
 * it). 0, -1 for a bad config or a record already under way. */
int simtRecordBegin(const simt_record_config *c);
/* Stops recording; *out: what was recorded (arrays malloc'd; zeroed when
 * no kernel ran). 0, or -1 (*out zeroed) while the recorded kernel still
 * runs: synchronize first. */
int simtRecordEnd(simt_record *out);
void simtRecordFree(simt_record *r);

/* The schedule threads run in between barriers: from SIMT_SCHEDULE, or set
 * here (tests). kind: 0 forward, 1 reverse, 2 random with seed. */
void simtSetSchedule(int kind, unsigned long long seed);

/* The lazy legacy stream (SIMT_LAZY_LEGACY=1, or set here; default off):
 * the legacy default stream of each device runs an operation only once
 * something waits for it or for a later one (a synchronize, a synchronous
 * copy, cudaFree, a query, a blocking stream or an event wait that depends
 * on it). A legal CUDA schedule that makes a race between the legacy stream
 * and a non-blocking stream (a cudaMemset the stream's kernels do not wait
 * for) fail every time. Turning it off runs what it held back. */
void simtSetLazyLegacy(int on);

/* The plain-call fast path (SIMT_PLAIN, default on): a block whose thread 0
 * finishes without reaching any barrier or warp operation runs its other
 * threads as plain calls, until one of them reaches a barrier or warp
 * operation (legal when thread 0 takes part in none): the block then turns
 * into fibers there and runs on. Off, every thread is a fiber from the start
 * (the same results, slower). */
void simtSetPlainCalls(int on);

/* The race check of the normal run (SIMT_RACES; docs/cuda-c-dialect.md):
 * which blocks have their shared memory and the device memory their
 * arguments point into watched for warp-synchronous code (lanes of one warp
 * exchanging values with no __syncwarp()) and lost updates (counter[0]++ by
 * many threads), reported as a kernel fault. 0: none; 1 (the default): the
 * first block of each kernel's first launch; 2: every block (slow). */
void simtSetRaceCheck(int mode);

/* Describes the kernels running now on any OS thread ("kernel K (file:line)
 * is in blockIdx (..), threadIdx (..)", "; "-separated) into buf; returns
 * the length, 0 when none runs. For watchdogs: it takes no lock and may be
 * called from a signal handler of a dying process. */
size_t simtDescribeRunning(char *buf, size_t cap);

/* For a watchdog that tells an endless loop from a slow machine by CPU time,
 * never by the wall clock (a busy machine slows a thread's CPU clock as much
 * as its work).
 *
 * simtProgress: blocks finished plus ops (kernels, copies, memsets) done, on
 * every device, since the process began; it only grows.
 *
 * simtDescribeStalled: describes, as simtDescribeRunning does, the kernels
 * whose OS thread has spent more than cpu_seconds of its own CPU time in one
 * block without finishing it (measured from the first call that saw the
 * block); returns the length, 0 when none. Call it from one thread at a time
 * (it keeps what it saw in the executors), every fraction of cpu_seconds. */
unsigned long long simtProgress(void);
size_t simtDescribeStalled(double cpu_seconds, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* SIMT_SIMT_H */
