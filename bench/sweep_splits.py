"""Times every split candidate of a spec on the 8 task shapes (or --shapes)
as a replayed CUDA graph (L2 flushed, median of 20) beside the launcher's
own choice (the split cost model); with --queued, as the benches time a
call instead (bench_h200.time_call: flush, events and call queued back to
back, median of 30), the method the task's figures use. The count is
forced through the launcher's num_splits argument; Python computes no
split. The spec is the one custom_kernel takes for --format and
--q-seq-len (default: fp8, 1; MLA_SPEC_FP8 / _BF16 / _MXFP4 name another).

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/sweep_splits.py \
        [--format fp8|bf16|mxfp4] [--q-seq-len 2] [--shapes 64x8192,256x8192] \
        [--queued] [--two-launches]
"""
import argparse
import statistics
import sys

import torch

sys.path[:0] = ["bench", "python"]
import bench_h200 as B  # noqa: E402
import mla_torch as M  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--format", default="fp8", choices=["fp8", "bf16", "mxfp4"])
ap.add_argument("--q-seq-len", type=int, default=1)
ap.add_argument("--shapes", help="comma-separated BSxKV (default: the task's 8)")
ap.add_argument("--queued", action="store_true",
                help="time queued calls (the benches' method) instead of graph replays")
ap.add_argument("--two-launches", action="store_true",
                help="stage 1 and stage 2 wherever there are splits (no single launch)")
args = ap.parse_args()
if args.two_launches:
    M.set_one_launch(False)
shapes = ([tuple(int(x) for x in sh.split("x")) for sh in args.shapes.split(",")]
          if args.shapes else B.TASK_SHAPES)
flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
s = M.spec_for(args.format, None, args.q_seq_len)
m = s.context.spec.manifest
print("spec", s.name, "model params", m["split_cost_model"],
      "| method:", "queued calls" if args.queued else "graph replay",
      "| two launches" if args.two_launches else "")
for bs, kv in shapes:
    extra = {}
    if args.format == "mxfp4":
        import mxfp4_h200  # noqa: E402  (the task's mxfp4 inputs)
        data, _, _ = mxfp4_h200.make_inputs([kv] * bs, 1)
        kv_t, extra["kv_scales"] = data[1]["mxfp4"]
        scale = None
    else:
        data, _ = B.make_inputs([kv] * bs, args.format, 1, args.q_seq_len)
        kv_t, scale = data[1]["fp8"] if args.format == "fp8" else (data[1]["bf16"], None)
    q, _, qo, kvp, cfg = data
    inputs = M._as_kernel_inputs(s, q, kv_t, scale, qo, kvp)
    s.decode(*inputs, bs, kv, **extra)
    chosen = s.plan(bs, kv).splits
    row = []
    for n in m["split_candidates"]:
        def fn():
            s.decode(*inputs, bs, kv, num_splits=n, **extra)
        if args.queued:
            row.append((n, round(B.time_call(lambda _: fn(), None, 30, flush, False), 1)))
            continue
        fn()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        st, en = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t = []
        for _ in range(20):
            flush.zero_()
            torch.cuda.synchronize()
            st.record()
            g.replay()
            en.record()
            en.synchronize()
            t.append(st.elapsed_time(en) * 1000)
        row.append((n, round(statistics.median(t), 1)))
    best = min(row, key=lambda r: r[1])
    chosen_t = dict(row)[chosen]
    print(f"{bs}x{kv}: chosen {chosen} ({chosen_t} us) best {best[0]} ({best[1]} us) | "
          + " ".join(f"{n}:{t}" for n, t in row))
