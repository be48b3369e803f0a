#!/usr/bin/env bash
# tests/handout.sh — `make handout` end to end: the student copy holds no
# solution source; unpacked from its tarball into a scratch folder, it builds
# (the references compiled in, from labs/reference/), a lab runs on the
# reference and says so, `make check` shows every exercise TODO (exit 0),
# `make test` is not there, and Lab 01 solved as a student would (our own
# code, not a copy of solution.cu) checks PASS.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
fails=0
fail() { echo "FAIL  $*"; fails=$((fails + 1)); }
pass() { echo "PASS  $*"; }

# ---- make it (into the scratch folder; the CUDA archive too where nvcc is) ----------------
HAVE_NVCC=0
[ -x "${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}" ] && HAVE_NVCC=1
if ! HANDOUT_OUT="$work/out" make -s handout HANDOUT_CUDA=$HAVE_NVCC >"$work/handout.log" 2>&1; then
    echo "FAIL  make handout"; sed 's/^/  | /' "$work/handout.log" | tail -30; exit 1
fi
tarball="$work/out/paralab-handout.tar.gz"
[ -s "$tarball" ] || { echo "FAIL  make handout wrote no $tarball"; exit 1; }
H="$work/out/paralab-handout"
pass "make handout: $(tail -2 "$work/handout.log" | head -1 | sed 's/^✓ handout: //; s|'"$work"'/out/||g')"

# ---- no solution source in it ----------------------------------------------------------
found=$(cd "$H" && find . \( -name 'solution.c' -o -name 'solution.cu' -o -name .git -o -name '*.orig' \) -print)
[ -z "$found" ] && pass "no solution.c|.cu, no .git in the handout" || fail "in the handout: $found"
extra=$(cd "$H" && find tests bench .ci -type f 2>/dev/null | grep -v '^tests/labcheck' || true)
[ -z "$extra" ] && pass "tests/ holds only labcheck's source; no bench/, no .ci/" || fail "in the handout: $extra"
mapfile -t hidden <"$H/labs/reference/hidden.list"
nsol=$(ls labs/[0-9][0-9]_*/solution.c* | wc -l)
[ "${#hidden[@]}" -gt "$nsol" ] || fail "hidden.list names ${#hidden[@]} files, fewer than the $nsol solutions and the core files"
for f in "${hidden[@]}"; do [ ! -e "$H/$f" ] || fail "$f is in the handout (hidden.list names it)"; done
for s in labs/[0-9][0-9]_*/solution.c*; do
    grep -qxF "$s" "$H/labs/reference/hidden.list" || fail "hidden.list does not name $s"
done

# Every line of a solution's code (32 characters or more, spaces squeezed, no
# comment) that its exercise file does not also hold must be nowhere in the
# handout's text, nor readable in its archives. Four lines are common to any
# such code (the global index, loop headers) and may appear elsewhere.
norm() { sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e 's/[[:space:]]\+/ /g' "$@"; }
generic=$'int i = blockIdx.x * blockDim.x + threadIdx.x;\nfor (int s = 0; s < n - 1; s++) {\nfor (int b = 0; b < z->units; b++) {\nconst pl_zero_bucket *k = &z->bucket[b];'
(cd "$H" && find . -type f ! -name '*.a' -print0 | xargs -0 cat) | norm | sort -u >"$work/text"
for a in "$H"/labs/reference/*/libparalab-reference.a; do strings -n 8 "$a"; done | norm | sort -u >"$work/strings"
nlines=0
for s in labs/[0-9][0-9]_*/solution.c*; do
    norm "$s" | grep -vE '^(/\*|\*|//|#)' | awk 'length($0) >= 32' | sort -u >"$work/lines"
    norm "$(dirname "$s")"/exercise.* | sort -u | comm -23 "$work/lines" - |
        grep -vxF "$generic" >"$work/distinct" || true
    nlines=$((nlines + $(wc -l <"$work/distinct")))
    [ -s "$work/distinct" ] || { fail "$s: no distinctive line to look for"; continue; }
    leak=$(grep -xFf "$work/distinct" "$work/text" || true)
    [ -z "$leak" ] || fail "$s: its code is in the handout's text: $(head -3 <<<"$leak")"
    leak=$(grep -xFf "$work/distinct" "$work/strings" || true)
    [ -z "$leak" ] || fail "$s: its code is readable in the archive: $(head -3 <<<"$leak")"
