/*
 * paralab/picture.h — a lab's idea as a picture: data made from what the
 * run produced (a kernel's record, paralab/device.h's pl_kernel_record;
 * the bandwidths and times the lab measured), never from a second
 * computation on the host that could disagree with the kernel.
 *
 * A lab notes a picture into the world's trace (pl_trace_note_picture,
 * paralab/trace.h; in a lab, pl_lab_picture of harness/harness.h). The
 * picture pane (PL_PANE_PICTURE, paralab/viz.h) draws the pictures of the
 * newest narrated step that noted any, at or before the time the view
 * shows; a trace file keeps them ("picture" instants) for the replay; a
 * run without the UI prints each as text under its step's narration.
 *
 * One container for every kind: parameters p[], integers iv[], reals dv[]
 * and labels sv[], their meaning per kind below (the kind's builder in
 * core/picture*.c fills them; its renderer in viz/picture*.c draws them).
 * Limits: ni at most 1<<20, nd at most 1<<16, ns at most 256.
 */
#ifndef PARALAB_PICTURE_H
#define PARALAB_PICTURE_H

#include <stddef.h>
#include <stdint.h>

#include "paralab/device.h"

typedef enum {
    PL_PIC_NONE,
    /* Lab 01: the grid of blocks on the simulated SMs (waves when blocks
     * exceed what the SMs hold at once). p[0] G blocks (linear order),
     * p[1] SMs, p[2] blocks per SM, p[3] waves, p[4] threads per block,
     * p[5] blocks drawn (<= G, <= 65536: blocks 0..p[5]-1, those the
     * record holds in a row). iv[2b], iv[2b+1]: block b's SM and wave,
     * for b < p[5]. The renderer reveals the waves one by one (its parts:
     * p[3]). */
    PL_PIC_BLOCKS,
    /* Lab 01: which thread wrote which element, from the stores into the
     * record's range 0. p[0] n elements, p[1] threads per block, p[2]
     * blocks, p[3] elements drawn (<= n, <= 1<<20), p[4] tail threads
     * (launched threads that stored nothing into range 0), p[5] stores out
     * of bounds (at element index offset / elem_size >= n), p[6] the
     * first such store's thread (global index; -1: none), p[7] elements
     * written twice or more. A thread's global index is linear block x
     * threads per block + linear thread (blockIdx.x * blockDim.x +
     * threadIdx.x in a 1-D launch). iv[i], i < p[3]: the global index of
     * the thread that last wrote element i, -1: none. When p[3] = n, iv
     * may go on past the end: iv[n + j], j < ni - n (at most 65536 slots:
     * the grid's threads past n, or to the furthest store past the end if
     * further), the thread that stored to element n + j (out of bounds;
     * seen only where range 0 was recorded longer than n elements: the
     * emulator faults on a store past the allocation), -1: none. */
    PL_PIC_ELEMENTS,
    /* Lab 02: one warp's request to global memory (a request as
     * core/simt/memstats.c counts it: the accesses of a warp's lanes at one
     * call site, each lane's k-th time there). p[0] lanes (<= 32), p[1]
     * sector bytes (32), p[2] distinct sectors touched (memstats.c's cost:
     * every 32-byte sector any accessed byte lies in), p[3] 1: a store,
     * p[4] the fewest sectors its bytes could need (ceil(distinct bytes /
     * 32)), p[5] bytes per lane (the largest access). iv[l], l < p[0] (ni
     * = p[0]): lane l's byte offset from the start of the first sector
     * touched (-1: the lane made no access). sv[0]: the access's name
     * ("coalesced", "strided x8", "transposed"). */
    PL_PIC_REQUEST,
    /* Lab 02: one warp's request to shared memory. p[0] lanes, p[1] banks
     * (32), p[2] wavefronts (memstats.c's cost: the most distinct 4-byte
     * words one bank, word % 32, serves; lanes reading one word share it),
     * p[3] the tile's row pitch in 4-byte words (32, 33: as the caller
     * declared it). iv[l], l < p[0]: lane l's (first) word index from the
     * lowest shared byte the block's logged accesses touched (the tile's
     * start; -1: none). sv[0]: its name. */
    PL_PIC_BANKS,
    /* Lab 03: a block's reduction tree, level by level. p[0] n values, p[1]
     * levels L, p[2] warp size, p[3] 1: warp shuffles (lanes, not shared
     * memory), p[4] threads per block, p[5] 1: the tree is incomplete (the
     * record was truncated, or levels past the limit of ints were left
     * out: at most 64 levels), p[6] the block (linear index), p[7] with
     * shuffles the warp whose lanes these are (the block's lowest that
     * shuffled). iv: for each level, k then k triples (thread, dst, src), in
     * thread order: the thread (its index in the block) that added element
     * src into element dst (indices into the shared array, or lanes). The
     * load of the values (s[t] = in[i]: a store with
     * no shared load besides its own element) is no level: the values are
     * the tree's leaves. The active threads of a level are its k threads; a
     * warp diverges at a level when some but not all of its threads are
     * among them. How a record becomes levels: core/picture_lab03.c. */
    PL_PIC_TREE,
    /* Lab 04: the tiles one block loads into shared memory for its output
     * tile, step by step along K. p[0] M, p[1] N, p[2] K, p[3] tile T,
     * p[4] steps S, p[5] the block's tile row, p[6] its tile column, p[7]
     * 1: the record was truncated (the later steps may be missing or cut).
     * A step is a barrier round (pl_record_access.round) in which the
     * block loaded A or B, in round order. iv[8s .. 8s+7], s < S: the A
     * tile loaded at step s (row0, col0, rows, cols: the bounding box of
     * the elements of A the block's loads in that round read; 0 rows and
     * 0 cols: none; at most T each, as pl_picture_check wants, so a round
     * whose loads span more is no picture) and the B tile (the same, in
     * B). */
    PL_PIC_TILES,
    /* Lab 04: the roofline. p[0] points P (<= 255), p[1] the highlighted
     * point (the student's; -1: none). dv[0] peak FLOP/s, dv[1] peak
     * memory bytes/s (both > 0; the ridge is at dv[0] / dv[1] FLOP/byte);
     * dv[2+2i], dv[3+2i]: point i's arithmetic intensity (FLOP/byte) and
     * its FLOP/s (both > 0). sv[0]: whose roof ("simulated H100-SXM
     * preset", "NVIDIA H200"); sv[1+i]: point i's name. iv (ni 0 or
     * P): point i's number, 1..256 (its kernel's; ni 0: i + 1). */
    PL_PIC_ROOFLINE,
    /* A bar chart with labels and an axis: p[0] bars B, p[1] the
     * highlighted bar (-1: none). dv[i]: bar i's value; dv[B]: a reference
     * line's value (NaN: none). sv[0]: the unit ("GB/s", "ms"); sv[1+i]:
     * bar i's label; sv[1+B]: the reference line's label. */
    PL_PIC_BARS,
    PL_NUM_PICTURE_KINDS
} pl_picture_kind;

