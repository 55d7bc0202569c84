#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# search-signals.sh -- what a dead server's log says, read by the search (docs/search.md,
# "Feasibility" and "When nothing can pass"), on the fixture:
#   - a value whose every cell prints an ImportError and is then killed by SIGKILL (SGLang
#     kills its own tree after a child's exception): a crash like any other, not the OOM
#     killer's, so it is launched at most 3 times (twice, and once beside another partner)
#     and its pruned cells blame it, not memory (before: all 6 of its cells launched);
#   - every cell says "No CUDA GPUs are available" behind vLLM's prefix: the search stops
#     after 2 launches, saying no GPU can be had and what to check, and the evidence is the
#     line without the prefix;
#   - every cell says huggingface_hub's RepositoryNotFoundError: it stops after 2 launches,
#     saying the model cannot be loaded.
. "$SRCDIR/tests/lib.sh"
# matrix FILE COMMAND-ARGS FA3-ARGS: three attention backends x two KV caches x three sizes
# on the fixture, with more arguments for every cell and for attn=fa3's
matrix() {
        cat >"$1" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}", --load-time, "0.2"$2]
startup_timeout: 10s
stop_timeout: 2s
probes: false
axes:
  attn:
    values:
      - {name: triton, args: [--token-delay-ms, "6"]}
      - {name: fi, args: [--token-delay-ms, "4"]}
      - {name: fa3, args: [--token-delay-ms, "2"$3]}
  kv:
    values:
      - {name: auto, args: []}
      - {name: fp8, args: [--token-delay-ms, "3"]}
  seqs:
    flag: --model
    values: [s64, s128, s256]
strategy: search
checks: default
bench: {concurrency: [1], input_tokens: 16, output_tokens: 16, requests: 2}
emit: []
YAML
}
# fa3: the scheduler's ImportError, then SGLang's sigquit, and the tree killed
read -r -d '' fa3 <<'ARGS' || true
, --die-at-load, --die-signal, KILL, --log, "INFO loading weights\nTraceback (most recent call last):\n  File \"/sgl/attn.py\", line 12, in <module>\nImportError: cannot import name 'flash_attn_with_kvcache' from 'sgl_kernel.flash_attn'\nReceived sigquit from a child process. It usually means the child failed."
ARGS
matrix "$tmp/m.yaml" "" "$fa3"
rc=0
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/m.db" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "exit $rc: $(cat "$tmp/out")"
fa3=$(grep '^\[launch ' "$tmp/out" | grep -c 'attn=fa3' || true)
echo "attn=fa3 launched $fa3 times"
grep '^\[launch ' "$tmp/out" | grep 'attn=fa3' | grep -q 'killed by SIGKILL; first error line: ImportError' ||
        fail "no fa3 cell died as scripted: $(cat "$tmp/out")"
[ "$fa3" -le 3 ] || fail "attn=fa3 launched $fa3 times: its SIGKILL after an ImportError was read as memory's"
pruned=$(grep 'attn=fa3 .*skipped/pruned' "$tmp/out" || true)
[ -n "$pruned" ] || fail "no attn=fa3 cell pruned: $(cat "$tmp/out")"
! printf '%s\n' "$pruned" | grep -q '(oom)' || fail "fa3's cells pruned for memory: $pruned"
printf '%s\n' "$pruned" | grep -q 'attn=fa3 is' || fail "fa3's cells pruned for something else: $pruned"
expect_none_alive "fixture servers left"

# --- every cell: no GPU, in vLLM's words; then a model that does not exist ---------------
stops() { # LOG WANT
        local log=$1 want=$2
        matrix "$tmp/n.yaml" ", --die-at-load, --log, \"$log\"" ""
        rm -f "$tmp/n.db"
        rc=0
        "$GAUNTLET" run "$tmp/n.yaml" --journal "$tmp/n.db" >"$tmp/nout" 2>&1 || rc=$?
        [ "$rc" = 1 ] || fail "exit $rc where no cell can pass: $(cat "$tmp/nout")"
        [ "$(grep -c '^\[launch ' "$tmp/nout")" = 2 ] || fail "not 2 launches: $(cat "$tmp/nout")"
        grep -q "^search: stopped after 2 launches: $want" "$tmp/nout" || fail "the stop line: $(grep '^search' "$tmp/nout")"
        expect_none_alive "fixture servers left"
}
stops '(EngineCore_DP0 pid=4242) ERROR 12-05 19:41:05 [core.py:708] RuntimeError: No CUDA GPUs are available' \
        "no GPU can be had: 2 of 2 launched cells answered crash/driver and none served (cell [0-9a-f]*: \"RuntimeError: No CUDA GPUs are available\").*check the host's GPUs and driver"
stops "(APIServer pid=7) huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error. (Request ID: Root=1-6933)" \
        "the model cannot be loaded: .*RepositoryNotFoundError.*fix the model's path"
