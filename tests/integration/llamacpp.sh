#!/usr/bin/env bash
# tier: engine (tests/run engine)
# llamacpp.sh -- gauntlet against a real engine: llama.cpp's llama-server (built from
# ../shared/engines by tools/build-llamacpp.sh, or $LLAMA_SERVER, or on PATH; skipped,
# by name, without one). The expected verdict of every cell is data, in
# tests/engines/llamacpp/*.expect:
#   - the trained testbed model passes the default smoke suite with llama-server's default
#     flags, thinking on and off, with the same answers as gauntlet-testbed;
#   - flags.yaml: flash attention x KV-cache types, crashes diagnosed from the engine's
#     first error line (not a wrapper line, not a backtrace frame), each launched once;
#   - serving.yaml: slots, batch sizes, reasoning formats, benchmarked without a failure,
#     prompts of 16 tokens by the server's count, the smoke suite passing under load;
#   - load.yaml, context.yaml: bench requests the server refuses for their length
#     (overload/context by its words, no best), a bench its context cannot hold
#     (overload/context, refused before it runs);
#   - random.yaml on two random-weight models the testbed writes: real garbage;
#   - the eval: 200 built-in products answered identically by llama-server and the
#     testbed, and eval.yaml: batch sizes compared with the baseline.
. "$SRCDIR/tests/lib.sh"
need_llama_server
echo "llama-server: $LLAMA_SERVER ($("$LLAMA_SERVER" --version 2>&1 | grep -m1 -i version))"
export PATH="$(dirname "$LLAMA_SERVER"):$PATH"
E=$SRCDIR/tests/engines/llamacpp
MODEL=$SRCDIR/testbed/model.gguf
before=$(pgrep -xc llama-server || true)

# --- the smoke suite with default flags, against the testbed's own answers ------------
port_file=$tmp/ls.port
"$LLAMA_SERVER" -m "$MODEL" --host 127.0.0.1 --port 0 -t 2 >"$tmp/ls.log" 2>&1 &
ls_pid=$!
echo "$ls_pid" >"$tmp/pids-ls"
for _ in $(seq 300); do
        url=$(grep -o 'listening on http://[0-9.]*:[0-9]*' "$tmp/ls.log" 2>/dev/null | head -1 | cut -d' ' -f3 || true)
        [ -n "$url" ] && curl -sf "$url/health" >/dev/null 2>&1 && break
        kill -0 "$ls_pid" 2>/dev/null || { cat "$tmp/ls.log"; fail "llama-server died at start"; }
        sleep 0.1
done
[ -n "$url" ] || { tail "$tmp/ls.log"; fail "llama-server did not come up"; }
"$GAUNTLET" smoke --url "$url" --format json >"$tmp/smoke-ls.json" || {
        jq -c '.checks[] | {name, verdict, evidence, output, reasoning}' "$tmp/smoke-ls.json"; fail "smoke against llama-server: not pass"; }
# the eval: 200 built-in products, two at a time (two of the default four slots' shared
# 256-token context)
eval_args=(--eval builtin:products --samples 200 --thinking off --max-tokens 16 --concurrency 2 --format json)
"$GAUNTLET" smoke --url "$url" --engine llama.cpp "${eval_args[@]}" >"$tmp/eval-ls.json" ||
        fail "smoke --eval against llama-server: not pass"
kill "$ls_pid"; wait "$ls_pid" 2>/dev/null || true
"$TESTBED" --port 0 --host 127.0.0.1 >"$tmp/tb.log" 2>&1 &
tb_pid=$!
echo "$tb_pid" >"$tmp/pids-tb"
for _ in $(seq 300); do
        tburl=$(grep -o 'listening on http://[0-9.]*:[0-9]*' "$tmp/tb.log" 2>/dev/null | head -1 | cut -d' ' -f3 || true)
        [ -n "$tburl" ] && break
        sleep 0.1
