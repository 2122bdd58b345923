#!/usr/bin/env python3
"""Where the time of a real Hugging Face Trainer step goes on one GPU: every GPU kernel of one step.

Run on a machine with a CUDA GPU, PyTorch, transformers, peft and accelerate (no network needed):

    python3 scripts/device/profile_hf.py OUT_DIR [--only N,M] [--steps 5] [--profile-step 3]

Each case is a case of scripts/device/measure_hf.py (same index, same model built from etc/models
with random weights, same Trainer arguments). The case trains for --steps steps; steps other than
--profile-step are timed as measure_hf.py times them (wall time between CUDA synchronisations, no
profiler), and --profile-step runs under torch.profiler (CPU + CUDA activities, record_shapes) so
that every kernel, memcpy and memset of that step is written with its start, duration and the aten
operator that launched it with that operator's input shapes (a matrix product's FLOPs follow from
them). Kernel durations are the GPU's own timestamps, unaffected by the profiler's CPU overhead; the
profiled step's wall time is not (the profiler slows the CPU side), so use the unprofiled steps for
wall time and the profile for how the GPU's busy time divides.

Writes OUT_DIR/profile-hf.jsonl: one line per case with the versions, the unprofiled steps, and the
profiled step's events as rows [name index, category, start us (from the step's first event),
duration us, launching operator, its input dims] with the kernel names in a table beside them.
"""
import json
import os
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_hf  # noqa: E402  (CASES, the model, data and Trainer of a case, cleanup)


def run_case(case, steps, profile_step):
    import torch
    from transformers import TrainerCallback

    model, cfg = measure_hf.build_model(case)
    if case[1] == "lora":
        model = measure_hf.add_lora(model, case)

    step_log = []
    trace = {}

    class Probe(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            torch.cuda.synchronize()
            self.prof = None
            if len(step_log) + 1 == profile_step:
                self.prof = torch.profiler.profile(
                    activities=[torch.profiler.ProfilerActivity.CPU,
                                torch.profiler.ProfilerActivity.CUDA], record_shapes=True)
                self.prof.__enter__()
            self.t0 = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            torch.cuda.synchronize()
            dt = time.perf_counter() - self.t0
            step_log.append({"step": state.global_step, "time_s": dt,
                             "profiled": self.prof is not None})
            if self.prof is not None:
                self.prof.__exit__(None, None, None)
                with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
                    path = f.name
                self.prof.export_chrome_trace(path)
                with open(path) as f:
                    trace["events"] = json.load(f).get("traceEvents", [])
                os.unlink(path)
                self.prof = None

    oom = measure_hf.train(model, cfg, case, steps, Probe(), "/tmp/fmte-profile-hf")
    del model
    return {"steps": step_log, "oom": oom, **compact(trace.get("events", []))}


def category(name, cat):
    """A coarse class of a GPU event by its kernel name (cuBLAS/cuBLASLt, flash/cuDNN attention,
    PyTorch's fused optimizers and elementwise/reduction kernels)."""
    n = name.lower()
    if cat == "gpu_memcpy" or "memcpy" in n:
        return "memcpy"
    if cat == "gpu_memset" or "memset" in n:
        return "memset"
    if any(k in n for k in ("flash", "fmha", "attention", "sdpa", "cudnn_generated")):
        return "attention"
    if any(k in n for k in ("gemm", "xmma", "nvjet", "cutlass", "cublas", "splitk", "gemv")):
        return "gemm"
    if any(k in n for k in ("multi_tensor_apply", "fused_adam", "adam")):
        return "optimizer"
    if any(k in n for k in ("softmax", "nll_loss", "cross_entropy", "log_softmax")):
        return "softmax_loss"
    if "norm" in n:
        return "norm"
    if "reduce" in n:
        return "reduce"
    if any(k in n for k in ("elementwise", "vectorized", "unrolled", "copy", "cat", "index",
                            "fill", "where", "gather", "scatter")):
        return "elementwise"
    return "other"


SHAPED_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul",
              "aten::linear", "aten::_scaled_dot_product_flash_attention",
              "aten::_scaled_dot_product_efficient_attention",
              "aten::_scaled_dot_product_cudnn_attention", "aten::_flash_attention_forward",
              "aten::_flash_attention_backward", "aten::_efficient_attention_backward",
              "aten::_scaled_dot_product_flash_attention_backward",
              "aten::_scaled_dot_product_efficient_attention_backward",
              "aten::_scaled_dot_product_cudnn_attention_backward"}


def compact(events):
    """Every GPU event of the profiled step as a row, joined to the aten operator that launched it
    (the cpu_op with the same External id) and that operator's input dims."""
    ops = {}
    for e in events:
        if e.get("cat") == "cpu_op" and e.get("ph") == "X":
            a = e.get("args", {})
            ops[a.get("External id")] = (e.get("name", ""), a.get("Input Dims"))
    gpu = [e for e in events if e.get("ph") == "X" and
           e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    if not gpu:
        return {"names": [], "events": []}
    t0 = min(float(e["ts"]) for e in gpu)
    names, index, rows = [], {}, []
    for e in sorted(gpu, key=lambda e: float(e["ts"])):
        name = e.get("name", "")
        if name not in index:
            index[name] = len(names)
            names.append(name)
        op = ops.get(e.get("args", {}).get("External id"), ("", None))
        # Shapes only where they give FLOPs (a fused optimizer's inputs list every parameter).
        dims = op[1] if op[0] in SHAPED_OPS else None
        rows.append([index[name], category(name, e.get("cat")),
                     round(float(e["ts"]) - t0, 2), round(float(e.get("dur", 0)), 2),
                     op[0], dims])
    return {"names": names, "events": rows}


def main():
    ap = measure_hf.case_arguments(steps=5)
    ap.add_argument("--profile-step", type=int, default=3)
    a = ap.parse_args()
    vers, picks = measure_hf.start(a)
    with open(os.path.join(a.out, "profile-hf.jsonl"), "w") as fj:
        for n, i in enumerate(picks):
            case = measure_hf.CASES[i]
            t0 = time.perf_counter()
            try:
                info = run_case(case, a.steps, a.profile_step)
            except Exception:
                traceback.print_exc()
                fj.write(json.dumps({"index": i, "case": case,
                                     "error": traceback.format_exc()}) + "\n")
                fj.flush()
                measure_hf.cleanup()
                if n == 0:
                    sys.exit(1)
                continue
            measure_hf.cleanup()
            fj.write(json.dumps({"index": i, "case": case, "versions": vers, **info}) + "\n")
            fj.flush()
            ev = info["events"]
            busy = sum(r[3] for r in ev) / 1e6
            span = (max(r[2] + r[3] for r in ev) / 1e6) if ev else 0
            st = [round(s["time_s"], 3) for s in info["steps"]]
            print("case %2d %-36s %s steps %s kernels %d busy %.3f s span %.3f s (%.0f s)" % (
                i, case[0], "OOM" if info["oom"] else "ok", st, len(ev), busy, span,
                time.perf_counter() - t0), flush=True)


if __name__ == "__main__":
    main()
