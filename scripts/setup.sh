#!/usr/bin/env bash
# Installs the Debian packages fmte needs (only those missing) and builds it.
#   scripts/setup.sh [BUILD_DIR [extra cmake args...]]     default BUILD_DIR: build
# Used by scripts/demo.sh and scripts/test.sh; safe to run again (idempotent, incremental).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake g++ ninja-build ccache git clang-format python3 clang zlib1g-dev
  nlohmann-json3-dev libyaml-cpp-dev libtomlplusplus-dev libxgboost-dev libboost-program-options-dev libcurl4-openssl-dev
  libcpp-httplib-dev pkg-config chromium dpkg-dev man-db bsdextrautils
  libgtest-dev libgmock-dev libbenchmark-dev python3-torch
  slurmctld slurmd slurm-client libslurm-dev munge libmunge-dev
  slurmdbd mariadb-server mariadb-client
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "fmte setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

BUILD_DIR=${1:-build}; shift || true
# ccache keys on paths: make them relative so a fresh clone elsewhere (CI) reuses the cache.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" "${GEN[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >&2
fi
cmake --build "$BUILD_DIR" -j"$(nproc)" >&2
