#!/usr/bin/env bash
# tests/bench_mpi.sh BUILD_DIR — paralab-bench comm started by
# `mpirun -np 4` (short: --scale 12, sizes to 16 KiB): it sees that mpirun
# started it, process 0 alone says so and what it measures (the
# one-process tables, without Open MPI's reference; the MPI engine's
# comparison: a TODO of issue 21) and measures once; the other processes end
# at once. Skipped (exit 0, saying so) where Open MPI's mpirun is missing.
set -uo pipefail
bin=$(cd "${1:-build/sim/bin}" && pwd)
fails=0
check() {
    local what=$1
    shift
    if "$@"; then echo "PASS  $what"; else echo "FAIL  $what"; fails=$((fails + 1)); fi
}
if ! command -v mpirun >/dev/null; then
    echo "✗ skipped: paralab-bench comm under mpirun needs Open MPI's mpirun (scripts/deps.sh --mpi, or apt-get install openmpi-bin)"
    exit 0
fi
flags=(--oversubscribe)
[ "$(id -u)" = 0 ] && flags+=(--allow-run-as-root)
out=$(timeout -k 5 300 mpirun "${flags[@]}" -np 4 "$bin/paralab-bench" comm --scale 12 2>&1)
rc=$?
check "mpirun -np 4 paralab-bench comm: exit 0" test "$rc" = 0
count() { grep -cF -- "$1" <<<"$out"; }
check "one process says it was started by mpirun as 4 processes" \
    test "$(count "paralab-bench comm: started by mpirun as 4 processes; process 0 measures, the others end at once.")" = 1
check "it says what it measures, and the MPI engine's comparison is still to do" \
    test "$(count "This build has no MPI engine to compare yet (TODO, issue 21: the MPI engine across the 4 processes against the local engine and Open MPI's own MPI_Allreduce): what follows is the one-process benchmark, in process 0 alone")" = 1
check "Open MPI's reference: not measured from inside mpirun" \
    test "$(count "Open MPI: not measured (under mpirun)")" = 1
check "the tables once (process 0's): all_reduce at 2, 4 and 8 ranks" \
    test "$(count "all_reduce, 2 ranks, local engine"):$(count "all_reduce, 4 ranks, local engine"):$(count "all_reduce, 8 ranks, local engine")" = 1:1:1
[ "$fails" = 0 ] || { echo "$out" | head -40; echo "✗ bench_mpi: $fails failed"; exit 1; }
echo "✓ bench_mpi: every check passed"
