//===- LowerWarpgroupDot.cpp - mla.dot on sm_90a's wgmma --------------===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h). The dots of a
// chip whose matrix instruction reads both operands from shared memory
// (MatrixInstr::smemOperands: wgmma), transposed, and the fp8 tiles they
// read converted to 16-bit swizzled tiles (docs/Design.md, "sm_90a:
// wgmma").
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

LogicalResult Lowering::dotOnWarpgroups(DotOp op, const AccLayout &l) {
  Type lhsElt = op.getLhs().getType().getElementType();
  Type rhsElt = op.getRhs().getType().getElementType();
  int64_t k = op.getLhs().getType().getDimSize(1);
  bool trans = op.getTransposeRhs();
  const MatrixInstr *mi = target.instrFor(lhsElt, rhsElt, k);
  // The fp8 form reads both operands K-major: O^T = V^T P^T (V^T
  // MN-major) runs on the f16 form, both operands converted (exactly).
  bool fp8 = bitWidth(mi->abType) == 8;
  if (fp8 && !trans) {
    mi = target.instrFor(b.getF16Type(), b.getF16Type(), k);
    fp8 = false;
  }
  if (!mi->smemOperands)
    return fail("the warpgroup lowering takes only matrix instructions that "
                "read shared memory (internal error)");
  Type want = fp8 ? lhsElt : sixteenBitOperand(b, mi);
  int64_t eb = fp8 ? 1 : 2; // bytes an element: atoms of 64 x eb bytes
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
    FailureOr<std::shared_ptr<Tile>> t = get(v);
    std::shared_ptr<Tile> tile = *t;
    Type elt = tile->type.getElementType();
    // fp8 registers (P rounded to fp8) as the 16-bit operand: the same
    // values, which f16 holds exactly.
    if (tile->kind == Kind::Acc && isFp8(elt) && !isFp8(want)) {
      tile = std::make_shared<Tile>(*tile);
      tile->type = RankedTensorType::get(tile->type.getShape(), want);
      tile->stored.clear();
      elt = want;
    }
    t = ensureShared(tile);
    if (failed(t))
      return failure();
    tile = *t;
    if (tile->kind == Kind::Expr)
      tile = materialize(v, tile);
    elt = tile->type.getElementType();
    // fp8 (KV) as the instruction's type: one conversion of the whole
    // stored tile per tile, which both dots then read (wgmma takes fp8 only
    // as both operands fp8).
    if (isFp8(elt) && !isFp8(want) && tile->kind == Kind::Smem)
      if (auto conv = convertedTile(*tile, want)) {
        tile = conv;
        elt = want;
      }
    if (elt != want)
      return fail(Twine("wgmma (") + mi->name + ") reads " + typeName(want) +
                  " operands; the " + which +
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
  // The descriptor of an operand at `base` plus runtime byte offset `dyn`
  // plus static byte offset `off` (unswizzled addresses, as the tensor
  // cores take them: they apply the swizzle), in two parts: the base's
  // (its address field and the constant fields, once per dot) and the
  // offsets' (address >> 4). A shared address is below 2^18 (228 KiB), so
  // its field never carries into the next one and the descriptor of every
  // step is the base's plus an add: what was a shift, a mask and an or of
  // 64-bit values per instruction (about 10 uniform-datapath instructions
  // beside each wgmma in the SASS of the bf16 sm_90a spec) is one add.
  auto baseDescriptor = [&](Value base, int64_t leading) -> Value {
    return arith::AddIOp::create(
        b, loc(), arith::ShRUIOp::create(b, loc(), base, cstI64(b, loc(), 4)),
        cstI64(b, loc(), int64_t(wgmmaDescriptor(0, leading, 8 * 64 * eb,
                                                 64 * eb))));
  };
  auto descriptor = [&](Value baseDesc, Value dyn, int64_t off) -> Value {
    assert(off % 16 == 0 && "operands are 16-byte aligned");
    Value steps =
        arith::ShRUIOp::create(b, loc(), dyn, cstI64(b, loc(), 4));
    return arith::AddIOp::create(
        b, loc(), baseDesc,
        arith::AddIOp::create(b, loc(), steps, cstI64(b, loc(), off / 16)));
  };
  auto toI64 = [&](Value x) -> Value {
    return arith::IndexCastOp::create(b, loc(), i64, x);
  };
  Value aBase = tileBase(*rhs), bBase = tileBase(*lhs);
  int64_t aRows = storedRows(*rhs), bRows = storedRows(*lhs);
  // This warpgroup's first column of the dot: its instruction tiles cover
  // group x colsPerWarp columns, 64 (the instruction's M) per tile. In
  // bytes of A: rhs rows when transposed (64 eb bytes each), else rhs
  // columns (whole atoms of aRows x 128 bytes).
  int64_t mInstr = mi->n * group;
  Value wgCol = mul(arith::DivUIOp::create(b, loc(), warp, idx(group)),
                    l.colsPerWarp * group);
  Value wgA = trans ? mul(wgCol, 64 * eb)
                    : mul(arith::DivUIOp::create(b, loc(), wgCol, idx(64)),
                          aRows * 128);
  aBase = arith::AddIOp::create(b, loc(), aBase, toI64(wgA));
  Value aDesc = baseDescriptor(aBase, trans ? 16 : aRows * 128),
        bDesc = baseDescriptor(bBase, 16);
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
  int64_t unroll = 1; // fp8 S^T: 18 steps, 6 an iteration
  for (int64_t u : {4, 6, 3, 2})
    if (trans && unroll == 1 && steps % u == 0)
      unroll = u;
  // Independent accumulator chains: a dot of one instruction tile per
  // warpgroup (S^T = K Q^T: 36 steps into one tile) runs step u of each
  // iteration into its own copy of the accumulators, summed after the
  // wait, so that the tensor cores overlap `chains` instructions instead of
  // waiting for each result (O^T's 8 tiles are 8 chains already).
  // About 64 columns of N in flight: 4 chains at N = 16, 2 at N = 32 (an
  // instruction twice as long, and 4 copies of its accumulators spilled
  // the fp8 MTP 2 program of two warpgroups: 255 registers).
  int64_t chains = l.tiles == 1 ? std::clamp<int64_t>(64 / n, 1, unroll) : 1;
  SmallVector<Value> init = acc;
  for (int64_t c = 1; c < chains; ++c)
    init.append(l.size(), cstF32(b, loc(), 0.0f));
  target.warpgroupFence(b, loc());
  auto loop = scf::ForOp::create(b, loc(), idx(0), idx(steps / unroll), idx(1),
                                 ValueRange(init));
  // Rolled through to the PTX (`.pragma "nounroll"`, which ptxas keeps):
  // an LLVM-unrolled loop's descriptors are KV-loop invariants that LICM
  // hoists (the fp8 MTP 2 program: 255 registers and spills).
  MLIRContext *ctx = b.getContext();
  auto noUnroll = LLVM::LoopUnrollAttr::get(
      ctx, /*disable=*/b.getBoolAttr(true), /*count=*/{}, /*runtimeDisable=*/{},
      /*full=*/{}, /*followupUnrolled=*/{}, /*followupRemainder=*/{},
      /*followupAll=*/{});
  loop->setAttr("loop_annotation",
                LLVM::LoopAnnotationAttr::get(
                    ctx, /*disableNonforced=*/{}, /*vectorize=*/{},
                    /*interleave=*/{}, noUnroll, /*unrollAndJam=*/{},
                    /*licm=*/{}, /*distribute=*/{}, /*pipeline=*/{},
                    /*peeled=*/{}, /*unswitch=*/{}, /*mustProgress=*/{},
                    /*isVectorized=*/{}, /*startLoc=*/{}, /*endLoc=*/{},
                    /*parallelAccesses=*/{}));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> cur(loop.getRegionIterArgs());
    Value k0 = mul(loop.getInductionVar(), unroll * mi->k);
    // The start of K column kk of a K-major tile of `rows` rows: its atom
    // and its 32-byte step within the atom's rows.
    auto kMajor = [&](Value kk, int64_t rows) {
      return toI64(add(
          mul(arith::DivUIOp::create(b, loc(), kk, idx(64)), rows * 64 * eb),
          mul(arith::RemUIOp::create(b, loc(), kk, idx(64)), eb)));
    };
    for (int64_t u = 0; u < unroll; ++u) {
      Value kk = addc(k0, u * mi->k);
      int64_t chain = (u % chains) * l.size();
      // A: K-major rows j * 64 .. of rhs (S^T = K Q^T), or MN-major
      // columns j * 64 .. of rhs over its rows kk .. (O^T = V^T P^T).
      Value dynA = trans ? kMajor(kk, aRows) : toI64(mul(kk, 128));
      Value descB =
          descriptor(bDesc, kMajor(kk, bRows),
                     smemSwizzledOffset(lhs->rowOff, lhs->colOff, bRows, eb));
      for (int64_t j = 0; j < l.tiles; ++j) {
        Value descA = descriptor(
            aDesc, dynA,
            trans ? smemSwizzledOffset(j * mInstr + rhs->rowOff, rhs->colOff,
                                       aRows, eb)
                  : smemSwizzledOffset(rhs->rowOff, j * mInstr + rhs->colOff,
                                       aRows));
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
  for (auto [h, piece] :
       llvm::enumerate(convertedPieces(bytes, elt, dst.type.getElementType())))
    vector::StoreOp::create(b, loc(), piece, dst.view,
                            smemAt(dst.view, r, addc(c, 8 * h)),
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
}

SmallVector<Value, 2> Lowering::convertedPieces(Value bytes, Type elt,
                                                Type to) {
  auto v8 = VectorType::get({8}, storageType(to));
  SmallVector<Value> out;
  for (int64_t e = 0; e < 16; e += 2) {
    Value pair = vector::ShuffleOp::create(b, loc(), bytes, bytes,
                                           ArrayRef<int64_t>{e, e + 1});
    llvm::append_range(out, pairToOperand(pair, elt, to));
  }
  return {
      vector::FromElementsOp::create(b, loc(), v8, ArrayRef(out).take_front(8)),
      vector::FromElementsOp::create(b, loc(), v8,
                                     ArrayRef(out).drop_front(8))};
}

std::shared_ptr<Tile> Lowering::convertedTile(const Tile &t, Type to) {
  Type elt = t.type.getElementType();
  if (!isFp8(elt))
    return nullptr;
  auto key =
      std::make_pair(t.view.getAsOpaquePointer(), to.getAsOpaquePointer());
  std::shared_ptr<Tile> whole = convertedTiles.lookup(key);
  if (!whole) {
    whole = t.convertInto ? convertInPlace(t, to) : convertToNewTile(t, to);
    if (!whole)
      return nullptr;
    convertedTiles[key] = whole;
  }
  // A conversion of a column range starts at -colOff of the stored tile.
  int64_t col = t.colOff + whole->colOff;
  if (col < 0 || col + t.type.getDimSize(1) > whole->type.getDimSize(1))
    return nullptr;
  auto out = std::make_shared<Tile>(*whole);
  out->type = RankedTensorType::get(t.type.getShape(), to);
  out->rowOff = t.rowOff;
  out->colOff = col;
  return out;
}

std::shared_ptr<Tile> Lowering::convertToNewTile(const Tile &t, Type to) {
  auto mt = cast<MemRefType>(t.view.getType());
  if (isSwizzledView(t.view))
    return convertSwizzledColumns(t, to);
  Type elt = t.type.getElementType();
  int64_t rows = mt.getDimSize(0);
  int64_t cols = mt.getDimSize(1) - kRowPadBytes / storedBytes(elt);
  if (!isFp8(elt) || storedBytes(elt) != 1 || rows % 8 || cols % 16 ||
      (rows * cols / 16) % threads || !swizzled(rows, cols, to))
    return nullptr;
  auto whole = std::make_shared<Tile>();
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
    Value q = add(tid, mul(addc(mul(loop.getInductionVar(), per), i), threads));
    Value r = arith::DivUIOp::create(b, loc(), q, idx(groups));
    Value c = mul(arith::RemUIOp::create(b, loc(), q, idx(groups)), 16);
    Value bytes = vector::LoadOp::create(
        b, loc(), VectorType::get({16}, storageType(elt)), t.view,
        ValueRange{r, c}, /*nontemporal=*/false, llvm::MaybeAlign(16));
    storeConverted(bytes, elt, *whole, r, c);
  }
  b.setInsertionPointAfter(loop);
  barrier();
  return whole;
}

std::shared_ptr<Tile> Lowering::convertSwizzledColumns(const Tile &t,
                                                       Type to) {
  // An fp8 operand tile (fp8Operands) whose other reader takes 16 bits
  // (V in O^T = V^T P^T): only the columns of `t` (whole atoms), into a new
  // tile that starts at them.
  auto mt = cast<MemRefType>(t.view.getType());
  Type elt = t.type.getElementType();
  int64_t rows = mt.getDimSize(1), c0 = t.colOff, cols = t.type.getDimSize(1);
  int64_t chunks = rows * cols / 16;
  if (!isFp8(elt) || storedBytes(elt) != 1 || c0 % 64 || cols % 64 ||
      rows % 8 || chunks % threads || !swizzled(rows, cols, to))
    return nullptr;
  auto whole = std::make_shared<Tile>();
  whole->kind = Kind::Smem;
  whole->type = RankedTensorType::get({rows, cols}, to);
  whole->view = allocSmem(rows, cols, to);
  whole->colOff = -c0;
  barrierBeforeRewrite();
  // A warp's round: one atom of 8 rows, 4 lanes a row. Its 16-byte reads
  // are 512 contiguous bytes of the fp8 atom, and each row's converted
  // pieces land on 8 different rows of the 16-bit atom (chunk xor row
  // mod 8): no bank conflicts either way.
  int64_t atoms = cols / 64, rounds = chunks / threads;
  int64_t per = rounds % 2 == 0 ? 2 : 1; // rolled, two rounds an iteration
  auto loop = scf::ForOp::create(b, loc(), idx(0), idx(rounds / per), idx(1));
  OpBuilder::InsertionGuard ig(b);
  b.setInsertionPointToStart(loop.getBody());
  for (int64_t i = 0; i < per; ++i) {
    Value q = add(tid, mul(addc(mul(loop.getInductionVar(), per), i), threads));
    Value blk = arith::DivUIOp::create(b, loc(), q, idx(32));
    Value r = add(mul(arith::DivUIOp::create(b, loc(), blk, idx(atoms)), 8),
                  arith::RemUIOp::create(
                      b, loc(), arith::DivUIOp::create(b, loc(), q, idx(4)),
                      idx(8)));
    Value c = add(mul(arith::RemUIOp::create(b, loc(), blk, idx(atoms)), 64),
                  mul(arith::RemUIOp::create(b, loc(), q, idx(4)), 16));
    Value bytes = vector::LoadOp::create(
        b, loc(), VectorType::get({16}, storageType(elt)), t.view,
        smemAt(t.view, r, addc(c, c0)), /*nontemporal=*/false,
        llvm::MaybeAlign(16));
    storeConverted(bytes, elt, *whole, r, c);
  }
  b.setInsertionPointAfter(loop);
  barrier();
  return whole;
}

std::shared_ptr<Tile> Lowering::convertInPlace(const Tile &t, Type to) {
  auto region = cast<MemRefType>(t.convertInto.getType());
  int64_t rows = region.getDimSize(1), atoms = region.getDimSize(0);
  int64_t cols = atoms * 64;
  Type elt = t.type.getElementType();
  if (region.getElementType() != storageType(to))
    return nullptr;
  auto whole = std::make_shared<Tile>();
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
  return whole;
}

} // namespace mlir::mla::gpulower
