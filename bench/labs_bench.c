/*
 * labs_bench.c — paralab-bench labs: each lab's default run, as a student
 * first starts it (`labNN --no-viz`: its steps as plain text, its
 * exercises on the reference where they are TODO, and its quick checks),
 * timed from the outside. The programs are the ones beside paralab-bench
 * (the same build). For each: the wall time, the CPU time the run used
 * (its own and its threads', from wait4), and its exit status. Goal: each
 * under a minute of wall time on a 2-core machine. A lab that needs the
 * digits says so (make data first); its time is then not measured.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "paralab/clock.h"

static const char *const lab_names[] = {"lab01", "lab02", "lab03", "lab04", "lab05", "lab06",
                                        "lab07", "lab08", "lab09", "lab10", "lab11"};
enum { NLABS = sizeof lab_names / sizeof *lab_names };

/* The folder this program is in, with its '/'. 0, or -1. */
static int own_dir(char *dir, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", dir, cap - 1);
    if (n <= 0) return -1;
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash) return -1;
    slash[1] = '\0';
    return 0;
}

/* Runs path --no-viz, its output to /dev/null: the wall and CPU seconds
 * and the exit status (-1: could not start; 128 + signal). */
static int run_lab(const char *path, double *wall, double *cpu)
{
    double t0 = pl_now();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        int in = open("/dev/null", O_RDONLY);
        if (in >= 0) dup2(in, STDIN_FILENO);
        execl(path, path, "--no-viz", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) return -1;
    *wall = pl_now() - t0;
    *cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#ifdef PARALAB_CUDA
/* The GFLOP/s of the one version `lab04 --no-viz --solution --size N --kernel K` ran: its step
 * says "... (measured), X GFLOP/s". 0 when it did not run or said no such thing. */
static double lab04_gflops(const char *dir, int n, int kernel)
{
    char cmd[PATH_MAX + 128], line[4096];
    snprintf(cmd, sizeof cmd, "'%slab04' --no-viz --solution --size %d --kernel %d 2>&1", dir, n,
             kernel);
    FILE *f = popen(cmd, "r");
    if (!f) return 0;
    double got = 0;
    while (fgets(line, sizeof line, f)) {
        const char *m = strstr(line, " (measured), ");
        if (m && line[0] == '[' && strstr(m, " GFLOP/s")) got = strtod(m + 13, NULL);
    }
    return pclose(f) == 0 ? got : 0;
}
#endif

#define GEMM_GOAL "goal (Lab 04's warp tiles at least 80 %% of cuBLAS SGEMM at 4096^3, on a GPU): "

int bench_gemm_goal(void)
{
#ifdef PARALAB_CUDA
    char dir[PATH_MAX];
    if (own_dir(dir, sizeof dir)) return 1;
    printf("\nLab 04 at 4096^3 (lab04 --no-viz --solution --size 4096 --kernel 4, then 5: the warp "
           "tiles, then cuBLAS, each the mean of 5 timed runs after one untimed)\n");
    fflush(stdout);
    double warp = lab04_gflops(dir, 4096, 4), blas = lab04_gflops(dir, 4096, 5);
    if (warp > 0 && blas > 0) {
        printf("  warp tiles %.0f GFLOP/s, cuBLAS SGEMM %.0f GFLOP/s\n", warp, blas);
        printf(GEMM_GOAL "%.1f %%: %s\n", 100 * warp / blas,
               warp >= 0.8 * blas ? "met" : "not met");
        return 0;
    }
    printf(GEMM_GOAL "not measured (lab04 --kernel 4 or 5 did not run: run it to see why)\n");
    return 1;
#else
    printf(GEMM_GOAL
           "not measured: the simulated build has neither a GPU nor cuBLAS (its modeled "
           "clock gives the warp tiles the register tiles' time); make gpu-bench on a GPU "
           "measures it\n");
    return 0;
#endif
}

int bench_labs(void)
{
    char dir[PATH_MAX];
    if (own_dir(dir, sizeof dir)) {
        fprintf(stderr, "paralab-bench: cannot find its own folder (/proc/self/exe)\n");
        return 1;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("paralab-bench labs: each lab's default run (labNN --no-viz, its output discarded), "
           "%s, %ld core%s\n",
           dir, cores, cores == 1 ? "" : "s");
    printf("  lab     wall (s)   cpu (s)  exit\n");
    int all = 1, measured = 0;
    double worst = 0;
    const char *worst_lab = "";
    for (int i = 0; i < NLABS; i++) {
        char path[PATH_MAX + 16];
        snprintf(path, sizeof path, "%s%s", dir, lab_names[i]);
        if (access(path, X_OK)) {
            printf("  %s   not built (%s)\n", lab_names[i], path);
            all = 0;
            continue;
        }
        double wall = 0, cpu = 0;
        int rc = run_lab(path, &wall, &cpu);
        if (rc < 0) {
            printf("  %s   could not start\n", lab_names[i]);
            all = 0;
            continue;
        }
        printf("  %s %10.2f %9.2f  %4d%s\n", lab_names[i], wall, cpu, rc,
               rc ? "  (not 0: make data first? run it to see why)" : "");
        fflush(stdout);
        if (rc) {
            all = 0;
            continue;
        }
        measured++;
        if (wall > worst) worst = wall, worst_lab = lab_names[i];
    }
    printf("goal (each lab's default run under a minute of wall time, on %ld cores): slowest %s "
           "%.1f s: %s\n",
           cores, worst_lab, worst,
           !all         ? "not measured for every lab"
           : worst < 60 ? "met"
                        : "not met");
    bench_gemm_goal();
    return measured ? 0 : 1;
}
