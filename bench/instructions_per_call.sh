#!/usr/bin/env bash
# Instructions per job_submit() call, per script, under callgrind: a deterministic cost measure that
# the shared machine's noise does not move (bench/job_submit_bench gives the latencies). Columns:
# the whole call (job_submit), script parsing (ParseJobRequest) and the policy (Decide).
#   bench/instructions_per_call.sh [BUILD_DIR] [CALLS]     (defaults: build, 500)
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$src/build}"
calls="${2:-500}"
bench="$build/bench/job_submit_bench"
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
[[ -x "$bench" ]] || { echo "$bench not built (cmake --build $build --target job_submit_bench job_submit_fmte)" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# Inclusive instructions of the first function matching $1, divided by the number of calls.
per_call() { awk -v pat="$1" -v n="$calls" 'index($0, pat) { gsub(",", "", $1); printf "%d", $1 / n; found = 1; exit }
                                            END { if (!found) printf "0" }' "$tmp/annotate.txt"; }
printf '%-40s %10s %10s %10s\n' script job_submit parse decide
sum=0 count=0
for f in "$src"/tests/data/scripts/*.sh "$src"/scripts/demo/*.sbatch; do
  name="$(basename "$f")"
  FMTE_BENCH_ONLY="$name" FMTE_BENCH_ITERS="$calls" valgrind --tool=callgrind \
    --callgrind-out-file="$tmp/cg.out" "$bench" --benchmark_filter=BM_JobSubmit >/dev/null 2>&1
  callgrind_annotate --inclusive=yes "$tmp/cg.out" >"$tmp/annotate.txt" 2>/dev/null
  total="$(per_call 'job_submit_fmte.cc:job_submit ')"
  printf '%-40s %10d %10d %10d\n' "$name" "$total" "$(per_call ':fmte::ParseJobRequest(')" \
    "$(per_call 'policy.cc:fmte::Decide(')"
  sum=$((sum + total)) count=$((count + 1))
done
printf '%-40s %10d\n' "mean over $count scripts" $((sum / count))
