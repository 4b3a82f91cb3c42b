"""Host time of one custom_kernel call on fresh inputs and of its layers
(CPU clock, no flush, median of 2000; a sync every 50 calls, outside the
clock, keeps the GPU from backing up):

  custom_kernel        the task's entry: input views + torch.ops.mla.decode
  torch.ops.mla.decode the custom op (dispatcher -> Spec.decode)
  Spec.decode          tensor checks, output + workspace, args, plan lookup, run
  mla_decode_run       the ctypes call into the launcher alone (validation,
                       packing, cuLaunchKernel[Ex] per kernel), prebuilt args

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/probe_host.py
"""
import ctypes
import statistics
import sys
import time

import torch

sys.path[:0] = ["bench", "python"]
import bench_h200 as B  # noqa: E402
import mla_launcher as L  # noqa: E402
import mla_torch as M  # noqa: E402


def host(fn, reps=2000):
    t = []
    for i in range(reps):
        if i % 50 == 0:
            torch.cuda.synchronize()
        a = time.perf_counter()
        fn()
        t.append((time.perf_counter() - a) * 1e6)
    torch.cuda.synchronize()
    return statistics.median(t)


for bs, kv in [(4, 1024), (256, 1024)]:
    data, _ = B.make_inputs([kv] * bs, "fp8", 1)
    sets = [B.fresh_copy(data) for _ in range(2)]
    i = [0]

    def fresh():
        i[0] ^= 1
        return sets[i[0]]
    s = M.spec_for("fp8")
    q, kvd, qo, kvp, cfg = data
    inputs = M._as_kernel_inputs(s, q, kvd["fp8"][0], kvd["fp8"][1], qo, kvp)
    out = s.decode(*inputs, bs, kv)
    plan = s.plan(bs, kv)
    ws = torch.empty(max(plan.workspace_bytes, 1), dtype=torch.uint8, device="cuda")
    args = L.DecodeArgs(*(t.data_ptr() for t in inputs[:5]), out.data_ptr(), ws.data_ptr(),
                        plan.workspace_bytes, bs, kv, None, 0, inputs[1].shape[0])
    stream = M._current_stream(0)
    r = {
        "custom_kernel": host(lambda: M.custom_kernel(fresh())),
        "torch.ops.mla.decode": host(lambda: torch.ops.mla.decode(*inputs, bs, kv, s.name)),
        "Spec.decode": host(lambda: s.decode(*inputs, bs, kv)),
        "mla_decode_run": host(lambda: s.context.run(plan, args, stream)),
        "DecodeArgs(...)": host(lambda: L.DecodeArgs(*(t.data_ptr() for t in inputs[:5]),
                                                     out.data_ptr(), ws.data_ptr(),
                                                     plan.workspace_bytes, bs, kv, None, 0, inputs[1].shape[0])),
        "torch.empty (out)": host(lambda: torch.empty((bs, 16, 512), dtype=torch.bfloat16,
                                                      device="cuda")),
    }
    print(f"{bs}x{kv}: " + ", ".join(f"{k} {v:.2f} us" for k, v in r.items()))
