#!/usr/bin/env bash
# tests/viz_zero.sh BUILD_DIR — the memory pane in a real terminal (tmux),
# replayed as a student replays a trace of a ZeRO run (Lab 11). A trace
# made here on the modeled clock: ZeRO-3 over 8 ranks ("paralab zero"
# metadata: Ψ = 71,370, padded to Ψ_pad = 71,376), each rank's memory as
# the metric notes "mem params r<k>", "mem grads r<k>", "mem optim r<k>"
# say (its 1/8 of everything: 35,688 B of parameters, 71,376 B of AdamW
# state; two working gradient buckets of 66,560 B each beside its 35,688
# B of gradients; a parameter bucket of 66,560 B while gathered), and 4
# narrated steps:
#   1. the shards (the notes at create);
#   2. the forward: a bucket gathered, the next prefetched (2 held), one
#      given back (1 held at the step's end);
#   3. the backward: gathered again (2 held), gradients reduce-scattered,
#      the buckets given back (0 held);
#   4. the update (AdamW on the shard) and a loss.
# At 120x40 (colour), step by step: the bars (64 cells for plain DP's
# 16Ψ_pad) as each step leaves them — rank 0's parameters 2 cells, 6 with
# a bucket held, 2 again; its bytes and the working buckets beside it —
# the formula, the legend with the padding; no pipeline pane (the
# forwards' layer is a unit, not a stage). At 80x24 with NO_COLOR, played
# to its end: every rank's bar in its letters (two columns of 25 cells),
# the formula, the legend; the metrics pane's loss, no memory curve. In
# ASCII (LANG=C) at 80x24: Psi and *. A ZeRO run whose Ψ_pad is not a
# multiple of N, refused. About 10 s.
set -uo pipefail
bin=$(cd "${1:-build/sim/bin}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
fails=0
sock="paralab-zero-test-$$"
# shellcheck source=tests/tmux_lib.sh
. "$root/tests/tmux_lib.sh"
screen() { T capture-pane -p -t t; }
wait_for() { wait_screen t "$1"; }
out=$(mktemp -d)
start() { # command line, in a fresh window $2 x $3
    start_t "$2" "$3" "cd '$root' && $1; echo EXIT=\$?; sleep 60"
}

# the trace: $1 Ψ_pad
zero3() {
    awk -v PAD="$1" '
    function x(name, cat, pid, ts, dur, args) {
        printf "{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%s,\"dur\":%s,\"args\":{%s}},\n", name, cat, pid, cat == "forward" || cat == "backward" || cat == "optimizer" ? 0 : 2, ts * 1e6, dur * 1e6, args
    }
    function note(name, ts, v) {
        printf "{\"ph\":\"C\",\"cat\":\"metric\",\"name\":\"%s\",\"pid\":0,\"ts\":%s,\"args\":{\"value\":%s}},\n", name, ts * 1e6, v
    }
    function mark(step, ts, text) {
        printf "{\"ph\":\"i\",\"cat\":\"narration\",\"name\":\"step %d\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":%s,\"args\":{\"step\":%d,\"text\":\"%s\"}},\n", step, ts * 1e6, step, text
    }
    # every rank holds k parameter buckets at ts
    function held(k, ts) { for (r = 0; r < 8; r++) note("mem params r" r, ts, 35688 + k * 66560) }
    BEGIN {
        print "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"paralab\",\"clock\":\"modeled\",\"ranks\":8},\"traceEvents\":["
        print "{\"ph\":\"M\",\"name\":\"paralab\",\"pid\":0,\"args\":{\"title\":\"lab 11 zero\",\"steps\":4,\"panes\":668,\"stream_lanes\":0}},"
        printf "{\"ph\":\"M\",\"name\":\"paralab zero\",\"pid\":0,\"args\":{\"stage\":3,\"ranks\":8,\"psi\":71370,\"psi_pad\":%d,\"sgd\":0}},\n", PAD
        mark(1, 0, "ZeRO-3 over 8 ranks: each keeps its 1/8 of the parameters, gradients and AdamW state.")
        for (r = 0; r < 8; r++) {
            note("mem params r" r, 0, 35688)
            note("mem grads r" r, 0, 35688 + 2 * 66560)
            note("mem optim r" r, 0, 71376)
        }
        mark(2, 1, "Forward: each unit gathered before it runs, the next prefetched, given back after.")
        for (r = 0; r < 8; r++) {
            x("all_gather in", "collective", r, 1, 0.2, "\"lane\":2,\"bytes\":66560,\"step\":2")
            x("F in", "forward", r, 1.2, 0.4, "\"lane\":0,\"micro_batch\":0,\"layer\":0,\"step\":2")
            x("all_gather b0", "collective", r, 1.5, 0.2, "\"lane\":2,\"bytes\":66560,\"step\":2")
            x("F b0", "forward", r, 1.7, 0.4, "\"lane\":0,\"micro_batch\":0,\"layer\":1,\"step\":2")
        }
        held(1, 1); held(2, 1.5); held(1, 2.1)
        mark(3, 3, "Backward: gathered again; each unit\047s gradients reduce-scattered.")
        for (r = 0; r < 8; r++) {
            x("all_gather b0", "collective", r, 3, 0.2, "\"lane\":2,\"bytes\":66560,\"step\":3")
            x("B b0", "backward", r, 3.2, 0.6, "\"lane\":0,\"micro_batch\":0,\"layer\":1,\"step\":3")
            x("reduce_scatter b0", "collective", r, 3.8, 0.4, "\"lane\":2,\"bytes\":66560,\"step\":3")
        }
        held(2, 3); held(0, 4.2)
        mark(4, 5, "Update: AdamW on each rank\047s shard; nothing gathered.")
        for (r = 0; r < 8; r++) x("update", "optimizer", r, 5, 0.5, "\"lane\":0,\"step\":4")
        note("loss", 5.5, 2.25)
        print "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":\"rank 0\"}}"
        print "]}"
    }'
}
zero3 71376 >"$out/zero3.json"
check "the trace reads and its slices nest (paralab-viz --check)" bash -c \
    "'$bin/paralab-viz' --check '$out/zero3.json' >/dev/null"

# --- 120x40, colour, step by step: the bars as each step leaves them
light() { printf '░%.0s' $(seq "$1"); } # n empty cells of a bar
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/paralab-viz' --step '$out/zero3.json'" 120 40
check "120x40: the replay at step 1/4, paused" wait_for "step 1/4 | replay paused"
s=$(screen)
check "120x40: the memory pane across the top, the scale in its title" has "$s" \
    "┌ memory per device · a full bar is plain DP's 16Ψ = 1,115.3 KiB ─"
check "120x40: the formula" has "$s" "│ZeRO-3: 16Ψ/N = 16·71,376/8 B = 139.4 KiB   "
check "120x40: the legend, each part's term and bytes, the padding" has "$s" \
    "│p params 4Ψ/N = 34.9 KiB  g grads 4Ψ/N = 34.9 KiB  o optim 8Ψ/N = 69.7 KiB  Ψ = 71,370 + 6 padding "
T send-keys -t t Space
check "120x40: space: step 2/4" wait_for "step 2/4 | replay paused"
s=$(screen)
# a bucket held: 35,688 + 66,560 B of parameters, 6 cells of 64
# b: the cells from what a rank holds now to its peak so far (2 parameter buckets held while
# the next unit's gather was prefetched): what the buckets took inside the step
check "120x40: step 2: rank 0 holds a parameter bucket, b to its peak" has "$s" \
    "│r0 ppppppgggggggggoooobbbb$(light 41) 334.4 KiB (+195.0 KiB in working buckets)"
check "120x40: step 2: the legend says what b is" has "$s" \
    "o optim 8Ψ/N = 69.7 KiB  b working buckets at their peak "
check "120x40: step 2: no pipeline pane (a ZeRO run's forwards are of its units, not stages)" \
    bash -c '! grep -qF "┌ pipeline" <<<"$1"' _ "$s"
check "120x40: step 2: every rank's bar" bash -c \
    'for r in 1 2 3 4 5 6 7; do grep -qF "│r$r ppppppgggggggggoooobbbb$2 334.4 KiB" <<<"$1" || exit 1; done' _ "$s" "$(light 41)"
T send-keys -t t Space
check "120x40: space: step 3/4" wait_for "step 3/4 | replay paused"
s=$(screen)
check "120x40: step 3: the buckets given back: 2 cells of parameters, b to the step's peak" has "$s" \
    "│r0 ppgggggggggoooobbbbbbbb$(light 41) 269.4 KiB (+130.0 KiB in working buckets)"
T send-keys -t t Space
check "120x40: space: step 4/4" wait_for "step 4/4 | replay"
s=$(screen)
check "120x40: step 4: as step 3 left them" bash -c \
    'for r in 0 1 2 3 4 5 6 7; do grep -qF "│r$r ppgggggggggoooobbbbbbbb$2 269.4 KiB" <<<"$1" || exit 1; done' _ "$s" "$(light 41)"
T send-keys -t t q
check "120x40: q exits 0" wait_for "EXIT=0"

# --- 80x24, no colour, played to its end: every rank's letters
start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/paralab-viz' '$out/zero3.json'" 80 24
for _ in 1 2 3 4 5 6; do T send-keys -t t +; done
check "80x24: played to its end" wait_for "step 4/4 | replay done"
s=$(screen)
check "80x24: the pane whole: title, formula, two columns of ranks, legend" bash -c '
    grep -qF "┌ memory per device · a full bar is plain DP'"'"'s 16Ψ = 1,115.3 KiB ──────────────┐" <<<"$1" &&
    grep -qF "│ZeRO-3: 16Ψ/N = 16·71,376/8 B = 139.4 KiB                                     │" <<<"$1" &&
    for r in 0 1 2 3; do
        grep -qF "│r$r pggggoobb░░░░░░░░░░░░░░░░ 269.4 KiB  r$((r + 4)) pggggoobb░░░░░░░░░░░░░░░░ 269.4 KiB│" <<<"$1" || exit 1
    done &&
    grep -qF "│p params 4Ψ/N  g grads 4Ψ/N  o optim 8Ψ/N  b buckets'"'"' peak                    │" <<<"$1"' _ "$s"
check "80x24: the metrics pane: the loss, no memory curve" bash -c \
    'grep -qF "loss" <<<"$1" && ! grep -qE "mem (params|grads|optim)" <<<"$1"' _ "$s"
T send-keys -t t q
check "80x24: q exits 0" wait_for "EXIT=0"

# --- ASCII, no colour
start "TERM=xterm-256color LANG=C NO_COLOR=1 '$bin/paralab-viz' '$out/zero3.json'" 80 24
for _ in 1 2 3 4 5 6; do T send-keys -t t +; done
check "ASCII 80x24: played to its end" wait_for "step 4/4 | replay done"
s=$(screen)
check "ASCII 80x24: Psi and *, the bars in letters and dots" bash -c '
    grep -qF "|ZeRO-3: 16Psi/N = 16*71,376/8 B = 139.4 KiB " <<<"$1" &&
    grep -qF "|r0 pggggoobb................ 269.4 KiB  r4 pggggoobb................ 269.4 KiB|" <<<"$1" &&
    grep -qF "|p params 4Psi/N  g grads 4Psi/N  o optim 8Psi/N  b buckets'"'"' peak              |" <<<"$1"' _ "$s"
T send-keys -t t q
check "ASCII: q exits 0" wait_for "EXIT=0"

# --- refused: Ψ_pad not a multiple of the ranks
zero3 71377 >"$out/bad-pad.json"
err=$("$bin/paralab-viz" "$out/bad-pad.json" 2>&1)
rc=$?
check "a Ψ_pad of 71,377 for 8 ranks: exit 2, naming it" bash -c \
    'test "$1" = 2 && grep -qF "bad-pad.json: memory pane: psi_pad 71377 for 8 ranks: allowed are multiples of the ranks" <<<"$2"' _ "$rc" "$err"
rm -rf "$out"
echo "viz zero: $fails failed"
[ $fails = 0 ]
