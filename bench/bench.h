/* bench.h — the benchmarks paralab-bench runs besides simt/gpu. */
#ifndef PARALAB_BENCH_H
#define PARALAB_BENCH_H

/* paralab-bench trace: 8 producers x events_per_rank; 0 when all arrived. */
int bench_trace(long events_per_rank);
/* paralab-bench comm: nccl-tests-style tables up to max_bytes; 0 when ran. */
int bench_comm(long max_bytes);
/* Whether this process was started by mpirun: 1 with its *rank and the
 * processes' *size (Open MPI's OMPI_COMM_WORLD_RANK/SIZE, else the PMI_RANK
 * and PMI_SIZE of MPICH and Slurm), 0 when not (or one process). */
int bench_mpi_launch(int *rank, int *size);
/* paralab-bench comm under mpirun in the MPI build (bench/comm_mpi_bench.c):
 * all-reduce at 4 KiB, 64 KiB, 1 MiB, 16 MiB (those up to max_bytes; at
 * least one) on the MPI engine, the local engine (process 0's threads) and
 * MPI_Allreduce, the same run; repeat timed repetitions (0: 9) of iters
 * calls (0: by size). 0 when ran and every result was right, 1 when not, -1
 * when this build has no MPI engine or mpirun did not start it. */
int bench_comm_mpi(long max_bytes, int repeat, int iters);
/* paralab-bench train: the MLP's training step and the tiled matmul; 0 when ran. */
int bench_train(int repeat);
/* paralab-bench viz: rendering one frame; 0 when ran. */
int bench_viz(int repeat);
/* paralab-bench labs: each lab's default run timed (labs_bench.c) */
int bench_labs(void);
/* The goal of Lab 04's warp tiles against cuBLAS at 4096^3, from the lab04 beside this program:
 * measured in the CUDA build (paralab-bench gpu), "not measured" in the simulated one
 * (labs_bench.c); 0 when it could say. */
int bench_gemm_goal(void);
/* paralab-bench dp: Lab 07's step against the alpha-beta model (build/sim). */
int bench_dp(int repeat);
/* paralab-bench tp: the block model's step on t = 1, 2, 4, 8 TP ranks (build/sim). */
int bench_tp(int repeat);
/* paralab-bench pp: every pipeline schedule against its formulas (build/sim). */
int bench_pp(int repeat);
/* paralab-bench hybrid: every (dp, tp, pp) of 8 ranks, one node of 8 and two
 * of 4 (build/sim); scale: h = 64 / 2^scale. */
int bench_hybrid(int repeat, int scale);
/* paralab-bench zero: ZeRO stages 0-3 on N = 1, 2, 4, 8 ranks, memory and
 * traffic against the formulas, the modeled step (build/sim); scale: the
 * wide model's h = 256 / 2^scale. */
int bench_zero(int repeat, int scale);

#endif
