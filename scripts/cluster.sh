#!/usr/bin/env bash
# A local Slurm 22.05 cluster for fmte's demo and integration tests: munged (own socket), slurmctld,
# slurmd with 8 fake GPUs, optionally slurmdbd + MariaDB (for sacct), all on 127.0.0.1.
#
#   scripts/cluster.sh up [--dbd] [--no-plugin]   start from empty state (stops a running one first)
#   scripts/cluster.sh down                       stop everything (SIGTERM, then SIGKILL after 10 s)
#   scripts/cluster.sh status                     daemons and node state
#   scripts/cluster.sh env                        prints `export SLURM_CONF=...` (eval it)
#   scripts/cluster.sh plugin on|off|lua          JobSubmitPlugins=fmte (with the SPANK plugin),
#                                                 none, or a site-style job_submit.lua; reconfigure
#   scripts/cluster.sh dbd stop|start             stops or starts slurmdbd alone (a cluster up --dbd):
#                                                 slurmctld keeps running and queues accounting
#   scripts/cluster.sh ctld-restart [--fresh]     restarts slurmctld (-c: no jobs kept); --fresh also
#                                                 empties its StateSaveLocation (as on a new cluster)
#
# Environment:
#   FMTE_LAB         lab directory (default: <repo>/.lab); config, state, logs, fake devices live here
#   FMTE_BUILD_DIR   build directory holding slurm_plugin/*.so (default: <repo>/build)
#   FMTE_PLUGIN_DIR  directory of job_submit_fmte.so and spank_fmte.so (default: $FMTE_BUILD_DIR/slurm_plugin)
#   FMTE_CONF        fmte.conf copied beside slurm.conf (default: <repo>/etc/fmte.conf if present;
#                    "none" for no fmte.conf: every key then has its default)
#   FMTE_PORT_BASE   slurmctld port; slurmd, slurmdbd and MariaDB use the next three (default 16817)
#   FMTE_GPU_TYPE    gres type of the 8 fake GPUs (default a100)
#   FMTE_SPANK_ARGS  arguments for spank_fmte.so in plugstack.conf (e.g. "hub_url=http://127.0.0.1:8000")
# Every wait is bounded (20 s per daemon) and checks that the daemon is still alive.
# Facts behind each line: docs/slurm.md §7 (§7.6: the lab cluster and accounting).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
LAB=${FMTE_LAB:-$REPO/.lab}
BUILD_DIR=${FMTE_BUILD_DIR:-$REPO/build}
PLUGIN_DIR=${FMTE_PLUGIN_DIR:-$BUILD_DIR/slurm_plugin}
PORT=${FMTE_PORT_BASE:-16817}
GPU_TYPE=${FMTE_GPU_TYPE:-a100}
ETC=$LAB/etc
export SLURM_CONF=$ETC/slurm.conf
WAIT_S=20

log() { echo "cluster: $*" >&2; }
die() { echo "cluster: error: $*" >&2; exit 1; }

stock_plugin_dir() {
  local d
  for d in /usr/lib/x86_64-linux-gnu/slurm-wlm /usr/lib/aarch64-linux-gnu/slurm-wlm \
           /usr/lib64/slurm /usr/lib/slurm; do
    [ -e "$d/select_cons_tres.so" ] && { echo "$d"; return; }
  done
  die "no Slurm plugin directory found (is slurmctld installed? run scripts/setup.sh)"
}

