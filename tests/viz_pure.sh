#!/usr/bin/env bash
# tests/viz_pure.sh — the UI is a pure consumer (issue 13): what it shows
# arrives as trace events and notes, so no file of viz/ calls the CUDA
# runtime (cudaSetDevice, cudaMemGetInfo... : a call is "cudaXxx("), names
# the simulator (simt...), or asks the device seam for anything but what the
# world can do (pl_device_caps, pl_clock_name) and, for the message of a
# run stopped by force, which kernels still run (pl_device_describe_running:
# it reads, takes no lock, asks no device). The lab harness (labmain.*: the
# labs' main(), not the UI) is left out. First the check is shown to catch
# such a call, in a file made for it; then viz/ is checked.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fails=0
# the forbidden calls in the files given, as file:line: text (none: silent);
# the allowed names are taken out of each line first, and lines that begin a
# comment or continue one are skipped
offences() {
    grep -nHE '\bcuda[A-Z][A-Za-z0-9_]*[[:space:]]*\(|\bsimt[A-Za-z0-9_]*|\bpl_device_[a-z_]+' "$@" |
        grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/\*|\*)' |
        sed -E 's/\bpl_device_(caps|describe_running)\b//g' |
        grep -E '\bcuda[A-Z][A-Za-z0-9_]*[[:space:]]*\(|\bsimt[A-Za-z0-9_]*|\bpl_device_[a-z_]+'
}
export -f offences
check() {
    local what=$1
    shift
    if "$@"; then echo "PASS  $what"; else echo "FAIL  $what"; fails=$((fails + 1)); fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' '/* cudaMemGetInfo( in a comment is no call */' 'static void f(void)' '{' \
    '    size_t fr, tot;' '    cudaMemGetInfo(&fr, &tot);' '}' >"$tmp/a.c"
printf '%s\n' 'double g(void) { return pl_device_now(); }' >"$tmp/b.c"
printf '%s\n' '#include "simt/simt.h"' >"$tmp/c.c"
printf '%s\n' 'int h(void) { return pl_device_caps()->modeled; }' >"$tmp/d.c"
printf '%s\n' 'int k(void) { return pl_device_caps()->modeled ? pl_device_memory(0, 0, 0) : 0; }' >"$tmp/e.c"
check "the check finds a CUDA call (cudaMemGetInfo, a.c:5)" \
    bash -c '[ "$(offences "$1" | cut -d: -f2)" = 5 ]' _ "$tmp/a.c"
check "the check finds the modeled clock asked of the device (pl_device_now)" \
    bash -c '[ -n "$(offences "$1")" ]' _ "$tmp/b.c"
check "the check finds the simulator named (simt/simt.h)" \
    bash -c '[ -n "$(offences "$1")" ]' _ "$tmp/c.c"
check "the check finds pl_device_memory beside an allowed pl_device_caps" \
    bash -c '[ -n "$(offences "$1")" ]' _ "$tmp/e.c"
check "the check lets what the world can do through (pl_device_caps)" \
    bash -c '[ -z "$(offences "$1")" ]' _ "$tmp/d.c"
mapfile -t files < <(find "$root/viz" -name '*.[ch]' ! -name 'labmain.*' | sort)
check "viz/ is checked (${#files[@]} files, app.c among them)" \
    bash -c 'printf "%s\n" "$@" | grep -q "/viz/app.c$"' _ "${files[@]}"
found=$(offences "${files[@]}")
[ -n "$found" ] && sed "s|^$root/|  |" <<<"$found"
check "viz/ makes no CUDA call and asks no device (memory, the modeled clock: trace notes)" \
    test -z "$found"
echo "viz pure: $fails failed"
[ $fails = 0 ]
