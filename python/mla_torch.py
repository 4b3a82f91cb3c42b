"""Run mla-compiler's decode kernels from PyTorch.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 -c "import mla_torch"

`custom_kernel(data)` has the task's interface (../shared/task/amd-mixed-mla.md):
data = (q, kv_data, qo_indptr, kv_indptr, config). It loads the code objects
and manifests that `mla-compile` wrote into $MLA_ARTIFACTS (one per spec:
deepseek_r1_decode_fp8_qp16 for fp8 KV, falling back to deepseek_r1_decode_fp8
where only that one was compiled, and deepseek_r1_decode_bf16), launches on torch's
current stream (driver launches through ctypes; CuPy loads the code
objects), and applies the manifest's rules: split count
from the split cost model, the mask-free stage 1 when every length divides
evenly, stage 2 only with several splits. Workspaces are allocated once per
shape. A call on the same buffers as an earlier one replays that call's
launches as one CUDA graph (MLA_NO_GRAPH=1: kernel by kernel; stage 2 with
programmatic dependent launch unless MLA_NO_PDL=1).
"""
import ctypes
import json
import math
import os
import weakref

import cupy
import torch

# The specs tried for each KV format, first found in the artifacts wins;
# MLA_SPEC_FP8 / MLA_SPEC_BF16 name one (e.g. deepseek_r1_decode_fp8_qp8).
# fp8 KV: Q and P in f16 (qp_type = f16; on sm_90 1.3x faster than bf16 Q/P
# and more accurate; contract |q| <= 65504, see docs/Performance.md), else
# the bf16-Q/P spec.
_SPECS = {"fp8": [os.environ["MLA_SPEC_FP8"]] if "MLA_SPEC_FP8" in os.environ
          else ["deepseek_r1_decode_fp8_qp16", "deepseek_r1_decode_fp8"],
          "bf16": [os.environ.get("MLA_SPEC_BF16", "deepseek_r1_decode_bf16")]}


# Launches go straight to the driver (cuLaunchKernel / cuLaunchKernelEx
# through ctypes) on torch's raw current stream: on the H200 host
# torch.cuda.current_stream() alone cost 7 us per call and the plan's host
# time fell 22 -> 13 us (docs/Performance.md, third session).
_cuda = ctypes.CDLL("libcuda.so.1")
_CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6


class _LaunchAttribute(ctypes.Structure):  # CUlaunchAttribute
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4),
                ("value", ctypes.c_ubyte * 64)]


class _LaunchConfig(ctypes.Structure):  # CUlaunchConfig
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shared", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(_LaunchAttribute)), ("num_attrs", ctypes.c_uint)]


# The driver entry points used, with their signatures (all return CUresult);
# a missing one is None.
_vp = ctypes.c_void_p
_SIGNATURES = {
    "cuLaunchKernel": [_vp] + [ctypes.c_uint] * 7 + [_vp] * 3,
    "cuLaunchKernelEx": [ctypes.POINTER(_LaunchConfig), _vp, _vp, _vp],
    "cuStreamCreate": [ctypes.POINTER(_vp), ctypes.c_uint],
    "cuStreamBeginCapture_v2": [_vp, ctypes.c_int],
    "cuStreamEndCapture": [_vp, ctypes.POINTER(_vp)],
    "cuStreamIsCapturing": [_vp, ctypes.POINTER(ctypes.c_int)],
    "cuGraphInstantiateWithFlags": [ctypes.POINTER(_vp), _vp, ctypes.c_ulonglong],
    "cuGraphLaunch": [_vp, _vp],
    "cuGraphExecDestroy": [_vp],
    "cuGraphDestroy": [_vp],
}
_driver = {}
for _name, _args in _SIGNATURES.items():
    _fn = getattr(_cuda, _name, None)
    if _fn is not None:
        _fn.argtypes, _fn.restype = _args, ctypes.c_int
    _driver[_name] = _fn

# MLA_NO_PDL=1 launches the combine kernel plainly (for comparison).
_PDL = _driver["cuLaunchKernelEx"] is not None and os.environ.get("MLA_NO_PDL", "0") != "1"
# A cached plan's launches are recorded once into a CUDA graph and replayed
# with one cuGraphLaunch (MLA_NO_GRAPH=1 launches kernel by kernel). Inside
# a caller's own stream capture the kernels are launched directly.
_GRAPHS = (os.environ.get("MLA_NO_GRAPH", "0") != "1" and
           all(_driver[n] is not None for n in _SIGNATURES if n.startswith(("cuStream", "cuGraph"))))

