#!/usr/bin/env python3
"""fmte's predictions for cases of measure_hf.py, written before the cases run (a held-out batch):

    python3 scripts/device/predict_cases.py COMMIT N,M,... > predictions-batchK.csv

Each case is turned into its measured.csv row (measure_hf.rows_for) and that row into
fmte-advise estimate arguments exactly as scripts/eval-memory.py does (row_args), so that the
prediction is the one the evaluation will compare. COMMIT names the estimator that predicted.
"""
import csv
import importlib.util
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import measure_hf  # noqa: E402

GIB = 2**30


def eval_memory():
    spec = importlib.util.spec_from_file_location(
        "eval_memory", os.path.join(measure_hf.ROOT, "scripts", "eval-memory.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    commit, picks = sys.argv[1], [int(x) for x in sys.argv[2].split(",")]
    em = eval_memory()
    advise = os.path.join(measure_hf.ROOT, "build", "tools", "fmte-advise")
    vers = dict.fromkeys(("torch", "cuda", "transformers", "peft", "accelerate", "alloc_conf"), "")
    vers["gpu"] = "NVIDIA H100 80GB HBM3"
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["case", "section", "pred_step_time_s", "pred_allocated_gib",
                "pred_allocator_peak_gib", "pred_low_gib", "pred_bound_gib", "fits", "fmte_commit",
                "args"])
    for i in picks:
        case = measure_hf.CASES[i]
        info = {"oom": None, "params": 0, "trainable": 0, "attn_implementation": "sdpa",
                "lora_dtype": None, "steps": [{"step": k, "time_s": 1.0, "max_allocated": 0,
                                                "max_reserved": 0} for k in (1, 2, 3)]}
        row = measure_hf.rows_for(case, info, vers, commit)[0]
        args, why = em.row_args(row)
        if not args:
            sys.exit("case %d: %s" % (i, why))
        out = subprocess.run([advise, "estimate", "--json"] + args, capture_output=True,
                             text=True, check=True).stdout
        d = json.loads(out)
        mem = d["memory"]
        w.writerow([i, row["section"], "%.4f" % d["time"]["step_time_s"],
                    "%.3f" % (mem["allocated_peak_bytes"] / GIB),
                    "%.3f" % (mem["allocator_peak_bytes"] / GIB), "%.3f" % (mem["low_bytes"] / GIB),
                    "%.3f" % (mem["bound_bytes"] / GIB), mem["fits"], commit, " ".join(args)])


if __name__ == "__main__":
    main()
