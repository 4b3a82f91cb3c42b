"""Paged KV on an NVIDIA GPU (issue 17): a block table of 64-row pages
(FlashMLA / vLLM: mla_torch.mla_with_kvcache) and a token list (SGLang /
AITER: custom_kernel with config["kv_indices"]), checked and timed beside
contiguous KV, FlashMLA beside.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/paged_h200.py \
        [--flashmla DIR] [--json out.json] [--memcheck-case]

Checks: fresh random inputs (seed printed); the sequences' KV rows scattered
over shuffled pages of a cache with spare pages, every row no token uses NaN
and every table entry no token uses outside the cache, so that a row read
from the wrong place shows; the output poisoned with NaN, host
synchronisations errors; against bench_h200's float32 reference on the
contiguous copy. Ragged lengths with 0 and 1, whole tiles, one and two
query tokens. Malformed tables: entries outside the cache give those rows'
keys and values zeros (checked against the reference with those rows
zeroed), validate=True refuses them naming the entry.

Timing (bench_h200's method: L2 flushed, events around the whole call,
median of --reps, queued) at 64 x 8192 and 256 x 8192, fp8 and bf16, each
through the specs the entries choose (fp8 at these sizes: `_e4m3x2_db` and
its block-table twin where built, else qp16; the rows name them):
contiguous (custom_kernel) against a block table of 64 (shuffled pages),
each as the masked default and with host lengths (mask-free); FlashMLA's
bf16 decode on the same shuffled table. Target: page 64 within 5 % of
contiguous. fp8 MTP 2 (q_seq_len 2): contiguous and page 64 through the
specs custom_kernel / mla_with_kvcache choose. Exits 1 if a check fails.
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_h200 as B  # noqa: E402
import mla_launcher as L  # noqa: E402
import mla_torch  # noqa: E402

QK, V, SM_SCALE = B.QK, B.V, B.SM_SCALE


def paged(data, page, seed):
    """data's KV (its format's entry) in a paged cache: (cache [pages x page,
    1, QK], table [batch, cols] or, for page None, the token list, lengths).
    Pages (rows, page None) shuffled, 3 spare; unused rows NaN, unused
    entries past the cache."""
    q, kvd, qo, kvp, config = data
    fmt = config["kv_format"]
    kv = kvd["fp8"][0] if fmt == "fp8" else kvd["bf16"]
    ptr = kvp.tolist()
    lengths = [ptr[b + 1] - ptr[b] for b in range(len(ptr) - 1)]
    size = 1 if page is None else page
    pages_of = [-(-n // size) for n in lengths]
    total = sum(pages_of) + 3
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(total, generator=g).to(device="cuda", dtype=torch.int64)
    cache = torch.empty((total * size, 1, QK), dtype=kv.dtype, device="cuda")
    if fmt == "fp8":
        cache.view(torch.uint8).fill_(0x7F)  # e4m3fn NaN
    else:
        cache.fill_(float("nan"))
    first = 0
    entries = []
    dst, src = cache.view(torch.uint8), kv.view(torch.uint8)  # index_put on bytes
    for b, n in enumerate(lengths):
        mine = perm[first:first + pages_of[b]]
        first += pages_of[b]
        if n:
            t = torch.arange(n, device="cuda")
            dst[mine[t // size] * size + t % size] = src[ptr[b]:ptr[b + 1]]
        entries.append(mine)
    if page is None:
        index = torch.cat(entries + [torch.full((5,), -7, device="cuda")]).to(torch.int32)
        return cache, index, lengths
    cols = max(pages_of) + 1
    table = torch.full((len(lengths), cols), total + 1000, dtype=torch.int32, device="cuda")
    for b, mine in enumerate(entries):
        table[b, :len(mine)] = mine.to(torch.int32)
    return cache, table, lengths


def table_call(data, cache, table, lengths, host_lengths=False, validate=False, spec=None):
    """mla_with_kvcache on data's q and the paged cache (or the block-table
    spec named `spec`, e.g. a variant's): a time_call-able function."""
    q, kvd, _, _, config = data
    bs, s_q, heads = len(lengths), config["q_seq_len"], config["num_heads"]
    qv = q.view(bs, s_q, heads, QK)
    kc = cache.view(-1, 64, 1, QK)
    seqlens = torch.tensor(lengths, dtype=torch.int32, device="cuda")
    scale = kvd["fp8"][1] if config["kv_format"] == "fp8" else None
    host = lengths if host_lengths else None

    def run(_):
        if spec is not None:
            return mla_torch.spec_named(spec).decode_paged(
                qv, kc, scale, table, seqlens, cache_seqlens_host=host, validate=validate)
        return mla_torch.mla_with_kvcache(qv, kc, table, seqlens, scale,
                                          cache_seqlens_host=host, validate=validate)
    return run


