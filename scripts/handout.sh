#!/usr/bin/env bash
# scripts/handout.sh — the student handout: a copy of the tree without the
# solution sources (`make handout` runs it, after building build/sim).
#
# Writes build/handout/paralab-handout/ and build/handout/paralab-handout.tar.gz
# (HANDOUT_OUT=DIR: DIR instead of build/handout). The copy holds the files
# git knows (committed or not, but not ignored) except:
#   * every labs/NN_*/solution.c|.cu and the files named in HANDOUT_HIDE (the
#     core files with the same code): their objects, compiled by this tree's
#     build, go into labs/reference/<variant>/libparalab-reference.a, and
#     labs/reference/hidden.list names them; mk/build.mk takes a listed
#     file's object out of the archive when the file is absent
#   * tests/ (but tests/labcheck*, which `make check` builds), bench/, .ci/,
#     the GPU and CUDA 12 check scripts, the instructors' guide
#   * the Makefile's project targets (between "# handout-omit-begin" and
#     "# handout-omit-end": make test, bench, racecheck, the GPU checks)
# and README.md starts with what the handout is.
#
# The archive of the simulated build is always made (from build/sim). The
# CUDA one (those files compiled here by nvcc, in build/handout-cuda)
# when HANDOUT_CUDA=1 (the Makefile's default where nvcc is found).
#
# Environment: HANDOUT_HIDE (required: the core files to leave out, may be
# empty), HANDOUT_CUDA (0/1), CUDA_HOME, NVCC, JOBS, HANDOUT_OUT.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

out=${HANDOUT_OUT:-build/handout}
name=paralab-handout
dest="$out/$name"
cuda=${HANDOUT_CUDA:-0}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
JOBS=${JOBS:-2}
MAKE=${MAKE:-make}

die() { echo "✗ make handout: $*" >&2; exit 1; }

git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
    die "not in a git work tree: the handout is made from the files git knows (a clone of paralab)"
case "$cuda" in 0 | 1) ;; *) die "HANDOUT_CUDA=$cuda: allowed 0 (no CUDA archive) or 1" ;; esac

# ---- what is left out ------------------------------------------------------------------
mapfile -t files < <(git ls-files --cached --others --exclude-standard | sort -u |
    while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done)
mapfile -t hidden < <(printf '%s\n' "${files[@]}" | grep -E '^labs/[0-9][0-9]_[^/]+/solution\.(c|cu)$')
[ ${#hidden[@]} -gt 0 ] || die "no labs/NN_*/solution.c|.cu found: is this a handout already?"
for f in ${HANDOUT_HIDE-}; do
    [ -f "$f" ] || die "HANDOUT_HIDE names $f, which is not a file of this tree"
    case "$f" in *.c | *.cu) ;; *) die "HANDOUT_HIDE names $f: only .c and .cu files can ship compiled" ;; esac
    hidden+=("$f")
done
is_hidden() { local h; for h in "${hidden[@]}"; do [ "$h" = "$1" ] && return 0; done; return 1; }
left_out() { # 0 if file $1 stays out of the handout
    is_hidden "$1" && return 0
    case "$1" in
        tests/labcheck*) return 1 ;;
        tests/* | bench/* | .ci/* | scripts/gpu-* | scripts/cuda12.sh) return 0 ;;
        docs/instructors* | docs/*/instructors*) return 0 ;;
        Makefile | README.md) return 0 ;; # written below
    esac
    return 1
}
keep=()
for f in "${files[@]}"; do left_out "$f" || keep+=("$f"); done

