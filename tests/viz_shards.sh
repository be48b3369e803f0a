#!/usr/bin/env bash
# tests/viz_shards.sh BUILD_DIR — the shards pane in a real terminal (tmux),
# replayed as a student replays a trace of a tensor-parallel run: a small
# trace made here (4 ranks; Lab 08's matrices W1 64x256 column-parallel, W2
# 256x64 row-parallel, Wc 64x12 column-parallel with 2 padded classes, as
# "paralab matrix" metadata; 3 narrated steps: block 0's forward, its
# backward, the head), at 80x24 without colour and at 120x40: step 1
# paused, space to step 2 (the shard being multiplied: block 0's backward
# through W1), then played to the end (the head's Wc). The same file
# without the matrices (an older paralab's) replays without the pane; a
# broken matrix is refused naming its event. About 10 s.
set -uo pipefail
bin=$(cd "${1:-build/sim/bin}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
fails=0
sock="paralab-shards-test-$$"
# shellcheck source=tests/tmux_lib.sh
. "$root/tests/tmux_lib.sh"
screen() { T capture-pane -p -t t; }
wait_for() { wait_screen t "$1"; }
out=$(mktemp -d)
start() { # command line, in a fresh window $2 x $3
    start_t "$2" "$3" "cd '$root' && $1; echo EXIT=\$?; sleep 60"
}

# the trace: per rank a matmul event around each linear layer (kind forward
# or backward, name the matrix, args.layer the block; the head's has none)
matrices='{"ph":"M","name":"paralab matrix","pid":0,"args":{"name":"W1","rows":64,"cols":256,"split":"column","padded_cols":0,"tp":4}},
{"ph":"M","name":"paralab matrix","pid":0,"args":{"name":"W2","rows":256,"cols":64,"split":"row","padded_cols":0,"tp":4}},
{"ph":"M","name":"paralab matrix","pid":0,"args":{"name":"Wc","rows":64,"cols":12,"split":"column","padded_cols":2,"tp":4}},'
events=""
for r in 0 1 2 3; do
    events+="{\"ph\":\"X\",\"name\":\"W1\",\"cat\":\"forward\",\"pid\":$r,\"tid\":0,\"ts\":1,\"dur\":2,\"args\":{\"lane\":0,\"layer\":0,\"step\":1}},
{\"ph\":\"X\",\"name\":\"W2\",\"cat\":\"forward\",\"pid\":$r,\"tid\":0,\"ts\":4,\"dur\":2,\"args\":{\"lane\":0,\"layer\":0,\"step\":1}},
{\"ph\":\"X\",\"name\":\"all_reduce\",\"cat\":\"collective\",\"pid\":$r,\"tid\":2,\"ts\":6,\"dur\":2,\"args\":{\"lane\":2,\"bytes\":4096,\"step\":1}},
{\"ph\":\"X\",\"name\":\"W2\",\"cat\":\"backward\",\"pid\":$r,\"tid\":0,\"ts\":11,\"dur\":2,\"args\":{\"lane\":0,\"layer\":0,\"step\":2}},
{\"ph\":\"X\",\"name\":\"W1\",\"cat\":\"backward\",\"pid\":$r,\"tid\":0,\"ts\":14,\"dur\":2,\"args\":{\"lane\":0,\"layer\":0,\"step\":2}},
{\"ph\":\"X\",\"name\":\"Wc\",\"cat\":\"forward\",\"pid\":$r,\"tid\":0,\"ts\":21,\"dur\":2,\"args\":{\"lane\":0,\"step\":3}},
"
done
trace() { # $1: the matrices' metadata (or nothing)
    cat <<EOF
{"displayTimeUnit":"ns","otherData":{"generator":"paralab","clock":"measured","ranks":4},"traceEvents":[
{"ph":"M","name":"paralab","pid":0,"args":{"title":"lab 08 tensor parallel","steps":3,"panes":188,"stream_lanes":0}},
$1
$events{"ph":"i","cat":"narration","name":"step 1","s":"g","pid":0,"tid":0,"ts":0,"args":{"step":1,"text":"Forward through block 0."}},
{"ph":"i","cat":"narration","name":"step 2","s":"g","pid":0,"tid":0,"ts":10,"args":{"step":2,"text":"Backward through block 0."}},
{"ph":"i","cat":"narration","name":"step 3","s":"g","pid":0,"tid":0,"ts":20,"args":{"step":3,"text":"The head."}}
]}
EOF
}
trace "$matrices" >"$out/tp.json"
trace "" >"$out/old.json"
check "the trace reads and its slices nest (paralab-viz --check)" "$bin/paralab-viz" --check "$out/tp.json"

# --- 80x24, no colour: the pane under the timeline, a row of words per step
start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/paralab-viz' --step '$out/tp.json'" 80 24
check "80x24: the replay at step 1/3, paused" wait_for "step 1/3 | replay paused"
s=$(screen)
check "80x24: the shards pane, t = 4" has "$s" "┌ shards (tp 4) "
check "80x24: nothing multiplied yet" has "$s" "│no matmul yet"
check "80x24: every shard of W1, W2 and Wc in its rank's digit" bash -c \
    'grep -qF "│00112233  00000  0123  │" <<<"$1" && grep -qF "│          33333        │" <<<"$1"' _ "$s"
T send-keys -t t Space
check "80x24: space, step 2/3" wait_for "step 2/3 | replay paused"
s=$(screen)
check "80x24: block 0's backward, through W1 last" has "$s" "│block 0 bwd: W1 shards │"
check "80x24: ◀ at W1" has "$s" "│◀W1        W2     Wc   │"
T send-keys -t t p
for _ in 1 2 3 4 5 6; do T send-keys -t t +; done
check "80x24: played to its end" wait_for "step 3/3 | replay done"
s=$(screen)
check "80x24: the head's forward, through Wc" has "$s" "│head fwd: Wc shards    │"
check "80x24: ▶ at Wc" has "$s" "│ W1        W2    ▶Wc   │"
T send-keys -t t q
check "80x24: q exits 0" wait_for "EXIT=0"

# --- 120x40: the shapes and the shards' words
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/paralab-viz' --step '$out/tp.json'" 120 40
check "120x40: step 1/3" wait_for "step 1/3 | replay paused"
T send-keys -t t Space
wait_for "step 2/3 | replay paused" >/dev/null
T send-keys -t t Space
check "120x40: space, space: step 3/3" wait_for "step 3/3 | replay paused"
T send-keys -t t Space
check "120x40: space: the end" wait_for "step 3/3 | replay done"
s=$(screen)
check "120x40: the sentence" has "$s" "│head forward: each rank's Wc shard      │"
check "120x40: the shapes over the drawings" has "$s" "│ W1 64x256     W2     ▶Wc               │"
check "120x40: W1's words" has "$s" "│W1 64x256: 4 column shards of 64x64     │"
check "120x40: W2's words" has "$s" "│W2 256x64: 4 row shards of 64x64        │"
T send-keys -t t q
check "120x40: q exits 0" wait_for "EXIT=0"

# --- an older file: no matrices, no shards pane; it still plays to its end
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/paralab-viz' '$out/old.json'" 120 40
check "without the matrices: it plays to its end" wait_for "step 3/3 | replay done"
check "without the matrices: no shards pane" bash -c '! grep -q "shards" <<<"$1" && grep -q "┌ timeline" <<<"$1"' _ "$(screen)"
T send-keys -t t q
wait_for "EXIT=0" >/dev/null

# --- a broken matrix: refused, naming its event
sed 's/"cols":12,"split":"column","padded_cols":2/"cols":12,"split":"column","padded_cols":12/' \
    "$out/tp.json" >"$out/bad.json"
err=$("$bin/paralab-viz" "$out/bad.json" 2>&1)
rc=$?
check "a broken matrix: exit 2, naming it and what is allowed" bash -c \
    'test "$1" = 2 && grep -qF "bad.json: shards pane: matrix 2 (Wc): padded_cols 12, tp 4: allowed are padded_cols 0..cols-1" <<<"$2"' _ "$rc" "$err"
rm -rf "$out"
echo "viz shards: $fails failed"
[ $fails = 0 ]
