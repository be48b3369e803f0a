/*
 * Lab 02 — the checks: every element of the transpose for square and
 * non-square shapes, none a multiple of the tile in both directions, down
 * to 1x1 (exact: a transpose only moves floats); on the simulated GPU under
 * the forward and the reverse schedule (a missing __syncthreads() reads a
 * tile not yet written under one of them), and then the emulator's count
 * of 32-byte sectors per request (simtMemStats): the tiled kernel must need
 * fewer than the naive one at 256x256, where the naive one's writes cost a
 * sector per element. Each shape gets buffers of exactly its size, so that
 * an access past its edge is out of bounds, and the emulator's fault report
 * (kernel, file:line, block, thread, the access) ends the failure message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "02_memory/lab02.h"
#include "paralab/device.h"
#include "registry.h"

typedef int (*transpose_fn)(float *out, const float *in, int rows, int cols);

static void check_elements(transpose_fn f, const char *name, pl_check *c)
{
    static const int shapes[][2] = {{1, 1},   {1, 100},  {100, 1},   {17, 33},  {32, 32},
                                    {64, 96}, {100, 37}, {257, 129}, {33, 1000}};
    size_t most = 257 * 129 > 33 * 1000 ? 257 * 129 : 33 * 1000;
    float *h = malloc(most * sizeof *h), *back = malloc(most * sizeof *back);
    float *din = NULL, *dout = NULL;
    if (!h || !back) {
        pl_check_fail(c, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < most; i++) h[i] = (float)i; /* every value names its place */
    int schedules = pl_device_caps()->schedules;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int sch = 0; sch < schedules; sch++) {
            int rows = shapes[s][0], cols = shapes[s][1];
            size_t n = (size_t)rows * cols;
            if (sch == 0) { /* this shape's own buffers, exactly its size */
                cudaFree(din);
                cudaFree(dout);
                din = dout = NULL;
                if (cudaMalloc((void **)&din, n * sizeof(float)) ||
                    cudaMalloc((void **)&dout, n * sizeof(float))) {
                    pl_check_fail(c, "out of memory");
                    goto done;
                }
                cudaMemcpy(din, h, n * sizeof(float), cudaMemcpyHostToDevice);
            }
            pl_device_set_schedule(sch);
            cudaMemset(dout, 0xff, n * sizeof(float)); /* NaN: unwritten shows */
            int e = f(dout, din, rows, cols);
            if (e == PL_TODO_STATUS) {
                pl_check_todo(c);
                goto done;
            }
            cudaError_t se = e ? (cudaError_t)e : cudaDeviceSynchronize();
            if (!pl_check_that(c, se == cudaSuccess, "%s(rows=%d, cols=%d) failed: %s %s", name,
                               rows, cols, cudaGetErrorName(se), pl_fault_report()))
                goto done;
            cudaMemcpy(back, dout, n * sizeof(float), cudaMemcpyDeviceToHost);
            for (int oc = 0; oc < cols; oc++)
                for (int orow = 0; orow < rows; orow++) {
                    float got = back[(size_t)oc * rows + orow], want = h[(size_t)orow * cols + oc];
                    if (!pl_check_that(c, got == want,
                                       "%s(rows=%d, cols=%d)%s: out[%d][%d] = %g but "
                                       "in[%d][%d] = %g%s",
                                       name, rows, cols, sch ? " under SIMT_SCHEDULE=reverse" : "",
                                       oc, orow, got, orow, oc, want,
                                       got != got ? ": never written" : ""))
                        goto done;
                }
        }
done:
    pl_device_set_schedule(0);
    cudaFree(din);
    cudaFree(dout);
    free(h);
    free(back);
}

/* Sectors per global request of f on a 256x256 matrix (-1: not counted). */
static double sectors_per_request(transpose_fn f, float *dout, const float *din)
{
    pl_mem_stats st;
    cudaDeviceSynchronize();
    if (pl_device_mem_stats_begin()) return -1;
    int e = f(dout, din, 256, 256);
    cudaDeviceSynchronize();
    if (pl_device_mem_stats_end(&st)) return -1;
    unsigned long long req = st.global_load.requests + st.global_store.requests;
    unsigned long long sec = st.global_load.units + st.global_store.units;
    return e || !req ? -1 : (double)sec / (double)req;
}

static void check_sectors(transpose_fn f, pl_check *c)
{
    float *din = NULL, *dout = NULL;
    if (cudaMalloc((void **)&din, 256 * 256 * sizeof(float)) ||
        cudaMalloc((void **)&dout, 256 * 256 * sizeof(float))) {
        pl_check_fail(c, "out of memory");
        goto done;
    }
    cudaMemset(din, 0, 256 * 256 * sizeof(float));
    double naive = sectors_per_request(lab02_transpose_naive, dout, din);
    double tiled = sectors_per_request(f, dout, din);
    pl_check_that(c, tiled > 0 && tiled < naive,
                  "transpose_tiled at 256x256: %.1f sectors per request (loads and stores), the "
                  "naive transpose %.1f: the tiled one must need fewer (read and write along rows: "
                  "a warp's 32 floats in 4 sectors)",
                  tiled, naive);
done:
    cudaFree(din);
    cudaFree(dout);
}

void lab02_check(int exercise, const lab02_impl *impl, pl_check *c)
{
    (void)exercise;
    check_elements(impl->transpose_tiled, "transpose_tiled", c);
    if (c->outcome == PL_PASS && pl_device_caps()->mem_counts) /* the simulated GPU counts */
        check_sectors(impl->transpose_tiled, c);
    /* then the lab's own two, which its steps compare yours with */
    if (c->outcome == PL_PASS) check_elements(lab02_transpose_naive, "lab02_transpose_naive", c);
    if (c->outcome == PL_PASS) check_elements(lab02_transpose_padded, "lab02_transpose_padded", c);
}

static const char *const exercises[] = {"transpose_tiled", NULL};

static void check_entry(int exercise, int use_solution, pl_check *c)
{
    lab02_check(exercise, use_solution ? &lab02_solution : &lab02_exercise, c);
}

const pl_lab lab02_memory = {"02_memory", exercises, check_entry};
