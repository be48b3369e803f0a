#!/usr/bin/env bash
# tests/student_check.sh — what `make check` tells a student, end to end.
# Each scenario in tests/student/ replaces a lab's exercise file in a scratch
# copy of the tree; labcheck is built against it and its lines and exit
# status are compared with what the scenario must produce. ONLY=REGEX runs
# only the scenarios whose file name matches (e.g. ONLY=lab06).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0

# The correct scenarios are the reference solutions, renamed to be the
# student's: always in step with the solutions.
mkdir -p "$work/gen"
sed 's/lab01_solution/lab01_exercise/' "$root/labs/01_hello_threads/solution.cu" >"$work/gen/lab01_correct.cu"
sed 's/lab06_solution/lab06_exercise/' "$root/labs/06_collectives/solution.c" >"$work/gen/lab06_correct.c"
sed 's/lab07_solution/lab07_exercise/' "$root/labs/07_data_parallel/solution.c" >"$work/gen/lab07_correct.c"
sed 's/lab05_solution/lab05_exercise/' "$root/labs/05_streams/solution.c" >"$work/gen/lab05_correct.c"
sed 's/lab04_solution/lab04_exercise/' "$root/labs/04_gemm/solution.cu" >"$work/gen/lab04_correct.cu"
sed 's/lab03_solution/lab03_exercise/' "$root/labs/03_reduction/solution.cu" >"$work/gen/lab03_correct.cu"
sed 's/lab02_solution/lab02_exercise/' "$root/labs/02_memory/solution.cu" >"$work/gen/lab02_correct.cu"
# Lab 02's mistakes: no __syncthreads() between filling the tile and reading
# it; and a "tiled" kernel that writes along columns (right, uncoalesced)
perl -0pe 's/\n\s*__syncthreads\(\);\n/\n/' "$work/gen/lab02_correct.cu" >"$work/gen/lab02_no_barrier.cu"
perl -0pe 's/out\[\(size_t\)\(c0 \+ y \+ k\) \* rows \+ r0 \+ x\] = tile\[x\]\[y \+ k\];/out[(size_t)(c0 + x) * rows + r0 + y + k] = tile[y + k][x];/; s/if \(c0 \+ y \+ k < cols && r0 \+ x < rows\)/if (c0 + x < cols \&\& r0 + y + k < rows)/' \
    "$work/gen/lab02_correct.cu" >"$work/gen/lab02_column_writes.cu"
# and one that skips nothing past the edges of a tile (in each shape's own
# buffers: an out-of-bounds read, which the emulator names)
perl -0pe 's/\n\s*if \(r0 \+ y \+ k < rows && c0 \+ x < cols\)\n/\n/; s/\n\s*if \(c0 \+ y \+ k < cols && r0 \+ x < rows\)\n/\n/' \
    "$work/gen/lab02_correct.cu" >"$work/gen/lab02_no_edges.cu"
for f in lab02_no_barrier lab02_column_writes lab02_no_edges; do
    if cmp -s "$work/gen/lab02_correct.cu" "$work/gen/$f.cu"; then
        echo "FAIL  $f.cu: the edit no longer applies to labs/02_memory/solution.cu"
        exit 1
    fi
done
# Lab 03's classic mistake: no __syncthreads() between the tree's steps
perl -0pe 's/(if \(tid < half\) s\[tid\] \+= s\[tid \+ half\];\n)\s*__syncthreads\(\);\n/$1/g' \
    "$work/gen/lab03_correct.cu" >"$work/gen/lab03_no_barrier.cu"
if cmp -s "$work/gen/lab03_correct.cu" "$work/gen/lab03_no_barrier.cu"; then
    echo "FAIL  lab03_no_barrier.cu: the edit no longer applies to labs/03_reduction/solution.cu"
    exit 1
fi
# Lab 04's classic mistake: no zeros past the edges of the tiles
sed -e 's/row < M \&\& k0 + tx < K ? A\[row \* K + k0 + tx\] : 0.0f/A[row * K + k0 + tx]/' \
    -e 's/k0 + ty < K \&\& col < N ? B\[(k0 + ty) \* N + col\] : 0.0f/B[(k0 + ty) * N + col]/' \
    "$work/gen/lab04_correct.cu" >"$work/gen/lab04_no_edges.cu"
if cmp -s "$work/gen/lab04_correct.cu" "$work/gen/lab04_no_edges.cu"; then
    echo "FAIL  lab04_no_edges.cu: the edit no longer applies to labs/04_gemm/solution.cu"
    exit 1
fi
# Lab 05's classic mistake: every chunk on the first stream (right, but serial)
sed 's/streams\[k % nstreams\]/streams[0]/' "$work/gen/lab05_correct.c" >"$work/gen/lab05_one_stream.c"
if cmp -s "$work/gen/lab05_correct.c" "$work/gen/lab05_one_stream.c"; then
    echo "FAIL  lab05_one_stream.c: the edit no longer applies to labs/05_streams/solution.c"
    exit 1
fi
# Lab 05: the kernel forgotten (copy in, copy out): d_out must not still
# hold the one-stream run's result
grep -v 'lab05_process(d_out + off' "$work/gen/lab05_correct.c" >"$work/gen/lab05_no_kernel.c"
if cmp -s "$work/gen/lab05_correct.c" "$work/gen/lab05_no_kernel.c"; then
    echo "FAIL  lab05_no_kernel.c: the edit no longer applies to labs/05_streams/solution.c"
    exit 1
fi
# Lab 07's classic mistake, made from the solution by one edit: sum the
# gradients and forget to divide by the rank count.
sed 's|1.0f / (float)n, stream|1.0f, stream|' "$work/gen/lab07_correct.c" >"$work/gen/lab07_sum_only.c"
if cmp -s "$work/gen/lab07_correct.c" "$work/gen/lab07_sum_only.c"; then
    echo "FAIL  lab07_sum_only.c: the edit no longer applies to labs/07_data_parallel/solution.c"
    exit 1
fi
# Lab 07: no sharding, every rank takes the whole batch
sed 's|    \*count = B / n;|    *count = B;|' "$work/gen/lab07_correct.c" >"$work/gen/lab07_whole_batch.c"
if cmp -s "$work/gen/lab07_correct.c" "$work/gen/lab07_whole_batch.c"; then
    echo "FAIL  lab07_whole_batch.c: the edit no longer applies to labs/07_data_parallel/solution.c"
    exit 1
fi
# pl_k_scale's count and factor swapped: C would convert both silently
# (nothing scaled); paralab/nn.h makes the compiler refuse it.
sed 's|pl_k_scale(grad, (long)count, 1.0f / (float)n, stream)|pl_k_scale(grad, 1.0f / (float)n, (long)count, stream)|' \
    "$work/gen/lab07_correct.c" >"$work/gen/lab07_swapped_scale.c"
if cmp -s "$work/gen/lab07_correct.c" "$work/gen/lab07_swapped_scale.c"; then
    echo "FAIL  lab07_swapped_scale.c: the edit no longer applies to labs/07_data_parallel/solution.c"
    exit 1
fi
# Lab 08's classic mistakes, each one edit to the solution:
sed 's/lab08_solution/lab08_exercise/' "$root/labs/08_tensor_parallel/solution.c" >"$work/gen/lab08_correct.c"
# b2 added on every rank's partial sum, before g adds them up (t b2 in all)
perl -0pe 's/(    PL_TP_TRY\(pl_tp_g_forward\(tp, partial, y, n\)\);[^\n]*\n)    PL_TP_TRY\(pl_k_bias_add\(y, b, tp->local_rows, n, tp->stream\)\);[^\n]*\n/    PL_TP_TRY(pl_k_bias_add(partial, b, tp->rows, n, tp->stream));\n$1/' \
    "$work/gen/lab08_correct.c" >"$work/gen/lab08_b2_every_rank.c"
# the backward all-reduce missing: f' taken for a copy (each rank keeps its
# own part of dx)
perl -0pe 's|PL_TP_TRY\(pl_tp_f_backward\(tp, dxfull, dx, k\)\);[^\n]*|PL_TP_TRY(cudaMemcpyAsync(dx, dxfull, (size_t)tp->local_rows * k * sizeof(float),\n                              cudaMemcpyDeviceToDevice, tp->stream)); /* dx is dxfull */|' \
    "$work/gen/lab08_correct.c" >"$work/gen/lab08_no_backward_all_reduce.c"
# an all-reduce in the wrong place: g (all-reduce) entering the column-
# parallel layer instead of f (identity); f' (all-reduce) in the row-
# parallel backward instead of g' (identity)
sed 's/pl_tp_f_forward(tp, x, xfull, k)/pl_tp_g_forward(tp, x, xfull, k)/' \
    "$work/gen/lab08_correct.c" >"$work/gen/lab08_g_in_column_forward.c"
