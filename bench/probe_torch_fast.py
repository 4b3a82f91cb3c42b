"""custom_kernel with and without python/mla_torch_fast.cpp's remembered
calls, in one process: checks, then the task shapes' times.

    MLA_ARTIFACTS=artifacts python3 python/build_torch_fast.py
    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/probe_torch_fast.py

(a) Checks, fp8 and bf16 KV, the task shapes and ragged / zero-length
    batches: the remembered call's output (allocated by the module, the
    caching allocator's memory NaN-filled first) equal bit for bit to the
    Python path's on the same inputs, and the module's lookup a hit; fresh
    input tensors hit too; a call on another stream misses, runs the Python
    path, and is remembered beside the first; a changed config value, a
    changed dtype and a non-contiguous q miss, and so does a call after
    _SPECS was edited directly; use_specs and set_one_launch forget; two
    threads calling it at once get their own outputs, with the module and
    without. Exits 1 if any fails.
(b) Times, the task shapes, fp8 (the default spec): whole-call µs, L2
    flushed, queued, median of --reps (bench_h200's methods): fresh inputs
    every call and repeated inputs, and the host time of a cold call (CPU
    clock around a call on fresh inputs); synced: fresh inputs, the host
    waiting for the flush before the call (its work then in the time);
    with the module and without it (mla_torch._fast set to None),
    alternating A B B A per shape.
"""
import argparse
import json
import statistics
import sys
import time

import torch

sys.path[:0] = ["bench", "python"]
import bench_h200 as B  # noqa: E402
import mla_torch as M  # noqa: E402

failures = []


def expect(name, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {name} {detail}", flush=True)
    if not ok:
        failures.append(name)


def python_path(data):
    fast, M._fast = M._fast, None
    try:
        return M.custom_kernel(data)
    finally:
        M._fast = fast


def checks():
    fast = M._fast
    for fmt in ("fp8", "bf16"):
        for i, lengths in enumerate([[1024] * 4, [8192] * 4, [1024] * 32, [100, 37, 256],
                                     [0, 5, 64, 65, 1000, 0, 130], [0]]):
            data, _ = B.make_inputs(lengths, fmt, 100 + i)
            fast.forget()
            want = python_path(data)
            M.custom_kernel(data)  # the Python path, remembered
            name = f"{fmt} {lengths if len(lengths) < 8 else f'{len(lengths)} x {lengths[0]}'}"
            expect(f"{name}: remembered", fast.size() == 1, f"({fast.size()} calls)")
            for label, d in (("same inputs", data), ("fresh inputs", B.fresh_copy(data))):
                B.poison()
                got = fast.lookup(d)
                expect(f"{name}, {label}: a hit", got is not None)
                if got is not None:
                    torch.cuda.synchronize()
                    expect(f"{name}, {label}: equal to the Python path",
                           torch.equal(got, want) and not got.isnan().any().item())
    data, _ = B.make_inputs([300, 7, 4000], "fp8", 7)
    fast.forget()
    want = python_path(data)
    M.custom_kernel(data)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        expect("another stream: a miss", fast.lookup(data) is None)
        got = M.custom_kernel(data)
        expect("another stream: remembered beside", fast.size() == 2, f"({fast.size()})")
        again = fast.lookup(data)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    expect("another stream: equal", torch.equal(got, want) and again is not None
           and torch.equal(again, want))
    q, kvd, qo, kvp, config = data
    for label, d in (
            ("config sm_scale changed", (q, kvd, qo, kvp, dict(config, sm_scale=0.5))),
            ("config kv_seq_len 4001", (q, kvd, qo, kvp, dict(config, kv_seq_len=4001))),
            ("config validate", (q, kvd, qo, kvp, dict(config, validate=True))),
            ("config kv_indptr_host", (q, kvd, qo, kvp,
                                       dict(config, kv_indptr_host=[0, 300, 307, 4307]))),
            ("kv_indptr int64", (q, kvd, qo, kvp.long(), config)),
            ("q not contiguous", (q.transpose(0, 1).contiguous().transpose(0, 1), kvd, qo, kvp,
                                  config)),
            ("q a list, not a tuple", [q, kvd, qo, kvp, config]),
            ("kv as uint8 codes", (q, dict(kvd, fp8=(kvd["fp8"][0].view(torch.uint8),
                                                     kvd["fp8"][1])), qo, kvp, config))):
        expect(f"{label}: a miss", fast.lookup(d) is None)
    M.custom_kernel(data)
    M._SPECS["fp8"] = list(M._SPECS["fp8"])  # a direct edit: another list
    expect("_SPECS['fp8'] replaced directly: a miss", fast.lookup(data) is None)
    M.custom_kernel(data)
    M._SPECS["fp8"].insert(0, "deepseek_r1_decode_no_such_spec")  # edited in place
    expect("_SPECS['fp8'] edited in place: a miss", fast.lookup(data) is None)
    M.use_specs("fp8")
    expect("use_specs forgets", fast.size() == 0)
    M.custom_kernel(data)
    M.set_one_launch(None)
    expect("set_one_launch forgets", fast.size() == 0)


def time_synced_fresh(fn, data, reps, flush):
    """Whole-call time, us (median), fresh inputs every call, the host
    waiting for the flush before the call: the host's work on a cold call
    is in the time, as for a caller that waits for each call."""
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)]
    for start, end in events:
        d = B.fresh_copy(data)
        flush.zero_()
        torch.cuda.synchronize()
        start.record()
        fn(d)
        end.record()
        end.synchronize()
    return statistics.median(s.elapsed_time(e) * 1000.0 for s, e in events)


