"""mxfp4 KV on an NVIDIA GPU (issue 18): the task's third cache format,
checked against a float32 reference on the dequantised cache and timed
beside fp8 in the same run.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/mxfp4_h200.py \
        [--variants a,b] [--reps 30] [--json out.json] [--memcheck-case]

Inputs: the task's (../shared/task/amd-mixed-mla.md): q ~ N(0, 1) bf16, KV ~
N(0, 1) in bf16, quantised here to fp8 (per-tensor scale) and to mxfp4 with
the OCP MX rule (per block of 32: scale 2^(floor(log2 amax) - 2), values
rounded to nearest even e2m1, saturated to 6), the data as
(total_kv, 1, 288) bytes, low nibble = even element, the e8m0 scales in an
array padded in both dimensions (rows to a multiple of 256, 32 columns for
18 blocks: the kernels must take the stride from the tensor).

Checks (custom_kernel with config["kv_format"] = "mxfp4", output poisoned,
host synchronisations errors): the 8 task shapes, kv 1 / 17 / 1000 / 8191,
a ragged batch with zero lengths, and one whose scales include 0 and 1
(subnormal values, the kernels' exact decode); each called on the same buffers twice, on
fresh copies, and captured in a CUDA graph through torch.ops.mla.decode
(new q written, replayed). Error against the float32 reference on the
dequantised cache (the kernel's own error, bound 2e-2; 5e-2 for the specs
with fp8 Q and P, _qp8, as wgmma_h200.py's) and against the bf16 cache (the
format's error, reported). Bad scale tensors are refused naming
kv_scales.

Timing (bench_h200's method: L2 flushed, events around the whole call,
median of --reps, queued): the 8 task shapes, fp8 (the default spec) and
mxfp4 (the spec and the --variants), repeated inputs and fresh ones.
Target of the issue: mxfp4 >= 1.5x faster than fp8 at 256 x 8192, no task
shape slower. Exits 1 if a check fails.
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_h200 as B  # noqa: E402
import mla_torch  # noqa: E402

QK, V = B.QK, B.V
E2M1 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def quantize_mxfp4(kv):
    """kv [rows, 1, QK] (any float) -> (data [rows, 1, QK / 2] uint8, scales
    [rows padded to 256, 32] uint8 (18 used), dequantised float32 [rows, 1,
    QK])."""
    rows = kv.shape[0]
    x = kv.float().reshape(rows, QK // 32, 32)
    amax = x.abs().amax(dim=-1, keepdim=True)
    e = torch.where(amax > 0, torch.floor(torch.log2(amax)) - 2 + 127,
                    torch.zeros_like(amax)).clamp(0, 254)
    scale = torch.exp2(e - 127)
    v = (x / scale).abs()
    grid = E2M1.to(kv.device)
    mid = (grid[1:] + grid[:-1]) / 2
    code = torch.bucketize(v, mid)  # ties to the lower code ...
    tie = (v.unsqueeze(-1) == mid).any(-1) & (code % 2 == 1)
    code = (code + tie.long()).clamp(max=7)  # ... made even
    code = code | ((x < 0).long() << 3)
    code = code.reshape(rows, QK).to(torch.uint8)
    data = (code[:, 0::2] | (code[:, 1::2] << 4)).reshape(rows, 1, QK // 2)
    padded = max(256, -(-rows // 256) * 256)
    scales = torch.full((padded, 32), 0x7F, dtype=torch.uint8, device=kv.device)
    scales[:rows, :QK // 32] = e.reshape(rows, QK // 32).to(torch.uint8)
    return data, scales, dequantize_mxfp4(data, scales, rows)


def dequantize_mxfp4(data, scales, rows):
    """The task reference's unpacking: low nibble even, value x 2^(e - 127)."""
    b = data.reshape(rows, QK // 2).long()
    code = torch.stack((b & 0xF, b >> 4), dim=-1).reshape(rows, QK)
    mag = E2M1.to(data.device)[code & 7]
    val = torch.where(code >= 8, -mag, mag)
    s = torch.exp2(scales[:rows, :QK // 32].float() - 127)
    s = torch.where(scales[:rows, :QK // 32] == 0xFF, torch.nan, s)
    return (val.reshape(rows, QK // 32, 32) * s.unsqueeze(-1)).reshape(rows, 1, QK)


def make_inputs(lengths, seed, rising=False):
    """bench_h200's inputs (rising: its scores that keep rising along each
    sequence) with kv_data["mxfp4"] added and config's format set to it;
    also the dequantised mxfp4 cache and the bf16 one."""
    data, _ = B.make_inputs(lengths, "fp8", seed, rising=rising)
    q, kvd, qo, kvp, config = data
    mx, scales, deq = quantize_mxfp4(kvd["bf16"])
    e8m0 = getattr(torch, "float8_e8m0fnu", None)
    kvd = dict(kvd, mxfp4=(mx, scales.view(e8m0) if e8m0 else scales))
    return (q, kvd, qo, kvp, dict(config, kv_format="mxfp4")), deq, kvd["bf16"].float()


def rel(got, ref):
    den = ref.norm().item()
    e = (got.float() - ref).norm().item()
    return e / den if den > 0 else e


def bound(spec):
    """The relative error a spec must keep: 2e-2, or 5e-2 with fp8 Q and P."""
    return 5e-2 if "_qp8" in spec else 2e-2


def use_spec(name):
    """custom_kernel's mxfp4 spec from now on (spec_for's choice reset)."""
    mla_torch.use_specs("mxfp4", [name])


def extreme_scales(data):
    """Sets some rows' block scales to 0 and 1 (values 2^-127 and 2^-126
    times the codes: bf16 subnormals, outside the kernels' fast decode,
    which takes 2 .. 252) in place; returns the dequantised cache anew."""
    mx, scales = data[1]["mxfp4"]
    s = scales.view(torch.uint8)
    rows = mx.shape[0]
    s[0:rows:3, :QK // 32] = 0
    s[1:rows:5, :QK // 32] = 1
    s[2:rows:7, 5] = 2
    return dequantize_mxfp4(mx, s, rows)


def check(lengths, seed, spec=None, extreme=False, rising=False):
    """(kernel error, format error, NaN seen) over the call modes."""
    if spec:
        use_spec(spec)
    data, deq, bf16 = make_inputs(lengths, seed, rising)
    if extreme:
        deq = extreme_scales(data)
    ref, ref_bf16 = B.reference(data, deq), B.reference(data, bf16)
    err, nan = 0.0, False
    out = None
    for d in (data, data, B.fresh_copy(data)):
        out, e, n = B.checked_call(d, ref)
        err, nan = max(err, e), nan or n
    fmt_err = rel(out, ref_bf16)
    # Captured in a CUDA graph through the custom op, new q, replayed.
    q, kvd, qo, kvp, config = data
    mx, scales = kvd["mxfp4"]
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        captured = mla_torch.decode(q, mx, None, qo, kvp, config["batch_size"],
                                    config["kv_seq_len"], "mxfp4", kv_scales=scales)
    q.copy_(torch.randn(q.shape, device="cuda").to(q.dtype))
    captured.fill_(float("nan"))
    g.replay()
    torch.cuda.synchronize()
    ref = B.reference(data, deq)
    err, nan = max(err, rel(captured, ref)), nan or bool(torch.isnan(captured).any())
    del g
    return err, fmt_err, nan


def refusals(seed):
    """Bad scale tensors: an error naming kv_scales, nothing launched."""
    data, _, _ = make_inputs([64, 64], seed)
    q, kvd, qo, kvp, config = data
    mx, scales = kvd["mxfp4"]
    bad = {"missing": None, "too few columns": scales[:, :16],
           "float32": scales.view(torch.uint8).float(), "1-D": scales.reshape(-1)}
    ok = 0
    for name, s in bad.items():
        try:
            mla_torch.custom_kernel((q, dict(kvd, mxfp4=(mx, s)), qo, kvp, config))
            print(f"refusal {name}: ACCEPTED")
        except (ValueError, TypeError) as e:
            good = "kv_scales" in str(e)
            ok += good
            print(f"refusal {name}: {'ok' if good else 'WRONG MESSAGE'} ({e})")
    return ok == len(bad)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--variants", default="", help="more mxfp4 specs to check and time")
    ap.add_argument("--json")
    ap.add_argument("--memcheck-case", action="store_true")
    args = ap.parse_args()
    seed = int(time.time())
    print(f"device {torch.cuda.get_device_name()}, seed base {seed}")
    if args.memcheck_case:  # a ragged batch, with ordinary and extreme scales
        bad = 0
        spec = args.variants.split(",")[0] if args.variants else None
        for extreme in (False, True):
            err, _, nan = check([3, 70, 0, 129], seed, spec, extreme=extreme)
            print(f"memcheck case{' (extreme scales)' if extreme else ''}: rel err "
                  f"{err:.3e}{' NaN' if nan else ''}")
            bad += err > bound(spec or mla_torch.spec_for("mxfp4").name) or nan
        sys.exit(1 if bad else 0)
    chosen = mla_torch.spec_for("mxfp4").name
    specs = [chosen] + [v for v in args.variants.split(",") if v and v != chosen]
    results = {"date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(),
               "specs": specs, "correctness": [], "timing": []}
    failed = 0
    cases = [(f"bs{bs}/kv{kv}", [kv] * bs) for bs, kv in B.TASK_SHAPES]
    cases += [(f"kv{n}", [n]) for n in (1, 17, 1000, 8191)]
    cases += [("ragged", [5, 300, 1024, 0, 77, 640, 8191, 0])]
    cases += [("extreme scales", [1000, 77, 0, 130])]
    cases += [("rising", B.RISING)]
    for spec in specs:
        for i, (name, lengths) in enumerate(cases):
            err, fmt_err, nan = check(lengths, seed + i, spec, name == "extreme scales",
                                      name == "rising")
            ok = err <= (B.rising_bound(bound(spec)) if name == "rising"
                         else bound(spec)) and not nan
            failed += not ok
            results["correctness"].append(dict(spec=spec, case=name, rel_err=err,
                                               format_err=fmt_err, nan=nan, ok=ok))
            print(f"check {spec} {name:12} rel err {err:.3e} (vs bf16 cache {fmt_err:.3e}) "
                  f"{'NaN ' if nan else ''}{'ok' if ok else 'FAIL'}")
    use_spec(specs[0])
    if not refusals(seed):
        failed += 1
    passed = len(results["correctness"]) - sum(not c["ok"] for c in results["correctness"])
    print(f"mxfp4 checks: {passed}/{len(results['correctness'])}")

    flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    cols = {"fp8": []} | {s: [] for s in specs}
    fresh_cols = {"fp8": []} | {s: [] for s in specs}
    print(f"\n{'bs/kv':>10} {'fp8':>8} " + " ".join(f"{s[len('deepseek_r1_decode_'):]:>14}"
                                                 for s in specs) + "   (queued us; fresh)")
    for bs, kv in B.TASK_SHAPES:
        data, _, _ = make_inputs([kv] * bs, seed)
        fp8 = (data[0], data[1], data[2], data[3], dict(data[4], kv_format="fp8"))
        row = dict(bs=bs, kv=kv)
        t = B.time_call(mla_torch.custom_kernel, fp8, args.reps, flush, synced=False)
        tf, _ = B.time_fresh(mla_torch.custom_kernel, fp8, args.reps, flush)
        row["fp8_us"], row["fp8_fresh_us"] = t, tf
        cols["fp8"].append(t)
        fresh_cols["fp8"].append(tf)
        line = f"{bs:>4}/{kv:<5} {t:8.1f} "
        for s in specs:
            use_spec(s)
            ts = B.time_call(mla_torch.custom_kernel, data, args.reps, flush, synced=False)
            tfs, _ = B.time_fresh(mla_torch.custom_kernel, data, args.reps, flush)
            row[s + "_us"], row[s + "_fresh_us"] = ts, tfs
            cols[s].append(ts)
            fresh_cols[s].append(tfs)
            line += f"{ts:8.1f} ({t / ts:4.2f}x) "
        use_spec(specs[0])
        results["timing"].append(row)
        print(line)
    for name in cols:
        results[f"geomean_{name}_us"] = B.geomean(cols[name])
        results[f"geomean_fresh_{name}_us"] = B.geomean(fresh_cols[name])
        print(f"geomean {name}: queued {B.geomean(cols[name]):.1f} us, fresh {B.geomean(fresh_cols[name]):.1f} us"
              + ("" if name == "fp8" else
                 f"; fp8 / mxfp4 at 256x8192 {cols['fp8'][-1] / cols[name][-1]:.2f}x"))
    B.finish(results, args.json, failed)


if __name__ == "__main__":
    main()
