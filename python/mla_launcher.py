"""ctypes binding of the C launcher (lib/Launcher/include/mla/launcher.h).

No torch, no launch rule: the manifest reader (docs/Manifest.md), the
launcher's descriptor structs, and a Context that creates, plans and runs
through the launcher's shared library (libmla_launcher-<driver>.so, built in
<build>/lib and copied beside the code objects by `make artifacts`). The
split count, the stage-1 variant, whether stage 2 runs, validation and
argument packing are the launcher's; python/mla_torch.py adds tensors.
"""
import ctypes
import json
import os

MANIFEST_VERSION = 3
ABI_VERSION = 11
DECODE_VALIDATE = 1  # mla_decode_args.flags: MLA_DECODE_VALIDATE
DECODE_ONE_LAUNCH = 2  # MLA_DECODE_ONE_LAUNCH: stage 1 combines in one cluster where it can
DECODE_TWO_LAUNCHES = 4  # MLA_DECODE_TWO_LAUNCHES: never, whatever the spec's one_launch

_c64, _vp, _cs, _ci = ctypes.c_int64, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int


class ArgDesc(ctypes.Structure):  # mla_arg_desc
    _fields_ = [("name", _cs), ("kind", _ci), ("rank", _ci), ("shape", _c64 * 4)]


class KernelDesc(ctypes.Structure):  # mla_kernel_desc
    _fields_ = [("name", _cs), ("stage", _ci), ("mask_free", _ci),
                ("dispatch_kv_multiple", _c64), ("grid", _ci * 2),
                ("block_threads", _ci), ("shared_bytes", _ci), ("programs_per_cu", _ci),
                ("dependent_launch", _ci), ("cluster_programs", _ci), ("num_args", _ci),
                ("args", ctypes.POINTER(ArgDesc))]


class TargetDesc(ctypes.Structure):  # mla_target_desc
    _fields_ = [("chip", _cs), ("code", _vp), ("code_size", ctypes.c_size_t),
                ("code_file", _cs), ("code_dir", _cs), ("compute_units", _ci),
                ("num_kernels", _ci), ("kernels", ctypes.POINTER(KernelDesc))]


class SpecDesc(ctypes.Structure):  # mla_spec_desc
    _fields_ = [("abi_version", _ci), ("name", _cs),
                ("num_heads", _ci), ("qk_dim", _ci), ("v_dim", _ci), ("block_n", _ci),
                ("q_seq_len", _ci), ("block_m", _ci), ("kv_layout", _ci), ("page_size", _ci),
                ("softmax_scale", ctypes.c_double),
                ("q_type", _cs), ("kv_type", _cs), ("out_type", _cs), ("has_kv_scale", _ci),
                ("num_split_candidates", _ci), ("split_candidates", ctypes.POINTER(_c64)),
                ("program_overhead", ctypes.c_double), ("combine_launch", ctypes.c_double),
                ("combine_per_partial", ctypes.c_double), ("combine_per_split", ctypes.c_double),
                ("num_targets", _ci), ("targets", ctypes.POINTER(TargetDesc)),
                ("one_launch", _ci)]


class DecodeArgs(ctypes.Structure):  # mla_decode_args
    _fields_ = [("q", _vp), ("kv", _vp), ("kv_scale", _vp), ("qo_indptr", _vp),
                ("kv_indptr", _vp), ("out", _vp), ("workspace", _vp),
                ("workspace_bytes", ctypes.c_size_t), ("batch", _c64), ("max_kv_len", _c64),
                ("kv_indptr_host", ctypes.POINTER(ctypes.c_int32)), ("num_splits", _c64),
                ("kv_rows", _c64), ("qo_indptr_host", ctypes.POINTER(ctypes.c_int32)),
                ("flags", ctypes.c_uint32),
                ("kv_indices", _vp), ("kv_indices_len", _c64),
                ("block_table", _vp), ("block_table_cols", _c64),
                ("cache_seqlens", _vp), ("cache_seqlens_host", ctypes.POINTER(ctypes.c_int32)),
                ("page_table_host", ctypes.POINTER(ctypes.c_int32)),
                ("kv_scales", _vp), ("kv_scales_rows", _c64), ("kv_scales_stride", _c64)]


