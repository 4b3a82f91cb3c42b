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

void Lowering::chooseColumnOrder(Operation *kernel) {
  interleaveAccColumns = true;
  // Warpgroup instructions fix their own column order (tileColumnOf).
  if (target.mma->smemOperands) {
    interleaveAccColumns = false;
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
  Type operandElt = raw                             ? lhsElt
                    : mi->abType == MatrixElem::F16 ? Type(b.getF16Type())
                                                    : Type(b.getBF16Type());
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

LogicalResult Lowering::dotOnWarpgroups(DotOp op, const AccLayout &l) {
  Type lhsElt = op.getLhs().getType().getElementType();
  Type rhsElt = op.getRhs().getType().getElementType();
  int64_t k = op.getLhs().getType().getDimSize(1);
  const MatrixInstr *mi = target.instrFor(lhsElt, rhsElt, k);
  if (!mi->smemOperands)
    return fail("the warpgroup lowering takes only matrix instructions that "
                "read shared memory (internal error)");
  Type want = mi->abType == MatrixElem::F16 ? Type(b.getF16Type())
                                            : Type(b.getBF16Type());
  auto cstI64 = [](OpBuilder &nb, Location l, int64_t v) -> Value {
    return arith::ConstantIntOp::create(nb, l, v, 64);
  };
  auto typeName = [](Type t) {
    std::string str;
    llvm::raw_string_ostream os(str);
    t.print(os);
    return str;
  };
  // Both operands as swizzled tiles in shared memory, of the
  // instruction's own type (wgmma converts nothing).
  auto operand = [&](Value v, StringRef which) -> FailureOr<Tile> {
    auto t = ensureShared(get(v));
    if (failed(t))
      return failure();
    std::shared_ptr<Tile> tile = *t;
    if (tile->kind == Kind::Expr)
      tile = materialize(v, tile);
    Type elt = tile->type.getElementType();
    // fp8 (KV) as the instruction's type: one conversion of the whole
    // stored tile per tile, which both dots then read (wgmma takes fp8 only
    // as both operands fp8).
    if (isFp8(elt) && tile->kind == Kind::Smem)
      if (auto conv = convertedTile(*tile, want)) {
        tile = conv;
        elt = want;
      }
    if (elt != want)
      return fail(Twine("wgmma (") + mi->name + ") reads " +
                  (want.isF16() ? "f16" : "bf16") + " operands; the " + which +
                  " operand is " + typeName(elt) +
                  " (convert it to a tile of that type first)");
    if (!isSwizzledView(tile->view) || tile->rowOff % 8 || tile->colOff % 64)
      return fail(Twine("the ") + which +
                  " operand is not a shared-memory tile in the 128-byte "
                  "swizzle (internal error)");
    return *tile;
  };
  auto lhs = operand(op.getLhs(), "left");
  auto rhs = operand(op.getRhs(), "right");
  if (failed(lhs) || failed(rhs))
    return failure();
  note(op, Twine(mi->name) + ", transposed: A = " +
               (op.getTransposeRhs() ? "rhs (K-major)" : "rhs^T (MN-major)") +
               ", B = lhs^T (K-major), descriptors from shared memory");
  int64_t group = mi->warpsPerInstr;
  if (warps % group)
    return fail("wgmma needs the warps in whole warpgroups of " + Twine(group) +
                ", got " + Twine(warps));
  int64_t n = l.rows(); // the instruction's N: every row of the dot
  if (n > 256 || n % 16)
    return fail("wgmma takes N = 16 .. 256 rows in steps of 16, got " +
                Twine(n));
  if (k % mi->k)
    return fail("contraction size " + Twine(k) + " is not a multiple of " +
                "the matrix instruction's K (" + Twine(mi->k) + ")");
  // The shared address (i64) of a tile's first byte: its view's place in
  // dynamic shared memory.
  Type i64 = b.getI64Type();
  Value smemAddr = arith::IndexCastOp::create(
      b, loc(), i64,
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), smemBase));
  auto tileBase = [&](const Tile &t) -> Value {
    auto view = t.view.getDefiningOp<memref::ViewOp>();
    assert(view && view.getSource() == smemBase && "tiles are views of smem");
    return arith::AddIOp::create(
        b, loc(), smemAddr,
        arith::IndexCastOp::create(b, loc(), i64, view.getByteShift()));
  };
  auto storedRows = [](const Tile &t) {
    return cast<MemRefType>(t.view.getType()).getDimSize(1);
  };
  // The descriptor of the operand of `t` at static byte offset `off` plus
  // runtime byte offset `dyn` (both unswizzled addresses, as the tensor
  // cores take them: they apply the swizzle).
  auto descriptor = [&](Value base, Value dyn, int64_t off,
                        int64_t leading) -> Value {
    Value addr = arith::AddIOp::create(
        b, loc(), arith::AddIOp::create(b, loc(), base, dyn),
        cstI64(b, loc(), off));
    Value field = arith::AndIOp::create(
        b, loc(), arith::ShRUIOp::create(b, loc(), addr, cstI64(b, loc(), 4)),
        cstI64(b, loc(), 0x3FFF));
    return arith::OrIOp::create(
        b, loc(), field,
        cstI64(b, loc(), int64_t(wgmmaDescriptor(0, leading, 1024))));
  };
  auto toI64 = [&](Value x) -> Value {
    return arith::IndexCastOp::create(b, loc(), i64, x);
  };
  bool trans = op.getTransposeRhs();
  Value aBase = tileBase(*rhs), bBase = tileBase(*lhs);
  int64_t aRows = storedRows(*rhs), bRows = storedRows(*lhs);
  // This warpgroup's first column of the dot: its instruction tiles cover
  // group x colsPerWarp columns, 64 (the instruction's M) per tile. In
  // bytes of A: rhs rows when transposed (128 bytes each), else rhs
  // columns (whole atoms of aRows x 128 bytes).
  int64_t mInstr = mi->n * group;
  Value wgCol = mul(arith::DivUIOp::create(b, loc(), warp, idx(group)),
                    l.colsPerWarp * group);
  Value wgA = trans ? mul(wgCol, 128)
                    : mul(arith::DivUIOp::create(b, loc(), wgCol, idx(64)),
                          aRows * 128);
  aBase = arith::AddIOp::create(b, loc(), aBase, toI64(wgA));
  SmallVector<Value> acc;
  if (op.getAcc())
    acc = get(op.getAcc())->regs;
  else
    acc.assign(l.size(), cstF32(b, loc(), 0.0f));
  // The K steps in a rolled loop, `unroll` steps an iteration (K-major A:
  // one 64-column atom; MN-major A: one step of 16 rows): its descriptors
  // follow the induction variable, where unrolled LLVM hoisted every
  // loop-invariant one out of the KV loop (254 registers and spills). All
  // of a dot's instructions form one group, waited for after the loop.
  int64_t steps = k / mi->k;
  int64_t unroll = trans && steps % 4 == 0 ? 4 : 1;
  // Independent accumulator chains: a dot of one instruction tile per
  // warpgroup (S^T = K Q^T: 36 steps into one tile) runs step u of each
  // iteration into its own copy of the accumulators, summed after the
  // wait, so that the tensor cores overlap `chains` instructions instead of
  // waiting for each result (O^T's 8 tiles are 8 chains already).
  int64_t chains = l.tiles == 1 ? unroll : 1;
  SmallVector<Value> init = acc;
  for (int64_t c = 1; c < chains; ++c)
    init.append(l.size(), cstF32(b, loc(), 0.0f));
  target.warpgroupFence(b, loc());
  auto loop = scf::ForOp::create(b, loc(), idx(0), idx(steps / unroll), idx(1),
                                 ValueRange(init));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> cur(loop.getRegionIterArgs());
    Value k0 = mul(loop.getInductionVar(), unroll * mi->k);
    // The start of K column kk of a K-major tile of `rows` rows: its atom
    // and its 32-byte step within the atom's rows.
    auto kMajor = [&](Value kk, int64_t rows) {
      return toI64(
          add(mul(arith::DivUIOp::create(b, loc(), kk, idx(64)), rows * 128),
              mul(arith::RemUIOp::create(b, loc(), kk, idx(64)), 2)));
    };
    for (int64_t u = 0; u < unroll; ++u) {
      Value kk = addc(k0, u * mi->k);
      int64_t chain = (u % chains) * l.size();
      // A: K-major rows j * 64 .. of rhs (S^T = K Q^T), or MN-major
      // columns j * 64 .. of rhs over its rows kk .. (O^T = V^T P^T).
      Value dynA = trans ? kMajor(kk, aRows) : toI64(mul(kk, 128));
      Value descB =
          descriptor(bBase, kMajor(kk, bRows),
                     smemSwizzledOffset(lhs->rowOff, lhs->colOff, bRows), 16);
      for (int64_t j = 0; j < l.tiles; ++j) {
        Value descA =
            trans
                ? descriptor(aBase, dynA,
                             smemSwizzledOffset(j * mInstr + rhs->rowOff,
                                                rhs->colOff, aRows),
                             16)
                : descriptor(aBase, dynA,
                             smemSwizzledOffset(
                                 rhs->rowOff, j * mInstr + rhs->colOff, aRows),
                             aRows * 128);
        // Instruction tile j: its registers mb * 8 + i are element i of M
        // block mb.
        SmallVector<Value> d;
        for (int64_t mb = 0; mb < l.mBlocks; ++mb)
          for (int64_t i = 0; i < l.elems; ++i)
            d.push_back(cur[chain + l.reg(mb, j, i)]);
        d = target.warpgroupMma(b, loc(), mi, n, descA, /*aMnMajor=*/!trans,
                                descB, d);
        for (int64_t mb = 0; mb < l.mBlocks; ++mb)
          for (int64_t i = 0; i < l.elems; ++i)
            cur[chain + l.reg(mb, j, i)] = d[mb * l.elems + i];
      }
    }
    scf::YieldOp::create(b, loc(), cur);
  }
  target.warpgroupCommitAndWait(b, loc(), 0);
  for (int64_t r = 0; r < l.size(); ++r) {
    acc[r] = loop.getResult(r);
    for (int64_t c = 1; c < chains; ++c)
      acc[r] = arith::AddFOp::create(b, loc(), acc[r],
                                     loop.getResult(c * l.size() + r));
  }
  tiles[op] = regTile(Kind::Acc, op.getResult().getType(), std::move(acc));
  return success();
}

