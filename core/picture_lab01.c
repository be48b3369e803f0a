/*
 * picture_lab01.c — the builders of Lab 01's pictures from a kernel's
 * record (paralab/picture.h): the grid of blocks on the simulated SMs
 * (PL_PIC_BLOCKS) and the element map, which thread wrote which element
 * (PL_PIC_ELEMENTS). Every number comes from the record: the blocks' SM
 * and wave as the simulated GPU handed them out, the stores as the
 * kernel's threads made them.
 */
#include <stdlib.h>
#include <string.h>

#include "paralab/picture.h"

/* The blocks drawn at most, and the slots past the end at most (the
 * layouts in paralab/picture.h). */
#define BLOCKS_DRAWN_MAX 65536
#define PAST_END_MAX 65536

int pl_picture_blocks(const pl_kernel_record *rec, pl_picture *out)
{
    if (!rec || !out || !rec->blocks || rec->nblocks == 0 || rec->sms < 1 || rec->per_sm < 1)
        return -1;
    uint64_t G = (uint64_t)rec->grid[0] * rec->grid[1] * rec->grid[2];
    uint64_t tpb = (uint64_t)rec->block[0] * rec->block[1] * rec->block[2];
    if (G == 0 || tpb == 0) return -1;
    size_t drawn = G < BLOCKS_DRAWN_MAX ? (size_t)G : BLOCKS_DRAWN_MAX;
    if (pl_picture_init(out, PL_PIC_BLOCKS, "blocks on SMs", 2 * drawn, 0, 0)) return -1;
    out->p[0] = (int64_t)G;
    out->p[1] = rec->sms;
    out->p[2] = rec->per_sm;
    out->p[3] = rec->waves;
    out->p[4] = (int64_t)tpb;
    out->p[5] = (int64_t)drawn;
    for (size_t b = 0; b < 2 * drawn; b++) out->iv[b] = -1; /* not in the record */
    int waves = 0;
    for (size_t i = 0; i < rec->nblocks; i++) {
        const pl_record_block *k = &rec->blocks[i];
        if ((int64_t)k->wave + 1 > waves) waves = (int)k->wave + 1;
        if (k->block >= drawn) continue;
        out->iv[2 * k->block] = (int32_t)k->sm;
        out->iv[2 * k->block + 1] = (int32_t)k->wave;
    }
    if (out->p[3] < waves) out->p[3] = waves; /* the record's own blocks, if it says fewer */
    /* drawn: the first blocks the record holds in a row (a kernel stopped
     * by a fault, a full record: not the blocks it did not keep) */
    size_t held = 0;
    while (held < drawn && out->iv[2 * held] >= 0) held++;
    if (held == 0) {
        pl_picture_free(out);
        return -1;
    }
    out->p[5] = (int64_t)held;
    out->ni = 2 * held;
    return 0;
}

int pl_picture_elements(const pl_kernel_record *rec, long n, int elem_size, pl_picture *out)
{
    if (!rec || !out || n < 1 || elem_size < 1) return -1;
    uint64_t G = (uint64_t)rec->grid[0] * rec->grid[1] * rec->grid[2];
    uint64_t tpb = (uint64_t)rec->block[0] * rec->block[1] * rec->block[2];
    uint64_t T = G * tpb; /* threads launched */
    if (G == 0 || tpb == 0 || T > (uint64_t)INT32_MAX) return -1;
    /* the slots past the end: the tail's threads (T - n of them, where the
     * grid covers more than n) and the furthest out-of-bounds store */
    uint64_t past = T > (uint64_t)n ? T - (uint64_t)n : 0;
    for (size_t i = 0; i < rec->naccess; i++) {
        const pl_record_access *a = &rec->access[i];
        if (!a->store || a->space != 1) continue;
        uint64_t e = a->offset / (uint64_t)elem_size;
        if (e >= (uint64_t)n && e - (uint64_t)n + 1 > past) past = e - (uint64_t)n + 1;
    }
    if (past > PAST_END_MAX) past = PAST_END_MAX;
    size_t drawn = (uint64_t)n < PL_PIC_MAX_INTS ? (size_t)n : PL_PIC_MAX_INTS;
    if (drawn < (size_t)n || drawn + past > PL_PIC_MAX_INTS) past = 0; /* only when all fit */
    unsigned char *wrote = calloc((size_t)((T + 7) / 8), 1); /* per thread: stored anything */
    unsigned char *twice = calloc(drawn, 1);                 /* per element: stores seen, to 2 */
    if (!wrote || !twice ||
        pl_picture_init(out, PL_PIC_ELEMENTS, "which thread wrote which element", drawn + past, 0,
                        0)) {
        free(wrote);
        free(twice);
        return -1;
    }
    for (size_t i = 0; i < drawn + past; i++) out->iv[i] = -1;
    int64_t oob = 0, first_oob = -1, again = 0;
    for (size_t i = 0; i < rec->naccess; i++) {
        const pl_record_access *a = &rec->access[i];
        if (!a->store || a->space != 1) continue;
        uint64_t g = (uint64_t)a->block * tpb + a->thread;
        if (g < T) wrote[g / 8] |= (unsigned char)(1u << (g % 8));
        uint64_t e = a->offset / (uint64_t)elem_size;
        if (e >= (uint64_t)n) {
            if (oob++ == 0) first_oob = (int64_t)g;
            if (e - (uint64_t)n < past) out->iv[drawn + (e - (uint64_t)n)] = (int32_t)g;
            continue;
        }
        if (e >= drawn) continue;
        if (twice[e] < 2 && ++twice[e] == 2) again++;
        out->iv[e] = (int32_t)g;
    }
    int64_t idle = 0;
    for (uint64_t g = 0; g < T; g++) idle += !(wrote[g / 8] >> (g % 8) & 1);
    free(wrote);
    free(twice);
    out->p[0] = n;
    out->p[1] = (int64_t)tpb;
    out->p[2] = (int64_t)G;
    out->p[3] = (int64_t)drawn;
    out->p[4] = idle;
    out->p[5] = oob;
    out->p[6] = first_oob;
    out->p[7] = again;
    return 0;
}