_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _check(err, what):
    if err:
        raise RuntimeError(f"{what} failed: CUresult {err}")


class _Graph:
    """A plan's launches recorded on a private stream into one CUDA graph."""
    _stream = None

    def __init__(self, launches):
        if _Graph._stream is None:
            s = _vp()
            _check(_driver["cuStreamCreate"](ctypes.byref(s), 1), "cuStreamCreate")  # non-blocking
            _Graph._stream = s
        self.graph, self.exec = _vp(), _vp()
        _check(_driver["cuStreamBeginCapture_v2"](_Graph._stream, 2), "cuStreamBeginCapture")  # relaxed
        try:
            DecodeKernels.launch_all(launches, _Graph._stream.value)
        finally:
            _check(_driver["cuStreamEndCapture"](_Graph._stream, ctypes.byref(self.graph)),
                   "cuStreamEndCapture")
        _check(_driver["cuGraphInstantiateWithFlags"](ctypes.byref(self.exec), self.graph, 0),
               "cuGraphInstantiate")

    def __call__(self, stream):
        _check(_driver["cuGraphLaunch"](self.exec, stream), "cuGraphLaunch")

    def __del__(self):
        if self.exec:
            _driver["cuGraphExecDestroy"](self.exec)
        if self.graph:
            _driver["cuGraphDestroy"](self.graph)


def _capturing(stream):
    status = ctypes.c_int(0)
    _check(_driver["cuStreamIsCapturing"](stream, ctypes.byref(status)), "cuStreamIsCapturing")
    return status.value != 0


def current_stream(device_index):
    """torch's current stream on the device, as a CUstream handle."""
    if _raw_stream is not None:
        return _raw_stream(device_index)
    return torch.cuda.current_stream(device_index).cuda_stream


