#!/usr/bin/env bash
# tests/grade_reports.sh — labcheck's reports for autograders (make test).
# labcheck --junit and --gradescope, on the reference solutions of two labs
# and on a student's tree (a crash, an endless loop, a wrong result, a right
# one, a TODO): every JUnit report must validate against tests/grade/junit.xsd
# (xmllint) and every results.json against tests/grade/gradescope.schema.json
# (python3-jsonschema), with the exact scores, counts, types and messages.
# Also: the selection of one exercise (LAB:EXERCISE, --exercise, make check
# LAB= EXERCISE=), the points table, unwritable paths refused before any
# check runs, no temporary file left, a stop by SIGTERM that still writes
# both reports. BIN=DIR: the labcheck of the tree (default build/sim/bin).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${BIN:-$root/build/sim/bin}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
xsd="$root/tests/grade/junit.xsd"
schema="$root/tests/grade/gradescope.schema.json"
for tool in xmllint python3; do
    command -v $tool >/dev/null || { echo "FAIL  $tool not found: scripts/deps.sh installs it"; exit 1; }
done
python3 -c 'import jsonschema' 2>/dev/null ||
    { echo "FAIL  python3's jsonschema not found: scripts/deps.sh installs python3-jsonschema"; exit 1; }

bad() { echo "FAIL  $*"; fails=$((fails + 1)); }
good() { local m="$*"; echo "PASS  ${m%%$'\n'*}"; }

# valid FILE.xml FILE.json: both validate against their schemas
valid() {
    local x=$1 j=$2 out
    if out=$(xmllint --noout --schema "$xsd" "$x" 2>&1); then good "$(basename "$x") validates (junit.xsd)"; else
        bad "$(basename "$x") does not validate against junit.xsd:"; echo "$out" | sed 's/^/  | /'
    fi
    if out=$(python3 - "$schema" "$j" 2>&1 <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(schema)
jsonschema.validate(json.load(open(sys.argv[2])), schema)
PY
    ); then good "$(basename "$j") validates (gradescope.schema.json)"; else
        bad "$(basename "$j") does not validate against gradescope.schema.json:"; echo "$out" | tail -5 | sed 's/^/  | /'
    fi
}

# xp FILE XPATH WANT: the XPath expression's string value is WANT
xp() {
    local got want=$3
    got=$(xmllint --xpath "$2" "$1" 2>/dev/null || true)
    while [[ $want == *$'\n' ]]; do want=${want%$'\n'}; done # as $(...) gives it
    if [ "$got" = "$want" ]; then good "$(basename "$1"): $2 = $3"; else bad "$(basename "$1"): $2 = '$got', expected '$3'"; fi
}

# js FILE EXPR WANT: python's repr of EXPR (r: the results) is WANT
js() {
    local got
    local want=$3
    got=$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>&1 || true)
    while [[ $want == *$'\n' ]]; do want=${want%$'\n'}; done # as $(...) gives it
    if [ "$got" = "$want" ]; then good "$(basename "$1"): $2 = $3"; else bad "$(basename "$1"): $2 = '$got', expected '$3'"; fi
}

# rc WANT CMD...: runs CMD (output in $work/out), its exit status is WANT
rc() {
    local want=$1 got=0
    shift
    "$@" >"$work/out" 2>&1 || got=$?
    if [ "$got" = "$want" ]; then good "exit $want: ${*##*/}"; else
        bad "exit $got, expected $want: $*"; sed 's/^/  | /' "$work/out"
    fi
}
has() { # has PATTERN: $work/out matches (grep -E)
    if grep -qE -- "$1" "$work/out"; then good "says: $1"; else bad "does not say: $1"; sed 's/^/  | /' "$work/out"; fi
}
hasnt() {
    if grep -qE -- "$1" "$work/out"; then bad "says: $1"; sed 's/^/  | /' "$work/out"; else good "does not say: $1"; fi
}

