#!/usr/bin/env bash
# tests/viz_lab03.sh BUILD_DIR — Lab 03's picture pane in a real terminal
# (tmux) and in plain text: the tree of block 0 as the kernel made it
# (recorded by the simulated GPU; the pictures' builder and renderer are
# core/picture_lab03.c and viz/picture_lab03.c).
#   * --no-viz: the interleaved tree (--kernel 1) printed under its step,
#     its first level s[t] += s[t+1] with 16 of 32 threads of every warp
#     active; the sequential one (--kernel 2) whole warps until 32 threads;
#     the shuffle version (--kernel 4) its three levels in shared memory
#     (the third into a register: v = s[t] + s[t+32]) and its lanes.
#   * 120x40, colour: the interleaved version's step (space pressed once
#     the lab waits for it): the pane, the header, the levels as they
#     unfold, the diverging warps, the legend.
#   * 80x24, NO_COLOR: the pane reduced (32 elements, said), the levels.
#   * LANG=C: the same in ASCII (+ < - .).
# The student's own kernel drawn (not the reference's): tests/student_check.sh
# (lab03_interleaved.cu). Skipped where the GPU records nothing (a real GPU).
# About 30 s.
set -uo pipefail
bin=$(cd "${1:-build/sim/bin}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
fails=0
sock="paralab-lab03-test-$$"
# shellcheck source=tests/tmux_lib.sh
. "$root/tests/tmux_lib.sh"
screen() { T capture-pane -p -t t; }
wait_for() { wait_screen t "$1"; }
start() { # command line, in a fresh window $2 x $3
    start_t "$2" "$3" "cd '$root' && $1; echo EXIT=\$?; sleep 60"
}

# --- plain text: the pictures under their steps
out=$("$bin/lab03" --no-viz --kernel 1 --size 4096 2>&1)
rc=$?
check "--no-viz --kernel 1: exit 0" test "$rc" = 0
if ! grep -q "values in shared memory" <<<"$out"; then
    echo "SKIP  no picture: this GPU records no kernel (pl_device_caps()->records is 0)"
    echo "viz lab03: $fails failed"
    [ $fails = 0 ]
    exit
fi
for want in '256 values in shared memory, 256 threads, 8 levels; the first 32 of 256 drawn' \
    'L0     [●+][◀<][●+][◀<][●+][◀<][●+][◀<]' \
    's\[t\] \+= s\[t\+1\]: 128 threads' 'warps 0-7 diverge: 16 of 32 active' \
    's\[t\] \+= s\[t\+128\]: 1 thread' 'warp 0 diverges: 1 of 32 active'; do
    check "--no-viz --kernel 1 (interleaved) prints: $want" grep -qE -- "$want" <<<"$out"
done
out=$("$bin/lab03" --no-viz --kernel 2 --size 4096 2>&1)
for want in 's\[t\] \+= s\[t\+128\]: 128 threads' 'no warp diverges' \
    's\[t\] \+= s\[t\+16\]: 16 threads' 'warp 0 diverges: 16 of 32 active'; do
    check "--no-viz --kernel 2 (sequential) prints: $want" grep -qE -- "$want" <<<"$out"
done
check "--no-viz --kernel 2: no warp diverges at the first three levels" bash -c \
    'test "$(grep -c "no warp diverges" <<<"$1")" = 3' _ "$out"
out=$("$bin/lab03" --no-viz --kernel 4 --size 4096 2>&1)
for want in '256 values in shared memory, 256 threads, 3 levels' \
    '32 lanes of warp 0, 5 shuffle levels' 'lane l reads l\+16: 16 lanes' \
    'lane l reads l\+1; 1 of 31 adds used'; do
    check "--no-viz --kernel 4 (shuffles) prints: $want" grep -qE -- "$want" <<<"$out"
done

# --- 120x40, colour: the interleaved version's step (the pane beside the
# timeline, 58 columns: 32 elements, each level's text under it)
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/lab03' --step --kernel 1 --size 4096" 120 40
check "120x40: step 1/2 waits for space" wait_for "step 1/2 | step (space"
check "120x40: no picture before the kernel's step" bash -c '! grep -qF "tree of block 0" <<<"$1"' _ "$(screen)"
T send-keys -t t Space
check "120x40: the picture pane, titled with the kernel" wait_for "┌ tree of block 0: interleaved ─"
check "120x40: the header, the fold said" wait_for "│256 values, 256 threads, 8 levels; first 32 drawn"
check "120x40: the levels unfold to the last" wait_for \
    "│       s[t] += s[t+128]; warp 0 diverges: 1 of 32 active"
s=$(screen)
check "120x40: the values" has "$s" "│values ○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○ "
check "120x40: the first level, every pair" has "$s" "│L0     ●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀ "
check "120x40: its active threads" has "$s" "│  thr  █·█·█·█·█·█·█·█·█·█·█·█·█·█·█·█· "
check "120x40: its diverging warps" has "$s" \
    "│       s[t] += s[t+1]; warps 0-7 diverge: 16 of 32 active"
check "120x40: the second level's connectors" has "$s" "│L1     ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ ●─◀ "
check "120x40: the legend" has "$s" "│● adds into  ◀▶ read  ─ add  · not added  × unused  █ adds│"
T send-keys -t t q
check "120x40: q exits 0" wait_for "EXIT=0"

# --- 120x40: the shuffle version, two pictures: its shared levels, its lanes
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/lab03' --step --kernel 4 --size 4096" 120 40
check "120x40 --kernel 4: step 1/2 waits for space" wait_for "step 1/2 | step (space"
T send-keys -t t Space
check "120x40 --kernel 4: the lanes unfold to the last" wait_for \
    "│       lane l reads l+1; 1 of 31 adds used"
s=$(screen)
check "120x40 --kernel 4: the shared levels, whole warps" has "$s" \
    "│       s[t] += s[t+32]: 32 threads; no warp diverges"
check "120x40 --kernel 4: the lanes' picture below" has "$s" "─ shuffles of block 0: block_sum_shuffle ─"
check "120x40 --kernel 4: the first shuffle" has "$s" "│L0     ●●●●●●●●●●●●●●●●◀◀◀◀◀◀◀◀◀◀◀◀◀◀◀◀ "
check "120x40 --kernel 4: the lanes whose adds feed nothing" has "$s" "│L1     ●●●●●●●●◀◀◀◀◀◀◀◀×××××××× "
T send-keys -t t q
check "120x40 --kernel 4: q exits 0" wait_for "EXIT=0"

# --- 80x24, no colour: reduced
start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab03' --step --kernel 1 --size 4096" 80 24
check "80x24: step 1/2 waits for space" wait_for "step 1/2 | step (space"
T send-keys -t t Space
check "80x24: the first level unfolds" wait_for "│L0     ●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀●◀ s[t] += s[t+1]; warps 0-7: 16/32 activ"
check "80x24: the pane folds to 32 elements, saying so" wait_for \
    "│values ○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○○ first 32 of 256"
check "80x24: the levels that do not fit, counted" wait_for "│+5 more levels (a taller pane shows them)"
T send-keys -t t q
check "80x24: q exits 0" wait_for "EXIT=0"

# --- ASCII
start "TERM=xterm LANG=C NO_COLOR=1 '$bin/lab03' --step --kernel 1 --size 4096" 80 24
check "ASCII: step 1/2 waits for space" wait_for "step 1/2 | step (space"
T send-keys -t t Space
check "ASCII: the first level in + and <" wait_for "|L0     +<+<+<+<+<+<+<+<+<+<+<+<+<+<+<+< s[t] += s[t+1]"
check "ASCII: the second in + - <" wait_for "|L1     +-< +-< +-< +-< +-< +-< +-< +-<  s[t] += s[t+2]"
check "ASCII: no character past 0x7e" bash -c '! LC_ALL=C grep -q "[^ -~]" <<<"$1"' _ "$(screen)"
T send-keys -t t q
check "ASCII: q exits 0" wait_for "EXIT=0"

echo "viz lab03: $fails failed"
[ $fails = 0 ]
