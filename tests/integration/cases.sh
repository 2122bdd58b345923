#!/usr/bin/env bash
# Integration cases against the real cluster that the CTest fixture started (scripts/cluster.sh up
# --dbd with tests/integration/fmte.conf). Usage: cases.sh CASE. Needs SLURM_CONF and FMTE_LAB.
# Every wait is bounded; on failure the relevant slurmctld log lines are printed.
set -uo pipefail
: "${SLURM_CONF:?}" "${FMTE_LAB:?}"
# shellcheck source=sanitizer_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/sanitizer_env.sh"
WORK=$FMTE_LAB/jobs
mkdir -p "$WORK"
cd "$WORK" || exit 1
CASE=${1:?usage: cases.sh CASE}
FAILS=0

fail() {
  echo "FAIL: $*" >&2
  FAILS=$((FAILS + 1))
}
check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else fail "$CASE: $what: $*"; fi
}
contains() { [[ "$1" == *"$2"* ]] || { echo "  expected '$2' in: $1" >&2; return 1; }; }
not_in_file() { ! grep -aq "$1" "$2" || { echo "  did not expect '$1' in $2" >&2; return 1; }; }
lacks() { [[ "$1" != *"$2"* ]] || { echo "  did not expect '$2' in: $1" >&2; return 1; }; }

# sbatch ARGS...: sets OUT, ERR, RC, JOB (the id, empty when refused).
submit() {
  OUT=$(sbatch --parsable -o /dev/null -e /dev/null "$@" 2>"$WORK/stderr")
  RC=$?
  ERR=$(cat "$WORK/stderr")
  JOB=${OUT%%;*}
  echo "sbatch $* -> rc=$RC out='$OUT' err='$ERR'"
}
# field JOB KEY: the value of KEY=... in `scontrol show job` (one-line form).
field() {
  scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}
wait_done() {  # wait_done JOB: until the job left the queue states (bounded 60 s)
  local i state
  for ((i = 0; i < 240; i++)); do
    state=$(field "$1" JobState)
    case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | OUT_OF_MEMORY) return 0 ;; esac
    sleep 0.25
  done
  echo "  job $1 still $state after 60 s" >&2
  return 1
}
sacct_admin_comment() {  # polls accounting (bounded 30 s) until the job's AdminComment arrives
  local i c
  for ((i = 0; i < 120; i++)); do
    c=$(sacct -n -X -P -j "$1" -o AdminComment 2>/dev/null)
    [ -n "$c" ] && { echo "$c"; return 0; }
    sleep 0.25
  done
  return 1
}
script() {  # script NAME LINES...: writes a batch script
  local f=$WORK/$1.sbatch
  shift
  { echo '#!/bin/bash'; printf '%s\n' "$@"; echo 'sleep 1'; } >"$f"
  echo "$f"
}

# The decisions below follow from arithmetic outside fmte's model (see plugin_harness_test.cc):
# full fine-tuning of a 70B model needs >= 16 bytes/parameter (ZeRO paper §3.1) = 1.1 TB, never
# fitting one 80 GB GPU; LoRA on an 8B model at 1k tokens fits one with room to spare.
oversized_rejected() {
  local f
  f=$(script big '#SBATCH --gres=gpu:a100:1' \
    '#FMTE model=meta-llama/Llama-3.1-70B method=full seq-len=4096 micro-batch=1')
  submit "$f"
  check "refused" test "$RC" -ne 0
  check "fmte message" contains "$ERR" "sbatch: error: fmte:"
  check "no job" test -z "$OUT"
}

fitting_job_recorded() {
  local f c
  f=$(script lora '#SBATCH --gres=gpu:a100:1' '#SBATCH -t 5' \
    '#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=1024 micro-batch=1')
  submit "$f"
  check "accepted" test "$RC" -eq 0
  [ -n "$JOB" ] || return
  c=$(field "$JOB" AdminComment)
  check "record in scontrol" contains "$c" "fmte:v1;"
  check "model in record" contains "$c" "model=meta-llama/Llama-3.1-8B"
  check "job ran" wait_done "$JOB"
  c=$(sacct_admin_comment "$JOB")
  check "record in sacct" contains "$c" "fmte:v1;"
}

non_llm_untouched() {
  local f
  f=$(script plain '#SBATCH --gres=gpu:1' '#SBATCH -t 7' 'srun hostname')
  submit "$f"
  check "accepted" test "$RC" -eq 0
  check "silent" test -z "$ERR"
  [ -n "$JOB" ] || return
  check "no record" lacks "$(scontrol show job "$JOB")" "fmte:"
  check "time limit kept" test "$(field "$JOB" TimeLimit)" = "00:07:00"
  check "gpus kept" test "$(field "$JOB" TresPerNode)" = "gres:gpu:1"
}

