/* tensor.c — see paralab/tensor.h. */
#include <string.h>

#include "paralab/tensor.h"

size_t pl_tensor_count(const pl_tensor *t) { return (size_t)t->rows * (size_t)t->cols; }
size_t pl_tensor_bytes(const pl_tensor *t) { return pl_tensor_count(t) * sizeof(float); }

cudaError_t pl_tensor_alloc(pl_tensor *t, int rows, int cols)
{
    memset(t, 0, sizeof *t);
    if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
    cudaError_t e = cudaGetDevice(&t->device);
    size_t bytes = (size_t)rows * (size_t)cols * sizeof(float);
    if (!e && bytes) e = cudaMalloc((void **)&t->data, bytes);
    if (!e && bytes) e = cudaMemset(t->data, 0, bytes);
    if (e) {
        cudaFree(t->data);
        memset(t, 0, sizeof *t);
        return e;
    }
    t->rows = rows;
    t->cols = cols;
    t->owned = 1;
    return cudaSuccess;
}

pl_tensor pl_tensor_view(float *data, int rows, int cols, int device)
{
    pl_tensor t = {data, rows, cols, device, 0};
    return t;
}

void pl_tensor_free(pl_tensor *t)
{
    if (t->owned) cudaFree(t->data);
    memset(t, 0, sizeof *t);
}

cudaError_t pl_tensor_from_host(pl_tensor *t, const float *host, cudaStream_t stream)
{
    size_t bytes = pl_tensor_bytes(t);
    if (!bytes) return cudaSuccess;
    if (!host || !t->data) return cudaErrorInvalidValue;
    return cudaMemcpyAsync(t->data, host, bytes, cudaMemcpyHostToDevice, stream);
}

cudaError_t pl_tensor_to_host(float *host, const pl_tensor *t, cudaStream_t stream)
{
    size_t bytes = pl_tensor_bytes(t);
    if (!bytes) return cudaSuccess;
    if (!host || !t->data) return cudaErrorInvalidValue;
    return cudaMemcpyAsync(host, t->data, bytes, cudaMemcpyDeviceToHost, stream);
}

cudaError_t pl_tensor_copy(pl_tensor *dst, const pl_tensor *src, cudaStream_t stream)
{
    if (dst->rows != src->rows || dst->cols != src->cols) return cudaErrorInvalidValue;
    size_t bytes = pl_tensor_bytes(src);
    if (!bytes) return cudaSuccess;
    return cudaMemcpyAsync(dst->data, src->data, bytes, cudaMemcpyDeviceToDevice, stream);
}
