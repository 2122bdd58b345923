#!/usr/bin/env python3
"""Compare fmte's memory estimate with published measured peaks, per source and framework.

usage: scripts/eval-memory.py [--advise BIN] [--csv FILE] [--verbose] [--json]
                              [--check-bounds]

Each row of the CSV (tests/data/memory-measured/measured.csv, a copy of the project data's
memory-measured table; its README says what every column means) is turned into one
`fmte-advise estimate --json` call with the row's model, method, GPUs, batch, sequence, precision,
optimizer, sharding, layout and memory savers. The prediction compared is the one the source
measured: max_memory_allocated -> memory.allocated_peak_bytes, max_memory_reserved ->
memory.allocator_peak_bytes, nvidia-smi -> memory.per_gpu_bytes; a source that does not say
("unknown") is compared with the reserved peak. Rows fmte cannot run (a model outside the catalog,
an adapter method, FP8, expert or context parallelism, fields the source does not state) are
counted as not estimated, with the reason.

Reported per source and per framework: rows estimated, mean absolute error, mean signed error,
the worst under-prediction, and the two decisions that act: a run that ran but is said not to fit
(a false rejection) and an out-of-memory run said to fit (a job that would OOM after admission).
With --check-bounds it exits 1 when a run that ran is said not to fit.
"""
import argparse
import collections
import csv
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The GPU the row names -> a catalog GPU of that memory size (etc/gpus.csv).  Sizes only matter for
# "fits" (the measured statistic itself does not depend on the card).
GPUS = [
    (r"A100.*40", "A100-SXM4-40GB"),
    (r"A100", "A100-SXM4-80GB"),
    (r"A10G|RTX-4090|24GB", "A10"),
    (r"H100", "H100-SXM5-80GB"),
    (r"GB200|B200", "B200-HGX"),
    (r"MI300X", "MI300X"),
    (r"48GB", "L40S"),
    (r"96GB", "GH200-96GB"),
    (r"80GB", "A100-SXM4-80GB"),
]

FRAMEWORKS = {
    "litgpt": "hf",
    "axolotl": "hf",
    "trl": "hf",
    "hf": "hf",
    "llamafactory": "hf",
    "megatron": "megatron",
    "torchtitan": "fsdp",
    "nemo": "fsdp",
    "deepspeed": "deepspeed",
}

UNITS = {"GB": 1e9, "GiB": 2**30, "MiB": 2**20}


def unit_bytes(unit):
    """Bytes per printed unit; the notes in the unit column say where the printed name is wrong."""
    u = unit.strip()
    if "GiB" in u or "1024^3" in u:
        return 2**30
    if u.startswith("MiB"):
        return 2**20
    if u.startswith("GB"):
        return 1e9
    return None


def first_word(v):
    return v.strip().split(" ")[0].split("(")[0].strip().lower()


def yes(v):
    return first_word(v) in ("yes", "partial")


def lora_targets(v):
    v = v.strip()
    if v.startswith("all-linear") or "lora_target_linear true" in v:
        return "all-linear"
    short = {"q": "q", "k": "k", "v": "v", "o": "o", "attn_proj": "o", "mlp": "gate,up,down",
             "up": "up", "down": "down", "gate": "gate"}
    m = re.fullmatch(r"[\w.\[\]\\+]*\((?:[a-z_]+\|)*[a-z_]+\)\.\(([a-z|]+)\)_proj", v)
    if m:  # PEFT's regex form: model.layers.[\d]+.(mlp|self_attn).(up|down|...|o)_proj
        parts = m.group(1).split("|")
        if all(p in short for p in parts):
            return ",".join(short[p] for p in parts)
    if re.fullmatch(r"[a-z_,]+", v):
        parts = v.split(",")
        if all(p in short or p == "lm_head" for p in parts):
            return ",".join(short[p] for p in parts if p in short)
        if all(p.endswith("_proj") for p in parts):
            return v
    return None


