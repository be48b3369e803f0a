/*
 * cooperative_groups/reduce.h — refused in the simulated build (see
 * ../cooperative_groups.h).
 */
#error                                                                                             \
    "cooperative_groups/reduce.h (cooperative groups) is not supported by paralab's simulated GPU (build/sim): reduce a warp with __shfl_down_sync"
