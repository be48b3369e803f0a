/*
 * Lab 01 — the checks (make check runs them on exercise.cu; make test on the
 * reference). Every element is compared exactly: a float add has one
 * correctly rounded result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include "paralab/device.h"

#include "01_hello_threads/lab01.h"
#include "paralab/plural.h"
#include "registry.h"

static const int sizes[] = {1, 255, 256, 257, 1000003};
#define NSIZES (int)(sizeof sizes / sizeof *sizes)

static void check_grid_size(const lab01_impl *impl, pl_check *c)
{
    static const int blocks[] = {1, 32, 255, 256, 1024};
    for (int i = 0; i < NSIZES; i++)
        for (int j = 0; j < 5; j++) {
            int n = sizes[i], b = blocks[j], want = (n + b - 1) / b;
            int got = impl->grid_size(n, b);
            if (got == PL_TODO_STATUS) {
                pl_check_todo(c);
                return;
            }
            if (!pl_check_that(c, got == want,
                               "grid_size(n=%d, block=%d) = %d, but %d block%s %s needed "
                               "(%d block%s of %d thread%s cover%s %lld element%s)",
                               n, b, got, want, pl_s(want), want == 1 ? "is" : "are", got,
                               pl_s(got), b, pl_s(b), got == 1 ? "s" : "", (long long)got * b,
                               pl_s((long long)got * b)))
                return;
        }
}

static const char *fault_detail(void) { return pl_fault_report(); }

/* The launcher's cudaGetLastError() returns the kernel's own fault when the
 * kernel has already run and faulted (the error is sticky: CUDA Runtime API,
 * "Error Handling"), on a GPU as on the simulated one, depending on timing.
 * Such an error is the kernel's failure, not the launch's: the same error
 * again from cudaDeviceSynchronize() tells them apart. */
static int is_device_fault(cudaError_t r) { return cudaDeviceSynchronize() == r; }

/* One run of vector_add on n elements; returns 0 when the check is over
 * (failed or TODO). */
static int run_vector_add(const lab01_impl *impl, int n, int block, pl_check *c)
{
    size_t bytes = (size_t)n * sizeof(float);
    float *a = malloc(bytes), *b = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
    float *da = NULL, *db = NULL, *dc = NULL;
    int ok = a && b && got && want;
    if (!ok) pl_check_fail(c, "out of host memory for n=%d", n);
    for (int i = 0; ok && i < n; i++) {
        a[i] = 0.5f * (float)i;
        b[i] = 1.0f + 0.25f * (float)(n - i);
        want[i] = a[i] + b[i];
    }
    cudaError_t e = cudaSuccess;
    if (ok && ((e = cudaMalloc((void **)&da, bytes)) || (e = cudaMalloc((void **)&db, bytes)) ||
               (e = cudaMalloc((void **)&dc, bytes)) ||
               (e = cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice)) ||
               (e = cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice)) ||
               (e = cudaMemset(dc, 0xff, bytes)))) /* NaN everywhere: unwritten shows */
    {
        size_t free_b = 0, total = 0;
        cudaMemGetInfo(&free_b, &total);
        ok = pl_check_fail(c, "setting up n=%d (3 arrays of %zu bytes on a device of %zu MiB): %s",
                           n, bytes, total >> 20, cudaGetErrorName(e));
    }
    if (ok) {
        int r = impl->vector_add(da, db, dc, n, block);
        if (r == PL_TODO_STATUS) {
            pl_check_todo(c);
            ok = 0;
        } else if (r != cudaSuccess && !is_device_fault((cudaError_t)r))
            ok =
                pl_check_fail(c, "vector_add(n=%d, block=%d) returned %s: %s", n, block,
                              cudaGetErrorName((cudaError_t)r), cudaGetErrorString((cudaError_t)r));
        else if ((e = cudaDeviceSynchronize()) != cudaSuccess)
            ok = pl_check_fail(c, "vector_add(n=%d, block=%d) failed on the device: %s %s", n,
                               block, cudaGetErrorName(e), fault_detail());
        else if ((e = cudaMemcpy(got, dc, bytes, cudaMemcpyDeviceToHost)) != cudaSuccess)
            ok = pl_check_fail(c, "copying c back: %s", cudaGetErrorName(e));
        else {
            char what[64];
            snprintf(what, sizeof what, "c (n=%d, block=%d)", n, block);
            ok = pl_check_floats(c, what, got, want, (size_t)n, 0, 0);
        }
    }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    /* A kernel fault is sticky: on the simulated GPU a reset clears it so the
     * remaining checks can run (a real GPU needs a new process, which
     * labcheck gives every exercise). */
    if (cudaGetLastError() != cudaSuccess && cudaDeviceSynchronize() != cudaSuccess)
        cudaDeviceReset();
    cudaGetLastError();
    free(a);
    free(b);
    free(got);
    free(want);
    return ok;
}

static void check_vector_add(const lab01_impl *impl, pl_check *c)
{
    for (int i = 0; i < NSIZES; i++)
        if (!run_vector_add(impl, sizes[i], 256, c)) return;
    static const int blocks[] = {1, 32, 1024};
    for (int j = 0; j < 3; j++)
        if (!run_vector_add(impl, 1000, blocks[j], c)) return;

    /* More than 1024 threads per block is refused at launch (CUDA C++
     * Programming Guide, "Compute Capabilities": at most 1024). The runtime
     * API documents cudaErrorInvalidConfiguration, which the simulator
     * returns; CUDA 13.0 with driver 580 on an H200 returned
     * cudaErrorInvalidValue (docs/gpu-results.md): either is right. */
    float *d = NULL;
    if (cudaMalloc((void **)&d, 3 * 1025 * sizeof(float)) != cudaSuccess) {
        pl_check_fail(c, "cudaMalloc failed");
        return;
    }
    int r = impl->vector_add(d, d + 1025, d + 2050, 1025, 1025);
    pl_check_that(c, r == cudaErrorInvalidConfiguration || r == cudaErrorInvalidValue,
                  "a block of 1025 threads must fail with cudaErrorInvalidConfiguration (or "
                  "cudaErrorInvalidValue, as CUDA 13 says; at most 1024 threads per block), but "
                  "vector_add returned %s",
                  cudaGetErrorName((cudaError_t)r));
    cudaError_t last = cudaGetLastError();
    pl_check_that(c, last == cudaSuccess,
                  "after the refused launch cudaGetLastError() should be cudaSuccess (the launch "
                  "error was returned already), got %s",
                  cudaGetErrorName(last));
    cudaFree(d);
}

void lab01_check(int exercise, const lab01_impl *impl, pl_check *c)
{
    if (exercise == 0)
        check_grid_size(impl, c);
    else
        check_vector_add(impl, c);
}

static const char *const exercises[] = {"grid_size", "vector_add", NULL};

static void check_entry(int exercise, int use_solution, pl_check *c)
{
    lab01_check(exercise, use_solution ? &lab01_solution : &lab01_exercise, c);
}

const pl_lab lab01_hello_threads = {"01_hello_threads", exercises, check_entry};
