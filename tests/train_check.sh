#!/usr/bin/env bash
# tests/train_check.sh BUILD_DIR — paralab-train as a user runs it: it
# reaches at least 95 % test accuracy on the digits within 20 epochs (batch
# 64, seed 0), prints a line per epoch with loss, accuracies and samples/s,
# writes plain lines when not on a terminal, and refuses bad input: a bad
# option (exit 2 naming it), a missing data file (exit 2, "make data"), a
# malformed one (exit 2 naming the line). Then the block model (--model
# blocks): >= 95 % test accuracy after BLOCK_EPOCHS epochs (default 8),
# its first epochs equal to Lab 08's on one device, bad values refused.
set -uo pipefail
bin=${1:-build/sim/bin}
fails=0
check() { # description, then a command that must succeed
    local what=$1
    shift
    if "$@"; then echo "PASS  $what"; else echo "FAIL  $what"; fails=$((fails + 1)); fi
}
out=$("$bin/paralab-train" 2>&1); rc=$?
check "paralab-train runs (exit $rc)" test $rc = 0
epochs=$(grep -c '^epoch ' <<<"$out")
check "one line per epoch, 20 of them ($epochs)" test "$epochs" = 20
check "each epoch line has loss, train, test and samples/s" \
    bash -c 'grep "^epoch " <<<"$1" | grep -vqE "loss [0-9.]+  train +[0-9.]+ %  test +[0-9.]+ % \(loss [0-9.]+\)  [0-9]+ samples/s$" && exit 1; exit 0' _ "$out"
acc=$(sed -n 's/^test accuracy \([0-9.]*\) %.*/\1/p' <<<"$out")
check "test accuracy ${acc:-?} % >= 95 %" awk -v a="${acc:-0}" 'BEGIN { exit !(a >= 95) }'
check "no escape bytes when not on a terminal" bash -c '! grep -q $'"'"'\x1b'"'"' <<<"$1"' _ "$out"
err=$("$bin/paralab-train" --epochs 0 2>&1); rc=$?
check "--epochs 0: exit 2 naming it ($rc)" bash -c 'test "$1" = 2 && grep -q -- "--epochs" <<<"$2"' _ "$rc" "$err"
err=$("$bin/paralab-train" --optimizer adam 2>&1); rc=$?
check "--optimizer adam: exit 2, says the choices" bash -c 'test "$1" = 2 && grep -q "adamw or sgd" <<<"$2"' _ "$rc" "$err"
err=$("$bin/paralab-train" --data /nonexistent.csv 2>&1); rc=$?
check "a missing data file: exit 2, run make data" bash -c 'test "$1" = 2 && grep -q "make data" <<<"$2"' _ "$rc" "$err"
bad=$(mktemp)
head -3 data/digits.csv >"$bad"
echo "1,2,3" >>"$bad"
err=$("$bin/paralab-train" --data "$bad" 2>&1); rc=$?
check "a malformed data file: exit 2 naming line 4" bash -c 'test "$1" = 2 && grep -q ":4: 3 columns, expected 65" <<<"$2"' _ "$rc" "$err"
rm -f "$bad"

# The block model (paralab/blocks.h) on one device: the reference of Labs
# 08-11. Its numbers are Lab 08's on one rank (lab08 --devices 1, the same
# shuffle, drop-last and test set), epoch by epoch.
epochs_of() { # paralab-train's epoch lines: "E loss train test"
    sed -n 's|^epoch *\([0-9]*\)/[0-9]*  loss \([0-9.]*\)  train *\([0-9.]*\) %  test *\([0-9.]*\) %.*|\1 \2 \3 \4|p' <<<"$1"
}
lab08_epochs() { # lab08's epoch steps, the same fields
    sed -n 's|^\[[0-9]*\] Epoch \([0-9]*\)/[0-9]*: loss \([0-9.]*\) (the mean over [0-9]* samples), train \([0-9.]*\) %, test \([0-9.]*\) %\.$|\1 \2 \3 \4|p' <<<"$1"
}
BLOCK_EPOCHS=${BLOCK_EPOCHS:-8}
out=$("$bin/paralab-train" --model blocks --epochs "$BLOCK_EPOCHS" 2>&1); rc=$?
check "--model blocks --epochs $BLOCK_EPOCHS runs (exit $rc)" test $rc = 0
check "--model blocks: the header names the model (h 64, f 256, 2 blocks, 71370 parameters)" \
    bash -c 'head -1 <<<"$1" | grep -q "^paralab-train: the block model (h 64, f 256, 2 blocks), 1438 training and 359 test samples, batch 64 (22 steps an epoch, the last 30 samples dropped), AdamW, weight decay 0.01 (lr 0.002), seed 0, 71370 parameters$"' _ "$out"
