#!/usr/bin/env bash
# tests/viz_pause.sh BUILD_DIR — a student who stops to read. In tmux, as a
# student runs them: Lab 06 (80x24, NO_COLOR), Lab 07 (--epochs 1), Lab 08
# and Lab 09 (80x24, NO_COLOR, --epochs 1) in step mode, and Lab 06 in play
# mode paused with p, each left alone for 30 s — a reader's pause, longer
# than the deadlock watchdog's 10 s — then advanced to the end: the run must
# be over (not "failed"), q must exit 0 and the checks must be printed. The
# five pauses run at once: about 45 s in all.
# Meanwhile, each step's work must show under its own narration: Lab 01's
# step 1 (host code) has no kernel yet, Lab 07's step 7 (the replicas'
# check) holds one batch's collectives, not the whole epoch's.
set -uo pipefail
bin=$(cd "${1:-build/sim/bin}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
fails=0
sock="paralab-pause-test-$$"
# shellcheck source=tests/tmux_lib.sh
. "$root/tests/tmux_lib.sh"
screen() { T capture-pane -p -t "$1"; }
history() { T capture-pane -p -t "$1" -S -2000; }
# wait_for SESSION TEXT: until the screen shows TEXT (tmux_lib.sh's wait_screen)
wait_for() { wait_screen "$1" "$2"; }
start() { # session, size, command line
    T new-session -d -s "$1" -x "${2%x*}" -y "${2#*x}" \
        "cd '$root' && $3; echo EXIT=\$?; sleep 600"
}
# advance SESSION: space until the run is over (or failed), at most 40 presses
advance() {
    for _ in $(seq 40); do
        s=$(screen "$1")
        if has "$s" "| done |"; then return 0; fi
        T send-keys -t "$1" Space
        sleep 0.3
    done
}

start s1 80x24 "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab01' --step"
start s6 80x24 "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab06' --step"
start s7 120x40 "TERM=xterm-256color LANG=C.UTF-8 '$bin/lab07' --step --epochs 1"
start s8 80x24 "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab08' --step --epochs 1"
start s9 80x24 "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/lab09' --step --epochs 1"
start sp 120x40 "TERM=xterm-256color LANG=C.UTF-8 '$bin/lab06' --play"
check "lab06 --step: step 1/9" wait_for s6 "step 1/9"
check "lab07 --step: step 1/8" wait_for s7 "step 1/8"
check "lab08 --step: step 1/11" wait_for s8 "step 1/11"
check "lab09 --step: step 1/7" wait_for s9 "step 1/7"
check "lab06 --play: step 1/9, playing" wait_for sp "play x1.0"
T send-keys -t sp p
check "lab06 --play: p pauses (step mode)" wait_for sp "step (space: next)"
check "lab01 --step: step 1/4" wait_for s1 "step 1/4"
sleep 1
check "lab01 step 1 (host code only): no event yet" has "$(screen s1)" "0 events, 0 collectives"
T send-keys -t s1 Space
check "lab01 step 2: the kernel's result" wait_for s1 "1000 of 1000 elements correct"
# 6: the recorded run for the pictures (a kernel), the copies, memset and kernel.
# A frame may draw the narration before the step's last events (the UI reads
# the events first): wait for the count, then see that it stays
check "lab01 step 2: its pictures' kernel, copies, memset and kernel (6 events)" wait_for s1 "6 events, 0 collectives"
sleep 1
check "lab01 step 2: still 6 events a second later" has "$(screen s1)" "6 events, 0 collectives"
T send-keys -t s1 q
check "lab01 --step: q exits 0" wait_for s1 "EXIT=0"
T send-keys -t s6 Space
T send-keys -t s7 Space
check "lab06 --step: space, step 2/9" wait_for s6 "step 2/9"
check "lab07 --step: space, step 2/8" wait_for s7 "step 2/8"
# Lab 08 waits in step 4, between block 0's forward and the others: the
# other ranks wait for rank 0 in the next collective meanwhile
for k in 2 3 4; do
    T send-keys -t s8 Space
    wait_for s8 "step $k/11 | step (space" >/dev/null
done
check "lab08 --step: space, step 4/11" wait_for s8 "step 4/11 | step (space: next)"
# Lab 09 waits in step 3 (the bubble), after the first step's schedule ran:
# the stages wait for stage 0 at the next step
for k in 2 3; do
    T send-keys -t s9 Space
    wait_for s9 "step $k/7 | step (space" >/dev/null
done
check "lab09 --step: space, step 3/7" wait_for s9 "step 3/7 | step (space: next)"
sleep 30 # the student reads
for s in s6 s7 s8 s9 sp; do
    check "$s: still waiting after 30 s" has "$(screen $s)" "step (space: next)"
done
# the ranks the watchdog would have stopped were waiting for rank 0: the
# next step shows whether they are still there
T send-keys -t s6 Space
T send-keys -t s7 Space
check "lab06 --step: space after the pause, step 3/9 (not done, not failed)" \
    wait_for s6 "step 3/9 | step (space: next)"
check "lab07 --step: space after the pause, step 3/8 (not done, not failed)" \
    wait_for s7 "step 3/8 | step (space: next)"
T send-keys -t s8 Space
check "lab08 --step: space after the pause, step 5/11 (not done, not failed)" \
    wait_for s8 "step 5/11 | step (space: next)"
advance s8
T send-keys -t s9 Space
check "lab09 --step: space after the pause, step 4/7 (not done, not failed)" \
    wait_for s9 "step 4/7 | step (space: next)"
advance s9
T send-keys -t sp p
check "lab06 --play: p again plays on" wait_for sp "play x1.0"
for _ in 1 2 3 4 5 6; do T send-keys -t sp +; done
advance s6
for k in 4 5 6 7; do
    T send-keys -t s7 Space
    wait_for s7 "step $k/8 | step (space" >/dev/null
done
check "lab07 step 7: one batch's 7 collectives (6 buckets, the loss), not the epoch's" \
    wait_for s7 " 7 collectives"
sleep 1
check "lab07 step 7: still 7 collectives a second later" has "$(screen s7)" " 7 collectives"
T send-keys -t s7 Space
check "lab07 step 8: the epoch's narration" wait_for s7 "Epoch 1/1: loss"
check "lab07 step 8: the epoch's 155 collectives (22 batches x 7, the accuracy)" \
    wait_for s7 "155 collectives"
sleep 1
check "lab07 step 8: still 155 collectives a second later" has "$(screen s7)" "155 collectives"
advance s7
# (at 80x24 the narration pane is too short for the status line: the header says done)
check "lab06 --step: the run is over" wait_for s6 "step 9/9 | done |"
check "lab07 --step: the run is over" wait_for s7 "the run is over: q quits"
check "lab06 --play: the run is over" wait_for sp "the run is over: q quits"
check "lab08 --step: the run is over" wait_for s8 "step 11/11 | done |"
check "lab09 --step: the run is over" wait_for s9 "step 7/7 | done |"
for s in s6 s7 s8 s9 sp; do T send-keys -t $s q; done
for s in s6 s7 s8 s9 sp; do check "$s: q exits 0" wait_for $s "EXIT=0"; done
sleep 0.3
check "lab06 --step: the checks are printed" has "$(history s6)" "PASS  06_collectives"
check "lab07 --step: the checks are printed" has "$(history s7)" "PASS  07_data_parallel     sync_gradients"
check "lab06 --play: the checks are printed" has "$(history sp)" "PASS  06_collectives"
check "lab08 --step: the checks are printed" has "$(history s8)" "PASS  08_tensor_parallel   row_parallel"
check "lab09 --step: the checks are printed" has "$(history s9)" "PASS  09_pipeline_parallel one_f_one_b"
for s in s6 s7 s8 s9 sp; do
    check "$s: no deadlock reported" bash -c '! grep -q "deadlock" <<<"$1"' _ "$(history $s)"
done
echo "viz pause: $fails failed"
[ $fails = 0 ]