spank_bad_value_refused() {
  local before after
  before=$(squeue -h -t all -o %i | sort -n | tail -1)
  submit --fmte-method=lorra --wrap true
  check "refused" test "$RC" -ne 0
  check "names the option and the values" contains "$ERR" "fmte: --fmte-method: expected one of full|lora"
  submit --fmte-seq-len=abc --wrap true
  check "refused" test "$RC" -ne 0
  check "names the option" contains "$ERR" "--fmte-seq-len"
  submit --fmte-model=/no/such/model/config.json --wrap true
  check "refused" test "$RC" -ne 0
  after=$(squeue -h -t all -o %i | sort -n | tail -1)
  check "nothing reached the controller" test "$before" = "$after"
}

fmte_lines_honoured() {
  local f c
  f=$(script lines '#SBATCH --gres=gpu:a100:1' \
    '#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=1024 micro-batch=2 lora-r=8')
  submit --hold "$f"
  check "accepted" test "$RC" -eq 0
  [ -n "$JOB" ] || return
  c=$(field "$JOB" AdminComment)
  check "method" contains "$c" "method=lora"
  check "seq-len" contains "$c" "seq=1024"
  check "micro-batch" contains "$c" "mb=2"
  check "lora-r" contains "$c" "lora_r=8"
  scancel "$JOB"
  # SPANK options (here on the command line) take precedence over #FMTE lines.
  submit --hold --fmte-seq-len=512 "$f"
  check "accepted" test "$RC" -eq 0
  [ -n "$JOB" ] || return
  c=$(field "$JOB" AdminComment)
  check "spank wins" contains "$c" "seq=512"
  scancel "$JOB"
}

