"""Checks and times mla-compiler's decode kernels on an NVIDIA GPU.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/bench_h200.py \
        --baseline path/to/seed_triton_nv.py --json bench/results/h200.json

(a) Correctness: the 8 task shapes, kv lengths 1 / 17 / 1000 / 8191, a ragged
    batch and a zero-length sequence, fp8 and bf16 KV; fresh random inputs
    every case, the output poisoned with NaN before the call, compared with a
    float32 torch reference on dequantised KV (relative Frobenius <= 2e-2,
    no NaN).
    Every case runs in three modes: the same inputs twice, fresh copies of
    the inputs (new tensors), and kv_indptr updated in place to other
    lengths; then once captured in a CUDA graph and replayed on new q
    values. Memory the call's output and workspace come from is NaN-filled
    before each call. Every call of ours runs under
    torch.cuda.set_sync_debug_mode("error"), so a host synchronisation
    in the call path fails the check.
(b) Timing, ours and the baseline module side by side (same custom_kernel
    interface): L2 flushed before each call, CUDA events around the whole
    call, median of --reps, "queued" (the flush, the events and the call
    queued back to back, as triton.testing.do_bench and the anchors' table
    do) in three modes: the same inputs repeated, fresh inputs every call
    (new tensors, made before the flush), and kv_indptr updated in place
    every call (every length + 1, a decode step); "synced" (the host waits
    for the flush first, so the host's own launch work is timed too) on
    repeated inputs; host time of a cold call (CPU clock around a call on
    fresh inputs, no sync); kernel-only time by CUDA-graph replay (same
    flush, events, median) and by the torch profiler; fp8 KV bytes /
    kernel time and the whole-call ratio to the baseline.
Exits 1 if any correctness case fails.
"""
import argparse
import importlib.util
import json
import math
import statistics
import sys
import time

import torch

import mla_torch

HEADS, QK, V = 16, 576, 512
SM_SCALE = 1.0 / math.sqrt(QK)
TASK_SHAPES = [(bs, kv) for bs in (4, 32, 64, 256) for kv in (1024, 8192)]


