//===- MLALdsDmaScopes.cpp - alias scopes for LDS DMA loads ---------------===//
//
// LLVM's AMDGPU wait insertion (SIInsertWaitcnts) tracks the LDS bytes an
// LDS DMA load writes by the load's alias scope: an LDS access waits only
// for the DMA loads it may alias, and, where it carries no scope at all,
// for every DMA load in flight. The KV loop double-buffers its tile with
// such loads and waits for them itself (Lowering::lowerPrefetchedLoad), so
// no LDS access may alias one in flight; this pass says so in metadata
// (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//
#include "mla/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"

namespace mlir::mla {
#define GEN_PASS_DEF_MLALDSDMASCOPES
#include "mla/Passes.h.inc"
} // namespace mlir::mla

using namespace mlir;

namespace {

bool isLdsDma(Operation *op) {
  return isa<ROCDL::RawPtrBufferLoadLdsOp, ROCDL::LoadToLDSOp,
             ROCDL::GlobalLoadLDSOp>(op);
}

/// Whether `op` reads or writes memory through an LDS pointer.
bool accessesLds(LLVM::AliasAnalysisOpInterface op) {
  for (Value v : op.getAccessedOperands())
    if (auto p = dyn_cast<LLVM::LLVMPointerType>(v.getType());
        p && p.getAddressSpace() == 3)
      return true;
  return false;
}

struct MLALdsDmaScopes : mla::impl::MLALdsDmaScopesBase<MLALdsDmaScopes> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    getOperation()->walk([&](LLVM::LLVMFuncOp func) {
      bool any = false;
      func.walk([&](Operation *op) { any |= isLdsDma(op); });
      if (!any)
        return;
      auto domain = LLVM::AliasScopeDomainAttr::get(
          ctx, StringAttr::get(ctx, "mla lds (" + func.getName() + ")"));
      auto dma =
          LLVM::AliasScopeAttr::get(domain, StringAttr::get(ctx, "lds dma"));
      auto access =
          LLVM::AliasScopeAttr::get(domain, StringAttr::get(ctx, "lds access"));
      auto dmaList = ArrayAttr::get(ctx, {dma});
      auto accessList = ArrayAttr::get(ctx, {access});
      func.walk([&](LLVM::AliasAnalysisOpInterface op) {
        if (isLdsDma(op)) {
          op.setAliasScopes(dmaList);
        } else if (accessesLds(op)) {
          op.setAliasScopes(accessList);
          op.setNoAliasScopes(dmaList);
        }
      });
    });
  }
};

} // namespace
