#!/usr/bin/env bash
# sbatch submissions per second with and without job_submit/fmte, on one cluster in one run:
# N sequential `sbatch --hold` of a realistic LLM training script per phase, in five alternating
# phases: without the plugin (JobSubmitPlugins unset, reconfigured), with it, without, with, without.
# Alternating cancels the cluster's drift over the run (later phases tend to run faster); each phase
# starts with one untimed submission, so the plugin's one-time load after a reconfigure is not
# counted per job. Prints jobs/s of each phase and the ratio of the means with/without (target
# >= 0.95, docs/slurm.md §6). The held jobs are cancelled.
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
  sbatch --hold --parsable -o /dev/null "$SCRIPT" >/dev/null 2>&1 || { echo "sbatch failed" >&2; exit 1; }
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
without=() with=() decided_with=0 decided_without=0
for phase in off on off on off; do
  scripts/cluster.sh plugin "$phase"
  read -r r decided <<<"$(rate)"
  if [ "$phase" = on ]; then with+=("$r"); decided_with=$((decided_with + decided))
  else without+=("$r"); decided_without=$((decided_without + decided)); fi
done
echo "jobs with an fmte: record: $decided_with of $((2 * N + 2)) with the plugin, $decided_without without"
python3 - "${without[*]}" "${with[*]}" <<'EOF'
import sys
without = [float(x) for x in sys.argv[1].split()]
with_ = [float(x) for x in sys.argv[2].split()]
base, w = sum(without) / len(without), sum(with_) / len(with_)
print("without plugin: " + ", ".join(f"{x:.1f}" for x in without) + f" jobs/s (mean {base:.1f})")
print("with plugin:    " + ", ".join(f"{x:.1f}" for x in with_) + f" jobs/s (mean {w:.1f})")
print(f"ratio with/without: {w / base:.3f} (target >= 0.95)")
EOF
