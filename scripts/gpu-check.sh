#!/usr/bin/env bash
# scripts/gpu-check.sh — on a GPU machine with the CUDA toolkit but no package
# registry: unpack every .deb of .gpu-bundle/ (made by scripts/gpu-bundle.sh)
# into build/prefix/ (never into /), then run
#   make CUDA=1 DEPS_PREFIX=$PWD/build/prefix gpu-test    unit tests, lab checks
#   make CUDA=1 DEPS_PREFIX=$PWD/build/prefix gpu-labs    every lab, measured
#   make CUDA=1 DEPS_PREFIX=$PWD/build/prefix gpu-bench   the kernel benchmarks
#   make CUDA=1 DEPS_PREFIX=$PWD/build/prefix gpu-nccl-mpi  NCCL over MPI, one
#                 process: the id broadcast, ncclCommInitRank, an all-reduce
#                 (tests/nccl_id.sh 1; SKIPPED where Open MPI is not installed)
# with all output in build/gpu-report.log, and always write build/gpu-report.md
# (date, nvidia-smi summary, nvcc version, each step's result, log tail).
# NCCL and cuBLAS are taken from $CUDA_HOME (default /usr/local/cuda), else
# from the nvidia-nccl / nvidia-cublas Python wheels when those are installed.
#
# Usage: scripts/gpu-check.sh [--unpack-only] [--help]
#   --unpack-only  unpack and check build/prefix, skip the make steps
# Environment:
#   GPU_STEP_TIMEOUT  seconds allowed per make step (default 270; 0 = no limit)
#   MAKE              make program (default: make in PATH, else the bundled one)
# Exit status: 0 when unpacking and all four steps passed (or the last was
# skipped), else 1.

# shellcheck disable=SC2317  # write_report and on_exit run from the EXIT trap
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUNDLE="$ROOT/.gpu-bundle"
BUILD="$ROOT/build"
PREFIX="$BUILD/prefix"
LOG="$BUILD/gpu-report.log"
REPORT="$BUILD/gpu-report.md"
STEP_TIMEOUT="${GPU_STEP_TIMEOUT:-270}"
TAIL_LINES=150

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}

UNPACK_ONLY=0
for arg in "$@"; do
    case "$arg" in
        --unpack-only) UNPACK_ONLY=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "gpu-check.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done
[[ "$STEP_TIMEOUT" =~ ^[0-9]+$ ]] || { echo "gpu-check.sh: GPU_STEP_TIMEOUT='$STEP_TIMEOUT' is not a whole number of seconds" >&2; exit 2; }

mkdir -p "$BUILD"
: >"$LOG"
START=$(date -u +%Y-%m-%dT%H:%M:%SZ)

log() { printf '%s\n' "$*" | tee -a "$LOG"; }

UNPACK_STATUS="not run" UNPACK_NOTE=""
TEST_STATUS="not run" TEST_RC="-" TEST_SECS="-"
LABS_STATUS="not run" LABS_RC="-" LABS_SECS="-"
BENCH_STATUS="not run" BENCH_RC="-" BENCH_SECS="-"
MPI_STATUS="not run" MPI_RC="-" MPI_SECS="-"
[[ $UNPACK_ONLY -eq 1 ]] && { TEST_STATUS="skipped (--unpack-only)"; LABS_STATUS="$TEST_STATUS"; BENCH_STATUS="$TEST_STATUS"; MPI_STATUS="$TEST_STATUS"; }

# ---- report (always written, also on unexpected exit) ----------------------------
find_nvcc() {
    local c
    if [[ -n "${NVCC:-}" && -x "${NVCC}" ]]; then echo "$NVCC"; return 0; fi
    if c=$(command -v nvcc 2>/dev/null); then echo "$c"; return 0; fi
    for c in "${CUDA_HOME:-/nonexistent}/bin/nvcc" /usr/local/cuda/bin/nvcc; do
        [[ -x "$c" ]] && { echo "$c"; return 0; }
    done
    return 1
}

