#!/usr/bin/env bash
# The learning loop end to end on the local cluster that the CTest fixture started
# (scripts/cluster.sh up --dbd): jobs submitted through job_submit/fmte (their #FMTE lines give the
# plugin a model to estimate, it writes its fmte: record into AdminComment), short sleeps standing in
# for training, exported with real sacct (with and without header), read and trained on by
# fmte-retrain, installed atomically into a regressors directory; then the plugin is pointed at that
# directory (RegressorsDir in the lab's fmte.conf, no controller restart) and a new submission must
# show the site correction applied: the record keeps the model's own pred_time_s, adds corr_time_s,
# and the time limit the plugin sets follows the corrected time.
# The jobs give their work (steps=), so the plugin predicts a wall time (pred_time_s) and the time
# target can be trained; the sleeps are far shorter than the predicted training, so the site
# "learns" that jobs here take a small fraction of the prediction (then clamped by the guard).
# The fake GPUs measure no memory (no gres/gpumem, no jobstats), so only the time model is
# trained here; the memory target is covered by tests/learn/site_correction_test.cc.
# Needs SLURM_CONF, FMTE_LAB, FMTE_BUILD_DIR. Every wait is bounded.
set -uo pipefail
: "${SLURM_CONF:?}" "${FMTE_LAB:?}" "${FMTE_BUILD_DIR:?}"
RETRAIN=$FMTE_BUILD_DIR/tools/fmte-retrain
# shellcheck source=sanitizer_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/sanitizer_env.sh"
WORK=$FMTE_LAB/retrain
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
check() { local what=$1; shift; if "$@"; then echo "ok: $what"; else fail "$what: $*"; fi; }
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# 1. Submit jobs of a few shapes that fit one 80 GB GPU (parameter-efficient, short sequences), each
# its own CV group (method, sequence, micro-batch); no time limit, so the plugin sets one from its
# prediction. Each sleeps 1-3 s.
JOBS=()
n=0
shape() {  # shape METHOD SEQ MB STEPS: the #FMTE line of a job
  echo "#FMTE model=meta-llama/Llama-3.1-8B method=$1 seq-len=$2 micro-batch=$3 activation-checkpointing=full steps=$4"
}
for method in lora qlora; do
  for seq in 256 512 1024; do
    for mb in 1 2; do
      n=$((n + 1))
      f=$WORK/job$n.sbatch
      printf '%s\n' '#!/bin/bash' '#SBATCH --gres=gpu:a100:1' "$(shape $method $seq $mb $((20 * n)))" \
        "sleep $((1 + n % 3))" >"$f"
      out=$(sbatch --parsable -o /dev/null -e /dev/null "$f" 2>"$WORK/sbatch.err")
      if [ $? -eq 0 ] && [ -n "$out" ]; then JOBS+=("${out%%;*}"); else echo "  refused: $(cat "$WORK/sbatch.err")"; fi
    done
  done
done
check "jobs accepted (${#JOBS[@]} of $n)" test "${#JOBS[@]}" -ge 8

# 2. Wait until accounting has every job finished with its AdminComment (bounded 120 s).
ids=$(IFS=,; echo "${JOBS[*]}")
done_all=0
for ((i = 0; i < 480; i++)); do
  finished=$(sacct -n -X -P -j "$ids" -o State,AdminComment 2>/dev/null | grep -c '^COMPLETED|fmte:')
  if [ "$finished" -ge "${#JOBS[@]}" ]; then done_all=1; break; fi
  sleep 0.25
done
check "all jobs completed with a record in accounting" test "$done_all" = 1

# 3. Export as sysadmins do: with a header, and without one (then --fields names the columns).
FIELDS=JobID,JobIDRaw,User,JobName,Partition,State,ExitCode,Elapsed,ElapsedRaw,Timelimit,TimelimitRaw,Submit,Start,End,AllocTRES,ReqTRES,TRESUsageInMax,MaxRSS,NNodes,AllocCPUS,NTasks,AdminComment
sacct --parsable2 -j "$ids" -o "$FIELDS" >with_header.psv
sacct --parsable -n -j "$ids" -o "$FIELDS" >no_header.psv
echo "--- export (first lines):"; head -4 with_header.psv

# 4. Read.
"$RETRAIN" read with_header.psv --json >read.json
check "read exits 0" test $? -eq 0
check "no malformed line" test "$(jq_ read.json 'd["malformed"]')" = 0
check "every job found" test "$(jq_ read.json 'd["jobs"]')" -ge "${#JOBS[@]}"
check "steps folded in" test "$(jq_ read.json 'd["steps"]')" -ge "${#JOBS[@]}"
check "every job carries the plugin's record" test "$(jq_ read.json 'd["fmte_records"]')" -ge "${#JOBS[@]}"
check "states" test "$(jq_ read.json 'd["states"].get("COMPLETED", 0)')" -ge "${#JOBS[@]}"
"$RETRAIN" read no_header.psv >/dev/null 2>err.txt
check "no header, no --fields: refused with advice" grep -q -- "--fields" err.txt
"$RETRAIN" read no_header.psv --fields "$FIELDS" --json >read2.json
check "no header with --fields reads the same jobs" test "$(jq_ read2.json 'd["fmte_records"]')" = \
  "$(jq_ read.json 'd["fmte_records"]')"

