#!/usr/bin/env bash
# tier: engine (tests/run engine)
# llamacpp-provenance.sh -- the provenance of a sweep on the real llama-server (skipped, by
# name, without one): the JSON report names the version llama-server --version prints (on
# its stderr: "version: N (commit)"), asked of the very program the sweep started, and the
# model's GGUF hash, the same as the testbed's sweep of the same file finds.
. "$SRCDIR/tests/lib.sh"
need_llama_server
command -v jq >/dev/null || fail "jq is needed"
bindir=$(dirname "$LLAMA_SERVER")
model=${LLAMA_MODEL:-$SRCDIR/testbed/model.gguf}
[ -f "$model" ] || { echo "SKIP: no model ($model)"; exit 77; }
cat >"$tmp/m.yaml" <<YAML
engine: llama.cpp
model: $model
args: [-np, "1", -c, "512"]
startup_timeout: 60s
stop_timeout: 5s
checks:
  - {name: up, prompt: "Reply with exactly: OK", expect: {regex: "."}}
probes: false
YAML
PATH="$bindir:$PATH" "$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "the sweep failed"; }
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/j.json"
want=$("$LLAMA_SERVER" --version 2>&1 | grep -m1 '^version: ') || fail "llama-server --version printed no version line"
p=$(jq -c '.provenance.records[0]' "$tmp/j.json")
[ "$(jq -r .engine.version <<<"$p")" = "$want" ] || fail "engine version: want '$want': $p"
jq -e '.engine.command[0] | endswith("/llama-server")' <<<"$p" >/dev/null || fail "not asked of the program the sweep ran: $p"
jq -e '.model | .kind == "gguf" and (.hash | test("^fnv1a64:[0-9a-f]{16}$"))' <<<"$p" >/dev/null || fail "model: $p"
[ "$(jq -r .model.size <<<"$p")" = "$(stat -Lc %s "$model")" ] || fail "model size: $p"
# the same file through the testbed: the same hash (it is the file's, not the engine's)
cat >"$tmp/t.yaml" <<YAML
engine: testbed
model: $model
args: [--model, $model]
startup_timeout: 30s
checks:
  - {name: up, prompt: "Say something", expect: {regex: "."}}
probes: false
YAML
"$GAUNTLET" run "$tmp/t.yaml" --journal "$tmp/t.db" >"$tmp/t.out" 2>&1 || { cat "$tmp/t.out"; fail "the testbed sweep failed"; }
"$GAUNTLET" report --format json "$tmp/t.db" >"$tmp/t.json"
[ "$(jq -r '.provenance.records[0].model.hash' "$tmp/t.json")" = "$(jq -r .model.hash <<<"$p")" ] || fail "the hashes differ"
"$GAUNTLET" report "$tmp/j.db" | grep -F "provenance: llama.cpp $want; model" >/dev/null || fail "text: no provenance line"
echo "llama-server provenance: $(jq -c '{version: .engine.version, hash: .model.hash, hashed: .model.hashed}' <<<"$p")"
