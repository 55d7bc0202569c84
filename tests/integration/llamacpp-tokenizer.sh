#!/usr/bin/env bash
# tier: engine (tests/run engine)
# llamacpp-tokenizer.sh -- the sweep's tokenizer (src/io/tokenizer.h) against the real
# llama-server's /tokenize on the testbed's model (skipped, by name, without one): for every
# text of a varied set (English, digits, punctuation runs, newlines, UTF-8, special-token
# strings, long filler, the "!!!!" garbage) gauntlet's count of the model's own GGUF equals
# the server's with "add_special": false and "parse_special": false. Prints the table that
# docs/metrics.md "The sweep's tokenizer" shows, with the server's count under its default
# parse_special (true) beside it.
. "$SRCDIR/tests/lib.sh"
need_llama_server
command -v jq >/dev/null || fail "jq is needed"
tokcount="$SRCDIR/$BUILD/bin/gauntlet-tokcount"
[ -x "$tokcount" ] || fail "$tokcount is not built (make $BUILD/bin/gauntlet-tokcount)"

filler=$(for _ in $(seq 200); do printf 'The answer is forty-two, said the machine. '; done)
bangs=$(printf '!%.0s' $(seq 300))
jq -n --arg filler "$filler" --arg bangs "$bangs" '[
  "Hello world",
  "The quick brown fox jumps over the lazy dog.",
  "  two leading spaces, two trailing  ",
  "1234567890 3.14159 2026-08-18 1,000,000",
  "What is 17 * 23? Answer: 391.",
  "!!!!",
  $bangs,
  "?!?!... --- ***",
  "line one\nline two\n\n\nline five\r\n",
  "tabs\tand\tmore\t\t",
  "café naïve résumé",
  "3 × 4 ÷ 2 ≈ 6",
  "你好，世界",
  "emoji 😀🎉👍🏽",
  "<|user|>hi<|end|><|assistant|>",
  "<s>not a bos</s>",
  "don'\''t you'\''re I'\''LL",
  $filler
]' >"$tmp/texts.json"

# compare NAME MODEL: starts llama-server on MODEL, prints the table, counts the texts that differ
# in $bad
compare() {
        local name=$1 model=$2 i text plain special bytes shown
        LLAMA_MODEL=$model start_llama_server "$name" -t 2 -c 4096
        mapfile -t ours < <("$tokcount" "$model" <"$tmp/texts.json" 2>"$tmp/describe" | jq '.[]')
        echo
        echo "$name: $(cat "$tmp/describe")"
        [ "${#ours[@]}" = "$n" ] || fail "gauntlet-tokcount gave ${#ours[@]} counts for $n texts"
        bad=0
        printf '| text | bytes | llama-server (parse_special false) | gauntlet | llama-server (parse_special true) |\n'
        printf '| --- | ---: | ---: | ---: | ---: |\n'
        for i in $(seq 0 $((n - 1))); do
                text=$(jq -c ".[$i]" "$tmp/texts.json")
                plain=$(jq -c "{content: .[$i], add_special: false, parse_special: false}" "$tmp/texts.json" |
                        curl -sf -d @- "$url/tokenize" | jq '.tokens | length') || fail "/tokenize failed on text $i"
                special=$(jq -c "{content: .[$i], add_special: false}" "$tmp/texts.json" |
                        curl -sf -d @- "$url/tokenize" | jq '.tokens | length') || fail "/tokenize failed on text $i"
                bytes=$(jq -j ".[$i]" "$tmp/texts.json" | wc -c)
                shown=$(printf '%s' "$text" | cut -c1-48)
                [ ${#text} -gt 48 ] && shown="$shown…"
                printf '| `%s` | %s | %s | %s | %s |\n' "$shown" "$bytes" "$plain" "${ours[$i]}" "$special"
                [ "$plain" = "${ours[$i]}" ] || { echo "MISMATCH on text $i: server $plain, gauntlet ${ours[$i]}"; bad=$((bad + 1)); }
        done
        kill "$ls_pid"
        wait "$ls_pid" 2>/dev/null || true
}

n=$(jq length "$tmp/texts.json")
compare testbed "$SRCDIR/testbed/model.gguf"
[ "$bad" = 0 ] || fail "gauntlet's count differs from llama-server's on the testbed model"
# the same weights with learnt vocabularies of the same size: merges and pre-tokenizers
python3 "$SRCDIR/tests/helpers/gguf-revocab.py" "$SRCDIR/testbed/model.gguf" "$tmp/spm.gguf" spm
compare spm "$tmp/spm.gguf"
[ "$bad" = 0 ] || fail "gauntlet's count differs from llama-server's with a SentencePiece vocabulary"
for pre in llama-bpe qwen2 gpt-2; do
        python3 "$SRCDIR/tests/helpers/gguf-revocab.py" "$SRCDIR/testbed/model.gguf" "$tmp/bpe-$pre.gguf" bpe "$pre"
        compare "bpe-$pre" "$tmp/bpe-$pre.gguf"
        [ "$bad" = 0 ] || fail "gauntlet's count differs from llama-server's with a BPE vocabulary, pre '$pre'"
done
echo "all $n texts, 5 vocabularies: gauntlet's count equals llama-server's"
