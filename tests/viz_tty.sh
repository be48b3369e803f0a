#!/usr/bin/env bash
# tests/viz_tty.sh BUILD_DIR — the visualiser in a real terminal, as a
# student uses it: tmux runs lab06 at 120x40, keys are sent (space, p, +,
# ?, q, Ctrl-C), the screen is read back with capture-pane; the window is
# shrunk below the minimum and grown again; the terminal must be usable
# afterwards (canonical mode and echo back). Then the fallbacks (TERM dumb,
# unset or unknown, and its plain-text step mode: Enter and a blank line
# step, q or a blank then q quits; LANG=C; a pipe) and replaying traces
# with paralab-viz:
# a trace of every lab, played to its end with its narration and metrics;
# Lab 08 at 80x24 without colour, stopped with q and Ctrl-C, TERM unset;
# Lab 09 at 80x24 without colour to its end, and at 120x40 stopped with Ctrl-C;
# Lab 10 the same, its mesh pane at 120x40; Lab 11 at 80x24, its memory pane
# at stage 0 and stage 3, stepped to its end.
set -uo pipefail
bin=$(cd "${1:-build/sim/bin}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
fails=0
sock="paralab-viz-test-$$"
# shellcheck source=tests/tmux_lib.sh
. "$root/tests/tmux_lib.sh"
screen() { T capture-pane -p -t t; }
history() { T capture-pane -p -t t -S -500; }
wait_for() { wait_screen t "$1"; }
out=$(mktemp -d)
# a lab that trains: as wait_for, which never gives up while the lab runs
# ($2, the seconds it once allowed, is not a limit)
wait_long() { wait_for "$1"; }
# the whole history, wrapped lines joined
joined() { T capture-pane -p -J -t t -S -2000; }
# $1 holds each of $2, $3... on lines in this order
in_order() {
    local text=$1 last=0 n p
    shift
    for p in "$@"; do
        n=$(grep -nF -- "$p" <<<"$text" | head -1 | cut -d: -f1)
        [ -n "$n" ] && [ "$n" -gt "$last" ] || { echo "  not in order: '$p' (line ${n:-none}, after $last)"; return 1; }
        last=$n
    done
}
start() { # command line, run in a fresh 120x40 window (or $2 x $3)
    T kill-session -t t 2>/dev/null
    T new-session -d -s t -x "${2:-120}" -y "${3:-40}" "cd '$root' && $1; echo EXIT=\$?; stty -a | tr ' ' '\n' | grep -xE -- '-?(icanon|echo)' | tr '\n' ' '; echo; sleep 60"
}

# --- lab06, live
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/lab06' --step --trace '$out/live.json'"
check "the UI comes up with its header" wait_for "paralab | lab 06 collectives"
wait_for "step 1/9" >/dev/null
s=$(screen)
for pane in devices timeline topology metrics narration; do
    check "pane: $pane" has "$s" "$pane"
done
check "step 1 of 9, in step mode" has "$s" "step 1/9 | step"
check "UTF-8 borders" has "$s" "┌ devices"
T send-keys -t t Space
check "space: step 2" wait_for "step 2/9"
T send-keys -t t p
check "p: play" wait_for "play x1.0"
T send-keys -t t +
check "+: faster" wait_for "play x2.0"
T send-keys -t t p
check "p again: step mode" wait_for "| step (space: next)"
T send-keys -t t '?'
check "?: the help" wait_for "q, Ctrl-C   quit"
T send-keys -t t '?'
T resize-window -t t -x 50 -y 10
check "too small: says what it needs" wait_for "need at least 60x13"
T resize-window -t t -x 120 -y 40
check "grown again: the panes are back" wait_for "┌ timeline"
T send-keys -t t q
check "q: the lab ends (exit 0)" wait_for "EXIT=0"
sleep 0.3
s=$(history)
check "q: the student is told" has "$s" "stopped by the student"
check "the terminal is restored (icanon, echo)" bash -c 'grep -qE "^(icanon echo|echo icanon) *$" <<<"$1"' _ "$(grep -E 'icanon|echo' <<<"$s" | tail -1)"
check "the lab's output is printed after the UI" has "$s" "the vectors"
check "the trace is complete after q" bash -c "'$bin/paralab-viz' '$out/live.json' </dev/null 2>&1 | grep -q 'events of 4 ranks read'"

# --- lab01, live: its steps, its kernels on the timeline
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/lab01' --step --trace '$out/lab01.json'"
check "lab01: the UI comes up at step 1/4" wait_for "lab 01 hello threads | step 1/4"
T send-keys -t t Space
check "lab01: space, step 2 (the kernel's result)" wait_for "1000 of 1000 elements correct"
# a frame may show a step's narration before its last events (the UI draws
# what has arrived): wait for the count of them, then look at the whole
wait_for "6 events, 0 collectives" >/dev/null
s=$(screen)
check "lab01: the timeline shows the copies and the kernel" bash -c 'grep -q "r0  cmp .*█" <<<"$1" && grep -q " 0  cpy .*▒" <<<"$1"' _ "$s"
T send-keys -t t q
check "lab01: q exits 0" wait_for "EXIT=0"
check "lab01: its trace replays" bash -c "'$bin/paralab-viz' '$out/lab01.json' </dev/null 2>&1 | grep -q 'events of 1 rank read'"

# --- make demo: Lab 07 on 4 devices, playing
start "TERM=xterm-256color LANG=C.UTF-8 make -s demo"
check "make demo: Lab 07 comes up, playing" wait_for "lab 07 data parallel"
check "make demo: 4 devices, in play mode" wait_for "| play x1.0 | clock modeled | 4 devices"
s=$(screen)
for pane in "dp 0" "dp 3" "timeline" "topology" "metrics" "narration"; do
    check "make demo: $pane" has "$s" "$pane"
done
for _ in 1 2 3 4 5 6 7; do T send-keys -t t Space; sleep 0.3; done
check "make demo: an epoch ends with its loss and accuracy" wait_for "Epoch 1/20: loss"
check "make demo: the loss curve, per epoch" wait_for "'s mean"
T send-keys -t t q
check "make demo: q exits 0" wait_for "EXIT=0"
sleep 0.3
check "make demo: the terminal is restored" bash -c 'grep -qE "^(icanon echo|echo icanon) *$" <<<"$1"' _ "$(history | grep -E 'icanon|echo' | tail -1)"

# --- 80x24 without colour, as on a laptop: the narration keeps the lesson
# (it grows, scrolls, is printed in full after q), every link's bytes,
# kernels apart from copies, the loss as the narration gives it
start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab06' --step" 80 24
check "80x24: step 1's vectors, every rank's" wait_for "rank 3: 4 4 4 4"
for k in 2 3 4 5 6 7 8 9; do
    T send-keys -t t Space
    wait_for "step $k/9" >/dev/null
done
check "80x24: step 9's table with its header" wait_for "size (B)      count   type"
check "80x24: the narration says there is more" wait_for "below: PgUp/PgDn"
wait_for "the run is over: q quits" >/dev/null # the table is complete
for _ in 1 2 3 4 5 6 7 8; do T send-keys -t t NPage; done
check "80x24: PgDn, to the table's end" wait_for "2097152     524288  float    sum    yours"
T send-keys -t t e
check "80x24: e, back to the step's start" wait_for "[9] algbw"
T send-keys -t t PPage
check "80x24: PgUp, back into step 8" wait_for "[8] Your ring all-reduce"
T send-keys -t t e n
narration_alone() {
    sleep 0.5
    local s
    s=$(screen)
    ! grep -q "timeline" <<<"$s" && grep -q "512        128  float    sum    yours" <<<"$s"
}
check "80x24: n, the narration alone (more of the table)" narration_alone
T send-keys -t t n
check "80x24: n again, the panes back" wait_for "timeline"
check "80x24: more links than the topology shows: it says so" wait_for "links 1-"
T send-keys -t t 4 Down Down Down Down Down Down
check "80x24: topology focused, down: the last link, 3>0" wait_for "3>0 "
T send-keys -t t q
check "80x24: q exits 0" wait_for "EXIT=0"
sleep 0.3
s=$(joined)
check "80x24: after q, every step and its output, in order" in_order "$s" "[1] 4 ranks, one device each" \
    "rank 3: 4 4 4 4" "[2] Send and receive" "[8] Your ring all-reduce" "[9] algbw = S / time" \
    "size (B)      count   type" "2097152     524288  float    sum    yours" "PASS  06_collectives"

start "TERM=xterm LANG=C NO_COLOR=1 '$bin/lab01' --step" 80 24
wait_for "step 1/4" >/dev/null
T send-keys -t t Space
wait_for "step 2/4 | step (space" >/dev/null
T send-keys -t t Space
check "80x24: lab01's block map, its characters" wait_for "0000000000000000111111111111111122222222"
# the picture pane (step 2's pictures) sits above the narration at 80x24:
# the block list is further down: pages until the end (more clamp there)
for _ in 1 2 3 4; do T send-keys -t t NPage; done
check "80x24: lab01's block map, every block (PgDn)" wait_for "block 3    threads 0..255  elements 768..999"
T send-keys -t t q
wait_for "EXIT=0" >/dev/null

start "TERM=xterm LANG=C NO_COLOR=1 '$bin/lab05' --step" 80 24
wait_for "step 1/4" >/dev/null
for k in 2 3; do
    T send-keys -t t Space
    wait_for "step $k/4 | step (space" >/dev/null
done
check "80x24, LANG=C, no colour: a stream's kernel (#) between its copies (=)" wait_for "==#=="
check "80x24, LANG=C, no colour: the legend" wait_for "# kernel  = copy  . idle"
T send-keys -t t q
wait_for "EXIT=0" >/dev/null

start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab07' --step" 80 24
wait_for "step 1/27" >/dev/null
for k in 2 3 4 5 6 7 8; do
    T send-keys -t t Space
    wait_long "step $k/27 | step (space" 120 >/dev/null
done
loss=$(screen | grep -oE "Epoch 1/20: loss [0-9.]+" | grep -oE "[0-9.]+$")
check "80x24: lab07's curve gives the narration's loss ($loss), epoch 1's mean" wait_for "loss $loss: epoch 1's mean"
T send-keys -t t q
check "80x24: lab07, q exits 0" wait_long "EXIT=0" 60

# --- Lab 08 at 80x24 without colour, stepped to its end (one epoch): the
# shards of step 1, the ledger of step 8, the epoch and its loss in the
# metrics; q exits 0, the terminal comes back, and every step and the
# checks are printed after the UI. (The shards pane is not read here.)
start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab08' --step --epochs 1" 80 24
check "80x24: lab08 comes up at step 1/11" wait_for "lab 08 tensor parallel | step 1/11"
check "80x24: lab08 step 1, the column shards" wait_for "W1 [64x256] is cut into 4 column shards of"
for pane in devices timeline topology shards metrics narration; do
    check "80x24: lab08 pane: $pane" has "$(screen)" "┌ $pane"
done
for k in 2 3; do
    T send-keys -t t Space
    wait_long "step $k/11 | step (space" >/dev/null
done
check "80x24: lab08 step 3, the shards pane: block 0's W1 (the step's own matmul)" wait_for "block 0 fwd: W1 shards"
T send-keys -t t Space
wait_long "step 4/11 | step (space" >/dev/null
check "80x24: lab08 step 4, the shards pane: block 0's W2, as the narration says" wait_for "block 0 fwd: W2 shards"
for k in 5 6 7 8 9; do
    T send-keys -t t Space
    wait_long "step $k/11 | step (space" >/dev/null
done
check "80x24: lab08 step 9, the ledger's collectives" wait_for "[9] This step's collectives on rank 0, from the"
check "80x24: lab08 step 9, as many as the formula says" wait_for "gives the same:"
for k in 10 11; do
    T send-keys -t t Space
    wait_long "step $k/11" >/dev/null
done
check "80x24: lab08 step 11, the epoch" wait_for "[11] Epoch 1/1: loss"
loss=$(screen | grep -oE "Epoch 1/1: loss [0-9.]+" | grep -oE "[0-9.]+$")
check "80x24: lab08's curve gives the narration's loss ($loss), epoch 1's" wait_for "loss $loss (epoch 1)"
check "80x24: lab08, the run is over" wait_for "the run is over: q quits"
T send-keys -t t q
check "80x24: lab08, q exits 0" wait_for "EXIT=0"
sleep 0.3
s=$(joined)
check "80x24: lab08, the terminal is restored (icanon, echo)" bash -c 'grep -qE "^(icanon echo|echo icanon) *$" <<<"$1"' _ "$(grep -E 'icanon|echo' <<<"$s" | tail -1)"
check "80x24: lab08, after q, every step and the checks, in order" in_order "$s" "[1] 4 ranks share every block" \
    "[4] Row-parallel W2" "[5] Block 1 the same way" "[9] This step's collectives on rank 0" "[11] Epoch 1/1: loss" \
    "(reference)  PASS  08_tensor_parallel   column_parallel" "(reference)  PASS  08_tensor_parallel   row_parallel"

# --- Lab 08 stopped mid-run: q in step mode (exit 0), Ctrl-C in play mode
# (exit 130); each gives the terminal back
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/lab08' --step --epochs 1"
wait_for "step 1/11" >/dev/null
T send-keys -t t Space
check "lab08 --step: space, step 2/11" wait_for "step 2/11 | step (space"
T send-keys -t t q
check "lab08 --step, q mid-run: exit 0" wait_for "EXIT=0"
sleep 0.3
s=$(history)
check "lab08 --step, q mid-run: the student is told" has "$s" "stopped by the student"
check "lab08 --step, q mid-run: the terminal is restored" bash -c 'grep -qE "^(icanon echo|echo icanon) *$" <<<"$1"' _ "$(grep -E 'icanon|echo' <<<"$s" | tail -1)"
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/lab08' --play --epochs 1"
check "lab08 --play: playing" wait_for "play x1.0"
T send-keys -t t C-c
check "lab08 --play, Ctrl-C: exit 130" wait_for "EXIT=130"
sleep 0.3
check "lab08 --play, Ctrl-C: the terminal is restored" bash -c 'grep -qE "^(icanon echo|echo icanon) *$" <<<"$1"' _ "$(history | grep -E 'icanon|echo' | tail -1)"
# TERM unset: one line says why, then the narration as plain text
start "env -u TERM '$bin/lab08' --play --speed 100 --epochs 1"
check "lab08, TERM unset: exits 0" wait_long "EXIT=0"
sleep 0.3
s=$(history)
check "lab08, TERM unset: one line says why" bash -c 'grep -qE "\(TERM is not set[^)]*plain text" <<<"$1"' _ "$s"
check "lab08, TERM unset: plain narration to the end" bash -c 'grep -q "^\[11\] Epoch 1/1: loss" <<<"$1" && grep -q "PASS  08_tensor_parallel   row_parallel" <<<"$1"' _ "$s"

# --- Lab 09 at 80x24 without colour, stepped to its end (one epoch): the
# cut of step 1, the bubble of step 3 against its formula, the epoch and
# its loss in the metrics; q exits 0 and every step and the checks are
# printed after the UI. Then at 120x40, playing: Ctrl-C exits 130 and
# gives the terminal back.
start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab09' --step --epochs 1" 80 24
check "80x24: lab09 comes up at step 1/7" wait_for "lab 09 pipeline parallel | step 1/7"
check "80x24: lab09 step 1, the cut" wait_for "4 stages share the 4 blocks"
for pane in devices timeline topology metrics narration; do
    check "80x24: lab09 pane: $pane" has "$(screen)" "┌ $pane"
done
for k in 2 3; do
    T send-keys -t t Space
    wait_long "step $k/7 | step (space" >/dev/null
done
check "80x24: lab09 step 3, the bubble against the formula" wait_for "[3] The bubble, the stages' idle time"
for k in 4 5 6 7; do
    wait_long "step $((k - 1))/7 | step (space" >/dev/null # the lab waits for the key
    T send-keys -t t Space
    wait_long "step $k/7" >/dev/null
done
check "80x24: lab09 step 7, the epoch" wait_for "[7] Epoch 1/1: loss"
loss=$(screen | grep -oE "Epoch 1/1: loss [0-9.]+" | grep -oE "[0-9.]+$")
check "80x24: lab09's curve gives the narration's loss ($loss), epoch 1's" wait_for "loss $loss: epoch 1's"
check "80x24: lab09, the run is over" wait_for "the run is over: q quits"
T send-keys -t t q
check "80x24: lab09, q exits 0" wait_for "EXIT=0"
sleep 0.3
s=$(joined)
check "80x24: lab09, the terminal is restored (icanon, echo)" bash -c 'grep -qE "^(icanon echo|echo icanon) *$" <<<"$1"' _ "$(grep -E 'icanon|echo' <<<"$s" | tail -1)"
check "80x24: lab09, after q, every step and the checks, in order" in_order "$s" "[1] 4 stages share the 4 blocks" \
    "[2] Micro-batch 0" "[3] The bubble" "[4] Stage 0's list" "[5] The flush" "[6] The optimizer step" "[7] Epoch 1/1: loss" \
    "(reference)  PASS  09_pipeline_parallel gpipe" "(reference)  PASS  09_pipeline_parallel one_f_one_b"
start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab09' --play --epochs 1 --schedule gpipe"
check "120x40: lab09 --play: playing" wait_for "play x1.0"
check "120x40: lab09, the header names the lab" has "$(screen)" "lab 09 pipeline parallel"
for pane in devices timeline topology metrics narration; do
    check "120x40: lab09 pane: $pane" has "$(screen)" "┌ $pane"
done
T send-keys -t t C-c
check "120x40: lab09 --play, Ctrl-C: exit 130" wait_for "EXIT=130"
sleep 0.3
check "120x40: lab09 --play, Ctrl-C: the terminal is restored" bash -c 'grep -qE "^(icanon echo|echo icanon) *$" <<<"$1"' _ "$(history | grep -E 'icanon|echo' | tail -1)"

# --- Lab 10 at 80x24 without colour, stepped to its end (one epoch): the
# mesh's table in step 1, the DP reduction of step 4, the epoch and its
# loss in the metrics; q exits 0 and every step and the checks are printed
# after the UI. Then at 120x40: the mesh pane draws the replicas' boxes with
# the ranks in Megatron's order, the pipeline pane the stages of dp 0, tp
# 0; Ctrl-C exits 130.
start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab10' --step --epochs 1" 80 24
check "80x24: lab10 comes up at step 1/6" wait_for "lab 10 hybrid | step 1/6"
check "80x24: lab10 step 1, the mesh" wait_for "[1] The mesh: dp 2 x tp 2 x pp 2 = 8 ranks in megatron's order"
for pane in timeline pipeline "mesh dp2 pp2 tp2 megatron" metrics narration; do
    check "80x24: lab10 pane: $pane" has "$(screen)" "┌ $pane"
done
# the mesh keeps its rows (the devices give theirs up: the mesh shows the ranks)
s=$(screen)
check "80x24: lab10's header, too long for 80 columns, keeps the help key on the right" bash -c 'head -1 <<<"$1" | grep -qE "^ lab 10 hybrid \| step [0-9]/6 \| .* \| modeled \| 8 devices +\? help ?$"' _ "$s"
check "80x24: lab10, the mesh pane draws both replicas' stage 1" bash -c 'grep -qE "pp1 │ 4[tdp ] 5[tdp ]│ │ 6[tdp ] 7[tdp ]│" <<<"$1"' _ "$s"
check "80x24: lab10, the mesh pane is not too small" bash -c '! grep -q "too small for the mesh" <<<"$1"' _ "$s"
for k in 2 3 4; do
    T send-keys -t t Space
    wait_long "step $k/6 | step (space" >/dev/null
done
check "80x24: lab10 step 4, the DP reduction" wait_for "[4] The DP reduction"
for k in 5 6; do
    T send-keys -t t Space
    wait_long "step $k/6" >/dev/null
done
check "80x24: lab10 step 6, the epoch" wait_for "[6] Epoch 1/1: loss"
loss=$(screen | grep -oE "Epoch 1/1: loss [0-9.]+" | grep -oE "[0-9.]+$")
check "80x24: lab10's curve gives the narration's loss ($loss), epoch 1's" wait_for "loss $loss: epoch 1's"
check "80x24: lab10, the run is over" wait_for "the run is over: q quits"
T send-keys -t t q
check "80x24: lab10, q exits 0" wait_for "EXIT=0"
sleep 0.3
s=$(joined)
check "80x24: lab10, the terminal is restored (icanon, echo)" bash -c 'grep -qE "^(icanon echo|echo icanon) *$" <<<"$1"' _ "$(grep -E 'icanon|echo' <<<"$s" | tail -1)"
check "80x24: lab10, after q, every step and the checks, in order" in_order "$s" "[1] The mesh" \
    "[2] Replica d takes rows" "[3] The pipeline of each (dp, tp)" "[4] The DP reduction" "[5] The step: loss" \
    "[6] Epoch 1/1: loss" "(reference)  PASS  10_hybrid            coords" "(reference)  PASS  10_hybrid            dp_after"
start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab10' --step --epochs 1"
check "120x40: lab10 comes up at step 1/6" wait_for "lab 10 hybrid | step 1/6"
T send-keys -t t Space
wait_long "step 2/6 | step (space" >/dev/null
s=$(screen)
check "120x40: lab10, the mesh pane's replicas" has "$s" "┌ dp 0 ┐ ┌ dp 1 ┐"
check "120x40: lab10, the mesh pane's stage 1 row: ranks 4 5 | 6 7" bash -c 'grep -qE "pp1 │ 4[tdp ] 5[tdp ]│ │ 6[tdp ] 7[tdp ]│" <<<"$1"' _ "$s"
check "120x40: lab10, the pipeline pane: 1f1b, p 2, m 4" has "$s" "┌ pipeline: 1f1b, p 2, m 4"
T send-keys -t t C-c
check "120x40: lab10, Ctrl-C: exit 130" wait_for "EXIT=130"

# --- Lab 11 at 80x24 without colour: stage 0's memory bars full (plain
# DP's 16Ψ), then stage 3 stepped to its end (one epoch): its bars at
# 16Ψ/N with the formula beside them, every step in order, the loss in the
# metrics; q exits 0 and the terminal is restored.
start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab11' --step --epochs 1 --stage 0" 80 24
check "80x24: lab11 --stage 0 comes up at step 1/7" wait_for "lab 11 zero | step 1/7"
wait_for "r0 ppggooooo 1,115.3 KiB" >/dev/null # the memory notes drawn
s=$(screen)
check "80x24: lab11 --stage 0, the memory pane's formula: plain DP's 16Ψ" has "$s" "ZeRO-0, plain DP: 16Ψ = 16·71,376 B = 1,115.3 KiB"
check "80x24: lab11 --stage 0, rank 0's bar is full" has "$s" "r0 ppggooooo 1,115.3 KiB"
T send-keys -t t C-c
check "80x24: lab11 --stage 0, Ctrl-C: exit 130" wait_for "EXIT=130"
start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab11' --step --epochs 1" 80 24
check "80x24: lab11 comes up at step 1/7" wait_for "lab 11 zero | step 1/7"
check "80x24: lab11 step 1, what a replica holds" wait_for "[1] What a replica holds: ZeRO-3 (P_os+g+p) on 8 ranks"
wait_for "r0 pgo░░░░░░░░ 139.4 KiB" >/dev/null
s=$(screen)
for pane in "memory per device" timeline topology metrics narration; do
    check "80x24: lab11 pane: $pane" has "$s" "┌ $pane"
done
check "80x24: lab11, the memory pane's formula: ZeRO-3's 16Ψ/N" has "$s" "ZeRO-3: 16Ψ/N = 16·71,376/8 B = 139.4 KiB"
check "80x24: lab11, rank 0's bar at 1/N" has "$s" "r0 pgo░░░░░░░░ 139.4 KiB"
# each space once the lab waits for it (a key pressed while a step works is not one)
for k in 2 3 4 5 6 7; do
    wait_long "step $((k - 1))/7 | step (space" >/dev/null
    T send-keys -t t Space
    wait_long "step $k/7" >/dev/null
done
check "80x24: lab11 step 7, the epoch" wait_for "[7] Epoch 1/1: loss"
loss=$(screen | grep -oE "Epoch 1/1: loss [0-9.]+" | grep -oE "[0-9.]+$")
check "80x24: lab11's curve gives the narration's loss ($loss), epoch 1's" wait_for "loss $loss: epoch 1's"
check "80x24: lab11, the run is over" wait_for "the run is over: q quits"
T send-keys -t t q
check "80x24: lab11, q exits 0" wait_for "EXIT=0"
sleep 0.3
s=$(joined)
check "80x24: lab11, the terminal is restored (icanon, echo)" bash -c 'grep -qE "^(icanon echo|echo icanon) *$" <<<"$1"' _ "$(grep -E 'icanon|echo' <<<"$s" | tail -1)"
check "80x24: lab11, after q, every step and the checks, in order" in_order "$s" "[1] What a replica holds" \
    "[2] The buckets" "[3] Forward and backward" "[4] The update" "[5] The communication of the step" \
    "[6] The weights against plain data parallelism" "[7] Epoch 1/1: loss" "(reference)  PASS  11_zero              zero1_update"

# --- Ctrl-C in the middle of a run
start "TERM=xterm-256color '$bin/lab06' --play --speed 0.5"
wait_for "step 1/9" >/dev/null
T send-keys -t t C-c
check "Ctrl-C: the lab ends (exit 130, as for SIGINT)" wait_for "EXIT=130"
sleep 0.3
check "Ctrl-C: the terminal is restored" bash -c 'grep -qE "^(icanon echo|echo icanon) *$" <<<"$1"' _ "$(history | grep -E 'icanon|echo' | tail -1)"

# --- Ctrl-C in plain text with a trace: the ranks stop, the file is finished
start "'$bin/lab07' --no-viz --trace '$out/cut-short.json'"
wait_for "[1] 4 ranks" >/dev/null
sleep 1
T send-keys -t t C-c
check "plain text, Ctrl-C: exit 130, 'stopped by the student (Ctrl-C)'" wait_for "EXIT=130"
check "plain text, Ctrl-C: the trace is complete" bash -c "'$bin/paralab-viz' '$out/cut-short.json' </dev/null 2>&1 | grep -q 'events of 4 ranks read'"

# --- a crash while the UI owns the screen: the terminal comes back first
start "TERM=xterm-256color '$bin/lab06' --step"
wait_for "step 1/9" >/dev/null
# this session's lab06 only: another step of make test (viz_pause.sh) may
# run a lab06 --step of the same build at the same time
pid=$(pgrep -s "$(T display -p -t t '#{pane_pid}')" -f "$bin/lab06 --step")
kill -SEGV "$pid" 2>/dev/null
check "a crash (SIGSEGV): the process dies of it (exit 139)" wait_for "EXIT=139"
sleep 0.3
check "a crash: the terminal is restored" bash -c 'grep -qE "^(icanon echo|echo icanon) *$" <<<"$1"' _ "$(history | grep -E 'icanon|echo' | tail -1)"

# --- the run ends by itself, then q
start "TERM=xterm-256color '$bin/lab06' --play --speed 100"
check "play to the end: 'the run is over'" wait_for "the run is over: q quits"
T send-keys -t t q
check "q after the end: the checks are printed" wait_for "PASS  06_collectives"

# --- ASCII twins and no colour
start "TERM=xterm LANG=C NO_COLOR=1 '$bin/lab06' --step"
check "LANG=C: ASCII borders" wait_for "+ devices -"
check "LANG=C: no UTF-8 box glyphs" bash -c '! grep -q "┌" <<<"$1"' _ "$(screen)"
T send-keys -t t q
wait_for "EXIT=0" >/dev/null

# --- TERM dumb, unset, unknown: one line, then plain text
for term in "TERM=dumb" "env -u TERM" "TERM=no-such-terminal"; do
    start "$term '$bin/lab06' --play --speed 100"
    check "$term: exits 0" wait_for "EXIT=0"
    sleep 0.3
    s=$(history)
    check "$term: one line says why" bash -c 'grep -qE "\((TERM=dumb|TERM is not set|TERM=no-such-terminal is unknown to terminfo)[^)]*plain text" <<<"$1"' _ "$s"
    check "$term: plain narration" has "$s" "[9] algbw"
done

# plain-text step mode: Enter steps, q (then Enter) quits as the UI's q does;
# the prompt says Enter is needed (stdin stays line-buffered)
start "env -u TERM '$bin/lab06' --step"
wait_for "(Enter: next step, q then Enter: quit)" >/dev/null
T send-keys -t t q Enter
check "TERM unset, --step: q then Enter stops, exit 0" wait_for "EXIT=0"
check "TERM unset, --step: q says so" has "$(history)" "stopped by the student"
# an empty line and a blank one step; a line whose first non-blank character
# is q quits (" q": once a step)
start "env -u TERM '$bin/lab06' --step"
wait_for "[1] " >/dev/null
T send-keys -t t Enter
check "TERM unset, --step: Enter steps to [2]" wait_for "[2] "
T send-keys -t t -l ' '
T send-keys -t t Enter
check "TERM unset, --step: a space then Enter steps to [3]" wait_for "[3] "
T send-keys -t t -l ' q'
T send-keys -t t Enter
check "TERM unset, --step: a space, q, Enter stops, exit 0" wait_for "EXIT=0"
s=$(history)
check "TERM unset, --step: ' q' says so, no step [4]" bash -c \
    'grep -qF "stopped by the student" <<<"$1" && ! grep -qF "[4] " <<<"$1"' _ "$s"

# --- a pipe: plain text, no escape bytes
piped=$(TERM=xterm-256color "$bin/lab06" 2>&1 | cat)
check "piped: plain text, no escape bytes" bash -c '! grep -q $'"'"'\x1b'"'"' <<<"$1" && grep -q "\[9\] algbw" <<<"$1"' _ "$piped"

# --- replay
"$bin/lab06" --no-viz --trace "$out/run.json" >/dev/null
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/paralab-viz' '$out/run.json'"
check "replay: the UI comes up" wait_for "replay"
s=$(screen)
check "replay: the timeline and the topology" bash -c 'grep -q "timeline" <<<"$1" && grep -q "topology" <<<"$1"' _ "$s"
check "replay: the file's clock in the header and on the timeline" bash -c 'grep -q "clock modeled (recorded)" <<<"$1" && grep -q "timeline (modeled clock" <<<"$1"' _ "$s"
T send-keys -t t q
check "replay: q exits 0" wait_for "EXIT=0"
# --- replays of every lab, sparse (Labs 01-05: a few events, idle between
# them) and dense (06, 07), at 80x24 without colour, as a student replays
# one: step 1 paused with its narration, space to step 2 with its own, p to
# play, + up to x100; then the header must reach the last step and "replay
# done" with the last step's narration and the metrics the lab pushed. A
# replay takes N steps / speed seconds (docs/visualiser.md): this waits as
# long as the step number moves, and fails only after 60 s without progress.
wait_end() { # $1: the text of the end; fails when the header's step stops moving
    local last="" same=0 s step
    while [ $same -lt 300 ]; do
        s=$(screen)
        has "$s" "$1" && return 0
        step=$(grep -oE 'step [0-9]+/[0-9]+' <<<"$s" | head -1)
        if [ "$step" = "$last" ]; then same=$((same + 1)); else same=0; last=$step; fi
        sleep 0.2
    done
    echo "  (stuck at '$last')"
    return 1
}
# the lines of the pane titled $2 on the screen $1, borders included
pane_text() {
    local LC_ALL=C.UTF-8 col=-1 w=0 line pre box out=""
    while IFS= read -r line; do
        if [ $col -lt 0 ]; then
            if [[ $line == *"┌ $2 "* ]]; then
                pre=${line%%"┌ $2 "*}
                col=${#pre}
                box=${line:col}
                box=${box%%┐*}
                w=$((${#box} + 1))
            fi
        else
            [ "${line:col:1}" = "└" ] && break
            out+="${line:col:w}"$'\n'
        fi
    done <<<"$1"
    printf '%s' "$out"
}
# the first words of step k's narration, as the lab printed it ([k] text)
words() { grep -m1 "^\[$2\] " "$1" | cut -c$((${#2} + 4))- | cut -c1-40 | sed 's/ [^ ]*$//'; }
for spec in "01:" "02:--size 256" "03:--size 65536" "04:--size 128" "05:--size 65536" "06:" \
    "07:--epochs 1" "08:--epochs 1"; do
    n=${spec%%:*}
    opts=${spec#*:}
    # shellcheck disable=SC2086
    "$bin/lab$n" --no-viz $opts --trace "$out/lab$n.json" >"$out/lab$n.out" 2>&1
    steps=$(grep -c '^\[[0-9]' "$out/lab$n.out")
    check "lab$n --trace: a trace of $steps steps" test "$steps" -ge 4
    check "lab$n trace: every track's slices nest (paralab-viz --check)" \
        "$bin/paralab-viz" --check "$out/lab$n.json"
    start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/paralab-viz' --step '$out/lab$n.json'" 80 24
    check "lab$n replay: step 1/$steps, paused" wait_for "step 1/$steps | replay paused"
    check "lab$n replay: step 1's narration ($(words "$out/lab$n.out" 1))" \
        wait_for "$(words "$out/lab$n.out" 1)"
    T send-keys -t t Space
    check "lab$n replay: space, step 2/$steps" wait_for "step 2/$steps | replay paused"
    check "lab$n replay: step 2's narration ($(words "$out/lab$n.out" 2))" \
        wait_for "$(words "$out/lab$n.out" 2)"
    # each event under the step it was recorded in: Lab 06's step 2 is a
    # send/recv, its step 3's broadcast must not show yet
    [ "$n" = 06 ] && check "lab06 replay: step 2 holds no collective (the broadcast is step 3's)" \
        has "$(screen)" "0 collectives (0 B)"
    T send-keys -t t p
    check "lab$n replay: p plays (x1.0)" wait_for "replay x1.0"
    T send-keys -t t +
    check "lab$n replay: + (x2.0)" wait_for "replay x2.0"
    for _ in 1 2 3 4 5 6; do T send-keys -t t +; done
    check "lab$n replay: reaches its end, step $steps/$steps" wait_end "step $steps/$steps | replay done"
    check "lab$n replay: the last step's narration ($(words "$out/lab$n.out" "$steps"))" \
        wait_for "$(words "$out/lab$n.out" "$steps")"
    metric=$(grep -m1 -o '"cat":"metric"' "$out/lab$n.json" >/dev/null &&
        grep -m1 -oE '"name":"[^"]*","cat":"metric"' "$out/lab$n.json" | cut -d'"' -f4)
    case $n in 02 | 07 | 08) check "lab$n trace: its metric values (${metric:-none})" test -n "$metric" ;; esac
    if [ -n "$metric" ]; then
        check "lab$n replay: the metrics pane shows $metric, replayed" \
            grep -qE "^│$metric -?[0-9]" <<<"$(pane_text "$(screen)" metrics)"
    fi
    T send-keys -t t q
    check "lab$n replay: q exits 0" wait_for "EXIT=0"
done
head -c 1000 "$out/run.json" >"$out/cut.json"
err=$("$bin/paralab-viz" "$out/cut.json" 2>&1); rc=$?
check "replay of a truncated file: exit 2 with file:line:column" bash -c 'test "$1" = 2 && grep -qE "cut.json:[0-9]+:[0-9]+: not a trace" <<<"$2"' _ "$rc" "$err"
err=$("$bin/paralab-viz" "$out" 2>&1); rc=$?
check "replay of a directory: exit 2, says so" bash -c 'test "$1" = 2 && grep -q "is a directory, not a trace file" <<<"$2"' _ "$rc" "$err"
err=$("$bin/paralab-viz" --bogus 2>&1); rc=$?
check "paralab-viz --bogus: exit 2, names it" bash -c 'test "$1" = 2 && grep -q "unknown option .--bogus." <<<"$2"' _ "$rc" "$err"
err=$("$bin/paralab-viz" "$out/none.json" 2>&1); rc=$?
check "replay of a missing file: exit 2 naming it" bash -c 'test "$1" = 2 && grep -q "none.json: cannot read it" <<<"$2"' _ "$rc" "$err"
rm -rf "$out"
echo "viz tty: $fails failed"
[ $fails = 0 ]
