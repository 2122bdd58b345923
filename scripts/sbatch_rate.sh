#!/usr/bin/env bash
# sbatch submissions per second with and without job_submit/fmte, on one cluster in one run:
# N sequential `sbatch --hold` of a realistic LLM training script, first without the plugin
# (JobSubmitPlugins unset, reconfigured), then with it, then without again; prints jobs/s of each
# and the ratio with/without (target >= 0.95, issue 3 item 7). The held jobs are cancelled.
#   scripts/sbatch_rate.sh [N]        (default N=200; FMTE_BUILD_DIR, FMTE_LAB as for cluster.sh)
# Starts its own cluster (without slurmdbd, as the plugin's cost does not depend on it) and stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200}
# The shipped example: partition gpu has A100s behind untyped GPU requests, so every job is estimated.
export FMTE_CONF=${FMTE_CONF:-$PWD/etc/fmte.conf}
SCRIPT=$PWD/tests/data/scripts/trl_sft_lora_llama8b.sh
[ -f "$SCRIPT" ] || SCRIPT=$PWD/scripts/demo/1_lora_sft_llama8b.sbatch

trap 'scripts/cluster.sh down' EXIT
timeout 120 scripts/cluster.sh up
eval "$(scripts/cluster.sh env)"

# rate: prints jobs/s for N submissions, and how many of the jobs carry an fmte: record
rate() {
  local t0 t1 i
  t0=$(date +%s.%N)
  for ((i = 0; i < N; i++)); do
    sbatch --hold --parsable -o /dev/null "$SCRIPT" >/dev/null 2>&1 || { echo "sbatch failed" >&2; exit 1; }
  done
  t1=$(date +%s.%N)
  # Jobs the plugin decided on carry its record in AdminComment (counted before they are cancelled).
  local decided
  decided=$(scontrol -o show job 2>/dev/null | grep "JobState=PENDING" | grep -c "AdminComment=fmte:" || true)
  scancel --state=PENDING --user="$(id -un)" || true
  python3 -c "print(f'{$N / ($t1 - $t0):.1f} $decided')"
}

sleep 1
scripts/cluster.sh plugin off
read -r without1 decided_without1 <<<"$(rate)"
scripts/cluster.sh plugin on
read -r with decided_with <<<"$(rate)"
scripts/cluster.sh plugin off
read -r without2 decided_without2 <<<"$(rate)"
echo "jobs with an fmte: record: $decided_with of $N with the plugin, $((decided_without1 + decided_without2)) without"
python3 - "$without1" "$with" "$without2" <<'EOF'
import sys
w1, w, w2 = map(float, sys.argv[1:])
base = (w1 + w2) / 2
print(f"without plugin: {w1:.1f} jobs/s, {w2:.1f} jobs/s (mean {base:.1f})")
print(f"with plugin:    {w:.1f} jobs/s")
print(f"ratio with/without: {w / base:.3f} (target >= 0.95)")
EOF
