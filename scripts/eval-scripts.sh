#!/usr/bin/env bash
# Measures how well fmte reads real batch scripts: runs `fmte-advise check --json` over a folder of
# scripts and reports, per launcher kind, how many LLM training scripts were recognised and
# estimated, whether the model found is the one a careful reader finds, whether the estimate used
# it (est+right, also as a share of the LLM training scripts and of those whose model the job's
# files name), the decisions, and any script that is not training but was taken for one.
#
#   scripts/eval-scripts.sh DIR [--advise PATH] [--config FILE] [--gpu NAME] [--json OUT] [--verbose]
#
# DIR holds INDEX.csv (columns path, repo_root, is_training, launcher_kind, model, gpus, ran_ok,
# invocation: the layout of shared/data/batch-scripts) and the scripts with the files they name;
# each script is checked from its repo_root with `--chdir`, with the sbatch options and script
# arguments of its `invocation`. Without INDEX.csv every *.sh/*.slurm/*.sbatch below DIR is
# checked from its own folder and counted as training. The scripts are only read, never run.
# Without --config, a site config whose only setting is the GPU of every partition (--gpu, default
# H100-SXM5-80GB: the scripts name their cluster's partitions, which this machine does not know).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

DIR=""; ADVISE="$ROOT/build/tools/fmte-advise"; CONFIG=""; GPU="H100-SXM5-80GB"; JSON_OUT=""; VERBOSE=0
while (($#)); do
  case "$1" in
    --advise) ADVISE=$2; shift 2 ;;
    --config) CONFIG=$2; shift 2 ;;
    --gpu) GPU=$2; shift 2 ;;
    --json) JSON_OUT=$2; shift 2 ;;
    --verbose) VERBOSE=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "eval-scripts.sh: unknown option '$1' (expected --advise, --config, --gpu, --json, --verbose)" >&2; exit 2 ;;
    *) DIR=$1; shift ;;
  esac
