//===- MLALowerToGPU.cpp - tile kernels -> per-lane GPU code --------------===//
//
// Walks each kernel body in program order and gives every tile value a
// placement (see the pass description in Passes.td):
//
//   Smem      a row-major view of dynamic shared memory (+ row/col offsets)
//   Expr      an elementwise function of a Smem/Expr tile, evaluated on read
//   Acc       registers in the matrix instruction's accumulator layout; the
//             tile's columns are split evenly across the warps
//   RowSlice  a rank-1 row vector held in the accumulator's row layout: one
//             register per distinct row offset of the lane's elements
//   RowPartial  a row sum not yet summed across lanes and warps: one
//             register per row offset holding this lane's share (the online
//             softmax's running sum, completed once by the finalize)
//   Blocked   registers, runs of R adjacent elements round-robin over the
//             threads (R = 1: element e on thread e % T, register e / T)
//
// Target differences come from the chip descriptor (ChipInfo) and the
// matrix-instruction descriptor (MatrixInstr): lane layouts, wave size,
// element types. Target instructions are emitted only through the target
// interface (GPU/TargetInfo.h), one implementation per vendor
// (GPU/TargetCDNA.cpp, GPU/TargetSM90.cpp).
//
// This file is the pass; the Lowering's state is declared in
// GPU/Lowering.h and its methods are defined by op family in GPU/*.cpp.
//
//===----------------------------------------------------------------------===//
#include "GPU/Lowering.h"
#include "mla/MLAOps.h"
#include "mla/Passes.h"
#include "mla/Target.h"

// The pass loads the target dialects (Passes.td: dependentDialects); only
// GPU/Target*.cpp build their ops.
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

namespace mlir::mla {
#define GEN_PASS_DEF_MLALOWERTOGPU
#include "mla/Passes.h.inc"
} // namespace mlir::mla

using namespace mlir;
using namespace mlir::mla;
using namespace mlir::mla::gpulower;

