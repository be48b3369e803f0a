#!/usr/bin/env bash
# tests/viz_lab01.sh BUILD_DIR — Lab 01's pictures (the picture pane:
# blocks on SMs, which thread wrote which element), drawn from the
# simulated GPU's record of the lab's own vector add kernel:
#   * as text (--no-viz): the 4 blocks of 256 threads on 4 of the H100's
#     132 SMs in 1 wave, the element map's 4 blocks and 24 idle tail
#     threads, no store past the end; --size 10 --block 4 cell by cell;
#     --size 600000: 2344 blocks in 3 waves of at most 1056;
#   * in tmux at 120x40 (UTF-8, colour), stepped with space only once the
#     lab waits for it ("| step (space"): the pane at step 2, its lines;
#     at 80x24 with NO_COLOR: both pictures side by side in their compact
#     form; at 80x24 with LANG=C: the same in ASCII;
#   * a student's kernel without its bound check (tests/student/
#     lab01_no_tail_guard.cu in a scratch copy of the tree, as
#     tests/student_check.sh swaps a student's exercise in): the tail's 24
#     stores past element 999 marked '!' (text, and the pane at 120x40),
#     while the run on exact-size arrays still stops at the fault.
# About 30 s (most of it building the scratch copy's lab01).
set -uo pipefail
bin=$(cd "${1:-build/sim/bin}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
fails=0
sock="paralab-lab01-test-$$"
# shellcheck source=tests/tmux_lib.sh
. "$root/tests/tmux_lib.sh"
screen() { T capture-pane -p -t t; }
wait_for() { wait_screen t "$1"; }
start() { # command line, in a fresh window $2 x $3
    start_t "$2" "$3" "cd '$root' && $1; echo EXIT=\$?; sleep 60"
}
# $1 holds every line of $2 (a block of text), each whole
lines() {
    local text=$1 l
    while IFS= read -r l; do
        grep -qxF -- "$l" <<<"$text" || { echo "  missing line: '$l'"; return 1; }
    done <<<"$2"
}
copy=$(mktemp -d)
trap 'T kill-server 2>/dev/null; rm -rf "$copy"' EXIT

# --- as text
out=$("$bin/lab01" --no-viz 2>&1)
check "--no-viz: exit 0" test $? = 0
check "--no-viz: the blocks on SMs, under step 1's narration and before step 2's line" lines "$out" "\
  blocks on SMs
  4 blocks x 256 threads: 1 wave
  132 SMs x 8 per SM = 1056 blocks at once
  block    0   1   2   3
  SM       0   1   2   3
  wave     0   0   0   0
  0 wave 0: blocks 0-3 on 4 SMs, up to 1 per SM"
check "--no-viz: the element map, 2 elements a cell, the 24 tail threads idle (-)" lines "$out" "\
  which thread wrote which element
  1000 elements; 1 cell = 2 elements
     0 0000000000000000000000000000000000000000000000000000000000000000000000
   140 0000000000000000000000000000000000000000000000000000000000111111111111
   280 1111111111111111111111111111111111111111111111111111111111111111111111
   420 1111111111111111111111111111111111111111111111222222222222222222222222
   560 2222222222222222222222222222222222222222222222222222222222222222222222
   700 2222222222222222222222222222222222333333333333333333333333333333333333
   840 3333333333333333333333333333333333333333333333333333333333333333333333
   980 3333333333------------
  0-9a-z: its block b; its thread b x 256 + threadIdx.x
  - tail: 24 of 1024 threads stored nothing
  ! past the end: none (no store at element 1000 or later)
  ? never written: 0 elements"
check "--no-viz: step 2 says where the pictures came from" lines "$out" "\
    pictures: the kernel ran once more, recorded, on arrays of 1024 elements
    (room for every thread): a store past element 999 shows as ! there"
check "--no-viz: the pictures come before step 2's line, the steps still 4" bash -c '
    a=$(grep -n "^  blocks on SMs$" <<<"$1" | cut -d: -f1); b=$(grep -n "^\[2\] vector add" <<<"$1" | cut -d: -f1)
    [ -n "$a" ] && [ -n "$b" ] && [ "$a" -lt "$b" ] && [ "$(grep -c "^\[[0-9]\]" <<<"$1")" = 4 ]' _ "$out"
out=$("$bin/lab01" --no-viz --size 10 --block 4 2>&1)
check "--size 10 --block 4: every element, the 2 tail threads" lines "$out" "\
  3 blocks x 4 threads: 1 wave
  10 elements; 1 cell = 1 element
   0 0000111122--
  - tail: 2 of 12 threads stored nothing"
out=$("$bin/lab01" --no-viz --size 600000 2>&1)
check "--size 600000: 2344 blocks in 3 waves" lines "$out" "\
  2344 blocks x 256 threads: 3 waves
  132 SMs x 8 per SM = 1056 blocks at once
  1 cell = 5 blocks (the first one's wave)
  0 wave 0: blocks 0-1055 on 132 SMs, up to 8 per SM
  1 wave 1: blocks 1056-2111 on 132 SMs, up to 8 per SM
  2 wave 2: blocks 2112-2343 on 132 SMs, up to 2 per SM"
check "--size 600000: the wave boundaries in the cells (block 1055 | 1056, 2111 | 2112)" lines "$out" "\
  1050 0011111111111111111111111111111111111111111111111111111111111111111111
  2100 1112222222222222222222222222222222222222222222222"

# --- 120x40, UTF-8, colour: the pane at step 2
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/lab01' --step" 120 40
check "120x40: step 1 waits for space" wait_for "step 1/4 | step (space"
s=$(screen)
check "120x40: step 1: no picture yet" has "$s" "│no picture yet"
T send-keys -t t Space
check "120x40: space: step 2" wait_for "step 2/4 | step (space"
check "120x40: step 2: the blocks' picture" wait_for "│0 wave 0: blocks 0-3 on 4 SMs, up to 1 per SM"
# a frame may show a step's narration before its last events and notes (the
# UI draws what has arrived): wait for the element map, noted after the blocks
wait_for "│! past the end: none (no store at element 1000 or later)  │" >/dev/null
s=$(screen)
check "120x40: the pane's title and the element map's rule" bash -c \
    'grep -qF "┌ blocks on SMs ─" <<<"$1" && grep -qF "│─ which thread wrote which element ─" <<<"$1"' _ "$s"
check "120x40: blocks, SMs, waves" bash -c '
    grep -qF "│4 blocks x 256 threads: 1 wave                            │" <<<"$1" &&
    grep -qF "│132 SMs x 8 per SM = 1056 blocks at once                  │" <<<"$1" &&
    grep -qF "│block    0   1   2   3                                    │" <<<"$1" &&
    grep -qF "│SM       0   1   2   3                                    │" <<<"$1" &&
    grep -qF "│wave     0   0   0   0                                    │" <<<"$1"' _ "$s"
check "120x40: the element map, 3 elements a cell, the tail" bash -c '
    grep -qF "│1000 elements; 1 cell = 3 elements                        │" <<<"$1" &&
    grep -qF "│   0 00000000000000000000000000000000000000000000000000   │" <<<"$1" &&
    grep -qF "│ 750 22222233333333333333333333333333333333333333333333   │" <<<"$1" &&
    grep -qF "│ 900 3333333333333333333333333333333333--------           │" <<<"$1" &&
    grep -qF "│- tail: 24 of 1024 threads stored nothing                 │" <<<"$1" &&
    grep -qF "│! past the end: none (no store at element 1000 or later)  │" <<<"$1"' _ "$s"
T send-keys -t t Space
check "120x40: step 3 shows step 3's pane (no picture noted: step 2's, titled so)" wait_for "blocks on SMs (step 2)"
T send-keys -t t q
check "120x40: q exits 0" wait_for "EXIT=0"

# --- 80x24, no colour: side by side, compact
start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab01' --step" 80 24
wait_for "step 1/4 | step (space" >/dev/null
T send-keys -t t Space
check "80x24 NO_COLOR: step 2" wait_for "step 2/4 | step (space"
check "80x24 NO_COLOR: the pictures side by side" wait_for "┌ blocks on SMs ───"
wait_for "│0 wave 0: blocks 0-3 on 4 SMs         │? never written: 0                     │" >/dev/null
s=$(screen)
check "80x24 NO_COLOR: both whole, compact" bash -c '
    grep -qF "│4 blocks x 256 threads: 1 wave        │1000 elements; 1 cell = 18 elements    │" <<<"$1" &&
    grep -qF "│0 wave 0: blocks 0-3 on 4 SMs         │? never written: 0                     │" <<<"$1" &&
    grep -qF "│0-9a-z: the block; - tail: 24 idle" <<<"$1" && grep -qF "which thread wrote which element" <<<"$1" &&
    ! grep -qF "enlarge the terminal" <<<"$1"' _ "$s"
T send-keys -t t q
check "80x24 NO_COLOR: q exits 0" wait_for "EXIT=0"

# --- 80x24, ASCII
start "TERM=xterm LANG=C NO_COLOR=1 '$bin/lab01' --step" 80 24
wait_for "step 1/4 | step (space" >/dev/null
T send-keys -t t Space
check "80x24 LANG=C: step 2" wait_for "step 2/4 | step (space"
check "80x24 LANG=C: ASCII borders and marks" wait_for "+ blocks on SMs ---"
wait_for "|! past the end: none                   |" >/dev/null
s=$(screen)
check "80x24 LANG=C: the compact pictures in ASCII" bash -c '
    grep -qF "|SM       0   1   2   3                |" <<<"$1" &&
    grep -qF "|! past the end: none                   |" <<<"$1" &&
    ! LC_ALL=C grep -q "[^ -~]" <<<"$1"' _ "$s"
T send-keys -t t q
check "80x24 LANG=C: q exits 0" wait_for "EXIT=0"

# --- 80x24, ASCII, 977 blocks in 4 waves: still side by side, compact, nothing cut; no
# timeline box without room for a lane
start "TERM=xterm LANG=C LC_ALL=C '$bin/lab01' --step --size 1000003 --block 1024" 80 24
wait_for "step 1/4 | step (space" >/dev/null
T send-keys -t t Space
check "80x24 977 blocks: step 2" wait_for "step 2/4 | step (space"
check "80x24 977 blocks: side by side" wait_for \
    "|977 blocks x 1024 threads: 4 waves    |1000003 elements; 1 cell = 16950       |"
# the waves light up one by one: the line once the last is lit
check "80x24 977 blocks: all 4 waves lit" wait_for "|waves 0-3 lit (digit: wave)           |"
s=$(screen)
check "80x24 977 blocks: the waves in a line, nothing cut" bash -c '
    grep -qF "|waves 0-3 lit (digit: wave)           |" <<<"$1" &&
    ! grep -qF "enlarge" <<<"$1" && ! grep -qF "cut" <<<"$1" && ! grep -qF "+ timeline" <<<"$1"' _ "$s"
T send-keys -t t q
check "80x24 977 blocks: q exits 0" wait_for "EXIT=0"

# --- a student's kernel without its bound check, in a scratch copy
(cd "$root" && cp -r core viz tools labs tests bench mk "$copy"/)
cp "$root/tests/student/lab01_no_tail_guard.cu" "$copy/labs/01_hello_threads/exercise.cu"
if make -s -C "$copy" -f mk/build.mk -j2 VARIANT=sim BUILD=build build/bin/lab01 >"$copy/build.log" 2>&1; then
    out=$(cd "$copy" && build/bin/lab01 --no-viz 2>&1)
    check "no bound check: the run stops at the fault, as before (exit 1)" bash -c \
        'test "$1" = 1 && grep -qE "^\[2\] vector add c\[i\] = a\[i\] \+ b\[i\] failed: cudaErrorIllegalAddress" <<<"$2"' \
        _ "$(cd "$copy" && build/bin/lab01 --no-viz >/dev/null 2>&1; echo $?)" "$out"
    check "no bound check: the element map marks the tail's 24 stores past the end (!)" lines "$out" "\
   980 3333333333!!!!!!!!!!!!
  - tail: 0 of 1024 threads stored nothing
  ! past the end: 24 stores, the first by thread 1000"
    start "TERM=xterm-256color LANG=C.UTF-8 '$copy/build/bin/lab01' --step" 120 40
    wait_for "step 1/4 | step (space" >/dev/null
    T send-keys -t t Space
    # the fault ends the steps: step 2 is the last ("done")
    check "no bound check, 120x40: step 2, the last" wait_for "step 2/4 | done"
    # 3 elements a cell: 999 alone in its cell, 24 stores in 8 cells
    check "no bound check, 120x40: the pane's ! cells and line" wait_for \
        "│ 900 $(printf '3%.0s' $(seq 34))!!!!!!!!           │"
    check "no bound check, 120x40: the stores past the end" has "$(screen)" \
        "│! past the end: 24 stores, the first by thread 1000"
    T send-keys -t t q
    wait_for "EXIT=" >/dev/null
else
    echo "FAIL  no bound check: the scratch copy does not build"; sed -n '1,20p' "$copy/build.log"
    fails=$((fails + 1))
fi

echo "viz lab01: $fails failed"
[ $fails = 0 ]
