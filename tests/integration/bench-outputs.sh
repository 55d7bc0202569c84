#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# bench-outputs.sh -- the bench's own answers are looked at (issue #31 item 2): a fixture
# backend that answers every prompt over 200 words with runs of '!' (the golden checks are
# shorter, and it answers them right) is fast and would win on throughput; its bench outputs
# go through the forced detectors, its levels are flagged, and the cell is garbage/repeat
# with the counts and the first excerpt, never best. The honest, slower backend is best with
# every output judged and none flagged; the counts show in the JSON, text, Markdown and
# HTML reports; `gauntlet bench --url` says the verdict and exits 1.
. "$SRCDIR/tests/lib.sh"
command -v jq >/dev/null || fail "jq is needed"

bang='!!!!!!!!!!!!!!!!!!!!!!!! !!!!!!!!!!!!!!!!!!!!!!!! !!!!!!!!!!!!!!!!!!!!!!!! !!!!!!!!!!!!!!!!!!!!!!!!'
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}"]
startup_timeout: 10s
stop_timeout: 2s
axes:
  backend:
    values:
      - {name: honest, args: [--token-delay-ms, "4"]}
      - {name: bang, args: [--answer-past-words, "200=$bang"]}
bench: {concurrency: [1, 4], input_tokens: 300, output_tokens: 16, requests: 8}
# the long-context probe would catch it first (tests/integration/probes.sh): this is the
# bench's own catch
probes: {long_context: false}
YAML
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || true
cat "$tmp/out" >&2
grep -q Sanitizer "$tmp/out" && fail "a sanitizer report in the run"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
q() { jq -r --arg b "$1" ".cells[] | select(.axes.backend == \$b) | $2" "$tmp/r.json"; }
[ "$(q bang '.checks | all(.verdict == "pass")')" = true ] || fail "the bang backend does not pass its checks alone"
[ "$(q bang '"\(.verdict)/\(.cause)"')" = garbage/repeat ] || fail "bang: $(q bang '"\(.verdict)/\(.cause) \(.evidence)"')"
ev=$(q bang .evidence)
[[ "$ev" == "bench at concurrency 1: 8 of 8 outputs flagged (repeat); first: run of 24 x '!' at byte 0"* ]] ||
        fail "bang evidence: $ev"
[ "$(jq -r '.best as $b | .cells[] | select(.id == $b) | .axes.backend' "$tmp/r.json")" = honest ] ||
        fail "best is not the honest backend"
[ "$(q honest '[.bench[].outputs_judged] | add')" = 16 ] || fail "honest: $(q honest '[.bench[].outputs_judged]')"
[ "$(q honest '[.bench[].outputs_flagged] | add')" = 0 ] || fail "honest outputs flagged"
[ "$(q bang '.bench[0].flagged | length')" = 3 ] || fail "bang keeps $(q bang '.bench[0].flagged | length') flagged, not 3"
[ "$(q bang '.bench[0].flagged[0].cause')" = repeat ] || fail "bang's first flagged: $(q bang '.bench[0].flagged[0]')"
"$GAUNTLET" report "$tmp/j.db" >"$tmp/r.txt"
"$GAUNTLET" report --format markdown "$tmp/j.db" >"$tmp/r.md"
"$GAUNTLET" report --format html "$tmp/j.db" >"$tmp/r.html"
hid=$(q honest .id)
grep -q "^$hid: bench outputs: 16 judged, 0 flagged" "$tmp/r.txt" || { cat "$tmp/r.txt"; fail "text: no counts"; }
for f in md html; do
        grep -q "bench outputs: 16 judged, 0 flagged" "$tmp/r.$f" || fail "r.$f: no counts"
        grep -q "8 of 8 outputs flagged (repeat)" "$tmp/r.$f" || fail "r.$f: no flagged evidence"
done

# gauntlet bench --url: the verdict, and exit 1 when flagged
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$FIXTURE" --port "$port" --answer-past-words "200=$bang" --pid-file "$tmp/pids-fx" >"$tmp/fx.log" 2>&1 &
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.05; done
rc=0
"$GAUNTLET" bench --url "http://127.0.0.1:$port" --concurrency 2 --requests 4 --input-tokens 300 \
        --output-tokens 16 --format json >"$tmp/b.json" 2>"$tmp/b.err" || rc=$?
[ "$rc" = 1 ] || fail "bench --url exit $rc with flagged outputs, want 1"
[ "$(jq -r '"\(.verdict)/\(.cause)"' "$tmp/b.json")" = garbage/repeat ] || fail "bench --url verdict: $(jq -c '{verdict, cause}' "$tmp/b.json")"
[ "$(jq '.bench[0].outputs_flagged' "$tmp/b.json")" = 4 ] || fail "bench --url flagged: $(jq '.bench[0].outputs_flagged' "$tmp/b.json")"
grep -q "garbage/repeat: bench at concurrency 2: 4 of 4 outputs flagged" "$tmp/b.err" || { cat "$tmp/b.err"; fail "no message"; }
"$GAUNTLET" bench --url "http://127.0.0.1:$port" --concurrency 1 --requests 3 --input-tokens 20 \
        --output-tokens 8 >"$tmp/b.txt" || fail "bench --url failed on short prompts"
grep -q "^outputs: concurrency 1: 3 judged, 0 flagged" "$tmp/b.txt" || { cat "$tmp/b.txt"; fail "text: no counts"; }
grep -q "^verdict: pass" "$tmp/b.txt" || fail "text: no pass verdict"
echo "bench-outputs.sh: all good"
