//===- Tiles.cpp - shared memory, placements, elementwise ops, stores, control
// flow ---===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

Value Lowering::laneOffset(Value laneV, ArrayRef<Coord> bases, bool row) {
  Value sum = idx(0);
  for (auto [j, c] : llvm::enumerate(bases)) {
    int64_t v = row ? c.row : c.col;
    if (!v)
      continue;
    Value bit = arith::AndIOp::create(
        b, loc(), arith::ShRUIOp::create(b, loc(), laneV, idx(j)), idx(1));
    sum = add(sum, mul(bit, v));
  }
  return sum;
}

void Lowering::init(Location l) {
  tid = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
  lane = arith::RemUIOp::create(b, l, tid, idx(wave));
  warp = arith::DivUIOp::create(b, l, tid, idx(wave));
  const MatrixInstr *mi = target.mma;
  aRow = laneOffset(lane, mi->a.laneBases, true);
  aCol = laneOffset(lane, mi->a.laneBases, false);
  bRow = laneOffset(lane, mi->b.laneBases, true);
  bCol = laneOffset(lane, mi->b.laneBases, false);
  cRow = laneOffset(lane, mi->c.laneBases, true);
  cCol = laneOffset(lane, mi->c.laneBases, false);
  auto wg =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  smemBase = gpu::DynamicSharedMemoryOp::create(
      b, l,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr, wg));
}

Value Lowering::allocSmem(int64_t rows, int64_t cols, Type elt, bool swizzle) {
  int64_t eltBytes = storedBytes(elt);
  bool swz = swizzle || swizzled(rows, cols, elt);
  int64_t padded = swz ? cols : paddedRowBytes(cols * eltBytes) / eltBytes;
  int64_t bytes = rows * padded * eltBytes;
  // Swizzled atoms start 1024-byte aligned: the swizzle permutes address
  // bits 4-6 by bits 7-9.
  int64_t offset = smem.place(bytes, swz ? 1024 : 16);
  lastSmemOffset = offset;
  return swz ? swizzledViewAt(idx(offset), rows, cols, elt)
             : smemViewAt(idx(offset), {rows, padded}, storageType(elt));
}

Value Lowering::swizzledViewAt(Value offset, int64_t rows, int64_t cols,
                               Type elt) {
  return smemViewAt(offset, {cols / 64, rows, 64}, storageType(elt));
}

Value Lowering::smemViewAt(Value offset, ArrayRef<int64_t> shape,
                           Type storage) {
  auto wg =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  return memref::ViewOp::create(b, loc(),
                                MemRefType::get(shape, storage, nullptr, wg),
                                smemBase, offset, ValueRange{});
}

FailureOr<AccLayout> Lowering::accLayout(RankedTensorType t) {
  const MatrixInstr *mi = target.mma;
  if (t.getRank() != 2 || t.getDimSize(0) % mi->m != 0 || t.getDimSize(0) == 0)
    return fail("a register tile must have a positive multiple of " +
                Twine(mi->m) + " rows (the matrix instruction's M), got " +
                Twine(t.getRank() == 2 ? t.getDimSize(0) : 0));
  int64_t cols = t.getDimSize(1);
  if (cols % (warps * mi->n) != 0)
    return fail("a tile of " + Twine(cols) +
                " columns cannot be split across " + Twine(warps) +
                " warps of " + Twine(mi->n) + "-column instructions");
  AccLayout l{mi,
              cols,
              cols / warps,
              cols / warps / mi->n,
              mi->c.elemsPerLane(),
              t.getDimSize(0) / mi->m,
              interleaveAccColumns,
              {},
              0};
  SmallVector<int64_t> local;
  for (int64_t i = 0; i < l.elems; ++i)
    if (!llvm::is_contained(local, l.elemRow(i)))
      local.push_back(l.elemRow(i));
  l.localGroups = local.size();
  for (int64_t mb = 0; mb < l.mBlocks; ++mb)
    for (int64_t row : local)
      l.rowGroups.push_back(row + mb * mi->m);
  return l;
}

std::shared_ptr<Tile> Lowering::soleRoot(Value v) {
  Operation *def = v.getDefiningOp();
  while (def && isa<CastOp, ScaleOp>(def)) {
    Value src = def->getOperand(0);
    if (!src.hasOneUse())
      return nullptr;
    v = src;
    def = v.getDefiningOp();
  }
  auto root = tiles.lookup(v);
  if (!root || root->kind != Kind::Smem || root->rowOff || root->colOff)
    return nullptr;
  return root;
}

