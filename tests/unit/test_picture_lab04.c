/*
 * test_picture_lab04.c — Lab 04's pictures: the tiles one block loads
 * along K (pl_picture_tiles from a hand-made kernel record, and its
 * renderer), the roofline (pl_picture_roofline and its renderer: a
 * point's position, the ridge, the ticks), in UTF-8 and ASCII and at
 * 80x24; set PIC04_DUMP=1 to see the grids.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../labs/04_gemm/lab04.h"
#include "../../viz/vizint.h"
#include "grid_text.h"
#include "paralab/device.h"
#include "paralab/picture.h"
#include "suites.h"

/* The cells a UTF-8 string takes. */
static int ncells(const char *s)
{
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Rows y0.. of g from x equal want[0 .. n-1] (and nothing after them on
 * the row, up to w cells); a mismatch printed. */
static void check_rows(const viz_grid *g, int x, int y0, int w, const char *const *want, int n)
{
    char row[2048], pad[2048];
    for (int y = 0; y < n; y++) {
        row_text(g, y0 + y, x, w, row, sizeof row);
        /* the want row padded with blanks to w cells */
        snprintf(pad, sizeof pad, "%s%*s", want[y], w - ncells(want[y]), "");
        CU_ASSERT_STRING_EQUAL(row, pad);
        if (strcmp(row, pad))
            fprintf(stderr, "  row %d: got  '%s'\n         want '%s'\n", y0 + y, row, pad);
    }
}

static void dump(const viz_grid *g)
{
    if (!getenv("PIC04_DUMP")) return;
    char *t = viz_grid_text(g);
    fprintf(stderr, "\n%s", t);
    free(t);
}

/* ---- a hand-made record of the tiled kernel ----------------------------------------- */

typedef struct {
    pl_kernel_record rec;
    size_t cap;
} rec_buf;

static void add(rec_buf *b, uint32_t block, uint32_t thread, uint32_t round, uint32_t site,
                uint64_t offset, int store, int space)
{
    if (b->rec.naccess == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 1024;
        b->rec.access = realloc(b->rec.access, b->cap * sizeof *b->rec.access);
    }
    b->rec.access[b->rec.naccess++] = (pl_record_access){.block = block,
                                                         .thread = thread,
                                                         .round = round,
                                                         .site = site,
                                                         .offset = offset,
                                                         .size = 4,
                                                         .store = (uint8_t)store,
                                                         .space = (uint8_t)space};
}

/* What the emulator records of Lab 04's reference (solution.cu) for
 * C = A.B with A M x K, B K x N, tiles of T, for the blocks in [first,
 * first + count): per step along K (round 2s), each thread's load of A
 * (range 0: space 1) and of B (range 1: space 2) where it falls inside,
 * its stores into the shared tiles; in round 2s + 1 the reads of the
 * shared tiles (none of global memory); at the end the store of C (not a
 * logged range: absent). */
static void record_tiled(rec_buf *b, int M, int N, int K, int T, unsigned first, unsigned count)
{
    memset(b, 0, sizeof *b);
    unsigned gx = (unsigned)((N + T - 1) / T), gy = (unsigned)((M + T - 1) / T);
    b->rec.grid[0] = gx;
    b->rec.grid[1] = gy;
    b->rec.grid[2] = 1;
    b->rec.block[0] = b->rec.block[1] = (unsigned)T;
    b->rec.block[2] = 1;
    snprintf(b->rec.kernel, sizeof b->rec.kernel, "matmul_tiled");
    for (unsigned blk = first; blk < first + count && blk < gx * gy; blk++) {
        int bx = (int)(blk % gx), by = (int)(blk / gx);
        for (int k0 = 0, s = 0; k0 < K; k0 += T, s++)
            for (int ty = 0; ty < T; ty++)
                for (int tx = 0; tx < T; tx++) {
                    uint32_t th = (uint32_t)(tx + T * ty), rd = (uint32_t)(2 * s);
                    int row = by * T + ty, col = bx * T + tx;
                    if (row < M && k0 + tx < K)
                        add(b, blk, th, rd, 0, 4ull * ((uint64_t)row * K + k0 + tx), 0, 1);
                    add(b, blk, th, rd, 1, 4ull * (ty * T + tx), 1, PL_RECORD_SHARED);
                    if (k0 + ty < K && col < N)
                        add(b, blk, th, rd, 2, 4ull * ((uint64_t)(k0 + ty) * N + col), 0, 2);
                    add(b, blk, th, rd, 3, 4ull * (T * T + ty * T + tx), 1, PL_RECORD_SHARED);
                    for (int k = 0; k < T; k++) {
                        add(b, blk, th, rd + 1, 4, 4ull * (ty * T + k), 0, PL_RECORD_SHARED);
                        add(b, blk, th, rd + 1, 5, 4ull * (T * T + k * T + tx), 0,
                            PL_RECORD_SHARED);
                    }
                }
    }
}

static void expect_tile(const pl_picture *p, int s, int m, int r0, int c0, int rows, int cols)
{
    const int32_t *t = p->iv + 8 * s + 4 * m;
    CU_ASSERT_EQUAL(t[0], r0);
    CU_ASSERT_EQUAL(t[1], c0);
    CU_ASSERT_EQUAL(t[2], rows);
    CU_ASSERT_EQUAL(t[3], cols);
    if (t[0] != r0 || t[1] != c0 || t[2] != rows || t[3] != cols)
        fprintf(stderr, "  step %d %c: got (%d %d %d %d) want (%d %d %d %d)\n", s, "AB"[m], t[0],
                t[1], t[2], t[3], r0, c0, rows, cols);
}

/* M = N = K = 64, tiles of 16: the block at tile (1, 2) loads, at step s,
 * A[16:32, 16s:16s+16] and B[16s:16s+16, 32:48]; every block of the grid
 * recorded (the others' loads left out), and the block at (0, 0) too. */
static void test_tiles_builder(void)
{
    rec_buf b;
    record_tiled(&b, 64, 64, 64, 16, 0, 0xffffffffu);
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_tiles(&b.rec, 64, 64, 64, 16, 1, 2, &p), 0);
    CU_ASSERT_EQUAL(p.kind, PL_PIC_TILES);
    CU_ASSERT_STRING_EQUAL(p.title, "tiles of block (1, 2)");
    const int64_t want[8] = {64, 64, 64, 16, 4, 1, 2, 0};
    for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(p.p[i], want[i]);
    CU_ASSERT_EQUAL_FATAL(p.ni, 32);
    for (int s = 0; s < 4; s++) {
        expect_tile(&p, s, 0, 16, 16 * s, 16, 16);
        expect_tile(&p, s, 1, 16 * s, 32, 16, 16);
    }
    pl_picture_free(&p);

    CU_ASSERT_EQUAL_FATAL(pl_picture_tiles(&b.rec, 64, 64, 64, 16, 0, 0, &p), 0);
    CU_ASSERT_EQUAL(p.p[4], 4);
    for (int s = 0; s < 4; s++) {
        expect_tile(&p, s, 0, 0, 16 * s, 16, 16);
        expect_tile(&p, s, 1, 16 * s, 0, 16, 16);
    }
    pl_picture_free(&p);
    free(b.rec.access);
}

/* Edges: M = 40, N = 24, K = 40 with tiles of 16: the block at (2, 1)
 * loads only what falls inside (A's rows 32..39, B's columns 16..23, the
 * last step's 8 of K); a record of that block alone; the truncated flag;
 * a round that loads A alone; the refusals. */
