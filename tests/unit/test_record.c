/*
 * test_record.c — the kernel record (simtRecord*, pl_device_record_*): each
 * block's SM and wave in the model of paralab/device.h, the access log
 * (thread, round, site, offset) of call-mode kernels (kernels_record.cu)
 * and of inline-check kernels (kernels.cu), the shuffles, the filters and
 * limits. SIM ONLY but the last test (real GPUs record nothing).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "kernels_record.h"
#include "paralab/device.h"
#include "suites.h"
#ifdef PARALAB_SIMULATED_CUDA
#include "simt/simt.h"
#endif

#ifdef PARALAB_SIMULATED_CUDA

static simt_record_config ranges1(const void *lo, size_t len, size_t max_accesses)
{
    simt_record_config c = {.blocks = 1, .max_accesses = max_accesses, .nranges = 1};
    c.range[0].lo = lo;
    c.range[0].len = len;
    return c;
}

/* Records one call (a launch) under config c into *r. */
#define RECORDED(r, c, call)                                                                       \
    do {                                                                                           \
        CU_ASSERT_OK(cudaDeviceSynchronize());                                                     \
        CU_ASSERT_EQUAL(simtRecordBegin(&(c)), 0);                                                 \
        CU_ASSERT_OK(call);                                                                        \
        CU_ASSERT_OK(cudaDeviceSynchronize());                                                     \
        CU_ASSERT_EQUAL(simtRecordEnd(&(r)), 0);                                                   \
    } while (0)

/* The default preset's numbers the model uses (core/simt/presets.c). */
static int preset_is_h100(void)
{
    const simt_preset *p = simtCurrentPreset();
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(p->sm_count, 132);
    CU_ASSERT_EQUAL(p->max_threads_per_sm, 2048);
    CU_ASSERT_EQUAL(p->shared_per_sm, 228 * 1024);
    return p->sm_count == 132 && p->max_threads_per_sm == 2048 && p->shared_per_sm == 228 * 1024;
}

/* Blocks of 1024 threads: 2 per SM (2048 threads an SM), 264 a wave. A 2x2
 * grid is 4 blocks on SMs 0-3 in wave 0; a 33x10 grid is 330 blocks,
 * block b on SM b mod 132 in wave b / 264 (two waves). */