# Full fine-tuning of Llama-3.1-8B under ZeRO-3: ~128 GB of model states, which do not fit one
# 80 GB GPU but do fit when sharded over several: with RaiseGpus=yes the GPU count is raised.
sharded_job_gets_more_gpus() {
  local f tres n
  f=$(script zero3 '#SBATCH --gres=gpu:a100:1' \
    '#FMTE model=meta-llama/Llama-3.1-8B method=full sharding=zero3 activation-checkpointing=full seq-len=2048 micro-batch=1')
  submit --hold "$f"
  check "accepted" test "$RC" -eq 0
  check "notice" contains "$ERR" "fmte:"
  [ -n "$JOB" ] || return
  tres=$(field "$JOB" TresPerNode)
  n=${tres##*:}
  check "more gpus ($tres)" test "$n" -gt 1 -a "$n" -le 8
  check "record says rewrite" contains "$(field "$JOB" AdminComment)" "decision=rewrite"
  scancel "$JOB"
}

modify_rechecked() {
  local f out
  f=$(script modify '#SBATCH --gres=gpu:a100:8' \
    '#FMTE model=meta-llama/Llama-3.1-8B method=full sharding=zero3 activation-checkpointing=full seq-len=2048 micro-batch=1')
  submit --hold "$f"
  check "accepted" test "$RC" -eq 0
  [ -n "$JOB" ] || return
  out=$(scontrol update JobId="$JOB" Gres=gpu:a100:1 2>&1)
  check "shrinking below fit refused" test $? -ne 0
  check "with Slurm's message" contains "$out" "Requested node configuration is not available"
  check "gpus unchanged" test "$(field "$JOB" TresPerNode)" = "gres:gpu:a100:8"
  check "time limit update accepted" scontrol update JobId="$JOB" TimeLimit=30
  check "time limit set" test "$(field "$JOB" TimeLimit)" = "00:30:00"
  scancel "$JOB"
}

# --fmte-model (or an #FMTE line) given as a local directory, or as a Hugging Face id the catalog
# lacks (served by a hub on 127.0.0.1 that this case starts; the fixture set hub_url for
# spank_fmte.so): the SPANK plugin resolves it on the client and forwards the architecture, so the
# controller can estimate (pred_mem in the record) without reading any file itself.
spank_resolves_model() {
  local src=$FMTE_SOURCE_DIR/etc/models/TinyLlama/TinyLlama-1.1B-Chat-v1.0/config.json c i
  rm -rf "$WORK/mymodel" "$WORK/hub" "$FMTE_LAB/hubcache"
  mkdir -p "$WORK/mymodel" "$WORK/hub/test-org/tiny-llama/resolve/main"
  cp "$src" "$WORK/mymodel/config.json"
  cp "$src" "$WORK/hub/test-org/tiny-llama/resolve/main/config.json"
  submit --hold --gres=gpu:a100:1 --fmte-model="$WORK/mymodel" --fmte-method=full --wrap 'sleep 1'
  check "local model accepted" test "$RC" -eq 0
  [ -n "$JOB" ] && check "estimated from the forwarded config" contains "$(field "$JOB" AdminComment)" "pred_mem="
  [ -n "$JOB" ] && scancel "$JOB"
  # The same directory named by an #FMTE line, relative to the submission directory (-D).
  printf '#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#FMTE model=./mymodel method=full\nsleep 1\n' \
    >"$WORK/fmte_local.sbatch"
  submit --hold -D "$WORK" "$WORK/fmte_local.sbatch"
  check "#FMTE local model accepted" test "$RC" -eq 0
  if [ -n "$JOB" ]; then
    c=$(field "$JOB" AdminComment)
    check "#FMTE local model estimated from the forwarded config" contains "$c" "pred_mem="
    check "#FMTE local model named as written" contains "$c" "model=./mymodel"
    scancel "$JOB"
  fi

  python3 -m http.server "${FMTE_HUB_PORT:?}" --bind 127.0.0.1 --directory "$WORK/hub" \
    </dev/null >"$WORK/hub.log" 2>&1 &
  local hub=$!
  for ((i = 0; i < 40; i++)); do
    curl -sf -o /dev/null "http://127.0.0.1:$FMTE_HUB_PORT/" && break
    sleep 0.25
  done
  submit --hold --gres=gpu:a100:1 --fmte-model=test-org/tiny-llama --fmte-method=full --wrap 'sleep 1'
  kill "$hub" 2>/dev/null
  wait "$hub" 2>/dev/null
  check "hub model accepted" test "$RC" -eq 0
  [ -n "$JOB" ] || return
  c=$(field "$JOB" AdminComment)
  check "estimated from the fetched config" contains "$c" "pred_mem="
  check "model id kept" contains "$c" "model=test-org/tiny-llama"
  check "cached" test -f "$FMTE_LAB/hubcache/test-org/tiny-llama/config.json"
  scancel "$JOB"
}

# A DeepSpeed job configured in the JSON file its launch line names (configs/ds.json, or the one
# the script's first argument names), submitted from another directory with -D: the SPANK plugin reads the script as
# sbatch was given it and the file, and forwards what they say (FMTE_READ), so the controller
# decides on the ZeRO stage and micro-batch it never reads itself. Unsharded full fine-tuning of an
# 8B model needs >= 16 bytes/parameter = 128 GB per GPU (ZeRO paper §3.1), more than one 80 GB GPU;
# ZeRO-3 over 8 GPUs divides those 128 GB by 8.
script_files_read_in_sbatch() {
  local dir=$WORK/cfgjob c
  rm -rf "$dir"
  mkdir -p "$dir/configs"
  cat >"$dir/train.sh" <<'EOS'
#!/bin/bash
#SBATCH --gres=gpu:a100:8
DS=configs/${1:-ds.json}
deepspeed --num_gpus 8 train.py --model_name_or_path meta-llama/Llama-3.1-8B \
  --deepspeed "$DS" --max_seq_length 2048 --gradient_checkpointing
sleep 1
EOS
  echo '{"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": true}, "zero_optimization": {"stage": 3}}' \
    >"$dir/configs/ds.json"
  echo '{"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true}, "zero_optimization": {"stage": 0}}' \
    >"$dir/configs/ds_big_batch.json"
  submit --hold -D "$dir" "$dir/train.sh"
  check "zero3 job accepted" test "$RC" -eq 0
  if [ -n "$JOB" ]; then
    c=$(field "$JOB" AdminComment)
    check "stage read from the file" contains "$c" "shard=zero3"
    check "micro-batch read from the file" contains "$c" "mb=1"
    check "model read from the launch line" contains "$c" "model=meta-llama/Llama-3.1-8B"
    check "estimated" contains "$c" "pred_mem="
    # What the SPANK plugin forwarded is not kept with the job: not in the environment file
    # slurmctld saved for it (hash.<id mod 10>/job.<id>/environment in StateSaveLocation).
    local env_file
    env_file="$(scontrol show config | sed -n 's/^StateSaveLocation *= *//p')/hash.$((JOB % 10))/job.$JOB/environment"
    check "job environment saved" test -s "$env_file"
    check "forwarded values not in it" not_in_file "FMTE_READ" "$env_file"
    check "decision not in it" not_in_file "FMTE_DECISION" "$env_file"
    scancel "$JOB"
  fi
  # sbatch sends its SLURM_* environment, where the forwarded values are, whatever --export says.
  local export
  for export in NONE HOME; do
    submit --hold --export="$export" -D "$dir" "$dir/train.sh"
    check "--export=$export: accepted" test "$RC" -eq 0
    [ -n "$JOB" ] && check "--export=$export: stage read from the file" \
      contains "$(field "$JOB" AdminComment)" "shard=zero3"
    [ -n "$JOB" ] && scancel "$JOB"
  done
  submit --hold -D "$dir" "$dir/train.sh" ds_big_batch.json
  check "unsharded job refused" test "$RC" -ne 0
  check "with the estimate" contains "$ERR" "full fine-tuning on 8x"
  check "and what would fit" contains "$ERR" "zero3"
  # Decided in sbatch with the controller's files (the same etc, fmte.conf and build): the
  # controller applied that decision (its rejection line, written at info, says by whom).
  local line
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    line=$(grep -a "job_submit/fmte: submit .*decision=reject" "$LOG" | tail -1)
    [[ "$line" == *"by="* ]] && break
    sleep 0.2
  done
  check "decision made in sbatch" contains "$line" "by=sbatch"
  [ -n "$JOB" ] && scancel "$JOB"
  # A script from standard input cannot be read on the client: the controller reads it itself
  # and, not knowing the ZeRO stage, accepts with a notice rather than reject.
  OUT=$(sbatch --parsable --hold -o /dev/null -e /dev/null -D "$dir" <"$dir/train.sh" 2>"$WORK/stderr")
  RC=$?
  ERR=$(cat "$WORK/stderr")
  JOB=${OUT%%;*}
  check "stdin script accepted" test "$RC" -eq 0
  check "notice names the unread file" contains "$ERR" "configs/ds.json"
  [ -n "$JOB" ] && check "not estimated as read" lacks "$(field "$JOB" AdminComment)" "shard=zero3"
  [ -n "$JOB" ] && scancel "$JOB"
}

# Princeton jobstats ends every job with `sacctmgr modify job ... set AdminComment=JS1:<summary>`,
# which replaces the whole field and with it the plugin's record. The record's copy in the job's
# Comment (AccountingStoreFlags=job_comment) survives; fmte-retrain reads both and the summary.
jobstats_epilog_keeps_record() {
  local f c js fields=JobID,JobIDRaw,State,Elapsed,Timelimit,AllocTRES,AdminComment,Comment
  f=$(script jobstats '#SBATCH --gres=gpu:a100:1' '#SBATCH -t 5' \
    '#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=1024 micro-batch=1')
  submit --comment="user note" "$f"
  check "accepted" test "$RC" -eq 0
  [ -n "$JOB" ] || return
  check "job ran" wait_done "$JOB"
  check "record in accounting" sacct_admin_comment "$JOB"
  # What jobstats' slurmctld epilog (slurm/slurmctldepilog.sh) does: a JS1 summary (base64 of
  # gzipped JSON, 40 GB used on one GPU) written over AdminComment with `sacctmgr -i update job
  # where jobid=N set AdminComment=JS1:...`. Slurm 22.05's sacctmgr lowercases the value, so here
  # the summary arrives but no longer decodes; the record's survival does not depend on it.
  js=$(python3 -c 'import base64,gzip,json; print(base64.b64encode(gzip.compress(json.dumps({"gpus": 1, "nodes": {"n1": {"gpu_used_memory": {"0": 40000000000}, "gpu_total_memory": {"0": 85899345920}}}}).encode())).decode())')
  check "epilog replaced AdminComment" sacctmgr -i update job where jobid="$JOB" set AdminComment="JS1:$js"
  c=$(sacct -n -X -P -j "$JOB" -o AdminComment)
  check "AdminComment holds only the summary" lacks "$c" "fmte:"
  check "the summary is there" contains "${c^^}" "JS1:"
  c=$(sacct -n -X -P -j "$JOB" -o Comment)
  check "Comment keeps the user's note" contains "$c" "user note"
  check "and the record" contains "$c" "fmte:v1;"
  sacct --parsable2 -j "$JOB" -o "$fields" >"$WORK/jobstats.psv"
  "$FMTE_BUILD_DIR/tools/fmte-retrain" read "$WORK/jobstats.psv" --json >"$WORK/jobstats.json"
  check "retrain reads the export" test $? -eq 0
  c=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["fmte_records"], d["jobstats_records"] + d["jobstats_errors"])' "$WORK/jobstats.json")
  check "record and summary both seen ($c)" test "$c" = "1 1"
}