#define PL_PIC_PARAMS 8
#define PL_PIC_MAX_INTS (1 << 20)
#define PL_PIC_MAX_REALS (1 << 16)
#define PL_PIC_MAX_LABELS 256

typedef struct pl_picture {
    int kind;       /* pl_picture_kind */
    char title[48]; /* the pane's heading: "blocks on SMs" */
    int64_t p[PL_PIC_PARAMS];
    int32_t *iv; /* malloc'd (pl_picture_free) */
    size_t ni;
    double *dv;
    size_t nd;
    char (*sv)[32];
    size_t ns;
} pl_picture;

/* "blocks", "elements", "request", "banks", "tree", "tiles", "roofline",
 * "bars" (the trace file's names); "?" out of range. */
const char *pl_picture_kind_name(int kind);
/* The kind named, or PL_PIC_NONE. */
int pl_picture_kind_parse(const char *name);

/* A picture of `kind` titled `title` (cut to 47 bytes) with room for ni
 * integers, nd reals and ns labels (zeroed; a count of 0: NULL). 0, or -1
 * (out of memory, counts over the limits, a kind out of range) with p
 * empty (pl_picture_free is harmless on it). p's old arrays are not freed. */
int pl_picture_init(pl_picture *p, int kind, const char *title, size_t ni, size_t nd, size_t ns);
void pl_picture_free(pl_picture *p);
/* A deep copy into dst (its old arrays are not freed): 0, or -1 out of
 * memory (dst empty). */
