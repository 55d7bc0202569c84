#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# unexplained-exit.sh -- a server that exits with a status and no line of its log says why
# is launched once more: the real llama-server loses the tail of its log so now and then
# (tests/logs/llamacpp-kcache-q8-fa-lost-tail.log, docs/supervisor.md), the reason with it.
# The second launch's verdict stands, whatever it is; the first is abandoned in the
# journal with why, and keeps its log. A crash whose log says why, or that a signal ended,
# is launched once.
. "$SRCDIR/tests/lib.sh"
command -v sqlite3 >/dev/null || fail "sqlite3 is needed"
lost=$SRCDIR/tests/logs/llamacpp-kcache-q8-fa-lost-tail.log
[ -f "$lost" ] || fail "no $lost"

# The server: counts its launches (per MODE), then
#   once    the lost tail and exit 1 at its first launch; the fixture server after
#   always  the lost tail and exit 1 at every launch
#   reason  the lost tail, an error line, exit 1
#   signal  the lost tail, then SIGSEGV
cat >"$tmp/server.sh" <<EOF
#!/bin/sh
n=\$(( \$(cat "$tmp/launches-\$MODE" 2>/dev/null || echo 0) + 1 ))
echo "\$n" >"$tmp/launches-\$MODE"
lost() { grep -v '^# ' "$lost"; }
case "\$MODE" in
once) [ "\$n" -gt 1 ] || { lost; exit 1; } ;;
always) lost; exit 1 ;;
reason) lost; echo "error: K cache type q8_0 with block size 32 does not divide n_embd_head_k=40"; exit 1 ;;
signal) lost; kill -SEGV \$\$ ;;
esac
exec "$FIXTURE" "\$@"
EOF
chmod +x "$tmp/server.sh"
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$tmp/server.sh, --port, "{port}", --pid-file, "$tmp/pids-{port}"]
axes:
  mode:
    values: [{name: once, env: {MODE: once}}, {name: always, env: {MODE: always}},
             {name: reason, env: {MODE: reason}}, {name: signal, env: {MODE: signal}}]
startup_timeout: 10s
stop_timeout: 1s
YAML
status=0
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>"$tmp/err" || status=$?
cat "$tmp/out" "$tmp/err" >&2
[ "$status" -eq 0 ] || fail "exit $status, want 0 (a cell passed)"
expect_none_alive "processes left"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
# each mode: its verdict and cause, and how many times it was launched
while read -r mode verdict cause n; do
        expect_verdict "$tmp/r.json" mode "$mode" "$verdict $cause"
        [ "$(cat "$tmp/launches-$mode")" = "$n" ] || fail "$mode: $(cat "$tmp/launches-$mode") launches, want $n"
done <<'MODES'
once pass - 2
always crash exit 2
reason crash exit 1
signal crash signal 1
MODES
# the evidence: 'always' the status and the last line both launches had, 'reason' its line
ev() { jq -r --arg v "$1" '.cells[] | select(.axes.mode == $v) | .evidence' "$tmp/r.json"; }
case "$(ev always)" in
"exited with status 1; last log line: "*"load_model: loading model 'testbed/model.gguf'") ;;
*) fail "always: evidence '$(ev always)'" ;;
esac
case "$(ev reason)" in
*"first error line: error: K cache type q8_0"*) ;;
*) fail "reason: evidence '$(ev reason)'" ;;
esac
# the first launches of once and always are abandoned, each with why, and told
why="no line of its log says why it exited (exited with status 1; last log line: % load_model: loading model 'testbed/model.gguf'), and an engine may exit before its log is written out; launched again"
abandoned=$(sqlite3 "$tmp/j.db" "SELECT count(*) FROM attempts WHERE state = 'abandoned' AND abandon_reason LIKE \"$why\"")
[ "$abandoned" -eq 2 ] || { sqlite3 "$tmp/j.db" "SELECT state, abandon_reason FROM attempts" >&2; fail "$abandoned abandoned attempts, want 2"; }
[ "$(sqlite3 "$tmp/j.db" "SELECT count(*) FROM attempts WHERE state = 'abandoned'")" -eq 2 ] || fail "more attempts abandoned than the two"
[ "$(grep -c "no line of its log says why it exited" "$tmp/err")" -eq 2 ] || fail "want 2 notices of a relaunch"
# each launch keeps its log: the first ends where the engine's did, the second is the report's
logs=$(sqlite3 "$tmp/j.db" "SELECT a.log_path FROM attempts a JOIN cells c ON c.id = a.cell_id WHERE c.env LIKE '%MODE=once%' ORDER BY a.id")
[ "$(echo "$logs" | sort -u | wc -l)" -eq 2 ] || fail "the two launches of 'once' share a log: $logs"
first=$(echo "$logs" | head -1)
[ "$(tail -n 1 "$first" | cut -d' ' -f2-)" = "I srv    load_model: loading model 'testbed/model.gguf'" ] ||
        fail "the first log of 'once' does not end where the engine's did: $(tail -n 1 "$first")"
jq -e '.cells[] | select(.axes.mode == "once") | .verdict == "pass"' "$tmp/r.json" >/dev/null
echo "once: pass at launch 2; always: crash/exit after 2 launches; reason, signal: 1 launch each"

# A search's launch budget counts the second launch, and has room for it or not: with
# budget: {launches: 1} the first cell's silent exit stands, with 2 it is launched again.
for budget in 1 2; do
        rm -f "$tmp/launches-always"
        cat >"$tmp/s$budget.yaml" <<YAML
engine: generic
command: [$tmp/server.sh, --port, "{port}", --pid-file, "$tmp/pids-{port}"]
env: {MODE: always}
axes:
  a: {values: [{name: x, env: {A: x}}, {name: y, env: {A: y}}, {name: z, env: {A: z}}]}
strategy: search
budget: {launches: $budget}
startup_timeout: 10s
stop_timeout: 1s
YAML
        "$GAUNTLET" run "$tmp/s$budget.yaml" --journal "$tmp/s$budget.db" >"$tmp/s$budget.out" 2>&1 || true
        n=$(sqlite3 "$tmp/s$budget.db" "SELECT count(*) FROM attempts WHERE state = 'abandoned' OR (state = 'settled' AND verdict != 'skipped')")
        again=$(grep -c "no line of its log says why it exited" "$tmp/s$budget.out" || true)
        echo "search, budget $budget: $n launches, $again launched again"
        [ "$n" -eq "$budget" ] && [ "$(cat "$tmp/launches-always")" -eq "$budget" ] ||
                { cat "$tmp/s$budget.out"; fail "budget $budget: $n launches in the journal, $(cat "$tmp/launches-always") made"; }
        [ "$again" -eq $((budget - 1)) ] || { cat "$tmp/s$budget.out"; fail "budget $budget: $again notices of a relaunch"; }
done
