/*
 * cuda_runtime.h — the simulated CUDA runtime (build/sim only).
 *
 * Host code includes <cuda_runtime.h> in both build variants. In build/cuda
 * that is NVIDIA's header; in build/sim it is this one, served by
 * core/simt/api.c over N simulated devices (SIMT_DEVICES, default 8, at
 * most 64) of one hardware preset (SIMT_GPU, default H100-SXM; see
 * simt/simt.h for the presets and the modeled clock).
 *
 * Types, enum values, error codes, names and strings are CUDA's own (CUDA
 * 12/13 driver_types.h and the CUDA Runtime API reference), so code written
 * against this header compiles unchanged against the real one. Only what the
 * labs need is declared; any other runtime function a lab reaches for fails
 * at compile time with "... is not simulated" (GCC's error attribute).
 *
 * Semantics followed (CUDA Runtime API reference, "API synchronization
 * behavior" and "Stream synchronization behavior"):
 *   - every call that fails records its error as the calling thread's last
 *     error (cudaGetLastError returns and clears it; cudaPeekAtLastError
 *     returns it);
 *   - kernel faults (illegal address, device-side assert, launch failure) are
 *     sticky: every later call on that device returns them until
 *     cudaDeviceReset;
 *   - streams are asynchronous and in order; distinct streams run
 *     concurrently; the legacy default stream (0) waits for and is waited on
 *     by every blocking stream of its device; cudaStreamNonBlocking streams
 *     do not synchronise with it;
 *   - cudaMemcpy from pageable memory is synchronous; cudaMemcpyAsync from
 *     pageable host memory stages the source before returning, and to
 *     pageable host memory returns when the copy is done.
 */
#ifndef SIMT_CUDA_RUNTIME_H
#define SIMT_CUDA_RUNTIME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUDART_VERSION 13000
#define __CUDART_API_VERSION 13000
#define PARALAB_SIMULATED_CUDA 1

/* ---- error codes (driver_types.h, enum cudaError) ----------------------- */
typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorCudartUnloading = 4,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidPitchValue = 12,
    cudaErrorInvalidSymbol = 13,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorPeerAccessUnsupported = 217,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorIllegalState = 401,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorPeerAccessAlreadyEnabled = 704,
    cudaErrorPeerAccessNotEnabled = 705,
    cudaErrorContextIsDestroyed = 709,
    cudaErrorAssert = 710,
    cudaErrorLaunchFailure = 719,
    cudaErrorCooperativeLaunchTooLarge = 720,
    cudaErrorNotPermitted = 800,
    cudaErrorNotSupported = 801,
    cudaErrorUnknown = 999
} cudaError_t;

/* ---- basic types ------------------------------------------------------- */
/* uint3 (threadIdx, blockIdx) and the other vector types, and their
 * make_ functions */
#include "vector_functions.h"
#include "vector_types.h"

typedef struct dim3 {
    unsigned int x, y, z;
} dim3;

typedef struct simt_stream *cudaStream_t;
typedef struct simt_event *cudaEvent_t;

#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01

#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaEventInterprocess 0x04

#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02
#define cudaHostAllocWriteCombined 0x04

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};

enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9
};

/* The subset of enum cudaDeviceAttr the simulator answers (values from
 * driver_types.h). Others return cudaErrorInvalidValue. */
enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxBlockDimX = 2,
    cudaDevAttrMaxBlockDimY = 3,
    cudaDevAttrMaxBlockDimZ = 4,
    cudaDevAttrMaxGridDimX = 5,
    cudaDevAttrMaxGridDimY = 6,
    cudaDevAttrMaxGridDimZ = 7,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrTotalConstantMemory = 9,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMaxRegistersPerBlock = 12,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrIntegrated = 18,
    cudaDevAttrCanMapHostMemory = 19,
    cudaDevAttrConcurrentKernels = 31,
    cudaDevAttrPciBusId = 33,
    cudaDevAttrPciDeviceId = 34,
    cudaDevAttrGlobalMemoryBusWidth = 37,
    cudaDevAttrL2CacheSize = 38,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrAsyncEngineCount = 40,
    cudaDevAttrUnifiedAddressing = 41,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97
};

/* The fields of struct cudaDeviceProp that exist in both CUDA 12 and 13
 * (13 removed clockRate, memoryClockRate, deviceOverlap and others: do not
 * use them). Names and meanings are CUDA's. */
struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;    /* bytes */
    size_t sharedMemPerBlock; /* bytes, without opt-in */
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    size_t totalConstMem; /* bytes */
    int major, minor;     /* compute capability */
    size_t textureAlignment;
    int multiProcessorCount;
    int integrated;
    int canMapHostMemory;
    int concurrentKernels;
    int pciBusID, pciDeviceID, pciDomainID;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryBusWidth; /* bits */
    int l2CacheSize;    /* bytes */
    int maxThreadsPerMultiProcessor;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    size_t sharedMemPerBlockOptin; /* bytes, after cudaFuncSetAttribute opt-in */
};

