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
import numbers
import os

import torch

import mla_launcher as L
import mla_replay
import mla_spec
# Spec (one compiled spec on one device: its checks, plans and runs) and
# its helpers live in python/mla_spec.py; the names stay importable here.
from mla_spec import (Spec, TORCH_TYPE as _TORCH_TYPE, current_stream as _current_stream,
                      plan_key as _plan_key)

# The specs tried for each KV format, first found in the artifacts wins;
# MLA_SPEC_FP8 / MLA_SPEC_BF16 name one (e.g. deepseek_r1_decode_fp8_qp8, or
# deepseek_r1_decode_fp8_qp8_sm90a: fp8 Q and P on sm_90a's e4m3 wgmma, with
# its _mtp2 twin for q_seq_len 2; Q scaled per program by a power of two
# that fits its largest |q| to e4m3's range, so any magnitude is fine; or
# deepseek_r1_decode_fp8_e4m3x2_sm90a: the same e4m3 products with Q and P
# each as two e4m3 terms, ~4e-3 error instead of ~3e-2, docs/Design.md).
# fp8 KV, where compiled: Q and P each as two e4m3 terms on sm_90a's e4m3
# wgmma with two KV tiles in flight (`_e4m3x2_db`, built by make artifacts
# with --e4m3-double-buffer; ~3e-3 error; the H200, 2026-12-07: 3.8 TB/s at
# 256 x 8192 against 3.5 for qp16, faster or level on every task shape of
# 32K KV tokens or more, docs/Performance.md), for calls of at least
# _MIN_KV_TOKENS' entry; else, and for the shorter calls (4 x 1024: its
# longer prologue 0.9 us slower in a one-tile program), Q and P in f16
# (qp_type = f16; on sm_90 1.3x faster than bf16 Q/P and more accurate;
# contract |q| <= 65504, see docs/PerformanceLog.md) on sm_90a's wgmma (K
# converted in registers as wgmma's register A, faster than sm_90's
# mma.sync spec on every task shape and every serving shape measured), else
# sm_90's, else the bf16-Q/P spec. Serving shapes (spec_for's suffixes) take
# the first spec compiled for them.
_DEFAULT_SPECS = {"fp8": ["deepseek_r1_decode_fp8_e4m3x2_db_sm90a",
                          "deepseek_r1_decode_fp8_qp16_sm90a", "deepseek_r1_decode_fp8_qp16",
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
# A spec named here is passed over for calls of fewer KV tokens (batch x
# kv_seq_len, or batch x max_kv_len) than its entry, unless no other spec of
# the list is left (so MLA_SPEC_FP8 naming it keeps it for every call).
_MIN_KV_TOKENS = {"deepseek_r1_decode_fp8_e4m3x2_db_sm90a": 16384}
_SPECS = {k: [os.environ[f"MLA_SPEC_{k.upper()}"]] if f"MLA_SPEC_{k.upper()}" in os.environ
          else list(v) for k, v in _DEFAULT_SPECS.items()}
_STARTING_SPECS = {k: list(v) for k, v in _SPECS.items()}  # use_specs(fmt) restores
_specs = {}  # (name, device) -> Spec


def set_one_launch(on):
    """Plan the single launch for small batches where it applies: True for
    every spec, False for none, None for what each spec's `one_launch` says
    (the default, applied by the launcher). Drops the plans made so far."""
    mla_spec.one_launch = None if on is None else bool(on)
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


def spec_for(kv_format, device=None, q_seq_len=1, heads=16, paging=None, kv_tokens=None):
    """The first spec of _SPECS[kv_format] (+ shape_suffix) found in
    $MLA_ARTIFACTS whose manifest has q_seq_len query tokens, `heads` heads
    and the KV layout `paging` asks for, passing over those whose
    _MIN_KV_TOKENS entry exceeds `kv_tokens` (the call's batch x kv length;
    None: a call of any length); ValueError naming the specs looked for when
    none is there."""
    listed = _SPECS[kv_format]
    eligible = [n for n in listed
                if kv_tokens is None or kv_tokens >= _MIN_KV_TOKENS.get(n, 0)] or listed
    key = (kv_format, device, q_seq_len, heads, paging, len(listed) - len(eligible))
    name = _chosen.get(key)
    if name is None:
        folder = os.environ.get("MLA_ARTIFACTS", "artifacts")
        suffix = shape_suffix(q_seq_len, heads, paging)
        names = [n + suffix for n in eligible]
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


def _kv_tokens(batch, kv_len):
    """batch x kv_len where both are integers (spec_for's kv_tokens; numpy's
    too), else None; the checks after the choice answer other values."""
    ok = all(isinstance(v, numbers.Integral) and not isinstance(v, bool)
             for v in (batch, kv_len))
    return int(batch) * int(kv_len) if ok else None


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
                                         *_serving_shape(q, batch),
                                         kv_tokens=_kv_tokens(batch, max_kv_len)).name,
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
                 paging=None if kv_indices is None else "indices",
                 kv_tokens=_kv_tokens(batch, config.get("kv_seq_len")))
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
    # The call's KV tokens for the choice (_MIN_KV_TOKENS) without reading
    # device memory: batch x max_kv_len where given, else x the longest of
    # cache_seqlens_host, else the block table's capacity (batch x its
    # columns x the page size), an upper bound.
    table_2d = isinstance(block_table, torch.Tensor) and block_table.dim() == 2
    kv_len = max_kv_len
    if kv_len is None and cache_seqlens_host is not None:
        try:  # decode_paged's checks answer lengths that are no integers
            kv_len = max((int(n) for n in cache_seqlens_host), default=None)
        except (TypeError, ValueError):
            pass
    if kv_len is None and table_2d:
        kv_len = block_table.shape[1] * k_cache.shape[1]
    s = spec_for(fmt, q.get_device() if q.is_cuda else None, q.shape[1], q.shape[2],
                 paging=k_cache.shape[1],
                 kv_tokens=_kv_tokens(block_table.shape[0], kv_len) if table_2d else None)
    return s.decode_paged(q, k_cache, kv_scale, block_table, cache_seqlens, max_kv_len,
                          cache_seqlens_host, validate=validate)
