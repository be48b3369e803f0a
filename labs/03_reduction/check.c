/*
 * Lab 03 — the checks: every block's sum for n in {1, 1023, 1025,
 * 2^20 + 7}, against a double-precision sum, within 1e-6 + 1e-5 of the sum
 * of |x| over the block (a float tree of 256 terms errs by at most about
 * 8 x 2^-24 of it); on the simulated GPU once with the threads run forward
 * and once in reverse between barriers (SIMT_SCHEDULE), so that a missing
 * __syncthreads() gives a wrong sum under one of the two.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>
#ifdef PARALAB_SIMULATED_CUDA
#include "simt/simt.h"
#endif

#include "03_reduction/lab03.h"
#include "registry.h"

static void check_sums(int exercise, const lab03_impl *impl, pl_check *c)
{
    static const int sizes[] = {1, 1023, 1025, (1 << 20) + 7};
    int (*f)(const float *, float *, int) = exercise ? impl->block_sum_shuffle : impl->block_sum;
    const char *name = exercise ? "block_sum_shuffle" : "block_sum";
    int most = (1 << 20) + 7, nb_most = (most + LAB03_THREADS - 1) / LAB03_THREADS;
    float *h = malloc((size_t)most * sizeof *h), *out = malloc((size_t)nb_most * sizeof *out);
    float *din = NULL, *dout = NULL;
    if (!h || !out || cudaMalloc((void **)&din, (size_t)most * sizeof(float)) ||
        cudaMalloc((void **)&dout, (size_t)nb_most * sizeof(float))) {
        pl_check_fail(c, "out of memory");
        goto done;
    }
    unsigned s = 99;
    for (int i = 0; i < most; i++) {
        s = s * 1664525u + 1013904223u;
        h[i] = (float)(s >> 8) / 16777216.0f * 2.0f - 1.0f;
    }
    cudaMemcpy(din, h, (size_t)most * sizeof(float), cudaMemcpyHostToDevice);
#ifdef PARALAB_SIMULATED_CUDA
    int schedules = 2;
#else
    int schedules = 1;
#endif
    for (int a = 0; a < 4; a++)
        for (int sch = 0; sch < schedules; sch++) {
            int n = sizes[a], nb = (n + LAB03_THREADS - 1) / LAB03_THREADS;
#ifdef PARALAB_SIMULATED_CUDA
            simtSetSchedule(sch, 0);
#endif
            cudaMemset(dout, 0xff, (size_t)nb * sizeof(float)); /* NaN: unwritten shows */
            int e = f(din, dout, n);
            if (e == PL_TODO_STATUS) {
                pl_check_todo(c);
                goto done;
            }
            cudaError_t se = e ? (cudaError_t)e : cudaDeviceSynchronize();
            if (!pl_check_that(c, se == cudaSuccess, "%s(n=%d) failed: %s", name, n,
                               cudaGetErrorName(se)))
                goto done;
            cudaMemcpy(out, dout, (size_t)nb * sizeof(float), cudaMemcpyDeviceToHost);
            for (int b = 0; b < nb; b++) {
                double want = 0, mag = 0;
                for (int i = b * LAB03_THREADS; i < n && i < (b + 1) * LAB03_THREADS; i++) {
                    want += h[i];
                    mag += fabs(h[i]);
                }
                if (!pl_check_that(
                        c, fabs(out[b] - want) <= 1e-6 + 1e-5 * mag,
                        "%s(n=%d)%s: out[%d] = %.7g but the block's sum is %.7g%s", name, n,
                        sch ? " with the threads run in reverse (SIMT_SCHEDULE=reverse)" : "", b,
                        out[b], want,
                        out[b] != out[b] ? ": never written"
                        : sch            ? ": a missing __syncthreads()?"
                                         : ""))
                    goto done;
            }
        }
done:
#ifdef PARALAB_SIMULATED_CUDA
    simtSetSchedule(0, 0);
#endif
    cudaFree(din);
    cudaFree(dout);
    free(h);
    free(out);
}

void lab03_check(int exercise, const lab03_impl *impl, pl_check *c)
{
    check_sums(exercise, impl, c);
}

static const char *const exercises[] = {"block_sum", "block_sum_shuffle", NULL};

static void check_entry(int exercise, int use_solution, pl_check *c)
{
    lab03_check(exercise, use_solution ? &lab03_solution : &lab03_exercise, c);
}

const pl_lab lab03_reduction = {"03_reduction", exercises, check_entry};
