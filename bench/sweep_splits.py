"""Times every split candidate of the fp8 spec on the 8 task shapes as a
replayed CUDA graph (L2 flushed, median of 20) beside the split cost
model's choice.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/sweep_splits.py
"""
import sys, statistics, torch
sys.path[:0] = ["bench", "python"]
import bench_h200 as B, mla_torch as M
flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
k = M.kernels_for("fp8")
print("model params", k.manifest["split_cost_model"], "concurrent", k.concurrent)
for bs, kv in B.TASK_SHAPES:
    data, _ = B.make_inputs([kv] * bs, "fp8", 1)
    q, kvd, qo, kvp, cfg = data
    kvt = kvd["fp8"][0].reshape(kvd["fp8"][0].shape[0], -1).view(torch.uint8)
    sc = kvd["fp8"][1].reshape(1).float()
    row = []
    for s in k.manifest["split_candidates"]:
        fn = lambda: k.run(q, kvt, sc, qo, kvp, bs, kv, splits=s)
        fn(); torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        st, en = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t = []
        for _ in range(20):
            flush.zero_(); torch.cuda.synchronize(); st.record(); g.replay(); en.record(); en.synchronize()
            t.append(st.elapsed_time(en) * 1000)
        row.append((s, round(statistics.median(t), 1), round(k.split_cost(bs, kv, s), 1)))
    best = min(row, key=lambda r: r[1])
    print(f"{bs}x{kv}: chosen {k.choose_splits(bs, kv)} best {best[0]} ({best[1]} us) | " + " ".join(f"{s}:{t}" for s, t, c in row))
