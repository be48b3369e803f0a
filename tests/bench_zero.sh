#!/usr/bin/env bash
# tests/bench_zero.sh BUILD_DIR — paralab-bench zero as make bench runs it,
# short (--scale 2: the wide model at h = 64, 8 blocks; the default model
# as ever). Recomputes here, from the model's shape alone, what a rank of
# each stage must hold and send, and checks every printed row against it
# exactly: the units (input 64h + h, each block 8h² + 7h, head 12h + 10)
# padded to a multiple of N (Ψ_pad); the fp32 formulas of paralab/zero.h
#   stage 0: params 4Ψ_pad, grads 4Ψ_pad, optim 8Ψ_pad
#   stage 1: 4Ψ_pad, 4Ψ_pad, 8Ψ_pad/N;  stage 2: 4Ψ_pad, 4Ψ_pad/N, 8Ψ_pad/N
#   stage 3: 4Ψ_pad/N, 4Ψ_pad/N, 8Ψ_pad/N
# with the working buckets (stages 2-3: two gradient buckets of the largest
# unit, stage 3 two parameter buckets more, k > 1 a slice more); the floats
# sent per rank per step, c = (N - 1)/N: 2cΨ_pad (stages 0, 1), (k+1)cΨ_pad
# (stage 2), 3kcΨ_pad (stage 3), and the collectives (stage 0: an
# all-reduce per unit; 1: a reduce-scatter and an all-gather per unit; 2: k
# reduce-scatters and an all-gather; 3: 2k all-gathers and k reduce-
# scatters), each against the ledger's and the formula's columns; the
# ratios to plain DP; the modeled step positive and within the whole step;
# the verdict lines met. Simulated build only.
set -uo pipefail
bin=${1:-build/sim/bin}
fails=0
check() { # description, then a command that must succeed
    local what=$1
    shift
    if "$@"; then echo "PASS  $what"; else echo "FAIL  $what"; fails=$((fails + 1)); fi
}
out=$(env -u SIMT_GPU "$bin/paralab-bench" zero --scale 2 2>&1)
rc=$?
check "paralab-bench zero --scale 2: exit $rc" test "$rc" = 0
check "the header names the GPUs" grep -q "^paralab-bench zero: ZeRO stages 0-3 .* on N = 1, 2, 4, 8 simulated H100-SXM (modeled clock)" <<<"$out"

# The rows of each section, tagged: "mem|traffic|step h L k N stage fields..."
tagged=$(awk '
    /^the default model: |^the wide model: / { h = $5 + 0; L = $8 + 0; k = 1; sec = "" }
    /^with accumulate k = 2 \(the default model/ { h = 64; L = 2; k = 2; sec = "mem" }
    /^memory per rank/ { sec = "mem"; next }
    /^communication per rank/ { sec = "traffic"; next }
    /^the modeled step/ { sec = "step"; next }
    /^ *N +stage/ { if (k == 2 && $3 == "|") sec = "traffic"; next }
    /^verdict/ { sec = "" }
    sec != "" && /^ *[0-9]+ +[0-9]+ / {
        gsub(/\|/, " ")
        $1 = $1
        print sec, h, L, k, $0
    }' <<<"$out")

# What the test expects, from the shape alone: one line per (h, L, k, N, stage)
expect() { # h L k N stage -> "psipad params grads optim buffers floats calls ar rs ag"
    awk -v h="$1" -v L="$2" -v k="$3" -v N="$4" -v s="$5" 'BEGIN {
        u[0] = 64 * h + h; for (j = 1; j <= L; j++) u[j] = 8 * h * h + 7 * h; u[L + 1] = 12 * h + 10
        U = L + 2; pad = 0; maxp = 0
        for (j = 0; j < U; j++) { p = N * int((u[j] + N - 1) / N); pad += p; if (p > maxp) maxp = p }
        P = 4 * pad; G = 4 * pad; O = 8 * pad; B = 0
        if (s >= 1) O = 8 * pad / N
        if (s >= 2) { G = 4 * pad / N; B = 2 * 4 * maxp; if (k > 1) B += 4 * maxp / N }
        if (s == 3) { P = 4 * pad / N; B += 2 * 4 * maxp }
        cp = (N - 1) * pad / N
        f = (s == 2 ? (k + 1) : s == 3 ? 3 * k : 2) * cp
        ar = rs = ag = 0
        if (s == 0) ar = U; else if (s == 1) { rs = U; ag = U } else if (s == 2) { rs = k * U; ag = U } else { ag = 2 * k * U; rs = k * U }
        printf "%d %d %d %d %d %d %d %d %d %d\n", pad, P, G, O, B, f, ar + rs + ag, ar, rs, ag
    }'
}

mem_bad="" traffic_bad="" step_bad="" seen=""
while read -r sec h L k n s rest; do
    read -r pad P G O B f calls ar rs ag <<<"$(expect "$h" "$L" "$k" "$n" "$s")"
    seen+="$sec $h $L $k $n $s;"
    case $sec in
    mem)
        read -r gpad gp gg go gb gt vs word <<<"$rest"
        want="$pad $P $G $O $B $((P + G + O + B)) equal"
        got="$gpad $gp $gg $go $gb $gt $word"
        [ "$got" = "$want" ] || mem_bad+=" [h $h L $L k $k N $n stage $s: got $got, want $want]"
        ;;
    traffic)
        read -r led form gcalls fcalls split xpsi word <<<"$rest"
        want="$f $f $calls $calls $ar/$rs/$ag $(awk -v a="$f" -v b="$pad" 'BEGIN { printf "%.4f", a / b }') equal"
        got="$led $form $gcalls $fcalls $split $xpsi $word"
        # N = 1 sends nothing: its collectives (if the engine calls any) are the formula's
        if [ "$n" = 1 ]; then
            want="0 0 $fcalls $fcalls $split 0.0000 equal"
            [ "$gcalls" = "$fcalls" ] || want+=" (ledger calls = formula calls)"
        fi
        [ "$got" = "$want" ] || traffic_bad+=" [h $h L $L k $k N $n stage $s: got $got, want $want]"
        ;;
    step)
        read -r st whole vs vsw wall <<<"$rest"
        awk -v st="$st" -v w="$whole" 'BEGIN { exit !(st > 0 && w >= st) }' ||
            step_bad+=" [h $h L $L N $n stage $s: step $st, whole $whole]"
        ;;
    esac