sed 's/pl_tp_g_backward(tp, dy, dyfull, n)/pl_tp_f_backward(tp, dy, dyfull, n)/' \
    "$work/gen/lab08_correct.c" >"$work/gen/lab08_f_backward_in_row_backward.c"
for f in lab08_b2_every_rank lab08_no_backward_all_reduce lab08_g_in_column_forward lab08_f_backward_in_row_backward; do
    if cmp -s "$work/gen/lab08_correct.c" "$work/gen/$f.c"; then
        echo "FAIL  $f.c: the edit no longer applies to labs/08_tensor_parallel/solution.c"
        exit 1
    fi
done
# Lab 09's mistakes, each one edit to the solution: in 1F1B's steady state
# the backward before the forward (the last stage, with no warm-up, then
# starts with BW0); the warm-up counted from the wrong end (stage r warms
# up with r forwards: stage 0 waits for a gradient that stage 1 cannot send
# before it gets its next input, a deadlock); GPipe's last backward left out
sed 's/lab09_solution/lab09_exercise/' "$root/labs/09_pipeline_parallel/solution.c" >"$work/gen/lab09_correct.c"
perl -0pe 's/(        PL_PP_TRY\(pl_pp_push\(s, stage, pl_pp_forward\(warmup \+ k, 0\)\)\);\n)(        PL_PP_TRY\(pl_pp_push\(s, stage, pl_pp_backward\(k, 0\)\)\);\n)/$2$1/' \
    "$work/gen/lab09_correct.c" >"$work/gen/lab09_backward_first.c"
sed 's/    int w = p - stage - 1; .*/    int w = stage;/' "$work/gen/lab09_correct.c" >"$work/gen/lab09_warmup_reversed.c"
sed 's/for (int k = 0; k < m; k++) PL_PP_TRY(pl_pp_push(s, stage, pl_pp_backward(k, 0)));/for (int k = 0; k < m - 1; k++) PL_PP_TRY(pl_pp_push(s, stage, pl_pp_backward(k, 0)));/' \
    "$work/gen/lab09_correct.c" >"$work/gen/lab09_gpipe_missing.c"
# ... and the warm-up one forward too many (legal: more memory, no less
# time), and a negative one (a count of forwards no stage can run)
sed 's/    int w = p - stage - 1; .*/    int w = p - stage;/' "$work/gen/lab09_correct.c" >"$work/gen/lab09_warmup_plus_one.c"
sed 's/    int w = p - stage - 1; .*/    int w = -1 - stage;/' "$work/gen/lab09_correct.c" >"$work/gen/lab09_warmup_negative.c"
for f in lab09_backward_first lab09_warmup_reversed lab09_gpipe_missing lab09_warmup_plus_one \
    lab09_warmup_negative; do
    if cmp -s "$work/gen/lab09_correct.c" "$work/gen/$f.c"; then
        echo "FAIL  $f.c: the edit no longer applies to labs/09_pipeline_parallel/solution.c"
        exit 1
    fi
done
# Lab 10's mistakes, each one edit to the solution: the two orders swapped in
# coords (Megatron's formula read as picotron's); the DP groups split with the
# PP groups' color (the DP reduction would run on the wrong group); dp_after
# returning -1 for the last stage, which has no warm-up in 1F1B (it would
# never reduce, and its replicas drift apart)
sed 's/lab10_solution/lab10_exercise/' "$root/labs/10_hybrid/solution.c" >"$work/gen/lab10_correct.c"
sed 's/    if (m->order == PL_MESH_MEGATRON) { /    if (m->order != PL_MESH_MEGATRON) { /' \
    "$work/gen/lab10_correct.c" >"$work/gen/lab10_orders_swapped.c"
sed 's/    if ((rc = pl_comm_split(world, c.tp + m->tp \* c.pp, c.dp, &g->dp))) return rc;/    if ((rc = pl_comm_split(world, c.tp + m->tp * c.dp, c.dp, \&g->dp))) return rc;/' \
    "$work/gen/lab10_correct.c" >"$work/gen/lab10_dp_pp_color.c"
sed 's/    if (stage < 0 || stage >= s->stages) return -1;/    if (stage < 0 || stage >= s->stages - 1) return -1; \/* the last: no warm-up *\//' \
    "$work/gen/lab10_correct.c" >"$work/gen/lab10_last_stage_never.c"
# make_groups returning a code of its own (not pl_comm_split's), and
# dp_after an index past the stage's list
sed '/&g->pp))) return rc;/{n;s/    return 0;/    return 42;/}' \
    "$work/gen/lab10_correct.c" >"$work/gen/lab10_groups_42.c"
sed 's/    if (stage < 0 || stage >= s->stages) return -1;/&\n    if (stage == 0) return 1000;/' \
    "$work/gen/lab10_correct.c" >"$work/gen/lab10_dp_after_1000.c"
# ... and make_groups where only some ranks call a split (the PP split on
# pp 0 only), or only some call a barrier
# (tp 0 waits in a barrier of its TP group, while tp 1 makes its DP group:
# a deadlock); an endless loop in coords
sed 's/    if ((rc = pl_comm_split(world, c.tp + m->tp \* c.dp, c.pp, &g->pp))) return rc;/    if (c.pp == 0 \&\& (rc = pl_comm_split(world, c.tp + m->tp * c.dp, c.pp, \&g->pp))) return rc;/' \
    "$work/gen/lab10_correct.c" >"$work/gen/lab10_pp_split_some.c"
perl -0pe 's/(    if \(\(rc = pl_comm_split\(world, c.dp \+ m->dp \* c.pp, c.tp, &g->tp\)\)\) return rc;\n)/$1    if (c.tp == 0 \&\& (rc = pl_comm_barrier(g->tp))) return rc;\n/' \
    "$work/gen/lab10_correct.c" >"$work/gen/lab10_barrier_some.c"
perl -0pe 's/(static int coords\(const pl_mesh \*m, int rank, pl_mesh_coord \*c\)\n\{\n)/$1    volatile int spin = 1; \/* an endless loop *\/\n    while (spin) {\n    }\n/' \
    "$work/gen/lab10_correct.c" >"$work/gen/lab10_endless_coords.c"
for f in lab10_orders_swapped lab10_dp_pp_color lab10_last_stage_never lab10_groups_42 \
    lab10_dp_after_1000 lab10_pp_split_some lab10_barrier_some lab10_endless_coords; do
    if cmp -s "$work/gen/lab10_correct.c" "$work/gen/$f.c"; then
        echo "FAIL  $f.c: the edit no longer applies to labs/10_hybrid/solution.c"
        exit 1
    fi
done
# Lab 11's mistakes, each one edit to the solution: an all-reduce where
# stage 1 reduce-scatters (the weights are right, the traffic is not); the
# optimizer over the whole buffer (pl_zero_optimize_range refuses a range of
# the state that is not the rank's); the all-gather forgotten (each replica
# keeps the other ranks' slices stale)
sed 's/lab11_zero1_update_solution/lab11_zero1_update/' "$root/labs/11_zero/solution.c" >"$work/gen/lab11_correct.c"
sed 's/        if (pl_reduce_scatter(z->comm, g, g + me \* k->shard, (size_t)k->shard, PL_FLOAT32, PL_SUM,/        if (pl_all_reduce(z->comm, g, g, (size_t)k->padded, PL_FLOAT32, PL_SUM,/' \
    "$work/gen/lab11_correct.c" >"$work/gen/lab11_all_reduce.c"
sed 's/        if (pl_zero_optimize_range(z, z->params + off, z->grads + off, k->slice_at, k->real, lr))/        if (b == 0 \&\& pl_zero_optimize_range(z, z->params, z->grads, 0, z->psi_pad, lr))/' \
    "$work/gen/lab11_correct.c" >"$work/gen/lab11_whole_buffer.c"
perl -0pe 's/    for \(int b = 0; b < z->units; b\+\+\) \{\n        const pl_zero_bucket \*k = &z->bucket\[b\];\n        float \*p = z->params \+ k->full_at;\n.*?\n    \}\n    return 0;/    return 0;/s' \
    "$work/gen/lab11_correct.c" >"$work/gen/lab11_no_all_gather.c"
# pl_zero_count_step once per bucket (AdamW's bias correction sees the wrong
# step: SGD would not show it); the slice offset of the next rank (rank r
# updates slice r + 1: its own slice stays stale); an offset one float too
# far (the last rank's last slice reads past the buffers: the simulator's
# fault report)
perl -0pe 's/    pl_zero_count_step\(z\);\n(    for \(int b = 0; b < z->units; b\+\+\) \{\n        const pl_zero_bucket \*k = &z->bucket\[b\];\n)/$1        pl_zero_count_step(z);\n/' \
    "$work/gen/lab11_correct.c" >"$work/gen/lab11_count_per_bucket.c"
