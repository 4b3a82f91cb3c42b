"""Serving shapes on an NVIDIA GPU (issue 17): multi-token prediction
(q_seq_len > 1, causal) and 128 heads, checked and timed, FlashMLA beside.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/serving_h200.py \
        [--flashmla DIR] [--baseline seed_triton_nv.py] [--json out.json] [--memcheck-case]

Checks: through custom_kernel (the task's interface; the spec is picked from
q's shape), fresh random inputs (seed printed), the output poisoned with
NaN, against a float32 torch reference on the dequantised KV with
FlashMLA's causal rule (token i of s_q sees keys [0, L - s_q + i]; a token
that sees no key gives 0): ragged lengths including 0 and L < s_q, and the
timed shapes. Relative Frobenius error <= 2e-2, no NaN.

Timing (bench_h200's method): L2 flushed before each call, CUDA events around
the whole call, median of --reps, queued. Ours: fp8 KV (the H200 default
spec family, qp16) q_seq_len 1 and 2 at 64 x 8192 and 256 x 8192, 128 heads
at 64 x 8192 in fp8 and bf16; FlashMLA (built from source, --flashmla): bf16
KV, paged 64, the same shapes (causal for q_seq_len 2). With FlashMLA, the
task's 8 shapes in the same process: FlashMLA and ours on bf16 KV, ours and
the seed port (--baseline) on fp8 KV.
Exits 1 if a check fails.
"""
import argparse
import importlib.util
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_h200 as B  # noqa: E402
import mla_torch  # noqa: E402

QK, V, SM_SCALE = B.QK, B.V, B.SM_SCALE


def make_inputs(lengths, s_q, heads, kv_format, seed, rising=False):
    return B.make_inputs(lengths, kv_format, seed, s_q, heads, rising)


reference = B.reference


def check(lengths, s_q, heads, fmt, seed, rising=False):
    data, deq = make_inputs(lengths, s_q, heads, fmt, seed, rising)
    _, err, nan = B.checked_call(data, reference(data, deq))
    return err, nan


