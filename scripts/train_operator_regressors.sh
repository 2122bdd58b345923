#!/usr/bin/env bash
# Builds the shipped operator/NCCL regressors (regressors/Perlmutter, regressors/Vista) from the
# seed's sampling data with fmte's own trainer (fmte-train-operators, learn/tools/), so every shipped
# model is reproducible by our tool. A site trains its own cluster the same way:
#   fmte-train-operators --samples MY_SAMPLES --cluster MYCLUSTER --into regressors/MYCLUSTER
# Usage: scripts/train_operator_regressors.sh [BUILD_DIR] [DATA_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build}"
data="${2:-/work/shared/data/ai4ci-estimator/regressors}"
# Hyperparameters: small boosted trees on log(time / analytic work); capped so that all of
# regressors/ stays a few MB.
params=(--rounds 60 --depth 4 --eta 0.2 --folds 5 --threads 1)
cmake --build "$build" --target fmte-train-operators | tail -n 3
for cluster in Perlmutter Vista; do
  echo "== $cluster"
  "$build/learn/fmte-train-operators" --samples "$data/$cluster" --cluster "$cluster" \
      --into "$here/regressors/$cluster" "${params[@]}"
done
du -sh "$here/regressors/Perlmutter" "$here/regressors/Vista"
