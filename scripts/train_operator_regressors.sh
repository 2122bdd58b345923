#!/usr/bin/env bash
# Builds the shipped operator/NCCL regressors (regressors/Perlmutter, regressors/Vista) from the
# seed's sampling data with fmte's own trainer, the one tool that builds every shipped model:
#   fmte-retrain train --kind operators SAMPLES --cluster NAME --into regressors
# (installs into regressors/NAME atomically, keeps the replaced files as *.prev.json, refuses a set
# with a worse grouped-CV error on the same samples unless --force; docs/retrain.md). A site trains
# its own cluster the same way with its own sampling CSVs.
# Usage: scripts/train_operator_regressors.sh [BUILD_DIR] [DATA_DIR] [extra fmte-retrain flags...]
# DATA_DIR: the seed's `Estimator/regressors` folder (DebarghaG/estimate-train-time @ 712a46fe);
# the default below is a copy of it outside the repository (docs/operators.md).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build}"
data="${2:-/work/shared/data/ai4ci-estimator/regressors}"
shift $(( $# < 2 ? $# : 2 ))
# Hyperparameters: small boosted trees on log(time / analytic work); capped so that all of
# regressors/ stays a few MB.
params=(--rounds 60 --depth 4 --eta 0.2 --folds 5 --threads 1)
cmake --build "$build" --target fmte-retrain | tail -n 3
for cluster in Perlmutter Vista; do
  echo "== $cluster"
  "$build/tools/fmte-retrain" train --kind operators "$data/$cluster" --cluster "$cluster" \
      --into "$here/regressors" "${params[@]}" "$@"
done
du -sh "$here/regressors/Perlmutter" "$here/regressors/Vista"
