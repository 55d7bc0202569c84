#!/usr/bin/env bash
# tier: faults (tests/run faults)
# faults-disk.sh -- a full disk under the journal or under the logs: one clear error and
# exit 2 for the journal (every attempt settled before it stays, the file still opens, the
# next run resumes), a verdict anyway and a notice for a log; nothing left running. First
# with the LD_PRELOAD shim (tests/faults/enospc.c), then on a real small tmpfs when this
# machine lets us mount one (docs/faults.md).
set -euo pipefail
# shellcheck source=tests/faults/lib.sh
. "$SRCDIR/tests/faults/lib.sh"
need_shim
started=$SECONDS

cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}"]
startup_timeout: 10s
request_timeout: 5s
stop_timeout: 1s
axes:
  n:
    values:
      - {name: a}
      - {name: b, env: {N: "b"}}
      - {name: c, env: {N: "c"}}
      - {name: crash, args: [--die-at-load, --log, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]}
YAML
CELLS=4

shim_run() { # tag, journal, prefix, budget: gauntlet run under the shim
        local tag=$1 journal=$2 prefix=$3 budget=$4
        GAUNTLET_ENOSPC_PREFIX=$prefix GAUNTLET_ENOSPC_BUDGET=$budget GAUNTLET_ENOSPC_REPORT="$tmp/rep.$tag" \
                LD_PRELOAD="$ENOSPC_SO" start_gauntlet "$tag" run "$tmp/m.yaml" --journal "$journal"
        wait_gauntlet
}

# Lines of stdout that say a cell settled in this run (not "(journal)", not excluded).
printed_settled() { grep -E '^\[ *[0-9]+/[0-9]+\]' "$1" | grep -vc '(journal)' || true; }

# ---- (a) the journal's disk fills up, at every point of a sweep ----
# First, what a whole sweep writes into the journal, then budgets spread over it: the
# disk fills while the schema is made, the sweep and cells recorded, an attempt begun,
# its process recorded, an attempt settled, or at the end.
mkdir "$tmp/full"
shim_run measure "$tmp/full/j.db" "$tmp/full/j.db" 100000000000
[ "$status" -eq 0 ] || { cat "$tmp/err.measure" >&2; fail "the measuring run failed"; }
total=$(sed -n 's/^spent: //p' "$tmp/rep.measure" | sort -n | tail -n 1)
[ "${total:-0}" -gt 0 ] || fail "the shim measured nothing: is it loaded?"
echo "a whole sweep writes $total bytes into the journal"

