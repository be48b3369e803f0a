#!/usr/bin/env bash
# tests/viz_lab02.sh BUILD_DIR — Lab 02's picture pane in a real terminal
# (tmux), live, as a student runs it (lab02 --step, the modeled clock):
# each step's pictures, drawn from the record of the step's own kernel:
#   2. the copies' bandwidths as labelled bars (GB/s, the host link's line);
#   3. one warp's loads: stride 1 in 4 sectors (the fewest), stride 8 in 32
#      (8x the fewest);
#   4. the naive transpose's stores: a column of out, 32 sectors;
#   5. the tiled transpose: its stores by rows (4 sectors) and its 32x32
#      tile's column read, 32 wavefronts (a 32-way conflict) in bank 0;
#   6. the padded tile (32x33): the column read in 32 banks, 1 wavefront;
#   7. every kernel's bandwidth, the preset's peak as the reference line.
# At 120x40 in colour, space pressed only once the lab waits for it ("|
# step (space"); at 80x24 with NO_COLOR (the reduced forms); in ASCII
# (LANG=C) at 80x24. Then `lab02 --no-viz` prints the pictures as text.
# Watchdogs count CPU time (tmux_lib.sh's wait_screen), never wall time.
set -uo pipefail
bin=$(cd "${1:-build/sim/bin}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
fails=0
sock="paralab-lab02-test-$$"
# shellcheck source=tests/tmux_lib.sh
. "$root/tests/tmux_lib.sh"
screen() { T capture-pane -p -t t; }
wait_for() { wait_screen t "$1"; }
start() { # command line, in a fresh window $2 x $3
    start_t "$2" "$3" "cd '$root' && $1; echo EXIT=\$?; sleep 60"
}
# step K of 7 shown, waiting for the key (the last: shown, the run over)
at_step() { if [ "$1" = 7 ]; then wait_for "step 7/7 |"; else wait_for "step $1/7 | step (space"; fi; }
next() { # from step $1 (waiting) to step $1 + 1 (waiting)
    T send-keys -t t Space
    at_step $(($1 + 1))
}
hasall() { # screen, then strings that must all be on it
    local s=$1 x
    shift
    for x in "$@"; do has "$s" "$x" || { echo "  missing: $x" >&2; return 1; }; done
}

# --- 120x40, colour, step by step
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/lab02' --step" 120 40
check "120x40: lab02 waits at step 1/7" at_step 1
check "120x40: step 2: the copies" next 1
# a frame may show a step's narration before its pictures (the UI draws what
# has arrived; step 2's are noted after it): wait for the last one's text
wait_for "┊ the host link: 64.0 GB/s" >/dev/null
s=$(screen)
check "120x40: step 2: the copies' bars, labelled, with the host link's line" hasall "$s" \
    "to device, pageable" "to device, pinned" "to host, pageable" "to host, pinned" \
    "GB/s" "┊ the host link: 64.0 GB/s"
check "120x40: step 2: the bars' axis" has "$s" "└─"
check "120x40: step 3: the strides" next 2
wait_for "32 sectors (8x the fewest): 1024 B moved for 128 B used" >/dev/null
s=$(screen)
check "120x40: step 3: stride 1, coalesced: 4 sectors, the fewest" hasall "$s" \
    "one warp's loads: coalesced (stride 1)" "4 sectors (the fewest: 4): 128 B moved for 128 B used"
check "120x40: step 3: stride 8: 32 sectors, 8x the fewest" hasall "$s" \
    "one warp's loads: strided x8" "32 sectors (8x the fewest): 1024 B moved for 128 B used"
# the pane's inside is 58 columns at 120x40: a column per lane
check "120x40: step 3: the lanes, their lines down, the sectors" hasall "$s" \
    "loads   ●●●●●●●●●●●●●●●●●●●●●●●●●●●●●●●●" "        ↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓↓" \
    "sectors │██████││██████││██████││██████│" "sectors █▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓█▓" \
    "memory  ████ 128 B" "memory  ████████████████████████████████ 1024 B"
check "120x40: step 4: the naive transpose" next 3
wait_for "one warp's stores: transposed (naive)" >/dev/null
s=$(screen)
check "120x40: step 4: its stores, a column of out: 32 sectors" hasall "$s" \
    "one warp's stores: transposed (naive)" "32 sectors (8x the fewest): 1024 B moved for 128 B used"
check "120x40: step 5: the tiled transpose" next 4
wait_for "one warp's stores: tiled: a row of out" >/dev/null
s=$(screen)
check "120x40: step 5: the 32x32 tile's column read: 32 wavefronts" hasall "$s" \
    "shared-memory banks: 32x32 tile, a column read" "wavefronts: 32 (32-way conflict)"
check "120x40: step 5: bank 0 serves all 32 words (4 rows a line)" hasall "$s" \
    "   w0 4·······························" " w896 4·······························" \
    "waves +0000000000000000000000000000000 +: up to 32"
check "120x40: step 5: its stores by rows: 4 sectors" hasall "$s" \
    "one warp's stores: tiled: a row of out" "4 sectors (the fewest: 4)"
check "120x40: step 6: the padded transpose" next 5
wait_for "wavefronts: 1 (no conflict); row pitch 33 words" >/dev/null
s=$(screen)
check "120x40: step 6: the 32x33 tile's column read: 1 wavefront" hasall "$s" \
    "shared-memory banks: 32x33 tile, a column read" "wavefronts: 1 (no conflict); row pitch 33 words" \
    "   w0 ●●●●····" " w896 ····························●●●●" "waves 11111111111111111111111111111111"
check "120x40: step 7: the lesson" next 6
wait_for "┊ peak (the preset): 3350.0 GB/s" >/dev/null
s=$(screen)
check "120x40: step 7: every kernel's bar, the student's lit, the preset's peak" hasall "$s" \
    "copy, stride 1" "copy, stride 32" "transpose, naive" "▶ transpose, tiled (ref)" \
    "transpose, padded" "┊ peak (the preset): 3350.0 GB/s"
T send-keys -t t q
check "120x40: q exits 0" wait_for "EXIT=0"

# --- 80x24, no colour: the reduced forms
start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab02' --step" 80 24
check "80x24: lab02 waits at step 1/7" at_step 1
next 1 >/dev/null
check "80x24: step 3" next 2
wait_for "+1 picture (one warp's loads: strided x8)" >/dev/null
s=$(screen)
# a 6-row pane: the first picture reduced, the second named
check "80x24: step 3: the coalesced request reduced, the strided one named" hasall "$s" \
    "sectors [██████████████][██████████████][██████████████][██████████████]" \
    "4 sectors (the fewest: 4)" "+1 picture (one warp's loads: strided x8)"
for k in 3 4; do next $k >/dev/null; done
check "80x24: step 6" next 5
wait_for "wavefronts: 1 (no conflict)" >/dev/null
s=$(screen)
check "80x24: step 6: the padded tile, 1 wavefront" has "$s" "wavefronts: 1 (no conflict)"
check "80x24: step 7" next 6
wait_for "copy, stride 1" >/dev/null
s=$(screen)
check "80x24: step 7: the bars (reduced: some left out, saying so, or all)" bash -c \
    'grep -qF "copy, stride 1" <<<"$1" && { grep -qF "more)" <<<"$1" || grep -qF "transpose, padded" <<<"$1"; }' _ "$s"
T send-keys -t t q
check "80x24: q exits 0" wait_for "EXIT=0"

# --- ASCII, no colour, 80x24
start "TERM=xterm LANG=C NO_COLOR=1 '$bin/lab02' --step" 80 24
check "ASCII: lab02 waits at step 1/7" at_step 1
next 1 >/dev/null
check "ASCII: step 3" next 2
wait_for "+1 picture (one warp's loads: strided x8)" >/dev/null
s=$(screen)
check "ASCII: step 3: the sectors in [#]" hasall "$s" \
    "sectors [##############][##############][##############][##############]" \
    "4 sectors (the fewest: 4)"
for k in 3 4; do next $k >/dev/null; done
check "ASCII: step 6" next 5
wait_for "wavefronts: 1 (no conflict)" >/dev/null
s=$(screen)
check "ASCII: step 6: the padded tile in o, no UTF-8 on the screen" bash -c \
    'grep -qF "wavefronts: 1 (no conflict)" <<<"$1" && ! LC_ALL=C grep -q "[^ -~]" <<<"$1"' _ "$s"
T send-keys -t t q
check "ASCII: q exits 0" wait_for "EXIT=0"

# --- without the UI: the pictures as text under their steps
out=$(LANG=C "$bin/lab02" --no-viz 2>&1)
rc=$?
check "--no-viz: exit 0" test $rc = 0
check "--no-viz: the requests and banks printed" hasall "$out" \
    "4 sectors (the fewest: 4)" "32 sectors (8x the fewest)" "wavefronts: 32 (32-way conflict)" \
    "wavefronts: 1 (no conflict)" "peak (the preset): 3350.0 GB/s"
echo "viz lab02: $fails failed"
[ $fails = 0 ]
