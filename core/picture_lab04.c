/*
 * picture_lab04.c — the builders of Lab 04's pictures from a kernel's record (paralab/picture.h).
 * PLACEHOLDER: refuses (-1) until the builder lands.
 */
#include "paralab/picture.h"

int pl_picture_tiles(const pl_kernel_record *rec, int M, int N, int K, int tile, int tile_row,
                     int tile_col, pl_picture *out)
{
    (void)rec;
    (void)M;
    (void)N;
    (void)K;
    (void)tile;
    (void)tile_row;
    (void)tile_col;
    (void)out;
    return -1;
}
