/* device.c — see paralab/device.h. */
#include <stdio.h>

#include <cuda_runtime.h>

#include "paralab/device.h"

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
