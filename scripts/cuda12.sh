#!/usr/bin/env bash
# scripts/cuda12.sh — set up a CUDA 12.x toolchain in .cuda12/ from PyPI wheels
# (nvidia-cuda-nvcc-cu12, -cuda-runtime-cu12, -cuda-cccl-cu12, nvidia-nccl-cu12),
# lay out a CUDA_HOME-like tree of symlinks in .cuda12/home, prove it by
# compiling and linking a small .cu + .c test, then print
#   CUDA_HOME=/abs/path
#   NVCC=/abs/path/to/nvcc
# and write the same as make variables to .cuda12/env.mk.
#
# The cu12 wheels hold ptxas, libnvvm, libdevice, the crt/ headers, the runtime
# headers and libraries, CCCL and NCCL, but NOT the nvcc driver, cudafe++, cicc,
# fatbinary or nvlink. So on its own the script stops with exit 1 and lists
# what is missing. With --hybrid those programs (and the crt/ headers that
# match them) come from a host CUDA toolkit, while include/ and lib64/ stay
# CUDA 12 (cuda_runtime.h, libcudart.so.12, nccl.h, libnccl.so.2).
#
# Usage: scripts/cuda12.sh [--hybrid[=CUDA_DIR]] [--with-cublas] [--force] [--help]
#   --hybrid[=DIR]  borrow nvcc/cudafe++/cicc/fatbinary/nvlink/ptxas from the
#                   toolkit in DIR (default $CUDA_HOME, else /usr/local/cuda)
#   --with-cublas   also install nvidia-cublas-cu12 (~900 MiB unpacked)
#   --force         reinstall the wheels even if .cuda12/site is up to date
# Environment: CUDA12_ARCH (default sm_90) for the test compile.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
C12="$ROOT/.cuda12"
SITE="$C12/site"
HOME12="$C12/home"
STAMP="$SITE/.paralab-wheels"
ARCH="${CUDA12_ARCH:-sm_90}"

# Pinned CUDA 12.9 update 1 set; NCCL 2.28.9 matches the NCCL of the CUDA 13.0 toolkit.
PKGS=(
    nvidia-cuda-nvcc-cu12==12.9.86
    nvidia-cuda-runtime-cu12==12.9.79
    nvidia-cuda-cccl-cu12==12.9.27
    nvidia-nccl-cu12==2.28.9
)
CUBLAS_PKG=nvidia-cublas-cu12==12.9.1.4

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}
die() { echo "cuda12.sh: $*" >&2; exit 1; }

HYBRID=0 HOST_CUDA="" WITH_CUBLAS=0 FORCE=0
for arg in "$@"; do
    case "$arg" in
        --hybrid) HYBRID=1 ;;
        --hybrid=*) HYBRID=1; HOST_CUDA=${arg#--hybrid=} ;;
        --with-cublas) WITH_CUBLAS=1 ;;
        --force) FORCE=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "cuda12.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done
[[ "$ARCH" =~ ^sm_[0-9]+a?$ ]] || die "CUDA12_ARCH='$ARCH' is not of the form sm_NN"
[[ $WITH_CUBLAS -eq 1 ]] && PKGS+=("$CUBLAS_PKG")

command -v python3 >/dev/null 2>&1 || die "python3 not found (needed for pip)"
python3 -m pip --version >/dev/null 2>&1 || die "python3 -m pip does not work (install python3-pip)"
command -v gcc >/dev/null 2>&1 || die "gcc not found (run scripts/deps.sh)"

