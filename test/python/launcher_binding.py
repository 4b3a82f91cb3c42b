"""Checks python/mla_launcher.py (the ctypes binding of the C launcher)
without a GPU or torch:

  1. every ctypes struct has the size and field offsets of its C struct in
     mla/launcher.h (a C program built with `cc` prints them);
  2. the manifests mla-compile wrote read back (read_manifest) and become
     launcher descriptors; a manifest of another version is refused;
  3. a gfx950 descriptor built in Python passes the launcher's own
     validation in mla_context_create and reaches the HIP backend of
     libmla_launcher-hip.so, which finds no device here.

usage: launcher_binding.py SRC_ROOT LIB_DIR MANIFEST_DIR
"""
import ctypes
import json
import os
import subprocess
import sys
import tempfile

src, lib_dir, manifests = sys.argv[1:4]
sys.path.insert(0, os.path.join(src, "python"))
import mla_launcher as L  # noqa: E402

C_NAMES = {L.ArgDesc: "mla_arg_desc", L.KernelDesc: "mla_kernel_desc",
           L.TargetDesc: "mla_target_desc", L.SpecDesc: "mla_spec_desc",
           L.DecodeArgs: "mla_decode_args", L.DecodePlan: "mla_decode_plan"}

# 1. Layouts.
lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "mla/launcher.h"',
         "int main(void) {"]
for cls, cname in C_NAMES.items():
    lines.append(f'  printf("{cname} size %zu\\n", sizeof({cname}));')
    for field, _ in cls._fields_:
        lines.append(f'  printf("{cname}.{field} %zu\\n", offsetof({cname}, {field}));')
lines.append(f'  printf("abi %d\\n", MLA_LAUNCHER_ABI_VERSION);')
lines.append("  return 0;\n}")
with tempfile.TemporaryDirectory() as tmp:
    c = os.path.join(tmp, "layout.c")
    exe = os.path.join(tmp, "layout")
    with open(c, "w") as f:
        f.write("\n".join(lines))
    subprocess.check_call([os.environ.get("CC", "cc"), "-std=c99", "-I",
                           os.path.join(src, "lib/Launcher/include"), c, "-o", exe])
    from_c = dict(l.rsplit(" ", 1) for l in subprocess.check_output([exe], text=True).split("\n")
                  if l)
from_py = {"abi": str(L.ABI_VERSION)}
for cls, cname in C_NAMES.items():
    from_py[f"{cname} size"] = str(ctypes.sizeof(cls))
    for field, _ in cls._fields_:
        from_py[f"{cname}.{field}"] = str(getattr(cls, field).offset)
bad = {k: (from_c.get(k), v) for k, v in from_py.items() if from_c.get(k) != v}
print(f"layout: {len(from_py)} sizes and offsets compared, {len(bad)} differ")
for k, (c_value, py_value) in sorted(bad.items()):
    print(f"  {k}: C {c_value}, ctypes {py_value}")

# 2. Manifests.
for name in sorted(os.listdir(manifests)):
    if name.endswith(".json"):
        spec = L.SpecDescriptor.from_folder(manifests, name[:-5])
        t = spec.desc.targets[0]
        kernels = [t.kernels[i] for i in range(t.num_kernels)]
        print(f"manifest {spec.manifest['chip']}: {spec.desc.name.decode()} heads "
              f"{spec.desc.num_heads} candidates {spec.desc.num_split_candidates} kernels "
              + " ".join(f"{k.name.decode()}(stage {k.stage}, args {k.num_args}, dependent "
                         f"{k.dependent_launch})" for k in kernels))
path = os.path.join(manifests, sorted(n for n in os.listdir(manifests) if n.endswith(".json"))[0])
with open(path) as f:
    m = json.load(f)
m["manifest_version"] = 99
old = os.path.join(manifests, "old.json.txt")
with open(old, "w") as f:
    json.dump(m, f)
try:
    L.read_manifest(old)
except ValueError as e:
    print("refused:", str(e).split(": ", 1)[1])

# 3. Context creation through the launcher library (HIP backend, no device).
gfx = next(n[:-5] for n in os.listdir(manifests) if n.endswith(".json")
           and json.load(open(os.path.join(manifests, n)))["chip"].startswith("gfx"))
lib = L.load_library(os.path.join(lib_dir, "libmla_launcher-hip.so"), "hip")
try:
    L.Context(lib, L.SpecDescriptor.from_folder(manifests, gfx), 0)
except L.LauncherError as e:
    print("context:", e)
