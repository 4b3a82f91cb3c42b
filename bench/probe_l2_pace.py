"""The fp8 specs' compute pace at 256 x 8192 without DRAM's bound: each spec's
block-table twin (pages of 64 rows, one page a KV tile) run with every
sequence's page entries pointing into a few distinct pages (--pages, 256 =
9.4 MB: L2-resident), timed without an L2 flush; then the same specs on
distinct shuffled pages (batch x 128 of them, 1.2 GB) with the L2 flushed,
the DRAM-bound time. The H100 and the H200 have the same SMs and clocks, so
the first time predicts a spec's floor on either card; what separates the
specs on the H200 (where the default is not at DRAM's pace) shows on the
H100 too.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/probe_l2_pace.py \
        [--specs a,b,c] [--pages 256] [--reps 30] [--json out.json]

The twins of the e4m3 and two-term specs are built by `make artifacts`
(`<spec>_paged64`). Since the thirtieth session they copy their tiles as
their contiguous forms do, by tensor-map copies (a 64-row tile lies within
one page; docs/Design.md, "Paged tiles"), each box from the row its page
entry gives, which the entry read before each copy adds; before, they
copied by per-thread cp.async, and their times bounded the contiguous
specs' from above (bench/results/h100-2026-12-06-l2pace*).

Checks first: fresh random inputs (seed printed), the first 4 sequences of
the aliased call, its output memory poisoned with NaN first
(bench_h200.poison), against a float32 reference on the dequantised pages
(relative Frobenius error <= 5e-2 for the one-term e4m3 spec, 1e-2 for the
others, no NaN). Timing: bench_h200.time_call (queued, CUDA events around
each call, median of --reps; on the aliased pages the buffer it zeroes
before each call is 1 byte, no flush), each spec in the listed order and
then the reverse. Exits 1 if a check fails.
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_h200 as B  # noqa: E402
import mla_torch  # noqa: E402

HEADS, QK, V, PAGE = B.HEADS, B.QK, B.V, 64
SPECS = ["deepseek_r1_decode_fp8_qp16_sm90a_paged64",
         "deepseek_r1_decode_fp8_qp8_sm90a_paged64",
         "deepseek_r1_decode_fp8_e4m3x2_sm90a_paged64"]


def bound(spec):
    return 5e-2 if "_qp8" in spec else 1e-2


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--specs", default=",".join(SPECS))
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--kv-len", type=int, default=8192)
    ap.add_argument("--pages", type=int, default=256,
                    help="distinct pages the aliased table points into")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    specs = args.specs.split(",")
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"{torch.cuda.get_device_name()}; seed {seed}")
    g = torch.Generator(device="cuda").manual_seed(seed)
    bs, n = args.batch, args.kv_len
    if n % PAGE:
        sys.exit(f"--kv-len must be a multiple of {PAGE}, got {n}")
    per = n // PAGE
    q = torch.randn((bs, 1, HEADS, QK), generator=g, device="cuda").to(torch.bfloat16)
    scale = torch.tensor([0.25], device="cuda", dtype=torch.float32)
    seqlens = torch.full((bs,), n, dtype=torch.int32, device="cuda")
    host = [n] * bs
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    no_flush = torch.empty(1, dtype=torch.uint8, device="cuda")  # time_call zeroes it
    results = {"device": torch.cuda.get_device_name(), "seed": seed, "batch": bs,
               "kv_len": n, "pages": args.pages, "reps": args.reps, "cases": []}
    failed = False

    for case, npages in (("aliased (L2)", args.pages), ("distinct (DRAM)", bs * per)):
        dram = npages >= bs * per
        cache = (torch.randn((npages, PAGE, 1, QK), generator=g, device="cuda") * 2).to(
            torch.float8_e4m3fn)
        if dram:
            table = torch.randperm(npages, generator=g, device="cuda")[:bs * per]
        else:
            table = torch.randint(0, npages, (bs * per,), generator=g, device="cuda")
        table = table.view(bs, per).to(torch.int32)
        fns = {s: (lambda _=None, s=s: mla_torch.spec_named(s).decode_paged(
            q, cache, scale, table, seqlens, cache_seqlens_host=host)) for s in specs}
        if not dram:
            kv = cache.float().view(npages, PAGE, QK) * scale.item()
            for s in specs:
                B.poison()
                out = fns[s]().float().view(bs, HEADS, V)
                torch.cuda.synchronize()
                err = 0.0
                for b in range(min(4, bs)):
                    k = kv[table[b].long()].reshape(n, QK)
                    ref = torch.softmax((q[b, 0].float() @ k.T) * B.SM_SCALE, -1) @ k[:, :V]
                    err = max(err, ((out[b] - ref).norm() / ref.norm()).item())
                nan = bool(torch.isnan(out).any())
                ok = err <= bound(s) and not nan
                failed |= not ok
                print(f"check {s}: max rel err {err:.2e} (bound {bound(s):.0e}), "
                      f"NaN {nan}: {'ok' if ok else 'FAILED'}")
        times = {}
        for order in (specs, specs[::-1]):
            for s in order:
                times.setdefault(s, []).append(B.time_call(
                    fns[s], None, args.reps, flush if dram else no_flush,
                    synced=False))
        for s in specs:
            t = times[s]
            print(f"{case:16s} {s:45s} " + " / ".join(f"{x:7.1f}" for x in t) +
                  f" us, {min(t) / per:.2f} us a tile")
            results["cases"].append({"case": case, "spec": s, "us": t})
        del cache, fns
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
