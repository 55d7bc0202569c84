#!/usr/bin/env bash
# tier: faults (tests/run faults)
# emit-interrupted.sh -- while a sweep runs, the line after each settled cell names the
# best cell so far and its objective figure; a sweep interrupted with SIGINT midway still
# gives, with `gauntlet emit systemd`, a working unit for the best cell that settled: its
# ExecStart, launched by hand, is a server that passes the smoke suite.
set -euo pipefail
# shellcheck source=tests/faults/lib.sh
. "$SRCDIR/tests/faults/lib.sh"
command -v python3 >/dev/null || fail "python3 is needed"
command -v curl >/dev/null || fail "curl is needed"
command -v jq >/dev/null || fail "jq is needed"

# Two fast cells (the second streams faster: the better by the objective), then one that
# loads for a minute: the SIGINT lands while it loads.
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids-{port}", --launch-log, "$tmp/launches"]
startup_timeout: 90s
stop_timeout: 5s
bench: {concurrency: [1], output_tokens: 16, requests: 4}
objective: output_tokens_per_s@1
axes:
  speed:
    values:
      - {name: slow, args: [--token-delay-ms, "20"]}
      - {name: fast, args: [--token-delay-ms, "2"]}
      - {name: stuck, args: [--load-time, "60"]}
YAML
j="$tmp/j.db"
start_gauntlet run run "$tmp/m.yaml" --journal "$j"
for _ in $(seq 600); do
        grep -q '^\[2/3\]' "$tmp/out.run" && [ "$(launch_count "$tmp/launches")" -ge 3 ] && break
        kill -0 "$gpid" 2>/dev/null || { cat "$tmp/out.run" "$tmp/err.run" >&2; fail "the sweep ended before the third cell"; }
        sleep 0.05
done
grep -q '^\[2/3\]' "$tmp/out.run" || fail "two cells did not settle in 30 s"
kill -INT "$gpid"
wait_gauntlet
cat "$tmp/out.run"
[ "$status" -eq 130 ] || { cat "$tmp/err.run" >&2; fail "SIGINT gave status $status, want 130"; }
collect_pids
expect_no_fixture 5 "after the interrupted sweep"

# The line after each cell names the best so far, with its figure: after the first the
# slow cell (the only one), after the second the fast one.
grep -Eq '^\[1/3\] speed=slow +pass .*\[best so far: speed=slow, [0-9.]+ tok/s @1\]$' "$tmp/out.run" ||
        fail "the first line does not name the slow cell as the best so far"
grep -Eq '^\[2/3\] speed=fast +pass .*\[best so far: speed=fast, [0-9.]+ tok/s @1\]$' "$tmp/out.run" ||
        fail "the second line does not name the fast cell as the best so far"
grep -q '^\[3/3\]' "$tmp/out.run" && fail "the interrupted cell got a line"

# The unit: the best of what settled, the same cell the report names.
best=$("$GAUNTLET" report --format json "$j" | jq -r .best)
fast=$("$GAUNTLET" report --format json "$j" | jq -r '.cells[] | select(.axes.speed == "fast") | .id')
[ "$best" = "$fast" ] || fail "the report's best is $best, not the fast cell $fast"
[ "$("$GAUNTLET" report --format json "$j" | jq -r '.cells[] | select(.axes.speed == "stuck") | .state')" = "not run" ] ||
        fail "the interrupted cell is not 'not run'"
"$GAUNTLET" emit systemd "$j" >"$tmp/unit.service" || fail "emit systemd on the interrupted sweep's journal: exit $?"
grep -q "^# Cell $best: speed=fast (the best passing cell)\.$" "$tmp/unit.service" || { cat "$tmp/unit.service"; fail "the unit is not the fast cell's"; }
if command -v systemd-analyze >/dev/null; then
        systemd-analyze verify "$tmp/unit.service" || fail "systemd-analyze verify"
fi

# Launch its ExecStart by hand (on a port free now: the sweep's may be taken since) and
# ask it the smoke suite.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
exec_line=$(sed -n 's/^ExecStart=//p' "$tmp/unit.service")
[ -n "$exec_line" ] || fail "no ExecStart"
python3 - "$exec_line" "$port" "$tmp/argv" <<'PY'
import shlex, sys
argv = shlex.split(sys.argv[1])
i = argv.index("--port")
argv[i + 1] = sys.argv[2]
open(sys.argv[3], "w").write("\0".join(argv))
PY
mapfile -d '' argv <"$tmp/argv"
[ "${argv[0]}" = "$FIXTURE" ] || fail "ExecStart runs '${argv[0]}', not the fixture"
printf '%s\n' "${argv[@]}" | grep -x -- --token-delay-ms >/dev/null || fail "ExecStart lacks the cell's flags"
wd=$(sed -n 's/^WorkingDirectory=//p' "$tmp/unit.service")
(cd "$wd" && exec "${argv[@]}") >"$tmp/unit.log" 2>&1 &
upid=$!
for _ in $(seq 100); do
        curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
        kill -0 "$upid" 2>/dev/null || { cat "$tmp/unit.log" >&2; fail "the unit's server exited"; }
        sleep 0.05
done
"$GAUNTLET" smoke --url "http://127.0.0.1:$port" --format json >"$tmp/smoke.json" ||
        { cat "$tmp/smoke.json" >&2; kill "$upid"; fail "the unit's server did not pass the smoke suite"; }
[ "$(jq -r .verdict "$tmp/smoke.json")" = pass ] || fail "smoke verdict $(jq -r .verdict "$tmp/smoke.json")"
kill "$upid"
wait "$upid" 2>/dev/null || true
echo "emit-interrupted.sh: all good"
