#!/usr/bin/env bash
# scripts/mpirun.sh — mpirun with what Open MPI needs on a lab machine:
#   --allow-run-as-root   Open MPI refuses root without it (containers, CI)
#   --oversubscribe       more processes than cores (4 ranks on a 2-core box)
#   --bind-to none        no pinning: ranks' threads share the cores freely
# Every argument is passed on, e.g.
#   scripts/mpirun.sh -np 4 build/sim-mpi/bin/lab06 --no-viz
# MPIRUN=/path/to/mpirun picks another mpirun.
set -euo pipefail
MPIRUN=${MPIRUN:-mpirun}
if ! command -v "$MPIRUN" >/dev/null 2>&1; then
    echo "mpirun.sh: $MPIRUN not found: install Open MPI with scripts/deps.sh --mpi (make mpi does)" >&2
    exit 2
fi
flags=(--oversubscribe --bind-to none)
[[ $(id -u) -eq 0 ]] && flags=(--allow-run-as-root "${flags[@]}")
# shared memory between the processes of one node, no network probing
export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
exec "$MPIRUN" "${flags[@]}" "$@"
