/*
 * Lab 02 — the reference solution. Read it after trying exercise.cu.
 */
#include "simt/kernel.h"

#include "02_memory/lab02.h"

#define TILE LAB02_TILE
#define ROWS LAB02_ROWS

/* Block (bx, by) moves the 32x32 tile whose top-left element is in[32 by]
 * [32 bx]. Each thread reads 4 elements of it by rows (x along a row: a
 * warp reads 128 consecutive bytes) into the shared tile, waits for the
 * whole tile, and writes 4 elements of out by rows too: row c of out is
 * column c of in, which the tile holds as tile[x][...]. Elements past the
 * edges are skipped in both directions. */
static __global__ void transpose_tiled(float *out, const float *in, int rows, int cols)
{
    __shared__ float tile[TILE][TILE];
    int x = threadIdx.x, y = threadIdx.y;
    int r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
    for (int k = 0; k < TILE; k += ROWS)
        if (r0 + y + k < rows && c0 + x < cols)
            tile[y + k][x] = in[(size_t)(r0 + y + k) * cols + c0 + x];
    __syncthreads();
    for (int k = 0; k < TILE; k += ROWS)
        if (c0 + y + k < cols && r0 + x < rows)
            out[(size_t)(c0 + y + k) * rows + r0 + x] = tile[x][y + k];
}
SIMT_LAUNCHER(transpose_tiled, (float *out, const float *in, int rows, int cols),
              (out, in, rows, cols))

static int transpose(float *out, const float *in, int rows, int cols)
{
    dim3 g = {(unsigned)((cols + TILE - 1) / TILE), (unsigned)((rows + TILE - 1) / TILE), 1};
    dim3 b = {TILE, ROWS, 1};
    SIMT_LAUNCH_COST(0, lab02_bytes_transpose_tiled(rows, cols));
    return launch_transpose_tiled(g, b, 0, 0, out, in, rows, cols);
}

const lab02_impl lab02_solution = {transpose};
