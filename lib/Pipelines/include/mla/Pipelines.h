//===- Pipelines.h - registered pass pipelines ------------------*- C++ -*-===//
#ifndef MLA_PIPELINES_H
#define MLA_PIPELINES_H

#include "mla/Target.h"

#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;
namespace mla {

/// Every dialect, LLVM-conversion interface and LLVM IR translation the
/// pipelines below need; tools call this once on their registry.
void registerCompilerDialects(DialectRegistry &registry);

/// Spec -> tile kernels: mla-expand-decode, mla-elide-masks, canonicalize.
void buildTileKernelPipeline(OpPassManager &pm);

/// Tile kernels -> LLVM dialect for the host (CPU execution through the
/// ExecutionEngine).
void buildHostLoweringPipeline(OpPassManager &pm);

/// Tile kernels -> a `gpu.module` in the LLVM + NVVM / ROCDL dialects for
/// `chip`, ready for `gpu-module-to-binary`.
/// `overrides`: mla-lower-to-gpu's comparison options (the chip's own
/// tuning where none is set).
void buildGpuLoweringPipeline(OpPassManager &pm, const std::string &chip,
                              const TuningOverrides &overrides = {});

/// Registers `mla-to-tiles`, `mla-to-host` and `mla-to-gpu`.
void registerMLAPipelines();

} // namespace mla
} // namespace mlir

#endif // MLA_PIPELINES_H
