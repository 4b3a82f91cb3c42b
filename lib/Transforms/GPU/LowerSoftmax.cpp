//===- LowerSoftmax.cpp - row reductions, online softmax, finalize
//----------===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

/// Each of `parts` combined over the lanes that differ only in lane `bits`:
/// in one permute chain of the chip where the bits are 0-3 and it has one,
/// else an XOR butterfly of shuffles (bit by bit, every part each time).
static void reduceOverLanes(Lowering &L, MutableArrayRef<Value> parts,
                            ArrayRef<int64_t> bits,
                            function_ref<Value(Value, Value)> combine) {
  OpBuilder &b = L.b;
  if (bits == ArrayRef<int64_t>{0, 1, 2, 3}) {
    bool all = true;
    for (Value &p : parts) {
      std::optional<Value> r = L.target.reduce16Lanes(b, L.loc(), p, combine);
      if (!r) {
        all = false;
        break;
      }
      p = *r;
    }
    if (all)
      return;
  }
  for (int64_t j : bits)
    for (Value &p : parts) {
      auto shfl = gpu::ShuffleOp::create(
          b, L.loc(), p, cstI32(b, L.loc(), int64_t(1) << j),
          cstI32(b, L.loc(), L.wave), gpu::ShuffleMode::XOR);
      p = combine(p, shfl.getShuffleResult());
    }
}

/// The `n` f32 values of row `row` of the shared-memory region `red`
/// folded with `combine` into `acc` (null: starting from the first), read
/// with 16-byte loads where n is a multiple of 4.
static Value foldSharedRow(Lowering &L, Value red, Value row, int64_t n,
                           function_ref<Value(Value, Value)> combine,
                           Value acc) {
  OpBuilder &b = L.b;
  auto fold = [&](Value x) { acc = acc ? combine(acc, x) : x; };
  int64_t vec = n % 4 == 0 ? 4 : 1;
  for (int64_t w = 0; w < n; w += vec) {
    if (vec == 1) {
      fold(memref::LoadOp::create(b, L.loc(), red, ValueRange{row, L.idx(w)}));
      continue;
    }
    Value v = vector::LoadOp::create(
        b, L.loc(), VectorType::get({vec}, b.getF32Type()), red,
        ValueRange{row, L.idx(w)}, /*nontemporal=*/false, llvm::MaybeAlign(16));
    for (int64_t j = 0; j < vec; ++j)
      fold(vector::ExtractOp::create(b, L.loc(), v, ArrayRef<int64_t>{j}));
  }
  return acc;
}

SmallVector<Value>
Lowering::acrossLanesAndWarps(const AccLayout &l, SmallVector<Value> part,
                              float identity,
                              function_ref<Value(Value, Value)> combine) {
  // Lanes that differ only in column bits hold the same rows: those of
  // the low 4 lane bits (CDNA's 16 x 16 accumulator) in one permute chain
  // where the target has one, else an XOR butterfly of shuffles.
  SmallVector<int64_t> colBits;
  for (auto [j, base] : llvm::enumerate(l.mi->c.laneBases))
    if (base.row == 0)
      colBits.push_back(j);
  reduceOverLanes(*this, part, colBits, combine);
  if (warps == 1)
    return part;
  // Across warps through shared memory: red[row][warp], so that a lane
  // reads a row's shares of all warps with 16-byte loads (8 warps: two
  // instead of eight; paddedRowBytes keeps a row of 4 warps unpadded).
  Value red = allocSmem(l.rows(), warps, b.getF32Type());
  barrierBeforeRewrite();
  for (auto [g, p] : llvm::enumerate(part))
    memref::StoreOp::create(b, loc(), p, red,
                            ValueRange{addc(cRow, l.rowGroups[g]), warp});
  barrier();
  SmallVector<Value> out;
  for (size_t g = 0; g < part.size(); ++g)
    out.push_back(foldSharedRow(*this, red, addc(cRow, l.rowGroups[g]), warps,
                                combine, cstF32(b, loc(), identity)));
  return out;
}

Value Lowering::maxNum(Value x, Value y) {
  return LLVM::MaxNumOp::create(b, loc(), x, y);
}