def make_inputs(lengths, kv_format, seed, s_q=1, heads=HEADS, rising=False):
    """The task's inputs for sequences of `lengths` (s_q query tokens of
    `heads` heads each: bench/serving_h200.py), and the dequantised KV.
    rising: q times 4 and each sequence's KV rows times 1 ... 7 along it, so
    that the scores' running maximum keeps growing by more than the sm_90
    lowerings' slack of 2^8 (docs/Design.md: the row max moves only when
    it must) in tiles all along the sequence, not only in the first. Such
    scores (up to ~100 in log2 units) would turn Q's own rounding into
    percents of error, so q then holds e4m3 values (exact in every Q / P
    type, and under the qp8 specs' power-of-two Q scale): the case tests
    the softmax, not Q's format."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    bs = len(lengths)
    q = torch.randn((bs * s_q, heads, QK), generator=g, device="cuda")
    if rising:
        q = (q * 4).to(torch.float8_e4m3fn).float()
    q = q.to(torch.bfloat16)
    total = max(sum(lengths), 1)
    kv = torch.randn((total, 1, QK), generator=g, device="cuda")
    if rising and sum(lengths) > 0:
        ramp = torch.cat([torch.linspace(1, 7, n, device="cuda") for n in lengths if n])
        kv = kv * ramp.reshape(-1, 1, 1)
    kv = kv.to(torch.bfloat16)
    finfo = torch.finfo(torch.float8_e4m3fn)
    amax = kv.abs().amax().float().clamp(min=1e-12)
    scale = (amax / finfo.max).reshape(1)
    kv_fp8 = (kv.float() / scale).clamp(finfo.min, finfo.max).to(torch.float8_e4m3fn)
    kv_indptr = torch.tensor([0] + list(torch.tensor(lengths).cumsum(0).tolist()),
                             dtype=torch.int32, device="cuda")
    qo_indptr = torch.arange(bs + 1, dtype=torch.int32, device="cuda") * s_q
    config = dict(batch_size=bs, num_heads=heads, num_kv_heads=1, qk_head_dim=QK,
                  kv_lora_rank=V, qk_rope_head_dim=QK - V, v_head_dim=V, q_seq_len=s_q,
                  kv_seq_len=max(lengths), sm_scale=SM_SCALE, kv_format=kv_format)
    data = (q, {"bf16": kv, "fp8": (kv_fp8, scale)}, qo_indptr, kv_indptr, config)
    deq = kv_fp8.float() * scale if kv_format == "fp8" else kv.float()
    return data, deq


def reference(data, deq):
    """float32, with config's sm_scale; causal with several query tokens:
    token i of s_q sees keys [0, L - s_q + i] (a token that sees none
    gives 0)."""
    q, _, _, kv_indptr, config = data
    s_q, heads = config["q_seq_len"], config["num_heads"]
    out = torch.zeros((q.shape[0], heads, V), dtype=torch.float32, device="cuda")
    ptr = kv_indptr.tolist()
    for b in range(len(ptr) - 1):
        k = deq[ptr[b]:ptr[b + 1], 0]  # (L, 576)
        L = k.shape[0]
        for i in range(s_q):
            n = min(L, L - s_q + i + 1)
            if n <= 0:
                continue
            s = (q[b * s_q + i].float() @ k[:n].T) * config.get("sm_scale", SM_SCALE)
            out[b * s_q + i] = torch.softmax(s, dim=-1) @ k[:n, :V]
    return out


def checked_call(data, ref):
    """One custom_kernel call on NaN-poisoned memory, host synchronisations
    made errors: (output, relative Frobenius error against ref, any NaN)."""
    poison()
    torch.cuda.set_sync_debug_mode("error")
    try:
        out = mla_torch.custom_kernel(data)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    got = out.float()
    den = ref.norm().item()
    e = (got - ref).norm().item()
    return out, (e / den if den > 0 else e), bool(torch.isnan(got).any())


# The rising case's lengths (make_inputs(rising=True)) in every check
# script: a long sequence, a middle one, a short one and an empty one.
RISING = [8192, 3000, 77, 0]


def rising_bound(tol):
    """The error bound of the rising case for a spec whose bound is tol:
    the same, except for the fp8 Q / P specs (tol 5e-2), whose e4m3 P
    keeps its 2^-4 rounding where a few probabilities dominate a row, as
    rising scores make them: 6.4-6.8e-2 on the H200, with the exact row
    maximum as with the slack (PerformanceLog, 2026-12-04, fourteenth
    session), so 1e-1 there."""
    return tol if tol <= 2e-2 else max(tol, 1e-1)


def check(kv_format, lengths, seed, rising=False):
    data, deq = make_inputs(lengths, kv_format, seed, rising=rising)
    ref = reference(data, deq)
    err, nan = 0.0, False

    def call(d, ref):
        nonlocal err, nan
        out, e, n = checked_call(d, ref)
        err, nan = max(err, e), nan or n
        out.fill_(float("nan"))

    # Repeated: twice on the same buffers (the second replays the plan);
    # the output is poisoned in between.
    call(data, ref)
    call(data, ref)
    # Fresh: new tensors with the same contents.
    call(fresh_copy(data), ref)
    # In place: kv_indptr rewritten to shorter lengths (a sequence drops its
    # last token), same tensor, same buffers.
    q, kvd, qo, kvp, config = data
    shorter = [max(n - 1, 0) for n in lengths]
    kvp.copy_(torch.tensor([0] + list(torch.tensor(shorter).cumsum(0).tolist()),
                           dtype=torch.int32, device="cuda"))
    call(data, reference(data, deq))
    # CUDA graph: the call captured once on these buffers, then new q
    # values written into them and the graph replayed.
    # Through the custom op, as a model would capture it.
    fmt = config["kv_format"]
    s = mla_torch.spec_for(fmt)
    inputs = mla_torch._as_kernel_inputs(s, q, *kvd[fmt], qo, kvp) if fmt == "fp8" else \
        mla_torch._as_kernel_inputs(s, q, kvd[fmt], None, qo, kvp)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        captured = mla_torch.decode(*inputs, config["batch_size"], config["kv_seq_len"], fmt)
    q.copy_(torch.randn(q.shape, device="cuda").to(q.dtype))
    captured.fill_(float("nan"))
    g.replay()
    torch.cuda.synchronize()
    got, ref = captured.float(), reference(data, deq)
    nan = nan or bool(torch.isnan(got).any())
    den = ref.norm().item()
    err = max(err, (got - ref).norm().item() / den if den > 0 else (got - ref).norm().item())
    del g
    return err, nan


def poison():
    """NaN in the memory torch's caching allocator hands out next, where the
    call's output and workspace will come from."""
    junk = torch.full(((256 << 20) // 4,), float("nan"), device="cuda")
    del junk


def fresh_copy(data):
    """New tensors with the inputs' contents (the KV format's entry only)."""
    q, kvd, qo, kvp, config = data
    fmt = config.get("kv_format", "fp8")
    kvd = dict(kvd)
    kvd[fmt] = (tuple(t.clone() for t in kvd[fmt]) if isinstance(kvd[fmt], (tuple, list))
                else kvd[fmt].clone())
    return (q.clone(), kvd, qo.clone(), kvp.clone(), dict(config))


def geomean(xs):
    """The geometric mean of positive times (the benches' summary)."""
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


class ReadFlush:
    """The flush buffer read instead of zeroed, for time_call's `flush`:
    leaves the L2 holding clean lines (the zeroing flush leaves dirty ones,
    which a call's first reads pay to write back: bench/probe_flush.py)."""

    def __init__(self, buf):
        self.buf = buf

    def zero_(self):
        self.buf.view(torch.float32).sum()


def time_call(fn, data, reps, flush, synced):
    """Whole-call time, us (median): the L2 flush, then CUDA events around
    the call. Queued (synced=False, the anchors' method and
    triton.testing.do_bench's loop): flush, events and call go back to back
    with no host sync, so the host's launch work overlaps the flush; the gap
    left is what a caller that keeps the stream busy sees. Synced: the host
    waits for the flush first, so its launch work is timed too."""
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)]
    for _ in range(3):
        fn(data)
    torch.cuda.synchronize()
    for start, end in events:
        flush.zero_()
        if synced:
            torch.cuda.synchronize()
        start.record()
        fn(data)
        end.record()
        if synced:
            end.synchronize()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) * 1000.0 for s, e in events)


