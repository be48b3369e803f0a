/*
 * zero_bench.c — paralab-bench zero: ZeRO stages 0-3 (paralab/zero.h) of
 * the block model over N = 1, 2, 4 and 8 data-parallel ranks of simulated
 * H100s (the H100-SXM preset, whatever SIMT_GPU says), fp32, AdamW, a
 * global batch of 64, for two models: the default (h 64, f 256, L 2) and a
 * wider, deeper one (h 256, f 1024, L 8; --scale S: h 256 / 2^S), where
 * the working buckets are small beside the shards and backward is long.
 * For each model, N and stage, all measured in the same run:
 *   - the bytes a rank's device holds for parameters, gradients, optimizer
 *     state and working buckets, measured by the engine from its device
 *     allocations (pl_zero.mem), against pl_zero_memory_of (the fp32
 *     formulas with the padding), and the total against plain DP's (stage
 *     0) at the same N;
 *   - one optimizer step after a warm-up step, every rank's clock started
 *     at the same modeled instant: the floats each rank sent through the
 *     engine's communicator (its ledger, pl_comm_ledger_own) and the
 *     collectives it called, against pl_zero_traffic_of; the modeled step
 *     from that instant to the engine's step_end (the last rank's) after
 *     pl_zero_step (forward, backward, the reductions during it) and after
 *     pl_zero_update (the whole step), against plain DP's at the same N;
 *   - with accumulate k = 2 (the default model, N = 8): the memory (the
 *     reduce-scatter slice stages 2-3 add) and the traffic (stage 2
 *     reduces every micro-step: (k + 1) c Ψ_pad; stage 3 3k c Ψ_pad).
 * Then a verdict line per goal of issue 17 (memory and communication
 * exact; the paper's 2Ψ and 3Ψ), computed from the figures. The data is
 * random: neither memory nor times depend on it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "paralab/clock.h"
#include "paralab/device.h"
#include "paralab/options.h"
#include "zero_run.h"

enum { BATCH = 64, NS = 4, STAGES = 4, MODELS = 2 };
static const int ranks[NS] = {1, 2, 4, 8};

typedef struct {
    pl_blocks_config c;
    const char *what;
    bz_result r[NS][STAGES];
    pl_zero_memory f[NS][STAGES];  /* the formulas */
    pl_zero_traffic t[NS][STAGES]; /* the formulas */
} zmodel;

static size_t total(const pl_zero_memory *m)
{
    return m->params + m->grads + m->optim + m->buffers;
}

static int mem_equal(const pl_zero_memory *a, const pl_zero_memory *b)
{
    return a->params == b->params && a->grads == b->grads && a->optim == b->optim &&
           a->buffers == b->buffers;
}

static unsigned long long traffic_floats(const pl_zero_traffic *t)
{
    return t->all_reduce + t->reduce_scatter + t->all_gather;
}

static int traffic_equal(const bz_result *r, const pl_zero_traffic *t)
{
    return r->floats == traffic_floats(t) && r->calls == t->calls && !r->floats_differ;
}

static pl_zero_config config(const pl_blocks_config *c, int stage, int k)
{
    return (pl_zero_config){
        .model = *c, .stage = stage, .batch = BATCH, .accumulate = k, .overlap = 1, .sgd = 0};
}

/* Runs every N and stage of m; 0, or -1 after printing why. */
static int run_model(zmodel *m, const float *x, const int *y)
{
    char err[512];
    for (int i = 0; i < NS; i++)
        for (int s = 0; s < STAGES; s++) {
            pl_zero_config cfg = config(&m->c, s, 1);
            if (pl_zero_memory_of(&cfg, ranks[i], &m->f[i][s], err, sizeof err) ||
                pl_zero_traffic_of(&cfg, ranks[i], &m->t[i][s], err, sizeof err)) {
                fprintf(stderr, "paralab-bench zero: h %d, N=%d, stage %d: %s\n", m->c.hidden,
                        ranks[i], s, err);
                return -1;
            }
            if (bz_run(&cfg, ranks[i], 1, x, y, &m->r[i][s])) {
                fprintf(stderr, "paralab-bench zero: h %d, N=%d, stage %d: %s\n", m->c.hidden,
                        ranks[i], s, m->r[i][s].error);
                return -1;
            }
        }
    return 0;
}

