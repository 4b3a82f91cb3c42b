"""One compiled spec on one device, for PyTorch: its launcher context
(python/mla_launcher.py), the checks of the tensors a call passes against
the spec's manifest (what the launcher cannot see: device, dtype, shape,
layout) and the plans it made (mla_plan_decode), kept per batch, length
and host lengths with the argument struct each call fills in.

python/mla_torch.py picks the spec for a call (spec_for, custom_kernel)
and registers the custom ops; this module holds no launch rule either:
every split count, variant and check of the arguments' contents is the
launcher's.
"""
import ctypes
import os

import torch

import mla_launcher as L

# mxfp4 KV: the packed bytes as uint8 / int8 or torch's fp4x2 type, the
# scales as uint8 or torch's e8m0 type (those that this torch has).
_FP4X2 = tuple(getattr(torch, n) for n in ("float4_e2m1fn_x2",) if hasattr(torch, n))
_E8M0 = tuple(getattr(torch, n) for n in ("float8_e8m0fnu",) if hasattr(torch, n))

TORCH_TYPE = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
               "f8E4M3FN": torch.float8_e4m3fn, "f8E4M3FNUZ": torch.float8_e4m3fnuz,
               "f4E2M1FN": torch.uint8}
# None: each spec's own choice (its manifest's one_launch, which the
# launcher applies); True / False: MLA_DECODE_ONE_LAUNCH /
# MLA_DECODE_TWO_LAUNCHES on every plan (mla_torch.set_one_launch).
one_launch = None


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
        self.q_dtype, self.kv_dtype = TORCH_TYPE[m["q_type"]], TORCH_TYPE[m["kv_type"]]
        self.out_dtype = TORCH_TYPE[m["out_type"]]
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
        key = plan_key(batch, max_kv_len, num_splits, kv_indptr_host)
        entry = self.entries.get(key)
        stream = current_stream(self.device)
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
        stream = current_stream(self.device)
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
        args.flags = (0 if one_launch is None else
                      L.DECODE_ONE_LAUNCH if one_launch else L.DECODE_TWO_LAUNCHES)
        try:
            return self.context.plan(args)
        finally:
            args.flags = 0

    def plan(self, batch, max_kv_len, num_splits=0, kv_indptr_host=None):
        """The plan decode() made and keeps for these arguments (None before
        the first such call): its split count, kernels and workspace."""
        entry = self.entries.get(plan_key(batch, max_kv_len, num_splits, kv_indptr_host))
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


def plan_key(batch, max_kv_len, num_splits, kv_indptr_host):
    """What a plan depends on: Spec.entries' key."""
    host = None if kv_indptr_host is None else tuple(int(x) for x in kv_indptr_host)
    return (batch, max_kv_len, num_splits, host)


_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def current_stream(device_index):
    """torch's current stream as a CUstream / hipStream_t (the raw getter:
    torch.cuda.current_stream() alone cost 7 us per call on the H200 host)."""
    if _raw_stream is not None:
        return _raw_stream(device_index)
    return torch.cuda.current_stream(device_index).cuda_stream
