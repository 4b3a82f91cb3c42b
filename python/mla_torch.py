"""Run mla-compiler's decode kernels from PyTorch, through the C launcher.

    MLA_ARTIFACTS=artifacts PYTHONPATH=python python3 -c "import mla_torch"

This module holds no launch rule. It reads the manifests that `mla-compile`
wrote into $MLA_ARTIFACTS (the Python reader of docs/Manifest.md), turns
each into the launcher's spec descriptor (mla/launcher.h) and calls the
launcher's shared library (libmla_launcher-cuda.so, or -hip.so on ROCm
PyTorch) through ctypes. The launcher chooses the split count (split cost
model), the stage-1 variant (mask-free only when a host copy of kv_indptr
shows every length divides) and whether stage 2 runs, validates the
pointers and the workspace, packs the arguments and launches on torch's
current stream, stage 2 as stage 1's dependent where the manifest says so.

The entry is the custom op `torch.ops.mla.decode` (CUDA and fake kernels
registered; `decode()` picks the spec for a KV format): it allocates its
output and workspace per call from torch's caching allocator and never
reads device memory on the host, so it can be captured in a CUDA graph and
traced by torch.compile. `custom_kernel(data)` has the task's interface
(../shared/task/amd-mixed-mla.md): data = (q, kv_data, qo_indptr,
kv_indptr, config), config may carry "kv_indptr_host"; it runs the op's
implementation (Spec.decode) without the dispatcher.

Plans (mla_plan_decode) are cached per spec, batch, max_kv_len and host
lengths: a call on new buffers, or after kv_indptr changed in place, is one
mla_decode_run.

Where python/build_torch_fast.py has built mla_torch_fast into
$MLA_ARTIFACTS (for this torch), custom_kernel first asks it: a call whose
inputs match one the Python path accepted before (the config values it
reads, every tensor's type, dtype, sizes, strides and device, the stream)
is replayed in C++, output allocation and mla_decode_run included; any
other call runs the Python path, which answers bad inputs and hands the
accepted ones to the module (python/mla_replay.py loads and feeds it;
python/mla_torch_fast.cpp says why). MLA_TORCH_FAST=0 leaves it unused.
"""
import ctypes
import os

import torch

import mla_launcher as L
import mla_replay

# The specs tried for each KV format, first found in the artifacts wins;
# MLA_SPEC_FP8 / MLA_SPEC_BF16 name one (e.g. deepseek_r1_decode_fp8_qp8, or
# deepseek_r1_decode_fp8_qp8_sm90a: fp8 Q and P on sm_90a's e4m3 wgmma, with
# its _mtp2 twin for q_seq_len 2; Q scaled per program by a power of two
# that fits its largest |q| to e4m3's range, so any magnitude is fine; or
# deepseek_r1_decode_fp8_e4m3x2_sm90a: the same e4m3 products with Q and P
# each as two e4m3 terms, ~4e-3 error instead of ~3e-2, docs/Design.md).
# fp8 KV: Q and P in f16 (qp_type = f16; on sm_90 1.3x faster than bf16 Q/P
# and more accurate; contract |q| <= 65504, see docs/PerformanceLog.md), on
# sm_90a's wgmma where compiled (the H200: K converted in registers as
# wgmma's register A, faster than sm_90's mma.sync spec on every task shape
# and every serving shape measured, docs/Performance.md), else sm_90's, else
# the bf16-Q/P spec.
_DEFAULT_SPECS = {"fp8": ["deepseek_r1_decode_fp8_qp16_sm90a", "deepseek_r1_decode_fp8_qp16",
                          "deepseek_r1_decode_fp8"],
          # bf16 KV: sm_90a's wgmma spec where compiled (the H200: 1.25x
          # faster than sm_90's mma.sync on the task's geomean; MTP 2 in
          # one program at 1.2x one token's time), else sm_90's.
          "bf16": ["deepseek_r1_decode_bf16_sm90a", "deepseek_r1_decode_bf16"],
          # mxfp4 (issue 18): packed e2m1 rows and e8m0 block scales; sm_90a's
          # (bytes a tile ahead in registers, decoded into a swizzled bf16
          # tile for wgmma: the H200 1.8x faster than the 32-token sm_90 spec
          # on the task's geomean) where compiled, else the 32-token spec (3
          # programs per SM, 1.09x faster than 64 tokens), else the 64-token.
          # MLA_SPEC_MXFP4=deepseek_r1_decode_mxfp4_qp8_sm90a: the tile decoded
          # per token into e4m3 for fp8 Q and P (opt-in: ~3e-2 error, and
          # slower on the H200, docs/Design.md, mxfp4 KV).
          "mxfp4": ["deepseek_r1_decode_mxfp4_sm90a", "deepseek_r1_decode_mxfp4_n32",
                    "deepseek_r1_decode_mxfp4"]}
_SPECS = {k: [os.environ[f"MLA_SPEC_{k.upper()}"]] if f"MLA_SPEC_{k.upper()}" in os.environ
          else list(v) for k, v in _DEFAULT_SPECS.items()}