static void test_tiles_edges(void)
{
    rec_buf b;
    record_tiled(&b, 40, 24, 40, 16, 2 * 2 + 1, 1);
    b.rec.truncated = 1;
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_tiles(&b.rec, 40, 24, 40, 16, 2, 1, &p), 0);
    CU_ASSERT_EQUAL(p.p[4], 3);
    CU_ASSERT_EQUAL(p.p[7], 1);
    expect_tile(&p, 0, 0, 32, 0, 8, 16);
    expect_tile(&p, 0, 1, 0, 16, 16, 8);
    expect_tile(&p, 1, 0, 32, 16, 8, 16);
    expect_tile(&p, 1, 1, 16, 16, 16, 8);
    expect_tile(&p, 2, 0, 32, 32, 8, 8);
    expect_tile(&p, 2, 1, 32, 16, 8, 8);
    pl_picture_free(&p);
    /* a block the record left out, a tile outside C, bad sizes */
    CU_ASSERT_EQUAL(pl_picture_tiles(&b.rec, 40, 24, 40, 16, 0, 0, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_tiles(&b.rec, 40, 24, 40, 16, 3, 0, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_tiles(&b.rec, 40, 24, 40, 16, 0, 2, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_tiles(&b.rec, 0, 24, 40, 16, 0, 0, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_tiles(&b.rec, 40, 24, 40, 0, 0, 0, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_tiles(NULL, 40, 24, 40, 16, 0, 0, &p), -1);
    free(b.rec.access);

    /* A in round 0, B in round 1 (a barrier between): two steps, one matrix each */
    memset(&b, 0, sizeof b);
    b.rec.grid[0] = b.rec.grid[1] = b.rec.grid[2] = 1;
    for (uint32_t t = 0; t < 4; t++) {
        add(&b, 0, t, 3, 0, 4 * (t * 8 + 2), 0, 1);      /* A[0:4, 2:3] of 8 x 8 */
        add(&b, 0, t, 5, 1, 4 * (8 * 5 + t), 0, 2);      /* B[5:6, 0:4] */
        add(&b, 0, t, 4, 2, 4 * t, 1, 1);                /* a store: not a load */
        add(&b, 0, t, 4, 3, 4 * t, 0, PL_RECORD_SHARED); /* shared: not A or B */
    }
    CU_ASSERT_EQUAL_FATAL(pl_picture_tiles(&b.rec, 8, 8, 8, 8, 0, 0, &p), 0);
    CU_ASSERT_EQUAL(p.p[4], 2);
    CU_ASSERT_EQUAL(p.p[7], 0);
    expect_tile(&p, 0, 0, 0, 2, 4, 1);
    expect_tile(&p, 0, 1, 0, 0, 0, 0);
    expect_tile(&p, 1, 0, 0, 0, 0, 0);
    expect_tile(&p, 1, 1, 5, 0, 1, 4);
    pl_picture_free(&p);
    free(b.rec.access);
}

/* The real thing: Lab 04's reference tiled kernel (kernels_lab04.cu, in
 * call mode) recorded by the simulated GPU for the block at tile (tr, tc)
 * of C = A.B (M x K times K x N), and its tiles picture; C checked too. */
static void record_real(int M, int N, int K, int tr, int tc, pl_kernel_record *rec, pl_picture *p)
{
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    float *A = malloc(na * sizeof *A), *B = malloc(nb * sizeof *B), *C = malloc(nc * sizeof *C);
    float *dA = NULL, *dB = NULL, *dC = NULL;
    CU_ASSERT_FATAL(A && B && C);
    for (size_t i = 0; i < na; i++) A[i] = (float)(i % 7) - 3;
    for (size_t i = 0; i < nb; i++) B[i] = (float)(i % 5) - 2;
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&dA, na * sizeof *A), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&dB, nb * sizeof *B), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&dC, nc * sizeof *C), cudaSuccess);
    CU_ASSERT_EQUAL(cudaMemcpy(dA, A, na * sizeof *A, cudaMemcpyHostToDevice), cudaSuccess);
    CU_ASSERT_EQUAL(cudaMemcpy(dB, B, nb * sizeof *B, cudaMemcpyHostToDevice), cudaSuccess);
    unsigned gx = (unsigned)((N + 15) / 16);
    pl_record_config c = {.max_accesses = 1 << 16,
                          .nranges = 2,
                          .block_first = (unsigned)tr * gx + (unsigned)tc,
                          .block_count = 1};
    c.range[0].lo = dA;
    c.range[0].len = na * sizeof *A;
    c.range[1].lo = dB;
    c.range[1].len = nb * sizeof *B;
    CU_ASSERT_EQUAL(pl_device_caps()->records, 1);
    CU_ASSERT_EQUAL_FATAL(pl_device_record_begin(&c), 0);
    CU_ASSERT_EQUAL(lab04_solution.matmul_tiled(dC, dA, dB, M, N, K), cudaSuccess);
    CU_ASSERT_EQUAL(cudaDeviceSynchronize(), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(pl_device_record_end(rec), 0);
    CU_ASSERT_EQUAL(cudaMemcpy(C, dC, nc * sizeof *C, cudaMemcpyDeviceToHost), cudaSuccess);
    long wrong = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = 0;
            for (int k = 0; k < K; k++) want += (double)A[(size_t)i * K + k] * B[(size_t)k * N + j];
            wrong += C[(size_t)i * N + j] != (float)want; /* small integers: exact */
        }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(pl_picture_tiles(rec, M, N, K, 16, tr, tc, p), 0);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    free(A);
    free(B);
    free(C);
}

static void test_tiles_recorded(void)
{
    pl_kernel_record rec;
    pl_picture p = {0};
    /* 64^3: the block at (1, 2), as the hand-made record above */
    record_real(64, 64, 64, 1, 2, &rec, &p);
    CU_ASSERT_STRING_EQUAL(rec.kernel, "matmul_tiled");
    CU_ASSERT_EQUAL(rec.grid[0], 4);
    CU_ASSERT_EQUAL(rec.grid[1], 4);
    CU_ASSERT_EQUAL(rec.block[0], 16);
    CU_ASSERT_EQUAL(rec.block[1], 16);
    CU_ASSERT_EQUAL(rec.truncated, 0);
    /* one load of A and one of B per thread per step, all of block 6, in rounds 0, 2, 4, 6 */
    CU_ASSERT_EQUAL(rec.naccess, 2 * 256 * 4);
    size_t per_round[8] = {0}, other = 0;
    for (size_t i = 0; i < rec.naccess; i++) {
        const pl_record_access *a = &rec.access[i];
        if (a->block != 6 || a->store || a->size != 4 || a->round >= 8 ||
            (a->space != 1 && a->space != 2))
            other++;
        else
            per_round[a->round]++;
    }
    CU_ASSERT_EQUAL(other, 0);
    for (int r = 0; r < 8; r++) CU_ASSERT_EQUAL(per_round[r], r % 2 ? 0 : 512);
    CU_ASSERT_EQUAL(p.p[4], 4);
    CU_ASSERT_EQUAL(p.p[7], 0);
    if (p.p[4] == 4)
        for (int s = 0; s < 4; s++) {
            expect_tile(&p, s, 0, 16, 16 * s, 16, 16);
            expect_tile(&p, s, 1, 16 * s, 32, 16, 16);
        }
    pl_picture_free(&p);
    pl_kernel_record_free(&rec);

    /* M = 40, N = 24, K = 40: the block at (2, 1), cut by every edge */
    record_real(40, 24, 40, 2, 1, &rec, &p);
    CU_ASSERT_EQUAL(p.p[4], 3);
    if (p.p[4] == 3) {
        expect_tile(&p, 0, 0, 32, 0, 8, 16);
        expect_tile(&p, 0, 1, 0, 16, 16, 8);
        expect_tile(&p, 1, 0, 32, 16, 8, 16);
        expect_tile(&p, 1, 1, 16, 16, 16, 8);
        expect_tile(&p, 2, 0, 32, 32, 8, 8);
        expect_tile(&p, 2, 1, 32, 16, 8, 8);
    }
    pl_picture_free(&p);
    pl_kernel_record_free(&rec);
}

