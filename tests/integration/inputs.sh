#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# inputs.sh -- inputs that cannot be served are refused at once, in one line, exit 2: a FIFO
# as a dataset, trace, prompt, eval, check suite or matrix (never waited on); a trace in
# nanoseconds read as milliseconds (10 days); a rate whose gap passes the request timeout
# (--rate 1e-300, and --request-rate, vLLM's name for it); a 1 GB line, by reading the cap
# only; a URL refused with its credentials masked; the seed's bounds.
. "$SRCDIR/tests/lib.sh"
url=http://127.0.0.1:9
b=("$GAUNTLET" bench --url "$url" --concurrency 1 --requests 1 --output-tokens 4)

# refused NAME WANT CMD...: exit 2 within 10 s, one line on stderr holding WANT
refused() {
        local name=$1 want=$2 rc=0
        shift 2
        timeout 10 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
        [ "$rc" != 124 ] || fail "$name: still waiting after 10 s"
        [ "$rc" = 2 ] || { cat "$tmp/$name.err"; fail "$name: exit $rc, want 2"; }
        # one line (a usage error's "try 'gauntlet CMD --help'" aside)
        [ "$(grep -vc "^try 'gauntlet" "$tmp/$name.err")" = 1 ] || { cat "$tmp/$name.err"; fail "$name: not one line"; }
        grep -qF -- "$want" "$tmp/$name.err" || { cat "$tmp/$name.err"; fail "$name: no '$want'"; }
}

mkfifo "$tmp/fifo"
refused dataset "cannot read '$tmp/fifo': not a regular file" "${b[@]}" --dataset-name custom --dataset-path "$tmp/fifo"
refused trace-fifo "cannot read '$tmp/fifo': not a regular file" "${b[@]}" --dataset-name trace --dataset-path "$tmp/fifo"
refused prompts "cannot read prompts from '$tmp/fifo': not a regular file" "${b[@]}" --prompt-file "$tmp/fifo"
refused checks "not a regular file" "$GAUNTLET" smoke --url "$url" --checks "$tmp/fifo"
refused matrix "cannot read '$tmp/fifo': not a regular file" "$GAUNTLET" run "$tmp/fifo" --journal "$tmp/j.db"
cat >"$tmp/eval.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}"]
eval: {file: $tmp/fifo}
YAML
refused eval "cannot read '$tmp/fifo': not a regular file" "$GAUNTLET" run "$tmp/eval.yaml" --journal "$tmp/j.db"
[ ! -e "$tmp/j.db" ] || fail "a refused matrix left a journal"

# a trace in nanoseconds (864 ms) read as milliseconds: 10 days
for t in 0 432000000 864000000; do
        echo "{\"timestamp\": $t, \"input_length\": 5, \"output_length\": 4}"
done >"$tmp/ns.jsonl"
refused trace-ns "the trace spans 10.0 days at speed 1, more than a day: are its timestamps in another unit than milliseconds? (trace_unit us: 14.4 min, ns: 0.864s)" \
        "${b[@]}" --dataset-name trace --dataset-path "$tmp/ns.jsonl"
# read in ns it is accepted (and goes on to the server, which is not there)
rc=0
timeout 20 "${b[@]}" --dataset-name trace --dataset-path "$tmp/ns.jsonl" --trace-unit ns >/dev/null 2>"$tmp/ns.err" || rc=$?
[ "$rc" != 124 ] || fail "--trace-unit ns: still running after 20 s"
! grep -q "spans\|trace_unit" "$tmp/ns.err" || { cat "$tmp/ns.err"; fail "--trace-unit ns was not applied"; }
refused trace-unit "invalid --trace-unit 'min' (s, ms, us or ns)" "${b[@]}" --dataset-name trace --dataset-path "$tmp/ns.jsonl" --trace-unit min
cat >"$tmp/trace.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}"]
bench: {dataset: {name: trace, path: $tmp/ns.jsonl}}
YAML
refused trace-matrix "trace.yaml:3: bench.dataset $tmp/ns.jsonl: the trace spans 10.0 days" "$GAUNTLET" run "$tmp/trace.yaml" --journal "$tmp/j.db"

# rates whose gap passes the request timeout
refused rate "--rate 1e-300 is one request every 1e+300s, longer than the request timeout (10m)" "${b[@]}" --rate 1e-300
refused request-rate "--rate 0.001 is one request every 1e+03s, longer than the request timeout (30s)" \
        "${b[@]}" --request-rate 0.001 --timeout 30s
