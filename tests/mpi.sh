#!/usr/bin/env bash
# tests/mpi.sh [BIN] — worlds of several processes (the MPI build, BIN
# defaults to build/sim-mpi/bin) under scripts/mpirun.sh:
#   - mpicheck: every collective, a group of sends and receives, a split
#     across processes, each element against its closed form, a row of host
#     data per rank in every process (pl_dist_allgather_host), on 4 processes
#     x 1 rank and 2 processes x 2 ranks; Lab 10's TP, DP and PP groups
#     (pl_mesh_split of dp 2 x tp 2 x pp 2) on 2 processes x 4 ranks; a
#     rank held (a paused step) past the timeout in one process: the other
#     process's rank waits for it;
#   - a mismatched all-reduce across processes is diagnosed (every call
#     listed), a receive without its send times out with each rank's call:
#     neither hangs (each run under a generous time limit);
#   - Lab 06 (on 4 processes, and 2 x 2 rank threads), Lab 07 (2 epochs,
#     4 processes), Lab 08 (1 epoch, 2 processes x 2 rank threads), Lab 09
#     (1 epoch, 4 stages on 2 x 2), Lab 10 (1 epoch, dp 2 x tp 2 x pp 2 on 2
#     processes x 4 rank threads) and Lab 11 (1 epoch, stage 3 on 4 x 1 and
#     stage 1 on 2 x 2) under mpirun print the same values, losses,
#     accuracies and parameter hashes as the one-process run of the same
#     binary on as many ranks, and every rank's ledger (PARALAB_LEDGER=1) is
#     the same, byte for byte and call for call;
#   - the modeled clock across processes: every modeled time those labs
#     print is within 1 % (or 0.2) of the one-process run's (the MPI engine
#     puts each message on the receiver's stream as the local engine's peer
#     copy; Lab 06's collectives within 20 %: the MPI engine's ring steps do
#     not run ahead of each other as the local engine's do);
#   - a world of 4 processes needs only a device per process (SIMT_DEVICES=1);
#   - Lab 05 (one process) refuses mpirun -np 2, and Lab 10's degrees that
#     do not make the world mpirun started are refused naming that world;
#   - Lab 06 with --trace on 2 processes x 2 ranks writes a part per process,
#     and paralab-viz --check merges them with all 4 ranks.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${1:-$ROOT/build/sim-mpi/bin}
RUN="$ROOT/scripts/mpirun.sh"
LIMIT=${MPI_TEST_LIMIT:-300} # seconds per run: a hang fails, a busy machine does not
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
pass() { echo "  ✓ $*"; }
fail() { echo "  ✗ $*"; fails=$((fails + 1)); }

# ---- mpicheck ---------------------------------------------------------------
# the third number: the chunk size (0: 4 MiB; 8 bytes: 2 elements a chunk,
# so the rings and chains run chunk after chunk)
for shape in "4 1 0" "2 2 0" "3 1 8"; do
    set -- $shape
    out=$(timeout "$LIMIT" "$RUN" -np "$1" "$BIN/mpicheck" --ranks-per-process "$2" --chunk-bytes "$3" 2>&1)
    rc=$?
    want="mpicheck: every check passed on $(($1 * $2)) ranks ($1 processes x $2)"
    note=""
    [[ $3 -gt 0 ]] && note=" (chunks of $3 bytes)"
    if [[ $rc -eq 0 && "$out" == *"$want"* ]]; then pass "$want$note"
    else fail "mpicheck -np $1 --ranks-per-process $2 --chunk-bytes $3 (exit $rc): $out"; fi
done

out=$(timeout "$LIMIT" "$RUN" -np 2 "$BIN/mpicheck" --ranks-per-process 4 mesh 2>&1)
rc=$?
want="mpicheck: every check passed on 8 ranks (2 processes x 4)"
if [[ $rc -eq 0 && "$out" == *"$want"* ]]; then pass "Lab 10's TP, DP and PP groups of dp 2 x tp 2 x pp 2 on 2 processes x 4 ranks: $want"
else fail "mpicheck mesh (exit $rc): $out"; fi

