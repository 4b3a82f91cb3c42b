//===- Tiles.cpp - shared memory and tile placements ----------------------===//
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

} // namespace mlir::mla::gpulower
