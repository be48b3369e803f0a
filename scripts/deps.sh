#!/usr/bin/env bash
# scripts/deps.sh — report (and, as root, install) what paralab needs to build.
#
# Required (Debian packages): gcc make libc6-dev libncurses-dev libcunit1-dev
#   libjansson-dev tmux pkg-config ca-certificates; libxml2-utils (xmllint) and
#   python3-jsonschema, with which make test validates labcheck's reports for
#   autograders (tests/grade_reports.sh). Not in the student handout, which
#   has no tests: libcunit1-dev, libxml2-utils, python3-jsonschema
# Optional (reported, never fatal): nvcc, NCCL, cuBLAS, an NVIDIA GPU.
#
# For `make bench` only (--bench): Open MPI (openmpi-bin libopenmpi-dev), the
#   reference paralab-bench comm measures MPI_Allreduce against.
# For the MPI build (--mpi: `make mpi`, `make test`): the same Open MPI, whose
#   mpicc and mpirun build and launch worlds of several processes.
#
# For `make test` and `make fuzz` (--fuzz): clang and libclang-rt-dev
#   (libFuzzer's runtime, libclang_rt.fuzzer; on Debian 12 it pulls in clang
#   14's libclang-rt-14-dev), which the fuzz targets build with
#   (docs/fuzzing.md). Without --fuzz they are reported, never fatal.
#
# Usage: scripts/deps.sh [--check] [--bench] [--mpi] [--fuzz] [--help]
#   (no option)  report; if a required piece is missing, install it with apt-get
#                when running as root, else print the sudo command and exit 1
#   --check      report only; exit 1 if a required piece is missing
#   --bench      also require what the benchmarks need (Open MPI)
#   --mpi        also require what the MPI build needs (Open MPI)
#   --fuzz       also require what the fuzz targets need (clang, libFuzzer)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}

CHECK_ONLY=0
BENCH=0
MPI=0
FUZZ=0
for arg in "$@"; do
    case "$arg" in
        --check) CHECK_ONLY=1 ;;
        --bench) BENCH=1 ;;
        --mpi) MPI=1 ;;
        --fuzz) FUZZ=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "deps.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

# ✓/✗ when the locale can show them, ASCII otherwise.
charmap=$(locale charmap 2>/dev/null || true)
if [[ "$charmap" == "UTF-8" ]]; then OK="✓"; BAD="✗"; else OK="+"; BAD="-"; fi

