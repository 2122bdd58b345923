#!/usr/bin/env bash
# slurmctld's own CPU time per submission without a job_submit plugin, with a site-style
# job_submit.lua (bench/ctld/job_submit_site.lua) and with fmte (job_submit/fmte and the SPANK
# plugin in sbatch), measured side by side:
#   scripts/ctld_cost.sh [N [ROUNDS]]      (default: blocks of 20 submissions, 40 rounds)
# Each mode gets a local cluster of its own (cluster.sh, its own lab and ports), all of them up at
# once for the whole run. A round submits one block of N held copies of a realistic LLM training
# script (tests/data/scripts/trl_sft_lora_llama8b.sh) to each cluster in turn, in an order rotated
# from round to round, and reads for that block:
#   - that slurmctld's CPU time over the block: its cpuacct cgroup (nanoseconds, every thread, also
#     the RPC threads that ended) where cgroup v1's cpuacct is writable, else utime + stime of
#     /proc/<pid>/stat (ticks of 1/CLK_TCK s: 10 ms / N per submission);
#   - sdiag's REQUEST_SUBMIT_BATCH_JOB average time (the RPC's wall time inside slurmctld);
#   - the block's wall time.
# The modes' blocks of one round lie seconds apart, so the machine's drift (other tenants, the
# VM's host: 20% within a run when each mode ran its own phases of a minute after a restart) falls
# on every mode alike, and each round gives a ratio of its own. After each block the held jobs are
# cancelled (outside the measurement), so every block starts on an empty queue.
# Prints each round, then per mode the median and spread (min..max) over the rounds, and the
# ratios: of the totals over all rounds, and the median and range of the per-round ratios, for
# fmte / none (target <= 1.05) and fmte / lua (target < 1). FMTE_CTLD_PERF=1 adds one more round
# with `perf` recording each slurmctld during its block (sampling slows the controller, so that
# round stays out of the medians and ratios) and prints, per symbol, the CPU per submission in each
# mode and fmte's difference from none. FMTE_CTLD_MODES="none lua fmte" (default) may also name
# job_submit-only and spank-only (cluster.sh plugin), the two halves of fmte, and MODE+client: MODE
# with the client's work of fmte's SPANK plugin done before each sbatch, in a process of its own
# (`fmte-advise check` of the script: the same reading and decision, nothing forwarded), which
# tells what the client's work costs the controller through the caches the host's CPUs share from
# what the forwarded bytes cost it. MODE@TAG (none@2, fmte@b) is MODE again on a cluster of its
# own: `FMTE_CTLD_MODES="none none@2 fmte"` measures what the method reports for two clusters that
# differ in nothing (an A/A comparison: the resolution of a ratio).
# FMTE_CTLD_RESTART=K restarts every slurmctld after each K rounds (outside the measurement, with
# FMTE_CTLD_WARMUP submissions after it): a process's memory layout (address-space randomisation,
# where its heap and stacks fall in the caches) stays for its whole life and moves its CPU per
# submission by several percent, so a run with one process per mode compares layouts as much as
# plugins; restarts average over several.
# Submissions are paced (FMTE_CTLD_RATE per second, default 10; 0: as fast as sbatch returns): the
# controller's CPU per job depends on the rate, and fmte's SPANK plugin makes each sbatch slower.
# FMTE_CTLD_WARMUP (default 20) untimed submissions per cluster precede the first round.
# On a machine with two or more CPUs, every slurmctld runs on CPU 0 and the submitting sbatch calls
# (with the SPANK plugin's client-side reading, munged and slurmd) on CPU 1, as on a cluster where
# users submit from login nodes: otherwise each sbatch evicts the controller's caches on a shared
# core and the client's work is billed to the controller. FMTE_CTLD_PIN=0 turns this off.
# The labs (slurmctld's StateSaveLocation among them) are on tmpfs, /dev/shm/fmte-ctld-<mode>,
# unless FMTE_LAB gives another prefix: on the lab VM's ext4 disk (mounted with online discard) the
# controller's CPU per submission drifted from 1100 to 3067 us and back within one run. Without a
# disk, slurmctld's own cost is at its smallest, so fmte's share is at its largest.
# FMTE_BUILD_DIR as for cluster.sh; FMTE_PORT_BASE (default 16917) is the first cluster's port, the
# next ones 10 apart. FMTE_CTLD_KEEP=DIR keeps the raw figures.
set -euo pipefail
cd "$(dirname "$0")/.."
LAB_PREFIX=${FMTE_LAB:-}
TMPFS_LAB=0
if [ -z "$LAB_PREFIX" ] && [ -d /dev/shm ]; then LAB_PREFIX=/dev/shm/fmte-ctld TMPFS_LAB=1; fi
LAB_PREFIX=${LAB_PREFIX:-$PWD/.lab-ctld}
N=${1:-20}
ROUNDS=${2:-40}
RATE=${FMTE_CTLD_RATE:-10}
WARMUP=${FMTE_CTLD_WARMUP:-20}
PORT0=${FMTE_PORT_BASE:-16917}
# The catalogs, regressors and fmte.conf the labs use: a copy taken now, so that editing the working
# tree's etc/ or regressors/ during a run changes nothing (it changed the files' fingerprint between
# sbatch and the controller, and the controller then decided those jobs itself until its reload).
if [ -z "${FMTE_ETC_DIR:-}" ] && [ -z "${FMTE_REGRESSORS_DIR:-}" ]; then
  FILES=$LAB_PREFIX-files
  rm -rf "$FILES" && mkdir -p "$FILES" && cp -r etc regressors "$FILES/"
  export FMTE_ETC_DIR=$FILES/etc FMTE_REGRESSORS_DIR=$FILES/regressors
  export FMTE_CONF=${FMTE_CONF:-$FILES/etc/fmte.conf}
