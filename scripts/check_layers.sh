#!/usr/bin/env bash
# The core's components see only their own headers and the public headers of the components they
# link (estimator/CMakeLists.txt): a wrong-way #include "fmte/..." fails to compile. This check
# closes the one way around that: a relative #include "../..." into another folder.
#   scripts/check_layers.sh      exit 0 when the core has none, 1 listing each one found
set -euo pipefail
cd "$(dirname "$0")/.."
found=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./' estimator || true)
if [ -n "$found" ]; then
  echo "check_layers: relative includes in the core (use the component's public fmte/*.h header):"
  echo "$found"
  echo "check_layers: 0 passed, 1 failed"
  exit 1
fi
echo "check_layers: no relative includes in estimator/ ($(find estimator -name '*.cc' -o -name '*.h' | wc -l) files)"
