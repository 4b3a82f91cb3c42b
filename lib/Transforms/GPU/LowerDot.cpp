//===- LowerDot.cpp - mla.dot on the chip's matrix instruction
//--------------===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

std::optional<GroupedOperands> Lowering::kOrderFor(LoadOp ld) {
  Value v = ld.getResult();
  while (v.hasOneUse() && isa<CastOp, ScaleOp>(*v.getUsers().begin()))
    v = v.getUsers().begin()->getResult(0);
  auto t = cast<RankedTensorType>(v.getType());
  if (v.use_empty() || t.getRank() != 2)
    return std::nullopt;
  std::optional<GroupedOperands> order;
  for (Operation *user : v.getUsers()) {
    auto d = dyn_cast<DotOp>(user);
    auto loop = d ? d->getParentOfType<KvLoopOp>() : KvLoopOp();
    if (!d || d.getLhs() != v || d.getRhs() == v || !d.getTransposeRhs() ||
        !loop || loop->isAncestor(ld))
      return std::nullopt;
    // wgmma with K in registers: Q (its B) in their K order.
    if (target.mma->smemOperands) {
      auto g = registerAGrouping(d);
      auto kv = d.getRhs().getDefiningOp<LoadOp>();
      std::optional<RegPrefetch> rp;
      if (g && kv)
        rp = registerPrefetchOf(kv, loop);
      if (!rp || !rp->kRegisters ||
          (order && order->logicalBitTo != g->logicalBitTo))
        return std::nullopt;
      order = std::move(g);
      continue;
    }
    auto ranges =
        target.kRanges(t.getElementType(),
                       d.getRhs().getType().getElementType(), t.getDimSize(1));
    if (ranges.size() != 1)
      return std::nullopt;
    const MatrixInstr *mi = ranges.front().mi;
    bool asStored =
        (mi->abType == MatrixElem::F16 && t.getElementType().isF16()) ||
        (mi->abType == MatrixElem::BF16 && t.getElementType().isBF16());
    if (!mi->aByLdmatrix || !asStored)
      return std::nullopt;
    auto g =
        groupingFor(mi, d.getRhs().getType().getElementType(), t.getDimSize(1));
    if (!g || (order && order->logicalBitTo != g->logicalBitTo))
      return std::nullopt;
    order = std::move(g);
  }
  return order;
}

Value Lowering::storedColumn(const GroupedOperands &g, Value col) {
  Value in = arith::RemUIOp::create(b, loc(), col, idx(g.k));
  Value out = arith::SubIOp::create(b, loc(), col, in);
  for (auto [i, to] : llvm::enumerate(g.logicalBitTo)) {
    int64_t from = llvm::Log2_64(to);
    Value bit = arith::AndIOp::create(
        b, loc(), arith::ShRUIOp::create(b, loc(), in, idx(from)), idx(1));
    out = add(out, mul(bit, int64_t(1) << i));
  }
  return out;
}

std::optional<TransposedReads>
Lowering::transposedReadsFor(const LaneLayout &layout, Type elt) const {
  int64_t bytes = storedBytes(elt);
  if (!target.chip.facts.transposedLdsReads || (bytes != 1 && bytes != 2))
    return std::nullopt;
  return transposedReads(layout, 8 * bytes);
}

void Lowering::chooseLayouts(Operation *kernel) {
  interleaveAccColumns = true;
  // Warpgroup instructions fix their own column order (tileColumnOf). fp8
  // tiles are their operands where a K-major fp8 x fp8 dot runs on the
  // chip's fp8 form (S^T = K Q^T with qp_type fp8).
  if (target.mma->smemOperands) {
    interleaveAccColumns = false;
    kernel->walk([&](DotOp d) {
      const MatrixInstr *mi =
          target.instrFor(d.getLhs().getType().getElementType(),
                          d.getRhs().getType().getElementType(),
                          d.getLhs().getType().getDimSize(1));
      if (d.getTransposeRhs() && mi->smemOperands && bitWidth(mi->abType) == 8)
        fp8Operands = true;
    });
    return;
  }
  if (!target.chip.facts.transposedLdsReads)
    return;
  bool any = false;
  WalkResult r = kernel->walk([&](DotOp d) {
    if (d.getTransposeRhs())
      return WalkResult::advance();
    Type rhs = d.getRhs().getType().getElementType();
    for (const TargetInfo::KRange &r :
         target.kRanges(d.getLhs().getType().getElementType(), rhs,
                        d.getLhs().getType().getDimSize(1)))
      if (!transposedReadsFor(r.mi->b, rhs))
        return WalkResult::interrupt();
    any = true;
    return WalkResult::advance();
  });
  interleaveAccColumns = r.wasInterrupted() || !any;
}