void Lowering::storeConverted(Value bytes, Type elt, const Tile &dst, Value r,
                              Value c) {
  Type to = dst.type.getElementType();
  auto v8 = VectorType::get({8}, storageType(to));
  SmallVector<Value> out;
  for (int64_t e = 0; e < 16; e += 2) {
    Value pair = vector::ShuffleOp::create(b, loc(), bytes, bytes,
                                           ArrayRef<int64_t>{e, e + 1});
    llvm::append_range(out, pairToOperand(pair, elt, to));
  }
  for (int64_t h = 0; h < 2; ++h)
    vector::StoreOp::create(b, loc(),
                            vector::FromElementsOp::create(
                                b, loc(), v8, ArrayRef(out).slice(8 * h, 8)),
                            dst.view, smemAt(dst.view, r, addc(c, 8 * h)),
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
}

std::shared_ptr<Tile> Lowering::convertedTile(const Tile &t, Type to) {
  auto mt = cast<MemRefType>(t.view.getType());
  Type elt = t.type.getElementType();
  if (t.convertInto)
    return convertedInPlace(t, to);
  int64_t rows = mt.getDimSize(0);
  int64_t cols = mt.getDimSize(1) - kRowPadBytes / storedBytes(elt);
  if (!isFp8(elt) || storedBytes(elt) != 1 || rows % 8 || cols % 16 ||
      (rows * cols / 16) % threads || !swizzled(rows, cols, to))
    return nullptr;
  auto key =
      std::make_pair(t.view.getAsOpaquePointer(), to.getAsOpaquePointer());
  std::shared_ptr<Tile> whole = convertedTiles.lookup(key);
  if (!whole) {
    whole = std::make_shared<Tile>();
    whole->kind = Kind::Smem;
    whole->type = RankedTensorType::get({rows, cols}, to);
    whole->view = allocSmem(rows, cols, to);
    barrierBeforeRewrite();
    // 16 stored bytes a thread and round, row by row: 8 threads read 128
    // contiguous bytes, and write 4 swizzled chunks each of two atoms.
    int64_t groups = cols / 16, rounds = rows * cols / 16 / threads;
    // A rolled loop (two rounds an iteration): unrolled, LLVM issued every
    // round's load first and the registers ran out.
    int64_t per = rounds % 2 == 0 ? 2 : 1;
    auto loop = scf::ForOp::create(b, loc(), idx(0), idx(rounds / per), idx(1));
    OpBuilder::InsertionGuard ig(b);
    b.setInsertionPointToStart(loop.getBody());
    for (int64_t i = 0; i < per; ++i) {
      Value q =
          add(tid, mul(addc(mul(loop.getInductionVar(), per), i), threads));
      Value r = arith::DivUIOp::create(b, loc(), q, idx(groups));
      Value c = mul(arith::RemUIOp::create(b, loc(), q, idx(groups)), 16);
      Value bytes = vector::LoadOp::create(
          b, loc(), VectorType::get({16}, storageType(elt)), t.view,
          ValueRange{r, c}, /*nontemporal=*/false, llvm::MaybeAlign(16));
      storeConverted(bytes, elt, *whole, r, c);
    }
    b.setInsertionPointAfter(loop);
    barrier();
    convertedTiles[key] = whole;
  }
  auto out = std::make_shared<Tile>(*whole);
  out->type = RankedTensorType::get(t.type.getShape(), to);
  out->rowOff = t.rowOff;
  out->colOff = t.colOff;
  return out;
}

std::shared_ptr<Tile> Lowering::convertedInPlace(const Tile &t, Type to) {
  auto key =
      std::make_pair(t.view.getAsOpaquePointer(), to.getAsOpaquePointer());
  std::shared_ptr<Tile> whole = convertedTiles.lookup(key);
  auto region = cast<MemRefType>(t.convertInto.getType());
  int64_t rows = region.getDimSize(1), atoms = region.getDimSize(0);
  int64_t cols = atoms * 64;
  Type elt = t.type.getElementType();
  if (!whole) {
    if (region.getElementType() != storageType(to))
      return nullptr;
    whole = std::make_shared<Tile>();
    whole->kind = Kind::Smem;
    whole->type = RankedTensorType::get({rows, cols}, to);
    whole->view = t.convertInto;
    barrierBeforeRewrite();
    // Atom by atom: f16 atom a fills bytes [a, a + 1) x rows x 128 of the
    // region, the fp8 atom a' sits at rows x cols + [a', a' + 1) x rows x
    // 64. An atom's writes wait (barrier) only for the threads' reads of
    // the staged atoms they overwrite; the last atom overwrites its own,
    // so its bytes are all read first.
    auto overlaps = [&](int64_t a, int64_t staged) {
      int64_t w0 = a * rows * 128, w1 = w0 + rows * 128;
      int64_t s0 = rows * cols + staged * rows * 64, s1 = s0 + rows * 64;
      return w0 < s1 && s0 < w1;
    };
    int64_t rounds = rows * 4 / threads; // 16-byte fp8 chunks an atom
    int64_t readBefore = 0; // staged atoms below this are read by all
    for (int64_t a = 0; a < atoms; ++a) {
      bool self = overlaps(a, a);
      for (int64_t sa = readBefore; sa < a; ++sa)
        if (overlaps(a, sa)) {
          barrier();
          readBefore = a;
          break;
        }
      SmallVector<std::array<Value, 3>> got; // bytes, row, column
      for (int64_t i = 0; i < rounds; ++i) {
        Value q = addc(tid, i * threads);
        Value r = arith::DivUIOp::create(b, loc(), q, idx(4));
        Value c =
            addc(mul(arith::RemUIOp::create(b, loc(), q, idx(4)), 16), a * 64);
        got.push_back({vector::LoadOp::create(
                           b, loc(), VectorType::get({16}, storageType(elt)),
                           t.view, smemAt(t.view, r, c),
                           /*nontemporal=*/false, llvm::MaybeAlign(16)),
                       r, c});
      }
      if (self) {
        barrier();
        readBefore = a + 1;
      }
      for (auto &[bytes, r, c] : got) {
        storeConverted(bytes, elt, *whole, r, c);
      }
    }
    barrier();
    convertedTiles[key] = whole;
  }
  auto out = std::make_shared<Tile>(*whole);
  out->type = RankedTensorType::get(t.type.getShape(), to);
  out->rowOff = t.rowOff;
  out->colOff = t.colOff;
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
