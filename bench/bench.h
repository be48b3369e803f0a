/* bench.h — the benchmarks paralab-bench runs besides simt/gpu. */
#ifndef PARALAB_BENCH_H
#define PARALAB_BENCH_H

/* paralab-bench trace: 8 producers x events_per_rank; 0 when all arrived. */
int bench_trace(long events_per_rank);

#endif
