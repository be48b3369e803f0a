/*
 * Lab 04 — the checks: every element of C for M, N and K in {1, 17, 64,
 * 100, 257} (every combination: not multiples of the tile, and tiles of
 * one element; --short: without 257), against a double-precision product, within 1e-6 + 1e-5 of
 * the sum of |a b| over k (a float sum of K terms may err by about K 2^-24
 * of it). Each shape gets A, B and C of exactly its size, so that a load
 * past an edge is out of bounds, and the emulator's fault report (kernel,
 * file:line, block, thread, the access) ends the failure message.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "04_gemm/lab04.h"
#include "paralab/device.h"
#include "registry.h"

typedef int (*gemm_fn)(float *C, const float *A, const float *B, int M, int N, int K);

/* Checks fn (named `name` in messages) on all 125 shapes; --short (the
 * sanitizer pass): the 64 without 257, the same edges (1, 17 and 100 are no
 * multiples of a tile, 64 is) at a fifth of the cost. */
static void check_gemm(gemm_fn fn, const char *name, pl_check *c)
{
    static const int dims[] = {1, 17, 64, 100, 257};
    int nd = pl_check_short() ? 4 : 5;
    int most = 257;
    size_t cap = (size_t)most * most;
    float *A = malloc(cap * sizeof *A), *B = malloc(cap * sizeof *B), *C = malloc(cap * sizeof *C);
    float *dA = NULL, *dB = NULL, *dC = NULL;
    if (!A || !B || !C) {
        pl_check_fail(c, "out of memory");
        goto out;
    }
    unsigned s = 12345;
    for (size_t i = 0; i < cap; i++) {
        s = s * 1664525u + 1013904223u;
        A[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
        s = s * 1664525u + 1013904223u;
        B[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
    }
    for (int a = 0; a < nd; a++)
        for (int b = 0; b < nd; b++)
            for (int k = 0; k < nd; k++) {
                int M = dims[a], N = dims[b], K = dims[k];
                /* this shape's own A (M x K), B (K x N) and C (M x N), exactly */
                cudaFree(dA);
                cudaFree(dB);
                cudaFree(dC);
                dA = dB = dC = NULL;
                if (cudaMalloc((void **)&dA, (size_t)M * K * sizeof(float)) ||
                    cudaMalloc((void **)&dB, (size_t)K * N * sizeof(float)) ||
                    cudaMalloc((void **)&dC, (size_t)M * N * sizeof(float))) {
                    pl_check_fail(c, "out of memory");
                    goto out;
                }
                cudaMemcpy(dA, A, (size_t)M * K * sizeof(float), cudaMemcpyHostToDevice);
                cudaMemcpy(dB, B, (size_t)K * N * sizeof(float), cudaMemcpyHostToDevice);
                cudaMemset(dC, 0xff, (size_t)M * N * sizeof(float)); /* NaN: unwritten shows */
                int e = fn(dC, dA, dB, M, N, K);
                if (e == PL_TODO_STATUS) {
                    pl_check_todo(c);
                    goto out;
                }
                cudaError_t se = e ? (cudaError_t)e : cudaDeviceSynchronize();
                if (!pl_check_that(c, se == cudaSuccess, "%s(M=%d, N=%d, K=%d) failed: %s %s", name,
                                   M, N, K, cudaGetErrorName(se), pl_fault_report()))
                    goto out;
                cudaMemcpy(C, dC, (size_t)M * N * sizeof(float), cudaMemcpyDeviceToHost);
                for (int i = 0; i < M; i++)
                    for (int j = 0; j < N; j++) {
                        double want = 0, mag = 0;
                        for (int q = 0; q < K; q++) {
                            double p = (double)A[i * K + q] * B[q * N + j];
                            want += p;
                            mag += fabs(p);
                        }
                        float got = C[i * N + j];
                        if (!pl_check_that(c, fabs(got - want) <= 1e-6 + 1e-5 * mag,
                                           "%s: C (M=%d, N=%d, K=%d)[%d][%d] = %.7g but "
                                           "expected %.7g%s",
                                           name, M, N, K, i, j, got, want,
                                           got != got ? ": this element was never written" : ""))
                            goto out;
                    }
            }
out:
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    free(A);
    free(B);
    free(C);
}

void lab04_check(int exercise, const lab04_impl *impl, pl_check *c)
{
    (void)exercise;
    check_gemm(impl->matmul_tiled, "matmul_tiled", c);
    if (c->outcome == PL_PASS) check_gemm(lab04_matmul_registers, "lab04_matmul_registers", c);
    if (c->outcome == PL_PASS) check_gemm(lab04_matmul_warptiles, "lab04_matmul_warptiles", c);
}

static const char *const exercises[] = {"matmul_tiled", NULL};

static void check_entry(int exercise, int use_solution, pl_check *c)
{
    lab04_check(exercise, use_solution ? &lab04_solution : &lab04_exercise, c);
}

const pl_lab lab04_gemm = {"04_gemm", exercises, check_entry};
