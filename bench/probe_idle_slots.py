"""Whether the program slots that 256 x 8192 leaves idle are free capacity:
the fp8 specs timed at 248, 256 and 264 sequences of 8192 tokens. The split
model gives each of these one split, so the stage-1 grid is the batch, and
at two programs an SM the 132 SMs of an H100 / H200 hold 264 at once. If the
time per sequence falls from 256 to 264 sequences, the eight idle slots at
256 were capacity a schedule of work items across sequences could use
(docs/Design.md, "More bytes in flight"); if it stays level, the call is
bound by DRAM (or whatever all programs share), not by its programs.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/probe_idle_slots.py \
        [--specs a,b,c] [--batches 248,256,264] [--kv 8192] [--reps 20] [--json out.json]

Timing only (the specs' checks are bench/wgmma_h200.py's): fresh random
inputs (seed printed), bench_h200.time_call (L2 flushed, queued, CUDA
events around each call, median of --reps), each spec in the listed order,
then the reverse.
"""
import argparse
import json
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_h200 as B  # noqa: E402
import mla_torch  # noqa: E402
import wgmma_h200 as W  # noqa: E402

SPECS = ("deepseek_r1_decode_fp8_qp16_sm90a,deepseek_r1_decode_fp8_e4m3x2_sm90a,"
         "deepseek_r1_decode_fp8_e4m3x2_db_sm90a")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--specs", default=SPECS)
    ap.add_argument("--batches", default="248,256,264")
    ap.add_argument("--kv", type=int, default=8192)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--json")
    args = ap.parse_args()
    have = set(os.listdir(os.environ.get("MLA_ARTIFACTS", "artifacts")))
    specs = [s for s in args.specs.split(",") if f"{s}.json" in have]
    batches = [int(b) for b in args.batches.split(",")]
    seed = random.randrange(1 << 32)
    print(f"device {torch.cuda.get_device_name()}, seed {seed}")
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    rows = []
    for order in ("forward", "reverse"):
        for s in specs if order == "forward" else specs[::-1]:
            W.use_spec("fp8", s)
            cells = []
            for bs in batches:
                data, _ = B.make_inputs([args.kv] * bs, "fp8", seed)
                us = B.time_call(mla_torch.custom_kernel, data, args.reps, flush, synced=False)
                del data
                rows.append(dict(spec=s, order=order, bs=bs, kv=args.kv, us=us))
                cells.append(f"{bs}: {us:.1f} us ({us / bs:.3f} a sequence)")
            print(f"{order} {s}: " + " | ".join(cells), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(seed=seed, device=torch.cuda.get_device_name(), rows=rows), f,
                      indent=1)


if __name__ == "__main__":
    main()