Value Lowering::programMax(Value v) {
  auto combine = [&](Value x, Value y) { return maxNum(x, y); };
  // Over each group of 16 lanes (the chip's lane permutes where it has
  // them, else an XOR butterfly of shuffles; CDNA4 would take its row
  // swaps for lane distances 16 and 32), then the groups through shared
  // memory: each group's value, read by all.
  SmallVector<int64_t> bits;
  for (int64_t j = 0; j < 4 && (int64_t(1) << j) < wave; ++j)
    bits.push_back(j);
  reduceOverLanes(*this, v, bits, combine);
  int64_t groups = llvm::divideCeil(threads, 16);
  if (groups == 1)
    return v;
  Value red = allocSmem(1, groups, b.getF32Type());
  barrierBeforeRewrite();
  memref::StoreOp::create(
      b, loc(), v, red,
      ValueRange{idx(0), arith::DivUIOp::create(b, loc(), tid, idx(16))});
  barrier();
  return foldSharedRow(*this, red, idx(0), groups, combine, Value());
}

LogicalResult Lowering::lowerQuantScale(QuantScaleOp op) {
  auto src = get(op.getSource());
  auto t = op.getSource().getType();
  if (t.getRank() != 2 || (src->kind != Kind::Smem && src->kind != Kind::Expr))
    return fail("the GPU lowering takes the largest magnitude of rank-2 "
                "tiles in shared memory only");
  int64_t cols = t.getDimSize(1);
  // Each thread's share, element by element, then the whole program's.
  auto loop =
      scf::ForOp::create(b, loc(), tid, idx(t.getNumElements()), idx(threads),
                         ValueRange{cstF32(b, loc(), 0)});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value e = loop.getInductionVar();
    Value r = arith::DivUIOp::create(b, loc(), e, idx(cols));
    Value c = arith::RemUIOp::create(b, loc(), e, idx(cols));
    scf::YieldOp::create(
        b, loc(),
        maxNum(loop.getRegionIterArg(0), magnitude(b, loc(), readF32(*src, r, c))));
  }
  auto [scale, inverse] = emitQuantScale(b, loc(), programMax(loop.getResult(0)),
                                         op.getTopExponent());
  scalars.map(op.getScale(), scale);
  scalars.map(op.getInverse(), inverse);
  return success();
}

