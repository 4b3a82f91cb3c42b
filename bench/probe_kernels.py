"""Where a call's time goes, kernel by kernel: runs the default plan (or
--splits) of a spec on the given shapes, to be profiled by Nsight Compute,
and times empty kernels the same way the benches time a call (L2 flushed,
CUDA events around the graph replay, median of 30): the floor a one- or
two-kernel call pays before it moves any byte.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python ncu --csv \\
        --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \\
        python3 bench/probe_kernels.py --format bf16 --shapes 4x1024,64x1024
    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/probe_kernels.py --floor
    ... ncu ... python3 bench/probe_kernels.py --format bf16 --shapes 256x8192 \
        --spec deepseek_r1_decode_bf16_sm90a --flashmla artifacts/flashmla

--spec runs that spec instead of the format's default; --flashmla also runs
FlashMLA's dense decode (built in that folder) on the same bf16 inputs, so
that one ncu pass profiles both kernels of a shape side by side.

Under ncu each kernel runs alone with cold caches (ncu's default cache
control), so its duration excludes launch gaps: the difference to the
event-timed call is what launches, the gap between the stages and the
events cost.
"""
import argparse
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--format", default="bf16", choices=["fp8", "bf16", "mxfp4"])
ap.add_argument("--q-seq-len", type=int, default=1)
ap.add_argument("--heads", type=int, default=16)
ap.add_argument("--shapes", default="4x1024,32x1024,64x1024,256x1024")
ap.add_argument("--splits", type=int, default=0, help="0: the launcher's choice")
ap.add_argument("--time", action="store_true",
                help="also time each call as the benches do (not under ncu)")
ap.add_argument("--summarize", metavar="CSV",
                help="print ncu --csv output as one line per kernel, then exit")
ap.add_argument("--floor", action="store_true",
                help="time empty one- and two-kernel graphs instead")
ap.add_argument("--spec", help="this spec (in $MLA_ARTIFACTS) instead of the format's default")
ap.add_argument("--flashmla", help="also run FlashMLA (built in this folder) on the bf16 KV")
args = ap.parse_args()

if args.summarize:
    import collections
    import csv
    with open(args.summarize) as f:
        rows = list(csv.reader(line for line in f if line.startswith('"')))
    kernels = collections.OrderedDict()
    for r in rows[1:]:
        d = dict(zip(rows[0], r))
        kernels.setdefault((d["ID"], d["Kernel Name"]), {})[d["Metric Name"]] = d["Metric Value"]
    for (i, name), m in kernels.items():
        print(i, name.split("(")[0], " ".join(f"{k.split('.')[0]}={v}" for k, v in m.items()))
    sys.exit(0)

import torch  # noqa: E402

sys.path[:0] = ["bench", "python"]
import bench_h200 as B  # noqa: E402
import mla_torch as M  # noqa: E402


def graph_median(fn, flush, reps=30):
    """bench_h200's kernel-only time of fn (CUDA-graph replay, L2 flushed)."""
    return B.graph_time(lambda _: fn(), None, reps, flush)


if args.floor:
    # A one-element torch kernel stands for an empty one: one block, no
    # bytes worth counting.
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    tiny = torch.zeros(1, device="cuda")
    for kernels in (1, 2, 3):
        def fn():
            for _ in range(kernels):
                tiny.add_(1)
        print(f"floor: {kernels} one-block kernel(s): {graph_median(fn, flush):.1f} us")
    sys.exit(0)

s = (M.spec_named(args.spec) if args.spec
     else M.spec_for(args.format, None, args.q_seq_len, args.heads))
print("spec", s.name)
fm = B.flashmla_module(args.flashmla)
if fm:
    from serving_h200 import flashmla_fn
for sh in args.shapes.split(","):
    bs, kv = (int(x) for x in sh.split("x"))
    extra = {}
    if args.format == "mxfp4":  # the task's mxfp4 inputs (bench/mxfp4_h200.py)
        import mxfp4_h200
        data, _, _ = mxfp4_h200.make_inputs([kv] * bs, 1)
        kv_t, extra["kv_scales"] = data[1]["mxfp4"]
        q, _, qo, kvp, cfg = data
        inputs = (q, kv_t, None, qo, kvp)
    else:
        data, _ = B.make_inputs([kv] * bs, args.format, 1, args.q_seq_len, args.heads)
        kv_t, scale = data[1]["fp8"] if args.format == "fp8" else (data[1]["bf16"], None)
        q, _, qo, kvp, cfg = data
        inputs = M._as_kernel_inputs(s, q, kv_t, scale, qo, kvp)
    for _ in range(3):
        s.decode(*inputs, bs, kv, num_splits=args.splits, **extra)
    if fm:
        run = flashmla_fn(fm, data, args.q_seq_len, args.q_seq_len > 1)
        for _ in range(3):
            run(None)
    torch.cuda.synchronize()
    line = f"{bs}x{kv}: splits {s.plan(bs, kv, args.splits).splits}"
    if args.time:
        flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
        us = graph_median(lambda: s.decode(*inputs, bs, kv, num_splits=args.splits, **extra),
                          flush)
        line += f", call {us:.1f} us"
    print(line, flush=True)
