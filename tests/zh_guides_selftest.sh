#!/usr/bin/env bash
# tests/zh_guides_selftest.sh — tests/zh_guides.sh fails when it should. On a
# small tree of guides and twins made here: as made, it passes (exit 0); a
# command changed in a lab's twin, a command missing, a twin missing, a link
# missing, and README.zh.md's commands out of README.md's order each fail
# (exit 1) with the line naming the file and the command. Then on a copy of
# the repository's guides: Lab 01's twin passes as it is and, with one of its
# commands changed, fails naming that command.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
check=$PWD/tests/zh_guides.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "PASS  zh selftest: $1"; }
bad() {
    echo "FAIL  zh selftest: $1"
    fails=$((fails + 1))
}
# expect NAME RC PATTERN: run the check on $tmp/t, want exit RC and a line
# matching PATTERN (grep -F)
expect() {
    local out rc
    out=$("$check" "$tmp/t" 2>&1) && rc=0 || rc=$?
    if [ "$rc" = "$2" ] && grep -qF -- "$3" <<<"$out"; then
        ok "$1: exit $rc, '$3'"
    else
        bad "$1: exit $rc (want $2), no line '$3' in:"$'\n'"$out"
    fi
}
# a guide: title, link line, prose, a sh block with a comment
guide() { # FILE TITLE LINKLINE COMMANDS...
    local f=$1 t=$2 l=$3
    shift 3
    mkdir -p "$(dirname "$f")"
    {
        printf '# %s\n\n%s\n\nprose\n\n```sh\n' "$t" "$l"
        printf '%s\n' "$@"
        # shellcheck disable=SC2016 # a literal $ prompt
        printf '```\n\n```text\n$ output that is not compared\n```\n'
    } >"$f"
}
make_tree() {
    rm -rf "$tmp/t"
    local t=$tmp/t
    guide "$t/README.md" paralab '中文: [README.zh.md](README.zh.md)' \
        'make demo    # builds, runs the demo' 'make test' 'make check  # checks'
    guide "$t/README.zh.md" paralab 'English: [README.md](README.md)' \
        'make demo    # 构建并运行演示' 'make check'
    guide "$t/docs/getting-started.md" 'Getting started' '中文: [getting-started.md](zh/getting-started.md)' \
        'git clone URL paralab' 'cd paralab'
    guide "$t/docs/zh/getting-started.md" '入门' 'English: [getting-started.md](../getting-started.md)' \
        'git clone URL paralab   # 克隆' '  cd paralab  '
    guide "$t/docs/exercises.md" Exercises '中文: [exercises.md](zh/exercises.md)' 'make check'
    guide "$t/docs/zh/exercises.md" 练习 'English: [exercises.md](../exercises.md)' 'make check'
    guide "$t/labs/01_a/README.md" 'Lab 01' '中文: [README.zh.md](README.zh.md)' \
        'build/sim/bin/lab01          # the visualiser' 'build/sim/bin/lab01 --no-viz'
    guide "$t/labs/01_a/README.zh.md" '实验 01' 'English: [README.md](README.md)' \
        'build/sim/bin/lab01          # 可视化界面' '# 纯文本:' 'build/sim/bin/lab01 --no-viz'
}

make_tree
expect "the tree as made" 0 "✓ zh guides: 4 guides"
make_tree
sed -i 's|^build/sim/bin/lab01 --no-viz$|build/sim/bin/lab01 --no-vis|' "$tmp/t/labs/01_a/README.zh.md"
expect "a command changed in a lab's twin" 1 "FAIL  zh: labs/01_a/README.zh.md: command 2 differs from labs/01_a/README.md's:"
expect "... both versions named" 1 "labs/01_a/README.zh.md: build/sim/bin/lab01 --no-vis"
make_tree
sed -i '/^cd paralab$/d' "$tmp/t/docs/getting-started.md"
expect "a command only in the twin" 1 "FAIL  zh: docs/zh/getting-started.md: command 2 is not in docs/getting-started.md: cd paralab"
make_tree
sed -i '/--no-viz$/d' "$tmp/t/labs/01_a/README.zh.md"
expect "a command missing from the twin" 1 "FAIL  zh: labs/01_a/README.zh.md: command 2 is missing; labs/01_a/README.md has: build/sim/bin/lab01 --no-viz"
make_tree
rm "$tmp/t/docs/zh/exercises.md"
expect "a twin missing" 1 "FAIL  zh: docs/zh/exercises.md: missing (the Chinese twin of docs/exercises.md)"
make_tree
sed -i '/^中文:/d' "$tmp/t/docs/exercises.md"
expect "the English guide's link missing" 1 "FAIL  zh: docs/exercises.md: no line '中文: [...](zh/exercises.md)'"
make_tree
sed -i 's|(../getting-started.md)|(getting-started.md)|' "$tmp/t/docs/zh/getting-started.md"
expect "the twin's link to a wrong path" 1 "FAIL  zh: docs/zh/getting-started.md: no line 'English: [...](../getting-started.md)'"
make_tree
guide "$tmp/t/README.zh.md" paralab 'English: [README.md](README.md)' 'make check' 'make demo'
expect "README.zh.md out of README.md's order" 1 "FAIL  zh: README.zh.md: command not in README.md (or out of its order): make demo"
make_tree
mkdir -p "$tmp/t/labs/02_b" && cp "$tmp/t/labs/01_a/README.md" "$tmp/t/labs/02_b/"
expect "a lab guide without a twin" 1 "FAIL  zh: labs/02_b/README.zh.md: missing"

# the repository's own guides, copied
mkdir -p "$tmp/repo"
git ls-files --cached --others --exclude-standard -z '*.md' | tar --null -T - -cf - | tar -xf - -C "$tmp/repo"
out=$("$check" "$tmp/repo" 2>&1)
if grep -qF "PASS  zh: labs/01_hello_threads/README.zh.md quotes the same" <<<"$out"; then
    ok "the repository's Lab 01 twin passes as it is"
else
    bad "the repository's Lab 01 twin does not pass:"$'\n'"$out"
fi
sed -i '0,/^build\/sim\/bin\/lab01 --solution$/s//build\/sim\/bin\/lab01 --solutions/' "$tmp/repo/labs/01_hello_threads/README.zh.md"
out=$("$check" "$tmp/repo" 2>&1) && rc=0 || rc=$?
if [ "$rc" = 1 ] && grep -qF "labs/01_hello_threads/README.zh.md: build/sim/bin/lab01 --solutions" <<<"$out"; then
    ok "the repository's Lab 01 twin with --solution changed to --solutions: exit 1, the command named"
else
    bad "Lab 01's twin changed: exit $rc (want 1), said:"$'\n'"$out"
fi

if [ $fails -gt 0 ]; then
    echo "✗ zh selftest: $fails failure(s)"
    exit 1
fi
echo "✓ zh selftest: the check passes a good tree and names each kind of failure"
