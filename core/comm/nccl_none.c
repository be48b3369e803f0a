/*
 * nccl_none.c — the NCCL engine of the simulated build, where there is no
 * NCCL: mk/build.mk compiles this file instead of comm_nccl.c. It makes no
 * handles: pl_comm_create_nccl says why, and the engine's per-thread group
 * calls (pl_group_start/pl_group_end call every engine's) have nothing to
 * group.
 */
#include <stdio.h>

#include "comm_engine.h"

pl_comm_result pl_comm_create_nccl(int n, const int *devices, pl_comm **ranks, char *err,
                                   size_t err_size)
{
    (void)n, (void)devices, (void)ranks;
    snprintf(err, err_size,
             "the NCCL engine needs real GPUs: this is the simulated build (build/sim); build "
             "the CUDA variant (make cuda) or use the local engine");
    return PL_COMM_INVALID_ARGUMENT;
}

static int never(int n, const int *devices)
{
    (void)n, (void)devices;
    return 0;
}

static pl_comm_result no_group(void) { return PL_COMM_OK; }

/* No handle has this engine, so only the functions without one are called. */
const pl_comm_engine pl_comm_nccl_engine = {
    .name = "nccl",
    .fits = never,
    .group_start = no_group,
    .group_end = no_group,
};
