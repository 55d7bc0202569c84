#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# log-colours.sh -- a server that writes its log with colours (llama-server --log-colors on,
# FORCE_COLOR, a logger that colours whatever its output; tests/logs/
# llamacpp-kcache-q8-fa-colours.log is the real engine's) is diagnosed as the same log
# without them: the cause from its signature, evidence without the terminal's escapes (in
# the journal, the JSON and the HTML report), and the HTML excerpt marks the evidence's line
# and shows no escape either (the command line shows the matrix's args as written).
. "$SRCDIR/tests/lib.sh"
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids-{port}"]
startup_timeout: 5s
stop_timeout: 1s
axes:
  b:
    values:
      - {name: good}
      - name: dies
        args: [--die-at-load,
               --log, "\e[34m0.00.001.000\e[0m \e[32mI \e[0mloading model",
               --log, "\e[34m0.00.002.000\e[0m \e[1;31mE RuntimeError: CUDA error: \e[1mno kernel image\e[22m is available for execution on the device",
               --log, "\e[0m\e]0;llama-server\a\e[34m0.00.003.000\e[0m \e[31mE exiting\e[0m"]
YAML
set +e
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>"$tmp/err"
set -e
expect_none_alive "processes left"
grep -q $'\e\\[31m' "$SRCDIR/tests/logs/llamacpp-kcache-q8-fa-colours.log" || fail "the real log lost its colours"
log=$(sqlite3 "$tmp/j.db" "SELECT log_path FROM attempts WHERE verdict = 'crash'")
case "$log" in /*) ;; *) log=$tmp/$log ;; esac
grep -q $'\e\\[' "$log" || fail "the fixture wrote no colours: the test tests nothing"
want='E RuntimeError: CUDA error: no kernel image is available for execution on the device'
got=$(sqlite3 "$tmp/j.db" "SELECT verdict || '/' || cause || ' ' || evidence FROM attempts WHERE verdict != 'pass'")
[ "$got" = "crash/arch $want" ] || fail "journaled: $got"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
[ "$(jq -r '.cells[] | select(.axes.b == "dies") | .evidence' "$tmp/r.json")" = "$want" ] ||
        fail "JSON evidence: $(jq -r '.cells[] | select(.axes.b == "dies") | .evidence' "$tmp/r.json")"
"$GAUNTLET" report --format html "$tmp/j.db" >"$tmp/r.html"
grep -q 'around line [0-9]* (the evidence, marked)' "$tmp/r.html" ||
        fail "no excerpt around the evidence: $(grep -o 'Log <code>[^<]*</code>[^<]*' "$tmp/r.html")"
# the excerpt (the command line above it shows the matrix's args as written, escapes and all)
awk '/<pre class="log">/ {on = 1} on {print} on && /<\/pre>/ {exit}' "$tmp/r.html" >"$tmp/excerpt"
grep -qF 'E RuntimeError: CUDA error: no kernel image is available for execution on the device</mark>' "$tmp/excerpt" ||
        fail "the marked line: $(grep mark "$tmp/excerpt")"
! grep -qE '\\x1[bB]|\\u001[bB]|\\x07|\[[0-9;]*m|\]0;' "$tmp/excerpt" || fail "the excerpt shows the terminal's escapes: $(cat "$tmp/excerpt")"
echo "log-colours.sh: all good"
