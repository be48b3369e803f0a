#!/usr/bin/env bash
# tests/zh_guides.sh [ROOT] — every English guide has its Simplified Chinese
# twin, the two link each other, and they quote the same commands.
#
# The guides and their twins (paths from ROOT, default the repository):
#   README.md                  README.zh.md            (the quick start only)
#   docs/getting-started.md    docs/zh/getting-started.md
#   docs/exercises.md          docs/zh/exercises.md
#   labs/NN_name/README.md     labs/NN_name/README.zh.md   (every lab)
#
# The rules, for each pair:
# * the twin exists;
# * the English guide links the twin on a line `中文: [...](TWIN)` and the
#   twin links the English guide on a line `English: [...](GUIDE)`, each
#   among the first 5 lines (right under the title), with the path relative
#   to the file that holds the link;
# * the commands are the same. A guide's commands are the lines of its
#   ```sh, ```bash and ```console fenced blocks (indented fences included),
#   each with any `# comment` removed (a `#` at the start of the line or
#   after a space or tab: the Chinese guide may translate comments) and the
#   spaces at both ends trimmed; lines left empty are dropped. The two lists
#   must be identical, in the same order. README.zh.md holds only the quick
#   start and what a newcomer needs first, so for it the rule is weaker: each
#   of its commands must appear in README.md, in the same order (a
#   subsequence of README.md's commands).
#
# A failure names the file and the first command that differs; the script
# exits 1 after checking every pair (0 when all pass). Untagged (```) and
# ```text blocks are not compared: they hold screens and output, copied as
# they are.
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
fails=0
pass() { echo "PASS  zh: $1"; }
fail() {
    echo "FAIL  zh: $1"
    fails=$((fails + 1))
}

# commands FILE: the commands of FILE's sh/bash/console blocks, one a line
commands() {
    awk '
        !inb && /^[ \t]*```(sh|bash|console)[ \t]*$/ { inb = 1; next }
        inb && /^[ \t]*```[ \t]*$/ { inb = 0; next }
        inb {
            line = $0
            sub(/^#.*$/, "", line)
            sub(/[ \t]#.*$/, "", line)
            sub(/^[ \t]+/, "", line)
            sub(/[ \t]+$/, "", line)
            if (line != "") print line
        }' "$1"
}

# relpath FROM_FILE TO_FILE: TO_FILE's path as seen from FROM_FILE's folder
relpath() {
    local from=$1 to=$2
    realpath -m --relative-to="$(dirname "$from")" "$to"
}

# links FILE LABEL TARGET: a line `LABEL: [...](TARGET)` among FILE's first 5
links() {
    head -n 5 "$1" | grep -F -- "$2: [" | grep -qF -- "]($3)"
}

# compare ENGLISH TWIN MODE: MODE "same" (identical lists) or "subseq"
compare() {
    local en=$1 zh=$2 mode=$3
    local -a e z
    mapfile -t e < <(commands "$en")
    mapfile -t z < <(commands "$zh")
    if [ "$mode" = same ]; then
        local i n=${#e[@]}
        [ ${#z[@]} -gt "$n" ] && n=${#z[@]}
        for ((i = 0; i < n; i++)); do
            if [ "${e[i]-}" != "${z[i]-}" ]; then
                if [ $i -ge ${#z[@]} ]; then
                    fail "$zh: command $((i + 1)) is missing; $en has: ${e[i]}"
                elif [ $i -ge ${#e[@]} ]; then
                    fail "$zh: command $((i + 1)) is not in $en: ${z[i]}"
                else
                    fail "$zh: command $((i + 1)) differs from $en's:"$'\n'"      $zh: ${z[i]}"$'\n'"      $en: ${e[i]}"
                fi
                return
            fi
        done
        pass "$zh quotes the same ${#e[@]} commands as $en"
    else
        local j=0 c
        for c in "${z[@]}"; do
            while [ $j -lt ${#e[@]} ] && [ "${e[j]}" != "$c" ]; do j=$((j + 1)); done
            if [ $j -ge ${#e[@]} ]; then
                fail "$zh: command not in $en (or out of its order): $c"
                return
            fi
            j=$((j + 1))
        done
        pass "$zh's ${#z[@]} commands appear in $en, in order"
    fi
}

pairs=("README.md README.zh.md subseq"
    "docs/getting-started.md docs/zh/getting-started.md same"
    "docs/exercises.md docs/zh/exercises.md same")
nlabs=0
for g in labs/[0-9][0-9]_*/README.md; do
    [ -f "$g" ] || continue
    pairs+=("$g ${g%.md}.zh.md same")
    nlabs=$((nlabs + 1))
done
[ "$nlabs" -gt 0 ] || fail "no lab guide found under $root/labs"

for p in "${pairs[@]}"; do
    read -r en zh mode <<<"$p"
    if [ ! -f "$en" ]; then
        fail "$en: the English guide is missing"
        continue
    fi
    if [ ! -f "$zh" ]; then
        fail "$zh: missing (the Chinese twin of $en)"
        continue
    fi
    ok=1
    if ! links "$en" "中文" "$(relpath "$en" "$zh")"; then
        fail "$en: no line '中文: [...]($(relpath "$en" "$zh"))' in its first 5 lines"
        ok=0
    fi
    if ! links "$zh" "English" "$(relpath "$zh" "$en")"; then
        fail "$zh: no line 'English: [...]($(relpath "$zh" "$en"))' in its first 5 lines"
        ok=0
    fi
    [ $ok = 1 ] && pass "$en and $zh link each other"
    compare "$en" "$zh" "$mode"
done

if [ $fails -gt 0 ]; then
    echo "✗ zh guides: $fails failure(s) among ${#pairs[@]} guides and their Chinese twins"
    exit 1
fi
echo "✓ zh guides: ${#pairs[@]} guides, each with its Chinese twin, linked both ways, the same commands"
