"""The masked and the mask-free stage 1 of one spec on the same inputs, one
call each after two warm-up pairs, for Nsight Compute to compare (the
masked one is what every call without host lengths runs, the task's fresh
inputs included; the mask-free one what a caller with host lengths gets):

    MLA_ARTIFACTS=artifacts PYTHONPATH=python ncu --kernel-name regex:stage1 \\
        --launch-skip 4 --launch-count 2 ... \\
        python3 bench/probe_masked_gap.py [--spec S] [--shape 256x8192]
"""
import argparse
import sys

import torch

sys.path[:0] = ["bench", "python"]
import bench_h200 as B  # noqa: E402
import mla_torch as M  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--spec", help="spec in $MLA_ARTIFACTS (default: custom_kernel's fp8 one)")
ap.add_argument("--shape", default="256x8192")
args = ap.parse_args()
bs, kv = (int(x) for x in args.shape.split("x"))
if args.spec:
    M.use_specs("fp8", [args.spec])
s = M.spec_for("fp8", None, 1)
data, _ = B.make_inputs([kv] * bs, "fp8", 1)
q, kv_data, qo, kvp, _ = data
codes, scale = kv_data["fp8"]
inputs = M._as_kernel_inputs(s, q, codes, scale, qo, kvp)
host = kvp.tolist()
print("spec", s.name, "shape", args.shape)
for _ in range(3):
    s.decode(*inputs, bs, kv)                        # masked
    s.decode(*inputs, bs, kv, kv_indptr_host=host)   # mask-free
torch.cuda.synchronize()