sed 's/        long off = k->full_at + me \* k->shard;/        long off = k->full_at + ((me + 1) % z->n) * k->shard;/' \
    "$work/gen/lab11_correct.c" >"$work/gen/lab11_next_slice.c"
sed 's/        long off = k->full_at + me \* k->shard;/        long off = k->full_at + me * k->shard + 1;/' \
    "$work/gen/lab11_correct.c" >"$work/gen/lab11_off_by_one.c"
# the exercise's PL_TODO() deleted and nothing written: pl_zero_count_step
# never called (the message must not speak of calling it per bucket)
sed '/^    PL_TODO();$/d' "$root/labs/11_zero/exercise.c" >"$work/gen/lab11_empty.c"
if cmp -s "$root/labs/11_zero/exercise.c" "$work/gen/lab11_empty.c"; then
    echo "FAIL  lab11_empty.c: labs/11_zero/exercise.c has no PL_TODO(); line to delete"
    exit 1
fi
for f in lab11_all_reduce lab11_whole_buffer lab11_no_all_gather lab11_count_per_bucket \
    lab11_next_slice lab11_off_by_one; do
    if cmp -s "$work/gen/lab11_correct.c" "$work/gen/$f.c"; then
        echo "FAIL  $f.c: the edit no longer applies to labs/11_zero/solution.c"
        exit 1
    fi
done
# A mistake made from the solution by one edit (checked to apply): the
# all-gather passes on the wrong segment (FAIL: the first wrong element).
sed 's/int out = lab06_mod(r - s, n), in = lab06_mod(r - s - 1, n);/int out = lab06_mod(r - s - 1, n), in = lab06_mod(r - s - 2, n);/' \
    "$work/gen/lab06_correct.c" >"$work/gen/lab06_wrong_segment.c"
if cmp -s "$work/gen/lab06_correct.c" "$work/gen/lab06_wrong_segment.c"; then
    echo "FAIL  lab06_wrong_segment.c: the edit no longer applies to labs/06_collectives/solution.c"
    exit 1
fi

# Every scenario's copy starts as a copy (cp -a: times kept) of one copy of
# the tree in which labcheck and the lab binaries are already built, so a
# scenario's make compiles only the exercise file it replaced (and links):
# the same build of the same files as from scratch, without rebuilding the
# unchanged rest of the tree each time (minutes of CPU in all).
base="$work/base"
new_copy() { # the directory to create
    if [ ! -d "$base/build/bin" ]; then
        mkdir -p "$base"
        (cd "$root" && cp -r core viz tools labs tests bench mk "$base"/)
        local bins
        bins=$(cd "$root/labs" && for d in [0-9][0-9]_*; do printf 'build/bin/lab%s ' "${d:0:2}"; done)
        # shellcheck disable=SC2086
        if ! make -s -C "$base" -f mk/build.mk -j2 VARIANT=sim BUILD=build build/bin/labcheck $bins >"$base/build.log" 2>&1; then
            echo "FAIL  the untouched tree does not build"; sed -n '1,30p' "$base/build.log"; exit 1
        fi
    fi
    cp -a "$base" "$1"
}

# scenario file, lab dir, expected exit status, then patterns the output must
# contain. LABCHECK_ARGS adds labcheck options; CLOSED=1 also runs it with
# stdout and stderr closed (same exit status expected). TREE=NAME builds in
# a copy of the tree shared by the scenarios of that name: only the
# exercise file is compiled again (a few seconds, not a whole build).
scenario() {
    local file=$1 lab=$2 want_rc=$3
    shift 3
    [[ $file =~ ${ONLY:-.} ]] || return 0
    local copy="$work/${TREE:-${file%.*}}"
    [ -d "$copy/core" ] || new_copy "$copy"
    local src="$root/tests/student/$file"
    [ -f "$src" ] || src="$work/gen/$file"
    cp "$src" "$copy/labs/$lab/exercise.${file##*.}"
    touch "$copy/labs/$lab/exercise.${file##*.}"
    if ! make -s -C "$copy" -f mk/build.mk -j2 VARIANT=sim BUILD=build build/bin/labcheck >"$copy/build.log" 2>&1; then
        echo "FAIL  $file: does not build"; sed -n '1,20p' "$copy/build.log"; fails=$((fails + 1)); return
    fi
    local out rc=0
    # shellcheck disable=SC2086
    out=$("$copy/build/bin/labcheck" ${LABCHECK_ARGS:---timeout 60} 2>&1) || rc=$?
    local ok=1
    [ "$rc" = "$want_rc" ] || { ok=0; echo "  exit status $rc, expected $want_rc"; }
    for p in "$@"; do
        grep -qE -- "$p" <<<"$out" || { ok=0; echo "  missing: $p"; }
    done
    if [ "${CLOSED:-0}" = 1 ]; then
        local crc=0
        "$copy/build/bin/labcheck" --timeout 60 >&- 2>&- || crc=$?
        [ "$crc" = "$want_rc" ] || { ok=0; echo "  with stdout and stderr closed: exit status $crc, expected $want_rc"; }
    fi
    if [ $ok = 1 ]; then echo "PASS  $file"; else echo "FAIL  $file"; echo "$out" | sed 's/^/  | /'; fails=$((fails + 1)); fi
}

# A scenario that must not compile: the build of labcheck fails and its
# messages contain the patterns.
build_fails() {
    local file=$1 lab=$2
    shift 2
    [[ $file =~ ${ONLY:-.} ]] || return 0
    local copy="$work/${file%.*}" ok=1
    new_copy "$copy"
    local src="$root/tests/student/$file"
    [ -f "$src" ] || src="$work/gen/$file"
    cp "$src" "$copy/labs/$lab/exercise.${file##*.}"
    if make -s -C "$copy" -f mk/build.mk -j2 VARIANT=sim BUILD=build build/bin/labcheck >"$copy/build.log" 2>&1; then
        ok=0; echo "  it compiled, but must be refused"
    fi
    for p in "$@"; do
        grep -qE -- "$p" "$copy/build.log" || { ok=0; echo "  missing: $p"; }
    done
    if [ $ok = 1 ]; then echo "PASS  $file (refused at compile time)"; else echo "FAIL  $file"; sed 's/^/  | /' "$copy/build.log" | grep -v '^  | cc ' | head -40; fails=$((fails + 1)); fi
}

# The lab binary on the same scenario (after `scenario`, in its TREE if it
# has one): expected exit status, then patterns its output must contain.
# LAB_ARGS adds options.
lab_run() {
    local file=$1 lab=$2 bin=$3 want_rc=$4
    shift 4
    [[ $file =~ ${ONLY:-.} ]] || return 0
    local copy="$work/${TREE:-${file%.*}}" out rc=0 ok=1
    make -s -C "$copy" -f mk/build.mk -j2 VARIANT=sim BUILD=build "build/bin/$bin" >>"$copy/build.log" 2>&1 || { echo "FAIL  $bin on $file: does not build"; fails=$((fails + 1)); return; }
    # at most 300 s of CPU time (ulimit -t), never a wall-clock limit: a busy
    # machine slows the lab but does not spend its CPU time
    # shellcheck disable=SC2086
    out=$(ulimit -t 300; "$copy/build/bin/$bin" --no-viz ${LAB_ARGS:-} 2>&1) || rc=$?
    [ "$rc" = "$want_rc" ] || { ok=0; echo "  exit status $rc, expected $want_rc"; }
    for p in "$@"; do
        grep -qE -- "$p" <<<"$out" || { ok=0; echo "  missing: $p"; }
    done
    if [ $ok = 1 ]; then echo "PASS  $bin on $file"; else echo "FAIL  $bin on $file"; echo "$out" | sed 's/^/  | /'; fails=$((fails + 1)); fi
}

scenario lab01_correct.cu 01_hello_threads 0 \
    '^PASS  01_hello_threads +grid_size' '^PASS  01_hello_threads +vector_add' '2 passed, 0 failed, 17 todo' \
    '^TODO  06_collectives +ring_all_reduce +not attempted yet: PL_TODO\(\) at labs/06_collectives/exercise.c:[0-9]+'
CLOSED=1 scenario lab01_no_tail_guard.cu 01_hello_threads 1 \
    '^PASS  01_hello_threads +grid_size' \
    '^FAIL  01_hello_threads +vector_add +vector_add\(n=1, block=256\) failed on the device: cudaErrorIllegalAddress .*kernel vector_add.*blockIdx \(0,0,0\), threadIdx \(1,0,0\).*out-of-bounds read of 4 bytes'
# The same fault when the kernel has run before the launcher's
# cudaGetLastError() (CUDA_LAUNCH_BLOCKING=1 makes it so every time; without
# it, one run in twenty on a busy machine): still the kernel's failure, named
CUDA_LAUNCH_BLOCKING=1 TREE=lab01_no_tail_guard scenario lab01_no_tail_guard.cu 01_hello_threads 1 \
    '^FAIL  01_hello_threads +vector_add +vector_add\(n=1, block=256\) failed on the device: cudaErrorIllegalAddress .*kernel vector_add.*blockIdx \(0,0,0\), threadIdx \(1,0,0\).*out-of-bounds read of 4 bytes'