/* Lab 04's warp tiles (lab04_matmul_warptiles) recorded for one block of
 * C = A.B with A M x K, B K x N (small integers: C exact, checked), each
 * matrix `off` floats past a 16-byte boundary (0, or 1: no float4 then):
 * how many loads of A and B fell in each barrier round, how many rounds
 * the block had, whether every byte of A and B was loaded exactly once and
 * every byte of C stored exactly once (nothing else of them touched), and
 * whether thread 0 fetched the next slice before it read the shared
 * buffers in round 1 (the loads in flight during the multiply-adds), and
 * how many wavefronts warp 0's stores of A into shared memory take.
 *
 * The emulator logs a float4 whose members the kernel then uses one by
 * one as four 4-byte accesses (GCC splits the copy before the accesses are
 * instrumented): the counts below are in floats. That the GPU build's
 * loads are 16 bytes wide, tests/cuda_ptx.sh checks in its PTX. */
typedef struct {
    size_t loads_in_round[8]; /* floats of A and B */
    unsigned rounds;          /* the highest round seen, plus one */
    int once[3];              /* A and B loaded, C stored: every byte exactly once */
    int fetch_first;          /* thread 0, round 1: a load of A or B before any shared read */
    unsigned a_wavefronts[4]; /* warp 0's first 4 shared stores (slice 0 of A: pa[0].x..w) */
} wt_seen;

static void record_warptiles(int M, int N, int K, int off, wt_seen *w)
{
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    float *A = malloc(na * sizeof *A), *B = malloc(nb * sizeof *B), *C = malloc(nc * sizeof *C);
    size_t len[3] = {na * sizeof *A, nb * sizeof *B, nc * sizeof *C};
    unsigned char *hit[3] = {calloc(len[0], 1), calloc(len[1], 1), calloc(len[2], 1)};
    float *bA = NULL, *bB = NULL, *bC = NULL, *dA, *dB, *dC;
    CU_ASSERT_FATAL(A && B && C && hit[0] && hit[1] && hit[2]);
    memset(w, 0, sizeof *w);
    for (size_t i = 0; i < na; i++) A[i] = (float)(i % 7) - 3;
    for (size_t i = 0; i < nb; i++) B[i] = (float)(i % 5) - 2;
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&bA, len[0] + 16), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&bB, len[1] + 16), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(cudaMalloc((void **)&bC, len[2] + 16), cudaSuccess);
    dA = bA + off;
    dB = bB + off;
    dC = bC + off;
    CU_ASSERT_EQUAL(cudaMemcpy(dA, A, len[0], cudaMemcpyHostToDevice), cudaSuccess);
    CU_ASSERT_EQUAL(cudaMemcpy(dB, B, len[1], cudaMemcpyHostToDevice), cudaSuccess);
    pl_record_config c = {
        .max_accesses = 1 << 20, .shared = 1, .nranges = 3, .block_first = 0, .block_count = 1};
    void *lo[3] = {dA, dB, dC};
    for (int i = 0; i < 3; i++) {
        c.range[i].lo = lo[i];
        c.range[i].len = len[i];
    }
    pl_kernel_record rec;
    CU_ASSERT_EQUAL_FATAL(pl_device_record_begin(&c), 0);
    CU_ASSERT_EQUAL(lab04_matmul_warptiles(dC, dA, dB, M, N, K), cudaSuccess);
    CU_ASSERT_EQUAL(cudaDeviceSynchronize(), cudaSuccess);
    CU_ASSERT_EQUAL_FATAL(pl_device_record_end(&rec), 0);
    CU_ASSERT_STRING_EQUAL(rec.kernel, "matmul_warptiles");
    CU_ASSERT_EQUAL(rec.block[0], 256);
    CU_ASSERT_EQUAL(rec.truncated, 0);
    for (int r = 0; r < 3; r++) w->once[r] = 1;
    int seen0 = 0;                /* thread 0's first access in round 1: 1 global, 2 shared */
    unsigned nst[32] = {0};       /* warp 0: shared stores so far, per lane */
    uint64_t word[4][32] = {{0}}; /* ... the word its j-th store wrote (j < 4) */
    for (size_t i = 0; i < rec.naccess; i++) {
        const pl_record_access *a = &rec.access[i];
        if (a->thread == 0 && a->round == 1 && !a->store && !seen0)
            seen0 = a->space == PL_RECORD_SHARED ? 2 : 1;
        if (a->space == PL_RECORD_SHARED && a->store && a->round == 0 && a->thread < 32 &&
            nst[a->thread] < 4)
            word[nst[a->thread]++][a->thread] = a->offset / 4;
        if (a->space == PL_RECORD_SHARED) continue;
        int r = a->space - 1;
        if (a->round + 1 > w->rounds) w->rounds = a->round + 1;
        if (a->store != (r == 2)) w->once[r] = 0; /* a store to A or B, a load of C */
        if (r < 2 && a->round < 8) w->loads_in_round[a->round] += a->size / 4;
        for (unsigned b = 0; b < a->size; b++)
            if (a->offset + b >= len[r] || hit[r][a->offset + b]++) w->once[r] = 0;
    }
    for (int r = 0; r < 3; r++)
        for (size_t b = 0; b < len[r]; b++)
            if (hit[r][b] != 1) w->once[r] = 0;
    w->fetch_first = seen0 == 1;
    /* a request's wavefronts: the most distinct words any one bank holds
     * (the offsets count from the block's lowest shared byte: a shift of
     * every word alike, which moves banks but not how many meet) */
    for (int j = 0; j < 4; j++) {
        unsigned most = 0;
        for (int l = 0; l < 32; l++) {
            unsigned in_bank = 0;
            for (int o = 0; o < 32 && nst[o] > (unsigned)j; o++) {
                int earlier = 0; /* word[j][o] already counted (lanes sharing a word) */
                for (int p = 0; p < o; p++) earlier |= word[j][p] == word[j][o];
                in_bank += !earlier && word[j][o] % 32 == word[j][l] % 32;
            }
            if (nst[l] > (unsigned)j && in_bank > most) most = in_bank;
        }
        w->a_wavefronts[j] = most;
    }
    pl_kernel_record_free(&rec);
    CU_ASSERT_EQUAL(cudaMemcpy(C, dC, len[2], cudaMemcpyDeviceToHost), cudaSuccess);
    long wrong = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = 0;
            for (int k = 0; k < K; k++) want += (double)A[(size_t)i * K + k] * B[(size_t)k * N + j];
            wrong += C[(size_t)i * N + j] != (float)want;
        }
    CU_ASSERT_EQUAL(wrong, 0);
    cudaFree(bA);
    cudaFree(bB);
    cudaFree(bC);
    free(A);
    free(B);
    free(C);
    for (int r = 0; r < 3; r++) free(hit[r]);
}

static void test_warptiles_recorded(void)
{
    wt_seen w;
    /* 64^3, one block, steps of 16 along K: the first slice (16 columns of
     * A, 16 rows of B: 2048 floats) is loaded in round 0, before the first
     * barrier; in round t (t = 1..3) slice t, fetched while slice t-1 is
     * multiplied; nothing in round 4, the last slice's multiply; C written
     * after the last of the 5 barriers (one before the loop, one a step:
     * the register tiles need two), in round 5. */
    record_warptiles(64, 64, 64, 0, &w);
    for (int r = 0; r < 3; r++) CU_ASSERT_EQUAL(w.once[r], 1);
    for (int r = 0; r < 8; r++) CU_ASSERT_EQUAL(w.loads_in_round[r], r < 4 ? 2048 : 0);
    CU_ASSERT_EQUAL(w.rounds, 6);
    CU_ASSERT_EQUAL(w.fetch_first, 1);
    /* warp 0 stores slice 0 of A transposed, a float at a time: lanes 4i..4i+3
     * write rows i, columns 0, 4, 8, 12 (+0..3 in the 4 stores): with A's
     * shared rows 132 floats apart (WT_AP), 2 words in each of 16 banks, 2
     * wavefronts a store (128 apart: 4 in each of 8, 4 wavefronts) */
    for (int j = 0; j < 4; j++) CU_ASSERT_EQUAL(w.a_wavefronts[j], 2);

    /* the same with A, B and C a float past a 16-byte boundary: rows of 64
     * floats, but no float4 may be used (the kernel's device assert stops
     * a misaligned one: the launch would fail); the same result */
    record_warptiles(64, 64, 64, 1, &w);
    for (int r = 0; r < 3; r++) CU_ASSERT_EQUAL(w.once[r], 1);
    for (int r = 0; r < 8; r++) CU_ASSERT_EQUAL(w.loads_in_round[r], r < 4 ? 2048 : 0);
    CU_ASSERT_EQUAL(w.rounds, 6);

    /* 17^3 (rows not 16-byte aligned: one float at a time): two steps, of
     * 16 and of 1; zeros past the edges, never loaded */
    record_warptiles(17, 17, 17, 0, &w);
    for (int r = 0; r < 3; r++) CU_ASSERT_EQUAL(w.once[r], 1);
    CU_ASSERT_EQUAL(w.loads_in_round[0], 2 * 17 * 16);
    CU_ASSERT_EQUAL(w.loads_in_round[1], 2 * 17 * 1);
    CU_ASSERT_EQUAL(w.loads_in_round[2], 0);
    CU_ASSERT_EQUAL(w.rounds, 4);

    /* M = 100, N = 64, K = 36: float4 rows, cut by the edges: the last
     * step's slice is 4 columns of A and 4 rows of B, rows 100-127 of the
     * block's tile load nothing */
    record_warptiles(100, 64, 36, 0, &w);
    for (int r = 0; r < 3; r++) CU_ASSERT_EQUAL(w.once[r], 1);
    CU_ASSERT_EQUAL(w.loads_in_round[0], (100 + 64) * 16);
    CU_ASSERT_EQUAL(w.loads_in_round[1], (100 + 64) * 16);
    CU_ASSERT_EQUAL(w.loads_in_round[2], (100 + 64) * 4);
    CU_ASSERT_EQUAL(w.loads_in_round[3], 0);
    CU_ASSERT_EQUAL(w.rounds, 5);
}