SmallVector<SmallVector<Value>>
Lowering::readTransposedTiles(const Tile &t, const LaneLayout &layout,
                              const AccLayout &l, Value kk, bool raw, Type op) {
  Type elt = t.type.getElementType();
  int64_t bytes = storedBytes(elt);
  auto reads = transposedReadsFor(layout, elt);
  if (l.interleaved || t.kind != Kind::Smem || !reads ||
      (t.colOff * bytes) % 8 || rowStrideBytes(t) % 8)
    return {};
  // The (K, N) of the 8 bytes this lane reads: its block row and the
  // 8-byte part of its tile's row.
  Value row = addc(add(kk, laneOffset(lane, reads->laneBases, true)), t.rowOff);
  Value n = laneOffset(lane, reads->laneBases, false);
  SmallVector<SmallVector<Value>> out(l.tiles);
  for (int64_t j = 0; j < l.tiles; ++j) {
    Value col = addc(tileColumn(l, n, j), t.colOff);
    SmallVector<Value> elems;
    for (Coord run : reads->runOffsets) {
      Value v = target.transposedRead(b, loc(), t.view, addc(row, run.row),
                                      addc(col, run.col), 8 * bytes);
      for (int64_t i = 0; i < reads->perRead; ++i)
        elems.push_back(
            vector::ExtractOp::create(b, loc(), v, ArrayRef<int64_t>{i}));
    }
    out[j] = storedToOperands(elems, elt, op, raw);
  }
  return out;
}

LogicalResult Lowering::lowerDot(DotOp op) {
  auto resT = op.getResult().getType();
  auto l = accLayout(resT);
  if (failed(l))
    return failure();
  if (target.mma->smemOperands)
    return dotOnWarpgroups(op, *l);
  auto lhs = ensureShared(get(op.getLhs()));
  auto rhs = ensureShared(get(op.getRhs()));
  if (failed(lhs) || failed(rhs))
    return failure();
  // fp8 x fp8 on a chip with an fp8 instruction of that format: the
  // operands go in as stored; f16 x (f16 | fp8): as f16; else as bf16
  // (the accumulator layout is the bf16 instruction's either way, see
  // instrFor). The contraction may run on two instructions (kRanges).
  int64_t k = op.getLhs().getType().getDimSize(1);
  auto ranges = target.kRanges(op.getLhs().getType().getElementType(),
                               op.getRhs().getType().getElementType(), k);
  SmallVector<Value> acc;
  if (op.getAcc())
    acc = get(op.getAcc())->regs;
  else
    acc.assign(l->size(), cstF32(b, loc(), 0.0f));
  int64_t kSplit = 1;
  for (const TargetInfo::KRange &r : ranges) {
    auto next = dotOverK(op, *l, **lhs, **rhs, r, ranges.size() == 1,
                         std::move(acc), kSplit);
    if (failed(next))
      return failure();
    acc = std::move(*next);
  }
  finishDot(op, *l, kSplit, std::move(acc), resT);
  return success();
}