CUDA_LAUNCH_BLOCKING=1 TREE=lab01_no_tail_guard lab_run lab01_no_tail_guard.cu 01_hello_threads lab01 1 \
    '^\[2\] vector add c\[i\] = a\[i\] \+ b\[i\] failed: cudaErrorIllegalAddress' \
    'kernel vector_add \(labs/01_hello_threads/exercise.cu:[0-9]+\), blockIdx \(3,0,0\), threadIdx \(232,0,0\): out-of-bounds'
lab_run lab01_no_tail_guard.cu 01_hello_threads lab01 1 \
    '^\[2\] vector add c\[i\] = a\[i\] \+ b\[i\] failed: cudaErrorIllegalAddress' \
    'kernel vector_add \(labs/01_hello_threads/exercise.cu:[0-9]+\), blockIdx \(3,0,0\), threadIdx \(232,0,0\): out-of-bounds' \
    '^  \(yours\)      FAIL  01_hello_threads +vector_add'
scenario lab01_floor_division.cu 01_hello_threads 1 \
    '^FAIL  01_hello_threads +grid_size +grid_size\(n=1, block=1\)|grid_size\(n=1, block=32\) = 0, but 1 block is needed \(0 blocks of 32 threads cover 0 elements\)' \
    '^FAIL  01_hello_threads +vector_add +c \(n=257, block=256\)\[256\] = NaN but expected 129.25: this element was never written'
lab_run lab01_floor_division.cu 01_hello_threads lab01 1 \
    '^\[1\] grid size: 1000 elements, 256 threads per block -> 3 blocks \(768 threads\)' \
    '^\[2\] vector add .*: 768 of 1000 elements correct' \
    'first wrong: c\[768\] was never written \(expected 2304\)'
scenario lab01_host_crash.cu 01_hello_threads 1 \
    '^FAIL  01_hello_threads +grid_size +the check crashed with signal 11' \
    '^TODO  01_hello_threads +vector_add'

# The watchdog counts CPU time: grid_size sleeps 2 s (no CPU) past the 1 s
# timeout and passes; vector_add's kernel spins and is stopped, named.
LABCHECK_ARGS="--timeout 1" scenario lab01_endless_loop.cu 01_hello_threads 1 \
    '^PASS  01_hello_threads +grid_size' \
    '^FAIL  01_hello_threads +vector_add +no progress for 1 s of CPU time: kernel vector_add \(labs/01_hello_threads/exercise.cu:[0-9]+\) is in blockIdx \(0,0,0\), threadIdx \(0,0,0\): an endless loop\? \(make check ARGS="--timeout S" allows longer\)$'
LAB_ARGS="--stall-timeout 1" lab_run lab01_endless_loop.cu 01_hello_threads lab01 1 \
    '^\[1\] grid size: 1000 elements' \
    '^  the run is stopped: no progress for 1 s of CPU time: kernel vector_add \(labs/01_hello_threads/exercise.cu:[0-9]+\) is in blockIdx \(0,0,0\), threadIdx \(0,0,0\): an endless loop\? \(--stall-timeout S allows longer\)$'

# The same lab01 in the UI (tmux, 80x24, NO_COLOR) while its kernel loops:
# q, and Ctrl-C, each stop it (the watchdog, hurried to 1 s of CPU time once
# a quit is asked, names the kernel the ranks cannot leave), exit with the
# stated status and give the terminal back (canonical mode and echo, read
# by stty after the exit).
tty_endless() {
    local copy="$work/lab01_endless_loop" sock key want name pid ticks
    [[ lab01_endless_loop.cu =~ ${ONLY:-.} ]] || return 0 # ONLY= left its scenario out
    if ! command -v tmux >/dev/null; then echo "FAIL  lab01 UI, endless kernel: tmux is not installed"; fails=$((fails + 1)); return; fi
    [ -x "$copy/build/bin/lab01" ] || { echo "FAIL  lab01 UI, endless kernel: no lab01 built"; fails=$((fails + 1)); return; }
    local hz; hz=$(getconf CLK_TCK)
    for key in q C-c; do
        if [ "$key" = q ]; then want=0 name="q"; else want=130 name="Ctrl-C"; fi
        sock="paralab-endless-$$-$key"
        tmux -L "$sock" new-session -d -s t -x 80 -y 24 "cd '$copy' && TERM=xterm-256color NO_COLOR=1 '$copy/build/bin/lab01' --step; echo EXIT=\$?; stty -a | tr ' ' '\n' | grep -xE -- '-?(icanon|echo)' | tr '\n' ' '; echo; sleep 60"
        local ok=1 s=""
        # each wait ends on what it waits for or on the lab's exit; the 3000
        # polls only bound a test that is already failing
        for _ in $(seq 3000); do s=$(tmux -L "$sock" capture-pane -p -t t) || true; grep -qF "step 1/4" <<<"$s" && break; sleep 0.1; done
        grep -qF "step 1/4" <<<"$s" || { ok=0; echo "  $name: the UI did not come up"; }
        tmux -L "$sock" send-keys -t t Space
        # the kernel is looping once the lab has spent 1 s of CPU time (grid_size slept)
        pid=$(pgrep -n -f "^$copy/build/bin/lab01 --step") || true
        for _ in $(seq 3000); do
            ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null) || break
            [ "$ticks" -ge "$hz" ] && break
            sleep 0.1
        done
        tmux -L "$sock" send-keys -t t "$key"
        # the exit, then the line stty prints after it (reading only the
        # exit raced that line)
        for _ in $(seq 3000); do s=$(tmux -L "$sock" capture-pane -p -J -t t -S -200) || true; grep -q "^EXIT=" <<<"$s" && grep -qE "^-?(icanon|echo)( |$)" <<<"$s" && break; sleep 0.1; done
        grep -qx "EXIT=$want" <<<"$s" || { ok=0; echo "  $name: expected EXIT=$want"; }
        local msg="stopped by the student"
        [ "$key" = C-c ] && msg="$msg (Ctrl-C)"
        grep -qE "^  $(sed 's/[()]/\\&/g' <<<"$msg"): the ranks cannot reach their next step: no progress for 1 s of CPU time: kernel vector_add \(labs/01_hello_threads/exercise.cu:[0-9]+\) is in blockIdx \(0,0,0\), threadIdx \(0,0,0\)$" <<<"$s" ||
            { ok=0; echo "  $name: no line '$msg: the ranks cannot reach their next step: ... kernel vector_add ...'"; }
        grep -qE "^(icanon echo|echo icanon) *$" <<<"$s" || { ok=0; echo "  $name: the terminal is not restored (icanon, echo)"; }
        tmux -L "$sock" kill-server 2>/dev/null || true
        if [ $ok = 1 ]; then echo "PASS  lab01 UI, endless kernel: $name stops it (exit $want), terminal restored"
        else echo "FAIL  lab01 UI, endless kernel: $name"; echo "$s" | sed 's/^/  | /'; fails=$((fails + 1)); fi
    done
}
tty_endless

scenario lab02_correct.cu 02_memory 0 \
    '^PASS  02_memory +transpose_tiled'
scenario lab02_no_barrier.cu 02_memory 1 \
    '^FAIL  02_memory +transpose_tiled +transpose_tiled\(rows=[0-9]+, cols=[0-9]+\)( under SIMT_SCHEDULE=reverse)?: out\[[0-9]+\]\[[0-9]+\] = .* but in\[[0-9]+\]\[[0-9]+\] = '
scenario lab02_no_edges.cu 02_memory 1 \
    '^FAIL  02_memory +transpose_tiled +transpose_tiled\(rows=1, cols=1\) failed: cudaErrorIllegalAddress kernel transpose_tiled \(labs/02_memory/exercise.cu:[0-9]+\), blockIdx \(0,0,0\), threadIdx \([0-9]+,[0-9]+,0\): out-of-bounds read of 4 bytes .*\(base 0x[0-9a-f]+, 4 bytes, device 0\)'
scenario lab02_column_writes.cu 02_memory 1 \
    '^FAIL  02_memory +transpose_tiled +transpose_tiled at 256x256: [0-9.]+ sectors per request \(loads and stores\), the naive transpose [0-9.]+: the tiled one must need fewer'

scenario lab03_correct.cu 03_reduction 0 \
    '^PASS  03_reduction +block_sum ' '^PASS  03_reduction +block_sum_shuffle'
# (it fails with the threads run forward first: the hint must come then too)
scenario lab03_no_barrier.cu 03_reduction 1 \
    '^FAIL  03_reduction +block_sum +block_sum\(n=[0-9]+\).*out\[[0-9]+\] = .* but the block.s sum is .*a missing __syncthreads\(\)\?$'