static void test_sm_waves(void)
{
    if (!preset_is_h100()) return;
    simt_record r;
    simt_record_config c = {.blocks = 1};
    dim3 g22 = {2, 2, 1}, g = {33, 10, 1}, b1024 = {1024, 1, 1}, b256 = {256, 1, 1};
    RECORDED(r, c, rk_nothing(g22, b1024, 0));
    CU_ASSERT_STRING_EQUAL(r.kernel, "nothing");
    CU_ASSERT_EQUAL(r.grid.x, 2);
    CU_ASSERT_EQUAL(r.grid.y, 2);
    CU_ASSERT_EQUAL(r.block.x, 1024);
    CU_ASSERT_EQUAL(r.sms, 132);
    CU_ASSERT_EQUAL(r.per_sm, 2);
    CU_ASSERT_EQUAL(r.waves, 1);
    CU_ASSERT_EQUAL_FATAL(r.nblocks, 4);
    for (uint32_t i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(r.blocks[i].block, i);
        CU_ASSERT_EQUAL(r.blocks[i].sm, i);
        CU_ASSERT_EQUAL(r.blocks[i].wave, 0);
        CU_ASSERT(r.blocks[i].start >= 0 && r.blocks[i].end >= r.blocks[i].start);
        if (i) CU_ASSERT(r.blocks[i].start >= r.blocks[i - 1].end);
    }
    CU_ASSERT_EQUAL(r.naccess, 0);
    CU_ASSERT_EQUAL(r.truncated, 0);
    simtRecordFree(&r);

    RECORDED(r, c, rk_nothing(g, b1024, 0));
    CU_ASSERT_EQUAL(r.per_sm, 2);
    CU_ASSERT_EQUAL(r.waves, 2);
    CU_ASSERT_EQUAL_FATAL(r.nblocks, 330);
    int ok = 1;
    for (uint32_t i = 0; i < 330; i++)
        ok &= r.blocks[i].block == i && r.blocks[i].sm == i % 132 && r.blocks[i].wave == i / 264;
    CU_ASSERT(ok);
    CU_ASSERT_EQUAL(r.blocks[131].sm, 131);
    CU_ASSERT_EQUAL(r.blocks[132].sm, 0); /* the second block on SM 0, still wave 0 */
    CU_ASSERT_EQUAL(r.blocks[132].wave, 0);
    CU_ASSERT_EQUAL(r.blocks[264].sm, 0);
    CU_ASSERT_EQUAL(r.blocks[264].wave, 1);
    CU_ASSERT_EQUAL(r.blocks[329].sm, 329 % 132);
    simtRecordFree(&r);

    /* 256 threads and 48 KiB of dynamic shared memory: 8 by threads, 4 by
     * shared memory (228 KiB / 48 KiB): 528 a wave, 531 blocks two waves */
    dim3 g531 = {531, 1, 1};
    RECORDED(r, c, rk_nothing(g531, b256, 48 * 1024));
    CU_ASSERT_EQUAL(r.shmem, 48 * 1024);
    CU_ASSERT_EQUAL(r.per_sm, 4);
    CU_ASSERT_EQUAL(r.waves, 2);
    CU_ASSERT_EQUAL_FATAL(r.nblocks, 531);
    CU_ASSERT_EQUAL(r.blocks[527].sm, 527 % 132);
    CU_ASSERT_EQUAL(r.blocks[527].wave, 0);
    CU_ASSERT_EQUAL(r.blocks[528].sm, 0);
    CU_ASSERT_EQUAL(r.blocks[528].wave, 1);
    CU_ASSERT_EQUAL(r.blocks[530].sm, 2);
    simtRecordFree(&r);

    /* blocks = 0: the model's numbers, no blocks */
    simt_record_config none = {.blocks = 0};
    RECORDED(r, none, rk_nothing(g22, b1024, 0));
    CU_ASSERT_EQUAL(r.per_sm, 2);
    CU_ASSERT_EQUAL(r.waves, 1);
    CU_ASSERT_EQUAL(r.nblocks, 0);
    CU_ASSERT_PTR_NULL(r.blocks);
    simtRecordFree(&r);
}

/* Checks a log of n stores of 4 bytes, one per element i of a range, by
 * thread i mod threads of block i / threads, at offset 4 i. */
static void check_element_map(const simt_record *r, int n, int threads)
{
    CU_ASSERT_EQUAL_FATAL(r->naccess, (size_t)n);
    char *seen = calloc((size_t)n, 1);
    int ok = 1;
    for (size_t k = 0; k < r->naccess; k++) {
        const simt_record_access *a = &r->access[k];
        uint64_t i = a->offset / 4;
        ok &= a->offset % 4 == 0 && i < (uint64_t)n && !seen[i];
        if (i >= (uint64_t)n) continue;
        seen[i] = 1;
        ok &= a->block == i / (unsigned)threads && a->thread == i % (unsigned)threads;
        ok &= a->size == 4 && a->store == 1 && a->space == 1 && a->round == 0 && a->site == 0;
    }
    CU_ASSERT(ok);
    free(seen);
}

/* A vector add of n = 1000 in blocks of 256 (call mode), the stores into c
 * logged: exactly 1000, element i by thread i mod 256 of block i / 256. */