done
"$GAUNTLET" smoke --url "$tburl" --format json >"$tmp/smoke-tb.json" || fail "smoke against the testbed: not pass"
"$GAUNTLET" smoke --url "$tburl" "${eval_args[@]}" >"$tmp/eval-tb.json" || fail "smoke --eval against the testbed: not pass"
kill "$tb_pid"; wait "$tb_pid" 2>/dev/null || true
# the same model in two engines: every product right, every answer the same
for f in ls tb; do
        echo "eval, $f: $(jq -r '.eval | "\(.correct)/\(.n) right, accuracy \(.accuracy), ci95 \(.ci95), \(.wall_s)s"' "$tmp/eval-$f.json")"
        [ "$(jq -r .eval.correct "$tmp/eval-$f.json")" = 200 ] ||
                fail "eval, $f: $(jq -c '[.eval.answers[] | select(.verdict != "pass")][:3]' "$tmp/eval-$f.json")"
done
diff <(jq -r '.eval.answers[] | "\(.id) \(.output)"' "$tmp/eval-tb.json") \
     <(jq -r '.eval.answers[] | "\(.id) \(.output)"' "$tmp/eval-ls.json") ||
        fail "llama-server and gauntlet-testbed answer the eval differently (testbed <, llama-server >)"
answers() { jq -r '.checks[] | select(.name != "models") | "\(.name) \(.output) | \(.reasoning // "")"' "$1"; }
diff <(answers "$tmp/smoke-tb.json") <(answers "$tmp/smoke-ls.json") ||
        fail "llama-server and gauntlet-testbed answer the smoke suite differently (testbed <, llama-server >)"
grep -q '^math-thinking 323 | 17 \* 19 = ' <(answers "$tmp/smoke-ls.json") ||
        fail "thinking on: no reasoning apart from the answer: $(answers "$tmp/smoke-ls.json" | grep math-thinking)"

# --- sweeps, each cell against its rule -------------------------------------------------
check_expect() { # report.json expect-file
        local axes verdict cause evidence rule raxes rverdict rcause rfrag found n=0
        while IFS=$'\t' read -r axes verdict cause evidence; do
                n=$((n + 1))
                found=
                while read -r raxes rverdict rcause rfrag; do
                        case "$raxes" in ''|'#'*) continue ;; esac
                        if matches "$axes" "$raxes"; then found=1; break; fi
                done <"$2"
                [ -n "$found" ] || fail "$(basename "$2"): no rule for cell $axes"
                [ "$verdict $cause" = "$rverdict $rcause" ] ||
                        fail "$(basename "$2"): $axes: got '$verdict $cause' ($evidence), want '$rverdict $rcause'"
                [ -z "$rfrag" ] || [ "$rfrag" = - ] || [[ "$evidence" == *"$rfrag"* ]] ||
                        fail "$(basename "$2"): $axes: evidence '$evidence' lacks '$rfrag'"
                echo "  $axes: $verdict/$cause ${evidence:0:100}"
        done < <(cells "$1")
        [ "$n" -gt 0 ] || fail "$(basename "$2"): the report has no cells"
}
sweep() { # name matrix-yaml model expect-file
        sed "s|@MODEL@|$3|" "$2" >"$tmp/$1.yaml"
        set +e
        "$GAUNTLET" run "$tmp/$1.yaml" --journal "$tmp/$1.db" >"$tmp/$1.out" 2>&1
        local rc=$?
        set -e
        [ "$rc" -le 1 ] || { cat "$tmp/$1.out"; fail "$1: gauntlet run exit $rc"; }
        expect_launched_once "$1" "$tmp/$1.out" "$tmp/$1"
        "$GAUNTLET" report --format json "$tmp/$1.db" >"$tmp/$1.json"
        echo "$1:"
        check_expect "$tmp/$1.json" "$4"
}
sweep flags "$E/flags.yaml" "$MODEL" "$E/flags.expect"
sweep serving "$E/serving.yaml" "$MODEL" "$E/serving.expect"
# every passing cell was benchmarked, and no request failed
jq -e '[.cells[] | select(.verdict == "pass") | .bench[] | select(.completed == .requests and .failed == 0 and
        .output_tokens_per_s > 0)] | length == 12' "$tmp/serving.json" >/dev/null ||
        fail "serving: a bench level had failures: $(jq -c '[.cells[] | .bench[] | {concurrency, requests, completed, failed, errors}]' "$tmp/serving.json")"