# ---- the points table ------------------------------------------------------
rc 0 "$bin/labcheck" --list
has '^06_collectives +ring_all_reduce +10 points$'
has '^09_pipeline_parallel one_f_one_b +5 points$' # the columns aligned: 20 for the lab
has '^01_hello_threads +grid_size +3 points$'
total=$(awk '{ s += $3 } END { print s }' "$work/out")
[ "$total" = 110 ] && good "the points add up to 110 (10 a lab)" || bad "the points add up to $total, not 110"
# ---- selection -------------------------------------------------------------
rc 0 "$bin/labcheck" --list 06:ring_all_reduce
[ "$(wc -l <"$work/out")" = 1 ] && good "06:ring_all_reduce: one exercise" || bad "06:ring_all_reduce lists $(wc -l <"$work/out") lines"
rc 0 "$bin/labcheck" --list --exercise make_groups
has '^10_hybrid +make_groups +4 points$'
rc 0 "$bin/labcheck" --list --exercise vector_add 01 02
[ "$(wc -l <"$work/out")" = 1 ] && good "--exercise vector_add 01 02: one exercise" || bad "--exercise vector_add 01 02 lists $(wc -l <"$work/out") lines"
rc 2 "$bin/labcheck" 06:ring
has "^labcheck: lab 06_collectives has no exercise 'ring'; its exercises are: ring_all_reduce$"
rc 2 "$bin/labcheck" --exercise grid_size 06
has "^labcheck: no exercise 'grid_size' in the labs selected; their exercises are:$"
has '^  06_collectives: ring_all_reduce$'
rc 2 "$bin/labcheck" 12:x
has "^labcheck: no lab '12'; the labs are: 01_hello_threads "
rc 0 "$bin/labcheck" --help
has '--junit'
has '--gradescope'
has '^Exit status: 0 all selected checks passed'
# docs/exercises.md quotes the same --help
if diff <(awk '/^usage: labcheck/ { on = 1 } on && /^```/ { exit } on' "$root/docs/exercises.md") "$work/out" >"$work/diff"; then
    good "docs/exercises.md quotes labcheck --help as it is"
else
    bad "docs/exercises.md's labcheck --help differs from labcheck's:"; sed 's/^/  | /' "$work/diff"
fi

# ---- unwritable paths: refused before any check runs -----------------------
rc 2 "$bin/labcheck" --solution --junit "$work/no/such/folder/j.xml" 01
has "^labcheck: cannot write the JUnit report to '$work/no/such/folder/j.xml': cannot create a file in '$work/no/such/folder/': No such file or directory$"
hasnt '^(PASS|FAIL|TODO) '
mkdir "$work/dir.json"
rc 2 "$bin/labcheck" --solution --gradescope "$work/dir.json" 01
has "^labcheck: cannot write the Gradescope report to '$work/dir.json': it is a folder \(give a file name\)$"
hasnt '^(PASS|FAIL|TODO) '
rc 2 "$bin/labcheck" --junit "$work/same" --gradescope "$work/same" 01
has "name the same file"
# no device (a bad simulated-GPU setting): exit 2, no report, no temporary file
mkdir "$work/nodev"
rc 2 env SIMT_GPUS_PER_NODE=banana "$bin/labcheck" --gradescope "$work/nodev/r.json" 01
has '^labcheck: the simulated GPU could not start'
[ -z "$(ls -A "$work/nodev")" ] && good "no device: nothing left in the folder" || bad "no device: the folder holds $(ls -A "$work/nodev")"

# ---- the reference solutions of two labs -----------------------------------
mkdir "$work/ref"
echo "stale" >"$work/ref/r.json" # replaced whole
rc 0 "$bin/labcheck" --solution --junit "$work/ref/j.xml" --gradescope "$work/ref/r.json" 01 06
has '^points: 20 of 20 \(labs/grading.h\); JUnit XML in .*/j.xml; Gradescope results in .*/r.json$'
valid "$work/ref/j.xml" "$work/ref/r.json"
[ "$(ls -A "$work/ref" | tr '\n' ' ')" = "j.xml r.json " ] && good "no temporary file left" ||
    bad "the folder holds: $(ls -A "$work/ref" | tr '\n' ' ')"
xp "$work/ref/j.xml" 'string(/testsuites/@tests)' 3
xp "$work/ref/j.xml" 'string(/testsuites/@failures)' 0
xp "$work/ref/j.xml" 'string(/testsuites/@name)' 'labcheck (reference solutions)'
xp "$work/ref/j.xml" 'count(//testsuite)' 2
xp "$work/ref/j.xml" 'count(//testcase[failure or skipped or error])' 0
xp "$work/ref/j.xml" 'string(//testsuite[@name="06_collectives"]/properties/property[@name="max_score"]/@value)' 10
xp "$work/ref/j.xml" 'string(//testcase[@name="vector_add"]/@classname)' 01_hello_threads
js "$work/ref/r.json" 'r["score"]' 20
js "$work/ref/r.json" '[(t["name"], t["number"], t["score"], t["max_score"], t["status"]) for t in r["tests"]]' \
    "[('01_hello_threads: grid_size', '1.1', 3, 3, 'passed'), ('01_hello_threads: vector_add', '1.2', 7, 7, 'passed'), ('06_collectives: ring_all_reduce', '6.1', 10, 10, 'passed')]"