def checked(fn, ref):
    """fn() on NaN-poisoned memory, host syncs as errors: (rel err, NaN)."""
    B.poison()
    torch.cuda.set_sync_debug_mode("error")
    try:
        out = fn(None)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    got = out.reshape(ref.shape).float()
    den = ref.norm().item()
    e = (got - ref).norm().item()
    return (e / den if den > 0 else e), bool(torch.isnan(got).any())


def check_case(lengths, s_q, fmt, layout, seed, spec=None):
    data, deq = B.make_inputs(lengths, fmt, seed, s_q)
    ref = B.reference(data, deq)
    if layout == "table":
        cache, table, lens = paged(data, 64, seed)
        return checked(table_call(data, cache, table, lens, spec=spec), ref)
    cache, index, _ = paged(data, None, seed)
    q, kvd, qo, kvp, config = data
    kvd = dict(kvd)
    kvd[fmt] = (cache, kvd["fp8"][1]) if fmt == "fp8" else cache
    config = dict(config, kv_indices=index)
    return checked(lambda _: mla_torch.custom_kernel((q, kvd, qo, kvp, config)), ref)


def check_malformed(fmt, seed, s_q=1, spec=None):
    """Sequence 0's pages 1 and 2 name no page (-1, past the cache): its
    tokens there read zeros; validate=True refuses the table."""
    lengths = [300, 200, 0, 64]
    data, deq = B.make_inputs(lengths, fmt, seed, s_q)
    cache, table, lens = paged(data, 64, seed)
    pages = cache.shape[0] // 64
    table[0, 1] = -1
    table[0, 2] = pages + 5
    zeroed = deq.clone()
    zeroed[64:192] = 0  # sequence 0 starts at row 0
    err, nan = checked(table_call(data, cache, table, lens, spec=spec),
                       B.reference(data, zeroed))
    refused = ""
    try:
        table_call(data, cache, table, lens, validate=True, spec=spec)(None)
        torch.cuda.synchronize()
    except L.LauncherArgumentError as e:
        refused = str(e)
    return err, nan, refused


def check_graph(fmt, seed):
    """mla_with_kvcache captured once in a CUDA graph, replayed after new
    q, shorter lengths and a page moved in place (what a decode step
    changes), against the float32 reference of the new contents; and
    torch.ops.mla.decode_paged (the custom op) on the same inputs."""
    lengths = [300, 64, 1000, 5]
    data, deq = B.make_inputs(lengths, fmt, seed)
    cache, table, lens = paged(data, 64, seed)
    q, kvd = data[0], data[1]
    bs = len(lengths)
    qv, kc = q.view(bs, 1, 16, QK), cache.view(-1, 64, 1, QK)
    seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    scale = kvd["fp8"][1] if fmt == "fp8" else None
    mla_torch.mla_with_kvcache(qv, kc, table, seqlens, scale)  # plans
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = mla_torch.mla_with_kvcache(qv, kc, table, seqlens, scale)
    # The step's changes: new q, each sequence one token shorter, and
    # sequence 2's first page copied to a spare page and the table pointed
    # there.
    q.copy_(torch.randn(q.shape, generator=torch.Generator(device="cuda").manual_seed(seed + 1),
                        device="cuda").to(q.dtype))
    short = [max(n - 1, 0) for n in lengths]
    seqlens.copy_(torch.tensor(short, dtype=torch.int32, device="cuda"))
    spare = cache.shape[0] // 64 - 1
    while spare in table.flatten().tolist():
        spare -= 1
    cv = cache.view(-1, 64, 1, QK).view(torch.uint8)
    cv[spare] = cv[int(table[2, 0])]
    table[2, 0] = spare
    B.poison()
    g.replay()
    torch.cuda.synchronize()
    ptr = data[3].tolist()
    ref = torch.zeros((bs, 16, V), dtype=torch.float32, device="cuda")
    for b, n in enumerate(short):
        if n:
            k = deq[ptr[b]:ptr[b] + n, 0]
            ref[b] = torch.softmax((q[b].float() @ k.T) * SM_SCALE, dim=-1) @ k[:, :V]
    got = out.reshape(ref.shape).float()
    err = ((got - ref).norm() / ref.norm()).item()
    spec = mla_torch.spec_for(fmt, None, 1, 16, paging=64).name
    op = torch.ops.mla.decode_paged(qv, kc, scale, table, seqlens, spec).reshape(ref.shape)
    torch.cuda.synchronize()
    err_op = ((op.float() - ref).norm() / ref.norm()).item()
    return err, err_op, bool(torch.isnan(got).any())


