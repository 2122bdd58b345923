#!/usr/bin/env bash
# slurmctld's own CPU time per submission without a job_submit plugin, with a site-style
# job_submit.lua (bench/ctld/job_submit_site.lua) and with fmte (job_submit/fmte and the SPANK
# plugin in sbatch), on one local cluster in one run:
#   scripts/ctld_cost.sh [N [ROUNDS]]      (default: 300 submissions per phase, 3 rounds)
# Each round runs the three modes once, in an order rotated from round to round (so the cluster's
# drift over the run falls on every mode alike). A phase switches the plugin, restarts slurmctld on
# an empty state directory (cluster.sh ctld-restart --fresh: nothing left of earlier phases to
# purge or to slow the state directory), submits
# FMTE_CTLD_WARMUP (default 20) untimed jobs at the same pace (the plugin's load and the restarted
# controller's first, slower submissions), resets sdiag, then submits N held copies of a realistic LLM training script
# (tests/data/scripts/trl_sft_lora_llama8b.sh) one after another and reads:
#   - slurmctld's CPU time (utime + stime of /proc/<pid>/stat, every thread, also the ones that
#     ended) over the phase, per submission;
#   - sdiag's REQUEST_SUBMIT_BATCH_JOB average time (the RPC's wall time inside slurmctld);
#   - the phase's wall time (what the users' sbatch calls took together).
# Prints each phase, then per mode the median and spread (min..max) over the rounds, and the ratios
# of the medians: fmte / none (target <= 1.05) and fmte / lua (target < 1). Held jobs are cancelled
# after each phase. FMTE_CTLD_PERF=1 adds one more round with `perf` recording slurmctld in each
# mode (sampling slows the controller, so that round stays out of the medians and ratios) and
# prints, per symbol, the CPU per submission in each mode and fmte's difference from none (where
# fmte's extra cost lies, inside job_submit() or not). FMTE_CTLD_MODES="none lua fmte" (default)
# may also name job_submit-only and spank-only (cluster.sh plugin), the two halves of fmte. FMTE_BUILD_DIR, FMTE_LAB and FMTE_PORT_BASE as for cluster.sh.
# On a machine with two or more CPUs, slurmctld runs on CPU 0 and the submitting sbatch calls (with
# the SPANK plugin's client-side reading, munged and slurmd) on CPU 1, as on a cluster where users
# submit from login nodes: otherwise each sbatch evicts the controller's caches on a shared core and
# the client's work is billed to the controller as cache misses. FMTE_CTLD_PIN=0 turns this off.
# The lab (slurmctld's StateSaveLocation among it) is on tmpfs, /dev/shm/fmte-ctld-lab, unless
# FMTE_LAB says otherwise: on the lab VM's ext4 disk (mounted with online discard) the controller's
# CPU per submission drifted from 1100 to 3067 us and back within one run, in every mode alike,
# which buried the difference being measured; on tmpfs the phases of a mode agree within a tick.
# Without a disk, slurmctld's own cost is at its smallest, so fmte's share is at its largest.
# Resolution: /proc/<pid>/stat counts in ticks of 1/CLK_TCK s (10 ms): 10 ms / N per submission
# (33 us at N=300); the plugin's own cost line is in microseconds.
set -euo pipefail
cd "$(dirname "$0")/.."
TMPFS_LAB=0
if [ -z "${FMTE_LAB:-}" ] && [ -d /dev/shm ]; then export FMTE_LAB=/dev/shm/fmte-ctld-lab TMPFS_LAB=1; fi
N=${1:-300}
ROUNDS=${2:-3}
RATE=${FMTE_CTLD_RATE:-10}  # submissions per second (0: as fast as sbatch returns)
WARMUP=${FMTE_CTLD_WARMUP:-20}
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
# This shell and what it starts (sbatch, and the daemons cluster.sh restarts) run on CPU 1; each
# phase then moves every thread of slurmctld to CPU 0 (threads it starts later inherit that).
if [ "$PIN" = 1 ]; then taskset -p -c 1 $$ >/dev/null; fi