scenario lab03_no_guard.cu 03_reduction 1 \
    '^FAIL  03_reduction +block_sum +block_sum\(n=1\) failed: cudaErrorIllegalAddress kernel block_sum \(labs/03_reduction/exercise.cu:[0-9]+\), blockIdx \(0,0,0\), threadIdx \(1,0,0\): out-of-bounds read of 4 bytes .*\(base 0x[0-9a-f]+, 4 bytes, device 0\)' \
    '^PASS  03_reduction +block_sum_shuffle'
# the binary's steps pass (1024 floats: no partial block), its checks do not
LAB_ARGS="--size 1024" lab_run lab03_no_guard.cu 03_reduction lab03 1 \
    '^  \(yours\)      FAIL  03_reduction +block_sum +block_sum\(n=1\) failed: cudaErrorIllegalAddress kernel block_sum \(labs/03_reduction/exercise.cu:[0-9]+\), blockIdx \(0,0,0\), threadIdx \(1,0,0\): out-of-bounds read' \
    '^  \(yours\)      PASS  03_reduction +block_sum_shuffle'
scenario lab03_half_mask.cu 03_reduction 1 \
    '^PASS  03_reduction +block_sum ' \
    '^FAIL  03_reduction +block_sum_shuffle +block_sum_shuffle\(n=1\) failed: cudaErrorLaunchFailure kernel block_sum_shuffle \(labs/03_reduction/exercise.cu:[0-9]+\), blockIdx \(0,0,0\), threadIdx \(16,0,0\): __shfl_down_sync at labs/03_reduction/exercise.cu:[0-9]+: the mask 0x0000ffff does not include the calling lane 16'
# the student's own tree is the one drawn (the picture of the recorded
# kernel): interleaved addressing, right sums, divergent warps
scenario lab03_interleaved.cu 03_reduction 0 \
    '^PASS  03_reduction +block_sum ' '^PASS  03_reduction +block_sum_shuffle'
LAB_ARGS="--kernel 2 --size 4096" lab_run lab03_interleaved.cu 03_reduction lab03 0 \
    'sequential addressing \(block_sum, yours\)' 'L0     [●+][◀<][●+][◀<][●+][◀<]' \
    's\[t\] \+= s\[t\+1\]: 128 threads' 'warps 0-7 diverge: 16 of 32 active'

scenario lab04_correct.cu 04_gemm 0 \
    '^PASS  04_gemm +matmul_tiled'
# (each shape in buffers of its own size: the load past the edge is named)
scenario lab04_no_edges.cu 04_gemm 1 \
    '^FAIL  04_gemm +matmul_tiled +matmul_tiled\(M=1, N=1, K=1\) failed: cudaErrorIllegalAddress kernel matmul_tiled \(labs/04_gemm/exercise.cu:[0-9]+\), blockIdx \(0,0,0\), threadIdx \([0-9]+,[0-9]+,0\): out-of-bounds read of 4 bytes at address 0x[0-9a-f]+: offset 4 of the nearest allocation \(base 0x[0-9a-f]+, 4 bytes, device 0\)'
LAB_ARGS="--size 100" lab_run lab04_no_edges.cu 04_gemm lab04 1 \
    '^lab04: rank 0: .*cudaErrorIllegalAddress$' \
    '^  kernel matmul_tiled \(labs/04_gemm/exercise.cu:[0-9]+\), blockIdx \([0-9]+,[0-9]+,0\), threadIdx \([0-9]+,[0-9]+,0\): out-of-bounds read of 4 bytes .*\(base 0x[0-9a-f]+, 40000 bytes, device 0\)'
scenario lab04_barrier_in_if.cu 04_gemm 1 \
    '^FAIL  04_gemm +matmul_tiled +matmul_tiled\(M=1, N=1, K=1\) failed: cudaErrorLaunchFailure kernel matmul_tiled \(labs/04_gemm/exercise.cu:[0-9]+\), blockIdx \(0,0,0\), threadIdx \([0-9]+,0,0\): divergent __syncthreads\(\): this thread exited without reaching the __syncthreads\(\) at labs/04_gemm/exercise.cu:[0-9]+ where thread \(0,0,0\) waits'
# in the steps (100 is no multiple of the tile), and in the binary's own
# checks after steps that pass (512 is one)
LAB_ARGS="--size 100" lab_run lab04_barrier_in_if.cu 04_gemm lab04 1 \
    '^lab04: rank 0: .*cudaErrorLaunchFailure$' \
    '^  kernel matmul_tiled \(labs/04_gemm/exercise.cu:[0-9]+\), blockIdx \([0-9]+,[0-9]+,0\), threadIdx \([0-9]+,[0-9]+,0\): divergent __syncthreads\(\)'
lab_run lab04_barrier_in_if.cu 04_gemm lab04 1 \
    '^  \(yours\)      FAIL  04_gemm +matmul_tiled +matmul_tiled\(M=1, N=1, K=1\) failed: cudaErrorLaunchFailure kernel matmul_tiled \(labs/04_gemm/exercise.cu:[0-9]+\), blockIdx \(0,0,0\), threadIdx \([0-9]+,0,0\): divergent __syncthreads\(\)'

scenario lab05_correct.c 05_streams 0 \
    '^PASS  05_streams +chunked'
scenario lab05_one_stream.c 05_streams 1 \
    '^FAIL  05_streams +chunked +8 chunks over 4 streams took [0-9.]+ us \(modeled\), one stream [0-9.]+ us: the chunks. copies should overlap'
scenario lab05_no_kernel.c 05_streams 1 \
    '^FAIL  05_streams +chunked +chunked\(n=1, chunks=1, streams=1\): h_out\[0\] = 3.39615136e\+38, the value the check put in d_out before the run, but expected 0: it was copied back, but no kernel wrote it: call lab05_process\(d_out \+ off, d_in \+ off, len, s\) between the two copies'

# --short: the 10-step runs on N = 2, 4, 8 against one device and the
# overlap on the modeled clock; the 20-epoch runs are the reference's code
# (this file is solution.c renamed), run once in make test by labcheck
# --solution, which also asserts their progress lines (every 5 epochs, up to
# "N=8, epoch 20/20"): the same computation twice cost 80 s of CPU
LABCHECK_ARGS="--timeout 60 --short" scenario lab07_correct.c 07_data_parallel 0 \
    '^PASS  07_data_parallel +shard_batch' '^PASS  07_data_parallel +sync_gradients' \
    '^  \.\.\. 07_data_parallel sync_gradients: short run \(--short\): the 20-epoch runs are left to the plain build$'
scenario lab07_sum_only.c 07_data_parallel 1 \
    '^PASS  07_data_parallel +shard_batch' \
    '^FAIL  07_data_parallel +sync_gradients +N=2, 1 float: rank 0.s grad\[0\] = 7, but the average over the ranks is 3.5 \(the sum: divide by the rank count, pl_k_scale\(grad, \(long\)count, 1.0f / n, stream\)\)'
scenario lab07_whole_batch.c 07_data_parallel 1 \
    '^FAIL  07_data_parallel +shard_batch +shard_batch\(B=2, n=2, rank=0\) gave rows \[0, 2\), but rank 0 takes the 1 row \[0, 1\)$'
build_fails lab07_swapped_scale.c 07_data_parallel \
    'labs/07_data_parallel/exercise.c:[0-9]+:[0-9]+: note: in expansion of macro .pl_k_scale' \
    'static assertion failed: "pl_k_scale\(x, n, a, stream\): n, the element count, is a floating-point value: are the count and the factor swapped\?"'
lab_run lab07_sum_only.c 07_data_parallel lab07 1 \
    '^\[8\] Epoch 1/20: loss' '^  \(yours\)      FAIL  07_data_parallel +sync_gradients'

# Lab 08 (in one tree: each scenario compiles only its exercise file).
# --short: the 10-step training checks against one device run; the 20-epoch
# runs (minutes of CPU) run with the reference in labcheck --solution. A
# failing exercise stops at its first wrong value; the other exercise, the
# reference's, must still pass.
l08() { TREE=lab08 LABCHECK_ARGS="--timeout 60 --short 08" scenario "$@"; }
l08 lab08_correct.c 08_tensor_parallel 0 \
    '^PASS  08_tensor_parallel +column_parallel +\([0-9]+ values checked\)$' \
    '^  \.\.\. 08_tensor_parallel row_parallel: short run \(--short\): 10 steps on t = 2 and t = 4 with SP only; the 20-epoch runs are left to the plain build$' \
    '^PASS  08_tensor_parallel +row_parallel +\([0-9]+ values checked\)$' \
    '^labcheck \(your exercises\): 2 passed, 0 failed, 0 todo$'
