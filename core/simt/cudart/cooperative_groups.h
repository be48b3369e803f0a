/*
 * cooperative_groups.h — refused in the simulated build.
 *
 * Cooperative groups are a C++ library (templates, classes) that a kernel
 * file, compiled as C in build/sim, cannot use; and grid-wide
 * synchronisation is not simulated. This header stands before any CUDA
 * installation's (in /usr/local/include, say), which would be found
 * otherwise and fail later with C++ errors.
 */
#error                                                                                             \
    "cooperative_groups.h (cooperative groups) is not supported by paralab's simulated GPU (build/sim): use __syncthreads() for a block, __syncwarp() and the __shfl_*_sync, __ballot_sync functions for a warp; grid-wide sync (this_grid().sync()) is not simulated: split the kernel in two launches"
