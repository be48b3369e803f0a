/*
 * picture_lab01.c — the builders of Lab 01's pictures from a kernel's record (paralab/picture.h).
 * PLACEHOLDER: refuses (-1) until the builder lands.
 */
#include "paralab/picture.h"

int pl_picture_blocks(const pl_kernel_record *rec, pl_picture *out)
{
    (void)rec;
    (void)out;
    return -1;
}

int pl_picture_elements(const pl_kernel_record *rec, long n, int elem_size, pl_picture *out)
{
    (void)rec;
    (void)n;
    (void)elem_size;
    (void)out;
    return -1;
}
