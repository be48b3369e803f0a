#!/usr/bin/env bash
# tests/nccl_id.sh [NP] — NCCL's bootstrap across processes without a GPU:
# tests/mpi/nccl_id.c with core/comm/nccl_mpi.c, built with mpicc against
# NCCL from $CUDA_HOME (default /usr/local/cuda), run under `mpirun -np NP`
# (default 2): rank 0's ncclGetUniqueId, broadcast over MPI, the same 128
# bytes in every process; each process's place on its host and its ranks'
# GPUs (see the program); with a GPU per process, ncclCommInitRank and an
# all-reduce (scripts/gpu-check.sh runs it with NP 1). Skipped, with what is missing, where nvcc, NCCL
# or Open MPI (mpicc, mpirun) is not installed: exit 0 then.
# As root Open MPI needs --allow-run-as-root; with more processes than
# cores, --oversubscribe: both are passed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
np=${1:-2}
cuda=${CUDA_HOME:-/usr/local/cuda}
missing=()
[ -x "$cuda/bin/nvcc" ] || missing+=("nvcc ($cuda/bin/nvcc)")
[ -f "$cuda/include/nccl.h" ] && ls "$cuda"/lib64/libnccl.so* >/dev/null 2>&1 ||
    missing+=("NCCL ($cuda/include/nccl.h, $cuda/lib64/libnccl.so)")
command -v mpicc >/dev/null || missing+=("mpicc")
command -v mpirun >/dev/null || missing+=("mpirun")
if [ ${#missing[@]} -gt 0 ]; then
    what=${missing[0]}
    for m in "${missing[@]:1}"; do what+="; $m"; done
    echo "✗ skipped: the NCCL id over MPI needs $what: install the CUDA toolkit with NCCL, and Open MPI (scripts/deps.sh --mpi, or apt-get install openmpi-bin libopenmpi-dev)"
    exit 0
fi
out="$root/build/mpi"
mkdir -p "$out"
mpicc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wmissing-prototypes -Werror -O2 \
    -I"$root/core/include" -I"$cuda/include" \
    "$root/tests/mpi/nccl_id.c" "$root/core/comm/nccl_mpi.c" \
    -L"$cuda/lib64" -Wl,-rpath,"$cuda/lib64" -lnccl -lcudart -o "$out/nccl_id" ||
    { echo "✗ nccl_id: mpicc failed"; exit 1; }
flags=(--oversubscribe)
[ "$(id -u)" = 0 ] && flags+=(--allow-run-as-root)
# a time limit: a bootstrap that hangs is a failure, not a stuck make test
timeout -k 5 120 mpirun "${flags[@]}" -np "$np" "$out/nccl_id"
rc=$?
[ $rc = 124 ] && echo "✗ nccl_id: mpirun -np $np did not end within 120 s"
exit $rc