# ---- the references, compiled ----------------------------------------------------------
objs() { local f; for f in "${hidden[@]}"; do printf '%s/obj/%s.o\n' "$1" "$f"; done; }
pack() { # variant build-dir: its objects of the hidden files -> the archive
    local variant=$1 build=$2 tmp f member members=()
    tmp=$(mktemp -d)
    for f in "${hidden[@]}"; do
        member=${f//\//__}.o
        members+=("$member")
        cp "$build/obj/$f.o" "$tmp/$member"
        # no debug information: no line table, no local names (the code stays
        # runnable and linkable, not readable as source)
        objcopy --strip-debug "$tmp/$member"
    done
    mkdir -p "$dest/labs/reference/$variant"
    (cd "$tmp" && ar rcs "$dest_abs/labs/reference/$variant/libparalab-reference.a" "${members[@]}")
    rm -rf "$tmp"
}

rm -rf "$dest" "$out/$name.tar.gz"
mkdir -p "$dest"
dest_abs=$(cd "$dest" && pwd)
# shellcheck disable=SC2046
$MAKE -s -f mk/build.mk -j"$JOBS" VARIANT=sim BUILD=build/sim $(objs build/sim) ||
    die "the simulated build of the references failed"
pack sim build/sim
cuda_note=""
if [ "$cuda" = 1 ]; then
    [ -x "$NVCC" ] || die "HANDOUT_CUDA=1 but nvcc is not at $NVCC (set NVCC=, or HANDOUT_CUDA=0)"
    echo "  the references for the CUDA build (nvcc: $NVCC)"
    # shellcheck disable=SC2046
    $MAKE -s -f mk/build.mk -j"$JOBS" VARIANT=cuda BUILD=build/handout-cuda CUDA_HOME="$CUDA_HOME" NVCC="$NVCC" \
        $(objs build/handout-cuda) || die "the CUDA build of the references failed (HANDOUT_CUDA=0: a handout without it)"
    pack cuda build/handout-cuda
    release=$("$NVCC" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
    cuda_note="labs/reference/cuda/ holds the CUDA build of the references, compiled by nvcc
$release for A100 (sm_80) and H100/H200 (sm_90, with PTX for newer GPUs). The
CUDA build (\`make cuda\`, or \`make\` where a GPU is found) links it: use CUDA
$release or a later release of the same major version (the objects call its
runtime); with another toolkit, build on the simulated GPU, or ask for a
handout made with yours."
else
    cuda_note="This handout has no CUDA build of the references (it was made where nvcc
was not installed, or with HANDOUT_CUDA=0): the CUDA build (\`make cuda\`)
needs it, and stops saying so. \`make\`, \`make check\` and \`make demo\` use
the simulated GPU, also on a machine with a GPU. For real GPUs, ask for a
handout made where nvcc is installed (it then holds labs/reference/cuda/)."
fi
printf '%s\n' "${hidden[@]}" >"$dest/labs/reference/hidden.list"

# ---- the files -------------------------------------------------------------------------
printf '%s\0' "${keep[@]}" | tar --null -T - -cf - | tar -xf - -C "$dest"
awk '/^# handout-omit-begin/ { if (skip) { bad = NR; exit } skip = 1; next }
     /^# handout-omit-end/   { if (!skip) { bad = NR; exit } skip = 0; next }
     !skip
     END { if (bad || skip) { print "Makefile: unbalanced handout-omit markers at line " (bad ? bad : NR) > "/dev/stderr"; exit 1 } }' \
    Makefile >"$dest/Makefile" || die "the Makefile's handout-omit markers do not pair up"

hidden_core=$(printf '%s\n' "${hidden[@]}" | grep -v '/solution\.cu\?$' | sed 's/^/  /' || true)
cat >"$dest/labs/reference/README.md" <<EOF
# The references, compiled

This is a student handout of paralab (made by \`make handout\`): the reference
solutions are not here as source. Each lab still runs the reference where
your exercise is TODO, and \`labcheck --solution\` still checks it: they are
compiled in, from the archives in this folder.

* \`hidden.list\`: the files left out. Every \`labs/NN_name/solution.c\` or
  \`.cu\`, and the files that hold the same code (a lab's own kernels that
  build on its exercise's answer, the engine's versions of the exercises):
$hidden_core
* \`sim/libparalab-reference.a\`: their objects for the simulated GPU
  (build/sim), compiled by gcc on x86-64 Linux. mk/build.mk takes a listed
  file's object out of the archive when the file is absent; a file put back
  is compiled as usual.

$cuda_note
EOF

{
    cat <<EOF
# paralab — student handout

**This copy is the student handout** (made by \`make handout\`). Your files
are each lab's \`exercise.cu\` / \`exercise.c\`: write them, then run
\`make check\`. The reference solutions are not included as source: they are
compiled in (labs/reference/, see its README), so every lab still runs the
reference where your exercise is TODO, and says so. The project's own
tests, benchmarks and race and GPU checks (\`make test\`, \`make bench\`,
\`make racecheck\`, \`make gpu-check\`) are not part of the handout; \`make
help\` lists what is. Where this guide names a file that is not here
(\`solution.c\`, \`tests/\`, \`bench/\`, or one of the files named in
labs/reference/hidden.list), it is the full project's: the labs and \`make
check\` do not need it.

$cuda_note

EOF
    tail -n +3 README.md
} >"$dest/README.md"

# ---- checks ----------------------------------------------------------------------------
leak=$(cd "$dest" && find . -name 'solution.c' -o -name 'solution.cu' -o -name .git)
[ -z "$leak" ] || die "left in the handout: $leak"
for f in "${hidden[@]}"; do [ ! -e "$dest/$f" ] || die "left in the handout: $f"; done

tar -C "$out" --sort=name --owner=0 --group=0 --numeric-owner -czf "$out/$name.tar.gz" "$name"
n=$(find "$dest" -type f | wc -l)
echo "✓ handout: $dest/ ($n files) and $out/$name.tar.gz"
echo "  compiled in, not shipped: ${#hidden[@]} files (labs/reference/hidden.list)$([ "$cuda" = 1 ] && echo "; for build/sim and build/cuda" || echo "; for build/sim only: no CUDA build of them (nvcc not used)")"
