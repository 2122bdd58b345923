#!/usr/bin/env python3
"""What is alive on the GPU at the peak of a real Hugging Face Trainer step, and where it came from.

Run on a machine with a CUDA GPU, PyTorch, transformers, peft and accelerate (no network needed):

    python3 scripts/device/peak_snapshot.py OUT_DIR [--only N,M] [--steps 3]

Each case is a case of scripts/device/measure_hf.py (same index, same model built from etc/models
with random weights, same Trainer arguments). PyTorch's allocator records every allocation and free
with its Python stack (torch.cuda.memory._record_memory_history, stacks="python") from before the
model is built; a one-element tensor allocated in the Trainer callbacks' on_step_begin/on_step_end
marks where each step starts and ends in that trace. The trace is replayed to follow the allocated
bytes (torch.cuda.max_memory_allocated's quantity: blocks as the allocator rounds them), and for
each step the moment of its peak is found and the blocks alive then are grouped by

  - phase of the allocation that made them, from its Python stack: forward (the model's code and
    the loss; also a checkpointed layer's forward run again in backward, which the autograd
    engine's thread runs through torch.utils.checkpoint), optimizer, clip, other (no Python frame:
    what the autograd engine allocates in backward on its own thread, gradients among them).
    "backward"/"recompute" only appear where backward runs on the calling thread (CPU tensors);
  - age: allocated before the first step (the model), in an earlier step, or in this step;
  - where: the innermost transformers/peft/accelerate frame and the innermost frame overall.

The replayed peak is checked against torch.cuda.max_memory_allocated of the same step.

The same trace's segment events (cudaMalloc/cudaFree of the caching allocator, the map/unmap of
expandable segments) give the reserved memory (max_memory_reserved's quantity): at each step's
reserved peak, the segments, what live blocks hold of them and the ones with the most free bytes,
to see why checkpointed runs reserve up to a quarter more than they allocate (docs/memory.md).

Writes OUT_DIR/peak-snapshot.jsonl: one line per case with the versions, and per step: the torch
peak, the replayed peak, the phase and stack of the allocation that reached it, the peak of each
phase, the groups alive at the peak (bytes, count, most common block sizes) and the allocated
bytes sampled along the step; "reserved" per step: the reserved peak, its segments, their live and
free bytes and the segments with the most free bytes; "reserved_peaks": max_memory_reserved.
"""
import bisect
import collections
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_hf  # noqa: E402  (CASES, the model, data and Trainer of a case, cleanup)

MARK = ("on_step_begin", "on_step_end")


def short(frame):
    fn = frame.get("filename", "?")
    parts = fn.split("/")
    tail = "/".join(parts[-2:]) if len(parts) > 1 else fn
    return "%s:%s:%s" % (tail, frame.get("name", "?"), frame.get("line", "?"))


def phase_of(frames):
    """The phase of training an allocation belongs to, from its Python stack."""
    files = [f.get("filename", "") for f in frames]
    names = [f.get("name", "") for f in frames]
    if any("/torch/optim/" in fn for fn in files):
        return "optimizer"
    if any("clip_grad" in n for n in names):
        return "clip"
    in_backward = any(n == "backward" and ("torch/_tensor.py" in fn or "autograd/__init__" in fn)
                      for fn, n in zip(files, names))
    if in_backward:
        if any("torch/utils/checkpoint.py" in fn for fn in files):
            return "recompute"
        return "backward"
    if any(n in ("forward", "compute_loss", "training_step") for n in names):
        return "forward"
    return "other"


def where_of(frames):
    """The innermost frame in the training libraries' code and the innermost frame overall
    (frames[0] is the innermost, as PyTorch records them)."""
    lib = next((short(f) for f in frames
                if any(s in f.get("filename", "") for s in
                       ("/transformers/", "/peft/", "/accelerate/"))), "-")
    return lib, short(frames[0]) if frames else "-"


def is_mark(frames, which):
    return any(f.get("name") == which and "peak_snapshot" in f.get("filename", "")
               for f in frames[:4])


SEGMENT_EVENTS = ("segment_alloc", "segment_map", "segment_free", "segment_unmap")


def segment_event(segs, e):
    """Applies one segment event to `segs` (address -> bytes); returns the change in reserved."""
    if e["action"] in ("segment_alloc", "segment_map"):
        segs[e["addr"]] = segs.get(e["addr"], 0) + e["size"]
        return e["size"]
    left = segs.get(e["addr"], 0) - e["size"]
    if left > 0:
        segs[e["addr"]] = left
    else:
        segs.pop(e["addr"], None)
    return -e["size"]


def marks(trace, which):
    """Trace indices of the marker allocations of `which` (on_step_begin or on_step_end)."""
    return [i for i, e in enumerate(trace) if e["action"] == "alloc" and
            is_mark(e.get("frames", []), which)]


def step_windows(trace):
    """Each step's [begin, end) trace indices, from the markers."""
    return list(zip(marks(trace, MARK[0]), marks(trace, MARK[1])))


