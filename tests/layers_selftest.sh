#!/usr/bin/env bash
# tests/layers_selftest.sh — tests/layers.sh fails when it should: run on a
# copy of the tree where a viz file includes simt/simt.h, a kernel includes
# paralab/comm.h, or a file sits in no layer, it exits 1 naming each one
# (file:line, the header, its layer, the layers the file may see); on the
# copy as it is, it passes. And the compiler, given a layer's include folders
# as mk/build.mk gives them (mk/layers.mk), does not find what that layer may
# not see.
set -uo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "PASS  layers: $1"; }
bad() { echo "FAIL  layers: $1"; fail=1; }

# a copy of the sources (no .git: the checker lists the files itself)
git ls-files --cached --others --exclude-standard -z '*.c' '*.h' '*.cu' mk/layers.mk tests/layers.sh |
    tar --null -T - -cf - | tar -xf - -C "$tmp"

out=$(tests/layers.sh "$tmp" 2>&1) && rc=0 || rc=$?
[ "$rc" = 0 ] && ok "the copy as it is passes" || bad "the copy as it is: exit $rc: $out"

# the wrong-way arrows, one file each
sed -i '1i #include "simt/simt.h"' "$tmp/viz/grid.c"
sed -i '1i #include "paralab/comm.h"' "$tmp/core/kernels/reduce.cu"
mkdir -p "$tmp/newdir" && echo 'int x;' >"$tmp/newdir/x.c"
# and what is allowed: a lab sees everything, viz sees the CUDA runtime's types
sed -i '1i #include "simt/simt.h"' "$tmp/labs/registry.c"
sed -i '1i #include <cuda_runtime.h>' "$tmp/viz/model.c"
out=$(tests/layers.sh "$tmp" 2>&1) && rc=0 || rc=$?
want='core/kernels/reduce.cu:1: includes "paralab/comm.h" (core/include/paralab/comm.h, layer core); core/kernels/reduce.cu is in layer kernels, which may see: kernels dialect cudart
newdir/x.c: in no layer: add it to LAYER_FILES in mk/layers.mk
viz/grid.c:1: includes "simt/simt.h" (core/simt/include/simt/simt.h, layer simt); viz/grid.c is in layer viz, which may see: viz core kernels cudart
✗ layers: 3 include(s) or file(s) outside the layers they may see (mk/layers.mk)'
if [ "$rc" = 1 ] && [ "$out" = "$want" ]; then
    ok "viz including simt/simt.h, a kernel including paralab/comm.h, a file in no layer: exit 1, each named"
else
    bad "exit $rc (want 1), said:"$'\n'"$out"$'\n'"want:"$'\n'"$want"
fi

# the compiler sees only the layer's folders: viz finds paralab/trace.h and
# <cuda_runtime.h>, but not simt/simt.h; a kernel finds simt/kernel.h, not
# paralab/comm.h
inc() {
    make --no-print-directory -s -f mk/layers.mk -f - inc L="$1" <<'EOF'
inc: ; @echo $(call layer_inc,$(L))
EOF
}
cc_finds() { # layer, header: 0 when the compiler finds it with the layer's -I
    printf '#include "%s"\n' "$2" | ${CC:-cc} -std=c11 -fsyntax-only $(inc "$1") -x c - 2>/dev/null
}
viz_inc=$(inc viz)
if cc_finds viz paralab/trace.h && cc_finds viz cuda_runtime.h; then
    ok "viz is compiled with $viz_inc: paralab/trace.h and cuda_runtime.h are found"
else
    bad "viz ($viz_inc) does not find paralab/trace.h or cuda_runtime.h"
fi
if cc_finds viz simt/simt.h; then bad "viz ($viz_inc) finds simt/simt.h"; else ok "viz does not find simt/simt.h"; fi
if cc_finds kernels simt/kernel.h && ! cc_finds kernels paralab/comm.h; then
    ok "a kernel ($(inc kernels)) finds simt/kernel.h, not paralab/comm.h"
else
    bad "a kernel ($(inc kernels)): simt/kernel.h not found, or paralab/comm.h found"
fi
if cc_finds simt simt/simt.h && ! cc_finds simt paralab/trace.h; then
    ok "core/simt ($(inc simt)) finds simt/simt.h, not paralab/trace.h"
else
    bad "core/simt ($(inc simt)): simt/simt.h not found, or paralab/trace.h found"
fi
exit $fail
