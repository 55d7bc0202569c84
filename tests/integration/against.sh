#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# against.sh -- gauntlet run --against OLD (docs/compare.md "Checking the winner again") on
# the testbed, with compare.sh's way of making an "upgrade": a wrapper in place of
# gauntlet-testbed whose behaviour its environment sets.
#   - the matrix: three backends, `reference` three times slower than the other two, so the
#     old winner is one of nvfp4 and nvfp4-swizzled and the other its only close rival;
#   - an unchanged machine: run --against launches at most the winner and its rival (never
#     reference), exits 0 and says the winner is still the best within noise; the emitted
#     unit says so;
#   - an upgrade that breaks the old winner (every answer `+`, pass -> garbage) and says
#     another --version: run --against goes on through the rest and names the other fast
#     backend the new best; `gauntlet emit systemd` of the new journal names the old
#     winner's regression and the version's change;
#   - its errors: the run's own journal, a journal without a passing cell, another matrix's
#     axes, --max-slowdown alone: exit 2, one line.
. "$SRCDIR/tests/lib.sh"
command -v jq >/dev/null || fail "jq is needed"
command -v sqlite3 >/dev/null || fail "sqlite3 is needed"
G=$GAUNTLET
cat >"$tmp/engine" <<EOF
#!/bin/sh
# BROKEN names the backend the "new build" breaks (a context fault from the first token:
# every answer is +++); UPGRADED makes it say another version
case " \$* " in
*" --version "*) [ -n "\${UPGRADED:-}" ] && echo "gauntlet-testbed 0.2.0-upgraded" && exit 0;;
esac
case " \$* " in
*" --moe-backend \${BROKEN:-none} "*) exec "$TESTBED" "\$@" --fault-context 1;;
*" --moe-backend reference "*) exec "$TESTBED" "\$@" --token-delay 180ms;;
esac
exec "$TESTBED" "\$@"
EOF
chmod +x "$tmp/engine"
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$tmp/engine, --host, "{host}", --port, "{port}", --threads, "2", --token-delay, 60ms]
version_command: [$tmp/engine, --version]
startup_timeout: 20s
request_timeout: 30s
stop_timeout: 5s
axes:
  moe:
    flag: --moe-backend
    values: [reference, nvfp4, nvfp4-swizzled]
checks:
  - {name: math, prompt: "What is 17 * 19?", max_tokens: 24, expect: {regex: "323"}}
probes: false
bench: {concurrency: [1], input_tokens: 16, output_tokens: 4, requests: 8}
objective: output_tokens_per_s@1
emit: []
YAML
# launches of the latest sweep of a journal: attempts that settled with a verdict other than skipped
launches() { sqlite3 "$1" "SELECT count(*) FROM attempts WHERE sweep_id = (SELECT max(id) FROM sweeps)
        AND state = 'settled' AND verdict != 'skipped'"; }
launched() { # journal moe -> how many attempts of that backend in the latest sweep
        sqlite3 "$1" "SELECT count(*) FROM attempts a JOIN sweep_cells s ON s.cell_id = a.cell_id AND
                s.sweep_id = a.sweep_id WHERE a.sweep_id = (SELECT max(id) FROM sweeps) AND a.state = 'settled'
                AND json_extract(s.axes, '\$.moe') = '$2'"; }

"$G" run "$tmp/m.yaml" --journal "$tmp/old.db" >"$tmp/old.out" 2>&1 || { cat "$tmp/old.out"; fail "the old sweep failed"; }
[ "$(grep -c ' pass ' "$tmp/old.out")" = 3 ] || { cat "$tmp/old.out"; fail "the old sweep: three passes wanted"; }
win=$(grep -o 'best so far: moe=[a-z0-9-]*' "$tmp/old.out" | tail -1 | sed 's/.*moe=//')
case "$win" in nvfp4 | nvfp4-swizzled) ;; *) cat "$tmp/old.out"; fail "the old winner is '$win', not a fast backend" ;; esac
other=nvfp4; [ "$win" = nvfp4 ] && other=nvfp4-swizzled

