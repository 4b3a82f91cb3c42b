//===- MLANvvmGridConstants.cpp - tensor maps as kernel parameters --------===//
//
// A kernel that copies its KV tile by tensor map (sm_90a) takes the map as
// its last argument; the GPU-to-NVVM conversion drops argument attributes,
// so this pass marks it a 128-byte grid constant after that conversion
// (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//
#include "mla/MLADialect.h"
#include "mla/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::mla {
#define GEN_PASS_DEF_MLANVVMGRIDCONSTANTS
#include "mla/Passes.h.inc"
} // namespace mlir::mla

using namespace mlir;

namespace {

/// CUtensorMap: 128 bytes, 64-byte aligned.
constexpr int64_t kTensorMapBytes = 128, kTensorMapAlign = 64;

struct MLANvvmGridConstants
    : mla::impl::MLANvvmGridConstantsBase<MLANvvmGridConstants> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    auto *mla = ctx->getLoadedDialect<mla::MLADialect>();
    getOperation()->walk([&](LLVM::LLVMFuncOp func) {
      if (!mla->getKvTensorMapAttrHelper().isAttrPresent(func))
        return WalkResult::advance();
      unsigned n = func.getNumArguments();
      if (n == 0 ||
          !isa<LLVM::LLVMPointerType>(func.getArgument(n - 1).getType())) {
        func.emitError("mla.kv_tensor_map: the last argument is not the "
                       "tensor map's pointer");
        signalPassFailure();
        return WalkResult::interrupt();
      }
      OpBuilder b(ctx);
      func.setArgAttr(n - 1, LLVM::LLVMDialect::getByValAttrName(),
                      TypeAttr::get(LLVM::LLVMArrayType::get(
                          IntegerType::get(ctx, 8), kTensorMapBytes)));
      func.setArgAttr(n - 1, LLVM::LLVMDialect::getAlignAttrName(),
                      b.getI64IntegerAttr(kTensorMapAlign));
      func.setArgAttr(n - 1, NVVM::NVVMDialect::getGridConstantAttrName(),
                      b.getUnitAttr());
      return WalkResult::advance();
    });
  }
};

} // namespace