static void test_element_map(void)
{
    enum { N = 1000 };
    float *a, *b, *c;
    CU_ASSERT_OK(cudaMalloc((void **)&a, N * sizeof(float)));
    CU_ASSERT_OK(cudaMalloc((void **)&b, N * sizeof(float)));
    CU_ASSERT_OK(cudaMalloc((void **)&c, N * sizeof(float)));
    CU_ASSERT_OK(cudaMemset(a, 0, N * sizeof(float)));
    CU_ASSERT_OK(cudaMemset(b, 0, N * sizeof(float)));
    simt_record r;
    simt_record_config cfg = ranges1(c, N * sizeof(float), 4096);
    RECORDED(r, cfg, rk_vector_add(a, b, c, N, 256));
    CU_ASSERT_STRING_EQUAL(r.kernel, "vector_add");
    CU_ASSERT_EQUAL(r.nblocks, 4);
    CU_ASSERT_EQUAL(r.truncated, 0);
    check_element_map(&r, N, 256);
    simtRecordFree(&r);

    /* the loads of a and b too: ranges 1 and 2, two sites, three per element */
    cfg.nranges = 3;
    cfg.range[1].lo = a;
    cfg.range[1].len = N * sizeof(float);
    cfg.range[2].lo = b;
    cfg.range[2].len = N * sizeof(float);
    RECORDED(r, cfg, rk_vector_add(a, b, c, N, 256));
    CU_ASSERT_EQUAL_FATAL(r.naccess, 3 * N);
    size_t per_space[4] = {0};
    int ok = 1;
    for (size_t k = 0; k < r.naccess; k++) {
        const simt_record_access *e = &r.access[k];
        per_space[e->space]++;
        ok &= e->store == (e->space == 1) && e->offset == 4 * (e->block * 256u + e->thread);
        /* a's load first seen (site 0), then b's (1), then the store into c (2) */
        ok &= e->site == (e->space == 1 ? 2u : e->space - 2u);
    }
    CU_ASSERT(ok);
    CU_ASSERT_EQUAL(r.access[0].space, 2);
    CU_ASSERT_EQUAL(r.access[0].site, 0);
    CU_ASSERT_EQUAL(per_space[1], N);
    CU_ASSERT_EQUAL(per_space[2], N);
    CU_ASSERT_EQUAL(per_space[3], N);
    simtRecordFree(&r);

    /* only blocks 1 and 2: elements 256..767 */
    cfg = ranges1(c, N * sizeof(float), 4096);
    cfg.block_first = 1;
    cfg.block_count = 2;
    RECORDED(r, cfg, rk_vector_add(a, b, c, N, 256));
    CU_ASSERT_EQUAL(r.nblocks, 4); /* the filter is the log's only */
    CU_ASSERT_EQUAL_FATAL(r.naccess, 512);
    ok = 1;
    for (size_t k = 0; k < r.naccess; k++)
        ok &= (r.access[k].block == 1 || r.access[k].block == 2) &&
              r.access[k].offset == 4 * (r.access[k].block * 256u + r.access[k].thread);
    CU_ASSERT(ok);
    simtRecordFree(&r);

    /* a full log: exactly max_accesses kept, truncated; the kernel still right */
    float one = 1.0f, h[N];
    for (int i = 0; i < N; i++)
        CU_ASSERT_OK(cudaMemcpy(a + i, &one, sizeof one, cudaMemcpyHostToDevice));
    cfg = ranges1(c, N * sizeof(float), 100);
    RECORDED(r, cfg, rk_vector_add(a, b, c, N, 256));
    CU_ASSERT_EQUAL(r.naccess, 100);
    CU_ASSERT_EQUAL(r.truncated, 1);
    CU_ASSERT_EQUAL(r.nblocks, 4);
    CU_ASSERT_OK(cudaMemcpy(h, c, sizeof h, cudaMemcpyDeviceToHost));
    ok = 1;
    for (int i = 0; i < N; i++) ok &= h[i] == 1.0f;
    CU_ASSERT(ok);
    simtRecordFree(&r);

    CU_ASSERT_OK(cudaFree(a));
    CU_ASSERT_OK(cudaFree(b));
    CU_ASSERT_OK(cudaFree(c));
}

/* A kernel file with inline checks (kernels.cu in build/sim): its
 * accesses are logged through the poisoned shadow, the same entries. */
