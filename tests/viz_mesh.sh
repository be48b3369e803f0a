#!/usr/bin/env bash
# tests/viz_mesh.sh BUILD_DIR — the mesh pane in a real terminal (tmux),
# replayed as a student replays a trace of a hybrid (DP x TP x PP) run
# (Lab 10). A trace made here on the modeled clock: 8 ranks on a mesh of
# dp 2 x tp 2 x pp 2 ("paralab mesh" metadata, Megatron's order: rank =
# tp + 2 (dp + 2 pp)), a pipeline of 2 stages drawn from the ranks at dp 0,
# tp 0 (stage_ranks [0, 4]) and 4 narrated steps:
#   1. the mesh (no event);
#   2. stage 0's forward on ranks 0-3 (1 s), then its TP all-reduce (args.group
#      "tp", 0.5 s, with a ring step);
#   3. stage 0 sends to stage 1 (group "pp"), stage 1's forward and
#      backward on ranks 4-7, its send back (pp) and stage 0's backward;
#   4. the DP all-reduce of the gradients on every rank (group "dp").
# At 200x50 (colour), step by step: after each step the group lit is that
# step's (TP {0, 1}, then PP {0, 4}, then DP {0, 2}), never a later step's;
# every rank in its cell; the pipeline pane a row per stage. At 80x24 with
# NO_COLOR (played to the end): the pane's text whole, the lit cells
# lettered, the timeline's group letters and legend. The same trace in
# picotron's order at 80x24 in ASCII (LANG=C): rank = tp + 2 (pp + 2 dp), DP
# {0, 4}. A trace whose mesh is not the world's, and a bad group, refused.
# About 10 s.
set -uo pipefail
bin=$(cd "${1:-build/sim/bin}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
fails=0
sock="paralab-mesh-test-$$"
# shellcheck source=tests/tmux_lib.sh
. "$root/tests/tmux_lib.sh"
screen() { T capture-pane -p -t t; }
wait_for() { wait_screen t "$1"; }
out=$(mktemp -d)
start() { # command line, in a fresh window $2 x $3
    start_t "$2" "$3" "cd '$root' && $1; echo EXIT=\$?; sleep 60"
}

# the trace; $1 the order
hybrid() {
    awk -v ORDER="$1" '
    function x(name, cat, pid, ts, dur, args) {
        printf "{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%s,\"dur\":%s,\"args\":{%s}},\n", name, cat, pid, cat == "forward" || cat == "backward" ? 0 : 2, ts * 1e6, dur * 1e6, args
    }
    function mark(step, ts, text) {
        printf "{\"ph\":\"i\",\"cat\":\"narration\",\"name\":\"step %d\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":%s,\"args\":{\"step\":%d,\"text\":\"%s\"}},\n", step, ts * 1e6, step, text
    }
    # the world rank of (dp, pp, tp) in the order
    function rank(d, p, t) { return ORDER == "megatron" ? t + 2 * (d + 2 * p) : t + 2 * (p + 2 * d) }
    BEGIN {
        print "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"paralab\",\"clock\":\"modeled\",\"ranks\":8},\"traceEvents\":["
        print "{\"ph\":\"M\",\"name\":\"paralab\",\"pid\":0,\"args\":{\"title\":\"lab 10 hybrid\",\"steps\":4,\"panes\":460,\"stream_lanes\":0}},"
        printf "{\"ph\":\"M\",\"name\":\"paralab pipeline\",\"pid\":0,\"args\":{\"stages\":2,\"micro_batches\":1,\"chunks\":1,\"schedule\":\"gpipe\",\"of_ideal\":1,\"of_total\":0.5,\"stage_ranks\":[%d,%d]}},\n", rank(0, 0, 0), rank(0, 1, 0)
        printf "{\"ph\":\"M\",\"name\":\"paralab mesh\",\"pid\":0,\"args\":{\"dp\":2,\"tp\":2,\"pp\":2,\"order\":\"%s\"}},\n", ORDER
        mark(1, 0, "The mesh: 8 ranks as dp 2 x tp 2 x pp 2.")
        mark(2, 0, "Stage 0 forward, its TP all-reduce.")
        for (d = 0; d < 2; d++) for (t = 0; t < 2; t++) {
            r = rank(d, 0, t)
            x("F0", "forward", r, 0, 1, "\"lane\":0,\"micro_batch\":0,\"layer\":0,\"step\":2")
            x("all_reduce", "collective", r, 1, 0.5, "\"lane\":2,\"group\":\"tp\",\"bytes\":1024,\"step\":2")
            x("all_reduce step 0", "ring step", r, 1.1, 0.2, "\"lane\":2,\"group\":\"tp\",\"peer\":" rank(d, 0, 1 - t) ",\"bytes\":512,\"step\":2")
        }
        mark(3, 1.5, "Stage 0 sends to stage 1 (PP); stage 1 forward and backward; the gradient back.")
        for (d = 0; d < 2; d++) for (t = 0; t < 2; t++) {
            a = rank(d, 0, t); b = rank(d, 1, t)
            x("send", "send", a, 1.5, 0.5, "\"lane\":2,\"group\":\"pp\",\"peer\":" b ",\"bytes\":4096,\"step\":3")
            x("recv", "recv", b, 1.5, 0.5, "\"lane\":2,\"group\":\"pp\",\"peer\":" a ",\"bytes\":4096,\"step\":3")
            x("F0", "forward", b, 2, 1, "\"lane\":0,\"micro_batch\":0,\"layer\":1,\"step\":3")
            x("B0", "backward", b, 3, 1, "\"lane\":0,\"micro_batch\":0,\"layer\":1,\"step\":3")
            x("send", "send", b, 4, 0.2, "\"lane\":2,\"group\":\"pp\",\"peer\":" a ",\"bytes\":4096,\"step\":3")
            x("recv", "recv", a, 4, 0.2, "\"lane\":2,\"group\":\"pp\",\"peer\":" b ",\"bytes\":4096,\"step\":3")
            x("B0", "backward", a, 4.2, 1, "\"lane\":0,\"micro_batch\":0,\"layer\":0,\"step\":3")
        }
        mark(4, 5.2, "The DP all-reduce of the gradients.")
        for (r = 0; r < 8; r++)
            x("all_reduce bucket 0", "collective", r, 5.2, 1, "\"lane\":2,\"group\":\"dp\",\"bytes\":8192,\"step\":4")
        print "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":\"rank 0\"}}"
        print "]}"
    }'
}
hybrid megatron >"$out/megatron.json"
hybrid picotron >"$out/picotron.json"
check "the traces read and their slices nest (paralab-viz --check)" bash -c \
    "'$bin/paralab-viz' --check '$out/megatron.json' >/dev/null && '$bin/paralab-viz' --check '$out/picotron.json' >/dev/null"

# --- 200x50, colour, step by step: each step's group, never a later one's
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/paralab-viz' --step '$out/megatron.json'" 200 50
check "200x50: the replay at step 1/4, paused" wait_for "step 1/4 | replay paused"
s=$(screen)
check "200x50: step 1: the mesh pane, its title" has "$s" "┌ mesh dp2 pp2 tp2 megatron "
check "200x50: step 1: dp 0's stage 0 holds ranks 0 1, dp 1's 2 3" has "$s" "│pp0 │ 0  1 │ │ 2  3 │"
check "200x50: step 1: stage 1: 4 5 and 6 7" has "$s" "│pp1 │ 4  5 │ │ 6  7 │"
check "200x50: step 1: no group yet" has "$s" "│now: no group communicating"
T send-keys -t t Space
check "200x50: space: step 2/4" wait_for "step 2/4 | replay paused"
s=$(screen)
check "200x50: step 2: rank 0's TP group {0, 1} lit" has "$s" "│pp0 │ 0t 1t│ │ 2  3 │"
check "200x50: step 2: the legend names it" has "$s" "│t TP group (now)  d DP group  p PP group"
check "200x50: step 2: the line under it" has "$s" "│now: TP group {0 1} all_reduce"
check "200x50: step 2: rank 0's sends of the step, per group" has "$s" "│[2] r0 sent: t 1 d 0 p 0 (collectives, sends)"
check "200x50: step 2: the narration numbered, as the live run's ([2])" has "$s" "│[2] Stage 0 forward, its TP all-reduce."
check "200x50: step 2: no PP or DP cell lit yet (no peeking ahead)" bash -c '! grep -qE "│pp[0-9] │.*[0-9][dp]" <<<"$1"' _ "$s"
T send-keys -t t Space
check "200x50: space: step 3/4" wait_for "step 3/4 | replay paused"
s=$(screen)
check "200x50: step 3: PP group {0, 4} lit (stage 0, stage 1)" bash -c \
    'grep -qF "│pp0 │ 0p 1 │ │ 2  3 │" <<<"$1" && grep -qF "│pp1 │ 4p 5 │ │ 6  7 │" <<<"$1"' _ "$s"
check "200x50: step 3: the line under the legend" has "$s" "│now: PP group {0 4} recv"
check "200x50: step 3: rank 0's send on the PP group (its receive not counted)" has "$s" "│[3] r0 sent: t 0 d 0 p 1"
check "200x50: step 3: no DP cell lit yet" bash -c '! grep -qE "│pp[0-9] │.*[0-9]d" <<<"$1"' _ "$s"
check "200x50: step 3: the pipeline pane, a row per stage" bash -c \
    'grep -qF "│s0  " <<<"$1" && grep -qF "│s1  " <<<"$1" && ! grep -qF "│s2  " <<<"$1"' _ "$s"
check "200x50: step 3: the timeline's group legend" has "$s" "t TP group  p PP group"
T send-keys -t t Space
check "200x50: space: step 4/4" wait_for "step 4/4 | replay"
s=$(screen)
check "200x50: step 4: DP group {0, 2} lit" has "$s" "│pp0 │ 0d 1 │ │ 2d 3 │"
check "200x50: step 4: the line under the legend" has "$s" "│now: DP group {0 2} all_reduce bucket 0"
check "200x50: step 4: rank 0's DP all-reduce" has "$s" "│[4] r0 sent: t 0 d 1 p 0"
check "200x50: step 4: every group in the timeline's legend" has "$s" "t TP group  d DP group  p PP group"
T send-keys -t t q
check "200x50: q exits 0" wait_for "EXIT=0"

# --- 80x24, no colour, played to its end: the pane whole, the letters
start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/paralab-viz' '$out/megatron.json'" 80 24
for _ in 1 2 3 4 5 6; do T send-keys -t t +; done
check "80x24: played to its end" wait_for "step 4/4 | replay done"
s=$(screen)
check "80x24: the mesh pane, whole" bash -c 'grep -qF "┌ mesh dp2 pp2 tp2 megatron ───────┐" <<<"$1" &&
    grep -qF "│    ┌ dp 0 ┐ ┌ dp 1 ┐             │" <<<"$1" &&
    grep -qF "│pp0 │ 0d 1 │ │ 2d 3 │             │" <<<"$1" &&
    grep -qF "│pp1 │ 4  5 │ │ 6  7 │             │" <<<"$1" &&
    grep -qF "│    └──────┘ └──────┘             │" <<<"$1" &&
    grep -qF "│t TP group  d DP group  p PP group│" <<<"$1"' _ "$s"
check "80x24: the pipeline pane: 2 stages" bash -c \
    'grep -qF "│s0  " <<<"$1" && grep -qF "│s1  " <<<"$1" && ! grep -qF "│s2  " <<<"$1"' _ "$s"
check "80x24: the timeline: rank 0's traffic in its groups' letters" bash -c \
    'grep -qE "│r0 +[^│]*t[^│]*p[^│]*d" <<<"$1"' _ "$s"
check "80x24: the timeline's group legend in its border" has "$s" "└ t TP group  d DP group  p PP group"
T send-keys -t t q
check "80x24: q exits 0" wait_for "EXIT=0"

# --- picotron's order, 80x24, ASCII, no colour
start "TERM=xterm-256color LANG=C NO_COLOR=1 '$bin/paralab-viz' '$out/picotron.json'" 80 24
for _ in 1 2 3 4 5 6; do T send-keys -t t +; done
check "picotron 80x24 ASCII: played to its end" wait_for "step 4/4 | replay done"
s=$(screen)
check "picotron: dp 0 holds 0 1 / 2 3, dp 1 4 5 / 6 7; DP group {0, 4} lit" bash -c \
    'grep -qF "+ mesh dp2 pp2 tp2 picotron -------+" <<<"$1" &&
    grep -qF "|pp0 | 0d 1 | | 4d 5 |             |" <<<"$1" &&
    grep -qF "|pp1 | 2  3 | | 6  7 |             |" <<<"$1"' _ "$s"
T send-keys -t t q
check "picotron: q exits 0" wait_for "EXIT=0"

# --- refused: a mesh that is not the world's, a group that is not one
sed 's/"pp":2,"order"/"pp":3,"order"/' "$out/megatron.json" >"$out/bad-mesh.json"
err=$("$bin/paralab-viz" "$out/bad-mesh.json" 2>&1)
rc=$?
check "a mesh of 12 ranks in a trace of 8: exit 2, naming the numbers" bash -c \
    'test "$1" = 2 && grep -qF "bad-mesh.json: mesh pane: dp x tp x pp = 2 x 2 x 3 = 12 ranks for a world of 8" <<<"$2"' _ "$rc" "$err"
sed '0,/"group":"dp"/s//"group":"xx"/' "$out/megatron.json" >"$out/bad-group.json"
err=$("$bin/paralab-viz" "$out/bad-group.json" 2>&1)
rc=$?
check "a group \"xx\": exit 2, naming it" bash -c \
    'test "$1" = 2 && grep -qF "args.group \"xx\" is not a group: use \"tp\", \"dp\" or \"pp\"" <<<"$2"' _ "$rc" "$err"
rm -rf "$out"
echo "viz mesh: $fails failed"
[ $fails = 0 ]