FailureOr<SmallVector<Value>>
Lowering::dotOverK(DotOp op, const AccLayout &accL, const Tile &lhsTile,
                   const Tile &rhsTile, const TargetInfo::KRange &range,
                   bool whole, SmallVector<Value> init, int64_t &kSplit) {
  const AccLayout *l = &accL;
  const Tile *lhs = &lhsTile, *rhs = &rhsTile;
  const MatrixInstr *mi = range.mi;
  Type lhsElt = op.getLhs().getType().getElementType();
  bool raw = bitWidth(mi->abType) == 8;
  note(op, mi->name);
  Type operandElt = raw ? lhsElt : sixteenBitOperand(b, mi);
  int64_t k = range.end - range.begin;
  if (k % mi->k != 0)
    return fail("contraction size " + Twine(k) + " is not a multiple of the " +
                "matrix instruction's K (" + Twine(mi->k) + ")");
  bool trans = op.getTransposeRhs();

  // Lane offsets of this instruction's operand layouts (init() computed
  // those of the bf16 instruction).
  Value aRowI = aRow, aColI = aCol, bRowI = bRow, bColI = bCol;
  if (mi != target.mma) {
    aRowI = laneOffset(lane, mi->a.laneBases, true);
    aColI = laneOffset(lane, mi->a.laneBases, false);
    bRowI = laneOffset(lane, mi->b.laneBases, true);
    bColI = laneOffset(lane, mi->b.laneBases, false);
  }
  auto read = [&](const Tile &t, const LaneLayout &layout, bool transposed,
                  function_ref<std::pair<Value, Value>(Coord)> at) {
    return raw ? readOperandRaw(t, layout, transposed, at)
               : readOperand(t, layout, transposed, operandElt, at);
  };
  // Where both operands run along K in shared memory (A rows, B stored
  // transposed: S = Q K^T), consecutive K steps are grouped with K
  // permuted alike in A and B (groupKSteps): a lane's B elements of all
  // the steps are one 16-byte load (m16n8k16 fp8 K: 4 steps in one load
  // instead of eight 2-byte loads; 16x16x32 MFMA: 2 steps per load).
  std::optional<GroupedOperands> grouped;
  if (trans && lhs->kind == Kind::Smem && rhs->kind == Kind::Smem)
    grouped = groupingFor(mi, rhs->type.getElementType(), k);
  if (const auto &perm = lhs->kPerm;
      perm &&
      (!grouped || perm->steps != grouped->steps || perm->k != grouped->k ||
       perm->logicalBitTo != grouped->logicalBitTo))
    return fail("reads an operand stored in another K order (internal error)");
  // A through ldmatrix.x4 where the instruction allows it and A is
  // stored as the operand type, rows 16-byte aligned.
  bool aByLdmatrix = false;
  if (mi->aByLdmatrix && !raw && !grouped) {
    const Tile &t = *lhs;
    aByLdmatrix = t.kind == Kind::Smem &&
                  t.type.getElementType() == operandElt &&
                  rowStrideBytes(t) % 16 == 0 && t.colOff % 8 == 0;
  }
  if (aByLdmatrix)
    note(op, "A by ldmatrix.x4");
  if (grouped)
    note(op,
         "K steps grouped " + Twine(grouped->k / mi->k) + " per operand load");
  int64_t kStep = grouped ? grouped->k : mi->k;
  // K split across warp pairs (ChipInfo::splitKAcrossWarps): warps 2p and
  // 2p + 1 both compute the columns of both, warp 2p over the first
  // ceil(groups / 2) K groups and 2p + 1 over the rest, and swap the
  // partial sums of each other's columns through shared memory. A warp
  // then reads about half of A per tile instead of all of it (S = Q K^T
  // with 8 warps: every warp re-reading Q's 18 KB was 46 % of the KV
  // loop's shared-memory traffic on sm_90), for one exchange of its own
  // accumulators.
  int64_t splitAt = k;
  if (whole && grouped && target.chip.tuning.splitKAcrossWarps &&
      !op.getAcc() && warps % 2 == 0 && k / kStep >= 2) {
    kSplit = 2;
    splitAt = (k / kStep + 1) / 2 * kStep;
    note(op, "K split across warp pairs");
    init.append(l->size(), cstF32(b, loc(), 0.0f));
  }
  Value kLo = idx(range.begin), odd;
  if (kSplit == 2) {
    odd = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ne,
                                arith::AndIOp::create(b, loc(), warp, idx(1)),
                                idx(0));
    kLo = arith::SelectOp::create(b, loc(), odd, idx(splitAt), idx(0));
  }
  // The first register of instruction tile j (j >= tiles: the partner's
  // tile j - tiles, kept after this warp's) of M block mb.
  auto accAt = [&](int64_t mb, int64_t j) {
    return j / l->tiles * l->size() + l->reg(mb, j % l->tiles, 0);
  };
  // One K group of a grouped dot at column kk: its operand reads and
  // matrix instructions on `acc` (all accumulators).
  auto emitGroup = [&](Value kk, SmallVector<Value> acc) {
    LaneLayout ga = grouped->a(), gb = grouped->b();
    Value aRowG = laneOffset(lane, ga.laneBases, true);
    Value aColG = laneOffset(lane, ga.laneBases, false);
    Value bRowG = laneOffset(lane, gb.laneBases, true);
    Value bColG = laneOffset(lane, gb.laneBases, false);
    // A in the grouping's K order already (kOrderFor): each step's
    // fragment with ldmatrix at its logical columns.
    const auto &perm = lhs->kPerm;
    bool aPermuted = perm && perm->steps == grouped->steps &&
                     perm->k == grouped->k &&
                     perm->logicalBitTo == grouped->logicalBitTo;
    // A of every M block (rows mb * M on).
    SmallVector<SmallVector<Value>> a(l->mBlocks);
    for (int64_t mb = 0; mb < l->mBlocks; ++mb) {
      if (aPermuted) {
        Tile rows = *lhs;
        rows.rowOff += mb * mi->m;
        for (int64_t s = 0; s < grouped->steps; ++s)
          llvm::append_range(a[mb], readAByLdmatrix(rows, addc(kk, s * mi->k)));
      } else {
        a[mb] = read(*lhs, ga, /*transposed=*/false, [&](Coord c) {
          return std::pair(addc(aRowG, c.row + mb * mi->m),
                           add(kk, addc(aColG, c.col)));
        });
      }
    }
    // Tiles 0 .. l->tiles - 1 are this warp's, the rest (K split) its
    // partner's.
    SmallVector<SmallVector<Value>> bs;
    for (int64_t j = 0; j < l->tiles * kSplit; ++j)
      bs.push_back(read(*rhs, gb, /*transposed=*/true, [&](Coord c) {
        Value n = addc(bColG, c.col);
        Value col = j < l->tiles
                        ? tileColumn(*l, n, j)
                        : tileColumnOf(*l, partnerWarp(), n, j - l->tiles);
        return std::pair(col, add(kk, addc(bRowG, c.row)));
      }));
    int64_t ea = mi->a.elemsPerLane(), eb = mi->b.elemsPerLane();
    for (int64_t s = 0; s < grouped->steps; ++s)
      for (int64_t j = 0; j < l->tiles * kSplit; ++j)
        for (int64_t mb = 0; mb < l->mBlocks; ++mb) {
          int64_t at = accAt(mb, j);
          auto d = target.matrixOp(b, loc(), mi, operandElt,
                                   ArrayRef<Value>(a[mb]).slice(s * ea, ea),
                                   ArrayRef<Value>(bs[j]).slice(s * eb, eb),
                                   ArrayRef<Value>(acc).slice(at, l->elems));
          llvm::copy(d, acc.begin() + at);
        }
    return acc;
  };
  // K split across a warp pair: both walk the same number of whole groups
  // (a loop with a static trip count, unrolled: the rolled walk of 5 or 4
  // groups spent about 12 instructions a group on its loop), and the warp
  // with the extra group of an odd count takes it under a warp-uniform
  // branch.
  if (kSplit == 2) {
    int64_t each = (k / kStep) / 2;
    auto walk = scf::ForOp::create(b, loc(), idx(0), idx(each), idx(1), init);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(walk.getBody());
      Value kk = add(kLo, mul(walk.getInductionVar(), kStep));
      scf::YieldOp::create(
          b, loc(),
          emitGroup(kk, SmallVector<Value>(walk.getRegionIterArgs())));
    }
    SmallVector<Value> acc = unrollFully(walk);
    if ((k / kStep) % 2) {
      // The first warp of the pair walks ceil(groups / 2) (splitAt).
      auto extra = scf::IfOp::create(b, loc(), TypeRange(ValueRange(acc)), odd,
                                     /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(extra.thenBlock());
        scf::YieldOp::create(b, loc(), acc);
        b.setInsertionPointToStart(extra.elseBlock());
        scf::YieldOp::create(b, loc(),
                             emitGroup(add(kLo, idx(each * kStep)), acc));
      }
      acc.assign(extra.getResults().begin(), extra.getResults().end());
    }
    return acc;
  }
  auto loop =
      scf::ForOp::create(b, loc(), kLo, idx(range.end), idx(kStep), init);
  if (grouped) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    scf::YieldOp::create(
        b, loc(),
        emitGroup(loop.getInductionVar(),
                  SmallVector<Value>(loop.getRegionIterArgs())));
  } else {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kk = loop.getInductionVar();
    // A (m, k) of M block mb is row mb * M + m, column kk + k of lhs.
    SmallVector<SmallVector<Value>> a(l->mBlocks);
    for (int64_t mb = 0; mb < l->mBlocks; ++mb) {
      if (aByLdmatrix) {
        Tile rows = *lhs;
        rows.rowOff += mb * mi->m;
        a[mb] = readAByLdmatrix(rows, kk);
      } else {
        a[mb] = read(*lhs, mi->a, /*transposed=*/false,
                     [&](Coord c) -> std::pair<Value, Value> {
                       return {addc(aRowI, c.row + mb * mi->m),
                               add(kk, addc(aColI, c.col))};
                     });
      }
    }
    SmallVector<Value> acc(loop.getRegionIterArgs());
    SmallVector<Value> next(acc);
    // B (k, n) of tile j is rhs[kk + k][col] or, transposed,
    // rhs[col][kk + k] (then consecutive k are adjacent in a row), with
    // col = tileColumn(n, j) (interleaved, see accCoord, or natural with
    // the transposing read).
    SmallVector<SmallVector<Value>> bAll;
    if (!trans && !l->interleaved) {
      bAll = readTransposedTiles(*rhs, mi->b, *l, kk, raw, operandElt);
      if (!bAll.empty())
        note(op, "B by transposing read");
    } else if (!trans)
      bAll =
          readAcrossTiles(*rhs, mi->b, l->tiles, raw, operandElt, [&](Coord c) {
            return std::pair(add(kk, addc(bRowI, c.row)),
                             tileColumn(*l, addc(bColI, c.col), 0));
          });
    for (int64_t j = 0; j < l->tiles; ++j) {
      SmallVector<Value> bv =
          !bAll.empty()
              ? bAll[j]
              : read(*rhs, mi->b, /*transposed=*/trans,
                     [&](Coord c) -> std::pair<Value, Value> {
                       Value kr = add(kk, addc(bRowI, c.row));
                       Value col = tileColumn(*l, addc(bColI, c.col), j);
                       return trans ? std::pair(col, kr) : std::pair(kr, col);
                     });
      // Each B fragment serves every M block.
      for (int64_t mb = 0; mb < l->mBlocks; ++mb) {
        int64_t at = l->reg(mb, j, 0);
        auto d = target.matrixOp(b, loc(), mi, operandElt, a[mb], bv,
                                 ArrayRef<Value>(acc).slice(at, l->elems));
        llvm::copy(d, next.begin() + at);
      }
    }
    scf::YieldOp::create(b, loc(), next);
  }
  // The K steps of one dot, unrolled (see lowerLoad).
  return target.chip.tuning.unrollTileLoops
             ? unrollFully(loop)
             : SmallVector<Value>(loop.getResults());
}

