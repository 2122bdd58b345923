#!/usr/bin/env bash
# The README's main command: installs what is missing and builds (scripts/setup.sh), starts the local
# Slurm cluster with slurmdbd (scripts/cluster.sh), submits realistic training scripts
# (scripts/demo/*.sbatch, some configured by the files they name: axolotl YAML, torchtitan TOML,
# DeepSpeed JSON) and shows what sbatch, `scontrol show job` and `sacct` print; then stops
# the cluster (also on error or Ctrl-C). About 1-2 minutes once built.
#   scripts/demo.sh   (FMTE_BUILD_DIR: build directory, default build/; FMTE_SKIP_SETUP=1: no build)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
export FMTE_BUILD_DIR=${FMTE_BUILD_DIR:-$REPO/build}
export FMTE_CONF=${FMTE_CONF:-$REPO/scripts/demo/fmte.conf}

bold() { printf '\n\033[1m%s\033[0m\n' "$*"; }

bold "== 1. install and build (scripts/setup.sh $FMTE_BUILD_DIR)"
if [ -z "${FMTE_SKIP_SETUP:-}" ]; then scripts/setup.sh "$FMTE_BUILD_DIR"; else echo "(skipped)"; fi

bold "== 2. start the local cluster: munge, MariaDB + slurmdbd, slurmctld, slurmd with 8 fake A100s"
trap 'bold "== stopping the cluster"; scripts/cluster.sh down' EXIT
timeout 120 scripts/cluster.sh up --dbd
eval "$(scripts/cluster.sh env)"
echo "slurm.conf has: $(grep -E '^(JobSubmitPlugins|PluginDir)=' "$SLURM_CONF" | tr '\n' ' ')"
echo "plugstack.conf: $(cat "$(dirname "$SLURM_CONF")/plugstack.conf")"
echo "fmte.conf:      $(grep -v '^#' "$(dirname "$SLURM_CONF")/fmte.conf" | tr '\n' ' ')"

bold "== 3. a typo in an fmte option is refused by sbatch itself, before any RPC"
echo "\$ sbatch --fmte-method=lorra --wrap 'python train.py'"
sbatch --fmte-method=lorra --wrap 'python train.py' || echo "(exit code $?)"

# The jobs are submitted from a copy of scripts/demo, as a user submits from their project
# directory: the config files the scripts name (configs/) are read there by the SPANK plugin in
# sbatch, and the stand-in jobs write nothing into the repository.
DEMO_DIR=$(mktemp -d /tmp/fmte-demo.XXXXXX)
cp -r scripts/demo/. "$DEMO_DIR"
trap 'bold "== stopping the cluster"; scripts/cluster.sh down; rm -rf "$DEMO_DIR"' EXIT
jobs=()
for script in "$DEMO_DIR"/*.sbatch; do
  name=$(basename "$script")
  bold "== $name"
  grep -E '^# ' "$script" | head -3
  grep -E '^#(SBATCH|FMTE)' "$script" | grep -v -- '--output' || true
  grep -E '^(torchrun|accelerate|deepspeed|python|tune) ' -A6 "$script" | grep -v '^$' || true
  for cfg in $(grep -oE 'configs/[A-Za-z0-9_.-]+' "$script" | sort -u); do
    echo "--- $cfg:"
    grep -vE '^(#|$)' "$DEMO_DIR/$cfg" | head -8
  done
  echo "\$ sbatch $name"
  if out=$(cd "$DEMO_DIR" && sbatch "$name" 2>&1); then
    echo "$out"
    id=$(echo "$out" | sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p')
    jobs+=("$id")
    echo "\$ scontrol show job $id | grep -E 'TimeLimit|TresPerNode|AdminComment'"
    scontrol show job "$id" | grep -oE '(TimeLimit|TresPerNode|AdminComment)=[^ ]*' || true
  else
    echo "$out"
    echo "(exit code: the job was not submitted)"
  fi
done

bold "== 4. wait for the stand-in jobs to finish (at most 60 s)"
for ((i = 0; i < 120; i++)); do
  [ -z "$(squeue -h -o %i)" ] && break
  sleep 0.5
done
squeue

bold "== 5. what accounting keeps (sacct): the fmte: record next to what the job got"
list=$(IFS=,; echo "${jobs[*]}")
for ((i = 0; i < 40; i++)); do  # slurmdbd receives the records asynchronously
  [ "$(sacct -n -X -j "$list" -o State | grep -c COMPLETED)" -ge "${#jobs[@]}" ] && break
  sleep 0.5
done
echo "\$ sacct -X -j $list -o JobID,JobName%14,State,Timelimit,AllocTRES%46"
sacct -X -j "$list" -o JobID,JobName%14,State,Timelimit,AllocTRES%46
echo "\$ sacct -X -n -P -j $list -o JobID,AdminComment"
sacct -X -n -P -j "$list" -o JobID,AdminComment
echo
echo "The same decisions offline: $FMTE_BUILD_DIR/tools/fmte-advise check scripts/demo/3_full_llama70b_1gpu.sbatch"

bold "== 6. the web calculator (fmte-advise serve): estimate, guide, check a job, compare plans"
# Left running after the demo (the cluster is stopped); FMTE_DEMO_SERVE=0 skips it.
if [ "${FMTE_DEMO_SERVE:-1}" != 0 ]; then
  serve_out=$(mktemp)
  nohup "$FMTE_BUILD_DIR/tools/fmte-advise" serve --port "${FMTE_DEMO_PORT:-8080}" \
    >"$serve_out" 2>/dev/null </dev/null &
  serve_pid=$!
  url=
  for ((i = 0; i < 50; i++)); do
    url=$(grep -o 'http://[^ ]*' "$serve_out" || true)
    [ -n "$url" ] && break
    kill -0 "$serve_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -n "$url" ]; then
    echo "fmte calculator: $url   (runs in the background; stop it with: kill $serve_pid)"
  else
    echo "fmte-advise serve did not start (port ${FMTE_DEMO_PORT:-8080} in use? FMTE_DEMO_PORT=0 picks a free one):"
    echo "  $FMTE_BUILD_DIR/tools/fmte-advise serve --port 0"
  fi
  rm -f "$serve_out"
fi
