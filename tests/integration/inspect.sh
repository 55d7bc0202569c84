#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# inspect.sh -- `gauntlet inspect`: verdict lines, JSON, stdin, exit codes, size cap, usage errors.
set -u
G=${GAUNTLET:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$SRCDIR/tests/assert.sh"
expect_rc() { # want, got, what
        [ "$1" = "$2" ] || soft_fail "$3: exit $2, want $1"
}

printf 'OK' >"$tmp/ok.txt"
printf '323\n' >"$tmp/num.txt"
printf '%0.s!' $(seq 1 64) >"$tmp/bang.txt"
printf 'Sure, the answer is 323.\n\n' >"$tmp/loop.txt"
for _ in $(seq 1 40); do printf '\n\n</' >>"$tmp/loop.txt"; done
printf 'MethodInfoyageegebensatunya amatööri' >"$tmp/soup.txt"
: >"$tmp/empty.txt"
printf 'bad \xff\xfe byte' >"$tmp/bad.txt"

# All clean: exit 0, one "FILE: pass" line each.
out=$("$G" inspect "$tmp/ok.txt" "$tmp/num.txt"); rc=$?
expect_rc 0 $rc "clean files"
[ "$out" = "$tmp/ok.txt: pass
$tmp/num.txt: pass" ] || soft_fail "clean output: $out"

# Any flagged: exit 1; verdict, cause and evidence on the line.
out=$("$G" inspect "$tmp/ok.txt" "$tmp/bang.txt" "$tmp/loop.txt" "$tmp/soup.txt" "$tmp/empty.txt" "$tmp/bad.txt"); rc=$?
expect_rc 1 $rc "mixed files"
[ "$(echo "$out" | wc -l)" -eq 6 ] || soft_fail "want 6 lines: $out"
echo "$out" | grep -x "$tmp/ok.txt: pass" >/dev/null || soft_fail "ok line: $out"
echo "$out" | grep "^$tmp/bang.txt: garbage repeat: run of 64 x '!'" >/dev/null || soft_fail "bang line: $out"
echo "$out" | grep "^$tmp/loop.txt: garbage loop: '\\\\n\\\\n</' repeated 40 times" >/dev/null || soft_fail "loop line: $out"
echo "$out" | grep "^$tmp/soup.txt: garbage low-information: soup" >/dev/null || soft_fail "soup line: $out"
echo "$out" | grep "^$tmp/empty.txt: garbage empty: " >/dev/null || soft_fail "empty line: $out"
echo "$out" | grep "^$tmp/bad.txt: garbage invalid-text: .*\\\\xFF" >/dev/null || soft_fail "invalid line: $out"
# Evidence is escaped: the loop line is one line, no raw newline from the file.
[ "$(echo "$out" | grep -c '</')" -eq 1 ] || soft_fail "loop evidence not on one line"

# JSON: one object, null cause and evidence on pass.
json=$("$G" inspect --format json "$tmp/ok.txt" "$tmp/bang.txt"); rc=$?
expect_rc 1 $rc "json"
if command -v jq >/dev/null; then
        [ "$(echo "$json" | jq -r '.files | length')" = 2 ] || soft_fail "json length: $json"
        [ "$(echo "$json" | jq -r '.files[0].verdict')" = pass ] || soft_fail "json pass: $json"
        [ "$(echo "$json" | jq -r '.files[0].cause')" = null ] || soft_fail "json null cause: $json"
        [ "$(echo "$json" | jq -r '.files[0].evidence')" = null ] || soft_fail "json null evidence: $json"
        [ "$(echo "$json" | jq -r '.files[1].file')" = "$tmp/bang.txt" ] || soft_fail "json file: $json"
        [ "$(echo "$json" | jq -r '.files[1].verdict')" = garbage ] || soft_fail "json garbage: $json"
        [ "$(echo "$json" | jq -r '.files[1].cause')" = repeat ] || soft_fail "json cause: $json"
        echo "$json" | jq -e '.files[1].evidence | startswith("run of 64")' >/dev/null || soft_fail "json evidence: $json"
else
        python3 -c 'import json,sys; d=json.load(sys.stdin); f=d["files"]; assert len(f)==2 and f[0]["cause"] is None and f[1]["cause"]=="repeat"' <<<"$json" ||
                soft_fail "json: $json"
fi
# Options may come after files, and --format=json works too.
"$G" inspect "$tmp/ok.txt" --format=json | grep '"verdict": *"pass"' >/dev/null || soft_fail "--format= after file"

# stdin: no file, or "-".
out=$(printf 'OK' | "$G" inspect); rc=$?
expect_rc 0 $rc "stdin"
[ "$out" = "-: pass" ] || soft_fail "stdin line: $out"
out=$(printf '++++++++' | "$G" inspect -); rc=$?
expect_rc 1 $rc "stdin dash"
# --finish-reason length lowers the bar for a run that ends the output.
printf 'OK!!!!' >"$tmp/bang4.txt"
"$G" inspect "$tmp/bang4.txt" >/dev/null; expect_rc 0 $? "OK!!!! without finish reason"
"$G" inspect --finish-reason length "$tmp/bang4.txt" >/dev/null; expect_rc 1 $? "OK!!!! with length"
printf '  \n' >"$tmp/blank.txt"
"$G" inspect --finish-reason length "$tmp/blank.txt" | grep "empty: .*finish_reason length" >/dev/null || soft_fail "empty with length"

# Unreadable file: exit 2, the message names it; the other files are still judged.
out=$("$G" inspect "$tmp/ok.txt" "$tmp/missing.txt" 2>"$tmp/err"); rc=$?
expect_rc 2 $rc "missing file"
grep -qx "gauntlet: cannot open '$tmp/missing.txt': No such file or directory" "$tmp/err" || soft_fail "missing message: $(cat "$tmp/err")"
[ "$out" = "$tmp/ok.txt: pass" ] || soft_fail "other files judged: $out"

# Size cap: 16 MiB.
head -c $((16 * 1024 * 1024 + 1)) /dev/zero | tr '\0' 'a' >"$tmp/big.txt"
"$G" inspect "$tmp/big.txt" >/dev/null 2>"$tmp/err"; rc=$?
expect_rc 2 $rc "oversized file"
grep -q "big.txt' is larger than 16 MiB" "$tmp/err" || soft_fail "size message: $(cat "$tmp/err")"

# Usage errors: exit 2 with a hint.
"$G" inspect --bogus 2>"$tmp/err"; expect_rc 2 $? "unknown option"
grep -q "^gauntlet: unknown option '--bogus'" "$tmp/err" || soft_fail "unknown option message: $(cat "$tmp/err")"
grep -q "try 'gauntlet inspect --help'" "$tmp/err" || soft_fail "usage hint"
"$G" inspect --format xml "$tmp/ok.txt" 2>/dev/null; expect_rc 2 $? "bad format"
"$G" inspect --format 2>/dev/null; expect_rc 2 $? "missing format value"
"$G" inspect --help | grep "^usage: gauntlet inspect" >/dev/null || soft_fail "--help"
"$G" inspect --help >/dev/null; expect_rc 0 $? "--help"

# A file name with a newline is escaped on output.
nl_name="$tmp/two
lines.txt"
printf 'OK' >"$nl_name"
out=$("$G" inspect "$nl_name")
[ "$out" = "$tmp/two\\nlines.txt: pass" ] || soft_fail "escaped file name: $out"

# --question: a whole answer of one short word said 6+ times is judged against it.
printf 'ndon ndon ndon ndon ndon ndon ndon ndon' >"$tmp/ndon.txt"
"$G" inspect "$tmp/ndon.txt" >/dev/null; expect_rc 0 $? "ndon x 8 without a question"
out=$("$G" inspect --question 'What is the capital of the UK?' "$tmp/ndon.txt"); rc=$?
expect_rc 1 $rc "ndon x 8, a question that does not ask for it"
echo "$out" | grep "garbage repeat: short unit 'ndon ' (the whole answer; the question names neither" >/dev/null || soft_fail "ndon line: $out"
"$G" inspect "$tmp/ndon.txt" --question 'Say ndon 8 times' >/dev/null; expect_rc 0 $? "ndon x 8 asked for"

# The corpus through the command line, as the unit test does it in-process; a sidecar's
# finish_reason becomes --finish-reason, its question --question.
corpus=${SRCDIR:-.}/tests/corpus
for kind in clean garbage; do
        [ -d "$corpus/$kind" ] || continue
        for f in "$corpus/$kind"/*.txt; do
                m=${f%.txt}.meta
                fr=$( [ -e "$m" ] && sed -n 's/^finish_reason=//p' "$m")
                q=$( [ -e "$m" ] && sed -n 's/^question=//p' "$m")
                "$G" inspect ${fr:+--finish-reason "$fr"} ${q:+--question "$q"} "$f" >/dev/null; rc=$?
                want=0; [ $kind = garbage ] && want=1
                expect_rc $want $rc "corpus $kind/$(basename "$f")"
        done
done

finish inspect