done <<<"$tagged"

# every row there, in order
want_seen=""
for m in "64 2" "64 8"; do
    for sec in mem traffic step; do
        for n in 1 2 4 8; do for s in 0 1 2 3; do want_seen+="$sec $m 1 $n $s;"; done; done
    done
done
for sec in mem traffic; do for s in 0 1 2 3; do want_seen+="$sec 64 2 2 8 $s;"; done; done
check "every table, every N and stage, in order (default h 64 L 2, wide h 64 L 8, k = 2)" test "$seen" = "$want_seen"
check "memory: every row's Ψ_pad, params, grads, optim, buffers, total are the formulas' bytes, 'equal'${mem_bad:+:$mem_bad}" test -z "$mem_bad"
check "communication: every row's ledger floats, collectives (all-reduce/reduce-scatter/all-gather) and x Ψ_pad are the formulas', 'equal'${traffic_bad:+:$traffic_bad}" test -z "$traffic_bad"
check "the modeled step is positive and within the step with its update${step_bad:+:$step_bad}" test -z "$step_bad"
# vs DP: the total over stage 0's at the same N, to 3 decimals
vs_bad=$(awk '
    $1 == "mem" { key = $2 " " $3 " " $4 " " $5; if ($6 == 0) t0[key] = $12
                  want = sprintf("%.3f", $12 / t0[key]); if ($13 != want) printf "[%s stage %s: %s, want %s]", key, $6, $13, want }
    $1 == "step" { key = $2 " " $3 " " $4 " " $5; if ($6 == 0) s0[key] = $7
                  # the steps are printed to 0.1 us: their ratio is known to 0.001
                  want = $7 / s0[key]; d = $9 - want; if (d < -0.001 || d > 0.001) printf "[step %s stage %s: %s, want %.4f]", key, $6, $9, want }' <<<"$tagged")
check "vs DP: each total and step over stage 0's at the same N${vs_bad:+: $vs_bad}" test -z "$vs_bad"
check "the verdict: memory equals the formulas (met)" grep -q "^  memory: the bytes measured .*: met$" <<<"$out"
check "the verdict: the ledgers equal pl_zero_traffic_of (met)" grep -q "^  communication: each rank's ledger .*: met$" <<<"$out"
check "the verdict: the paper's 2Ψ and 3Ψ (met)" grep -q "^  the paper's volumes: .*: met$" <<<"$out"
check "the verdict: the sharded memory shrinks stage by stage (met)" grep -q "^  the sharded memory (parameters, gradients, optimizer state) shrinks stage by stage at every N > 1, both models: met;" <<<"$out"
# with the working buckets (h 64: a block is 8h² + 7h = 33,216 floats; the default model
# 71,370, the wide one at --scale 2 270,666): the default model's block outweighs what stages
# 2-3 save at every N > 1; the wide one (8 blocks) shrinks
blk=$((8 * 64 * 64 + 7 * 64)) psi2=$((64 * 64 + 64 + 2 * blk + 12 * 64 + 10)) psi8=$((64 * 64 + 64 + 8 * blk + 12 * 64 + 10))
check "the verdict names where the default model's total with the buckets does not shrink" grep -qF "  with the working buckets (stages 2-3 two gradient buckets of the largest unit, $blk of the $psi2 floats, stage 3 two parameter buckets more), the default model: the total does not shrink at N = 2 stage 2, N = 2 stage 3, N = 4 stage 2, N = 4 stage 3, N = 8 stage 2, N = 8 stage 3" <<<"$out"
check "... and that the wide model's shrinks" grep -qF "  with the working buckets (stages 2-3 two gradient buckets of the largest unit, $blk of the $psi8 floats, stage 3 two parameter buckets more), the wide model: the total shrinks at every stage and N > 1" <<<"$out"
check "the legend follows" grep -q "; in all [0-9.]* s$" <<<"$out"
echo "bench zero: $fails failed"
[ $fails = 0 ]
