#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# files-ours.sh -- files that stay ours (issue #32 item 4):
#   (a) a run whose journal is replaced under it stops and leaves no -wal/-shm beside the
#       new file (a later open would replay them into it);
#   (b) `report` on a replaced journal with another file's stale -wal/-shm beside it leaves
#       the journal byte-identical (it opens read-only);
#   (c) a symbolic link at JOURNAL.lock and at a cell's log is refused, not followed: the
#       file it points at is untouched;
#   (d) journals w and w.logs.db do not share a log folder.
. "$SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || fail "python3 is needed"
command -v sqlite3 >/dev/null || fail "sqlite3 is needed"
matrix() { # file [extra fixture args...]
        local f=$1 extra=""
        shift
        if [ $# -gt 0 ]; then extra=$(printf ', "%s"' "$@"); fi
        cat >"$f" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}"$extra]
axes:
  x:
    values:
      - {name: a, env: {X: a}}
      - {name: b, env: {X: b}}
      - {name: c, env: {X: c}}
startup_timeout: 5s
stop_timeout: 1s
probes: false
YAML
}
sum() { sha256sum "$1" | cut -d' ' -f1; }

# (a) the journal replaced while the second cell loads
matrix "$tmp/slow.yaml" --load-time 1
"$GAUNTLET" run "$tmp/slow.yaml" --journal "$tmp/other.db" >/dev/null 2>&1 || true
cp "$tmp/other.db" "$tmp/replacement.db"
(
        for _ in $(seq 300); do
                [ "$(sqlite3 "$tmp/a.db" "SELECT count(*) FROM attempts" 2>/dev/null || echo 0)" -ge 2 ] && break
                sleep 0.02
        done
        cp "$tmp/replacement.db" "$tmp/a.db.new" && mv "$tmp/a.db.new" "$tmp/a.db"
) &
replacer=$!
set +e
"$GAUNTLET" run "$tmp/slow.yaml" --journal "$tmp/a.db" >"$tmp/out-a" 2>"$tmp/err-a"
status=$?
set -e
wait "$replacer"
[ "$status" -ne 0 ] || fail "(a) the run did not notice its journal was replaced"
grep -q "deleted or replaced" "$tmp/err-a" || { cat "$tmp/err-a" >&2; fail "(a) no line saying the journal was replaced"; }
for s in -wal -shm; do
        [ ! -e "$tmp/a.db$s" ] || fail "(a) the stopped run left a.db$s beside the new file"
done
[ "$(sum "$tmp/a.db")" = "$(sum "$tmp/replacement.db")" ] || fail "(a) the replacement was written"
expect_none_alive "(a) processes left" 5
echo "(a) replaced under a run: stopped, no -wal/-shm left" >&2

# (b) stale -wal/-shm of another file beside a journal; report reads, never writes
python3 - "$tmp/stale.db" <<'PY'
import os, sqlite3, sys, shutil
p = sys.argv[1]
c = sqlite3.connect(p)
c.execute("PRAGMA journal_mode=WAL")
c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("CREATE TABLE t(x)")
c.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(2000)])
c.commit()
for s in ("-wal", "-shm"):   # copies of a live connection's side files
    shutil.copy(p + s, p + s + ".copy")
os._exit(0)                  # no checkpoint, no clean close
PY
cp "$tmp/other.db" "$tmp/b.db"
cp "$tmp/stale.db-wal.copy" "$tmp/b.db-wal"
cp "$tmp/stale.db-shm.copy" "$tmp/b.db-shm"
before=$(sum "$tmp/b.db")
"$GAUNTLET" report "$tmp/b.db" >/dev/null 2>"$tmp/err-b" || true
"$GAUNTLET" report --format json "$tmp/b.db" >/dev/null 2>>"$tmp/err-b" || true
"$GAUNTLET" emit systemd "$tmp/b.db" >/dev/null 2>>"$tmp/err-b" || true
[ "$(sum "$tmp/b.db")" = "$before" ] || fail "(b) report changed the journal (the stale WAL was replayed into it)"
[ "$(sum "$tmp/b.db")" = "$(sum "$tmp/other.db")" ] || fail "(b) the journal is not the copy it was"
# a journal with nothing beside it: report makes nothing there
rm -f "$tmp/b.db-wal" "$tmp/b.db-shm"
"$GAUNTLET" report "$tmp/b.db" >/dev/null
ls "$tmp"/b.db?* 2>/dev/null && fail "(b) report made files beside the journal"
echo "(b) report on a replaced journal with stale -wal/-shm: byte-identical" >&2

