"""custom_kernel's host phases on fresh inputs with the GPU idle (a sync
after the flush), per task shape: what a caller that waits for each call
pays before its kernels start. The phases replay Spec.decode's steps for
the fp8 contiguous entry in order (one call's real work, clocked between
steps), beside the whole custom_kernel call clocked the same way.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/probe_fresh_phases.py
"""
import statistics
import sys
import time

import torch

sys.path[:0] = ["bench", "python"]
import bench_h200 as B  # noqa: E402
import mla_torch as M  # noqa: E402

PHASES = ["entry", "check_inputs", "out", "args", "run", "whole"]


def phased(d, clock):
    q, kvd, qo, kvp, config = d
    kv, scale = kvd["fp8"]
    s = M.spec_for("fp8", q.get_device(), *M._serving_shape(q, config["batch_size"]))
    M._config_check(s, config)
    clock()
    s.check_inputs(q, kv, scale, qo, kvp, config["batch_size"])
    clock()
    out = torch.empty((q.shape[0], s.heads, s.v_dim), dtype=s.out_dtype, device=s.torch_device)
    clock()
    entry = s.entries.get(M._plan_key(config["batch_size"], config["kv_seq_len"], 0, None))
    plan, args, workspaces, plan_ref, args_ref = entry
    stream = M._current_stream(s.device)
    args.q, args.kv, args.out = q.data_ptr(), kv.data_ptr(), out.data_ptr()
    args.qo_indptr, args.kv_indptr = qo.data_ptr(), kvp.data_ptr()
    args.kv_rows = kv.shape[0]
    args.kv_scale = scale.data_ptr()
    s._workspace(plan, args, workspaces, stream)
    clock()
    s.context.run_ref(plan_ref, args_ref, stream)
    clock()
    return out


flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
print(torch.cuda.get_device_name(), torch.__version__)
print("host us, median of 40 cold calls (fresh inputs, flush, sync, then the call)")
print(f"{'bs/kv':>9} " + " ".join(f"{p:>12}" for p in PHASES))
for bs, kv in B.TASK_SHAPES:
    data, _ = B.make_inputs([kv] * bs, "fp8", 1)
    for _ in range(3):
        M.custom_kernel(B.fresh_copy(data))
    rows = {p: [] for p in PHASES}
    for i in range(80):
        d = B.fresh_copy(data)
        flush.zero_()
        torch.cuda.synchronize()
        if i % 2:
            t = [time.perf_counter()]
            phased(d, lambda: t.append(time.perf_counter()))
            for p, a, b in zip(PHASES, t, t[1:]):
                rows[p].append((b - a) * 1e6)
        else:
            t0 = time.perf_counter()
            M.custom_kernel(d)
            rows["whole"].append((time.perf_counter() - t0) * 1e6)
        del d
    torch.cuda.synchronize()
    print(f"{bs:>4}/{kv:<5}" + " ".join(f"{statistics.median(rows[p]):12.1f}" for p in PHASES),
          flush=True)
