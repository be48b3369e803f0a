#!/usr/bin/env bash
# tests/link_check.sh BUILD_DIR — each program links only what it uses
# (mk/build.mk, one archive per layer in BUILD_DIR/lib): paralab-train
# carries no visualiser and needs no ncurses, tinfo or jansson; each lab
# binary holds its own lab's code and no other lab's; labcheck holds every
# lab's checks; every program calls the emulator's kernel-address hooks
# (core/simt/memcheck.c), not libasan's.
set -uo pipefail
build=${1:?usage: tests/link_check.sh BUILD_DIR (e.g. build/sim)}
bin=$build/bin
fails=0
ok() { echo "PASS  link: $1"; }
bad() { echo "FAIL  link: $1"; fails=$((fails + 1)); }

for a in libparalab.a libparalab-viz.a; do
    [ -s "$build/lib/$a" ] && ok "$build/lib/$a" || bad "no $build/lib/$a"
done

libs=$(ldd "$bin/paralab-train" 2>&1 | grep -oE 'lib(ncursesw?|tinfo|jansson)[^ ]*' | tr '\n' ' ')
viz=$(nm "$bin/paralab-train" | grep -cE ' [TtDdRrBb] pl_viz_')
if [ -z "$libs" ] && [ "$viz" = 0 ]; then
    ok "paralab-train: no ncurses, tinfo or jansson, no pl_viz_ symbol"
else
    bad "paralab-train links ${libs:-no UI library} and $viz pl_viz_ symbol(s)"
fi
# the visualiser's programs still have them
[[ $(ldd "$bin/lab01") == *libncursesw* ]] && ok "lab01 links ncursesw" || bad "lab01 does not link ncursesw"

labs=$(cd labs && ls -d [0-9][0-9]_* | cut -c1-2)
for n in $labs; do
    [ -x "$bin/lab$n" ] || { bad "no $bin/lab$n"; continue; }
    others=$(nm "$bin/lab$n" | awk '$2 ~ /^[TDRB]$/ {print $3}' | grep -E '^lab[0-9][0-9]_' | grep -v "^lab${n}_" | sort -u)
    own=$(nm "$bin/lab$n" | awk '$2 ~ /^[TDRB]$/ {print $3}' | grep -cE "^lab${n}_")
    if [ -z "$others" ] && [ "$own" -gt 0 ]; then
        ok "lab$n: its own lab's $own symbols, no other lab's"
    else
        bad "lab$n: $own of its own symbols; other labs': $(echo $others)"
    fi
done
missing= syms=$(nm "$bin/labcheck")
for n in $labs; do grep -qE " [TD] lab${n}_check$" <<<"$syms" || missing="$missing lab${n}_check"; done
[ -z "$missing" ] && ok "labcheck holds every lab's checks" || bad "labcheck lacks$missing"
# The kernel-address hooks kernel files call (__asan_load4_noabort...) are
# the emulator's in every program: under ASan libasan.so
# defines them too, and a program that linked only libasan's (Lab 02 did:
# core/simt/emu.c) checked no access against the allocations and counted
# nothing for simtMemStats. In build/sim no libasan competes.
nohooks=
for p in "$bin"/*; do
    [ -x "$p" ] || continue
    # a hook the program calls but does not define: a shared library's runs
    u=$(nm "$p" 2>/dev/null | grep -cE ' U __asan_(report_)?(load|store)(1|2|4|8|16|_?n|N)_noabort$')
    [ "$u" = 0 ] || nohooks="$nohooks $(basename "$p")"
done
[ -z "$nohooks" ] && ok "every program calls the emulator's kernel-address hooks" ||
    bad "kernel-address hooks left to libasan (the emulator's not linked) in:$nohooks"
echo "link check: $fails failed"
[ $fails = 0 ]
