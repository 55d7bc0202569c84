#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# search-once-more.sh -- once more before believing (docs/search.md): the fastest cell of a
# search's space meets NCCL's watchdog on its first launch (a line that names no value of the
# matrix) and serves on its next, as a host's passing fault does; every value and pair of it
# serves in other cells. The search launches it once more, says so on the progress line and
# in the report, and names it; no other cell is launched a second time after a failure.
. "$SRCDIR/tests/lib.sh"
command -v jq >/dev/null || fail "jq is needed"
# the server: its cell from the environment, its launches counted; the tokens' delay by
# value (attn fa3 and kv fp8 and seqs s128 the fastest of each axis)
cat >"$tmp/server.sh" <<EOF2
#!/bin/sh
cell="\$ATTN-\$KV-\$SEQS"
n=\$(( \$(cat "$tmp/n-\$cell" 2>/dev/null || echo 0) + 1 ))
echo "\$n" >"$tmp/n-\$cell"
d=\$(( \$ATTN_MS - \$KV_MS - \$SEQS_MS ))
if [ "\$cell" = fa3-fp8-s128 ] && [ "\$n" -eq 1 ]; then
        echo "[TP0] Capture cuda graph begin."
        echo "[rank1]:[E1206 05:17:23.016938 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=11, OpType=ALLREDUCE, NumelIn=8, Timeout(ms)=600000) ran for 600089 milliseconds before timing out."
        exit 1
fi
exec "$FIXTURE" "\$@" --token-delay-ms "\$d"
EOF2
chmod +x "$tmp/server.sh"
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$tmp/server.sh, --port, "{port}", --pid-file, "$tmp/pids-{port}", --load-time, "0.2"]
startup_timeout: 10s
stop_timeout: 2s
probes: false
axes:
  attn:
    values:
      - {name: triton, env: {ATTN: triton, ATTN_MS: "16"}}
      - {name: fi, env: {ATTN: fi, ATTN_MS: "12"}}
      - {name: fa3, env: {ATTN: fa3, ATTN_MS: "8"}}
  kv:
    values:
      - {name: auto, env: {KV: auto, KV_MS: "0"}}
      - {name: fp8, env: {KV: fp8, KV_MS: "2"}}
  seqs:
    values:
      - {name: s64, env: {SEQS: s64, SEQS_MS: "0"}}
      - {name: s128, env: {SEQS: s128, SEQS_MS: "2"}}
      - {name: s256, env: {SEQS: s256, SEQS_MS: "1"}}
strategy: search
checks: default
bench: {concurrency: [1], input_tokens: 16, output_tokens: 24, requests: 3}
emit: []
YAML
rc=0
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/m.db" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "exit $rc: $(cat "$tmp/out")"
grep '^\[launch ' "$tmp/out" >&2
best=$(grep '^\[launch ' "$tmp/out" | grep 'attn=fa3 kv=fp8 seqs=s128' || true)
[ "$(printf '%s\n' "$best" | grep -c .)" = 2 ] || fail "the best launched other than twice: $best"
printf '%s\n' "$best" | head -1 | grep -q 'timeout/hang.*Watchdog caught collective operation timeout' ||
        fail "its first launch: $(printf '%s\n' "$best" | head -1)"
printf '%s\n' "$best" | tail -1 | grep -q '^\[launch [0-9]*, launched again\] attn=fa3 kv=fp8 seqs=s128 *pass' ||
        fail "its second launch: $(printf '%s\n' "$best" | tail -1)"
[ "$(grep -c 'launched again\]' "$tmp/out")" = 1 ] || fail "other cells launched again: $(grep 'launched again' "$tmp/out")"
"$GAUNTLET" report --format json "$tmp/m.db" >"$tmp/r.json"
jq -e '.search.retried == 1' "$tmp/r.json" >/dev/null || fail "search.retried: $(jq -c .search "$tmp/r.json")"
jq -e '[.cells[] | select(.axes == {"attn": "fa3", "kv": "fp8", "seqs": "s128"})][0] | .verdict == "pass" and .launches == 2' \
        "$tmp/r.json" >/dev/null || fail "the best's cell: $(jq -c '[.cells[] | select(.axes.attn == "fa3")]' "$tmp/r.json")"
"$GAUNTLET" report "$tmp/m.db" >"$tmp/r.txt"
grep -q 'launches (.*1 launching a failed cell once more' "$tmp/r.txt" || fail "the text report: $(grep '^search' "$tmp/r.txt")"
grep -q 'attn=fa3 kv=fp8 seqs=s128' <(grep -i 'best' "$tmp/r.txt") || fail "the best named: $(grep -i best "$tmp/r.txt")"
expect_none_alive "fixture servers left"
echo "search-once-more: all good"