def threads_check():
    """Two threads calling custom_kernel on inputs of one shape (one plan,
    one argument struct), with and without the module: every output equal
    to its inputs' single-threaded one."""
    import threading
    fast = M._fast
    datas = [B.make_inputs([1000] * 4, "fp8", 200 + i)[0] for i in range(2)]
    want = [python_path(d) for d in datas]
    for mode in ("on", "off"):
        M._fast = fast if mode == "on" else None
        outs = [[], []]

        def work(i):
            for _ in range(200):
                outs[i].append(M.custom_kernel(datas[i]))
        ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        torch.cuda.synchronize()
        bad = sum(not torch.equal(o, want[i]) for i in range(2) for o in outs[i])
        expect(f"two threads, module {mode}: 400 outputs equal to single-threaded ones",
               bad == 0 and all(len(o) == 200 for o in outs), f"({bad} differ)")
    M._fast = fast


def timing(reps):
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    fast = M._fast
    rows = []
    print(f"\n{'bs/kv':>9} {'fresh on':>9} {'off':>7} {'repeated on':>12} {'off':>7} "
          f"{'host on':>8} {'off':>7} {'synced on':>10} {'off':>7}  (us)")
    for bs, kv in B.TASK_SHAPES:
        data, _ = B.make_inputs([kv] * bs, "fp8", 1)
        r = {"on": [], "off": []}
        for mode in ("on", "off", "off", "on"):
            M._fast = fast if mode == "on" else None
            tf, host = B.time_fresh(M.custom_kernel, data, reps, flush)
            tq = B.time_call(M.custom_kernel, data, reps, flush, synced=False)
            ts = time_synced_fresh(M.custom_kernel, data, reps, flush)
            r[mode].append((tf, tq, host, ts))
        M._fast = fast
        mean = {m: [sum(x[i] for x in r[m]) / 2 for i in range(4)] for m in r}
        rows.append(dict(bs=bs, kv=kv, fresh_on=mean["on"][0], fresh_off=mean["off"][0],
                         repeated_on=mean["on"][1], repeated_off=mean["off"][1],
                         host_on=mean["on"][2], host_off=mean["off"][2],
                         synced_on=mean["on"][3], synced_off=mean["off"][3], runs=r))
        print(f"{bs:>4}/{kv:<4} {mean['on'][0]:9.1f} {mean['off'][0]:7.1f} "
              f"{mean['on'][1]:12.1f} {mean['off'][1]:7.1f} {mean['on'][2]:8.1f} "
              f"{mean['off'][2]:7.1f} {mean['on'][3]:10.1f} {mean['off'][3]:7.1f}", flush=True)

    def geo(key):
        return B.geomean([r[key] for r in rows])
    print("geomean " + ", ".join(f"{k} {geo(k):.1f}" for k in
                                 ("fresh_on", "fresh_off", "repeated_on", "repeated_off",
                                  "host_on", "host_off", "synced_on", "synced_off")))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("--skip-timing", action="store_true")
    args = ap.parse_args()
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    if M._fast is None:
        print("FAIL mla_torch_fast is not loaded (python/build_torch_fast.py builds it)")
        return 1
    checks()
    threads_check()
    rows = [] if failures or args.skip_timing else timing(args.reps)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), failures=failures, rows=rows),
                      f, indent=1)
    print(f"{len(failures)} failed" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