namespace {

struct MLALowerToGPU : public mla::impl::MLALowerToGPUBase<MLALowerToGPU> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    const ChipInfo *chipInfo = lookupChip(chip);
    if (!chipInfo) {
      module.emitError() << "unknown chip '" << chip
                         << "' (known: " << knownChipNames() << ")";
      return signalPassFailure();
    }
    ChipInfo tuned = *chipInfo;
    TuningOverrides{.wgmmaSmemA = wgmmaSmemA,
                    .wgmmaRegisterV = wgmmaRegisterV,
                    .pageEntriesAhead = pageEntriesAhead,
                    .kvTileFirst = kvTileFirst,
                    .kvEvictFirstTiles = kvEvictFirstTiles,
                    .e4m3DoubleBuffer = e4m3DoubleBuffer}
        .applyTo(tuned.tuning);
    auto created = TargetInfo::create(tuned, module);
    if (failed(created))
      return signalPassFailure();
    const TargetInfo &target = **created;
    auto *mla = ctx->getLoadedDialect<MLADialect>();
    if (!module.getOps<DecodeOp>().empty()) {
      module.emitError("mla.decode specs must be expanded before "
                       "mla-lower-to-gpu (run mla-expand-decode)");
      return signalPassFailure();
    }
    // fp8 operands must be in the chip's encoding (its conversion and matrix
    // instructions read that one); a mismatch would be silently wrong.
    bool flavourOk = true;
    module.walk([&](Operation *op) {
      for (Type t : op->getResultTypes()) {
        auto tt = dyn_cast<RankedTensorType>(t);
        if (!tt || !isFp8(tt.getElementType()))
          continue;
        Type elt = tt.getElementType();
        bool fnuz = isa<Float8E4M3FNUZType>(elt);
        Fp8Flavor want = target.chip.facts.fp8;
        if ((want == Fp8Flavor::E4M3FN && fnuz) ||
            (want == Fp8Flavor::E4M3FNUZ && !fnuz)) {
          op->emitError() << "fp8 type " << elt << " does not match " << chip
                          << "'s fp8 format "
                          << (want == Fp8Flavor::E4M3FN ? "f8E4M3FN"
                                                        : "f8E4M3FNUZ");
          flavourOk = false;
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    if (!flavourOk)
      return signalPassFailure();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(ctx));
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    auto gpuModule = gpu::GPUModuleOp::create(
        mb, module.getLoc(), "mla_kernels",
        ArrayAttr::get(ctx, {target.moduleTarget(ctx)}));

    for (KernelOp kernel :
         llvm::make_early_inc_range(module.getOps<KernelOp>())) {
      SmallVector<Type> argTypes;
      for (Type t : kernel.getArgumentTypes()) {
        if (auto mt = dyn_cast<MemRefType>(t))
          t = MemRefType::get(mt.getShape(), storageType(mt.getElementType()));
        argTypes.push_back(t);
      }
      OpBuilder b = OpBuilder::atBlockEnd(gpuModule.getBody());
      auto func =
          gpu::GPUFuncOp::create(b, kernel.getLoc(), kernel.getSymName(),
                                 b.getFunctionType(argTypes, {}));
      func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
      int64_t warps = kernel.getNumWarps();
      int64_t threads = warps * target.chip.facts.waveSize;
      func.setKnownBlockSizeAttr(
          b.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
      b.setInsertionPointToStart(&func.getBody().front());

      Lowering low(b, target, warps);
      low.func = func;
      low.diagOp = kernel;
      low.reportPlacements = reportPlacements;
      low.init(kernel.getLoc());
      low.chooseLayouts(kernel);
      for (auto [from, to] :
           llvm::zip(kernel.getBody().getArguments(), func.getArguments()))
        low.scalars.map(from, to);
      // A kernel that combines another kernel's partial results may be
      // launched before that kernel ends (programmatic dependent launch).
      // (lowerSplitKReduce places the griddepcontrol.wait.)
      if (target.chip.facts.dependentLaunch &&
          !kernel.getBody().getOps<SplitKReduceOp>().empty())
        mla->getDependentLaunchAttrHelper().setAttr(func, b.getUnitAttr());
      for (Operation &op : kernel.getBody().front().without_terminator())
        if (failed(low.lowerOp(&op)))
          return signalPassFailure();
      gpu::ReturnOp::create(b, kernel.getLoc());
      if (low.smem.bytes() > target.chip.facts.sharedMemBytes) {
        kernel.emitError() << "needs " << low.smem.bytes()
                           << " bytes of shared memory per workgroup; "
                           << target.chip.name << " has "
                           << target.chip.facts.sharedMemBytes
                           << " (use a smaller block_n)";
        return signalPassFailure();
      }
      target.kernelHints(func, low.smem.bytes(), low.kvTiles.asyncCopies);
      // The launch facts mla-compile's manifest writer reads (registered
      // discardable attributes of the mla dialect, MLADialect.td).
      mla->getSharedBytesAttrHelper().setAttr(
          func, b.getI64IntegerAttr(low.smem.bytes()));
      mla->getBlockThreadsAttrHelper().setAttr(func,
                                               b.getI64IntegerAttr(threads));
      mla->getGridAttrHelper().setAttr(func, kernel.getGrid());
      if (auto v = kernel.getVariantAttr())
        mla->getVariantAttrHelper().setAttr(func, v);
      if (auto n = kernel.getBlockNAttr())
        mla->getBlockNAttrHelper().setAttr(func, n);
      if (auto m = kernel.getDispatchKvMultipleAttr())
        mla->getDispatchKvMultipleAttrHelper().setAttr(func, m);
      if (auto c = kernel.getSplitCandidatesAttr())
        mla->getSplitCandidatesAttrHelper().setAttr(func, c);
      if (auto m = kernel.getKvLenMultipleOfAttr())
        mla->getKvLenMultipleOfAttrHelper().setAttr(func, m);
      if (low.kvTiles.map)
        mla->getKvTensorMapAttrHelper().setAttr(
            func, b.getDenseI64ArrayAttr(
                      {low.kvTiles.mapRows, 64, low.kvTiles.mapBoxes}));
      kernel.erase();
    }
  }
};

} // namespace
