"""custom_kernel's remembered calls: loads python/mla_torch_fast.cpp's
module (built by python/build_torch_fast.py) and hands it the calls that
custom_kernel's Python path accepted (python/mla_torch.py). No check and no
launch rule here: the Python path decides, the module replays.
"""
import ctypes
import importlib.machinery
import importlib.util
import os
import sysconfig
import warnings

import torch

import mla_launcher as L


def load(specs):
    """The module from $MLA_ARTIFACTS when it is there, built for this torch
    and this launcher ABI, and MLA_TORCH_FAST is not 0; else None. Bound to
    `specs` (mla_torch._SPECS): a remembered call matches only under the
    spec list it was chosen from."""
    if os.environ.get("MLA_TORCH_FAST", "1") == "0" or torch.version.hip:
        return None
    path = os.path.join(os.environ.get("MLA_ARTIFACTS", "artifacts"),
                        "mla_torch_fast" + sysconfig.get_config_var("EXT_SUFFIX"))
    if not os.path.exists(path):
        return None
    loader = importlib.machinery.ExtensionFileLoader("mla_torch_fast", path)
    spec = importlib.util.spec_from_file_location("mla_torch_fast", path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    if module.TORCH_VERSION != torch.__version__ or module.ABI_VERSION != L.ABI_VERSION:
        warnings.warn(f"{path} was built for torch {module.TORCH_VERSION} and launcher ABI "
                      f"{module.ABI_VERSION} (this is torch {torch.__version__}, ABI "
                      f"{L.ABI_VERSION}): not used; rebuild it with "
                      f"python/build_torch_fast.py")
        return None
    module.bind(specs)
    return module


def remember(module, data, spec, entry, stream):
    """Hands `module` the call `data` that the Python path just ran with
    `spec`'s plan entry `entry` on `stream`: the context, plan, argument
    struct, launcher entry point and workspace it used, and references that
    keep them alive."""
    plan, args, workspaces, _, _ = entry
    ws = workspaces.get(stream)
    module.remember(data, spec.context.ctx.value, ctypes.addressof(plan),
                    ctypes.addressof(args),
                    ctypes.cast(spec.context.lib.mla_decode_run, ctypes.c_void_p).value,
                    spec.out_dtype, spec.heads, spec.v_dim, stream or 0,
                    ws.data_ptr() if ws is not None else 0, (spec, entry, ws),
                    spec.context._check)