js "$work/ref/r.json" 'r["output"]' 'labcheck (reference solutions): 3 passed, 0 failed, 0 todo; 20 of 20 points
'
js "$work/ref/r.json" 'r["output"].endswith("\n") and r["tests"][0]["output"].endswith("\n")' True
js "$work/ref/r.json" 'r["tests"][2]["output"].startswith("PASS (") and r["tests"][2]["visibility"]' visible
# the validators refuse what is wrong (they do check)
sed 's/"status": "passed"/"status": "ok"/' "$work/ref/r.json" >"$work/ref/bad.json"
sed 's/ tests="2"//' "$work/ref/j.xml" >"$work/ref/bad.xml"
if xmllint --noout --schema "$xsd" "$work/ref/bad.xml" 2>/dev/null; then bad "junit.xsd accepts a report with no tests count"; else good "junit.xsd refuses a report with no tests count"; fi
if python3 -c 'import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))' \
    "$schema" "$work/ref/bad.json" 2>/dev/null; then bad "the schema accepts status 'ok'"; else good "the schema refuses status 'ok'"; fi

# the results.json of docs/exercises.md's run_autograder, when nothing compiles
sed -n "s/^ *echo '\({\"score\": 0, .*}\)' \\\\$/\1/p" "$root/docs/exercises.md" >"$work/doc.json"
if [ -s "$work/doc.json" ] && python3 -c 'import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))' \
    "$schema" "$work/doc.json" 2>/dev/null; then good "docs/exercises.md's run_autograder writes a valid results.json"; else
    bad "docs/exercises.md's run_autograder: no valid results.json in its echo ('$(cat "$work/doc.json")')"
fi

# make check LAB= EXERCISE= GRADESCOPE= JUNIT=
# (an environment's LAB is not make check's: only the command line's)
rc 0 env LAB=zzz make -s --no-print-directory -C "$root" check LAB=06 EXERCISE=ring_all_reduce ARGS=--solution \
    GRADESCOPE="$work/m.json" JUNIT="$work/m.xml"
has '^PASS  06_collectives +ring_all_reduce'
hasnt '01_hello_threads'
rc 0 env LAB=zzz EXERCISE=zzz make -s --no-print-directory -C "$root" check ARGS="--solution 01:grid_size"
has '^labcheck \(reference solutions\): 1 passed, 0 failed, 0 todo$'
valid "$work/m.xml" "$work/m.json"
js "$work/m.json" '(r["score"], len(r["tests"]), r["tests"][0]["name"])' "(10, 1, '06_collectives: ring_all_reduce')"

# ---- a student's tree: crash, endless loop, wrong, right, TODO -------------
# A copy of the tree with its build (times kept: only the replaced exercise
# files compile again).
tree="$work/tree"
mkdir -p "$tree/build"
(cd "$root" && cp -a core viz tools labs tests bench mk "$tree"/ && cp -a build/sim "$tree/build/")
cp "$root/tests/grade/lab01_crash_endless.cu" "$tree/labs/01_hello_threads/exercise.cu"
sed 's/lab02_solution/lab02_exercise/' "$root/labs/02_memory/solution.cu" >"$tree/labs/02_memory/exercise.cu"
# Lab 06's wrong segment (tests/student_check.sh's lab06_wrong_segment)
sed -e 's/lab06_solution/lab06_exercise/' \
    -e 's/int out = lab06_mod(r - s, n), in = lab06_mod(r - s - 1, n);/int out = lab06_mod(r - s - 1, n), in = lab06_mod(r - s - 2, n);/' \
    "$root/labs/06_collectives/solution.c" >"$tree/labs/06_collectives/exercise.c"
if ! grep -q 'int out = lab06_mod(r - s - 1, n)' "$tree/labs/06_collectives/exercise.c"; then
    bad "the wrong-segment edit no longer applies to labs/06_collectives/solution.c"
