/*
 * paralab/tensor.h — a small tensor: a row-major matrix of float32 on one
 * device. The only element type is float (4 bytes); a vector is 1 x n.
 *
 * Errors: the functions return the CUDA call's error (cudaErrorInvalidValue
 * for a negative shape or a size mismatch) and leave the tensor empty on
 * failure.
 */
#ifndef PARALAB_TENSOR_H
#define PARALAB_TENSOR_H

#include <stddef.h>

#include <cuda_runtime.h>

typedef struct pl_tensor {
    float *data;    /* device pointer; NULL when empty */
    int rows, cols; /* shape */
    int device;     /* the device that holds data */
    int owned;      /* 1: pl_tensor_free frees data; 0: a view */
} pl_tensor;

/* Elements (rows * cols) and bytes. */
size_t pl_tensor_count(const pl_tensor *t);
size_t pl_tensor_bytes(const pl_tensor *t);

/* A zeroed rows x cols tensor on the current device. */
cudaError_t pl_tensor_alloc(pl_tensor *t, int rows, int cols);
/* A view of rows x cols floats at device pointer data on `device` (not
 * freed by pl_tensor_free). */
pl_tensor pl_tensor_view(float *data, int rows, int cols, int device);
void pl_tensor_free(pl_tensor *t);

/* Copies count() floats from or to host memory, on `stream` (0: the legacy
 * stream); the host side must hold them until the stream is done. */
cudaError_t pl_tensor_from_host(pl_tensor *t, const float *host, cudaStream_t stream);
cudaError_t pl_tensor_to_host(float *host, const pl_tensor *t, cudaStream_t stream);
/* dst = src, both of the same shape. */
cudaError_t pl_tensor_copy(pl_tensor *dst, const pl_tensor *src, cudaStream_t stream);

#endif
