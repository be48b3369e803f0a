#!/usr/bin/env bash
# tests/lab_smoke.sh BUILD_DIR — every lab binary, as a newcomer runs it:
# out of the box (exercise untouched: the reference runs, exit 0), --help,
# plain text with --no-viz (no escape bytes), and bad flags (exit 2 with a
# message naming the bad value).
set -uo pipefail
bin=${1:-build/sim/bin}
fails=0
check() { # description, then a command that must succeed
    local what=$1
    shift
    if "$@"; then echo "PASS  $what"; else echo "FAIL  $what"; fails=$((fails + 1)); fi
}
for lab in "$bin"/lab[0-9][0-9]; do
    name=$(basename "$lab")
    out=$("$lab" --no-viz 2>&1); rc=$?
    check "$name runs out of the box (exit $rc)" test $rc = 0
    [ "$name" = lab04 ] && out04=$out
    [ "$name" = lab07 ] && out07=$out
    check "$name says it used the reference" grep -q "exercise not attempted yet" <<<"$out"
    check "$name --no-viz writes no escape bytes" bash -c '! grep -q $'"'"'\x1b'"'"' <<<"$1"' _ "$out"
    help=$("$lab" --help 2>&1); rc=$?
    check "$name --help (exit $rc)" bash -c 'test "$1" = 0 && grep -q "^usage: " <<<"$2"' _ "$rc" "$help"
    # bad values for the options this lab lists in its --help
    bads=("--no-such-flag" "extra-argument")
    grep -q -- "--size" <<<"$help" && bads+=("--size 0" "--size 12abc")
    grep -q -- "--block" <<<"$help" && bads+=("--block 1025")
    grep -q -- "--kernel" <<<"$help" && bads+=("--kernel 0" "--kernel 99")
    grep -q -- "--devices" <<<"$help" && bads+=("--devices 0" "--devices 65" "--devices two")
    grep -q -- "--speed" <<<"$help" && bads+=("--speed 0" "--speed fast")
    grep -q -- "--comm " <<<"$help" && bads+=("--comm mpi")
    grep -q -- "--batch" <<<"$help" && bads+=("--batch 0" "--batch 2000")
    # a batch the ranks cannot share: Lab 07 always splits it over its 4
    # ranks, Lab 08 only with --sequence-parallel
    if grep -q -- "--sequence-parallel" <<<"$help"; then bads+=("--sequence-parallel --batch 30")
    elif grep -q -- "--batch" <<<"$help"; then bads+=("--batch 30"); fi
    grep -q -- "--hidden" <<<"$help" && bads+=("--hidden 0" "--hidden 1025")
    grep -q -- "--layers" <<<"$help" && bads+=("--layers 0" "--layers 65")
    grep -q -- "--bucket-kb" <<<"$help" && bads+=("--bucket-kb 0")
    grep -q -- "--optimizer" <<<"$help" && bads+=("--optimizer adam")
    # --kernel K: the set-up step and version K alone (as llm.c's dev/cuda picks one kernel)
    if grep -q -- "--kernel" <<<"$help"; then
        out=$("$lab" --no-viz --kernel 1 2>&1); rc=$?
        steps=$(grep -c '^\[[0-9]' <<<"$out")
        check "$name --kernel 1: exit $rc, 2 steps ($steps)" test "$rc" = 0 -a "$steps" = 2
    fi
    for bad in "${bads[@]}"; do
        # shellcheck disable=SC2086
        err=$("$lab" $bad 2>&1 >/dev/null); rc=$?
        value=${bad#--* }
        check "$name $bad: exit 2, names '$value'" bash -c 'test "$1" = 2 && grep -qF -- "$2" <<<"$3"' _ "$rc" "$value" "$err"
    done
done
# Lab 02's counts, as the emulator makes them (simulated build only): a
# strided read costs a sector per float, the naive transpose's column
# writes too; the plain tile's column reads are a 32-way bank conflict and
# the padded tile's are not.
if [ -x "$bin/lab02" ] && [[ "$bin" == *sim* ]]; then
    out=$("$bin/lab02" --no-viz --size 256 2>&1); rc=$?
    check "lab02 --size 256: exit 0" test "$rc" = 0
    for want in 'stride  1: .*sectors per request: loads 4.0, stores 4.0' \
                'stride 32: .*sectors per request: loads 32.0, stores 4.0' \
                'naive: .*sectors per request: loads 4.0, stores 32.0' \
                'tiled .*sectors per request: loads 4.0, stores 4.0; shared-memory wavefronts per request: stores 1.0, loads 32.0 \(a 32-way bank conflict\)' \
                'padded: .*shared-memory wavefronts per request: stores 1.0, loads 1.0 \(no conflict\)'; do
        check "lab02 --size 256 shows: $want" grep -qE -- "$want" <<<"$out"
    done
fi
# Lab 03 folds the tree of a 16-thread block, one level per step, to its sum
if [ -x "$bin/lab03" ]; then
    out=$("$bin/lab03" --no-viz --size 16 2>&1)
    for want in '^    s:  -3  -2  -1   0   1   2   3  -3  -2  -1   0   1   2   3  -3  -2 *$' \
                'half = 8: threads 0\.\.7 add s\[tid \+ 8\] into s\[tid\]; threads 8\.\.15 rest' \
                '^    s:  -5  -3  -1   1   3   5   0  -5   \.   \.   \.' \
                'half = 1: thread 0 adds s\[tid \+ 1\]' '^    s:  -5   \.   \.' \
                'their sum is -5\.'; do
        check "lab03 --size 16 shows: $want" grep -qE -- "$want" <<<"$out"
    done
fi
# Lab 04 says when a kernel's blocks are too few for the SMs (512: 16 of 128x128)
if [ -x "$bin/lab04" ]; then
    out=$("$bin/lab04" --no-viz --size 512 --kernel 3 2>&1)
    check "lab04 --size 512 --kernel 3: too few blocks" grep -qE 'only 16 blocks of 128x128 for [0-9]+ SMs' <<<"$out"
    out=$("$bin/lab04" --no-viz --size 512 --kernel 4 2>&1)
    check "lab04 --size 512 --kernel 4 (warp tiles): too few blocks" grep -qE '^\[2\] warp tiles .*only 16 blocks of 128x128 for [0-9]+ SMs' <<<"$out"
    out=$("$bin/lab04" --no-viz --size 512 --kernel 2 2>&1)
    check "lab04 --size 512 --kernel 2: 1024 blocks of 16x16, enough" bash -c '! grep -q "blocks of 16x16 for" <<<"$1"' _ "$out"
    # --size 2048 says at once what it costs on the simulated GPU (read its
    # first two lines, then stop it: the run itself takes minutes)
    pidf=$(mktemp)
    out=$( { "$bin/lab04" --no-viz --size 2048 2>&1 & echo $! >"$pidf"; wait; } | head -2)
    kill "$(cat "$pidf")" 2>/dev/null; rm -f "$pidf"
    check "lab04 --size 2048 on the simulated GPU: 8 times the work of 1024, said first" grep -qx \
        "  note: --size 2048 on the simulated GPU is 8 times the work of --size 1024, every multiply-add run on this CPU: expect a long run (q or Ctrl-C stops it)" <<<"$out"
fi
# --step where nothing can wait for a key: said on stderr, the run goes on
if [ -x "$bin/lab01" ]; then
    out=$("$bin/lab01" --no-viz --step 2>&1 >/dev/null); rc=$?
    check "lab01 --no-viz --step says the steps run through (exit $rc)" bash -c 'test "$1" = 0 && grep -qx "lab01: --step: the steps run through without waiting (--no-viz prints them as plain text)" <<<"$2"' _ "$rc" "$out"
    out=$("$bin/lab01" --step 2>&1 >/dev/null </dev/null); rc=$?
    check "lab01 --step into a pipe says stdout is no terminal (exit $rc)" bash -c 'test "$1" = 0 && grep -qx "lab01: --step: the steps run through without waiting (stdout is not a terminal)" <<<"$2"' _ "$rc" "$out"
    out=$("$bin/lab01" --no-viz 2>&1 >/dev/null); rc=$?
    check "lab01 without --step says nothing on stderr" test -z "$out"
fi
# Started from another folder (the data found from the repository the
# program was built in), and an option's value forgotten before another
# option (refused: it was taken for the value, --trace wrote a file named
# --no-viz and the run lost --no-viz)
if [ -x "$bin/lab09" ] && [ -f data/digits.csv ]; then
    abs=$(cd "$bin" && pwd)
    elsewhere=$(mktemp -d)
    out=$(cd "$elsewhere" && "$abs/lab09" --no-viz --epochs 1 --batch 256 2>&1); rc=$?
    check "lab09 started from another folder finds data/digits.csv (exit $rc)" bash -c 'test "$1" = 0 && grep -q "^  5 steps of a batch of 256 " <<<"$2"' _ "$rc" "$out"
    err=$(cd "$elsewhere" && "$abs/lab08" --trace --no-viz 2>&1 >/dev/null); rc=$?
    check "lab08 --trace --no-viz: exit 2, the value forgotten, no file named --no-viz ($rc)" bash -c 'test "$1" = 2 && grep -qF "option '"'"'--trace'"'"' needs a value, but the next word is the option '"'"'--no-viz'"'"'" <<<"$2" && test ! -e "$3/--no-viz"' _ "$rc" "$err" "$elsewhere"
    rm -rf "$elsewhere"
fi
# Words that are right: one thing in the singular, the reference named as
# such while the exercise is TODO, the modeled clock's missing occupancy,
# the arithmetic of the guide (4 bytes per FLOP: 0.25 FLOP per byte).
words() { # lab, its arguments..., then -- and the patterns its output must show
    local lab=$1 args=() out
    shift
    while [ "$1" != -- ]; do args+=("$1"); shift; done
    shift
    [ -x "$bin/$lab" ] || return 0
    out=$("$bin/$lab" --no-viz "${args[@]}" 2>&1)
    for want in "$@"; do
        check "$lab ${args[*]} says: $want" grep -qE -- "$want" <<<"$out"
    done
    check "$lab ${args[*]}: no count of 1 in the plural" bash -c '! grep -E "(^|[^0-9.])1 (blocks|threads|elements|floats|values|chunks|streams|rows|ranks|shards|samples|buckets|steps|micro-batches|stages)\b" <<<"$1"' _ "$out"
}
words lab01 --size 1 --block 1 -- '^\[1\] grid size: 1 element, 1 thread per block -> 1 block \(1 thread\)$'
words lab03 --size 1 -- '^\[1\] 1 float; their sum is -3\. A block of 256 threads sums up to 256 of them'
words lab05 --size 1 --chunks 1 --streams 1 -- '^\[1\] 1 float \(0\.0 MiB\)' '^\[3\] 1 chunk over 1 stream \(chunked, the reference\)'
words lab06 --devices 2 --count 1 --max-bytes 8 -- '^\[2\] Send and receive: rank 0 sends its 1 value to rank 1\.'
words lab09 --batch 1400 --epochs 1 -- '^  1 step of a batch of 1400 in 8 micro-batches on 4 stages \(1f1b\)'
if [[ "$bin" == *sim* ]]; then
    words lab04 --size 1 --kernel 2 -- 'only 1 block of 16x16 for 132 SMs: on a real GPU 131 SMs would get none and wait, but the modeled clock charges no occupancy'
fi
if [ -n "${out04:-}" ]; then
    check "lab04: the naive kernel moves 4 bytes per FLOP" grep -qE '^\[2\] naive .*: 0\.25 FLOP per byte' <<<"$out04"
    check "lab04 (exercise TODO): the reference's tiles, not yours" bash -c 'grep -qE "register tiles ran [0-9.]+x as fast as naive, warp tiles [0-9.]+x, the reference.s tiles \(yours are still TODO\) [0-9.]+x\.$" <<<"$1" && ! grep -q "your tiles" <<<"$1"' _ "$out04"
    if [[ "$bin" == *sim* ]]; then
        # the warp tiles move what the register tiles move: the modeled clock gives them the same time
        t3=$(grep -oE '^\[4\] register tiles [^:]*: [0-9.]+ us' <<<"$out04" | grep -oE '[0-9.]+ us$')
        t4=$(grep -oE '^\[5\] warp tiles [^:]*: [0-9.]+ us' <<<"$out04" | grep -oE '[0-9.]+ us$')
        check "lab04: the warp tiles take the register tiles' modeled time ($t3, $t4)" test -n "$t3" -a "$t3" = "$t4"
        check "lab04: the warp tiles' step says why" grep -qE "^\[5\] warp tiles .*The register tiles' FLOPs and bytes, so the modeled clock gives it their time: what it saves \(load instructions, a barrier per step, waiting for memory\) only a real GPU shows" <<<"$out04"
    fi
    check "lab04: no 'most of the GPU waits' on the modeled clock" bash -c '! grep -q "most of the GPU waits" <<<"$1"' _ "$out04"
fi
if [ -n "${out07:-}" ]; then
    check "lab07: the 25 KiB bucket is DDP's 25 MiB scaled down" grep -qE '^\[4\] Backward, last layer first\. The gradients \(102 KiB\) are cut into 6 buckets of at most 25 KiB; .*\(PyTorch DDP.s buckets are 25 MiB; here they are scaled down with the model' <<<"$out07"
    check "lab07: 4 shards of 16 rows" grep -qE '^\[2\] The global batch of 64 samples is cut into 4 shards of 16 rows' <<<"$out07"
fi
# a global batch the ranks cannot share: both numbers and the nearest that work
if [ -x "$bin/lab07" ]; then
    err=$("$bin/lab07" --batch 30 --devices 4 2>&1 >/dev/null); rc=$?
    check "lab07 --batch 30 --devices 4: exit 2, suggests 28 and 32" bash -c 'test "$1" = 2 && grep -q "batch 30 does not split evenly over 4 ranks: the nearest batch sizes that do are 28 and 32" <<<"$2"' _ "$rc" "$err"
fi
# Lab 08 as the guide runs it (one epoch each): what step [1] says of the
# shards on 4 ranks, the ledger's collectives of one step in step [8] equal
# to the formula's (without and with sequence parallelism: each all-reduce
# of the activations becomes a reduce-scatter and an all-gather, and the
# replicated parameters' gradients are summed); one rank; the degrees it
# refuses, with the values it names and those it allows.
if [ -x "$bin/lab08" ]; then
    out=$("$bin/lab08" --no-viz --epochs 1 --devices 4 2>&1); rc=$?
    check "lab08 --devices 4 --epochs 1: exit 0" test "$rc" = 0
    for want in '^\[1\] 4 ranks share every block: W1 \[64x256\] is cut into 4 column shards of 64x64, W2 \[256x64\] into 4 row shards of 64x64; the classifier.s 10 classes \(padded\) into 3 each\. The weights were drawn whole from seed 0 and sliced: gathered, they hash to 808a8523 for any t\. This rank holds 21379 of the model.s 71370 parameters\.$' \
                '^\[9\] This step.s collectives on rank 0, from the ledger: forward 6 all-reduces, 0 all-gathers, 0 reduce-scatters, 50688 bytes sent; backward 3, 0, 0, 73728 bytes\. The formula for 2 blocks and the head gives the same: 6, 0, 0, 50688; 3, 0, 0, 73728\.$' \
                '^\[11\] Epoch 1/1: loss [0-9.]+ \(the mean over 1408 samples\), train [0-9.]+ %, test [0-9.]+ %\.$' \
                '^\[4\] Row-parallel W2: each rank.s GELU\(z1_r\) W2_r is a partial \[64 x 64\]; g all-reduces the partials' \
                '^\[5\] Block 1 the same way: LayerNorm, W1.s column shards, GELU, W2.s row shards and g\.$' \
                '^  22 steps of a batch of 64 on 4 TP ranks: loss [0-9.]+, test accuracy [0-9.]+ %' \
                '^  \(reference\)  PASS  08_tensor_parallel +column_parallel' '^  \(reference\)  PASS  08_tensor_parallel +row_parallel'; do
        check "lab08 --devices 4 --epochs 1 shows: $want" grep -qE -- "$want" <<<"$out"
    done
    out=$("$bin/lab08" --no-viz --epochs 1 --devices 4 --sequence-parallel 2>&1); rc=$?
    check "lab08 --devices 4 --sequence-parallel --epochs 1: exit 0" test "$rc" = 0
    for want in '^paralab lab 08 — tensor parallelism \(4 ranks on .*, sequence parallel\)$' \
                'With sequence parallelism each rank keeps 16 of its rows outside the parallel region' \
                '^\[9\] This step.s collectives on rank 0, from the ledger: forward 4 all-reduces, 3 all-gathers, 2 reduce-scatters, 62976 bytes sent; backward 4, 2, 3, 89472 bytes\. The formula for 2 blocks and the head gives the same: 4, 3, 2, 62976; 4, 2, 3, 89472\.$' \
                '^  22 steps of a batch of 64 on 4 TP ranks \(sequence parallel\): loss'; do
        check "lab08 --devices 4 --sequence-parallel --epochs 1 shows: $want" grep -qE -- "$want" <<<"$out"
    done
    out=$("$bin/lab08" --no-viz --epochs 1 --devices 1 2>&1); rc=$?
    check "lab08 --devices 1 --epochs 1: exit 0" test "$rc" = 0
    for want in '^\[1\] 1 rank holds the whole block model: 2 blocks of h = 64 \(W1 64x256, W2 256x64\), 71370 parameters drawn from seed 0 \(hash 808a8523\)\.' \
                '^\[9\] This step.s collectives on rank 0, from the ledger: forward 0 all-reduces, 0 all-gathers, 0 reduce-scatters, 0 bytes sent; backward 0, 0, 0, 0 bytes\. The formula for 2 blocks and the head gives the same: 0, 0, 0, 0; 0, 0, 0, 0\.$' \
                '^  22 steps of a batch of 64 on 1 TP rank: loss'; do
        check "lab08 --devices 1 --epochs 1 shows: $want" grep -qE -- "$want" <<<"$out"
    done
    refused() { # the message stderr must be, then the arguments
        local want=$1 err rc
        shift
        err=$(env -u SIMT_DEVICES -u PARALAB_SIM_DEVICES "$bin/lab08" --no-viz --epochs 1 "$@" 2>&1 >/dev/null); rc=$?
        check "lab08 $*: exit 2, '$want'" bash -c 'test "$1" = 2 && test "$2" = "$3"' _ "$rc" "$err" "$want"
    }
    refused "lab08: --devices 3: the hidden width does not divide by it (h = 64, f = 4h = 256); tensor parallelism can split this model over 1, 2, 4 or 8 ranks (of the devices here)" --devices 3
    refused "lab08: --devices 4: the hidden width does not divide by it (h = 6, f = 4h = 24); tensor parallelism can split this model over 1, 2, 3 or 6 ranks (of the devices here)" --hidden 6 --devices 4
    # 16 ranks: more than the simulator's 8 devices; with 16 of them, 24 does not divide by 16
    if [[ "$bin" == *sim* ]]; then
        refused "lab08: --devices 16: there are 8 simulated devices (SIMT_DEVICES, up to 64, makes more); tensor parallelism can split this model (h = 24) over 1, 2, 3, 4, 6 or 8 ranks here" --hidden 24 --devices 16
        err=$(SIMT_DEVICES=16 "$bin/lab08" --no-viz --epochs 1 --hidden 24 --devices 16 2>&1 >/dev/null); rc=$?
        check "SIMT_DEVICES=16 lab08 --hidden 24 --devices 16: exit 2, names 16 and the degrees of 24" bash -c 'test "$1" = 2 && test "$2" = "$3"' _ "$rc" "$err" \
            "lab08: --devices 16: the hidden width does not divide by it (h = 24, f = 4h = 96); tensor parallelism can split this model over 1, 2, 3, 4, 6, 8 or 12 ranks (of the devices here)"
    fi
    refused "lab08: --batch 60: sequence parallelism splits the batch's rows over the 8 ranks, and 60 does not divide by 8 (the nearest batch sizes that do are 56 and 64)" --sequence-parallel --batch 60 --devices 8
    refused "lab08: --batch 4: sequence parallelism gives each of the 8 ranks a row at least (the smallest batch is 8)" --sequence-parallel --batch 4 --devices 8
    # --help: every option of the lab, each with its help on the same line
    # or, too long for the column, on the next one; wrapped at 80 columns,
    # "default 64" and "f = 4h" kept on one line
    help=$("$bin/lab08" --help 2>&1)
    for want in '^      --hidden h        the width of the residual stream \(1\.\.1024,$' \
                '^                        default 64; f = 4h\)$' \
                '^      --layers L        residual MLP blocks \(1\.\.64, default 2\)$' \
                '^      --sequence-parallel$' \
                '^                        split the batch.s rows over the ranks outside the$' \
                '^                        parallel region$' \
                '^      --batch B         samples per step, the same on every rank \(1\.\.1438,$' \
                '^      --epochs E        passes over the training set \(1\.\.1000, default 5; make$' \
                '^                        check trains 20\)$' \
                '^      --lr X            AdamW.s learning rate \(default 0\.002\)$' \
                '^  -n, --devices N       ranks, one device each'; do
        check "lab08 --help: $want" grep -qE -- "$want" <<<"$help"
    done
fi
# Lab 09 as the guide runs it: each schedule as plain text, a few steps
# each (one epoch of a batch of 256: 5 steps), its title, the cut of step
# [1], the bubble against its formula in step [3], and the checks; the
# options it refuses, with the values it names and the rule they break.
if [ -x "$bin/lab09" ]; then
    for sched in naive gpipe 1f1b interleaved zb-h1; do
        out=$("$bin/lab09" --no-viz --epochs 1 --batch 256 --schedule $sched 2>&1); rc=$?
        check "lab09 --schedule $sched --epochs 1 --batch 256: exit 0" test "$rc" = 0
        for want in "^paralab lab 09 — pipeline parallelism \(4 stages on .*; $sched, 8 micro-batches" \
                    '^\[1\] .*[.;] stage 0: input, block 0' \
                    '^\[2\] Micro-batch 0 \(rows 0 to 31 of the batch of 256; 8 micro-batches of 32 rows\) forward through the' \
                    '^\[3\] The bubble, the stages. idle time, measured on the modeled clock: [0-9.]+ % of the ideal time' \
                    '^\[7\] Epoch 1/1: loss [0-9.]+ \(the mean over 1280 samples\), train [0-9.]+ %, test [0-9.]+ %\.$' \
                    "^  5 steps of a batch of 256 in 8 micro-batches on 4 stages \($sched\): loss" \
                    '^  \(reference\)  PASS  09_pipeline_parallel gpipe' '^  \(reference\)  PASS  09_pipeline_parallel one_f_one_b'; do
            check "lab09 --schedule $sched shows: $want" grep -qE -- "$want" <<<"$out"
        done
    done
    out=$("$bin/lab09" --no-viz --epochs 1 --batch 256 2>&1)
    check "lab09: step [1], the cut and the parameters per stage" grep -qE '^\[1\] 4 stages share the 4 blocks: each gets floor\(L/p\) = 1 \(picotron.s rule\), the input layer goes with stage 0, the head \(LNf, the classifier\) with stage 3\. stage 0: input, block 0 \(37376 parameters\); stage 1: block 1 \(33216 parameters\); stage 2: block 2 \(33216 parameters\); stage 3: block 3, head \(33994 parameters\); 137802 in all\. Drawn whole from seed 0 and sliced: gathered, they hash to b0cf1006 for any p\. The schedule: the reference.s 1F1B lists, validated before anything runs\.$' <<<"$out"
    check "lab09: step [4], 1F1B's peaks per stage" grep -qE '^\[4\] Stage 0.s list: F0 F1 F2 F3 BW0 F4 BW1 F5 BW2 F6 BW3 F7 BW4 BW5 BW6 BW7\. .*Stage 0 held at most 4 micro-batches. activations at once \(the formula: 4\), sets of [0-9.]+ KiB each: .* The most held at once, per stage: 4, 3, 2, 1\.$' <<<"$out"
    refused09() { # the message stderr must be, then the arguments
        local want=$1 err rc
        shift
        err=$(env -u SIMT_DEVICES -u PARALAB_SIM_DEVICES "$bin/lab09" --no-viz --epochs 1 "$@" 2>&1 >/dev/null); rc=$?
        check "lab09 $*: exit 2, '$want'" bash -c 'test "$1" = 2 && test "$2" = "$3"' _ "$rc" "$err" "$want"
    }
    refused09 "lab09: --schedule zigzag: no schedule 'zigzag': the schedules are naive, gpipe, 1f1b, interleaved and zb-h1" --schedule zigzag
    refused09 "lab09: interleaved: m = 6 micro-batches is not a multiple of p = 4 stages (Megatron-LM's interleaved schedule runs micro-batches in groups of p)" --schedule interleaved --micro-batches 6 --batch 60
    refused09 "lab09: 1f1b: v = 2 chunks per stage, but only the interleaved schedule runs more than one chunk per stage (v must be 1)" --chunks 2
    refused09 "lab09: 3 blocks cannot be cut into 4 stages: each stage needs a block, so at least 4 blocks" --layers 3
    refused09 "lab09: --batch 30: the batch is cut into m = 8 micro-batches of equal size, and 30 does not divide by 8 (the nearest batch sizes that do are 24 and 32)" --batch 30
    refused09 "lab09: --batch 4: the batch is cut into m = 8 micro-batches of B/m rows, so it needs 8 rows at least" --batch 4
    refused09 "lab09: --micro-batches '0' is not a whole number from 1 to 1438" --micro-batches 0
    refused09 "lab09: --stages 'two' is not a whole number from 1 to 64" --stages two
    refused09 "lab09: --clip-grad-norm '-1' is not a number in (0, 1e+06]" --clip-grad-norm -1
    refused09 "lab09: --lr '2x' is not a number in (0, 10]" --lr 2x
    if [[ "$bin" == *sim* ]]; then
        refused09 "lab09: --devices 9: there are 8 simulated devices (SIMT_DEVICES, up to 64, makes more); a pipeline runs one stage per device: --stages 1 to 8 here" --stages 9
    fi
    help=$("$bin/lab09" --help 2>&1)
    for want in '^      --stages p        pipeline stages, one device each \(--devices; 1\.\.64,$' \
                '^      --micro-batches m micro-batches a step.s batch is cut into \(1\.\.B,$' \
                '^      --schedule NAME   naive, gpipe, 1f1b, interleaved or zb-h1 \(default 1f1b\)$' \
                '^      --chunks v        model chunks per stage \(1\.\.8; interleaved.s default 2\)$' \
                '^      --layers L        residual MLP blocks \(1\.\.64, default p x v, a chunk each\)$' \
                '^      --clip-grad-norm X$'; do
        check "lab09 --help: $want" grep -qE -- "$want" <<<"$help"
    done
fi
# Lab 10 as the guide runs it: the default mesh (dp 2 x tp 2 x pp 2, Megatron's
# order) as plain text, one epoch: the table of step [1] (every rank's
# coordinates and groups), the TP collectives of one F in [2], the last stage
# reducing first in [4], the replicas' hashes and the bytes per group equal
# to the formulas in [5]; picotron's table; the options it refuses.
if [ -x "$bin/lab10" ]; then
    out=$("$bin/lab10" --no-viz --epochs 1 2>&1); rc=$?
    check "lab10 --epochs 1: exit 0" test "$rc" = 0
    for want in '^paralab lab 10 — hybrid parallelism \(dp 2 x tp 2 x pp 2 = 8 ranks on .*; megatron order; 1f1b, 4 micro-batches\)$' \
                '^\[1\] The mesh: dp 2 x tp 2 x pp 2 = 8 ranks in megatron.s order \(rank = tp \+ t \(dp \+ N pp\): TP fastest, PP outermost\), .* Rank: \(dp, pp, tp\) TP \| DP \| PP group: 0: \(0, 0, 0\) \{0, 1\} \| \{0, 2\} \| \{0, 4\}; 1: \(0, 0, 1\) \{0, 1\} \| \{1, 3\} \| \{1, 5\}; 2: \(1, 0, 0\) \{2, 3\} \| \{0, 2\} \| \{2, 6\}; 3: \(1, 0, 1\) \{2, 3\} \| \{1, 3\} \| \{3, 7\}; 4: \(0, 1, 0\) \{4, 5\} \| \{4, 6\} \| \{0, 4\}; 5: \(0, 1, 1\) \{4, 5\} \| \{5, 7\} \| \{1, 5\}; 6: \(1, 1, 0\) \{6, 7\} \| \{4, 6\} \| \{2, 6\}; 7: \(1, 1, 1\) \{6, 7\} \| \{5, 7\} \| \{3, 7\}\. ' \
                '^\[2\] Replica d takes rows \[d B/dp, \(d\+1\) B/dp\) of the batch of 64: 32 rows, 4 micro-batches of 8\. stage 0: input, block 0 on ranks \{0, 1, 2, 3\}; stage 1: block 1, head on ranks \{4, 5, 6, 7\}\. .*One micro-batch.s F on the TP group \(its own ledger over a forward pass, / m\): stage 0 \(1 block\): 1 collective, rank 0 sending 2\.0 KiB; stage 1 \(1 block, head, loss\): 5 collectives, rank 4 sending 2\.1 KiB: ' \
                '^\[3\] The pipeline of each \(dp, tp\): 1f1b, p = 2 stages, m = 4 micro-batches of 8 rows\. Each stage.s list \(the pipeline at dp 0, tp 0\): stage 0 \(rank 0\): F0 F1 BW0 F2 BW1 F3 BW2 BW3; stage 1 \(rank 4\): F0 BW0 F1 BW1 F2 BW2 F3 BW3\. ' \
                '^\[4\] The DP reduction \(from the reference.s dp_after\): .*: stage 0 after op 7 of 8 \(BW3\), [0-9.]+-[0-9.]+ us, 1 bucket; stage 1 after op 7 of 8 \(BW3\), [0-9.]+-[0-9.]+ us, 1 bucket\. The last stage reduces first: ' \
                '^\[5\] The step: loss [0-9.]+ .*: the same bits in every replica\. Bytes sent in the step, every rank.s own ledger by group: TP ([0-9.]+ KiB) \(the formulas: \1\), DP ([0-9.]+ KiB) \(the formulas: \2\), PP ([0-9.]+ KiB) \(the formulas: \3\)\.$' \
                '^\[6\] Epoch 1/1: loss [0-9.]+ \(the mean over 1408 samples\), train [0-9.]+ %, test [0-9.]+ %\.$' \
                '^  22 steps of a batch of 64 on dp 2 x tp 2 x pp 2 \(1f1b, 4 micro-batches per replica\): loss' \
                '^  \(reference\)  PASS  10_hybrid +coords' '^  \(reference\)  PASS  10_hybrid +make_groups' \
                '^  \(reference\)  PASS  10_hybrid +dp_after'; do
        check "lab10 shows: $want" grep -qE -- "$want" <<<"$out"
    done
    out=$("$bin/lab10" --no-viz --epochs 1 --order picotron 2>&1)
    check "lab10 --order picotron: step [1], picotron's groups" grep -qE '^\[1\] The mesh: dp 2 x tp 2 x pp 2 = 8 ranks in picotron.s order \(rank = tp \+ t \(pp \+ p dp\): TP fastest, DP outermost\), .* 0: \(0, 0, 0\) \{0, 1\} \| \{0, 4\} \| \{0, 2\}; 1: \(0, 0, 1\) \{0, 1\} \| \{1, 5\} \| \{1, 3\}; 2: \(0, 1, 0\) \{2, 3\} \| \{2, 6\} \| \{0, 2\}; 3: \(0, 1, 1\) \{2, 3\} \| \{3, 7\} \| \{1, 3\}; 4: \(1, 0, 0\) \{4, 5\} \| \{0, 4\} \| \{4, 6\}; 5: \(1, 0, 1\) \{4, 5\} \| \{1, 5\} \| \{5, 7\}; 6: \(1, 1, 0\) \{6, 7\} \| \{2, 6\} \| \{4, 6\}; 7: \(1, 1, 1\) \{6, 7\} \| \{3, 7\} \| \{5, 7\}\. ' <<<"$out"
    out=$("$bin/lab10" --no-viz --epochs 1 --devices 4 --dp 1 2>&1); rc=$?
    check "lab10 --devices 4 --dp 1: exit 0, dp 1 x tp 2 x pp 2" bash -c 'test "$1" = 0 && grep -qE "^paralab lab 10 — hybrid parallelism \(dp 1 x tp 2 x pp 2 = 4 ranks" <<<"$2"' _ "$rc" "$out"
    refused10() { # the message stderr must be, then the arguments
        local want=$1 err rc
        shift
        err=$(env -u SIMT_DEVICES -u PARALAB_SIM_DEVICES "$bin/lab10" --no-viz --epochs 1 "$@" 2>&1 >/dev/null); rc=$?
        check "lab10 $*: exit 2, '$want'" bash -c 'test "$1" = 2 && test "$2" = "$3"' _ "$rc" "$err" "$want"
    }
    refused10 "lab10: --order 'zigzag' is not a rank order: use megatron (TP fastest, PP outermost) or picotron (TP fastest, DP outermost)" --order zigzag
    refused10 "lab10: --dp 'two' is not a whole number from 1 to 64" --dp two
    refused10 "lab10: --tp 3: the hidden width does not divide by it (h = 64, f = 4h = 256); tensor parallelism can split this model over 1, 2 or 4 ranks (of the devices here); valid (dp, tp, pp) for 6 ranks and this model: none" --dp 1 --tp 3
    refused10 "lab10: --pp 4: L = 3 blocks cannot fill 4 stages of 1 chunk (each virtual stage needs a block: --layers 4 at least); valid (dp, tp, pp) for 8 ranks and this model: (8, 1, 1), (4, 2, 1), (4, 1, 2), (2, 4, 1), (2, 2, 2), (1, 8, 1) or (1, 4, 2)" --dp 1 --pp 4 --layers 3
    refused10 "lab10: --devices 4, but --dp 2 --tp 2 --pp 2 make 8 ranks: --devices is their product (leave it out, or give degrees that make 4: valid (dp, tp, pp) for 4 ranks here: (4, 1, 1), (2, 2, 1), (2, 1, 2), (1, 4, 1) or (1, 2, 2))" --devices 4
    refused10 "lab10: --devices 8, but --dp 1 --tp 2 --pp 2 make 4 ranks: --devices is their product (leave it out, or give degrees that make 8: valid (dp, tp, pp) for 8 ranks here: (8, 1, 1), (4, 2, 1), (4, 1, 2), (2, 4, 1), (2, 2, 2), (1, 8, 1) or (1, 4, 2))" --dp 1 --devices 8
    refused10 "lab10: --batch 30: the global batch is cut into dp = 2 replicas of m = 4 micro-batches each, so it must be a multiple of dp m = 8 (the nearest that are: 24 and 32); valid (dp, tp, pp) for 8 ranks and this model: none" --batch 30
    refused10 "lab10: --lr '0' is not a number in (0, 10]" --lr 0
    refused10 "lab10: --micro-batches 5: each replica's rows (B / dp = 64 / 2 = 32) are cut into m micro-batches of the same size, so m must divide 32: m = 1, 2, 4, 8, 16 or 32" --micro-batches 5
    refused10 "lab10: --batch 48 --micro-batches 5: each replica's rows (B / dp = 48 / 2 = 24) are cut into m micro-batches of the same size, so m must divide 24: m = 1, 2, 3, 4, 6, 8, 12 or 24" --batch 48 --micro-batches 5
    refused10 "lab10: --sequence-parallel: a micro-batch of 1 row (B / (dp m) = 8 / 8) does not split over tp = 2 ranks; valid (dp, tp, pp) for 8 ranks and this model: none" --sequence-parallel --batch 8 --micro-batches 4
    # steps [3] and [4] say what is true of the schedule run: GPipe (no
    # warm-up remark; the stage that reduced first from the times), ZB-H1 at
    # m = 1 (its last W; no formula, so nothing differs from one), one stage
    # (nothing about stages reducing apart)
    out=$("$bin/lab10" --no-viz --epochs 1 --schedule gpipe 2>&1)
    check "lab10 --schedule gpipe: [4] stage 1 reduces first, no warm-up remark" bash -c 'grep -qE "^\[4\] .*stage 0 after op 7 of 8 \(BW0\), .*stage 1 after op 7 of 8 \(BW0\), [0-9.-]+ us, 1 bucket\. Stage 1 reduces first: its last backward ends first; every stage reduces once" <<<"$1" && ! grep -q "warm-up" <<<"$1"' _ "$out"
    out=$("$bin/lab10" --no-viz --epochs 1 --schedule zb-h1 --micro-batches 1 2>&1)
    check "lab10 --schedule zb-h1 --micro-batches 1: [3] m = 1 micro-batch, no formula, nothing differs" grep -qE '^\[3\] The pipeline of each \(dp, tp\): zb-h1, p = 2 stages, m = 1 micro-batch of 32 rows\. .*; no formula for this schedule here\.$' <<<"$out"
    check "lab10 --schedule zb-h1 --micro-batches 1: [4] its last W" grep -qE '^\[4\] The DP reduction \(from the reference.s dp_after\): each stage all-reduces its gradients over its DP group once its last W has written them \(modeled clock\): stage 0 after op 2 of 3 \(W0\), .*Stage 1 reduces first: its last W ends first' <<<"$out"
    out=$("$bin/lab10" --no-viz --epochs 1 --dp 2 --tp 1 --pp 1 --devices 2 --micro-batches 1 2>&1)
    check "lab10 --pp 1 --micro-batches 1: [2] 1 micro-batch, [4] one stage" bash -c 'grep -qE "^\[2\] Replica d takes rows .* of the batch of 64: 32 rows, 1 micro-batch of 32\. " <<<"$1" && grep -qE "^\[4\] The DP reduction \(from the reference.s dp_after\): the stage all-reduces its gradients over its DP group once its last backward has written them \(modeled clock\): stage 0 after op 1 of 2 \(BW0\), [0-9.-]+ us, 1 bucket\. Rank 0" <<<"$1"' _ "$out"
    if [[ "$bin" == *sim* ]]; then
        refused10 "lab10: --devices 16: there are 8 simulated devices (SIMT_DEVICES, up to 64, makes more); --dp 2 --tp 2 --pp 4 make 16 ranks, one device each; valid (dp, tp, pp) for 8 ranks here (h = 64, L = 4 blocks): (8, 1, 1), (4, 2, 1), (4, 1, 2), (2, 4, 1), (2, 2, 2), (2, 1, 4), (1, 8, 1), (1, 4, 2) or (1, 2, 4)" --pp 4
    fi
    help=$("$bin/lab10" --help 2>&1)
    for want in '^      --dp N            data-parallel replicas \(default 2\)$' \
                '^      --order NAME      rank order: megatron \(default\) or picotron$' \
                '^      --micro-batches m micro-batches of each replica.s rows \(default 4\)$' \
                '^      --layers L        residual MLP blocks \(1\.\.64, default max\(2, p x v\)\)$' \
                '^      --sequence-parallel$'; do
        check "lab10 --help: $want" grep -qE -- "$want" <<<"$help"
    done
fi
# Lab 11 as the guide runs it: every stage as plain text on the default 8
# ranks, one epoch: the memory measured against the formula in [1] (the
# stage's bytes exactly), the buckets and their padding in [2], the ledger
# against pl_zero_traffic_of in [5] (2 c Ψ_pad, 3 c Ψ_pad at stage 3), the
# weights the same bits as plain data parallelism in [6]; the options it
# refuses, each naming the value.
if [ -x "$bin/lab11" ]; then
    mem11=("285504 \+ 285504 \+ 571008 bytes, plus 0 of buckets" "285504 \+ 285504 \+ 71376 bytes, plus 0 of buckets"
           "285504 \+ 35688 \+ 71376 bytes, plus 265728 of buckets" "35688 \+ 35688 \+ 71376 bytes, plus 531456 of buckets")
    name11=("plain data parallelism" "ZeRO-1 \(P_os\)" "ZeRO-2 \(P_os\+g\)" "ZeRO-3 \(P_os\+g\+p\)")
    sent11=(124908 124908 124908 187362)
    for st in 0 1 2 3; do
        out=$("$bin/lab11" --no-viz --epochs 1 --stage "$st" 2>&1); rc=$?
        check "lab11 --stage $st: exit 0" test "$rc" = 0
        for want in "^paralab lab 11 — ZeRO stage $st \(8 ranks on .*; h = 64, L = 2, a batch of 64\)$" \
                    "^\[1\] What a replica holds: ${name11[$st]} on 8 ranks, Ψ = 71370 parameters \(Ψ_pad = 71376 with the padding\)\. .* = ${mem11[$st]}: every rank the same\. " \
                    '^\[2\] The buckets: the model in U = L \+ 2 = 4 units .*: in 4160 -> 4160 / 8 = 520; b0 33216 -> 33216 / 8 = 4152; b1 33216 -> 33216 / 8 = 4152; head 778 -> 784 / 8 = 98\. Ψ = 71370, Ψ_pad = 71376: 6 floats of padding ' \
                    "^\[5\] The communication of the step, from rank 0.s ledger \(pl_comm_ledger\): ${sent11[$st]} floats sent .* = ${sent11[$st]} floats .*: the same on every rank\. " \
                    '^\[6\] The weights against plain data parallelism: .*, 71370 are the same bits: all of them ' \
                    '^\[7\] Epoch 1/1: loss [0-9.]+ \(the mean over 1408 samples\), test [0-9.]+ %\.$' \
                    '^  \(reference\)  PASS  11_zero +zero1_update'; do
            check "lab11 --stage $st shows: $want" grep -qE -- "$want" <<<"$out"
        done
        if [ "$st" = 1 ]; then
            check "lab11 --stage 1: [4] the exercise's update ran" grep -qE '^\[4\] The update \(the reference.s lab11_zero1_update\): for each bucket the gradients reduce-scattered in place' <<<"$out"
        fi
        # [1]: with the working buckets, stages 2 and 3 hold more than stage 1 at this size;
        # [3]: where the screen shows the units; [6] at stage 0: stage 0 against itself
        check "lab11 --stage $st: [1] the stages with their buckets, more than stage 1" grep -qE '^\[1\] .* stage 1 627\.3 KiB, stage 2 383\.4 KiB \(658296 B with its buckets\), stage 3 139\.4 KiB \(674208 B with its buckets\): .* At this toy size stages 2 and 3 hold MORE than stage 1 once the working buckets count: two buckets of the largest unit \(33216 floats; ' <<<"$out"
        check "lab11 --stage $st: [3] the timeline's digits, the devices pane's labels" grep -qE '^\[3\] .*through the 4 units \(the timeline draws each unit.s forward and backward as the micro-batch.s digit on its rank.s lane; the devices pane writes each rank.s latest label: "F in" \.\.\. "F head", then "B head" \.\.\. "B in", then "update"\); ' <<<"$out"
        if [ "$st" = 0 ]; then
            check "lab11 --stage 0: [6] says stage 0 is compared with itself" grep -qE '^\[6\] .*: all of them .*\(Stage 0 against stage 0: trivially the same bits; run --stage 1, 2 or 3 to compare a ZeRO stage\.\)$' <<<"$out"
        else
            check "lab11 --stage $st: [6] memory, not arithmetic" grep -qE '^\[6\] .*: all of them .* What ZeRO shards is memory, not arithmetic\.$' <<<"$out"
        fi
    done
    # one "update" event per step and rank in the trace at stage 1 (the exercise's update,
    # inside pl_zero_update_with): rank 0's, as many as the steps the run took
    tr11="$(mktemp "${TMPDIR:-/tmp}/lab11_trace.XXXXXX")"
    out=$("$bin/lab11" --no-viz --stage 1 --epochs 1 --trace "$tr11" 2>&1); rc=$?
    steps11=$(sed -nE 's/^  ([0-9]+) steps of a batch of 64 at stage 1 on 8 ranks: .*/\1/p' <<<"$out")
    updates11=$(grep -c '^{"name":"update","cat":"optimizer","ph":"X","pid":0,' "$tr11")
    check "lab11 --stage 1 --trace F: exit 0, one update event of rank 0 per step (${steps11:-?} steps, $updates11 events)" bash -c 'test "$1" = 0 && test -n "$2" && test "$2" -gt 0 && test "$2" = "$3"' _ "$rc" "$steps11" "$updates11"
    rm -f "$tr11"
    if [ -x "$bin/labcheck" ]; then # --short's Lab 11, as its guide says
        check "labcheck --help: --short trains Lab 11 2 epochs of its 20, to 90 %" bash -c '"$1" --help | tr -s " \n" " " | grep -qF "Lab 11 trains 2 epochs of its 20, to 90 %;"' _ "$bin/labcheck"
    fi
    out=$("$bin/lab11" --no-viz --epochs 1 --stage 2 --accumulate 2 --devices 4 --no-overlap 2>&1); rc=$?
    check "lab11 --stage 2 --accumulate 2 --devices 4 --no-overlap: exit 0, (k + 1) c Ψ_pad" bash -c 'test "$1" = 0 && grep -qE "^\[5\] .*: \(k \+ 1\) c Ψ_pad = 3 x 0\.750 x 71372 = 160587 floats .*: the same on every rank\. " <<<"$2" && grep -qE "^\[4\] .*--no-overlap: every collective on the compute stream, in order\.$" <<<"$2"' _ "$rc" "$out"
    check "lab11 --stage 2 --accumulate 2 --devices 4: [6] why k > 1 differs, and by more than the last bits under AdamW" grep -qE '^\[6\] .* are the same bits \(hashes .*\. With k > 1, stages 2 and 3 reduce every micro-step and add the sums, while stage 0 adds the micro-steps first and reduces once: the same sum in another order, so gradients differ in their last bits, and by more, relatively, where their terms nearly cancel\. AdamW moves a weight by about lr g / \(\|g\| \+ eps\), as far for a tiny gradient as for a large one, so such a difference shows in the weights \(the largest above\); with SGD \(lr g\) it stays as small as the gradient.s: the unit suite checks k > 1 with SGD, within 1e-6 relative\. Bit for bit holds for k = 1\.$' <<<"$out"
    refused11() { # the message stderr must be, then the arguments
        local want=$1 err rc
        shift
        err=$(env -u SIMT_DEVICES -u PARALAB_SIM_DEVICES "$bin/lab11" --no-viz --epochs 1 "$@" 2>&1 >/dev/null); rc=$?
        check "lab11 $*: exit 2, '$want'" bash -c 'test "$1" = 2 && test "$2" = "$3"' _ "$rc" "$err" "$want"
    }
    refused11 "lab11: --stage 4: ZeRO has stages 0 (plain data parallelism), 1 (optimizer state sharded), 2 (and gradients) and 3 (and parameters)" --stage 4
    refused11 "lab11: --stage 'two' is not a whole number from 0 to 3" --stage two
    refused11 "lab11: --batch 64: 64 rows do not split into 3 ranks of 1 micro-step (B must be a multiple of N k = 3)" --devices 3
    refused11 "lab11: --accumulate 0: the micro-steps per optimizer step must be 1..1024" --accumulate 0
    help=$("$bin/lab11" --help 2>&1)
    for want in '^      --stage S +ZeRO stage: 0 \(plain DP\), 1, 2 or 3 \(default 3\)$' \
                '^      --accumulate k +micro-steps per optimizer step \(default 1\)$' \
                '^      --no-overlap +collectives on the compute stream, in order$'; do
        check "lab11 --help: $want" grep -qE -- "$want" <<<"$help"
    done
fi
# every lab's --help within 80 columns
for lab in "$bin"/lab[0-9][0-9]; do
    wide=$("$lab" --help 2>&1 | awk 'length($0) > 80' | head -1)
    check "$(basename "$lab") --help: no line wider than 80 columns${wide:+ ($wide)}" test -z "$wide"
done
# A model too large for the machine's memory (simulated build: the devices'
# memory is the host's): Labs 08-11 refuse it before allocating anything,
# at once, with exit 2, naming --hidden and --layers, the bytes needed, the
# memory there is and the sizes that fit. PARALAB_MEMORY_LIMIT sets the
# memory they count on, so the checks do not depend on this machine's RAM.
if [[ "$bin" == *sim* ]] && [ -x "$bin/lab11" ]; then
    for n in 08 09 10 11; do
        start=$(date +%s)
        err=$(PARALAB_MEMORY_LIMIT=8G timeout 60 "$bin/lab$n" --layers 64 --hidden 1024 --no-viz --epochs 1 2>&1 >/dev/null); rc=$?
        secs=$(($(date +%s) - start))
        check "PARALAB_MEMORY_LIMIT=8G lab$n --layers 64 --hidden 1024: exit 2 ($rc) in ${secs} s, names the values, the limit and the sizes that fit" \
            bash -c 'test "$1" = 2 && test "$2" -le 10 && grep -qE "^lab$3: --hidden 1024 --layers 64: this run needs about [0-9.]+ GiB of memory \([0-9,]+ bytes: the 537,408,522 parameters.* simulated GPUs whose memory is this machine.s, and 128 MiB for the program itself\), and this machine has 8\.0 GiB available \(PARALAB_MEMORY_LIMIT=8G\); with --layers 64 the widest that fits is --hidden [0-9]+, with --hidden 1024 the most is --layers [0-9]+$" <<<"$4"' _ "$rc" "$secs" "$n" "$err"
    done
    err=$(PARALAB_MEMORY_LIMIT=8G "$bin/lab11" --layers 64 --hidden 1024 --stage 0 --no-viz --epochs 1 2>&1); rc=$?
    check "PARALAB_MEMORY_LIMIT=8G lab11 --layers 64 --hidden 1024 --stage 0: exit 2 ($rc), the whole message and nothing else" bash -c 'test "$1" = 2 && test "$2" = "$3"' _ "$rc" "$err" \
        "lab11: --hidden 1024 --layers 64: this run needs about 168.6 GiB of memory (181,078,657,504 bytes: the 537,408,522 parameters' values, gradients and AdamW moments and the activations, on 8 simulated GPUs whose memory is this machine's, and 128 MiB for the program itself), and this machine has 8.0 GiB available (PARALAB_MEMORY_LIMIT=8G); with --layers 64 the widest that fits is --hidden 219, with --hidden 1024 the most is --layers 2"
    # the batch, when the activations are a large part: named too
    err=$(PARALAB_MEMORY_LIMIT=300M "$bin/lab09" --hidden 256 --layers 8 --batch 1024 --schedule gpipe --no-viz --epochs 1 2>&1 >/dev/null); rc=$?
    check "PARALAB_MEMORY_LIMIT=300M lab09 --hidden 256 --layers 8 --batch 1024: exit 2 ($rc), names --batch" bash -c 'test "$1" = 2 && grep -qE "^lab09: --hidden 256 --layers 8 --batch 1024: this run needs about " <<<"$2"' _ "$rc" "$err"
    # a default run under a limit it fits runs as before; under a tiny one it is refused
    out=$(PARALAB_MEMORY_LIMIT=1G "$bin/lab08" --no-viz --epochs 1 2>&1); rc=$?
    check "PARALAB_MEMORY_LIMIT=1G lab08 --epochs 1: exit 0 ($rc)" test "$rc" = 0
    err=$(PARALAB_MEMORY_LIMIT=1M "$bin/lab09" --no-viz 2>&1 >/dev/null); rc=$?
    check "PARALAB_MEMORY_LIMIT=1M lab09: exit 2 ($rc), names --hidden 64 --layers 4 and the limit" bash -c 'test "$1" = 2 && grep -qE "^lab09: --hidden 64 --layers 4[ :].*, and this machine has 1\.0 MiB available \(PARALAB_MEMORY_LIMIT=1M\); that is less than the 128 MiB the program itself takes$" <<<"$2"' _ "$rc" "$err"
    err=$(PARALAB_MEMORY_LIMIT=lots "$bin/lab08" --no-viz 2>&1 >/dev/null); rc=$?
    check "PARALAB_MEMORY_LIMIT=lots lab08: exit 2 ($rc), names the variable" bash -c 'test "$1" = 2 && test "$2" = "$3"' _ "$rc" "$err" \
        "lab08: PARALAB_MEMORY_LIMIT=lots: not a number of bytes (e.g. 8000000000 or 8G)"
    # an address-space limit: the message names it (not vm.overcommit_memory)
    if [[ "$bin" != *asan* ]]; then # (the sanitizer build reserves no shadow of its own)
        err=$(ulimit -v 8000000; "$bin/lab08" --no-viz 2>&1 >/dev/null); rc=$?
        check "ulimit -v 8000000 lab08: exit 70 ($rc), the message names ulimit -v" bash -c 'test "$1" = 70 && grep -qF "This process'"'"'s address space is limited to 7812 MiB (ulimit -v 8000000)" <<<"$2" && ! grep -q overcommit <<<"$2"' _ "$rc" "$err"
    fi
fi
# The simulator's settings (simulated build only): SIMT_DEVICES, SIMT_GPU and
# SIMT_MEM_MB take effect; the old PARALAB_SIM_* names still do, with one note
# on stderr naming the new name; a bad value's message names the variable
# as the user set it.
if [ -x "$bin/lab06" ] && [[ "$bin" == *sim* ]]; then
    simt_env() { # the expected exit status, VAR=value..., then -- and the command
        local want_rc=$1 vars=() out rc
        shift
        while [ "$1" != -- ]; do vars+=("$1"); shift; done
        shift
        out=$(env -u SIMT_DEVICES -u SIMT_GPU -u SIMT_MEM_MB -u PARALAB_SIM_DEVICES \
              -u PARALAB_SIM_GPU -u PARALAB_SIM_MEM_MB -u SIMT_GPUS_PER_NODE "${vars[@]}" "$@" 2>&1); rc=$?
        check "${vars[*]} $(basename "$1") ${*:2}: exit $rc" test "$rc" = "$want_rc"
        simt_out=$out
    }
    notes() { grep -c 'deprecated' <<<"$simt_out"; }
    simt_env 2 SIMT_DEVICES=2 -- "$bin/lab06" --no-viz --devices 3
    check "SIMT_DEVICES=2: 2 devices, no note" bash -c 'grep -q "there are 2 simulated devices" <<<"$1" && ! grep -q deprecated <<<"$1"' _ "$simt_out"
    simt_env 2 PARALAB_SIM_DEVICES=2 -- "$bin/lab06" --no-viz --devices 3
    check "PARALAB_SIM_DEVICES=2: 2 devices, one note naming SIMT_DEVICES" bash -c 'grep -q "there are 2 simulated devices" <<<"$1" && grep -qx "simt: PARALAB_SIM_DEVICES is deprecated: use SIMT_DEVICES (it means the same)" <<<"$1" && test "$2" = 1' _ "$simt_out" "$(notes)"
    simt_env 2 PARALAB_SIM_DEVICES=2 SIMT_DEVICES=4 -- "$bin/lab06" --no-viz --devices 5
    check "both set: SIMT_DEVICES wins, the note says the old one is ignored" bash -c 'grep -q "there are 4 simulated devices" <<<"$1" && grep -qx "simt: PARALAB_SIM_DEVICES is deprecated and ignored, as SIMT_DEVICES is set: use SIMT_DEVICES" <<<"$1" && test "$2" = 1' _ "$simt_out" "$(notes)"
    simt_env 0 SIMT_GPU=A100-SXM-80GB -- "$bin/lab02" --no-viz --size 256
    check "SIMT_GPU=A100-SXM-80GB: the A100, no note" bash -c 'grep -q "^\[1\] The NVIDIA A100-SXM4-80GB (simulated)" <<<"$1" && ! grep -q deprecated <<<"$1"' _ "$simt_out"
    simt_env 0 PARALAB_SIM_GPU=A100-SXM-80GB -- "$bin/lab02" --no-viz --size 256
    check "PARALAB_SIM_GPU=A100-SXM-80GB: the A100, one note naming SIMT_GPU" bash -c 'grep -q "^\[1\] The NVIDIA A100-SXM4-80GB (simulated)" <<<"$1" && grep -qx "simt: PARALAB_SIM_GPU is deprecated: use SIMT_GPU (it means the same)" <<<"$1" && test "$2" = 1' _ "$simt_out" "$(notes)"
    for v in SIMT_GPU PARALAB_SIM_GPU; do
        simt_env 2 $v=B200 -- "$bin/lab01" --no-viz
        check "$v=B200: the message names $v" grep -qx "simt: $v=B200 is not a known preset; choose one of: H100-SXM H200-SXM A100-SXM-80GB RTX-4090" <<<"$simt_out"
    done
    for v in SIMT_DEVICES PARALAB_SIM_DEVICES; do
        simt_env 2 $v=99 -- "$bin/lab01" --no-viz
        check "$v=99: the message names $v" grep -qx "simt: $v=99 is not a whole number from 0 to 64" <<<"$simt_out"
    done
    for v in SIMT_MEM_MB PARALAB_SIM_MEM_MB; do
        simt_env 2 $v=0 -- "$bin/lab01" --no-viz
        check "$v=0: the message names $v" grep -qx "simt: $v=0 is not a whole number of MiB from 1 to 16777216" <<<"$simt_out"
    done
    for bad in 0 65 4x; do
        simt_env 2 SIMT_GPUS_PER_NODE=$bad -- "$bin/lab01" --no-viz
        check "SIMT_GPUS_PER_NODE=$bad: the message names it" grep -qx "simt: SIMT_GPUS_PER_NODE=$bad is not a whole number from 1 to 64" <<<"$simt_out"
    done
    for bad in 3 x; do
        simt_env 2 SIMT_RACES=$bad -- "$bin/lab01" --no-viz
        check "SIMT_RACES=$bad: the message names it" grep -qx "simt: SIMT_RACES=$bad is not 0 (no race check), 1 (the first block of each kernel's first launch) or 2 (every block)" <<<"$simt_out"
    done
    simt_env 2 SIMT_EAGER=2 -- "$bin/lab01" --no-viz
    check "SIMT_EAGER=2: the message names it" grep -qx "simt: SIMT_EAGER=2 is not 0 or 1" <<<"$simt_out"
fi
# labcheck --short (the sanitizer passes): Lab 07 without its 20-epoch runs
if [ -x "$bin/labcheck" ]; then
    out=$("$bin/labcheck" --solution --strict --short 07 2>&1); rc=$?
    check "labcheck --short 07: passes and says the 20-epoch runs are left out" bash -c 'test "$1" = 0 && grep -q "short run (--short): the 20-epoch runs are left to the plain build" <<<"$2" && ! grep -q "epoch 5/20" <<<"$2"' _ "$rc" "$out"
fi
# make check before make data: the exercises that train on the digits and
# are not attempted yet say TODO (exit 0), not "cannot read data/digits.csv"
# (labcheck copied into a tree of its own, so that the data is not found
# from the repository the program was built in either)
if [ -x "$bin/labcheck" ]; then
    nodata=$(mktemp -d)
    mkdir -p "$nodata/build/x/bin" && cp "$bin/labcheck" "$nodata/build/x/bin/"
    labcheck_abs=$nodata/build/x/bin/labcheck
    out=$(cd "$nodata" && "$labcheck_abs" 07 11 2>&1); rc=$?
    check "labcheck 07 11 without data/digits.csv: TODO, exit 0" bash -c 'test "$1" = 0 && grep -qE "^TODO  11_zero +zero1_update" <<<"$2" && grep -qE "^TODO  07_data_parallel +sync_gradients" <<<"$2" && ! grep -q "cannot read" <<<"$2"' _ "$rc" "$out"
    out=$(cd "$nodata" && "$labcheck_abs" --solution 11 2>&1); rc=$?
    rm -rf "$nodata"
    check "labcheck --solution 11 without data/digits.csv: FAIL naming make data" bash -c 'test "$1" = 1 && grep -qE "^FAIL  11_zero +zero1_update +cannot read data/digits.csv, neither from this folder nor as .*/data/digits.csv .*run .make data. there" <<<"$2"' _ "$rc" "$out"
fi
echo "lab smoke: $fails failed"
[ $fails = 0 ]