fi
touch "$tree"/labs/0[126]_*/exercise.*
if ! make -s --no-print-directory -C "$tree" -f mk/build.mk -j2 VARIANT=sim BUILD=build/sim \
    build/sim/bin/labcheck >"$work/build.log" 2>&1; then
    bad "the student's tree does not build"; sed -n '1,30p' "$work/build.log"; exit 1
fi
st="$tree/build/sim/bin/labcheck"
loop=$(grep -n '^SIMT_LAUNCHER(vector_add' "$root/tests/grade/lab01_crash_endless.cu" | cut -d: -f1) # the kernel's line
mkdir "$work/st"
rc 1 "$st" --timeout 1 --junit "$work/st/j.xml" --gradescope "$work/st/r.json" 01 02 03:block_sum 06
has '^FAIL  01_hello_threads +grid_size +the check crashed with signal 11'
has '^points: 10 of 36 '
valid "$work/st/j.xml" "$work/st/r.json"
j="$work/st/j.xml"
xp "$j" 'string(/testsuites/@tests)' 5
xp "$j" 'string(/testsuites/@failures)' 3
xp "$j" 'string(/testsuites/@skipped)' 1
xp "$j" 'string(/testsuites/@name)' 'labcheck (your exercises)'
xp "$j" 'string(//testsuite[@name="01_hello_threads"]/@failures)' 2
xp "$j" 'string(//testsuite[@name="01_hello_threads"]/properties/property[@name="score"]/@value)' 0
xp "$j" 'string(//testsuite[@name="02_memory"]/properties/property[@name="score"]/@value)' 10
xp "$j" 'string(//testcase[@name="grid_size"]/failure/@type)' crash
xp "$j" 'string(//testcase[@name="grid_size"]/failure/@message)' \
    'the check crashed with signal 11 (Segmentation fault): run the lab binary to see where'
# the child's output, made clean: the escape shown as ^[, the stray byte as ?
xp "$j" 'string(//testcase[@name="grid_size"]/system-out)' \
    'FAIL: the check crashed with signal 11 (Segmentation fault): run the lab binary to see where