write_report() {
    local smi="" cudaver="" nvcc nvccver glibc
    if command -v nvidia-smi >/dev/null 2>&1; then
        smi=$(nvidia-smi --query-gpu=index,name,driver_version,memory.total,memory.used --format=csv,noheader 2>&1 || true)
        cudaver=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n1 || true)
    else
        smi="nvidia-smi not found"
    fi
    if nvcc=$(find_nvcc); then
        nvccver="$nvcc: $("$nvcc" --version 2>&1 | grep -i release | head -n1)"
    else
        nvccver="nvcc not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin)"
    fi
    glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null || echo "?")
    {
        echo "# paralab GPU report"
        echo
        echo "- started: $START, finished: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "- host: $(hostname 2>/dev/null || echo ?), $glibc, $(uname -srm)"
        echo "- git: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo 'no commit')$(git -C "$ROOT" status --porcelain 2>/dev/null | grep -q . && echo ' (dirty)')"
        echo
        echo "## GPU"
        echo
        echo "- driver CUDA version: ${cudaver:-?}"
        echo "- nvcc: $nvccver"
        echo
        echo '```'
        echo "index, name, driver_version, memory.total, memory.used"
        echo "$smi"
        echo '```'
        echo
        echo "## Steps"
        echo
        echo "| step | result | exit code | seconds |"
        echo "| --- | --- | --- | --- |"
        echo "| unpack .gpu-bundle -> build/prefix | $UNPACK_STATUS | - | - |"
        echo "| make CUDA=1 DEPS_PREFIX=build/prefix gpu-test | $TEST_STATUS | $TEST_RC | $TEST_SECS |"
        echo "| make CUDA=1 DEPS_PREFIX=build/prefix gpu-labs | $LABS_STATUS | $LABS_RC | $LABS_SECS |"
        echo "| make CUDA=1 DEPS_PREFIX=build/prefix gpu-bench | $BENCH_STATUS | $BENCH_RC | $BENCH_SECS |"
        echo "| make CUDA=1 DEPS_PREFIX=build/prefix gpu-nccl-mpi | $MPI_STATUS | $MPI_RC | $MPI_SECS |"
        [[ -n "$UNPACK_NOTE" ]] && { echo; echo "$UNPACK_NOTE"; }
        echo
        echo "## Log tail (last $TAIL_LINES lines of build/gpu-report.log)"
        echo
        echo '```'
        tail -n "$TAIL_LINES" "$LOG" 2>/dev/null || true
        echo '```'
    } >"$REPORT"
}
on_exit() {
    local rc=$?
    trap - EXIT
    if [[ $rc -ne 0 && "$UNPACK_STATUS" == "not run" ]]; then UNPACK_STATUS="FAIL"; fi
    write_report || echo "gpu-check.sh: could not write $REPORT" >&2
    echo "report: build/gpu-report.md, log: build/gpu-report.log"
    exit "$rc"
}
trap on_exit EXIT

fail_unpack() { UNPACK_STATUS="FAIL"; UNPACK_NOTE="unpack failed: $*"; log "gpu-check.sh: $*"; exit 1; }