def flashmla_fn(fm, data, s_q, causal):
    """FlashMLA's dense decode on the same problem, bf16 KV paged by 64."""
    q, kvd, _, _, config = data
    bs, kv, heads = config["batch_size"], config["kv_seq_len"], config["num_heads"]
    kc = kvd["bf16"].view(bs * kv // 64, 64, 1, QK)
    bt = torch.arange(bs * kv // 64, dtype=torch.int32, device="cuda").view(bs, kv // 64)
    sl = torch.full((bs,), kv, dtype=torch.int32, device="cuda")
    qv = q.view(bs, s_q, heads, QK)
    meta, _ = fm.get_mla_metadata()

    def run(_):
        return fm.flash_mla_with_kvcache(qv, kc, bt, sl, V, meta, None,
                                         softmax_scale=SM_SCALE, causal=causal)
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flashmla", help="folder with FlashMLA's built flash_mla module")
    ap.add_argument("--baseline", help="module with custom_kernel(data) (the seed port) to "
                                       "time on the task shapes beside ours and FlashMLA")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("--extra-specs", default="",
                    help="comma-separated spec names in $MLA_ARTIFACTS (e.g. schedule "
                         "variants) to check and time at 64 x 8192 beside the chosen ones")
    ap.add_argument("--memcheck-case", action="store_true",
                    help="one small ragged case per serving spec, then exit")
    args = ap.parse_args()
    seed = int(time.time())
    print(f"device {torch.cuda.get_device_name()}, seed base {seed}")
    failed = 0
    results = {"date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(),
               "seed": seed, "checks": [], "timing": []}

    ragged = [0, 1, 2, 3, 65, 64, 1000, 8191]
    # Row maxima rising all along each sequence (bench_h200.make_inputs).
    rising = B.RISING
    if args.memcheck_case:
        cases = [(s_q, h, f, [0, 1, 3, 70, 129]) for s_q, h in ((2, 16), (1, 128))
                 for f in ("fp8", "bf16")]
    else:
        cases = [(s_q, h, f, lens) for s_q, h in ((2, 16), (1, 128)) for f in ("fp8", "bf16")
                 for lens in (ragged, [1024] * 4, [8192] * 64, rising)]
    for i, (s_q, heads, fmt, lens) in enumerate(cases):
        err, nan = check(lens, s_q, heads, fmt, seed + i, rising=lens is rising)
        ok = err <= 2e-2 and not nan
        failed += not ok
        name = f"{fmt} q_seq_len {s_q} heads {heads} " + (
            "ragged" if lens is ragged else "rising" if lens is rising
            else f"{len(lens)}x{lens[0]}")
        spec = mla_torch.spec_for(fmt, None, s_q, heads).name
        print(f"  {name:40s} {spec:40s} rel err {err:.3e}{' NaN' if nan else ''}"
              f" {'ok' if ok else 'FAILED'}")
        results["checks"].append(dict(name=name, spec=spec, seed=seed + i, err=err, nan=nan,
                                      ok=ok))
    print(f"{len(cases) - failed}/{len(cases)} serving checks ok")
    if args.memcheck_case:
        sys.exit(1 if failed else 0)

    fm = B.flashmla_module(args.flashmla)
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    rows = []
    for bs, kv in ((64, 8192), (256, 8192)):
        for fmt, s_q, heads in (("fp8", 1, 16), ("fp8", 2, 16), ("bf16", 1, 16), ("bf16", 2, 16),
                                ("fp8", 1, 128), ("bf16", 1, 128)):
            if heads == 128 and bs == 256:
                continue
            data, _ = make_inputs([kv] * bs, s_q, heads, fmt, seed)
            t = B.time_call(mla_torch.custom_kernel, data, args.reps, flush, synced=False)
            row = dict(bs=bs, kv=kv, fmt=fmt, q_seq_len=s_q, heads=heads, ours_us=t,
                       spec=mla_torch.spec_for(fmt, None, s_q, heads).name)
            if fm is not None and fmt == "bf16":
                row["flashmla_us"] = B.time_call(flashmla_fn(fm, data, s_q, s_q > 1), None,
                                                 args.reps, flush, synced=False)
            if s_q == 1:
                # The mask-free stage 1, taken when the caller passes host
                # lengths (config["kv_indptr_host"]), beside the masked
                # default.
                data[4]["kv_indptr_host"] = data[3].tolist()
                row["ours_mask_free_us"] = B.time_call(mla_torch.custom_kernel, data, args.reps,
                                                       flush, synced=False)
            rows.append(row)
            fl = f", FlashMLA bf16 {row['flashmla_us']:.1f} us" if "flashmla_us" in row else ""
            mf = (f", mask-free {row['ours_mask_free_us']:.1f} us"
                  if "ours_mask_free_us" in row else "")
            print(f"{bs}x{kv} {fmt} q_seq_len {s_q} heads {heads}: ours {t:.1f} us{mf}{fl}")
    results["timing"] = rows
    # The task's 8 shapes (q_seq_len 1, 16 heads) with every implementation
    # in this one process (issue #19's anchor table): FlashMLA on bf16 KV,
    # ours on bf16 KV (masked default, and mask-free with host lengths) and
    # on fp8 KV, and the seed port (--baseline) on fp8 KV, each on its own
    # fresh inputs of the shape.
    if fm is not None:
        baseline = None
        if args.baseline:
            bspec = importlib.util.spec_from_file_location("baseline", args.baseline)
            baseline = importlib.util.module_from_spec(bspec)
            bspec.loader.exec_module(baseline)
        cols = {"flashmla_us": [], "ours_us": [], "ours_mask_free_us": [], "ours_fp8_us": []}
        if baseline:
            cols["seed_fp8_us"] = []
        for bs, kv in B.TASK_SHAPES:
            row = dict(bs=bs, kv=kv)
            data, _ = make_inputs([kv] * bs, 1, 16, "bf16", seed)
            row["flashmla_us"] = B.time_call(flashmla_fn(fm, data, 1, False), None, args.reps,
                                             flush, synced=False)
            row["ours_us"] = B.time_call(mla_torch.custom_kernel, data, args.reps, flush,
                                         synced=False)
            data[4]["kv_indptr_host"] = data[3].tolist()
            row["ours_mask_free_us"] = B.time_call(mla_torch.custom_kernel, data, args.reps,
                                                   flush, synced=False)
            del data
            data, _ = make_inputs([kv] * bs, 1, 16, "fp8", seed)
            row["ours_fp8_us"] = B.time_call(mla_torch.custom_kernel, data, args.reps, flush,
                                             synced=False)
            if baseline:
                row["seed_fp8_us"] = B.time_call(baseline.custom_kernel, data, args.reps, flush,
                                                 synced=False)
            del data
            for k in cols:
                cols[k].append(row[k])
            print(f"task {bs}x{kv}: FlashMLA bf16 {row['flashmla_us']:.1f} us, ours bf16 "
                  f"{row['ours_us']:.1f} (mask-free {row['ours_mask_free_us']:.1f}), ours fp8 "
                  f"{row['ours_fp8_us']:.1f}"
                  + (f", seed port fp8 {row['seed_fp8_us']:.1f}" if baseline else ""))
            results.setdefault("bf16_task", []).append(row)
        g = {k: B.geomean(v) for k, v in cols.items()}
        results["task_geomean_us"] = g
        print(f"bf16 task geomean: ours {g['ours_us']:.1f} us, mask-free "
              f"{g['ours_mask_free_us']:.1f} us, FlashMLA {g['flashmla_us']:.1f} us "
              f"({g['ours_us'] / g['flashmla_us']:.2f}x); ours fp8 {g['ours_fp8_us']:.1f} us"
              + (f", seed port fp8 {g['seed_fp8_us']:.1f} us" if baseline else ""))

    def find(bs, fmt, s_q, heads, key="ours_us"):
        return next(r[key] for r in rows
                    if (r["bs"], r["fmt"], r["q_seq_len"], r["heads"]) == (bs, fmt, s_q, heads))
    # Schedule variants of a serving spec (another block_m, ...): the same
    # check and timing through Spec.decode.
    for name in filter(None, args.extra_specs.split(",")):
        spec = mla_torch.spec_named(name)
        fmt = "bf16" if spec.kv_dtype == torch.bfloat16 else "fp8"
        s_q, heads = spec.q_seq_len, spec.heads
        data, deq = make_inputs([8192] * 64, s_q, heads, fmt, seed)
        q, kvd, qo, kvp, config = data
        kv, scale = kvd["fp8"] if fmt == "fp8" else (kvd["bf16"], None)

        def call(_):
            return spec.decode(q, kv, scale, qo, kvp, 64, 8192)
        B.poison()
        got = call(None).float()
        ref = reference(data, deq)
        err = ((got - ref).norm() / ref.norm()).item()
        # fp8 Q and P (_qp8 specs): 5e-2, as bench/wgmma_h200.py.
        ok = err <= (5e-2 if "_qp8" in name else 2e-2) and not bool(torch.isnan(got).any())
        failed += not ok
        t = B.time_call(call, None, args.reps, flush, synced=False)
        base = find(64, fmt, s_q, heads)
        print(f"64x8192 {name}: {t:.1f} us ({t / base:.2f} x {mla_torch.spec_for(fmt, None, s_q, heads).name}),"
              f" rel err {err:.3e} {'ok' if ok else 'FAILED'}")
        results.setdefault("extra", []).append(dict(spec=name, us=t, vs_chosen=t / base,
                                                    err=err, ok=ok))

    for bs in (64, 256):
        for fmt in ("fp8", "bf16"):
            ratio = find(bs, fmt, 2, 16) / find(bs, fmt, 1, 16)
            print(f"MTP 2 / q_seq_len 1 at {bs}x8192 {fmt}: {ratio:.2f} (target <= 1.3)")
            results[f"mtp2_ratio_{bs}_{fmt}"] = ratio
    if fm is not None:
        r = find(64, "bf16", 1, 128) / find(64, "bf16", 1, 128, "flashmla_us")
        print(f"128 heads at 64x8192 bf16: ours / FlashMLA = {r:.2f}")
        results["h128_vs_flashmla"] = r
    B.finish(results, args.json, failed)


if __name__ == "__main__":
    main()