grid_size: ^[[31mabout to crash^[[0m ?
'
xp "$j" 'string(//testcase[@name="vector_add"]/failure/@type)' timeout
xp "$j" 'string(//testcase[@name="vector_add"]/failure/@message)' \
    "no progress for 1 s of CPU time: kernel vector_add (labs/01_hello_threads/exercise.cu:$loop) is in blockIdx (0,0,0), threadIdx (0,0,0): an endless loop? (make check ARGS=\"--timeout S\" allows longer)"
xp "$j" 'count(//testcase[@name="transpose_tiled"]/*[self::failure or self::skipped])' 0
xp "$j" 'string(//testcase[@name="block_sum"]/skipped/@message)' \
    'not attempted yet: PL_TODO() at labs/03_reduction/exercise.cu:42'
xp "$j" 'string(//testcase[@name="ring_all_reduce"]/failure/@type)' wrong-result
msg=$(xmllint --xpath 'string(//testcase[@name="ring_all_reduce"]/failure/@message)' "$j")
re='^N=2, count 1: rank [01]: buf\[0\] = [0-9]+ but expected [0-9]+ \(N=2, count 1\)$'
[[ $msg =~ $re ]] && good "06's wrong result: $msg" || bad "06's wrong result: '$msg'"
r="$work/st/r.json"
js "$r" 'r["score"]' 10
js "$r" '[(t["name"], t["score"], t["max_score"], t["status"]) for t in r["tests"]]' \
    "[('01_hello_threads: grid_size', 0, 3, 'failed'), ('01_hello_threads: vector_add', 0, 7, 'failed'), ('02_memory: transpose_tiled', 10, 10, 'passed'), ('03_reduction: block_sum', 0, 6, 'failed'), ('06_collectives: ring_all_reduce', 0, 10, 'failed')]"
js "$r" 'r["tests"][0]["output"]' 'FAIL: the check crashed with signal 11 (Segmentation fault): run the lab binary to see where

grid_size: ^[[31mabout to crash^[[0m ?
'
js "$r" 'r["tests"][1]["output"].splitlines()[0]' \
    "FAIL: no progress for 1 s of CPU time: kernel vector_add (labs/01_hello_threads/exercise.cu:$loop) is in blockIdx (0,0,0), threadIdx (0,0,0): an endless loop? (make check ARGS=\"--timeout S\" allows longer)"
# its output: the first 16 KiB kept, the rest counted
js "$r" 'r["tests"][1]["output"].splitlines()[2:4]' "['vector_add: line 0000', 'vector_add: line 0001']"
js "$r" 'r["tests"][1]["output"].splitlines()[-1]' '[labcheck: 5616 more bytes of output left out]'
xp "$j" 'substring-after(//testcase[@name="vector_add"]/system-out, "line 0743")' '
vector_add: line
[labcheck: 5616 more bytes of output left out]'
js "$r" 'r["tests"][3]["output"]' 'TODO: not attempted yet: PL_TODO() at labs/03_reduction/exercise.cu:42
'
js "$r" 'r["tests"][4]["output"].split(":")[0]' FAIL
js "$r" 'r["output"]' 'labcheck (your exercises): 1 passed, 3 failed, 1 todo; 10 of 36 points
'
# the same failure in both reports: the JUnit message is the JSON output's first line
js "$r" 'r["tests"][4]["output"].splitlines()[0]' "FAIL: $msg"

# --strict: a TODO is a JUnit failure (type todo), and exit 1
rc 1 "$st" --strict --junit "$work/st/s.xml" --gradescope "$work/st/s.json" 03:block_sum
valid "$work/st/s.xml" "$work/st/s.json"
xp "$work/st/s.xml" 'string(//testcase[@name="block_sum"]/failure/@type)' todo
xp "$work/st/s.xml" 'string(/testsuites/@skipped)' 0
js "$work/st/s.json" 'r["output"]' 'labcheck (your exercises): 0 passed, 0 failed, 1 todo (TODO counts as a failure); 0 of 6 points
'
# without --strict, a TODO alone exits 0
rc 0 "$st" --gradescope "$work/st/t.json" 03:block_sum

# ---- stopped by SIGTERM during an endless check: both reports written ------
"$st" --timeout 600 --junit "$work/st/k.xml" --gradescope "$work/st/k.json" 01:vector_add 02 \
    >"$work/out" 2>&1 &
pid=$!
# wait for the check's child: the same one seen twice, half a second apart
last="" seen=0
for _ in $(seq 1 40); do
    kid=$(pgrep -P "$pid" || true)
    if [ -n "$kid" ] && [ "$kid" = "$last" ]; then seen=1; break; fi
    last=$kid
    sleep 0.5
done
[ $seen = 1 ] || bad "no check running under labcheck after 20 s"
kill -TERM "$pid"
krc=0
wait "$pid" || krc=$?
[ "$krc" = 143 ] && good "stopped by SIGTERM: exit 143" || { bad "stopped by SIGTERM: exit $krc, expected 143"; sed 's/^/  | /' "$work/out"; }
valid "$work/st/k.xml" "$work/st/k.json"
xp "$work/st/k.xml" 'string(//testcase[@name="vector_add"]/failure/@type)' stopped
xp "$work/st/k.xml" 'string(//testcase[@name="vector_add"]/failure/@message)' \
    'stopped: labcheck was stopped by signal 15 (Terminated) during this check'
xp "$work/st/k.xml" 'string(//testcase[@name="transpose_tiled"]/failure/@message)' \
    'not run: labcheck was stopped by signal 15 (Terminated)'
js "$work/st/k.json" '(r["score"], [t["status"] for t in r["tests"]])' "(0, ['failed', 'failed'])"
[ -z "$(pgrep -P "$pid" 2>/dev/null || true)" ] && good "no check left running" || bad "a check still runs"

# ---- the table and the labs in step: an exercise without points refused -----
sed -i '/"11_zero", *"zero1_update"/d' "$tree/labs/grading.h"
if make -s --no-print-directory -C "$tree" -f mk/build.mk -j2 VARIANT=sim BUILD=build/sim \
    build/sim/bin/labcheck >"$work/build.log" 2>&1; then
    rc 2 "$st" --list
    has '^labcheck: labs/grading.h gives no points to 11_zero zero1_update: add its line$'
else
    bad "labcheck does not build without a line of labs/grading.h"; sed -n '1,20p' "$work/build.log"
fi

if [ $fails -ne 0 ]; then
    echo "grade_reports: $fails failed"
    exit 1
fi
echo "grade_reports: all passed"
