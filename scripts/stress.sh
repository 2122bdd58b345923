#!/usr/bin/env bash
# A bounded stress run of the real controller with fmte (job_submit and SPANK plugins) on loopback:
#   scripts/stress.sh [N [PARALLEL]]      (default: 100000 submissions, 2 at a time)
# Submits N held jobs, valid and hostile mixed: the realistic scripts of tests/data/scripts and
# scripts/demo, the golden corpus's hostile scripts (tests/golden/scripts) and generated ones
# (random bytes, a 2 MiB script, 10k #FMTE lines, deep quoting), each with a unique job name. Jobs
# are cancelled after every FMTE_STRESS_QUEUE submissions (default 1000; MinJobAge=2), so the
# controller's job table holds the same load throughout (a queue of 10000 held jobs, cancelled at
# once, leaves glibc's arenas holding freed memory in every mode: see docs/hardening.md). Checks, and
# exits 1 unless all hold:
#   - every sbatch answered within 30 s: a job id, or a refusal with its message;
#   - slurmctld's RSS over the last three tenths is within 10% of its RSS over the first three
#     (medians of the samples taken after each tenth: no growth with the number of submissions),
#     and the controller is still up. Meaningful from N ~ 20000: what is bounded by design fills
#     first (the plugin's job tracker keeps up to 4096 admitted jobs or 8 MiB for job_modify);
#   - the decision log holds exactly one job_submit/fmte line per decided submission (no name twice;
#     every refusal by fmte and every job with an fmte: message has its line).
# Prints submissions/s, the answers by kind, RSS samples, and the log check. SlurmctldDebug=verbose
# for the run (accepted jobs' lines are at verbose). FMTE_BUILD_DIR, FMTE_LAB as for cluster.sh.
# FMTE_STRESS_MODE=none runs the same submissions without fmte (cluster.sh plugin none), to tell
# the controller's own RSS growth from fmte's; the decision log is then not checked.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100000}
P=${2:-2}
QUEUE=${FMTE_STRESS_QUEUE:-1000}  # held jobs at most, cancelled in batches
export FMTE_CONF=${FMTE_CONF:-$PWD/etc/fmte.conf}
OUT=$(mktemp -d)
trap 'scripts/cluster.sh down >/dev/null 2>&1 || true; rm -rf "$OUT"' EXIT
timeout 120 scripts/cluster.sh up >/dev/null
eval "$(scripts/cluster.sh env)"
sed -i 's/^SlurmctldDebug=.*/SlurmctldDebug=verbose/; s/^MinJobAge=.*/MinJobAge=2/' "$SLURM_CONF"
MODE=${FMTE_STRESS_MODE:-fmte}
scripts/cluster.sh plugin "$MODE" >/dev/null  # reconfigures
sleep 2
LOG=$(sed -n 's/^SlurmctldLogFile=//p' "$SLURM_CONF")
PID=$(pgrep -f "slurmctld -D -c -f $SLURM_CONF" | head -1)
rss() { awk '/^VmRSS/ {print $2}' "/proc/$PID/status"; }

