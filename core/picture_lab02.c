/*
 * picture_lab02.c — the builders of Lab 02's pictures from a kernel's record (paralab/picture.h).
 * PLACEHOLDER: refuses (-1) until the builder lands.
 */
#include "paralab/picture.h"

int pl_picture_request(const pl_kernel_record *rec, int store, int site, const char *name,
                       pl_picture *out)
{
    (void)rec;
    (void)store;
    (void)site;
    (void)name;
    (void)out;
    return -1;
}

int pl_picture_banks(const pl_kernel_record *rec, int store, int site, int pitch, const char *name,
                     pl_picture *out)
{
    (void)rec;
    (void)store;
    (void)site;
    (void)pitch;
    (void)name;
    (void)out;
    return -1;
}
