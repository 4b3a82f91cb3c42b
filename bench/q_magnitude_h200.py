"""fp8 Q at any magnitude (mla.quant_scale): the fp8 Q / P specs checked on
an NVIDIA H200 with Q ~ N(0, 1) times 2^k and the softmax scale divided by
2^k, so that the scores are those of the plain case and only Q's magnitude
changes. k = 10 puts most entries beyond e4m3's 448 (an unscaled rounding
saturates them), k = -12 most among its subnormals (below 2^-6).

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/q_magnitude_h200.py \
        --specs a,b [--json out.json]

Each spec named `S` must be compiled twice beside the plain one, with the
softmax scale divided by 2^10 as `S_qbig` and multiplied by 2^12 as
`S_qsmall` (bench/q_magnitude_specs.sh does it). Cases: the task's 4 x 1024
and 64 x 8192 and a ragged batch with zero lengths, fresh inputs (seed
printed), outputs poisoned, against a float32 torch reference on the
dequantised KV; relative Frobenius error <= 5e-2 (the fp8 Q / P bound; 2e-2
for the two-term spec, _e4m3x2, whose Q and P keep bf16's precision) and
no NaN. A spec whose name ends in `_prev` (an earlier compiler's build) is
reported and not failed: the comparison.
Exits 1 if a check fails.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_h200 as B  # noqa: E402
import mla_torch  # noqa: E402

CASES = [[1024] * 4, [8192] * 64, [0, 5, 64, 65, 1000, 0, 130]]
VARIANTS = {"_qbig": 10, "_qsmall": -12}


def check(spec, log2_factor, lengths, seed):
    mla_torch.use_specs("fp8", [spec])
    data, deq = B.make_inputs(lengths, "fp8", seed)
    q, kvd, qo, kvp, config = data
    factor = 2.0 ** log2_factor
    q.mul_(factor)  # a power of two: exact in bf16 for N(0, 1) draws
    config["sm_scale"] = B.SM_SCALE / factor
    _, err, nan = B.checked_call(data, B.reference(data, deq))
    return err, nan, q.abs().max().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--specs", default="deepseek_r1_decode_fp8_qp8_sm90a")
    ap.add_argument("--json")
    args = ap.parse_args()
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}")
    results = {"seed": seed, "correctness": []}
    failed = 0
    for spec in [s for s in args.specs.split(",") if s]:
        base, prev = (spec[:-5], "_prev") if spec.endswith("_prev") else (spec, "")
        for suffix, k in VARIANTS.items():
            name = base + suffix + prev
            for lengths in CASES:
                err, nan, qmax = check(name, k, lengths, seed)
                ok = err <= (2e-2 if "_e4m3x2" in base else 5e-2) and not nan
                failed += not ok and not prev
                shape = (f"{len(lengths)}x{lengths[0]}" if len(set(lengths)) == 1
                         else f"ragged {lengths}")
                verdict = "ok" if ok else ("over the bound (earlier compiler)" if prev
                                           else "FAIL")
                print(f"check {name} (Q times 2^{k}, max |q| {qmax:.3g}) {shape}: "
                      f"err {err:.2e} nan {nan} {verdict}")
                results["correctness"].append(dict(spec=name, log2_factor=k, lengths=shape,
                                                   err=err, nan=nan, ok=ok))
    print(f"{failed} failed")
    B.finish(results, args.json, failed)


if __name__ == "__main__":
    main()
