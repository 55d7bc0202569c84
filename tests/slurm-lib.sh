# shellcheck shell=bash
# tests/slurm-lib.sh -- a Slurm cluster of one node on localhost, for the tests that sweep
# through Slurm (tests/integration/slurm*.sh) and tools/measure-slurm.sh. Sourced after
# tests/lib.sh (it needs $tmp and its cleanup).
#
#   slurm_start [CPUS]   munged, slurmctld and slurmd of Debian's packages (22.05), as root,
#                        with everything (munge key, slurm.conf, state, spool, logs, sockets)
#                        in $tmp/slurm and ports the kernel picks, so that it never meets a
#                        Slurm already running on this machine; CPUs are the resource. Exports
#                        SLURM_CONF. Exits 77 (skipped) when not root or a package is missing.
#   slurm_active         the jobs of this cluster still queued or running ("ID|NAME|STATE")
#   slurm_jobs           every job this cluster knows, finished ones too (for MinJobAge)
#
# Whatever happens, the EXIT trap cancels every job, stops the three daemons and ends any
# process that still has this cluster's SLURM_CONF in its environment (slurmstepd, a job's
# tasks), then runs tests/lib.sh's cleanup. Nothing is left behind, so the suite can run
# again (CI runs it twice).

slurm_dir=
slurm_pids=()

slurm_skip() {
        echo "SKIP: $*"
        exit 77
}

# This cluster's processes: the daemons and slurmstepd carry GAUNTLET_TEST_SLURM (given to
# the daemons only, never exported here), a job's tasks the cluster's name, which Slurm
# puts in their environment.
slurm_stragglers() {
        local p
        for p in /proc/[0-9]*; do
                p=${p#/proc/}
                { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null |
                        grep -qxF -e "GAUNTLET_TEST_SLURM=$slurm_dir" -e "SLURM_CLUSTER_NAME=gauntlet$$" && echo "$p"
        done
        return 0
}

slurm_stop() {
        [ -n "$slurm_dir" ] || return 0
        if [ -f "$slurm_dir/slurm.conf" ] && [ ${#slurm_pids[@]} -gt 0 ]; then
                timeout 20 scancel --user="$(id -un)" >/dev/null 2>&1 || true
                local i
                for i in $(seq 50); do
                        [ -z "$(timeout 10 squeue -h -o %i 2>/dev/null)" ] && break
                        sleep 0.2
                done
        fi
        local p i left
        for p in "${slurm_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
        for i in $(seq 100); do
                left=
                for p in "${slurm_pids[@]}"; do pid_running "$p" && left=1; done
                [ -z "$left" ] && break
                sleep 0.1
        done
        for p in "${slurm_pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
        for p in $(slurm_stragglers); do kill -KILL "$p" 2>/dev/null || true; done
        slurm_pids=()
}

slurm_cleanup() {
        slurm_stop
        cleanup
}
trap slurm_cleanup EXIT

# A TCP port nothing listens on now.
slurm_free_port() {
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

slurm_start() {
        local cpus=${1:-8} c
        [ "$(id -u)" = 0 ] || slurm_skip "the Slurm tests run the daemons as root (SlurmUser=root)"
        for c in munged slurmctld slurmd srun squeue scontrol scancel sinfo python3; do
                command -v "$c" >/dev/null || slurm_skip "no $c (apt-get install slurmctld slurmd slurm-client munge)"
        done
        slurm_dir=$tmp/slurm
        mkdir -p "$slurm_dir/state" "$slurm_dir/spool"
        # munged wants every folder above its socket searchable by all
        chmod 711 "$tmp" "$slurm_dir"
        dd if=/dev/urandom of="$slurm_dir/munge.key" bs=1024 count=1 status=none
        chmod 400 "$slurm_dir/munge.key"
        env GAUNTLET_TEST_SLURM="$slurm_dir" munged -F --socket="$slurm_dir/munge.socket" --key-file="$slurm_dir/munge.key" \
                --pid-file="$slurm_dir/munged.pid" --log-file="$slurm_dir/munged.log" \
                --seed-file="$slurm_dir/munge.seed" >"$slurm_dir/munged.out" 2>&1 &
        slurm_pids+=($!)
        local i
        for i in $(seq 100); do [ -S "$slurm_dir/munge.socket" ] && break; sleep 0.05; done
        [ -S "$slurm_dir/munge.socket" ] || fail "munged did not start: $(cat "$slurm_dir/munged.out")"
        local ctld_port slurmd_port
        ctld_port=$(slurm_free_port)
        slurmd_port=$(slurm_free_port)
        [ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$(slurm_free_port)
        cat >"$slurm_dir/slurm.conf" <<EOF
ClusterName=gauntlet$$
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$slurm_dir/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
MailProg=/bin/true
StateSaveLocation=$slurm_dir/state
SlurmdSpoolDir=$slurm_dir/spool
SlurmctldPidFile=$slurm_dir/slurmctld.pid
SlurmdPidFile=$slurm_dir/slurmd.pid
SlurmctldLogFile=$slurm_dir/slurmctld.log
SlurmdLogFile=$slurm_dir/slurmd.log
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=5
MinJobAge=600
NodeName=gauntlet NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=gauntlet Default=YES MaxTime=INFINITE State=UP
PartitionName=closed Nodes=gauntlet State=DOWN
EOF
        export SLURM_CONF=$slurm_dir/slurm.conf
        env GAUNTLET_TEST_SLURM="$slurm_dir" slurmctld -D -i -f "$SLURM_CONF" >"$slurm_dir/slurmctld.out" 2>&1 &
        slurm_pids+=($!)
        env GAUNTLET_TEST_SLURM="$slurm_dir" slurmd -D -f "$SLURM_CONF" -N gauntlet >"$slurm_dir/slurmd.out" 2>&1 &
        slurm_pids+=($!)
        for i in $(seq 150); do
                [ "$(timeout 10 sinfo -h -p debug -o %t 2>/dev/null)" = idle ] && return 0
                sleep 0.2
        done
        fail "the Slurm node did not come up: $(timeout 10 sinfo 2>&1); $(tail -n 5 "$slurm_dir"/slurm*.log 2>&1)"
}

slurm_active() {
        squeue -h -o '%i|%j|%T'
}

slurm_jobs() {
        squeue -h --states=all -o '%i|%j|%T'
}
