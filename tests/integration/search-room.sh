#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# search-room.sh -- what a line says fits (docs/search.md, "What a line says fits"), on a
# stand-in for vLLM's memory check: a model of 60 GiB and 2 GiB of activations on an 80 GiB
# GPU; the KV cache gets the share (--gpu-memory-utilization) of 80 GiB less those, 128 KiB a
# token in bf16 (auto), 64 KiB in fp8. A --max-model-len the cache cannot hold dies at load
# with vLLM's V1 line, which says the longest that fits ("the estimated maximum model
# length is 16384"). 5 lengths x 4 shares x 2 cache types x 3 attention backends, 120 cells,
# 30 of which run out; the backend sets the speed, and a larger share a little.
# A journal is first given one cell, 131072 tokens at 0.80 with the bf16 cache and
# FlashInfer, which runs out with 16384 tokens fitting; then the search runs on it:
#   - it never launches 32768 or 65536 beside that cell's other values: both are pruned, and
#     their reasons quote the line and its length (the rule of sizes alone says nothing of
#     lengths below the one that ran out);
#   - no cell is launched whose length is past what an earlier launch's line said fits, the
#     other values the same, nor past the sizes of one that ran out (the rule of sizes);
#   - the best is FlashInfer's.
# The same in vLLM V0's words ("the maximum number of tokens that can be stored in KV cache
# (N)"); and with lines that say no length ("No available memory for the cache blocks"),
# where the two cells are not pruned so. Prints the launches out of memory of each, for
# docs/search.md.
. "$SRCDIR/tests/lib.sh"
cat >"$tmp/vllm.sh" <<'SH'
#!/usr/bin/env bash
# a stand-in for vLLM's check that the KV cache holds one request of max_model_len
fixture=$1
shift
len=0 util=0.9 kv=auto attn=FLASH_ATTN words=${ROOM_WORDS:-v1}
args=()
while [ $# -gt 0 ]; do
        case $1 in
        --max-model-len) len=$2; shift 2 ;;
        --gpu-memory-utilization) util=$2; shift 2 ;;
        --kv-cache-dtype) kv=$2; shift 2 ;;
        --attention-backend) attn=$2; shift 2 ;;
        *) args+=("$1"); shift ;;
        esac
done
per=131072
[ "$kv" = fp8 ] && per=65536
read -r room need avail < <(awk -v u="$util" -v per="$per" -v len="$len" 'BEGIN {
        g = 1073741824; avail = u * 80 * g - 62 * g
        room = int(avail / per / 16) * 16
        printf "%d %.2f %.2f\n", room, len * per / g, avail / g }')
case $attn in FLASHINFER) delay=2 ;; FLASH_ATTN) delay=5 ;; *) delay=8 ;; esac
[ "$util" = 0.95 ] && delay=$((delay - 1))
if [ "$len" -gt "$room" ]; then
        case $words in
        v1) line="(EngineCore_DP0 pid=$$) ERROR 12-07 10:00:00 [core.py:708] ValueError: To serve at least one request with the model's max seq len ($len), ($need GiB KV cache is needed, which is larger than the available KV cache memory ($avail GiB). Based on the available memory, the estimated maximum model length is $room. Try increasing \`gpu_memory_utilization\` or decreasing \`max_model_len\` when initializing the engine." ;;
        v0) line="ERROR 12-07 10:00:00 engine.py:400] ValueError: The model's max seq len ($len) is larger than the maximum number of tokens that can be stored in KV cache ($room). Try increasing \`gpu_memory_utilization\` or decreasing \`max_model_len\` when initializing the engine." ;;
        *) line="(EngineCore_DP0 pid=$$) ERROR 12-07 10:00:00 [core.py:708] ValueError: No available memory for the cache blocks. Try increasing \`gpu_memory_utilization\` when initializing the engine." ;;
        esac
        exec "$fixture" "${args[@]}" --load-time 0.2 --die-at-load --exit-code 1 --log "$line"
fi
exec "$fixture" "${args[@]}" --token-delay-ms "$delay"
SH
chmod +x "$tmp/vllm.sh"
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$tmp/vllm.sh, $FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids-{port}"]
startup_timeout: 10s
stop_timeout: 2s
probes: false
axes:
  len:
    flag: --max-model-len
    values: ["8192", "16384", "32768", "65536", "131072"]
  util:
    flag: --gpu-memory-utilization
    values: ["0.80", "0.85", "0.90", "0.95"]
  kv:
    flag: --kv-cache-dtype
    values: [auto, fp8]
  attn:
    flag: --attention-backend
    values: [FLASH_ATTN, FLASHINFER, TRITON_ATTN]