class DecodePlan(ctypes.Structure):  # mla_decode_plan
    _fields_ = [("splits", _c64), ("stage1", _cs), ("stage2", _cs),
                ("workspace_bytes", ctypes.c_size_t), ("batch", _c64), ("max_kv_len", _c64),
                ("mask_free", _ci), ("context", _vp), ("cluster_splits", _c64)]


STRUCTS = (ArgDesc, KernelDesc, TargetDesc, SpecDesc, DecodeArgs, DecodePlan)

_ARG_KIND = {"memref": 0, "i64": 1, "f32": 2, "tensor_map": 3}
_GRID = {"one": 0, "batch": 1, "splits": 2, "heads": 3, "rows": 4, "batch_row_groups": 5}
KV_LAYOUTS = {"contiguous": 0, "token_indices": 1, "block_table": 2}  # mla_kv_layout

# Keys every manifest has (docs/Manifest.md); kernels' keys below.
_REQUIRED = ("manifest_version", "spec", "chip", "binary", "compute_units", "num_heads",
             "qk_dim", "v_dim", "block_n", "q_seq_len", "block_m", "kv_layout", "page_size",
             "q_type", "kv_type", "out_type",
             "kv_scale", "softmax_scale", "split_candidates", "split_cost_model", "kernels")
_REQUIRED_KERNEL = ("name", "stage", "grid", "block_threads", "shared_bytes", "args")


class LauncherError(RuntimeError):
    """A launcher call failed; the message is mla_last_error()'s sentence."""


class LauncherArgumentError(LauncherError, ValueError):
    """The launcher refused an argument (MLA_ERROR_INVALID_ARGUMENT,
    _MISALIGNED, _WORKSPACE_TOO_SMALL): also a ValueError."""


_ARGUMENT_STATUSES = (1, 2, 3)


def read_manifest(path):
    """A manifest as a dict, its version and required keys checked: the
    Python reader of docs/Manifest.md."""
    with open(path) as f:
        m = json.load(f)
    if m.get("manifest_version") != MANIFEST_VERSION:
        raise ValueError(f"{path}: manifest_version is {m.get('manifest_version')!r}; this "
                         f"reader takes {MANIFEST_VERSION} (recompile with this mla-compile)")
    for key in _REQUIRED:
        if key not in m:
            raise ValueError(f"{path}: the manifest has no '{key}'")
    for k in m["kernels"]:
        for key in _REQUIRED_KERNEL:
            if key not in k:
                raise ValueError(f"{path}: kernel {k.get('name', '?')} has no '{key}'")
    return m