# (c) symbolic links at the lock and at a cell's log
matrix "$tmp/fast.yaml"
echo precious >"$tmp/target"
ln -s "$tmp/target" "$tmp/c.db.lock"
set +e
"$GAUNTLET" run "$tmp/fast.yaml" --journal "$tmp/c.db" >"$tmp/out-c" 2>"$tmp/err-c"
status=$?
set -e
[ "$status" -ne 0 ] || fail "(c) a run locked through a symbolic link"
[ "$(wc -l <"$tmp/err-c")" -eq 1 ] && grep -q "lock file .* is a symbolic link" "$tmp/err-c" ||
        { cat "$tmp/err-c" >&2; fail "(c) not one line about the lock's symbolic link"; }
[ "$(cat "$tmp/target")" = precious ] || fail "(c) the lock's symbolic link was followed"
rm "$tmp/c.db.lock"
# the cell log: the first run tells where cell logs go (one folder per sweep)
"$GAUNTLET" run "$tmp/fast.yaml" --journal "$tmp/c.db" >"$tmp/out-c1" 2>&1 || { cat "$tmp/out-c1" >&2; fail "(c) the first run failed"; }
log=$(sqlite3 "$tmp/c.db" "SELECT log_path FROM attempts ORDER BY id LIMIT 1")
[ -n "$log" ] || fail "(c) no log path"
# the same matrix in a fresh journal: its sweep folder (named by the second it starts)
# prepared with a symbolic link where the first cell's log goes, for the next few seconds
t=$(date +%s)
for i in 0 1 2 3 4; do
        d2="$tmp/c2/$(date -d "@$((t + i))" +%Y-%m-%dT%H-%M-%S)"
        mkdir -p "$d2"
        ln -s "$tmp/target" "$d2/$(basename "$log")"
done
set +e
"$GAUNTLET" run "$tmp/fast.yaml" --journal "$tmp/c2.db" >"$tmp/out-c2" 2>"$tmp/err-c2"
set -e
[ "$(cat "$tmp/target")" = precious ] || fail "(c) the cell log's symbolic link was followed"
for l in "$tmp"/c2/*/"$(basename "$log")"; do [ -L "$l" ] || fail "(c) the symbolic link $l was replaced"; done
"$GAUNTLET" report --format json "$tmp/c2.db" >"$tmp/r-c2.json"
grep -q "is a symbolic link (not followed)" "$tmp/r-c2.json" ||
        { cat "$tmp/out-c2" "$tmp/err-c2" >&2; fail "(c) the cell's log link is not said"; }
echo "(c) symbolic links at the lock and at a log: refused, targets untouched" >&2

# (d) w and w.logs.db
matrix "$tmp/d.yaml"
"$GAUNTLET" run "$tmp/d.yaml" --journal "$tmp/w" >/dev/null 2>&1 || fail "(d) journal w"
"$GAUNTLET" run "$tmp/d.yaml" --journal "$tmp/w.logs.db" >/dev/null 2>&1 || fail "(d) journal w.logs.db"
lw=$(sqlite3 "$tmp/w" "SELECT log_path FROM attempts" | xargs -n1 dirname | sort -u)
ll=$(sqlite3 "$tmp/w.logs.db" "SELECT log_path FROM attempts" | xargs -n1 dirname | sort -u)
case "$lw" in "$tmp/w.logs/"*) ;; *) fail "(d) w's logs are in $lw" ;; esac
case "$ll" in "$tmp/w.logs.db.logs/"*) ;; *) fail "(d) w.logs.db's logs are in $ll" ;; esac
echo "(d) w -> w.logs/, w.logs.db -> w.logs.db.logs/" >&2
echo "files-ours.sh: all good"
