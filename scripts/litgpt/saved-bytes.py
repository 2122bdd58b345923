#!/usr/bin/env python3
"""Count the bytes litgpt's own model saves for backward per transformer layer, on CPU.

usage: scripts/litgpt/saved-bytes.py LITGPT_CHECKOUT MODEL[,MODEL...] [--tokens T] [--dropout P ...]

LITGPT_CHECKOUT is a work tree of Lightning-AI/litgpt at a commit whose package is `lit_gpt`
(2023; e.g. 8641822, the commit of its resource tables). Its model and LoRA code run unchanged with
random bf16 weights, LoRA (r 8, alpha 16) on query and value as its finetune/lora.py sets them.
Two CUDA kernels that have no CPU counterpart in the PyTorch this runs on are replaced by functions
that save what the CUDA kernels save: SDPA's flash kernel (query, key, value, output, fp32
log-sum-exp: aten _scaled_dot_product_flash_attention's derivative) and native_dropout (a bool
mask). Every tensor autograd saves is seen through torch.autograd.graph.saved_tensors_hooks; its
storage is counted once, parameters and buffers not at all. A layer's share is the difference
between the model with 2 layers and with 1 (the first layer saves less: its input, the frozen
embedding's output, needs no gradient). Prints CSV: model, commit, torch, tokens, dropout,
saved bytes per token per hidden unit in one layer, and per token per vocabulary entry outside
the layers. Needs PyTorch (Debian's python3-torch does) and typing_extensions; lightning is
stubbed (only its imports are used by the model code).
"""
import argparse
import math
import subprocess
import sys
import types

import torch


def stub_lightning():
    for name in ["lightning", "lightning.fabric", "lightning.fabric.strategies",
                 "lightning.fabric.utilities", "lightning.fabric.utilities.load",
                 "lightning_utilities", "lightning_utilities.core",
                 "lightning_utilities.core.imports", "torch.utils._device"]:
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["lightning"].Fabric = object
    sys.modules["lightning"].fabric = sys.modules["lightning.fabric"]
    sys.modules["lightning.fabric.strategies"].FSDPStrategy = object
    sys.modules["lightning.fabric.utilities.load"]._lazy_load = None

    class RequirementCache:  # the version checks pass; flash-attn is not installed
        def __init__(self, requirement, *a, **k):
            self.ok = not requirement.startswith("flash-attn")

        def __bool__(self):
            return self.ok

    sys.modules["lightning_utilities.core.imports"].RequirementCache = RequirementCache


class Flash(torch.autograd.Function):
    """Saves what PyTorch's flash attention saves; the values do not matter here."""

    @staticmethod
    def forward(ctx, q, k, v):
        scores = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(q.size(-1))
        out = (torch.softmax(scores, -1) @ v.float()).to(q.dtype)
        lse = torch.empty(q.shape[:-1], dtype=torch.float32)
        ctx.save_for_backward(q, k, v, out, lse)
        return out

    @staticmethod
    def backward(ctx, grad):
        q, k, v, _, _ = ctx.saved_tensors
        return torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)


class NativeDropout(torch.autograd.Function):
    """CUDA's native_dropout: the output and a bool mask, of which backward keeps the mask."""

    @staticmethod
    def forward(ctx, x, p):
        mask = torch.rand(x.shape) >= p
        ctx.save_for_backward(mask)
        ctx.scale = 1.0 / (1.0 - p)
        return x * mask.to(x.dtype) * ctx.scale

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return grad * mask.to(grad.dtype) * ctx.scale, None


def sdpa(q, k, v, attn_mask=None, dropout_p=0.0, scale=None, is_causal=False):
    return Flash.apply(q, k, v)


def dropout(x, p=0.5, training=True, inplace=False):
    return NativeDropout.apply(x, p) if training and p > 0 else x


def saved_bytes(lit, name, layers, tokens, p):
    torch.manual_seed(0)
    cfg = lit.Config.from_name(name, n_layer=layers, r=8, alpha=16, dropout=p, to_query=True,
                               to_value=True)
    torch.set_default_dtype(torch.bfloat16)
    model = lit.GPT(cfg)
    torch.set_default_dtype(torch.float32)
    model.max_seq_length = tokens
    lit.mark_only_lora_as_trainable(model)
    model.train()
    own = {t.storage().data_ptr() for t in list(model.parameters()) + list(model.buffers())}
    seen, keep = {}, []

    def pack(t):
        keep.append(t)  # alive until counted: no address is reused
        st = t.storage()
        if st.data_ptr() not in own:
            seen[st.data_ptr()] = st.size() * t.element_size()
        return t

    idx = torch.randint(0, cfg.vocab_size, (1, tokens))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        logits = model(idx, lm_head_chunk_size=128)
        logits[-1] = logits[-1][..., :-1, :]
        lit.chunked_cross_entropy(logits, idx[..., 1:])
    return cfg, sum(seen.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkout")
    ap.add_argument("models")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--dropout", type=float, nargs="+", default=[0.05, 0.0])
    a = ap.parse_args()
    stub_lightning()
    torch.nn.functional.scaled_dot_product_attention = sdpa
    torch.nn.functional.dropout = dropout
    sys.path.insert(0, a.checkout)
    from lit_gpt.lora import GPT, Config, mark_only_lora_as_trainable
    from lit_gpt.utils import chunked_cross_entropy
    lit = types.SimpleNamespace(GPT=GPT, Config=Config, chunked_cross_entropy=chunked_cross_entropy,
                                mark_only_lora_as_trainable=mark_only_lora_as_trainable)
    commit = subprocess.run(["git", "-C", a.checkout, "rev-parse", "--short=7", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    print("model,litgpt_commit,torch,tokens,lora_dropout,layer_bytes_per_token_h,"
          "outside_bytes_per_token_v")
    for name in a.models.split(","):
        for p in a.dropout:
            cfg, one = saved_bytes(lit, name, 1, a.tokens, p)
            _, two = saved_bytes(lit, name, 2, a.tokens, p)
            layer = two - one
            print(f"{name},{commit},{torch.__version__},{a.tokens},{p},"
                  f"{layer / (a.tokens * cfg.n_embd):.3f},"
                  f"{(one - layer) / (a.tokens * cfg.padded_vocab_size):.3f}")
            sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
