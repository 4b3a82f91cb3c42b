"""sm_90a's wgmma path (issue 19) against sm_90's mma.sync one, checked and
timed in one process on an NVIDIA H200, FlashMLA beside.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/wgmma_h200.py \
        [--flashmla DIR] [--json out.json] [--specs a,b] [--memcheck-case]

`make artifacts` compiles the bf16 spec for --chip=sm_90a as
deepseek_r1_decode_bf16_sm90a (and any other *_sm90a spec it lists); this
script loads each spec named in --specs through custom_kernel (the task's
interface) in place of the default one of its KV format.

Checks (bench_h200's): fresh random inputs (seed printed), outputs poisoned
with NaN, against a float32 torch reference on the dequantised KV,
relative Frobenius error <= 2e-2 (--tol; 5e-2 for fp8 Q and P) and no NaN, each case on the same buffers
twice, fresh copies, kv_indptr rewritten in place and a CUDA-graph replay:
the 8 task shapes, kv 1 / 17 / 1000 / 8191 and a ragged batch with zero
lengths.

Timing: L2 flushed before each call, CUDA events around the whole call,
median of --reps, queued; the task's 8 shapes with sm_90's spec of the
format, each wgmma spec (masked, and mask-free with host lengths) and
FlashMLA (bf16 KV paged by 64) where built; where `spec`_mtp2 is compiled,
q_seq_len 2 against 1 at 64 and 256 x 8192 (checked on ragged and full
lengths first).
Exits 1 if a check fails.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_h200 as B  # noqa: E402
import mla_torch  # noqa: E402
from serving_h200 import check as check_sq, flashmla_fn  # noqa: E402

EDGE = [[1], [17], [1000], [8191], [0, 5, 64, 65, 1000, 0, 130]]


def use_spec(fmt, name):
    """custom_kernel's spec for `fmt` from now on: `name` (None: the
    default list)."""
    mla_torch.use_specs(fmt, [name] if name else None)


# sm_90's (mma.sync) spec of each format, the comparison.
SM90 = {"bf16": "deepseek_r1_decode_bf16", "fp8": "deepseek_r1_decode_fp8_qp16"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flashmla", help="folder with FlashMLA's built flash_mla module")
    ap.add_argument("--specs", default="deepseek_r1_decode_bf16_sm90a",
                    help="comma-separated wgmma spec names in $MLA_ARTIFACTS")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("--memcheck-case", action="store_true",
                    help="one small ragged case per spec, then exit")
    ap.add_argument("--once", metavar="BSxKV",
                    help="one call per spec (and the default spec of its format) at "
                         "this shape, for a profiler, then exit")
    ap.add_argument("--no-check", action="store_true", help="timing only")
    ap.add_argument("--tol", type=float, default=2e-2,
                    help="relative Frobenius bound (specs with fp8 Q and P, _qp8: 5e-2, "
                         "the bound of docs/Performance.md)")
    args = ap.parse_args()
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}")
    specs = [s for s in args.specs.split(",") if s]
    fmt_of = {s: ("fp8" if "fp8" in s else "bf16") for s in specs}
    tol_of = {s: max(args.tol, 5e-2) if "_qp8" in s else args.tol for s in specs}
    results = {"seed": seed, "correctness": [], "timing": []}
    failed = 0
    folder = os.environ.get("MLA_ARTIFACTS", "artifacts")
    if args.memcheck_case:
        for s in specs:
            use_spec(fmt_of[s], s)
            err, nan = B.check(fmt_of[s], [0, 5, 130, 64], seed)
            ok = err <= tol_of[s] and not nan
            failed += not ok
            print(f"memcheck case {s}: err {err:.2e} nan {nan} {'ok' if ok else 'FAIL'}")
            # and its MTP 2 spec where compiled (ragged, L < s_q, causal)
            if os.path.exists(os.path.join(folder, s + "_mtp2.json")):
                err, nan = check_sq([0, 1, 3, 70, 129], 2, 16, fmt_of[s], seed)
                ok = err <= tol_of[s] and not nan
                failed += not ok
                print(f"memcheck case {s}_mtp2: err {err:.2e} nan {nan} "
                      f"{'ok' if ok else 'FAIL'}")
        B.finish(results, args.json, failed)
    if args.once:
        bs, kv = (int(x) for x in args.once.split("x"))
        for s in [None] + specs:
            fmt = fmt_of[s] if s else "bf16"
            use_spec(fmt, s or SM90[fmt])
            data, _ = B.make_inputs([kv] * bs, fmt, seed)
            mla_torch.custom_kernel(data)
            torch.cuda.synchronize()
        sys.exit(0)
    for s in specs if not args.no_check else []:
        use_spec(fmt_of[s], s)
        for lengths in [[kv] * bs for bs, kv in B.TASK_SHAPES] + EDGE:
            err, nan = B.check(fmt_of[s], lengths, seed)
            ok = err <= tol_of[s] and not nan
            failed += not ok
            name = (f"{len(lengths)}x{lengths[0]}" if len(set(lengths)) == 1
                    else f"ragged {lengths}")
            print(f"check {s} {name}: err {err:.2e} nan {nan} {'ok' if ok else 'FAIL'}")
            results["correctness"].append(dict(spec=s, lengths=name, err=err, nan=nan, ok=ok))
        # Row maxima rising all along each sequence (bench_h200.make_inputs).
        err, nan = B.check(fmt_of[s], B.RISING, seed, rising=True)
        ok = err <= B.rising_bound(tol_of[s]) and not nan
        failed += not ok
        print(f"check {s} rising: err {err:.2e} nan {nan} {'ok' if ok else 'FAIL'}")
        results["correctness"].append(dict(spec=s, lengths="rising", err=err, nan=nan, ok=ok))
    fm = B.flashmla_module(args.flashmla)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    cols = {}
    for bs, kv in B.TASK_SHAPES:
        row = dict(bs=bs, kv=kv)
        for fmt in sorted(set(fmt_of.values())):
            use_spec(fmt, SM90[fmt])
            data, _ = B.make_inputs([kv] * bs, fmt, seed)
            row[f"sm90_{fmt}_us"] = B.time_call(mla_torch.custom_kernel, data, args.reps, flush,
                                                synced=False)
            if fm is not None and fmt == "bf16":
                row["flashmla_us"] = B.time_call(flashmla_fn(fm, data, 1, False), None,
                                                 args.reps, flush, synced=False)
            del data
        for s in specs:
            use_spec(fmt_of[s], s)
            data, _ = B.make_inputs([kv] * bs, fmt_of[s], seed)
            row[f"{s}_us"] = B.time_call(mla_torch.custom_kernel, data, args.reps, flush,
                                         synced=False)
            data[4]["kv_indptr_host"] = data[3].tolist()
            row[f"{s}_mask_free_us"] = B.time_call(mla_torch.custom_kernel, data, args.reps,
                                                   flush, synced=False)
            del data
        for k, v in row.items():
            if k.endswith("_us"):
                cols.setdefault(k, []).append(v)
        print(f"{bs}x{kv}: " + ", ".join(f"{k[:-3]} {v:.1f}" for k, v in row.items()
                                          if k.endswith("_us")))
        results["timing"].append(row)
    # Several query tokens (issue 17): where `spec`_mtp2 is compiled, checked
    # (ragged, causal) and timed against q_seq_len 1 at 64 and 256 x 8192.
    for s in [None] + specs:
        fmt = fmt_of[s] if s else "bf16"
        name = s or SM90["bf16"]
        if not os.path.exists(os.path.join(folder, name + "_mtp2.json")):
            continue
        use_spec(fmt, name)
        for lengths in ([0, 1, 2, 65, 1000, 130], [8192] * 4):
            err, nan = check_sq(lengths, 2, 16, fmt, seed)
            ok = err <= (tol_of[s] if s else args.tol) and not nan
            failed += not ok
            print(f"check {name}_mtp2 {lengths[:6]}: err {err:.2e} nan {nan} "
                  f"{'ok' if ok else 'FAIL'}")
            results["correctness"].append(dict(spec=name + "_mtp2", lengths=str(lengths),
                                               err=err, nan=nan, ok=ok))
        for bs in (64, 256):
            row = dict(spec=name, bs=bs, kv=8192)
            for sq in (1, 2):
                data, _ = B.make_inputs([8192] * bs, fmt, seed, sq)
                row[f"q{sq}_us"] = B.time_call(mla_torch.custom_kernel, data, args.reps,
                                               flush, synced=False)
                del data
            row["ratio"] = row["q2_us"] / row["q1_us"]
            print(f"mtp {name} {bs}x8192: q_seq_len 1 {row['q1_us']:.1f} us, 2 "
                  f"{row['q2_us']:.1f} us ({row['ratio']:.2f}x)")
            results.setdefault("mtp", []).append(row)
    results["geomean_us"] = {k: B.geomean(v) for k, v in cols.items()}
    print("geomean us: " + ", ".join(f"{k[:-3]} {v:.1f}"
                                     for k, v in results["geomean_us"].items()))
    print(f"{failed} failed, {len(results['correctness']) - failed} passed")
    B.finish(results, args.json, failed)


if __name__ == "__main__":
    main()
