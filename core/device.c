/* device.c — see paralab/device.h. */
#include <stdio.h>

#include <cuda_runtime.h>

#include "paralab/device.h"
#ifdef PARALAB_SIMULATED_CUDA
#include "simt/simt.h"
#endif

const char *pl_device_problem(const char *program)
{
    static _Thread_local char msg[512];
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaSuccess && n > 0) return NULL;
    cudaGetLastError();
#ifdef PARALAB_SIMULATED_CUDA
    (void)program;
    if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0))
        snprintf(msg, sizeof msg,
                 "no simulated device: PARALAB_SIM_DEVICES is 0 (allowed: 1 to 64, default 8)");
    else
        snprintf(msg, sizeof msg,
                 "the simulated GPU could not start (%s): the line above names the environment "
                 "variable to fix",
                 cudaGetErrorName(e));
#else
    snprintf(msg, sizeof msg,
             "no usable CUDA device: %s (%s). On a machine without an NVIDIA GPU and driver, run "
             "the simulated build: build/sim/bin/%s",
             cudaGetErrorName(e), cudaGetErrorString(e), program);
#endif
    return msg;
}

int pl_device_peaks(int device, double *fp32_flops, double *memory_bw)
{
#ifdef PARALAB_SIMULATED_CUDA
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e) return (int)e;
    if (device < 0 || device >= n) return (int)cudaErrorInvalidDevice;
    const simt_preset *p = simtCurrentPreset();
    *fp32_flops = p->fp32_flops;
    *memory_bw = p->memory_bw;
    return 0;
#else
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
#endif
}

const char *pl_clock_name(void)
{
#ifdef PARALAB_SIMULATED_CUDA
    return "modeled";
#else
    return "measured";
#endif
}

const char *pl_fault_report(void)
{
#ifdef PARALAB_SIMULATED_CUDA
    return simtLastFaultReport();
#else
    return "";
#endif
}