# ---- 1. unpack the bundle -----------------------------------------------------------
log "== unpack .gpu-bundle -> build/prefix"
[[ -d "$BUNDLE" ]] || fail_unpack ".gpu-bundle/ not found; run scripts/gpu-bundle.sh on a machine with apt first"
debs=("$BUNDLE"/*.deb)
[[ -e "${debs[0]}" ]] || fail_unpack "no .deb files in .gpu-bundle/"
if [[ -f "$BUNDLE/SHA256SUMS" ]]; then
    (cd "$BUNDLE" && sha256sum --quiet -c SHA256SUMS) >>"$LOG" 2>&1 ||
        fail_unpack "checksum mismatch in .gpu-bundle/ (see build/gpu-report.log)"
fi

# extract DEB into DIR: dpkg-deb if present, else ar + tar, else python3
extract_deb() {
    local deb=$1 dir=$2 member
    if command -v dpkg-deb >/dev/null 2>&1; then
        dpkg-deb -x "$deb" "$dir"
    elif command -v ar >/dev/null 2>&1; then
        member=$(ar t "$deb" | grep '^data\.tar') || return 1
        ar p "$deb" "$member" | tar -x -C "$dir" -f - --no-same-owner
    elif command -v python3 >/dev/null 2>&1; then
        python3 - "$deb" "$dir" <<'PY'
import io, sys, tarfile
deb, dest = sys.argv[1], sys.argv[2]
with open(deb, 'rb') as f:
    assert f.read(8) == b'!<arch>\n', 'not an ar archive'
    while True:
        hdr = f.read(60)
        if len(hdr) < 60:
            sys.exit('no data.tar member in ' + deb)
        name, size = hdr[:16].decode().strip().rstrip('/'), int(hdr[48:58])
        data = f.read(size)
        if size % 2:
            f.read(1)
        if name.startswith('data.tar'):
            tarfile.open(fileobj=io.BytesIO(data)).extractall(dest)
            break
PY
    else
        echo "need dpkg-deb, ar or python3 to unpack .deb files" >&2
        return 1
    fi
}

glibc_need=$(sed -n 's/.*needs glibc >= \([0-9.]*\).*/\1/p' "$BUNDLE/MANIFEST" 2>/dev/null | head -n1 || true)
glibc_have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print $2 }' || true)
if [[ -n "$glibc_need" && -n "$glibc_have" ]] &&
   [[ "$(printf '%s\n%s\n' "$glibc_need" "$glibc_have" | sort -V | head -n1)" != "$glibc_need" ]]; then
    log "warning: the bundle's programs need glibc >= $glibc_need, this machine has $glibc_have (bundled tmux may not run)"
fi

rm -rf "$PREFIX"
mkdir -p "$PREFIX"
for deb in "${debs[@]}"; do
    extract_deb "$deb" "$PREFIX" >>"$LOG" 2>&1 || fail_unpack "could not unpack $(basename "$deb")"
done
log "unpacked ${#debs[@]} packages"

# Debian 12 packages still put some files in /lib, /bin, /sbin (usrmerge happens
# on the installed system): merge them under usr/ as the system would.
for top in lib bin sbin; do
    [[ -d "$PREFIX/$top" && ! -L "$PREFIX/$top" ]] || continue
    mkdir -p "$PREFIX/usr/$top"
    cp -a "$PREFIX/$top/." "$PREFIX/usr/$top/"
    rm -rf "${PREFIX:?}/$top"
    ln -s "usr/$top" "$PREFIX/$top"
