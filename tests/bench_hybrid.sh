#!/usr/bin/env bash
# tests/bench_hybrid.sh BUILD_DIR — paralab-bench hybrid as make bench runs
# it, short (--scale 2: h = 16; the same 10 factorisations and 2 machines):
# both tables with every (dp, tp, pp) of 8 ranks the model takes, in
# pl_hybrid_factorisations' order; nothing failed; in one node of 8 no byte
# crosses a node; on two nodes of 4 a group's bytes cross exactly when the
# Megatron mesh puts its members on both nodes (rank = tp + t (dp + N pp),
# node = rank / 4), and never more than it sent; "vs best" is 1.00 on the
# fastest row, which the verdict names as the winner; TP across nodes is
# slower than in one. Simulated build only.
set -uo pipefail
bin=${1:-build/sim/bin}
fails=0
check() { # description, then a command that must succeed
    local what=$1
    shift
    if "$@"; then echo "PASS  $what"; else echo "FAIL  $what"; fails=$((fails + 1)); fi
}
out=$(env -u SIMT_GPUS_PER_NODE "$bin/paralab-bench" hybrid --scale 2 2>&1)
rc=$?
check "paralab-bench hybrid --scale 2: exit $rc" test "$rc" = 0
check "the header names the model and the GPUs" grep -q "^paralab-bench hybrid: the block model (h 16, f 64, 8 blocks, .* on 8 simulated H100-SXM (modeled clock)" <<<"$out"
check "no run failed" bash -c '! grep -q "failed" <<<"$1"' _ "$out"
want="(8, 1, 1) (4, 2, 1) (4, 1, 2) (2, 4, 1) (2, 2, 2) (2, 1, 4) (1, 8, 1) (1, 4, 2) (1, 2, 4) (1, 1, 8)"
# the rows of one table: "dp tp pp step vsbest bubble kernels kus tp pp dp xtp xpp xdp"
rows() {
    awk -v title="$1" '
        index($0, title) == 1 { on = 1; next }
        on && /^$/ { on = 0 }
        on && /^\([0-9]/ {
            gsub(/[(),|%]/, " ")
            n = split($0, f, " ")
            print f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], f[13], f[14]
        }' <<<"$out"
}
one=$(rows "one node of 8")
two=$(rows "two nodes of 4")
for t in one two; do
    got=$(awk '{ printf "%s(%s, %s, %s)", (NR > 1 ? " " : ""), $1, $2, $3 }' <<<"${!t}")
    check "table '$t': every factorisation, in order ($got)" test "$got" = "$want"
    # the fastest row is 1.00 against the best, no row below it
    best=$(sort -g -k4 <<<"${!t}" | head -1)
    check "table '$t': the fastest row ($(cut -d' ' -f1-3 <<<"$best")) is 1.00 of the best" \
        bash -c 'awk "{ if (\$5 < 1.00) bad = 1 } END { exit bad }" <<<"$1" && test "$(cut -d" " -f5 <<<"$2")" = 1.00' _ "${!t}" "$best"
    name=$(awk '{ printf "(%s, %s, %s)", $1, $2, $3 }' <<<"$best")
    title=$([ $t = one ] && echo "one node of 8" || echo "two nodes of 4")
    check "the verdict names $name as the winner on $title" grep -qF "  $title: $name wins," <<<"$out"
    check "table '$t': bytes across nodes never exceed the bytes sent" \
        awk '{ if ($12 > $9 || $13 > $10 || $14 > $11) bad = 1 } END { exit bad }' <<<"${!t}"
done
check "one node of 8: no byte crosses a node" awk '{ if ($12 + $13 + $14 != 0) bad = 1 } END { exit bad }' <<<"$one"
# two nodes of 4: rank 0's group along an axis of size s and stride st is
# {0, st, ..., (s - 1) st}, on both nodes when (s - 1) st >= 4
bad=$(awk '{
    dp = $1; tp = $2; pp = $3
    span["tp"] = (tp - 1) >= 4; span["dp"] = (dp - 1) * tp >= 4; span["pp"] = (pp - 1) * tp * dp >= 4
    if ((($12 > 0) != span["tp"]) || (($13 > 0) != span["pp"]) || (($14 > 0) != span["dp"]))
        printf "(%d, %d, %d): across %s %s %s ", dp, tp, pp, $12, $13, $14
}' <<<"$two")
check "two nodes of 4: a group's bytes cross exactly when its members are on both nodes${bad:+ ($bad)}" test -z "$bad"
t8one=$(awk '$1 == 1 && $2 == 8 { print $4 }' <<<"$one")
t8two=$(awk '$1 == 1 && $2 == 8 { print $4 }' <<<"$two")
check "tp 8 is slower on two nodes of 4 ($t8two us) than in one ($t8one us)" awk -v a="$t8two" -v b="$t8one" 'BEGIN { exit !(a > b) }'
check "the verdict and the legend follow" bash -c 'grep -q "^verdict (computed from the figures above)" <<<"$1" && grep -q "; in all [0-9.]* s$" <<<"$1"' _ "$out"
echo "bench hybrid: $fails failed"
[ $fails = 0 ]