epochs=$(grep -c '^epoch ' <<<"$out")
check "--model blocks: one line per epoch, $BLOCK_EPOCHS of them ($epochs)" test "$epochs" = "$BLOCK_EPOCHS"
check "--model blocks: each epoch line has loss, train, test and samples/s" \
    bash -c 'grep "^epoch " <<<"$1" | grep -vqE "loss [0-9.]+  train +[0-9.]+ %  test +[0-9.]+ % \(loss [0-9.]+\)  [0-9]+ samples/s$" && exit 1; exit 0' _ "$out"
acc=$(sed -n 's/^test accuracy \([0-9.]*\) %.*/\1/p' <<<"$out")
check "--model blocks, $BLOCK_EPOCHS epochs: test accuracy ${acc:-?} % >= 95 %" awk -v a="${acc:-0}" 'BEGIN { exit !(a >= 95) }'
mine=$(epochs_of "$out" | head -2)
lab=$(lab08_epochs "$("$bin/lab08" --devices 1 --no-viz --solution --epochs 2 2>&1)")
check "--model blocks: epochs 1-2 are lab08 --devices 1's (${mine//$'\n'/; } vs ${lab//$'\n'/; })" \
    bash -c 'test -n "$1" && test "$(wc -l <<<"$1")" = 2 && test "$1" = "$2"' _ "$mine" "$lab"
out=$("$bin/paralab-train" --model blocks --hidden 32 --layers 3 --batch 100 --seed 7 --epochs 1 2>&1)
mine=$(epochs_of "$out")
lab=$(lab08_epochs "$("$bin/lab08" --devices 1 --no-viz --solution --hidden 32 --layers 3 --batch 100 --seed 7 --epochs 1 2>&1)")
check "--model blocks --hidden 32 --layers 3 --batch 100 --seed 7: lab08's epoch ($mine vs $lab)" \
    bash -c 'test -n "$1" && test "$1" = "$2"' _ "$mine" "$lab"
check "--hidden 32 --layers 3: the header says h 32, f 128, 3 blocks, 14 steps, 38 dropped" \
    bash -c 'head -1 <<<"$1" | grep -q "the block model (h 32, f 128, 3 blocks), .*batch 100 (14 steps an epoch, the last 38 samples dropped)"' _ "$out"
refused() { # description, the text the message must hold, then the options
    local what=$1 want=$2
    shift 2
    local err rc
    err=$("$bin/paralab-train" "$@" 2>&1); rc=$?
    check "$what: exit 2 ($rc), says '$want'" \
        bash -c 'test "$1" = 2 && grep -qF -- "$2" <<<"$3" && ! grep -q "^epoch" <<<"$3"' _ "$rc" "$want" "$err"
}
refused "--model blocks --hidden 0" "--hidden '0' is not a whole number from 1 to 1024" --model blocks --hidden 0
refused "--model blocks --hidden 2000" "--hidden '2000' is not a whole number from 1 to 1024" --model blocks --hidden 2000
refused "--model blocks --hidden abc" "--hidden 'abc' is not a whole number" --model blocks --hidden abc
refused "--model blocks --layers 65" "--layers '65' is not a whole number from 1 to 64" --model blocks --layers 65
refused "--model transformer" "--model 'transformer': choose mlp or blocks" --model transformer
refused "--model blocks --optimizer sgd" "--optimizer sgd: the block model trains with AdamW only" --model blocks --optimizer sgd
refused "--hidden 32 without --model blocks" "--hidden 32: only the block model" --hidden 32
# On a terminal (tmux, 80x24, NO_COLOR): the progress line of the running
# epoch, then Ctrl-C: it stops after the batch, says so, exit status 130.
if command -v tmux >/dev/null; then
    sock="paralab-train-test-$$"
    root=$(cd "$(dirname "$0")/.." && pwd)
    abs=$(cd "$bin" && pwd)
    # shellcheck source=tests/tmux_lib.sh
    . "$root/tests/tmux_lib.sh"
    T new-session -d -s t -x 80 -y 24 "cd '$root' && NO_COLOR=1 '$abs/paralab-train' --model blocks; echo EXIT=\$?; sleep 60"
    check "--model blocks on a terminal: the progress line (epoch 1/20  batch k/22)" wait_screen t "/22  loss"
    T send-keys -t t C-c
    stopped() { wait_screen t "EXIT=130" && has "$(T capture-pane -p -t t)" "stopped by Ctrl-C in epoch"; }
    check "--model blocks, Ctrl-C: 'stopped by Ctrl-C in epoch N', exit 130" stopped
    T kill-session -t t 2>/dev/null
else
    echo "SKIP  --model blocks on a terminal: no tmux"
fi
echo "train check: $fails failed"
[ $fails = 0 ]