l08 lab08_b2_every_rank.c 08_tensor_parallel 1 \
    '^PASS  08_tensor_parallel +column_parallel ' \
    '^FAIL  08_tensor_parallel +row_parallel +t=2: the block.s output\[0\] on rank 0 is -0\.203429, the unsharded block.s -0\.22648: 1 b2 too many\. b2 was added on every rank before g summed the partials; add it once, after g$' \
    '^labcheck \(your exercises\): 1 passed, 1 failed, 0 todo$'
l08 lab08_no_backward_all_reduce.c 08_tensor_parallel 1 \
    '^FAIL  08_tensor_parallel +column_parallel +t=2: the forward is right, but the gradient of the block.s input dx\[0\] on rank 0 is 0\.0157375, the unsharded block.s 0\.0677779\. dz W\^T is only this rank.s part of dx: f backward \(pl_tp_f_backward\) sums the parts over the ranks$' \
    '^PASS  08_tensor_parallel +row_parallel '
l08 lab08_g_in_column_forward.c 08_tensor_parallel 1 \
    '^FAIL  08_tensor_parallel +column_parallel +t=2: the block.s output\[0\] on rank 0 is -0\.345815, the unsharded block.s -0\.22648\. f enters the parallel region \(identity forward\), then z = xfull W \+ b on this rank.s columns$' \
    '^PASS  08_tensor_parallel +row_parallel '
l08 lab08_f_backward_in_row_backward.c 08_tensor_parallel 1 \
    '^PASS  08_tensor_parallel +column_parallel ' \
    '^FAIL  08_tensor_parallel +row_parallel +t=2: the forward is right, but the gradient of the block.s input dx\[0\] on rank 0 is 0\.161297, the unsharded block.s 0\.0677779\. da = g.\(dy\) W\^T, with g. the identity \(pl_tp_g_backward\)$'

# Lab 09 (in one tree). --short: the lists on the executor for (p, m) =
# (4, 2) and (4, 8) and 10 training steps at (4, 8). A wrong list is named
# by the validator, by stage and position, and never runs: a deadlocking
# order is a cycle of waits found before any message, not a hang; the lab
# binary refuses it the same way (exit 2, nothing ran).
l09() { TREE=lab09 LABCHECK_ARGS="--timeout 60 --short 09" scenario "$@"; }
l09 lab09_correct.c 09_pipeline_parallel 0 \
    '^PASS  09_pipeline_parallel gpipe +\([0-9]+ values checked\)$' \
    '^PASS  09_pipeline_parallel warmup_1f1b +\([0-9]+ values checked\)$' \
    '^PASS  09_pipeline_parallel one_f_one_b +\([0-9]+ values checked\)$' \
    '^labcheck \(your exercises\): 3 passed, 0 failed, 0 todo$'
l09 lab09_backward_first.c 09_pipeline_parallel 1 \
    '^PASS  09_pipeline_parallel gpipe ' '^PASS  09_pipeline_parallel warmup_1f1b ' \
    '^FAIL  09_pipeline_parallel one_f_one_b +p=4, m=8: your 1F1B lists cannot run: stage 3, op 0 \(BW0\): the backward of micro-batch 0 comes before its forward \(F0 is op 1\)$'
TREE=lab09 lab_run lab09_backward_first.c 09_pipeline_parallel lab09 2 \
    '^lab09: your 1F1B lists and warm-up count \(exercise.c\) cannot run \(4 stages, 8 micro-batches\), so nothing ran: the validator says: stage 3, op 0 \(BW0\): the backward of micro-batch 0 comes before its forward \(F0 is op 1\)$'
l09 lab09_warmup_reversed.c 09_pipeline_parallel 1 \
    '^FAIL  09_pipeline_parallel warmup_1f1b +warmup_1f1b\(p=4, m=8, stage=0\) = 0, but 1F1B.s warm-up is min\(p - r - 1, m\) = 3; with it the 1F1B lists cannot run: deadlock: stage 0 waits at op 1 \(BW0\) to receive from stage 1, which waits at op 1 \(F1\) to receive from stage 0: a cycle, no stage in it can go on$' \
    '^PASS  09_pipeline_parallel one_f_one_b '
TREE=lab09 lab_run lab09_warmup_reversed.c 09_pipeline_parallel lab09 2 \
    '^lab09: your 1F1B lists and warm-up count \(exercise.c\) cannot run \(4 stages, 8 micro-batches\), so nothing ran: the validator says: deadlock: stage 0 waits at op 1 \(BW0\) to receive from stage 1, which waits at op 1 \(F1\) to receive from stage 0'
l09 lab09_warmup_plus_one.c 09_pipeline_parallel 1 \
    '^FAIL  09_pipeline_parallel warmup_1f1b +warmup_1f1b\(p=4, m=8, stage=0\) = 4, but 1F1B.s warm-up is min\(p - r - 1, m\) = 3; with it the 1F1B lists run, but stage 0 holds 5 micro-batches. activations at once \(1F1B: 4\) for nothing: a step takes 1F1B.s 33 slots$' \
    '^PASS  09_pipeline_parallel one_f_one_b '
l09 lab09_warmup_negative.c 09_pipeline_parallel 1 \
    '^FAIL  09_pipeline_parallel warmup_1f1b +warmup_1f1b\(p=4, m=8, stage=0\) = -1, but 1F1B.s warm-up is min\(p - r - 1, m\) = 3; a count of forwards is 0..8$'
TREE=lab09 lab_run lab09_warmup_negative.c 09_pipeline_parallel lab09 2 \
    '^lab09: your warmup_1f1b \(exercise.c\) returned -1 for p=4, m=8, stage=0: a count of forwards is 0..8$'
l09 lab09_gpipe_missing.c 09_pipeline_parallel 1 \
    '^FAIL  09_pipeline_parallel gpipe +p=4, m=8: your GPipe lists cannot run: stage 0: the backward of micro-batch 7 is missing' \
    '^PASS  09_pipeline_parallel one_f_one_b '
# An endless loop in the student's warm-up count: labcheck names that
# exercise (not gpipe, whose check never calls it) and stops it after its
# CPU-time limit; the lab binary, which asks every exercise before its run,
# is stopped the same way, not hung.
TREE=lab09 LABCHECK_ARGS="--timeout 3 --short 09" scenario lab09_endless.c 09_pipeline_parallel 1 \
    '^PASS  09_pipeline_parallel gpipe ' \
    '^FAIL  09_pipeline_parallel warmup_1f1b +no progress for 3 s of CPU time: no kernel is running \(the host code\): an endless loop\?'
TREE=lab09 LAB_ARGS="--stall-timeout 2" lab_run lab09_endless.c 09_pipeline_parallel lab09 1 \
    '^lab09: stopped before the run: no progress for 2 s of CPU time: no kernel is running \(the host code\), in warmup_1f1b \(labs/09_pipeline_parallel/exercise.c\): an endless loop\? \(--stall-timeout S allows longer\)$'

# Lab 10 (in one tree). --short: training on 2 x 2 x 2 and 1 x 2 x 2. A
# wrong coordinate or group is named with the rank and what the mesh has;
# the lab binary refuses it before anything runs (exit 2). A stage that
# never reduces is run: its DP replicas differ after the first step, which
# the lab reports (exit 1).
l10() { TREE=lab10 LABCHECK_ARGS="--timeout 60 --short 10" scenario "$@"; }
l10 lab10_correct.c 10_hybrid 0 \
    '^PASS  10_hybrid +coords +\([0-9]+ values checked\)$' \
    '^PASS  10_hybrid +make_groups +\([0-9]+ values checked\)$' \
    '^PASS  10_hybrid +dp_after +\([0-9]+ values checked\)$' \
    '^labcheck \(your exercises\): 3 passed, 0 failed, 0 todo$'
l10 lab10_orders_swapped.c 10_hybrid 1 \
    '^FAIL  10_hybrid +coords +megatron mesh dp 2 x tp 2 x pp 2: coords puts rank 2 at \(dp 0, pp 1, tp 0\); it is at \(dp 1, pp 0, tp 0\) \(the guide.s table of the 2 x 2 x 2 groups\): rank = tp \+ t \(dp \+ N pp\)$' \
    '^PASS  10_hybrid +dp_after '
TREE=lab10 lab_run lab10_orders_swapped.c 10_hybrid lab10 2 \
    '^lab10: your coords \(labs/10_hybrid/exercise.c\) is wrong, so nothing ran: coords puts rank 2 at \(dp 0, pp 1, tp 0\); the megatron mesh \(dp 2, tp 2, pp 2\) has it at \(dp 1, pp 0, tp 0\): rank = tp \+ t \(dp \+ N pp\)$'
l10 lab10_dp_pp_color.c 10_hybrid 1 \
    '^PASS  10_hybrid +coords ' \
    '^FAIL  10_hybrid +make_groups +megatron mesh dp 2 x tp 2 x pp 2: rank 0.s DP group is \{0, 4\}; it should be \{0, 2\} \(the guide.s table of the 2 x 2 x 2 groups\)$' \
    '^PASS  10_hybrid +dp_after '
