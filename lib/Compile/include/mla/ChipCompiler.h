//===- mla/ChipCompiler.h - a spec compiled for one chip --------*- C++ -*-===//
//
// What mla-compile does for one chip, as a library: the code object (cubin /
// hsaco), the manifest (kernels, argument layout, launch rules, resources)
// and the resource report. mla-compile writes it; mla-run --chip=gfx950
// runs the same bytes on the emulator.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_CHIPCOMPILER_H
#define MLA_CHIPCOMPILER_H

#include "mla/ResourceReport.h"
#include "mla/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::mla {

enum class Emit { All, Isa, Header };

struct CompileOptions {
  std::string outDir; ///< where the assembly / code object / manifest go
  std::string stem;   ///< their file name without extension
  Emit emit = Emit::All;
  std::string ptxas = "/usr/local/cuda/bin/ptxas";
  std::string rocmToolkit;             ///< empty: defaultRocmToolkit()
  llvm::raw_ostream *report = nullptr; ///< the resource report (nullptr: none)
  TuningOverrides tuning; ///< comparison switches (mla-lower-to-gpu's)
};

/// What one chip's compilation produced.
struct ChipOutput {
  std::string chip;
  bool nvidia = false;
  std::string binary;    ///< the code object (cubin / hsaco bytes)
  std::string binaryExt; ///< ".cubin" / ".hsaco"
  llvm::json::Object manifest;
};

/// Compiles the first mla.decode of `parsed` (left unchanged) for `chip`.
/// Errors are printed to stderr.
FailureOr<ChipOutput> compileForChip(MLIRContext &ctx, ModuleOp parsed,
                                     const ChipInfo &chip,
                                     const CompileOptions &opts);

class KernelOp;

/// The manifest's "split_cost_model" entry: the parameters of
/// lib/Schedule/SplitCostModel.cpp the launcher prices split counts with.
llvm::json::Object splitCostModelManifest();

/// The manifest entry of one tile kernel (docs/Manifest.md, "Kernels"),
/// read before lowering: name, grid, block_threads (num_warps x
/// `waveSize`), stage, variant, dispatch_kv_multiple, args. The lowering
/// adds shared_bytes, dependent_launch and resources for a GPU.
llvm::json::Object describeKernel(KernelOp k, int64_t waveSize);

/// The ROCm "toolkit" folder installed beside the running executable
/// (share/mla-compiler/rocm-toolkit: its llvm/bin/ld.lld links code objects).
std::string defaultRocmToolkit();

} // namespace mlir::mla

#endif // MLA_CHIPCOMPILER_H
