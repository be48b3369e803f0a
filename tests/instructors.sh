#!/usr/bin/env bash
# tests/instructors.sh — the instructor guide (docs/instructors.md) keeps up
# with the labs: every lab (labs/NN_name/) has its section "## Lab NN — ...",
# and every question of the lab guide's questions section ("## Questions" or
# "## Questions to think about": the numbered items "1." or the bullets "*"
# at the start of a line) has its answer "**Qk.**" in that section, k = 1 ..
# the number of questions, each once and no more. A question added to a
# guide without an answer fails here, naming the lab and the count.
# Then the check's own test: a guide with one question more, and a section
# with an answer missing, must each fail.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# the questions of one guide: the items of its questions section
questions() {
    awk '/^## Questions/ { q = 1; next } /^## / { q = 0 } q && /^([0-9]+\.|\*) / { n++ } END { print n + 0 }' "$1"
}

# check GUIDE_DIR DOC: prints one line per problem; exit status 1 if any
check() {
    local labs=$1 doc=$2 bad=0 dir nn name want section got k
    for dir in "$labs"/[0-9][0-9]_*/; do
        dir=${dir%/}
        name=${dir##*/}
        nn=${name:0:2}
        if [ ! -f "$dir/README.md" ]; then
            echo "  $name: no README.md"
            bad=1
            continue
        fi
        want=$(questions "$dir/README.md")
        if [ "$want" -lt 1 ]; then
            echo "  $name: its guide has no questions section (## Questions) with numbered or bulleted questions"
            bad=1
        fi
        section=$(awk -v h="## Lab $nn " 'index($0, h) == 1 { s = 1; print; next } /^## / { s = 0 } s' "$doc")
        if [ -z "$section" ]; then
            echo "  $name: no section '## Lab $nn — ...' in ${doc#"$root"/}"
            bad=1
            continue
        fi
        got=$(grep -cE '^\*\*Q[0-9]+\.\*\*' <<<"$section")
        if [ "$got" != "$want" ]; then
            echo "  $name: its guide asks $want questions, ${doc#"$root"/} answers $got ('**Qk.**' entries)"
            bad=1
        fi
        for ((k = 1; k <= want; k++)); do
            case $(grep -cE "^\*\*Q$k\.\*\*" <<<"$section") in
            1) ;;
            0) echo "  $name: no answer **Q$k.**"; bad=1 ;;
            *) echo "  $name: **Q$k.** answered more than once"; bad=1 ;;
            esac
        done
    done
    return $bad
}

fails=0
nlabs=$(find "$root/labs" -maxdepth 1 -type d -name '[0-9][0-9]_*' | wc -l)
nq=0
for g in "$root"/labs/[0-9][0-9]_*/README.md; do nq=$((nq + $(questions "$g"))); done
if out=$(check "$root/labs" "$root/docs/instructors.md"); then
    echo "PASS  docs/instructors.md: a section for each of the $nlabs labs, an answer for each of their $nq questions"
else
    echo "FAIL  docs/instructors.md does not keep up with the labs:"
    echo "$out"
    fails=$((fails + 1))
fi
# at least Labs 01-11, and the 59 questions they had when this test was written
[ "$nlabs" -ge 11 ] || { echo "FAIL  only $nlabs labs found under labs/"; fails=$((fails + 1)); }
[ "$nq" -ge 59 ] || { echo "FAIL  only $nq questions found in the labs' guides (59 when this test was written): the question parser?"; fails=$((fails + 1)); }

# the check's own test, on copies: Lab 06 (bulleted questions) with one
# question more, and Lab 01 (numbered) with its last answer taken out
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/labs"
cp -r "$root/labs/01_hello_threads" "$root/labs/06_collectives" "$work/labs/"
cp "$root/docs/instructors.md" "$work/doc.md"
if ! check "$work/labs" "$work/doc.md" >/dev/null; then
    echo "FAIL  the check rejects the untouched copies"; fails=$((fails + 1))
fi
awk '{ print } /^## Questions/ { print ""; print "* A new question, not yet answered?" }' \
    "$root/labs/06_collectives/README.md" >"$work/labs/06_collectives/README.md"
out=$(check "$work/labs" "$work/doc.md")
if [ $? = 1 ] && grep -q "06_collectives: its guide asks $(($(questions "$root/labs/06_collectives/README.md") + 1)) questions" <<<"$out"; then
    echo "PASS  a question added to a guide without its answer fails"
else
    echo "FAIL  a question added to Lab 06's guide was not caught:"; echo "$out"; fails=$((fails + 1))
fi
cp "$root/labs/06_collectives/README.md" "$work/labs/06_collectives/README.md"
n01=$(questions "$root/labs/01_hello_threads/README.md")
sed "s/^\*\*Q$n01\.\*\*/Q$n01./" "$root/docs/instructors.md" >"$work/doc.md"
out=$(check "$work/labs" "$work/doc.md")
if [ $? = 1 ] && grep -q "01_hello_threads: no answer \*\*Q$n01\.\*\*" <<<"$out"; then
    echo "PASS  an answer taken out fails, naming the question"
else
    echo "FAIL  Lab 01's answer Q$n01 taken out was not caught:"; echo "$out"; fails=$((fails + 1))
fi

[ $fails = 0 ]
