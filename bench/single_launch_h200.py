"""The single launch for small batches (issue 19 item 2,
MLA_DECODE_ONE_LAUNCH against MLA_DECODE_TWO_LAUNCHES; the default only
for specs that say one_launch = true): stage 1 combining its splits in one thread-block
cluster against stage 1 + stage 2, checked and timed in one process on an
NVIDIA H200.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/single_launch_h200.py \
        [--specs fp8:NAME,bf16:NAME,...] [--json out.json] [--reps 30] [--memcheck-case]

Checks (bench_h200's `check`: fresh random inputs, seed printed, outputs
poisoned with NaN, float32 reference on the dequantised KV, relative
Frobenius error <= 2e-2 and no NaN; same buffers twice, fresh copies,
kv_indptr rewritten in place, a CUDA-graph replay) with the single launch
asked for (the launcher takes it wherever it applies): the task's 8
shapes, kv 1 / 17 / 1000 / 8191 and ragged batches with zero lengths; then
forced split counts 2, 3, 5, 8, 13 and 16 on a ragged batch (cluster sizes
that do not divide the combine's 8 row pairs), each with one launch and
with two; and with no flag, the task shapes' default plans: the forced
one-launch plan where the spec's one_launch says so, two launches where
not (the launcher's rule).

Timing: bench_h200's (L2 flushed, CUDA events around the whole call,
queued, median of --reps) for each task shape with MLA_DECODE_ONE_LAUNCH
and without, interleaved per shape; where the cost
model takes more than 16 splits (two launches), also 16 splits in one
launch. The plan of each shape is printed: splits, and cluster_splits where
stage 1 combines.
Exits 1 if a check fails.
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_h200 as B  # noqa: E402
import mla_torch  # noqa: E402
from wgmma_h200 import use_spec  # noqa: E402

SPECS = "fp8:deepseek_r1_decode_fp8_qp16_sm90a,bf16:deepseek_r1_decode_bf16_sm90a"
EDGE = [[1], [17], [1000], [8191], [0, 5, 64, 65, 1000, 0, 130], [0, 0, 0]]
FORCED = [2, 3, 5, 8, 13, 16]
RAGGED = [3, 70, 0, 129, 1000, 4097]


def plan_of(fmt, lengths):
    """The plan custom_kernel made for a batch of `lengths` (no host lengths)."""
    return mla_torch.spec_for(fmt).plan(len(lengths), max(lengths))


def forced_check(fmt, lengths, splits, seed, two):
    """torch.ops.mla.decode with num_splits = `splits` (no host lengths: the
    masked stage 1), one launch or (two) two: relative error, NaN, plan."""
    data, deq = B.make_inputs(lengths, fmt, seed)
    ref = B.reference(data, deq)
    q, kvd, qo, kvp, config = data
    spec = mla_torch.spec_for(fmt)
    kv, scale = kvd[fmt] if fmt == "fp8" else (kvd[fmt], None)
    inputs = mla_torch._as_kernel_inputs(spec, q, kv, scale, qo, kvp)
    mla_torch.set_one_launch(not two)
    try:
        B.poison()
        out = torch.ops.mla.decode(*inputs, len(lengths), max(lengths), spec.name, None,
                                   splits, False, None)
        torch.cuda.synchronize()
        plan = spec.plan(len(lengths), max(lengths), splits, None)
    finally:
        mla_torch.set_one_launch(None)
    got = out.float()
    den = ref.norm().item()
    e = (got - ref).norm().item()
    return (e / den if den > 0 else e), bool(torch.isnan(got).any()), plan


def forced_fn(fmt, data, splits):
    """A call like custom_kernel's on `data` with num_splits = `splits`."""
    q, kvd, qo, kvp, config = data
    spec = mla_torch.spec_for(fmt)
    kv, scale = kvd[fmt] if fmt == "fp8" else (kvd[fmt], None)
    inputs = mla_torch._as_kernel_inputs(spec, q, kv, scale, qo, kvp)
    bs, mx = config["batch_size"], config["kv_seq_len"]
    return lambda _d: spec.decode(*inputs, bs, mx, None, splits)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--specs", default=SPECS, help="fmt:spec pairs, comma-separated")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--json", help="write results here")
    ap.add_argument("--tol", type=float, default=2e-2)
    ap.add_argument("--memcheck-case", action="store_true",
                    help="one small ragged case per spec, single launch, then exit")
    ap.add_argument("--sweep", action="store_true",
                    help="time forced split counts 2..16, one launch and two, on the small "
                         "task shapes, then exit")
    ap.add_argument("--profile-case", action="store_true",
                    help="bs 4 / kv 1024 with 16 splits, one launch then two (for ncu)")
    args = ap.parse_args()
    specs = [tuple(p.split(":")) for p in args.specs.split(",")]
    seed = int(time.time())
    print(f"device {torch.cuda.get_device_name()}, seed base {seed}")
    failed = 0
    if args.profile_case:  # bs 4 / kv 1024, 16 splits: one launch, then two
        fmt, name = specs[0]
        use_spec(fmt, name)
        data, _ = B.make_inputs([1024] * 4, fmt, seed)
        for two in (False, True):
            mla_torch.set_one_launch(not two)
            forced_fn(fmt, data, 16)(data)
            torch.cuda.synchronize()
        sys.exit(0)
    if args.sweep:
        flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
        for fmt, name in specs:
            use_spec(fmt, name)
            for bs, kv in ((4, 1024), (32, 1024), (4, 8192)):
                data, _ = B.make_inputs([kv] * bs, fmt, seed)
                for splits in (2, 4, 8, 16):
                    t = {}
                    for two in (False, True, False, True):
                        mla_torch.set_one_launch(not two)
                        t.setdefault(two, []).append(B.time_call(
                            forced_fn(fmt, data, splits), data, args.reps, flush, False))
                    mla_torch.set_one_launch(None)
                    print(f"sweep {name} bs {bs:3} kv {kv:5} splits {splits:2}: one launch "
                          f"{min(t[False]):6.1f} us, two {min(t[True]):6.1f} us")
        sys.exit(0)
    if args.memcheck_case:
        for fmt, name in specs:
            use_spec(fmt, name)
            for splits in (0, 5):
                err, nan, plan = forced_check(fmt, [3, 70, 0, 129], splits, seed, False)
                ok = err <= args.tol and not nan
                failed += not ok
                print(f"memcheck {name} splits {plan.splits} cluster {plan.cluster_splits}: "
                      f"rel err {err:.3e}{' NaN' if nan else ''} {'ok' if ok else 'FAIL'}")
        sys.exit(1 if failed else 0)

    results = {"date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(),
               "seed": seed, "correctness": [], "timing": []}
    cases = [(f"bs{bs}/kv{kv}", [kv] * bs) for bs, kv in B.TASK_SHAPES]
    cases += [("edge" + "-".join(map(str, e)), e) for e in EDGE]
    for fmt, name in specs:
        use_spec(fmt, name)
        mla_torch.set_one_launch(True)  # checked where it applies
        forced = {}  # case: cluster_splits of its forced one-launch plan
        for i, (case, lengths) in enumerate(cases):
            err, nan = B.check(fmt, lengths, seed + i)
            plan = plan_of(fmt, lengths)
            forced[case] = plan.cluster_splits
            ok = err <= args.tol and not nan
            failed += not ok
            results["correctness"].append(dict(spec=name, case=case, rel_err=err, nan=nan,
                                               ok=ok, splits=plan.splits,
                                               cluster_splits=plan.cluster_splits))
            print(f"check {name} {case:24} splits {plan.splits:2} cluster "
                  f"{plan.cluster_splits:2} rel err {err:.3e} {'NaN ' if nan else ''}"
                  f"{'ok' if ok else 'FAIL'}")
        mla_torch.set_one_launch(None)
        # No flag: the launcher applies the spec's one_launch (its manifest
        # key): the plans must be the forced one-launch ones of the checks
        # above where it says true, two launches where it does not.
        default_one = bool(mla_torch.spec_for(fmt).context.spec.desc.one_launch)
        for i, (bs, kv) in enumerate(B.TASK_SHAPES):
            lengths = [kv] * bs
            err, nan = B.check(fmt, lengths, seed + 200 + i)
            got = plan_of(fmt, lengths)
            want = forced[f"bs{bs}/kv{kv}"] if default_one else 0
            ok = err <= args.tol and not nan and got.cluster_splits == want
            failed += not ok
            results["correctness"].append(dict(spec=name, case=f"default bs{bs}/kv{kv}",
                                               spec_one_launch=default_one, rel_err=err,
                                               nan=nan, ok=ok, splits=got.splits,
                                               cluster_splits=got.cluster_splits))
            print(f"check {name} default plan bs{bs}/kv{kv} (spec one_launch "
                  f"{int(default_one)}): splits {got.splits:2} cluster {got.cluster_splits:2} "
                  f"(want {want:2}) rel err {err:.3e} {'NaN ' if nan else ''}"
                  f"{'ok' if ok else 'FAIL'}")
        for j, splits in enumerate(FORCED):
            for two in (False, True):
                err, nan, plan = forced_check(fmt, RAGGED, splits, seed + 100 + j, two)
                ok = err <= args.tol and not nan and (plan.cluster_splits == 0) == two
                failed += not ok
                results["correctness"].append(dict(spec=name, case=f"ragged splits {splits}",
                                                   two_launches=two, rel_err=err, nan=nan,
                                                   ok=ok, cluster_splits=plan.cluster_splits))
                print(f"check {name} ragged splits {splits:2} {'two' if two else 'one'} "
                      f"launch(es), cluster {plan.cluster_splits:2}: rel err {err:.3e} "
                      f"{'NaN ' if nan else ''}{'ok' if ok else 'FAIL'}")

    flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    for fmt, name in specs:
        use_spec(fmt, name)
        one_t, two_t = [], []
        for i, (bs, kv) in enumerate(B.TASK_SHAPES):
            data, _ = B.make_inputs([kv] * bs, fmt, seed + 1000 + i)
            times = {}
            for two in (False, True, False, True):
                mla_torch.set_one_launch(not two)
                t = B.time_call(mla_torch.custom_kernel, data, args.reps, flush, synced=False)
                times.setdefault(two, []).append(t)
            mla_torch.set_one_launch(True)
            mla_torch.custom_kernel(data)  # the one-launch plan, for the print
            plan = plan_of(fmt, [kv] * bs)
            mla_torch.set_one_launch(None)
            one, two = min(times[False]), min(times[True])
            if plan.splits > 16:  # what 16 splits in one launch would give
                f16 = forced_fn(fmt, data, 16)
                t16 = B.time_call(f16, data, args.reps, flush, synced=False)
                results["timing"].append(dict(spec=name, bs=bs, kv=kv, splits=16,
                                              cluster_splits=16, forced=True,
                                              one_launch_us=t16))
                print(f"time {name} bs {bs:3} kv {kv:5} forced 16 splits, one launch: "
                      f"{t16:7.1f} us")
            one_t.append(one)
            two_t.append(two)
            results["timing"].append(dict(spec=name, bs=bs, kv=kv, splits=plan.splits,
                                          cluster_splits=plan.cluster_splits,
                                          one_launch_us=one, two_launches_us=two))
            print(f"time {name} bs {bs:3} kv {kv:5} splits {plan.splits:2} cluster "
                  f"{plan.cluster_splits:2}: one launch {one:7.1f} us, two {two:7.1f} us "
                  f"({two / one:.3f}x)")
        print(f"geomean {name}: one launch {B.geomean(one_t):.1f} us, two {B.geomean(two_t):.1f} us")
        results.setdefault("geomean", {})[name] = dict(one_launch_us=B.geomean(one_t),
                                                       two_launches_us=B.geomean(two_t))
    if args.json:
        import json
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print("FAILED" if failed else "all checks ok")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
