//===- mla-opt.cpp - the mla optimizer driver -----------------------------===//
//
// MlirOptMain with the mla dialect, its passes and pipelines, and the
// upstream dialects and passes the lowering to AMDGPU, NVPTX and the host
// needs.
//
//===----------------------------------------------------------------------===//
#include "mla/MLADialect.h"
#include "mla/Passes.h"
#include "mla/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::mla::registerCompilerDialects(registry);

  // Upstream passes the pipelines are built from, so that each step can be
  // replayed by hand.
  mlir::registerTransformsPasses();
  mlir::registerConversionPasses();
  mlir::arith::registerArithPasses();
  mlir::bufferization::registerBufferizationPasses();
  mlir::bufferization::registerBufferizationPipelines();
  mlir::memref::registerMemRefPasses();
  mlir::registerGPUPasses();

  mlir::mla::registerMLAPasses();
  mlir::mla::registerMLAPipelines();

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "mla optimizer driver\n", registry));
}