Value Lowering::tileColumnOf(const AccLayout &l, Value w, Value n,
                             int64_t j) {
  // A warpgroup instruction (wgmma) spans its warps' N columns each:
  // tile j of warpgroup G holds columns G x group x colsPerWarp +
  // j x group x N + (w mod group) x N + n.
  if (int64_t g = l.mi->warpsPerInstr; g > 1) {
    Value wg = arith::DivUIOp::create(b, loc(), w, idx(g));
    Value wi = arith::RemUIOp::create(b, loc(), w, idx(g));
    return add(add(mul(wg, l.colsPerWarp * g), mul(wi, l.mi->n)),
               addc(n, j * g * l.mi->n));
  }
  if (!l.interleaved)
    return add(mul(w, l.colsPerWarp), addc(n, j * l.mi->n));
  return add(mul(w, l.colsPerWarp), addc(mul(n, l.tiles), j));
}

SmallVector<Value> Lowering::unrollFully(scf::ForOp loop) {
  auto hold = UnrealizedConversionCastOp::create(
      b, loc(), TypeRange(loop.getResultTypes()), loop.getResults());
  (void)loopUnrollFull(loop);
  SmallVector<Value> out(hold.getInputs());
  hold.erase();
  return out;
}

void Lowering::finishDot(DotOp op, const AccLayout &l, int64_t kSplit,
                         SmallVector<Value> results, RankedTensorType resT) {
  if (kSplit == 2) {
    int64_t n = l.size();
    Value slots = allocSmem(warps * n, wave, b.getF32Type());
    barrierBeforeRewrite();
    for (int64_t r = 0; r < n; ++r)
      memref::StoreOp::create(b, loc(), results[n + r], slots,
                              ValueRange{addc(mul(partnerWarp(), n), r), lane});
    barrier();
    for (int64_t r = 0; r < n; ++r)
      results[r] = arith::AddFOp::create(
          b, loc(), results[r],
          memref::LoadOp::create(b, loc(), slots,
                                 ValueRange{addc(mul(warp, n), r), lane}));
    results.resize(n);
  }
  tiles[op] = regTile(Kind::Acc, resT, results);
}

} // namespace mlir::mla::gpulower