/* A tiles picture of M x N x K, tiles of T, for the block at (tr, tc),
 * made by the builder from the hand-made record. */
static void tiles_picture(int M, int N, int K, int T, int tr, int tc, pl_picture *p)
{
    rec_buf b;
    unsigned gx = (unsigned)((N + T - 1) / T);
    record_tiled(&b, M, N, K, T, (unsigned)tr * gx + (unsigned)tc, 1);
    CU_ASSERT_EQUAL_FATAL(pl_picture_tiles(&b.rec, M, N, K, T, tr, tc, p), 0);
    free(b.rec.access);
}

/* Draws p (tiles or roofline) at reveal into a w x h rect at (1, 1) of a
 * grid 2 larger each way, and checks nothing lands outside the rect;
 * returns the rows the renderer says it used. */
static int render(viz_grid *g, const pl_picture *p, int utf8, int w, int h, double reveal)
{
    CU_ASSERT_EQUAL_FATAL(viz_grid_resize(g, w + 2, h + 2), 0);
    g->utf8 = utf8;
    viz_grid_clear(g);
    pl_rect r = {1, 1, w, h};
    int rows = p->kind == PL_PIC_TILES ? viz_pic_tiles(g, r, p, reveal)
                                       : viz_pic_roofline(g, r, p, reveal);
    int outside = 0;
    for (int y = 0; y < h + 2; y++)
        for (int x = 0; x < w + 2; x++)
            if ((x == 0 || y == 0 || x == w + 1 || y == h + 1) && cell(g, x, y)->ch != ' ')
                outside++;
    CU_ASSERT_EQUAL(outside, 0);
    CU_ASSERT(rows >= 0 && rows <= h);
    dump(g);
    return rows;
}

/* 64^3, tiles of 16, the block at (1, 2), at 80 columns: the step line,
 * the tiles of each step lit as the reveal passes it, in UTF-8 and ASCII. */
static void test_tiles_render(void)
{
    pl_picture p;
    tiles_picture(64, 64, 64, 16, 1, 2, &p);
    viz_grid g = {0};
    CU_ASSERT_EQUAL(viz_pic_tiles_rows(&p, 80), 8);
    static const char *head =
        "block (1, 2) computes C[16:32, 32:48] in 4 steps along K (tiles of 16)";
    static const char *labels = "A 64x64      B 64x64      C 64x64";
    static const char *u8[3][4] = {
        /* reveal 0: no step yet */
        {"· · · ·      · · ░░·      · · · ·", "░░░░░░░░  ×  · · ░░·   =  · · ◆◆·",
         "· · · ·      · · ░░·      · · · ·", "· · · ·      · · ░░·      · · · ·"},
        /* reveal 0.5: step 2 */
        {"· · · ·      · · ▒▒·      · · · ·", "▒▒██░░░░  ×  · · ██·   =  · · ◆◆·",
         "· · · ·      · · ░░·      · · · ·", "· · · ·      · · ░░·      · · · ·"},
        /* reveal 1: step 4 */
        {"· · · ·      · · ▒▒·      · · · ·", "▒▒▒▒▒▒██  ×  · · ▒▒·   =  · · ◆◆·",
         "· · · ·      · · ▒▒·      · · · ·", "· · · ·      · · ██·      · · · ·"},
    };
    static const char *ascii[3][4] = {
        {". . . .      . . ::.      . . . .", "::::::::  x  . . ::.   =  . . @@.",
         ". . . .      . . ::.      . . . .", ". . . .      . . ::.      . . . ."},
        {". . . .      . . ++.      . . . .", "++##::::  x  . . ##.   =  . . @@.",
         ". . . .      . . ::.      . . . .", ". . . .      . . ::.      . . . ."},
        {". . . .      . . ++.      . . . .", "++++++##  x  . . ++.   =  . . @@.",
         ". . . .      . . ++.      . . . .", ". . . .      . . ##.      . . . ."},
    };
    static const char *steps[3] = {
        "4 steps along K to come",
        "step 2 of 4 along K: A[16:32, 16:32] and B[16:32, 32:48] in shared memory",
        "step 4 of 4 along K: A[16:32, 48:64] and B[48:64, 32:48] in shared memory"};
    static const double reveal[3] = {0, 0.5, 1};
    for (int utf8 = 1; utf8 >= 0; utf8--)
        for (int k = 0; k < 3; k++) {
            CU_ASSERT_EQUAL(render(&g, &p, utf8, 80, 10, reveal[k]), 8);
            const char *want[8] = {head, steps[k], labels};
            for (int i = 0; i < 4; i++) want[3 + i] = utf8 ? u8[k][i] : ascii[k][i];
            want[7] = utf8 ? "█ this step  ▒ loaded before  ░ still to load  ◆ the block's C tile"
                             "  · others"
                           : "# this step  + loaded before  : still to load  @ the block's C tile"
                             "  . others";
            check_rows(&g, 1, 1, 80, want, 8);
            check_rows(&g, 1, 9, 80, (const char *const[]){"", ""}, 2);
        }
    /* the cells' colours and attributes: this step's bold, the C tile's bold */
    render(&g, &p, 1, 80, 10, 0.5);
    CU_ASSERT_EQUAL(cell(&g, 1 + 2, 1 + 4)->fg, COL_KERNEL);
    CU_ASSERT_EQUAL(cell(&g, 1 + 2, 1 + 4)->attr, ATTR_BOLD);
    CU_ASSERT_EQUAL(cell(&g, 1 + 0, 1 + 4)->fg, COL_COPY);
    CU_ASSERT_EQUAL(cell(&g, 1 + 4, 1 + 4)->fg, COL_DIM);
    CU_ASSERT_EQUAL(cell(&g, 1 + 30, 1 + 4)->fg, COL_FOCUS);
    CU_ASSERT_EQUAL(cell(&g, 1 + 30, 1 + 4)->attr, ATTR_BOLD);
    /* a reveal past a step's share shows the next: 0.26 is step 2, 0.25 step 1 */
    render(&g, &p, 0, 80, 10, 0.26);
    check_rows(&g, 1, 2, 80, &steps[1], 1);
    render(&g, &p, 0, 80, 10, 0.25);
    check_rows(&g, 1, 2, 80,
               (const char *const[]){"step 1 of 4 along K: A[16:32, 0:16] and B[0:16, 32:48] in "
                                     "shared memory"},
               1);
    /* too few rows: the step line alone */
    CU_ASSERT_EQUAL(render(&g, &p, 1, 80, 2, 0.5), 1);
    check_rows(&g, 1, 1, 80, &steps[1], 1);
    pl_picture_free(&p);
    viz_grid_free(&g);
}