strategy: search
checks: default
bench: {concurrency: [1], output_tokens: 8, requests: 2, warmup: 0}
objective: output_tokens_per_s@1
emit: []
YAML
# the room of each (util, kv), as the stand-in works it out
room_of() { # util kv
        awk -v u="$1" -v per="$([ "$2" = fp8 ] && echo 65536 || echo 131072)" \
                'BEGIN { g = 1073741824; print int((u * 80 * g - 62 * g) / per / 16) * 16 }'
}
# run NAME WORDS: the journal NAME.db given the one cell, then the search on it, with lines
# in WORDS (v1, v0, none); sets $order, $oom_launches (the search's)
seed_only='exclude: [{len: "8192"}, {len: "16384"}, {len: "32768"}, {len: "65536"}, {util: "0.85"}, {util: "0.90"}, {util: "0.95"}, {kv: fp8}, {attn: FLASH_ATTN}, {attn: TRITON_ATTN}]'
run() {
        local rc=0 best
        sed "s/^strategy: search/strategy: grid\n$seed_only/" "$tmp/m.yaml" >"$tmp/seed.yaml"
        ROOM_WORDS=$2 "$GAUNTLET" run "$tmp/seed.yaml" --journal "$tmp/$1.db" >"$tmp/$1-seed.out" 2>&1 || rc=$?
        [ "$rc" = 1 ] || fail "exit $rc ($1, the one cell): $(cat "$tmp/$1-seed.out")"
        grep -E '^\[ *[0-9]+/120\] len=131072 util=0.80 kv=auto attn=FLASHINFER +crash/oom' "$tmp/$1-seed.out" >/dev/null ||
                fail "$1: the one cell: $(cat "$tmp/$1-seed.out")"
        rc=0
        ROOM_WORDS=$2 "$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/$1.db" >"$tmp/$1.out" 2>&1 || rc=$?
        [ "$rc" = 0 ] || fail "exit $rc ($1): $(cat "$tmp/$1.out")"
        order=$(grep -E '^\[launch [0-9]+' "$tmp/$1.out" | sed -E 's/^\[launch ([0-9]+)[^]]*\] +//')
        expect_sizes_respected "$order" len
        "$GAUNTLET" report --format json "$tmp/$1.db" >"$tmp/$1.json"
        best=$(jq -r .best "$tmp/$1.json")
        jq -e --arg b "$best" '.cells[] | select(.id == $b) | .axes.attn == "FLASHINFER"' "$tmp/$1.json" >/dev/null ||
                fail "$1: the best is not FLASHINFER's: $(jq -c --arg b "$best" '.cells[] | select(.id == $b) | .axes' "$tmp/$1.json")"
        echo "$1: $(printf '%s\n' "$order" | wc -l) launches, $oom_launches out of memory"
}
# by_room NAME WORDS: the lengths beside the one cell that the search pruned, quoting WORDS
by_room() {
        jq -r --arg w "$2" '.cells[] | select(.axes.util == "0.80" and .axes.kv == "auto" and .axes.attn == "FLASHINFER" and
                .cause == "pruned" and ((.evidence // "") | test("its line says the memory left holds a context of 16384 at most [(]\"" + $w))) |
                .axes.len' "$tmp/$1.json" | sort -n | tr '\n' ' '
}
# past_room: no launch past the length a line before it (or the one cell's) said fits, the
# other values the same
past_room() {
        printf '%s\n' "$order" | awk -v rooms="$(for u in 0.80 0.85 0.90 0.95; do for k in auto fp8; do
                echo "$u/$k=$(room_of $u $k)"; done; done | tr '\n' ' ')" '
        BEGIN {
                n = split(rooms, r, " ")
                for (i = 1; i <= n; i++) { split(r[i], kv, "="); room[kv[1]] = kv[2] }
                said["0.80/auto/FLASHINFER"] = room["0.80/auto"] # the one cell before the search
        }
        {
                delete c
                for (i = 1; i <= NF && split($i, kv, "=") == 2; i++)
                        c[kv[1]] = kv[2]
                key = c["util"] "/" c["kv"] "/" c["attn"]
                if (key in said && c["len"] + 0 > said[key]) {
                        print "launch " NR " (" $0 ") is past the " said[key] " tokens a line said fit"
                        bad = 1
                }
                if ($0 ~ / crash\/oom /)
                        said[key] = room[c["util"] "/" c["kv"]]
        }
        END { exit bad }' || fail "a cell was launched past the length a line said fits"
}
run v1 v1
past_room
v1_oom=$oom_launches
pruned=$(by_room v1 "…Based on the available memory, the estimated maximum model length is 16384[.]")
echo "v1: pruned by what the line said fits: $pruned"
[ "$pruned" = "32768 65536 " ] || fail "v1: pruned by what the line said fits: ${pruned:-none}, not 32768 and 65536: $(
        jq -c '[.cells[] | select(.axes.util == "0.80" and .axes.kv == "auto" and .axes.attn == "FLASHINFER") | [.axes.len, .verdict, .cause, .evidence]]' "$tmp/v1.json")"
run v0 v0
past_room
v0_oom=$oom_launches
pruned=$(by_room v0 "ValueError: The model's max seq len [(]131072[)] is larger than the maximum number of tokens that can be stored in KV cache [(]16384[)]")
[ "$pruned" = "32768 65536 " ] || fail "v0: pruned by what the line said fits: ${pruned:-none}, not 32768 and 65536"
run none none
pruned=$(jq -r '.cells[] | select((.evidence // "") | test("its line says the memory left holds")) | .id' "$tmp/none.json")
[ -z "$pruned" ] || fail "none: pruned by a length no line said: $pruned"
beside=$(printf '%s\n' "$order" | awk '$2 == "util=0.80" && $3 == "kv=auto" && $4 == "attn=FLASHINFER" { printf "%s %s; ", $1, $5 }')
echo "none: launched beside the one cell: ${beside:-nothing}"
echo "launches out of memory after the one cell: with the length $v1_oom (in V0's words $v0_oom), without it $oom_launches"
expect_none_alive "fixture servers left"
