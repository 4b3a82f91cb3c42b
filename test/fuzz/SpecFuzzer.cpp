//===- SpecFuzzer.cpp - specs through every pipeline, from random bytes ---===//
//
// libFuzzer target (issue #16): the input is MLIR text. What parses and
// verifies, and holds only `mla.decode` specs and `mla.kernel`s at the top
// level (the language users write; other top-level IR is upstream's
// business), goes through the pipelines the tools run:
//
//   mla-to-tiles (expand-decode, elide-masks, canonicalize, CSE), then on a
//   copy each: the host lowering (mla-to-host), and the GPU lowering for
//   gfx950, gfx942 and sm_90 (mla-lower-to-gpu and the conversion to the
//   NVVM / ROCDL and LLVM dialects; no binary, no ptxas).
//
// A pipeline may refuse an input with a diagnostic; it must never crash,
// trip a sanitizer, or leave IR the verifier rejects (the pass manager
// verifies after every pass). MLA_FUZZ_TILES_ONLY=1 skips the lowerings.
//
//===----------------------------------------------------------------------===//
#include "mla/MLADialect.h"
#include "mla/MLAOps.h"
#include "mla/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;

namespace {

struct Fuzzer {
  DialectRegistry registry;
  std::unique_ptr<MLIRContext> ctx;
  unsigned inputs = 0;
  bool tilesOnly = std::getenv("MLA_FUZZ_TILES_ONLY") != nullptr;

  Fuzzer() {
    mla::registerCompilerDialects(registry);
    fresh();
  }

  /// A new context: uniqued types, attributes and identifiers of earlier
  /// inputs are never freed, so one context would grow without bound.
  void fresh() {
    ctx = std::make_unique<MLIRContext>(registry,
                                        MLIRContext::Threading::DISABLED);
    ctx->loadAllAvailableDialects();
    // Diagnostics are expected (most inputs are refused): keep them quiet.
    ctx->getDiagEngine().registerHandler(
        [](Diagnostic &) { return success(); });
  }

  /// Runs `build`'s pipeline on a copy of `module`.
  template <typename Build> void run(ModuleOp module, Build build) {
    OwningOpRef<ModuleOp> copy = module.clone();
    PassManager pm(ctx.get());
    build(pm);
    (void)pm.run(*copy);
  }

  void one(llvm::StringRef text) {
    if (++inputs % 1000 == 0)
      fresh();
    ParserConfig config(ctx.get());
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, config);
    if (!module)
      return;
    for (Operation &op : module->getBody()->getOperations())
      if (!isa<mla::DecodeOp, mla::KernelOp>(op))
        return;
    PassManager tiles(ctx.get());
    mla::buildTileKernelPipeline(tiles);
    if (failed(tiles.run(*module)) || tilesOnly)
      return;
    run(*module, [](PassManager &pm) { mla::buildHostLoweringPipeline(pm); });
    for (const char *chip : {"gfx950", "gfx942", "sm_90"})
      run(*module,
          [&](PassManager &pm) { mla::buildGpuLoweringPipeline(pm, chip); });
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Fuzzer *fuzzer = new Fuzzer();
  // MLIR's lexer expects a NUL after the text, as every file buffer has
  // (mla-opt's input included); libFuzzer's bytes have none.
  std::string text(reinterpret_cast<const char *>(data), size);
  fuzzer->one(text);
  return 0;
}