TREE=lab10 lab_run lab10_dp_pp_color.c 10_hybrid lab10 2 \
    '^lab10: your make_groups \(labs/10_hybrid/exercise.c\) built groups the mesh does not have, so nothing ran: rank 0.s DP group is \{0, 4\}; the megatron mesh \(dp 2, tp 2, pp 2\) puts rank 0 in the DP group \{0, 2\}$'
l10 lab10_last_stage_never.c 10_hybrid 1 \
    '^PASS  10_hybrid +make_groups ' \
    '^FAIL  10_hybrid +dp_after +1f1b, p=2, m=4: dp_after\(stage 1\) = -1: stage 1 would never reduce, and its DP replicas drift apart; the reduction fires after op 7 of 8 \(BW3\), the stage.s last op that writes weight gradients$'
TREE=lab10 LAB_ARGS="--epochs 1" lab_run lab10_last_stage_never.c 10_hybrid lab10 1 \
    '^\[4\] The DP reduction \(from your dp_after \(exercise.c\)\): .*: stage 0 after op 7 of 8 \(BW3\), [0-9.]+-[0-9.]+ us, 1 bucket; stage 1 NEVER \(dp_after = -1\)\. A stage that never reduces' \
    '^\[5\] The step: .*\(pp 1, tp 0\): [0-9a-f]{8} [0-9a-f]{8}; .*: the DP replicas of \(pp 1, tp 0\) differ: rank 6 \(dp 1\) holds ' \
    '^  ! after step 1 the DP replicas of \(pp 1, tp 0\) differ: ' \
    '^  \(yours\)      FAIL  10_hybrid +dp_after +1f1b, p=2, m=4: dp_after\(stage 1\) = -1'
l10 lab10_groups_42.c 10_hybrid 1 \
    '^PASS  10_hybrid +coords ' \
    '^FAIL  10_hybrid +make_groups +megatron mesh dp 2 x tp 2 x pp 2: make_groups returned 42 on rank 0; it returns 0, or the non-zero result of a pl_comm_split that failed$'
TREE=lab10 lab_run lab10_groups_42.c 10_hybrid lab10 2 \
    '^lab10: your make_groups \(labs/10_hybrid/exercise.c\) failed, so nothing ran: rank [0-7]: make_groups returned 42 on rank [0-7] \(it returns 0, or the non-zero result of a pl_comm_split that failed\)$'
l10 lab10_dp_after_1000.c 10_hybrid 1 \
    '^FAIL  10_hybrid +dp_after +.*: dp_after\(stage 0\) = 1000: out of range 0\.\.[0-9]+ \(an op of stage 0.s list; -1 means never\); the reduction fires after op '
TREE=lab10 LAB_ARGS="--epochs 1" lab_run lab10_dp_after_1000.c 10_hybrid lab10 1 \
    '^\[4\] The DP reduction \(from your dp_after \(exercise.c\)\): .*: stage 0 NEVER \(dp_after = 1000: out of range 0\.\.7; -1 means never\); stage 1 after op 7 of 8 \(BW3\), '
# make_groups begun first, calling the exercise's own coords (still TODO):
# it builds (gcc's "may be used uninitialized" is no error in an exercise
# file), and the checks call both TODO: make_groups because it calls coords.
l10 lab10_groups_first.c 10_hybrid 0 \
    '^TODO  10_hybrid +coords +not attempted yet' \
    '^TODO  10_hybrid +make_groups +not attempted yet: it calls coords, still TODO \(PL_TODO\(\) at labs/10_hybrid/exercise.c:[0-9]+\)$' \
    '^TODO  10_hybrid +dp_after +not attempted yet'
# make_groups where only the ranks at pp 0 call the PP split: the lab and
# the check say what the comm layer found, at once; where the ranks at tp 0
# wait in a barrier of their TP group while the others make their DP group
# (a deadlock): the lab waits --comm-timeout (the common option), no more
l10 lab10_pp_split_some.c 10_hybrid 1 \
    '^PASS  10_hybrid +coords ' \
    '^FAIL  10_hybrid +make_groups +megatron mesh dp 2 x tp 2 x pp 2, your make_groups: rank [0-7]: .*the ranks disagree about call #3: ranks 0,1,2,3 comm_split; ranks 4,5,6,7 barrier'
TREE=lab10 lab_run lab10_pp_split_some.c 10_hybrid lab10 2 \
    '^lab10: your make_groups \(labs/10_hybrid/exercise.c\) failed, so nothing ran: rank [0-7]: .*the ranks disagree about call #3: ranks 0,1,2,3 comm_split; ranks 4,5,6,7 barrier'
TREE=lab10 LABCHECK_ARGS="--timeout 60 --short 10" scenario lab10_barrier_some.c 10_hybrid 1 \
    '^PASS  10_hybrid +coords ' \
    '^FAIL  10_hybrid +make_groups +megatron mesh dp 2 x tp 2 x pp 2, your make_groups: rank [0-7]: .*deadlock: no progress for [0-9]+ s: rank 0 waits in barrier \(call #1\) for the other ranks; rank 1 waits in comm_split \(call #2\) for the other ranks; '
TREE=lab10 LAB_ARGS="--comm-timeout 2" lab_run lab10_barrier_some.c 10_hybrid lab10 2 \
    '^lab10: your make_groups \(labs/10_hybrid/exercise.c\) failed, so nothing ran: rank [0-7]: make_groups returned [0-9]+ on rank [0-7] \(rank [0-7]: deadlock: no progress for 2 s: rank 0 waits in barrier \(call #1\) for the other ranks; rank 1 waits in comm_split \(call #2\) for the other ranks; '
# an endless loop in coords, which the lab's probe asks first: named
TREE=lab10 LABCHECK_ARGS="--timeout 3 --short 10" scenario lab10_endless_coords.c 10_hybrid 1 \
    '^FAIL  10_hybrid +coords +no progress for 3 s of CPU time: no kernel is running \(the host code\): an endless loop\?'
TREE=lab10 LAB_ARGS="--stall-timeout 2" lab_run lab10_endless_coords.c 10_hybrid lab10 1 \
    '^lab10: stopped before the run: no progress for 2 s of CPU time: no kernel is running \(the host code\), in coords \(labs/10_hybrid/exercise.c\): an endless loop\? \(--stall-timeout S allows longer\)$'

# Lab 11: ZeRO-1's update (labcheck --short: 10 steps at N = 2, 4, 8, 1, then
# 2 epochs)
l11() { TREE=lab11 LABCHECK_ARGS="--timeout 60 --short 11" scenario "$@"; }
l11 lab11_correct.c 11_zero 0 \
    '^PASS  11_zero +zero1_update +\([0-9]+ values checked\)$' \
    '^labcheck \(your exercises\): 1 passed, 0 failed, 0 todo$'
l11 lab11_mine.c 11_zero 0 \
    '^PASS  11_zero +zero1_update +\([0-9]+ values checked\)$'
TREE=lab11 LAB_ARGS="--epochs 1 --stage 1" lab_run lab11_mine.c 11_zero lab11 0 \
    '^\[4\] The update \(your lab11_zero1_update \(exercise.c\)\): ' \
    '^\[6\] The weights against plain data parallelism: .* rank 0.s replica, 71370 are the same bits: all of them' \
    '^  \(yours\)      PASS  11_zero +zero1_update'
l11 lab11_all_reduce.c 11_zero 1 \
    '^FAIL  11_zero +zero1_update +N=2, step 1, rank 0: its ledger \(pl_comm_ledger\) says it sent [0-9]+ floats in 8 collectives \(0 reduce-scatter, 4 all-gather, 4 all-reduce\); pl_zero_traffic_of says [0-9]+ floats .*: 4 all-reduces \(pl_all_reduce\) where stage 1 reduce-scatters: an all-reduce sends 2 \(N - 1\)/N floats per float'
TREE=lab11 LAB_ARGS="--epochs 1 --stage 1" lab_run lab11_all_reduce.c 11_zero lab11 1 \
    '^\[5\] The communication of the step, from rank 0.s ledger \(pl_comm_ledger\): [0-9]+ floats sent in 0 reduce-scatters, 4 all-gathers and 4 all-reduces\. .*: step 1, rank 0: ' \
    '^  ! step 1, rank 0: its ledger \(pl_comm_ledger\) says' \
    '^  \(yours\)      FAIL  11_zero +zero1_update +N=2, step 1, rank 0: its ledger'
l11 lab11_whole_buffer.c 11_zero 1 \
    '^FAIL  11_zero +zero1_update +N=2, stage 1, rank [01]: your lab11_zero1_update \(exercise.c\) returned -1: the SGD momentum state is 35685 floats on each rank \(its shard\); floats \[0, 71370\) are outside it: a rank updates only its own slices'
