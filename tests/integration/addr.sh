#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# addr.sh -- the address the client uses is the address checked (issue #32 item 2). The
# host is resolved once per cell, and every request goes to the address where the launched
# server's own socket listens (a numeric URL); the port check looks at exactly the sockets
# that address reaches.
#   (a) host: localhost, the launched server on 127.0.0.1:P, an impostor on [::1]:P that
#       answers everything well: ::1 is an address of localhost (whatever /etc/hosts says,
#       libcurl resolves it so, ::1 first), where a client of the emitted unit would land:
#       crash/port naming the impostor, no unit, and the impostor is never asked.
#   (a') the same in a mount namespace whose /etc/hosts puts ::1 first for localhost, the
#       impostor coming once the server has started.
#   (b) an unrelated IPv6-only listener on [::1]:P with host 127.0.0.1: an address the
#       client never uses, not crash/port, the cell passes and the listener is not asked.
#   (c) a forwarding proxy outside the server's processes holds P: crash/port by default;
#       port_owner: any, or [python3], lets it, and the report says so.
. "$SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || fail "python3 is needed"
command -v jq >/dev/null || fail "jq is needed"
if ! python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>"$tmp/v6.err"; then
        echo "SKIP: no IPv6 loopback here ($(head -c 200 "$tmp/v6.err"))"
        exit 77
fi
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# proxy.py HOST PORT TARGET_PORT LOG: listens on HOST:PORT (IPv6 only for an IPv6 HOST),
# writes a line to LOG per connection, forwards it to 127.0.0.1:TARGET_PORT (0: closes it,
# an unrelated service); LOG.ready once it listens.
cat >"$tmp/proxy.py" <<'PY'
import os, socket, sys, threading
host, port, target, log = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
fam = socket.AF_INET6 if ":" in host else socket.AF_INET
s = socket.socket(fam)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if fam == socket.AF_INET6:
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
s.bind((host, port))
s.listen(64)
open(log + ".ready", "w").close()
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for x in (a, b):
        try:
            x.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
