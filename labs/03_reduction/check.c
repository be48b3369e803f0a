/*
 * Lab 03 — the checks: every block's sum for n in {1, 1023, 1025,
 * 2^20 + 7} (--short: 2^16 + 7), against a double-precision sum, within 1e-6 + 1e-5 of the sum
 * of |x| over the block (a float tree of 256 terms errs by at most about
 * 8 x 2^-24 of it); on the simulated GPU once with the threads run forward
 * and once in reverse between barriers (SIMT_SCHEDULE), so that a missing
 * __syncthreads() gives a wrong sum under one of the two. A wrong sum whose
 * value changes with the order the threads run in is a race: the message
 * then asks about a missing __syncthreads(), whichever order failed first.
 * Each size gets buffers of exactly its size, so that an access past the
 * end is out of bounds, and the emulator's fault report (kernel,
 * file:line, block, thread, the access) ends the failure message.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "03_reduction/lab03.h"
#include "paralab/device.h"
#include "registry.h"

typedef int (*sum_fn)(const float *, float *, int);

/* Block b's sum from f run again under schedule sch (NaN if it fails). */
static float block_sum_under(sum_fn f, const float *din, float *dout, int n, int nb, int b, int sch)
{
    float v = NAN;
    pl_device_set_schedule(sch);
    cudaMemset(dout, 0xff, (size_t)nb * sizeof(float));
    if (f(din, dout, n) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess)
        cudaMemcpy(&v, dout + b, sizeof v, cudaMemcpyDeviceToHost);
    return v;
}

static void check_sums(int exercise, const lab03_impl *impl, pl_check *c)
{
    /* --short (the sanitizer pass): 2^16 + 7 for the largest, the same paths
     * (more blocks than SMs, a partial last one) at a sixteenth of the cost */
    int most = (pl_check_short() ? 1 << 16 : 1 << 20) + 7;
    const int sizes[] = {1, 1023, 1025, most};
    sum_fn f = exercise ? impl->block_sum_shuffle : impl->block_sum;
    const char *name = exercise ? "block_sum_shuffle" : "block_sum";
    int nb_most = (most + LAB03_THREADS - 1) / LAB03_THREADS;
    float *h = malloc((size_t)most * sizeof *h), *out = malloc((size_t)nb_most * sizeof *out);
    float *din = NULL, *dout = NULL;
    if (!h || !out) {
        pl_check_fail(c, "out of memory");
        goto done;
    }
    unsigned s = 99;
    for (int i = 0; i < most; i++) {
        s = s * 1664525u + 1013904223u;
        h[i] = (float)(s >> 8) / 16777216.0f * 2.0f - 1.0f;
    }
    int schedules = pl_device_caps()->schedules;
    for (int a = 0; a < 4; a++)
        for (int sch = 0; sch < schedules; sch++) {
            int n = sizes[a], nb = (n + LAB03_THREADS - 1) / LAB03_THREADS;
            if (sch == 0) { /* this size's own buffers, exactly its size */
                cudaFree(din);
                cudaFree(dout);
                din = dout = NULL;
                if (cudaMalloc((void **)&din, (size_t)n * sizeof(float)) ||
                    cudaMalloc((void **)&dout, (size_t)nb * sizeof(float))) {
                    pl_check_fail(c, "out of memory");
                    goto done;
                }
                cudaMemcpy(din, h, (size_t)n * sizeof(float), cudaMemcpyHostToDevice);
            }
            pl_device_set_schedule(sch);
            cudaMemset(dout, 0xff, (size_t)nb * sizeof(float)); /* NaN: unwritten shows */
            int e = f(din, dout, n);
            if (e == PL_TODO_STATUS) {
                pl_check_todo(c);
                goto done;
            }
            cudaError_t se = e ? (cudaError_t)e : cudaDeviceSynchronize();
            if (!pl_check_that(c, se == cudaSuccess, "%s(n=%d) failed: %s %s", name, n,
                               cudaGetErrorName(se), pl_fault_report()))
                goto done;
            cudaMemcpy(out, dout, (size_t)nb * sizeof(float), cudaMemcpyDeviceToHost);
            for (int b = 0; b < nb; b++) {
                double want = 0, mag = 0;
                for (int i = b * LAB03_THREADS; i < n && i < (b + 1) * LAB03_THREADS; i++) {
                    want += h[i];
                    mag += fabs(h[i]);
                }
                int right = fabs(out[b] - want) <= 1e-6 + 1e-5 * mag;
                char why[160] = "";
                if (!right && out[b] != out[b])
                    snprintf(why, sizeof why, ": never written");
                else if (!right && sch) /* right forward, wrong in reverse: a race */
                    snprintf(why, sizeof why, ": a missing __syncthreads()?");
                else if (!right && schedules > 1) { /* wrong forward: the same in reverse? */
                    float rev = block_sum_under(f, din, dout, n, nb, b, 1);
                    pl_device_set_schedule(0);
                    if (rev == rev && rev != out[b])
                        snprintf(why, sizeof why,
                                 "; with the threads run in reverse (SIMT_SCHEDULE=reverse) "
                                 "it is %.7g: the sum depends on the order the threads run "
                                 "in, a missing __syncthreads()?",
                                 rev);
                }
                if (!pl_check_that(
                        c, right, "%s(n=%d)%s: out[%d] = %.7g but the block's sum is %.7g%s", name,
                        n, sch ? " with the threads run in reverse (SIMT_SCHEDULE=reverse)" : "", b,
                        out[b], want, why))
                    goto done;
            }
        }
done:
    pl_device_set_schedule(0);
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
