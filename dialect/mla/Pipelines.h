//===- Pipelines.h - registered pass pipelines ------------------*- C++ -*-===//
#ifndef MLA_PIPELINES_H
#define MLA_PIPELINES_H

namespace mlir {
class OpPassManager;
namespace mla {

/// Spec -> tile kernels: mla-expand-decode, mla-elide-masks, canonicalize.
void buildTileKernelPipeline(OpPassManager &pm);

/// Tile kernels -> LLVM dialect for the host (CPU execution through the
/// ExecutionEngine).
void buildHostLoweringPipeline(OpPassManager &pm);

/// Registers `mla-to-tiles` and `mla-to-host`.
void registerMLAPipelines();

} // namespace mla
} // namespace mlir

#endif // MLA_PIPELINES_H
