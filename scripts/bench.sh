#!/usr/bin/env bash
# scripts/bench.sh — what `make bench` runs once build/sim is built and the
# data is there: every `paralab-bench` benchmark of the simulated build, in
# order, its output on the terminal and in build/bench.log; then the MPI
# engine's (make bench-mpi) when build/sim-mpi exists; then every goal line
# the benchmarks printed ("goal (...): value: met" or "not met"), together,
# so that one screen says which goals are met. The figures are same-run
# ratios; docs quote only what this prints.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/sim/bin
log=$root/build/bench.log
: >"$log"
run() { # a benchmark, its output to the terminal and the log
    "$@" 2>&1 | tee -a "$log"
    echo | tee -a "$log"
}
run "$bin/paralab-bench" simt
run "$bin/paralab-bench" trace
run env PARALAB_MPI_ALLREDUCE="$root/build/mpi/allreduce" "$bin/paralab-bench" comm
run "$bin/paralab-bench" train
run "$bin/paralab-bench" viz
run "$bin/paralab-bench" labs
for b in dp tp pp hybrid zero; do run "$bin/paralab-bench" "$b"; done
if [ -d "$root/build/sim-mpi" ]; then
    run make -s -C "$root" bench-mpi
else
    echo "(the MPI engine against Open MPI: make bench-mpi, which builds build/sim-mpi)" | tee -a "$log"
fi
echo "== the goals (build/bench.log has everything) =="
grep -E '^ *goal \(' "$log" | sed -E 's/^ +//'
met=$(grep -cE '^ *goal \(.*: met$' "$log")
all=$(grep -cE '^ *goal \(' "$log")
echo "$met of $all goals met"
