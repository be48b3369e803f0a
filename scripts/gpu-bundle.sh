#!/usr/bin/env bash
# scripts/gpu-bundle.sh — download (apt-get download, no install) the Debian
# .deb files a GPU machine without any package registry needs to build and run
# paralab's tests, into .gpu-bundle/ (with SHA256SUMS and MANIFEST).
# scripts/gpu-check.sh unpacks them there into build/prefix/.
#
# Usage: scripts/gpu-bundle.sh [--force] [--help]
#   --force   empty .gpu-bundle/ and download everything again
# Fails if the folder would exceed 60 MiB.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUNDLE="$ROOT/.gpu-bundle"
LIMIT_MIB=60

# Runtime + dev packages. The target is assumed to have libc6/libc6-dev, gcc and
# the CUDA toolkit; everything else these need is listed here.
PACKAGES=(
    libcunit1 libcunit1-dev                           # CUnit
    libtinfo6 libncurses6 libncursesw6 libncurses-dev  # ncursesw
    ncurses-bin ncurses-base                          # tput/tic, base terminfo
    libjansson4 libjansson-dev                        # jansson
    tmux libevent-core-2.1-7 libutempter0             # tmux and its libraries
    make                                              # in case the target lacks it
    pkg-config pkgconf pkgconf-bin libpkgconf3        # pkg-config for the .pc files
    python3-sklearn                                   # holds digits.csv.gz (data/digits.csv)
)
# Dependencies we expect the target to have already (not bundled).
ASSUMED=(libc6 libc6-dev libc-dev debconf)

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}
die() { echo "gpu-bundle.sh: $*" >&2; exit 1; }

FORCE=0
for arg in "$@"; do
    case "$arg" in
        --force) FORCE=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "gpu-bundle.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