fi
export FMTE_CONF=${FMTE_CONF:-$PWD/etc/fmte.conf}
# FMTE_CTLD_SCRIPT: another job script (a non-LLM one shows what fmte costs the other jobs).
# FMTE_CTLD_DISTINCT=1: every submission a different job (below); by default they are all the same
# job, as in a burst of one user's sweep.
SCRIPT=${FMTE_CTLD_SCRIPT:-$PWD/tests/data/scripts/trl_sft_lora_llama8b.sh}
TICK=$(getconf CLK_TCK)
OUT=$(mktemp -d)
PIN=${FMTE_CTLD_PIN:-auto}
if [ "$PIN" = auto ]; then
  if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then PIN=1; else PIN=0; fi
fi
read -r -a modes <<<"${FMTE_CTLD_MODES:-none lua fmte}"
M=${#modes[@]}
CG=/sys/fs/cgroup/cpuacct
ADVISE=${FMTE_BUILD_DIR:-$PWD/build}/tools/fmte-advise
declare -A LAB PORT CONF PID CGROUP
for ((k = 0; k < M; k++)); do
  LAB[${modes[$k]}]=$LAB_PREFIX-${modes[$k]}
  PORT[${modes[$k]}]=$((PORT0 + 10 * k))
done

plugin_of() {  # mode: what cluster.sh plugin sets for it (MODE of MODE+client and MODE@TAG)
  local p=${1%@*}
  echo "${p%+client}"
}
runs_fmte_job_submit() {  # mode: whether its slurmctld loads job_submit/fmte
  case $(plugin_of "$1") in fmte | job_submit-only) return 0 ;; *) return 1 ;; esac
}
on() {  # mode command...: runs a command against that mode's cluster
  local m=$1
  shift
  FMTE_LAB=${LAB[$m]} FMTE_PORT_BASE=${PORT[$m]} SLURM_CONF=${CONF[$m]:-} "$@"
}
cleanup() {
  local m
  for m in "${modes[@]}"; do
    [ -d "${LAB[$m]}" ] || continue
    on "$m" scripts/cluster.sh down >/dev/null 2>&1 || true
  done
  for m in "${modes[@]}"; do
    if [ -n "${CGROUP[$m]:-}" ]; then rmdir "${CGROUP[$m]}" 2>/dev/null || true; fi
    if [ "$TMPFS_LAB" = 1 ]; then rm -rf "${LAB[$m]}"; fi
  done
  if [ -n "${FMTE_CTLD_KEEP:-}" ]; then cp -r "$OUT" "$FMTE_CTLD_KEEP"; fi
  rm -rf "$OUT"
}
trap cleanup EXIT