# The inputs: real scripts, hostile scripts, generated ones.
mkdir -p "$OUT/in"
cp tests/data/scripts/*.sh scripts/demo/*.sbatch "$OUT/in/" 2>/dev/null || true
for f in tests/golden/scripts/*; do [ -f "$f" ] && cp "$f" "$OUT/in/golden_$(basename "$f")"; done
head -c 4096 /dev/urandom >"$OUT/in/gen_random_bytes"
python3 -c "import sys; sys.stdout.write('#!/bin/bash\n#FMTE model=meta-llama/Llama-3.1-8B method=lora\n'
  + 'torchrun --nproc_per_node=8 train.py --bf16 --seq_len 4096 \\\\\n' * 40000 + 'echo\n')" >"$OUT/in/gen_2mib"
{ echo '#!/bin/bash'; for i in $(seq 10000); do echo "#FMTE seq-len=$i micro-batch=$((i % 7))"; done; echo 'python train.py'; } >"$OUT/in/gen_fmte_lines"
{ echo '#!/bin/bash'; printf 'X="%.0s$(' {1..500}; echo; echo 'torchrun --nproc_per_node 4 train.py --model_name_or_path "$X"'; } >"$OUT/in/gen_deep_quotes"
mapfile -t INPUTS < <(ls "$OUT"/in/*)
echo "stress: $N submissions, $P at a time, over ${#INPUTS[@]} scripts ($(ls "$OUT"/in | grep -c '^gen_\|^golden_') hostile)"

submit_range() {  # FIRST LAST: submissions FIRST..LAST, one result line each
  local i f out rc
  for ((i = $1; i <= $2; i++)); do
    f=${INPUTS[$((i % ${#INPUTS[@]}))]}
    rc=0
    out=$(timeout 30 sbatch --hold --parsable -J "stress_$i" -o /dev/null "$f" 2>&1) || rc=$?
    if [ "$rc" = 124 ]; then echo "$i timeout"
    elif [ "$rc" = 0 ]; then
      case $out in *fmte:*) echo "$i accepted-fmte";; *) echo "$i accepted";; esac
    else
      # Without the SPANK plugin (FMTE_STRESS_MODE=none) sbatch itself refuses --fmte-* options.
      case $out in *error:*fmte:*) echo "$i refused-fmte";; *error:* | *"unrecognized option"*) echo "$i refused";; *) echo "$i unanswered $rc";; esac
    fi
  done
}

START=$(date +%s.%N)
CHUNK=$(((N + 9) / 10))
declare -a RSS_SAMPLES=("$(rss)")
for ((c = 0; c < 10; c++)); do
  # Each tenth in batches of QUEUE submissions, the held ones cancelled after each batch: the queue
  # stays at most QUEUE jobs, so RSS compares the same load tenth after tenth.
  for ((first = c * CHUNK; first < (c + 1) * CHUNK && first < N; first += QUEUE)); do
    last=$((first + QUEUE - 1))
    ((last >= (c + 1) * CHUNK)) && last=$(((c + 1) * CHUNK - 1))
    ((last >= N)) && last=$((N - 1))
    per=$(((last - first + P) / P))
    for ((p = 0; p < P; p++)); do
      a=$((first + p * per)) b=$((first + (p + 1) * per - 1))
      ((b > last)) && b=$last
      ((a <= b)) && submit_range "$a" "$b" >>"$OUT/results.$p" &
    done
    wait
    scancel --user="$(id -un)" --state=PENDING >/dev/null 2>&1 || true
  done
  RSS_SAMPLES+=("$(rss)")
done
END=$(date +%s.%N)
sleep 3  # the plugin's log thread writes its queue

kill -0 "$PID" 2>/dev/null && up=yes || up=no
cat "$OUT"/results.* >"$OUT/results"
{ grep -a -o "job_submit/fmte: submit uid=[0-9]* name=stress_[0-9]*" "$LOG" || true; } | sed 's/.*name=stress_//' | sort -n >"$OUT/logged"
python3 - "$OUT/results" "$OUT/logged" "$N" "$START" "$END" "$up" "${RSS_SAMPLES[*]}" "$MODE" <<'EOF'
import collections, sys
results = [l.split() for l in open(sys.argv[1])]
logged = collections.Counter(int(x) for x in open(sys.argv[2]) if x.strip())
n, start, end, up = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
rss = [int(x) for x in sys.argv[7].split()]
kinds = collections.Counter(r[1] for r in results)
print(f"{len(results)} of {n} submissions answered in {end - start:.0f} s ({len(results) / (end - start):.1f}/s): "
      + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
print("slurmctld RSS (KiB) at start and after each tenth: " + " ".join(map(str, rss)))
# One sample moves with whatever the controller was doing at that moment (a state save, a purge):
# the median of the last three tenths against the median of the first three.
med = lambda xs: sorted(xs)[len(xs) // 2]
growth = med(rss[-3:]) / med(rss[1:4]) - 1 if len(rss) >= 7 else 0
twice = sum(1 for k, v in logged.items() if v > 1)
decided = [int(r[0]) for r in results if r[1] in ("accepted-fmte", "refused-fmte")]
missing = [i for i in decided if logged[i] == 0]
print(f"decision log: {sum(logged.values())} lines for {len(logged)} submissions; {twice} named twice; "
      f"{len(missing)} of {len(decided)} decided submissions without a line")
log_ok = twice == 0 and not missing
if sys.argv[8] == "none":  # no fmte: nothing to log, and no fmte: answer
    log_ok = sum(logged.values()) == 0 and not decided
    print("without fmte (FMTE_STRESS_MODE=none): no decision lines expected")
ok = (len(results) == n and kinds["timeout"] == 0 and not any(k.startswith("unanswered") for k in kinds)
      and up == "yes" and growth <= 0.10 and log_ok)
print(f"RSS growth, median of the last three tenths against the first three: {growth * 100:+.1f}% (limit +10%); controller up: {up}")
print("stress: " + ("passed" if ok else "FAILED"))
sys.exit(0 if ok else 1)
EOF
