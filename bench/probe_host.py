"""Host time of one custom_kernel call on fresh inputs, and of its pieces
(CPU clock, no flush, median of 2000; the GPU is kept from backing up by a
sync every 50 calls, outside the clock).

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/probe_host.py
"""
import statistics, sys, time
import torch
sys.path[:0] = ["bench", "python"]
import bench_h200 as B, mla_torch as M


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
        M.custom_kernel(sets[i[0]])
    q, kvd, qo, kvp, cfg = data
    M.custom_kernel(data)
    plan = next(iter(M._plans.values()))
    st = M.current_stream(0)
    print(f"{bs}x{kv}: call fresh {host(fresh):.2f}  call repeated {host(lambda: M.custom_kernel(data)):.2f}"
          f"  plan.launch {host(lambda: plan.launch(st)):.2f}"
          f"  launch_all (one ctypes call per kernel) {host(lambda: M.DecodeKernels.launch_all(plan.launches, st)):.2f}"
          f"  one launch {host(lambda: plan.launches[0](st)):.2f}"
          f"  bind {host(lambda: plan.bind(plan.pointers)):.2f}")
print(f"q.shape {host(lambda: q.shape):.2f}  q.stride() {host(lambda: q.stride()):.2f}"
      f"  q.dtype {host(lambda: q.dtype):.2f}  q.is_contiguous() {host(lambda: q.is_contiguous()):.2f}"
      f"  q.data_ptr() {host(lambda: q.data_ptr()):.2f}  q.device {host(lambda: q.device):.2f}"
      f"  q.get_device() {host(lambda: q.get_device()):.2f}"
      f"  current_stream {host(lambda: M.current_stream(0)):.2f}  empty {host(lambda: None):.2f}")
