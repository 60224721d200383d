#!/usr/bin/env bash
# A one-node Slurm cluster on this machine (slurmctld + slurmd on localhost, Debian's slurm-wlm),
# to try `trestle campaign slurm` scripts without a cluster.
#   scripts/slurm-local.sh start    # installs slurm-wlm and munge when missing (apt-get, as root)
#   scripts/slurm-local.sh status   # sinfo
#   scripts/slurm-local.sh stop
# It writes /etc/slurm/slurm.conf (the previous one is kept as slurm.conf.before-trestle) with
# one node named after this host and one partition `debug`, no cgroups and no accounting;
# state and logs go to /var/lib/slurm-trestle. Daemons run as root (a test bed, not a cluster).
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "slurm-local: run as root (it writes /etc/slurm and starts daemons)" >&2; exit 2; }
state=/var/lib/slurm-trestle
conf=/etc/slurm/slurm.conf
host=$(hostname -s)

install() {
  if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge
  fi
}

write_conf() {
  mkdir -p /etc/slurm "$state/ctld" "$state/d" "$state/log"
  [ -f "$conf" ] && ! grep -q '^# trestle slurm-local' "$conf" && cp "$conf" "$conf.before-trestle"
  # The node's CPUs and memory as slurmd sees them (a mismatch drains the node).
  local node
  node=$(slurmd -C | head -1)
  cat > "$conf" <<EOF
# trestle slurm-local: one node, written by scripts/slurm-local.sh
ClusterName=trestle-local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
ReturnToService=2
$node State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munge() {
  if ! pgrep -x munged >/dev/null; then
    [ -f /etc/munge/munge.key ] || mungekey --create
    mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
    if id munge >/dev/null 2>&1; then runuser -u munge -- munged; else munged --force; fi
  fi
}

stop() {
  for pidfile in "$state/slurmd.pid" "$state/slurmctld.pid"; do
    if [ -f "$pidfile" ]; then
      kill "$(cat "$pidfile")" 2>/dev/null || true
      rm -f "$pidfile"
    fi
  done
}

case ${1:-start} in
  start)
    install
    write_conf
    start_munge
    stop
    slurmctld
    slurmd
    for _ in $(seq 1 60); do
      if sinfo -h -o '%t' 2>/dev/null | grep -qx 'idle'; then
        sinfo
        exit 0
      fi
      sleep 1
    done
    echo "slurm-local: the node did not come up idle; see $state/log" >&2
    sinfo >&2 || true
    exit 1
    ;;
  status) sinfo ;;
  stop) stop ;;
  *) echo "usage: $0 start|status|stop" >&2; exit 2 ;;
esac