LogicalResult Lowering::lowerOnlineSoftmax(OnlineSoftmaxOp op) {
  auto s = get(op.getScores()), m = get(op.getMax()), lsum = get(op.getSum());
  auto acc = get(op.getAcc());
  if (s->kind != Kind::Acc || acc->kind != Kind::Acc ||
      m->kind != Kind::RowSlice ||
      (lsum->kind != Kind::RowSlice && lsum->kind != Kind::RowPartial))
    return fail("unsupported placements for online softmax");
  auto ls = accLayout(s->type), la = accLayout(acc->type);
  if (failed(ls) || failed(la))
    return failure();
  // (ChipTuning::rowMaxIgnoresNaN: maxnum where the NaN-propagating
  // maximum costs more; a NaN score still reaches the output through its
  // probability.)
  auto maxf = [&](Value x, Value y) -> Value {
    if (target.chip.tuning.rowMaxIgnoresNaN)
      return arith::MaxNumFOp::create(b, loc(), x, y);
    return arith::MaximumFOp::create(b, loc(), x, y);
  };
  auto addf = [&](Value x, Value y) -> Value {
    return arith::AddFOp::create(b, loc(), x, y);
  };
  // col_exp: the score of column j becomes x = s * 2^e + e (e = col_exp[j],
  // from its shared-memory row), whose row-sum term is exp2(x - e - ref).
  SmallVector<Value> x = s->regs, colExp;
  if (op.getColExp()) {
    auto ex = get(op.getColExp());
    if (!ex || ex->kind != Kind::Smem)
      return fail("col_exp must be a shared-memory tile (mla.dequant's "
                  "exponents)");
    for (int64_t r = 0; r < ls->size(); ++r) {
      Value col = accCoord(*ls, r).second;
      Value e = memref::LoadOp::create(b, loc(), ex->view,
                                       smemAt(ex->view, idx(0), col));
      Value ef = arith::SIToFPOp::create(b, loc(), b.getF32Type(), e);
      colExp.push_back(ef);
      x[r] = arith::AddFOp::create(
          b, loc(), arith::MulFOp::create(b, loc(), x[r], pow2F32(b, loc(), e)),
          ef);
    }
  }
  // The new running maxima, their rescale factors and the rescaled
  // accumulators: exact (the tile's row maxima over lanes and warps), or,
  // with a slack (ChipTuning::rescaleSlackLog2), only in tiles where some
  // thread saw a score above its row's running maximum + slack; the
  // others keep the maxima and the accumulators as they are. The vote
  // takes the place of the barrier the exchange across warps needs (one
  // warp has none: it stays exact).
  auto exact = [&]() {
    SmallVector<Value> tileMax =
        rowReduce(*ls, x, -std::numeric_limits<float>::infinity(), maxf);
    SmallVector<Value> out;
    for (auto [g, old] : llvm::enumerate(m->regs))
      out.push_back(maxf(old, tileMax[g]));
    for (auto [g, old] : llvm::enumerate(m->regs))
      out.push_back(
          target.exp2(b, loc(),
                      arith::SubFOp::create(b, loc(), old,
                                            finiteOrZero(b, loc(), out[g]))));
    // (An accumulator of terms stacked by rows has whole multiples of the
    // scores' row groups, M block after M block: its group g is the
    // scores' g mod their count.)
    for (int64_t r = 0; r < la->size(); ++r)
      out.push_back(arith::MulFOp::create(
          b, loc(), acc->regs[r],
          out[m->regs.size() + la->group(r) % m->regs.size()]));
    return out;
  };
  SmallVector<Value> updated;
  if (int64_t slack = target.chip.tuning.rescaleSlackLog2; slack && warps > 1) {
    Value above = arith::ConstantIntOp::create(b, loc(), b.getI1Type(), 0);
    SmallVector<Value> limit;
    for (Value old : m->regs)
      limit.push_back(
          arith::AddFOp::create(b, loc(), old, cstF32(b, loc(), float(slack))));
    for (int64_t r = 0; r < ls->size(); ++r)
      above = arith::OrIOp::create(
          b, loc(), above,
          arith::CmpFOp::create(b, loc(), arith::CmpFPredicate::OGT, x[r],
                                limit[ls->group(r)]));
    // The vote orders nothing that wgmma reads: P's barrier, which every
    // dot reading shared memory after it waits behind, carries the fence.
    // A fence waits for the thread's outstanding loads, and with K in
    // registers (RegPrefetch::kRegisters) the next tile's are in flight
    // from Sᵀ on, so there the vote goes without one (elsewhere it keeps
    // it until measured).
    Value any =
        barrier(above, /*asyncFence=*/!(kvTiles.regPrefetch &&
                                        kvTiles.regPrefetch->kRegisters));
    if (!any)
      return fail("the chip's tuning keeps a slack in the row maximum, but "
                  "its target has no voting barrier");
    SmallVector<Type> types(m->regs.size() * 2 + la->size(), b.getF32Type());
    auto ifOp = scf::IfOp::create(b, loc(), types, any, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      scf::YieldOp::create(b, loc(), exact());
      b.setInsertionPointToStart(ifOp.elseBlock());
      SmallVector<Value> keep = m->regs;
      keep.append(m->regs.size(), cstF32(b, loc(), 1.0f));
      keep.append(acc->regs.begin(), acc->regs.end());
      scf::YieldOp::create(b, loc(), keep);
    }
    updated.assign(ifOp.getResults().begin(), ifOp.getResults().end());
  } else {
    updated = exact();
  }
  size_t groups = m->regs.size();
  SmallVector<Value> newMax(updated.begin(), updated.begin() + groups);
  SmallVector<Value> alpha(updated.begin() + groups,
                           updated.begin() + 2 * groups);
  SmallVector<Value> newAcc(updated.begin() + 2 * groups, updated.end());
  SmallVector<Value> ref;
  for (Value v : newMax)
    ref.push_back(finiteOrZero(b, loc(), v));
  SmallVector<Value> probs, terms;
  for (int64_t r = 0; r < ls->size(); ++r) {
    int64_t g = ls->group(r);
    probs.push_back(
        target.exp2(b, loc(), arith::SubFOp::create(b, loc(), x[r], ref[g])));
    terms.push_back(
        colExp.empty()
            ? probs.back()
            : target.exp2(b, loc(),
                          arith::SubFOp::create(
                              b, loc(),
                              arith::SubFOp::create(b, loc(), x[r], colExp[r]),
                              ref[g])));
  }
  // A running sum kept per lane (RowPartial) takes this lane's share of
  // the tile's row sums: the sum over lanes and warps is linear in it, so
  // it is formed once, in the finalize, instead of every tile (shuffles,
  // a shared-memory exchange and a barrier).
  SmallVector<Value> rowSum = lsum->kind == Kind::RowPartial
                                  ? laneRowReduce(*ls, terms, 0.0f, addf)
                                  : rowReduce(*ls, terms, 0.0f, addf);
  SmallVector<Value> newSum;
  for (auto [g, old] : llvm::enumerate(lsum->regs))
    newSum.push_back(
        addf(arith::MulFOp::create(b, loc(), old, alpha[g]), rowSum[g]));
  tiles[op.getProbs()] = regTile(Kind::Acc, s->type, probs);
  tiles[op.getNewMax()] = regTile(Kind::RowSlice, m->type, newMax);
  tiles[op.getNewSum()] = regTile(lsum->kind, lsum->type, newSum);
  tiles[op.getNewAcc()] = regTile(Kind::Acc, acc->type, newAcc);
  return success();
}