# 5. Train and install. The records carry pred_time_s (the jobs gave their steps), so the time
# target trains; memory has no measurement on fake GPUs and is skipped with its reason.
DIR=$WORK/regressors
check "records carry the predicted wall time" grep -q 'pred_time_s=' with_header.psv
"$RETRAIN" train with_header.psv --into "$DIR" --json --svg-dir "$WORK" >train.json 2>train.err
rc=$?
check "train exits 0" test "$rc" = 0
check "model installed" test -s "$DIR/sacct_time_correction.json"
check "manifest lists it" grep -q '"sacct_time_correction"' "$DIR/manifest.json"
rows=$(jq_ "$DIR/manifest.json" '[r for r in d["regressors"] if r["key"] == "sacct_time_correction"][0]["rows"]')
echo "  time model trained on $rows jobs"
check "manifest rows > 0" test "${rows:-0}" -gt 0
check "manifest has the residual quantiles" grep -q '"log_residual_quantiles"' "$DIR/manifest.json"
check "manifest has the data range" grep -q '"last_end"' "$DIR/manifest.json"
check "no memory model without measured GPU memory" test ! -e "$DIR/sacct_memory_correction.json"
check "figure written" test -s "$WORK/sacct_time_correction_predicted_vs_actual.svg"
check "one page links the figures" \
  grep -q '<img src="sacct_time_correction_predicted_vs_actual.svg"' "$WORK/index.html"
check "the page holds the report" grep -q 'sacct_time_correction' "$WORK/index.html"
before=$(stat -c %Y.%y "$DIR")
sleep 1
"$RETRAIN" train with_header.psv --into "$DIR" --force >/dev/null 2>&1
check "second install keeps the previous model" test -s "$DIR/sacct_time_correction.prev.json"
check "directory mtime changed (the plugin reloads)" test "$(stat -c %Y.%y "$DIR")" != "$before"
check "no temporary file left" test -z "$(ls -A "$DIR" | grep '^\.fmte-install-')"

# 6. Apply: point the running plugin at DIR (RegressorsDir in the lab's fmte.conf; the plugin
# reloads on the file's change, no restart), submit the first job's shape again (held) and compare
# with the first job. Bounded: the plugin checks for changes every 5 s, so a few probes.
CONF=$(dirname "$SLURM_CONF")/fmte.conf
cp "$CONF" "$WORK/fmte.conf.orig"
PROBES=()
restore() {
  cp "$WORK/fmte.conf.orig" "$CONF"
  for j in "${PROBES[@]}"; do scancel "$j" 2>/dev/null; done
}
trap restore EXIT
echo "RegressorsDir=$DIR" >>"$CONF"
ref=${JOBS[0]}
ref_rec=$(sacct -n -X -P -j "$ref" -o AdminComment)
ref_limit=$(sacct -n -X -P -j "$ref" -o TimelimitRaw)
kv() { tr ';' '\n' <<<"$1" | sed -n "s/^$2=//p" | head -1; }
applied=0
probe=
rec=
for ((i = 0; i < 12 && !applied; i++)); do
  sleep 1
  if ! out=$(sbatch --parsable --hold -o /dev/null -e /dev/null "$WORK/job1.sbatch" 2>"$WORK/sbatch.err"); then
    echo "  probe refused: $(cat "$WORK/sbatch.err")"
    scontrol ping | grep -q 'is UP' || { fail "slurmctld is down after the reload"; break; }
    continue
  fi
  probe=${out%%;*}
  PROBES+=("$probe")
  rec=$(scontrol show job -o "$probe" | tr ' ' '\n' | sed -n 's/^AdminComment=//p')
  if [[ "$rec" == *corr_time_s=* ]]; then applied=1; fi
done
echo "  before: limit ${ref_limit} min, record ${ref_rec}"
[ -n "$probe" ] && echo "  after:  limit $(scontrol show job -o "$probe" | tr ' ' '\n' | sed -n 's/^TimeLimit=//p'), record ${rec}"
check "a new submission carries the corrected time (corr_time_s)" test "$applied" = 1
if ((applied)); then
  check "the record keeps the model's own prediction (pred_time_s unchanged)" \
    test "$(kv "$rec" pred_time_s)" = "$(kv "$ref_rec" pred_time_s)"
  check "the corrected time differs from the model's" \
    python3 -c "import sys; sys.exit(0 if abs(float('$(kv "$rec" corr_time_s)') / float('$(kv "$rec" pred_time_s)') - 1) > 0.05 else 1)"
  new_limit_s=$(kv "$rec" limit_s)
  check "the time limit follows the correction (${ref_limit} min -> $((new_limit_s / 60)) min)" \
    test "$((new_limit_s / 60))" -lt "$ref_limit"
  # fmte-advise with --regressors applies the same correction and says so.
  "$FMTE_BUILD_DIR/tools/fmte-advise" estimate --model meta-llama/Llama-3.1-8B --method lora --seq-len 256 \
    --micro-batch 1 --activation-checkpointing full --steps 20 --gpus 1 --gpu A100-80GB \
    --regressors "$DIR" --json >advise.json 2>advise.err
  check "fmte-advise --regressors shows the correction" \
    test "$(jq_ advise.json 'd["correction"]["time"]["applied"]')" = True
  check "fmte-advise and the plugin agree on the corrected time" \
    python3 -c "import sys; sys.exit(0 if abs($(jq_ advise.json 'd["correction"]["time"]["wall_time_s"]') - float('$(kv "$rec" corr_time_s)')) <= 1 else 1)"
fi
grep 'job_submit/fmte: reloaded\|RegressorsDir' "$FMTE_LAB/log/slurmctld.log" | tail -2

if ((FAILS)); then
  echo "retrain_loop: $FAILS check(s) failed" >&2
  exit 1
fi
echo "retrain_loop: passed"
