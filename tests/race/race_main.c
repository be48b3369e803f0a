/*
 * racecheck — make racecheck: the race check of the simulated GPU, and its
 * own test.
 *
 * Built with ThreadSanitizer (build/sim-tsan): every CUDA thread is a TSan
 * fiber, switches between threads carry no happens-before, and
 * __syncthreads() / warp operations release and acquire, so TSan sees exactly
 * the ordering CUDA guarantees and reports any shared-memory access pair
 * that no barrier orders, with file:line.
 *
 *   racecheck                run every case in a child process and check the
 *                            verdicts (exit 0 when all are as expected)
 *   racecheck --case NAME    run one case (TSan reports on stderr)
 *
 * Cases: block-sum (correct: must run clean), block-sum-racy (one
 * __syncthreads() removed: must report a race at its line), warp-tail-racy
 * (the legacy volatile warp-synchronous tail without __syncwarp(): must report
 * a race between lanes of one warp, with the advice to add __syncwarp()),
 * warp-tail (with __syncwarp(): must run clean); lab03-block-sum (Lab 03's
 * reference block_sum: clean) and lab03-block-sum-racy (the same with the
 * __syncthreads() after each step of the tree removed, made by mk/build.mk
 * into build/sim-tsan/gen/lab03_racy.cu: must report a race at the tree's
 * add, s[tid] += s[tid + half]); shared-counter-racy and global-counter-racy
 * (256 threads each do counter++ on a __shared__ int, on a word of device
 * memory, with no barrier at all between them: must report a race at the
 * ++; the global one is a kernel with no barrier at all), shared-counter and
 * global-counter (the same with atomicAdd: clean).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "03_reduction/lab03.h"
#include "kernels.h"

extern const lab03_impl lab03_racy; /* build/sim-tsan/gen/lab03_racy.cu */

typedef struct {
    const char *name, *what;
    int expect_race;
    const int *line;      /* a line the report must name */
    int same_warp;        /* the racing threads share a warp */
    const char *gen;      /* a generated kernel file (beside bin/, in gen/) the report names */
    const char *gen_text; /* ... at a line holding this */
} race_case;

static const race_case cases[] = {
    {"block-sum", "reduction with every __syncthreads()", 0, NULL, 0, NULL, NULL},
    {"block-sum-racy", "reduction, __syncthreads() in the loop removed", 1, &rk_block_sum_race_line,
     0, NULL, NULL},
    {"warp-tail", "volatile warp tail with __syncwarp()", 0, NULL, 0, NULL, NULL},
    {"warp-tail-racy", "volatile warp tail without __syncwarp()", 1, &rk_warp_tail_race_line, 1,
     NULL, NULL},
    {"lab03-block-sum", "Lab 03's block_sum (the reference)", 0, NULL, 0, NULL, NULL},
    {"lab03-block-sum-racy", "Lab 03's block_sum, the tree's __syncthreads() gone", 1, NULL, 0,
     "lab03_racy.cu", "s[tid] += s[tid + half]"},
    {"shared-counter", "256 threads atomicAdd a __shared__ counter", 0, NULL, 0, NULL, NULL},
    {"shared-counter-racy", "256 threads ++ a __shared__ counter, no barrier", 1,
     &rk_shared_counter_race_line, 0, NULL, NULL},
    {"global-counter", "256 threads atomicAdd a global counter", 0, NULL, 0, NULL, NULL},
    {"global-counter-racy", "256 threads ++ a global counter, no barrier", 1,
     &rk_global_counter_race_line, 0, NULL, NULL},
};
#define NCASES (int)(sizeof cases / sizeof *cases)

static int run_case(const char *name)
{
    float fin[256], *dfin, *dfout;
    int iin[64], *diin, *diout;
    for (int i = 0; i < 256; i++) fin[i] = (float)i;
    for (int i = 0; i < 64; i++) iin[i] = i;
    if (cudaMalloc((void **)&dfin, sizeof fin) || cudaMalloc((void **)&dfout, sizeof(float)) ||
        cudaMalloc((void **)&diin, sizeof iin) || cudaMalloc((void **)&diout, sizeof(int)) ||
        cudaMemcpy(dfin, fin, sizeof fin, cudaMemcpyHostToDevice) ||
        cudaMemcpy(diin, iin, sizeof iin, cudaMemcpyHostToDevice)) {
        fprintf(stderr, "racecheck: CUDA setup failed\n");
        return 2;
    }
    cudaError_t e;
    if (!strcmp(name, "block-sum"))
        e = rk_block_sum(dfin, dfout, 1);
    else if (!strcmp(name, "block-sum-racy"))
        e = rk_block_sum(dfin, dfout, 0);
    else if (!strcmp(name, "warp-tail"))
        e = rk_warp_tail(diin, diout, 1);
    else if (!strcmp(name, "warp-tail-racy"))
        e = rk_warp_tail(diin, diout, 0);
    else if (!strcmp(name, "lab03-block-sum"))
        e = (cudaError_t)lab03_solution.block_sum(dfin, dfout, 256);
    else if (!strcmp(name, "lab03-block-sum-racy"))
        e = (cudaError_t)lab03_racy.block_sum(dfin, dfout, 256);
    else if (!strncmp(name, "shared-counter", 14) || !strncmp(name, "global-counter", 14))
        e = rk_counter(diout, diin, name[0] == 'g', strstr(name, "racy") == NULL);
    else {
        fprintf(stderr, "racecheck: no case '%s'; the cases are:", name);
        for (int i = 0; i < NCASES; i++) fprintf(stderr, " %s", cases[i].name);
        fprintf(stderr, "\n");
        return 2;
    }
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        fprintf(stderr, "racecheck: %s: %s\n", name, cudaGetErrorString(e));
        return 2;
    }
    return 0;
}

