#!/usr/bin/env python3
"""Sums the blocks alive at each case's steady-step peak (peak_snapshot.py's jsonl) by what holds
them, as bytes, one CSV row per case:

    python3 scripts/device/peak_summary.py peak-snapshot.jsonl > peak-snapshot-h100-hf.csv

weights: allocated while the model was built (parameters, buffers, LoRA adapters);
optimizer: allocated by torch.optim in an earlier step (AdamW's states);
logits: blocks of this step the size of the logits (tokens x vocabulary x 2 or 4 bytes): the
  loss's log_softmax output, the fp32 gradients the autograd engine allocates beside it, a final
  logit softcapping's tanh output;
activations: the rest allocated in this step's forward (the layers, embeddings, norms, masks),
  alive at the peak;
other: what is left (earlier steps' leftovers, autograd blocks of other sizes).
The measured step is the last one (steady state); peak_bytes is the replayed allocated peak and
torch_max_allocated what torch.cuda.max_memory_allocated said for that step.
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_hf  # noqa: E402


def vocab_size(model_id):
    path = os.path.join(measure_hf.ROOT, "etc", "models", model_id, "config.json")
    with open(path) as f:
        return json.load(f)["vocab_size"]


def summarise(rec):
    s = rec["steps"][-1]
    model, _, _, seq, mb, _, _, _ = measure_hf.unpack(rec["case"])
    logit_sizes = {seq * mb * vocab_size(model) * n for n in (2, 4)}
    parts = dict.fromkeys(("weights", "optimizer", "logits", "activations", "other"), 0)
    for g in s["groups"]:
        if g["age"] == "this step" and g["count"] <= 2 and \
                {sz for sz, _ in g["sizes"]} <= logit_sizes:
            parts["logits"] += g["bytes"]
        elif g["age"] == "model":
            parts["weights"] += g["bytes"]
        elif g["phase"] == "optimizer" and g["age"] == "earlier step":
            parts["optimizer"] += g["bytes"]
        elif g["phase"] == "forward" and g["age"] == "this step":
            parts["activations"] += g["bytes"]
        else:
            parts["other"] += g["bytes"]
    parts["other"] += s["replayed_peak"] - sum(parts.values())  # groups past the listed top
    return s, parts


def main():
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["case", "model", "method", "precision", "seq_len", "micro_batch", "grad_ckpt",
                "lora_targets", "peak_bytes", "torch_max_allocated", "peak_at", "weights",
                "optimizer", "logits", "activations", "other"])
    for line in open(sys.argv[1]):
        rec = json.loads(line)
        if "steps" not in rec:
            continue
        model, method, precision, seq, mb, gc_on, targets, _ = measure_hf.unpack(rec["case"])
        s, p = summarise(rec)
        w.writerow([rec["case_index"], model, method, precision, seq, mb, int(gc_on),
                    targets or "", s["replayed_peak"], s["torch_max_allocated"], s["peak_at"],
                    p["weights"], p["optimizer"], p["logits"], p["activations"], p["other"]])


if __name__ == "__main__":
    main()