def row_args(r):
    """(args, None) for fmte-advise estimate, or (None, reason) when the row cannot be run."""
    model = r["model_hf_id"]
    if model.startswith(("custom:", "unknown:")):
        return None, "custom model"
    method = r["method"]
    if method not in ("full", "lora", "qlora"):
        return None, "method " + method
    quant = r["quant"].lower()
    if method == "lora" and ("int8" in quant or "4-bit" in quant or "nf4" in quant):
        method = "qlora"  # LoRA over a bitsandbytes-quantised base is what fmte calls qlora
    fw = FRAMEWORKS.get(r["framework"])
    if fw is None:
        return None, "framework " + r["framework"]
    if r["fp8"] not in ("no", "none"):
        return None, "fp8"
    for k in ("cp", "ep"):
        if r[k] != "1":
            return None, k + " " + r[k]
    for k in ("gpus", "micro_batch", "seq_len", "precision", "sharding"):
        if not re.fullmatch(r"\d+", r[k]) and k in ("gpus", "micro_batch", "seq_len"):
            return None, k + " unknown"
        if r[k] == "unknown":
            return None, k + " unknown"
    args = ["--model", model, "--method", method, "--framework", fw]
    args += ["--gpus", r["gpus"], "--micro-batch", r["micro_batch"], "--seq-len", r["seq_len"]]
    if re.fullmatch(r"\d+", r["gpus_per_node"]):
        args += ["--gpus-per-node", r["gpus_per_node"]]
    if re.fullmatch(r"\d+", r["grad_accum"]):
        args += ["--grad-accum", r["grad_accum"]]
    gpu = "A100-SXM4-80GB"
    for pat, name in GPUS:
        if re.search(pat, r["gpu_type"]):
            gpu = name
            break
    args += ["--gpu", gpu]
    prec = {"pure-bf16": "pure-bf16", "mixed-bf16": "mixed-bf16", "amp-bf16": "amp-bf16",
            "fp16": "amp-fp16", "fp32": "fp32"}.get(r["precision"])
    if prec is None:
        return None, "precision " + r["precision"]
    if r["framework"] == "axolotl" and prec == "amp-bf16" and not r["sharding"].startswith(
            ("fsdp", "zero")):
        # axolotl loads the weights in bf16 when bf16 is set (normalize_config), so the HF
        # Trainer's autocast runs over bf16 weights and states: fmte's reading of such a YAML
        # (etc/launchers.json hf-args) is pure-bf16. Under FSDP accelerate upcasts to fp32.
        prec = "pure-bf16"
    args += ["--precision", prec]
    opt = r["optimizer"].lower()
    if "muon" in opt:
        return None, "optimizer muon"
    if "8bit" in opt or "4bit" in opt:
        args += ["--optimizer", "adamw-8bit"]
    elif "adam" in opt or opt == "unknown":
        args += ["--optimizer", "adamw"]
    else:
        return None, "optimizer " + r["optimizer"]
    sharding = r["sharding"]
    if fw == "hf" and sharding == "none" and int(r["gpus"]) > 1:
        sharding = "ddp"
    args += ["--sharding", sharding]
    if fw == "megatron" and sharding == "zero1":
        # Megatron's distributed optimizer is ZeRO-1 over the data-parallel group.
        pass
    for k, flag in (("tp", "--tp"), ("pp", "--pp"), ("vpp", "--vpp")):
        if r[k] not in ("1", ""):
            if not re.fullmatch(r"\d+", r[k]):
                return None, k + " " + r[k]
            args += [flag, r[k]]
    if int(r["tp"]) > 1 and fw == "megatron":
        args += ["--sp"]
    ac = first_word(r["activation_checkpointing"])
    if ac in ("yes", "full"):
        args += ["--activation-checkpointing", "full"]
    elif ac == "selective":
        args += ["--activation-checkpointing", "selective"]
    elif ac not in ("no", "none"):
        return None, "checkpointing " + r["activation_checkpointing"]
    if first_word(r["compile"]) == "yes":
        args += ["--compile"]
    if yes(r["chunked_loss"]):
        args += ["--chunked-loss"]
    if yes(r["activation_offload"]):
        args += ["--activation-offload"]
    if "offload_params True" in r["notes"]:  # FSDP CPUOffload: parameters, gradients, optimizer
        args += ["--offload-params", "--offload-optimizer"]
    if method in ("lora", "qlora"):
        if re.fullmatch(r"\d+", r["lora_r"]):
            args += ["--lora-r", r["lora_r"]]
        t = lora_targets(r["lora_targets"])
        if t is None and r["lora_targets"] not in ("unknown", "n/a"):
            return None, "lora targets " + r["lora_targets"][:30]
        if t:
            args += ["--lora-targets", t]
    if method == "qlora":
        q = quant
        if "int8" in q:
            args += ["--quant", "int8"]
        if "-dq" in q or "double" in q:
            args += ["--double-quant"]
    return args, None


def measured_bytes(r):
    if r["measured_value"] == "OOM":
        return "OOM"
    per = unit_bytes(r["unit"])
    try:
        return float(r["measured_value"].lstrip("~")) * per if per else None
    except ValueError:
        return None


def predicted(mem, metric):
    if metric == "max_memory_allocated":
        return mem.get("allocated_peak_bytes", mem["allocator_peak_bytes"])
    if metric == "nvidia-smi":
        return mem["per_gpu_bytes"]
    return mem["allocator_peak_bytes"]