int pl_picture_copy(pl_picture *dst, const pl_picture *src);
/* 0 when p is well formed for its kind (counts, parameters in range, as
 * above); else -1 with err (NULL or cap 0: none) naming the kind, the
 * title, the bad value and what is allowed: 'picture "blocks" (blocks on
 * SMs): iv[4] (a block's SM) = 2: allowed are 0..1'. Checked: the title
 * and every label end within their arrays; each parameter the kind's
 * layout defines in its range (the message says it: threads per block
 * 1..1024, lanes 1..32, a highlight -1..count-1, an index within what it
 * indexes, a thread or an SM that exists); every integer of iv likewise; ni
 * exactly as the layout says; nd and ns exactly for the kinds that use
 * them (request and banks: ns 1; roofline: nd 2 + 2P, ns 1 + P; bars: nd
 * B + 1, ns B + 2), not read for the others; reals: the roofline's finite
 * and > 0, the bars' finite and >= 0 or NaN (none). The trace reader
 * refuses pictures that fail it, pl_trace_note_picture does not note them. */
int pl_picture_check(const pl_picture *p, char *err, size_t cap);

/* ---- builders: from a kernel's record (paralab/device.h) ------------------------- */

/* Lab 01's blocks on SMs, from a record made with cfg.blocks. 0 or -1. */
int pl_picture_blocks(const pl_kernel_record *rec, pl_picture *out);
/* Lab 01's element map, from a record of the stores into range 0 (the
 * output array of n elements of elem_size bytes). 0 or -1. */
int pl_picture_elements(const pl_kernel_record *rec, long n, int elem_size, pl_picture *out);
/* Lab 02: the first request of warp 0 of block 0 at the site-th call site
 * (in the order first seen) of loads (store 0) or stores (1) in range 0;
 * named `name`. 0, or -1 when there is none. */
int pl_picture_request(const pl_kernel_record *rec, int store, int site, const char *name,
                       pl_picture *out);
/* Lab 02: the first shared-memory request of warp 0 of block 0 of loads
 * or stores at the site-th shared call site, for a tile of row pitch
 * `pitch` words; named `name`. 0, or -1 when there is none. */
int pl_picture_banks(const pl_kernel_record *rec, int store, int site, int pitch, const char *name,
                     pl_picture *out);
/* Lab 03: block 0's tree, from its shared-memory accesses (shuffle 0) or
 * its warp ops (shuffle 1). 0, or -1 when the record holds no level. */
int pl_picture_tree(const pl_kernel_record *rec, int shuffle, pl_picture *out);
/* Lab 04: the tiles the block at tile (tile_row, tile_col) loaded, from
 * its loads of A (range 0, M x K row-major floats) and B (range 1, K x N)
 * per round. 0 or -1. */
int pl_picture_tiles(const pl_kernel_record *rec, int M, int N, int K, int tile, int tile_row,
                     int tile_col, pl_picture *out);
/* Lab 04's roofline (no record: the device's peaks, pl_device_peaks, and
 * the points the lab measured): whose roof, peak FLOP/s and bytes/s,
 * npoints points (intensity[i] FLOP/byte, flops[i] FLOP/s, names[i] cut
 * to 31 bytes), highlight the student's (-1: none). 0, or -1 for a value
 * out of range (a peak, intensity or FLOP/s not finite and > 0) or out of
 * memory. */
int pl_picture_roofline(const char *whose, double peak_flops, double peak_bw, int npoints,
                        const double *intensity, const double *flops, const char *const *names,
                        int highlight, pl_picture *out);
/* The same with each point's number (its kernel's: 1, 2, ...; the glyph
 * a point is drawn with); numbers NULL: 1, 2, ... in order. */
int pl_picture_roofline_numbered(const char *whose, double peak_flops, double peak_bw, int npoints,
                                 const double *intensity, const double *flops,
                                 const char *const *names, const int *numbers, int highlight,
                                 pl_picture *out);

#endif
