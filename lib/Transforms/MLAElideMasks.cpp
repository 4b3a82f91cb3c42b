//===- MLAElideMasks.cpp - mask-free stage-1 variants ---------------------===//
//
// A masked stage-1 kernel becomes mask-free in two steps:
//
// 1. Decide exactness. If every sequence length is a multiple of
//    num_splits * block_n, every `mla.split_range` is exact. That is proven
//    from the kernel's facts (a divisor of all lengths, the split counts a
//    launcher may choose) or, for a runtime-dispatched clone, assumed under
//    the dispatch rule recorded on the clone.
// 2. Prove tiles full. Inside an `mla.kv_loop %n = lo to hi step block_n`
//    over an exact range, tile [n, n + block_n) never crosses hi, so a mask
//    `offset n, bound hi` (or `base + n`, `base + hi` for loads from a
//    buffer addressed from `base`) is always true and is dropped.
//
// Kernels marked `causal` (q_seq_len > 1) stay masked: a token's range ends
// at its causal edge, which falls inside a tile whatever the length.
//
//===----------------------------------------------------------------------===//
#include "mla/MLAOps.h"
#include "mla/Passes.h"
#include "mla/SplitCostModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::mla {
#define GEN_PASS_DEF_MLAELIDEMASKS
#include "mla/Passes.h.inc"
} // namespace mlir::mla

using namespace mlir;
using namespace mlir::mla;

namespace {

/// True when (a, b) == (x, y) up to the operand order of an addi.
bool isSumOf(Value v, Value base, Value offset) {
  auto add = v.getDefiningOp<arith::AddIOp>();
  if (!add)
    return false;
  return (add.getLhs() == base && add.getRhs() == offset) ||
         (add.getLhs() == offset && add.getRhs() == base);
}

/// The loop whose tile [iv, iv + step) is addressed by `offset`, and whose
/// upper bound `bound` is, provided the loop walks an exact split range with
/// `step == extent`. `offset`/`bound` are either the loop's iv/upper, or
/// both shifted by the same base.
KvLoopOp provenFullTileLoop(Value offset, Value bound, int64_t extent) {
  auto check = [&](Value iv, Value upper) -> KvLoopOp {
    auto arg = dyn_cast<BlockArgument>(iv);
    if (!arg || arg.getArgNumber() != 0)
      return {};
    auto loop = dyn_cast<KvLoopOp>(arg.getOwner()->getParentOp());
    if (!loop || loop.getUpper() != upper ||
        static_cast<int64_t>(loop.getStep()) != extent)
      return {};
    auto range = loop.getLower().getDefiningOp<SplitRangeOp>();
    if (!range || !range.getExact() || range.getLo() != loop.getLower() ||
        range.getHi() != loop.getUpper() ||
        static_cast<int64_t>(range.getBlockN()) != extent)
      return {};
    return loop;
  };
  if (KvLoopOp loop = check(offset, bound))
    return loop;
  // base + iv against base + hi.
  auto offAdd = offset.getDefiningOp<arith::AddIOp>();
  if (!offAdd)
    return {};
  for (auto [base, iv] : {std::pair(offAdd.getLhs(), offAdd.getRhs()),
                          std::pair(offAdd.getRhs(), offAdd.getLhs())}) {
    auto arg = dyn_cast<BlockArgument>(iv);
    if (!arg)
      continue;
    auto loop = dyn_cast<KvLoopOp>(arg.getOwner()->getParentOp());
    if (loop && isSumOf(bound, base, loop.getUpper()))
      if (KvLoopOp l = check(iv, loop.getUpper()))
        return l;
  }
  return {};
}

/// Rewrites `kernel` (already known to run only on exact lengths) into its
/// mask-free form. Returns the number of masks left that could not be proven.
unsigned makeMaskFree(KernelOp kernel) {
  kernel.setVariant("mask_free");
  kernel.walk([](SplitRangeOp r) { r.setExact(true); });
  unsigned left = 0;
  kernel.walk([&](Operation *op) {
    if (auto load = dyn_cast<LoadOp>(op)) {
      if (!load.getBound())
        return;
      auto tileT = load.getResult().getType();
      int64_t rowDim = load.getSource().getType().getRank() - tileT.getRank();
      if (provenFullTileLoop(load.getIndices()[rowDim], load.getBound(),
                             tileT.getDimSize(0)))
        load.getBoundMutable().clear();
      else
        ++left;
    } else if (auto mask = dyn_cast<MaskOp>(op)) {
      int64_t extent = mask.getSource().getType().getDimSize(mask.getDim());
      if (provenFullTileLoop(mask.getOffset(), mask.getBound(), extent)) {
        mask.getResult().replaceAllUsesWith(mask.getSource());
        mask.erase();
      } else {
        ++left;
      }
    }
  });
  return left;
}

std::string variantName(StringRef name, StringRef variant) {
  StringRef base = name;
  base.consume_back("_masked");
  return (base + "_" + variant).str();
}

struct MLAElideMasks : public mla::impl::MLAElideMasksBase<MLAElideMasks> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (KernelOp kernel :
         llvm::make_early_inc_range(module.getOps<KernelOp>())) {
      // A causal kernel's ranges end at a token's causal edge, inside a
      // tile for any length: it stays masked.
      if (!kernel.getVariant() || *kernel.getVariant() != "masked" ||
          !kernel.getBlockN() || kernel.getCausal())
        continue;
      int64_t blockN = *kernel.getBlockN();
      SmallVector<int64_t> candidates;
      if (auto c = kernel.getSplitCandidates())
        candidates.assign(c->begin(), c->end());
      else
        candidates.assign({1, 2, 4, 8, 16, 32, 64});

      std::optional<int64_t> divisor;
      if (auto d = kernel.getKvLenMultipleOf())
        divisor = *d;
      auto divides = [&](int64_t s) { return *divisor % (s * blockN) == 0; };

      KernelOp maskFree;
      if (divisor && llvm::all_of(candidates, divides)) {
        // Proven for every split count a launcher may pick: replace.
        maskFree = kernel;
        (void)symbols.rename(kernel,
                             variantName(kernel.getSymName(), "mask_free"));
      } else if (divisor && llvm::none_of(candidates, divides)) {
        // The stated lengths always leave a partial tile: masked only.
        continue;
      } else {
        // Unknown at compile time: keep the masked kernel and add a
        // mask-free clone that the launcher takes when the rule holds.
        OpBuilder b(kernel);
        b.setInsertionPointAfter(kernel);
        maskFree = cast<KernelOp>(b.clone(*kernel));
        maskFree.setSymName(variantName(kernel.getSymName(), "mask_free"));
        symbols.insert(maskFree);
        maskFree.setDispatchKvMultiple(blockN);
      }
      if (unsigned left = makeMaskFree(maskFree)) {
        maskFree.emitError() << left
                             << " mask(s) could not be proven removable in "
                                "the mask-free variant";
        return signalPassFailure();
      }
    }
  }
};

} // namespace
