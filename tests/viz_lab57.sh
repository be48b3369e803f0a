#!/usr/bin/env bash
# tests/viz_lab57.sh BUILD_DIR — Labs 05-07's ideas on the screen, in a real
# terminal (tmux), stepped as a student steps (space only once the lab waits
# for it: "| step (space"):
#   Lab 05: the timeline puts one stream (step 2) and the chunks over four
#     streams (step 3) one above the other, each from its own start on one
#     time scale, named with their times and the speed-up; the legend of the
#     glyphs and of the lanes (120x40, UTF-8, colour; 80x24, LANG=C,
#     NO_COLOR: ASCII only, the legend on the border).
#   Lab 06: the topology pane's table of ring steps: which segment crossed
#     which link at each step of the reduce-scatter (step 6) and of the
#     all-reduce (step 7), as the engine recorded them (120x40; at 80x24
#     without colour, the reduce-scatter's under the paged links).
#   Lab 07: the gradient buckets of the last backward, each filling while
#     backward runs and then all-reduced, the first all-reduce starting
#     before backward ends; with --no-overlap, after it (120x40; 80x24
#     ASCII without colour).
# Watchdogs count CPU time (tests/tmux_lib.sh), never wall time.
set -uo pipefail
unset LC_ALL # each lab gets its locale from LANG (start); ugrep and uwc read UTF-8
bin=$(cd "${1:-build/sim/bin}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
fails=0
sock="paralab-lab57-test-$$"
# shellcheck source=tests/tmux_lib.sh
. "$root/tests/tmux_lib.sh"
screen() { T capture-pane -p -t t; }
wait_for() { wait_screen t "$1"; }
start() { # command line, in a fresh window $2 x $3
    start_t "$2" "$3" "cd '$root' && $1; echo EXIT=\$?; sleep 60"
}
# step_to K N: space until step K of N shows, each once the lab waits for it
step_to() {
    local k
    for ((k = 2; k <= $1; k++)); do
        wait_for "step $((k - 1))/$2 | step (space" >/dev/null
        T send-keys -t t Space
    done
    wait_for "step $1/$2 | step (space" >/dev/null
}
# grep and wc on UTF-8 text whatever the caller's locale (the labs get theirs from start)
ugrep() { LC_ALL=C.UTF-8 grep "$@"; }
uwc() { LC_ALL=C.UTF-8 wc "$@"; }
export -f ugrep uwc
# first N: each line's first N characters (UTF-8: cut -c counts bytes)
first() { PYTHONIOENCODING=utf-8 python3 -c 'import sys; [print(l.rstrip("\n")[:int(sys.argv[1])]) for l in sys.stdin]' "$1"; }
ascii_only() { ! LC_ALL=C grep -q '[^ -~]' <<<"$1"; }
# col ROW_TEXT GLYPH: the 0-based character column of GLYPH's first (or,
# with a third argument, last) occurrence in the row, -1 if none
col() {
    PYTHONIOENCODING=utf-8 python3 -c '
import sys
row, g, last = sys.argv[1], sys.argv[2], len(sys.argv) > 3
print(row.rfind(g) if last else row.find(g))' "$@"
}

# --- Lab 05 at 120x40
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/lab05' --step" 120 40
step_to 3 4
# a frame may show a step's narration before its last events (Lab 06's step
# 7 below): wait for the row they name, then look at the whole
wait_for "│step 3: 4 streams, 8 kernels, 399.9 us, 1.69x as fast as step 2" >/dev/null
s=$(screen)
check "lab05: the one-stream run, named" has "$s" "│step 2: 1 stream, 1 kernel, 674.4 us"
check "lab05: the chunked run, named with its speed-up" has "$s" \
    "│step 3: 4 streams, 8 kernels, 399.9 us, 1.69x as fast as step 2"
check "lab05: the title says each step is drawn from its start" has "$s" \
    "timeline (modeled clock): each step from its start, 674.4 us wide"
one=$(grep -A1 "step 2: 1 stream" <<<"$s" | tail -1)
check "lab05: one stream's lane: copy, kernel, copy, across the width" \
    bash -c 'ugrep -qE "^│    s2  ▒{50,}█+▒{50,}│" <<<"$1"' _ "$one"
lanes=$(grep -A4 "step 3: 4 streams" <<<"$s" | tail -4)
check "lab05: four chunk lanes, s2 to s5, each with its kernels" \
    bash -c '[ "$(ugrep -cE "^│    s[2-5]  [▒·]*█" <<<"$1")" = 4 ]' _ "$lanes"
check "lab05: the chunks end at 59 % of the width (399.9 of 674.4 us)" \
    bash -c '[ "$(ugrep -oE "^│    s5  [▒█·]+" <<<"$1" | sed "s/^│    s5  //" | uwc -m)" -eq 66 ]' _ "$lanes"
check "lab05: the glyphs' legend" has "$s" "│█ kernel  ▒ copy  · idle"
check "lab05: the lanes' legend" has "$s" "│s0 the default stream, s1.. the streams made"
check "lab05: the axis, 0 to the longer run" bash -c 'grep -qE "│        0 ns +674.4 us│" <<<"$1"' _ "$s"
T send-keys -t t q
wait_for "EXIT=0" >/dev/null

# --- Lab 05 with chunks on one stream: slower, and said so (never "0.91x as fast")
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/lab05' --step --chunks 8 --streams 1" 120 40
step_to 3 4
wait_for "step 3: 1 stream, 8 kernels, " >/dev/null
s=$(screen)
check "lab05 --streams 1: the chunked run, slower than step 2" bash -c 'grep -qE "step 3: 1 stream, 8 kernels, [0-9.]+ us, 1\.[0-9]{2}x slower than step 2" <<<"$1" && ! grep -q "x as fast" <<<"$1"' _ "$s"
T send-keys -t t q
wait_for "EXIT=0" >/dev/null

# --- Lab 05 at 80x24, ASCII, no colour
start "TERM=xterm LANG=C NO_COLOR=1 '$bin/lab05' --step" 80 24
step_to 3 4
wait_for "399.9 us, 1.69x as fast" >/dev/null
s=$(screen)
check "lab05 80x24: both runs named" bash -c 'grep -q "|step 2: 1 stream" <<<"$1" && grep -q "step 3: 4 streams, .*399.9 us, 1.69x as fast" <<<"$1"' _ "$s"
check "lab05 80x24: a chunk's kernel (#) between its copies (=)" has "$s" "==#=="
check "lab05 80x24: the legend on the border" has "$s" "+ # kernel  = copy  . idle -"
check "lab05 80x24: ASCII only" ascii_only "$s"
T send-keys -t t Space
wait_for "the run is over: q quits" >/dev/null
s=$(screen)
check "lab05 80x24: step 4 (a longer narration): one row names both runs" has "$s" \
    "|step 2: 1 stream, 674.4 us; step 3: 4 streams, 399.9 us, 1.69x as fast"
check "lab05 80x24: step 4, every lane, each with its step" bash -c '[ "$(grep -cE "^[|][23]: s[2-5]   " <<<"$1")" = 5 ]' _ "$s"
T send-keys -t t q
wait_for "EXIT=0" >/dev/null

# --- Lab 06 at 120x40: the reduce-scatter's steps, then the all-reduce's
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/lab06' --step" 120 40
step_to 6 9
wait_for "│ 3 + c1  c2  c3  c0" >/dev/null # the step's events drawn (step 7 says why)
s=$(screen)
check "lab06: the reduce-scatter's table, under the ring" has "$s" "│reduce_scatter: cK a>b +add =copy"
check "lab06: a column per link" has "$s" "│step 0>1 1>2 2>3 3>0"
check "lab06: step 1, each rank's segment to its successor" has "$s" "│ 1 + c3  c0  c1  c2"
check "lab06: step 2, the sums passed on" has "$s" "│ 2 + c2  c3  c0  c1"
check "lab06: step 3" has "$s" "│ 3 + c1  c2  c3  c0"
check "lab06: the ring above it" has "$s" "r3"
# the exercise teaches the engine's numbering: at step s rank r sends
# segment (r - s - 1), so rank 0 first sends c3 on 0>1, as the table says
check "lab06: the exercise's text numbers the segments as the table" bash -c \
    'grep -q "sends segment (r − s − 1)" "$1/labs/06_collectives/README.md" && grep -q "sends segment (r - s - 1)" "$1/labs/06_collectives/exercise.c" && grep -q "lab06_mod(r - s - 1, n), in = lab06_mod(r - s - 2, n)" "$1/labs/06_collectives/solution.c"' _ "$root"
T send-keys -t t Space
wait_for "step 7/9 | step (space" >/dev/null
# a frame may show a step's narration before its last events (the UI draws
# what has arrived): wait for the table's last row, then look at the whole
wait_for "│ 6 = c2  c3  c0  c1" >/dev/null
s=$(screen)
check "lab06 step 7: the all-reduce's six steps: reduce-scatter (+)" has "$s" "│ 3 + c1  c2  c3  c0"
check "lab06 step 7: then all-gather (=)" has "$s" "│ 4 = c0  c1  c2  c3"
check "lab06 step 7: its last step" has "$s" "│ 6 = c2  c3  c0  c1"
T send-keys -t t q
wait_for "EXIT=0" >/dev/null

# --- Lab 06 at 80x24 without colour
start "TERM=xterm LANG=C NO_COLOR=1 '$bin/lab06' --step" 80 24
step_to 6 9
wait_for "| 3 + c1  c2  c3  c0" >/dev/null
s=$(screen)
check "lab06 80x24: the reduce-scatter's steps" bash -c 'grep -q "|step 0>1 1>2 2>3 3>0" <<<"$1" && grep -q "| 1 + c3  c0  c1  c2" <<<"$1" && grep -q "| 3 + c1  c2  c3  c0" <<<"$1"' _ "$s"
check "lab06 80x24: the links paged, saying so" has "$s" "links 1-2 of 4, up/down"
check "lab06 80x24: ASCII only" ascii_only "$s"
T send-keys -t t Space
wait_for "step 7/9 | step (space" >/dev/null
wait_for "|ring steps: no room" >/dev/null # once step 7's events are drawn (above)
s=$(screen)
check "lab06 80x24 step 7: the all-reduce's table does not fit, and says so" has "$s" "|ring steps: no room"
T send-keys -t t Space
wait_for "step 8/9 | step (space" >/dev/null
wait_for "last: all_reduce 4.0 MiB, 116 GB/s (step 7)" >/dev/null # "(step 7)" once step 8's events are drawn
s=$(screen)
check "lab06 80x24 step 8: no step 7 table without its label" bash -c '! grep -q "| 1 + c3" <<<"$1" || grep -q "step 7.s all_reduce" <<<"$1"' _ "$s"
check "lab06 80x24 step 8: 'last:' names the 4 MiB all-reduce of step 7" has "$s" "last: all_reduce 4.0 MiB, 116 GB/s (step 7)"
T send-keys -t t q
wait_for "EXIT=0" >/dev/null

# --- Lab 07 at 120x40: the buckets of the first step's backward
buckets() { # the pane's backward row, then b1..b6, from the screen $1 (the topology's columns)
    grep -E "^│(backward|b[1-6] )" <<<"$1" | first 36
}
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/lab07' --step" 120 40
step_to 6 27
s=$(screen)
check "lab07: the buckets' legend" has "$s" "│buckets ◀ fill ░ wait ▓ reduce"
b=$(buckets "$s")
check "lab07: the backward and six buckets" bash -c '[ "$(wc -l <<<"$1")" = 7 ]' _ "$b"
check "lab07: every bucket fills (◀), then is all-reduced (▓)" \
    bash -c '[ "$(ugrep -cE "^│b[1-6] +[0-9]+K ◀+░*▓+·*│$" <<<"$1")" = 6 ]' _ "$b"
bw_end=$(col "$(grep "^│backward" <<<"$b")" "◀" last)
ar1=$(col "$(grep "^│b1 " <<<"$b")" "▓")
check "lab07: the first bucket's all-reduce starts during backward ($ar1 < $bw_end)" test "$ar1" -lt "$bw_end"
T send-keys -t t q
wait_for "EXIT=0" >/dev/null

# --- Lab 07 at 80x24, ASCII, no colour, without overlap
start "TERM=xterm LANG=C NO_COLOR=1 '$bin/lab07' --step --no-overlap" 80 24
step_to 6 27
s=$(screen)
b=$(grep -E "^[|](backward|b[1-6] )" <<<"$s" | first 30)
check "lab07 80x24: the buckets, in ASCII" bash -c '[ "$(grep -cE "^[|]b[1-6] +[0-9]+K <+:*~+[.]*[|]$" <<<"$1")" = 6 ]' _ "$b"
bw_end=$(col "$(grep "^|backward" <<<"$b")" "<" last)
ar1=$(col "$(grep "^|b1 " <<<"$b")" "~")
check "lab07 --no-overlap: the first all-reduce after backward ($ar1 > $bw_end)" test "$ar1" -gt "$bw_end"
check "lab07 80x24: ASCII only" ascii_only "$s"
T send-keys -t t q
wait_for "EXIT=0" >/dev/null

# --- Lab 07 replayed (120x40): the live run's layout (no pipeline pane: its
# per-layer backwards have no micro-batch) and the same buckets as live
t7="${TMPDIR:-/tmp}/paralab-lab57-$$.json"
(cd "$root" && "$bin/lab07" --no-viz --trace "$t7" --epochs 2 >/dev/null 2>&1)
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/lab07' --step --epochs 2" 120 40
step_to 4 9
wait_for "│b6 " >/dev/null # the last bucket's row: the step's backward drawn
live=$(buckets "$(screen)")
T send-keys -t t q
wait_for "EXIT=0" >/dev/null
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/paralab-viz' --step '$t7'" 120 40
for ((k = 2; k <= 4; k++)); do
    wait_for "step $((k - 1))/9 | replay paused" >/dev/null
    T send-keys -t t Space
done
wait_for "step 4/9 | replay paused" >/dev/null
s=$(screen)
check "lab07 replay: no pipeline pane" bash -c '! grep -q "pipeline" <<<"$1"' _ "$s"
check "lab07 replay: a timeline lane per rank and lane (r0 cmp, 0 com)" \
    bash -c 'grep -q "r0  cmp" <<<"$1" && grep -q " 0  com" <<<"$1"' _ "$s"
rep=$(buckets "$s")
check "lab07 replay: the buckets as live" test "$rep" = "$live"
[ "$rep" = "$live" ] || printf 'replay:\n%s\nlive:\n%s\n' "$rep" "$live"
check "lab07 replay: the first bucket's row as live" bash -c 'grep -q "^│b1 " <<<"$1"' _ "$live"
T send-keys -t t q
wait_for "EXIT=0" >/dev/null
rm -f "$t7"

echo "viz_lab57: $fails failed"
[ "$fails" = 0 ]
