#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# provenance.sh -- what a sweep ran with (docs/provenance.md), on the testbed: the engine's
# version as gauntlet-testbed --version prints it, the model's size and hash, the cell's env
# (secrets masked), one record per distinct cell environment; a second sweep after the
# model's metadata and the env changed names each change in every report; an unknown
# version command is unknown with a reason, and the sweep still runs.
. "$SRCDIR/tests/lib.sh"
command -v jq >/dev/null || fail "jq is needed"
cp "$SRCDIR/testbed/model.gguf" "$tmp/model.gguf" 2>/dev/null || "$TESTBED" --write-random-model "$tmp/model.gguf" ||
        fail "cannot write a model"
matrix() { # env-value extra-lines
        cat >"$tmp/m.yaml" <<YAML
engine: testbed
model: $tmp/model.gguf
args: [--model, $tmp/model.gguf]
env: {PROV_A: "$1", HF_TOKEN: "hf_secretvalue"}
${2:-}
startup_timeout: 30s
stop_timeout: 2s
checks:
  - {name: up, prompt: "Say something", expect: {regex: "."}}
probes: false
YAML
}
run() { # name
        "$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/$1.db" >"$tmp/$1.out" 2>&1 || { cat "$tmp/$1.out"; fail "$1: the sweep failed"; }
        "$GAUNTLET" report --format json "$tmp/$1.db" >"$tmp/$1.json"
}
want_version=$("$TESTBED" --version)

# one environment axis of two values: two records, each with its own env
matrix 1 $'axes:\n  mode:\n    values:\n      - {name: x, env: {PROV_B: "x"}}\n      - {name: y, env: {PROV_B: "y"}}'
run j
p=$(jq -c .provenance "$tmp/j.json")
[ "$(jq '.records | length' <<<"$p")" = 2 ] || fail "want two records: $p"
[ "$(jq -r '.records[0].engine.version' <<<"$p")" = "$want_version" ] || fail "engine version: $p"
jq -e '.records[0].model | .kind == "gguf" and (.hash | test("^fnv1a64:[0-9a-f]{16}$")) and .size > 0' <<<"$p" >/dev/null ||
        fail "model: $p"
[ "$(jq -r '.records[0].model.size' <<<"$p")" = "$(stat -c %s "$tmp/model.gguf")" ] || fail "model size: $p"
jq -e '[.records[].env | index("PROV_B=x"), index("PROV_B=y")] | map(select(. != null)) | length == 2' <<<"$p" >/dev/null ||
        fail "each environment's own env: $p"
jq -e '.records[0].env | index("HF_TOKEN=***") != null' <<<"$p" >/dev/null || fail "the token is not masked: $p"
grep -q hf_secretvalue "$tmp/j.json" && fail "the token is in the JSON report"
[ "$(jq '.compared_with' <<<"$p")" = null ] || fail "nothing to compare with yet: $p"
[ "$(sqlite3 "$tmp/j.db" 'SELECT count(*) FROM provenance')" = 2 ] || fail "want two rows in the journal"
hash1=$(jq -r '.records[0].model.hash' <<<"$p")

# the same journal again, the model's metadata changed (a byte of general.name's text: same
# size), the env changed: each is named
matrix 2
run k
off=$(grep -abo 'general.name' "$tmp/model.gguf" | head -1 | cut -d: -f1) || fail "no general.name in the model"
[ -n "$off" ] || fail "no general.name in the model"
# the value follows the key (u64 length, u32 type, u64 length, bytes): change its first byte
voff=$((off + 12 + 4 + 8))
printf '%s' "$(dd if="$tmp/model.gguf" bs=1 skip=$voff count=1 2>/dev/null | tr 'a-zA-Z' 'b-zaB-ZA')" |
        dd of="$tmp/model.gguf" bs=1 seek=$voff conv=notrunc 2>/dev/null
matrix 3
run k
p=$(jq -c .provenance "$tmp/k.json")
jq -e '.compared_with | type == "number"' <<<"$p" >/dev/null || fail "not compared: $p"
jq -e '.changes | any(startswith("model hash changed"))' <<<"$p" >/dev/null || fail "the model's hash change is not named: $p"
jq -e '.changes | any(. == "environment: -PROV_A=2 +PROV_A=3")' <<<"$p" >/dev/null || fail "the env change is not named: $p"
[ "$(jq -r '.records[0].model.hash' <<<"$p")" != "$hash1" ] || fail "the hash did not change"
"$GAUNTLET" report "$tmp/k.db" >"$tmp/k.txt"
grep -q "^provenance: testbed $want_version; model model.gguf" "$tmp/k.txt" || { cat "$tmp/k.txt"; fail "text: no provenance line"; }
grep -q "^provenance changed since sweep [0-9]*: .*model hash changed" "$tmp/k.txt" || fail "text: the change is not named"
"$GAUNTLET" report --format markdown "$tmp/k.db" >"$tmp/k.md"
grep -q "^Provenance changed since sweep" "$tmp/k.md" || fail "markdown: no change line"
"$GAUNTLET" report --format html "$tmp/k.db" >"$tmp/k.html"
grep -q '<p class="hostline" id="provenance"><span class="k">Provenance</span> testbed ' "$tmp/k.html" ||
        fail "html: no provenance in the header"

# a version command that does not exist: unknown, with the reason; the sweep still passes
matrix 1 'version_command: [gauntlet-no-such-program, --version]'
run u
jq -e '.provenance.records[0].engine | .version == null and (.reason | test("gauntlet-no-such-program: not found"))' \
        "$tmp/u.json" >/dev/null || fail "unknown version: $(jq -c .provenance.records[0].engine "$tmp/u.json")"
[ "$(jq -r '.cells[0].verdict' "$tmp/u.json")" = pass ] || fail "the sweep did not pass: $(jq -c .cells[0] "$tmp/u.json")"
echo "provenance: $(jq -c '.provenance.changes' "$tmp/k.json")"
