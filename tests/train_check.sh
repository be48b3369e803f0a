#!/usr/bin/env bash
# tests/train_check.sh BUILD_DIR — paralab-train as a user runs it: it
# reaches at least 95 % test accuracy on the digits within 20 epochs (batch
# 64, seed 0), prints a line per epoch with loss, accuracies and samples/s,
# writes plain lines when not on a terminal, and refuses bad input: a bad
# option (exit 2 naming it), a missing data file (exit 2, "make data"), a
# malformed one (exit 2 naming the line).
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
echo "train check: $fails failed"
[ $fails = 0 ]
