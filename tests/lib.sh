# tests/lib.sh -- sourced by integration scripts that sweep the fixture server: a temporary
# folder, a cleanup that kills every pid the fixtures listed in "$tmp"/pids-* (even when an
# assertion failed), fail() and soft_fail() (tests/assert.sh), alive_pids(), expect_none_alive(), cell_verdict(),
# expect_verdict() and fake_gpus().
set -euo pipefail
. "$SRCDIR/tests/assert.sh"
. "$SRCDIR/tests/proc.sh"
tmp=$(mktemp -d)
cleanup() {
        local f
        for f in "$tmp"/pids-*; do
                if [ -f "$f" ]; then xargs -r kill -9 <"$f" 2>/dev/null || true; fi
        done
        rm -rf "$tmp"
}
trap cleanup EXIT

# Every pid listed in the pid files that is still running (zombies excluded, see proc.sh).
alive_pids() {
        local f p
        for f in "$tmp"/pids-*; do
                [ -f "$f" ] || continue
                while read -r p; do
                        [ -n "$p" ] || continue
                        if pid_running "$p"; then echo "$p"; fi
                done <"$f"
        done
}

# Fails with MESSAGE unless every pid in the pid files has ended, waiting up to SECONDS
# (default 0: look once). The verdict and the list in the message come from the same
# look, with each survivor's state, parent and command line.
expect_none_alive() { # message [seconds]
        local left p tries=$((${2:-0} * 10))
        while :; do
                left=$(alive_pids)
                [ -z "$left" ] && return 0
                [ "$tries" -gt 0 ] || break
                tries=$((tries - 1))
                sleep 0.1
        done
        fail "$1: $(for p in $left; do
                printf '%s (%s, parent %s: %s) ' "$p" \
                        "$(sed -n 's/^State:[[:space:]]*//p' "/proc/$p/status" 2>/dev/null)" \
                        "$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$p/status" 2>/dev/null)" \
                        "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
        done)"
}

# Writes a simulated host of N (at most 26) idle H200s, GPU-a, GPU-b, ..., for
# GAUNTLET_FAKE_GPUS.
# Runs the matrix $tmp/m.yaml on the journal $tmp/j.db into $tmp/out (failing, with the
# output, unless it exits 0), writes the JSON report to $tmp/r.json and prints the launches.
run_search_report() {
        local rc=0
        "$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || rc=$?
        [ "$rc" = 0 ] || { cat "$tmp/out"; fail "gauntlet run exit $rc"; }
        "$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
        grep -E '^\[launch' "$tmp/out" || true
}

fake_gpus() { # file n
        local i letters=abcdefghijklmnopqrstuvwxyz sep=""
        {
                echo '{"driver": "580.1", "cuda": "13.0", "gpus": ['
                for i in $(seq 0 $(($2 - 1))); do
                        echo "$sep {\"name\": \"NVIDIA H200\", \"uuid\": \"GPU-${letters:i:1}\", \"arch\": \"sm_90\"," \
                                "\"memory_total_mib\": 143771, \"memory_used_mib\": 500, \"processes\": []}"
                        sep=,
                done
                echo ']}'
        } >"$1"
}

# "VERDICT CAUSE" ("-" for none) of the cell whose AXIS is VALUE in a JSON report.
cell_verdict() { # report.json axis value
        jq -r --arg x "$2" --arg v "$3" '.cells[] | select(.axes[$x] == $v) | "\(.verdict) \(.cause // "-")"' "$1"
}

# Fails unless the cell whose AXIS is VALUE has "VERDICT CAUSE" WANT in a JSON report.
expect_verdict() { # report.json axis value want
        local got
        got=$(cell_verdict "$1" "$2" "$3")
        [ "$got" = "$4" ] || fail "$2=$3: got '$got', want '$4'"
}

