#!/usr/bin/env bash
# bench/fixture-concurrency.sh -- how long two delayed requests take together against
# gauntlet-fixture (--token-delay-ms 100, 4 pieces each: 400 ms alone). Side by side they
# take a little over 400 ms; one after the other, 800 ms or more. A measurement, not a test
# (a loaded machine stretches it): tests/integration/fixture.sh checks concurrency without
# a clock.
#
#   bench/fixture-concurrency.sh [RUNS]     (default 5; make builds the fixture first:
#                                            make build/bin/gauntlet-fixture)
set -eu
cd "$(dirname "$0")/.."
FIXTURE=${FIXTURE:-build/bin/gauntlet-fixture}
port=$((20000 + RANDOM % 30000))
"$FIXTURE" --port "$port" --token-delay-ms 100 >/dev/null 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.05; done
for i in $(seq "${1:-5}"); do
        t0=$(date +%s%N)
        curl -s --max-time 5 "http://127.0.0.1:$port/v1/completions" -d '{"prompt":"x"}' >/dev/null &
        c=$!
        curl -s --max-time 5 "http://127.0.0.1:$port/v1/completions" -d '{"prompt":"x"}' >/dev/null
        wait "$c"
        echo "run $i: two concurrent delayed requests took $(( ($(date +%s%N) - t0) / 1000000 )) ms"
done
