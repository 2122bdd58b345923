#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test:
#   0. scripts/format.sh --check: the project's C++ files are clang-formatted
#   1. build/       (RelWithDebInfo): unit, plugin, golden and integration tests (real Slurm daemons),
#                   the web page in headless Chromium (browser), the .deb built, installed into a
#                   scratch root and its plugins loaded into a real slurmctld (package)
#   2. build-asan/  (AddressSanitizer + UndefinedBehaviorSanitizer): the unit and golden tests again, the
#                   plugin tests, which load the sanitized job_submit_fmte.so and spank_fmte.so, and
#                   the integration tests with those plugins inside the real slurmctld, slurmd and
#                   sbatch/srun (ASan runtime preloaded; any report fails integration.sanitizer_reports)
#   3. build-tsan/  (ThreadSanitizer): the plugin tests (concurrent job_submit/job_modify with fmte.conf
#                   reloads and the log thread); only their target is built
#   4. build-fuzz/  (clang, libFuzzer + ASan + UBSan): every fuzz target briefly from its seeds,
#                   with a fixed seed and at most 5000 inputs (so a run repeats itself; longer runs
#                   that find new inputs are scripts/fuzz.sh's job), at most FMTE_FUZZ_SECONDS (30)
# Exit code 0 only when all pass. .ci/run calls this script.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)

scripts/setup.sh build
echo "== format (clang-format) =="
scripts/format.sh --check
echo "== tests (build/) =="
(cd build && ctest --output-on-failure -j"$JOBS" --timeout 900)

echo "== sanitized unit, plugin and integration tests (build-asan/: ASan + UBSan) =="
scripts/setup.sh build-asan -DFMTE_SANITIZE=ON -DFMTE_BUILD_PLUGINS=ON -DFMTE_BUILD_BENCHMARKS=OFF
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build-asan && ctest --output-on-failure -j"$JOBS" -L 'unit|plugin|golden|integration' --timeout 900)

echo "== plugin tests under ThreadSanitizer (build-tsan/) =="
if [ ! -f build-tsan/CMakeCache.txt ]; then
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFMTE_TSAN=ON -DFMTE_BUILD_BENCHMARKS=OFF >/dev/null
fi
CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 cmake --build build-tsan -j"$JOBS" --target fmte_slurm_plugin_test >/dev/null
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest --output-on-failure -L plugin --timeout 300)

echo "== fuzz smoke (build-fuzz/: libFuzzer + ASan + UBSan) =="
CC=clang CXX=clang++ scripts/setup.sh build-fuzz -DFMTE_FUZZ=ON
scripts/fuzz.sh --seconds "${FMTE_FUZZ_SECONDS:-30}" --runs 5000 --seed 1
