#!/usr/bin/env bash
# tests/student_check.sh — what `make check` tells a student, end to end.
# Each scenario in tests/student/ replaces a lab's exercise file in a scratch
# copy of the tree; labcheck is built against it and its lines and exit
# status are compared with what the scenario must produce.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0

# scenario file, lab dir, expected exit status, then patterns the output must contain
scenario() {
    local file=$1 lab=$2 want_rc=$3
    shift 3
    local copy="$work/$(basename "$file" .cu)"
    mkdir -p "$copy"
    (cd "$root" && cp -r core labs tests bench mk "$copy"/)
    cp "$root/tests/student/$file" "$copy/labs/$lab/exercise.cu"
    if ! make -s -C "$copy" -f mk/build.mk -j2 VARIANT=sim BUILD=build build/bin/labcheck >"$copy/build.log" 2>&1; then
        echo "FAIL  $file: does not build"; sed -n '1,20p' "$copy/build.log"; fails=$((fails + 1)); return
    fi
    local out rc=0
    out=$("$copy/build/bin/labcheck" --timeout 60 2>&1) || rc=$?
    local ok=1
    [ "$rc" = "$want_rc" ] || { ok=0; echo "  exit status $rc, expected $want_rc"; }
    for p in "$@"; do
        grep -qE -- "$p" <<<"$out" || { ok=0; echo "  missing: $p"; }
    done
    if [ $ok = 1 ]; then echo "PASS  $file"; else echo "FAIL  $file"; echo "$out" | sed 's/^/  | /'; fails=$((fails + 1)); fi
}

scenario lab01_correct.cu 01_hello_threads 0 \
    '^PASS  01_hello_threads +grid_size' '^PASS  01_hello_threads +vector_add' '2 passed, 0 failed, 0 todo'
scenario lab01_no_tail_guard.cu 01_hello_threads 1 \
    '^PASS  01_hello_threads +grid_size' \
    '^FAIL  01_hello_threads +vector_add +vector_add\(n=1, block=256\) failed on the device: cudaErrorIllegalAddress .*kernel vector_add.*blockIdx \(0,0,0\), threadIdx \(1,0,0\).*out-of-bounds read of 4 bytes'
scenario lab01_floor_division.cu 01_hello_threads 1 \
    '^FAIL  01_hello_threads +grid_size +grid_size\(n=1, block=1\)|grid_size\(n=1, block=32\) = 0, but 1 blocks are needed' \
    '^FAIL  01_hello_threads +vector_add +c \(n=257, block=256\)\[256\] = NaN but expected 129.25: this element was never written'
scenario lab01_host_crash.cu 01_hello_threads 1 \
    '^FAIL  01_hello_threads +grid_size +the check crashed with signal 11' \
    '^TODO  01_hello_threads +vector_add'

echo "student scenarios: $((4 - fails)) passed, $fails failed"
[ $fails = 0 ]
