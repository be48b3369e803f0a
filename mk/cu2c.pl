#!/usr/bin/env perl
# mk/cu2c.pl FILE.cu — a kernel file as the simulated build compiles it.
#
# build/sim compiles each *.cu as C11 against simt/device.h (mk/build.mk).
# Three forms of CUDA C++ have no C11 spelling that a header alone can give,
# and one more is rewritten for the race check of the normal run,
# so this filter rewrites them first, printing the file on stdout with the
# same line numbers (a `#line` first, so __FILE__, diagnostics and debug
# information name FILE.cu):
#
#   extern __shared__ TYPE NAME[];     (the dynamic shared-memory array)
#       inside a function: SIMT_EXTERN_SHARED(TYPE, NAME); (simt/device.h: a
#       pointer to the launch's dynamic shared memory); at file scope:
#       `#define NAME ((TYPE *)simt_dynamic_shared)` on a line of its own,
#       which holds to the end of the file (so no later declaration may reuse
#       NAME). Any other extern __shared__ form is refused by name.
#   non-static inline functions, and non-static __device__ functions (not
#       __host__, not __global__), at file scope: made static, as device
#       code is per file in CUDA's whole-program mode (nvcc without -rdc):
#       C99 would emit no out-of-line copy of an inline function (an
#       undefined reference) and forbid it to call the dialect's static
#       helpers (the shuffles), and two files' helpers of one name would
#       clash at link time. A __device__ function CUDA never calls gets no
#       warning there, so none here either (__attribute__((unused))).
#   static __shared__ declarations: `static` before or after __shared__ is
#       dropped (simt/device.h's __shared__ is static already); each is
#       followed by a _Static_assert that the static shared memory declared
#       so far at its function's top level (plus the declaration itself, in
#       a nested block; alone, at file scope) fits CUDA's 48 KiB per block,
#       which ptxas enforces ("uses too much shared data"). A struct defined
#       in the declaration is not checked.
#   a scalar __shared__ declaration in a function (`__shared__ TYPE NAME;`,
#       one name, no array): TYPE simt_shv_NAME[1] and a pointer to it that
#       the compiler cannot see through (simt_launder), and each later NAME
#       of that function (not after `.` or `->`) becomes (*simt_shp_NAME).
#       GCC does not instrument an access to a variable it can see whole, so
#       without this the normal run's race check (core/simt/races.c) never
#       saw a shared counter (`count++` by every thread: a lost update).
#
# And __launch_bounds__(max, ...) before a kernel's name, on one line, makes
# the SIMT_LAUNCHER of that name SIMT_LAUNCHER_BOUNDED((max), name, ...): a
# launch of more threads per block fails, as in CUDA.
#
# A kernel file #included by this one (`#include "other.cu"`, beside it) is
# rewritten in its place, with its own #line; with --deps FILE.d TARGET,
# FILE.d says for make that TARGET depends on those files too.
#
# Only what stands on one line is rewritten (a declaration from its first
# word to its `;`; a function from its first specifier to its name's `(`,
# or with its specifiers alone on the line before);
# comments, strings, preprocessor lines and the lines of `#ifdef __cplusplus`
# (or `#if 0`) groups are left alone and do not count. The real-GPU
# build does not use this filter: nvcc reads the file as written.
use strict;
use warnings;

my ($deps, $target);
if (@ARGV && $ARGV[0] eq '--deps') {
    (undef, $deps, $target) = splice @ARGV, 0, 3;
    defined $target or die "usage: cu2c.pl [--deps FILE.d TARGET] FILE.cu\n";
}
my $top = shift @ARGV // die "usage: cu2c.pl [--deps FILE.d TARGET] FILE.cu\n";
my $topdir = $top =~ m{^(.*/)} ? $1 : '';

my $LIMIT = 48 * 1024;
my $INLINE = qr/\b(?:inline|__inline__|__inline|__forceinline__)\b/;
my @included;    # the kernel files #included by others, inlined (for --deps)
my $bounds = {};  # kernel name -> __launch_bounds__'s first argument

