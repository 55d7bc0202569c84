#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# search-lines.sh -- the search reads the forms in which engines' crash lines quote a value
# (docs/search.md, "How evidence is read"), on the fixture server: a 6 x 3 x 3 space whose
# dying values print lines seen in the field, none of them quoting the cell's value beside its
# flag (`--flag value`):
#   - attn=fa3:        another value to use instead, with the flag (SGLang's "FlashAttention
#                      v3 Backend requires SM>=80 and SM<=90. Please use
#                      `--attention-backend flashinfer`.")
#   - attn=flashinfer: a list of what works that leaves it out (SGLang)
#   - attn=trtllm_mha: its name written as words, "TRTLLM MHA backend" (SGLang)
#   - attn=FLASH_ATTN: a Python enum's member, AttentionBackendEnum.FLASH_ATTN (vLLM)
#   - kv=fp8_e4m3:     "FP8 E4M3 KV cache", beside kv=fp8, which serves
# With budget: {launches: 12}: no such value is launched after its line, nor in more than
# two cells in all; the fastest cell (attn=fa4) is named best; the pruned cells blamed on a
# line quote it, the list's say that it leaves the value out.
. "$SRCDIR/tests/lib.sh"
die() { # the args of a value that crashes at load with line $1
        printf '[--die-at-load, --log, "%s"]' "$1"
}
fa3_line='AssertionError: FlashAttention v3 Backend requires SM>=80 and SM<=90. Please use `--attention-backend flashinfer`.'
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --launch-log, "$tmp/launches"]
startup_timeout: 10s
stop_timeout: 2s
axes:
  attn:
    flag: --attention-backend
    values:
      - {name: triton, args: [--token-delay-ms, "20"]}
      - {name: fa3, args: $(die "$fa3_line")}
      - {name: flashinfer, args: $(die "ValueError: Only {'trtllm_mha', 'triton', 'fa4'} backends are supported on Blackwell GPUs for hybrid GDN models")}
      - {name: trtllm_mha, args: $(die "RuntimeError: TRTLLM MHA backend for prefill is only supported on Blackwell GPUs (SM100)")}
      - {name: FLASH_ATTN, args: $(die "ValueError: Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for this configuration. Reason: ['compute capability not supported']")}
      - {name: fa4, args: [--token-delay-ms, "5"]}
  kv:
    flag: --kv-cache-dtype
    values:
      - {name: auto}
      - {name: fp8, env: {KV_DTYPE: fp8}}
      - {name: fp8_e4m3, args: $(die "NotImplementedError: FP8 E4M3 KV cache is not supported on this device")}
  x:
    flag: --model
    values: [m1, m2, m3]
strategy: search
budget: {launches: 12}
checks: default
bench: {concurrency: [1], input_tokens: 8, output_tokens: 16, requests: 2}
objective: output_tokens_per_s@1
emit: []
YAML
run_search_report
n=$(launch_count "$tmp/launches")
[ "$n" -le 12 ] || fail "$n launches, the budget is 12"
# the launches in order, as "attn=... kv=... x=..." and the first words of their line
order=$(grep -E '^\[launch' "$tmp/out")
for av in attn=fa3 attn=flashinfer attn=trtllm_mha attn=FLASH_ATTN kv=fp8_e4m3; do
        held=$(printf '%s\n' "$order" | grep -c -- "$av " || true)
        axis=${av%%=*} value=${av#*=}
        failed=$(jq --arg a "$axis" --arg v "$value" \
                '[.cells[] | select(.axes[$a] == $v and .verdict != "skipped")] | length' "$tmp/r.json")
        echo "$av: launched in $held cells ($failed in the report)"
        [ "$held" = "$failed" ] || fail "$av: $held launches in the progress lines, $failed in the report"
        [ "$held" -le 2 ] || fail "$av: launched in $held cells, its line names it (at most 2)"
        # never launched after its line: the first launch whose line is that value's
        case $value in
        fa3) text="FlashAttention v3 Backend" ;;
        flashinfer) text="Only {'trtllm_mha'" ;;
        trtllm_mha) text="TRTLLM MHA backend" ;;
        FLASH_ATTN) text="AttentionBackendEnum.FLASH_ATTN" ;;
        fp8_e4m3) text="FP8 E4M3 KV cache" ;;
        esac
        at=$(printf '%s\n' "$order" | awk -v w="$text" 'index($0, w) {print NR; exit}')
        after=$(printf '%s\n' "$order" | awk -v at="${at:-0}" -v p="$av " 'at && NR > at && index($0, p) {n++} END {print n + 0}')
        echo "  its line at launch ${at:-never}, $after launches after it"
        [ -n "$at" ] || fail "$av: no launch crashed with its line"
        [ "$after" -eq 0 ] || fail "$av: launched $after times after its line"
done
best=$(jq -r .best "$tmp/r.json")
[ "$(jq -r --arg b "$best" '.cells[] | select(.id == $b) | .axes.attn' "$tmp/r.json")" = fa4 ] ||
        fail "best: $(jq -c --arg b "$best" '.cells[] | select(.id == $b) | .axes' "$tmp/r.json")"
# the pruned cells that hold a condemned value say why, quoting the line
why() { # axis value
        jq -r --arg a "$1" --arg v "$2" '.cells[] | select(.cause == "pruned" and .axes[$a] == $v) | .evidence' "$tmp/r.json"
}
why attn flashinfer | grep -q "attn=flashinfer is left out of the values that work by the line of cell .*Only {'trtllm_mha', 'triton', 'fa4'}" ||
        fail "the pruned flashinfer cells: $(why attn flashinfer | head -2)"
why attn fa3 | grep -q "attn=fa3 is left out of the values that work by the line of cell .*Please use .--attention-backend flashinfer" ||
        fail "the pruned fa3 cells: $(why attn fa3 | head -2)"
why attn trtllm_mha | grep -q 'attn=trtllm_mha is named by the line of cell .*TRTLLM MHA backend' ||
        fail "the pruned trtllm_mha cells: $(why attn trtllm_mha | head -2)"
why attn FLASH_ATTN | grep -q 'attn=FLASH_ATTN is named by the line of cell .*AttentionBackendEnum.FLASH_ATTN' ||
        fail "the pruned FLASH_ATTN cells: $(why attn FLASH_ATTN | head -2)"
why kv fp8_e4m3 | grep -q 'kv=fp8_e4m3 is named by the line of cell .*FP8 E4M3 KV cache' ||
        fail "the pruned fp8_e4m3 cells: $(why kv fp8_e4m3 | head -2)"
# kv=fp8, which serves, is not blamed for its namesake's line
why kv fp8 | grep 'kv=fp8 is' && fail "kv=fp8 blamed: $(why kv fp8 | grep 'kv=fp8 is' | head -1)"
echo "$n launches; best attn=fa4; each value a line names or leaves out launched at most twice"
