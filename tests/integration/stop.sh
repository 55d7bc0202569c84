#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# stop.sh -- once a server's main process has gone, on SIGTERM or by itself, what it
# leaves behind are stragglers: they get straggler_timeout (default 1 s), not the whole
# stop_timeout, then SIGKILL; nothing is left. Two kinds of straggler:
#   (1) helpers that ignore SIGTERM (SigIgn): the wait ends as soon as only they are left,
#       SIGKILL at once;
#   (2) helpers that catch SIGTERM and run on (a handler that does nothing: SigCgt, so the
#       wait cannot tell they will not exit): they are killed after straggler_timeout (2 s
#       here), neither at once nor after stop_timeout (30 s). This part fails when the
#       straggler grace does not work (the stop then waits the whole stop_timeout).
# (Generous bounds, so a loaded machine cannot make it flake; the figures are in
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
        echo "ignoring helpers, $name: stopped in $((stop_us / 1000)) ms"
done < <(sqlite3 "$tmp/j.db" "SELECT cell_id, stop_us FROM attempts")
[ "$(sqlite3 "$tmp/j.db" "SELECT count(*) FROM attempts WHERE stop_us IS NOT NULL")" -eq 2 ] || fail "not two stops"

# (2) helpers that trap SIGTERM: the straggler grace for real.
rm -f "$tmp"/pids-*
cat >"$tmp/t.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids-{port}", --helpers, "2",
          --helper-trap-sigterm]
startup_timeout: 10s
stop_timeout: 30s
straggler_timeout: 2s
axes:
  how:
    values:
      - {name: serves}
      - {name: dies, args: [--die-after-requests, "1"]}
YAML
"$GAUNTLET" run "$tmp/t.yaml" --journal "$tmp/t.db" >"$tmp/out2" 2>&1 || true
expect_none_alive "trapping stragglers left behind"
[ "$(cat "$tmp"/pids-* | wc -l)" -eq 6 ] || fail "not two servers with two helpers each: $(cat "$tmp"/pids-* | tr '\n' ' ')"
while IFS='|' read -r name stop_us; do
        echo "trapping helpers, $name: stopped in $((stop_us / 1000)) ms (straggler_timeout 2 s, stop_timeout 30 s)"
        [ "$stop_us" -ge 1800000 ] || fail "$name: stopped in $((stop_us / 1000)) ms: helpers that catch SIGTERM were not given the straggler grace"
        [ "$stop_us" -lt 15000000 ] || fail "$name: stopped in $((stop_us / 1000)) ms: the stragglers waited toward stop_timeout, not straggler_timeout"
done < <(sqlite3 "$tmp/t.db" "SELECT cell_id, stop_us FROM attempts")
[ "$(sqlite3 "$tmp/t.db" "SELECT count(*) FROM attempts WHERE stop_us IS NOT NULL")" -eq 2 ] || fail "not two stops (trapping helpers)"
echo "stop.sh: all good"
