#!/usr/bin/env bash
# scripts/data.sh — fetch the UCI handwritten digits (8x8, 1797 samples) into
# data/digits.csv, taken from Debian's python3-sklearn package (downloaded
# with apt-get download and unpacked, never installed).
#
# Usage: scripts/data.sh [--verify] [--force] [--help]
#   (no option)  fetch unless data/digits.csv already exists and verifies
#   --verify     only verify data/digits.csv (exit 1 if missing; a bad file is
#                removed, exit 1)
#   --force      fetch again even if data/digits.csv verifies
#
# Checks: 1797 rows of 65 comma-separated integers, pixels 0..16, label 0..9,
# and the SHA-256 of the CSV (and, when fetching, of the shipped .csv.gz).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DATA_DIR="$ROOT/data"
CSV="$DATA_DIR/digits.csv"
REL="data/digits.csv"

ROWS=1797
COLS=65
# SHA-256 of the decompressed CSV.
CSV_SHA256=6ebb3d2fee246a4e99363262ddf8a00a3c41bee6014c373ed9d9216ba7f651b8
# SHA-256 of sklearn/datasets/data/digits.csv.gz as shipped (python3-sklearn 1.2.1+dfsg-1).
GZ_SHA256=46abec6b12486ad9e51943373abcf22bbea1b5a51a1619b361570d8893f1464a
MEMBER_RE='sklearn/datasets/data/digits\.csv\.gz$'
# Packages that may hold the file, in the order we try them.
PACKAGES=(python3-sklearn python3-sklearn-lib)

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}

die() { echo "data.sh: $*" >&2; exit 1; }

MODE=fetch
FORCE=0
for arg in "$@"; do
    case "$arg" in
        --verify) MODE=verify ;;
        --force) FORCE=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "data.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

# verify FILE: prints nothing and returns 0 when good; prints why and returns 1 otherwise.
verify() {
    local f=$1 why sha
    if [[ ! -f "$f" ]]; then echo "file $f does not exist"; return 1; fi
    why=$(awk -F, -v rows="$ROWS" -v cols="$COLS" '
        NF != cols { printf "line %d has %d fields, expected %d\n", NR, NF, cols; bad = 1; exit }
        {
            for (i = 1; i <= NF; i++) {
                if ($i !~ /^[0-9]+$/) { printf "line %d field %d is not a non-negative integer: \"%s\"\n", NR, i, $i; bad = 1; exit }
                v = $i + 0
                if (i < cols && v > 16) { printf "line %d pixel %d is %d, expected 0..16\n", NR, i, v; bad = 1; exit }
                if (i == cols && v > 9) { printf "line %d label is %d, expected 0..9\n", NR, v; bad = 1; exit }
            }
        }
        END { if (!bad && NR != rows) printf "%d rows, expected %d\n", NR, rows }
    ' "$f")
    if [[ -n "$why" ]]; then echo "$why"; return 1; fi
    sha=$(sha256sum "$f" | cut -d' ' -f1)
    if [[ "$sha" != "$CSV_SHA256" ]]; then
        echo "sha256 is $sha, expected $CSV_SHA256"; return 1
    fi
    return 0
}

report_ok() { echo "$REL ok ($ROWS rows, sha256 $CSV_SHA256)"; }

if [[ "$MODE" == verify ]]; then
    if why=$(verify "$CSV"); then report_ok; exit 0; fi
    [[ -f "$CSV" ]] && rm -f "$CSV" && why="$why (bad file removed; run scripts/data.sh to fetch it again)"
    die "$REL failed verification: $why"
fi

if [[ $FORCE -eq 0 && -f "$CSV" ]]; then
    if why=$(verify "$CSV"); then report_ok; exit 0; fi
    echo "data.sh: existing $REL is bad ($why); fetching it again" >&2
    rm -f "$CSV"
fi

for tool in apt-get dpkg-deb sha256sum gzip awk; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found (this script needs Debian's apt/dpkg tools)"
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/paralab-data.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# apt drops to the _apt user to download; let it write here (avoids an "unsandboxed" warning).
if [[ $(id -u) -eq 0 ]] && id _apt >/dev/null 2>&1; then chown _apt "$TMP"; fi

UPDATED=0
# download PKG into $TMP; on failure (stale or empty package lists) run apt-get update once as root.
download() {
    local pkg=$1
    if (cd "$TMP" && apt-get download "$pkg") >"$TMP/apt.log" 2>&1; then return 0; fi
    if [[ $UPDATED -eq 0 && $(id -u) -eq 0 ]]; then
        echo "+ apt-get download $pkg failed; running apt-get update and retrying" >&2
        UPDATED=1
        apt-get update >&2 || die "apt-get update failed"
        if (cd "$TMP" && apt-get download "$pkg") >"$TMP/apt.log" 2>&1; then return 0; fi
    fi
    echo "data.sh: apt-get download $pkg failed:" >&2
    sed 's/^/  /' "$TMP/apt.log" >&2
    if [[ $(id -u) -ne 0 ]]; then echo "  (not root: if the package lists are empty, run 'sudo apt-get update' first)" >&2; fi
    return 1
}

DEB="" MEMBER=""
for pkg in "${PACKAGES[@]}"; do
    echo "+ apt-get download $pkg"
    download "$pkg" || continue
    deb=""
    for f in "$TMP/${pkg}"_*.deb; do [[ -e "$f" ]] && deb=$f; done
    [[ -n "$deb" ]] || { echo "data.sh: apt-get download $pkg left no .deb in $TMP" >&2; continue; }
    member=$(dpkg-deb -c "$deb" | awk '{ print $NF }' | grep -E "$MEMBER_RE" | head -n1 || true)
    if [[ -n "$member" ]]; then
        DEB=$deb MEMBER=$member
        echo "  found $member in $(basename "$deb")"
        break
    fi
    echo "  $(basename "$deb") has no digits.csv.gz"
done
[[ -n "$DEB" ]] || die "no digits.csv.gz found in any of: ${PACKAGES[*]}"

# Unpack just the one file.
mkdir -p "$TMP/x"
dpkg-deb --fsys-tarfile "$DEB" | tar -x -C "$TMP/x" "$MEMBER"
GZ=$(find "$TMP/x" -type f -name digits.csv.gz | head -n1)
[[ -n "$GZ" ]] || die "extracting $MEMBER from $(basename "$DEB") produced no file"

gz_sha=$(sha256sum "$GZ" | cut -d' ' -f1)
[[ "$gz_sha" == "$GZ_SHA256" ]] || die "digits.csv.gz from $(basename "$DEB") has sha256 $gz_sha, expected $GZ_SHA256"

mkdir -p "$DATA_DIR"
gzip -dc "$GZ" >"$TMP/digits.csv" || die "gunzip of $MEMBER failed"
if ! why=$(verify "$TMP/digits.csv"); then
    rm -f "$TMP/digits.csv" "$CSV"
    die "decompressed digits.csv failed verification: $why"
fi
mv -f "$TMP/digits.csv" "$CSV"
chmod 644 "$CSV"
echo "wrote $REL ($ROWS rows, sha256 $CSV_SHA256)"
