/*
 * picture_lab03.c — the builders of Lab 03's picture from a kernel's record (paralab/picture.h).
 * PLACEHOLDER: refuses (-1) until the builder lands.
 */
#include "paralab/picture.h"

int pl_picture_tree(const pl_kernel_record *rec, int shuffle, pl_picture *out)
{
    (void)rec;
    (void)shuffle;
    (void)out;
    return -1;
}