done
# Absolute symlinks (e.g. libtinfo.so -> /lib/x86_64-linux-gnu/libtinfo.so.6) would
# point out of the prefix: make them relative, inside it.
while IFS= read -r -d '' l; do
    t=$(readlink "$l")
    [[ "$t" == /* ]] || continue
    t=${t#/}
    case "$t" in lib/*|bin/*|sbin/*) t="usr/$t" ;; esac
    [[ -e "$PREFIX/$t" ]] || continue
    ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$PREFIX/$t")" "$l"
done < <(find "$PREFIX" -type l -print0)

MULTIARCH=$(gcc -print-multiarch 2>/dev/null || true)
MULTIARCH=${MULTIARCH:-x86_64-linux-gnu}
LIBDIR="$PREFIX/usr/lib/$MULTIARCH"

need=(
    usr/include/CUnit/CUnit.h usr/include/jansson.h usr/include/ncursesw/curses.h
    "usr/lib/$MULTIARCH/libcunit.so" "usr/lib/$MULTIARCH/libjansson.so"
    "usr/lib/$MULTIARCH/libncursesw.so" "usr/lib/$MULTIARCH/libtinfo.so" usr/bin/tmux
)
for p in "${need[@]}"; do
    [[ -e "$PREFIX/$p" ]] || fail_unpack "build/prefix/$p missing after unpacking"
    log "  ok build/prefix/$p"
done

# Environment for the build: bundled tools after the system's own,
# pkg-config answering from the prefix's .pc files. The bundled libraries
# are not put on LD_LIBRARY_PATH (the system's own programs, a newer tmux
# say, would load them): our programs find them by their rpath, and the
# bundled tmux is run with them alone.
export PATH="$PATH:$PREFIX/usr/bin"
export TERMINFO_DIRS="${TERMINFO_DIRS:+$TERMINFO_DIRS:}$PREFIX/usr/share/terminfo:$PREFIX/usr/lib/terminfo:"
export PKG_CONFIG_LIBDIR="$LIBDIR/pkgconfig:$PREFIX/usr/share/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$PREFIX"

# Smoke test: the bundled headers and libraries compile, link and run.
if command -v gcc >/dev/null 2>&1; then
    t="$BUILD/prefix-smoke"
    mkdir -p "$t"
    cat >"$t/smoke.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <CUnit/CUnit.h>
#include <jansson.h>
#include <ncursesw/curses.h>
int main(void) {
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_cleanup_registry();
    json_t *j = json_pack("{s:i}", "ok", 1);
    char *s = json_dumps(j, JSON_COMPACT);
    printf("prefix smoke: CUnit ok, jansson %s %s, %s\n", JANSSON_VERSION, s, curses_version());
    free(s); json_decref(j);
    return 0;
}
EOF
    if gcc -std=c11 -I"$PREFIX/usr/include" "$t/smoke.c" -o "$t/smoke" \
            -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -lcunit -ljansson -lncursesw -ltinfo >>"$LOG" 2>&1 &&
       "$t/smoke" 2>&1 | tee -a "$LOG"; then
        :
    else
        fail_unpack "compiling/running a test program against build/prefix failed (see log)"
    fi
fi
# tmux: only the terminal tests use it, and gpu-check runs none: a warning.
if tmux_v=$(tmux -V 2>&1); then
    log "  $tmux_v ($(command -v tmux))"
elif tmux_v=$(LD_LIBRARY_PATH="$LIBDIR" "$PREFIX/usr/bin/tmux" -V 2>&1); then
    log "  $tmux_v (bundled; run it with LD_LIBRARY_PATH=$LIBDIR)"
else
    log "  warning: no tmux runs here ($tmux_v); gpu-check does not need it"
fi

# data/digits.csv from the bundled python3-sklearn when the tree lacks it.
if [[ ! -f data/digits.csv ]]; then
    gz=$(find "$PREFIX" -path '*sklearn/datasets/data/digits.csv.gz' -print -quit)
    if [[ -n "$gz" ]]; then
        mkdir -p data
        gzip -dc "$gz" >data/digits.csv
        log "  data/digits.csv taken from the bundled python3-sklearn"
    fi
fi
if [[ -f data/digits.csv ]]; then
    scripts/data.sh --verify 2>&1 | tee -a "$LOG" || fail_unpack "data/digits.csv does not verify"
else
    log "  note: data/digits.csv absent and not in the bundle"
fi
# NCCL and cuBLAS: the toolkit's own, else the Python wheels' (nvidia/nccl,
# nvidia/cublas under site-packages), made visible to the compiler, the linker
# and the loader.
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
SHIM="$BUILD/cuda-shim"
for pair in nccl:nccl.h cublas:cublas_v2.h; do
    lib=${pair%%:*} hdr=${pair#*:}
    if [[ -e "$CUDA_HOME/include/$hdr" ]] && compgen -G "$CUDA_HOME/lib64/lib$lib.so*" >/dev/null; then
        log "  $lib: $CUDA_HOME"
        continue
    fi
    so=$(find /opt /usr /root -name "lib$lib.so.[0-9]*" -path '*nvidia*' -print -quit 2>/dev/null || true)
    [[ -n "$so" ]] || { log "  $lib: not in $CUDA_HOME and no nvidia wheel holds it (the build will fail)"; continue; }
    mkdir -p "$SHIM/lib" "$SHIM/include"
    ln -sfn "$so" "$SHIM/lib/lib$lib.so"
    export LIBRARY_PATH="${LIBRARY_PATH:+$LIBRARY_PATH:}$SHIM/lib"
    sodir=$(dirname "$so")
    export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$sodir"
    # the header: beside the wheel's lib/, in CUDA_HOME, else the bundle's copy
    for h in "$(dirname "$(dirname "$so")")/include/$hdr" "$CUDA_HOME/include/$hdr" "$BUNDLE/include/$hdr"; do
        [[ -e "$h" ]] && break
    done
    [[ -e "$h" ]] || { log "  $lib: $so, but no $hdr (the build will fail)"; continue; }
    ln -sfn "$h" "$SHIM/include/$hdr"
    export CPATH="${CPATH:+$CPATH:}$SHIM/include"
    log "  $lib: $so (a wheel's), header $h"
done
UNPACK_STATUS="ok"

if [[ $UNPACK_ONLY -eq 1 ]]; then
    log "== --unpack-only: skipping make gpu-test, gpu-labs, gpu-bench and gpu-nccl-mpi"
    exit 0
fi

# ---- 2. the three make steps -----------------------------------------------------------
if [[ -z "${MAKE:-}" ]]; then
    MAKE=$(command -v make 2>/dev/null || echo "$PREFIX/usr/bin/make")
fi
run_step() {  # run_step TARGET -> sets STEP_RC, STEP_SECS
    local target=$1 t0 rc
    local -a cmd=("$MAKE" CUDA=1 "DEPS_PREFIX=$PREFIX" "$target")
    [[ "$STEP_TIMEOUT" -gt 0 ]] && command -v timeout >/dev/null 2>&1 &&
        cmd=(timeout --kill-after=10 "$STEP_TIMEOUT" "${cmd[@]}")
    log "== ${cmd[*]}"
    t0=$(date +%s)
    set +e
    "${cmd[@]}" 2>&1 | tee -a "$LOG"
    rc=${PIPESTATUS[0]}
    set -e
    STEP_RC=$rc
    STEP_SECS=$(( $(date +%s) - t0 ))
    log "== $target: exit $rc after ${STEP_SECS}s"
}
status_of() {
    case "$1" in
        0) echo "PASS" ;;
        124|137) echo "FAIL (timed out after ${STEP_TIMEOUT}s)" ;;
        *) echo "FAIL" ;;
    esac
}

run_step gpu-test
TEST_RC=$STEP_RC TEST_SECS=$STEP_SECS TEST_STATUS=$(status_of "$STEP_RC")
run_step gpu-labs
LABS_RC=$STEP_RC LABS_SECS=$STEP_SECS LABS_STATUS=$(status_of "$STEP_RC")
run_step gpu-bench
BENCH_RC=$STEP_RC BENCH_SECS=$STEP_SECS BENCH_STATUS=$(status_of "$STEP_RC")

mpi_log_start=$(wc -l <"$LOG" 2>/dev/null || echo 0)
run_step gpu-nccl-mpi
MPI_RC=$STEP_RC MPI_SECS=$STEP_SECS MPI_STATUS=$(status_of "$STEP_RC")
if [[ "$STEP_RC" -eq 0 ]] && tail -n +"$((mpi_log_start + 1))" "$LOG" | grep -q '^✗ skipped'; then
    MPI_STATUS="SKIPPED (see the log: no Open MPI or NCCL)"
elif [[ "$STEP_RC" -eq 0 ]] && tail -n +"$((mpi_log_start + 1))" "$LOG" | grep -q '^SKIP  ncclCommInitRank'; then
    MPI_STATUS="PASS (the id only: no GPU seen)"
fi

log "== gpu-test: $TEST_STATUS, gpu-labs: $LABS_STATUS, gpu-bench: $BENCH_STATUS, gpu-nccl-mpi: $MPI_STATUS"
[[ "$TEST_RC" -eq 0 && "$LABS_RC" -eq 0 && "$BENCH_RC" -eq 0 && "$MPI_RC" -eq 0 ]] || exit 1
exit 0