while True:
    c, _ = s.accept()
    with open(log, "a") as f:
        f.write("connection\n")
    if target == 0:
        c.close()
        continue
    try:
        u = socket.create_connection(("127.0.0.1", target))
    except OSError:
        c.close()
        continue
    threading.Thread(target=pipe, args=(c, u), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
PY
# start_proxy NAME HOST PORT TARGET: in its own session, without the attempt's token
start_proxy() {
        env -u GAUNTLET_ATTEMPT setsid python3 "$tmp/proxy.py" "$2" "$3" "$4" "$tmp/conn-$1" >/dev/null 2>&1 &
        echo $! >"$tmp/pids-proxy-$1"
        for _ in $(seq 200); do [ -e "$tmp/conn-$1.ready" ] && return 0; sleep 0.02; done
        fail "proxy $1 did not start"
}
stop_proxy() { kill "$(cat "$tmp/pids-proxy-$1")" 2>/dev/null || true; }
connections() { if [ -f "$tmp/conn-$1" ]; then wc -l <"$tmp/conn-$1"; else echo 0; fi; }

matrix() { # file host port [extra line]
        cat >"$1" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids-server"]
host: $2
port: $3
startup_timeout: 10s
probes: false
stop_timeout: 1s
${4:-}
YAML
}
run_ok() { # name matrix journal
        "$GAUNTLET" run "$2" --journal "$3" >"$tmp/out-$1" 2>"$tmp/err-$1" ||
                { cat "$tmp/out-$1" "$tmp/err-$1" >&2; fail "$1: the sweep did not pass"; }
        "$GAUNTLET" report --format json "$3" >"$tmp/r-$1.json"
        [ "$(jq -r '.cells[0].verdict' "$tmp/r-$1.json")" = pass ] || fail "$1: $(jq -c '.cells[0]' "$tmp/r-$1.json")"
}

# (a) the impostor on [::1]:P is a proxy to a second fixture that serves another model id
port=$(free_port)
iport=$(free_port)
env -u GAUNTLET_ATTEMPT setsid "$FIXTURE" --port "$iport" --model impostor-model --pid-file "$tmp/pids-impostor" \
        >/dev/null 2>&1 &
for _ in $(seq 200); do curl -sf "http://127.0.0.1:$iport/health" >/dev/null 2>&1 && break; sleep 0.02; done
start_proxy a ::1 "$port" "$iport"
curl -sf "http://[::1]:$port/v1/models" | grep impostor-model >/dev/null || fail "the impostor does not answer on [::1]:$port"
: >"$tmp/conn-a"
matrix "$tmp/a.yaml" localhost "$port"
crash_port() { # name matrix journal: the sweep stops, the cell is crash/port naming the impostor
        set +e
        "$GAUNTLET" run "$2" --journal "$3" >"$tmp/out-$1" 2>"$tmp/err-$1"
        local st=$?
        set -e
        [ "$st" -ne 0 ] || { cat "$tmp/out-$1" "$tmp/err-$1" >&2; fail "$1: the sweep passed with an impostor"; }
        "$GAUNTLET" report --format json "$3" >"$tmp/r-$1.json"
        local got
        got=$(jq -r '.cells[0] | "\(.verdict)/\(.cause)"' "$tmp/r-$1.json")
        [ "$got" = crash/port ] || fail "$1: $got, want crash/port ($(jq -c '.cells[0].evidence' "$tmp/r-$1.json"))"
        jq -r '.cells[0].evidence' "$tmp/r-$1.json" | grep '::1' >/dev/null || fail "$1: the evidence does not name [::1]"
        ! "$GAUNTLET" emit systemd "$3" >"$tmp/unit-$1" 2>&1 || fail "$1: a unit was emitted"
}
crash_port a "$tmp/a.yaml" "$tmp/a.db"
[ "$(connections a)" -eq 0 ] || fail "(a) the impostor on [::1]:$port got $(connections a) connections"
grep -q impostor-model "$tmp/r-a.json" "$tmp/out-a" && fail "(a) the impostor's model id is in the report"
stop_proxy a
echo "(a) impostor on [::1]:$port: crash/port, 0 connections, no unit" >&2

# (a') the same where localhost resolves to ::1 first (as on most hosts, not in every
# container): a mount namespace with its own /etc/hosts, the server bound to 127.0.0.1 as
# a server given "localhost" often is (uvicorn). libcurl alone would ask the impostor.
printf '::1 localhost\n127.0.0.1 localhost\n' >"$tmp/hosts"
if unshare -m sh -c "mount --bind '$tmp/hosts' /etc/hosts" 2>"$tmp/ns.err"; then
        # The impostor comes once the server started (before, the fixed port's check
        # refuses the sweep: [::1]:P, an address of localhost, is taken) and the server
        # binds 127.0.0.1 after 3 s of loading.
        port=$(free_port)
        rm -f "$tmp/pids-server6"
        ( for _ in $(seq 300); do [ -s "$tmp/pids-server6" ] && break; sleep 0.02; done
          start_proxy a6 ::1 "$port" "$iport" ) &
        starter=$!
        cat >"$tmp/a6.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, 127.0.0.1, --pid-file, "$tmp/pids-server6", --load-time, "3",
          --no-listen-until-ready]
host: localhost
port: $port
startup_timeout: 10s
stop_timeout: 1s
probes: false
YAML
        set +e
        unshare -m sh -c 'mount --bind "$1/hosts" /etc/hosts && exec "$2" run "$1/a6.yaml" --journal "$1/a6.db"' \
                sh "$tmp" "$GAUNTLET" >"$tmp/out-a6" 2>&1
        st=$?
        set -e
        [ "$st" -ne 0 ] || { cat "$tmp/out-a6" >&2; fail "(a') the sweep passed with an impostor"; }
        wait "$starter"
        "$GAUNTLET" report --format json "$tmp/a6.db" >"$tmp/r-a6.json"
        got=$(jq -r '.cells[0] | "\(.verdict)/\(.cause)"' "$tmp/r-a6.json")
        [ "$got" = crash/port ] || fail "(a') $got, want crash/port: $(jq -c '.cells[0]' "$tmp/r-a6.json")"
        [ -e "$tmp/conn-a6.ready" ] || fail "(a') the impostor never started"
        [ "$(connections a6)" -eq 0 ] || fail "(a') localhost -> ::1 first: the impostor got $(connections a6) connections"
        stop_proxy a6
        echo "(a') localhost resolving to ::1 first: crash/port, the impostor got 0 connections" >&2