# wait_until DESC PIDFILE_OR_PID COMMAND...: polls COMMAND every 0.25 s for up to WAIT_S seconds,
# failing early when the daemon died.
wait_until() {
  local desc=$1 pid=$2; shift 2
  local i
  for ((i = 0; i < WAIT_S * 4; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      die "$desc died while starting; see $LAB/log/"
    fi
    sleep 0.25
  done
  die "$desc not ready after ${WAIT_S}s; see $LAB/log/"
}

# Starts a daemon in the foreground mode, detached from our stdio (so test runners are not kept
# waiting on our pipes), and records its pid.
start_daemon() {
  local name=$1; shift
  # The daemons that load fmte's plugins (slurmctld; slurmd, whose slurmstepd loads the SPANK
  # plugin) get FMTE_SANITIZER_PRELOAD as LD_PRELOAD: a sanitized build's plugins need the ASan
  # runtime loaded first (tests/integration/CMakeLists.txt).
  if [ -n "${FMTE_SANITIZER_PRELOAD:-}" ] && { [ "$name" = slurmctld ] || [ "$name" = slurmd ]; }; then
    set -- env LD_PRELOAD="$FMTE_SANITIZER_PRELOAD" "$@"
  fi
  "$@" </dev/null >"$LAB/log/$name.stdout" 2>&1 &
  echo $! >"$LAB/run/$name.pid"
}

pid_of() {
  local f=$LAB/run/$1.pid
  [ -s "$f" ] && cat "$f" || true
}

# Stops the daemon recorded in run/NAME.pid if that pid still runs program NAME.
stop_daemon() {
  local name=$1 prog=$2 pid i
  pid=$(pid_of "$name")
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$prog" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 40; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$pid" 2>/dev/null; then
      log "$name ignored SIGTERM for 10 s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$LAB/run/$name.pid"
}

# Starts slurmctld with no jobs kept (-c) and waits until it answers. Without SLURM_CONF in its
# environment, as in production: the plugin must find fmte.conf from -f.
start_slurmctld() {
  start_daemon slurmctld env -u SLURM_CONF slurmctld -D -c -f "$SLURM_CONF"
  wait_until slurmctld "$(pid_of slurmctld)" sh -c 'scontrol ping | grep -q "is UP"'
}

write_slurm_conf() {
  local with_dbd=$1 plugin=$2 stock
  stock=$(stock_plugin_dir)
  {
    cat <<EOF
# Written by scripts/cluster.sh: a one-node lab cluster for fmte (see docs/slurm.md).
ClusterName=fmte
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$LAB/munge/munge.socket.2
StateSaveLocation=$LAB/state/ctld
SlurmdSpoolDir=$LAB/state/slurmd
SlurmctldPidFile=$LAB/state/slurmctld.pid
SlurmdPidFile=$LAB/state/slurmd.pid
SlurmctldLogFile=$LAB/log/slurmctld.log
SlurmdLogFile=$LAB/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PluginDir=$stock:$PLUGIN_DIR
PlugStackConfig=$ETC/plugstack.conf
$([ -n "$plugin" ] && echo "JobSubmitPlugins=$plugin" || echo "#JobSubmitPlugins=fmte")
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
GresTypes=gpu
ReturnToService=2
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
JobCompType=jobcomp/filetxt
JobCompLoc=$LAB/log/jobcomp.txt
MinJobAge=300
MaxJobCount=100000
EOF
    if [ "$with_dbd" = 1 ]; then
      cat <<EOF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$((PORT + 2))
AccountingStoragePass=socket=$LAB/munge/munge.socket.2
AccountingStorageTRES=gres/gpu,gres/gpu:$GPU_TYPE
AccountingStoreFlags=job_comment,job_env,job_script
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=5
EOF
    else
      cat <<EOF
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
EOF
    fi
    cat <<EOF
NodeName=node1 NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=16 RealMemory=64000 Gres=gpu:$GPU_TYPE:8 State=UNKNOWN
PartitionName=gpu Nodes=node1 Default=YES MaxTime=INFINITE State=UP
EOF
  } >"$ETC/slurm.conf"

  cat >"$ETC/gres.conf" <<EOF
AutoDetect=off
NodeName=node1 Name=gpu Type=$GPU_TYPE File=$LAB/dev/nvidia[0-7]
EOF
  echo "required $PLUGIN_DIR/spank_fmte.so ${FMTE_SPANK_ARGS:-}" >"$ETC/plugstack.conf"

  cat >"$ETC/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$LAB/munge/munge.socket.2
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$((PORT + 2))
SlurmUser=root
DebugLevel=info
LogFile=$LAB/log/slurmdbd.log
PidFile=$LAB/state/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$((PORT + 3))
StorageUser=slurm
StoragePass=slurmpw
StorageLoc=slurm_acct_db
EOF
  chmod 600 "$ETC/slurmdbd.conf"
}

start_dbd() {
  local my=$LAB/mysql
  mkdir -p "$my"
  mariadb-install-db --no-defaults --datadir="$my/data" --user=root \
    --auth-root-authentication-method=normal --skip-test-db >"$LAB/log/mariadb-install.log" 2>&1 ||
    die "mariadb-install-db failed; see $LAB/log/mariadb-install.log"
  start_daemon mariadbd mariadbd --no-defaults --datadir="$my/data" --socket="$my/mysqld.sock" \
    --port=$((PORT + 3)) --bind-address=127.0.0.1 --user=root --pid-file="$my/mariadbd.pid" \
    --log-error="$LAB/log/mariadbd.err" --innodb-buffer-pool-size=128M \
    --innodb-log-file-size=64M --innodb-lock-wait-timeout=900
  wait_until mariadbd "$(pid_of mariadbd)" \
    mariadb --no-defaults -S "$my/mysqld.sock" -uroot -e "SELECT 1"
  mariadb --no-defaults -S "$my/mysqld.sock" -uroot -e "
    CREATE USER 'slurm'@'localhost' IDENTIFIED BY 'slurmpw';
    CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurmpw';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
  start_daemon slurmdbd slurmdbd -D
  wait_until slurmdbd "$(pid_of slurmdbd)" sacctmgr -n list cluster
  sacctmgr -i add cluster fmte >/dev/null
  sacctmgr -i add account fmte >/dev/null
  sacctmgr -i add user root Account=fmte DefaultAccount=fmte >/dev/null
  if [ "$(id -u)" -ne 0 ]; then
    sacctmgr -i add user "$(id -un)" Account=fmte DefaultAccount=fmte >/dev/null
  fi
}

cmd_up() {
  local with_dbd=0 plugin=fmte arg i
  for arg in "$@"; do
    case $arg in
      --dbd) with_dbd=1 ;;
      --no-plugin) plugin= ;;
      *) die "unknown option '$arg' (expected --dbd, --no-plugin)" ;;
    esac
  done
  [ -z "$plugin" ] || [ -e "$PLUGIN_DIR/job_submit_fmte.so" ] ||
    die "$PLUGIN_DIR/job_submit_fmte.so not found: build first (scripts/setup.sh) or set FMTE_BUILD_DIR"
  [ -e "$PLUGIN_DIR/spank_fmte.so" ] || die "$PLUGIN_DIR/spank_fmte.so not found: build first"
  cmd_down quiet
  local t0=$SECONDS
  rm -rf "$LAB"/{etc,state,log,munge,dev,mysql,run}
  mkdir -p "$ETC" "$LAB"/state/ctld "$LAB"/state/slurmd "$LAB"/log "$LAB"/dev "$LAB"/run "$LAB"/munge
  chmod 755 "$LAB/munge"  # munged refuses a socket directory others cannot traverse
  for i in 0 1 2 3 4 5 6 7; do mknod -m 666 "$LAB/dev/nvidia$i" c 1 3; done  # fake GPUs (= /dev/null)
  write_slurm_conf "$with_dbd" "$plugin"
  local conf=${FMTE_CONF:-$REPO/etc/fmte.conf}
  if [ "$conf" != none ] && [ -e "$conf" ]; then cp "$conf" "$ETC/fmte.conf"; fi

  mungekey --create --keyfile="$LAB/munge/munge.key" >/dev/null 2>&1
  munged --key-file="$LAB/munge/munge.key" --socket="$LAB/munge/munge.socket.2" \
    --pid-file="$LAB/munge/munged.pid" --log-file="$LAB/log/munged.log" \
    --seed-file="$LAB/munge/munged.seed" </dev/null >"$LAB/log/munged.stdout" 2>&1
  wait_until munged "" test -s "$LAB/munge/munged.pid"
  cp "$LAB/munge/munged.pid" "$LAB/run/munged.pid"
  wait_until munged "$(pid_of munged)" test -S "$LAB/munge/munge.socket.2"

  [ "$with_dbd" = 1 ] && start_dbd

  start_slurmctld
  start_daemon slurmd slurmd -D -N node1 -f "$SLURM_CONF"
  wait_until "slurmd (node1 idle)" "$(pid_of slurmd)" \
    sh -c '[ "$(sinfo -h -n node1 -o %T)" = idle ]'
  if [ -n "${FMTE_SANITIZER_PRELOAD:-}" ]; then  # the sanitized plugins really run sanitized
    local d
    for d in slurmctld slurmd; do
      grep -q libasan "/proc/$(pid_of "$d")/maps" || die "$d runs without the ASan runtime"
    done
    log "slurmctld and slurmd run with the ASan runtime ($FMTE_SANITIZER_PRELOAD)"
  fi
  log "up in $((SECONDS - t0)) s (lab $LAB$([ "$with_dbd" = 1 ] && echo ", with slurmdbd"))"
  log "clients need: export SLURM_CONF=$SLURM_CONF"
}

