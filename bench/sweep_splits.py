"""Times every split candidate of the fp8 spec on the 8 task shapes as a
replayed CUDA graph (L2 flushed, median of 20) beside the launcher's own
choice (the split cost model). The count is forced through the launcher's
num_splits argument; Python computes no split.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/sweep_splits.py
"""
import statistics
import sys

import torch

sys.path[:0] = ["bench", "python"]
import bench_h200 as B  # noqa: E402
import mla_torch as M  # noqa: E402

flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
s = M.spec_for("fp8")
m = s.context.spec.manifest
print("spec", s.name, "model params", m["split_cost_model"])
for bs, kv in B.TASK_SHAPES:
    data, _ = B.make_inputs([kv] * bs, "fp8", 1)
    q, kvd, qo, kvp, cfg = data
    inputs = M._as_kernel_inputs(s, q, kvd["fp8"][0], kvd["fp8"][1], qo, kvp)
    s.decode(*inputs, bs, kv)
    chosen = s.plan(bs, kv).splits
    row = []
    for n in m["split_candidates"]:
        def fn():
            s.decode(*inputs, bs, kv, num_splits=n)
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