def time_fresh(fn, data, reps, flush):
    """Queued whole-call time, us (median), new input tensors every call
    (copied before the flush, outside the events), and the host time of
    those cold calls (CPU clock around the call, no sync), us (median)."""
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)]
    host = []
    for _ in range(3):
        fn(fresh_copy(data))
    torch.cuda.synchronize()
    for start, end in events:
        d = fresh_copy(data)
        flush.zero_()
        start.record()
        t0 = time.perf_counter()
        fn(d)
        host.append((time.perf_counter() - t0) * 1e6)
        end.record()
        del d
    torch.cuda.synchronize()
    return (statistics.median(s.elapsed_time(e) * 1000.0 for s, e in events),
            statistics.median(host))


def time_inplace(fn, data, reps, flush):
    """Queued whole-call time, us (median), kv_indptr updated in place
    before every call (outside the events): every length + 1, as a decode
    step, from kv_seq_len - reps - 3 up to kv_seq_len (the KV buffer's
    rows)."""
    q, kvd, qo, kvp, config = data
    bs, kv = config["batch_size"], config["kv_seq_len"]
    steps = reps + 3
    start_len = max(kv - steps, 0)
    ptrs = [torch.arange(bs + 1, dtype=torch.int32, device="cuda") * min(start_len + i + 1, kv)
            for i in range(steps)]
    saved = kvp.clone()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)]
    for i in range(3):
        kvp.copy_(ptrs[i])
        fn(data)
    torch.cuda.synchronize()
    for i, (start, end) in enumerate(events):
        kvp.copy_(ptrs[3 + i])
        flush.zero_()
        start.record()
        fn(data)
        end.record()
    torch.cuda.synchronize()
    kvp.copy_(saved)
    return statistics.median(s.elapsed_time(e) * 1000.0 for s, e in events)


def graph_time(fn, data, reps, flush):
    """Kernel-only time: the call captured once in a CUDA graph, replayed
    (L2 flushed before each replay, events around it, median), us. None if
    the call cannot be captured."""
    try:
        fn(data)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn(data)
    except Exception as e:  # e.g. a host sync inside the call
        print(f"  (graph capture failed: {e})")
        return None
    return time_call(lambda _: graph.replay(), None, reps, flush, synced=True)


def kernel_time(fn, data, calls=10):
    """Device time of the kernels one call launches (torch profiler), us."""
    from torch.profiler import ProfilerActivity, profile
    fn(data)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn(data)
        torch.cuda.synchronize()
    per = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            per[e.name] = per.get(e.name, 0.0) + e.device_time / calls
    return per