filled=0
for i in 0 1 2 3 4 5 6 7; do
        budget=$((total * i / 8))
        d="$tmp/d$i"
        mkdir "$d"
        rm -f "$tmp"/pids-*
        shim_run "b$i" "$d/j.db" "$d/j.db" "$budget"
        collect_pids
        expect_no_fixture 5 "after the disk filled at $budget bytes"
        printed=$(printed_settled "$tmp/out.b$i")
        if [ "$status" -eq 2 ]; then
                filled=$((filled + 1))
                grep -q '^enospc: ' "$tmp/rep.b$i" || fail "budget $budget: status 2 but the shim never refused"
                # one clear line, naming the journal and the reason
                errs=$(grep -c 'No space left on device' "$tmp/err.b$i" || true)
                [ "$errs" = 1 ] || { cat "$tmp/err.b$i" >&2; fail "budget $budget: $errs lines about the full disk, want 1"; }
                grep -Eq "^gauntlet: cannot (write|open) the journal '$d/j.db': No space left on device$" "$tmp/err.b$i" ||
                        { cat "$tmp/err.b$i" >&2; fail "budget $budget: no clear error about the journal"; }
        elif [ "$status" -eq 0 ]; then
                # the disk filled only after the last commit (the closing checkpoint):
                # nothing may be missing then
                [ "$printed" = "$CELLS" ] || fail "budget $budget: status 0 with $printed of $CELLS cells"
        else
                cat "$tmp/out.b$i" "$tmp/err.b$i" >&2
                fail "budget $budget: status $status, want 2 (or 0 when the disk filled after the end)"
        fi
        # The journal opens and holds every attempt that was settled (printed) before the
        # disk filled; none is left running.
        if [ -s "$d/j.db" ] && sqlite3 "$d/j.db" 'SELECT 1 FROM attempts LIMIT 0' 2>/dev/null; then
                journal_ok "$d/j.db"
                held=$(sqlite3 "$d/j.db" "SELECT count(*) FROM attempts WHERE state = 'settled'")
                [ "$held" = "$printed" ] || fail "budget $budget: $printed attempts settled before the disk filled, the journal holds $held"
        else
                [ "$printed" = 0 ] || fail "budget $budget: $printed cells settled but the journal has no schema"
        fi
        echo "budget $budget: status $status, $printed settled before the disk filled"
        # With room again, the next run resumes: settled cells are not run again.
        start_gauntlet "r$i" run "$tmp/m.yaml" --journal "$d/j.db"
        wait_gauntlet
        [ "$status" -eq 0 ] || { cat "$tmp/out.r$i" "$tmp/err.r$i" >&2; fail "budget $budget: the run after the full disk gave $status"; }
        [ "$(grep -c '(journal)' "$tmp/out.r$i" || true)" = "$printed" ] || { cat "$tmp/out.r$i" >&2; fail "budget $budget: the resume did not skip the $printed settled cells"; }
        [ "$(sqlite3 "$d/j.db" "SELECT count(*) FROM attempts WHERE state = 'settled'")" = "$CELLS" ] ||
                fail "budget $budget: after the resume not every cell settled once"
        collect_pids
        expect_no_fixture 5 "after the resume"
done
[ "$filled" -ge 4 ] || fail "only $filled of 8 budgets filled the disk before the end"

