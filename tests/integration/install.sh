#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# install.sh -- `make install DESTDIR=$tmp/root PREFIX=/usr` twice (a reinstall is fine):
# every file in place, byte for byte, with its mode, and nothing else; the installed
# gauntlet runs; the man page renders without a warning (groff -ww, man -l, where installed)
# and has every command and every option `gauntlet CMD --help` names; the completion passes
# bash -n and completes the commands (`gauntlet r`: report run), each command's options,
# the --format values, emit's kinds and matrix/journal file names; `make uninstall` leaves
# no file. Then `make install PREFIX=$tmp/prefix`: the installed testbed, run from there,
# loads the installed model ($GAUNTLET_TESTBED_MODEL still wins), and uninstall empties it.
. "$SRCDIR/tests/lib.sh"

[ -x "$GAUNTLET" ] || fail "no $GAUNTLET: run make first"
[ -x "$TESTBED" ] || fail "no $TESTBED: run make first"
# The binaries as the suite built them, never remade here (-o): nothing is built into
# another folder, and an edit in progress elsewhere in the tree cannot fail this test.
mk() {
        make -s -C "$SRCDIR" BUILD="$BUILD" -o "$BUILD/bin/gauntlet" -o "$BUILD/bin/gauntlet-testbed" "$@" \
                >"$tmp/make.log" 2>&1 || { fail_log=$tmp/make.log fail "make $*"; }
}
commands=$("$GAUNTLET" --help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p' | tr '\n' ' ')
commands=${commands% }
[ "$commands" = "run smoke inspect bench report compare emit doctor" ] || fail "gauntlet --help lists '$commands'"
# The options a command's --help names, one per line.
help_options() { "$GAUNTLET" "$1" --help | grep -o -- '--[a-z][a-z-]*' | sort -u; }

# --- install into a staging root, twice ---------------------------------------------------
root=$tmp/root
mk install DESTDIR="$root" PREFIX=/usr
mk install DESTDIR="$root" PREFIX=/usr
examples=$(cd "$SRCDIR/examples" && printf '%s\n' *.yaml)
want=$({
        printf '%s\n' usr/bin/gauntlet usr/bin/gauntlet-testbed usr/libexec/gauntlet/gauntlet-testbed \
                usr/share/gauntlet/model.gguf usr/share/man/man1/gauntlet.1 \
                usr/share/bash-completion/completions/gauntlet
        for e in $examples; do echo "usr/share/gauntlet/examples/$e"; done
} | sort)
got=$(cd "$root" && find . ! -type d | sed 's|^\./||' | sort)
[ "$got" = "$want" ] || fail "installed files: got
$got
want
$want"
mode() { # file want
        local m
        m=$(stat -c %a "$root/$1")
        [ "$m" = "$2" ] || soft_fail "$1: mode $m, want $2"
}
for f in usr/bin/gauntlet usr/bin/gauntlet-testbed usr/libexec/gauntlet/gauntlet-testbed; do
        mode "$f" 755
done
while read -r f; do
        mode "$f" 644
done < <(grep -v '/bin/\|/libexec/' <<<"$want")
bad=$(find "$root" -type d ! -perm 755)
[ -z "$bad" ] || soft_fail "folders not mode 755: $bad"
cmp -s "$GAUNTLET" "$root/usr/bin/gauntlet" || soft_fail "bin/gauntlet is not $GAUNTLET"
cmp -s "$TESTBED" "$root/usr/libexec/gauntlet/gauntlet-testbed" || soft_fail "libexec testbed is not $TESTBED"
cmp -s "$SRCDIR/testbed/model.gguf" "$root/usr/share/gauntlet/model.gguf" || soft_fail "model.gguf differs"
for e in $examples; do
        cmp -s "$SRCDIR/examples/$e" "$root/usr/share/gauntlet/examples/$e" || soft_fail "examples/$e differs"
done
comp=$root/usr/share/bash-completion/completions/gauntlet
cmp -s "$SRCDIR/contrib/gauntlet.bash-completion" "$comp" || soft_fail "the completion differs"

# --- the installed gauntlet runs; the testbed wrapper points at /usr ----------------------
v=$("$root/usr/bin/gauntlet" --version) || soft_fail "installed gauntlet --version exit $?"
[ "$v" = "$("$GAUNTLET" --version)" ] || soft_fail "installed gauntlet --version: '$v'"
if h=$("$root/usr/bin/gauntlet" --help); then
        grep -q "^  report " <<<"$h" || soft_fail "installed gauntlet --help lists no report"
else
        soft_fail "installed gauntlet --help exit $?"
fi
wrapper=$root/usr/bin/gauntlet-testbed
sh -n "$wrapper" || soft_fail "sh -n rejects bin/gauntlet-testbed"
grep -qxF 'exec "/usr/libexec/gauntlet/gauntlet-testbed" "$@"' "$wrapper" ||
        soft_fail "bin/gauntlet-testbed does not exec /usr/libexec/gauntlet/gauntlet-testbed: $(cat "$wrapper")"
grep -qF ':=/usr/share/gauntlet/model.gguf}' "$wrapper" ||
        soft_fail "bin/gauntlet-testbed does not default to /usr/share/gauntlet/model.gguf"

# --- the man page -------------------------------------------------------------------------
page=$root/usr/share/man/man1/gauntlet.1
# roff writes - as \-; its comments (.\") may say what they like
sed -e '/^\.\\"/d' -e 's/\\-/-/g' "$page" >"$tmp/page"
grep -q '/usr/local' "$tmp/page" && soft_fail "the installed page still names /usr/local: $(grep /usr/local "$tmp/page")"
grep -qF '/usr/share/gauntlet/examples/' "$page" || soft_fail "the page does not point to the installed examples"
grep -qF 'docs/matrix.md' "$page" || soft_fail "the page does not point to docs/matrix.md"
if command -v groff >/dev/null; then
        groff -man -Tutf8 -ww -z "$page" 2>"$tmp/groff.err" || soft_fail "groff exit $?"
        [ -s "$tmp/groff.err" ] && soft_fail "groff warns: $(cat "$tmp/groff.err")"
else
        echo "groff not installed: page warnings not checked"
fi
if command -v man >/dev/null; then
        MANWIDTH=80 man --warnings -l "$page" >"$tmp/man.txt" 2>"$tmp/man.err" || soft_fail "man -l exit $?"
        [ -s "$tmp/man.err" ] && soft_fail "man -l warns: $(cat "$tmp/man.err")"
        for s in NAME SYNOPSIS COMMANDS VERDICTS 'EXIT STATUS' FILES; do
                grep -q "^$s\$" "$tmp/man.txt" || soft_fail "man -l shows no section $s"
        done
else
        echo "man not installed: page not rendered"
fi
# Every command's section names every option its --help does.
for c in $commands; do
        grep -q "^\.SS gauntlet $c\b" "$tmp/page" || { soft_fail "the page has no section for $c"; continue; }
        sed -n "/^\.SS gauntlet $c\b/,/^\.S[SH] /p" "$tmp/page" >"$tmp/section"
        for o in $(help_options "$c"); do
                grep -qE -- "(^|[ \"])$o([^a-z-]|\$)" "$tmp/section" || soft_fail "the page's $c section lacks $o"
        done
done
for x in 0 1 2 3 130; do
        grep -qx "\.B $x" "$tmp/page" || soft_fail "the page's EXIT STATUS lacks $x"
done
for cause in pass garbage repeat loop low-information invalid-text empty nan http wrong crash oom arch cuda \
        nccl port model config assert signal exit timeout startup request hang skipped excluded inferred error; do
        grep -qx "\.B $cause" "$tmp/page" || soft_fail "the page's VERDICTS lack $cause"
done

# --- the completion -----------------------------------------------------------------------
bash -n "$comp" || soft_fail "bash -n rejects the completion"
# complete.sh FILE WORD...: what the completion registered for gauntlet offers for the
# command line WORD... (the last one being completed), sorted, on one line.
cat >"$tmp/complete.sh" <<'EOF'
. "$1" || exit 1
shift
fn=$(complete -p gauntlet | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
[ -n "$fn" ] || { echo "no completion function registered for gauntlet" >&2; exit 1; }
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
"$fn" gauntlet "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ *$//'
EOF
mkdir -p "$tmp/files/sub"
touch "$tmp/files/m.yaml" "$tmp/files/n.yml" "$tmp/files/j.db" "$tmp/files/x.txt"
expect_completion() { # want word...
        local want=$1 got
        shift
        got=$(cd "$tmp/files" && bash --norc --noprofile "$tmp/complete.sh" "$comp" "$@") ||
                { soft_fail "completing '$*' failed"; return 0; }
        [ "$got" = "$want" ] || soft_fail "completing '$*': got '$got', want '$want'"
}
expect_completion "report run" gauntlet r
expect_completion "$(tr ' ' '\n' <<<"$commands --help --version" | sort | tr '\n' ' ' | sed 's/ *$//')" gauntlet ""
expect_completion "html json markdown text" gauntlet report --format ""
expect_completion "json" gauntlet smoke --format = j
expect_completion "json text" gauntlet doctor --format ""
expect_completion "chat completion" gauntlet bench --endpoint ""
expect_completion "llama.cpp" gauntlet bench --engine ll
expect_completion "split unified" gauntlet bench --kv-cache-layout ""
expect_completion "script systemd" gauntlet emit ""
expect_completion "m.yaml n.yml sub" gauntlet run ""
expect_completion "j.db sub" gauntlet run m.yaml --journal ""
expect_completion "j.db sub" gauntlet report --format json ""
expect_completion "j.db sub" gauntlet emit systemd ""
expect_completion "j.db m.yaml n.yml sub x.txt" gauntlet inspect ""
for c in $commands; do
        offered=" $(cd "$tmp/files" && bash --norc --noprofile "$tmp/complete.sh" "$comp" gauntlet "$c" --) "
        for o in $(help_options "$c"); do
                [[ $offered == *" $o "* ]] || soft_fail "completing 'gauntlet $c --' does not offer $o"
        done
done

# --- uninstall leaves no file -------------------------------------------------------------
mk uninstall DESTDIR="$root" PREFIX=/usr
left=$(find "$root" ! -type d)
[ -z "$left" ] || soft_fail "make uninstall left: $left"

# --- an install the testbed can be run from: it finds its model there ---------------------
prefix=$tmp/prefix
mk install DESTDIR= PREFIX="$prefix"
v=$("$prefix/bin/gauntlet-testbed" --version) || soft_fail "installed testbed --version exit $?"
[ "$v" = "$("$TESTBED" --version)" ] || soft_fail "installed testbed --version: '$v'"
env -u GAUNTLET_TESTBED_MODEL "$prefix/bin/gauntlet-testbed" --port 0 >"$tmp/tb.log" 2>&1 &
tb=$!
echo "$tb" >"$tmp/pids-testbed"
for _ in $(seq 300); do
        grep -q 'loaded in\|cannot load' "$tmp/tb.log" && break
        kill -0 "$tb" 2>/dev/null || break
        sleep 0.1
done
if ! grep -qF "gauntlet-testbed: loading $prefix/share/gauntlet/model.gguf " "$tmp/tb.log" ||
        ! grep -q "^gauntlet-testbed: model '.*, loaded in [0-9]* ms\$" "$tmp/tb.log"; then
        soft_fail "the installed testbed did not load $prefix/share/gauntlet/model.gguf: $(cat "$tmp/tb.log")"
fi
kill -TERM "$tb" 2>/dev/null || true
wait "$tb" 2>/dev/null || true
GAUNTLET_TESTBED_MODEL=$tmp/none.gguf timeout 30 "$prefix/bin/gauntlet-testbed" --port 0 >"$tmp/tb2.log" 2>&1 &&
        soft_fail "the testbed served without a model"
if ! grep -qF "cannot load model: cannot open '$tmp/none.gguf'" "$tmp/tb2.log"; then
        soft_fail "\$GAUNTLET_TESTBED_MODEL is not what the installed testbed loads: $(cat "$tmp/tb2.log")"
fi
mk uninstall DESTDIR= PREFIX="$prefix"
left=$(find "$prefix" ! -type d)
[ -z "$left" ] || soft_fail "make uninstall left: $left"

finish install
