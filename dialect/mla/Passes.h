//===- Passes.h - passes of the mla compiler --------------------*- C++ -*-===//
#ifndef MLA_PASSES_H
#define MLA_PASSES_H

#include "mlir/Pass/Pass.h"
#include <memory>

namespace mlir {
class ModuleOp;
namespace gpu {
class GPUModuleOp;
} // namespace gpu
namespace mla {

#define GEN_PASS_DECL
#include "mla/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mla/Passes.h.inc"

} // namespace mla
} // namespace mlir

#endif // MLA_PASSES_H