# (a) an unchanged machine: the winner and at most its rival, then a stop
rc=0
"$G" run "$tmp/m.yaml" --journal "$tmp/same.db" --against "$tmp/old.db" --max-slowdown 25% >"$tmp/same.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$tmp/same.out"; fail "unchanged: exit $rc"; }
n=$(launches "$tmp/same.db")
grep -q "^against $tmp/old.db: the winner (moe=$win) still passes and is still the best within noise: $n launch\(es\)\?, the rest not run$" \
        "$tmp/same.out" || { cat "$tmp/same.out"; fail "unchanged: no 'still the best' line"; }
[ "$n" -ge 1 ] && [ "$n" -le 2 ] || fail "unchanged: $n launches, the winner and its one rival at most"
[ "$(launched "$tmp/same.db" "$win")" = 1 ] || fail "unchanged: the old winner was not launched once"
[ "$(launched "$tmp/same.db" reference)" = 0 ] || { cat "$tmp/same.out"; fail "unchanged: reference was launched"; }
"$G" emit systemd "$tmp/same.db" >"$tmp/same.service" 2>&1 || { cat "$tmp/same.service"; fail "unchanged: emit"; }
grep -q "^# Checked against journal $tmp/old.db (sweep 1):" "$tmp/same.service" || { cat "$tmp/same.service"; fail "unchanged: no block"; }
grep -q "^#   the old winner moe=$win still passes and is still the best within noise" "$tmp/same.service" ||
        fail "unchanged: the unit does not say the winner stands"

# (b) the upgrade breaks the old winner: the rest runs, the other fast backend is the new best
rc=0
BROKEN=$win UPGRADED=1 "$G" run "$tmp/m.yaml" --journal "$tmp/new.db" --against "$tmp/old.db" --max-slowdown 25% \
        >"$tmp/new.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$tmp/new.out"; fail "upgrade: exit $rc"; }
grep -q "^against $tmp/old.db: the winner (moe=$win) now garbage/.*: running the rest$" "$tmp/new.out" ||
        { cat "$tmp/new.out"; fail "upgrade: no 'running the rest' line"; }
grep -q "^against $tmp/old.db: new best moe=$other (was moe=$win)$" "$tmp/new.out" || { cat "$tmp/new.out"; fail "upgrade: new best"; }
grep -q "^  the old winner: pass -> garbage/[a-z]* \[regression\]$" "$tmp/new.out" || fail "upgrade: the regression line"
grep -q "^  changed: engine version: .*0\.1\.0 -> .*0\.2\.0-upgraded" "$tmp/new.out" || fail "upgrade: the version's change"
[ "$(launches "$tmp/new.db")" = 3 ] || fail "upgrade: $(launches "$tmp/new.db") launches, every cell wanted"
grep -q "still the best" "$tmp/new.out" && fail "upgrade: said the winner stands"
"$G" emit systemd "$tmp/new.db" >"$tmp/new.service" 2>&1 || { cat "$tmp/new.service"; fail "upgrade: emit"; }
grep -q "^# Cell [0-9a-f]*: moe=$other (the best passing cell)" "$tmp/new.service" || { cat "$tmp/new.service"; fail "upgrade: emitted cell"; }
grep -q "^#   winner: moe=$win -> moe=$other\.$" "$tmp/new.service" || { cat "$tmp/new.service"; fail "upgrade: the unit's winner line"; }
grep -q "^#   the old winner's verdict: pass -> garbage/[a-z]* (regression)\.$" "$tmp/new.service" ||
        fail "upgrade: the unit's regression line"