# The cells of a JSON report against rules of an .expect file (tests/engines/*/*.expect):
# cells prints "k=v,k=v<TAB>verdict<TAB>cause<TAB>evidence" for each cell; matches says
# whether a cell's axes ("k=v,k=v") match a rule's ("k=v[,k=v...]" or "*").
cells() { # report.json
        jq -r '.cells[] | [(.axes | to_entries | map("\(.key)=\(.value)") | join(",")), .verdict,
               (.cause // "-"), (.evidence // "")] | @tsv' "$1"
}
matches() { # cell-axes rule-axes
        local want w
        [ "$2" = "*" ] && return 0
        IFS=, read -ra want <<<"$2"
        for w in "${want[@]}"; do [[ ",$1," == *",$w,"* ]] || return 1; done
}

# A sweep's output and log folder: each cell launched once, or twice where its first launch
# exited with no line of its log saying why (the sweep launches those again: llama-server
# can lose its log's tail at exit, docs/supervisor.md); any other relaunch fails NAME.
# Prints how many were launched twice, when any was.
expect_launched_once() { # name output log-folder
        local other again
        other=$(grep "launched again" "$2" | grep -v "no line of its log says why it exited" || true)
        [ -z "$other" ] || { cat "$2"; fail "$1: a cell was launched again: $other"; }
        again=$(grep -c "no line of its log says why it exited" "$2" || true)
        [ "$(find "$3" -name '*.launch*.log' | wc -l)" -eq "$again" ] &&
                [ -z "$(find "$3" -name '*.launch[3-9]*.log')" ] || fail "$1: a cell has more than one launch"
        [ "$again" -eq 0 ] || echo "$1: $again cell(s) launched again, their first log saying nothing of why they exited"
}

# The real llama-server the real-engine tests run, in LLAMA_SERVER: $LLAMA_SERVER if set
# (then it must work), else the build cache of tools/build-llamacpp.sh, else llama-server
# on PATH. Without one the test is skipped (exit 77, tests/run names it), never passed.
need_llama_server() {
        if [ -n "${LLAMA_SERVER:-}" ]; then
                [ -x "$LLAMA_SERVER" ] || fail "LLAMA_SERVER='$LLAMA_SERVER' is not an executable"
        else
                LLAMA_SERVER=$("$SRCDIR/tools/build-llamacpp.sh" --path 2>/dev/null) ||
                        LLAMA_SERVER=$(command -v llama-server) || {
                        echo "SKIP: no llama-server (build one with tools/build-llamacpp.sh, or set LLAMA_SERVER)"
                        exit 77
                }
        fi
        export LLAMA_SERVER
}

# run_llama_space NAME BUDGET: the search matrix tests/engines/llamacpp/NAME.yaml, its
# @MODEL@ (the testbed's) and @BUDGET@ filled in as $tmp/m.yaml, run on the real
# llama-server into $tmp/m.db with its output in $tmp/out (exit 0 or 1 asked); skipped in
# the sanitizers' pass (gauntlet's search runs under them in search.sh) and without
# llama-server.
run_llama_space() {
        if [ "${BUILD:-build}" = build-asan ]; then
                echo "SKIP: $1 runs in the plain pass (BUILD=build-asan)"
                exit 77
        fi
        need_llama_server
        export PATH="$(dirname "$LLAMA_SERVER"):$PATH"
        sed -e "s|@MODEL@|$SRCDIR/testbed/model.gguf|" -e "s|@BUDGET@|$2|" \
                "$SRCDIR/tests/engines/llamacpp/$1.yaml" >"$tmp/m.yaml"
        local rc=0
        "$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/m.db" >"$tmp/out" 2>&1 || rc=$?
        [ "$rc" -le 1 ] || { cat "$tmp/out"; fail "gauntlet run exit $rc"; }
}

# limit_llama_server: the real llama-server ($LLAMA_SERVER; skipped, by name, without one, and
# in the sanitizers' pass) first on PATH behind a wrapper that gives it 800 MB of address
# space (ulimit -v) and one malloc arena (glibc's per-thread arenas reserve 64 MB of address
# space each: with one, the limit measures the engine's own allocations); LLAMA_SERVER is
# then the wrapper. $1: the test's name, for the skip.
limit_llama_server() {
        if [ "${BUILD:-build}" = build-asan ]; then
                echo "SKIP: $1 runs in the plain pass (BUILD=build-asan)"
                exit 77
        fi
        need_llama_server
        mkdir -p "$tmp/bin"
        printf '#!/bin/sh\nulimit -v 800000\nexport MALLOC_ARENA_MAX=1\nexec "%s" "$@"\n' "$LLAMA_SERVER" >"$tmp/bin/llama-server"
        chmod +x "$tmp/bin/llama-server"
        export PATH="$tmp/bin:$PATH"
        LLAMA_SERVER=$tmp/bin/llama-server
}

# llama_matrix NAME STRATEGY OUT [JOURNAL]: tests/engines/llamacpp/NAME.yaml with @MODEL@ (the
# testbed's) and @STRATEGY@ (the matrix's lines of strategy, budget, exclude; \n between)
# filled in as $tmp/OUT.yaml, run into $tmp/JOURNAL.db (default OUT; exit 0 or 1 asked), its
# output in $tmp/OUT.out and its JSON report in $tmp/OUT.json.
llama_matrix() {
        local db=$tmp/${4:-$3}.db rc=0
        sed -e "s|@MODEL@|$SRCDIR/testbed/model.gguf|" -e "s|@STRATEGY@|$2|" \
                "$SRCDIR/tests/engines/llamacpp/$1.yaml" >"$tmp/$3.yaml"
        "$GAUNTLET" run "$tmp/$3.yaml" --journal "$db" >"$tmp/$3.out" 2>&1 || rc=$?
        [ "$rc" -le 1 ] || { cat "$tmp/$3.out"; fail "gauntlet run ($2) exit $rc"; }
        "$GAUNTLET" report --format json "$db" >"$tmp/$3.json"
}

# expect_named_once ORDER HELD LINE: of the launch lines ORDER (one a launch, in order), those
# holding HELD ("ctk=q8_0 ") and the first holding LINE ("K cache type q8_0"): prints how
# often, and fails when the value was launched after a line named it, or in more than two
# cells in all once one did; $named_at is that launch's number, empty when no line named it.
expect_named_once() {
        local held after
        named_at=$(printf '%s\n' "$1" | awk -v w="$3" 'index($0, w) {print NR; exit}')
        held=$(printf '%s\n' "$1" | grep -c -- "$2" || true)
        after=$(printf '%s\n' "$1" | awk -v at="${named_at:-0}" -v p="$2" 'at && NR > at && index($0, p) {n++} END {print n + 0}')
        echo "${2% }: named at launch ${named_at:-never} (\"$3\"), launched in $held cells, $after after"
        [ "$after" -eq 0 ] || fail "${2% }: launched $after times after a failure's line named it"
        [ -z "$named_at" ] || [ "$held" -le 2 ] || fail "${2% }: named by a line, launched in $held cells (at most 2)"
}

# start_llama_server NAME ARGS...: llama-server (need_llama_server first) on the testbed's
# model (or $LLAMA_MODEL) at a port of its choosing, logging to $tmp/NAME.log; once it
# answers /health, its URL is in $url and its pid in $ls_pid (listed for the cleanup).
start_llama_server() {
        local name=$1
        shift
        "$LLAMA_SERVER" -m "${LLAMA_MODEL:-$SRCDIR/testbed/model.gguf}" --host 127.0.0.1 --port 0 "$@" >"$tmp/$name.log" 2>&1 &
        ls_pid=$!
        echo "$ls_pid" >"$tmp/pids-$name"
        url=
        for _ in $(seq 300); do
                url=$(grep -o 'listening on http://[0-9.]*:[0-9]*' "$tmp/$name.log" 2>/dev/null | head -1 | cut -d' ' -f3 || true)
                [ -n "$url" ] && curl -sf "$url/health" >/dev/null 2>&1 && return 0
                kill -0 "$ls_pid" 2>/dev/null || { cat "$tmp/$name.log"; fail "llama-server ($name) died at start"; }
                sleep 0.1
        done
        tail "$tmp/$name.log"
        fail "llama-server ($name) did not come up"
}

# expect_best_passed JSON: the report JSON names a best cell, and that cell passed.
expect_best_passed() {
        local best
        best=$(jq -r '.best // ""' "$1")
        [ -n "$best" ] || fail "no best cell"
        jq -e --arg b "$best" '.cells[] | select(.id == $b) | .verdict == "pass"' "$1" >/dev/null ||
                fail "the best ($best) did not pass"
}

# expect_sizes_respected ORDER AXIS...: of the launch lines ORDER (one a launch, in order,
# "ax=v ax=v ... verdict ..."), fails when a cell was launched after one that ran out of
# memory (crash/oom) with the same values on every axis but the AXIS ones (axes of sizes),
# where its sizes were no smaller (docs/search.md, "Memory": a larger size needs no less
# memory); prints how many launches ran out of memory in $oom_launches.
expect_sizes_respected() {
        local order=$1
        shift
        oom_launches=$(printf '%s\n' "$order" | grep -c ' crash/oom ' || true)
        printf '%s\n' "$order" | awk -v sizes=" $* " '
        function cell(line, c,   n, i, f, kv) { # the leading ax=v fields: the cell
                delete c
                n = split(line, f, " ")
                for (i = 1; i <= n && split(f[i], kv, "=") == 2; i++)
                        c[kv[1]] = kv[2]
        }
        {
                cell($0, now)
                for (j = 1; j <= n_oom; j++) {
                        over = 1
                        for (a in now) {
                                if (now[a] == oom[j, a])
                                        continue
                                if (index(sizes, " " a " ") && now[a] + 0 >= oom[j, a] + 0)
                                        continue
                                over = 0
                        }
                        if (over) {
                                print "launch " NR " (" $0 ") holds sizes past launch " oom_at[j] ", which ran out of memory"
                                bad = 1
                        }
                }
                if ($0 ~ / crash\/oom /) {
                        n_oom++
                        oom_at[n_oom] = NR
                        for (a in now)
                                oom[n_oom, a] = now[a]
                }
        }
        END { exit bad }' || fail "a cell was launched past the sizes of one that ran out of memory"
}
