"""Where a queued call's time goes, per task shape (docs/PerformanceLog.md,
fifth session): the anchors' queued timing (L2 flush, events, the work,
one sync at the end) of (a) nothing between the events, (b) stage 1's
launch alone, (c) stage 2's launch alone, (d) both launches, (e) the whole
custom_kernel call. Run on the H200:

    MLA_ARTIFACTS=artifacts PYTHONPATH=python:bench python3 bench/probe_breakdown.py
"""
import os
import sys
import torch
sys.path[:0] = ["bench", "python"]
import bench_h200 as B
import mla_torch as M

SHAPES = [(4, 1024), (4, 8192), (32, 1024), (32, 8192), (64, 1024), (64, 8192),
          (256, 1024), (256, 8192)]


def main():
    splits_override = [int(s) for s in sys.argv[1:]]  # optional: splits per shape
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    t = lambda fn: B.time_call(lambda _: fn(), None, 50, flush, synced=False)
    print("empty (events only) %.1f us" % t(lambda: None))
    k = M.kernels_for("fp8")
    # Stage 1 is the masked kernel unless PROBE_MASK_FREE=1 hands the plan
    # the (equal) lengths as a host copy would.
    mask_free = bool(os.environ.get("PROBE_MASK_FREE"))
    st = M.current_stream(0)
    print(f"{'bs/kv':>10} {'splits':>6} {'stage1':>7} {'stage2':>7} {'both':>7} {'call':>7}")
    for i, (bs, kv) in enumerate(SHAPES):
        data, _ = B.make_inputs([kv] * bs, "fp8", 1 + i)
        q, kvd, qo, kvp, cfg = data
        kv8, scale = kvd["fp8"]
        sp = splits_override[i] if splits_override else None
        args = [q, kv8.reshape(kv8.shape[0], -1).view(torch.uint8), scale.float(), qo, kvp]
        launches, out, splits, _, bind = k.plan(args, bs, kv, splits=sp, device=q.device,
                                                kv_lens_host=[kv] * bs if mask_free else None)
        bind([a.data_ptr() for a in args])
        s1 = t(lambda: k.launch_all(launches[:1], st))
        s2 = t(lambda: k.launch_all(launches[1:], st)) if len(launches) > 1 else 0.0
        both = t(lambda: k.launch_all(launches, st))
        call = t(lambda: M.custom_kernel(data)) if not splits_override else float("nan")
        print(f"{bs:>4}/{kv:<5} {splits:>6} {s1:7.1f} {s2:7.1f} {both:7.1f} {call:7.1f}")


if __name__ == "__main__":
    main()