/* 512^3 (32 tiles each way), the block at (16, 16): at 120 columns a cell
 * is 2x2 tiles; in 78 x 14 (an 80x24 screen's pane) 4x4 tiles, the
 * shorter step line and legend, saying so. */
static void test_tiles_folded(void)
{
    pl_picture p;
    tiles_picture(512, 512, 512, 16, 16, 16, &p);
    CU_ASSERT_EQUAL(p.p[4], 32);
    viz_grid g = {0};
    CU_ASSERT_EQUAL(viz_pic_tiles_rows(&p, 120), 20);
    CU_ASSERT_EQUAL(viz_pic_tiles_rows(&p, 78), 20); /* 2x2 tiles a cell, one column each */
    for (int utf8 = 1; utf8 >= 0; utf8--) {
        CU_ASSERT_EQUAL(render(&g, &p, utf8, 78, 14, 0.5), 12);
        const char *o = utf8 ? "· · · · · · · ·" : ". . . . . . . .";
        const char *b_before = utf8 ? "· · · · ▒▒· · ·" : ". . . . ++. . .";
        const char *b_now = utf8 ? "· · · · ██· · ·" : ". . . . ##. . .";
        const char *b_later = utf8 ? "· · · · ░░· · ·" : ". . . . ::. . .";
        const char *c_mine = utf8 ? "· · · · ◆◆· · ·" : ". . . . @@. . .";
        const char *a_strip = utf8 ? "▒▒▒▒▒▒██░░░░░░░░" : "++++++##::::::::";
        /* A's strip on row 4 (tile row 16 / 4), B's column 4 (the 16th step is cell 3), C's
         * tile at (4, 4); "x" and "=" on the middle row (3) of the 8 */
        char rows[8][160];
        for (int i = 0; i < 8; i++)
            snprintf(rows[i], sizeof rows[i], "%s%s%s%s%s", i == 4 ? a_strip : o,
                     i == 3   ? (utf8 ? "   ×  " : "   x  ")
                     : i == 4 ? "     "
                              : "      ",
                     i < 3    ? b_before
                     : i == 3 ? b_now
                              : b_later,
                     i == 3 ? "   =  " : "      ", i == 4 ? c_mine : o);
        const char *want[12] = {
            "block (16, 16) computes C[256:272, 256:272] in 32 steps along K (tiles of 16)",
            "step 16 of 32 along K: A[256:272, 240:256] and B[240:256, 256:272]",
            "A 512x512            B 512x512            C 512x512"};
        for (int i = 0; i < 8; i++) want[3 + i] = rows[i];
        want[11] = utf8 ? "█ now  ▒ before  ░ to load  ◆ its C tile  · others  (a cell: 4x4 tiles)"
                        : "# now  + before  : to load  @ its C tile  . others  (a cell: 4x4 tiles)";
        check_rows(&g, 1, 1, 78, want, 12);
    }
    /* 120 x 24: 2x2 tiles a cell, the long forms */
    CU_ASSERT_EQUAL(render(&g, &p, 0, 120, 24, 1), 20);
    check_rows(&g, 1, 2, 120,
               (const char *const[]){"step 32 of 32 along K: A[256:272, 496:512] and B[496:512, "
                                     "256:272] in shared memory",
                                     "A 512x512                            B 512x512          "
                                     "                  C 512x512",
                                     ". . . . . . . . . . . . . . . .      . . . . . . . . ++. . "
                                     ". . . . .      . . . . . . . . . . . . . . . ."},
               3);
    check_rows(&g, 1, 12, 120,
               (const char *const[]){"++++++++++++++++++++++++++++++##     . . . . . . . . ++. . "
                                     ". . . . .      . . . . . . . . @@. . . . . . ."},
               1);
    check_rows(&g, 1, 20, 120,
               (const char *const[]){"# this step  + loaded before  : still to load  @ the "
                                     "block's C tile  . others  (a cell: 2x2 tiles)"},
               1);
    pl_picture_free(&p);
    viz_grid_free(&g);
}

