#!/usr/bin/env bash
# tests/gpu_lab_mpi.sh [BIN] — on a GPU (make gpu-nccl-mpi): a lab's world across
# processes on real GPUs. build/cuda-mpi's Lab 07 under `mpirun -np 1`
# builds its world with pl_comm_create_dist (NCCL, bootstrapped over MPI:
# the unique id broadcast, ncclCommInitRank on the process's GPU) and must
# print the same loss, accuracy and parameter hash as the same binary
# without mpirun (one rank on the local engine: its all-reduce of one rank
# copies, NCCL's of one rank too). One process, one GPU: what a lent GPU
# allows; several processes need as many GPUs.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/cuda-mpi/bin} # (any MPI build: tests/gpu_lab_mpi.sh build/sim-mpi/bin)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(--no-viz --devices 1 --epochs 1)
timeout 300 "$bin/lab07" "${args[@]}" >"$tmp/one" 2>&1
rc1=$?
timeout 300 "$root/scripts/mpirun.sh" -np 1 "$bin/lab07" "${args[@]}" >"$tmp/mpi" 2>&1
rc2=$?
pick() { grep -E 'Epoch 1/1: loss|hash [0-9a-f]{8}' "$1"; }
if [[ $rc1 -eq 0 && $rc2 -eq 0 ]] && [[ -n "$(pick "$tmp/one")" ]] && diff <(pick "$tmp/one") <(pick "$tmp/mpi"); then
    echo "PASS  Lab 07 under mpirun -np 1 on NCCL over MPI: $(pick "$tmp/mpi" | head -n1)"
else
    echo "FAIL  Lab 07 under mpirun -np 1 (exit $rc2; without mpirun $rc1):"
    tail -n 20 "$tmp/one" "$tmp/mpi"
    exit 1
fi
