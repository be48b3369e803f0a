#!/usr/bin/env bash
# tests/cuda_ptx.sh NVCC — what Lab 04's warp-tiled GEMM (matmul_warptiles in
# labs/04_gemm/lab04_kernels.cu) is on a GPU, read from the PTX nvcc makes
# for sm_90 (no GPU needed): its global loads and stores of A, B and C
# include 16-byte ones (ld/st.global.v4.f32), every shared-memory read of
# its multiply-adds is 16 bytes (ld.shared.v4.f32, no ld.shared.f32), it
# has two barriers (bar.sync: one before the loop, one a step: double
# buffering), and its 8x8 accumulators live in registers (no .local
# memory); and from ptxas (-Xptxas -v, the machine code for sm_90): at most
# 128 registers a thread (__launch_bounds__(256, 2): two blocks of 256 an
# SM) and no spills to local memory. The emulator cannot show this: it logs a float4 whose members
# are used one by one as four 4-byte accesses (tests/unit/test_picture_lab04.c).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
nvcc=${1:?usage: tests/cuda_ptx.sh NVCC}
fails=0
check() { # check NAME CONDITION...
    local name=$1
    shift
    if "$@"; then echo "PASS  $name"; else echo "FAIL  $name"; fails=$((fails + 1)); fi
}
ptx=$(mktemp)
trap 'rm -f "$ptx"' EXIT
if ! "$nvcc" -std=c++17 -O2 -arch=sm_90 -I"$root/core/include" -I"$root/core/simt/include" \
    -I"$root/labs" -ptx "$root/labs/04_gemm/lab04_kernels.cu" -o "$ptx"; then
    echo "FAIL  nvcc -ptx labs/04_gemm/lab04_kernels.cu"
    exit 1
fi
# the kernel's body: from its .entry to the closing brace at column 0
body=$(awk '/\.entry .*matmul_warptiles/ {on = 1} on {print} on && /^}/ {exit}' "$ptx")
count() { grep -cE "^[[:space:]]+$1[[:space:]]" <<<"$body"; }
check "the PTX has matmul_warptiles" test -n "$body"
check "16-byte global loads (ld.global.v4.f32: $(count 'ld\.global\.v4\.f32'))" \
    test "$(count 'ld\.global\.v4\.f32')" -gt 0
check "16-byte global stores of C (st.global.v4.f32: $(count 'st\.global\.v4\.f32'))" \
    test "$(count 'st\.global\.v4\.f32')" -gt 0
check "every shared read 16 bytes (ld.shared.v4.f32: $(count 'ld\.shared\.v4\.f32'), ld.shared.f32: $(count 'ld\.shared\.f32'))" \
    test "$(count 'ld\.shared\.v4\.f32')" -gt 0 -a "$(count 'ld\.shared\.f32')" -eq 0
check "two barriers in its code, one before the loop and one in it (bar.sync: $(count 'bar\.sync'))" test "$(count 'bar\.sync')" -eq 2
check "the accumulators in registers (no .local memory)" bash -c '! grep -q "\.local" <<<"$1"' _ "$body"
# ptxas's report: "Used N registers" and "N bytes spill stores, N bytes spill loads"
info=$("$nvcc" -std=c++17 -O2 -arch=sm_90 -I"$root/core/include" -I"$root/core/simt/include" \
    -I"$root/labs" -cubin -Xptxas -v "$root/labs/04_gemm/lab04_kernels.cu" -o /dev/null 2>&1 |
    awk '/Compiling entry function .*matmul_warptiles/ {on = 1; next} on && /Compiling entry/ {exit} on')
regs=$(grep -oE 'Used [0-9]+ registers' <<<"$info" | grep -oE '[0-9]+')
spills=$(grep -oE '[0-9]+ bytes spill stores, [0-9]+ bytes spill loads' <<<"$info")
check "ptxas: at most 128 registers a thread (${regs:-none reported})" test -n "$regs" -a "${regs:-999}" -le 128
check "ptxas: no spills (${spills:-none reported})" test "$spills" = "0 bytes spill stores, 0 bytes spill loads"
echo "cuda_ptx: $fails failed"
[ "$fails" -eq 0 ]
