#!/usr/bin/env bash
# bench-count.sh -- issue #32's counting attacks: the token count must not depend on how a
# server chunks its stream or what its own /tokenize says. A stand-in llama-server
# (tests/standin/fieldsrv.py behind a `llama-server` on PATH: words are its tokens, it has a
# /tokenize, no tokenizer file gauntlet could read) in four cells:
#   chunk8   8 tokens per SSE chunk (SGLang's --stream-interval 8), 1.0 ms a token: the fastest
#   chars    every character its own chunk, 2.0 ms a token
#   liar     its /tokenize says 10 tokens per word, 2.0 ms a token
#   plain    one token per chunk, honest, 2.0 ms a token
# Counted by chunks, chars wins (~6 chunks a token); counted by the cell's own /tokenize,
# liar wins. The truly fastest, chunk8, must be named best, each cell's figure must be its
# usage (the truth here) within a few percent, and the report must say which cells' own
# counts disagreed and how the figures were counted.
. "$SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 is missing"; exit 77; }

mkdir -p "$tmp/bin"
cat >"$tmp/bin/llama-server" <<SH
#!/bin/sh
# a llama-server in name only: the stand-in, with llama.cpp's flags mapped onto its own
[ "\$1" = --version ] && { echo "version: 1 (standin)"; exit 0; }
port=
while [ \$# -gt 0 ]; do
        case "\$1" in
        -m|--host) shift 2 ;;
        --port) port=\$2; shift 2 ;;
        *) break ;;
        esac
done
echo "main: server is listening on http://127.0.0.1:\$port - starting the main loop"
exec python3 "$SRCDIR/tests/standin/fieldsrv.py" --port "\$port" "\$@"
SH
chmod +x "$tmp/bin/llama-server"
export PATH="$tmp/bin:$PATH"

cat >"$tmp/m.yaml" <<YAML
engine: llama.cpp
model: $tmp/no-such-model.gguf
startup_timeout: 20s
request_timeout: 30s
stop_timeout: 5s
checks:
  - {name: ok, prompt: "Reply with exactly: OK", expect: {equals: OK}}
probes: {long_context: false, sampling: false, multi_turn: false}
axes:
  stream:
    flag: --stream
    values:
      - {name: chunk8, args: [--tokens-per-chunk, "8", --token-delay-ms, "1.0"]}
      - {name: chars, args: [--chunk-chars, --token-delay-ms, "2.0"]}
      - {name: liar, args: [--tokenize-scale, "10", --token-delay-ms, "2.0"]}
      - {name: plain, args: [--token-delay-ms, "2.0"]}
bench: {concurrency: [1], input_tokens: 64, output_tokens: 64, requests: 8, warmup: 1}
objective: output_tokens_per_s@1
YAML
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || true
cat "$tmp/out"
[ -n "${KEEP_JSON:-}" ] && cp "$tmp/j.db" "$KEEP_JSON"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json" || fail "report failed"
cell() { jq -r --arg s "$1" ".cells[] | select(.axes.stream == \$s) | $2" "$tmp/r.json"; }
for s in chunk8 chars liar plain; do
        [ "$(cell $s .verdict)" = pass ] || fail "cell $s: $(cell $s '"\(.verdict) \(.cause) \(.evidence)"')"
        echo "$s: $(cell $s '.levels[0] | "\(.output_tokens_per_s) tok/s, counted \(.output_tokens) usage \(.usage_check.usage_tokens)"')"
done
best=$(jq -r .best "$tmp/r.json")
[ "$best" = "$(cell chunk8 .id)" ] || fail "best is $best, not chunk8 (the truly fastest)"
echo ok
