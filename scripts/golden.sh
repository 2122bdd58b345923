#!/usr/bin/env bash
# The golden corpus: runs every invocation of tests/golden/cases.tsv through fmte-advise and
# compares stdout, stderr and the exit code with tests/golden/expected/NAME.out.
#
#   scripts/golden.sh [--update] [--advise PATH] [NAME_REGEX]
#
#   --update      rewrite the expectations from this build (then review `git diff tests/golden`
#                 and say in the commit why the outputs changed)
#   --advise P    the fmte-advise to run (default: build/tools/fmte-advise)
#   NAME_REGEX    only the cases whose name matches (grep -E)
#
# Exit 0 when every case matches (or after --update); 1 with a unified diff per mismatch.
# The run is hermetic: a scratch directory as the working directory and $HOME, no $SLURM_CONF,
# $FMTE_* or $HF_* from the caller, and the repository and scratch paths replaced by <SRC>/<TMP>
# in the outputs, so the expectations do not depend on where the tree is checked out; measured
# durations ("search_ms": 1.2, "(0.8 ms)") are replaced by <ms>.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
GOLDEN="$SRC/tests/golden"
ADVISE="$SRC/build/tools/fmte-advise"
UPDATE=0
FILTER=""
while (($#)); do
  case "$1" in
    --update) UPDATE=1 ;;
    --advise) ADVISE=$2; shift ;;
    --advise=*) ADVISE=${1#--advise=} ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "golden.sh: unknown option '$1' (expected --update, --advise PATH or a name regex)" >&2; exit 2 ;;
    *) FILTER=$1 ;;
  esac
  shift
done
[ -x "$ADVISE" ] || { echo "golden.sh: fmte-advise not found at '$ADVISE' (build first, or pass --advise PATH)" >&2; exit 2; }
ADVISE=$(cd "$(dirname "$ADVISE")" && pwd)/$(basename "$ADVISE")

