#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
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

matrix() { # file, then the stream values in the order to run them
        local f=$1
        shift
        {
                cat <<YAML
engine: llama.cpp
model: $tmp/no-such-model.gguf
startup_timeout: 20s
request_timeout: 30s
stop_timeout: 5s
checks:
  - {name: ok, prompt: "Reply with exactly: OK", expect: {equals: OK}}
probes: {long_context: false, sampling: false, multi_turn: false}
strategy: grid
axes:
  stream:
    flag: --stream
    values:
YAML
                for v in "$@"; do
                        case $v in
                        chunk8) echo '      - {name: chunk8, args: [--tokens-per-chunk, "8", --token-delay-ms, "1.0"]}' ;;
                        chars) echo '      - {name: chars, args: [--chunk-chars, --token-delay-ms, "2.0"]}' ;;
                        liar) echo '      - {name: liar, args: [--tokenize-scale, "10", --token-delay-ms, "2.0"]}' ;;
                        plain) echo '      - {name: plain, args: [--token-delay-ms, "2.0"]}' ;;
                        esac
                done
                echo 'bench: {concurrency: [1], input_tokens: 64, output_tokens: 64, requests: 8, warmup: 1}'
                echo 'objective: output_tokens_per_s@1'
        } >"$f"
}

sweep() { # name, then the order
        local name=$1
        shift
        matrix "$tmp/$name.yaml" "$@"
        "$GAUNTLET" run "$tmp/$name.yaml" --journal "$tmp/$name.db" >"$tmp/$name.out" 2>&1 || true
        cat "$tmp/$name.out"
        "$GAUNTLET" report --format json "$tmp/$name.db" >"$tmp/$name.json" || fail "$name: report failed"
        "$GAUNTLET" report "$tmp/$name.db" >"$tmp/$name.txt" || fail "$name: text report failed"
        local first=$1 s best
        cell() { jq -r --arg s "$1" ".cells[] | select(.axes.stream == \$s) | $2" "$tmp/$name.json"; }
        for s in chunk8 chars liar plain; do
                [ "$(cell $s .verdict)" = pass ] || fail "$name: cell $s: $(cell $s '"\(.verdict) \(.cause) \(.evidence)"')"
                echo "$name $s: $(cell $s '.bench[0] | "\(.output_throughput) tok/s, \(.count.tokens) tokens by \(.count.rule)/\(.count.source), usage \(.usage_check.usage_tokens), \(.count.chunks) chunks"')"
                # the figure counts what usage (the truth of these servers) says, whatever the chunks or /tokenize
                cell $s '.bench[0] | (.count.tokens - .usage_check.usage_tokens) | fabs <= 8' | grep -x true >/dev/null ||
                        fail "$name: cell $s counted $(cell $s '.bench[0].count.tokens') tokens, usage says $(cell $s '.bench[0].usage_check.usage_tokens')"
                # its prompts are the same length as every other cell's (the liar's /tokenize sized nothing)
                cell $s '.bench[0].prompt_tokens_per_request.mean >= 60' | grep -x true >/dev/null ||
                        fail "$name: cell $s's prompts were $(cell $s '.bench[0].prompt_tokens_per_request.mean') tokens, 64 asked"
        done
        # every later cell is sent the first one's prompts (its calibration, not its own)
        for s in chunk8 chars liar plain; do
                [ "$s" = "$first" ] && continue
                [ "$(cell $s '.bench[0].prompt_calibration | "\(.method) \(.chars) \(.from)"')" = \
                  "sweep $(cell "$first" '.bench[0].prompt_calibration.chars') $(cell "$first" .id)" ] ||
                        fail "$name: cell $s's prompts: $(cell $s '.bench[0].prompt_calibration')"
        done
        # the first cell's own counts agreed and set the rule; every other is counted by it
        [ "$(cell "$first" '.bench[0].count | "\(.rule) \(.agreed)"')" = "own true" ] ||
                fail "$name: the first cell ($first): $(cell "$first" '.bench[0].count')"
        for s in chunk8 chars liar plain; do
                [ "$s" = "$first" ] && continue
                [ "$(cell $s '.bench[0].count | "\(.rule) \(.from)"')" = "bytes $(cell "$first" .id)" ] ||
                        fail "$name: cell $s: $(cell $s '.bench[0].count')"
        done
        # what disagreed is said: the chunks of chunk8 and chars, the liar's /tokenize
        cell chars '.bench[0].count.disagree | index("chunks") != null' | grep -x true >/dev/null || fail "$name: chars's chunks not said"
        cell chars '.bench[0].warnings | any(test("tokens per chunk"))' | grep -x true >/dev/null || fail "$name: no chunk warning for chars"
        cell chunk8 '.bench[0].count.disagree | index("chunks") != null' | grep -x true >/dev/null || fail "$name: chunk8's chunks not said"
        if [ "$first" = liar ]; then # its usage and chunks agreed (its /tokenize was caught at
                # calibration): counted by the chunks, the text's count that usage confirmed
                [ "$(cell liar '.bench[0].count | "\(.source) \(.agreed)"')" = "chunks true" ] ||
                        fail "$name: the liar's own count: $(cell liar '.bench[0].count')"
        fi
        if [ "$first" = liar ]; then
                cell liar '.bench[0].prompt_calibration.tokenize_check.agreed' | grep -x false >/dev/null ||
                        fail "$name: the liar's /tokenize was believed for the prompts: $(cell liar '.bench[0].prompt_calibration')"
        fi
        # the truly fastest is named best
        best=$(jq -r .best "$tmp/$name.json")
        [ "$best" = "$(cell chunk8 .id)" ] || fail "$name: best is $best, not chunk8 (the truly fastest)"
        grep -q "counted by" "$tmp/$name.txt" || fail "$name: the text report does not say how tokens were counted"
}