std::shared_ptr<Tile> Lowering::materialize(Value v,
                                            const std::shared_ptr<Tile> &t) {
  int64_t rows = t->type.getDimSize(0), cols = t->type.getDimSize(1);
  Type elt = t->type.getElementType();
  auto out = std::make_shared<Tile>();
  out->kind = Kind::Smem;
  out->type = t->type;
  auto root = soleRoot(v);
  // Element-wise evaluation keeps every element's place, so a K order
  // (kOrderFor) carries over.
  if (root)
    out->kPerm = root->kPerm;
  auto bits = [](Type e) { return storageType(e).getIntOrFloatBitWidth(); };
  // In place also when only the element type changes within one storage
  // type (bf16 Q rounded to f16 for qp_type = f16): the same i16 view.
  bool inPlace = root && root->type.getShape() == t->type.getShape() &&
                 storageType(root->type.getElementType()) == storageType(elt);
  // (Not a swizzled tile: its atoms of 64 elements put a narrow element's
  // bytes over wide ones of later rows, which the rounds below read late.)
  bool narrowing = root && !inPlace && !isSwizzledView(root->view) &&
                   root->view.getDefiningOp<memref::ViewOp>() &&
                   root->type.getShape() == t->type.getShape() &&
                   bits(elt) < bits(root->type.getElementType()) &&
                   (rows * cols) % threads == 0;
  if (inPlace) {
    out->view = root->view;
  } else if (narrowing) {
    // The same bytes of shared memory, read as the narrower type.
    auto def = root->view.getDefiningOp<memref::ViewOp>();
    out->view =
        smemViewAt(def.getByteShift(),
                   cast<MemRefType>(root->view.getType()).getShape(),
                   storageType(elt));
  } else {
    out->view = allocSmem(rows, cols, elt);
  }
  auto coord = [&](Value e) {
    return std::pair(
        arith::DivUIOp::create(b, loc(), e, idx(cols)).getResult(),
        arith::RemUIOp::create(b, loc(), e, idx(cols)).getResult());
  };
  // What is rounded to `elt` below: where `v` is itself a cast to `elt`
  // (fp8 Q from bf16 Q), the cast's source. Reading `t` would round each
  // element twice, in software, then again on storing (the same value:
  // rounding is idempotent), which made the fp8 Q of the e4m3 path cost
  // about 40 instructions an element.
  const Tile *from = t.get();
  if (auto cast = v.getDefiningOp<CastOp>())
    if (auto src = tiles.lookup(cast.getSource());
        src && (src->kind == Kind::Smem || src->kind == Kind::Expr) &&
        cast.getResult().getType().getElementType() == elt)
      from = src.get();
  if (narrowing) {
    // Rounds of `group` elements per thread in increasing element order:
    // the narrow bytes a round writes overlap only wide elements of this
    // or earlier rounds, which were read before the round's barrier.
    int64_t perThread = rows * cols / threads;
    int64_t group = perThread % 4 == 0 ? 4 : 1;
    auto rounds =
        scf::ForOp::create(b, loc(), idx(0), idx(perThread / group), idx(1));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(rounds.getBody());
    Value first = mul(rounds.getInductionVar(), group * threads);
    SmallVector<std::pair<Value, Value>> at;
    SmallVector<Value> vals;
    for (int64_t j = 0; j < group; ++j) {
      auto [r, c] = coord(add(first, addc(tid, j * threads)));
      at.push_back({r, c});
      vals.push_back(fromF32(b, loc(), readF32(*from, r, c), elt));
    }
    barrier();
    for (auto [rc, val] : llvm::zip(at, vals))
      memref::StoreOp::create(b, loc(), val, out->view,
                              smemAt(out->view, rc.first, rc.second));
    b.setInsertionPointAfter(rounds);
    barrier();
    return out;
  }
  // fp8 in pairs through the chip's pair rounding where it has one (fp8 Q
  // for fp8 wgmma, 9216 roundings a program: one by one in software they
  // made 4 x 1024 take 22.6 us on the H200, 17.1 with the pairs and the
  // transpose's cheaper indices), a run of 8 columns a thread and step
  // where the rows allow: one element's row, column and swizzle per run,
  // and the run's 8 bytes stored at once (contiguous in every layout:
  // a swizzle moves 16-byte chunks).
  if (isFp8(elt) && cols % 2 == 0) {
    int64_t run = cols % 8 == 0 ? 8 : 2;
    auto loop =
        scf::ForOp::create(b, loc(), mul(tid, run), idx(rows * cols),
                           idx(run * threads));
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      auto [r, c] = coord(loop.getInductionVar());
      SmallVector<Value, 8> bytes;
      for (int64_t p = 0; p < run; p += 2)
        bytes.append(target.roundedToStored(
            b, loc(),
            {readF32(*from, r, addc(c, p)), readF32(*from, r, addc(c, p + 1))},
            elt));
      if (run == 8) {
        Value vec = vector::FromElementsOp::create(
            b, loc(), VectorType::get({run}, bytes[0].getType()), bytes);
        vector::StoreOp::create(b, loc(), vec, out->view,
                                smemAt(out->view, r, c),
                                /*nontemporal=*/false, llvm::MaybeAlign(8));
      } else {
        for (int64_t p = 0; p < run; ++p)
          memref::StoreOp::create(b, loc(), bytes[p], out->view,
                                  smemAt(out->view, r, addc(c, p)));
      }
    }
    barrier();
    return out;
  }
  auto loop = scf::ForOp::create(b, loc(), tid, idx(rows * cols), idx(threads));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    auto [r, c] = coord(loop.getInductionVar());
    memref::StoreOp::create(b, loc(),
                            fromF32(b, loc(), readF32(*from, r, c), elt),
                            out->view, smemAt(out->view, r, c));
  }
  barrier();
  return out;
}

