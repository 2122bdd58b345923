#!/usr/bin/env python3
"""Count the bytes litgpt's own model saves for backward per transformer layer, on CPU.

usage: scripts/litgpt/saved-bytes.py LITGPT_CHECKOUT MODEL[,MODEL...] [--tokens T] [--dropout P ...]
                                     [--targets q,k,v,o,mlp,head] [--quantized] [--header]

LITGPT_CHECKOUT is a work tree of Lightning-AI/litgpt: a commit whose package is `lit_gpt` (2023;
e.g. 8641822, the commit of its resource tables) or `litgpt` (2024-; e.g. 00af8b0, the last change
of config_hub/finetune/README.md's table). Its model and LoRA code run unchanged with random bf16
weights, LoRA r 8, alpha 16 on the modules --targets names (default query and value, as lit_gpt's
finetune/lora.py sets them; the config hub's YAMLs set all of them, head included).
Two CUDA kernels that have no CPU counterpart in the PyTorch this runs on are replaced by functions
that save what the CUDA kernels save: SDPA's flash kernel (query, key, value, output, fp32
log-sum-exp: aten _scaled_dot_product_flash_attention's derivative) and native_dropout (a bool
mask); torch.mean over a dimension keeps only the input's shape, as in PyTorch 2 (1.13 keeps the
input); with --quantized every linear keeps its input as bitsandbytes' MatMul4Bit does. Every tensor autograd saves is seen through torch.autograd.graph.saved_tensors_hooks; its
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


class Stub(types.ModuleType):
    """A module whose every attribute is a placeholder class: only imported, never used here."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {})


def stub_imports():
    """Lightning, packaging and the like: the model code only imports them."""
    for name in ["lightning", "lightning.fabric", "lightning.fabric.strategies",
                 "lightning.fabric.utilities", "lightning.fabric.utilities.load",
                 "lightning.fabric.loggers", "lightning.pytorch", "lightning.pytorch.loggers",
                 "lightning.pytorch.cli", "lightning_utilities", "lightning_utilities.core",
                 "lightning_utilities.core.imports", "packaging", "torch.utils._device"]:
        sys.modules.setdefault(name, Stub(name))

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


class MeanDim(torch.autograd.Function):
    """torch.mean over dimensions as PyTorch 2 differentiates it (derivatives.yaml mean.dim:
    mean_backward(grad, self.sym_sizes(), ...)): only the input's shape is kept. PyTorch 1.13,
    which Debian ships, keeps the input itself, which a litgpt RMSNorm's x * x is."""

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        ctx.shape, ctx.dim, ctx.keepdim = x.shape, dim, keepdim
        return MEAN(x, dim=dim, keepdim=keepdim)

    @staticmethod
    def backward(ctx, grad):
        g = grad if ctx.keepdim else grad.unsqueeze(ctx.dim)
        n = 1
        for d in ([ctx.dim] if isinstance(ctx.dim, int) else ctx.dim):
            n *= ctx.shape[d]
        return g.expand(ctx.shape) / n, None, None


MEAN = torch.mean


def mean(x, dim=None, keepdim=False, **kw):
    if dim is None or kw or not x.requires_grad:
        return MEAN(x, **kw) if dim is None else MEAN(x, dim=dim, keepdim=keepdim, **kw)
    return MeanDim.apply(x, dim, keepdim)


def sdpa(q, k, v, attn_mask=None, dropout_p=0.0, scale=None, is_causal=False):
    return Flash.apply(q, k, v)


def dropout(x, p=0.5, training=True, inplace=False):
    return NativeDropout.apply(x, p) if training and p > 0 else x


class MatMul4Bit(torch.autograd.Function):
    """bitsandbytes' MatMul4Bit (0.41-0.44, autograd/_functions.py): the frozen 4-bit weight's
    product, which keeps its input A for backward whenever A needs a gradient (ctx.tensors =
    (A, B)). Kept here with save_for_backward so that the hook sees it."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x)
        return torch.nn.functional.linear(x, weight, bias)

    @staticmethod
    def backward(ctx, grad):
        return torch.zeros_like(ctx.saved_tensors[0]), None, None


def quantize(model):
    """Every nn.Linear as Fabric's BitsandbytesPrecision makes it (bnb Linear4bit)."""
    for mod in model.modules():
        if type(mod) is torch.nn.Linear:
            mod.forward = (lambda m: lambda x: MatMul4Bit.apply(x, m.weight, m.bias))(mod)