/* pl_picture_roofline's layout and refusals. */
static void test_roofline_builder(void)
{
    const double ai[3] = {0.25, 3.9, 28.4}, fl[3] = {829e9, 11.5e12, 38.3e12};
    const char *names[3] = {"naive", "a name longer than thirty-one bytes", "register tiles"};
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(
        pl_picture_roofline("simulated H100-SXM preset", 67e12, 3.35e12, 3, ai, fl, names, 1, &p),
        0);
    CU_ASSERT_EQUAL(p.kind, PL_PIC_ROOFLINE);
    CU_ASSERT_STRING_EQUAL(p.title, "the roofline");
    CU_ASSERT_EQUAL(p.p[0], 3);
    CU_ASSERT_EQUAL(p.p[1], 1);
    CU_ASSERT_EQUAL_FATAL(p.nd, 8);
    CU_ASSERT_EQUAL_FATAL(p.ns, 4);
    const double dv[8] = {67e12, 3.35e12, 0.25, 829e9, 3.9, 11.5e12, 28.4, 38.3e12};
    for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(p.dv[i], dv[i]);
    CU_ASSERT_STRING_EQUAL(p.sv[0], "simulated H100-SXM preset");
    CU_ASSERT_STRING_EQUAL(p.sv[1], "naive");
    CU_ASSERT_STRING_EQUAL(p.sv[2], "a name longer than thirty-one b");
    CU_ASSERT_STRING_EQUAL(p.sv[3], "register tiles");
    pl_picture_free(&p);
    const double bad[1] = {0}, nan1[1] = {NAN};
    CU_ASSERT_EQUAL(pl_picture_roofline("x", 0, 1, 0, NULL, NULL, NULL, -1, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_roofline("x", 1, INFINITY, 0, NULL, NULL, NULL, -1, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_roofline("x", 1, 1, 1, bad, fl, names, -1, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_roofline("x", 1, 1, 1, ai, nan1, names, -1, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_roofline("x", 1, 1, 3, ai, fl, names, 3, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_roofline("x", 1, 1, 256, ai, fl, names, -1, &p), -1);
    CU_ASSERT_EQUAL(pl_picture_roofline(NULL, 1, 1, 0, NULL, NULL, NULL, -1, &p), -1);
    /* no points: the roof alone */
    CU_ASSERT_EQUAL(pl_picture_roofline("x", 1e13, 1e12, 0, NULL, NULL, NULL, -1, &p), 0);
    CU_ASSERT_EQUAL(p.p[0], 0);
    pl_picture_free(&p);
}

/* A roofline point's position: peak 10 TFLOP/s, 1 TB/s (the ridge at 10
 * FLOP/B); x from 1 to 100 FLOP/B, y from 100 G to 10 T FLOP/s, 12
 * columns and 3 rows a decade at 60 columns. The plot's column 0 is grid
 * column 5 (after "100G" and the axis), its top row (10 T) row 1, its
 * bottom (100 G) row 7: a point at 1 FLOP/B and 500 GFLOP/s at column
 * round(0 x 12) = 0, round(log10(5) x 3) = 2 rows up; 10 FLOP/B and 10
 * TFLOP/s at 12 and 6; 20 FLOP/B and 2 TFLOP/s at round(1.301 x 12) = 16
 * and round(1.301 x 3) = 4. */
static void test_roofline_point(void)
{
    const double ai[3] = {1, 10, 20}, fl[3] = {5e11, 1e13, 2e12};
    const char *names[3] = {"one", "two", "mine"};
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(pl_picture_roofline("test", 1e13, 1e12, 3, ai, fl, names, 2, &p), 0);
    viz_grid g = {0};
    CU_ASSERT_EQUAL(viz_pic_roofline_rows(&p, 60), 14);
    for (int utf8 = 1; utf8 >= 0; utf8--) {
        CU_ASSERT_EQUAL(render(&g, &p, utf8, 60, 14, 1), 14);
        /* the points (grid offset 1, 1) */
        CU_ASSERT_EQUAL(cell(&g, 1 + 5 + 0, 1 + 7 - 2)->ch, '1');
        CU_ASSERT_EQUAL(cell(&g, 1 + 5 + 12, 1 + 7 - 6)->ch, '2');
        CU_ASSERT_EQUAL(cell(&g, 1 + 5 + 16, 1 + 7 - 4)->ch, utf8 ? 0x25C6u : '@');
        CU_ASSERT_EQUAL(cell(&g, 1 + 5 + 16, 1 + 7 - 4)->attr, ATTR_BOLD | ATTR_REVERSE);
        CU_ASSERT_EQUAL(cell(&g, 1 + 5 + 16, 1 + 7 - 4)->fg, COL_FOCUS);
        CU_ASSERT_EQUAL(cell(&g, 1 + 5 + 0, 1 + 7 - 2)->fg, COL_KERNEL);
        /* the ridge's column: dotted under the roof */
        for (int row = 0; row < 6; row++)
            CU_ASSERT_EQUAL(cell(&g, 1 + 5 + 12, 1 + 7 - row)->ch, utf8 ? 0x250Au : ':');
        static const char *u8[14] = {"test's roof: 10.0 TFLOP/s, 1.00 TB/s, ridge 10.0 FLOP/B",
                                     " 10T┤          ╱╱2──────────── two",
                                     "    │      ╱╱╱╱  ┊",
                                     "    │   ╱╱╱      ┊   ◆ mine",
                                     "  1T┤╱╱╱         ┊",
                                     "    │1 one       ┊",
                                     "    │            ┊",
                                     "100G┤            ┊",
                                     "    └┴───────────┴───────────┴",
                                     "     1           10         100  FLOP/B",
                                     "╱ memory roof  ─ FP32 peak  ┊ ridge  (y: FLOP/s, log-log)",
                                     "1 one     1.0 FLOP/B     500 GFLOP/s   50% of its roof",
                                     "2 two    10.0 FLOP/B    10.0 TFLOP/s  100% of its roof",
                                     "◆ mine   20.0 FLOP/B    2.00 TFLOP/s   20% of its roof"};
        static const char *ascii[14] = {"test's roof: 10.0 TFLOP/s, 1.00 TB/s, ridge 10.0 FLOP/B",
                                        " 10T+          //2------------ two",
                                        "    |      ////  :",
                                        "    |   ///      :   @ mine",
                                        "  1T+///         :",
                                        "    |1 one       :",
                                        "    |            :",
                                        "100G+            :",
                                        "    ++-----------+-----------+",
                                        "     1           10         100  FLOP/B",
                                        "/ memory roof  - FP32 peak  : ridge  (y: FLOP/s, log-log)",
                                        "1 one     1.0 FLOP/B     500 GFLOP/s   50% of its roof",
                                        "2 two    10.0 FLOP/B    10.0 TFLOP/s  100% of its roof",
                                        "@ mine   20.0 FLOP/B    2.00 TFLOP/s   20% of its roof"};
        check_rows(&g, 1, 1, 60, utf8 ? u8 : ascii, 14);
    }
    pl_picture_free(&p);
    viz_grid_free(&g);
}

/* Points numbered by their kernels (Lab 04's --kernel 3: one point, 3;
 * kernels 1 and 3 of a run where 2 had no time: 1 and 3), and refusals. */
static void test_roofline_numbered(void)
{
    const double ai[3] = {1, 10, 20}, fl[3] = {5e11, 1e13, 2e12};
    const char *names[3] = {"one", "two", "mine"};
    const int num1[1] = {3}, num2[2] = {1, 3}, bad[1] = {0};
    pl_picture p;
    viz_grid g = {0};
    CU_ASSERT_EQUAL_FATAL(pl_picture_roofline_numbered("test", 1e13, 1e12, 1, &ai[1], &fl[1],
                                                       &names[1], num1, -1, &p),
                          0);
    CU_ASSERT_EQUAL(pl_picture_check(&p, NULL, 0), 0);
    render(&g, &p, 0, 60, 14, 1);
    /* the point and its legend row's glyph: 3, no 1 */
    int threes = 0, ones = 0;
    for (int y = 0; y < g.h; y++)
        for (int x = 0; x < g.w; x++)
            if (cell(&g, x, y)->fg == COL_KERNEL) {
                threes += cell(&g, x, y)->ch == '3';
                ones += cell(&g, x, y)->ch == '1';
            }
    CU_ASSERT_EQUAL(threes, 2);
    CU_ASSERT_EQUAL(ones, 0);
    pl_picture_free(&p);
    const double ai2[2] = {1, 20}, fl2[2] = {5e11, 2e12};
    const char *names2[2] = {"one", "mine"};
    CU_ASSERT_EQUAL_FATAL(
        pl_picture_roofline_numbered("test", 1e13, 1e12, 2, ai2, fl2, names2, num2, -1, &p), 0);
    render(&g, &p, 0, 60, 14, 1);
    CU_ASSERT_EQUAL(cell(&g, 1 + 5 + 0, 1 + 7 - 2)->ch, '1');
    CU_ASSERT_EQUAL(cell(&g, 1 + 5 + 16, 1 + 7 - 4)->ch, '3');
    pl_picture_free(&p);
    CU_ASSERT_EQUAL(pl_picture_roofline_numbered("test", 1e13, 1e12, 1, ai, fl, names, bad, -1, &p),
                    -1);
    viz_grid_free(&g);
}

/* Two points in one cell: the later drawn shows (the highlighted one
 * last), the other has no name beside it and its legend row says so. */
static void test_roofline_hidden(void)
{
    const double ai[2] = {1, 1.01}, fl[2] = {5e11, 5.05e11};
    const char *names[2] = {"under", "over"};
    pl_picture p;
    viz_grid g = {0};
    for (int hl = -1; hl <= 0; hl++) {
        CU_ASSERT_EQUAL_FATAL(pl_picture_roofline("test", 1e13, 1e12, 2, ai, fl, names, hl, &p), 0);
        CU_ASSERT_EQUAL(render(&g, &p, 0, 60, 14, 1), 13);
        /* the cell of 1 FLOP/B, 500 GFLOP/s (test_roofline_point): column 5, row 5 */
        CU_ASSERT_EQUAL(cell(&g, 1 + 5, 1 + 5)->ch, hl == 0 ? '@' : '2');
        /* the full legend rows do not fit 60 columns: the compact ones */
        static const char *want[2][3] = {
            {"    |2 over      :", "1 under 1.0 FLOP/B 500 GFLOP/s 50% (hidden: same cell)",
             "2 over  1.0 FLOP/B 505 GFLOP/s 50%"},
            {"    |@ under     :", "@ under 1.0 FLOP/B 500 GFLOP/s 50%",
             "2 over  1.0 FLOP/B 505 GFLOP/s 50% (hidden: same cell)"}};
        check_rows(&g, 1, 6, 60, &want[hl + 1][0], 1);
        check_rows(&g, 1, 12, 60, &want[hl + 1][1], 2);
        pl_picture_free(&p);
    }
    viz_grid_free(&g);
}

/* Lab 04's roofline on the simulated H100: at 80 columns 3 rows a decade;
 * in 78 x 12 (an 80x24 screen's pane) one row a decade, the legend kept
 * (11 rows). Each name on its point's row, over no roof, ridge or point:
 * past the roof or the ridge where nearer is taken. */
static void test_roofline_lab(void)
{
    const double ai[3] = {0.25, 3.9, 28.4}, fl[3] = {829e9, 11.5e12, 38.3e12};
    const char *names[3] = {"naive", "tiles 16x16 (yours)", "register tiles"};
    pl_picture p;
    CU_ASSERT_EQUAL_FATAL(
        pl_picture_roofline("simulated H100-SXM preset", 67e12, 3.35e12, 3, ai, fl, names, 1, &p),
        0);
    viz_grid g = {0};
    CU_ASSERT_EQUAL(viz_pic_roofline_rows(&p, 80), 17);
    static const char *legend[2][4] = {
        {"╱ memory roof  ─ FP32 peak  ┊ ridge  (FLOP/s against FLOP/B, log-log)",
         "1 naive                 0.25 FLOP/B     829 GFLOP/s   99% of its roof",
         "◆ tiles 16x16 (yours)    3.9 FLOP/B    11.5 TFLOP/s   88% of its roof",
         "3 register tiles        28.4 FLOP/B    38.3 TFLOP/s   57% of its roof"},
        {"/ memory roof  - FP32 peak  : ridge  (FLOP/s against FLOP/B, log-log)",
         "1 naive                 0.25 FLOP/B     829 GFLOP/s   99% of its roof",
         "@ tiles 16x16 (yours)    3.9 FLOP/B    11.5 TFLOP/s   88% of its roof",
         "3 register tiles        28.4 FLOP/B    38.3 TFLOP/s   57% of its roof"}};
    for (int utf8 = 1; utf8 >= 0; utf8--) {
        CU_ASSERT_EQUAL(render(&g, &p, utf8, 80, 17, 1), 17);
        static const char *u8[13] = {
            "simulated H100-SXM preset's roof: 67.0 TFLOP/s, 3.35 TB/s, ridge 20.0 FLOP/B",
            "100T┤",
            "    │                        ╱╱╱╱─3─────────────────── register tiles",
            "    │                    ╱╱╱╱    ┊",
            " 10T┤                ╱╱╱◆        ┊ tiles 16x16 (yours)",
            "    │            ╱╱╱╱            ┊",
            "    │        ╱╱╱╱                ┊",
            "  1T┤    ╱1╱╱ naive              ┊",
            "    │╱╱╱╱                        ┊",
            "    │                            ┊",
            "100G┤                            ┊",
            "    └┴───────────┴───────────┴───────────┴───────────┴",
            "    0.1          1           10         100         1000  FLOP/B"};
        static const char *ascii[13] = {
            "simulated H100-SXM preset's roof: 67.0 TFLOP/s, 3.35 TB/s, ridge 20.0 FLOP/B",
            "100T+",
            "    |                        ////-3------------------- register tiles",
            "    |                    ////    :",
            " 10T+                ///@        : tiles 16x16 (yours)",
            "    |            ////            :",
            "    |        ////                :",
            "  1T+    /1// naive              :",
            "    |////                        :",
            "    |                            :",
            "100G+                            :",
            "    ++-----------+-----------+-----------+-----------+",
            "    0.1          1           10         100         1000  FLOP/B"};
        check_rows(&g, 1, 1, 80, utf8 ? u8 : ascii, 13);
        check_rows(&g, 1, 14, 80, legend[!utf8], 4);

        CU_ASSERT_EQUAL(render(&g, &p, utf8, 78, 12, 1), 11);
        static const char *u8s[6] = {
            "simulated H100-SXM preset's roof: 67.0 TFLOP/s, 3.35 TB/s, ridge 20.0 FLOP/B",
            "100T┤                        ╱╱╱╱─3─────────────────── register tiles",
            " 10T┤            ╱╱╱╱╱╱╱◆╱╱╱╱    ┊ tiles 16x16 (yours)",
            "  1T┤╱╱╱╱╱1╱╱╱╱╱╱ naive          ┊",
            "100G┤                            ┊",
            "    └┴───────────┴───────────┴───────────┴───────────┴"};
        static const char *asciis[6] = {
            "simulated H100-SXM preset's roof: 67.0 TFLOP/s, 3.35 TB/s, ridge 20.0 FLOP/B",
            "100T+                        ////-3------------------- register tiles",
            " 10T+            ///////@////    : tiles 16x16 (yours)",
            "  1T+/////1////// naive          :",
            "100G+                            :",
            "    ++-----------+-----------+-----------+-----------+"};
        check_rows(&g, 1, 1, 78, utf8 ? u8s : asciis, 6);
        check_rows(&g, 1, 7, 78,
                   (const char *const[]){
                       "    0.1          1           10         100         1000  FLOP/B"},
                   1);
        check_rows(&g, 1, 8, 78, legend[!utf8], 4);
    }
    pl_picture_free(&p);
    viz_grid_free(&g);
}

/* Every size from 1 x 1 to 80 x 24: both pictures stay inside their rect
 * (render checks) and say how many rows they used. */
static void test_every_size(void)
{
    pl_picture t, rl;
    tiles_picture(100, 40, 70, 16, 3, 1, &t);
    const double ai[2] = {0.25, 3.9}, fl[2] = {829e9, 11.5e12};
    const char *names[2] = {"naive", "tiles"};
    CU_ASSERT_EQUAL_FATAL(pl_picture_roofline("r", 67e12, 3.35e12, 2, ai, fl, names, 1, &rl), 0);
    viz_grid g = {0};
    for (int w = 1; w <= 80; w += 3)
        for (int h = 1; h <= 24; h++)
            for (int utf8 = 0; utf8 < 2; utf8++) {
                render(&g, &t, utf8, w, h, 0.7);
                render(&g, &rl, utf8, w, h, 1);
            }
    pl_picture_free(&t);
    pl_picture_free(&rl);
    viz_grid_free(&g);
}

/* At the sizes the picture pane gives them: 58 x 25 inside its border at
 * 120x40 (the right half of the body), 78 x 9 at 80x24 (across, 3/5 of
 * the body's rows): the shorter headlines and step lines, the fold's note
 * on a row of its own, the roofline's header on two rows, its compact
 * legend; in 78 x 9 a roofline of one row a decade, its points' names
 * and FLOP/s flowed over the last two rows; in 78 x 5 (what an 80x24
 * screen leaves) the tiles without their headline and the bare roofline. Lab 04 at 512 (32 tiles
 * each way, the block at (16, 16)) and at 64 (the block at (2, 2)). */
static void test_pane_sizes(void)
{
    static const char *t512_58[21] = {
        "block (16, 16): C[256:272, 256:272], 32 steps along K",
        "step 16 of 32: A[256:272, 240:256], B[240:256, 256:272]",
        "A 512x512            B 512x512            C 512x512",
        "················     ········▒·······     ················",
        "················     ········▒·······     ················",
        "················     ········▒·······     ················",
        "················     ········▒·······     ················",
        "················     ········▒·······     ················",
        "················     ········▒·······     ················",
        "················     ········▒·······     ················",
        "················  ×  ········█·······  =  ················",
        "▒▒▒▒▒▒▒█░░░░░░░░     ········░·······     ········◆·······",
        "················     ········░·······     ················",
        "················     ········░·······     ················",
        "················     ········░·······     ················",
        "················     ········░·······     ················",
        "················     ········░·······     ················",
        "················     ········░·······     ················",
        "················     ········░·······     ················",
        "█ now  ▒ before  ░ to load  ◆ its C tile  · others",
        "(a cell: 2x2 tiles)",
    };
    static const char *t64_58[8] = {
        "block (2, 2): C[32:48, 32:48], 4 steps along K",
        "step 2 of 4 along K: A[32:48, 16:32] and B[16:32, 32:48]",
        "A 64x64      B 64x64      C 64x64",
        "· · · ·      · · ▒▒·      · · · ·",
        "· · · ·   ×  · · ██·   =  · · · ·",
        "▒▒██░░░░     · · ░░·      · · ◆◆·",
        "· · · ·      · · ░░·      · · · ·",
        "█ now  ▒ before  ░ to load  ◆ its C tile  · others",
    };
    static const char *rl_58[18] = {
        "the roof of the simulated H100-SXM preset:",
        "67.0 TFLOP/s FP32, 3.35 TB/s; ridge at 20.0 FLOP/B",
        "100T┤",
        "    │     register tiles ╱╱╱╱─3───────────────",
        "    │                 ╱╱╱   ┊",
        " 10T┤              ╱╱◆      ┊ tiles 16x16 (reference)",
        "    │          ╱╱╱╱         ┊",
        "    │       ╱╱╱             ┊",
        "  1T┤    1╱╱ naive          ┊",
        "    │╱╱╱╱                   ┊",
        "    │                       ┊",
        "100G┤                       ┊",
        "    └┴─────────┴─────────┴─────────┴─────────┴",
        "    0.1        1         10       100       1000  FLOP/B",
        "╱ memory roof  ─ FP32 peak  ┊ ridge  (y: FLOP/s, log-log)",
        "1 naive                   0.25 FLOP/B 829 GFLOP/s 99%",
        "◆ tiles 16x16 (reference) 3.9 FLOP/B 11.5 TFLOP/s 88%",
        "3 register tiles          28.4 FLOP/B 38.3 TFLOP/s 57%",
    };
    static const char *t512_78x9[9] = {
        "block (16, 16) computes C[256:272, 256:272] in 32 steps along K (tiles of 16)",
        "step 16 of 32 along K: A[256:272, 240:256] and B[240:256, 256:272]",
        "A 512x512      B 512x512      C 512x512",
        "· · · · ·      · · ▒▒· ·      · · · · ·",
        "· · · · ·      · · ▒▒· ·      · · · · ·",
        "▒▒▒▒██░░░░  ×  · · ██· ·   =  · · ◆◆· ·",
        "· · · · ·      · · ░░· ·      · · · · ·",
        "· · · · ·      · · ░░· ·      · · · · ·",
        "█ now  ▒ before  ░ to load  ◆ its C tile  · others  (a cell: 7x7 tiles)",
    };
    static const char *t64_78x9[8] = {
        "block (2, 2) computes C[32:48, 32:48] in 4 steps along K (tiles of 16)",
        "step 2 of 4 along K: A[32:48, 16:32] and B[16:32, 32:48] in shared memory",
        "A 64x64      B 64x64      C 64x64",
        "· · · ·      · · ▒▒·      · · · ·",
        "· · · ·   ×  · · ██·   =  · · · ·",
        "▒▒██░░░░     · · ░░·      · · ◆◆·",
        "· · · ·      · · ░░·      · · · ·",
        "█ this step  ▒ loaded before  ░ still to load  ◆ the block's C tile  · others",
    };
    static const char *rl_78x9[9] = {
        "simulated H100-SXM preset's roof: 67.0 TFLOP/s, 3.35 TB/s, ridge 20.0 FLOP/B",
        "100T┤                        ╱╱╱╱─3─────────────────── register tiles",
        " 10T┤            ╱╱╱╱╱╱╱◆╱╱╱╱    ┊ tiles 16x16 (reference)",
        "  1T┤╱╱╱╱╱1╱╱╱╱╱╱ naive          ┊",
        "100G┤                            ┊",
        "    └┴───────────┴───────────┴───────────┴───────────┴",
        "    0.1          1           10         100         1000  FLOP/B",
        "1 naive 829 GFLOP/s  ◆ tiles 16x16 (reference) 11.5 TFLOP/s",
        "3 register tiles 38.3 TFLOP/s",
    };
    const double ai[3] = {0.25, 3.9, 28.4}, fl[3] = {829e9, 11.5e12, 38.3e12};
    const char *names[3] = {"naive", "tiles 16x16 (reference)", "register tiles"};
    pl_picture t512, t64, rl;
    tiles_picture(512, 512, 512, 16, 16, 16, &t512);
    tiles_picture(64, 64, 64, 16, 2, 2, &t64);
    CU_ASSERT_EQUAL_FATAL(
        pl_picture_roofline("simulated H100-SXM preset", 67e12, 3.35e12, 3, ai, fl, names, 1, &rl),
        0);
    viz_grid g = {0};
    CU_ASSERT_EQUAL(viz_pic_tiles_rows(&t512, 58), 21);
    CU_ASSERT_EQUAL(viz_pic_tiles_rows(&t64, 58), 8);
    CU_ASSERT_EQUAL(viz_pic_roofline_rows(&rl, 58), 18);
    CU_ASSERT_EQUAL(render(&g, &t512, 1, 58, 25, 0.5), 21);
    check_rows(&g, 1, 1, 58, t512_58, 21);
    CU_ASSERT_EQUAL(render(&g, &t64, 1, 58, 25, 0.5), 8);
    check_rows(&g, 1, 1, 58, t64_58, 8);
    CU_ASSERT_EQUAL(render(&g, &rl, 1, 58, 25, 1), 18);
    check_rows(&g, 1, 1, 58, rl_58, 18);
    CU_ASSERT_EQUAL(render(&g, &t512, 1, 78, 9, 0.5), 9);
    check_rows(&g, 1, 1, 78, t512_78x9, 9);
    CU_ASSERT_EQUAL(render(&g, &t64, 1, 78, 9, 0.5), 8);
    check_rows(&g, 1, 1, 78, t64_78x9, 8);
    CU_ASSERT_EQUAL(render(&g, &rl, 1, 78, 9, 1), 9);
    check_rows(&g, 1, 1, 78, rl_78x9, 9);
    /* 78 x 5: the rows Lab 04's pane has at 80x24 under its "cut to" line: the tiles without
     * their headline, 2x2 tiles a cell; the roofline bare (no header, no axis line) */
    static const char *t64_78x5[5] = {
        "step 2 of 4 along K: A[32:48, 16:32] and B[16:32, 32:48] in shared memory",
        "A 64x64     B 64x64     C 64x64", "· ·      ×  · ██     =  · ·",
        "██░░        · ░░        · ◆◆",
        "█ now  ▒ before  ░ to load  ◆ its C tile  · others  (a cell: 2x2 tiles)"};
    static const char *rl_78x5[2][5] = {
        {"100T┤                        ╱╱╱╱─3─────────────────── register tiles",
         " 10T┤            ╱╱╱╱╱╱╱◆╱╱╱╱    ┊ tiles 16x16 (reference)",
         "  1T┤╱╱╱╱╱1╱╱╱╱╱╱ naive          ┊", "100G┤                            ┊",
         "    0.1          1           10         100         1000  FLOP/B"},
        {"100T+                        ////-3------------------- register tiles",
         " 10T+            ///////@////    : tiles 16x16 (reference)",
         "  1T+/////1////// naive          :", "100G+                            :",
         "    0.1          1           10         100         1000  FLOP/B"}};
    CU_ASSERT_EQUAL(render(&g, &t64, 1, 78, 5, 0.5), 5);
    check_rows(&g, 1, 1, 78, t64_78x5, 5);
    for (int utf8 = 1; utf8 >= 0; utf8--) {
        CU_ASSERT_EQUAL(render(&g, &rl, utf8, 78, 5, 1), 5);
        check_rows(&g, 1, 1, 78, rl_78x5[!utf8], 5);
    }
    pl_picture_free(&t512);
    pl_picture_free(&t64);
    pl_picture_free(&rl);
    viz_grid_free(&g);
}

int register_picture_lab04_suite(void)
{
    static const unit_test tests[] = {
        {"the tiles along K of a 64^3 GEMM's block", test_tiles_builder},
        {"tiles cut by the edges; one matrix a round; refusals", test_tiles_edges},
        {"the tiles of Lab 04's tiled kernel, recorded", test_tiles_recorded},
        {"Lab 04's warp tiles, recorded: each element once, the next slice fetched before the "
         "multiply, a barrier a step, A's shared stores 2 wavefronts, unaligned pointers",
         test_warptiles_recorded},
        {"the tiles drawn step by step, UTF-8 and ASCII", test_tiles_render},
        {"512^3 folded: 2x2 tiles a cell at 120 columns, 4x4 at 80x24", test_tiles_folded},
        {"the roofline's picture", test_roofline_builder},
        {"a roofline point's position, the ridge, the ticks", test_roofline_point},
        {"two points in one cell", test_roofline_hidden},
        {"points numbered by their kernels", test_roofline_numbered},
        {"Lab 04's roofline at 80 columns and in 80x24", test_roofline_lab},
        {"at the picture pane's sizes at 120x40 and 80x24", test_pane_sizes},
        {"both pictures at every size up to 80x24", test_every_size},
    };
    return UNIT_SUITE("picture lab04", tests);
}