# This shell and what it starts (sbatch, and the daemons cluster.sh starts) run on CPU 1; each
# slurmctld is moved to CPU 0 (threads it starts later inherit that).
if [ "$PIN" = 1 ]; then taskset -p -c 1 $$ >/dev/null; fi

faults() {  # mode: the slurmctld's page faults so far (minor + major, every thread, ended ones too)
  awk '{print $10 + $12}' "/proc/${PID[$1]}/stat"
}
cpu_ns() {  # mode: the slurmctld's CPU time so far, in nanoseconds
  local m=$1
  if [ -n "${CGROUP[$m]:-}" ]; then
    cat "${CGROUP[$m]}/cpuacct.usage"
  else
    awk -v t="$TICK" '{printf "%.0f\n", ($14 + $15) * 1e9 / t}' "/proc/${PID[$m]}/stat"
  fi
}
submit() {  # mode count first_index: paced held submissions
  local m=$1 count=$2 first=$3 i t0_us now_us d
  t0_us=${EPOCHREALTIME/./}
  for ((i = 0; i < count; i++)); do
    # FMTE_CTLD_DISTINCT=1: a time limit of its own per submission, so that no two submissions
    # are the same job and fmte decides each one afresh (its DecisionCache only serves repeats of
    # a recent submission); every mode gets the same sequence of options.
    local extra=()
    if [ "${FMTE_CTLD_DISTINCT:-0}" = 1 ]; then extra=(--time=$((480 + first + i))); fi
    if [ "${m/+client/}" != "$m" ]; then "$ADVISE" check "$SCRIPT" >/dev/null 2>&1 || true; fi
    on "$m" sbatch --hold --parsable -o /dev/null "${extra[@]}" "$SCRIPT" >/dev/null 2>&1 ||
      { echo "sbatch failed ($m)" >&2; exit 1; }
    # Paced: submission i+1 starts no earlier than t0 + (i+1)/RATE.
    if [ "$RATE" != 0 ]; then
      now_us=${EPOCHREALTIME/./}
      d=$((t0_us + (i + 1) * 1000000 / RATE - now_us))
      if [ "$d" -gt 0 ]; then sleep "$(printf '%d.%06d' $((d / 1000000)) $((d % 1000000)))"; fi
    fi
  done
}

attach() {  # mode: pins the mode's (new) slurmctld to CPU 0, puts it in its cgroup, warms it up
  local m=$1
  PID[$m]=$(cat "${LAB[$m]}/run/slurmctld.pid")
  if [ "$PIN" = 1 ]; then taskset -a -p -c 0 "${PID[$m]}" >/dev/null; fi
  if [ -w "$CG" ] && mkdir -p "$CG/fmte-ctld-$m" 2>/dev/null &&
    echo "${PID[$m]}" >"$CG/fmte-ctld-$m/cgroup.procs" 2>/dev/null; then
    CGROUP[$m]=$CG/fmte-ctld-$m
  fi
  submit "$m" "$WARMUP" 0
  on "$m" scancel --state=PENDING --user="$(id -un)" || true
}
for m in "${modes[@]}"; do
  on "$m" timeout 120 scripts/cluster.sh up >/dev/null
  CONF[$m]=$(on "$m" scripts/cluster.sh env | sed -n 's/^export SLURM_CONF=//p' | tr -d "'\"")
  on "$m" scripts/cluster.sh plugin "$(plugin_of "$m")" >/dev/null
  attach "$m"
done
if [ -n "${CGROUP[${modes[0]}]:-}" ]; then
  echo "CPU time: each slurmctld's cpuacct cgroup (ns)"
else
  echo "CPU time: /proc/<pid>/stat (ticks of $((1000 / TICK)) ms: $((1000000 / TICK / N)) us per submission per block)"
fi

