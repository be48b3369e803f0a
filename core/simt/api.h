/*
 * api.h — what the files of the CUDA API surface (api.c, api_memory.c)
 * share: the start-up, the checks every call begins with, and the calling
 * thread's current device and last error. Nothing below the API includes
 * it. Not public.
 */
#ifndef SIMT_API_H
#define SIMT_API_H

#include "simt/simt.h"

/* The calling thread's current device (cudaSetDevice). */
extern _Thread_local int simt_cur_dev;

/* Starts the runtime once (the settings, device memory, the legacy streams):
 * cudaSuccess or why it cannot start. */
cudaError_t simt_init(void);

/* Records e as the calling thread's last error unless it is cudaSuccess;
 * returns e. */
cudaError_t simt_ret(cudaError_t e);

/* Every call begins here: initialised, not called from a kernel (fn: the
 * call's name, for the message), and the current device not faulted. */
cudaError_t simt_enter(const char *fn);

#define ENTER()                                                                                    \
    do {                                                                                           \
        cudaError_t e_ = simt_enter(__func__);                                                     \
        if (e_) return simt_ret(e_);                                                               \
    } while (0)

/* Forgets which peers the device enabled (cudaDeviceReset; runtime lock held). */
void simt_peer_reset(int dev);
/* Whether peer access is on between devices a and b, either way. */
int simt_peer_enabled(int a, int b);

#endif