LogicalResult Lowering::lowerFinalize(SoftmaxFinalizeOp op) {
  auto acc = get(op.getAcc()), m = get(op.getMax()), lsum = get(op.getSum());
  auto la = accLayout(acc->type);
  if (failed(la))
    return failure();
  if (lsum->kind != Kind::RowSlice && lsum->kind != Kind::RowPartial)
    return fail("unsupported placement of the row sum");
  Value scale =
      op.getScale() ? scalars.lookup(op.getScale()) : cstF32(b, loc(), 1.0f);
  Value zero = cstF32(b, loc(), 0.0f), one = cstF32(b, loc(), 1.0f);
  SmallVector<Value> sums = lsum->regs;
  if (lsum->kind == Kind::RowPartial) {
    // Complete the per-lane shares.
    auto l = rowLayout(lsum->type.getDimSize(0));
    if (failed(l))
      return failure();
    sums = acrossLanesAndWarps(*l, sums, 0.0f, [&](Value x, Value y) -> Value {
      return arith::AddFOp::create(b, loc(), x, y);
    });
  }
  SmallVector<Value> factor, empty, lse;
  for (auto [g, sum] : llvm::enumerate(sums)) {
    Value e =
        arith::CmpFOp::create(b, loc(), arith::CmpFPredicate::OEQ, sum, zero);
    Value safe = arith::SelectOp::create(b, loc(), e, one, sum);
    empty.push_back(e);
    factor.push_back(arith::DivFOp::create(b, loc(), scale, safe));
    Value l2 = arith::AddFOp::create(b, loc(), m->regs[g],
                                     target.log2(b, loc(), safe));
    Value ln =
        arith::MulFOp::create(b, loc(), l2, cstF32(b, loc(), 1.0f / kLog2E));
    lse.push_back(arith::SelectOp::create(
        b, loc(), e, cstF32(b, loc(), -std::numeric_limits<float>::infinity()),
        ln));
  }
  SmallVector<Value> out;
  for (int64_t r = 0; r < la->size(); ++r) {
    int64_t g = la->group(r);
    Value v = arith::MulFOp::create(b, loc(), acc->regs[r], factor[g]);
    out.push_back(arith::SelectOp::create(b, loc(), empty[g], zero, v));
  }
  tiles[op.getOut()] = regTile(Kind::Acc, acc->type, out);
  tiles[op.getLse()] = regTile(Kind::RowSlice, m->type, lse);
  return success();
}

} // namespace mlir::mla::gpulower
