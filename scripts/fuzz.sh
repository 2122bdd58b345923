#!/usr/bin/env bash
# Runs the libFuzzer targets (tests/fuzz/fuzz_<target>.cc), each for a given time, and prints per
# target the executions, their rate, the corpus size and the result:
#   scripts/fuzz.sh [--seconds N] [--runs N] [--seed N] [--jobs N] [--max-len N] [TARGET...]
# (default: 60 s each, every target; --runs stops a target earlier after N executions; --seed fixes
# libFuzzer's random seed, so that a run bounded by --runs repeats itself; --jobs runs N processes
# per target; --max-len bounds the inputs libFuzzer makes, and cuts longer seeds: the script
# targets' corpora hold real scripts of up to 150 KB, on which mutation runs at 130-280 inputs/s
# against ~2000/s at 4096 bytes).
# Builds build-fuzz/ first when needed (CC=clang CXX=clang++ cmake -DFMTE_FUZZ=ON; Debian's clang
# has libFuzzer). Each target starts from its checked-in seeds tests/fuzz/<target>/ and keeps what it
# learns in build-fuzz/corpus/<target>/ (so later runs go on from there); the script targets also
# read tests/golden/scripts and ../shared/data/batch-scripts in place (when they exist). A crash,
# leak, timeout (10 s on one input) or broken invariant leaves its input in build-fuzz/artifacts/
# and makes the exit code 1:
# reproduce with build-fuzz/tests/fuzz/fuzz_<target> <that file>, then add it as a regression test.
#   FMTE_FUZZ_BUILD=DIR  another build folder
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=60
JOBS=1
RUNS=-1
SEED=0
MAX_LEN=()
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_EACH=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --max-len) MAX_LEN=(-max_len="$2"); shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
BUILD=${FMTE_FUZZ_BUILD:-build-fuzz}

if [ ! -f "$BUILD/build.ninja" ] && [ ! -f "$BUILD/Makefile" ]; then
  command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ is missing (apt-get install clang)" >&2; exit 2; }
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DFMTE_FUZZ=ON >/dev/null
fi
cmake --build "$BUILD" -j"$(nproc)" >/dev/null

if [ ${#TARGETS[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.cc; do
    t=$(basename "$f" .cc); t=${t#fuzz_}
    [ "$t" = common ] || TARGETS+=("$t")
  done
fi

mkdir -p "$BUILD/artifacts" "$BUILD/logs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
parallel=()
[ "$JOBS" -gt 1 ] && parallel=(-jobs="$JOBS" -workers="$JOBS")
failed=0
printf '%-16s %12s %9s %7s  %s\n' target executions exec/s corpus result
for t in "${TARGETS[@]}"; do
  exe=$BUILD/tests/fuzz/fuzz_$t
  [ -x "$exe" ] || { echo "fuzz.sh: no target $t ($exe)" >&2; exit 2; }
  corpus=$BUILD/corpus/$t
  mkdir -p "$corpus"
  dirs=("$corpus" "tests/fuzz/$t")
  # The script targets also start from the golden corpus's hostile scripts and the real public
  # scripts, read in place.
  if [ "$t" = batch_script ]; then dirs+=(tests/golden/scripts); fi
  if [ "$t" = batch_script ] || [ "$t" = submission ]; then
    if [ -d ../shared/data/batch-scripts ]; then dirs+=(../shared/data/batch-scripts); fi
  fi
  log=$BUILD/logs/$t.log
  rc=0
  "$exe" "${dirs[@]}" -max_total_time="$SECONDS_EACH" -runs="$RUNS" -seed="$SEED" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$t-" "${parallel[@]}" "${MAX_LEN[@]}" \
    >"$log" 2>&1 || rc=$?
  # With --jobs N the workers write fuzz-<n>.log in the working directory, and libFuzzer copies
  # each one into its own output when the worker ends: the log already holds them (appending them
  # again, as this script did before, counted every worker's executions twice).
  if [ "$JOBS" -gt 1 ]; then rm -f fuzz-*.log; fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s += $2} END {print s + 0}')
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | awk '{s += $2} END {print s + 0}')
  size=$(find "$corpus" -type f | wc -l)
  if [ "$rc" -eq 0 ] && ! grep -q "ERROR: libFuzzer\|==ERROR\|runtime error\|invariant broken" "$log"; then
    result=ok
  else
    result="FAILED (rc $rc; $log; $(ls "$BUILD"/artifacts/"$t"-* 2>/dev/null | tail -1))"
    failed=1
  fi
  printf '%-16s %12s %9s %7s  %s\n' "$t" "$execs" "$rate" "$size" "$result"
done
exit $failed