out=$(timeout "$LIMIT" "$RUN" -np 2 "$BIN/mpicheck" hold --comm-timeout 1 2>&1)
rc=$?
want="mpicheck: every check passed on 2 ranks (2 processes x 1)"
if [[ $rc -eq 0 && "$out" == *"$want"* ]]; then pass "a rank held 3 s in process 0 (--comm-timeout 1): process 1's rank waits for it without timing out"
else fail "mpicheck hold (exit $rc): $out"; fi

out=$(timeout "$LIMIT" "$RUN" -np 4 "$BIN/mpicheck" mismatch 2>&1)
rc=$?
want="the ranks made different calls: rank 0: all_reduce(count=4, int32, sum) (call #1); rank 1: all_reduce(count=3, int32, sum) (call #1); rank 2: all_reduce(count=4, int32, sum) (call #1); rank 3: all_reduce(count=4, int32, sum) (call #1)"
if [[ $rc -ne 0 && $rc -ne 124 && "$out" == *"$want"* ]]; then pass "a mismatched all-reduce across 4 processes is diagnosed: $want"
else fail "mismatch (exit $rc${rc/#124/: hung}): $out"; fi

out=$(timeout "$LIMIT" "$RUN" -np 4 "$BIN/mpicheck" deadlock --comm-timeout 2 2>&1)
rc=$?
# whichever rank's 2 s run out first diagnoses it (rank 0's receive or
# another rank's barrier: they start waiting at about the same moment); every
# rank names what it waits for
w0="for a send from rank 3 (4 int32)"
w1="for rank 0 (member 0) to meet in barrier() (call #1)"
if [[ $rc -ne 0 && $rc -ne 124 && "$out" == *"$w0"* && "$out" == *"$w1"* &&
    "$out" =~ "waited 2 s for "[^$'\n']*": a deadlock?" ]]; then
    pass "a receive without its send across processes times out: rank 0 waits '$w0', the others '$w1', the first to run out says 'waited 2 s ... a deadlock?'"
else fail "deadlock (exit $rc): $out"; fi

