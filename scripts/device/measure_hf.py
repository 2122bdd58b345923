#!/usr/bin/env python3
"""Measure the peak GPU memory and step time of real Hugging Face Trainer runs on one GPU.

Run on a machine with a CUDA GPU, PyTorch, transformers, peft and accelerate (no network needed):

    python3 scripts/device/measure_hf.py OUT_DIR [--only N,M] [--steps 5]

Each case builds a model from a published config.json in etc/models/ with random weights (no
checkpoint download), wraps it in PEFT LoRA where the case says so, and trains it for a few steps
with transformers' own Trainer (AdamW, bf16, optional gradient checkpointing) on random tokens of
full length (labels = inputs, as packed pre-training or SFT data without padding). Measured per
step: torch.cuda.max_memory_allocated / max_memory_reserved (reset before each step) and the step's
wall time between CUDA synchronisations. Step 1 includes AdamW's lazy state allocation; steps 2.. are
the steady state.

Writes OUT_DIR/measured-hf.csv in the columns of tests/data/memory-measured/measured.csv (one row per
case and metric: max_memory_allocated and max_memory_reserved of the whole run, in GiB) and
OUT_DIR/measured-hf.jsonl with every step's numbers and the software versions. A case that runs out
of memory is recorded with measured_value OOM. The first case failing for any other reason stops
the run (an API mismatch would fail them all).
"""
import argparse
import csv
import gc
import json
import os
import statistics
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (model, method, precision, seq_len, micro_batch, gradient checkpointing, lora targets[, extra])
# extra: {"ga": gradient accumulation steps, "r": LoRA rank (alpha = 2 r), "attn": attention
# implementation passed to from_config (default: transformers' own, sdpa), "dropout": LoRA dropout
# (default 0), "optim": the Trainer's optim (default adamw_torch_fused)}
# precision: amp-bf16 = weights and AdamW states in fp32, Trainer bf16=True autocast (the HF
# Trainer default when a model is loaded without a dtype); pure-bf16 = weights loaded in bf16
# (dtype=torch.bfloat16, as TRL/axolotl users do) with bf16=True, so AdamW states are bf16 too.
CASES = [
    ("Qwen/Qwen2.5-0.5B", "full", "amp-bf16", 2048, 4, False, None),
    ("meta-llama/Llama-3.2-1B-Instruct", "full", "amp-bf16", 2048, 4, False, None),
    ("meta-llama/Llama-3.2-1B-Instruct", "full", "pure-bf16", 2048, 4, False, None),
    ("meta-llama/Llama-3.2-1B-Instruct", "full", "amp-bf16", 4096, 4, True, None),
    ("meta-llama/Llama-3.1-8B", "lora", "pure-bf16", 2048, 4, True, "all-linear"),
    ("Qwen/Qwen3-1.7B", "full", "amp-bf16", 2048, 2, False, None),
    ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", "full", "amp-bf16", 2048, 8, True, None),
    ("Qwen/Qwen2.5-3B", "full", "amp-bf16", 2048, 2, True, None),
    ("meta-llama/Llama-3.2-3B-Instruct", "full", "pure-bf16", 4096, 2, True, None),
    ("Qwen/Qwen3-1.7B", "full", "pure-bf16", 8192, 1, True, None),
    ("mistralai/Mistral-7B-Instruct-v0.3", "lora", "pure-bf16", 4096, 2, True, "q,v"),
    ("Qwen/Qwen3-8B", "lora", "pure-bf16", 2048, 2, False, "all-linear"),
    ("meta-llama/Llama-3.2-3B-Instruct", "lora", "pure-bf16", 2048, 8, False, "all-linear"),
    ("Qwen/Qwen2.5-7B-Instruct", "lora", "pure-bf16", 8192, 1, True, "all-linear"),
    ("google/gemma-2-9b", "lora", "pure-bf16", 2048, 2, True, "all-linear"),
    ("microsoft/phi-2", "full", "amp-bf16", 2048, 4, True, None),
    ("meta-llama/Llama-3.1-8B", "lora", "amp-bf16", 2048, 2, True, "all-linear"),
    ("Qwen/Qwen2.5-0.5B", "full", "amp-bf16", 4096, 8, False, None),
    ("Qwen/Qwen2.5-3B", "full", "amp-bf16", 2048, 4, False, None),
    # second batch (19..): the mechanisms the first batch left open
    ("Qwen/Qwen3-8B", "lora", "pure-bf16", 2048, 1, False, "all-linear"),
    ("meta-llama/Llama-3.1-8B", "lora", "pure-bf16", 2048, 2, False, "all-linear"),
    ("meta-llama/Llama-3.1-8B", "lora", "pure-bf16", 2048, 2, False, "q,v"),
    ("Qwen/Qwen3-8B", "lora", "pure-bf16", 4096, 2, True, "all-linear"),
    ("Qwen/Qwen2.5-3B", "full", "amp-bf16", 2048, 8, True, None),
    ("Qwen/Qwen2.5-3B", "full", "pure-bf16", 2048, 2, True, None),
    ("meta-llama/Llama-3.2-3B-Instruct", "full", "amp-bf16", 2048, 2, True, None),
    ("microsoft/phi-2", "full", "amp-bf16", 2048, 8, True, None),
    ("microsoft/phi-2", "full", "pure-bf16", 2048, 2, False, None),
    ("meta-llama/Llama-3.2-1B-Instruct", "full", "amp-bf16", 2048, 2, False, None, {"ga": 4}),
    ("meta-llama/Llama-3.2-1B-Instruct", "full", "pure-bf16", 1024, 1, False, None),
    ("meta-llama/Llama-3.2-1B-Instruct", "full", "pure-bf16", 8192, 1, False, None),
    ("meta-llama/Llama-3.2-1B-Instruct", "full", "pure-bf16", 2048, 2, False, None,
     {"attn": "eager"}),
    ("meta-llama/Llama-3.1-8B", "lora", "pure-bf16", 2048, 4, True, "all-linear", {"r": 64}),
    ("meta-llama/Llama-3.1-8B", "lora", "pure-bf16", 2048, 4, True, "all-linear", {"r": 256}),
    ("meta-llama/Llama-3.1-8B", "lora", "pure-bf16", 4096, 4, True, "all-linear", {"ga": 4}),
    ("openai-community/gpt2-large", "full", "amp-bf16", 1024, 8, False, None),
    ("microsoft/Phi-3-mini-4k-instruct", "full", "pure-bf16", 4096, 2, True, None),
    ("stabilityai/stablelm-base-alpha-3b", "full", "pure-bf16", 2048, 4, True, None),
    ("tiiuae/falcon-7b", "lora", "pure-bf16", 2048, 4, True, "all-linear"),
    ("EleutherAI/gpt-j-6b", "lora", "pure-bf16", 2048, 2, True, "all-linear"),
    ("bigcode/starcoder2-7b", "lora", "pure-bf16", 4096, 2, True, "all-linear"),
    ("google/gemma-2b", "full", "amp-bf16", 2048, 4, True, None),
    ("deepseek-ai/DeepSeek-V2-Lite", "lora", "pure-bf16", 2048, 2, True, "all-linear"),
    ("google/gemma-2-27b", "lora", "pure-bf16", 2048, 1, True, "all-linear"),
    ("Qwen/Qwen2.5-Coder-32B-Instruct", "lora", "pure-bf16", 2048, 1, True, "all-linear"),
    ("Qwen/Qwen3-30B-A3B", "lora", "pure-bf16", 1024, 1, True, "all-linear"),
    ("meta-llama/Llama-3.2-1B-Instruct", "full", "amp-bf16", 8192, 4, True, None),
    # third batch (47..): held out. Run after commit cdc0486 changed the estimator from batches
    # 1-2; fmte's predictions for these were fixed before they ran.
    ("Qwen/Qwen2.5-7B-Instruct", "lora", "pure-bf16", 2048, 2, False, "all-linear",
     {"dropout": 0.05}),
    ("mistralai/Mistral-7B-Instruct-v0.3", "lora", "pure-bf16", 1024, 4, False, "all-linear",
     {"dropout": 0.1}),
    ("meta-llama/Llama-3.1-8B", "lora", "pure-bf16", 4096, 2, True, "all-linear",
     {"dropout": 0.05}),
    ("Qwen/Qwen2.5-3B", "full", "amp-bf16", 2048, 2, True, None, {"optim": "adamw_torch"}),
    ("meta-llama/Llama-3.2-1B-Instruct", "full", "amp-bf16", 2048, 2, False, None,
     {"optim": "adamw_torch"}),
    ("openai-community/gpt2-medium", "full", "amp-bf16", 1024, 16, False, None),
    ("microsoft/phi-1_5", "full", "pure-bf16", 2048, 4, False, None),
    ("EleutherAI/gpt-j-6b", "lora", "pure-bf16", 1024, 2, False, "all-linear", {"attn": "eager"}),
    ("meta-llama/Llama-2-7b-hf", "lora", "pure-bf16", 4096, 1, False, "q,v", {"dropout": 0.05}),
    ("codellama/CodeLlama-7b-hf", "lora", "pure-bf16", 4096, 4, True, "all-linear"),
    ("Qwen/Qwen3-0.6B", "full", "amp-bf16", 4096, 4, False, None),
    ("Qwen/Qwen3-1.7B", "full", "amp-bf16", 4096, 1, False, None, {"ga": 8}),
    ("google/gemma-2-9b", "lora", "pure-bf16", 1024, 2, False, "all-linear"),
    ("microsoft/Phi-3-mini-4k-instruct", "lora", "pure-bf16", 2048, 2, False, "all-linear",
     {"dropout": 0.05}),
    ("Qwen/Qwen2.5-0.5B", "full", "pure-bf16", 2048, 2, False, None, {"attn": "eager"}),
    ("meta-llama/Llama-2-13b-hf", "lora", "pure-bf16", 2048, 2, True, "all-linear",
     {"dropout": 0.05}),
    ("Qwen/Qwen3-32B", "lora", "pure-bf16", 1024, 1, True, "all-linear"),
    ("microsoft/phi-2", "lora", "pure-bf16", 2048, 4, False, "all-linear", {"dropout": 0.05}),
    # fourth batch (65..): long sequences, held out like the third (run after commit 121844a)
    ("meta-llama/Llama-3.1-8B", "lora", "pure-bf16", 16384, 1, True, "all-linear"),
    ("Qwen/Qwen2.5-7B-Instruct", "lora", "pure-bf16", 32768, 1, True, "all-linear"),
    ("meta-llama/Llama-3.2-1B-Instruct", "full", "pure-bf16", 32768, 1, True, None),
    ("Qwen/Qwen3-1.7B", "full", "amp-bf16", 16384, 1, True, None),
    ("mistralai/Mistral-7B-Instruct-v0.3", "lora", "pure-bf16", 16384, 1, True, "q,v",
     {"dropout": 0.05}),
    ("google/gemma-2-9b", "lora", "pure-bf16", 8192, 1, True, "all-linear"),
    ("microsoft/Phi-3-mini-4k-instruct", "full", "pure-bf16", 4096, 4, True, None),
    ("Qwen/Qwen3-8B", "lora", "pure-bf16", 32768, 1, True, "all-linear"),
    # fifth batch (73..): held out for the time model of commit 9488929 (kernel profiles), its
    # predictions committed before the run (tests/data/time-profiled/predictions-batch5.csv)
    ("meta-llama/Llama-3.2-3B-Instruct", "lora", "pure-bf16", 4096, 2, False, "q,v"),
    ("mistralai/Mistral-7B-Instruct-v0.3", "lora", "pure-bf16", 2048, 4, True, "all-linear",
     {"r": 32}),
    ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", "full", "pure-bf16", 4096, 4, True, None),
    ("Qwen/Qwen2.5-0.5B", "full", "amp-bf16", 8192, 2, True, None),
    ("google/gemma-2b", "lora", "pure-bf16", 2048, 4, False, "all-linear"),
    ("meta-llama/Llama-2-13b-hf", "lora", "pure-bf16", 4096, 1, True, "q,v"),
    ("codellama/CodeLlama-13b-hf", "lora", "pure-bf16", 2048, 2, True, "all-linear",
     {"dropout": 0.05}),
    ("Qwen/Qwen3-1.7B", "lora", "pure-bf16", 4096, 1, False, "all-linear"),
    ("Qwen/Qwen2.5-3B", "lora", "pure-bf16", 8192, 1, True, "all-linear", {"r": 64}),
    ("microsoft/phi-2", "full", "pure-bf16", 4096, 2, True, None),
    ("meta-llama/Llama-3.2-1B-Instruct", "full", "amp-bf16", 1024, 8, False, None),
    ("Qwen/Qwen3-8B", "lora", "pure-bf16", 8192, 1, True, "q,v"),
    ("Qwen/Qwen2.5-7B-Instruct", "lora", "amp-bf16", 4096, 1, True, "all-linear"),
    # sixth batch (86..): sliding-window models past their window, held out for the masked-SDPA
    # rate of commit a22522e (tests/data/time-profiled/predictions-batch6.csv committed first)
    ("microsoft/Phi-3-mini-4k-instruct", "full", "pure-bf16", 8192, 1, True, None),
    ("microsoft/Phi-3-mini-4k-instruct", "lora", "pure-bf16", 4096, 2, False, "all-linear"),
    ("bigcode/starcoder2-7b", "lora", "pure-bf16", 8192, 1, True, "all-linear"),
    ("google/gemma-2-9b", "lora", "pure-bf16", 4096, 1, True, "all-linear"),
    ("google/gemma-2-27b", "lora", "pure-bf16", 4096, 1, True, "all-linear"),
    # seventh batch (91..): held out for the memory mechanisms that scripts/device/peak_snapshot.py
    # showed on cases 87 and 70 (commit of tests/data/memory-measured/predictions-batch7.csv, whose
    # predictions were committed first): transformers' fused-qkv rotary models keep the whole qkv
    # output (GPT-NeoX, Phi-3), SDPA's converted mask per windowed layer (Phi-3, StarCoder2,
    # Gemma-2), Gemma-2's final logit softcapping
    ("EleutherAI/pythia-160m", "full", "amp-bf16", 2048, 8, False, None),
    ("stabilityai/stablelm-base-alpha-3b", "full", "pure-bf16", 2048, 2, False, None),
    ("stabilityai/stablelm-base-alpha-3b", "lora", "pure-bf16", 4096, 1, False, "all-linear"),
    ("microsoft/Phi-3-mini-4k-instruct", "full", "pure-bf16", 4096, 1, False, None),
    ("microsoft/Phi-3-mini-4k-instruct", "lora", "pure-bf16", 8192, 1, False, "all-linear"),
    ("bigcode/starcoder2-7b", "lora", "pure-bf16", 4096, 1, False, "all-linear"),
    ("google/gemma-2-9b", "lora", "pure-bf16", 2048, 2, True, "all-linear"),
    ("google/gemma-2-9b", "lora", "pure-bf16", 4096, 1, False, "all-linear"),
]

