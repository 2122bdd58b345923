#!/usr/bin/env bash
# scripts/fmte-sample's files against the reader that consumes them (issue 13): on CPU with the
# tiny grid, every operator (compute) and every collective over two local gloo processes (comm,
# started by hand as torchrun would: Debian's torch 1.13 torchrun fails on Python 3.11), then
# `fmte-retrain train --kind operators --dry-run` must read them all into the regressors the
# composition needs: 18 operators x fwd/bwd + 3 optimizer steps + 4 collectives (1 x 2) and their
# pooled fallbacks = 47. Trained into a regressors directory under a catalog cluster's name
# (dgx-h100), `fmte-advise estimate --cluster dgx-h100 --regressors DIR` then composes a step time
# from them: the loop a site runs on its own cluster.
# Usage: sample_contract_test.sh FMTE_RETRAIN FMTE_ADVISE. Skips (77) without a Python with PyTorch.
set -euo pipefail
retrain="$1"
advise="$2"
here="$(cd "$(dirname "$0")/../.." && pwd)"
py=""
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import torch, torch.distributed' 2>/dev/null; then py="$p"; break; fi
done
if [[ -z "$py" ]]; then
  echo "SKIP: no python3 with PyTorch (Debian: python3-torch)"
  exit 77
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
common=(--out "$out" --grid tiny --device cpu --precision fp32 --reps 2 --warmup 1)
timeout 300 "$py" "$here/scripts/fmte-sample" compute "${common[@]}" > "$out/compute.log"
port=$((20000 + RANDOM % 20000))
pids=()
for r in 0 1; do
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 RANK=$r LOCAL_RANK=$r \
    timeout 300 "$py" "$here/scripts/fmte-sample" comm "${common[@]}" > "$out/comm.$r.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do
  wait "$p" || { cat "$out"/comm.*.log; echo "FAIL: fmte-sample comm"; exit 1; }
done
fail=0
n_ops=$(find "$out/operator" -name "*.csv" | wc -l)
n_nccl=$(find "$out/nccl" -name "*.csv" | wc -l)
[[ "$n_ops" == 21 ]] || { echo "FAIL: $n_ops operator files, expected 21"; fail=1; }
[[ "$n_nccl" == 4 ]] || { echo "FAIL: $n_nccl collective files, expected 4"; fail=1; }
# Every file has its header and at least one sample row.
for f in "$out"/operator/*.csv "$out"/nccl/*.csv; do
  rows=$(($(wc -l < "$f") - 1))
  ((rows > 0)) || { echo "FAIL: $f has no samples"; fail=1; }
done
head -1 "$out"/nccl/*_p2p_fp32_1_2.csv | grep -qx 'shape,nodes,GPUsPerNode,dur(us)' ||
  { echo "FAIL: p2p header"; fail=1; }
json="$("$retrain" train --kind operators "$out" --cluster sampled --dry-run --folds 2 --rounds 3 \
        --json)" || { echo "FAIL: fmte-retrain could not train from the samples"; exit 1; }
n_reg=$(printf '%s' "$json" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["regressors"])')
[[ "$n_reg" == 47 ]] || { echo "FAIL: $n_reg regressors trained, expected 47"; fail=1; }
"$retrain" train --kind operators "$out" --cluster dgx-h100 --into "$out/regressors" --folds 2 \
  --rounds 3 --json > "$out/train.json" || { echo "FAIL: fmte-retrain --into"; exit 1; }
est="$("$advise" estimate --model meta-llama/Llama-3.1-8B --gpus 8 --cluster dgx-h100 \
       --regressors "$out/regressors" --json)" || { echo "FAIL: fmte-advise estimate"; exit 1; }
printf '%s' "$est" | "$py" -c '
import json, sys
o = json.load(sys.stdin).get("operator_time", {})
assert o.get("cluster") == "dgx-h100" and o.get("step_time_s", 0) > 0, o' ||
  { echo "FAIL: no operator step time from the sampled regressors"; fail=1; }
((fail == 0)) && echo "ok: 21 operator and 4 collective sample files, 47 regressors trained and used"
exit "$fail"