def bandwidth(flush, reps=20):
    """The device's memory bandwidth as plain torch kernels reach it, TB/s
    (time_call, synced: 1 GiB buffers, far above the L2): a
    device-to-device copy counted as bytes read + written, and a read-only
    pass (a sum over the buffer as float32), the roofline of a kernel that
    mostly reads."""
    n = 1 << 30
    a = torch.rand(n // 4, device="cuda")
    b = torch.empty_like(a)
    copy = 2 * n / time_call(lambda _: b.copy_(a), None, reps, flush, synced=True) / 1e6
    read = n / time_call(lambda _: a.sum(), None, reps, flush, synced=True) / 1e6
    return copy, read


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", help="module with custom_kernel(data) to time beside ours")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--json", help="write results here")
    ap.add_argument("--skip-timing", action="store_true")
    ap.add_argument("--formats", default="fp8,bf16", help="KV formats to check")
    ap.add_argument("--tol", type=float, default=2e-2,
                    help="relative Frobenius error bound (an opt-in quantising spec may need more)")
    ap.add_argument("--memcheck-case", action="store_true",
                    help="run one small ragged fp8 case and exit (for compute-sanitizer)")
    args = ap.parse_args()
    seed = int(time.time())
    if args.memcheck_case:
        err, nan = check("fp8", [3, 70, 0, 129], seed)
        print(f"memcheck case: rel err {err:.3e}{' NaN' if nan else ''}")
        sys.exit(0 if err <= args.tol and not nan else 1)
    print(f"device {torch.cuda.get_device_name()}, seed base {seed}")

    cases = [(f"bs{bs}/kv{kv}", [kv] * bs) for bs, kv in TASK_SHAPES]
    cases += [(f"kv{n}", [n]) for n in (1, 17, 1000, 8191)]
    cases += [("ragged", [5, 300, 1024, 77, 640, 8191]), ("zero-length", [0, 100, 64, 0])]
    # Scores whose row maxima keep rising along each sequence (make_inputs).
    cases += [("rising", RISING)]
    results = {"date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(),
               "correctness": [], "timing": []}
    failed = 0
    results["specs"] = {f: mla_torch.spec_for(f).name for f in args.formats.split(",")}
    print("specs", results["specs"])
    for fmt in args.formats.split(","):
        for i, (name, lengths) in enumerate(cases):
            rising = name == "rising"
            err, nan = check(fmt, lengths, seed + i, rising=rising)
            ok = err <= (rising_bound(args.tol) if rising else args.tol) and not nan
            failed += not ok
            results["correctness"].append(dict(kv=fmt, case=name, rel_err=err, nan=nan, ok=ok))
            print(f"check {fmt:4} {name:12} rel err {err:.3e} {'NaN ' if nan else ''}{'ok' if ok else 'FAIL'}")

    if not args.skip_timing:
        baseline = None
        if args.baseline:
            spec = importlib.util.spec_from_file_location("baseline", args.baseline)
            baseline = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(baseline)
        flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
        copy, read = bandwidth(flush)
        results["copy_tb_s"], results["read_tb_s"] = copy, read
        print(f"\nmemory bandwidth: copy {copy:.2f} TB/s (read + write), read-only {read:.2f} TB/s")
        print(f"\n{'bs/kv':>10} {'fresh':>7} {'inplace':>7} {'queued':>7} {'synced':>7} {'host':>6}"
              f" {'graph':>7} {'kernels':>7} {'TB/s':>5} {'splits':>6}"
              f" {'b.fresh':>8} {'b.inpl':>7} {'b.queued':>8} {'b.graph':>8} {'ratio f':>7} spec")
        ours_all, base_all, oq_all, bq_all = [], [], [], []
        of_all, oi_all, bf_all, bi_all = [], [], [], []
        for bs, kv in TASK_SHAPES:
            data, _ = make_inputs([kv] * bs, "fp8", seed)
            t = time_call(mla_torch.custom_kernel, data, args.reps, flush, synced=True)
            tq = time_call(mla_torch.custom_kernel, data, args.reps, flush, synced=False)
            tf, host = time_fresh(mla_torch.custom_kernel, data, args.reps, flush)
            ti = time_inplace(mla_torch.custom_kernel, data, args.reps, flush)
            oq_all.append(tq)
            of_all.append(tf)
            oi_all.append(ti)
            # The launcher's choice, from the plan the calls above cached.
            spec = mla_torch.spec_for("fp8", kv_tokens=bs * kv)
            splits = spec.plan(bs, kv).splits
            row = dict(bs=bs, kv=kv, ours_us=t, ours_queued_us=tq, ours_fresh_us=tf,
                       ours_inplace_us=ti, ours_host_cold_us=host, splits=splits,
                       spec=spec.name,
                       fp8_tb_s=bs * kv * QK / (t * 1e-6) / 1e12)
            row["ours_graph_us"] = graph_time(mla_torch.custom_kernel, data, args.reps, flush)
            kt = kernel_time(mla_torch.custom_kernel, data)
            row["ours_kernels_us"] = {n[-24:]: round(v, 1) for n, v in kt.items()}
            row["ours_kernel_total_us"] = sum(kt.values())
            # fp8 KV bytes over the kernel-only time (graph replay if it worked).
            row["fp8_tb_s"] = bs * kv * QK / ((row["ours_graph_us"] or row["ours_kernel_total_us"]) * 1e-6) / 1e12
            if baseline:
                row["baseline_us"] = time_call(baseline.custom_kernel, data, args.reps, flush,
                                               synced=True)
                row["baseline_queued_us"] = time_call(baseline.custom_kernel, data, args.reps,
                                                      flush, synced=False)
                row["baseline_graph_us"] = graph_time(baseline.custom_kernel, data, args.reps, flush)
                row["baseline_fresh_us"], _ = time_fresh(baseline.custom_kernel, data, args.reps,
                                                         flush)
                row["baseline_inplace_us"] = time_inplace(baseline.custom_kernel, data, args.reps,
                                                          flush)
                base_all.append(row["baseline_us"])
                bq_all.append(row["baseline_queued_us"])
                bf_all.append(row["baseline_fresh_us"])
                bi_all.append(row["baseline_inplace_us"])
            ours_all.append(t)
            results["timing"].append(row)
            bq, bf = row.get("baseline_queued_us"), row.get("baseline_fresh_us")
            fmt = lambda v, w: f"{v:{w}.1f}" if v else " " * (w - 1) + "-"
            print(f"{bs:>4}/{kv:<5} {tf:7.1f} {ti:7.1f} {tq:7.1f} {t:7.1f} {host:6.1f} "
                  f"{fmt(row['ours_graph_us'], 7)} "
                  f"{row['ours_kernel_total_us']:7.1f} {row['fp8_tb_s']:5.2f} {splits:6d} "
                  f"{fmt(bf, 8)} {fmt(row.get('baseline_inplace_us'), 7)} {fmt(bq, 8)} "
                  f"{fmt(row.get('baseline_graph_us'), 8)} "
                  f"{(f'{tf / bf:7.2f}' if bf else '      -')} {spec.name}")
        results["geomean_us"] = geomean(ours_all)
        results["geomean_queued_us"] = geomean(oq_all)
        results["geomean_fresh_us"] = geomean(of_all)
        results["geomean_inplace_us"] = geomean(oi_all)
        line = (f"geomean ours fresh {geomean(of_all):.1f} us, in place {geomean(oi_all):.1f} us, "
                f"repeated queued {geomean(oq_all):.1f} us, synced {geomean(ours_all):.1f} us")
        if base_all:
            results["baseline_geomean_us"] = geomean(base_all)
            results["baseline_geomean_queued_us"] = geomean(bq_all)
            results["baseline_geomean_fresh_us"] = geomean(bf_all)
            results["baseline_geomean_inplace_us"] = geomean(bi_all)
            line += (f"; baseline fresh {geomean(bf_all):.1f} us, in place {geomean(bi_all):.1f} us, "
                     f"repeated queued {geomean(bq_all):.1f} us, synced {geomean(base_all):.1f} us")
        print(line)
    print(f"{failed} failed, {len(results['correctness']) - failed} passed")
    finish(results, args.json, failed)


def flashmla_module(folder):
    """FlashMLA's flash_mla module built in `folder` (None without one).
    Exits naming the folder where the sources are there but the extension
    was not built (artifacts/ carries the sources; the built module does
    not outlive the device machine it was built on)."""
    if not folder:
        return None
    sys.path.insert(0, folder)
    try:
        import flash_mla
    except ImportError as e:
        sys.exit(f"--flashmla {folder}: FlashMLA is not built there ({e}); build it with "
                 f"`cd {folder} && python3 setup_dense.py build_ext --inplace` (about 100 s) "
                 "or run bench/run_h200.sh, which does")
    return flash_mla


def finish(results, path, failed):
    """Writes `results` to `path` (if any) and exits 1 if a check failed."""
    if path:
        with open(path, "w") as f:
            json.dump(results, f, indent=1)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