def flashmla_fn(fm, data, cache, table, lengths):
    q, _, _, _, config = data
    bs, heads = len(lengths), config["num_heads"]
    qv = q.view(bs, 1, heads, QK)
    kc = cache.view(-1, 64, 1, QK)
    sl = torch.tensor(lengths, dtype=torch.int32, device="cuda")
    meta, _ = fm.get_mla_metadata()

    def run(_):
        return fm.flash_mla_with_kvcache(qv, kc, table, sl, V, meta, None,
                                         softmax_scale=SM_SCALE, causal=False)
    return run


# Block tables in both formats; token lists (SGLang / AITER's fp8 path) in
# fp8, the sm_90 spec compiled for them (deepseek_r1_decode_fp8_qp16_kvindices).
LAYOUTS = (("table", "fp8"), ("table", "bf16"), ("indices", "fp8"))
# The fp8 one-token block-table spec compiled with --page-entries-ahead
# (bench/spec_variants.sh: each tile's page entry loaded one tile before
# its bytes, the sm_90a default from b9401f3 to the nineteenth session:
# faster on the H100, slower on the H200), checked and timed beside the
# default where built.
AHEAD = "deepseek_r1_decode_fp8_qp16_pgahead_sm90a_paged64"
# The block-table twin of the two-term double-buffered e4m3 spec
# (bench/spec_variants.sh), which mla_with_kvcache takes for fp8 calls of
# 16K KV tokens or more: checked on the short cases too, named, where built.
DB = "deepseek_r1_decode_fp8_e4m3x2_db_sm90a_paged64"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flashmla", help="folder with FlashMLA's built flash_mla module")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("--memcheck-case", action="store_true",
                    help="one small ragged case per layout and the malformed table, then exit")
    args = ap.parse_args()
    seed = int(time.time())
    print(f"device {torch.cuda.get_device_name()}, seed base {seed}")
    results = {"date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(),
               "seed": seed, "checks": [], "timing": []}
    failed = 0
    ragged = [0, 1, 63, 64, 65, 1000, 8191]
    built = os.environ.get("MLA_ARTIFACTS", "artifacts")
    mtp_paged = os.path.exists(os.path.join(built, "deepseek_r1_decode_fp8_qp16_mtp2_paged64.json"))
    ahead = os.path.exists(os.path.join(built, AHEAD + ".json"))
    variants = [v for v in (AHEAD, DB) if os.path.exists(os.path.join(built, v + ".json"))]
    if args.memcheck_case:
        cases = [(l, 1, f, [0, 1, 70, 129]) for l, f in LAYOUTS]
        cases += [("table", 2, "fp8", [0, 1, 70, 129])] if mtp_paged else []
        cases += [("table", 1, "fp8", [0, 1, 70, 129], v) for v in variants]
    else:
        cases = [(l, s_q, f, lens) for l, f in LAYOUTS
                 for s_q, lens in ((1, ragged), (1, [1024] * 4), (1, [8192] * 64))]
        cases += [("table", 2, "fp8", lens) for lens in (ragged, [8192] * 8)] if mtp_paged \
            else []
        # Whole tiles, one-row and one-tile-plus-one sequences (the page
        # entry loaded a tile ahead stops at each sequence's last tile).
        whole = [65, 128, 191, 8192, 0, 127]
        cases += [("table", s_q, "fp8", lens) for s_q, lens in
                  ((1, whole), (2, [65, 128, 191, 129, 0, 1]))
                  if s_q == 1 or mtp_paged]
        cases += [("table", 1, "fp8", lens, v) for v in variants for lens in (ragged, whole)]
    for i, (layout, s_q, fmt, lens, *variant) in enumerate(cases):
        spec = variant[0] if variant else None
        err, nan = check_case(lens, s_q, fmt, layout, seed + i, spec)
        ok = err <= 2e-2 and not nan
        failed += not ok
        name = f"{layout} {fmt} q_seq_len {s_q} " + (
            "ragged" if lens in (ragged, [0, 1, 70, 129]) else f"{len(lens)}x{lens[0]}")
        if layout == "table" and s_q == 2 and not spec:
            name += " " + mla_torch.spec_for(fmt, None, 2, 16, 64).name
        if spec:
            name += " " + spec
        print(f"  {name:40s} rel err {err:.3e}{' NaN' if nan else ''} {'ok' if ok else 'FAILED'}")
        results["checks"].append(dict(name=name, seed=seed + i, err=err, nan=nan, ok=ok))
    for fmt, s_q, spec in ([("fp8", 1, None), ("bf16", 1, None)] +
                           ([("fp8", 2, None)] if mtp_paged else []) +
                           [("fp8", 1, v) for v in variants]):
        err, nan, refused = check_malformed(fmt, seed, s_q, spec)
        ok = err <= 2e-2 and not nan and "block_table[0][1] is -1" in refused
        failed += not ok
        name = f"malformed table {fmt}" + (f" q_seq_len {s_q}" if s_q > 1 else "") + (
            f" {spec}" if spec else "")
        print(f"  {name}: rel err {err:.3e} (bad pages as zero rows), "
              f"validate: {refused or 'NOT refused'} {'ok' if ok else 'FAILED'}")
        results["checks"].append(dict(name=name, err=err, nan=nan, refused=refused, ok=ok))
    for fmt in ("fp8", "bf16"):
        err, err_op, nan = check_graph(fmt, seed)
        ok = err <= 2e-2 and err_op <= 2e-2 and not nan
        failed += not ok
        print(f"  CUDA graph {fmt}: replayed after new q, shorter lengths, a moved page: rel err "
              f"{err:.3e}; custom op {err_op:.3e} {'ok' if ok else 'FAILED'}")
        results["checks"].append(dict(name=f"graph {fmt}", err=err, err_op=err_op, nan=nan,
                                      ok=ok))
    n = len(results["checks"])
    print(f"{n - failed}/{n} paged checks ok")
    if args.memcheck_case:
        sys.exit(1 if failed else 0)

    fm = B.flashmla_module(args.flashmla)
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    for bs, kv in ((64, 8192), (256, 8192)):
        for fmt in ("fp8", "bf16"):
            data, _ = B.make_inputs([kv] * bs, fmt, seed)
            cache, table, lens = paged(data, 64, seed)
            row = dict(bs=bs, kv=kv, fmt=fmt,
                       spec=mla_torch.spec_for(fmt, None, kv_tokens=bs * kv).name,
                       paged_spec=mla_torch.spec_for(fmt, None, 1, 16, 64,
                                                     kv_tokens=bs * kv).name)
            row["contiguous_us"] = B.time_call(mla_torch.custom_kernel, data, args.reps, flush,
                                               synced=False)
            row["paged64_us"] = B.time_call(table_call(data, cache, table, lens), None,
                                            args.reps, flush, synced=False)
            data[4]["kv_indptr_host"] = data[3].tolist()
            row["contiguous_mask_free_us"] = B.time_call(mla_torch.custom_kernel, data, args.reps,
                                                         flush, synced=False)
            row["paged64_mask_free_us"] = B.time_call(
                table_call(data, cache, table, lens, host_lengths=True), None, args.reps, flush,
                synced=False)
            if ahead and fmt == "fp8":
                row["paged64_ahead_us"] = B.time_call(
                    table_call(data, cache, table, lens, spec=AHEAD), None, args.reps,
                    flush, synced=False)
                row["paged64_ahead_mask_free_us"] = B.time_call(
                    table_call(data, cache, table, lens, host_lengths=True, spec=AHEAD),
                    None, args.reps, flush, synced=False)
                row["ratio_ahead"] = row["paged64_ahead_us"] / row["contiguous_us"]
                row["ratio_ahead_mask_free"] = (row["paged64_ahead_mask_free_us"] /
                                                     row["contiguous_mask_free_us"])
            if fm is not None and fmt == "bf16":
                row["flashmla_paged64_us"] = B.time_call(flashmla_fn(fm, data, cache, table, lens),
                                                         None, args.reps, flush, synced=False)
            row["ratio"] = row["paged64_us"] / row["contiguous_us"]
            row["ratio_mask_free"] = row["paged64_mask_free_us"] / row["contiguous_mask_free_us"]
            results["timing"].append(row)
            fl = (f", FlashMLA paged 64 {row['flashmla_paged64_us']:.1f} us"
                  if "flashmla_paged64_us" in row else "")
            print(f"{bs}x{kv} {fmt}: contiguous {row['contiguous_us']:.1f} us ({row['spec']}), "
                  f"paged 64 {row['paged64_us']:.1f} us ({row['paged_spec']}, "
                  f"{row['ratio']:.3f}x); mask-free "
                  f"{row['contiguous_mask_free_us']:.1f} / {row['paged64_mask_free_us']:.1f} us "
                  f"({row['ratio_mask_free']:.3f}x){fl} (target <= 1.05)")
            if "ratio_ahead" in row:
                print(f"{bs}x{kv} fp8 {AHEAD}: paged 64 "
                      f"{row['paged64_ahead_us']:.1f} us "
                      f"({row['ratio_ahead']:.3f}x); mask-free "
                      f"{row['paged64_ahead_mask_free_us']:.1f} us "
                      f"({row['ratio_ahead_mask_free']:.3f}x)")
    # fp8 MTP 2 (issue 17): contiguous and paged, each through the spec the
    # entries choose (sm_90a's two warpgroups where compiled).
    for bs, kv in ((64, 8192), (256, 8192)) if mtp_paged else ():
        data, _ = B.make_inputs([kv] * bs, "fp8", seed, 2)
        cache, table, lens = paged(data, 64, seed)
        row = dict(bs=bs, kv=kv, fmt="fp8", q_seq_len=2,
                   spec=mla_torch.spec_for("fp8", None, 2).name,
                   paged_spec=mla_torch.spec_for("fp8", None, 2, 16, 64).name)
        row["contiguous_us"] = B.time_call(mla_torch.custom_kernel, data, args.reps, flush,
                                           synced=False)
        row["paged64_us"] = B.time_call(table_call(data, cache, table, lens), None, args.reps,
                                        flush, synced=False)
        row["ratio"] = row["paged64_us"] / row["contiguous_us"]
        results["mtp2"] = results.get("mtp2", []) + [row]
        print(f"{bs}x{kv} fp8 q_seq_len 2: contiguous {row['contiguous_us']:.1f} us "
              f"({row['spec']}), paged 64 {row['paged64_us']:.1f} us ({row['paged_spec']}, "
              f"{row['ratio']:.3f}x)")
    worst = max(max(r["ratio"], r["ratio_mask_free"]) for r in results["timing"])
    print(f"paged 64 / contiguous, worst: {worst:.3f} (target <= 1.05)")
    results["worst_ratio"] = worst
    B.finish(results, args.json, failed)


if __name__ == "__main__":
    main()
