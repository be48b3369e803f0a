#!/usr/bin/env bash
# tests/compile_fail.sh — what the simulated build refuses at compile time:
# each snippet must fail to compile with a message that says it is not
# simulated (and names the feature), never link and fail later; and the
# helpers whose arguments C would convert silently when swapped. Each is
# compiled as build/sim compiles a kernel file: through mk/cu2c.pl, then cc.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror "-I$root/core/simt/cudart" "-I$root/core/simt/include")
fails=0
expect_refusal() { # name, pattern the compiler must print, source
    local name=$1 pattern=$2 src=$3 out
    printf '%s\n' "$src" >"$work/$name.cu"
    perl "$root/mk/cu2c.pl" "$work/$name.cu" >"$work/$name.cu.c" || { echo "FAIL  $name: cu2c.pl failed"; fails=$((fails + 1)); return; }
    if out=$(cc -x c "${flags[@]}" -c "$work/$name.cu.c" -o "$work/$name.o" 2>&1); then
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
# static shared memory: CUDA's 48 KiB per block (ptxas refuses more)
expect_refusal shared_300k "$work/shared_300k.cu:4:[0-9]+: error: static assertion failed: \"static __shared__ memory over 48 KiB \\(49152 bytes\\) per block \\(big\\): nvcc refuses it" '
#include "simt/kernel.h"
__global__ void k(float *out) {
    __shared__ float big[76800];
    big[threadIdx.x] = 1.0f; out[0] = big[0]; }'
expect_refusal shared_sum "static __shared__ memory over 48 KiB \\(49152 bytes\\) per block in this function \\(a, b\\)" '
#include "simt/kernel.h"
__global__ void k(float *out) {
    __shared__ float a[8192];
    __shared__ float b[4097];
    a[0] = b[0] = 1.0f; out[0] = a[0] + b[0]; }'
expect_refusal shared_nested "per block in this function \\(a, c\\)" '
#include "simt/kernel.h"
__global__ void k(float *out) {
    __shared__ float a[8192];
    if (out) { __shared__ char c[16385]; c[0] = 1; a[0] = c[0]; }
    out[0] = a[0]; }'
expect_refusal extern_shared_scalar 'extern __shared__ is simulated only as `extern __shared__ TYPE NAME\[\];`' '
#include "simt/kernel.h"
__global__ void k(float *out) { extern __shared__ float s; out[0] = s; }'
# CUDA 13 deprecates the 4-vectors of 8-byte types (-Werror: an error)
expect_refusal double4 ".double4. is deprecated: use double4_16a or double4_32a" '
#include "simt/kernel.h"
__global__ void k(double4 *out) { out[0] = make_double4(1, 2, 3, 4); }'
# headers that a CUDA installation in /usr/local/include would supply (C++)
expect_refusal cooperative_groups "cooperative_groups.h \\(cooperative groups\\) is not supported by paralab's simulated GPU \\(build/sim\\): use __syncthreads\\(\\)" '
#include "simt/kernel.h"
#include <cooperative_groups.h>'
expect_refusal cuda_fp16 'cuda_fp16.h \(half precision: __half, __float2half\) is not supported by paralab' '
#include "simt/kernel.h"
#include <cuda_fp16.h>'
expect_refusal float2half "__float2half \\(half precision, cuda_fp16.h\\) is not simulated by paralab" '
#include "simt/kernel.h"
__global__ void k(float *out) { out[0] = (float)__float2half(1.0f); }'
# pl_k_scale's count and factor swapped (C would convert both silently)
flags+=("-I$root/core/kernels/include") # paralab/nn.h, the kernels' header
expect_refusal scale_swapped 'pl_k_scale\(x, n, a, stream\): n, the element count, is a floating-point value: are the count and the factor swapped' '
#include "paralab/nn.h"
int f(float *g, long n) { return pl_k_scale(g, 0.25f, n, 0); }'
expect_refusal scale_integer_factor 'pl_k_scale\(x, n, a, stream\): a, the factor, is an integer' '
#include "paralab/nn.h"
int f(float *g, long n, int ranks) { return pl_k_scale(g, n, 1 / ranks, 0); }'
# and what is supported compiles cleanly
expect_compiles() { # name, file
    local name=$1 file=$2
    if perl "$root/mk/cu2c.pl" "$file" >"$work/$name.cu.c" &&
        cc -x c "${flags[@]}" -iquote "$(dirname "$file")" -c "$work/$name.cu.c" -o "$work/$name.o" 2>"$work/$name.log"; then
        echo "PASS  $name compile"
    else
        echo "FAIL  $name do not compile:"; cat "$work/$name.log"; fails=$((fails + 1))
    fi
}
expect_compiles "the conformance kernels" "$root/tests/unit/kernels.cu"
expect_compiles "the dialect kernels" "$root/tests/unit/kernels_dialect.cu"
printf '%s\n' '#include "simt/kernel.h"' \
    '__global__ void k(float *out) { __shared__ float a[8192], b[4096]; a[0] = b[0] = 1.0f; out[0] = a[0]; }' \
    >"$work/shared_48k.cu"
expect_compiles "48 KiB of static shared memory exactly" "$work/shared_48k.cu"
# what mk/cu2c.pl must see through: braces in comments, strings and
# characters, a C++-only extern "C" group, a helper's specifiers on the line
# before its name, a file-scope extern __shared__ used by two kernels
cat >"$work/rewrite.cu" <<'EOF'
#include "simt/kernel.h"
#ifdef __cplusplus
extern "C" {
#endif
/* a comment with a brace { that never closes */
extern __shared__ float file_dyn[];
__device__ __forceinline__
float twice(float x) { return 2.0f * x; } // }
inline __device__ float warp_sum(float v)
{
    const char *s = "{ extern __shared__ float no[]; \" }";
    char c = '{';
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    return v + (float)(s[0] == c);
}
__device__ int unused_helper(int x) { return x; }
static __global__ void a(float *out) { out[0] = warp_sum(twice(file_dyn[threadIdx.x])); }
SIMT_LAUNCHER(a, (float *out), (out))
static __global__ void b(float *out) { out[1] = file_dyn[0]; }
SIMT_LAUNCHER(b, (float *out), (out))
#ifdef __cplusplus
}
#endif
EOF
expect_compiles "the forms cu2c.pl rewrites, among braces it must not count," "$work/rewrite.cu"
# a kernel file that includes another (as tests/unit/kernels_lab04.cu does):
# the other is rewritten too, and finds its header beside itself
mkdir -p "$work/inc/sub"
printf '%s\n' '#include "simt/kernel.h"' '#include "sub/dyn.cu"' >"$work/inc/top.cu"
printf '%s\n' '#include "dyn.h"' 'static __global__ void k(float *out) {' \
    '    extern __shared__ float s[]; s[threadIdx.x] = DYN_SCALE; out[0] = s[0]; }' \
    'SIMT_LAUNCHER(k, (float *out), (out))' >"$work/inc/sub/dyn.cu"
echo '#define DYN_SCALE 2.0f' >"$work/inc/sub/dyn.h"
expect_compiles "a kernel file that includes one with extern __shared__ and a header beside it" "$work/inc/top.cu"
echo "compile-time refusals: $fails failed"
[ $fails = 0 ]