# The line with comments, string and character literals blanked (same
# length; a literal not closed on the line runs to its end), and whether a
# /* */ comment is still open at its end.
sub code_of {
    my ($line, $c) = @_;
    my $code = '';
    my $i = 0;
    my $n = length $line;
    while ($i < $n) {
        my $ch = substr($line, $i, 1);
        if ($c) {
            if (substr($line, $i, 2) eq '*/') { $code .= '  '; $i += 2; $c = 0; next; }
            $code .= $ch eq "\n" ? "\n" : ' ';
            $i++;
            next;
        }
        if (substr($line, $i, 2) eq '/*') { $code .= '  '; $i += 2; $c = 1; next; }
        if (substr($line, $i, 2) eq '//') { $code .= ' ' x ($n - $i); last; }
        if ($ch eq '"' || $ch eq "'") {
            my $j = $i + 1;
            while ($j < $n && substr($line, $j, 1) ne $ch) { $j += substr($line, $j, 1) eq '\\' ? 2 : 1; }
            if ($j >= $n) {    # not closed on this line: blank the rest of it
                (my $rest = substr($line, $i)) =~ s/[^\n]/ /g;
                $code .= $rest;
                last;
            }
            $code .= $ch . (' ' x ($j - $i - 1)) . $ch;
            $i = $j + 1;
            next;
        }
        $code .= $ch;
        $i++;
    }
    return ($code, $c);
}

sub names_of {    # the names a declaration's declarator list declares
    my ($decl) = @_;
    my (@pieces, $cur, $nest);
    ($cur, $nest) = ('', 0);
    for my $ch (split //, $decl) {
        $nest++ if $ch =~ /[\[\(\{]/;
        $nest-- if $ch =~ /[\]\)\}]/;
        if ($ch eq ',' && $nest == 0) { push @pieces, $cur; $cur = ''; next; }
        $cur .= $ch;
    }
    push @pieces, $cur;
    my @names;
    for my $p (@pieces) {
        $p =~ s/=.*//s;
        $p =~ s/\b(?:__align__|_Alignas|alignas|__attribute__)\s*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)//g;
        $p =~ s/\[.*//s;
        return () unless $p =~ /([A-Za-z_]\w*)\s*$/;
        push @names, $1;
    }
    return @names;
}