done
# the core and lab files with the same code as a reference: a line of each body
bodies=(
    "labs/02_memory/lab02_kernels.cu|__shared__ float tile[LAB02_TILE][LAB02_TILE + 1];"
    "labs/03_reduction/lab03_kernels.cu|if (tid == 0) atomicAdd(out, s[0]);"
    "core/parallel/tp.c|pl_tp_g_forward(tp, partial, y, n)"
    "core/parallel/pipeline.c|pl_pp_push(s, r, pl_pp_backward(i, 0));"
    "core/parallel/mesh.c|c->pp = rank / m->tp % m->pp;"
    "core/parallel/hybrid.c|s->ops[stage][i].kind == PL_PP_W) return i;"
    "core/parallel/zero.c|full + (long)z->rank * b->shard"
)
for b in "${bodies[@]}"; do
    f=${b%%|*} line=${b#*|}
    grep -qF -- "$line" "$f" || { fail "$f no longer holds '$line': update tests/handout.sh"; continue; }
    ! grep -qF -- "$line" "$work/text" || fail "$f: '$line' is in the handout's text"
done
[ $fails = 0 ] && pass "none of $nlines distinctive solution lines, nor the bodies of ${#bodies[@]} engine files, in the handout's text or archives"

# the archives: every hidden file's object, the references' symbols
for v in sim $([ $HAVE_NVCC = 1 ] && echo cuda); do
    a="$H/labs/reference/$v/libparalab-reference.a"
    [ -f "$a" ] || { fail "no $v archive"; continue; }
    n=$(ar t "$a" | wc -l)
    [ "$n" = "${#hidden[@]}" ] || fail "$v archive: $n members for ${#hidden[@]} hidden files"
    syms=$(nm -g --defined-only "$a" 2>/dev/null)
    missing=""
    for sym in lab01_solution lab06_solution lab11_zero1_update_solution pl_tp_reference_ops pl_hybrid_dp_after; do
        grep -qw "$sym" <<<"$syms" || missing+=" $sym"
    done
    [ -z "$missing" ] && pass "$v archive: $n objects, the references' symbols defined" || fail "$v archive lacks:$missing"
    ! objdump -h "$a" 2>/dev/null | grep -q '\.debug_line' || fail "$v archive: debug information left in"
done
[ $HAVE_NVCC = 1 ] || grep -q "no CUDA build of the references" "$H/README.md" ||
    fail "no CUDA archive and README.md does not say so"

# ---- a student's machine: from the tarball -------------------------------------------
S="$work/student"
mkdir -p "$S" && tar -xzf "$tarball" -C "$S"
S="$S/paralab-handout"
# the digits (Lab 11's check trains on them): make data, or this tree's copy
if [ -f data/digits.csv ]; then mkdir -p "$S/data" && cp data/digits.csv "$S/data/"; fi
help=$(make -C "$S" help 2>&1)
grep -qE '^  check ' <<<"$help" && grep -qE '^  demo ' <<<"$help" && ! grep -qE '^  (test|racecheck|bench|gpu-check|handout) ' <<<"$help" &&
    pass "make help: check and demo, no test, racecheck, bench, gpu-check or handout" ||
    fail "make help in the handout: $help"
rc=0; out=$(make -C "$S" test 2>&1) || rc=$?
[ $rc = 2 ] && grep -q "No rule to make target 'test'" <<<"$out" && pass "make test: no such target (exit 2)" ||
    fail "make test in the handout: exit $rc: $out"
# a handout without the CUDA archive: `make cuda` stops and says why (nvcc
# stood in for by /bin/true: the build stops before compiling anything)
mv "$S/labs/reference/cuda" "$work/cuda.off" 2>/dev/null || true
rc=0; out=$(make -C "$S" cuda NVCC=/bin/true 2>&1) || rc=$?
[ $rc = 2 ] && grep -qF "has no cuda build of them: labs/reference/cuda/libparalab-reference.a is missing" <<<"$out" &&
    pass "make cuda without labs/reference/cuda/: exit 2, says the CUDA build of the references is missing" ||
    fail "make cuda without the CUDA archive: exit $rc: $out"
[ ! -d "$work/cuda.off" ] || mv "$work/cuda.off" "$S/labs/reference/cuda"
# the student's `make` (the simulated build: CUDA=0 even where a GPU is)
if ! make -C "$S" CUDA=0 JOBS=2 >"$work/build.log" 2>&1; then
    fail "the handout does not build"; sed 's/^/  | /' "$work/build.log" | tail -20
    echo "tests/handout.sh: $fails failed"; exit 1
fi
grep -q "REF  labs/01_hello_threads/solution.cu" "$work/build.log" && pass "built from the tarball, the references taken from labs/reference/sim/" ||
    fail "the build did not take the references from the archive"
! grep -q "CC   .*solution" "$work/build.log" || fail "a solution was compiled from source"
for p in unit paralab-bench; do [ ! -e "$S/build/sim/bin/$p" ] || fail "$p built in the handout"; done

rc=0; out=$(cd "$S" && timeout 120 build/sim/bin/lab06 --no-viz 2>&1) || rc=$?
want=("exercise not attempted yet — using the reference; open labs/06_collectives/exercise.c"
      "Your ring all-reduce (exercise.c): not attempted yet, so the reference runs."
      "(reference)  PASS  06_collectives       ring_all_reduce")
ok=1; for w in "${want[@]}"; do grep -qF -- "$w" <<<"$out" || { ok=0; echo "  missing: $w"; }; done
[ $rc = 0 ] && [ $ok = 1 ] && pass "lab06 --no-viz: exit 0, the reference runs in place of the TODO and says so" ||
    { fail "lab06 --no-viz: exit $rc"; tail -20 <<<"$out" | sed 's/^/  | /'; }

nex=$("$S/build/sim/bin/labcheck" --list | wc -l)
rc=0; out=$(make -C "$S" -s check 2>&1) || rc=$?
ntodo=$(grep -cE '^TODO  [0-9]{2}_[a-z_]+ +[a-z_0-9]+ +not attempted yet: PL_TODO\(\) at labs/' <<<"$out" || true)
[ $rc = 0 ] && [ "$ntodo" = "$nex" ] && ! grep -qE '^(PASS|FAIL) ' <<<"$out" &&
    pass "make check: exit 0, all $nex exercises TODO" ||
    { fail "make check: exit $rc, $ntodo TODO lines of $nex"; sed 's/^/  | /' <<<"$out" | tail -25; }
# the references themselves (Lab 08's through the engine's hidden tp.c), --short
nref=$("$S/build/sim/bin/labcheck" --list | grep -cE '^(01|06|08)_')
rc=0; out=$("$S/build/sim/bin/labcheck" --solution --short 01 06 08 2>&1) || rc=$?
[ $rc = 0 ] && [ "$(grep -c '^PASS ' <<<"$out")" = "$nref" ] &&
    pass "labcheck --solution --short 01 06 08: the $nref compiled-in references PASS" ||
    { fail "labcheck --solution in the handout: exit $rc"; sed 's/^/  | /' <<<"$out"; }

# ---- Lab 01 solved as a student writes it ---------------------------------------------------
# the student scenarios' own Lab 01 (tests/student/lab01_mine.cu: not the reference)
cp "$root/tests/student/lab01_mine.cu" "$S/labs/01_hello_threads/exercise.cu"
rc=0; out=$(make -C "$S" -s check 2>&1) || rc=$?
if [ $rc = 0 ] && grep -qE '^PASS  01_hello_threads +grid_size ' <<<"$out" &&
    grep -qE '^PASS  01_hello_threads +vector_add ' <<<"$out" &&
    [ "$(grep -cE '^TODO  [0-9]{2}_' <<<"$out")" = $((nex - 2)) ] && ! grep -q '^FAIL ' <<<"$out"; then
    pass "Lab 01 solved: make check PASS grid_size and vector_add, the $((nex - 2)) others TODO, exit 0"
else
    fail "make check after solving Lab 01: exit $rc"; sed 's/^/  | /' <<<"$out" | head -25
fi
rc=0; out=$(cd "$S" && timeout 60 build/sim/bin/lab01 --no-viz 2>&1) || rc=$?
[ $rc = 0 ] && ! grep -q "not attempted" <<<"$out" && pass "lab01 --no-viz runs the student's code (exit 0)" ||
    { fail "lab01 --no-viz after solving: exit $rc"; head -10 <<<"$out" | sed 's/^/  | /'; }

if [ $fails = 0 ]; then echo "tests/handout.sh: all passed"; else echo "tests/handout.sh: $fails failed"; exit 1; fi
