/*
 * device.c — the part of the device seam (paralab/device.h) that is the same
 * in both worlds, written once over the CUDA runtime API and
 * pl_device_caps(); device_sim.c or device_cuda.c holds the rest.
 */
#include <cuda_runtime.h>

#include "paralab/device.h"

const char *pl_clock_name(void) { return pl_device_caps()->clock; }

int pl_device_memory(int device, size_t *used, size_t *total)
{
    size_t fr = 0, tot = 0;
    cudaError_t e = cudaSetDevice(device);
    if (!e) e = cudaMemGetInfo(&fr, &tot);
    if (e) {
        cudaGetLastError();
        return (int)e;
    }
    *used = tot - fr;
    *total = tot;
    return 0;
}