static void print_memory_row(int n, int s, long psi_pad, const bz_result *r,
                             const pl_zero_memory *f, double vs)
{
    const pl_zero_memory *m = &r->mem;
    printf("%4d %6d %9ld | %10zu %10zu %10zu %10zu | %10zu %6.3f | ", n, s, psi_pad, m->params,
           m->grads, m->optim, m->buffers, total(m), vs);
    if (mem_equal(m, f) && !r->mem_differs)
        printf("equal\n");
    else
        printf("DIFFERS: %zu %zu %zu %zu%s\n", f->params, f->grads, f->optim, f->buffers,
               r->mem_differs ? " (and the ranks measured different bytes)" : "");
}

static void print_traffic_row(int n, int s, const bz_result *r, const pl_zero_traffic *t)
{
    double c_psi = r->psi_pad ? (double)r->floats / (double)r->psi_pad : 0;
    printf("%4d %6d | %10llu %10llu | %5u %5u %3u/%u/%u | %7.4f | %s\n", n, s, r->floats,
           traffic_floats(t), r->calls, t->calls, r->by_call[0], r->by_call[1], r->by_call[2],
           c_psi, traffic_equal(r, t) ? "equal" : "DIFFERS");
}

static void tables(const zmodel *m)
{
    const pl_blocks_config *c = &m->c;
    printf("\n%s: h %d, f %d, %d blocks, %d units, Ψ = %ld parameters\n", m->what, c->hidden,
           c->ffn, c->layers, c->layers + 2, pl_blocks_count(c));
    printf("memory per rank, bytes (measured from the engine's device allocations; the last "
           "column: against pl_zero_memory_of)\n");
    printf("%4s %6s %9s | %10s %10s %10s %10s | %10s %6s | %s\n", "N", "stage", "Ψ_pad", "params",
           "grads", "optim", "buffers", "total", "vs DP", "formula");
    for (int i = 0; i < NS; i++)
        for (int s = 0; s < STAGES; s++) {
            const bz_result *r = &m->r[i][s];
            double vs = (double)total(&r->mem) / (double)total(&m->r[i][0].mem);
            print_memory_row(ranks[i], s, r->psi_pad, r, &m->f[i][s], vs);
        }
    printf("communication per rank in one step (floats sent: its ledger; pl_zero_traffic_of; "
           "collectives: ledger, formula, all-reduce/reduce-scatter/all-gather; in Ψ_pad)\n");
    printf("%4s %6s | %10s %10s | %5s %5s %9s | %7s | %s\n", "N", "stage", "ledger", "formula",
           "calls", "form.", "AR/RS/AG", "x Ψ_pad", "formula");
    for (int i = 0; i < NS; i++)
        for (int s = 0; s < STAGES; s++) print_traffic_row(ranks[i], s, &m->r[i][s], &m->t[i][s]);
    printf("the modeled step, us (from one instant on every rank to the engine's step_end, the "
           "last rank's: after pl_zero_step, and with the update after pl_zero_update)\n");
    printf("%4s %6s | %10s %12s | %8s %8s | %6s\n", "N", "stage", "step", "with update", "vs DP",
           "(whole)", "wall s");
    for (int i = 0; i < NS; i++)
        for (int s = 0; s < STAGES; s++) {
            const bz_result *r = &m->r[i][s], *dp = &m->r[i][0];
            printf("%4d %6d | %10.1f %12.1f | %8.3f %8.3f | %6.1f\n", ranks[i], s, r->step * 1e6,
                   r->whole * 1e6, dp->step > 0 ? r->step / dp->step : 0,
                   dp->whole > 0 ? r->whole / dp->whole : 0, r->wall);
        }
}

/* The paper's volumes, from Ψ_pad alone: 2 c Ψ_pad (stages 0-2, k = 1),
 * 3 c Ψ_pad (stage 3), c = (N - 1) / N. */
static unsigned long long paper(long psi_pad, int n, int stage)
{
    unsigned long long cpsi = (unsigned long long)(psi_pad / n) * (unsigned long long)(n - 1);
    return (stage == 3 ? 3 : 2) * cpsi;
}

static const char *met(int ok) { return ok ? "met" : "MISSED"; }

