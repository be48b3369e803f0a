/*
 * Lab 02 — the lab's own kernels: the strided copy, the naive transpose and
 * the padded tiled transpose; and the bytes each moves.
 */
#include "simt/kernel.h"

#include "02_memory/lab02.h"

/* A warp reads 32 floats `stride` apart: 32 x 4 bytes in 4 sectors when
 * stride is 1, else min(32, 4 stride) sectors; the stores are coalesced. */
double lab02_bytes_strided(int n, int stride)
{
    double per_load = stride >= 8 ? 32.0 : 4.0 * stride;
    return (double)n * (per_load + 4.0);
}

/* Reads by rows (4 bytes per element), writes by columns: each element
 * written costs a sector of its own once rows >= 8. */
double lab02_bytes_transpose_naive(int rows, int cols)
{
    double per_store = rows >= 8 ? 32.0 : 4.0 * rows;
    return (double)rows * cols * (4.0 + per_store);
}

double lab02_bytes_transpose_tiled(int rows, int cols) { return 8.0 * rows * cols; }

static __global__ void strided_copy(float *out, const float *in, int n, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[(size_t)i * stride];
}
SIMT_LAUNCHER(strided_copy, (float *out, const float *in, int n, int stride), (out, in, n, stride))

int lab02_strided_copy(float *out, const float *in, int n, int stride)
{
    dim3 g = {(unsigned)((n + 255) / 256), 1, 1}, b = {256, 1, 1};
    SIMT_LAUNCH_COST(0, lab02_bytes_strided(n, stride));
    return launch_strided_copy(g, b, 0, 0, out, in, n, stride);
}

/* Thread (x, y) of block (bx, by) moves element (r, c) = (32 by + y + 8 k,
 * 32 bx + x), k = 0..3: the same blocks as the tiled kernels, no tile. A
 * warp reads 32 consecutive floats of a row and writes 32 floats of a
 * column of out, `rows` apart: 32 sectors for 128 useful bytes. */
static __global__ void transpose_naive(float *out, const float *in, int rows, int cols)
{
    int c = blockIdx.x * LAB02_TILE + threadIdx.x;
    for (int k = 0; k < LAB02_TILE; k += LAB02_ROWS) {
        int r = blockIdx.y * LAB02_TILE + threadIdx.y + k;
        if (r < rows && c < cols) out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
    }
}
SIMT_LAUNCHER(transpose_naive, (float *out, const float *in, int rows, int cols),
              (out, in, rows, cols))

static dim3 tiles(int rows, int cols)
{
    dim3 g = {(unsigned)((cols + LAB02_TILE - 1) / LAB02_TILE),
              (unsigned)((rows + LAB02_TILE - 1) / LAB02_TILE), 1};
    return g;
}

int lab02_transpose_naive(float *out, const float *in, int rows, int cols)
{
    dim3 b = {LAB02_TILE, LAB02_ROWS, 1};
    SIMT_LAUNCH_COST(0, lab02_bytes_transpose_naive(rows, cols));
    return launch_transpose_naive(tiles(rows, cols), b, 0, 0, out, in, rows, cols);
}

/* The tiled transpose with one float of padding per tile row: element
 * (x, y) of the tile is word 33 y + x, so a column (fixed x, y = 0..31)
 * falls in 32 different banks instead of one. */
static __global__ void transpose_padded(float *out, const float *in, int rows, int cols)
{
    __shared__ float tile[LAB02_TILE][LAB02_TILE + 1];
    int x = threadIdx.x, y = threadIdx.y;
    int r0 = blockIdx.y * LAB02_TILE, c0 = blockIdx.x * LAB02_TILE;
    for (int k = 0; k < LAB02_TILE; k += LAB02_ROWS)
        if (r0 + y + k < rows && c0 + x < cols)
            tile[y + k][x] = in[(size_t)(r0 + y + k) * cols + c0 + x];
    __syncthreads();
    for (int k = 0; k < LAB02_TILE; k += LAB02_ROWS)
        if (c0 + y + k < cols && r0 + x < rows)
            out[(size_t)(c0 + y + k) * rows + r0 + x] = tile[x][y + k];
}
SIMT_LAUNCHER(transpose_padded, (float *out, const float *in, int rows, int cols),
              (out, in, rows, cols))

int lab02_transpose_padded(float *out, const float *in, int rows, int cols)
{
    dim3 b = {LAB02_TILE, LAB02_ROWS, 1};
    SIMT_LAUNCH_COST(0, lab02_bytes_transpose_tiled(rows, cols));
    return launch_transpose_padded(tiles(rows, cols), b, 0, 0, out, in, rows, cols);
}