# ---- labs: the same values and ledgers as one process ----------------------
# The same words and numbers, a number within REL (relative) or ABS of the
# one-process run's: the modeled times (and what a lab says from them) may
# differ a little.
close() { # one-process output, mpirun output, REL, ABS
    python3 - "$@" <<'PY'
import re, sys
a, b = (open(f).read().split("\n") for f in sys.argv[1:3])
rel, ab = float(sys.argv[3]), float(sys.argv[4])
num = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
bad = 0
if len(a) != len(b):
    print(f"    {len(a)} lines alone, {len(b)} under mpirun"); sys.exit(1)
for i, (x, y) in enumerate(zip(a, b), 1):
    if num.sub("#", x) != num.sub("#", y):
        print(f"    line {i} differs in its words:\n      {x}\n      {y}"); bad += 1; continue
    for u, v in zip(num.findall(x), num.findall(y)):
        if abs(float(u) - float(v)) > max(ab, rel * max(abs(float(u)), abs(float(v)))):
            print(f"    line {i}: {u} alone, {v} under mpirun:\n      {x[:200]}"); bad += 1; break
    if bad > 5: break
sys.exit(1 if bad else 0)
PY
}
lab() { # name, processes, rank threads per process, REL, extra options
    local name=$1 np=$2 t=$3 rel=$4 tag=$1.$2x$3
    shift 4
    local extra="$*"
    tag=$tag${extra// /}
    local n=$((np * t))
    PARALAB_LEDGER=1 timeout "$LIMIT" "$BIN/$name" --no-viz -n "$n" "$@" >"$TMP/$tag.one" 2>"$TMP/$tag.one.err"
    local rc1=$?
    PARALAB_LEDGER=1 timeout "$LIMIT" "$RUN" -np "$np" "$BIN/$name" --no-viz --ranks-per-process "$t" "$@" \
        >"$TMP/$tag.mpi" 2>"$TMP/$tag.mpi.err"
    local rc2=$?
    if [[ $rc1 -ne 0 || $rc2 -ne 0 ]]; then
        fail "$name: exit $rc1 alone, $rc2 under mpirun -np $np"; cat "$TMP/$tag.mpi.err"; return
    fi
    if close "$TMP/$tag.one" "$TMP/$tag.mpi" "$rel" 0.2 >"$TMP/$tag.diff"; then
        pass "$name on mpirun -np $np --ranks-per-process $t $*: the same output as one process of $n ranks ($(wc -l <"$TMP/$tag.one") lines; every number within $(awk "BEGIN { print $rel * 100 }") % or 0.2)"
    else fail "$name -np $np x $t $*: the outputs differ:"; cat "$TMP/$tag.diff"; fi
    grep '^ledger rank' "$TMP/$tag.one.err" | sort >"$TMP/$tag.l1"
    grep '^ledger rank' "$TMP/$tag.mpi.err" | sort >"$TMP/$tag.l2"
    if [[ $(wc -l <"$TMP/$tag.l1") -eq $n ]] && cmp -s "$TMP/$tag.l1" "$TMP/$tag.l2"; then
        pass "$name -np $np x $t: every rank's ledger the same ($(head -n1 "$TMP/$tag.l1"))"
    else fail "$name -np $np x $t: the ledgers differ:"; diff "$TMP/$tag.l1" "$TMP/$tag.l2"; fi
}
lab lab06 4 1 0.2
lab lab06 2 2 0.2
lab lab07 4 1 0.01 --epochs 2
lab lab08 2 2 0.01 --epochs 1
lab lab09 2 2 0.01 --epochs 1
lab lab10 2 4 0.01 --epochs 1
lab lab11 4 1 0.01 --epochs 1 --stage 3
lab lab11 2 2 0.01 --epochs 1 --stage 1
# what must be in them, so that the comparison compares something
grep -q 'rank 3: 4 4 4 4' "$TMP/lab06.4x1.mpi" && grep -q '1048576 floats: every element right' "$TMP/lab06.4x1.mpi" ||
    fail "lab06 under mpirun: no row of rank 3 or no 'every element right'"
grep -qE 'Epoch 2/2: loss [0-9.]+ .*test [0-9.]+ %' "$TMP/lab07.4x1--epochs2.mpi" &&
    grep -qE 'bit for bit \(hash [0-9a-f]{8}\)' "$TMP/lab07.4x1--epochs2.mpi" ||
    fail "lab07 under mpirun: no epoch 2 line or no parameter hash"
# Lab 08: the gathered model's hash, the replicated parameters compared
# across the processes, the epoch
grep -qE 'gathered, they hash to [0-9a-f]{8}' "$TMP/lab08.2x2--epochs1.mpi" &&
    grep -q 'are the same bits on every rank' "$TMP/lab08.2x2--epochs1.mpi" &&
    grep -qE 'Epoch 1/1: loss [0-9.]+ \(the mean over 1408 samples\), train [0-9.]+ %, test [0-9.]+ %' "$TMP/lab08.2x2--epochs1.mpi" ||
    fail "lab08 under mpirun: no gathered hash, replicated parameters' line or epoch line"
# Lab 10: the gathered model's hash, every DP replica's hash, the epoch and
# the run's line (its loss and accuracy)
grep -qE 'hash to [0-9a-f]{8} gathered' "$TMP/lab10.2x4--epochs1.mpi" &&
    grep -qE '\(pp 1, tp 1\): ([0-9a-f]{8}) \1: the same bits in every replica' "$TMP/lab10.2x4--epochs1.mpi" &&
    grep -qE 'Epoch 1/1: loss [0-9.]+ \(the mean over 1408 samples\), train [0-9.]+ %, test [0-9.]+ %' "$TMP/lab10.2x4--epochs1.mpi" &&
    grep -qE '22 steps of a batch of 64 on dp 2 x tp 2 x pp 2 .*loss [0-9.]+, test accuracy [0-9.]+ %' "$TMP/lab10.2x4--epochs1.mpi" ||
    fail "lab10 under mpirun: no gathered hash, replicas' hashes, epoch line or run line"

# Lab 09: the gathered model, the first micro-batch's way through the
# stages (every stage's times: the modeled clock across the processes), the
# bubble; Lab 11: the weights' hash, rank 0's traffic against the formula
t9=$TMP/lab09.2x2--epochs1.mpi
grep -qE 'gathered, they hash to [0-9a-f]{8}' "$t9" &&
    grep -qE 'stage 0 0\.0-[0-9.]+ us, stage 1 [0-9.]+-[0-9.]+ us, stage 2 [0-9.]+-[0-9.]+ us, stage 3 [0-9.]+-[0-9.]+ us' "$t9" &&
    grep -qE 'the first step.s bubble [0-9.]+ % of the total' "$t9" ||
    fail "lab09 under mpirun: no gathered hash, no micro-batch 0 line with every stage's times, or no bubble"
t11=$TMP/lab11.4x1--epochs1--stage3.mpi
grep -qE 'hash to [0-9a-f]{8} put together' "$t11" &&
    grep -q 'floats sent in' "$t11" && grep -q ': the same on every rank' "$t11" ||
    fail "lab11 under mpirun: no initial hash, or rank 0's traffic not the formula's on every rank"

# ---- one device per process; what is refused --------------------------------
out=$(SIMT_DEVICES=1 timeout "$LIMIT" "$RUN" -np 4 "$BIN/lab06" --no-viz </dev/null 2>&1)
rc=$?
if [[ $rc -eq 0 && "$out" == *"1048576 floats: every element right"* ]]; then
    pass "a world of 4 processes with one simulated device each (SIMT_DEVICES=1): lab06 runs"
else fail "lab06 on 4 processes of 1 device each (exit $rc): $out"; fi
out=$(SIMT_DEVICES=1 timeout "$LIMIT" "$RUN" -np 2 "$BIN/lab06" --no-viz --ranks-per-process 2 </dev/null 2>&1)
rc=$?
want="lab06: --ranks-per-process 2: each process has 1 simulated device (SIMT_DEVICES, up to 64, makes more)"
if [[ $rc -ne 0 && $rc -ne 124 && "$out" == *"$want"* ]]; then pass "$want"
else fail "2 rank threads on 1 device a process (exit $rc): $out"; fi
out=$(timeout "$LIMIT" "$RUN" -np 2 "$BIN/lab05" --no-viz </dev/null 2>&1)
rc=$?
want="lab05: under mpirun (2 processes): lab 05 runs in one process, so without mpirun only (labs 06 to 11 run under mpirun)"
if [[ $rc -ne 0 && $rc -ne 124 && "$out" == *"$want"* ]]; then pass "lab05 refuses mpirun: $want"
else fail "lab05 under mpirun (exit $rc): $out"; fi
out=$(timeout "$LIMIT" "$RUN" -np 2 "$BIN/lab10" --no-viz --ranks-per-process 4 --dp 1 </dev/null 2>&1)
rc=$?
want="lab10: under mpirun the world is 2 processes x 4 ranks = 8 ranks, but --dp 1 --tp 2 --pp 2 make 4: give degrees that make 8"
if [[ $rc -ne 0 && $rc -ne 124 && "$out" == *"$want"* && "$out" != *"--devices 8"* ]]; then pass "$want ..."
else fail "lab10 --dp 1 under mpirun -np 2 x 4 (exit $rc): $out"; fi

# ---- the trace of a multi-process run: a part per process, merged ---------
# (2 processes x 2 rank threads: the parts hold global ranks 0-1 and 2-3)
timeout "$LIMIT" "$RUN" -np 2 "$BIN/lab06" --no-viz --ranks-per-process 2 --trace "$TMP/run.json" \
    >"$TMP/trace.out" 2>&1
rc=$?
viz=$ROOT/build/sim/bin/paralab-viz
[ -x "$viz" ] || viz=$BIN/paralab-viz
if [[ $rc -eq 0 && -f "$TMP/run.p0.json" && -f "$TMP/run.p1.json" && ! -e "$TMP/run.json" ]]; then
    out=$("$viz" --check "$TMP/run.json" 2>&1)
    want='(2 parts of run "'
    if [[ $? -eq 0 && "$out" == *"$want"* && "$out" == *"merged: events of 4 of the world's 4 ranks)"* ]]; then
        pass "lab06 --trace under mpirun -np 2 x 2: run.p0.json and run.p1.json, merged by paralab-viz with every rank"
    else fail "lab06 --trace under mpirun: paralab-viz --check of the parts: $out"; fi
else
    fail "lab06 --trace under mpirun -np 2 x 2 (exit $rc): no run.p0.json and run.p1.json, or a whole run.json: $(ls "$TMP"; cat "$TMP/trace.out")"
fi

if [[ $fails -gt 0 ]]; then echo "✗ tests/mpi.sh: $fails failed"; exit 1; fi
echo "✓ tests/mpi.sh: every check passed"