int bench_zero(int repeat, int scale)
{
    (void)repeat;
    pl_options o;
    pl_options_defaults(&o, 8);
    o.hw = "H100-SXM"; /* before the first CUDA call: the preset is read when the runtime starts */
    char msg[512];
    pl_hw_model hw;
    if (!pl_device_caps()->modeled || pl_device_apply_options(&o, msg, sizeof msg) ||
        pl_device_model(&hw)) {
        if (!pl_device_caps()->modeled)
            fprintf(stderr, "paralab-bench: zero models the step on simulated GPUs: run "
                            "build/sim's\n");
        else
            fprintf(stderr, "paralab-bench zero: 8 ranks, one device each: %s\n", msg);
        return 2;
    }
    int wide = 256 >> scale;
    if (wide < 16) wide = 16;
    zmodel *m = calloc(MODELS, sizeof *m);
    float *x = NULL;
    int *y = NULL;
    pl_blocks_config def = pl_blocks_default();
    if (!m || bz_data(&def, BATCH, &x, &y)) {
        fprintf(stderr, "paralab-bench zero: out of host memory\n");
        free(m);
        return 1;
    }
    m[0].c = def;
    m[0].what = "the default model";
    m[1].c = pl_blocks_config_make(wide, 8);
    m[1].what = "the wide model";
    printf("paralab-bench zero: ZeRO stages 0-3 (0: plain data parallelism) of the block model, "
           "fp32, AdamW, a global batch of %d, on N = 1, 2, 4, 8 simulated %s (modeled clock): "
           "one step after a warm-up, each rank on its own device\n",
           BATCH, hw.name);
    double w0 = pl_now();
    int rc = 0;
    for (int k = 0; k < MODELS && !rc; k++) {
        if (run_model(&m[k], x, y)) {
            rc = 1;
            break;
        }
        tables(&m[k]);
    }
    /* accumulate k = 2: the default model on 8 ranks */
    bz_result acc[STAGES];
    pl_zero_memory accf[STAGES];
    pl_zero_traffic acct[STAGES];
    for (int s = 0; s < STAGES && !rc; s++) {
        pl_zero_config cfg = config(&m[0].c, s, 2);
        if (pl_zero_memory_of(&cfg, 8, &accf[s], msg, sizeof msg) ||
            pl_zero_traffic_of(&cfg, 8, &acct[s], msg, sizeof msg) ||
            bz_run(&cfg, 8, 1, x, y, &acc[s])) {
            fprintf(stderr, "paralab-bench zero: accumulate 2, stage %d: %s\n", s,
                    acc[s].error[0] ? acc[s].error : msg);
            rc = 1;
        }
    }
    if (!rc) {
        printf("\nwith accumulate k = 2 (the default model, N = 8: two micro-steps of 4 rows a "
               "rank)\n");
        printf("%4s %6s %9s | %10s %10s %10s %10s | %10s %6s | %s\n", "N", "stage", "Ψ_pad",
               "params", "grads", "optim", "buffers", "total", "vs DP", "formula");
        for (int s = 0; s < STAGES; s++)
            print_memory_row(8, s, acc[s].psi_pad, &acc[s], &accf[s],
                             (double)total(&acc[s].mem) / (double)total(&acc[0].mem));
        printf("%4s %6s | %10s %10s | %5s %5s %9s | %7s | %s\n", "N", "stage", "ledger", "formula",
               "calls", "form.", "AR/RS/AG", "x Ψ_pad", "formula");
        for (int s = 0; s < STAGES; s++) print_traffic_row(8, s, &acc[s], &acct[s]);
    }
    if (!rc) {
        int mem_ok = 1, traf_ok = 1, paper_ok = 1, shrink_ok = 1, runs = 0;
        for (int k = 0; k < MODELS; k++)
            for (int i = 0; i < NS; i++)
                for (int s = 0; s < STAGES; s++) {
                    const bz_result *r = &m[k].r[i][s];
                    runs++;
                    mem_ok &= mem_equal(&r->mem, &m[k].f[i][s]) && !r->mem_differs;
                    traf_ok &= traffic_equal(r, &m[k].t[i][s]);
                    paper_ok &= r->floats == paper(r->psi_pad, ranks[i], s);
                    if (s > 0 && ranks[i] > 1)
                        shrink_ok &= total(&r->mem) - r->mem.buffers <
                                     total(&m[k].r[i][s - 1].mem) - m[k].r[i][s - 1].mem.buffers;
                }
        for (int s = 0; s < STAGES; s++) {
            mem_ok &= mem_equal(&acc[s].mem, &accf[s]) && !acc[s].mem_differs;
            traf_ok &= traffic_equal(&acc[s], &acct[s]);
        }
        const zmodel *w = &m[1];
        const bz_result *r8 = w->r[NS - 1];
        printf("\nverdict (computed from the figures above)\n");
        printf("  memory: the bytes measured from the device allocations equal the fp32 formulas "
               "with the padding for all %d (model, N, stage) and the 4 stages with k = 2: %s\n",
               runs, met(mem_ok));
        printf("  communication: each rank's ledger equals pl_zero_traffic_of (floats and "
               "collectives) for all %d and the 4 with k = 2: %s\n",
               runs, met(traf_ok));
        printf("  the paper's volumes: 2 (N-1)/N Ψ_pad floats per rank per step for stages 0-2 "
               "and 3 (N-1)/N Ψ_pad for stage 3 (2Ψ and 3Ψ as N grows), in every run with k = "
               "1: %s\n",
               met(paper_ok));
        printf("  the sharded memory (parameters, gradients, optimizer state) shrinks stage by "
               "stage at every N > 1, both models: %s; at N = 8 the wide model's rank holds "
               "%.3f (stage 1), %.3f (stage 2), %.3f (stage 3) of plain DP's %zu bytes (without "
               "the working buckets %.3f, %.3f, %.3f: the formulas' (8 + 8/N) / 16, (4 + 12/N) "
               "/ 16, 1/N)\n",
               met(shrink_ok), (double)total(&r8[1].mem) / (double)total(&r8[0].mem),
               (double)total(&r8[2].mem) / (double)total(&r8[0].mem),
               (double)total(&r8[3].mem) / (double)total(&r8[0].mem), total(&r8[0].mem),
               (double)(total(&r8[1].mem) - r8[1].mem.buffers) / (double)total(&r8[0].mem),
               (double)(total(&r8[2].mem) - r8[2].mem.buffers) / (double)total(&r8[0].mem),
               (double)(total(&r8[3].mem) - r8[3].mem.buffers) / (double)total(&r8[0].mem));
        /* with the working buckets: where the total does not shrink */
        for (int k = 0; k < MODELS; k++) {
            const zmodel *z = &m[k];
            char where[256] = "";
            size_t at = 0;
            for (int i = 1; i < NS; i++)
                for (int s = 2; s < STAGES; s++)
                    if (total(&z->r[i][s].mem) >= total(&z->r[i][s - 1].mem) &&
                        at < sizeof where - 32)
                        at += (size_t)snprintf(where + at, sizeof where - at, "%sN = %d stage %d",
                                               at ? ", " : "", ranks[i], s);
            pl_zero_bucket b[PL_ZERO_UNITS_MAX];
            int U = pl_zero_buckets(&z->c, 1, 0, b, PL_ZERO_UNITS_MAX, msg, sizeof msg);
            long largest = 0;
            for (int u = 0; u < U; u++)
                if (b[u].end - b[u].begin > largest) largest = b[u].end - b[u].begin;
            printf("  with the working buckets (stages 2-3 two gradient buckets of the largest "
                   "unit, %ld of the %ld floats, stage 3 two parameter buckets more), %s: %s%s\n",
                   largest, pl_blocks_count(&z->c), z->what,
                   where[0] ? "the total does not shrink at "
                            : "the total shrinks at every stage "
                              "and N > 1",
                   where);
        }
        printf("  the price on the modeled clock, N = 8, the wide model: the step with its update "
               "takes %.1f us with plain DP; stage 1 %+.1f %%, stage 2 %+.1f %% (the same "
               "2 (N-1)/N Ψ_pad), stage 3 %+.1f %% (3 (N-1)/N Ψ_pad, a gather before each "
               "unit's forward and backward)\n",
               r8[0].whole * 1e6, (r8[1].whole / r8[0].whole - 1) * 100,
               (r8[2].whole / r8[0].whole - 1) * 100, (r8[3].whole / r8[0].whole - 1) * 100);
        if (!mem_ok || !traf_ok || !paper_ok) rc = 1;
    }
    printf("\n  memory: rank 0's (every rank's is checked to be the same); Ψ_pad: every unit's "
           "bucket padded to a multiple of N; buffers: the working buckets of stages 2-3; vs "
           "DP: the total over stage 0's at the same N; floats: what a rank sent in the "
           "measured step and its update; wall: this machine's seconds for the run (set-up, "
           "warm-up, step); in all %.1f s\n",
           pl_now() - w0);
    free(x), free(y), free(m);
    return rc;
}
