"""Does the benches' L2 flush (zeroing 256 MiB: the L2 is left full of
dirty lines) slow the first tens of MB a call reads? Times the default bf16
spec, one wave of 132 programs (splits 1) with 1 - 64 tiles each, after the
zeroing flush and after a read-only one (a sum over the same buffer: clean
lines), same graph replay and events as bench_h200.graph_time.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/probe_flush.py
"""
import sys

import torch

sys.path[:0] = ["bench", "python"]
import bench_h200 as B  # noqa: E402
import mla_torch as M  # noqa: E402


zeroing = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
flushes = {"zeroing": zeroing, "read-only": B.ReadFlush(zeroing)}
s = M.spec_for("bf16", None, 1)
print("spec", s.name)
for kv in (64, 128, 256, 512, 1024, 2048, 4096):
    bs = 132
    data, _ = B.make_inputs([kv] * bs, "bf16", 1, 1)
    q, kvd, qo, kvp, _ = data
    inputs = M._as_kernel_inputs(s, q, kvd["bf16"], None, qo, kvp)
    line = f"{bs}x{kv} ({kv // 64} tiles a program):"
    for name, fl in flushes.items():
        us = B.graph_time(lambda _: s.decode(*inputs, bs, kv, num_splits=1), None, 30, fl)
        mb = bs * kv * 1152 / 1e6
        line += f" {name} {us:.1f} us ({mb / us:.2f} TB/s)"
    print(line, flush=True)