# a tokenizer that cannot be read is refused at once, in one line, by bench and by run
set +e
"$GAUNTLET" bench --url http://127.0.0.1:9 --requests 1 --output-tokens 8 --tokenizer "$tmp/none.gguf" >"$tmp/tb.out" 2>"$tmp/tb.err"
st=$?
set -e
[ "$st" = 2 ] && [ "$(wc -l <"$tmp/tb.err")" = 1 ] && grep -q -- "--tokenizer: .*none.gguf" "$tmp/tb.err" ||
        fail "bench --tokenizer with no file: exit $st, $(cat "$tmp/tb.err")"
matrix "$tmp/bad.yaml" plain
echo "tokenizer: $tmp/none.gguf" >>"$tmp/bad.yaml"
set +e
"$GAUNTLET" run "$tmp/bad.yaml" --journal "$tmp/bad.db" >"$tmp/bad.out" 2>&1
st=$?
set -e
[ "$st" != 0 ] && grep -q "tokenizer: .*none.gguf" "$tmp/bad.out" || fail "run with a tokenizer: that does not load: exit $st, $(cat "$tmp/bad.out")"
grep -q "pass" "$tmp/bad.out" && fail "a cell ran with a tokenizer: that does not load"

sweep honest-first chunk8 chars liar plain
# resumed with one more cell: the rule comes from the journal (chunk8's), not from the new cell
matrix "$tmp/more.yaml" chunk8 chars liar plain
sed -i 's/^      - {name: plain, args: \[--token-delay-ms, "2.0"\]}$/&\n      - {name: chars2, args: [--chunk-chars, --token-delay-ms, "2.5"]}/' "$tmp/more.yaml"
grep -q chars2 "$tmp/more.yaml" || fail "the matrix with one more cell was not made"
"$GAUNTLET" run "$tmp/more.yaml" --journal "$tmp/honest-first.db" >"$tmp/more.out" 2>&1 || { cat "$tmp/more.out"; fail "the resumed sweep failed"; }
grep -q "tokens: counted at .* bytes a token, as cell $(jq -r '.cells[] | select(.axes.stream == "chunk8") | .id' "$tmp/honest-first.json")" \
        "$tmp/more.out" || { cat "$tmp/more.out"; fail "the resumed sweep did not take the journal's rule"; }
"$GAUNTLET" report --format json "$tmp/honest-first.db" >"$tmp/more.json"
[ "$(jq -r '.cells[] | select(.axes.stream == "chars2") | .bench[0].count | "\(.rule) \(.from)"' "$tmp/more.json")" = \
        "bytes $(jq -r '.cells[] | select(.axes.stream == "chunk8") | .id' "$tmp/more.json")" ] ||
        fail "the new cell: $(jq -c '.cells[] | select(.axes.stream == "chars2") | .bench[0].count' "$tmp/more.json")"

# the first cell a liar, then the per-character one: neither sets a wrong rule
sweep liar-first liar chars plain chunk8
echo ok