TREE=lab11 LAB_ARGS="--epochs 1 --stage 1" lab_run lab11_whole_buffer.c 11_zero lab11 1 \
    'your lab11_zero1_update \(exercise.c\) returned -1: the AdamW state is 8922 floats on each rank \(its shard\); floats \[0, 71376\) are outside it: a rank updates only its own slices'
l11 lab11_no_all_gather.c 11_zero 1 \
    '^FAIL  11_zero +zero1_update +N=2, after step 1: rank 0.s replica of the weights holds [-0-9.e]+ at weight [0-9]+ \(unit in, in the slice rank 1 owns\); plain data parallelism \(stage 0\) has [-0-9.e]+: unchanged by the step, the update of its owner never reached this replica \(after the update every rank must hold the whole model: the all-gather\)$'
TREE=lab11 LAB_ARGS="--epochs 1 --stage 1 --devices 2" lab_run lab11_no_all_gather.c 11_zero lab11 1 \
    '^\[6\] The weights against plain data parallelism: .* Of the 71370 weights of rank 0.s replica, [0-9]+ are the same bits \(hashes [0-9a-f]+ and [0-9a-f]+\); the largest relative difference [0-9.e+-]+ \(the largest at weight [0-9]+: ' \
    '^  ! step 1, rank 0: its ledger \(pl_comm_ledger\) says it sent [0-9]+ floats in 4 collectives \(4 reduce-scatter, 0 all-gather, 0 all-reduce\); .*: no all-gather: the replicas keep stale weights$' \
    '^  \(yours\)      FAIL  11_zero +zero1_update +N=2, after step 1: rank 0.s replica of the weights'
l11 lab11_count_per_bucket.c 11_zero 1 \
    '^FAIL  11_zero +zero1_update +N=2, stage 1, rank [01]: after your lab11_zero1_update \(exercise.c\): z->step is 4 after 1 step: call pl_zero_count_step once per step \(before the loop over the buckets\), not once per bucket: AdamW.s bias correction \(1 - beta\^t\) uses the step count t$'
l11 lab11_empty.c 11_zero 1 \
    '^FAIL  11_zero +zero1_update +N=2, stage 1, rank [01]: after your lab11_zero1_update \(exercise.c\): z->step is 0 after 1 step: call pl_zero_count_step once per step \(before the loop over the buckets\): AdamW.s bias correction \(1 - beta\^t\) uses the step count t$'
l11 lab11_next_slice.c 11_zero 1 \
    '^FAIL  11_zero +zero1_update +N=2, after step 1: rank 0.s replica of the weights holds [-0-9.e]+ at weight [0-9]+ \(unit in, in the slice rank 0 owns\); plain data parallelism \(stage 0\) has [-0-9.e]+: unchanged by the step: your update did not reach this rank.s own slice: check the slice offset \(full_at \+ rank \* shard\)$'
l11 lab11_off_by_one.c 11_zero 1 \
    '^FAIL  11_zero +zero1_update +N=2, stage 1, rank 1: your lab11_zero1_update \(exercise.c\) returned -1: .*cudaErrorIllegalAddress.*: kernel sgd_step \(core/kernels/nn.cu:[0-9]+\), blockIdx \([0-9,]+\), threadIdx \([0-9,]+\): out-of-bounds read of 4 bytes at address 0x[0-9a-f]+: offset [0-9]+ of the nearest allocation \(base 0x[0-9a-f]+, [0-9]+ bytes, device 1\): the first byte past its end$'
TREE=lab11 LAB_ARGS="--epochs 1 --stage 1" lab_run lab11_off_by_one.c 11_zero lab11 1 \
    '^lab11: your zero1_update \(labs/11_zero/exercise.c\), tried on a tiny model on one rank before the run, made the device fail: cudaErrorIllegalAddress \(an illegal memory access was encountered\)$' \
    '^  kernel sgd_step \(core/kernels/nn.cu:[0-9]+\), .*: out-of-bounds read of 4 bytes at address '


scenario lab06_correct.c 06_collectives 0 \
    '^PASS  06_collectives +ring_all_reduce' '^TODO  01_hello_threads'
scenario lab06_no_group.c 06_collectives 1 \
    '^FAIL  06_collectives +ring_all_reduce +N=2, count 0: rank [01]: ring_all_reduce returned PL_COMM_TIMEOUT: rank [01]: deadlock: no progress for 10 s: rank 0 waits in send to rank 1 \(0 floats\) .*rank 1 waits in send to rank 0 \(0 floats\) .*Ranks 0 and 1 both send before they receive: put each exchange in pl_group_start\(\)/pl_group_end\(\)'
scenario lab06_library_all_reduce.c 06_collectives 1 \
    '^FAIL  06_collectives +ring_all_reduce +N=2, count 0: rank 0 called pl_all_reduce \(1 time\): the result is right, but this exercise builds the ring itself, from pl_send and pl_recv'
scenario lab06_wrong_segment.c 06_collectives 1 \
    '^FAIL  06_collectives +ring_all_reduce +N=2, count 1: rank [01]: buf\[0\] = [0-9]+ but expected [0-9]+ \(N=2, count 1\)'

# make check as a student runs it after an edit (a copy of the tree and of
# build/sim, both with their times kept: only what the edited exercise
# file makes is built again, as in the student's tree, not the whole of
# build/sim; Lab 01's grid_size rounds down): quiet, one line per file
# built and no compiler command; the FAIL lines; exit status 2, make's for a
# failed command (labcheck's own is 1). V=1 shows the commands. A compile
# error in the exercise is shown in full.
make_check_output() {
    local mc="$work/make_check" out rc ok=1 ex="labs/01_hello_threads/exercise.cu"
    mkdir -p "$mc/build"
    (cd "$root" && cp -a Makefile core viz tools labs tests bench mk scripts "$mc"/)
    if [ -d "$root/build/sim" ]; then cp -a "$root/build/sim" "$mc/build/"; fi
    cp "$root/tests/student/lab01_floor_division.cu" "$mc/$ex"
    mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$mc" check ARGS=01 "$@" 2>&1; }
    rc=0; out=$(mk) || rc=$?
    [ "$rc" = 2 ] || { ok=0; echo "  make check: exit status $rc, expected 2"; }
    for p in "^  CC   $ex\$" '^  LD   build/sim/bin/labcheck$' '^FAIL  01_hello_threads +grid_size' \
             '^labcheck \(your exercises\): 0 passed, 2 failed, 0 todo$'; do
        grep -qE -- "$p" <<<"$out" || { ok=0; echo "  make check: missing $p"; }
    done
    if grep -qE -- '(^| )(cc|gcc) |-o build/sim/' <<<"$out"; then ok=0; echo "  make check: compiler command lines in its output"; fi
    [ $ok = 1 ] && echo "PASS  make check is quiet: one line per file, the verdict, exit 2" || { echo "FAIL  make check (quiet)"; echo "$out" | head -40 | sed 's/^/  | /'; fails=$((fails + 1)); }
    ok=1
    touch "$mc/$ex"
    rc=0; out=$(mk V=1) || rc=$?
    [ "$rc" = 2 ] || { ok=0; echo "  make check V=1: exit status $rc, expected 2"; }
    for p in "^cc .* -c build/sim/obj/$ex.c -o build/sim/obj/$ex.o\$" '^cc .* -o build/sim/bin/labcheck$' '^FAIL  01_hello_threads +grid_size'; do
        grep -qE -- "$p" <<<"$out" || { ok=0; echo "  make check V=1: missing $p"; }
    done
    [ $ok = 1 ] && echo "PASS  make check V=1 shows the commands" || { echo "FAIL  make check V=1"; echo "$out" | cut -c1-200 | head -40 | sed 's/^/  | /'; fails=$((fails + 1)); }
    ok=1
    echo 'int broken = ;' >>"$mc/$ex"
    rc=0; out=$(mk) || rc=$?
    [ "$rc" = 2 ] || { ok=0; echo "  make check, a compile error: exit status $rc, expected 2"; }
    for p in "^$ex:[0-9]+:[0-9]+: error: expected expression" '^ +[0-9]+ \| int broken = ;$'; do
        grep -qE -- "$p" <<<"$out" || { ok=0; echo "  make check, a compile error: missing $p"; }
    done
    if grep -qE -- '(^| )(cc|gcc) |^(PASS|FAIL|TODO)  ' <<<"$out"; then ok=0; echo "  make check, a compile error: a command line or a verdict"; fi
    [ $ok = 1 ] && echo "PASS  make check shows a compile error in full, and no verdict" || { echo "FAIL  make check, a compile error"; echo "$out" | head -40 | sed 's/^/  | /'; fails=$((fails + 1)); }
}
make_check_output

echo "student scenarios: $fails failed"
[ $fails = 0 ]
