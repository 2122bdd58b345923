#!/usr/bin/env python3
"""Fit the in-step kernel constants of the time model (estimator/time/src/time_parts.h) on the
kernel profiles of tests/data/time-profiled, and report them left out one model family at a time.

    python3 scripts/fit-eager-traffic.py [--advise build/tools/fmte-advise]

Needs numpy and scipy (Debian: python3-numpy python3-scipy) and a built fmte-advise.

1. Eager memory-bound traffic. For each dense profiled run (MoE runs' per-expert loops left out) the
   GPU time of its memory-bound kernels (elementwise, norm, reduce, softmax_loss, other) is fitted
   as  (k_act A + k_rec A [full checkpointing] + k_peft P + L) / HBM  where A is the bytes the
   run's layers save for backward per step without checkpointing (fmte-advise estimate's
   memory.breakdown.activations, the memory model's op chain, times the accumulation steps)
   without what PEFT's LoRA modules save of their own, P the bytes PEFT's elementwise chain moves
   (forward + backward, and the forward again under full checkpointing), both as the memory
   model counts them (peft_adapter_bytes below mirrors memory_internal.h PeftChainBytes and the
   PEFT branch of LayerActivations), and L the LM head's logits and loss (6 bytes per vocabulary
   entry per token and pass, 3 passes), at the H100's nominal 3350 GB/s. Weighted by 1/measured
   (relative error), least squares.
2. FlashAttention's rate: the fraction of dense peak (989.4 TFLOP/s) the attention kernels reach
   on the runs without a sliding-window mask, fitted as 1 / (1 + c_half / context + d_half /
   head_dim) in log space (the peak fraction at large sizes fixed at 1, where the free fit lands).
3. The optimizer step of full fine-tuning: measured GPU time of the fused AdamW + clipping kernels
   against the bytes fmte counts (time_parts OptimizerBytesPerParam + 3 gradient bytes).
4. The GPU's idle time within a step (steady wall time less the kernels' busy time), fitted as
   g_layer x layer passes + g_peft x PEFT module passes (passes per layer: forward 1, backward 2,
   the recomputed forward of full checkpointing 1; a PEFT module per adapted linear), weighted by
   1/measured (time_parts.h kEagerLayerGap, kPeftModuleGap).
"""
import argparse
import csv
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
from scipy.optimize import least_squares

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HBM = 3350e9
PEAK = 989.4e12
MEM = ("elementwise", "norm", "reduce", "softmax_loss", "other")
SLIDING = ("phi3", "starcoder2", "gemma2")  # SDPA gets an explicit mask: not the flash kernel


def load_eval_memory():
    spec = importlib.util.spec_from_file_location("em", os.path.join(ROOT, "scripts",
                                                                      "eval-memory.py"))
    em = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(em)
    return em


def config(model_id):
    with open(os.path.join(ROOT, "etc", "models", model_id, "config.json")) as f:
        c = json.load(f)
    return {**c, **c.get("text_config", {})}


def peft_chain(in_bytes, autocast, dropout, i, o, result=2.0):
    """memory_internal.h PeftChainBytes: (forward, backward) bytes of one module per token."""
    x1 = 4.0
    c = 2.0 if autocast else x1
    total = max(result, c)
    cast_in = in_bytes + x1 if in_bytes != x1 else 0
    drop = 2 * x1 + 1 if dropout else 0
    autocast_in = x1 + c if autocast else 0
    cast_out = total + result if total != result else 0
    fwd = i * (cast_in + drop + autocast_in) + o * (2 * c + result + c + total + cast_out)
    split = (total + result if total != result else 0) + (total + c if total != c else 0)
    bwd = o * (cast_out + split + 2 * c) + i * (autocast_in + drop + cast_in + 3 * in_bytes)
    return fwd, bwd


def adapted_linears(c, p):
    """(in, out, fed by a norm) of each linear of a block that the profiled run adapts."""
    h = c.get("hidden_size") or c.get("n_embd")
    nh = c.get("num_attention_heads") or c.get("n_head")
    kv = c.get("num_key_value_heads") or nh
    hd = c.get("head_dim") or h // nh
    ffn = c.get("intermediate_size") or c.get("n_inner") or 4 * h
    # every linear of the block, as the catalog's block builders list them
    mods = {"q": (h, nh * hd, True), "k": (h, kv * hd, True), "v": (h, kv * hd, True),
            "o": (nh * hd, h, False), "up": (h, ffn, True), "down": (ffn, h, False)}
    if c["model_type"] not in ("gptj", "phi", "starcoder2", "gpt2"):
        mods["gate"] = (h, ffn, True)
    targets = p["lora_targets"].replace(" ", ",")
    if not targets.startswith("all"):
        mods = {k: v for k, v in mods.items() if k in targets.split(",")}
    return list(mods.values())


