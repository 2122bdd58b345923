#!/usr/bin/env python3
"""Reduce the kernel traces of scripts/device/profile_hf.py to what the time model is checked on.

    python3 scripts/device/profile_summary.py PROFILE.jsonl[.gz]... --out DIR

Writes DIR/profile-h100-hf.csv, one row per profiled case: the case (as measure_hf.py describes
it), the median wall time of its unprofiled steady steps (steps 2.., the profiled one left out),
the GPU time of the profiled step per kernel class (profile_hf.category), the kernel count, and the
matrix products' FLOPs (2 m k n per aten::mm/addmm/bmm/baddbmm kernel, from the shapes the
launching operator recorded) with their GPU time. And DIR/gemm-h100-hf.csv: every distinct
matrix-product shape per case with its kernel count and total GPU time, the raw material of a GEMM
efficiency curve measured inside real training steps. Standard library only.
"""
import argparse
import collections
import csv
import gzip
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_hf  # noqa: E402

CATEGORIES = ("gemm", "attention", "elementwise", "norm", "reduce", "softmax_loss", "optimizer",
              "memcpy", "memset", "other")


def gemm_dims(op, dims):
    """(batch, m, k, n) of a matrix-product operator's recorded input dims, or None."""
    try:
        if op == "aten::mm":
            (m, k), (_, n) = dims[0], dims[1]
            return 1, m, k, n
        if op == "aten::addmm":
            (m, k), (_, n) = dims[1], dims[2]
            return 1, m, k, n
        if op == "aten::bmm":
            (b, m, k), (_, _, n) = dims[0], dims[1]
            return b, m, k, n
        if op == "aten::baddbmm":
            (b, m, k), (_, _, n) = dims[1], dims[2]
            return b, m, k, n
    except (TypeError, ValueError, IndexError):
        return None
    return None


def read(paths):
    for p in paths:
        opener = gzip.open if p.endswith(".gz") else open
        with opener(p, "rt") as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profiles", nargs="+")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    cases, shapes = [], []
    for r in read(a.profiles):
        if "error" in r or r.get("oom"):
            continue
        model_id, method, precision, seq, mb, gc_on, targets, extra = measure_hf.unpack(
            r["case"])
        steady = [s["time_s"] for s in r["steps"][1:] if not s["profiled"]]
        t = collections.Counter()
        gemm_flops = gemm_s = 0.0
        per_shape = collections.defaultdict(lambda: [0, 0.0])
        for _, cat, _, dur_us, op, dims in r["events"]:
            t[cat] += dur_us * 1e-6
            if cat == "gemm" and dims:
                g = gemm_dims(op, dims)
                if g:
                    b, m, k, n = g
                    gemm_flops += 2.0 * b * m * k * n
                    gemm_s += dur_us * 1e-6
                    per_shape[g][0] += 1
                    per_shape[g][1] += dur_us * 1e-6
        row = {"case": r["index"], "model_hf_id": model_id, "method": method,
               "precision": precision, "seq_len": seq, "micro_batch": mb, "grad_accum": extra["ga"],
               "activation_checkpointing": "yes" if gc_on else "no",
               "lora_targets": targets if method == "lora" else "n/a",
               "lora_r": extra["r"] if method == "lora" else "n/a",
               "lora_dropout": extra["dropout"] if method == "lora" else "n/a",
               "attn": extra.get("attn", "sdpa"), "optim": extra["optim"],
               "steady_step_s": "%.4f" % statistics.median(steady),
               "busy_s": "%.4f" % sum(t.values()), "kernels": len(r["events"])}
        for c in CATEGORIES:
            row[c + "_s"] = "%.5f" % t[c]
        row["gemm_flops_shaped"] = "%.4e" % gemm_flops
        row["gemm_shaped_s"] = "%.5f" % gemm_s
        v = r["versions"]
        row["gpu"], row["torch"], row["transformers"], row["peft"] = (
            v["gpu"], v["torch"], v["transformers"], v["peft"])
        cases.append(row)
        for (b, m, k, n), (cnt, sec) in sorted(per_shape.items()):
            shapes.append({"case": r["index"], "batch": b, "m": m, "k": k, "n": n,
                           "kernels": cnt, "gpu_s": "%.6f" % sec})
    for name, rows in (("profile-h100-hf.csv", cases), ("gemm-h100-hf.csv", shapes)):
        with open(os.path.join(a.out, name), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        print("%s: %d rows" % (name, len(rows)))


if __name__ == "__main__":
    main()
