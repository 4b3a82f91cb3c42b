"""Malformed indptr contents on the GPU (issue #16): run under
compute-sanitizer --tool memcheck, every case must

  - touch no memory outside the call's buffers (memcheck: 0 errors),
  - give zeros for a sequence whose KV range is not
    0 <= kv_indptr[b] <= kv_indptr[b+1] <= kv rows,
  - write nothing for a sequence whose qo_indptr[b] is not a row of q / out
    (the output's NaN poison stays),
  - give every other row the float32 reference's answer (<= 2e-2),

for fp8 and bf16 KV, the launcher's split choice and forced 1 and 8 splits
(stage 1 writing out, stage 2 combining), and the mask-free stage 1 behind a
host copy that lies about the device contents. Then validate=True must
refuse each bad case with a ValueError naming the entry, and accept a good
one.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python compute-sanitizer --tool memcheck \
        --error-exitcode 3 python3 bench/indptr_battery.py [--seed N]
"""
import argparse
import random
import sys

import torch

sys.path[:0] = ["bench", "python"]
import bench_h200 as B  # noqa: E402
import mla_torch as M  # noqa: E402

INT32_MAX = 2**31 - 1
LENGTHS = [17, 300, 1000, 64, 256, 0, 512, 129]  # 2278 rows in the cache
ROWS = sum(LENGTHS)

# (name, kv_indptr, qo_indptr); None keeps the well-formed one.
CASES = [
    ("well-formed", None, None),
    ("decreasing", [0, 17, 317, 100, 1381, 1637, 1637, 2149, 2278], None),
    ("negative start", [-64, 17, 317, 1317, 1381, 1637, 1637, 2149, 2278], None),
    ("past the cache", [0, 17, 317, 1317, 1381, 1637, 1637, 2149, ROWS + 5000], None),
    ("starts past the cache", [0, 17, 317, 1317, 1381, ROWS + 64, ROWS + 100, 2149, 2278],
     None),
    ("int32 extremes", [0, INT32_MAX, -2**31, 1317, 1381, 1637, 1637, 2149, 2278], None),
    ("qo past q's rows", None, [0, 1, 2, 3, 99, 5, 6, 7, 8]),
    ("qo negative and huge", None, [0, -1, 2, INT32_MAX, 4, 5, 6, 7, 8]),
    ("everything bad", [-5, -1, 9999999, 3, 2, 1, 0, ROWS + 1, -7],
     [-3, 40, 2, 3, 4, 5, 6, 7, 8]),
]


def reference_row(q, deq, b, begin, end):
    k = deq[begin:end, 0]
    if k.shape[0] == 0:
        return torch.zeros((B.HEADS, B.V), device="cuda")
    s = (q[b].float() @ k.T) * B.SM_SCALE
    return torch.softmax(s, dim=-1) @ k[:, :B.V]


def case_inputs(fmt, kvp_list, qo_list, seed):
    """Fresh inputs for LENGTHS with the case's indptrs (None: well-formed):
    (q, kv_data, qo_indptr, kv_indptr, config), dequantised KV."""
    (q, kvd, qo, kvp, config), deq = B.make_inputs(LENGTHS, fmt, seed)
    if kvp_list is not None:
        kvp = torch.tensor(kvp_list, dtype=torch.int32, device="cuda")
    if qo_list is not None:
        qo = torch.tensor(qo_list, dtype=torch.int32, device="cuda")
    return (q, kvd, qo, kvp, config), deq


