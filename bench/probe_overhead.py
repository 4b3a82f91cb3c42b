"""Splits the whole-call time of custom_kernel into host time, launch time
and event overhead on the H200 (see docs/PerformanceLog.md, third session).

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/probe_overhead.py \
        path/to/seed_triton_nv.py
"""
import sys, time, statistics, importlib.util
import torch
sys.path[:0] = ["bench", "python"]
import bench_h200 as B, mla_torch as M

flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
def ev(fn, reps=50, do_flush=True):
    for _ in range(3): fn()
    t = []
    for _ in range(reps):
        if do_flush: flush.zero_()
        torch.cuda.synchronize(); s.record(); fn(); e.record(); e.synchronize()
        t.append(s.elapsed_time(e) * 1000)
    return statistics.median(t)
def host(fn, reps=200):
    for _ in range(3): fn()
    t = []
    for _ in range(reps):
        torch.cuda.synchronize(); a = time.perf_counter(); fn(); t.append((time.perf_counter() - a) * 1e6)
    return statistics.median(t)
spec = importlib.util.spec_from_file_location("seed", sys.argv[1])
seed = importlib.util.module_from_spec(spec); spec.loader.exec_module(seed)
x = torch.zeros(16, device="cuda")
print("empty events  flush %.1f  noflush %.1f" % (ev(lambda: None), ev(lambda: None, do_flush=False)))
print("tiny op       flush %.1f  noflush %.1f  host %.1f" % (ev(lambda: x.add_(1)), ev(lambda: x.add_(1), do_flush=False), host(lambda: x.add_(1))))
print("current_stream host %.2f" % host(lambda: torch.cuda.current_stream().cuda_stream))
print("raw stream host %.2f" % host(lambda: torch._C._cuda_getCurrentRawStream(0)))
for bs, kv in [(4, 1024), (4, 8192), (32, 1024), (256, 8192)]:
    data, _ = B.make_inputs([kv] * bs, "fp8", 1)
    f = lambda: M.custom_kernel(data); g = lambda: seed.custom_kernel(data)
    print(f"{bs}x{kv}: ours flush {ev(f):.1f} noflush {ev(f, do_flush=False):.1f} host {host(f):.1f} | "
          f"seed flush {ev(g):.1f} noflush {ev(g, do_flush=False):.1f} host {host(g):.1f}")
    k = M.kernels_for("fp8")
    launches = next(p for p in M._plans.values()
                    if p.pointers and p.pointers[0] == data[0].data_ptr()).launches
    st = M.current_stream(0)
    print("   launch_all only host %.1f, one launch %.1f" % (host(lambda: k.launch_all(launches, st)),
          host(lambda: k.launch_all(launches[:1], st))))
    # single stage-1 kernel, events
    print("   stage1+2 launches via launch_all ev flush %.1f noflush %.1f" % (ev(lambda: k.launch_all(launches, st)), ev(lambda: k.launch_all(launches, st), do_flush=False)))