block() {  # mode round [perf]
  local m=$1 round=$2 c0 c1 f0 f1 t0 t1 sdiag_avg decided perf_pid=""
  on "$m" sdiag -r >/dev/null
  if [ "${3:-}" = perf ]; then
    perf record -q -F 10000 -p "${PID[$m]}" -o "$OUT/perf-$m.data" >/dev/null 2>&1 &
    perf_pid=$!
    sleep 1
  fi
  f0=$(faults "$m")
  c0=$(cpu_ns "$m")
  t0=${EPOCHREALTIME}
  submit "$m" "$N" $((WARMUP + (round - 1) * N))
  t1=${EPOCHREALTIME}
  c1=$(cpu_ns "$m")
  f1=$(faults "$m")
  if [ -n "$perf_pid" ]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; fi
  sdiag_avg=$(on "$m" sdiag | awk '/REQUEST_SUBMIT_BATCH_JOB/ {for (i = 1; i <= NF; i++) if ($i ~ /^ave_time:/) {sub("ave_time:", "", $i); print $i}}')
  decided=$(on "$m" scontrol -o show job 2>/dev/null | grep "JobState=PENDING" | grep -c "AdminComment=fmte:" || true)
  on "$m" scancel --state=PENDING --user="$(id -un)" || true
  if [ -z "$perf_pid" ]; then echo "$m $round $((c1 - c0)) $t0 $t1 ${sdiag_avg:-0} $decided $((f1 - f0))" >>"$OUT/blocks"; fi
  printf '%s' "$(python3 -c "print(f' {\"$m\"} {($c1 - $c0) / 1e3 / $N:5.0f} us (sdiag {${sdiag_avg:-0}} us, {$N / ($t1 - $t0):4.1f}/s, {$decided} fmte:, {($f1 - $f0) / $N:.0f} faults)', end='')")"
}

LAST=$ROUNDS
if [ "${FMTE_CTLD_PERF:-0}" = 1 ]; then LAST=$((ROUNDS + 1)); fi
RESTART=${FMTE_CTLD_RESTART:-0}
for ((r = 1; r <= LAST; r++)); do
  if [ "$RESTART" -gt 0 ] && [ "$r" -gt 1 ] && [ $(((r - 1) % RESTART)) = 0 ]; then
    for m in "${modes[@]}"; do
      # job_submit/fmte writes its cost line when a reconfigure unloads it (not at shutdown).
      if runs_fmte_job_submit "$m"; then
        on "$m" scripts/cluster.sh plugin none >/dev/null
        on "$m" scripts/cluster.sh plugin "$(plugin_of "$m")" >/dev/null
      fi
      on "$m" timeout 120 scripts/cluster.sh ctld-restart >/dev/null
      attach "$m"
    done
  fi
  printf 'round %2d%s:' "$r" "$([ "$r" -gt "$ROUNDS" ] && echo " (perf)" || true)"
  for ((k = 0; k < M; k++)); do
    m=${modes[$(((k + r - 1) % M))]}
    if [ "$r" -gt "$ROUNDS" ]; then block "$m" "$r" perf; else block "$m" "$r"; fi
  done
  echo
done

python3 - "$OUT/blocks" "$N" "$RATE" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
n, rate_asked = int(sys.argv[2]), float(sys.argv[3])
per, by_round = {}, {}
for mode, rnd, ns, t0, t1, sd, _, flt in rows:
    us = int(ns) / 1e3 / n
    per.setdefault(mode, []).append((us, float(sd), n / (float(t1) - float(t0)), int(flt) / n))
    by_round.setdefault(rnd, {})[mode] = us
print()
print(f"{'mode':16} {'CPU us/submission: median (min..max)':38} {'sdiag ave us':22} jobs/s  page faults/submission")
for mode, v in per.items():
    cpu, sd, rate, flt = ([x[i] for x in v] for i in range(4))
    print(f"{mode:16} {statistics.median(cpu):6.0f} ({min(cpu):.0f}..{max(cpu):.0f}){'':22} "
          f"{statistics.median(sd):6.0f} ({min(sd):.0f}..{max(sd):.0f}){'':6} {statistics.median(rate):.1f}"
          f"  {statistics.median(flt):7.1f}")
print()
def ratio(a, b):
    r = sorted(v[a] / v[b] for v in by_round.values() if a in v and b in v and v[b] > 0)
    if not r:
        return None
    total = sum(v[a] for v in by_round.values() if a in v and b in v) / sum(v[b] for v in by_round.values() if a in v and b in v)
    q = lambda p: r[min(len(r) - 1, int(p * len(r)))]
    return (f"{total:.3f} (per round: median {statistics.median(r):.3f}, "
            f"middle half {q(0.25):.3f}..{q(0.75):.3f}, range {r[0]:.3f}..{r[-1]:.3f}; {len(r)} rounds)")
