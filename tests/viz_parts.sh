#!/usr/bin/env bash
# tests/viz_parts.sh BUILD_DIR — a multi-process run's trace, merged by
# paralab-viz. Under mpirun each process writes its part of --trace FILE
# (FILE.p0.json, FILE.p1.json: pl_trace_path_for_process); here the parts
# are made without MPI, as two processes of two ranks each would write them:
# Lab 06's trace of 4 ranks split by rank, each part with its header (run,
# process, processes, first_rank, part_ranks: pl_trace_writer_open_part) and
# its own ranks' events. Then:
#   --check on the parts (given in either order, or by the --trace name)
#     says the two parts of the run are merged, events of every one of the
#     world's 4 ranks, and the same slices, tracks, ranks and narrated steps
#     as the whole trace;
#   the replay without a terminal reads as many events of 4 ranks as the
#     whole trace's;
#   the replay in a terminal (tmux, 120x40) shows every rank's device;
#   parts of different runs, or a part missing: refused with the exact
#     message, exit 2.
set -uo pipefail
bin=$(cd "${1:-build/sim/bin}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
fails=0
sock="paralab-parts-test-$$"
# shellcheck source=tests/tmux_lib.sh
. "$root/tests/tmux_lib.sh"
out=$(mktemp -d /tmp/paralab-parts.XXXXXX)
trap 'T kill-server 2>/dev/null; rm -rf "$out"' EXIT

"$bin/lab06" --solution --no-viz --play --speed 100 -n 4 --max-bytes 4096 \
    --trace "$out/whole.json" >"$out/lab06.log" 2>&1 ||
    { echo "FAIL  lab06 -n 4 --trace: exit $?"; cat "$out/lab06.log"; exit 1; }

# split RUN_ID IN OUT_BASE: process p of 2 writes ranks 2p, 2p+1 into OUT_BASE.pP.json
split() {
    python3 - "$@" <<'EOF'
import json, sys
run, src, base = sys.argv[1:4]
whole = json.load(open(src))
world = whole["otherData"]["ranks"]
procs, per = 2, world // 2
for p in range(procs):
    lo, hi = p * per, p * per + per
    other = dict(whole["otherData"], run=run, process=p, processes=procs,
                 first_rank=lo, part_ranks=per)
    ev = []
    for e in whole["traceEvents"]:
        own = "pid" in e and lo <= e["pid"] < hi
        if e["ph"] == "M" and e.get("name") in ("process_name", "thread_name"):
            keep = own                    # its ranks' names and tracks
        elif e["ph"] == "X" or e.get("cat") == "memory":
            keep = own                    # its ranks' events and device memory
        else:
            keep = True                   # the lab's metadata and narration: every process says them
        if keep:
            ev.append(e)
    json.dump({"displayTimeUnit": whole["displayTimeUnit"], "otherData": other,
               "traceEvents": ev}, open("%s.p%d.json" % (base, p), "w"))
EOF
}
split lab06-1 "$out/whole.json" "$out/run" || { echo "FAIL  splitting the trace"; exit 1; }
split lab06-2 "$out/whole.json" "$out/other" || { echo "FAIL  splitting the trace"; exit 1; }

whole=$("$bin/paralab-viz" --check "$out/whole.json")
check "the whole trace checks" has "$whole" "of 4 ranks, every track's slices nested or apart"
summary=${whole#*whole.json: } # "N slices on M tracks of 4 ranks, ..."
merged="(2 parts of run \"lab06-1\", merged: events of 4 of the world's 4 ranks): $summary"
want="$out/run.p0.json $merged"
got=$("$bin/paralab-viz" --check "$out/run.p0.json" "$out/run.p1.json")
check "--check on the parts: every rank, the whole trace's slices, tracks and steps" \
    test "$got" = "paralab-viz: $want"
got=$("$bin/paralab-viz" --check "$out/run.p1.json" "$out/run.p0.json")
check "--check on the parts in the other order: the same" \
    test "$got" = "paralab-viz: $out/run.p1.json $merged"
got=$("$bin/paralab-viz" --check "$out/run.json")
check "--check on the --trace name: its parts found and merged" test "$got" = "paralab-viz: $want"
read_whole=$("$bin/paralab-viz" "$out/whole.json" </dev/null 2>&1)
read_parts=$("$bin/paralab-viz" "$out/run.json" </dev/null 2>&1)
n_whole=$(grep -o '[0-9]* events of 4 ranks read' <<<"$read_whole")
check "the replay reads the parts' events of 4 ranks, as many as the whole trace's ($n_whole)" \
    test -n "$n_whole" -a "$(grep -o '[0-9]* events of 4 ranks read' <<<"$read_parts")" = "$n_whole"

err=$("$bin/paralab-viz" --check "$out/run.p0.json" "$out/other.p1.json" 2>&1)
rc=$?
check "parts of different runs: exit 2" test "$rc" = 2
check "parts of different runs: the exact message" test "$err" = \
    "paralab-viz: $out/run.p0.json is a part of run \"lab06-1\", $out/other.p1.json of run \"lab06-2\": parts of different runs cannot be merged"
err=$("$bin/paralab-viz" "$out/run.p1.json" 2>&1)
rc=$?
check "one part alone: exit 2 and what to give" test "$rc:$err" = \
    "2:paralab-viz: $out/run.p1.json is process 1's part of a run of 2 processes: give every part (paralab-viz PART0 PART1 ...), or the name given to --trace"

# the merged replay in a terminal: every rank's device, to the last step
T new-session -d -s t -x 120 -y 40 \
    "cd '$root' && TERM=xterm-256color LANG=C.UTF-8 '$bin/paralab-viz' --speed 100 '$out/run.p0.json' '$out/run.p1.json'; echo EXIT=\$?; sleep 60"
if wait_screen t "replay done"; then
    screen=$(T capture-pane -p -t t)
    all=1 # each rank's row in the devices pane ("│r2  memcpy ...") and in the timeline ("│r2  cmp")
    for r in 0 1 2 3; do
        [ "$(grep -oE "│r$r  " <<<"$screen" | wc -l)" = 2 ] || all=0
    done
    check "the merged replay: 4 devices, every rank's device and timeline (ranks 0-3)" \
        test "$all" = 1
    check "the merged replay: the header says 4 devices" has "$screen" "| 4 devices |"
    check "the merged replay: every event counted ($n_whole)" has "$screen" "${n_whole% of*}, "
else
    check "the merged replay reaches its end" false
    T capture-pane -p -t t
fi
T send-keys -t t q
[ "$fails" = 0 ] && echo "✓ viz_parts: every check passed" || echo "✗ viz_parts: $fails failed"
exit $((fails > 0))
