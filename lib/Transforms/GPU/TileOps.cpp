//===- TileOps.cpp - fill, cast, scale, slice, mask, store ----------------===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

LogicalResult Lowering::lowerFill(FillOp op) {
  auto t = op.getType();
  Value c = arith::ConstantOp::create(b, loc(), op.getValueAttr());
  if (t.getRank() == 1) {
    auto l = rowLayout(t.getDimSize(0));
    if (failed(l))
      return failure();
    tiles[op] =
        regTile(Kind::RowSlice, t, SmallVector<Value>(l->rowGroups.size(), c));
    return success();
  }
  auto l = accLayout(t);
  if (failed(l))
    return failure();
  tiles[op] = regTile(Kind::Acc, t, SmallVector<Value>(l->size(), c));
  return success();
}

LogicalResult Lowering::lowerElementwise(
    Value result, Value source,
    std::function<Value(OpBuilder &, Location, Value)> fn) {
  auto src = get(source);
  auto t = cast<RankedTensorType>(result.getType());
  if (src->kind == Kind::Smem || src->kind == Kind::Expr) {
    auto e = std::make_shared<Tile>();
    e->kind = Kind::Expr;
    e->type = t;
    e->src = src;
    e->fn = fn;
    tiles[result] = e;
    return success();
  }
  SmallVector<Value> regs;
  for (Value r : src->regs)
    regs.push_back(fn(b, loc(), r));
  tiles[result] = regTile(src->kind, t, std::move(regs));
  return success();
}

LogicalResult Lowering::lowerCast(CastOp op) {
  Type to = op.getResult().getType().getElementType();
  auto src = get(op.getSource());
  if (src && src->kind == Kind::Acc && !to.isF32()) {
    // Keep the rounded stored values beside their f32 reading: a dot
    // operand (P) is written to shared memory as is.
    // Pairs of registers through the chip's fp8 pair rounding where it
    // has one.
    SmallVector<Value> regs,
        stored = target.roundedToStored(b, loc(), src->regs, to);
    for (Value v : stored)
      regs.push_back(toF32(b, loc(), v, to));
    auto t = regTile(Kind::Acc, op.getResult().getType(), std::move(regs));
    t->stored = std::move(stored);
    tiles[op] = t;
    return success();
  }
  return lowerElementwise(op.getResult(), op.getSource(),
                          [to](OpBuilder &nb, Location l, Value v) {
                            // Registers hold f32 rounded to the type.
                            return toF32(nb, l, fromF32(nb, l, v, to), to);
                          });
}

LogicalResult Lowering::lowerScale(ScaleOp op) {
  Value factor = scalars.lookup(op.getFactor());
  return lowerElementwise(op.getResult(), op.getSource(),
                          [factor](OpBuilder &nb, Location l, Value v) {
                            return arith::MulFOp::create(nb, l, v, factor)
                                .getResult();
                          });
}

LogicalResult Lowering::lowerSlice(SliceOp op) {
  auto src = get(op.getSource());
  if (src->kind != Kind::Smem)
    return fail("the GPU lowering slices shared-memory tiles only");
  auto t = std::make_shared<Tile>(*src);
  t->type = op.getResult().getType();
  t->rowOff += op.getOffsets()[0];
  t->colOff += op.getOffsets()[1];
  tiles[op] = t;
  return success();
}

LogicalResult Lowering::lowerMask(MaskOp op) {
  auto src = get(op.getSource());
  if (src->kind != Kind::Acc)
    return fail("the GPU lowering masks register tiles only");
  auto l = accLayout(src->type);
  if (failed(l))
    return failure();
  Value off = scalars.lookup(op.getOffset()),
        bound = scalars.lookup(op.getBound());
  Value edge = op.getRowEdge() ? scalars.lookup(op.getRowEdge()) : Value();
  // Each register's position against the bound (and its row's edge), the
  // fill where past it.
  auto masked = [&]() {
    Value fill = arith::ConstantOp::create(b, loc(), op.getFillAttr());
    SmallVector<Value> regs;
    for (int64_t r = 0; r < l->size(); ++r) {
      auto [row, col] = accCoord(*l, r);
      Value pos = add(off, op.getDim() == 0 ? row : col);
      Value out = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::sge,
                                        pos, bound);
      if (edge) {
        // Causal rows: row r's bound is edge + r floordiv period.
        Value rowEdge =
            add(edge, arith::DivUIOp::create(
                          b, loc(), row,
                          idx(static_cast<int64_t>(*op.getRowPeriod()))));
        out = arith::OrIOp::create(
            b, loc(), out,
            arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::sge, pos,
                                  rowEdge));
      }
      regs.push_back(
          arith::SelectOp::create(b, loc(), out, fill, src->regs[r]));
    }
    return regs;
  };
  if (!target.chip.tuning.maskWholeTiles) {
    tiles[op] = regTile(Kind::Acc, op.getType(), masked());
    return success();
  }
  // A tile that lies wholly below the bound (and, causal, left of row 0's
  // edge, the smallest) keeps every element: one uniform test per tile
  // instead of a position, a compare and a select per register on every
  // tile of a sequence but its last (ChipTuning::maskWholeTiles).
  Value end = addc(off, src->type.getDimSize(op.getDim()));
  Value whole =
      arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::sle, end, bound);
  if (edge)
    whole = arith::AndIOp::create(
        b, loc(), whole,
        arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::sle, end, edge));
  auto ifOp = scf::IfOp::create(
      b, loc(), whole,
      [&](OpBuilder &nb, Location ml) {
        scf::YieldOp::create(nb, ml, ValueRange(src->regs));
      },
      [&](OpBuilder &nb, Location ml) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        scf::YieldOp::create(b, ml, masked());
      });
  tiles[op] =
      regTile(Kind::Acc, op.getType(), SmallVector<Value>(ifOp.getResults()));
  return success();
}