class _Launch:
    """One kernel launch with its parameter block, ready to go."""

    def __init__(self, name, fn, grid, block, shared, params, dependent):
        self.name, self.grid, self.params = name, grid, params  # params keeps the values alive
        self.args = (fn, grid[0], grid[1], 1, block, 1, 1, shared)
        self.kernel_params = ctypes.addressof(params[1])
        self.config = None
        if dependent and _PDL:
            # Programmatic stream serialization: the kernel may start while
            # the previous one finishes; it waits for that one's stores itself
            # (the manifest's dependent_launch).
            self.attr = _LaunchAttribute(id=_CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
            self.attr.value[0] = 1
            self.config = _LaunchConfig((ctypes.c_uint * 3)(grid[0], grid[1], 1),
                                        (ctypes.c_uint * 3)(block, 1, 1), shared, None,
                                        ctypes.pointer(self.attr), 1)
            self.config_ref = ctypes.byref(self.config)
            self.fn = fn

    def __call__(self, stream):
        if self.config is not None:
            self.config.stream = stream
            err = _driver["cuLaunchKernelEx"](self.config_ref, self.fn, self.kernel_params, None)
        else:
            err = _driver["cuLaunchKernel"](*self.args, stream, self.kernel_params, None)
        _check(err, f"launching {self.name}")


class DecodeKernels:
    """One spec's manifest and loaded kernels."""

    def __init__(self, folder, spec):
        self.spec = spec
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
            cost += (p["combine_launch"] + p.get("combine_per_split", 0.0) * splits
                     + p["combine_per_partial"] * programs / self.concurrent)
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

    def prepared(self, name, grid, values):
        """One launch, ready to go (a _Launch). The parameter block is built
        once per distinct tensor pointers, shapes and scalars."""
        fn, spec = self.kernels[name]
        key = (name, grid) + tuple(
            (v.data_ptr(), tuple(v.shape)) if isinstance(v, torch.Tensor) else v
            for v in values)
        launch = self.params_cache.get(key)
        if launch is None:
            if len(self.params_cache) > 64:
                self.params_cache.clear()
            launch = self.params_cache[key] = _Launch(
                name, fn.kernel.ptr, grid, spec["block_threads"], spec["shared_bytes"],
                self._params(spec, values), spec.get("dependent_launch", False))
        return launch

    @staticmethod
    def launch_all(launches, stream):
        for launch in launches:
            if 0 not in launch.grid:
                launch(stream)

    def plan(self, q, kv, kv_scale, qo_indptr, kv_indptr, batch, max_kv_len, splits=None):
        """The launches of one decode and its output tensor (a workspace)."""
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
        values = [q, kv] + ([kv_scale] if kv_scale is not None else []) + \
                 [qo_indptr, kv_indptr, splits, partial, lse, out]
        launches = [self.prepared(stage1, (batch, splits), values)]
        if splits > 1:
            launches.append(self.prepared(self.stage2, (batch, heads),
                                          [partial, lse, splits, qo_indptr, out]))
        return launches, out, splits, stage1

    def run(self, q, kv, kv_scale, qo_indptr, kv_indptr, batch, max_kv_len, splits=None):
        launches, out, splits, stage1 = self.plan(q, kv, kv_scale, qo_indptr, kv_indptr,
                                                  batch, max_kv_len, splits)
        self.launch_all(launches, current_stream(q.get_device()))
        return out, splits, stage1


_loaded = {}


def kernels_for(kv_format):
    if kv_format not in _loaded:
        folder = os.environ.get("MLA_ARTIFACTS", "artifacts")
        names = _SPECS[kv_format]
        found = [n for n in names if os.path.exists(os.path.join(folder, n + ".json"))]
        _loaded[kv_format] = DecodeKernels(folder, (found or names)[0])
    return _loaded[kv_format]


def _prepare(k, fmt, q, kv_data, qo_indptr, kv_indptr, config):
    kv_in = kv_data["fp8"][0] if fmt == "fp8" else kv_data["bf16"]
    if fmt == "fp8":
        kv, scale = kv_data["fp8"]
        kv = kv.reshape(kv.shape[0], -1).view(torch.uint8)
        scale = scale.reshape(1).to(torch.float32)
    else:
        kv, scale = kv_data["bf16"].reshape(kv_data["bf16"].shape[0], -1), None
    qo = qo_indptr.to(torch.int32).contiguous()
    kvp = kv_indptr.to(torch.int32).contiguous()
    qc, kvc = q.contiguous(), kv.contiguous()
    launches, out, _, _ = k.plan(qc, kvc, scale, qo, kvp, config["batch_size"],
                                 config["kv_seq_len"])
    # Reusable on the next call with the same inputs only if nothing above
    # copied: then every pointer in the launches is an input's own.
    reusable = (qc.data_ptr() == q.data_ptr() and qo.data_ptr() == qo_indptr.data_ptr()
                and kvp.data_ptr() == kv_indptr.data_ptr()
                and (scale is None or scale.data_ptr() == kv_data["fp8"][1].data_ptr())
                and kvc.data_ptr() == kv_in.data_ptr())
    return launches, out, reusable


_plans = {}


def custom_kernel(data):
    q, kv_data, qo_indptr, kv_indptr, config = data
    fmt = config.get("kv_format", "fp8")
    k = kernels_for(fmt)
    src = kv_data[fmt]
    kv_t, scale_t = src if fmt == "fp8" else (src, None)
    # Repeated calls on the same buffers launch straight away. A plan holds
    # only addresses, shapes and the sizes in config, all in the key, plus
    # one fact about kv_indptr's contents (do the lengths divide?): that is
    # trusted only for the same kv_indptr object, unwritten since (weak
    # reference + version counter). A different tensor that reuses a freed
    # address is the caller's current buffer, which is what a launch needs.
    key = (fmt, q.data_ptr(), q.shape, q.stride(), q.dtype, kv_t.data_ptr(), kv_t.shape,
           kv_t.stride(), kv_t.dtype,
           scale_t.data_ptr() if scale_t is not None else 0,
           scale_t.dtype if scale_t is not None else None,
           qo_indptr.data_ptr(), qo_indptr.shape, qo_indptr.dtype,
           kv_indptr.data_ptr(), kv_indptr.shape, kv_indptr.dtype,
           config["batch_size"], config["kv_seq_len"], q.device)
    stream = current_stream(q.get_device())
    hit = _plans.get(key)
    if hit is not None and hit[0]() is kv_indptr and hit[1] == kv_indptr._version:
        launches, out = hit[2], hit[3]
        # Second use of a plan: record it as a graph (plans used once are
        # not worth the instantiation).
        if _GRAPHS and not _capturing(stream):
            if hit[4] is None:
                hit[4] = _Graph(launches)
            hit[4](stream)
            return out
    else:
        launches, out, reusable = _prepare(k, fmt, q, kv_data, qo_indptr, kv_indptr, config)
        if reusable:
            if len(_plans) > 64:
                _plans.clear()
            _plans[key] = [weakref.ref(kv_indptr), kv_indptr._version, launches, out, None]
    k.launch_all(launches, stream)
    return out