# Pids of PID's descendants, deepest last.
descendants() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    echo "$child"
    descendants "$child"
  done
}

# slurmstepd processes outlive slurmd (a job still running when the cluster stops). Ours carry this
# lab's SLURM_CONF in their environment (inherited from slurmd): SIGKILL them and their job processes.
stop_stepds() {
  local pid
  for pid in $(pgrep -x slurmstepd 2>/dev/null || true); do
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$SLURM_CONF" || continue
    kill -KILL $(descendants "$pid") "$pid" 2>/dev/null || true
    log "killed leftover slurmstepd $pid and its job processes"
  done
}

cmd_down() {
  [ -d "$LAB/run" ] || return 0
  local quiet=${1:-}
  # slurmd and slurmctld first (slurmd ignores SIGTERM while it retries a dead controller).
  stop_daemon slurmd slurmd &
  stop_daemon slurmctld slurmctld &
  wait
  stop_stepds
  stop_daemon slurmdbd slurmdbd
  stop_daemon mariadbd mariadbd
  stop_daemon munged munged
  [ -n "$quiet" ] || log "down (lab $LAB)"
}

cmd_status() {
  local name pid state
  for name in munged mariadbd slurmdbd slurmctld slurmd; do
    pid=$(pid_of $name)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then state="running (pid $pid)"; else state="stopped"; fi
    printf '%-10s %s\n' "$name" "$state"
  done
  if [ -n "$(pid_of slurmctld)" ] && kill -0 "$(pid_of slurmctld)" 2>/dev/null; then
    sinfo -o '%P %a %D %T %G' 2>&1 || true
    grep '^#*JobSubmitPlugins' "$SLURM_CONF" || true
  fi
}

