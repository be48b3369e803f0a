#!/usr/bin/env bash
# tests/fuzz.sh — builds the libFuzzer targets (fuzz/, docs/fuzzing.md) and
# runs them.
#
# Usage: tests/fuzz.sh [--short] [TARGET...]  (targets: trace roundtrip options digits)
#   --short  make test's step: every input of fuzz/regressions/<target>/ once
#            (each crash found so far, fixed), then a short deterministic run
#            from the seeds (fuzz/corpus/<target>/, -seed=1, a fixed number
#            of runs, a fresh scratch corpus: the same inputs every time): a
#            few seconds a target
#   (none)   make fuzz: the regressions, then FUZZ_TIME seconds (default 300)
#            a target, one target at a time, with FUZZ_SEED (default 0:
#            libFuzzer picks one); what it finds new is kept in
#            build/fuzz/corpus/<target>/ for the next run
# A crash, a hang (over FUZZ_TIMEOUT s, default 10, on one input), a leak or
# a sanitizer report stops the run: the input is saved as
# build/fuzz/artifacts/<target>-crash-... and the script exits 1. Reproduce
# it with build/fuzz/fuzz-<target> FILE; once fixed, keep FILE in
# fuzz/regressions/<target>/.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
short=0
targets=()
for a in "$@"; do
    case "$a" in
        --short) short=1 ;;
        trace | roundtrip | options | digits) targets+=("$a") ;;
        -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "fuzz.sh: unknown argument '$a' (targets: trace roundtrip options digits; --short)" >&2; exit 2 ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=(trace roundtrip options digits)
build=build/fuzz
FUZZ_TIME=${FUZZ_TIME:-300}
FUZZ_SEED=${FUZZ_SEED:-0}
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-10}

# what each target may need: its largest input, its dictionary, and the
# runs of the short step (about 2 s of CPU each here)
declare -A max_len=([trace]=16384 [roundtrip]=4096 [options]=1024 [digits]=4096)
declare -A runs=([trace]=3000 [roundtrip]=5000 [options]=30000 [digits]=20000)
declare -A dict=([trace]=fuzz/trace.dict)

if ! command -v "${FUZZ_CC:-clang}" >/dev/null; then
    echo "✗ fuzz: ${FUZZ_CC:-clang} not found: install clang and libclang-rt-dev (scripts/deps.sh)" >&2
    exit 1
fi
if ! make --no-print-directory -f fuzz/fuzz.mk -j"${FUZZ_JOBS:-2}" FUZZ_BUILD="$build" \
        FUZZ_TARGETS="${targets[*]}"; then
    echo "✗ fuzz: the targets do not build (clang, libclang_rt.fuzzer: scripts/deps.sh)" >&2
    exit 1
fi
mkdir -p "$build/artifacts"
fails=0
for t in "${targets[@]}"; do
    bin=$build/fuzz-$t
    common=(-timeout="$FUZZ_TIMEOUT" -max_len="${max_len[$t]}" -print_final_stats=1
            -artifact_prefix="$build/artifacts/$t-")
    [ -n "${dict[$t]:-}" ] && common+=(-dict="${dict[$t]}")
    # every crash found so far, once each
    reg=(fuzz/regressions/$t/*)
    seeds=("fuzz/corpus/$t")
    if [ -e "${reg[0]}" ]; then
        seeds+=("fuzz/regressions/$t")
        if ! out=$("$bin" "${common[@]}" "${reg[@]}" 2>&1); then
            echo "$out" | tail -40
            echo "✗ fuzz $t: an input of fuzz/regressions/$t/ fails again"
            fails=$((fails + 1))
            continue
        fi
        echo "✓ fuzz $t: the ${#reg[@]} inputs of fuzz/regressions/$t/ pass"
    fi
    if [ $short = 1 ]; then
        work=$build/short/$t
        rm -rf "$work" && mkdir -p "$work"
        # -use_cmp=0: the comparisons libFuzzer traces hold pointers, which
        # differ from run to run (ASLR) and steer the mutations; without
        # them the same seed makes the same inputs every time
        args=(-seed=1 -use_cmp=0 -runs="${runs[$t]}" -max_total_time=60 "$work")
    else
        work=$build/corpus/$t
        mkdir -p "$work"
        args=(-seed="$FUZZ_SEED" -max_total_time="$FUZZ_TIME" "$work")
    fi
    log=$build/$t.log
    "$bin" "${common[@]}" "${args[@]}" "${seeds[@]}" >"$log" 2>&1
    rc=$?
    stats=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
    if [ $rc != 0 ]; then
        grep -vE '^#[0-9]|^"|^###' "$log" | tail -60
        echo "✗ fuzz $t: exit $rc after ${stats:-?} runs: see $log and $build/artifacts/"
        fails=$((fails + 1))
    else
        echo "✓ fuzz $t: ${stats:-?} runs (${cov:-cov: ?} edges), no crash, hang, leak or sanitizer report"
    fi
done
[ $fails = 0 ]