static void test_inline_file(void)
{
    unsigned *out;
    dim3 g = {3, 2, 1}, b = {8, 4, 2};
    int n = 6 * 64;
    CU_ASSERT_OK(cudaMalloc((void **)&out, (size_t)n * sizeof(unsigned)));
    simt_record r;
    simt_record_config cfg = ranges1(out, (size_t)n * sizeof(unsigned), 4096);
    RECORDED(r, cfg, tk_ids(out, g, b));
    CU_ASSERT_STRING_EQUAL(r.kernel, "ids");
    CU_ASSERT_EQUAL(r.nblocks, 6);
    check_element_map(&r, n, 64);
    simtRecordFree(&r);
    /* after the record, the shadow is as it was: the results are right and
     * an access past the end still faults elsewhere (test_faults) */
    unsigned *h = malloc((size_t)n * sizeof *h);
    CU_ASSERT_OK(tk_ids(out, g, b));
    CU_ASSERT_OK(cudaMemcpy(h, out, (size_t)n * sizeof *h, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (int i = 0; i < n; i++) ok &= h[i] == ((unsigned)(i / 64) << 10 | (unsigned)(i % 64));
    CU_ASSERT(ok);
    free(h);
    CU_ASSERT_OK(cudaFree(out));
}

/* A warp reading every 8th float: 32 loads, lane t at byte 32 t. */
static void test_stride(void)
{
    float *in, *out;
    CU_ASSERT_OK(cudaMalloc((void **)&in, 32 * 8 * sizeof(float)));
    CU_ASSERT_OK(cudaMalloc((void **)&out, 32 * sizeof(float)));
    CU_ASSERT_OK(cudaMemset(in, 0, 32 * 8 * sizeof(float)));
    simt_record r;
    simt_record_config cfg = ranges1(in, 32 * 8 * sizeof(float), 4096);
    RECORDED(r, cfg, rk_strided_read(out, in, 8));
    CU_ASSERT_EQUAL_FATAL(r.naccess, 32);
    int ok = 1;
    for (size_t k = 0; k < 32; k++) {
        const simt_record_access *a = &r.access[k];
        ok &= a->offset == 32u * a->thread && a->store == 0 && a->size == 4 && a->block == 0;
    }
    CU_ASSERT(ok);
    simtRecordFree(&r);
    CU_ASSERT_OK(cudaFree(in));
    CU_ASSERT_OK(cudaFree(out));
}

/* The shared-memory tree of 16 threads: round 0 every thread stores s[t];
 * after the k-th __syncthreads (round k = 1..4) threads t < 16 >> k load
 * s[t] and s[t + stride] (and store s[t]: not seen, as the instrumentation
 * checks an address once per basic block, and s[t] += ... reads it first);
 * in round 5 thread 0 reads s[0] (under t == 0 the index is a constant,
 * which the instrumentation does not check: not seen). Offsets from s[0]. */
static void check_tree(const simt_record *r)
{
    int stores[6][16], loads[6][16];
    memset(stores, 0, sizeof stores);
    memset(loads, 0, sizeof loads);
    int ok = 1;
    size_t nstores = 0;
    for (size_t k = 0; k < r->naccess; k++) {
        const simt_record_access *a = &r->access[k];
        ok &= a->space == 0 && a->block == 0 && a->size == 4 && a->round < 6 && a->thread < 16;
        if (!(a->round < 6 && a->thread < 16)) continue;
        if (a->store) {
            ok &= a->offset == 4u * a->thread;
            stores[a->round][a->thread]++;
            nstores++;
        } else {
            unsigned stride = a->round >= 1 && a->round <= 4 ? 16u >> a->round : 0;
            ok &= a->offset == 4u * a->thread || a->offset == 4u * (a->thread + stride);
            loads[a->round][a->thread]++;
        }
    }
    CU_ASSERT(ok);
    CU_ASSERT_EQUAL(nstores, 16);
    ok = 1;
    for (int round = 0; round < 6; round++)
        for (int t = 0; t < 16; t++) {
            int active = round == 0 || (round <= 4 && t < (16 >> round));
            ok &= stores[round][t] == (round == 0);
            ok &= loads[round][t] == (round >= 1 && round <= 4 && active ? 2 : 0);
        }
    CU_ASSERT(ok);
    uint64_t lo = UINT64_MAX;
    for (size_t k = 0; k < r->naccess; k++)
        if (r->access[k].offset < lo) lo = r->access[k].offset;
    CU_ASSERT_EQUAL(lo, 0);
}

static void test_tree(void)
{
    float *in, *out;
    CU_ASSERT_OK(cudaMalloc((void **)&in, 32 * sizeof(float)));
    CU_ASSERT_OK(cudaMalloc((void **)&out, 2 * sizeof(float)));
    CU_ASSERT_OK(cudaMemset(in, 0, 32 * sizeof(float)));
    simt_record r;
    simt_record_config cfg = {.blocks = 1, .max_accesses = 4096, .shared = 1, .block_count = 1};
    RECORDED(r, cfg, rk_tree_sum(in, out, 32, 16)); /* two blocks, block 0 logged */
    CU_ASSERT_EQUAL(r.nblocks, 2);
    CU_ASSERT_EQUAL(r.naccess, 16 + 30);
    check_tree(&r);
    simtRecordFree(&r);
    /* kernels.cu's: inline checks in build/sim */
    RECORDED(r, cfg, tk_block_sum(in, out, 32, 16, 1));
    CU_ASSERT_STRING_EQUAL(r.kernel, "block_sum");
    CU_ASSERT_EQUAL(r.naccess, 16 + 30);
    check_tree(&r);
    simtRecordFree(&r);
    CU_ASSERT_OK(cudaFree(in));
    CU_ASSERT_OK(cudaFree(out));
}

/* Dynamic shared memory: round 0 thread t stores s[t], round 1 loads
 * s[63 - t]; offsets from s[0]. */
static void test_dynamic_shared(void)
{
    int *in, *out, h[64];
    for (int i = 0; i < 64; i++) h[i] = i;
    CU_ASSERT_OK(cudaMalloc((void **)&in, sizeof h));
    CU_ASSERT_OK(cudaMalloc((void **)&out, sizeof h));
    CU_ASSERT_OK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
    simt_record r;
    simt_record_config cfg = {.max_accesses = 4096, .shared = 1};
    RECORDED(r, cfg, rk_reverse_dynamic(in, out, 64));
    CU_ASSERT_EQUAL_FATAL(r.naccess, 128);
    int ok = 1;
    for (size_t k = 0; k < r.naccess; k++) {
        const simt_record_access *a = &r.access[k];
        ok &= a->space == 0 && a->size == 4 && a->round == (a->store ? 0u : 1u);
        ok &= a->offset == 4u * (a->store ? a->thread : 63 - a->thread);
    }
    CU_ASSERT(ok);
    CU_ASSERT_OK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    CU_ASSERT_EQUAL(h[0], 63);
    CU_ASSERT_EQUAL(h[63], 0);
    simtRecordFree(&r);
    CU_ASSERT_OK(cudaFree(in));
    CU_ASSERT_OK(cudaFree(out));
}

/* The shuffle reduction: in round k (0..4) lane l reads lane l + (16 >> k),
 * or none (-1) past lane 31. */
static void test_shuffles(void)
{
    int *in, *out, h[32], sum = 0;
    for (int i = 0; i < 32; i++) sum += h[i] = i + 1;
    CU_ASSERT_OK(cudaMalloc((void **)&in, sizeof h));
    CU_ASSERT_OK(cudaMalloc((void **)&out, 4 * 32 * sizeof(int)));
    CU_ASSERT_OK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
    simt_record r;
    simt_record_config cfg = {.max_accesses = 1024, .warp_ops = 1};
    RECORDED(r, cfg, rk_shfl_sum(in, out));
    CU_ASSERT_EQUAL(r.naccess, 0);
    CU_ASSERT_EQUAL_FATAL(r.nwarp_ops, 5 * 32);
    int seen[5][32] = {{0}}, ok = 1;
    for (size_t k = 0; k < r.nwarp_ops; k++) {
        const simt_record_warp_op *w = &r.warp_ops[k];
        ok &= w->round < 5 && w->thread < 32 && w->kind == 2 && w->block == 0;
        if (!(w->round < 5 && w->thread < 32)) continue;
        int src = (int)w->thread + (16 >> w->round);
        ok &= w->src_lane == (src < 32 ? src : -1);
        seen[w->round][w->thread]++;
    }
    for (int k = 0; k < 5; k++)
        for (int l = 0; l < 32; l++) ok &= seen[k][l] == 1;
    CU_ASSERT(ok);
    int got = 0;
    CU_ASSERT_OK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
    CU_ASSERT_EQUAL(got, sum);
    simtRecordFree(&r);

    /* the four kinds with width 8 and arg 2 (kernels.cu): idx reads lane
     * seg + 2, up l - 2 (none in a segment's first 2), down l + 2 (none in
     * its last 2), xor l ^ 2 */
    RECORDED(r, cfg, tk_shuffles(out, 2, 8));
    CU_ASSERT_EQUAL_FATAL(r.nwarp_ops, 4 * 32);
    ok = 1;
    for (size_t k = 0; k < r.nwarp_ops; k++) {
        const simt_record_warp_op *w = &r.warp_ops[k];
        int l = (int)w->thread, seg = l & ~7, want;
        switch (w->kind) {
        case 0:
            want = seg + 2;
            break;
        case 1:
            want = l - seg < 2 ? -1 : l - 2;
            break;
        case 2:
            want = l + 2 >= seg + 8 ? -1 : l + 2;
            break;
        default:
            want = l ^ 2;
        }
        ok &= w->round == w->kind && w->src_lane == want;
    }
    CU_ASSERT(ok);
    simtRecordFree(&r);
    CU_ASSERT_OK(cudaFree(in));
    CU_ASSERT_OK(cudaFree(out));
}

/* Atomics count as stores: 64 atomicAdds on one int, one entry each. */
static void test_atomics(void)
{
    int *counter, got = 0;
    CU_ASSERT_OK(cudaMalloc((void **)&counter, sizeof(int)));
    CU_ASSERT_OK(cudaMemset(counter, 0, sizeof(int)));
    simt_record r;
    simt_record_config cfg = ranges1(counter, sizeof(int), 4096);
    RECORDED(r, cfg, rk_atomic_count(counter, 64));
    CU_ASSERT_EQUAL_FATAL(r.naccess, 64);
    int ok = 1, seen[64] = {0};
    for (size_t k = 0; k < 64; k++) {
        const simt_record_access *a = &r.access[k];
        ok &= a->store == 1 && a->offset == 0 && a->size == 4 && a->space == 1 && a->thread < 64;
        if (a->thread < 64) seen[a->thread]++;
    }
    for (int t = 0; t < 64; t++) ok &= seen[t] == 1;
    CU_ASSERT(ok);
    CU_ASSERT_OK(cudaMemcpy(&got, counter, sizeof got, cudaMemcpyDeviceToHost));
    CU_ASSERT_EQUAL(got, 64);
    simtRecordFree(&r);
    CU_ASSERT_OK(cudaFree(counter));
}

/* One record at a time; the first launch only; nothing after End; bad
 * configurations refused. */
static void test_lifecycle(void)
{
    float *x;
    CU_ASSERT_OK(cudaMalloc((void **)&x, 64 * sizeof(float)));
    CU_ASSERT_OK(cudaMemset(x, 0, 64 * sizeof(float)));
    simt_record_config cfg = ranges1(x, 64 * sizeof(float), 4096), bad;
    simt_record r;
    /* End with no Begin: zeroed */
    CU_ASSERT_EQUAL(simtRecordEnd(&r), 0);
    CU_ASSERT_EQUAL(r.nblocks + r.naccess + r.nwarp_ops, 0);
    CU_ASSERT_EQUAL(r.kernel[0], '\0');
    /* Begin twice: the second refused */
    CU_ASSERT_EQUAL(simtRecordBegin(&cfg), 0);
    CU_ASSERT_EQUAL(simtRecordBegin(&cfg), -1);
    /* two launches: only the first is recorded */
    CU_ASSERT_OK(rk_strided_read(x + 32, x, 1));
    CU_ASSERT_OK(rk_vector_add(x, x, x + 32, 32, 32));
    CU_ASSERT_OK(cudaDeviceSynchronize());
    CU_ASSERT_EQUAL(simtRecordBegin(&cfg), -1); /* not ended yet */
    CU_ASSERT_EQUAL(simtRecordEnd(&r), 0);
    CU_ASSERT_STRING_EQUAL(r.kernel, "strided_read");
    CU_ASSERT_EQUAL(r.naccess, 64); /* 32 loads of x, 32 stores into x + 32 */
    simtRecordFree(&r);
    /* Begin then End with no launch: zeroed; a launch after End records nothing */
    CU_ASSERT_EQUAL(simtRecordBegin(&cfg), 0);
    CU_ASSERT_EQUAL(simtRecordEnd(&r), 0);
    CU_ASSERT_EQUAL(r.nblocks + r.naccess, 0);
    CU_ASSERT_OK(rk_strided_read(x + 32, x, 1));
    CU_ASSERT_OK(cudaDeviceSynchronize());
    CU_ASSERT_EQUAL(simtRecordEnd(&r), 0);
    CU_ASSERT_EQUAL(r.nblocks + r.naccess, 0);
    CU_ASSERT_EQUAL(r.kernel[0], '\0');
    /* out of range */
    CU_ASSERT_EQUAL(simtRecordBegin(NULL), -1);
    bad = cfg;
    bad.max_accesses = ((size_t)1 << 24) + 1;
    CU_ASSERT_EQUAL(simtRecordBegin(&bad), -1);
    bad = cfg;
    bad.nranges = 5;
    CU_ASSERT_EQUAL(simtRecordBegin(&bad), -1);
    bad = cfg;
    bad.range[0].lo = NULL;
    CU_ASSERT_EQUAL(simtRecordBegin(&bad), -1);
    bad = (simt_record_config){.warp_ops = 1}; /* the shuffle log holds max_accesses: 0 */
    CU_ASSERT_EQUAL(simtRecordBegin(&bad), -1);
    /* and still one works after all that */
    CU_ASSERT_EQUAL(simtRecordBegin(&cfg), 0);
    CU_ASSERT_EQUAL(simtRecordEnd(&r), 0);
    CU_ASSERT_OK(cudaFree(x));
}

/* The seam: pl_device_record_* hands out the same record as paralab/device.h's types. */
static void test_seam(void)
{
    CU_ASSERT_EQUAL(pl_device_caps()->records, 1);
    if (!preset_is_h100()) return;
    enum { N = 1000 };
    float *a, *c;
    CU_ASSERT_OK(cudaMalloc((void **)&a, N * sizeof(float)));
    CU_ASSERT_OK(cudaMalloc((void **)&c, N * sizeof(float)));
    CU_ASSERT_OK(cudaMemset(a, 0, N * sizeof(float)));
    pl_record_config cfg = {.blocks = 1, .max_accesses = 4096, .nranges = 1};
    cfg.range[0].lo = c;
    cfg.range[0].len = N * sizeof(float);
    CU_ASSERT_OK(cudaDeviceSynchronize());
    CU_ASSERT_EQUAL(pl_device_record_begin(&cfg), 0);
    CU_ASSERT_OK(rk_vector_add(a, a, c, N, 256));
    CU_ASSERT_OK(cudaDeviceSynchronize());
    pl_kernel_record r;
    CU_ASSERT_EQUAL(pl_device_record_end(&r), 0);
    CU_ASSERT_STRING_EQUAL(r.kernel, "vector_add");
    CU_ASSERT_EQUAL(r.grid[0], 4);
    CU_ASSERT_EQUAL(r.grid[1], 1);
    CU_ASSERT_EQUAL(r.block[0], 256);
    CU_ASSERT_EQUAL(r.sms, 132);
    CU_ASSERT_EQUAL(r.per_sm, 8);
    CU_ASSERT_EQUAL(r.waves, 1);
    CU_ASSERT_EQUAL_FATAL(r.nblocks, 4);
    for (uint32_t i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(r.blocks[i].block, i);
        CU_ASSERT_EQUAL(r.blocks[i].sm, i);
        CU_ASSERT_EQUAL(r.blocks[i].wave, 0);
    }
    CU_ASSERT_EQUAL_FATAL(r.naccess, N);
    int ok = 1;
    for (size_t k = 0; k < N; k++) {
        const pl_record_access *e = &r.access[k];
        ok &= e->offset == 4 * (e->block * 256u + e->thread) && e->store == 1 && e->size == 4 &&
              e->space == 1;
    }
    CU_ASSERT(ok);
    CU_ASSERT_EQUAL(r.nwarp_ops, 0);
    pl_kernel_record_free(&r);
    CU_ASSERT_PTR_NULL(r.access);
    pl_record_config bad = {.nranges = 9};
    CU_ASSERT_EQUAL(pl_device_record_begin(&bad), -1);
    CU_ASSERT_OK(cudaFree(a));
    CU_ASSERT_OK(cudaFree(c));
}

/* A kernel that faults: the record keeps what it logged up to the fault,
 * the out-of-bounds store among it (the range reaches past the array),
 * and the faulted block; the check still faults. On the last device (as
 * test_faults), which it resets. The launch itself may already see the
 * sticky error, or not yet. */
static void test_fault(void)
{
    int n = 0, *p;
    CU_ASSERT_OK(cudaGetDeviceCount(&n));
    CU_ASSERT_OK(cudaSetDevice(n - 1));
    CU_ASSERT_OK(cudaMalloc((void **)&p, 100 * sizeof(int)));
    simt_record r;
    simt_record_config cfg = ranges1(p, 101 * sizeof(int), 4096);
    CU_ASSERT_OK(cudaDeviceSynchronize());
    CU_ASSERT_EQUAL(simtRecordBegin(&cfg), 0);
    cudaError_t e = tk_write_past_end(p, 100, 1); /* 101 threads, blocks of 64 */
    CU_ASSERT(e == cudaSuccess || e == cudaErrorIllegalAddress);
    CU_ASSERT_CUDA(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    CU_ASSERT_EQUAL(simtRecordEnd(&r), 0);
    CU_ASSERT_STRING_EQUAL(r.kernel, "write_past_end");
    CU_ASSERT_EQUAL_FATAL(r.nblocks, 2);
    CU_ASSERT_EQUAL(r.blocks[1].block, 1);
    CU_ASSERT_EQUAL_FATAL(r.naccess, 101);
    const simt_record_access *last = &r.access[100];
    CU_ASSERT_EQUAL(last->offset, 400);
    CU_ASSERT_EQUAL(last->block, 1);
    CU_ASSERT_EQUAL(last->thread, 36);
    CU_ASSERT_EQUAL(last->store, 1);
    simtRecordFree(&r);
    CU_ASSERT_OK(cudaDeviceReset());
    /* the shadow is as it was: the same write past the end faults unrecorded */
    CU_ASSERT_OK(cudaMalloc((void **)&p, 100 * sizeof(int)));
    e = tk_write_past_end(p, 100, 1);
    CU_ASSERT(e == cudaSuccess || e == cudaErrorIllegalAddress);
    CU_ASSERT_CUDA(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    CU_ASSERT_OK(cudaDeviceReset());
    CU_ASSERT_OK(cudaSetDevice(0));
}

static int init_record(void)
{
    simtSetSchedule(0, 0); /* entries in program order (the tests do not rely on it) */
    return 0;
}

int register_record_suite(void)
{
    static const unit_test tests[] = {
        {"the model's SM and wave of every block", test_sm_waves},
        {"the element map of a vector add, filtered, full", test_element_map},
        {"a kernel file with inline checks (build/sim) is logged too", test_inline_file},
        {"a stride-8 read: 32 offsets", test_stride},
        {"the shared-memory tree: rounds, threads, offsets", test_tree},
        {"dynamic shared memory", test_dynamic_shared},
        {"shuffles: the lane each lane read", test_shuffles},
        {"atomics are logged as stores", test_atomics},
        {"one record at a time, the first launch only", test_lifecycle},
        {"the seam: pl_device_record_*", test_seam},
        {"a kernel that faults keeps its record", test_fault},
    };
    return UNIT_SUITE_SETUP("record", init_record, NULL, tests);
}

#else /* real GPUs record nothing */

static void test_no_records(void)
{
    CU_ASSERT_EQUAL(pl_device_caps()->records, 0);
    pl_record_config cfg = {.blocks = 1};
    CU_ASSERT_EQUAL(pl_device_record_begin(&cfg), -1);
    pl_kernel_record r;
    CU_ASSERT_EQUAL(pl_device_record_end(&r), -1);
    CU_ASSERT_EQUAL(r.nblocks, 0);
}

int register_record_suite(void)
{
    static const unit_test tests[] = {{"real GPUs record nothing", test_no_records}};
    return UNIT_SUITE("record", tests);
}

#endif
