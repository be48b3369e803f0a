#!/usr/bin/env bash
# scripts/gpu-labs.sh — run every lab of the CUDA build on the real GPU with
# --no-viz --solution, at sizes where the measured numbers mean something,
# each under a time limit; print each one's output and a summary table.
#
# Usage: scripts/gpu-labs.sh [--help]
# Environment:
#   BIN          where the labs are (default build/cuda/bin)
#   LAB_TIMEOUT  seconds allowed per run (default 90)
# Exit status: 0 when every run exited 0, else 1.
set -uo pipefail

if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    exit 0
fi
[[ $# -eq 0 ]] || { echo "gpu-labs.sh: unknown argument '$1' (try --help)" >&2; exit 2; }
BIN=${BIN:-build/cuda/bin}
LAB_TIMEOUT=${LAB_TIMEOUT:-90}
[[ "$LAB_TIMEOUT" =~ ^[1-9][0-9]*$ ]] || { echo "gpu-labs.sh: LAB_TIMEOUT='$LAB_TIMEOUT' is not a whole number of seconds >= 1" >&2; exit 2; }

# program and arguments, one run per line
RUNS=(
    "lab01 --no-viz --solution"
    "lab02 --no-viz --solution"
    "lab02 --no-viz --solution --size 8192"
    "lab03 --no-viz --solution --size 1048576"
    "lab03 --no-viz --solution --size 67108864"
    "lab04 --no-viz --solution --size 512"
    "lab04 --no-viz --solution --size 4096"
    "lab05 --no-viz --solution"
    "lab05 --no-viz --solution --size 67108864 --chunks 16 --streams 4"
    "lab06 --no-viz --solution --devices 2"
    "lab06 --no-viz --solution --devices 4"
    "lab07 --no-viz --solution --devices 2"
    "lab08 --no-viz --solution --devices 1 --epochs 2"
    "lab08 --no-viz --solution --devices 2 --epochs 2"
    "lab08 --no-viz --solution --devices 2 --epochs 2 --sequence-parallel"
    "lab09 --no-viz --solution --stages 1 --epochs 1"
    "lab09 --no-viz --solution --stages 2 --epochs 1"
    "lab09 --no-viz --solution --stages 2 --epochs 1 --schedule gpipe"
    "lab09 --no-viz --solution --stages 4 --epochs 1 --schedule zb-h1"
    # Lab 10 on 8 GPUs (dp 2 x tp 2 x pp 2) and on 4 (the two orders); "@N":
    # skipped where fewer than N GPUs answer
    "@8 lab10 --no-viz --solution --epochs 1"
    "@8 lab10 --no-viz --solution --epochs 1 --order picotron --schedule zb-h1"
    "@4 lab10 --no-viz --solution --epochs 1 --dp 1"
    "@4 lab10 --no-viz --solution --epochs 1 --dp 2 --tp 2 --pp 1"
    # Lab 11 (ZeRO) on 8 GPUs, every stage's memory and traffic, and on 4
    "@8 lab11 --no-viz --solution --epochs 1 --stage 3"
    "@8 lab11 --no-viz --solution --epochs 1 --stage 1"
    "@4 lab11 --no-viz --solution --epochs 1 --devices 4 --stage 2 --accumulate 2"
)
# the GPUs there are (for the runs marked @N)
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
summary=() failed=0
for run in "${RUNS[@]}"; do
    if [[ $run == @* ]]; then
        need=${run%% *} need=${need#@} run=${run#* }
        if (( ${gpus:-0} < need )); then
            echo "== $run: SKIP (needs $need GPUs, ${gpus:-0} here)"
            summary+=("| \`$run\` | SKIP (needs $need GPUs) | - |")
            continue
        fi
    fi
    read -r -a argv <<<"$run"
    prog=${argv[0]}
    echo "== $BIN/$run"
    t0=$(date +%s.%N)
    timeout --kill-after=5 "$LAB_TIMEOUT" "$BIN/$prog" "${argv[@]:1}" 2>&1
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    case $rc in
        0) res=PASS ;;
        124|137) res="FAIL (timed out after ${LAB_TIMEOUT}s)"; failed=1 ;;
        *) res="FAIL (exit $rc)"; failed=1 ;;
    esac
    echo "== $run: $res, ${secs}s"
    summary+=("| \`$run\` | $res | $secs |")
done
echo
echo "| run | result | seconds |"
echo "| --- | --- | --- |"
printf '%s\n' "${summary[@]}"
exit $failed
