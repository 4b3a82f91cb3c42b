"""The bad-input battery of issue #16 that the Python entry can answer
without touching the GPU's memory: each case must raise TypeError or
ValueError (LauncherError for what the C launcher refuses) naming the
argument, and launch nothing. Cases whose harm is in the indptr *contents*
(decreasing, past the cache) are bench/indptr_battery.py's, under
compute-sanitizer.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 bench/check_inputs.py
"""
import sys

import torch

sys.path[:0] = ["bench", "python"]
import bench_h200 as B  # noqa: E402
import mla_launcher as L  # noqa: E402
import mla_torch as M  # noqa: E402


def refused(name, call, expect, phrase):
    """call() must raise `expect` with `phrase` in its message."""
    torch.cuda.synchronize()
    try:
        call()
    except expect as e:
        ok = phrase in str(e)
        print(f"{'ok  ' if ok else 'FAIL'} {name:34} {type(e).__name__}: {e}")
        return ok
    except Exception as e:  # the wrong kind of error
        print(f"FAIL {name:34} {type(e).__name__}: {e}")
        return False
    print(f"FAIL {name:34} no error")
    return False


def case(name, mutate, expect, phrase):
    """custom_kernel on the task's inputs, one argument made bad, after a
    call on the good ones (which mla_torch_fast, where built, remembers:
    a bad call must not pass as a remembered one)."""
    data, _ = B.make_inputs([100, 37, 256], "fp8", 7)
    q, kvd, qo, kvp, config = data
    kvd = dict(kvd)
    M.custom_kernel((q, kvd, qo, kvp, dict(config)))
    args = [q, kvd, qo, kvp, dict(config)]
    mutate(args)
    return refused(name, lambda: M.custom_kernel(tuple(args)), expect, phrase)


def setq(a, v): a[0] = v
def setcfg(k, v): return lambda a: a[4].__setitem__(k, v)


cases = [
    ("q float32", lambda a: setq(a, a[0].float()), TypeError, "q must be"),
    ("q head dim 512", lambda a: setq(a, a[0][..., :512].contiguous()), ValueError, "q must be"),
    ("q not contiguous", lambda a: setq(a, a[0].transpose(0, 1).contiguous().transpose(0, 1)),
     ValueError, "not contiguous"),
    ("q on the CPU", lambda a: setq(a, a[0].cpu()), ValueError, "q must be"),
    ("q missing", lambda a: setq(a, None), ValueError, "q is missing"),
    ("batch_size disagrees with qo_indptr", setcfg("batch_size", 5), ValueError,
     "batch 5 needs 6 entries"),
    ("q_seq_len 2", setcfg("q_seq_len", 2), ValueError, "config['q_seq_len']"),
    ("num_heads 128", setcfg("num_heads", 128), ValueError, "config['num_heads']"),
    ("sm_scale other", setcfg("sm_scale", 0.1), ValueError, "config['sm_scale']"),
    ("kv_format mxfp4", setcfg("kv_format", "mxfp4"), ValueError, "config['kv_format']"),
    ("kv_seq_len missing", lambda a: a[4].pop("kv_seq_len"), ValueError, "config['kv_seq_len']"),
    ("fp8 scale None", lambda a: a[1].__setitem__("fp8", (a[1]["fp8"][0], None)), ValueError,
     "kv_scale is missing"),
    ("fp8 entry not a pair", lambda a: a[1].__setitem__("fp8", a[1]["fp8"][0]), TypeError,
     "(codes, scale)"),
    ("kv rows of 512", lambda a: a[1].__setitem__("fp8", (a[1]["fp8"][0][..., :512].contiguous(),
                                                          a[1]["fp8"][1])), ValueError, "kv must be"),
    ("kv_indptr int64", lambda a: a.__setitem__(3, a[3].long()), TypeError, "kv_indptr must be"),
    ("qo_indptr too short", lambda a: a.__setitem__(2, a[2][:-1].contiguous()), ValueError,
     "qo_indptr has shape [3]"),
    ("kv_indptr_host wrong length", setcfg("kv_indptr_host", [0, 100]), ValueError,
     "kv_indptr_host has 2 entries"),
    ("kv_indptr_host longer than kv_seq_len", setcfg("kv_indptr_host", [0, 100, 137, 9999]),
     L.LauncherError, "kv_indptr_host gives sequence 2 length 9862"),
    ("kv_indices int64", setcfg("kv_indices", torch.arange(393, device="cuda")), TypeError,
     "kv_indices must be"),
]


def paged_case(name, mutate, expect, phrase):
    """mla_with_kvcache (FlashMLA's convention) on a block table of 64-row
    pages, one argument made bad."""
    data, _ = B.make_inputs([100, 37, 256], "bf16", 7)
    q, kvd = data[0], data[1]
    args = dict(q=q.view(3, 1, 16, B.QK),
                k_cache=torch.zeros((8, 64, 1, B.QK), dtype=torch.bfloat16, device="cuda"),
                block_table=torch.arange(12, dtype=torch.int32, device="cuda").view(3, 4) % 8,
                cache_seqlens=torch.tensor([100, 37, 256], dtype=torch.int32, device="cuda"))
    mutate(args)
    return refused(name, lambda: M.mla_with_kvcache(**args), expect, phrase)


def setp(k, v): return lambda a: a.__setitem__(k, v)


paged_cases = [
    ("page size 16 (none compiled)", setp("k_cache", torch.zeros(
        (32, 16, 1, B.QK), dtype=torch.bfloat16, device="cuda")), ValueError,
     "a block table of 16-row pages"),
    ("block_table int64", lambda a: a.__setitem__("block_table", a["block_table"].long()),
     TypeError, "block_table must be"),
    ("block_table 1-d", lambda a: a.__setitem__("block_table", a["block_table"].flatten()),
     ValueError, "block_table must be"),
    ("cache_seqlens one short", lambda a: a.__setitem__("cache_seqlens", a["cache_seqlens"][:2]),
     ValueError, "cache_seqlens must be"),
    ("k_cache head dim 512", lambda a: a.__setitem__("k_cache", a["k_cache"][..., :512]
                                                      .contiguous()), ValueError, "k_cache must be"),
    ("fp8 k_cache without kv_scale", lambda a: a.__setitem__("k_cache", a["k_cache"].to(
        torch.float8_e4m3fn)), ValueError, "kv_scale is missing"),
    ("cache_seqlens past the table (validate)", lambda a: (
        a["cache_seqlens"].fill_(300), a.__setitem__("validate", True)), L.LauncherError,
     "cache_seqlens[0] is 300"),
]
print(f"mla_torch_fast: {'loaded' if M._fast is not None else 'not built'}")
failed = sum(not case(*c) for c in cases) + sum(not paged_case(*c) for c in paged_cases)
n = len(cases) + len(paged_cases)
print(f"{n - failed} of {n} bad inputs refused with the expected error")
sys.exit(1 if failed else 0)