TMP=$(mktemp -d "${TMPDIR:-/tmp}/fmte-golden.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
WORK="$TMP/work"
mkdir -p "$WORK/gen" "$TMP/out"
ln -s "$SRC/tests/data/scripts" "$WORK/data"
ln -s "$GOLDEN/scripts" "$WORK/golden"
ln -s "$SRC/tests/data/tokens" "$WORK/tokens"
ln -s "$SRC/tests/data/operators" "$WORK/operators"
ln -s "$GOLDEN/fmte.conf" "$WORK/conf"

# Pathological input, generated rather than checked in (sizes near the reader's limits).
gen_scripts() {
  local g="$WORK/gen"
  # 1 MiB of comments around a valid job.
  {
    printf '#!/bin/bash\n#SBATCH --gres=gpu:a100:4\n#SBATCH --time=08:00:00\n'
    printf '#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=4096 micro-batch=2\n'
    perl -e 'print "# " . ("comment " x 12) . "\n" for 1..10000'
    printf 'srun python train.py\n'
  } > "$g/huge_comments.sh"
  # One 1 MiB line of launch-flag-looking words.
  {
    printf '#!/bin/bash\n#SBATCH --gres=gpu:a100:2\n'
    printf 'torchrun --nproc_per_node 2 train.py --model_name_or_path meta-llama/Llama-3.1-8B'
    perl -e 'print " --flag$_ value$_" for 1..60000; print "\n"'
  } > "$g/long_line.sh"
  # 20,000 variables, each built from the one before.
  {
    printf '#!/bin/bash\n#SBATCH --gres=gpu:a100:1\nV0=meta-llama/Llama-3.1-8B\n'
    perl -e 'print "V$_=\$V" . ($_ - 1) . "\n" for 1..20000'
    printf 'python train.py --model_name_or_path $V20000 --use_peft --bf16\n'
  } > "$g/many_vars.sh"
  # A launch line continued over 50,000 lines.
  {
    printf '#!/bin/bash\n#SBATCH --gres=gpu:a100:8\n'
    printf 'torchrun --nproc_per_node 8 train.py --model_name_or_path meta-llama/Llama-3.1-8B \\\n'
    perl -e 'print "    --opt$_ x \\\n" for 1..50000'
    printf '    --bf16\n'
  } > "$g/long_continuation.sh"
  # 64 KiB of pseudo-random bytes (fixed seed) after a valid header.
  {
    printf '#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n'
    perl -e 'srand(42); print chr(int(rand(256))) for 1..65536'
  } > "$g/random_bytes.sh"
  # A model id of 500 characters outside the catalog (the #FMTE reader takes up to 512): its
  # "closest catalog ids" were once 2 ms of edit distances under slurmctld's lock.
  {
    printf '#!/bin/bash\n#SBATCH --gres=gpu:a100:4\n'
    perl -e 'print "#FMTE model=acme-research/" . ("Falcon-7B-v2-" x 36) . "instruct method=lora\n"'
    printf 'torchrun --nproc_per_node 4 train.py\n'
  } > "$g/long_model_id.sh"
}
gen_scripts

# Runs one case; writes the normalised transcript to $TMP/out/NAME.out.
run_case() {
  local name=$1; shift
  local out="$TMP/out/$name.out" rc=0
  (cd "$WORK" && env -i PATH=/usr/bin:/bin HOME="$WORK" LANG=C.UTF-8 TZ=UTC SLURM_CONF=/nonexistent/slurm.conf \
     "$ADVISE" "$@" >"$TMP/stdout" 2>"$TMP/stderr") || rc=$?
  {
    printf '$ fmte-advise %s\n--- stdout\n' "$*"
    cat "$TMP/stdout"
    printf -- '--- stderr\n'
    cat "$TMP/stderr"
    printf -- '--- exit %d\n' "$rc"
  } | sed -E -e "s#$TMP/work#<TMP>#g" -e "s#$SRC#<SRC>#g" \
          -e 's/"([a-z_]+_ms)": [0-9.eE+-]+/"\1": <ms>/g' -e 's/\([0-9.]+ ms\)/(<ms> ms)/g' > "$out"
}

mkdir -p "$GOLDEN/expected"
total=0; failed=0; updated=0
declare -A seen=()
while IFS=$'\t' read -r name args; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  [[ -n "$FILTER" ]] && ! grep -qE "$FILTER" <<<"$name" && continue
  [[ -n "${seen[$name]:-}" ]] && { echo "golden.sh: case '$name' appears twice in cases.tsv" >&2; exit 2; }
  seen[$name]=1
  total=$((total + 1))
  # shellcheck disable=SC2086  # the arguments are split on spaces by design (no quoting in cases.tsv)
  run_case "$name" $args
  expected="$GOLDEN/expected/$name.out"
  if ((UPDATE)); then
    if ! cmp -s "$TMP/out/$name.out" "$expected"; then
      cp "$TMP/out/$name.out" "$expected"
      updated=$((updated + 1))
      echo "updated: $name"
    fi
  elif [ ! -f "$expected" ]; then
    echo "FAIL $name: no expectation (tests/golden/expected/$name.out); run scripts/golden.sh --update"
    failed=$((failed + 1))
  elif ! diff -u --label "expected/$name.out" --label "actual" "$expected" "$TMP/out/$name.out"; then
    echo "FAIL $name"
    failed=$((failed + 1))
  fi
done < "$GOLDEN/cases.tsv"

if ((UPDATE)); then
  # Expectations of cases no longer in cases.tsv go too (only on a full run).
  if [[ -z "$FILTER" ]]; then
    for f in "$GOLDEN"/expected/*.out; do
      [ -e "$f" ] || continue
      n=$(basename "$f" .out)
      [[ -n "${seen[$n]:-}" ]] || { rm -f "$f"; echo "removed: $n"; }
    done
  fi
  echo "golden: $total cases, $updated expectation(s) rewritten"
  exit 0
fi
echo "golden: $((total - failed)) passed, $failed failed"
((failed == 0))
