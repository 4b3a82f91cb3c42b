//===- EmulatedRun.h - mla-run on the AMD ISA emulator ----------*- C++ -*-===//
#ifndef MLA_RUN_EMULATEDRUN_H
#define MLA_RUN_EMULATEDRUN_H

#include "mla/DecodeRunner.h"
#include "mla/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::mla {

struct EmulatedOptions {
  bool stats = false;
  /// A test hook: write this byte over the code object at this offset
  /// before it is loaded (negative: none).
  int64_t patchOffset = -1;
  uint8_t patchByte = 0;
};

/// Compiles the first mla.decode of `parsed` for `chip` exactly as
/// mla-compile does, runs it through the C launcher (its split, variant and
/// argument rules) on the emulator with fresh inputs, and fills `run`.
/// Prints what ran (and with `stats`, the emulator's counters) to `os`.
LogicalResult runOnEmulator(MLIRContext &ctx, ModuleOp parsed,
                            const ChipInfo &chip, const DecodeKernels &kernels,
                            const RandomDecode &inputs,
                            const EmulatedOptions &opts, DecodeRun &run,
                            llvm::raw_ostream &os);

} // namespace mlir::mla

#endif