def lora_config(lit, name, layers, p, targets):
    if lit.package == "lit_gpt":  # 2023: r/alpha/dropout/to_* fields
        assert targets == "q,v", "lit_gpt's resource tables train LoRA on query and value"
        return lit.Config.from_name(name, n_layer=layers, r=8, alpha=16, dropout=p,
                                    to_query=True, to_value=True)
    parts = set(targets.split(","))
    return lit.Config.from_name(
        name, n_layer=layers, lora_r=8, lora_alpha=16, lora_dropout=p,
        lora_query="q" in parts, lora_key="k" in parts, lora_value="v" in parts,
        lora_projection="o" in parts, lora_mlp="mlp" in parts, lora_head="head" in parts)


def saved_bytes(lit, name, layers, tokens, p, targets, quantized):
    torch.manual_seed(0)
    cfg = lora_config(lit, name, layers, p, targets)
    torch.set_default_dtype(torch.bfloat16)
    model = lit.GPT(cfg)
    torch.set_default_dtype(torch.float32)
    model.max_seq_length = tokens
    lit.mark_only_lora_as_trainable(model)
    if quantized:
        quantize(model)
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


def load(checkout):
    """lit_gpt (2023) or litgpt (2024-): the package's LoRA model and chunked loss."""
    sys.path.insert(0, checkout)
    import importlib
    import os
    package = "lit_gpt" if os.path.isdir(os.path.join(checkout, "lit_gpt")) else "litgpt"
    if package == "litgpt":  # skip litgpt/__init__.py, which imports the whole API
        stub = types.ModuleType("litgpt")
        stub.__path__ = [os.path.join(checkout, "litgpt")]
        sys.modules["litgpt"] = stub
    lora = importlib.import_module(package + ".lora")
    utils = importlib.import_module(package + ".utils")
    return types.SimpleNamespace(package=package, GPT=lora.GPT, Config=lora.Config,
                                 chunked_cross_entropy=utils.chunked_cross_entropy,
                                 mark_only_lora_as_trainable=lora.mark_only_lora_as_trainable)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkout")
    ap.add_argument("models")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--dropout", type=float, nargs="+", default=[0.05, 0.0])
    ap.add_argument("--targets", default="q,v",
                    help="q,v or any of q,k,v,o,mlp,head (litgpt's lora_query ... lora_head)")
    ap.add_argument("--quantized", action="store_true",
                    help="every linear as bitsandbytes' 4-bit one (quantize: bnb.nf4)")
    ap.add_argument("--header", action="store_true")
    a = ap.parse_args()
    stub_imports()
    torch.nn.functional.scaled_dot_product_attention = sdpa
    torch.nn.functional.dropout = dropout
    torch.mean = mean
    lit = load(a.checkout)
    commit = subprocess.run(["git", "-C", a.checkout, "rev-parse", "--short=7", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    if a.header:
        print("model,litgpt_commit,torch,tokens,lora_dropout,layer_bytes_per_token_h,"
              "outside_bytes_per_token_v,lora_targets,quantized")
    for name in a.models.split(","):
        for p in a.dropout:
            cfg, one = saved_bytes(lit, name, 1, a.tokens, p, a.targets, a.quantized)
            _, two = saved_bytes(lit, name, 2, a.tokens, p, a.targets, a.quantized)
            layer = two - one
            print(f"{name},{commit},{torch.__version__},{a.tokens},{p},"
                  f"{layer / (a.tokens * cfg.n_embd):.3f},"
                  f"{(one - layer) / (a.tokens * cfg.padded_vocab_size):.3f},"
                  f"{a.targets.replace(',', ' ')},{'nf4' if a.quantized else 'no'}")
            sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
