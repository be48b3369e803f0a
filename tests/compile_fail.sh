#!/usr/bin/env bash
# tests/compile_fail.sh — what the simulated build refuses at compile time:
# each snippet must fail to compile with a message that says it is not
# simulated (and names the feature), never link and fail later; and the
# helpers whose arguments C would convert silently when swapped.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror "-I$root/core/simt/cudart" "-I$root/core/simt/include")
fails=0
expect_refusal() { # name, pattern the compiler must print, source
    local name=$1 pattern=$2 src=$3 out
    printf '%s\n' "$src" >"$work/$name.cu"
    if out=$(cc -x c "${flags[@]}" -c "$work/$name.cu" -o "$work/$name.o" 2>&1); then
        echo "FAIL  $name: compiled, but must be refused"; fails=$((fails + 1))
    elif grep -qE -- "$pattern" <<<"$out"; then
        echo "PASS  $name: refused"
    else
        echo "FAIL  $name: refused without the message /$pattern/:"; echo "$out" | sed 's/^/  | /'
        fails=$((fails + 1))
    fi
}
expect_refusal managed 'cudaMallocManaged is not simulated by paralab' '
#include <cuda_runtime.h>
int f(void) { void *p; return cudaMallocManaged(&p, 16, 1); }'
expect_refusal graphs 'cudaGraphLaunch is not simulated by paralab' '
#include <cuda_runtime.h>
int f(void) { return cudaGraphLaunch(0, 0); }'
expect_refusal cooperative 'cudaLaunchCooperativeKernel is not simulated by paralab' '
#include <cuda_runtime.h>
int f(void) { return cudaLaunchCooperativeKernel(0, 0, 0, 0, 0, 0); }'
expect_refusal syncthreads_count "__syncthreads_count is not simulated by paralab" '
#include "simt/kernel.h"
__global__ void k(int *out) { int c = __syncthreads_count(threadIdx.x & 1); out[0] = c; }'
expect_refusal syncthreads_or_statement "__syncthreads_or is not simulated by paralab" '
#include "simt/kernel.h"
__global__ void k(int *out) { __syncthreads_or(out[0]); }'
# pl_k_scale's count and factor swapped (C would convert both silently)
flags+=("-I$root/core/kernels/include") # paralab/nn.h, the kernels' header
expect_refusal scale_swapped 'pl_k_scale\(x, n, a, stream\): n, the element count, is a floating-point value: are the count and the factor swapped' '
#include "paralab/nn.h"
int f(float *g, long n) { return pl_k_scale(g, 0.25f, n, 0); }'
expect_refusal scale_integer_factor 'pl_k_scale\(x, n, a, stream\): a, the factor, is an integer' '
#include "paralab/nn.h"
int f(float *g, long n, int ranks) { return pl_k_scale(g, n, 1 / ranks, 0); }'
# and what is supported compiles cleanly
if cc -x c "${flags[@]}" -c "$root/tests/unit/kernels.cu" -I"$root/tests/unit" -o "$work/ok.o" 2>"$work/ok.log"; then
    echo "PASS  the conformance kernels compile"
else
    echo "FAIL  the conformance kernels do not compile:"; cat "$work/ok.log"; fails=$((fails + 1))
fi
echo "compile-time refusals: $fails failed"
[ $fails = 0 ]
