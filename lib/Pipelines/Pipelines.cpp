//===- Pipelines.cpp - the pass pipelines, in one place -------------------===//
//
// Every pipeline the tools run is assembled here, with the reason each pass
// sits where it does.
//
//===----------------------------------------------------------------------===//
#include "mla/Pipelines.h"
#include "mla/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mla::buildTileKernelPipeline(OpPassManager &pm) {
  // Specs first: everything below works on kernels.
  pm.addPass(mla::createMLAExpandDecode());
  // Mask elision needs the split ranges and loops expand-decode built, and
  // must run before any lowering duplicates the mask arithmetic.
  pm.addPass(mla::createMLAElideMasks());
  // Fold what elision made constant (e.g. exact ranges) and share the index
  // arithmetic expand-decode built per use.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mla::buildHostLoweringPipeline(OpPassManager &pm) {
  // Tile ops -> loops on heap buffers; kernels -> functions per program.
  pm.addPass(mla::createMLALowerToLoops());
  pm.addPass(createCanonicalizerPass());
  // The host lowering allocates every tile result; ownership-based
  // deallocation frees them, loop-carried buffers included. It needs
  // structured control flow, so it runs before scf -> cf.
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createSCFToControlFlowPass());
  // To LLVM: math before arith (math lowers to arith-free intrinsics),
  // memref after arith (its patterns produce arith index math), func last
  // (it needs the converted argument types), casts reconciled at the end.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mla::registerMLAPipelines() {
  PassPipelineRegistration<>(
      "mla-to-tiles",
      "Expand decode specs into tile kernels and elide provable masks",
      buildTileKernelPipeline);
  PassPipelineRegistration<>(
      "mla-to-host",
      "Lower tile kernels to the LLVM dialect for host execution",
      buildHostLoweringPipeline);
}
