#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# files.sh -- the files gauntlet writes are its own (docs/journal.md "The journal is a
# file, and stays one"):
#   - reports, unit and script are 0600, written to a temporary file and renamed into
#     place: an existing 0644 file is replaced, a symlink left at the name is replaced and
#     what it pointed to never receives a byte;
#   - --journal /dev/null, /dev/full or a FIFO is refused, and no .lock is made beside it;
#   - x.db and x.sqlite get separate run folders;
#   - a journal deleted mid-run stops the run at its next write, with one line, and no
#     server is left.
. "$SRCDIR/tests/lib.sh"

matrix() { # file load-seconds-of-the-second-cell
        cat >"$1" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}", --answer, OK]
startup_timeout: 30s
stop_timeout: 1s
checks: [{name: ok, prompt: "Reply with exactly: OK", expect: OK}]
env: {API_KEY: sk-files-secret-0123456789}
emit: [systemd, script]
axes:
  load:
    flag: --load-time
    values: ["0.1", "$2"]
YAML
}
matrix "$tmp/m.yaml" 0.2

# 1. Outputs replaced, never written through. An earlier 0644 report, and symlinks at the
#    unit's and the script's names pointing at files of someone else's.
mkdir -p "$tmp/a"
echo old >"$tmp/a/report.md"
chmod 0644 "$tmp/a/report.md"
echo theirs >"$tmp/theirs"
chmod 0644 "$tmp/theirs"
ln -s "$tmp/theirs" "$tmp/a/gauntlet-generic.service"
ln -s "$tmp/theirs" "$tmp/a/launch-generic.sh"
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/a.db" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "run failed"; }
[ "$(cat "$tmp/theirs")" = theirs ] || fail "the symlink's target was written: $(head -c 200 "$tmp/theirs")"
for f in report.md report.json report.html gauntlet-generic.service launch-generic.sh; do
        [ -f "$tmp/a/$f" ] && [ ! -L "$tmp/a/$f" ] || fail "$f is not a regular file of its own"
        [ "$(stat -c %a "$tmp/a/$f")" = 600 ] || fail "$f has mode $(stat -c %a "$tmp/a/$f"), want 600"
done
grep -q 'sk-files-secret' "$tmp/a/gauntlet-generic.service" || fail "the unit lost the real environment"
[ -z "$(find "$tmp/a" -maxdepth 1 -name '.*.*' -print -quit)" ] || fail "a temporary file was left: $(ls -A "$tmp/a")"
echo "outputs: 0600, replaced, the symlinks' target untouched"

# 2. Not a regular file: refused, nothing made beside it. (/dev is not writable without
#    root; as root a .lock there would show.)
mkfifo "$tmp/fifo"
mkdir "$tmp/folder"
for j in /dev/null /dev/full "$tmp/fifo" "$tmp/folder"; do
        before=$(ls -A "$(dirname "$j")" | md5sum)
        rc=0
        "$GAUNTLET" run "$tmp/m.yaml" --journal "$j" >"$tmp/out" 2>&1 || rc=$?
        [ "$rc" = 2 ] || { cat "$tmp/out"; fail "--journal $j: status $rc, want 2"; }
        [ "$(wc -l <"$tmp/out")" = 1 ] && grep -q "^gauntlet: journal '$j' is not a regular file" "$tmp/out" ||
                fail "--journal $j: $(cat "$tmp/out")"
        [ ! -e "$j.lock" ] || fail "--journal $j left $j.lock"
        [ "$(ls -A "$(dirname "$j")" | md5sum)" = "$before" ] || fail "--journal $j made something beside it"
done
[ -z "$(alive_pids)" ] || fail "a refused journal started a server"
echo "/dev/null, /dev/full, a FIFO, a folder: refused, nothing beside them"

# 3. x.db and x.sqlite: two run folders.
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/x.db" >/dev/null 2>&1 || fail "x.db run failed"
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/x.sqlite" >/dev/null 2>&1 || fail "x.sqlite run failed"
[ -f "$tmp/x/report.json" ] || fail "no x/ for x.db"
[ -f "$tmp/x.sqlite.logs/report.json" ] || fail "no x.sqlite.logs/ for x.sqlite"
[ "$(find "$tmp/x" -name '*.log' | wc -l)" = 2 ] || fail "x/ holds $(find "$tmp/x" -name '*.log' | wc -l) logs, want 2"
echo "x.db -> x/, x.sqlite -> x.sqlite.logs/"

# 4. The journal deleted while the second cell loads (5 s): the run stops at its next write,
#    with one line naming it, status 2, the server stopped.
matrix "$tmp/slow.yaml" 5
expect_none_alive "a server of the runs above is left" 5
rm -f "$tmp"/pids-* # the runs above left theirs: count this run's launches only
"$GAUNTLET" run "$tmp/slow.yaml" --journal "$tmp/d.db" >"$tmp/out.d" 2>"$tmp/err.d" &
gpid=$!
for _ in $(seq 300); do
        [ "$(cat "$tmp"/pids-* 2>/dev/null | wc -l)" -ge 2 ] && break
        sleep 0.05
done
[ "$(cat "$tmp"/pids-* 2>/dev/null | wc -l)" -ge 2 ] || fail "the second cell never started"
rm -f "$tmp/d.db" "$tmp/d.db-wal" "$tmp/d.db-shm"
t0=$SECONDS
rc=0
wait "$gpid" || rc=$?
[ "$rc" = 2 ] || { cat "$tmp/err.d"; fail "deleted journal: status $rc, want 2"; }
[ $((SECONDS - t0)) -le 20 ] || fail "deleted journal: the run took $((SECONDS - t0)) s to stop"
grep -c . "$tmp/err.d" | grep -x 1 >/dev/null || { cat "$tmp/err.d"; fail "deleted journal: not one line"; }
grep -q "cannot write the journal '$tmp/d.db': the journal file was deleted or replaced" "$tmp/err.d" ||
        fail "deleted journal: $(cat "$tmp/err.d")"
expect_none_alive "deleted journal: a server is left" 5
echo "deleted journal: stopped with one line, $((SECONDS - t0)) s after the deletion"
echo "files.sh: all good"