cat >"$tmp/rate.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}"]
bench: {rate: 1e-300}
YAML
refused rate-matrix "rate.yaml:3: bench.rate 1e-300 is one request every 1e+300s, longer than the request timeout (5m)" \
        "$GAUNTLET" run "$tmp/rate.yaml" --journal "$tmp/j.db"
sed -i 's/rate: 1e-300/request_rate: 1e-300/' "$tmp/rate.yaml"
refused request-rate-matrix "rate.yaml:3: bench.rate 1e-300 is one request every 1e+300s" \
        "$GAUNTLET" run "$tmp/rate.yaml" --journal "$tmp/j.db"
# the option table's bounds, the same on the command line and in a matrix: --seed 0..2147483647
# (bench's and smoke's eval's), --request-rate's error naming the flag given
refused seed-high "invalid --seed '2147483648'" "${b[@]}" --seed 2147483648
refused seed-negative "invalid --seed '-1'" "${b[@]}" --seed -1
refused smoke-seed "invalid --seed '2147483648'" "$GAUNTLET" smoke --url "$url" --eval builtin --seed 2147483648
refused request-rate-zero "invalid --request-rate '0' (requests per second)" "${b[@]}" --request-rate 0
rc=0
timeout 20 "${b[@]}" --seed 2147483647 >/dev/null 2>"$tmp/seed.err" || rc=$?
[ "$rc" = 1 ] && grep -q "no request completed" "$tmp/seed.err" || { cat "$tmp/seed.err"; fail "--seed 2147483647: exit $rc, want 1 (the server is not there)"; }
# --request-rate is --rate: the same run, against the fixture
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$FIXTURE" --port "$port" --pid-file "$tmp/pids-fx" >"$tmp/fx.log" 2>&1 &
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.05; done
"$GAUNTLET" bench --url "http://127.0.0.1:$port" --concurrency 1 --requests 4 --output-tokens 4 --request-rate 50 \
        --format json >"$tmp/rr.json" 2>"$tmp/rr.err" || { cat "$tmp/rr.err"; fail "--request-rate refused"; }
[ "$(jq -r '.bench[0].rate' "$tmp/rr.json")" = 50 ] ||
        { jq -c . "$tmp/rr.json" | head -c 600; fail "--request-rate did not set the rate"; }

# a 1 GB line: refused by reading the 8 MiB cap, not the gigabyte
truncate -s 1G "$tmp/big.jsonl"
/usr/bin/time -f "%e s, %M KiB" -o "$tmp/big.time" timeout 10 "${b[@]}" --dataset-name custom --dataset-path "$tmp/big.jsonl" \
        >/dev/null 2>"$tmp/big.err" && fail "a 1 GB line was accepted"
grep -q "big.jsonl:1: a line is longer than 8388608 bytes" "$tmp/big.err" || { cat "$tmp/big.err"; fail "the 1 GB line: wrong refusal"; }
echo "a 1 GB line refused in $(tail -1 "$tmp/big.time")"
kib=$(tail -1 "$tmp/big.time" | sed "s/.*, \([0-9]*\) KiB/\1/")
[ "$kib" -lt 200000 ] || fail "the 1 GB line cost $kib KiB"

# a URL refused: its credentials masked, as smoke masks them
refused url "invalid --url 'ftp://user:***@host' (want http://HOST:PORT)" "$GAUNTLET" bench --url "ftp://user:hunter2@host" \
        --concurrency 1 --requests 1 --output-tokens 4
! grep -q hunter2 "$tmp/url.err" || fail "bench printed the URL's password"
# a server that never answers: no verdict, not a pass, and exit 1
rc=0
"$GAUNTLET" bench --url http://127.0.0.1:1 --concurrency 1 --requests 2 --output-tokens 4 --no-calibrate \
        >"$tmp/none.out" 2>"$tmp/none.err" || rc=$?
[ "$rc" = 1 ] || fail "bench against nothing exited $rc"
grep -q "^verdict: none (no request completed)" "$tmp/none.out" || fail "bench against nothing: $(grep verdict "$tmp/none.out")"
rc=0
"$GAUNTLET" bench --url http://127.0.0.1:1 --concurrency 1 --requests 2 --output-tokens 4 --no-calibrate --format json \
        >"$tmp/none.json" 2>/dev/null || rc=$?
[ "$rc" = 1 ] && [ "$(jq -c '[.verdict, .cause]' "$tmp/none.json")" = '[null,"no request completed"]' ] ||
        fail "bench --format json against nothing: rc $rc, $(jq -c '{verdict, cause}' "$tmp/none.json")"
echo "inputs.sh: all good"