# the prompts were sized by the model's tokenizer (the GGUF of model:, read by gauntlet): 16
# tokens each as the server counts them, the chat template's on top (usage.prompt_tokens
# counts both)
jq -e '[.cells[] | select(.verdict == "pass") | .bench[] | select(.prompt_calibration.method != "tokenizer"
        or .prompt_tokens_per_request.min - .prompt_calibration.template_tokens != 16
        or .prompt_tokens_per_request.max - .prompt_calibration.template_tokens != 16)] | length == 0' \
        "$tmp/serving.json" >/dev/null ||
        fail "serving: prompts not of 16 tokens: $(jq -c '[.cells[] | .bench[]? | {prompt_tokens_per_request, prompt_calibration}]' "$tmp/serving.json")"
# the output was counted by the model's tokenizer, and llama-server's usage agrees with the
# count at every level, whatever the reasoning format (docs/metrics.md "Output tokens": its
# usage holds the <think> tags the parser takes out of the stream, within the slack)
jq -e '[.cells[] | select(.verdict == "pass") | .bench[] | select(.usage_check.method != "tokenizer"
        or .usage_check.tokenized != .completed or .usage_check.requests != .completed
        or .usage_check.disagreeing != 0)] | length == 0' "$tmp/serving.json" >/dev/null ||
        fail "serving: usage against the count: $(jq -c '[.cells[] | .bench[]? | {concurrency, usage_check}]' "$tmp/serving.json")"
echo "serving: usage against gauntlet's count: $(jq -c '[.cells[] | select(.verdict == "pass") | .axes.reasoning as $r
        | .bench[] | "\($r)@\(.concurrency): \(.usage_check.usage_tokens)/\(.usage_check.counted_tokens)"] | unique' "$tmp/serving.json")"
# the smoke suite was asked under load at every level, and passed there
jq -e '[.cells[] | select(.verdict == "pass") | .bench[] | (.checks_under_load | length) as $n
        | select($n != 6 or ([.checks_under_load[] | select(.verdict != "pass")] | length) > 0)] | length == 0' \
        "$tmp/serving.json" >/dev/null ||
        fail "serving: checks under load: $(jq -c '[.cells[] | .bench[]? | .checks_under_load]' "$tmp/serving.json")"
best=$(jq -r .best "$tmp/serving.json")
[ "$(jq -r --arg b "$best" '.cells[] | select(.id == $b) | .verdict' "$tmp/serving.json")" = pass ] ||
        fail "serving: best '$best' is not a passing cell"
# bench requests the server refuses: overload, no best; a bench the context cannot hold:
# refused before it runs
sweep load "$E/load.yaml" "$MODEL" "$E/load.expect"
[ "$(jq -r .best "$tmp/load.json")" = null ] || fail "load: a best among cells whose bench failed"
[ "$(grep -c 'overload/context' "$tmp/load.out")" = 2 ] || { cat "$tmp/load.out"; fail "load: not one line per cell"; }
sweep context "$E/context.yaml" "$MODEL" "$E/context.expect"
[ "$(jq '[.cells[] | select(.bench != null)] | length' "$tmp/context.json")" = 0 ] || fail "context: the bench ran"
"$TESTBED" --write-random-model "$tmp/seed1.gguf" --random-seed 1
"$TESTBED" --write-random-model "$tmp/zero.gguf" --random-scale 0
sweep random-seed1 "$E/random.yaml" "$tmp/seed1.gguf" "$E/random-seed1.expect"
sweep random-zero "$E/random.yaml" "$tmp/zero.gguf" "$E/random-zero.expect"

# nothing of any cell is left running
for _ in $(seq 50); do [ "$(pgrep -xc llama-server || true)" -le "$before" ] && break; sleep 0.1; done
[ "$(pgrep -xc llama-server || true)" -le "$before" ] || fail "llama-server processes left: $(pgrep -xa llama-server)"
echo "llamacpp.sh: all good"