# fmte-advise replay over jobs that ran, from what a sysadmin exports: the stored scripts (sacct
# --batch-script, AccountingStoreFlags=job_script) and a sacct export joined by job id. A stored
# script lacks sbatch's command line and -D: the export's AllocTRES and WorkDir give them back.
# An interactive `srun` asking for a new job has no batch script: slurmctld alone sees nothing to
# read. The SPANK plugin reads srun's own command line (as sbatch --wrap) and forwards it, so the
# same oversized job is refused as it would be in a batch script.
srun_command_read_by_spank() {
  local out rc
  out=$(timeout 30 "${PRELOAD[@]}" srun --gres=gpu:a100:1 -t 5 torchrun --nproc_per_node 1 train.py \
    --model_name_or_path meta-llama/Llama-3.1-70B --per_device_train_batch_size 1 \
    --max_seq_length 4096 --bf16 2>&1)
  rc=$?
  echo "srun -> rc=$rc out='$out'"
  check "refused" test "$rc" -ne 0 -a "$rc" -ne 124
  check "fmte message" contains "$out" "fmte: rejected"
  check "read from srun's command" contains "$out" "meta-llama/Llama-3.1-70B"
}

replay_past_jobs() {
  local dir=$WORK/replay a ja jb c conf strict
  local fields=JobID,JobIDRaw,State,Elapsed,Timelimit,Partition,AllocTRES,NNodes,WorkDir
  conf=$(dirname "$SLURM_CONF")/fmte.conf
  rm -rf "$dir"
  mkdir -p "$dir/configs"
  a=$(script replay_lora '#SBATCH --gres=gpu:a100:1' '#SBATCH -t 5' \
    '#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=1024 micro-batch=1')
  # Full fine-tuning with ZeRO-3 from a file of its submission directory; its #SBATCH line asks
  # for one GPU, sbatch's command line for eight.
  cat >"$dir/train.sh" <<'EOS'
#!/bin/bash
#SBATCH --gres=gpu:a100:1
#SBATCH -t 5
deepspeed train.py --model_name_or_path meta-llama/Llama-3.1-8B --deepspeed configs/ds.json \
  --max_seq_length 2048 --gradient_checkpointing
sleep 1
EOS
  echo '{"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": true}, "zero_optimization": {"stage": 3}}' \
    >"$dir/configs/ds.json"
  submit "$a"
  ja=$JOB
  submit -D "$dir" --gres=gpu:a100:8 "$dir/train.sh"
  jb=$JOB
  check "both accepted" test -n "$ja" -a -n "$jb"
  [ -n "$ja" ] && [ -n "$jb" ] || return
  check "A ran" wait_done "$ja"
  check "B ran" wait_done "$jb"
  check "A in accounting" sacct_admin_comment "$ja"
  check "B in accounting" sacct_admin_comment "$jb"
  sacct -B -j "$ja,$jb" >"$WORK/replay_scripts.txt"
  check "scripts stored" contains "$(cat "$WORK/replay_scripts.txt")" "Batch Script for $jb"
  sacct -X -P -j "$ja,$jb" -o "$fields" >"$WORK/replay_acct.psv"
  "$FMTE_BUILD_DIR/tools/fmte-advise" replay "$WORK/replay_scripts.txt" \
    --sacct "$WORK/replay_acct.psv" --config "$conf" --json >"$WORK/replay.json"
  check "replay ran" test $? -eq 0
  c=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); s = d["summary"]
