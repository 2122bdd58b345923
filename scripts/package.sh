#!/usr/bin/env bash
# Builds the Debian package fmte_<version>_<arch>.deb (CPack; cmake/package.cmake says what goes
# where) in its own build folder, with the installed paths compiled in (catalogs /etc/fmte,
# regressors /usr/share/fmte/regressors) and no tests or benchmarks:
#   scripts/package.sh [BUILD_DIR]        default BUILD_DIR: build-deb; prints the .deb's path
# Install it with `apt install ./fmte_<version>_<arch>.deb` (it depends on the exact Debian Slurm
# version it was built against), then enable the plugins: docs/slurm.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-deb}
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
    -DFMTE_ETC_DIR=/etc/fmte -DFMTE_REGRESSORS_DIR=/usr/share/fmte/regressors \
    -DFMTE_BUILD_TESTS=OFF -DFMTE_BUILD_BENCHMARKS=OFF >&2
fi
cmake --build "$BUILD" -j"$(nproc)" >&2
rm -f "$BUILD"/fmte_*.deb
(cd "$BUILD" && cpack -G DEB >&2)
ls "$PWD/$BUILD"/fmte_*.deb