MULTIARCH=$(gcc -print-multiarch 2>/dev/null || dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
CUDA_DIRS=()
[[ -n "${CUDA_HOME:-}" ]] && CUDA_DIRS+=("$CUDA_HOME")
[[ "${CUDA_HOME:-}" != "/usr/local/cuda" ]] && CUDA_DIRS+=("/usr/local/cuda")

MISSING_PKGS=()

ok()   { printf '%s %s\n' "$OK" "$*"; }
bad()  { printf '%s %s\n' "$BAD" "$*"; }

# ---- required ---------------------------------------------------------------
check_required() {
    MISSING_PKGS=()
    local cc="" ver
    if command -v cc >/dev/null 2>&1; then cc=cc; elif command -v gcc >/dev/null 2>&1; then cc=gcc; fi
    if [[ -n "$cc" ]]; then
        ver=$("$cc" --version 2>/dev/null | head -n1)
        ok "C compiler: $cc -> $ver"
    else
        bad "C compiler: no cc/gcc in PATH (package gcc)"; MISSING_PKGS+=(gcc)
    fi
    if [[ -f /usr/include/stdio.h ]]; then
        ok "C library headers: /usr/include/stdio.h"
    else
        bad "C library headers: /usr/include/stdio.h missing (package libc6-dev)"; MISSING_PKGS+=(libc6-dev)
    fi
    if command -v make >/dev/null 2>&1; then
        ok "make: $(make --version 2>/dev/null | head -n1)"
    else
        bad "make: not found (package make)"; MISSING_PKGS+=(make)
    fi
    if command -v pkg-config >/dev/null 2>&1; then
        ok "pkg-config: $(pkg-config --version 2>/dev/null)"
    else
        bad "pkg-config: not found (package pkg-config)"; MISSING_PKGS+=(pkg-config)
    fi
    if [[ -f /usr/include/ncursesw/curses.h ]] || pkg-config --exists ncursesw 2>/dev/null; then
        local nv; nv=$(pkg-config --modversion ncursesw 2>/dev/null || echo "header only")
        ok "ncursesw dev: /usr/include/ncursesw/curses.h ($nv)"
    else
        bad "ncursesw dev: /usr/include/ncursesw/curses.h missing (package libncurses-dev)"; MISSING_PKGS+=(libncurses-dev)
    fi
    if [[ -f /usr/include/CUnit/CUnit.h ]]; then
        ok "CUnit dev: /usr/include/CUnit/CUnit.h"
    elif [[ ! -d "$ROOT/tests/unit" ]]; then
        ok "CUnit dev: not needed (no unit tests here: the student handout)"
    else
        bad "CUnit dev: /usr/include/CUnit/CUnit.h missing (package libcunit1-dev)"; MISSING_PKGS+=(libcunit1-dev)
    fi
    if [[ -f /usr/include/jansson.h ]]; then
        local jv; jv=$(sed -n 's/^#define JANSSON_VERSION *"\(.*\)"/\1/p' /usr/include/jansson.h | head -n1)
        ok "jansson dev: /usr/include/jansson.h (${jv:-?})"
    else
        bad "jansson dev: /usr/include/jansson.h missing (package libjansson-dev)"; MISSING_PKGS+=(libjansson-dev)
    fi
    if command -v tmux >/dev/null 2>&1; then
        ok "tmux: $(tmux -V 2>/dev/null)"
    else
        bad "tmux: not found (package tmux)"; MISSING_PKGS+=(tmux)
    fi
    if command -v xmllint >/dev/null 2>&1; then
        ok "xmllint (make test: the JUnit reports): $(xmllint --version 2>&1 | head -n1)"
    else
        bad "xmllint (make test: the JUnit reports): not found (package libxml2-utils)"; MISSING_PKGS+=(libxml2-utils)
    fi
    if command -v python3 >/dev/null 2>&1 && python3 -c 'import jsonschema' 2>/dev/null; then
        ok "python3 jsonschema (make test: the Gradescope reports): $(python3 -c 'import importlib.metadata as m; print(m.version("jsonschema"))' 2>/dev/null || echo '?')"
    else
        bad "python3 jsonschema (make test: the Gradescope reports): not found (package python3-jsonschema)"; MISSING_PKGS+=(python3-jsonschema)
    fi
    if [[ $BENCH -eq 1 || $MPI -eq 1 ]]; then
        local why="benchmarks"
        [[ $MPI -eq 1 ]] && why="the MPI build"
        [[ $MPI -eq 1 && $BENCH -eq 1 ]] && why="the MPI build, benchmarks"
        if command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1 &&
           [[ -f /usr/lib/$MULTIARCH/openmpi/include/mpi.h || -n "$(mpicc --showme:incdirs 2>/dev/null)" ]]; then
            ok "Open MPI ($why): $(mpirun --version 2>/dev/null | head -n1)"
        else
            bad "Open MPI ($why): mpicc/mpirun not found (packages openmpi-bin libopenmpi-dev)"
            MISSING_PKGS+=(openmpi-bin libopenmpi-dev)
        fi
    fi
    [[ $FUZZ -eq 1 ]] && check_fuzz required
    if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
        ok "ca-certificates: /etc/ssl/certs/ca-certificates.crt"
    else
        bad "ca-certificates: /etc/ssl/certs/ca-certificates.crt missing (package ca-certificates)"; MISSING_PKGS+=(ca-certificates)
    fi
}

# The fuzz targets: clang and libFuzzer's runtime. check_fuzz required:
# what is missing is installed; otherwise only reported.
check_fuzz() {
    local need=$1 rt fz tail=""
    [[ $need == required ]] || tail="; needed by make test and make fuzz: scripts/deps.sh --fuzz"
    if ! command -v clang >/dev/null 2>&1; then
        bad "clang (fuzz targets): not found (packages clang libclang-rt-dev$tail)"
        [[ $need == required ]] && MISSING_PKGS+=(clang libclang-rt-dev)
        return 0
    fi
    rt=$(clang --print-runtime-dir 2>/dev/null || true)
    fz="$rt/libclang_rt.fuzzer-$(uname -m).a"
    if [[ -n "$rt" && -f "$fz" ]]; then
        ok "clang (fuzz targets): $(clang --version 2>/dev/null | head -n1), $fz"
    else
        bad "libFuzzer runtime: no libclang_rt.fuzzer-$(uname -m).a in ${rt:-the runtime folder of clang} (package libclang-rt-dev$tail)"
        [[ $need == required ]] && MISSING_PKGS+=(libclang-rt-dev)
    fi
    return 0
}

# ---- optional ---------------------------------------------------------------
find_nvcc() {
    local c
    if c=$(command -v nvcc 2>/dev/null); then echo "$c"; return 0; fi
    for d in "${CUDA_DIRS[@]}"; do
        [[ -x "$d/bin/nvcc" ]] && { echo "$d/bin/nvcc"; return 0; }
    done
    return 1
}

# first existing file among the arguments
first_file() { local f; for f in "$@"; do [[ -e "$f" ]] && { echo "$f"; return 0; }; done; return 1; }

find_lib() {  # find_lib NAME -> path of libNAME.so* in CUDA dirs, multiarch dir or ldconfig cache
    local name=$1 d f
    for d in "${CUDA_DIRS[@]/%//lib64}" "/usr/lib/$MULTIARCH" /usr/lib /usr/local/lib; do
        for f in "$d/lib$name.so" "$d"/lib"$name".so.*; do
            [[ -e "$f" ]] && { echo "$f"; return 0; }
        done
    done
    f=$(ldconfig -p 2>/dev/null | awk -v n="lib$name.so" 'index($1, n) == 1 { print $NF; exit }')
    [[ -n "$f" ]] && { echo "$f"; return 0; }
    return 1
}

check_optional() {
    local nvcc hdr lib ver
    [[ $FUZZ -eq 1 ]] || check_fuzz optional
    if nvcc=$(find_nvcc); then
        ver=$("$nvcc" --version 2>/dev/null | sed -n 's/.*release \([^,]*\), \(V[^ ]*\).*/\1 (\2)/p' | head -n1)
        ok "nvcc: $nvcc, CUDA ${ver:-unknown version}"
    else
        bad "nvcc: not found (optional; looked in PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin)"
    fi
    local -a inc=()
    for d in "${CUDA_DIRS[@]}"; do inc+=("$d/include"); done
    inc+=(/usr/include)
    if hdr=$(first_file "${inc[@]/%//nccl.h}"); then
        ver=$(awk '/^#define NCCL_(MAJOR|MINOR|PATCH) /{v=v (v==""?"":".") $3} END{print v}' "$hdr")
        if lib=$(find_lib nccl); then
            ok "NCCL: $hdr (${ver:-?}), $lib"
        else
            bad "NCCL: $hdr found but no libnccl.so (optional)"
        fi
    else
        bad "NCCL: nccl.h not found (optional)"
    fi
    if hdr=$(first_file "${inc[@]/%//cublas_v2.h}"); then
        if lib=$(find_lib cublas); then
            ok "cuBLAS: $hdr, $lib"
        else
            bad "cuBLAS: $hdr found but no libcublas.so (optional)"
        fi
    else
        bad "cuBLAS: cublas_v2.h not found (optional)"
    fi
    local gpus
    if command -v nvidia-smi >/dev/null 2>&1 && gpus=$(nvidia-smi -L 2>/dev/null) && [[ -n "$gpus" ]]; then
        while IFS= read -r g; do ok "GPU: $g"; done <<<"$gpus"
    else
        bad "GPU: none (nvidia-smi -L failed or absent; optional)"
    fi
}

report() {
    echo "paralab dependencies:"
    check_required
    check_optional
}

report
if [[ ${#MISSING_PKGS[@]} -eq 0 ]]; then
    echo "all required dependencies present"
    exit 0
fi

echo "missing required packages: ${MISSING_PKGS[*]}"
if [[ $CHECK_ONLY -eq 1 ]]; then
    echo "install with: sudo apt-get install -y --no-install-recommends ${MISSING_PKGS[*]}" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "deps.sh: apt-get not found; install the equivalents of: ${MISSING_PKGS[*]}" >&2
    exit 1
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "deps.sh: not root; run:" >&2
    echo "  sudo apt-get install -y --no-install-recommends ${MISSING_PKGS[*]}" >&2
    exit 1
fi

apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
}
lists_empty() {
    ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null
}

if lists_empty; then
    echo "+ apt-get update (package lists are empty)"
    apt-get update
fi
echo "+ apt-get install -y --no-install-recommends ${MISSING_PKGS[*]}"
if ! apt_install "${MISSING_PKGS[@]}"; then
    echo "+ install failed; apt-get update and retry"
    apt-get update
    if ! apt_install "${MISSING_PKGS[@]}"; then
        echo "deps.sh: apt-get install failed for: ${MISSING_PKGS[*]}" >&2
        exit 1
    fi
fi

echo
report
if [[ ${#MISSING_PKGS[@]} -ne 0 ]]; then
    echo "deps.sh: still missing after install: ${MISSING_PKGS[*]}" >&2
    exit 1
fi
echo "all required dependencies present"