targets = {("fmte", "none"): " (target <= 1.05)", ("fmte", "lua"): " (target < 1)"}
pairs = [(a, "none") for a in per if a != "none"] + [("fmte", "lua")]
# MODE@TAG against MODE: two clusters that differ in nothing (the method's resolution).
pairs += [(a, a.split("@")[0]) for a in per if "@" in a and a.split("@")[0] not in ("none", a)
          and a.split("@")[0] in per]
for a, b in pairs:
    text = ratio(a, b)
    if text:
        print(f"CPU per submission, {a} / {b}{targets.get((a, b), '')}: {text}")
for mode, v in per.items():
    held = statistics.median([x[2] for x in v])
    if rate_asked > 0 and held < 0.95 * rate_asked:
        print(f"note: {mode} held {held:.1f} submissions/s of the {rate_asked:g} asked (its sbatch is "
              "slower): the modes are not compared at one rate; lower FMTE_CTLD_RATE")
if "fmte" in per and "none" in per:
    sd = {m: statistics.median([x[1] for x in per[m]]) for m in per}
    print(f"sdiag ave time, fmte / none: {sd['fmte'] / max(sd['none'], 1):.3f}" +
          (f"; lua / none: {sd['lua'] / max(sd['none'], 1):.3f}" if "lua" in sd else ""))
EOF
# job_submit's own time, as the plugin counts it: its "cost over" line when it is unloaded (by
# the reconfigure that removes it: slurmctld's shutdown does not unload it), over the whole run
# (warm-up and any perf round included; with FMTE_CTLD_RESTART, one line per slurmctld).
for m in "${modes[@]}"; do
  runs_fmte_job_submit "$m" || continue
  on "$m" scripts/cluster.sh plugin none >/dev/null 2>&1 || true
  LOG=$(sed -n 's/^SlurmctldLogFile=//p' "${CONF[$m]}")
  grep -h "job_submit/fmte: cost over" "$LOG" 2>/dev/null | sed "s/.*job_submit\/fmte: /  $m: /" || true
done >"$OUT/cost"
if [ -s "$OUT/cost" ]; then
  echo
  echo "job_submit/fmte's own time per submission (its cost line at unload, the whole run):"
  cat "$OUT/cost"
fi
if compgen -G "$OUT/perf-*.data" >/dev/null; then
  # Samples at 10 kHz of slurmctld's CPU (all threads): 100 us each, per submission of the block.
  for f in "$OUT"/perf-*.data; do
    m=$(basename "$f" .data); m=${m#perf-}
    perf report -i "$f" -n --no-children --sort dso,symbol --stdio 2>/dev/null |
      awk -v m="$m" '/^ +[0-9.]+%/ {n = $2; $1 = ""; $2 = ""; sub(/^ +/, ""); print m "\t" n "\t" $0}'
  done >"$OUT/perf.tsv"
  echo
  echo "perf: slurmctld's CPU per submission by symbol during each mode's perf block (us; 10 kHz samples):"
  python3 - "$OUT/perf.tsv" "$N" <<'EOF3'
import collections, sys
n = int(sys.argv[2])
us = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    mode, samples, sym = line.rstrip("\n").split("\t", 2)
    us[" ".join(sym.split())][mode] = int(samples) * 100 / n
order = ("none", "lua", "spank-only", "job_submit-only", "fmte")
modes = sorted({m for v in us.values() for m in v}, key=lambda m: order.index(m) if m in order else 9)
both = {"fmte", "none"} <= set(modes)
totals = {m: sum(v.get(m, 0) for v in us.values()) for m in modes}
print(f"{'':60} " + " ".join(f"{m[:8]:>8}" for m in modes) + ("  fmte-none" if both else ""))
print(f"{'total':60} " + " ".join(f"{totals[m]:8.0f}" for m in modes))
key = (lambda kv: -(kv[1].get("fmte", 0) - kv[1].get("none", 0))) if both else (lambda kv: -max(kv[1].values()))
for sym, v in sorted(us.items(), key=key)[:30]:
    diff = f"  {v.get('fmte', 0) - v.get('none', 0):+8.1f}" if both else ""
    print(f"{sym[:60]:60} " + " ".join(f"{v.get(m, 0):8.1f}" for m in modes) + diff)
EOF3
fi