SHORT_TARGETS = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj",
                 "gate": "gate_proj", "up": "up_proj", "down": "down_proj"}

FIELDS = ("source_repo,source_path,source_commit,section,model_hf_id,method,gpus,gpus_per_node,"
          "gpu_type,micro_batch,grad_accum,seq_len,packing,precision,framework,optimizer,sharding,"
          "tp,pp,vpp,cp,ep,etp,fp8,lora_r,lora_alpha,lora_targets,quant,activation_checkpointing,"
          "compile,chunked_loss,activation_offload,liger,metric,measured_value,unit,step_time_s,"
          "tokens_per_s,runtime_total_s,notes,collected_in").split(",")

GIB = 2**30


def unpack(case):
    """A case's seven fields and its extras with their defaults filled in."""
    extra = {"ga": 1, "r": 16, "dropout": 0.0, "optim": "adamw_torch_fused"}
    extra.update(case[7] if len(case) > 7 else {})
    return (*case[:7], extra)


def versions():
    import accelerate
    import peft
    import torch
    import transformers
    p = torch.cuda.get_device_properties(0)
    return {"torch": torch.__version__, "cuda": torch.version.cuda,
            "transformers": transformers.__version__, "peft": peft.__version__,
            "accelerate": accelerate.__version__, "gpu": torch.cuda.get_device_name(0),
            "gpu_total_bytes": p.total_memory, "sm_count": p.multi_processor_count,
            "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")}


