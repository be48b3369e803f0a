/*
 * picture_lab04.c — the builders of Lab 04's pictures (paralab/picture.h):
 * the tiles one block of a tiled GEMM loads into shared memory, step by
 * step along K, from the kernel's record of its loads of A and B; and the
 * roofline, from the device's peaks and the lab's measured points.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paralab/picture.h"

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The index of round r in the sorted, distinct rounds[0..n). */
static size_t round_index(const uint32_t *rounds, size_t n, uint32_t r)
{
    size_t lo = 0, hi = n;
    while (lo + 1 < hi) {
        size_t mid = (lo + hi) / 2;
        if (rounds[mid] <= r)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* A load of the block's from matrix m (0 A, 1 B): the record's entry in
 * range m, not a store. */
static int is_load(const pl_record_access *a, uint32_t block, int m)
{
    return a->block == block && !a->store && a->space == 1 + m;
}

int pl_picture_tiles(const pl_kernel_record *rec, int M, int N, int K, int tile, int tile_row,
                     int tile_col, pl_picture *out)
{
    if (!rec || !out || M < 1 || N < 1 || K < 1 || tile < 1 || tile_row < 0 || tile_col < 0 ||
        (long)tile_row * tile >= M || (long)tile_col * tile >= N)
        return -1;
    /* the block computing C's tile (tile_row, tile_col): blockIdx (tile_col, tile_row) */
    uint32_t gx = rec->grid[0] ? rec->grid[0] : 1;
    uint32_t block = (uint32_t)tile_col + gx * (uint32_t)tile_row;
    const size_t cols[2] = {(size_t)K, (size_t)N};          /* row length of A, of B */
    const size_t elems[2] = {(size_t)M * K, (size_t)K * N}; /* elements of A, of B */

    /* the rounds in which the block loaded A or B, sorted, distinct: its steps */
    size_t n = 0;
    for (size_t i = 0; i < rec->naccess; i++)
        n += is_load(&rec->access[i], block, 0) || is_load(&rec->access[i], block, 1);
    if (n == 0) return -1;
    uint32_t *rounds = malloc(n * sizeof *rounds);
    if (!rounds) return -1;
    n = 0;
    for (size_t i = 0; i < rec->naccess; i++)
        if (is_load(&rec->access[i], block, 0) || is_load(&rec->access[i], block, 1))
            rounds[n++] = rec->access[i].round;
    qsort(rounds, n, sizeof *rounds, cmp_u32);
    size_t steps = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || rounds[i] != rounds[steps - 1]) rounds[steps++] = rounds[i];
    if (steps > PL_PIC_MAX_INTS / 8) {
        free(rounds);
        return -1;
    }

    /* per step and matrix: the bounding box of the elements loaded, as
     * min row, max row, min col, max col (min > max: none) */
    int64_t *box = malloc(steps * 8 * sizeof *box);
    if (!box) {
        free(rounds);
        return -1;
    }
    for (size_t s = 0; s < steps; s++)
        for (int m = 0; m < 2; m++) {
            int64_t *b = box + 8 * s + 4 * m;
            b[0] = b[2] = INT64_MAX;
            b[1] = b[3] = -1;
        }
    for (size_t i = 0; i < rec->naccess; i++) {
        const pl_record_access *a = &rec->access[i];
        for (int m = 0; m < 2; m++) {
            if (!is_load(a, block, m)) continue;
            /* the floats the access touched (a wider load covers several) */
            size_t first = (size_t)(a->offset / 4), last = (size_t)((a->offset + a->size - 1) / 4);
            if (a->size == 0) last = first;
            int64_t *b = box + 8 * round_index(rounds, steps, a->round) + 4 * m;
            for (size_t e = first; e <= last && e < elems[m]; e++) {
                int64_t r = (int64_t)(e / cols[m]), c = (int64_t)(e % cols[m]);
                if (r < b[0]) b[0] = r;
                if (r > b[1]) b[1] = r;
                if (c < b[2]) b[2] = c;
                if (c > b[3]) b[3] = c;
            }
        }
    }
    free(rounds);

    char title[48];
    snprintf(title, sizeof title, "tiles of block (%d, %d)", tile_row, tile_col);
    if (pl_picture_init(out, PL_PIC_TILES, title, steps * 8, 0, 0)) {
        free(box);
        return -1;
    }
    out->p[0] = M;
    out->p[1] = N;
    out->p[2] = K;
    out->p[3] = tile;
    out->p[4] = (int64_t)steps;
    out->p[5] = tile_row;
    out->p[6] = tile_col;
    out->p[7] = rec->truncated ? 1 : 0;
    for (size_t s = 0; s < steps; s++)
        for (int m = 0; m < 2; m++) {
            const int64_t *b = box + 8 * s + 4 * m;
            int32_t *t = out->iv + 8 * s + 4 * m;
            if (b[1] < 0) {
                t[0] = t[1] = t[2] = t[3] = 0; /* no load of this matrix in this step */
                continue;
            }
            t[0] = (int32_t)b[0];
            t[1] = (int32_t)b[2];
            t[2] = (int32_t)(b[1] - b[0] + 1);
            t[3] = (int32_t)(b[3] - b[2] + 1);
        }
    free(box);
    return 0;
}

int pl_picture_roofline(const char *whose, double peak_flops, double peak_bw, int npoints,
                        const double *intensity, const double *flops, const char *const *names,
                        int highlight, pl_picture *out)
{
    return pl_picture_roofline_numbered(whose, peak_flops, peak_bw, npoints, intensity, flops,
                                        names, NULL, highlight, out);
}

int pl_picture_roofline_numbered(const char *whose, double peak_flops, double peak_bw, int npoints,
                                 const double *intensity, const double *flops,
                                 const char *const *names, const int *numbers, int highlight,
                                 pl_picture *out)
{
    if (!out || !whose || !(peak_flops > 0) || !(peak_bw > 0) || !isfinite(peak_flops) ||
        !isfinite(peak_bw) || npoints < 0 || npoints > PL_PIC_MAX_LABELS - 1 ||
        2 + 2 * (size_t)npoints > PL_PIC_MAX_REALS || highlight < -1 || highlight >= npoints ||
        (npoints && (!intensity || !flops || !names)))
        return -1;
    for (int i = 0; i < npoints; i++)
        if (!(intensity[i] > 0) || !isfinite(intensity[i]) || !(flops[i] > 0) ||
            !isfinite(flops[i]) || !names[i] ||
            (numbers && (numbers[i] < 1 || numbers[i] > PL_PIC_MAX_LABELS)))
            return -1;
    if (pl_picture_init(out, PL_PIC_ROOFLINE, "the roofline", numbers ? (size_t)npoints : 0,
                        2 + 2 * (size_t)npoints, 1 + (size_t)npoints))
        return -1;
    out->p[0] = npoints;
    out->p[1] = highlight;
    out->dv[0] = peak_flops;
    out->dv[1] = peak_bw;
    for (int i = 0; i < npoints; i++) {
        out->dv[2 + 2 * i] = intensity[i];
        out->dv[3 + 2 * i] = flops[i];
        snprintf(out->sv[1 + i], sizeof out->sv[1 + i], "%s", names[i]);
        if (numbers) out->iv[i] = numbers[i];
    }
    snprintf(out->sv[0], sizeof out->sv[0], "%s", whose);
    return 0;
}
