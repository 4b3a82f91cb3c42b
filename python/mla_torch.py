"""Run mla-compiler's decode kernels from PyTorch.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 -c "import mla_torch"

`custom_kernel(data)` has the task's interface (../shared/task/amd-mixed-mla.md):
data = (q, kv_data, qo_indptr, kv_indptr, config). It loads the code objects
and manifests that `mla-compile` wrote into $MLA_ARTIFACTS (one per spec:
deepseek_r1_decode_fp8 and deepseek_r1_decode_bf16), launches on torch's
current stream through CuPy, and applies the manifest's rules: split count
from the split cost model, the mask-free stage 1 when every length divides
evenly, stage 2 only with several splits. Workspaces are allocated once per
shape.
"""
import ctypes
import json
import math
import os
import weakref

import cupy
import torch

# The spec compiled for each KV format; MLA_SPEC_FP8 / MLA_SPEC_BF16 pick
# another one from the artifacts (e.g. deepseek_r1_decode_fp8_qp8).
_SPECS = {"fp8": os.environ.get("MLA_SPEC_FP8", "deepseek_r1_decode_fp8"),
          "bf16": os.environ.get("MLA_SPEC_BF16", "deepseek_r1_decode_bf16")}


class DecodeKernels:
    """One spec's manifest and loaded kernels."""

    def __init__(self, folder, spec):
        with open(os.path.join(folder, spec + ".json")) as f:
            self.manifest = json.load(f)
        m = self.manifest
        self.module = cupy.RawModule(path=os.path.join(folder, m["binary"]))
        self.kernels = {}
        for k in m["kernels"]:
            fn = self.module.get_function(k["name"])
            if k["shared_bytes"] > 48 * 1024:
                fn.max_dynamic_shared_size_bytes = k["shared_bytes"]
            self.kernels[k["name"]] = (fn, k)
        self.stage1 = {k["variant"]: k["name"] for k in m["kernels"] if k["stage"] == 1}
        self.stage2 = next((k["name"] for k in m["kernels"] if k["stage"] == 2), None)
        self.block_n = m["block_n"]
        self.heads, self.qk_dim, self.v_dim = m["num_heads"], m["qk_dim"], m["v_dim"]
        self.workspaces = {}
        self.params_cache = {}
        # Programs that run at once: SMs times the stage-1 kernels' occupancy
        # (mla-compile's report); the split model prices rounds of these.
        per_sm = min(k.get("resources", {}).get("programs_per_sm", 1)
                     for k in m["kernels"] if k["stage"] == 1) or 1
        self.concurrent = m["compute_units"] * per_sm
        self.exact_cache = {}

    # Same model as lib/Schedule/SplitCostModel.cpp.
    def split_cost(self, batch, kv_len, splits):
        p = self.manifest["split_cost_model"]
        tiles = math.ceil(math.ceil(kv_len / splits) / self.block_n) if kv_len else 0
        programs = batch * splits
        rounds = math.ceil(programs / self.concurrent)
        cost = rounds * (tiles + p["program_overhead"])
        if splits > 1:
            cost += p["combine_launch"] + p["combine_per_partial"] * programs / self.concurrent
        return cost

    def choose_splits(self, batch, kv_len):
        best = None
        for s in self.manifest["split_candidates"]:
            c = self.split_cost(batch, kv_len, s)
            if best is None or c < best[0] or (c == best[0] and s < best[1]):
                best = (c, s)
        return best[1]

    def lengths_divide(self, kv_indptr, multiple):
        # One device-to-host read per indptr tensor object and version. The
        # key is the object (held weakly), never its address: the caching
        # allocator hands a freed address to the next tensor.
        key = (id(kv_indptr), multiple)
        hit = self.exact_cache.get(key)
        if hit is not None and hit[0]() is kv_indptr and hit[1] == kv_indptr._version:
            return hit[2]
        lengths = (kv_indptr[1:] - kv_indptr[:-1]).cpu()
        result = bool((lengths % multiple == 0).all())
        self.exact_cache[key] = (weakref.ref(kv_indptr), kv_indptr._version, result)
        return result

    @staticmethod
    def _params(spec, values):
        """The kernel's parameter block: memref descriptors (two pointers,
        offset, sizes, strides) and scalars, as ctypes values."""
        out = []
        for a, v in zip(spec["args"], values):
            if a["kind"] == "memref":
                t = v
                assert t.is_cuda and t.is_contiguous(), a["name"]
                assert t.data_ptr() % 16 == 0, a["name"] + " must be 16-byte aligned"
                assert t.dim() == a["rank"], (a["name"], t.shape)
                out += [ctypes.c_void_p(t.data_ptr()), ctypes.c_void_p(t.data_ptr()),
                        ctypes.c_int64(0)]
                out += [ctypes.c_int64(s) for s in t.shape]
                out += [ctypes.c_int64(s) for s in t.stride()]
            elif a["kind"] == "i64":
                out.append(ctypes.c_int64(v))
            else:
                out.append(ctypes.c_float(v))
        ptrs = (ctypes.c_void_p * len(out))(*[ctypes.addressof(x) for x in out])
        return out, ptrs

    def launch(self, name, grid, values, stream):
        fn, spec = self.kernels[name]
        if 0 in grid:
            return
        # The parameter block is rebuilt only when a tensor, shape or scalar
        # changes: repeated calls on the same inputs launch straight away.
        key = (name, grid) + tuple(
            (id(v), v.data_ptr(), tuple(v.shape)) if isinstance(v, torch.Tensor) else v
            for v in values)
        params = self.params_cache.get(key)
        if params is None:
            if len(self.params_cache) > 64:
                self.params_cache.clear()
            params = self.params_cache[key] = self._params(spec, values)
        cupy.cuda.driver.launchKernel(
            fn.kernel.ptr, grid[0], grid[1], 1, spec["block_threads"], 1, 1,
            spec["shared_bytes"], stream, ctypes.addressof(params[1]), 0)

    def run(self, q, kv, kv_scale, qo_indptr, kv_indptr, batch, max_kv_len, splits=None):
        heads, vdim = self.heads, self.v_dim
        if splits is None:
            cands = self.manifest["split_candidates"]
            splits = cands[0] if len(cands) == 1 else self.choose_splits(batch, max_kv_len)
        multiple = splits * self.block_n
        if "mask_free" in self.stage1 and ("masked" not in self.stage1 or
                                           self.lengths_divide(kv_indptr, multiple)):
            stage1 = self.stage1["mask_free"]
        else:
            stage1 = self.stage1["masked"]
        key = (batch, splits, q.shape[0], q.device)
        ws = self.workspaces.get(key)
        if ws is None:
            ws = (torch.empty((batch, splits, heads, vdim), dtype=torch.float32, device=q.device),
                  torch.empty((batch, splits, heads), dtype=torch.float32, device=q.device),
                  torch.empty((q.shape[0], heads, vdim), dtype=torch.bfloat16, device=q.device))
            self.workspaces[key] = ws
        partial, lse, out = ws
        stream = torch.cuda.current_stream().cuda_stream
        values = [q, kv] + ([kv_scale] if kv_scale is not None else []) + \
                 [qo_indptr, kv_indptr, splits, partial, lse, out]
        self.launch(stage1, (batch, splits), values, stream)
        if splits > 1:
            self.launch(self.stage2, (batch, heads), [partial, lse, splits, qo_indptr, out], stream)
        return out, splits, stage1


_loaded = {}


def kernels_for(kv_format):
    if kv_format not in _loaded:
        folder = os.environ.get("MLA_ARTIFACTS", "artifacts")
        _loaded[kv_format] = DecodeKernels(folder, _SPECS[kv_format])
    return _loaded[kv_format]


def custom_kernel(data):
    q, kv_data, qo_indptr, kv_indptr, config = data
    fmt = config.get("kv_format", "fp8")
    k = kernels_for(fmt)
    if fmt == "fp8":
        kv, scale = kv_data["fp8"]
        kv = kv.reshape(kv.shape[0], -1).view(torch.uint8)
        scale = scale.reshape(1).to(torch.float32)
    else:
        kv, scale = kv_data["bf16"].reshape(kv_data["bf16"].shape[0], -1), None
    qo = qo_indptr.to(torch.int32).contiguous()
    kvp = kv_indptr.to(torch.int32).contiguous()
    out, _, _ = k.run(q.contiguous(), kv.contiguous(), scale, qo, kvp,
                      config["batch_size"], config["kv_seq_len"])
    return out
