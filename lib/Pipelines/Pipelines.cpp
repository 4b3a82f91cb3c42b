//===- Pipelines.cpp - the pass pipelines, in one place -------------------===//
//
// Every pipeline the tools run is assembled here, with the reason each pass
// sits where it does.
//
//===----------------------------------------------------------------------===//
#include "mla/Pipelines.h"
#include "mla/Passes.h"
#include "mla/Target.h"

#include "mla/MLADialect.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVM/ROCDL/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
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
  // q and out are read as [rows x heads, dim] (memref.collapse_shape), which
  // the LLVM conversion does not take: rewrite it as a reinterpret_cast of
  // the argument's metadata, and the size arithmetic that leaves (affine)
  // as arith.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
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

void mla::registerCompilerDialects(DialectRegistry &registry) {
  registry
      .insert<mla::MLADialect, amdgpu::AMDGPUDialect, arith::ArithDialect,
              bufferization::BufferizationDialect, cf::ControlFlowDialect,
              func::FuncDialect, gpu::GPUDialect, LLVM::LLVMDialect,
              math::MathDialect, memref::MemRefDialect, NVVM::NVVMDialect,
              nvgpu::NVGPUDialect, ROCDL::ROCDLDialect, scf::SCFDialect,
              tensor::TensorDialect, ub::UBDialect, vector::VectorDialect>();
  // convert-gpu-to-nvvm converts every dialect through these interfaces.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  // gpu-module-to-binary: the NVVM target and the LLVM IR translations.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  ROCDL::registerROCDLTargetInterfaceExternalModels(registry);
  registerROCDLDialectTranslation(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void mla::buildGpuLoweringPipeline(OpPassManager &pm, const std::string &chip,
                                   const TuningOverrides &overrides) {
  // Tile ops -> per-lane gpu.func code (shared memory, shuffles, matrix
  // instructions from the chip's descriptor).
  mla::MLALowerToGPUOptions options;
  options.chip = chip;
  options.wgmmaSmemA = overrides.wgmmaSmemA;
  options.wgmmaRegisterV = overrides.wgmmaRegisterV;
  options.pageEntriesAhead = overrides.pageEntriesAhead;
  options.kvTileFirst = overrides.kvTileFirst;
  options.kvEvictFirstTiles = overrides.kvEvictFirstTiles;
  options.e4m3DoubleBuffer = overrides.e4m3DoubleBuffer;
  pm.addPass(mla::createMLALowerToGPU(options));
  // The lowering emits index arithmetic per use; fold and share it before
  // the LLVM conversion multiplies it.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Inside the GPU module: structured control flow to branches first (the
  // NVVM conversion handles cf, not scf), then everything to NVVM/LLVM.
  OpPassManager &gpuPm = pm.nest<gpu::GPUModuleOp>();
  gpuPm.addPass(createSCFToControlFlowPass());
  // q and out as [rows x heads, dim] (memref.collapse_shape): to a
  // reinterpret_cast the conversion takes, its size arithmetic to arith.
  gpuPm.addPass(memref::createExpandStridedMetadataPass());
  gpuPm.addPass(createLowerAffinePass());
  const ChipInfo *info = lookupChip(chip);
  if (info && info->vendor == Vendor::NVIDIA) {
    // nvgpu.ldmatrix (operand loads, see MatrixInstr::aByLdmatrix) -> nvvm
    // first: the GPU conversion does not know it.
    gpuPm.addPass(createConvertNVGPUToNVVMPass());
    gpuPm.addPass(createConvertGpuOpsToNVVMOps());
    // NVVM ops that LLVM has no intrinsic for (sm_90a's wgmma.mma_async)
    // -> the inline PTX their op interface spells; the rest stay.
    gpuPm.addPass(createConvertNVVMToLLVMPass());
    // A tensor map (sm_90a's KV tile copies) is a 128-byte grid-constant
    // parameter; the conversion above dropped the argument's attributes.
    gpuPm.addPass(mla::createMLANvvmGridConstants());
  } else {
    // amdgpu.mfma -> rocdl first: the GPU conversion does not know it.
    ConvertAMDGPUToROCDLPassOptions amdgpu;
    amdgpu.chipset = chip;
    gpuPm.addPass(createConvertAMDGPUToROCDLPass(amdgpu));
    ConvertGpuOpsToROCDLOpsOptions rocdl;
    rocdl.chipset = chip;
    gpuPm.addPass(createConvertGpuOpsToROCDLOps(rocdl));
    // LDS DMA loads (gfx950's KV tile): without alias scopes LLVM waits for
    // the next tile's loads before the first LDS read of this one, which
    // undoes the double buffer.
    gpuPm.addPass(mla::createMLALdsDmaScopes());
  }
  gpuPm.addPass(createCanonicalizerPass());
  gpuPm.addPass(createCSEPass());
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
  struct GpuOptions : public PassPipelineOptions<GpuOptions> {
    Option<std::string> chip{*this, "chip", llvm::cl::desc("target chip"),
                             llvm::cl::init("sm_90")};
  };
  PassPipelineRegistration<GpuOptions>(
      "mla-to-gpu",
      "Lower tile kernels to a gpu.module in the NVVM dialect for a chip",
      [](OpPassManager &pm, const GpuOptions &o) {
        buildGpuLoweringPipeline(pm, o.chip);
      });
}
