//===- LowerTerms.cpp - two narrow-float terms of a tile ------------------===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h).
// mla.split_terms and mla.sum_terms (qp_terms = 2; docs/Design.md, "fp8 Q
// and P on the e4m3 form"). Q's straight-line copy takes the split itself
// where it can (LowerLoad.cpp).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

/// Registers (P) keep both terms, the lo ones as further M blocks; a
/// shared-memory tile (Q) gets a 2R-row tile by a strided loop.
LogicalResult Lowering::lowerSplitTerms(SplitTermsOp op) {
  auto src = get(op.getSource());
  auto resT = op.getResult().getType();
  Type to = resT.getElementType();
  int64_t rows = op.getSource().getType().getDimSize(0);
  int64_t cols = resT.getDimSize(1);
  // (TargetInfo::roundedToTerms: in pairs through the chip's pair rounding
  // and decode where it has them; in software an e4m3 code's read-back
  // took 9 instructions.)
  if (src->kind == Kind::Acc) {
    // Registers (P): the result's M blocks are the source's, then as many
    // again for the lo terms (AccLayout: one M block after another), so
    // each thread keeps both terms of its own elements.
    // The f32 readings: the hi terms' from the rounding, the lo terms'
    // decoded here (P's dot reads only the stored forms; DCE drops them).
    SmallVector<Value> regs;
    auto [hi, lo] = target.roundedToTerms(b, loc(), src->regs, to, &regs);
    SmallVector<Value> stored(hi);
    stored.append(lo.begin(), lo.end());
    llvm::append_range(regs, target.storedToF32(b, loc(), lo, to));
    auto t = regTile(Kind::Acc, resT, std::move(regs));
    t->stored = std::move(stored);
    tiles[op] = t;
    return success();
  }
  if (src->kind != Kind::Smem && src->kind != Kind::Expr)
    return fail("the GPU lowering splits register or shared-memory tiles "
                "into terms only");
  if (cols % 2)
    return fail("terms of a tile with an odd column count (" + Twine(cols) +
                ") are not supported");
  // A shared-memory tile (Q, where the load's straight-line copy did not
  // take the split): runs of up to 8 columns a thread and step, each
  // element's two terms stored in rows r and rows + r. Element-wise, so a
  // K order (kOrderFor) carries over.
  auto out = std::make_shared<Tile>();
  out->kind = Kind::Smem;
  out->type = resT;
  if (auto root = soleRoot(op.getSource()))
    out->kPerm = root->kPerm;
  out->view = allocSmem(2 * rows, cols, to);
  barrierBeforeRewrite();
  int64_t run = cols % 8 == 0 ? 8 : 2;
  auto loop = scf::ForOp::create(b, loc(), mul(tid, run), idx(rows * cols),
                                 idx(run * threads));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value e = loop.getInductionVar();
    Value r = arith::DivUIOp::create(b, loc(), e, idx(cols));
    Value c = arith::RemUIOp::create(b, loc(), e, idx(cols));
    SmallVector<Value> xs;
    for (int64_t p = 0; p < run; ++p)
      xs.push_back(readF32(*src, r, addc(c, p)));
    auto [hi, lo] = target.roundedToTerms(b, loc(), xs, to);
    for (auto [row, vals] : {std::pair(r, hi), std::pair(addc(r, rows), lo)}) {
      Value vec = vector::FromElementsOp::create(
          b, loc(), VectorType::get({run}, vals[0].getType()), vals);
      vector::StoreOp::create(b, loc(), vec, out->view,
                              smemAt(out->view, row, c),
                              /*nontemporal=*/false, llvm::MaybeAlign(run));
    }
  }
  barrier();
  tiles[op] = out;
  note(op, "its terms stored by a strided loop over shared memory");
  return success();
}

/// A register tile's two halves of each element, which one thread holds.
LogicalResult Lowering::lowerSumTerms(SumTermsOp op) {
  auto src = get(op.getSource());
  if (src->kind != Kind::Acc)
    return fail("the GPU lowering sums the terms of register tiles only");
  // The lo terms' M blocks follow the hi terms' (lowerSplitTerms): the
  // same thread holds both halves of each element, where each half is
  // whole M blocks of the matrix instruction.
  int64_t rows = op.getResult().getType().getDimSize(0);
  if (rows % target.mma->m)
    return fail("terms of " + Twine(rows) +
                " rows are not whole blocks of the matrix instruction's M (" +
                Twine(target.mma->m) + ")");
  size_t half = src->regs.size() / 2;
  SmallVector<Value> regs;
  for (size_t r = 0; r < half; ++r)
    regs.push_back(arith::AddFOp::create(b, loc(), src->regs[r],
                                         src->regs[r + half]));
  tiles[op] = regTile(Kind::Acc, op.getResult().getType(), std::move(regs));
  return success();
}

} // namespace mlir::mla::gpulower
