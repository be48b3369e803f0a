#!/usr/bin/env bash
# tests/viz_pipeline.sh BUILD_DIR — the pipeline pane in a real terminal
# (tmux), replayed as a student replays a trace of a pipeline-parallel run
# (Lab 09). Two traces made here on the modeled clock, each with its
# "paralab pipeline" metadata:
#   * GPipe, p = 8 stages, m = 32 micro-batches, every forward 1 us and
#     every backward 2 us, with the sends and receives between neighbouring
#     stages (4 KiB activations forward, 2 KiB gradients back), each
#     stage's activations ("activations s<r>", 1 KiB a micro-batch, up to
#     32 KiB) and a loss; 4 narrated steps (the cut, the forwards, the
#     backwards, the optimizer step). Bubble: 7/39 = 17.9 % of the time, 7/32 = 21.9 %
#     of the ideal time.
#   * ZB-H1, p = 2, m = 2, F, B and W 1 us each: 1/7 = 14.3 % of the time.
# At 120x40 (colour) and 80x24 without colour (NO_COLOR): step 2 paused
# (the forwards only, as they came: the bubble line says the iteration is
# in progress), then played to the end; every stage's row, the bubble
# line, the gauges' peaks, the links' bytes on the topology, the loss (not
# the activations) in the metrics. The ZB-H1 one
# at 80x24 in ASCII (LANG=C): its F, B and W boxes cell by cell. A corrupt
# pipeline is refused naming its event. About 15 s.
set -uo pipefail
bin=$(cd "${1:-build/sim/bin}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
fails=0
sock="paralab-pipeline-test-$$"
# shellcheck source=tests/tmux_lib.sh
. "$root/tests/tmux_lib.sh"
screen() { T capture-pane -p -t t; }
wait_for() { wait_screen t "$1"; }
out=$(mktemp -d)
start() { # command line, in a fresh window $2 x $3
    start_t "$2" "$3" "cd '$root' && $1; echo EXIT=\$?; sleep 60"
}

# GPipe, p stages, m micro-batches: F of micro-batch k on stage s at s + k
# (1 us), the backwards from the last forward's end, stage p-1 first, each
# 2 us: B of k on stage s at m + p - 1 + 2 (p - 1 - s) + 2 k.
gpipe() { # p m
    awk -v P="$1" -v M="$2" '
    function x(name, cat, pid, tid, ts, dur, args) {
        printf "{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%s,\"dur\":%s,\"args\":{%s}},\n", name, cat, pid, tid, ts, dur, args
    }
    function note(name, pid, ts, v) {
        printf "{\"ph\":\"C\",\"cat\":\"metric\",\"name\":\"%s\",\"pid\":%d,\"ts\":%s,\"args\":{\"value\":%s}},\n", name, pid, ts, v
    }
    function mark(step, ts, text) {
        printf "{\"ph\":\"i\",\"cat\":\"narration\",\"name\":\"step %d\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":%s,\"args\":{\"step\":%d,\"text\":\"%s\"}},\n", step, ts, step, text
    }
    BEGIN {
        printf "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"paralab\",\"clock\":\"modeled\",\"ranks\":%d},\"traceEvents\":[\n", P
        print "{\"ph\":\"M\",\"name\":\"paralab\",\"pid\":0,\"args\":{\"title\":\"lab 09 pipeline parallel\",\"steps\":4,\"panes\":220,\"stream_lanes\":0}},"
        printf "{\"ph\":\"M\",\"name\":\"paralab pipeline\",\"pid\":0,\"args\":{\"stages\":%d,\"micro_batches\":%d,\"chunks\":1,\"schedule\":\"gpipe\",\"of_ideal\":%.17g,\"of_total\":%.17g}},\n", P, M, (P - 1) / M, (P - 1) / (M + P - 1)
        mark(1, 0, "Cut the model into " P " stages.")
        mark(2, 0, "The forwards: micro-batch k enters stage s at time s + k.")
        for (s = 0; s < P; s++)
            for (k = 0; k < M; k++) {
                t = s + k
                x("F" k, "forward", s, 0, t, 1, "\"lane\":0,\"micro_batch\":" k ",\"layer\":" s ",\"step\":2")
                note("activations s" s, s, t + 1, 1024 * (k + 1))
                if (s < P - 1) {
                    x("send to " s + 1, "send", s, 2, t + 1, 0.1, "\"lane\":2,\"peer\":" s + 1 ",\"bytes\":4096,\"step\":2")
                    x("recv from " s, "recv", s + 1, 2, t + 1, 0.1, "\"lane\":2,\"peer\":" s ",\"bytes\":4096,\"step\":2")
                }
            }
        mark(3, M + P - 1, "The backwards, from the last stage.")
        for (s = P - 1; s >= 0; s--)
            for (k = 0; k < M; k++) {
                t = M + P - 1 + 2 * (P - 1 - s) + 2 * k
                x("BW" k, "backward", s, 0, t, 2, "\"lane\":0,\"micro_batch\":" k ",\"layer\":" s ",\"step\":3")
                note("activations s" s, s, t + 2, 1024 * (M - 1 - k))
                if (s > 0) {
                    x("send to " s - 1, "send", s, 2, t + 2, 0.1, "\"lane\":2,\"peer\":" s - 1 ",\"bytes\":2048,\"step\":3")
                    x("recv from " s, "recv", s - 1, 2, t + 2, 0.1, "\"lane\":2,\"peer\":" s ",\"bytes\":2048,\"step\":3")
                }
            }
        end = M + P - 1 + 2 * (M + P - 1)
        mark(4, end, "The optimizer step.")
        for (s = 0; s < P; s++) x("optimizer", "optimizer", s, 0, end, 1, "\"lane\":0,\"step\":4")
        note("loss", 0, end + 1, 2.25)
        print "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":\"rank 0\"}}"
        print "]}"
    }'
}
gpipe 8 32 >"$out/gpipe.json"

# ZB-H1, p = 2, m = 2 (as tests/unit/test_pipeline_pane.c draws it)
zb() {
    cat <<'EOF'
{"displayTimeUnit":"ns","otherData":{"generator":"paralab","clock":"modeled","ranks":2},"traceEvents":[
{"ph":"M","name":"paralab","pid":0,"args":{"title":"lab 09 pipeline parallel","steps":1,"panes":220,"stream_lanes":0}},
{"ph":"M","name":"paralab pipeline","pid":0,"args":{"stages":2,"micro_batches":2,"chunks":1,"schedule":"zb-h1","of_ideal":0.16666666666666666,"of_total":0.14285714285714285}},
{"ph":"i","cat":"narration","name":"step 1","s":"g","pid":0,"tid":0,"ts":0,"args":{"step":1,"text":"ZB-H1: the W ops fill the cool-down."}},
{"ph":"X","name":"F0","cat":"forward","pid":0,"tid":0,"ts":0,"dur":1,"args":{"lane":0,"micro_batch":0,"layer":0,"step":1}},
{"ph":"X","name":"F1","cat":"forward","pid":0,"tid":0,"ts":1,"dur":1,"args":{"lane":0,"micro_batch":1,"layer":0,"step":1}},
{"ph":"X","name":"F0","cat":"forward","pid":1,"tid":0,"ts":1,"dur":1,"args":{"lane":0,"micro_batch":0,"layer":1,"step":1}},
{"ph":"X","name":"B0","cat":"backward","pid":1,"tid":0,"ts":2,"dur":1,"args":{"lane":0,"micro_batch":0,"layer":1,"step":1}},
{"ph":"X","name":"F1","cat":"forward","pid":1,"tid":0,"ts":3,"dur":1,"args":{"lane":0,"micro_batch":1,"layer":1,"step":1}},
{"ph":"X","name":"B0","cat":"backward","pid":0,"tid":0,"ts":3,"dur":1,"args":{"lane":0,"micro_batch":0,"layer":0,"step":1}},
{"ph":"X","name":"B1","cat":"backward","pid":1,"tid":0,"ts":4,"dur":1,"args":{"lane":0,"micro_batch":1,"layer":1,"step":1}},
{"ph":"X","name":"W0","cat":"weight-grad","pid":0,"tid":0,"ts":4,"dur":1,"args":{"lane":0,"micro_batch":0,"layer":0,"step":1}},
{"ph":"X","name":"W0","cat":"weight-grad","pid":1,"tid":0,"ts":5,"dur":1,"args":{"lane":0,"micro_batch":0,"layer":1,"step":1}},
{"ph":"X","name":"B1","cat":"backward","pid":0,"tid":0,"ts":5,"dur":1,"args":{"lane":0,"micro_batch":1,"layer":0,"step":1}},
{"ph":"X","name":"W1","cat":"weight-grad","pid":1,"tid":0,"ts":6,"dur":1,"args":{"lane":0,"micro_batch":1,"layer":1,"step":1}},
{"ph":"X","name":"W1","cat":"weight-grad","pid":0,"tid":0,"ts":6,"dur":1,"args":{"lane":0,"micro_batch":1,"layer":0,"step":1}}
]}
EOF
}
zb >"$out/zb.json"
check "the traces read and their slices nest (paralab-viz --check)" bash -c \
    "'$bin/paralab-viz' --check '$out/gpipe.json' >/dev/null && '$bin/paralab-viz' --check '$out/zb.json' >/dev/null"

# --- 120x40, colour: step 1 (the forwards as they came), then to the end
start "TERM=xterm-256color LANG=C.UTF-8 '$bin/paralab-viz' --step '$out/gpipe.json'" 120 40
check "120x40: the replay at step 1/4, paused" wait_for "step 1/4 | replay paused"
check "120x40: step 1: no op yet" has "$(screen)" "│no forward/backward events yet"
T send-keys -t t Space
check "120x40: space: step 2/4" wait_for "step 2/4 | replay paused"
s=$(screen)
# the forwards alone: their 39 us drawn on the iteration's expected 78 us
# (the formula's total time, the backwards guessed as long as the forwards
# until one has run), 1.18 cells a us; stage 0 idle from 32 us to the
# newest op's end, 39; nothing after it yet
check "120x40: step 2: the pipeline pane across the top" has "$s" "┌ pipeline: gpipe, p 8, m 32, iteration 1, 39.0 us "
# the iteration runs: no bubble figure from its forwards alone
check "120x40: step 2: the bubble line says the iteration is in progress" has "$s" \
    "│bubble: iteration 1 in progress     "
check "120x40: step 2: stage 0's forwards, then idle until the newest op's end" has "$s" \
    "│s0  FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF········                                               ██████████   32.0 KiB│"
check "120x40: step 2: stage 7 idle for its first 7 us" has "$s" \
    "│s7  ········FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF                                               ██████████   32.0 KiB│"
T send-keys -t t p
for _ in 1 2 3 4 5 6; do T send-keys -t t +; done
check "120x40: played to its end" wait_for "step 4/4 | replay done"
s=$(screen)
check "120x40: the title: the iteration's 117 us" has "$s" "┌ pipeline: gpipe, p 8, m 32, iteration 1, 117.0 us "
check "120x40: the bubble line, both normalisations, with the formula's" has "$s" \
    "│bubble 17.9 % of the time (formula 17.9 %), 21.9 % of the ideal time (formula 21.9 %)"
check "120x40: stage 0: the forwards, 21 us of bubble, the backwards" has "$s" \
    "│s0  FFFFFFFFFFFFFFFFFFFFFFFFF·················BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB ░░░░░░░░░│   32.0 KiB│"
check "120x40: stage 7: its backwards right after its forwards, then idle" has "$s" \
    "│s7  ······FFFFFFFFFFFFFFFFFFFFFFFFFBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB··········· ░░░░░░░░░│   32.0 KiB│"
check "120x40: all 8 stages' rows" bash -c 'for r in 0 1 2 3 4 5 6 7; do grep -q "│s$r  " <<<"$1" || exit 1; done' _ "$s"
# compressed (117 us in 92 cells): the boxes are letters alone, and the legend says so; the
# backward named as the narration's lists name it (BW)
check "120x40: the legend" has "$s" "│F forward  B backward (BW)  · bubble  │ activations' peak "
check "120x40: the sends and receives on the topology, both ways: 14 links" bash -c \
    'grep -qF "0>1 128.0 KiB" <<<"$1" && grep -qF "1>0 64.0 KiB" <<<"$1" && grep -qF "links 1-3 of 14, up/down" <<<"$1"' _ "$s"
check "120x40: the metrics: the loss, not the activations" bash -c \
    'grep -qF "loss 2.2500, the last of 1" <<<"$1" && ! grep -q "activations s" <<<"$1"' _ "$s"
T send-keys -t t q
check "120x40: q exits 0" wait_for "EXIT=0"

# --- 80x24, no colour: compressed further, every stage still there
start "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 '$bin/paralab-viz' '$out/gpipe.json'" 80 24
for _ in 1 2 3 4 5 6; do T send-keys -t t +; done
check "80x24: played to its end" wait_for "step 4/4 | replay done"
s=$(screen)
check "80x24: the bubble line" has "$s" "│bubble 17.9 % of the time (formula 17.9 %); 21.9 % of ideal (formula 21.9 %)  │"
check "80x24: stage 0" has "$s" "│s0  FFFFFFFFFFFFFFF··········BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB ░░░░░│   32.0 KiB│"
check "80x24: stage 7" has "$s" "│s7  ···FFFFFFFFFFFFFFFFBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB······· ░░░░░│   32.0 KiB│"
check "80x24: all 8 stages' rows" bash -c 'for r in 0 1 2 3 4 5 6 7; do grep -q "│s$r  " <<<"$1" || exit 1; done' _ "$s"
check "80x24: the legend in the border" has "$s" "└─F forward  B backward (BW)  · bubble  │ activations' peak─"
T send-keys -t t q
check "80x24: q exits 0" wait_for "EXIT=0"

# --- ZB-H1 at 80x24 in ASCII, no colour: F, B and W, the bubble against the formula
start "TERM=xterm-256color LANG=C NO_COLOR=1 '$bin/paralab-viz' '$out/zb.json'" 80 24
check "zb-h1 80x24 ASCII: played to its end" wait_for "step 1/1 | replay done"
s=$(screen)
check "zb-h1: the bubble line" has "$s" "|bubble 14.3 % of the time (formula 14.3 %); 16.7 % of ideal (formula 16.7 %)  |"
check "zb-h1: stage 0's boxes" has "$s" "|s0  F0F1..B0W0B1W1 "
check "zb-h1: stage 1's boxes" has "$s" "|s1  ..F0B0F1B1W0W1 "
# the boxes numbered: the legend says what the number is
check "zb-h1: the legend" has "$s" "|Fk forward of micro-batch k  Bk input grad  Wk weight grad  . bubble "
T send-keys -t t q
check "zb-h1: q exits 0" wait_for "EXIT=0"

# --- a corrupt pipeline: refused, naming its event
sed 's/"micro_batches":32,"chunks":1/"micro_batches":0,"chunks":1/' "$out/gpipe.json" >"$out/bad.json"
err=$("$bin/paralab-viz" "$out/bad.json" 2>&1)
rc=$?
check "a corrupt pipeline: exit 2, naming its event and what is allowed" bash -c \
    'test "$1" = 2 && grep -qF "bad.json: event 1: a pipeline (\"paralab pipeline\") needs args.stages (1..64), micro_batches (1..4096)" <<<"$2"' _ "$rc" "$err"
rm -rf "$out"
echo "viz pipeline: $fails failed"
[ $fails = 0 ]