b = [j for j in d["jobs"] if j["job_id"] == sys.argv[2]][0]
print(s["scripts"], s["joined"], s["decisions"].get("reject", 0), s["false_rejections"],
      b["outcome"], b["gpus"], any(f.endswith("configs/ds.json") for f in b["request"]["files_read"]))
' "$WORK/replay.json" "$jb")
  check "2 scripts, 2 joined, none rejected; B completed on 8 GPUs, its file read ($c)" \
    test "$c" = "2 2 0 0 completed 8 True"
  # A stricter site setting replayed: the same jobs, which completed, would have been refused.
  strict=$WORK/strict.conf
  printf 'GresTypeGpu=a100:A100-80GB\nUsableMemoryFraction=0.05\n' >"$strict"
  c=$("$FMTE_BUILD_DIR/tools/fmte-advise" replay "$WORK/replay_scripts.txt" \
    --sacct "$WORK/replay_acct.psv" --config "$strict")
  check "replay (strict) ran" test $? -eq 0
  check "counts the false rejections" contains "$c" "false rejections (rejected, but the job completed): 2"
}


# --- Faults: the files the running plugin reloads go bad. Every submission must still be answered
# as under the last good files (fail open: the previous settings stay), each fault must be said in
# exactly one slurmctld log line naming the file, and the good files must load again afterwards.
# The plugin looks at its files at most every 5 s (kReloadCheckS), hence the waits.
CONF=$(dirname "$SLURM_CONF")/fmte.conf
LOG=$FMTE_LAB/log/slurmctld.log
reload_wait() { sleep 6; }
log_lines() { grep -a -c -F "$1" "$LOG" || true; }
# decided_as_before WHAT: the oversized job is still refused and the fitting one accepted with its
# record; the next check of the files happens at the first of these submissions.
decided_as_before() {
  local big lora
  big=$(script fault_big '#SBATCH --gres=gpu:a100:1' \
    '#FMTE model=meta-llama/Llama-3.1-70B method=full seq-len=4096 micro-batch=1')
  submit "$big"
  check "$1: the oversized job is still refused by fmte" contains "$RC $ERR" "fmte:"
  check "$1: refused ($RC)" test "$RC" -ne 0
  lora=$(script fault_lora '#SBATCH --gres=gpu:a100:1' '#SBATCH -t 5' '#SBATCH --hold' \
    '#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=1024 micro-batch=1')
  submit "$lora"
  check "$1: the fitting job is accepted" test "$RC" -eq 0 -a -n "$JOB"
  [ -n "$JOB" ] && check "$1: with its record" contains "$(field "$JOB" AdminComment)" "fmte:v1"
  [ -n "$JOB" ] && scancel "$JOB"
}
# one_new_line BEFORE PATTERN FILE WHAT: exactly one new log line with PATTERN since BEFORE lines,
# and it names FILE.
one_new_line() {
  local now
  now=$(log_lines "$2")
  check "$4: one log line ($((now - $1)) new '$2')" test "$((now - $1))" -eq 1
  check "$4: the line names $3" contains "$(grep -a -F "$2" "$LOG" | tail -1)" "$3"
}

