/*
 * fuzz/stubs.c — functions that the readers' files name but never call on
 * the paths fuzzed: the device seam's (a live run's clock, in core/trace.c;
 * --hw and --devices against the devices, in pl_options_apply), which would
 * bring in the whole simulated GPU, and the communicator's that
 * core/parallel/mesh.c's group set-up calls (the mesh pane needs only its
 * coordinates). Each stops the run if it is ever called, but for the
 * option parser's list of --hw presets (its --help), which is empty here.
 */
#include <stdio.h>
#include <stdlib.h>

#include "paralab/comm.h"
#include "paralab/device.h"
#include "paralab/options.h"

static _Noreturn void not_here(const char *fn)
{
    fprintf(stderr, "fuzz: %s called: the fuzz targets run no device and no communicator\n", fn);
    abort();
}

double pl_device_now(void) { not_here(__func__); }

int pl_device_apply_options(const pl_options *o, char *msg, size_t cap)
{
    (void)o;
    (void)msg;
    (void)cap;
    not_here(__func__);
}

/* --help's list of --hw presets (the option parser's usage): none here */
size_t pl_device_hw_presets(char *buf, size_t cap)
{
    if (cap) buf[0] = '\0';
    return 0;
}

int pl_comm_rank(const pl_comm *c)
{
    (void)c;
    not_here(__func__);
}

int pl_comm_size(const pl_comm *c)
{
    (void)c;
    not_here(__func__);
}

const char *pl_comm_last_error(const pl_comm *c)
{
    (void)c;
    not_here(__func__);
}

pl_comm_result pl_comm_split(pl_comm *c, int color, int key, pl_comm **out)
{
    (void)c;
    (void)color;
    (void)key;
    (void)out;
    not_here(__func__);
}

pl_comm_result pl_comm_free(pl_comm *c)
{
    (void)c;
    not_here(__func__);
}

void pl_comm_set_group(pl_comm *c, pl_group g)
{
    (void)c;
    (void)g;
    not_here(__func__);
}
