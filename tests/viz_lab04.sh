#!/usr/bin/env bash
# tests/viz_lab04.sh BUILD_DIR — Lab 04's picture pane in a real terminal
# (tmux), as a student steps through the lab: at 120x40 in colour, --size
# 64 (4 tiles of 16 each way, the block in the middle at tile (2, 2)):
#   step 3 (the tiled kernel, the reference while the exercise is TODO):
#     the tiles of A and B that block loaded, step by step along K, from
#     the simulated GPU's record of its loads: each step's line and its
#     tiles lit one after the other ("step 4 of 4 along K: A[32:48,
#     48:64] and B[48:64, 32:48] in shared memory"), A's row strip and
#     B's column strip, C's tile marked;
#   step 6 (the lesson): the roofline of the simulated H100-SXM preset,
#     log-log with its ticks, a point per kernel, the tiled one
#     highlighted (◆), a legend row each (the warp tiles, step 5, in the
#     register tiles' cell: the same FLOPs, bytes and modeled time).
# Then at 80x24 with NO_COLOR (the pane reduced: the roofline one row a
# decade), in ASCII (LANG=C: '#', '@', '/'), replayed from the trace file
# (paralab-viz --step), and --no-viz (the pictures as text, each before its
# step's narration). Space is pressed only once the lab waits for
# it ("| step (space"). About 20 s.
set -uo pipefail
bin=$(cd "${1:-build/sim/bin}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
fails=0
sock="paralab-lab04-test-$$"
# shellcheck source=tests/tmux_lib.sh
. "$root/tests/tmux_lib.sh"
screen() { T capture-pane -p -t t; }
wait_for() { wait_screen t "$1"; }
start() { # command line, in a fresh window $2 x $3
    start_t "$2" "$3" "cd '$root' && $1; echo EXIT=\$?; sleep 60"
}
# space once step $1 of $2 waits for it; then wait for step $1 + 1
next() {
    wait_for "step $1/$2 | step (space" >/dev/null || return 1
    T send-keys -t t Space
    wait_for "step $(($1 + 1))/$2 |"
}

# at 120x40 the picture pane is the right half (58 columns inside): the
# shorter forms of the headline and the step lines
tiles_head="block (2, 2): C[32:48, 32:48], 4 steps along K"
step4="step 4 of 4 along K: A[32:48, 48:64] and B[48:64, 32:48]"

# --- 120x40, colour, step by step
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/lab04' --step --size 64" 120 40
check "120x40: the lab waits at step 1/6" wait_for "step 1/6 | step (space"
check "120x40: space: step 2 (naive)" next 1 6
check "120x40: space: step 3 (the tiles)" next 2 6
check "120x40: step 3: the tiles picture, the block in the middle of C" wait_for "$tiles_head"
check "120x40: step 3: its pane, titled" has "$(screen)" "┌ tiles of block (2, 2) ─"
check "120x40: step 3: the first step along K" wait_for \
    "step 1 of 4 along K: A[32:48, 0:16] and B[0:16, 32:48]"
check "120x40: step 3: the steps revealed one by one, to the last" wait_for "$step4"
s=$(screen)
check "120x40: step 3: the matrices' labels" has "$s" "A 64x64      B 64x64      C 64x64"
check "120x40: step 3: A's row strip loaded, this step's tile last; C's tile" has "$s" \
    "│▒▒▒▒▒▒██     · · ▒▒·      · · ◆◆·"
check "120x40: step 3: the product's signs" has "$s" "│· · · ·   ×  · · ▒▒·   =  · · · ·"
check "120x40: step 3: B's column strip, this step's tile at the bottom" has "$s" \
    "│· · · ·      · · ██·      · · · ·"
check "120x40: step 3: the legend" has "$s" "│█ now  ▒ before  ░ to load  ◆ its C tile  · others"
check "120x40: step 3: the narration says where the picture comes from" has "$s" \
    "simulated GPU's record of its loads)."
check "120x40: space: step 4 (register tiles)" next 3 6
check "120x40: space: step 5 (warp tiles)" next 4 6
check "120x40: step 5: the modeled clock gives the warp tiles the register tiles' time" \
    wait_for "waiting for memory) only a real GPU shows."
check "120x40: space: step 6 (the roofline)" next 5 6
check "120x40: step 6: the roof of the simulated preset" wait_for \
    "the roof of the simulated H100-SXM preset:"
s=$(screen)
check "120x40: step 6: its peaks and ridge" has "$s" "│67.0 TFLOP/s FP32, 3.35 TB/s; ridge at 20.0 FLOP/B"
check "120x40: step 6: its pane, titled" has "$s" "┌ the roofline ─"
check "120x40: step 6: the y axis's ticks" bash -c 'grep -qF "100T┤" <<<"$1" && grep -qF " 10T┤" <<<"$1" && grep -qF "  1T┤" <<<"$1"' _ "$s"
check "120x40: step 6: the x axis's ticks" has "$s" "│    0.1        1         10       100       1000  FLOP/B"
check "120x40: step 6: the roof's legend" has "$s" "│╱ memory roof  ─ FP32 peak  ┊ ridge  (y: FLOP/s, log-log)"
check "120x40: step 6: the reference's tiles highlighted" bash -c \
    'grep -qE "◆ tiles 16x16 \(reference\) +3\.[0-9] FLOP/B" <<<"$1"' _ "$s"
check "120x40: step 6: the naive point, 0.25 FLOP/B" bash -c \
    'grep -qE "1 naive +0\.25 FLOP/B +[0-9.]+ GFLOP/s" <<<"$1"' _ "$s"
check "120x40: step 6: the register tiles' point" bash -c \
    'grep -qE "3 register and warp tiles +[0-9.]+ FLOP/B" <<<"$1"' _ "$s"
check "120x40: step 6: the warp tiles on the register tiles' point (the same modeled time)" \
    bash -c '! grep -qE "4 warp tiles" <<<"$1"' _ "$s"
T send-keys -t t q

# --- 80x24, NO_COLOR: reduced (the pane 5 rows under its "cut to" line)
start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab04' --step --size 64" 80 24
check "80x24: step 1/6" wait_for "step 1/6 | step (space"
next 1 6 >/dev/null
check "80x24: space: step 3 (the tiles)" next 2 6
check "80x24: the tiles' steps, to the last" wait_for \
    "│step 4 of 4 along K: A[32:48, 48:64] and B[48:64, 32:48] in shared memory"
s=$(screen)
check "80x24: the tiles 2x2 a cell, by their glyphs alone" bash -c \
    'grep -qF "│· ·      ×  · ▒▒     =  · ·" <<<"$1" && grep -qF "│▒▒██        · ██        · ◆◆" <<<"$1"' _ "$s"
check "80x24: the legend says so" has "$s" "│█ now  ▒ before  ░ to load  ◆ its C tile  · others  (a cell: 2x2 tiles)"
check "80x24: the pane says it is reduced" has "$s" "│cut to 5 of 8 rows: enlarge the terminal"
next 3 6 >/dev/null
next 4 6 >/dev/null
check "80x24: space: step 6 (the roofline)" next 5 6
check "80x24: the roofline, bare: one row a decade" wait_for "│100T┤"
s=$(screen)
check "80x24: the y ticks" bash -c 'grep -qF "│ 10T┤" <<<"$1" && grep -qF "│  1T┤" <<<"$1" && grep -qF "│100G┤" <<<"$1"' _ "$s"
check "80x24: the x ticks" has "$s" "│    0.1          1           10         100         1000  FLOP/B"
check "80x24: the highlighted point's glyph" has "$s" "◆"
T send-keys -t t q

# --- LANG=C: ASCII only
start "TERM=xterm-256color LANG=C '$bin/lab04' --step --size 64" 120 40
check "ASCII: step 1/6" wait_for "step 1/6 | step (space"
next 1 6 >/dev/null
check "ASCII: space: step 3" next 2 6
check "ASCII: the tiles' steps, to the last" wait_for "$step4"
s=$(screen)
check "ASCII: the tiles in ASCII" has "$s" "|++++++##     . . ++.      . . @@."
check "ASCII: the legend in ASCII" has "$s" "|# now  + before  : to load  @ its C tile  . others"
next 3 6 >/dev/null
next 4 6 >/dev/null
check "ASCII: space: step 6" next 5 6
check "ASCII: the roofline in ASCII" wait_for "|/ memory roof  - FP32 peak  : ridge"
s=$(screen)
check "ASCII: the highlighted point" bash -c 'grep -qE "@ tiles 16x16 \(reference\)" <<<"$1"' _ "$s"
check "ASCII: nothing but ASCII on the screen" bash -c '! LC_ALL=C grep -q "[^ -~]" <<<"$1"' _ "$s"
T send-keys -t t q

# --- the trace file: the pictures replayed (paralab-viz --step)
trace="$(mktemp -d)/lab04.json"
"$bin/lab04" --no-viz --size 64 --trace "$trace" >/dev/null 2>&1
check "the trace keeps both pictures (paralab-viz --check)" bash -c \
    '"$1/paralab-viz" --check "$2" | grep -qF "6 narrated steps, 0 metric values, 2 pictures"' _ "$bin" "$trace"
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/paralab-viz' --step '$trace'" 120 40
check "replay: step 1/6, no picture yet" wait_for "no picture yet"
for k in 1 2; do
    wait_for "step $k/6 | replay paused" >/dev/null && T send-keys -t t Space
done
check "replay: step 3, the tiles to their last step" wait_for "$step4"
check "replay: step 3, the strip of A" has "$(screen)" "│▒▒▒▒▒▒██     · · ▒▒·      · · ◆◆·"
for k in 3 4 5; do
    wait_for "step $k/6 | replay paused" >/dev/null && T send-keys -t t Space
done
check "replay: step 6, the roofline" wait_for "│◆ tiles 16x16 (reference) 3.6 FLOP/B"
T send-keys -t t q

# --- --no-viz: the pictures as text, each before the narration of its step
# (printed when the lab notes it, at 80 columns)
out=$(LANG=C "$bin/lab04" --no-viz --size 64 2>&1)
check "--no-viz: the tiles with step 3" bash -c \
    'awk "/^\\[2\\]/{f=1} /^\\[3\\]/{f=0} f" <<<"$1" | grep -qF "$2"' _ "$out" \
    "  step 4 of 4 along K: A[32:48, 48:64] and B[48:64, 32:48] in shared memory"
check "--no-viz: the roofline with step 6" bash -c \
    'awk "/^\\[5\\]/{f=1} /^\\[6\\]/{f=0} f" <<<"$1" | grep -qE "  @ tiles 16x16 \(reference\) +3\.[0-9] FLOP/B"' _ "$out"
check "--no-viz: the pictures in ASCII without a UTF-8 locale" bash -c \
    '! grep -qE "█|▒|░|◆|·|╱|─|┊|┤|└|┴" <<<"$1" && grep -qF "  ++++++##     . . ++." <<<"$1"' _ "$out"

echo "viz_lab04: $fails failed"
[ "$fails" = 0 ]
