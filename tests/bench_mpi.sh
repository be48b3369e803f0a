#!/usr/bin/env bash
# tests/bench_mpi.sh SIM_BIN MPI_BIN — paralab-bench comm started by
# scripts/mpirun.sh -np 4, short; the structure of what it prints and that
# every result was checked, never its timings.
#
# 1. MPI_BIN (build/sim-mpi/bin): --scale 8 --repeat 3 --iters 2 (4 KiB and
#    64 KiB): process 0 alone prints the table of the three ways (the MPI
#    engine, the local engine, Open MPI's MPI_Allreduce), three rows a size,
#    each with 0 wrong of 4 x count elements checked and Open MPI's ratio
#    1.00; the summary line says every element was checked, 0 wrong.
# 2. SIM_BIN (build/sim/bin, no MPI engine): --scale 12: process 0 alone says
#    the build has none, where it is, and runs the one-process tables once;
#    then memcpy's reference again and the goal of stable references (Open
#    MPI's reference cannot be run from inside mpirun), and the runtime's
#    calls of a small ring all-reduce timed alone.
# Skipped (exit 0, saying so) where Open MPI's mpirun is missing.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sim=$(cd "${1:-build/sim/bin}" && pwd)
mpi=$(cd "${2:-build/sim-mpi/bin}" && pwd)
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
count() { grep -cF -- "$1" <<<"$out"; }
# lines that match the extended regular expression $1
count_re() { grep -cE -- "$1" <<<"$out"; }

# 1. the MPI build: the three ways
out=$(timeout -k 5 120 "$root/scripts/mpirun.sh" -np 4 "$mpi/paralab-bench" comm --scale 8 --repeat 3 --iters 2 2>&1)
rc=$?
all=$out
check "MPI build, mpirun -np 4 paralab-bench comm --scale 8 --repeat 3 --iters 2: exit 0" test "$rc" = 0
check "process 0 alone says what it measures, the three ways" \
    test "$(count "paralab-bench comm: started by mpirun as 4 processes (MPI build): all_reduce (float, sum) of 4 ranks, three ways in this same run:")" = 1
check "... the MPI engine: 4 processes x 1 rank thread" \
    test "$(count "  MPI engine    4 processes x 1 rank thread (pl_comm_create_mpi")" = 1
check "... the local engine: 4 rank threads in process 0" \
    test "$(count "  local engine  4 rank threads in process 0 alone")" = 1
check "... Open MPI's MPI_Allreduce, the reference" \
    test "$(count "  Open MPI      MPI_Allreduce on host buffers, called by the 4 processes: the reference")" = 1
check "... 3 repetitions of --iters calls" \
    test "$(count "each: warm-up, then 3 repetitions of K calls (K by size, here --iters)")" = 1
check "the table's header, once" \
    test "$(count_re '^ +size \(B\) +count +way +time \(us\) +min \(us\) +max \(us\) +busbw GB/s +#wrong +checked +busbw / Open MPI$')" = 1
num='[0-9]+\.[0-9]+'
# a row: [size count] way, median, min, max, busbw, #wrong 0, checked 4 x count, ratio
row() { # $1: size or '', $2: count or '', $3: way, $4: checked, $5: ratio pattern
    count_re "^ +$1 +$2 +$3 +$num +$num +$num +$num +0 +$4 +$5\$"
}
check "4 KiB: the MPI engine, 0 wrong of 4 x 1024 checked" test "$(row 4096 1024 'MPI engine' 4096 "$num")" = 1
check "4 KiB: the local engine, 0 wrong of 4096" test "$(row '' '' 'local engine' 4096 "$num")" = 1
check "4 KiB and 64 KiB: Open MPI's own ratio 1.00" test "$(row '' '' 'Open MPI' '(4096|65536)' '1\.00')" = 2
check "64 KiB: the MPI engine, 0 wrong of 4 x 16384 checked" test "$(row 65536 16384 'MPI engine' 65536 "$num")" = 1
check "64 KiB: the local engine, 0 wrong of 65536" test "$(row '' '' 'local engine' 65536 "$num")" = 1
check "two sizes (--scale 8: to 64 KiB), three rows each" test "$(count_re "^ +[0-9 ]* +(MPI engine|local engine|Open MPI) +[0-9]+\.[0-9]")" = 6
check "every element checked, none wrong" \
    test "$(count "results checked, every element of every rank (2 sizes): MPI engine 0 wrong of 69632, local engine 0 wrong of 69632, Open MPI 0 wrong of 69632")" = 1

# 2. a build without the MPI engine
out=$(timeout -k 5 120 "$root/scripts/mpirun.sh" -np 4 "$sim/paralab-bench" comm --scale 12 2>&1)
rc=$?
all+=$'\n'$out
check "build/sim, mpirun -np 4 paralab-bench comm: exit 0" test "$rc" = 0
check "one process says it was started by mpirun as 4 processes" \
    test "$(count "paralab-bench comm: started by mpirun as 4 processes; process 0 measures, the others end at once.")" = 1
check "it says this build has no MPI engine, and which has" \
    test "$(count "This build has no MPI engine (the MPI build, \`make mpi\`: scripts/mpirun.sh -np 4 build/sim-mpi/bin/paralab-bench comm measures it against the local engine and Open MPI's own MPI_Allreduce): what follows is the one-process benchmark, in process 0 alone")" = 1
check "Open MPI's reference: not measured from inside mpirun" \
    test "$(count "Open MPI: not measured (under mpirun)")" = 1
check "the tables once (process 0's): all_reduce at 2, 4 and 8 ranks" \
    test "$(count "all_reduce, 2 ranks, local engine"):$(count "all_reduce, 4 ranks, local engine"):$(count "all_reduce, 8 ranks, local engine")" = 1:1:1
check "memcpy measured again after the tables, and how far apart from the first" \
    test "$(count_re '^the references again, after the tables: memcpy [0-9]+\.[0-9]+ GB/s \(spread [0-9]+ %\), [0-9]+ % apart from the first$')" = 1
check "the goal of stable references: memcpy's alone here (Open MPI not measured)" \
    test "$(count_re '^goal \(the references stable: memcpy and Open MPI, measured again after the tables, within 20 % of the first\): [0-9]+ % apart at most \(memcpy; Open MPI not measured\): (met|not met)$')" = 1
check "the runtime's calls of a 64 B ring all_reduce at 4 ranks, timed alone, and their least time on this machine's cores" \
    test "$(count_re '^  the simulated runtime.s calls alone of a ring all_reduce of 64 B at 4 ranks \(6 steps a rank, .*\), timed on one thread: [0-9]+\.[0-9] us a rank; the 4 ranks on this machine.s [0-9]+ cores?: at least [0-9]+\.[0-9] us$')" = 1
[ "$fails" = 0 ] || { echo "$all" | head -60; echo "✗ bench_mpi: $fails failed"; exit 1; }
echo "✓ bench_mpi: every check passed"