def load_library(path, driver):
    """The launcher's shared library at `path`, its API typed; `driver` is
    the backend it was built with ("cuda", "hip")."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} is missing: run `make artifacts` (it copies the "
                                f"launcher library beside the code objects)")
    # PyDLL, not CDLL: calls keep the GIL. Callers fill one argument struct
    # per plan (mla_torch.Spec) and run it; with the GIL released during
    # mla_decode_run, another thread could rewrite that struct's pointers
    # while the launcher reads them. A launch is microseconds.
    lib = ctypes.PyDLL(path)
    lib.mla_status_name.restype = _cs
    lib.mla_status_name.argtypes = [_ci]
    lib.mla_last_error.restype = _cs
    lib.mla_context_create.argtypes = [ctypes.POINTER(SpecDesc), _cs, _ci,
                                       ctypes.POINTER(_vp), ctypes.POINTER(_vp)]
    lib.mla_plan_decode.argtypes = [_vp, ctypes.POINTER(DecodeArgs), ctypes.POINTER(DecodePlan)]
    lib.mla_decode_run.argtypes = [_vp, ctypes.POINTER(DecodePlan), ctypes.POINTER(DecodeArgs),
                                   _vp]
    lib.mla_context_destroy.argtypes = [_vp]
    backend = getattr(lib, f"mla_backend_{driver}")
    backend.restype = _vp
    lib.backends = (_vp * 2)(backend(), None)
    return lib


class SpecDescriptor:
    """A manifest and its code object as the launcher's mla_spec_desc (one
    target); keeps every buffer the descriptor points into alive."""

    def __init__(self, manifest, code):
        m = self.manifest = manifest
        self.code = code
        keep = self._keep = []

        def s(text):
            b = text.encode()
            keep.append(b)
            return b
        kernels = (KernelDesc * len(m["kernels"]))()
        for kd, k in zip(kernels, m["kernels"]):
            args = (ArgDesc * len(k["args"]))()
            for ad, a in zip(args, k["args"]):
                ad.name, ad.kind, ad.rank = s(a["name"]), _ARG_KIND[a["kind"]], a.get("rank", 0)
                for i, d in enumerate(a.get("shape", [])):
                    ad.shape[i] = -1 if d is None else d
            keep.append(args)
            kd.name, kd.stage = s(k["name"]), k["stage"]
            kd.mask_free = int(k.get("variant") == "mask_free")
            kd.dispatch_kv_multiple = k.get("dispatch_kv_multiple", 0)
            kd.grid[0], kd.grid[1] = (_GRID[g] for g in k["grid"])
            kd.block_threads, kd.shared_bytes = k["block_threads"], k["shared_bytes"]
            kd.programs_per_cu = k.get("resources", {}).get("programs_per_cu", 1)
            kd.dependent_launch = int(k.get("dependent_launch", False))
            kd.cluster_programs = int(k.get("cluster_programs", 0))
            kd.num_args, kd.args = len(k["args"]), args
        cands = (_c64 * len(m["split_candidates"]))(*m["split_candidates"])
        code_buf = ctypes.create_string_buffer(code, len(code))
        self.target = TargetDesc(s(m["chip"]), ctypes.addressof(code_buf), len(code), None, None,
                                 m["compute_units"], len(kernels), kernels)
        model = m["split_cost_model"]
        self.desc = SpecDesc(ABI_VERSION, s(m["spec"]), m["num_heads"], m["qk_dim"], m["v_dim"],
                             m["block_n"], m["q_seq_len"], m["block_m"],
                             KV_LAYOUTS.get(m["kv_layout"], -1), m["page_size"], m["softmax_scale"],
                             s(m["q_type"]), s(m["kv_type"]), s(m["out_type"]),
                             int(m["kv_scale"] == "per_tensor"), len(cands), cands,
                             model["program_overhead"], model["combine_launch"],
                             model["combine_per_partial"], model.get("combine_per_split", 0.0),
                             1, ctypes.pointer(self.target), int(m.get("one_launch", False)))
        keep += [kernels, cands, code_buf]

    @classmethod
    def from_folder(cls, folder, name):
        m = read_manifest(os.path.join(folder, name + ".json"))
        with open(os.path.join(folder, m["binary"]), "rb") as f:
            return cls(m, f.read())


class Context:
    """mla_context_create for a SpecDescriptor on `device`: plan and run
    through the launcher."""

    def __init__(self, lib, spec, device):
        self.lib, self.spec = lib, spec
        self.name = spec.manifest["spec"]
        ctx = _vp()
        self._check(lib.mla_context_create(ctypes.byref(spec.desc),
                                           spec.manifest["chip"].encode(), device,
                                           lib.backends, ctypes.byref(ctx)))
        self.ctx = ctx

    def _check(self, status):
        if status:
            cls = LauncherArgumentError if status in _ARGUMENT_STATUSES else LauncherError
            raise cls(f"{self.name}: {self.lib.mla_last_error().decode()}")

    def __del__(self):
        if getattr(self, "ctx", None):
            self.lib.mla_context_destroy(self.ctx)

    def plan(self, args):
        """mla_plan_decode for `args` (a DecodeArgs): a new DecodePlan.
        Callers keep the plans they reuse (mla_torch.Spec, one per shape)."""
        p = DecodePlan()
        self._check(self.lib.mla_plan_decode(self.ctx, ctypes.byref(args), ctypes.byref(p)))
        return p

    def run(self, plan, args, stream):
        self.run_ref(ctypes.byref(plan), ctypes.byref(args), stream)

    def run_ref(self, plan_ref, args_ref, stream):
        """run() with ctypes.byref() of the plan and arguments made once."""
        status = self.lib.mla_decode_run(self.ctx, plan_ref, args_ref, stream)
        if status:
            self._check(status)