def run_case(fmt, name, kvp_list, qo_list, splits, seed, host=None):
    (q, kvd, qo, kvp, config), deq = case_inputs(fmt, kvp_list, qo_list, seed)
    kv, scale = kvd[fmt] if fmt == "fp8" else (kvd[fmt], None)
    s = M.spec_for(fmt)
    ins = M._as_kernel_inputs(s, q, kv, scale, qo, kvp)
    bs = len(LENGTHS)
    out = torch.full((bs, B.HEADS, B.V), float("nan"), dtype=s.out_dtype, device="cuda")
    B.poison()  # the workspace
    s.decode(*ins, bs, max(LENGTHS), host, splits, out=out)
    torch.cuda.synchronize()
    plan = s.plan(bs, max(LENGTHS), splits, host)
    # The mask-free stage 1 runs lengths that are not a multiple of
    # splits x block_n as empty ones (an exact split range).
    multiple = plan.splits * 64 if plan.mask_free else 1
    got = out.float()
    kv_l, qo_l = kvp.tolist(), qo.tolist()
    problems, named = [], set()
    for b in range(bs):
        row, begin, end = qo_l[b], kv_l[b], kv_l[b + 1]
        if not 0 <= row < bs:
            continue
        named.add(row)
        valid = 0 <= begin <= end <= ROWS and (end - begin) % multiple == 0
        want = reference_row(q, deq, b, begin, end) if valid else torch.zeros_like(got[row])
        g = got[row]
        if torch.isnan(g).any():
            problems.append(f"seq {b} row {row}: NaN")
            continue
        den = want.norm().item()
        err = (g - want).norm().item() / (den if den > 0 else 1.0)
        if (valid and err > 2e-2) or (not valid and g.abs().max().item() != 0):
            problems.append(f"seq {b} [{begin}, {end}) row {row}: "
                            f"{'err %.2e' % err if valid else 'not zeros'}")
    for row in range(bs):
        if row not in named and not torch.isnan(got[row]).all():
            problems.append(f"row {row}: written though no valid qo_indptr entry names it")
    tag = (f"{fmt:4} {name:22} splits {splits if splits else 'auto':4} "
           f"({'mask-free' if plan.mask_free else 'masked'}, {plan.splits})")
    print(f"{'ok  ' if not problems else 'FAIL'} {tag} {'; '.join(problems)}")
    return not problems


def validate_case(fmt, name, kvp_list, qo_list, seed):
    (q, kvd, qo, kvp, config), _ = case_inputs(fmt, kvp_list, qo_list, seed)
    config = dict(config, validate=True)
    try:
        M.custom_kernel((q, kvd, qo, kvp, config))
    except ValueError as e:
        ok = kvp_list is not None or qo_list is not None
        print(f"{'ok  ' if ok else 'FAIL'} {fmt:4} validate {name:22} ValueError: {e}")
        return ok
    torch.cuda.synchronize()
    ok = kvp_list is None and qo_list is None
    print(f"{'ok  ' if ok else 'FAIL'} {fmt:4} validate {name:22} "
          f"{'accepted' if ok else 'no error'}")
    return ok


def validate_then_plain(fmt, seed):
    """validate=True on a plan made with a host copy, then plain calls on
    the same plan: the validated call must leave the cached arguments (and
    their host copy) as they were, and the answers agree."""
    (q, kvd, qo, kvp, config), _ = case_inputs(fmt, None, None, seed)
    kv, scale = kvd[fmt] if fmt == "fp8" else (kvd[fmt], None)
    s = M.spec_for(fmt)
    ins = M._as_kernel_inputs(s, q, kv, scale, qo, kvp)
    bs, host = len(LENGTHS), kvp.tolist()
    first = s.decode(*ins, bs, max(LENGTHS), host, 1)
    checked = s.decode(*ins, bs, max(LENGTHS), host, 1, validate=True)
    again = s.decode(*ins, bs, max(LENGTHS), host, 1)
    torch.cuda.synchronize()
    ok = torch.equal(first, checked) and torch.equal(first, again)
    print(f"{'ok  ' if ok else 'FAIL'} {fmt:4} validate then plain calls on one cached plan")
    return ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    args = p.parse_args()
    print(f"seed {args.seed}")
    results = []
    for fmt in ("fp8", "bf16"):
        for i, (name, kvp_list, qo_list) in enumerate(CASES):
            for splits in (0, 1, 8):
                results.append(run_case(fmt, name, kvp_list, qo_list, splits, args.seed + i))
            results.append(validate_case(fmt, name, kvp_list, qo_list, args.seed + i))
        # The mask-free stage 1: a host copy whose lengths divide, device
        # contents whose lengths do not (36 and 100 rows) or leave the cache.
        host = [0, 128, 256, 384, 512, 640, 768, 896, 1024]
        lying = [0, 128, 164, 264, 512, 640, 768, 896, ROWS + 128]
        for splits in (1, 2):
            results.append(run_case(fmt, "lying host copy", lying, None, splits, args.seed,
                                    host))
        results.append(validate_then_plain(fmt, args.seed))
    torch.cuda.synchronize()
    failed = results.count(False)
    print(f"indptr battery: {len(results) - failed} of {len(results)} cases ok")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
