"""custom_kernel's choice of fp8 spec (python/mla_torch.py spec_for), on
the CPU: a stand-in torch module (only what importing mla_torch touches)
and a folder of manifests for the specs named, so that the choice runs
as it does on the GPU. Prints one line per case; mla-torch-spec-choice.test
checks them.

    python3 spec_choice.py <python/ folder> <scratch folder>
"""
import json
import os
import sys
import types

python_dir, scratch = sys.argv[1], sys.argv[2]


def stand_in_torch():
    t = types.ModuleType("torch")
    for name in ("bfloat16", "float16", "float32", "float8_e4m3fn", "float8_e4m3fnuz", "uint8",
                 "int8", "int32", "float4_e2m1fn_x2", "float8_e8m0fnu"):
        setattr(t, name, name)
    t.version = types.SimpleNamespace(hip=None)
    t.Tensor = type("Tensor", (), {})
    t._C = types.SimpleNamespace()
    t.ops = types.SimpleNamespace(mla=types.SimpleNamespace(decode=lambda *a: None))
    t.cuda = types.SimpleNamespace(current_device=lambda: 0)

    class Library:
        def __init__(self, *a):
            pass

        def define(self, *a):
            pass

        def impl(self, *a):
            pass
    t.library = types.SimpleNamespace(Library=Library, register_fake=lambda name: (lambda f: f))
    return t


sys.modules["torch"] = stand_in_torch()
sys.path.insert(0, python_dir)
os.environ["MLA_ARTIFACTS"] = scratch
os.environ["MLA_TORCH_FAST"] = "0"
os.environ.pop("MLA_SPEC_FP8", None)
import mla_launcher as L  # noqa: E402

# A manifest per spec that spec_for may read (shape and layout keys real,
# the rest present so that the reader's checks pass).
SPECS = {
    "deepseek_r1_decode_fp8_e4m3x2_db_sm90a": (1, 16, "contiguous", 1),
    "deepseek_r1_decode_fp8_qp16_sm90a": (1, 16, "contiguous", 1),
    "deepseek_r1_decode_fp8_qp16_sm90a_mtp2": (2, 16, "contiguous", 1),
    "deepseek_r1_decode_fp8_qp16_sm90a_paged64": (1, 16, "block_table", 64),
    "deepseek_r1_decode_fp8_e4m3x2_db_sm90a_paged64": (1, 16, "block_table", 64),
}
os.makedirs(scratch, exist_ok=True)
for name, (s_q, heads, layout, page) in SPECS.items():
    m = {k: 0 for k in L._REQUIRED}
    m.update(manifest_version=L.MANIFEST_VERSION, name=name, q_seq_len=s_q, num_heads=heads,
             kv_layout=layout, page_size=page, kernels=[])
    with open(os.path.join(scratch, name + ".json"), "w") as f:
        json.dump(m, f)

import mla_torch as M  # noqa: E402

M.spec_named = lambda name, device=None: name  # no device: the name chosen
for tokens in (None, 4 * 1024, 16383, 16384, 32 * 1024, 256 * 8192):
    print(f"fp8 kv_tokens {tokens}: {M.spec_for('fp8', kv_tokens=tokens)}")
print(f"fp8 mtp2 kv_tokens 524288: {M.spec_for('fp8', None, 2, kv_tokens=524288)}")
for tokens in (4096, 524288):
    print(f"fp8 paged64 kv_tokens {tokens}: "
          f"{M.spec_for('fp8', None, 1, 16, 64, kv_tokens=tokens)}")
print(f"_kv_tokens(4, 1024) {M._kv_tokens(4, 1024)}, (4, None) {M._kv_tokens(4, None)}, "
      f"(True, 8) {M._kv_tokens(True, 8)}")
# One spec named (as MLA_SPEC_FP8 does): it serves every call, short ones too.
M.use_specs("fp8", ["deepseek_r1_decode_fp8_e4m3x2_db_sm90a"])
print(f"named kv_tokens 4096: {M.spec_for('fp8', kv_tokens=4096)}")
# Without the _db spec in the artifacts, long calls fall to qp16.
M.use_specs("fp8")
os.remove(os.path.join(scratch, "deepseek_r1_decode_fp8_e4m3x2_db_sm90a.json"))
M._chosen.clear()
print(f"no db kv_tokens 524288: {M.spec_for('fp8', kv_tokens=524288)}")

# custom_kernel and decode hand spec_for the call's batch x kv length.
seen = []


def recording(*a, **k):
    seen.append(k.get("kv_tokens"))
    raise LookupError("recorded")


M.spec_for = recording
for config in ({"batch_size": 4, "kv_seq_len": 1024}, {"batch_size": 256, "kv_seq_len": 8192},
               {"batch_size": 4, "kv_seq_len": "1024"}):
    try:
        M.custom_kernel((None, {"fp8": (None, None)}, None, None, dict(config, kv_format="fp8")))
    except LookupError:
        pass
try:
    M.decode(types.SimpleNamespace(get_device=lambda: None), None, None, None, None, 32, 1024)
except LookupError:
    pass
print(f"custom_kernel and decode passed kv_tokens {seen}")


# mla_with_kvcache: batch x max_kv_len where given, else x the longest
# host length, else the block table's capacity (batch x columns x page
# size); lengths that are no integers, the capacity; no table of two dims,
# None.
class Tensor(sys.modules["torch"].Tensor):
    def __init__(self, *shape):
        self.shape, self.dtype, self.is_cuda = shape, "float8_e4m3fn", False

    def dim(self):
        return len(self.shape)


seen.clear()
for batch, cols, max_kv_len, host in ((4, 16, None, None), (64, 128, None, None),
                                      (256, 128, 100, [5] * 256), (64, 128, None, [0, 300, 9]),
                                      (64, 128, None, "abc"), (4, 0, None, None)):
    table = Tensor(batch, cols) if cols else Tensor(batch)
    try:
        M.mla_with_kvcache(Tensor(batch, 1, 16, 576), Tensor(99, 64, 1, 576), table, None,
                           max_kv_len=max_kv_len, cache_seqlens_host=host)
    except LookupError:
        pass
print(f"mla_with_kvcache passed kv_tokens {seen}")