def peft_modules(c, p):
    return len(adapted_linears(c, p)) if p["method"] == "lora" else 0


def peft_adapter_bytes(c, p):
    """Per token over the layers, for a profiled HF Trainer LoRA run: (bytes PEFT's modules save,
    forward chain bytes, backward chain bytes), as LayerActivations counts them (HF Trainer bf16:
    under autocast; amp-bf16 over fp32 weights: the attention and MLP inputs are fp32)."""
    if p["method"] != "lora":
        return 0.0, 0.0, 0.0
    layers = c.get("num_hidden_layers") or c.get("n_layer")
    dropout = float(p["lora_dropout"] or 0) > 0
    amp = p["precision"] == "amp-bf16"
    saved = fwd = bwd = 0.0
    for i, o, normed in adapted_linears(c, p):
        saved += (2 + (1 if dropout else 0)) * i + 2 * int(p["lora_r"])
        f, b = peft_chain(4.0 if amp and normed else 2.0, True, dropout, i, o)
        fwd += f
        bwd += b
    return saved * layers, fwd * layers, bwd * layers


def matching_row(p, measured):
    """The measured-h100-hf.csv row of a profiled case (same run settings)."""
    keys = ("model_hf_id", "method", "precision", "seq_len", "micro_batch", "grad_accum",
            "activation_checkpointing")
    rows = [r for r in measured if all(r[k] == p[k] for k in keys)
            and (p["method"] != "lora" or (r["lora_targets"] == p["lora_targets"]
                                           and r["lora_r"] == p["lora_r"]))
            and ("eager" in r["section"]) == (p["attn"] == "eager")
            and ("optim adamw_torch" in r["section"]) == (p["optim"] == "adamw_torch")]
    if len(rows) > 1:
        rows = [r for r in rows if ("dropout" in r["section"]) ==
                (p["lora_dropout"] not in ("0.0", "n/a"))]
    return rows[0] if len(rows) == 1 else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--advise", default=os.path.join(ROOT, "build", "tools", "fmte-advise"))
    a = ap.parse_args()
    em = load_eval_memory()
    with open(os.path.join(ROOT, "tests/data/time-profiled/profile-h100-hf.csv")) as f:
        prof = list(csv.DictReader(f))
    with open(os.path.join(ROOT, "tests/data/memory-measured/measured-h100-hf.csv")) as f:
        measured = [r for r in csv.DictReader(f) if r["metric"] == "max_memory_allocated"
                    and "expandable" not in r["section"]]

    X, L, y, fam, attn, opt, is_lora, gaps = [], [], [], [], [], [], [], []
    for p in prof:
        c = config(p["model_hf_id"])
        T = int(p["seq_len"]) * int(p["micro_batch"]) * int(p["grad_accum"])
        gc = p["activation_checkpointing"] == "yes"
        heads = c.get("num_attention_heads") or c.get("n_head")
        hidden = c.get("hidden_size") or c.get("n_embd")
        hd = c.get("head_dim") or hidden // heads
        layers = c.get("num_hidden_layers") or c.get("n_layer")
        t_attn = float(p["attention_s"])
        if t_attn > 0 and p["attn"] == "sdpa" and c.get("model_type") not in SLIDING and \
                not c.get("num_experts") and not c.get("n_routed_experts"):
            s = int(p["seq_len"])
            flops = (3 + gc) * 4 * s * s * heads * hd * int(p["micro_batch"]) * \
                int(p["grad_accum"]) * layers / 2
            attn.append((s, hd, flops / t_attn / PEAK))
        if c.get("num_experts") or c.get("n_routed_experts"):
            continue
        r = matching_row(p, measured)
        if r is None:
            sys.exit("no measured row for profiled case %s" % p["case"])
        args, why = em.row_args(r)
        if "--activation-checkpointing" in args:
            i = args.index("--activation-checkpointing")
            del args[i:i + 2]
        out = subprocess.run([a.advise, "estimate", "--json"] + args, capture_output=True,
                             text=True, check=True).stdout
        j = json.loads(out)
        saved, fwd, bwd = peft_adapter_bytes(c, p)
        act = j["memory"]["breakdown"]["activations"] * int(p["grad_accum"]) - saved * T
        X.append([act, act if gc else 0.0, (fwd + bwd + (fwd if gc else 0.0)) * T])
        L.append(T * c["vocab_size"] * 18.0)
        y.append(sum(float(p[k + "_s"]) for k in MEM))
        fam.append(p["model_hf_id"].split("/")[-1].split("-")[0].lower())
        is_lora.append(p["method"] == "lora")
        passes = (4 if gc else 3) * layers
        gaps.append((passes, passes * peft_modules(c, p),
                     float(p["steady_step_s"]) - float(p["busy_s"])))
        if p["method"] == "full":  # the parameters, from the weights' bytes
            params = j["memory"]["breakdown"]["weights"] / (
                2 if p["precision"] == "pure-bf16" else 4)
            opt.append((p["precision"] == "pure-bf16", params, float(p["optimizer_s"])))

    X, L, y = np.array(X) / HBM, np.array(L) / HBM, np.array(y)

    def fit(mask):
        w = 1 / y[mask]
        k, *_ = np.linalg.lstsq(X[mask] * w[:, None], (y[mask] - L[mask]) * w, rcond=None)
        return k

    k = fit(np.ones(len(y), bool))
    pred = X @ k + L
    print("eager traffic: %d runs; k_act %.2f, k_rec %.2f bytes per saved byte; PEFT's chain "
          "%.2f x its bytes" % (len(y), k[0], k[1], k[2]))
    lora = np.array([f for f in is_lora])
    print("  in-sample mean |error| %.1f%% (signed %+.1f%%); LoRA runs %.1f%% (%+.1f%%), the others "
          "%.1f%% (%+.1f%%)" % (
              100 * np.mean(np.abs(pred / y - 1)), 100 * np.mean(pred / y - 1),
              100 * np.mean(np.abs(pred[lora] / y[lora] - 1)), 100 * np.mean(pred[lora] / y[lora] - 1),
              100 * np.mean(np.abs(pred[~lora] / y[~lora] - 1)),
              100 * np.mean(pred[~lora] / y[~lora] - 1)))
    errs = []
    for g in sorted(set(fam)):
        m = np.array([f != g for f in fam])
        kk = fit(m)
        e = (X[~m] @ kk + L[~m]) / y[~m] - 1
        errs += list(np.abs(e))
        print("  family %-12s left out: %s" % (g, " ".join("%+.0f%%" % (100 * x) for x in e)))
    print("  left out one family at a time: mean |error| %.1f%%" % (100 * np.mean(errs)))

    G = np.array([[a, b] for a, b, _ in gaps], float)
    idle = np.array([t for _, _, t in gaps])
    g, *_ = np.linalg.lstsq(G / idle[:, None], np.ones(len(idle)), rcond=None)
    print("idle gaps: %.0f us per layer and pass, %.0f us per PEFT module and pass; in-sample mean "
          "|error| %.0f%%" % (1e6 * g[0], 1e6 * g[1], 100 * np.mean(np.abs(G @ g / idle - 1))))
    errs = []
    for f in sorted(set(fam)):
        m = np.array([x != f for x in fam])
        gg, *_ = np.linalg.lstsq(G[m] / idle[m][:, None], np.ones(m.sum()), rcond=None)
        errs += list(np.abs(G[~m] @ gg / idle[~m] - 1))
    print("  left out one family at a time: mean |error| %.0f%%" % (100 * np.mean(errs)))

    s = np.array([x[0] for x in attn], float)
    d = np.array([x[1] for x in attn], float)
    e = np.array([x[2] for x in attn])
    res = least_squares(lambda q: np.log(1 / (1 + q[0] / s + q[1] / d) / e), [1000, 30],
                        bounds=([0, 0], [1e5, 1e4]))
    fr = 1 / (1 + res.x[0] / s + res.x[1] / d)
    print("flash attention: %d runs; peak fraction 1 / (1 + %.0f / context + %.1f / head_dim), "
          "mean |log error| %.3f" % (len(e), res.x[0], res.x[1], np.mean(np.abs(np.log(fr / e)))))

    ratios = []
    for pure, n, t in opt:
        per = (14 if pure else 28) + 3 * (2 if pure else 4)  # AdamW + clipping, bytes / param
        ratios.append((pure, n * per / HBM / t))
    for pure in (False, True):
        rr = [x for q, x in ratios if q == pure]
        if rr:
            print("optimizer step (%s states): %d runs, achieved fraction of HBM bandwidth "
                  "median %.2f" % ("bf16" if pure else "fp32", len(rr), sorted(rr)[len(rr) // 2]))
    allr = [x for _, x in ratios]
    print("  geometric mean %.2f" % float(np.exp(np.mean(np.log(allr)))))


if __name__ == "__main__":
    main()