_STARTING_SPECS = {k: list(v) for k, v in _SPECS.items()}  # use_specs(fmt) restores
# mxfp4 KV: the packed bytes as uint8 / int8 or torch's fp4x2 type, the
# scales as uint8 or torch's e8m0 type (those that this torch has).
_FP4X2 = tuple(getattr(torch, n) for n in ("float4_e2m1fn_x2",) if hasattr(torch, n))
_E8M0 = tuple(getattr(torch, n) for n in ("float8_e8m0fnu",) if hasattr(torch, n))

_TORCH_TYPE = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
               "f8E4M3FN": torch.float8_e4m3fn, "f8E4M3FNUZ": torch.float8_e4m3fnuz,
               "f4E2M1FN": torch.uint8}


class Spec:
    """One spec on one device: its launcher context and its tensor checks."""

    def __init__(self, folder, name, device):
        desc = L.SpecDescriptor.from_folder(folder, name)
        driver = "hip" if torch.version.hip else "cuda"
        lib = L.load_library(os.path.join(folder, f"libmla_launcher-{driver}.so"), driver)
        self.context = L.Context(lib, desc, device)
        m = desc.manifest
        self.name, self.device = name, device
        self.heads, self.qk_dim, self.v_dim = m["num_heads"], m["qk_dim"], m["v_dim"]
        self.q_seq_len = m["q_seq_len"]
        self.kv_layout, self.page_size = m["kv_layout"], m["page_size"]
        self.q_dtype, self.kv_dtype = _TORCH_TYPE[m["q_type"]], _TORCH_TYPE[m["kv_type"]]
        self.out_dtype = _TORCH_TYPE[m["out_type"]]
        self.has_kv_scale = bool(desc.desc.has_kv_scale)
        self.softmax_scale = m["softmax_scale"]
        self.mxfp4 = m["kv_type"] == "f4E2M1FN"
        # A KV row's stored elements: mxfp4 packs two values per byte.
        self.kv_row = self.qk_dim // 2 if self.mxfp4 else self.qk_dim
        self.kv_dtypes = ((torch.uint8, torch.int8) + _FP4X2 if self.mxfp4 else
                          (self.kv_dtype,) if self.kv_dtype == torch.bfloat16 else
                          (self.kv_dtype, torch.uint8))
        self.torch_device = torch.device("cuda", device)
        self.entries = {}

    def check_inputs(self, q, kv, kv_scale, qo_indptr, kv_indptr, batch, kv_scales=None):
        """What the launcher cannot see: the tensors' device, dtype, shape and
        layout against the manifest. kv may be [tokens, qk_dim] or the task's
        [tokens, 1, qk_dim], fp8 as its float8 type or as uint8 codes; the
        scale any shape of one element. mxfp4: kv rows of qk_dim / 2 bytes
        and kv_scales, a 2-D e8m0 array whose rows (at its own stride) hold
        at least qk_dim / 32 scales. Raises ValueError naming the
        argument."""
        heads, dev = self.heads, self.device
        qk = self.kv_row
        named = [("q", q), ("kv", kv), ("qo_indptr", qo_indptr), ("kv_indptr", kv_indptr)]
        if self.has_kv_scale:
            named.append(("kv_scale", kv_scale))
        for name, t in named:
            if not isinstance(t, torch.Tensor):
                self._refuse(name, t, None, "")
        for name, t in (("qo_indptr", qo_indptr), ("kv_indptr", kv_indptr)):
            if t.dim() != 1 or t.shape[0] != batch + 1:
                raise ValueError(f"{name} has shape {list(t.shape)}; batch {batch} needs "
                                 f"{batch + 1} entries (config['batch_size'] and {name} disagree?)")
        qs = q.shape
        if (q.dtype != self.q_dtype or qs != (batch * self.q_seq_len, heads, self.qk_dim)
                or not q.is_contiguous() or q.get_device() != dev):
            self._refuse("q", q, self.q_dtype,
                         f"[{batch * self.q_seq_len}, {heads}, {self.qk_dim}]")
        ks = kv.shape
        if (kv.dtype not in self.kv_dtypes or ks[-1] != qk or len(ks) not in (2, 3)
                or (len(ks) == 3 and ks[1] != 1) or not kv.is_contiguous()
                or kv.get_device() != dev):
            self._refuse("kv", kv, self.kv_dtype, f"[tokens, {qk}] or [tokens, 1, {qk}]")
        for name, t in (("qo_indptr", qo_indptr), ("kv_indptr", kv_indptr)):
            if (t.dtype != torch.int32 or t.shape != (batch + 1,) or not t.is_contiguous()
                    or t.get_device() != dev):
                self._refuse(name, t, torch.int32, f"[{batch + 1}]")
        if self.has_kv_scale:
            if (kv_scale is None or kv_scale.dtype != torch.float32 or kv_scale.numel() != 1
                    or kv_scale.get_device() != dev):
                self._refuse("kv_scale", kv_scale, torch.float32, "one element")
        elif kv_scale is not None:
            raise ValueError(f"{self.name} takes no kv_scale")
        if self.mxfp4:
            blocks = self.qk_dim // 32
            t = kv_scales
            if (not isinstance(t, torch.Tensor) or t.dtype not in (torch.uint8,) + _E8M0
                    or t.dim() != 2 or t.shape[1] < blocks or t.stride(1) != 1
                    or t.get_device() != dev):
                if t is None:
                    raise ValueError("kv_scales is missing (mxfp4 KV needs its e8m0 scales)")
                got = (f"{t.dtype} {list(t.shape)} with strides {list(t.stride())} on {t.device}"
                       if isinstance(t, torch.Tensor) else type(t).__name__)
                raise (ValueError if isinstance(t, torch.Tensor) and t.dtype in
                       (torch.uint8,) + _E8M0 else TypeError)(
                    f"kv_scales must be a 2-D uint8 / e8m0 tensor [rows, >= {blocks}] with "
                    f"unit column stride (padded rows allowed) on cuda:{dev}; got {got}")
        elif kv_scales is not None:
            raise ValueError(f"{self.name} takes no kv_scales (its KV is not mxfp4)")

    def _refuse(self, name, t, dtype, shape):
        if t is None:
            raise ValueError(f"{name} is missing")
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a tensor; got {type(t).__name__}")
        wrong_type = t.dtype != dtype and not (name == "kv" and t.dtype in self.kv_dtypes)
        raise (TypeError if wrong_type else ValueError)(
            f"{name} must be a contiguous {dtype} tensor of shape {shape} on "
                         f"cuda:{self.device}; got {t.dtype} {list(t.shape)} on {t.device}"
                         f"{'' if t.is_contiguous() else ' (not contiguous)'}")

    def decode(self, q, kv, kv_scale, qo_indptr, kv_indptr, batch, max_kv_len,
               kv_indptr_host=None, num_splits=0, validate=False, out=None, kv_indices=None,
               kv_scales=None):
        """One decode; returns the output (a new tensor). kv_indptr_host: a
        host copy of kv_indptr (a list or tuple), which lets the launcher
        pick the mask-free stage 1; num_splits: 0 (the launcher chooses) or
        one of the spec's split candidates. The kernels bound every read by
        kv's rows whatever the indptrs hold (a bad range gives that row
        zeros, docs/Reliability.md); validate=True copies both indptrs to
        the host (a synchronisation) and has the launcher refuse bad
        contents with a ValueError naming the entry instead. out: a
        tensor to write into instead of a new one (rows no valid qo_indptr
        entry names are left as they are). kv_indices: a token_indices
        spec's row list (SGLang / AITER), which kv_indptr indexes.
        kv_scales: an mxfp4 spec's e8m0 block scales [rows, blocks], padded
        rows allowed (the row stride is the tensor's)."""
        self.check_inputs(q, kv, kv_scale, qo_indptr, kv_indptr, batch, kv_scales)
        if (kv_indices is not None) != (self.kv_layout == "token_indices"):
            raise ValueError(f"kv_indices is {'given' if kv_indices is not None else 'missing'}; "
                             f"spec {self.name} has kv_layout {self.kv_layout!r}")
        if kv_indices is not None:
            self._check_index_tensor("kv_indices", kv_indices, 1)
        if self.mxfp4 and kv.dim() == 3:
            kv = kv.view(kv.shape[0], kv.shape[2])
        shape = (q.shape[0], self.heads, self.v_dim)
        if out is None:
            out = torch.empty(shape, dtype=self.out_dtype, device=self.torch_device)
        elif (not isinstance(out, torch.Tensor) or out.dtype != self.out_dtype
              or out.shape != shape or not out.is_contiguous()
              or out.get_device() != self.device):
            self._refuse("out", out, self.out_dtype, f"[{shape[0]}, {shape[1]}, {shape[2]}]")
        key = _plan_key(batch, max_kv_len, num_splits, kv_indptr_host)
        entry = self.entries.get(key)
        stream = _current_stream(self.device)
        if entry is None:
            entry = self._plan(key, q, kv, kv_scale, qo_indptr, kv_indptr, out, kv_indices)
        plan, args, workspaces, plan_ref, args_ref = entry
        args.q, args.kv, args.out = q.data_ptr(), kv.data_ptr(), out.data_ptr()
        args.qo_indptr, args.kv_indptr = qo_indptr.data_ptr(), kv_indptr.data_ptr()
        args.kv_rows = kv.shape[0]
        if kv_indices is not None:
            args.kv_indices, args.kv_indices_len = kv_indices.data_ptr(), kv_indices.shape[0]
        if kv_scale is not None:
            args.kv_scale = kv_scale.data_ptr()
        if kv_scales is not None:
            args.kv_scales = kv_scales.data_ptr()
            args.kv_scales_rows, args.kv_scales_stride = kv_scales.shape[0], kv_scales.stride(0)
        self._workspace(plan, args, workspaces, stream)
        if validate:
            self._run_validated(plan_ref, args, stream, qo_indptr, kv_indptr, kv_indices)
        else:
            self.context.run_ref(plan_ref, args_ref, stream)
        return out

    def _workspace(self, plan, args, workspaces, stream):
        if plan.workspace_bytes:
            # The plan's workspace, one per stream (FlashInfer keeps it with
            # the plan too): allocated once, so a call allocates only its
            # output. Kernels on one stream use it in order.
            ws = workspaces.get(stream)
            if ws is None:
                ws = workspaces[stream] = torch.empty(plan.workspace_bytes, dtype=torch.uint8,
                                                      device=self.torch_device)
            args.workspace = ws.data_ptr()

    def _check_index_tensor(self, name, t, rank):
        if (not isinstance(t, torch.Tensor) or t.dtype != torch.int32 or t.dim() != rank
                or not t.is_contiguous() or t.get_device() != self.device):
            self._refuse(name, t, torch.int32, "[n]" if rank == 1 else "[batch, max_pages]")

    def _run_validated(self, plan_ref, args, stream, qo_indptr, kv_indptr, table=None,
                       seqlens=None):
        """mla_decode_run with MLA_DECODE_VALIDATE and host copies of the
        device indptrs, lengths and page table (the launcher's check is the
        one rule), on a copy of the cached arguments: the cache keeps its
        own host copy, and the arrays made here live only as long as this
        call."""
        def host(t):  # a device tensor's contents as a host int32 array
            return (ctypes.c_int32 * t.numel())(*t.flatten().tolist())  # opt-in sync: validate

        checked = L.DecodeArgs.from_buffer_copy(args)
        keep = []
        for field, t in (("kv_indptr_host", kv_indptr), ("qo_indptr_host", qo_indptr),
                         ("page_table_host", table), ("cache_seqlens_host", seqlens)):
            if t is not None:
                keep.append(host(t))
                setattr(checked, field, keep[-1])
        checked.flags = L.DECODE_VALIDATE
        self.context.run_ref(plan_ref, ctypes.byref(checked), stream)

    def decode_paged(self, q, k_cache, kv_scale, block_table, cache_seqlens, max_kv_len=None,
                     cache_seqlens_host=None, num_splits=0, validate=False):
        """One decode of a block_table spec in FlashMLA's convention: q
        [batch, q_seq_len, heads, qk_dim] (or [batch x q_seq_len, heads,
        qk_dim]), k_cache [num_pages, page_size, 1, qk_dim] (or without the
        1), block_table [batch, max_pages] int32, cache_seqlens [batch]
        int32. Returns out [batch, q_seq_len, heads, v_dim] (a new tensor).
        max_kv_len (for the split choice) defaults to max_pages x page_size,
        which bounds every length without reading the device;
        cache_seqlens_host (a host copy) lets the launcher pick the
        mask-free stage 1. A table entry that names no page of the cache
        reads as zeros, a length the table cannot hold runs as zero;
        validate=True (a synchronisation) refuses both instead."""
        if self.kv_layout != "block_table":
            raise ValueError(f"spec {self.name} has kv_layout {self.kv_layout!r}, not "
                             f"'block_table'")
        if not isinstance(block_table, torch.Tensor) or block_table.dim() != 2:
            self._refuse("block_table", block_table, torch.int32, "[batch, max_pages]")
        batch, cols = block_table.shape
        self._check_index_tensor("block_table", block_table, 2)
        if (not isinstance(cache_seqlens, torch.Tensor) or cache_seqlens.dtype != torch.int32
                or cache_seqlens.shape != (batch,) or not cache_seqlens.is_contiguous()
                or cache_seqlens.get_device() != self.device):
            self._refuse("cache_seqlens", cache_seqlens, torch.int32, f"[{batch}]")
        if not isinstance(k_cache, torch.Tensor):
            self._refuse("k_cache", k_cache, self.kv_dtype, "")
        ks = k_cache.shape
        if (k_cache.dim() not in (3, 4) or ks[1] != self.page_size or ks[-1] != self.qk_dim
                or (k_cache.dim() == 4 and ks[2] != 1) or k_cache.dtype not in self.kv_dtypes
                or not k_cache.is_contiguous() or k_cache.get_device() != self.device):
            self._refuse("k_cache", k_cache, self.kv_dtype,
                         f"[num_pages, {self.page_size}, 1, {self.qk_dim}]")
        if isinstance(q, torch.Tensor) and q.dim() == 4:
            q = q.reshape(q.shape[0] * q.shape[1], q.shape[2], q.shape[3])
        if max_kv_len is None:
            max_kv_len = cols * self.page_size
        qo = self._qo_indptr(batch)
        kv = k_cache.reshape(ks[0] * ks[1], self.qk_dim)
        self.check_inputs(q, kv, kv_scale, qo, qo, batch)
        out = torch.empty((q.shape[0], self.heads, self.v_dim), dtype=self.out_dtype,
                          device=self.torch_device)
        key = ("paged", batch, cols, max_kv_len, num_splits,
               None if cache_seqlens_host is None else tuple(int(x) for x in cache_seqlens_host))
        entry = self.entries.get(key)
        stream = _current_stream(self.device)
        if entry is None:
            host = key[-1]
            if host is not None and len(host) != batch:
                raise ValueError(f"cache_seqlens_host has {len(host)} entries; batch {batch} "
                                 f"needs {batch}")
            args = L.DecodeArgs(q=q.data_ptr(), kv=kv.data_ptr(), qo_indptr=qo.data_ptr(),
                                out=out.data_ptr(), batch=batch, max_kv_len=max_kv_len,
                                num_splits=num_splits, kv_rows=kv.shape[0],
                                block_table=block_table.data_ptr(), block_table_cols=cols,
                                cache_seqlens=cache_seqlens.data_ptr(),
                                cache_seqlens_host=(ctypes.c_int32 * batch)(*host) if host
                                else None)
            if kv_scale is not None:
                args.kv_scale = kv_scale.data_ptr()
            plan = self._make_plan(args)
            args.workspace_bytes = plan.workspace_bytes
            if len(self.entries) > 256:
                self.entries.clear()
            entry = self.entries[key] = (plan, args, {}, ctypes.byref(plan), ctypes.byref(args))
        plan, args, workspaces, plan_ref, args_ref = entry
        args.q, args.kv, args.out, args.qo_indptr = (q.data_ptr(), kv.data_ptr(), out.data_ptr(),
                                                     qo.data_ptr())
        args.block_table, args.cache_seqlens = block_table.data_ptr(), cache_seqlens.data_ptr()
        args.kv_rows = kv.shape[0]
        if kv_scale is not None:
            args.kv_scale = kv_scale.data_ptr()
        self._workspace(plan, args, workspaces, stream)
        if validate:
            self._run_validated(plan_ref, args, stream, qo, None, block_table, cache_seqlens)
        else:
            self.context.run_ref(plan_ref, args_ref, stream)
        return out.view(batch, q.shape[0] // batch, self.heads, self.v_dim)

    def _qo_indptr(self, batch):
        """0, q_seq_len, 2 q_seq_len, ... on the device, made once per batch."""
        qo = self.entries.get(("qo", batch))
        if qo is None:
            qo = self.entries[("qo", batch)] = torch.arange(
                batch + 1, dtype=torch.int32, device=self.torch_device) * self.q_seq_len
        return qo

    def _make_plan(self, args):
        """mla_plan_decode: one launch or two as the spec's one_launch says
        (the launcher's rule), unless set_one_launch forces it; the flag is
        planning's only."""
        args.flags = (0 if _one_launch is None else
                      L.DECODE_ONE_LAUNCH if _one_launch else L.DECODE_TWO_LAUNCHES)
        try:
            return self.context.plan(args)
        finally:
            args.flags = 0

    def plan(self, batch, max_kv_len, num_splits=0, kv_indptr_host=None):
        """The plan decode() made and keeps for these arguments (None before
        the first such call): its split count, kernels and workspace."""
        entry = self.entries.get(_plan_key(batch, max_kv_len, num_splits, kv_indptr_host))
        return entry[0] if entry else None

    def _plan(self, key, q, kv, kv_scale, qo_indptr, kv_indptr, out, kv_indices=None):
        """mla_plan_decode for `key` = (batch, max_kv_len, num_splits, host
        lengths): the plan, the argument struct calls fill in, and the
        plan's workspaces by stream."""
        batch, max_kv_len, num_splits, host = key
        if host is not None and len(host) != batch + 1:
            raise ValueError(f"kv_indptr_host has {len(host)} entries; batch {batch} "
                             f"needs {batch + 1}")
        args = L.DecodeArgs(q.data_ptr(), kv.data_ptr(),
                            kv_scale.data_ptr() if kv_scale is not None else None,
                            qo_indptr.data_ptr(), kv_indptr.data_ptr(), out.data_ptr(), None, 0,
                            batch, max_kv_len,
                            (ctypes.c_int32 * len(host))(*host) if host else None, num_splits,
                            kv.shape[0])
        if kv_indices is not None:
            args.kv_indices, args.kv_indices_len = kv_indices.data_ptr(), kv_indices.shape[0]
        if self.mxfp4:  # planning reads no buffer; the real ones come per call
            args.kv_scales, args.kv_scales_stride = kv.data_ptr(), self.qk_dim // 32
        plan = self._make_plan(args)
        args.workspace_bytes = plan.workspace_bytes
        if len(self.entries) > 256:
            self.entries.clear()
        entry = self.entries[key] = (plan, args, {}, ctypes.byref(plan), ctypes.byref(args))
        return entry


def _plan_key(batch, max_kv_len, num_splits, kv_indptr_host):
    """What a plan depends on: Spec.entries' key."""
    host = None if kv_indptr_host is None else tuple(int(x) for x in kv_indptr_host)
    return (batch, max_kv_len, num_splits, host)


_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _current_stream(device_index):
    """torch's current stream as a CUstream / hipStream_t (the raw getter:
    torch.cuda.current_stream() alone cost 7 us per call on the H200 host)."""
    if _raw_stream is not None:
        return _raw_stream(device_index)
    return torch.cuda.current_stream(device_index).cuda_stream


_specs = {}
# None: each spec's own choice (its manifest's one_launch, which the
# launcher applies); True / False: MLA_DECODE_ONE_LAUNCH /
# MLA_DECODE_TWO_LAUNCHES on every plan.
_one_launch = None


def set_one_launch(on):
    """Plan the single launch for small batches where it applies: True for
    every spec, False for none, None for what each spec's `one_launch` says
    (the default, applied by the launcher). Drops the plans made so far."""
    global _one_launch
    _one_launch = None if on is None else bool(on)
    for s in _specs.values():
        s.entries = {k: v for k, v in s.entries.items() if k[0] == "qo"}
    if _fast is not None:
        _fast.forget()


def use_specs(kv_format, names=None):
    """The specs custom_kernel and spec_for try for `kv_format`, first
    found wins (None: those of the start, MLA_SPEC_<FORMAT> or
    _DEFAULT_SPECS); drops the choices and remembered calls made so far."""
    _SPECS[kv_format] = list(names) if names else list(_STARTING_SPECS[kv_format])
    _chosen.clear()
    if _fast is not None:
        _fast.forget()


_fast = mla_replay.load(_SPECS)


def spec_named(name, device=None):
    """The Spec `name` from $MLA_ARTIFACTS on `device` (default: current)."""
    s = _specs.get((name, device))
    if s is None:
        index = torch.cuda.current_device() if device is None else device
        s = _specs.get((name, index))
        if s is None:
            s = Spec(os.environ.get("MLA_ARTIFACTS", "artifacts"), name, index)
            _specs[(name, index)] = s
        _specs[(name, device)] = s
    return s


_chosen = {}


def shape_suffix(q_seq_len=1, heads=16, paging=None):
    """The spec-name suffix of a serving shape (kernels/): "" for the task's
    q_seq_len 1 x 16 heads, "_mtp2" for 2 query tokens, "_h128" for 128 heads,
    "_mtp2_h128" for both; then "_paged64" for a block table of 64-row pages
    (paging = 64) or "_kvindices" for a token list (paging = "indices")."""
    page = {None: "", "indices": "_kvindices"}.get(paging, f"_paged{paging}")
    return ((f"_mtp{q_seq_len}" if q_seq_len != 1 else "") +
            (f"_h{heads}" if heads != 16 else "") + page)


def spec_for(kv_format, device=None, q_seq_len=1, heads=16, paging=None):
    """The first spec of _SPECS[kv_format] (+ shape_suffix) found in
    $MLA_ARTIFACTS whose manifest has q_seq_len query tokens, `heads` heads
    and the KV layout `paging` asks for; ValueError naming the specs looked
    for when none is there."""
    key = (kv_format, device, q_seq_len, heads, paging)
    name = _chosen.get(key)
    if name is None:
        folder = os.environ.get("MLA_ARTIFACTS", "artifacts")
        suffix = shape_suffix(q_seq_len, heads, paging)
        names = [n + suffix for n in _SPECS[kv_format]]
        found = [n for n in names if os.path.exists(os.path.join(folder, n + ".json"))]
        if not found:
            if (q_seq_len, heads, paging) == (1, 16, None):
                # Spec() names the format's missing file.
                found = names
            else:
                layout = ("contiguous KV" if paging is None else "a token list (kv_indices)"
                          if paging == "indices" else f"a block table of {paging}-row pages")
                raise ValueError(
                    f"no compiled spec for kv_format {kv_format!r} with q_seq_len {q_seq_len}, "
                    f"{heads} heads and {layout} in {folder} (looked for {', '.join(names)}; "
                    f"compile one with mla-compile from a spec with q_seq_len = {q_seq_len}, "
                    f"num_heads = {heads} and that kv_layout / page_size)")
        name = found[0]
        path = os.path.join(folder, name + ".json")
        m = L.read_manifest(path) if os.path.exists(path) else None
        if m is not None and (m["q_seq_len"], m["num_heads"]) != (q_seq_len, heads):
            raise ValueError(f"spec {name} in {folder} has q_seq_len {m['q_seq_len']} and "
                             f"{m['num_heads']} heads; the inputs have {q_seq_len} and {heads}")
        want = ("contiguous", 1) if paging is None else ("token_indices", 1) \
            if paging == "indices" else ("block_table", paging)
        if m is not None and (m["kv_layout"], m["page_size"]) != want:
            raise ValueError(f"spec {name} in {folder} has kv_layout {m['kv_layout']!r} with "
                             f"page_size {m['page_size']}; the inputs need {want[0]!r} with "
                             f"{want[1]}")
        _chosen[key] = name
    return spec_named(name, device)


def _serving_shape(q, batch):
    """(q_seq_len, heads) of q [batch * q_seq_len, heads, qk_dim]. Inputs
    that have no such shape get the task's (1, 16): the chosen spec's
    checks then refuse them, naming the argument."""
    if (not isinstance(q, torch.Tensor) or q.dim() != 3 or not isinstance(batch, int)
            or batch <= 0 or q.shape[0] % batch or q.shape[0] == 0):
        return 1, 16
    return q.shape[0] // batch, q.shape[1]


# ---- the custom op ----------------------------------------------------------

_op_library = torch.library.Library("mla", "DEF")
_op_library.define(
    "decode(Tensor q, Tensor kv, Tensor? kv_scale, Tensor qo_indptr, Tensor kv_indptr, "
    "int batch, int max_kv_len, str spec, int[]? kv_indptr_host=None, int num_splits=0, "
    "bool validate=False, Tensor? kv_scales=None) -> Tensor")


def _decode_gpu(q, kv, kv_scale, qo_indptr, kv_indptr, batch, max_kv_len, spec,
                kv_indptr_host=None, num_splits=0, validate=False, kv_scales=None):
    return spec_named(spec, q.get_device()).decode(q, kv, kv_scale, qo_indptr, kv_indptr, batch,
                                                   max_kv_len, kv_indptr_host, num_splits,
                                                   validate, kv_scales=kv_scales)


_op_library.impl("decode", _decode_gpu, "CUDA")


@torch.library.register_fake("mla::decode")
def _decode_fake(q, kv, kv_scale, qo_indptr, kv_indptr, batch, max_kv_len, spec,
                 kv_indptr_host=None, num_splits=0, validate=False, kv_scales=None):
    m = L.read_manifest(os.path.join(os.environ.get("MLA_ARTIFACTS", "artifacts"),
                                     spec + ".json"))
    return q.new_empty((q.shape[0], m["num_heads"], m["v_dim"]), dtype=_TORCH_TYPE[m["out_type"]])


_op_library.define(
    "decode_paged(Tensor q, Tensor k_cache, Tensor? kv_scale, Tensor block_table, "
    "Tensor cache_seqlens, str spec, int max_kv_len=-1, bool validate=False) -> Tensor")


def _decode_paged_gpu(q, k_cache, kv_scale, block_table, cache_seqlens, spec, max_kv_len=-1,
                      validate=False):
    return spec_named(spec, q.get_device()).decode_paged(
        q, k_cache, kv_scale, block_table, cache_seqlens,
        None if max_kv_len < 0 else max_kv_len, validate=validate)


_op_library.impl("decode_paged", _decode_paged_gpu, "CUDA")


@torch.library.register_fake("mla::decode_paged")
def _decode_paged_fake(q, k_cache, kv_scale, block_table, cache_seqlens, spec, max_kv_len=-1,
                       validate=False):
    m = L.read_manifest(os.path.join(os.environ.get("MLA_ARTIFACTS", "artifacts"),
                                     spec + ".json"))
    return q.new_empty((q.shape[0], q.shape[1], m["num_heads"], m["v_dim"]),
                       dtype=_TORCH_TYPE[m["out_type"]])


def decode(q, kv, kv_scale, qo_indptr, kv_indptr, batch, max_kv_len, kv_format="fp8",
           kv_indptr_host=None, validate=False, kv_scales=None):
    """torch.ops.mla.decode with the spec chosen for kv_format (mxfp4:
    kv_scales holds the e8m0 block scales)."""
    return torch.ops.mla.decode(q, kv, kv_scale, qo_indptr, kv_indptr, batch, max_kv_len,
                                spec_for(kv_format, q.get_device(),
                                         *_serving_shape(q, batch)).name,
                                None if kv_indptr_host is None else list(kv_indptr_host),
                                0, validate, kv_scales)


def _as_kernel_inputs(s, q, kv, scale, qo_indptr, kv_indptr):
    """The inputs in the kernels' layout: the caller's tensors where they
    already have it (q contiguous in the spec's type, KV rows of qk_dim,
    fp32 scale, int32 indptrs), converted copies otherwise."""
    kv = kv.reshape(kv.shape[0], -1)
    if s.kv_dtype != torch.bfloat16 and kv.dtype in (torch.uint8, torch.int8):
        kv = kv.view(s.kv_dtype)

    def conv(t, dtype):
        return t if t.dtype == dtype and t.is_contiguous() else t.to(dtype).contiguous()
    return (conv(q, s.q_dtype), conv(kv, s.kv_dtype),
            None if scale is None else conv(scale.reshape(1), torch.float32),
            conv(qo_indptr, torch.int32), conv(kv_indptr, torch.int32))


def _config_check(s, config):
    """config's shape keys against the compiled spec (ValueError naming the
    key); the keys the task's config carries, each optional."""
    want = {"num_heads": s.heads, "qk_head_dim": s.qk_dim, "v_head_dim": s.v_dim,
            "kv_lora_rank": s.v_dim, "qk_rope_head_dim": s.qk_dim - s.v_dim,
            "num_kv_heads": 1, "q_seq_len": s.q_seq_len}
    for key, value in want.items():
        if key in config and config[key] != value:
            raise ValueError(f"config['{key}'] is {config[key]!r}; spec {s.name} was compiled "
                             f"for {value}")
    scale = config.get("sm_scale")
    if scale is not None and abs(scale - s.softmax_scale) > 1e-6 * abs(s.softmax_scale):
        raise ValueError(f"config['sm_scale'] is {scale!r}; spec {s.name} was compiled for "
                         f"{s.softmax_scale!r}")
    for key in ("batch_size", "kv_seq_len"):
        if not isinstance(config.get(key), int):
            raise ValueError(f"config['{key}'] must be an int; got {config.get(key)!r}")


def custom_kernel(data):
    if _fast is not None:
        # A call like one this path accepted before (same config values,
        # tensor dtypes, shapes, strides, devices and stream): replayed in
        # C++ (python/mla_torch_fast.cpp), the launcher's checks included.
        out = _fast.lookup(data)
        if out is not None:
            return out
    q, kv_data, qo_indptr, kv_indptr, config = data
    fmt = config.get("kv_format", "fp8")
    if fmt not in _SPECS:
        raise ValueError(f"config['kv_format'] is {fmt!r}; the compiled specs take "
                         f"{', '.join(sorted(_SPECS))}")
    src = kv_data.get(fmt) if isinstance(kv_data, dict) else None
    if src is None:
        raise ValueError(f"kv_data has no {fmt!r} entry (config['kv_format'] is {fmt!r})")
    scales = None
    if fmt == "fp8":
        if not isinstance(src, (tuple, list)) or len(src) != 2:
            raise TypeError("kv_data['fp8'] must be a (codes, scale) pair")
        kv, scale = src
    elif fmt == "mxfp4":
        if not isinstance(src, (tuple, list)) or len(src) != 2:
            raise TypeError("kv_data['mxfp4'] must be a (data, scales) pair")
        (kv, scales), scale = src, None
    else:
        kv, scale = src, None
    device = q.get_device() if isinstance(q, torch.Tensor) and q.is_cuda else None
    # The serving shape from the inputs (config's q_seq_len and num_heads,
    # when given, must agree: _config_check), then the spec compiled for it.
    # config["kv_indices"] (SGLang / AITER's token list, which kv_indptr
    # then indexes) picks the spec compiled for it.
    kv_indices = config.get("kv_indices")
    batch = config.get("batch_size")
    s = spec_for(fmt, device, *_serving_shape(q, batch),
                 paging=None if kv_indices is None else "indices")
    _config_check(s, config)
    # Spec.decode is what torch.ops.mla.decode runs; called directly here it
    # saves the dispatcher's ~5 us of host time per call (probe_host.py).
    # Inputs must already be in the kernels' dtypes (TypeError otherwise);
    # _as_kernel_inputs converts for callers that want that.
    # config["validate"] = True checks the indptrs' contents on the host
    # (one synchronisation) and raises ValueError on bad ones.
    validate = bool(config.get("validate", False))
    out = s.decode(q, kv, scale, qo_indptr, kv_indptr, config["batch_size"],
                   config["kv_seq_len"], config.get("kv_indptr_host"),
                   validate=validate, kv_indices=kv_indices, kv_scales=scales)
    if (_fast is not None and fmt in ("fp8", "bf16") and kv_indices is None and not validate
            and config.get("kv_indptr_host") is None):
        _remember(data, s, config)
    return out


def _remember(data, s, config):
    """Hands the call the Python path just accepted to mla_torch_fast, with
    the plan entry and stream it ran with (mla_replay.remember)."""
    entry = s.entries.get(_plan_key(config["batch_size"], config["kv_seq_len"], 0, None))
    if entry is not None:
        mla_replay.remember(_fast, data, s, entry, _current_stream(s.device))


def mla_with_kvcache(q, k_cache, block_table, cache_seqlens, kv_scale=None, max_kv_len=None,
                     cache_seqlens_host=None, validate=False):
    """FlashMLA's flash_mla_with_kvcache convention (causal for several
    query tokens, softmax scale and dims from the spec): q [batch,
    q_seq_len, heads, 576] bf16, k_cache [num_pages, page_size, 1, 576] bf16,
    or fp8 (float8_e4m3fn / uint8 codes) with kv_scale (one float32),
    block_table [batch, max_pages] int32, cache_seqlens [batch] int32.
    Returns out [batch, q_seq_len, heads, 512]; no LSE (the kernels keep
    it in the workspace). The spec is the one compiled for this KV format,
    shape and page size (spec_for; ValueError naming what is missing).
    Never reads device memory on the host unless validate=True, so it can
    be captured in a CUDA graph; torch.ops.mla.decode_paged (spec named)
    is the same as a custom op, for torch.compile."""
    for name, t in (("q", q), ("k_cache", k_cache)):
        if not isinstance(t, torch.Tensor) or t.dim() != 4:
            raise ValueError(f"{name} must be a 4-d tensor; got "
                             f"{list(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__}")
    fmt = "bf16" if k_cache.dtype == torch.bfloat16 else "fp8"
    s = spec_for(fmt, q.get_device() if q.is_cuda else None, q.shape[1], q.shape[2],
                 paging=k_cache.shape[1])
    return s.decode_paged(q, k_cache, kv_scale, block_table, cache_seqlens, max_kv_len,
                          cache_seqlens_host, validate=validate)