def replay(trace, upto):
    """The blocks alive (address -> trace index of its allocation) and the segments (address ->
    bytes) just after trace event `upto`."""
    alive, segs = {}, {}
    for i, e in enumerate(trace[:upto + 1]):
        act = e["action"]
        if act == "alloc":
            alive[e["addr"]] = i
        elif act in ("free_requested", "free_completed"):
            alive.pop(e["addr"], None)
        elif act in SEGMENT_EVENTS:
            segment_event(segs, e)
    return alive, segs


def analyse(trace, start_allocated, torch_peaks, windows, samples=200, top=40):
    """Replay an allocator trace (list of entries with action, addr, size, frames) and describe
    each step's peak. start_allocated: bytes allocated when recording began (blocks the trace
    never saw allocated). torch_peaks: max_memory_allocated per step, for the check. windows:
    step_windows(trace)."""
    first_step = windows[0][0] if windows else len(trace)
    step_of = lambda idx: next((k for k, (b, _) in enumerate(windows) if idx >= b and
                                (k + 1 == len(windows) or idx < windows[k + 1][0])), -1)

    live = {}       # addr -> (size, trace index of its alloc)
    cur = start_allocated
    curve = []      # (index, allocated bytes after the event)
    for i, e in enumerate(trace):
        act = e["action"]
        if act == "alloc":
            live[e["addr"]] = (e["size"], i)
            cur += e["size"]
        elif act in ("free_requested", "free_completed"):
            if e["addr"] in live:
                cur -= live.pop(e["addr"])[0]
            elif act == "free_requested":
                cur -= e["size"]  # a block allocated before recording began
        else:
            continue
        curve.append((i, cur))

    out = []
    for k, (b, en) in enumerate(windows):
        pts = [(i, c) for i, c in curve if b <= i < en]
        if not pts:
            continue
        peak_i, peak = max(pts, key=lambda p: p[1])
        alive, _ = replay(trace, peak_i)
        groups = collections.defaultdict(lambda: [0, 0, collections.Counter()])
        known = 0
        for addr, i in alive.items():
            e = trace[i]
            fr = e.get("frames", [])
            age = ("model" if i < first_step else "this step" if step_of(i) == k
                   else "earlier step")
            lib, inner = where_of(fr)
            g = groups[(phase_of(fr), age, lib, inner)]
            g[0] += e["size"]
            g[1] += 1
            g[2][e["size"]] += 1
            known += e["size"]
        phase_peak = collections.defaultdict(int)
        for i, c in pts:
            ph = phase_of(trace[i].get("frames", []))
            phase_peak[ph] = max(phase_peak[ph], c)
        stride = max(1, len(pts) // samples)
        out.append({
            "step": k + 1,
            "torch_max_allocated": torch_peaks[k] if k < len(torch_peaks) else None,
            "replayed_peak": peak,
            "peak_at": round((peak_i - b) / max(1, en - b), 4),
            "peak_phase": phase_of(trace[peak_i].get("frames", [])),
            "peak_frames": [short(f) for f in trace[peak_i].get("frames", [])[:12]],
            "before_recording": peak - known,
            "phase_peaks": dict(phase_peak),
            "groups": [{"phase": key[0], "age": key[1], "lib": key[2], "inner": key[3],
                        "bytes": v[0], "count": v[1],
                        "sizes": [[s, n] for s, n in v[2].most_common(4)]}
                       for key, v in sorted(groups.items(), key=lambda kv: -kv[1][0])[:top]],
            "curve": [[round((i - b) / max(1, en - b), 4), c,
                       phase_of(trace[i].get("frames", []))] for i, c in pts[::stride]],
        })
    return out


def reserved_at_peak(trace, start_reserved, windows, top=12):
    """The allocator's segments at the peak of reserved memory (max_memory_reserved's quantity) in
    each step window: what is reserved, what of it live blocks hold, and the segments with the most
    free bytes (their size, live bytes and largest live blocks). Segment events: segment_alloc /
    segment_free (cudaMalloc / cudaFree), segment_map / segment_unmap (expandable segments).
    Segments reserved before recording began are counted in start_reserved, not listed."""
    segs = {}   # addr -> size
    reserved = start_reserved
    points = []  # (index, reserved after the event)
    for i, e in enumerate(trace):
        if e["action"] in SEGMENT_EVENTS:
            reserved += segment_event(segs, e)
            points.append((i, reserved))
    out = []
    for k, (b, en) in enumerate(windows):
        pts = [(i, r) for i, r in points if b <= i < en]
        if not pts:
            out.append({"step": k + 1, "segment_events": 0})
            continue
        peak_i, peak = max(pts, key=lambda p: p[1])
        # A segment is reserved for the block allocated next: include that block.
        upto = next((i for i in range(peak_i + 1, len(trace)) if trace[i]["action"] == "alloc"),
                    peak_i)
        alive, segs_at = replay(trace, upto)
        starts = sorted(segs_at)
        inside = collections.defaultdict(list)
        for addr, i in alive.items():
            j = bisect.bisect_right(starts, addr) - 1
            if j >= 0 and addr < starts[j] + segs_at[starts[j]]:
                inside[starts[j]].append(trace[i]["size"])
        rows = [{"size": segs_at[a], "live": sum(inside[a]), "blocks": len(inside[a]),
                 "largest_blocks": sorted(inside[a], reverse=True)[:3]} for a in starts]
        free = sum(r["size"] - r["live"] for r in rows)
        out.append({
            "step": k + 1, "reserved_peak": peak, "peak_at": round((peak_i - b) / max(1, en - b), 4),
            "segments": len(rows), "recorded_segment_bytes": sum(r["size"] for r in rows),
            "live_in_segments": sum(r["live"] for r in rows), "free_in_segments": free,
            "most_free": sorted(rows, key=lambda r: r["live"] - r["size"])[:top],
            "segment_sizes": collections.Counter(r["size"] for r in rows).most_common(8),
        })
    return out


def run_case(case, steps):
    import torch
    from transformers import TrainerCallback

    torch.cuda.memory._record_memory_history(enabled=None)
    torch.cuda.reset_peak_memory_stats()
    start_allocated = torch.cuda.memory_allocated()
    start_reserved = torch.cuda.memory_reserved()
    torch.cuda.memory._record_memory_history(enabled="all", context="alloc", stacks="python",
                                             max_entries=3_000_000)
    model, cfg = measure_hf.build_model(case)
    if case[1] == "lora":
        model = measure_hf.add_lora(model, case)
    peaks, times, reserved_peaks = [], [], []

    class Probe(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            torch.cuda.synchronize()
            mark = torch.empty(1, device="cuda")  # its allocation marks the step's start
            del mark
            torch.cuda.reset_peak_memory_stats()
            self.t0 = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            torch.cuda.synchronize()
            times.append(time.perf_counter() - self.t0)
            peaks.append(torch.cuda.max_memory_allocated())
            reserved_peaks.append(torch.cuda.max_memory_reserved())
            mark = torch.empty(1, device="cuda")  # its allocation marks the step's end
            del mark

    oom = measure_hf.train(model, cfg, case, steps, Probe(), "/tmp/fmte-peak")
    t0 = time.perf_counter()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    trace = snap["device_traces"][0] if snap.get("device_traces") else []
    snap_s = time.perf_counter() - t0
    del model
    windows = step_windows(trace)
    result = analyse(trace, start_allocated, peaks, windows)
    reserved = reserved_at_peak(trace, start_reserved, windows)
    begins = marks(trace, MARK[0])
    mark_frames = [short(f) for f in trace[begins[0]].get("frames", [])[:8]] if begins else None
    return {"steps": result, "reserved": reserved, "reserved_peaks": reserved_peaks,
            "step_times_s": times, "torch_peaks": peaks, "oom": oom,
            "trace_entries": len(trace), "snapshot_s": snap_s, "mark_frames": mark_frames}


def main():
    a = measure_hf.case_arguments(steps=3).parse_args()
    vers, picks = measure_hf.start(a)
    with open(os.path.join(a.out, "peak-snapshot.jsonl"), "w") as fj:
        for i in picks:
            case = measure_hf.CASES[i]
            t0 = time.perf_counter()
            try:
                info = run_case(case, a.steps)
            except Exception:
                traceback.print_exc()
                fj.write(json.dumps({"case_index": i, "case": case,
                                     "error": traceback.format_exc()[-3000:]}) + "\n")
                fj.flush()
                measure_hf.cleanup()
                continue
            left = measure_hf.cleanup()
            fj.write(json.dumps({"case_index": i, "case": case, "versions": vers,
                                 "left_allocated_after_cleanup": left, **info}) + "\n")
            fj.flush()
            for r in info["reserved"]:
                if "reserved_peak" in r:
                    print("case %2d step %d: reserved %.2f GiB at %.2f, %d segments, %.2f GiB "
                          "free in them" % (i, r["step"], r["reserved_peak"] / 2**30,
                                            r["peak_at"], r["segments"],
                                            r["free_in_segments"] / 2**30), flush=True)
            for s in info["steps"]:
                print("case %2d step %d: torch %.2f GiB replayed %.2f GiB at %.2f (%s); %s" % (
                    i, s["step"], (s["torch_max_allocated"] or 0) / 2**30,
                    s["replayed_peak"] / 2**30, s["peak_at"], s["peak_phase"],
                    {k: round(v / 2**30, 2) for k, v in s["phase_peaks"].items()}), flush=True)
            print("case %2d %s: %d trace entries, snapshot %.1f s, %.0f s in all" % (
                i, case[0], info["trace_entries"], info["snapshot_s"],
                time.perf_counter() - t0), flush=True)


if __name__ == "__main__":
    main()