# ---- 1. wheels ---------------------------------------------------------------
want="${PKGS[*]}"
if [[ $FORCE -eq 0 && -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
    echo "wheels already in .cuda12/site: $want"
else
    echo "+ pip install --target .cuda12/site ${PKGS[*]}"
    rm -rf "$SITE"
    mkdir -p "$C12"
    PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --no-deps --no-cache-dir --no-compile \
        --target "$SITE" "${PKGS[@]}" ||
        die "pip install of ${PKGS[*]} into .cuda12/site failed"
    # Drop what no build needs: NVIDIA's packaging metadata, python caches.
    find "$SITE" -depth \( -name __pycache__ -o -name .metadata \) -exec rm -rf {} +
    echo "$want" >"$STAMP"
fi

NV="$SITE/nvidia"
[[ -d "$NV" ]] || die ".cuda12/site/nvidia missing after pip install"

# ---- 2. CUDA_HOME-like tree ---------------------------------------------------
rm -f "$C12/env.mk" "$C12/hybrid-host"   # written again only when the test below passes
rm -rf "$HOME12"
mkdir -p "$HOME12/bin" "$HOME12/include" "$HOME12/lib64" "$HOME12/nvvm"

# include/: the wheels' include dirs merged (entries link to the wheel files).
for d in cuda_runtime/include cuda_nvcc/include cuda_cccl/include nccl/include cublas/include; do
    [[ -d "$NV/$d" ]] || continue
    for e in "$NV/$d"/*; do
        n=$(basename "$e")
        [[ "$n" == __init__.py || "$n" == __pycache__ ]] && continue
        ln -sfn "$e" "$HOME12/include/$n"
    done
done
# lib64/: shared and static libraries plus the unversioned names the linker wants.
for d in cuda_runtime/lib nccl/lib cublas/lib; do
    [[ -d "$NV/$d" ]] || continue
    for e in "$NV/$d"/lib*; do
        n=$(basename "$e")
        ln -sfn "$e" "$HOME12/lib64/$n"
        if [[ "$n" =~ ^(lib[A-Za-z0-9_]+\.so)\.[0-9]+$ ]]; then
            ln -sfn "$n" "$HOME12/lib64/${BASH_REMATCH[1]}"
        fi
    done
done
# bin/ and nvvm/: what the nvcc wheel has.
[[ -x "$NV/cuda_nvcc/bin/ptxas" ]] && ln -sfn "$NV/cuda_nvcc/bin/ptxas" "$HOME12/bin/ptxas"
for d in lib64 libdevice include; do
    [[ -d "$NV/cuda_nvcc/nvvm/$d" ]] && ln -sfn "$NV/cuda_nvcc/nvvm/$d" "$HOME12/nvvm/$d"
done

# What a working nvcc needs, and whether the wheels gave it.
declare -A NEED=(
    [bin/nvcc]="nvcc compiler driver"
    [bin/cudafe++]="CUDA C++ front end (host/device split)"
    [bin/fatbinary]="fat binary packer"
    [bin/nvlink]="device linker"
    [bin/ptxas]="PTX assembler"
    [bin/crt/link.stub]="host link stub"
    [nvvm/bin/cicc]="device C++ compiler (EDG front end + NVVM)"
    [nvvm/libdevice/libdevice.10.bc]="libdevice math bitcode"
    [include/crt/host_runtime.h]="crt headers"
    [include/cuda_runtime.h]="runtime API header"
    [lib64/libcudart.so]="CUDA runtime library"
    [include/nccl.h]="NCCL header"
    [lib64/libnccl.so]="NCCL library"
)
ORDER=(bin/nvcc bin/cudafe++ bin/fatbinary bin/nvlink bin/ptxas bin/crt/link.stub nvvm/bin/cicc
       nvvm/libdevice/libdevice.10.bc include/crt/host_runtime.h include/cuda_runtime.h
       lib64/libcudart.so include/nccl.h lib64/libnccl.so)
missing=()
for p in "${ORDER[@]}"; do [[ -e "$HOME12/$p" ]] || missing+=("$p"); done

if [[ ${#missing[@]} -gt 0 && $HYBRID -eq 0 ]]; then
    {
        echo "cuda12.sh: FAILED: the CUDA 12 wheels do not make a working nvcc toolchain."
        echo "  installed: ${PKGS[*]}"
        echo "  missing from the wheels (looked for in .cuda12/home):"
        for p in "${missing[@]}"; do printf '    %-34s %s\n' "$p" "${NEED[$p]}"; done
        echo "  present: $(for p in "${ORDER[@]}"; do [[ -e "$HOME12/$p" ]] && printf '%s ' "$p"; done)"
        echo "  None of the nvidia-cuda-nvcc-cu12 releases checked (12.0.76, 12.1.105, 12.4.131,"
        echo "  12.6.85, 12.8.93, 12.9.41, 12.9.86) ships bin/nvcc: they hold only bin/ptxas,"
        echo "  nvvm/{lib64/libnvvm.so,libdevice,include} and include/crt."
        echo "  Re-run with --hybrid to borrow those programs from a host CUDA toolkit"
        echo "  (CUDA 12 headers and libraries, host nvcc front end)."
    } >&2
    exit 1
fi

# ---- 3. hybrid: borrow the compiler programs from a host toolkit --------------
if [[ $HYBRID -eq 1 ]]; then
    if [[ -z "$HOST_CUDA" ]]; then
        if [[ -n "${CUDA_HOME:-}" && -x "${CUDA_HOME}/bin/nvcc" && "$(cd "$CUDA_HOME" && pwd -P)" != "$(cd "$HOME12" && pwd -P)" ]]; then
            HOST_CUDA=$CUDA_HOME
        else
            HOST_CUDA=/usr/local/cuda
        fi
    fi
    host_abs=$(cd "$HOST_CUDA" 2>/dev/null && pwd -P) || die "--hybrid: CUDA directory '$HOST_CUDA' does not exist"
    HOST_CUDA=$host_abs
    for p in bin/nvcc bin/cudafe++ bin/fatbinary bin/nvlink bin/ptxas bin/crt nvvm/bin/cicc nvvm/libdevice include/crt; do
        [[ -e "$HOST_CUDA/$p" ]] || die "--hybrid: $HOST_CUDA/$p not found (is '$HOST_CUDA' a CUDA toolkit?)"
    done
    host_rel=$("$HOST_CUDA/bin/nvcc" --version | sed -n 's/.*release \([0-9][0-9]*\)\.\([0-9]*\).*/\1.\2/p')
    [[ "${host_rel%%.*}" -ge 12 ]] 2>/dev/null || die "--hybrid: $HOST_CUDA/bin/nvcc is release '${host_rel:-?}', need 12 or newer"
    echo "hybrid: compiler programs from $HOST_CUDA (CUDA $host_rel), headers/libraries from the CUDA 12 wheels"
    # cicc emits PTX for its own release, so ptxas must come from the same toolkit;
    # cudafe++'s host stubs must match crt/host_runtime.h, so crt/ comes along too.
    for t in nvcc cudafe++ fatbinary nvlink ptxas bin2c crt; do
        [[ -e "$HOST_CUDA/bin/$t" ]] && ln -sfn "$HOST_CUDA/bin/$t" "$HOME12/bin/$t"
    done
    mkdir -p "$HOME12/nvvm/bin"
    ln -sfn "$HOST_CUDA/nvvm/bin/cicc" "$HOME12/nvvm/bin/cicc"
    rm -f "$HOME12/nvvm/libdevice"
    ln -sfn "$HOST_CUDA/nvvm/libdevice" "$HOME12/nvvm/libdevice"
    ln -sfn "$HOST_CUDA/include/crt" "$HOME12/include/crt"
    echo "$HOST_CUDA" >"$C12/hybrid-host"
fi

# nvcc reads nvcc.profile from the directory it was invoked from (bin/ here),
# so TOP is .cuda12/home even when bin/nvcc is a symlink into another toolkit.
cat >"$HOME12/bin/nvcc.profile" <<'EOF'
TOP              = $(_HERE_)/..
CICC_PATH        = $(TOP)/nvvm/bin
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib64:
PATH            += $(CICC_PATH):$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
EOF

NVCC="$HOME12/bin/nvcc"
for p in "${ORDER[@]}"; do [[ -e "$HOME12/$p" ]] || die "$HOME12/$p still missing after setup"; done

# ---- 4. prove it: compile + link a kernel and a C11 caller ----------------------
T="$C12/test"
rm -rf "$T"; mkdir -p "$T"
cat >"$T/kernel.cu" <<'EOF'
#include <cuda_runtime.h>
__global__ void add_one(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
extern "C" int launch_add_one(float *x, int n) {
    add_one<<<(n + 255) / 256, 256>>>(x, n);
    return (int)cudaGetLastError();
}
EOF
cat >"$T/main.c" <<'EOF'
#include <stdio.h>
#include <cuda_runtime.h>
#include <nccl.h>
int launch_add_one(float *x, int n);
int main(void) {
    int v = 0, n = 0;
    ncclGetVersion(&v);
    printf("CUDART_VERSION=%d NCCL=%d\n", CUDART_VERSION, v);
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) { printf("cudaGetDeviceCount: %s\n", cudaGetErrorString(e)); return 2; }
    printf("devices: %d\n", n);
    float *d = NULL;
    if (n > 0 && cudaMalloc((void **)&d, 1024 * sizeof(float)) == cudaSuccess) {
        e = (cudaError_t)launch_add_one(d, 1024);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        printf("kernel: %s\n", cudaGetErrorString(e));
        cudaFree(d);
    }
    return 0;
}
EOF
run() { echo "+ $*"; "$@" >"$T/out.log" 2>&1 || { cat "$T/out.log" >&2; die "test step failed: $*"; }; }
run "$NVCC" -ccbin gcc -arch="$ARCH" -O2 -c "$T/kernel.cu" -o "$T/kernel.o"
run gcc -std=c11 -Wall -Wextra -O2 -I"$HOME12/include" -c "$T/main.c" -o "$T/main.o"
run gcc "$T/main.o" "$T/kernel.o" -o "$T/cuda12-test" -L"$HOME12/lib64" -Wl,-rpath,"$HOME12/lib64" -lcudart -lnccl -lstdc++
if [[ -e "$HOME12/include/cublas_v2.h" ]]; then
    cat >"$T/blas.c" <<'EOF'
#include <stdio.h>
#include <cublas_v2.h>
int main(void) { int v = 0; cublasGetProperty(MAJOR_VERSION, &v); printf("cuBLAS major %d\n", v); return 0; }
EOF
    run gcc -std=c11 -Wall -I"$HOME12/include" "$T/blas.c" -o "$T/cublas-test" -L"$HOME12/lib64" -Wl,-rpath,"$HOME12/lib64" -lcublas
    "$T/cublas-test" || true
fi
cudart=$(ldd "$T/cuda12-test" | awk '/libcudart/ { print $3 }')
[[ "$cudart" == *libcudart.so.12 ]] || die "test binary resolves libcudart to '${cudart:-nothing}', expected .cuda12/home/lib64/libcudart.so.12"
echo "+ $T/cuda12-test (needs a GPU and driver; failure to find a device is fine)"
rc=0; "$T/cuda12-test" || rc=$?
echo "  (exit $rc)"

# ---- 5. report -----------------------------------------------------------------
nv_rel=$("$NVCC" --version | sed -n 's/.*release \([^,]*\), \(V[^ ]*\).*/\1 \2/p')
cat >"$C12/env.mk" <<EOF
# Written by scripts/cuda12.sh$([[ $HYBRID -eq 1 ]] && echo " --hybrid (compiler programs from $HOST_CUDA)")
CUDA_HOME := $HOME12
NVCC := $NVCC
EOF
echo "nvcc: $nv_rel$([[ $HYBRID -eq 1 ]] && echo " (host front end; CUDA 12.9 headers and libcudart.so.12)")"
echo ".cuda12 size: $(du -sh "$C12" | cut -f1)"
echo "CUDA_HOME=$HOME12"
echo "NVCC=$NVCC"