/* ---- error handling ---------------------------------------------------- */
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorName(cudaError_t error);
const char *cudaGetErrorString(cudaError_t error);

/* ---- devices ----------------------------------------------------------- */
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice);
cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags);
cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value);

/* ---- memory ------------------------------------------------------------ */
cudaError_t cudaMalloc(void **devPtr, size_t size);
cudaError_t cudaFree(void *devPtr);
cudaError_t cudaMallocHost(void **ptr, size_t size);
cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaMemGetInfo(size_t *free, size_t *total);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream);
cudaError_t cudaMemset(void *devPtr, int value, size_t count);
cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream);
cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count);
cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
                                size_t count, cudaStream_t stream);
/* CUDA C++ takes the symbol itself (a reference); so does this macro. Call it
 * from the kernel file that defines the __constant__ symbol. */
cudaError_t simtMemcpyToSymbol(void *symbol, size_t symbolSize, const void *src, size_t count,
                               size_t offset, enum cudaMemcpyKind kind);
#define cudaMemcpyToSymbol(symbol, src, count, ...)                                                \
    simtMemcpyToSymbol((void *)&(symbol), sizeof(symbol), (src), (count),                          \
                       SIMT_TOSYM_OFFSET(__VA_ARGS__), SIMT_TOSYM_KIND(__VA_ARGS__))
#define SIMT_TOSYM_OFFSET(...) SIMT_TOSYM_2ND(0 __VA_OPT__(, __VA_ARGS__), 0)
#define SIMT_TOSYM_KIND(...)                                                                       \
    SIMT_TOSYM_3RD(0 __VA_OPT__(, __VA_ARGS__), cudaMemcpyHostToDevice, cudaMemcpyHostToDevice)
#define SIMT_TOSYM_2ND(a, b, ...) (b)
#define SIMT_TOSYM_3RD(a, b, c, ...) (c)

/* ---- streams and events ------------------------------------------------ */
cudaError_t cudaStreamCreate(cudaStream_t *pStream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags);
/* Priorities: 0 the least, -5 the greatest (lower is higher). A high-priority
 * stream's kernels are modeled on an engine of their own, beside the others'
 * (see docs/simulated-gpu.md). */
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority);
cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority);
cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
/* Milliseconds between two recorded events, on the simulated device's
 * modeled clock (see simtEventElapsedMeasured for wall time). */
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t event);

/* ---- not simulated: a clear compile-time error ------------------------- */
#define SIMT_NOT_SIMULATED_FN(fn)                                                                  \
    __attribute__((error(#fn " is not simulated by paralab (build/sim); it exists only in "        \
                             "build/cuda")))
#define SIMT_REFUSE(fn) cudaError_t fn() SIMT_NOT_SIMULATED_FN(fn)
SIMT_REFUSE(cudaMallocManaged);
SIMT_REFUSE(cudaMallocAsync);
SIMT_REFUSE(cudaFreeAsync);
SIMT_REFUSE(cudaMallocPitch);
SIMT_REFUSE(cudaMemcpy2D);
SIMT_REFUSE(cudaMemcpy2DAsync);
SIMT_REFUSE(cudaMemcpy3D);
SIMT_REFUSE(cudaMallocArray);
SIMT_REFUSE(cudaCreateTextureObject);
SIMT_REFUSE(cudaCreateSurfaceObject);
SIMT_REFUSE(cudaGraphCreate);
SIMT_REFUSE(cudaGraphLaunch);
SIMT_REFUSE(cudaGraphInstantiate);
SIMT_REFUSE(cudaStreamBeginCapture);
SIMT_REFUSE(cudaStreamEndCapture);
SIMT_REFUSE(cudaLaunchKernel);
SIMT_REFUSE(cudaLaunchCooperativeKernel);
SIMT_REFUSE(cudaLaunchHostFunc);
SIMT_REFUSE(cudaStreamAddCallback);
SIMT_REFUSE(cudaHostRegister);
SIMT_REFUSE(cudaHostGetDevicePointer);
SIMT_REFUSE(cudaMemPrefetchAsync);
SIMT_REFUSE(cudaMemAdvise);
SIMT_REFUSE(cudaIpcGetMemHandle);
SIMT_REFUSE(cudaIpcOpenMemHandle);
SIMT_REFUSE(cudaMemcpyFromSymbol);
SIMT_REFUSE(cudaGetSymbolAddress);
SIMT_REFUSE(cudaDeviceSetLimit);
SIMT_REFUSE(cudaProfilerStart);
SIMT_REFUSE(cudaProfilerStop);
#undef SIMT_REFUSE

#ifdef __cplusplus
}
#endif

#endif /* SIMT_CUDA_RUNTIME_H */