FailureOr<std::shared_ptr<Tile>>
Lowering::ensureShared(std::shared_ptr<Tile> t) {
  if (t->kind == Kind::Smem || t->kind == Kind::Expr)
    return t;
  if (t->kind != Kind::Acc) {
    (void)fail("unsupported operand placement");
    return failure();
  }
  auto l = accLayout(t->type);
  if (failed(l))
    return failure();
  Type elt = t->type.getElementType();
  auto out = std::make_shared<Tile>();
  out->kind = Kind::Smem;
  out->type = t->type;
  out->view = allocSmem(t->type.getDimSize(0), t->type.getDimSize(1), elt);
  barrierBeforeRewrite();
  for (int64_t r = 0; r < l->size(); ++r) {
    auto [row, col] = accCoord(*l, r);
    Value v =
        t->stored.empty() ? fromF32(b, loc(), t->regs[r], elt) : t->stored[r];
    memref::StoreOp::create(b, loc(), v, out->view,
                            smemAt(out->view, row, col));
  }
  barrier();
  return out;
}

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

Value Lowering::barrier(Value anyOf, bool asyncFence) {
  // With LDS DMA loads in flight (a double-buffered KV tile on CDNA4),
  // one that does not wait for them; the lowering's barriers only order
  // LDS (waves never exchange data through global memory).
  // Shared memory that warpgroup MMAs read (async proxy) was written by
  // threads (generic proxy): each thread's fence before the barrier.
  if (target.mma->smemOperands && asyncFence)
    target.asyncProxyFence(b, loc());
  Value any;
  if (anyOf)
    any = target.barrierAny(b, loc(), anyOf);
  else if (target.chip.facts.ldsDmaLoads16 && (prefetch || !started.empty()))
    target.ldsOnlyBarrier(b, loc());
  else
    gpu::BarrierOp::create(b, loc());
  if (kvBody && b.getInsertionBlock() == kvBody)
    kvBodyBarrier = true;
  return any;
}

LogicalResult Lowering::lowerIf(scf::IfOp op) {
  if (op.getNumResults() != 0)
    return fail("scf.if with results is not supported in kernels");
  auto ifOp = scf::IfOp::create(b, loc(), scalars.lookup(op.getCondition()),
                                !op.getElseRegion().empty());
  OpBuilder::InsertionGuard g(b);
  auto lowerRegion = [&](Region &from, Block *to) -> LogicalResult {
    b.setInsertionPointToStart(to);
    for (Operation &inner : from.front().without_terminator())
      if (failed(lowerOp(&inner)))
        return failure();
    return success();
  };
  if (failed(lowerRegion(op.getThenRegion(), ifOp.thenBlock())))
    return failure();
  if (!op.getElseRegion().empty() &&
      failed(lowerRegion(op.getElseRegion(), ifOp.elseBlock())))
    return failure();
  return success();
}

LogicalResult Lowering::lowerFor(scf::ForOp op) {
  if (op.getNumResults() != 0)
    return fail("scf.for with iter_args is not supported in kernels");
  auto loop = scf::ForOp::create(b, loc(), scalars.lookup(op.getLowerBound()),
                                 scalars.lookup(op.getUpperBound()),
                                 scalars.lookup(op.getStep()));
  scalars.map(op.getInductionVar(), loop.getInductionVar());
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  for (Operation &inner : op.getBody()->without_terminator())
    if (failed(lowerOp(&inner)))
      return failure();
  return success();
}