for tool in apt-get apt-cache dpkg-deb sha256sum; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found (this script needs Debian's apt/dpkg tools)"
done

[[ $FORCE -eq 1 ]] && rm -rf "$BUNDLE"
mkdir -p "$BUNDLE"
# apt drops to the _apt user to download; let it write here.
if [[ $(id -u) -eq 0 ]] && id _apt >/dev/null 2>&1; then chown _apt "$BUNDLE"; fi

UPDATED=0
apt_update_once() {
    [[ $UPDATED -eq 0 && $(id -u) -eq 0 ]] || return 1
    UPDATED=1
    echo "+ apt-get update"
    apt-get update || die "apt-get update failed"
}
if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
    apt_update_once || die "package lists are empty; run 'sudo apt-get update' first"
fi

# candidate version of PKG (empty if unknown)
candidate() { apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { print $2; exit }'; }

# the .deb in the bundle for PKG at VERSION (apt escapes ':' in epochs as %3a)
deb_for() {
    local pkg=$1 ver=${2//:/%3a} f
    for f in "$BUNDLE/${pkg}_${ver}"_*.deb; do [[ -e "$f" ]] && { echo "$f"; return 0; }; done
    return 1
}

fetched=0 kept=0
for pkg in "${PACKAGES[@]}"; do
    ver=$(candidate "$pkg")
    if [[ -z "$ver" || "$ver" == "(none)" ]]; then
        apt_update_once && ver=$(candidate "$pkg")
    fi
    [[ -n "$ver" && "$ver" != "(none)" ]] || die "no installable version of '$pkg' in the apt lists"
    if deb_for "$pkg" "$ver" >/dev/null; then kept=$((kept + 1)); continue; fi
    # drop older versions of the same package
    for old in "$BUNDLE/${pkg}"_*.deb; do
        [[ -e "$old" ]] && [[ "$(dpkg-deb -f "$old" Package)" == "$pkg" ]] && rm -f "$old"
    done
    echo "+ apt-get download $pkg=$ver"
    if ! (cd "$BUNDLE" && apt-get download "$pkg=$ver") >"$BUNDLE/.apt.log" 2>&1; then
        if apt_update_once; then
            ver=$(candidate "$pkg")
            (cd "$BUNDLE" && apt-get download "$pkg=$ver") >"$BUNDLE/.apt.log" 2>&1 ||
                { cat "$BUNDLE/.apt.log" >&2; die "apt-get download $pkg=$ver failed"; }
        else
            cat "$BUNDLE/.apt.log" >&2; die "apt-get download $pkg=$ver failed"
        fi
    fi
    fetched=$((fetched + 1))
done
rm -f "$BUNDLE/.apt.log"

# Every Depends of a bundled package must be bundled or assumed present.
declare -A have=()
for p in "${PACKAGES[@]}" "${ASSUMED[@]}"; do have[$p]=1; done
unmet=()
for deb in "$BUNDLE"/*.deb; do
    pkg=$(dpkg-deb -f "$deb" Package)
    deps=$(dpkg-deb -f "$deb" Pre-Depends Depends | sed 's/^[A-Za-z-]*: //' | tr ',' '\n')
    while IFS= read -r alt; do
        [[ -n "${alt// }" ]] || continue
        ok=0
        IFS='|' read -ra choices <<<"$alt"
        for c in "${choices[@]}"; do
            name=$(echo "$c" | sed 's/([^)]*)//g; s/:any//; s/[[:space:]]//g')
            [[ -n "${have[$name]:-}" ]] && ok=1
        done
        # python3-sklearn is only a data carrier: its Python dependencies are not needed.
        [[ $ok -eq 1 || "$pkg" == python3-sklearn ]] || unmet+=("$pkg -> $(echo "$alt" | xargs)")
    done <<<"$deps"
done

# Highest glibc symbol version any bundled program or library asks for.
glibc_need=""
if command -v readelf >/dev/null 2>&1; then
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/paralab-bundle.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    for deb in "$BUNDLE"/*.deb; do
        [[ "$(basename "$deb")" == python3-sklearn_* ]] && continue
        dpkg-deb -x "$deb" "$tmp"
    done
    glibc_need=$(find "$tmp" -type f \( -name '*.so*' -o -perm -u+x \) -exec readelf -V --wide {} + 2>/dev/null |
        grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n1 || true)
fi

# give the folder back to us (it was chown'ed to _apt for the downloads)
if [[ $(id -u) -eq 0 ]]; then chown "$(id -u):$(id -g)" "$BUNDLE"; fi
# nccl.h, for a GPU machine whose NCCL comes from a Python wheel without it
if [[ -f "${CUDA_HOME:-/usr/local/cuda}/include/nccl.h" ]]; then
    mkdir -p "$BUNDLE/include"
    cp "${CUDA_HOME:-/usr/local/cuda}/include/nccl.h" "$BUNDLE/include/"
fi
(cd "$BUNDLE" && sha256sum -- *.deb >SHA256SUMS)
{
    echo "# paralab GPU bundle: Debian $(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release 2>/dev/null) $(dpkg --print-architecture 2>/dev/null)"
    echo "# made $(date -u +%Y-%m-%dT%H:%M:%SZ); needs glibc >= ${glibc_need:-?} on the target"
    for deb in "$BUNDLE"/*.deb; do
        printf '%s\t%s\t%s\t%s\n' "$(dpkg-deb -f "$deb" Package)" "$(dpkg-deb -f "$deb" Version)" \
            "$(dpkg-deb -f "$deb" Architecture)" "$(basename "$deb")"
    done
} >"$BUNDLE/MANIFEST"

count=$(find "$BUNDLE" -maxdepth 1 -name '*.deb' | wc -l)
kib=$(du -sk "$BUNDLE" | cut -f1)
echo "bundle: $count .deb files in .gpu-bundle/ ($fetched downloaded, $kept already there)"
echo "size: $(du -sh "$BUNDLE" | cut -f1) ($kib KiB); target needs glibc >= ${glibc_need:-?}"
if [[ ${#unmet[@]} -gt 0 ]]; then
    echo "gpu-bundle.sh: dependencies neither bundled nor assumed present on the target:" >&2
    printf '  %s\n' "${unmet[@]}" >&2
    exit 1
fi
[[ $kib -le $((LIMIT_MIB * 1024)) ]] || die ".gpu-bundle is $kib KiB, over the $LIMIT_MIB MiB limit"
