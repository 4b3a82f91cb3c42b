"""Why the fresh column carries host outliers (64 x 1024 in every run since
2026-12-01): bench_h200.time_fresh's loop with the host's phases clocked,
the caching allocator's device allocations counted, and the same loop with
a sync before the call (the call's own host cost on an idle GPU). One
shape's calls under torch.profiler: the CUDA runtime / driver calls the
host makes inside custom_kernel.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/probe_fresh.py
"""
import statistics
import sys
import time

import torch

sys.path[:0] = ["bench", "python"]
import bench_h200 as B  # noqa: E402
import mla_torch as M  # noqa: E402


def stat(key):
    return torch.cuda.memory_stats().get(key, 0)


def loop(fn, data, reps, flush, sync_before):
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(reps)]
    for _ in range(3):
        fn(B.fresh_copy(data))
    torch.cuda.synchronize()
    h_copy, h_call = [], []
    a0, f0 = stat("num_device_alloc"), stat("num_device_free")
    for s, e in ev:
        t0 = time.perf_counter()
        d = B.fresh_copy(data)
        t1 = time.perf_counter()
        flush.zero_()
        if sync_before:
            torch.cuda.synchronize()
        s.record()
        t2 = time.perf_counter()
        fn(d)
        t3 = time.perf_counter()
        e.record()
        del d
        h_copy.append((t1 - t0) * 1e6)
        h_call.append((t3 - t2) * 1e6)
    torch.cuda.synchronize()
    return dict(ev=statistics.median(s.elapsed_time(e) * 1e3 for s, e in ev),
                copy=statistics.median(h_copy), call=statistics.median(h_call),
                call_max=max(h_call), allocs=stat("num_device_alloc") - a0,
                frees=stat("num_device_free") - f0)


flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
print(torch.cuda.get_device_name(), torch.__version__)
print(f"{'bs/kv':>9} | fresh ev us, host copy, host call (max), device allocs/frees "
      f"| same, sync before the call | queued (same inputs)")
for bs, kv in B.TASK_SHAPES:
    data, _ = B.make_inputs([kv] * bs, "fp8", 1)
    a = loop(M.custom_kernel, data, 30, flush, False)
    b = loop(M.custom_kernel, data, 30, flush, True)
    tq = B.time_call(M.custom_kernel, data, 30, flush, synced=False)
    print(f"{bs:>4}/{kv:<5}| {a['ev']:6.1f} {a['copy']:6.1f} {a['call']:6.1f} ({a['call_max']:6.1f}) "
          f"{a['allocs']}/{a['frees']} | {b['ev']:6.1f} {b['copy']:6.1f} {b['call']:6.1f} "
          f"({b['call_max']:6.1f}) {b['allocs']}/{b['frees']} | {tq:6.1f}", flush=True)

from torch.profiler import profile, ProfilerActivity  # noqa: E402
for bs, kv in ((64, 1024), (256, 1024)):
    data, _ = B.make_inputs([kv] * bs, "fp8", 1)
    loop(M.custom_kernel, data, 5, flush, False)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        loop(M.custom_kernel, data, 10, flush, False)
    print(f"\n== profiler, {bs} x {kv}, fresh loop of 10 (+3 warm-up) calls")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))