void Lowering::reportPlacement(Operation *op) {
  static const char *const kinds[] = {"smem",      "expr",        "acc",
                                      "row-slice", "row-partial", "blocked"};
  SmallVector<std::string> parts;
  for (Value r : op->getResults()) {
    auto it = tiles.find(r);
    if (it == tiles.end())
      continue;
    const Tile &t = *it->second;
    std::string s = kinds[static_cast<int>(t.kind)];
    if (!t.regs.empty())
      s += " (" + std::to_string(t.regs.size()) + " registers per lane)";
    if (t.kind == Kind::Blocked)
      s += " (runs of " + std::to_string(t.blockRun) + ")";
    if (t.kPerm)
      s += " (columns in the grouped dots' K order)";
    parts.push_back(s);
  }
  for (const std::string &n : notes.lookup(op))
    parts.push_back(n);
  if (parts.empty())
    return;
  InFlightDiagnostic d = op->emitRemark("placement: ");
  llvm::interleave(
      parts, [&](const std::string &p) { d << p; }, [&] { d << "; "; });
}

LogicalResult Lowering::lowerOp(Operation *op) {
  Operation *saved = diagOp;
  diagOp = op;
  llvm::scope_exit restore([&] { diagOp = saved; });
  LogicalResult lowered = lowerOpByKind(op);
  if (succeeded(lowered) && reportPlacements &&
      op->getDialect() == b.getContext()->getLoadedDialect<MLADialect>())
    reportPlacement(op);
  return lowered;
}

LogicalResult Lowering::lowerOpByKind(Operation *op) {
  if (folded.contains(op)) // applied by a tile load (foldableChain)
    return success();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ProgramIdOp p) {
        static const gpu::Dimension dims[] = {
            gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z};
        scalars.map(p.getResult(),
                    gpu::BlockIdOp::create(b, loc(), dims[p.getDim()]));
        return success();
      })
      .Case([&](SplitRangeOp r) {
        auto [lo, hi] = emitSplitRange(b, loc(), scalars.lookup(r.getLength()),
                                       scalars.lookup(r.getSplit()),
                                       scalars.lookup(r.getNumSplits()),
                                       r.getBlockN(), r.getExact());
        scalars.map(r.getLo(), lo);
        scalars.map(r.getHi(), hi);
        return success();
      })
      .Case([&](FillOp o) { return lowerFill(o); })
      .Case([&](LoadOp o) { return lowerLoad(o); })
      .Case([&](StoreOp o) { return lowerStore(o); })
      .Case([&](CastOp o) { return lowerCast(o); })
      .Case([&](ScaleOp o) { return lowerScale(o); })
      .Case([&](QuantScaleOp o) { return lowerQuantScale(o); })
      .Case([&](SplitTermsOp o) { return lowerSplitTerms(o); })
      .Case([&](SumTermsOp o) { return lowerSumTerms(o); })
      .Case([&](SliceOp o) { return lowerSlice(o); })
      .Case([&](DequantOp o) { return lowerDequant(o); })
      .Case([&](MaskOp o) { return lowerMask(o); })
      .Case([&](DotOp o) { return lowerDot(o); })
      .Case([&](OnlineSoftmaxOp o) { return lowerOnlineSoftmax(o); })
      .Case([&](SoftmaxFinalizeOp o) { return lowerFinalize(o); })
      .Case([&](SplitKReduceOp o) { return lowerSplitKReduce(o); })
      .Case([&](KvLoopOp o) {
        if (failed(lowerKvLoop(o)))
          return failure();
        // Kernels launched as this one's dependents (the split-K
        // combine) may be scheduled once every program is past its KV
        // loop: their launch overlaps this kernel's tail. They still wait
        // for all of its stores (griddepcontrol.wait), so this placement
        // is about timing only.
        if (target.chip.facts.dependentLaunch)
          target.launchDependents(b, loc());
        return success();
      })
      .Case([&](SplitClusterSyncOp o) { return lowerSplitClusterSync(o); })
      .Case([&](scf::IfOp o) { return lowerIf(o); })
      .Case([&](scf::ForOp o) { return lowerFor(o); })
      .Case([&](memref::CollapseShapeOp c) {
        // q / out as [rows x heads, dim]: the same collapse of the
        // argument in its storage type.
        scalars.map(c.getResult(), memref::CollapseShapeOp::create(
                                       b, loc(), scalars.lookup(c.getSrc()),
                                       c.getReassociationIndices()));
        return success();
      })
      .Default([&](Operation *other) -> LogicalResult {
        if (other->getDialect() ==
                b.getContext()->getLoadedDialect<MLADialect>() ||
            other->getNumRegions() != 0)
          return fail("is not supported by the GPU lowering");
        b.clone(*other, scalars);
        return success();
      });
}

} // namespace mlir::mla::gpulower
