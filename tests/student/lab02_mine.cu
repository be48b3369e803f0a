/* Student scenario: Lab 02 finished as a student would write it (not the
 * reference): each thread walks its column of the tile with a stride of 8
 * rows, the tile has a padding column, and the edge tests are spelled out
 * as the remaining rows and columns of the tile. */
#include "simt/kernel.h"

#include "02_memory/lab02.h"

#define TILE LAB02_TILE
#define ROWS LAB02_ROWS

static __global__ void transpose_tiled(float *out, const float *in, int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];
    int col = blockIdx.x * TILE + threadIdx.x; /* the column of in this thread reads */
    int row = blockIdx.y * TILE;
    for (int j = threadIdx.y; j < TILE; j += ROWS) {
        if (col < cols && row + j < rows) tile[j][threadIdx.x] = in[(size_t)(row + j) * cols + col];
    }
    __syncthreads();
    int ocol = blockIdx.y * TILE + threadIdx.x; /* out's column is in's row */
    int orow = blockIdx.x * TILE;
    for (int j = threadIdx.y; j < TILE; j += ROWS) {
        if (ocol < rows && orow + j < cols)
            out[(size_t)(orow + j) * rows + ocol] = tile[threadIdx.x][j];
    }
}
SIMT_LAUNCHER(transpose_tiled, (float *out, const float *in, int rows, int cols),
              (out, in, rows, cols))

static int transpose(float *out, const float *in, int rows, int cols)
{
    dim3 grid = {(unsigned)((cols + TILE - 1) / TILE), (unsigned)((rows + TILE - 1) / TILE), 1};
    dim3 block = {TILE, ROWS, 1};
    SIMT_LAUNCH_COST(0, lab02_bytes_transpose_tiled(rows, cols));
    return launch_transpose_tiled(grid, block, 0, 0, out, in, rows, cols);
}

const lab02_impl lab02_exercise = {transpose};