cmd_plugin() {
  local want spank
  case ${1:-} in
    on | fmte) want=JobSubmitPlugins=fmte spank=1 ;;
    off | none) want='#JobSubmitPlugins=fmte' spank=0 ;;  # an empty value is a parse error
    # The peer: a site-style job_submit.lua (bench/ctld/job_submit_site.lua), read by slurmctld
    # from the folder of slurm.conf.
    lua) want=JobSubmitPlugins=lua spank=0
      cp "$REPO/bench/ctld/job_submit_site.lua" "$(dirname "$SLURM_CONF")/job_submit.lua" ;;
    # Halves of fmte, to tell their costs apart (scripts/ctld_cost.sh).
    job_submit-only) want=JobSubmitPlugins=fmte spank=0 ;;
    spank-only) want='#JobSubmitPlugins=fmte' spank=1 ;;
    *) die "usage: cluster.sh plugin on|fmte|off|none|lua|job_submit-only|spank-only" ;;
  esac
  [ -f "$SLURM_CONF" ] || die "no cluster in $LAB (run: cluster.sh up)"
  sed -i "s|^#*JobSubmitPlugins=.*|$want|" "$SLURM_CONF"
  # fmte is both plugins: without it sbatch loads no SPANK plugin either (plugstack.conf is re-read
  # by every sbatch).
  local plugstack
  plugstack=$(dirname "$SLURM_CONF")/plugstack.conf
  if [ "$spank" = 1 ]; then
    echo "required $PLUGIN_DIR/spank_fmte.so ${FMTE_SPANK_ARGS:-}" >"$plugstack"
  else
    echo "# no SPANK plugin (cluster.sh plugin ${1})" >"$plugstack"
  fi
  # Reconfigure reloads job_submit plugins only when the list changed (docs/slurm.md §7.4).
  scontrol reconfigure
  wait_until slurmctld "$(pid_of slurmctld)" sh -c 'scontrol ping | grep -q "is UP"'
}

cmd_ctld_restart() {
  [ -f "$SLURM_CONF" ] || die "no cluster in $LAB (run: cluster.sh up)"
  stop_daemon slurmctld slurmctld
  case ${1:-} in
    --fresh) find "$LAB/state/ctld" -mindepth 1 -delete ;;
    "") ;;
    *) die "usage: cluster.sh ctld-restart [--fresh]" ;;
  esac
  start_slurmctld
  # The node registers again (slurmd keeps running) before jobs can be placed.
  wait_until "slurmd (node1 idle)" "$(pid_of slurmctld)" \
    sh -c '[ "$(sinfo -h -n node1 -o %T)" = idle ]'
}

case ${1:-} in
  up) shift; cmd_up "$@" ;;
  ctld-restart) shift; cmd_ctld_restart "$@" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) echo "export SLURM_CONF=$SLURM_CONF" ;;
  plugin) shift; cmd_plugin "$@" ;;
  dbd)
    [ -f "$ETC/slurmdbd.conf" ] || die "no slurmdbd in this lab (cluster.sh up --dbd)"
    case ${2:-} in
      stop) stop_daemon slurmdbd slurmdbd ;;
      start)
        start_daemon slurmdbd slurmdbd -D
        wait_until slurmdbd "$(pid_of slurmdbd)" sacctmgr -n list cluster ;;
      *) die "usage: $0 dbd stop|start" ;;
    esac ;;
  *) echo "usage: $0 up [--dbd] [--no-plugin] | down | status | env | plugin on|off|lua | dbd stop|start" >&2; exit 2 ;;
esac
