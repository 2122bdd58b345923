#!/usr/bin/env python3
"""Compare fmte's step time with the measured step times in the memory-measured tables.

usage: scripts/eval-time.py [--advise BIN] [--csv FILE ...] [--throughput FILE ...] [--verbose]
                            [--json] [--calibrate] [--check-bounds] [--write-manifest]
                            [--manifest FILE]

The tables of tests/data/memory-measured (measured.csv, published; measured-h100-hf.csv, measured
by this project with scripts/device/measure_hf.py) give, beside each peak, the run's step time
(`step_time_s`) or throughput (`tokens_per_s`) where the source printed it. Each run (one row per
run: rows of the same section and statistic are the same run) goes through
`fmte-advise estimate --json` with the arguments scripts/eval-memory.py builds for it, and the
prediction compared is `time.step_time_s`, or `time.tokens_per_s_per_gpu` where the row gives a
per-GPU throughput (its notes say "per GPU"); a step time the source took over one micro-batch
(litgpt's ms/iter) is compared with fmte's step time over its micro-batches. Reported per source, framework and GPU: runs, mean
absolute error, median signed error (predicted / measured - 1: negative = fmte too fast), and
the range. This is the yardstick of issue 13 (step time you can act on).

With them (unless --csv names other tables) the published Megatron throughput of
tests/data/throughput-published (NeMo and Megatron-Bridge on H100 and B200, BLOOM's Megatron-DeepSpeed
on 384 A100; a model given by its dimensions becomes a config.json in a temporary folder; Megatron-FSDP rows
are skipped).

regressors/calibration/time-bound.json records that calibration (per group: runs, sources, the
ratios, the factor the limit applies and the runs under it, the step time's errors; each source
left out in turn): --write-manifest writes it, --check-bounds also fails when it is not what the
runs give now (a change that moves predictions rewrites it in the same commit). With other tables
(--csv, --throughput) --manifest names the record to write or check.

--calibrate prints, per group of jobs (GPU generation x framework family: Megatron or the PyTorch
frameworks, x mixture of experts or dense), the split-conformal 95% quantile of measured / predicted step time that the time limit's bound uses
(estimator/time/src/walltime.cc MeasuredTimeFactor), and checks it leaving out one source at a time:
the group's factor from the other sources (a group they lack: the widest of their groups), times
the margin for a new source where fewer than two of them saw the group (time_groups.cc
kNewSourceMargin: the largest factor by which one source's 95% quantile exceeded the other
sources' of its group, itself from the other sources), and how many of the left-out source's runs
it covers. --check-bounds exits 1 when, in a group, fewer than 90% of the runs lie under the factor
fmte's time limit applies (from time.wall_time_bound_s of a 100-step job), or when that rule left
out one source at a time covers fewer than 90% of all runs (test time_measured_eval).
"""
import argparse
import collections
import csv
import importlib.util
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_eval_memory():
    spec = importlib.util.spec_from_file_location(
        "eval_memory", os.path.join(ROOT, "scripts", "eval-memory.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def generation(gpu):
    """The GPU generation of a row's GPU name, as walltime.cc MeasuredTimeFactor reads job.gpu."""
    g = gpu.upper()
    for names, gen in ((("GB200", "GB300", "B200", "B300"), "blackwell"),
                       (("GH200", "H100", "H200", "H800"), "hopper"),
                       (("A100", "A800"), "ampere"),
                       (("MI300", "MI325"), "cdna3")):
        if any(n in g for n in names):
            return gen
    return "other"


def family(framework):
    return "megatron" if framework in ("megatron", "nemo") else "pytorch"


def quantile(xs, q):
    """The split-conformal q-quantile: the ceil((n + 1) q)-th smallest, the largest when that
    passes n (with few runs, as here, the bound covers every run seen)."""
    xs = sorted(xs)
    k = math.ceil((len(xs) + 1) * q)
    return xs[min(k, len(xs)) - 1]


def calibrate(results, q=0.95):
    """Per group the median and q-quantile of measured / predicted by the model without the
    group's residual (time.measured_factor), and their leave-one-source-out check."""
    for x in results:
        x["final_ratio"] = 1 / (1 + x["err"])
        x["ratio"] = x["final_ratio"] * x["measured_factor"]
        x["group"] = (generation(x["gpu"]) + "/" + family(x["framework"]) +
                      ("/moe" if x["moe"] else ""))
    groups = collections.defaultdict(list)
    for x in results:
        groups[x["group"]].append(x)
    record = {"groups": {}, "leave_one_source_out": []}
    print("group                      runs  sources   median    q%.0f     max" % (100 * q))
    factors = {}
    for g, xs in sorted(groups.items()):
        rs = [x["ratio"] for x in xs]
        factors[g] = quantile(rs, q)
        errs = [x["err"] for x in xs]
        record["groups"][g] = {
            "runs": len(xs), "sources": sorted({x["source"] for x in xs}),
            "median_ratio": statistics.median(rs), "q95_ratio": factors[g], "max_ratio": max(rs),
            "limit_factor": statistics.median(x["bound_factor"] for x in xs),
            "runs_under_limit": sum(1 for x in xs
                                    if x["final_ratio"] <= x["bound_factor"] * (1 + 1e-3)),
            "mean_abs_err": statistics.mean(abs(e) for e in errs),
            "median_err": statistics.median(errs)}
        print("%-26s %5d  %7d  %6.3f  %6.3f  %6.3f" % (
            g, len(xs), len({x["source"] for x in xs}), statistics.median(rs), factors[g], max(rs)))
    print("widest: %.2f dense, %.2f with the mixtures of experts" % (
        max(f for g, f in factors.items() if not g.endswith("/moe")), max(factors.values())))
    print()
    print("a group's median enters the prediction where two sources agree: each source's median")
    print("against the other sources' median of the group (sources with at least 3 runs)")
    for g, xs in sorted(groups.items()):
        by_src = collections.defaultdict(list)
        for x in xs:
            by_src[x["source"]].append(x["ratio"])
        big = {s: v for s, v in by_src.items() if len(v) >= 3}
        if len(big) < 2:
            continue
        for s, v in sorted(big.items()):
            others = [r for t, rs in big.items() if t != s for r in rs]
            print("  %-22s %-28s median %.3f, the others' %.3f: %+.0f%%" % (
                g, s[:28], statistics.median(v), statistics.median(others),
                100 * (statistics.median(others) / statistics.median(v) - 1)))
    print()
    margins = new_source_margins(results, q)
    print("a new source against the others of its group: its q%.0f over theirs" % (100 * q))
    for m, g, s in margins:
        print("  %-22s %-28s %.3f" % (g, s[:28], m))
    margin = max([1.0] + [m for m, _, _ in margins])
    print("margin for a group seen from fewer than 2 sources (or not at all): %.3f" % margin)
    record["new_source_margin"] = margin
    print()
    print("leave one source out: the group's factor from the other sources (else their widest),")
    print("times the margin from the other sources where fewer than 2 of them saw the group")
    print("source left out                group                 runs  factor  covered")
    covered = total = 0
    for s in sorted({x["source"] for x in results}):
        rest = [x for x in results if x["source"] != s]
        rest_groups = collections.defaultdict(list)
        rest_sources = collections.defaultdict(set)
        for x in rest:
            rest_groups[x["group"]].append(x["ratio"])
            rest_sources[x["group"]].add(x["source"])
        rest_f = {g: quantile(v, q) for g, v in rest_groups.items()}
        # An unseen group takes the widest of its kind (time_groups.cc kWidest, kWidestMoe): a
        # dense one the dense groups', a mixture of experts every group's.
        widest_dense = max([1.0] + [f for g, f in rest_f.items() if not g.endswith("/moe")])
        widest_all = max([1.0] + list(rest_f.values()))
        rest_margin = max([1.0] + [m for m, _, _ in new_source_margins(rest, q)])
        mine = collections.defaultdict(list)
        for x in results:
            if x["source"] == s:
                mine[x["group"]].append(x["ratio"])
        for g, rs in sorted(mine.items()):
            f = rest_f.get(g, widest_all if g.endswith("/moe") else widest_dense)
            if len(rest_sources.get(g, ())) < 2:
                f *= rest_margin
            n = sum(1 for r in rs if r <= f)
            covered += n
            total += len(rs)
            record["leave_one_source_out"].append({
                "source": s, "group": g, "runs": len(rs), "factor": f, "covered": n,
                "group_unseen": g not in rest_f})
            print("%-30s %-20s %5d  %6.2f  %3d of %d%s" % (
                s[:30], g, len(rs), f, n, len(rs),
                "" if g in rest_f else "  (group unseen: widest)"))
    print("covered: %d of %d runs (%.0f%%)" % (covered, total, 100.0 * covered / max(1, total)))
    record["leave_one_source_out_covered"] = covered
    record["leave_one_source_out_runs"] = total
    return covered / max(1, total), record


def new_source_margins(results, q=0.95):
    """Per group with two or more sources, each source's q-quantile of measured / predicted over
    the other sources' (the factor a bound calibrated on those others needed to cover this one as
    well as it covers them): (margin, group, source), largest last."""
    by = collections.defaultdict(lambda: collections.defaultdict(list))
    for x in results:
        by[x["group"]][x["source"]].append(x["ratio"])
    out = []
    for g, srcs in by.items():
        if len(srcs) < 2:
            continue
        for s, v in srcs.items():
            others = [r for t, vv in srcs.items() if t != s for r in vv]
            out.append((quantile(v, q) / quantile(others, q), g, s))
    return sorted(out)


def check_bounds(results, loso_coverage):
    """1 when a group has fewer than 90% of its runs under the factor fmte's limit applies, or
    when the rule, left out one source at a time, covers fewer than 90% of the runs."""
    groups = collections.defaultdict(list)
    for x in results:
        groups[x["group"]].append(x["final_ratio"] <= x["bound_factor"] * (1 + 1e-3))
    bad = 0
    print()
    for g, cov in sorted(groups.items()):
        share = sum(cov) / len(cov)
        ok = share >= 0.9
        bad += not ok
        print("%s %-26s %3d of %3d runs under fmte's limit factor (%.0f%%)" % (
            "ok  " if ok else "FAIL", g, sum(cov), len(cov), 100 * share))
    ok = loso_coverage >= 0.9
    bad += not ok
    print("%s leave one source out: %.0f%% of the runs under the other sources' factor" % (
        "ok  " if ok else "FAIL", 100 * loso_coverage))
    return 1 if bad else 0


def manifest_of(em, record, tables, throughput):
    """What regressors/calibration/time-bound.json records: per group of measured runs (GPU
    generation x framework family x mixture of experts) the runs, sources, measured / predicted
    (median, the split-conformal 95% quantile, the largest), the factor fmte's time limit applies
    to the predicted wall time and how many runs lie under it, and the step time's errors; then
    each source left out in turn, its runs checked against the factor the other sources give.
    `em`: scripts/eval-memory.py as loaded by main (its rounding)."""
    rel = lambda p: os.path.relpath(p, ROOT)
    return em.rounded({
        "what": "calibration of fmte's time-limit bound (time.wall_time_bound_s) on measured step "
                "times: estimator/time/src/time_groups.cc applies it, scripts/eval-time.py "
                "--write-manifest writes this file and --check-bounds (test time_measured_eval) "
                "fails when it is stale",
        "data": [rel(t) for t in tables] + [rel(t) for t in throughput],
        "ratio": "measured / predicted step time of the model without the group's residual "
                 "(time.measured_factor)",
        "err": "predicted / measured - 1 of the step time fmte reports (negative: too fast)",
        "groups": record["groups"],
        "new_source_margin": record["new_source_margin"],
        "leave_one_source_out": record["leave_one_source_out"],
        "leave_one_source_out_covered": record["leave_one_source_out_covered"],
        "leave_one_source_out_runs": record["leave_one_source_out_runs"],
    })


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


THROUGHPUT_GPUS = {"H100": "H100-SXM5-80GB", "B200": "B200-HGX", "A100-80GB": "A100-SXM4-80GB",
                   "GB200": "GB200", "GB300": "GB300"}


def throughput_args(r, tmp):
    """(args, kind, measured, None) for a row of tests/data/throughput-published, whose model is
    given by its dimensions (a config.json written into `tmp`), or (None, None, None, reason)."""
    gpu = THROUGHPUT_GPUS.get(r["gpu_type"])
    if gpu is None:
        return None, None, None, "GPU %s not in the catalog" % r["gpu_type"]
    if r["sharding"].startswith("fsdp"):
        return None, None, None, "Megatron-FSDP"
    llama = r["model"].startswith("Llama")
    h, L, a, kv, f, v = (int(r[k])
                         for k in ("hidden", "layers", "heads", "kv_heads", "ffn", "vocab"))
    if llama:  # SwiGLU, RMSNorm, rotary, untied
        cfg = {"model_type": "llama", "hidden_size": h, "num_hidden_layers": L,
               "num_attention_heads": a, "num_key_value_heads": kv, "intermediate_size": f,
               "vocab_size": v, "max_position_embeddings": int(r["seq_len"]),
               "tie_word_embeddings": False}
    else:  # GPT-3 / Nemotron / BLOOM: a plain (non-gated) MLP and LayerNorm, as GPT-2 has
        cfg = {"model_type": "gpt2", "n_embd": h, "n_layer": L, "n_head": a, "n_inner": f,
               "vocab_size": v, "n_positions": int(r["seq_len"]), "activation_function": "gelu"}
    d = os.path.join(tmp, "%s-%dl-%dh-%dv" % (cfg["model_type"], L, h, v))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as fh:
        json.dump(cfg, fh)
    args = ["--model", d, "--method", "full", "--framework", r["framework"], "--gpu", gpu,
            "--gpus", r["gpus"], "--gpus-per-node", r["gpus_per_node"],
            "--micro-batch", r["micro_batch"], "--global-batch", r["global_batch"],
            "--seq-len", r["seq_len"], "--precision", "mixed-bf16", "--sharding", "zero1"]
    for k in ("tp", "pp", "vpp", "cp", "ep"):
        if r[k] not in ("1", ""):
            args += ["--" + k, r[k]]
    if r["sp"] == "true":
        args += ["--sp"]
    if r["activation_checkpointing"].startswith("full"):
        args += ["--activation-checkpointing", "full"]
    if r["precision"] == "fp8":
        args += ["--fp8", "delayed"]
    elif r["precision"].startswith("fp8(mx"):
        args += ["--fp8", "mxfp8"]
    # The network per node the row names ("8x400Gb/s IB per node", "4x Omni-Path 100Gb/s").
    m = re.search(r"(\d+)x\s*(?:[A-Za-z-]+\s+)?(\d+)\s*Gb/s", r["network"])
    if m:
        args += ["--inter-node-gbps", str(int(m.group(1)) * int(m.group(2)))]
    if r["metric"] == "tokens_per_s_per_gpu":
        return args, "tokens", float(r["measured_value"]), None
    return args, "step", float(r["measured_value"]), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--advise", default=os.path.join(ROOT, "build", "tools", "fmte-advise"))
    ap.add_argument("--csv", action="append")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--check-bounds", action="store_true")
    ap.add_argument("--manifest",
                    help="the record of the bound's calibration (default, for the shipped tables: "
                         "regressors/calibration/time-bound.json): --check-bounds fails when it is "
                         "not what the runs give now")
    ap.add_argument("--write-manifest", action="store_true",
                    help="write --manifest from the runs (after a change that moves predictions)")
    ap.add_argument("--throughput", action="append",
                    help="tables of published Megatron throughput (default: "
                         "tests/data/throughput-published/megatron_nemo_bloom.csv)")
    a = ap.parse_args()
    own_tables = not a.csv and a.throughput is None
    manifest_path = a.manifest or (
        os.path.join(ROOT, "regressors", "calibration", "time-bound.json") if own_tables else None)
    if a.write_manifest and manifest_path is None:
        ap.error("--write-manifest with other tables (--csv, --throughput) needs --manifest FILE")
    em = load_eval_memory()
    data = os.path.join(ROOT, "tests", "data", "memory-measured")
    tables = a.csv or [os.path.join(data, "measured.csv"), os.path.join(data, "measured-h100-hf.csv")]
    results, skipped, seen = [], collections.Counter(), set()

    def estimate(args):
        """fmte's `time` of a 100-step job, or None (counted in `skipped`) when it refuses."""
        p = subprocess.run([a.advise, "estimate", "--json", "--steps", "100"] + args,
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            skipped["fmte: " + (p.stderr.strip().splitlines() or ["?"])[0][:60]] += 1
            return None
        d = json.loads(p.stdout)
        t = d["time"]
        # A mixture of experts (parameters used per token fewer than the model's) is a group of
        # its own: its runs' error is not the dense models' (time_groups.cc).
        t["moe"] = d["params"]["active"] < d["params"]["total"]
        return t

    def add(t, meas, kind, source, framework, gpu, section, per_micro_batch=False):
        """Records fmte's `time` against a measured step time (kind "step"; `per_micro_batch`: the
        source timed one micro-batch) or per-GPU throughput ("tokens"), as a step-time error."""
        if kind == "step":
            pred = t["step_time_s"]
            if per_micro_batch:
                pred /= max(1, t.get("micro_batches", 1))
            err = pred / meas - 1
        else:
            err = meas / t["tokens_per_s_per_gpu"] - 1
        parts = t["wall_breakdown"]
        varying = parts["train"] + parts["eval"]
        fixed = t["wall_time_s"] - varying
        results.append({"bound_factor": (t["wall_time_bound_s"] - fixed) / varying,
                        "measured_factor": t.get("measured_factor", 1.0), "source": source,
                        "framework": framework, "gpu": gpu, "err": err, "section": section,
                        "measured": meas, "kind": kind, "mfu": t.get("mfu"), "moe": t["moe"]})

    for path in tables:
        for r in csv.DictReader(open(path, encoding="utf-8")):
            # One run per configuration: its rows differ only in the statistic measured.
            key = tuple(v for k, v in r.items()
                        if k not in ("metric", "measured_value", "unit", "notes"))
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
            if (r["gpus"].isdigit() and r["gpus_per_node"].isdigit()
                    and int(r["gpus"]) > int(r["gpus_per_node"]) and not r.get("network")):
                # Across nodes the step waits on a network these tables do not name; fmte's
                # default (200 Gb/s per node) is a guess for an unknown site, not the source's.
                skipped["multi-node, network not stated"] += 1
                continue
            t = estimate(args)
            if t is not None:
                add(t, meas, kind, r["source_repo"], r["framework"],
                    r["gpu_type"].split("(")[0].strip()[:24], r["section"],
                    "one micro-batch iteration" in r["notes"])  # litgpt's ms/iter

    throughput = a.throughput if a.throughput is not None else (
        [] if a.csv else [os.path.join(ROOT, "tests", "data", "throughput-published",
                                       "megatron_nemo_bloom.csv")])
    with tempfile.TemporaryDirectory(prefix="fmte-eval-time-") as tmp:
        for path in throughput:
            for r in csv.DictReader(open(path, encoding="utf-8")):
                args, kind, meas, why = throughput_args(r, tmp)
                if args is None:
                    skipped[why] += 1
                    continue
                t = estimate(args)
                if t is not None:
                    add(t, meas, kind, r["source_repo"], r["framework"], r["gpu_type"],
                        "%s %s x%s tp%s pp%s cp%s %s" % (r["model"], r["gpu_type"], r["gpus"],
                                                         r["tp"], r["pp"], r["cp"], r["precision"]))

    def table(key):
        groups = collections.defaultdict(list)
        for x in results:
            groups[key(x)].append(x["err"])
        return {k: {"runs": len(v), "mean_abs_err": statistics.mean(abs(e) for e in v),
                    "median_err": statistics.median(v), "min": min(v), "max": max(v)}
                for k, v in sorted(groups.items())}

    if a.calibrate or a.check_bounds or a.write_manifest:
        loso_coverage, record = calibrate(results)
        manifest = manifest_of(em, record, tables, throughput)
    if a.write_manifest:
        with open(manifest_path, "w", encoding="utf-8") as f:
            f.write(json.dumps(manifest, indent=1) + "\n")
        print("wrote %s" % manifest_path)
    if a.check_bounds:
        # The shipped record is of the shipped tables: other tables are checked on their own.
        return check_bounds(results, loso_coverage) | (
            em.check_manifest(manifest, manifest_path, "scripts/eval-time.py")
            if manifest_path is not None else 0)
    if a.calibrate or a.write_manifest:
        return 0
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