# FILE rewritten, as a string that starts with its #line
sub rewrite {
    my ($path, $nest) = @_;
    open my $in, '<', $path or die "cu2c.pl: $path: $!\n";
    my @lines = <$in>;
    close $in;
    (my $qpath = $path) =~ s/(["\\])/\\$1/g;
    my $depth = 0;        # brace depth at the start of the line
    my $comment = 0;      # inside a /* */ comment at the start of the line
    my $directive = 0;    # the line continues a preprocessor directive
    my @cond;             # the open #if groups: 'skip' (C++ only, #if 0), 'live-c', 'live'
    my @shared;           # the static __shared__ names at depth 1 of this function
    my %scalar;           # this function's scalar __shared__ names -> their array's name
    my $out = "#line 1 \"$qpath\"\n";

    for my $lineno (1 .. @lines) {
        my $line = $lines[$lineno - 1];
        if ($directive || (!$comment && $line =~ /^\s*#/)) {
            if (!$directive && $line =~ /^\s*#\s*(\w+)\s*(.*)/) {
                my ($kw, $rest) = ($1, $2);
                if ($kw =~ /^if/) {
                    my $cxx = $kw eq 'ifdef' && $rest =~ /^__cplusplus\b/
                              || $kw eq 'if' && $rest =~ /^(?:defined\s*\(?\s*__cplusplus\b|0\b)/;
                    my $c = $kw eq 'ifndef' && $rest =~ /^__cplusplus\b/
                            || $kw eq 'if' && $rest =~ /^!\s*defined\s*\(?\s*__cplusplus\b/;
                    push @cond, $cxx ? 'skip' : $c ? 'live-c' : 'live';
                } elsif ($kw eq 'else' && @cond) {
                    $cond[-1] = $cond[-1] eq 'skip' ? 'live' : $cond[-1] eq 'live-c' ? 'skip' : $cond[-1];
                } elsif ($kw eq 'elif' && @cond && $cond[-1] eq 'skip') {
                    $cond[-1] = 'live';
                } elsif ($kw eq 'endif') {
                    pop @cond;
                }
            }
            $directive = $line =~ /\\\s*$/ ? 1 : 0;
            # a kernel file that includes another (`#include "other.cu"`, found
            # beside it): the other is rewritten too, in its place (and a
            # header that such an inlined file includes from beside itself is
            # named from the first file's folder, where cc looks)
            if (!grep({ $_ eq 'skip' } @cond) && $line =~ /^(\s*#\s*include\s*")([^"]+)(".*)/s) {
                my ($pre, $name, $post) = ($1, $2, $3);
                my $dir = $path =~ m{^(.*/)} ? $1 : '';
                if ($name =~ /\.cu$/ && -f "$dir$name") {
                    die "cu2c.pl: $path: #include \"$name\" nested too deep\n" if $nest > 16;
                    push @included, "$dir$name";
                    my $text = rewrite("$dir$name", $nest + 1);
                    $out .= "\n" . $text . "#line " . ($lineno + 1) . " \"$qpath\"\n";
                    next;
                }
                if ($nest > 0 && $name !~ m{^/} && -f "$dir$name") {
                    $line = $pre . substr($dir, length $topdir) . $name . $post;
                }
            }
            $out .= $line;
            next;
        }
        if (grep { $_ eq 'skip' } @cond) {    # C++ only (or #if 0): not compiled here
            $out .= $line;
            next;
        }
        my ($code, $c_end) = code_of($line, $comment);
        $comment = $c_end;
        my @edits;    # [position, length, replacement], applied right to left
        my $after = '';

        # the depth at a position of this line
        my $depth_at = sub {
            my $pre = substr($code, 0, $_[0]);
            return $depth + ($pre =~ tr/{//) - ($pre =~ tr/}//);
        };

        # extern __shared__ TYPE NAME[];
        while ($code =~ /\bextern\s+__shared__\b([^;]*);/g) {
            my ($start, $end) = ($-[0], $+[0]);
            my $decl = $1;
            if ($decl =~ /^\s*(.*?\S)\s*\b([A-Za-z_]\w*)\s*\[\s*\]\s*$/s) {
                my ($type, $name) = ($1, $2);
                if ($depth_at->($start) > 0) {
                    push @edits, [$start, $end - $start, "SIMT_EXTERN_SHARED($type, $name);"];
                } else {
                    (my $bare = $type) =~ s/\b(?:__align__|_Alignas|alignas)\s*\([^()]*\)\s*//g;
                    $bare =~ s/\b__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)\s*//g;
                    push @edits, [$start, $end - $start, ''];
                    $after .= "#define $name (($bare *)simt_dynamic_shared)\n#line " . ($lineno + 1) . " \"$qpath\"\n";
                }
            } else {
                my $m = 'extern __shared__ is simulated only as `extern __shared__ TYPE NAME[];` '
                      . '(one array of unknown size, the launch\'s dynamic shared memory)';
                my ($kw) = substr($code, $start, $end - $start) =~ /^(extern\s+__shared__)/;
                push @edits, [$start, length $kw, "_Static_assert(0, \"$m\"); extern"];
            }
        }

        # the scalar __shared__ names declared before, through their pointer
        for my $name (keys %scalar) {
            while ($code =~ /(?<![\w.])(?<!->)(?<!\bsimt_shv_)\b\Q$name\E\b/g) {
                push @edits, [$-[0], length $name, "(*simt_shp_$name)"];
            }
        }

        # a scalar __shared__ declaration in a function: an array of one and
        # a laundered pointer to it (the names after it, above, next lines)
        my %renamed;
        while ($depth > 0 && $code =~ /(?<![\w])__shared__\s+([^;\[\]=,{}()]*?)\b([A-Za-z_]\w*)\s*;/g) {
            my ($start, $end, $type, $name) = ($-[0], $+[0], $1, $2);
            next if $type =~ /^\s*$/ || $type =~ /\b(?:extern|static)\b/;
            $type =~ s/\s+$//;
            push @edits, [$start, $end - $start,
                          "__shared__ $type simt_shv_$name\[1]; $type *const simt_shp_$name = "
                          . "($type *)simt_launder(simt_shv_$name);"];
            $renamed{$name} = "simt_shv_$name";
            # the rest of this line uses it through the pointer too
            my $rest = substr($code, $end);
            while ($rest =~ /(?<![\w.])(?<!->)\b\Q$name\E\b/g) {
                push @edits, [$end + $-[0], length $name, "(*simt_shp_$name)"];
            }
        }

        # `static __shared__` (as some CUDA code writes a kernel's shared
        # array): __shared__ is static already in C (simt/device.h)
        while ($code =~ /\bstatic\s+(?=__shared__\b)|(?<=__shared__)\s+static\b/g) {
            my ($at, $len, $what) = ($-[0], $+[0] - $-[0], $&);
            push @edits, [$at, $len, $what =~ /^static/ ? '' : ' '];
        }

        # static __shared__ declarations: the 48 KiB per block
        while ($code =~ /(?<!\w)(extern\s+)?__shared__\b([^;]*);/g) {
            next if defined $1;
            my ($start, $end, $decl) = ($-[0], $+[0], $2);
            next if $decl =~ /[{}]/;    # a struct defined in place: not checked
            my $d = $depth_at->($start);
            my @names = map { $renamed{$_} // $_ } names_of($decl);
            next unless @names;
            # a function's top-level declarations add up (they stay in scope to
            # its end); one in a nested block adds to them, alone
            push @shared, @names if $d == 1;
            my @all = $d == 1 ? @shared : $d > 1 ? (@shared, @names) : @names;
            my $sum = join ' + ', map { "sizeof($_)" } @all;
            my $list = join ', ', map { s/^simt_shv_//r } @all;
            my $msg = "static __shared__ memory over 48 KiB ($LIMIT bytes) per block "
                    . ($d > 0 && @all > 1 ? "in this function ($list)" : "($list)")
                    . ": nvcc refuses it (ptxas: too much shared data); use less, or dynamic "
                    . "shared memory (extern __shared__) and cudaFuncSetAttribute for more";
            push @edits, [$end, 0, " _Static_assert($sum <= $LIMIT, \"$msg\");"];
        }

        # __launch_bounds__(max, ...) before a kernel's name: its launcher (the
        # SIMT_LAUNCHER of that name, later) checks the threads per block
        if ($depth == 0) {
            while ($code =~ /\b__launch_bounds__\s*\(((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)\s*([A-Za-z_]\w*)\s*\(/g) {
                my ($args, $name) = (substr($line, $-[1], $+[1] - $-[1]), $2);
                my ($first, $nest) = ('', 0);
                for my $ch (split //, $args) {
                    $nest++ if $ch eq '(';
                    $nest-- if $ch eq ')';
                    last if $ch eq ',' && $nest == 0;
                    $first .= $ch;
                }
                $first =~ s/^\s+|\s+$//g;
                $bounds->{$name} = $first if $first ne '';
            }
            while ($code =~ /\bSIMT_LAUNCHER\s*\(\s*([A-Za-z_]\w*)\s*,/g) {
                my ($at, $len, $name) = ($-[0], $+[0] - $-[0], $1);
                next unless defined $bounds->{$name};
                push @edits, [$at, $len, "SIMT_LAUNCHER_BOUNDED(($bounds->{$name}), $name,"];
            }
        }

        # file scope: non-static inline and __device__ functions become static
        # (the specifiers may stand alone on the line before the name's, as in
        # `__inline__ __device__` then `int warpReduceSum(int val) {`)
        my $head = $code;
        if ($depth == 0 && $code =~ /^\s*(?:[A-Za-z_]\w*+(?:\s*\((?:[^()]|\([^()]*\))*\))?\s*)+$/
            && $lineno < @lines) {
            my ($next) = code_of($lines[$lineno], $comment);
            $head = $code . ' ' . $next;
            $head =~ s/\n/ /g;
        }
        if ($depth == 0
            && $head =~ /^(\s*)((?:[A-Za-z_]\w*+(?:\s*\((?:[^()]|\([^()]*\))*\))?[\s*]+)+?)([A-Za-z_]\w*)\s*\(/) {
            my ($lead, $specs) = ($1, $2);
            my $inline = $specs =~ $INLINE;
            if (($inline || $specs =~ /\b__device__\b/)
                && $specs !~ /\b(?:static|extern|typedef|__global__)\b/
                && ($inline || $specs !~ /\b__host__\b/)) {
                push @edits, [length $lead, 0, $inline ? 'static ' : 'static __attribute__((unused)) '];
            }
        }

        for my $e (sort { $b->[0] <=> $a->[0] } @edits) {
            substr($line, $e->[0], $e->[1]) = $e->[2];
        }
        if ($after ne '') {
            $line .= "\n" unless $line =~ /\n$/;
            $line .= $after;
        }
        $out .= $line;
        $depth += ($code =~ tr/{//) - ($code =~ tr/}//);
        %scalar = (%scalar, %renamed);
        if ($depth <= 0) {
            @shared = ();
            %scalar = ();
        }
    }
    $out .= "\n" unless $out =~ /\n$/;
    return $out;
}

print rewrite($top, 0);
close STDOUT or die "cu2c.pl: writing the rewritten $top: $!\n";
if (defined $deps) {    # make: the object depends on the files inlined too
    open my $d, '>', $deps or die "cu2c.pl: $deps: $!\n";
    print $d "$target: @included\n", map { "$_:\n" } @included;
    close $d or die "cu2c.pl: $deps: $!\n";
}
