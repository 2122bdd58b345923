#!/usr/bin/env python3
"""Compare fmte's step time with the measured step times in the memory-measured tables.

usage: scripts/eval-time.py [--advise BIN] [--csv FILE ...] [--verbose] [--json]

The tables of tests/data/memory-measured (measured.csv, published; measured-h100-hf.csv, measured
by this project with scripts/device/measure_hf.py) give, beside each peak, the run's step time
(`step_time_s`) or throughput (`tokens_per_s`) where the source printed it. Each run (one row per
run: rows of the same section and statistic are the same run) goes through
`fmte-advise estimate --json` with the arguments scripts/eval-memory.py builds for it, and the
prediction compared is `time.step_time_s`, or `time.tokens_per_s_per_gpu` where the row gives a
per-GPU throughput (its notes say "per GPU"); a step time the source took over one micro-batch
(litgpt's ms/iter) is compared with fmte's step time over its micro-batches. Reported per source, framework and GPU: runs, mean
absolute error, median signed error (predicted / measured - 1: negative = fmte too fast), and
the range. This is the yardstick of issue 13 (step time you can act on); it changes nothing.
"""
import argparse
import collections
import csv
import importlib.util
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_eval_memory():
    spec = importlib.util.spec_from_file_location(
        "eval_memory", os.path.join(ROOT, "scripts", "eval-memory.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def measured_time(r):
    """('step', seconds) or ('tokens', tokens/s per GPU) or (None, reason)."""
    try:
        if r["step_time_s"]:
            return "step", float(r["step_time_s"])
        if r["tokens_per_s"]:
            if "per gpu" not in r["notes"].lower():
                return None, "throughput not stated per GPU"
            return "tokens", float(r["tokens_per_s"])
    except ValueError:
        return None, "unreadable time"
    return None, "no time"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--advise", default=os.path.join(ROOT, "build", "tools", "fmte-advise"))
    ap.add_argument("--csv", action="append")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    em = load_eval_memory()
    data = os.path.join(ROOT, "tests", "data", "memory-measured")
    tables = a.csv or [os.path.join(data, "measured.csv"), os.path.join(data, "measured-h100-hf.csv")]
    results, skipped, seen = [], collections.Counter(), set()
    for path in tables:
        for r in csv.DictReader(open(path, encoding="utf-8")):
            key = (r["source_repo"], r["section"])
            if key in seen:
                continue  # the same run's other statistic
            seen.add(key)
            kind, meas = measured_time(r)
            if kind is None:
                if meas != "no time":
                    skipped[meas] += 1
                continue
            args, why = em.row_args(r)
            if args is None:
                skipped[why] += 1
                continue
            p = subprocess.run([a.advise, "estimate", "--json"] + args, capture_output=True,
                               text=True, timeout=60)
            if p.returncode != 0:
                skipped["fmte: " + (p.stderr.strip().splitlines() or ["?"])[0][:60]] += 1
                continue
            t = json.loads(p.stdout)["time"]
            if kind == "step":
                pred = t["step_time_s"]
                if "one micro-batch iteration" in r["notes"]:  # litgpt's ms/iter
                    pred /= max(1, t.get("micro_batches", 1))
                err = pred / meas - 1
            else:
                err = meas / t["tokens_per_s_per_gpu"] - 1  # as a step-time error
            results.append({"source": r["source_repo"], "framework": r["framework"],
                            "gpu": r["gpu_type"].split("(")[0].strip()[:24], "err": err,
                            "section": r["section"], "measured": meas, "kind": kind,
                            "mfu": t.get("mfu")})

    def table(key):
        groups = collections.defaultdict(list)
        for x in results:
            groups[key(x)].append(x["err"])
        return {k: {"runs": len(v), "mean_abs_err": statistics.mean(abs(e) for e in v),
                    "median_err": statistics.median(v), "min": min(v), "max": max(v)}
                for k, v in sorted(groups.items())}

    out = {"by_source": table(lambda x: x["source"]),
           "by_framework_gpu": table(lambda x: x["framework"] + " / " + x["gpu"]),
           "all": table(lambda x: "all"), "skipped": dict(skipped)}
    if a.json:
        print(json.dumps(out, indent=1))
        return 0
    if a.verbose:
        for x in sorted(results, key=lambda x: x["err"]):
            print("%+5.0f%%  %-28s %s" % (100 * x["err"], x["source"][:28], x["section"][:90]))
        print()
    for title in ("by_source", "by_framework_gpu", "all"):
        print("%-40s %5s %7s %8s %7s %7s" % (title.replace("_", " "), "runs", "|err|", "median",
                                             "min", "max"))
        for k, v in out[title].items():
            print("%-40s %5d %6.0f%% %+7.0f%% %+6.0f%% %+6.0f%%" % (
                k[:40], v["runs"], 100 * v["mean_abs_err"], 100 * v["median_err"],
                100 * v["min"], 100 * v["max"]))
        print()
    print("not compared:")
    for k, v in skipped.most_common():
        print("  %3d  %s" % (v, k))
    return 0


if __name__ == "__main__":
    sys.exit(main())