else
        echo "(a') skipped: no mount namespace here ($(head -c 200 "$tmp/ns.err"))" >&2
fi

# (b) an unrelated IPv6-only service on [::1]:P (it closes every connection)
for host in 127.0.0.1; do
        port=$(free_port)
        start_proxy "b-$host" ::1 "$port" 0
        matrix "$tmp/b.yaml" "$host" "$port"
        run_ok "b-$host" "$tmp/b.yaml" "$tmp/b-$host.db"
        [ "$(connections "b-$host")" -eq 0 ] || fail "(b) host $host: the unrelated listener was asked"
        stop_proxy "b-$host"
done
echo "(b) unrelated listener on [::1]: pass, not asked" >&2

# (c) the server behind a proxy: the launched script has a service of this test (not a
# process of the cell) start a proxy on 127.0.0.1:P to the fixture it runs on port Q.
mkfifo "$tmp/proxy.fifo"
(
        exec 3<>"$tmp/proxy.fifo"
        while read -r n p q <&3; do start_proxy "$n" 127.0.0.1 "$p" "$q"; done
) &
echo $! >"$tmp/pids-proxyd"
cat >"$tmp/behind.sh" <<'SH'
#!/bin/sh
# behind.sh NAME PORT TMP: the fixture on a port of its own, a proxy on PORT in front
q=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "$1 $2 $q" >"$3/proxy.fifo"
exec "$FIXTURE" --port "$q" --pid-file "$3/pids-behind-$1"
SH
chmod +x "$tmp/behind.sh"
behind() { # file name port [extra]
        cat >"$1" <<YAML
engine: generic
command: [$tmp/behind.sh, $2, "{port}", $tmp]
env: {FIXTURE: $FIXTURE}
port: $3
startup_timeout: 10s
probes: false
stop_timeout: 1s
${4:-}
YAML
}
port=$(free_port)
behind "$tmp/c0.yaml" c0 "$port"
set +e
"$GAUNTLET" run "$tmp/c0.yaml" --journal "$tmp/c0.db" >"$tmp/out-c0" 2>"$tmp/err-c0"
status=$?
set -e
[ "$status" -eq 1 ] || { cat "$tmp/out-c0" "$tmp/err-c0" >&2; fail "(c) default port_owner: exit $status, want 1"; }
"$GAUNTLET" report --format json "$tmp/c0.db" >"$tmp/r-c0.json"
got=$(jq -r '.cells[0] | "\(.verdict)/\(.cause)"' "$tmp/r-c0.json")
[ "$got" = crash/port ] || fail "(c) default port_owner: $got, want crash/port"
stop_proxy c0
for owner in any "[python3]"; do
        port=$(free_port)
        n="c-${owner//[^a-z0-9]/}"
        behind "$tmp/$n.yaml" "$n" "$port" "port_owner: $owner"
        run_ok "$n" "$tmp/$n.yaml" "$tmp/$n.db"
        ev=$(jq -r '.cells[0].evidence' "$tmp/r-$n.json")
        case "$ev" in
        *"port $port at 127.0.0.1: port_owner allows pid "*"(python3)"*"not a process of the server, to hold it"*) ;;
        *) fail "(c) port_owner: $owner: the report does not say so: $ev" ;;
        esac
        [ "$(connections "$n")" -gt 0 ] || fail "(c) port_owner: $owner: nothing went through the proxy"
        "$GAUNTLET" report "$tmp/$n.db" >"$tmp/text-$n"
        grep -q "port $port at 127.0.0.1: port_owner allows pid" "$tmp/text-$n" || fail "(c) the text report does not say so"
        stop_proxy "$n"
done
kill "$(cat "$tmp/pids-proxyd")" 2>/dev/null || true
echo "(c) behind a proxy: crash/port by default, pass with port_owner: any and [python3], said" >&2
echo "addr.sh: all good"
