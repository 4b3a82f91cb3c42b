"""Where a short call's time goes on the GPU: each kernel's start and end,
from the end of the L2 flush before it, as CUPTI records them
(torch.profiler), for the read floor's kernel (bench/probe_read_floor.py),
our fp8 custom_kernel, and the same call with every sequence empty (the
same plan and grid, no KV read). The benches' events time a call as one
span; this splits it into the first kernel's start after the flush, each
stage's span and the second stage's overlap (programmatic dependent
launch starts it before stage 1 ends, to wait there).

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/probe_call_timeline.py [--json F]

Kernel tracing adds its own small cost around each launch, so the spans
are for comparing with each other, not with the benches' figures. Needs
CuPy (NVRTC) for the read kernel.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import torch
from torch.profiler import ProfilerActivity, profile

sys.path[:0] = ["bench", "python"]
import bench_h200 as B  # noqa: E402
import mla_torch as M  # noqa: E402
import probe_read_floor as F  # noqa: E402


def timeline(fn, reps, flush):
    """Per rep, the kernels' (name, start, end) in us from the flush's end;
    the spans' medians by kernel position."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            flush.zero_()
            fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    gpu = sorted((e for e in trace.get("traceEvents", [])
                  if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memset")),
                 key=lambda e: e["ts"])
    calls, current, flush_end = [], None, None
    for e in gpu:
        if e["cat"] == "gpu_memset" or "fill" in e["name"].lower() and e["dur"] > 20:
            if current:
                calls.append(current)
            current, flush_end = [], e["ts"] + e["dur"]
        elif current is not None:
            current.append((e["name"], e["ts"] - flush_end, e["ts"] + e["dur"] - flush_end))
    if current:
        calls.append(current)
    counts = {len(c) for c in calls}
    if len(calls) != reps or len(counts) != 1:
        sys.exit(f"expected {reps} calls of one kernel count after the flushes; got "
                 f"{len(calls)} with counts {sorted(counts)}")
    n = counts.pop()
    return [dict(name=calls[0][k][0][:60],
                 start=statistics.median(c[k][1] for c in calls),
                 end=statistics.median(c[k][2] for c in calls)) for k in range(n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--shapes", default="4x1024,4x8192,32x1024,64x1024,256x8192")
    ap.add_argument("--json")
    args = ap.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    reader = F.ReadKernel()
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    seed = int(time.time()) % 100000
    print(f"device {torch.cuda.get_device_name()}, seed {seed}; us from the flush's end, "
          f"median of {args.reps}: kernel [start, end]")
    rows = []
    for bs, kv_len in shapes:
        data, _ = B.make_inputs([kv_len] * bs, "fp8", seed)
        read = reader.read(data[1]["fp8"][0].view(torch.uint8).reshape(-1))
        empty = F.empty_call(data)
        row = dict(bs=bs, kv=kv_len, spec=M.spec_for("fp8", kv_tokens=bs * kv_len).name)
        for label, fn in (("read", read), ("ours", lambda: M.custom_kernel(data)),
                          ("empty", lambda: M.custom_kernel(empty)),
                          # the empty call, then ours: ours' kernels with
                          # their code and constants brought back by the
                          # empty call after the flush
                          ("after empty", lambda: (M.custom_kernel(empty),
                                                   M.custom_kernel(data)))):
            row[label] = timeline(fn, args.reps, flush)
            spans = "  ".join(f"{k['name'].split('(')[0][-28:]} [{k['start']:.1f}, {k['end']:.1f}]"
                              for k in row[label])
            print(f"{bs:>4}x{kv_len:<5} {label:>11}: {spans}", flush=True)
        rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(date=time.strftime("%Y-%m-%d"), device=torch.cuda.get_device_name(),
                           seed=seed, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
