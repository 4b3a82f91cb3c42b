"""Build python/mla_torch_fast.cpp (custom_kernel's remembered calls) against
the torch this Python runs, into $MLA_ARTIFACTS (default artifacts/):

    MLA_ARTIFACTS=artifacts python3 python/build_torch_fast.py

It needs that torch's headers and libraries (a pip wheel has them), the CUDA
toolkit's headers (CUDA_HOME, default /usr/local/cuda) and a C++17
compiler (CXX, default g++). mla_torch.py loads the module when it is there
and was built for this torch and this launcher ABI (MLA_TORCH_FAST=0: not
at all); without it custom_kernel runs its Python path alone. One
compile, about half a minute.
"""
import os
import subprocess
import sys
import sysconfig

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main():
    out_dir = os.environ.get("MLA_ARTIFACTS", os.path.join(ROOT, "artifacts"))
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    includes = [os.path.join(os.path.dirname(torch.__file__), "include"),
                os.path.join(os.path.dirname(torch.__file__), "include",
                             "torch", "csrc", "api", "include"),
                sysconfig.get_paths()["include"], os.path.join(cuda, "include"),
                os.path.join(ROOT, "lib", "Launcher", "include")]
    out = os.path.join(out_dir, "mla_torch_fast" + sysconfig.get_config_var("EXT_SUFFIX"))
    abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
    cmd = ([os.environ.get("CXX", "g++"), "-O2", "-std=c++17", "-shared", "-fPIC",
            "-fvisibility=hidden", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
            f'-DMLA_TORCH_VERSION="{torch.__version__}"']
           + [f"-I{p}" for p in includes]
           + [os.path.join(HERE, "mla_torch_fast.cpp"), "-o", out + ".tmp",
              f"-L{torch_lib}", f"-Wl,-rpath,{torch_lib}",
              "-lc10", "-lc10_cuda", "-ltorch", "-ltorch_cpu", "-ltorch_python"])
    print(" ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    os.replace(out + ".tmp", out)
    print(f"built {out}")


if __name__ == "__main__":
    sys.exit(main())
