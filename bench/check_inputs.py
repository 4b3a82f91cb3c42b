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


def case(name, mutate, expect, phrase):
    data, _ = B.make_inputs([100, 37, 256], "fp8", 7)
    q, kvd, qo, kvp, config = data
    kvd = dict(kvd)
    args = [q, kvd, qo, kvp, dict(config)]
    mutate(args)
    torch.cuda.synchronize()
    try:
        M.custom_kernel(tuple(args))
    except expect as e:
        ok = phrase in str(e)
        print(f"{'ok  ' if ok else 'FAIL'} {name:34} {type(e).__name__}: {e}")
        return ok
    except Exception as e:  # the wrong kind of error
        print(f"FAIL {name:34} {type(e).__name__}: {e}")
        return False
    print(f"FAIL {name:34} no error")
    return False


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
]
failed = sum(not case(*c) for c in cases)
print(f"{len(cases) - failed} of {len(cases)} bad inputs refused with the expected error")
sys.exit(1 if failed else 0)
