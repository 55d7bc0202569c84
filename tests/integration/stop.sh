#!/usr/bin/env bash
# stop.sh -- once a server's main process has gone, on SIGTERM or by itself, what it
# leaves behind are stragglers: they get straggler_timeout (default 1 s), not the whole
# stop_timeout, then SIGKILL; nothing is left. (A generous bound, 10 s against a
# stop_timeout of 60 s, so a loaded machine cannot make it flake; the figures are in
# docs/supervisor.md.)
. "$SRCDIR/tests/lib.sh"
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids-{port}", --helpers, "2"]
startup_timeout: 10s
stop_timeout: 60s
axes:
  how:
    values:
      - {name: serves}
      - {name: dies, args: [--die-after-requests, "1"]}
YAML
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || true
expect_none_alive "stragglers left behind"
while IFS='|' read -r name stop_us; do
        [ "$stop_us" -lt 10000000 ] || fail "$name: the stop took $((stop_us / 1000)) ms with SIGTERM-ignoring helpers"
        echo "$name: stopped in $((stop_us / 1000)) ms"
done < <(sqlite3 "$tmp/j.db" "SELECT cell_id, stop_us FROM attempts")
[ "$(sqlite3 "$tmp/j.db" "SELECT count(*) FROM attempts WHERE stop_us IS NOT NULL")" -eq 2 ] || fail "not two stops"
echo "stop.sh: all good"