/* Runs one case as a child; returns its stderr (malloc'd) and exit status. */
static char *capture(const char *self, const char *name, int *status)
{
    int fd[2];
    if (pipe(fd) != 0) return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], STDERR_FILENO);
        close(fd[0]);
        close(fd[1]);
        execl(self, self, "--case", name, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    ssize_t n;
    while (buf && (n = read(fd[0], buf + len, cap - len - 1)) > 0) {
        len += (size_t)n;
        if (cap - len < 1024) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) break;
            buf = nb;
        }
    }
    close(fd[0]);
    if (buf) buf[len] = '\0';
    waitpid(pid, status, 0);
    return buf;
}

/* Whether the log names gen (a file in ../gen/ from this program) at a
 * line holding text; where: "gen:LINE" as found. */
static int names_line(const char *log, const char *gen, const char *text, char *where, size_t cap)
{
    const char *p = strstr(log, gen);
    if (!p || p[strlen(gen)] != ':') return 0;
    int line = atoi(p + strlen(gen) + 1);
    snprintf(where, cap, "%s:%d", gen, line);
    char exe[4096], path[4200];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    snprintf(path, sizeof path, "%s/../gen/%s", exe, gen);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char buf[512];
    int k = 0, found = 0;
    while (fgets(buf, sizeof buf, f))
        if (++k == line) {
            found = strstr(buf, text) != NULL;
            break;
        }
    fclose(f);
    return found;
}

/* "warp W" of the first two CUDA threads a report names, or -1. */
static void report_warps(const char *log, int *w1, int *w2)
{
    *w1 = *w2 = -1;
    const char *p = log;
    for (int k = 0; k < 2 && (p = strstr(p, ", warp ")); k++, p++) *(k ? w2 : w1) = atoi(p + 7);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--case")) return run_case(argv[2]);
    if (argc > 1) {
        int help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
        if (!help) fprintf(stderr, "racecheck: unexpected argument '%s'\n", argv[1]);
        fprintf(help ? stdout : stderr, "usage: racecheck [--case NAME]\ncases:");
        for (int i = 0; i < NCASES; i++) fprintf(help ? stdout : stderr, " %s", cases[i].name);
        fprintf(help ? stdout : stderr, "\n");
        return help ? 0 : 2;
    }
    setenv("TSAN_OPTIONS", "halt_on_error=0 exitcode=66 report_signal_unsafe=0", 0);
    printf("racecheck: ThreadSanitizer over the simulated GPU (every CUDA thread a fiber)\n");
    int failures = 0;
    for (int i = 0; i < NCASES; i++) {
        const race_case *c = &cases[i];
        int status = 0;
        char *log = capture("/proc/self/exe", c->name, &status);
        if (!log) {
            printf("FAIL  %-16s could not run\n", c->name);
            failures++;
            continue;
        }
        int raced = strstr(log, "WARNING: ThreadSanitizer: data race") != NULL;
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        char where[128] = "";
        int ok = raced == c->expect_race && (raced ? code == 66 : code == 0);
        if (c->line) {
            snprintf(where, sizeof where, "tests/race/kernels.cu:%d", *c->line);
            ok &= strstr(log, where) != NULL;
        }
        if (c->gen) ok &= names_line(log, c->gen, c->gen_text, where, sizeof where);
        int w1, w2;
        report_warps(log, &w1, &w2);
        if (raced && c->same_warp) ok &= w1 >= 0 && w1 == w2;
        printf("%s  %-20s %-52s %s%s\n", ok ? "PASS" : "FAIL", c->name, c->what,
               raced ? "race reported at " : "no race reported", raced ? where : "");
        if (raced && strstr(c->name, "counter"))
            printf("      every thread reads, adds to and writes back one word: an increment "
                   "made between another thread's read and write is lost; atomicAdd makes each "
                   "increment whole\n");
        else if (raced && w1 >= 0 && w1 == w2)
            printf(
                "      both threads are in warp %d: since Volta the lanes of a warp do not run in "
                "lockstep (independent thread scheduling); a __syncwarp() (or __syncthreads()) "
                "between the write and the read orders them\n",
                w1);
        else if (raced && w1 >= 0 && w2 >= 0)
            printf("      the threads are in warps %d and %d: only a __syncthreads() between the "
                   "write "
                   "and the read orders them\n",
                   w1, w2);
        if (!ok) {
            failures++;
            fprintf(stderr, "---- racecheck %s: exit %d, stderr:\n%s----\n", c->name, code, log);
        }
        free(log);
    }
    printf("racecheck: %d passed, %d failed\n", NCASES - failures, failures);
    return failures ? 1 : 0;
}