def summarise(rows, key):
    groups = collections.OrderedDict()
    for x in sorted(rows, key=key):
        groups.setdefault(key(x), []).append(x)
    out = []
    for k, xs in groups.items():
        est = [x for x in xs if "err" in x]
        errs = [x["err"] for x in est]
        out.append({
            "group": k,
            "rows": len(xs),
            "estimated": len(est),
            "mean_abs_err": sum(abs(e) for e in errs) / len(errs) if errs else None,
            "mean_err": sum(errs) / len(errs) if errs else None,
            "worst_under": min(errs) if errs else None,
            "worst_over": max(errs) if errs else None,
            "ran_said_not_fit": sum(1 for x in xs if x.get("false_reject")),
            "oom_rows": sum(1 for x in xs if x.get("oom")),
            "oom_said_fit": sum(1 for x in xs if x.get("oom") and x.get("fits")),
        })
    return out


def pct(v):
    return "     -" if v is None else "%+5.0f%%" % (100 * v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--advise", default=os.path.join(ROOT, "build", "tools", "fmte-advise"))
    ap.add_argument("--csv", default=os.path.join(ROOT, "tests", "data", "memory-measured",
                                                  "measured.csv"))
    ap.add_argument("--verbose", action="store_true", help="one line per row")
    ap.add_argument("--json", action="store_true", help="the summary as JSON")
    ap.add_argument("--check-bounds", action="store_true",
                    help="exit 1 when a run that ran is said not to fit")
    a = ap.parse_args()

    rows = list(csv.DictReader(open(a.csv, encoding="utf-8")))
    skipped = collections.Counter()
    results = []
    for i, r in enumerate(rows):
        x = {"row": i + 2, "source": r["source_repo"], "framework": r["framework"],
             "model": r["model_hf_id"], "metric": r["metric"], "section": r["section"]}
        results.append(x)
        args, why = row_args(r)
        meas = measured_bytes(r)
        if args is None or meas is None:
            x["skip"] = why or "measured value " + r["measured_value"]
            skipped[x["skip"]] += 1
            continue
        p = subprocess.run([a.advise, "estimate", "--json"] + args, capture_output=True,
                           text=True, timeout=60)
        if p.returncode != 0:
            msg = (p.stderr.strip().splitlines() or ["?"])[0]
            x["skip"] = ("model not in the catalog" if "unknown model" in msg
                         else "fmte: " + msg[:70])
            skipped[x["skip"]] += 1
            continue
        mem = json.loads(p.stdout)["memory"]
        x["args"] = " ".join(args)
        x["fits"] = bool(mem["fits"])
        x["pred"] = predicted(mem, r["metric"])
        if meas == "OOM":
            x["oom"] = True
        else:
            x["meas"] = meas
            x["err"] = x["pred"] / meas - 1
            x["false_reject"] = not x["fits"]

    by_source = summarise(results, lambda x: x["source"])
    by_fw = summarise(results, lambda x: x["framework"])
    by_metric = summarise(results, lambda x: x["metric"])
    total = summarise(results, lambda x: "all")
    if a.json:
        print(json.dumps({"by_source": by_source, "by_framework": by_fw, "by_metric": by_metric,
                          "all": total[0], "not_estimated": dict(skipped)}, indent=1))
    else:
        if a.verbose:
            for x in results:
                if "skip" in x:
                    print("row %3d  skip  %-40s %s" % (x["row"], x["model"][:40], x["skip"]))
                elif x.get("oom"):
                    print("row %3d  OOM   %-40s pred %6.1f GiB fits=%s  %s" % (
                        x["row"], x["model"][:40], x["pred"] / 2**30, x["fits"], x["args"]))
                else:
                    print("row %3d  %s %-40s meas %6.1f pred %6.1f GiB %s  %s" % (
                        x["row"], pct(x["err"]), x["model"][:40], x["meas"] / 2**30,
                        x["pred"] / 2**30, "" if x["fits"] else "NOT-FIT", x["args"]))
            print()
        for title, table in (("source", by_source), ("framework", by_fw), ("metric", by_metric),
                             ("all", total)):
            print("%-28s %5s %5s %7s %7s %7s %7s %6s %8s" % (
                "by " + title, "rows", "est", "|err|", "err", "under", "over", "ran!f",
                "oom:fit"))
            for g in table:
                print("%-28s %5d %5d %7s %7s %7s %7s %6d %4d/%-3d" % (
                    g["group"][:28], g["rows"], g["estimated"], pct(g["mean_abs_err"]),
                    pct(g["mean_err"]), pct(g["worst_under"]), pct(g["worst_over"]),
                    g["ran_said_not_fit"], g["oom_said_fit"], g["oom_rows"]))
            print()
        print("not estimated:")
        for k, v in skipped.most_common():
            print("  %3d  %s" % (v, k))
    if a.check_bounds and total[0]["ran_said_not_fit"] > 0:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
