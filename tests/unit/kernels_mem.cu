/*
 * kernels_mem.cu — kernels for the memory-transaction counts
 * (simtMemStats). mk/build.mk compiles this file in call mode
 * (KASAN_CALLS_FILES), so the emulator sees every access.
 */
#include "simt/kernel.h"

#include "kernels.h"

/* out[t] = in[t * stride] for one block of `threads` */
static __global__ void strided_copy(float *out, const float *in, int stride)
{
    int t = threadIdx.x;
    out[t] = in[t * stride];
}
SIMT_LAUNCHER(strided_copy, (float *out, const float *in, int stride), (out, in, stride))

cudaError_t tk_strided_copy(float *out, const float *in, int stride, int threads)
{
    dim3 g = {1, 1, 1}, b = {(unsigned)threads, 1, 1};
    return launch_strided_copy(g, b, 0, 0, out, in, stride);
}

/* Each thread adds in[t + 32 k] for k < reps into out[t]: one load site
 * passed `reps` times, one store site once. */
static __global__ void repeat_loads(float *out, const float *in, int reps)
{
    int t = threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < reps; k++) acc += in[t + 32 * k];
    out[t] = acc;
}
SIMT_LAUNCHER(repeat_loads, (float *out, const float *in, int reps), (out, in, reps))

cudaError_t tk_repeat_loads(float *out, const float *in, int reps)
{
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    return launch_repeat_loads(g, b, 0, 0, out, in, reps);
}

/* One 32x32 block writes its 1024 values into a shared tile by rows and
 * reads them back by columns: with a row of 32 floats every column read is
 * a 32-way bank conflict; with a row of 33 none is. mode 2: every thread
 * reads tile[0][in[0]] (a broadcast; in[0] must be 0). */
static __global__ void tile_columns(float *out, const float *in, int mode)
{
    __shared__ float tile[32][32];
    __shared__ float padded[32][33];
    int x = threadIdx.x, y = threadIdx.y;
    if (mode == 1) {
        padded[y][x] = in[y * 32 + x];
        __syncthreads();
        out[y * 32 + x] = padded[x][y];
    } else {
        tile[y][x] = in[y * 32 + x];
        __syncthreads();
        /* in[0] is 0: an index the compiler cannot fold (a constant one is
         * not instrumented, so not counted) */
        out[y * 32 + x] = mode == 2 ? tile[0][(int)in[0]] : tile[x][y];
    }
}
SIMT_LAUNCHER(tile_columns, (float *out, const float *in, int mode), (out, in, mode))

cudaError_t tk_tile_columns(float *out, const float *in, int mode)
{
    dim3 g = {1, 1, 1}, b = {32, 32, 1};
    return launch_tile_columns(g, b, 0, 0, out, in, mode);
}
