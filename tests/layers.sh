#!/usr/bin/env bash
# tests/layers.sh [ROOT] — every #include of every source file (*.c, *.h,
# *.cu) against the layers of mk/layers.mk, the table mk/build.mk takes its
# include folders from. Fails, naming file:line, the header, the layer it
# belongs to and the layers the file may see, when a file includes across a
# layer it may not see, includes a project header that is in no layer, or is
# itself in none. ROOT: the tree to check (default: this one; the self-test,
# tests/layers_selftest.sh, checks a copy).
#
# A header is found as the compiler finds it: "name" first beside the file,
# then in the layers' include folders; <name> only in the include folders
# (so <cuda_runtime.h> is the simulated runtime's; <stdio.h> and NVIDIA's
# own headers are not the project's and are not checked).
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT"
[ -f mk/layers.mk ] || { echo "✗ layers: no mk/layers.mk in $ROOT" >&2; exit 2; }

# The table, as make reads it: "layer|include folders|layers it sees" and
# "map|pattern=layer ...".
table=$(make --no-print-directory -s -f mk/layers.mk -f - layers-table <<'EOF'
layers-table:
	@$(foreach l,$(LAYERS),printf '%s|%s|%s\n' '$(l)' '$(LAYER_$(l)_INC)' '$(LAYER_$(l)_SEES)';)
	@printf 'map|%s\n' '$(LAYER_FILES)'
EOF
)

# The files: what git knows (tracked, and new files it does not ignore);
# outside a git work tree (a copy), every file under the source folders.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && [ "$(git rev-parse --show-toplevel)" = "$(pwd -P)" ]; then
    files=$(git ls-files --cached --others --exclude-standard '*.c' '*.h' '*.cu')
else
    files=$(find . -path ./build -prune -o -path ./.git -prune -o -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) -print | sed "s|^\./||" | LC_ALL=C sort)
fi

printf '%s\n' "$files" | TABLE="$table" perl -e '
use strict; use warnings;
my (%inc, %sees, @map, @dirs);
for (split /\n/, $ENV{TABLE}) {
    my ($l, $i, $s) = split /\|/, $_, 3;
    if ($l eq "map") { for (split " ", $i) { my ($p, $n) = split /=/; push @map, [$p, $n]; } next; }
    $inc{$l} = [split " ", $i]; $sees{$l} = [split " ", $s];
    for my $d (@{$inc{$l}}) { push @dirs, $d unless grep { $_ eq $d } @dirs; }
}
# which layer a path is in: the first pattern that matches (make: one %)
sub layer_of {
    my ($f) = @_;
    for (@map) {
        my ($p, $n) = @$_;
        my $re = join "(.*)", map { quotemeta } split /%/, $p, -1;
        return $n if $f =~ /^$re$/;
    }
    return undef;
}
sub norm { my @o; for (split m{/}, $_[0]) { next if $_ eq "." || $_ eq ""; if ($_ eq ".." && @o && $o[-1] ne "..") { pop @o } else { push @o, $_ } } join "/", @o }
my ($bad, $n_files, $n_inc) = (0, 0, 0);
while (my $f = <STDIN>) {
    chomp $f; next if $f eq "";
    $n_files++;
    my $lf = layer_of($f);
    if (!defined $lf) { print "$f: in no layer: add it to LAYER_FILES in mk/layers.mk\n"; $bad++; next; }
    my %may = map { $_ => 1 } @{$sees{$lf}};
    open my $fh, "<", $f or die "$f: $!\n";
    (my $here = $f) =~ s{/[^/]*$}{}; $here = "" if $here eq $f;
    while (my $line = <$fh>) {
        next unless $line =~ /^\s*#\s*include\s*([<"])([^">]+)[">]/;
        my ($q, $h) = ($1, $2);
        $n_inc++;
        my @cand = ($q eq "\"" ? (norm($here eq "" ? $h : "$here/$h")) : ());
        push @cand, map { norm("$_/$h") } @dirs;
        my ($hit) = grep { -f $_ } @cand;
        if (!defined $hit) {
            next if $q eq "<"; # a system header
            print "$f:$.: includes \"$h\", which is in no include folder of mk/layers.mk\n"; $bad++; next;
        }
        my $lh = layer_of($hit);
        if (!defined $lh) { print "$f:$.: includes \"$h\" ($hit), which is in no layer of mk/layers.mk\n"; $bad++; next; }
        next if $may{$lh};
        my $o = $q eq "<" ? "<$h>" : "\"$h\"";
        print "$f:$.: includes $o ($hit, layer $lh); $f is in layer $lf, which may see: @{$sees{$lf}}\n";
        $bad++;
    }
    close $fh;
}
if ($bad) { print "✗ layers: $bad include(s) or file(s) outside the layers they may see (mk/layers.mk)\n"; exit 1; }
print "✓ layers: $n_inc includes in $n_files files, each within the layers its file may see (mk/layers.mk)\n";
'
