/*
 * lab02.h — Lab 02, memory: host<->device copies (pageable and pinned),
 * coalesced and strided access, and the matrix transpose three ways
 * (naive, shared-memory tiles, tiles padded against bank conflicts).
 *
 * Matrices are row-major floats in device memory: in has `rows` rows of
 * `cols`, out (the transpose) `cols` rows of `rows`. Every function
 * launches on the default stream and returns the launch's cudaError_t.
 */
#ifndef LAB02_H
#define LAB02_H

#include "paralab/check.h"
#include "paralab/exercise.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LAB02_TILE 32 /* a tile is 32x32 floats: one warp per row of it */
#define LAB02_ROWS 8  /* a block is 32x8 threads: each thread moves 4 rows of the tile */

typedef struct lab02_impl {
    /* The exercise: out[c][r] = in[r][c] for every r < rows, c < cols (any
     * rows, cols >= 1), through a __shared__ 32x32 tile: a block of 32x8
     * threads reads tile (bx, by) of in by rows (coalesced), and writes it
     * transposed to tile (by, bx) of out, by rows again (coalesced). */
    int (*transpose_tiled)(float *out, const float *in, int rows, int cols);
} lab02_impl;

extern const lab02_impl lab02_exercise; /* exercise.cu: yours */
extern const lab02_impl lab02_solution; /* solution.cu: the reference */

/* The lab's own kernels (lab02_kernels.cu), same contract: one thread per
 * element reading by rows and writing by columns (the writes of a warp
 * are `rows` floats apart); and the tiled kernel with a 32x33 tile, whose
 * column reads fall in 32 different banks. */
int lab02_transpose_naive(float *out, const float *in, int rows, int cols);
int lab02_transpose_padded(float *out, const float *in, int rows, int cols);

/* out[i] = in[i * stride] for i < n (in holds n * stride floats): with
 * stride 1 a warp reads 128 consecutive bytes, 4 sectors; from stride 8
 * on, every thread its own 32-byte sector. */
int lab02_strided_copy(float *out, const float *in, int n, int stride);

/* Bytes of DRAM traffic each moves (what the modeled clock charges): whole
 * 32-byte sectors for a warp's scattered accesses. */
double lab02_bytes_strided(int n, int stride);
double lab02_bytes_transpose_naive(int rows, int cols);
double lab02_bytes_transpose_tiled(int rows, int cols);

void lab02_check(int exercise, const lab02_impl *impl, pl_check *c);

#ifdef __cplusplus
}
#endif

#endif