# ---- (a') the logs' disk is full, the journal's is not ----
# The cell still gets its verdict (the log pipe is read whatever the disk says; the crash
# is diagnosed from what the file holds, here nothing, so its cause is the exit status),
# the run goes on and says which log it could not write.
mkdir "$tmp/logs"
rm -f "$tmp"/pids-*
shim_run logs "$tmp/logs/j.db" "$tmp/logs/j/" 0
collect_pids
expect_no_fixture 5 "with the logs' disk full"
[ "$status" -eq 0 ] || { cat "$tmp/out.logs" "$tmp/err.logs" >&2; fail "logs full: status $status, want 0 (cells passed)"; }
grep -q '^enospc: ' "$tmp/rep.logs" || fail "logs full: the shim never refused"
notices=$(grep -c "^gauntlet: cannot write the log '$tmp/logs/j/.*\.log': No space left on device; it is cut there$" "$tmp/err.logs" || true)
[ "$notices" = "$CELLS" ] || { cat "$tmp/err.logs" >&2; fail "logs full: $notices notices, want $CELLS"; }
journal_ok "$tmp/logs/j.db"
"$GAUNTLET" report --format json "$tmp/logs/j.db" >"$tmp/logs.json"
[ "$(jq '[.cells[] | select(.verdict == "pass")] | length' "$tmp/logs.json")" = 3 ] || fail "logs full: the good cells did not pass"
[ "$(jq -r '.cells[] | select(.axes.n == "crash") | .verdict' "$tmp/logs.json")" = crash ] || fail "logs full: the crash is not a crash"
for f in "$tmp"/logs/j/*/*.log; do [ ! -s "$f" ] || fail "logs full: $f has bytes the disk refused"; done

# The same with room for the first lines only: the log is cut, the verdict is whole.
mkdir "$tmp/logs2"
rm -f "$tmp"/pids-*
shim_run logs2 "$tmp/logs2/j.db" "$tmp/logs2/j/" 30
collect_pids
expect_no_fixture 5 "with the logs' disk nearly full"
[ "$status" -eq 0 ] || { cat "$tmp/err.logs2" >&2; fail "logs nearly full: status $status"; }
[ "$(grep -c "cannot write the log" "$tmp/err.logs2" || true)" = "$CELLS" ] || { cat "$tmp/err.logs2" >&2; fail "logs nearly full: not every cell had a notice"; }
[ "$(cat "$tmp"/logs2/j/*/*.log | wc -c)" = 30 ] || fail "logs nearly full: the logs hold $(cat "$tmp"/logs2/j/*/*.log | wc -c) bytes, the disk had room for 30"
echo "logs full: every cell got its verdict, $CELLS notices"

# ---- (a'') the journal's disk is full when a run must stop what a killed one left ----
# A run SIGKILLed right after its first spawn leaves a server and a 'running' attempt; the
# next run cannot mark that attempt abandoned (room for less than one SQLite page). In
# one process (a simulated 1-GPU host) and side by side (2 GPUs, one per cell) alike, that is
# one clear error and exit 2, and no cell is started.
cat >"$tmp/orphan.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-orphan-{port}", --load-time, "30"]
gpus_per_cell: 1
startup_timeout: 60s
stop_timeout: 1s
memory_timeout: 1s
axes:
  n:
    values:
      - {name: a}
      - {name: b, env: {N: "b"}}
YAML
echo '{"driver": "580.1", "cuda": "13.0", "gpus": [
  {"name": "NVIDIA H200", "uuid": "GPU-a", "arch": "sm_90", "memory_total_mib": 143771, "memory_used_mib": 500, "processes": []},
  {"name": "NVIDIA H200", "uuid": "GPU-b", "arch": "sm_90", "memory_total_mib": 143771, "memory_used_mib": 500, "processes": []}]}' \
        >"$tmp/gpus2.json"
echo '{"driver": "580.1", "cuda": "13.0", "gpus": [
  {"name": "NVIDIA H200", "uuid": "GPU-a", "arch": "sm_90", "memory_total_mib": 143771, "memory_used_mib": 500, "processes": []}]}' \
        >"$tmp/gpus1.json"
mkdir -p "$tmp/orphan"
GAUNTLET_FAULT_KILL_AFTER_SPAWN=gauntlet LD_PRELOAD="$ENOSPC_SO" start_gauntlet orphan run "$tmp/orphan.yaml" --journal "$tmp/orphan/j.db"
wait_gauntlet
[ "$status" -eq 137 ] || fail "orphan: the spawn-kill shim did not fire (status $status)"
wait_pid_lines 1 10 "$tmp/pids-orphan-*" || fail "orphan: the server of the killed run did not start"
collect_pids
cp -r "$tmp/orphan" "$tmp/orphan.saved" # the journal with its -wal and -shm
for how in one-process side-by-side; do
        rm -rf "$tmp/orphan" "$tmp"/pids-orphan-*
        cp -r "$tmp/orphan.saved" "$tmp/orphan"
        gpus="$tmp/gpus1.json"
        [ "$how" = one-process ] || gpus="$tmp/gpus2.json"
        GAUNTLET_FAKE_GPUS=$gpus GAUNTLET_ENOSPC_PREFIX="$(realpath "$tmp/orphan")/" GAUNTLET_ENOSPC_BUDGET=1000 \
                GAUNTLET_ENOSPC_REPORT="$tmp/rep.orphan-$how" LD_PRELOAD="$ENOSPC_SO" \
                start_gauntlet "orphan-$how" run "$tmp/orphan.yaml" --journal "$tmp/orphan/j.db"
        wait_gauntlet
        collect_pids
        [ "$status" -eq 2 ] || { cat "$tmp/err.orphan-$how" >&2; fail "orphan, $how: status $status, want 2"; }
        grep -q '^enospc: ' "$tmp/rep.orphan-$how" || fail "orphan, $how: the shim never refused"
        [ "$(grep -c '^gauntlet: cannot stop what an earlier run left behind: No space left on device$' "$tmp/err.orphan-$how")" = 1 ] ||
                { cat "$tmp/err.orphan-$how" >&2; fail "orphan, $how: no one clear error about the cleanup"; }
        ! ls "$tmp"/pids-orphan-* >/dev/null 2>&1 || fail "orphan, $how: a cell was started after the failed cleanup"
done
expect_no_fixture
echo "orphan cleanup on a full disk: exit 2 and one error, in one process and side by side"

# ---- (b) a real small tmpfs, when this machine lets us mount one ----
# In a mount namespace of its own (root: unshare -m; others: unshare -rm), so that the
# mount goes away with the test whatever happens. The filler leaves 160 KiB free.
cat >"$tmp/tmpfs.sh" <<'SH'
set -euo pipefail
tmp=$1 GAUNTLET=$2
disk="$tmp/disk"
mount -t tmpfs -o size=2m gauntlet-faults "$disk" || exit 77
dd if=/dev/zero of="$disk/filler" bs=1k count=$((2048 - 160)) status=none 2>/dev/null || true
set +e
"$GAUNTLET" run "$tmp/m.yaml" --journal "$disk/j.db" >"$tmp/out.tmpfs" 2>"$tmp/err.tmpfs"
echo $? >"$tmp/status.tmpfs"
set -e
df -k "$disk" | tail -n 1 >"$tmp/df.tmpfs"
rm -f "$disk/filler" # room again: the journal must open and hold what was settled
sqlite3 "$disk/j.db" 'PRAGMA integrity_check' >"$tmp/integrity.tmpfs" 2>&1 || true
sqlite3 "$disk/j.db" "SELECT count(*) FROM attempts WHERE state = 'settled'" >"$tmp/held.tmpfs" 2>&1 || true
"$GAUNTLET" run "$tmp/m.yaml" --journal "$disk/j.db" >"$tmp/out.tmpfs2" 2>"$tmp/err.tmpfs2" || echo "resume: $?" >>"$tmp/err.tmpfs2"
sqlite3 "$disk/j.db" "SELECT count(*) FROM attempts WHERE state = 'settled'" >"$tmp/held2.tmpfs" 2>&1 || true
SH
mkdir "$tmp/disk"
rm -f "$tmp"/pids-*
if [ "$(id -u)" = 0 ]; then ns=(unshare -m); else ns=(unshare -rm); fi
set +e
"${ns[@]}" bash "$tmp/tmpfs.sh" "$tmp" "$GAUNTLET" 2>"$tmp/err.ns"
ns_status=$?
set -e
collect_pids
expect_no_fixture 5 "on the tmpfs"
if [ "$ns_status" -ne 0 ]; then
        echo "SKIP (b): cannot mount a tmpfs here ($(head -c 200 "$tmp/err.ns" | tr '\n' ' ')): the shim's cases above still ran"
else
        status=$(cat "$tmp/status.tmpfs")
        printed=$(printed_settled "$tmp/out.tmpfs")
        echo "tmpfs: status $status, $printed settled before the disk filled; df: $(cat "$tmp/df.tmpfs")"
        sed "s/^/tmpfs stderr: /" "$tmp/err.tmpfs"
        [ "$status" -eq 2 ] || { cat "$tmp/out.tmpfs" "$tmp/err.tmpfs" >&2; fail "tmpfs: status $status, want 2"; }
        grep -Eq "^gauntlet: cannot (write|open) the journal '$tmp/disk/j.db': No space left on device$" "$tmp/err.tmpfs" ||
                { cat "$tmp/err.tmpfs" >&2; fail "tmpfs: no clear error about the journal"; }
        [ "$(cat "$tmp/integrity.tmpfs")" = ok ] || fail "tmpfs: integrity_check: $(cat "$tmp/integrity.tmpfs")"
        [ "$(cat "$tmp/held.tmpfs")" = "$printed" ] || fail "tmpfs: $printed settled before the disk filled, the journal holds $(cat "$tmp/held.tmpfs")"
        [ "$(cat "$tmp/held2.tmpfs")" = "$CELLS" ] || { cat "$tmp/err.tmpfs2" >&2; fail "tmpfs: the resume did not settle every cell: $(cat "$tmp/held2.tmpfs")"; }
fi
echo "faults-disk.sh: all good in $((SECONDS - started)) s"