trap 'scripts/cluster.sh down >/dev/null 2>&1 || true; [ "$TMPFS_LAB" = 1 ] && rm -rf "$FMTE_LAB"; [ -n "${FMTE_CTLD_KEEP:-}" ] && cp -r "$OUT" "$FMTE_CTLD_KEEP"; rm -rf "$OUT"' EXIT
timeout 120 scripts/cluster.sh up >/dev/null
eval "$(scripts/cluster.sh env)"
ctld_pid() { pgrep -f "slurmctld -D -c -f $SLURM_CONF" | head -1; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

phase() {  # mode round [perf]
  local mode=$1 round=$2 pid t0 t1 c0 c1 i sdiag_avg decided
  scripts/cluster.sh plugin "$mode" >/dev/null
  # A new slurmctld on an empty state directory: no job of an earlier phase is purged during this
  # one (MinJobAge) and the directories' inodes start alike (ext4 directories never shrink).
  scripts/cluster.sh ctld-restart --fresh >/dev/null
  sbatch --hold --parsable -o /dev/null "$SCRIPT" >/dev/null
  for ((i = 1; i < WARMUP; i++)); do
    sbatch --hold --parsable -o /dev/null "$SCRIPT" >/dev/null 2>&1
    if [ "$RATE" != 0 ]; then sleep "$(awk -v r="$RATE" 'BEGIN {printf "%.3f", 0.7 / r}')"; fi
  done
  pid=$(ctld_pid)
  if [ "$PIN" = 1 ]; then taskset -a -p -c 0 "$pid" >/dev/null; fi
  sdiag -r >/dev/null
  if [ "${3:-}" = perf ]; then
    perf record -q -F 10000 -p "$pid" -o "$OUT/perf-$mode.data" >/dev/null 2>&1 &
    local perf_pid=$!
    sleep 1
  fi
  c0=$(cpu_ticks "$pid")
  t0=$(date +%s.%N)
  local t0_us=${EPOCHREALTIME/./}
  for ((i = 0; i < N; i++)); do
    # FMTE_CTLD_DISTINCT=1: a time limit of its own per submission (480 + i minutes), so that no
    # two submissions are the same job and fmte decides each one afresh (its DecisionCache only
    # serves repeats of a recent submission); every mode gets the same options.
    local extra=()
    if [ "${FMTE_CTLD_DISTINCT:-0}" = 1 ]; then extra=(--time=$((480 + i + round * N))); fi
    sbatch --hold --parsable -o /dev/null "${extra[@]}" "$SCRIPT" >/dev/null 2>&1 || { echo "sbatch failed ($mode)" >&2; exit 1; }
    # Paced: submission i+1 starts no earlier than t0 + (i+1)/RATE.
    if [ "$RATE" != 0 ]; then
      local now_us=${EPOCHREALTIME/./} d
      d=$((t0_us + (i + 1) * 1000000 / RATE - now_us))
      if [ "$d" -gt 0 ]; then sleep "$(printf '%d.%06d' $((d / 1000000)) $((d % 1000000)))"; fi
    fi
  done
  t1=$(date +%s.%N)
  c1=$(cpu_ticks "$pid")
  if [ "${3:-}" = perf ]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; fi
  sdiag_avg=$(sdiag | awk '/REQUEST_SUBMIT_BATCH_JOB/ {for (i = 1; i <= NF; i++) if ($i ~ /^ave_time:/) {sub("ave_time:", "", $i); print $i}}')
  decided=$(scontrol -o show job 2>/dev/null | grep "JobState=PENDING" | grep -c "AdminComment=fmte:" || true)
  scancel --state=PENDING --user="$(id -un)" || true
  if [ "${3:-}" != perf ]; then echo "$mode $round $(((c1 - c0))) $t0 $t1 ${sdiag_avg:-0} $decided" >>"$OUT/phases"; fi
  python3 -c "print(f'{\"$mode\":5} round $round: {($c1 - $c0) / $TICK / $N * 1e6:7.0f} us CPU per submission, sdiag ave {${sdiag_avg:-0}:6} us, {$N / ($t1 - $t0):5.1f} jobs/s, {$decided} with an fmte: record')"
}

read -r -a modes <<<"${FMTE_CTLD_MODES:-none lua fmte}"
M=${#modes[@]}
LAST=$ROUNDS
if [ "${FMTE_CTLD_PERF:-0}" = 1 ]; then LAST=$((ROUNDS + 1)); fi
for ((r = 1; r <= LAST; r++)); do
  for ((k = 0; k < M; k++)); do
    m=${modes[$(((k + r - 1) % M))]}
    extra=""
    if [ "$r" -gt "$ROUNDS" ]; then extra=perf; fi
    phase "$m" "$r" $extra
  done
done

python3 - "$OUT/phases" "$N" "$TICK" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
n, tick = int(sys.argv[2]), int(sys.argv[3])
per = {}
by_round = {}
for mode, rnd, ticks, t0, t1, sd, _ in rows:
    per.setdefault(mode, []).append((int(ticks) / tick / n * 1e6, float(sd), n / (float(t1) - float(t0))))
    by_round.setdefault(rnd, {})[mode] = int(ticks)
med = {}
print()
print(f"{'mode':5} {'CPU us/submission: median (min..max)':38} {'sdiag ave us':22} jobs/s")
for mode in per:
    cpu = [c for c, _, _ in per[mode]]; sd = [s for _, s, _ in per[mode]]; rate = [r for _, _, r in per[mode]]
    med[mode] = (statistics.median(cpu), statistics.median(sd))
    print(f"{mode:5} {statistics.median(cpu):6.0f} ({min(cpu):.0f}..{max(cpu):.0f}){'':20} "
          f"{statistics.median(sd):6.0f} ({min(sd):.0f}..{max(sd):.0f}){'':6} {statistics.median(rate):.1f}")
if not all(m in med for m in ("none", "lua", "fmte")):
    sys.exit(0)
print()
def spread(a, b):
    r = sorted(v[a] / v[b] for v in by_round.values() if a in v and b in v and v[b] > 0)
    return f"per round {min(r):.3f}..{max(r):.3f}, median {statistics.median(r):.3f}" if r else ""
print(f"CPU per submission, fmte / none: {med['fmte'][0] / med['none'][0]:.3f} (target <= 1.05; {spread('fmte', 'none')})")
print(f"CPU per submission, fmte / lua:  {med['fmte'][0] / med['lua'][0]:.3f} (target < 1; {spread('fmte', 'lua')})")
print(f"CPU per submission, lua / none:  {med['lua'][0] / med['none'][0]:.3f}")
print(f"sdiag ave time, fmte / none: {med['fmte'][1] / max(med['none'][1], 1):.3f}; lua / none: {med['lua'][1] / max(med['none'][1], 1):.3f}")
EOF
# job_submit's own time, as the plugin counts it (its "cost over" line at each unload, so one per
# fmte phase once the next phase restarts slurmctld; the last one at the cluster's shutdown).
scripts/cluster.sh down >/dev/null 2>&1 || true
LOG=$(sed -n 's/^SlurmctldLogFile=//p' "$SLURM_CONF")
grep -h "job_submit/fmte: cost over" "$LOG" 2>/dev/null | sed 's/.*job_submit\/fmte: //' >"$OUT/cost" || true
if [ -s "$OUT/cost" ]; then
  echo
  echo "job_submit/fmte's own time per submission (its cost line at each unload):"
  sed 's/^/  /' "$OUT/cost"
  python3 - "$OUT/phases" "$N" "$TICK" "$OUT/cost" "$ROUNDS" <<'EOF2'
import re, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
n, tick = int(sys.argv[2]), int(sys.argv[3])
none = [int(t) / tick / n * 1e6 for m, _, t, *_ in rows if m == "none"]
# One line per fmte phase, in order; a perf round's phase (after ROUNDS) is left out.
means = [int(m) for m in re.findall(r"mean (\d+) us", open(sys.argv[4]).read())][:int(sys.argv[5])]
if none and means:
    print(f"  median {statistics.median(means)} us ({min(means)}..{max(means)}) = "
          f"{statistics.median(means) / statistics.median(none):.3f} of slurmctld's CPU per submission without a plugin")
EOF2
fi
if compgen -G "$OUT/perf-*.data" >/dev/null; then
  # Samples at 10 kHz of slurmctld's CPU (all threads): 100 us each, per submission of the phase.
  for f in "$OUT"/perf-*.data; do
    m=$(basename "$f" .data); m=${m#perf-}
    perf report -i "$f" -n --no-children --sort dso,symbol --stdio 2>/dev/null |
      awk -v m="$m" '/^ +[0-9.]+%/ {n = $2; $1 = ""; $2 = ""; sub(/^ +/, ""); print m "\t" n "\t" $0}'
  done >"$OUT/perf.tsv"
  echo
  echo "perf: slurmctld's CPU per submission by symbol during each mode's last phase (us; 10 kHz samples):"
  python3 - "$OUT/perf.tsv" "$N" <<'EOF3'
import collections, sys
n = int(sys.argv[2])
us = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    mode, samples, sym = line.rstrip("\n").split("\t", 2)
    us[" ".join(sym.split())][mode] = int(samples) * 100 / n
modes = sorted({m for v in us.values() for m in v}, key=lambda m: ("none", "lua", "fmte").index(m) if m in ("none", "lua", "fmte") else 9)
totals = {m: sum(v.get(m, 0) for v in us.values()) for m in modes}
print(f"{'':60} " + " ".join(f"{m:>8}" for m in modes) + ("  fmte-none" if {"fmte", "none"} <= set(modes) else ""))
print(f"{'total':60} " + " ".join(f"{totals[m]:8.0f}" for m in modes))
key = (lambda kv: -(kv[1].get("fmte", 0) - kv[1].get("none", 0))) if {"fmte", "none"} <= set(modes) else (lambda kv: -max(kv[1].values()))
for sym, v in sorted(us.items(), key=key)[:30]:
    diff = f"  {v.get('fmte', 0) - v.get('none', 0):+8.1f}" if {"fmte", "none"} <= set(modes) else ""
    print(f"{sym[:60]:60} " + " ".join(f"{v.get(m, 0):8.1f}" for m in modes) + diff)
EOF3
fi
