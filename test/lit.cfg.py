# lit configuration of mla-compiler. Tools come from the build tree
# (mla-opt, mla-run) and from /usr/lib/llvm-22/bin (FileCheck, not, opt).
import os

import lit.formats

config.name = "MLA"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test", ".ll"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "check_diagnostics.py",
                   "launcher_binding.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mla_obj_root, "test")

# Every tool a RUN line names must exist: a missing one fails the test
# instead of skipping it.
path = [config.mla_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
config.environment["PATH"] = os.pathsep.join(path)
# FileCheck variables die at each CHECK-LABEL unless global ($name).
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"
for tool in ["mla-opt", "mla-run", "mla-compile"]:
    if not os.path.exists(os.path.join(config.mla_tools_dir, tool)):
        lit_config.fatal(f"{tool} is not built in {config.mla_tools_dir}")
for tool in ["FileCheck", "not", "llvm-readelf", "opt"]:
    if not os.path.exists(os.path.join(config.llvm_tools_dir, tool)):
        lit_config.fatal(f"{tool} not found in {config.llvm_tools_dir}")

config.substitutions.append(("%kernels", os.path.join(config.mla_src_root, "kernels")))
config.substitutions.append(("%mla_src_root", config.mla_src_root))
config.substitutions.append(("%mla_obj_root", config.mla_obj_root))
