#!/usr/bin/env bash
# Drives fmte-advise serve's page in headless Chromium (Debian's chromium) as a user would: each
# case loads the page with a mode and the form's fields in the URL (?mode=estimate&model=...&run=1:
# the page fills the form and submits it through its own handler), waits for the page's scripts
# and the API, then checks the rendered DOM and keeps a screenshot.
#   tests/web/browser_test.sh ADVISE_BINARY OUT_DIR
# Screenshots (the test's artefacts): OUT_DIR/<case>.png; the DOMs: OUT_DIR/<case>.html;
# timings: OUT_DIR/timings.txt (page load with the API call, per case).
set -euo pipefail
ADVISE=${1:?usage: browser_test.sh ADVISE_BINARY OUT_DIR}
OUT=${2:?usage: browser_test.sh ADVISE_BINARY OUT_DIR}
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || { echo "browser_test: chromium is missing (scripts/setup.sh installs it)" >&2; exit 1; }
mkdir -p "$OUT"
rm -f "$OUT"/*.png "$OUT"/*.html "$OUT"/timings.txt
PROFILE=$(mktemp -d)
SERVER_LOG=$OUT/serve.log
"$ADVISE" serve --port 0 --config none >"$OUT/serve.out" 2>"$SERVER_LOG" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; rm -rf "$PROFILE"' EXIT
URL=
for _ in $(seq 100); do
  URL=$(grep -o 'http://[^ ]*' "$OUT/serve.out" 2>/dev/null || true)
  [ -n "$URL" ] && break
  kill -0 $SERVER 2>/dev/null || { cat "$SERVER_LOG" >&2; exit 1; }
  sleep 0.1
done
[ -n "$URL" ] || { echo "browser_test: serve printed no URL" >&2; exit 1; }

failed=0
# page NAME QUERY: loads URL?QUERY (the same profile each time: saved plans persist), keeps the DOM
# and a screenshot.
page() {
  local name=$1 query=$2 start end
  start=$(date +%s%N)
  timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --user-data-dir="$PROFILE" --virtual-time-budget=15000 --window-size=1280,1800 \
    --dump-dom "$URL?$query" >"$OUT/$name.html" 2>>"$OUT/chromium.log"
  end=$(date +%s%N)
  timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --user-data-dir="$PROFILE" --virtual-time-budget=15000 --window-size=1280,1800 \
    --screenshot="$OUT/$name.png" "$URL?$query" >/dev/null 2>>"$OUT/chromium.log"
  echo "$name $(((end - start) / 1000000)) ms (headless Chromium start, page, API);" \
    "in Chromium's virtual clock (--virtual-time-budget): page and catalog loaded at $(grep -o 'data-load-ms="[0-9]*"' "$OUT/$name.html" | tr -dc 0-9) ms," \
    "estimate API round trip $(grep -o 'data-api-ms="[0-9]*"' "$OUT/$name.html" | tr -dc 0-9) ms" \
    >>"$OUT/timings.txt"
}
# expect NAME TEXT...: the DOM of NAME holds each TEXT (a fixed string).
expect() {
  local name=$1; shift
  for text in "$@"; do
    if ! grep -qF -- "$text" "$OUT/$name.html"; then
      echo "FAIL $name: the page does not show: $text" >&2
      failed=1
    fi
  done
}
reject() {
  local name=$1; shift
  for text in "$@"; do
    if grep -qF -- "$text" "$OUT/$name.html"; then
      echo "FAIL $name: the page shows: $text" >&2
      failed=1
    fi
  done
}
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }

# 1. Estimate: the form filled and submitted; the catalog listed; the breakdown and time shown.
#    Reference: Llama-3.1-8B has 8.03 B parameters (Meta's model card).
page estimate "mode=estimate&model=meta-llama/Llama-3.1-8B&method=lora&gpu=H100-SXM5-80GB&micro-batch=2&seq-len=2048&activation-checkpointing=full&tokens=2e8&run=1&plan=lora-8b-1gpu"
expect estimate 'data-ready="1"' 'id="estimate-verdict">Fits:' '8.03 B parameters' \
  'H100-SXM5-80GB' 'weights' 'activations' 'wall time' '95% bound (the time limit)' \
  'value="meta-llama/Llama-3.1-70B"' 'Step timeline per pipeline stage' 'id="timeline"'
reject estimate 'class="error" role="alert">'
# The page's numbers are the API's: the same per-GPU GiB as fmte-advise estimate --json prints.
gib=$("$ADVISE" estimate --model meta-llama/Llama-3.1-8B --method lora --gpu H100-SXM5-80GB \
  --micro-batch 2 --seq-len 2048 --activation-checkpointing full --tokens 2e8 --json |
  python3 -c 'import json,sys; print("%.2f GiB per GPU" % (json.load(sys.stdin)["memory"]["per_gpu_bytes"] / 2**30))')
expect estimate "$gib"

# 2. A second plan (full fine-tuning with ZeRO-3 on 8 GPUs), saved too; then Compare shows both.
page estimate_full "mode=estimate&model=meta-llama/Llama-3.1-8B&method=full&gpu=H100-SXM5-80GB&gpus=8&sharding=zero3&micro-batch=1&seq-len=2048&activation-checkpointing=full&tokens=2e8&run=1&plan=full-8b-zero3"
expect estimate_full 'Fits:'
page compare "mode=compare&pick=all"
expect compare 'lora-8b-1gpu' 'full-8b-zero3' 'memory per GPU' 'GPU-hours' 'Step timelines' \
  'alt="full-8b-zero3 timeline"'

# 2b. Custom mode: a figure changed in the link (cluster.startup_s, an hour more of start-up) is
#     sent as overrides; the wall time shown is what fmte-advise estimate --overrides prints.
#     The memory and time sections are shown and sent the same way (time.learned_correction).
page custom "mode=estimate&model=meta-llama/Llama-3.1-8B&method=lora&gpu=H100-SXM5-80GB&micro-batch=2&seq-len=2048&activation-checkpointing=full&tokens=2e8&cluster.startup_s=3900&time.learned_correction=false&run=1"
echo '{"cluster": {"startup_s": 3900}, "time": {"learned_correction": false}}' >"$OUT/overrides.json"
wall=$("$ADVISE" estimate --model meta-llama/Llama-3.1-8B --method lora --gpu H100-SXM5-80GB \
  --micro-batch 2 --seq-len 2048 --activation-checkpointing full --tokens 2e8 --json \
  --overrides "$OUT/overrides.json" |
  python3 -c 'import json,sys; s=json.load(sys.stdin)["time"]["wall_time_s"]; print("%d h %d min" % (s // 3600, (s % 3600) // 60))')
expect custom 'Overridden: {"cluster":{"startup_s":3900},"time":{"learned_correction":false}}' "$wall" \
  'Custom: the figures this estimate used' 'memory: bytes per element' 'name="memory.optimizer_state"' \
  'name="time.gemm_efficiency"' 'name="time.layer_fwd_s"'

# 2c. Measured: a Megatron-LM log (its training_log line format; the values are this test's own)
#     beside the prediction for the job in the Estimate form. The page must read the median step
#     time after the 3 warm-up iterations and the max reserved memory (MB = 2^20 bytes).
log=""
for i in 1 2 3 4 5 6 7 8; do
  ms=$(python3 -c "print([9000, 4000, 2500, 1210, 1190, 1230, 1200, 1185][$i - 1])")
  log+=" iteration        $i/     100 | consumed samples:          $((i * 64)) | elapsed time per iteration (ms): $ms.0 | throughput per GPU (TFLOP/s/GPU): 350.$i | learning rate: 1.0E-04 | global batch size:    64 | lm loss: 9.1E+00 |"$'\n'
done
log+="[Rank 0] (after 8 iterations) memory (MB) | allocated: 30000.0 | max allocated: 41234.5 | reserved: 45000.0 | max reserved: 46080.0"$'\n'
page measured "mode=measured&log=$(enc "$log")&skip=3&model=meta-llama/Llama-3.1-8B&method=full&gpu=H100-SXM5-80GB&gpus=8&sharding=zero3&micro-batch=1&seq-len=4096&grad-accum=8&run=1"
step=$(python3 -c 'import statistics; print("%.2f s" % (statistics.median([1210, 1190, 1230, 1200, 1185]) / 1000))')
expect measured 'id="measured-verdict">Megatron-LM log: 5 steps read (first 3 skipped)' "$step" \
  '45.00 GiB' 'fmte predicts' 'One step, measured and predicted'

# 3. Guide: recommended layouts for 8 GPUs, fastest first.
page guide "mode=guide&model=meta-llama/Llama-3.1-8B&gpu=H100-SXM5-80GB&gpus=8&global-batch=64&seq-len=4096&run=1"
expect guide 'layouts fit on H100-SXM5-80GB' 'zero3' 'tokens/s/GPU'

# 4. Check a job: a pasted script that asks for too little memory is refused with advice.
script=$'#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=04:00:00\n#FMTE model=meta-llama/Llama-3.1-70B method=full\npython train.py\n'
page check "mode=check&script=$(enc "$script")&run=1"
expect check 'id="check-verdict">Decision: reject' 'Alternatives (each re-estimated)' \
  'meta-llama/Llama-3.1-70B'

# 5. Bad input: a clear error in the page naming what was wrong, never a blank page.
page error "mode=estimate&model=no-such/model&run=1"
expect error "Error: unknown model 'no-such/model'" 'closest catalog ids'
page bad_field "mode=estimate&model=meta-llama/Llama-3.1-8B&tp=3&gpus=8&run=1"
expect bad_field 'Error: --gpus: 8 GPUs is not a multiple of tp*pp = 3' 'class="bad"'

if [ "$failed" -ne 0 ]; then
  echo "browser_test: failed; screenshots and DOMs in $OUT, server log $SERVER_LOG" >&2
  exit 1
fi
echo "browser_test: 9 pages checked; screenshots in $OUT"
cat "$OUT/timings.txt"
grep -E 'POST|GET' "$SERVER_LOG" | awk '{print $2, $3, $5, "ms"}' | sort | uniq -c | head -20 || true
