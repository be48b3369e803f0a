/*
 * Lab 02 — your exercise: the matrix transpose through a shared-memory
 * tile. Delete the PL_TODO() line when the kernel is written, then run
 * `make check`. See README.md in this folder.
 */
#include "simt/kernel.h"

#include "02_memory/lab02.h"

#define TILE LAB02_TILE /* 32 */
#define ROWS LAB02_ROWS /* 8 */

/*
 * out[c][r] = in[r][c]: in has `rows` rows of `cols` floats, out `cols`
 * rows of `rows`. Block (blockIdx.x, blockIdx.y) of 32x8 threads moves the
 * 32x32 tile whose first element is in[32 blockIdx.y][32 blockIdx.x]:
 *
 *   1. each thread (x, y) loads in[r0 + y + k][c0 + x] into
 *      tile[y + k][x] for k = 0, 8, 16, 24 (a warp reads along a row:
 *      coalesced), skipping elements past the last row or column;
 *   2. __syncthreads(): the whole tile must be in before anyone reads it;
 *   3. each thread writes out[c0 + y + k][r0 + x] = tile[x][y + k] (a warp
 *      writes along a row of out: coalesced again), skipping elements past
 *      the edges of out.
 *
 * Index with (size_t) products: rows * cols can exceed 2^31 bytes.
 */
static __global__ void transpose_tiled(float *out, const float *in, int rows, int cols)
{
    /* your kernel here: a __shared__ float tile[TILE][TILE], the loads, the
     * barrier, the stores (then delete the PL_TODO() line below) */
}
SIMT_LAUNCHER(transpose_tiled, (float *out, const float *in, int rows, int cols),
              (out, in, rows, cols))

static int transpose(float *out, const float *in, int rows, int cols)
{
    PL_TODO(); /* delete this line once transpose_tiled above is written */
    dim3 g = {(unsigned)((cols + TILE - 1) / TILE), (unsigned)((rows + TILE - 1) / TILE), 1};
    dim3 b = {TILE, ROWS, 1};
    SIMT_LAUNCH_COST(0, lab02_bytes_transpose_tiled(rows, cols));
    return launch_transpose_tiled(g, b, 0, 0, out, in, rows, cols);
}

const lab02_impl lab02_exercise = {transpose};