def build_model(case):
    """The case's model from its config.json in etc/models, random weights on the GPU in the
    dtype of its precision, and the config."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    model_id, _, precision, _, _, _, _, extra = unpack(case)
    cfg = AutoConfig.from_pretrained(os.path.join(ROOT, "etc", "models", model_id))
    cfg.use_cache = False
    dtype = torch.bfloat16 if precision == "pure-bf16" else torch.float32
    attn = {"attn_implementation": extra["attn"]} if "attn" in extra else {}
    with torch.device("cuda"):
        try:  # transformers 5 names it dtype; 4.x torch_dtype (config.json's own is ignored)
            model = AutoModelForCausalLM.from_config(cfg, dtype=dtype, **attn)
        except TypeError:
            model = AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype, **attn)
    if next(model.parameters()).dtype != dtype:
        model = model.to(dtype)
    return model, cfg


def add_lora(model, case):
    """The model wrapped in PEFT LoRA as the case says (r, alpha 2r, its dropout and targets)."""
    from peft import LoraConfig, get_peft_model

    _, _, _, _, _, _, targets, extra = unpack(case)
    rank = extra["r"]
    tm = "all-linear" if targets == "all-linear" else [SHORT_TARGETS[t] for t in
                                                      targets.split(",")]
    return get_peft_model(model, LoraConfig(r=rank, lora_alpha=2 * rank,
                                            lora_dropout=extra["dropout"], target_modules=tm,
                                            task_type="CAUSAL_LM"))


def token_dataset(case, vocab, steps):
    """Random tokens of full length, labels = inputs, enough for `steps` optimizer steps."""
    import torch
    from torch.utils.data import Dataset

    _, _, _, seq, mb, _, _, extra = unpack(case)

    class Tokens(Dataset):
        def __len__(self):
            return mb * extra["ga"] * (steps + 1)

        def __getitem__(self, i):
            g = torch.Generator().manual_seed(i)
            ids = torch.randint(0, vocab, (seq,), generator=g)
            return {"input_ids": ids, "labels": ids.clone()}

    return Tokens()


def training_args(case, steps, output_dir):
    """The Trainer's arguments of a case: AdamW (its optim), bf16 autocast, constant LR, optional
    non-reentrant gradient checkpointing, no saving or logging."""
    from transformers import TrainingArguments

    _, _, _, _, mb, gc_on, _, extra = unpack(case)
    return TrainingArguments(
        output_dir=output_dir, max_steps=steps, per_device_train_batch_size=mb,
        gradient_accumulation_steps=extra["ga"], learning_rate=1e-5, lr_scheduler_type="constant",
        bf16=True, optim=extra["optim"], gradient_checkpointing=gc_on,
        gradient_checkpointing_kwargs={"use_reentrant": False} if gc_on else None,
        save_strategy="no", logging_steps=1000, report_to="none", disable_tqdm=True,
        dataloader_num_workers=0, remove_unused_columns=False, seed=0)


def train(model, cfg, case, steps, probe, output_dir):
    """Trains `model` for `steps` steps of the case with the Trainer callback `probe`; the first
    line of the out-of-memory message when it runs out of memory, else None."""
    import torch
    from transformers import Trainer

    trainer = Trainer(model=model, args=training_args(case, steps, output_dir),
                      train_dataset=token_dataset(case, cfg.vocab_size, steps),
                      callbacks=[probe])
    try:
        trainer.train()
    except torch.cuda.OutOfMemoryError as e:
        return str(e).splitlines()[0][:600]
    return None


def run_case(case, steps):
    import torch
    from transformers import TrainerCallback

    method = case[1]
    torch.cuda.reset_peak_memory_stats()
    model, cfg = build_model(case)
    torch.cuda.synchronize()
    n_params = sum(p.numel() for p in model.parameters())
    load = {"allocated": torch.cuda.memory_allocated(),
            "peak": torch.cuda.max_memory_allocated()}
    if method == "lora":
        model = add_lora(model, case)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)

    step_log = []

    class Probe(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            self.t0 = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            torch.cuda.synchronize()
            step_log.append({"step": state.global_step,
                             "time_s": time.perf_counter() - self.t0,
                             "max_allocated": torch.cuda.max_memory_allocated(),
                             "max_reserved": torch.cuda.max_memory_reserved(),
                             "allocated_after": torch.cuda.memory_allocated()})

    t0 = time.perf_counter()
    oom = train(model, cfg, case, steps, Probe(), "/tmp/fmte-measure-hf")
    total = time.perf_counter() - t0
    attn = getattr(getattr(model, "config", cfg), "_attn_implementation", None)
    info = {"params": n_params, "trainable": trainable, "load": load, "steps": step_log,
            "run_s": total, "oom": oom, "attn_implementation": attn,
            "lora_dtype": None}
    if method == "lora":
        for n, p in model.named_parameters():
            if p.requires_grad:
                info["lora_dtype"] = str(p.dtype)
                break
    del model
    return info


def cleanup():
    import torch
    gc.collect()
    torch.cuda.empty_cache()
    try:
        from accelerate.state import AcceleratorState, PartialState
        AcceleratorState._reset_state(True)
        PartialState._reset_state()
    except Exception:
        pass
    gc.collect()
    torch.cuda.empty_cache()
    return torch.cuda.memory_allocated()


def rows_for(case, info, vers, commit):
    model_id, method, precision, seq, mb, gc_on, targets, extra = unpack(case)
    ga, rank, dropout, optim = extra["ga"], extra["r"], extra["dropout"], extra["optim"]
    steady = [s for s in info["steps"] if s["step"] >= 2]
    timed = [s["time_s"] for s in info["steps"] if s["step"] >= 3] or [s["time_s"] for s in steady]
    step_time = statistics.median(timed) if timed else None
    section = "H100 HF Trainer: %s %s %s seq %d mb %d%s%s%s%s%s%s" % (
        model_id, method, precision, seq, mb, " ga %d" % ga if ga > 1 else "",
        " r %d %s" % (rank, targets) if method == "lora" else "",
        " dropout %g" % dropout if dropout else "", " grad-ckpt" if gc_on else "",
        " attention " + extra["attn"] if "attn" in extra else "",
        " optim " + optim if optim != "adamw_torch_fused" else "")
    opt = ("AdamW (adamw_torch_fused, states in the trainable parameters' dtype)"
           if optim == "adamw_torch_fused" else
           "AdamW (%s: foreach step, states in the trainable parameters' dtype)" % optim)
    notes = ("Measured by this project on one %s, %s. Random weights from etc/models/%s/config.json "
             "(AutoModelForCausalLM.from_config on the GPU, dtype %s), random tokens of full length, "
             "labels = inputs; transformers Trainer, bf16=True, %d steps, per-step peaks reset at "
             "on_step_begin; value = max over all steps (step 1 includes AdamW's lazy state "
             "allocation); step_time_s = median of steps 3..; %d parameters, %d trainable; "
             "attention %s%s. Versions: torch %s (CUDA %s), transformers %s, peft %s, accelerate "
             "%s; PYTORCH_CUDA_ALLOC_CONF='%s'.") % (
        vers["gpu"], "gradient checkpointing on (use_reentrant False)" if gc_on else
        "no gradient checkpointing", model_id,
        "bfloat16" if precision == "pure-bf16" else "float32", len(info["steps"]),
        info["params"], info["trainable"], info["attn_implementation"],
        ("; LoRA r %d alpha %d dropout %g, adapter dtype %s" % (
            rank, 2 * rank, dropout, info["lora_dtype"]))
        if method == "lora" else "", vers["torch"], vers["cuda"], vers["transformers"],
        vers["peft"], vers["accelerate"], vers["alloc_conf"])
    out = []
    for metric, key in (("max_memory_allocated", "max_allocated"),
                        ("max_memory_reserved", "max_reserved")):
        if info["oom"]:
            value = "OOM"
        else:
            value = "%.3f" % (max(s[key] for s in info["steps"]) / GIB)
        row = dict.fromkeys(FIELDS, "1")
        row.update({
            "source_repo": "fmte (this project)", "source_path": "scripts/device/measure_hf.py",
            "source_commit": commit, "section": section, "model_hf_id": model_id,
            "method": method, "gpus": "1", "gpus_per_node": "1",
            "gpu_type": vers["gpu"], "micro_batch": str(mb), "grad_accum": str(ga),
            "seq_len": str(seq), "packing": "yes (random tokens, every sequence full length)",
            "precision": precision, "framework": "hf", "optimizer": opt, "sharding": "none",
            "fp8": "none", "lora_r": str(rank) if method == "lora" else "n/a",
            "lora_alpha": str(2 * rank) if method == "lora" else "n/a",
            "lora_targets": targets if method == "lora" else "n/a", "quant": "none",
            "activation_checkpointing": "yes" if gc_on else "no", "compile": "no",
            "chunked_loss": "no", "activation_offload": "no", "liger": "no",
            "metric": metric, "measured_value": value, "unit": "GiB",
            "step_time_s": "%.4f" % step_time if step_time and not info["oom"] else "",
            "tokens_per_s": "%.0f" % (mb * ga * seq / step_time) if step_time and not info["oom"]
            else "",
            "runtime_total_s": "", "notes": notes + (" OOM: " + info["oom"] if info["oom"] else ""),
            "collected_in": "device"})
        out.append(row)
    return out


def case_arguments(steps):
    """The arguments every device script takes: OUT_DIR, --only N,M (case indices), --steps."""
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default="")
    ap.add_argument("--steps", type=int, default=steps)
    return ap


def start(a):
    """Makes OUT_DIR, prints the software versions; (versions, the case indices to run)."""
    os.makedirs(a.out, exist_ok=True)
    vers = versions()
    print(json.dumps(vers), flush=True)
    return vers, [int(x) for x in a.only.split(",") if x] or range(len(CASES))


def main():
    ap = case_arguments(steps=5)
    ap.add_argument("--tag", default="", help="suffix of the output files' names")
    a = ap.parse_args()
    vers, picks = start(a)
    commit = os.environ.get("FMTE_COMMIT", "unknown")
    with open(os.path.join(a.out, "measured-hf%s.csv" % a.tag), "w", newline="") as fcsv, \
            open(os.path.join(a.out, "measured-hf%s.jsonl" % a.tag), "w") as fj:
        w = csv.DictWriter(fcsv, fieldnames=FIELDS)
        w.writeheader()
        for n, i in enumerate(picks):
            case = CASES[i]
            t0 = time.perf_counter()
            try:
                info = run_case(case, a.steps)
            except Exception:
                traceback.print_exc()
                fj.write(json.dumps({"case": case, "error": traceback.format_exc()}) + "\n")
                fj.flush()
                cleanup()
                if n == 0:
                    sys.exit(1)
                continue
            left = cleanup()
            info["left_allocated_after_cleanup"] = left
            fj.write(json.dumps({"case": case, "versions": vers, **info}) + "\n")
            fj.flush()
            for row in rows_for(case, info, vers, commit):
                w.writerow(row)
            fcsv.flush()
            peak = max((s["max_allocated"] for s in info["steps"]), default=0) / GIB
            st = [round(s["time_s"], 3) for s in info["steps"]]
            print("case %2d %-36s %-4s %-9s seq %5d mb %d gc %d: %s peak %.2f GiB steps %s "
                  "(%.0f s, left %d B)" % (i, case[0], case[1], case[2], case[3], case[4],
                                          case[5], "OOM" if info["oom"] else "ok", peak, st,
                                          time.perf_counter() - t0, left), flush=True)


if __name__ == "__main__":
    main()