LogicalResult Lowering::lowerStore(StoreOp op) {
  auto t = get(op.getValue());
  Value dst = scalars.lookup(op.getDest());
  Type dstElt = op.getDest().getType().getElementType();
  SmallVector<Value> base;
  for (Value i : op.getIndices())
    base.push_back(scalars.lookup(i));
  int64_t rank = t->type.getRank();
  size_t lead = base.size() - rank;
  Value bound = op.getBound() ? scalars.lookup(op.getBound()) : Value();

  // Stores `vals` (f32, rounded to the destination type) at `coord`
  // and the columns after it: one element, or one vector of them
  // (aligned by the caller).
  auto emit = [&](ArrayRef<Value> coord, ArrayRef<Value> vals, Value pred) {
    SmallVector<Value> at = base;
    for (int64_t d = 0; d < rank; ++d)
      at[lead + d] = add(base[lead + d], coord[d]);
    if (bound) {
      Value in = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt,
                                       at[lead], bound);
      pred = pred ? arith::AndIOp::create(b, loc(), pred, in).getResult() : in;
    }
    SmallVector<Value> stored;
    for (Value v : vals)
      stored.push_back(fromF32(b, loc(), v, dstElt));
    auto store = [&](OpBuilder &nb, Location l) {
      if (stored.size() == 1) {
        memref::StoreOp::create(nb, l, stored[0], dst, at);
        return;
      }
      int64_t w = stored.size();
      Value vec = vector::FromElementsOp::create(
          nb, l, VectorType::get({w}, storageType(dstElt)), stored);
      vector::StoreOp::create(nb, l, vec, dst, at, /*nontemporal=*/false,
                              llvm::MaybeAlign(w * storedBytes(dstElt)));
    };
    if (!pred) {
      store(b, loc());
      return;
    }
    scf::IfOp::create(b, loc(), pred, [&](OpBuilder &nb, Location l) {
      store(nb, l);
      scf::YieldOp::create(nb, l);
    });
  };

  switch (t->kind) {
  case Kind::Acc: {
    auto l = accLayout(t->type);
    if (failed(l))
      return failure();
    // The interleaved columns (accCoord) put a lane's registers of one
    // instruction element in adjacent columns, tile after tile: store
    // them w at a time (up to 16 bytes) where the destination row and the
    // column base allow it, so a warp writes whole sectors.
    auto dstT = cast<MemRefType>(op.getDest().getType());
    int64_t bytes = storedBytes(dstElt);
    std::optional<int64_t> colBase =
        getConstantIntValue(op.getIndices()[lead + 1]);
    int64_t w = 1;
    while (l->interleaved && l->tiles % (2 * w) == 0 && 2 * w * bytes <= 16 &&
           colBase && *colBase % (2 * w) == 0 &&
           !dstT.isDynamicDim(dstT.getRank() - 1) &&
           dstT.getDimSize(dstT.getRank() - 1) % (2 * w) == 0 &&
           dstT.getLayout().isIdentity())
      w *= 2;
    for (int64_t r = 0; r < l->size(); ++r) {
      if ((r / l->elems) % w)
        continue;
      auto [row, col] = accCoord(*l, r);
      SmallVector<Value> vals;
      for (int64_t jj = 0; jj < w; ++jj)
        vals.push_back(t->regs[r + jj * l->elems]);
      emit({row, col}, vals, Value());
    }
    return success();
  }
  case Kind::RowSlice: {
    auto l = rowLayout(t->type.getDimSize(0));
    if (failed(l))
      return failure();
    // Every lane of a row holds the value: warp 0's column-0 lanes store.
    Value first = arith::AndIOp::create(
        b, loc(),
        arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::eq, warp, idx(0)),
        arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::eq, cCol,
                              idx(0)));
    for (auto [g, v] : llvm::enumerate(t->regs))
      emit({addc(cRow, l->rowGroups[g])}, v, first);
    return success();
  }
  case Kind::Blocked: {
    int64_t cols = t->type.getDimSize(rank - 1);
    int64_t numel = t->type.getNumElements();
    int64_t run = t->blockRun;
    for (auto [k, v] : llvm::enumerate(t->regs)) {
      Value e = addc(mul(addc(tid, int64_t(k) / run * threads), run),
                     int64_t(k) % run);
      Value pred;
      if (numel % (threads * run) != 0)
        pred = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult, e,
                                     idx(numel));
      if (rank == 2)
        emit({arith::DivUIOp::create(b, loc(), e, idx(cols)),
              arith::RemUIOp::create(b, loc(), e, idx(cols))},
             v, pred);
      else
        emit({e}, v, pred);
    }
    return success();
  }
  default:
    return fail("the GPU lowering stores register tiles only");
  }
}

} // namespace mlir::mla::gpulower
