#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# verdicts.sh -- the eval's verdicts are decided by the run and journaled (docs/journal.md
# "The verdicts"): after a sweep with an eval gate, side by side in workers, the verdicts
# table holds exactly the verdicts `report --format json` shows, the gated cell included;
# a resumed sweep journals its own rows; the journaled row wins over the load's decision;
# a sweep without rows (an older journal) is decided on load the same way.
. "$SRCDIR/tests/lib.sh"

fake_gpus "$tmp/gpus.json" 2
export GAUNTLET_FAKE_GPUS="$tmp/gpus.json"
cat >"$tmp/m.yaml" <<YAML
engine: testbed
args: [--threads, "2"]
startup_timeout: 20s
request_timeout: 30s
stop_timeout: 5s
gpus_per_cell: 1
probes: false
axes:
  fault:
    values:
      - {name: none}
      - {name: wrong, args: [--wrong-answers, "3"]}
      - {name: none-too, env: {UNUSED: "1"}}
exclude: [{fault: none-too}]
eval: {builtin: [products], samples: 60}
YAML
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out1" 2>&1 || [ $? -eq 1 ] || { cat "$tmp/out1"; fail "the sweep failed"; }
grep -q "cells side by side" "$tmp/out1" || { cat "$tmp/out1"; fail "the cells did not run side by side"; }

# the verdicts of the latest sweep, by cell: from the journal, and from the report
journaled() {
        sqlite3 "$1" "SELECT a.cell_id || ' ' || v.verdict || ' ' || coalesce(v.cause, '-') FROM verdicts v
                JOIN attempts a ON a.id = v.attempt_id WHERE v.sweep_id = (SELECT max(id) FROM sweeps) ORDER BY a.cell_id"
}
reported() {
        "$GAUNTLET" report --format json "$1" |
                jq -r '.cells[] | select(.state == "settled") | "\(.id) \(.verdict) \(.cause // "-")"' | sort
}
same() { # journal, what
        local j r
        j=$(journaled "$1")
        r=$(reported "$1")
        [ -n "$j" ] || fail "$2: no verdict journaled"
        [ "$j" = "$r" ] || fail "$2: the journal's verdicts differ from the report's:
journal:
$j
report:
$r"
}
same "$tmp/j.db" "after the sweep"
# the gate's verdict is among them, and the excluded cell has no row
[ "$(journaled "$tmp/j.db" | grep -c ' wrong accuracy$')" = 1 ] || fail "the gated cell is not journaled wrong/accuracy"
[ "$(journaled "$tmp/j.db" | grep -c ' pass -$')" = 1 ] || fail "the passing cell is not journaled pass"
[ "$(sqlite3 "$tmp/j.db" 'SELECT count(*) FROM verdicts WHERE sweep_id = (SELECT max(id) FROM sweeps)')" = 2 ] ||
        fail "not one row per settled cell"
# the attempt kept the verdict its phases gave: the gate lives in the verdicts table
[ "$(sqlite3 "$tmp/j.db" "SELECT count(*) FROM attempts WHERE verdict = 'wrong'")" = 0 ] ||
        fail "the gate's verdict was written over the attempt's"

# a resumed sweep (nothing left to run) journals the rows of its own sweep at its start
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out2" 2>&1 || [ $? -eq 1 ] || { cat "$tmp/out2"; fail "the resumed sweep failed"; }
[ "$(sqlite3 "$tmp/j.db" 'SELECT count(DISTINCT sweep_id) FROM verdicts')" -ge 2 ] || fail "the resumed sweep journaled no rows"
same "$tmp/j.db" "after the resumed sweep"

# the journal is the truth: a row that says otherwise is what the report shows
cp "$tmp/j.db" "$tmp/k.db"
sqlite3 "$tmp/k.db" "UPDATE verdicts SET verdict = 'pass', cause = NULL, evidence = NULL WHERE verdict = 'wrong'"
same "$tmp/k.db" "after the row was changed"
[ "$(reported "$tmp/k.db" | grep -c ' pass -$')" = 2 ] || fail "the report did not show the journaled pass"

# no rows (as an older journal, a run killed before it wrote them): decided on load, alike
cp "$tmp/j.db" "$tmp/n.db"
sqlite3 "$tmp/n.db" "DELETE FROM verdicts"
before=$(journaled "$tmp/j.db")
after=$(reported "$tmp/n.db")
[ "$before" = "$after" ] || fail "a journal without rows is decided otherwise on load:
$before
--
$after"
echo "ok"
