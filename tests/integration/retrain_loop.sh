#!/usr/bin/env bash
# The learning loop end to end on the local cluster that the CTest fixture started
# (scripts/cluster.sh up --dbd): jobs submitted through job_submit/fmte (their #FMTE lines give the
# plugin a model to estimate, it writes its fmte: record into AdminComment), short sleeps standing in
# for training, exported with real sacct (with and without header), read and trained on by
# fmte-retrain, installed atomically into a regressors directory.
# Needs SLURM_CONF, FMTE_LAB, FMTE_BUILD_DIR. Every wait is bounded.
set -uo pipefail
: "${SLURM_CONF:?}" "${FMTE_LAB:?}" "${FMTE_BUILD_DIR:?}"
RETRAIN=$FMTE_BUILD_DIR/tools/fmte-retrain
WORK=$FMTE_LAB/retrain
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
check() { local what=$1; shift; if "$@"; then echo "ok: $what"; else fail "$what: $*"; fi; }
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# 1. Submit jobs of a few shapes that fit one 80 GB GPU (parameter-efficient, short sequences);
# each sleeps 1-3 s.
JOBS=()
n=0
for method in lora qlora; do
  for seq in 256 512 1024; do
    for mb in 1 2; do
      n=$((n + 1))
      f=$WORK/job$n.sbatch
      printf '%s\n' '#!/bin/bash' '#SBATCH --gres=gpu:a100:1' '#SBATCH -t 5' \
        "#FMTE model=meta-llama/Llama-3.1-8B method=$method seq-len=$seq micro-batch=$mb activation-checkpointing=full" \
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

# 5. Train and install. The time target needs pred_time_s in the records (a time model in the
# plugin); without it there is nothing to train and the tool must say so and install nothing.
DIR=$WORK/regressors
"$RETRAIN" train with_header.psv --into "$DIR" --json --svg-dir "$WORK" >train.json 2>train.err
rc=$?
if grep -q 'pred_time_s=' with_header.psv; then
  check "train exits 0" test "$rc" = 0
  check "model installed" test -s "$DIR/sacct_time_correction.json"
  check "manifest lists it" grep -q '"sacct_time_correction"' "$DIR/manifest.json"
  check "manifest has the data range" grep -q '"last_end"' "$DIR/manifest.json"
  check "figure written" test -s "$WORK/sacct_time_correction_predicted_vs_actual.svg"
  before=$(stat -c %Y.%y "$DIR")
  sleep 1
  "$RETRAIN" train with_header.psv --into "$DIR" --force >/dev/null 2>&1
  check "second install keeps the previous model" test -s "$DIR/sacct_time_correction.prev.json"
  check "directory mtime changed (the plugin reloads)" test "$(stat -c %Y.%y "$DIR")" != "$before"
  check "no temporary file left" test -z "$(ls -A "$DIR" | grep '^\.fmte-install-')"
else
  check "nothing to train is an error" test "$rc" = 1
  check "says why" grep -q "nothing trained" train.err
  check "installs nothing" test ! -e "$DIR/sacct_time_correction.json"
fi

if ((FAILS)); then
  echo "retrain_loop: $FAILS check(s) failed" >&2
  exit 1
fi
echo "retrain_loop: passed"