done
[ -n "$DIR" ] || { echo "eval-scripts.sh: DIR is required (a folder of batch scripts)" >&2; exit 2; }
[ -d "$DIR" ] || { echo "eval-scripts.sh: DIR: '$DIR' is not a folder" >&2; exit 2; }
[ -x "$ADVISE" ] || { echo "eval-scripts.sh: --advise: '$ADVISE' is not executable (build first: scripts/setup.sh)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "eval-scripts.sh: python3 is required" >&2; exit 2; }
if [ -z "$CONFIG" ]; then
  CONFIG=$(mktemp --suffix=.conf); trap 'rm -f "$CONFIG"' EXIT
  printf 'Gpu=%s\n' "$GPU" >"$CONFIG"
fi

python3 - "$DIR" "$ADVISE" "$CONFIG" "$JSON_OUT" "$VERBOSE" <<'PY'
import csv, json, os, re, shlex, subprocess, sys
from collections import defaultdict

dir_, advise, config, json_out, verbose = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "1"
dir_ = os.path.abspath(dir_)
index = os.path.join(dir_, "INDEX.csv")
rows = []
if os.path.exists(index):
    with open(index, newline="") as f:
        rows = list(csv.DictReader(f))
else:
    for base, _, files in os.walk(dir_):
        for n in sorted(files):
            if n.endswith((".sh", ".slurm", ".sbatch", ".sbat")):
                p = os.path.relpath(os.path.join(base, n), dir_)
                rows.append({"path": p, "repo_root": os.path.dirname(p), "is_training": "yes",
                             "launcher_kind": "own", "model": "", "gpus": "", "ran_ok": "unknown",
                             "invocation": ""})

def norm(s):
    # '.', '_' and '-' alike: "Qwen2.5" is written qwen2_5 in folder names.
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")

# Index rows whose model no reader of the job's files can know: it is chosen in Python code (a
# trainer's default, a template rendered by a tool), in a file the user supplies or another script
# passes, or by an environment variable set at submission (INDEX.csv's own words, matched here).
# They stay in every count; the "model in the files" line leaves them out.
MODEL_NOT_IN_FILES = [r"^unknown \((jinja|not passed|train\.yaml supplied|set inside)",
                      r"\benv(ironment)? var|\bBASE_CKPT env", r"\(trlx default",
                      r"pruned to .* target"]

# The catalog's aliases (etc/models/aliases.tsv: ids with the same tensors as a catalog model): a
# job naming Meta-Llama-3-8B is estimated as meta-llama/Llama-3.1-8B, the right model.
ALIASES = {}
with open(os.path.join(os.environ.get("FMTE_ETC_DIR", "etc"), "models", "aliases.tsv")) as f:
    for line in f:
        parts = line.rstrip("\n").split("\t")
        if len(parts) >= 2 and not line.startswith("#"):
            ALIASES[parts[0].lower()] = parts[1].lower()

def llm(row):
    return "not an LLM" not in row.get("method", "") and not row.get("model", "").startswith("bert-")

def model_in_files(row):
    return not any(re.search(p, row.get("model", ""), re.I) for p in MODEL_NOT_IN_FILES)

# Architectures the index names without their dimensions, and the dimensions their published
# config.json files give (num layers, hidden size): openai-community/gpt2 (n_layer 12, n_embd 768;
# also etc/models/openai-community/gpt2), distilbert/distilgpt2 (n_layer 6, n_embd 768),
# allenai/OLMo-7B (n_layers 32, d_model 4096), bigcode/starcoder and starcoderplus (n_layer 40,
# n_embd 6144).
KNOWN_DIMENSIONS = [(r"\bdistilgpt-?2\b", 6, 768), (r"\bgpt-2 small\b", 12, 768),
                    (r"\bolmo-7b\b", 32, 4096), (r"\bstarcoder(plus)?\b", 40, 6144)]

# Models the index names without their size where the family publishes one architecture: Nemotron 3
# Nano is NVIDIA-Nemotron-3-Nano-30B-A3B (its BF16, FP8 and Base checkpoints share the config).
KNOWN_NAMES = [(r"\bnemotron-3 nano\b", "nvidia-nemotron-3-nano-30b-a3b")]

def model_matches(found, truth):
    """The found model names what the index names: its last path part (an HF id's name, a
    local directory's name) appears in the index text, or the index's first HF id ends with it."""
    if not found or not truth:
        return False
    # An architecture given by its dimensions (Megatron flags, OLMo/NeoX config keys:
    # "<launcher>-<style>-<L>l-<H>h"): the index names its layers (blocks) and hidden size (d_model).
    m = re.fullmatch(r"[\w.-]+-(?:llama|gpt)-(\d+)l-(\d+)h", found)
    if m:
        if (re.search(rf"\b{m.group(1)} (layers|blocks)", truth) is not None and
                re.search(rf"(hidden|d_model) {m.group(2)}\b", truth) is not None):
            return True
        for pattern, layers, hidden in KNOWN_DIMENSIONS:
            if re.search(pattern, truth.lower()):
                return (int(m.group(1)), int(m.group(2))) == (layers, hidden)
        return False
    name = norm(found.rstrip("/").split("/")[-1])
    # "-hf" names the Hugging Face-format copy of the same weights (meta-llama/Llama-2-7b-hf).
    if name.endswith("-hf") and name[:-3] in norm(truth):
        return True
    if name in ("config.json", "") and "/" in found:
        name = norm(found.rstrip("/").split("/")[-2])
    t = norm(truth)
    for pattern, model in KNOWN_NAMES:
        if re.search(pattern, truth.lower()) and name.startswith(model):
            return True
    return bool(name) and (name in t or t.startswith(name))

def invocation_args(row, script_rel):
    inv = row.get("invocation", "").strip()
    if not inv:
        return [], []
    words = shlex.split(inv)
    if words and words[0] == "sbatch":
        words = words[1:]
    opts, args, seen = [], [], False
    for w in words:
        if not seen and (w == script_rel or w.endswith("/" + os.path.basename(script_rel))):
            seen = True
            continue
        (args if seen else opts).append(w)
    return opts, args

results = []
for row in rows:
    root = os.path.join(dir_, row["repo_root"]) if row["repo_root"] else dir_
    script_rel = os.path.relpath(os.path.join(dir_, row["path"]), root)
    opts, args = invocation_args(row, script_rel)
    cmd = [advise, "check", "--json", "--config", config, "--chdir", root] + opts + [script_rel] + args
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = -1, "", "timed out after 60 s"
    j = {}
    try:
        j = json.loads(out) if out.strip() else {}
    except json.JSONDecodeError:
        pass
    req = j.get("request", {})
    model = ""
    for s in req.get("sources", []):
        if s.get("key") == "model":
            model = s.get("value", "")
    est_model = j.get("estimate", {}).get("model", {}).get("id", "")
    r = {
        "path": row["path"], "kind": row["launcher_kind"], "training": row["is_training"] == "yes",
        "llm_training": row["is_training"] == "yes" and llm(row),
        "model_in_files": model_in_files(row), "estimated_model": est_model,
        # Estimated with the model the index names: the estimate's own model (a catalog id, an
        # ad-hoc architecture's dimensions, a path's copy) is checked, not only what was read.
        "est_right": "estimate" in j and (
            model_matches(est_model, row.get("model", "")) or
            (model_matches(model, row.get("model", "")) and
             ALIASES.get(model.lower()) == est_model.lower())),
        "ran_ok": row.get("ran_ok", ""), "exit": rc, "llm": bool(req.get("is_llm_job")),
        "estimated": "estimate" in j, "model": model, "truth_model": row.get("model", ""),
        "model_ok": model_matches(model, row.get("model", "")),
        "decision": j.get("decision", "error" if rc not in (0, 3) else ""),
        "gpus": next((s.get("value") for s in req.get("sources", []) if s.get("key") == "gpus"), ""),
        "truth_gpus": row.get("gpus", ""), "launcher": req.get("launcher", ""),
        "stderr": err.strip()[:300],
        # What the script says about its checkpoint saves and evaluations (save-every, eval-every,
        # eval-samples: docs/time.md "Wall time"), read from its flags and files.
        "periodic": {s.get("key"): s.get("value") for s in req.get("sources", [])
                     if s.get("key") in ("save-every", "eval-every", "eval-samples")},
    }
    results.append(r)

train = [r for r in results if r["training"]]
other = [r for r in results if not r["training"]]
by_kind = defaultdict(list)
for r in train:
    by_kind[r["kind"]].append(r)

def pct(a, b):
    return f"{100.0 * a / b:.0f}%" if b else "-"

print(f"fmte-advise check over {dir_}: {len(results)} scripts, {len(train)} training, {len(other)} not")
print(f"{'launcher kind':16} {'scripts':>7} {'read':>5} {'estimated':>9} {'right model':>11}"
      f" {'est+right':>9} {'rejected':>8}")
tot = defaultdict(int)
for kind in sorted(by_kind, key=lambda k: (-len(by_kind[k]), k)):
    rs = by_kind[kind]
    c = {"n": len(rs), "llm": sum(r["llm"] for r in rs), "est": sum(r["estimated"] for r in rs),
         "ok": sum(r["model_ok"] for r in rs), "er": sum(r["est_right"] for r in rs),
         "rej": sum(r["decision"] == "reject" for r in rs)}
    for k, v in c.items():
        tot[k] += v
    print(f"{kind:16} {c['n']:7} {c['llm']:5} {c['est']:9} {c['ok']:11} {c['er']:9} {c['rej']:8}")
print(f"{'all training':16} {tot['n']:7} {tot['llm']:5} {tot['est']:9} {tot['ok']:11} {tot['er']:9}"
      f" {tot['rej']:8}   (read {pct(tot['llm'], tot['n'])}, estimated {pct(tot['est'], tot['n'])},"
      f" right model {pct(tot['ok'], tot['n'])}, estimated with it {pct(tot['er'], tot['n'])})")
llm_train = [r for r in train if r["llm_training"]]
named = [r for r in llm_train if r["model_in_files"]]
print(f"LLM training (not the index's non-LLM models): {len(llm_train)}; read"
      f" {sum(r['llm'] for r in llm_train)}, estimated with the right model"
      f" {sum(r['est_right'] for r in llm_train)} ({pct(sum(r['est_right'] for r in llm_train), len(llm_train))})")
print(f"  whose model is in the files the job names (not in Python defaults, user files or the"
      f" environment at submission): {len(named)}; estimated with the right model"
      f" {sum(r['est_right'] for r in named)} ({pct(sum(r['est_right'] for r in named), len(named))})")
print(f"  saying how often they save checkpoints: {sum('save-every' in r['periodic'] for r in llm_train)};"
      f" evaluate: {sum('eval-every' in r['periodic'] for r in llm_train)};"
      f" over how many sequences: {sum('eval-samples' in r['periodic'] for r in llm_train)}")
false_pos = [r for r in other if r["llm"]]
print(f"not training taken for LLM training: {len(false_pos)} of {len(other)}")
crashes = [r for r in results if r["exit"] not in (0, 3)]
print(f"tool failures (exit other than 0/3, or a hang): {len(crashes)}")
ran_rejected = [r for r in train if r["ran_ok"] == "yes" and r["decision"] == "reject"]
print(f"rejected although known to have run: {len(ran_rejected)}")
if verbose or crashes or false_pos:
    print()
    for r in results:
        if verbose or r in crashes or r in false_pos:
            flag = "est" if r["estimated"] else ("llm" if r["llm"] else "---")
            ok = "OK" if r["est_right"] else "ok" if r["model_ok"] else "  "
            print(f"{flag} {ok} {r['decision'] or '-':8} gpus={r['gpus'] or '-':>4}/{r['truth_gpus'][:6]:6}"
                  f" {r['path']}\n      model: {r['model'] or '-'}"
                  f"{'  (estimated as ' + r['estimated_model'] + ')' if r['estimated_model'] else ''}"
                  f"  |  index: {r['truth_model'][:70]}")
            if r["periodic"]:
                print("      periodic: " + ", ".join(f"{k} {v}" for k, v in r["periodic"].items()))
            if r["exit"] not in (0, 3):
                print(f"      exit {r['exit']}: {r['stderr']}")
if json_out:
    with open(json_out, "w") as f:
        json.dump({"dir": dir_, "results": results}, f, indent=1)
PY