fault_fmte_conf() {
  local good=$WORK/fmte.conf.good n
  cp "$CONF" "$good"
  trap 'cp "$good" "$CONF"' EXIT
  n=$(log_lines "reload failed")
  printf 'Mode=sometimes\nRaiseGpus=\001\377\n' >"$CONF"
  reload_wait
  decided_as_before "corrupt fmte.conf"
  one_new_line "$n" "reload failed" "$CONF" "corrupt fmte.conf"
  decided_as_before "corrupt fmte.conf, later"
  one_new_line "$n" "reload failed" "$CONF" "corrupt fmte.conf, said once"

  n=$(log_lines "reload failed")
  mv "$CONF" "$CONF.being-edited"  # half-renamed: an editor's or a config manager's save
  reload_wait
  decided_as_before "fmte.conf missing"
  one_new_line "$n" "reload failed" "$CONF: missing" "fmte.conf missing"

  n=$(log_lines "job_submit/fmte: reloaded")
  mv "$CONF.being-edited" "$CONF"
  cp "$good" "$CONF"
  reload_wait
  decided_as_before "fmte.conf restored"
  one_new_line "$n" "job_submit/fmte: reloaded" "$CONF" "fmte.conf restored"
}

# The catalogs and regressors are copied into the lab and fmte.conf points at the copies
# (CatalogDir=, RegressorsDir=), which are then broken: a truncated gpus.csv, a model's config.json
# corrupted in place, a half-written step-time model renamed into place, an empty one.
fault_catalogs_and_regressors() {
  local good=$WORK/fmte.conf.good n dir=$FMTE_LAB/faults
  cp "$CONF" "$good"
  trap 'cp "$good" "$CONF"' EXIT
  rm -rf "$dir" && mkdir -p "$dir/etc" "$dir/regressors"
  cp -r "$FMTE_SOURCE_DIR/etc/models" "$FMTE_SOURCE_DIR/etc/clusters" "$FMTE_SOURCE_DIR/etc/gpus.csv" "$dir/etc/"
  cp "$FMTE_SOURCE_DIR"/regressors/vtrain/*.json "$dir/regressors/"
  printf 'CatalogDir=%s\nRegressorsDir=%s\n' "$dir/etc" "$dir/regressors" >>"$CONF"
  n=$(log_lines "job_submit/fmte: reloaded")
  reload_wait
  decided_as_before "catalog copies"
  one_new_line "$n" "job_submit/fmte: reloaded" "$CONF" "catalog copies loaded"

  local gpus=$dir/etc/gpus.csv
  cp "$gpus" "$WORK/gpus.good"
  head -c 700 "$WORK/gpus.good" >"$gpus"
  n=$(log_lines "reload failed")
  reload_wait
  decided_as_before "truncated gpus.csv"
  one_new_line "$n" "reload failed" "$gpus" "truncated gpus.csv"
  cp "$WORK/gpus.good" "$gpus"

  local model=$dir/etc/models/meta-llama/Llama-3.1-8B/config.json
  cp "$model" "$WORK/model.good"
  printf '{"architectures": ["LlamaForCausalLM"], "hidden_size": "wide",' >"$model"
  n=$(log_lines "reload failed")
  reload_wait
  decided_as_before "corrupt config.json edited in place"
  one_new_line "$n" "reload failed" "Llama-3.1-8B/config.json" "corrupt config.json"
  cp "$WORK/model.good" "$model"

  local eff=$dir/regressors/efficiency.json
  cp "$eff" "$WORK/eff.good"
  head -c 100 "$WORK/eff.good" >"$dir/regressors/.efficiency.json.tmp"
  mv "$dir/regressors/.efficiency.json.tmp" "$eff"
  n=$(log_lines "reload failed")
  reload_wait
  decided_as_before "truncated step-time model"
  one_new_line "$n" "reload failed" "efficiency.json" "truncated step-time model"
  : >"$eff.tmp" && mv "$eff.tmp" "$eff"
  n=$(log_lines "reload failed")
  reload_wait
  decided_as_before "empty step-time model"
  one_new_line "$n" "reload failed" "efficiency.json" "empty step-time model"

  cp "$WORK/eff.good" "$eff.tmp" && mv "$eff.tmp" "$eff"
  n=$(log_lines "job_submit/fmte: reloaded")
  cp "$good" "$CONF"
  reload_wait
  decided_as_before "shipped files again"
  one_new_line "$n" "job_submit/fmte: reloaded" "$CONF" "shipped files again"
}

# --- Faults outside fmte's files. A model hub that answers garbage, never answers, or is down: the
# SPANK plugin asks it in sbatch (bounded by timeout_ms=3000, FMTE_SPANK_ARGS); sbatch says so in
# one warning naming the model, and the job is still submitted (fail open: the controller then
# reports an unknown model and, with OnError=accept, lets it run unchanged).
hub_answer() {  # hub_answer MODEL WHAT: one submission through the bad hub
  local t0=$SECONDS
  submit --hold --gres=gpu:a100:1 --fmte-model="$1" --fmte-method=full --wrap 'sleep 1'
  check "$2: answered within the hub timeout ($((SECONDS - t0)) s)" test $((SECONDS - t0)) -le 20
  check "$2: the job is submitted" test "$RC" -eq 0 -a -n "$JOB"
  check "$2: one warning" test "$(grep -c 'fmte: warning' "$WORK/stderr")" -eq 1
  check "$2: it names the model" contains "$(grep 'fmte: warning' "$WORK/stderr")" "'$1'"
  [ -n "$JOB" ] && scancel "$JOB"
}
wait_port() {  # wait_port PID: until 127.0.0.1:$FMTE_HUB_PORT accepts (bounded 10 s)
  local i
  for ((i = 0; i < 40; i++)); do
    kill -0 "$1" 2>/dev/null || return 1
    python3 -c "import socket; socket.create_connection(('127.0.0.1', ${FMTE_HUB_PORT:?}), 1)" \
      2>/dev/null && return 0
    sleep 0.25
  done
  return 1
}
fault_hub() {
  local hub
  rm -rf "$WORK/badhub" "$FMTE_LAB/hubcache"
  mkdir -p "$WORK/badhub/test-org/garbage/resolve/main"
  printf '{"hidden_size": [not json' >"$WORK/badhub/test-org/garbage/resolve/main/config.json"
  python3 -m http.server "${FMTE_HUB_PORT:?}" --bind 127.0.0.1 --directory "$WORK/badhub" \
    </dev/null >"$WORK/badhub.log" 2>&1 &
  hub=$!
  check "garbage hub up" wait_port "$hub"
  hub_answer test-org/garbage "hub answers garbage"
  check "garbage is not cached" test ! -e "$FMTE_LAB/hubcache/test-org/garbage/config.json"
  kill "$hub" 2>/dev/null; wait "$hub" 2>/dev/null

  # Accepts connections and never answers.
  python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', ${FMTE_HUB_PORT})); s.listen(16); held = []
while True: held.append(s.accept()[0])" </dev/null >/dev/null 2>&1 &
  hub=$!
  check "silent hub up" wait_port "$hub"
  hub_answer test-org/silent "hub never answers"
  kill "$hub" 2>/dev/null; wait "$hub" 2>/dev/null

  hub_answer test-org/nobody "hub down"
}

# slurmdbd down: slurmctld queues accounting and goes on; fmte, which never talks to slurmdbd from
# slurmctld, decides exactly as before; accounting catches up when slurmdbd is back.
fault_slurmdbd_down() {
  "$FMTE_SOURCE_DIR/scripts/cluster.sh" dbd stop
  trap '"$FMTE_SOURCE_DIR/scripts/cluster.sh" dbd start >/dev/null 2>&1' EXIT
  check "slurmdbd is down" test -z "$(sacctmgr -n list cluster 2>/dev/null)"
  decided_as_before "slurmdbd down"
  "$FMTE_SOURCE_DIR/scripts/cluster.sh" dbd start >/dev/null
  trap - EXIT
  check "slurmdbd is back" test -n "$(sacctmgr -n list cluster 2>/dev/null)"
}

# fmte-advise doctor on the running lab cluster's own files: all well (plugins built for this
# slurmctld, JobSubmitPlugins=fmte, spank_fmte.so in plugstack.conf, the a100 gres type known);
# with JobSubmitPlugins switched to Lua it names that line and exits 1.
# fmte.conf WarnSignal: a job whose time limit fmte sets is signalled before that limit by slurmctld
# itself (here B:USR1 3000 s before a limit of a few minutes, so at slurmctld's next time-limit pass);
# the batch shell's trap proves the signal arrived. A job with its own --signal keeps it.
warn_signal_before_the_limit() {
  local good=$WORK/fmte.conf.warn f got i
  cp "$CONF" "$good"
  trap 'cp "$good" "$CONF"' EXIT
  echo 'WarnSignal=B:USR1@3000' >>"$CONF"
  reload_wait
  got=$WORK/got_usr1
  rm -f "$got"
  f=$WORK/warn.sbatch
  printf '%s\n' '#!/bin/bash' '#SBATCH --gres=gpu:a100:1' \
    '#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=512 micro-batch=1 tokens=100000' \
    "trap 'touch $got; exit 0' USR1" 'sleep 120 & wait' >"$f"
  submit "$f"
  check "accepted" test "$RC" -eq 0
  check "told" contains "$ERR" "Slurm will send signal"
  check "limit set by fmte" contains "$(field "$JOB" AdminComment)" "decision=rewrite"
  for ((i = 0; i < 360; i++)); do
    [ -e "$got" ] && break
    sleep 0.25
  done
  check "signal arrived before the limit" test -e "$got"
  scancel "$JOB" 2>/dev/null
  submit --signal=B:USR2@10 "$f"
  check "own signal: not told" lacks "$ERR" "Slurm will send signal"
  scancel "$JOB" 2>/dev/null
  cp "$good" "$CONF"
  reload_wait
}

# Host memory below the state a job offloads: ZeRO-3 with the optimizer in host memory keeps its
# fp32 master weights and Adam moments there (ZeRO-Offload: 12 bytes per parameter, about 96 GB
# for 8B parameters, on the one node of 8 GPUs); asked through --mem, --mem-per-gpu (job_desc's
# mem_per_tres) and --mem-per-cpu (pn_min_memory's MEM_PER_CPU bit), all under the lab node's
# 64,000 MB, it is told and accepted; without a request, nothing is said.
host_memory_told() {
  local f
  f=$(script offload '#SBATCH --gres=gpu:a100:8' '#SBATCH -t 60' \
    '#FMTE model=meta-llama/Llama-3.1-8B method=full seq-len=2048 micro-batch=1 sharding=zero3 offload-optimizer=true framework=deepspeed')
  for how in --mem=32G --mem-per-gpu=4G "--mem-per-cpu=2G -c 2"; do
    # shellcheck disable=SC2086
    submit -H $how "$f"
    check "$how: accepted" test "$RC" -eq 0
    check "$how: told" contains "$ERR" "host memory: the job asks for"
    check "$how: names the request" contains "$ERR" "${how%%=*}"
    [ -n "$JOB" ] && scancel "$JOB"
  done
  submit -H "$f"
  check "no request: accepted" test "$RC" -eq 0
  check "no request: nothing said" lacks "$ERR" "host memory"
  [ -n "$JOB" ] && scancel "$JOB"
}

doctor_on_the_lab() {
  local out rc
  out=$("$FMTE_BUILD_DIR/tools/fmte-advise" doctor --slurm-conf "$SLURM_CONF" 2>&1)
  rc=$?
  echo "$out"
  check "all well" test "$rc" -eq 0
  check "says so" contains "$out" "doctor: all well"
  check "plugin version compared" contains "$out" "as slurmctld -V says"
  sed 's/^JobSubmitPlugins=.*/JobSubmitPlugins=lua/' "$SLURM_CONF" >"$WORK/doctor_slurm.conf"
  cp "$(dirname "$SLURM_CONF")"/{gres.conf,fmte.conf} "$WORK/" 2>/dev/null
  cp "$(dirname "$SLURM_CONF")/plugstack.conf" "$WORK/" 2>/dev/null
  out=$("$FMTE_BUILD_DIR/tools/fmte-advise" doctor --slurm-conf "$WORK/doctor_slurm.conf" 2>&1)
  rc=$?
  check "lua instead of fmte: exit 1" test "$rc" -eq 1
  check "names the line" contains "$out" "JobSubmitPlugins=lua: add fmte"
}

case $CASE in
  oversized_rejected | fitting_job_recorded | non_llm_untouched | spank_bad_value_refused | \
    fmte_lines_honoured | sharded_job_gets_more_gpus | modify_rechecked | spank_resolves_model | \
    script_files_read_in_sbatch | jobstats_epilog_keeps_record | replay_past_jobs | \
    srun_command_read_by_spank | fault_fmte_conf | fault_catalogs_and_regressors | fault_hub | \
    fault_slurmdbd_down | doctor_on_the_lab | warn_signal_before_the_limit | host_memory_told) "$CASE" ;;
  *) echo "unknown case '$CASE'" >&2; exit 2 ;;
esac

if ((FAILS)); then
  echo "--- job_submit/fmte lines of slurmctld.log:" >&2
  grep -a "job_submit/fmte\|fmte" "$FMTE_LAB/log/slurmctld.log" | tail -20 >&2
  echo "$CASE: $FAILS check(s) failed" >&2
  exit 1
fi
echo "$CASE: passed"