grep -q "^#   changed: engine version: .*0\.2\.0-upgraded" "$tmp/new.service" || fail "upgrade: the unit's provenance line"
"$G" emit script "$tmp/new.db" | grep "^#   winner: moe=$win -> moe=$other\.$" >/dev/null || fail "upgrade: the script's block"
# the reports say it too: text, Markdown and HTML one line, JSON the object as journaled
"$G" report "$tmp/new.db" >"$tmp/new.txt" || fail "upgrade: report"
grep -q "^against: Checked against journal $tmp/old.db (sweep 1): winner: moe=$win -> moe=$other\. the old winner's verdict: pass -> garbage/[a-z]* (regression)\." \
        "$tmp/new.txt" || { cat "$tmp/new.txt"; fail "upgrade: the text report's against line"; }
"$G" report --format json "$tmp/new.db" | jq -e --arg w "moe=$win" --arg o "moe=$other" \
        '.against.old_winner == $w and .against.new_winner == $o and .against.change == "regression" and
         (.against.stopped | not)' >/dev/null || fail "upgrade: the JSON report's against"
"$G" report --format markdown "$tmp/new.db" | grep "^Against: Checked against journal" >/dev/null ||
        fail "upgrade: the Markdown report's against"
"$G" report --format html "$tmp/new.db" | grep '<section id="against">' >/dev/null || fail "upgrade: the HTML report's against"
"$G" report "$tmp/same.db" | grep "^against: .*the old winner moe=$win still passes and is still the best within noise" \
        >/dev/null || fail "unchanged: the text report's against line"
"$G" report --format json "$tmp/old.db" | jq -e '.against == null' >/dev/null || fail "a sweep without --against: .against"

# errors: exit 2, one line
cat >"$tmp/other.yaml" <<YAML
engine: generic
command: [$tmp/engine, --host, "{host}", --port, "{port}"]
axes:
  threads: {flag: --threads, values: ["1"]}
checks:
  - {name: math, prompt: "What is 17 * 19?", max_tokens: 24, expect: {regex: "323"}}
probes: false
bench: {concurrency: [1], input_tokens: 16, output_tokens: 4, requests: 8}
objective: output_tokens_per_s@1
emit: []
YAML
"$G" run "$tmp/other.yaml" --journal "$tmp/other.db" >/dev/null 2>&1 || true
cat >"$tmp/bad.yaml" <<YAML
engine: generic
command: [$TESTBED, --host, "{host}", --port, "{port}", --http-500]
checks:
  - {name: math, prompt: "What is 17 * 19?", max_tokens: 24, expect: {regex: "323"}}
probes: false
emit: []
YAML
"$G" run "$tmp/bad.yaml" --journal "$tmp/fail.db" >/dev/null 2>&1 && fail "a sweep of --http-500 passed"
k=0
for args in "$tmp/m.yaml --journal $tmp/old.db --against $tmp/old.db" \
        "$tmp/m.yaml --journal $tmp/x.db --against $tmp/other.db" \
        "$tmp/bad.yaml --journal $tmp/x.db --against $tmp/fail.db" \
        "$tmp/m.yaml --journal $tmp/x.db --max-slowdown 5%"; do
        rc=0
        # shellcheck disable=SC2086
        "$G" run $args >"$tmp/err.out" 2>"$tmp/err" || rc=$?
        cp "$tmp/err" "$tmp/err-$((++k))"
        [ "$rc" = 2 ] || { cat "$tmp/err"; fail "run $args: exit $rc"; }
        # one line (a usage error's hint to --help aside)
        [ "$(grep -vc "^try 'gauntlet run --help'" "$tmp/err")" = 1 ] || { cat "$tmp/err"; fail "run $args: not one line"; }
done
grep -q "^gauntlet: --max-slowdown goes with --against" "$tmp/err" || { cat "$tmp/err"; fail "the last error's words"; }
for want in "is the run's own journal" "was run with the axes (threads), the matrix has (moe): another matrix" \
        "has no passing cell: no winner to check again"; do
        grep -rq "$want" "$tmp"/err-* || { cat "$tmp"/err-*; fail "no error says '$want'"; }
done
[ ! -e "$tmp/x.db" ] || fail "a refused run made its journal"
echo "against: old winner moe=$win; unchanged: $n launch(es) and a stop; upgrade: new best moe=$other"
